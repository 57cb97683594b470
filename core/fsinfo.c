#include "fsinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <libmount.h>
#include <glib.h>

void e4_fsinfo_free(E4FsInfo *fs)
{
	if (!fs)
		return;
	free(fs->source_dir);
	free(fs->mountpoint);
	free(fs->device);
	free(fs->options);
	free(fs);
}

/* The mount point of the mounted block device with this device number. */
static int mountpoint_of_device(struct libmnt_table *tb, dev_t rdev, char **dir)
{
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_BACKWARD);
	if (!it)
		return -ENOMEM;
	struct libmnt_fs *fs;
	int rc = -ENXIO;
	while (mnt_table_next_fs(tb, it, &fs) == 0) {
		if (mnt_fs_get_devno(fs) != rdev)
			continue;
		/* A bind mount of a subdirectory does not stand for the device. */
		const char *root = mnt_fs_get_root(fs);
		if (root && strcmp(root, "/") != 0)
			continue;
		*dir = strdup(mnt_fs_get_target(fs));
		rc = *dir ? 0 : -ENOMEM;
		break;
	}
	mnt_free_iter(it);
	return rc;
}

static bool has_option(const char *optstr, const char *name, const char *value)
{
	char *val = NULL;
	size_t len = 0;
	if (!optstr || mnt_optstr_get_option(optstr, name, &val, &len) != 0)
		return false;
	if (!value)
		return true;
	return len == strlen(value) && strncmp(val, value, len) == 0;
}

static int fill_from_mount(E4FsInfo *fs, struct libmnt_table *tb)
{
	struct libmnt_fs *mnt = mnt_table_find_mountpoint(tb, fs->source_dir, MNT_ITER_BACKWARD);
	if (!mnt || g_strcmp0(mnt_fs_get_fstype(mnt), "ext4") != 0)
		return -EMEDIUMTYPE;
	const char *opts = mnt_fs_get_options(mnt);
	const char *src = mnt_fs_get_srcpath(mnt);
	fs->mountpoint = strdup(mnt_fs_get_target(mnt));
	fs->device = strdup(src ? src : "");
	fs->options = strdup(opts ? opts : "");
	if (!fs->mountpoint || !fs->device || !fs->options)
		return -ENOMEM;
	fs->data_journal = has_option(opts, "data", "journal");
	fs->data_writeback = has_option(opts, "data", "writeback");
	fs->dax = has_option(opts, "dax", NULL) || has_option(opts, "dax", "always");
	return 0;
}

static int resolve_dir(const char *source, struct libmnt_table *tb, char **dir)
{
	struct stat st;
	if (stat(source, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return mountpoint_of_device(tb, st.st_rdev, dir);
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*dir = realpath(source, NULL);
	return *dir ? 0 : -errno;
}

static int geometry_from_map(const char *dir, uint32_t block_size, E4Geometry *geom)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = e4_geometry_from_fsmap(fd, block_size, geom);
	close(fd);
	return rc;
}

static int fill(E4FsInfo *fs, const char *source, struct libmnt_table *tb)
{
	int rc = resolve_dir(source, tb, &fs->source_dir);
	if (rc < 0)
		return rc;
	struct statfs sfs;
	struct stat st;
	if (statfs(fs->source_dir, &sfs) < 0 || stat(fs->source_dir, &st) < 0)
		return -errno;
	if (sfs.f_type != EXT4_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	rc = fill_from_mount(fs, tb);
	if (rc < 0)
		return rc;
	fs->dev = st.st_dev;
	fs->read_only = sfs.f_flags & ST_RDONLY;
	fs->geom_error = e4_superblock_read_device(fs->device, &fs->geom);
	if (fs->geom_error < 0 && geometry_from_map(fs->source_dir, (uint32_t)sfs.f_bsize, &fs->geom) < 0) {
		e4_geometry_default((uint32_t)sfs.f_bsize, &fs->geom);
		fs->geom_default = true;
	}
	return 0;
}

int e4_fsinfo_resolve(const char *source, E4FsInfo **out)
{
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	if (!tb)
		return -errno ? -errno : -ENOMEM;
	E4FsInfo *fs = calloc(1, sizeof(*fs));
	int rc = fs ? fill(fs, source, tb) : -ENOMEM;
	mnt_unref_table(tb);
	if (rc < 0) {
		e4_fsinfo_free(fs);
		return rc;
	}
	*out = fs;
	return 0;
}
