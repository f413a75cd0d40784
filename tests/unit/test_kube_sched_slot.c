/* test_kube_sched_slot.c - one pod allocating per agent node
 * (src/kube/sched_slot.c) and the pods it does not apply to, against the
 * API server double (issue 14, the review's R16): a pod asking no GPU
 * gets no Allocate, so it neither holds an agent node's slot nor waits
 * for it, and its decision carries no gpuplane.io/phase (the agent would
 * count it allocating until its containers start). The double plays no
 * agent here (w_auto_allocate_ms -1): a GPU pod holds its node's slot
 * until the end of the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

/* The pod's gpuplane.io/phase ("" when it has none). */
static const char *phase_of(struct world *w, const char *name)
{
    static char out[32];
    json_t *p = w_pod_get(w, name);
    json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
    const char *ph = json_string_value(json_object_get(ann, GP_KUBE_ANN_PHASE));
    snprintf(out, sizeof out, "%s", ph ? ph : "");
    json_decref(p);
    return out;
}

static void test_cpu_pod_no_slot(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4); /* an agent's node */
    w_pod(&w, "c1", 0);  /* CPU only, bound first */
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "c1", NULL), "n1");
    assert_string_equal(phase_of(&w, "c1"), "");
    w_pod(&w, "g1", 1); /* bound: c1 holds no slot */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "g1", NULL), "n1");
    assert_string_equal(phase_of(&w, "g1"), "allocating");
    w_pod(&w, "c2", 0); /* bound though g1 holds the slot */
    w_pod(&w, "g2", 1); /* waits for g1's Allocate */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "c2", NULL), "n1");
    assert_string_equal(w_node_of(&w, "g2", NULL), "");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    w_close(&w);
    w_auto_allocate_ms = 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cpu_pod_no_slot, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
