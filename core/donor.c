#include "donor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int e4_data_ranges(const E4ExtentMap *map, uint64_t size, uint32_t block_size, E4Ranges *out)
{
	*out = (E4Ranges){0};
	uint64_t eof = (size + block_size - 1) / block_size;
	out->v = calloc(map->n ? map->n : 1, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (size_t i = 0; i < map->n; i++) {
		uint64_t start = map->ext[i].logical / block_size;
		uint64_t end = (map->ext[i].logical + map->ext[i].length) / block_size;
		if (end > eof)
			end = eof;
		if (start >= end)
			continue;
		E4Range *last = out->n ? &out->v[out->n - 1] : NULL;
		if (last && last->start + last->len == start)
			last->len += end - start;
		else
			out->v[out->n++] = (E4Range){ start, end - start };
	}
	return 0;
}

void e4_ranges_clear(E4Ranges *r)
{
	free(r->v);
	*r = (E4Ranges){0};
}

uint64_t e4_ranges_blocks(const E4Ranges *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].len;
	return n;
}

int e4_donor_create(int dirfd, const E4Ranges *ranges, uint32_t block_size)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < ranges->n; i++) {
		off_t off = (off_t)(ranges->v[i].start * block_size);
		off_t len = (off_t)(ranges->v[i].len * block_size);
		if (fallocate(fd, 0, off, len) < 0) {
			int rc = -errno;
			close(fd);
			return rc;
		}
	}
	return fd;
}
