/* test_kube_http1.c - the client's own HTTP/1.1 exchange: first the
 * answer reader alone (kube/http1_parse.c) on bytes cut at every place
 * (each cut, and a byte at a time, must read as the whole does): chunked
 * answers with extensions and trailers, bare LF line ends, interim 1xx
 * answers and an unasked 101, the body's cap (by Content-Length, by
 * chunks, to the end), bad status lines, duplicate, listed, conflicting
 * and oversized Content-Lengths, transfer codings, folded and nameless
 * header lines, heads and trailers over their cap, Connection: close and
 * HTTP/1.0, answers one after another (the bytes after a whole one left);
 * then the exchange (kube/http1.c) against a scripted server on a loopback port (a thread here; the
 * API double cannot misbehave at this level): a kept connection reused, chunked answers
 * (extensions, a trailer), an interim 100 skipped, Connection: close honoured; and the failures the
 * exchange brings: a kept connection the server closed while idle (a new one, the request sent
 * once), a connection dropped with the request sent and no byte back (on
 * a new connection: no answer, a POST not sent again, a GET retried; on a
 * kept one: sent once more on a new one, as libcurl does), an answer cut
 * within its body, a body over the cap (plain and chunked), no answer
 * before the timeout, and garbage for an answer. The same requests through
 * libcurl's own HTTP (opts.curl_http) answer the same. */
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/http1_parse.h"

/* --- the answer reader alone ------------------------------------------- */

/* What reading an answer gave. */
struct got {
    enum gp_http1_verdict v;
    long status;
    bool keep;
    size_t end; /* the input's bytes the answer took (DONE) */
    char why[128];
    char hdr[8192], body[8192];
    size_t hn, bn;
    size_t refuse_at; /* on_body refuses once the body would pass this (0: never) */
};

static size_t got_hdr(char *d, size_t size, size_t nmemb, void *ud)
{
    struct got *g = ud;
    size_t n = size * nmemb;
    if (n < sizeof g->hdr - g->hn) {
        memcpy(g->hdr + g->hn, d, n);
        g->hn += n;
    }
    return n;
}

static size_t got_body(char *d, size_t size, size_t nmemb, void *ud)
{
    struct got *g = ud;
    size_t n = size * nmemb;
    if (g->refuse_at && g->bn + n > g->refuse_at)
        return 0;
    if (n < sizeof g->body - g->bn) {
        memcpy(g->body + g->bn, d, n);
        g->bn += n;
    }
    return n;
}

/* Reads in[0..n) cut at cuts[0..k) (ascending), each call given an exact
 * copy of the bytes not taken yet and the next piece; the end after. */
static void read_cut(const char *in, size_t n, const size_t *cuts, size_t k, bool head_only,
                     size_t cap, size_t refuse_at, struct got *g)
{
    memset(g, 0, sizeof *g);
    g->refuse_at = refuse_at;
    struct gp_http1_parse p;
    gp_http1_parse_init(&p, head_only, cap);
    p.on_header = got_hdr;
    p.header_ud = g;
    p.on_body = got_body;
    p.body_ud = g;
    size_t from = 0;
    enum gp_http1_verdict v = GP_HTTP1_MORE;
    for (size_t i = 0; i <= k && v == GP_HTTP1_MORE; i++) {
        size_t to = i < k ? cuts[i] : n;
        char *copy = malloc(to - from + 1);
        assert_non_null(copy);
        memcpy(copy, in + from, to - from);
        size_t used = 0;
        v = gp_http1_parse_feed(&p, copy, to - from, &used);
        free(copy);
        assert_true(used <= to - from);
        from += used;
    }
    if (v == GP_HTTP1_MORE)
        v = gp_http1_parse_end(&p);
    g->v = v;
    g->status = p.status;
    g->keep = v == GP_HTTP1_DONE && p.keep;
    g->end = v == GP_HTTP1_DONE ? from : 0;
    snprintf(g->why, sizeof g->why, "%s", p.why ? p.why : "");
}

static void same_got(const struct got *a, const struct got *b, size_t cut)
{
    if (a->v != b->v || a->status != b->status || a->keep != b->keep || a->end != b->end ||
        a->hn != b->hn || memcmp(a->hdr, b->hdr, a->hn) != 0 ||
        (a->v == GP_HTTP1_DONE && (a->bn != b->bn || memcmp(a->body, b->body, a->bn) != 0)))
        fail_msg("cut at %zu: verdict %d/%d status %ld/%ld keep %d/%d end %zu/%zu body %zu/%zu "
                 "(%s/%s)",
                 cut, a->v, b->v, a->status, b->status, a->keep, b->keep, a->end, b->end, a->bn,
                 b->bn, a->why, b->why);
}

