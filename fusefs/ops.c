/* The FUSE low-level handlers: the mirror's namespace and the attribute
 * files' open/read. Every handler answers; none may take the daemon down. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <linux/fuse.h>

#include "attrs.h"
#include "content.h"
#include "escape.h"
#include "fs.h"
#include "ino.h"
#include "jobs.h"
#include "trigger.h"
#include "walk.h"

static E4Fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Permission bits: write never, and execute (enter) wherever read is,
 * since a file is shown as a directory of its attribute files. */
static mode_t dir_mode(mode_t real)
{
	mode_t r = real & 0444;
	return S_IFDIR | r | (r >> 2);
}

static void node_stat(const struct stat *real, struct stat *st)
{
	*st = *real;
	st->st_mode = dir_mode(real->st_mode);
	st->st_nlink = 2;
	if (!S_ISDIR(real->st_mode))
		st->st_size = 0;
}

/* A picture's mtime (and ctime): when the layout it shows last changed,
 * as far as is known without mapping anything: the object's own mtime
 * and ctime, the last move of a file by a job, and for a directory (whose
 * map shows the whole filesystem) the last change event on the fs. */
static void picture_time(E4Fs *fs, const struct stat *real, uint64_t real_ino, struct stat *st)
{
	gint64 us = (gint64)real->st_mtim.tv_sec * G_USEC_PER_SEC + real->st_mtim.tv_nsec / 1000;
	gint64 c = (gint64)real->st_ctim.tv_sec * G_USEC_PER_SEC + real->st_ctim.tv_nsec / 1000;
	us = MAX(us, c);
	us = MAX(us, S_ISDIR(real->st_mode) ? e4_tree_changed_us(fs->tree)
					    : e4_tree_moved_us(fs->tree, real_ino));
	st->st_mtim.tv_sec = us / G_USEC_PER_SEC;
	st->st_mtim.tv_nsec = us % G_USEC_PER_SEC * 1000;
	st->st_ctim = st->st_mtim;
}

/* The stat of node's attribute file, derived from the real object:
 * readable as the object is, and `defrag` writable by its owner. */
static void attr_stat(E4Fs *fs, const struct stat *real, uint64_t ino, struct stat *st)
{
	*st = *real;
	st->st_ino = ino;
	st->st_mode = S_IFREG | (real->st_mode & 0444);
	if (e4_attr_is_trigger(e4_ino_attr(ino)))
		st->st_mode |= real->st_mode & S_IWUSR;
	st->st_nlink = 1;
	/* Generated content: size 0 and direct_io, so readers read to EOF.
	 * A trigger's writes must not extend it: the kernel serializes writes
	 * past EOF, and "cancel" must reach a job whose "1" is still writing.
	 * A picture has its true, fixed size (file managers thumbnail only
	 * files of a true size). */
	int attr = e4_ino_attr(ino);
	st->st_size = (off_t)e4_attr_size(attr);
	/* Not sparse, to tools that compare blocks with the size (cp, rsync). */
	st->st_blocks = e4_attr_is_trigger(attr) ? 0 : (st->st_size + 511) / 512;
	if (e4_attr_follows_layout(attr))
		picture_time(fs, real, e4_ino_real(ino), st);
	if (attr == ATTR_MAP_BEFORE_SVG || attr == ATTR_MAP_BEFORE_PNG) {
		gint64 us = e4fs_before_time(fs, e4_ino_real(ino));
		if (us) {
			st->st_mtim = (struct timespec){ us / G_USEC_PER_SEC, us % G_USEC_PER_SEC * 1000 };
			st->st_ctim = st->st_mtim;
		}
	}
}

/* Replies to an open like fuse_reply_open with direct_io, adding
 * FOPEN_PARALLEL_DIRECT_WRITES, which libfuse 3.14's fuse_file_info cannot
 * express: without it the kernel holds the inode lock for the whole
 * blocking write of a job, and a cancel on the same file would wait. */
static void reply_open_parallel(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct fuse_open_out out = {
		.fh = fi->fh,
		.open_flags = FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES,
	};
	fuse_reply_buf(req, (const char *)&out, sizeof(out));
}

static uint64_t node_ino(E4Fs *fs, const Node *node)
{
	return node == fs->root ? FUSE_ROOT_ID : e4_ino_base(node->real_ino);
}

