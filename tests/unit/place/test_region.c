/* Unit tests of core/place/region.c: choosing the window that takes the
 * fewest blocks of other files to clear, never one holding unknown blocks. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "region.h"

/* A map of total blocks from pieces (start, len, file); gaps are unknown. */
static E4BlockMap map_of(uint64_t total, const E4Piece *pieces, size_t n)
{
	E4BlockMap m = { .total_blocks = total, .n = n };
	m.v = malloc(n * sizeof(*m.v));
	for (size_t i = 0; i < n; i++)
		m.v[i] = pieces[i];
	e4_blockmap_finish(&m);
	return m;
}

#define FREE E4_PIECE_FREE

START_TEST(region_fewest_used)
{
	/* Swiss cheese: 8 used, 8 free, except [64, 80) where a file has only 4. */
	E4Piece p[] = {
		{ 0, 8, 0, 0 }, { 8, 8, 0, FREE }, { 16, 8, 8, 0 }, { 24, 8, 0, FREE },
		{ 32, 8, 16, 0 }, { 40, 8, 0, FREE }, { 48, 8, 24, 0 }, { 56, 8, 0, FREE },
		{ 64, 4, 32, 1 }, { 68, 12, 0, FREE }, { 80, 8, 40, 0 }, { 88, 8, 0, FREE },
	};
	E4BlockMap m = map_of(96, p, sizeof(p) / sizeof(p[0]));
	E4Region r;
	ck_assert_int_eq(e4_region_choose(&m, 16, 1, FREE, &r), 0);
	ck_assert_uint_eq(r.used, 4);
	ck_assert(r.start <= 64 && r.start + 16 >= 68); /* around file 1 */
	/* The file to be moved there counts as free: file 1's window is clear. */
	ck_assert_int_eq(e4_region_choose(&m, 16, 1, 1, &r), 0);
	ck_assert_uint_eq(r.used, 0);
	free(m.v);
}
END_TEST

START_TEST(region_avoids_unknown)
{
	/* [10, 12) is unknown (metadata): no 16-block window may hold it. */
	E4Piece p[] = { { 0, 10, 0, FREE }, { 12, 8, 0, 0 }, { 20, 20, 0, FREE } };
	E4BlockMap m = map_of(40, p, 3);
	E4Region r;
	ck_assert_int_eq(e4_region_choose(&m, 16, 1, FREE, &r), 0);
	ck_assert(r.start >= 12);
	ck_assert_uint_eq(r.used, r.start < 20 ? 20 - r.start : 0);
	ck_assert_uint_eq(r.used, 0); /* [20, 36) is free */
	ck_assert_int_eq(e4_region_choose(&m, 29, 1, FREE, &r), -ENOSPC);
	free(m.v);
}
END_TEST

START_TEST(region_overlaps_dropped)
{
	/* A file rewritten during the walk overlaps a free extent: both are
	 * unknown then. */
	E4Piece p[] = { { 0, 16, 0, FREE }, { 8, 4, 0, 0 }, { 16, 16, 0, FREE } };
	E4BlockMap m = map_of(32, p, 3);
	ck_assert_uint_eq(m.n, 1);
	E4Region r;
	ck_assert_int_eq(e4_region_choose(&m, 16, 1, FREE, &r), 0);
	ck_assert_uint_eq(r.start, 16);
	ck_assert_int_eq(e4_region_choose(&m, 17, 1, FREE, &r), -ENOSPC);
	free(m.v);
}
END_TEST

START_TEST(region_aligned)
{
	/* Free [8, 40), the rest one file: the only 16-aligned window of 16
	 * blocks that is all free is [16, 32); unaligned, [8, 24) is first. */
	E4Piece p[] = { { 0, 8, 0, 0 }, { 8, 32, 0, FREE }, { 40, 24, 8, 0 } };
	E4BlockMap m = map_of(64, p, 3);
	E4Region r;
	ck_assert_int_eq(e4_region_choose(&m, 16, 16, FREE, &r), 0);
	ck_assert_uint_eq(r.start, 16);
	ck_assert_uint_eq(r.used, 0);
	ck_assert_int_eq(e4_region_choose(&m, 32, 32, FREE, &r), 0);
	ck_assert_uint_eq(r.start % 32, 0);
	ck_assert_uint_eq(r.used, r.start == 0 ? 8 : 24);
	free(m.v);
}
END_TEST

START_TEST(region_few_unknown)
{
	/* A window of 1024 blocks may hold 1024 / E4_REGION_UNKNOWN_PER
	 * unknown blocks (a tree leaf here and there): [0, 1024) holds 2 and
	 * no file data, [1024, 2048) none but 512 blocks of a file. */
	ck_assert_int_eq(1024 / E4_REGION_UNKNOWN_PER, 2);
	E4Piece p[] = { { 0, 300, 0, FREE }, { 301, 400, 0, FREE }, { 702, 322, 0, FREE },
			{ 1024, 512, 0, 0 }, { 1536, 512, 0, FREE } };
	E4BlockMap m = map_of(2048, p, 5);
	E4Region r;
	ck_assert_int_eq(e4_region_choose(&m, 1024, 1024, FREE, &r), 0);
	/* Fewer unknown blocks come first, then fewer to move. */
	ck_assert_uint_eq(r.start, 1024);
	ck_assert_uint_eq(r.unknown, 0);
	ck_assert_uint_eq(r.used, 512);
	/* With the file's own data counting as free, still the clean one. */
	ck_assert_int_eq(e4_region_choose(&m, 1024, 1024, 0, &r), 0);
	ck_assert_uint_eq(r.start, 1024);
	/* Three unknown blocks: too many for the first window. */
	E4Piece q[] = { { 0, 300, 0, FREE }, { 301, 300, 0, FREE }, { 602, 300, 0, FREE },
			{ 903, 121, 0, FREE }, { 1024, 1024, 0, 0 } };
	E4BlockMap n = map_of(2048, q, 5);
	ck_assert_int_eq(e4_region_choose(&n, 1024, 1024, FREE, &r), 0);
	ck_assert_uint_eq(r.start, 1024);
	free(m.v);
	free(n.v);
}
END_TEST

