/* test_kube_run.c - the scheduler's threads (kube/run.c) against the API
 * server double: informer threads watching while pods arrive, /metrics
 * counting the binds; and two replicas under leader election on one
 * Lease: every pod bound once, all by one replica, the other standing by;
 * and faults on demand (429, 500, slow answers, cut watches) ridden out. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
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
    o.stop_after_binds = 8;
    struct gp_kube_run_result res;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_run(&o, &res, &d), GP_OK);
    pthread_join(th, NULL);
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
