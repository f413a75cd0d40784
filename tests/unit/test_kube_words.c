/* test_kube_words.c - the scheduler (kube/sched.h) against the API server
 * double (issue 14):
 *  - an unschedulable pod's PodScheduled=False message and Event in
 *    kube-scheduler's words (v1.28): a cordoned node "were unschedulable",
 *    a taint by key and value, a node not Ready by the taint the node
 *    lifecycle controller puts on it, a nodeSelector NodeAffinity's words,
 *    each node under kube-scheduler's first failing plugin, and
 *    DefaultPreemption's " preemption: ..." part (not helpful, no victims,
 *    the reason left once lower-priority pods are counted out,
 *    preemptionPolicy Never);
 *  - a node whose only change is a label documented as a volatile
 *    timestamp (GPU Feature Discovery's nvidia.com/gfd.timestamp) does not
 *    rebuild the engine; any other label change does;
 *  - the Lease against a server that answers late: each tick ends within
 *    half the renew deadline (its own client: a quarter of it a request,
 *    no retries), the leader leads until the deadline and not after; a
 *    binder writes no Binding once the deadline passed, and a leader's
 *    rebuild binds what it left annotated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <time.h>

#include <cmocka.h>

#include "kube/lease.h"
#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

static void label(struct world *w, const char *node, const char *key, const char *value)
{
    char path[128], body[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    snprintf(body, sizeof body, "{\"metadata\":{\"labels\":{\"%s\":\"%s\"}}}", key, value);
    kd_call(w->admin, "PATCH", path, body, 200);
}

static void patch_node(struct world *w, const char *node, const char *sub, const char *body)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/nodes/%s%s", node, sub);
    kd_call(w->admin, "PATCH", path, body, 200);
}

/* A node of 4 GPUs in zone a (zone: false, none), its spec then patched
 * with spec_json (NULL: none), its Ready condition's status ready. */
static void node(struct world *w, const char *name, bool zone, const char *spec_json,
                 const char *ready)
{
    w_node(w, name, 4);
    if (zone)
        label(w, name, "zone", "a");
    if (spec_json)
        patch_node(w, name, "", spec_json);
    char b[256];
    snprintf(b, sizeof b, "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
             ready);
    patch_node(w, name, "/status", b);
}

/* A pod of ours asking gpus GPUs in zone a, at priority, preemptionPolicy
 * Never when never. */
static void pod(struct world *w, const char *name, unsigned gpus, int priority, bool never)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":%d%s,\"nodeSelector\":{\"zone\":\"a\"},\"containers\":[{\"name\":"
             "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/"
             "gpu\":\"%u\"},\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, priority, never ? ",\"preemptionPolicy\":\"Never\"" : "", gpus, gpus);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static const char *message_of(struct world *w, const char *name)
{
    static char out[2048];
    json_t *p = w_pod_get(w, name);
    json_t *c = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 0);
    snprintf(out, sizeof out, "%s", json_string_value(json_object_get(c, "message")));
    json_decref(p);
    return out;
}

#define REASONS                                                                                    \
    "0/8 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node "   \
    "affinity/selector, 1 node(s) had untolerated taint {dedicated: ml}, 1 node(s) had "           \
    "untolerated taint {gpu-only: }, 1 node(s) had untolerated taint "                             \
    "{node.kubernetes.io/not-ready: }, 1 node(s) had untolerated taint "                           \
    "{node.kubernetes.io/unreachable: }, 2 node(s) were unschedulable."

static void test_unschedulable_words(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    static const char taint_ml[] =
        "{\"spec\":{\"taints\":[{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"},"
        "{\"key\":\"dedicated\",\"value\":\"ml\",\"effect\":\"NoSchedule\"}]}}";
    node(&w, "n1", true, "{\"spec\":{\"unschedulable\":true}}", "True");
    node(&w, "n2", true, taint_ml, "True"); /* PreferNoSchedule filters nothing */
    node(&w, "n3", true,
         "{\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"dedicated\",\"value\":"
         "\"ml\",\"effect\":\"NoSchedule\"}]}}",
         "True");                          /* NodeUnschedulable runs first */
    node(&w, "n4", true, NULL, "False");   /* the lifecycle controller's not-ready taint */
    node(&w, "n5", true, NULL, "Unknown"); /* its unreachable taint */
    node(&w, "n6", false, NULL, "True");   /* no zone label */
    node(&w, "n7", false,
         "{\"spec\":{\"taints\":[{\"key\":\"gpu-only\",\"effect\":\"NoExecute\"}]}}",
         "True");                       /* TaintToleration runs before NodeAffinity */
    node(&w, "n8", true, NULL, "True"); /* filled below */
    pod(&w, "fill", 4, 0, false);
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "fill", NULL), "n8");
    /* priority 0 like the pod on n8: no victims there */
    pod(&w, "p", 4, 0, false);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "p", NULL), "");
    const char *want =
        REASONS " preemption: 0/8 nodes are available: 1 No preemption victims "
                "found for incoming pod, 7 Preemption is not helpful for scheduling..";
    assert_string_equal(message_of(&w, "p"), want);
    assert_string_equal(w_events(&w, "FailedScheduling", "p"), want);
    /* above fill's priority, but n8 holds 4 GPUs without it too */
    pod(&w, "big", 8, 100, false);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "big", NULL), "");
    assert_string_equal(message_of(&w, "big"),
                        REASONS " preemption: 0/8 nodes are available: 1 Insufficient "
                                "nvidia.com/gpu, 7 Preemption is not helpful for scheduling..");
    /* may not preempt */
    pod(&w, "never", 4, 100, true);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "never", NULL), "");
    assert_string_equal(message_of(&w, "never"),
                        REASONS " preemption: not eligible due to preemptionPolicy=Never..");
    assert_string_equal(w_node_of(&w, "fill", NULL), "n8");
    w_close(&w);
}

