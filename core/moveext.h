/* EXT4_IOC_MOVE_EXT: the kernel's online block exchange. */
#pragma once

#include <stdint.h>

/* Moves the donor's blocks of [donor_start, donor_start + len) into orig's
 * [start, start + len) (in filesystem blocks) and orig's old ones into the
 * donor, copying orig's data: orig's content never changes. The two starts
 * must lie at the same offset inside a page (EINVAL otherwise): with
 * 4 KiB blocks any two do. orig must be open read-write, donor writable. EBUSY is retried
 * after writing back and dropping orig's cached pages of the rest of the
 * range (up to 8 times in a row without progress, with backoff); a call
 * that reports progress it did not make cannot loop forever. *moved gets
 * the blocks known moved.
 * Returns 0 or -errno (EBUSY after retries, ENOSPC, EINVAL, EOPNOTSUPP...). */
int e4_move_range(int orig_fd, int donor_fd, uint64_t start, uint64_t donor_start, uint64_t len,
		  uint64_t *moved);
