#include "plan.h"

#include "makeroom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

/* Blocks in one ext4 extent, and so in one block group's worth of run. */
#define EXTENT_BLOCKS 32768u
/* Files this large go first (as in defragtree.c). Bytes. */
#define LARGE_FILE (64u << 20)

typedef struct {
	uint64_t blocks;
	uint32_t runs, ideal, expected;
	double rank;
	size_t order;
	bool large;
	guint dir;      /* index of its directory, in the order met */
	GArray *taken;  /* uint64_t: the pieces of its donor */
} Cand;

struct E4Planner {
	E4DefragOpts opts;
	uint32_t block_size;
	bool worst_first;
	GArray *cands;  /* Cand */
	GSequence *free; /* extent lengths (blocks), as GSIZE_TO_POINTER, sorted */
	GHashTable *dirs; /* directory path -> index + 1 */
	E4Plan plan;
};

static gint by_len(gconstpointer a, gconstpointer b, gpointer user)
{
	(void)user;
	gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
	return (x > y) - (x < y);
}

static void cand_clear(gpointer data)
{
	Cand *c = data;
	if (c->taken)
		g_array_free(c->taken, TRUE);
}

E4Planner *e4_planner_new(const E4DefragOpts *opts, uint32_t block_size, bool worst_first)
{
	E4Planner *p = g_new0(E4Planner, 1);
	p->opts = *opts;
	p->block_size = block_size;
	p->worst_first = worst_first;
	p->cands = g_array_new(FALSE, TRUE, sizeof(Cand));
	g_array_set_clear_func(p->cands, cand_clear);
	p->free = g_sequence_new(NULL);
	p->dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	return p;
}

void e4_planner_free(E4Planner *p)
{
	if (!p)
		return;
	g_array_free(p->cands, TRUE);
	g_sequence_free(p->free);
	g_hash_table_destroy(p->dirs);
	e4_plan_clear(&p->plan);
	g_free(p);
}

void e4_plan_clear(E4Plan *plan)
{
	g_clear_pointer(&plan->largest, g_free);
}

void e4_planner_add(E4Planner *p, const char *path, const E4FileFigures *fig, bool excluded)
{
	if (excluded) {
		p->plan.skipped_excluded++;
		return;
	}
	if (!fig || !e4_defrag_needed(fig, &p->opts, p->block_size))
		return;
	g_autofree char *dir = g_path_get_dirname(path ? path : "");
	guint di = GPOINTER_TO_UINT(g_hash_table_lookup(p->dirs, dir));
	if (!di) {
		di = g_hash_table_size(p->dirs) + 1;
		g_hash_table_insert(p->dirs, g_steal_pointer(&dir), GUINT_TO_POINTER(di));
	}
	Cand c = { .dir = di - 1, .blocks = fig->blocks, .runs = fig->runs, .ideal = fig->ideal,
		   .expected = fig->runs, .rank = e4_figures_rank(fig), .order = p->cands->len,
		   .large = fig->size >= LARGE_FILE };
	g_array_append_val(p->cands, c);
	E4Plan *o = &p->plan;
	o->files++;
	o->bytes += fig->size;
	o->blocks += fig->blocks;
	o->runs_now += fig->runs;
	o->runs_ideal += fig->ideal;
	if (path && fig->blocks > o->largest_blocks) {
		g_free(o->largest);
		o->largest = g_strdup(path);
		o->largest_blocks = fig->blocks;
	}
}

static void give(E4Planner *p, uint64_t blocks)
{
	if (blocks)
		g_sequence_insert_sorted(p->free, GSIZE_TO_POINTER(blocks), by_len, NULL);
}

void e4_planner_free_extent(uint64_t start, uint64_t blocks, void *planner)
{
	(void)start;
	E4Planner *p = planner;
	give(p, blocks);
	p->plan.free_blocks += blocks;
	p->plan.free_extents++;
}

/* The smallest free extent of at least blocks, or the largest one. */
static GSequenceIter *fit(E4Planner *p, uint64_t blocks)
{
	if (g_sequence_is_empty(p->free))
		return NULL;
	GSequenceIter *it = g_sequence_search(p->free, GSIZE_TO_POINTER(blocks - 1), by_len, NULL);
	/* search gives the place after every element <= blocks - 1 */
	if (g_sequence_iter_is_end(it))
		it = g_sequence_iter_prev(it);
	return it;
}

/* Takes a donor of blocks from the free extents: its pieces (lengths), or
 * NULL when the free space is too small. */
