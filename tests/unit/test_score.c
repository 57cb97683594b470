/* Unit tests of core/score.c: e4defrag's score, the summary and the
 * metrics derived from it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "score.h"

/* Figures of a file, the fields a summary reads. */
static E4FileFigures fig(uint64_t size, uint64_t blocks, uint32_t records, uint32_t runs,
			 uint32_t best, uint32_t ideal, uint32_t holes, uint64_t unwritten)
{
	return (E4FileFigures){ .size = size, .blocks = blocks, .records = records,
				.runs = runs, .e4_phys_runs = runs, .best = best,
				.ideal = ideal, .holes = holes,
				.unwritten_blocks = unwritten };
}

/* Three files:
 *  A: 10 blocks, 4 records, 3 runs, 1 hole, 2 unwritten blocks (fragmented)
 *  B: 2 blocks, 1 record, 1 run
 *  C: 1 block (not counted by the layout score) */
static void three_files(E4Summary *s)
{
	memset(s, 0, sizeof(*s));
	E4FileFigures a = fig(40960, 10, 4, 3, 1, 1, 1, 2);
	E4FileFigures b = fig(8192, 2, 1, 1, 1, 1, 0, 0);
	E4FileFigures c = fig(100, 1, 1, 1, 1, 1, 0, 0);
	e4_summary_add(s, &a);
	e4_summary_add(s, &b);
	e4_summary_add(s, &c);
}

START_TEST(score_from_ratio)
{
	ck_assert_int_eq(e4_score_from_ratio(0), 0);
	ck_assert_int_eq(e4_score_from_ratio(1), 8);
	ck_assert_int_eq(e4_score_from_ratio(5), 40);
	ck_assert_int_eq(e4_score_from_ratio(10), 80);
	ck_assert_int_eq(e4_score_from_ratio(10.5), 82); /* 82.1 */
	ck_assert_int_eq(e4_score_from_ratio(12.5), 82); /* 82.5, %.0f: to even */
	ck_assert_int_eq(e4_score_from_ratio(37.5), 88); /* 87.5, to even */
	ck_assert_int_eq(e4_score_from_ratio(0.1875), 2); /* 1.5 */
	ck_assert_int_eq(e4_score_from_ratio(0.0625), 0); /* 0.5 */
	ck_assert_int_eq(e4_score_from_ratio(0.07), 1);   /* 0.56 */
	ck_assert_int_eq(e4_score_from_ratio(3.9), 31);   /* 31.2 */
	ck_assert_int_eq(e4_score_from_ratio(100), 100);
	ck_assert_int_eq(e4_score_from_ratio(150), 100);
	ck_assert_int_eq(e4_score_from_ratio(1e9), 100);
	ck_assert_int_eq(e4_score_from_ratio(-1), 0);
	ck_assert_int_eq(e4_score_from_ratio(-50), 0);
}
END_TEST

START_TEST(score_verdict)
{
	ck_assert_str_eq(e4_score_verdict(0), "no problem");
	ck_assert_str_eq(e4_score_verdict(30), "no problem");
	ck_assert_str_eq(e4_score_verdict(31), "a little bit fragmented");
	ck_assert_str_eq(e4_score_verdict(55), "a little bit fragmented");
	ck_assert_str_eq(e4_score_verdict(56), "needs defrag");
	ck_assert_str_eq(e4_score_verdict(100), "needs defrag");
}
END_TEST

START_TEST(summary_add)
{
	E4Summary s;
	three_files(&s);
	ck_assert_uint_eq(s.files, 3);
	ck_assert_uint_eq(s.analysed, 3);
	ck_assert_uint_eq(s.fragmented, 1);
	ck_assert_uint_eq(s.bytes, 40960 + 8192 + 100);
	ck_assert_uint_eq(s.blocks, 13);
	ck_assert_uint_eq(s.records, 6);
	ck_assert_uint_eq(s.runs, 5);
	ck_assert_uint_eq(s.best, 3);
	ck_assert_uint_eq(s.ideal, 3);
	ck_assert_uint_eq(s.holes, 1);
	ck_assert_uint_eq(s.unwritten_blocks, 2);
	ck_assert_uint_eq(s.ls_extra_runs, 2);    /* (3-1) + (1-1) */
	ck_assert_uint_eq(s.ls_extra_blocks, 10); /* (10-1) + (2-1) */
	ck_assert_uint_eq(e4_summary_skipped_total(&s), 0);
	for (int i = 0; i < E4_SKIP__COUNT; i++)
		ck_assert_uint_eq(s.skipped[i], 0);
}
END_TEST

