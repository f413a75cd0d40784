/* svg.h - a small chart drawer for the HTML report: line charts (axes with
 * 1-2-5 ticks, axis labels, a legend, vertical reference markers) and bar
 * charts over categorical bins (histograms). Each call appends one <svg>
 * element to a string buffer. Output depends only on the input (no ids,
 * clocks or randomness); every caller string is XML-escaped; non-finite
 * values are skipped, never printed. Callers keep ownership of everything
 * they pass in. */
#ifndef GP_IO_SVG_H
#define GP_IO_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/sbuf.h"

/* One line. Points are in data units; a non-finite x or y breaks the line. */
struct gp_svg_series {
    const char *name; /* legend text; NULL keeps it out of the legend */
    const double *x, *y;
    size_t n;
    const char *color; /* CSS colour, e.g. "#2f6690" */
    bool dashed;
    bool step; /* hold each y until the next x (counts that change in steps) */
    bool area; /* fill lightly between the line and the x axis */
};

/* A vertical reference line at x (data units), labelled at the top. */
struct gp_svg_marker {
    double x;
    const char *label;
    const char *color;
};

struct gp_svg_axis {
    const char *label; /* with the unit, e.g. "time (h)" */
    double min, max;   /* used where fixed_min / fixed_max; else from the data,
                          and the range then always includes 0 */
    bool fixed_min, fixed_max;
    bool integer; /* counts: ticks on whole numbers only */
};

struct gp_svg_chart {
    const char *title;
    int width, height; /* 0: 880 x 300 */
    struct gp_svg_axis x, y;
    const struct gp_svg_series *series;
    size_t nseries;
    const struct gp_svg_marker *markers;
    size_t nmarkers;
    const char *empty_text; /* shown when there is nothing to draw; NULL: "no data" */
};

/* Bars over categories: bar i spans [i, i + 1] on the x axis (so markers
 * use those units). */
struct gp_svg_bars {
    const double *values;
    size_t n;
    const char *const *edge_labels; /* n + 1 labels for the bar edges, or NULL */
    const char *const *bar_titles;  /* a tooltip per bar, or NULL */
    const char *color;
};

/* An axis range [lo, hi] and its ticks: first + i * step for i in [0, n). */
struct gp_svg_ticks {
    double lo, hi;
    double first, step;
    int n;
};

/* Ticks for [lo, hi] with a 1, 2 or 5 x 10^k step and about `target` ticks.
 * extend_lo / extend_hi: move that end of the axis out to a whole step (the
 * axis grows to its ticks); otherwise that end stays where it is. A
 * degenerate or non-finite range is widened or replaced first. */
void gp_svg_nice_ticks(double lo, double hi, int target, bool extend_lo, bool extend_hi,
                       struct gp_svg_ticks *t);
/* A tick value as text: "0", "2.5", "40", "15k", "1.2M". */
void gp_svg_fmt_tick(char *buf, size_t n, double v, const struct gp_svg_ticks *t);

void gp_svg_line_chart(struct gp_sbuf *out, const struct gp_svg_chart *c);
/* c->x is ignored except for its label; c->series is ignored. */
void gp_svg_bar_chart(struct gp_sbuf *out, const struct gp_svg_chart *c,
                      const struct gp_svg_bars *b);

#endif
