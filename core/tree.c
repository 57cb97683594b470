#include "tree.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "exclude.h"
#include "filerec.h"
#include "inspect.h"
#include "itable.h"
#include "walk.h"
#include "watch.h"

/* Inspections queued at most per scan: bounds the fds and memory a scan
 * of a huge directory holds at once. */
#define MAX_PENDING 4096

/* A settled subtree keeps its aggregate when it holds at least this many
 * files and directories: smaller ones are summed again from the cache
 * (no syscall), which costs less than the memory of an aggregate each. */
#define AGG_MIN_WEIGHT 256

/* Top files an aggregate is computed with at least, so that reads asking
 * for none (stats, metrics) and for the report's default share it. */
#define AGG_MIN_TOP 10

/* A cached file (filerec.h): its name is an offset in its directory's
 * name block. Only ctime is compared to tell a change (with size and
 * inode): whatever sets mtime sets ctime too. The exclusion mark is read
 * with the figures: setting it changes ctime. */
typedef E4FileRec FileRec;

typedef struct {
	const char *name;
	uint64_t ino;           /* 0: could not be opened in the last scan */
} SubdirRec;

/* The figures of a settled subtree, as a scan that does not list its
 * files reports them. */
typedef struct {
	E4Summary sum;
	E4Top top;              /* paths relative to the subtree's directory */
	size_t top_cap;         /* top holds the best top_cap files (or fewer
	                         * when fewer rank); top.cap is its length */
	uint64_t weight;        /* files and directories: what summing it costs */
	bool linked;            /* holds a multiply linked file, whose count
	                         * depends on the rest of the scan: never kept */
} SubtreeAgg;

typedef struct {
	uint64_t ino;
	uint64_t parent;        /* the directory a scan last found it in, 0 none */
	int64_t mtime_ns, ctime_ns;
	char *names;            /* every entry's name, one block: its exact size
	                         * (a GStringChunk took 4 KiB per directory) */
	FileRec *files;
	size_t nfiles;
	SubdirRec *subdirs;
	size_t nsubdirs;
	bool clean;             /* watched, and no event since it was checked */
	bool settled;           /* watched, and nothing changed anywhere in the
	                         * subtree since it was last aggregated: a scan
	                         * neither opens nor checks it. Only a settled
	                         * directory's parent may be settled, and an
	                         * event unsettles a directory and its parents */
	SubtreeAgg *agg;        /* NULL, or (settled only) the subtree's figures */
	bool marked;            /* carries the exclusion mark: read when relisted
	                         * (setting it changes the directory's ctime) */
	uint32_t used;          /* the scan that last read it (low bits), for the cap */
	uint64_t bytes;         /* what it takes, as counted in cache_bytes */
	uint64_t extra;         /* of which its files' side records */
	bool extra_stale;       /* inspections may have changed extra */
	size_t names_len;       /* bytes of names */
} DirRec;

struct E4Tree {
	E4Geometry geom;
	dev_t dev;
	GMutex lock;            /* one scan at a time */
	GHashTable *dirs;       /* ino -> DirRec */
	GHashTable *forgotten;  /* inos whose cached figures must not be reused */
	GThreadPool *pool;
	E4Watch *watch;         /* NULL: every scan checks every file with a stat */
	GThread *drainer;       /* keeps the event queue short between scans */
	int wake;               /* eventfd: tells the drainer to stop now */
	gint stop;              /* set by e4_tree_stop: scans end at once */
	bool forgot;            /* an inode was forgotten: unsettle everything
	                         * before the next scan (its directory is unknown) */
	uint64_t scans, inspections, revalidations, dir_opens; /* atomic */
	uint64_t raw_inspections; /* atomic: of the inspections, read raw */
	uint64_t dirs_listed;   /* atomic: directories read (relisted) */
	int64_t scan_start_us;  /* atomic: monotonic start of the scan under way, 0: none */
	uint64_t scan_inspections0, scan_dirs0; /* atomic: the counters at its start */
	E4Itable *itable;       /* NULL: every file is opened and mapped */
	uint64_t cache_bytes;   /* atomic: sum of the directories' bytes */
	uint64_t cache_limit;   /* 0: no cap */
	uint64_t dirs_dropped;  /* atomic */
	gint64 changed_us;      /* atomic: realtime of the last change event seen */
	GMutex moved_lock;      /* guards moved_us, not the scan lock: stat needs it */
	GHashTable *moved_us;   /* ino -> realtime of its last e4_tree_forget_inode */
	E4TreeWriteFn on_write; /* set before the watch: writes to files */
	uint64_t drained;       /* atomic: events reported (with the lock) */
	int64_t drain_us;       /* monotonic time of the drain under way */
	void *on_write_user;
};

static void note_change(E4Tree *tree)
{
	__atomic_store_n(&tree->changed_us, g_get_real_time(), __ATOMIC_RELAXED);
}

/* A directory fd shared by the inspections queued in it. */
typedef struct {
	int fd;
	gint refs;
} SharedDir;

typedef struct {
	E4Tree *tree;
	GMutex lock;
	GCond done;
	unsigned pending;
	GHashTable *visited;    /* directory inos of this scan: no cycles */
	bool cold;              /* its directory was not cached: new directories
	                         * are read from the inode tables (use_raw) */
	bool synced;            /* the filesystem was synced for raw reads */
	E4ItableCursor *cursor; /* the walker's, once synced */
} Scan;

/* Files inspected by one pool task: one wake-up per batch, not per file
 * (wake-ups were a tenth of a cold scan's CPU time). */
#define BATCH 32

typedef struct {
	Scan *scan;
	SharedDir *dir;
	const char *names;      /* the name block of the records' directory */
	size_t n;
	FileRec *recs[BATCH];
} Job;

static int64_t ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static SharedDir *shared_dir_new(int fd)
{
	SharedDir *d = g_new(SharedDir, 1);
	*d = (SharedDir){ fd, 1 };
	return d;
}

static void shared_dir_unref(SharedDir *d)
{
	if (!g_atomic_int_dec_and_test(&d->refs))
		return;
	close(d->fd);
	g_free(d);
}

static void agg_free(SubtreeAgg *agg)
{
	e4_top_clear(&agg->top);
	g_free(agg);
}

static uint64_t agg_bytes(const SubtreeAgg *agg)
{
	return agg ? sizeof(*agg) + agg->top.cap * sizeof(E4TopEntry) : 0;
}

