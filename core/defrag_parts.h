/* The steps of e4_defrag_file, for the core's other movers (pack.c) that
 * lay several files into one donor: the same checks, claims, page-cache
 * care and accounting as a defrag of one file. Not for the FUSE layer. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "defrag.h"
#include "donor.h"
#include "probe.h"

/* Checks that the regular file open as fd (O_PATH is enough) may be moved
 * by uid now (owner or root; not immutable, append-only, swap, locked by
 * another process, being moved by another job...), opens it read-write
 * and claims its inode. Files of one block are refused as too-small unless
 * one_block (one block is one run, but packing still moves it). Returns
 * the read-write fd, to give back with e4_defrag_dismiss, or -1 with the
 * reason in out (skipped or failed); out->size and out->ino are set when
 * the file could be examined. */
int e4_defrag_admit(E4Defrag *d, int fd, uid_t uid, bool one_block, E4FileDefrag *out);

/* An unnamed donor of `blocks` blocks from logical block 0, made in
 * dirfd, allocated while no other donor of the engine is (their pieces
 * would interleave); with pow2, in requests of powers of two
 * (e4_donor_create_pow2: to land in a cleared aligned region). Returns its
 * fd or -errno (ENOSPC...). */
int e4_defrag_new_donor(E4Defrag *d, int dirfd, uint64_t blocks, bool pow2);

/* e4_place_window (probe.h) for the window [start, start + blocks) with
 * pieces made in dirfd, while no other donor of the engine is allocated:
 * an allocation of another job between two probes would take the place
 * a probe was to find. 0 or -errno; out as e4_place_window's. */
int e4_defrag_place(E4Defrag *d, int dirfd, uint64_t start, uint64_t blocks, uint64_t max_fence, E4Placed *out);

/* e4_place_fit (probe.h) in the same way: need blocks in the window's free
 * extents. */
int e4_defrag_place_fit(E4Defrag *d, int dirfd, uint64_t start, uint64_t blocks, uint64_t need,
			uint64_t max_fence, E4Placed *out);

/* Tells the engine that room was made: what it learnt of the free space
 * (the map, the last donor that came out no better) no longer holds. */
void e4_defrag_room_changed(E4Defrag *d);

/* Releases the claim of e4_defrag_admit and closes rw. */
void e4_defrag_dismiss(E4Defrag *d, int rw, uint64_t ino);

/* Moves ranges (blocks) of the admitted file rw into donor, range i from
 * the donor's blocks at donor_starts[i] (NULL: at the file's own
 * offsets), a chunk at a time (opts->chunk_bytes), checking
 * opts->cancelled between chunks and reporting opts->progress. Adds the
 * bytes moved to out->bytes_moved; sets out's outcome on an error
 * (skipped no-space, busy, changed...; failed) or a cancel, and leaves it
 * alone otherwise. */
void e4_defrag_move(E4Defrag *d, int rw, int donor, const E4Ranges *ranges,
		    const uint64_t *donor_starts, const E4DefragOpts *opts, E4FileDefrag *out);
