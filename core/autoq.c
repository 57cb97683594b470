#include "autoq.h"

#include <errno.h>
#include <string.h>
#include <glib.h>

/* A waiting file: its candidate and its place in the order of writes. */
typedef struct {
	E4AutoCandidate c;
	GList link;             /* in E4AutoQueue.order, data: this */
} Waiting;

struct E4AutoQueue {
	GMutex lock;
	size_t cap;
	GHashTable *waiting;    /* E4AutoHandle * (in the value) -> Waiting (g_free) */
	GQueue order;           /* Waiting by last write, oldest first: each
	                         * write moves its file to the tail, so taking
	                         * the quiet ones costs only what is taken */
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
	g_queue_init(&q->order);
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
		Waiting *w = g_hash_table_lookup(q->waiting, &c.file);
		if (w) {
			g_queue_unlink(&q->order, &w->link);
		} else if (g_hash_table_size(q->waiting) >= q->cap) {
			rc = -ENOSPC;
		} else {
			w = g_new0(Waiting, 1);
			w->link.data = w;
			w->c.file = c.file; /* the key: set before it is hashed */
			g_hash_table_insert(q->waiting, &w->c.file, w);
		}
		if (w) {
			c.last_us = now_us;
			w->c = c; /* the directory of the last write */
			g_queue_push_tail_link(&q->order, &w->link);
		}
	}
	if (rc < 0)
		q->dropped++;
	g_mutex_unlock(&q->lock);
	return rc;
}

size_t e4_autoq_take_quiet(E4AutoQueue *q, int64_t now_us, int64_t quiet_us, E4AutoCandidate *out, size_t max)
{
	size_t n = 0;
	g_mutex_lock(&q->lock);
	/* Callers note in time order (one drainer): the head is the oldest. */
	while (n < max && q->order.head) {
		Waiting *w = q->order.head->data;
		if (now_us - w->c.last_us < quiet_us)
			break;
		out[n++] = w->c;
		g_queue_unlink(&q->order, &w->link);
		g_hash_table_remove(q->waiting, &w->c.file); /* frees w */
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
