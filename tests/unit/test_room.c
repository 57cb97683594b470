/* Unit tests of core/room.c: when a donor is not worth allocating, and
 * when a journal commit is worth forcing. The free-space map is set by
 * hand (fd -1: a read would fail and leave the room unknown). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "room.h"

#define BS 4096
#define SEC 1000000LL
#define T0 (100 * SEC)

/* A room whose map was read at T0: n extents of `each` blocks. */
static E4Room room_of(uint64_t n, uint64_t each)
{
	E4Room r;
	e4_room_init(&r, BS);
	r.known = true;
	r.read_at = T0;
	r.free.block_size = BS;
	for (uint64_t i = 0; i < n; i++)
		e4_freespace_add(&r.free, each);
	return r;
}

START_TEST(bound_from_the_map)
{
	/* Swiss cheese: 1,000 pieces of 8 blocks. 800 blocks need >= 100. */
	E4Room r = room_of(1000, 8);
	ck_assert(e4_room_hopeless(&r, -1, 800, 100, T0));
	ck_assert(e4_room_hopeless(&r, -1, 800, 50, T0));
	ck_assert(!e4_room_hopeless(&r, -1, 800, 101, T0));
	ck_assert(!e4_room_hopeless(&r, -1, 800, 150, T0));
}
END_TEST

START_TEST(moves_count_as_room)
{
	E4Room r = room_of(1000, 8);
	/* 800 blocks moved since the map was read may have joined into one
	 * free extent: no longer hopeless in 50 runs. */
	e4_room_freed(&r, 800 * BS);
	ck_assert(!e4_room_hopeless(&r, -1, 800, 50, T0));
	ck_assert(!e4_room_hopeless(&r, -1, 800, 2, T0));
}
END_TEST

START_TEST(unknown_map_never_hopeless)
{
	E4Room r;
	e4_room_init(&r, BS);
	ck_assert(!e4_room_hopeless(&r, -1, 800, 2, T0)); /* read fails: EBADF */
	ck_assert(!r.known);
	ck_assert_int_eq(r.read_at, T0);
}
END_TEST

START_TEST(map_read_again_when_old)
{
	E4Room r = room_of(1000, 8);
	ck_assert(e4_room_hopeless(&r, -1, 800, 50, T0 + E4_ROOM_MAX_AGE_US));
	/* Older than the limit: read again (and unknown now, fd -1). */
	ck_assert(!e4_room_hopeless(&r, -1, 800, 50, T0 + E4_ROOM_MAX_AGE_US + 1));
	ck_assert(!r.known);
}
END_TEST

START_TEST(map_read_again_after_commit)
{
	E4Room r = room_of(1000, 8);
	e4_room_freed(&r, 64 << 20);
	e4_room_committed(&r);
	ck_assert_uint_eq(r.freed_uncommitted, 0);
	/* Within E4_ROOM_MIN_AGE_US the old map (and the slack) stand. */
	ck_assert(!e4_room_hopeless(&r, -1, 800, 50, T0 + E4_ROOM_MIN_AGE_US));
	ck_assert(r.known);
	ck_assert(!e4_room_hopeless(&r, -1, 800, 50, T0 + E4_ROOM_MIN_AGE_US + 1));
	ck_assert(!r.known);
	ck_assert(!r.committed);
	ck_assert_uint_eq(r.freed_unmapped, 0); /* everything moved is on a fresh map */
}
END_TEST

START_TEST(slow_reads_are_rarer)
{
	E4Room r = room_of(1000, 8);
	r.read_cost = SEC; /* a huge map: one read took 1 s */
	e4_room_freed(&r, 64 << 20);
	e4_room_committed(&r);
	/* Not again within 50 times its cost, neither after a commit nor
	 * after E4_ROOM_MAX_AGE_US. */
	ck_assert(!e4_room_hopeless(&r, -1, 800, 50, T0 + 49 * SEC));
	ck_assert(r.known);
	ck_assert(!e4_room_hopeless(&r, -1, 800, 50, T0 + 50 * SEC + 1));
	ck_assert(!r.known); /* read again (fd -1) */
	ck_assert_int_lt(r.read_cost, SEC);
}
END_TEST

