/* Unit tests of core/freespace.c: e2freefrag's histogram and the lower
 * bound on the runs of a new allocation. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "freespace.h"

static E4FreeSpace space_of(const uint64_t *extents, size_t n)
{
	E4FreeSpace fs = { .block_size = 4096 };
	for (size_t i = 0; i < n; i++)
		e4_freespace_add(&fs, extents[i]);
	return fs;
}

START_TEST(histogram_buckets)
{
	const uint64_t ext[] = { 1, 2, 3, 4, 8, 1000 };
	E4FreeSpace fs = space_of(ext, 6);
	ck_assert_uint_eq(fs.extents, 6);
	ck_assert_uint_eq(fs.free_blocks, 1018);
	ck_assert_uint_eq(fs.min_blocks, 1);
	ck_assert_uint_eq(fs.max_blocks, 1000);
	ck_assert_uint_eq(fs.bucket_extents[1], 1);  /* [1, 2) */
	ck_assert_uint_eq(fs.bucket_extents[2], 2);  /* [2, 4) */
	ck_assert_uint_eq(fs.bucket_blocks[2], 5);
	ck_assert_uint_eq(fs.bucket_extents[3], 1);  /* [4, 8) */
	ck_assert_uint_eq(fs.bucket_extents[4], 1);  /* [8, 16) */
	ck_assert_uint_eq(fs.bucket_extents[10], 1); /* [512, 1024) */
}
END_TEST

START_TEST(min_pieces_bounds)
{
	/* swiss cheese: 1000 extents of 8 blocks and one of 1000 */
	uint64_t ext[1001];
	for (int i = 0; i < 1000; i++)
		ext[i] = 8;
	ext[1000] = 1000;
	E4FreeSpace fs = space_of(ext, 1001);
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 0), 0);
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 1000), 1);  /* the large one */
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 1001), 2);
	/* 1000 + 15 per piece at most (the bucket of 8 is [8, 16)): a bound */
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 1030), 3);
	/* all of it: the large one, then 8,000 blocks in pieces of at most 15 */
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 9000), 1 + 534);
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 9001), UINT64_MAX); /* more than is free */
	E4FreeSpace none = { .block_size = 4096 };
	ck_assert_uint_eq(e4_freespace_min_pieces(&none, 1), UINT64_MAX);
}
END_TEST

START_TEST(min_pieces_never_above_truth)
{
	/* For exact extent sizes, the bound never exceeds the true fewest
	 * pieces (largest first). */
	const uint64_t ext[] = { 5, 7, 9, 30, 31, 33, 64, 100, 3, 3 };
	E4FreeSpace fs = space_of(ext, 10);
	const uint64_t sorted[] = { 100, 64, 33, 31, 30, 9, 7, 5, 3, 3 };
	for (uint64_t want = 1; want <= 285; want++) {
		uint64_t sum = 0, truth = 0;
		while (sum < want)
			sum += sorted[truth++];
		ck_assert_uint_le(e4_freespace_min_pieces(&fs, want), truth);
	}
	ck_assert_uint_eq(e4_freespace_min_pieces(&fs, 286), UINT64_MAX);
}
END_TEST

static Suite *freespace_suite(void)
{
	Suite *s = suite_create("freespace");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, histogram_buckets);
	tcase_add_test(tc, min_pieces_bounds);
	tcase_add_test(tc, min_pieces_never_above_truth);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(freespace_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
