/* test_kube_ghost.c - a pod the API shows bound to a node the scheduler
 * does not know (its Node deleted before the pod garbage collector removed
 * the pod, or not listed yet) must not rebuild the engine at every cycle:
 * the node's arrival rebuilds it once (the pods naming it are counted
 * then), and until then the cycles go on without a rebuild. Before, each
 * rebuild placed that pod again, found the node unknown and marked the
 * engine dirty, so every cycle rebuilt the whole engine.
 * And a pod naming no GPUs (another scheduler's) never takes, in the
 * engine, a GPU a gpuplane pod's gpuplane.io/gpus names on its node: not
 * in a rebuild where it sorts first, nor bound while that pod's decision
 * is written and not bound yet (test_rebuild_order, test_named_later).
 * A bound pod in a valid quantity form is counted; one gpuplane cannot
 * read keeps its node from new pods (test_exponent_quantity,
 * test_unreadable_bound). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

static void test_pod_on_unknown_node(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    /* another scheduler's pod bound to a node that does not exist */
    w_pod_full(&w, "orphan", 2, 0, "default-scheduler", NULL);
    w_bind(&w, "orphan", "gone");
    w_pod(&w, "p1", 1);
    w_cycle(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "p1", &gpus), "n1");
    uint64_t rebuilds = gp_kube_sched_stats(w.s).rebuilds;
    for (int i = 0; i < 5; i++) {
        w.now += 1;
        w_cycle(&w);
    }
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, rebuilds); /* no rebuild a cycle */
    /* the node comes: one rebuild, and the orphan's 2 GPUs are taken there */
    w_node(&w, "gone", 2);
    w_pod(&w, "p2", 1);
    w.now += 1;
    w_cycle(&w);
    assert_true(gp_kube_sched_stats(w.s).rebuilds > rebuilds);
    assert_string_equal(w_node_of(&w, "p2", &gpus), "n1");
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

/* A few cycles as the loop runs them. */
static void cycles(struct world *w)
{
    for (int k = 0; k < 3; k++) {
        size_t bound;
        struct gp_diag d = {""};
        w_sync(w);
        gp_kube_sched_cycle(w->s, w->now, &bound, &d);
        gp_kube_sched_wait_binds(w->s, &bound);
        w_sync(w);
    }
}

/* After the foreign pod that sat on GPU 0 in the engine ends, a new pod
 * of ours must not get the GPU zb's annotation names. */
static void check_after_foreign_ends(struct world *w)
{
    kd_call(w->admin, "DELETE", "/api/v1/namespaces/default/pods/aa", NULL, 200);
    kd_call(w->admin, "POST", "/_control/finish_deletions", NULL, 200);
    w_pod(w, "cc", 1);
    w->now += 10;
    cycles(w);
    const char *g;
    char gz[16];
    assert_string_equal(w_node_of(w, "zb", &g), "n1");
    snprintf(gz, sizeof gz, "%s", g); /* (w_node_of's buffer is reused) */
    assert_string_equal(w_node_of(w, "cc", &g), "n1");
    assert_string_not_equal(gz, g);
    w_check_distinct(w);
    assert_int_equal(gp_kube_sched_audit_all(w->s), 0);
    assert_int_equal(gp_kube_sched_stats(w->s).audit_violations, 0);
}

/* A restart: in the rebuild the pods are placed in key order, and aa
 * (default-scheduler, no GPUs named) sorts before zb (gpuplane, GPU 0). */
static void test_rebuild_order(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "zb", 1);
    w_cycle(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "zb", &gpus), "n1");
    assert_string_equal(gpus, "0");
    w_pod_full(&w, "aa", 1, 0, "default-scheduler", NULL);
    w_bind(&w, "aa", "n1");
    w_cycle(&w);
    w_close(&w);
    w_open(&w, true); /* the rebuild */
    w_cycle(&w);
    check_after_foreign_ends(&w);
    w_close(&w);
}

/* No rebuild: zb's decision (GPU 0 of n1) is written by another replica
 * and not bound yet when aa is bound to n1 (the engine books aa on GPU
 * 0, which nothing holds); zb's binding then lands: aa moves, zb gets the
 * GPU its annotation names. */
static void test_named_later(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_cycle(&w);
    w_pod_full(&w, "zb", 1, 0, "gpuplane",
               ",\"annotations\":{\"" GP_KUBE_ANN_NODE "\":\"n1\",\"" GP_KUBE_ANN_GPUS "\":\"0\"}");
    w_pod_full(&w, "aa", 1, 0, "default-scheduler", NULL);
    w_bind(&w, "aa", "n1");
    w_bind(&w, "zb", "n1");
    w_sync(&w);
    check_after_foreign_ends(&w);
    w_close(&w);
}

