#include "region.h"

#include <errno.h>
#include <stdbool.h>
#include <glib.h>

/* Prefix sums over the pieces: blocks known (free or data) and blocks of
 * data that must move, up to each piece's start. */
typedef struct {
	const E4BlockMap *m;
	uint32_t skip;
	const E4RegionQuery *q;
	uint64_t *known, *moving;  /* [i]: sums over pieces [0, i) */
	uint64_t *gaps;            /* [i]: unknown runs before piece i: gaps
	                            * between pieces and unknown pieces */
} Sums;

static bool counts_free(const Sums *s, const E4Piece *p)
{
	return p->file == E4_PIECE_FREE || p->file == s->skip;
}

/* A piece that cannot move is as unknown as metadata. */
static bool counts_known(const Sums *s, const E4Piece *p)
{
	if (p->file == E4_PIECE_FREE || p->file == s->skip)
		return true;
	if (s->q->max_piece && p->len > s->q->max_piece)
		return false;
	return !s->q->pinned || !s->q->pinned[p->file];
}

static bool counts_moving(const Sums *s, const E4Piece *p)
{
	return counts_known(s, p) && !counts_free(s, p);
}

/* The first piece starting at or after at. */
static size_t first_from(const E4BlockMap *m, uint64_t at)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sums of the blocks of [0, at): known blocks and moving blocks. */
static void sums_until(const Sums *s, uint64_t at, uint64_t *known, uint64_t *moving)
{
	const E4BlockMap *m = s->m;
	size_t lo = first_from(m, at);
	*known = s->known[lo];
	*moving = s->moving[lo];
	if (lo == 0)
		return;
	/* The piece before may reach past at: only its part before at counts. */
	const E4Piece *p = &m->v[lo - 1];
	uint64_t end = p->start + p->len;
	if (end > at) {
		uint64_t over = end - at;
		if (counts_known(s, p))
			*known -= over;
		if (counts_moving(s, p))
			*moving -= over;
	}
}

static uint64_t end_of(const E4BlockMap *m, size_t i)
{
	return i ? m->v[i - 1].start + m->v[i - 1].len : 0;
}

/* Runs of unknown blocks in [a, b): gaps between pieces and unknown
 * pieces (neighbouring ones count apart: about). */
static uint64_t unknown_runs(const Sums *s, uint64_t a, uint64_t b)
{
	const E4BlockMap *m = s->m;
	size_t la = first_from(m, a), lb = first_from(m, b);
	uint64_t runs = s->gaps[lb] - s->gaps[la];
	if (la < lb && m->v[la].start == a && m->v[la].start > end_of(m, la))
		runs--; /* the gap before the first piece ends at a */
	if (la > 0 && end_of(m, la) > a && !counts_known(s, &m->v[la - 1]))
		runs++; /* an unknown piece reaching in */
	uint64_t next = lb < m->n ? m->v[lb].start : m->total_blocks;
	if (end_of(m, lb) < b && next > end_of(m, lb))
		runs++; /* the gap reaching out */
	return runs;
}

/* Tries the window [start, start + len). */
static void consider(const Sums *s, uint64_t start, uint64_t len, E4Region *best, bool *found)
{
	if (start + len > s->m->total_blocks || start + len < start)
		return;
	const E4RegionQuery *q = s->q;
	for (size_t i = 0; i < q->navoid; i++)
		if (start < q->avoid[i].start + q->avoid[i].len && q->avoid[i].start < start + len)
			return;
	uint64_t k0, m0, k1, m1;
	sums_until(s, start, &k0, &m0);
	sums_until(s, start + len, &k1, &m1);
	uint64_t unknown = len - (k1 - k0), used = m1 - m0;
	uint64_t runs = unknown ? unknown_runs(s, start, start + len) : 0;
	uint64_t bound = len / E4_REGION_UNKNOWN_PER;
	bool fits = q->need ? runs <= bound && unknown <= len - q->need : unknown <= bound;
	if (!fits || used < q->min_used || (q->max_used && used > q->max_used))
		return;
	uint64_t rank = q->need ? runs : unknown, best_rank = q->need ? best->unknown_runs : best->unknown;
	if (!*found || rank < best_rank || (rank == best_rank && used < best->used)) {
		*best = (E4Region){ start, len, used, unknown, runs };
		*found = true;
	}
}

int e4_region_choose(const E4BlockMap *m, uint64_t len, uint64_t align, uint32_t skip_file, E4Region *out)
{
	E4RegionQuery q = { .len = len, .align = align, .skip_file = skip_file };
	return e4_region_find(m, &q, out);
}

int e4_region_find(const E4BlockMap *m, const E4RegionQuery *q, E4Region *out)
{
	uint64_t len = q->len, align = q->align;
	if (len == 0 || m->n == 0)
		return -ENOSPC;
	Sums s = { .m = m, .skip = q->skip_file, .q = q };
	s.known = g_new(uint64_t, m->n + 1);
	s.moving = g_new(uint64_t, m->n + 1);
	s.gaps = g_new(uint64_t, m->n + 1);
	s.known[0] = s.moving[0] = s.gaps[0] = 0;
	for (size_t i = 0; i < m->n; i++) {
		const E4Piece *p = &m->v[i];
		s.known[i + 1] = s.known[i] + (counts_known(&s, p) ? p->len : 0);
		s.moving[i + 1] = s.moving[i] + (counts_moving(&s, p) ? p->len : 0);
		s.gaps[i + 1] = s.gaps[i] + (p->start > end_of(m, i)) + !counts_known(&s, p);
	}
	bool found = false;
	uint64_t last = m->v[m->n - 1].start + m->v[m->n - 1].len;
	for (uint64_t at = m->v[0].start / align * align; align > 1 && at + len <= last; at += align)
		consider(&s, at, len, out, &found);
	for (size_t i = 0; align <= 1 && i < m->n; i++) {
		const E4Piece *p = &m->v[i];
		consider(&s, p->start, len, out, &found);
		uint64_t end = p->start + p->len;
		if (end >= len)
			consider(&s, end - len, len, out, &found);
	}
	g_free(s.known);
	g_free(s.moving);
	g_free(s.gaps);
	return found ? 0 : -ENOSPC;
}
