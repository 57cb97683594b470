#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fs.h"
#include "ino.h"

int e4fs_nodes_init(E4Fs *fs)
{
	struct stat st;
	if (fstat(fs->root_fd, &st) < 0)
		return -errno;
	int privileged = e4_handle_privileged(fs->root_fd);
	if (privileged < 0)
		return privileged;
	fs->by_path = !privileged;
	fs->nodes = g_hash_table_new(g_int64_hash, g_int64_equal);
	g_mutex_init(&fs->lock);
	fs->root = e4fs_node_ref(fs, fs->root_fd, &st, NULL, NULL);
	return fs->root ? 0 : -errno;
}

Node *e4fs_node_get(E4Fs *fs, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return fs->root;
	uint64_t real = e4_ino_real(ino);
	g_mutex_lock(&fs->lock);
	Node *node = g_hash_table_lookup(fs->nodes, &real);
	g_mutex_unlock(&fs->lock);
	return node;
}

/* Under fs->lock: true when node is ancestor or itself on dir's chain. */
static bool on_chain(const Node *dir, const Node *node)
{
	for (const Node *n = dir; n; n = n->parent)
		if (n == node)
			return true;
	return false;
}

static void free_node(Node *node);

/* Under fs->lock: frees node once neither the kernel nor a child holds
 * it, and then its parent if that was the parent's last hold. */
static void release_node(E4Fs *fs, Node *node)
{
	while (node && node != fs->root && node->nlookup == 0 && node->children == 0) {
		Node *parent = node->parent;
		if (g_hash_table_lookup(fs->nodes, &node->real_ino) == node)
			g_hash_table_remove(fs->nodes, &node->real_ino);
		free_node(node);
		if (parent)
			parent->children--;
		node = parent;
	}
}

/* Under fs->lock: node was (last) looked up as name in parent. A hard
 * link's node moves to the directory of its latest lookup. A move that
 * would make node its own ancestor (a parent's place still stale after
 * renames in the source) is not made: path mode then answers ESTALE for
 * node until the stale directory is looked up again. */
static void set_parent(E4Fs *fs, Node *node, Node *parent, const char *name)
{
	if (parent && node->parent != parent && !on_chain(parent, node)) {
		Node *old = node->parent;
		parent->children++;
		node->parent = parent;
		if (old) {
			old->children--;
			release_node(fs, old);
		}
	}
	if (g_strcmp0(node->name, name) != 0) {
		g_free(node->name);
		node->name = g_strdup(name);
	}
}

Node *e4fs_node_ref(E4Fs *fs, int fd, const struct stat *st, Node *parent, const char *name)
{
	E4Handle *handle = e4_handle_of(fd);
	if (!handle)
		return NULL;
	uint64_t real = st->st_ino;
	g_mutex_lock(&fs->lock);
	Node *node = g_hash_table_lookup(fs->nodes, &real);
	if (!node) {
		node = g_new0(Node, 1);
		*node = (Node){ .real_ino = real, .handle = handle, .is_dir = S_ISDIR(st->st_mode) };
		g_hash_table_insert(fs->nodes, &node->real_ino, node);
	} else if (!e4_handle_equal(node->handle, handle)) {
		/* The inode number was freed and reused: the node is the new object. */
		g_free(node->handle);
		node->handle = handle;
		node->is_dir = S_ISDIR(st->st_mode);
	} else {
		g_free(handle);
	}
	node->nlookup++;
	set_parent(fs, node, parent, name);
	g_mutex_unlock(&fs->lock);
	return node;
}

/* Under fs->lock: node's path from SOURCE's root by the names it was
 * looked up under ("." for the root), or NULL when its chain does not
 * reach the root. */
static char *path_of(E4Fs *fs, const Node *node)
{
	GPtrArray *names = g_ptr_array_new();
	const Node *n = node;
	for (; n && n != fs->root; n = n->parent)
		g_ptr_array_add(names, n->name);
	if (n != fs->root) {
		g_ptr_array_free(names, TRUE);
		return NULL;
	}
	GString *path = g_string_new(names->len ? NULL : ".");
	for (guint i = names->len; i > 0; i--) {
		if (path->len)
			g_string_append_c(path, '/');
		g_string_append(path, g_ptr_array_index(names, i - 1));
	}
	g_ptr_array_free(names, TRUE);
	return g_string_free(path, FALSE);
}

/* What opening a node needs, copied under fs->lock so that no lock is
 * held over I/O (a lookup may replace the handle, a forget free the node). */
typedef struct {
	E4Handle *handle;
	char *path; /* path mode only */
} Where;

static void where_clear(Where *w)
{
	g_clear_pointer(&w->handle, g_free);
	g_clear_pointer(&w->path, g_free);
}

