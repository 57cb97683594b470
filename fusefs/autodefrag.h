/* Automatic defragmentation (-o autodefrag=1, root only): the files that
 * writes left fragmented are defragmented once they have been quiet for a
 * while, one at a time, by the engine of `echo 1 > defrag` (same data
 * safety), throttled, never making room. The tree's fanotify watch
 * reports each write to a file with the file's handle; the file waits in
 * a bounded set (core/autoq.h) until no write came for `quiet` seconds;
 * a scheduler thread then maps it (FIEMAP, only then), leaves it alone
 * when it is below the threshold (defrag_min_runs, skip_run_kib), marked
 * excluded (itself or a directory above), outside SOURCE, or was moved
 * within `window` seconds, and else moves it. */
#pragma once

#include "fs.h"
#include "autoq.h"

/* Files wait at most this many in the candidate set (about 90 bytes
 * each); writes to others are dropped and counted. */
#define E4FS_AUTO_CAP 131072

/* Rate of automatic moves when -o defrag_mibps is not given, MiB/s. */
#define E4FS_AUTO_MIBPS_DEFAULT 32.0

typedef struct {
	double quiet;           /* seconds without a write before a file is examined */
	double window;          /* seconds during which a moved file is not moved again */
	double mibps;           /* bytes moved per second at most, MiB */
} E4fsAutoOpts;

/* Makes the scheduler of fs's mount and asks fs->tree to report writes to
 * files: call before e4_tree_watch, then e4fs_auto_start once the watch
 * runs (without a watch nothing is ever noted: free it instead). */
E4fsAuto *e4fs_auto_new(E4Fs *fs, const E4fsAutoOpts *opts);

/* Starts the scheduler thread. */
void e4fs_auto_start(E4fsAuto *a);

/* Stops the thread (a move under way is cancelled at its next chunk) and
 * waits for it: call before SOURCE's fds close. Idempotent. */
void e4fs_auto_stop(E4fsAuto *a);

/* Stops it if needed and frees it (NULL: nothing). */
void e4fs_auto_free(E4fsAuto *a);

/* What it did so far; a NULL a: enabled false, all 0. */
void e4fs_auto_counters(E4fsAuto *a, E4AutoCounters *out);

/* One comment line for the root's `jobs` file (with its newline). */
void e4fs_auto_describe(E4fsAuto *a, GString *out);
