#include "probe.h"

#include <errno.h>
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

/* Keeps fd as the next piece (len blocks at physical at). */
static void add_piece(E4Placed *p, int fd, uint64_t at, uint64_t len, GArray *starts)
{
	p->piece_fd = g_renew(int, p->piece_fd, p->n + 1);
	p->piece_len = g_renew(uint64_t, p->piece_len, p->n + 1);
	p->piece_fd[p->n] = fd;
	p->piece_len[p->n++] = len;
	g_array_append_val(starts, at);
}

/* Sorts the pieces by their physical start. */
static void order_pieces(E4Placed *p, const GArray *starts)
{
	for (uint64_t i = 1; i < p->n; i++)
		for (uint64_t j = i; j > 0 && g_array_index(starts, uint64_t, j - 1) > g_array_index(starts, uint64_t, j);
		     j--) {
			uint64_t t = g_array_index(starts, uint64_t, j);
			g_array_index(starts, uint64_t, j) = g_array_index(starts, uint64_t, j - 1);
			g_array_index(starts, uint64_t, j - 1) = t;
			int f = p->piece_fd[j];
			p->piece_fd[j] = p->piece_fd[j - 1];
			p->piece_fd[j - 1] = f;
			uint64_t l = p->piece_len[j];
			p->piece_len[j] = p->piece_len[j - 1];
			p->piece_len[j - 1] = l;
		}
}

int e4_place_fit(int dirfd, uint64_t start, uint64_t blocks, uint64_t need, uint32_t block_size,
		 uint64_t max_fence, E4Placed *out)
{
	*out = (E4Placed){0};
	if (blocks == 0 || need == 0 || need > blocks)
		return -EINVAL;
	g_autoptr(GArray) starts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	uint64_t placed = 0;
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
		uint64_t at = landed_at(fd, len, block_size);
		if (at != UINT64_MAX && at >= start && at + len <= start + blocks) {
			add_piece(out, fd, at, len, starts);
			placed += len;
		} else if (out->fenced_blocks + len > max_fence) {
			close(fd);
			rc = -ENOSPC;
		} else {
			add_fence(out, fd, len);
		}
	}
	order_pieces(out, starts);
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
}
