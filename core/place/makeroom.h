/* Making room: when no free extent can take a file whole, clear one. The
 * region of the filesystem that takes the fewest blocks of other files to
 * clear (region.h) is emptied by moving those files' blocks into free
 * space elsewhere (EXT4_IOC_MOVE_EXT, so they stay in place and intact),
 * never leaving one of them in more runs than it had; then the freed
 * blocks are committed, and a donor for the file finds the region. The
 * kernel has no call to allocate at a chosen place: every allocation is
 * checked with FIEMAP, and blocks that land in the region are held apart,
 * so no moved file lands back in it. Root only. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "defrag.h"
#include "region.h"

typedef struct {
	E4Region region;           /* the region cleared */
	uint64_t bytes_moved;      /* of other files, moved out of it */
	uint64_t files_moved;
	uint64_t held_max;         /* the most free space held at once (blocks),
	                            * apart from the region itself */
	bool gave_way;             /* stopped because the free space left to
	                            * others fell under the bound (see below) */
	bool tried;                /* e4_defrag_file_making_room looked for room:
	                            * the file stayed above its ideal */
	int rc;                    /* then: 0 (room made), or why none was:
	                            * -ENOSPC (no region qualified, or none could
	                            * be cleared), -EFBIG (beyond the largest
	                            * region), -EBUSY, -ECANCELED, -errno */
} E4RoomMade;

/* Most bytes of other files moved to clear one region. */
#define E4_ROOM_MAX_MOVE_BYTES (512ull << 20)

/* The free space making room holds at once by default (opts->room_hold_bytes),
 * beyond the donor of the file being moved: the evacuation donor's room
 * outside the region (for a file, what it holds inside the region is the
 * file's donor-to-be; a compaction's region counts within the bound, so
 * its regions are at most half of it, and half of what is available). The
 * try gives way (stops at the next chunk,
 * frees all it holds, gave_way) as soon as others took a quarter of what
 * was available or what is left to them (statvfs f_bavail) falls under a
 * quarter of it: a writer filling the filesystem meanwhile gets ENOSPC no
 * earlier than without the job. No room is made with less than
 * E4_ROOM_MIN_FREE available. */
#define E4_ROOM_HOLD_DEFAULT (256ull << 20)
#define E4_ROOM_MIN_FREE (16ull << 20)

/* The largest region: room is made for files of at most this many
 * blocks (1 GiB at 4 KiB blocks). */
#define E4_ROOM_MAX_REGION_BLOCKS (1u << 18)

/* Smallest file a job makes room for: below it, the moves would cost
 * more than the runs they save. Blocks. */
#define E4_ROOM_MIN_FILE_BLOCKS 256

/* opts->room_hold_bytes, or E4_ROOM_HOLD_DEFAULT when 0. */
uint64_t e4_room_hold_bytes(const E4DefragOpts *opts);

/* Clears a region of `blocks` blocks (a power of two up to one placement
 * piece, E4_PLACE_PIECE_MAX, or whole pieces beyond; at most
 * E4_ROOM_MAX_REGION_BLOCKS), starting at a multiple of the largest power
 * of two dividing it (at most E4_MAX_EXTENT_BLOCKS), or, when no such
 * window qualifies, anywhere (its free extents are then filled with
 * e4_place_fit), of which the file needs `need` blocks (its span; the
 * rest may hold a few blocks that cannot move: their runs are bounded,
 * E4_REGION_UNKNOWN_PER), on the engine's filesystem, whose
 * root directory is open as root_fd, for the file with inode target (its
 * own blocks count as free: they leave with its move). opts->cancelled is
 * polled between files and chunks; opts->uid must be 0. Returns 0 with
 * the region free and committed, or -errno: EPERM (not root), ENOSPC (no
 * region can be cleared within E4_ROOM_MAX_MOVE_BYTES, or a file there may
 * not move: open by another, locked, ...), ECANCELED. Files already moved
 * stay moved, intact, whatever the return. */
int e4_make_room(E4Defrag *d, int root_fd, uint64_t blocks, uint64_t need, uint64_t target, const E4DefragOpts *opts,
		 E4RoomMade *out);

typedef struct {
	uint64_t region_blocks;    /* the size of each region cleared */
	uint64_t regions;          /* regions cleared */
	uint64_t bytes_moved;      /* other files' bytes moved */
	uint64_t files_moved;
	bool gave_way;             /* stopped for others' free space (E4RoomMade) */
} E4Compacted;

/* Consolidates free space alone, so that later large allocations find
 * room: clears, one after another, the aligned windows of one extent
 * (32,768 blocks; an eighth of a smaller filesystem, rounded down to a
 * power of two) that hold some data and at most half, fewest first,
 * until none is left or max_bytes were moved. Each is e4_make_room's
 * region, with its bounds. Root only. Returns 0 (also when nothing could
 * be cleared), -EPERM, -ECANCELED, or -errno. */
int e4_compact(E4Defrag *d, int root_fd, uint64_t max_bytes, const E4DefragOpts *opts, E4Compacted *out);

/* e4_defrag_file, and then, when the file is still above its ideal
 * (e4_defrag_needed) and the caller is root: e4_make_room for its data
 * blocks, and its blocks moved into pieces placed in the region
 * (probe.h), or when they cannot be placed within the fences' bound,
 * into one donor of the region's size in requests of powers of two when
 * that one has fewer runs than the file. *out tells the whole (runs before
 * the first try, after the last; bytes of the file moved by both); room
 * (zeroed when no room was made) what making room did. */
void e4_defrag_file_making_room(E4Defrag *d, int fd, int donor_dirfd, int root_fd, const E4DefragOpts *opts,
				E4FileDefrag *out, E4RoomMade *room);
