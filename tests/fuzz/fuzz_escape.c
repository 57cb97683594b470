/* libFuzzer: name escaping is a bijection, and text/JSON escapes of any
 * bytes are single-line, valid UTF-8. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "escape.h"

static const char *const reserved[] = { "score", "extents", "stats", "stats.json", "report",
					"metrics", "defrag", "freespace", "plan", "map.svg", "map.png",
					"index.html", "map-before.svg", "map-before.png", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A file name: no NUL, no '/', not empty. */
	char *name = g_strndup((const char *)data, size);
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '_';
	if (!*name) {
		g_free(name);
		return 0;
	}
	char *shown = e4_name_escape(name, reserved);
	char *back = e4_name_unescape(shown, reserved);
	if (!back || strcmp(back, name) != 0)
		abort();
	/* A shown name that unescapes must escape back to itself. */
	char *real = e4_name_unescape(name, reserved);
	if (real) {
		char *again = e4_name_escape(real, reserved);
		if (strcmp(again, name) != 0)
			abort();
		g_free(again);
	}
	GString *text = g_string_new(NULL), *json = g_string_new(NULL);
	e4_escape_text(text, name);
	e4_escape_json(json, name);
	if (strchr(text->str, '\n') || !g_utf8_validate(text->str, -1, NULL))
		abort();
	for (const char *p = json->str; *p; p++)
		if ((unsigned char)*p < 0x20)
			abort();
	if (!g_utf8_validate(json->str, -1, NULL))
		abort();
	g_string_free(text, TRUE);
	g_string_free(json, TRUE);
	g_free(real);
	g_free(back);
	g_free(shown);
	g_free(name);
	return 0;
}
