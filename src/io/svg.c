/* svg.c - the report's chart drawer: line and bar charts as inline SVG.
 *
 * Layout: a title row (title left, legend right), a plot area with
 * horizontal grid lines at the y ticks, tick marks and labels on both
 * axes, the axis labels outside, and the data clamped to the plot area.
 * Long series are thinned per pixel column (first, lowest, highest and last
 * point of each column), which keeps their shape and the file small.
 * Coordinates are printed with one decimal, so output is stable. */
#include "io/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEF_W    880
#define DEF_H    300
#define M_LEFT   70
#define M_RIGHT  28
#define M_TOP    48
#define M_BOTTOM 52

#define C_TITLE   "#1f2933"
#define C_TEXT    "#52606d"
#define C_AXIS    "#9aa5b1"
#define C_GRID    "#e4e7eb"
#define C_DEFAULT "#2f6690"
#define FONT      "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

#define CHAR_W 6.6 /* rough width of a 12 px character, for the legend */

struct frame {
    double w, h;
    double x0, x1, y0, y1;     /* plot area in pixels; y0 is the top */
    double xlo, xhi, ylo, yhi; /* data range shown */
};

/* ---- ticks ------------------------------------------------------------- */

static double nice_step(double raw)
{
    double e = floor(log10(raw));
    double p = pow(10.0, e);
    double f = raw / p;
    double nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    return nf * p;
}

void gp_svg_nice_ticks(double lo, double hi, int target, bool extend_lo, bool extend_hi,
                       struct gp_svg_ticks *t)
{
    if (!isfinite(lo))
        lo = 0;
    if (!isfinite(hi))
        hi = lo + 1;
    if (hi < lo) {
        double tmp = lo;
        lo = hi;
        hi = tmp;
    }
    if (hi - lo <= 1e-9 * fmax(1.0, fabs(hi))) {
        if (lo == 0) {
            hi = 1;
        } else {
            double d = fabs(lo) * 0.1;
            lo -= d;
            hi += d;
        }
    }
    if (target < 2)
        target = 2;
    double step = nice_step((hi - lo) / (target - 1));
    if (!isfinite(step) || step <= 0)
        step = 1;
    double a = extend_lo ? floor(lo / step + 1e-9) * step : lo;
    double b = extend_hi ? ceil(hi / step - 1e-9) * step : hi;
    double first = ceil(a / step - 1e-9) * step;
    int n = (int)floor((b - first) / step + 1e-9) + 1;
    if (n < 1)
        n = 1;
    if (n > 60) /* cannot happen with a sane target; a guard for the output size */
        n = 60;
    t->lo = a;
    t->hi = b;
    t->first = first;
    t->step = step;
    t->n = n;
}

void gp_svg_fmt_tick(char *buf, size_t n, double v, const struct gp_svg_ticks *t)
{
    double av = fmax(fabs(t->lo), fabs(t->hi));
    double div = 1;
    const char *suffix = "";
    if (av >= 1e7 && t->step >= 1e5) {
        div = 1e6;
        suffix = "M";
    } else if (av >= 1e4 && t->step >= 100) {
        div = 1e3;
        suffix = "k";
    }
    double s = t->step / div;
    int dec = s >= 1 ? 0 : (int)ceil(-log10(s) - 1e-9);
    if (dec < 0)
        dec = 0;
    if (dec > 9)
        dec = 9;
    double x = v / div;
    if (fabs(x) < s * 1e-6) { /* zero, without "-0" or "0k" */
        snprintf(buf, n, "0");
        return;
    }
    snprintf(buf, n, "%.*f%s", dec, x, suffix);
}

static double tick_at(const struct gp_svg_ticks *t, int i)
{
    return t->first + i * t->step;
}

/* ---- primitives ----------------------------------------------------------- */

static double fx(const struct frame *f, double x)
{
    double px = f->x0 + (x - f->xlo) / (f->xhi - f->xlo) * (f->x1 - f->x0);
    return px < f->x0 ? f->x0 : px > f->x1 ? f->x1 : px;
}

static double fy(const struct frame *f, double y)
{
    double py = f->y1 - (y - f->ylo) / (f->yhi - f->ylo) * (f->y1 - f->y0);
    return py < f->y0 ? f->y0 : py > f->y1 ? f->y1 : py;
}

