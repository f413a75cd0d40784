/* yaml_walk.c - shared YAML walking for the readers: quiet stream loading,
 * field paths, positions, typed scalars and table-driven mappings. */
#include "io/yaml_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

void gp_yaml_init(struct gp_yaml *y, const char *name, struct gp_arena *a, struct gp_diag *diag)
{
    memset(y, 0, sizeof *y);
    y->name = name ? name : "<input>";
    y->arena = a;
    y->diag = diag;
}

void gp_yaml_set_root(struct gp_yaml *y, const char *root)
{
    snprintf(y->path, sizeof y->path, "%s", root);
    y->plen = strlen(y->path);
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static struct gp_yaml_saved save(const struct gp_yaml *y)
{
    struct gp_yaml_saved s = {y->plen, y->line, y->col};
    return s;
}

static void append(struct gp_yaml *y, const char *prefix, const char *s, size_t n)
{
    if (y->plen >= sizeof y->path - 1)
        return;
    if (n > sizeof y->path)
        n = sizeof y->path;
    int w = snprintf(y->path + y->plen, sizeof y->path - y->plen, "%s%.*s", prefix, (int)n, s);
    if (w > 0)
        y->plen += (size_t)w < sizeof y->path - y->plen ? (size_t)w : sizeof y->path - 1 - y->plen;
}

static void remember(struct gp_yaml *y, struct fy_node *n)
{
    int line, col;
    if (gp_yaml_node_mark(n, &line, &col)) {
        y->line = line;
        y->col = col;
    }
}

static struct gp_yaml_saved push_keyn(struct gp_yaml *y, const char *key, size_t len,
                                      struct fy_node *keynode)
{
    struct gp_yaml_saved s = save(y);
    bool plain = len > 0;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(key[i]) && key[i] != '_' && key[i] != '-')
            plain = false;
    if (plain) {
        append(y, y->plen ? "." : "", key, len);
    } else {
        append(y, "[\"", key, len);
        append(y, "", "\"]", 2);
    }
    remember(y, keynode);
    return s;
}

struct gp_yaml_saved gp_yaml_push_key(struct gp_yaml *y, const char *key, struct fy_node *keynode)
{
    return push_keyn(y, key, strlen(key), keynode);
}

struct gp_yaml_saved gp_yaml_push_index(struct gp_yaml *y, size_t i, struct fy_node *item)
{
    struct gp_yaml_saved s = save(y);
    char buf[32];
    snprintf(buf, sizeof buf, "[%zu]", i);
    append(y, "", buf, strlen(buf));
    remember(y, item);
    return s;
}

void gp_yaml_pop(struct gp_yaml *y, struct gp_yaml_saved s)
{
    y->plen = s.plen;
    y->path[s.plen] = '\0';
    y->line = s.line;
    y->col = s.col;
}

bool gp_yaml_node_mark(struct fy_node *n, int *line, int *col)
{
    /* the depth is bounded by libfyaml's nesting limit */
    if (!n)
        return false;
    switch (fy_node_get_type(n)) {
    case FYNT_SCALAR: {
        struct fy_token *t = fy_node_get_scalar_token(n);
        const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
        if (!m)
            return false;
        *line = m->line + 1;
        *col = m->column + 1;
        /* a quoted scalar's token starts after the quote: point at the quote */
        enum fy_node_style st = fy_node_get_style(n);
        if ((st == FYNS_SINGLE_QUOTED || st == FYNS_DOUBLE_QUOTED) && *col > 1)
            (*col)--;
        return true;
    }
    case FYNT_MAPPING: {
        void *it = NULL;
        struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
        return p && gp_yaml_node_mark(fy_node_pair_key(p), line, col);
    }
    case FYNT_SEQUENCE: {
        void *it = NULL;
        struct fy_node *item = fy_node_sequence_iterate(n, &it);
        return gp_yaml_node_mark(item, line, col);
    }
    }
    return false;
}

/* Keys and names from the input may hold control characters: a diag is
 * one line whatever the input. */
