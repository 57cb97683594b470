/* Change notification for a whole filesystem (fanotify, FAN_MARK_FILESYSTEM
 * with directory file handles and names), so cached figures can be trusted
 * without a stat per file. Root only. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>

typedef struct E4Watch E4Watch;

/* Watches the filesystem holding the directory open as mount_fd (kept
 * open by the caller while the watch lives) for modifications, creations,
 * deletions and renames. With files, events also carry the handle of the
 * object itself (FAN_REPORT_FID), so that writes to a regular file are
 * reported with that file's handle (see E4WatchEvent); the cost is one
 * more record per event, no syscall. Where the kernel can (5.17), a
 * creation, deletion or rename also carries the handle of the file it
 * names, so that a new file's creation, writes and attribute changes
 * merge into one event while queued. Returns NULL with errno set when
 * fanotify cannot do it (not root, old kernel). */
E4Watch *e4_watch_new(int mount_fd, bool files);
void e4_watch_free(E4Watch *w);

/* The fd to poll for pending events. */
int e4_watch_fd(const E4Watch *w);

/* One change: the directory whose entries or files changed; name, the
 * file of that directory whose data or attributes changed (its entries
 * did not), or NULL when the directory's entries or the directory itself
 * changed (creation, deletion, rename, its own attributes) or the event
 * names no file; and with a watch made with files, for a write
 * (FAN_MODIFY: write, truncate, fallocate) to a regular file, that file's
 * handle and its directory's. The name and handles point into the read
 * buffer: copy them to keep them. */
typedef struct {
	uint64_t dir_ino;                 /* 0: not known (no handle, or gone) */
	const char *name;                 /* see above, or NULL */
	const struct file_handle *file;   /* the written file, or NULL */
	const struct file_handle *dir;    /* its directory, when file is set */
} E4WatchEvent;

/* Called once per change event. */
typedef void (*E4WatchFn)(const E4WatchEvent *ev, void *user);

/* Reads every pending event without blocking (not to be called from two
 * threads at once) and reports each change (a directory possibly more
 * than once). Returns 0, or -EOVERFLOW when
 * events were lost (the queue overflowed: nothing cached can be trusted),
 * or -errno. */
int e4_watch_drain(E4Watch *w, E4WatchFn fn, void *user);
