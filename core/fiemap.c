#include "fiemap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <linux/fiemap.h>

/* Records fetched per ioctl: large enough that most files need one call,
 * small enough to stay on the stack-free heap cheaply (32 KiB). */
#define BATCH 584

int e4_extent_map_push(E4ExtentMap *map, const E4Extent *e)
{
	if (map->n == map->cap) {
		size_t cap = map->cap ? map->cap * 2 : 16;
		E4Extent *ext = realloc(map->ext, cap * sizeof(*ext));
		if (!ext)
			return -ENOMEM;
		map->ext = ext;
		map->cap = cap;
	}
	map->ext[map->n++] = *e;
	return 0;
}

static int map_push(E4ExtentMap *map, const struct fiemap_extent *fe)
{
	E4Extent e = {
		.logical = fe->fe_logical,
		.physical = fe->fe_physical,
		.length = fe->fe_length,
		.flags = fe->fe_flags,
	};
	return e4_extent_map_push(map, &e);
}

#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define MARK_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED(p, n)
#else
#define MARK_DEFINED(p, n) ((void)(p), (void)(n))
#endif

int e4_fiemap_read(int fd, E4ExtentMap *map)
{
	size_t bytes = sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(bytes);
	if (!fm)
		return -ENOMEM;
	map->n = 0;

	uint64_t start = 0;
	int rc = 0;
	for (;;) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			rc = -errno;
			break;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		/* The kernel wrote them; valgrind's model of this ioctl does not
		 * know it (the unit tests run under memcheck in CI). */
		MARK_DEFINED(fm->fm_extents, fm->fm_mapped_extents * sizeof(struct fiemap_extent));
		bool last = false;
		for (uint32_t i = 0; i < fm->fm_mapped_extents && rc == 0; i++) {
			rc = map_push(map, &fm->fm_extents[i]);
			last = fm->fm_extents[i].fe_flags & FIEMAP_EXTENT_LAST;
		}
		if (rc < 0 || last)
			break;
		const struct fiemap_extent *tail = &fm->fm_extents[fm->fm_mapped_extents - 1];
		uint64_t next = tail->fe_logical + tail->fe_length;
		/* Guard against a kernel that does not advance: never loop forever. */
		if (next <= start)
			break;
		start = next;
	}
	free(fm);
	return rc;
}

void e4_extent_map_clear(E4ExtentMap *map)
{
	free(map->ext);
	*map = (E4ExtentMap){0};
}

static const struct {
	uint32_t bit;
	const char *name;
} flag_names[] = {
	{ FIEMAP_EXTENT_LAST, "last" },
	{ FIEMAP_EXTENT_UNKNOWN, "unknown" },
	{ FIEMAP_EXTENT_DELALLOC, "delalloc" },
	{ FIEMAP_EXTENT_ENCODED, "encoded" },
	{ FIEMAP_EXTENT_DATA_ENCRYPTED, "encrypted" },
	{ FIEMAP_EXTENT_NOT_ALIGNED, "not_aligned" },
	{ FIEMAP_EXTENT_DATA_INLINE, "inline" },
	{ FIEMAP_EXTENT_DATA_TAIL, "tail" },
	{ FIEMAP_EXTENT_UNWRITTEN, "unwritten" },
	{ FIEMAP_EXTENT_MERGED, "merged" },
	{ FIEMAP_EXTENT_SHARED, "shared" },
};

void e4_fiemap_flag_names(uint32_t flags, char *buf, size_t len)
{
	if (len == 0)
		return;
	buf[0] = '\0';
	size_t used = 0;
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++) {
		if (!(flags & flag_names[i].bit))
			continue;
		flags &= ~flag_names[i].bit;
		int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", flag_names[i].name);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
	if (flags) {
		int w = snprintf(buf + used, len - used, "%s0x%x", used ? "," : "", flags);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
	if (used == 0)
		snprintf(buf, len, "-");
}
