#include "defragtree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <glib.h>
#include <linux/fiemap.h>

#include "exclude.h"
#include "freespace.h"
#include "handle.h"
#include "inspect.h"
#include "makeroom.h"
#include "walk.h"

/* The second pass stops once retries in a row that gained nothing add up
 * to this many bytes: the free space has no room for better donors, and
 * each try allocates and frees a donor as large as the file. Counted in
 * bytes, not files: 32 small files in a row that cannot be improved say
 * little about the next ones (measured: corpus a gave up after 650 of
 * about 50,000 retries that mostly succeed). */
#define RETRY_GIVE_UP_BYTES (512ull << 20)

typedef struct {
	E4Handle *file;
	E4Handle *dir;     /* shared: owned by the plan's dirs table */
	char *path;
	double rank;
	size_t order;      /* walk order, for a stable sort */
	int64_t mtime_ns;  /* as walked, for the resume set */
	E4FileFigures fig; /* as planned */
	E4FileDefrag result; /* of the first pass */
} Candidate;

typedef struct {
	E4Defrag *d;
	const E4DefragTreeOpts *opts;
	int mount_fd;
	GArray *todo;      /* Candidate */
	GPtrArray *queue;  /* Candidate * of the current pass, in order */
	bool retrying;     /* the second pass (or the third) */
	bool making_room;  /* the third pass */
	uint64_t fruitless; /* bytes of the retries in a row that gained nothing */
	GHashTable *dirs;  /* dir ino -> E4Handle */
	E4Exclude *exclude; /* marked directories, for the walk */
	GMutex lock;       /* guards sum, next and the callbacks */
	E4DefragSummary *sum;
	size_t next;
} Plan;

typedef struct {
	Plan *plan;
	const char *path;
	uint64_t reported;  /* bytes of the current file already counted */
} Worker;

static void report(Plan *p, const char *current)
{
	if (p->opts->progress)
		p->opts->progress(p->sum, current, p->opts->file.user);
}

double e4_defrag_percent(const E4DefragSummary *s)
{
	if (s->bytes_total)
		return 100.0 * (double)s->bytes_done / (double)s->bytes_total;
	return s->files_total ? 100.0 * (double)s->files_done / (double)s->files_total : 0;
}

void e4_defrag_summary_merge(E4DefragSummary *dst, const E4DefragSummary *src)
{
	dst->files_total += src->files_total;
	dst->files_done += src->files_done;
	dst->bytes_total += src->bytes_total;
	dst->bytes_done += src->bytes_done;
	for (int o = 0; o < E4_OUTCOME__COUNT; o++)
		dst->outcomes[o] += src->outcomes[o];
	for (int k = 0; k < E4_DSKIP__COUNT; k++)
		dst->skips[k] += src->skips[k];
	dst->runs_before += src->runs_before;
	dst->runs_after += src->runs_after;
	dst->bytes_moved += src->bytes_moved;
	dst->room_bytes_moved += src->room_bytes_moved;
	dst->room_files_moved += src->room_files_moved;
	dst->room_gave_way += src->room_gave_way;
	dst->room_for_bytes += src->room_for_bytes;
	dst->retried += src->retried;
	dst->resumed += src->resumed;
	dst->seconds += src->seconds;
	if (!dst->first_error)
		dst->first_error = src->first_error;
}

void e4_defrag_summary_add(E4DefragSummary *s, const E4FileDefrag *res)
{
	s->files_done++;
	s->outcomes[res->outcome]++;
	if (res->outcome == E4_OUTCOME_SKIPPED)
		s->skips[res->skip]++;
	if (res->outcome == E4_OUTCOME_FAILED && !s->first_error)
		s->first_error = res->error;
	s->runs_before += res->runs_before;
	s->runs_after += res->runs_after;
	s->bytes_moved += res->bytes_moved;
}

static int64_t mtime_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Skips that a later job may find otherwise (or that a user may lift:
 * an exclusion mark removed). */
static bool transient(E4DefragSkip k)
{
	return k == E4_DSKIP_EXCLUDED || k == E4_DSKIP_CHANGED || k == E4_DSKIP_BUSY ||
	       k == E4_DSKIP_NO_SPACE || k == E4_DSKIP_LOCKED || k == E4_DSKIP_RUNNING;
}

/* Remembers a file that needs nothing more, for a resumed job. Under the
 * lock, or before the workers start. */
