#include "room.h"

#include <glib.h>

void e4_room_init(E4Room *r, uint32_t block_size)
{
	*r = (E4Room){ .block_size = block_size };
}

void e4_room_reset(E4Room *r)
{
	uint64_t total = r->freed_total;
	e4_room_init(r, r->block_size);
	r->freed_total = total;
}

void e4_room_read(E4Room *r, int fd, int64_t now_us)
{
	int64_t t0 = g_get_monotonic_time();
	r->known = e4_freespace_read(fd, r->block_size, &r->free) == 0;
	r->read_cost = g_get_monotonic_time() - t0;
	r->read_at = now_us;
	r->committed = false;
	/* The moves since the last commit may not be on the map yet. */
	r->freed_unmapped = r->freed_uncommitted;
}

/* The allocator just showed what it gives: a file whose runs are as long
 * would not gain, unless enough room was freed since. */
static bool like_last_miss(const E4Room *r, uint64_t blocks, uint32_t runs, int64_t now_us)
{
	return r->miss_run > 0 && now_us - r->miss_at <= E4_ROOM_MAX_AGE_US &&
	       blocks >= E4_ROOM_LEARN_BLOCKS && runs > 0 && blocks / runs >= r->miss_run &&
	       r->freed_total - r->miss_freed < blocks * r->block_size;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static bool stale(const E4Room *r, int64_t now_us)
{
	int64_t age = now_us - r->read_at, floor = r->read_cost * E4_ROOM_COST_FACTOR;
	return age > max64(E4_ROOM_MAX_AGE_US, floor) ||
	       (r->committed && age > max64(E4_ROOM_MIN_AGE_US, floor));
}

bool e4_room_hopeless(E4Room *r, int fd, uint64_t blocks, uint32_t runs, int64_t now_us)
{
	if (like_last_miss(r, blocks, runs, now_us))
		return true;
	if (r->read_at == 0 || stale(r, now_us))
		e4_room_read(r, fd, now_us);
	if (!r->known)
		return false;
	E4FreeSpace f = r->free;
	e4_freespace_add(&f, r->freed_unmapped / r->block_size);
	return e4_freespace_min_pieces(&f, blocks) >= runs;
}

bool e4_room_commit_may_help(const E4Room *r, uint64_t bytes)
{
	return r->freed_uncommitted >= bytes && r->freed_uncommitted >= E4_ROOM_COMMIT_MIN_BYTES;
}

void e4_room_committed(E4Room *r)
{
	r->freed_uncommitted = 0;
	r->committed = true;
}

void e4_room_donor(E4Room *r, uint64_t blocks, uint32_t donor_runs, uint32_t file_runs,
		   int64_t now_us)
{
	if (blocks < E4_ROOM_LEARN_BLOCKS)
		return;
	if (donor_runs < file_runs)
		r->miss_run = 0;
	else if (donor_runs > 0) {
		r->miss_run = blocks / donor_runs;
		r->miss_freed = r->freed_total;
		r->miss_at = now_us;
	}
}

void e4_room_freed(E4Room *r, uint64_t bytes)
{
	r->freed_total += bytes;
	r->freed_unmapped += bytes;
	r->freed_uncommitted += bytes;
}
