#include "trigger.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#define MAX_WRITE 64

typedef enum { KEY_SECONDS, KEY_MIBPS, KEY_MIN_RUNS, KEY_HOLD_MIB, KEY__COUNT } Key;

static const char *const key_names[KEY__COUNT] = { "seconds", "mibps", "min_runs", "hold_mib" };

/* Integer keys and their largest value (hold_mib: 1 TiB). */
static double integer_max(int k)
{
	return k == KEY_MIN_RUNS ? UINT32_MAX : k == KEY_HOLD_MIB ? 1048576 : 0;
}

static int key_of(const char *key, size_t klen)
{
	for (int k = 0; k < KEY__COUNT; k++)
		if (klen == strlen(key_names[k]) && memcmp(key, key_names[k], klen) == 0)
			return k;
	return -1;
}

/* Digits, with at most one '.' and a digit somewhere: strtod alone would
 * also take signs, blanks, exponents, hex, inf and nan. */
static bool is_decimal(const char *v, size_t n, bool fraction)
{
	bool digit = false, dot = false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] >= '0' && v[i] <= '9')
			digit = true;
		else if (v[i] == '.' && fraction && !dot)
			dot = true;
		else
			return false;
	}
	return digit;
}

/* The value as a double in (0, max], or -1. */
static double positive(const char *v, size_t n, bool fraction, double max)
{
	char text[MAX_WRITE + 1];
	if (n > MAX_WRITE || !is_decimal(v, n, fraction))
		return -1;
	memcpy(text, v, n);
	text[n] = '\0';
	double x = g_ascii_strtod(text, NULL);
	return isfinite(x) && x > 0 && x <= max ? x : -1;
}

int e4_job_limit_set(E4JobLimits *limits, const char *key, size_t klen, const char *value, size_t vlen,
		     char *why, size_t whylen)
{
	int k = key_of(key, klen);
	if (k < 0) {
		snprintf(why, whylen, "unknown option (keys: seconds, mibps, min_runs, hold_mib)");
		return -EINVAL;
	}
	double imax = integer_max(k);
	double x = imax > 0 ? positive(value, vlen, false, imax) : positive(value, vlen, true, E4_JOB_LIMIT_MAX);
	if (x < 0 && imax > 0) {
		snprintf(why, whylen, "%s: not an integer from 1 to %.0f", key_names[k], imax);
		return -EINVAL;
	}
	if (x < 0) {
		snprintf(why, whylen, "%s: not a positive decimal number up to 1000000000", key_names[k]);
		return -EINVAL;
	}
	if (k == KEY_SECONDS)
		limits->seconds = x;
	else if (k == KEY_MIBPS)
		limits->mibps = x;
	else if (k == KEY_MIN_RUNS)
		limits->min_runs = (uint32_t)x;
	else
		limits->hold_mib = (uint32_t)x;
	return 0;
}

void e4_job_limits_override(E4JobLimits *dst, const E4JobLimits *over)
{
	if (over->seconds > 0)
		dst->seconds = over->seconds;
	if (over->mibps > 0)
		dst->mibps = over->mibps;
	if (over->min_runs > 0)
		dst->min_runs = over->min_runs;
	if (over->hold_mib > 0)
		dst->hold_mib = over->hold_mib;
}

static E4Trigger word_of(const char *w, size_t n)
{
	static const struct {
		const char *word;
		E4Trigger t;
	} words[] = { { "1", E4_TRIGGER_START }, { "start", E4_TRIGGER_START },
		      { "pack", E4_TRIGGER_PACK }, { "compact", E4_TRIGGER_COMPACT }, { "0", E4_TRIGGER_CANCEL },
		      { "cancel", E4_TRIGGER_CANCEL } };
	for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
		if (n == strlen(words[i].word) && memcmp(w, words[i].word, n) == 0)
			return words[i].t;
	return E4_TRIGGER_INVALID;
}

static E4Trigger invalid(E4TriggerCmd *cmd, const char *why)
{
	cmd->word = E4_TRIGGER_INVALID;
	cmd->limits = (E4JobLimits){ 0 };
	if (why)
		snprintf(cmd->why, sizeof(cmd->why), "%s", why);
	return E4_TRIGGER_INVALID;
}

/* One "KEY=VALUE" token into cmd->limits, counted in seen (a bit per
 * key): false with cmd->why set when it is refused. */
static bool parse_option(E4TriggerCmd *cmd, const char *tok, size_t n, unsigned *seen)
{
	const char *eq = memchr(tok, '=', n);
	if (!eq) {
		snprintf(cmd->why, sizeof(cmd->why), "an option is KEY=VALUE");
		return false;
	}
	size_t klen = (size_t)(eq - tok);
	int k = key_of(tok, klen);
	if (k >= 0 && (*seen & (1u << k))) {
		snprintf(cmd->why, sizeof(cmd->why), "%s given twice", key_names[k]);
		return false;
	}
	if (e4_job_limit_set(&cmd->limits, tok, klen, eq + 1, n - klen - 1, cmd->why, sizeof(cmd->why)) < 0)
		return false;
	*seen |= 1u << k;
	return true;
}

E4Trigger e4_trigger_parse(const char *buf, size_t size, off_t off, E4TriggerCmd *cmd)
{
	*cmd = (E4TriggerCmd){ .word = E4_TRIGGER_INVALID };
	if (size > MAX_WRITE)
		return invalid(cmd, "more than 64 bytes");
	if (off < 0)
		return invalid(cmd, "negative offset");
	if (size > 0 && buf[size - 1] == '\n')
		size--;
	if (off != 0) {
		if (size != 0)
			return invalid(cmd, "written at an offset: write the whole line at once");
		cmd->word = E4_TRIGGER_NOTHING;
		return cmd->word;
	}
	const char *end = buf + size, *p = buf;
	const char *sp = memchr(p, ' ', size);
	const char *wend = sp ? sp : end;
	E4Trigger word = word_of(p, (size_t)(wend - p));
	if (word == E4_TRIGGER_INVALID)
		return invalid(cmd, "unknown word (1, start, pack, compact, 0, cancel)");
	unsigned seen = 0;
	for (p = wend; p < end;) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			return invalid(cmd, "a blank at the end");
		if (word == E4_TRIGGER_CANCEL)
			return invalid(cmd, "a cancel takes no options");
		const char *tend = memchr(p, ' ', (size_t)(end - p));
		if (!tend)
			tend = end;
		if (!parse_option(cmd, p, (size_t)(tend - p), &seen))
			return invalid(cmd, NULL);
		p = tend;
	}
	cmd->word = word;
	return word;
}
