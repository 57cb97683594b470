/* Unit tests of core/trigger.c: the words a defrag trigger accepts. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trigger.h"

static E4Trigger parse(const char *s, off_t off)
{
	return e4_trigger_parse(s, strlen(s), off);
}

START_TEST(trigger_words)
{
	ck_assert_int_eq(parse("1", 0), E4_TRIGGER_START);
	ck_assert_int_eq(parse("1\n", 0), E4_TRIGGER_START);
	ck_assert_int_eq(parse("start\n", 0), E4_TRIGGER_START);
	ck_assert_int_eq(parse("0\n", 0), E4_TRIGGER_CANCEL);
	ck_assert_int_eq(parse("cancel", 0), E4_TRIGGER_CANCEL);
	ck_assert_int_eq(parse("pack", 0), E4_TRIGGER_PACK);
	ck_assert_int_eq(parse("pack\n", 0), E4_TRIGGER_PACK);
	ck_assert_int_eq(parse("compact\n", 0), E4_TRIGGER_COMPACT);
}
END_TEST

START_TEST(trigger_junk)
{
	const char *junk[] = { "", "\n", "2", "11", "1\n\n", " 1", "1 ", "START", "cancelx", "1\r\n", "yes",
			       "PACK", "pack ", "packs", "pac" };
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		ck_assert_msg(parse(junk[i], 0) == E4_TRIGGER_INVALID, "'%s' accepted", junk[i]);
	/* Embedded NUL: the bytes count, not the C string. */
	ck_assert_int_eq(e4_trigger_parse("1\0", 2, 0), E4_TRIGGER_INVALID);
}
END_TEST

START_TEST(trigger_offsets)
{
	/* The end of a word written in two calls. */
	ck_assert_int_eq(parse("\n", 1), E4_TRIGGER_NOTHING);
	ck_assert_int_eq(parse("", 5), E4_TRIGGER_NOTHING);
	ck_assert_int_eq(parse("1", 1), E4_TRIGGER_INVALID);
	ck_assert_int_eq(parse("1\n", 4096), E4_TRIGGER_INVALID);
	ck_assert_int_eq(parse("1", -1), E4_TRIGGER_INVALID);
}
END_TEST

START_TEST(trigger_huge)
{
	char big[65] = {0};
	memset(big, '1', 64);
	ck_assert_int_eq(e4_trigger_parse(big, 64, 0), E4_TRIGGER_INVALID);
	/* Over the limit even when it would otherwise be a word plus padding. */
	char huge[5000];
	memset(huge, '\n', sizeof(huge));
	huge[0] = '1';
	ck_assert_int_eq(e4_trigger_parse(huge, sizeof(huge), 0), E4_TRIGGER_INVALID);
}
END_TEST

static Suite *trigger_suite(void)
{
	Suite *s = suite_create("trigger");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, trigger_words);
	tcase_add_test(tc, trigger_junk);
	tcase_add_test(tc, trigger_offsets);
	tcase_add_test(tc, trigger_huge);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(trigger_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
