/* Aggregated fragmentation figures of a set of files and the metrics
 * derived from them (e4defrag's score, layout score, mean run length). */
#pragma once

#include <stdint.h>

#include "figures.h"

/* Why a regular file was not analysed. */
typedef enum {
	E4_SKIP_EMPTY,       /* size 0, or no allocated block */
	E4_SKIP_NO_EXTENTS,  /* data but no mapped block (all holes, inline data) */
	E4_SKIP_UNREADABLE,  /* open() failed */
	E4_SKIP_NO_FIEMAP,   /* FIEMAP failed */
	E4_SKIP__COUNT
} E4SkipReason;

/* A short stable name ("empty", "no-extents", ...), for text and JSON. */
const char *e4_skip_reason_name(E4SkipReason reason);

typedef struct {
	uint64_t files;            /* regular files seen, each inode once */
	uint64_t analysed;         /* files whose extent map was read and scored */
	uint64_t fragmented;       /* analysed files with runs > ideal */
	uint64_t bytes;            /* st_size of analysed files */
	uint64_t blocks;           /* mapped blocks of analysed files */
	uint64_t records;          /* FIEMAP records (e4defrag's "now") */
	uint64_t runs;             /* physical runs (filefrag) */
	uint64_t best;             /* e4defrag's best */
	uint64_t ideal;
	uint64_t holes;
	uint64_t unwritten_blocks;
	uint64_t ls_extra_runs;    /* layout score: sum of (runs - 1) over files of >= 2 blocks */
	uint64_t ls_extra_blocks;  /* layout score: sum of (blocks - 1) over the same files */
	uint64_t dl_jumps;         /* directory locality: jumps summed over directories */
	uint64_t dl_blocks;        /* directory locality: blocks of the files walked */
	uint64_t skipped[E4_SKIP__COUNT];
} E4Summary;

/* Directory locality of one directory (a static form of the "dynamic
 * layout score" of Conway et al., FAST'17): its regular files read one
 * after another in readdir order, as tar, cp -r, find and rsync read
 * them, every file's physical runs in logical order. A jump is a run that
 * does not start at the block right after the previous run's last block;
 * the first run is none. Files without a mapped block are passed over. */
typedef struct {
	uint64_t jumps;
	uint64_t blocks;           /* mapped blocks of the files added */
	uint64_t end;              /* block after the last added file's last run */
} E4DirLoc;

/* Adds the directory's next file in readdir order. */
void e4_dirloc_add(E4DirLoc *d, const E4FileFigures *fig);

/* Adds one directory's locality (its jumps and blocks) to the summary. */
void e4_summary_add_dirloc(E4Summary *s, const E4DirLoc *d);

/* 1 - sum of jumps / sum of blocks over the directories added, in [0,1];
 * 1 when they hold no block. */
double e4_summary_dir_locality(const E4Summary *s);

/* Adds one analysed file. */
void e4_summary_add(E4Summary *s, const E4FileFigures *fig);

/* Counts a regular file that could not be analysed. */
void e4_summary_skip(E4Summary *s, E4SkipReason reason);

/* dst += src. */
void e4_summary_merge(E4Summary *dst, const E4Summary *src);

uint64_t e4_summary_skipped_total(const E4Summary *s);

/* e4defrag -c's ratio: (sum now - sum best) * 100 / sum blocks, in percent;
 * 0 when nothing was analysed. */
double e4_summary_ratio(const E4Summary *s);

/* e4defrag -c's score from its ratio (r > 10 ? 80 + r/5 : 8r), rounded to
 * the nearest integer as e4defrag prints it, clamped to 0..100. */
int e4_score_from_ratio(double ratio);

/* e4_score_from_ratio(e4_summary_ratio(s)). */
int e4_summary_score(const E4Summary *s);

/* e4defrag's band for a score: "no problem" (0-30), "a little bit
 * fragmented" (31-55), "needs defrag" (56-). */
const char *e4_score_verdict(int score);

/* Smith & Seltzer layout score in [0,1]; 1 when no file has 2+ blocks. */
double e4_summary_layout_score(const E4Summary *s);

/* Mean physical run length in KiB (bytes per run / 1024); 0 without runs. */
double e4_summary_mean_run_kib(const E4Summary *s, uint32_t block_size);
