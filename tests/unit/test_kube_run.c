/* test_kube_run.c - the scheduler's threads (kube/run.c) against the API
 * server double: informer threads watching while pods arrive, /metrics
 * (fetched over HTTP while it runs) counting the binds, the GPUs
 * allocated and the queues; and two replicas under leader election on one
 * Lease: every pod bound once, all by one replica, the other standing by;
 * and faults on demand (429, 500, slow answers, cut watches) ridden out. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <unistd.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "kube/metrics.h"
#include "kube/run.h"

struct later {
    struct world *w;
    int from, to;
};

static void *create_later(void *arg)
{
    struct later *l = arg;
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    for (int i = l->from; i <= l->to; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(l->w, name, 1);
    }
    return NULL;
}

static void run_opts(struct gp_kube_run_opts *o, struct gp_kube_config *cfg)
{
    memset(o, 0, sizeof *o);
    *cfg = (struct gp_kube_config){.server = kd_server, .ns = "default"};
    o->cfg = cfg;
    gp_kube_client_opts_default(&o->client);
    o->client.qps = 0;
    o->client.backoff_base_s = 0.01;
    gp_kube_sched_opts_default(&o->sched);
    gp_kube_lease_opts_default(&o->lease);
    o->lease.duration_s = 2;
    o->lease.renew_deadline_s = 1.5;
    o->lease.retry_period_s = 0.2;
    o->max_s = 20;
}

/* /metrics scraped while gp_kube_run runs: the port read from its log
 * line, then GET until the exposition counts `want` pods scheduled (or
 * 15 s pass); the run told to stop then. */
struct scrape {
    FILE *log; /* the read end of the run's log */
    unsigned want;
    volatile sig_atomic_t stop;
    char body[65536];
    size_t len;
    bool found;
};

static size_t on_body(char *b, size_t sz, size_t n, void *arg)
{
    struct scrape *sc = arg;
    size_t k = sz * n;
    if (sc->len + k < sizeof sc->body) {
        memcpy(sc->body + sc->len, b, k);
        sc->len += k;
        sc->body[sc->len] = '\0';
    }
    return k;
}

static void *scrape_main(void *arg)
{
    struct scrape *sc = arg;
    unsigned port = 0;
    if (fscanf(sc->log, "gpuplane schedule: /metrics, /healthz and /readyz on port %u", &port) !=
        1) {
        sc->stop = 1;
        return NULL;
    }
    char url[64], want[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", port);
    snprintf(want, sizeof want, GP_KM_DECISIONS "{result=\"scheduled\"} %u\n", sc->want);
    for (int i = 0; i < 300 && !sc->found; i++) {
        CURL *c = curl_easy_init();
        sc->len = 0;
        sc->body[0] = '\0';
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, sc);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
        if (curl_easy_perform(c) == CURLE_OK && strstr(sc->body, want))
            sc->found = true;
        curl_easy_cleanup(c);
        if (!sc->found)
            nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    sc->stop = 1;
    return NULL;
}

static void test_run_watch(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    for (int i = 1; i <= 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 1);
    }
    struct later l = {&w, 5, 8};
    pthread_t th;
    pthread_create(&th, NULL, create_later, &l);
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    run_opts(&o, &cfg);
    /* stopped once /metrics counts the 8 binds (by the scraper) */
    static struct scrape sc;
    memset(&sc, 0, sizeof sc);
    sc.want = 8;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    o.log = fdopen(fd[1], "w");
    sc.log = fdopen(fd[0], "r");
    assert_true(o.log && sc.log);
    o.metrics_addr = "127.0.0.1:0";
    o.stop = &sc.stop;
    pthread_t ts;
    pthread_create(&ts, NULL, scrape_main, &sc);
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    pthread_join(th, NULL);
    fclose(o.log);
    pthread_join(ts, NULL);
    fclose(sc.log);
    if (!sc.found)
        fail_msg("/metrics never counted 8 pods scheduled; last:\n%s", sc.body);
    /* the same exposition: 8 of the 8 GPUs allocated, nothing queued, no
     * failure, no violation */
    const char *lines[] = {
        GP_KM_GPU_ALLOCATED "{pool=\"default\"} 8\n",
        GP_KM_GPU_CAPACITY "{pool=\"default\"} 8\n",
        GP_KM_DECISIONS "{result=\"error\"} 0\n",
        GP_KM_PENDING "{queue=\"active\"} 0\n",
        GP_KM_PENDING "{queue=\"backoff\"} 0\n",
        GP_KM_BIND_FAILURES "{reason=\"conflict\"} 0\n",
        GP_KM_AUDIT_VIOLATIONS "{resource=\"gpu\"} 0\n",
        GP_KM_BIND_S "_count 8\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(sc.body, lines[i]))
            fail_msg("/metrics lacks %s", lines[i]);
    assert_int_equal(res.stats.binds, 8);
    assert_int_equal(res.stats.audit_violations, 0);
    assert_int_equal(w_stat(&w, "bindings"), 8);
    assert_true(w_stat(&w, "watches") >= 2);
    w_check_distinct(&w);
    w_close(&w);
}

/* Faults on demand while it runs: 429 with Retry-After on Bindings, 500 on
 * patches, slow answers, watches cut after two events: every pod bound
 * once, the audit clean. */
static void test_run_faults(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 8);
    w_node(&w, "n2", 8);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":429,\"retry_after_s\":1,\"count\":2,\"match\":\"/binding\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":500,\"count\":3,\"match\":\"/pods/p\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"delay_ms\":150,\"count\":4,\"match\":\"/pods\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"drop_after\":2,\"count\":3,\"match\":\"/pods\"}", 200);
    for (int i = 1; i <= 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 1);
    }
    struct later l = {&w, 5, 12};
    pthread_t th;
    pthread_create(&th, NULL, create_later, &l);
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    run_opts(&o, &cfg);
    o.stop_after_binds = 12;
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    pthread_join(th, NULL);
    assert_int_equal(res.stats.binds, 12);
    assert_int_equal(res.stats.audit_violations, 0);
    assert_int_equal(w_stat(&w, "bindings"), 12);
    w_check_distinct(&w);
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&w);
}

