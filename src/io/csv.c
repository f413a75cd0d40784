/* csv.c - the CSV tokenizer shared by the trace readers (see csv.h), its
 * typed field readers with line-numbered diagnostics, and a small string
 * map for grouping rows. */
#include "io/csv.h"

#include "util/arena.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_csv_init(struct gp_csv *c, const char *text, size_t len, const char *name)
{
    memset(c, 0, sizeof *c);
    c->name = name ? name : "<csv>";
    c->p = text ? text : "";
    c->end = c->p + (text ? len : 0);
    c->line = 1;
    c->next_line = 1;
    /* a UTF-8 byte order mark */
    if (c->end - c->p >= 3 && memcmp(c->p, "\xEF\xBB\xBF", 3) == 0)
        c->p += 3;
}

void gp_csv_free(struct gp_csv *c)
{
    free(c->fields);
    free(c->buf);
    free(c->offs);
    c->fields = NULL;
    c->buf = NULL;
    c->offs = NULL;
    c->nfields = c->fields_cap = c->buf_len = c->buf_cap = c->offs_cap = 0;
}

/* Makes room for n more bytes in the field buffer. */
static int buf_reserve(struct gp_csv *c, size_t n)
{
    if (c->buf_cap - c->buf_len >= n)
        return 0;
    size_t cap = c->buf_cap ? c->buf_cap : 256;
    while (cap - c->buf_len < n) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    char *b = realloc(c->buf, cap);
    if (!b)
        return -1;
    c->buf = b;
    c->buf_cap = cap;
    return 0;
}

static int buf_add(struct gp_csv *c, const char *s, size_t n)
{
    if (buf_reserve(c, n) != 0)
        return -1;
    if (n)
        memcpy(c->buf + c->buf_len, s, n);
    c->buf_len += n;
    return 0;
}

static int offs_push(struct gp_csv *c, size_t nf, size_t off)
{
    if (nf >= c->offs_cap) {
        size_t cap = c->offs_cap ? c->offs_cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof *c->offs)
            return -1;
        size_t *o = realloc(c->offs, cap * sizeof *o);
        if (!o)
            return -1;
        c->offs = o;
        c->offs_cap = cap;
    }
    c->offs[nf] = off;
    return 0;
}

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* Consumes one line end (LF, CRLF or CR) at the cursor, if there is one. */
static void eat_eol(struct gp_csv *c)
{
    if (c->p < c->end && *c->p == '\r') {
        c->p++;
        if (c->p < c->end && *c->p == '\n')
            c->p++;
        c->next_line++;
    } else if (c->p < c->end && *c->p == '\n') {
        c->p++;
        c->next_line++;
    }
}

static enum gp_err tok_fail(const struct gp_csv *c, struct gp_diag *diag, const char *what)
{
    return gp_diag_set(diag, GP_EPARSE, "%s:%lu: %s", c->name, c->next_line, what);
}

