/* Unit tests of core/trigger.c: the words and options a defrag trigger
 * accepts, and the job limits the mount options share with it. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trigger.h"

static E4Trigger parse(const char *s, off_t off)
{
	E4TriggerCmd cmd;
	E4Trigger t = e4_trigger_parse(s, strlen(s), off, &cmd);
	ck_assert_int_eq(cmd.word, t);
	if (t == E4_TRIGGER_INVALID)
		ck_assert(cmd.why[0] != '\0');
	return t;
}

static E4TriggerCmd parse_cmd(const char *s)
{
	E4TriggerCmd cmd;
	e4_trigger_parse(s, strlen(s), 0, &cmd);
	return cmd;
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
	ck_assert_int_eq(e4_trigger_parse("1\0", 2, 0, &(E4TriggerCmd){0}), E4_TRIGGER_INVALID);
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
	ck_assert_int_eq(e4_trigger_parse(big, 64, 0, &(E4TriggerCmd){0}), E4_TRIGGER_INVALID);
	/* Over the limit even when it would otherwise be a word plus padding. */
	char huge[5000];
	memset(huge, '\n', sizeof(huge));
	huge[0] = '1';
	ck_assert_int_eq(e4_trigger_parse(huge, sizeof(huge), 0, &(E4TriggerCmd){0}), E4_TRIGGER_INVALID);
}
END_TEST

