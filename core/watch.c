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

/* Events that change a directory's entries: its listing must be read again. */
#define DIRENT_EVENTS (FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO)

#define BUF_SIZE 65536 /* events read at once (a read costs a syscall) */

struct E4Watch {
	int fd;
	int mount_fd;
	bool files;             /* events carry the object's own handle */
	char buf[BUF_SIZE];     /* events read at once; drains are serialized */
};

E4Watch *e4_watch_new(int mount_fd, bool files)
{
	unsigned flags = FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_CLOEXEC | FAN_NONBLOCK;
	/* With files, a creation also names the file created (TARGET_FID,
	 * Linux 5.17): its events then carry the same records as the writes
	 * and attribute changes that follow, and the kernel merges all of a
	 * new file's events still queued into one. Without it an untar sends
	 * two events per file, each read and reported. */
	int fd = files ? fanotify_init(flags | FAN_REPORT_FID | FAN_REPORT_TARGET_FID, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		fd = fanotify_init(files ? flags | FAN_REPORT_FID : flags, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, EVENTS, mount_fd, NULL) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	E4Watch *w = g_new(E4Watch, 1);
	w->fd = fd;
	w->mount_fd = mount_fd;
	w->files = files;
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
static uint64_t handle_ino(const E4Watch *w, const struct file_handle *fh)
{
	if (fh->handle_type == FILEID_INO32_GEN && fh->handle_bytes >= 8) {
		uint32_t ino;
		memcpy(&ino, fh->f_handle, sizeof(ino));
		return ino;
	}
	int fd = open_by_handle_at(w->mount_fd, (struct file_handle *)fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	uint64_t ino = fstat(fd, &st) == 0 ? st.st_ino : 0;
	close(fd);
	return ino;
}

/* A handle copied out of the event buffer, aligned and bounded. */
typedef struct {
	struct file_handle fh;
	unsigned char bytes[MAX_HANDLE_SZ];
} HandleBuf;

/* Copies the handle of the fid record at ev + off (len bytes) into hb.
 * Returns false when the record is malformed. */
static bool copy_handle(const char *ev, size_t off, size_t len, HandleBuf *hb)
{
	size_t fh_off = off + sizeof(struct fanotify_event_info_fid);
	if (fh_off + sizeof(hb->fh) > off + len)
		return false;
	memcpy(&hb->fh, ev + fh_off, sizeof(hb->fh));
	size_t bytes = hb->fh.handle_bytes;
	if (bytes == 0 || bytes > MAX_HANDLE_SZ || fh_off + sizeof(hb->fh) + bytes > off + len)
		return false;
	memcpy(hb->bytes, ev + fh_off + sizeof(hb->fh), bytes);
	return true;
}

/* Events are packed by event_len, which need not keep their alignment:
 * every structure is copied out before it is read. An event has a
 * directory record (DFID_NAME, or DFID) and, with files, one of the
 * object itself (FID): a write's object is the file written. */
/* The file name after the handle of a DFID_NAME record (ev[at..end)), or
 * NULL when there is none, it is not terminated, or it is "." (the
 * kernel names a directory's own events after the directory itself). */
static const char *record_name(const char *ev, size_t at, size_t end)
{
	if (at >= end || !memchr(ev + at, '\0', end - at))
		return NULL;
	const char *name = ev + at;
	return name[0] && strcmp(name, ".") != 0 ? name : NULL;
}

static void report_event(const E4Watch *w, const char *ev, uint64_t mask, size_t meta_len, size_t ev_len,
			 E4WatchFn fn, void *user)
{
	HandleBuf dir, obj;
	bool have_dir = false, have_obj = false;
	/* Only a change to one non-directory's data or attributes spares the
	 * rest of its directory. */
	bool whole = (mask & (DIRENT_EVENTS | FAN_ONDIR)) != 0;
	const char *name = NULL;
	size_t off = meta_len;
	struct fanotify_event_info_header hdr;
	while (off + sizeof(hdr) <= ev_len) {
		memcpy(&hdr, ev + off, sizeof(hdr));
		if (hdr.len == 0 || off + hdr.len > ev_len)
			break;
		bool is_dir = hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ||
			      hdr.info_type == FAN_EVENT_INFO_TYPE_DFID;
		if (is_dir && !have_dir) {
			have_dir = copy_handle(ev, off, hdr.len, &dir);
			if (have_dir && !whole && hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME)
				name = record_name(ev, off + sizeof(struct fanotify_event_info_fid) + sizeof(dir.fh) +
							  dir.fh.handle_bytes, off + hdr.len);
		} else if (hdr.info_type == FAN_EVENT_INFO_TYPE_FID && !have_obj) {
			have_obj = copy_handle(ev, off, hdr.len, &obj);
		}
		off += hdr.len;
	}
	bool written = w->files && have_obj && have_dir && (mask & FAN_MODIFY) && !(mask & FAN_ONDIR);
	E4WatchEvent e = { .name = have_dir ? name : NULL };
	/* Without a directory record (a watch without files reports none
	 * other), the object is the directory. */
	if (have_dir)
		e.dir_ino = handle_ino(w, &dir.fh);
	else if (have_obj)
		e.dir_ino = handle_ino(w, &obj.fh);
	if (written) {
		e.file = &obj.fh;
		e.dir = &dir.fh;
	}
	if (e.dir_ino || e.file)
		fn(&e, user);
}

int e4_watch_drain(E4Watch *w, E4WatchFn fn, void *user)
{
	char *buf = w->buf;
	int rc = 0;
	for (;;) {
		ssize_t n = read(w->fd, buf, BUF_SIZE);
		if (n < 0)
			return errno == EAGAIN ? rc : -errno;
		size_t off = 0;
		struct fanotify_event_metadata ev;
		while (n > 0 && off + sizeof(ev) <= (size_t)n) {
			memcpy(&ev, buf + off, sizeof(ev));
			if (ev.event_len < sizeof(ev) || off + ev.event_len > (size_t)n)
				break;
			if (ev.vers != FANOTIFY_METADATA_VERSION)
				return -EPROTO;
			if (ev.mask & FAN_Q_OVERFLOW)
				rc = -EOVERFLOW;
			else
				report_event(w, buf + off, ev.mask, ev.metadata_len, ev.event_len, fn, user);
			off += ev.event_len;
		}
		if (n == 0)
			return rc;
	}
}
