/* Facts about the ext4 filesystem under a source path. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "superblock.h"

#define E4_EXT4_ROOT_INO 2 /* the root directory's inode on ext2/3/4 */

typedef struct {
	char *source_dir;    /* canonical path of the analysed directory */
	char *mountpoint;    /* mount point of the ext4 fs holding it */
	char *device;        /* the mount's source device (e.g. /dev/loop0) */
	char *options;       /* the mount's full option string */
	dev_t dev;           /* st_dev of every object on the fs */
	bool read_only;
	bool data_journal;   /* data=journal: online defrag is impossible */
	bool data_writeback; /* data=writeback: moved data is not ordered before the swap */
	bool dax;
	E4Geometry geom;     /* block_size always valid */
	int geom_error;      /* 0 when geom came from the superblock, else the
	                      * -errno of reading it (not root: the device is
	                      * root:disk 0660); geom then comes from the
	                      * filesystem's map (e4_geometry_from_fsmap) */
	bool geom_default;   /* neither could be read: mke2fs's defaults */
} E4FsInfo;

/* Resolves source (a directory on a mounted ext4 fs, or a mounted ext4
 * block device, which stands for its mount point) and gathers the facts.
 * Returns 0 and a new *out, or -errno:
 *   ENOENT etc.  the path cannot be resolved (from stat/realpath)
 *   ENOTDIR      neither a directory nor a block device
 *   ENXIO        a block device that is not mounted
 *   EMEDIUMTYPE  not on ext4 (statfs magic and mount type must both say so)
 *   ENOMEM */
int e4_fsinfo_resolve(const char *source, E4FsInfo **out);

void e4_fsinfo_free(E4FsInfo *fs);
