#include "utab.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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

/* The pid in an option string (a,b,x-e4infofs.pid=N,...), or 0. */
static pid_t pid_in(const char *optstr)
{
	char *val = NULL;
	size_t len = 0;
	if (!optstr || mnt_optstr_get_option(optstr, E4FS_UTAB_PID, &val, &len) != 0 || !val ||
	    len == 0 || len > 12)
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

/* The utab file's path (NULL where libmount keeps none). */
static char *utab_path(void)
{
	g_autoptr(MntUpdate) upd = mnt_new_update();
	if (!upd || mnt_update_set_fs(upd, 0, "/", NULL) != 0 || !mnt_update_get_filename(upd))
		return NULL;
	return g_strdup(mnt_update_get_filename(upd));
}

typedef struct {
	char *target;
	pid_t pid;               /* 0: not a daemon's entry */
} Entry;

static void entry_clear(gpointer p)
{
	g_free(((Entry *)p)->target);
}

/* The utab file's entries, in order. libmount reads it only merged into
 * mountinfo, which has no line for a mount that has gone: its lines are
 * "SRC=... TARGET=... ROOT=... OPTS=..." with mangled values. */
static GArray *read_entries(void)
{
	GArray *out = g_array_new(FALSE, TRUE, sizeof(Entry));
	g_array_set_clear_func(out, entry_clear);
	g_autofree char *path = utab_path();
	g_autofree char *text = NULL;
	if (!path || !g_file_get_contents(path, &text, NULL, NULL))
		return out;
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		g_auto(GStrv) fields = g_strsplit(*l, " ", -1);
		Entry e = {0};
		for (char **f = fields; *f; f++) {
			g_autofree char *value = g_str_has_prefix(*f, "TARGET=") || g_str_has_prefix(*f, "OPTS=")
							 ? mnt_unmangle(strchr(*f, '=') + 1) : NULL;
			if (g_str_has_prefix(*f, "TARGET="))
				e.target = g_steal_pointer(&value);
			else if (value)
				e.pid = pid_in(value);
		}
		if (e.target)
			g_array_append_val(out, e);
	}
	return out;
}

/* The pid of target's last entry in the utab file (the mount may be gone
 * from mountinfo already), or 0. */
static pid_t last_pid(const GArray *entries, const char *target)
{
	for (guint i = entries->len; i-- > 0;) {
		const Entry *e = &g_array_index(entries, Entry, i);
		if (strcmp(e->target, target) == 0)
			return e->pid;
	}
	return 0;
}

static bool dead(pid_t pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

/* Removes the entries of daemons that died without removing theirs
 * (killed, or a crash): a killed test daemon's would stay for good. Only
 * an entry that is the last of its target: remove_entry takes the last. */
static void prune_dead(void)
{
	for (int round = 0; round < 1000; round++) {
		g_autoptr(GArray) entries = read_entries();
		const char *victim = NULL;
		for (guint i = 0; !victim && i < entries->len; i++) {
			const Entry *e = &g_array_index(entries, Entry, i);
			if (dead(e->pid) && last_pid(entries, e->target) == e->pid)
				victim = e->target;
		}
		if (!victim || remove_entry(victim) < 0)
			return;
	}
}

int e4fs_utab_add(const char *source, const char *target, pid_t pid)
{
	if (geteuid() != 0)
		return -EACCES;
	prune_dead();
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
	if (geteuid() != 0)
		return 0;
	g_autoptr(GArray) entries = read_entries();
	if (last_pid(entries, target) != pid)
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
	pid_t pid = pid_in(mnt_fs_get_user_options(fs));
	return pid > 0 ? pid : -ENOENT;
}
