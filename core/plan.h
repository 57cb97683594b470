/* What a defrag job would do now, without doing it: which files it would
 * move, and how many runs they would get from the free space as it is. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "defrag.h"
#include "figures.h"

typedef struct {
	uint64_t files;            /* files a job would try to move */
	uint64_t bytes;            /* their sizes */
	uint64_t blocks;           /* their mapped blocks */
	uint64_t runs_now;         /* their physical runs now */
	uint64_t runs_expected;    /* after the job, as the free space allows */
	uint64_t runs_ideal;       /* ceil(blocks / 32768) each */
	uint64_t no_gain;          /* of files: the free space cannot do better */
	uint64_t room_files;       /* of files: still above their ideal (a job
	                            * would make room for them when it may) */
	uint64_t retry_blocks;     /* mapped blocks of the files given a second
	                            * donor (moved twice, the job's second pass) */
	uint64_t room_blocks;      /* mapped blocks of those a job makes room
	                            * for (E4_ROOM_MIN_FILE_BLOCKS to
	                            * E4_ROOM_MAX_REGION_BLOCKS each) */
	uint64_t skipped_excluded; /* files left alone by their mark */
	uint64_t free_blocks, free_extents; /* the map the plan used */
	bool free_known;           /* false: no free-space map (runs_expected
	                            * then assumes every file gets its ideal) */
	char *largest;             /* path of the largest file to move, or NULL */
	uint64_t largest_blocks;
} E4Plan;

/* How long a job doing a plan is expected to take, and from what. */
typedef struct {
	double seconds;
	double mibps;              /* the plan's bytes over seconds, 0 unknown */
	const char *source;        /* "jobs" (cost.h, fitted to jobs run here),
	                            * "probe" (a read rate), "none" */
	const char *scope;         /* of "jobs": "filesystem" or "machine" */
	size_t jobs;               /* jobs the model was fitted to */
	uint64_t room_bytes;       /* bytes of the files room would be made for */
} E4PlanTime;

typedef struct E4Planner E4Planner;

/* A planner judging files with opts (e4_defrag_needed: min_runs,
 * good_kib), worst first or in walk order (large files first either way,
 * as a job orders them). */
E4Planner *e4_planner_new(const E4DefragOpts *opts, uint32_t block_size, bool worst_first);
void e4_planner_free(E4Planner *p);

/* Offers one file (each inode once, in walk order), at path (for
 * E4Plan.largest; may be NULL). fig NULL: not analysed (nothing to move). */
void e4_planner_add(E4Planner *p, const char *path, const E4FileFigures *fig, bool excluded);

/* Adds one free extent of the filesystem (e4_freespace_each). */
void e4_planner_free_extent(uint64_t start, uint64_t blocks, void *planner);

/* Allocates, on paper, each file's donor from the free extents given,
 * in the job's order: the whole donor from the smallest free extent that
 * holds it (best fit), else the largest extent and again for the rest;
 * a donor in no fewer runs than its file is not used (no-gain) and gives
 * its extents back. Then, as a job's second pass does, the blocks freed
 * by the files moved are added (those of one directory as one extent:
 * their places are not known, and files written together interleave),
 * and the files still above their ideal try once more, keeping a better
 * donor. known: whether free extents were
 * given (the map could be read). Fills out (e4_plan_clear). */
void e4_planner_finish(E4Planner *p, bool known, E4Plan *out);

void e4_plan_clear(E4Plan *plan);

/* The bytes per second an O_DIRECT read of up to max_bytes of the file
 * open as fd (O_RDONLY) took, or -errno. */
double e4_plan_probe_read(int fd, uint64_t max_bytes);
