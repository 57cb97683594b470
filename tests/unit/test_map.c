/* Unit tests of core/map.c and core/mappng.c: the scenes of map.svg and
 * map.png (one band per run, the grid's classes), their fixed sizes,
 * also for a file of 100,000 runs and a grid of every class mixed, and
 * the time to make them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <linux/fiemap.h>

#include "map.h"

#define BS 4096u

/* A map of n records of len blocks; runs: a record starts a new physical
 * run every `per_run` records (1: every record). */
static void make_map(E4ExtentMap *m, size_t n, uint64_t len, size_t per_run)
{
	*m = (E4ExtentMap){ .ext = g_new0(E4Extent, n ? n : 1), .n = n, .cap = n };
	uint64_t phys = 1000;
	for (size_t i = 0; i < n; i++) {
		if (i && i % per_run == 0)
			phys += 7; /* a gap: a new run */
		m->ext[i] = (E4Extent){ .logical = i * len * BS, .physical = phys * BS, .length = len * BS };
		phys += len;
	}
	if (n)
		m->ext[n - 1].flags = FIEMAP_EXTENT_LAST;
}

static void free_map(E4ExtentMap *m)
{
	g_free(m->ext);
}

/* Bands of run colours crossing the strip's middle row. */
static unsigned strip_bands(const E4MapScene *s)
{
	unsigned n = 0;
	int y = E4_MAP_STRIP_Y + E4_MAP_STRIP_H / 2;
	for (guint i = 0; i < s->rects->len; i++) {
		const E4MapRect *r = &g_array_index(s->rects, E4MapRect, i);
		bool run = r->colour == E4_COL_ORANGE || r->colour == E4_COL_SKY || r->colour == E4_COL_GREEN;
		if (run && r->y <= y && y < r->y + r->h && r->x >= E4_MAP_STRIP_X &&
		    r->x < E4_MAP_STRIP_X + E4_MAP_STRIP_W)
			n++;
	}
	return n;
}

static bool under_valgrind(void)
{
	g_autofree char *maps = NULL;
	return g_file_get_contents("/proc/self/maps", &maps, NULL, NULL) && strstr(maps, "vgpreload");
}

START_TEST(map_file_bands)
{
	static const struct { size_t records, per_run; unsigned bands; } cases[] = {
		{ 1, 1, 1 }, { 8, 8, 1 }, { 8, 1, 8 }, { 8, 2, 4 }, { 256, 1, 256 }, { 0, 1, 0 },
	};
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		E4ExtentMap m;
		make_map(&m, cases[c].records, 4, cases[c].per_run);
		E4MapScene s;
		e4_map_file_scene(&m, cases[c].records * 4 * BS, BS, 1 << 20, &s);
		ck_assert_uint_eq(strip_bands(&s), cases[c].bands);
		e4_map_scene_clear(&s);
		free_map(&m);
	}
}
END_TEST

/* A hole is drawn as such between the runs, and is no band. */
START_TEST(map_file_hole_unwritten)
{
	E4ExtentMap m;
	make_map(&m, 2, 4, 1);
	m.ext[1].logical += 100 * BS;
	m.ext[1].flags |= FIEMAP_EXTENT_UNWRITTEN;
	E4MapScene s;
	e4_map_file_scene(&m, 108 * BS, BS, 1 << 20, &s);
	ck_assert_uint_eq(strip_bands(&s), 2);
	bool hole = false, unwritten = false;
	for (guint i = 0; i < s.rects->len; i++) {
		const E4MapRect *r = &g_array_index(s.rects, E4MapRect, i);
		hole |= r->colour == E4_COL_FREE && r->y == E4_MAP_STRIP_Y;
		unwritten |= r->colour == E4_COL_VERMILLION && r->y > E4_MAP_STRIP_Y + E4_MAP_STRIP_H;
	}
	ck_assert(hole);
	ck_assert(unwritten);
	g_autofree char *svg = e4_map_svg(&s);
	ck_assert_ptr_nonnull(strstr(svg, ">2 runs</text>"));
	ck_assert_ptr_nonnull(strstr(svg, " 1 hole,"));
	e4_map_scene_clear(&s);
	free_map(&m);
}
END_TEST

