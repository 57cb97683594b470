#include "defrag.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <linux/fs.h>
#include <glib.h>

#include "defrag_parts.h"
#include "donor.h"
#include "exclude.h"
#include "figures.h"
#include "moveext.h"
#include "pagecache.h"
#include "room.h"

/* Small enough that a cancel or Ctrl-C is seen within ~50 ms at disk speed. */

struct E4Defrag {
	E4Geometry geom;
	dev_t dev;
	bool read_only, data_journal, data_writeback, dax;
	GMutex lock;
	GHashTable *busy;   /* inodes being moved now */
	/* One donor allocated at a time: ext4 allocates a large fallocate in
	 * pieces of at most 32,767 blocks, and two donors allocated at once
	 * interleave their pieces (measured: a 237 MB file got 13 runs). */
	GMutex alloc_lock;
	E4Room room; /* under alloc_lock */
	int donor_dirs[E4_DONOR_DIRS_MAX]; /* fallbacks, e4_defrag_add_donor_dir */
	unsigned ndonor_dirs;
};

static const char *const outcome_names[E4_OUTCOME__COUNT] = {
	[E4_OUTCOME_IMPROVED] = "improved", [E4_OUTCOME_OPTIMAL] = "optimal",
	[E4_OUTCOME_NO_GAIN] = "no-gain", [E4_OUTCOME_SKIPPED] = "skipped",
	[E4_OUTCOME_FAILED] = "failed", [E4_OUTCOME_CANCELLED] = "cancelled",
};

static const char *const skip_names[E4_DSKIP__COUNT] = {
	[E4_DSKIP_NONE] = "none", [E4_DSKIP_NOT_OWNER] = "not-owner",
	[E4_DSKIP_IMMUTABLE] = "immutable", [E4_DSKIP_APPEND_ONLY] = "append-only",
	[E4_DSKIP_SWAPFILE] = "swapfile", [E4_DSKIP_LOCKED] = "locked",
	[E4_DSKIP_RUNNING] = "running-executable", [E4_DSKIP_INLINE_DATA] = "inline-data",
	[E4_DSKIP_ENCRYPTED] = "encrypted", [E4_DSKIP_DATA_JOURNAL] = "data-journal",
	[E4_DSKIP_NON_EXTENT] = "non-extent", [E4_DSKIP_DAX] = "dax",
	[E4_DSKIP_BIGALLOC] = "bigalloc", [E4_DSKIP_TOO_SMALL] = "too-small",
	[E4_DSKIP_NO_SPACE] = "no-space", [E4_DSKIP_READ_ONLY] = "read-only",
	[E4_DSKIP_BUSY] = "busy", [E4_DSKIP_NOT_REGULAR] = "not-regular",
	[E4_DSKIP_CHANGED] = "changed", [E4_DSKIP_NO_DONOR_DIR] = "no-donor-dir",
	[E4_DSKIP_NOT_WRITABLE] = "not-writable", [E4_DSKIP_EXCLUDED] = "excluded",
};

const char *e4_outcome_name(E4Outcome o)
{
	return o < E4_OUTCOME__COUNT ? outcome_names[o] : "unknown";
}

const char *e4_defrag_skip_name(E4DefragSkip s)
{
	return s < E4_DSKIP__COUNT ? skip_names[s] : "unknown";
}

E4Defrag *e4_defrag_new(const E4FsInfo *fs)
{
	E4Defrag *d = g_new0(E4Defrag, 1);
	d->geom = fs->geom;
	d->dev = fs->dev;
	d->read_only = fs->read_only;
	d->data_journal = fs->data_journal;
	d->data_writeback = fs->data_writeback;
	d->dax = fs->dax;
	g_mutex_init(&d->lock);
	g_mutex_init(&d->alloc_lock);
	e4_room_init(&d->room, d->geom.block_size);
	d->busy = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	return d;
}

int e4_defrag_add_donor_dir(E4Defrag *d, int dirfd)
{
	struct stat st;
	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_dev != d->dev)
		return -EXDEV;
	if (d->ndonor_dirs >= E4_DONOR_DIRS_MAX)
		return -ENOSPC;
	d->donor_dirs[d->ndonor_dirs++] = dirfd;
	return 0;
}

