/* State shared by the FUSE handlers of one mount; owned by main(). */
#pragma once

#define FUSE_USE_VERSION 312

#include <stdbool.h>
#include <stdint.h>
#include <fuse_lowlevel.h>
#include <glib.h>

#include "defrag.h"
#include "defragtree.h"
#include "fsinfo.h"
#include "handle.h"
#include "handles.h"
#include "tree.h"
#include "trigger.h"

typedef struct E4fsAuto E4fsAuto; /* automatic defragmentation (autodefrag.h) */

/* A mirrored real object (directory or regular file). Attribute files
 * are not nodes: their inode numbers derive from their node's (see ino.h). */
typedef struct Node Node;
struct Node {
	uint64_t real_ino;   /* st_ino on the source filesystem */
	E4Handle *handle;    /* the real object's file handle: no fd held */
	bool is_dir;         /* false: a regular file shown as a directory */
	uint64_t nlookup;    /* kernel lookups of the node and its attributes */
	Node *parent;        /* the directory it was last looked up in (NULL: the
	                      * root), pinned: a node lives while it has children */
	char *name;          /* and its real name there */
	uint64_t children;   /* nodes whose parent this is */
};

typedef struct {
	E4FsInfo *info;
	E4Tree *tree;
	Node *root;
	int root_fd;         /* fd of SOURCE (not O_PATH), the mount fd for handles */
	int donor_dir_fd;    /* -o donor_dir, or -1 */
	int state_dir_fd;    /* -o state_dir (resume state), or -1 */
	bool by_path;        /* no CAP_DAC_READ_SEARCH: nodes are opened by their
	                      * path beneath root_fd, checked against their handle */
	int fsroot_fd;       /* the ext4 mount point, to make room across the whole
	                      * filesystem (root daemon with make_room), else -1 */
	GMutex lock;         /* guards nodes */
	GHashTable *nodes;   /* real ino -> Node */
	double timeout;      /* entry and attribute cache timeout, seconds */
	size_t report_top;   /* lines in report */
	E4Defrag *defrag;
	struct fuse_session *se;
	unsigned defrag_threads; /* files moved at once by one job */
	double good_kib;     /* a file's mean run (KiB) from which it is left alone; 0 off */
	bool worst_first;
	E4JobLimits job_defaults; /* -o defrag_seconds, defrag_mibps, defrag_min_runs */
	bool idle_io;        /* jobs move in the idle I/O class (-o defrag_idle_io) */
	GMutex jobs_lock;    /* guards jobs and results */
	guint max_jobs;      /* jobs at once: each holds a FUSE thread while it runs */
	GPtrArray *jobs;     /* running Job */
	GHashTable *results; /* real ino -> last result text */
	GHashTable *befores; /* real ino -> E4Before: its pictures when its last job started */
	uint64_t metrics_scans; /* atomic: scans made to answer metrics itself */
	uint64_t jobs_done;  /* finished jobs, and their totals (for metrics) */
	E4DefragSummary jobs_totals;
	GMutex costs_lock;   /* guards the cost models and probe_rate (costs.c) */
	struct E4CostModel *cost_own, *cost_machine; /* this filesystem's, the machine's */
	char *cost_own_name; /* state file of cost_own */
	double probe_rate;   /* bytes/s of plan's read probe, 0 not yet */
	GThreadPool *generators; /* make attribute contents, e4fs_generate */
	E4Handles *handles;  /* contents of open attribute files (E4Content) */
	E4Handles *listings; /* listings of open directories */
	E4fsAuto *autod;     /* -o autodefrag=1 and running, else NULL */
} E4Fs;

extern const struct fuse_lowlevel_ops e4_ops;

/* Frees a directory listing (ops.c), the drop of fs->listings. */
void e4fs_listing_free(gpointer listing);

/* Runs one generation that an open queued on fs->generators (ops.c):
 * makes the content and answers the reads waiting for it. */
void e4fs_generate(gpointer generation, gpointer fs);

/* Where resume state is kept unless -o state_dir says otherwise. */
#define E4FS_STATE_DIR "/var/lib/e4infofs"

/* The size a `defrag` trigger reports: larger than any write it accepts
 * and than its status text (direct_io reads go to EOF anyway). */
#define E4_TRIGGER_SIZE 4096

/* The node table (nodes.c). */
/* Makes the table and the root node from fs->root_fd, and chooses how
 * nodes are opened: by handle when the kernel lets this process, else by
 * path (fs->by_path). Returns 0 or -errno. */
int e4fs_nodes_init(E4Fs *fs);
Node *e4fs_node_get(E4Fs *fs, fuse_ino_t ino);
/* Finds or adds the node of the real object open as fd (any kind of fd,
 * not consumed) with stat st, found as name in the directory node parent,
 * and counts one kernel lookup. Returns NULL with errno set when no
 * handle can be made. */
Node *e4fs_node_ref(E4Fs *fs, int fd, const struct stat *st, Node *parent, const char *name);
/* True while the real object of node is still below SOURCE: a node keeps
 * its inode when it is moved, also out of SOURCE, which must not be read
 * or moved through the mount then. */
bool e4fs_node_inside(E4Fs *fs, Node *node);

/* Who makes a request: the daemon runs as root and checks for them. */
typedef struct {
	uid_t uid;
	gid_t gid;
	gid_t groups[64];
	int ngroups;
} Caller;

/* Whether caller may read (mask 4), write (2) or search (1) an object
 * with this stat, by its mode bits. Root may do anything. */
bool e4fs_caller_may(const Caller *c, const struct stat *st, int mask);
/* Opens the real object of node with flags (O_PATH, O_RDONLY, ...): by
 * its handle, or by its path checked against its handle (fs->by_path).
 * Returns the fd or -errno (ESTALE when the object is gone, or in path
 * mode no longer where it was last looked up; EACCES when the daemon may
 * not reach or open it). */
int e4fs_node_open(E4Fs *fs, const Node *node, int flags);
/* Opens the directory node was last looked up in (O_PATH | O_DIRECTORY:
 * enough for *at calls and a donor's O_TMPFILE, and needs no read
 * permission of an unprivileged daemon) and, when name is not NULL, gives the name it had there (g_free it).
 * Returns the fd or -errno (ENOENT when that directory is not known). */
int e4fs_node_open_parent(E4Fs *fs, const Node *node, char **name);
/* fstat of the real object of node. Returns 0 or -errno. */
int e4fs_node_stat(E4Fs *fs, const Node *node, struct stat *st);
void e4fs_node_forget(E4Fs *fs, fuse_ino_t ino, uint64_t nlookup);
/* Counts one more kernel lookup of an attribute of node. */
void e4fs_node_ref_attr(E4Fs *fs, Node *node);
void e4fs_nodes_free(E4Fs *fs);
