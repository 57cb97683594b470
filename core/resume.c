#include "resume.h"

#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#define MAGIC "e4infofs-resume 1\n"
/* State files larger than this are damaged (about 60 bytes a file). */
#define MAX_BYTES (1ull << 30)

typedef struct {
	uint64_t ino, size;
	int64_t mtime_ns;
} Key;

struct E4Resume {
	GHashTable *keys; /* Key * (owned) -> itself */
};

static guint key_hash(gconstpointer p)
{
	const Key *k = p;
	return g_int64_hash(&k->ino) ^ g_int64_hash(&k->size) ^ g_int64_hash(&k->mtime_ns);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const Key *x = a, *y = b;
	return x->ino == y->ino && x->size == y->size && x->mtime_ns == y->mtime_ns;
}

E4Resume *e4_resume_new(void)
{
	E4Resume *r = g_new0(E4Resume, 1);
	r->keys = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
	return r;
}

void e4_resume_free(E4Resume *r)
{
	if (!r)
		return;
	g_hash_table_destroy(r->keys);
	g_free(r);
}

void e4_resume_add(E4Resume *r, uint64_t ino, uint64_t size, int64_t mtime_ns)
{
	Key k = { ino, size, mtime_ns };
	g_hash_table_add(r->keys, g_memdup2(&k, sizeof(k)));
}

bool e4_resume_has(const E4Resume *r, uint64_t ino, uint64_t size, int64_t mtime_ns)
{
	Key k = { ino, size, mtime_ns };
	return g_hash_table_contains(r->keys, &k);
}

size_t e4_resume_count(const E4Resume *r)
{
	return g_hash_table_size(r->keys);
}

/* The body: magic, count, one line per key. */
static GString *body(const E4Resume *r)
{
	GString *s = g_string_new(MAGIC);
	g_string_append_printf(s, "count %u\n", g_hash_table_size(r->keys));
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, r->keys);
	while (g_hash_table_iter_next(&it, &k, NULL)) {
		const Key *x = k;
		g_string_append_printf(s, "%" PRIu64 " %" PRIu64 " %" PRId64 "\n", x->ino, x->size, x->mtime_ns);
	}
	return s;
}

int e4_resume_save(const E4Resume *r, int dirfd, const char *name)
{
	GString *s = body(r);
	int rc = e4_statefile_save(dirfd, name, s->str, s->len);
	g_string_free(s, TRUE);
	return rc;
}

/* One "ino size mtime" line of exactly these three numbers. */
static bool parse_line(const char *line, Key *k)
{
	char tail;
	return sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNd64 "%c", &k->ino, &k->size, &k->mtime_ns, &tail) == 3 &&
	       line[0] >= '0' && line[0] <= '9';
}

int e4_resume_parse(const char *text, size_t len, E4Resume **out)
{
	*out = NULL;
	g_auto(GStrv) lines = NULL;
	unsigned count = 0;
	if (e4_statefile_lines(text, len, MAGIC, &lines, &count) < 0)
		return -EBADMSG;
	E4Resume *r = e4_resume_new();
	size_t i = 2;
	for (; lines[i] && lines[i][0]; i++) {
		Key k;
		if (!parse_line(lines[i], &k)) {
			e4_resume_free(r);
			return -EBADMSG;
		}
		e4_resume_add(r, k.ino, k.size, k.mtime_ns);
	}
	if (e4_resume_count(r) != count || i - 2 != count) {
		e4_resume_free(r);
		return -EBADMSG;
	}
	*out = r;
	return 0;
}

int e4_resume_load(int dirfd, const char *name, E4Resume **out)
{
	*out = NULL;
	GString *s;
	int rc = e4_statefile_read(dirfd, name, MAX_BYTES, &s);
	if (rc < 0)
		return rc;
	rc = e4_resume_parse(s->str, s->len, out);
	g_string_free(s, TRUE);
	return rc;
}
