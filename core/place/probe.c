#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <glib.h>

#include "donor.h"
#include "fiemap.h"
#include "figures.h"
#include "freespace.h"

/* Where a new piece of len blocks landed: its first block, when it is one
 * run of exactly len blocks; UINT64_MAX otherwise (split, or no map). */
static uint64_t landed_at(int fd, uint64_t len, uint32_t bs)
{
	E4ExtentMap map = {0};
	uint64_t at = UINT64_MAX;
	if (e4_fiemap_read(fd, &map) == 0 && map.n > 0 && e4_count_runs(map.ext, map.n) == 1) {
		uint64_t bytes = 0;
		for (size_t i = 0; i < map.n; i++)
			bytes += map.ext[i].length;
		if (bytes == len * bs)
			at = map.ext[0].physical / bs;
	}
	e4_extent_map_clear(&map);
	return at;
}

/* Whether the new piece of len blocks lies wholly inside [start, end),
 * in one run or more; *first: its lowest block. */
static bool landed_inside(int fd, uint64_t len, uint64_t start, uint64_t end, uint32_t bs, uint64_t *first)
{
	E4ExtentMap map = {0};
	bool inside = e4_fiemap_read(fd, &map) == 0 && map.n > 0;
	uint64_t blocks = 0;
	*first = UINT64_MAX;
	for (size_t i = 0; inside && i < map.n; i++) {
		uint64_t ph = map.ext[i].physical / bs, n = map.ext[i].length / bs;
		inside = ph >= start && ph + n <= end;
		blocks += n;
		*first = MIN(*first, ph);
	}
	e4_extent_map_clear(&map);
	return inside && blocks == len;
}

static void add_fence(E4Placed *p, int fd, uint64_t blocks)
{
	p->fence_fd = g_renew(int, p->fence_fd, p->nfences + 1);
	p->fence_fd[p->nfences++] = fd;
	p->fenced_blocks += blocks;
}

int e4_place_window(int dirfd, uint64_t start, uint64_t blocks, uint32_t block_size, uint64_t max_fence,
		    E4Placed *out)
{
	*out = (E4Placed){0};
	if (blocks == 0)
		return -EINVAL;
	out->piece_blocks = MIN(blocks, (uint64_t)E4_PLACE_PIECE_MAX);
	if (blocks % out->piece_blocks || start % out->piece_blocks)
		return -EINVAL;
	out->n = blocks / out->piece_blocks;
	out->piece_fd = g_new(int, out->n);
	for (uint64_t i = 0; i < out->n; i++)
		out->piece_fd[i] = -1;
	/* Each allocation lands in a slot of the window (kept, whatever the
	 * slot: all are alike) or elsewhere (fenced, so the next one does
	 * not land there again). */
	for (uint64_t left = out->n; left > 0;) {
		int fd = e4_donor_create_pow2(dirfd, out->piece_blocks, block_size);
		if (fd < 0)
			return fd;
		uint64_t at = landed_at(fd, out->piece_blocks, block_size);
		uint64_t slot = at >= start && at != UINT64_MAX ? (at - start) / out->piece_blocks : out->n;
		if (slot < out->n && (at - start) % out->piece_blocks == 0 && out->piece_fd[slot] < 0) {
			out->piece_fd[slot] = fd;
			left--;
			continue;
		}
		if (out->fenced_blocks + out->piece_blocks > max_fence) {
			close(fd);
			return -ENOSPC;
		}
		add_fence(out, fd, out->piece_blocks);
	}
	out->piece_len = g_new(uint64_t, out->n);
	for (uint64_t i = 0; i < out->n; i++)
		out->piece_len[i] = out->piece_blocks;
	out->runs = out->n;
	return 0;
}

/* The largest free extent inside a window, clipped to it. */
typedef struct {
	uint64_t start, end;       /* the window */
	uint64_t in_len;
} Largest;

static void note_free(uint64_t at, uint64_t len, void *user)
{
	Largest *l = user;
	uint64_t a = MAX(at, l->start), b = MIN(at + len, l->end);
	if (a < b && b - a > l->in_len)
		l->in_len = b - a;
}

/* Punches out of fd (a miss about to be fenced) its blocks inside the
 * window [start, end), so that they stay free for the next requests.
 * Returns the blocks punched. */
