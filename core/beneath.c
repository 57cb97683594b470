#include "beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <glib.h>

int e4_open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, dirfd, *path ? path : ".", &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	return errno == ENOSYS ? e4_open_beneath_walk(dirfd, path, flags) : -errno;
}

/* The mount an fd is on: its mount id where statx tells it (a bind mount
 * of the same filesystem is a crossing too), else its device. */
static int mount_of(int fd, uint64_t *id)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return -errno;
	*id = (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id
					     : ((uint64_t)stx.stx_dev_major << 32 | stx.stx_dev_minor);
	return 0;
}

/* Refuses fd (closing it) unless it is on mount `want`, no symlink, and
 * a directory when dir is set. */
static int check_step(int fd, uint64_t want, bool dir)
{
	struct stat st;
	uint64_t id = 0; /* set by mount_of when it returns 0; -O3 cannot see it */
	int err = fstat(fd, &st) < 0 ? -errno : mount_of(fd, &id);
	if (!err && S_ISLNK(st.st_mode))
		err = -ELOOP;
	else if (!err && dir && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	else if (!err && id != want)
		err = -EXDEV;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Opens one component name beneath cur ("." for cur itself); a
 * directory to walk through when dir is set. */
static int step(int cur, const char *name, int flags, uint64_t want, bool dir)
{
	if (strcmp(name, "..") == 0)
		return -EXDEV;
	/* O_PATH without O_DIRECTORY: a symlink opens as itself and is
	 * refused as ELOOP, as openat2 does, rather than as ENOTDIR. */
	int fd = openat(cur, name, (dir ? O_PATH : flags) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOTDIR) {
		/* O_DIRECTORY on a symlink: still a symlink met. */
		struct stat st;
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return -ELOOP;
		errno = ENOTDIR;
	}
	if (fd < 0)
		return -errno;
	return check_step(fd, want, dir);
}

int e4_open_beneath_walk(int dirfd, const char *path, int flags)
{
	if (path[0] == '/')
		return -EXDEV;
	uint64_t want;
	int err = mount_of(dirfd, &want);
	if (err)
		return err;
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	/* The last non-empty, non-"." component is opened with the caller's
	 * flags; the ones before it as directories to walk through. */
	int last = -1;
	for (int i = 0; parts[i]; i++)
		if (*parts[i] && strcmp(parts[i], ".") != 0)
			last = i;
	int cur = -1; /* an fd of ours, or -1 while at dirfd */
	for (int i = 0; i < last; i++) {
		if (!*parts[i] || strcmp(parts[i], ".") == 0)
			continue;
		int next = step(cur >= 0 ? cur : dirfd, parts[i], O_PATH, want, true);
		if (cur >= 0)
			close(cur);
		if (next < 0)
			return next;
		cur = next;
	}
	int fd = step(cur >= 0 ? cur : dirfd, last >= 0 ? parts[last] : ".", flags, want,
			  false);
	if (cur >= 0)
		close(cur);
	return fd;
}
