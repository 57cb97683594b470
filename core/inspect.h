/* Analysing one regular file: open it safely, map it, compute figures. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>

#include "figures.h"
#include "score.h"

typedef struct {
	struct stat st;    /* the file's fstat */
	int skip;          /* -1 when analysed, else the E4SkipReason */
	int error;         /* the errno behind E4_SKIP_UNREADABLE / NO_FIEMAP */
	E4FileFigures fig; /* valid when skip == -1 */
} E4FileResult;

/* Opens the regular file name in dirfd read-only (never following a
 * symlink, never blocking on a lease, without touching atime where
 * allowed), reads its extent map into map (scratch the caller may reuse;
 * NULL for a private one) and fills out. A file that cannot be opened or
 * mapped is still a result, with a skip reason.
 * Returns 0, or -errno when name no longer is a regular file (ENOENT,
 * ELOOP for a symlink, EINVAL for another type). */
int e4_inspect_at(int dirfd, const char *name, const E4Geometry *geom, E4ExtentMap *map,
		  E4FileResult *out);

/* e4_inspect_at, and *marked set when the file carries a true exclusion
 * mark (exclude.h), read on the file it opened (marked NULL: not read). */
int e4_inspect_at_marked(int dirfd, const char *name, const E4Geometry *geom, E4ExtentMap *map,
			 E4FileResult *out, bool *marked);

/* The same for an already open regular file. Returns 0 or -errno from fstat. */
int e4_inspect_fd(int fd, const E4Geometry *geom, E4ExtentMap *map, E4FileResult *out);

/* Adds a result to a summary: analysed or skipped with its reason. */
void e4_summary_add_result(E4Summary *s, const E4FileResult *r);