static const char *or_default(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

static void text(struct gp_sbuf *out, double x, double y, const char *anchor, int size,
                 const char *fill, bool bold, const char *s)
{
    gp_sbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" fill=\"", x, y, size);
    gp_sbuf_add_xml(out, fill);
    gp_sbuf_add(out, "\"");
    if (strcmp(anchor, "start") != 0)
        gp_sbuf_printf(out, " text-anchor=\"%s\"", anchor);
    if (bold)
        gp_sbuf_add(out, " font-weight=\"600\"");
    gp_sbuf_add(out, ">");
    gp_sbuf_add_xml(out, s);
    gp_sbuf_add(out, "</text>\n");
}

static void frame_init(struct frame *f, const struct gp_svg_chart *c)
{
    f->w = c->width > 0 ? c->width : DEF_W;
    f->h = c->height > 0 ? c->height : DEF_H;
    if (f->w < 200)
        f->w = 200;
    if (f->h < 150)
        f->h = 150;
    f->x0 = M_LEFT;
    f->x1 = f->w - M_RIGHT;
    f->y0 = M_TOP;
    f->y1 = f->h - M_BOTTOM;
    f->xlo = 0;
    f->xhi = 1;
    f->ylo = 0;
    f->yhi = 1;
}

static void svg_open(struct gp_sbuf *out, const struct frame *f, const char *title)
{
    gp_sbuf_printf(out,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                   "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
                   f->w, f->h, f->w, f->h);
    gp_sbuf_add_xml(out, or_default(title, "chart"));
    gp_sbuf_add(out, "\" font-family=\"" FONT "\">\n<title>");
    gp_sbuf_add_xml(out, or_default(title, "chart"));
    gp_sbuf_add(out, "</title>\n");
    if (title && *title)
        text(out, 14, 26, "start", 15, C_TITLE, true, title);
}

static void svg_close(struct gp_sbuf *out)
{
    gp_sbuf_add(out, "</svg>\n");
}

static void empty_plot(struct gp_sbuf *out, const struct frame *f, const char *msg)
{
    gp_sbuf_printf(out,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafbfc\" "
                   "stroke=\"" C_GRID "\"/>\n",
                   f->x0, f->y0, f->x1 - f->x0, f->y1 - f->y0);
    text(out, (f->x0 + f->x1) / 2, (f->y0 + f->y1) / 2 + 4, "middle", 13, C_TEXT, false,
         or_default(msg, "no data"));
}

/* Grid lines and labels of the y axis, the x axis line, the axis labels. */
static void y_axis(struct gp_sbuf *out, const struct frame *f, const struct gp_svg_ticks *yt,
                   const char *label)
{
    char buf[64];
    gp_sbuf_add(out, "<g stroke=\"" C_GRID "\" stroke-width=\"1\">\n");
    for (int i = 0; i < yt->n; i++) {
        double py = fy(f, tick_at(yt, i));
        gp_sbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->x0, py,
                       f->x1, py);
    }
    gp_sbuf_add(out, "</g>\n");
    for (int i = 0; i < yt->n; i++) {
        double py = fy(f, tick_at(yt, i));
        gp_svg_fmt_tick(buf, sizeof buf, tick_at(yt, i), yt);
        text(out, f->x0 - 8, py + 4, "end", 12, C_TEXT, false, buf);
    }
    if (label && *label) {
        double cy = (f->y0 + f->y1) / 2;
        gp_sbuf_printf(out,
                       "<text x=\"18\" y=\"%.1f\" font-size=\"12\" fill=\"" C_TEXT
                       "\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\">",
                       cy, cy);
        gp_sbuf_add_xml(out, label);
        gp_sbuf_add(out, "</text>\n");
    }
}

static void x_axis_line(struct gp_sbuf *out, const struct frame *f, const char *label)
{
    gp_sbuf_printf(out,
                   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_AXIS
                   "\" stroke-width=\"1\"/>\n",
                   f->x0, f->y1, f->x1, f->y1);
    if (label && *label)
        text(out, (f->x0 + f->x1) / 2, f->h - 12, "middle", 12, C_TEXT, false, label);
}

static void x_tick(struct gp_sbuf *out, const struct frame *f, double px, const char *label)
{
    gp_sbuf_printf(out,
                   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_AXIS
                   "\" stroke-width=\"1\"/>\n",
                   px, f->y1, px, f->y1 + 5);
    text(out, px, f->y1 + 19, "middle", 12, C_TEXT, false, label);
}

