#include <errno.h>
#include "render.h"

#include <string.h>

#include <glib.h>

#include "escape.h"

char *e4_render_score(const E4Summary *sum)
{
	return g_strdup_printf("%d\n", e4_summary_score(sum));
}

typedef enum { F_COUNT, F_REAL, F_TEXT } FieldKind;

typedef struct {
	const char *key;
	FieldKind kind;
	uint64_t count;
	double real;
	int decimals;
	const char *text;
} Field;

#define COUNT(k, v) ((Field){ .key = (k), .kind = F_COUNT, .count = (v) })
#define REAL(k, v, d) ((Field){ .key = (k), .kind = F_REAL, .real = (v), .decimals = (d) })
#define TEXT(k, v) ((Field){ .key = (k), .kind = F_TEXT, .text = (v) })

#define MAX_FIELDS (24 + E4_SKIP__COUNT)

/* The figures of stats and stats.json, in output order. */
static size_t stats_fields(const E4Summary *s, uint32_t bs, double seconds, const char *when,
			   Field *f)
{
	int score = e4_summary_score(s);
	double pct = s->analysed ? 100.0 * (double)s->fragmented / (double)s->analysed : 0;
	size_t n = 0;
	f[n++] = COUNT("files", s->files);
	f[n++] = COUNT("analysed_files", s->analysed);
	f[n++] = COUNT("fragmented_files", s->fragmented);
	f[n++] = REAL("fragmented_percent", pct, 1);
	f[n++] = COUNT("bytes", s->bytes);
	f[n++] = COUNT("block_size", bs);
	f[n++] = COUNT("blocks", s->blocks);
	f[n++] = COUNT("runs", s->runs);
	f[n++] = COUNT("fiemap_records", s->records);
	f[n++] = COUNT("best", s->best);
	f[n++] = COUNT("ideal", s->ideal);
	f[n++] = COUNT("holes", s->holes);
	f[n++] = COUNT("unwritten_blocks", s->unwritten_blocks);
	f[n++] = REAL("ratio", e4_summary_ratio(s), 2);
	f[n++] = COUNT("score", (uint64_t)score);
	f[n++] = TEXT("verdict", e4_score_verdict(score));
	f[n++] = REAL("layout_score", e4_summary_layout_score(s), 4);
	f[n++] = REAL("dir_locality", e4_summary_dir_locality(s), 4);
	f[n++] = REAL("mean_run_kib", e4_summary_mean_run_kib(s, bs), 1);
	f[n++] = COUNT("skipped_files", e4_summary_skipped_total(s));
	static const char *const skip_keys[E4_SKIP__COUNT] = {
		[E4_SKIP_EMPTY] = "skipped_empty",
		[E4_SKIP_NO_EXTENTS] = "skipped_no_extents",
		[E4_SKIP_UNREADABLE] = "skipped_unreadable",
		[E4_SKIP_NO_FIEMAP] = "skipped_no_fiemap",
	};
	for (int i = 0; i < E4_SKIP__COUNT; i++)
		f[n++] = COUNT(skip_keys[i], s->skipped[i]);
	f[n++] = TEXT("scanned_at", when);
	f[n++] = REAL("scan_seconds", seconds, 3);
	return n;
}

static void append_real(GString *out, double v, int decimals)
{
	char buf[G_ASCII_DTOSTR_BUF_SIZE];
	char fmt[8];
	g_snprintf(fmt, sizeof(fmt), "%%.%df", decimals);
	g_string_append(out, g_ascii_formatd(buf, sizeof(buf), fmt, v));
}

static char *iso_time(time_t when)
{
	g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(when);
	return dt ? g_date_time_format(dt, "%Y-%m-%dT%H:%M:%SZ") : g_strdup("unknown");
}

typedef void (*FieldWriter)(GString *out, const Field *f, gboolean first);