START_TEST(summary_ratio_score)
{
	E4Summary s;
	three_files(&s);
	/* (6 records - 3 best) * 100 / 13 blocks = 23.08 -> 80 + 4.6 = 84.6 */
	ck_assert_double_eq_tol(e4_summary_ratio(&s), 300.0 / 13.0, 1e-9);
	ck_assert_int_eq(e4_summary_score(&s), 85);

	/* (4 - 2) * 100 / 100 = 2 -> 16 */
	E4Summary t = {0};
	E4FileFigures a = fig(50 * 4096, 50, 3, 3, 1, 1, 0, 0);
	E4FileFigures b = fig(50 * 4096, 50, 1, 1, 1, 1, 0, 0);
	e4_summary_add(&t, &a);
	e4_summary_add(&t, &b);
	ck_assert_double_eq_tol(e4_summary_ratio(&t), 2.0, 1e-12);
	ck_assert_int_eq(e4_summary_score(&t), 16);
	ck_assert_str_eq(e4_score_verdict(e4_summary_score(&t)), "no problem");
}
END_TEST

START_TEST(summary_empty)
{
	E4Summary s = {0};
	ck_assert_double_eq(e4_summary_ratio(&s), 0.0);
	ck_assert_int_eq(e4_summary_score(&s), 0);
	ck_assert_double_eq(e4_summary_layout_score(&s), 1.0);
	ck_assert_double_eq(e4_summary_mean_run_kib(&s, 4096), 0.0);
}
END_TEST

START_TEST(layout_score)
{
	E4Summary s;
	three_files(&s);
	/* 1 - 2/10 */
	ck_assert_double_eq_tol(e4_summary_layout_score(&s), 0.8, 1e-12);

	/* only one-block files: 1.0 whatever their runs */
	E4Summary t = {0};
	E4FileFigures c = fig(4096, 1, 1, 1, 1, 1, 0, 0);
	E4FileFigures d = fig(100, 1, 2, 2, 1, 1, 0, 0);
	e4_summary_add(&t, &c);
	e4_summary_add(&t, &d);
	ck_assert_uint_eq(t.ls_extra_blocks, 0);
	ck_assert_uint_eq(t.ls_extra_runs, 0);
	ck_assert_double_eq(e4_summary_layout_score(&t), 1.0);

	/* every block its own run: 0 */
	E4Summary u = {0};
	E4FileFigures w = fig(4 * 4096, 4, 4, 4, 1, 1, 0, 0);
	e4_summary_add(&u, &w);
	ck_assert_double_eq_tol(e4_summary_layout_score(&u), 0.0, 1e-12);

	/* 1 - (1 + 4) / (7 + 15) */
	E4Summary v = {0};
	E4FileFigures x = fig(8 * 4096, 8, 2, 2, 1, 1, 0, 0);
	E4FileFigures y = fig(16 * 4096, 16, 5, 5, 1, 1, 0, 0);
	e4_summary_add(&v, &x);
	e4_summary_add(&v, &y);
	ck_assert_double_eq_tol(e4_summary_layout_score(&v), 1.0 - 5.0 / 22.0, 1e-12);
}
END_TEST

START_TEST(mean_run_kib)
{
	E4Summary s;
	three_files(&s);
	/* 13 blocks * 4 KiB / 5 runs */
	ck_assert_double_eq_tol(e4_summary_mean_run_kib(&s, 4096), 10.4, 1e-12);
	ck_assert_double_eq_tol(e4_summary_mean_run_kib(&s, 1024), 2.6, 1e-12);
	ck_assert_double_eq_tol(e4_summary_mean_run_kib(&s, 65536), 166.4, 1e-9);
}
END_TEST

