#include "exclude.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <glib.h>

struct E4Exclude {
	GHashTable *dirs; /* ino -> GINT_TO_POINTER(1 + excluded) */
};

static bool value_excludes(const char *v, ssize_t n)
{
	return !(n == 1 && v[0] == '0');
}

typedef ssize_t (*GetXattr)(const char *path, const char *name, void *value, size_t size);

/* What a getxattr of the mark into v (n bytes, or -1 with errno) says. */
static bool judged(const char *v, ssize_t n)
{
	if (n < 0)
		return errno == ERANGE; /* a long value: not "0" */
	return value_excludes(v, n);
}

static bool marked(const char *path, GetXattr get)
{
	char v[16];
	return judged(v, get(path, E4_EXCLUDE_XATTR, v, sizeof(v)));
}

bool e4_exclude_marked(int fd)
{
	char v[16];
	ssize_t n = fgetxattr(fd, E4_EXCLUDE_XATTR, v, sizeof(v));
	if (n >= 0 || errno != EBADF)
		return judged(v, n);
	/* An O_PATH fd has no xattr calls of its own: through its magic link. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return marked(path, getxattr); /* the magic link is followed */
}

bool e4_exclude_marked_at(int dirfd, const char *name)
{
	g_autofree char *path = g_strdup_printf("/proc/self/fd/%d/%s", dirfd, name);
	return marked(path, lgetxattr); /* never a symlink's target */
}

bool e4_exclude_at(E4Exclude *x, int dirfd, const char *name)
{
	return e4_exclude_marked_at(dirfd, name) || e4_exclude_dir(x, dirfd);
}

E4Exclude *e4_exclude_new(void)
{
	E4Exclude *x = g_new0(E4Exclude, 1);
	x->dirs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	return x;
}

void e4_exclude_free(E4Exclude *x)
{
	if (!x)
		return;
	g_hash_table_destroy(x->dirs);
	g_free(x);
}

static void remember(E4Exclude *x, const GArray *inos, bool excluded)
{
	for (guint i = 0; x && i < inos->len; i++) {
		uint64_t ino = g_array_index(inos, uint64_t, i);
		g_hash_table_insert(x->dirs, g_memdup2(&ino, sizeof(ino)), GINT_TO_POINTER(1 + excluded));
	}
}

typedef struct {
	E4Exclude *x;
	GArray *inos;   /* the directories met, to remember */
	bool excluded;
} Climb;

static bool climb_dir(int fd, const struct stat *st, void *user)
{
	Climb *c = user;
	uint64_t ino = st->st_ino;
	gpointer known = c->x ? g_hash_table_lookup(c->x->dirs, &ino) : NULL;
	if (known) {
		c->excluded = GPOINTER_TO_INT(known) == 2;
		return true;
	}
	g_array_append_val(c->inos, ino);
	c->excluded = e4_exclude_marked(fd);
	return c->excluded;
}

bool e4_exclude_dir(E4Exclude *x, int dirfd)
{
	g_autoptr(GArray) inos = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	Climb c = { x, inos, false };
	e4_climb(dirfd, climb_dir, &c);
	remember(x, inos, c.excluded);
	return c.excluded;
}
