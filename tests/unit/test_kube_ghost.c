/* test_kube_ghost.c - a pod the API shows bound to a node the scheduler
 * does not know (its Node deleted before the pod garbage collector removed
 * the pod, or not listed yet) must not rebuild the engine at every cycle:
 * the node's arrival rebuilds it once (the pods naming it are counted
 * then), and until then the cycles go on without a rebuild. Before, each
 * rebuild placed that pod again, found the node unknown and marked the
 * engine dirty, so every cycle rebuilt the whole engine. */
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

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pod_on_unknown_node, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
