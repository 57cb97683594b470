/* Unit tests of fusefs/handles.c: the objects behind open file handles
 * are dropped once, at their release or, for those the kernel never
 * released (a file or directory still open when the session ends), with
 * the set. */
#include <check.h>
#include <stdlib.h>

#include "handles.h"

typedef struct {
	int drops;
} Obj;

static void drop(gpointer p)
{
	((Obj *)p)->drops++;
}

START_TEST(handles_release_drops_once)
{
	Obj a = {0};
	E4Handles *h = e4_handles_new(drop);
	uint64_t fh = e4_handles_open(h, &a);
	ck_assert_uint_ne(fh, 0);
	ck_assert_ptr_eq(e4_handles_get(fh), &a);
	e4_handles_release(h, fh);
	ck_assert_int_eq(a.drops, 1);
	/* A second release of the same handle (never sent by the kernel) and
	 * a release of 0 (a trigger opened for writing) drop nothing. */
	e4_handles_release(h, fh);
	e4_handles_release(h, 0);
	e4_handles_free(h);
	ck_assert_int_eq(a.drops, 1);
}
END_TEST

START_TEST(handles_free_drops_the_unreleased)
{
	Obj a = {0}, b = {0}, c = {0};
	E4Handles *h = e4_handles_new(drop);
	uint64_t fa = e4_handles_open(h, &a);
	e4_handles_open(h, &b);
	e4_handles_open(h, &c);
	e4_handles_release(h, fa);
	e4_handles_free(h);
	ck_assert_int_eq(a.drops, 1);
	ck_assert_int_eq(b.drops, 1);
	ck_assert_int_eq(c.drops, 1);
}
END_TEST

static Suite *handles_suite(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("fusefs");
	tcase_add_test(tc, handles_release_drops_once);
	tcase_add_test(tc, handles_free_drops_the_unreleased);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(handles_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
