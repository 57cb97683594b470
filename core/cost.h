/* What a defrag job costs on this machine, learnt from the jobs it ran:
 *
 *   seconds = per_job + files x per_file + bytes x per_byte + room_bytes x per_room_byte
 *
 * fitted to the last E4_COST_SAMPLES jobs by least squares of the relative
 * error (a 3 s job counts as much as a 300 s one), coefficients never
 * negative. Per-file work (open, FIEMAP, donor, fsync) dominates trees of
 * small files, per-byte work (the kernel's copy) large files, making
 * room (mapping the filesystem, moving others' blocks) costs more per byte
 * of the file it is made for than a move, and a job has fixed costs (the
 * walk's start, threads, syncfs) that dominate small jobs: one rate of
 * bytes per second was off by -94% to +459% on the benchmark corpora.
 * Pure, but for the state file's load and save. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One finished job. */
typedef struct {
	uint64_t files;       /* files a move was tried on */
	uint64_t bytes;       /* their bytes (a partly moved file: what was done) */
	uint64_t room_bytes;  /* bytes of the files room was made for (a
	                       * job's second move of them, after moving
	                       * others' blocks out of the way) */
	double seconds;       /* the job's wall time */
} E4CostSample;

#define E4_COST_SAMPLES 64

typedef struct E4CostModel {
	E4CostSample v[E4_COST_SAMPLES];
	size_t n;             /* samples held */
	size_t next;          /* where the next one goes once full (the oldest) */
} E4CostModel;

typedef struct {
	double per_job;       /* seconds */
	double per_file;      /* seconds */
	double per_byte;      /* seconds */
	double per_room_byte; /* seconds; per_byte when room_known is false */
	bool room_known;      /* some sample made room */
	size_t samples;
} E4CostFit;

/* Adds a sample, replacing the oldest once E4_COST_SAMPLES are held.
 * False (nothing added) when it says nothing: no seconds, or no work. */
bool e4_cost_add(E4CostModel *m, const E4CostSample *s);

/* Fits the model to m's samples. Returns 0, or -ENODATA without samples.
 * With fewer samples than terms the fit is the smallest (in terms scaled
 * to the samples) that explains them, which splits the time between the
 * terms: a guess that the next jobs correct. */
int e4_cost_fit(const E4CostModel *m, E4CostFit *out);

/* The seconds a job of this size is expected to take under f. */
double e4_cost_seconds(const E4CostFit *f, uint64_t files, uint64_t bytes, uint64_t room_bytes);

/* The state file's text (a header, one line per sample, oldest first). */
char *e4_cost_format(const E4CostModel *m);

/* Parses a state file (with its checksum line, statefile.h) into *m.
 * Returns 0 or -EBADMSG (nothing of it used). */
int e4_cost_parse(const char *text, size_t len, E4CostModel *m);

/* Saves m as name in dirfd atomically, or loads it: 0, -ENOENT (none),
 * -EBADMSG (damaged: *m left empty), or another -errno. */
int e4_cost_save(const E4CostModel *m, int dirfd, const char *name);
int e4_cost_load(int dirfd, const char *name, E4CostModel *m);
