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

Node *e4fs_node_ref(E4Fs *fs, int fd, const struct stat *st)
{
	uint64_t real = st->st_ino;
	g_mutex_lock(&fs->lock);
	Node *node = g_hash_table_lookup(fs->nodes, &real);
	if (node) {
		/* The inode cannot have been reused while our fd pins it. */
		close(fd);
	} else {
		node = g_new0(Node, 1);
		*node = (Node){ .real_ino = real, .fd = fd, .is_dir = S_ISDIR(st->st_mode) };
		g_hash_table_insert(fs->nodes, &node->real_ino, node);
	}
	node->nlookup++;
	g_mutex_unlock(&fs->lock);
	return node;
}

void e4fs_node_ref_attr(E4Fs *fs, Node *node)
{
	g_mutex_lock(&fs->lock);
	node->nlookup++;
	g_mutex_unlock(&fs->lock);
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
		close(node->fd);
		g_free(node);
	}
	g_mutex_unlock(&fs->lock);
}

static void free_node(gpointer p)
{
	Node *node = p;
	close(node->fd);
	g_free(node);
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
