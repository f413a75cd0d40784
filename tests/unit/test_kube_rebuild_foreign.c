/* test_kube_rebuild_foreign.c - the rebuild (src/kube/sched_rebuild.c,
 * issue 14 item 4) keeps a half-finished decision's GPUs (annotated, not
 * bound) from another scheduler's pod on the same node, against the API
 * server double: the foreign pod names no GPU, so the engine places it on
 * GPUs no pod of gpuplane's names (the rebuild's claims), and the
 * half-finished decision is then resumed at the GPU it names. Without the
 * half-finished decisions among the claims the foreign pod is placed on
 * the lowest free GPU, the named one, and the decision is taken back and
 * made anew elsewhere ("has its GPUs taken"): no double booking, but a
 * decision lost that a restart should have resumed. The control: the same
 * node without the foreign pod. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

#define HALF_N1_GPU0                                                                               \
    ",\"annotations\":{\"" GP_KUBE_ANN_NODE "\":\"n1\",\"" GP_KUBE_ANN_GPUS                        \
    "\":\"0\",\"" GP_KUBE_ANN_PHASE "\":\"allocating\"}"

/* A scheduler started on n1 (2 GPUs) where a decision of an earlier run
 * names GPU 0 for pod "half", not bound; foreign: another scheduler's
 * 1-GPU pod bound on n1 before the start. */
static void resume_beside(bool foreign)
{
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    if (foreign) {
        w_pod_full(&w, "theirs", 1, 0, "default-scheduler", NULL);
        w_bind(&w, "theirs", "n1");
    }
    w_pod_full(&w, "half", 1, 0, "gpuplane", HALF_N1_GPU0);
    assert_int_equal(w_cycle(&w), 1);
    const char *g;
    assert_string_equal(w_node_of(&w, "half", &g), "n1");
    assert_string_equal(g, "0");
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 1);
    w_check_distinct(&w);
    w_close(&w);
}

static void test_resumed_beside_foreign(void **state)
{
    (void)state;
    resume_beside(true);
}

static void test_resumed_alone(void **state)
{
    (void)state;
    resume_beside(false);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resumed_beside_foreign, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resumed_alone, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