static uint64_t release_inside(int fd, uint64_t start, uint64_t end, uint32_t bs)
{
	E4ExtentMap map = {0};
	uint64_t punched = 0;
	if (e4_fiemap_read(fd, &map) == 0)
		for (size_t i = 0; i < map.n; i++) {
			uint64_t ph = map.ext[i].physical / bs, n = map.ext[i].length / bs;
			uint64_t a = MAX(ph, start), b = MIN(ph + n, end);
			if (a >= b)
				continue;
			off_t off = (off_t)(map.ext[i].logical + (a - ph) * bs);
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, (off_t)((b - a) * bs)) == 0)
				punched += b - a;
		}
	e4_extent_map_clear(&map);
	return punched;
}

/* A piece kept by e4_place_fit, until they are put in physical order. */
typedef struct {
	uint64_t at, len;
	int fd;
} Kept;

static gint kept_cmp(gconstpointer a, gconstpointer b)
{
	const Kept *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

void e4_placed_append(E4Placed *p, int fd, uint64_t len, uint32_t runs)
{
	p->piece_fd = g_renew(int, p->piece_fd, p->n + 1);
	p->piece_len = g_renew(uint64_t, p->piece_len, p->n + 1);
	p->piece_fd[p->n] = fd;
	p->piece_len[p->n++] = len;
	p->runs += runs;
}

int e4_place_fit(int dirfd, uint64_t start, uint64_t blocks, uint64_t need, uint32_t block_size,
		 uint64_t max_fence, E4Placed *out)
{
	*out = (E4Placed){0};
	if (blocks == 0 || need == 0 || need > blocks)
		return -EINVAL;
	g_autoptr(GArray) kept = g_array_new(FALSE, FALSE, sizeof(Kept));
	uint64_t placed = 0;
	unsigned misses = 0;
	int rc = 0;
	while (rc == 0 && placed < need) {
		Largest l = { .start = start, .end = start + blocks };
		rc = e4_freespace_each(dirfd, block_size, note_free, &l);
		if (rc < 0)
			break;
		if (l.in_len < E4_PLACE_FIT_MIN) {
			rc = -ENOSPC;
			break;
		}
		/* The window's largest free extent. Tried on corpus c cheese
		 * (3 runs each, one aged image): fencing the largest free
		 * extent outside first whenever it was no smaller than the
		 * request left 397 runs, doing so only after a miss 751; this
		 * alone 39. */
		uint64_t len = MIN(l.in_len, (uint64_t)E4_PLACE_PIECE_MAX);
		E4Range all = { 0, len };
		E4Ranges one = { &all, 1 };
		int fd = e4_donor_create(dirfd, &one, block_size);
		if (fd < 0) {
			rc = fd;
			break;
		}
		Kept k = { .len = len, .fd = fd };
		if (landed_inside(fd, len, start, start + blocks, block_size, &k.at)) {
			g_array_append_val(kept, k);
			placed += len;
			continue;
		}
		if (++misses > E4_PLACE_FIT_MISSES) {
			close(fd);
			rc = -ENOSPC;
			break;
		}
		/* A miss that took some of the window (split, or across its
		 * edge) gives that back: measured on corpus c cheese, such
		 * fences left the last 7,000 blocks of a file no room. Freed
		 * blocks can be allocated once committed. */
		uint64_t back = release_inside(fd, start, start + blocks, block_size);
		if (out->fenced_blocks + len - back > max_fence) {
			close(fd);
			rc = -ENOSPC;
		} else {
			add_fence(out, fd, len - back);
		}
		if (back)
			syncfs(dirfd);
	}
	g_array_sort(kept, kept_cmp);
	for (guint i = 0; i < kept->len; i++)
		e4_placed_append(out, g_array_index(kept, Kept, i).fd, g_array_index(kept, Kept, i).len, 1);
	return rc;
}

void e4_placed_drop_fences(E4Placed *p)
{
	for (uint64_t i = 0; i < p->nfences; i++)
		close(p->fence_fd[i]);
	g_clear_pointer(&p->fence_fd, g_free);
	p->nfences = 0;
	p->fenced_blocks = 0;
}

void e4_placed_clear(E4Placed *p)
{
	e4_placed_drop_fences(p);
	for (uint64_t i = 0; p->piece_fd && i < p->n; i++)
		if (p->piece_fd[i] >= 0)
			close(p->piece_fd[i]);
	g_clear_pointer(&p->piece_fd, g_free);
	g_clear_pointer(&p->piece_len, g_free);
	p->n = 0;
	p->runs = 0;
}
