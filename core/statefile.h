/* Small state files the daemon keeps between runs (state_dir): written
 * atomically, ending in a checksum line, so that a torn or edited file is
 * recognised as damaged and never trusted. */
#pragma once

#include <stddef.h>
#include <glib.h>

/* Writes body (len bytes, ending in '\n') followed by "sha256 HEX\n" as
 * the file name in dirfd: a temporary file in dirfd, written and
 * fsync'ed, renamed over name, and the directory fsync'ed. Returns 0 or
 * -errno. */
int e4_statefile_save(int dirfd, const char *name, const char *body, size_t len);

/* Checks text (len bytes): it starts with magic and ends in the checksum
 * line of everything before it. Returns the body's length (the bytes
 * before the checksum line), or -EBADMSG. */
gssize e4_statefile_check(const char *text, size_t len, const char *magic);

/* Checks text as e4_statefile_check does and splits its body into lines
 * (*lines, g_strfreev; the last one is empty), the second of which must
 * be "count N": *count. Returns 0 or -EBADMSG (*lines NULL). */
int e4_statefile_lines(const char *text, size_t len, const char *magic, char ***lines, unsigned *count);

/* Reads the file name of dirfd, at most max_bytes. Returns 0 with *out
 * (g_string_free), -ENOENT when there is none, -EBADMSG when it is larger
 * or holds a NUL byte, or another -errno. */
int e4_statefile_read(int dirfd, const char *name, size_t max_bytes, GString **out);
