/* jsonout.c - compact JSON text of a jansson value, byte for byte what
 * json_dumps(v, JSON_COMPACT) writes (jansson 2.14's dump.c: members in
 * insertion order, no spaces, '"' '\\' and control characters escaped as
 * \" \\ \b \f \n \r \t or \u00XX, '/' and non-ASCII as they are, integers
 * in decimal, reals left to jansson itself), without what json_dumps pays
 * on every call: its loop check (a table of every container's address as
 * text) and a printf per escape and integer. The double's trees have no
 * loops (a stored version is built once and never changed). A version's
 * text (text_make) records where its containers lie, and the next version
 * copies from it what the two share; texts written by hand (jt_*: Status
 * answers, list pages) use the same escapes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"

static bool grow(struct jtext *o, size_t n)
{
    size_t cap = o->cap ? o->cap : 1024;
    while (cap < o->len + n + 1)
        cap *= 2;
    char *b = realloc(o->b, cap);
    if (!b) {
        o->failed = true;
        return false;
    }
    o->b = b;
    o->cap = cap;
    return true;
}

/* Room for n more bytes and the terminator. */
static inline bool room(struct jtext *o, size_t n)
{
    return o->len + n + 1 <= o->cap || grow(o, n);
}

static inline void put(struct jtext *o, const char *s, size_t n)
{
    if (!room(o, n))
        return;
    memcpy(o->b + o->len, s, n);
    o->len += n;
}

static inline void put1(struct jtext *o, char c)
{
    if (room(o, 1))
        o->b[o->len++] = c;
}

/* The bytes that are escaped: control characters, '"' and '\\' (a table:
 * one load a byte of a short string's scan, where three compares were). */
#define ESC16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
static const unsigned char ESCAPED[256] = {ESC16, ESC16, ['"'] = 1, ['\\'] = 1};
#undef ESC16

static inline bool escaped(unsigned char c)
{
    return ESCAPED[c];
}

/* s[0, n) escaped, without the quotes. */
static void put_chars(struct jtext *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!escaped(c))
            continue;
        put(o, s + from, i - from);
        from = i + 1;
        char esc[6] = {'\\', 0};
        size_t en = 2;
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default: /* \u00XX, upper-case hex as jansson's "\\u%04X" */
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            en = 6;
        }
        put(o, esc, en);
    }
    put(o, s + from, n - from);
}

/* How many bytes at s's start need no escape: eight at a time (whether a
 * word holds a byte below 0x20, a '"' or a '\\': the bit tricks of
 * "Bit Twiddling Hacks", hasless and haszero), then one at a time. */