static void note_finished(Plan *p, const E4FileDefrag *res, uint64_t size, int64_t mtime_ns)
{
	E4Outcome o = res->outcome;
	bool finished = o == E4_OUTCOME_IMPROVED || o == E4_OUTCOME_OPTIMAL || o == E4_OUTCOME_NO_GAIN ||
			(o == E4_OUTCOME_SKIPPED && !transient(res->skip));
	if (p->opts->finished && finished)
		e4_resume_add(p->opts->finished, res->ino, size, mtime_ns);
}

static void finish_file(Plan *p, const char *path, const E4FileDefrag *res)
{
	g_mutex_lock(&p->lock);
	e4_defrag_summary_add(p->sum, res);
	if (p->opts->file_done)
		p->opts->file_done(path, res, p->opts->file.user);
	report(p, NULL);
	g_mutex_unlock(&p->lock);
}

static E4Handle *dir_handle(Plan *p, int dirfd)
{
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return NULL;
	E4Handle *h = g_hash_table_lookup(p->dirs, &st.st_ino);
	if (!h && (h = e4_handle_of(dirfd)))
		g_hash_table_insert(p->dirs, g_memdup2(&st.st_ino, sizeof(st.st_ino)), h);
	return h;
}

/* The handles of the file name in dirfd (*fh, new) and of dirfd itself
 * (*dh, the plan's). 0, or -errno with nothing to free: the errno of the
 * step that failed, never a later call's. */
static int candidate_handles(Plan *p, int dirfd, const char *name, E4Handle **fh, E4Handle **dh)
{
	*fh = *dh = NULL;
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*fh = e4_handle_of(fd);
	int rc = *fh ? 0 : -errno;
	close(fd);
	if (rc == 0 && !(*dh = dir_handle(p, dirfd)))
		rc = -errno;
	if (rc < 0)
		g_clear_pointer(fh, g_free);
	return rc;
}

/* The outcome of a file the plan could not map. */
static E4FileDefrag unanalysable(const E4FileResult *r)
{
	E4FileDefrag res = { .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_TOO_SMALL,
			     .ino = r->st.st_ino, .size = (uint64_t)r->st.st_size };
	if (r->skip == E4_SKIP_NO_EXTENTS && (r->fig.flags & FIEMAP_EXTENT_DATA_INLINE))
		res.skip = E4_DSKIP_INLINE_DATA;
	if (r->skip == E4_SKIP_UNREADABLE || r->skip == E4_SKIP_NO_FIEMAP) {
		res.outcome = E4_OUTCOME_FAILED;
		res.error = r->error;
	}
	return res;
}

/* Files that need no move are counted now; the others are planned. */
static int plan_file(int dirfd, const char *name, const struct stat *st, const char *path,
		     void *user)
{
	Plan *p = user;
	const E4DefragOpts *f = &p->opts->file;
	if (f->cancelled && f->cancelled(f->user))
		return -ECANCELED;
	if (e4_exclude_at(p->exclude, dirfd, name)) {
		/* Not even mapped: left alone, as the user asked. */
		p->sum->files_total++;
		finish_file(p, path, &(E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_EXCLUDED,
						      .ino = st->st_ino, .size = (uint64_t)st->st_size });
		return 0;
	}
	if (p->opts->done && e4_resume_has(p->opts->done, st->st_ino, (uint64_t)st->st_size, mtime_of(st))) {
		p->sum->resumed++; /* finished by the job resumed: not examined again */
		note_finished(p, &(E4FileDefrag){ .outcome = E4_OUTCOME_OPTIMAL, .ino = st->st_ino },
			      (uint64_t)st->st_size, mtime_of(st));
		return 0;
	}
	E4FileResult r;
	if (e4_inspect_at(dirfd, name, e4_defrag_geometry(p->d), NULL, &r) < 0)
		return 0; /* gone or replaced meanwhile */
	p->sum->files_total++;
	E4FileDefrag res = { .outcome = E4_OUTCOME_OPTIMAL, .ino = r.st.st_ino,
			     .size = (uint64_t)r.st.st_size, .runs_before = r.fig.runs,
			     .runs_after = r.fig.runs };
	if (r.skip >= 0) {
		res = unanalysable(&r);
	} else if (e4_defrag_needed(&r.fig, f, e4_defrag_geometry(p->d)->block_size)) {
		E4Handle *fh, *dh;
		int rc = candidate_handles(p, dirfd, name, &fh, &dh);
		if (rc == 0) {
			Candidate c = { fh, dh, g_strdup(path), e4_figures_rank(&r.fig), p->todo->len,
					.mtime_ns = mtime_of(st), .fig = r.fig };
			g_array_append_val(p->todo, c);
			p->sum->bytes_total += res.size;
			return 0;
		}
		res.outcome = E4_OUTCOME_FAILED;
		res.error = -rc;
	}
	finish_file(p, path, &res);
	note_finished(p, &res, (uint64_t)st->st_size, mtime_of(st));
	return 0;
}

