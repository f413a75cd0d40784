/* test_kube_client.c - the API client (kube/client.c) against the API
 * server double (tests/apidouble), started here on a free loopback port
 * and stopped by its PID: paginated lists from one snapshot, watches with
 * replay and bookmarks, a too-old resourceVersion as an ERROR event with a
 * 410 Status in a 200 stream, a dropped watch, 429 with Retry-After
 * honoured (the wait measured), 5xx retried, other 4xx not, the response
 * cap, Binding 201 then 409, a stale update 409; and the pure rules
 * (token bucket, back-off, Retry-After, the line cutter, the
 * resourceVersion read from an answer's text without a tree). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/retry.h"
#include "kube/watch.h"
#include "kube_double.h"

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct gp_kube_client *client(size_t cap)
{
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.backoff_base_s = 0.01;
    o.request_timeout_s = 5;
    o.qps = 0;
    if (cap)
        o.max_response_bytes = cap;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    return c;
}

/* A request that must answer `status`; returns its parsed body. */
static json_t *call(struct gp_kube_client *c, const char *method, const char *path,
                    const char *body, long status)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    enum gp_err err = gp_kube_request(
        c, method, path, body,
        body ? (strcmp(method, "PATCH") == 0 ? "application/merge-patch+json" : "application/json")
             : NULL,
        &r, &d);
    if (err != GP_OK || r.status != status)
        fail_msg("%s %s: %s, HTTP %ld: %s", method, path, d.msg, r.status, r.body);
    json_t *doc = json_loads(r.body, 0, NULL);
    gp_kube_response_free(&r);
    return doc;
}

static long stat_of(struct gp_kube_client *c, const char *key)
{
    json_t *s = call(c, "GET", "/_control/stats", NULL, 200);
    long v = (long)json_integer_value(json_object_get(s, key));
    json_decref(s);
    return v;
}

static void create_node(struct gp_kube_client *c, int i)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n%03d\"},"
             "\"status\":{\"capacity\":{\"nvidia.com/gpu\":8,\"cpu\":\"64\"}}}",
             i);
    json_decref(call(c, "POST", "/api/v1/nodes", b, 201));
}

static void test_list_paginated(void **state)
{
    (void)state;
    struct gp_kube_client *c = client(0);
    for (int i = 0; i < 25; i++)
        create_node(c, i);
    json_t *p1 = call(c, "GET", "/api/v1/nodes?limit=10", NULL, 200);
    json_t *meta = json_object_get(p1, "metadata");
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *cont = json_string_value(json_object_get(meta, "continue"));
    assert_string_equal(json_string_value(json_object_get(p1, "kind")), "NodeList");
    assert_int_equal(json_array_size(json_object_get(p1, "items")), 10);
    assert_int_equal(json_integer_value(json_object_get(meta, "remainingItemCount")), 15);
    assert_non_null(cont);
    json_t *first = json_array_get(json_object_get(p1, "items"), 0);
    assert_null(json_object_get(first, "kind")); /* items carry no kind */
    /* quantities as strings, as the server writes them */
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(first, "status"), "capacity"), "nvidia.com/gpu")),
        "8");
    /* a change between pages is not seen: the pages are one snapshot */
    json_decref(call(c, "DELETE", "/api/v1/nodes/n020", NULL, 200));
    int seen = 10;
    char path[256];
    while (cont) {
        snprintf(path, sizeof path, "/api/v1/nodes?limit=10&continue=%s", cont);
        json_t *p = call(c, "GET", path, NULL, 200);
        json_t *m = json_object_get(p, "metadata");
        assert_string_equal(json_string_value(json_object_get(m, "resourceVersion")), rv);
        seen += (int)json_array_size(json_object_get(p, "items"));
        const char *next = json_string_value(json_object_get(m, "continue"));
        static char keep[128];
        cont = next ? strcpy(keep, next) : NULL;
        json_decref(p);
    }
    assert_int_equal(seen, 25);
    json_decref(p1);
    gp_kube_client_free(c);
}

struct lines_seen {
    int added, modified, deleted, bookmarks, errors;
    long error_code;
    char last_bookmark_rv[32];
};

