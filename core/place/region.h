/* Choosing where to make room: the window of a filesystem that takes the
 * fewest blocks of other files to clear. Pure. */
#pragma once

#include <stdint.h>

#include "blockmap.h"

typedef struct {
	uint64_t start;            /* first block */
	uint64_t len;              /* blocks */
	uint64_t used;             /* blocks of file data inside: what must move */
	uint64_t unknown;          /* blocks inside that cannot move (tree blocks...) */
} E4Region;

/* Unknown blocks a window may hold: one per this many blocks. Extent-tree
 * leaves of large fragmented files are scattered single blocks: a region
 * of 1 GiB without any may not exist. Each one left inside costs the file
 * moved there a run or two. */
#define E4_REGION_UNKNOWN_PER 512

/* The window of len blocks holding the fewest unknown blocks (metadata and
 * the like, which cannot move; at most len / E4_REGION_UNKNOWN_PER), then
 * the fewest blocks of file data, the files whose
 * data is to go there (skip_file, an index into m->files, or
 * E4_PIECE_FREE for none) counting as free. With align > 1 (a power of
 * two), windows start at multiples of align; with align 1, at a piece's
 * edge or so as to end at one. Returns 0, or -ENOSPC when no window
 * qualifies. */
int e4_region_choose(const E4BlockMap *m, uint64_t len, uint64_t align, uint32_t skip_file, E4Region *out);

/* The same, passing over windows that overlap any of avoid[0..navoid):
 * regions that could not be cleared. */
int e4_region_choose_avoiding(const E4BlockMap *m, uint64_t len, uint64_t align, uint32_t skip_file,
			      const E4Region *avoid, size_t navoid, E4Region *out);
