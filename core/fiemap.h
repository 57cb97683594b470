/* Extent maps read with FS_IOC_FIEMAP. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One FIEMAP record. Offsets and length are in bytes, as the kernel gives
 * them; flags are FIEMAP_EXTENT_* bits, kept verbatim. */
typedef struct {
	uint64_t logical;
	uint64_t physical;
	uint64_t length;
	uint32_t flags;
} E4Extent;

typedef struct {
	E4Extent *ext;   /* records in logical order */
	size_t n;
	size_t cap;
} E4ExtentMap;

/* Reads the whole extent map of the open file fd with FIEMAP_FLAG_SYNC
 * (delayed allocations are flushed first so every record has a physical
 * place). Any number of records: the map grows as needed. map must be
 * zeroed or previously used; its old content is replaced.
 * Returns 0, or -errno (EOPNOTSUPP where the fs has no FIEMAP, ENOMEM). */
int e4_fiemap_read(int fd, E4ExtentMap *map);

/* Appends a record (the map grows as needed). Returns 0 or -ENOMEM. */
int e4_extent_map_push(E4ExtentMap *map, const E4Extent *e);

/* Frees the records; the map may be reused. */
void e4_extent_map_clear(E4ExtentMap *map);

/* Writes the names of the set flags into buf, joined by ','
 * ("last,unwritten"), or "-" when none; unknown bits as "0x...".
 * Always NUL-terminates (truncating) when len > 0. */
void e4_fiemap_flag_names(uint32_t flags, char *buf, size_t len);
