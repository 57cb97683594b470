/* umount.fuse.e4infofs: what umount(8) runs, as root, to unmount an
 * e4infofs mount (libmount finds it by the type, fuse.e4infofs, that the
 * daemon's utab entry gives the mount). It unmounts, then waits until the
 * daemon that served the mount has exited, so that SOURCE's filesystem is
 * free when it returns: a plain umount returns while the daemon still
 * holds it.
 *
 *   umount.fuse.e4infofs MOUNTPOINT [-flnrv] [-t TYPE]
 *
 * Exit status: 0 unmounted and the daemon gone; 1 bad usage; 32 not
 * unmounted, or unmounted but the daemon still ran after the wait
 * (E4INFOFS_UMOUNT_TIMEOUT seconds, default 30). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <glib.h>

#include "utab.h"

#define PROG "umount.fuse.e4infofs"
#define EXIT_USAGE 1
#define EXIT_FAILED 32

typedef struct {
	const char *target;
	bool lazy, force, verbose;
} Args;

static bool parse_args(int argc, char **argv, Args *a)
{
	*a = (Args){0};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "-t") == 0) {
			i++; /* the type: this helper's own */
			continue;
		}
		if (arg[0] != '-') {
			if (a->target)
				return false;
			a->target = arg;
			continue;
		}
		for (const char *c = arg + 1; *c; c++) {
			switch (*c) {
			case 'l': a->lazy = true; break;
			case 'f': a->force = true; break;
			case 'v': a->verbose = true; break;
			case 'n': case 'r': break; /* no mtab here; nothing to remount */
			default: return false;
			}
		}
	}
	return a->target != NULL;
}

/* Running defrag jobs of the mount, from its `jobs` file (one header line,
 * then a line per job), or -1. Read by a child that is killed after 2 s:
 * a daemon that answers nothing must not hang the unmount. */
static int running_jobs(const char *target)
{
	int out[2];
	if (pipe(out) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(out[0]);
		alarm(2);
		g_autofree char *path = g_build_filename(target, "jobs", NULL);
		g_autofree char *text = NULL;
		int n = -1;
		if (g_file_get_contents(path, &text, NULL, NULL))
			n = 0;
		for (char *p = text; p && *p; p++)
			n += *p == '\n';
		n = n > 0 ? n - 1 : n;
		_exit(write(out[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
	}
	close(out[1]);
	int n = -1;
	if (pid > 0) {
		struct pollfd pfd = { .fd = out[0], .events = POLLIN };
		if (poll(&pfd, 1, 3000) != 1 || read(out[0], &n, sizeof(n)) != sizeof(n))
			n = -1;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close(out[0]);
	return n;
}

static void explain_busy(const char *target)
{
	int jobs = running_jobs(target);
	if (jobs > 0)
		fprintf(stderr, PROG ": %s: busy: %d defrag job%s running, each holding its trigger open until it "
			"ends. Cancel with `echo cancel > %s/jobs`, or stop the daemon with SIGTERM (jobs stop "
			"at their next chunk), then unmount again.\n", target, jobs, jobs == 1 ? "" : "s", target);
	else
		fprintf(stderr, PROG ": %s: busy: a file or directory in it is open, or a process works in it\n",
			target);
}

/* A pidfd of the daemon serving target, or -1: only a process named
 * e4infofs is waited for (the recorded pid may have been reused). */
static int daemon_pidfd(const char *target, pid_t *pid)
{
	*pid = e4fs_utab_pid(target);
	if (*pid <= 0)
		return -1;
	int fd = (int)syscall(SYS_pidfd_open, *pid, 0);
	if (fd < 0)
		return -1;
	g_autofree char *path = g_strdup_printf("/proc/%ld/comm", (long)*pid);
	g_autofree char *comm = NULL;
	if (!g_file_get_contents(path, &comm, NULL, NULL) || strcmp(g_strchomp(comm), "e4infofs") != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static double timeout_seconds(void)
{
	const char *env = getenv("E4INFOFS_UMOUNT_TIMEOUT");
	char *end;
	double s = env ? strtod(env, &end) : 30;
	return env && (*end || s < 0) ? 30 : s;
}

int main(int argc, char **argv)
{
	Args a;
	if (!parse_args(argc, argv, &a)) {
		fprintf(stderr, "usage: " PROG " MOUNTPOINT [-flnrv] [-t TYPE]\n");
		return EXIT_USAGE;
	}
	pid_t pid;
	int pidfd = daemon_pidfd(a.target, &pid);
	int flags = UMOUNT_NOFOLLOW | (a.lazy ? MNT_DETACH : 0) | (a.force ? MNT_FORCE : 0);
	if (umount2(a.target, flags) < 0) {
		int err = errno;
		if (err == EBUSY)
			explain_busy(a.target);
		else
			fprintf(stderr, PROG ": %s: %s\n", a.target, strerror(err));
		return EXIT_FAILED;
	}
	if (pidfd < 0) {
		fprintf(stderr, PROG ": %s: unmounted; its daemon is not known, not waiting for it\n", a.target);
		return 0;
	}
	gint64 start = g_get_monotonic_time();
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int ready = poll(&pfd, 1, (int)(timeout_seconds() * 1000));
	double ms = (double)(g_get_monotonic_time() - start) / 1000;
	if (ready != 1) {
		fprintf(stderr, PROG ": %s: unmounted, but its daemon (pid %ld) still runs after %.0f s and "
			"keeps its source busy%s\n", a.target, (long)pid, ms / 1000,
			a.lazy ? ": a file in the mount is still open (a running defrag job ends when its "
				 "writer closes the trigger; SIGTERM to the daemon cancels it)" : "");
		return EXIT_FAILED;
	}
	if (a.verbose)
		printf(PROG ": %s: unmounted; daemon %ld exited after %.1f ms\n", a.target, (long)pid, ms);
	return 0;
}
