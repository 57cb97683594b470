/* Unit tests of core/escape.c: mirror name escaping, line-safe text and
 * JSON strings. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "escape.h"

static const char *const reserved[] = { "score", "extents", "stats", NULL };

static char *text_of(const char *name)
{
	GString *out = g_string_new(NULL);
	e4_escape_text(out, name);
	return g_string_free(out, FALSE);
}

static char *json_of(const char *name)
{
	GString *out = g_string_new(NULL);
	e4_escape_json(out, name);
	return g_string_free(out, FALSE);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes a complete JSON string literal (with its quotes) strictly as
 * RFC 8259 says: valid UTF-8, no raw control character, only the defined
 * escapes, surrogates paired. Returns the decoded bytes or NULL when the
 * text is not one valid JSON string. */
static char *json_decode(const char *lit)
{
	if (!g_utf8_validate(lit, -1, NULL))
		return NULL;
	size_t len = strlen(lit);
	if (len < 2 || lit[0] != '"' || lit[len - 1] != '"')
		return NULL;
	GString *out = g_string_new(NULL);
	const char *p = lit + 1, *end = lit + len - 1;
	while (p < end) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == '"')
			goto bad;
		if (c != '\\') {
			g_string_append_c(out, (char)c);
			p++;
			continue;
		}
		if (p + 1 >= end)
			goto bad;
		char e = p[1];
		p += 2;
		switch (e) {
		case '"': g_string_append_c(out, '"'); continue;
		case '\\': g_string_append_c(out, '\\'); continue;
		case '/': g_string_append_c(out, '/'); continue;
		case 'b': g_string_append_c(out, '\b'); continue;
		case 'f': g_string_append_c(out, '\f'); continue;
		case 'n': g_string_append_c(out, '\n'); continue;
		case 'r': g_string_append_c(out, '\r'); continue;
		case 't': g_string_append_c(out, '\t'); continue;
		case 'u': break;
		default: goto bad;
		}
		if (end - p < 4)
			goto bad;
		gunichar u = 0;
		for (int i = 0; i < 4; i++) {
			int h = hexval(p[i]);
			if (h < 0)
				goto bad;
			u = u << 4 | (gunichar)h;
		}
		p += 4;
		if (u >= 0xdc00 && u <= 0xdfff)
			goto bad;
		if (u >= 0xd800 && u <= 0xdbff) {
			if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
				goto bad;
			gunichar lo = 0;
			for (int i = 2; i < 6; i++) {
				int h = hexval(p[i]);
				if (h < 0)
					goto bad;
				lo = lo << 4 | (gunichar)h;
			}
			if (lo < 0xdc00 || lo > 0xdfff)
				goto bad;
			p += 6;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
		if (u == 0)
			goto bad; /* a NUL cannot be part of a C name */
		g_string_append_unichar(out, u);
	}
	return g_string_free(out, FALSE);
bad:
	g_string_free(out, TRUE);
	return NULL;
}

/* The JSON text of name, checked to be one valid JSON string, decoded. */
static char *json_roundtrip(const char *name)
{
	g_autofree char *inside = json_of(name);
	g_autofree char *lit = g_strdup_printf("\"%s\"", inside);
	ck_assert_msg(g_utf8_validate(lit, -1, NULL), "JSON of name is not UTF-8: %s", lit);
	char *dec = json_decode(lit);
	ck_assert_msg(dec != NULL, "not a valid JSON string: %s", lit);
	return dec;
}

/* ---- mirror names ---- */

