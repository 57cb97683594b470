/* What the pictures of core/map.h show, read from the filesystem. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "map.h"
#include "tree.h"

/* Blocks of bs bytes of the filesystem on device dev: the device's size
 * (sysfs, readable by anyone), else statvfs's f_blocks of fd. 0 when
 * neither answers. */
uint64_t e4_map_fs_blocks(dev_t dev, int fd, uint32_t bs);

/* Classifies the whole filesystem (total_blocks blocks of bs bytes) for
 * the map of the directory dirfd on it (filesystem dev): its subtree's
 * data, contiguous or fragmented (more runs than ideal), from the tree's
 * cached figures (a file of one run is placed from them; a file of more
 * runs is mapped with FIEMAP), free space from GETFSMAP, the rest other
 * data. Fills g (initialised here) and *sum with the subtree's figures.
 * Returns 0 or -errno (of the scan of dirfd). */
int e4_map_dir_grid(E4Tree *tree, int dirfd, dev_t dev, uint32_t bs, uint64_t total_blocks,
		    E4MapGrid *g, E4Summary *sum);
