/* e4infofs: mount a live view of ext4 fragmentation. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <stdarg.h>
#include <syslog.h>

#include "content.h"
#include "fs.h"
#include "map.h"
#include "autodefrag.h"
#include "costs.h"
#include "jobs.h"
#include "utab.h"

typedef struct {
	char *source;
	unsigned scan_threads;
	unsigned report_top;
	double timeout;
	unsigned defrag_threads;
	double skip_run_kib;
	unsigned worst_first;
	unsigned watch;
	unsigned raw_inodes;
	char *donor_dir;
	char *state_dir;
	unsigned make_room;
	unsigned idle_io;
	unsigned autodefrag;
	double autodefrag_quiet;
	double autodefrag_window;
	unsigned cache_mib;     /* 0: no cap */
	E4JobLimits job_defaults;
	int allow_other;
} Options;

enum { KEY_ALLOW_OTHER, KEY_JOB_LIMIT, KEY_AUTO };

#define OPT(t, p) { t, offsetof(Options, p), 0 }
static const struct fuse_opt option_spec[] = {
	OPT("scan_threads=%u", scan_threads),
	OPT("report_top=%u", report_top),
	OPT("timeout=%lf", timeout),
	OPT("defrag_threads=%u", defrag_threads),
	OPT("skip_run_kib=%lf", skip_run_kib),
	OPT("worst_first=%u", worst_first),
	OPT("watch=%u", watch),
	OPT("raw_inodes=%u", raw_inodes),
	OPT("donor_dir=%s", donor_dir),
	OPT("state_dir=%s", state_dir),
	OPT("make_room=%u", make_room),
	OPT("defrag_idle_io=%u", idle_io),
	/* autodefrag=, autodefrag_quiet=, autodefrag_window=: checked strictly (auto_option). */
	FUSE_OPT_KEY("autodefrag=", KEY_AUTO),
	FUSE_OPT_KEY("autodefrag_quiet=", KEY_AUTO),
	FUSE_OPT_KEY("autodefrag_window=", KEY_AUTO),
	OPT("cache_mib=%u", cache_mib),
	/* defrag_seconds=, defrag_mibps=, defrag_min_runs=, defrag_hold_mib=: as in a trigger. */
	FUSE_OPT_KEY("defrag_seconds=", KEY_JOB_LIMIT),
	FUSE_OPT_KEY("defrag_mibps=", KEY_JOB_LIMIT),
	FUSE_OPT_KEY("defrag_min_runs=", KEY_JOB_LIMIT),
	FUSE_OPT_KEY("defrag_hold_mib=", KEY_JOB_LIMIT),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	/* fstab options that mean nothing to a FUSE mount (mount.fuse3 may pass them). */
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END
};

/* "defrag_KEY=VALUE" into o->job_defaults, parsed as a trigger's KEY=VALUE. */
static int job_limit_option(Options *o, const char *arg)
{
	const char *key = arg + strlen("defrag_"), *eq = strchr(key, '=');
	char why[96];
	if (e4_job_limit_set(&o->job_defaults, key, (size_t)(eq - key), eq + 1, strlen(eq + 1), why,
			     sizeof(why)) < 0) {
		fprintf(stderr, "e4infofs: -o %s: %s\n", arg, why);
		return -1;
	}
	return 0;
}

/* Seconds from 0 to max: digits with at most one '.' (no sign, exponent,
 * blank, inf or nan, which sscanf's %lf would take), or -1. */
static double seconds_value(const char *v, double max)
{
	bool digit = false, dot = false;
	for (const char *p = v; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digit = true;
		else if (*p == '.' && !dot)
			dot = true;
		else
			return -1;
	}
	double x = digit && strlen(v) <= 32 ? g_ascii_strtod(v, NULL) : -1;
	return isfinite(x) && x >= 0 && x <= max ? x : -1;
}

/* "autodefrag=0|1", "autodefrag_quiet=S" (0 to 1e7) or
 * "autodefrag_window=S" (0 to 1e9) into o; a bad value is said with the
 * option as given, and the daemon does not start. */
