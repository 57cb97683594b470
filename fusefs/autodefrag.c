#include "autodefrag.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <sys/stat.h>

#include "exclude.h"
#include "fiemap.h"
#include "handle.h"
#include "inspect.h"
#include "ioprio.h"
#include "jobs.h"
#include "walk.h"

/* The scheduler looks for quiet files this often. A file is examined
 * within quiet + TICK of its last write (when nothing else waits). */
#define TICK_US 1000000
/* Candidates taken at once; between batches the stop flag is seen. */
#define BATCH 64
/* Candidates examined per tick at most, so that a burst of writes (an
 * untar) costs a bounded share of a core: an examination of a small file
 * (open by handle, fstat, close) took about 8 µs here, so 4,000 a second
 * are about 3% of a core; 100,000 files wait 25 s. */
#define EXAMINE_PER_TICK 4000

struct E4fsAuto {
	E4Fs *fs;
	E4AutoQueue *q;
	int64_t quiet_us, window_us;
	E4Throttle *throttle;   /* shared by every move: the rate over all of them */
	E4DefragOpts opts;      /* of every move */
	E4ExtentMap map;        /* scratch of the scheduler thread */
	GThread *thread;
	GMutex lock;            /* guards stop and the counters */
	GCond wake;
	bool stop;
	gint stopping;          /* atomic copy of stop, for the engine's polls */
	E4AutoCounters c;
};

static void on_write(const struct file_handle *file, const struct file_handle *dir, int64_t now_us, void *user)
{
	E4fsAuto *a = user;
	e4_autoq_note(a->q, file, dir, now_us);
}

static bool auto_cancelled(void *user)
{
	E4fsAuto *a = user;
	return g_atomic_int_get(&a->stopping) || fuse_session_exited(a->fs->se);
}

E4fsAuto *e4fs_auto_new(E4Fs *fs, const E4fsAutoOpts *o)
{
	E4fsAuto *a = g_new0(E4fsAuto, 1);
	a->fs = fs;
	a->q = e4_autoq_new(E4FS_AUTO_CAP);
	a->quiet_us = (int64_t)(o->quiet * 1e6);
	a->window_us = (int64_t)(o->window * 1e6);
	/* Burst: one chunk, as a job's (e4fs_throttled_chunk): a lone mover
	 * keeps to the cap, not below it. */
	a->throttle = e4_throttle_new(o->mibps * 1048576.0, e4fs_throttled_chunk(o->mibps), NULL);
	/* Root's moves (uid 0), by the mount's threshold; no room made:
	 * background work does not move other people's files. */
	a->opts = (E4DefragOpts){ .uid = 0, .good_kib = fs->good_kib, .min_runs = fs->job_defaults.min_runs,
				  .chunk_bytes = e4fs_throttled_chunk(o->mibps), .throttle = a->throttle,
				  .cancelled = auto_cancelled, .user = a };
	g_mutex_init(&a->lock);
	g_cond_init(&a->wake);
	a->c.enabled = true;
	e4_tree_on_write(fs->tree, on_write, a);
	return a;
}

/* Where a directory stands: below SOURCE, marked excluded (itself or a
 * directory above it, up to the filesystem's root). */
typedef struct {
	uint64_t source_ino;
	bool inside;
	bool marked;
} Place;

static bool climb_step(int fd, const struct stat *st, void *user)
{
	Place *p = user;
	if (st->st_ino == p->source_ino)
		p->inside = true;
	p->marked = e4_exclude_marked(fd);
	return p->marked;
}

static void set_current(E4fsAuto *a, uint64_t ino)
{
	g_mutex_lock(&a->lock);
	a->c.current_ino = ino;
	g_mutex_unlock(&a->lock);
}

/* Why the move of a file ended as it did: -1 moved into fewer runs,
 * E4_AUTO_SKIP__COUNT cancelled (not counted), else the skip. */
static int outcome_reason(const E4FileDefrag *res)
{
	switch (res->outcome) {
	case E4_OUTCOME_IMPROVED: return -1;
	case E4_OUTCOME_OPTIMAL: return E4_AUTO_SKIP_BELOW;
	case E4_OUTCOME_NO_GAIN: return E4_AUTO_SKIP_NO_GAIN;
	case E4_OUTCOME_SKIPPED:
		return res->skip == E4_DSKIP_EXCLUDED ? E4_AUTO_SKIP_EXCLUDED : E4_AUTO_SKIP_ENGINE;
	case E4_OUTCOME_CANCELLED: return E4_AUTO_SKIP__COUNT;
	default: return E4_AUTO_SKIP_FAILED;
	}
}

