/* sbuf.c - growable string buffer. */
#include "util/sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_sbuf_init(struct gp_sbuf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

void gp_sbuf_free(struct gp_sbuf *b)
{
    free(b->data);
    gp_sbuf_init(b);
}

static bool reserve(struct gp_sbuf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < b->len + extra + 1)
        ncap *= 2;
    char *p = realloc(b->data, ncap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = ncap;
    return true;
}

void gp_sbuf_addn(struct gp_sbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void gp_sbuf_add(struct gp_sbuf *b, const char *s)
{
    gp_sbuf_addn(b, s, strlen(s));
}

void gp_sbuf_addc(struct gp_sbuf *b, char c)
{
    gp_sbuf_addn(b, &c, 1);
}

void gp_sbuf_printf(struct gp_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void gp_sbuf_add_xml(struct gp_sbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            gp_sbuf_add(b, "&amp;");
            break;
        case '<':
            gp_sbuf_add(b, "&lt;");
            break;
        case '>':
            gp_sbuf_add(b, "&gt;");
            break;
        case '"':
            gp_sbuf_add(b, "&quot;");
            break;
        case '\'':
            gp_sbuf_add(b, "&#39;");
            break;
        default:
            gp_sbuf_addc(b, *s);
        }
    }
}

const char *gp_sbuf_str(const struct gp_sbuf *b)
{
    return b->data ? b->data : "";
}