START_TEST(summary_merge)
{
	E4Summary dst = {
		.files = 1, .analysed = 2, .fragmented = 3, .bytes = 4, .blocks = 5,
		.records = 6, .runs = 7, .best = 8, .ideal = 9, .holes = 10,
		.unwritten_blocks = 11, .ls_extra_runs = 12, .ls_extra_blocks = 13,
		.dl_jumps = 18, .dl_blocks = 19, .skipped = { 14, 15, 16, 17 },
	};
	E4Summary src = {
		.files = 100, .analysed = 200, .fragmented = 300, .bytes = 400,
		.blocks = 500, .records = 600, .runs = 700, .best = 800, .ideal = 900,
		.holes = 1000, .unwritten_blocks = 1100, .ls_extra_runs = 1200,
		.ls_extra_blocks = 1300, .dl_jumps = 1800, .dl_blocks = 1900,
		.skipped = { 1400, 1500, 1600, 1700 },
	};
	E4Summary src_copy = src;
	e4_summary_merge(&dst, &src);
	ck_assert_uint_eq(dst.files, 101);
	ck_assert_uint_eq(dst.analysed, 202);
	ck_assert_uint_eq(dst.fragmented, 303);
	ck_assert_uint_eq(dst.bytes, 404);
	ck_assert_uint_eq(dst.blocks, 505);
	ck_assert_uint_eq(dst.records, 606);
	ck_assert_uint_eq(dst.runs, 707);
	ck_assert_uint_eq(dst.best, 808);
	ck_assert_uint_eq(dst.ideal, 909);
	ck_assert_uint_eq(dst.holes, 1010);
	ck_assert_uint_eq(dst.unwritten_blocks, 1111);
	ck_assert_uint_eq(dst.ls_extra_runs, 1212);
	ck_assert_uint_eq(dst.ls_extra_blocks, 1313);
	ck_assert_uint_eq(dst.dl_jumps, 1818);
	ck_assert_uint_eq(dst.dl_blocks, 1919);
	ck_assert_uint_eq(dst.skipped[E4_SKIP_EMPTY], 1414);
	ck_assert_uint_eq(dst.skipped[E4_SKIP_NO_EXTENTS], 1515);
	ck_assert_uint_eq(dst.skipped[E4_SKIP_UNREADABLE], 1616);
	ck_assert_uint_eq(dst.skipped[E4_SKIP_NO_FIEMAP], 1717);
	ck_assert_uint_eq(e4_summary_skipped_total(&dst), 1414 + 1515 + 1616 + 1717);
	/* src is left alone */
	ck_assert_mem_eq(&src, &src_copy, sizeof(src));
}
END_TEST

START_TEST(summary_merge_equals_adding)
{
	/* merging two partial summaries gives the summary of all the files */
	E4Summary all, a = {0}, b = {0};
	three_files(&all);
	e4_summary_skip(&all, E4_SKIP_UNREADABLE);
	E4FileFigures fa = fig(40960, 10, 4, 3, 1, 1, 1, 2);
	E4FileFigures fb = fig(8192, 2, 1, 1, 1, 1, 0, 0);
	E4FileFigures fc = fig(100, 1, 1, 1, 1, 1, 0, 0);
	e4_summary_add(&a, &fa);
	e4_summary_skip(&a, E4_SKIP_UNREADABLE);
	e4_summary_add(&b, &fb);
	e4_summary_add(&b, &fc);
	e4_summary_merge(&a, &b);
	ck_assert_mem_eq(&a, &all, sizeof(all));
}
END_TEST

START_TEST(summary_skip)
{
	E4Summary s = {0};
	e4_summary_skip(&s, E4_SKIP_EMPTY);
	e4_summary_skip(&s, E4_SKIP_EMPTY);
	e4_summary_skip(&s, E4_SKIP_UNREADABLE);
	e4_summary_skip(&s, E4_SKIP_NO_FIEMAP);
	ck_assert_uint_eq(s.files, 4);
	ck_assert_uint_eq(s.analysed, 0);
	ck_assert_uint_eq(s.skipped[E4_SKIP_EMPTY], 2);
	ck_assert_uint_eq(s.skipped[E4_SKIP_NO_EXTENTS], 0);
	ck_assert_uint_eq(s.skipped[E4_SKIP_UNREADABLE], 1);
	ck_assert_uint_eq(s.skipped[E4_SKIP_NO_FIEMAP], 1);
	ck_assert_uint_eq(e4_summary_skipped_total(&s), 4);
	ck_assert_uint_eq(s.blocks, 0);
	ck_assert_int_eq(e4_summary_score(&s), 0);
	/* an out-of-range reason still counts the file, under no reason */
	e4_summary_skip(&s, E4_SKIP__COUNT);
	ck_assert_uint_eq(s.files, 5);
	ck_assert_uint_eq(e4_summary_skipped_total(&s), 4);
}
END_TEST

/* ---- directory locality ---- */

#define BS 4096u

