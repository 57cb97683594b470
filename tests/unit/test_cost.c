/* Unit tests of core/cost.c: the fit recovers the costs that made the
 * samples, stays close under noise, never goes negative, explains a lone
 * sample, keeps the last 64 samples, and its state file reads back the
 * same and is refused when damaged. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

#include "cost.h"

#include "tmpdir.h"

#define MIB 1048576.0

static void setup(void)
{
	tmpdir_make("e4cost-XXXXXX");
}

/* Jobs as the benchmark corpora make them: many small files, a few
 * hundred mid-sized ones, four large ones, with and without room. */
static const E4CostSample shapes[] = {
	{ 82968, 3174ull << 20, 0, 0 }, { 292, 3101ull << 20, 0, 0 }, { 4, 1162ull << 20, 0, 0 },
	{ 226, 3000ull << 20, 1651ull << 20, 0 }, { 4, 1162ull << 20, 441ull << 20, 0 }, { 900, 64ull << 20, 0, 0 },
};

static const E4CostFit truth = { .per_job = 0.4, .per_file = 0.23e-3, .per_byte = 2.9e-3 / MIB, .per_room_byte = 7e-3 / MIB };

static E4CostSample made(size_t i, double noise)
{
	E4CostSample s = shapes[i % G_N_ELEMENTS(shapes)];
	s.seconds = e4_cost_seconds(&truth, s.files, s.bytes, s.room_bytes) * (1 + noise);
	return s;
}

static double rel(double got, double want)
{
	return fabs(got / want - 1);
}

START_TEST(recovers_exact_costs)
{
	E4CostModel m = {0};
	for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
		E4CostSample s = made(i, 0);
		ck_assert(e4_cost_add(&m, &s));
	}
	E4CostFit f;
	ck_assert_int_eq(e4_cost_fit(&m, &f), 0);
	ck_assert_uint_eq(f.samples, G_N_ELEMENTS(shapes));
	ck_assert(f.room_known);
	ck_assert_msg(rel(f.per_job, truth.per_job) < 1e-3, "per job %g", f.per_job);
	ck_assert_msg(rel(f.per_file, truth.per_file) < 1e-3, "per file %g", f.per_file);
	ck_assert_msg(rel(f.per_byte, truth.per_byte) < 1e-3, "per byte %g", f.per_byte);
	ck_assert_msg(rel(f.per_room_byte, truth.per_room_byte) < 1e-3, "per room byte %g", f.per_room_byte);
	/* A job of a shape not seen. */
	double want = e4_cost_seconds(&truth, 5000, 200ull << 20, 50ull << 20);
	ck_assert(rel(e4_cost_seconds(&f, 5000, 200ull << 20, 50ull << 20), want) < 1e-3);
}
END_TEST

START_TEST(close_under_noise)
{
	/* +-20% on every job, three rounds of the shapes. */
	static const double noise[] = { 0.2, -0.2, 0.1, -0.1, 0.15, -0.05, 0.0, 0.2, -0.15 };
	E4CostModel m = {0};
	for (size_t i = 0; i < 18; i++) {
		E4CostSample s = made(i, noise[i % G_N_ELEMENTS(noise)]);
		e4_cost_add(&m, &s);
	}
	E4CostFit f;
	ck_assert_int_eq(e4_cost_fit(&m, &f), 0);
	for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
		const E4CostSample *s = &shapes[i];
		double want = e4_cost_seconds(&truth, s->files, s->bytes, s->room_bytes);
		double got = e4_cost_seconds(&f, s->files, s->bytes, s->room_bytes);
		ck_assert_msg(rel(got, want) < 0.2, "shape %zu: %g s for %g s", i, got, want);
	}
}
END_TEST

START_TEST(never_negative)
{
	/* More files took less time: unconstrained, per_file < 0. */
	E4CostModel m = {0};
	E4CostSample a = { 10, 100ull << 20, 0, 1.0 }, b = { 100000, 100ull << 20, 0, 0.8 },
		     c = { 1000, 400ull << 20, 0, 2.0 };
	e4_cost_add(&m, &a);
	e4_cost_add(&m, &b);
	e4_cost_add(&m, &c);
	E4CostFit f;
	ck_assert_int_eq(e4_cost_fit(&m, &f), 0);
	ck_assert(f.per_job >= 0 && f.per_file >= 0 && f.per_byte >= 0 && f.per_room_byte >= 0);
	ck_assert(f.per_byte > 0);
	ck_assert(!f.room_known);
	ck_assert(f.per_room_byte == f.per_byte); /* room not seen: as a move */
}
END_TEST

START_TEST(lone_sample)
{
	E4CostModel m = {0};
	E4CostFit f;
	ck_assert_int_eq(e4_cost_fit(&m, &f), -ENODATA);
	E4CostSample s = { 82968, 3174ull << 20, 0, 28.1 };
	e4_cost_add(&m, &s);
	ck_assert_int_eq(e4_cost_fit(&m, &f), 0);
	/* It explains the job it saw, and splits the time between the terms. */
	ck_assert(rel(e4_cost_seconds(&f, s.files, s.bytes, 0), s.seconds) < 1e-3);
	ck_assert(f.per_job > 0 && f.per_file > 0 && f.per_byte > 0);
	ck_assert(rel(f.per_file * s.files, f.per_byte * s.bytes) < 1e-3);
	ck_assert(rel(f.per_job, f.per_byte * s.bytes) < 1e-3);
}
END_TEST

