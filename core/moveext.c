#include "moveext.h"

#include <errno.h>
#include <time.h>
#include <sys/ioctl.h>
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
#define MAX_CALLS_PER_RANGE 64

static void backoff(int attempt)
{
	/* 1, 2, 4 ... 128 ms: folio locks are held for single page copies. */
	struct timespec ts = { 0, (long)(1000000L << attempt) };
	nanosleep(&ts, NULL);
}

int e4_move_range(int orig_fd, int donor_fd, uint64_t start, uint64_t len, uint64_t *moved)
{
	*moved = 0;
	int busy = 0;
	for (int calls = 0; *moved < len; calls++) {
		if (calls >= MAX_CALLS_PER_RANGE)
			return -EIO;
		struct move_extent me = {
			.donor_fd = (__u32)donor_fd,
			.orig_start = start + *moved,
			.donor_start = start + *moved,
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
		if (rc == -EINTR)
			continue;
		if (rc == -EBUSY && busy < BUSY_RETRIES) {
			backoff(busy++);
			continue;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}
