#include "itable.h"
#include "crc32c.h"
#include "exclude.h"
#include "le.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/fiemap.h>
#include <glib.h>

/* On-disk offsets (fs/ext4/ext4.h). Superblock: */
#define SB_INODES_COUNT 0x00
#define SB_BLOCKS_LO 0x04
#define SB_FIRST_DATA_BLOCK 0x14
#define SB_INODES_PER_GROUP 0x28
#define SB_REV_LEVEL 0x4C
#define SB_INODE_SIZE 0x58
#define SB_UUID 0x68
#define SB_DESC_SIZE 0xFE
#define SB_BLOCKS_HI 0x150
#define SB_CHECKSUM_SEED 0x270

#define INCOMPAT_META_BG 0x10u
#define INCOMPAT_64BIT 0x80u
#define INCOMPAT_CSUM_SEED 0x2000u
#define RO_COMPAT_HUGE_FILE 0x8u
#define RO_COMPAT_GDT_CSUM 0x10u
#define RO_COMPAT_METADATA_CSUM 0x400u

/* Group descriptor: */
#define GD_INODE_TABLE_LO 0x08
#define GD_FLAGS 0x12
#define GD_ITABLE_UNUSED_LO 0x1C
#define GD_INODE_TABLE_HI 0x28
#define GD_INODE_UNINIT 0x1u

/* Inode: */
#define I_MODE 0x00
#define I_SIZE_LO 0x04
#define I_CTIME 0x0C
#define I_LINKS 0x1A
#define I_BLOCKS_LO 0x1C
#define I_FLAGS 0x20
#define I_BLOCK 0x28
#define I_BLOCK_LEN 60
#define I_GENERATION 0x64
#define I_FILE_ACL_LO 0x68
#define I_SIZE_HI 0x6C
#define I_BLOCKS_HI 0x74
#define I_FILE_ACL_HI 0x76
#define I_CSUM_LO 0x7C
#define I_EXTRA_ISIZE 0x80
#define I_CSUM_HI 0x82
#define I_CTIME_EXTRA 0x84
#define GOOD_OLD_INODE_SIZE 128
#define INODE_SIZE_READ 1024 /* the largest inode read raw */

#define FL_HUGE_FILE 0x40000u
#define FL_EXTENTS 0x80000u
#define FL_INLINE_DATA 0x10000000u

/* Extent tree: */
#define EH_MAGIC 0xF30Au
#define EH_SIZE 12
#define EXT_INIT_MAX_LEN 32768u
#define MAX_DEPTH 5

/* Extended attributes: */
#define XATTR_MAGIC 0xEA020000u
#define XATTR_BLOCK_HEADER 32
#define XATTR_ENTRY_SIZE 16
#define XATTR_INDEX_USER 1
#define EXCLUDE_SUFFIX (&E4_EXCLUDE_XATTR[sizeof("user.") - 1])

/* Inode-table bytes one pread brings: 64 inodes of 256 bytes. */
#define WINDOW (16u << 10)

struct E4Itable {
	int fd;
	dev_t dev;
	uint32_t block_size;
	uint32_t inode_size;
	uint32_t inodes_per_group;
	uint64_t inodes_count;
	uint64_t blocks_count;
	uint32_t ngroups;
	uint64_t *itable;   /* each group's inode table, in blocks */
	uint32_t *used;     /* each group's initialised inodes */
	uint32_t desc_size;
	uint64_t gdt_block;
	bool unused_kept;   /* group checksums: bg_itable_unused is kept */
	bool csum;          /* metadata_csum: every inode and extent block */
	bool huge_file;
	uint32_t csum_seed; /* the filesystem's checksum seed */
};

struct E4ItableCursor {
	uint64_t window; /* byte offset of buf on the device, or UINT64_MAX */
	uint32_t window_len;
	uint8_t *buf;    /* WINDOW bytes */
	uint8_t *block;  /* one block, for extent and xattr blocks */
};

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t got = pread(fd, buf, len, (off_t)off);
	if (got < 0)
		return -errno;
	return (size_t)got == len ? 0 : -EIO;
}

/* The fields beyond e4_superblock_parse's (magic, block size, blocks per
 * group and feature bits, checked there) that reading inodes needs. */
