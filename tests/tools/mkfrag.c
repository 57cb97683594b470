/*
 * mkfrag - build deterministic fragmented layouts on a mounted ext4
 * directory, for the integration tests and the demo.
 *
 * Usage (sizes in KiB; every file is written, fsync'ed and closed before
 * mkfrag exits; exit status 0 on success, 1 on error, 2 on bad usage):
 *
 *   mkfrag frag DIR PREFIX COUNT SIZE_KIB CHUNK_KIB
 *       Creates (or truncates) COUNT files DIR/PREFIX0 .. DIR/PREFIX<COUNT-1>,
 *       each SIZE_KIB long, by fallocate'ing CHUNK_KIB pieces round-robin
 *       across the files, so each file gets about SIZE_KIB / CHUNK_KIB
 *       extents (COUNT = 1 gives a contiguous file). Then writes
 *       deterministic non-zero data over every file (see "Data pattern" below,
 *       seed = file index) and fsyncs it.
 *
 *   mkfrag sparse FILE SIZE_KIB
 *       A SIZE_KIB file made of 64 KiB of data every 256 KiB (holes in
 *       between; a size that is not a multiple of 256 KiB may end in a
 *       hole). Every data range is allocated as 16 KiB pieces separated
 *       physically, so the file is fragmented too. Seed 0.
 *
 *   mkfrag prealloc FILE SIZE_KIB
 *       A SIZE_KIB file whose quarters are: written data, unwritten
 *       (fallocate'd) range, written data, unwritten range; plus SIZE_KIB/4
 *       unwritten KiB past EOF (FALLOC_FL_KEEP_SIZE). Every range is
 *       allocated in 16 KiB pieces separated physically. Seed 0.
 *
 *   mkfrag cheese DIR
 *       Swiss-cheese free space: fallocates all free space of the
 *       filesystem into DIR/.cheese, then punches a hole every other 32 KiB
 *       of it, so the free space left is 32 KiB pieces and every file
 *       allocated afterwards is fragmented. Leaves DIR/.cheese in place.
 *
 *   mkfrag verify KIND FILE SEED
 *       Checks the content of a file made by "mkfrag KIND" (frag, sparse or
 *       prealloc) with SEED (a frag file's seed is its index; sparse and
 *       prealloc use 0): data ranges must hold the pattern, holes and
 *       unwritten ranges must read as zeros. Exit 0 if so, 1 with a message
 *       on the first wrong byte.
 *
 * Data pattern: the byte at file offset o is byte (o % 8) of
 * splitmix64(seed * 2^32 + o / 8), with a zero byte replaced by 0x5a. It
 * depends only on the seed and the offset, so any range can be checked.
 *
 * Physical separation ("spacers", sparse and prealloc): after every piece
 * of the file, mkfrag allocates a piece of the same size at the end of an
 * unlinked O_TMPFILE in the same directory. The file and the spacer then
 * leapfrog (each one's allocation goal is just after its last piece, which
 * the other took), so no piece continues the previous one physically. The
 * spacer blocks are freed at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

#define KIB 1024LL
#define BUF_SIZE (1024 * 1024)

static const char *prog = "mkfrag";

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s frag DIR PREFIX COUNT SIZE_KIB CHUNK_KIB\n"
		"       %s sparse FILE SIZE_KIB\n"
		"       %s prealloc FILE SIZE_KIB\n"
		"       %s cheese DIR\n"
		"       %s verify frag|sparse|prealloc FILE SEED\n",
		prog, prog, prog, prog, prog);
	exit(2);
}

static long long parse_num(const char *s, const char *what, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: bad %s '%s' (want %lld..%lld)\n", prog, what, s, min, max);
		exit(2);
	}
	return v;
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Fills buf with the pattern of seed for file offsets [off, off + len). */
static void fill_pattern(unsigned char *buf, uint64_t seed, long long off, size_t len)
{
	uint64_t word = 0, word_index = UINT64_MAX;

	for (size_t i = 0; i < len; i++) {
		uint64_t o = (uint64_t)off + i;
		unsigned char b;

		if (o / 8 != word_index) {
			word_index = o / 8;
			word = splitmix64((seed << 32) + word_index);
		}
		b = (unsigned char)(word >> ((o % 8) * 8));
		buf[i] = b ? b : 0x5a;
	}
}

static void xfallocate(int fd, int mode, long long off, long long len, const char *name)
{
	if (fallocate(fd, mode, off, len) < 0)
		die("fallocate %s [%lld, +%lld) mode %d: %s", name, off, len, mode, strerror(errno));
}

/* Writes the pattern of seed over [off, off + len) of fd. */
static void write_pattern(int fd, uint64_t seed, long long off, long long len, unsigned char *buf,
			  const char *name)
{
	while (len > 0) {
		size_t n = len > BUF_SIZE ? BUF_SIZE : (size_t)len;
		ssize_t w;

		fill_pattern(buf, seed, off, n);
		w = pwrite(fd, buf, n, off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("write %s at %lld: %s", name, off, strerror(errno));
		}
		if (w == 0)
			die("write %s at %lld: wrote nothing", name, off);
		off += w;
		len -= w;
	}
}