START_TEST(name_escape_basic)
{
	struct { const char *real, *shown; } cases[] = {
		{ "score", "@score" },
		{ "extents", "@extents" },
		{ "stats", "@stats" },
		{ "@x", "@@x" },
		{ "@", "@@" },
		{ "@score", "@@score" },
		{ "@@", "@@@" },
		{ "plain", "plain" },
		{ "scores", "scores" },
		{ "Score", "Score" },
		{ "x@", "x@" },
		{ "", "" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *shown = e4_name_escape(cases[i].real, reserved);
		ck_assert_str_eq(shown, cases[i].shown);
		g_autofree char *real = e4_name_unescape(cases[i].shown, reserved);
		ck_assert_ptr_nonnull(real);
		ck_assert_str_eq(real, cases[i].real);
		ck_assert(e4_name_needs_escape(cases[i].real, reserved) ==
			  (strcmp(cases[i].real, cases[i].shown) != 0));
	}
}
END_TEST

START_TEST(name_unescape_invalid)
{
	/* "@" + a name that needs no escaping is nobody's shown name */
	const char *bad[] = { "@plain", "@", "@scores", "@x@", "@Stats" };
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
		ck_assert_msg(e4_name_unescape(bad[i], reserved) == NULL, "%s", bad[i]);
}
END_TEST

START_TEST(name_unescape_reserved)
{
	/* A reserved name is the attribute's: no real entry is shown under
	 * it (the real "score" is shown as "@score"), so it cannot be the
	 * shown form of any real name and must not unescape, or the real
	 * entry would be reachable under two names. */
	for (size_t i = 0; reserved[i]; i++) {
		g_autofree char *real = e4_name_unescape(reserved[i], reserved);
		ck_assert_msg(real == NULL, "e4_name_unescape(\"%s\") = \"%s\", want NULL",
			      reserved[i], real);
	}
}
END_TEST

START_TEST(name_no_reserved_list)
{
	g_autofree char *a = e4_name_escape("score", NULL);
	ck_assert_str_eq(a, "score");
	g_autofree char *b = e4_name_escape("@a", NULL);
	ck_assert_str_eq(b, "@@a");
	ck_assert_ptr_null(e4_name_unescape("@score", NULL));
	g_autofree char *c = e4_name_unescape("@@a", NULL);
	ck_assert_str_eq(c, "@a");
}
END_TEST

START_TEST(name_roundtrip_bytes)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	for (int c = 1; c <= 0xff; c++) {
		char one[2] = { (char)c, 0 };
		g_ptr_array_add(names, g_strdup(one));
		g_ptr_array_add(names, g_strdup_printf("@%c", c));
		g_ptr_array_add(names, g_strdup_printf("@@%c", c));
		g_ptr_array_add(names, g_strdup_printf("%cscore", c));
		g_ptr_array_add(names, g_strdup_printf("score%c", c));
		g_ptr_array_add(names, g_strdup_printf("a%cb%c", c, c));
	}
	for (size_t i = 0; reserved[i]; i++) {
		g_ptr_array_add(names, g_strdup(reserved[i]));
		g_ptr_array_add(names, g_strdup_printf("@%s", reserved[i]));
		g_ptr_array_add(names, g_strdup_printf("@@%s", reserved[i]));
	}
	GHashTable *shown_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (size_t i = 0; i < names->len; i++) {
		const char *name = names->pdata[i];
		char *shown = e4_name_escape(name, reserved);
		g_autofree char *back = e4_name_unescape(shown, reserved);
		ck_assert_msg(back != NULL, "unescape(escape(%s)) is NULL", name);
		ck_assert_str_eq(back, name);
		/* shown names are never attribute names... */
		for (size_t r = 0; reserved[r]; r++)
			ck_assert_str_ne(shown, reserved[r]);
		/* ...and two real names never share one */
		const char *other = g_hash_table_lookup(shown_seen, shown);
		ck_assert_msg(other == NULL || strcmp(other, name) == 0,
			      "%s and %s both shown as %s", other, name, shown);
		if (!other)
			g_hash_table_insert(shown_seen, shown, g_strdup(name));
		else
			g_free(shown);
		/* every shown name that unescapes escapes back to itself
		 * (reserved names themselves: see name_unescape_reserved) */
		g_autofree char *real = e4_name_unescape(name, reserved);
		if (real && !g_strv_contains((const char *const *)reserved, name)) {
			g_autofree char *again = e4_name_escape(real, reserved);
			ck_assert_str_eq(again, name);
		}
	}
	g_hash_table_destroy(shown_seen);
	g_ptr_array_free(names, TRUE);
}
END_TEST

/* ---- e4_escape_text ---- */

static void check_text(const char *name, const char *want)
{
	g_autofree char *got = text_of(name);
	ck_assert_str_eq(got, want);
}

START_TEST(text_escapes)
{
	check_text("", "");
	check_text("plain name.txt", "plain name.txt");
	check_text("a\nb", "a\\nb");
	check_text("a\tb", "a\\tb");
	check_text("a\\b", "a\\\\b");
	check_text("\\n", "\\\\n");
	check_text("\x01", "\\x01");
	check_text("\r", "\\x0d");
	check_text("\x1f", "\\x1f");
	check_text("\x7f", "\\x7f");
	check_text("\xff", "\\xff");
	check_text("a\xff" "b", "a\\xffb");
	check_text("\xc3\xa9", "\xc3\xa9");             /* é kept */
	check_text("caf\xc3\xa9\n", "caf\xc3\xa9\\n");
	check_text("\xe2\x82\xac", "\xe2\x82\xac");     /* € kept */
	check_text("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"); /* 4-byte kept */
	check_text("\xc3", "\\xc3");                    /* truncated sequence */
	check_text("\xc3" "A", "\\xc3A");
	check_text("\xc0\x80", "\\xc0\\x80");           /* overlong NUL */
	check_text("\xed\xa0\x80", "\\xed\\xa0\\x80");  /* surrogate */
	check_text("\x80", "\\x80");                    /* lone continuation */
	check_text("\"q\"", "\"q\"");
}
END_TEST

