#include "blockmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <glib.h>

#include "fiemap.h"
#include "freespace.h"
#include "walk.h"

typedef struct {
	uint32_t bs;
	GArray *pieces;            /* E4Piece */
	GArray *files;             /* E4MapFile */
} Builder;

/* Records whose place is not a block of their own. */
#define NOT_BLOCKS (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_NOT_ALIGNED | \
		    FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_ENCODED)

static void add_free(uint64_t start, uint64_t blocks, void *user)
{
	Builder *b = user;
	E4Piece p = { .start = start, .len = blocks, .file = E4_PIECE_FREE };
	g_array_append_val(b->pieces, p);
}

static int add_file(int dirfd, const char *name, const struct stat *st, const char *path, void *user)
{
	(void)st;
	Builder *b = user;
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOATIME | O_CLOEXEC);
	if (fd < 0)
		return 0; /* its blocks stay unknown */
	E4ExtentMap map = {0};
	struct stat now;
	if (fstat(fd, &now) == 0 && e4_fiemap_read(fd, &map) == 0 && map.n > 0) {
		uint32_t idx = b->files->len;
		E4MapFile f = { g_strdup(path), now.st_ino };
		g_array_append_val(b->files, f);
		for (size_t i = 0; i < map.n; i++) {
			const E4Extent *e = &map.ext[i];
			if (e->flags & NOT_BLOCKS)
				continue;
			E4Piece p = { e->physical / b->bs, e->length / b->bs, e->logical / b->bs, idx };
			if (p.len)
				g_array_append_val(b->pieces, p);
		}
	}
	e4_extent_map_clear(&map);
	close(fd);
	return 0;
}

static gint by_start(gconstpointer a, gconstpointer b)
{
	const E4Piece *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

void e4_blockmap_finish(E4BlockMap *m)
{
	qsort(m->v, m->n, sizeof(*m->v), (int (*)(const void *, const void *))by_start);
	/* A file rewritten during the walk, or a free extent taken since
	 * GETFSMAP, overlaps another piece: neither can be trusted. */
	g_autofree bool *bad = g_new0(bool, m->n);
	uint64_t reach = 0;
	size_t reach_i = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (i > 0 && m->v[i].start < reach) {
			bad[i] = true;
			bad[reach_i] = true;
		}
		if (m->v[i].start + m->v[i].len > reach) {
			reach = m->v[i].start + m->v[i].len;
			reach_i = i;
		}
	}
	size_t kept = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!bad[i])
			m->v[kept++] = m->v[i];
	m->n = kept;
}

int e4_blockmap_read(int root_fd, dev_t dev, uint32_t bs, uint64_t total_blocks, E4BlockMap *out)
{
	*out = (E4BlockMap){ .total_blocks = total_blocks };
	Builder b = { .bs = bs, .pieces = g_array_new(FALSE, FALSE, sizeof(E4Piece)),
		      .files = g_array_new(FALSE, FALSE, sizeof(E4MapFile)) };
	/* Files first: a block freed between the two reads then shows as
	 * free and used (dropped), not as free only. */
	int rc = e4_walk(root_fd, dev, add_file, &b);
	if (rc == 0)
		rc = e4_freespace_each(root_fd, bs, add_free, &b);
	out->n = b.pieces->len;
	out->v = (E4Piece *)g_array_free(b.pieces, FALSE);
	out->nfiles = b.files->len;
	out->files = (E4MapFile *)g_array_free(b.files, FALSE);
	if (rc < 0) {
		e4_blockmap_clear(out);
		return rc;
	}
	e4_blockmap_finish(out);
	return 0;
}

void e4_blockmap_clear(E4BlockMap *m)
{
	for (size_t i = 0; i < m->nfiles; i++)
		g_free(m->files[i].path);
	g_free(m->files);
	g_free(m->v);
	*m = (E4BlockMap){0};
}
