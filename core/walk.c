#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "fsinfo.h"

static int list_push(E4DirList *list, const char *name, uint64_t ino, E4EntryKind kind)
{
	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 32;
		E4DirEntry *v = realloc(list->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		list->v = v;
		list->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	list->v[list->n++] = (E4DirEntry){ copy, ino, kind };
	return 0;
}

void e4_dir_list_clear(E4DirList *list)
{
	for (size_t i = 0; i < list->n; i++)
		free(list->v[i].name);
	free(list->v);
	*list = (E4DirList){0};
}

/* The kind of entry d, or -1 to leave it out. */
static int classify(int dirfd, const struct dirent *d, dev_t dev)
{
	if (d->d_type == DT_REG)
		return E4_ENTRY_FILE;
	if (d->d_type != DT_DIR && d->d_type != DT_UNKNOWN)
		return -1;
	struct stat st;
	if (fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (S_ISREG(st.st_mode))
		return E4_ENTRY_FILE;
	if (S_ISDIR(st.st_mode) && st.st_dev == dev)
		return E4_ENTRY_DIR;
	return -1;
}

static bool is_dot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

int e4_dir_list(int dirfd, const struct stat *dir_st, dev_t dev, E4DirList *out)
{
	/* A fresh open file description: reading must not move a shared offset. */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	bool fs_root = dir_st->st_ino == E4_EXT4_ROOT_INO;
	int rc = 0;
	struct dirent *d;
	errno = 0;
	while (rc == 0 && (d = readdir(dir))) {
		if (is_dot(d->d_name) || (fs_root && strcmp(d->d_name, "lost+found") == 0))
			continue;
		int kind = classify(dirfd, d, dev);
		if (kind >= 0)
			rc = list_push(out, d->d_name, d->d_ino, (E4EntryKind)kind);
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = -errno;
	closedir(dir);
	return rc;
}

int e4_open_subdir(int dirfd, const char *name, dev_t dev, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || st->st_dev != dev) {
		int rc = st->st_dev != dev ? -EXDEV : -errno;
		close(fd);
		return rc;
	}
	return fd;
}

void e4_climb(int dirfd, E4ClimbFn fn, void *user)
{
	int fd = dup(dirfd);
	dev_t dev = 0;
	uint64_t prev = 0;
	for (int depth = 0; fd >= 0 && depth < E4_CLIMB_MAX; depth++) {
		struct stat st;
		if (fstat(fd, &st) < 0 || (depth > 0 && (st.st_dev != dev || st.st_ino == prev)))
			break; /* another filesystem, or ".." of the root: itself */
		dev = st.st_dev;
		prev = st.st_ino;
		if (fn(fd, &st, user))
			break;
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
}

typedef struct {
	dev_t dev;
	E4WalkFileFn fn;
	void *user;
	GHashTable *seen; /* inode numbers of files with more than one link */
	GString *path;
} Walk;

static int walk_dir(Walk *w, int dirfd, const struct stat *dir_st, bool is_root);

static int visit(Walk *w, int dirfd, const E4DirEntry *e)
{
	size_t mark = w->path->len;
	if (mark)
		g_string_append_c(w->path, '/');
	g_string_append(w->path, e->name);
	int rc = 0;
	struct stat st;
	if (e->kind == E4_ENTRY_DIR) {
		int fd = e4_open_subdir(dirfd, e->name, w->dev, &st);
		if (fd >= 0) {
			rc = walk_dir(w, fd, &st, false);
			close(fd);
		}
	} else if (fstatat(dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
		bool dup = st.st_nlink > 1 &&
			   !g_hash_table_add(w->seen, g_memdup2(&st.st_ino, sizeof(st.st_ino)));
		if (!dup)
			rc = w->fn(dirfd, e->name, &st, w->path->str, w->user);
	}
	g_string_truncate(w->path, mark);
	return rc;
}

static int walk_dir(Walk *w, int dirfd, const struct stat *dir_st, bool is_root)
{
	E4DirList list = {0};
	int rc = e4_dir_list(dirfd, dir_st, w->dev, &list);
	if (rc < 0 && !is_root)
		rc = 0; /* an unreadable subdirectory is skipped, not fatal */
	for (size_t i = 0; rc == 0 && i < list.n; i++)
		rc = visit(w, dirfd, &list.v[i]);
	e4_dir_list_clear(&list);
	return rc;
}

int e4_walk(int root_fd, dev_t dev, E4WalkFileFn fn, void *user)
{
	struct stat st;
	if (fstat(root_fd, &st) < 0)
		return -errno;
	Walk w = {
		.dev = dev, .fn = fn, .user = user,
		.seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.path = g_string_new(NULL),
	};
	int rc = walk_dir(&w, root_fd, &st, true);
	g_hash_table_destroy(w.seen);
	g_string_free(w.path, TRUE);
	return rc;
}
