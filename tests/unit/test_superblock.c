/* Unit tests of core/superblock.c: parsing a synthetic raw superblock. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "superblock.h"

static uint8_t raw[2048];

static void put16(size_t off, uint16_t v)
{
	raw[off] = (uint8_t)v;
	raw[off + 1] = (uint8_t)(v >> 8);
}

static void put32(size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		raw[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* A superblock of a 4 KiB ext4 with flex_bg, 16 groups per flex group. */
static void make_sb(void)
{
	memset(raw, 0, sizeof(raw));
	put16(0x38, 0xEF53);            /* s_magic */
	put32(0x18, 2);                 /* s_log_block_size: 1024 << 2 */
	put32(0x20, 32768);             /* s_blocks_per_group */
	put32(0x60, 0x0200 | 0x0040 | 0x0002); /* flex_bg | extents | filetype */
	put32(0x64, 0x0001 | 0x0400);   /* sparse_super | metadata_csum */
	raw[0x174] = 4;                 /* s_log_groups_per_flex */
}

/* A geometry the parser must overwrite. */
static E4Geometry junk(void)
{
	E4Geometry g;
	memset(&g, 0xa5, sizeof(g));
	return g;
}

START_TEST(parse_flex)
{
	make_sb();
	E4Geometry g = junk();
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), 0);
	ck_assert_uint_eq(g.block_size, 4096);
	ck_assert_uint_eq(g.blocks_per_group, 32768);
	ck_assert_uint_eq(g.log_groups_per_flex, 4);
	ck_assert(g.flex_bg == true);
	ck_assert_uint_eq(g.feature_incompat, 0x0242);
	ck_assert_uint_eq(g.feature_ro_compat, 0x0401);
}
END_TEST

START_TEST(parse_no_flex)
{
	make_sb();
	put32(0x18, 0);          /* 1 KiB blocks */
	put32(0x20, 8192);
	put32(0x60, 0x0002 | E4_INCOMPAT_INLINE_DATA);
	put32(0x64, E4_RO_COMPAT_BIGALLOC);
	raw[0x174] = 0;
	E4Geometry g = junk();
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), 0);
	ck_assert_uint_eq(g.block_size, 1024);
	ck_assert_uint_eq(g.blocks_per_group, 8192);
	ck_assert_uint_eq(g.log_groups_per_flex, 0);
	ck_assert(g.flex_bg == false);
	ck_assert_uint_eq(g.feature_incompat, 0x0002 | E4_INCOMPAT_INLINE_DATA);
	ck_assert_uint_eq(g.feature_ro_compat, E4_RO_COMPAT_BIGALLOC);
}
END_TEST

START_TEST(parse_multibyte_fields)
{
	/* every byte of the little-endian fields is read */
	make_sb();
	put32(0x20, 0x00012345);
	put32(0x60, 0x80000200);
	put32(0x64, 0x01000000);
	E4Geometry g;
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), 0);
	ck_assert_uint_eq(g.blocks_per_group, 0x00012345);
	ck_assert_uint_eq(g.feature_incompat, 0x80000200);
	ck_assert_uint_eq(g.feature_ro_compat, 0x01000000);
	ck_assert(g.flex_bg);
}
END_TEST

START_TEST(parse_block_sizes)
{
	for (uint32_t log = 0; log <= 6; log++) {
		make_sb();
		put32(0x18, log);
		E4Geometry g;
		ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), 0);
		ck_assert_uint_eq(g.block_size, 1024u << log);
	}
	make_sb();
	put32(0x18, 7);
	E4Geometry g;
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
	put32(0x18, 0x01000002); /* high byte set: not 2 */
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
}
END_TEST

START_TEST(parse_bad_magic)
{
	make_sb();
	E4Geometry g;
	put16(0x38, 0x53EF); /* byte-swapped */
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
	put16(0x38, 0);
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
	put16(0x38, 0xEF54);
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
	put16(0x38, 0xEF53);
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), 0);
	/* magic at the wrong offset */
	put16(0x38, 0);
	put16(0x3a, 0xEF53);
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
}
END_TEST

START_TEST(parse_short)
{
	make_sb();
	E4Geometry g;
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE - 1, &g), -EINVAL);
	ck_assert_int_eq(e4_superblock_parse(raw, 0x3a, &g), -EINVAL);
	ck_assert_int_eq(e4_superblock_parse(raw, 0, &g), -EINVAL);
	/* longer than a superblock is fine */
	ck_assert_int_eq(e4_superblock_parse(raw, sizeof(raw), &g), 0);
	ck_assert_uint_eq(g.block_size, 4096);
}
END_TEST

START_TEST(parse_out_of_range)
{
	E4Geometry g;
	make_sb();
	put32(0x20, 0);
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
	make_sb();
	raw[0x174] = 32;
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), -EINVAL);
	raw[0x174] = 31;
	ck_assert_int_eq(e4_superblock_parse(raw, E4_SUPERBLOCK_SIZE, &g), 0);
	ck_assert_uint_eq(g.log_groups_per_flex, 31);
}
END_TEST

START_TEST(geometry_default)
{
	E4Geometry g = junk();
	e4_geometry_default(4096, &g);
	ck_assert_uint_eq(g.block_size, 4096);
	ck_assert_uint_eq(g.blocks_per_group, 32768);
	ck_assert_uint_eq(g.log_groups_per_flex, 4);
	ck_assert(g.flex_bg == true);
	ck_assert_uint_eq(g.feature_incompat & E4_INCOMPAT_FLEX_BG, E4_INCOMPAT_FLEX_BG);
	ck_assert_uint_eq(g.feature_ro_compat, 0);
	e4_geometry_default(1024, &g);
	ck_assert_uint_eq(g.block_size, 1024);
	ck_assert_uint_eq(g.blocks_per_group, 8192);
}
END_TEST

static Suite *superblock_suite(void)
{
	Suite *s = suite_create("superblock");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, parse_flex);
	tcase_add_test(tc, parse_no_flex);
	tcase_add_test(tc, parse_multibyte_fields);
	tcase_add_test(tc, parse_block_sizes);
	tcase_add_test(tc, parse_bad_magic);
	tcase_add_test(tc, parse_short);
	tcase_add_test(tc, parse_out_of_range);
	tcase_add_test(tc, geometry_default);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(superblock_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