/* Reads s whole, then cut at every byte, then a byte at a time: the same
 * each time; the whole reading in *g. */
static void read_every(const char *s, size_t n, bool head_only, size_t cap, struct got *g)
{
    struct got *o = malloc(sizeof *o);
    size_t *cuts = malloc((n + 1) * sizeof *cuts);
    assert_true(o && cuts);
    read_cut(s, n, NULL, 0, head_only, cap, 0, g);
    for (size_t i = 1; i < n; i++) {
        read_cut(s, n, &i, 1, head_only, cap, 0, o);
        same_got(g, o, i);
        cuts[i - 1] = i;
    }
    read_cut(s, n, cuts, n > 1 ? n - 1 : 0, head_only, cap, 0, o);
    same_got(g, o, 0);
    free(o);
    free(cuts);
}

static struct got G;

static bool mem_has(const char *b, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(b + i, what, w) == 0)
            return true;
    return false;
}

static enum gp_http1_verdict verdict_of(const char *s, bool head_only, size_t cap)
{
    read_every(s, strlen(s), head_only, cap, &G);
    return G.v;
}

static void test_parse_framing(void **state)
{
    (void)state;
    const char *a = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
                    "\r\n{\"ok\":true}";
    assert_int_equal(verdict_of(a, false, 0), GP_HTTP1_DONE);
    assert_int_equal(G.status, 200);
    assert_true(G.keep);
    assert_int_equal(G.end, strlen(a));
    assert_int_equal(G.bn, 11);
    assert_memory_equal(G.body, "{\"ok\":true}", 11);
    /* every head line handed on, its line end with it, the blank one too */
    assert_int_equal(G.hn, strlen(a) - 11);
    assert_memory_equal(G.hdr, a, G.hn);
    /* chunked: extensions (with BWS and a quoted value) dropped, the
     * trailer read past and not handed on as a head line */
    const char *c = "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "4;ext=1\r\n{\"a\"\r\nB ; name=\"v;x\"\r\n:\"chunked\"}\r\n"
                    "0;last\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n";
    assert_int_equal(verdict_of(c, false, 0), GP_HTTP1_DONE);
    assert_int_equal(G.status, 201);
    assert_true(G.keep);
    assert_int_equal(G.end, strlen(c));
    assert_int_equal(G.bn, 15);
    assert_memory_equal(G.body, "{\"a\":\"chunked\"}", 15);
    assert_false(mem_has(G.hdr, G.hn, "X-Trailer"));
    /* bare LF line ends, in the head and the chunks (RFC 9112 §2.2) */
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n5\nhello\n0\n\n", false, 0),
        GP_HTTP1_DONE);
    assert_int_equal(G.bn, 5);
    assert_memory_equal(G.body, "hello", 5);
    /* the line end after a chunk's data must be one */
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5\r\nhelloX\r\n0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_BAD);
    assert_string_equal(G.why, "a badly framed answer body");
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5\r\nhello\rX0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_BAD);
    /* chunk sizes: hex digits first, nothing but BWS and ';' after them */
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "a\r\n0123456789\r\n0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_DONE);
    assert_int_equal(G.bn, 10);
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5x\r\nhello\r\n0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_BAD);
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                ";5\r\nhello\r\n0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_BAD);
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "10000000000000000\r\n",
                                false, 0),
                     GP_HTTP1_BAD);
    /* a chunked answer cut within: CUT, not DONE */
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", false, 0),
        GP_HTTP1_CUT);
    assert_string_equal(G.why, "the connection ended within an answer");
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", false, 0),
        GP_HTTP1_CUT);
    assert_int_equal(verdict_of("", false, 0), GP_HTTP1_NOTHING);
    assert_string_equal(G.why, "empty reply from server");
    assert_int_equal(verdict_of("H", false, 0), GP_HTTP1_CUT);
}