struct replica {
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    struct gp_kube_run_result res;
    enum gp_err err;
};

static void *replica_main(void *arg)
{
    struct replica *r = arg;
    struct gp_diag d = {""};
    r->err = gp_kube_run(&r->o, &r->res, &d);
    return NULL;
}

static void test_two_replicas(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 16);
    for (int i = 1; i <= 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 1);
    }
    struct replica r[2];
    pthread_t th[2];
    const char *ids[2] = {"replica-a", "replica-b"};
    for (int i = 0; i < 2; i++) {
        run_opts(&r[i].o, &r[i].cfg);
        r[i].o.leader_elect = true;
        r[i].o.max_s = 2.5;
        r[i].o.sched.identity = r[i].o.lease.identity = ids[i];
        pthread_create(&th[i], NULL, replica_main, &r[i]);
    }
    struct later l = {&w, 7, 10};
    pthread_t tl;
    pthread_create(&tl, NULL, create_later, &l);
    pthread_join(tl, NULL);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(r[i].err, GP_OK);
        assert_int_equal(r[i].res.stats.audit_violations, 0);
    }
    assert_int_equal(r[0].res.stats.binds + r[1].res.stats.binds, 10);
    assert_true(r[0].res.stats.binds == 0 || r[1].res.stats.binds == 0);
    assert_int_equal(w_stat(&w, "bindings"), 10);
    w_check_distinct(&w);
    w_close(&w);
}