static size_t plain_prefix(const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        if (((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) |
            ((b - ones) & ~b & highs))
            break;
    }
    if (n >= 8 && n - i < 8) { /* the last up to seven: the string's last eight at once */
        uint64_t w;
        memcpy(&w, s + n - 8, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        if (!(((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) |
              ((b - ones) & ~b & highs)))
            return n;
    }
    while (i < n && !escaped((unsigned char)s[i]))
        i++;
    return i;
}

static void put_string(struct jtext *o, const char *s, size_t n)
{
    /* the common case, nothing to escape: one copy between the quotes */
    size_t i = plain_prefix(s, n);
    if (i == n) {
        if (!room(o, n + 2))
            return;
        char *p = o->b + o->len;
        p[0] = '"';
        memcpy(p + 1, s, n);
        p[n + 1] = '"';
        o->len += n + 2;
        return;
    }
    put1(o, '"');
    put_chars(o, s, n);
    put1(o, '"');
}

static void put_integer(struct jtext *o, json_int_t v)
{
    char b[24], *p = b + sizeof b;
    /* in unsigned arithmetic, so that the most negative value is right too */
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    put(o, p, (size_t)(b + sizeof b - p));
}

/* Where a version's containers are being recorded (text_make), and the
 * text a value may copy its containers' bytes from. */
struct rec {
    struct span *s;
    size_t n;
    bool on; /* record at all */
};

static void put_value(struct jtext *o, json_t *v, int depth, const struct text *prev,
                      struct rec *rec);

/* v (a container at depth 1 to SPAN_DEPTH) copied from prev's text when
 * prev's version has it, with the spans of what is inside it; false when
 * it does not. */
static bool put_shared(struct jtext *o, json_t *v, const struct text *prev, struct rec *rec)
{
    for (size_t i = 0; prev && i < prev->nspans; i++) {
        const struct span *sp = &prev->spans[i];
        if (sp->v != v)
            continue;
        size_t at = o->len;
        put(o, prev->b + sp->off, sp->len);
        /* it and what is inside it (the spans after it that start inside
         * it: they are recorded in preorder) */
        for (size_t j = i; rec->on && j < prev->nspans && prev->spans[j].off < sp->off + sp->len;
             j++) {
            if (rec->n == SPAN_MAX)
                break;
            struct span *ns = &rec->s[rec->n++];
            *ns = prev->spans[j];
            ns->off = (uint32_t)(at + prev->spans[j].off - sp->off);
        }
        return true;
    }
    return false;
}

/* v's members but those in skip; whether any was written. */
static bool put_members(struct jtext *o, json_t *v, int depth, const struct text *prev,
                        struct rec *rec, const char *const *skip)
{
    bool first = true;
    /* json_object_foreach's order, with the iterator's own key length (a
     * key holds no NUL: jansson refuses one in a key it reads) */
    for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
        const char *k = json_object_iter_key(it);
        bool skipped = false;
        for (size_t i = 0; skip && skip[i] && !skipped; i++)
            skipped = strcmp(skip[i], k) == 0;
        if (skipped)
            continue;
        if (!first)
            put1(o, ',');
        first = false;
        put_string(o, k, json_object_iter_key_len(it));
        put1(o, ':');
        put_value(o, json_object_iter_value(it), depth + 1, prev, rec);
    }
    return !first;
}

static void put_value(struct jtext *o, json_t *v, int depth, const struct text *prev,
                      struct rec *rec)
{
    bool container = json_is_object(v) || json_is_array(v);
    size_t slot = SPAN_MAX, at = o->len;
    if (container && depth >= 1 && depth <= SPAN_DEPTH) {
        if (put_shared(o, v, prev, rec))
            return;
        if (rec->on && rec->n < SPAN_MAX) { /* its place now, its length once written */
            slot = rec->n++;
            rec->s[slot].v = v;
        }
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        put1(o, '{');
        put_members(o, v, depth, prev, rec, NULL);
        put1(o, '}');
        break;
    case JSON_ARRAY: {
        put1(o, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                put1(o, ',');
            put_value(o, json_array_get(v, i), depth + 1, prev, rec);
        }
        put1(o, ']');
        break;
    }
    case JSON_STRING:
        put_string(o, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        put_integer(o, json_integer_value(v));
        break;
    case JSON_REAL: { /* jansson's own text for a real (its %.17g and clean-ups) */
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!t) {
            o->failed = true;
            return;
        }
        put(o, t, strlen(t));
        json_free_t jfree; /* jansson's allocator's (main.c installs slabs: src/kube/jalloc.h) */
        json_get_alloc_funcs(NULL, &jfree);
        jfree(t);
        break;
    }
    case JSON_TRUE:
        put(o, "true", 4);
        break;
    case JSON_FALSE:
        put(o, "false", 5);
        break;
    case JSON_NULL:
        put(o, "null", 4);
        break;
    }
    if (slot < SPAN_MAX) {
        rec->s[slot].off = (uint32_t)at;
        rec->s[slot].len = (uint32_t)(o->len - at);
    }
}

void jt_value(struct jtext *t, json_t *v, const struct text *prev)
{
    struct rec none = {NULL, 0, false};
    put_value(t, v, 0, prev, &none);
}

bool jt_members(struct jtext *t, json_t *obj, const struct text *prev, const char *const *skip)
{
    struct rec none = {NULL, 0, false};
    put1(t, '{');
    return put_members(t, obj, 0, prev, &none, skip);
}

struct text *text_make(json_t *v, const struct text *prev)
{
    struct text *t = calloc(1, sizeof *t);
    struct span spans[SPAN_MAX];
    struct rec rec = {spans, 0, true};
    struct jtext o = {0};
    if (!t)
        return NULL;
    if (prev) { /* about as long as the version before: no growing on the way */
        o.cap = prev->len + 512;
        o.b = malloc(o.cap);
        if (!o.b)
            o.cap = 0;
    }
    put_value(&o, v, 0, prev, &rec);
    t->b = jt_end(&o, &t->len);
    if (rec.n)
        t->spans = malloc(rec.n * sizeof *t->spans);
    if (!t->b || t->len > UINT32_MAX || (rec.n && !t->spans)) {
        free(t->b);
        free(t->spans);
        free(t);
        return NULL;
    }
    if (rec.n)
        memcpy(t->spans, spans, rec.n * sizeof *spans);
    t->nspans = rec.n;
    t->root = json_incref(v);
    t->refs = 1;
    return t;
}

struct text *text_ref(struct text *t)
{
    if (t)
        t->refs++;
    return t;
}

void text_unref(struct text *t)
{
    if (!t || --t->refs > 0)
        return;
    json_decref(t->root);
    free(t->b);
    free(t->spans);
    free(t);
}

void jt_raw(struct jtext *o, const char *s, size_t n)
{
    put(o, s, n);
}

/* The length of the valid UTF-8 sequence at s[0, n) (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return len;
}

void jt_string(struct jtext *o, const char *s)
{
    /* valid UTF-8 as json_text writes it; a byte that starts no valid
     * sequence as U+FFFD, as Go's encoding/json writes it (jansson would
     * refuse the whole string) */
    size_t n = strlen(s), from = 0;
    const unsigned char *u = (const unsigned char *)s;
    put(o, "\"", 1);
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t len = utf8_len(u + i, n - i);
        if (len) {
            i += len;
            continue;
        }
        put_chars(o, s + from, i - from);
        put(o, "\xEF\xBF\xBD", 3);
        from = ++i;
    }
    put_chars(o, s + from, n - from);
    put(o, "\"", 1);
}

void jt_int(struct jtext *o, long long v)
{
    put_integer(o, (json_int_t)v);
}

char *jt_end(struct jtext *o, size_t *len)
{
    if (o->failed || !room(o, 0)) {
        free(o->b);
        o->b = NULL;
        return NULL;
    }
    o->b[o->len] = '\0';
    if (len)
        *len = o->len;
    return o->b;
}

char *json_text(json_t *v, size_t *len)
{
    struct jtext o = {0};
    if (!v)
        return NULL;
    jt_value(&o, v, NULL);
    return jt_end(&o, len);
}
