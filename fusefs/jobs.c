#include "jobs.h"

#include "attrs.h"
#include "autodefrag.h"
#include "costs.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>

#include "defragtree.h"
#include "escape.h"
#include "exclude.h"
#include "makeroom.h"
#include "ioprio.h"
#include "pack.h"
#include "plan.h"
#include "beneath.h"
#include "render.h"
#include "walk.h"

typedef struct {
	E4Fs *fs;
	Node *node;
	fuse_req_t req;
	uint64_t root_ino;
	GArray *chain;          /* inos from the job's node up to SOURCE */
	gint cancel;            /* atomic: set by a "cancel" write */
	gint64 deadline;        /* monotonic µs from which it stops; 0: none */
	gint stopped;           /* atomic: the deadline stopped it */
	bool rates;             /* a defrag job without a throttle: a sample of the cost model */
	bool room_live;         /* a compaction: sum's room counts grow as files move */
	GMutex lock;            /* guards sum and current */
	E4DefragSummary sum;
	char *current;
} Job;

typedef struct {
	E4Fs *fs;
	GArray *chain;
} Ancestors;

static bool push_ino(int fd, const struct stat *st, void *user)
{
	(void)fd;
	Ancestors *a = user;
	if (st->st_dev != a->fs->info->dev)
		return true;
	uint64_t ino = st->st_ino;
	g_array_append_val(a->chain, ino);
	return ino == a->fs->root->real_ino;
}

/* Pushes the inos of dirfd and its ancestors up to SOURCE's root. */
static void push_ancestors(E4Fs *fs, int dirfd, GArray *chain)
{
	Ancestors a = { fs, chain };
	e4_climb(dirfd, push_ino, &a);
}

/* A directory fd for the donor of a file node: its directory when known. */
static int parent_dir(E4Fs *fs, Node *node)
{
	int fd = e4fs_node_open_parent(fs, node, NULL);
	return fd >= 0 ? fd : dup(fs->root_fd);
}

static GArray *chain_of(E4Fs *fs, Node *node)
{
	GArray *chain = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	int fd;
	if (node->is_dir) {
		fd = e4fs_node_open(fs, node, O_PATH | O_DIRECTORY);
	} else {
		g_array_append_val(chain, node->real_ino);
		fd = parent_dir(fs, node);
	}
	if (fd >= 0) {
		push_ancestors(fs, fd, chain);
		close(fd);
	}
	return chain;
}

static bool in_chain(const GArray *chain, uint64_t ino)
{
	for (guint i = 0; i < chain->len; i++)
		if (g_array_index(chain, uint64_t, i) == ino)
			return true;
	return false;
}

static bool overlaps(const Job *a, const Job *b)
{
	return in_chain(a->chain, b->root_ino) || in_chain(b->chain, a->root_ino);
}

/* Adds job to the running ones: 0, or -EBUSY when one on an overlapping
 * node runs or fs->max_jobs run (each holds a FUSE thread for its whole
 * length: with every thread held nothing would answer, not even a
 * cancel). The log tells the two apart. */
static int job_register(E4Fs *fs, Job *job)
{
	g_mutex_lock(&fs->jobs_lock);
	int rc = 0;
	for (guint i = 0; rc == 0 && i < fs->jobs->len; i++)
		if (overlaps(job, g_ptr_array_index(fs->jobs, i)))
			rc = -EBUSY;
	if (rc == 0 && fs->jobs->len >= fs->max_jobs) {
		fuse_log(FUSE_LOG_WARNING, "e4infofs: job on inode %" PRIu64 " refused: %u jobs run, the most at once\n",
			 job->root_ino, fs->max_jobs);
		rc = -EBUSY;
	}
	if (rc == 0)
		g_ptr_array_add(fs->jobs, job);
	g_mutex_unlock(&fs->jobs_lock);
	return rc;
}

static bool job_cancelled(void *user)
{
	Job *job = user;
	if (g_atomic_int_get(&job->cancel) || fuse_req_interrupted(job->req) || fuse_session_exited(job->fs->se))
		return true;
	if (job->deadline && g_get_monotonic_time() >= job->deadline)
		g_atomic_int_set(&job->stopped, 1);
	return g_atomic_int_get(&job->stopped);
}

/* Only the deadline stopped it: no cancel, interrupt or unmount. */
static bool only_stopped(Job *job)
{
	return g_atomic_int_get(&job->stopped) && !g_atomic_int_get(&job->cancel) &&
	       !fuse_req_interrupted(job->req) && !fuse_session_exited(job->fs->se);
}

