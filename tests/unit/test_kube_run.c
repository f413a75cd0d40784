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

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_watch, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_two_replicas, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_run_faults, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
