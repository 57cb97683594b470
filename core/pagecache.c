#include "pagecache.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

static uint64_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (uint64_t)p : 4096;
}

int e4_cache_snapshot(int fd, uint64_t offset, uint64_t len, E4CacheSnapshot *snap)
{
	e4_cache_snapshot_clear(snap);
	if (len == 0)
		return 0;
	uint64_t ps = page_size();
	uint64_t first = offset / ps, end = (offset + len + ps - 1) / ps;
	size_t bytes = (size_t)((end - first) * ps);
	void *map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, (off_t)(first * ps));
	if (map == MAP_FAILED)
		return -errno;
	uint8_t *vec = malloc(end - first);
	int rc = 0;
	if (!vec)
		rc = -ENOMEM;
	else if (mincore(map, bytes, vec) < 0)
		rc = -errno;
	munmap(map, bytes);
	if (rc < 0) {
		free(vec);
		return rc;
	}
	*snap = (E4CacheSnapshot){ vec, first, end - first };
	return 0;
}

void e4_cache_drop(int fd, uint64_t offset, uint64_t len)
{
	/* Dirty pages are not dropped by DONTNEED: write them back first. */
	sync_file_range(fd, (off_t)offset, (off_t)len,
			SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
	posix_fadvise(fd, (off_t)offset, (off_t)len, POSIX_FADV_DONTNEED);
}

/* Writes back and drops pages [first, end). */
static void drop(int fd, uint64_t first, uint64_t end, uint64_t ps)
{
	e4_cache_drop(fd, first * ps, (end - first) * ps);
}

/* Page p (a file page index) inside the snapshot. */
static bool was_resident(const E4CacheSnapshot *snap, uint64_t p)
{
	return snap->resident[p - snap->first] & 1;
}

typedef void (*RunFn)(int fd, uint64_t first, uint64_t end, uint64_t ps);

/* Calls fn for each maximal run of pages in the byte range whose
 * residency bit equals `resident`. */
static void for_runs(int fd, const E4CacheSnapshot *snap, uint64_t offset, uint64_t len,
		     bool resident, RunFn fn)
{
	uint64_t ps = page_size();
	uint64_t p = offset / ps, end = (offset + len + ps - 1) / ps;
	uint64_t snap_end = snap->first + snap->pages;
	if (p < snap->first)
		p = snap->first;
	if (end > snap_end)
		end = snap_end;
	while (p < end) {
		if (was_resident(snap, p) != resident) {
			p++;
			continue;
		}
		uint64_t q = p;
		while (q < end && was_resident(snap, q) == resident)
			q++;
		fn(fd, p, q, ps);
		p = q;
	}
}

static void rewarm(int fd, uint64_t first, uint64_t end, uint64_t ps)
{
	posix_fadvise(fd, (off_t)(first * ps), (off_t)((end - first) * ps), POSIX_FADV_WILLNEED);
}

void e4_cache_prepare(int fd, const E4CacheSnapshot *snap, uint64_t offset, uint64_t len)
{
	if (snap->resident)
		for_runs(fd, snap, offset, len, true, drop);
}

void e4_cache_restore(int fd, const E4CacheSnapshot *snap, uint64_t offset, uint64_t len)
{
	if (!snap->resident)
		return;
	for_runs(fd, snap, offset, len, false, drop);
	for_runs(fd, snap, offset, len, true, rewarm);
}

/* The kernel reads at most max(read_ahead_kb, max_sectors_kb) of one
 * readahead call and silently drops the rest (on a loop device 2.5 MiB
 * of a 4 MiB chunk); 128 KiB is below both on any ordinary device. */
#define FILL_STEP (128u << 10)

void e4_cache_fill(int fd, uint64_t offset, uint64_t len)
{
	for (uint64_t done = 0; done < len; done += FILL_STEP) {
		uint64_t n = len - done < FILL_STEP ? len - done : FILL_STEP;
		readahead(fd, (off_t)(offset + done), (size_t)n);
	}
}

void e4_cache_writeback(int fd, uint64_t offset, uint64_t len)
{
	if (len)
		sync_file_range(fd, (off_t)offset, (off_t)len, SYNC_FILE_RANGE_WRITE);
}

void e4_cache_snapshot_clear(E4CacheSnapshot *snap)
{
	free(snap->resident);
	*snap = (E4CacheSnapshot){0};
}