static void one_line(struct gp_diag *diag)
{
    if (!diag)
        return;
    for (char *p = diag->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

enum gp_err gp_yaml_fail(struct gp_yaml *y, struct fy_node *at, enum gp_err err, const char *fmt,
                         ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = y->line, col = y->col;
    if (!gp_yaml_node_mark(at, &line, &col)) {
        line = y->line;
        col = y->col;
    }
    char where[48] = "";
    if (line > 0)
        snprintf(where, sizeof where, "%d:%d:", line, col);
    if (y->plen)
        gp_diag_set(y->diag, err, "%s:%s %s: %s", y->name, where, y->path, msg);
    else
        gp_diag_set(y->diag, err, "%s:%s %s", y->name, where, msg);
    one_line(y->diag);
    return err;
}

/* libfyaml's diagnostics go nowhere: errors are collected instead. */
static void diag_sink(struct fy_diag *d, void *user, const char *buf, size_t len)
{
    (void)d;
    (void)user;
    (void)buf;
    (void)len;
}

/* The length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_char(const unsigned char *p, size_t n)
{
    if (p[0] < 0x80)
        return 1;
    size_t len;
    uint32_t min, c;
    if ((p[0] & 0xe0) == 0xc0) {
        len = 2, min = 0x80, c = p[0] & 0x1fu;
    } else if ((p[0] & 0xf0) == 0xe0) {
        len = 3, min = 0x800, c = p[0] & 0x0fu;
    } else if ((p[0] & 0xf8) == 0xf0) {
        len = 4, min = 0x10000, c = p[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return len;
}

/* YAML is Unicode text; libfyaml 0.7.12 can loop forever on some invalid
 * UTF-8, so it never sees any: the first bad byte is reported instead. */
static enum gp_err check_text(struct gp_yaml *y, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text;
    int line = 1, col = 1;
    for (size_t i = 0; i < len;) {
        size_t n = p[i] ? utf8_char(p + i, len - i) : 0;
        if (n == 0)
            return gp_diag_set(y->diag, GP_EPARSE,
                               "%s:%d:%d: YAML syntax error: %s (byte 0x%02x); expected UTF-8 text",
                               y->name, line, col, p[i] ? "invalid UTF-8" : "a NUL byte", p[i]);
        if (p[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
        i += n;
    }
    return GP_OK;
}

enum gp_err gp_yaml_each_document(struct gp_yaml *y, const char *text, size_t len,
                                  gp_yaml_doc_fn fn, void *ctx)
{
    enum gp_err err = check_text(y, text, len);
    if (err != GP_OK)
        return err;
    struct fy_diag *fdiag = NULL;
    struct fy_parser *parser = NULL;
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_sink;
    dcfg.colorize = false;
    dcfg.level = FYET_ERROR;
    fdiag = fy_diag_create(&dcfg);
    if (!fdiag) {
        err = gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
        goto out;
    }
    fy_diag_set_collect_errors(fdiag, true);
    struct fy_parse_cfg pcfg = {0};
    pcfg.flags = FYPCF_QUIET;
    pcfg.diag = fdiag;
    parser = fy_parser_create(&pcfg);
    if (!parser || fy_parser_set_string(parser, text, len) != 0) {
        err = gp_diag_set(y->diag, GP_ENOMEM, "%s: cannot start the YAML parser", y->name);
        goto out;
    }
    for (;;) {
        struct fy_document *doc = fy_parse_load_document(parser);
        if (!doc)
            break;
        struct fy_node *root = fy_document_root(doc);
        if (!gp_yaml_is_null(root)) {
            y->plen = 0;
            y->path[0] = '\0';
            y->line = y->col = 0;
            err = fn(y, root, ctx);
        }
        fy_parse_document_destroy(parser, doc);
        if (err != GP_OK)
            goto out;
    }
    if (fy_diag_got_error(fdiag) || fy_parser_get_stream_error(parser)) {
        void *it = NULL;
        struct fy_diag_error *e = fy_diag_errors_iterate(fdiag, &it);
        if (e && e->msg)
            err = gp_diag_set(y->diag, GP_EPARSE, "%s:%d:%d: YAML syntax error: %s", y->name,
                              e->line, e->column, e->msg);
        else
            err = gp_diag_set(y->diag, GP_EPARSE, "%s: YAML syntax error", y->name);
        one_line(y->diag);
    }
out:
    if (parser)
        fy_parser_destroy(parser);
    if (fdiag)
        fy_diag_destroy(fdiag);
    return err;
}

/* --- scalars ------------------------------------------------------------ */

static const char *scalar(struct fy_node *n, size_t *len)
{
    const char *s = fy_node_get_scalar(n, len);
    if (!s) {
        *len = 0;
        return "";
    }
    return s;
}

bool gp_yaml_is_null(struct fy_node *n)
{
    if (!n)
        return true;
    if (!fy_node_is_scalar(n) || fy_node_get_style(n) != FYNS_PLAIN)
        return false;
    size_t len;
    const char *s = scalar(n, &len);
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (len == strlen(nulls[i]) && memcmp(s, nulls[i], len) == 0)
            return true;
    return false;
}

const char *gp_yaml_describe(struct fy_node *n)
{
    if (gp_yaml_is_null(n))
        return "null";
    switch (fy_node_get_type(n)) {
    case FYNT_MAPPING:
        return "a mapping";
    case FYNT_SEQUENCE:
        return "a list";
    case FYNT_SCALAR:
        break;
    }
    if (fy_node_is_alias(n))
        return "an alias";
    if (fy_node_get_style(n) != FYNS_PLAIN)
        return "a string";
    size_t len;
    const char *s = scalar(n, &len);
    char buf[64];
    double v;
    if (len < sizeof buf) {
        memcpy(buf, s, len);
        buf[len] = '\0';
        if (gp_units_number(buf, &v))
            return "a number";
        if (!strcmp(buf, "true") || !strcmp(buf, "false"))
            return "a boolean";
    }
    return "a string";
}

const char *gp_yaml_quote(struct fy_node *n, char *buf, size_t size)
{
    if (size < 8) {
        if (size)
            buf[0] = '\0';
        return buf;
    }
    if (!n || !fy_node_is_scalar(n)) {
        snprintf(buf, size, "%s", !n ? "" : fy_node_is_mapping(n) ? "{...}" : "[...]");
        return buf;
    }
    size_t len;
    const char *s = scalar(n, &len);
    size_t o = 0, limit = size - 4; /* room for "..." and NUL */
    if (limit > 60)
        limit = 60;
    for (size_t i = 0; i < len; i++) {
        if (o >= limit) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char c = (unsigned char)s[i];
        buf[o++] = (c < 0x20 || c == 0x7f || c == '"') ? (c == '"' ? '\'' : '?') : (char)c;
    }
    buf[o] = '\0';
    return buf;
}

enum gp_err gp_yaml_text(struct gp_yaml *y, struct fy_node *n, const char *what, const char **out)
{
    if (!n) {
        *out = "";
        return GP_OK;
    }
    if (fy_node_is_alias(n))
        return gp_yaml_fail(y, n, GP_EINVALID,
                            "YAML aliases (*%s) are not supported; write the value out",
                            fy_node_get_scalar0(n) ? fy_node_get_scalar0(n) : "");
    if (!fy_node_is_scalar(n))
        return gp_yaml_fail(y, n, GP_EINVALID, "expected %s, got %s", what, gp_yaml_describe(n));
    size_t len;
    const char *s = scalar(n, &len);
    if (memchr(s, '\0', len))
        return gp_yaml_fail(y, n, GP_EINVALID, "expected %s, got text with a NUL character", what);
    char *copy = gp_arena_strndup(y->arena, s, len);
    if (!copy)
        return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
    *out = copy;
    return GP_OK;
}

enum gp_err gp_yaml_string(struct gp_yaml *y, struct fy_node *n, const char **out)
{
    enum gp_err err = gp_yaml_text(y, n, "a string", out);
    if (err == GP_OK && !**out)
        err = gp_yaml_fail(y, n, GP_EINVALID, "expected a non-empty string");
    return err;
}

enum gp_err gp_yaml_expect(struct gp_yaml *y, struct fy_node *n, const char *want)
{
    const char *s = NULL;
    char q[80];
    enum gp_err err = gp_yaml_text(y, n, "a string", &s);
    if (err == GP_OK && strcmp(s, want) != 0)
        err = gp_yaml_fail(y, n, GP_EINVALID, "expected \"%s\", got \"%s\"", want,
                           gp_yaml_quote(n, q, sizeof q));
    return err;
}

/* A plain (unquoted) scalar's text, for numbers. */
static enum gp_err plain_text(struct gp_yaml *y, struct fy_node *n, const char *what,
                              const char **out)
{
    enum gp_err err = gp_yaml_text(y, n, what, out);
    if (err == GP_OK && fy_node_get_style(n) != FYNS_PLAIN)
        err = gp_yaml_fail(y, n, GP_EINVALID,
                           "expected %s, got the string \"%s\" (remove the quotes)", what, *out);
    return err;
}

enum gp_err gp_yaml_int(struct gp_yaml *y, struct fy_node *n, int64_t min, int64_t max,
                        int64_t *out)
{
    char what[96];
    if (min == 0 && max >= INT32_MAX)
        snprintf(what, sizeof what, "a non-negative integer");
    else if (min == 0)
        snprintf(what, sizeof what, "a non-negative integer up to %lld", (long long)max);
    else
        snprintf(what, sizeof what, "an integer from %lld to %lld", (long long)min, (long long)max);
    const char *s;
    enum gp_err err = plain_text(y, n, what, &s);
    if (err != GP_OK)
        return err;
    int64_t mag = 0;
    bool neg = s[0] == '-';
    bool ok = gp_units_uint(s + neg, &mag);
    int64_t v = neg ? -mag : mag;
    if (!ok || v < min || v > max) {
        char q[80];
        return gp_yaml_fail(y, n, GP_EINVALID, "expected %s, got \"%s\"", what,
                            gp_yaml_quote(n, q, sizeof q));
    }
    *out = v;
    return GP_OK;
}

enum gp_err gp_yaml_number(struct gp_yaml *y, struct fy_node *n, double min, double max,
                           double *out)
{
    char what[96];
    snprintf(what, sizeof what, "a number from %g to %g", min, max);
    const char *s;
    enum gp_err err = plain_text(y, n, what, &s);
    if (err != GP_OK)
        return err;
    double v;
    if (!gp_units_number(s, &v) || !(v >= min && v <= max)) {
        char q[80];
        return gp_yaml_fail(y, n, GP_EINVALID, "expected %s, got \"%s\"", what,
                            gp_yaml_quote(n, q, sizeof q));
    }
    *out = v;
    return GP_OK;
}

enum gp_err gp_yaml_cpu_milli(struct gp_yaml *y, struct fy_node *n, int64_t *out)
{
    const char *s = NULL;
    enum gp_err err = gp_yaml_text(y, n, "a Kubernetes CPU quantity", &s);
    enum gp_units_qty r = GP_UNITS_QTY_OK;
    if (err == GP_OK &&
        (r = gp_units_quantity(s, 3, 0, GP_UNITS_QTY_MAX, out)) != GP_UNITS_QTY_OK) {
        char q[80];
        err = r == GP_UNITS_QTY_SYNTAX
                  ? gp_yaml_fail(y, n, GP_EINVALID,
                                 "expected a Kubernetes CPU quantity like 8 or 500m, got \"%s\"",
                                 gp_yaml_quote(n, q, sizeof q))
                  : gp_yaml_fail(y, n, GP_EINVALID,
                                 "the CPU quantity \"%s\" is %s (0 to 10^15 millicores)",
                                 gp_yaml_quote(n, q, sizeof q), gp_units_quantity_why(r));
    }
    return err;
}

enum gp_err gp_yaml_mem_mib(struct gp_yaml *y, struct fy_node *n, int64_t *out)
{
    const char *s = NULL;
    enum gp_err err = gp_yaml_text(y, n, "a Kubernetes quantity", &s);
    enum gp_units_qty r = GP_UNITS_QTY_OK;
    if (err == GP_OK &&
        (r = gp_units_quantity(s, 0, 20, GP_UNITS_QTY_MAX, out)) != GP_UNITS_QTY_OK) {
        char q[80];
        err = r == GP_UNITS_QTY_SYNTAX
                  ? gp_yaml_fail(y, n, GP_EINVALID,
                                 "expected a Kubernetes quantity like 16Gi, got \"%s\"",
                                 gp_yaml_quote(n, q, sizeof q))
                  : gp_yaml_fail(y, n, GP_EINVALID, "the quantity \"%s\" is %s (0 to 10^15 MiB)",
                                 gp_yaml_quote(n, q, sizeof q), gp_units_quantity_why(r));
    }
    return err;
}

static bool name_part_ok(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

bool gp_yaml_label_value_ok(const char *s)
{
    return !*s || name_part_ok(s, strlen(s));
}

bool gp_yaml_dns_label_ok(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

bool gp_yaml_qualified_name_ok(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return name_part_ok(s, strlen(s));
    size_t plen = (size_t)(slash - s);
    if (plen == 0 || plen > 253 || s[0] == '.' || s[0] == '-' || s[plen - 1] == '-' ||
        s[plen - 1] == '.')
        return false;
    for (size_t i = 0; i < plen; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return false;
    return name_part_ok(slash + 1, strlen(slash + 1));
}

/* --- mappings ----------------------------------------------------------- */

static enum gp_err field_value(struct gp_yaml *y, const struct gp_yaml_field *f, struct fy_node *v,
                               void *obj)
{
    char *dst = (char *)obj + f->offset;
    enum gp_err err = GP_OK;
    int64_t i64;
    double d;
    const char *s;
    switch (f->type) {
    case GP_YT_STRING:
        err = gp_yaml_string(y, v, &s);
        if (err == GP_OK)
            memcpy(dst, &s, sizeof s);
        break;
    case GP_YT_U32:
    case GP_YT_I32:
        err = gp_yaml_int(y, v, (int64_t)f->min, (int64_t)f->max, &i64);
        if (err == GP_OK && f->type == GP_YT_U32) {
            uint32_t u = (uint32_t)i64;
            memcpy(dst, &u, sizeof u);
        } else if (err == GP_OK) {
            int32_t i = (int32_t)i64;
            memcpy(dst, &i, sizeof i);
        }
        break;
    case GP_YT_NUMBER:
        err = gp_yaml_number(y, v, f->min, f->max, &d);
        if (err == GP_OK)
            memcpy(dst, &d, sizeof d);
        break;
    case GP_YT_CPU_MILLI:
    case GP_YT_MEM_MIB:
    case GP_YT_MEM_MIB32:
        err = f->type == GP_YT_CPU_MILLI ? gp_yaml_cpu_milli(y, v, &i64)
                                         : gp_yaml_mem_mib(y, v, &i64);
        if (err != GP_OK)
            break;
        if ((double)i64 < f->min || (double)i64 > f->max) {
            char q[80];
            gp_yaml_quote(v, q, sizeof q);
            if ((double)i64 < f->min)
                err = gp_yaml_fail(y, v, GP_EINVALID, "must be greater than zero, got \"%s\"", q);
            else
                err = gp_yaml_fail(y, v, GP_EINVALID, "too large, got \"%s\"", q);
            break;
        }
        if (f->type == GP_YT_MEM_MIB32) {
            uint32_t u = (uint32_t)i64;
            memcpy(dst, &u, sizeof u);
        } else {
            memcpy(dst, &i64, sizeof i64);
        }
        break;
    case GP_YT_CUSTOM:
        err = f->fn(y, v, obj);
        break;
    case GP_YT_IGNORE:
        break;
    }
    return err;
}

enum gp_err gp_yaml_object(struct gp_yaml *y, struct fy_node *n, const struct gp_yaml_field *fields,
                           size_t nfields, void *obj, bool strict)
{
    if (!n || !fy_node_is_mapping(n)) {
        if (n && fy_node_is_alias(n)) {
            const char *unused;
            return gp_yaml_text(y, n, "a mapping", &unused);
        }
        return gp_yaml_fail(y, n, GP_EINVALID, "expected a mapping, got %s", gp_yaml_describe(n));
    }
    uint64_t seen = 0;
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
        if (!k || !fy_node_is_scalar(k) || fy_node_is_alias(k))
            return gp_yaml_fail(y, k, GP_EINVALID, "expected a field name, got %s",
                                gp_yaml_describe(k));
        size_t klen;
        const char *key = scalar(k, &klen);
        if (klen == 2 && memcmp(key, "<<", 2) == 0)
            return gp_yaml_fail(y, k, GP_EINVALID,
                                "YAML merge keys (<<) are not supported; write the fields out");
        size_t i;
        for (i = 0; i < nfields && i < 64; i++)
            if (strlen(fields[i].key) == klen && memcmp(fields[i].key, key, klen) == 0)
                break;
        struct gp_yaml_saved s = push_keyn(y, key, klen, k);
        enum gp_err err = GP_OK;
        if (i == nfields || i == 64) {
            if (strict) {
                char expected[400];
                size_t o = 0;
                expected[0] = '\0';
                for (size_t j = 0; j < nfields && o < sizeof expected; j++) {
                    int w = snprintf(expected + o, sizeof expected - o, "%s%s", j ? ", " : "",
                                     fields[j].key);
                    if (w < 0)
                        break;
                    o += (size_t)w;
                }
                err = gp_yaml_fail(y, k, GP_EINVALID, "unknown field (expected one of: %s)",
                                   expected);
            }
        } else if (!gp_yaml_is_null(v)) {
            seen |= UINT64_C(1) << i;
            err = field_value(y, &fields[i], v, obj);
        }
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
    }
    for (size_t i = 0; i < nfields && i < 64; i++)
        if ((fields[i].flags & GP_YF_REQUIRED) && !(seen & (UINT64_C(1) << i)))
            return gp_yaml_fail(y, n, GP_EINVALID, "missing required field \"%s\"", fields[i].key);
    return GP_OK;
}

enum gp_err gp_yaml_kv_map(struct gp_yaml *y, struct fy_node *n, bool labels,
                           const struct gp_kv **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    if (gp_yaml_is_null(n))
        return GP_OK;
    if (!fy_node_is_mapping(n))
        return gp_yaml_fail(y, n, GP_EINVALID, "expected a mapping of strings, got %s",
                            gp_yaml_describe(n));
    int total = fy_node_mapping_item_count(n);
    if (total <= 0)
        return GP_OK;
    struct gp_kv *kv = gp_arena_alloc(y->arena, (size_t)total * sizeof *kv);
    if (!kv)
        return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
    size_t len = 0;
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it)) != NULL && len < (size_t)total) {
        struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
        const char *key, *value = "";
        enum gp_err err = gp_yaml_text(y, k, "a string key", &key);
        if (err != GP_OK)
            return err;
        struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
        if (!gp_yaml_is_null(v))
            err = gp_yaml_text(y, v, "a string", &value);
        char q[80];
        if (err == GP_OK && labels && !gp_yaml_qualified_name_ok(key))
            err = gp_yaml_fail(y, k, GP_EINVALID,
                               "expected a Kubernetes label key ([prefix/]name, the name at most "
                               "63 of [A-Za-z0-9_.-]), got \"%s\"",
                               gp_yaml_quote(k, q, sizeof q));
        if (err == GP_OK && labels && !gp_yaml_label_value_ok(value))
            err = gp_yaml_fail(y, v, GP_EINVALID,
                               "expected a Kubernetes label value (at most 63 of [A-Za-z0-9_.-], "
                               "beginning and ending with a letter or digit), got \"%s\"",
                               gp_yaml_quote(v, q, sizeof q));
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
        kv[len].key = key;
        kv[len].value = value;
        len++;
    }
    *out = kv;
    *count = len;
    return GP_OK;
}

enum gp_err gp_yaml_list(struct gp_yaml *y, struct fy_node *n, gp_yaml_item_fn fn, void *ctx)
{
    if (gp_yaml_is_null(n))
        return GP_OK;
    if (!fy_node_is_sequence(n)) {
        if (fy_node_is_alias(n)) {
            const char *unused;
            return gp_yaml_text(y, n, "a list", &unused);
        }
        return gp_yaml_fail(y, n, GP_EINVALID, "expected a list, got %s", gp_yaml_describe(n));
    }
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while ((item = fy_node_sequence_iterate(n, &it)) != NULL) {
        struct gp_yaml_saved s = gp_yaml_push_index(y, i, item);
        enum gp_err err = fn(y, item, i, ctx);
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
        i++;
    }
    return GP_OK;
}

struct fy_node *gp_yaml_key_node(struct fy_node *n, const char *key)
{
    if (!n || !fy_node_is_mapping(n))
        return NULL;
    size_t want = strlen(key);
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p);
        size_t len;
        if (k && fy_node_is_scalar(k) && !fy_node_is_alias(k)) {
            const char *s = scalar(k, &len);
            if (len == want && memcmp(s, key, len) == 0)
                return k;
        }
    }
    return NULL;
}