static int on_line(const char *line, size_t len, void *ctx)
{
    struct lines_seen *s = ctx;
    struct gp_kube_event ev;
    struct gp_diag d = {""};
    if (gp_kube_event_parse(line, len, &ev, &d) != GP_OK)
        fail_msg("%s: %s", d.msg, line);
    switch (ev.type) {
    case GP_KUBE_ADDED:
        s->added++;
        break;
    case GP_KUBE_MODIFIED:
        s->modified++;
        break;
    case GP_KUBE_DELETED:
        s->deleted++;
        break;
    case GP_KUBE_BOOKMARK:
        s->bookmarks++;
        snprintf(s->last_bookmark_rv, sizeof s->last_bookmark_rv, "%s", ev.rv);
        break;
    case GP_KUBE_ERROR:
        s->errors++;
        s->error_code = ev.code;
        break;
    }
    gp_kube_event_clear(&ev);
    return 0;
}

static void test_watch(void **state)
{
    (void)state;
    struct gp_kube_client *c = client(0);
    long rv0 = stat_of(c, "resourceVersion");
    json_decref(call(c, "POST", "/api/v1/namespaces/default/pods",
                     "{\"metadata\":{\"name\":\"w1\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                     "\"image\":\"x\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":1}}}]}}",
                     201));
    json_decref(call(c, "PATCH", "/api/v1/namespaces/default/pods/w1",
                     "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", 200));
    json_decref(call(c, "DELETE", "/api/v1/namespaces/default/pods/w1", NULL, 200));
    long rv1 = stat_of(c, "resourceVersion");
    char path[256];
    snprintf(path, sizeof path,
             "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=%ld",
             rv0);
    struct lines_seen s = {0};
    long status;
    struct gp_diag d = {""};
    double t0 = mono();
    assert_int_equal(gp_kube_stream(c, path, 5, on_line, &s, &status, NULL, &d), GP_OK);
    assert_true(mono() - t0 >= 0.9); /* the server's timeoutSeconds ends it */
    assert_int_equal(status, 200);
    assert_int_equal(s.added, 1);
    assert_int_equal(s.modified, 1);
    assert_int_equal(s.deleted, 1);
    assert_true(s.bookmarks >= 2); /* every 100 ms */
    assert_int_equal(atol(s.last_bookmark_rv), rv1);
    assert_int_equal(s.errors, 0);

    /* compacted: a 200 stream holding one ERROR event with a 410 Status */
    json_decref(call(c, "POST", "/_control/compact", NULL, 200));
    memset(&s, 0, sizeof s);
    assert_int_equal(gp_kube_stream(c, path, 5, on_line, &s, &status, NULL, &d), GP_OK);
    assert_int_equal(status, 200);
    assert_int_equal(s.errors, 1);
    assert_int_equal(s.error_code, 410);
    assert_int_equal(s.added + s.modified + s.deleted + s.bookmarks, 0);

    /* a dropped connection: GP_EIO after the events it got */
    snprintf(path, sizeof path, "/api/v1/nodes?watch=1&timeoutSeconds=5");
    json_decref(call(c, "POST", "/_control/fault", "{\"drop_after\":3,\"count\":1}", 200));
    memset(&s, 0, sizeof s);
    assert_int_equal(gp_kube_stream(c, path, 5, on_line, &s, &status, NULL, &d), GP_EIO);
    assert_int_equal(s.added, 3);
    assert_non_null(strstr(d.msg, "/api/v1/nodes?watch=1"));
    gp_kube_client_free(c);
}

static void test_retries(void **state)
{
    (void)state;
    struct gp_kube_client *c = client(0);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    /* 429 with Retry-After: 1 is waited out */
    json_decref(call(c, "POST", "/_control/fault",
                     "{\"status\":429,\"retry_after_s\":1,\"count\":1,\"match\":\"/nodes/n001\"}",
                     200));
    double t0 = mono();
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes/n001", NULL, NULL, &r, &d), GP_OK);
    double waited = mono() - t0;
    assert_int_equal(r.status, 200);
    assert_int_equal(r.attempts, 2);
    assert_true(waited >= 1.0 && waited < 3.0);
    gp_kube_response_free(&r);
    /* 5xx retried with back-off */
    json_decref(call(c, "POST", "/_control/fault",
                     "{\"status\":500,\"count\":2,\"match\":\"/nodes/n002\"}", 200));
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes/n002", NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.attempts, 3);
    gp_kube_response_free(&r);
    /* 5xx past max_retries: the last answer comes back */
    json_decref(call(c, "POST", "/_control/fault",
                     "{\"status\":503,\"count\":100,\"match\":\"/nodes/n003\"}", 200));
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes/n003", NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 503);
    assert_int_equal(r.attempts, 6);
    assert_int_equal(gp_kube_status_err(r.status, r.body, "GET", "/api/v1/nodes/n003", &d), GP_EIO);
    gp_kube_response_free(&r);
    json_decref(call(c, "POST", "/_control/clear", NULL, 200));
    /* other 4xx are not retried: one request reaches the server */
    long before = stat_of(c, "requests");
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes/nope", NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 404);
    assert_int_equal(r.attempts, 1);
    assert_int_equal(stat_of(c, "requests"), before + 1);
    assert_int_equal(gp_kube_status_err(r.status, r.body, "GET", "/api/v1/nodes/nope", &d),
                     GP_ENOTFOUND);
    assert_string_equal(d.msg, "GET /api/v1/nodes/nope: HTTP 404: nodes \"nope\" not found");
    gp_kube_response_free(&r);
    gp_kube_client_free(c);

    /* the response cap */
    c = client(2000);
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes", NULL, NULL, &r, &d), GP_ELIMIT);
    assert_non_null(strstr(d.msg, "larger than 2000 bytes"));
    gp_kube_client_free(c);
}

