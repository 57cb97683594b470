#include "freespace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fsmap.h>

#define BATCH 1024

void e4_freespace_add(E4FreeSpace *fs, uint64_t blocks)
{
	if (blocks == 0)
		return;
	/* e2freefrag's bucket: floor(log2(blocks)) + 1, capped. */
	int idx = 64 - __builtin_clzll(blocks);
	if (idx >= E4_FREE_BUCKETS)
		idx = E4_FREE_BUCKETS - 1;
	fs->bucket_extents[idx]++;
	fs->bucket_blocks[idx] += blocks;
	if (fs->extents == 0 || blocks < fs->min_blocks)
		fs->min_blocks = blocks;
	if (blocks > fs->max_blocks)
		fs->max_blocks = blocks;
	fs->extents++;
	fs->free_blocks += blocks;
}

uint64_t e4_freespace_min_pieces(const E4FreeSpace *fs, uint64_t blocks)
{
	if (blocks == 0)
		return 0;
	if (blocks > fs->free_blocks)
		return UINT64_MAX;
	uint64_t pieces = 0;
	for (int i = E4_FREE_BUCKETS - 1; i > 0 && blocks > 0; i--) {
		uint64_t n = fs->bucket_extents[i];
		if (n == 0)
			continue;
		/* Bucket i holds extents of [2^(i-1), 2^i) blocks: at most 2^i - 1
		 * each, and none above the largest extent (the last bucket is open). */
		uint64_t each = (UINT64_C(1) << i) - 1;
		if (each > fs->max_blocks || i == E4_FREE_BUCKETS - 1)
			each = fs->max_blocks;
		uint64_t need = (blocks + each - 1) / each;
		if (need <= n)
			return pieces + need;
		pieces += n;
		blocks = blocks > n * each ? blocks - n * each : 0;
	}
	return blocks > 0 ? UINT64_MAX : pieces;
}

int e4_fsmap_walk(int fd, int (*fn)(const struct fsmap *rec, void *user), void *user)
{
	struct fsmap_head *head = calloc(1, fsmap_sizeof(BATCH));
	if (!head)
		return -ENOMEM;
	head->fmh_count = BATCH;
	head->fmh_keys[1] = (struct fsmap){
		.fmr_device = UINT32_MAX, .fmr_flags = UINT32_MAX, .fmr_physical = UINT64_MAX,
		.fmr_owner = UINT64_MAX, .fmr_offset = UINT64_MAX,
	};
	int rc = 0;
	bool stop = false;
	while (!stop) {
		if (ioctl(fd, FS_IOC_GETFSMAP, head) < 0) {
			rc = -errno;
			break;
		}
		if (head->fmh_entries == 0)
			break;
		for (unsigned i = 0; !stop && i < head->fmh_entries; i++)
			stop = fn(&head->fmh_recs[i], user) != 0;
		if (head->fmh_recs[head->fmh_entries - 1].fmr_flags & FMR_OF_LAST)
			break;
		fsmap_advance(head);
	}
	free(head);
	return rc;
}

typedef struct {
	E4FreeExtentFn fn;
	void *user;
	uint32_t block_size;
} FreeWalk;

static int each_free(const struct fsmap *r, void *user)
{
	FreeWalk *w = user;
	if ((r->fmr_flags & FMR_OF_SPECIAL_OWNER) && r->fmr_owner == FMR_OWN_FREE)
		w->fn(r->fmr_physical / w->block_size, r->fmr_length / w->block_size, w->user);
	return 0;
}

int e4_freespace_each(int fd, uint32_t block_size, E4FreeExtentFn fn, void *user)
{
	FreeWalk w = { fn, user, block_size };
	return e4_fsmap_walk(fd, each_free, &w);
}

static void add_extent(uint64_t start, uint64_t blocks, void *user)
{
	(void)start;
	e4_freespace_add(user, blocks);
}

int e4_freespace_read(int fd, uint32_t block_size, E4FreeSpace *out)
{
	*out = (E4FreeSpace){ .block_size = block_size };
	return e4_freespace_each(fd, block_size, add_extent, out);
}
