#include "mapscan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fiemap.h"
#include "figures.h"
#include "freespace.h"
#include "walk.h"

uint64_t e4_map_fs_blocks(dev_t dev, int fd, uint32_t bs)
{
	char path[64];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/size", major(dev), minor(dev));
	g_autofree char *text = NULL;
	if (bs && g_file_get_contents(path, &text, NULL, NULL)) {
		uint64_t sectors = g_ascii_strtoull(text, NULL, 10);
		if (sectors)
			return sectors * 512 / bs;
	}
	struct statvfs sv;
	if (bs && fstatvfs(fd, &sv) == 0)
		return (uint64_t)sv.f_blocks * sv.f_frsize / bs;
	return 0;
}

typedef struct {
	E4MapGrid *g;
	int dirfd;
	uint32_t bs;
} Ctx;

static void add_free(uint64_t start, uint64_t blocks, void *user)
{
	e4_map_grid_add(user, start, blocks, E4_CELL_FREE);
}

static int add_file(const E4TreeFile *f, void *user)
{
	Ctx *c = user;
	if (f->skip >= 0 || f->fig->blocks == 0)
		return 0;
	E4CellClass cls = e4_figures_fragmented(f->fig) ? E4_CELL_FRAGMENTED : E4_CELL_CONTIGUOUS;
	if (f->fig->runs <= 1) {
		/* One physical run: where it lies is in the figures. */
		e4_map_grid_add(c->g, f->fig->first_block, f->fig->end_block - f->fig->first_block, cls);
		return 0;
	}
	int fd = openat(c->dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	E4ExtentMap map = {0};
	if (e4_fiemap_read(fd, &map) == 0)
		for (size_t i = 0; i < map.n; i++)
			e4_map_grid_add(c->g, map.ext[i].physical / c->bs, map.ext[i].length / c->bs, cls);
	e4_extent_map_clear(&map);
	close(fd);
	return 0;
}

/* Adds the files of dirfd and of its subdirectories. */
static void add_dir(E4Tree *tree, int dirfd, dev_t dev, Ctx *c, unsigned depth)
{
	Ctx here = { c->g, dirfd, c->bs };
	if (e4_tree_dir_files(tree, dirfd, add_file, &here) < 0 || depth > 4096)
		return;
	struct stat st;
	E4DirList list = {0};
	if (fstat(dirfd, &st) < 0 || e4_dir_list(dirfd, &st, dev, &list) < 0)
		return;
	for (size_t i = 0; i < list.n; i++) {
		if (list.v[i].kind != E4_ENTRY_DIR)
			continue;
		int fd = e4_open_subdir(dirfd, list.v[i].name, dev, &st);
		if (fd < 0)
			continue;
		add_dir(tree, fd, dev, c, depth + 1);
		close(fd);
	}
	e4_dir_list_clear(&list);
}

int e4_map_dir_grid(E4Tree *tree, int dirfd, dev_t dev, uint32_t bs, uint64_t total_blocks,
		    E4MapGrid *g, E4Summary *sum)
{
	e4_map_grid_init(g, total_blocks);
	E4TreeResult res;
	int rc = e4_tree_scan(tree, dirfd, 0, &res);
	if (rc < 0)
		return rc;
	*sum = res.sum;
	e4_tree_result_clear(&res);
	/* Without GETFSMAP the free space is unknown: drawn as other data. */
	(void)e4_freespace_each(dirfd, bs, add_free, g);
	Ctx c = { g, dirfd, bs };
	add_dir(tree, dirfd, dev, &c, 0);
	return 0;
}