START_TEST(refuses_empty_samples)
{
	E4CostModel m = {0};
	E4CostSample none = { 0, 0, 0, 3 }, zero = { 5, 5, 0, 0 }, neg = { 5, 5, 0, -1 }, nan_ = { 5, 5, 0, NAN };
	ck_assert(!e4_cost_add(&m, &none));
	ck_assert(!e4_cost_add(&m, &zero));
	ck_assert(!e4_cost_add(&m, &neg));
	ck_assert(!e4_cost_add(&m, &nan_));
	ck_assert_uint_eq(m.n, 0);
}
END_TEST

START_TEST(keeps_the_last_samples)
{
	E4CostModel m = {0};
	for (uint64_t i = 1; i <= E4_COST_SAMPLES + 6; i++) {
		E4CostSample s = { i, i << 20, 0, (double)i };
		e4_cost_add(&m, &s);
	}
	ck_assert_uint_eq(m.n, E4_COST_SAMPLES);
	g_autofree char *text = e4_cost_format(&m);
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	ck_assert_str_eq(lines[1], "count 64");
	ck_assert_str_eq(lines[2], "7 7340032 0 7.000000"); /* the oldest kept */
	ck_assert_str_eq(lines[2 + E4_COST_SAMPLES - 1], "70 73400320 0 70.000000");
}
END_TEST

static int load_text(const char *text, E4CostModel *m)
{
	return e4_cost_parse(text, strlen(text), m);
}

START_TEST(state_file)
{
	E4CostModel m = {0}, back;
	for (size_t i = 0; i < 8; i++) {
		E4CostSample s = made(i, 0);
		e4_cost_add(&m, &s);
	}
	ck_assert_int_eq(e4_cost_load(dirfd_, "costs", &back), -ENOENT);
	ck_assert_int_eq(e4_cost_save(&m, dirfd_, "costs"), 0);
	ck_assert_int_eq(e4_cost_load(dirfd_, "costs", &back), 0);
	ck_assert_uint_eq(back.n, m.n);
	E4CostFit a, b;
	e4_cost_fit(&m, &a);
	e4_cost_fit(&back, &b);
	ck_assert(rel(e4_cost_seconds(&b, 1000, 1ull << 30, 0), e4_cost_seconds(&a, 1000, 1ull << 30, 0)) < 1e-6);

	g_autofree char *p = g_strdup_printf("%s/costs", base);
	g_autofree char *good = NULL;
	size_t len;
	ck_assert(g_file_get_contents(p, &good, &len, NULL));
	for (size_t i = 0; i < len; i++) {
		g_autofree char *bad = g_strdup(good);
		bad[i] = bad[i] == 'x' ? 'y' : 'x';
		ck_assert_msg(load_text(bad, &back) == -EBADMSG && back.n == 0, "byte %zu changed", i);
		g_autofree char *cut = g_strndup(good, i);
		ck_assert_msg(load_text(cut, &back) == -EBADMSG, "cut at %zu", i);
	}
	/* Valid checksums over bodies that are not a model. */
	const char *bodies[] = {
		"e4infofs-costs 1\ncount 2\n1 2 0 1.5\n",        "e4infofs-costs 1\ncount 1\n1 2 0\n",
		"e4infofs-costs 1\ncount 1\n1 2 0 0\n",          "e4infofs-costs 1\ncount 1\n1 2 0 nan\n",
		"e4infofs-costs 1\ncount 1\n0 0 0 1\n",          "e4infofs-costs 1\ncount 1\n1 2 0 1 5\n",
		"e4infofs-costs 1\ncount 65\n",                  "e4infofs-costs 2\ncount 0\n",
		"e4infofs-costs 1\ncount 1\n1 2 0 1\n\n",        "e4infofs-costs 1\ncount 1\n-1 2 0 1\n",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bodies); i++) {
		g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, bodies[i], -1);
		g_autofree char *text = g_strdup_printf("%ssha256 %s\n", bodies[i], sum);
		ck_assert_msg(load_text(text, &back) == -EBADMSG, "body %zu", i);
	}
	const char *ok = "e4infofs-costs 1\ncount 1\n1 2 0 1.5\n";
	g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, ok, -1);
	g_autofree char *text = g_strdup_printf("%ssha256 %s\n", ok, sum);
	ck_assert_int_eq(load_text(text, &back), 0);
	ck_assert_uint_eq(back.n, 1);
}
END_TEST

static Suite *cost_suite(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, tmpdir_remove);
	tcase_add_test(tc, recovers_exact_costs);
	tcase_add_test(tc, close_under_noise);
	tcase_add_test(tc, never_negative);
	tcase_add_test(tc, lone_sample);
	tcase_add_test(tc, refuses_empty_samples);
	tcase_add_test(tc, keeps_the_last_samples);
	tcase_add_test(tc, state_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cost_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
