#include "figures.h"

#include <stdlib.h>
#include <linux/fiemap.h>

uint32_t e4_count_runs(const E4Extent *ext, size_t n)
{
	uint32_t runs = 0;
	E4Extent last = {0};
	for (size_t i = 0; i < n; i++) {
		uint64_t dense = last.physical + last.length;
		uint64_t across_hole = last.physical + ext[i].logical - last.logical;
		if (ext[i].logical != 0 && ext[i].physical != across_hole && ext[i].physical != dense)
			runs++;
		else if (runs == 0)
			runs = 1;
		last = ext[i];
	}
	return runs;
}

typedef struct {
	uint64_t physical, logical, len; /* blocks */
} BlockExtent;

static int by_physical(const void *a, const void *b)
{
	const BlockExtent *x = a, *y = b;
	return (x->physical > y->physical) - (x->physical < y->physical);
}

/* FIEMAP gives records in logical order, never overlapping. Then the
 * record physically next to one that continues it both physically and
 * logically can only be its logical successor, so e4defrag's count needs
 * no sort (which took ~1 ms of the ~5 ms re-read of an 8,000-record file
 * after a change). */
static bool in_logical_order(const E4Extent *ext, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (ext[i - 1].logical + ext[i - 1].length > ext[i].logical)
			return false;
	return true;
}

static uint32_t e4defrag_runs_logical(const E4Extent *ext, size_t n, uint32_t block_size)
{
	/* A shift, not a division, for the usual power-of-two block size:
	 * four divisions per record were a quarter of this function's time. */
	unsigned shift = (unsigned)__builtin_ctz(block_size);
	bool pow2 = (1u << shift) == block_size;
#define BLOCKS(bytes) (pow2 ? (bytes) >> shift : (bytes) / block_size)
	uint32_t runs = 1; /* the last record always ends a run (see below) */
	for (size_t i = 0; i + 1 < n; i++) {
		uint64_t len = BLOCKS(ext[i].length);
		if (BLOCKS(ext[i].physical) + len != BLOCKS(ext[i + 1].physical) ||
		    BLOCKS(ext[i].logical) + len != BLOCKS(ext[i + 1].logical))
			runs++;
	}
#undef BLOCKS
	return runs;
}

uint32_t e4_count_e4defrag_runs(const E4Extent *ext, size_t n, uint32_t block_size)
{
	if (n == 0 || block_size == 0)
		return 0;
	if (in_logical_order(ext, n))
		return e4defrag_runs_logical(ext, n, block_size);
	BlockExtent *list = malloc(n * sizeof(*list));
	if (!list)
		return (uint32_t)n; /* the upper bound: never understate fragmentation */
	for (size_t i = 0; i < n; i++)
		list[i] = (BlockExtent){ ext[i].physical / block_size, ext[i].logical / block_size,
					 ext[i].length / block_size };
	qsort(list, n, sizeof(*list), by_physical);
	uint32_t runs = 0;
	for (size_t i = 0; i < n; i++) {
		/* e4defrag walks a circular list: the last record is compared
		 * with the first, so it always ends a run. */
		const BlockExtent *next = &list[(i + 1) % n];
		if (list[i].physical + list[i].len != next->physical ||
		    list[i].logical + list[i].len != next->logical)
			runs++;
	}
	free(list);
	return runs;
}

/* Counts of absurd sizes (a corrupt map) stay in range instead of wrapping. */
static uint32_t saturate(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint32_t e4_best_count(uint64_t blocks, const E4Geometry *geom)
{
	if (!geom || geom->blocks_per_group == 0 || blocks == 0)
		return 1;
	uint64_t span = geom->blocks_per_group;
	if (geom->flex_bg)
		span <<= geom->log_groups_per_flex;
	return saturate((blocks - 1) / span + 1);
}

uint32_t e4_ideal_count(uint64_t blocks)
{
	if (blocks == 0)
		return 1;
	return saturate(blocks / E4_MAX_EXTENT_BLOCKS + (blocks % E4_MAX_EXTENT_BLOCKS != 0));
}

void e4_figures_compute(const E4ExtentMap *map, uint64_t size, const E4Geometry *geom,
			E4FileFigures *out)
{
	uint32_t bs = geom->block_size ? geom->block_size : 4096;
	*out = (E4FileFigures){ .size = size, .records = (uint32_t)map->n };
	uint64_t expect = 0; /* next logical byte if there were no hole */
	for (size_t i = 0; i < map->n; i++) {
		const E4Extent *e = &map->ext[i];
		uint64_t blocks = e->length / bs;
		out->blocks += blocks;
		if (e->flags & FIEMAP_EXTENT_UNWRITTEN)
			out->unwritten_blocks += blocks;
		out->flags |= e->flags;
		if (e->logical > expect)
			out->holes++;
		expect = e->logical + e->length;
	}
	if (size > expect)
		out->holes++;
	if (out->blocks) {
		const E4Extent *last = &map->ext[map->n - 1];
		out->first_block = map->ext[0].physical / bs;
		out->end_block = (last->physical + last->length) / bs;
	}
	out->runs = e4_count_runs(map->ext, map->n);
	out->e4_phys_runs = e4_count_e4defrag_runs(map->ext, map->n, bs);
	out->best = e4_best_count(out->blocks, geom);
	out->ideal = e4_ideal_count(out->blocks);
}

double e4_figures_rank(const E4FileFigures *fig)
{
	if (fig->blocks == 0)
		return 0;
	return ((double)fig->e4_phys_runs - fig->best) * 100.0 / (double)fig->blocks;
}