START_TEST(text_line_safe_all_bytes)
{
	/* whatever the bytes, the output is one line of valid UTF-8 without
	 * control characters */
	for (int c = 1; c <= 0xff; c++) {
		char name[4] = { 'x', (char)c, 'y', 0 };
		g_autofree char *got = text_of(name);
		ck_assert_msg(g_utf8_validate(got, -1, NULL), "byte 0x%02x", c);
		for (const unsigned char *p = (const unsigned char *)got; *p; p++)
			ck_assert_msg(*p >= 0x20 && *p != 0x7f, "byte 0x%02x gives 0x%02x", c, *p);
	}
}
END_TEST

/* ---- e4_escape_json ---- */

static void check_json(const char *name, const char *want)
{
	g_autofree char *got = json_of(name);
	ck_assert_str_eq(got, want);
}

START_TEST(json_escapes)
{
	check_json("", "");
	check_json("plain", "plain");
	check_json("a\"b", "a\\\"b");
	check_json("a\\b", "a\\\\b");
	check_json("a\nb", "a\\nb");
	check_json("a\tb", "a\\tb");
	check_json("\x01", "\\u0001");
	check_json("\x1f", "\\u001f");
	check_json("\x7f", "\\u007f");
	check_json("\xc3\xa9", "\xc3\xa9");
	check_json("/", "/");
}
END_TEST

START_TEST(json_invalid_byte)
{
	/* backslash, backslash, x, f, f: decodes to the text token \xff */
	g_autofree char *got = json_of("\xff");
	ck_assert_str_eq(got, "\\\\xff");
	ck_assert_uint_eq(strlen(got), 5);
	g_autofree char *dec = json_roundtrip("\xff");
	ck_assert_str_eq(dec, "\\xff");
	g_autofree char *mixed = json_of("a\xc3" "b\xc3\xa9");
	ck_assert_str_eq(mixed, "a\\\\xc3b\xc3\xa9");
}
END_TEST

START_TEST(json_valid_all_bytes)
{
	for (int c = 1; c <= 0xff; c++) {
		char name[5] = { '"', (char)c, '\\', (char)c, 0 };
		g_autofree char *dec = json_roundtrip(name);
		/* decoding gives back ASCII and valid UTF-8 as is, and the text
		 * escape for invalid bytes */
		if (c < 0x80) {
			ck_assert_str_eq(dec, name);
		} else {
			g_autofree char *want = g_strdup_printf("\"\\x%02x\\\\x%02x", c, c);
			ck_assert_str_eq(dec, want);
		}
	}
	const char *names[] = {
		"caf\xc3\xa9", "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xc0\x80",
		"tab\there", "nl\nhere", "cr\rhere", "\x01\x02\x03", "\xe2\x80\xa8",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *dec = json_roundtrip(names[i]);
		/* the decoded JSON is the text token when the name is valid UTF-8 */
		if (g_utf8_validate(names[i], -1, NULL))
			ck_assert_str_eq(dec, names[i]);
	}
}
END_TEST

START_TEST(json_decodes_to_text_token)
{
	/* for invalid bytes, JSON decoding gives what e4_escape_text writes */
	const char *names[] = { "\xff", ("a\xfe" "b"), "\xc3", "\xed\xa0\x80", "\x80\x81" };
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *dec = json_roundtrip(names[i]);
		g_autofree char *text = text_of(names[i]);
		ck_assert_str_eq(dec, text);
	}
}
END_TEST

START_TEST(json_decoder_self_check)
{
	/* the checker itself rejects what is not JSON */
	ck_assert_ptr_null(json_decode("\"a\\xff\""));
	ck_assert_ptr_null(json_decode("\"a\nb\""));
	ck_assert_ptr_null(json_decode("\"a\"b\""));
	ck_assert_ptr_null(json_decode("\"\xff\""));
	ck_assert_ptr_null(json_decode("\"\\ud800\""));
	g_autofree char *ok = json_decode("\"a\\u00e9\\\\\"");
	ck_assert_str_eq(ok, "a\xc3\xa9\\");
}
END_TEST

static Suite *escape_suite(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, name_escape_basic);
	tcase_add_test(tc, name_unescape_invalid);
	tcase_add_test(tc, name_unescape_reserved);
	tcase_add_test(tc, name_no_reserved_list);
	tcase_add_test(tc, name_roundtrip_bytes);
	tcase_add_test(tc, text_escapes);
	tcase_add_test(tc, text_line_safe_all_bytes);
	tcase_add_test(tc, json_escapes);
	tcase_add_test(tc, json_invalid_byte);
	tcase_add_test(tc, json_valid_all_bytes);
	tcase_add_test(tc, json_decodes_to_text_token);
	tcase_add_test(tc, json_decoder_self_check);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(escape_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
