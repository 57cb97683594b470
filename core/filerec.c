#include "filerec.h"

#include <string.h>
#include <linux/fiemap.h>
#include <glib.h>

struct E4FileExtra {
	E4FileFigures fig;
	uint64_t ino;
};

/* bits: flags 0-3, skip + 1 in 4-6, form in 7-8, extents in 9-15. */
#define SKIP_SHIFT 4
#define SKIP_MASK (7u << SKIP_SHIFT)
#define FORM_SHIFT 7
#define FORM_MASK (3u << FORM_SHIFT)
#define RUNS_SHIFT 9
#define RUNS_MAX 127u

enum {
	FORM_ZERO,      /* every figure 0 but size (skipped, or never inspected) */
	FORM_RUNS,      /* n records, each its own run (filefrag's and
	                 * e4defrag's), no hole, nothing unwritten */
	FORM_EXTRA,     /* in the side record */
};

#define FIRST_MAX ((UINT64_C(1) << 48) - 1)

static unsigned form(const E4FileRec *r)
{
	return (r->bits & FORM_MASK) >> FORM_SHIFT;
}

static void set_form(E4FileRec *r, unsigned f)
{
	r->bits = (uint16_t)((r->bits & ~FORM_MASK) | (f << FORM_SHIFT));
}

static E4FileExtra *extra(const E4FileRec *r)
{
	uintptr_t p = (uintptr_t)r->size;
	return form(r) == FORM_EXTRA ? (E4FileExtra *)p : NULL;
}

bool e4_figures_equal(const E4FileFigures *a, const E4FileFigures *b)
{
	return a->size == b->size && a->blocks == b->blocks && a->unwritten_blocks == b->unwritten_blocks &&
	       a->records == b->records && a->runs == b->runs && a->e4_phys_runs == b->e4_phys_runs &&
	       a->holes == b->holes && a->best == b->best && a->ideal == b->ideal && a->flags == b->flags &&
	       a->first_block == b->first_block && a->end_block == b->end_block;
}

/* What the compact forms keep besides the size. */
typedef struct {
	uint64_t blocks, first;
	unsigned runs;
	int32_t end_delta;
} Compact;

/* The figures a compact form stands for. */
static void rebuild(unsigned f, uint64_t size, const Compact *c, const E4Geometry *geom, E4FileFigures *out)
{
	*out = (E4FileFigures){ .size = size };
	if (f != FORM_RUNS)
		return;
	out->blocks = c->blocks;
	out->records = out->runs = out->e4_phys_runs = c->runs;
	out->best = e4_best_count(c->blocks, geom);
	out->ideal = e4_ideal_count(c->blocks);
	out->flags = FIEMAP_EXTENT_LAST;
	out->first_block = c->first;
	out->end_block = c->first + c->blocks + (uint64_t)(int64_t)c->end_delta;
}

/* The compact form fig has (and what it keeps, in c), or FORM_EXTRA when
 * none rebuilds it exactly. */
static unsigned compact_form(const E4FileFigures *fig, const E4Geometry *geom, Compact *c)
{
	E4FileFigures back;
	*c = (Compact){0};
	rebuild(FORM_ZERO, fig->size, c, geom, &back);
	if (e4_figures_equal(fig, &back))
		return FORM_ZERO;
	int64_t delta = (int64_t)(fig->end_block - fig->first_block - fig->blocks);
	if (fig->blocks > UINT32_MAX || fig->first_block > FIRST_MAX || fig->records == 0 ||
	    fig->records > RUNS_MAX || delta < INT32_MIN || delta > INT32_MAX)
		return FORM_EXTRA;
	*c = (Compact){ fig->blocks, fig->first_block, fig->records, (int32_t)delta };
	rebuild(FORM_RUNS, fig->size, c, geom, &back);
	return e4_figures_equal(fig, &back) ? FORM_RUNS : FORM_EXTRA;
}

void e4_filerec_init(E4FileRec *r, uint32_t name, uint64_t ino)
{
	*r = (E4FileRec){ .name = name };
	e4_filerec_set_skip(r, -1);
	E4FileFigures zero = {0};
	e4_filerec_set(r, ino, &zero, NULL);
}

void e4_filerec_clear(E4FileRec *r)
{
	g_free(extra(r));
	*r = (E4FileRec){0};
}

void e4_filerec_copy(E4FileRec *dst, const E4FileRec *src)
{
	*dst = *src;
	const E4FileExtra *x = extra(src);
	if (x)
		dst->size = (uintptr_t)g_memdup2(x, sizeof(*x));
}

void e4_filerec_set(E4FileRec *r, uint64_t ino, const E4FileFigures *fig, const E4Geometry *geom)
{
	E4FileExtra *x = extra(r);
	Compact c;
	unsigned f = compact_form(fig, geom, &c);
	if (ino > UINT32_MAX)
		f = FORM_EXTRA;
	if (f == FORM_EXTRA) {
		if (!x)
			x = g_new(E4FileExtra, 1);
		*x = (E4FileExtra){ *fig, ino };
		r->ino = 0;
		r->size = (uintptr_t)x;
		r->blocks = r->first_lo = r->first_hi = 0;
		r->end_delta = 0;
		c.runs = 0;
	} else {
		g_free(x);
		r->ino = (uint32_t)ino;
		r->size = fig->size;
		r->blocks = (uint32_t)c.blocks;
		r->first_lo = (uint32_t)c.first;
		r->first_hi = (uint16_t)(c.first >> 32);
		r->end_delta = c.end_delta;
	}
	set_form(r, f);
	r->bits = (uint16_t)((r->bits & ((1u << RUNS_SHIFT) - 1)) | (c.runs << RUNS_SHIFT));
}

void e4_filerec_figures(const E4FileRec *r, const E4Geometry *geom, E4FileFigures *out)
{
	const E4FileExtra *x = extra(r);
	if (x) {
		*out = x->fig;
		return;
	}
	Compact c = { r->blocks, (uint64_t)r->first_hi << 32 | r->first_lo, r->bits >> RUNS_SHIFT,
		      r->end_delta };
	rebuild(form(r), r->size, &c, geom, out);
}

uint64_t e4_filerec_ino(const E4FileRec *r)
{
	const E4FileExtra *x = extra(r);
	return x ? x->ino : r->ino;
}

uint64_t e4_filerec_size(const E4FileRec *r)
{
	const E4FileExtra *x = extra(r);
	return x ? x->fig.size : r->size;
}

bool e4_filerec_has_extra(const E4FileRec *r)
{
	return extra(r) != NULL;
}

size_t e4_filerec_extra_bytes(const E4FileRec *r)
{
	return extra(r) ? sizeof(E4FileExtra) : 0;
}

int e4_filerec_skip(const E4FileRec *r)
{
	return (int)((r->bits & SKIP_MASK) >> SKIP_SHIFT) - 1;
}

void e4_filerec_set_skip(E4FileRec *r, int skip)
{
	unsigned v = (unsigned)(skip + 1) & 7u;
	r->bits = (uint16_t)((r->bits & ~SKIP_MASK) | (v << SKIP_SHIFT));
}
