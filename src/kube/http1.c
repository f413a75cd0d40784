/* http1.c - one HTTP/1.1 request and its answer over a kept connection
 * that libcurl opened (see http1.h): the request written in one buffer,
 * the answer's head parsed, its body framed by Content-Length, chunked
 * encoding or the connection's end (RFC 9112 §6.3, §7.1). */
#include "kube/http1.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define HEAD_MAX ((size_t)64 << 10) /* an answer's head; a chunk-size line */

struct gp_http1 {
    CURL *tmpl;
    char *url;
    CURL *h; /* the open connection's handle, or NULL */
    curl_socket_t fd;
    unsigned long connects;
    char *out; /* the request */
    size_t out_cap;
    char *in; /* read and not used yet: in[pos..len) */
    size_t pos, len, cap;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct gp_http1 *gp_http1_new(CURL *tmpl, const char *url)
{
    struct gp_http1 *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->tmpl = tmpl;
    x->url = strdup(url);
    x->cap = 16384;
    x->in = malloc(x->cap);
    if (!x->url || !x->in) {
        gp_http1_free(x);
        return NULL;
    }
    return x;
}

static void conn_close(struct gp_http1 *x)
{
    if (x->h)
        curl_easy_cleanup(x->h);
    x->h = NULL;
    x->pos = x->len = 0;
}

void gp_http1_free(struct gp_http1 *x)
{
    if (!x)
        return;
    conn_close(x);
    free(x->url);
    free(x->out);
    free(x->in);
    free(x);
}

unsigned long gp_http1_connects(const struct gp_http1 *x)
{
    return x->connects;
}

static CURLcode fail(char *errbuf, CURLcode rc, const char *what)
{
    snprintf(errbuf, CURL_ERROR_SIZE, "%s", what);
    return rc;
}

/* libcurl connects (TCP, the proxy's tunnel, TLS verified as configured,
 * ALPN offering http/1.1 alone) and hands the connection over. */
static CURLcode conn_open(struct gp_http1 *x, double deadline, char *errbuf)
{
    CURL *h = curl_easy_duphandle(x->tmpl);
    if (!h)
        return fail(errbuf, CURLE_OUT_OF_MEMORY, "out of memory");
    double left_ms = (deadline - mono_s()) * 1000;
    curl_easy_setopt(h, CURLOPT_URL, x->url);
    curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_HTTPPROXYTUNNEL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, left_ms >= 1 ? (long)left_ms : 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    errbuf[0] = '\0';
    CURLcode rc = curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_socket_t fd = CURL_SOCKET_BAD;
    if (rc == CURLE_OK &&
        (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &fd) != CURLE_OK || fd == CURL_SOCKET_BAD))
        rc = fail(errbuf, CURLE_COULDNT_CONNECT, "no socket after the connect");
    if (rc != CURLE_OK) {
        curl_easy_cleanup(h);
        return rc;
    }
    x->h = h;
    x->fd = fd;
    x->pos = x->len = 0;
    x->connects++;
    return CURLE_OK;
}

/* Waits until fd is ready for ev, in slices so that a cancel is seen:
 * CURLE_OK, CURLE_OPERATION_TIMEDOUT or CURLE_ABORTED_BY_CALLBACK. */
static CURLcode wait_fd(const struct gp_http1 *x, short ev, double deadline,
                        const atomic_int *cancelled, char *errbuf)
{
    for (;;) {
        if (cancelled && atomic_load(cancelled))
            return fail(errbuf, CURLE_ABORTED_BY_CALLBACK, "cancelled");
        double left = deadline - mono_s();
        if (left <= 0)
            return fail(errbuf, CURLE_OPERATION_TIMEDOUT, "timed out waiting for the answer");
        int ms = left < 0.2 ? (int)(left * 1000) + 1 : 200;
        struct pollfd p = {x->fd, ev, 0};
        int n = poll(&p, 1, ms);
        if (n > 0)
            return CURLE_OK;
    }
}

/* More bytes into in[len..): *got of them (0: the connection ended).
 * wait_first: nothing can have come yet (the request just sent, nothing
 * held): the socket waited for before a read, not after one that would
 * find nothing. */