static void test_parse_status_line(void **state)
{
    (void)state;
    const char *bad[] = {
        "HTTP/1.1 20 OK\r\n\r\n",  "HTTP/2 200 OK\r\n\r\n",    "HTTP/1.1 200OK\r\n\r\n",
        "ICY 200 OK\r\n\r\n",      "HTTP/1.1 600 Odd\r\n\r\n", "HTTP/1.2 200 OK\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n", "HTTP/1.1  200 OK\r\n\r\n", "\r\nHTTP/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\n\r\n", "HELLO THERE\r\n\r\n",      "HTTP/1.1 099 Low\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (verdict_of(bad[i], false, 0) != GP_HTTP1_BAD)
            fail_msg("%zu: %s read as %d", i, bad[i], G.v);
        assert_string_equal(G.why, "not an HTTP/1.1 answer");
        assert_int_equal(G.hn, 0); /* a bad status line is not handed on */
        assert_int_equal(G.status, 0);
    }
    /* no reason phrase; HTTP/1.0 (kept only when it says keep-alive) */
    assert_int_equal(verdict_of("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false, 0),
                     GP_HTTP1_DONE);
    assert_true(G.keep);
    assert_int_equal(verdict_of("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false, 0),
                     GP_HTTP1_DONE);
    assert_false(G.keep);
    assert_int_equal(
        verdict_of("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", false,
                   0),
        GP_HTTP1_DONE);
    assert_true(G.keep);
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nConnection: upgrade, CLOSE\r\n"
                                "Content-Length: 0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_DONE);
    assert_false(G.keep);
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n", false, 0),
        GP_HTTP1_DONE);
    assert_true(G.keep); /* a token, not a prefix */
}

static void test_parse_interim(void **state)
{
    (void)state;
    const char *a = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    assert_int_equal(verdict_of(a, false, 0), GP_HTTP1_DONE);
    assert_int_equal(G.status, 200);
    assert_int_equal(G.bn, 2);
    assert_true(mem_has(G.hdr, G.hn, "HTTP/1.1 103 Early Hints\r\n")); /* as libcurl */
    /* an interim answer's Content-Length is not the final one's */
    assert_int_equal(verdict_of("HTTP/1.1 100 Continue\r\nContent-Length: 7\r\n\r\n"
                                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
                                false, 0),
                     GP_HTTP1_DONE);
    assert_int_equal(G.bn, 2);
    /* only an interim answer, then the end: cut */
    assert_int_equal(verdict_of("HTTP/1.1 100 Continue\r\n\r\n", false, 0), GP_HTTP1_CUT);
    assert_int_equal(G.status, 0);
    assert_int_equal(
        verdict_of("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n", false, 0),
        GP_HTTP1_BAD);
    assert_int_equal(G.status, 101);
    assert_string_equal(G.why, "an unasked protocol switch");
}

static void test_parse_lengths(void **state)
{
    (void)state;
    struct {
        const char *cl;
        bool ok;
    } cases[] = {
        {"Content-Length: 3\r\nContent-Length: 3", true},
        {"Content-Length: 3, 3", true},
        {"Content-Length: 3 ,3,", true},
        {"Content-Length: 3\r\nContent-Length: 4", false},
        {"Content-Length: 3, 4", false},
        {"Content-Length: 4\r\ncontent-length: 3, 3", false},
        {"Content-Length: -3", false},
        {"Content-Length: +3", false},
        {"Content-Length: 0x3", false},
        {"Content-Length: 3 3", false},
        {"Content-Length:", false},
        {"Content-Length: ,", false},
        {"Content-Length: 99999999999999999999", false},
        {"Content-Length: 18446744073709551619", false},
        {"Content-Length: 4611686018427387904", false},
        {"Content-Length:\t3\t", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char a[256];
        snprintf(a, sizeof a, "HTTP/1.1 200 OK\r\n%s\r\n\r\nabc", cases[i].cl);
        enum gp_http1_verdict v = verdict_of(a, false, 0);
        if (v != (cases[i].ok ? GP_HTTP1_DONE : GP_HTTP1_BAD))
            fail_msg("%s: verdict %d (%s)", cases[i].cl, v, G.why);
        if (cases[i].ok)
            assert_int_equal(G.bn, 3);
        else
            assert_string_equal(G.why, "a bad or conflicting Content-Length in the answer");
    }
    /* a large one read as a number: over the cap at once, or waited for */
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387903\r\n\r\nab", false, 100),
        GP_HTTP1_OVER);
    assert_int_equal(G.bn, 0);
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387903\r\n\r\nab", false, 0),
        GP_HTTP1_CUT);
    /* Transfer-Encoding: chunked alone; with a Content-Length it frames
     * the body and the connection is not kept (RFC 9112 §6.3 item 3) */
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nContent-Length: 50\r\nTransfer-Encoding: "
                                "Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                                false, 0),
                     GP_HTTP1_DONE);
    assert_int_equal(G.bn, 2);
    assert_false(G.keep);
    const char *codings[] = {"gzip",
                             "gzip, chunked",
                             "chunked, gzip",
                             "chunked, chunked",
                             "",
                             "chunked\r\nTransfer-Encoding: chunked"};
    for (size_t i = 0; i < sizeof codings / sizeof codings[0]; i++) {
        char a[256];
        snprintf(a, sizeof a, "HTTP/1.1 200 OK\r\nTransfer-Encoding: %s\r\n\r\n0\r\n\r\n",
                 codings[i]);
        if (verdict_of(a, false, 0) != GP_HTTP1_BAD)
            fail_msg("Transfer-Encoding: %s read as %d", codings[i], G.v);
    }
    /* no framing: to the connection's end, not kept */
    assert_int_equal(verdict_of("HTTP/1.1 500 Oops\r\n\r\nto the end", false, 0), GP_HTTP1_DONE);
    assert_int_equal(G.bn, 10);
    assert_false(G.keep);
    /* no body, whatever the head says: 204, 304, a HEAD's answer */
    const char *n204 = "HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\nHTTP";
    assert_int_equal(verdict_of(n204, false, 0), GP_HTTP1_DONE);
    assert_int_equal(G.bn, 0);
    assert_int_equal(G.end, strlen(n204) - 4);
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", true, 0),
                     GP_HTTP1_DONE);
    assert_true(G.keep);
}

