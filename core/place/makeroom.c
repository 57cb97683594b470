#include "makeroom.h"
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <glib.h>

#include "exclude.h"
#include "beneath.h"
#include "blockmap.h"
#include "defrag_parts.h"
#include "fiemap.h"
#include "figures.h"

/* The donor's blocks outside the region, in its logical order. */
typedef struct {
	uint64_t logical, physical, len;
} Seg;

typedef struct {
	E4Defrag *d;
	const E4DefragOpts *opts;  /* the caller's */
	E4DefragOpts mopts;        /* for the moves: opts, polling room_cancelled */
	int root_fd;
	uint64_t hold;             /* the most free space held at once outside
	                            * the region (blocks) */
	uint64_t hold_all;         /* and in all, what landed in the region or in
	                            * regions cleared before included */
	uint64_t avail0;           /* available to others when the try began (bytes) */
	bool gave_way;
	uint32_t bs;
	uint32_t page_blocks;      /* blocks per page (1 with 4 KiB blocks) */
	E4Region r;
	E4BlockMap map;
	uint32_t target;           /* index in map.files, or E4_PIECE_FREE */
	int donor;
	GArray *segs;              /* Seg: the donor's room outside the region */
	GArray *fill;              /* uint64_t per segment: blocks of it given out */
	uint64_t donor_end;        /* blocks requested from the donor so far */
	uint64_t moved;            /* blocks moved out of the region so far */
	uint64_t min_used, max_used; /* the region's data to move (E4RegionQuery) */
	uint64_t need;             /* blocks the file needs (E4RegionQuery) */
	GArray *keep;              /* E4Region: where nothing moved may go, the
	                            * region first, then those cleared before */
	E4Exclude *exclude;        /* directories whose files may not move */
	GHashTable *pinned_inos;   /* inodes found unmovable (excluded) this job */
	bool *pinned;              /* per map.files: one of those */
	bool *checked;             /* per map.files: looked at for the mark */
	E4RoomMade *out;
} Room;

static bool in_region(const E4Region *r, uint64_t start, uint64_t len)
{
	return start < r->start + r->len && r->start < start + len;
}

/* Appends the parts of [start, start + len) (physical) outside the region
 * to segs, as donor ranges from logical. */
static void add_outside(GArray *segs, const E4Region *r, size_t nr, uint64_t logical, uint64_t start,
			uint64_t len)
{
	if (len == 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		if (!in_region(&r[i], start, len))
			continue;
		/* Cut region i out; what is left on either side may meet others. */
		uint64_t end = start + len, rend = r[i].start + r[i].len;
		if (start < r[i].start)
			add_outside(segs, r, nr, logical, start, r[i].start - start);
		if (end > rend)
			add_outside(segs, r, nr, logical + (rend - start), rend, end - rend);
		return;
	}
	g_array_append_val(segs, ((Seg){ logical, start, len }));
}

/* Maps the donor: its blocks outside the region, in logical order. Those
 * inside stay in the donor unused: held, so that nothing moved goes there. */
static int donor_room(Room *rm, uint64_t *outside)
{
	E4ExtentMap map = {0};
	int rc = e4_fiemap_read(rm->donor, &map);
	g_array_set_size(rm->segs, 0);
	*outside = 0;
	for (size_t i = 0; rc == 0 && i < map.n; i++) {
		const E4Extent *e = &map.ext[i];
		add_outside(rm->segs, (const E4Region *)rm->keep->data, rm->keep->len, e->logical / rm->bs,
			    e->physical / rm->bs, e->length / rm->bs);
	}
	for (guint i = 0; i < rm->segs->len; i++)
		*outside += g_array_index(rm->segs, Seg, i).len;
	e4_extent_map_clear(&map);
	return rc;
}

/* What others may allocate now, in bytes (statvfs f_bavail). */
static uint64_t available(int root_fd)
{
	struct statvfs sv;
	if (fstatvfs(root_fd, &sv) < 0)
		return 0;
	return (uint64_t)sv.f_bavail * sv.f_frsize;
}

/* True once others took a quarter of what was available when the try
 * began, or what is left to them fell under a quarter of it: the try
 * gives way. What the open donor holds is the try's own. */
static bool must_give_way(Room *rm)
{
	if (rm->gave_way)
		return true;
	uint64_t avail = available(rm->root_fd);
	uint64_t held = rm->donor >= 0 ? rm->donor_end * rm->bs : 0;
	rm->gave_way = avail < rm->avail0 / 4 || avail + held < rm->avail0 - rm->avail0 / 4;
	return rm->gave_way;
}

/* The moves' cancellation: the caller's, or giving way. */
static bool room_cancelled(void *user)
{
	Room *rm = user;
	if (rm->opts->cancelled && rm->opts->cancelled(rm->opts->user))
		return true;
	return must_give_way(rm);
}

/* The moves' progress: the caller's (mopts.user is the Room). */
static void room_progress(uint64_t bytes_done, void *user)
{
	Room *rm = user;
	if (rm->opts->progress)
		rm->opts->progress(bytes_done, rm->opts->user);
}

/* A donor with `need` blocks outside the region: allocated, checked, and
 * allocated again (at further offsets) for what landed inside, never
 * needing more than rm->hold blocks outside the region nor holding more
 * than rm->hold_all in all. */
