/* The N most fragmented files of a set, ranked as e4defrag -c ranks them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "figures.h"

typedef struct {
	char *path;         /* relative to the scanned directory */
	double rank;        /* e4_figures_rank() */
	E4FileFigures fig;
} E4TopEntry;

typedef struct {
	E4TopEntry *v;      /* best rank first */
	size_t n, cap;      /* cap: how many to keep */
} E4Top;

/* An empty list keeping at most cap entries. */
void e4_top_init(E4Top *top, size_t cap);

/* True when a file of this rank would enter the list. Only ranks > 0
 * (more physical runs than e4defrag's best) ever enter. */
bool e4_top_wants(const E4Top *top, double rank);

/* Inserts a file (path is copied). Ties go before earlier entries, as in
 * e4defrag, so the result does not depend on anything but visit order. */
void e4_top_offer(E4Top *top, const char *path, const E4FileFigures *fig);

void e4_top_clear(E4Top *top);
