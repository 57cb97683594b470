/* Unit tests of core/pack.c's pure part: the jumps of files laid out in a
 * given order (directory locality's numerator). */
#include <check.h>
#include <stdlib.h>

#include "pack.h"

START_TEST(pack_jumps_end_to_end)
{
	/* Three files back to back, one run each: one sequential read. */
	uint64_t first[] = { 100, 110, 130 }, end[] = { 110, 130, 131 };
	uint32_t runs[] = { 1, 1, 1 };
	ck_assert_uint_eq(e4_pack_jumps(first, end, runs, 3), 0);
}
END_TEST

START_TEST(pack_jumps_reversed)
{
	/* The same files in the opposite physical order: every file a jump. */
	uint64_t first[] = { 130, 110, 100 }, end[] = { 131, 130, 110 };
	uint32_t runs[] = { 1, 1, 1 };
	ck_assert_uint_eq(e4_pack_jumps(first, end, runs, 3), 2);
}
END_TEST

START_TEST(pack_jumps_fragmented_and_empty)
{
	/* A file of 4 runs adds 3 jumps of its own; a file without blocks
	 * (runs 0) is passed over, so its neighbours still join. */
	uint64_t first[] = { 100, 0, 200, 250 }, end[] = { 200, 0, 250, 260 };
	uint32_t runs[] = { 1, 0, 4, 1 };
	ck_assert_uint_eq(e4_pack_jumps(first, end, runs, 4), 3);
	uint32_t none[] = { 0, 0 };
	ck_assert_uint_eq(e4_pack_jumps(first, end, none, 2), 0);
	ck_assert_uint_eq(e4_pack_jumps(NULL, NULL, NULL, 0), 0);
}
END_TEST

static Suite *pack_suite(void)
{
	Suite *s = suite_create("pack");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, pack_jumps_end_to_end);
	tcase_add_test(tc, pack_jumps_reversed);
	tcase_add_test(tc, pack_jumps_fragmented_and_empty);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pack_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