static void on_progress(const E4DefragSummary *now, const char *current, void *user)
{
	Job *job = user;
	g_mutex_lock(&job->lock);
	job->sum = *now;
	if (current || !job->current) {
		g_free(job->current);
		job->current = g_strdup(current);
	}
	g_mutex_unlock(&job->lock);
}

/* Making room moved another file's blocks: its cached figures are stale. */
static void on_room_moved(uint64_t ino, uint64_t bytes, void *user)
{
	Job *job = user;
	e4_tree_forget_inode(job->fs->tree, ino);
	if (!job->room_live)
		return; /* a defrag job counts the room it made per file */
	g_mutex_lock(&job->lock);
	job->sum.room_bytes_moved += bytes;
	job->sum.room_files_moved++;
	g_mutex_unlock(&job->lock);
}

static void on_file_done(const char *path, const E4FileDefrag *res, void *user)
{
	Job *job = user;
	if (res->bytes_moved)
		e4_tree_forget_inode(job->fs->tree, res->ino);
	if (res->outcome == E4_OUTCOME_FAILED)
		fuse_log(FUSE_LOG_ERR, "e4infofs: defrag %s: %s\n", path, g_strerror(res->error));
}

static void on_file_progress(uint64_t bytes_done, void *user)
{
	Job *job = user;
	g_mutex_lock(&job->lock);
	job->sum.bytes_done = bytes_done;
	g_mutex_unlock(&job->lock);
}

/* Making room gave way to others' writes (core/place/makeroom.h); ino 0:
 * a compaction. */
static void log_gave_way(uint64_t ino)
{
	g_autofree char *what = ino ? g_strdup_printf("making room for inode %" PRIu64, ino) : g_strdup("compact");
	fuse_log(FUSE_LOG_NOTICE, "e4infofs: %s stopped: the free space left to others fell under a quarter "
		 "of what it was; all it held is freed\n", what);
}

/* What making room did for a file: one line each time it was tried, so
 * that a tree job's log says which files got room and which did not (path:
 * relative to the job's directory; NULL in a file's own job). */
static void on_room_done(const char *path, const E4FileDefrag *res, const E4RoomMade *room, void *user)
{
	(void)user;
	if (room->gave_way)
		log_gave_way(res->ino);
	if (!room->tried)
		return;
	g_autofree char *what = path ? g_strdup_printf("inode %" PRIu64 " (%s)", res->ino, path)
				     : g_strdup_printf("inode %" PRIu64, res->ino);
	if (room->rc == 0 || room->files_moved)
		fuse_log(FUSE_LOG_INFO, "e4infofs: made room for %s: %" PRIu64 " blocks at %" PRIu64 ", moved %" PRIu64
			 " bytes of %" PRIu64 " files; runs %" PRIu32 " -> %" PRIu32 "%s\n", what, room->region.len,
			 room->region.start, room->bytes_moved, room->files_moved, res->runs_before, res->runs_after,
			 room->rc == 0 ? "" : " (the region was given up)");
	else
		fuse_log(FUSE_LOG_INFO, "e4infofs: no room made for %s, %" PRIu32 " runs: %s\n", what, res->runs_after,
			 room->rc == -ENOSPC ? "no region qualified or none could be cleared"
			 : room->rc == -EFBIG ? "larger than the largest region" : g_strerror(-room->rc));
}

static void run_file(Job *job, const E4DefragOpts *opts)
{
	E4Fs *fs = job->fs;
	E4FileDefrag res = { .outcome = E4_OUTCOME_FAILED };
	int fd = e4fs_node_open(fs, job->node, O_PATH);
	int dirfd = parent_dir(fs, job->node);
	int dir_err = dirfd < 0 ? errno : 0; /* before other calls can change errno */
	struct stat st;
	g_mutex_lock(&job->lock);
	job->sum.files_total = 1;
	job->sum.bytes_total = fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	job->current = g_strdup(".");
	g_mutex_unlock(&job->lock);
	E4DefragOpts fopts = *opts;
	fopts.progress = on_file_progress;
	E4RoomMade room = {0};
	if (fd < 0 || dirfd < 0)
		res.error = fd < 0 ? -fd : dir_err;
	else if (e4_exclude_dir(NULL, dirfd)) /* its own mark: e4_defrag_admit */
		res = (E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_EXCLUDED,
				      .ino = job->node->real_ino, .size = job->sum.bytes_total };
	else
		e4_defrag_file_making_room(fs->defrag, fd, dirfd, fs->fsroot_fd, &fopts, &res, &room);
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	g_mutex_lock(&job->lock);
	e4_defrag_summary_add(&job->sum, &res);
	job->sum.room_bytes_moved += room.bytes_moved;
	job->sum.room_files_moved += room.files_moved;
	job->sum.room_gave_way += room.gave_way;
	if (room.bytes_moved)
		job->sum.room_for_bytes += res.size;
	g_mutex_unlock(&job->lock);
	on_room_done(NULL, &res, &room, job);
	on_file_done(".", &res, job);
}

