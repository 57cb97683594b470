/* Leaving the page cache as it was found: moving blocks reads every page
 * of the moved range into the cache, which a defragmenter must not leave
 * behind (nor warm beforehand: moving cached pages is several times slower). */
#pragma once

#include <stdint.h>

typedef struct {
	uint8_t *resident;   /* one byte per page, bit 0 = was resident */
	uint64_t pages;
} E4CacheSnapshot;

/* Records which pages of the first size bytes of fd are in the page cache,
 * without reading any (mmap + mincore). Returns 0 or -errno; on error the
 * snapshot is empty and restoring drops nothing. */
int e4_cache_snapshot(int fd, uint64_t size, E4CacheSnapshot *snap);

/* Drops from the cache the pages of [offset, offset + len) (bytes) that
 * were not resident in the snapshot, writing their dirty data back first
 * (never losing it). */
void e4_cache_restore(int fd, const E4CacheSnapshot *snap, uint64_t offset, uint64_t len);

void e4_cache_snapshot_clear(E4CacheSnapshot *snap);
