/* test_kube_unblock.c - written decisions waiting for a blocked node
 * moved elsewhere (issue 14 item 3; kube/sched_unblock.c, sched_slot.c
 * "blocked nodes"; docs/kube.md, "A blocked node"), against the API
 * server double, the scheduler's audit clean after every cycle and no GPU
 * named twice. A node is blocked by another scheduler's pod bound there
 * that the kubelet never admits (f1 on n1):
 *  - a decision resumed after a restart (annotated for n1, not bound) has
 *    its annotations removed (the version seen unbound the precondition)
 *    and is placed again on n2, annotated and bound there;
 *  - the same decision bound to n1 meanwhile (a former leader's Binding
 *    landing between the informer's view and the take-back): the patch is
 *    refused (409), the pod read again, left bound with its annotations,
 *    never given a second decision;
 *  - the same decision with no other node for it: nothing is taken back
 *    (its annotations stay), a Warning Event says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

/* n1 (4 GPUs) blocked by f1 (another scheduler's, bound, never admitted);
 * n2 with `n2_gpus` GPUs when not 0. */
static void blocked_world(struct world *w, unsigned n2_gpus)
{
    w_node(w, "n1", 4);
    if (n2_gpus)
        w_node(w, "n2", n2_gpus);
    w_pod_full(w, "f1", 1, 0, "default-scheduler", NULL);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods/f1/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"f1\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
}

/* A decision of a scheduler that died before its Binding: annotated for
 * n1's GPU 3, not bound. */
static void half_decided(struct world *w, const char *name)
{
    w_pod_full(w, name, 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"3\","
               "\"gpuplane.io/phase\":\"allocating\"}");
}

static const char *blocked_words =
    "node n1 has taken no pod of gpuplane's asking a GPU for 121 s: pod default/f1 is bound "
    "there and the kubelet has not admitted it (gpuplane's node agent cannot tell that pod's "
    "Allocate from the next one's and would refuse both)";

/* The resumed decision moves: fails without sched_unblock.c's take-back
 * (it waits on n1 for ever, "written already"). */
static void test_resumed_moves(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    blocked_world(&w, 8);
    half_decided(&w, "half");
    double t0 = w.now;
    assert_int_equal(w_cycle(&w), 0); /* resumed, waiting for n1's slot */
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    w.now = t0 + 119;
    assert_int_equal(w_cycle(&w), 0);
    const char *g;
    assert_string_equal(w_node_of(&w, "half", &g), "");
    assert_string_equal(g, "3"); /* not taken back before the block */
    w.now = t0 + 121;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "half", &g), "n2");
    char want[1200];
    snprintf(want, sizeof want,
             "%s; its decision for n1 was taken back (its annotations removed: it was not "
             "bound) and it was placed again without n1",
             blocked_words);
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "half"), want);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 0); /* never bound as resumed */
    w_check_distinct(&w);
    w_close(&w);
}

/* The resumed decision is bound to n1 by someone else (a former leader's
 * Binding landing) after the informer's last view: the take-back's patch,
 * conditioned on that view's version, is refused; the pod is read again
 * and stays bound to n1 with its annotations (GPU 3), nothing placed for
 * it elsewhere. Fails when the take-back is sent without the version
 * (the annotations of a bound pod removed: w_node_of's GPUs empty). */
static void test_resumed_bound_meanwhile(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    blocked_world(&w, 8);
    half_decided(&w, "half");
    double t0 = w.now;
    assert_int_equal(w_cycle(&w), 0);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods/half/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"half\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
    long bindings = w_stat(&w, "bindings");
    w.now = t0 + 121;
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK); /* not synced first */
    assert_int_equal(bound, 0);
    assert_int_equal(w_stat(&w, "bindings"), bindings); /* no second Binding */
    const char *g;
    assert_string_equal(w_node_of(&w, "half", &g), "n1");
    assert_string_equal(g, "3");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "half", &g), "n1");
    assert_string_equal(g, "3");
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "half"), "");
    w_check_distinct(&w);
    w_close(&w);
}

/* No other node: nothing taken back (the annotations stay), the Warning
 * Event once; a node added later takes it at its next try. */
static void test_resumed_nowhere_else(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    blocked_world(&w, 0);
    half_decided(&w, "half");
    double t0 = w.now;
    assert_int_equal(w_cycle(&w), 0);
    long writes = w_stat(&w, "writes");
    w.now = t0 + 121;
    assert_int_equal(w_cycle(&w), 0);
    const char *g;
    assert_string_equal(w_node_of(&w, "half", &g), "");
    assert_string_equal(g, "3");
    char want[1200];
    snprintf(want, sizeof want,
             "%s; no other node fits the pod now: it stays decided for n1 (its GPUs booked "
             "there) and is bound once the slot frees, tried elsewhere again meanwhile",
             blocked_words);
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "half"), want);
    assert_int_equal(w_stat(&w, "writes"), writes + 1); /* the Event alone */
    w_node(&w, "n2", 2);
    w.now += 5;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "half", NULL), "n2");
    w_check_distinct(&w);
    w_close(&w);
}

int main(void)
{
    w_auto_allocate_ms = 0; /* the agent's mark at once: only f1 blocks */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resumed_moves, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resumed_bound_meanwhile, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resumed_nowhere_else, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