static void markers(struct gp_sbuf *out, const struct frame *f, const struct gp_svg_marker *m,
                    size_t n)
{
    int row = 0;
    for (size_t i = 0; m && i < n; i++) {
        if (!isfinite(m[i].x) || m[i].x < f->xlo || m[i].x > f->xhi)
            continue;
        const char *color = or_default(m[i].color, C_TITLE);
        double px = fx(f, m[i].x);
        gp_sbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"", px,
                       f->y0, px, f->y1);
        gp_sbuf_add_xml(out, color);
        gp_sbuf_add(out, "\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n");
        if (m[i].label && *m[i].label) {
            double width = CHAR_W * (double)strlen(m[i].label);
            bool right = px + 6 + width > f->x1;
            double py = f->y0 + 12 + 14 * row++;
            gp_sbuf_printf(out,
                           "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"%s\" "
                           "stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\" fill=\"",
                           right ? px - 5 : px + 5, py, right ? "end" : "start");
            gp_sbuf_add_xml(out, color);
            gp_sbuf_add(out, "\">");
            gp_sbuf_add_xml(out, m[i].label);
            gp_sbuf_add(out, "</text>\n");
        }
    }
}

/* ---- line chart ---------------------------------------------------------- */

struct pt {
    double x, y; /* pixels */
    bool brk;    /* starts a new run */
};

struct thin {
    struct pt *pts;
    size_t n;
    long col;      /* pixel column of the open bucket, -1 when none */
    size_t idx[4]; /* first, lowest, highest, last: indices into the series */
    double px[4], py[4];
    bool brk;
};

static void thin_flush(struct thin *t)
{
    if (t->col < 0)
        return;
    size_t order[4] = {0, 1, 2, 3};
    for (int i = 1; i < 4; i++) { /* by series index */
        size_t k = order[i];
        int j = i;
        while (j > 0 && t->idx[order[j - 1]] > t->idx[k]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    size_t last = (size_t)-1;
    for (int i = 0; i < 4; i++) {
        size_t k = order[i];
        if (t->idx[k] == last)
            continue;
        last = t->idx[k];
        t->pts[t->n++] = (struct pt){t->px[k], t->py[k], t->brk};
        t->brk = false;
    }
    t->col = -1;
}

static void thin_add(struct thin *t, size_t i, double px, double py, long col)
{
    if (col != t->col) {
        thin_flush(t);
        t->col = col;
        for (int k = 0; k < 4; k++) {
            t->idx[k] = i;
            t->px[k] = px;
            t->py[k] = py;
        }
        return;
    }
    /* in pixels, a lower value is a larger py */
    if (py > t->py[1]) {
        t->idx[1] = i;
        t->px[1] = px;
        t->py[1] = py;
    }
    if (py < t->py[2]) {
        t->idx[2] = i;
        t->px[2] = px;
        t->py[2] = py;
    }
    t->idx[3] = i;
    t->px[3] = px;
    t->py[3] = py;
}

/* The series as pixel points, thinned when it has many more points than
 * the plot has pixel columns. Returns NULL (and *n = 0) when out of memory. */
static struct pt *series_points(const struct frame *f, const struct gp_svg_series *s, size_t *n)
{
    *n = 0;
    if (!s->x || !s->y || s->n == 0)
        return NULL;
    struct thin t = {.pts = malloc(s->n * sizeof *t.pts), .col = -1, .brk = true};
    if (!t.pts)
        return NULL;
    bool thin = (double)s->n > 4 * (f->x1 - f->x0);
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->x[i]) || !isfinite(s->y[i])) {
            thin_flush(&t);
            t.brk = true;
            continue;
        }
        double px = fx(f, s->x[i]), py = fy(f, s->y[i]);
        if (thin) {
            thin_add(&t, i, px, py, (long)floor(px - f->x0));
        } else {
            t.pts[t.n++] = (struct pt){px, py, t.brk};
            t.brk = false;
        }
    }
    thin_flush(&t);
    *n = t.n;
    return t.pts;
}

/* Draws a run of points; `cont` continues the current subpath (an area's
 * outline) instead of starting a new one with a move. */
static void run_path(struct gp_sbuf *out, const struct pt *p, size_t n, bool step, bool cont)
{
    gp_sbuf_printf(out, "%c%.1f %.1f", cont ? 'L' : 'M', p[0].x, p[0].y);
    for (size_t i = 1; i < n; i++) {
        if (step)
            gp_sbuf_printf(out, "H%.1f V%.1f", p[i].x, p[i].y);
        else
            gp_sbuf_printf(out, "L%.1f %.1f", p[i].x, p[i].y);
    }
}