static int make_donor(Room *rm, uint64_t need)
{
	if (need > rm->hold)
		return -ENOSPC;
	rm->donor = e4_defrag_new_donor(rm->d, rm->root_fd, need, false);
	if (rm->donor < 0)
		return rm->donor;
	rm->donor_end = need;
	for (int round = 0; round < 16; round++) {
		uint64_t outside;
		int rc = donor_room(rm, &outside);
		if (rc < 0)
			return rc;
		uint64_t held = rm->donor_end - outside;
		if (rm->donor_end > rm->out->held_max)
			rm->out->held_max = rm->donor_end;
		if (outside >= need)
			return 0;
		/* More than the region itself inside it: not the allocator's
		 * doing, something else is wrong. */
		uint64_t kept = 0;
		for (guint k = 0; k < rm->keep->len; k++)
			kept += g_array_index(rm->keep, E4Region, k).len;
		if (held > kept || must_give_way(rm))
			return -ENOSPC;
		uint64_t more = need - outside;
		if (rm->donor_end + more > rm->hold_all)
			return -ENOSPC;
		if (fallocate(rm->donor, 0, (off_t)(rm->donor_end * rm->bs), (off_t)(more * rm->bs)) < 0)
			return -errno;
		rm->donor_end += more;
	}
	return -ENOSPC;
}

/* The pieces of file f inside the region, in the map's (physical) order. */
static GArray *pieces_of(const Room *rm, uint32_t f)
{
	GArray *v = g_array_new(FALSE, FALSE, sizeof(E4Piece));
	for (size_t i = 0; i < rm->map.n; i++) {
		const E4Piece *p = &rm->map.v[i];
		if (p->file == f && in_region(&rm->r, p->start, p->len))
			g_array_append_val(v, *p);
	}
	return v;
}

/* True when the file open as fd still has every piece where the map saw
 * it; fills map with its extent map. */
static bool unchanged(const Room *rm, int fd, const GArray *pieces, E4ExtentMap *map)
{
	if (e4_fiemap_read(fd, map) < 0)
		return false;
	for (guint i = 0; i < pieces->len; i++) {
		const E4Piece *p = &g_array_index(pieces, E4Piece, i);
		bool found = false;
		for (size_t j = 0; j < map->n && !found; j++) {
			const E4Extent *e = &map->ext[j];
			uint64_t lo = e->logical / rm->bs, ph = e->physical / rm->bs, n = e->length / rm->bs;
			found = p->logical >= lo && p->logical + p->len <= lo + n && ph + (p->logical - lo) == p->start;
		}
		if (!found)
			return false;
	}
	return true;
}

/* The blocks segment i has left for a part starting at file block
 * logical: the kernel moves a range only between offsets that agree
 * modulo a page, so the part starts *skip blocks into what is left. */
static uint64_t room_in(const Room *rm, guint i, uint64_t logical, uint64_t *skip)
{
	const Seg *s = &g_array_index(rm->segs, Seg, i);
	uint64_t fill = g_array_index(rm->fill, uint64_t, i), pb = rm->page_blocks;
	uint64_t at = s->logical + fill;
	*skip = (logical % pb + pb - at % pb) % pb;
	return s->len > fill + *skip ? s->len - fill - *skip : 0;
}

/* Takes n blocks, after skip, from segment i of the donor's room: the
 * part's donor offset and physical start. */
static void take(Room *rm, guint i, uint64_t skip, uint64_t n, uint64_t *donor_start, uint64_t *phys)
{
	Seg *s = &g_array_index(rm->segs, Seg, i);
	uint64_t *fill = &g_array_index(rm->fill, uint64_t, i);
	*fill += skip;
	*donor_start = s->logical + *fill;
	*phys = s->physical + *fill;
	*fill += n;
}

/* Where each block range goes: a piece goes whole into the first segment
 * with room for it (a piece split in two is one more run), else split over
 * the segments in order. ranges/starts get one entry per part, phys the
 * physical start of each. Returns false when the room ran out. */
static bool assign(Room *rm, const GArray *pieces, E4Ranges *ranges, GArray *starts, GArray *phys)
{
	g_autoptr(GArray) rv = g_array_new(FALSE, FALSE, sizeof(E4Range));
	bool ok = true;
	for (guint i = 0; ok && i < pieces->len; i++) {
		const E4Piece *p = &g_array_index(pieces, E4Piece, i);
		guint fit = rm->segs->len;
		uint64_t skip;
		for (guint k = 0; k < rm->segs->len && fit == rm->segs->len; k++)
			if (room_in(rm, k, p->logical, &skip) >= p->len)
				fit = k;
		uint64_t done = 0;
		for (guint k = fit < rm->segs->len ? fit : 0; done < p->len && k < rm->segs->len; k++) {
			uint64_t room = room_in(rm, k, p->logical + done, &skip);
			uint64_t n = MIN(p->len - done, room), ds, ps;
			if (n == 0)
				continue;
			take(rm, k, skip, n, &ds, &ps);
			E4Range r = { p->logical + done, n };
			g_array_append_val(rv, r);
			g_array_append_val(starts, ds);
			g_array_append_val(phys, ps);
			done += n;
		}
		ok = done == p->len;
	}
	ranges->n = rv->len;
	ranges->v = (E4Range *)g_array_free(g_steal_pointer(&rv), FALSE);
	return ok;
}

