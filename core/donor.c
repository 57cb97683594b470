#include "donor.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/statvfs.h>
#include <glib.h>

int e4_data_ranges(const E4ExtentMap *map, uint64_t size, uint32_t block_size, E4Ranges *out)
{
	*out = (E4Ranges){0};
	uint64_t eof = (size + block_size - 1) / block_size;
	out->v = calloc(map->n ? map->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < map->n; i++) {
		uint64_t start = map->ext[i].logical / block_size;
		uint64_t end = (map->ext[i].logical + map->ext[i].length) / block_size;
		if (end > eof)
			end = eof;
		if (start >= end)
			continue;
		E4Range *last = out->n ? &out->v[out->n - 1] : NULL;
		if (last && last->start + last->len == start)
			last->len += end - start;
		else
			out->v[out->n++] = (E4Range){ start, end - start };
	}
	return 0;
}

void e4_ranges_clear(E4Ranges *r)
{
	free(r->v);
	*r = (E4Ranges){0};
}

uint64_t e4_ranges_blocks(const E4Ranges *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].len;
	return n;
}

/* Whether to allocate the span across the holes at once: the holes take
 * at most as many blocks as the data, and twice the span is free. The
 * span briefly needs room for the holes too; with less free space it
 * could fail (or leave others none) where the data alone fits. */
static bool span_worth(int fd, const E4Ranges *r, uint32_t bs)
{
	if (r->n < 2)
		return false;
	uint64_t span = r->v[r->n - 1].start + r->v[r->n - 1].len - r->v[0].start;
	if (span - e4_ranges_blocks(r) > e4_ranges_blocks(r))
		return false;
	struct statvfs sv;
	return fstatvfs(fd, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize / 2 >= span * bs;
}

/* One request for the whole span, then the holes punched out again: the
 * allocator sees one large request, so the data ranges end up physically
 * where their logical offsets say (one run across the holes). */
static int allocate_span(int fd, const E4Ranges *r, uint32_t bs)
{
	off_t first = (off_t)(r->v[0].start * bs);
	off_t end = (off_t)((r->v[r->n - 1].start + r->v[r->n - 1].len) * bs);
	if (fallocate(fd, 0, first, end - first) < 0)
		return -errno;
	for (size_t i = 0; i + 1 < r->n; i++) {
		off_t hole = (off_t)((r->v[i].start + r->v[i].len) * bs);
		off_t next = (off_t)(r->v[i + 1].start * bs);
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, hole, next - hole) < 0)
			return -errno;
	}
	return 0;
}

static int allocate_ranges(int fd, const E4Ranges *r, uint32_t bs)
{
	for (size_t i = 0; i < r->n; i++)
		if (fallocate(fd, 0, (off_t)(r->v[i].start * bs), (off_t)(r->v[i].len * bs)) < 0)
			return -errno;
	return 0;
}

/* The largest power of two of blocks one request of fallocate reaches the
 * allocator with: an unwritten extent holds at most 32767 blocks
 * (EXT_UNWRITTEN_MAX_LEN), so a request of 32768 arrives as 32767 + 1. */
#define POW2_PIECE_MAX 16384

/* [0, blocks) as requests of powers of two, largest first: each is served
 * by mballoc's first criterion (a free buddy of that order) or at the goal
 * right after the previous piece, so a free aligned region of that size
 * is found wherever it lies. One request of any other size settles for
 * the first free extents a group scan sees (measured: a 128 MiB fallocate
 * came out in 2 runs on an empty filesystem, 4 requests of 2^k in 1). */
static int allocate_pow2(int fd, uint64_t blocks, uint32_t bs)
{
	for (uint64_t off = 0; off < blocks;) {
		uint64_t p = MIN(blocks - off, (uint64_t)POW2_PIECE_MAX);
		p = UINT64_C(1) << (63 - __builtin_clzll(p));
		if (fallocate(fd, 0, (off_t)(off * bs), (off_t)(p * bs)) < 0)
			return -errno;
		off += p;
	}
	return 0;
}

static int donor_new(int dirfd, const E4Ranges *ranges, uint32_t block_size, bool pow2)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc;
	if (pow2)
		rc = allocate_pow2(fd, ranges->n ? ranges->v[ranges->n - 1].start + ranges->v[ranges->n - 1].len : 0,
				   block_size);
	else
		rc = span_worth(fd, ranges, block_size) ? allocate_span(fd, ranges, block_size)
							: allocate_ranges(fd, ranges, block_size);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int e4_donor_create(int dirfd, const E4Ranges *ranges, uint32_t block_size)
{
	return donor_new(dirfd, ranges, block_size, false);
}

int e4_donor_create_pow2(int dirfd, uint64_t blocks, uint32_t block_size)
{
	E4Range all = { 0, blocks };
	E4Ranges ranges = { &all, 1 };
	return donor_new(dirfd, &ranges, block_size, true);
}