static void draw_series(struct gp_sbuf *out, const struct frame *f, const struct gp_svg_series *s)
{
    size_t n;
    struct pt *p = series_points(f, s, &n);
    if (!p) {
        if (s->n > 0 && s->x && s->y)
            out->oom = true;
        return;
    }
    const char *color = or_default(s->color, C_DEFAULT);
    if (s->area) {
        gp_sbuf_add(out, "<path fill=\"");
        gp_sbuf_add_xml(out, color);
        gp_sbuf_add(out, "\" fill-opacity=\"0.12\" stroke=\"none\" d=\"");
        for (size_t i = 0; i < n;) {
            size_t j = i + 1;
            while (j < n && !p[j].brk)
                j++;
            gp_sbuf_printf(out, "M%.1f %.1f", p[i].x, f->y1);
            run_path(out, p + i, j - i, s->step, true);
            gp_sbuf_printf(out, "L%.1f %.1fZ", p[j - 1].x, f->y1);
            i = j;
        }
        gp_sbuf_add(out, "\"/>\n");
    }
    gp_sbuf_add(out, "<path fill=\"none\" stroke=\"");
    gp_sbuf_add_xml(out, color);
    gp_sbuf_add(out, "\" stroke-width=\"1.8\" stroke-linejoin=\"round\" stroke-linecap=\"round\"");
    if (s->dashed)
        gp_sbuf_add(out, " stroke-dasharray=\"6 4\"");
    gp_sbuf_add(out, " d=\"");
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && !p[j].brk)
            j++;
        run_path(out, p + i, j - i, s->step, false);
        i = j;
    }
    gp_sbuf_add(out, "\"/>\n");
    /* a run of one point draws nothing as a path: show a dot */
    for (size_t i = 0; i < n; i++) {
        bool alone = p[i].brk && (i + 1 == n || p[i + 1].brk);
        if (alone) {
            gp_sbuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"", p[i].x,
                           p[i].y);
            gp_sbuf_add_xml(out, color);
            gp_sbuf_add(out, "\"/>\n");
        }
    }
    free(p);
}

static void legend(struct gp_sbuf *out, const struct frame *f, const struct gp_svg_chart *c)
{
    size_t named = 0;
    double width = 0;
    for (size_t i = 0; i < c->nseries; i++) {
        if (c->series[i].name && *c->series[i].name) {
            named++;
            width += 22 + CHAR_W * (double)strlen(c->series[i].name) + 16;
        }
    }
    if (named < 2 && c->nseries < 2)
        return;
    double x = f->x1 - width + 16;
    double y = 26;
    for (size_t i = 0; i < c->nseries; i++) {
        const struct gp_svg_series *s = &c->series[i];
        if (!s->name || !*s->name)
            continue;
        gp_sbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"", x,
                       y - 4, x + 18, y - 4);
        gp_sbuf_add_xml(out, or_default(s->color, C_DEFAULT));
        gp_sbuf_add(out, "\" stroke-width=\"2.5\"");
        if (s->dashed)
            gp_sbuf_add(out, " stroke-dasharray=\"5 3\"");
        gp_sbuf_add(out, "/>\n");
        text(out, x + 22, y, "start", 12, C_TEXT, false, s->name);
        x += 22 + CHAR_W * (double)strlen(s->name) + 16;
    }
}

/* The range of an axis: fixed ends as given, free ends from the data
 * (always including 0). */
static void axis_range(const struct gp_svg_axis *a, double dmin, double dmax, int target,
                       struct gp_svg_ticks *t)
{
    double lo = a->fixed_min && isfinite(a->min) ? a->min : fmin(dmin, 0);
    double hi = a->fixed_max && isfinite(a->max) ? a->max : fmax(dmax, 0);
    gp_svg_nice_ticks(lo, hi, target, !a->fixed_min, !a->fixed_max, t);
    if (a->integer && t->step < 1) {
        if (!a->fixed_min)
            t->lo = floor(t->lo);
        if (!a->fixed_max)
            t->hi = fmax(ceil(t->hi), t->lo + 1);
        t->step = 1;
        t->first = ceil(t->lo - 1e-9);
        t->n = (int)floor(t->hi - t->first + 1e-9) + 1;
    }
}

