/* Unit tests of core/filerec.c: the tree's compact per-file record gives
 * back exactly the figures stored, in 40 bytes for files of up to 127
 * extents each a run of its own, and with a side record for the others. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>

#include "filerec.h"

#define BS 4096u

static E4Geometry flex_geom(void)
{
	return (E4Geometry){ .block_size = BS, .blocks_per_group = 32768, .log_groups_per_flex = 4,
			     .flex_bg = true, .feature_incompat = E4_INCOMPAT_FLEX_BG };
}

/* The figures e4_figures_compute gives for a map. */
static E4FileFigures computed(const E4Extent *ext, size_t n, uint64_t size)
{
	E4Geometry g = flex_geom();
	E4ExtentMap map = { .ext = (E4Extent *)ext, .n = n };
	E4FileFigures fig;
	e4_figures_compute(&map, size, &g, &fig);
	return fig;
}

static E4Extent blk(uint64_t logical, uint64_t physical, uint64_t len, uint32_t flags)
{
	return (E4Extent){ .logical = logical * BS, .physical = physical * BS, .length = len * BS,
			   .flags = flags };
}

/* Stores fig in a fresh record and checks it comes back equal, with a
 * side record or not as expected. */
static void round_trip(const E4FileFigures *fig, uint64_t ino, bool want_extra)
{
	E4Geometry g = flex_geom();
	E4FileRec r;
	e4_filerec_init(&r, 7, 1);
	e4_filerec_set(&r, ino, fig, &g);
	E4FileFigures back;
	e4_filerec_figures(&r, &g, &back);
	ck_assert(e4_figures_equal(&back, fig));
	ck_assert_uint_eq(e4_filerec_ino(&r), ino);
	ck_assert_uint_eq(e4_filerec_size(&r), fig->size);
	ck_assert_int_eq(e4_filerec_has_extra(&r), want_extra);
	ck_assert_uint_eq(e4_filerec_extra_bytes(&r) > 0, want_extra);
	ck_assert_uint_eq(r.name, 7);
	e4_filerec_clear(&r);
}

START_TEST(filerec_size)
{
	ck_assert_uint_eq(sizeof(E4FileRec), 40);
	ck_assert_uint_eq(_Alignof(E4FileRec), 4);
}
END_TEST

START_TEST(filerec_init)
{
	E4FileRec r;
	e4_filerec_init(&r, 12, 4242);
	ck_assert_uint_eq(r.name, 12);
	ck_assert_uint_eq(e4_filerec_ino(&r), 4242);
	ck_assert_int_eq(e4_filerec_skip(&r), -1);
	ck_assert(!e4_filerec_has(&r, E4_FR_VALID));
	ck_assert(!e4_filerec_has(&r, E4_FR_STALE));
	ck_assert(!e4_filerec_has(&r, E4_FR_MARKED));
	ck_assert(!e4_filerec_has(&r, E4_FR_LINKED));
	ck_assert(!e4_filerec_has_extra(&r));
	E4FileFigures fig, zero = {0};
	e4_filerec_figures(&r, NULL, &fig);
	ck_assert(e4_figures_equal(&fig, &zero));
}
END_TEST

START_TEST(filerec_one_run_compact)
{
	E4Extent one[] = { blk(0, 123456, 10, FIEMAP_EXTENT_LAST) };
	E4FileFigures fig = computed(one, 1, 10 * BS - 100);
	ck_assert_uint_eq(fig.runs, 1);
	round_trip(&fig, 99, false);
	/* a full extent, and the largest first block of 48 bits */
	E4Extent full[] = { blk(0, (UINT64_C(1) << 48) - 32769, 32768, FIEMAP_EXTENT_LAST) };
	fig = computed(full, 1, 32768 * (uint64_t)BS);
	round_trip(&fig, UINT32_MAX, false);
}
END_TEST

