#include "attrs.h"
#include "autodefrag.h"
#include "costs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "exclude.h"
#include "inspect.h"
#include "jobs.h"
#include "walk.h"
#include "render.h"
#include "map.h"
#include "mapscan.h"
#include "page.h"

enum { ON_DIR = 1, ON_FILE = 2, ON_ROOT = 4 };

static const struct {
	const char *name;
	unsigned where;
} attrs[ATTR__COUNT] = {
	[ATTR_SCORE] = { "score", ON_DIR | ON_FILE },
	[ATTR_EXTENTS] = { "extents", ON_DIR | ON_FILE },
	[ATTR_STATS] = { "stats", ON_DIR | ON_FILE },
	[ATTR_STATS_JSON] = { "stats.json", ON_DIR | ON_FILE },
	[ATTR_REPORT] = { "report", ON_DIR },
	[ATTR_METRICS] = { "metrics", ON_ROOT },
	[ATTR_DEFRAG] = { "defrag", ON_DIR | ON_FILE },
	[ATTR_JOBS] = { "jobs", ON_ROOT },
	[ATTR_FREESPACE] = { "freespace", ON_ROOT },
	[ATTR_PLAN] = { "plan", ON_DIR | ON_FILE },
	[ATTR_MAP_SVG] = { "map.svg", ON_DIR | ON_FILE },
	[ATTR_MAP_PNG] = { "map.png", ON_DIR | ON_FILE },
	[ATTR_INDEX_HTML] = { "index.html", ON_DIR },
	[ATTR_MAP_BEFORE_SVG] = { "map-before.svg", ON_DIR | ON_FILE },
	[ATTR_MAP_BEFORE_PNG] = { "map-before.png", ON_DIR | ON_FILE },
};

const char *const e4_reserved_names[] = {
	"score", "extents", "stats", "stats.json", "report", "metrics", "defrag", "jobs", "freespace",
	"plan", "map.svg", "map.png", "index.html", "map-before.svg", "map-before.png",
	NULL,
};

const char *e4_attr_name(AttrId id)
{
	return id < ATTR__COUNT ? attrs[id].name : NULL;
}

bool e4_attr_is_trigger(int id)
{
	return id == ATTR_DEFRAG || id == ATTR_JOBS;
}

uint64_t e4_attr_size(int id)
{
	switch (id) {
	case ATTR_MAP_SVG:
	case ATTR_MAP_BEFORE_SVG: return E4_MAP_SVG_SIZE;
	case ATTR_MAP_PNG:
	case ATTR_MAP_BEFORE_PNG: return E4_MAP_PNG_SIZE;
	case ATTR_INDEX_HTML: return E4_PAGE_SIZE;
	case ATTR_DEFRAG:
	case ATTR_JOBS: return E4_TRIGGER_SIZE;
	default: return 0;
	}
}

bool e4_attr_is_picture(int id)
{
	return id == ATTR_MAP_SVG || id == ATTR_MAP_PNG;
}

bool e4_attr_follows_layout(int id)
{
	return e4_attr_is_picture(id) || id == ATTR_INDEX_HTML;
}

bool e4_attr_exists(const E4Fs *fs, const Node *node, AttrId id)
{
	if (id >= ATTR__COUNT)
		return false;
	unsigned where = node->is_dir ? ON_DIR : ON_FILE;
	if (node == fs->root)
		where |= ON_ROOT;
	return attrs[id].where & where;
}

int e4_attr_lookup(const E4Fs *fs, const Node *node, const char *name)
{
	for (int id = 0; id < ATTR__COUNT; id++)
		if (strcmp(attrs[id].name, name) == 0 && e4_attr_exists(fs, node, (AttrId)id))
			return id;
	return -1;
}

/* Opens the real object behind node for reading: exactly the inode that
 * was looked up (by its handle), whatever happened to its path since. */
static int open_real(E4Fs *fs, const Node *node)
{
	if (node->is_dir)
		return e4fs_node_open(fs, node, O_RDONLY | O_DIRECTORY);
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
	int fd = e4fs_node_open(fs, node, flags | O_NOATIME);
	if (fd == -EPERM)
		fd = e4fs_node_open(fs, node, flags);
	return fd;
}

static char *render_summary(E4Fs *fs, AttrId id, const E4Summary *sum, const E4Top *top,
			    double seconds, time_t when)
{
	uint32_t bs = fs->info->geom.block_size;
	switch (id) {
	case ATTR_SCORE: return e4_render_score(sum);
	case ATTR_STATS: return e4_render_stats(sum, bs, seconds, when);
	case ATTR_STATS_JSON: return e4_render_stats_json(sum, bs, seconds, when);
	case ATTR_REPORT: return e4_render_report(top, bs);
	default: return NULL;
	}
}