void gp_svg_line_chart(struct gp_sbuf *out, const struct gp_svg_chart *c)
{
    struct frame f;
    frame_init(&f, c);
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (size_t k = 0; c->series && k < c->nseries; k++) {
        const struct gp_svg_series *s = &c->series[k];
        for (size_t i = 0; s->x && s->y && i < s->n; i++) {
            if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
                continue;
            xmin = fmin(xmin, s->x[i]);
            xmax = fmax(xmax, s->x[i]);
            ymin = fmin(ymin, s->y[i]);
            ymax = fmax(ymax, s->y[i]);
        }
    }
    svg_open(out, &f, c->title);
    if (xmin > xmax) {
        empty_plot(out, &f, c->empty_text);
        svg_close(out);
        return;
    }
    struct gp_svg_ticks xt, yt;
    axis_range(&c->x, xmin, xmax, 9, &xt);
    axis_range(&c->y, ymin, ymax, 6, &yt);
    f.xlo = xt.lo;
    f.xhi = xt.hi;
    f.ylo = yt.lo;
    f.yhi = yt.hi;

    y_axis(out, &f, &yt, c->y.label);
    x_axis_line(out, &f, c->x.label);
    char buf[64];
    for (int i = 0; i < xt.n; i++) {
        gp_svg_fmt_tick(buf, sizeof buf, tick_at(&xt, i), &xt);
        x_tick(out, &f, fx(&f, tick_at(&xt, i)), buf);
    }
    for (size_t k = 0; k < c->nseries; k++)
        draw_series(out, &f, &c->series[k]);
    markers(out, &f, c->markers, c->nmarkers);
    legend(out, &f, c);
    svg_close(out);
}

/* ---- bar chart ----------------------------------------------------------- */

void gp_svg_bar_chart(struct gp_sbuf *out, const struct gp_svg_chart *c,
                      const struct gp_svg_bars *b)
{
    struct frame f;
    frame_init(&f, c);
    svg_open(out, &f, c->title);
    double vmax = 0;
    bool any = false;
    for (size_t i = 0; b && b->values && i < b->n; i++) {
        if (isfinite(b->values[i])) {
            any = true;
            vmax = fmax(vmax, b->values[i]);
        }
    }
    if (!any) {
        empty_plot(out, &f, c->empty_text);
        svg_close(out);
        return;
    }
    struct gp_svg_ticks yt;
    axis_range(&c->y, 0, vmax, 6, &yt);
    f.xlo = 0;
    f.xhi = (double)b->n;
    f.ylo = yt.lo;
    f.yhi = yt.hi;

    y_axis(out, &f, &yt, c->y.label);
    double bw = (f.x1 - f.x0) / (double)b->n;
    double gap = bw * 0.08 < 2 ? bw * 0.08 : 2;
    gp_sbuf_add(out, "<g fill=\"");
    gp_sbuf_add_xml(out, or_default(b->color, C_DEFAULT));
    gp_sbuf_add(out, "\">\n");
    for (size_t i = 0; i < b->n; i++) {
        double v = b->values[i];
        if (!isfinite(v) || v <= 0)
            continue;
        double xa = fx(&f, (double)i) + gap, xb = fx(&f, (double)i + 1) - gap;
        double ya = fy(&f, v);
        gp_sbuf_printf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">", xa, ya,
                       xb - xa, f.y1 - ya);
        if (b->bar_titles && b->bar_titles[i]) {
            gp_sbuf_add(out, "<title>");
            gp_sbuf_add_xml(out, b->bar_titles[i]);
            gp_sbuf_add(out, "</title>");
        }
        gp_sbuf_add(out, "</rect>\n");
    }
    gp_sbuf_add(out, "</g>\n");
    x_axis_line(out, &f, c->x.label);
    if (b->edge_labels) {
        size_t every = (b->n + 1 + 13) / 14; /* at most ~14 labels */
        if (every < 1)
            every = 1;
        /* every `every`-th edge and always the last one, dropping a
         * regular label that would crowd it */
        for (size_t i = 0; i <= b->n; i += every)
            if (i == b->n || b->n - i >= every)
                x_tick(out, &f, fx(&f, (double)i), or_default(b->edge_labels[i], ""));
        if (b->n % every != 0)
            x_tick(out, &f, fx(&f, (double)b->n), or_default(b->edge_labels[b->n], ""));
    }
    markers(out, &f, c->markers, c->nmarkers);
    svg_close(out);
}