static void write_text_field(GString *out, const Field *f, gboolean first)
{
	(void)first;
	g_string_append_printf(out, "%s: ", f->key);
	if (f->kind == F_COUNT)
		g_string_append_printf(out, "%" G_GUINT64_FORMAT, f->count);
	else if (f->kind == F_REAL)
		append_real(out, f->real, f->decimals);
	else
		e4_escape_text(out, f->text);
	g_string_append_c(out, '\n');
}

static void write_json_field(GString *out, const Field *f, gboolean first)
{
	g_string_append_printf(out, "%s\"%s\": ", first ? "" : ", ", f->key);
	if (f->kind == F_COUNT) {
		g_string_append_printf(out, "%" G_GUINT64_FORMAT, f->count);
	} else if (f->kind == F_REAL) {
		append_real(out, f->real, f->decimals);
	} else {
		g_string_append_c(out, '"');
		e4_escape_json(out, f->text);
		g_string_append_c(out, '"');
	}
}

static char *render_fields(const E4Summary *sum, uint32_t bs, double seconds, time_t when,
			   const char *open, const char *close, FieldWriter write)
{
	g_autofree char *stamp = iso_time(when);
	Field fields[MAX_FIELDS];
	size_t n = stats_fields(sum, bs, seconds, stamp, fields);
	GString *out = g_string_new(open);
	for (size_t i = 0; i < n; i++)
		write(out, &fields[i], i == 0);
	g_string_append(out, close);
	return g_string_free(out, FALSE);
}

char *e4_render_stats(const E4Summary *sum, uint32_t block_size, double seconds, time_t when)
{
	return render_fields(sum, block_size, seconds, when, "", "", write_text_field);
}

char *e4_render_stats_json(const E4Summary *sum, uint32_t block_size, double seconds, time_t when)
{
	return render_fields(sum, block_size, seconds, when, "{", "}\n", write_json_field);
}

static double mean_run_kib(const E4FileFigures *fig, uint32_t bs)
{
	return fig->runs ? (double)fig->blocks * bs / 1024.0 / fig->runs : 0;
}

char *e4_render_report(const E4Top *top, uint32_t block_size)
{
	GString *out = g_string_new("# rank runs/best size_bytes mean_run_kib e4defrag_ratio path\n");
	for (size_t i = 0; i < top->n; i++) {
		const E4TopEntry *e = &top->v[i];
		g_string_append_printf(out, "%zu %u/%u %" G_GUINT64_FORMAT " ", i + 1, e->fig.runs,
				       e->fig.best, e->fig.size);
		append_real(out, mean_run_kib(&e->fig, block_size), 1);
		g_string_append_c(out, ' ');
		append_real(out, e->rank, 2);
		g_string_append_c(out, ' ');
		e4_escape_text(out, e->path);
		g_string_append_c(out, '\n');
	}
	return g_string_free(out, FALSE);
}

char *e4_render_file_extents(const E4ExtentMap *map, const E4FileFigures *fig, uint32_t block_size)
{
	GString *out = g_string_new(NULL);
	g_string_append_printf(out, "# ext logical physical length flags (unit: %u-byte blocks)\n",
			       block_size);
	for (size_t i = 0; i < map->n; i++) {
		const E4Extent *e = &map->ext[i];
		char flags[128];
		e4_fiemap_flag_names(e->flags, flags, sizeof(flags));
		g_string_append_printf(out, "%zu %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
				       " %" G_GUINT64_FORMAT " %s\n", i, e->logical / block_size,
				       e->physical / block_size, e->length / block_size, flags);
	}
	g_string_append_printf(out, "runs: %u\n", fig->runs);
	return g_string_free(out, FALSE);
}

GString *e4_render_dir_extents_begin(void)
{
	return g_string_new("# size_bytes runs best name\n");
}

void e4_render_dir_extents_add(GString *out, const E4TreeFile *file)
{
	g_string_append_printf(out, "%" G_GUINT64_FORMAT " ", file->fig->size);
	if (file->skip < 0)
		g_string_append_printf(out, "%u %u ", file->fig->runs, file->fig->best);
	else
		g_string_append(out, "- - ");
	e4_escape_text(out, file->name);
	g_string_append_c(out, '\n');
}