/* NodeUnschedulable lets a pod that tolerates the cordoned node's taint
 * (node.kubernetes.io/unschedulable:NoSchedule) pass: placed there, while
 * a pod without the toleration is not; a Node that carries the taint
 * itself (the lifecycle controller's) counts it once. */
static void test_cordon_tolerated(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    node(&w, "c1", true, "{\"spec\":{\"unschedulable\":true}}", "True");
    node(&w, "c2", true,
         "{\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
         "\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\"}]}}",
         "True");
    pod(&w, "plain", 1, 0, false);
    char b[1024];
    for (int i = 0; i < 2; i++) {
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"tol%d\"},\"spec\":{\"schedulerName\":\"gpuplane\","
                 "\"tolerations\":[{\"key\":\"node.kubernetes.io/unschedulable\",\"operator\":"
                 "\"Exists\",\"effect\":\"NoSchedule\"}],\"containers\":[{\"name\":\"c\","
                 "\"image\":\"x\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"4\"},"
                 "\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]}}",
                 i);
        kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
    }
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "plain", NULL), "");
    assert_string_equal(message_of(&w, "plain"),
                        "0/2 nodes are available: 2 node(s) were unschedulable. preemption: 0/2 "
                        "nodes are available: 2 Preemption is not helpful for scheduling..");
    char both[16];
    snprintf(both, sizeof both, "%s", w_node_of(&w, "tol0", NULL));
    snprintf(both + strlen(both), sizeof both - strlen(both), "+%s", w_node_of(&w, "tol1", NULL));
    assert_true(strcmp(both, "c1+c2") == 0 || strcmp(both, "c2+c1") == 0);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

/* NodeResourcesFit names every resource a node is short of: a node out
 * of CPU and of GPUs counts under both. */
static void test_every_resource_short(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "c1", 4);
    patch_node(&w, "c1", "/status",
               "{\"status\":{\"allocatable\":{\"cpu\":\"1\",\"memory\":\"512Gi\",\"nvidia.com/"
               "gpu\":\"4\",\"pods\":\"110\"}}}");
    w_pod(&w, "fill", 4); /* cpu 1, 4 GPUs: the node is out of both */
    assert_int_equal(w_cycle(&w), 1);
    w_pod(&w, "q", 1);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "q", NULL), "");
    assert_string_equal(message_of(&w, "q"),
                        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient "
                        "nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption "
                        "victims found for incoming pod..");
    w_close(&w);
}

/* The histogram's entries are one a reason: a reason added again adds to
 * its count, where it sorts. */
static void test_explain_merge(void **state)
{
    (void)state;
    struct gp_explain x;
    memset(&x, 0, sizeof x);
    x.nodes_total = 9;
    x.rejected[GP_FILTER_SELECTOR] = 2;
    x.rejected[GP_FILTER_NODE_AFFINITY] = 1;
    x.rejected[GP_FILTER_GPU_COUNT] = 1;
    char buf[512];
    gp_kube_explain_text(&x, buf, sizeof buf);
    assert_string_equal(buf, "0/9 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) "
                             "didn't match Pod's node affinity/selector.");
    gp_kube_explain_add(buf, sizeof buf, 4, "Insufficient nvidia.com/gpu");
    gp_kube_explain_add(buf, sizeof buf, 1, "node(s) had untolerated taint {a: b}");
    assert_string_equal(buf, "0/9 nodes are available: 1 node(s) had untolerated taint {a: b}, 3 "
                             "node(s) didn't match Pod's node affinity/selector, 5 Insufficient "
                             "nvidia.com/gpu.");
}

