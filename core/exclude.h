/* Exclusions: a file, or a directory and everything below it, marked with
 * the extended attribute E4_EXCLUDE_XATTR is left alone by every job
 * (defrag, pack, making room, compact). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define E4_EXCLUDE_XATTR "user.e4infofs.exclude"

/* True when the object open as fd (any fd, O_PATH included) carries the
 * attribute with a value other than "0". An attribute that cannot be
 * read (no permission, no xattr support) does not exclude. */
bool e4_exclude_marked(int fd);

/* The same for the file name in directory dirfd (never following a
 * symlink there). */
bool e4_exclude_marked_at(int dirfd, const char *name);

/* Remembers, per directory inode, whether the directory or one of its
 * ancestors on its filesystem is marked. For one job: a mark set or
 * removed meanwhile is seen by the next one. Not thread-safe. */
typedef struct E4Exclude E4Exclude;

E4Exclude *e4_exclude_new(void);
void e4_exclude_free(E4Exclude *x);

/* True when the directory open as dirfd, or any directory above it up to
 * its filesystem's root, is marked. Each directory costs one getxattr and
 * one open of ".." the first time (x NULL: every time). */
bool e4_exclude_dir(E4Exclude *x, int dirfd);

/* True when the file name in directory dirfd, or dirfd as above, is
 * marked. */
bool e4_exclude_at(E4Exclude *x, int dirfd, const char *name);
