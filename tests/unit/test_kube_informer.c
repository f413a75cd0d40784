/* test_kube_informer.c - informers (kube/informer.c) against the API
 * server double: a paginated list delivered as ADDED, a watch's changes
 * and bookmarks, a gap closed by a compaction (the 410 ERROR event, the
 * re-list and its diff: what was created, changed and deleted in the gap
 * arrives once each, nothing else), a dropped watch resumed from the last
 * resourceVersion with nothing delivered twice, a re-list that fails on
 * a later page followed by a fresh list (never a watch from the failed
 * list's RV), a list whose continue token expires between its pages made
 * again whole, a watch answered 429/503 watched again, not re-listed, and
 * a watch event's unchanged members shared with the stored version. Every
 * change is logged and the log compared whole. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "kube/informer.h"
#include "kube_double.h"
#include "kube_changes.h"

static void on_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    kc_add(ctx, type, obj, old);
}

/* Pods PREFIX1 .. PREFIXn. */
static void pods(struct gp_kube_client *c, const char *prefix, int n)
{
    char name[16];
    for (int i = 1; i <= n; i++) {
        snprintf(name, sizeof name, "%s%d", prefix, i);
        kc_pod(c, name);
    }
}

static long double_stat(struct gp_kube_client *c, const char *what)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/_control/stats", NULL, NULL, &r, &d), GP_OK);
    json_t *s = json_loads(r.body, 0, NULL);
    long v = (long)json_integer_value(json_object_get(s, what));
    json_decref(s);
    gp_kube_response_free(&r);
    return v;
}

static long double_rv(struct gp_kube_client *c)
{
    return double_stat(c, "resourceVersion");
}

