#include "escape.h"

#include <string.h>

static bool is_reserved(const char *name, const char *const *reserved)
{
	for (; reserved && *reserved; reserved++)
		if (strcmp(name, *reserved) == 0)
			return true;
	return false;
}

bool e4_name_needs_escape(const char *name, const char *const *reserved)
{
	return name[0] == E4_ESCAPE_PREFIX || is_reserved(name, reserved);
}

char *e4_name_escape(const char *name, const char *const *reserved)
{
	if (e4_name_needs_escape(name, reserved))
		return g_strdup_printf("%c%s", E4_ESCAPE_PREFIX, name);
	return g_strdup(name);
}

char *e4_name_unescape(const char *shown, const char *const *reserved)
{
	if (shown[0] != E4_ESCAPE_PREFIX)
		return is_reserved(shown, reserved) ? NULL : g_strdup(shown);
	const char *real = shown + 1;
	/* Only names that e4_name_escape would have escaped map back, so
	 * every real name has exactly one shown name. */
	if (!e4_name_needs_escape(real, reserved))
		return NULL;
	return g_strdup(real);
}

/* Length of the valid UTF-8 sequence at p (at most end - p bytes), or 0. */
static size_t utf8_len(const char *p, const char *end)
{
	const char *stop;
	size_t max = (size_t)(end - p) < 4 ? (size_t)(end - p) : 4;
	for (size_t n = 1; n <= max; n++)
		if (g_utf8_validate(p, (gssize)n, &stop) && stop == p + n)
			return n;
	return 0;
}

typedef void (*ByteFn)(GString *out, unsigned char c);

/* Walks name: ASCII bytes go to ascii(), valid UTF-8 sequences are copied,
 * other bytes go to invalid(). */
static void escape_with(GString *out, const char *name, ByteFn ascii, ByteFn invalid)
{
	const char *p = name, *end = name + strlen(name);
	while (p < end) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x80) {
			ascii(out, c);
			p++;
			continue;
		}
		size_t n = utf8_len(p, end);
		if (n == 0) {
			invalid(out, c);
			p++;
			continue;
		}
		g_string_append_len(out, p, (gssize)n);
		p += n;
	}
}

static void text_ascii(GString *out, unsigned char c)
{
	switch (c) {
	case '\\': g_string_append(out, "\\\\"); return;
	case '\n': g_string_append(out, "\\n"); return;
	case '\t': g_string_append(out, "\\t"); return;
	}
	if (c < 0x20 || c == 0x7f)
		g_string_append_printf(out, "\\x%02x", c);
	else
		g_string_append_c(out, (char)c);
}

static void json_ascii(GString *out, unsigned char c)
{
	switch (c) {
	case '\\': g_string_append(out, "\\\\"); return;
	case '"': g_string_append(out, "\\\""); return;
	case '\n': g_string_append(out, "\\n"); return;
	case '\t': g_string_append(out, "\\t"); return;
	}
	if (c < 0x20 || c == 0x7f)
		g_string_append_printf(out, "\\u%04x", c);
	else
		g_string_append_c(out, (char)c);
}

static void text_invalid_byte(GString *out, unsigned char c)
{
	g_string_append_printf(out, "\\x%02x", c);
}

static void json_invalid_byte(GString *out, unsigned char c)
{
	g_string_append_printf(out, "\\\\x%02x", c);
}

void e4_escape_text(GString *out, const char *name)
{
	escape_with(out, name, text_ascii, text_invalid_byte);
}

void e4_escape_json(GString *out, const char *name)
{
	escape_with(out, name, json_ascii, json_invalid_byte);
}
