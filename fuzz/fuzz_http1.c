/* fuzz_http1.c - libFuzzer target for the HTTP/1.1 answer reader
 * (kube/http1_parse.c). The input's first byte seeds how the rest is cut
 * into pieces, its second says whether the request was a HEAD (bit 0) and
 * the body's cap (the other bits: 8 bytes a step, 0 none); the rest is
 * what a server sent, read as answers one after another (pipelined: each
 * DONE's leftover begins the next) until one is not whole. It is read
 * three times: all at once, in pieces of the seeded sizes, and a byte at a
 * time (short inputs), every call given an exact-size copy (ASan sees a
 * read past it). Whatever the cut: the same verdicts, statuses, kept
 * flags and lengths, the same header lines and, for a whole answer, the
 * same body; a connection the server closes is never kept; a verdict
 * other than MORE is final; the rest left for the
 * next call is bounded; a body never passes its cap. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/http1_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXANS 64

struct cap {
    char *b;
    size_t n, max;
};

static size_t take(struct cap *c, const char *d, size_t n)
{
    if (n > c->max - c->n) /* never more than was read */
        __builtin_trap();
    memcpy(c->b + c->n, d, n);
    c->n += n;
    return n;
}

static size_t on_header(char *d, size_t size, size_t nmemb, void *ud)
{
    if (size != 1 || nmemb == 0 || d[nmemb - 1] != '\n')
        __builtin_trap();
    return take(ud, d, nmemb);
}

static size_t on_body(char *d, size_t size, size_t nmemb, void *ud)
{
    if (size != 1 || nmemb == 0)
        __builtin_trap();
    return take(ud, d, nmemb);
}

/* What reading the bytes gave, answer by answer. */
struct run {
    size_t k; /* answers: the last one's verdict is not DONE (or MAXANS) */
    int verdict[MAXANS];
    long status[MAXANS];
    bool keep[MAXANS];
    size_t end[MAXANS];      /* where a DONE answer ended in the input */
    size_t body_end[MAXANS]; /* the body's bytes delivered up to this answer */
    struct cap hdr, body;
};

static uint32_t next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 16;
}

/* Reads in[0..n) in pieces: mode 0 at once, 1 seeded sizes, 2 a byte at a
 * time. */
static void read_all(const char *in, size_t n, int mode, uint32_t seed, bool head_only,
                     size_t max_body, struct run *r)
{
    struct gp_http1_parse p;
    size_t at = 0;   /* the next byte not given yet */
    size_t from = 0; /* the first byte not taken yet */
    r->k = 0;
    r->hdr.n = r->body.n = 0;
    gp_http1_parse_init(&p, head_only, max_body);
    p.on_header = on_header;
    p.header_ud = &r->hdr;
    p.on_body = on_body;
    p.body_ud = &r->body;
    while (r->k < MAXANS) {
        size_t piece = mode == 0 ? n - at : mode == 2 ? 1 : next(&seed) % 97 + 1;
        if (piece > n - at)
            piece = n - at;
        at += piece;
        enum gp_http1_verdict v = GP_HTTP1_MORE;
        size_t len = at - from, used = 0;
        if (len > 0) {
            char *copy = malloc(len);
            if (!copy)
                abort();
            memcpy(copy, in + from, len);
            v = gp_http1_parse_feed(&p, copy, len, &used);
            free(copy);
            if (used > len || (v == GP_HTTP1_MORE && len - used > GP_HTTP1_HEAD_MAX + 1))
                __builtin_trap();
            from += used;
        }
        if (v == GP_HTTP1_MORE && at == n) /* nothing more comes: the end */
            v = gp_http1_parse_end(&p);
        if (v == GP_HTTP1_MORE)
            continue;
        /* final: asked again, the same and nothing taken */
        char z = 'x';
        size_t u2 = 1;
        if (gp_http1_parse_feed(&p, &z, 1, &u2) != v || u2 != 0 || gp_http1_parse_end(&p) != v)
            __builtin_trap();
        if (v != GP_HTTP1_DONE && (!p.why || !p.why[0] || strchr(p.why, '\n')))
            __builtin_trap();
        if (v == GP_HTTP1_DONE && (p.status < 200 || p.status > 599 || (p.close && p.keep)))
            __builtin_trap();
        if (max_body && p.body_bytes > max_body)
            __builtin_trap();
        r->verdict[r->k] = v;
        r->status[r->k] = p.status;
        r->keep[r->k] = v == GP_HTTP1_DONE && p.keep;
        r->end[r->k] = from;
        r->body_end[r->k] = r->body.n;
        r->k++;
        if (v != GP_HTTP1_DONE)
            break;
        /* the next answer begins with what was not this one's */
        gp_http1_parse_init(&p, head_only, max_body);
        p.on_header = on_header;
        p.header_ud = &r->hdr;
        p.on_body = on_body;
        p.body_ud = &r->body;
        at = from;
    }
}

static void same(const struct run *a, const struct run *b)
{
    if (a->k != b->k || a->hdr.n != b->hdr.n || memcmp(a->hdr.b, b->hdr.b, a->hdr.n) != 0)
        __builtin_trap();
    for (size_t i = 0; i < a->k; i++) {
        if (a->verdict[i] != b->verdict[i] || a->status[i] != b->status[i] ||
            a->keep[i] != b->keep[i])
            __builtin_trap();
        if (a->verdict[i] == GP_HTTP1_DONE &&
            (a->end[i] != b->end[i] || a->body_end[i] != b->body_end[i]))
            __builtin_trap();
    }
    /* the bodies of whole answers the same; the one cut short a prefix */
    size_t whole = a->k > 0 && a->verdict[a->k - 1] != GP_HTTP1_DONE
                       ? (a->k > 1 ? a->body_end[a->k - 2] : 0)
                       : a->body.n;
    size_t common = a->body.n < b->body.n ? a->body.n : b->body.n;
    if (common < whole || memcmp(a->body.b, b->body.b, common) != 0)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint32_t seed = data[0];
    bool head_only = data[1] & 1;
    size_t max_body = (size_t)(data[1] >> 1) * 8;
    const char *in = (const char *)data + 2;
    size_t n = size - 2;
    struct run r[3];
    for (int i = 0; i < 3; i++) {
        r[i].hdr = (struct cap){malloc(n + 1), 0, n};
        r[i].body = (struct cap){malloc(n + 1), 0, n};
        if (!r[i].hdr.b || !r[i].body.b)
            abort();
    }
    read_all(in, n, 0, seed, head_only, max_body, &r[0]);
    read_all(in, n, 1, seed, head_only, max_body, &r[1]);
    same(&r[0], &r[1]);
    if (n <= 1024) {
        read_all(in, n, 2, seed, head_only, max_body, &r[2]);
        same(&r[0], &r[2]);
    }
    for (int i = 0; i < 3; i++) {
        free(r[i].hdr.b);
        free(r[i].body.b);
    }
    return 0;
}