static void check_svg(const char *svg)
{
	ck_assert_ptr_nonnull(svg);
	ck_assert_uint_eq(strlen(svg), E4_MAP_SVG_SIZE);
	ck_assert(g_str_has_prefix(svg, "<?xml"));
	const char *end = strstr(svg, "</svg>\n<!--");
	ck_assert_ptr_nonnull(end);
	for (const char *p = strstr(end, "-->") + 4; *p; p++)
		ck_assert(*p == ' ' || *p == '\n');
}

static void check_png(const char *png)
{
	const unsigned char *p = (const unsigned char *)png;
	ck_assert_int_eq(memcmp(p, "\x89PNG\r\n\x1a\n", 8), 0);
	ck_assert_int_eq(memcmp(p + E4_MAP_PNG_SIZE - 8, "IEND", 4), 0);
	/* The padding chunk ends right before IEND; its length says where it starts. */
	ck_assert_ptr_nonnull(memmem(p, E4_MAP_PNG_SIZE, "ifPd", 4));
}

static double seconds_since(gint64 t0)
{
	return (double)(g_get_monotonic_time() - t0) / 1e6;
}

/* Writes scene s (begun at t0) as SVG and PNG, checks both and that the
 * SVG holds want, and that it all took under a second (outside valgrind). */
static void encode_timed(E4MapScene *s, gint64 t0, const char *what, const char *want)
{
	g_autofree char *svg = e4_map_svg(s);
	char *png = NULL;
	ck_assert_int_eq(e4_map_png(s, &png), 0);
	double secs = seconds_since(t0);
	check_svg(svg);
	check_png(png);
	ck_assert_ptr_nonnull(strstr(svg, want));
	printf("# %s: %.3f s\n", what, secs);
	if (!under_valgrind())
		ck_assert_double_lt(secs, 1.0);
	g_free(png);
	e4_map_scene_clear(s);
}

/* A file of 100,000 runs: drawn to scale, within the fixed sizes, in
 * under a second for scene, SVG and PNG together. */
START_TEST(map_file_many_runs)
{
	E4ExtentMap m;
	make_map(&m, 100000, 2, 1);
	gint64 t0 = g_get_monotonic_time();
	E4MapScene s;
	e4_map_file_scene(&m, 200000 * BS, BS, 1 << 22, &s);
	/* To scale: at most a band per pixel column, not one per run. */
	unsigned bands = strip_bands(&s);
	ck_assert_uint_le(bands, E4_MAP_STRIP_W);
	ck_assert_uint_gt(bands, E4_MAP_MAX_SEGMENTS);
	g_autofree char *svg = e4_map_svg(&s);
	ck_assert_ptr_nonnull(strstr(svg, "to scale"));
	encode_timed(&s, t0, "file of 100000 runs", ">100000 runs<");
	free_map(&m);
}
END_TEST

START_TEST(map_grid_classes)
{
	E4MapGrid g;
	e4_map_grid_init(&g, 2048 * 10);
	ck_assert_uint_eq(g.per_cell, 10);
	e4_map_grid_add(&g, 0, 10, E4_CELL_FREE);      /* cell 0: free */
	e4_map_grid_add(&g, 10, 6, E4_CELL_FREE);      /* cell 1: mostly free */
	e4_map_grid_add(&g, 20, 4, E4_CELL_FREE);      /* cell 2: mostly other */
	e4_map_grid_add(&g, 30, 9, E4_CELL_FREE);      /* cell 3: one contiguous block wins */
	e4_map_grid_add(&g, 39, 1, E4_CELL_CONTIGUOUS);
	e4_map_grid_add(&g, 45, 10, E4_CELL_CONTIGUOUS); /* cells 4, 5; 5 also fragmented */
	e4_map_grid_add(&g, 59, 1, E4_CELL_FRAGMENTED);
	e4_map_grid_add(&g, 2048 * 10 - 8, 100, E4_CELL_FREE); /* clipped */
	ck_assert_int_eq(e4_map_grid_cell(&g, 0), E4_CELL_FREE);
	ck_assert_int_eq(e4_map_grid_cell(&g, 1), E4_CELL_FREE);
	ck_assert_int_eq(e4_map_grid_cell(&g, 2), E4_CELL_OTHER);
	ck_assert_int_eq(e4_map_grid_cell(&g, 3), E4_CELL_CONTIGUOUS);
	ck_assert_int_eq(e4_map_grid_cell(&g, 4), E4_CELL_CONTIGUOUS);
	ck_assert_int_eq(e4_map_grid_cell(&g, 5), E4_CELL_FRAGMENTED);
	ck_assert_int_eq(e4_map_grid_cell(&g, 6), E4_CELL_OTHER);
	ck_assert_int_eq(e4_map_grid_cell(&g, 2047), E4_CELL_FREE);
	ck_assert_uint_eq(g.blocks[E4_CELL_FREE], 10 + 6 + 4 + 9 + 8);
	e4_map_grid_clear(&g);
}
END_TEST

