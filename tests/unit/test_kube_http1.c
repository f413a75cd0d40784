/* test_kube_http1.c - the client's own HTTP/1.1 exchange (kube/http1.c)
 * against a scripted server on a loopback port (a thread here; the API
 * double cannot misbehave at this level): a kept connection reused,
 * chunked answers (extensions, a trailer), an interim 100 skipped,
 * Connection: close honoured; and the failures the exchange brings: a kept
 * connection the server closed while idle (a new one, the request sent
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framing), cmocka_unit_test(test_idle_closed),
        cmocka_unit_test(test_dropped), cmocka_unit_test(test_cut_and_cap),
        cmocka_unit_test(test_timeout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
