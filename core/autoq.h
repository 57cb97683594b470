/* Automatic defragmentation's bookkeeping: the files written lately (the
 * candidates), each with the time of its last write, so that a file is
 * looked at only once it has been quiet for a while; the files it moved,
 * so that none is moved twice within a window; and its counters. Files
 * are known by their handles (as fanotify reports them), so that a file
 * can be reopened without a path and an inode reused by another file never
 * matches. Bounded in memory; thread-safe (writes are noted on the watch's
 * thread, candidates taken on the scheduler's). Knows no clock: callers
 * pass the time (monotonic microseconds). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>

/* Longest handle kept, bytes (ext4: 8, FILEID_INO32_GEN; 16 with its parent). */
#define E4_AUTO_HANDLE_MAX 16

typedef struct {
	struct file_handle fh;
	unsigned char bytes[E4_AUTO_HANDLE_MAX];
} E4AutoHandle;

typedef struct {
	E4AutoHandle file;      /* the written file */
	E4AutoHandle dir;       /* the directory it was written in */
	int64_t last_us;        /* its last write noted */
} E4AutoCandidate;

typedef struct E4AutoQueue E4AutoQueue;

/* A set holding at most cap (> 0) candidates and cap moved files. */
E4AutoQueue *e4_autoq_new(size_t cap);
void e4_autoq_free(E4AutoQueue *q);

/* Notes a write to file (in directory dir) at now_us; a file already
 * waiting has its time moved to now_us. Returns 0, or -ENOSPC when cap
 * files already wait, -ENAMETOOLONG when a handle is longer than
 * E4_AUTO_HANDLE_MAX: the write is then dropped (and counted). */
int e4_autoq_note(E4AutoQueue *q, const struct file_handle *file, const struct file_handle *dir, int64_t now_us);

/* Removes from the set up to max candidates whose last write is at least
 * quiet_us before now_us, the longest quiet first, into out. Returns how
 * many. Costs only what it takes: writes must be noted with times that
 * do not go backwards (a monotonic clock, one noting thread), since the
 * set is kept in the order they were noted. */
size_t e4_autoq_take_quiet(E4AutoQueue *q, int64_t now_us, int64_t quiet_us, E4AutoCandidate *out, size_t max);

/* Records that file was moved at now_us, forgetting the moves older than
 * window_us (the set of moved files stays bounded by cap). */
void e4_autoq_moved(E4AutoQueue *q, const struct file_handle *file, int64_t now_us, int64_t window_us);

/* True when file was moved less than window_us before now_us, and also
 * when cap moves within the window are recorded already (then no promise
 * can be kept for a file not among them: it is not to be moved). */
bool e4_autoq_moved_within(E4AutoQueue *q, const struct file_handle *file, int64_t now_us, int64_t window_us);

/* Candidates waiting now, and writes dropped since the set was made. */
size_t e4_autoq_len(E4AutoQueue *q);
uint64_t e4_autoq_dropped(E4AutoQueue *q);

/* Why a candidate was not moved. */
typedef enum {
	E4_AUTO_SKIP_GONE,      /* deleted, or no longer a regular file */
	E4_AUTO_SKIP_OUTSIDE,   /* not below the mount's SOURCE */
	E4_AUTO_SKIP_EXCLUDED,  /* marked user.e4infofs.exclude, or below a marked directory */
	E4_AUTO_SKIP_BELOW,     /* not fragmented beyond the threshold (FIEMAP) */
	E4_AUTO_SKIP_WINDOW,    /* moved within the window already */
	E4_AUTO_SKIP_NO_GAIN,   /* the free space gave no better place */
	E4_AUTO_SKIP_ENGINE,    /* the engine skipped it (busy, no space, immutable...) */
	E4_AUTO_SKIP_FAILED,    /* an error (logged) */
	E4_AUTO_SKIP__COUNT
} E4AutoSkip;

/* Stable short names ("gone", "below_threshold", ...), for metrics. */
const char *e4_auto_skip_name(E4AutoSkip s);

/* What automatic defragmentation did since the mount. */
typedef struct {
	bool enabled;
	uint64_t queue;         /* candidates waiting */
	uint64_t dropped;       /* writes not noted: the set was full */
	uint64_t checked;       /* candidates examined (quiet long enough) */
	uint64_t files;         /* files moved into fewer runs */
	uint64_t bytes_moved;
	uint64_t runs_before, runs_after; /* of the files moved */
	uint64_t skipped[E4_AUTO_SKIP__COUNT];
	double seconds;         /* spent examining and moving */
	uint64_t current_ino;   /* the file being moved, 0 none */
} E4AutoCounters;