START_TEST(filerec_runs_compact)
{
	/* two and three runs, the last before the first (a negative distance) */
	E4Extent two[] = { blk(0, 1000, 4, 0), blk(4, 2000, 4, FIEMAP_EXTENT_LAST) };
	E4FileFigures fig = computed(two, 2, 8 * BS);
	ck_assert_uint_eq(fig.runs, 2);
	round_trip(&fig, 10, false);
	E4Extent back3[] = { blk(0, 5000, 1, 0), blk(1, 9000, 1, 0), blk(2, 100, 1, FIEMAP_EXTENT_LAST) };
	fig = computed(back3, 3, 3 * BS - 1);
	ck_assert_uint_eq(fig.runs, 3);
	ck_assert_uint_lt(fig.end_block, fig.first_block);
	round_trip(&fig, 10, false);
	/* 127 runs fit, 128 do not */
	E4Extent many[128];
	for (uint64_t i = 0; i < 128; i++)
		many[i] = blk(i, 1000 + 2 * i, 1, i == 127 ? FIEMAP_EXTENT_LAST : 0);
	many[126].flags = FIEMAP_EXTENT_LAST;
	fig = computed(many, 127, 127 * BS);
	ck_assert_uint_eq(fig.runs, 127);
	round_trip(&fig, 10, false);
	many[126].flags = 0;
	fig = computed(many, 128, 128 * BS);
	round_trip(&fig, 10, true);
}
END_TEST

START_TEST(filerec_size_only_compact)
{
	E4FileFigures fig = { .size = 123 };
	round_trip(&fig, 5, false);
	fig.size = UINT64_MAX;
	round_trip(&fig, 5, false);
}
END_TEST

START_TEST(filerec_other_files_extra)
{
	/* two records, one run: records != runs */
	E4Extent joined[] = { blk(0, 1000, 4, 0), blk(4, 1004, 4, FIEMAP_EXTENT_LAST) };
	E4FileFigures fig = computed(joined, 2, 8 * BS);
	ck_assert_uint_eq(fig.runs, 1);
	round_trip(&fig, 10, true);
	/* the last block farther than 2^31 blocks from first + blocks */
	E4Extent spread[] = { blk(0, 1000, 4, 0), blk(4, UINT64_C(1) << 33, 4, FIEMAP_EXTENT_LAST) };
	fig = computed(spread, 2, 8 * BS);
	round_trip(&fig, 10, true);
	E4Extent hole[] = { blk(0, 1000, 4, 0), blk(8, 1008, 4, FIEMAP_EXTENT_LAST) };
	fig = computed(hole, 2, 12 * BS);
	round_trip(&fig, 10, true);
	E4Extent tail_hole[] = { blk(0, 1000, 4, FIEMAP_EXTENT_LAST) };
	fig = computed(tail_hole, 1, 8 * BS);
	ck_assert_uint_eq(fig.holes, 1);
	round_trip(&fig, 10, true);
	E4Extent unwritten[] = { blk(0, 1000, 4, FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_LAST) };
	fig = computed(unwritten, 1, 4 * BS);
	round_trip(&fig, 10, true);
	E4Extent inline_data[] = { blk(0, 0, 0, FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_LAST) };
	fig = computed(inline_data, 1, 60);
	round_trip(&fig, 10, true);
	/* past 48 bits of block address */
	E4Extent far[] = { blk(0, UINT64_C(1) << 48, 4, FIEMAP_EXTENT_LAST) };
	fig = computed(far, 1, 4 * BS);
	round_trip(&fig, 10, true);
	/* an inode number past 32 bits, even with compact figures */
	E4Extent one[] = { blk(0, 1000, 4, FIEMAP_EXTENT_LAST) };
	fig = computed(one, 1, 4 * BS);
	round_trip(&fig, (uint64_t)UINT32_MAX + 1, true);
}
END_TEST

