#include "handles.h"

struct E4Handles {
	GMutex lock;
	GHashTable *open; /* the objects held */
	GDestroyNotify drop;
};

E4Handles *e4_handles_new(GDestroyNotify drop)
{
	E4Handles *h = g_new0(E4Handles, 1);
	g_mutex_init(&h->lock);
	h->open = g_hash_table_new(g_direct_hash, g_direct_equal);
	h->drop = drop;
	return h;
}

uint64_t e4_handles_open(E4Handles *h, gpointer obj)
{
	g_mutex_lock(&h->lock);
	g_hash_table_add(h->open, obj);
	g_mutex_unlock(&h->lock);
	return (uint64_t)(uintptr_t)obj;
}

void e4_handles_release(E4Handles *h, uint64_t fh)
{
	gpointer obj = e4_handles_get(fh);
	if (!obj)
		return;
	g_mutex_lock(&h->lock);
	gboolean held = g_hash_table_remove(h->open, obj);
	g_mutex_unlock(&h->lock);
	/* Dropped outside the lock: freeing may take other locks. */
	if (held)
		h->drop(obj);
}

void e4_handles_free(E4Handles *h)
{
	GHashTableIter it;
	gpointer obj;
	g_hash_table_iter_init(&it, h->open);
	while (g_hash_table_iter_next(&it, &obj, NULL))
		h->drop(obj);
	g_hash_table_destroy(h->open);
	g_mutex_clear(&h->lock);
	g_free(h);
}
