/* The objects behind open file handles (an attribute file's content, a
 * directory's listing), each held by its handle until the release. The
 * kernel does not always send a release before the session ends (a file
 * or directory still open at `umount -l` whose close comes after the
 * connection went): what remains is dropped with the set. Thread-safe. */
#pragma once

#include <stdint.h>
#include <glib.h>

typedef struct E4Handles E4Handles;

/* A set whose objects are dropped with drop (at their release, or when
 * the set is freed). */
E4Handles *e4_handles_new(GDestroyNotify drop);

/* Holds obj (not NULL; the set owns it, or the reference given) for a new
 * file handle; returns the handle (fh), never 0. */
uint64_t e4_handles_open(E4Handles *h, gpointer obj);

/* The object of handle fh, borrowed until its release; NULL for 0. */
static inline gpointer e4_handles_get(uint64_t fh)
{
	return (gpointer)(uintptr_t)fh;
}

/* Drops the object of handle fh (0: nothing). */
void e4_handles_release(E4Handles *h, uint64_t fh);

/* Drops every object never released, then the set. */
void e4_handles_free(E4Handles *h);