static int add_dir_file(const E4TreeFile *file, void *user)
{
	e4_render_dir_extents_add(user, file);
	return 0;
}

/* True when caller may list every directory on path (relative to the
 * directory fd, which caller may read), so may learn the file's name. */
static bool caller_sees(const Caller *caller, int fd, const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	int cur = dup(fd);
	bool ok = cur >= 0;
	for (int i = 0; ok && parts[i] && parts[i + 1]; i++) {
		struct stat st;
		ok = fstatat(cur, parts[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		     e4fs_caller_may(caller, &st, 5);
		int next = ok ? openat(cur, parts[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		close(cur);
		cur = next;
		ok = ok && cur >= 0;
	}
	if (cur >= 0)
		close(cur);
	return ok;
}

/* Drops the files whose names the caller may not learn, keeping at most cap. */
static void filter_top(E4Top *top, const Caller *caller, int fd, size_t cap)
{
	size_t kept = 0;
	for (size_t i = 0; i < top->n; i++) {
		if (kept < cap && caller_sees(caller, fd, top->v[i].path)) {
			top->v[kept++] = top->v[i];
			continue;
		}
		g_free(top->v[i].path);
	}
	top->n = kept;
}

/* Candidates fetched for an unprivileged reader's report, per line kept. */
#define REPORT_OVERFETCH 8

/* A scene as the picture id asks: SVG or PNG, both of a fixed size. */
static int picture(AttrId id, E4MapScene *scene, char **out)
{
	int rc = 0;
	if (id == ATTR_MAP_SVG || id == ATTR_MAP_BEFORE_SVG)
		rc = (*out = e4_map_svg(scene)) ? 0 : -EOVERFLOW;
	else
		rc = e4_map_png(scene, out);
	e4_map_scene_clear(scene);
	return rc;
}

/* The scene of the object open as fd: a directory's grid or a file's strip. */
static int node_scene(E4Fs *fs, int fd, bool is_dir, E4MapScene *scene)
{
	uint32_t bs = fs->info->geom.block_size;
	uint64_t total = e4_map_fs_blocks(fs->info->dev, fd, bs);
	int rc;
	if (is_dir) {
		E4MapGrid grid;
		E4Summary sum = {0};
		rc = e4_map_dir_grid(fs->tree, fd, fs->info->dev, bs, total, &grid, &sum);
		if (rc == 0)
			e4_map_dir_scene(&grid, &sum, bs, scene);
		e4_map_grid_clear(&grid);
		return rc;
	}
	E4ExtentMap map = {0};
	struct stat st;
	rc = fstat(fd, &st) < 0 ? -errno : e4_fiemap_read(fd, &map);
	if (rc == 0)
		e4_map_file_scene(&map, (uint64_t)st.st_size, bs, total, scene);
	e4_extent_map_clear(&map);
	return rc;
}

static int node_picture(E4Fs *fs, int fd, bool is_dir, AttrId id, char **out)
{
	E4MapScene scene;
	int rc = node_scene(fs, fd, is_dir, &scene);
	return rc < 0 ? rc : picture(id, &scene, out);
}

int e4_attr_take_before(E4Fs *fs, Node *node, E4Before *out)
{
	*out = (E4Before){ .when_us = g_get_real_time() };
	int fd = open_real(fs, node);
	if (fd < 0)
		return fd;
	E4MapScene scene;
	int rc = node_scene(fs, fd, node->is_dir, &scene);
	close(fd);
	if (rc < 0)
		return rc;
	out->svg = e4_map_svg(&scene);
	rc = out->svg ? e4_map_png(&scene, &out->png) : -EOVERFLOW;
	e4_map_scene_clear(&scene);
	if (rc < 0)
		g_clear_pointer(&out->svg, g_free);
	return rc;
}

void e4_before_free(gpointer before)
{
	E4Before *b = before;
	g_free(b->svg);
	g_free(b->png);
	g_free(b);
}

/* map-before.svg or .png: the picture taken when the node's last job
 * started, or one saying there was none. */
static int before_picture(E4Fs *fs, uint64_t ino, AttrId id, char **out)
{
	bool svg = id == ATTR_MAP_BEFORE_SVG;
	*out = NULL;
	g_mutex_lock(&fs->jobs_lock);
	const E4Before *b = g_hash_table_lookup(fs->befores, &ino);
	if (b)
		*out = svg ? g_strdup(b->svg) : g_memdup2(b->png, E4_MAP_PNG_SIZE);
	g_mutex_unlock(&fs->jobs_lock);
	if (*out)
		return 0;
	E4MapScene scene;
	e4_map_scene_init(&scene);
	e4_map_text(&scene, 16, 40, 16, E4_ANCHOR_START, false,
		    "No defragmentation job has run on this node since the mount.");
	e4_map_text(&scene, 16, 64, 13, E4_ANCHOR_START, false,
		    "When one starts, the picture of that moment is kept here; map.svg shows the present.");
	return picture(id, &scene, out);
}

/* Scans the directory fd; with a caller, keeps the top files whose names
 * the caller may learn (a non-root reader). */
static int scan_top(E4Fs *fs, int fd, const Caller *caller, E4TreeResult *res)
{
	bool filter = caller && caller->uid != 0;
	int rc = e4_tree_scan(fs->tree, fd, fs->report_top * (filter ? REPORT_OVERFETCH : 1), res);
	if (rc == 0 && filter)
		filter_top(&res->top, caller, fd, fs->report_top);
	return rc;
}

/* index.html: figures, map, top files, subdirectories, defrag status. */
static int dir_page(E4Fs *fs, E4AttrWork *w, char **out)
{
	uint32_t bs = fs->info->geom.block_size;
	E4TreeResult res;
	int rc = scan_top(fs, w->fd, &w->caller, &res);
	if (rc < 0)
		return rc;
	g_autofree char *stats = e4_render_stats(&res.sum, bs, res.seconds, res.when);
	g_autofree char *svg = NULL;
	if (node_picture(fs, w->fd, true, ATTR_MAP_SVG, &svg) < 0)
		svg = NULL;
	struct stat st;
	E4DirList list = {0};
	if (fstat(w->fd, &st) == 0)
		e4_dir_list(w->fd, &st, fs->info->dev, &list);
	g_autoptr(GArray) subs = g_array_new(FALSE, TRUE, sizeof(E4PageSubdir));
	for (size_t i = 0; i < list.n; i++) {
		int sfd = list.v[i].kind == E4_ENTRY_DIR ? e4_open_subdir(w->fd, list.v[i].name, fs->info->dev, &st)
							  : -1;
		E4TreeResult sr;
		if (sfd >= 0 && e4_tree_scan(fs->tree, sfd, 0, &sr) == 0) {
			E4PageSubdir d = { list.v[i].name, sr.sum };
			g_array_append_val(subs, d);
			e4_tree_result_clear(&sr);
		}
		if (sfd >= 0)
			close(sfd);
	}
	E4Page page = { .title = w->name, .sum = &res.sum, .stats = stats, .svg = svg, .top = &res.top,
			.subdirs = (E4PageSubdir *)(void *)subs->data, .nsubdirs = subs->len,
			.defrag = w->text, .reserved = e4_reserved_names, .block_size = bs };
	*out = e4_page_render(&page);
	e4_dir_list_clear(&list);
	e4_tree_result_clear(&res);
	return 0;
}

static int generate_dir(E4Fs *fs, int fd, AttrId id, const Caller *caller, char **out)
{
	if (e4_attr_is_picture(id))
		return node_picture(fs, fd, true, id, out);
	if (id == ATTR_EXTENTS) {
		GString *text = e4_render_dir_extents_begin();
		int rc = e4_tree_dir_files(fs->tree, fd, add_dir_file, text);
		*out = g_string_free(text, rc < 0);
		return rc;
	}
	E4TreeResult res;
	int rc = scan_top(fs, fd, id == ATTR_REPORT ? caller : NULL, &res);
	if (rc < 0)
		return rc;
	*out = render_summary(fs, id, &res.sum, &res.top, res.seconds, res.when);
	e4_tree_result_clear(&res);
	return 0;
}

/* A file's extent map as FIEMAP gives it, whatever its size (an empty
 * file may still hold blocks preallocated past EOF). */
static int generate_file_extents(E4Fs *fs, int fd, char **out)
{
	E4ExtentMap map = {0};
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : e4_fiemap_read(fd, &map);
	if (rc == 0) {
		E4FileFigures fig;
		e4_figures_compute(&map, (uint64_t)st.st_size, &fs->info->geom, &fig);
		*out = e4_render_file_extents(&map, &fig, fs->info->geom.block_size);
	}
	e4_extent_map_clear(&map);
	return rc;
}

static int generate_file(E4Fs *fs, int fd, AttrId id, char **out)
{
	if (id == ATTR_EXTENTS)
		return generate_file_extents(fs, fd, out);
	if (e4_attr_is_picture(id))
		return node_picture(fs, fd, false, id, out);
	E4FileResult r;
	gint64 start = g_get_monotonic_time();
	int rc = e4_inspect_fd(fd, &fs->info->geom, NULL, &r);
	if (rc < 0)
		return rc;
	E4Summary sum = {0};
	E4Top top = {0};
	e4_summary_add_result(&sum, &r);
	/* A file node's figures are those of a directory holding only it. */
	E4DirLoc loc = {0};
	if (r.skip < 0)
		e4_dirloc_add(&loc, &r.fig);
	e4_summary_add_dirloc(&sum, &loc);
	double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
	*out = render_summary(fs, id, &sum, &top, seconds, time(NULL));
	return 0;
}

/* The summary of the directory open as dirfd, or an empty one; counts
 * the scan in *scans when one was made. */
static E4Summary summary_of(E4Fs *fs, int dirfd, uint64_t *scans)
{
	E4TreeResult res;
	E4Summary sum = {0};
	if (e4_tree_scan(fs->tree, dirfd, 0, &res) == 0) {
		(*scans)++;
		sum = res.sum;
		e4_tree_result_clear(&res);
	}
	return sum;
}

static char *render_metrics(E4Fs *fs)
{
	/* Counters as they were before this read's own scans, which do not count. */
	E4Metrics m = { .source = fs->info->source_dir };
	e4_tree_counters(fs->tree, &m.tree);
	uint64_t own = __atomic_load_n(&fs->metrics_scans, __ATOMIC_RELAXED);
	m.tree.scans = m.tree.scans > own ? m.tree.scans - own : 0;
	struct stat st;
	E4DirList list = {0};
	/* A scan holds the tree (a first read of a large one for minutes):
	 * rather than wait for it, this read leaves the per-directory series
	 * out and shows how far it is. Re-reads take a millisecond: a scrape
	 * rarely meets one. */
	bool busy = m.tree.scan_running;
	if (!busy && fstat(fs->root_fd, &st) == 0)
		e4_dir_list(fs->root_fd, &st, fs->info->dev, &list);
	g_autofree E4MetricsDir *dirs = g_new0(E4MetricsDir, list.n + 1);
	size_t n = 0;
	uint64_t scans = 0;
	if (!busy)
		dirs[n++] = (E4MetricsDir){ ".", summary_of(fs, fs->root_fd, &scans) };
	for (size_t i = 0; i < list.n; i++) {
		int fd = list.v[i].kind == E4_ENTRY_DIR ? e4_open_subdir(fs->root_fd, list.v[i].name,
									 fs->info->dev, &st) : -1;
		if (fd < 0)
			continue;
		dirs[n++] = (E4MetricsDir){ list.v[i].name, summary_of(fs, fd, &scans) };
		close(fd);
	}
	__atomic_fetch_add(&fs->metrics_scans, scans, __ATOMIC_RELAXED);
	m.dirs = dirs;
	m.ndirs = n;
	e4fs_jobs_totals(fs, &m.jobs, &m.defrag);
	e4fs_auto_counters(fs->autod, &m.autod);
	g_mutex_lock(&fs->lock);
	m.nodes = g_hash_table_size(fs->nodes); /* the root included */
	g_mutex_unlock(&fs->lock);
	char *text = e4_render_metrics(&m);
	e4_dir_list_clear(&list);
	return text;
}

static int render_freespace(E4Fs *fs, char **out)
{
	E4FreeSpace free;
	uint32_t bs = fs->info->geom.block_size;
	int rc = e4_freespace_read(fs->root_fd, bs, &free);
	struct statvfs sv;
	if (rc == 0) {
		*out = e4_render_freespace(&free);
	} else if ((rc == -EPERM || rc == -EACCES) && fstatvfs(fs->root_fd, &sv) == 0) {
		/* ext4 asks no privilege for GETFSMAP (6.18); an LSM or another
		 * kernel may: say so rather than fail the read with EPERM. */
		*out = e4_render_freespace_unavailable(-rc, bs, (uint64_t)sv.f_bfree * sv.f_frsize / bs);
		rc = 0;
	}
	return rc;
}

static void plan_file(const E4TreeFile *f, void *planner)
{
	e4_planner_add(planner, f->name, f->skip < 0 ? f->fig : NULL, f->excluded);
}

/* What `echo 1 > defrag` would do now: the files from the cache (a
 * directory) or one inspection (a file), the free space from one GETFSMAP. */
static int generate_plan(E4Fs *fs, E4AttrWork *w, char **out)
{
	uint32_t bs = fs->info->geom.block_size;
	E4DefragOpts opts = { .good_kib = fs->good_kib, .min_runs = fs->job_defaults.min_runs };
	E4Planner *pl = e4_planner_new(&opts, bs, fs->worst_first);
	int rc = 0;
	if (w->is_dir) {
		E4TreeResult res;
		rc = e4_tree_scan_each(fs->tree, w->fd, 0, &res, plan_file, pl);
		if (rc == 0)
			e4_tree_result_clear(&res);
	} else {
		E4FileResult r;
		rc = e4_inspect_fd(w->fd, &fs->info->geom, NULL, &r);
		if (rc == 0)
			e4_planner_add(pl, "", r.skip < 0 ? &r.fig : NULL, w->excluded_above || e4_exclude_marked(w->fd));
	}
	if (rc < 0) {
		e4_planner_free(pl);
		return rc;
	}
	bool known = e4_freespace_each(fs->root_fd, bs, e4_planner_free_extent, pl) == 0;
	E4Plan plan;
	e4_planner_finish(pl, known, &plan);
	e4_planner_free(pl);
	E4PlanTime time;
	e4fs_costs_estimate(fs, w->fd, &plan, fs->fsroot_fd >= 0 && w->caller.uid == 0, &time);
	*out = e4_render_plan(&plan, &time, fs->fsroot_fd >= 0);
	e4_plan_clear(&plan);
	return 0;
}

int e4_attr_prepare(E4Fs *fs, Node *node, AttrId id, const Caller *caller, E4AttrWork *w)
{
	*w = (E4AttrWork){ .id = id, .fd = -1, .is_dir = node->is_dir, .caller = *caller };
	if (id == ATTR_DEFRAG) {
		w->text = e4fs_job_status(fs, node);
		return 0;
	}
	if (id == ATTR_FREESPACE || id == ATTR_METRICS || id == ATTR_JOBS)
		return 0;
	if (id == ATTR_PLAN && !node->is_dir) {
		int pfd = e4fs_node_open_parent(fs, node, NULL);
		w->excluded_above = pfd >= 0 && e4_exclude_dir(NULL, pfd);
		if (pfd >= 0)
			close(pfd);
	}
	if (id == ATTR_MAP_BEFORE_SVG || id == ATTR_MAP_BEFORE_PNG) {
		w->ino = node->real_ino;
		return 0;
	}
	if (id == ATTR_INDEX_HTML) {
		w->text = e4fs_job_status(fs, node);
		w->name = g_strdup(node == fs->root ? "/" : node->name);
	}
	w->fd = open_real(fs, node);
	return w->fd < 0 ? w->fd : 0;
}

static int run_work(E4Fs *fs, E4AttrWork *w, char **out)
{
	switch (w->id) {
	case ATTR_DEFRAG:
		*out = g_steal_pointer(&w->text);
		return 0;
	case ATTR_FREESPACE:
		return render_freespace(fs, out);
	case ATTR_METRICS:
		*out = render_metrics(fs);
		return 0;
	case ATTR_JOBS:
		*out = e4fs_jobs_list(fs);
		return 0;
	case ATTR_PLAN:
		return generate_plan(fs, w, out);
	case ATTR_INDEX_HTML:
		return dir_page(fs, w, out);
	case ATTR_MAP_BEFORE_SVG:
	case ATTR_MAP_BEFORE_PNG:
		return before_picture(fs, w->ino, w->id, out);
	default:
		return w->is_dir ? generate_dir(fs, w->fd, w->id, &w->caller, out)
				 : generate_file(fs, w->fd, w->id, out);
	}
}

int e4_attr_run(E4Fs *fs, E4AttrWork *w, char **out, size_t *len)
{
	*out = NULL;
	int rc = run_work(fs, w, out);
	if (w->fd >= 0)
		close(w->fd);
	g_clear_pointer(&w->text, g_free);
	g_clear_pointer(&w->name, g_free);
	if (rc == 0 && !*out)
		rc = -EINVAL;
	bool png = w->id == ATTR_MAP_PNG || w->id == ATTR_MAP_BEFORE_PNG;
	*len = !*out ? 0 : png ? E4_MAP_PNG_SIZE : strlen(*out);
	/* A fixed size is a promise made at stat. */
	g_assert(e4_attr_size(w->id) == 0 || e4_attr_is_trigger(w->id) || rc < 0 || *len == e4_attr_size(w->id));
	return rc;
}
