#include "throttle.h"

#include <math.h>

#include <glib.h>

struct E4Throttle {
	GMutex lock;       /* guards tokens and last */
	double rate;       /* bytes per microsecond */
	double burst;      /* bytes */
	double tokens;     /* bytes; negative: owed by callers already granted */
	int64_t last;      /* when tokens was last brought up to date */
	E4Clock clock;
};

static int64_t real_now(void *user)
{
	(void)user;
	return g_get_monotonic_time();
}

static void real_sleep(int64_t us, void *user)
{
	(void)user;
	g_usleep((gulong)us);
}

E4Throttle *e4_throttle_new(double bytes_per_sec, uint64_t burst, const E4Clock *clock)
{
	E4Throttle *t = g_new0(E4Throttle, 1);
	g_mutex_init(&t->lock);
	t->rate = bytes_per_sec / 1e6;
	t->burst = (double)burst;
	t->clock = clock ? *clock : (E4Clock){ .now_us = real_now, .sleep_us = real_sleep };
	t->last = t->clock.now_us(t->clock.user);
	return t;
}

void e4_throttle_free(E4Throttle *t)
{
	if (!t)
		return;
	g_mutex_clear(&t->lock);
	g_free(t);
}

int64_t e4_throttle_reserve(E4Throttle *t, uint64_t bytes)
{
	int64_t now = t->clock.now_us(t->clock.user);
	g_mutex_lock(&t->lock);
	if (now > t->last) {
		t->tokens = MIN(t->burst, t->tokens + (double)(now - t->last) * t->rate);
		t->last = now;
	}
	t->tokens -= (double)bytes;
	double wait = t->tokens < 0 ? -t->tokens / t->rate : 0;
	g_mutex_unlock(&t->lock);
	return (int64_t)ceil(wait);
}

bool e4_throttle_take(E4Throttle *t, uint64_t bytes, bool (*cancelled)(void *user), void *user)
{
	int64_t until = t->clock.now_us(t->clock.user) + e4_throttle_reserve(t, bytes);
	for (;;) {
		if (cancelled && cancelled(user))
			return false;
		int64_t left = until - t->clock.now_us(t->clock.user);
		if (left <= 0)
			return true;
		t->clock.sleep_us(MIN(left, E4_THROTTLE_STEP_US), t->clock.user);
	}
}