static void test_parse_caps(void **state)
{
    (void)state;
    const char *len = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    const char *chunks = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n";
    const char *to_end = "HTTP/1.1 200 OK\r\n\r\n0123456789";
    const char *all[] = {len, chunks, to_end};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(verdict_of(all[i], false, 10), GP_HTTP1_DONE); /* at the cap */
        assert_int_equal(G.bn, 10);
        assert_int_equal(verdict_of(all[i], false, 9), GP_HTTP1_OVER);
        assert_string_equal(G.why, "the answer is larger than the cap");
        assert_true(G.bn <= 9);
    }
    /* a chunk over the cap is refused at its size line, before its data */
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "fffffff\r\n0123",
                                false, 1000),
                     GP_HTTP1_OVER);
    assert_int_equal(G.bn, 0);
    /* the body callback refusing stops it */
    struct got g;
    read_cut(len, strlen(len), NULL, 0, false, 0, 5, &g);
    assert_int_equal(g.v, GP_HTTP1_REFUSED);
    assert_string_equal(g.why, "the answer's body was refused");
    /* a head over 64 KiB, whole or still coming; a trailer too */
    size_t big = GP_HTTP1_HEAD_MAX + 100;
    char *h = malloc(big + 64);
    assert_non_null(h);
    strcpy(h, "HTTP/1.1 200 OK\r\nX-Big: ");
    size_t at = strlen(h);
    memset(h + at, 'x', big - at);
    strcpy(h + big, "\r\nContent-Length: 0\r\n\r\n");
    struct got *o = malloc(sizeof *o);
    assert_non_null(o);
    read_cut(h, strlen(h), NULL, 0, false, 0, 0, o);
    assert_int_equal(o->v, GP_HTTP1_BAD);
    assert_string_equal(o->why, "an answer's head too long");
    read_cut(h, big, NULL, 0, false, 0, 0, o); /* no line end yet */
    assert_int_equal(o->v, GP_HTTP1_BAD);
    assert_string_equal(o->why, "an answer's head too long");
    h[GP_HTTP1_HEAD_MAX - 30] = '\0'; /* under the cap: fine */
    strcat(h, "\r\nContent-Length: 0\r\n\r\n");
    read_cut(h, strlen(h), NULL, 0, false, 0, 0, o);
    assert_int_equal(o->v, GP_HTTP1_DONE);
    strcpy(h, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
    at = strlen(h);
    for (; at + 10 < big; at += 10)
        memcpy(h + at, "X-T: abc\r\n", 10);
    strcpy(h + at, "\r\n");
    read_cut(h, strlen(h), NULL, 0, false, 0, 0, o);
    assert_int_equal(o->v, GP_HTTP1_BAD);
    assert_string_equal(o->why, "an answer's trailer too long");
    free(o);
    free(h);
}

static void test_parse_fields(void **state)
{
    (void)state;
    /* a folded line (obs-fold) is passed over, unless it continues a
     * framing field: its value would be another */
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 1\r\n\r\nz", false, 0),
        GP_HTTP1_DONE);
    assert_int_equal(G.bn, 1);
    assert_int_equal(verdict_of("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 0\r\n\r\nz", false, 0),
                     GP_HTTP1_BAD);
    assert_int_equal(
        verdict_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\t,gzip\r\n\r\n", false, 0),
        GP_HTTP1_BAD);
    const char *bad[] = {"Content-Length : 1", "NoColon", ": 1", "X\001Y: 1", "X Y: 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char a[256];
        snprintf(a, sizeof a, "HTTP/1.1 200 OK\r\n%s\r\nContent-Length: 1\r\n\r\nz", bad[i]);
        if (verdict_of(a, false, 0) != GP_HTTP1_BAD)
            fail_msg("%s read as %d", bad[i], G.v);
    }
}

