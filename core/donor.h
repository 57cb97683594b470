/* Donor files: unnamed, preallocated twins of a file's data ranges. */
#pragma once

#include <stdint.h>

#include "fiemap.h"

/* The block ranges of a file that carry data (or preallocated space)
 * inside its size, merged where logically adjacent. In blocks. */
typedef struct {
	uint64_t start, len;
} E4Range;

typedef struct {
	E4Range *v;
	size_t n;
} E4Ranges;

/* Data ranges of map, clamped to the first ceil(size / block_size) blocks
 * (blocks past EOF cannot be moved). Returns 0 or -ENOMEM. */
int e4_data_ranges(const E4ExtentMap *map, uint64_t size, uint32_t block_size, E4Ranges *out);
void e4_ranges_clear(E4Ranges *r);
uint64_t e4_ranges_blocks(const E4Ranges *r);

/* Creates an unnamed file (O_TMPFILE, never linkable: nothing to leak or
 * clean after a crash) in directory dirfd and allocates exactly the ranges
 * with fallocate, so holes of the original stay holes. When the holes are
 * no larger than the data and twice the span is free, the whole span is
 * requested at once and the holes punched out again, so the data lands
 * contiguous across them.
 * Returns the fd (read-write) or -errno (ENOSPC, EOPNOTSUPP, EROFS...). */
int e4_donor_create(int dirfd, const E4Ranges *ranges, uint32_t block_size);

/* An unnamed file of blocks blocks from logical block 0, allocated in
 * requests of powers of two (at most 16384 blocks each, largest first),
 * so that it lands in a free aligned region of its size when there is
 * one (a cleared region, core/place). Returns the fd or -errno. */
int e4_donor_create_pow2(int dirfd, uint64_t blocks, uint32_t block_size);