/* The runs a moved file may not have more of: as e4defrag counts them, a
 * hole always ends one. filefrag lets a run go on across a hole when the
 * data after it lies where the hole would end physically, but a read of
 * the file touches each data piece apart anyway; by filefrag's count a
 * file punched full of holes (a discarded VM image) would be one run
 * that no piece of it could leave without making it worse. */
static uint32_t read_runs(const Room *rm, const E4Extent *ext, size_t n)
{
	return e4_count_e4defrag_runs(ext, n, rm->bs);
}

/* Runs the file of map would have with ranges moved to phys. */
static uint32_t runs_after(const Room *rm, const E4ExtentMap *map, const E4Ranges *ranges, const GArray *phys)
{
	/* Rebuild the map block-range by block-range: outside the moved
	 * ranges as it is, inside at the new places. */
	g_autoptr(GArray) ext = g_array_new(FALSE, FALSE, sizeof(E4Extent));
	for (size_t i = 0; i < map->n; i++) {
		E4Extent e = map->ext[i];
		uint64_t lo = e.logical / rm->bs, n = e.length / rm->bs, ph = e.physical / rm->bs;
		uint64_t at = lo;
		while (at < lo + n) {
			/* The moved range holding block at, if any. */
			size_t k = ranges->n;
			for (size_t j = 0; j < ranges->n; j++)
				if (at >= ranges->v[j].start && at < ranges->v[j].start + ranges->v[j].len)
					k = j;
			uint64_t len, p;
			if (k < ranges->n) {
				len = MIN(ranges->v[k].start + ranges->v[k].len, lo + n) - at;
				p = g_array_index(phys, uint64_t, k) + (at - ranges->v[k].start);
			} else {
				uint64_t next = lo + n;
				for (size_t j = 0; j < ranges->n; j++)
					if (ranges->v[j].start > at && ranges->v[j].start < next)
						next = ranges->v[j].start;
				len = next - at;
				p = ph + (at - lo);
			}
			E4Extent x = { at * rm->bs, p * rm->bs, len * rm->bs, e.flags };
			g_array_append_val(ext, x);
			at += len;
		}
	}
	return read_runs(rm, (const E4Extent *)ext->data, ext->len);
}

/* Is the directory of path (relative to the root) or one above marked
 * excluded? Also when it cannot be opened: then nothing is moved. */
static bool excluded_dir(Room *rm, const char *path)
{
	g_autofree char *dir = g_path_get_dirname(path);
	int fd = e4_open_beneath(rm->root_fd, dir, O_PATH | O_DIRECTORY);
	bool excluded = fd < 0 || e4_exclude_dir(rm->exclude, fd);
	if (fd >= 0)
		close(fd);
	return excluded;
}

/* May file f move at all? Not when it or a directory above it is marked
 * excluded, nor when it cannot be found. The owner, a lock or a lease
 * are checked when it moves (e4_defrag_admit): they may change. */
static bool may_move(Room *rm, uint32_t f)
{
	const E4MapFile *mf = &rm->map.files[f];
	if (excluded_dir(rm, mf->path))
		return false;
	int fd = e4_open_beneath(rm->root_fd, mf->path, O_PATH);
	if (fd < 0)
		return false;
	bool marked = e4_exclude_marked(fd);
	close(fd);
	return !marked;
}

/* Pins the files in the chosen region that may not move: true when it
 * found one (the region cannot be cleared: choose again). */
static bool pin_unmovable(Room *rm)
{
	bool found = false;
	for (size_t i = 0; i < rm->map.n; i++) {
		const E4Piece *p = &rm->map.v[i];
		uint32_t f = p->file;
		if (f == E4_PIECE_FREE || f == rm->target || rm->checked[f] || !in_region(&rm->r, p->start, p->len))
			continue;
		rm->checked[f] = true;
		if (may_move(rm, f))
			continue;
		rm->pinned[f] = true;
		g_hash_table_add(rm->pinned_inos, g_memdup2(&rm->map.files[f].ino, sizeof(uint64_t)));
		found = true;
	}
	return found;
}

/* Moves pieces (of file f, in the region) into the donor. 0, 1 when the
 * donor's room could not take them, or -errno. */
