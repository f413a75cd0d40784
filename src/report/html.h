/* html.h - the look of gpuplane's HTML pages (report_html.c): the style
 * sheet and the pieces that other pages (the sharing study's) share with
 * the simulation report, so that they read alike. */
#ifndef GP_REPORT_HTML_H
#define GP_REPORT_HTML_H

#include <stddef.h>

#include "util/sbuf.h"

/* The report's palette. */
#define GP_HTML_BLUE  "#2f6690"
#define GP_HTML_OCHRE "#c17f2a"
#define GP_HTML_GREEN "#4f8a5b"
#define GP_HTML_RED   "#b5452b"
#define GP_HTML_GRAY  "#8a96a3"
#define GP_HTML_INK   "#3e4c59"

/* The style sheet (the body of a <style> element). */
const char *gp_report_html_css(void);
/* A card: a key, a value and an optional note, plain text (escaped). */
void gp_report_html_card(struct gp_sbuf *o, const char *key, const char *value, const char *note);
/* Dollars with thousands separators: "$12,345.67". */
void gp_report_html_usd(char *buf, size_t n, double v);

#endif