/* May this process make an unnamed file in dirfd (write and search)? */
static bool donor_dir_ok(int dirfd)
{
	return faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) == 0;
}

/* The directory to make the donor in: dirfd, or the first fallback this
 * process may write; -1 when none. Root may write any directory, so a
 * root daemon always gets dirfd. */
static int donor_dir(const E4Defrag *d, int dirfd)
{
	if (donor_dir_ok(dirfd))
		return dirfd;
	for (unsigned i = 0; i < d->ndonor_dirs; i++)
		if (donor_dir_ok(d->donor_dirs[i]))
			return d->donor_dirs[i];
	return -1;
}

void e4_defrag_free(E4Defrag *d)
{
	if (!d)
		return;
	g_hash_table_destroy(d->busy);
	g_mutex_clear(&d->lock);
	g_mutex_clear(&d->alloc_lock);
	g_free(d);
}

/* What the filesystem and the inode's flags forbid, before any open for
 * writing. */
static E4DefragSkip static_skip(const E4Defrag *d, int fd, const struct stat *st, uid_t uid)
{
	if (!S_ISREG(st->st_mode) || st->st_dev != d->dev)
		return E4_DSKIP_NOT_REGULAR;
	if (e4_exclude_marked(fd))
		return E4_DSKIP_EXCLUDED; /* its directories: the walkers' part */
	if (uid != 0 && uid != st->st_uid)
		return E4_DSKIP_NOT_OWNER;
	if (d->read_only)
		return E4_DSKIP_READ_ONLY;
	if (d->data_journal)
		return E4_DSKIP_DATA_JOURNAL;
	if (d->dax)
		return E4_DSKIP_DAX;
	if (d->geom.feature_ro_compat & E4_RO_COMPAT_BIGALLOC)
		return E4_DSKIP_BIGALLOC;
	int flags = 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
		if (flags & FS_IMMUTABLE_FL)
			return E4_DSKIP_IMMUTABLE;
		if (flags & FS_APPEND_FL)
			return E4_DSKIP_APPEND_ONLY;
		if (flags & FS_JOURNAL_DATA_FL)
			return E4_DSKIP_DATA_JOURNAL;
		if (flags & FS_INLINE_DATA_FL)
			return E4_DSKIP_INLINE_DATA;
		if (flags & FS_ENCRYPT_FL)
			return E4_DSKIP_ENCRYPTED;
		if (flags & FS_DAX_FL)
			return E4_DSKIP_DAX;
		if (!(flags & FS_EXTENT_FL))
			return E4_DSKIP_NON_EXTENT;
	}
	return E4_DSKIP_NONE;
}

