/* Unit tests of core/plan.c: which files a plan counts, and the runs it
 * expects from a given free space (best fit, else largest first; no-gain
 * donors given back; the second pass on what a directory's files free). */
#include <check.h>
#include <stdlib.h>
#include <glib.h>

#include "plan.h"

static E4FileFigures fig(uint64_t blocks, uint32_t runs)
{
	return (E4FileFigures){ .size = blocks * 4096, .blocks = blocks, .runs = runs,
				.ideal = e4_ideal_count(blocks) };
}

typedef struct {
	const char *path;
	E4FileFigures fig;
	bool excluded;
} File;

/* The plan of these files on free extents of these lengths (known: a map
 * was read). */
static E4Plan plan_of(const File *files, size_t n, const uint64_t *free, size_t nfree, bool known)
{
	E4DefragOpts opts = {0};
	E4Planner *p = e4_planner_new(&opts, 4096, false);
	for (size_t i = 0; i < n; i++)
		e4_planner_add(p, files[i].path, files[i].fig.blocks ? &files[i].fig : NULL, files[i].excluded);
	for (size_t i = 0; i < nfree; i++)
		e4_planner_free_extent(i * 100000, free[i], p);
	E4Plan plan;
	e4_planner_finish(p, known, &plan);
	e4_planner_free(p);
	return plan;
}

START_TEST(counts_what_a_job_moves)
{
	const File files[] = { { "d/a", fig(1000, 10), false }, { "d/b", fig(1000, 1), false },
			       { "d/m", fig(500, 50), true }, { "d/empty", {0}, false } };
	const uint64_t free[] = { 100000 };
	E4Plan plan = plan_of(files, 4, free, 1, true);
	ck_assert_uint_eq(plan.files, 1);
	ck_assert_uint_eq(plan.bytes, 1000 * 4096);
	ck_assert_uint_eq(plan.runs_now, 10);
	ck_assert_uint_eq(plan.runs_expected, 1);
	ck_assert_uint_eq(plan.skipped_excluded, 1);
	ck_assert_uint_eq(plan.room_files, 0);
	ck_assert_uint_eq(plan.free_blocks, 100000);
	ck_assert_str_eq(plan.largest, "d/a");
	e4_plan_clear(&plan);
}
END_TEST

/* A file of 300 MiB (ideal: 3 extents) from a free extent of 400 MiB is
 * one physical run; from two of 200 MiB, two; with too little free space
 * it stays, a room file, whose blocks count as room (256 blocks to 1 GiB). */
START_TEST(runs_are_physical)
{
	const File files[] = { { "d/a", fig(76800, 40), false } };
	const uint64_t one[] = { 102400 }, two[] = { 51200, 51200 };
	E4Plan plan = plan_of(files, 1, one, 1, true);
	ck_assert_uint_eq(plan.runs_expected, 1);
	ck_assert_uint_eq(plan.runs_ideal, 3);
	ck_assert_uint_eq(plan.room_files, 0);
	e4_plan_clear(&plan);
	plan = plan_of(files, 1, two, 2, true);
	ck_assert_uint_eq(plan.runs_expected, 2);
	ck_assert_uint_eq(plan.room_files, 0);
	e4_plan_clear(&plan);
	const uint64_t cut[] = { 20000, 20000 }; /* too little: it stays as it is */
	plan = plan_of(files, 1, cut, 2, true);
	ck_assert_uint_eq(plan.runs_expected, 40);
	ck_assert_uint_eq(plan.room_files, 1);
	ck_assert_uint_eq(plan.room_blocks, 76800);
	e4_plan_clear(&plan);
}
END_TEST

/* 300 blocks from extents of 100, 200 and 250: the largest (250) then
 * the best fit for the 50 left (100): 2 runs; the next file of 50 blocks
 * finds the 50 left of that extent (best fit, not the 200). In the second
 * pass the first file takes the 300 it freed itself: 1 run. */
START_TEST(best_fit_else_largest)
{
	const File files[] = { { "d/big", fig(300, 30), false }, { "e/small", fig(50, 5), false } };
	const uint64_t free[] = { 100, 200, 250 };
	E4Plan plan = plan_of(files, 2, free, 3, true);
	ck_assert_uint_eq(plan.runs_expected, 1 + 1);
	ck_assert_uint_eq(plan.room_files, 0);
	ck_assert_uint_eq(plan.no_gain, 0);
	ck_assert_uint_eq(plan.retry_blocks, 300); /* the big file, moved twice */
	e4_plan_clear(&plan);
}
END_TEST

/* A donor no better than the file is not used, and gives its room back
 * to the next file; without a map every file is taken to reach its ideal. */
START_TEST(no_gain_and_unknown)
{
	const File files[] = { { "d/two", fig(200, 2), false }, { "e/other", fig(100, 4), false } };
	const uint64_t free[] = { 100, 50, 50 };
	E4Plan plan = plan_of(files, 2, free, 3, true);
	ck_assert_uint_eq(plan.no_gain, 1);          /* two: 3 pieces >= 2 runs */
	ck_assert_uint_eq(plan.runs_expected, 2 + 1); /* other: the 100 */
	e4_plan_clear(&plan);
	plan = plan_of(files, 1, NULL, 0, false);
	ck_assert(!plan.free_known);
	ck_assert_uint_eq(plan.runs_expected, 1);
	e4_plan_clear(&plan);
}
END_TEST

/* Two files of one directory in pieces first; what they free together
 * (400 blocks) takes each of them whole in the second pass. */
START_TEST(second_pass_on_freed_room)
{
	const File files[] = { { "d/a", fig(200, 50), false }, { "d/b", fig(200, 50), false } };
	const uint64_t free[] = { 50, 50, 50, 50, 50, 50, 50, 50 };
	E4Plan plan = plan_of(files, 2, free, 8, true);
	ck_assert_uint_eq(plan.runs_expected, 2);
	ck_assert_uint_eq(plan.room_files, 0);
	e4_plan_clear(&plan);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, counts_what_a_job_moves);
	tcase_add_test(tc, best_fit_else_largest);
	tcase_add_test(tc, runs_are_physical);
	tcase_add_test(tc, no_gain_and_unknown);
	tcase_add_test(tc, second_pass_on_freed_room);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(plan_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
