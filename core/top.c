#include "top.h"

#include <glib.h>
#include <string.h>

void e4_top_init(E4Top *top, size_t cap)
{
	*top = (E4Top){ .cap = cap, .v = cap ? g_new0(E4TopEntry, cap) : NULL };
}

bool e4_top_wants(const E4Top *top, double rank)
{
	if (rank <= 0 || top->cap == 0)
		return false;
	return top->n < top->cap || rank >= top->v[top->n - 1].rank;
}

void e4_top_offer(E4Top *top, const char *path, const E4FileFigures *fig)
{
	double rank = e4_figures_rank(fig);
	if (!e4_top_wants(top, rank))
		return;
	size_t at = 0;
	while (at < top->n && rank < top->v[at].rank)
		at++;
	if (top->n == top->cap)
		g_free(top->v[--top->n].path);
	memmove(&top->v[at + 1], &top->v[at], (top->n - at) * sizeof(*top->v));
	top->v[at] = (E4TopEntry){ g_strdup(path), rank, *fig };
	top->n++;
}

void e4_top_clear(E4Top *top)
{
	for (size_t i = 0; i < top->n; i++)
		g_free(top->v[i].path);
	g_free(top->v);
	*top = (E4Top){0};
}
