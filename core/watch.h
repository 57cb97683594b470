/* Change notification for a whole filesystem (fanotify, FAN_MARK_FILESYSTEM
 * with directory file handles and names), so cached figures can be trusted
 * without a stat per file. Root only. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct E4Watch E4Watch;

/* Watches the filesystem holding the directory open as mount_fd (kept
 * open by the caller while the watch lives) for modifications, creations,
 * deletions and renames. Returns NULL with errno set when fanotify cannot
 * do it (not root, old kernel). */
E4Watch *e4_watch_new(int mount_fd);
void e4_watch_free(E4Watch *w);

/* The fd to poll for pending events. */
int e4_watch_fd(const E4Watch *w);

/* Called with the inode number of a directory whose entries or files
 * changed. name: the file of that directory whose data or attributes
 * changed (its entries did not), or NULL when the directory's entries or
 * the directory itself changed (creation, deletion, rename, its own
 * attributes), or the event names no file. */
typedef void (*E4WatchFn)(uint64_t dir_ino, const char *name, void *user);

/* Reads every pending event without blocking (not to be called from two
 * threads at once) and reports each changed
 * directory (possibly more than once). Returns 0, or -EOVERFLOW when
 * events were lost (the queue overflowed: nothing cached can be trusted),
 * or -errno. */
int e4_watch_drain(E4Watch *w, E4WatchFn fn, void *user);
