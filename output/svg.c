/* output: an interactive flame graph in one svg file (click to zoom, search).
 * Stacks merge into a tree root first; siblings are ordered by name, as in
 * FlameGraph, so the same input always draws the same picture. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "mem/mem.h"
#include "output/out_internal.h"

#define SVG_WIDTH 1200
#define SVG_XPAD 10
#define SVG_FRAME_H 16
#define SVG_FONT 12
#define SVG_MIN_PX 0.1
#define SVG_TOP (SVG_FONT * 3)
#define SVG_BOTTOM (SVG_FONT * 2 + 10)


struct svg_node {
	char *name;
	enum out_kind kind;
	uint64_t value;
	struct svg_node **kid;
	size_t nkid, cap;
};

struct svg {
	FILE *f;
	const struct out_options *o;
	struct svg_node root;
	uint64_t total;
	size_t depth; /* deepest frame, root = 0 */
	int height;
};

static struct svg_node *svg_child(struct svg_node *n, const char *name, enum out_kind kind)
{
	for (size_t i = 0; i < n->nkid; i++)
		if (n->kid[i]->kind == kind && strcmp(n->kid[i]->name, name) == 0)
			return n->kid[i];
	if (MEM_GROW(n->kid, n->cap, n->nkid + 1, 4))
		return NULL;
	struct svg_node *c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	c->kind = kind;
	n->kid[n->nkid++] = c;
	return c;
}

static void svg_free(struct svg_node *n)
{
	for (size_t i = 0; i < n->nkid; i++) {
		svg_free(n->kid[i]);
		free(n->kid[i]);
	}
	free(n->kid);
	free(n->name);
}

static int svg_add(struct svg *g, const struct agg_named_stack *s)
{
	char **names;
	enum out_kind *kernel;
	int nn = out_folded_names(g->o, s, &names, &kernel);
	if (nn < 0)
		return nn;
	uint64_t v = out_value(g->o, s);
	struct svg_node *n = &g->root;
	n->value += v;
	int ret = 0;
	for (int j = 0; j < nn; j++) {
		if (!(n = svg_child(n, names[j], kernel[j]))) {
			ret = -ENOMEM;
			break;
		}
		n->value += v;
		if ((size_t)j + 1 > g->depth)
			g->depth = (size_t)j + 1;
	}
	out_names_free(names, (size_t)nn, kernel);
	return ret;
}

static int node_cmp(const void *a, const void *b)
{
	const struct svg_node *x = *(struct svg_node *const *)a, *y = *(struct svg_node *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

static void xml_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default: fputc(c < 0x20 ? '?' : c, f); /* control bytes are not XML */
		}
	}
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static void svg_color(const struct svg_node *n, unsigned rgb[3])
{
	uint64_t h = name_hash(n->name);
	unsigned a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;
	if (n->kind == OUT_K_KERNEL) { /* cool blue-green: kernel */
		rgb[0] = 50 + a % 60, rgb[1] = 150 + b % 70, rgb[2] = 190 + c % 60;
	} else if (n->kind == OUT_K_OTHER) { /* grey: comm, event, delimiter */
		rgb[0] = rgb[1] = rgb[2] = 170 + a % 40;
	} else { /* warm: user code */
		rgb[0] = 205 + a % 50, rgb[1] = b % 230, rgb[2] = c % 55;
	}
}

/* The label that fits W pixels; the script recomputes it on zoom alike. */
static void svg_label(FILE *f, const char *name, double w)
{
	double m = (w - 6) / (SVG_FONT * 0.59);
	size_t len = strlen(name);
	if (m < 3)
		return;
	if ((double)len <= m) {
		xml_str(f, name);
		return;
	}
	size_t keep = (size_t)m - 2;
	char *cut = strndup(name, keep);
	if (cut)
		xml_str(f, cut);
	free(cut);
	fputs("..", f);
}

static const char *unit_of(const struct out_options *o)
{
	if (o->mode == OUT_MODE_COUNT && out_any_weighted(o))
		return "period";
	return o->mode == OUT_MODE_OFFCPU ? "us" : o->mode == OUT_MODE_PROFILE ? "samples" : "events";
}