/* True when the inode is listed in /proc/swaps. */
static bool is_active_swap(const struct stat *st)
{
	FILE *f = fopen("/proc/swaps", "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	if (!fgets(line, sizeof(line), f)) /* header */
		line[0] = '\0';
	while (!found && fgets(line, sizeof(line), f)) {
		char *sp = strpbrk(line, " \t");
		if (sp)
			*sp = '\0';
		/* /proc/swaps escapes blanks as \040; such names are not matched. */
		struct stat sw;
		found = stat(line, &sw) == 0 && sw.st_dev == st->st_dev && sw.st_ino == st->st_ino;
	}
	fclose(f);
	return found;
}

/* Why the kernel answers ETXTBSY for this inode. */
static E4DefragSkip busy_text_reason(const struct stat *st)
{
	return is_active_swap(st) ? E4_DSKIP_SWAPFILE : E4_DSKIP_RUNNING;
}

/* A POSIX/OFD lock, flock or lease held by anyone else. */
static bool locked_by_other(int rw_fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (fcntl(rw_fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		return true;
	if (flock(rw_fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	flock(rw_fd, LOCK_UN);
	return false;
}

static int open_rw(int fd, const struct stat *st, E4DefragSkip *skip)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int flags = O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int rw = open(path, flags | O_NOATIME);
	if (rw < 0 && errno == EPERM)
		rw = open(path, flags);
	if (rw >= 0)
		return rw;
	int err = errno;
	if (err == ETXTBSY)
		*skip = busy_text_reason(st);
	else if (err == EROFS)
		*skip = E4_DSKIP_READ_ONLY;
	else if (err == EWOULDBLOCK)
		*skip = E4_DSKIP_LOCKED; /* a lease */
	else if (err == EACCES)
		*skip = E4_DSKIP_NOT_WRITABLE; /* only without CAP_DAC_OVERRIDE */
	return -err;
}

static bool claim(E4Defrag *d, uint64_t ino)
{
	g_mutex_lock(&d->lock);
	bool ok = g_hash_table_add(d->busy, g_memdup2(&ino, sizeof(ino)));
	g_mutex_unlock(&d->lock);
	return ok;
}

static void release(E4Defrag *d, uint64_t ino)
{
	g_mutex_lock(&d->lock);
	g_hash_table_remove(d->busy, &ino);
	g_mutex_unlock(&d->lock);
}

/* Physical runs of the file open as fd, or -errno. */
static int runs_of(int fd, const E4Geometry *geom, E4ExtentMap *map, E4FileFigures *fig)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	int rc = e4_fiemap_read(fd, map);
	if (rc < 0)
		return rc;
	e4_figures_compute(map, (uint64_t)st.st_size, geom, fig);
	return (int)fig->runs;
}

static void set_skip(E4FileDefrag *out, E4DefragSkip skip)
{
	out->outcome = E4_OUTCOME_SKIPPED;
	out->skip = skip;
}

static void set_failed(E4FileDefrag *out, int err)
{
	out->outcome = E4_OUTCOME_FAILED;
	out->error = err;
}

static bool has_room(int fd, uint64_t blocks, uint32_t block_size)
{
	struct statvfs sv;
	if (fstatvfs(fd, &sv) < 0)
		return true; /* fallocate will tell */
	return (uint64_t)sv.f_bavail * sv.f_frsize >= blocks * block_size;
}

typedef struct {
	E4Defrag *d;
	const E4DefragOpts *opts;
	int rw, donor;
	E4Ranges ranges;
	const uint64_t *donor_starts; /* per range; NULL: the file's own offsets */
	E4CacheSnapshot cache;      /* of the chunk being moved */
	E4CacheSnapshot prev_cache; /* of the chunk before, restored after this one moved */
	E4FileDefrag *out;
} Move;

/* Sets the outcome for a move that failed with rc. */
static void move_failed(Move *m, int rc)
{
	struct stat st;
	if (rc == -ENOSPC)
		set_skip(m->out, E4_DSKIP_NO_SPACE);
	else if (rc == -ENODATA)
		set_skip(m->out, E4_DSKIP_CHANGED); /* the range lost its blocks under us */
	else if (rc == -EINVAL && fstat(m->rw, &st) == 0 && (uint64_t)st.st_size < m->out->size)
		set_skip(m->out, E4_DSKIP_CHANGED); /* truncated: the range is past the end now */
	else if (rc == -EBUSY || rc == -ENOMEM)
		set_skip(m->out, E4_DSKIP_BUSY); /* pages held by another process or the
						   * kernel short of memory: retried */
	else if (rc == -ETXTBSY && fstat(m->rw, &st) == 0)
		set_skip(m->out, busy_text_reason(&st)); /* a swap file or program now */
	else
		set_failed(m->out, -rc);
}

/* Moves the chunk of blocks [start, start + blocks) from the donor's
 * blocks at donor_start. Returns 0 or -errno. */
static int move_chunk(Move *m, uint64_t start, uint64_t donor_start, uint64_t blocks)
{
	uint32_t bs = m->d->geom.block_size;
	uint64_t moved = 0;
	e4_cache_snapshot(m->rw, start * bs, blocks * bs, &m->cache);
	e4_cache_prepare(m->rw, &m->cache, start * bs, blocks * bs);
	e4_cache_fill(m->rw, start * bs, blocks * bs);
	int rc = e4_move_range(m->rw, m->donor, start, donor_start, blocks, &moved);
	m->out->bytes_moved += moved * bs;
	/* Start writing the moved pages back now; they are dropped (waiting
	 * for that) after the next chunk moved, so reads and writes overlap. */
	e4_cache_writeback(m->rw, start * bs, blocks * bs);
	return rc;
}

/* Moves every range in chunks. Sets the outcome on error or cancel. */
static void move_all(Move *m)
{
	uint32_t bs = m->d->geom.block_size;
	uint64_t chunk = (m->opts->chunk_bytes ? m->opts->chunk_bytes : E4_DEFRAG_CHUNK_DEFAULT) / bs;
	if (chunk == 0)
		chunk = 1;
	uint64_t prev_start = 0, prev_len = 0; /* the chunk whose pages are not restored yet */
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < m->ranges.n; i++) {
		const E4Range *r = &m->ranges.v[i];
		uint64_t donor_start = m->donor_starts ? m->donor_starts[i] : r->start;
		for (uint64_t off = 0; rc == 0 && off < r->len; off += chunk) {
			if (m->opts->cancelled && m->opts->cancelled(m->opts->user)) {
				m->out->outcome = E4_OUTCOME_CANCELLED;
				break;
			}
			uint64_t len = r->len - off < chunk ? r->len - off : chunk;
			if (m->opts->throttle &&
			    !e4_throttle_take(m->opts->throttle, len * bs, m->opts->cancelled, m->opts->user)) {
				m->out->outcome = E4_OUTCOME_CANCELLED;
				break;
			}
			rc = move_chunk(m, r->start + off, donor_start + off, len);
			e4_cache_restore(m->rw, &m->prev_cache, prev_start * bs, prev_len * bs);
			E4CacheSnapshot done = m->prev_cache;
			m->prev_cache = m->cache;
			m->cache = done;
			prev_start = r->start + off;
			prev_len = len;
			if (rc == 0 && m->opts->progress)
				m->opts->progress(m->out->bytes_moved, m->opts->user);
		}
		if (m->out->outcome == E4_OUTCOME_CANCELLED)
			break;
	}
	e4_cache_restore(m->rw, &m->prev_cache, prev_start * bs, prev_len * bs);
	if (rc < 0)
		move_failed(m, rc);
}

/* A new donor for ranges, mapped into map and fig: its fd, or -errno. */
static int mapped_donor(E4Defrag *d, int dirfd, const E4Ranges *ranges, E4ExtentMap *map,
			E4FileFigures *fig)
{
	int donor = e4_donor_create(dirfd, ranges, d->geom.block_size);
	if (donor < 0)
		return donor;
	int rc = runs_of(donor, &d->geom, map, fig);
	if (rc < 0) {
		close(donor);
		return rc;
	}
	return donor;
}

/* Allocates a donor for ranges of a file in `runs` runs, one at a time,
 * and maps it into map and fig. Returns 0 with the donor's fd in *donor,
 * 1 when the free space could not give a donor in fewer runs (nothing
 * allocated), or -errno. A donor in more runs than its ideal is tried once
 * more after a journal commit when the blocks freed by the moves before
 * could make the difference: that lets a filesystem whose free space is
 * all small pieces fill the room that moved files leave. */
static int allocate_donor(E4Defrag *d, int dirfd, const E4Ranges *ranges, uint32_t runs,
			  int *donor, E4ExtentMap *map, E4FileFigures *fig)
{
	uint64_t blocks = e4_ranges_blocks(ranges);
	int fd = -1, rc = 1;
	g_mutex_lock(&d->alloc_lock);
	if (!e4_room_hopeless(&d->room, dirfd, blocks, runs, g_get_monotonic_time())) {
		fd = mapped_donor(d, dirfd, ranges, map, fig);
		if (fd >= 0 && fig->runs > fig->ideal &&
		    e4_room_commit_may_help(&d->room, blocks * d->geom.block_size)) {
			/* The donor's allocation is in the running transaction:
			 * syncing it commits that, with every free before it. */
			fsync(fd);
			e4_room_committed(&d->room);
			close(fd);
			fd = mapped_donor(d, dirfd, ranges, map, fig);
		}
		if (fd >= 0)
			e4_room_donor(&d->room, blocks, fig->runs, runs, g_get_monotonic_time());
		rc = fd < 0 ? fd : 0;
	}
	g_mutex_unlock(&d->alloc_lock);
	*donor = fd < 0 ? -1 : fd;
	return rc;
}

/* With the file open read-write and claimed: compare a donor, move. */
static void defrag_open(E4Defrag *d, int rw, int donor_dirfd, const E4DefragOpts *opts,
			E4FileDefrag *out)
{
	E4ExtentMap map = {0};
	E4FileFigures fig;
	int runs = runs_of(rw, &d->geom, &map, &fig);
	Move m = { .d = d, .opts = opts, .rw = rw, .donor = -1, .out = out };
	if (runs < 0) {
		set_failed(out, -runs);
		goto out;
	}
	out->runs_before = out->runs_after = (uint32_t)runs;
	if (!e4_defrag_needed(&fig, opts, d->geom.block_size)) {
		out->outcome = E4_OUTCOME_OPTIMAL;
		goto out;
	}
	if (e4_data_ranges(&map, out->size, d->geom.block_size, &m.ranges) < 0) {
		set_failed(out, ENOMEM);
		goto out;
	}
	if (!has_room(rw, e4_ranges_blocks(&m.ranges), d->geom.block_size)) {
		set_skip(out, E4_DSKIP_NO_SPACE);
		goto out;
	}
	int dirfd = donor_dir(d, donor_dirfd);
	if (dirfd < 0) {
		set_skip(out, E4_DSKIP_NO_DONOR_DIR);
		goto out;
	}
	E4FileFigures donor_fig;
	int rc = allocate_donor(d, dirfd, &m.ranges, fig.runs, &m.donor, &map, &donor_fig);
	if (rc == -ENOSPC || rc == -EDQUOT) {
		set_skip(out, E4_DSKIP_NO_SPACE);
		goto out;
	}
	if (rc < 0) {
		set_failed(out, -rc);
		goto out;
	}
	if (rc > 0 || donor_fig.runs >= fig.runs) {
		out->outcome = E4_OUTCOME_NO_GAIN;
		goto out;
	}
	out->outcome = E4_OUTCOME_IMPROVED;
	e4_defrag_move(d, rw, m.donor, &m.ranges, NULL, opts, out);
	runs = runs_of(rw, &d->geom, &map, &fig);
	if (runs >= 0)
		out->runs_after = (uint32_t)runs;
	if (out->outcome == E4_OUTCOME_IMPROVED && out->runs_after >= out->runs_before)
		out->outcome = E4_OUTCOME_NO_GAIN;
out:
	if (m.donor >= 0)
		close(m.donor);
	e4_ranges_clear(&m.ranges);
	e4_cache_snapshot_clear(&m.cache);
	e4_cache_snapshot_clear(&m.prev_cache);
	e4_extent_map_clear(&map);
}

void e4_defrag_move(E4Defrag *d, int rw, int donor, const E4Ranges *ranges,
		    const uint64_t *donor_starts, const E4DefragOpts *opts, E4FileDefrag *out)
{
	Move m = { .d = d, .opts = opts, .rw = rw, .donor = donor, .ranges = *ranges,
		   .donor_starts = donor_starts, .out = out };
	move_all(&m);
	e4_cache_snapshot_clear(&m.cache);
	e4_cache_snapshot_clear(&m.prev_cache);
	/* With data=ordered the journal writes moved data before committing
	 * the swap; with data=writeback nothing orders them: sync. */
	if (d->data_writeback)
		fdatasync(rw);
	g_mutex_lock(&d->alloc_lock);
	e4_room_freed(&d->room, out->bytes_moved);
	g_mutex_unlock(&d->alloc_lock);
}

int e4_defrag_admit(E4Defrag *d, int fd, uid_t uid, bool one_block, E4FileDefrag *out)
{
	*out = (E4FileDefrag){ .outcome = E4_OUTCOME_FAILED };
	struct stat st;
	if (fstat(fd, &st) < 0) {
		set_failed(out, errno);
		return -1;
	}
	out->size = (uint64_t)st.st_size;
	out->ino = st.st_ino;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* A real fd for the flag ioctl: fd may be O_PATH. */
	int ro = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_NONBLOCK | O_NOATIME | O_CLOEXEC) : -1;
	E4DefragSkip skip = static_skip(d, ro >= 0 ? ro : fd, &st, uid);
	if (ro >= 0)
		close(ro);
	/* One block is one run whatever happens; packing still moves it. */
	uint64_t least = one_block ? 0 : d->geom.block_size;
	if (skip == E4_DSKIP_NONE && (st.st_size == 0 || (uint64_t)st.st_size <= least))
		skip = E4_DSKIP_TOO_SMALL;
	if (skip != E4_DSKIP_NONE) {
		set_skip(out, skip);
		return -1;
	}
	int rw = open_rw(fd, &st, &skip);
	if (rw < 0) {
		if (skip != E4_DSKIP_NONE)
			set_skip(out, skip);
		else
			set_failed(out, -rw);
		return -1;
	}
	if (is_active_swap(&st))
		skip = E4_DSKIP_SWAPFILE; /* opening a swap file read-write works; the move would fail */
	else if (locked_by_other(rw))
		skip = E4_DSKIP_LOCKED;
	else if (!claim(d, st.st_ino))
		skip = E4_DSKIP_BUSY;
	if (skip != E4_DSKIP_NONE) {
		set_skip(out, skip);
		close(rw);
		return -1;
	}
	return rw;
}

int e4_defrag_new_donor(E4Defrag *d, int dirfd, uint64_t blocks, bool pow2)
{
	E4Range all = { 0, blocks };
	E4Ranges ranges = { &all, 1 };
	g_mutex_lock(&d->alloc_lock);
	int fd = pow2 ? e4_donor_create_pow2(dirfd, blocks, d->geom.block_size)
		      : e4_donor_create(dirfd, &ranges, d->geom.block_size);
	g_mutex_unlock(&d->alloc_lock);
	return fd;
}

int e4_defrag_place(E4Defrag *d, int dirfd, uint64_t start, uint64_t blocks, uint64_t max_fence, E4Placed *out)
{
	g_mutex_lock(&d->alloc_lock);
	int rc = e4_place_window(dirfd, start, blocks, d->geom.block_size, max_fence, out);
	g_mutex_unlock(&d->alloc_lock);
	return rc;
}

int e4_defrag_place_fit(E4Defrag *d, int dirfd, uint64_t start, uint64_t blocks, uint64_t need,
			uint64_t max_fence, E4Placed *out)
{
	g_mutex_lock(&d->alloc_lock);
	int rc = e4_place_fit(dirfd, start, blocks, need, d->geom.block_size, max_fence, out);
	g_mutex_unlock(&d->alloc_lock);
	return rc;
}

void e4_defrag_room_changed(E4Defrag *d)
{
	g_mutex_lock(&d->alloc_lock);
	e4_room_reset(&d->room);
	g_mutex_unlock(&d->alloc_lock);
}

void e4_defrag_dismiss(E4Defrag *d, int rw, uint64_t ino)
{
	release(d, ino);
	close(rw);
}

void e4_defrag_file(E4Defrag *d, int fd, int donor_dirfd, const E4DefragOpts *opts,
		    E4FileDefrag *out)
{
	int rw = e4_defrag_admit(d, fd, opts->uid, false, out);
	if (rw < 0)
		return;
	defrag_open(d, rw, donor_dirfd, opts, out);
	e4_defrag_dismiss(d, rw, out->ino);
}

bool e4_defrag_needed(const E4FileFigures *fig, const E4DefragOpts *opts, uint32_t block_size)
{
	if (fig->runs <= fig->ideal || (opts->min_runs && fig->runs < opts->min_runs))
		return false;
	double mean_kib = (double)fig->blocks * block_size / 1024.0 / fig->runs;
	return !(opts->good_kib > 0 && mean_kib >= opts->good_kib);
}

dev_t e4_defrag_dev(const E4Defrag *d)
{
	return d->dev;
}

const E4Geometry *e4_defrag_geometry(const E4Defrag *d)
{
	return &d->geom;
}