/* A bound pod in the exponent form the docs give (memory 129e6: valid,
 * kept so by the API server) is read and counted: before, the quantity
 * parser refused it and its GPU looked free (audit finding A5). */
static void test_exponent_quantity(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    kd_call(
        w.admin, "POST", "/api/v1/namespaces/default/pods",
        "{\"metadata\":{\"name\":\"other\"},\"spec\":{\"schedulerName\":\"default-scheduler\","
        "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":"
        "\"2000000n\",\"memory\":\"129e6\",\"nvidia.com/gpu\":\"1e0\"},\"limits\":{\"nvidia.com/"
        "gpu\":\"1e0\"}}}]}}",
        201);
    w_bind(&w, "other", "n1");
    w_pod(&w, "mine", 1);
    w_cycle(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "mine", &gpus), ""); /* n1's one GPU is other's */
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

/* A bound pod gpuplane cannot read (17 GPUs: more than a node has) holds
 * what its node gave it, unknown to gpuplane: the node takes no new pods
 * until it ends; then it does. */
static void test_unreadable_bound(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_cycle(&w);
    w_pod_full(&w, "other", 17, 0, "default-scheduler", NULL);
    w_bind(&w, "other", "n1");
    w_pod(&w, "mine", 1);
    w_cycle(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "mine", &gpus), "");
    w.now += 10;
    cycles(&w);
    assert_string_equal(w_node_of(&w, "mine", &gpus), "");
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/other", NULL, 200);
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 10;
    cycles(&w);
    assert_string_equal(w_node_of(&w, "mine", &gpus), "n1");
    w_close(&w);
}

/* A node gpuplane cannot read (80 nvidia.com/gpu without a replicas
 * label: more than 16 GPUs) is said once, on stderr and in a Warning
 * Event naming why, not dropped without a word (the review's R6); no pod
 * goes there. */
static void test_unreadable_node(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "bad", 80);
    w_pod(&w, "mine", 1);
    w_cycle(&w);
    w.now += 10;
    cycles(&w);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/bad", "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}",
            200); /* another version, still unreadable */
    w.now += 10;
    cycles(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "mine", &gpus), "");
    const char *ev = w_events(&w, "FailedToRead", "bad");
    assert_non_null(strstr(ev, "gpuplane cannot read the node: "));
    assert_non_null(strstr(ev, "no pods go there until it is readable"));
    assert_null(strchr(ev, '|')); /* once, not at each event */
    w_close(&w);
}

/* A pod another scheduler bound on a node with no room left in gpuplane's
 * view is uncounted; when a pod there ends and frees its GPU, the
 * uncounted pod is counted on it (it really holds a GPU there), so the
 * next pod of ours is not sent onto that GPU (the review's R11: it was,
 * and the audit only reported the double booking). */
static void test_uncounted_recounted(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "mine", 1);
    w_cycle(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "mine", &gpus), "n1");
    w_pod_full(&w, "other", 1, 0, "default-scheduler", NULL);
    w_bind(&w, "other", "n1"); /* the race: both bound on the one GPU */
    w.now += 1;
    cycles(&w);
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/mine/status",
            "{\"status\":{\"phase\":\"Failed\"}}", 200); /* the kubelet refused it */
    w.now += 1;
    cycles(&w);
    w_pod(&w, "next", 1);
    w.now += 10;
    cycles(&w);
    assert_string_equal(w_node_of(&w, "next", &gpus), ""); /* other holds n1's GPU */
    w_close(&w);
}

/* A pod of ours with scheduling gates (Kueue's admission gate) is not
 * scheduled while they stay, as kube-scheduler's SchedulingGates plugin
 * keeps it out of the queue (the review's R9: it was bound, which the API
 * server refuses with 409); once its gates are removed it is. */
static void test_gated_waits(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"gated\"},\"spec\":{\"schedulerName\":\"gpuplane\","
            "\"schedulingGates\":[{\"name\":\"kueue.x-k8s.io/admission\"}],\"containers\":[{"
            "\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\","
            "\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
            201);
    w_cycle(&w);
    w.now += 10;
    cycles(&w);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "gated", &gpus), "");
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/gated",
            "{\"spec\":{\"schedulingGates\":null}}", 200); /* admitted: the gate removed */
    w.now += 1;
    cycles(&w);
    assert_string_equal(w_node_of(&w, "gated", &gpus), "n1");
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pod_on_unknown_node, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_rebuild_order, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_named_later, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_exponent_quantity, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_unreadable_bound, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_unreadable_node, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_uncounted_recounted, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gated_waits, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