static void test_binding(void **state)
{
    (void)state;
    struct gp_kube_client *c = client(0);
    json_t *pod = call(c, "POST", "/api/v1/namespaces/default/pods",
                       "{\"metadata\":{\"name\":\"b1\"},\"spec\":{\"schedulerName\":\"gpuplane\","
                       "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                       201);
    const char *bind =
        "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"b1\","
        "\"namespace\":\"default\"},\"target\":{\"kind\":\"Node\",\"name\":\"n001\"}}";
    json_t *st = call(c, "POST", "/api/v1/namespaces/default/pods/b1/binding", bind, 201);
    char *s = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(
        s, "{\"apiVersion\":\"v1\",\"code\":201,\"kind\":\"Status\",\"metadata\":{},\"status\":"
           "\"Success\"}");
    free(s);
    json_decref(st);
    st = call(c, "POST", "/api/v1/namespaces/default/pods/b1/binding", bind, 409);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "Operation cannot be fulfilled on pods/binding \"b1\": pod b1 is already "
                        "assigned to node \"n001\"");
    json_decref(st);
    /* a PUT with the create's (now stale) resourceVersion */
    char *body = json_dumps(pod, JSON_COMPACT);
    st = call(c, "PUT", "/api/v1/namespaces/default/pods/b1", body, 409);
    assert_non_null(
        strstr(json_string_value(json_object_get(st, "message")), "the object has been modified"));
    free(body);
    json_decref(st);
    json_decref(pod);
    gp_kube_client_free(c);
}

/* --- pure rules -------------------------------------------------------- */

static void test_bucket(void **state)
{
    (void)state;
    struct gp_kube_bucket b;
    gp_kube_bucket_init(&b, 10, 3, 100.0);
    assert_true(gp_kube_bucket_take(&b, 100.0) == 0); /* the burst */
    assert_true(gp_kube_bucket_take(&b, 100.0) == 0);
    assert_true(gp_kube_bucket_take(&b, 100.0) == 0);
    assert_float_equal(gp_kube_bucket_take(&b, 100.0), 0.1, 1e-9);
    assert_float_equal(gp_kube_bucket_take(&b, 100.0), 0.2, 1e-9);
    assert_float_equal(gp_kube_bucket_take(&b, 100.3), 0.0, 1e-9); /* paid back */
    assert_true(gp_kube_bucket_take(&b, 200.0) == 0);              /* refilled, to 3 at most */
    assert_true(gp_kube_bucket_take(&b, 200.0) == 0);
    assert_true(gp_kube_bucket_take(&b, 200.0) == 0);
    assert_true(gp_kube_bucket_take(&b, 200.0) > 0);
    gp_kube_bucket_init(&b, 0, 0, 0);
    for (int i = 0; i < 1000; i++)
        assert_true(gp_kube_bucket_take(&b, 0) == 0);
}

static void test_backoff(void **state)
{
    (void)state;
    struct gp_rng r1, r2;
    gp_rng_seed(&r1, 7);
    gp_rng_seed(&r2, 7);
    for (unsigned a = 1; a <= 12; a++) {
        double d = gp_kube_backoff_s(0.2, 30, a, &r1);
        double cap = 0.2 * (double)(1u << (a - 1));
        if (cap > 30)
            cap = 30;
        assert_true(d >= cap / 2 && d <= cap);
        assert_true(d == gp_kube_backoff_s(0.2, 30, a, &r2)); /* seeded */
    }
    assert_true(gp_kube_retry_after_parse("3") == 3);
    assert_true(gp_kube_retry_after_parse(" 0\r\n") == 0);
    assert_true(gp_kube_retry_after_parse("Wed, 21 Oct 2015 07:28:00 GMT") < 0);
    assert_true(gp_kube_retry_after_parse("-1") < 0);
    assert_true(gp_kube_retry_after_parse("1x") < 0);
    assert_true(gp_kube_status_retryable(429) && gp_kube_status_retryable(500) &&
                gp_kube_status_retryable(503));
    assert_false(gp_kube_status_retryable(501) || gp_kube_status_retryable(404) ||
                 gp_kube_status_retryable(409) || gp_kube_status_retryable(410));
}

