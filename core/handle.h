/* File handles: a stable, fd-free reference to an inode (name_to_handle_at),
 * reopened either with open_by_handle_at (needs CAP_DAC_READ_SEARCH) or,
 * without that privilege, by a path beneath a directory fd checked against
 * the handle afterwards. Holding a handle costs no fd; a handle carries the
 * inode's generation, so an inode freed and reused by another file never
 * matches it: opening it fails with ESTALE instead of reaching the new file. */
#pragma once

#include <stdbool.h>
#include <fcntl.h>

typedef struct file_handle E4Handle;

/* The handle of the object open as fd (O_PATH is enough; no privilege
 * needed). Returns a new handle (g_free) or NULL with errno set. */
E4Handle *e4_handle_of(int fd);

/* A copy of h (g_free). */
E4Handle *e4_handle_dup(const E4Handle *h);

/* True when a and b name the same inode (and generation). */
bool e4_handle_equal(const E4Handle *a, const E4Handle *b);

/* Opens the handle's inode on the filesystem of mount_fd (any fd on it,
 * not O_PATH) with flags. Returns the fd or -errno (ESTALE when the inode
 * is gone, EPERM without CAP_DAC_READ_SEARCH). */
int e4_handle_open(int mount_fd, const E4Handle *h, int flags);

/* Opens path (relative to the directory dirfd; "" or "." is dirfd itself;
 * components separated by '/', of any total length) with flags, resolved
 * beneath dirfd only: no "..", symlink or magic link followed, no mount
 * point crossed (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV; longer than PATH_MAX, a piece
 * at a time). Then checks that the object opened is h's inode. Returns
 * the fd, or -errno: ESTALE when path leads elsewhere or nowhere (a
 * rename, a deletion, a name reused by another object), EACCES when a
 * directory on the path may not be searched or the object not opened
 * with flags, and any other error of the open. Needs no privilege. */
int e4_handle_open_path(int dirfd, const char *path, const E4Handle *h, int flags);

/* Whether this process may open handles on the filesystem of mount_fd:
 * tries to reopen mount_fd's own object by its handle. Returns 1, 0 when
 * the kernel refuses for want of privilege (EPERM), or -errno when no
 * handle can be made at all. */
int e4_handle_privileged(int mount_fd);
