/* The content of an open attribute file: generated after the open is
 * answered, so that the reader's next requests (an ioctl, the first read)
 * travel while it is made. A read that arrives before the content is
 * answered when it is made, by the thread that made it: no FUSE thread
 * waits. Refcounted: the open's generator and the file handle each hold a
 * reference. */
#pragma once

#define FUSE_USE_VERSION 312

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <fuse_lowlevel.h>

typedef struct E4Content E4Content;

/* A content still being generated, with one reference. */
E4Content *e4_content_new(void);

E4Content *e4_content_ref(E4Content *c);
void e4_content_unref(E4Content *c);

/* Ends the generation: rc 0 with data (taken, g_free) and len, or -errno
 * (data NULL), and answers the reads that waited for it. Called once, by
 * a holder of a reference. */
void e4_content_finish(E4Content *c, int rc, char *data, size_t len);

/* Answers req, a read of size bytes at offset off: at once when c is
 * generated, else from e4_content_finish. Every read is answered, with
 * the bytes or with the generation's errno. */
void e4_content_read(E4Content *c, fuse_req_t req, size_t size, off_t off);

/* The contents of open files, each held by one file handle until its
 * release. The kernel does not always send a release before the session
 * ends (a file still open at `umount -l` whose close comes after the
 * connection went): what remains is dropped with the set. Thread-safe. */
typedef struct E4Handles E4Handles;

E4Handles *e4_handles_new(void);

/* Takes a reference to c for a new file handle; returns the handle (fh),
 * never 0. */
uint64_t e4_handles_open(E4Handles *h, E4Content *c);

/* The content of handle fh, borrowed until its release; NULL for 0. */
static inline E4Content *e4_handles_get(uint64_t fh)
{
	return (E4Content *)(uintptr_t)fh;
}

/* Drops handle fh (0: nothing). */
void e4_handles_release(E4Handles *h, uint64_t fh);

/* Drops every handle never released, then the set. */
void e4_handles_free(E4Handles *h);
