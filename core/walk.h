/* Walking a tree on one filesystem, relative to directory fds: no PATH_MAX
 * limit, no symlink ever followed, no mount point crossed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef enum { E4_ENTRY_FILE, E4_ENTRY_DIR } E4EntryKind;

typedef struct {
	char *name;
	uint64_t ino;
	E4EntryKind kind;
} E4DirEntry;

typedef struct {
	E4DirEntry *v;
	size_t n, cap;
} E4DirList;

/* Lists the regular files and subdirectories of the open directory dirfd
 * (whose own stat is dir_st) that live on filesystem dev. Skipped: "." and
 * "..", symlinks and other types, subdirectories on another filesystem
 * (mount points), and "lost+found" in the filesystem's root directory.
 * Only entries whose type readdir does not tell are stat'ed, plus
 * directories (to see mount points). Returns 0 or -errno. */
int e4_dir_list(int dirfd, const struct stat *dir_st, dev_t dev, E4DirList *out);

void e4_dir_list_clear(E4DirList *list);

/* Opens the subdirectory name of dirfd without following a symlink and
 * checks it is on filesystem dev. Returns the fd (O_RDONLY|O_DIRECTORY,
 * close-on-exec) with *st filled, or -errno (EXDEV for another fs). */
int e4_open_subdir(int dirfd, const char *name, dev_t dev, struct stat *st);

/* Called by e4_climb for a directory (fd: O_PATH) and its stat. Return
 * true to stop the climb there. */
typedef bool (*E4ClimbFn)(int fd, const struct stat *st, void *user);

/* Calls fn for the directory dirfd, then for each directory above it on
 * the same filesystem, up to the filesystem's root (whose ".." is
 * itself), at most E4_CLIMB_MAX levels, until fn returns true. Never
 * follows a symlink. */
#define E4_CLIMB_MAX 100000
void e4_climb(int dirfd, E4ClimbFn fn, void *user);

/* Called for each regular file: dirfd and name locate it, st is its lstat.
 * path is its path relative to the walk's root. Return 0 to go on, or a
 * negative errno to stop the walk with that error. */
typedef int (*E4WalkFileFn)(int dirfd, const char *name, const struct stat *st,
			    const char *path, void *user);

/* Visits every regular file below the directory root_fd (depth first,
 * readdir order) on filesystem dev, each hard-linked inode once.
 * Unreadable subdirectories are skipped. Returns 0, or the callback's
 * error, or -errno for the root itself. */
int e4_walk(int root_fd, dev_t dev, E4WalkFileFn fn, void *user);
