/* Reading files' inodes straight from the block device's page cache.
 *
 * A cold scan spends most of its time in four system calls per file
 * (open, fstat, FIEMAP, close) and a fifth for the exclusion mark, each of
 * them a path lookup and a round trip into the kernel. The same facts
 * (type, size, blocks, links, ctime, extent map, the exclusion xattr) are
 * in the inode tables and extent blocks, which ext4 keeps in the page cache
 * of the block device it is mounted from: reading them there through a
 * read-only descriptor of the device costs one pread per 16 KiB of inode
 * table (64 inodes) and one per extent block, and sees what ext4 itself
 * sees, including what the journal has not yet written home (the buffers
 * are the same pages). What it does not see is data not yet allocated
 * (delayed allocation): the caller syncs the filesystem before a scan that
 * reads this way, as FIEMAP_FLAG_SYNC would file by file.
 *
 * Nothing read here is trusted blindly: every structure is checked (magics,
 * counts, depths, extents inside the filesystem and in logical order) and,
 * with metadata_csum, every inode and extent block must match its
 * checksum, so that a block read while ext4 was changing it is refused.
 * Whatever cannot be read with confidence (inline data, block-mapped
 * files, anything odd) is answered with -EAGAIN: ask the kernel. Only root
 * can open the device (root:disk 0660); everyone else keeps the kernel's
 * path. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fiemap.h"
#include "inspect.h"
#include "superblock.h"

typedef struct E4Itable E4Itable;

/* Opens device (the mounted filesystem's block device; its st_rdev must be
 * dev, the st_dev of the filesystem's files) read-only and reads its
 * superblock and group descriptors. Returns 0 and *out, or -errno:
 * EACCES/EPERM not allowed to read the device; ENODEV it is not the device
 * of dev; EOPNOTSUPP a layout this reader does not handle (bigalloc,
 * meta_bg); EINVAL not ext4 or a damaged superblock; EIO. */
int e4_itable_open(const char *device, dev_t dev, E4Itable **out);

void e4_itable_free(E4Itable *it);

/* Reads the group descriptors again: inodes made since the last reading
 * beyond a group's old high-water mark are otherwise declined. Not while
 * other threads read through it. Returns 0 or -errno. */
int e4_itable_refresh(E4Itable *it);

/* A reader's cache of the last inode-table window it read (and scratch for
 * extent blocks). One per thread; cheap to make. */
typedef struct E4ItableCursor E4ItableCursor;

E4ItableCursor *e4_itable_cursor_new(const E4Itable *it);
void e4_itable_cursor_free(E4ItableCursor *cur);

/* Inspects the regular file with inode number ino from its raw inode, as
 * e4_inspect_at would (the same out: st's st_ino, st_mode, st_nlink,
 * st_size, st_blocks, st_ctim and st_dev filled, the rest zero; the same
 * skip rules; figures from the same extent map FIEMAP gives), and sets
 * *marked when the file carries a true E4_EXCLUDE_XATTR. map is scratch the
 * caller may reuse (NULL for a private one).
 * Returns 0, or -EAGAIN when the raw copy cannot answer with confidence
 * (not a regular file, unlinked, inline data, no extent tree, a checksum or
 * structure that does not hold, an unreadable block): the caller then asks
 * the kernel. */
int e4_itable_inspect(E4Itable *it, E4ItableCursor *cur, uint64_t ino, const E4Geometry *geom,
		      E4ExtentMap *map, E4FileResult *out, bool *marked);

/* Warms the page cache for a scan of the whole filesystem: reads the used
 * part of every inode table in 1 MiB reads (sequential, where the scan's
 * own reads would be scattered) and asks the device to read ahead every
 * directory's blocks and the first level of every deeper extent tree,
 * which the scan's directory reads and raw inspections then find there.
 * Returns early (-ECANCELED) once *stop is nonzero, checked between reads:
 * a scan that ends first stops it. Returns 0, or -errno of a read. */
int e4_itable_prefetch(E4Itable *it, const int *stop);
