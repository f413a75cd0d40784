/* test_kube_audit_foreign.c - the continuous audit (src/kube/audit.c,
 * issue 14 item 5) across gpuplane's pods and another scheduler's, against
 * the API server double: a pod of default-scheduler's names no GPU (the
 * device plugin chose), so only the number of GPUs it holds can be
 * checked, against the GPUs no pod of gpuplane's names:
 *  - a node whose GPUs gpuplane's pods hold whole, and a foreign 1-GPU pod
 *    bound there by hand: one violation and its Warning Event;
 *  - a node whose two GPUs each hold a named half share of gpuplane's
 *    (1000/1000 in all, so the sum of what is booked does not exceed the
 *    node), and a foreign pod that needs a whole GPU: it cannot have one,
 *    a violation only the count of GPUs free of named pods finds;
 *  - the control: a foreign pod on a GPU nobody names is clean.
 * Each fails when the audit leaves other schedulers' pods out. Its shared
 * run (NAME:shared) has the double check every object against the schemas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

/* A pod of gpuplane's named on `node` at `gpus` and bound there by hand
 * (as a decision of an earlier run left it); milli: a share of that many
 * thousandths (gpuplane.io/gpu-milli, no nvidia.com/gpu), 0 for one whole
 * GPU. */
static void planted(struct world *w, const char *name, const char *node, const char *gpus,
                    unsigned milli)
{
    char meta[256];
    if (milli)
        snprintf(meta, sizeof meta,
                 ",\"annotations\":{\"gpuplane.io/gpu-milli\":\"%u\",\"" GP_KUBE_ANN_NODE
                 "\":\"%s\",\"" GP_KUBE_ANN_GPUS "\":\"%s\"}",
                 milli, node, gpus);
    else
        snprintf(meta, sizeof meta,
                 ",\"annotations\":{\"" GP_KUBE_ANN_NODE "\":\"%s\",\"" GP_KUBE_ANN_GPUS
                 "\":\"%s\"}",
                 node, gpus);
    w_pod_full(w, name, milli ? 0 : 1, 0, "gpuplane", meta);
    w_bind(w, name, node);
}

/* The one violation expected on node n1, with its message and Event. */
static void assert_one_violation(struct world *w, const char *msg)
{
    w_sync(w);
    assert_int_equal(gp_kube_sched_audit_all(w->s), 1);
    assert_int_equal(gp_kube_sched_stats(w->s).audit_violations, 1);
    assert_int_equal(gp_kube_sched_stats(w->s).audit_gpu, 1);
    assert_string_equal(gp_kube_sched_audit_last(w->s), msg);
    assert_string_equal(w_events(w, "GPUDoubleBooked", "n1"), msg);
}

static void test_foreign_on_full_node(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "a", 1);
    w_pod(&w, "b", 1);
    assert_int_equal(w_cycle(&w), 2); /* both GPUs of n1 named by gpuplane's pods */
    w_pod_full(&w, "theirs", 1, 0, "default-scheduler", NULL);
    w_bind(&w, "theirs", "n1");
    assert_one_violation(&w, "node n1: pods that name no GPU hold 1 whole GPUs, 0 are free of "
                             "named ones");
    w_close(&w);
}

static void test_foreign_beside_shares(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    planted(&w, "s0", "n1", "0", 500);
    planted(&w, "s1", "n1", "1", 500);
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0); /* two half shares: clean */
    w_pod_full(&w, "theirs", 1, 0, "default-scheduler", NULL);
    w_bind(&w, "theirs", "n1");
    assert_one_violation(&w, "node n1: pods that name no GPU hold 1 whole GPUs, 0 are free of "
                             "named ones");
    w_close(&w);
}

static void test_foreign_clean(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    planted(&w, "mine", "n1", "0", 0);
    w_pod_full(&w, "theirs", 1, 0, "default-scheduler", NULL);
    w_bind(&w, "theirs", "n1");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* and the engine counts the foreign pod: a pod asking 2 GPUs fits nowhere */
    w_pod(&w, "two", 2);
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "two", NULL), "");
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_foreign_on_full_node, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_foreign_beside_shares, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_foreign_clean, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