static void test_timestamp_label(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    label(&w, "n1", "nvidia.com/gfd.timestamp", "1715709242");
    w_pod(&w, "a", 1);
    assert_int_equal(w_cycle(&w), 1);
    uint64_t before = gp_kube_sched_stats(w.s).rebuilds;
    /* GFD's labelling passes: the timestamp alone, each MODIFIED */
    char ts[32];
    for (int i = 1; i <= 5; i++) {
        snprintf(ts, sizeof ts, "%d", 1715709242 + 60 * i);
        label(&w, "n1", "nvidia.com/gfd.timestamp", ts);
        label(&w, "n2", "nvidia.com/gfd.timestamp", ts); /* n2 had none: added */
        w_pod(&w, i == 1 ? "b" : i == 2 ? "c" : i == 3 ? "d" : i == 4 ? "e" : "f", 1);
        assert_int_equal(w_cycle(&w), 1);
    }
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, before);
    /* a label a selector may read: the engine is told (a rebuild) */
    label(&w, "n1", "example.com/rack", "r7");
    w_cycle(&w);
    assert_true(gp_kube_sched_stats(w.s).rebuilds > before);
    w_check_distinct(&w);
    w_close(&w);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void test_lease_slow_server(void **state)
{
    (void)state;
    struct gp_kube_lease_opts lo;
    gp_kube_lease_opts_default(&lo);
    lo.identity = "a";
    lo.duration_s = 3;
    lo.renew_deadline_s = 2;
    lo.retry_period_s = 0.4;
    /* the scheduler's client options (30 s a request, 5 retries), made
     * the Lease's as gpuplane schedule makes them */
    struct gp_kube_client_opts co;
    gp_kube_client_opts_default(&co);
    co.qps = 0;
    gp_kube_lease_client_opts(&lo, &co);
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_client *c, *admin = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &co, &c, &d), GP_OK);
    struct gp_kube_lease *l;
    assert_int_equal(gp_kube_lease_new(c, &lo, &l, &d), GP_OK);
    double t0 = mono();
    assert_true(gp_kube_lease_tick(l, t0));
    assert_true(fabs(gp_kube_lease_deadline(l) - (t0 + 2)) < 1e-9);
    /* every Lease request answered 3 s late from now */
    kd_call(admin, "POST", "/_control/fault",
            "{\"delay_ms\":3000,\"count\":100,\"match\":\"/leases\"}", 200);
    bool lost = false;
    int ticks = 0;
    while (mono() < t0 + 4) {
        double t = mono();
        bool lead = gp_kube_lease_tick(l, t);
        double took = mono() - t;
        ticks++;
        if (took > lo.renew_deadline_s / 2 + 0.25)
            fail_msg("a tick took %.2f s, the renew deadline is %.0f s", took, lo.renew_deadline_s);
        if (t < t0 + lo.renew_deadline_s)
            assert_true(lead); /* not renewed, but within the deadline */
        else
            assert_false(lead);
        lost |= !lead;
        nap(lo.retry_period_s);
    }
    assert_true(lost && ticks >= 4);
    assert_true(gp_kube_lease_deadline(l) == -INFINITY);
    kd_call(admin, "POST", "/_control/clear", "{}", 200);
    assert_true(gp_kube_lease_tick(l, mono())); /* still its own record: taken back */
    gp_kube_lease_free(l);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

static void test_bind_past_deadline(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_pod(&w, "warm", 1);
    assert_int_equal(w_cycle(&w), 1);
    long bindings = w_stat(&w, "bindings");
    /* leading for 0.3 s more; a gang of two (its members annotated, then
     * bound: bind.c job_run), the first member's annotation patch answered
     * 0.6 s late: the second patch and the Bindings would go after the
     * deadline */
    gp_kube_sched_set_leader_until(w.s, true, mono() + 0.3);
    kd_call(w.admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
            "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"slow\"},\"spec\":{\"minMember\":2}}",
            201);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"delay_ms\":600,\"count\":1,\"match\":\"/pods/slow1\"}", 200);
    const char *gang = ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"slow\"}";
    w_pod_full(&w, "slow1", 1, 0, "gpuplane", gang);
    w_pod_full(&w, "slow2", 1, 0, "gpuplane", gang);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "slow1", NULL), "");
    assert_string_equal(w_node_of(&w, "slow2", NULL), "");
    assert_string_equal(w_ann(&w, "slow2", GP_KUBE_ANN_NODE), ""); /* never sent */
    assert_int_equal(w_stat(&w, "bindings"), bindings);
    /* past it a cycle writes nothing either */
    w_pod(&w, "later", 1);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "later", NULL), "");
    assert_int_equal(w_stat(&w, "bindings"), bindings);
    /* leading again: the rebuild binds all three */
    gp_kube_sched_set_leader(w.s, true);
    w_cycle(&w);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "slow1", NULL), "n1");
    assert_string_equal(w_node_of(&w, "slow2", NULL), "n1");
    assert_string_equal(w_node_of(&w, "later", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unschedulable_words, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_cordon_tolerated, kd_start, kd_stop),
        cmocka_unit_test(test_explain_merge),
        cmocka_unit_test_setup_teardown(test_every_resource_short, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_timestamp_label, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_lease_slow_server, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_bind_past_deadline, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