/* Moves the file open as fd (its figures in r), written last in the
 * directory whose handle c holds, when it may be. Returns as
 * outcome_reason does. */
static int move_file(E4fsAuto *a, const E4AutoCandidate *c, int fd, const E4FileResult *r, E4FileDefrag *res)
{
	E4Fs *fs = a->fs;
	int dirfd = e4_handle_open(fs->root_fd, &c->dir.fh, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		return E4_AUTO_SKIP_GONE;
	Place p = { .source_ino = fs->root->real_ino };
	e4_climb(dirfd, climb_step, &p);
	int reason;
	if (p.marked) {
		reason = E4_AUTO_SKIP_EXCLUDED;
	} else if (!p.inside) {
		reason = E4_AUTO_SKIP_OUTSIDE;
	} else {
		set_current(a, (uint64_t)r->st.st_ino);
		e4_defrag_file(fs->defrag, fd, dirfd, &a->opts, res);
		set_current(a, 0);
		reason = outcome_reason(res);
		if (res->outcome == E4_OUTCOME_FAILED)
			fuse_log(FUSE_LOG_ERR, "e4infofs: autodefrag of inode %" PRIu64 ": %s\n", res->ino,
				 g_strerror(res->error));
	}
	close(dirfd);
	return reason;
}

/* Maps the file open as fd and moves it when it needs it. Returns as
 * outcome_reason does. */
static int examine_fd(E4fsAuto *a, const E4AutoCandidate *c, int fd, E4FileDefrag *res)
{
	E4Fs *fs = a->fs;
	E4FileResult r;
	int reason;
	if (e4_inspect_fd(fd, &fs->info->geom, &a->map, &r) < 0)
		reason = E4_AUTO_SKIP_GONE;
	else if (r.skip >= 0)
		reason = E4_AUTO_SKIP_ENGINE; /* FIEMAP could not map it */
	else if (!e4_defrag_needed(&r.fig, &a->opts, fs->info->geom.block_size))
		reason = E4_AUTO_SKIP_BELOW;
	else
		reason = move_file(a, c, fd, &r, res);
	return reason;
}

/* A file of at most one block is in one run whatever happened to it. */
static bool one_block(const struct stat *st, uint32_t block_size)
{
	return (uint64_t)st->st_size <= block_size || (uint64_t)st->st_blocks * 512 <= block_size;
}

/* Examines one quiet candidate and moves it when it needs it. Returns as
 * outcome_reason does. */
static int examine(E4fsAuto *a, const E4AutoCandidate *c, E4FileDefrag *res)
{
	E4Fs *fs = a->fs;
	if (e4_autoq_moved_within(a->q, &c->file.fh, g_get_monotonic_time(), a->window_us))
		return E4_AUTO_SKIP_WINDOW;
	/* O_PATH: no open of the file itself for the many that stop here. */
	int fd = e4_handle_open(fs->root_fd, &c->file.fh, O_PATH);
	if (fd < 0)
		return fd == -ESTALE || fd == -ENOENT ? E4_AUTO_SKIP_GONE : E4_AUTO_SKIP_ENGINE;
	struct stat st;
	int reason = -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink == 0)
		reason = E4_AUTO_SKIP_GONE;
	else if (one_block(&st, fs->info->geom.block_size))
		reason = E4_AUTO_SKIP_BELOW; /* most files an untar writes: no FIEMAP */
	if (reason < 0) {
		/* FIEMAP needs a real open. O_NONBLOCK: a lease of another
		 * process is not waited for. */
		int rfd = e4_handle_open(fs->root_fd, &c->file.fh, O_RDONLY | O_NONBLOCK | O_NOCTTY);
		reason = rfd < 0 ? E4_AUTO_SKIP_GONE : examine_fd(a, c, rfd, res);
		if (rfd >= 0)
			close(rfd);
	}
	close(fd);
	return reason;
}

/* Counts one examined candidate; a move's cached figures are forgotten
 * (a move changes no timestamp) and the file is not moved again within
 * the window. */
