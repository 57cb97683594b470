/* Defragmentation jobs started by writing a node's `defrag` file. */
#pragma once

#include "fs.h"

/* What a job does. */
typedef enum {
	E4FS_JOB_DEFRAG, /* each file into as few runs as it can */
	E4FS_JOB_PACK,   /* each directory's files end to end, one region per directory */
	E4FS_JOB_COMPACT, /* free space consolidated (the mount root only, root) */
} E4fsJobKind;

/* Most bytes of other files one compaction moves. */
#define E4FS_COMPACT_MAX_BYTES (1ull << 30)

/* Runs a job of this kind on node (a file, or a directory's subtree; a
 * pack only on a directory, a compaction only at the mount root and for
 * root: -EINVAL, -EPERM otherwise) for the caller uid and
 * returns when it ends, within limits (the trigger's options, each over
 * the mount's default in fs->job_defaults). req's interruption (Ctrl-C on
 * the writer), a cancel from another writer, or the session's end stop it
 * between chunks; so does the deadline (limits' seconds), which is no
 * error: the state is "stopped" and what was moved stays moved. With
 * fs->idle_io the job's threads do their I/O in the idle class. Returns
 * 0 when every file ended improved, optimal, no-gain or skipped, or the
 * deadline came first; -EIO when a file failed; -EBUSY when a job on an
 * overlapping node runs or fs->max_jobs jobs run; -EROFS on a read-only
 * filesystem; -EINTR when interrupted, -ECANCELED when cancelled. */
int e4fs_job_run(E4Fs *fs, Node *node, E4fsJobKind kind, const E4JobLimits *limits, fuse_req_t req,
		 uid_t uid);

/* The chunk a job capped at mibps MiB/s moves at once, bytes. */
uint64_t e4fs_throttled_chunk(double mibps);

/* Cancels the job running on node, if any. */
void e4fs_job_cancel(E4Fs *fs, Node *node);

/* Finished jobs and the sum of their summaries. */
void e4fs_jobs_totals(E4Fs *fs, uint64_t *jobs, E4DefragSummary *totals);

/* Cancels every running job. */
void e4fs_jobs_cancel_all(E4Fs *fs);

/* The text of the root's `jobs` file: a header, then one line per running
 * job (inode of its node, percent, files done/total, current file). */
char *e4fs_jobs_list(E4Fs *fs);

/* The text of node's `defrag` file: the running job's progress, or the
 * last result, or idle. g_free. */
char *e4fs_job_status(E4Fs *fs, Node *node);

/* The filesystem's id as 16 hex digits (statfs f_fsid, from its UUID on
 * ext4): names its state files. g_free. */
char *e4fs_fs_id(E4Fs *fs);
/* When node ino's map-before was taken (realtime, microseconds), 0 never. */
gint64 e4fs_before_time(E4Fs *fs, uint64_t ino);

void e4fs_jobs_init(E4Fs *fs);
void e4fs_jobs_free(E4Fs *fs);