/* The figures of a file mapped by records given in blocks as
 * { logical, physical, length } triples; n = 0 for a file without blocks. */
static E4FileFigures mapped(const uint64_t (*rec)[3], size_t n)
{
	E4Extent ext[8];
	uint64_t end = 0;
	for (size_t i = 0; i < n; i++) {
		ext[i] = (E4Extent){ rec[i][0] * BS, rec[i][1] * BS, rec[i][2] * BS, 0 };
		end = rec[i][0] + rec[i][2];
	}
	E4ExtentMap map = { .ext = ext, .n = n, .cap = n };
	E4Geometry g = { .block_size = BS, .blocks_per_group = 32768 };
	E4FileFigures f;
	e4_figures_compute(&map, end * BS, &g, &f);
	return f;
}

/* A file of one run: len blocks from physical block at. */
static E4FileFigures run_at(uint64_t at, uint64_t len)
{
	const uint64_t rec[][3] = { { 0, at, len } };
	return mapped(rec, 1);
}

/* The locality of one directory whose files come in this order. */
static double dir_of(const E4FileFigures *files, size_t n, E4DirLoc *loc)
{
	*loc = (E4DirLoc){0};
	for (size_t i = 0; i < n; i++)
		e4_dirloc_add(loc, &files[i]);
	E4Summary s = {0};
	e4_summary_add_dirloc(&s, loc);
	return e4_summary_dir_locality(&s);
}

START_TEST(dirloc_back_to_back)
{
	E4FileFigures f[] = { run_at(100, 10), run_at(110, 5), run_at(115, 15) };
	E4DirLoc loc;
	ck_assert_double_eq(dir_of(f, 3, &loc), 1.0);
	ck_assert_uint_eq(loc.jumps, 0);
	ck_assert_uint_eq(loc.blocks, 30);
	ck_assert_uint_eq(loc.end, 130);
}
END_TEST

START_TEST(dirloc_reverse_order)
{
	/* The same sizes laid out backwards: each file after the first is a jump. */
	E4FileFigures f[] = { run_at(120, 10), run_at(115, 5), run_at(100, 15) };
	E4DirLoc loc;
	ck_assert_double_eq_tol(dir_of(f, 3, &loc), 1.0 - 2.0 / 30.0, 1e-12);
	ck_assert_uint_eq(loc.jumps, 2);
	ck_assert_uint_eq(loc.blocks, 30);
	/* Contiguous on disk, but read in the other order: still jumps. */
	E4FileFigures g[] = { run_at(115, 15), run_at(110, 5), run_at(100, 10) };
	ck_assert_double_eq_tol(dir_of(g, 3, &loc), 1.0 - 2.0 / 30.0, 1e-12);
}
END_TEST

START_TEST(dirloc_fragmented_file)
{
	/* 3 runs: 2 jumps inside the file; the next file follows its last run. */
	const uint64_t frag[][3] = { { 0, 100, 4 }, { 4, 200, 4 }, { 8, 300, 2 } };
	E4FileFigures f[] = { mapped(frag, 3), run_at(302, 5) };
	E4DirLoc loc;
	ck_assert_double_eq_tol(dir_of(f, 2, &loc), 1.0 - 2.0 / 15.0, 1e-12);
	ck_assert_uint_eq(loc.jumps, 2);
	/* Following its first run instead is a jump. */
	E4FileFigures g[] = { mapped(frag, 3), run_at(104, 5) };
	ck_assert_double_eq_tol(dir_of(g, 2, &loc), 1.0 - 3.0 / 15.0, 1e-12);
	/* A file node: a directory of that file alone. */
	ck_assert_double_eq_tol(dir_of(f, 1, &loc), 1.0 - 2.0 / 10.0, 1e-12);
}
END_TEST

START_TEST(dirloc_holes)
{
	/* A run continued physically across a logical hole is no jump,
	 * whether it skips the hole's blocks or not (filefrag's rule). */
	const uint64_t skips[][3] = { { 0, 100, 2 }, { 10, 110, 3 } };
	const uint64_t dense[][3] = { { 0, 113, 2 }, { 10, 115, 3 } };
	E4FileFigures f[] = { mapped(skips, 2), mapped(dense, 2), run_at(118, 1) };
	E4DirLoc loc;
	ck_assert_double_eq(dir_of(f, 3, &loc), 1.0);
	ck_assert_uint_eq(loc.blocks, 11);
	/* A hole whose data lands elsewhere is a jump. */
	const uint64_t apart[][3] = { { 0, 100, 2 }, { 10, 500, 3 } };
	E4FileFigures g[] = { mapped(apart, 2), run_at(503, 1) };
	ck_assert_double_eq_tol(dir_of(g, 2, &loc), 1.0 - 1.0 / 6.0, 1e-12);
}
END_TEST

