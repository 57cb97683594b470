#include "cost.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>

#include "statefile.h"

#define MAGIC "e4infofs-costs 1\n"
#define TERMS 4
/* Pulls an underdetermined fit towards the smallest coefficients (in
 * scaled terms) without moving a determined one measurably. */
#define RIDGE 1e-6
/* Fits whose residuals differ by less than this per sample are equal:
 * the one with more terms is kept (it splits the time between them). */
#define TIE 1e-9

bool e4_cost_add(E4CostModel *m, const E4CostSample *s)
{
	if (!(s->seconds > 0) || !isfinite(s->seconds) || (s->files == 0 && s->bytes == 0 && s->room_bytes == 0))
		return false;
	if (m->n < E4_COST_SAMPLES) {
		m->v[m->n++] = *s;
		return true;
	}
	m->v[m->next] = *s;
	m->next = (m->next + 1) % E4_COST_SAMPLES;
	return true;
}

static void terms(const E4CostSample *s, double x[TERMS])
{
	x[0] = 1 / s->seconds;
	x[1] = (double)s->files / s->seconds;
	x[2] = (double)s->bytes / s->seconds;
	x[3] = (double)s->room_bytes / s->seconds;
}

/* Solves a x = b for k unknowns (partial pivoting); false when singular. */
static bool solve(double a[TERMS][TERMS], double b[TERMS], int k, double x[TERMS])
{
	for (int c = 0; c < k; c++) {
		int p = c;
		for (int r = c + 1; r < k; r++)
			if (fabs(a[r][c]) > fabs(a[p][c]))
				p = r;
		if (fabs(a[p][c]) < 1e-300)
			return false;
		for (int j = 0; j < k; j++) {
			double t = a[c][j];
			a[c][j] = a[p][j];
			a[p][j] = t;
		}
		double t = b[c];
		b[c] = b[p];
		b[p] = t;
		for (int r = c + 1; r < k; r++) {
			double f = a[r][c] / a[c][c];
			for (int j = c; j < k; j++)
				a[r][j] -= f * a[c][j];
			b[r] -= f * b[c];
		}
	}
	for (int c = k - 1; c >= 0; c--) {
		double s = b[c];
		for (int j = c + 1; j < k; j++)
			s -= a[c][j] * x[j];
		x[c] = s / a[c][c];
	}
	return true;
}

typedef struct {
	const E4CostModel *m;
	double scale[TERMS]; /* each term's largest value: terms in [0, 1] */
} Fit;

static void scaled(const Fit *f, size_t i, double z[TERMS])
{
	terms(&f->m->v[i], z);
	for (int j = 0; j < TERMS; j++)
		z[j] = f->scale[j] > 0 ? z[j] / f->scale[j] : 0;
}

/* Fits the terms in mask: their scaled coefficients in c (others 0) and
 * the sum of squared relative errors, or -1 when no fit of them is valid
 * (singular, or a negative coefficient). */
static double fit_subset(const Fit *f, unsigned mask, double c[TERMS])
{
	int idx[TERMS], k = 0;
	for (int j = 0; j < TERMS; j++)
		if (mask & (1u << j))
			idx[k++] = j;
	double a[TERMS][TERMS] = {{0}}, b[TERMS] = {0}, x[TERMS] = {0};
	for (size_t i = 0; i < f->m->n; i++) {
		double z[TERMS];
		scaled(f, i, z);
		for (int r = 0; r < k; r++) {
			b[r] += z[idx[r]];
			for (int s = 0; s < k; s++)
				a[r][s] += z[idx[r]] * z[idx[s]];
		}
	}
	for (int r = 0; r < k; r++)
		a[r][r] += RIDGE * (double)f->m->n;
	if (!solve(a, b, k, x))
		return -1;
	memset(c, 0, sizeof(double) * TERMS);
	for (int r = 0; r < k; r++) {
		if (x[r] < 0 || !isfinite(x[r]))
			return -1;
		c[idx[r]] = x[r];
	}
	double res = 0;
	for (size_t i = 0; i < f->m->n; i++) {
		double z[TERMS], e = -1;
		scaled(f, i, z);
		for (int j = 0; j < TERMS; j++)
			e += z[j] * c[j];
		res += e * e;
	}
	return res;
}

