/* Choosing where to make room: the window of a filesystem that takes the
 * fewest blocks of other files to clear. Pure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "blockmap.h"

typedef struct {
	uint64_t start;            /* first block */
	uint64_t len;              /* blocks */
	uint64_t used;             /* blocks of file data inside: what must move */
	uint64_t unknown;          /* blocks inside that cannot move (tree blocks...) */
	uint64_t unknown_runs;     /* runs of them (about: each gap between
	                            * known pieces and each unknown piece) */
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

/* What e4_region_find looks for. */
typedef struct {
	uint64_t len, align;       /* as e4_region_choose */
	uint32_t skip_file;        /* as e4_region_choose */
	const E4Region *avoid;     /* windows overlapping these are passed over */
	size_t navoid;
	uint64_t min_used;         /* and those with fewer blocks of data to move */
	uint64_t max_used;         /* or more (0: no bound) */
	const bool *pinned;        /* per m->files index (NULL: none): files
	                            * that may not move (excluded, say), whose
	                            * pieces count as unknown */
	uint64_t need;             /* blocks the region must take (0: all of it):
	                            * then its unknown blocks may fill the rest,
	                            * and their runs are what is bounded */
	uint64_t max_piece;        /* other files' pieces longer than this count
	                            * as unknown too (0: none): no hole outside
	                            * takes them whole, and a moved file may not
	                            * get more runs */
} E4RegionQuery;

/* e4_region_choose with more conditions. 0, or -ENOSPC. */
int e4_region_find(const E4BlockMap *m, const E4RegionQuery *q, E4Region *out);
