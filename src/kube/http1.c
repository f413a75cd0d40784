/* http1.c - one HTTP/1.1 request and its answer over a kept connection
 * that libcurl opened (see http1.h): the request written in one buffer,
 * the answer read as it comes by http1_parse.c (its head, its body framed
 * by Content-Length, chunked encoding or the connection's end, the size
 * cap, whether the connection is kept). */
#include "kube/http1.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kube/http1_parse.h"

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
    x->cap = (size_t)64 << 10; /* answers pipelined: several in a read */
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

/* The request's bytes appended to x->out at *at. */
static bool request_write(struct gp_http1 *x, const struct gp_http1_req *rq, size_t *at)
{
    bool ok = puts_(x, at, rq->method) && put(x, at, " ", 1) && puts_(x, at, rq->target) &&
              puts_(x, at, " HTTP/1.1\r\nHost: ") && puts_(x, at, rq->host) &&
              put(x, at, "\r\n", 2);
    for (const struct curl_slist *h = rq->hdr; ok && h; h = h->next)
        if (strncasecmp(h->data, "host:", 5) != 0) /* the one Host is rq->host */
            ok = puts_(x, at, h->data) && put(x, at, "\r\n", 2);
    bool bodyless = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0 ||
                    strcmp(rq->method, "DELETE") == 0;
    if (ok && (rq->body || !bodyless)) {
        char digits[24], *d = digits + sizeof digits; /* the length in decimal */
        size_t v = rq->body ? rq->body_len : 0;
        do
            *--d = (char)('0' + v % 10);
        while ((v /= 10) > 0);
        ok = puts_(x, at, "Content-Length: ") &&
             put(x, at, d, (size_t)(digits + sizeof digits - d)) && put(x, at, "\r\n", 2);
    }
    return ok && put(x, at, "\r\n", 2) && (!rq->body || put(x, at, rq->body, rq->body_len));
}

/* The answer, read by http1_parse.c from what comes: *none while no byte
 * of it came; more: answers to requests sent after it follow (the bytes
 * after it are theirs); *closes: the server ends the connection after it. */
static CURLcode answer_read(struct gp_http1 *x, const struct gp_http1_req *rq, double deadline,
                            bool more, long *status, bool *reuse, bool *closes, bool *none,
                            char *errbuf)
{
    struct gp_http1_parse ps;
    gp_http1_parse_init(&ps, strcmp(rq->method, "HEAD") == 0, rq->max_body);
    ps.on_header = rq->on_header;
    ps.header_ud = rq->header_ud;
    ps.on_body = rq->on_body;
    ps.body_ud = rq->body_ud;
    enum gp_http1_verdict v;
    for (;;) {
        size_t used;
        v = gp_http1_parse_feed(&ps, x->in + x->pos, x->len - x->pos, &used);
        x->pos += used;
        *none = !ps.any;
        *status = ps.status;
        if (v != GP_HTTP1_MORE)
            break;
        size_t got;
        CURLcode rc = fill(x, deadline, rq->cancelled, !ps.any && x->pos == x->len, &got, errbuf);
        if (rc != CURLE_OK)
            return rc;
        if (got == 0) {
            v = gp_http1_parse_end(&ps);
            break;
        }
    }
    *status = ps.status;
    switch (v) {
    case GP_HTTP1_DONE:
        /* kept for the next request when the answer was framed, nothing is
         * left over (but the next answers' beginning) and the server keeps it */
        *reuse = ps.keep && (more || x->pos == x->len);
        *closes = ps.close;
        return CURLE_OK;
    case GP_HTTP1_OVER:
        return fail(errbuf, CURLE_FILESIZE_EXCEEDED, ps.why);
    case GP_HTTP1_REFUSED:
        return fail(errbuf, CURLE_WRITE_ERROR, ps.why);
    case GP_HTTP1_CUT:
        return fail(errbuf, CURLE_PARTIAL_FILE, ps.why);
    case GP_HTTP1_NOTHING:
        return fail(errbuf, CURLE_GOT_NOTHING, ps.why);
    case GP_HTTP1_BAD:
    case GP_HTTP1_MORE:
        break;
    }
    return fail(errbuf, CURLE_WEIRD_SERVER_REPLY, ps.why ? ps.why : "not an HTTP/1.1 answer");
}

