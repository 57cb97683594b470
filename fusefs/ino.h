/* FUSE inode numbers: a node's is its real inode number times 16 (the
 * root's is FUSE_ROOT_ID), an attribute file's is its node's base plus
 * 1 + the attribute's id. No table is needed to find an attribute. */
#pragma once

#include <stdint.h>

#define E4_INO_SHIFT 4

static inline uint64_t e4_ino_base(uint64_t real_ino)
{
	return real_ino << E4_INO_SHIFT;
}

static inline uint64_t e4_ino_real(uint64_t fuse_ino)
{
	return fuse_ino >> E4_INO_SHIFT;
}

/* -1 for a node, else the attribute id. */
static inline int e4_ino_attr(uint64_t fuse_ino)
{
	return (int)(fuse_ino & ((1u << E4_INO_SHIFT) - 1)) - 1;
}