static void render_defrag_progress(GString *out, const E4DefragSummary *s, const char *current)
{
	double pct = e4_defrag_percent(s);
	g_string_append_printf(out, "files_done: %" G_GUINT64_FORMAT "\nfiles_total: %" G_GUINT64_FORMAT
			       "\nbytes_done: %" G_GUINT64_FORMAT "\nbytes_total: %" G_GUINT64_FORMAT
			       "\nroom_bytes_moved: %" G_GUINT64_FORMAT "\nroom_files_moved: %" G_GUINT64_FORMAT
			       "\npercent: ", s->files_done, s->files_total, s->bytes_done, s->bytes_total,
			       s->room_bytes_moved, s->room_files_moved);
	append_real(out, pct, 1);
	g_string_append(out, "\ncurrent: ");
	e4_escape_text(out, current ? current : "-");
	g_string_append_c(out, '\n');
}

static void render_defrag_result(GString *out, const E4DefragSummary *s)
{
	g_string_append_printf(out, "files: %" G_GUINT64_FORMAT "\n", s->files_done);
	if (s->resumed)
		g_string_append_printf(out, "resumed: %" G_GUINT64_FORMAT "\n", s->resumed);
	for (int o = 0; o < E4_OUTCOME__COUNT; o++)
		g_string_append_printf(out, "%s: %" G_GUINT64_FORMAT "\n", e4_outcome_name((E4Outcome)o),
				       s->outcomes[o]);
	for (int k = 0; k < E4_DSKIP__COUNT; k++)
		if (s->skips[k])
			g_string_append_printf(out, "skipped_%s: %" G_GUINT64_FORMAT "\n",
					       e4_defrag_skip_name((E4DefragSkip)k), s->skips[k]);
	g_string_append_printf(out, "retried: %" G_GUINT64_FORMAT "\nruns_before: %" G_GUINT64_FORMAT
			       "\nruns_after: %" G_GUINT64_FORMAT "\nbytes_moved: %" G_GUINT64_FORMAT
			       "\nroom_bytes_moved: %" G_GUINT64_FORMAT "\nroom_files_moved: %" G_GUINT64_FORMAT
			       "\nroom_gave_way: %" G_GUINT64_FORMAT "\nseconds: ",
			       s->retried, s->runs_before, s->runs_after, s->bytes_moved, s->room_bytes_moved,
			       s->room_files_moved, s->room_gave_way);
	append_real(out, s->seconds, 3);
	g_string_append_c(out, '\n');
	if (s->first_error)
		g_string_append_printf(out, "error: %s\n", g_strerror(s->first_error));
}

/* What a job stopped by its deadline left for the next one. */
static void render_defrag_left(GString *out, const E4DefragSummary *s)
{
	g_string_append_printf(out, "files_done: %" G_GUINT64_FORMAT "\nfiles_total: %" G_GUINT64_FORMAT
			       "\nbytes_left: %" G_GUINT64_FORMAT "\n", s->files_done, s->files_total,
			       s->bytes_total > s->bytes_done ? s->bytes_total - s->bytes_done : 0);
}

char *e4_render_defrag_status(const char *state, const E4DefragSummary *sum, const char *current,
			      bool running)
{
	GString *out = g_string_new(NULL);
	g_string_append_printf(out, "state: %s\n", state);
	if (sum && running)
		render_defrag_progress(out, sum, current);
	else if (sum)
		render_defrag_result(out, sum);
	if (sum && !running && strcmp(state, "stopped") == 0)
		render_defrag_left(out, sum);
	return g_string_free(out, FALSE);
}

/* e2freefrag's bucket bound: 2^(i-1) blocks in K, M, G... */
static void append_size(GString *out, uint64_t kib)
{
	static const char units[] = "KMGTPE";
	int u = 0;
	while (kib >= 1024 && kib % 1024 == 0 && u < 5) {
		kib /= 1024;
		u++;
	}
	g_string_append_printf(out, "%" G_GUINT64_FORMAT "%c", kib, units[u]);
}

