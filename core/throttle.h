/* A token bucket shared by the threads of one job: bytes moved per second
 * at most, consulted before each chunk. Thread-safe. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

/* Time as the bucket sees it; NULL in e4_throttle_new: the monotonic
 * clock and g_usleep. Tests inject their own (no real sleeping). */
typedef struct {
	int64_t (*now_us)(void *user);          /* monotonic, microseconds */
	void (*sleep_us)(int64_t us, void *user);
	void *user;
} E4Clock;

/* The longest single sleep of e4_throttle_take: a cancel is seen within it. */
#define E4_THROTTLE_STEP_US 100000

typedef struct E4Throttle E4Throttle;

/* A bucket filling at bytes_per_sec (> 0), holding at most burst bytes
 * (saved while nobody moves), empty at first. clock is copied. */
E4Throttle *e4_throttle_new(double bytes_per_sec, uint64_t burst, const E4Clock *clock);
void e4_throttle_free(E4Throttle *t);

/* Takes bytes from the bucket, which may go into debt: returns how many
 * microseconds from now the caller may move them (0: at once). Callers
 * in turn are given successive times, so that over any interval of T
 * seconds the bytes granted are at most burst + bytes_per_sec * T. */
int64_t e4_throttle_reserve(E4Throttle *t, uint64_t bytes);

/* e4_throttle_reserve, then sleeps until that time in steps of at most
 * E4_THROTTLE_STEP_US, polling cancelled (may be NULL) before each.
 * Returns true when the bytes may be moved now, false when cancelled
 * while waiting (the bytes stay taken: the job is ending). */
bool e4_throttle_take(E4Throttle *t, uint64_t bytes, bool (*cancelled)(void *user), void *user);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(E4Throttle, e4_throttle_free)
