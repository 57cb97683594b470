/* Defragmenting a subtree: plan (walk and map every file), then move the
 * files that need it, optionally worst first, on a few threads. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "defrag.h"
#include "makeroom.h"
#include "resume.h"

typedef struct {
	uint64_t files_total, files_done;   /* regular files of the subtree */
	uint64_t bytes_total, bytes_done;   /* of the files that need moving */
	uint64_t outcomes[E4_OUTCOME__COUNT];
	uint64_t skips[E4_DSKIP__COUNT];    /* per reason, of E4_OUTCOME_SKIPPED */
	uint64_t runs_before, runs_after;   /* over all analysed files */
	uint64_t bytes_moved;
	uint64_t room_bytes_moved;          /* other files' bytes moved to make room */
	uint64_t room_files_moved;          /* and those files (once per region) */
	uint64_t room_gave_way;             /* making room stopped for others' free
	                                     * space (then no more is made) */
	uint64_t room_for_bytes;            /* bytes of the files room was made
	                                     * for (in bytes_total too) */
	uint64_t retried;                   /* files given a second donor */
	uint64_t resumed;                   /* files passed over: finished by
	                                     * the job resumed (opts.done) */
	double seconds;
	int first_error;                    /* errno of the first failed file */
} E4DefragSummary;

typedef struct {
	E4DefragOpts file;      /* per-file options; its progress callback is
	                         * replaced, the others are used as given */
	bool worst_first;       /* most fragmented (e4defrag's rank) first; else walk order (large files first either way) */
	unsigned threads;       /* files moved at once (0: 1) */
	bool by_path;           /* reopen planned files by their path beneath the
	                         * job's directory, checked against their handles
	                         * (e4_handle_open_path), not by handle: a process
	                         * without CAP_DAC_READ_SEARCH */
	/* A third pass makes room (core/place/makeroom.h) for the files of
	 * 1 MiB to 1 GiB still above their ideal, largest first, one at a time:
	 * root jobs only. room_fd: a directory fd of the ext4 mount point. */
	bool make_room;
	int room_fd;
	/* Files finished by an earlier job (same inode, size and mtime) are
	 * passed over unexamined and counted as resumed; NULL: none. */
	const E4Resume *done;
	/* When not NULL, gets every file that ended improved, optimal,
	 * no-gain or skipped (not excluded), and those of done passed over:
	 * the done set of the next job. */
	E4Resume *finished;
	/* Called (serialized) whenever the summary changes, with the path of
	 * the file being moved (relative to the subtree) or NULL. */
	void (*progress)(const E4DefragSummary *now, const char *current, void *user);
	/* Called after each file with its path and result. */
	void (*file_done)(const char *path, const E4FileDefrag *res, void *user);
	/* Called in the third pass after each file room was looked for
	 * (room->tried), with what making room did and the file's result. */
	void (*room_done)(const char *path, const E4FileDefrag *res, const E4RoomMade *room, void *user);
} E4DefragTreeOpts;

/* Defragments every regular file below directory dirfd on the engine's
 * filesystem, each inode once. Returns 0 (outcomes are in *out), or -errno
 * when dirfd itself cannot be walked, or -ECANCELED when cancelled. */
int e4_defrag_tree(E4Defrag *d, int dirfd, const E4DefragTreeOpts *opts, E4DefragSummary *out);

/* Progress in percent: of the bytes to move, or of the files when there
 * are no bytes to move. */
double e4_defrag_percent(const E4DefragSummary *s);

/* dst += src, every count (and seconds). */
void e4_defrag_summary_merge(E4DefragSummary *dst, const E4DefragSummary *src);

/* Counts one file's result into a summary. */
void e4_defrag_summary_add(E4DefragSummary *s, const E4FileDefrag *res);
