/* The attribute files beside each mirrored object, and their content. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	ATTR_PLAN,
	ATTR_MAP_SVG,
	ATTR_MAP_PNG,
	ATTR_INDEX_HTML,
	ATTR_MAP_BEFORE_SVG,
	ATTR_MAP_BEFORE_PNG,
	ATTR__COUNT
} AttrId;

/* Names no real entry is shown under unescaped: every attribute name,
 * including those of later features. NULL-terminated. */
extern const char *const e4_reserved_names[];

const char *e4_attr_name(AttrId id);

/* True for the attribute files that take writes (defrag, jobs). */
bool e4_attr_is_trigger(int id);

/* The size a stat reports for attribute id: the fixed size of a
 * picture, a trigger's E4_TRIGGER_SIZE, else 0 (read to EOF). */
uint64_t e4_attr_size(int id);

/* True for the pictures (map.svg, map.png). */
bool e4_attr_is_picture(int id);

/* True for the files whose mtime follows the layout they show: the
 * pictures and index.html. */
bool e4_attr_follows_layout(int id);

/* True when node has attribute id (dirs, files and the root differ). */
bool e4_attr_exists(const E4Fs *fs, const Node *node, AttrId id);

/* The attribute called name at node, or -1. */
int e4_attr_lookup(const E4Fs *fs, const Node *node, const char *name);

/* What generating an attribute file's content needs once its node may
 * be gone: taken while an open holds the node, so that the content can
 * be generated after the open is answered. */
typedef struct {
	AttrId id;
	int fd;       /* the real object, or -1 when the content needs none */
	bool is_dir;
	bool is_root;
	Caller caller;
	char *text;   /* content that depends on the node, made at once */
	bool excluded_above; /* a file node's directories carry the exclusion mark */
	char *name;   /* index.html: the directory's name ("/" at the root) */
	uint64_t ino; /* map-before: the node's real inode */
} E4AttrWork;

/* Takes what generating attribute id of node for caller needs: opens the
 * real object, or makes at once a content that depends on node. Returns
 * 0, or -errno from opening the real object (ESTALE when it is gone). */
int e4_attr_prepare(E4Fs *fs, Node *node, AttrId id, const Caller *caller, E4AttrWork *w);

/* Generates the content prepared in w without touching its node (a
 * report names only files the caller may learn the names of), and
 * releases w. Returns 0 with *out (g_free) and *len, or -errno. */
int e4_attr_run(E4Fs *fs, E4AttrWork *w, char **out, size_t *len);

/* The pictures of a node taken when a job on it starts (map-before). */
typedef struct {
	char *svg;       /* E4_MAP_SVG_SIZE bytes and a NUL */
	char *png;       /* E4_MAP_PNG_SIZE bytes */
	gint64 when_us;  /* realtime it was taken */
} E4Before;

/* Takes node's pictures as they are now. Returns 0 or -errno. */
int e4_attr_take_before(E4Fs *fs, Node *node, E4Before *out);

/* Frees an E4Before allocated with g_new (the values of fs->befores). */
void e4_before_free(gpointer before);
