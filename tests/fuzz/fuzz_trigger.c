/* libFuzzer: the trigger parser takes any bytes at any offset. Checks
 * that only the known words act, that whatever is accepted is within
 * bounds, and that parsing is deterministic. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trigger.h"

static void check_limits(const E4JobLimits *l)
{
	if (l->seconds != 0 && !(isfinite(l->seconds) && l->seconds > 0 && l->seconds <= E4_JOB_LIMIT_MAX))
		abort();
	if (l->mibps != 0 && !(isfinite(l->mibps) && l->mibps > 0 && l->mibps <= E4_JOB_LIMIT_MAX))
		abort();
	if (l->hold_mib > 1048576)
		abort();
}

static bool same(const E4TriggerCmd *a, const E4TriggerCmd *b)
{
	return a->word == b->word && a->limits.seconds == b->limits.seconds &&
	       a->limits.mibps == b->limits.mibps && a->limits.min_runs == b->limits.min_runs &&
	       a->limits.hold_mib == b->limits.hold_mib &&
	       strcmp(a->why, b->why) == 0;
}

/* The word an accepted line starts with: one of the five. */
static void check_word(const char *buf, size_t len, E4Trigger t)
{
	const char *sp = memchr(buf, ' ', len);
	size_t n = sp ? (size_t)(sp - buf) : len;
	if (!sp && n && buf[n - 1] == '\n')
		n--;
	char word[8] = {0};
	if (n == 0 || n > 6)
		abort();
	memcpy(word, buf, n);
	bool start = !strcmp(word, "1") || !strcmp(word, "start"), cancel = !strcmp(word, "0") || !strcmp(word, "cancel");
	if ((t == E4_TRIGGER_START && !start) || (t == E4_TRIGGER_CANCEL && !cancel) ||
	    (t == E4_TRIGGER_PACK && strcmp(word, "pack")))
		abort();
	if (t == E4_TRIGGER_CANCEL && sp)
		abort(); /* a cancel takes no options */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte picks the write offset: 0, 1, or a large one. */
	off_t off = size ? (off_t)(data[0] % 3 == 2 ? 1 << 20 : data[0] % 3) : 0;
	const char *buf = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0;
	E4TriggerCmd cmd, again;
	E4Trigger t = e4_trigger_parse(buf, len, off, &cmd);
	if (t != cmd.word)
		abort();
	e4_trigger_parse(buf, len, off, &again);
	if (!same(&cmd, &again))
		abort();
	check_limits(&cmd.limits);
	if (t == E4_TRIGGER_INVALID) {
		if (!cmd.why[0] || cmd.limits.seconds != 0 || cmd.limits.mibps != 0 || cmd.limits.min_runs != 0 ||
		    cmd.limits.hold_mib != 0)
			abort();
		return 0;
	}
	if (t == E4_TRIGGER_NOTHING) {
		if (off == 0)
			abort();
		return 0;
	}
	/* START, PACK, CANCEL: only at offset 0, never over 64 bytes. */
	if (off != 0 || len == 0 || len > 64)
		abort();
	check_word(buf, len, t);
	/* The same line with its newline (when it had none) means the same. */
	if (buf[len - 1] != '\n' && len < 64) {
		char line[65];
		memcpy(line, buf, len);
		line[len] = '\n';
		e4_trigger_parse(line, len + 1, 0, &again);
		if (!same(&cmd, &again))
			abort();
	}
	return 0;
}