/* Reads a quoted field; the cursor is on the opening quote. */
static enum gp_err read_quoted(struct gp_csv *c, struct gp_diag *diag)
{
    unsigned long open_line = c->next_line;
    c->p++;
    for (;;) {
        /* copy the run up to the next special byte in one piece */
        const char *s = c->p;
        while (c->p < c->end && *c->p != '"' && *c->p != '\n' && *c->p != '\r' && *c->p != '\0')
            c->p++;
        if (buf_add(c, s, (size_t)(c->p - s)) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
        if (c->p >= c->end)
            return gp_diag_set(diag, GP_EPARSE,
                               "%s:%lu: unterminated quoted field (no closing quote before the "
                               "end of the input)",
                               c->name, open_line);
        char ch = *c->p;
        if (ch == '\0')
            return tok_fail(c, diag, "NUL byte in the input, expected text");
        if (ch == '"') {
            if (c->p + 1 < c->end && c->p[1] == '"') {
                if (buf_add(c, "\"", 1) != 0)
                    return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
                c->p += 2;
                continue;
            }
            c->p++;
            break;
        }
        /* a line end inside the quotes is part of the value */
        const char *eol = c->p;
        eat_eol(c);
        if (buf_add(c, eol, (size_t)(c->p - eol)) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
    }
    while (c->p < c->end && is_blank(*c->p))
        c->p++;
    if (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r')
        return tok_fail(c, diag, "expected ',' or a line end after a closing quote");
    return GP_OK;
}

/* Reads an unquoted field, trimming blanks at both ends. */
static enum gp_err read_plain(struct gp_csv *c, struct gp_diag *diag)
{
    const char *s = c->p;
    while (c->p < c->end && *c->p != ',' && *c->p != '\n' && *c->p != '\r') {
        if (*c->p == '"')
            return tok_fail(c, diag, "quote inside an unquoted field (quote the whole field)");
        if (*c->p == '\0')
            return tok_fail(c, diag, "NUL byte in the input, expected text");
        c->p++;
    }
    const char *e = c->p;
    while (e > s && is_blank(e[-1]))
        e--;
    if (buf_add(c, s, (size_t)(e - s)) != 0)
        return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
    return GP_OK;
}

enum gp_err gp_csv_next(struct gp_csv *c, bool *got, struct gp_diag *diag)
{
    *got = false;
    c->nfields = 0;
    /* skip empty and blank lines */
    for (;;) {
        const char *q = c->p;
        while (q < c->end && is_blank(*q))
            q++;
        if (q >= c->end) {
            c->p = c->end;
            return GP_OK;
        }
        if (*q != '\n' && *q != '\r')
            break;
        c->p = q;
        eat_eol(c);
    }
    c->line = c->next_line;
    c->buf_len = 0;
    size_t nf = 0;
    for (;;) {
        while (c->p < c->end && is_blank(*c->p))
            c->p++;
        if (offs_push(c, nf++, c->buf_len) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
        enum gp_err err =
            (c->p < c->end && *c->p == '"') ? read_quoted(c, diag) : read_plain(c, diag);
        if (err != GP_OK)
            return err;
        if (buf_add(c, "", 1) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        eat_eol(c);
        break;
    }
    if (nf > c->fields_cap) {
        size_t cap = c->fields_cap ? c->fields_cap : 16;
        while (cap < nf)
            cap *= 2;
        const char **f = realloc(c->fields, cap * sizeof *f);
        if (!f)
            return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
        c->fields = f;
        c->fields_cap = cap;
    }
    for (size_t i = 0; i < nf; i++)
        c->fields[i] = c->buf + c->offs[i];
    c->nfields = nf;
    if (c->expect && nf != c->expect)
        return gp_diag_set(diag, GP_EPARSE, "%s:%lu: expected %zu fields as in the header, got %zu",
                           c->name, c->line, c->expect, nf);
    *got = true;
    return GP_OK;
}

enum gp_err gp_csv_header(struct gp_csv *c, const struct gp_csv_col *cols, size_t ncols,
                          unsigned flags, int *index, struct gp_diag *diag)
{
    for (size_t i = 0; i < ncols; i++)
        index[i] = -1;
    c->expect = 0;
    bool got;
    enum gp_err err = gp_csv_next(c, &got, diag);
    if (err != GP_OK)
        return err;
    if (!got)
        return gp_diag_set(diag, GP_EPARSE, "%s: empty file, expected a header line", c->name);
    if (c->nfields > INT32_MAX)
        return gp_csv_fail(c, GP_EPARSE, diag, "too many columns in the header");
    for (size_t j = 0; j < c->nfields; j++) {
        const char *h = c->fields[j];
        size_t i = 0;
        while (i < ncols && strcmp(cols[i].name, h) != 0)
            i++;
        if (i == ncols) {
            if (flags & GP_CSV_ALLOW_UNKNOWN)
                continue;
            char q[64], known[256] = "";
            size_t kl = 0;
            for (size_t k = 0; k < ncols && kl < sizeof known; k++) {
                int n =
                    snprintf(known + kl, sizeof known - kl, "%s%s", k ? ", " : "", cols[k].name);
                if (n < 0)
                    break;
                kl += (size_t)n;
            }
            gp_csv_quote(h, q, sizeof q);
            return gp_csv_fail(c, GP_EPARSE, diag, "unknown column \"%s\" (known columns: %s)", q,
                               known);
        }
        if (index[i] >= 0)
            return gp_csv_fail(c, GP_EPARSE, diag, "column '%s' appears twice in the header",
                               cols[i].name);
        index[i] = (int)j;
    }
    for (size_t i = 0; i < ncols; i++)
        if (cols[i].required && index[i] < 0)
            return gp_csv_fail(c, GP_EPARSE, diag, "missing required column '%s' in the header",
                               cols[i].name);
    c->expect = c->nfields;
    return GP_OK;
}

const char *gp_csv_field(const struct gp_csv *c, int idx)
{
    if (idx < 0 || (size_t)idx >= c->nfields)
        return "";
    return c->fields[idx];
}

void gp_csv_quote(const char *s, char *out, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i = 0;
    if (n < 4) {
        if (n)
            out[0] = '\0';
        return;
    }
    for (; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        char tmp[4];
        size_t k = 0;
        if (ch == '"' || ch == '\\') {
            tmp[k++] = '\\';
            tmp[k++] = (char)ch;
        } else if (ch >= 0x20 && ch < 0x7f) {
            tmp[k++] = (char)ch;
        } else {
            tmp[k++] = '\\';
            tmp[k++] = 'x';
            tmp[k++] = hex[ch >> 4];
            tmp[k++] = hex[ch & 15];
        }
        if (i >= 40 || o + k + 4 > n) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(out + o, tmp, k);
        o += k;
    }
    out[o] = '\0';
}

enum gp_err gp_csv_fail(const struct gp_csv *c, enum gp_err err, struct gp_diag *diag,
                        const char *fmt, ...)
{
    if (!diag)
        return err;
    int n = snprintf(diag->msg, sizeof diag->msg, "%s:%lu: ", c->name, c->line);
    if (n < 0 || (size_t)n >= sizeof diag->msg)
        return err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->msg + n, sizeof diag->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return err;
}

enum gp_err gp_csv_bad(const struct gp_csv *c, enum gp_err err, int idx, const char *col,
                       const char *what, struct gp_diag *diag)
{
    char q[64];
    gp_csv_quote(gp_csv_field(c, idx), q, sizeof q);
    return gp_csv_fail(c, err, diag, "column '%s': expected %s, got \"%s\"", col, what, q);
}

/* "an integer 0..1000", "a non-negative integer", ... for a diagnostic. */
static void int_what(int64_t min, int64_t max, char *out, size_t n)
{
    if (min == 0 && max == INT64_MAX)
        snprintf(out, n, "a non-negative integer");
    else if (max == INT64_MAX)
        snprintf(out, n, "an integer >= %" PRId64, min);
    else
        snprintf(out, n, "an integer %" PRId64 "..%" PRId64, min, max);
}

enum gp_err gp_csv_int(const struct gp_csv *c, int idx, const char *col, int64_t min, int64_t max,
                       int64_t *out, struct gp_diag *diag)
{
    const char *s = gp_csv_field(c, idx);
    const char *p = s;
    bool neg = false, ok = true;
    uint64_t v = 0;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (*p == '\0')
        ok = false;
    for (; ok && *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) {
            ok = false;
            break;
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    int64_t r = 0;
    if (ok) {
        if (!neg && v <= (uint64_t)INT64_MAX)
            r = (int64_t)v;
        else if (neg && v <= (uint64_t)INT64_MAX)
            r = -(int64_t)v;
        else
            ok = false;
    }
    if (!ok || r < min || r > max) {
        char what[96];
        int_what(min, max, what, sizeof what);
        return gp_csv_bad(c, GP_EINVALID, idx, col, what, diag);
    }
    *out = r;
    return GP_OK;
}

enum gp_err gp_csv_number(const struct gp_csv *c, int idx, const char *col, double min, double max,
                          double *out, struct gp_diag *diag)
{
    const char *s = gp_csv_field(c, idx);
    bool ok = *s != '\0' && strspn(s, "0123456789.eE+-") == strlen(s);
    double v = 0;
    if (ok) {
        char *end;
        errno = 0;
        v = strtod(s, &end);
        ok = errno == 0 && *end == '\0' && isfinite(v);
    }
    if (!ok || v < min || v > max) {
        char what[96];
        if (max >= HUGE_VAL || max > 1e300)
            snprintf(what, sizeof what, "a number >= %g", min);
        else
            snprintf(what, sizeof what, "a number %g..%g", min, max);
        return gp_csv_bad(c, GP_EINVALID, idx, col, what, diag);
    }
    *out = v;
    return GP_OK;
}

/* FNV-1a */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void gp_csv_map_free(struct gp_csv_map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->len = 0;
}

static int map_grow(struct gp_csv_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(uint32_t) / 2)
        return -1;
    const char **keys = calloc(cap, sizeof *keys);
    uint32_t *vals = calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = (size_t)hash_str(m->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

bool gp_csv_map_get(const struct gp_csv_map *m, const char *key, uint32_t *out)
{
    if (m->cap == 0)
        return false;
    size_t j = (size_t)hash_str(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], key) == 0) {
            *out = m->vals[j];
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return false;
}

enum gp_err gp_csv_map_put(struct gp_csv_map *m, const char *key, uint32_t val, bool *found,
                           uint32_t *out)
{
    if ((m->len + 1) * 10 > m->cap * 7 && map_grow(m) != 0)
        return GP_ENOMEM;
    size_t j = (size_t)hash_str(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], key) == 0) {
            *found = true;
            *out = m->vals[j];
            return GP_OK;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = key;
    m->vals[j] = val;
    m->len++;
    *found = false;
    *out = val;
    return GP_OK;
}

enum gp_err gp_csv_unique_name(const struct gp_csv *c, struct gp_csv_map *names, struct gp_arena *a,
                               const char *raw, const char *col, const char *noun, const char *verb,
                               const char **out, struct gp_diag *diag)
{
    const char *copy = gp_arena_strdup(a, raw);
    bool found;
    uint32_t first;
    if (!copy || gp_csv_map_put(names, copy, (uint32_t)c->line, &found, &first) != GP_OK)
        return gp_csv_fail(c, GP_ENOMEM, diag, "out of memory");
    if (found) {
        char q[64];
        gp_csv_quote(raw, q, sizeof q);
        return gp_csv_fail(c, GP_EINVALID, diag,
                           "column '%s': %s \"%s\" is already %s on line %" PRIu32, col, noun, q,
                           verb, first);
    }
    *out = copy;
    return GP_OK;
}
