/* sbuf.h - a growable, always NUL-terminated string buffer for building
 * output (JSON, CSV, HTML, SVG) before it is written in one piece. */
#ifndef GP_UTIL_SBUF_H
#define GP_UTIL_SBUF_H

#include <stdbool.h>
#include <stddef.h>

struct gp_sbuf {
    char *data; /* owned, NUL-terminated when len > 0 or after any append */
    size_t len, cap;
    bool oom; /* sticky: an append failed; the content is incomplete */
};

void gp_sbuf_init(struct gp_sbuf *b);
void gp_sbuf_free(struct gp_sbuf *b);
void gp_sbuf_add(struct gp_sbuf *b, const char *s);
void gp_sbuf_addn(struct gp_sbuf *b, const char *s, size_t n);
void gp_sbuf_addc(struct gp_sbuf *b, char c);
void gp_sbuf_printf(struct gp_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s with &, <, >, " and ' escaped for HTML/XML text and attributes. */
void gp_sbuf_add_xml(struct gp_sbuf *b, const char *s);
/* The content ("" if empty); valid until the next append or free. */
const char *gp_sbuf_str(const struct gp_sbuf *b);

#endif