/* Files this large go first, whatever their rank: they need the largest
 * free extents, which donors of smaller files would otherwise use up
 * (small donors also fit in the holes that moving files frees). */
#define LARGE_FILE (64u << 20)

static int large_first(const Candidate *x, const Candidate *y)
{
	bool xl = x->fig.size >= LARGE_FILE, yl = y->fig.size >= LARGE_FILE;
	return xl == yl ? 0 : (xl ? -1 : 1);
}

static int earlier_first(const Candidate *x, const Candidate *y)
{
	return (x->order > y->order) - (x->order < y->order);
}

/* Large files, then the others in walk order: files of a directory one
 * after the other, so that files that were interleaved on disk are moved
 * together and free whole runs for the next donors. */
static int walk_order(const void *a, const void *b)
{
	const Candidate *x = a, *y = b;
	int l = large_first(x, y);
	return l ? l : earlier_first(x, y);
}

/* Large files, then the most fragmented first (e4defrag's rank). */
static int worse_first(const void *a, const void *b)
{
	const Candidate *x = a, *y = b;
	int l = large_first(x, y);
	if (l)
		return l;
	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	return earlier_first(x, y);
}

static void on_file_progress(uint64_t bytes_done, void *user)
{
	Worker *w = user;
	Plan *p = w->plan;
	g_mutex_lock(&p->lock);
	p->sum->bytes_done += bytes_done - w->reported;
	w->reported = bytes_done;
	report(p, w->path);
	g_mutex_unlock(&p->lock);
}

static bool on_plan_cancelled(const Plan *p)
{
	const E4DefragOpts *f = &p->opts->file;
	return f->cancelled && f->cancelled(f->user);
}

static bool on_cancelled(void *user)
{
	Worker *w = user;
	return on_plan_cancelled(w->plan);
}

/* A second attempt counts as an improvement only when it did better: a
 * retry that fails (the file went away, no space) or gains nothing leaves
 * the first outcome standing. Whatever it moved is accounted for. */
static void finish_retry(Plan *p, Candidate *c, const E4FileDefrag *res)
{
	g_mutex_lock(&p->lock);
	E4DefragSummary *s = p->sum;
	bool better = res->outcome == E4_OUTCOME_IMPROVED && res->runs_after < c->result.runs_after;
	s->retried++;
	p->fruitless = better ? 0 : p->fruitless + c->result.size;
	if (res->bytes_moved > 0) {
		s->bytes_moved += res->bytes_moved;
		s->runs_after = s->runs_after - c->result.runs_after + res->runs_after;
		c->result.runs_after = res->runs_after;
		c->result.bytes_moved += res->bytes_moved;
	}
	if (better && c->result.outcome != E4_OUTCOME_IMPROVED) {
		s->outcomes[c->result.outcome]--;
		s->outcomes[E4_OUTCOME_IMPROVED]++;
		c->result.outcome = E4_OUTCOME_IMPROVED;
	}
	if (res->bytes_moved > 0 && p->opts->file_done)
		p->opts->file_done(c->path, &c->result, p->opts->file.user);
	report(p, NULL);
	g_mutex_unlock(&p->lock);
}

/* Reopens a planned object found at path (relative to the job's
 * directory) when it was planned: exactly that inode, or -ESTALE. */
static int reopen(const Plan *p, const char *path, const E4Handle *h, int flags)
{
	if (!p->opts->by_path)
		return e4_handle_open(p->mount_fd, h, flags);
	return e4_handle_open_path(p->mount_fd, path, h, flags);
}

/* A defrag of one file, making room for it in the third pass. */
static void move_file(Plan *p, const char *path, int fd, int dirfd, const E4DefragOpts *fopts,
		      E4FileDefrag *res)
{
	if (!p->making_room) {
		e4_defrag_file(p->d, fd, dirfd, fopts, res);
		return;
	}
	E4RoomMade room;
	e4_defrag_file_making_room(p->d, fd, dirfd, p->opts->room_fd, fopts, res, &room);
	g_mutex_lock(&p->lock);
	p->sum->room_bytes_moved += room.bytes_moved;
	p->sum->room_files_moved += room.files_moved;
	p->sum->room_gave_way += room.gave_way;
	if (room.gave_way)
		p->making_room = false; /* others need the free space: the rest plainly */
	g_mutex_unlock(&p->lock);
	if (room.tried && p->opts->room_done)
		p->opts->room_done(path, res, &room, p->opts->file.user);
}