/* The double's writes other than the Lease's, from its request log. */
static long writes_not_lease(struct gp_kube_client *c)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/_control/requests", NULL, NULL, &r, &d), GP_OK);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    long n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "requests"), i, e)
    {
        const char *m = json_string_value(json_object_get(e, "method"));
        const char *p = json_string_value(json_object_get(e, "path"));
        n += m && p && strcmp(m, "GET") != 0 && !strstr(p, "/leases");
    }
    json_decref(j);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One cycle far longer than the renew deadline (40 unschedulable pods, a
 * status PATCH and an Event each, at 10 requests/s: 8 s; the renew
 * deadline 1.5 s): the Lease is renewed all along (its own thread, as
 * client-go's LeaderElector renews in its own goroutine), and once the
 * Lease cannot be renewed (500 on every Lease request) the cycle writes
 * nothing after the renew deadline (kube-scheduler stops at
 * OnStoppedLeading), the rest of its pods left unwritten. */
static void test_lease_long_cycle(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 1);
    for (int i = 1; i <= 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 2); /* never fits */
    }
    struct replica r;
    run_opts(&r.o, &r.cfg);
    r.o.leader_elect = true;
    r.o.client.qps = 10;
    r.o.client.burst = 1;
    r.o.max_s = 6;
    r.o.sched.identity = r.o.lease.identity = "replica-a";
    long base = writes_not_lease(w.admin); /* the node's and pods' creation */
    double t0 = now_s();
    pthread_t th;
    pthread_create(&th, NULL, replica_main, &r);
    const char *lease_path =
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gpuplane-scheduler";
    char last_renew[64] = "";
    double renewed_at = -1, max_gap = 0, fault_at = -1, last_write_at = -1;
    long writes = base, writes_at_fault = -1;
    while (now_s() - t0 < 9) {
        double t = now_s();
        if (fault_at < 0) {
            json_t *l = w_get(&w, lease_path);
            const char *holder =
                json_string_value(json_object_get(json_object_get(l, "spec"), "holderIdentity"));
            const char *rt =
                json_string_value(json_object_get(json_object_get(l, "spec"), "renewTime"));
            if (holder && strcmp(holder, "replica-a") == 0 && rt && strcmp(rt, last_renew) != 0) {
                snprintf(last_renew, sizeof last_renew, "%s", rt);
                renewed_at = t;
            }
            json_decref(l);
            if (renewed_at >= 0 && t - renewed_at > max_gap)
                max_gap = t - renewed_at;
            if (t - t0 >= 2.5 && renewed_at >= 0) { /* the Lease unrenewable from now on */
                kd_call(w.admin, "POST", "/_control/fault",
                        "{\"status\":500,\"count\":100000,\"match\":\"/leases\"}", 200);
                fault_at = now_s();
                writes_at_fault = writes_not_lease(w.admin);
            }
        }
        long n = writes_not_lease(w.admin);
        if (n != writes) {
            writes = n;
            last_write_at = now_s();
        }
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    pthread_join(th, NULL);
    assert_int_equal(r.err, GP_OK);
    assert_true(fault_at > 0);
    /* renewed every retry period (0.2 s) during the cycle, not once it ends */
    if (max_gap >= r.o.lease.renew_deadline_s)
        fail_msg("the Lease went %.1f s unrenewed while leading", max_gap);
    /* the cycle was still writing when the Lease stopped being renewed */
    writes -= base;
    writes_at_fault -= base;
    assert_true(writes_at_fault > 0 && writes_at_fault < 60);
    /* nothing written after the renew deadline (the last renewal was
     * before fault_at; 0.3 s for the poll and a request in flight) */
    if (last_write_at > fault_at + r.o.lease.renew_deadline_s + 0.3)
        fail_msg("a write %.2f s after the Lease stopped being renewed (renew deadline %.1f s)",
                 last_write_at - fault_at, r.o.lease.renew_deadline_s);
    if (writes >= 80) /* not every pod's PATCH and Event */
        fail_msg("%ld writes (%ld when the Lease stopped being renewed at %.2f s, the last at "
                 "%.2f s)",
                 writes, writes_at_fault, fault_at - t0, last_write_at - t0);
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&w);
}

/* /healthz probed while the scheduling thread hangs 2.5 s on one status
 * PATCH (the double answers it late): 500 "unhealthy: scheduling loop: no
 * progress" while it hangs (the stall limit 1 s), 200 before and after. */
struct probe {
    FILE *log;
    volatile sig_atomic_t stop;
    int ok_before, bad, ok_after;
    char bad_body[256];
};

static void *probe_main(void *arg)
{
    struct probe *pr = arg;
    unsigned port = 0;
    if (fscanf(pr->log, "gpuplane schedule: /metrics, /healthz and /readyz on port %u", &port) !=
        1) {
        pr->stop = 1;
        return NULL;
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/healthz", port);
    struct scrape sc;
    for (int i = 0; i < 120; i++) {
        CURL *c = curl_easy_init();
        sc.len = 0;
        sc.body[0] = '\0';
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &sc);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
        curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
        long code = 0;
        if (curl_easy_perform(c) == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(c);
        if (code == 200)
            *(pr->bad ? &pr->ok_after : &pr->ok_before) += 1;
        else if (code == 500 && ++pr->bad == 1)
            snprintf(pr->bad_body, sizeof pr->bad_body, "%.*s", (int)sizeof pr->bad_body - 1,
                     sc.body);
        if (pr->ok_after >= 3)
            break;
        nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
    }
    pr->stop = 1;
    return NULL;
}

static void test_healthz_stall(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 1);
    w_pod(&w, "p1", 2); /* never fits: a status PATCH */
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"delay_ms\":2500,\"count\":1,\"match\":\"/status\"}", 200);
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    run_opts(&o, &cfg);
    o.healthz_stall_s = 1;
    static struct probe pr;
    memset(&pr, 0, sizeof pr);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    o.log = fdopen(fd[1], "w");
    pr.log = fdopen(fd[0], "r");
    assert_true(o.log && pr.log);
    o.metrics_addr = "127.0.0.1:0";
    o.stop = &pr.stop;
    pthread_t tp;
    pthread_create(&tp, NULL, probe_main, &pr);
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    fclose(o.log);
    pthread_join(tp, NULL);
    fclose(pr.log);
    if (pr.bad == 0)
        fail_msg("/healthz stayed 200 while the scheduling loop hung");
    assert_non_null(strstr(pr.bad_body, "unhealthy: scheduling loop: no progress"));
    assert_true(pr.ok_after >= 3); /* healthy again once it moves */
    assert_int_equal(res.stats.unschedulable, 1);
    w_close(&w);
}

