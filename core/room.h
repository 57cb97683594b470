/* The room donors come from: what the free space can offer a new
 * allocation, tracked between reads of the free-space map. Freed blocks
 * return to the allocator only when the journal transaction that freed
 * them commits, and GETFSMAP shows only those; the bytes moved since (each
 * moved byte frees its old block) are counted on top. Not thread-safe: the
 * caller serialises (the engine's allocation lock). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "freespace.h"

/* The map is read again when older than E4_ROOM_MAX_AGE_US (other
 * writers free and allocate too), or, after a forced commit put the moves'
 * frees on it, when older than E4_ROOM_MIN_AGE_US; and never sooner than
 * E4_ROOM_COST_FACTOR times the last read took, so that reading stays a
 * small share of the time whatever the map's size (~25 ms for ~100,000
 * free extents here). Microseconds. */
#define E4_ROOM_MAX_AGE_US (10 * 1000000LL)
#define E4_ROOM_MIN_AGE_US (1000000LL)
#define E4_ROOM_COST_FACTOR 50

/* A commit is worth forcing only when at least this much was moved since
 * the last one: a commit costs a journal write and a cache flush (a few
 * ms), moving 8 MiB takes far longer. Bytes. */
#define E4_ROOM_COMMIT_MIN_BYTES (8ull << 20)

typedef struct {
	uint32_t block_size;       /* bytes */
	E4FreeSpace free;          /* the last map read */
	bool known;                /* the map could be read (GETFSMAP, root) */
	int64_t read_at;           /* monotonic microseconds; 0 never read */
	int64_t read_cost;         /* how long the last read took, microseconds */
	uint64_t freed_unmapped;   /* bytes moved since the map was read */
	uint64_t freed_uncommitted; /* bytes moved since the last forced commit */
	bool committed;            /* a commit was forced since the map was read */
	uint64_t freed_total;      /* bytes moved in all */
	/* The last donor that came out in no fewer runs than its file: its
	 * mean run in blocks (0: none, or a better donor came since) and
	 * freed_total when it was allocated. */
	uint64_t miss_run;
	uint64_t miss_freed;
	int64_t miss_at;           /* monotonic microseconds */
} E4Room;

/* Donors smaller than this (blocks) are always tried and teach nothing:
 * they cost little to allocate, and the runs of small donors say more
 * about their neighbourhood than about the free space. */
#define E4_ROOM_LEARN_BLOCKS 4096

void e4_room_init(E4Room *r, uint32_t block_size);

/* Forgets the map and the last miss: the free space changed in a way the
 * counts do not tell (room was made: a region emptied and committed). */
void e4_room_reset(E4Room *r);

/* Reads the free-space map of the filesystem of fd now (at monotonic time
 * now_us), measuring how long that takes. A failure (not root, no
 * GETFSMAP) leaves the room unknown. */
void e4_room_read(E4Room *r, int fd, int64_t now_us);

/* True when a donor of `blocks` blocks for a file in `runs` runs is not
 * worth allocating (on free space in small pieces each one costs the
 * allocator a scan of every group), because either
 * - no allocation could come in fewer runs, even with everything moved
 *   since the map was read joined into one free extent (a bound from the
 *   map, read first when too old, see above; not applied when the free
 *   space is unknown), or
 * - the file has at least E4_ROOM_LEARN_BLOCKS blocks, and the last such
 *   donor came out in no fewer runs than its file, in runs no longer on
 *   average than this file's, less than this file's size was moved
 *   (freed) since, and it is not older than E4_ROOM_MAX_AGE_US (a lone
 *   request long after a job is always tried). */
bool e4_room_hopeless(E4Room *r, int fd, uint64_t blocks, uint32_t runs, int64_t now_us);

/* True when forcing a journal commit could give a donor of `bytes` bytes
 * more room: at least that much, and E4_ROOM_COMMIT_MIN_BYTES, was moved
 * since the last forced commit. */
bool e4_room_commit_may_help(const E4Room *r, uint64_t bytes);

/* After the caller forced a commit: every earlier free is allocatable and
 * would be on the map if it were read again. */
void e4_room_committed(E4Room *r);

/* A donor of `blocks` blocks came out in donor_runs runs for a file in
 * file_runs runs. */
void e4_room_donor(E4Room *r, uint64_t blocks, uint32_t donor_runs, uint32_t file_runs,
		   int64_t now_us);

/* bytes were moved out of their old blocks (which are now freed). */
void e4_room_freed(E4Room *r, uint64_t bytes);
