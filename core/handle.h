/* File handles: a stable, fd-free reference to an inode (name_to_handle_at),
 * reopened with open_by_handle_at. Holding a handle costs no fd, survives
 * renames, and opening a handle whose inode was freed and reused fails
 * with ESTALE instead of reaching the new file. Needs CAP_DAC_READ_SEARCH. */
#pragma once

#include <fcntl.h>

typedef struct file_handle E4Handle;

/* The handle of the object open as fd (O_PATH is enough). Returns a new
 * handle (g_free) or NULL with errno set. */
E4Handle *e4_handle_of(int fd);

/* Opens the handle's inode on the filesystem of mount_fd (any fd on it)
 * with flags. Returns the fd or -errno (ESTALE when the inode is gone). */
int e4_handle_open(int mount_fd, const E4Handle *h, int flags);
