#include "superblock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "freespace.h"
#include "le.h"

/* On-disk offsets (little-endian), from the ext4 disk layout. */
#define SB_LOG_BLOCK_SIZE 0x18
#define SB_BLOCKS_PER_GROUP 0x20
#define SB_MAGIC 0x38
#define SB_FEATURE_INCOMPAT 0x60
#define SB_FEATURE_RO_COMPAT 0x64
#define SB_LOG_GROUPS_PER_FLEX 0x174
#define EXT_MAGIC 0xEF53


int e4_superblock_parse(const uint8_t *raw, size_t len, E4Geometry *geom)
{
	if (len < E4_SUPERBLOCK_SIZE)
		return -EINVAL;
	if ((raw[SB_MAGIC] | raw[SB_MAGIC + 1] << 8) != EXT_MAGIC)
		return -EINVAL;
	uint32_t log_bs = e4_le32(raw + SB_LOG_BLOCK_SIZE);
	uint32_t bpg = e4_le32(raw + SB_BLOCKS_PER_GROUP);
	uint32_t log_flex = raw[SB_LOG_GROUPS_PER_FLEX];
	/* Block sizes 1 KiB..64 KiB; a flex group of 2^31 groups is absurd. */
	if (log_bs > 6 || bpg == 0 || log_flex > 31)
		return -EINVAL;
	*geom = (E4Geometry){
		.block_size = 1024u << log_bs,
		.blocks_per_group = bpg,
		.log_groups_per_flex = log_flex,
		.feature_incompat = e4_le32(raw + SB_FEATURE_INCOMPAT),
		.feature_ro_compat = e4_le32(raw + SB_FEATURE_RO_COMPAT),
	};
	geom->flex_bg = geom->feature_incompat & E4_INCOMPAT_FLEX_BG;
	return 0;
}

int e4_superblock_read_device(const char *path, E4Geometry *geom)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint8_t raw[E4_SUPERBLOCK_SIZE];
	ssize_t got = pread(fd, raw, sizeof(raw), E4_SUPERBLOCK_OFFSET);
	int saved = errno;
	close(fd);
	if (got < 0)
		return -saved;
	return e4_superblock_parse(raw, (size_t)got, geom);
}

void e4_geometry_default(uint32_t block_size, E4Geometry *geom)
{
	*geom = (E4Geometry){
		.block_size = block_size,
		.blocks_per_group = block_size * 8,
		.log_groups_per_flex = 4,
		.flex_bg = true,
		.feature_incompat = E4_INCOMPAT_FLEX_BG,
	};
}

/* ext4's owners of metadata in GETFSMAP records (fs/ext4/fsmap.h). */
#define OWN_SUPERBLOCK FMR_OWNER('X', 1)
#define OWN_BLOCK_BITMAP FMR_OWNER('f', 3)

typedef struct {
	uint64_t sb[2];        /* bytes: the first two superblock copies */
	unsigned nsb;
	uint64_t bitmap_bytes; /* the first run of block bitmaps, 0 until seen */
} MapProbe;

static int probe_record(const struct fsmap *r, void *user)
{
	MapProbe *p = user;
	if (!(r->fmr_flags & FMR_OF_SPECIAL_OWNER))
		return 0;
	if (r->fmr_owner == OWN_SUPERBLOCK && p->nsb < 2)
		p->sb[p->nsb++] = r->fmr_physical;
	else if (r->fmr_owner == OWN_BLOCK_BITMAP && !p->bitmap_bytes)
		p->bitmap_bytes = r->fmr_length;
	return p->nsb == 2 && p->bitmap_bytes;
}

int e4_geometry_from_fsmap(int fd, uint32_t block_size, E4Geometry *geom)
{
	MapProbe p = {0};
	if (block_size == 0)
		return -EINVAL;
	int rc = e4_fsmap_walk(fd, probe_record, &p);
	if (rc < 0)
		return rc;
	uint64_t bpg = p.nsb == 2 && p.sb[1] > p.sb[0] ? (p.sb[1] - p.sb[0]) / block_size : 0;
	uint64_t bitmaps = p.bitmap_bytes / block_size;
	/* A group's block bitmap is one block: one bit per block of the group. */
	if (bpg == 0 || bpg % 8 || bpg > 8ull * block_size || bitmaps == 0)
		return -EINVAL;
	uint32_t log_flex = 0;
	while ((1ull << log_flex) < bitmaps && log_flex < 31)
		log_flex++;
	*geom = (E4Geometry){
		.block_size = block_size,
		.blocks_per_group = (uint32_t)bpg,
		.log_groups_per_flex = log_flex,
		.flex_bg = bitmaps > 1,
		.feature_incompat = bitmaps > 1 ? E4_INCOMPAT_FLEX_BG : 0,
	};
	return 0;
}