/* Frees rec's aggregate, and takes it off the cache's count. */
static void drop_agg(E4Tree *tree, DirRec *rec)
{
	uint64_t b = MIN(agg_bytes(rec->agg), rec->bytes);
	rec->bytes -= b;
	__atomic_fetch_sub(&tree->cache_bytes, b, __ATOMIC_RELAXED);
	g_clear_pointer(&rec->agg, agg_free);
}

static DirRec *dir_lookup(E4Tree *tree, uint64_t ino)
{
	return ino ? g_hash_table_lookup(tree->dirs, &ino) : NULL;
}

/* Something changed in rec's subtree: neither it nor any directory above
 * it may be skipped or served from its aggregate any more. Stops at the
 * first unsettled one, whose parents are unsettled already. */
static void unsettle(E4Tree *tree, DirRec *rec)
{
	while (rec && rec->settled) {
		rec->settled = false;
		drop_agg(tree, rec);
		rec = dir_lookup(tree, rec->parent);
	}
}

/* Trusts nothing cached until checked again; files too when files is set. */
static void unsettle_all(E4Tree *tree, bool files)
{
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, tree->dirs);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		DirRec *rec = value;
		rec->settled = false;
		drop_agg(tree, rec);
		if (files)
			rec->clean = false;
	}
}

static void dir_rec_free(gpointer p)
{
	DirRec *rec = p;
	if (rec->agg)
		agg_free(rec->agg);
	g_free(rec->names);
	for (size_t i = 0; i < rec->nfiles; i++)
		e4_filerec_clear(&rec->files[i]);
	g_free(rec->files);
	g_free(rec->subdirs);
	g_free(rec);
}

/* What rec takes, recounted (its files' side records change with
 * inspections): call once its jobs are done. */
static void count_bytes(E4Tree *tree, DirRec *rec)
{
	/* Side records change only where files were inspected: a re-read
	 * that inspected nothing does not walk the files again. */
	if (rec->extra_stale) {
		rec->extra = 0;
		for (size_t i = 0; i < rec->nfiles; i++)
			rec->extra += e4_filerec_extra_bytes(&rec->files[i]);
		rec->extra_stale = false;
	}
	uint64_t b = sizeof(*rec) + rec->names_len + rec->nfiles * sizeof(FileRec) +
		     rec->nsubdirs * sizeof(SubdirRec) + rec->extra + agg_bytes(rec->agg);
	__atomic_fetch_add(&tree->cache_bytes, b - rec->bytes, __ATOMIC_RELAXED);
	rec->bytes = b;
	rec->used = (uint32_t)__atomic_load_n(&tree->scans, __ATOMIC_RELAXED);
}

/* rec leaves the cache. */
static void uncount_bytes(E4Tree *tree, DirRec *rec)
{
	__atomic_fetch_sub(&tree->cache_bytes, rec->bytes, __ATOMIC_RELAXED);
	rec->bytes = 0;
}

static void store_result(const E4Tree *tree, FileRec *rec, const E4FileResult *r)
{
	rec->ctime_ns = ns(&r->st.st_ctim);
	e4_filerec_put(rec, E4_FR_LINKED, r->st.st_nlink > 1);
	e4_filerec_set_skip(rec, r->skip);
	E4FileFigures size_only = { .size = (uint64_t)r->st.st_size };
	e4_filerec_set(rec, r->st.st_ino, r->skip < 0 ? &r->fig : &size_only, &tree->geom);
	e4_filerec_put(rec, E4_FR_VALID, true);
}

/* The raw reading of rec's inode (itable.h); false when it declined. */
static bool inspect_raw(E4Tree *tree, E4ItableCursor *cur, FileRec *rec)
{
	E4FileResult r;
	bool marked;
	e4_filerec_put(rec, E4_FR_VALID, false);
	if (e4_itable_inspect(tree->itable, cur, e4_filerec_ino(rec), &tree->geom, NULL, &r, &marked) < 0)
		return false;
	__atomic_fetch_add(&tree->inspections, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&tree->raw_inspections, 1, __ATOMIC_RELAXED);
	store_result(tree, rec, &r);
	e4_filerec_put(rec, E4_FR_MARKED, marked);
	return true;
}

static void inspect_rec(E4Tree *tree, int dirfd, const char *names, FileRec *rec)
{
	E4FileResult r;
	const char *name = names + rec->name;
	e4_filerec_put(rec, E4_FR_VALID, false);
	if (g_atomic_int_get(&tree->stop))
		return;
	__atomic_fetch_add(&tree->inspections, 1, __ATOMIC_RELAXED);
	bool marked = false;
	if (e4_inspect_at_marked(dirfd, name, &tree->geom, NULL, &r, &marked) == 0) {
		store_result(tree, rec, &r);
		e4_filerec_put(rec, E4_FR_MARKED, marked);
	}
}

static void run_job(gpointer data, gpointer user)
{
	(void)user;
	Job *job = data;
	Scan *scan = job->scan;
	for (size_t i = 0; i < job->n; i++)
		inspect_rec(scan->tree, job->dir->fd, job->names, job->recs[i]);
	shared_dir_unref(job->dir);
	g_free(job);
	g_mutex_lock(&scan->lock);
	if (--scan->pending == 0 || scan->pending == MAX_PENDING - 1)
		g_cond_broadcast(&scan->done);
	g_mutex_unlock(&scan->lock);
}

/* Queues the inspection of recs[0..n), n <= BATCH. */
static void queue_job(Scan *scan, SharedDir *dir, const char *names, FileRec **recs, size_t n)
{
	g_mutex_lock(&scan->lock);
	while (scan->pending >= MAX_PENDING)
		g_cond_wait(&scan->done, &scan->lock);
	scan->pending++;
	g_mutex_unlock(&scan->lock);
	Job *job = g_new(Job, 1);
	g_atomic_int_inc(&dir->refs);
	*job = (Job){ scan, dir, names, n, {0} };
	memcpy(job->recs, recs, n * sizeof(*recs));
	g_thread_pool_push(scan->tree->pool, job, NULL);
}

static void wait_jobs(Scan *scan)
{
	g_mutex_lock(&scan->lock);
	while (scan->pending > 0)
		g_cond_wait(&scan->done, &scan->lock);
	g_mutex_unlock(&scan->lock);
}

