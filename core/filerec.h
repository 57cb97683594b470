/* The tree's record of one cached file, in compact form: 40 bytes where
 * the figures alone take 72. Most files are a few extents (up to 127)
 * without hole or unwritten block, each a run of its own: their figures
 * are rebuilt from the size, the block count, the extent count, the first
 * block, the distance of the last block from first + blocks and the
 * geometry. Any other file (and one whose inode number needs more than 32
 * bits) keeps its full figures in an allocated side record. Not
 * thread-safe: a record is used by one thread at a time. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "figures.h"
#include "superblock.h"

typedef struct E4FileExtra E4FileExtra;

/* Fields are private: use the functions below. Packed to 4-byte alignment
 * so that an array of them has no padding (40 bytes each). */
typedef struct __attribute__((packed, aligned(4))) {
	uint32_t name;          /* offset of the name in its directory's name block */
	uint32_t ino;           /* the inode (extra: in the side record) */
	int64_t ctime_ns;       /* st_ctim when inspected, nanoseconds */
	uint64_t size;          /* st_size, bytes; extra: the side record's address */
	uint32_t blocks;        /* compact files: blocks mapped */
	uint32_t first_lo;      /* compact files: first physical block, low 32 bits */
	uint16_t first_hi;      /* ... and high 16 bits (ext4 addresses 48 bits) */
	uint16_t bits;          /* E4_FR_* flags, skip reason, form, extent count */
	int32_t end_delta;      /* compact files: end_block - (first_block + blocks) */
} E4FileRec;

/* Flags kept in a record. */
enum {
	E4_FR_VALID = 1 << 0,   /* inspected, and not vanished since */
	E4_FR_STALE = 1 << 1,   /* the watch named it since it was checked */
	E4_FR_MARKED = 1 << 2,  /* carries the exclusion mark (exclude.h) */
	E4_FR_LINKED = 1 << 3,  /* st_nlink > 1 when inspected */
};

/* A record for the name at offset name (in bytes) and inode ino: not
 * valid, analysed (skip -1), figures all zero. */
void e4_filerec_init(E4FileRec *r, uint32_t name, uint64_t ino);

/* Frees the side record, if any; r is then as after init with no name. */
void e4_filerec_clear(E4FileRec *r);

/* dst = src, with a side record of its own (dst is overwritten, not cleared). */
void e4_filerec_copy(E4FileRec *dst, const E4FileRec *src);

/* Stores the inode and its figures (computed with geom, as
 * e4_figures_compute does, or all zero but size); keeps the flags, skip
 * and ctime. */
void e4_filerec_set(E4FileRec *r, uint64_t ino, const E4FileFigures *fig, const E4Geometry *geom);

/* The figures as they were stored, rebuilt into *out. */
void e4_filerec_figures(const E4FileRec *r, const E4Geometry *geom, E4FileFigures *out);

uint64_t e4_filerec_ino(const E4FileRec *r);
uint64_t e4_filerec_size(const E4FileRec *r);

/* True when the figures (or the inode) needed a side record. */
bool e4_filerec_has_extra(const E4FileRec *r);

/* Bytes the side record takes (0 without one), for the cache's accounting. */
size_t e4_filerec_extra_bytes(const E4FileRec *r);

/* -1 analysed, else the E4SkipReason. */
int e4_filerec_skip(const E4FileRec *r);
void e4_filerec_set_skip(E4FileRec *r, int skip);

static inline bool e4_filerec_has(const E4FileRec *r, unsigned flag)
{
	return (r->bits & flag) != 0;
}

static inline void e4_filerec_put(E4FileRec *r, unsigned flag, bool on)
{
	r->bits = (uint16_t)(on ? r->bits | flag : r->bits & ~flag);
}

/* True when a == b, field by field. */
bool e4_figures_equal(const E4FileFigures *a, const E4FileFigures *b);