char *e4fs_fs_id(E4Fs *fs)
{
	struct statfs sf;
	unsigned a = 0, b = 0;
	if (fstatfs(fs->root_fd, &sf) == 0) {
		int v[2];
		memcpy(v, &sf.f_fsid, sizeof(v));
		a = (unsigned)v[0];
		b = (unsigned)v[1];
	}
	return g_strdup_printf("%08x%08x", a, b);
}

/* The name of the resume state of a job on directory inode ino: the
 * filesystem's id and the inode. */
static char *state_name(E4Fs *fs, uint64_t ino)
{
	g_autofree char *id = e4fs_fs_id(fs);
	return g_strdup_printf("resume-%s-%" PRIu64, id, ino);
}

/* The done set left by a stopped job on the node, or NULL (none, or a
 * damaged file: ignored, with a line in the log). */
static E4Resume *load_state(E4Fs *fs, const char *name)
{
	E4Resume *done = NULL;
	int rc = e4_resume_load(fs->state_dir_fd, name, &done);
	if (rc == -EBADMSG)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: resume state %s damaged: ignored\n", name);
	else if (rc < 0 && rc != -ENOENT)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: resume state %s: %s: ignored\n", name, g_strerror(-rc));
	else if (done)
		fuse_log(FUSE_LOG_INFO, "e4infofs: resuming from %s: %zu files finished before\n", name,
			 e4_resume_count(done));
	return done;
}

/* After a job: a deadline's stop leaves what was finished for the next
 * job; a job that went through ends the state; a cancel or failure
 * leaves it as it was. */
static void store_state(E4Fs *fs, Job *job, int rc, const char *name, const E4Resume *finished)
{
	if (rc == -ECANCELED && only_stopped(job)) {
		int err = e4_resume_save(finished, fs->state_dir_fd, name);
		if (err < 0)
			fuse_log(FUSE_LOG_WARNING, "e4infofs: resume state %s not written: %s\n", name,
				 g_strerror(-err));
	} else if (rc == 0 && unlinkat(fs->state_dir_fd, name, 0) < 0 && errno != ENOENT) {
		fuse_log(FUSE_LOG_WARNING, "e4infofs: resume state %s not removed: %s\n", name, g_strerror(errno));
	}
}