static int evacuate(Room *rm, uint32_t f, const GArray *pieces)
{
	const E4MapFile *mf = &rm->map.files[f];
	if (excluded_dir(rm, mf->path))
		return -ENOSPC; /* the file's own mark: e4_defrag_admit */
	int fd = e4_open_beneath(rm->root_fd, mf->path, O_PATH);
	if (fd < 0)
		return -ENOSPC;
	E4FileDefrag res;
	int rw = e4_defrag_admit(rm->d, fd, rm->opts->uid, true, &res);
	close(fd);
	if (rw < 0 || res.ino != mf->ino) {
		if (rw >= 0)
			e4_defrag_dismiss(rm->d, rw, res.ino);
		return -ENOSPC; /* may not move now, or another file under the name */
	}
	E4ExtentMap map = {0};
	E4Ranges ranges = {0};
	g_autoptr(GArray) starts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	g_autoptr(GArray) phys = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	int rc = -ENOSPC;
	bool same = unchanged(rm, rw, pieces, &map);
	if (same && !assign(rm, pieces, &ranges, starts, phys)) {
		rc = 1;
	} else if (same) {
		uint32_t before = read_runs(rm, map.ext, map.n);
		/* The file to be defragmented next may get runs meanwhile. */
		if (f == rm->target || runs_after(rm, &map, &ranges, phys) <= before) {
			res.outcome = E4_OUTCOME_IMPROVED;
			e4_defrag_move(rm->d, rw, rm->donor, &ranges, (const uint64_t *)starts->data, &rm->mopts, &res);
			rm->out->bytes_moved += res.bytes_moved;
			rm->out->files_moved++;
			if (res.bytes_moved && rm->opts->moved)
				rm->opts->moved(mf->ino, res.bytes_moved, rm->opts->moved_user);
			rc = res.outcome == E4_OUTCOME_IMPROVED ? 0 : res.outcome == E4_OUTCOME_CANCELLED ? -ECANCELED : -ENOSPC;
		}
	}
	e4_ranges_clear(&ranges);
	e4_extent_map_clear(&map);
	e4_defrag_dismiss(rm->d, rw, res.ino);
	return rc;
}

static uint32_t file_index(const E4BlockMap *m, uint64_t ino)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (m->files[i].ino == ino)
			return (uint32_t)i;
	return E4_PIECE_FREE;
}

/* The room of the current donor not given out yet, in blocks. */
static uint64_t room_left(const Room *rm)
{
	uint64_t left = 0;
	for (guint k = 0; k < rm->segs->len; k++)
		left += g_array_index(rm->segs, Seg, k).len - g_array_index(rm->fill, uint64_t, k);
	return left;
}

/* Blocks moved through one donor: with a quarter of slack, the hold. */
static uint64_t batch_blocks(const Room *rm)
{
	return MAX(rm->hold / 5 * 4, 1);
}

/* A new donor for at least need blocks, as many as are left to move up to
 * a batch, the last one closed: its old contents (the blocks moved out of
 * the region) are freed with it. */
static int next_donor(Room *rm, uint64_t need)
{
	if (rm->donor >= 0)
		close(rm->donor);
	rm->donor = -1;
	uint64_t left = rm->r.used > rm->moved ? rm->r.used - rm->moved : 0;
	uint64_t want = MAX(need, MIN(left, batch_blocks(rm)));
	/* Slack: pieces go whole into the holes the donor got, which leaves gaps. */
	int rc = make_donor(rm, MIN(want + want / 4, MAX(need, rm->hold)));
	g_array_set_size(rm->fill, rm->segs->len);
	if (rm->segs->len)
		memset(rm->fill->data, 0, rm->segs->len * sizeof(uint64_t));
	return rc;
}

/* Moves file f's pieces in the region out, at most a batch at a time. */
static int evacuate_file(Room *rm, uint32_t f)
{
	g_autoptr(GArray) all = pieces_of(rm, f);
	uint64_t batch = batch_blocks(rm);
	int rc = 0;
	for (guint i = 0; rc == 0 && i < all->len;) {
		g_autoptr(GArray) part = g_array_new(FALSE, FALSE, sizeof(E4Piece));
		uint64_t need = 0;
		for (; i < all->len && (need == 0 || need + g_array_index(all, E4Piece, i).len <= batch); i++) {
			g_array_append_val(part, g_array_index(all, E4Piece, i));
			need += g_array_index(all, E4Piece, i).len;
		}
		if (rm->donor < 0 || room_left(rm) < need)
			rc = next_donor(rm, need);
		if (rc == 0)
			rc = evacuate(rm, f, part);
		if (rc == 0)
			rm->moved += need;
		if (rc == 1) /* the room left was in pieces too small: a fresh donor */
			rc = next_donor(rm, need) < 0 ? -ENOSPC : evacuate(rm, f, part);
		if (rc == 1)
			rc = -ENOSPC;
	}
	return rc;
}

/* Clears the chosen region, file by file, in the map's order. */
static int clear_region(Room *rm)
{
	int rc = 0;
	g_autofree bool *done = g_new0(bool, rm->map.nfiles + 1);
	for (size_t i = 0; rc == 0 && i < rm->map.n; i++) {
		const E4Piece *p = &rm->map.v[i];
		if (p->file == E4_PIECE_FREE || done[p->file] || rm->pinned[p->file] ||
		    !in_region(&rm->r, p->start, p->len))
			continue;
		if (room_cancelled(rm))
			rc = -ECANCELED;
		else
			rc = evacuate_file(rm, p->file);
		done[p->file] = true;
	}
	return rc;
}

/* Regions tried before one is cleared: a file that may not move (open
 * by another, locked, would get more runs) spoils a region, not the
 * next. */
#define ROOM_TRIES 3

/* The longest free piece of the map (blocks). */
static uint64_t largest_free(const E4BlockMap *m)
{
	uint64_t len = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].file == E4_PIECE_FREE && m->v[i].len > len)
			len = m->v[i].len;
	return len;
}

/* Regions chosen in one try before the one without files that may not
 * move (each choice pins every such file of the region before). */
#define PIN_ROUNDS 16

/* Chooses the region (rm->r) for q, passing over those holding files
 * that may not move. 0 or -ENOSPC. */
