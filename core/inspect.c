#include "inspect.h"
#include "exclude.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int open_file(int dirfd, const char *name)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = openat(dirfd, name, flags | O_NOATIME);
	/* O_NOATIME is refused on files the caller does not own. */
	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, flags);
	return fd < 0 ? -errno : fd;
}

static void map_file(int fd, const E4Geometry *geom, E4ExtentMap *map, E4FileResult *out)
{
	int rc = e4_fiemap_read(fd, map);
	if (rc < 0) {
		out->skip = E4_SKIP_NO_FIEMAP;
		out->error = -rc;
		return;
	}
	e4_figures_compute(map, (uint64_t)out->st.st_size, geom, &out->fig);
	if (out->fig.blocks == 0)
		out->skip = E4_SKIP_NO_EXTENTS;
}

int e4_inspect_fd(int fd, const E4Geometry *geom, E4ExtentMap *map, E4FileResult *out)
{
	*out = (E4FileResult){ .skip = -1 };
	if (fstat(fd, &out->st) < 0)
		return -errno;
	if (!S_ISREG(out->st.st_mode))
		return -EINVAL;
	/* e4defrag's rule: nothing to score without size and blocks. */
	if (out->st.st_size == 0 || out->st.st_blocks == 0) {
		out->skip = E4_SKIP_EMPTY;
		return 0;
	}
	E4ExtentMap own = {0};
	map_file(fd, geom, map ? map : &own, out);
	e4_extent_map_clear(&own);
	return 0;
}

int e4_inspect_at_marked(int dirfd, const char *name, const E4Geometry *geom, E4ExtentMap *map,
			 E4FileResult *out, bool *marked)
{
	int fd = open_file(dirfd, name);
	if (fd == -ENOENT || fd == -ELOOP)
		return fd;
	if (fd < 0) {
		*out = (E4FileResult){ .skip = E4_SKIP_UNREADABLE, .error = -fd };
		if (fstatat(dirfd, name, &out->st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (marked)
			*marked = e4_exclude_marked_at(dirfd, name);
		return S_ISREG(out->st.st_mode) ? 0 : -EINVAL;
	}
	int rc = e4_inspect_fd(fd, geom, map, out);
	/* On the open file: no second lookup of the name. */
	if (marked)
		*marked = rc == 0 && e4_exclude_marked(fd);
	close(fd);
	return rc;
}

int e4_inspect_at(int dirfd, const char *name, const E4Geometry *geom, E4ExtentMap *map,
		  E4FileResult *out)
{
	return e4_inspect_at_marked(dirfd, name, geom, map, out, NULL);
}

void e4_summary_add_result(E4Summary *s, const E4FileResult *r)
{
	if (r->skip < 0)
		e4_summary_add(s, &r->fig);
	else
		e4_summary_skip(s, (E4SkipReason)r->skip);
}
