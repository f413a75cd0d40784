/* test_kube_httpd.c - the scheduler's HTTP endpoints (kube/httpd.c),
 * started on a free loopback port and fetched with libcurl, a real HTTP
 * client: /metrics (status, Content-Type, the registry's exposition, a
 * change seen on the next scrape), /healthz, /readyz (503 with its reason
 * until the informers sync, with leader election until the replica is
 * leader or standby, and while a callback says no), HEAD, 405 on POST,
 * 404 elsewhere; and the listen address's forms and errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "kube/httpd.h"
#include "kube/metrics.h"
#include "util/sbuf.h"

struct reply {
    long status;
    char type[128];
    struct gp_sbuf body;
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
    gp_sbuf_addn(ctx, p, size * n);
    return size * n;
}

/* method NULL: GET */
static void fetch(unsigned port, const char *method, const char *path, struct reply *r)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    memset(r, 0, sizeof *r);
    gp_sbuf_init(&r->body);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (method && strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    else if (method && strcmp(method, "POST") == 0)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x=1");
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK)
        fail_msg("%s %s: %s", method ? method : "GET", url, curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    char *ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    snprintf(r->type, sizeof r->type, "%s", ct ? ct : "");
    curl_easy_cleanup(c);
}

static void expect(unsigned port, const char *method, const char *path, long status,
                   const char *type, const char *body)
{
    struct reply r;
    fetch(port, method, path, &r);
    if (r.status != status || strcmp(r.type, type) != 0 ||
        (body && strcmp(gp_sbuf_str(&r.body), body) != 0))
        fail_msg("%s %s: got %ld '%s' '%s', want %ld '%s' '%s'", method ? method : "GET", path,
                 r.status, r.type, gp_sbuf_str(&r.body), status, type, body ? body : "*");
    gp_sbuf_free(&r.body);
}

#define TEXT "text/plain; charset=utf-8"

static void test_endpoints(void **state)
{
    (void)state;
    struct gp_kube_metrics km;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_metrics_init(&km, &d), GP_OK);
    struct gp_httpd_opts o = {.addr = "127.0.0.1:0", .metrics = km.reg};
    struct gp_httpd *h;
    assert_int_equal(gp_httpd_start(&o, &h, &d), GP_OK);
    unsigned port = gp_httpd_port(h);
    assert_true(port > 0);

    gp_metrics_inc(km.decisions[GP_KM_SCHEDULED], 2);
    struct reply r;
    fetch(port, NULL, "/metrics", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.type, GP_METRICS_CONTENT_TYPE);
    struct gp_sbuf want;
    gp_sbuf_init(&want);
    gp_metrics_expose(km.reg, &want);
    assert_string_equal(gp_sbuf_str(&r.body), gp_sbuf_str(&want)); /* the registry, whole */
    assert_non_null(strstr(gp_sbuf_str(&r.body),
                           "gpuplane_scheduler_decisions_total{result=\"scheduled\"} 2\n"));
    gp_sbuf_free(&r.body);
    gp_sbuf_free(&want);
    gp_metrics_inc(km.decisions[GP_KM_SCHEDULED], 1); /* the next scrape sees it */
    fetch(port, NULL, "/metrics?x=1", &r);
    assert_non_null(strstr(gp_sbuf_str(&r.body),
                           "gpuplane_scheduler_decisions_total{result=\"scheduled\"} 3\n"));
    gp_sbuf_free(&r.body);

    expect(port, NULL, "/healthz", 200, TEXT, "ok\n");
    expect(port, "HEAD", "/healthz", 200, TEXT, "");
    expect(port, "HEAD", "/metrics", 200, GP_METRICS_CONTENT_TYPE, "");
    expect(port, NULL, "/readyz", 503, TEXT, "not ready: informers not synced\n");
    gp_httpd_set_synced(h, true);
    expect(port, NULL, "/readyz", 200, TEXT, "ok\n"); /* no leader election: synced is enough */
    gp_httpd_set_synced(h, false);
    expect(port, NULL, "/readyz", 503, TEXT, NULL);
    expect(port, NULL, "/", 404, TEXT, "404 page not found\n");
    expect(port, NULL, "/metrics/", 404, TEXT, NULL);
    expect(port, NULL, "/healthzz", 404, TEXT, NULL);
    expect(port, "POST", "/metrics", 405, TEXT, "method not allowed\n");
    expect(port, "POST", "/nope", 404, TEXT, NULL);
    gp_httpd_stop(h);
    gp_kube_metrics_free(&km);
}

