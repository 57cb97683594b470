/* Online defragmentation of one file: check, allocate a donor, compare,
 * move with EXT4_IOC_MOVE_EXT. The file never moves, stays open for
 * others, and its content, timestamps and holes never change. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "figures.h"
#include "fsinfo.h"
#include "throttle.h"

typedef enum {
	E4_OUTCOME_IMPROVED,   /* blocks moved, fewer runs */
	E4_OUTCOME_OPTIMAL,    /* already optimal, or good enough: nothing to do */
	E4_OUTCOME_NO_GAIN,    /* the donor was not better: nothing moved */
	E4_OUTCOME_SKIPPED,    /* cannot or may not be done; see E4DefragSkip */
	E4_OUTCOME_FAILED,     /* an error; see error */
	E4_OUTCOME_CANCELLED,  /* stopped between chunks on request */
	E4_OUTCOME__COUNT
} E4Outcome;

typedef enum {
	E4_DSKIP_NONE,
	E4_DSKIP_NOT_OWNER,    /* only the owner or root may defragment */
	E4_DSKIP_IMMUTABLE,
	E4_DSKIP_APPEND_ONLY,
	E4_DSKIP_SWAPFILE,     /* an active swap file */
	E4_DSKIP_LOCKED,       /* a lock or lease of another process */
	E4_DSKIP_RUNNING,      /* a running executable (ETXTBSY) */
	E4_DSKIP_INLINE_DATA,
	E4_DSKIP_ENCRYPTED,
	E4_DSKIP_DATA_JOURNAL, /* data=journal mount or chattr +j */
	E4_DSKIP_NON_EXTENT,   /* ext3-style block-mapped file */
	E4_DSKIP_DAX,
	E4_DSKIP_BIGALLOC,
	E4_DSKIP_TOO_SMALL,    /* empty or one block */
	E4_DSKIP_NO_SPACE,     /* not enough free space for a donor */
	E4_DSKIP_READ_ONLY,    /* read-only filesystem */
	E4_DSKIP_BUSY,         /* another job of this process is moving it, or the
				* kernel kept answering EBUSY (pages held by others) */
	E4_DSKIP_NOT_REGULAR,  /* not a regular file (any more) */
	E4_DSKIP_CHANGED,      /* truncated or punched by another process mid-move */
	E4_DSKIP_NO_DONOR_DIR, /* no directory on the filesystem the daemon may
				* create a donor in (an unprivileged daemon) */
	E4_DSKIP_NOT_WRITABLE, /* the daemon may not open the file for writing
				* (an unprivileged daemon, a file without w bit) */
	E4_DSKIP_EXCLUDED,     /* marked user.e4infofs.exclude, or below a
				* directory that is (core/exclude.h) */
	E4_DSKIP__COUNT
} E4DefragSkip;

/* Stable short names ("improved", "immutable", ...), for text and JSON. */
const char *e4_outcome_name(E4Outcome o);
const char *e4_defrag_skip_name(E4DefragSkip s);

typedef struct {
	E4Outcome outcome;
	E4DefragSkip skip;      /* with E4_OUTCOME_SKIPPED */
	int error;              /* errno, with E4_OUTCOME_FAILED */
	uint32_t runs_before;   /* physical runs (filefrag's count) */
	uint32_t runs_after;    /* = runs_before when nothing moved */
	uint64_t ino;           /* the file's inode number */
	uint64_t size;          /* bytes */
	uint64_t bytes_moved;
} E4FileDefrag;

#define E4_DEFRAG_CHUNK_DEFAULT (4u << 20) /* bytes */

typedef struct {
	uid_t uid;              /* the caller: root (0) or the file's owner may defragment */
	uint64_t chunk_bytes;   /* moved per call, between cancellation checks
	                         * (0: E4_DEFRAG_CHUNK_DEFAULT) */
	double good_kib;        /* mean run length (KiB) from which a file is good
	                         * enough and left alone; 0: only files with no more
	                         * runs than their ideal are left alone */
	uint32_t min_runs;      /* files with fewer physical runs are left alone
	                         * (good enough, like good_kib); 0: off */
	uint64_t room_hold_bytes; /* free space making room may hold at once
	                         * beyond the donor of the file being moved
	                         * (core/place/makeroom.h); 0: E4_ROOM_HOLD_DEFAULT */
	/* Taken from before each chunk (its bytes), shared by the threads of
	 * a job; the wait polls cancelled. NULL: no cap. */
	E4Throttle *throttle;
	/* Polled between chunks; true stops the file (E4_OUTCOME_CANCELLED). */
	bool (*cancelled)(void *user);
	/* Called after each chunk with the bytes of this file moved so far. */
	void (*progress)(uint64_t bytes_done, void *user);
	void *user;
	/* Called with the inode of each other file whose blocks making room
	 * moved, and the bytes moved (a move changes no timestamp: cached
	 * figures must be forgotten; a compaction's progress), with
	 * moved_user (never replaced by the subtree walk). */
	void (*moved)(uint64_t ino, uint64_t bytes, void *moved_user);
	void *moved_user;
} E4DefragOpts;

typedef struct E4Defrag E4Defrag;

/* An engine for the filesystem described by fs (copied). Thread-safe: it
 * moves each inode in at most one thread at a time. */
E4Defrag *e4_defrag_new(const E4FsInfo *fs);
void e4_defrag_free(E4Defrag *d);

/* At most this many fallback donor directories. */
#define E4_DONOR_DIRS_MAX 4

/* Adds dirfd (a directory on the engine's filesystem, kept open by the
 * caller while the engine lives) to the directories a donor is made in,
 * in the order added, when the one e4_defrag_file is given may not be
 * written (an unprivileged daemon and another user's directory). Not
 * thread-safe: call before any e4_defrag_file. Returns 0, or -EXDEV
 * (another filesystem), -ENOTDIR, -ENOSPC (E4_DONOR_DIRS_MAX added), or
 * the errno of fstat. */
int e4_defrag_add_donor_dir(E4Defrag *d, int dirfd);

/* Defragments the regular file open as fd (any fd of it, O_PATH included:
 * it is reopened read-write through /proc/self/fd), with its donor made in
 * directory donor_dirfd (on the same filesystem; the file's own directory
 * gives the best locality), or when this process may not write and search
 * that one, in the first fallback directory it may (else skipped as
 * no-donor-dir). Every outcome is in *out; never fails itself. */
void e4_defrag_file(E4Defrag *d, int fd, int donor_dirfd, const E4DefragOpts *opts,
		    E4FileDefrag *out);

/* True when a file of these figures is worth moving under opts: more runs
 * than its ideal, a mean run shorter than opts->good_kib and at least
 * opts->min_runs runs (each when set). */
bool e4_defrag_needed(const E4FileFigures *fig, const E4DefragOpts *opts, uint32_t block_size);

/* The engine's filesystem, for walkers. */
dev_t e4_defrag_dev(const E4Defrag *d);
const E4Geometry *e4_defrag_geometry(const E4Defrag *d);
