/* What a subtree job stopped by its deadline had finished, so that the
 * next job on the same directory passes over those files without
 * examining them, also after the daemon restarted (a state file). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct E4Resume E4Resume;

E4Resume *e4_resume_new(void);
void e4_resume_free(E4Resume *r);

/* A finished file: its inode, size and mtime (a file written since, or
 * another file under the inode number, does not match). */
void e4_resume_add(E4Resume *r, uint64_t ino, uint64_t size, int64_t mtime_ns);
bool e4_resume_has(const E4Resume *r, uint64_t ino, uint64_t size, int64_t mtime_ns);
size_t e4_resume_count(const E4Resume *r);

/* Writes r as the file name in directory dirfd atomically: a temporary
 * file in dirfd, written and fsync'ed, renamed over name, and the
 * directory fsync'ed. Returns 0 or -errno. */
int e4_resume_save(const E4Resume *r, int dirfd, const char *name);

/* Reads the file name of dirfd. Returns 0 with *out (e4_resume_free),
 * -ENOENT when there is none, -EBADMSG when it is damaged (wrong header,
 * a malformed line, a count or checksum that does not match), or another
 * -errno. */
int e4_resume_load(int dirfd, const char *name, E4Resume **out);

/* Parses the text of a state file (for the loader and the tests). */
int e4_resume_parse(const char *text, size_t len, E4Resume **out);