static GArray *allocate(E4Planner *p, uint64_t blocks)
{
	GArray *taken = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	uint64_t left = blocks;
	while (left > 0) {
		GSequenceIter *it = fit(p, left);
		if (!it)
			break;
		uint64_t len = GPOINTER_TO_SIZE(g_sequence_get(it));
		uint64_t use = MIN(len, left);
		g_sequence_remove(it);
		give(p, len - use);
		g_array_append_val(taken, use);
		left -= use;
	}
	if (left > 0) {
		for (guint i = 0; i < taken->len; i++)
			give(p, g_array_index(taken, uint64_t, i));
		g_array_free(taken, TRUE);
		return NULL;
	}
	return taken;
}

/* Physical runs of a donor made of these pieces: one per piece. A piece
 * larger than an extent (128 MiB) is still one run: the allocator places
 * the donor's extents one after the other (corpus c contiguous: 4 files
 * whose ideal is 11 extents ended in 8 runs, and the plan, counting no
 * fewer runs than extents, said 11). */
static uint32_t runs_of(const GArray *taken)
{
	return taken->len;
}

static void give_back(E4Planner *p, GArray *taken)
{
	for (guint i = 0; i < taken->len; i++)
		give(p, g_array_index(taken, uint64_t, i));
	g_array_free(taken, TRUE);
}

/* A donor for c, kept when in fewer runs than c has now. */
static void try_donor(E4Planner *p, Cand *c)
{
	GArray *taken = allocate(p, c->blocks);
	if (!taken)
		return;
	uint32_t runs = runs_of(taken);
	if (runs >= c->expected) {
		give_back(p, taken);
		return;
	}
	c->expected = runs;
	if (c->taken)
		give_back(p, c->taken); /* the first donor's blocks, freed by the second */
	c->taken = taken;
}


static int walk_first(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	if (x->large != y->large)
		return x->large ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

static int worst_first(const void *a, const void *b)
{
	const Cand *x = a, *y = b;
	if (x->large != y->large)
		return x->large ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	return (x->order > y->order) - (x->order < y->order);
}

void e4_planner_finish(E4Planner *p, bool known, E4Plan *out)
{
	E4Plan *o = &p->plan;
	o->free_known = known;
	GArray *v = p->cands;
	if (v->len > 1)
		qsort(v->data, v->len, sizeof(Cand), p->worst_first ? worst_first : walk_first);
	for (guint i = 0; i < v->len; i++) {
		Cand *c = &g_array_index(v, Cand, i);
		if (known)
			try_donor(p, c);
		else
			c->expected = c->ideal;
	}
	/* Second pass: what the first freed, then the files still above their
	 * ideal. Where the moved files' old blocks lie is not known: those of
	 * one directory are taken to join into one free extent (files written
	 * together interleave, which is why a job moves a directory's files
	 * one after the other); those of different directories not. */
	g_autofree uint64_t *freed = g_new0(uint64_t, g_hash_table_size(p->dirs) + 1);
	for (guint i = 0; known && i < v->len; i++) {
		Cand *c = &g_array_index(v, Cand, i);
		if (c->expected < c->runs)
			freed[c->dir] += c->blocks;
	}
	for (guint d = 0; known && d < g_hash_table_size(p->dirs); d++)
		give(p, freed[d]);
	for (guint i = 0; known && i < v->len; i++) {
		Cand *c = &g_array_index(v, Cand, i);
		if (c->expected > c->ideal) {
			o->retry_blocks += c->blocks;
			try_donor(p, c);
		}
	}
	for (guint i = 0; i < v->len; i++) {
		const Cand *c = &g_array_index(v, Cand, i);
		o->runs_expected += c->expected;
		o->no_gain += c->expected >= c->runs;
		o->room_files += c->expected > c->ideal;
		if (c->expected > c->ideal && c->blocks >= E4_ROOM_MIN_FILE_BLOCKS && c->blocks <= E4_ROOM_MAX_REGION_BLOCKS)
			o->room_blocks += c->blocks;
	}
	*out = *o;
	o->largest = NULL; /* now out's */
}

/* Reads are this large: enough for the device's full speed. */
#define PROBE_CHUNK (1u << 20)

double e4_plan_probe_read(int fd, uint64_t max_bytes)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int dfd = open(path, O_RDONLY | O_DIRECT | O_NOATIME | O_CLOEXEC);
	if (dfd < 0 && errno == EPERM)
		dfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	void *buf = NULL;
	int rc = posix_memalign(&buf, 4096, PROBE_CHUNK);
	if (rc != 0) {
		close(dfd);
		return -rc;
	}
	uint64_t done = 0;
	gint64 t0 = g_get_monotonic_time();
	while (done < max_bytes) {
		ssize_t n = pread(dfd, buf, PROBE_CHUNK, (off_t)done);
		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
	int err = errno;
	free(buf);
	close(dfd);
	if (done == 0)
		return -(err ? err : EIO);
	return (double)done / MAX(secs, 1e-6);
}
