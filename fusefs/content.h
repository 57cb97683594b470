/* The content of an open attribute file: generated after the open is
 * answered, so that the reader's next requests (an ioctl, the first read)
 * travel while it is made. A read that arrives before the content is
 * answered when it is made, by the thread that made it: no FUSE thread
 * waits. Refcounted: the open's generator and the file handle each hold a
 * reference. */
#pragma once

#define FUSE_USE_VERSION 312

#include <stddef.h>
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
