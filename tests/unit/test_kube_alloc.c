/* test_kube_alloc.c - pods left at gpuplane.io/phase=allocating (issues 14
 * and 16; kube/sched_alloc.c, node/protocol.c; docs/kube.md, "Pods left
 * allocating"), against the API server double, the scheduler's audit
 * clean after every cycle and no GPU named twice:
 *  - the node agent refuses an Allocate: the kubelet makes the pod Failed
 *    (UnexpectedAdmissionError), its GPU is freed and the pod waiting for
 *    it placed; the agent's next Allocate finds the new pod, not the
 *    Failed one still annotated allocating (it was refused as "2 pods
 *    allocating" before);
 *  - no agent answers: at the timeout, not before, a Warning
 *    AllocationTimeout Event, the counter and its metric, the phase
 *    written expired; the pod keeps its GPU (nothing else is given it)
 *    until it is deleted; before the timeout the next pod on its node
 *    waits for the node's allocating slot (kube/sched_slot.c: the agent
 *    would refuse two), after it the next one is bound and served; a pod
 *    that runs is never timed out and holds no slot;
 *  - a node blocked past the timeout by a pod the kubelet never admits:
 *    our decisions for it (nothing written yet) placed elsewhere, or kept
 *    with an Event when no other node fits (kube/sched_slot.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "kube/metrics.h"
#include "node/protocol.h"

static const char *phase_of(struct world *w, const char *pod)
{
    static char out[32];
    json_t *p = w_pod_get(w, pod);
    json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(ann, GP_KUBE_ANN_PHASE));
    snprintf(out, sizeof out, "%s", v ? v : "");
    json_decref(p);
    return out;
}

/* The kubelet's answer to a pod it cannot admit (pkg/kubelet: the pod
 * Failed, reason UnexpectedAdmissionError). */
static void kubelet_rejects(struct world *w, const char *pod)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", pod);
    kd_call(w->admin, "PATCH", path,
            "{\"status\":{\"phase\":\"Failed\",\"reason\":\"UnexpectedAdmissionError\","
            "\"message\":\"Pod was rejected: Allocate failed due to rpc error\"}}",
            200);
}

/* The agent's choice for the next Allocate on node: the pod's "ns/name",
 * or "refused" (more than one allocating), or "" (none). */
static const char *agent_choice(struct world *w, const char *node)
{
    static char out[320];
    struct gp_node_protocol pr;
    gp_node_protocol_init(&pr, w->admin, node);
    pr.wait_s = 0;
    struct gp_node_choice c;
    struct gp_diag d = {""};
    enum gp_err err = gp_node_protocol_choice(&pr, "nvidia.com/gpu", 1, false, &c, &d);
    gp_node_protocol_destroy(&pr);
    snprintf(out, sizeof out, "%s", err == GP_ESTATE ? "refused" : c.set ? c.pod : "");
    return out;
}

static void test_refused_allocate(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "p1", 1);
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "p1", NULL), "n1");
    assert_string_equal(phase_of(&w, "p1"), "allocating");
    w_pod(&w, "p2", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* the one GPU is p1's */
    assert_string_equal(agent_choice(&w, "n1"), "default/p1");
    kubelet_rejects(&w, "p1"); /* the agent refused its Allocate */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "p2", &gpus), "n1");
    assert_string_equal(gpus, "0");
    w_check_distinct(&w);
    /* p1 is still annotated allocating, but Failed: p2's Allocate is served */
    assert_string_equal(phase_of(&w, "p1"), "allocating");
    assert_string_equal(agent_choice(&w, "n1"), "default/p2");
    assert_int_equal(gp_kube_sched_stats(w.s).allocation_timeouts, 0);
    w_close(&w);
}

