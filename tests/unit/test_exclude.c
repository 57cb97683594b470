/* Unit tests of core/exclude.c: the user.e4infofs.exclude mark on a file,
 * on its directory and on directories further up, the value "0", and the
 * per-job cache of directories. In a temporary directory (the test fails
 * if its filesystem has no user xattrs: /tmp on ext4 or tmpfs has them). */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <glib.h>

#include "exclude.h"

#include "tmpdir.h"

static void setup(void)
{
	tmpdir_make("e4exclude-XXXXXX");
	ck_assert_int_eq(mkdirat(dirfd_, "a", 0755), 0);
	ck_assert_int_eq(mkdirat(dirfd_, "a/b", 0755), 0);
	ck_assert_int_eq(mkdirat(dirfd_, "a/b/c", 0755), 0);
	ck_assert_int_eq(mkdirat(dirfd_, "o", 0755), 0);
	int fd = openat(dirfd_, "a/b/c/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = openat(dirfd_, "o/g", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
}


static void mark(const char *rel, const char *value)
{
	g_autofree char *p = g_strdup_printf("%s/%s", base, rel);
	ck_assert_int_eq(setxattr(p, E4_EXCLUDE_XATTR, value, strlen(value), 0), 0);
}

static int open_dir(const char *rel)
{
	int fd = openat(dirfd_, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static bool dir_excluded(E4Exclude *x, const char *rel)
{
	int fd = open_dir(rel);
	bool r = e4_exclude_dir(x, fd);
	close(fd);
	return r;
}

static bool at_excluded(E4Exclude *x, const char *dir, const char *name)
{
	int fd = open_dir(dir);
	bool r = e4_exclude_at(x, fd, name);
	close(fd);
	return r;
}

START_TEST(nothing_marked)
{
	E4Exclude *x = e4_exclude_new();
	ck_assert(!dir_excluded(x, "a/b/c"));
	ck_assert(!at_excluded(x, "a/b/c", "f"));
	ck_assert(!at_excluded(NULL, "o", "g"));
	e4_exclude_free(x);
}
END_TEST

START_TEST(file_marked)
{
	mark("a/b/c/f", "1");
	ck_assert(at_excluded(NULL, "a/b/c", "f"));
	ck_assert(!dir_excluded(NULL, "a/b/c"));
	int fd = openat(dirfd_, "a/b/c/f", O_PATH | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert(e4_exclude_marked(fd)); /* an O_PATH fd too */
	close(fd);
	mark("o/g", "0");
	ck_assert(!at_excluded(NULL, "o", "g"));
	mark("o/g", "yes, a long value that does not fit the buffer");
	ck_assert(at_excluded(NULL, "o", "g"));
}
END_TEST

/* A mark two levels up covers the file, seen from the cache too; the
 * sibling subtree is not covered. */
START_TEST(inherited)
{
	mark("a", "1");
	E4Exclude *x = e4_exclude_new();
	ck_assert(dir_excluded(x, "a/b/c"));
	ck_assert(at_excluded(x, "a/b/c", "f"));
	ck_assert(dir_excluded(x, "a/b")); /* from the cache */
	ck_assert(!dir_excluded(x, "o"));
	ck_assert(!at_excluded(x, "o", "g"));
	/* The cache is the job's: a mark removed meanwhile is seen by the next. */
	g_autofree char *a = g_strdup_printf("%s/a", base);
	ck_assert_int_eq(removexattr(a, E4_EXCLUDE_XATTR), 0);
	ck_assert(dir_excluded(x, "a/b/c"));
	ck_assert(!dir_excluded(NULL, "a/b/c"));
	e4_exclude_free(x);
	/* "0" on a directory excludes nothing below it. */
	mark("a/b", "0");
	ck_assert(!dir_excluded(NULL, "a/b/c"));
}
END_TEST

static Suite *exclude_suite(void)
{
	Suite *s = suite_create("exclude");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, tmpdir_remove);
	tcase_add_test(tc, nothing_marked);
	tcase_add_test(tc, file_marked);
	tcase_add_test(tc, inherited);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(exclude_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
