/* jsonout.c - compact JSON text of a jansson value, byte for byte what
 * json_dumps(v, JSON_COMPACT) writes (jansson 2.14's dump.c: members in
 * insertion order, no spaces, '"' '\\' and control characters escaped as
 * \" \\ \b \f \n \r \t or \u00XX, '/' and non-ASCII as they are, integers
 * in decimal, reals left to jansson itself), without what json_dumps pays
 * on every call: its loop check (a table of every container's address as
 * text) and a printf per escape and integer. The double's trees have no
 * loops (a stored version is built once and never changed). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"

struct out {
    char *b;
    size_t len, cap;
    bool failed;
};

static bool room(struct out *o, size_t n)
{
    if (o->len + n + 1 <= o->cap)
        return true;
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

static void put(struct out *o, const char *s, size_t n)
{
    if (!room(o, n))
        return;
    memcpy(o->b + o->len, s, n);
    o->len += n;
}

static void put_string(struct out *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    put(o, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
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
    put(o, "\"", 1);
}

static void put_integer(struct out *o, json_int_t v)
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

static void put_value(struct out *o, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        put(o, "{", 1);
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach(v, k, x)
        {
            if (!first)
                put(o, ",", 1);
            first = false;
            put_string(o, k, strlen(k));
            put(o, ":", 1);
            put_value(o, x);
        }
        put(o, "}", 1);
        break;
    }
    case JSON_ARRAY: {
        put(o, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                put(o, ",", 1);
            put_value(o, json_array_get(v, i));
        }
        put(o, "]", 1);
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
        free(t);
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
}

char *json_text(json_t *v, size_t *len)
{
    struct out o = {0};
    if (!v)
        return NULL;
    put_value(&o, v);
    if (o.failed || !room(&o, 0)) {
        free(o.b);
        return NULL;
    }
    o.b[o.len] = '\0';
    if (len)
        *len = o.len;
    return o.b;
}