static void test_silent_agent(void **state)
{
    (void)state;
    struct world w;
    struct gp_kube_metrics km;
    w_open_metrics(&w, &km);
    w_node(&w, "n1", 3);
    w_pod(&w, "q1", 1);
    assert_int_equal(w_cycle(&w), 1);
    double t0 = w.now;
    /* the next pod on the node waits while q1 is allocating (one pod
     * allocating per node): decided, not annotated, not bound */
    w_pod(&w, "r1", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    assert_string_equal(w_node_of(&w, "r1", NULL), "");
    assert_string_equal(phase_of(&w, "r1"), "");
    double due = gp_kube_sched_next_retry_s(w.s);
    assert_true(due >= t0 + 120 && due <= t0 + 121);
    assert_string_equal(agent_choice(&w, "n1"), "default/q1");
    w.now = t0 + 119;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_events(&w, "AllocationTimeout", "q1"), "");
    assert_int_equal(gp_kube_sched_stats(w.s).allocation_timeouts, 0);
    gp_kube_sched_metrics(w.s);
    assert_true(gp_metrics_value(km.slot_waiting) == 1);
    /* q1 expires: an Event and the counter, its phase written "expired";
     * but the kubelet may still admit it late, and while it may the agent
     * cannot tell its Allocate from r1's (it refuses both, the review's
     * R3): r1 stays waiting, not bound to be refused */
    w.now = t0 + 121;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_events(&w, "AllocationTimeout", "q1"),
                        "gpuplane.io/phase still allocating 120 s after the pod was bound to n1: "
                        "no node agent served its Allocate; it keeps its GPUs until it fails or "
                        "is deleted (a bound pod cannot move to another node), and n1 takes no "
                        "other pod of gpuplane's until the kubelet has admitted it");
    assert_string_equal(phase_of(&w, "q1"), "expired");
    assert_string_equal(w_node_of(&w, "r1", NULL), "");
    assert_int_equal(gp_kube_sched_stats(w.s).allocation_timeouts, 1);
    gp_kube_sched_metrics(w.s);
    assert_true(gp_metrics_value(km.allocation_timeouts) == 1);
    assert_true(gp_metrics_value(km.slot_waiting) == 1);
    assert_string_equal(agent_choice(&w, "n1"), "");
    w.now += 30;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "r1", NULL), "");
    /* the kubelet admits q1 (it runs): the slot is free, r1 is bound and
     * its Allocate served */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/q1/status",
            "{\"status\":{\"phase\":\"Running\"}}", 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "r1", NULL), "n1");
    gp_kube_sched_metrics(w.s);
    assert_true(gp_metrics_value(km.slot_waiting) == 0);
    assert_string_equal(agent_choice(&w, "n1"), "default/r1");
    /* r1 runs (its phase left allocating, say by another device plugin):
     * never timed out, no Allocate's pod, and it holds no slot */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/r1/status",
            "{\"status\":{\"phase\":\"Running\"}}", 200);
    w_pod(&w, "q3", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(agent_choice(&w, "n1"), "default/q3");
    /* q1 keeps its GPU: the three are q1's, r1's and q3's */
    w_pod(&w, "q4", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "q4", NULL), "");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0); /* no GPU: not decided */
    /* once q1 is deleted its GPU is free; q4 then waits for q3's slot */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/q1?gracePeriodSeconds=0", NULL,
            200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    /* q3 times out; q4 waits until the kubelet is done with q3: here it
     * fails it (the agent refused its late Allocate: UnexpectedAdmissionError),
     * and a Failed pod holds nothing; q4 then times out in its turn */
    w.now += 200;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "q4", NULL), "");
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/q3/status",
            "{\"status\":{\"phase\":\"Failed\",\"reason\":\"UnexpectedAdmissionError\"}}", 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q4", NULL), "n1");
    w_check_distinct(&w);
    w.now += 1; /* q4 seen allocating from here */
    assert_int_equal(w_cycle(&w), 0);
    w.now += 200;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).allocation_timeouts, 3);
    assert_string_equal(w_events(&w, "AllocationTimeout", "r1"), "");
    gp_kube_sched_set_metrics(w.s, NULL);
    gp_kube_metrics_free(&km);
    w_close(&w);
}

/* Another scheduler's pod bound to an agent node, not admitted by the
 * kubelet yet (no container status): the agent cannot tell its Allocate
 * from ours and refuses both (node/protocol.c, the review's R3), so ours
 * is not bound there until the kubelet has admitted the other. */
static void test_foreign_unadmitted(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_pod_full(&w, "f1", 1, 0, "default-scheduler", NULL);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods/f1/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"f1\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
    w_pod(&w, "q1", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "q1", NULL), "");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    /* the kubelet admits f1 (its first sync reports the container) */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/f1/status",
            "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"ready\":false,"
            "\"restartCount\":0,\"image\":\"x\",\"imageID\":\"\",\"state\":{\"waiting\":"
            "{\"reason\":\"ContainerCreating\"}}}]}}",
            200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q1", NULL), "n1");
    assert_string_equal(agent_choice(&w, "n1"), "default/q1");
    w_check_distinct(&w);
    w_close(&w);
}

/* The kubelet's first sync of a pod it admitted: its container reported. */
static void kubelet_admits(struct world *w, const char *pod)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", pod);
    kd_call(w->admin, "PATCH", path,
            "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"ready\":false,"
            "\"restartCount\":0,\"image\":\"x\",\"imageID\":\"\",\"state\":{\"waiting\":"
            "{\"reason\":\"ContainerCreating\"}}}]}}",
            200);
}