START_TEST(dirloc_empty_files_skipped)
{
	E4FileFigures none = mapped(NULL, 0);
	ck_assert_uint_eq(none.blocks, 0);
	/* Passed over between two files, and before the first one. */
	E4FileFigures f[] = { none, run_at(100, 4), none, run_at(104, 4), none };
	E4DirLoc loc;
	ck_assert_double_eq(dir_of(f, 5, &loc), 1.0);
	ck_assert_uint_eq(loc.jumps, 0);
	ck_assert_uint_eq(loc.blocks, 8);
	/* Nothing mapped at all: 1. */
	ck_assert_double_eq(dir_of(f, 1, &loc), 1.0);
	ck_assert_uint_eq(loc.blocks, 0);
}
END_TEST

START_TEST(dirloc_subtree_sums)
{
	/* Two directories: each starts afresh (its first run is no jump),
	 * and the figure is 1 - sum of jumps / sum of blocks. */
	E4FileFigures a[] = { run_at(100, 10), run_at(500, 10) };  /* 1 jump, 20 blocks */
	E4FileFigures b[] = { run_at(900, 30), run_at(930, 10) };  /* 0 jumps, 40 blocks */
	E4DirLoc la = {0}, lb = {0};
	for (size_t i = 0; i < 2; i++) {
		e4_dirloc_add(&la, &a[i]);
		e4_dirloc_add(&lb, &b[i]);
	}
	E4Summary s = {0};
	e4_summary_add_dirloc(&s, &la);
	e4_summary_add_dirloc(&s, &lb);
	ck_assert_uint_eq(s.dl_jumps, 1);
	ck_assert_uint_eq(s.dl_blocks, 60);
	ck_assert_double_eq_tol(e4_summary_dir_locality(&s), 1.0 - 1.0 / 60.0, 1e-12);
	/* b's first file does not follow a's last: no jump across directories */
	ck_assert_uint_ne(a[1].end_block, b[0].first_block);
	/* merging summaries adds the locality figures too */
	E4Summary t = {0};
	e4_summary_merge(&t, &s);
	e4_summary_merge(&t, &s);
	ck_assert_double_eq_tol(e4_summary_dir_locality(&t), 1.0 - 2.0 / 120.0, 1e-12);
	/* the summary's own counts are not touched */
	ck_assert_uint_eq(s.files, 0);
	ck_assert_uint_eq(s.blocks, 0);
}
END_TEST

START_TEST(skip_names)
{
	ck_assert_str_eq(e4_skip_reason_name(E4_SKIP_EMPTY), "empty");
	ck_assert_str_eq(e4_skip_reason_name(E4_SKIP_NO_EXTENTS), "no-extents");
	ck_assert_str_eq(e4_skip_reason_name(E4_SKIP_UNREADABLE), "unreadable");
	ck_assert_str_eq(e4_skip_reason_name(E4_SKIP_NO_FIEMAP), "no-fiemap");
	ck_assert_str_eq(e4_skip_reason_name(E4_SKIP__COUNT), "unknown");
}
END_TEST

static Suite *score_suite(void)
{
	Suite *s = suite_create("score");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, score_from_ratio);
	tcase_add_test(tc, score_verdict);
	tcase_add_test(tc, summary_add);
	tcase_add_test(tc, summary_ratio_score);
	tcase_add_test(tc, summary_empty);
	tcase_add_test(tc, layout_score);
	tcase_add_test(tc, mean_run_kib);
	tcase_add_test(tc, summary_merge);
	tcase_add_test(tc, summary_merge_equals_adding);
	tcase_add_test(tc, summary_skip);
	tcase_add_test(tc, skip_names);
	tcase_add_test(tc, dirloc_back_to_back);
	tcase_add_test(tc, dirloc_reverse_order);
	tcase_add_test(tc, dirloc_fragmented_file);
	tcase_add_test(tc, dirloc_holes);
	tcase_add_test(tc, dirloc_empty_files_skipped);
	tcase_add_test(tc, dirloc_subtree_sums);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(score_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
