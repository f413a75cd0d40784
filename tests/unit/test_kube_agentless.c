/* test_kube_agentless.c - nodes without gpuplane's node agent (issue 14;
 * kube/sched_slot.c; docs/kube.md, "One pod allocating per node"), against
 * the API server double, which marks no pod allocated here (as NVIDIA's
 * own device plugin marks none):
 *  - a node not labelled gpuplane.io/agent takes its pods side by side, in
 *    one cycle, as kube-scheduler would bind them, each at GPUs of its own
 *    in gpuplane's books; none of them is timed out as left allocating;
 *  - a node labelled so keeps one pod allocating at a time; its label
 *    removed while two pods wait for its slot: both bound at once; the
 *    label put back while pods are bound and not marked: they hold the
 *    slot again (the agent counts them too), the next pod waits until
 *    they are marked allocated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

static void allocated(struct world *w, const char *pod)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", pod);
    kd_call(w->admin, "PATCH", path,
            "{\"metadata\":{\"annotations\":{\"gpuplane.io/phase\":\"allocated\"}}}", 200);
}

/* The agent's label on node set (value) or removed (NULL). */
static void agent_label(struct world *w, const char *node, const char *value)
{
    char path[128], b[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    if (value)
        snprintf(b, sizeof b, "{\"metadata\":{\"labels\":{\"%s\":\"%s\"}}}", GP_KUBE_LABEL_AGENT,
                 value);
    else
        snprintf(b, sizeof b, "{\"metadata\":{\"labels\":{\"%s\":null}}}", GP_KUBE_LABEL_AGENT);
    kd_call(w->admin, "PATCH", path, b, 200);
}

static void test_no_agent(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    w_open(&w, true);
    w_node_agent(&w, "plain", 8, false);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 1);
    }
    w_sync(&w);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(bound, 4); /* one cycle: nothing waits for a mark no one writes */
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        assert_string_equal(w_node_of(&w, name, NULL), "plain");
    }
    w_check_distinct(&w); /* gpuplane's books: each its own GPU */
    /* past --allocating-timeout: still "allocating" (no agent), not timed out */
    w.now += 300;
    w_cycle(&w);
    w.now += 300;
    w_cycle(&w);
    assert_int_equal(gp_kube_sched_stats(w.s).allocation_timeouts, 0);
    assert_string_equal(w_events(&w, "AllocationTimeout", "p0"), "");
    w_close(&w);
}

static void test_label_changes(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 8); /* the agent's */
    w_pod(&w, "p0", 1);
    w_pod(&w, "p1", 1);
    w_pod(&w, "p2", 1);
    assert_int_equal(w_cycle(&w), 1);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 2);
    /* the agent goes (NVIDIA's plugin back on the node): no slot any more */
    agent_label(&w, "n1", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 2);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        assert_string_equal(w_node_of(&w, name, NULL), "n1");
    }
    w_check_distinct(&w);
    /* the agent back: the three pods bound and not marked hold its slot */
    agent_label(&w, "n1", GP_KUBE_AGENT_PROTOCOL);
    w_pod(&w, "p3", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    allocated(&w, "p0");
    allocated(&w, "p1");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* p2 still allocating */
    allocated(&w, "p2");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "p3", NULL), "n1");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    w_check_distinct(&w);
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_agent, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_label_changes, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