/* /healthz's Lease rule (client-go leaderelection HealthzAdaptor, which
 * kube-scheduler adds with a 20 s tolerance): a replica that believes it
 * leads but has not renewed the Lease for leaseDurationSeconds plus the
 * tolerance is unhealthy, "failed election to renew leadership on lease",
 * so that the liveness probe restarts it. The Lease's thread is made
 * late by a retry period (3 s) longer than the duration (1 s) plus the
 * tolerance (0.3 s): between two ticks it still says it leads. Healthy
 * before, unhealthy in the gap, healthy again once it renews. */
static void test_healthz_lease(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 1);
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    run_opts(&o, &cfg);
    o.leader_elect = true;
    o.sched.identity = o.lease.identity = "replica-a";
    o.lease.duration_s = 1;
    o.lease.renew_deadline_s = 0.8;
    o.lease.retry_period_s = 3;
    o.healthz_lease_tolerance_s = 0.3;
    static struct probe pr;
    memset(&pr, 0, sizeof pr);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    o.log = fdopen(fd[1], "w");
    pr.log = fdopen(fd[0], "r");
    assert_true(o.log && pr.log);
    o.metrics_addr = "127.0.0.1:0";
    o.stop = &pr.stop;
    pthread_t tp;
    pthread_create(&tp, NULL, probe_main, &pr);
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    fclose(o.log);
    pthread_join(tp, NULL);
    fclose(pr.log);
    if (pr.bad == 0)
        fail_msg("/healthz stayed 200 while the leader's Lease went unrenewed");
    assert_true(pr.ok_before >= 1);
    assert_non_null(strstr(pr.bad_body, "unhealthy: leaderElection: failed election to renew "
                                        "leadership on lease kube-system/gpuplane-scheduler"));
    assert_true(pr.ok_after >= 3); /* renewed: healthy again */
    w_close(&w);
}

/* Pods that end leave the Pods informer (listed and watched with
 * kube-scheduler's field selector status.phase!=Succeeded,
 * status.phase!=Failed): two of four bound pods go Succeeded and Failed,
 * their records are freed (2 kept, not 4) and two new pods take their
 * GPUs. */
struct ender {
    struct world *w;
    volatile sig_atomic_t stop;
    long records_seen;
};

static void *end_two(void *arg)
{
    struct ender *e = arg;
    for (int i = 0; i < 200 && w_stat(e->w, "bindings") < 4; i++)
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    kd_call(e->w->admin, "PATCH", "/api/v1/namespaces/default/pods/p1/status",
            "{\"status\":{\"phase\":\"Succeeded\"}}", 200);
    kd_call(e->w->admin, "PATCH", "/api/v1/namespaces/default/pods/p2/status",
            "{\"status\":{\"phase\":\"Failed\"}}", 200);
    w_pod(e->w, "p5", 1);
    w_pod(e->w, "p6", 1);
    for (int i = 0; i < 200 && w_stat(e->w, "bindings") < 6; i++)
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    nanosleep(&(struct timespec){0, 300 * 1000000L}, NULL);
    e->stop = 1;
    return NULL;
}

static void test_ended_pods_leave(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 4);
    for (int i = 1; i <= 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 1);
    }
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    run_opts(&o, &cfg);
    static struct ender e;
    memset(&e, 0, sizeof e);
    e.w = &w;
    o.stop = &e.stop;
    pthread_t th;
    pthread_create(&th, NULL, end_two, &e);
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    pthread_join(th, NULL);
    assert_int_equal(w_stat(&w, "bindings"), 6);
    assert_int_equal(res.stats.binds, 6);
    assert_int_equal(res.stats.records, 4); /* p3..p6: the ended ones freed */
    assert_int_equal(res.stats.audit_violations, 0);
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_watch, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_two_replicas, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_run_faults, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_lease_long_cycle, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_healthz_stall, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_healthz_lease, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_ended_pods_leave, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
