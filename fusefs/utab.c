#include "utab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <libmount.h>

typedef struct libmnt_fs MntFs;
typedef struct libmnt_table MntTable;
typedef struct libmnt_update MntUpdate;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MntFs, mnt_unref_fs)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MntTable, mnt_unref_table)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MntUpdate, mnt_free_update)

/* libmount returns negative errnos, or 1 for "nothing to do". */
static int as_errno(int rc)
{
	return rc < 0 ? rc : 0;
}

/* The pid in fs's user options, or 0. */
static pid_t pid_of(struct libmnt_fs *fs)
{
	char *val = NULL;
	size_t len = 0;
	if (mnt_fs_get_option(fs, E4FS_UTAB_PID, &val, &len) != 0 || !val || len == 0 || len > 12)
		return 0;
	g_autofree char *s = g_strndup(val, len);
	char *end;
	long pid = strtol(s, &end, 10);
	return *end || pid <= 0 ? 0 : (pid_t)pid;
}

/* Removes the last utab entry of target, whoever's. */
static int remove_entry(const char *target)
{
	g_autoptr(MntUpdate) upd = mnt_new_update();
	if (!upd)
		return -ENOMEM;
	int rc = mnt_update_set_fs(upd, 0, target, NULL);
	return rc == 0 ? as_errno(mnt_update_table(upd, NULL)) : as_errno(rc);
}

/* The pid of target's last entry in the utab file itself (the mount may
 * be gone from mountinfo already), or 0. */
static pid_t utab_file_pid(const char *target)
{
	g_autoptr(MntUpdate) upd = mnt_new_update();
	if (!upd || mnt_update_set_fs(upd, 0, target, NULL) != 0 || !mnt_update_get_filename(upd))
		return 0;
	g_autoptr(MntTable) tb = mnt_new_table_from_file(mnt_update_get_filename(upd));
	struct libmnt_fs *fs = tb ? mnt_table_find_target(tb, target, MNT_ITER_BACKWARD) : NULL;
	return fs ? pid_of(fs) : 0;
}

int e4fs_utab_add(const char *source, const char *target, pid_t pid)
{
	if (geteuid() != 0)
		return -EACCES;
	/* An entry of a daemon that was killed would stand for this mount. */
	while (utab_file_pid(target) > 0 && remove_entry(target) == 0)
		;
	g_autoptr(MntFs) fs = mnt_new_fs();
	g_autoptr(MntUpdate) upd = mnt_new_update();
	if (!fs || !upd)
		return -ENOMEM;
	g_autofree char *opts = g_strdup_printf("%s=%ld", E4FS_UTAB_PID, (long)pid);
	int rc = mnt_fs_set_source(fs, source);
	if (rc == 0)
		rc = mnt_fs_set_target(fs, target);
	if (rc == 0)
		rc = mnt_fs_set_fstype(fs, "fuse.e4infofs");
	if (rc == 0)
		rc = mnt_fs_set_options(fs, opts);
	if (rc == 0)
		rc = mnt_update_set_fs(upd, 0, NULL, fs);
	if (rc == 1)
		return -ENOTSUP; /* libmount keeps no utab here */
	return rc == 0 ? as_errno(mnt_update_table(upd, NULL)) : as_errno(rc);
}

int e4fs_utab_remove(const char *target, pid_t pid)
{
	if (geteuid() != 0 || utab_file_pid(target) != pid)
		return 0;
	return remove_entry(target);
}

pid_t e4fs_utab_pid(const char *target)
{
	g_autoptr(MntTable) tb = mnt_new_table();
	if (!tb)
		return -ENOMEM;
	int rc = mnt_table_parse_mtab(tb, NULL);
	if (rc < 0)
		return rc;
	struct libmnt_fs *fs = mnt_table_find_target(tb, target, MNT_ITER_BACKWARD);
	if (!fs || g_strcmp0(mnt_fs_get_fstype(fs), "fuse.e4infofs") != 0)
		return -ENOENT;
	pid_t pid = pid_of(fs);
	return pid > 0 ? pid : -ENOENT;
}