static int auto_option(Options *o, const char *arg)
{
	const char *v = strchr(arg, '=') + 1;
	if (g_str_has_prefix(arg, "autodefrag=")) {
		if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
			fprintf(stderr, "e4infofs: -o %s: autodefrag= takes 0 (off) or 1 (on)\n", arg);
			return -1;
		}
		o->autodefrag = v[0] == '1';
		return 0;
	}
	bool quiet = g_str_has_prefix(arg, "autodefrag_quiet=");
	double max = quiet ? 1e7 : 1e9;
	double x = seconds_value(v, max);
	if (x < 0) {
		fprintf(stderr, "e4infofs: -o %s: not a decimal number of seconds from 0 to %.0f\n", arg, max);
		return -1;
	}
	*(quiet ? &o->autodefrag_quiet : &o->autodefrag_window) = x;
	return 0;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	Options *o = data;
	if (key == KEY_ALLOW_OTHER) {
		o->allow_other = 1;
		return 1;
	}
	if (key == KEY_JOB_LIMIT)
		return job_limit_option(o, arg);
	if (key == KEY_AUTO)
		return auto_option(o, arg);
	if (key == FUSE_OPT_KEY_NONOPT && !o->source) {
		o->source = strdup(arg);
		return 0;
	}
	/* fstab's x-* options (x-systemd.*, x-gvfs-*) are for other programs:
	 * mount.fuse3 run by hand passes them on. */
	if (key == FUSE_OPT_KEY_OPT && strncmp(arg, "x-", 2) == 0)
		return 0;
	return 1;
}