static int choose_movable(Room *rm, E4RegionQuery *q)
{
	for (size_t i = 0; i < rm->map.nfiles; i++)
		rm->pinned[i] = g_hash_table_contains(rm->pinned_inos, &rm->map.files[i].ino);
	q->pinned = rm->pinned;
	for (int round = 0; round < PIN_ROUNDS; round++) {
		int rc = e4_region_find(&rm->map, q, &rm->r);
		if (rc < 0 && q->align > 1 && q->need) {
			/* Any start, pieces placed in its free extents
			 * (e4_place_fit): measured on corpus c cheese, every
			 * aligned window of 256 MiB beside the moved files held
			 * 354-379 unknown blocks (the bound is 128), a group's
			 * backup superblock and descriptors at its start. A
			 * compaction (no file to place) keeps to aligned ones. */
			q->align = 1;
			rc = e4_region_find(&rm->map, q, &rm->r);
		}
		if (rc < 0 || !pin_unmovable(rm))
			return rc;
	}
	return -ENOSPC;
}

/* Blocks of the region's files that move, the target's included: its
 * own blocks counted as free for the choice are in the way as much as
 * others' (they move first). */
static uint64_t blocks_to_move(const Room *rm)
{
	uint64_t used = 0;
	for (size_t i = 0; i < rm->map.n; i++) {
		const E4Piece *p = &rm->map.v[i];
		if (p->file != E4_PIECE_FREE && !rm->pinned[p->file] && in_region(&rm->r, p->start, p->len))
			used += MIN(p->start + p->len, rm->r.start + rm->r.len) - MAX(p->start, rm->r.start);
	}
	return used;
}

/* One try: maps the filesystem, chooses a region not in avoid (the
 * regions tried, then rm->keep's: those cleared before), clears it. The
 * region goes into *tried. */
static int try_room(Room *rm, uint64_t blocks, uint64_t target, GArray *avoid, E4Region *tried)
{
	int rc = e4_blockmap_read(rm->root_fd, e4_defrag_dev(rm->d), rm->bs, UINT64_MAX, &rm->map);
	if (rc < 0)
		return rc;
	rm->target = file_index(&rm->map, target);
	rm->r = (E4Region){0};
	rm->pinned = g_new0(bool, rm->map.nfiles + 1);
	rm->checked = g_new0(bool, rm->map.nfiles + 1);
	E4RegionQuery q = { .len = blocks, .align = MIN(blocks & -blocks, (uint64_t)E4_MAX_EXTENT_BLOCKS),
			    .skip_file = rm->target, .avoid = (const E4Region *)avoid->data, .navoid = avoid->len,
			    .min_used = rm->min_used, .max_used = rm->max_used, .need = rm->need,
			    .max_piece = rm->need ? largest_free(&rm->map) : 0 };
	rc = choose_movable(rm, &q);
	if (rc < 0)
		rm->r = (E4Region){0}; /* none qualifies: the next try's map is the same */
	*tried = rm->r;
	/* The cheapest region costs too much: the others cost more. */
	if (rc == 0 && rm->r.used * rm->bs > E4_ROOM_MAX_MOVE_BYTES) {
		rc = -ENOSPC;
		tried->len = 0;
	}
	rm->out->region = rm->r;
	if (rc == 0)
		g_array_prepend_val(rm->keep, rm->r);
	rm->r.used = rc == 0 ? blocks_to_move(rm) : 0;
	rm->moved = 0;
	if (rc == 0 && rm->r.used > 0)
		rc = clear_region(rm);
	if (rm->donor >= 0)
		close(rm->donor); /* frees the region's old blocks */
	rm->donor = -1;
	if (rc == 0)
		g_array_remove_index(rm->keep, 0);
	g_clear_pointer(&rm->pinned, g_free);
	g_clear_pointer(&rm->checked, g_free);
	e4_blockmap_clear(&rm->map);
	return rc;
}

/* Clears one region of blocks blocks for target (0: none) whose data to
 * move is within [min_used, max_used] (0: no bound), away from the regions
 * in cleared, where nothing moved goes either. */