/* True when the cached figures of rec still describe the file. */
static bool still_valid(E4Tree *tree, int dirfd, const char *names, const FileRec *rec)
{
	if (!e4_filerec_has(rec, E4_FR_VALID))
		return false;
	/* A forgotten inode is about to be inspected again: forget no more. */
	uint64_t ino = e4_filerec_ino(rec);
	if (g_hash_table_remove(tree->forgotten, &ino))
		return false;
	__atomic_fetch_add(&tree->revalidations, 1, __ATOMIC_RELAXED);
	struct stat st;
	if (fstatat(dirfd, names + rec->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return false;
	return st.st_ino == ino && (uint64_t)st.st_size == e4_filerec_size(rec) &&
	       ns(&st.st_ctim) == rec->ctime_ns;
}

/* A directory's previous record, its entries found by name: through
 * tables once there are many (a search per entry made relisting a
 * directory of 10,000 files cost ~10^8 comparisons). */
typedef struct {
	const DirRec *old;      /* NULL: none */
	GHashTable *files;      /* name -> FileRec; NULL: search old */
	GHashTable *subdirs;    /* name -> SubdirRec */
} OldIndex;

#define INDEX_MIN 32

static void old_index_init(OldIndex *idx, const DirRec *old)
{
	*idx = (OldIndex){ .old = old };
	if (!old || old->nfiles + old->nsubdirs < INDEX_MIN)
		return;
	idx->files = g_hash_table_new(g_str_hash, g_str_equal);
	idx->subdirs = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < old->nfiles; i++)
		g_hash_table_insert(idx->files, old->names + old->files[i].name, &old->files[i]);
	for (size_t i = 0; i < old->nsubdirs; i++)
		g_hash_table_insert(idx->subdirs, (gpointer)old->subdirs[i].name, &old->subdirs[i]);
}

static void old_index_clear(OldIndex *idx)
{
	g_clear_pointer(&idx->files, g_hash_table_destroy);
	g_clear_pointer(&idx->subdirs, g_hash_table_destroy);
}

/* The previous record of the file name if it is still the inode ino. */
static const FileRec *find_old(const OldIndex *idx, const char *name, uint64_t ino)
{
	const DirRec *old = idx->old;
	const FileRec *f = NULL;
	if (idx->files)
		f = g_hash_table_lookup(idx->files, name);
	for (size_t i = 0; !idx->files && old && i < old->nfiles && !f; i++)
		if (strcmp(old->names + old->files[i].name, name) == 0)
			f = &old->files[i];
	return f && e4_filerec_ino(f) == ino ? f : NULL;
}

/* The inode of the subdirectory name when the entry still names the
 * directory found there before (so a scan need not open it while it is
 * settled), else 0. */
static uint64_t kept_subdir(const OldIndex *idx, const char *name, uint64_t ino)
{
	const DirRec *old = idx->old;
	const SubdirRec *d = NULL;
	if (idx->subdirs)
		d = g_hash_table_lookup(idx->subdirs, name);
	for (size_t i = 0; !idx->subdirs && old && i < old->nsubdirs && !d; i++)
		if (strcmp(old->subdirs[i].name, name) == 0)
			d = &old->subdirs[i];
	return d && d->ino == ino ? ino : 0;
}

/* Forgets the cached directory ino and, recursively, its cached
 * subdirectories, except those in keep (reached by the scan under way: a
 * directory moved below one of its former subdirectories may be one of
 * them, and its record is in use). */
static void drop_dir(E4Tree *tree, uint64_t ino, GHashTable *keep)
{
	DirRec *rec = dir_lookup(tree, ino);
	if (!rec || (keep && g_hash_table_contains(keep, &ino)))
		return;
	unsettle(tree, rec);
	/* Removed from the table before recursing: a stale cycle in the
	 * cache ends here. */
	g_hash_table_steal(tree->dirs, &ino);
	uncount_bytes(tree, rec);
	for (size_t i = 0; i < rec->nsubdirs; i++)
		if (rec->subdirs[i].ino)
			drop_dir(tree, rec->subdirs[i].ino, keep);
	dir_rec_free(rec);
}

/* Drops cached subdirectories of old that rec no longer has. */
static void drop_vanished(E4Tree *tree, const DirRec *old, const DirRec *rec, GHashTable *keep)
{
	for (size_t i = 0; old && i < old->nsubdirs; i++) {
		bool kept = false;
		for (size_t j = 0; j < rec->nsubdirs && !kept; j++)
			kept = strcmp(old->subdirs[i].name, rec->subdirs[j].name) == 0;
		if (!kept && old->subdirs[i].ino)
			drop_dir(tree, old->subdirs[i].ino, keep);
	}
}

/* Reads the directory anew, carrying over what is known of files that are
 * still there under the same name and inode. */
static DirRec *relist(E4Tree *tree, int fd, const struct stat *st, const DirRec *old, int *err)
{
	E4DirList list = {0};
	__atomic_fetch_add(&tree->dirs_listed, 1, __ATOMIC_RELAXED);
	*err = e4_dir_list(fd, st, tree->dev, &list);
	if (*err < 0) {
		e4_dir_list_clear(&list);
		return NULL;
	}
	DirRec *rec = g_new0(DirRec, 1);
	rec->ino = st->st_ino;
	rec->mtime_ns = ns(&st->st_mtim);
	rec->ctime_ns = ns(&st->st_ctim);
	rec->marked = e4_exclude_marked(fd);
	rec->extra_stale = true;
	size_t bytes = 0;
	for (size_t i = 0; i < list.n; i++)
		bytes += strlen(list.v[i].name) + 1;
	rec->names = g_malloc(MAX(bytes, 1));
	rec->names_len = MAX(bytes, 1);
	char *next = rec->names;
	rec->files = g_new0(FileRec, list.n);
	rec->subdirs = g_new0(SubdirRec, list.n);
	OldIndex idx;
	old_index_init(&idx, old);
	for (size_t i = 0; i < list.n; i++) {
		const E4DirEntry *e = &list.v[i];
		const char *name = next;
		next = stpcpy(next, e->name) + 1;
		if (e->kind == E4_ENTRY_DIR) {
			rec->subdirs[rec->nsubdirs++] = (SubdirRec){ name, kept_subdir(&idx, e->name, e->ino) };
			continue;
		}
		FileRec *f = &rec->files[rec->nfiles++];
		const FileRec *prev = find_old(&idx, e->name, e->ino);
		if (prev)
			e4_filerec_copy(f, prev);
		else
			e4_filerec_init(f, 0, e->ino);
		f->name = (uint32_t)(name - rec->names);
	}
	old_index_clear(&idx);
	if (old)
		rec->parent = old->parent;
	e4_dir_list_clear(&list);
	/* Sized for every entry at first: give back what the other kind took. */
	rec->files = g_renew(FileRec, rec->files, rec->nfiles);
	rec->subdirs = g_renew(SubdirRec, rec->subdirs, rec->nsubdirs);
	return rec;
}

static gint by_ino(gconstpointer a, gconstpointer b)
{
	uint64_t x = e4_filerec_ino(*(FileRec *const *)a), y = e4_filerec_ino(*(FileRec *const *)b);
	return (x > y) - (x < y);
}

/* Whether a directory read for the first time has its files read from the
 * inode tables: in a cold scan (one whose directory was not cached) of a
 * tree that has them, after one syncfs per scan (data still in delayed
 * allocation has no blocks in the tables; FIEMAP's FLAG_SYNC would write
 * it file by file). Re-reads of a cached tree never sync: a directory
 * new to them is inspected through the kernel. */
static bool use_raw(Scan *scan, int dirfd)
{
	if (!scan->cold)
		return false;
	if (!scan->synced) {
		scan->synced = true;
		if (syncfs(dirfd) == 0)
			scan->cursor = e4_itable_cursor_new(scan->tree->itable);
	}
	return scan->cursor != NULL;
}

/* Brings the cached record of the open directory fd (in scan->visited)
 * up to date. Consumes fd. Returns the record, or NULL (the directory
 * could not be read). */
static DirRec *refresh_dir(Scan *scan, int fd, const struct stat *st, int *err)
{
	E4Tree *tree = scan->tree;
	DirRec *rec = dir_lookup(tree, st->st_ino);
	*err = 0;
	bool raw = !rec && use_raw(scan, fd);
	bool same = rec && rec->mtime_ns == ns(&st->st_mtim) && rec->ctime_ns == ns(&st->st_ctim);
	if (!same) {
		DirRec *fresh = relist(tree, fd, st, rec, err);
		if (!fresh) {
			close(fd);
			return NULL;
		}
		unsettle(tree, rec);
		if (rec)
			uncount_bytes(tree, rec);
		drop_vanished(tree, rec, fresh, scan->visited);
		g_hash_table_replace(tree->dirs, &fresh->ino, fresh);
		rec = fresh;
	}
	/* Watched and untouched since the last check: no stat per file. */
	bool trusted = same && rec->clean;
	SharedDir *dir = shared_dir_new(fd);
	g_autoptr(GPtrArray) stale = g_ptr_array_new();
	for (size_t i = 0; i < rec->nfiles; i++) {
		FileRec *f = &rec->files[i];
		uint64_t ino = e4_filerec_ino(f);
		bool fresh = trusted && !e4_filerec_has(f, E4_FR_STALE)
				     ? e4_filerec_has(f, E4_FR_VALID) && !g_hash_table_remove(tree->forgotten, &ino)
				     : still_valid(tree, fd, rec->names, f);
		e4_filerec_put(f, E4_FR_STALE, false);
		if (!fresh)
			g_ptr_array_add(stale, f);
	}
	/* In inode order: the inode table is then read forward, which ext4's
	 * inode table readahead serves in large reads (names come in hash
	 * order, which is random on disk). */
	g_ptr_array_sort(stale, by_ino);
	rec->extra_stale = rec->extra_stale || stale->len > 0;
	/* Raw readings take a microsecond or two: handing them to the pool
	 * would cost more in wake-ups than they do (the prefetch has the
	 * tables in memory); a file they decline still goes to the pool. */
	size_t nstale = 0;
	for (size_t i = 0; i < stale->len; i++) {
		FileRec *f = stale->pdata[i];
		if (!raw || !inspect_raw(tree, scan->cursor, f))
			stale->pdata[nstale++] = f;
	}
	for (size_t i = 0; i < nstale; i += BATCH)
		queue_job(scan, dir, rec->names, (FileRec **)stale->pdata + i, MIN(BATCH, nstale - i));
	shared_dir_unref(dir);
	/* Events from now on mark it stale again (drained after the scan). */
	rec->clean = tree->watch != NULL;
	return rec;
}

static void scan_subtree(Scan *scan, int fd, const struct stat *st)
{
	const DirRec *known = dir_lookup(scan->tree, st->st_ino);
	if (g_atomic_int_get(&scan->tree->stop) || (known && known->settled) ||
	    !g_hash_table_add(scan->visited, g_memdup2(&st->st_ino, sizeof(st->st_ino)))) {
		close(fd);
		return;
	}
	/* fd stays valid in the queued jobs; subdirectories open from a dup. */
	int walk_fd = dup(fd);
	int err;
	DirRec *rec = refresh_dir(scan, fd, st, &err);
	if (!rec || walk_fd < 0) {
		if (walk_fd >= 0)
			close(walk_fd);
		return;
	}
	for (size_t i = 0; i < rec->nsubdirs; i++) {
		/* Known and settled: nothing below changed, not even opened. */
		DirRec *sub = dir_lookup(scan->tree, rec->subdirs[i].ino);
		if (!sub || !sub->settled) {
			sub = NULL;
			struct stat sst;
			__atomic_fetch_add(&scan->tree->dir_opens, 1, __ATOMIC_RELAXED);
			int sfd = e4_open_subdir(walk_fd, rec->subdirs[i].name, scan->tree->dev, &sst);
			rec->subdirs[i].ino = sfd >= 0 ? sst.st_ino : 0;
			if (sfd >= 0)
				scan_subtree(scan, sfd, &sst);
			sub = dir_lookup(scan->tree, rec->subdirs[i].ino);
		}
		/* Where its changes are reported up to. */
		if (sub)
			sub->parent = rec->ino;
	}
	close(walk_fd);
}

typedef struct {
	E4Tree *tree;
	GHashTable *seen;       /* multiply linked inodes already counted */
	GString *path;
	E4TreeResult *out;
	GHashTable *visited;
	E4TreeEachFn each;      /* NULL: none */
	void *user;
} Aggregate;

/* Adds the valid file f, named name, with its figures fig. */
static void aggregate_file(Aggregate *ag, const FileRec *f, const char *name, const E4FileFigures *fig,
			   bool excluded)
{
	uint64_t ino = e4_filerec_ino(f);
	if (e4_filerec_has(f, E4_FR_LINKED) && !g_hash_table_add(ag->seen, g_memdup2(&ino, sizeof(ino))))
		return;
	int skip = e4_filerec_skip(f);
	if (ag->each) {
		size_t mark = ag->path->len;
		g_string_append(ag->path, name);
		bool marked = excluded || e4_filerec_has(f, E4_FR_MARKED);
		ag->each(&(E4TreeFile){ ag->path->str, skip, fig, marked }, ag->user);
		g_string_truncate(ag->path, mark);
	}
	if (skip >= 0) {
		e4_summary_skip(&ag->out->sum, (E4SkipReason)skip);
		return;
	}
	e4_summary_add(&ag->out->sum, fig);
	if (!e4_top_wants(&ag->out->top, e4_figures_rank(fig)))
		return;
	size_t mark = ag->path->len;
	g_string_append(ag->path, name);
	e4_top_offer(&ag->out->top, ag->path->str, fig);
	g_string_truncate(ag->path, mark);
}

static void aggregate_dir(Aggregate *ag, uint64_t ino, bool excluded)
{
	DirRec *rec = g_hash_table_lookup(ag->tree->dirs, &ino);
	if (!rec || !g_hash_table_add(ag->visited, g_memdup2(&ino, sizeof(ino))))
		return;
	excluded = excluded || rec->marked;
	/* A hard-linked file counts in the summary once, but in the locality
	 * of every directory holding a name of it: a reader of each directory
	 * reads it there. */
	E4DirLoc loc = {0};
	for (size_t i = 0; i < rec->nfiles; i++) {
		const FileRec *f = &rec->files[i];
		if (!e4_filerec_has(f, E4_FR_VALID))
			continue;
		E4FileFigures fig;
		e4_filerec_figures(f, &ag->tree->geom, &fig);
		aggregate_file(ag, f, rec->names + f->name, &fig, excluded);
		if (e4_filerec_skip(f) < 0)
			e4_dirloc_add(&loc, &fig);
	}
	e4_summary_add_dirloc(&ag->out->sum, &loc);
	count_bytes(ag->tree, rec);
	for (size_t i = 0; i < rec->nsubdirs; i++) {
		if (!rec->subdirs[i].ino)
			continue;
		size_t mark = ag->path->len;
		g_string_append(ag->path, rec->subdirs[i].name);
		g_string_append_c(ag->path, '/');
		aggregate_dir(ag, rec->subdirs[i].ino, excluded);
		g_string_truncate(ag->path, mark);
	}
}

/* Sums of subtrees for scans that list no file: a directory's own files,
 * then each subdirectory's subtree (kept in its record when settled), with
 * the top files' paths made relative to the directory at each step. */
typedef struct {
	E4Tree *tree;
	GHashTable *seen;       /* multiply linked inodes already counted */
	GHashTable *visited;    /* directories reached: each once */
} Summer;

static void agg_init(SubtreeAgg *agg, size_t top_cap)
{
	*agg = (SubtreeAgg){ .top_cap = top_cap };
	e4_top_init(&agg->top, top_cap);
}

static void agg_add_file(Summer *sm, SubtreeAgg *agg, const FileRec *f, const char *name,
			 const E4FileFigures *fig)
{
	if (e4_filerec_has(f, E4_FR_LINKED)) {
		agg->linked = true;
		uint64_t ino = e4_filerec_ino(f);
		if (!g_hash_table_add(sm->seen, g_memdup2(&ino, sizeof(ino))))
			return;
	}
	int skip = e4_filerec_skip(f);
	if (skip >= 0) {
		e4_summary_skip(&agg->sum, (E4SkipReason)skip);
		return;
	}
	e4_summary_add(&agg->sum, fig);
	e4_top_offer(&agg->top, name, fig);
}

/* dst += the subtree src found in dst's directory under name. Its top
 * files are offered from the last to the first: a tie goes to the file
 * offered later, so they keep the order they had when offered one by one,
 * and the result is what a single walk would have given. */
static void agg_merge(SubtreeAgg *dst, const SubtreeAgg *src, const char *name)
{
	e4_summary_merge(&dst->sum, &src->sum);
	dst->weight += src->weight;
	dst->linked = dst->linked || src->linked;
	size_t n = MIN(src->top.n, dst->top_cap);
	for (size_t i = n; i-- > 0;) {
		const E4TopEntry *e = &src->top.v[i];
		if (!e4_top_wants(&dst->top, e->rank))
			continue;
		g_autofree char *path = g_strconcat(name, "/", e->path, NULL);
		e4_top_offer(&dst->top, path, &e->fig);
	}
}

/* A copy of agg to keep, its top no longer than its entries. */
static SubtreeAgg *agg_keep(const SubtreeAgg *agg)
{
	SubtreeAgg *kept = g_memdup2(agg, sizeof(*agg));
	kept->top.cap = kept->top.n;
	kept->top.v = g_new(E4TopEntry, MAX(kept->top.n, 1));
	for (size_t i = 0; i < agg->top.n; i++) {
		kept->top.v[i] = agg->top.v[i];
		kept->top.v[i].path = g_strdup(agg->top.v[i].path);
	}
	return kept;
}

static void sum_subtree(Summer *sm, DirRec *rec, SubtreeAgg *out);

/* Adds the subtree of rec's subdirectory i to out; false when it is not
 * settled (or not known), so that rec is not either. */
static bool sum_subdir(Summer *sm, const DirRec *rec, size_t i, SubtreeAgg *out)
{
	DirRec *sub = dir_lookup(sm->tree, rec->subdirs[i].ino);
	if (!sub || !g_hash_table_add(sm->visited, g_memdup2(&sub->ino, sizeof(sub->ino))))
		return false;
	SubtreeAgg part;
	const SubtreeAgg *use = sub->agg;
	if (!use || use->top_cap < out->top_cap) {
		agg_init(&part, out->top_cap);
		sum_subtree(sm, sub, &part);
		use = &part;
	}
	agg_merge(out, use, rec->subdirs[i].name);
	if (use == &part)
		e4_top_clear(&part.top);
	return sub->settled && sub->parent == rec->ino;
}

/* The figures of rec's subtree into out (initialised with its top's
 * capacity). Settles rec when nothing in it needs checking, and keeps the
 * result in it when worth it. */
static void sum_subtree(Summer *sm, DirRec *rec, SubtreeAgg *out)
{
	bool settled = sm->tree->watch && rec->clean;
	E4DirLoc loc = {0};
	for (size_t i = 0; i < rec->nfiles; i++) {
		const FileRec *f = &rec->files[i];
		/* Not inspected (it vanished, or could not be opened): tried
		 * again at the next scan. */
		bool valid = e4_filerec_has(f, E4_FR_VALID);
		settled = settled && valid;
		if (!valid)
			continue;
		E4FileFigures fig;
		e4_filerec_figures(f, &sm->tree->geom, &fig);
		agg_add_file(sm, out, f, rec->names + f->name, &fig);
		if (e4_filerec_skip(f) < 0)
			e4_dirloc_add(&loc, &fig);
	}
	e4_summary_add_dirloc(&out->sum, &loc);
	out->weight += 1 + rec->nfiles;
	for (size_t i = 0; i < rec->nsubdirs; i++) {
		bool sub_settled = rec->subdirs[i].ino && sum_subdir(sm, rec, i, out);
		settled = settled && sub_settled;
	}
	if (!settled || rec->agg == NULL || rec->agg->top_cap < out->top_cap)
		g_clear_pointer(&rec->agg, agg_free);
	rec->settled = settled;
	if (settled && !rec->agg && !out->linked && out->weight >= AGG_MIN_WEIGHT)
		rec->agg = agg_keep(out);
	count_bytes(sm->tree, rec);
}

/* out's summary and top (of top_n) from the cache, for the directory ino. */
static void sum_root(E4Tree *tree, uint64_t ino, size_t top_n, E4TreeResult *out)
{
	Summer sm = {
		.tree = tree,
		.seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.visited = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
	};
	DirRec *rec = dir_lookup(tree, ino);
	SubtreeAgg agg;
	agg_init(&agg, MAX(top_n, AGG_MIN_TOP));
	const SubtreeAgg *use = &agg;
	if (rec && rec->agg && rec->agg->top_cap >= agg.top_cap) {
		use = rec->agg;
	} else if (rec) {
		g_hash_table_add(sm.visited, g_memdup2(&ino, sizeof(ino)));
		sum_subtree(&sm, rec, &agg);
	}
	out->sum = use->sum;
	e4_top_init(&out->top, top_n);
	/* From the last: ties keep their order (see agg_merge). */
	for (size_t i = MIN(use->top.n, top_n); i-- > 0;)
		e4_top_offer(&out->top, use->top.v[i].path, &use->top.v[i].fig);
	e4_top_clear(&agg.top);
	g_hash_table_destroy(sm.seen);
	g_hash_table_destroy(sm.visited);
}

/* The summary of the directory ino's subtree, calling each for every
 * file; excluded: whether a directory above it is marked. */
static void aggregate_each(E4Tree *tree, uint64_t ino, bool excluded, E4TreeResult *out,
			   E4TreeEachFn each, void *user)
{
	Aggregate ag = {
		.tree = tree, .out = out, .path = g_string_new(NULL),
		.seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.visited = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.each = each, .user = user,
	};
	aggregate_dir(&ag, ino, excluded);
	g_hash_table_destroy(ag.seen);
	g_hash_table_destroy(ag.visited);
	g_string_free(ag.path, TRUE);
}

typedef struct {
	uint64_t ino;
	uint32_t used;
	size_t nsubdirs;
} UseRank;

/* Least recently read first; among equals, leaves first, so that a tree
 * read whole loses its leaves before the directories above them. */
static gint by_use(gconstpointer a, gconstpointer b)
{
	const UseRank *x = a, *y = b;
	int32_t age = (int32_t)(x->used - y->used);
	if (age != 0)
		return age < 0 ? -1 : 1;
	return (x->nsubdirs > y->nsubdirs) - (x->nsubdirs < y->nsubdirs);
}

/* Drops the least recently read directories (each with its cached
 * subdirectories) until the cache is within its cap, and then some: down
 * to seven eighths of it, so that the sort of every directory this takes
 * is paid once per eighth of the cap read anew, not after every read
 * once the cache is full. With the tree locked, after a scan's result is
 * made. */
static void enforce_cap(E4Tree *tree)
{
	if (!tree->cache_limit || __atomic_load_n(&tree->cache_bytes, __ATOMIC_RELAXED) <= tree->cache_limit)
		return;
	uint64_t low = tree->cache_limit - tree->cache_limit / 8;
	GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(UseRank), g_hash_table_size(tree->dirs));
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, tree->dirs);
	while (g_hash_table_iter_next(&it, NULL, &value)) {
		const DirRec *rec = value;
		UseRank u = { rec->ino, rec->used, rec->nsubdirs };
		g_array_append_val(order, u);
	}
	g_array_sort(order, by_use);
	guint before = g_hash_table_size(tree->dirs);
	for (guint i = 0; i < order->len; i++) {
		if (__atomic_load_n(&tree->cache_bytes, __ATOMIC_RELAXED) <= low)
			break;
		drop_dir(tree, g_array_index(order, UseRank, i).ino, NULL);
	}
	__atomic_fetch_add(&tree->dirs_dropped, before - g_hash_table_size(tree->dirs), __ATOMIC_RELAXED);
	g_array_free(order, TRUE);
}