static int parse_super(E4Itable *it, const uint8_t *sb)
{
	E4Geometry g;
	if (e4_superblock_parse(sb, E4_SUPERBLOCK_SIZE, &g) < 0)
		return -EINVAL;
	/* Clusters change what a block count means; meta_bg scatters the
	 * descriptors: the kernel's path serves both. */
	if ((g.feature_ro_compat & E4_RO_COMPAT_BIGALLOC) || (g.feature_incompat & INCOMPAT_META_BG))
		return -EOPNOTSUPP;
	it->block_size = g.block_size;
	it->inode_size = e4_le32(sb + SB_REV_LEVEL) == 0 ? GOOD_OLD_INODE_SIZE : e4_le16(sb + SB_INODE_SIZE);
	it->inodes_per_group = e4_le32(sb + SB_INODES_PER_GROUP);
	it->inodes_count = e4_le32(sb + SB_INODES_COUNT);
	it->blocks_count = e4_le32(sb + SB_BLOCKS_LO);
	it->desc_size = 32;
	if (g.feature_incompat & INCOMPAT_64BIT) {
		it->blocks_count |= (uint64_t)e4_le32(sb + SB_BLOCKS_HI) << 32;
		it->desc_size = e4_le16(sb + SB_DESC_SIZE);
	}
	uint32_t bpg = g.blocks_per_group, first = e4_le32(sb + SB_FIRST_DATA_BLOCK);
	bool sane = it->inode_size >= GOOD_OLD_INODE_SIZE && it->inode_size <= it->block_size &&
		    (it->inode_size & (it->inode_size - 1)) == 0 && it->inodes_per_group > 0 &&
		    it->desc_size >= 32 && it->desc_size <= 1024 && it->blocks_count > first;
	if (!sane)
		return -EINVAL;
	it->ngroups = (uint32_t)((it->blocks_count - first + bpg - 1) / bpg);
	it->gdt_block = first + 1;
	it->unused_kept = g.feature_ro_compat & (RO_COMPAT_GDT_CSUM | RO_COMPAT_METADATA_CSUM);
	it->huge_file = g.feature_ro_compat & RO_COMPAT_HUGE_FILE;
	it->csum = g.feature_ro_compat & RO_COMPAT_METADATA_CSUM;
	it->csum_seed = g.feature_incompat & INCOMPAT_CSUM_SEED ? e4_le32(sb + SB_CHECKSUM_SEED)
								: e4_crc32c(~0u, sb + SB_UUID, 16);
	return 0;
}

/* Each group's inode table and how much of it is in use
 * (bg_itable_unused, kept with group checksums; without them every inode
 * counts). The count grows as files are made. */
int e4_itable_refresh(E4Itable *it)
{
	size_t len = (size_t)it->ngroups * it->desc_size;
	g_autofree uint8_t *gdt = g_malloc(len);
	int rc = pread_all(it->fd, gdt, len, it->gdt_block * it->block_size);
	if (rc < 0)
		return rc;
	if (!it->itable) {
		it->itable = g_new(uint64_t, it->ngroups);
		it->used = g_new(uint32_t, it->ngroups);
	}
	for (uint32_t g = 0; g < it->ngroups; g++) {
		const uint8_t *d = gdt + (size_t)g * it->desc_size;
		uint64_t table = e4_le32(d + GD_INODE_TABLE_LO);
		if (it->desc_size >= 64)
			table |= (uint64_t)e4_le32(d + GD_INODE_TABLE_HI) << 32;
		uint32_t used = it->inodes_per_group;
		if (it->unused_kept)
			used = e4_le16(d + GD_FLAGS) & GD_INODE_UNINIT ? 0 : used - MIN(used, e4_le16(d + GD_ITABLE_UNUSED_LO));
		it->itable[g] = table;
		it->used[g] = used;
	}
	return 0;
}