static int room_make(E4Defrag *d, int root_fd, uint64_t blocks, uint64_t need, uint64_t target, uint64_t min_used,
		     uint64_t max_used, const GArray *cleared, const E4DefragOpts *opts, E4RoomMade *out)
{
	*out = (E4RoomMade){0};
	if (opts->uid != 0)
		return -EPERM;
	uint64_t avail = available(root_fd);
	if (avail < E4_ROOM_MIN_FREE)
		return -ENOSPC;
	Room rm = { .d = d, .opts = opts, .root_fd = root_fd, .donor = -1, .out = out,
		    .bs = e4_defrag_geometry(d)->block_size, .min_used = min_used, .max_used = max_used, .need = need,
		    .avail0 = avail };
	/* Outside the region; a compaction's region is held too (it holds no
	 * file's donor-to-be), within the same bound. */
	uint64_t hold = e4_room_hold_bytes(opts) / rm.bs;
	rm.hold = target ? hold : hold > blocks ? hold - blocks : 0;
	rm.hold_all = target ? hold + blocks : hold;
	rm.mopts = *opts;
	rm.mopts.cancelled = room_cancelled;
	rm.mopts.progress = room_progress;
	rm.mopts.user = &rm;
	long page = sysconf(_SC_PAGESIZE);
	rm.page_blocks = page > (long)rm.bs ? (uint32_t)(page / rm.bs) : 1;
	rm.segs = g_array_new(FALSE, FALSE, sizeof(Seg));
	rm.fill = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	rm.keep = g_array_new(FALSE, FALSE, sizeof(E4Region));
	rm.exclude = e4_exclude_new();
	rm.pinned_inos = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	g_autoptr(GArray) avoid = g_array_new(FALSE, FALSE, sizeof(E4Region));
	if (cleared) {
		g_array_append_vals(rm.keep, cleared->data, cleared->len);
		g_array_append_vals(avoid, cleared->data, cleared->len);
	}
	/* Blocks freed since the last commit (the previous file's old blocks,
	 * its first donor's) are still used in GETFSMAP and owned by no file:
	 * unknown, in every window they lie in. Measured on corpus c cheese
	 * right after a job's moves: every 320 MiB window held 1,584-32,014
	 * unknown blocks (the bound is 160); after a sync 10 of 36 held 0-28. */
	syncfs(root_fd);
	int rc = -ENOSPC;
	for (size_t n = 0; n < ROOM_TRIES && rc == -ENOSPC; n++) {
		E4Region tried;
		rc = try_room(&rm, blocks, target, avoid, &tried);
		if (rm.gave_way) {
			rc = -ENOSPC;
			break;
		}
		if (rc == -ENOSPC && tried.len == 0)
			break; /* no region worth trying */
		g_array_append_val(avoid, tried);
	}
	g_array_free(rm.keep, TRUE);
	e4_exclude_free(rm.exclude);
	g_hash_table_destroy(rm.pinned_inos);
	/* Blocks freed in a transaction can be allocated (and show free in
	 * GETFSMAP) only once it commits: also after a try that moved some. */
	out->gave_way = rm.gave_way;
	if (rc == 0 || out->files_moved || rm.gave_way)
		syncfs(root_fd);
	if (out->files_moved)
		e4_defrag_room_changed(d);
	g_array_free(rm.segs, TRUE);
	g_array_free(rm.fill, TRUE);
	return rc;
}

int e4_make_room(E4Defrag *d, int root_fd, uint64_t blocks, uint64_t need, uint64_t target, const E4DefragOpts *opts,
		 E4RoomMade *out)
{
	return room_make(d, root_fd, blocks, need, target, 0, 0, NULL, opts, out);
}

uint64_t e4_room_hold_bytes(const E4DefragOpts *opts)
{
	return opts->room_hold_bytes ? opts->room_hold_bytes : E4_ROOM_HOLD_DEFAULT;
}

/* The compaction region: one extent, or an eighth of a small filesystem,
 * at most half the hold and half of what is available (what it holds must
 * not make it give way by itself). */
static uint64_t compact_blocks(int root_fd, const E4DefragOpts *opts)
{
	struct statvfs sv;
	uint64_t n = E4_MAX_EXTENT_BLOCKS;
	if (fstatvfs(root_fd, &sv) < 0)
		return n;
	uint64_t cap = MIN(e4_room_hold_bytes(opts), (uint64_t)sv.f_bavail * sv.f_frsize) / 2;
	while (n > 16 && (n * 8 > (uint64_t)sv.f_blocks || n * sv.f_frsize > cap))
		n >>= 1;
	return n;
}

int e4_compact(E4Defrag *d, int root_fd, uint64_t max_bytes, const E4DefragOpts *opts, E4Compacted *out)
{
	*out = (E4Compacted){ .region_blocks = compact_blocks(root_fd, opts) };
	uint64_t blocks = out->region_blocks;
	g_autoptr(GArray) cleared = g_array_new(FALSE, FALSE, sizeof(E4Region));
	int rc = 0;
	while (rc == 0 && out->bytes_moved < max_bytes) {
		if (opts->cancelled && opts->cancelled(opts->user))
			return -ECANCELED;
		E4RoomMade room;
		/* A region worth it: some data, at most half of it. */
		rc = room_make(d, root_fd, blocks, 0, 0, 1, blocks / 2, cleared, opts, &room);
		out->bytes_moved += room.bytes_moved;
		out->files_moved += room.files_moved;
		out->gave_way = room.gave_way;
		if (rc == 0) {
			out->regions++;
			g_array_append_val(cleared, room.region);
		}
	}
	/* What the last regions freed shows in GETFSMAP (freespace) once
	 * committed. */
	syncfs(root_fd);
	return rc == -ENOSPC ? 0 : rc;
}

/* The file's figures now (blocks, runs, ideal); false when it cannot be mapped. */
static bool figures_now(E4Defrag *d, int fd, E4FileFigures *fig)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY | O_NONBLOCK | O_NOATIME | O_CLOEXEC);
	if (ro < 0)
		ro = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	E4ExtentMap map = {0};
	bool ok = ro >= 0 && fstat(ro, &st) == 0 && e4_fiemap_read(ro, &map) == 0;
	if (ok)
		e4_figures_compute(&map, (uint64_t)st.st_size, e4_defrag_geometry(d), fig);
	e4_extent_map_clear(&map);
	if (ro >= 0)
		close(ro);
	return ok;
}

