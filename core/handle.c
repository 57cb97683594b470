#include "handle.h"

#include "beneath.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

E4Handle *e4_handle_of(int fd)
{
	struct file_handle probe = { .handle_bytes = 0 };
	int mount_id;
	/* The first call only tells the size (EOVERFLOW). */
	if (name_to_handle_at(fd, "", &probe, &mount_id, AT_EMPTY_PATH) == 0) {
		errno = EINVAL; /* a filesystem without handles: nothing to hold */
		return NULL;
	}
	if (errno != EOVERFLOW)
		return NULL;
	E4Handle *h = g_malloc(sizeof(*h) + probe.handle_bytes);
	h->handle_bytes = probe.handle_bytes;
	if (name_to_handle_at(fd, "", h, &mount_id, AT_EMPTY_PATH) < 0) {
		int err = errno;
		g_free(h);
		errno = err;
		return NULL;
	}
	return h;
}

E4Handle *e4_handle_dup(const E4Handle *h)
{
	return g_memdup2(h, sizeof(*h) + h->handle_bytes);
}

bool e4_handle_equal(const E4Handle *a, const E4Handle *b)
{
	return a->handle_bytes == b->handle_bytes && a->handle_type == b->handle_type &&
	       memcmp(a->f_handle, b->f_handle, a->handle_bytes) == 0;
}

int e4_handle_open(int mount_fd, const E4Handle *h, int flags)
{
	int fd = open_by_handle_at(mount_fd, (struct file_handle *)h, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The length of the longest prefix of path, ending before a '/', that is
 * shorter than PATH_MAX; 0 when none (a component that long cannot exist). */
static size_t piece_len(const char *path)
{
	size_t cut = 0;
	for (size_t i = 0; path[i] && i < PATH_MAX; i++)
		if (path[i] == '/')
			cut = i;
	return cut;
}

/* Opens path beneath dirfd with flags, a piece shorter than PATH_MAX at a
 * time (the kernel refuses longer paths with ENAMETOOLONG). -errno. */
static int open_long(int dirfd, const char *path, int flags)
{
	int cur = -1; /* an fd of ours, or -1 while at dirfd */
	while (strlen(path) >= PATH_MAX) {
		size_t len = piece_len(path);
		if (len == 0) {
			if (cur >= 0)
				close(cur);
			return -ENAMETOOLONG;
		}
		g_autofree char *piece = g_strndup(path, len);
		int next = e4_open_beneath(cur >= 0 ? cur : dirfd, piece, O_PATH | O_DIRECTORY);
		if (cur >= 0)
			close(cur);
		if (next < 0)
			return next;
		cur = next;
		path += len + 1;
	}
	int fd = e4_open_beneath(cur >= 0 ? cur : dirfd, path, flags);
	if (cur >= 0)
		close(cur);
	return fd;
}

int e4_handle_open_path(int dirfd, const char *path, const E4Handle *h, int flags)
{
	int fd = open_long(dirfd, path, flags);
	/* What the path leads to now is not the object, or nothing: a symlink
	 * or mount point put in its place, a component removed or replaced. */
	if (fd == -ENOENT || fd == -ELOOP || fd == -EXDEV || fd == -ENOTDIR)
		return -ESTALE;
	if (fd < 0)
		return fd;
	g_autofree E4Handle *now = e4_handle_of(fd);
	if (!now || !e4_handle_equal(now, h)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int e4_handle_privileged(int mount_fd)
{
	g_autofree E4Handle *h = e4_handle_of(mount_fd);
	if (!h)
		return -errno;
	int fd = e4_handle_open(mount_fd, h, O_PATH);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return fd == -EPERM ? 0 : fd;
}