static void xfsync_close(int fd, const char *name)
{
	if (fsync(fd) < 0)
		die("fsync %s: %s", name, strerror(errno));
	if (close(fd) < 0)
		die("close %s: %s", name, strerror(errno));
}

static int open_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	return fd;
}

/* Directory part of path ("." when it has none); static buffer. */
static const char *dir_of(const char *path)
{
	static char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len;

	if (!slash)
		return ".";
	if (slash == path)
		return "/";
	len = (size_t)(slash - path);
	if (len >= sizeof(dir))
		die("path too long: %s", path);
	memcpy(dir, path, len);
	dir[len] = '\0';
	return dir;
}

/* Spacer: an unlinked file in dir that takes one block between pieces. */
struct spacer {
	int fd;
	long long next;
	long long block;
};

static void spacer_open(struct spacer *sp, const char *dir)
{
	struct statvfs st;

	sp->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (sp->fd < 0) {
		/* No O_TMPFILE: a named file, unlinked at once. */
		char name[PATH_MAX];

		if (snprintf(name, sizeof(name), "%s/.mkfrag-spacer.%ld", dir, (long)getpid()) >=
		    (int)sizeof(name))
			die("path too long: %s", dir);
		sp->fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (sp->fd < 0)
			die("open spacer in %s: %s", dir, strerror(errno));
		unlink(name);
	}
	if (fstatvfs(sp->fd, &st) < 0)
		die("statvfs %s: %s", dir, strerror(errno));
	sp->block = (long long)st.f_bsize;
	sp->next = 0;
}

/* Allocates len bytes (at least a block) at the end of the spacer: its
 * allocation goal is just after its previous piece, which the file being
 * built took, so the two leapfrog like the files of "frag". */
static void spacer_take(struct spacer *sp, long long len)
{
	if (len < sp->block)
		len = sp->block;
	xfallocate(sp->fd, 0, sp->next, len, "spacer");
	sp->next += len;
}

static void spacer_close(struct spacer *sp)
{
	close(sp->fd);
}

/* Allocates [off, off + len) of fd in pieces of piece bytes, with a spacer
 * block before every piece. */
static void alloc_pieces(int fd, struct spacer *sp, long long off, long long len, long long piece,
			 int mode, const char *name)
{
	while (len > 0) {
		long long n = len < piece ? len : piece;

		xfallocate(fd, mode, off, n, name);
		spacer_take(sp, n);
		off += n;
		len -= n;
	}
}

static int cmd_frag(int argc, char **argv)
{
	const char *dir, *prefix;
	long long count, size, chunk;
	unsigned char *buf;
	char path[PATH_MAX];
	int *fds;

	if (argc != 7)
		usage();
	dir = argv[2];
	prefix = argv[3];
	count = parse_num(argv[4], "COUNT", 1, 100000);
	size = parse_num(argv[5], "SIZE_KIB", 0, LLONG_MAX / KIB) * KIB;
	chunk = parse_num(argv[6], "CHUNK_KIB", 1, LLONG_MAX / KIB) * KIB;

	fds = calloc((size_t)count, sizeof(*fds));
	buf = malloc(BUF_SIZE);
	if (!fds || !buf)
		die("out of memory");
	for (long long i = 0; i < count; i++) {
		if (snprintf(path, sizeof(path), "%s/%s%lld", dir, prefix, i) >= (int)sizeof(path))
			die("path too long: %s/%s%lld", dir, prefix, i);
		fds[i] = open_file(path);
	}
	for (long long off = 0; off < size; off += chunk) {
		long long n = size - off < chunk ? size - off : chunk;

		for (long long i = 0; i < count; i++)
			xfallocate(fds[i], 0, off, n, prefix);
	}
	for (long long i = 0; i < count; i++) {
		write_pattern(fds[i], (uint64_t)i, 0, size, buf, prefix);
		xfsync_close(fds[i], prefix);
	}
	free(buf);
	free(fds);
	return 0;
}

static int cmd_sparse(int argc, char **argv)
{
	const long long stride = 256 * KIB, data = 64 * KIB, piece = 16 * KIB;
	struct spacer sp;
	unsigned char *buf;
	const char *file;
	long long size;
	int fd;

	if (argc != 4)
		usage();
	file = argv[2];
	size = parse_num(argv[3], "SIZE_KIB", 0, LLONG_MAX / KIB) * KIB;
	buf = malloc(BUF_SIZE);
	if (!buf)
		die("out of memory");
	fd = open_file(file);
	spacer_open(&sp, dir_of(file));
	for (long long off = 0; off < size; off += stride) {
		long long n = size - off < data ? size - off : data;

		alloc_pieces(fd, &sp, off, n, piece, 0, file);
	}
	for (long long off = 0; off < size; off += stride) {
		long long n = size - off < data ? size - off : data;

		write_pattern(fd, 0, off, n, buf, file);
	}
	if (ftruncate(fd, size) < 0)
		die("truncate %s: %s", file, strerror(errno));
	xfsync_close(fd, file);
	spacer_close(&sp);
	free(buf);
	return 0;
}

