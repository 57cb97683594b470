#include "page.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "escape.h"

/* Text for HTML: names made one-line safe first, then &<>"' escaped. */
static void html(GString *out, const char *s)
{
	g_autoptr(GString) t = g_string_new(NULL);
	e4_escape_text(t, s);
	for (const char *p = t->str; *p; p++)
		switch (*p) {
		case '&': g_string_append(out, "&amp;"); break;
		case '<': g_string_append(out, "&lt;"); break;
		case '>': g_string_append(out, "&gt;"); break;
		case '"': g_string_append(out, "&quot;"); break;
		case '\'': g_string_append(out, "&#39;"); break;
		default: g_string_append_c(out, *p);
		}
}

void e4_page_url(GString *out, const char *path, const char *const *reserved)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);
	for (int i = 0; parts[i]; i++) {
		g_autofree char *shown = e4_name_escape(parts[i], reserved);
		g_autofree char *enc = g_uri_escape_string(shown, NULL, FALSE);
		g_string_append_printf(out, "%s%s", i ? "/" : "", enc);
	}
}

static int by_score(const void *a, const void *b)
{
	const E4PageSubdir *x = a, *y = b;
	int sx = e4_summary_score(&x->sum), sy = e4_summary_score(&y->sum);
	return sx != sy ? sy - sx : strcmp(x->name, y->name);
}

static const char style[] =
	"body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:1.5em;color:#000;background:#fff}"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}"
	"table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:right}"
	"td:first-child,th:first-child{text-align:left}th{cursor:pointer;background:#f4f4f4}"
	".score{font-size:2.5em;font-weight:bold}.v56{color:#D55E00}.v31{color:#E69F00}.v0{color:#0072B2}"
	"pre{background:#f4f4f4;padding:.5em}svg{max-width:100%;height:auto}";

/* Sorts a table by the clicked column: numbers as numbers, else text. */
static const char script[] =
	"document.querySelectorAll('table.sortable th').forEach(function(th){"
	"th.addEventListener('click',function(){var i=th.cellIndex,tb=th.closest('table').tBodies[0];"
	"var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';"
	"var rows=Array.prototype.slice.call(tb.rows);rows.sort(function(a,b){"
	"var x=a.cells[i].dataset.v||a.cells[i].textContent,y=b.cells[i].dataset.v||b.cells[i].textContent;"
	"var nx=parseFloat(x),ny=parseFloat(y);var c=isNaN(nx)||isNaN(ny)?x.localeCompare(y):nx-ny;"
	"return asc?c:-c;});rows.forEach(function(r){tb.appendChild(r);});});});";

static const char *verdict_class(int score)
{
	return score > 55 ? "v56" : score > 30 ? "v31" : "v0";
}