static void svg_frame(struct svg *g, struct svg_node *n, uint64_t off, size_t depth)
{
	const double span = SVG_WIDTH - 2 * SVG_XPAD;
	double x = SVG_XPAD + (double)off * span / (double)g->total;
	double w = (double)n->value * span / (double)g->total;
	if (w < SVG_MIN_PX)
		return; /* and so are its callees */
	int y = g->height - SVG_BOTTOM - (int)(depth + 1) * SVG_FRAME_H;
	unsigned rgb[3];
	svg_color(n, rgb);
	fprintf(g->f, "<g class=\"f%s\" data-n=\"", n->kind == OUT_K_KERNEL ? " k" : "");
	xml_str(g->f, n->name);
	fprintf(g->f, "\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%zu\"><title>",
		off, n->value, depth);
	xml_str(g->f, n->name);
	fprintf(g->f, " (%" PRIu64 " %s, %.2f%%)</title>", n->value, unit_of(g->o),
		(double)n->value * 100.0 / (double)g->total);
	fprintf(g->f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", x, y, w, SVG_FRAME_H - 1,
		rgb[0], rgb[1], rgb[2]);
	fprintf(g->f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + SVG_FRAME_H - 4);
	svg_label(g->f, n->name, w);
	fputs("</text></g>\n", g->f);
	if (n->nkid > 1)
		qsort(n->kid, n->nkid, sizeof(*n->kid), node_cmp);
	for (size_t i = 0; i < n->nkid && !ferror(g->f); i++) {
		svg_frame(g, n->kid[i], off, depth + 1);
		off += n->kid[i]->value;
	}
}

static void svg_head(struct svg *g)
{
	FILE *f = g->f;
	const char *title = g->o->title ? g->o->title : "Flame Graph";
	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		SVG_WIDTH, g->height, SVG_WIDTH, g->height);
	fputs("<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/>"
	      "<stop stop-color=\"#eeeeb0\" offset=\"95%\"/></linearGradient></defs>\n"
	      "<style type=\"text/css\">text { font-family: Verdana, sans-serif; "
	      "font-size: 12px; fill: #000; } .hide { display: none; } "
	      ".parent { opacity: 0.5; } g.f { cursor: pointer; } "
	      "g.f:hover rect { stroke: #000; stroke-width: 0.5; } "
	      "#title { font-size: 17px; } #unzoom, #search { cursor: pointer; }</style>\n", f);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\nvar W = %d, XP = %d, FS = %d, "
		"TOTAL = %" PRIu64 ";\n%s]]></script>\n", SVG_WIDTH, SVG_XPAD, SVG_FONT, g->total,
		out_svg_script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#bg)\"/>\n",
		SVG_WIDTH, g->height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", SVG_WIDTH / 2,
		SVG_FONT * 2);
	xml_str(f, title);
	fprintf(f, "</text>\n<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
		SVG_XPAD, SVG_FONT * 2, SVG_WIDTH - SVG_XPAD - 100, SVG_FONT * 2,
		SVG_XPAD, g->height - SVG_FONT / 2, SVG_WIDTH - SVG_XPAD - 200,
		g->height - SVG_FONT / 2);
}

int out_write_svg(FILE *f, const struct out_options *o, const struct agg_named_stack *s,
		  size_t n)
{
	struct svg g = { .f = f, .o = o };
	int ret = 0;
	g.root.name = strdup("all");
	g.root.kind = OUT_K_OTHER;
	if (!g.root.name)
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++)
		ret = svg_add(&g, &s[i]);
	if (!ret) {
		g.total = g.root.value;
		g.height = (int)(g.depth + 1) * SVG_FRAME_H + SVG_TOP + SVG_BOTTOM;
		svg_head(&g);
		if (g.total)
			svg_frame(&g, &g.root, 0, 0);
		fputs("</svg>\n", f);
	}
	svg_free(&g.root);
	return ret ? ret : out_finish(f);
}
