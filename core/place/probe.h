/* Donor blocks at a chosen place: a free aligned window is filled with
 * pieces allocated one at a time, each an unnamed file of its own, kept
 * where FIEMAP shows it landed in the window, and held apart (a fence)
 * where it did not, so that the allocator does not offer that place
 * again. The kernel has no call to allocate at a given block: a request
 * of 2^k blocks goes to a free aligned buddy of order k, but on a
 * filesystem of 16 groups or more (mb_optimize_scan) to one in a group
 * whose largest free buddy is of order k if there is one, then k + 1 and
 * so on: a wholly free group, the usual cleared region, comes last.
 * Fences are bounded; closing their files frees them. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Unnamed files made for placing a window: its pieces, in window order,
 * and the fences. */
typedef struct {
	int *piece_fd;             /* n pieces, piece_blocks each; -1: none */
	uint64_t n;
	uint64_t piece_blocks;     /* e4_place_window's; e4_place_fit's vary: */
	uint64_t *piece_len;       /* blocks of each piece, once placed */
	uint64_t runs;             /* physical runs of the pieces, about (each
	                            * piece one, e4_placed_append's its own) */
	int *fence_fd;
	uint64_t nfences;
	uint64_t fenced_blocks;    /* what the fences hold */
} E4Placed;

/* The largest piece: a power of two one fallocate request reaches the
 * allocator with (an unwritten extent holds at most 32767 blocks). */
#define E4_PLACE_PIECE_MAX 16384

/* Fills the free window [start, start + blocks) (blocks: a power of two
 * up to E4_PLACE_PIECE_MAX, or a multiple of it; start a multiple of the
 * piece) with pieces made in the directory dirfd (on the filesystem),
 * fencing the allocations that land elsewhere while they hold at most
 * max_fence blocks. block_size: bytes. Returns 0 with every piece in
 * place, or -errno: ENOSPC (the fences reached their bound, or the
 * filesystem is full), or an error of open, fallocate, FIEMAP. Whatever
 * it returns, out holds the files made: e4_placed_clear closes them. */
int e4_place_window(int dirfd, uint64_t start, uint64_t blocks, uint32_t block_size, uint64_t max_fence,
		    E4Placed *out);

/* Pieces that are not worth placing: smaller than this (blocks), a
 * request lands in a hole of its size anywhere (swiss cheese). */
#define E4_PLACE_FIT_MIN 256

/* Requests of e4_place_fit that may land elsewhere before it gives up
 * (what a miss took inside the window is given back, so a miss need not
 * hold anything). */
#define E4_PLACE_FIT_MISSES 32

/* Fills the free extents of the window [start, start + blocks) with pieces
 * until they hold need blocks, for a window that holds a few blocks that
 * cannot move (extent-tree leaves, at most one per 512 blocks: no aligned
 * piece of e4_place_window fits the slots they are in). Each request is
 * one fallocate of the largest free extent left in the window (GETFSMAP),
 * at most E4_PLACE_PIECE_MAX blocks, at least E4_PLACE_FIT_MIN: mballoc
 * puts a request of that size in a free extent that holds it, and on
 * fragmented free space those are in the cleared window. A piece is kept
 * when FIEMAP shows it wholly inside the window (in one run or more),
 * fenced otherwise (at most max_fence blocks, as e4_place_window), less
 * what it took inside the window: that is punched out of the fence and
 * committed, free for the next request. The pieces come out in
 * physical order (piece_len each), so that data moved into them in that
 * order runs on across their seams. Returns 0 with need blocks placed, or
 * -errno: ENOSPC (no free extent left in the window worth a piece, or the
 * fences reached their bound, or E4_PLACE_FIT_MISSES requests missed),
 * or an error of open, fallocate, FIEMAP,
 * GETFSMAP. out holds the files made either way: e4_placed_clear. */
int e4_place_fit(int dirfd, uint64_t start, uint64_t blocks, uint64_t need, uint32_t block_size,
		 uint64_t max_fence, E4Placed *out);

/* Adds fd (len blocks, in runs runs) as the last piece of p. */
void e4_placed_append(E4Placed *p, int fd, uint64_t len, uint32_t runs);

/* Closes the fences (their blocks are free again once the journal
 * commits), keeping the pieces. */
void e4_placed_drop_fences(E4Placed *p);

/* Closes every file of p. */
void e4_placed_clear(E4Placed *p);