static int count_line(const char *line, size_t len, void *ctx)
{
    (void)line;
    *(size_t *)ctx += len;
    return 0;
}

static void test_lines(void **state)
{
    (void)state;
    struct gp_kube_lines l;
    struct gp_diag d = {""};
    size_t total = 0;
    gp_kube_lines_init(&l, 8);
    /* a line cut across chunks, CRLF, empty lines skipped */
    assert_int_equal(gp_kube_lines_feed(&l, "abc", 3, count_line, &total, &d), GP_OK);
    assert_int_equal(gp_kube_lines_feed(&l, "de\r\n\n\nxy\n", 9, count_line, &total, &d), GP_OK);
    assert_int_equal(total, 7);
    assert_int_equal(gp_kube_lines_feed(&l, "12345678", 8, count_line, &total, &d), GP_OK);
    assert_int_equal(gp_kube_lines_feed(&l, "9", 1, count_line, &total, &d), GP_ELIMIT);
    assert_string_equal(d.msg, "watch: a line longer than 8 bytes");
    gp_kube_lines_free(&l);
    struct gp_kube_event ev;
    const char *bad[] = {"{", "{\"type\":\"ADDED\"}", "{\"type\":\"X\",\"object\":{}}",
                         "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
                         "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}"};
    for (size_t i = 0; i < 5; i++)
        assert_int_not_equal(gp_kube_event_parse(bad[i], strlen(bad[i]), &ev, &d), GP_OK);
    const char *err = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                      "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
                      "version: 2 (315)\",\"reason\":\"Expired\",\"code\":410}}";
    assert_int_equal(gp_kube_event_parse(err, strlen(err), &ev, &d), GP_OK);
    assert_int_equal(ev.type, GP_KUBE_ERROR);
    assert_int_equal(ev.code, 410);
    assert_string_equal(ev.message, "too old resource version: 2 (315)");
    gp_kube_event_clear(&ev);
}

/* gp_kube_scan_rv agrees with jansson: what it finds is what
 * gp_kube_meta finds in the parsed document; it finds nothing only where
 * the document has no version; and wherever jansson refuses the text it
 * answers -1 (the caller parses then), on every cut of a real answer too. */
static void check_scan(const char *text, size_t len)
{
    char rv[64];
    int got = gp_kube_scan_rv(text, len, rv, sizeof rv);
    json_t *doc = json_loadb(text, len, 0, NULL);
    const char *want = json_is_object(doc) ? gp_kube_meta(doc, "resourceVersion") : NULL;
    if (!doc && got != -1)
        fail_msg("scan said %d of text jansson refuses: %.*s", got, (int)len, text);
    if (got == 1 && (!want || strcmp(want, rv) != 0))
        fail_msg("scan found \"%s\", jansson %s: %.*s", rv, want ? want : "none", (int)len, text);
    if (got == 0 && want)
        fail_msg("scan found none, jansson \"%s\": %.*s", want, (int)len, text);
    json_decref(doc);
}

