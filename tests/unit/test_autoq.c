/* Unit tests of core/autoq.c: the candidate set of automatic
 * defragmentation, driven by explicit times (µs). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "autoq.h"

#define S 1000000 /* µs per second */

/* An ext4-like handle (ino32, gen) in a kernel file_handle. */
static E4AutoHandle h_of(uint32_t ino)
{
	E4AutoHandle h;
	memset(&h, 0, sizeof(h));
	h.fh.handle_type = 1;
	h.fh.handle_bytes = 8;
	uint32_t gen = 7;
	memcpy(h.bytes, &ino, 4);
	memcpy(h.bytes + 4, &gen, 4);
	return h;
}

static uint32_t ino_of(const E4AutoHandle *h)
{
	uint32_t ino;
	memcpy(&ino, h->bytes, 4);
	return ino;
}

static int note(E4AutoQueue *q, uint32_t ino, uint32_t dir, int64_t t)
{
	E4AutoHandle f = h_of(ino), d = h_of(dir);
	return e4_autoq_note(q, &f.fh, &d.fh, t);
}

START_TEST(autoq_waits_until_quiet)
{
	E4AutoQueue *q = e4_autoq_new(16);
	E4AutoCandidate out[4];
	ck_assert_int_eq(note(q, 12, 2, 0), 0);
	ck_assert_int_eq(e4_autoq_len(q), 1);
	/* Quiet 5 s asked: not at 4.9 s, at 5 s. */
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 4900000, 5 * S, out, 4), 0);
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 5 * S, 5 * S, out, 4), 1);
	ck_assert_uint_eq(ino_of(&out[0].file), 12);
	ck_assert_uint_eq(ino_of(&out[0].dir), 2);
	ck_assert_int_eq(out[0].last_us, 0);
	/* Taken: gone from the set. */
	ck_assert_int_eq(e4_autoq_len(q), 0);
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 100 * S, 5 * S, out, 4), 0);
	e4_autoq_free(q);
}
END_TEST

/* A file written every 100 ms never becomes quiet: each write moves its time. */
START_TEST(autoq_written_continuously)
{
	E4AutoQueue *q = e4_autoq_new(16);
	E4AutoCandidate out[4];
	for (int64_t t = 0; t <= 60 * S; t += S / 10) {
		ck_assert_int_eq(note(q, 12, 2, t), 0);
		ck_assert_uint_eq(e4_autoq_take_quiet(q, t, 5 * S, out, 4), 0);
	}
	ck_assert_int_eq(e4_autoq_len(q), 1);
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 65 * S, 5 * S, out, 4), 1);
	ck_assert_int_eq(out[0].last_us, 60 * S);
	e4_autoq_free(q);
}
END_TEST

START_TEST(autoq_oldest_first_and_max)
{
	E4AutoQueue *q = e4_autoq_new(16);
	E4AutoCandidate out[2];
	note(q, 10, 2, 1 * S);
	note(q, 20, 2, 2 * S);
	note(q, 30, 2, 3 * S);
	note(q, 10, 2, 4 * S); /* written again: now the most recent */
	/* At 5.5 s with 2 s of quiet: 20 and 30, not 10. */
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 5500000, 2 * S, out, 2), 2);
	ck_assert_uint_eq(ino_of(&out[0].file), 20);
	ck_assert_uint_eq(ino_of(&out[1].file), 30);
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 5500000, 2 * S, out, 2), 0);
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 10 * S, S, out, 2), 1);
	ck_assert_uint_eq(ino_of(&out[0].file), 10);
	ck_assert_int_eq(e4_autoq_len(q), 0);
	e4_autoq_free(q);
}
END_TEST

/* The last write's directory is the one kept (a file moved, then written). */
START_TEST(autoq_last_dir)
{
	E4AutoQueue *q = e4_autoq_new(16);
	E4AutoCandidate out[1];
	note(q, 12, 2, 0);
	note(q, 12, 5, S);
	ck_assert_int_eq(e4_autoq_len(q), 1);
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 10 * S, S, out, 1), 1);
	ck_assert_uint_eq(ino_of(&out[0].dir), 5);
	e4_autoq_free(q);
}
END_TEST

