/* watch.c - watch streams cut into lines and lines parsed into events
 * (see watch.h). */
#include "kube/watch.h"

#include <stdlib.h>
#include <string.h>

#include "kube/jload.h"

void gp_kube_lines_init(struct gp_kube_lines *l, size_t max_line)
{
    l->buf = NULL;
    l->len = l->cap = 0;
    l->max = max_line ? max_line : GP_KUBE_LINE_MAX_DEFAULT;
}

void gp_kube_lines_free(struct gp_kube_lines *l)
{
    free(l->buf);
    l->buf = NULL;
    l->len = l->cap = 0;
}

static enum gp_err lines_append(struct gp_kube_lines *l, const char *p, size_t n,
                                struct gp_diag *diag)
{
    if (n > l->max - l->len) {
        l->len = 0;
        return gp_diag_set(diag, GP_ELIMIT, "watch: a line longer than %zu bytes", l->max);
    }
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + n + 1)
            cap *= 2;
        if (cap > l->max + 1)
            cap = l->max + 1;
        char *b = realloc(l->buf, cap);
        if (!b)
            return gp_diag_set(diag, GP_ENOMEM, "watch: out of memory");
        l->buf = b;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, p, n);
    l->len += n;
    l->buf[l->len] = '\0';
    return GP_OK;
}

enum gp_err gp_kube_lines_feed(struct gp_kube_lines *l, const char *data, size_t n,
                               gp_kube_line_fn fn, void *ctx, struct gp_diag *diag)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl ? (size_t)(nl - data) : n;
        enum gp_err err = lines_append(l, data, take, diag);
        if (err != GP_OK)
            return err;
        if (!nl)
            break;
        data += take + 1;
        n -= take + 1;
        size_t len = l->len;
        if (len > 0 && l->buf[len - 1] == '\r')
            l->buf[--len] = '\0';
        l->len = 0;
        if (len > 0 && fn(l->buf, len, ctx) != 0)
            return GP_ESTATE; /* fn's own diag, if any, stays */
    }
    return GP_OK;
}

const char *gp_kube_event_type_name(enum gp_kube_event_type t)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    return (unsigned)t < 5 ? names[t] : "?";
}

static size_t put_part(char *key, size_t n, size_t at, const char *src, size_t len)
{
    if (at + 1 < n) {
        size_t k = len < n - 1 - at ? len : n - 1 - at;
        memcpy(key + at, src, k);
        key[at + k] = '\0';
    }
    return at + len;
}

size_t gp_kube_key_make(const char *ns, const char *name, char *key, size_t n)
{
    if (n > 0)
        key[0] = '\0';
    size_t at = put_part(key, n, 0, ns ? ns : "", ns ? strlen(ns) : 0);
    at = put_part(key, n, at, "/", 1);
    return put_part(key, n, at, name ? name : "", name ? strlen(name) : 0);
}

void gp_kube_str_copy(char *dst, size_t n, const char *src)
{
    if (n > 0)
        dst[0] = '\0';
    put_part(dst, n, 0, src, strlen(src));
}

size_t gp_kube_str_join(char *dst, size_t n, const char *const *parts, size_t count)
{
    if (n > 0)
        dst[0] = '\0';
    size_t at = 0;
    for (size_t i = 0; i < count; i++)
        at = put_part(dst, n, at, parts[i], strlen(parts[i]));
    return at;
}

const char *gp_kube_meta(const json_t *obj, const char *field)
{
    return gp_kube_meta_of(json_object_get(obj, "metadata"), field);
}

const char *gp_kube_meta_of(const json_t *meta, const char *field)
{
    json_t *v = json_object_get(meta, field);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

void gp_kube_meta_ids(const json_t *meta, struct gp_kube_ids *ids)
{
    memset(ids, 0, sizeof *ids);
    const char *key;
    size_t n;
    json_t *v;
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = meta}; /* (jansson's iterator takes a non-const object; only read) */
    json_object_keylen_foreach(u.m, key, n, v)
    {
        const char **to = n == 4 && memcmp(key, "name", 4) == 0                ? &ids->name
                          : n == 9 && memcmp(key, "namespace", 9) == 0         ? &ids->ns
                          : n == 3 && memcmp(key, "uid", 3) == 0               ? &ids->uid
                          : n == 15 && memcmp(key, "resourceVersion", 15) == 0 ? &ids->rv
                                                                               : NULL;
        if (to)
            *to = json_string_value(v);
    }
}

void gp_kube_event_clear(struct gp_kube_event *ev)
{
    json_decref(ev->object);
    memset(ev, 0, sizeof *ev);
}

