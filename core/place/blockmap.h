/* Who holds which blocks of a filesystem: its free extents (GETFSMAP) and
 * the data of its regular files (FIEMAP of every file, walked from the
 * filesystem's root). Everything else (metadata, extent-tree blocks,
 * directories, files being written meanwhile) is unknown, and a region
 * holding any of it cannot be cleared: EXT4_IOC_MOVE_EXT moves file data
 * only. Needs root (GETFSMAP, every file readable). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A run of blocks: free (file == E4_PIECE_FREE) or file data. Blocks. */
typedef struct {
	uint64_t start, len;
	uint64_t logical;          /* the file's block at start */
	uint32_t file;             /* index into files, or E4_PIECE_FREE */
} E4Piece;

#define E4_PIECE_FREE UINT32_MAX

typedef struct {
	char *path;                /* relative to the walk's root directory */
	uint64_t ino;
} E4MapFile;

typedef struct {
	uint64_t total_blocks;
	E4Piece *v;                /* free and used pieces, by start, not overlapping */
	size_t n;
	E4MapFile *files;
	size_t nfiles;
} E4BlockMap;

/* Maps the filesystem dev whose root directory is open as root_fd (block
 * size bs, total_blocks blocks). Files whose map changes meanwhile may
 * overlap others: pieces that overlap are dropped, as unknown. Returns 0
 * or -errno (EPERM without CAP_SYS_ADMIN, from GETFSMAP). */
int e4_blockmap_read(int root_fd, dev_t dev, uint32_t bs, uint64_t total_blocks, E4BlockMap *out);

/* Sorts pieces by start and drops those that overlap a neighbour (both of
 * them): used by e4_blockmap_read, and by tests to build maps. */
void e4_blockmap_finish(E4BlockMap *m);

void e4_blockmap_clear(E4BlockMap *m);