/* A directory of 100,000 files of two runs each, every cell of a class
 * other than its neighbours': the worst case for both encoders. */
START_TEST(map_dir_many_files)
{
	gint64 t0 = g_get_monotonic_time();
	E4MapGrid g;
	uint64_t total = 1ull << 28;
	e4_map_grid_init(&g, total);
	GRand *r = g_rand_new_with_seed(7);
	E4Summary sum = { .files = 100000, .analysed = 100000, .runs = 200000, .blocks = 400000 };
	for (int f = 0; f < 100000; f++)
		for (int k = 0; k < 2; k++)
			e4_map_grid_add(&g, g_rand_int_range(r, 0, INT32_MAX) % total, 2,
					f % 3 ? E4_CELL_CONTIGUOUS : E4_CELL_FRAGMENTED);
	for (size_t i = 0; i < 2048; i++)
		if (i % 4 == 3) /* no file data: free or other */
			memset(g.cells[i], 0, sizeof(g.cells[i])), g.cells[i][E4_CELL_FREE] = i % 8 == 3 ? g.per_cell : 0;
	E4MapScene s;
	e4_map_dir_scene(&g, &sum, BS, &s);
	encode_timed(&s, t0, "directory of 100000 files", "100000 files, 200000 runs");
	g_rand_free(r);
	e4_map_grid_clear(&g);
}
END_TEST

START_TEST(map_png_pad)
{
	unsigned char buf[64] = "\x89PNG\r\n\x1a\n";
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };
	memcpy(buf + 8, iend, 12);
	ck_assert_int_eq(e4_map_png_pad(buf, 20, 31), -EINVAL); /* no room for a chunk */
	ck_assert_int_eq(e4_map_png_pad(buf, 20, 40), 0);
	/* An ifPd chunk of 8 zero bytes, its CRC (zlib's crc32 of "ifPd" and 8 zeros), IEND. */
	static const unsigned char chunk[] = { 0, 0, 0, 8, 'i', 'f', 'P', 'd', 0, 0, 0, 0, 0, 0, 0, 0 };
	ck_assert_int_eq(memcmp(buf + 8, chunk, sizeof(chunk)), 0);
	ck_assert_int_eq(memcmp(buf + 28, iend, 12), 0);
	memcpy(buf + 32, "JUNK", 4);
	ck_assert_int_eq(e4_map_png_pad(buf, 40, 64), -EINVAL); /* no IEND at the end */
}
END_TEST

START_TEST(map_svg_escapes)
{
	E4MapScene s;
	e4_map_scene_init(&s);
	e4_map_text(&s, 1, 2, 10, E4_ANCHOR_END, true, "a<b&c>");
	g_autofree char *svg = e4_map_svg(&s);
	check_svg(svg);
	ck_assert_ptr_nonnull(strstr(svg, "text-anchor=\"end\">a&lt;b&amp;c&gt;</text>"));
	e4_map_scene_clear(&s);
}
END_TEST

static Suite *map_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	/* Leak checkers at each test's exit (forked) see cairo's font caches freed. */
	tcase_add_checked_fixture(tc, NULL, e4_map_png_shutdown);
	tcase_add_test(tc, map_file_bands);
	tcase_add_test(tc, map_file_hole_unwritten);
	tcase_add_test(tc, map_file_many_runs);
	tcase_add_test(tc, map_grid_classes);
	tcase_add_test(tc, map_dir_many_files);
	tcase_add_test(tc, map_png_pad);
	tcase_add_test(tc, map_svg_escapes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(map_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
