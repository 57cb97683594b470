/* Unit tests of core/page.c: index.html's links (names as the mirror
 * shows them, percent-encoded), escaping, the fixed size, and what is
 * left out of a page that would not fit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "page.h"

static const char *const reserved[] = { "score", "map.png", "index.html", NULL };

START_TEST(page_url)
{
	static const struct { const char *path, *url; } cases[] = {
		{ "a/b", "a/b" },
		{ "sp ace/x&y", "sp%20ace/x%26y" },
		{ "d/map.png", "d/%40map.png" },
		{ "@x/score", "%40%40x/%40score" },
		{ "caf\xc3\xa9", "caf%C3%A9" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GString) s = g_string_new(NULL);
		e4_page_url(s, cases[i].path, reserved);
		ck_assert_str_eq(s->str, cases[i].url);
	}
}
END_TEST

static void check_size(const char *page)
{
	ck_assert_uint_eq(strlen(page), E4_PAGE_SIZE);
	const char *end = strstr(page, "</html>\n<!--");
	ck_assert_ptr_nonnull(end);
	for (const char *p = strstr(end, "-->") + 4; *p; p++)
		ck_assert(*p == ' ' || *p == '\n');
}

START_TEST(page_content)
{
	E4Summary sum = { .files = 3, .analysed = 3, .blocks = 300, .records = 30, .runs = 30, .best = 3, .ideal = 3 };
	E4Top top;
	e4_top_init(&top, 10);
	E4FileFigures fig = { .size = 4096 * 100, .blocks = 100, .records = 10, .runs = 10, .e4_phys_runs = 10,
			      .best = 1, .ideal = 1 };
	e4_top_offer(&top, "d/<evil>&\"name", &fig);
	E4PageSubdir subs[] = { { "low", { .files = 1 } }, { "high", sum }, { "map.png", { 0 } } };
	E4Page p = { .title = "t<i>tle", .sum = &sum, .stats = "files: 3\nscore: 99\n",
		     .svg = "<?xml?>\n<svg id=\"m\"></svg>\n<!-- pad -->  ", .top = &top, .subdirs = subs,
		     .nsubdirs = 3, .defrag = "state: idle\n", .reserved = reserved, .block_size = 4096 };
	g_autofree char *page = e4_page_render(&p);
	check_size(page);
	char want[64];
	g_snprintf(want, sizeof(want), "id=\"score\">%d<", e4_summary_score(&sum));
	ck_assert_ptr_nonnull(strstr(page, want));
	ck_assert_ptr_nonnull(strstr(page, "<title>t&lt;i&gt;tle - e4infofs</title>"));
	ck_assert_ptr_nonnull(strstr(page, "<svg id=\"m\"></svg>"));
	ck_assert_ptr_null(strstr(page, "<?xml"));
	ck_assert_ptr_null(strstr(page, "<!-- pad"));
	ck_assert_ptr_nonnull(strstr(page, "href=\"d/%3Cevil%3E%26%22name/map.svg\">d/&lt;evil&gt;&amp;&quot;name</a>"));
	ck_assert_ptr_nonnull(strstr(page, "<td>score</td><td>99</td>"));
	ck_assert_ptr_nonnull(strstr(page, "state: idle"));
	/* Subdirectories by score, highest first; a reserved name escaped. */
	const char *high = strstr(page, "href=\"high/index.html\"");
	const char *low = strstr(page, "href=\"low/index.html\"");
	ck_assert_ptr_nonnull(high);
	ck_assert_ptr_nonnull(low);
	ck_assert_ptr_nonnull(strstr(page, "href=\"%40map.png/index.html\""));
	if (e4_summary_score(&sum) > 0)
		ck_assert(high < low);
	e4_top_clear(&top);
}
END_TEST

/* 5000 subdirectories of long names do not fit: fewer are listed, the
 * page says how many are not, and it keeps its size. */
START_TEST(page_too_long)
{
	E4Summary sum = {0};
	enum { N = 5000 };
	E4PageSubdir *subs = g_new0(E4PageSubdir, N);
	for (int i = 0; i < N; i++) {
		subs[i].name = g_strdup_printf("%0200d", i);
		subs[i].sum.files = (uint64_t)i;
	}
	E4Page p = { .title = "/", .sum = &sum, .stats = "", .svg = NULL, .top = NULL, .subdirs = subs,
		     .nsubdirs = N, .defrag = "", .reserved = reserved, .block_size = 4096 };
	g_autofree char *page = e4_page_render(&p);
	check_size(page);
	ck_assert_ptr_nonnull(strstr(page, "more, with lower scores, not shown"));
	size_t rows = 0;
	for (const char *q = page; (q = strstr(q, "/index.html\"")); q++)
		rows++;
	ck_assert_uint_gt(rows, 100);
	ck_assert_uint_lt(rows, E4_PAGE_MAX_SUBDIRS);
	for (int i = 0; i < N; i++)
		g_free(subs[i].name);
	g_free(subs);
}
END_TEST

static Suite *page_suite(void)
{
	Suite *s = suite_create("page");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, page_url);
	tcase_add_test(tc, page_content);
	tcase_add_test(tc, page_too_long);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(page_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