enum gp_err gp_kube_event_parse(const char *line, size_t len, struct gp_kube_event *ev,
                                struct gp_diag *diag)
{
    return gp_kube_event_parse_skip(line, len, NULL, ev, diag);
}

enum gp_err gp_kube_event_parse_skip(const char *line, size_t len, const struct gp_kube_jskip *sk,
                                     struct gp_kube_event *ev, struct gp_diag *diag)
{
    return gp_kube_event_parse_reuse(line, len, sk, NULL, ev, diag);
}

enum gp_err gp_kube_event_parse_reuse(const char *line, size_t len, const struct gp_kube_jskip *sk,
                                      struct gp_kube_jreuse *ru, struct gp_kube_event *ev,
                                      struct gp_diag *diag)
{
    memset(ev, 0, sizeof *ev);
    json_error_t jerr;
    static const char *const names[] = {"type", "object"};
    json_t *m[2]; /* the document itself is not built (jload.h) */
    if (!gp_kube_jload_members(line, len, JSON_REJECT_DUPLICATES, &jerr, sk, ru, names, 2, m))
        return gp_diag_set(diag, GP_EPARSE, "watch event: column %d: %s", jerr.column, jerr.text);
    json_t *type = m[0], *obj = m[1];
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    enum gp_kube_event_type et;
    for (et = GP_KUBE_ADDED; et <= GP_KUBE_ERROR; et++)
        if (strcmp(t, gp_kube_event_type_name(et)) == 0)
            break;
    enum gp_err err = GP_OK;
    if (et > GP_KUBE_ERROR) {
        err = gp_diag_set(diag, GP_EINVALID,
                          "watch event: type: expected ADDED, MODIFIED, "
                          "DELETED, BOOKMARK or ERROR");
        goto fail;
    }
    if (!json_is_object(obj)) {
        err = gp_diag_set(diag, GP_EINVALID, "watch event: %s: object: expected an object", t);
        goto fail;
    }
    ev->type = et;
    ev->object = obj;
    json_decref(type); /* t pointed into it: the type's name is used from here */
    t = gp_kube_event_type_name(et);
    struct gp_kube_ids id = {NULL, NULL, NULL, NULL};
    if (ru && ru->meta_read) /* the parse read them (jload.h) */
        id = (struct gp_kube_ids){ru->meta_ns, ru->meta_name, ru->meta_uid, ru->meta_rv};
    else
        gp_kube_meta_ids(json_object_get(obj, "metadata"), &id);
    ev->ns = id.ns ? id.ns : "";
    ev->name = id.name ? id.name : "";
    ev->rv = id.rv ? id.rv : "";
    ev->message = "";
    if (et == GP_KUBE_ERROR) {
        json_t *code = json_object_get(obj, "code"), *msg = json_object_get(obj, "message");
        ev->code = json_is_integer(code) ? (long)json_integer_value(code) : 0;
        ev->message = json_is_string(msg) ? json_string_value(msg) : "";
        return GP_OK;
    }
    if (!ev->rv[0]) {
        gp_diag_set(diag, GP_EINVALID, "watch event: %s: object.metadata.resourceVersion: missing",
                    t);
        gp_kube_event_clear(ev);
        return GP_EINVALID;
    }
    if (et != GP_KUBE_BOOKMARK && !ev->name[0]) {
        gp_diag_set(diag, GP_EINVALID, "watch event: %s: object.metadata.name: missing", t);
        gp_kube_event_clear(ev);
        return GP_EINVALID;
    }
    return GP_OK;
fail:
    json_decref(type);
    json_decref(obj);
    return err;
}

/* --- metadata.resourceVersion read without a tree ----------------------- */

struct scan {
    const char *p, *end;
};

static void scan_ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* A string at s->p: its contents in [*b, *e) (escapes left as they are);
 * *esc when it has any. Control characters, bad escapes and bad UTF-8 are
 * refused, as jansson refuses them. */
static bool scan_string(struct scan *s, const char **b, const char **e, bool *esc)
{
    if (s->p >= s->end || *s->p != '"')
        return false;
    *b = ++s->p;
    *esc = false;
    for (uint64_t x; s->end - s->p >= 8; s->p += 8) { /* plain bytes eight at a time */
        memcpy(&x, s->p, 8);
        if (gp_kube_json_special8(x))
            break;
    }
    while (s->p < s->end) {
        unsigned char ch = (unsigned char)*s->p;
        if (ch == '"') {
            *e = s->p++;
            return true;
        }
        if (ch < 0x20)
            return false;
        if (ch >= 0x80) {
            int more = ch >= 0xf0 && ch <= 0xf4  ? 3
                       : ch >= 0xe0 && ch < 0xf0 ? 2
                       : ch >= 0xc2 && ch < 0xe0 ? 1
                                                 : -1;
            if (more < 0 || s->end - s->p <= more)
                return false;
            for (int i = 1; i <= more; i++)
                if (((unsigned char)s->p[i] & 0xc0) != 0x80)
                    return false;
            s->p += more + 1;
            continue;
        }
        if (ch == '\\') {
            *esc = true;
            if (++s->p >= s->end)
                return false;
            if (*s->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (s->p + i >= s->end || !s->p[i] ||
                        !strchr("0123456789abcdefABCDEF", s->p[i]))
                        return false;
                s->p += 4;
            } else if (!*s->p || !strchr("\"\\/bfnrt", *s->p)) {
                return false;
            }
        }
        s->p++;
    }
    return false;
}

