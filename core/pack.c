#include "pack.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <glib.h>

#include "defrag_parts.h"
#include "donor.h"
#include "exclude.h"
#include "figures.h"
#include "score.h"
#include "walk.h"

/* What the plan of one directory knows of a file it will move. */
typedef struct {
	char *name;
	uint64_t ino;
	E4Ranges ranges;        /* its data, as planned (blocks) */
	uint64_t *donor_starts; /* where each range goes in the donor */
	E4FileFigures fig;      /* as it lies now */
	E4FileDefrag result;
} Item;

typedef struct {
	E4Defrag *d;
	const E4DefragTreeOpts *opts;
	E4DefragSummary *sum;
	GHashTable *seen;       /* inodes already met in this job */
	E4Exclude *exclude;     /* marked directories */
	GString *path;          /* of the directory being packed, relative, "" or "a/b/" */
	uint32_t block_size;
	uint32_t page_blocks;   /* blocks per page: a move's two starts must agree modulo it */
} Pack;

static void item_clear(gpointer p)
{
	Item *it = p;
	g_free(it->name);
	e4_ranges_clear(&it->ranges);
	g_free(it->donor_starts);
}

static bool cancelled(const Pack *pk)
{
	return pk->opts->file.cancelled && pk->opts->file.cancelled(pk->opts->file.user);
}

static void report(Pack *pk, const char *current)
{
	if (pk->opts->progress)
		pk->opts->progress(pk->sum, current, pk->opts->file.user);
}

/* Counts a file's result and tells the caller. */
static void finish(Pack *pk, const char *name, const E4FileDefrag *res)
{
	e4_defrag_summary_add(pk->sum, res);
	if (pk->opts->file_done) {
		size_t mark = pk->path->len;
		g_string_append(pk->path, name);
		pk->opts->file_done(pk->path->str, res, pk->opts->file.user);
		g_string_truncate(pk->path, mark);
	}
	report(pk, NULL);
}