static void move_candidate(Worker *w, Candidate *c)
{
	Plan *p = w->plan;
	E4FileDefrag res = { .outcome = E4_OUTCOME_FAILED };
	int fd = reopen(p, c->path, c->file, O_PATH);
	g_autofree char *dir = g_path_get_dirname(c->path);
	int dirfd = reopen(p, dir, c->dir, O_RDONLY | O_DIRECTORY);
	if (fd == -ESTALE || fd == -ENOENT || dirfd == -ESTALE) {
		/* Deleted (or replaced by a rename) since the walk; in path
		 * mode also moved elsewhere, with its directory or alone. */
		res.outcome = E4_OUTCOME_SKIPPED;
		res.skip = E4_DSKIP_CHANGED;
	} else if (fd < 0 || dirfd < 0) {
		res.error = fd < 0 ? -fd : -dirfd;
	} else {
		E4DefragOpts fopts = p->opts->file;
		fopts.progress = on_file_progress;
		fopts.cancelled = on_cancelled;
		fopts.user = w;
		w->path = c->path;
		w->reported = 0;
		g_mutex_lock(&p->lock);
		report(p, c->path);
		g_mutex_unlock(&p->lock);
		move_file(p, c->path, fd, dirfd, &fopts, &res);
	}
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	/* What was planned but not moved still counts as done for progress,
	 * unless the job stopped in the file: its rest is what is left. */
	g_mutex_lock(&p->lock);
	if (res.outcome != E4_OUTCOME_CANCELLED)
		p->sum->bytes_done += res.size > w->reported ? res.size - w->reported : 0;
	g_mutex_unlock(&p->lock);
	if (p->retrying) {
		finish_retry(p, c, &res);
	} else {
		c->result = res;
		finish_file(p, c->path, &res);
		g_mutex_lock(&p->lock);
		note_finished(p, &res, c->fig.size, c->mtime_ns);
		g_mutex_unlock(&p->lock);
	}
}

static gpointer worker_main(gpointer data)
{
	Worker *w = data;
	Plan *p = w->plan;
	for (;;) {
		if (on_cancelled(w))
			break;
		g_mutex_lock(&p->lock);
		if (p->retrying && p->fruitless >= RETRY_GIVE_UP_BYTES)
			p->next = p->queue->len;
		size_t i = p->next < p->queue->len ? p->next++ : p->queue->len;
		g_mutex_unlock(&p->lock);
		if (i >= p->queue->len)
			break;
		move_candidate(w, g_ptr_array_index(p->queue, i));
	}
	return NULL;
}

static void run_workers(Plan *p, unsigned threads)
{
	if (threads == 0)
		threads = 1;
	Worker *workers = g_new0(Worker, threads);
	GThread **th = g_new0(GThread *, threads);
	for (unsigned i = 0; i < threads; i++) {
		workers[i].plan = p;
		th[i] = g_thread_new("e4defrag", worker_main, &workers[i]);
	}
	for (unsigned i = 0; i < threads; i++)
		g_thread_join(th[i]);
	g_free(th);
	g_free(workers);
}

/* Worth a second donor: moved (or not) with runs left above the ideal. */
static bool worth_retry(const Plan *p, const Candidate *c)
{
	if (c->result.outcome != E4_OUTCOME_IMPROVED && c->result.outcome != E4_OUTCOME_NO_GAIN)
		return false;
	E4FileFigures now = c->fig;
	now.runs = c->result.runs_after;
	return e4_defrag_needed(&now, &p->opts->file, e4_defrag_geometry(p->d)->block_size);
}

/* Queues the files worth a second donor; returns their bytes. Files that no
 * donor could improve, even one made of the largest free extents there are
 * (free: NULL when unknown), are left out: a try on a filesystem whose
 * free space is all small pieces costs a donor as large as the file. */
static uint64_t queue_retries(Plan *p, const E4FreeSpace *free)
{
	uint64_t bytes = 0;
	g_ptr_array_set_size(p->queue, 0);
	for (size_t i = 0; i < p->todo->len; i++) {
		Candidate *c = &g_array_index(p->todo, Candidate, i);
		if (!worth_retry(p, c))
			continue;
		if (free && e4_freespace_min_pieces(free, c->fig.blocks) >= c->result.runs_after)
			continue;
		g_ptr_array_add(p->queue, c);
		bytes += c->result.size;
	}
	return bytes;
}

/* The files whose first donor was not good enough get a second one, once
 * every other file has been moved: the first pass frees the old blocks of
 * every file it moved, which is often the contiguous room that was missing
 * (on a filesystem whose free space is fragmented, the freed runs of files
 * that were interleaved join up). Freed blocks become allocatable only
 * when the journal commits them: the filesystem is synced first. */
