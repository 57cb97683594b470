/* Per-file fragmentation figures, computed from an extent map. Pure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "fiemap.h"
#include "superblock.h"

/* ext4's longest extent: 32768 blocks written (32767 unwritten). */
#define E4_MAX_EXTENT_BLOCKS 32768u

typedef struct {
	uint64_t size;             /* st_size, bytes */
	uint64_t blocks;           /* blocks mapped by FIEMAP, unwritten included */
	uint64_t unwritten_blocks; /* blocks in records flagged unwritten */
	uint32_t records;          /* FIEMAP records (e4defrag's "now") */
	uint32_t runs;             /* physical runs, as filefrag's "N extents found" */
	uint32_t e4_phys_runs;     /* e4defrag's physical count, used for its ranking */
	uint32_t holes;            /* unmapped ranges inside [0, size) */
	uint32_t best;             /* e4defrag's best extent count */
	uint32_t ideal;            /* fewest extents ext4 can hold the data in */
	uint32_t flags;            /* OR of every record's FIEMAP_EXTENT_* flags */
	/* Where a reader of the whole file starts and ends on disk, for the
	 * directory locality of its directory: the physical block of the
	 * first record (in logical order) and the block after the last one.
	 * Both 0 when no block is mapped. */
	uint64_t first_block;
	uint64_t end_block;
} E4FileFigures;

/* Physical runs counted exactly as filefrag counts "N extents found":
 * a record starts a new run unless it begins at logical 0 or continues the
 * previous record physically, either densely or across a logical hole. */
uint32_t e4_count_runs(const E4Extent *ext, size_t n);

/* e4defrag's physical count (get_physical_count): records sorted by
 * physical start, a record ends a run unless the next one continues it
 * both physically and logically. */
uint32_t e4_count_e4defrag_runs(const E4Extent *ext, size_t n, uint32_t block_size);

/* e4defrag's best count for a file of `blocks` blocks: 1 per flex group
 * (per block group without flex_bg); 1 when the geometry is unknown. */
uint32_t e4_best_count(uint64_t blocks, const E4Geometry *geom);

/* The honest ideal: ceil(blocks / 32768), and 1 for an empty map. */
uint32_t e4_ideal_count(uint64_t blocks);

/* Fills every field from the map; size is the file's st_size in bytes,
 * block_size the filesystem block size in bytes. */
void e4_figures_compute(const E4ExtentMap *map, uint64_t size, const E4Geometry *geom,
			E4FileFigures *out);

/* e4defrag's ranking ratio for a file: (physical runs - best) * 100 / blocks.
 * 0 when the file has no blocks. */
double e4_figures_rank(const E4FileFigures *fig);

/* A file counts as fragmented when it has more runs than its ideal. */
static inline bool e4_figures_fragmented(const E4FileFigures *fig)
{
	return fig->runs > fig->ideal;
}
