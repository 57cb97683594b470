/* Unit tests of core/place/probe.c: what can be checked on any filesystem
 * with unnamed files (where blocks land is the integration tests' and
 * the benchmarks' business: tests/defrag/test_make_room.sh,
 * tests/bench/large.sh). A window at block 0 is never free (the
 * superblock, or no FIEMAP at all on tmpfs): every piece misses. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "probe.h"
#include "../tmpdir.h"

static void setup(void)
{
	tmpdir_make("e4probe-XXXXXX");
}

/* Open fds of this process. */
static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

START_TEST(probe_bad_windows)
{
	E4Placed p;
	ck_assert_int_eq(e4_place_window(dirfd_, 0, 0, 4096, 0, &p), -EINVAL);
	e4_placed_clear(&p);
	/* Not a multiple of the piece, or not aligned to it. */
	ck_assert_int_eq(e4_place_window(dirfd_, 0, E4_PLACE_PIECE_MAX + 8, 4096, 0, &p), -EINVAL);
	e4_placed_clear(&p);
	ck_assert_int_eq(e4_place_window(dirfd_, 8, 16, 4096, 0, &p), -EINVAL);
	e4_placed_clear(&p);
	ck_assert_int_eq(e4_place_window(dirfd_, 16, 16, 4096, 0, &p), -ENOSPC);
	e4_placed_clear(&p);
}
END_TEST

START_TEST(probe_fit_bad)
{
	E4Placed p;
	ck_assert_int_eq(e4_place_fit(dirfd_, 0, 0, 0, 4096, 0, &p), -EINVAL);
	e4_placed_clear(&p);
	ck_assert_int_eq(e4_place_fit(dirfd_, 0, 512, 0, 4096, 0, &p), -EINVAL);
	e4_placed_clear(&p);
	ck_assert_int_eq(e4_place_fit(dirfd_, 0, 512, 513, 4096, 0, &p), -EINVAL);
	e4_placed_clear(&p);
	/* Block 0's window holds no free extent worth a piece (or the
	 * filesystem has no GETFSMAP): nothing made, nothing held. */
	int before = open_fds();
	ck_assert_int_lt(e4_place_fit(dirfd_, 0, 2 * E4_PLACE_FIT_MIN, E4_PLACE_FIT_MIN, 4096, 1 << 20, &p), 0);
	ck_assert_uint_eq(p.n, 0);
	ck_assert_uint_eq(p.nfences, 0);
	ck_assert_int_eq(open_fds(), before);
	e4_placed_clear(&p);
}
END_TEST

START_TEST(probe_append)
{
	/* Pieces appended count their runs and are closed by the clear. */
	int before = open_fds();
	E4Placed p = {0};
	e4_placed_append(&p, open("/dev/null", O_RDONLY), 100, 1);
	e4_placed_append(&p, open("/dev/null", O_RDONLY), 50, 3);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_uint_eq(p.runs, 4);
	ck_assert_uint_eq(p.piece_len[0], 100);
	ck_assert_uint_eq(p.piece_len[1], 50);
	ck_assert_int_eq(open_fds(), before + 2);
	e4_placed_clear(&p);
	ck_assert_int_eq(open_fds(), before);
	ck_assert_uint_eq(p.n, 0);
	ck_assert_uint_eq(p.runs, 0);
}
END_TEST

START_TEST(probe_fences_bounded)
{
	int before = open_fds();
	E4Placed p;
	/* Misses are fenced while they hold at most 3 pieces: the fourth is
	 * let go and the try ends. */
	ck_assert_int_eq(e4_place_window(dirfd_, 0, 16, 4096, 3 * 16, &p), -ENOSPC);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_uint_eq(p.piece_blocks, 16);
	ck_assert_int_eq(p.piece_fd[0], -1);
	ck_assert_uint_eq(p.nfences, 3);
	ck_assert_uint_eq(p.fenced_blocks, 48);
	ck_assert_int_eq(open_fds(), before + 3);
	e4_placed_drop_fences(&p);
	ck_assert_uint_eq(p.nfences, 0);
	ck_assert_uint_eq(p.fenced_blocks, 0);
	ck_assert_int_eq(open_fds(), before);
	e4_placed_clear(&p);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

START_TEST(probe_bad_dir)
{
	E4Placed p;
	ck_assert_int_eq(e4_place_window(-1, 0, 16, 4096, 64, &p), -EBADF);
	e4_placed_clear(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("probe");
	TCase *tc = tcase_create("probe");
	tcase_add_checked_fixture(tc, setup, tmpdir_remove);
	tcase_add_test(tc, probe_bad_windows);
	tcase_add_test(tc, probe_fit_bad);
	tcase_add_test(tc, probe_append);
	tcase_add_test(tc, probe_fences_bounded);
	tcase_add_test(tc, probe_bad_dir);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
