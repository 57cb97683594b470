#pragma once
/* Opening a path strictly beneath a directory: nothing followed, nothing
 * crossed. The kernel does it in one call (openat2 with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, Linux
 * 5.6); where that call is missing (ENOSYS: older kernels, valgrind,
 * seccomp filters that predate it) the same rules are applied a component
 * at a time. */

/* Opens path (relative to the directory dirfd; "" or "." is dirfd itself;
 * at most PATH_MAX bytes) with flags | O_CLOEXEC. Returns the fd, or
 * -errno: EXDEV for an absolute path, a ".." that leaves dirfd (the walk
 * refuses every "..") or a mount point crossed (a bind mount too),
 * ELOOP when a symlink is met (also as the last component, also with
 * O_PATH), ENOTDIR/ENOENT/EACCES from the walk, and any error of the
 * final open. */
int e4_open_beneath(int dirfd, const char *path, int flags);

/* The component-by-component walk e4_open_beneath falls back to, with the
 * same contract; public so that tests can hold it to the kernel's. */
int e4_open_beneath_walk(int dirfd, const char *path, int flags);
