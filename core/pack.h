/* Packing: the regular files of a directory laid end to end, in readdir
 * order, in one region, so that reading the directory's files in the
 * order tar, cp -r, find and rsync read them is one sequential read. One
 * donor per directory, each file moved into it at its own offset
 * (EXT4_IOC_MOVE_EXT with distinct starts). */
#pragma once

#include "defragtree.h"

/* Packs the files directly in directory dirfd, then each subdirectory's
 * in its own region, depth first in readdir order. Each inode is moved
 * once (a hard link's other names are passed over); every file the engine
 * would refuse to defragment is skipped for the same reason (except that
 * one-block files are packed too). A directory whose donor would not lie
 * in fewer pieces than its files now do moves nothing (no-gain). opts'
 * threads and worst_first are not used. Returns 0 (outcomes in *out), or
 * -errno when dirfd cannot be listed, or -ECANCELED. */
int e4_pack_tree(E4Defrag *d, int dirfd, const E4DefragTreeOpts *opts, E4DefragSummary *out);