/* Under fs->lock. */
static void where_of(E4Fs *fs, const Node *node, Where *w)
{
	w->handle = e4_handle_dup(node->handle);
	w->path = fs->by_path ? path_of(fs, node) : NULL;
}

static int where_open(E4Fs *fs, const Where *w, int flags)
{
	if (!fs->by_path)
		return e4_handle_open(fs->root_fd, w->handle, flags);
	return w->path ? e4_handle_open_path(fs->root_fd, w->path, w->handle, flags) : -ESTALE;
}

int e4fs_node_open(E4Fs *fs, const Node *node, int flags)
{
	Where w;
	g_mutex_lock(&fs->lock);
	where_of(fs, node, &w);
	g_mutex_unlock(&fs->lock);
	int fd = where_open(fs, &w, flags);
	where_clear(&w);
	return fd;
}

int e4fs_node_open_parent(E4Fs *fs, const Node *node, char **name)
{
	/* The parent is pinned by node, which the caller's request holds;
	 * what is needed is copied under the lock a lookup re-parents under. */
	Where w = {0};
	g_mutex_lock(&fs->lock);
	const Node *parent = node->parent;
	if (parent)
		where_of(fs, parent, &w);
	if (name)
		*name = parent ? g_strdup(node->name) : NULL;
	g_mutex_unlock(&fs->lock);
	int fd = parent ? where_open(fs, &w, O_PATH | O_DIRECTORY) : -ENOENT;
	where_clear(&w);
	return fd;
}

int e4fs_node_stat(E4Fs *fs, const Node *node, struct stat *st)
{
	int fd = e4fs_node_open(fs, node, O_PATH);
	if (fd < 0)
		return fd;
	int rc = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

void e4fs_node_ref_attr(E4Fs *fs, Node *node)
{
	g_mutex_lock(&fs->lock);
	node->nlookup++;
	g_mutex_unlock(&fs->lock);
}

static void free_node(Node *node)
{
	g_free(node->name);
	g_free(node->handle);
	g_free(node);
}

void e4fs_node_forget(E4Fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	Node *node = e4fs_node_get(fs, ino);
	if (!node)
		return;
	g_mutex_lock(&fs->lock);
	node->nlookup = node->nlookup > nlookup ? node->nlookup - nlookup : 0;
	release_node(fs, node);
	g_mutex_unlock(&fs->lock);
}

void e4fs_nodes_free(E4Fs *fs)
{
	GHashTableIter it;
	gpointer value;
	g_hash_table_iter_init(&it, fs->nodes);
	while (g_hash_table_iter_next(&it, NULL, &value))
		free_node(value);
	g_hash_table_destroy(fs->nodes);
	g_mutex_clear(&fs->lock);
}

bool e4fs_caller_may(const Caller *c, const struct stat *st, int mask)
{
	if (c->uid == 0)
		return true;
	int shift = 0; /* others */
	if (c->uid == st->st_uid) {
		shift = 6;
	} else {
		bool in_group = c->gid == st->st_gid;
		for (int i = 0; !in_group && i < c->ngroups; i++)
			in_group = c->groups[i] == st->st_gid;
		shift = in_group ? 3 : 0;
	}
	return ((st->st_mode >> shift) & (mode_t)mask) == (mode_t)mask;
}

/* Walks ".." from dirfd: true when SOURCE's root is met before the
 * filesystem's root. */
static bool dir_inside(E4Fs *fs, int dirfd)
{
	int fd = dup(dirfd);
	uint64_t last = 0;
	bool inside = false;
	for (int depth = 0; fd >= 0 && depth < 100000; depth++) {
		struct stat st;
		if (fstat(fd, &st) < 0 || st.st_dev != fs->info->dev || st.st_ino == last)
			break;
		if (st.st_ino == fs->root->real_ino) {
			inside = true;
			break;
		}
		last = st.st_ino;
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = up;
	}
	if (fd >= 0)
		close(fd);
	return inside;
}

bool e4fs_node_inside(E4Fs *fs, Node *node)
{
	if (node == fs->root)
		return true;
	if (node->is_dir) {
		int fd = e4fs_node_open(fs, node, O_PATH | O_DIRECTORY);
		bool inside = fd >= 0 && dir_inside(fs, fd);
		if (fd >= 0)
			close(fd);
		return inside;
	}
	/* A file: still under its name in its directory, which is inside. */
	g_autofree char *name = NULL;
	int fd = e4fs_node_open_parent(fs, node, &name);
	if (fd < 0)
		return false;
	struct stat st;
	bool inside = name && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		      st.st_ino == node->real_ino && dir_inside(fs, fd);
	close(fd);
	return inside;
}