START_TEST(region_pinned)
{
	/* Two windows of 32: [0, 32) holds 4 blocks of file 0, [32, 64) 12
	 * of file 1. File 0 may not move (excluded): its 4 blocks count as
	 * unknown (32 / E4_REGION_UNKNOWN_PER is 0), so the dearer window is
	 * the only one; with file 1 pinned too, none. */
	E4Piece p[] = { { 0, 4, 0, 0 }, { 4, 28, 0, FREE }, { 32, 12, 0, 1 }, { 44, 20, 0, FREE } };
	E4BlockMap m = map_of(64, p, 4);
	E4Region r;
	E4RegionQuery q = { .len = 32, .align = 32, .skip_file = FREE };
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_eq(r.start, 0);
	ck_assert_uint_eq(r.used, 4);
	bool pinned[2] = { true, false };
	q.pinned = pinned;
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_eq(r.start, 32);
	ck_assert_uint_eq(r.used, 12);
	ck_assert_uint_eq(r.unknown, 0);
	/* Unaligned: a window straddling file 0's last blocks counts them. */
	q.align = 1;
	q.len = 30;
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_ge(r.start, 4);
	pinned[1] = true;
	q.align = 32;
	q.len = 32;
	ck_assert_int_eq(e4_region_find(&m, &q, &r), -ENOSPC);
	free(m.v);
}
END_TEST

START_TEST(region_need)
{
	/* Two aligned windows of 1024: the first starts with 100 unknown
	 * blocks (a backup superblock's group): too many blocks for the bound
	 * of 2, but one run, and a file needing 900 blocks fits beside them;
	 * the second holds 3 scattered unknown blocks: 3 runs, over the bound. */
	E4Piece p[] = { { 100, 1024, 0, FREE },
			{ 1125, 200, 0, FREE }, { 1326, 200, 0, FREE }, { 1527, 521, 0, FREE } };
	E4BlockMap m = map_of(2048, p, 4);
	E4Region r;
	E4RegionQuery q = { .len = 1024, .align = 1024, .skip_file = FREE };
	ck_assert_int_eq(e4_region_find(&m, &q, &r), -ENOSPC);
	q.need = 900;
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_eq(r.start, 0);
	ck_assert_uint_eq(r.unknown, 100);
	ck_assert_uint_eq(r.unknown_runs, 1);
	/* A file needing 950 blocks does not fit beside 100 unknown ones. */
	q.need = 950;
	ck_assert_int_eq(e4_region_find(&m, &q, &r), -ENOSPC);
	/* Unaligned, the window past the obstacle holds none. */
	q.align = 1;
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_eq(r.unknown_runs, 0);
	ck_assert_uint_eq(r.unknown, 0);
	ck_assert_uint_eq(r.start, 100);
	free(m.v);
}
END_TEST

START_TEST(region_max_piece)
{
	/* File 0's piece of 20 blocks is longer than any free one (12): no
	 * hole takes it whole, so it counts as unknown and its window loses
	 * to the one holding file 1's short pieces. */
	E4Piece p[] = { { 0, 20, 0, 0 }, { 20, 12, 0, FREE }, { 32, 4, 0, 1 }, { 36, 8, 0, FREE },
			{ 44, 4, 4, 1 }, { 48, 8, 0, FREE }, { 56, 8, 0, FREE } };
	E4BlockMap m = map_of(64, p, 7);
	E4Region r;
	E4RegionQuery q = { .len = 32, .align = 32, .skip_file = FREE };
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_eq(r.start, 32); /* 8 blocks to move against 20 */
	q.max_piece = 12;
	q.min_used = 9; /* only the window of file 0 would do: now none */
	ck_assert_int_eq(e4_region_find(&m, &q, &r), -ENOSPC);
	q.min_used = 0;
	q.skip_file = 0; /* its own piece counts as free */
	ck_assert_int_eq(e4_region_find(&m, &q, &r), 0);
	ck_assert_uint_eq(r.start, 0);
	ck_assert_uint_eq(r.used, 0);
	free(m.v);
}
END_TEST

static Suite *region_suite(void)
{
	Suite *s = suite_create("region");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, region_fewest_used);
	tcase_add_test(tc, region_avoids_unknown);
	tcase_add_test(tc, region_overlaps_dropped);
	tcase_add_test(tc, region_aligned);
	tcase_add_test(tc, region_few_unknown);
	tcase_add_test(tc, region_pinned);
	tcase_add_test(tc, region_need);
	tcase_add_test(tc, region_max_piece);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(region_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