static void test_scan_rv(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"42\"}}",
        "{\"spec\":{\"metadata\":{\"resourceVersion\":\"9\"}},\"metadata\":{\"name\":\"a\"}}",
        "{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}",
        "{\"metadata\":{\"resourceVersion\":\"1\"},\"metadata\":{\"name\":\"b\"}}",
        "{\"metadata\":{\"resourceVersion\":7}}",
        (" { \"a\" : [ 1 , -2.5e3 , true , null , { } , [ ] , \"\\u00e9\\n\" ] ,"
         " \"metadata\" : { \"resourceVersion\" : \"77\" } } "),
        "{\"a\":\"\xc3\xa9\",\"metadata\":{\"resourceVersion\":\"5\"}}",
        "{\"metadata\":{\"resourceVersion\":\"5\"}} x",
        "{\"metadata\":{\"resourceVersion\":\"5\"}",
        "{\"a\":\"\\x\",\"metadata\":{\"resourceVersion\":\"5\"}}",
        "{\"a\":\"\xff\",\"metadata\":{\"resourceVersion\":\"5\"}}",
        "{\"a\":\"\x01\",\"metadata\":{\"resourceVersion\":\"5\"}}",
        "{\"a\":tru,\"metadata\":{\"resourceVersion\":\"5\"}}",
        "{\"a\":1,,\"metadata\":{\"resourceVersion\":\"5\"}}",
        "[{\"metadata\":{\"resourceVersion\":\"5\"}}]",
        "{}",
        "",
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
        check_scan(docs[i], strlen(docs[i]));
    char rv[64];
    assert_int_equal(gp_kube_scan_rv(docs[0], strlen(docs[0]), rv, sizeof rv), 1);
    assert_string_equal(rv, "42");
    assert_int_equal(gp_kube_scan_rv(docs[1], strlen(docs[1]), rv, sizeof rv), 0);
    assert_int_equal(gp_kube_scan_rv(docs[2], strlen(docs[2]), rv, sizeof rv), 1);
    assert_string_equal(rv, "2"); /* the last, as jansson keeps it */
    assert_int_equal(gp_kube_scan_rv(docs[0], strlen(docs[0]), rv, 2), -1); /* too long */
    /* a pod as the double answers a patch, cut at every length */
    const char *pod =
        "{\"metadata\":{\"name\":\"pod-000001\",\"namespace\":\"default\",\"annotations\":{"
        "\"gpuplane.io/node\":\"node-00001\",\"gpuplane.io/gpus\":\"0\"},\"uid\":\"00000000-"
        "0000-4000-8000-000000000002\",\"creationTimestamp\":\"2026-12-01T23:00:00Z\","
        "\"resourceVersion\":\"100002\"},\"spec\":{\"schedulerName\":\"gpuplane\",\"containers\":"
        "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
        "\"status\":{\"phase\":\"Pending\"},\"kind\":\"Pod\",\"apiVersion\":\"v1\"}";
    size_t n = strlen(pod);
    for (size_t cut = 0; cut <= n; cut++)
        check_scan(pod, cut);
    assert_int_equal(gp_kube_scan_rv(pod, n, rv, sizeof rv), 1);
    assert_string_equal(rv, "100002");
}

/* Each byte a string's reader must look at (a quote, an escape, a control
 * byte, UTF-8, DEL), at every place of strings up to 40 long (the scan
 * passes plain bytes eight at a time): in a member before metadata, the
 * scan finds the version wherever jansson reads the text and refuses it
 * wherever jansson refuses it; in the version itself, it finds jansson's
 * unless the version has an escape (then -1: parse the whole). */
static void test_scan_string_places(void **state)
{
    (void)state;
    const char *special[] = {"\\n",      "\\\"", "\\\\", "\\u0041", "\x01", "\x1f",
                             "\xc3\xa9", "\x7f", "\"",   " ",       "\xff"};
    char str[64], text[256], rv[64];
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t k = 0; k < sizeof special / sizeof *special; k++) {
                size_t sl = strlen(special[k]), n = 0;
                for (size_t i = 0; i < at; i++)
                    str[n++] = (char)('a' + i % 26);
                memcpy(str + n, special[k], sl);
                n += sl;
                for (size_t i = at; i < len; i++)
                    str[n++] = (char)('a' + i % 26);
                str[n] = '\0';
                for (int where = 0; where < 2; where++) {
                    int tl =
                        snprintf(text, sizeof text,
                                 where ? "{\"metadata\":{\"resourceVersion\":\"%s\"}}"
                                       : "{\"k\":\"%s\",\"metadata\":{\"resourceVersion\":\"7\"}}",
                                 str);
                    check_scan(text, (size_t)tl);
                    json_t *doc = json_loadb(text, (size_t)tl, 0, NULL);
                    int got = gp_kube_scan_rv(text, (size_t)tl, rv, sizeof rv);
                    bool escaped = where && strchr(str, '\\');
                    if (doc && !escaped &&
                        (got != 1 || strcmp(rv, gp_kube_meta(doc, "resourceVersion")) != 0))
                        fail_msg("scan said %d of text jansson reads: %s", got, text);
                    json_decref(doc);
                }
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_paginated),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_retries),
        cmocka_unit_test(test_binding),
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_scan_rv),
        cmocka_unit_test(test_scan_string_places),
    };
    return cmocka_run_group_tests(tests, kd_start, kd_stop);
}