char *e4_render_freespace(const E4FreeSpace *fs)
{
	uint64_t kib = fs->block_size / 1024;
	uint64_t avg = fs->extents ? fs->free_blocks / fs->extents * kib : 0;
	GString *out = g_string_new(NULL);
	g_string_append_printf(out, "block_size: %u\ntotal_free_blocks: %" G_GUINT64_FORMAT
			       "\nfree_extents: %" G_GUINT64_FORMAT "\nmin_free_extent_kib: %" G_GUINT64_FORMAT
			       "\nmax_free_extent_kib: %" G_GUINT64_FORMAT "\navg_free_extent_kib: %" G_GUINT64_FORMAT
			       "\n# extent_size_range free_extents free_blocks percent\n",
			       fs->block_size, fs->free_blocks, fs->extents, fs->min_blocks * kib,
			       fs->max_blocks * kib, avg);
	for (int i = 1; i < E4_FREE_BUCKETS; i++) {
		if (!fs->bucket_extents[i])
			continue;
		append_size(out, (1ull << (i - 1)) * kib);
		g_string_append_c(out, '-');
		if (i == E4_FREE_BUCKETS - 1)
			g_string_append(out, "max");
		else
			append_size(out, (1ull << i) * kib);
		g_string_append_printf(out, " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " ",
				       fs->bucket_extents[i], fs->bucket_blocks[i]);
		append_real(out, fs->free_blocks ? (double)fs->bucket_blocks[i] * 100.0 / (double)fs->free_blocks : 0, 2);
		g_string_append_c(out, '\n');
	}
	return g_string_free(out, FALSE);
}

char *e4_render_freespace_unavailable(int err, uint32_t block_size, uint64_t free_blocks)
{
	return g_strdup_printf("available: no\nreason: the kernel refused FS_IOC_GETFSMAP to this "
			       "daemon (%s): run it as root for the free-space map\n"
			       "block_size: %u\ntotal_free_blocks: %" G_GUINT64_FORMAT "\n",
			       err == EACCES ? "EACCES" : "EPERM", block_size, free_blocks);
}

/* A Prometheus label value: the one-line name token, with '\\' and '"'
 * escaped as the exposition format wants. */
static void append_label(GString *out, const char *value)
{
	g_autoptr(GString) text = g_string_new(NULL);
	e4_escape_text(text, value);
	for (const char *p = text->str; *p; p++) {
		if (*p == '\\' || *p == '"')
			g_string_append_c(out, '\\');
		g_string_append_c(out, *p);
	}
}

