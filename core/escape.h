/* Names of any bytes: escaping for the mirror's namespace, for one-line
 * text output and for JSON strings. */
#pragma once

#include <stdbool.h>
#include <glib.h>

/* The prefix that marks an escaped real name in a mirrored directory. */
#define E4_ESCAPE_PREFIX '@'

/* True when a real entry called `name` must be shown escaped beside the
 * attribute files in `reserved` (a NULL-terminated list): its name equals
 * one of them, or it starts with the escape prefix. */
bool e4_name_needs_escape(const char *name, const char *const *reserved);

/* The name a real entry is shown under: "@" + name when it needs escaping,
 * else name itself. Newly allocated. */
char *e4_name_escape(const char *name, const char *const *reserved);

/* The real name behind a shown name, or NULL when `shown` cannot be the
 * shown name of any real entry: a reserved name itself, or "@foo" where
 * "foo" needs no escape. Newly allocated. */
char *e4_name_unescape(const char *shown, const char *const *reserved);

/* Appends name to out as one line-safe token: valid UTF-8 is kept, '\\'
 * becomes "\\\\", newline "\\n", tab "\\t", other control bytes and bytes
 * that are not valid UTF-8 become "\\xHH". */
void e4_escape_text(GString *out, const char *name);

/* Appends name as the inside of a JSON string (no quotes): '"' and '\\'
 * backslash-escaped, control characters as \u00XX, and each byte that is
 * not valid UTF-8 as the five characters \\xHH (decoding gives "\xHH", the
 * same token e4_escape_text writes). The result is always valid JSON. */
void e4_escape_json(GString *out, const char *name);
