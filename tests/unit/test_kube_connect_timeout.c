/* test_kube_connect_timeout.c - the API client's connect timeout
 * (kube/client.c, opts.connect_timeout_s; issue 14 item 1: "timeouts on
 * connect and on every request"), apart from the request timeout: a
 * loopback listener whose accept queue is full (listen backlog 0, one
 * connection already queued and never accepted) drops the next SYN, so a
 * connect to it hangs as one to an unreachable API server does. With a
 * 0.5 s connect timeout and a 6 s request timeout, a GET must fail within
 * about the connect timeout, with one line, through http1.c's connections
 * and through libcurl's own HTTP alike; with the connect timeout not
 * applied it takes the request timeout and fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/client.h"

static int listener = -1, filler = -1;
static unsigned port;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The full listener: backlog 0 holds one connection, which `filler` is. */
static int setup(void **state)
{
    (void)state;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(listener, 0) != 0 || getsockname(listener, (struct sockaddr *)&a, &len) != 0)
        return -1;
    port = ntohs(a.sin_port);
    filler = socket(AF_INET, SOCK_STREAM, 0);
    if (filler < 0 || connect(filler, (struct sockaddr *)&a, sizeof a) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    close(filler);
    close(listener);
    return 0;
}

static void connect_times_out(bool curl_http)
{
    char server[64];
    snprintf(server, sizeof server, "http://127.0.0.1:%u", port);
    struct gp_kube_config cfg = {.server = server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.connect_timeout_s = 0.5;
    o.request_timeout_s = 6;
    o.max_retries = 0;
    o.qps = 0;
    o.curl_http = curl_http;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    struct gp_kube_response r;
    double t0 = mono();
    enum gp_err err = gp_kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, &r, &d);
    double s = mono() - t0;
    if (err == GP_OK)
        gp_kube_response_free(&r);
    assert_int_equal(err, GP_EIO);
    if (s < 0.4 || s > 3)
        fail_msg("curl_http %d: the connect gave up after %.2f s, not about 0.5 (%s)", curl_http, s,
                 d.msg);
    if (!strstr(d.msg, "GET http://127.0.0.1:") ||
        (!strstr(d.msg, "imeout") && !strstr(d.msg, "imed out")) || strchr(d.msg, '\n'))
        fail_msg("curl_http %d: not the one line expected: %s", curl_http, d.msg);
    gp_kube_client_free(c);
}

static void test_http1(void **state)
{
    (void)state;
    connect_times_out(false);
}

static void test_curl_http(void **state)
{
    (void)state;
    connect_times_out(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http1),
        cmocka_unit_test(test_curl_http),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