START_TEST(a_miss_predicts_misses)
{
	/* The map alone would allow anything: one free extent of 1M blocks. */
	E4Room r = room_of(1, 1u << 20);
	ck_assert(!e4_room_hopeless(&r, -1, 8192, 512, T0));
	/* A donor of 8,192 blocks came in 1,024 runs (8 blocks each) for a
	 * file in 900. */
	e4_room_donor(&r, 8192, 1024, 900, T0);
	ck_assert_uint_eq(r.miss_run, 8);
	/* Runs of 16 blocks on average: a donor would not beat them. */
	ck_assert(e4_room_hopeless(&r, -1, 8192, 512, T0 + SEC));
	ck_assert(e4_room_hopeless(&r, -1, 16384, 2048, T0 + SEC)); /* 8 each */
	/* Shorter runs than the allocator gave: worth a try. */
	ck_assert(!e4_room_hopeless(&r, -1, 8192, 2048, T0 + SEC));
	/* Small files are always tried. */
	ck_assert(!e4_room_hopeless(&r, -1, E4_ROOM_LEARN_BLOCKS - 1, 2, T0 + SEC));
	/* Once the file's size was moved (freed), the room may be there. */
	e4_room_freed(&r, 8191ull * BS);
	ck_assert(e4_room_hopeless(&r, -1, 8192, 512, T0 + SEC));
	e4_room_freed(&r, BS);
	ck_assert(!e4_room_hopeless(&r, -1, 8192, 512, T0 + SEC));
}
END_TEST

START_TEST(a_miss_is_forgotten)
{
	E4Room r = room_of(1, 1u << 20);
	e4_room_donor(&r, 8192, 1024, 900, T0);
	/* A better donor since: the free space offers more again. */
	e4_room_donor(&r, 8192, 10, 900, T0);
	ck_assert_uint_eq(r.miss_run, 0);
	ck_assert(!e4_room_hopeless(&r, -1, 8192, 512, T0));
	/* Small donors teach nothing. */
	e4_room_donor(&r, E4_ROOM_LEARN_BLOCKS - 1, 1000, 1, T0);
	ck_assert_uint_eq(r.miss_run, 0);
	/* An old miss does not hold back a later request. */
	e4_room_donor(&r, 8192, 1024, 900, T0);
	r.read_at = T0 + E4_ROOM_MAX_AGE_US; /* keep the map fresh */
	ck_assert(e4_room_hopeless(&r, -1, 8192, 512, T0 + E4_ROOM_MAX_AGE_US));
	ck_assert(!e4_room_hopeless(&r, -1, 8192, 512, T0 + E4_ROOM_MAX_AGE_US + 1));
}
END_TEST

START_TEST(commit_worth_forcing)
{
	E4Room r = room_of(1000, 8);
	ck_assert(!e4_room_commit_may_help(&r, BS));
	e4_room_freed(&r, E4_ROOM_COMMIT_MIN_BYTES - 1);
	ck_assert(!e4_room_commit_may_help(&r, BS)); /* too little to be worth it */
	e4_room_freed(&r, 1);
	ck_assert(e4_room_commit_may_help(&r, BS));
	ck_assert(!e4_room_commit_may_help(&r, E4_ROOM_COMMIT_MIN_BYTES + 1)); /* not the file's size */
	e4_room_committed(&r);
	ck_assert(!e4_room_commit_may_help(&r, BS));
}
END_TEST

static Suite *room_suite(void)
{
	Suite *s = suite_create("room");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, bound_from_the_map);
	tcase_add_test(tc, moves_count_as_room);
	tcase_add_test(tc, unknown_map_never_hopeless);
	tcase_add_test(tc, map_read_again_when_old);
	tcase_add_test(tc, map_read_again_after_commit);
	tcase_add_test(tc, slow_reads_are_rarer);
	tcase_add_test(tc, a_miss_predicts_misses);
	tcase_add_test(tc, a_miss_is_forgotten);
	tcase_add_test(tc, commit_worth_forcing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(room_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