static CURLcode fill(struct gp_http1 *x, double deadline, const atomic_int *cancelled,
                     bool wait_first, size_t *got, char *errbuf)
{
    if (x->pos > 0 && x->pos == x->len)
        x->pos = x->len = 0;
    if (x->len == x->cap) {
        if (x->pos > 0) {
            memmove(x->in, x->in + x->pos, x->len - x->pos);
            x->len -= x->pos;
            x->pos = 0;
        } else {
            char *b = realloc(x->in, x->cap * 2);
            if (!b)
                return fail(errbuf, CURLE_OUT_OF_MEMORY, "out of memory");
            x->in = b;
            x->cap *= 2;
        }
    }
    if (wait_first) {
        CURLcode rc = wait_fd(x, POLLIN, deadline, cancelled, errbuf);
        if (rc != CURLE_OK)
            return rc;
    }
    for (;;) {
        size_t n = 0;
        CURLcode rc = curl_easy_recv(x->h, x->in + x->len, x->cap - x->len, &n);
        if (rc == CURLE_OK) {
            x->len += n;
            *got = n;
            return CURLE_OK;
        }
        if (rc != CURLE_AGAIN)
            return fail(errbuf, CURLE_RECV_ERROR, "failure when receiving data from the peer");
        rc = wait_fd(x, POLLIN, deadline, cancelled, errbuf);
        if (rc != CURLE_OK)
            return rc;
    }
}

static CURLcode send_all(struct gp_http1 *x, const char *p, size_t n, double deadline,
                         const atomic_int *cancelled, char *errbuf)
{
    while (n > 0) {
        size_t sent = 0;
        CURLcode rc = curl_easy_send(x->h, p, n, &sent);
        if (rc == CURLE_AGAIN) {
            rc = wait_fd(x, POLLOUT, deadline, cancelled, errbuf);
            if (rc != CURLE_OK)
                return rc;
            continue;
        }
        if (rc != CURLE_OK)
            return fail(errbuf, CURLE_SEND_ERROR, "failure when sending data to the peer");
        p += sent;
        n -= sent;
    }
    return CURLE_OK;
}

/* A kept connection is fit for another request when nothing is to be read
 * on it: the end (the server closed it) or bytes never asked for make it
 * unfit. A TLS record that is not data (a session ticket) reads as
 * nothing. */
static bool conn_fit(struct gp_http1 *x)
{
    struct pollfd p = {x->fd, POLLIN, 0};
    if (poll(&p, 1, 0) == 0)
        return true;
    char b[64];
    size_t n = 0;
    return curl_easy_recv(x->h, b, sizeof b, &n) == CURLE_AGAIN;
}

static bool put(struct gp_http1 *x, size_t *at, const char *s, size_t n)
{
    if (*at + n + 1 > x->out_cap) {
        size_t cap = x->out_cap ? x->out_cap : 1024;
        while (cap < *at + n + 1)
            cap *= 2;
        char *b = realloc(x->out, cap);
        if (!b)
            return false;
        x->out = b;
        x->out_cap = cap;
    }
    memcpy(x->out + *at, s, n);
    *at += n;
    return true;
}

static bool puts_(struct gp_http1 *x, size_t *at, const char *s)
{
    return put(x, at, s, strlen(s));
}

/* The request's bytes in x->out: *n of them. */
static bool request_write(struct gp_http1 *x, const struct gp_http1_req *rq, size_t *n)
{
    size_t at = 0;
    bool ok = puts_(x, &at, rq->method) && put(x, &at, " ", 1) && puts_(x, &at, rq->target) &&
              puts_(x, &at, " HTTP/1.1\r\nHost: ") && puts_(x, &at, rq->host) &&
              put(x, &at, "\r\n", 2);
    for (const struct curl_slist *h = rq->hdr; ok && h; h = h->next)
        if (strncasecmp(h->data, "host:", 5) != 0) /* the one Host is rq->host */
            ok = puts_(x, &at, h->data) && put(x, &at, "\r\n", 2);
    bool bodyless = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0 ||
                    strcmp(rq->method, "DELETE") == 0;
    if (ok && (rq->body || !bodyless)) {
        char cl[48];
        int k = snprintf(cl, sizeof cl, "Content-Length: %zu\r\n", rq->body ? rq->body_len : 0);
        ok = put(x, &at, cl, (size_t)k);
    }
    ok = ok && put(x, &at, "\r\n", 2) && (!rq->body || put(x, &at, rq->body, rq->body_len));
    *n = at;
    return ok;
}

/* What the head says of the body. */
struct head {
    long status;
    bool chunked, has_len, close;
    unsigned long long len;
};

static bool value_is(const char *v, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++) /* a token of a comma-separated list */
        if (strncasecmp(v + i, word, w) == 0 && (i == 0 || v[i - 1] == ' ' || v[i - 1] == ',') &&
            (i + w == n || v[i + w] == ' ' || v[i + w] == ',' || v[i + w] == '\r'))
            return true;
    return false;
}

/* Parses the head in[pos..end) (end just past its blank line), each line
 * handed to on_header. false: not an HTTP/1.x answer. */