static void test_informer(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = kd_client();
    struct kc_log log = {.len = 0};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    pods(admin, "p", 7);
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 3, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    assert_string_equal(kc_take(&log), "ADDED p1\nADDED p2\nADDED p3\nADDED p4\nADDED p5\nADDED "
                                       "p6\nADDED p7\n");
    assert_int_equal(gp_kube_informer_stats(inf).pages, 3);
    assert_int_equal(gp_kube_informer_count(inf), 7);

    /* a watch: the changes in order, then bookmarks bring the RV up */
    kc_pod(admin, "p8");
    kd_call(admin, "PATCH", "/api/v1/namespaces/default/pods/p1",
            "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}", 200);
    kd_call(admin, "DELETE", "/api/v1/namespaces/default/pods/p2", NULL, 200);
    kd_call(admin, "POST", "/api/v1/nodes", "{\"metadata\":{\"name\":\"n1\"}}", 201);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(kc_take(&log), "ADDED p8\nMODIFIED p1\nDELETED p2\n");
    assert_true(gp_kube_informer_stats(inf).bookmarks >= 2);
    assert_int_equal(atol(gp_kube_informer_rv(inf)), double_rv(admin)); /* the node's RV */
    assert_non_null(gp_kube_informer_get(inf, "default", "p1"));
    assert_null(gp_kube_informer_get(inf, "default", "p2"));

    /* a gap closed by a compaction: 410, re-list, the diff once */
    kc_pod(admin, "p9");
    kd_call(admin, "DELETE", "/api/v1/namespaces/default/pods/p3", NULL, 200);
    kd_call(admin, "PATCH", "/api/v1/namespaces/default/pods/p4",
            "{\"metadata\":{\"labels\":{\"x\":\"2\"}}}", 200);
    kc_pod(admin, "p10");
    kd_call(admin, "DELETE", "/api/v1/namespaces/default/pods/p10", NULL, 200); /* unseen */
    kd_call(admin, "POST", "/_control/compact", NULL, 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_int_equal(gp_kube_informer_stats(inf).relists_410, 1);
    assert_string_equal(kc_take(&log), "DELETED p3\nMODIFIED p4\nADDED p9\n");
    assert_int_equal(gp_kube_informer_count(inf), 7);            /* p1 p4-p9 */
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK); /* and nothing more */
    assert_string_equal(kc_take(&log), "");

    /* a dropped watch resumes from the last RV: p11 once, then p12 */
    kd_call(admin, "POST", "/_control/fault", "{\"drop_after\":1,\"count\":1}", 200);
    kc_pod(admin, "p11");
    kc_pod(admin, "p12");
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_EIO);
    assert_string_equal(kc_take(&log), "ADDED p11\n");
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(kc_take(&log), "ADDED p12\n");
    struct gp_kube_informer_stats st = gp_kube_informer_stats(inf);
    assert_int_equal(st.drops, 1);
    assert_int_equal(st.lists, 2);
    assert_int_equal(gp_kube_informer_count(inf), 9);
    gp_kube_informer_free(inf);

    /* PriorityClasses by their path alone */
    kd_call(admin, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
            "{\"metadata\":{\"name\":\"high\"},\"value\":1000}", 201);
    assert_int_equal(gp_kube_informer_new(c, "/apis/scheduling.k8s.io/v1/priorityclasses", 0,
                                          on_change, &log, &inf, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK); /* lists first */
    assert_string_equal(kc_take(&log), "ADDED high\n");
    assert_non_null(gp_kube_informer_get(inf, "", "high"));
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

/* A re-list after a 410 whose second page fails (a 5xx past the client's
 * retries): the gap's deletion and creation must still arrive once the
 * API answers again, as client-go's reflector lists again after any list
 * error. With the list's RV kept from its first page, the next call would
 * watch from there and p1's deletion and p8's creation would be lost. */
static void test_relist_page_fails(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = kd_client();
    struct kc_log log = {.len = 0};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    pods(admin, "q", 7);
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 3, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    kc_take(&log);
    kd_call(admin, "DELETE", "/api/v1/namespaces/default/pods/q1", NULL, 200);
    kc_pod(admin, "q8");
    kd_call(admin, "POST", "/_control/compact", NULL, 200);
    /* the watch (410) and the list's first page pass, its later pages fail */
    kd_call(admin, "POST", "/_control/fault", "{\"match\":\"/api/v1/pods\",\"count\":2}", 200);
    kd_call(admin, "POST", "/_control/fault",
            "{\"status\":500,\"match\":\"/api/v1/pods\",\"count\":50}", 200);
    assert_int_not_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(gp_kube_informer_rv(inf), "");
    kd_call(admin, "POST", "/_control/clear", NULL, 200);
    /* the next call lists again (as run.c's feed does after a drop) */
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(kc_take(&log), "DELETED q1\nADDED q8\n");
    assert_null(gp_kube_informer_get(inf, "default", "q1"));
    assert_non_null(gp_kube_informer_get(inf, "default", "q8"));
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

/* The gap between a list's pages: once the continue page has reached the
 * double (held there by a delay fault), a pod is created and the store
 * compacted, so that page is answered 410 Expired. */
struct gap {
    long requests0;
    int err;
};

static void *gap_main(void *arg)
{
    struct gap *g = arg;
    struct gp_kube_client *c = kd_client();
    struct timespec ts = {0, 10 * 1000 * 1000};
    int i = 0;
    /* the first page and the continue page counted (the stats request
     * itself is a control request, not counted) */
    while (double_stat(c, "requests") < g->requests0 + 2 && i++ < 2000)
        nanosleep(&ts, NULL);
    g->err = i >= 2000;
    kc_pod(c, "r9");
    kd_call(c, "POST", "/_control/compact", NULL, 200);
    gp_kube_client_free(c);
    return NULL;
}

/* A list whose snapshot is compacted away between its pages: the continue
 * page is answered 410 Expired and the list is made again whole, in one
 * answer without limit (client-go's pager, FullListIfExpired): every pod,
 * the one created in the gap too, delivered once, and the store at the
 * whole list's resourceVersion. Before, the list failed with the 410. */
static void test_list_continue_expired(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = kd_client();
    struct kc_log log = {.len = 0};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    pods(admin, "r", 5);
    assert_int_equal(
        gp_kube_informer_new(c, "/api/v1/namespaces/default/pods", 3, on_change, &log, &inf, &d),
        GP_OK);
    /* the first page passes (a fault of no effect taken), the second waits
     * (faults match the path: the query is not part of it) */
    kd_call(admin, "POST", "/_control/fault",
            "{\"match\":\"/api/v1/namespaces/default/pods\",\"count\":1}", 200);
    kd_call(admin, "POST", "/_control/fault",
            "{\"delay_ms\":3000,\"match\":\"/api/v1/namespaces/default/pods\",\"count\":1}", 200);
    struct gap g = {.requests0 = double_stat(admin, "requests")};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, gap_main, &g), 0);
    enum gp_err err = gp_kube_informer_list(inf, &d);
    pthread_join(th, NULL);
    assert_int_equal(g.err, 0);
    assert_int_equal(err, GP_OK);
    struct gp_kube_informer_stats st = gp_kube_informer_stats(inf);
    assert_int_equal(st.full_lists, 1);
    assert_int_equal(st.lists, 1);
    /* every pod of the namespace once (earlier tests' too), r9 among them */
    const char *got = kc_take(&log);
    for (int i = 1; i <= 9; i++) {
        if (i > 5 && i < 9)
            continue;
        char line[32];
        snprintf(line, sizeof line, "ADDED r%d\n", i);
        const char *at = strstr(got, line);
        assert_non_null(at);
        assert_null(strstr(at + 1, line));
    }
    size_t lines = 0;
    for (const char *p = got; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, gp_kube_informer_count(inf)); /* all ADDED, none twice */
    assert_null(strstr(got, "MODIFIED"));
    assert_null(strstr(got, "DELETED"));
    char rv[32];
    snprintf(rv, sizeof rv, "%ld", double_rv(admin));
    assert_string_equal(gp_kube_informer_rv(inf), rv);
    kd_call(admin, "POST", "/_control/clear", NULL, 200);
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

/* A watch answered 429 (API Priority and Fairness, with a Retry-After) or
 * 503 (without): GP_EIO with the Retry-After to wait, the next watch from
 * the same resourceVersion - no re-list (client-go: reflector.go
 * isWatchErrorRetriable, rest with_retry.go checkWait) - and what was
 * created meanwhile delivered once. */
static void test_watch_throttled(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = kd_client();
    struct kc_log log = {.len = 0};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    kc_pod(admin, "t1");
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 0, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    assert_non_null(strstr(kc_take(&log), "ADDED t1\n")); /* (and earlier tests' pods) */
    char rv[64];
    snprintf(rv, sizeof rv, "%s", gp_kube_informer_rv(inf));
    struct gp_kube_informer_stats st0 = gp_kube_informer_stats(inf);
    kd_call(admin, "POST", "/_control/fault",
            "{\"status\":429,\"retry_after_s\":3,\"match\":\"/api/v1/pods\",\"count\":1}", 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_EIO);
    assert_true(gp_kube_informer_retry_after_s(inf) == 3);
    assert_string_equal(gp_kube_informer_rv(inf), rv);
    kd_call(admin, "POST", "/_control/fault",
            "{\"status\":503,\"match\":\"/api/v1/pods\",\"count\":1}", 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_EIO);
    assert_true(gp_kube_informer_retry_after_s(inf) < 0);
    kc_pod(admin, "t2");
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(kc_take(&log), "ADDED t2\n");
    struct gp_kube_informer_stats st = gp_kube_informer_stats(inf);
    assert_int_equal(st.lists, st0.lists); /* never listed again */
    assert_int_equal(st.watch_retries, 2);
    assert_int_equal(st.watches, st0.watches + 3);
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

/* What the change callback saw of the versions' members: whether the
 * spec and its containers are the stored version's (shared) and each
 * version as the server holds it. */
struct shared_seen {
    struct gp_kube_client *c;
    int changes, spec_shared, containers_shared;
};

static void on_shared(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    struct shared_seen *ss = ctx;
    if (strcmp(gp_kube_meta(obj, "name"), "s1") != 0)
        return; /* the other tests' pods (one double for the group) */
    ss->changes++;
    if (type != GP_KUBE_MODIFIED)
        return;
    const json_t *spec = json_object_get(obj, "spec"), *ospec = json_object_get(old, "spec");
    ss->spec_shared += spec == ospec;
    ss->containers_shared +=
        json_object_get(spec, "containers") == json_object_get(ospec, "containers");
    /* the version delivered is the server's, member for member */
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(
        gp_kube_request(ss->c, "GET", "/api/v1/namespaces/default/pods/s1", NULL, NULL, &r, &d),
        GP_OK);
    json_t *cur = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    gp_kube_response_free(&r);
    if (!cur)
        return; /* gone since */
    /* (a list's items carry no kind and apiVersion, as the API server's) */
    json_t *got = json_copy((json_t *)(uintptr_t)obj);
    json_object_del(cur, "kind");
    json_object_del(cur, "apiVersion");
    json_object_del(got, "kind");
    json_object_del(got, "apiVersion");
    if (strcmp(gp_kube_meta(cur, "resourceVersion"), gp_kube_meta(obj, "resourceVersion")) == 0)
        assert_true(json_equal(cur, got));
    json_decref(got);
    json_decref(cur);
}

/* A watch event's members whose text is the stored version's are that
 * version's values (jload.h's gp_kube_jload_reuse): an annotation patch
 * shares the spec, a Binding (spec.nodeName added) the spec's containers;
 * what a re-list stored has no marks, so the next event shares nothing. */
static void test_shared_versions(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = kd_client();
    struct shared_seen ss = {.c = admin};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 0, on_shared, &ss, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    kd_call(admin, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"s1\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\"}]}}",
            201);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    kd_call(admin, "PATCH", "/api/v1/namespaces/default/pods/s1",
            "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}", 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_int_equal(ss.changes, 2);
    assert_int_equal(ss.spec_shared, 1);
    kd_call(admin, "POST", "/api/v1/namespaces/default/pods/s1/binding",
            "{\"metadata\":{\"name\":\"s1\"},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}", 201);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_int_equal(ss.changes, 3);
    assert_int_equal(ss.spec_shared, 1); /* the spec changed */
    assert_int_equal(ss.containers_shared, 2);
    unsigned long reused = gp_kube_informer_stats(inf).reused;
    assert_true(reused >= 3);
    /* a re-list's versions carry no marks: the next event reads all */
    kd_call(admin, "PATCH", "/api/v1/namespaces/default/pods/s1",
            "{\"metadata\":{\"annotations\":{\"a\":\"2\"}}}", 200);
    kd_call(admin, "POST", "/_control/compact", NULL, 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_int_equal(gp_kube_informer_stats(inf).relists_410, 1);
    kd_call(admin, "PATCH", "/api/v1/namespaces/default/pods/s1",
            "{\"metadata\":{\"annotations\":{\"a\":\"3\"}}}", 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_int_equal(ss.changes, 5);
    assert_int_equal(gp_kube_informer_stats(inf).reused, reused);
    assert_int_equal(ss.spec_shared, 1);
    /* marked again from there */
    kd_call(admin, "PATCH", "/api/v1/namespaces/default/pods/s1",
            "{\"metadata\":{\"annotations\":{\"a\":\"4\"}}}", 200);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_int_equal(ss.changes, 6);
    assert_int_equal(ss.spec_shared, 2);
    kd_call(admin, "DELETE", "/api/v1/namespaces/default/pods/s1", NULL, 200);
    kd_call(admin, "POST", "/_control/finish_deletions", NULL, 200); /* bound: graceful */
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_null(gp_kube_informer_get(inf, "default", "s1"));
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer),
        cmocka_unit_test(test_relist_page_fails),
        cmocka_unit_test(test_list_continue_expired),
        cmocka_unit_test(test_watch_throttled),
        cmocka_unit_test(test_shared_versions),
    };
    return cmocka_run_group_tests(tests, kd_start, kd_stop);
}