static void usage(const char *prog)
{
	printf("usage: %s [options] SOURCE MOUNTPOINT\n\n"
	       "Mounts a view of SOURCE (a directory on a mounted ext4 filesystem, or a\n"
	       "mounted ext4 block device) at MOUNTPOINT. Every directory and regular file\n"
	       "of SOURCE appears as a directory holding score, extents, stats, stats.json\n"
	       "(and report in directories). See e4infofs(8) and docs/.\n\n"
	       "e4infofs options:\n"
	       "    -o scan_threads=N      threads that map files during a scan (default 16)\n"
	       "    -o report_top=N        files listed in report (default 10)\n"
	       "    -o timeout=SECONDS     kernel cache timeout of names and attributes (default 1)\n"
	       "    -o defrag_threads=N    files one defrag job moves at once (default 4)\n"
	       "    -o skip_run_kib=N      leave files alone whose mean extent is >= N KiB (default 0: off)\n"
	       "    -o worst_first=0|1     defragment the most fragmented files first (default 0: directory by directory)\n"
	       "    -o watch=0|1           follow changes with fanotify instead of a stat per file (default 1)\n"
	       "    -o raw_inodes=0|1      root: cold scans read inodes from the block device's page cache\n"
	       "                           instead of opening every file (default 1)\n"
	       "    -o cache_mib=N         cap the per-file cache at N MiB, dropping the least recently read\n"
	       "                           directories, read again when next needed (default 0: no cap)\n"
	       "    -o donor_dir=PATH      a directory on the same filesystem for donors when the file's\n"
	       "                           own is not writable (then SOURCE, if writable)\n"
	       "    -o state_dir=PATH      where a job stopped by its deadline leaves what it finished, for\n"
	       "                           the next job to resume, and where jobs' costs are learnt for\n"
	       "                           plan's seconds_expected (default " E4FS_STATE_DIR ")\n"
	       "    -o make_room=0|1       a root job moves other files out of the way when no free\n"
	       "                           extent can take a file whole (default 1)\n"
	       "    -o defrag_seconds=S    a job stops after S seconds (default: none; trigger key seconds=)\n"
	       "    -o defrag_mibps=N      a job moves at most N MiB/s (default: no cap; trigger key mibps=)\n"
	       "    -o defrag_min_runs=N   leave files with fewer than N runs alone (default: off; trigger key min_runs=)\n"
	       "    -o defrag_hold_mib=N   making room holds at most N MiB of free space at once (default: 256; trigger key hold_mib=)\n"
	       "    -o defrag_idle_io=0|1  jobs do their I/O in the idle class (default 1)\n"
	       "    -o autodefrag=0|1      defragment files that writes left fragmented once they are quiet\n"
	       "                           (root, with watch=1; default 0: off)\n"
	       "    -o autodefrag_quiet=S  seconds without a write before autodefrag looks at a file (default 60)\n"
	       "    -o autodefrag_window=S autodefrag moves a file at most once in S seconds (default 3600)\n\n",
	       prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

static const char *source_error(int err)
{
	switch (err) {
	case ENOTDIR: return "not a directory or a block device";
	case ENXIO: return "block device is not mounted";
	case EMEDIUMTYPE: return "not on a mounted ext4 filesystem";
	default: return strerror(err);
	}
}

/* fsname=SOURCE with fuse_opt's separators escaped. */
static char *fsname_option(const char *source)
{
	GString *opt = g_string_new("-ofsname=");
	for (const char *p = source; *p; p++) {
		if (*p == ',' || *p == '\\')
			g_string_append_c(opt, '\\');
		g_string_append_c(opt, *p);
	}
	return g_string_free(opt, FALSE);
}

/* A scan holds a directory fd per queued file: allow what the hard limit allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The drop of fs->handles: each holds one reference to its content. */
static void drop_content(gpointer content)
{
	e4_content_unref(content);
}

static int make_root(E4Fs *fs)
{
	/* Not O_PATH: open_by_handle_at refuses O_PATH mount fds (EBADF). */
	int fd = open(fs->info->source_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fs->root_fd = fd;
	/* An open directory need not be searchable (mode r--) for its user. */
	if (faccessat(fd, ".", R_OK | X_OK, AT_EACCESS) < 0)
		return -errno;
	return e4fs_nodes_init(fs);
}

/* Why SOURCE cannot be served; an unprivileged daemon serves only what
 * its user may read, and without searching SOURCE that is nothing. */
static const char *root_error(int err)
{
	return err == EACCES ? "not readable and searchable by this user: nothing to serve"
			     : strerror(err);
}

/* Donors go to the file's directory, else -o donor_dir, else SOURCE:
 * each tried where the daemon may not write the one before (not root). */
static int add_donor_dirs(E4Fs *fs, const char *donor_dir)
{
	int err = 0;
	if (donor_dir) {
		fs->donor_dir_fd = open(donor_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = fs->donor_dir_fd < 0 ? -errno : e4_defrag_add_donor_dir(fs->defrag, fs->donor_dir_fd);
		if (err < 0) {
			fprintf(stderr, "e4infofs: donor_dir=%s: %s\n", donor_dir,
				err == -EXDEV ? "not on SOURCE's filesystem" : strerror(-err));
			return err;
		}
	}
	return e4_defrag_add_donor_dir(fs->defrag, fs->root_fd);
}

/* Daemonized, stderr is gone: log to syslog (the journal). */
static void log_to_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
	/* syslog names the program already: drop the prefix stderr needs. */
	if (g_str_has_prefix(fmt, "e4infofs: "))
		fmt += strlen("e4infofs: ");
	vsyslog((int)level, fmt, ap);
}

/* The scheduler of -o autodefrag=1, registered with the tree before its
 * watch starts, or NULL (off, or not possible: said in the log). */
static E4fsAuto *auto_setup(E4Fs *fs, const Options *opts)
{
	if (!opts->autodefrag)
		return NULL;
	const char *why = geteuid() != 0 ? "needs a root daemon (fanotify, moves for every user)"
			  : !opts->watch ? "needs watch=1" : NULL;
	if (why) {
		fuse_log(FUSE_LOG_WARNING, "e4infofs: autodefrag off: %s\n", why);
		return NULL;
	}
	double mibps = fs->job_defaults.mibps > 0 ? fs->job_defaults.mibps : E4FS_AUTO_MIBPS_DEFAULT;
	E4fsAutoOpts o = { .quiet = opts->autodefrag_quiet, .window = opts->autodefrag_window, .mibps = mibps };
	return e4fs_auto_new(fs, &o);
}

static void auto_announce(const E4Fs *fs, const Options *opts)
{
	double mibps = fs->job_defaults.mibps > 0 ? fs->job_defaults.mibps : E4FS_AUTO_MIBPS_DEFAULT;
	fuse_log(FUSE_LOG_NOTICE, "e4infofs: autodefrag on: files quiet for %.0f s with more runs than their ideal"
		 " (and at least %u) are defragmented, at most %.0f MiB/s, each at most once in %.0f s\n",
		 opts->autodefrag_quiet, fs->job_defaults.min_runs, mibps, opts->autodefrag_window);
}

/* The inode-table reader for cold scans: the mount's device, else the
 * kernel's name for its number (/dev/block/MAJ:MIN), which holds where
 * the mount table says /dev/root. Not root, or a layout it does not
 * read: every file is opened, as before, and the log says why. */
static void open_itable(E4Fs *fs)
{
	E4Itable *it = NULL;
	int err = e4_itable_open(fs->info->device, fs->info->dev, &it);
	if (err == -ENOENT || err == -ENODEV) {
		g_autofree char *alt = g_strdup_printf("/dev/block/%u:%u", major(fs->info->dev), minor(fs->info->dev));
		err = e4_itable_open(alt, fs->info->dev, &it);
	}
	if (err < 0) {
		fuse_log(FUSE_LOG_INFO, "e4infofs: cold scans open every file: cannot read inodes from %s (%s)\n",
			 fs->info->device, strerror(-err));
		return;
	}
	e4_tree_read_inodes(fs->tree, it);
}

/* Threads do not survive fuse_daemonize's fork: everything that runs
 * threads (scan pool, fanotify drainer, autodefrag) starts after it. */
static void start_workers(E4Fs *fs, const Options *opts)
{
	fs->tree = e4_tree_new(&fs->info->geom, fs->info->dev, opts->scan_threads ? opts->scan_threads : 1);
	e4_tree_set_cache_limit(fs->tree, (uint64_t)opts->cache_mib << 20);
	if (opts->raw_inodes)
		open_itable(fs);
	E4fsAuto *autod = auto_setup(fs, opts);
	int err = 0;
	if (opts->watch && (err = e4_tree_watch(fs->tree, fs->root_fd)) == -EPERM)
		fuse_log(FUSE_LOG_INFO, "e4infofs: not root: no fanotify mark (needs CAP_SYS_ADMIN), "
			 "every read checks each file with a stat\n");
	else if (opts->watch && err < 0)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: cannot watch for changes (%s): checking every file at each read\n",
			 strerror(-err));
	if (autod && err < 0) {
		fuse_log(FUSE_LOG_WARNING, "e4infofs: autodefrag off: no fanotify watch\n");
		e4fs_auto_free(autod);
	} else if (autod) {
		fs->autod = autod;
		e4fs_auto_start(autod);
		auto_announce(fs, opts);
	}
}

/* Records the mount for umount(8) and its helper, which waits for this
 * process (see utab.h). Only root can; anyone else is unmounted with
 * fusermount3, which does not wait. */
static void register_mount(const char *source, const char *mountpoint)
{
	if (geteuid() != 0)
		return;
	int err = e4fs_utab_add(source, mountpoint, getpid());
	if (err < 0)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: %s: cannot record the mount in libmount's utab (%s): "
			 "umount will not wait for this daemon\n", mountpoint, strerror(-err));
}

/* fuse_daemonize(), but the child records the mount with its own pid
 * before the parent exits: the caller (mount(8), a script) may unmount
 * as soon as it returns, and umount's helper must find the daemon then. */
static int daemonize(const char *source, const char *mountpoint)
{
	int ready[2];
	if (pipe(ready) < 0) {
		perror("e4infofs: pipe");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("e4infofs: fork");
		return -1;
	}
	if (pid > 0) {
		char ok = 0;
		close(ready[1]);
		_exit(read(ready[0], &ok, 1) == 1 && ok ? 0 : 1);
	}
	close(ready[0]);
	if (setsid() < 0 || chdir("/") < 0) {
		perror("e4infofs: setsid");
		return -1;
	}
	register_mount(source, mountpoint);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
		if (null > 2)
			close(null);
	}
	char ok = 1;
	if (write(ready[1], &ok, 1) != 1)
		return -1;
	close(ready[1]);
	return 0;
}

