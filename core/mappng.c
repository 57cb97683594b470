/* A map scene drawn as PNG with cairo, padded to a fixed size. */
#include "map.h"

#include <errno.h>
#include <string.h>

#include <cairo.h>
#include <fontconfig/fontconfig.h>

static uint32_t crc32_png(const unsigned char *p, size_t n, uint32_t crc)
{
	static uint32_t table[256];
	static gsize made;
	if (g_once_init_enter(&made)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		g_once_init_leave(&made, 1);
	}
	for (size_t i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
	return crc;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

int e4_map_png_pad(unsigned char *buf, size_t len, size_t size)
{
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };
	if (len < 8 + 12 || memcmp(buf + len - 12, iend, 12) != 0 || len + 12 > size)
		return -EINVAL;
	/* The chunk goes where IEND was, and IEND after it. */
	unsigned char *c = buf + len - 12;
	size_t data = size - len - 12;
	put32(c, (uint32_t)data);
	memcpy(c + 4, "ifPd", 4);
	memset(c + 8, 0, data);
	put32(c + 8 + data, crc32_png(c + 4, 4 + data, 0xFFFFFFFFu) ^ 0xFFFFFFFFu);
	memcpy(c + 12 + data, iend, 12);
	return 0;
}

static void set_colour(cairo_t *cr, uint32_t rgb)
{
	cairo_set_source_rgb(cr, ((rgb >> 16) & 0xFF) / 255.0, ((rgb >> 8) & 0xFF) / 255.0,
			     (rgb & 0xFF) / 255.0);
}

static void draw(cairo_t *cr, const E4MapScene *s, bool rects)
{
	set_colour(cr, e4_map_rgb(E4_COL_WHITE));
	cairo_paint(cr);
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
	for (guint i = 0; rects && i < s->rects->len; i++) {
		const E4MapRect *r = &g_array_index(s->rects, E4MapRect, i);
		set_colour(cr, e4_map_rgb((E4MapColour)r->colour));
		cairo_rectangle(cr, r->x, r->y, r->w, r->h);
		cairo_fill(cr);
	}
	cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
	set_colour(cr, e4_map_rgb(E4_COL_TEXT));
	for (guint i = 0; i < s->texts->len; i++) {
		const E4MapText *t = &g_array_index(s->texts, E4MapText, i);
		cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
				       t->bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
		cairo_set_font_size(cr, t->size);
		cairo_text_extents_t ext;
		cairo_text_extents(cr, t->text, &ext);
		double x = t->x - (t->anchor == E4_ANCHOR_MIDDLE ? ext.x_advance / 2
				   : t->anchor == E4_ANCHOR_END	 ? ext.x_advance
								 : 0);
		cairo_move_to(cr, x, t->y);
		cairo_show_text(cr, t->text);
	}
	if (!rects) {
		cairo_set_font_size(cr, 16);
		cairo_move_to(cr, 16, E4_MAP_HEIGHT / 2);
		cairo_show_text(cr, "too detailed for a picture of this size: see map.svg");
	}
}

static cairo_status_t collect(void *closure, const unsigned char *data, unsigned int len)
{
	g_byte_array_append(closure, data, len);
	return CAIRO_STATUS_SUCCESS;
}

static GByteArray *encode(const E4MapScene *s, bool rects)
{
	cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, E4_MAP_WIDTH, E4_MAP_HEIGHT);
	cairo_t *cr = cairo_create(surf);
	draw(cr, s, rects);
	cairo_destroy(cr);
	GByteArray *png = g_byte_array_sized_new(E4_MAP_PNG_SIZE);
	cairo_status_t st = cairo_surface_write_to_png_stream(surf, collect, png);
	cairo_surface_destroy(surf);
	if (st != CAIRO_STATUS_SUCCESS) {
		g_byte_array_unref(png);
		return NULL;
	}
	return png;
}

int e4_map_png(const E4MapScene *s, char **out)
{
	*out = NULL;
	for (int rects = 1; rects >= 0; rects--) {
		GByteArray *png = encode(s, rects);
		if (!png)
			return -ENOMEM;
		if (png->len + 12 <= E4_MAP_PNG_SIZE) {
			size_t len = png->len;
			g_byte_array_set_size(png, E4_MAP_PNG_SIZE);
			int rc = e4_map_png_pad(png->data, len, E4_MAP_PNG_SIZE);
			if (rc == 0) {
				*out = (char *)g_byte_array_free(png, FALSE);
				return 0;
			}
		}
		g_byte_array_unref(png);
	}
	return -ENOMEM;
}

void e4_map_png_shutdown(void)
{
	cairo_debug_reset_static_data();
	FcFini();
}
