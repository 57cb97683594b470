#include "handle.h"

#include <errno.h>
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

int e4_handle_open(int mount_fd, const E4Handle *h, int flags)
{
	int fd = open_by_handle_at(mount_fd, (struct file_handle *)h, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
