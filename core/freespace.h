/* Free-space fragmentation of a mounted filesystem, from FS_IOC_GETFSMAP,
 * in e2freefrag's figures. */
#pragma once

#include <stdint.h>
#include <linux/fsmap.h>

/* e2freefrag's histogram: bucket i holds free extents of [2^(i-1), 2^i)
 * blocks (bucket 0: none), the last one everything larger. */
#define E4_FREE_BUCKETS 32

typedef struct {
	uint32_t block_size;             /* bytes */
	uint64_t free_blocks;
	uint64_t extents;                /* free extents as GETFSMAP reports them */
	uint64_t min_blocks, max_blocks; /* 0 without free space */
	uint64_t bucket_extents[E4_FREE_BUCKETS];
	uint64_t bucket_blocks[E4_FREE_BUCKETS];
} E4FreeSpace;

/* Calls fn for each record of the map of the filesystem of fd (any fd on
 * it), in physical order, until fn returns non-zero. ext4 asks no
 * privilege (kernel 6.18; XFS asks CAP_SYS_ADMIN). Returns 0 or -errno
 * (EOPNOTSUPP where the filesystem has no GETFSMAP, EPERM or EACCES where
 * the kernel or an LSM refuses it, ENOMEM). */
int e4_fsmap_walk(int fd, int (*fn)(const struct fsmap *rec, void *user), void *user);

/* Maps the free space of the filesystem of fd (e4_fsmap_walk). block_size
 * in bytes. Returns 0 or -errno as e4_fsmap_walk. */
int e4_freespace_read(int fd, uint32_t block_size, E4FreeSpace *out);

/* Called for each free extent, in ascending order: its first block and
 * its length, in blocks. */
typedef void (*E4FreeExtentFn)(uint64_t start, uint64_t blocks, void *user);

/* Reports every free extent of the filesystem of fd (e4_fsmap_walk) to
 * fn. Returns 0 or -errno as e4_freespace_read. */
int e4_freespace_each(int fd, uint32_t block_size, E4FreeExtentFn fn, void *user);

/* Adds one free extent of `blocks` blocks. */
void e4_freespace_add(E4FreeSpace *fs, uint64_t blocks);

/* The fewest free extents of fs that could hold `blocks` blocks (taking
 * the largest first, each as large as its bucket allows, the largest one
 * no larger than max_blocks): a lower bound on the runs of any new
 * allocation of that size. UINT64_MAX when the free space is too small. */
uint64_t e4_freespace_min_pieces(const E4FreeSpace *fs, uint64_t blocks);
