#include "resume.h"

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

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int e4_resume_save(const E4Resume *r, int dirfd, const char *name)
{
	GString *s = body(r);
	g_autofree char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)s->str, s->len);
	g_string_append_printf(s, "sha256 %s\n", sum);
	g_autofree char *tmp = g_strdup_printf(".%s.tmp.%d", name, (int)getpid());
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc = fd < 0 ? -errno : write_all(fd, s->str, s->len);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = -errno;
	if (rc < 0 && fd >= 0)
		unlinkat(dirfd, tmp, 0);
	if (rc == 0)
		fsync(dirfd);
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
	/* The checksum line is the last one: "sha256 HEX\n". */
	const char *mark = g_strrstr_len(text, (gssize)len, "\nsha256 ");
	if (len < strlen(MAGIC) || memcmp(text, MAGIC, strlen(MAGIC)) != 0 || !mark)
		return -EBADMSG;
	size_t body_len = (size_t)(mark - text) + 1;
	g_autofree char *want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, body_len);
	g_autofree char *tail = g_strndup(text + body_len, len - body_len);
	g_autofree char *expect = g_strdup_printf("sha256 %s\n", want);
	if (strcmp(tail, expect) != 0)
		return -EBADMSG;
	g_autofree char *copy = g_strndup(text, body_len);
	g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
	unsigned count = 0;
	char extra;
	if (!lines[0] || !lines[1] || sscanf(lines[1], "count %u%c", &count, &extra) != 1)
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
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	GString *s = g_string_new(NULL);
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		g_string_append_len(s, buf, n);
		if (s->len > MAX_BYTES) {
			rc = -EBADMSG;
			break;
		}
	}
	close(fd);
	if (rc == 0 && memchr(s->str, '\0', s->len))
		rc = -EBADMSG;
	if (rc == 0)
		rc = e4_resume_parse(s->str, s->len, out);
	g_string_free(s, TRUE);
	return rc;
}
