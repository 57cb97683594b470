#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <glib.h>

/* ext4 encodes handles of inodes as FILEID_INO32_GEN: u32 ino, u32 gen. */
#define FILEID_INO32_GEN 1

#define EVENTS (FAN_MODIFY | FAN_ATTRIB | FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | \
		FAN_MOVED_TO | FAN_DELETE_SELF | FAN_MOVE_SELF | FAN_ONDIR)

struct E4Watch {
	int fd;
	int mount_fd;
};

E4Watch *e4_watch_new(int mount_fd)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_CLOEXEC | FAN_NONBLOCK,
			       O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, EVENTS, mount_fd, NULL) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	E4Watch *w = g_new(E4Watch, 1);
	*w = (E4Watch){ fd, mount_fd };
	return w;
}

void e4_watch_free(E4Watch *w)
{
	if (!w)
		return;
	close(w->fd);
	g_free(w);
}

int e4_watch_fd(const E4Watch *w)
{
	return w->fd;
}

/* The inode number behind a handle, or 0. */
static uint64_t handle_ino(const E4Watch *w, struct file_handle *fh)
{
	if (fh->handle_type == FILEID_INO32_GEN && fh->handle_bytes >= 8) {
		uint32_t ino;
		memcpy(&ino, fh->f_handle, sizeof(ino));
		return ino;
	}
	int fd = open_by_handle_at(w->mount_fd, fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	uint64_t ino = fstat(fd, &st) == 0 ? st.st_ino : 0;
	close(fd);
	return ino;
}

static void report_event(const E4Watch *w, const struct fanotify_event_metadata *ev, E4WatchFn fn,
			 void *user)
{
	const char *p = (const char *)ev + ev->metadata_len, *end = (const char *)ev + ev->event_len;
	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_header *hdr = (const void *)p;
		if (hdr->len == 0 || p + hdr->len > end)
			return;
		if (hdr->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ||
		    hdr->info_type == FAN_EVENT_INFO_TYPE_DFID ||
		    hdr->info_type == FAN_EVENT_INFO_TYPE_FID) {
			const struct fanotify_event_info_fid *fid = (const void *)p;
			uint64_t ino = handle_ino(w, (struct file_handle *)fid->handle);
			if (ino)
				fn(ino, user);
		}
		p += hdr->len;
	}
}

int e4_watch_drain(E4Watch *w, E4WatchFn fn, void *user)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	int rc = 0;
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n < 0)
			return errno == EAGAIN ? rc : -errno;
		if (n == 0)
			return rc;
		const struct fanotify_event_metadata *ev = (const void *)buf;
		for (; FAN_EVENT_OK(ev, n); ev = FAN_EVENT_NEXT(ev, n)) {
			if (ev->vers != FANOTIFY_METADATA_VERSION)
				return -EPROTO;
			if (ev->mask & FAN_Q_OVERFLOW)
				rc = -EOVERFLOW;
			else
				report_event(w, ev, fn, user);
		}
	}
}
