/* Unit tests of core/render.c (the attribute files' text) and of the pure
 * flag naming of core/fiemap.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <linux/fiemap.h>

#include "render.h"

#define BS 4096u
#define WHEN ((time_t)1700000000) /* 2023-11-14T22:13:20Z */

static E4FileFigures fig(uint64_t size, uint64_t blocks, uint32_t records, uint32_t runs,
			 uint32_t phys_runs, uint32_t best)
{
	return (E4FileFigures){ .size = size, .blocks = blocks, .records = records,
				.runs = runs, .e4_phys_runs = phys_runs, .best = best,
				.ideal = 1 };
}

/* 2 analysed files (one fragmented) and 3 skipped:
 * records 6, best 2, blocks 100 -> ratio 4.00, score 32; in one directory,
 * the second file not where the first ends: 3 + 1 jumps */
static void summary(E4Summary *s)
{
	memset(s, 0, sizeof(*s));
	E4FileFigures a = fig(60 * BS, 60, 5, 4, 4, 1);
	a.holes = 1;
	a.unwritten_blocks = 3;
	a.first_block = 1000;
	a.end_block = 2000;
	E4FileFigures b = fig(40 * BS - 10, 40, 1, 1, 1, 1);
	b.first_block = 5000;
	b.end_block = 5040;
	e4_summary_add(s, &a);
	e4_summary_add(s, &b);
	E4DirLoc loc = {0};
	e4_dirloc_add(&loc, &a);
	e4_dirloc_add(&loc, &b);
	e4_summary_add_dirloc(s, &loc);
	e4_summary_skip(s, E4_SKIP_EMPTY);
	e4_summary_skip(s, E4_SKIP_EMPTY);
	e4_summary_skip(s, E4_SKIP_NO_FIEMAP);
}

/* The lines of text, which must end with a newline. */
static char **lines_of(const char *text)
{
	size_t len = strlen(text);
	ck_assert_msg(len > 0 && text[len - 1] == '\n', "not newline-terminated: %s", text);
	g_autofree char *body = g_strndup(text, len - 1);
	return g_strsplit(body, "\n", -1);
}

/* The value of `key: value` in the text, or NULL. */
static char *value_of(char **lines, const char *key)
{
	g_autofree char *prefix = g_strdup_printf("%s: ", key);
	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, prefix))
			return g_strdup(*l + strlen(prefix));
	return NULL;
}

static void check_value(char **lines, const char *key, const char *want)
{
	g_autofree char *got = value_of(lines, key);
	ck_assert_msg(got != NULL, "no key %s", key);
	ck_assert_str_eq(got, want);
}

/* ---- a strict parser for a flat JSON object of numbers and strings ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Parses a JSON string at p; returns the end or NULL. Decoding is not
 * needed here, only validation. */
static const char *parse_string(const char *p, char **out)
{
	if (*p != '"')
		return NULL;
	const char *start = ++p;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!g_ascii_isxdigit(p[i]))
						return NULL;
				p += 5;
				continue;
			}
			if (!strchr("\"\\/bfnrt", *p) || !*p)
				return NULL;
		}
		p++;
	}
	if (*p != '"')
		return NULL;
	if (out)
		*out = g_strndup(start, (gsize)(p - start));
	return p + 1;
}

