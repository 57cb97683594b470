#include "content.h"

#include <stdbool.h>
#include <glib.h>

typedef struct {
	fuse_req_t req;
	size_t size;
	off_t off;
} PendingRead;

struct E4Content {
	gatomicrefcount refs;
	GMutex lock;    /* guards done and pending */
	bool done;      /* rc, data and len are fixed once set */
	int rc;
	char *data;
	size_t len;
	GArray *pending; /* PendingRead, arrived before done */
};

E4Content *e4_content_new(void)
{
	E4Content *c = g_new0(E4Content, 1);
	g_atomic_ref_count_init(&c->refs);
	g_mutex_init(&c->lock);
	c->pending = g_array_new(FALSE, FALSE, sizeof(PendingRead));
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
	g_array_free(c->pending, TRUE);
	g_mutex_clear(&c->lock);
	g_free(c);
}

static void answer(const E4Content *c, fuse_req_t req, size_t size, off_t off)
{
	if (c->rc < 0)
		fuse_reply_err(req, -c->rc);
	else if (off < 0 || (size_t)off >= c->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, c->data + off, MIN(c->len - (size_t)off, size));
}

void e4_content_finish(E4Content *c, int rc, char *data, size_t len)
{
	g_mutex_lock(&c->lock);
	c->rc = rc;
	c->data = data;
	c->len = rc < 0 ? 0 : len;
	c->done = true;
	GArray *waiting = c->pending;
	c->pending = g_array_new(FALSE, FALSE, sizeof(PendingRead));
	g_mutex_unlock(&c->lock);
	for (guint i = 0; i < waiting->len; i++) {
		const PendingRead *r = &g_array_index(waiting, PendingRead, i);
		answer(c, r->req, r->size, r->off);
	}
	g_array_free(waiting, TRUE);
}

void e4_content_read(E4Content *c, fuse_req_t req, size_t size, off_t off)
{
	/* Referenced: a reader killed meanwhile closes its file, and the
	 * release may drop the handle's reference while this answers. */
	e4_content_ref(c);
	g_mutex_lock(&c->lock);
	bool done = c->done;
	if (!done)
		g_array_append_val(c->pending, ((PendingRead){ req, size, off }));
	g_mutex_unlock(&c->lock);
	/* Fixed once done: answered without the lock. A pending read is
	 * answered by the generator, which holds its own reference. */
	if (done)
		answer(c, req, size, off);
	e4_content_unref(c);
}
