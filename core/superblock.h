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

/* The geometry mke2fs gives a default ext4 of this block size: what the
 * analysis assumes when the device cannot be read. */
void e4_geometry_default(uint32_t block_size, E4Geometry *geom);