static bool config_ok;

static bool config_ready(void *ctx, char *why, size_t n)
{
    (void)ctx;
    if (!config_ok)
        snprintf(why, n, "no configuration");
    return config_ok;
}

static void test_readiness_leader(void **state)
{
    (void)state;
    struct gp_diag d = {""};
    struct gp_httpd_opts o = {
        .addr = "127.0.0.1:0", .leader_election = true, .ready = config_ready};
    struct gp_httpd *h;
    assert_int_equal(gp_httpd_start(&o, &h, &d), GP_OK);
    unsigned port = gp_httpd_port(h);
    expect(port, NULL, "/metrics", 200, GP_METRICS_CONTENT_TYPE, ""); /* no registry */
    gp_httpd_set_synced(h, true);
    expect(port, NULL, "/readyz", 503, TEXT,
           "not ready: leader election: neither leader nor standby\n");
    gp_httpd_set_role(h, GP_HTTPD_ROLE_STANDBY);
    expect(port, NULL, "/readyz", 503, TEXT, "not ready: no configuration\n");
    config_ok = true;
    expect(port, NULL, "/readyz", 200, TEXT, "ok\n");
    gp_httpd_set_role(h, GP_HTTPD_ROLE_LEADER);
    expect(port, NULL, "/readyz", 200, TEXT, "ok\n");
    gp_httpd_set_role(h, GP_HTTPD_ROLE_NONE);
    expect(port, NULL, "/readyz", 503, TEXT, NULL);
    expect(port, NULL, "/healthz", 200, TEXT, "ok\n"); /* alive all along */
    char why[64];
    assert_false(gp_httpd_ready(h, why, sizeof why));
    assert_string_equal(why, "leader election: neither leader nor standby");
    gp_httpd_stop(h);
}

static void test_addresses(void **state)
{
    (void)state;
    char host[64];
    unsigned port;
    assert_true(gp_httpd_parse_addr("0.0.0.0:10259", host, sizeof host, &port));
    assert_string_equal(host, "0.0.0.0");
    assert_int_equal(port, 10259);
    assert_true(gp_httpd_parse_addr(":8080", host, sizeof host, &port));
    assert_string_equal(host, "");
    assert_int_equal(port, 8080);
    assert_true(gp_httpd_parse_addr("[::1]:0", host, sizeof host, &port));
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_true(gp_httpd_parse_addr("localhost:1", host, sizeof host, &port));
    const char *bad[] = {"",      "127.0.0.1", "127.0.0.1:", "::1:80", "[::1]80",
                         "[]:80", "h:65536",   "h:-1",       "h:8x",   "h:123456"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (gp_httpd_parse_addr(bad[i], host, sizeof host, &port))
            fail_msg("'%s' parsed", bad[i]);
    struct gp_diag d = {""};
    struct gp_httpd *h = (void *)1;
    struct gp_httpd_opts o = {.addr = "127.0.0.1"};
    assert_int_equal(gp_httpd_start(&o, &h, &d), GP_EUSAGE);
    assert_string_equal(d.msg, "127.0.0.1: expected HOST:PORT, [IPv6]:PORT or :PORT");
    assert_null(h);
    /* a port in use */
    struct gp_httpd *a;
    o.addr = "127.0.0.1:0";
    assert_int_equal(gp_httpd_start(&o, &a, &d), GP_OK);
    char taken[32];
    snprintf(taken, sizeof taken, "127.0.0.1:%u", gp_httpd_port(a));
    o.addr = taken;
    assert_int_equal(gp_httpd_start(&o, &h, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "cannot listen"));
    gp_httpd_stop(a);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_readiness_leader),
        cmocka_unit_test(test_addresses),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