static int run_tree(Job *job, E4fsJobKind kind, const E4DefragOpts *opts)
{
	E4Fs *fs = job->fs;
	int dirfd = e4fs_node_open(fs, job->node, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		return dirfd;
	E4DefragTreeOpts topts = {
		.file = *opts,
		.worst_first = fs->worst_first,
		.threads = fs->defrag_threads,
		.by_path = fs->by_path,
		.progress = on_progress,
		.file_done = on_file_done,
		.room_done = on_room_done,
		.make_room = fs->fsroot_fd >= 0,
		.room_fd = fs->fsroot_fd,
	};
	g_autofree char *state = NULL;
	E4Resume *done = NULL, *finished = NULL;
	if (kind == E4FS_JOB_DEFRAG && fs->state_dir_fd >= 0) {
		state = state_name(fs, job->root_ino);
		topts.done = done = load_state(fs, state);
		topts.finished = finished = e4_resume_new();
		if (done)
			topts.worst_first = true; /* what is left, the most useful first */
	}
	E4DefragSummary sum;
	int rc = kind == E4FS_JOB_PACK ? e4_pack_tree(fs->defrag, dirfd, &topts, &sum)
				       : e4_defrag_tree(fs->defrag, dirfd, &topts, &sum);
	close(dirfd);
	if (state)
		store_state(fs, job, rc, state, finished);
	e4_resume_free(done);
	e4_resume_free(finished);
	g_mutex_lock(&job->lock);
	job->sum = sum;
	g_mutex_unlock(&job->lock);
	return rc == -ECANCELED ? 0 : rc;
}

static const char *result_state(Job *job, int rc)
{
	if (rc == -EINTR || rc == -ECANCELED)
		return "cancelled";
	if (rc < 0)
		return "failed";
	return only_stopped(job) ? "stopped" : "done";
}

static void store_result(E4Fs *fs, Job *job, int rc)
{
	char *text = e4_render_defrag_status(result_state(job, rc), &job->sum, NULL, false);
	g_mutex_lock(&fs->jobs_lock);
	g_ptr_array_remove(fs->jobs, job);
	g_hash_table_replace(fs->results, g_memdup2(&job->root_ino, sizeof(job->root_ino)), text);
	fs->jobs_done++;
	e4_defrag_summary_merge(&fs->jobs_totals, &job->sum);
	g_mutex_unlock(&fs->jobs_lock);
	/* A job that went through or stopped at its deadline, some files
	 * failed or not, took its natural time; a cancelled one did not. */
	if (job->rates && (rc == 0 || rc == -EIO))
		e4fs_costs_job_done(fs, &job->sum);
	const E4DefragSummary *s = &job->sum;
	fuse_log(FUSE_LOG_INFO,
		 "e4infofs: defrag of inode %" G_GUINT64_FORMAT ": %s, %" G_GUINT64_FORMAT " files, "
		 "%" G_GUINT64_FORMAT " improved, %" G_GUINT64_FORMAT " skipped, %" G_GUINT64_FORMAT
		 " failed, runs %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT ", %.1f s\n",
		 job->root_ino, result_state(job, rc), s->files_done, s->outcomes[E4_OUTCOME_IMPROVED],
		 s->outcomes[E4_OUTCOME_SKIPPED], s->outcomes[E4_OUTCOME_FAILED], s->runs_before,
		 s->runs_after, s->seconds);
}

/* The errno a finished job answers its writer with. */
static int job_errno(Job *job, int rc)
{
	if (rc < 0)
		return rc;
	if (fuse_req_interrupted(job->req))
		return -EINTR;
	/* A deadline is what the writer asked for: the write succeeds, and
	 * `state: stopped` tells what is left. */
	if (only_stopped(job))
		return job->sum.outcomes[E4_OUTCOME_FAILED] ? -EIO : 0;
	if (g_atomic_int_get(&job->cancel) || fuse_session_exited(job->fs->se) ||
	    job->sum.outcomes[E4_OUTCOME_CANCELLED] || job->sum.files_done < job->sum.files_total)
		return -ECANCELED;
	return job->sum.outcomes[E4_OUTCOME_FAILED] ? -EIO : 0;
}

/* 0, or why a job of this kind may not run on node (logged). */
static int job_misuse(E4Fs *fs, Node *node, E4fsJobKind kind, uid_t uid)
{
	const char *why = NULL;
	int rc = -EINVAL;
	if (kind == E4FS_JOB_PACK && !node->is_dir) {
		why = "pack: not a directory";
	} else if (kind == E4FS_JOB_COMPACT && node != fs->root) {
		why = "compact: not the mount root";
	} else if (kind == E4FS_JOB_COMPACT && uid != 0) {
		why = "compact: only root";
		rc = -EPERM;
	} else if (kind == E4FS_JOB_COMPACT && fs->fsroot_fd < 0) {
		why = "compact: needs a root daemon with make_room=1";
		rc = -EOPNOTSUPP;
	}
	if (why)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: job on inode %" PRIu64 " refused: %s\n", node->real_ino, why);
	return why ? rc : 0;
}

static int run_compact(Job *job, const E4DefragOpts *opts)
{
	E4Compacted c;
	job->room_live = true; /* before any move: read by the moves' callback */
	int rc = e4_compact(job->fs->defrag, job->fs->fsroot_fd, E4FS_COMPACT_MAX_BYTES, opts, &c);
	g_mutex_lock(&job->lock);
	job->sum.room_bytes_moved = c.bytes_moved;
	job->sum.room_files_moved = c.files_moved;
	job->sum.room_gave_way = c.gave_way;
	g_mutex_unlock(&job->lock);
	if (c.gave_way)
		log_gave_way(0);
	fuse_log(FUSE_LOG_INFO, "e4infofs: compact: %" PRIu64 " regions of %" PRIu64 " blocks cleared, %" PRIu64
		 " bytes of %" PRIu64 " files moved\n", c.regions, c.region_blocks, c.bytes_moved, c.files_moved);
	return rc == -ECANCELED ? 0 : rc;
}

/* The job's threads (this FUSE thread, and the workers it starts, which
 * inherit it) do their I/O in the idle class while it runs: returns the
 * priority to restore, or -1. */
static int enter_idle_io(Job *job)
{
	if (!job->fs->idle_io)
		return -1;
	int prev = e4_ioprio_idle();
	if (prev < 0)
		fuse_log(FUSE_LOG_WARNING, "e4infofs: job on inode %" PRIu64 ": no idle I/O priority (%s)\n",
			 job->root_ino, g_strerror(-prev));
	return prev;
}

/* The chunk of a job capped at mibps: 0.1 s of moving, from 256 KiB to
 * the usual 4 MiB. Bytes are counted when a chunk is granted and seen
 * moved when it ends: the smaller the chunk, the closer any window of
 * the moved bytes keeps to the cap. The bucket saves at most one chunk
 * (its burst): what a lone thread earns while it moves the chunk it paid
 * for. With burst 0 that time was lost: one thread moved 39-42 MiB/s
 * under mibps=50 (tests/bench/throttle.sh). A window of T s holds at
 * most mibps * T + one chunk + one chunk per thread. */
uint64_t e4fs_throttled_chunk(double mibps)
{
	double bytes = mibps * 1048576.0 / 10;
	return (uint64_t)CLAMP(bytes, 262144.0, (double)E4_DEFRAG_CHUNK_DEFAULT);
}

/* Runs a registered job under limits; returns the writer's errno. */
static int job_execute(Job *job, E4fsJobKind kind, const E4JobLimits *given, uid_t uid)
{
	E4Fs *fs = job->fs;
	E4JobLimits limits = fs->job_defaults;
	e4_job_limits_override(&limits, given);
	gint64 start = g_get_monotonic_time();
	if (limits.seconds > 0)
		job->deadline = start + (gint64)(limits.seconds * 1e6);
	E4DefragOpts opts = { .uid = uid, .good_kib = fs->good_kib, .min_runs = limits.min_runs,
			      .room_hold_bytes = (uint64_t)limits.hold_mib << 20, .cancelled = job_cancelled,
			      .user = job, .moved = on_room_moved, .moved_user = job };
	g_autoptr(E4Throttle) throttle = NULL;
	if (limits.mibps > 0) {
		opts.chunk_bytes = e4fs_throttled_chunk(limits.mibps);
		opts.throttle = throttle = e4_throttle_new(limits.mibps * 1048576.0, opts.chunk_bytes, NULL);
	}
	job->rates = kind == E4FS_JOB_DEFRAG && limits.mibps <= 0;
	int prio = enter_idle_io(job);
	int rc = 0;
	if (kind == E4FS_JOB_COMPACT)
		rc = run_compact(job, &opts);
	else if (job->node->is_dir)
		rc = run_tree(job, kind, &opts);
	else
		run_file(job, &opts);
	if (prio >= 0)
		e4_ioprio_restore(prio);
	job->sum.seconds = (double)(g_get_monotonic_time() - start) / 1e6;
	return job_errno(job, rc);
}

/* Keeps node's pictures of this moment as its map-before. */
static void keep_before(E4Fs *fs, Node *node)
{
	E4Before *b = g_new0(E4Before, 1);
	int rc = e4_attr_take_before(fs, node, b);
	if (rc < 0) {
		fuse_log(FUSE_LOG_ERR, "e4infofs: map-before of inode %" G_GUINT64_FORMAT ": %s\n",
			 node->real_ino, g_strerror(-rc));
		e4_before_free(b);
		return;
	}
	g_mutex_lock(&fs->jobs_lock);
	g_hash_table_replace(fs->befores, g_memdup2(&node->real_ino, sizeof(node->real_ino)), b);
	g_mutex_unlock(&fs->jobs_lock);
}

gint64 e4fs_before_time(E4Fs *fs, uint64_t ino)
{
	g_mutex_lock(&fs->jobs_lock);
	const E4Before *b = g_hash_table_lookup(fs->befores, &ino);
	gint64 t = b ? b->when_us : 0;
	g_mutex_unlock(&fs->jobs_lock);
	return t;
}

int e4fs_job_run(E4Fs *fs, Node *node, E4fsJobKind kind, const E4JobLimits *limits, fuse_req_t req,
		 uid_t uid)
{
	struct statvfs sv;
	int bad = job_misuse(fs, node, kind, uid);
	if (bad < 0)
		return bad;
	if (fstatvfs(fs->root_fd, &sv) == 0 && (sv.f_flag & ST_RDONLY))
		return -EROFS;
	Job *job = g_new0(Job, 1);
	*job = (Job){ .fs = fs, .node = node, .req = req, .root_ino = node->real_ino };
	g_mutex_init(&job->lock);
	job->chain = chain_of(fs, node);
	int rc = job_register(fs, job);
	if (rc == 0) {
		keep_before(fs, node);
		rc = job_execute(job, kind, limits, uid);
		store_result(fs, job, rc);
	}
	g_array_free(job->chain, TRUE);
	g_free(job->current);
	g_mutex_clear(&job->lock);
	g_free(job);
	return rc;
}

static Job *find_job(E4Fs *fs, uint64_t ino)
{
	for (guint i = 0; i < fs->jobs->len; i++) {
		Job *job = g_ptr_array_index(fs->jobs, i);
		if (job->root_ino == ino)
			return job;
	}
	return NULL;
}

void e4fs_job_cancel(E4Fs *fs, Node *node)
{
	g_mutex_lock(&fs->jobs_lock);
	Job *job = find_job(fs, node->real_ino);
	if (job)
		g_atomic_int_set(&job->cancel, 1);
	g_mutex_unlock(&fs->jobs_lock);
}

void e4fs_jobs_cancel_all(E4Fs *fs)
{
	g_mutex_lock(&fs->jobs_lock);
	for (guint i = 0; i < fs->jobs->len; i++)
		g_atomic_int_set(&((Job *)g_ptr_array_index(fs->jobs, i))->cancel, 1);
	g_mutex_unlock(&fs->jobs_lock);
}

void e4fs_jobs_totals(E4Fs *fs, uint64_t *jobs, E4DefragSummary *totals)
{
	g_mutex_lock(&fs->jobs_lock);
	*jobs = fs->jobs_done;
	*totals = fs->jobs_totals;
	g_mutex_unlock(&fs->jobs_lock);
}

char *e4fs_jobs_list(E4Fs *fs)
{
	GString *out = g_string_new("# inode percent files_done/files_total current\n");
	g_mutex_lock(&fs->jobs_lock);
	for (guint i = 0; i < fs->jobs->len; i++) {
		Job *job = g_ptr_array_index(fs->jobs, i);
		g_mutex_lock(&job->lock);
		const E4DefragSummary *s = &job->sum;
		g_string_append_printf(out, "%" G_GUINT64_FORMAT " %.1f %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " ",
				       job->root_ino, e4_defrag_percent(s), s->files_done, s->files_total);
		e4_escape_text(out, job->current ? job->current : "-");
		g_string_append_c(out, '\n');
		g_mutex_unlock(&job->lock);
	}
	g_mutex_unlock(&fs->jobs_lock);
	if (fs->autod)
		e4fs_auto_describe(fs->autod, out);
	return g_string_free(out, FALSE);
}

char *e4fs_job_status(E4Fs *fs, Node *node)
{
	char *text;
	g_mutex_lock(&fs->jobs_lock);
	Job *job = find_job(fs, node->real_ino);
	if (job) {
		g_mutex_lock(&job->lock);
		text = e4_render_defrag_status("running", &job->sum, job->current, true);
		g_mutex_unlock(&job->lock);
	} else {
		const char *last = g_hash_table_lookup(fs->results, &node->real_ino);
		text = last ? g_strdup(last) : e4_render_defrag_status("idle", NULL, NULL, false);
	}
	g_mutex_unlock(&fs->jobs_lock);
	return text;
}

void e4fs_jobs_init(E4Fs *fs)
{
	g_mutex_init(&fs->jobs_lock);
	fs->jobs = g_ptr_array_new();
	fs->results = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	fs->befores = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, e4_before_free);
}

void e4fs_jobs_free(E4Fs *fs)
{
	g_ptr_array_free(fs->jobs, TRUE);
	g_hash_table_destroy(fs->results);
	g_hash_table_destroy(fs->befores);
	g_mutex_clear(&fs->jobs_lock);
}