/* The kernel has ended the session (an unmount, or SIGTERM): let go of
 * SOURCE's filesystem before any slower teardown, so that whoever waits
 * to unmount it next (umount.fuse.e4infofs, a script after fusermount3
 * -u) can. Jobs have ended with the FUSE threads that ran them; scans
 * stop at their next file, and the generations waiting on them end. */
static void release_source(E4Fs *fs)
{
	e4fs_auto_stop(fs->autod);
	e4_tree_stop(fs->tree);
	g_thread_pool_free(g_steal_pointer(&fs->generators), FALSE, TRUE);
	close(fs->root_fd);
	fs->root_fd = -1;
	if (fs->fsroot_fd >= 0)
		close(fs->fsroot_fd);
	fs->fsroot_fd = -1;
}

/* A job answers its writer when it ends and holds a FUSE thread until
 * then: two threads stay free for everything else (reads, a cancel, the
 * kernel's interrupt of a writer). In single-thread mode the one job
 * holds the loop. */
static guint jobs_allowed(const struct fuse_cmdline_opts *cmd)
{
	if (cmd->singlethread || cmd->max_threads <= 3)
		return 1;
	return cmd->max_threads - 2;
}

static int serve(E4Fs *fs, const Options *opts, struct fuse_args *args, struct fuse_cmdline_opts *cmd)
{
	struct fuse_session *se = fuse_session_new(args, &e4_ops, sizeof(e4_ops), fs);
	if (!se)
		return 1;
	fs->se = se;
	int rc = 1;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, cmd->mountpoint) != 0)
		goto out_signals;
	if (!cmd->foreground && daemonize(opts->source, cmd->mountpoint) < 0)
		goto out_unmount;
	/* Errors before this point (bad options, mount failures) go to stderr. */
	if (!cmd->foreground) {
		openlog("e4infofs", LOG_PID, LOG_DAEMON);
		fuse_set_log_func(log_to_syslog);
	} else {
		register_mount(opts->source, cmd->mountpoint);
	}
	start_workers(fs, opts);
	fs->max_jobs = jobs_allowed(cmd);
	/* Contents are made off the FUSE threads, so that a slow scan holds
	 * none; as many at once as the FUSE loop has threads. */
	fs->generators = g_thread_pool_new(e4fs_generate, fs, (gint)MAX(cmd->max_threads, 1), FALSE, NULL);
	if (cmd->singlethread) {
		rc = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *cfg = fuse_loop_cfg_create();
		fuse_loop_cfg_set_clone_fd(cfg, (unsigned)cmd->clone_fd);
		fuse_loop_cfg_set_max_threads(cfg, cmd->max_threads);
		rc = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	release_source(fs);
out_unmount:
	fuse_session_unmount(se);
	e4fs_utab_remove(cmd->mountpoint, getpid());
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
	return rc ? 1 : 0;
}

