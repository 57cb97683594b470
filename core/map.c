#include "map.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/fiemap.h>

static const uint32_t palette[E4_COL__COUNT] = {
	[E4_COL_WHITE] = 0xFFFFFF,
	[E4_COL_TEXT] = 0x000000,
	[E4_COL_ORANGE] = 0xE69F00,
	[E4_COL_SKY] = 0x56B4E9,
	[E4_COL_GREEN] = 0x009E73,
	[E4_COL_BLUE] = 0x0072B2,
	[E4_COL_VERMILLION] = 0xD55E00,
	[E4_COL_PURPLE] = 0xCC79A7,
	[E4_COL_OTHER] = 0x8C8C8C,
	[E4_COL_FREE] = 0xE4E4E4,
	[E4_COL_BAR] = 0xF4F4F4,
};

uint32_t e4_map_rgb(E4MapColour c)
{
	return c < E4_COL__COUNT ? palette[c] : 0;
}

void e4_map_scene_init(E4MapScene *s)
{
	s->rects = g_array_new(FALSE, FALSE, sizeof(E4MapRect));
	s->texts = g_array_new(FALSE, FALSE, sizeof(E4MapText));
}

void e4_map_scene_clear(E4MapScene *s)
{
	if (s->texts)
		for (guint i = 0; i < s->texts->len; i++)
			g_free(g_array_index(s->texts, E4MapText, i).text);
	g_clear_pointer(&s->rects, g_array_unref);
	g_clear_pointer(&s->texts, g_array_unref);
}

void e4_map_rect(E4MapScene *s, int x, int y, int w, int h, E4MapColour c)
{
	if (w <= 0 || h <= 0)
		return;
	E4MapRect r = { (int16_t)x, (int16_t)y, (int16_t)w, (int16_t)h, (uint8_t)c };
	g_array_append_val(s->rects, r);
}

void e4_map_text(E4MapScene *s, int x, int y, int size, E4MapAnchor anchor, bool bold,
		 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	E4MapText t = { (int16_t)x, (int16_t)y, (uint8_t)size, (uint8_t)anchor, bold,
			g_strdup_vprintf(fmt, ap) };
	va_end(ap);
	g_array_append_val(s->texts, t);
}

