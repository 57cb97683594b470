/* The text of the attribute files, generated from figures. Pure: no I/O.
 * Every function returns a newly allocated, newline-terminated string. */
#pragma once

#include <time.h>
#include <glib.h>

#include "fiemap.h"
#include "figures.h"
#include "score.h"
#include "top.h"
#include "tree.h"

/* "N\n": e4defrag's score of the summary. */
char *e4_render_score(const E4Summary *sum);

/* `key: value` lines; block_size in bytes, seconds the scan's wall time,
 * when its end. Keys are those of e4_render_stats_json. */
char *e4_render_stats(const E4Summary *sum, uint32_t block_size, double seconds, time_t when);

/* The same figures as one JSON object on one line. */
char *e4_render_stats_json(const E4Summary *sum, uint32_t block_size, double seconds, time_t when);

/* The most fragmented files: a header, then one line each:
 * rank, runs/best, size in bytes, mean run in KiB, e4defrag's ranking ratio
 * and the escaped path. */
char *e4_render_report(const E4Top *top, uint32_t block_size);

/* A file's extent map: a header, one line per FIEMAP record (index, logical
 * block, physical block, length in blocks, flag names), then "runs: N". */
char *e4_render_file_extents(const E4ExtentMap *map, const E4FileFigures *fig,
			     uint32_t block_size);

/* A directory's files: the header, then e4_render_dir_extents_add per file. */
GString *e4_render_dir_extents_begin(void);
void e4_render_dir_extents_add(GString *out, const E4TreeFile *file);

#include "defragtree.h"

/* The `defrag` file: "state: STATE" then, when running, progress
 * (files and bytes done/total, percent, current file), else the result
 * (counts per outcome and skip reason, runs before/after, bytes moved,
 * seconds, first error); a job "stopped" by its deadline adds what it
 * left (files_done, files_total, bytes_left). */
char *e4_render_defrag_status(const char *state, const E4DefragSummary *sum, const char *current,
			      bool running);

#include "freespace.h"

/* The `freespace` file: e2freefrag's figures as `key: value` lines
 * (sizes in KiB, rounded as e2freefrag does), then its histogram. */
char *e4_render_freespace(const E4FreeSpace *fs);

/* The `freespace` file when the map cannot be read for want of privilege
 * (err: EPERM or EACCES from GETFSMAP): `available: no`, the reason, and
 * what statfs still tells (free blocks, block_size bytes). */
char *e4_render_freespace_unavailable(int err, uint32_t block_size, uint64_t free_blocks);

#include "autoq.h"

/* One labelled set of figures in `metrics`. */
typedef struct {
	const char *dir;        /* "." for the whole mount, else a top-level name */
	E4Summary sum;
} E4MetricsDir;

typedef struct {
	const char *source;
	const E4MetricsDir *dirs;
	size_t ndirs;
	E4TreeCounters tree;
	uint64_t nodes;         /* objects looked up by the kernel, held by the daemon */
	uint64_t jobs;          /* defrag jobs finished */
	E4DefragSummary defrag; /* their files per outcome, bytes moved, seconds */
	E4AutoCounters autod;   /* automatic defragmentation (enabled false: off) */
} E4Metrics;

/* The `metrics` file: Prometheus text exposition format. */
char *e4_render_metrics(const E4Metrics *m);

#include "plan.h"

/* The `plan` file: what a job would do now (plan), how long it would
 * take (time), and whether the job may make room. */
char *e4_render_plan(const E4Plan *plan, const E4PlanTime *time, bool make_room);