void e4_tree_read_inodes(E4Tree *tree, E4Itable *itable)
{
	g_mutex_lock(&tree->lock);
	e4_itable_free(tree->itable);
	tree->itable = itable;
	g_mutex_unlock(&tree->lock);
}

void e4_tree_set_cache_limit(E4Tree *tree, uint64_t bytes)
{
	g_mutex_lock(&tree->lock);
	tree->cache_limit = bytes;
	g_mutex_unlock(&tree->lock);
}

static void scan_init(Scan *scan, E4Tree *tree)
{
	*scan = (Scan){ .tree = tree };
	/* For progress (e4_tree_counters): a reader sees the start last. */
	__atomic_store_n(&tree->scan_inspections0, __atomic_load_n(&tree->inspections, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&tree->scan_dirs0, __atomic_load_n(&tree->dirs_listed, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&tree->scan_start_us, g_get_monotonic_time(), __ATOMIC_RELEASE);
	g_mutex_init(&scan->lock);
	g_cond_init(&scan->done);
	scan->visited = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	__atomic_fetch_add(&tree->scans, 1, __ATOMIC_RELAXED);
}

static void scan_finish(Scan *scan)
{
	wait_jobs(scan);
	__atomic_store_n(&scan->tree->scan_start_us, 0, __ATOMIC_RELEASE);
	e4_itable_cursor_free(scan->cursor);
	g_hash_table_destroy(scan->visited);
	g_mutex_clear(&scan->lock);
	g_cond_clear(&scan->done);
}

/* A private fd for the directory dirfd and its stat. */
static int reopen_dir(int dirfd, struct stat *st)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

static FileRec *find_file(DirRec *rec, const char *name)
{
	for (size_t i = 0; i < rec->nfiles; i++)
		if (strcmp(rec->names + rec->files[i].name, name) == 0)
			return &rec->files[i];
	return NULL;
}

/* An event in the directory ev->dir_ino: about its file ev->name, or
 * (NULL, or a name not cached as a file) about the directory; a write
 * also goes to on_write (autodefrag). */
static void mark_stale(const E4WatchEvent *ev, void *user)
{
	E4Tree *tree = user;
	__atomic_fetch_add(&tree->drained, 1, __ATOMIC_RELAXED);
	if (ev->file && tree->on_write)
		tree->on_write(ev->file, ev->dir, tree->drain_us, tree->on_write_user);
	DirRec *rec = ev->dir_ino ? dir_lookup(tree, ev->dir_ino) : NULL;
	if (!rec)
		return;
	FileRec *f = ev->name ? find_file(rec, ev->name) : NULL;
	if (f)
		e4_filerec_put(f, E4_FR_STALE, true);
	else
		rec->clean = false;
	unsettle(tree, rec);
}

/* Applies pending change events and forgotten inodes; with the tree
 * locked. The clocks are read once per drain, not per event (an untar
 * sends 100,000s). */
static void drain(E4Tree *tree)
{
	if (tree->forgot) {
		/* Their directories are not known: every subtree is visited
		 * again, and the files checked against the forgotten set. */
		unsettle_all(tree, false);
		tree->forgot = false;
	}
	if (!tree->watch)
		return;
	uint64_t before = tree->drained;
	tree->drain_us = g_get_monotonic_time();
	int rc = e4_watch_drain(tree->watch, mark_stale, tree);
	if (tree->drained != before)
		note_change(tree);
	if (rc == 0)
		return;
	/* Events were lost: trust nothing until checked again. */
	note_change(tree);
	unsettle_all(tree, true);
}

/* Pause between drains, milliseconds: at the 125,000 events/s of an
 * untar, 50 ms gather about 6,000 events, well within fanotify's default
 * queue of 16,384. */
#define DRAIN_PAUSE_MS 50

static gpointer drainer_main(gpointer data)
{
	E4Tree *tree = data;
	struct pollfd pfd[2] = { { .fd = e4_watch_fd(tree->watch), .events = POLLIN },
				 { .fd = tree->wake, .events = POLLIN } };
	while (!g_atomic_int_get(&tree->stop)) {
		if (poll(pfd, 2, -1) <= 0 || !(pfd[0].revents & POLLIN))
			continue;
		g_mutex_lock(&tree->lock);
		drain(tree);
		g_mutex_unlock(&tree->lock);
		/* Let events gather before the next drain: woken at each event,
		 * the drainer cost 1.6 s of CPU during a 3.2 s untar of 100,000
		 * files (a poll, a lock and two reads for every few events).
		 * Scans drain first, so nothing they report is older; the wait
		 * ends at once when the tree stops. */
		poll(&pfd[1], 1, DRAIN_PAUSE_MS);
	}
	return NULL;
}

int e4_tree_watch(E4Tree *tree, int mount_fd)
{
	if (tree->wake < 0)
		return -EBADF;
	E4Watch *w = e4_watch_new(mount_fd, tree->on_write != NULL);
	if (!w)
		return -errno;
	g_mutex_lock(&tree->lock);
	tree->watch = w;
	g_mutex_unlock(&tree->lock);
	tree->drainer = g_thread_new("e4watch", drainer_main, tree);
	return 0;
}

void e4_tree_on_write(E4Tree *tree, E4TreeWriteFn fn, void *user)
{
	tree->on_write = fn;
	tree->on_write_user = user;
}

/* Opens a private fd of the directory dirfd (on the tree's filesystem),
 * locks the tree, applies pending events and starts a scan. Returns the
 * fd, or -errno with nothing locked. */
static int scan_begin(E4Tree *tree, int dirfd, struct stat *st, Scan *scan)
{
	int fd = reopen_dir(dirfd, st);
	if (fd < 0)
		return fd;
	if (st->st_dev != tree->dev) {
		close(fd);
		return -EXDEV;
	}
	g_mutex_lock(&tree->lock);
	drain(tree);
	scan_init(scan, tree);
	/* Files made since the last cold scan may lie past the tables' old
	 * high-water marks: read the descriptors again before anyone reads
	 * through them (under the tree's lock: no other scan does). */
	scan->cold = tree->itable && !dir_lookup(tree, st->st_ino) && e4_itable_refresh(tree->itable) == 0;
	return fd;
}

typedef struct {
	E4Itable *itable;
	int stop;               /* atomic: the scan is over */
} Prefetch;

/* A cold scan's companion: warms the page cache with the inode tables
 * and directory blocks while the walk reads them one by one, and stops
 * with the scan (a scan of a small subtree pays at most its own length
 * of reading ahead). */
static gpointer prefetch_run(gpointer data)
{
	Prefetch *pf = data;
	e4_itable_prefetch(pf->itable, &pf->stop);
	return NULL;
}

int e4_tree_scan(E4Tree *tree, int dirfd, size_t top_n, E4TreeResult *out)
{
	return e4_tree_scan_each(tree, dirfd, top_n, out, NULL, NULL);
}

int e4_tree_scan_each(E4Tree *tree, int dirfd, size_t top_n, E4TreeResult *out, E4TreeEachFn each,
		      void *user)
{
	/* Marks of the directory and those above it (below it: the cache's). */
	bool above = each && e4_exclude_dir(NULL, dirfd);
	gint64 start = g_get_monotonic_time();
	struct stat st;
	Scan scan;
	int fd = scan_begin(tree, dirfd, &st, &scan);
	if (fd < 0)
		return fd;
	*out = (E4TreeResult){0};
	Prefetch pf = { tree->itable, 0 };
	GThread *warm = scan.cold ? g_thread_new("e4prefetch", prefetch_run, &pf) : NULL;
	scan_subtree(&scan, fd, &st);
	scan_finish(&scan);
	if (warm) {
		__atomic_store_n(&pf.stop, 1, __ATOMIC_RELAXED);
		g_thread_join(warm);
	}
	if (g_atomic_int_get(&tree->stop)) {
		g_mutex_unlock(&tree->lock);
		return -ECANCELED;
	}
	if (each) {
		e4_top_init(&out->top, top_n);
		aggregate_each(tree, st.st_ino, above, out, each, user);
	} else {
		sum_root(tree, st.st_ino, top_n, out);
	}
	enforce_cap(tree);
	g_mutex_unlock(&tree->lock);
	out->seconds = (double)(g_get_monotonic_time() - start) / 1e6;
	out->when = time(NULL);
	return 0;
}

int e4_tree_dir_files(E4Tree *tree, int dirfd, E4TreeFileFn fn, void *user)
{
	struct stat st;
	Scan scan;
	int fd = scan_begin(tree, dirfd, &st, &scan);
	if (fd < 0)
		return fd;
	int rc;
	g_hash_table_add(scan.visited, g_memdup2(&st.st_ino, sizeof(st.st_ino)));
	DirRec *rec = refresh_dir(&scan, fd, &st, &rc);
	scan_finish(&scan);
	if (g_atomic_int_get(&tree->stop))
		rc = -ECANCELED;
	for (size_t i = 0; rec && rc == 0 && i < rec->nfiles; i++) {
		const FileRec *f = &rec->files[i];
		if (!e4_filerec_has(f, E4_FR_VALID))
			continue;
		E4FileFigures fig;
		e4_filerec_figures(f, &tree->geom, &fig);
		E4TreeFile file = { rec->names + f->name, e4_filerec_skip(f), &fig,
				    e4_filerec_has(f, E4_FR_MARKED) };
		rc = fn(&file, user);
	}
	if (rec) {
		count_bytes(tree, rec);
		enforce_cap(tree);
	}
	g_mutex_unlock(&tree->lock);
	return rc;
}

void e4_tree_forget_inode(E4Tree *tree, uint64_t ino)
{
	g_mutex_lock(&tree->lock);
	g_hash_table_add(tree->forgotten, g_memdup2(&ino, sizeof(ino)));
	tree->forgot = true;
	g_mutex_unlock(&tree->lock);
	gint64 now = g_get_real_time();
	g_mutex_lock(&tree->moved_lock);
	g_hash_table_insert(tree->moved_us, g_memdup2(&ino, sizeof(ino)), g_memdup2(&now, sizeof(now)));
	g_mutex_unlock(&tree->moved_lock);
	note_change(tree);
}

gint64 e4_tree_changed_us(E4Tree *tree)
{
	return tree->watch ? __atomic_load_n(&tree->changed_us, __ATOMIC_RELAXED) : g_get_real_time();
}

gint64 e4_tree_moved_us(E4Tree *tree, uint64_t ino)
{
	g_mutex_lock(&tree->moved_lock);
	const gint64 *t = g_hash_table_lookup(tree->moved_us, &ino);
	gint64 v = t ? *t : 0;
	g_mutex_unlock(&tree->moved_lock);
	return v;
}

void e4_tree_counters(E4Tree *tree, E4TreeCounters *out)
{
	out->scans = __atomic_load_n(&tree->scans, __ATOMIC_RELAXED);
	out->inspections = __atomic_load_n(&tree->inspections, __ATOMIC_RELAXED);
	out->raw_inspections = __atomic_load_n(&tree->raw_inspections, __ATOMIC_RELAXED);
	out->dirs_listed = __atomic_load_n(&tree->dirs_listed, __ATOMIC_RELAXED);
	int64_t start = __atomic_load_n(&tree->scan_start_us, __ATOMIC_ACQUIRE);
	if (start) {
		out->scan_running = true;
		out->scan_seconds = (double)(g_get_monotonic_time() - start) / 1e6;
		out->scan_files = out->inspections - __atomic_load_n(&tree->scan_inspections0, __ATOMIC_RELAXED);
		out->scan_dirs = out->dirs_listed - __atomic_load_n(&tree->scan_dirs0, __ATOMIC_RELAXED);
	}
	out->revalidations = __atomic_load_n(&tree->revalidations, __ATOMIC_RELAXED);
	out->dir_opens = __atomic_load_n(&tree->dir_opens, __ATOMIC_RELAXED);
	out->cache_bytes = __atomic_load_n(&tree->cache_bytes, __ATOMIC_RELAXED);
	out->dirs_dropped = __atomic_load_n(&tree->dirs_dropped, __ATOMIC_RELAXED);
	out->watch_events = __atomic_load_n(&tree->drained, __ATOMIC_RELAXED);
}

E4Tree *e4_tree_new(const E4Geometry *geom, dev_t dev, unsigned threads)
{
	E4Tree *tree = g_new0(E4Tree, 1);
	tree->geom = *geom;
	tree->dev = dev;
	g_mutex_init(&tree->lock);
	/* Keyed by the record's own ino: no key allocated per directory. */
	tree->dirs = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, dir_rec_free);
	tree->forgotten = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_mutex_init(&tree->moved_lock);
	tree->moved_us = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	tree->changed_us = g_get_real_time();
	tree->pool = g_thread_pool_new(run_job, NULL, (gint)(threads ? threads : 1), FALSE, NULL);
	tree->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return tree;
}

void e4_tree_stop(E4Tree *tree)
{
	if (!tree || g_atomic_int_get(&tree->stop))
		return;
	g_atomic_int_set(&tree->stop, 1);
	if (tree->drainer) {
		/* Adding 1 to a fresh eventfd cannot fail or block. */
		uint64_t one = 1;
		ssize_t n = write(tree->wake, &one, sizeof(one));
		(void)n;
		g_thread_join(g_steal_pointer(&tree->drainer));
	}
	g_mutex_lock(&tree->lock);
	g_clear_pointer(&tree->watch, e4_watch_free);
	g_mutex_unlock(&tree->lock);
}

void e4_tree_free(E4Tree *tree)
{
	if (!tree)
		return;
	e4_tree_stop(tree);
	if (tree->wake >= 0)
		close(tree->wake);
	g_thread_pool_free(tree->pool, FALSE, TRUE);
	e4_itable_free(tree->itable);
	g_hash_table_destroy(tree->dirs);
	g_hash_table_destroy(tree->forgotten);
	g_hash_table_destroy(tree->moved_us);
	g_mutex_clear(&tree->moved_lock);
	g_mutex_clear(&tree->lock);
	g_free(tree);
}

void e4_tree_result_clear(E4TreeResult *res)
{
	e4_top_clear(&res->top);
}
