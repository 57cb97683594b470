#include "content.h"

#include <stdbool.h>
#include <glib.h>

struct E4Content {
	gatomicrefcount refs;
	GMutex lock;
	GCond done_cond;
	bool done;
	int rc;
	char *data;
	size_t len;
};

E4Content *e4_content_new(void)
{
	E4Content *c = g_new0(E4Content, 1);
	g_atomic_ref_count_init(&c->refs);
	g_mutex_init(&c->lock);
	g_cond_init(&c->done_cond);
	return c;
}

E4Content *e4_content_ref(E4Content *c)
{
	g_atomic_ref_count_inc(&c->refs);
	return c;
}

void e4_content_unref(E4Content *c)
{
	if (!g_atomic_ref_count_dec(&c->refs))
		return;
	g_free(c->data);
	g_cond_clear(&c->done_cond);
	g_mutex_clear(&c->lock);
	g_free(c);
}

void e4_content_finish(E4Content *c, int rc, char *data, size_t len)
{
	g_mutex_lock(&c->lock);
	c->rc = rc;
	c->data = data;
	c->len = rc < 0 ? 0 : len;
	c->done = true;
	g_cond_broadcast(&c->done_cond);
	g_mutex_unlock(&c->lock);
}

int e4_content_wait(E4Content *c, const char **data, size_t *len)
{
	g_mutex_lock(&c->lock);
	while (!c->done)
		g_cond_wait(&c->done_cond, &c->lock);
	g_mutex_unlock(&c->lock);
	/* Fixed once done: read without the lock. */
	*data = c->data;
	*len = c->len;
	return c->rc;
}
