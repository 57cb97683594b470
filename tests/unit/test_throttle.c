/* Unit tests of core/throttle.c: the token bucket of a job's mibps,
 * driven by an injected clock (nothing sleeps for real). */
#include <check.h>
#include <stdlib.h>

#include "throttle.h"

#define MIB 1048576.0

typedef struct {
	int64_t now;    /* µs */
	int sleeps;     /* calls of sleep_us */
	int64_t longest; /* longest single sleep */
	int cancel_at;  /* cancelled() answers true from this many polls (0: never) */
	int polls;
} FakeClock;

static int64_t fake_now(void *user)
{
	return ((FakeClock *)user)->now;
}

static void fake_sleep(int64_t us, void *user)
{
	FakeClock *c = user;
	c->now += us;
	c->sleeps++;
	if (us > c->longest)
		c->longest = us;
}

static bool fake_cancelled(void *user)
{
	FakeClock *c = user;
	return c->cancel_at && ++c->polls >= c->cancel_at;
}

static E4Throttle *bucket(FakeClock *c, double bytes_per_sec, uint64_t burst)
{
	E4Clock clock = { .now_us = fake_now, .sleep_us = fake_sleep, .user = c };
	return e4_throttle_new(bytes_per_sec, burst, &clock);
}

START_TEST(throttle_waits)
{
	FakeClock c = {0};
	g_autoptr(E4Throttle) t = bucket(&c, MIB, MIB);
	/* Empty at first: 1 MiB at 1 MiB/s is one second away. */
	ck_assert_int_eq(e4_throttle_reserve(t, 1048576), 1000000);
	/* The next caller comes after it. */
	ck_assert_int_eq(e4_throttle_reserve(t, 524288), 1500000);
	c.now = 1500000;
	ck_assert_int_eq(e4_throttle_reserve(t, 0), 0);
	ck_assert_int_eq(e4_throttle_reserve(t, 1048576), 1000000);
}
END_TEST

START_TEST(throttle_burst_capped)
{
	FakeClock c = {0};
	g_autoptr(E4Throttle) t = bucket(&c, MIB, 2 * 1048576);
	/* An hour idle saves no more than the burst. */
	c.now = 3600 * 1000000LL;
	ck_assert_int_eq(e4_throttle_reserve(t, 2 * 1048576), 0);
	ck_assert_int_eq(e4_throttle_reserve(t, 1048576), 1000000);
}
END_TEST

START_TEST(throttle_clock_backwards)
{
	FakeClock c = { .now = 5000000 };
	g_autoptr(E4Throttle) t = bucket(&c, MIB, 1048576);
	c.now = 4000000; /* never happens with a monotonic clock, must not mint tokens */
	ck_assert_int_eq(e4_throttle_reserve(t, 1048576), 1000000);
}
END_TEST

/* Four threads taking 4 MiB chunks in turn at 20 MiB/s: the grants, at
 * the times take() returns, never exceed burst + rate * T in any window
 * of T = 5 s, and the long-run rate is the cap. */
START_TEST(throttle_windows)
{
	FakeClock c = {0};
	const double rate = 20 * MIB;
	const uint64_t chunk = 4 * 1048576, burst = chunk;
	g_autoptr(E4Throttle) t = bucket(&c, rate, burst);
	enum { N = 400 };
	static int64_t when[N];
	int64_t busy_until[4] = {0};
	for (int i = 0; i < N; i++) {
		/* The thread free first takes the next chunk; each move lasts 0.1 s. */
		int th = 0;
		for (int k = 1; k < 4; k++)
			if (busy_until[k] < busy_until[th])
				th = k;
		if (c.now < busy_until[th])
			c.now = busy_until[th];
		ck_assert(e4_throttle_take(t, chunk, NULL, NULL));
		when[i] = c.now;
		busy_until[th] = c.now + 100000;
	}
	for (int i = 0; i < N; i++) {
		uint64_t bytes = 0;
		for (int j = i; j < N && when[j] < when[i] + 5000000; j++)
			bytes += chunk;
		ck_assert_msg((double)bytes <= burst + rate * 5 + chunk,
			      "window at %lld: %.1f MiB", (long long)when[i], bytes / MIB);
	}
	double mibps = (double)N * chunk / MIB / ((double)when[N - 1] / 1e6);
	ck_assert_msg(mibps > 19.5 && mibps < 20.5, "long-run %.2f MiB/s", mibps);
	ck_assert_int_le(c.longest, E4_THROTTLE_STEP_US);
}
END_TEST

START_TEST(throttle_cancel)
{
	FakeClock c = { .cancel_at = 3 };
	g_autoptr(E4Throttle) t = bucket(&c, 1.0, 1); /* 1 byte/s: a megabyte waits 12 days */
	ck_assert(!e4_throttle_take(t, 1048576, fake_cancelled, &c));
	/* Seen at the third poll: two steps slept, each at most one step. */
	ck_assert_int_eq(c.sleeps, 2);
	ck_assert_int_le(c.now, 2 * E4_THROTTLE_STEP_US);
}
END_TEST

START_TEST(throttle_real_clock)
{
	g_autoptr(E4Throttle) t = e4_throttle_new(1e9, 1000, NULL);
	ck_assert(e4_throttle_take(t, 1000, NULL, NULL)); /* 1 µs away at most */
}
END_TEST

static Suite *throttle_suite(void)
{
	Suite *s = suite_create("throttle");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, throttle_waits);
	tcase_add_test(tc, throttle_burst_capped);
	tcase_add_test(tc, throttle_clock_backwards);
	tcase_add_test(tc, throttle_windows);
	tcase_add_test(tc, throttle_cancel);
	tcase_add_test(tc, throttle_real_clock);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(throttle_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
