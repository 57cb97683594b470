#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fs.h"
#include "ino.h"

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

static bool same_handle(const E4Handle *a, const E4Handle *b)
{
	return a->handle_bytes == b->handle_bytes && a->handle_type == b->handle_type &&
	       memcmp(a->f_handle, b->f_handle, a->handle_bytes) == 0;
}

Node *e4fs_node_ref(E4Fs *fs, int fd, const struct stat *st, uint64_t parent_ino,
		    const char *name)
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
	} else if (!same_handle(node->handle, handle)) {
		/* The inode number was freed and reused: the node is the new object. */
		g_free(node->handle);
		node->handle = handle;
		node->is_dir = S_ISDIR(st->st_mode);
	} else {
		g_free(handle);
	}
	node->nlookup++;
	node->parent_ino = parent_ino;
	if (g_strcmp0(node->name, name) != 0) {
		g_free(node->name);
		node->name = g_strdup(name);
	}
	g_mutex_unlock(&fs->lock);
	return node;
}

/* Under fs->lock. */
static E4Handle *handle_copy(const Node *node)
{
	return g_memdup2(node->handle, sizeof(E4Handle) + node->handle->handle_bytes);
}

int e4fs_node_open(E4Fs *fs, const Node *node, int flags)
{
	/* A copy: lookup may replace the handle meanwhile; no lock over I/O. */
	g_mutex_lock(&fs->lock);
	g_autofree E4Handle *h = handle_copy(node);
	g_mutex_unlock(&fs->lock);
	return e4_handle_open(fs->root_fd, h, flags);
}

int e4fs_node_open_parent(E4Fs *fs, const Node *node, char **name)
{
	/* The parent is not pinned by the caller's request (a hard link's
	 * other directory may be forgotten any time): it is found and its
	 * handle copied under the same lock as forget frees nodes. */
	g_mutex_lock(&fs->lock);
	uint64_t real = node->parent_ino;
	const Node *parent = real ? g_hash_table_lookup(fs->nodes, &real) : NULL;
	g_autofree E4Handle *h = parent ? handle_copy(parent) : NULL;
	if (name)
		*name = h ? g_strdup(node->name) : NULL;
	g_mutex_unlock(&fs->lock);
	return h ? e4_handle_open(fs->root_fd, h, O_RDONLY | O_DIRECTORY) : -ENOENT;
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

static void free_node(gpointer p)
{
	Node *node = p;
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
	if (node->nlookup == 0 && node != fs->root) {
		g_hash_table_remove(fs->nodes, &node->real_ino);
		free_node(node);
	}
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
		int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
		int fd = e4fs_node_open(fs, node, O_RDONLY | O_DIRECTORY);
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