/* Blocks of the region for a file of span blocks: the power of two
 * that holds it, or beyond one placement piece (E4_PLACE_PIECE_MAX, 64
 * MiB at 4 KiB blocks), whole pieces: the file is placed piece by piece
 * (probe.h), and a region rounded to whole extents (128 MiB) instead held
 * up to 64 MiB more than the file needs (measured on corpus c cheese: a
 * 409 MiB file's region of 512 MiB, half of it others' data, took a donor
 * of 499 MiB to clear, three quarters of the free space, and the job gave
 * way). A request of exactly a power of two blocks is served by
 * mballoc's first criterion, a free buddy of that order, which a cleared
 * aligned region is: larger requests scan groups and settle for the
 * first free extents after a few hundred (measured: a 16 MiB donor took
 * 57 holes of 64 KiB before the cleared region in the same group). */
static uint64_t region_blocks(uint64_t span)
{
	if (span > E4_PLACE_PIECE_MAX)
		return (span + E4_PLACE_PIECE_MAX - 1) / E4_PLACE_PIECE_MAX * E4_PLACE_PIECE_MAX;
	uint64_t n = 1;
	while (n < span)
		n <<= 1;
	return n;
}

/* Moves the parts of ranges that lie in [from, from + len) from donor,
 * whose block 0 is the file's block from. False when the move stopped
 * (res says why). */
static bool move_part(E4Defrag *d, int rw, int donor, const E4Ranges *ranges, uint64_t from, uint64_t len,
		      const E4DefragOpts *opts, E4FileDefrag *res)
{
	g_autofree E4Range *v = g_new(E4Range, ranges->n ? ranges->n : 1);
	g_autofree uint64_t *starts = g_new(uint64_t, ranges->n ? ranges->n : 1);
	E4Ranges part = { v, 0 };
	for (size_t i = 0; i < ranges->n; i++) {
		uint64_t a = MAX(ranges->v[i].start, from);
		uint64_t b = MIN(ranges->v[i].start + ranges->v[i].len, from + len);
		if (a >= b)
			continue;
		starts[part.n] = a - from;
		v[part.n++] = (E4Range){ a, b - a };
	}
	if (part.n)
		e4_defrag_move(d, rw, donor, &part, starts, opts, res);
	return res->outcome == E4_OUTCOME_IMPROVED;
}

/* Runs of the donor open as fd; UINT32_MAX when it has no map. */
static uint32_t runs_of_fd(int fd)
{
	E4ExtentMap map = {0};
	uint32_t runs = e4_fiemap_read(fd, &map) == 0 && map.n ? e4_count_runs(map.ext, map.n) : UINT32_MAX;
	e4_extent_map_clear(&map);
	return runs;
}

/* When the window could not take the whole file (its fences reached their
 * bound, the misses landing in the large free extents elsewhere), the rest
 * goes into one more donor, allocated where the allocator likes once the
 * fences are freed and committed: measured on corpus c cheese, a file
 * whose window took 35,155 of 61,440 blocks ended in 609 runs with one
 * donor for all of it instead. 0, or -ENOSPC (pl cleared). */
static int place_rest(E4Defrag *d, int dirfd, uint64_t span, E4Placed *pl)
{
	uint64_t placed = 0;
	for (uint64_t i = 0; i < pl->n; i++)
		placed += pl->piece_len[i];
	syncfs(dirfd);
	int fd = placed < span ? e4_defrag_new_donor(d, dirfd, span - placed, false) : -ENOSPC;
	if (fd < 0) {
		e4_placed_clear(pl);
		return -ENOSPC;
	}
	e4_placed_append(pl, fd, span - placed, runs_of_fd(fd));
	return 0;
}

/* Places blocks blocks of donor in the cleared region: aligned pieces
 * (e4_place_window) when the region holds no unknown block, else (or when
 * those fail) pieces in its free extents (e4_place_fit) for the file's
 * span. 0 with pl's pieces in physical order, or -errno; pl holds what
 * was made either way (its fences already closed). */
static int place_in_room(E4Defrag *d, int dirfd, const E4Region *region, uint64_t blocks, uint64_t span,
			 uint64_t max_fence, E4Placed *pl)
{
	int rc = -ENOSPC;
	*pl = (E4Placed){0};
	uint64_t piece = MIN(blocks, (uint64_t)E4_PLACE_PIECE_MAX);
	if (region->unknown == 0 && region->start % piece == 0) {
		rc = e4_defrag_place(d, dirfd, region->start, blocks, max_fence, pl);
		if (rc < 0) {
			/* What the try holds is free for the next only once committed. */
			e4_placed_clear(pl);
			syncfs(dirfd);
		}
	}
	if (rc < 0 && span > 0)
		rc = e4_defrag_place_fit(d, dirfd, region->start, blocks, span, max_fence, pl);
	e4_placed_drop_fences(pl);
	if (rc == -ENOSPC && pl->n > 0)
		rc = place_rest(d, dirfd, span, pl);
	return rc;
}

/* Moves the admitted file rw (its data in ranges, within the first
 * `blocks` blocks) into the cleared region, piece by piece where they
 * could be placed there (probe.h), else into one donor of exactly
 * `blocks` blocks when that one comes out in fewer runs than the file
 * has. */
