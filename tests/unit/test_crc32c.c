/* Unit tests of core/crc32c.c against the published CRC-32C check values
 * (RFC 3720, B.4; "123456789" from the CRC catalogue), in the kernel's
 * convention (no inversion: the standard CRC is ~crc32c(~0, data)), and
 * split at every point (a checksum built piece by piece, as ext4's are). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

static uint32_t standard(const void *data, size_t len)
{
	return ~e4_crc32c(~0u, data, len);
}

START_TEST(check_values)
{
	uint8_t buf[32];
	ck_assert_uint_eq(standard("123456789", 9), 0xE3069283u);
	memset(buf, 0, sizeof(buf));
	ck_assert_uint_eq(standard(buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, sizeof(buf));
	ck_assert_uint_eq(standard(buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	ck_assert_uint_eq(standard(buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	ck_assert_uint_eq(standard(buf, 32), 0x113FDB5Cu);
	ck_assert_uint_eq(e4_crc32c(0x12345678u, buf, 0), 0x12345678u);
}
END_TEST

START_TEST(pieces)
{
	uint8_t buf[257];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	uint32_t whole = e4_crc32c(0xdeadbeefu, buf, sizeof(buf));
	for (size_t cut = 0; cut <= sizeof(buf); cut++) {
		uint32_t c = e4_crc32c(0xdeadbeefu, buf, cut);
		ck_assert_uint_eq(e4_crc32c(c, buf + cut, sizeof(buf) - cut), whole);
	}
	/* Unaligned starts read the same bytes. */
	uint8_t *copy = malloc(sizeof(buf) + 7);
	for (size_t shift = 0; shift < 8; shift++) {
		memcpy(copy + shift, buf, sizeof(buf));
		ck_assert_uint_eq(e4_crc32c(0xdeadbeefu, copy + shift, sizeof(buf)), whole);
	}
	free(copy);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, check_values);
	tcase_add_test(tc, pieces);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