static void metric_head(GString *out, const char *name, const char *type, const char *help)
{
	g_string_append_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

typedef double (*SummaryFigure)(const E4Summary *s);

static double fig_score(const E4Summary *s) { return e4_summary_score(s); }
static double fig_files(const E4Summary *s) { return (double)s->files; }
static double fig_runs(const E4Summary *s) { return (double)s->runs; }
static double fig_layout(const E4Summary *s) { return e4_summary_layout_score(s); }
static double fig_fragmented(const E4Summary *s) { return (double)s->fragmented; }

static void metric_per_dir(GString *out, const E4Metrics *m, const char *name, const char *help,
			   SummaryFigure fig)
{
	metric_head(out, name, "gauge", help);
	for (size_t i = 0; i < m->ndirs; i++) {
		g_string_append_printf(out, "%s{source=\"", name);
		append_label(out, m->source);
		g_string_append(out, "\",dir=\"");
		append_label(out, m->dirs[i].dir);
		g_string_append(out, "\"} ");
		append_real(out, fig(&m->dirs[i].sum), fig == fig_layout ? 4 : 0);
		g_string_append_c(out, '\n');
	}
}

static void metric_value(GString *out, const char *name, const char *type, const char *help,
			 uint64_t v)
{
	metric_head(out, name, type, help);
	g_string_append_printf(out, "%s %" G_GUINT64_FORMAT "\n", name, v);
}

static void metric_counter(GString *out, const char *name, const char *help, uint64_t v)
{
	metric_value(out, name, "counter", help, v);
}

/* A sample in seconds, to the millisecond. */
static void metric_real(GString *out, const char *name, const char *type, const char *help, double v)
{
	metric_head(out, name, type, help);
	g_string_append_printf(out, "%s ", name);
	append_real(out, v, 3);
	g_string_append_c(out, '\n');
}

static void metric_seconds(GString *out, const char *name, const char *help, double v)
{
	metric_real(out, name, "counter", help, v);
}

/* Automatic defragmentation: whether it is on, and when it is, what it did. */
static void metrics_auto(GString *out, const E4AutoCounters *a)
{
	metric_value(out, "e4infofs_autodefrag_enabled", "gauge", "Automatic defragmentation is on (1) or off (0).",
		     a->enabled);
	if (!a->enabled)
		return;
	metric_value(out, "e4infofs_autodefrag_queue", "gauge", "Files written lately, waiting to be quiet.",
		     a->queue);
	metric_counter(out, "e4infofs_autodefrag_dropped_total", "Writes not noted: the candidate set was full.",
		       a->dropped);
	metric_counter(out, "e4infofs_autodefrag_checked_total", "Quiet files examined.", a->checked);
	metric_counter(out, "e4infofs_autodefrag_files_total", "Files moved into fewer runs.", a->files);
	metric_counter(out, "e4infofs_autodefrag_bytes_moved_total", "Bytes moved by automatic defragmentation.",
		       a->bytes_moved);
	metric_counter(out, "e4infofs_autodefrag_runs_before_total", "Physical runs of the moved files before.",
		       a->runs_before);
	metric_counter(out, "e4infofs_autodefrag_runs_after_total", "Physical runs of the moved files after.",
		       a->runs_after);
	metric_head(out, "e4infofs_autodefrag_skipped_total", "counter", "Quiet files not moved, per reason.");
	for (int r = 0; r < E4_AUTO_SKIP__COUNT; r++)
		g_string_append_printf(out, "e4infofs_autodefrag_skipped_total{reason=\"%s\"} %" G_GUINT64_FORMAT "\n",
				       e4_auto_skip_name((E4AutoSkip)r), a->skipped[r]);
	metric_seconds(out, "e4infofs_autodefrag_seconds_total", "Seconds spent examining and moving files.",
		       a->seconds);
}

char *e4_render_metrics(const E4Metrics *m)
{
	GString *out = g_string_new(NULL);
	metric_per_dir(out, m, "e4infofs_score", "e4defrag -c compatible score, 0-100.", fig_score);
	metric_per_dir(out, m, "e4infofs_files", "Regular files.", fig_files);
	metric_per_dir(out, m, "e4infofs_runs", "Physical runs (filefrag's extents).", fig_runs);
	metric_per_dir(out, m, "e4infofs_layout_score", "Layout score, 1 is contiguous.", fig_layout);
	metric_per_dir(out, m, "e4infofs_fragmented_files", "Files with more runs than their ideal.",
		       fig_fragmented);
	metric_counter(out, "e4infofs_scans_total", "Subtree and directory scans served.", m->tree.scans);
	metric_counter(out, "e4infofs_inspections_total",
		       "Files inspected (opened and mapped with FIEMAP, or read from the inode tables).",
		       m->tree.inspections);
	metric_counter(out, "e4infofs_raw_inspections_total",
		       "Of the inspections, files read from the inode tables in the device's page cache.",
		       m->tree.raw_inspections);
	metric_counter(out, "e4infofs_revalidations_total", "Cached files re-checked with a stat.",
		       m->tree.revalidations);
	metric_counter(out, "e4infofs_dir_opens_total",
		       "Subdirectories opened by scans to be checked (a settled subtree is not).",
		       m->tree.dir_opens);
	metric_counter(out, "e4infofs_dirs_listed_total", "Directories read (first time, or changed since).",
		       m->tree.dirs_listed);
	metric_value(out, "e4infofs_scan_running", "gauge",
		     "A scan is under way (1): a first read of a large tree; the three below are its progress.",
		     m->tree.scan_running);
	metric_real(out, "e4infofs_scan_elapsed_seconds", "gauge", "Seconds since the scan under way started.",
		    m->tree.scan_seconds);
	metric_value(out, "e4infofs_scan_files", "gauge", "Files the scan under way has inspected so far.",
		     m->tree.scan_files);
	metric_value(out, "e4infofs_scan_dirs", "gauge", "Directories the scan under way has read so far.",
		     m->tree.scan_dirs);
	metric_value(out, "e4infofs_cache_bytes", "gauge",
		     "Bytes the cached records take (names, side records and aggregates included).",
		     m->tree.cache_bytes);
	metric_counter(out, "e4infofs_cache_dirs_dropped_total",
		       "Directory records dropped to keep the cache within cache_mib.", m->tree.dirs_dropped);
	metric_counter(out, "e4infofs_watch_events_total",
		       "Change events read from the filesystem's fanotify watch.", m->tree.watch_events);
	metric_value(out, "e4infofs_nodes", "gauge",
		     "Directories and files the kernel holds looked up through the mount.", m->nodes);
	metric_counter(out, "e4infofs_defrag_jobs_total", "Defragmentation jobs finished.", m->jobs);
	metric_head(out, "e4infofs_defrag_files_total", "counter", "Files of finished jobs per outcome.");
	for (int o = 0; o < E4_OUTCOME__COUNT; o++)
		g_string_append_printf(out, "e4infofs_defrag_files_total{outcome=\"%s\"} %" G_GUINT64_FORMAT "\n",
				       e4_outcome_name((E4Outcome)o), m->defrag.outcomes[o]);
	metric_counter(out, "e4infofs_defrag_bytes_moved_total", "Bytes moved by defragmentation.",
		       m->defrag.bytes_moved);
	metric_seconds(out, "e4infofs_defrag_seconds_total", "Seconds spent in defragmentation jobs.",
		       m->defrag.seconds);
	metrics_auto(out, &m->autod);
	return g_string_free(out, FALSE);
}

char *e4_render_plan(const E4Plan *p, const E4PlanTime *t, bool make_room)
{
	GString *out = g_string_new(NULL);
	g_string_append_printf(out,
			       "files: %" G_GUINT64_FORMAT "\nbytes: %" G_GUINT64_FORMAT "\nblocks: %" G_GUINT64_FORMAT
			       "\nruns_now: %" G_GUINT64_FORMAT "\nruns_expected: %" G_GUINT64_FORMAT
			       "\nruns_ideal: %" G_GUINT64_FORMAT "\nno_gain_files: %" G_GUINT64_FORMAT
			       "\nroom_needed: %s\nroom_files: %" G_GUINT64_FORMAT "\nmake_room: %d"
			       "\nskipped_excluded: %" G_GUINT64_FORMAT "\nfree_map: %s\nfree_blocks: %" G_GUINT64_FORMAT
			       "\nfree_extents: %" G_GUINT64_FORMAT "\nrate_mibps: ",
			       p->files, p->bytes, p->blocks, p->runs_now, p->runs_expected, p->runs_ideal,
			       p->no_gain, p->room_files ? "yes" : "no", p->room_files, make_room,
			       p->skipped_excluded, p->free_known ? "yes" : "no", p->free_blocks, p->free_extents);
	append_real(out, t->mibps, 1);
	g_string_append_printf(out, "\nrate_source: %s\ncost_jobs: %zu\ncost_scope: %s\nroom_bytes_expected: %" G_GUINT64_FORMAT
			       "\nseconds_expected: ", t->source, t->jobs, t->scope ? t->scope : "-", t->room_bytes);
	append_real(out, t->seconds, 3);
	g_string_append_c(out, '\n');
	return g_string_free(out, FALSE);
}
