/* Unit tests of core/handle.c's path mode: an object is reopened by its
 * path beneath a directory and checked against its handle, so a rename, a
 * replacement, a symlink or an escape answers ESTALE, never another
 * object; paths longer than PATH_MAX work. In a temporary directory (of
 * any filesystem with file handles; /tmp here). */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib.h>

#include "handle.h"

#include "tmpdir.h"

static void setup(void)
{
	tmpdir_make("e4handle-XXXXXX");
}


static void make_file(const char *path, const char *content)
{
	int fd = openat(dirfd_, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static E4Handle *handle_at(const char *path)
{
	int fd = openat(dirfd_, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	E4Handle *h = e4_handle_of(fd);
	ck_assert_ptr_nonnull(h);
	close(fd);
	return h;
}

/* The first bytes read from fd. */
static char *content(int fd)
{
	char buf[64] = {0};
	ck_assert_int_ge(pread(fd, buf, sizeof(buf) - 1, 0), 0);
	return g_strdup(buf);
}

START_TEST(opens_the_object)
{
	ck_assert_int_eq(mkdirat(dirfd_, "d", 0755), 0);
	make_file("d/f", "one");
	g_autofree E4Handle *h = handle_at("d/f");
	int fd = e4_handle_open_path(dirfd_, "d/f", h, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	g_autofree char *c = content(fd);
	ck_assert_str_eq(c, "one");
	close(fd);
	g_autofree E4Handle *dh = handle_at("d");
	fd = e4_handle_open_path(dirfd_, "d", dh, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	g_autofree E4Handle *root = e4_handle_of(dirfd_);
	fd = e4_handle_open_path(dirfd_, ".", root, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = e4_handle_open_path(dirfd_, "", root, O_PATH);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* Flags are the caller's: a file is no directory. */
	ck_assert_int_eq(e4_handle_open_path(dirfd_, "d/f", h, O_RDONLY | O_DIRECTORY), -ESTALE);
}
END_TEST

START_TEST(renamed_or_replaced_is_stale)
{
	make_file("f", "old");
	make_file("g", "other");
	g_autofree E4Handle *h = handle_at("f");
	ck_assert_int_eq(renameat(dirfd_, "f", dirfd_, "moved"), 0);
	ck_assert_int_eq(e4_handle_open_path(dirfd_, "f", h, O_RDONLY), -ESTALE);
	/* Another object at the name: never opened as the old one. */
	ck_assert_int_eq(renameat(dirfd_, "g", dirfd_, "f"), 0);
	ck_assert_int_eq(e4_handle_open_path(dirfd_, "f", h, O_RDONLY), -ESTALE);
	/* Deleted and a new file made under the name (its inode may be reused). */
	ck_assert_int_eq(unlinkat(dirfd_, "moved", 0), 0);
	ck_assert_int_eq(unlinkat(dirfd_, "f", 0), 0);
	make_file("f", "new");
	ck_assert_int_eq(e4_handle_open_path(dirfd_, "f", h, O_RDONLY), -ESTALE);
}
END_TEST

START_TEST(nothing_is_followed)
{
	ck_assert_int_eq(mkdirat(dirfd_, "d", 0755), 0);
	make_file("d/f", "x");
	g_autofree E4Handle *h = handle_at("d/f");
	/* The same object, reached through a symlink or from outside. */
	ck_assert_int_eq(symlinkat("d", dirfd_, "link"), 0);
	ck_assert_int_eq(e4_handle_open_path(dirfd_, "link/f", h, O_RDONLY), -ESTALE);
	int sub = openat(dirfd_, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(sub, 0);
	ck_assert_int_eq(e4_handle_open_path(sub, "../d/f", h, O_RDONLY), -ESTALE);
	g_autofree char *abs = g_strdup_printf("%s/d/f", base);
	ck_assert_int_eq(e4_handle_open_path(sub, abs, h, O_RDONLY), -ESTALE);
	ck_assert_int_eq(e4_handle_open_path(dirfd_, "/proc/self/cwd", h, O_RDONLY), -ESTALE);
	close(sub);
}
END_TEST

START_TEST(longer_than_path_max)
{
	/* 40 directories of 120-byte names: 4,840 bytes of path. */
	GString *path = g_string_new(NULL);
	int cur = dup(dirfd_);
	for (int i = 0; i < 40; i++) {
		g_autofree char *name = g_strdup_printf("%02d%0118d", i, 0);
		ck_assert_int_eq(mkdirat(cur, name, 0755), 0);
		int next = openat(cur, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(next, 0);
		close(cur);
		cur = next;
		g_string_append_printf(path, "%s%s", i ? "/" : "", name);
	}
	int fd = openat(cur, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = openat(cur, "f", O_PATH | O_CLOEXEC);
	g_autofree E4Handle *h = e4_handle_of(fd);
	ck_assert_ptr_nonnull(h);
	close(fd);
	close(cur);
	g_string_append(path, "/f");
	ck_assert_int_gt(path->len, PATH_MAX);
	fd = e4_handle_open_path(dirfd_, path->str, h, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* A component that cannot exist: no piece can be cut. */
	char *huge = g_malloc(PATH_MAX + 10);
	memset(huge, 'a', PATH_MAX + 9);
	huge[PATH_MAX + 9] = '\0';
	ck_assert_int_eq(e4_handle_open_path(dirfd_, huge, h, O_RDONLY), -ENAMETOOLONG);
	g_free(huge);
	g_string_free(path, TRUE);
}
END_TEST

START_TEST(privileged_as_root)
{
	/* The unit tests run as root (or are meaningless for this check). */
	if (geteuid() == 0)
		ck_assert_int_eq(e4_handle_privileged(dirfd_), 1);
	else
		ck_assert_int_eq(e4_handle_privileged(dirfd_), 0);
}
END_TEST

static Suite *handle_suite(void)
{
	Suite *s = suite_create("handle");
	TCase *tc = tcase_create("path");
	tcase_add_checked_fixture(tc, setup, tmpdir_remove);
	tcase_add_test(tc, opens_the_object);
	tcase_add_test(tc, renamed_or_replaced_is_stale);
	tcase_add_test(tc, nothing_is_followed);
	tcase_add_test(tc, longer_than_path_max);
	tcase_add_test(tc, privileged_as_root);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(handle_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