START_TEST(trigger_options)
{
	static const struct {
		const char *line;
		E4Trigger word;
		double seconds, mibps;
		uint32_t min_runs, hold_mib;
	} good[] = {
		{ "1 seconds=600 mibps=50\n", E4_TRIGGER_START, 600, 50, 0, 0 },
		{ "compact hold_mib=64", E4_TRIGGER_COMPACT, 0, 0, 0, 64 },
		{ "1 hold_mib=1048576 min_runs=2", E4_TRIGGER_START, 0, 0, 2, 1048576 },
		{ "pack seconds=30", E4_TRIGGER_PACK, 30, 0, 0, 0 },
		{ "start min_runs=8 seconds=0.5 mibps=.25", E4_TRIGGER_START, 0.5, 0.25, 8, 0 },
		/* Several blanks between options; leading zeros; a trailing dot. */
		{ "1   mibps=007 seconds=2.", E4_TRIGGER_START, 2, 7, 0, 0 },
		{ "1 min_runs=4294967295 seconds=1000000000", E4_TRIGGER_START, 1e9, 0, 4294967295u, 0 },
		{ "pack min_runs=1", E4_TRIGGER_PACK, 0, 0, 1, 0 },
		/* No options: every limit unset. */
		{ "1", E4_TRIGGER_START, 0, 0, 0, 0 },
		{ "cancel\n", E4_TRIGGER_CANCEL, 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		E4TriggerCmd c = parse_cmd(good[i].line);
		ck_assert_msg(c.word == good[i].word, "'%s': word %d (%s)", good[i].line, c.word, c.why);
		ck_assert_double_eq(c.limits.seconds, good[i].seconds);
		ck_assert_double_eq(c.limits.mibps, good[i].mibps);
		ck_assert_uint_eq(c.limits.min_runs, good[i].min_runs);
		ck_assert_uint_eq(c.limits.hold_mib, good[i].hold_mib);
	}
}
END_TEST

START_TEST(trigger_bad_options)
{
	const char *bad[] = {
		"1 foo=1", "1 Seconds=1", "1 seconds", "1 seconds=", "1 =5", "1 seconds==1", /* keys */
		"1 seconds=abc", "1 seconds=0", "1 seconds=0.0", "1 seconds=-1", "1 seconds=+1", /* values */
		"1 seconds=inf", "1 seconds=nan", "1 mibps=infinity", "1 seconds=1e3", "1 seconds=0x10",
		"1 seconds=5s", "1 seconds=5 ", "1 seconds=1.2.3", "1 seconds=.", "1 seconds= 5",
		"1 seconds=1000000001", "1 mibps=99999999999999999999", "1 seconds=5\t",
		"1 min_runs=0", "1 min_runs=1.5", "1 min_runs=4294967296", "1 min_runs=-3",
		"1 min_runs=99999999999999999999999", "1 hold_mib=0", "1 hold_mib=1048577", "1 hold_mib=2.5",
		"1 hold_mib=1 hold_mib=2",
		"1 seconds=1 seconds=2", "1 mibps=1 seconds=2 mibps=1", /* duplicates */
		"0 seconds=1", "cancel seconds=1", "cancel mibps=5", "0 ", /* options after a cancel */
		"1  ", " 1 seconds=1", "1\tseconds=1", "1 seconds=1\n\n", "1seconds=1", "start,seconds=1",
		"1 seconds=10 mibps=10 min_runs=10 seconds=100000000000000000000000", /* over 64 bytes */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		E4TriggerCmd c = parse_cmd(bad[i]);
		ck_assert_msg(c.word == E4_TRIGGER_INVALID, "'%s' accepted", bad[i]);
		ck_assert_msg(c.why[0] != '\0', "'%s' refused without a reason", bad[i]);
		ck_assert(c.limits.seconds == 0 && c.limits.mibps == 0 && c.limits.min_runs == 0 &&
			  c.limits.hold_mib == 0);
	}
	/* NUL inside a value or key. */
	E4TriggerCmd c;
	ck_assert_int_eq(e4_trigger_parse("1 seconds=1\0", 12, 0, &c), E4_TRIGGER_INVALID);
	ck_assert_int_eq(e4_trigger_parse("1 sec\0nds=1", 12, 0, &c), E4_TRIGGER_INVALID);
	/* Options only start a line: at an offset they are refused. */
	ck_assert_int_eq(parse("seconds=1\n", 2), E4_TRIGGER_INVALID);
}
END_TEST

START_TEST(trigger_reasons)
{
	ck_assert_str_eq(parse_cmd("1 seconds=1 seconds=1").why, "seconds given twice");
	ck_assert_ptr_nonnull(strstr(parse_cmd("1 bogus=1").why, "unknown option"));
	ck_assert_ptr_nonnull(strstr(parse_cmd("1 mibps=0").why, "mibps"));
	ck_assert_ptr_nonnull(strstr(parse_cmd("1 min_runs=x").why, "min_runs"));
	ck_assert_ptr_nonnull(strstr(parse_cmd("cancel seconds=1").why, "cancel"));
}
END_TEST

/* The mount options' path: one key and value at a time. */
START_TEST(job_limit_set)
{
	E4JobLimits l = {0};
	char why[96];
	ck_assert_int_eq(e4_job_limit_set(&l, "seconds", 7, "1.5", 3, why, sizeof(why)), 0);
	ck_assert_int_eq(e4_job_limit_set(&l, "mibps", 5, "20", 2, why, sizeof(why)), 0);
	ck_assert_int_eq(e4_job_limit_set(&l, "min_runs", 8, "16", 2, why, sizeof(why)), 0);
	ck_assert_double_eq(l.seconds, 1.5);
	ck_assert_double_eq(l.mibps, 20);
	ck_assert_uint_eq(l.min_runs, 16);
	ck_assert_int_eq(e4_job_limit_set(&l, "seconds", 7, "0", 1, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(e4_job_limit_set(&l, "threads", 7, "4", 1, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(e4_job_limit_set(&l, "mibps", 5, "", 0, why, sizeof(why)), -EINVAL);
	ck_assert_double_eq(l.seconds, 1.5); /* unchanged by a refusal */
}
END_TEST

START_TEST(job_limits_override)
{
	E4JobLimits mount = { .seconds = 600, .mibps = 50, .min_runs = 4 };
	E4JobLimits given = { .mibps = 10 };
	e4_job_limits_override(&mount, &given);
	ck_assert_double_eq(mount.seconds, 600);
	ck_assert_double_eq(mount.mibps, 10);
	ck_assert_uint_eq(mount.min_runs, 4);
	given = (E4JobLimits){ .seconds = 2, .min_runs = 1 };
	e4_job_limits_override(&mount, &given);
	ck_assert_double_eq(mount.seconds, 2);
	ck_assert_uint_eq(mount.min_runs, 1);
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
	tcase_add_test(tc, trigger_options);
	tcase_add_test(tc, trigger_bad_options);
	tcase_add_test(tc, trigger_reasons);
	tcase_add_test(tc, job_limit_set);
	tcase_add_test(tc, job_limits_override);
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
