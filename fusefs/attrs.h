/* The attribute files beside each mirrored object, and their content. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "fs.h"

typedef enum {
	ATTR_SCORE,
	ATTR_EXTENTS,
	ATTR_STATS,
	ATTR_STATS_JSON,
	ATTR_REPORT,
	ATTR_METRICS,
	ATTR_DEFRAG,
	ATTR_JOBS,
	ATTR_FREESPACE,
	ATTR__COUNT
} AttrId;

/* Names no real entry is shown under unescaped: every attribute name,
 * including those of later features. NULL-terminated. */
extern const char *const e4_reserved_names[];

const char *e4_attr_name(AttrId id);

/* True for the attribute files that take writes (defrag, jobs). */
bool e4_attr_is_trigger(int id);

/* True when node has attribute id (dirs, files and the root differ). */
bool e4_attr_exists(const E4Fs *fs, const Node *node, AttrId id);

/* The attribute called name at node, or -1. */
int e4_attr_lookup(const E4Fs *fs, const Node *node, const char *name);

/* Generates the content of attribute id of node for caller (a report
 * names only files caller may learn the names of). Returns 0 with *out
 * (g_free) and *len, or -errno. */
int e4_attr_generate(E4Fs *fs, Node *node, AttrId id, const Caller *caller, char **out,
		     size_t *len);
