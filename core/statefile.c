#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

int e4_statefile_save(int dirfd, const char *name, const char *body, size_t len)
{
	g_autofree char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)body, len);
	g_autofree char *trailer = g_strdup_printf("sha256 %s\n", sum);
	g_autofree char *tmp = g_strdup_printf(".%s.tmp.%d", name, (int)getpid());
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc = fd < 0 ? -errno : write_all(fd, body, len);
	if (rc == 0)
		rc = write_all(fd, trailer, strlen(trailer));
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
	return rc;
}

gssize e4_statefile_check(const char *text, size_t len, const char *magic)
{
	/* The checksum line is the last one: "sha256 HEX\n". */
	const char *mark = g_strrstr_len(text, (gssize)len, "\nsha256 ");
	if (len < strlen(magic) || memcmp(text, magic, strlen(magic)) != 0 || !mark)
		return -EBADMSG;
	size_t body_len = (size_t)(mark - text) + 1;
	g_autofree char *want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, body_len);
	g_autofree char *tail = g_strndup(text + body_len, len - body_len);
	g_autofree char *expect = g_strdup_printf("sha256 %s\n", want);
	return strcmp(tail, expect) == 0 ? (gssize)body_len : -EBADMSG;
}

int e4_statefile_lines(const char *text, size_t len, const char *magic, char ***lines, unsigned *count)
{
	*lines = NULL;
	gssize body = e4_statefile_check(text, len, magic);
	if (body < 0)
		return (int)body;
	g_autofree char *copy = g_strndup(text, (gsize)body);
	g_auto(GStrv) v = g_strsplit(copy, "\n", -1);
	char extra;
	if (!v[0] || !v[1] || sscanf(v[1], "count %u%c", count, &extra) != 1)
		return -EBADMSG;
	*lines = g_steal_pointer(&v);
	return 0;
}

int e4_statefile_read(int dirfd, const char *name, size_t max_bytes, GString **out)
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
		if (s->len > max_bytes) {
			rc = -EBADMSG;
			break;
		}
	}
	close(fd);
	if (rc == 0 && memchr(s->str, '\0', s->len))
		rc = -EBADMSG;
	if (rc < 0) {
		g_string_free(s, TRUE);
		return rc;
	}
	*out = s;
	return 0;
}