/* A byte count for people: "12.3 MiB". */
static void human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < G_N_ELEMENTS(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" G_GUINT64_FORMAT " B", bytes);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

/* One row of pixel columns, each of one colour, drawn as merged rects. */
static void columns_draw(E4MapScene *s, const uint8_t *col, int x, int y, int w, int h)
{
	int start = 0;
	for (int i = 1; i <= w; i++)
		if (i == w || col[i] != col[start]) {
			e4_map_rect(s, x + start, y, i - start, h, (E4MapColour)col[start]);
			start = i;
		}
}

/* Paints columns [x0, x1) of a row of w (pixel positions of a range of
 * [0, total) units), at least one column. */
static void columns_paint(uint8_t *col, int w, uint64_t from, uint64_t to, uint64_t total, uint8_t c)
{
	if (total == 0 || from >= total)
		return;
	int x0 = (int)((double)from * w / (double)total);
	int x1 = (int)((double)(to < total ? to : total) * w / (double)total);
	if (x0 >= w)
		x0 = w - 1;
	if (x1 <= x0)
		x1 = x0 + 1;
	memset(col + x0, c, (size_t)(x1 - x0));
}

static void legend(E4MapScene *s, int *x, int y, E4MapColour c, const char *label)
{
	e4_map_rect(s, *x, y - 11, 14, 14, c);
	e4_map_text(s, *x + 19, y, 12, E4_ANCHOR_START, false, "%s", label);
	*x += 19 + 7 * (int)strlen(label) + 18;
}

/* A piece of a file's strip: a record (run >= 0) or a hole (run -1). */
typedef struct {
	uint64_t from, to;   /* logical, bytes */
	int64_t run;
	bool unwritten;
} Segment;

static const uint8_t run_colours[3] = { E4_COL_ORANGE, E4_COL_SKY, E4_COL_GREEN };

static uint8_t segment_colour(const Segment *g)
{
	return g->run < 0 ? E4_COL_FREE : run_colours[g->run % 3];
}

/* The strip's segments, in logical order, over [0, span). */
static GArray *file_segments(const E4ExtentMap *map, uint64_t span, uint64_t *runs)
{
	GArray *v = g_array_new(FALSE, FALSE, sizeof(Segment));
	uint64_t cursor = 0;
	int64_t run = -1;
	for (size_t i = 0; i < map->n; i++) {
		const E4Extent *e = &map->ext[i];
		if (e->logical > cursor) {
			Segment hole = { cursor, e->logical, -1, false };
			g_array_append_val(v, hole);
		}
		if (i == 0 || e->physical != map->ext[i - 1].physical + map->ext[i - 1].length)
			run++;
		Segment g = { e->logical, e->logical + e->length, run,
			      (e->flags & FIEMAP_EXTENT_UNWRITTEN) != 0 };
		g_array_append_val(v, g);
		if (g.to > cursor)
			cursor = g.to;
	}
	if (cursor < span) {
		Segment hole = { cursor, span, -1, false };
		g_array_append_val(v, hole);
	}
	*runs = (uint64_t)(run + 1);
	return v;
}

/* Draws the strip (and the unwritten marks under it) of segs over span. */
static void file_strip(E4MapScene *s, const GArray *segs, uint64_t span)
{
	enum { W = E4_MAP_STRIP_W };
	uint8_t col[W], mark[W];
	memset(col, E4_COL_FREE, W);
	memset(mark, E4_COL_WHITE, W);
	guint n = segs->len;
	if (n <= E4_MAP_MAX_SEGMENTS) {
		/* One band each, at least E4_MAP_MIN_BAND wide, the rest to scale. */
		double spare = (double)(W - (int)n * E4_MAP_MIN_BAND);
		for (guint i = 0; i < n; i++) {
			const Segment *g = &g_array_index(segs, Segment, i);
			int x0 = (int)i * E4_MAP_MIN_BAND + (int)(spare * (double)g->from / (double)span);
			int x1 = (int)(i + 1) * E4_MAP_MIN_BAND + (int)(spare * (double)g->to / (double)span);
			if (i + 1 == n)
				x1 = W;
			if (x1 > W)
				x1 = W;
			if (x1 > x0) {
				memset(col + x0, segment_colour(g), (size_t)(x1 - x0));
				if (g->unwritten)
					memset(mark + x0, E4_COL_VERMILLION, (size_t)(x1 - x0));
			}
		}
	} else {
		for (guint i = 0; i < n; i++) {
			const Segment *g = &g_array_index(segs, Segment, i);
			columns_paint(col, W, g->from, g->to, span, segment_colour(g));
			if (g->unwritten)
				columns_paint(mark, W, g->from, g->to, span, E4_COL_VERMILLION);
		}
	}
	columns_draw(s, col, E4_MAP_STRIP_X, E4_MAP_STRIP_Y, W, E4_MAP_STRIP_H);
	columns_draw(s, mark, E4_MAP_STRIP_X, E4_MAP_STRIP_Y + E4_MAP_STRIP_H + 4, W, 8);
}

/* Ticks and labels of a scale of total bytes under a bar at y. */
static void scale(E4MapScene *s, int y, uint64_t total, const char *unit_note)
{
	char buf[32];
	for (int i = 0; i <= 4; i++) {
		int x = E4_MAP_STRIP_X + (E4_MAP_STRIP_W - 1) * i / 4;
		e4_map_rect(s, x, y, 1, 6, E4_COL_TEXT);
		human(total / 4 * (uint64_t)i + (i == 4 ? total % 4 : 0), buf, sizeof(buf));
		e4_map_text(s, x, y + 19, 12, i == 0 ? E4_ANCHOR_START : i == 4 ? E4_ANCHOR_END : E4_ANCHOR_MIDDLE,
			    false, "%s", buf);
	}
	e4_map_text(s, E4_MAP_STRIP_X + E4_MAP_STRIP_W / 2, y + 35, 12, E4_ANCHOR_MIDDLE, false, "%s",
		    unit_note);
}

void e4_map_file_scene(const E4ExtentMap *map, uint64_t size, uint32_t bs, uint64_t total_blocks,
		       E4MapScene *out)
{
	e4_map_scene_init(out);
	uint64_t span = size, mapped = 0, unwritten = 0, holes = 0;
	for (size_t i = 0; i < map->n; i++) {
		const E4Extent *e = &map->ext[i];
		if (e->logical + e->length > span)
			span = e->logical + e->length;
		mapped += e->length;
		if (e->flags & FIEMAP_EXTENT_UNWRITTEN)
			unwritten += e->length;
	}
	uint64_t runs = 0;
	g_autoptr(GArray) segs = file_segments(map, span, &runs);
	for (guint i = 0; i < segs->len; i++)
		holes += g_array_index(segs, Segment, i).run < 0;

	char sz[32], mean[32], disk[32];
	human(size, sz, sizeof(sz));
	human(runs ? mapped / runs : 0, mean, sizeof(mean));
	uint64_t disk_bytes = total_blocks * bs;
	human(disk_bytes, disk, sizeof(disk));
	e4_map_text(out, 16, 30, 20, E4_ANCHOR_START, true, "%" G_GUINT64_FORMAT " run%s", runs,
		    runs == 1 ? "" : "s");
	e4_map_text(out, 16, 54, 13, E4_ANCHOR_START, false,
		    "size %s, %" G_GUINT64_FORMAT " blocks of %u bytes, %" G_GUINT64_FORMAT
		    " FIEMAP records, %" G_GUINT64_FORMAT " hole%s, %" G_GUINT64_FORMAT
		    " unwritten blocks, mean run %s",
		    sz, bs ? mapped / bs : 0, bs, (uint64_t)map->n, holes, holes == 1 ? "" : "s",
		    bs ? unwritten / bs : 0, mean);
	e4_map_text(out, E4_MAP_STRIP_X + E4_MAP_STRIP_W, 30, 12, E4_ANCHOR_END, false,
		    segs->len <= E4_MAP_MAX_SEGMENTS ? "one band per run, in file order"
						     : "to scale: runs narrower than a pixel share it");
	e4_map_text(out, 16, E4_MAP_STRIP_Y - 8, 12, E4_ANCHOR_START, false,
		    "the file in logical order (a band is a physical run)");
	if (span > 0)
		file_strip(out, segs, span);
	else
		e4_map_text(out, E4_MAP_STRIP_X + E4_MAP_STRIP_W / 2, E4_MAP_STRIP_Y + 55, 16,
			    E4_ANCHOR_MIDDLE, false, "no blocks");
	scale(out, E4_MAP_STRIP_Y + E4_MAP_STRIP_H + 14, span, "offset in the file");

	/* The whole filesystem, with the runs where they lie. */
	enum { W = E4_MAP_STRIP_W, BAR_Y = 300, BAR_H = 40 };
	e4_map_text(out, 16, BAR_Y - 8, 12, E4_ANCHOR_START, false,
		    "where the runs lie on the disk (the whole filesystem, %s)", disk);
	uint8_t col[W];
	memset(col, E4_COL_BAR, W);
	for (guint i = 0; i < segs->len; i++) {
		const Segment *g = &g_array_index(segs, Segment, i);
		if (g->run < 0)
			continue;
		/* The record of this segment: segments of records keep their order. */
		(void)g;
	}
	int64_t run = -1;
	for (size_t i = 0; i < map->n; i++) {
		const E4Extent *e = &map->ext[i];
		if (i == 0 || e->physical != map->ext[i - 1].physical + map->ext[i - 1].length)
			run++;
		columns_paint(col, W, e->physical, e->physical + e->length, disk_bytes,
			      run_colours[run % 3]);
	}
	columns_draw(out, col, E4_MAP_STRIP_X, BAR_Y, W, BAR_H);
	scale(out, BAR_Y + BAR_H + 4, disk_bytes, "position on the disk");

	int x = 16;
	for (int i = 0; i < 2; i++)
		e4_map_rect(out, x + 16 * i, 440 - 11, 14, 14, (E4MapColour)run_colours[i]);
	x += 32;
	legend(out, &x, 440, (E4MapColour)run_colours[2], "runs (colours alternate)");
	legend(out, &x, 440, E4_COL_FREE, "hole");
	legend(out, &x, 440, E4_COL_VERMILLION, "unwritten (under the strip)");
	legend(out, &x, 440, E4_COL_BAR, "rest of the disk");
	e4_map_text(out, 16, 480, 11, E4_ANCHOR_START, false,
		    "e4infofs map, Okabe-Ito colour-blind-safe palette");
}

void e4_map_grid_init(E4MapGrid *g, uint64_t total_blocks)
{
	*g = (E4MapGrid){ .total_blocks = total_blocks };
	uint64_t cells = E4_MAP_COLS * E4_MAP_ROWS;
	g->per_cell = total_blocks ? (total_blocks + cells - 1) / cells : 1;
	g->cells = g_malloc0(sizeof(*g->cells) * cells);
}

void e4_map_grid_clear(E4MapGrid *g)
{
	g_clear_pointer(&g->cells, g_free);
}

void e4_map_grid_add(E4MapGrid *g, uint64_t start, uint64_t len, E4CellClass c)
{
	if (start >= g->total_blocks || c >= E4_CELL__COUNT)
		return;
	if (len > g->total_blocks - start)
		len = g->total_blocks - start;
	g->blocks[c] += len;
	while (len > 0) {
		uint64_t cell = start / g->per_cell;
		uint64_t in = (cell + 1) * g->per_cell - start;
		if (in > len)
			in = len;
		g->cells[cell][c] += in;
		start += in;
		len -= in;
	}
}

E4CellClass e4_map_grid_cell(const E4MapGrid *g, size_t cell)
{
	const uint64_t *b = g->cells[cell];
	if (b[E4_CELL_FRAGMENTED])
		return E4_CELL_FRAGMENTED;
	if (b[E4_CELL_CONTIGUOUS])
		return E4_CELL_CONTIGUOUS;
	uint64_t first = cell * g->per_cell;
	uint64_t blocks = first >= g->total_blocks ? 0 : MIN(g->per_cell, g->total_blocks - first);
	uint64_t known = b[E4_CELL_FREE] + b[E4_CELL_OTHER];
	uint64_t other = b[E4_CELL_OTHER] + (blocks > known ? blocks - known : 0);
	return b[E4_CELL_FREE] > other ? E4_CELL_FREE : E4_CELL_OTHER;
}

static const uint8_t cell_colours[E4_CELL__COUNT] = {
	[E4_CELL_FRAGMENTED] = E4_COL_VERMILLION,
	[E4_CELL_CONTIGUOUS] = E4_COL_BLUE,
	[E4_CELL_OTHER] = E4_COL_OTHER,
	[E4_CELL_FREE] = E4_COL_FREE,
};

void e4_map_dir_scene(const E4MapGrid *g, const E4Summary *sum, uint32_t bs, E4MapScene *out)
{
	e4_map_scene_init(out);
	int score = e4_summary_score(sum);
	e4_map_text(out, 16, 30, 20, E4_ANCHOR_START, true, "score %d (%s)", score,
		    e4_score_verdict(score));
	e4_map_text(out, 16, 52, 13, E4_ANCHOR_START, false,
		    "%" G_GUINT64_FORMAT " files, %" G_GUINT64_FORMAT " runs, layout score %.4f, %"
		    G_GUINT64_FORMAT " fragmented files",
		    sum->files, sum->runs, e4_summary_layout_score(sum), sum->fragmented);
	char free_b[32], disk[32], cell[32], row[32];
	human(g->blocks[E4_CELL_FREE] * bs, free_b, sizeof(free_b));
	human(g->total_blocks * bs, disk, sizeof(disk));
	e4_map_text(out, E4_MAP_STRIP_X + E4_MAP_STRIP_W, 30, 12, E4_ANCHOR_END, false,
		    "free %s of %s (%.1f%%)", free_b, disk,
		    g->total_blocks ? 100.0 * (double)g->blocks[E4_CELL_FREE] / (double)g->total_blocks : 0);
	size_t cells = E4_MAP_COLS * E4_MAP_ROWS;
	for (size_t i = 0; i < cells; i++) {
		if ((uint64_t)i * g->per_cell >= g->total_blocks)
			break;
		int x = E4_MAP_GRID_X + (int)(i % E4_MAP_COLS) * E4_MAP_CELL;
		int y = E4_MAP_GRID_Y + (int)(i / E4_MAP_COLS) * E4_MAP_CELL;
		e4_map_rect(out, x, y, E4_MAP_CELL - 1, E4_MAP_CELL - 1,
			    (E4MapColour)cell_colours[e4_map_grid_cell(g, i)]);
	}
	human(g->per_cell * bs, cell, sizeof(cell));
	human(g->per_cell * bs * E4_MAP_COLS, row, sizeof(row));
	int y = E4_MAP_GRID_Y + E4_MAP_ROWS * E4_MAP_CELL + 14;
	e4_map_text(out, 16, y, 12, E4_ANCHOR_START, false,
		    "the whole filesystem: a cell is %s (%" G_GUINT64_FORMAT
		    " blocks), a row %s; block 0 at top left, rows left to right",
		    cell, g->per_cell, row);
	int x = 16;
	y += 22;
	legend(out, &x, y, E4_COL_BLUE, "this subtree, contiguous");
	legend(out, &x, y, E4_COL_VERMILLION, "this subtree, fragmented");
	legend(out, &x, y, E4_COL_OTHER, "other data");
	legend(out, &x, y, E4_COL_FREE, "free");
}

static void xml_escape(GString *out, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': g_string_append(out, "&amp;"); break;
		case '<': g_string_append(out, "&lt;"); break;
		case '>': g_string_append(out, "&gt;"); break;
		default: g_string_append_c(out, *s);
		}
}