/* Answers one after another on a connection: each leaves the bytes after
 * it for the next (pipelined requests). */
static void test_parse_pipelined(void **state)
{
    (void)state;
    const char *s =
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
        "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        "HTTP/1.1 201 Created\nContent-Length: 1\n\nz";
    long want[] = {200, 409, 201};
    size_t at = 0, n = strlen(s);
    for (int i = 0; i < 3; i++) {
        read_every(s + at, n - at, false, 0, &G);
        assert_int_equal(G.v, GP_HTTP1_DONE);
        assert_int_equal(G.status, want[i]);
        assert_true(G.keep);
        at += G.end;
    }
    assert_int_equal(at, n);
}

/* What the server does with a request: the answer's bytes written (or
 * none), then the connection kept or closed. */
enum act {
    A_OK,
    A_CHUNKED,
    A_CONTINUE,
    A_CLOSE_HDR,
    A_CLOSE_AFTER,
    A_DROP,
    A_CUT,
    A_BIG,
    A_BIG_CHUNKED,
    A_SILENT,
    A_GARBAGE
};

#define MAXSCRIPT 8

static struct {
    pthread_mutex_t mu;
    int lfd;
    unsigned port;
    enum act script[MAXSCRIPT]; /* the n-th request's act (then A_OK) */
    int requests, conns;
    char last[2048]; /* the last request's head and body */
    bool stop;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void put(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* Answers one whole request read from buf; false: close the connection. */
static bool answer(int fd, enum act a)
{
    char big[5200];
    switch (a) {
    case A_OK:
        put(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
                "{\"ok\":true}");
        return true;
    case A_CHUNKED:
        put(fd, "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                "4;ext=1\r\n{\"a\"\r\nB\r\n:\"chunked\"}\r\n0\r\nX-Trailer: t\r\n\r\n");
        return true;
    case A_CONTINUE:
        put(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        return true;
    case A_CLOSE_HDR:
        put(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}");
        return false;
    case A_CLOSE_AFTER:
        put(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        return false;
    case A_DROP:
        return false;
    case A_CUT:
        put(fd, "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"cut\":");
        return false;
    case A_BIG:
    case A_BIG_CHUNKED:
        memset(big, 'x', sizeof big);
        big[sizeof big - 1] = '\0';
        put(fd, a == A_BIG ? "HTTP/1.1 200 OK\r\nContent-Length: 5199\r\n\r\n"
                           : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n144F\r\n");
        put(fd, big);
        put(fd, a == A_BIG ? "" : "\r\n0\r\n\r\n");
        return true;
    case A_SILENT:
        return true;
    case A_GARBAGE:
        put(fd, "HELLO THERE\r\n\r\n");
        return false;
    }
    return false;
}

static const char *find(const char *buf, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(buf + i, what, w) == 0)
            return buf + i;
    return NULL;
}

/* A whole request in buf[0..n): its length, or 0 when more must come. */
static size_t request_len(const char *buf, size_t n)
{
    const char *end = find(buf, n, "\r\n\r\n");
    if (!end)
        return 0;
    size_t head = (size_t)(end - buf) + 4, body = 0;
    const char *cl = find(buf, head, "Content-Length: ");
    if (cl)
        body = (size_t)atol(cl + 16);
    return n >= head + body ? head + body : 0;
}

struct conn {
    int fd;
    char buf[4096];
    size_t n;
};

static void *server_main(void *arg)
{
    (void)arg;
    struct conn cs[8];
    size_t nc = 0;
    for (;;) {
        struct pollfd p[9] = {{S.lfd, POLLIN, 0}};
        for (size_t i = 0; i < nc; i++)
            p[i + 1] = (struct pollfd){cs[i].fd, POLLIN, 0};
        poll(p, nc + 1, 50);
        pthread_mutex_lock(&S.mu);
        bool stop = S.stop;
        pthread_mutex_unlock(&S.mu);
        if (stop)
            break;
        for (size_t i = nc; i-- > 0;) {
            if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            struct conn *c = &cs[i];
            ssize_t r = recv(c->fd, c->buf + c->n, sizeof c->buf - c->n - 1, 0);
            bool keep = r > 0;
            if (r > 0)
                c->n += (size_t)r;
            size_t len;
            while (keep && (len = request_len(c->buf, c->n)) > 0) {
                pthread_mutex_lock(&S.mu);
                int k = S.requests++;
                enum act a = k < MAXSCRIPT ? S.script[k] : A_OK;
                snprintf(S.last, sizeof S.last, "%.*s", (int)len, c->buf);
                pthread_mutex_unlock(&S.mu);
                keep = answer(c->fd, a);
                memmove(c->buf, c->buf + len, c->n - len);
                c->n -= len;
            }
            if (!keep) {
                close(c->fd);
                cs[i] = cs[--nc];
            }
        }
        if ((p[0].revents & POLLIN) && nc < 8) {
            int fd = accept(S.lfd, NULL, NULL);
            if (fd >= 0) {
                cs[nc++] = (struct conn){.fd = fd};
                pthread_mutex_lock(&S.mu);
                S.conns++;
                pthread_mutex_unlock(&S.mu);
            }
        }
    }
    for (size_t i = 0; i < nc; i++)
        close(cs[i].fd);
    return NULL;
}

static pthread_t server_th;

static int setup(void **state)
{
    (void)state;
    S.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (S.lfd < 0 || bind(S.lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(S.lfd, 8) != 0 ||
        getsockname(S.lfd, (struct sockaddr *)&a, &al) != 0)
        return -1;
    S.port = ntohs(a.sin_port);
    return pthread_create(&server_th, NULL, server_main, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    pthread_mutex_lock(&S.mu);
    S.stop = true;
    pthread_mutex_unlock(&S.mu);
    pthread_join(server_th, NULL);
    close(S.lfd);
    return 0;
}

static void script(const enum act *a, size_t n)
{
    pthread_mutex_lock(&S.mu);
    memset(S.script, 0, sizeof S.script);
    memcpy(S.script, a, n * sizeof *a);
    S.requests = S.conns = 0;
    pthread_mutex_unlock(&S.mu);
}

static int requests(void)
{
    pthread_mutex_lock(&S.mu);
    int n = S.requests;
    pthread_mutex_unlock(&S.mu);
    return n;
}

static struct gp_kube_client *client(bool curl_http, size_t cap, double timeout_s)
{
    char server[64];
    snprintf(server, sizeof server, "http://127.0.0.1:%u", S.port);
    struct gp_kube_config cfg = {.server = server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.backoff_base_s = 0.01;
    o.request_timeout_s = timeout_s;
    o.qps = 0;
    o.curl_http = curl_http;
    if (cap)
        o.max_response_bytes = cap;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    return c;
}

/* A request: its error, the status and body in *st and body. */
static enum gp_err req(struct gp_kube_client *c, const char *method, const char *body, long *st,
                       char *out, size_t outn, struct gp_diag *d)
{
    struct gp_kube_response r;
    enum gp_err err = gp_kube_request(c, method, "/api/v1/namespaces/default/pods/p", body,
                                      body ? "application/json" : NULL, &r, d);
    *st = err == GP_OK ? r.status : 0;
    if (out)
        snprintf(out, outn, "%s", err == GP_OK ? r.body : "");
    if (err == GP_OK)
        gp_kube_response_free(&r);
    return err;
}

static void test_framing(void **state)
{
    (void)state;
    for (int curl_http = 0; curl_http <= 1; curl_http++) {
        const enum act a[] = {A_OK, A_CHUNKED, A_CONTINUE, A_OK, A_CLOSE_HDR, A_OK};
        script(a, 6);
        struct gp_kube_client *c = client(curl_http, 0, 5);
        struct gp_diag d = {""};
        long st;
        char body[256];
        enum gp_err e0 = req(c, "GET", NULL, &st, body, sizeof body, &d);
        if (e0 != GP_OK)
            fail_msg("curl_http %d: %s", curl_http, d.msg);
        assert_int_equal(st, 200);
        assert_string_equal(body, "{\"ok\":true}");
        if (req(c, "POST", "{\"x\":1}", &st, body, sizeof body, &d) != GP_OK)
            fail_msg("curl_http %d: %s", curl_http, d.msg);
        assert_int_equal(st, 201);
        assert_string_equal(body, "{\"a\":\"chunked\"}");
        pthread_mutex_lock(&S.mu); /* the request as written */
        assert_non_null(strstr(S.last, "POST /api/v1/namespaces/default/pods/p HTTP/1.1\r\n"));
        assert_non_null(strstr(S.last, "\r\nContent-Type: application/json\r\n"));
        assert_non_null(strstr(S.last, "\r\nUser-Agent: gpuplane/"));
        assert_non_null(strstr(S.last, "\r\nContent-Length: 7\r\n\r\n{\"x\":1}"));
        assert_non_null(strstr(S.last, "\r\nHost: 127.0.0.1:"));
        pthread_mutex_unlock(&S.mu);
        assert_int_equal(req(c, "PATCH", "{}", &st, body, sizeof body, &d), GP_OK);
        assert_int_equal(st, 200);
        assert_string_equal(body, "{}");
        assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK);
        pthread_mutex_lock(&S.mu);
        assert_int_equal(S.conns, 1); /* four requests, one connection */
        pthread_mutex_unlock(&S.mu);
        if (!curl_http)
            assert_int_equal(gp_kube_client_connects(c), 1);
        assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK); /* Connection: close */
        assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK);
        pthread_mutex_lock(&S.mu);
        assert_int_equal(S.conns, 2);
        assert_int_equal(S.requests, 6);
        pthread_mutex_unlock(&S.mu);
        gp_kube_client_free(c);
    }
}

/* The server closes a kept connection after its answer (no Connection:
 * close said): the next request goes on a new one, sent once. */
static void test_idle_closed(void **state)
{
    (void)state;
    const enum act a[] = {A_CLOSE_AFTER, A_OK};
    script(a, 2);
    struct gp_kube_client *c = client(false, 0, 5);
    struct gp_diag d = {""};
    long st;
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK);
    struct timespec ts = {0, 20 * 1000000L}; /* its end seen before the next request */
    nanosleep(&ts, NULL);
    assert_int_equal(req(c, "POST", "{}", &st, NULL, 0, &d), GP_OK);
    assert_int_equal(st, 200);
    assert_int_equal(requests(), 2);
    assert_int_equal(gp_kube_client_connects(c), 2);
    gp_kube_client_free(c);
}

/* Dropped with the request sent, nothing back: on a new connection no
 * answer (a POST not sent again; a GET retried by the client); on a kept
 * one sent once more on a new connection (libcurl's rule: no byte back). */
static void test_dropped(void **state)
{
    (void)state;
    struct gp_diag d = {""};
    long st;
    const enum act a1[] = {A_DROP};
    script(a1, 1);
    struct gp_kube_client *c = client(false, 0, 5);
    assert_int_equal(req(c, "POST", "{}", &st, NULL, 0, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "empty reply from server"));
    assert_int_equal(requests(), 1);
    script(a1, 1);
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK);
    assert_int_equal(st, 200);
    assert_int_equal(requests(), 2);
    const enum act a2[] = {A_OK, A_DROP, A_OK};
    script(a2, 3);
    unsigned long before = gp_kube_client_connects(c);
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK);
    assert_int_equal(req(c, "POST", "{}", &st, NULL, 0, &d), GP_OK);
    assert_int_equal(st, 200);
    assert_int_equal(requests(), 3);
    assert_int_equal(gp_kube_client_connects(c), before + 1);
    gp_kube_client_free(c);
}

static void test_cut_and_cap(void **state)
{
    (void)state;
    struct gp_diag d = {""};
    long st;
    const enum act a[] = {A_CUT, A_BIG, A_BIG_CHUNKED, A_GARBAGE, A_OK};
    script(a, 5);
    struct gp_kube_client *c = client(false, 2000, 5);
    assert_int_equal(req(c, "POST", "{}", &st, NULL, 0, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "ended within an answer"));
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_ELIMIT);
    assert_non_null(strstr(d.msg, "larger than 2000 bytes"));
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_ELIMIT);
    assert_int_equal(req(c, "POST", "{}", &st, NULL, 0, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "not an HTTP/1.1 answer"));
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK); /* and on, anew */
    assert_int_equal(requests(), 5);
    gp_kube_client_free(c);
    const enum act b[] = {A_BIG, A_BIG_CHUNKED};
    script(b, 2);
    c = client(false, 0, 5); /* under the cap: all of it */
    char body[6000];
    assert_int_equal(req(c, "GET", NULL, &st, body, sizeof body, &d), GP_OK);
    assert_int_equal(strlen(body), 5199);
    assert_int_equal(req(c, "GET", NULL, &st, body, sizeof body, &d), GP_OK);
    assert_int_equal(strlen(body), 5199);
    gp_kube_client_free(c);
}