/* The answers in order, on the connection as it is: *k of them came
 * whole; rc of the one that did not (CURLE_OK: all did). */
static CURLcode answers_read(struct gp_http1 *x, const struct gp_http1_req *rq, size_t n,
                             double deadline, struct gp_http1_res *res, size_t *k, bool *reuse,
                             bool *closes, bool *none)
{
    for (*k = 0; *k < n; (*k)++) {
        struct gp_http1_res *o = &res[*k];
        CURLcode rc = answer_read(x, &rq[*k], deadline, *k + 1 < n, &o->status, reuse, closes, none,
                                  o->errbuf);
        if (rc != CURLE_OK)
            return rc;
        o->rc = CURLE_OK;
        if (!*reuse) { /* the connection ends here: the rest were not answered */
            (*k)++;
            return CURLE_OK;
        }
    }
    return CURLE_OK;
}

void gp_http1_exchange_many(struct gp_http1 *x, const struct gp_http1_req *rq, size_t n,
                            struct gp_http1_res *res)
{
    double timeout_s = 0;
    size_t len = 0;
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        res[i] = (struct gp_http1_res){CURLE_GOT_NOTHING, 0, false, ""};
        timeout_s = rq[i].timeout_s > timeout_s ? rq[i].timeout_s : timeout_s;
        ok = ok && request_write(x, &rq[i], &len);
    }
    if (!ok || n == 0) {
        for (size_t i = 0; i < n; i++)
            res[i].rc = fail(res[i].errbuf, CURLE_OUT_OF_MEMORY, "out of memory");
        return;
    }
    double deadline = mono_s() + timeout_s;
    char *errbuf = res[0].errbuf;
    for (int attempt = 0;; attempt++) {
        if (x->h && !conn_fit(x))
            conn_close(x);
        bool reused = x->h != NULL;
        CURLcode rc = CURLE_OK;
        errbuf[0] = '\0';
        if (!x->h)
            rc = conn_open(x, deadline, errbuf);
        size_t k = 0; /* answers come */
        bool reuse = false, closes = false, none = true;
        if (rc == CURLE_OK) {
            x->pos = x->len = 0;
            rc = send_all(x, x->out, len, deadline, rq[0].cancelled, errbuf);
            if (rc == CURLE_OK)
                rc = answers_read(x, rq, n, deadline, res, &k, &reuse, &closes, &none);
        }
        if (rc == CURLE_OK && reuse && k == n)
            return;
        if (x->h)
            conn_close(x);
        bool died = rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR;
        if (rc != CURLE_OK && k == 0 && reused && none && died && attempt == 0)
            continue;       /* a kept connection that died under the requests: once more, anew */
        if (rc != CURLE_OK) /* its line in res[k].errbuf (a connect's or send's in res[0]'s) */
            res[k++].rc = rc;
        /* the rest: never read when the server ended the connection after
         * an answer (RFC 9112 §9.6), else their fate unknown */
        for (size_t i = k; i < n; i++) {
            res[i].unsent = rc == CURLE_OK && closes;
            fail(res[i].errbuf, CURLE_GOT_NOTHING,
                 res[i].unsent ? "the server closed the connection before reading the request"
                               : "no answer: the connection failed on an earlier request");
        }
        return;
    }
}

CURLcode gp_http1_exchange(struct gp_http1 *x, const struct gp_http1_req *rq, long *status,
                           char *errbuf)
{
    struct gp_http1_res res;
    gp_http1_exchange_many(x, rq, 1, &res);
    *status = res.status;
    memcpy(errbuf, res.errbuf, CURL_ERROR_SIZE);
    return res.rc;
}