int e4_cost_fit(const E4CostModel *m, E4CostFit *out)
{
	*out = (E4CostFit){0};
	if (m->n == 0)
		return -ENODATA;
	Fit f = { .m = m };
	for (size_t i = 0; i < m->n; i++) {
		double x[TERMS];
		terms(&m->v[i], x);
		for (int j = 0; j < TERMS; j++)
			f.scale[j] = MAX(f.scale[j], x[j]);
	}
	unsigned usable = 0;
	for (int j = 0; j < TERMS; j++)
		usable |= f.scale[j] > 0 ? 1u << j : 0;
	double best = -1, bc[TERMS] = {0};
	int best_terms = 0;
	for (unsigned mask = 1; mask < 1u << TERMS; mask++) {
		if ((mask & usable) != mask)
			continue;
		double c[TERMS];
		double res = fit_subset(&f, mask, c);
		int nt = __builtin_popcount(mask);
		double tol = TIE * (double)m->n;
		bool better = res >= 0 && (best < 0 || res < best - tol || (res <= best + tol && nt > best_terms));
		if (better) {
			best = res;
			best_terms = nt;
			memcpy(bc, c, sizeof(bc));
		}
	}
	if (best < 0)
		return -ENODATA; /* not reached: one term alone always fits */
	double per[TERMS];
	for (int j = 0; j < TERMS; j++)
		per[j] = f.scale[j] > 0 ? bc[j] / f.scale[j] : 0;
	out->per_job = per[0];
	out->per_file = per[1];
	out->per_byte = per[2];
	out->room_known = f.scale[3] > 0;
	out->per_room_byte = out->room_known ? per[3] : per[2];
	out->samples = m->n;
	return 0;
}

double e4_cost_seconds(const E4CostFit *f, uint64_t files, uint64_t bytes, uint64_t room_bytes)
{
	return f->per_job + (double)files * f->per_file + (double)bytes * f->per_byte +
	       (double)room_bytes * f->per_room_byte;
}

char *e4_cost_format(const E4CostModel *m)
{
	GString *s = g_string_new(MAGIC);
	g_string_append_printf(s, "count %zu\n", m->n);
	for (size_t k = 0; k < m->n; k++) {
		/* oldest first: once full, the oldest is at next */
		const E4CostSample *x = &m->v[m->n < E4_COST_SAMPLES ? k : (m->next + k) % E4_COST_SAMPLES];
		g_string_append_printf(s, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %.6f\n", x->files, x->bytes,
				       x->room_bytes, x->seconds);
	}
	return g_string_free(s, FALSE);
}

/* One "files bytes room_bytes seconds" line of exactly these numbers. */
static bool parse_line(const char *line, E4CostSample *x)
{
	char tail;
	return line[0] >= '0' && line[0] <= '9' &&
	       sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %lf%c", &x->files, &x->bytes, &x->room_bytes,
		      &x->seconds, &tail) == 4 &&
	       x->seconds > 0 && isfinite(x->seconds);
}

int e4_cost_parse(const char *text, size_t len, E4CostModel *m)
{
	*m = (E4CostModel){0};
	g_auto(GStrv) lines = NULL;
	unsigned count = 0;
	if (e4_statefile_lines(text, len, MAGIC, &lines, &count) < 0 || count > E4_COST_SAMPLES)
		return -EBADMSG;
	E4CostModel got = {0};
	size_t i = 2;
	for (; lines[i] && lines[i][0]; i++) {
		E4CostSample x;
		if (i - 2 >= count || !parse_line(lines[i], &x) || !e4_cost_add(&got, &x))
			return -EBADMSG;
	}
	if (i - 2 != count || lines[i] == NULL || lines[i + 1] != NULL)
		return -EBADMSG;
	*m = got;
	return 0;
}

int e4_cost_save(const E4CostModel *m, int dirfd, const char *name)
{
	g_autofree char *text = e4_cost_format(m);
	return e4_statefile_save(dirfd, name, text, strlen(text));
}

/* A state file of 64 samples is under 5 KiB. */
#define MAX_BYTES (64u << 10)

int e4_cost_load(int dirfd, const char *name, E4CostModel *m)
{
	*m = (E4CostModel){0};
	GString *s;
	int rc = e4_statefile_read(dirfd, name, MAX_BYTES, &s);
	if (rc < 0)
		return rc;
	rc = e4_cost_parse(s->str, s->len, m);
	g_string_free(s, TRUE);
	return rc;
}