/* Maps the file name of dirfd into it: 0, or -errno. */
static int map_item(Pack *pk, int dirfd, Item *it)
{
	int fd = openat(dirfd, it->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	E4ExtentMap map = {0};
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : e4_fiemap_read(fd, &map);
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = -ENOENT;
	if (rc == 0) {
		e4_figures_compute(&map, (uint64_t)st.st_size, e4_defrag_geometry(pk->d), &it->fig);
		it->ino = st.st_ino;
		rc = e4_data_ranges(&map, (uint64_t)st.st_size, pk->block_size, &it->ranges);
	}
	e4_extent_map_clear(&map);
	close(fd);
	return rc;
}

/* Gives each range of every item its place in the donor, in order, each
 * aligned as the kernel requires. Returns the donor's size in blocks. */
static uint64_t lay_out(const Pack *pk, GArray *items)
{
	uint64_t at = 0;
	for (guint i = 0; i < items->len; i++) {
		Item *it = &g_array_index(items, Item, i);
		it->donor_starts = g_new(uint64_t, it->ranges.n ? it->ranges.n : 1);
		for (size_t j = 0; j < it->ranges.n; j++) {
			uint64_t want = it->ranges.v[j].start % pk->page_blocks;
			at += (want + pk->page_blocks - at % pk->page_blocks) % pk->page_blocks;
			it->donor_starts[j] = at;
			at += it->ranges.v[j].len;
		}
	}
	return at;
}

/* The runs of the donor open as fd, or 0 when it cannot be mapped. */
static uint32_t donor_runs(const Pack *pk, int fd, uint64_t blocks)
{
	E4ExtentMap map = {0};
	E4FileFigures fig = {0};
	if (e4_fiemap_read(fd, &map) == 0)
		e4_figures_compute(&map, blocks * pk->block_size, e4_defrag_geometry(pk->d), &fig);
	e4_extent_map_clear(&map);
	return fig.runs;
}

/* Jumps of the items as they lie now, in their order. */
static uint64_t jumps_now(GArray *items)
{
	E4DirLoc loc = {0};
	for (guint i = 0; i < items->len; i++)
		e4_dirloc_add(&loc, &g_array_index(items, Item, i).fig);
	return loc.jumps;
}

static bool same_ranges(const E4Ranges *a, const E4Ranges *b)
{
	return a->n == b->n && memcmp(a->v, b->v, a->n * sizeof(*a->v)) == 0;
}

/* Moves one planned item into the donor; its result goes into it->result. */
static void move_item(Pack *pk, int dirfd, int donor, Item *it)
{
	E4FileDefrag *res = &it->result;
	int fd = openat(dirfd, it->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*res = (E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_CHANGED };
		return;
	}
	int rw = e4_defrag_admit(pk->d, fd, pk->opts->file.uid, true, res);
	close(fd);
	if (rw < 0)
		return;
	/* Planned from another inode, or written since: its slot stays empty. */
	Item now = { .name = it->name };
	bool same = map_item(pk, dirfd, &now) == 0 && now.ino == it->ino &&
		    same_ranges(&now.ranges, &it->ranges);
	e4_ranges_clear(&now.ranges);
	res->runs_before = res->runs_after = it->fig.runs;
	if (!same) {
		*res = (E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_CHANGED,
				       .ino = res->ino, .size = res->size,
				       .runs_before = it->fig.runs, .runs_after = it->fig.runs };
	} else {
		res->outcome = E4_OUTCOME_IMPROVED;
		e4_defrag_move(pk->d, rw, donor, &it->ranges, it->donor_starts, &pk->opts->file, res);
		Item after = { .name = it->name };
		if (map_item(pk, dirfd, &after) == 0)
			res->runs_after = after.fig.runs;
		e4_ranges_clear(&after.ranges);
	}
	e4_defrag_dismiss(pk->d, rw, res->ino);
}

/* Plans the files of the listing: maps each one not met before. Files
 * that cannot be mapped are counted as failed at once. */
static GArray *plan_files(Pack *pk, int dirfd, const E4DirList *list)
{
	GArray *items = g_array_new(FALSE, TRUE, sizeof(Item));
	g_array_set_clear_func(items, item_clear);
	for (size_t i = 0; i < list->n; i++) {
		const E4DirEntry *e = &list->v[i];
		if (e->kind != E4_ENTRY_FILE || !g_hash_table_add(pk->seen, g_memdup2(&e->ino, sizeof(e->ino))))
			continue;
		Item it = { .name = g_strdup(e->name) };
		bool excluded = e4_exclude_at(pk->exclude, dirfd, e->name); /* then not even mapped */
		int rc = excluded ? 0 : map_item(pk, dirfd, &it);
		if (rc < 0 || excluded) {
			E4FileDefrag res = { .outcome = E4_OUTCOME_FAILED, .error = -rc };
			if (rc == -ENOENT)
				res = (E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_CHANGED };
			if (excluded)
				res = (E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_EXCLUDED,
						      .ino = e->ino };
			pk->sum->files_total++;
			finish(pk, it.name, &res);
			item_clear(&it);
			continue;
		}
		pk->sum->files_total++;
		pk->sum->bytes_total += e4_ranges_blocks(&it.ranges) * pk->block_size;
		g_array_append_val(items, it);
	}
	return items;
}

/* Every item gets outcome (no-gain, skipped no-space, failed, cancelled). */
static void finish_all(Pack *pk, GArray *items, const E4FileDefrag *as)
{
	for (guint i = 0; i < items->len; i++) {
		Item *it = &g_array_index(items, Item, i);
		E4FileDefrag res = *as;
		res.ino = it->ino;
		res.runs_before = res.runs_after = it->fig.runs;
		finish(pk, it->name, &res);
	}
}

static bool enough_free(int dirfd, uint64_t bytes)
{
	struct statvfs sv;
	return fstatvfs(dirfd, &sv) < 0 || (uint64_t)sv.f_bavail * sv.f_frsize >= bytes;
}

/* Packs the planned items into one new donor, in order. */
static void pack_items(Pack *pk, int dirfd, GArray *items)
{
	uint64_t blocks = lay_out(pk, items);
	if (blocks == 0) {
		finish_all(pk, items, &(E4FileDefrag){ .outcome = E4_OUTCOME_OPTIMAL });
		return;
	}
	if (!enough_free(dirfd, blocks * pk->block_size)) {
		finish_all(pk, items, &(E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_NO_SPACE });
		return;
	}
	int donor = e4_defrag_new_donor(pk->d, dirfd, blocks, false);
	if (donor < 0) {
		E4FileDefrag res = { .outcome = E4_OUTCOME_FAILED, .error = -donor };
		if (donor == -ENOSPC || donor == -EDQUOT)
			res = (E4FileDefrag){ .outcome = E4_OUTCOME_SKIPPED, .skip = E4_DSKIP_NO_SPACE };
		finish_all(pk, items, &res);
		return;
	}
	/* The files read as jumps + 1 pieces now, and as the donor's runs
	 * (and no fewer) afterwards. */
	if (donor_runs(pk, donor, blocks) >= jumps_now(items) + 1) {
		close(donor);
		finish_all(pk, items, &(E4FileDefrag){ .outcome = E4_OUTCOME_NO_GAIN });
		return;
	}
	for (guint i = 0; i < items->len; i++) {
		Item *it = &g_array_index(items, Item, i);
		if (cancelled(pk)) {
			it->result = (E4FileDefrag){ .outcome = E4_OUTCOME_CANCELLED, .ino = it->ino,
						     .runs_before = it->fig.runs, .runs_after = it->fig.runs };
		} else {
			size_t mark = pk->path->len;
			g_string_append(pk->path, it->name);
			report(pk, pk->path->str);
			g_string_truncate(pk->path, mark);
			move_item(pk, dirfd, donor, it);
		}
		pk->sum->bytes_done += e4_ranges_blocks(&it->ranges) * pk->block_size;
		finish(pk, it->name, &it->result);
	}
	close(donor);
}

static int pack_dir(Pack *pk, int dirfd, int depth)
{
	struct stat st;
	E4DirList list = {0};
	int rc = fstat(dirfd, &st) < 0 ? -errno : e4_dir_list(dirfd, &st, e4_defrag_dev(pk->d), &list);
	if (rc < 0) {
		e4_dir_list_clear(&list);
		return rc;
	}
	g_autoptr(GArray) items = plan_files(pk, dirfd, &list);
	pack_items(pk, dirfd, items);
	for (size_t i = 0; i < list.n && depth < 4096; i++) {
		if (list.v[i].kind != E4_ENTRY_DIR || cancelled(pk))
			continue;
		struct stat sub;
		int fd = e4_open_subdir(dirfd, list.v[i].name, e4_defrag_dev(pk->d), &sub);
		if (fd < 0)
			continue; /* gone, or another filesystem: nothing to pack */
		size_t mark = pk->path->len;
		g_string_append_printf(pk->path, "%s/", list.v[i].name);
		pack_dir(pk, fd, depth + 1); /* an unreadable subdirectory is passed over */
		g_string_truncate(pk->path, mark);
		close(fd);
	}
	e4_dir_list_clear(&list);
	return 0;
}

int e4_pack_tree(E4Defrag *d, int dirfd, const E4DefragTreeOpts *opts, E4DefragSummary *out)
{
	*out = (E4DefragSummary){0};
	long page = sysconf(_SC_PAGESIZE);
	uint32_t bs = e4_defrag_geometry(d)->block_size;
	Pack pk = {
		.d = d, .opts = opts, .sum = out, .block_size = bs,
		.page_blocks = page > (long)bs ? (uint32_t)(page / bs) : 1,
		.seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
		.path = g_string_new(NULL),
		.exclude = e4_exclude_new(),
	};
	gint64 start = g_get_monotonic_time();
	int rc = pack_dir(&pk, dirfd, 0);
	out->seconds = (double)(g_get_monotonic_time() - start) / 1e6;
	g_hash_table_destroy(pk.seen);
	e4_exclude_free(pk.exclude);
	g_string_free(pk.path, TRUE);
	if (rc == 0 && cancelled(&pk))
		rc = -ECANCELED;
	return rc;
}
