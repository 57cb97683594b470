/* Unit tests of core/beneath.c: the kernel's openat2 and the walk used
 * where openat2 is missing (valgrind, old kernels, seccomp) are held to
 * the same cases, so that the fallback refuses whatever the kernel does.
 * In a temporary directory; the mount-crossing case mounts a tmpfs and
 * runs only as root. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <glib.h>

#include "beneath.h"

typedef int (*Opener)(int dirfd, const char *path, int flags);
static const Opener openers[] = { e4_open_beneath, e4_open_beneath_walk };

#include "tmpdir.h"

static void setup(void)
{
	tmpdir_make("e4beneath-XXXXXX");
	ck_assert_int_eq(mkdirat(dirfd_, "d", 0755), 0);
	int fd = openat(dirfd_, "d/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	ck_assert_int_eq(symlinkat("d", dirfd_, "link"), 0);
	ck_assert_int_eq(symlinkat("f", dirfd_, "d/flink"), 0);
}


/* The inode path leads to, opened with the opener; 0 on failure. */
static ino_t ino_via(Opener op, int at, const char *path, int flags)
{
	int fd = op(at, path, flags);
	ck_assert_msg(fd >= 0, "%s: %s", path, g_strerror(-fd));
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);
	return st.st_ino;
}

static ino_t ino_of(const char *path)
{
	struct stat st;
	ck_assert_int_eq(fstatat(dirfd_, path, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_ino;
}

START_TEST(opens_beneath)
{
	Opener op = openers[_i];
	ck_assert_uint_eq(ino_via(op, dirfd_, "d/f", O_RDONLY), ino_of("d/f"));
	ck_assert_uint_eq(ino_via(op, dirfd_, "./d//f", O_RDONLY), ino_of("d/f"));
	ck_assert_uint_eq(ino_via(op, dirfd_, "d", O_PATH | O_DIRECTORY), ino_of("d"));
	ck_assert_uint_eq(ino_via(op, dirfd_, "", O_RDONLY | O_DIRECTORY), ino_of("."));
	ck_assert_uint_eq(ino_via(op, dirfd_, ".", O_PATH), ino_of("."));
	ck_assert_int_eq(op(dirfd_, "d/none", O_RDONLY), -ENOENT);
	ck_assert_int_eq(op(dirfd_, "d/f/g", O_RDONLY), -ENOTDIR);
}
END_TEST

START_TEST(follows_nothing)
{
	Opener op = openers[_i];
	ck_assert_int_eq(op(dirfd_, "link/f", O_RDONLY), -ELOOP);
	ck_assert_int_eq(op(dirfd_, "d/flink", O_RDONLY), -ELOOP);
	ck_assert_int_eq(op(dirfd_, "d/flink", O_PATH), -ELOOP);
	ck_assert_int_eq(op(dirfd_, "link", O_PATH | O_DIRECTORY), -ELOOP);
	int sub = openat(dirfd_, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(sub, 0);
	ck_assert_int_eq(op(sub, "../d/f", O_RDONLY), -EXDEV);
	ck_assert_int_eq(op(sub, "..", O_PATH), -EXDEV);
	g_autofree char *abs = g_strdup_printf("%s/d/f", base);
	ck_assert_int_eq(op(sub, abs, O_RDONLY), -EXDEV);
	ck_assert_int_eq(op(dirfd_, "/proc/self/cwd", O_RDONLY), -EXDEV);
	close(sub);
}
END_TEST

START_TEST(crosses_no_mount)
{
	if (geteuid() != 0)
		return; /* mounting needs root; the unit suite runs as root in CI */
	Opener op = openers[_i];
	ck_assert_int_eq(mkdirat(dirfd_, "m", 0755), 0);
	g_autofree char *m = g_strdup_printf("%s/m", base);
	ck_assert_int_eq(mount("e4beneath", m, "tmpfs", 0, "size=1m"), 0);
	int r1 = op(dirfd_, "m", O_PATH);
	int r2 = op(dirfd_, "m/.", O_PATH);
	/* A bind mount of the same filesystem is a crossing too. */
	g_autofree char *d = g_strdup_printf("%s/d", base);
	ck_assert_int_eq(umount2(m, MNT_DETACH), 0);
	ck_assert_int_eq(mount(d, m, "none", MS_BIND, NULL), 0);
	int r3 = op(dirfd_, "m/f", O_RDONLY);
	ck_assert_int_eq(umount2(m, MNT_DETACH), 0);
	ck_assert_int_eq(r1, -EXDEV);
	ck_assert_int_eq(r2, -EXDEV);
	ck_assert_int_eq(r3, -EXDEV);
}
END_TEST

static Suite *beneath_suite(void)
{
	Suite *s = suite_create("beneath");
	TCase *tc = tcase_create("kernel and walk");
	tcase_add_checked_fixture(tc, setup, tmpdir_remove);
	tcase_add_loop_test(tc, opens_beneath, 0, 2);
	tcase_add_loop_test(tc, follows_nothing, 0, 2);
	tcase_add_loop_test(tc, crosses_no_mount, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(beneath_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
