#include "autoq.h"

#include <errno.h>
#include <string.h>
#include <glib.h>

struct E4AutoQueue {
	GMutex lock;
	size_t cap;
	GHashTable *waiting;    /* E4AutoHandle * (in the value) -> E4AutoCandidate */
	GHashTable *moved;      /* E4AutoHandle * (g_free) -> int64_t * (g_free): when moved */
	uint64_t dropped;
};

static guint handle_hash(gconstpointer p)
{
	const E4AutoHandle *h = p;
	guint v = (guint)h->fh.handle_type * 16777619u;
	for (unsigned i = 0; i < h->fh.handle_bytes; i++)
		v = (v ^ h->bytes[i]) * 16777619u;
	return v;
}

static gboolean handle_equal(gconstpointer a, gconstpointer b)
{
	const E4AutoHandle *x = a, *y = b;
	return x->fh.handle_type == y->fh.handle_type && x->fh.handle_bytes == y->fh.handle_bytes &&
	       memcmp(x->bytes, y->bytes, x->fh.handle_bytes) == 0;
}

/* Copies a kernel handle into the fixed form; false when too long. The
 * unused bytes are zeroed, so that copies compare by their used bytes. */
static bool handle_copy(E4AutoHandle *dst, const struct file_handle *src)
{
	if (src->handle_bytes > E4_AUTO_HANDLE_MAX)
		return false;
	memset(dst, 0, sizeof(*dst));
	dst->fh.handle_type = src->handle_type;
	dst->fh.handle_bytes = src->handle_bytes;
	memcpy(dst->bytes, src->f_handle, src->handle_bytes);
	return true;
}

E4AutoQueue *e4_autoq_new(size_t cap)
{
	E4AutoQueue *q = g_new0(E4AutoQueue, 1);
	g_mutex_init(&q->lock);
	q->cap = cap ? cap : 1;
	q->waiting = g_hash_table_new_full(handle_hash, handle_equal, NULL, g_free);
	q->moved = g_hash_table_new_full(handle_hash, handle_equal, g_free, g_free);
	return q;
}

void e4_autoq_free(E4AutoQueue *q)
{
	if (!q)
		return;
	g_hash_table_destroy(q->waiting);
	g_hash_table_destroy(q->moved);
	g_mutex_clear(&q->lock);
	g_free(q);
}

int e4_autoq_note(E4AutoQueue *q, const struct file_handle *file, const struct file_handle *dir, int64_t now_us)
{
	E4AutoCandidate c;
	int rc = 0;
	g_mutex_lock(&q->lock);
	if (!handle_copy(&c.file, file) || !handle_copy(&c.dir, dir)) {
		rc = -ENAMETOOLONG;
	} else {
		E4AutoCandidate *known = g_hash_table_lookup(q->waiting, &c.file);
		if (known) {
			known->last_us = now_us;
			known->dir = c.dir; /* where it was written last */
		} else if (g_hash_table_size(q->waiting) >= q->cap) {
			rc = -ENOSPC;
		} else {
			c.last_us = now_us;
			E4AutoCandidate *add = g_memdup2(&c, sizeof(c));
			g_hash_table_insert(q->waiting, &add->file, add);
		}
	}
	if (rc < 0)
		q->dropped++;
	g_mutex_unlock(&q->lock);
	return rc;
}

static gint by_last(gconstpointer a, gconstpointer b)
{
	const E4AutoCandidate *x = *(E4AutoCandidate *const *)a, *y = *(E4AutoCandidate *const *)b;
	return x->last_us < y->last_us ? -1 : x->last_us > y->last_us;
}

size_t e4_autoq_take_quiet(E4AutoQueue *q, int64_t now_us, int64_t quiet_us, E4AutoCandidate *out, size_t max)
{
	g_autoptr(GPtrArray) due = g_ptr_array_new();
	g_mutex_lock(&q->lock);
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, q->waiting);
	while (g_hash_table_iter_next(&it, NULL, &value))
		if (now_us - ((E4AutoCandidate *)value)->last_us >= quiet_us)
			g_ptr_array_add(due, value);
	g_ptr_array_sort(due, by_last);
	size_t n = MIN(max, due->len);
	for (size_t i = 0; i < n; i++) {
		E4AutoCandidate *c = g_ptr_array_index(due, i);
		out[i] = *c;
		g_hash_table_remove(q->waiting, &c->file); /* frees c */
	}
	g_mutex_unlock(&q->lock);
	return n;
}

/* Forgets the moves older than the window; with the lock held. */
static void prune_moved(E4AutoQueue *q, int64_t now_us, int64_t window_us)
{
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, q->moved);
	while (g_hash_table_iter_next(&it, NULL, &value))
		if (now_us - *(int64_t *)value >= window_us)
			g_hash_table_iter_remove(&it);
}

void e4_autoq_moved(E4AutoQueue *q, const struct file_handle *file, int64_t now_us, int64_t window_us)
{
	E4AutoHandle h;
	if (!handle_copy(&h, file))
		return;
	g_mutex_lock(&q->lock);
	/* Pruned only when full: each lookup judges its own entry's age. */
	if (g_hash_table_size(q->moved) >= q->cap)
		prune_moved(q, now_us, window_us);
	/* Still full: moved_within refuses every file not recorded, so
	 * nothing is moved twice however many moved. */
	if (g_hash_table_size(q->moved) < q->cap || g_hash_table_contains(q->moved, &h))
		g_hash_table_replace(q->moved, g_memdup2(&h, sizeof(h)), g_memdup2(&now_us, sizeof(now_us)));
	g_mutex_unlock(&q->lock);
}

bool e4_autoq_moved_within(E4AutoQueue *q, const struct file_handle *file, int64_t now_us, int64_t window_us)
{
	E4AutoHandle h;
	if (!handle_copy(&h, file))
		return true;
	g_mutex_lock(&q->lock);
	const int64_t *when = g_hash_table_lookup(q->moved, &h);
	if (!when && g_hash_table_size(q->moved) >= q->cap)
		prune_moved(q, now_us, window_us);
	bool within = when ? now_us - *when < window_us : g_hash_table_size(q->moved) >= q->cap;
	g_mutex_unlock(&q->lock);
	return within;
}

size_t e4_autoq_len(E4AutoQueue *q)
{
	g_mutex_lock(&q->lock);
	size_t n = g_hash_table_size(q->waiting);
	g_mutex_unlock(&q->lock);
	return n;
}

uint64_t e4_autoq_dropped(E4AutoQueue *q)
{
	g_mutex_lock(&q->lock);
	uint64_t n = q->dropped;
	g_mutex_unlock(&q->lock);
	return n;
}

const char *e4_auto_skip_name(E4AutoSkip s)
{
	static const char *const names[E4_AUTO_SKIP__COUNT] = {
		[E4_AUTO_SKIP_GONE] = "gone",
		[E4_AUTO_SKIP_OUTSIDE] = "outside",
		[E4_AUTO_SKIP_EXCLUDED] = "excluded",
		[E4_AUTO_SKIP_BELOW] = "below_threshold",
		[E4_AUTO_SKIP_WINDOW] = "window",
		[E4_AUTO_SKIP_NO_GAIN] = "no_gain",
		[E4_AUTO_SKIP_ENGINE] = "engine",
		[E4_AUTO_SKIP_FAILED] = "failed",
	};
	return (unsigned)s < E4_AUTO_SKIP__COUNT ? names[s] : "unknown";
}