static void retry_pass(Plan *p)
{
	if (queue_retries(p, NULL) == 0)
		return;
	syncfs(p->mount_fd);
	E4FreeSpace free;
	bool known = e4_freespace_read(p->mount_fd, e4_defrag_geometry(p->d)->block_size, &free) == 0;
	uint64_t bytes = queue_retries(p, known ? &free : NULL);
	if (p->queue->len == 0)
		return;
	g_mutex_lock(&p->lock);
	p->retrying = true;
	p->next = 0;
	p->sum->bytes_total += bytes;
	report(p, NULL);
	g_mutex_unlock(&p->lock);
	run_workers(p, p->opts->threads);
	/* Files left when the pass gave up count as done. */
	g_mutex_lock(&p->lock);
	if (!on_plan_cancelled(p))
		p->sum->bytes_done = p->sum->bytes_total;
	g_mutex_unlock(&p->lock);
}

static gint larger_first(gconstpointer a, gconstpointer b)
{
	const Candidate *x = *(Candidate *const *)a, *y = *(Candidate *const *)b;
	return (x->fig.blocks < y->fig.blocks) - (x->fig.blocks > y->fig.blocks);
}

/* The files still above their ideal after two passes, largest first, get
 * room made for them, one at a time: each maps the whole filesystem. */
static void room_pass(Plan *p)
{
	if (!p->opts->make_room || p->opts->file.uid != 0 || on_plan_cancelled(p))
		return;
	uint64_t bytes = 0;
	g_ptr_array_set_size(p->queue, 0);
	for (size_t i = 0; i < p->todo->len; i++) {
		Candidate *c = &g_array_index(p->todo, Candidate, i);
		if (!worth_retry(p, c) || c->fig.blocks < E4_ROOM_MIN_FILE_BLOCKS || c->fig.blocks > E4_ROOM_MAX_REGION_BLOCKS)
			continue;
		g_ptr_array_add(p->queue, c);
		bytes += c->result.size;
	}
	if (p->queue->len == 0)
		return;
	g_ptr_array_sort(p->queue, larger_first);
	g_mutex_lock(&p->lock);
	p->retrying = p->making_room = true;
	p->fruitless = 0;
	p->next = 0;
	p->sum->bytes_total += bytes;
	p->sum->room_for_bytes += bytes;
	report(p, NULL);
	g_mutex_unlock(&p->lock);
	run_workers(p, 1);
	g_mutex_lock(&p->lock);
	if (!on_plan_cancelled(p))
		p->sum->bytes_done = p->sum->bytes_total;
	g_mutex_unlock(&p->lock);
}

static void clear_candidate(gpointer data)
{
	Candidate *c = data;
	g_free(c->file);
	g_free(c->path);
}

int e4_defrag_tree(E4Defrag *d, int dirfd, const E4DefragTreeOpts *opts, E4DefragSummary *out)
{
	*out = (E4DefragSummary){0};
	gint64 start = g_get_monotonic_time();
	Plan p = { .d = d, .opts = opts, .mount_fd = dirfd, .sum = out,
		   .todo = g_array_new(FALSE, FALSE, sizeof(Candidate)),
		   .dirs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free) };
	g_array_set_clear_func(p.todo, clear_candidate);
	p.queue = g_ptr_array_new();
	g_mutex_init(&p.lock);
	p.exclude = e4_exclude_new();
	int rc = e4_walk(dirfd, e4_defrag_dev(d), plan_file, &p);
	if (rc == 0) {
		if (p.todo->len > 1)
			qsort(p.todo->data, p.todo->len, sizeof(Candidate),
			      opts->worst_first ? worse_first : walk_order);
		for (size_t i = 0; i < p.todo->len; i++)
			g_ptr_array_add(p.queue, &g_array_index(p.todo, Candidate, i));
		run_workers(&p, opts->threads);
		bool cancelled = out->files_done < out->files_total || out->outcomes[E4_OUTCOME_CANCELLED] ||
				 on_plan_cancelled(&p);
		if (!cancelled)
			retry_pass(&p);
		if (!cancelled)
			room_pass(&p);
		if (cancelled || on_plan_cancelled(&p))
			rc = -ECANCELED;
	}
	g_ptr_array_free(p.queue, TRUE);
	g_array_free(p.todo, TRUE);
	g_hash_table_destroy(p.dirs);
	e4_exclude_free(p.exclude);
	g_mutex_clear(&p.lock);
	out->seconds = (double)(g_get_monotonic_time() - start) / 1e6;
	return rc;
}