static void test_timeout(void **state)
{
    (void)state;
    const enum act a[] = {A_SILENT};
    script(a, 1);
    struct gp_kube_client *c = client(false, 0, 0.3);
    struct gp_diag d = {""};
    long st;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(req(c, "POST", "{}", &st, NULL, 0, &d), GP_EIO);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_non_null(strstr(d.msg, "timed out"));
    assert_true(s >= 0.25 && s < 3);
    assert_int_equal(req(c, "GET", NULL, &st, NULL, 0, &d), GP_OK); /* a new connection */
    assert_int_equal(gp_kube_client_connects(c), 2);
    gp_kube_client_free(c);
}

/* Requests pipelined (gp_kube_request_many): answered in order on one
 * connection; a Connection: close among the answers has the ones after it
 * sent again alone (the server never read them), as libcurl's HTTP one
 * after another does; a connection dropped among them leaves the POSTs
 * after it unanswered (not sent again) and has the GETs retried. */
static void test_pipelined(void **state)
{
    (void)state;
    for (int curl_http = 0; curl_http <= 1; curl_http++) {
        struct gp_kube_client *c = client(curl_http, 0, 5);
        const enum act a[] = {A_OK, A_CHUNKED, A_CONTINUE, A_OK};
        script(a, 4);
        struct gp_kube_call k[4];
        const char *bodies[] = {"{\"n\":0}", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}"};
        for (int i = 0; i < 4; i++)
            k[i] = (struct gp_kube_call){.method = "POST",
                                         .path = "/api/v1/namespaces/default/pods/p",
                                         .body = bodies[i],
                                         .content_type = "application/json"};
        gp_kube_request_many(c, k, 4);
        const long want[] = {200, 201, 200, 200};
        const char *body[] = {"{\"ok\":true}", "{\"a\":\"chunked\"}", "{}", "{\"ok\":true}"};
        for (int i = 0; i < 4; i++) {
            if (k[i].err != GP_OK)
                fail_msg("curl_http %d, call %d: %s", curl_http, i, k[i].d.msg);
            assert_int_equal(k[i].r.status, want[i]);
            assert_string_equal(k[i].r.body, body[i]);
            gp_kube_response_free(&k[i].r);
        }
        pthread_mutex_lock(&S.mu);
        int conns0 = S.conns, nreq = S.requests;
        bool last3 = strstr(S.last, "{\"n\":3}") != NULL; /* in order */
        pthread_mutex_unlock(&S.mu);
        assert_int_equal(conns0, 1);
        assert_int_equal(nreq, 4);
        assert_true(last3);
        if (!curl_http)
            assert_int_equal(gp_kube_client_pipelined(c), 4);
        /* the server closes after the second answer: the third and fourth
         * were never read, and are sent again on a new connection */
        const enum act b[] = {A_OK, A_CLOSE_HDR, A_CHUNKED, A_OK};
        script(b, 4);
        gp_kube_request_many(c, k, 4);
        for (int i = 0; i < 4; i++) {
            if (k[i].err != GP_OK)
                fail_msg("curl_http %d, call %d after a close: %s", curl_http, i, k[i].d.msg);
            assert_int_equal(k[i].r.status, i == 2 ? 201 : 200);
            gp_kube_response_free(&k[i].r);
        }
        assert_int_equal(requests(), 4);
        pthread_mutex_lock(&S.mu);
        int conns = S.conns; /* since script(): the one opened after the close */
        pthread_mutex_unlock(&S.mu);
        assert_int_equal(conns, 1);
        if (curl_http) { /* libcurl sends a POST again on a dropped kept connection */
            gp_kube_client_free(c);
            continue;
        }
        /* dropped after the first answer: the POSTs after it have no answer */
        const enum act d[] = {A_OK, A_DROP, A_OK, A_OK};
        script(d, 4);
        gp_kube_request_many(c, k, 4);
        assert_int_equal(k[0].err, GP_OK);
        gp_kube_response_free(&k[0].r);
        assert_int_equal(k[1].err, GP_EIO);
        assert_int_equal(requests(), 2);
        for (int i = 2; i < 4; i++) {
            assert_int_equal(k[i].err, GP_EIO);
            assert_non_null(strstr(k[i].d.msg, "no answer"));
        }
        /* GETs: retried alone */
        script(d, 4);
        for (int i = 0; i < 4; i++)
            k[i] =
                (struct gp_kube_call){.method = "GET", .path = "/api/v1/namespaces/default/pods/p"};
        gp_kube_request_many(c, k, 4);
        for (int i = 0; i < 4; i++) {
            if (k[i].err != GP_OK)
                fail_msg("GET %d: %s", i, k[i].d.msg);
            assert_int_equal(k[i].r.status, 200);
            gp_kube_response_free(&k[i].r);
        }
        gp_kube_client_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framing), cmocka_unit_test(test_idle_closed),
        cmocka_unit_test(test_dropped), cmocka_unit_test(test_cut_and_cap),
        cmocka_unit_test(test_timeout), cmocka_unit_test(test_pipelined),
    };
    const struct CMUnitTest parse[] = {
        cmocka_unit_test(test_parse_framing),   cmocka_unit_test(test_parse_status_line),
        cmocka_unit_test(test_parse_interim),   cmocka_unit_test(test_parse_lengths),
        cmocka_unit_test(test_parse_caps),      cmocka_unit_test(test_parse_fields),
        cmocka_unit_test(test_parse_pipelined),
    };
    int failed = cmocka_run_group_tests_name("parse", parse, NULL, NULL);
    return failed + cmocka_run_group_tests_name("exchange", tests, setup, teardown);
}