static GString *render(const E4Page *p, size_t max_top, size_t max_subdirs, bool map)
{
	GString *o = g_string_new("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	html(o, p->title);
	g_string_append_printf(o, " - e4infofs</title>\n<style>%s</style></head><body>\n<h1>", style);
	html(o, p->title);
	int score = e4_summary_score(p->sum);
	g_string_append_printf(o,
			       "</h1>\n<p><span class=\"score %s\" id=\"score\">%d</span> "
			       "<span id=\"verdict\">%s</span> (e4defrag score, 0-100) &middot; "
			       "<a href=\"map.svg\">map.svg</a> &middot; <a href=\"map.png\">map.png</a> &middot; "
			       "<a href=\"stats\">stats</a> &middot; <a href=\"report\">report</a></p>\n",
			       verdict_class(score), score, e4_score_verdict(score));
	g_string_append(o, "<h2>Figures</h2>\n<table id=\"figures\"><tbody>\n");
	g_auto(GStrv) lines = g_strsplit(p->stats ? p->stats : "", "\n", -1);
	for (int i = 0; lines[i]; i++) {
		char *colon = strstr(lines[i], ": ");
		if (!colon)
			continue;
		*colon = '\0';
		g_string_append(o, "<tr><td>");
		html(o, lines[i]);
		g_string_append(o, "</td><td>");
		html(o, colon + 2);
		g_string_append(o, "</td></tr>\n");
	}
	g_string_append(o, "</tbody></table>\n<h2>Map</h2>\n");
	const char *svg = p->svg && map ? strstr(p->svg, "<svg") : NULL;
	if (!map)
		g_string_append(o, "<p>Too much to show here: see <a href=\"map.svg\">map.svg</a>.</p>\n");
	const char *end = svg ? strstr(svg, "</svg>") : NULL;
	if (end)
		g_string_append_len(o, svg, end + 6 - svg);
	g_string_append(o, "\n<h2>Most fragmented files</h2>\n");
	if (!p->top || p->top->n == 0)
		g_string_append(o, "<p>None.</p>\n");
	else {
		g_string_append(o, "<table class=\"sortable\" id=\"top\"><thead><tr><th>file</th><th>runs</th>"
				   "<th>ideal</th><th>size (KiB)</th><th>mean run (KiB)</th></tr></thead><tbody>\n");
		for (size_t i = 0; i < MIN(p->top->n, max_top); i++) {
			const E4TopEntry *e = &p->top->v[i];
			g_string_append(o, "<tr><td><a href=\"");
			e4_page_url(o, e->path, p->reserved);
			g_string_append(o, "/map.svg\">");
			html(o, e->path);
			double mean = e->fig.runs ? (double)e->fig.blocks * p->block_size / 1024.0 / e->fig.runs : 0;
			g_string_append_printf(o, "</a></td><td>%u</td><td>%u</td><td>%" G_GUINT64_FORMAT
					       "</td><td>%.1f</td></tr>\n",
					       e->fig.runs, e->fig.ideal, e->fig.size / 1024, mean);
		}
		g_string_append(o, "</tbody></table>\n");
		if (p->top->n > max_top)
			g_string_append_printf(o, "<p>%zu more not shown: see <a href=\"report\">report</a>.</p>\n",
					       p->top->n - max_top);
	}
	g_string_append(o, "<h2>Subdirectories</h2>\n");
	if (p->nsubdirs == 0)
		g_string_append(o, "<p>None.</p>\n");
	else {
		g_autofree E4PageSubdir *sorted = g_memdup2(p->subdirs, sizeof(*sorted) * p->nsubdirs);
		qsort(sorted, p->nsubdirs, sizeof(*sorted), by_score);
		g_string_append(o, "<table class=\"sortable\" id=\"subdirs\"><thead><tr><th>directory</th>"
				   "<th>score</th><th>files</th><th>runs</th><th>fragmented files</th>"
				   "<th>layout score</th></tr></thead><tbody>\n");
		for (size_t i = 0; i < MIN(p->nsubdirs, max_subdirs); i++) {
			const E4PageSubdir *d = &sorted[i];
			g_string_append(o, "<tr><td><a href=\"");
			e4_page_url(o, d->name, p->reserved);
			g_string_append(o, "/index.html\">");
			html(o, d->name);
			g_string_append_printf(o, "/</a></td><td>%d</td><td>%" G_GUINT64_FORMAT "</td><td>%"
					       G_GUINT64_FORMAT "</td><td>%" G_GUINT64_FORMAT
					       "</td><td>%.4f</td></tr>\n",
					       e4_summary_score(&d->sum), d->sum.files, d->sum.runs, d->sum.fragmented,
					       e4_summary_layout_score(&d->sum));
		}
		g_string_append(o, "</tbody></table>\n");
		if (p->nsubdirs > max_subdirs)
			g_string_append_printf(o, "<p>%zu more, with lower scores, not shown.</p>\n",
					       p->nsubdirs - max_subdirs);
	}
	g_string_append(o, "<h2>Defragmentation</h2>\n<pre id=\"defrag\">");
	html(o, p->defrag ? p->defrag : "");
	g_string_append(o, "</pre>\n<p>Start one with <code>echo 1 &gt; defrag</code> in this directory.</p>\n");
	g_string_append_printf(o, "<script>%s</script>\n</body></html>\n", script);
	return o;
}

char *e4_page_render(const E4Page *p)
{
	static const char pad[] = "<!-- e4infofs: padded to a fixed size -->\n";
	size_t max_top = p->top ? p->top->n : 0, max_subdirs = MIN(p->nsubdirs, E4_PAGE_MAX_SUBDIRS);
	bool map = true;
	for (;;) {
		GString *o = render(p, max_top, max_subdirs, map);
		if (o->len + sizeof(pad) <= E4_PAGE_SIZE) {
			g_string_append(o, pad);
			while (o->len < E4_PAGE_SIZE - 1)
				g_string_append_c(o, ' ');
			g_string_append_c(o, '\n');
			return g_string_free(o, FALSE);
		}
		g_string_free(o, TRUE);
		if (max_top == 0 && max_subdirs == 0)
			map = false;
		max_top /= 2;
		max_subdirs /= 2;
	}
}
