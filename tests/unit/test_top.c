/* Unit tests of core/top.c: the N most fragmented files, ranked as
 * e4defrag -c ranks them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "top.h"

/* Figures of rank (phys_runs - 1) * 100 / 100 = phys_runs - 1. */
static E4FileFigures ranked(uint32_t phys_runs)
{
	return (E4FileFigures){ .size = 100 * 4096, .blocks = 100, .records = phys_runs,
				.runs = phys_runs, .e4_phys_runs = phys_runs, .best = 1,
				.ideal = 1 };
}

static void offer(E4Top *top, const char *path, uint32_t phys_runs)
{
	E4FileFigures f = ranked(phys_runs);
	e4_top_offer(top, path, &f);
}

/* The paths of the list joined by spaces. */
static char *paths(const E4Top *top)
{
	GString *s = g_string_new(NULL);
	for (size_t i = 0; i < top->n; i++)
		g_string_append_printf(s, "%s%s", i ? " " : "", top->v[i].path);
	return g_string_free(s, FALSE);
}

static void check_paths(const E4Top *top, const char *want)
{
	g_autofree char *got = paths(top);
	ck_assert_str_eq(got, want);
	for (size_t i = 1; i < top->n; i++)
		ck_assert(top->v[i - 1].rank >= top->v[i].rank);
	ck_assert_uint_le(top->n, top->cap);
}

START_TEST(top_orders_by_rank)
{
	E4Top top;
	e4_top_init(&top, 10);
	ck_assert_uint_eq(top.n, 0);
	ck_assert_uint_eq(top.cap, 10);
	offer(&top, "b", 3);
	offer(&top, "a", 6);
	offer(&top, "d", 2);
	offer(&top, "c", 4);
	check_paths(&top, "a c b d");
	ck_assert_double_eq(top.v[0].rank, 5.0);
	ck_assert_double_eq(top.v[3].rank, 1.0);
	/* the figures are copied in */
	ck_assert_uint_eq(top.v[0].fig.e4_phys_runs, 6);
	ck_assert_uint_eq(top.v[1].fig.e4_phys_runs, 4);
	e4_top_clear(&top);
	ck_assert_uint_eq(top.n, 0);
	ck_assert_ptr_null(top.v);
}
END_TEST

START_TEST(top_keeps_cap)
{
	E4Top top;
	e4_top_init(&top, 3);
	offer(&top, "r2", 3);
	offer(&top, "r5", 6);
	offer(&top, "r1", 2);
	check_paths(&top, "r5 r2 r1");
	offer(&top, "r3", 4);          /* drops r1 */
	check_paths(&top, "r5 r3 r2");
	offer(&top, "r0.5", 2);        /* below the last: ignored */
	check_paths(&top, "r5 r3 r2");
	offer(&top, "r9", 10);         /* drops r2 */
	check_paths(&top, "r9 r5 r3");
	ck_assert_uint_eq(top.n, 3);
	e4_top_clear(&top);
}
END_TEST

START_TEST(top_ties_later_first)
{
	E4Top top;
	e4_top_init(&top, 10);
	offer(&top, "x1", 3);
	offer(&top, "y", 5);
	offer(&top, "x2", 3);
	offer(&top, "x3", 3);
	offer(&top, "z", 2);
	offer(&top, "y2", 5);
	check_paths(&top, "y2 y x3 x2 x1 z");
	e4_top_clear(&top);

	/* a tie with the last entry of a full list enters, pushing it out */
	e4_top_init(&top, 2);
	offer(&top, "a", 6);
	offer(&top, "b", 3);
	offer(&top, "c", 3);
	check_paths(&top, "a c");
	offer(&top, "d", 6);
	check_paths(&top, "d a");
	e4_top_clear(&top);
}
END_TEST

START_TEST(top_positive_ranks_only)
{
	E4Top top;
	e4_top_init(&top, 5);
	offer(&top, "zero", 1);        /* rank 0: phys runs == best */
	E4FileFigures neg = ranked(1);
	neg.best = 3;                  /* rank -2 */
	e4_top_offer(&top, "negative", &neg);
	E4FileFigures empty = ranked(5);
	empty.blocks = 0;              /* no blocks: rank 0 */
	e4_top_offer(&top, "empty", &empty);
	ck_assert_uint_eq(top.n, 0);
	ck_assert(!e4_top_wants(&top, 0.0));
	ck_assert(!e4_top_wants(&top, -1.0));
	ck_assert(e4_top_wants(&top, 0.001));
	offer(&top, "one", 2);
	check_paths(&top, "one");
	e4_top_clear(&top);
}
END_TEST

START_TEST(top_wants)
{
	E4Top top;
	e4_top_init(&top, 2);
	ck_assert(e4_top_wants(&top, 1.0));
	offer(&top, "a", 5);
	offer(&top, "b", 3);
	ck_assert(e4_top_wants(&top, 2.0));   /* equal to the last: a tie */
	ck_assert(!e4_top_wants(&top, 1.5));
	ck_assert(e4_top_wants(&top, 100.0));
	e4_top_clear(&top);
}
END_TEST

START_TEST(top_cap_zero)
{
	E4Top top;
	e4_top_init(&top, 0);
	ck_assert(!e4_top_wants(&top, 10.0));
	offer(&top, "a", 50);
	ck_assert_uint_eq(top.n, 0);
	e4_top_clear(&top);
}
END_TEST

START_TEST(top_path_copied)
{
	E4Top top;
	e4_top_init(&top, 2);
	char path[] = "some/file";
	offer(&top, path, 4);
	path[0] = 'X';
	ck_assert_str_eq(top.v[0].path, "some/file");
	ck_assert_ptr_ne(top.v[0].path, path);
	e4_top_clear(&top);
}
END_TEST

START_TEST(top_many)
{
	/* against a reference: the cap best ranks, ties in reverse offer order */
	enum { CAP = 7, COUNT = 200 };
	E4Top top;
	e4_top_init(&top, CAP);
	uint32_t runs[COUNT];
	for (int i = 0; i < COUNT; i++) {
		runs[i] = (uint32_t)((i * 37) % 11); /* ranks -1..9, many ties */
		char name[16];
		g_snprintf(name, sizeof(name), "f%d", i);
		offer(&top, name, runs[i]);
	}
	GString *want = g_string_new(NULL);
	size_t kept = 0;
	for (int r = 10; r >= 2 && kept < CAP; r--)
		for (int i = COUNT - 1; i >= 0 && kept < CAP; i--)
			if (runs[i] == (uint32_t)r) {
				g_string_append_printf(want, "%sf%d", kept ? " " : "", i);
				kept++;
			}
	check_paths(&top, want->str);
	g_string_free(want, TRUE);
	e4_top_clear(&top);
}
END_TEST

static Suite *top_suite(void)
{
	Suite *s = suite_create("top");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, top_orders_by_rank);
	tcase_add_test(tc, top_keeps_cap);
	tcase_add_test(tc, top_ties_later_first);
	tcase_add_test(tc, top_positive_ranks_only);
	tcase_add_test(tc, top_wants);
	tcase_add_test(tc, top_cap_zero);
	tcase_add_test(tc, top_path_copied);
	tcase_add_test(tc, top_many);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(top_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