static const char *const anchors[] = { "start", "middle", "end" };

char *e4_map_svg(const E4MapScene *s)
{
	GString *out = g_string_sized_new(E4_MAP_SVG_SIZE);
	g_string_append_printf(out,
			       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			       "viewBox=\"0 0 %d %d\" shape-rendering=\"crispEdges\">\n"
			       "<rect width=\"%d\" height=\"%d\" fill=\"#%06X\"/>\n",
			       E4_MAP_WIDTH, E4_MAP_HEIGHT, E4_MAP_WIDTH, E4_MAP_HEIGHT, E4_MAP_WIDTH,
			       E4_MAP_HEIGHT, palette[E4_COL_WHITE]);
	/* Rects of a scene never overlap: one path per colour. */
	for (int c = 0; c < E4_COL__COUNT; c++) {
		bool open = false;
		for (guint i = 0; i < s->rects->len; i++) {
			const E4MapRect *r = &g_array_index(s->rects, E4MapRect, i);
			if (r->colour != c)
				continue;
			if (!open)
				g_string_append_printf(out, "<path fill=\"#%06X\" d=\"", palette[c]);
			open = true;
			g_string_append_printf(out, "M%d %dh%dv%dh-%dz", r->x, r->y, r->w, r->h, r->w);
		}
		if (open)
			g_string_append(out, "\"/>\n");
	}
	g_string_append_printf(out, "<g font-family=\"DejaVu Sans,Verdana,sans-serif\" fill=\"#%06X\">\n",
			       palette[E4_COL_TEXT]);
	for (guint i = 0; i < s->texts->len; i++) {
		const E4MapText *t = &g_array_index(s->texts, E4MapText, i);
		g_string_append_printf(out, "<text x=\"%d\" y=\"%d\" font-size=\"%d\"", t->x, t->y, t->size);
		if (t->bold)
			g_string_append(out, " font-weight=\"bold\"");
		if (t->anchor)
			g_string_append_printf(out, " text-anchor=\"%s\"", anchors[t->anchor]);
		g_string_append_c(out, '>');
		xml_escape(out, t->text);
		g_string_append(out, "</text>\n");
	}
	g_string_append(out, "</g>\n</svg>\n");
	static const char pad[] = "<!-- e4infofs: padded to a fixed size -->\n";
	if (out->len + sizeof(pad) > E4_MAP_SVG_SIZE) {
		g_string_free(out, TRUE);
		return NULL;
	}
	g_string_append(out, pad);
	while (out->len < E4_MAP_SVG_SIZE - 1)
		g_string_append_c(out, ' ');
	g_string_append_c(out, '\n');
	return g_string_free(out, FALSE);
}