/* The node agent's mark once its Allocate served the pod. */
static void agent_marks(struct world *w, const char *pod)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", pod);
    kd_call(w->admin, "PATCH", path,
            "{\"metadata\":{\"annotations\":{\"" GP_KUBE_ANN_PHASE "\":\"allocated\"}}}", 200);
}

/* Another scheduler's pod bound on n1 and never admitted by the kubelet:
 * n1 is blocked --allocating-timeout after it began holding the slot. A
 * decision of ours for n1, nothing written of it yet, is then taken back
 * and placed on n2 (the engine's choice with n1 left out), with an Event
 * naming the pod that blocks; a pod decided for n1 while the block lasts
 * moves in the same cycle; once the kubelet admits the other pod, n1
 * takes ours again. Fails without sched_slot.c's gp_ks_slot_unblock (q1
 * waits on n1 for ever). */
static void test_blocked_node_moved(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4); /* best-fit: the fuller node first */
    w_node(&w, "n2", 8);
    w_pod_full(&w, "f1", 1, 0, "default-scheduler", NULL);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods/f1/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"f1\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
    w_pod(&w, "q1", 1);
    double t0 = w.now;
    assert_int_equal(w_cycle(&w), 0); /* decided for n1, waiting for f1's admission */
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    assert_string_equal(w_node_of(&w, "q1", NULL), "");
    double due = gp_kube_sched_next_retry_s(w.s);
    assert_true(due >= t0 + 120 && due <= t0 + 121);
    w.now = t0 + 119;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "q1"), "");
    w.now = t0 + 121;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q1", NULL), "n2");
    assert_string_equal(
        w_events(&w, "AllocatingSlotBlocked", "q1"),
        "node n1 has taken no pod of gpuplane's asking a GPU for 121 s: pod default/f1 is bound "
        "there and the kubelet has not admitted it (gpuplane's node agent cannot tell that pod's "
        "Allocate from the next one's and would refuse both); its decision for n1 was taken back "
        "(nothing had been written of it) and it was placed again without n1");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    assert_string_equal(agent_choice(&w, "n2"), "default/q1");
    agent_marks(&w, "q1");
    w_check_distinct(&w);
    /* n1 still blocked: q2, decided there (3 GPUs free against 7), goes
     * to n2 in the same cycle */
    w_pod(&w, "q2", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q2", NULL), "n2");
    assert_true(strstr(w_events(&w, "AllocatingSlotBlocked", "q2"), "pod default/f1") != NULL);
    agent_marks(&w, "q2");
    /* the kubelet admits f1: n1 takes ours again */
    kubelet_admits(&w, "f1");
    w_pod(&w, "q3", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q3", NULL), "n1");
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "q3"), "");
    w_check_distinct(&w);
    w_close(&w);
}

/* The same block with no other node for the pod: its decision for n1 is
 * kept (bound the moment the slot frees), a Warning Event says why once,
 * and it is tried elsewhere again after a back-off: a node added later
 * takes it. Fails without gp_ks_slot_unblock (no Event; q1 never moves). */
static void test_blocked_nowhere_else(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_pod_full(&w, "f1", 1, 0, "default-scheduler", NULL);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods/f1/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"f1\"},"
            "\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}",
            201);
    w_pod(&w, "q1", 1);
    double t0 = w.now;
    assert_int_equal(w_cycle(&w), 0);
    w.now = t0 + 121;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "q1", NULL), "");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    const char *said =
        "node n1 has taken no pod of gpuplane's asking a GPU for 121 s: pod default/f1 is bound "
        "there and the kubelet has not admitted it (gpuplane's node agent cannot tell that pod's "
        "Allocate from the next one's and would refuse both); no other node fits the pod now: it "
        "stays decided for n1 (its GPUs booked there) and is bound once the slot frees, tried "
        "elsewhere again meanwhile";
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "q1"), said);
    w.now += 30;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_events(&w, "AllocatingSlotBlocked", "q1"), said); /* once */
    /* a node comes: q1 goes there at its next try */
    w_node(&w, "n2", 2);
    w.now += 5;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q1", NULL), "n2");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    w_check_distinct(&w);
    w_close(&w);
}

int main(int argc, char **argv)
{
    w_auto_allocate_ms = -1; /* no agent unless the test plays it */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refused_allocate, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_silent_agent, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_foreign_unadmitted, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_blocked_node_moved, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_blocked_nowhere_else, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