static const char *parse_number(const char *p)
{
	const char *s = p;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (g_ascii_isdigit(*p))
		while (g_ascii_isdigit(*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!g_ascii_isdigit(*p))
			return NULL;
		while (g_ascii_isdigit(*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!g_ascii_isdigit(*p))
			return NULL;
		while (g_ascii_isdigit(*p))
			p++;
	}
	return p > s ? p : NULL;
}

/* Keys (in order) and raw values of a flat JSON object; NULL when json
 * is not exactly one such object (optionally followed by whitespace). */
static GPtrArray *parse_object(const char *json, GPtrArray **values)
{
	GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
	*values = g_ptr_array_new_with_free_func(g_free);
	const char *p = skip_ws(json);
	if (*p++ != '{')
		goto bad;
	p = skip_ws(p);
	if (*p == '}') {
		p++;
		goto end;
	}
	for (;;) {
		char *key = NULL;
		p = parse_string(skip_ws(p), &key);
		if (!p)
			goto bad;
		g_ptr_array_add(keys, key);
		p = skip_ws(p);
		if (*p++ != ':')
			goto bad;
		p = skip_ws(p);
		const char *v = p;
		p = *p == '"' ? parse_string(p, NULL) : parse_number(p);
		if (!p)
			goto bad;
		g_ptr_array_add(*values, g_strndup(v, (gsize)(p - v)));
		p = skip_ws(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != '}')
			goto bad;
		break;
	}
end:
	if (*skip_ws(p) != '\0')
		goto bad;
	return keys;
bad:
	g_ptr_array_free(keys, TRUE);
	g_ptr_array_free(*values, TRUE);
	*values = NULL;
	return NULL;
}

/* ---- score and stats ---- */

START_TEST(render_score)
{
	E4Summary s;
	summary(&s);
	g_autofree char *a = e4_render_score(&s);
	ck_assert_str_eq(a, "32\n");
	E4Summary empty = {0};
	g_autofree char *b = e4_render_score(&empty);
	ck_assert_str_eq(b, "0\n");
	/* records 101, best 1, blocks 100: ratio 100 -> 100 */
	E4Summary worst = {0};
	E4FileFigures f = fig(100 * BS, 100, 101, 100, 100, 1);
	e4_summary_add(&worst, &f);
	g_autofree char *c = e4_render_score(&worst);
	ck_assert_str_eq(c, "100\n");
}
END_TEST

START_TEST(render_stats_values)
{
	E4Summary s;
	summary(&s);
	g_autofree char *text = e4_render_stats(&s, BS, 1.5, WHEN);
	g_auto(GStrv) lines = lines_of(text);
	check_value(lines, "files", "5");
	check_value(lines, "analysed_files", "2");
	check_value(lines, "fragmented_files", "1");
	check_value(lines, "fragmented_percent", "50.0");
	check_value(lines, "bytes", "409590");
	check_value(lines, "block_size", "4096");
	check_value(lines, "blocks", "100");
	check_value(lines, "runs", "5");
	check_value(lines, "fiemap_records", "6");
	check_value(lines, "best", "2");
	check_value(lines, "ideal", "2");
	check_value(lines, "holes", "1");
	check_value(lines, "unwritten_blocks", "3");
	check_value(lines, "ratio", "4.00");
	check_value(lines, "score", "32");
	check_value(lines, "verdict", "a little bit fragmented");
	/* 1 - (3 + 0) / (59 + 39) */
	check_value(lines, "layout_score", "0.9694");
	/* 1 - 4 / 100 */
	check_value(lines, "dir_locality", "0.9600");
	/* 100 * 4 KiB / 5 runs */
	check_value(lines, "mean_run_kib", "80.0");
	check_value(lines, "skipped_files", "3");
	check_value(lines, "skipped_empty", "2");
	check_value(lines, "skipped_no_extents", "0");
	check_value(lines, "skipped_unreadable", "0");
	check_value(lines, "skipped_no_fiemap", "1");
	check_value(lines, "scanned_at", "2023-11-14T22:13:20Z");
	check_value(lines, "scan_seconds", "1.500");
}
END_TEST

START_TEST(render_stats_format)
{
	E4Summary s;
	summary(&s);
	g_autofree char *text = e4_render_stats(&s, BS, 0.25, WHEN);
	g_auto(GStrv) lines = lines_of(text);
	ck_assert_uint_ge(g_strv_length(lines), 20);
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	for (char **l = lines; *l; l++) {
		ck_assert_msg(g_regex_match_simple("^[a-z_]+: [^ ].*$", *l, 0, 0),
			      "not a `key: value` line: '%s'", *l);
		char *colon = strchr(*l, ':');
		*colon = '\0';
		ck_assert_msg(!g_hash_table_contains(seen, *l), "key %s twice", *l);
		g_hash_table_add(seen, *l);
	}
	g_hash_table_destroy(seen);
	/* the first key */
	ck_assert(g_str_has_prefix(text, "files: 5\n"));
	/* the documented keys, in this order (others may be added between) */
	static const char *const order[] = {
		"files", "analysed_files", "fragmented_files", "fragmented_percent", "bytes",
		"block_size", "blocks", "runs", "fiemap_records", "best", "ideal", "holes",
		"unwritten_blocks", "ratio", "score", "verdict", "layout_score", "dir_locality",
		"mean_run_kib",
		"skipped_files", "skipped_empty", "skipped_no_extents", "skipped_unreadable",
		"skipped_no_fiemap", "scanned_at", "scan_seconds",
	};
	size_t next = 0;
	for (char **l = lines; *l && next < G_N_ELEMENTS(order); l++)
		if (strcmp(*l, order[next]) == 0) /* the keys were cut at ':' above */
			next++;
	ck_assert_msg(next == G_N_ELEMENTS(order), "key %s missing or out of order",
		      next < G_N_ELEMENTS(order) ? order[next] : "");
}
END_TEST

START_TEST(render_stats_verdict_bands)
{
	/* ratio 2 -> score 16 -> no problem */
	E4Summary s = {0};
	E4FileFigures f = fig(100 * BS, 100, 3, 3, 3, 1);
	e4_summary_add(&s, &f);
	g_autofree char *text = e4_render_stats(&s, BS, 0, WHEN);
	g_auto(GStrv) lines = lines_of(text);
	check_value(lines, "score", "16");
	check_value(lines, "verdict", "no problem");
	check_value(lines, "ratio", "2.00");
	/* ratio 50 -> 90 -> needs defrag */
	E4Summary t = {0};
	E4FileFigures g = fig(10 * BS, 10, 6, 6, 6, 1);
	e4_summary_add(&t, &g);
	g_autofree char *text2 = e4_render_stats(&t, BS, 0, WHEN);
	g_auto(GStrv) lines2 = lines_of(text2);
	check_value(lines2, "score", "90");
	check_value(lines2, "verdict", "needs defrag");
	/* nothing analysed */
	E4Summary e = {0};
	g_autofree char *text3 = e4_render_stats(&e, BS, 0, WHEN);
	g_auto(GStrv) lines3 = lines_of(text3);
	check_value(lines3, "files", "0");
	check_value(lines3, "fragmented_percent", "0.0");
	check_value(lines3, "layout_score", "1.0000");
	check_value(lines3, "dir_locality", "1.0000");
	check_value(lines3, "mean_run_kib", "0.0");
	check_value(lines3, "verdict", "no problem");
}
END_TEST

START_TEST(render_stats_json_matches_text)
{
	E4Summary s;
	summary(&s);
	g_autofree char *text = e4_render_stats(&s, BS, 1.5, WHEN);
	g_autofree char *json = e4_render_stats_json(&s, BS, 1.5, WHEN);
	ck_assert_msg(json[0] == '{', "%s", json);
	ck_assert_msg(g_str_has_suffix(json, "}\n"), "%s", json);
	/* one line */
	ck_assert(strchr(json, '\n') == json + strlen(json) - 1);
	ck_assert(g_utf8_validate(json, -1, NULL));

	GPtrArray *values;
	GPtrArray *keys = parse_object(json, &values);
	ck_assert_msg(keys != NULL, "not a flat JSON object: %s", json);

	g_auto(GStrv) lines = lines_of(text);
	ck_assert_uint_eq(keys->len, g_strv_length(lines));
	for (guint i = 0; i < keys->len; i++) {
		const char *line = lines[i];
		const char *colon = strstr(line, ": ");
		ck_assert_ptr_nonnull(colon);
		g_autofree char *key = g_strndup(line, (gsize)(colon - line));
		ck_assert_str_eq(keys->pdata[i], key);
		/* same value: numbers verbatim, strings quoted */
		const char *tv = colon + 2;
		const char *jv = values->pdata[i];
		if (jv[0] == '"') {
			g_autofree char *quoted = g_strdup_printf("\"%s\"", tv);
			ck_assert_str_eq(jv, quoted);
		} else {
			ck_assert_str_eq(jv, tv);
		}
	}
	g_ptr_array_free(keys, TRUE);
	g_ptr_array_free(values, TRUE);
	ck_assert_ptr_nonnull(strstr(json, "\"score\": 32"));
	ck_assert_ptr_nonnull(strstr(json, "\"dir_locality\": 0.9600"));
	ck_assert_ptr_nonnull(strstr(json, "\"verdict\": \"a little bit fragmented\""));
	ck_assert(g_str_has_prefix(json, "{\"files\": 5, "));
}
END_TEST

START_TEST(json_parser_self_check)
{
	GPtrArray *v;
	ck_assert_ptr_null(parse_object("{\"a\": 1,}", &v));
	ck_assert_ptr_null(parse_object("{\"a\": 01}", &v));
	ck_assert_ptr_null(parse_object("{\"a\": \"x\\q\"}", &v));
	ck_assert_ptr_null(parse_object("{\"a\": 1} x", &v));
	GPtrArray *k = parse_object("{\"a\": 1.5, \"b\": \"x\"}\n", &v);
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(k->len, 2);
	ck_assert_str_eq(k->pdata[1], "b");
	ck_assert_str_eq(v->pdata[0], "1.5");
	g_ptr_array_free(k, TRUE);
	g_ptr_array_free(v, TRUE);
}
END_TEST

/* ---- report ---- */

START_TEST(render_report)
{
	E4Top top;
	e4_top_init(&top, 5);
	/* rank (5 - 1) * 100 / 100 = 4; mean run 100 * 4 KiB / 4 runs */
	E4FileFigures a = fig(100 * BS, 100, 5, 4, 5, 1);
	/* rank (3 - 1) * 100 / 8 = 25; mean run 8 * 4 KiB / 3 */
	E4FileFigures b = fig(8 * BS - 1, 8, 3, 3, 3, 1);
	e4_top_offer(&top, "dir/a\nb", &a);
	e4_top_offer(&top, "b \xff", &b);
	ck_assert_uint_eq(top.n, 2);
	g_autofree char *text = e4_render_report(&top, BS);
	ck_assert_str_eq(text,
			 "# rank runs/best size_bytes mean_run_kib e4defrag_ratio path\n"
			 "1 3/1 32767 10.7 25.00 b \\xff\n"
			 "2 4/1 409600 100.0 4.00 dir/a\\nb\n");
	e4_top_clear(&top);

	E4Top empty;
	e4_top_init(&empty, 3);
	g_autofree char *none = e4_render_report(&empty, BS);
	ck_assert_str_eq(none, "# rank runs/best size_bytes mean_run_kib e4defrag_ratio path\n");
	e4_top_clear(&empty);
}
END_TEST

/* ---- file extents ---- */

START_TEST(render_file_extents)
{
	E4Extent e[] = {
		{ .logical = 0, .physical = 100 * BS, .length = 2 * BS, .flags = 0 },
		{ .logical = 2 * BS, .physical = 300 * BS, .length = 1 * BS,
		  .flags = FIEMAP_EXTENT_UNWRITTEN },
		{ .logical = 8 * BS, .physical = 306 * BS, .length = 3 * BS,
		  .flags = FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN },
	};
	E4ExtentMap map = { .ext = e, .n = 3, .cap = 3 };
	E4Geometry g = { .block_size = BS, .blocks_per_group = 32768 };
	E4FileFigures f;
	e4_figures_compute(&map, 11 * BS, &g, &f);
	g_autofree char *text = e4_render_file_extents(&map, &f, BS);
	ck_assert_str_eq(text,
			 "# ext logical physical length flags (unit: 4096-byte blocks)\n"
			 "0 0 100 2 -\n"
			 "1 2 300 1 unwritten\n"
			 "2 8 306 3 last,unwritten\n"
			 "runs: 2\n");
}
END_TEST

START_TEST(render_file_extents_empty)
{
	E4ExtentMap map = {0};
	E4FileFigures f = {0};
	g_autofree char *text = e4_render_file_extents(&map, &f, 1024);
	ck_assert_str_eq(text, "# ext logical physical length flags (unit: 1024-byte blocks)\n"
			       "runs: 0\n");
}
END_TEST

/* ---- directory extents ---- */

START_TEST(render_dir_extents)
{
	E4FileFigures a = fig(12345, 4, 2, 2, 2, 1);
	E4FileFigures skipped = { .size = 0 };
	GString *out = e4_render_dir_extents_begin();
	e4_render_dir_extents_add(out, &(E4TreeFile){ .name = "a\tb", .skip = -1, .fig = &a });
	e4_render_dir_extents_add(out, &(E4TreeFile){ .name = "empty", .skip = E4_SKIP_EMPTY,
						      .fig = &skipped });
	g_autofree char *text = g_string_free(out, FALSE);
	ck_assert_str_eq(text, "# size_bytes runs best name\n"
			       "12345 2 1 a\\tb\n"
			       "0 - - empty\n");
}
END_TEST

/* ---- e4_fiemap_flag_names ---- */

static void check_flags(uint32_t flags, const char *want)
{
	char buf[128];
	memset(buf, 'X', sizeof(buf));
	e4_fiemap_flag_names(flags, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
}

/* A job stopped by its deadline says what it left; other results do not. */
START_TEST(render_defrag_stopped)
{
	E4DefragSummary s = { .files_total = 6, .files_done = 4, .bytes_total = 400, .bytes_done = 150,
			      .bytes_moved = 150 };
	g_autofree char *stopped = e4_render_defrag_status("stopped", &s, NULL, false);
	ck_assert(g_str_has_prefix(stopped, "state: stopped\n"));
	ck_assert(g_str_has_suffix(stopped, "files_done: 4\nfiles_total: 6\nbytes_left: 250\n"));
	g_autofree char *done = e4_render_defrag_status("done", &s, NULL, false);
	ck_assert_ptr_null(strstr(done, "bytes_left"));
	s.bytes_done = 500; /* never negative */
	g_autofree char *over = e4_render_defrag_status("stopped", &s, NULL, false);
	ck_assert_ptr_nonnull(strstr(over, "bytes_left: 0\n"));
}
END_TEST

START_TEST(flag_names)
{
	check_flags(0, "-");
	check_flags(FIEMAP_EXTENT_LAST, "last");
	check_flags(FIEMAP_EXTENT_UNWRITTEN, "unwritten");
	check_flags(FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN, "last,unwritten");
	check_flags(0x40000000, "0x40000000");
	check_flags(FIEMAP_EXTENT_LAST | 0x40000000, "last,0x40000000");
	check_flags(FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
		    FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED |
		    FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE |
		    FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_UNWRITTEN |
		    FIEMAP_EXTENT_MERGED | FIEMAP_EXTENT_SHARED,
		    "last,unknown,delalloc,encoded,encrypted,not_aligned,inline,tail,"
		    "unwritten,merged,shared");
	check_flags(FIEMAP_EXTENT_SHARED | 0x80000000 | 0x40000000, "shared,0xc0000000");
}
END_TEST

START_TEST(flag_names_truncated)
{
	const uint32_t cases[] = { 0, FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN, 0x40000000,
				   FIEMAP_EXTENT_LAST | 0x40000000,
				   FIEMAP_EXTENT_SHARED | FIEMAP_EXTENT_MERGED };
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		char full[128];
		e4_fiemap_flag_names(cases[c], full, sizeof(full));
		for (size_t len = 1; len <= strlen(full) + 1; len++) {
			char buf[160];
			memset(buf, 'X', sizeof(buf));
			e4_fiemap_flag_names(cases[c], buf, len);
			size_t got = strnlen(buf, len);
			ck_assert_msg(got < len, "flags 0x%x, len %zu: not NUL-terminated",
				      cases[c], len);
			ck_assert_msg(strncmp(buf, full, got) == 0,
				      "flags 0x%x, len %zu: '%s' is no prefix of '%s'",
				      cases[c], len, buf, full);
			/* nothing written past len */
			for (size_t i = len; i < sizeof(buf); i++)
				ck_assert_int_eq(buf[i], 'X');
		}
	}
	/* len 0 writes nothing */
	char one = 'X';
	e4_fiemap_flag_names(FIEMAP_EXTENT_LAST, &one, 0);
	ck_assert_int_eq(one, 'X');
	/* a tiny buffer */
	char tiny[4];
	e4_fiemap_flag_names(FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN, tiny, sizeof(tiny));
	ck_assert_str_eq(tiny, "las");
}
END_TEST

START_TEST(render_freespace_unavailable)
{
	g_autofree char *t = e4_render_freespace_unavailable(EPERM, 4096, 1234);
	ck_assert_str_eq(t, "available: no\nreason: the kernel refused FS_IOC_GETFSMAP to this daemon "
			    "(EPERM): run it as root for the free-space map\nblock_size: 4096\n"
			    "total_free_blocks: 1234\n");
	ck_assert_ptr_null(strstr(t, "not permitted"));
}
END_TEST

static Suite *render_suite(void)
{
	Suite *s = suite_create("render");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, render_score);
	tcase_add_test(tc, render_stats_values);
	tcase_add_test(tc, render_stats_format);
	tcase_add_test(tc, render_stats_verdict_bands);
	tcase_add_test(tc, render_stats_json_matches_text);
	tcase_add_test(tc, json_parser_self_check);
	tcase_add_test(tc, render_report);
	tcase_add_test(tc, render_file_extents);
	tcase_add_test(tc, render_file_extents_empty);
	tcase_add_test(tc, render_dir_extents);
	tcase_add_test(tc, render_defrag_stopped);
	tcase_add_test(tc, flag_names);
	tcase_add_test(tc, flag_names_truncated);
	tcase_add_test(tc, render_freespace_unavailable);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(render_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
