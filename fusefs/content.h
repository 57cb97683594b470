/* The content of an open attribute file: generated after the open is
 * answered, so that the reader's next requests (an ioctl, the first read)
 * travel while it is made; a read waits for it. Refcounted: the open's
 * generator, the file handle and each read in flight hold a reference. */
#pragma once

#include <stddef.h>

typedef struct E4Content E4Content;

/* A content still being generated, with one reference. */
E4Content *e4_content_new(void);

E4Content *e4_content_ref(E4Content *c);
void e4_content_unref(E4Content *c);

/* Ends the generation: rc 0 with data (taken, g_free) and len, or -errno
 * (data NULL). Wakes every waiting read. Called once. */
void e4_content_finish(E4Content *c, int rc, char *data, size_t len);

/* Waits until c is generated. Returns 0 with *data and *len (valid while
 * a reference is held), or the generation's -errno. */
int e4_content_wait(E4Content *c, const char **data, size_t *len);
