/* A cache of per-file figures for one filesystem, kept as a tree of
 * directories, so that a subtree's figures are recomputed only for what
 * changed. Scans inspect files on a pool of threads. Thread-safe: scans
 * are serialized by the tree. */
#pragma once

#include <stdint.h>
#include <glib.h>
#include <time.h>
#include <sys/types.h>
#include <fcntl.h>

#include "score.h"
#include "itable.h"
#include "superblock.h"
#include "top.h"

typedef struct E4Tree E4Tree;

/* Counters since the tree was made, for metrics and tests. */
typedef struct {
	uint64_t scans;         /* e4_tree_scan / e4_tree_dir_files calls */
	uint64_t inspections;   /* files inspected: opened and mapped with FIEMAP,
	                         * or read from the inode tables */
	uint64_t raw_inspections; /* of which read from the inode tables (itable.h) */
	uint64_t dirs_listed;   /* directories read (first time, or changed) */
	/* The scan under way, for a long first scan's progress (a scan holds
	 * the tree's lock; these are read without it): */
	bool scan_running;
	double scan_seconds;    /* since it started */
	uint64_t scan_files;    /* files it inspected so far */
	uint64_t scan_dirs;     /* directories it read so far */
	uint64_t revalidations; /* cached files checked by a stat */
	uint64_t dir_opens;     /* subdirectories a scan opened to check them
	                         * (a settled subtree is not opened) */
	uint64_t cache_bytes;   /* what the cached records take, bytes: directory
	                         * and file records, names, side records and kept
	                         * aggregates, without malloc's own overhead */
	uint64_t dirs_dropped;  /* directory records dropped to keep the cap */
	uint64_t watch_events;  /* change events read from the watch (after the
	                         * kernel merged those of one file still queued) */
} E4TreeCounters;

typedef struct {
	E4Summary sum;
	E4Top top;
	double seconds;         /* wall time of the scan */
	time_t when;            /* when it ended */
} E4TreeResult;

/* One file as e4_tree_dir_files (name: its name) and e4_tree_scan_each
 * (name: its path relative to the scanned directory) report it. */
typedef struct {
	const char *name;
	int skip;               /* -1 analysed, else E4SkipReason */
	const E4FileFigures *fig; /* fig->size is valid even when skipped */
	bool excluded;          /* marked (exclude.h); from e4_tree_scan_each also
	                         * below a marked directory, up to the fs root */
} E4TreeFile;

typedef void (*E4TreeEachFn)(const E4TreeFile *file, void *user);

typedef int (*E4TreeFileFn)(const E4TreeFile *file, void *user);

/* A tree for the filesystem dev with this geometry; threads (>= 1) inspect
 * files in parallel. */
E4Tree *e4_tree_new(const E4Geometry *geom, dev_t dev, unsigned threads);
void e4_tree_free(E4Tree *tree);

/* Gives the tree a reader of the inode tables (itable.h; it takes
 * ownership, NULL to drop it): cold scans then read new directories' files
 * from it, asking the kernel only where it declines. Without one (the
 * default, and for anyone who cannot read the device) every file is opened
 * and mapped with FIEMAP. */
void e4_tree_read_inodes(E4Tree *tree, E4Itable *itable);

/* Caps the cache at bytes (0: no cap, the default). After each scan the
 * least recently read directories' records are dropped, with their
 * subdirectories', until the cache takes at most bytes; the next scan
 * through them reads them again (and the directories above them are no
 * longer settled). A scan holds every record of the subtree it reads, so
 * the cache exceeds the cap during a read of a subtree larger than it. */
void e4_tree_set_cache_limit(E4Tree *tree, uint64_t bytes);

/* Lets go of the filesystem at once: stops watching it, and makes scans
 * under way end at their next file and every later one fail with
 * -ECANCELED, so that the tree holds no fd on it once they have returned.
 * For a daemon whose mount has ended; only e4_tree_free may follow. */
void e4_tree_stop(E4Tree *tree);

/* Watches the filesystem (mount_fd: a directory fd on it, kept open by the
 * caller for the tree's life) for changes, so that scans check with a stat
 * only the files of directories where something happened since the last
 * scan, instead of every file. Changes that send no event (writes through
 * a shared mmap before writeback, another program moving blocks with
 * EXT4_IOC_MOVE_EXT) are then seen when their directory next has an event.
 * Returns 0, or -errno when fanotify cannot watch (not root): the tree
 * then keeps checking every file. */
int e4_tree_watch(E4Tree *tree, int mount_fd);

/* Called by the watch for each write to a regular file (see E4WatchEvent:
 * file and dir are handles valid during the call only; now_us: the
 * monotonic time of the drain, at most 50 ms after the write was seen),
 * on the thread that drains events, with the tree's scan lock held: it
 * must be quick and must not call into the tree. */
typedef void (*E4TreeWriteFn)(const struct file_handle *file, const struct file_handle *dir, int64_t now_us,
			      void *user);

/* Asks the watch e4_tree_watch starts to report writes to files to fn.
 * Call before e4_tree_watch (a watch made without it reports only
 * directories, which is cheaper). */
void e4_tree_on_write(E4Tree *tree, E4TreeWriteFn fn, void *user);

/* Figures of every regular file below the directory dirfd (on the tree's
 * filesystem), each inode once, with the top_n most fragmented files.
 * A cached file is reused when its inode, size, mtime and ctime are
 * unchanged (or, when watched, when its directory had no event); anything
 * else is inspected again. Returns 0 or -errno. */
int e4_tree_scan(E4Tree *tree, int dirfd, size_t top_n, E4TreeResult *out);

/* e4_tree_scan, also calling each (when not NULL) for every file of the
 * subtree (each inode once, in the summary's order: a directory's files
 * in readdir order, then its subdirectories) from the cache. The marks of
 * the directories above dirfd cost a getxattr each. */
int e4_tree_scan_each(E4Tree *tree, int dirfd, size_t top_n, E4TreeResult *out, E4TreeEachFn each,
		      void *user);

/* Calls fn for each regular file directly in dirfd, in readdir order,
 * after the same revalidation (no recursion). Returns 0, -errno, or fn's
 * first non-zero return. */
int e4_tree_dir_files(E4Tree *tree, int dirfd, E4TreeFileFn fn, void *user);

/* Forgets the cached figures of inode ino (e.g. after moving its blocks,
 * which changes no timestamp), so the next scan inspects it again. */
void e4_tree_forget_inode(E4Tree *tree, uint64_t ino);

/* When the filesystem last changed as far as the tree knows (realtime,
 * microseconds): the last change event the watch reported (drained every
 * 200 ms) or inode forgotten; the current time when not watched. For a
 * picture's mtime: cheap, takes no scan lock. */
gint64 e4_tree_changed_us(E4Tree *tree);

/* When e4_tree_forget_inode last named ino (realtime, microseconds), 0
 * never: a move changes no timestamp of the file. */
gint64 e4_tree_moved_us(E4Tree *tree, uint64_t ino);

void e4_tree_counters(E4Tree *tree, E4TreeCounters *out);

void e4_tree_result_clear(E4TreeResult *res);
