/* What a `defrag` trigger file accepts: a word, then job options. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum {
	E4_TRIGGER_START,
	E4_TRIGGER_PACK,
	E4_TRIGGER_COMPACT,
	E4_TRIGGER_CANCEL,
	E4_TRIGGER_NOTHING,
	E4_TRIGGER_INVALID
} E4Trigger;

/* The bounds of a job, from a trigger's options or the mount's defaults.
 * 0 in a field: not given. */
typedef struct {
	double seconds;    /* the job stops at the first chunk after this long (s) */
	double mibps;      /* MiB (2^20 bytes) moved per second, at most */
	uint32_t min_runs; /* files with fewer physical runs are left alone */
	uint32_t hold_mib; /* free space making room may hold at once (MiB) */
} E4JobLimits;

/* The largest seconds and mibps accepted: 10^9 (31 years; 1 PiB/s), so
 * that microseconds and bytes per second fit in 64 bits. */
#define E4_JOB_LIMIT_MAX 1e9

typedef struct {
	E4Trigger word;
	E4JobLimits limits; /* the options given (START and PACK only) */
	char why[96];       /* with E4_TRIGGER_INVALID: what was wrong, for a log line */
} E4TriggerCmd;

/* Parses the bytes of one write at byte offset off into *cmd and returns
 * cmd->word. At offset 0: a word, "1" or "start" (a defrag job), "pack"
 * (a packing job), "compact" (a compaction of free space), "0" or "cancel"; after a job's word, options
 * "KEY=VALUE" (see e4_job_limit_set), each once, everything separated by
 * spaces, no leading or trailing blank, one trailing newline allowed. A
 * lone newline at offset > 0 (the end of a line split across writes) is
 * nothing. Everything else is invalid, with the reason in cmd->why: an
 * unknown word or key, a bad value, a key given twice, an option after a
 * cancel, any write of more than 64 bytes, a non-zero offset. */
E4Trigger e4_trigger_parse(const char *buf, size_t size, off_t off, E4TriggerCmd *cmd);

/* Sets the limit named key ("seconds", "mibps", "min_runs") from the
 * value's vlen bytes: seconds and mibps are positive decimal numbers,
 * fractions allowed ("0.5", "30"; no sign, exponent, inf or nan, at most
 * E4_JOB_LIMIT_MAX), min_runs an integer from 1 to 2^32-1. Returns 0, or
 * -EINVAL with the reason in why (whylen bytes), limits unchanged.
 * Shared by the trigger and the mount's -o defrag_* options. */
int e4_job_limit_set(E4JobLimits *limits, const char *key, size_t klen, const char *value, size_t vlen,
		     char *why, size_t whylen);

/* dst's fields, each replaced by over's where over's is given. */
void e4_job_limits_override(E4JobLimits *dst, const E4JobLimits *over);
