/* Pictures of the layout: map.svg and map.png. A picture is first a
 * scene (rectangles and lines of text on a fixed canvas, in pixels), made
 * from a file's extent map or from a directory's block classification;
 * the scene is then written as SVG text (map.c) or drawn as PNG with
 * cairo (mappng.c), so both formats show the same picture.
 *
 * Both outputs have a fixed byte size, E4_MAP_SVG_SIZE and E4_MAP_PNG_SIZE,
 * padded (SVG: spaces after a comment past the root element; PNG: a
 * private ancillary chunk "ifPd" before IEND), so that a stat can report
 * the true size without mapping anything. Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "fiemap.h"
#include "score.h"

/* The canvas, pixels. */
#define E4_MAP_WIDTH 800
#define E4_MAP_HEIGHT 500

/* Fixed byte sizes of map.svg and map.png. */
#define E4_MAP_SVG_SIZE 131072
#define E4_MAP_PNG_SIZE 131072

/* A file's strip draws one band per run (each at least E4_MAP_MIN_BAND
 * pixels wide) while runs and holes together are at most
 * E4_MAP_MAX_SEGMENTS; beyond, it is drawn to scale, pixel by pixel (runs
 * narrower than a pixel share it). */
#define E4_MAP_MAX_SEGMENTS 256
#define E4_MAP_MIN_BAND 2

/* The strip of a file map: x in [E4_MAP_STRIP_X, + E4_MAP_STRIP_W), y in
 * [E4_MAP_STRIP_Y, + E4_MAP_STRIP_H). Documented for pixel checks. */
#define E4_MAP_STRIP_X 16
#define E4_MAP_STRIP_W 768
#define E4_MAP_STRIP_Y 80
#define E4_MAP_STRIP_H 100

/* The grid of a directory map: E4_MAP_COLS x E4_MAP_ROWS cells of
 * E4_MAP_CELL pixels (one less drawn, a gap), from E4_MAP_GRID_X, _Y. */
#define E4_MAP_COLS 64
#define E4_MAP_ROWS 32
#define E4_MAP_CELL 12
#define E4_MAP_GRID_X 16
#define E4_MAP_GRID_Y 64

/* Colours: Okabe & Ito's colour-blind-safe palette, and greys. */
typedef enum {
	E4_COL_WHITE,      /* background */
	E4_COL_TEXT,       /* black */
	E4_COL_ORANGE,     /* #E69F00: runs (1 of 3) */
	E4_COL_SKY,        /* #56B4E9: runs (2 of 3) */
	E4_COL_GREEN,      /* #009E73: runs (3 of 3) */
	E4_COL_BLUE,       /* #0072B2: the subtree's contiguous data */
	E4_COL_VERMILLION, /* #D55E00: the subtree's fragmented data; unwritten */
	E4_COL_PURPLE,     /* #CC79A7: files' runs on the disk bar */
	E4_COL_OTHER,      /* #8C8C8C: other data and metadata */
	E4_COL_FREE,       /* #E4E4E4: free space, holes */
	E4_COL_BAR,        /* #F4F4F4: the disk bar's background */
	E4_COL__COUNT
} E4MapColour;

/* 0xRRGGBB of a colour. */
uint32_t e4_map_rgb(E4MapColour c);

typedef struct {
	int16_t x, y, w, h;
	uint8_t colour;
} E4MapRect;

typedef enum { E4_ANCHOR_START, E4_ANCHOR_MIDDLE, E4_ANCHOR_END } E4MapAnchor;

typedef struct {
	int16_t x, y;      /* baseline */
	uint8_t size;      /* pixels */
	uint8_t anchor;
	bool bold;
	char *text;        /* ASCII */
} E4MapText;

typedef struct {
	GArray *rects;     /* E4MapRect, drawn in order */
	GArray *texts;     /* E4MapText */
} E4MapScene;

void e4_map_scene_init(E4MapScene *s);
void e4_map_scene_clear(E4MapScene *s);
void e4_map_rect(E4MapScene *s, int x, int y, int w, int h, E4MapColour c);
void e4_map_text(E4MapScene *s, int x, int y, int size, E4MapAnchor anchor, bool bold,
		 const char *fmt, ...) G_GNUC_PRINTF(7, 8);

/* The scene of a file: its records in logical order as a strip (one band
 * per physical run, holes and unwritten ranges marked), a bar of the
 * whole filesystem (total_blocks blocks of bs bytes) with the runs where
 * they lie, a legend and a scale. size: st_size, bytes. */
void e4_map_file_scene(const E4ExtentMap *map, uint64_t size, uint32_t bs, uint64_t total_blocks,
		       E4MapScene *out);

/* What a directory map's cells hold, by priority: a cell with any of the
 * subtree's fragmented data is drawn so, else with any of its contiguous
 * data, else as other data or free space, whichever has more blocks. */
typedef enum {
	E4_CELL_FRAGMENTED,
	E4_CELL_CONTIGUOUS,
	E4_CELL_OTHER,
	E4_CELL_FREE,
	E4_CELL__COUNT
} E4CellClass;

/* Blocks per class in each cell of the whole filesystem. */
typedef struct {
	uint64_t total_blocks;
	uint64_t per_cell;         /* blocks of a cell (the last may hold fewer) */
	uint64_t (*cells)[E4_CELL__COUNT]; /* E4_MAP_COLS * E4_MAP_ROWS */
	uint64_t blocks[E4_CELL__COUNT];   /* totals */
} E4MapGrid;

void e4_map_grid_init(E4MapGrid *g, uint64_t total_blocks);
void e4_map_grid_clear(E4MapGrid *g);
/* Counts blocks [start, start + len) as class c (clipped to the fs). */
void e4_map_grid_add(E4MapGrid *g, uint64_t start, uint64_t len, E4CellClass c);
/* The class a cell is drawn as; blocks not added count as other data. */
E4CellClass e4_map_grid_cell(const E4MapGrid *g, size_t cell);

/* The scene of a directory: the grid, the subtree's figures (sum), legend
 * and scale. */
void e4_map_dir_scene(const E4MapGrid *g, const E4Summary *sum, uint32_t bs, E4MapScene *out);

/* The scene as SVG, padded to E4_MAP_SVG_SIZE bytes; NULL (never, for
 * scenes made above) when it would not fit. g_free. */
char *e4_map_svg(const E4MapScene *s);

/* The scene as PNG (cairo), padded to E4_MAP_PNG_SIZE bytes with an
 * "ifPd" chunk before IEND; a scene whose PNG would not fit is drawn
 * without its rectangles, with a line saying so. Returns 0 with *out
 * (g_free, E4_MAP_PNG_SIZE bytes), or -ENOMEM. */
int e4_map_png(const E4MapScene *s, char **out);

/* Pads a PNG of len bytes in buf (capacity size) to exactly size bytes
 * with an "ifPd" chunk before its IEND chunk. Returns 0, or -EINVAL when
 * buf is no PNG ending in IEND or it would not fit. */
int e4_map_png_pad(unsigned char *buf, size_t len, size_t size);

/* Frees what cairo and fontconfig keep for the process (font caches), at
 * its exit, so leak checkers see nothing; no picture may be drawn after. */
void e4_map_png_shutdown(void);