START_TEST(autoq_bounded)
{
	E4AutoQueue *q = e4_autoq_new(3);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_int_eq(note(q, 100 + i, 2, 0), 0);
	ck_assert_int_eq(note(q, 200, 2, 0), -ENOSPC);
	ck_assert_int_eq(note(q, 201, 2, 0), -ENOSPC);
	/* A file already waiting is still refreshed when full. */
	ck_assert_int_eq(note(q, 101, 2, S), 0);
	ck_assert_int_eq(e4_autoq_len(q), 3);
	ck_assert_uint_eq(e4_autoq_dropped(q), 2);
	/* A handle longer than kept is dropped and counted. */
	struct {
		struct file_handle fh;
		unsigned char b[64];
	} big = { .fh = { .handle_bytes = 64, .handle_type = 1 } };
	E4AutoHandle d = h_of(2);
	E4AutoCandidate out[4];
	ck_assert_uint_eq(e4_autoq_take_quiet(q, 10 * S, S, out, 4), 3);
	ck_assert_int_eq(e4_autoq_note(q, &big.fh, &d.fh, 0), -ENAMETOOLONG);
	ck_assert_uint_eq(e4_autoq_dropped(q), 3);
	e4_autoq_free(q);
}
END_TEST

/* Same inode, another generation: another file (a reused inode). */
START_TEST(autoq_generation)
{
	E4AutoQueue *q = e4_autoq_new(16);
	E4AutoHandle a = h_of(12), b = h_of(12), d = h_of(2);
	b.bytes[4] = 8;
	e4_autoq_note(q, &a.fh, &d.fh, 0);
	e4_autoq_note(q, &b.fh, &d.fh, 0);
	ck_assert_int_eq(e4_autoq_len(q), 2);
	e4_autoq_moved(q, &a.fh, 0, 10 * S);
	ck_assert(e4_autoq_moved_within(q, &a.fh, S, 10 * S));
	ck_assert(!e4_autoq_moved_within(q, &b.fh, S, 10 * S));
	e4_autoq_free(q);
}
END_TEST

START_TEST(autoq_window)
{
	E4AutoQueue *q = e4_autoq_new(2);
	E4AutoHandle a = h_of(12), b = h_of(13), c = h_of(14);
	ck_assert(!e4_autoq_moved_within(q, &a.fh, 0, 10 * S));
	e4_autoq_moved(q, &a.fh, 0, 10 * S);
	ck_assert(e4_autoq_moved_within(q, &a.fh, 9 * S, 10 * S));
	ck_assert(!e4_autoq_moved_within(q, &a.fh, 10 * S, 10 * S));
	/* Full of moves within the window: nothing else may be moved. */
	e4_autoq_moved(q, &a.fh, 11 * S, 10 * S);
	e4_autoq_moved(q, &b.fh, 12 * S, 10 * S);
	ck_assert(e4_autoq_moved_within(q, &c.fh, 13 * S, 10 * S));
	/* Once a's move is older than the window, room again. */
	ck_assert(!e4_autoq_moved_within(q, &c.fh, 21 * S, 10 * S));
	ck_assert(e4_autoq_moved_within(q, &b.fh, 21 * S, 10 * S));
	e4_autoq_free(q);
}
END_TEST

START_TEST(autoq_skip_names)
{
	ck_assert_str_eq(e4_auto_skip_name(E4_AUTO_SKIP_BELOW), "below_threshold");
	ck_assert_str_eq(e4_auto_skip_name(E4_AUTO_SKIP_WINDOW), "window");
	for (int r = 0; r < E4_AUTO_SKIP__COUNT; r++)
		ck_assert_str_ne(e4_auto_skip_name((E4AutoSkip)r), "unknown");
	ck_assert_str_eq(e4_auto_skip_name(E4_AUTO_SKIP__COUNT), "unknown");
}
END_TEST

static Suite *autoq_suite(void)
{
	Suite *s = suite_create("autoq");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, autoq_waits_until_quiet);
	tcase_add_test(tc, autoq_written_continuously);
	tcase_add_test(tc, autoq_oldest_first_and_max);
	tcase_add_test(tc, autoq_last_dir);
	tcase_add_test(tc, autoq_bounded);
	tcase_add_test(tc, autoq_generation);
	tcase_add_test(tc, autoq_window);
	tcase_add_test(tc, autoq_skip_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(autoq_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
