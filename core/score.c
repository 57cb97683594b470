#include "score.h"

#include <math.h>

static const char *const skip_names[E4_SKIP__COUNT] = {
	[E4_SKIP_EMPTY] = "empty",
	[E4_SKIP_NO_EXTENTS] = "no-extents",
	[E4_SKIP_UNREADABLE] = "unreadable",
	[E4_SKIP_NO_FIEMAP] = "no-fiemap",
};

const char *e4_skip_reason_name(E4SkipReason reason)
{
	return reason < E4_SKIP__COUNT ? skip_names[reason] : "unknown";
}

void e4_summary_add(E4Summary *s, const E4FileFigures *fig)
{
	s->files++;
	s->analysed++;
	s->fragmented += e4_figures_fragmented(fig);
	s->bytes += fig->size;
	s->blocks += fig->blocks;
	s->records += fig->records;
	s->runs += fig->runs;
	s->best += fig->best;
	s->ideal += fig->ideal;
	s->holes += fig->holes;
	s->unwritten_blocks += fig->unwritten_blocks;
	if (fig->blocks >= 2) {
		s->ls_extra_runs += fig->runs ? fig->runs - 1 : 0;
		s->ls_extra_blocks += fig->blocks - 1;
	}
}

void e4_dirloc_add(E4DirLoc *d, const E4FileFigures *fig)
{
	if (fig->blocks == 0)
		return;
	uint64_t within = fig->runs ? fig->runs - 1 : 0;
	bool follows = d->blocks == 0 || fig->first_block == d->end;
	d->jumps += within + !follows;
	d->blocks += fig->blocks;
	d->end = fig->end_block;
}

void e4_summary_add_dirloc(E4Summary *s, const E4DirLoc *d)
{
	s->dl_jumps += d->jumps;
	s->dl_blocks += d->blocks;
}

double e4_summary_dir_locality(const E4Summary *s)
{
	if (s->dl_blocks == 0)
		return 1.0;
	return 1.0 - (double)s->dl_jumps / (double)s->dl_blocks;
}

void e4_summary_skip(E4Summary *s, E4SkipReason reason)
{
	s->files++;
	if (reason < E4_SKIP__COUNT)
		s->skipped[reason]++;
}

void e4_summary_merge(E4Summary *dst, const E4Summary *src)
{
	/* Every field is a counter: add them pairwise. */
	const uint64_t *from = (const uint64_t *)src;
	uint64_t *to = (uint64_t *)dst;
	for (size_t i = 0; i < sizeof(E4Summary) / sizeof(uint64_t); i++)
		to[i] += from[i];
}

uint64_t e4_summary_skipped_total(const E4Summary *s)
{
	uint64_t n = 0;
	for (int i = 0; i < E4_SKIP__COUNT; i++)
		n += s->skipped[i];
	return n;
}

double e4_summary_ratio(const E4Summary *s)
{
	if (s->blocks == 0)
		return 0;
	return ((double)s->records - (double)s->best) * 100.0 / (double)s->blocks;
}

int e4_score_from_ratio(double ratio)
{
	double score = ratio > 10 ? 80 + 20 * ratio / 100 : 8 * ratio;
	/* e4defrag prints with %.0f; rint rounds the same way (to even). */
	score = rint(score);
	if (score < 0)
		return 0;
	return score > 100 ? 100 : (int)score;
}

int e4_summary_score(const E4Summary *s)
{
	return e4_score_from_ratio(e4_summary_ratio(s));
}

const char *e4_score_verdict(int score)
{
	if (score <= 30)
		return "no problem";
	if (score <= 55)
		return "a little bit fragmented";
	return "needs defrag";
}

double e4_summary_layout_score(const E4Summary *s)
{
	if (s->ls_extra_blocks == 0)
		return 1.0;
	return 1.0 - (double)s->ls_extra_runs / (double)s->ls_extra_blocks;
}

double e4_summary_mean_run_kib(const E4Summary *s, uint32_t block_size)
{
	if (s->runs == 0)
		return 0;
	return (double)s->blocks * block_size / 1024.0 / (double)s->runs;
}