/* The directory of resume state (made, 0700, when missing); without it
 * a stopped job's work is resumed by no later job (one line, when the
 * directory was given; a daemon not run as root has no /var/lib). */
static void open_state_dir(E4Fs *fs, const char *dir, bool given)
{
	if (g_mkdir_with_parents(dir, 0700) == 0)
		fs->state_dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->state_dir_fd < 0 || faccessat(fs->state_dir_fd, ".", W_OK, AT_EACCESS) < 0) {
		if (given)
			fprintf(stderr, "e4infofs: state_dir=%s: %s: a job stopped by its deadline will not be resumed\n",
				dir, strerror(errno));
		if (fs->state_dir_fd >= 0)
			close(fs->state_dir_fd);
		fs->state_dir_fd = -1;
	}
}

/* Mounts and serves; returns the exit status. */
static int run(const Options *opts, struct fuse_args *args, struct fuse_cmdline_opts *cmd)
{
	E4Fs fs = { .timeout = opts->timeout, .report_top = opts->report_top,
		    .defrag_threads = opts->defrag_threads ? opts->defrag_threads : 1,
		    .good_kib = opts->skip_run_kib, .worst_first = opts->worst_first, .root_fd = -1,
		    .donor_dir_fd = -1, .fsroot_fd = -1, .state_dir_fd = -1, .job_defaults = opts->job_defaults,
		    .idle_io = opts->idle_io };
	int err = e4_fsinfo_resolve(opts->source, &fs.info);
	if (err < 0) {
		fprintf(stderr, "e4infofs: %s: %s\n", opts->source, source_error(-err));
		return 1;
	}
	g_autofree char *fsname = fsname_option(opts->source);
	fuse_opt_add_arg(args, fsname);
	fuse_opt_add_arg(args, "-osubtype=e4infofs");
	/* Without it the kernel would reuse one user's permission check for all. */
	if (opts->allow_other)
		fuse_opt_add_arg(args, "-odefault_permissions");
	raise_fd_limit();
	int rc = 1;
	err = make_root(&fs);
	if (err < 0) {
		fprintf(stderr, "e4infofs: %s: %s\n", fs.info->source_dir, root_error(-err));
		goto out;
	}
	if (fs.info->geom_default)
		fprintf(stderr, "e4infofs: %s: superblock not readable (%s): e4defrag's best assumes "
			"mke2fs's default geometry\n", fs.info->device, strerror(-fs.info->geom_error));
	fs.defrag = e4_defrag_new(fs.info);
	if (add_donor_dirs(&fs, opts->donor_dir) < 0)
		goto out;
	/* Making room reads every file's map and GETFSMAP: root only. */
	if (opts->make_room && geteuid() == 0)
		fs.fsroot_fd = open(fs.info->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	open_state_dir(&fs, opts->state_dir ? opts->state_dir : E4FS_STATE_DIR, opts->state_dir != NULL);
	fs.handles = e4_handles_new(drop_content);
	fs.listings = e4_handles_new(e4fs_listing_free);
	e4fs_jobs_init(&fs);
	e4fs_costs_init(&fs);
	rc = serve(&fs, opts, args, cmd);
	e4fs_auto_free(fs.autod);
	e4fs_costs_free(&fs);
	e4fs_jobs_free(&fs);
	e4_handles_free(fs.handles);
	e4_handles_free(fs.listings);
	e4_tree_free(fs.tree);
	e4_map_png_shutdown(); /* the generators are done: cairo's font caches go */
out:
	e4_defrag_free(fs.defrag);
	if (fs.donor_dir_fd >= 0)
		close(fs.donor_dir_fd);
	if (fs.state_dir_fd >= 0)
		close(fs.state_dir_fd);
	if (fs.nodes)
		e4fs_nodes_free(&fs);
	if (fs.root_fd >= 0)
		close(fs.root_fd);
	if (fs.fsroot_fd >= 0)
		close(fs.fsroot_fd);
	e4_fsinfo_free(fs.info);
	return rc;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	Options opts = { .scan_threads = 16, .report_top = 10, .timeout = 1.0, .defrag_threads = 4,
			 .worst_first = 0, .watch = 1, .raw_inodes = 1, .make_room = 1, .idle_io = 1,
			 .autodefrag_quiet = 60, .autodefrag_window = 3600 };
	struct fuse_cmdline_opts cmd = {0};
	int rc;
	if (fuse_opt_parse(&args, &opts, option_spec, opt_proc) != 0 ||
	    fuse_parse_cmdline(&args, &cmd) != 0) {
		rc = 1;
	} else if (cmd.show_help) {
		usage(argv[0]);
		rc = 0;
	} else if (cmd.show_version) {
		printf("e4infofs %s (FUSE library %s)\n", E4INFOFS_VERSION, fuse_pkgversion());
		rc = 0;
	} else if (!opts.source || !cmd.mountpoint) {
		fprintf(stderr, "%s: usage: %s [options] SOURCE MOUNTPOINT (see --help)\n", argv[0], argv[0]);
		rc = 1;
	} else {
		rc = run(&opts, &args, &cmd);
	}
	free(opts.source);
	free(opts.state_dir);
	free(opts.donor_dir);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return rc;
}
