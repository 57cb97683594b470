/* The mount's entry in libmount's utab (/run/mount/utab), written by a
 * root daemon so that umount(8) learns the type fuse.e4infofs (from a
 * plain statfs it would see only "fuse"), runs umount.fuse.e4infofs, and
 * that helper finds the daemon to wait for (option x-e4infofs.pid). */
#pragma once

#include <sys/types.h>

/* The name of the user option that carries the daemon's pid. */
#define E4FS_UTAB_PID "x-e4infofs.pid"

/* Records the mount of source on target (absolute, canonical) served by
 * pid, replacing an entry left for target by a daemon that died. Returns
 * 0, or -errno (EACCES when not root: utab is root's). */
int e4fs_utab_add(const char *source, const char *target, pid_t pid);

/* Removes target's entry if it is still pid's (umount(8) removes it itself
 * after running the helper, and a new daemon may have mounted there since).
 * Returns 0 (also when there was none), or -errno. */
int e4fs_utab_remove(const char *target, pid_t pid);

/* The pid recorded for the e4infofs mount on target, or -errno (ENOENT:
 * none; for the helper). */
pid_t e4fs_utab_pid(const char *target);
