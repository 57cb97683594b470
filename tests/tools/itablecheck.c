/*
 * itablecheck - compares what core/itable.c reads from the block device
 * with what the kernel answers (open, fstat, FIEMAP, getxattr) for every
 * regular file under a directory, for the integration tests.
 *
 *   itablecheck DEVICE DIR
 *   itablecheck DEVICE DIR INO
 *
 * Syncs the filesystem first (as a scan that reads inodes raw does). For
 * each file: the raw reading must either decline (-EAGAIN: the kernel's
 * path is then used) or give exactly the kernel's st_size, st_blocks,
 * st_nlink, st_ctim, skip reason, figures and exclusion mark. Prints one
 * line per difference and a summary "files N raw R declined D differ X".
 * Exit 0 when nothing differs, 1 when something does, 2 on bad usage or
 * when the device cannot be opened. With INO, only that inode is read raw
 * and "raw" or "declined" printed (exit 0 either way).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "exclude.h"
#include "fsinfo.h"
#include "inspect.h"
#include "itable.h"

typedef struct {
	E4Itable *it;
	E4ItableCursor *cur;
	E4Geometry geom;
	unsigned long files, raw, declined, differ;
} Check;

static Check check; /* nftw passes no user pointer */

static void differ(const char *path, const char *what, unsigned long long k, unsigned long long r)
{
	printf("%s: %s kernel %llu raw %llu\n", path, what, k, r);
}

static int compare(const char *path, const E4FileResult *k, bool kmark, const E4FileResult *r, bool rmark)
{
	int bad = 0;
#define SAME(what, a, b) \
	if ((unsigned long long)(a) != (unsigned long long)(b)) { \
		differ(path, what, (unsigned long long)(a), (unsigned long long)(b)); \
		bad = 1; \
	}
	SAME("size", k->st.st_size, r->st.st_size);
	SAME("blocks", k->st.st_blocks, r->st.st_blocks);
	SAME("nlink", k->st.st_nlink, r->st.st_nlink);
	SAME("ctime_sec", k->st.st_ctim.tv_sec, r->st.st_ctim.tv_sec);
	SAME("ctime_nsec", k->st.st_ctim.tv_nsec, r->st.st_ctim.tv_nsec);
	SAME("skip", k->skip, r->skip);
	SAME("marked", kmark, rmark);
	if (k->skip < 0) {
		SAME("fig.records", k->fig.records, r->fig.records);
		SAME("fig.blocks", k->fig.blocks, r->fig.blocks);
		SAME("fig.runs", k->fig.runs, r->fig.runs);
		SAME("fig.e4_phys_runs", k->fig.e4_phys_runs, r->fig.e4_phys_runs);
		SAME("fig.holes", k->fig.holes, r->fig.holes);
		SAME("fig.unwritten", k->fig.unwritten_blocks, r->fig.unwritten_blocks);
		SAME("fig.flags", k->fig.flags, r->fig.flags);
		SAME("fig.first_block", k->fig.first_block, r->fig.first_block);
		SAME("fig.end_block", k->fig.end_block, r->fig.end_block);
	}
#undef SAME
	return bad;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	check.files++;
	E4FileResult r;
	bool rmark;
	if (e4_itable_inspect(check.it, check.cur, st->st_ino, &check.geom, NULL, &r, &rmark) == -EAGAIN) {
		check.declined++;
		return 0;
	}
	check.raw++;
	E4FileResult k;
	if (e4_inspect_at(AT_FDCWD, path, &check.geom, NULL, &k) != 0) {
		printf("%s: the kernel's inspection failed\n", path);
		check.differ++;
		return 0;
	}
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool kmark = fd >= 0 && e4_exclude_marked(fd);
	if (fd >= 0)
		close(fd);
	check.differ += compare(path, &k, kmark, &r, rmark);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: itablecheck DEVICE DIR [INO]\n");
		return 2;
	}
	E4FsInfo *info;
	int rc = e4_fsinfo_resolve(argv[2], &info);
	if (rc == 0)
		rc = e4_itable_open(argv[1], info->dev, &check.it);
	if (rc < 0) {
		fprintf(stderr, "itablecheck: %s: %s\n", argv[1], strerror(-rc));
		return 2;
	}
	check.geom = info->geom;
	check.cur = e4_itable_cursor_new(check.it);
	int fd = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (fd < 0 || syncfs(fd) < 0) {
		perror("itablecheck: syncfs");
		return 2;
	}
	close(fd);
	if (argc == 4) {
		E4FileResult r;
		bool mark;
		rc = e4_itable_inspect(check.it, check.cur, strtoull(argv[3], NULL, 10), &check.geom, NULL, &r, &mark);
		printf("%s\n", rc == -EAGAIN ? "declined" : "raw");
		fflush(stdout); /* before a sanitizer's exit could drop it */
	} else {
		nftw(argv[2], visit, 64, FTW_PHYS | FTW_MOUNT);
		printf("files %lu raw %lu declined %lu differ %lu\n", check.files, check.raw, check.declined,
		       check.differ);
	}
	e4_itable_cursor_free(check.cur);
	e4_itable_free(check.it);
	e4_fsinfo_free(info);
	return check.differ ? 1 : 0;
}