static bool head_parse(struct gp_http1 *x, size_t end, const struct gp_http1_req *rq,
                       struct head *hd)
{
    char *p = x->in + x->pos, *e = x->in + end;
    memset(hd, 0, sizeof *hd);
    if (e - p < 12 || strncmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ')
        return false;
    bool http10 = p[7] == '0', keep = false;
    if (p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9')
        return false;
    hd->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    for (char *line = p; line < e;) {
        char *nl = memchr(line, '\n', (size_t)(e - line));
        size_t n = (size_t)(nl - line) + 1;
        if (rq->on_header)
            rq->on_header(line, 1, n, rq->header_ud);
        char *colon = line == p ? NULL : memchr(line, ':', n);
        if (colon) {
            size_t nlen = (size_t)(colon - line);
            char *v = colon + 1;
            while (v < nl && (*v == ' ' || *v == '\t'))
                v++;
            size_t vn = (size_t)(nl - v);
            while (vn > 0 && (v[vn - 1] == '\r' || v[vn - 1] == ' ' || v[vn - 1] == '\t'))
                vn--;
            if (nlen == 14 && strncasecmp(line, "content-length", 14) == 0) {
                char *end_num;
                hd->len = strtoull(v, &end_num, 10);
                if (vn == 0 || end_num != v + vn || v[0] == '-' || v[0] == '+')
                    return false;
                hd->has_len = true;
            } else if (nlen == 17 && strncasecmp(line, "transfer-encoding", 17) == 0) {
                hd->chunked = value_is(v, vn, "chunked");
                if (!hd->chunked) /* another coding, not ours to undo */
                    return false;
            } else if (nlen == 10 && strncasecmp(line, "connection", 10) == 0) {
                hd->close |= value_is(v, vn, "close");
                keep |= value_is(v, vn, "keep-alive");
            }
        }
        line = nl + 1;
    }
    if (http10 && !keep)
        hd->close = true;
    return true;
}

enum body_mode { BM_NONE, BM_LEN, BM_CHUNKED, BM_EOF };
enum chunk_state { CS_SIZE, CS_DATA, CS_DATA_END, CS_TRAILER };

struct body {
    enum body_mode mode;
    enum chunk_state cs;
    unsigned long long left; /* BM_LEN, CS_DATA */
};

static bool deliver(struct gp_http1 *x, const struct gp_http1_req *rq, size_t n)
{
    if (n == 0)
        return true;
    size_t took = rq->on_body ? rq->on_body(x->in + x->pos, 1, n, rq->body_ud) : n;
    x->pos += n;
    return took == n;
}

/* Uses what in[pos..len) holds of the body: 1 done, 0 more needed, -1 a
 * framing error, -2 the body callback stopped it. */
static int body_take(struct gp_http1 *x, const struct gp_http1_req *rq, struct body *b)
{
    for (;;) {
        size_t avail = x->len - x->pos;
        if (b->mode == BM_NONE)
            return 1;
        if (b->mode == BM_EOF) {
            return deliver(x, rq, avail) ? 0 : -2;
        }
        if (b->mode == BM_LEN || b->cs == CS_DATA) {
            size_t n = avail < b->left ? avail : (size_t)b->left;
            if (!deliver(x, rq, n))
                return -2;
            b->left -= n;
            if (b->left > 0)
                return 0;
            if (b->mode == BM_LEN)
                return 1;
            b->cs = CS_DATA_END;
            continue;
        }
        char *s = x->in + x->pos;
        if (b->cs == CS_DATA_END) {
            if (avail < 2)
                return 0;
            if (s[0] != '\r' || s[1] != '\n')
                return -1;
            x->pos += 2;
            b->cs = CS_SIZE;
            continue;
        }
        char *nl = memchr(s, '\n', avail);
        if (!nl)
            return avail > HEAD_MAX ? -1 : 0;
        if (b->cs == CS_TRAILER) { /* trailer lines, up to the empty one */
            x->pos += (size_t)(nl - s) + 1;
            if (nl == s || (nl == s + 1 && s[0] == '\r'))
                return 1;
            continue;
        }
        unsigned long long size = 0; /* CS_SIZE: hex digits, extensions after ';' */
        char *d = s;
        for (; d < nl; d++) {
            int v = *d >= '0' && *d <= '9'   ? *d - '0'
                    : *d >= 'a' && *d <= 'f' ? *d - 'a' + 10
                    : *d >= 'A' && *d <= 'F' ? *d - 'A' + 10
                                             : -1;
            if (v < 0)
                break;
            if (size >> 60)
                return -1;
            size = size * 16 + (unsigned)v;
        }
        if (d == s || (*d != ';' && *d != '\r' && *d != ' ' && *d != '\t'))
            return -1;
        x->pos += (size_t)(nl - s) + 1;
        b->left = size;
        b->cs = size ? CS_DATA : CS_TRAILER;
    }
}

/* Where the head that starts at s ends (just past its empty line), or
 * NULL when it has not all come. */
static char *head_end(char *s, char *e)
{
    for (char *q = s; q < e; q++) {
        q = memchr(q, '\n', (size_t)(e - q));
        if (!q)
            return NULL;
        if (q + 1 < e && q[1] == '\n')
            return q + 2;
        if (q + 2 < e && q[1] == '\r' && q[2] == '\n')
            return q + 3;
    }
    return NULL;
}

/* The answer: its heads (1xx skipped) then its body. *none: the connection
 * ended before a byte of it came. */
static CURLcode answer_read(struct gp_http1 *x, const struct gp_http1_req *rq, double deadline,
                            long *status, bool *reuse, bool *none, char *errbuf)
{
    struct head hd;
    *none = true;
    for (;;) { /* the head */
        char *end = head_end(x->in + x->pos, x->in + x->len);
        if (end) {
            if (!head_parse(x, (size_t)(end - x->in), rq, &hd))
                return fail(errbuf, CURLE_WEIRD_SERVER_REPLY, "not an HTTP/1.1 answer");
            x->pos = (size_t)(end - x->in);
            if (hd.status >= 100 && hd.status < 200 && hd.status != 101)
                continue; /* an interim answer: the final one follows */
            break;
        }
        if (x->len - x->pos > HEAD_MAX)
            return fail(errbuf, CURLE_WEIRD_SERVER_REPLY, "an answer's head too long");
        size_t got;
        CURLcode rc = fill(x, deadline, rq->cancelled, *none && x->len == 0, &got, errbuf);
        if (rc != CURLE_OK)
            return rc;
        if (got == 0)
            return *none
                       ? fail(errbuf, CURLE_GOT_NOTHING, "empty reply from server")
                       : fail(errbuf, CURLE_PARTIAL_FILE, "the connection ended within an answer");
        *none = false;
    }
    *none = false;
    *status = hd.status;
    if (hd.status == 101)
        return fail(errbuf, CURLE_WEIRD_SERVER_REPLY, "an unasked protocol switch");
    struct body b = {BM_EOF, CS_SIZE, 0};
    if (hd.status == 204 || hd.status == 304 || strcmp(rq->method, "HEAD") == 0)
        b.mode = BM_NONE;
    else if (hd.chunked)
        b.mode = BM_CHUNKED;
    else if (hd.has_len)
        b = (struct body){hd.len ? BM_LEN : BM_NONE, CS_SIZE, hd.len};
    for (;;) {
        int r = body_take(x, rq, &b);
        if (r == 1)
            break;
        if (r == -1)
            return fail(errbuf, CURLE_WEIRD_SERVER_REPLY, "a badly framed answer body");
        if (r == -2)
            return fail(errbuf, CURLE_WRITE_ERROR, "the answer's body was refused");
        size_t got;
        CURLcode rc = fill(x, deadline, rq->cancelled, false, &got, errbuf);
        if (rc != CURLE_OK)
            return rc;
        if (got == 0 && b.mode == BM_EOF)
            break;
        if (got == 0)
            return fail(errbuf, CURLE_PARTIAL_FILE, "the connection ended within an answer");
    }
    /* kept for the next request when the answer was framed, nothing is
     * left over and the server keeps it */
    *reuse = b.mode != BM_EOF && !hd.close && x->pos == x->len;
    return CURLE_OK;
}

CURLcode gp_http1_exchange(struct gp_http1 *x, const struct gp_http1_req *rq, long *status,
                           char *errbuf)
{
    double deadline = mono_s() + rq->timeout_s;
    *status = 0;
    errbuf[0] = '\0';
    size_t n;
    if (!request_write(x, rq, &n))
        return fail(errbuf, CURLE_OUT_OF_MEMORY, "out of memory");
    for (int attempt = 0;; attempt++) {
        if (x->h && !conn_fit(x))
            conn_close(x);
        bool reused = x->h != NULL;
        if (!x->h) {
            CURLcode rc = conn_open(x, deadline, errbuf);
            if (rc != CURLE_OK)
                return rc;
        }
        x->pos = x->len = 0;
        bool reuse = false, none = true;
        CURLcode rc = send_all(x, x->out, n, deadline, rq->cancelled, errbuf);
        if (rc == CURLE_OK)
            rc = answer_read(x, rq, deadline, status, &reuse, &none, errbuf);
        if (rc == CURLE_OK && reuse)
            return CURLE_OK;
        conn_close(x);
        bool died = rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR;
        if (rc == CURLE_OK || !reused || !none || !died || attempt > 0)
            return rc;
        /* a kept connection that died under the request: once more, anew */
    }
}