static void account(E4fsAuto *a, const E4AutoCandidate *c, int reason, const E4FileDefrag *res, int64_t us)
{
	if (res->bytes_moved) {
		e4_tree_forget_inode(a->fs->tree, res->ino);
		e4_autoq_moved(a->q, &c->file.fh, g_get_monotonic_time(), a->window_us);
	}
	g_mutex_lock(&a->lock);
	a->c.checked++;
	a->c.bytes_moved += res->bytes_moved;
	if (reason < 0) {
		a->c.files++;
		a->c.runs_before += res->runs_before;
		a->c.runs_after += res->runs_after;
	} else if (reason < E4_AUTO_SKIP__COUNT) {
		a->c.skipped[reason]++;
	}
	a->c.seconds += (double)us / 1e6;
	g_mutex_unlock(&a->lock);
	if (reason < 0)
		fuse_log(FUSE_LOG_INFO, "e4infofs: autodefrag: inode %" PRIu64 ", %" PRIu32 " -> %" PRIu32
			 " runs, %" PRIu64 " bytes moved\n", res->ino, res->runs_before, res->runs_after,
			 res->bytes_moved);
}

/* Examines the candidates quiet long enough, the longest quiet first,
 * until none is left, EXAMINE_PER_TICK were, or the scheduler stops. */
static void run_due(E4fsAuto *a)
{
	E4AutoCandidate batch[BATCH];
	size_t n, done = 0;
	do {
		n = e4_autoq_take_quiet(a->q, g_get_monotonic_time(), a->quiet_us, batch, BATCH);
		done += n;
		for (size_t i = 0; i < n && !auto_cancelled(a); i++) {
			int64_t t0 = g_get_monotonic_time();
			E4FileDefrag res = { .outcome = E4_OUTCOME_OPTIMAL };
			int reason = examine(a, &batch[i], &res);
			account(a, &batch[i], reason, &res, g_get_monotonic_time() - t0);
		}
	} while (n == BATCH && done < EXAMINE_PER_TICK && !auto_cancelled(a));
}

static gpointer auto_main(gpointer data)
{
	E4fsAuto *a = data;
	/* The thread's own I/O: every move it makes is background work. */
	if (a->fs->idle_io && e4_ioprio_idle() < 0)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: autodefrag: no idle I/O priority\n");
	g_mutex_lock(&a->lock);
	while (!a->stop) {
		g_cond_wait_until(&a->wake, &a->lock, g_get_monotonic_time() + TICK_US);
		if (a->stop)
			break;
		g_mutex_unlock(&a->lock);
		run_due(a);
		g_mutex_lock(&a->lock);
	}
	g_mutex_unlock(&a->lock);
	return NULL;
}

void e4fs_auto_start(E4fsAuto *a)
{
	a->thread = g_thread_new("e4autodefrag", auto_main, a);
}

void e4fs_auto_stop(E4fsAuto *a)
{
	if (!a || !a->thread)
		return;
	g_mutex_lock(&a->lock);
	a->stop = true;
	g_atomic_int_set(&a->stopping, 1);
	g_cond_signal(&a->wake);
	g_mutex_unlock(&a->lock);
	g_thread_join(g_steal_pointer(&a->thread));
}

void e4fs_auto_free(E4fsAuto *a)
{
	if (!a)
		return;
	e4fs_auto_stop(a);
	e4_autoq_free(a->q);
	e4_throttle_free(a->throttle);
	e4_extent_map_clear(&a->map);
	g_cond_clear(&a->wake);
	g_mutex_clear(&a->lock);
	g_free(a);
}

void e4fs_auto_counters(E4fsAuto *a, E4AutoCounters *out)
{
	*out = (E4AutoCounters){ 0 };
	if (!a)
		return;
	g_mutex_lock(&a->lock);
	*out = a->c;
	g_mutex_unlock(&a->lock);
	out->queue = e4_autoq_len(a->q);
	out->dropped = e4_autoq_dropped(a->q);
}

void e4fs_auto_describe(E4fsAuto *a, GString *out)
{
	E4AutoCounters c;
	e4fs_auto_counters(a, &c);
	g_string_append_printf(out, "# autodefrag: queue %" PRIu64 ", checked %" PRIu64 ", moved %" PRIu64
			       " files (%" PRIu64 " bytes), current ", c.queue, c.checked, c.files, c.bytes_moved);
	if (c.current_ino)
		g_string_append_printf(out, "%" PRIu64 "\n", c.current_ino);
	else
		g_string_append(out, "-\n");
}
