/* Unit tests of core/figures.c: run counts, best and ideal counts, and the
 * per-file figures computed from an extent map. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>

#include "figures.h"

#define BS 4096u

/* A FIEMAP record given in 4096-byte blocks; stored in bytes. */
static E4Extent blk(uint64_t logical, uint64_t physical, uint64_t len, uint32_t flags)
{
	return (E4Extent){ .logical = logical * BS, .physical = physical * BS,
			   .length = len * BS, .flags = flags };
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static E4Geometry flex_geom(void)
{
	return (E4Geometry){ .block_size = BS, .blocks_per_group = 32768,
			     .log_groups_per_flex = 4, .flex_bg = true,
			     .feature_incompat = E4_INCOMPAT_FLEX_BG };
}

static E4Geometry plain_geom(uint32_t bpg)
{
	return (E4Geometry){ .block_size = BS, .blocks_per_group = bpg };
}

/* ---- e4_count_runs (filefrag) ---- */

START_TEST(runs_empty)
{
	ck_assert_uint_eq(e4_count_runs(NULL, 0), 0);
}
END_TEST

START_TEST(runs_single)
{
	E4Extent e[] = { blk(0, 100, 10, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
}
END_TEST

START_TEST(runs_contiguous)
{
	E4Extent e[] = { blk(0, 100, 10, 0), blk(10, 110, 5, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
}
END_TEST

START_TEST(runs_across_hole)
{
	/* phys2 == phys1 + (log2 - log1): continues as if the hole were mapped */
	E4Extent e[] = { blk(0, 100, 10, 0), blk(20, 120, 5, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
}
END_TEST

START_TEST(runs_dense_across_hole)
{
	/* phys2 == phys1 + len1 although log2 > log1 + len1 */
	E4Extent e[] = { blk(0, 100, 10, 0), blk(20, 110, 5, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
}
END_TEST

START_TEST(runs_discontiguous)
{
	E4Extent e[] = { blk(0, 100, 10, 0), blk(10, 500, 5, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 2);
}
END_TEST

START_TEST(runs_several)
{
	E4Extent e[] = {
		blk(0, 100, 10, 0),
		blk(10, 500, 5, 0),   /* new run */
		blk(15, 505, 5, 0),   /* continues */
		blk(20, 900, 1, 0),   /* new run */
		blk(30, 910, 1, 0),   /* across the hole: 900 + (30 - 20) */
		blk(31, 50, 1, FIEMAP_EXTENT_LAST), /* new run, backwards */
	};
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 4);
}
END_TEST

START_TEST(runs_logical_zero_quirk)
{
	/* filefrag never counts a record at logical 0, even after another */
	E4Extent e[] = { blk(4, 1000, 1, 0), blk(0, 50, 1, 0) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
	E4Extent f[] = { blk(4, 1000, 1, 0), blk(0, 50, 1, 0), blk(1, 9000, 1, 0) };
	ck_assert_uint_eq(e4_count_runs(f, N(f)), 2);
	E4Extent g[] = { blk(0, 10, 1, 0), blk(0, 7000, 1, 0), blk(0, 3, 1, 0) };
	ck_assert_uint_eq(e4_count_runs(g, N(g)), 1);
}
END_TEST

START_TEST(runs_leading_hole)
{
	E4Extent e[] = { blk(16, 700, 4, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
	/* physical == logical: looks contiguous with the zero "previous" */
	E4Extent f[] = { blk(16, 16, 4, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(f, N(f)), 1);
	E4Extent g[] = { blk(16, 700, 4, 0), blk(20, 900, 4, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(g, N(g)), 2);
	E4Extent h[] = { blk(16, 700, 4, 0), blk(20, 704, 4, FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(h, N(h)), 1);
}
END_TEST

START_TEST(runs_unwritten_ignored)
{
	E4Extent e[] = { blk(0, 100, 10, 0),
			 blk(10, 110, 5, FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
	E4Extent f[] = { blk(0, 100, 10, FIEMAP_EXTENT_UNWRITTEN),
			 blk(10, 300, 5, FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST) };
	ck_assert_uint_eq(e4_count_runs(f, N(f)), 2);
}
END_TEST

/* ---- e4_count_e4defrag_runs ---- */

START_TEST(e4d_empty)
{
	ck_assert_uint_eq(e4_count_e4defrag_runs(NULL, 0, BS), 0);
	E4Extent e[] = { blk(0, 100, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(e, N(e), 0), 0);
}
END_TEST

START_TEST(e4d_single_and_contiguous)
{
	E4Extent e[] = { blk(0, 100, 10, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(e, N(e), BS), 1);
	/* the last record is compared with the first (circular): still 1 */
	E4Extent f[] = { blk(0, 100, 10, 0), blk(10, 110, 5, 0), blk(15, 115, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(f, N(f), BS), 1);
}
END_TEST

START_TEST(e4d_physical_order)
{
	/* logically ordered, physically shuffled: sorted by physical start
	 * (P50,L1) (P51,L2) (P100,L0): one break, plus the circular end */
	E4Extent e[] = { blk(0, 100, 1, 0), blk(1, 50, 1, 0), blk(2, 51, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(e, N(e), BS), 2);
	/* fully contiguous once sorted by physical start */
	E4Extent f[] = { blk(0, 100, 1, 0), blk(2, 102, 1, 0), blk(1, 101, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(f, N(f), BS), 1);
}
END_TEST

START_TEST(e4d_logical_gap)
{
	/* physically adjacent but logically gapped: separate runs for
	 * e4defrag, one run for filefrag */
	E4Extent e[] = { blk(0, 100, 2, 0), blk(5, 102, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(e, N(e), BS), 2);
	ck_assert_uint_eq(e4_count_runs(e, N(e)), 1);
	/* logically adjacent but physically apart */
	E4Extent f[] = { blk(0, 100, 2, 0), blk(2, 300, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(f, N(f), BS), 2);
}
END_TEST

START_TEST(e4d_backwards)
{
	/* logical order is the reverse of the physical order */
	E4Extent e[] = { blk(0, 300, 1, 0), blk(1, 200, 1, 0), blk(2, 100, 1, 0) };
	ck_assert_uint_eq(e4_count_e4defrag_runs(e, N(e), BS), 3);
}
END_TEST

/* e4defrag's own algorithm, literally: sort by physical start, compare
 * each record with the next, circularly. */
static int ref_by_physical(const void *a, const void *b)
{
	const E4Extent *x = a, *y = b;
	return (x->physical > y->physical) - (x->physical < y->physical);
}

static uint32_t ref_e4defrag_runs(const E4Extent *ext, size_t n)
{
	E4Extent *l = malloc(n * sizeof(*l));
	memcpy(l, ext, n * sizeof(*l));
	qsort(l, n, sizeof(*l), ref_by_physical);
	uint32_t runs = 0;
	for (size_t i = 0; i < n; i++) {
		const E4Extent *next = &l[(i + 1) % n];
		if (l[i].physical + l[i].length != next->physical ||
		    l[i].logical + l[i].length != next->logical)
			runs++;
	}
	free(l);
	return runs;
}

START_TEST(e4d_logical_order_equals_sorting)
{
	/* Random valid maps (logical order, no overlap): pieces of a file
	 * placed in a random physical order, some of them adjacent, some
	 * after logical holes. The count without sorting must equal e4defrag's
	 * sorted count, records by records. */
	srand(12345);
	for (int round = 0; round < 2000; round++) {
		size_t n = 1 + (size_t)(rand() % 40);
		E4Extent e[40];
		uint64_t lpos = 0, slot_len[40], order[40];
		for (size_t i = 0; i < n; i++) {
			lpos += rand() % 4 == 0 ? (uint64_t)(rand() % 3) : 0; /* a hole */
			slot_len[i] = 1 + (uint64_t)(rand() % 5);
			e[i] = blk(lpos, 0, slot_len[i], 0);
			lpos += slot_len[i];
			order[i] = i;
		}
		/* physical order: runs of logically consecutive pieces kept
		 * together (adjacent), runs shuffled */
		for (size_t i = n - 1; i > 0; i--) {
			if (rand() % 3 == 0)
				continue;
			size_t j = (size_t)rand() % (i + 1);
			uint64_t t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		uint64_t ppos = 1000;
		for (size_t k = 0; k < n; k++) {
			ppos += rand() % 3 == 0 ? 0 : (uint64_t)(rand() % 4);
			e[order[k]].physical = ppos * BS;
			ppos += slot_len[order[k]];
		}
		ck_assert_uint_eq(e4_count_e4defrag_runs(e, n, BS), ref_e4defrag_runs(e, n));
	}
}
END_TEST

/* ---- e4_best_count / e4_ideal_count ---- */

START_TEST(best_no_geometry)
{
	ck_assert_uint_eq(e4_best_count(1000000, NULL), 1);
	E4Geometry g = plain_geom(0);
	ck_assert_uint_eq(e4_best_count(1000000, &g), 1);
}
END_TEST

START_TEST(best_flex)
{
	E4Geometry g = flex_geom();
	ck_assert_uint_eq(e4_best_count(0, &g), 1);
	ck_assert_uint_eq(e4_best_count(1, &g), 1);
	ck_assert_uint_eq(e4_best_count(524288, &g), 1);
	ck_assert_uint_eq(e4_best_count(524289, &g), 2);
	ck_assert_uint_eq(e4_best_count(3 * 524288, &g), 3);
	ck_assert_uint_eq(e4_best_count(3 * 524288 + 1, &g), 4);
}
END_TEST

START_TEST(best_no_flex)
{
	E4Geometry g = plain_geom(32768);
	g.log_groups_per_flex = 4; /* ignored without flex_bg */
	ck_assert_uint_eq(e4_best_count(0, &g), 1);
	ck_assert_uint_eq(e4_best_count(1, &g), 1);
	ck_assert_uint_eq(e4_best_count(32768, &g), 1);
	ck_assert_uint_eq(e4_best_count(32769, &g), 2);
	ck_assert_uint_eq(e4_best_count(524289, &g), 17);
}
END_TEST

START_TEST(best_flex_log0)
{
	E4Geometry g = flex_geom();
	g.log_groups_per_flex = 0;
	ck_assert_uint_eq(e4_best_count(32768, &g), 1);
	ck_assert_uint_eq(e4_best_count(32769, &g), 2);
}
END_TEST

START_TEST(ideal)
{
	ck_assert_uint_eq(e4_ideal_count(0), 1);
	ck_assert_uint_eq(e4_ideal_count(1), 1);
	ck_assert_uint_eq(e4_ideal_count(32768), 1);
	ck_assert_uint_eq(e4_ideal_count(32769), 2);
	ck_assert_uint_eq(e4_ideal_count(65536), 2);
	ck_assert_uint_eq(e4_ideal_count(65537), 3);
}
END_TEST

/* ---- e4_figures_compute ---- */

START_TEST(compute_all_fields)
{
	E4Extent e[] = {
		blk(2, 100, 3, 0),                        /* leading hole [0,2) */
		blk(5, 103, 2, FIEMAP_EXTENT_UNWRITTEN),  /* contiguous */
		blk(10, 500, 4, FIEMAP_EXTENT_LAST),      /* middle hole [7,10) */
	};
	E4ExtentMap map = { .ext = e, .n = N(e), .cap = N(e) };
	E4Geometry g = flex_geom();
	E4FileFigures f;
	e4_figures_compute(&map, 20 * BS, &g, &f); /* trailing hole [14,20) */
	ck_assert_uint_eq(f.size, 20 * BS);
	ck_assert_uint_eq(f.blocks, 9);
	ck_assert_uint_eq(f.unwritten_blocks, 2);
	ck_assert_uint_eq(f.records, 3);
	ck_assert_uint_eq(f.runs, 2);
	ck_assert_uint_eq(f.e4_phys_runs, 2);
	ck_assert_uint_eq(f.holes, 3);
	ck_assert_uint_eq(f.best, 1);
	ck_assert_uint_eq(f.ideal, 1);
	ck_assert_uint_eq(f.flags, FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST);
	ck_assert_uint_eq(f.first_block, 100);
	ck_assert_uint_eq(f.end_block, 504);
	ck_assert_double_eq_tol(e4_figures_rank(&f), 100.0 / 9.0, 1e-9);
	ck_assert(e4_figures_fragmented(&f));
}
END_TEST

START_TEST(compute_no_holes)
{
	E4Extent e[] = { blk(0, 100, 4, 0), blk(4, 104, 4, FIEMAP_EXTENT_LAST) };
	E4ExtentMap map = { .ext = e, .n = N(e), .cap = N(e) };
	E4Geometry g = flex_geom();
	E4FileFigures f;
	e4_figures_compute(&map, 8 * BS, &g, &f);
	ck_assert_uint_eq(f.holes, 0);
	ck_assert_uint_eq(f.runs, 1);
	ck_assert_uint_eq(f.flags, FIEMAP_EXTENT_LAST);
	ck_assert_uint_eq(f.unwritten_blocks, 0);
	ck_assert(!e4_figures_fragmented(&f));
	ck_assert_double_eq(e4_figures_rank(&f), 0.0);
	/* a partial last block is still inside the mapped range */
	e4_figures_compute(&map, 8 * BS - 100, &g, &f);
	ck_assert_uint_eq(f.holes, 0);
	ck_assert_uint_eq(f.size, 8 * BS - 100);
	/* one byte past the mapped range: a trailing hole */
	e4_figures_compute(&map, 8 * BS + 1, &g, &f);
	ck_assert_uint_eq(f.holes, 1);
}
END_TEST

START_TEST(compute_empty)
{
	E4ExtentMap map = {0};
	E4Geometry g = flex_geom();
	E4FileFigures f;
	e4_figures_compute(&map, 0, &g, &f);
	ck_assert_uint_eq(f.blocks, 0);
	ck_assert_uint_eq(f.records, 0);
	ck_assert_uint_eq(f.runs, 0);
	ck_assert_uint_eq(f.e4_phys_runs, 0);
	ck_assert_uint_eq(f.holes, 0);
	ck_assert_uint_eq(f.best, 1);
	ck_assert_uint_eq(f.ideal, 1);
	ck_assert_uint_eq(f.flags, 0);
	ck_assert_uint_eq(f.first_block, 0);
	ck_assert_uint_eq(f.end_block, 0);
	ck_assert_double_eq(e4_figures_rank(&f), 0.0);
	/* all hole */
	e4_figures_compute(&map, 3 * BS, &g, &f);
	ck_assert_uint_eq(f.holes, 1);
	ck_assert_uint_eq(f.size, 3 * BS);
}
END_TEST

START_TEST(compute_best_ideal_large)
{
	/* 40000 blocks in two records; groups of 8192 blocks, no flex_bg */
	E4Extent e[] = { blk(0, 1000, 32768, 0), blk(32768, 33768, 7232, FIEMAP_EXTENT_LAST) };
	E4ExtentMap map = { .ext = e, .n = N(e), .cap = N(e) };
	E4Geometry g = plain_geom(8192);
	E4FileFigures f;
	e4_figures_compute(&map, 40000ull * BS, &g, &f);
	ck_assert_uint_eq(f.blocks, 40000);
	ck_assert_uint_eq(f.records, 2);
	ck_assert_uint_eq(f.runs, 1);
	ck_assert_uint_eq(f.e4_phys_runs, 1);
	ck_assert_uint_eq(f.best, 5);
	ck_assert_uint_eq(f.ideal, 2);
	ck_assert_uint_eq(f.holes, 0);
	ck_assert(!e4_figures_fragmented(&f));
}
END_TEST

START_TEST(compute_block_size_1k)
{
	/* the geometry's block size converts bytes to blocks */
	E4Extent e[] = { { .logical = 0, .physical = 8192, .length = 4096, .flags = 0 },
			 { .logical = 4096, .physical = 65536, .length = 2048,
			   .flags = FIEMAP_EXTENT_UNWRITTEN } };
	E4ExtentMap map = { .ext = e, .n = N(e), .cap = N(e) };
	E4Geometry g = { .block_size = 1024, .blocks_per_group = 8192 };
	E4FileFigures f;
	e4_figures_compute(&map, 6144, &g, &f);
	ck_assert_uint_eq(f.blocks, 6);
	ck_assert_uint_eq(f.unwritten_blocks, 2);
	ck_assert_uint_eq(f.runs, 2);
	ck_assert_uint_eq(f.e4_phys_runs, 2);
	ck_assert_uint_eq(f.holes, 0);
	ck_assert_uint_eq(f.first_block, 8);
	ck_assert_uint_eq(f.end_block, 66);
}
END_TEST

/* The figures of a file whose size ends where its last record ends. */
static E4FileFigures computed(E4Extent *e, size_t n)
{
	E4ExtentMap map = { .ext = e, .n = n, .cap = n };
	E4Geometry g = flex_geom();
	E4FileFigures f;
	e4_figures_compute(&map, e[n - 1].logical + e[n - 1].length, &g, &f);
	return f;
}

START_TEST(compute_first_end_blocks)
{
	/* The first and last records in logical order, wherever they lie:
	 * here the file's tail is physically before its head. */
	E4Extent e[] = { blk(0, 900, 4, 0), blk(4, 300, 2, 0), blk(10, 50, 3, FIEMAP_EXTENT_LAST) };
	E4FileFigures f = computed(e, N(e));
	ck_assert_uint_eq(f.first_block, 900);
	ck_assert_uint_eq(f.end_block, 53);
	/* one record: its start and the block after it */
	f = computed(e, 1);
	ck_assert_uint_eq(f.first_block, 900);
	ck_assert_uint_eq(f.end_block, 904);
	/* a run continued across a hole ends where its last record ends */
	E4Extent h[] = { blk(0, 100, 2, 0), blk(10, 110, 3, FIEMAP_EXTENT_LAST) };
	f = computed(h, N(h));
	ck_assert_uint_eq(f.runs, 1);
	ck_assert_uint_eq(f.first_block, 100);
	ck_assert_uint_eq(f.end_block, 113);
}
END_TEST

static Suite *figures_suite(void)
{
	Suite *s = suite_create("figures");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, runs_empty);
	tcase_add_test(tc, runs_single);
	tcase_add_test(tc, runs_contiguous);
	tcase_add_test(tc, runs_across_hole);
	tcase_add_test(tc, runs_dense_across_hole);
	tcase_add_test(tc, runs_discontiguous);
	tcase_add_test(tc, runs_several);
	tcase_add_test(tc, runs_logical_zero_quirk);
	tcase_add_test(tc, runs_leading_hole);
	tcase_add_test(tc, runs_unwritten_ignored);
	tcase_add_test(tc, e4d_empty);
	tcase_add_test(tc, e4d_single_and_contiguous);
	tcase_add_test(tc, e4d_physical_order);
	tcase_add_test(tc, e4d_logical_gap);
	tcase_add_test(tc, e4d_backwards);
	tcase_add_test(tc, e4d_logical_order_equals_sorting);
	tcase_add_test(tc, best_no_geometry);
	tcase_add_test(tc, best_flex);
	tcase_add_test(tc, best_no_flex);
	tcase_add_test(tc, best_flex_log0);
	tcase_add_test(tc, ideal);
	tcase_add_test(tc, compute_all_fields);
	tcase_add_test(tc, compute_no_holes);
	tcase_add_test(tc, compute_empty);
	tcase_add_test(tc, compute_best_ideal_large);
	tcase_add_test(tc, compute_block_size_1k);
	tcase_add_test(tc, compute_first_end_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(figures_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