static int cmd_prealloc(int argc, char **argv)
{
	const long long piece = 16 * KIB;
	long long size, q[5];
	struct spacer sp;
	unsigned char *buf;
	const char *file;
	int fd;

	if (argc != 4)
		usage();
	file = argv[2];
	size = parse_num(argv[3], "SIZE_KIB", 4, LLONG_MAX / KIB / 2) * KIB;
	buf = malloc(BUF_SIZE);
	if (!buf)
		die("out of memory");
	/* Quarter boundaries, rounded down to 4 KiB (a block on any ext4 we
	 * make), so written and unwritten ranges do not share a block. */
	for (int i = 0; i <= 4; i++)
		q[i] = size * i / 4 / (4 * KIB) * (4 * KIB);
	q[4] = size;
	fd = open_file(file);
	spacer_open(&sp, dir_of(file));
	for (int i = 0; i < 4; i++)
		alloc_pieces(fd, &sp, q[i], q[i + 1] - q[i], piece, 0, file);
	alloc_pieces(fd, &sp, size, size / 4 > 4 * KIB ? size / 4 : 4 * KIB, piece,
		     FALLOC_FL_KEEP_SIZE, file);
	write_pattern(fd, 0, q[0], q[1] - q[0], buf, file);
	write_pattern(fd, 0, q[2], q[3] - q[2], buf, file);
	xfsync_close(fd, file);
	spacer_close(&sp);
	free(buf);
	return 0;
}

static int cmd_cheese(int argc, char **argv)
{
	const long long hole = 32 * KIB;
	char path[PATH_MAX];
	long long off = 0, step = 64 * 1024 * KIB, end;
	struct statvfs st;
	int fd;

	if (argc != 3)
		usage();
	if (snprintf(path, sizeof(path), "%s/.cheese", argv[2]) >= (int)sizeof(path))
		die("path too long: %s", argv[2]);
	fd = open_file(path);
	if (fstatvfs(fd, &st) < 0)
		die("statvfs %s: %s", argv[2], strerror(errno));
	/* Fill: big steps first, halve on ENOSPC down to one block. */
	while (step >= (long long)st.f_bsize) {
		if (fallocate(fd, 0, off, step) == 0) {
			off += step;
			continue;
		}
		if (errno != ENOSPC)
			die("fallocate %s: %s", path, strerror(errno));
		step /= 2;
	}
	end = off;
	for (off = 0; off < end; off += 2 * hole)
		xfallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			   end - off < hole ? end - off : hole, path);
	xfsync_close(fd, path);
	return 0;
}

/* Is file offset o a data byte of a file of the given kind and size? */
static int is_data(const char *kind, long long size, long long o)
{
	if (!strcmp(kind, "sparse"))
		return o % (256 * KIB) < 64 * KIB;
	if (!strcmp(kind, "prealloc")) {
		long long q1 = size / 4 / (4 * KIB) * (4 * KIB);
		long long q2 = size * 2 / 4 / (4 * KIB) * (4 * KIB);
		long long q3 = size * 3 / 4 / (4 * KIB) * (4 * KIB);

		return o < q1 || (o >= q2 && o < q3);
	}
	return 1;
}

static int cmd_verify(int argc, char **argv)
{
	const char *kind, *file;
	unsigned char *buf, *want;
	long long off = 0;
	struct stat st;
	uint64_t seed;
	int fd;

	if (argc != 5)
		usage();
	kind = argv[2];
	file = argv[3];
	if (strcmp(kind, "frag") && strcmp(kind, "sparse") && strcmp(kind, "prealloc"))
		usage();
	seed = (uint64_t)parse_num(argv[4], "SEED", 0, UINT32_MAX);
	buf = malloc(BUF_SIZE);
	want = malloc(BUF_SIZE);
	if (!buf || !want)
		die("out of memory");
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		die("open %s: %s", file, strerror(errno));
	for (;;) {
		ssize_t n = read(fd, buf, BUF_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("read %s: %s", file, strerror(errno));
		}
		if (n == 0)
			break;
		fill_pattern(want, seed, off, (size_t)n);
		for (ssize_t i = 0; i < n; i++) {
			unsigned char w = is_data(kind, st.st_size, off + i) ? want[i] : 0;

			if (buf[i] != w)
				die("%s: byte %lld is 0x%02x, want 0x%02x", file, off + i, buf[i], w);
		}
		off += n;
	}
	if (off != st.st_size)
		die("%s: read %lld bytes, size is %lld", file, off, (long long)st.st_size);
	close(fd);
	free(buf);
	free(want);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "frag"))
		return cmd_frag(argc, argv);
	if (!strcmp(argv[1], "sparse"))
		return cmd_sparse(argc, argv);
	if (!strcmp(argv[1], "prealloc"))
		return cmd_prealloc(argc, argv);
	if (!strcmp(argv[1], "cheese"))
		return cmd_cheese(argc, argv);
	if (!strcmp(argv[1], "verify"))
		return cmd_verify(argc, argv);
	usage();
}
