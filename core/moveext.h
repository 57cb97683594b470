/* EXT4_IOC_MOVE_EXT: the kernel's online block exchange. */
#pragma once

#include <stdint.h>

/* Moves the blocks of [start, start + len) (in filesystem blocks, same
 * logical offsets in both files) of the donor into orig and the old ones
 * of orig into the donor, copying orig's data: orig's content never
 * changes. orig must be open read-write, donor writable. EBUSY is retried
 * after writing back and dropping orig's cached pages of the rest of the
 * range (up to 8 times in a row without progress, with backoff); a call
 * that reports progress it did not make cannot loop forever. *moved gets
 * the blocks known moved.
 * Returns 0 or -errno (EBUSY after retries, ENOSPC, EINVAL, EOPNOTSUPP...). */
int e4_move_range(int orig_fd, int donor_fd, uint64_t start, uint64_t len, uint64_t *moved);