int e4_itable_open(const char *device, dev_t dev, E4Itable **out)
{
	*out = NULL;
	int fd = open(device, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	E4Itable *it = g_new0(E4Itable, 1);
	it->fd = fd;
	it->dev = dev;
	struct stat st;
	uint8_t sb[E4_SUPERBLOCK_SIZE];
	int rc = fstat(fd, &st) < 0 ? -errno : 0;
	if (rc == 0 && (!S_ISBLK(st.st_mode) || st.st_rdev != dev))
		rc = -ENODEV;
	if (rc == 0)
		rc = pread_all(fd, sb, sizeof(sb), E4_SUPERBLOCK_OFFSET);
	if (rc == 0)
		rc = parse_super(it, sb);
	if (rc == 0)
		rc = e4_itable_refresh(it);
	if (rc < 0) {
		e4_itable_free(it);
		return rc;
	}
	*out = it;
	return 0;
}

void e4_itable_free(E4Itable *it)
{
	if (!it)
		return;
	close(it->fd);
	g_free(it->itable);
	g_free(it->used);
	g_free(it);
}

E4ItableCursor *e4_itable_cursor_new(const E4Itable *it)
{
	E4ItableCursor *cur = g_new0(E4ItableCursor, 1);
	cur->window = UINT64_MAX;
	cur->buf = g_malloc(WINDOW);
	cur->block = g_malloc(it->block_size);
	return cur;
}

void e4_itable_cursor_free(E4ItableCursor *cur)
{
	if (!cur)
		return;
	g_free(cur->buf);
	g_free(cur->block);
	g_free(cur);
}

/* The raw inode ino, through the cursor's window; NULL when it is not in
 * an initialised part of a table or cannot be read. */
static const uint8_t *raw_inode(const E4Itable *it, E4ItableCursor *cur, uint64_t ino)
{
	if (ino == 0 || ino > it->inodes_count)
		return NULL;
	uint64_t g = (ino - 1) / it->inodes_per_group, index = (ino - 1) % it->inodes_per_group;
	if (g >= it->ngroups || index >= it->used[g])
		return NULL;
	uint64_t off = it->itable[g] * it->block_size + index * it->inode_size;
	if (cur->window == UINT64_MAX || off < cur->window || off + it->inode_size > cur->window + cur->window_len) {
		/* A window never runs past the group's table. */
		uint64_t table_end = it->itable[g] * it->block_size + (uint64_t)it->used[g] * it->inode_size;
		uint64_t start = off - off % WINDOW;
		start = MAX(start, it->itable[g] * it->block_size);
		uint32_t len = (uint32_t)MIN((uint64_t)WINDOW - start % WINDOW, table_end - start);
		cur->window = UINT64_MAX;
		if (pread_all(it->fd, cur->buf, len, start) < 0)
			return NULL;
		cur->window = start;
		cur->window_len = len;
	}
	return cur->buf + (off - cur->window);
}

/* Whether the stored checksum of raw inode ino holds (fs/ext4/inode.c,
 * ext4_inode_csum: the two checksum fields count as zeros). */
static bool inode_csum_ok(const E4Itable *it, const uint8_t *raw, uint64_t ino, uint32_t *seed)
{
	uint8_t le[4] = { (uint8_t)ino, (uint8_t)(ino >> 8), (uint8_t)(ino >> 16), (uint8_t)(ino >> 24) };
	uint32_t s = e4_crc32c(it->csum_seed, le, 4);
	*seed = e4_crc32c(s, raw + I_GENERATION, 4);
	if (!it->csum)
		return true;
	static const uint8_t zero[2] = { 0, 0 };
	uint32_t c = e4_crc32c(*seed, raw, I_CSUM_LO);
	c = e4_crc32c(c, zero, 2);
	c = e4_crc32c(c, raw + I_CSUM_LO + 2, GOOD_OLD_INODE_SIZE - I_CSUM_LO - 2);
	uint32_t stored = e4_le16(raw + I_CSUM_LO);
	if (it->inode_size > GOOD_OLD_INODE_SIZE) {
		uint32_t extra = e4_le16(raw + I_EXTRA_ISIZE);
		bool has_hi = GOOD_OLD_INODE_SIZE + extra >= I_CSUM_HI + 2;
		c = e4_crc32c(c, raw + GOOD_OLD_INODE_SIZE, I_CSUM_HI - GOOD_OLD_INODE_SIZE);
		uint32_t at = I_CSUM_HI;
		if (has_hi) {
			c = e4_crc32c(c, zero, 2);
			stored |= (uint32_t)e4_le16(raw + I_CSUM_HI) << 16;
			at += 2;
		}
		c = e4_crc32c(c, raw + at, it->inode_size - at);
		if (!has_hi)
			c &= 0xffffu;
	} else {
		c &= 0xffffu;
	}
	return c == stored;
}

typedef struct {
	const E4Itable *it;
	E4ItableCursor *cur;
	E4ExtentMap *map;
	uint32_t seed;       /* the inode's checksum seed */
	uint64_t next_lblk;  /* extents must come in logical order */
} Walk;

/* Checks an extent node's header: entries within max, max within room. */
static bool header_ok(const uint8_t *node, size_t room, int want_depth)
{
	uint16_t entries = e4_le16(node + 2), max = e4_le16(node + 4), depth = e4_le16(node + 6);
	return e4_le16(node) == EH_MAGIC && max > 0 && entries <= max && (size_t)EH_SIZE + max * 12u <= room &&
	       (want_depth < 0 ? depth <= MAX_DEPTH : depth == (uint16_t)want_depth);
}

/* An extent tree entry's fields (ext4_extent, ext4_extent_idx). */
static uint64_t leaf_start(const uint8_t *e)
{
	return (uint64_t)e4_le16(e + 6) << 32 | e4_le32(e + 8);
}

/* A leaf's length in blocks; *unwritten when it is flagged so. */
static uint32_t leaf_len(const uint8_t *e, bool *unwritten)
{
	uint32_t len = e4_le16(e + 4);
	*unwritten = len > EXT_INIT_MAX_LEN;
	return *unwritten ? len - EXT_INIT_MAX_LEN : len;
}

static uint64_t index_child(const uint8_t *e)
{
	return (uint64_t)e4_le16(e + 8) << 32 | e4_le32(e + 4);
}

static int walk_node(Walk *w, const uint8_t *node, size_t room, int want_depth);

static int push_leaf(Walk *w, const uint8_t *e)
{
	uint32_t lblk = e4_le32(e);
	bool unwritten;
	uint32_t len = leaf_len(e, &unwritten);
	uint64_t pblk = leaf_start(e);
	if (len == 0 || lblk < w->next_lblk || pblk == 0 || pblk + len > w->it->blocks_count)
		return -EAGAIN;
	w->next_lblk = (uint64_t)lblk + len;
	uint64_t bs = w->it->block_size;
	E4Extent x = {
		.logical = lblk * bs,
		.physical = pblk * bs,
		.length = len * bs,
		.flags = unwritten ? FIEMAP_EXTENT_UNWRITTEN : 0,
	};
	return e4_extent_map_push(w->map, &x) < 0 ? -ENOMEM : 0;
}

/* Reads the child block of an index entry and walks it (each level in its
 * own buffer: the parent's entries are still being read). */
static int walk_child(Walk *w, const uint8_t *idx, int depth)
{
	uint64_t leaf = index_child(idx);
	uint32_t bs = w->it->block_size;
	if (leaf == 0 || leaf >= w->it->blocks_count)
		return -EAGAIN;
	g_autofree uint8_t *blk = g_malloc(bs); /* the recursion needs its own */
	if (pread_all(w->it->fd, blk, bs, leaf * bs) < 0 || !header_ok(blk, bs, depth))
		return -EAGAIN;
	if (w->it->csum) {
		size_t tail = EH_SIZE + e4_le16(blk + 4) * 12u;
		if (tail + 4 > bs || e4_crc32c(w->seed, blk, tail) != e4_le32(blk + tail))
			return -EAGAIN;
	}
	return walk_node(w, blk, bs, depth);
}

static int walk_node(Walk *w, const uint8_t *node, size_t room, int want_depth)
{
	if (!header_ok(node, room, want_depth))
		return -EAGAIN;
	uint16_t entries = e4_le16(node + 2), depth = e4_le16(node + 6);
	for (uint16_t i = 0; i < entries; i++) {
		const uint8_t *e = node + EH_SIZE + 12u * i;
		int rc = depth == 0 ? push_leaf(w, e) : walk_child(w, e, depth - 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Looks for the exclusion mark in a run of xattr entries at [p, end);
 * values at base + offset. Returns 1 marked, 0 not, -EAGAIN malformed. */
static int find_mark(const uint8_t *p, const uint8_t *end, const uint8_t *base)
{
	const size_t want = strlen(EXCLUDE_SUFFIX);
	while (p + 4 <= end && e4_le32(p) != 0) {
		if (p + XATTR_ENTRY_SIZE > end)
			return -EAGAIN;
		uint8_t name_len = p[0], index = p[1];
		uint32_t value_offs = e4_le16(p + 2), value_inum = e4_le32(p + 4), value_size = e4_le32(p + 8);
		const uint8_t *name = p + XATTR_ENTRY_SIZE;
		if (name + name_len > end)
			return -EAGAIN;
		if (index == XATTR_INDEX_USER && name_len == want && memcmp(name, EXCLUDE_SUFFIX, want) == 0) {
			if (value_inum != 0 || value_size != 1)
				return 1; /* anything but "0" */
			if (base + value_offs + 1 > end)
				return -EAGAIN;
			return base[value_offs] != '0';
		}
		p += (XATTR_ENTRY_SIZE + name_len + 3u) & ~3u;
	}
	return 0;
}

static int xattr_mark(const E4Itable *it, E4ItableCursor *cur, const uint8_t *raw)
{
	int mark = 0;
	if (it->inode_size > GOOD_OLD_INODE_SIZE) {
		uint32_t extra = e4_le16(raw + I_EXTRA_ISIZE);
		const uint8_t *hdr = raw + GOOD_OLD_INODE_SIZE + extra;
		const uint8_t *end = raw + it->inode_size;
		if (GOOD_OLD_INODE_SIZE + extra + 4 > it->inode_size)
			return extra + GOOD_OLD_INODE_SIZE > it->inode_size ? -EAGAIN : 0;
		if (e4_le32(hdr) == XATTR_MAGIC)
			mark = find_mark(hdr + 4, end, hdr + 4);
	}
	uint64_t acl = e4_le32(raw + I_FILE_ACL_LO) | (uint64_t)e4_le16(raw + I_FILE_ACL_HI) << 32;
	if (mark != 0 || acl == 0)
		return mark;
	uint32_t bs = it->block_size;
	if (acl >= it->blocks_count || pread_all(it->fd, cur->block, bs, acl * bs) < 0 ||
	    e4_le32(cur->block) != XATTR_MAGIC)
		return -EAGAIN;
	return find_mark(cur->block + XATTR_BLOCK_HEADER, cur->block + bs, cur->block);
}

/* Linked, with its blocks in an extent tree (not inline, not block-mapped). */
static bool extent_mapped(const uint8_t *raw)
{
	uint32_t flags = e4_le32(raw + I_FLAGS);
	return e4_le16(raw + I_LINKS) != 0 && (flags & FL_EXTENTS) && !(flags & FL_INLINE_DATA);
}

static void fill_stat(const E4Itable *it, const uint8_t *raw, uint64_t ino, struct stat *st)
{
	*st = (struct stat){ .st_ino = ino, .st_dev = it->dev };
	st->st_mode = e4_le16(raw + I_MODE);
	st->st_nlink = e4_le16(raw + I_LINKS);
	st->st_size = (off_t)(e4_le32(raw + I_SIZE_LO) | (uint64_t)e4_le32(raw + I_SIZE_HI) << 32);
	uint64_t blocks = e4_le32(raw + I_BLOCKS_LO);
	if (it->huge_file) {
		blocks |= (uint64_t)e4_le16(raw + I_BLOCKS_HI) << 32;
		if (e4_le32(raw + I_FLAGS) & FL_HUGE_FILE)
			blocks *= it->block_size / 512;
	}
	st->st_blocks = (blkcnt_t)blocks;
	/* ext4_decode_extra_time: two epoch bits above the signed 32-bit
	 * seconds, nanoseconds in the rest. */
	st->st_ctim.tv_sec = (int32_t)e4_le32(raw + I_CTIME);
	if (it->inode_size > GOOD_OLD_INODE_SIZE && e4_le16(raw + I_EXTRA_ISIZE) >= I_CTIME_EXTRA + 4 - GOOD_OLD_INODE_SIZE) {
		uint32_t extra = e4_le32(raw + I_CTIME_EXTRA);
		st->st_ctim.tv_sec += (time_t)(extra & 3u) << 32;
		st->st_ctim.tv_nsec = extra >> 2;
	}
}

static int map_raw(E4Itable *it, E4ItableCursor *cur, const uint8_t *raw, uint32_t seed, E4ExtentMap *map)
{
	Walk w = { it, cur, map, seed, 0 };
	map->n = 0;
	int rc = walk_node(&w, raw + I_BLOCK, I_BLOCK_LEN, -1);
	if (rc == 0 && map->n)
		map->ext[map->n - 1].flags |= FIEMAP_EXTENT_LAST;
	return rc;
}

/* The blocks worth reading ahead for one raw inode seen by the prefetch: a
 * directory's blocks (getdents reads them) and the first level of any
 * deeper extent tree (the raw reading preads it). */
static void prefetch_inode(const E4Itable *it, const uint8_t *raw)
{
	uint16_t mode = e4_le16(raw + I_MODE);
	if (!extent_mapped(raw) || !(S_ISDIR(mode) || S_ISREG(mode)))
		return;
	const uint8_t *node = raw + I_BLOCK;
	if (!header_ok(node, I_BLOCK_LEN, -1))
		return;
	uint16_t entries = e4_le16(node + 2), depth = e4_le16(node + 6);
	if (depth == 0 && !S_ISDIR(mode))
		return;
	for (uint16_t i = 0; i < entries; i++) {
		const uint8_t *e = node + EH_SIZE + 12u * i;
		bool unwritten;
		uint64_t start = depth ? index_child(e) : leaf_start(e);
		uint64_t len = depth ? 1 : leaf_len(e, &unwritten);
		if (start && len && start + len <= it->blocks_count)
			posix_fadvise(it->fd, (off_t)(start * it->block_size), (off_t)(len * it->block_size),
				      POSIX_FADV_WILLNEED);
	}
}

int e4_itable_prefetch(E4Itable *it, const int *stop)
{
	const size_t chunk = 1u << 20;
	g_autofree uint8_t *buf = g_malloc(chunk);
	for (uint32_t g = 0; g < it->ngroups; g++) {
		uint64_t start = it->itable[g] * it->block_size;
		uint64_t end = start + (uint64_t)it->used[g] * it->inode_size;
		for (uint64_t off = start; off < end; off += chunk) {
			if (__atomic_load_n(stop, __ATOMIC_RELAXED))
				return -ECANCELED;
			size_t len = (size_t)MIN((uint64_t)chunk, end - off);
			int rc = pread_all(it->fd, buf, len, off);
			if (rc < 0)
				return rc;
			for (size_t at = 0; at + it->inode_size <= len; at += it->inode_size)
				prefetch_inode(it, buf + at);
		}
	}
	return 0;
}

int e4_itable_inspect(E4Itable *it, E4ItableCursor *cur, uint64_t ino, const E4Geometry *geom,
		      E4ExtentMap *map, E4FileResult *out, bool *marked)
{
	*out = (E4FileResult){ .skip = -1 };
	*marked = false;
	const uint8_t *raw = raw_inode(it, cur, ino);
	uint32_t seed;
	if (!raw || !inode_csum_ok(it, raw, ino, &seed))
		return -EAGAIN;
	/* Inodes of more than 1 KiB (mke2fs allows up to a block) were
	 * never met here: declined rather than read untested. */
	if (!S_ISREG(e4_le16(raw + I_MODE)) || !extent_mapped(raw) || it->inode_size > INODE_SIZE_READ)
		return -EAGAIN;
	/* raw stays valid: only raw_inode moves the cursor's window. */
	int mark = xattr_mark(it, cur, raw);
	if (mark < 0)
		return -EAGAIN;
	*marked = mark;
	fill_stat(it, raw, ino, &out->st);
	if (out->st.st_size == 0 || out->st.st_blocks == 0) {
		out->skip = E4_SKIP_EMPTY;
		return 0;
	}
	E4ExtentMap own = {0};
	E4ExtentMap *m = map ? map : &own;
	int rc = map_raw(it, cur, raw, seed, m);
	if (rc == 0) {
		e4_figures_compute(m, (uint64_t)out->st.st_size, geom, &out->fig);
		if (out->fig.blocks == 0)
			out->skip = E4_SKIP_NO_EXTENTS;
	}
	e4_extent_map_clear(&own);
	return rc < 0 ? -EAGAIN : 0;
}