static bool scan_value(struct scan *s, int depth);

/* An object's members; in the document's own (depth 1) "metadata" is
 * looked into, and in that (meta) "resourceVersion" kept: the last of each,
 * as jansson keeps the last of duplicate keys. */
static bool scan_object(struct scan *s, int depth, bool meta, const char **rv, size_t *rvlen,
                        bool *rv_esc)
{
    s->p++; /* '{' */
    scan_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return true;
    }
    for (;;) {
        const char *kb, *ke;
        bool kesc;
        scan_ws(s);
        if (!scan_string(s, &kb, &ke, &kesc))
            return false;
        scan_ws(s);
        if (s->p >= s->end || *s->p != ':')
            return false;
        s->p++;
        scan_ws(s);
        size_t kl = (size_t)(ke - kb);
        if (depth == 1 && !kesc && kl == 8 && memcmp(kb, "metadata", 8) == 0) {
            *rv = NULL; /* a later metadata replaces an earlier one */
            if (s->p < s->end && *s->p == '{') {
                if (!scan_object(s, 2, true, rv, rvlen, rv_esc))
                    return false;
            } else if (!scan_value(s, depth + 1)) {
                return false;
            }
        } else if (meta && !kesc && kl == 15 && memcmp(kb, "resourceVersion", 15) == 0) {
            *rv = NULL; /* not a string: none */
            if (s->p < s->end && *s->p == '"') {
                const char *vb, *ve;
                if (!scan_string(s, &vb, &ve, rv_esc))
                    return false;
                *rv = vb;
                *rvlen = (size_t)(ve - vb);
            } else if (!scan_value(s, depth + 1)) {
                return false;
            }
        } else if (!scan_value(s, depth + 1)) {
            return false;
        }
        scan_ws(s);
        if (s->p >= s->end)
            return false;
        if (*s->p == '}') {
            s->p++;
            return true;
        }
        if (*s->p != ',')
            return false;
        s->p++;
    }
}

/* Any value, skipped (checked for its shape: strings closed and escaped
 * right, brackets matched, literals and numbers made of their characters). */
static bool scan_value(struct scan *s, int depth)
{
    if (depth > 512 || s->p >= s->end)
        return false;
    char ch = *s->p;
    if (ch == '"') {
        const char *b, *e;
        bool esc;
        return scan_string(s, &b, &e, &esc);
    }
    if (ch == '{') {
        const char *rv = NULL;
        size_t n;
        bool esc;
        return scan_object(s, depth, false, &rv, &n, &esc);
    }
    if (ch == '[') {
        s->p++;
        scan_ws(s);
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            return true;
        }
        for (;;) {
            scan_ws(s);
            if (!scan_value(s, depth + 1))
                return false;
            scan_ws(s);
            if (s->p >= s->end)
                return false;
            if (*s->p == ']') {
                s->p++;
                return true;
            }
            if (*s->p != ',')
                return false;
            s->p++;
        }
    }
    static const char *const lit[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(lit[i]);
        if ((size_t)(s->end - s->p) >= n && memcmp(s->p, lit[i], n) == 0) {
            s->p += n;
            return true;
        }
    }
    const char *b = s->p;
    while (s->p < s->end && *s->p && strchr("0123456789+-.eE", *s->p))
        s->p++;
    return s->p > b && (*b == '-' || (*b >= '0' && *b <= '9'));
}

int gp_kube_scan_rv(const char *text, size_t len, char *rv, size_t n)
{
    struct scan s = {text, text + len};
    scan_ws(&s);
    if (s.p >= s.end || *s.p != '{')
        return -1;
    const char *v = NULL;
    size_t vl = 0;
    bool esc = false;
    if (!scan_object(&s, 1, false, &v, &vl, &esc))
        return -1;
    scan_ws(&s);
    if (s.p != s.end)
        return -1;
    if (!v)
        return 0;
    if (esc || vl + 1 > n)
        return -1; /* escaped or too long: the caller parses the whole */
    memcpy(rv, v, vl);
    rv[vl] = '\0';
    return 1;
}
