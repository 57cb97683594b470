/* The few ext4 superblock fields the analysis needs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Allocation geometry of an ext4 filesystem. */
typedef struct {
	uint32_t block_size;          /* bytes */
	uint32_t blocks_per_group;    /* blocks */
	uint32_t log_groups_per_flex; /* meaningful only with flex_bg */
	bool flex_bg;
	uint32_t feature_incompat;    /* raw EXT4_FEATURE_INCOMPAT_* bits */
	uint32_t feature_ro_compat;   /* raw EXT4_FEATURE_RO_COMPAT_* bits */
} E4Geometry;

/* Byte offset and size of the primary superblock on the device. */
#define E4_SUPERBLOCK_OFFSET 1024
#define E4_SUPERBLOCK_SIZE 1024

#define E4_INCOMPAT_FLEX_BG 0x0200u
#define E4_INCOMPAT_INLINE_DATA 0x8000u
#define E4_RO_COMPAT_BIGALLOC 0x0200u

/* Parses a raw superblock (len >= E4_SUPERBLOCK_SIZE bytes, as read from
 * E4_SUPERBLOCK_OFFSET). Returns 0, or -EINVAL when the magic is not ext4's
 * or a field is out of range. */
int e4_superblock_parse(const uint8_t *raw, size_t len, E4Geometry *geom);

/* Reads and parses the superblock of the block device at path.
 * Returns 0 or -errno (EACCES when not root, EINVAL when not ext). */
int e4_superblock_read_device(const char *path, E4Geometry *geom);

/* Derives the geometry from the filesystem's own map (GETFSMAP, which
 * ext4 answers to any user), for when the device cannot be read: blocks
 * per group from the distance between the first two superblock copies
 * (groups 0 and 1: sparse_super keeps one in group 1), the flex group
 * size from the run of block bitmaps flex_bg packs into group 0 (rounded
 * up to a power of two: a filesystem with fewer groups than a flex group
 * has a shorter run, and then no file spans that many groups anyway).
 * Feature bits are unknown (0), flex_bg excepted. fd: any fd on the
 * filesystem; block_size in bytes. Returns 0, -errno of GETFSMAP, or
 * -EINVAL when the map does not show both (sparse_super2, not ext4). */
int e4_geometry_from_fsmap(int fd, uint32_t block_size, E4Geometry *geom);

/* The geometry mke2fs gives a default ext4 of this block size: what the
 * analysis assumes when the device cannot be read. */
void e4_geometry_default(uint32_t block_size, E4Geometry *geom);
