/* test_apidouble_park.c - the API double's waiting connections parked
 * (tests/apidouble/park.c, c10eca8): with a pool of one thread (--threads
 * 1) in epoll(7), many idle watches hold no thread each (libmicrohttpd's
 * MHD_suspend_connection; a thread per connection blocked in its content
 * reader before), a write resumes every watch of its resource (each gets
 * the ADDED event), a request is answered while they wait, and a request
 * under a delay fault is parked too, so the one thread answers another
 * request meanwhile (a delay slept in the handler would hold it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "kube/client.h"
#include "kube_double.h"

#define WATCHES 200

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A connection of our own to the double with `req` written on it. */
static int raw_send(const char *req)
{
    unsigned port = 0;
    assert_int_equal(sscanf(kd_server, "http://127.0.0.1:%u", &port), 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    size_t n = strlen(req);
    assert_int_equal(send(fd, req, n, 0), (ssize_t)n);
    return fd;
}

/* Reads from fd into buf (appending at *len) until `want` is in it or
 * timeout_s passes; whether it came. */
static bool read_until(int fd, char *buf, size_t cap, size_t *len, const char *want,
                       double timeout_s)
{
    double end = now_s() + timeout_s;
    while (!strstr(buf, want)) {
        double left = end - now_s();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            return false;
        ssize_t r = recv(fd, buf + *len, cap - 1 - *len, 0);
        if (r <= 0)
            return false;
        *len += (size_t)r;
        buf[*len] = '\0';
    }
    return true;
}

/* The double's threads (/proc/PID/task). */
static int double_threads(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)kd_pid);
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_idle_watches(void **state)
{
    (void)state;
    static int fd[WATCHES];
    static char buf[WATCHES][4096];
    size_t len[WATCHES] = {0};
    const char *req = "GET /api/v1/namespaces/default/pods?watch=1&timeoutSeconds=60 HTTP/1.1\r\n"
                      "Host: 127.0.0.1\r\n\r\n";
    for (int i = 0; i < WATCHES; i++)
        fd[i] = raw_send(req);
    for (int i = 0; i < WATCHES; i++)
        assert_true(read_until(fd[i], buf[i], sizeof buf[i], &len[i], "\r\n\r\n", 10));
    for (int i = 0; i < WATCHES; i++)
        assert_non_null(strstr(buf[i], "HTTP/1.1 200"));
    /* every watch open and waiting: the pool's thread, the reaper and
     * main, not a thread a watch (there were WATCHES + 3 before c10eca8) */
    int threads = double_threads();
    if (threads > 8)
        fail_msg("%d idle watches: the double runs %d threads", WATCHES, threads);
    /* a request is answered while they wait */
    struct gp_kube_client *c = kd_client();
    kd_call(c, "GET", "/api/v1/namespaces/default/pods", NULL, 200);
    /* a write resumes every parked watch of its resource: each gets the
     * ADDED event long before its next bookmark (a minute) or its
     * timeoutSeconds */
    kd_call(c, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"woken\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\"}]}}",
            201);
    for (int i = 0; i < WATCHES; i++) {
        if (!read_until(fd[i], buf[i], sizeof buf[i], &len[i], "\"woken\"", 5))
            fail_msg("watch %d: no ADDED event for the pod created", i);
        assert_non_null(strstr(buf[i], "\"ADDED\""));
    }
    for (int i = 0; i < WATCHES; i++)
        close(fd[i]);
    gp_kube_client_free(c);
}

/* The double's count of requests (its /_control/ ones not counted). */
static long requests_seen(struct gp_kube_client *c)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/_control/stats", NULL, NULL, &r, &d), GP_OK);
    json_t *st = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    long n = (long)json_integer_value(json_object_get(st, "requests"));
    json_decref(st);
    return n;
}

static void test_delay_parked(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/_control/fault", "{\"delay_ms\":3000,\"match\":\"/pods/slow\"}", 200);
    long before = requests_seen(c);
    double t0 = now_s();
    int fd =
        raw_send("GET /api/v1/namespaces/default/pods/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    /* requests made until the slow one is seen, and one after: the pool's
     * one thread answers each at once while the slow one waits out its
     * delay (3 s slept in its handler would hold the thread, and the
     * request made then would wait for it) */
    double worst_s = 0;
    for (bool seen = false; !seen;) {
        double t = now_s();
        seen = requests_seen(c) > before;
        if (now_s() - t > worst_s)
            worst_s = now_s() - t;
        assert_true(now_s() - t0 < 10);
    }
    double t = now_s();
    kd_call(c, "GET", "/api/v1/namespaces/default/pods", NULL, 200);
    if (now_s() - t > worst_s)
        worst_s = now_s() - t;
    if (worst_s >= 2.0)
        fail_msg("a request took %.2f s beside another's 3 s delay", worst_s);
    static char buf[4096];
    size_t len = 0;
    assert_true(read_until(fd, buf, sizeof buf, &len, "\r\n\r\n", 10));
    double slow_s = now_s() - t0;
    assert_non_null(strstr(buf, "HTTP/1.1 404")); /* answered, after its delay */
    if (slow_s < 2.9)
        fail_msg("the delayed request was answered after %.2f s, not 3", slow_s);
    close(fd);
    gp_kube_client_free(c);
}

int main(void)
{
    /* one thread; bookmarks a minute apart, so that only a write wakes a watch */
    static const char *extra[] = {"--threads", "1", "--bookmark-ms", "60000", NULL};
    memcpy(kd_extra, extra, sizeof extra);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idle_watches, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_delay_parked, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