static void move_into_room(E4Defrag *d, int rw, int dirfd, const E4Ranges *ranges, const E4Region *region,
			   uint64_t blocks, uint32_t runs, const E4DefragOpts *opts, E4FileDefrag *res)
{
	E4Placed pl;
	uint64_t span = ranges->n ? ranges->v[ranges->n - 1].start + ranges->v[ranges->n - 1].len : 0;
	int rc = place_in_room(d, dirfd, region, blocks, span,
			       e4_room_hold_bytes(opts) / e4_defrag_geometry(d)->block_size, &pl);
	if (rc == 0 && pl.runs < runs) {
		res->outcome = E4_OUTCOME_IMPROVED;
		uint64_t from = 0;
		for (uint64_t i = 0; i < pl.n && from < span; from += pl.piece_len[i++])
			if (!move_part(d, rw, pl.piece_fd[i], ranges, from, pl.piece_len[i], opts, res))
				break;
		e4_placed_clear(&pl);
		return;
	}
	/* What was placed and fenced is freed in the running transaction,
	 * and no allocation can have it before that commits: the region's
	 * pieces too. Commit, or the donor below finds less room than
	 * before the try (measured: corpus b cheese ended at 10,674 runs
	 * instead of 3,468 without it). */
	bool held = pl.n > 0;
	e4_placed_clear(&pl);
	if (held)
		syncfs(dirfd);
	int donor = e4_defrag_new_donor(d, dirfd, blocks, true);
	if (donor < 0) {
		res->outcome = E4_OUTCOME_NO_GAIN;
		return;
	}
	if (runs_of_fd(donor) < runs) {
		res->outcome = E4_OUTCOME_IMPROVED;
		e4_defrag_move(d, rw, donor, ranges, NULL, opts, res);
	} else {
		res->outcome = E4_OUTCOME_NO_GAIN;
	}
	close(donor);
}

/* The data ranges of the file open as rw and its runs. 0 or -errno. */
static int ranges_of(E4Defrag *d, int rw, E4Ranges *ranges, uint32_t *runs)
{
	struct stat st;
	E4ExtentMap map = {0};
	int rc = fstat(rw, &st) < 0 ? -errno : e4_fiemap_read(rw, &map);
	if (rc == 0) {
		*runs = e4_count_runs(map.ext, map.n);
		rc = e4_data_ranges(&map, (uint64_t)st.st_size, e4_defrag_geometry(d)->block_size, ranges);
	}
	e4_extent_map_clear(&map);
	return rc;
}

void e4_defrag_file_making_room(E4Defrag *d, int fd, int donor_dirfd, int root_fd, const E4DefragOpts *opts,
				E4FileDefrag *out, E4RoomMade *room)
{
	*room = (E4RoomMade){0};
	e4_defrag_file(d, fd, donor_dirfd, opts, out);
	bool tried = out->outcome == E4_OUTCOME_IMPROVED || out->outcome == E4_OUTCOME_NO_GAIN;
	E4FileFigures fig;
	if (!tried || opts->uid != 0 || root_fd < 0 || !figures_now(d, fd, &fig) ||
	    !e4_defrag_needed(&fig, opts, e4_defrag_geometry(d)->block_size))
		return;
	/* The region's size comes from the file's span (holes included: the
	 * donor is allocated whole, its holes freed with it). */
	E4FileDefrag res;
	int rw = e4_defrag_admit(d, fd, opts->uid, false, &res);
	E4Ranges ranges = {0};
	uint32_t runs = 0;
	int rc = rw < 0 ? -EBUSY : ranges_of(d, rw, &ranges, &runs);
	uint64_t span = ranges.n ? ranges.v[ranges.n - 1].start + ranges.v[ranges.n - 1].len : 0;
	uint64_t blocks = region_blocks(span);
	if (rw >= 0)
		e4_defrag_dismiss(d, rw, res.ino); /* making room moves the file's own blocks too */
	if (rc == 0 && (span == 0 || blocks > E4_ROOM_MAX_REGION_BLOCKS))
		rc = -EFBIG;
	if (rc == 0)
		rc = e4_make_room(d, root_fd, blocks, span, out->ino, opts, room);
	room->tried = true;
	room->rc = rc;
	if (rc < 0) {
		e4_ranges_clear(&ranges);
		return;
	}
	rw = e4_defrag_admit(d, fd, opts->uid, false, &res);
	/* Its map may have changed (its own blocks left the region): again. */
	e4_ranges_clear(&ranges);
	if (rw >= 0 && ranges_of(d, rw, &ranges, &runs) == 0) {
		res.runs_before = runs;
		move_into_room(d, rw, donor_dirfd, &ranges, &room->region, blocks, runs, opts, &res);
		uint32_t after = runs;
		E4Ranges ignore = {0};
		if (ranges_of(d, rw, &ignore, &after) == 0)
			res.runs_after = after;
		e4_ranges_clear(&ignore);
		if (res.outcome == E4_OUTCOME_IMPROVED || res.outcome == E4_OUTCOME_CANCELLED ||
		    res.outcome == E4_OUTCOME_FAILED) {
			uint32_t before = out->runs_before;
			uint64_t moved = out->bytes_moved;
			*out = res;
			out->runs_before = before;
			out->bytes_moved += moved;
		}
	}
	if (rw >= 0)
		e4_defrag_dismiss(d, rw, res.ino);
	e4_ranges_clear(&ranges);
}
