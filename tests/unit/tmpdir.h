/* A temporary directory for each test of a unit test program (a Check
 * fixture): base is its path, dirfd_ an fd of it; removed with all it
 * holds afterwards. Include once, in the test program. */
#pragma once

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <glib.h>

static char *base;
static int dirfd_;

/* tmpl: a g_dir_make_tmp template, "name-XXXXXX". */
static void tmpdir_make(const char *tmpl)
{
	base = g_dir_make_tmp(tmpl, NULL);
	ck_assert_ptr_nonnull(base);
	dirfd_ = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dirfd_, 0);
}

static void tmpdir_remove(void)
{
	close(dirfd_);
	g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", base);
	ck_assert_int_eq(system(cmd), 0);
	g_free(base);
}