static int stat_ino(E4Fs *fs, fuse_ino_t ino, struct stat *st)
{
	Node *node = e4fs_node_get(fs, ino);
	if (!node)
		return -ESTALE;
	struct stat real;
	int rc = e4fs_node_stat(fs, node, &real);
	if (rc < 0)
		return rc;
	int attr = ino == FUSE_ROOT_ID ? -1 : e4_ino_attr(ino);
	if (attr < 0) {
		node_stat(&real, st);
		st->st_ino = ino;
	} else {
		attr_stat(fs, &real, ino, st);
	}
	return 0;
}

/* The entry of node's attribute file attr, counting one kernel lookup. */
static int attr_entry(E4Fs *fs, Node *node, int attr, struct fuse_entry_param *e)
{
	*e = (struct fuse_entry_param){ .attr_timeout = fs->timeout, .entry_timeout = fs->timeout };
	e->ino = e4_ino_base(node->real_ino) + 1 + (uint64_t)attr;
	int rc = stat_ino(fs, e->ino, &e->attr);
	if (rc == 0)
		e4fs_node_ref_attr(fs, node);
	return rc;
}

/* Opens the real entry shown as name in the directory node, open as dirfd. */
static int open_child_at(E4Fs *fs, int dirfd, Node *parent, const char *real, struct stat *st)
{
	if (parent->real_ino == E4_EXT4_ROOT_INO && strcmp(real, "lost+found") == 0)
		return -ENOENT;
	int fd = openat(dirfd, real, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Only directories and regular files of this filesystem are mirrored. */
	if (fstat(fd, st) < 0 || st->st_dev != fs->info->dev ||
	    !(S_ISDIR(st->st_mode) || S_ISREG(st->st_mode))) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* The entry of the real child shown as name in the directory node (open
 * as dirfd), counting one kernel lookup of its node. 0 or -errno. */
static int child_entry(E4Fs *fs, int dirfd, Node *parent, const char *name,
		       struct fuse_entry_param *e)
{
	g_autofree char *real = e4_name_unescape(name, e4_reserved_names);
	if (!real)
		return -ENOENT;
	struct stat st;
	int fd = open_child_at(fs, dirfd, parent, real, &st);
	if (fd < 0)
		return fd;
	Node *node = e4fs_node_ref(fs, fd, &st, parent, real);
	int err = errno;
	close(fd);
	if (!node)
		return -err;
	*e = (struct fuse_entry_param){ .attr_timeout = fs->timeout, .entry_timeout = fs->timeout };
	e->ino = e4_ino_base(node->real_ino);
	node_stat(&st, &e->attr);
	e->attr.st_ino = e->ino;
	return 0;
}

/* The entry of name in the directory (or file) node parent: an attribute
 * file or a real child. Counts one kernel lookup. *dirfd is parent's open
 * directory, opened here when first needed (-1: not yet); the caller
 * closes it. 0 or -errno. */
static int lookup_entry(E4Fs *fs, int *dirfd, Node *parent, const char *name,
			struct fuse_entry_param *e)
{
	int attr = e4_attr_lookup(fs, parent, name);
	if (attr >= 0)
		return attr_entry(fs, parent, attr, e);
	if (!parent->is_dir)
		return -ENOENT;
	if (*dirfd < 0)
		*dirfd = e4fs_node_open(fs, parent, O_PATH | O_DIRECTORY);
	return *dirfd < 0 ? *dirfd : child_entry(fs, *dirfd, parent, name, e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	E4Fs *fs = fs_of(req);
	Node *parent = e4fs_node_get(fs, parent_ino);
	if (!parent || (parent_ino != FUSE_ROOT_ID && e4_ino_attr(parent_ino) >= 0)) {
		fuse_reply_err(req, parent ? ENOTDIR : ESTALE);
		return;
	}
	int dirfd = -1;
	struct fuse_entry_param e;
	int rc = lookup_entry(fs, &dirfd, parent, name, &e);
	if (dirfd >= 0)
		close(dirfd);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	e4fs_node_forget(fs_of(req), ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		e4fs_node_forget(fs_of(req), forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	E4Fs *fs = fs_of(req);
	struct stat st;
	int rc = stat_ino(fs, ino, &st);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, fs->timeout);
}

/* A directory listing, taken at opendir and served from for every readdir. */
typedef struct {
	GPtrArray *names;  /* shown names */
	GArray *inos;      /* their inode numbers */
	GArray *types;     /* their modes (S_IFDIR / S_IFREG) */
} Listing;

static void listing_add(Listing *l, char *name, uint64_t ino, mode_t type)
{
	g_ptr_array_add(l->names, name);
	g_array_append_val(l->inos, ino);
	g_array_append_val(l->types, type);
}

void e4fs_listing_free(gpointer listing)
{
	Listing *l = listing;
	g_ptr_array_free(l->names, TRUE);
	g_array_free(l->inos, TRUE);
	g_array_free(l->types, TRUE);
	g_free(l);
}

static int list_real(E4Fs *fs, Node *node, Listing *l)
{
	int fd = e4fs_node_open(fs, node, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	struct stat st;
	E4DirList list = {0};
	int rc = fstat(fd, &st) < 0 ? -errno : e4_dir_list(fd, &st, fs->info->dev, &list);
	close(fd);
	for (size_t i = 0; rc == 0 && i < list.n; i++)
		listing_add(l, e4_name_escape(list.v[i].name, e4_reserved_names),
			    e4_ino_base(list.v[i].ino), S_IFDIR);
	e4_dir_list_clear(&list);
	return rc;
}

/* Entry i as a plain directory entry: inode number and type only. */
static struct stat listing_stat(const Listing *l, size_t i)
{
	return (struct stat){ .st_ino = g_array_index(l->inos, uint64_t, i),
			      .st_mode = g_array_index(l->types, mode_t, i) };
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	E4Fs *fs = fs_of(req);
	Node *node = e4fs_node_get(fs, ino);
	if (!node || (ino != FUSE_ROOT_ID && e4_ino_attr(ino) >= 0)) {
		fuse_reply_err(req, node ? ENOTDIR : ESTALE);
		return;
	}
	if (!e4fs_node_inside(fs, node)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	Listing *l = g_new0(Listing, 1);
	l->names = g_ptr_array_new_with_free_func(g_free);
	l->inos = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	l->types = g_array_new(FALSE, FALSE, sizeof(mode_t));
	listing_add(l, g_strdup("."), node_ino(fs, node), S_IFDIR);
	listing_add(l, g_strdup(".."), FUSE_ROOT_ID, S_IFDIR);
	for (int id = 0; id < ATTR__COUNT; id++)
		if (e4_attr_exists(fs, node, (AttrId)id))
			listing_add(l, g_strdup(e4_attr_name((AttrId)id)),
				    e4_ino_base(node->real_ino) + 1 + (uint64_t)id, S_IFREG);
	int rc = node->is_dir ? list_real(fs, node, l) : 0;
	if (rc < 0) {
		e4fs_listing_free(l);
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = e4_handles_open(fs->listings, l);
	fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)ino;
	Listing *l = e4_handles_get(fi->fh);
	g_autofree char *buf = g_malloc(size);
	size_t used = 0;
	for (size_t i = (size_t)off; i < l->names->len; i++) {
		struct stat st = listing_stat(l, i);
		size_t want = fuse_add_direntry(req, buf + used, size - used,
						g_ptr_array_index(l->names, i), &st, (off_t)(i + 1));
		if (want > size - used)
			break;
		used += want;
	}
	fuse_reply_buf(req, buf, used);
}

static bool is_dot_or_dotdot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* readdir with each entry's lookup done here: one request per buffer of
 * entries instead of one LOOKUP per name (`ls -l`, file managers). An entry
 * that cannot be looked up any more is listed without attributes. */
static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	E4Fs *fs = fs_of(req);
	Listing *l = e4_handles_get(fi->fh);
	Node *node = e4fs_node_get(fs, ino);
	g_autofree char *buf = g_malloc(size);
	size_t used = 0;
	int dirfd = -1;
	for (size_t i = (size_t)off; i < l->names->len; i++) {
		const char *name = g_ptr_array_index(l->names, i);
		/* The size depends on the name only: check it before a lookup is
		 * counted for an entry that would not be sent. */
		size_t want = fuse_add_direntry_plus(req, NULL, 0, name, NULL, 0);
		if (want > size - used)
			break;
		struct fuse_entry_param e;
		if (!node || is_dot_or_dotdot(name) || lookup_entry(fs, &dirfd, node, name, &e) < 0)
			e = (struct fuse_entry_param){ .attr = listing_stat(l, i) };
		used += fuse_add_direntry_plus(req, buf + used, size - used, name, &e, (off_t)(i + 1));
	}
	if (dirfd >= 0)
		close(dirfd);
	fuse_reply_buf(req, buf, used);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	e4_handles_release(fs_of(req)->listings, fi->fh);
	fuse_reply_err(req, 0);
}

static void caller_of(fuse_req_t req, Caller *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	*c = (Caller){ .uid = ctx->uid, .gid = ctx->gid };
	/* Root may read anything (e4fs_caller_may): its groups, which libfuse
	 * reads from /proc at every call, are not needed. */
	if (c->uid == 0)
		return;
	int n = fuse_req_getgroups(req, G_N_ELEMENTS(c->groups), c->groups);
	c->ngroups = n < 0 ? 0 : (n > (int)G_N_ELEMENTS(c->groups) ? (int)G_N_ELEMENTS(c->groups) : n);
}

/* The daemon runs as root: without default_permissions the kernel would
 * let anyone read what root may. Read access is the real object's; write
 * access (to a trigger) its owner's. */
static bool may_access(const Caller *c, const struct stat *st, bool writing)
{
	if (writing)
		return c->uid == 0 || (c->uid == st->st_uid && (st->st_mode & S_IWUSR));
	return e4fs_caller_may(c, st, 4);
}

static void log_attr_error(int attr, uint64_t real_ino, int rc)
{
	fuse_log(FUSE_LOG_ERR, "e4infofs: %s of inode %" G_GUINT64_FORMAT ": %s\n",
		 e4_attr_name((AttrId)attr), real_ino, g_strerror(-rc));
}

/* A content to make, queued by an open on fs->generators. */
typedef struct {
	E4AttrWork work;
	E4Content *content; /* a reference of the generation's own */
	int attr;
	uint64_t real_ino;  /* for the log: the node may be gone */
} Generation;

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	E4Fs *fs = fs_of(req);
	int attr = ino == FUSE_ROOT_ID ? -1 : e4_ino_attr(ino);
	Node *node = e4fs_node_get(fs, ino);
	if (!node || attr < 0) {
		fuse_reply_err(req, node ? EISDIR : ESTALE);
		return;
	}
	bool writing = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);
	if (writing && !e4_attr_is_trigger(attr)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	struct stat real;
	Caller caller;
	caller_of(req, &caller);
	int rc = e4fs_node_stat(fs, node, &real);
	if (rc == 0 && !e4fs_node_inside(fs, node))
		rc = -ENOENT; /* moved out of SOURCE since it was looked up */
	if (rc < 0 || !may_access(&caller, &real, writing)) {
		fuse_reply_err(req, rc < 0 ? -rc : EACCES);
		return;
	}
	fi->direct_io = 1;
	if (writing) {
		/* A trigger opened for writing holds no content: writes run jobs. */
		fi->fh = 0;
		reply_open_parallel(req, fi);
		return;
	}
	E4AttrWork work;
	rc = e4_attr_prepare(fs, node, (AttrId)attr, &caller, &work);
	if (rc < 0) {
		log_attr_error(attr, node->real_ino, rc);
		fuse_reply_err(req, -rc);
		return;
	}
	Generation *gen = g_new(Generation, 1);
	*gen = (Generation){ .work = work, .content = e4_content_new(), .attr = attr,
			     .real_ino = node->real_ino };
	fi->fh = e4_handles_open(fs->handles, e4_content_ref(gen->content));
	/* Made on a generator thread, after this answer: the reader's next
	 * requests travel meanwhile, and no FUSE thread is held. The node is
	 * not used there, since a close and a forget may free it meanwhile. */
	g_autoptr(GError) err = NULL;
	if (!g_thread_pool_push(fs->generators, gen, &err))
		fuse_log(FUSE_LOG_ERR, "e4infofs: no generator thread (%s): %s waits for one\n",
			 err->message, e4_attr_name((AttrId)attr));
	fuse_reply_open(req, fi);
}

void e4fs_generate(gpointer generation, gpointer fs)
{
	Generation *gen = generation;
	char *data;
	size_t len;
	int rc = e4_attr_run(fs, &gen->work, &data, &len);
	if (rc < 0)
		log_attr_error(gen->attr, gen->real_ino, rc);
	e4_content_finish(gen->content, rc, data, len);
	e4_content_unref(gen->content);
	g_free(gen);
}

static E4fsJobKind job_kind(E4Trigger t)
{
	return t == E4_TRIGGER_PACK ? E4FS_JOB_PACK : t == E4_TRIGGER_COMPACT ? E4FS_JOB_COMPACT : E4FS_JOB_DEFRAG;
}

/* What a write to a trigger does; 0 or -errno. */
static int trigger_write(fuse_req_t req, E4Fs *fs, Node *node, int attr, const E4TriggerCmd *cmd)
{
	switch (cmd->word) {
	case E4_TRIGGER_START:
	case E4_TRIGGER_PACK:
	case E4_TRIGGER_COMPACT:
		if (attr != ATTR_DEFRAG) {
			fuse_log(FUSE_LOG_WARNING, "e4infofs: a job is started in a node's defrag file, not in jobs\n");
			return -EINVAL;
		}
		/* Checked at the open too, but the writer may have held the
		 * trigger open while the node was moved out of SOURCE. */
		if (!e4fs_node_inside(fs, node))
			return -ENOENT;
		return e4fs_job_run(fs, node, job_kind(cmd->word), &cmd->limits, req, fuse_req_ctx(req)->uid);
	case E4_TRIGGER_CANCEL:
		if (attr == ATTR_DEFRAG)
			e4fs_job_cancel(fs, node);
		else
			e4fs_jobs_cancel_all(fs);
		return 0;
	case E4_TRIGGER_NOTHING:
		return 0;
	default:
		fuse_log(FUSE_LOG_WARNING, "e4infofs: write to a trigger of inode %" PRIu64 " refused: %s\n",
			 node->real_ino, cmd->why);
		return -EINVAL;
	}
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	E4Fs *fs = fs_of(req);
	Node *node = e4fs_node_get(fs, ino);
	int attr = ino == FUSE_ROOT_ID ? -1 : e4_ino_attr(ino);
	if (!node || !e4_attr_is_trigger(attr)) {
		fuse_reply_err(req, node ? EROFS : ESTALE);
		return;
	}
	E4TriggerCmd cmd;
	e4_trigger_parse(buf, size, off, &cmd);
	int rc = trigger_write(req, fs, node, attr, &cmd);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	E4Content *c = e4_handles_get(fi->fh);
	if (c)
		e4_content_read(c, req, size, off);
	else
		fuse_reply_buf(req, NULL, 0); /* a trigger opened read-write */
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	e4_handles_release(fs_of(req)->handles, fi->fh);
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct statvfs sv;
	if (fstatvfs(fs_of(req)->root_fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* Nothing in the mirror can be created, removed, renamed or changed. */
static void reply_erofs(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}

/* Only the truncation of a trigger by O_TRUNC (`echo 1 >`) is accepted,
 * as a no-op: its size stays E4_TRIGGER_SIZE. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	(void)attr, (void)fi;
	const int allowed = FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
			    FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
	E4Fs *fs = fs_of(req);
	struct stat st;
	if (ino == FUSE_ROOT_ID || !e4_attr_is_trigger(e4_ino_attr(ino)) || (to_set & ~allowed)) {
		reply_erofs(req);
		return;
	}
	int rc = stat_ino(fs, ino, &st);
	if (rc < 0)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, fs->timeout);
}

/* O_TRUNC must reach setattr (where a trigger ignores it), not truncate
 * the kernel's idea of the size at open (atomic_o_trunc). */
static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	reply_erofs(req);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	reply_erofs(req);
}

static void op_remove(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	reply_erofs(req);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link, (void)parent, (void)name;
	reply_erofs(req);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	(void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
	reply_erofs(req);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	reply_erofs(req);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	reply_erofs(req);
}

const struct fuse_lowlevel_ops e4_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_remove,
	.rmdir = op_remove,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.create = op_create,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.statfs = op_statfs,
};
