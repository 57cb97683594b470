/* index.html of a directory node: one self-contained page (inline CSS,
 * the map inline as SVG, a small inline script to sort a table; nothing
 * loaded from elsewhere) with relative links into the mirror. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "score.h"
#include "top.h"

typedef struct {
	char *name;              /* real name of the subdirectory */
	E4Summary sum;
} E4PageSubdir;

typedef struct {
	const char *title;       /* the directory's real name ("/" at the root) */
	const E4Summary *sum;    /* the subtree's figures */
	const char *stats;       /* the text of its stats file, "key: value" lines */
	const char *svg;         /* its map.svg, or NULL */
	const E4Top *top;        /* its most fragmented files */
	const E4PageSubdir *subdirs;
	size_t nsubdirs;
	const char *defrag;      /* the text of its defrag file */
	const char *const *reserved; /* names shown escaped in the mirror */
	uint32_t block_size;
} E4Page;

/* index.html's fixed byte size (padded after </html> with a comment and
 * spaces), so that a stat tells the true size without a scan. */
#define E4_PAGE_SIZE 262144

/* At most this many subdirectories are listed (the highest scores). */
#define E4_PAGE_MAX_SUBDIRS 1000

/* The page, exactly E4_PAGE_SIZE bytes, g_free. Subdirectories are
 * listed by score, highest first, at most E4_PAGE_MAX_SUBDIRS; should the
 * page not fit, fewer subdirectories and files are listed (halving), and
 * at last the map is left out (said on the page). */
char *e4_page_render(const E4Page *p);

/* Appends the relative URL of path (components separated by '/', real
 * names) in the mirror: each component as shown there (escaped with '@'
 * where it must be), percent-encoded. */
void e4_page_url(GString *out, const char *path, const char *const *reserved);
