/* Unit tests of core/resume.c: a saved state reads back the same, the
 * save leaves no temporary file, and every kind of damage is refused. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "resume.h"

#include "tmpdir.h"

static void setup(void)
{
	tmpdir_make("e4resume-XXXXXX");
}


static int entries(void)
{
	DIR *d = opendir(base);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	closedir(d);
	return n;
}

START_TEST(round_trip)
{
	E4Resume *r = e4_resume_new();
	e4_resume_add(r, 12, 4096, 1700000000123456789LL);
	e4_resume_add(r, 13, 0, -5);
	e4_resume_add(r, 12, 4096, 1700000000123456789LL); /* once */
	ck_assert_uint_eq(e4_resume_count(r), 2);
	ck_assert_int_eq(e4_resume_save(r, dirfd_, "s"), 0);
	ck_assert_int_eq(e4_resume_save(r, dirfd_, "s"), 0); /* over the old one */
	ck_assert_int_eq(entries(), 1);
	E4Resume *back;
	ck_assert_int_eq(e4_resume_load(dirfd_, "s", &back), 0);
	ck_assert_uint_eq(e4_resume_count(back), 2);
	ck_assert(e4_resume_has(back, 12, 4096, 1700000000123456789LL));
	ck_assert(e4_resume_has(back, 13, 0, -5));
	ck_assert(!e4_resume_has(back, 12, 4097, 1700000000123456789LL)); /* written since */
	ck_assert(!e4_resume_has(back, 12, 4096, 1700000000123456790LL));
	e4_resume_free(back);
	e4_resume_free(r);
	ck_assert_int_eq(e4_resume_load(dirfd_, "none", &back), -ENOENT);
	ck_assert_ptr_null(back);
}
END_TEST

static char *saved_text(size_t *len)
{
	E4Resume *r = e4_resume_new();
	e4_resume_add(r, 7, 8192, 99);
	ck_assert_int_eq(e4_resume_save(r, dirfd_, "t"), 0);
	e4_resume_free(r);
	g_autofree char *p = g_strdup_printf("%s/t", base);
	char *text;
	ck_assert(g_file_get_contents(p, &text, len, NULL));
	return text;
}

static int parse(const char *text)
{
	E4Resume *r = NULL;
	int rc = e4_resume_parse(text, strlen(text), &r);
	if (rc == 0)
		e4_resume_free(r);
	else
		ck_assert_ptr_null(r);
	return rc;
}

START_TEST(damage_refused)
{
	size_t len;
	g_autofree char *good = saved_text(&len);
	ck_assert_int_eq(parse(good), 0);
	/* Every single byte changed, and every truncation, is refused. */
	for (size_t i = 0; i < len; i++) {
		g_autofree char *bad = g_strdup(good);
		bad[i] = bad[i] == 'x' ? 'y' : 'x';
		ck_assert_msg(parse(bad) == -EBADMSG, "byte %zu changed", i);
		g_autofree char *cut = g_strndup(good, i);
		ck_assert_msg(parse(cut) == -EBADMSG, "cut at %zu", i);
	}
	ck_assert_int_eq(parse(""), -EBADMSG);
	/* A valid checksum over a body whose count is wrong, or a line that is not three numbers. */
	const char *bodies[] = { "e4infofs-resume 1\ncount 2\n7 8192 99\n", "e4infofs-resume 1\ncount 1\n7 8192\n",
				 "e4infofs-resume 1\ncount 1\n7 8192 99 1\n", "e4infofs-resume 2\ncount 0\n" };
	for (size_t i = 0; i < G_N_ELEMENTS(bodies); i++) {
		g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, bodies[i], -1);
		g_autofree char *text = g_strdup_printf("%ssha256 %s\n", bodies[i], sum);
		ck_assert_msg(parse(text) == -EBADMSG, "body %zu", i);
	}
}
END_TEST

static Suite *resume_suite(void)
{
	Suite *s = suite_create("resume");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, tmpdir_remove);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, damage_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(resume_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