/* A record changes form both ways and keeps its flags, skip and ctime. */
START_TEST(filerec_reset_keeps_bits)
{
	E4Geometry g = flex_geom();
	E4FileRec r;
	e4_filerec_init(&r, 3, 8);
	r.ctime_ns = -5;
	e4_filerec_put(&r, E4_FR_VALID, true);
	e4_filerec_put(&r, E4_FR_MARKED, true);
	e4_filerec_put(&r, E4_FR_LINKED, true);
	e4_filerec_set_skip(&r, 2);
	E4Extent holed[] = { blk(0, 1000, 4, 0), blk(8, 2000, 4, FIEMAP_EXTENT_LAST) };
	E4FileFigures frag = computed(holed, 2, 12 * BS); /* a hole: side record */
	e4_filerec_set(&r, 8, &frag, &g);
	ck_assert(e4_filerec_has_extra(&r));
	e4_filerec_set(&r, 9, &frag, &g); /* reuses its side record */
	ck_assert_uint_eq(e4_filerec_ino(&r), 9);
	E4Extent one[] = { blk(0, 1000, 8, FIEMAP_EXTENT_LAST) };
	E4FileFigures flat = computed(one, 1, 8 * BS);
	e4_filerec_set(&r, 10, &flat, &g);
	ck_assert(!e4_filerec_has_extra(&r));
	E4FileFigures back;
	e4_filerec_figures(&r, &g, &back);
	ck_assert(e4_figures_equal(&back, &flat));
	ck_assert_uint_eq(e4_filerec_ino(&r), 10);
	ck_assert(e4_filerec_has(&r, E4_FR_VALID) && e4_filerec_has(&r, E4_FR_MARKED) &&
		  e4_filerec_has(&r, E4_FR_LINKED) && !e4_filerec_has(&r, E4_FR_STALE));
	ck_assert_int_eq(e4_filerec_skip(&r), 2);
	ck_assert_int_eq(r.ctime_ns, -5);
	e4_filerec_put(&r, E4_FR_MARKED, false);
	ck_assert(!e4_filerec_has(&r, E4_FR_MARKED) && e4_filerec_has(&r, E4_FR_LINKED));
	for (int s = -1; s < 4; s++) {
		e4_filerec_set_skip(&r, s);
		ck_assert_int_eq(e4_filerec_skip(&r), s);
		ck_assert(e4_filerec_has(&r, E4_FR_VALID));
	}
	e4_filerec_clear(&r);
}
END_TEST

/* A copy owns its side record: clearing the original leaves it intact
 * (ASan reports a use after free otherwise). */
START_TEST(filerec_copy_owns_extra)
{
	E4Geometry g = flex_geom();
	E4Extent holed[] = { blk(0, 1000, 4, 0), blk(8, 2000, 4, FIEMAP_EXTENT_LAST) };
	E4FileFigures frag = computed(holed, 2, 12 * BS); /* a hole: side record */
	E4FileRec a, b;
	e4_filerec_init(&a, 0, 1);
	e4_filerec_set(&a, 77, &frag, &g);
	e4_filerec_copy(&b, &a);
	ck_assert_uint_ne(a.size, b.size); /* two side records */
	e4_filerec_clear(&a);
	E4FileFigures back;
	e4_filerec_figures(&b, &g, &back);
	ck_assert(e4_figures_equal(&back, &frag));
	ck_assert_uint_eq(e4_filerec_ino(&b), 77);
	e4_filerec_clear(&b);
}
END_TEST

START_TEST(figures_equal_each_field)
{
	E4FileFigures a = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	ck_assert(e4_figures_equal(&a, &a));
	for (size_t i = 0; i < 12; i++) {
		E4FileFigures b = a;
		switch (i) {
		case 0: b.size++; break;
		case 1: b.blocks++; break;
		case 2: b.unwritten_blocks++; break;
		case 3: b.records++; break;
		case 4: b.runs++; break;
		case 5: b.e4_phys_runs++; break;
		case 6: b.holes++; break;
		case 7: b.best++; break;
		case 8: b.ideal++; break;
		case 9: b.flags++; break;
		case 10: b.first_block++; break;
		default: b.end_block++; break;
		}
		ck_assert(!e4_figures_equal(&a, &b));
	}
}
END_TEST

static Suite *filerec_suite(void)
{
	Suite *s = suite_create("filerec");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, filerec_size);
	tcase_add_test(tc, filerec_init);
	tcase_add_test(tc, filerec_one_run_compact);
	tcase_add_test(tc, filerec_runs_compact);
	tcase_add_test(tc, filerec_size_only_compact);
	tcase_add_test(tc, filerec_other_files_extra);
	tcase_add_test(tc, filerec_reset_keeps_bits);
	tcase_add_test(tc, filerec_copy_owns_extra);
	tcase_add_test(tc, figures_equal_each_field);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(filerec_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
