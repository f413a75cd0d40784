/* test_kube_sched.c - the scheduler (kube/sched.h) against the API server
 * double, driven into each failure the GPU schedulers in the field are
 * known for (issue 14), with the audit clean after every cycle (w_cycle
 * fails otherwise) and no GPU named twice in the API:
 *  - a decision: annotations (node, GPUs) then the Binding; an
 *    unschedulable pod's condition and Event in kube-scheduler's words;
 *  - a stale cache (KAI #1103): the patch's resourceVersion precondition
 *    answers 409, the decision is rolled back and retried after a back-off;
 *  - a bind rejected again and again (KAI #2074): the pod backs off, its
 *    annotations are cleared each time, the others bind (Volcano #5335);
 *  - a full node (KAI #848): nothing is sent again until something frees;
 *    a deleted pod's GPUs freed once it is gone (HAMi #2923), not before;
 *  - a restart (HAMi #812): bound pods rebuilt at their annotated GPUs, a
 *    half-finished decision bound, a stale one not given a taken GPU,
 *    every pending pod bound;
 *  - an annotated node other than the bound one (HAMi #1106), and a real
 *    double booking planted by hand: the audit reports it;
 *  - other schedulers' pods take capacity; only a leader binds;
 *  - preemption: the victim deleted gracefully, the preemptor bound only
 *    once the victim is gone;
 *  - a gang: none bound until all fit; one member's failed annotation
 *    takes the others back; a member's Binding refused before any member
 *    is bound takes them all back, after one is bound keeps the member on
 *    its node (its GPUs booked) and binds it later; a kept member whose
 *    node goes or which is deleted is released, said in an Event;
 *  - memory: pods, nodes and PodGroups made and deleted by the hundred
 *    leave records only for what is alive;
 *  - the metrics' values after such scenarios (decisions, bind failures,
 *    queues, GPUs per pool, victims, audit, leader).
 * Run with "shared", the same tests run with the double checking every
 * object written against the published schemas (../shared/k8s/schemas/;
 * w_close asserts none failed), and probes show the check refuses what it
 * must; without the schemas that run exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "kube/metrics.h"

static void test_bind_and_explain(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    char name[16];
    for (int i = 1; i <= 6; i++) {
        snprintf(name, sizeof name, "a%d", i);
        w_pod(&w, name, 1);
    }
    w_pod(&w, "big", 8);
    w_pod_full(&w, "other", 1, 0, "default-scheduler", NULL); /* not ours: left alone */
    assert_int_equal(w_cycle(&w), 6);
    for (int i = 1; i <= 6; i++) {
        snprintf(name, sizeof name, "a%d", i);
        const char *gpus;
        const char *node = w_node_of(&w, name, &gpus);
        assert_true(strcmp(node, "n1") == 0 || strcmp(node, "n2") == 0);
        assert_int_equal(strlen(gpus), 1);
    }
    w_check_distinct(&w);
    assert_string_equal(w_node_of(&w, "other", NULL), "");
    assert_string_equal(w_node_of(&w, "big", NULL), "");
    json_t *big = w_pod_get(&w, "big");
    json_t *cond = json_array_get(json_object_get(json_object_get(big, "status"), "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(cond, "type")), "PodScheduled");
    assert_string_equal(json_string_value(json_object_get(cond, "status")), "False");
    assert_string_equal(json_string_value(json_object_get(cond, "reason")), "Unschedulable");
    assert_string_equal(
        json_string_value(json_object_get(cond, "message")),
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
    json_decref(big);
    assert_string_equal(
        w_events(&w, "FailedScheduling", "big"),
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
    assert_string_equal(w_events(&w, "Scheduled", "a1"),
                        strcmp(w_node_of(&w, "a1", NULL), "n1") == 0
                            ? "Successfully assigned default/a1 to n1"
                            : "Successfully assigned default/a1 to n2");
    /* nothing changed: nothing written again */
    long writes = w_stat(&w, "writes");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(w_stat(&w, "writes"), writes);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.binds, 6);
    assert_int_equal(st.unschedulable, 1);
    assert_int_equal(st.rollbacks, 0);
    w_close(&w);
}

static void test_stale_cache(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "p1", 1);
    w_pod(&w, "p2", 1);
    w_sync(&w);
    /* p1 changes after the scheduler last saw it */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/p1",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(bound, 1);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    /* its one write, the Binding with its annotations, refused (409) on
     * the stale version: read back unbound, taken back, nothing cleared */
    assert_int_equal(st.bind_conflicts, 1);
    assert_int_equal(st.patch_conflicts, 0);
    assert_int_equal(st.rollbacks, 1);
    assert_int_equal(st.waiting_backoff, 1);
    assert_string_equal(w_ann(&w, "p1", GP_KUBE_ANN_NODE), "");
    assert_string_equal(w_node_of(&w, "p1", NULL), "");
    assert_string_equal(w_node_of(&w, "p2", NULL), "n1");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    /* inside its back-off it is not tried */
    w.now += 0.2;
    assert_int_equal(w_cycle(&w), 0);
    w.now += 0.5;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "p1", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

/* A pending pod of ours whose version reaches the scheduler without
 * metadata.resourceVersion (a real API server gives every object one):
 * its decision could only be written without a precondition (a merge
 * patch's "resourceVersion":"" is none), so it is not scheduled, with an
 * Event saying why; the next version, with one, is placed. Fails with the
 * read's check and bind.c's refusal left out (the pod annotated and bound
 * by an unconditioned patch), and its Event check without the read's. */
static void test_pod_without_rv(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    assert_int_equal(w_cycle(&w), 0); /* synced, the engine built */
    w_pod(&w, "v1", 1);
    json_t *pod = w_pod_get(&w, "v1");
    json_object_del(json_object_get(pod, "metadata"), "resourceVersion");
    gp_kube_sched_pod_change(GP_KUBE_ADDED, pod, NULL, w.s);
    json_decref(pod);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK); /* not synced */
    assert_int_equal(bound, 0);
    assert_string_equal(w_node_of(&w, "v1", NULL), "");
    json_t *now = w_pod_get(&w, "v1");
    assert_null(json_object_get(json_object_get(now, "metadata"), "annotations"));
    json_decref(now);
    assert_non_null(strstr(w_events(&w, "FailedScheduling", "v1"),
                           "gpuplane cannot read the pod: metadata.resourceVersion: missing"));
    /* the API's own version (a label touched: a new one) is placed */
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/v1",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "v1", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

static void test_bind_rejected(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "bad", 1);
    w_pod(&w, "g1", 1);
    w_pod(&w, "g2", 1);
    w_pod(&w, "g3", 1);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1000,\"match\":\"/pods/bad/binding\"}", 200);
    for (int i = 0; i < 8; i++) {
        w_cycle(&w);
        const char *gpus;
        assert_string_equal(w_node_of(&w, "bad", &gpus), "");
        assert_string_equal(gpus, ""); /* every failed decision's annotations are cleared */
        w.now += 0.6;
    }
    assert_string_equal(w_node_of(&w, "g1", NULL), "n1");
    assert_string_equal(w_node_of(&w, "g2", NULL), "n1");
    assert_string_equal(w_node_of(&w, "g3", NULL), "");
    w_check_distinct(&w);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_true(st.bind_failures >= 1);
    assert_int_equal(st.rollbacks, st.bind_failures);
    assert_true(strstr(w_events(&w, "FailedScheduling", "bad"), "Binding rejected: ") != NULL);
    w_close(&w);
}

/* A graceful deletion ends only here: each pod on a node deleted in these
 * tests keeps its 30 s grace (terminationGracePeriodSeconds) in the
 * double, so "still stopping" holds however slow the machine is (a
 * sanitizer build under load), and the deletion ends when the test says,
 * not after a sleep that has to outlast a short grace. */
static void finish_deletions(struct world *w)
{
    kd_call(w->admin, "POST", "/_control/finish_deletions", NULL, 200);
}

static void test_full_node_and_delete(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "f1", 1);
    w_pod(&w, "f2", 1);
    w_pod(&w, "f3", 1);
    assert_int_equal(w_cycle(&w), 2);
    assert_string_equal(w_node_of(&w, "f3", NULL), "");
    const char *g;
    w_node_of(&w, "f1", &g);
    char f1_gpu[8];
    snprintf(f1_gpu, sizeof f1_gpu, "%s", g);
    long writes = w_stat(&w, "writes");
    for (int i = 0; i < 5; i++) {
        w.now += 1;
        assert_int_equal(w_cycle(&w), 0);
    }
    assert_int_equal(w_stat(&w, "writes"), writes); /* the full node is not tried again */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/f1", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* f1 is still stopping: its GPU is not free */
    assert_string_equal(w_node_of(&w, "f3", NULL), "");
    finish_deletions(&w); /* the kubelet is done stopping it */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "f3", &g), "n1");
    assert_string_equal(g, f1_gpu);
    w_check_distinct(&w);
    w_close(&w);
}

/* A pod that completes (phase Succeeded, then Failed for the next) gives
 * its GPU back as a deleted one does: the pending pod of the shape that
 * did not fit is tried again and takes it (the informer's ended pod, not
 * only a DELETE, must return capacity to the waiting shape). */
static void test_full_node_and_completion(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "f1", 1);
    w_pod(&w, "f2", 1);
    w_pod(&w, "f3", 1);
    w_pod(&w, "f4", 1);
    assert_int_equal(w_cycle(&w), 2);
    assert_string_equal(w_node_of(&w, "f3", NULL), "");
    for (int i = 0; i < 3; i++) {
        w.now += 1;
        assert_int_equal(w_cycle(&w), 0);
    }
    const char *ended[2] = {"Succeeded", "Failed"};
    const char *first[2] = {"f1", "f2"};
    for (int k = 0; k < 2; k++) {
        char path[128], body[96];
        snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", first[k]);
        snprintf(body, sizeof body, "{\"status\":{\"phase\":\"%s\"}}", ended[k]);
        kd_call(w.admin, "PATCH", path, body, 200);
        w.now += 1;
        assert_int_equal(w_cycle(&w), 1);
    }
    assert_string_equal(w_node_of(&w, "f3", NULL), "n1");
    assert_string_equal(w_node_of(&w, "f4", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

static void test_restart(void **state)
{
    (void)state;
    struct world a;
    w_open(&a, true);
    w_node(&a, "n1", 4);
    w_node(&a, "n2", 4);
    w_pod(&a, "p1", 1);
    w_pod(&a, "p2", 1);
    assert_int_equal(w_cycle(&a), 2);
    const char *g;
    char p1_node[8], p1_gpu[8];
    snprintf(p1_node, sizeof p1_node, "%s", w_node_of(&a, "p1", &g));
    snprintf(p1_gpu, sizeof p1_gpu, "%s", g);
    w_close(&a);
    struct world b;
    w_open(&b, true);
    /* while no scheduler runs: a decision written but not bound (the
     * scheduler died in between), a stale one naming p1's GPU, pending pods */
    w_pod_full(&b, "half", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"n2\",\"gpuplane.io/gpus\":\"3\","
               "\"gpuplane.io/phase\":\"allocating\"}");
    char meta[256];
    snprintf(meta, sizeof meta,
             ",\"annotations\":{\"gpuplane.io/node\":\"%s\",\"gpuplane.io/gpus\":\"%s\","
             "\"gpuplane.io/phase\":\"allocating\"}",
             p1_node, p1_gpu);
    w_pod_full(&b, "stale", 1, 0, "gpuplane", meta);
    for (int i = 1; i <= 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "q%d", i);
        w_pod(&b, name, 1);
    }
    assert_int_equal(w_cycle(&b), 6);
    assert_string_equal(w_node_of(&b, "half", &g), "n2");
    assert_string_equal(g, "3");
    assert_string_equal(w_node_of(&b, "p1", &g), p1_node); /* untouched */
    assert_string_equal(g, p1_gpu);
    w_node_of(&b, "stale", &g);
    assert_true(strcmp(w_node_of(&b, "stale", NULL), p1_node) != 0 || strcmp(g, p1_gpu) != 0);
    w_check_distinct(&b);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(b.s);
    assert_int_equal(st.resumed, 1);
    assert_int_equal(st.pending, 0);
    w_close(&b);
}

static void test_mismatch_and_audit(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_node(&w, "n2", 2);
    /* annotated for n1's GPU 0, bound to n2 by someone else */
    w_pod_full(&w, "m", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"0\"}");
    w_bind(&w, "m", "n2");
    w_pod(&w, "q1", 1);
    w_pod(&w, "q2", 1);
    w_pod(&w, "q3", 1);
    assert_int_equal(w_cycle(&w), 3);
    int on_n1 = 0;
    on_n1 += strcmp(w_node_of(&w, "q1", NULL), "n1") == 0;
    on_n1 += strcmp(w_node_of(&w, "q2", NULL), "n1") == 0;
    on_n1 += strcmp(w_node_of(&w, "q3", NULL), "n1") == 0;
    assert_int_equal(on_n1, 2); /* m's annotation books nothing on n1 */
    w_check_distinct(&w);
    /* a real double booking, made by hand: the audit reports it once */
    const char *free_gpu;
    w_node_of(&w,
              strcmp(w_node_of(&w, "q1", NULL), "n2") == 0   ? "q1"
              : strcmp(w_node_of(&w, "q2", NULL), "n2") == 0 ? "q2"
                                                             : "q3",
              &free_gpu);
    char meta[160];
    snprintf(meta, sizeof meta,
             ",\"annotations\":{\"gpuplane.io/node\":\"n2\",\"gpuplane.io/gpus\":\"%s\"}",
             free_gpu);
    w_pod_full(&w, "x1", 1, 0, "gpuplane", meta);
    w_bind(&w, "x1", "n2");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 1);
    assert_non_null(strstr(gp_kube_sched_audit_last(w.s), "of node n2 is booked by"));
    assert_non_null(strstr(w_events(&w, "GPUDoubleBooked", "n2"), "of node n2 is booked by"));
    w_close(&w);
}

static void test_foreign_and_leader(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 2);
    w_node(&w, "n2", 2);
    w_pod_full(&w, "theirs", 2, 0, "default-scheduler", NULL);
    w_bind(&w, "theirs", "n1");
    w_pod(&w, "o1", 1);
    w_pod(&w, "o2", 1);
    w_pod(&w, "o3", 1);
    assert_int_equal(w_cycle(&w), 0); /* not the leader: nothing written */
    assert_int_equal(w_stat(&w, "bindings"), 1);
    gp_kube_sched_set_leader(w.s, true);
    assert_int_equal(w_cycle(&w), 2);
    assert_string_equal(w_node_of(&w, "o1", NULL), "n2");
    assert_string_equal(w_node_of(&w, "o2", NULL), "n2");
    assert_string_equal(w_node_of(&w, "o3", NULL), "");
    w_close(&w);
}

/* The message of the pod's PodScheduled condition ("" when none). */
static const char *condition_message(struct world *w, const char *name)
{
    static char out[2048];
    out[0] = '\0';
    json_t *p = w_pod_get(w, name);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(p, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *m = json_string_value(json_object_get(c, "message"));
        if (type && strcmp(type, "PodScheduled") == 0 && m)
            snprintf(out, sizeof out, "%s", m);
    }
    json_decref(p);
    return out;
}

static void test_preempt(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod_full(&w, "low", 1, 0, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    json_t *low = w_pod_get(&w, "low");
    assert_non_null(json_object_get(json_object_get(low, "metadata"), "deletionTimestamp"));
    json_decref(low);
    assert_string_equal(w_node_of(&w, "high", NULL), "");
    /* kube-scheduler's attempt that preempts: the histogram with the
     * victim's GPU still counted, no PostFilter message, the node
     * nominated (schedule_one.go, FitError.Error) */
    static const char hist[] = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.";
    assert_string_equal(condition_message(&w, "high"), hist);
    assert_string_equal(w_events(&w, "FailedScheduling", "high"), hist);
    json_t *high = w_pod_get(&w, "high");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(high, "status"), "nominatedNodeName")),
        "n1");
    json_decref(high);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* the victim is still stopping */
    /* a later attempt while it terminates: PodEligibleToPreemptOthers */
    assert_string_equal(condition_message(&w, "high"),
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: not "
                        "eligible due to a terminating pod on the nominated node..");
    finish_deletions(&w); /* the kubelet is done stopping it */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    assert_int_equal(gp_kube_sched_stats(w.s).evictions, 1);
    /* kube-scheduler's note: the preemptor's UID and the node */
    json_t *hp = w_pod_get(&w, "high");
    char note[256];
    snprintf(note, sizeof note, "Preempted by pod %s on node n1",
             json_string_value(json_object_get(json_object_get(hp, "metadata"), "uid")));
    json_decref(hp);
    assert_string_equal(w_events(&w, "Preempted", "low"), note);
    w_close(&w);
}

/* A victim's GPUs stay booked while it stops: a pod waiting beside the
 * preemptor, placed by the same cycle on the victim's other GPU, is bound
 * only once the victim is gone (kube-scheduler counts a victim's
 * resources until its deletion completes). w_cycle's audit fails on the
 * double booking otherwise. */
static void test_preempt_bystander(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod_full(&w, "low", 2, 0, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "wait", 1, 0, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* full, and no lower priority to evict */
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "wait", NULL), "");
    assert_string_equal(w_node_of(&w, "high", NULL), "");
    finish_deletions(&w); /* the kubelet is done stopping it */
    for (int i = 0; i < 3; i++) {
        w.now += 1;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    assert_string_equal(w_node_of(&w, "wait", NULL), "n1");
    w_close(&w);
}

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

/* The check refuses what the real server refuses (and the probes count). */
static void test_schema_probes(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\"}]}}",
            201);
    kd_call(c, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"containerz\":[]}}", 422);
    kd_call(c, "POST", "/api/v1/namespaces/default/pods/p/binding",
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\"}}", 422);
    kd_call(c, "PATCH", "/api/v1/namespaces/default/pods/p/status",
            "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
            "\"lastTransitionTime\":\"yesterday\"}]}}",
            422);
    kd_call(c, "POST", "/apis/events.k8s.io/v1/namespaces/default/events",
            "{\"metadata\":{\"name\":\"e1\"},\"eventTime\":\"2026-12-01T09:19:37.000000Z\","
            "\"reportingController\":\"gpuplane\",\"reportingInstance\":\"r\",\"action\":"
            "\"Scheduling\",\"reason\":\"X\",\"type\":\"Info\"}",
            422);
    kd_call(c, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
            "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"leaseDurationSeconds\":\"40\"}}", 422);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/_control/stats", NULL, NULL, &r, &d), GP_OK);
    json_t *st = json_loads(r.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(st, "schema_errors")), 5);
    kd_schema_errors_meant = 5; /* the probes' refusals, not the scheduler's */
    kd_call(c, "POST", "/_control/clear", NULL, 200);
    json_decref(st);
    gp_kube_response_free(&r);
    gp_kube_client_free(c);
}

static void gang_pod(struct world *w, const char *name)
{
    w_pod_full(w, name, 2, 0, "gpuplane",
               ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"train\"}");
}

/* A gang (a PodGroup of minMember 3): nothing bound while its members do
 * not all fit, all bound once they do; a member whose annotation cannot
 * be written takes the others back with it. */
static void test_gang(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    gang_pod(&w, "g1");
    gang_pod(&w, "g2");
    gang_pod(&w, "g3");
    assert_int_equal(w_cycle(&w), 0); /* no PodGroup yet: they wait */
    kd_call(w.admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
            "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"train\"},\"spec\":{\"minMember\":3}}",
            201);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* 6 GPUs asked, 4 there: none bound */
    assert_string_equal(w_node_of(&w, "g1", NULL), "");
    w_node(&w, "n2", 4);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":422,\"count\":1,\"match\":\"/pods/g2\"}", 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* g2's annotation refused: all three back */
    const char *g;
    assert_string_equal(w_node_of(&w, "g1", &g), "");
    assert_string_equal(g, "");
    assert_int_equal(gp_kube_sched_stats(w.s).rollbacks, 3);
    w.now += 2;
    assert_int_equal(w_cycle(&w), 3);
    assert_string_equal(w_node_of(&w, "g3", NULL)[0] == 'n' ? "ok" : "", "ok");
    w_check_distinct(&w);
    w_close(&w);
}

static void podgroup(struct world *w, const char *name, unsigned min)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"minMember\":%u}}",
             name, min);
    kd_call(w->admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups", b,
            201);
}

/* Whether the pod is bound (its node into node, when not NULL). */
static bool bound_at(struct world *w, const char *pod, char *node)
{
    const char *n = w_node_of(w, pod, NULL);
    if (node)
        snprintf(node, 64, "%s", n);
    return n[0] != '\0';
}

/* A gang's member whose Binding is refused (audit gap 9: a bound pod
 * cannot be unbound). Three members of 2 GPUs on three nodes of 2:
 *  - the first Binding refused, no member on a node yet: all three taken
 *    back, annotations cleared, none bound (all or none);
 *  - g3's Binding refused after g1 and g2 were bound: g3 is kept, its
 *    annotations and its GPUs booked (a pod of 2 GPUs waiting beside it
 *    is not given them), its Binding retried after a back-off until it
 *    binds, at the GPUs its annotations name;
 * the audit clean after every cycle (w_cycle). Taking g3 back instead (as
 * before) leaves the gang partly bound and gives g3's GPUs to f. */
/* w_cycle, then (with binders) the binds in flight waited for and the
 * next cycle's results applied: the pods bound. */
static size_t g_cycle(struct world *w)
{
    size_t n = w_cycle(w), more;
    gp_kube_sched_wait_binds(w->s, &more);
    w_sync(w);
    if (gp_kube_sched_audit_all(w->s) != 0 || gp_kube_sched_stats(w->s).audit_violations != 0)
        fail_msg("audit: %s", gp_kube_sched_audit_last(w->s));
    return n + more;
}

#define GANG_BINDERS 3

static void gang_bind_refused(bool binders)
{
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *bc[GANG_BINDERS] = {NULL};
    if (binders) {
        for (int i = 0; i < GANG_BINDERS; i++)
            bc[i] = kd_client();
        struct gp_diag d = {""};
        assert_int_equal(gp_kube_sched_start_binders(w.s, bc, GANG_BINDERS, NULL, NULL, &d), GP_OK);
    }
    w_node(&w, "n1", 2);
    w_node(&w, "n2", 2);
    w_node(&w, "n3", 2);
    podgroup(&w, "train", 3);
    gang_pod(&w, "g1");
    gang_pod(&w, "g2");
    gang_pod(&w, "g3");
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1,\"match\":\"/binding\"}", 200);
    assert_int_equal(g_cycle(&w), 0); /* the first Binding refused: none bound, all back */
    const char *names[] = {"g1", "g2", "g3"};
    for (int i = 0; i < 3; i++) {
        const char *g;
        assert_string_equal(w_node_of(&w, names[i], &g), "");
        assert_string_equal(g, "");
    }
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.rollbacks, 3);
    assert_int_equal(st.gang_kept, 0);
    /* g3's Binding refused again and again, after g1's and g2's went through */
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1000,\"match\":\"/pods/g3/binding\"}", 200);
    w.now += 1;
    assert_int_equal(g_cycle(&w), 2);
    assert_true(bound_at(&w, "g1", NULL) && bound_at(&w, "g2", NULL));
    assert_false(bound_at(&w, "g3", NULL));
    json_t *g3 = w_pod_get(&w, "g3");
    json_t *ann = json_object_get(json_object_get(g3, "metadata"), "annotations");
    char kept_node[64], kept_gpus[64];
    const char *an = json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE));
    const char *ag = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
    snprintf(kept_node, sizeof kept_node, "%s", an ? an : "");
    snprintf(kept_gpus, sizeof kept_gpus, "%s", ag ? ag : "");
    json_decref(g3);
    assert_string_equal(kept_gpus, "0,1"); /* its decision stays written */
    st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.gang_kept, 1);
    assert_int_equal(st.rollbacks, 3); /* none taken back */
    assert_non_null(strstr(w_events(&w, "FailedScheduling", "g3"), "stay booked"));
    w_pod(&w, "f", 2); /* only g3's GPUs are free: f does not get them */
    for (int i = 0; i < 4; i++) {
        w.now += 5;
        assert_int_equal(g_cycle(&w), 0);
        assert_false(bound_at(&w, "f", NULL));
        assert_false(bound_at(&w, "g3", NULL));
    }
    st = gp_kube_sched_stats(w.s);
    assert_true(st.gang_kept >= 3); /* retried after each back-off */
    assert_int_equal(st.rollbacks, 3);
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w.now += 11;
    assert_int_equal(g_cycle(&w), 1);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "g3", &gpus), kept_node);
    assert_string_equal(gpus, kept_gpus);
    assert_false(bound_at(&w, "f", NULL));
    w_check_distinct(&w);
    if (binders)
        gp_kube_sched_stop_binders(w.s);
    for (int i = 0; i < GANG_BINDERS; i++)
        gp_kube_client_free(bc[i]);
    w_close(&w);
}

static void test_gang_bind_refused(void **state)
{
    (void)state;
    gang_bind_refused(false);
}

/* The same with binder threads (bind.c's pool): jobs run beside the
 * cycle, their results applied by the next one. */
static void test_gang_bind_refused_pool(void **state)
{
    (void)state;
    gang_bind_refused(true);
}

/* A kept member (its Binding refused after its siblings were bound) that
 * cannot be bound: its node deleted, the decision is taken back with an
 * Event on where its gang stands, and it is decided anew (alone: its
 * siblings count) on a node that comes; deleted, its GPUs are released
 * (another pod gets them) with an Event. */
static void test_gang_kept_gone(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_node(&w, "n2", 2);
    w_node(&w, "n3", 2);
    podgroup(&w, "train", 3);
    gang_pod(&w, "g1");
    gang_pod(&w, "g2");
    gang_pod(&w, "g3");
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1000,\"match\":\"/pods/g3/binding\"}", 200);
    assert_int_equal(w_cycle(&w), 2);
    char node[64], path[160];
    assert_false(bound_at(&w, "g3", NULL));
    json_t *g3 = w_pod_get(&w, "g3");
    const char *an = json_string_value(json_object_get(
        json_object_get(json_object_get(g3, "metadata"), "annotations"), GP_KUBE_ANN_NODE));
    assert_non_null(an); /* its decision stays written */
    snprintf(node, sizeof node, "%s", an);
    json_decref(g3);
    /* its node goes */
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    kd_call(w.admin, "DELETE", path, NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_non_null(strstr(w_events(&w, "FailedScheduling", "g3"),
                           "is gone; gang default/train: 2 of its 2 other members bound"));
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_node(&w, "n4", 2);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1); /* alone: its two siblings count */
    assert_string_equal(w_node_of(&w, "g3", NULL), "n4");
    w_check_distinct(&w);
    /* a second gang, its g6 kept, then deleted: its GPUs go to f */
    podgroup(&w, "eval", 2);
    w_node(&w, "n5", 2);
    w_node(&w, "n6", 2);
    w_pod_full(&w, "g5", 2, 0, "gpuplane",
               ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"eval\"}");
    w_pod_full(&w, "g6", 2, 0, "gpuplane",
               ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"eval\"}");
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1000,\"match\":\"/pods/g6/binding\"}", 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_true(bound_at(&w, "g5", NULL) && !bound_at(&w, "g6", NULL));
    w_pod(&w, "f", 2);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* g6's GPUs are kept for it */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/g6?gracePeriodSeconds=0", NULL,
            200);
    w.now += 1;
    w_cycle(&w);
    w.now += 1;
    w_cycle(&w);
    assert_true(bound_at(&w, "f", NULL));
    assert_non_null(
        strstr(w_events(&w, "FailedScheduling", "g6"), "deleted before its Binding to "));
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_check_distinct(&w);
    w_close(&w);
}

/* A scheduler runs for months: pods streamed through create, bind and
 * delete leave nothing behind - the engine forgets each one that ended
 * (gp_engine_pod_forget), the id map follows, and the specs kept for the
 * engine's shapes are freed by a rebuild once they outnumber what is
 * alive. 1,200 pods through a node of 8 GPUs, 4 at a time; and nodes and
 * PodGroups that come and go (an autoscaler's nodes, a PodGroup per Job):
 * each round a node, a PodGroup and a member of it made, then deleted
 * (the PodGroup before its member: its record goes with the member) -
 * the records kept stay those of what is alive, not the 300 seen. */
static void test_stream_bounded(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 8);
    char name[32], path[160];
    unsigned seq = 0;
    uint64_t max_held = 0, max_ids = 0, max_retired = 0, max_nodes = 0, max_groups = 0;
    for (int round = 0; round < 300; round++) {
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof name, "s%u", seq + (unsigned)i);
            w_pod(&w, name, 1 + (unsigned)(round % 2));
        }
        snprintf(name, sizeof name, "x%d", round);
        w_node(&w, name, 1);
        snprintf(name, sizeof name, "pg%d", round);
        podgroup(&w, name, 1);
        char meta[128];
        snprintf(meta, sizeof meta, ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"pg%d\"}",
                 round);
        snprintf(name, sizeof name, "m%d", round);
        w_pod_full(&w, name, 1, 0, "gpuplane", meta);
        assert_int_equal(w_cycle(&w), 5);
        struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
        max_nodes = st.node_records > max_nodes ? st.node_records : max_nodes;
        max_groups = st.group_records > max_groups ? st.group_records : max_groups;
        for (int i = 0; i < 4; i++) {
            snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/s%u?gracePeriodSeconds=0",
                     seq + (unsigned)i);
            kd_call(w.admin, "DELETE", path, NULL, 200);
        }
        snprintf(path, sizeof path,
                 "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/pg%d", round);
        kd_call(w.admin, "DELETE", path, NULL, 200);
        snprintf(path, sizeof path, "/api/v1/nodes/x%d", round);
        kd_call(w.admin, "DELETE", path, NULL, 200);
        snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/m%d?gracePeriodSeconds=0",
                 round);
        kd_call(w.admin, "DELETE", path, NULL, 200);
        seq += 4;
        w_sync(&w);
        st = gp_kube_sched_stats(w.s);
        assert_int_equal(st.records, 0);
        max_held = st.engine_pods_held > max_held ? st.engine_pods_held : max_held;
        max_ids = st.engine_ids_held > max_ids ? st.engine_ids_held : max_ids;
        max_retired = st.retired_specs > max_retired ? st.retired_specs : max_retired;
        max_nodes = st.node_records > max_nodes ? st.node_records : max_nodes;
        max_groups = st.group_records > max_groups ? st.group_records : max_groups;
    }
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.binds, 1500);
    /* chunks of 64 records: a few for the 4 pods alive, never the 1,200 */
    if (max_held > 192 || max_ids > 192)
        fail_msg("engine records held %llu, ids mapped %llu: not bounded by the pods alive",
                 (unsigned long long)max_held, (unsigned long long)max_ids);
    assert_true(max_retired <= 1024 + 8);
    assert_true(st.rebuilds >= 2); /* the first, and one forced by the retired specs */
    /* n1, this round's node and the last round's (its record goes at the
     * next cycle); this round's PodGroup and the last one's */
    if (max_nodes > 3 || max_groups > 2)
        fail_msg("node records %llu, PodGroup records %llu: not bounded by what is alive",
                 (unsigned long long)max_nodes, (unsigned long long)max_groups);
    w.now += 1;
    w_cycle(&w);
    st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.node_records, 1);
    assert_int_equal(st.group_records, 0);
    /* a PodGroup deleted while a member (pending: 1 of its 2) names it
     * stays, the member still a gang's, until the member goes */
    podgroup(&w, "last", 2);
    w_pod_full(&w, "ml", 1, 0, "gpuplane",
               ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"last\"}");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    kd_call(w.admin, "DELETE",
            "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/last", NULL, 200);
    w.now += 1;
    w_cycle(&w);
    assert_int_equal(gp_kube_sched_stats(w.s).group_records, 1);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/ml?gracePeriodSeconds=0", NULL,
            200);
    w.now += 1;
    w_cycle(&w);
    assert_int_equal(gp_kube_sched_stats(w.s).group_records, 0);
    w_close(&w);
}

/* The latency histograms (metrics.h): an attempt observed per decision
 * (bound or unschedulable), a bind per pod bound; not when nothing is
 * tried. Breaking either observation fails it. */
static void test_latency_metrics(void **state)
{
    (void)state;
    struct world w;
    struct gp_kube_metrics km;
    w_open_metrics(&w, &km);
    w_node(&w, "n1", 2);
    w_pod(&w, "a", 1);
    w_pod(&w, "b", 1);
    w_pod(&w, "c", 1);
    assert_int_equal(w_cycle(&w), 2);
    assert_int_equal(gp_metrics_count(km.scheduling_s), 3); /* a, b bound; c unschedulable */
    assert_int_equal(gp_metrics_count(km.bind_s), 2);
    double sched_s = gp_metrics_value(km.scheduling_s), bind_s = gp_metrics_value(km.bind_s);
    assert_true(sched_s > 0 && sched_s < 10);
    assert_true(bind_s > 0 && bind_s < 10);
    w.now += 1;
    w_cycle(&w); /* nothing changed: c is not tried again */
    assert_int_equal(gp_metrics_count(km.scheduling_s), 3);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/a?gracePeriodSeconds=0", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_int_equal(gp_metrics_count(km.scheduling_s), 4);
    assert_int_equal(gp_metrics_count(km.bind_s), 3);
    assert_true(gp_metrics_value(km.bind_s) > bind_s);
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    gp_metrics_expose(km.reg, &out);
    assert_non_null(strstr(gp_sbuf_str(&out), GP_KM_SCHEDULING_S "_count 4\n"));
    assert_non_null(strstr(gp_sbuf_str(&out), GP_KM_BIND_S "_count 3\n"));
    gp_sbuf_free(&out);
    gp_kube_sched_set_metrics(w.s, NULL);
    gp_kube_metrics_free(&km);
    w_close(&w);
}

/* w_cycle, then the metrics brought up to date (as run.c does after a
 * cycle). */
static size_t m_cycle(struct world *w)
{
    size_t n = w_cycle(w);
    gp_kube_sched_metrics(w->s);
    return n;
}

static double m_pool(struct gp_metric *m, const char *pool)
{
    struct gp_metric_series *s = gp_metrics_series(m, pool);
    assert_non_null(s);
    return gp_metrics_value(s);
}

/* Every label value of a metric, expected: "result" by result etc. */
static void m_expect(struct gp_metric_series *const *series, const double *want, size_t n,
                     const char *const *names, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (gp_metrics_value(series[i]) != want[i])
            fail_msg("%s{%s}: %g, expected %g", what, names[i], gp_metrics_value(series[i]),
                     want[i]);
}

#define M_DECISIONS(km, sch, uns, err)                                                             \
    m_expect((km).decisions, (const double[]){sch, uns, err}, GP_KM_RESULT_COUNT,                  \
             gp_km_result_names, GP_KM_DECISIONS)
#define M_BIND_FAILURES(km, conflict, rejected, error)                                             \
    m_expect((km).bind_failures, (const double[]){conflict, rejected, error},                      \
             GP_KM_BIND_FAILURE_COUNT, gp_km_bind_failure_names, GP_KM_BIND_FAILURES)
#define M_PENDING(km, active, backoff, unsched)                                                    \
    m_expect((km).pending, (const double[]){active, backoff, unsched}, GP_KM_QUEUE_COUNT,          \
             gp_km_queue_names, GP_KM_PENDING)

/* The scheduler's counters and gauges (metrics.h, /metrics) after real
 * scheduling against the double (audit gap 2): decisions by result,
 * bind failures by reason (a stale cache's 409, a webhook's 403, a 500),
 * the pending queues, GPUs allocated and in capacity per pool (a node of
 * pool "gold" beside "default"), preemption victims, audit violations by
 * resource and leadership, each value asserted after the scenario that
 * moves it, so that a counter not updated, or updated under another
 * label, fails it. */
static void test_metric_values(void **state)
{
    (void)state;
    struct world w;
    struct gp_kube_metrics km;
    w_open_metrics(&w, &km);
    w_node(&w, "n1", 4);
    w_node(&w, "g1", 2);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/g1",
            "{\"metadata\":{\"labels\":{\"gpuplane.io/pool\":\"gold\"}}}", 200);
    /* 1. two bound (4 GPUs fill n1, 2 fill g1), one fits nowhere */
    w_pod(&w, "big", 4);
    w_pod(&w, "two", 2);
    w_pod(&w, "none", 8);
    assert_int_equal(m_cycle(&w), 2);
    assert_string_equal(w_node_of(&w, "big", NULL), "n1");
    assert_string_equal(w_node_of(&w, "two", NULL), "g1");
    M_DECISIONS(km, 2, 1, 0);
    M_BIND_FAILURES(km, 0, 0, 0);
    M_PENDING(km, 0, 0, 1);
    assert_true(m_pool(km.gpu_allocated, "default") == 4 &&
                m_pool(km.gpu_capacity, "default") == 4);
    assert_true(m_pool(km.gpu_allocated, "gold") == 2 && m_pool(km.gpu_capacity, "gold") == 2);
    assert_true(gp_metrics_value(km.leader) == 1);
    assert_true(gp_metrics_value(km.preemption_victims) == 0);
    /* 2. g1 freed; a stale cache: the patch answered 409, taken back */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/two?gracePeriodSeconds=0", NULL,
            200);
    w_pod(&w, "s1", 1);
    w_sync(&w);
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/s1",
            "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    gp_kube_sched_metrics(w.s);
    assert_int_equal(bound, 0);
    M_DECISIONS(km, 2, 1, 1);
    M_BIND_FAILURES(km, 1, 0, 0);
    M_PENDING(km, 0, 1, 1);
    assert_true(m_pool(km.gpu_allocated, "gold") == 0); /* two gone, s1 taken back */
    assert_true(m_pool(km.gpu_capacity, "gold") == 2);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 1);
    M_DECISIONS(km, 3, 1, 1);
    M_PENDING(km, 0, 0, 1);
    /* 3. a Binding refused (a webhook's 403) */
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1,\"match\":\"/pods/r1/binding\"}", 200);
    w_pod(&w, "r1", 1);
    w_sync(&w);
    gp_kube_sched_metrics(w.s);
    M_PENDING(km, 1, 0, 1); /* r1 queued, not tried yet */
    w.now += 1;
    assert_int_equal(m_cycle(&w), 0);
    M_DECISIONS(km, 3, 1, 2);
    M_BIND_FAILURES(km, 1, 1, 0);
    M_PENDING(km, 0, 1, 1);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 1);
    assert_true(m_pool(km.gpu_allocated, "gold") == 2); /* s1 and r1 */
    /* 4. a Binding answered 500 past the client's retries */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/big?gracePeriodSeconds=0", NULL,
            200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":500,\"count\":6,\"match\":\"/pods/e1/binding\"}", 200);
    w_pod(&w, "e1", 1);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 0);
    M_DECISIONS(km, 4, 1, 3);
    M_BIND_FAILURES(km, 1, 1, 1);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 1);
    M_DECISIONS(km, 5, 1, 3);
    assert_true(m_pool(km.gpu_allocated, "default") == 1);
    assert_true(m_pool(km.gpu_capacity, "default") == 4);
    /* 5. preemption: high (3 GPUs) evicts low (3 GPUs) on n1 */
    w_pod_full(&w, "low", 3, 0, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 1);
    assert_true(m_pool(km.gpu_allocated, "default") == 4);
    w_pod_full(&w, "high", 3, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 0);
    assert_true(gp_metrics_value(km.preemption_victims) == 1);
    finish_deletions(&w);
    w.now += 1;
    assert_int_equal(m_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    M_DECISIONS(km, 7, 1, 3);
    M_PENDING(km, 0, 0, 1); /* none still */
    assert_true(gp_metrics_value(km.preemption_victims) == 1);
    for (int i = 0; i < GP_KM_AUDIT_COUNT; i++)
        assert_true(gp_metrics_value(km.audit[i]) == 0);
    /* 6. a GPU booked twice, by hand: the audit's gpu series, no other */
    w_pod_full(&w, "x1", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"g1\",\"gpuplane.io/gpus\":\"0\"}");
    w_bind(&w, "x1", "g1");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    gp_kube_sched_metrics(w.s);
    m_expect(km.audit, (const double[]){1, 0, 0}, GP_KM_AUDIT_COUNT, gp_km_audit_names,
             GP_KM_AUDIT_VIOLATIONS);
    /* 7. leadership lost */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_metrics(w.s);
    assert_true(gp_metrics_value(km.leader) == 0);
    struct gp_sbuf out;
    gp_sbuf_init(&out);
    gp_metrics_expose(km.reg, &out);
    assert_non_null(strstr(gp_sbuf_str(&out), GP_KM_DECISIONS "{result=\"scheduled\"} 7\n"));
    assert_non_null(strstr(gp_sbuf_str(&out), GP_KM_GPU_CAPACITY "{pool=\"gold\"} 2\n"));
    gp_sbuf_free(&out);
    gp_kube_sched_set_metrics(w.s, NULL);
    gp_kube_metrics_free(&km);
    w_close(&w);
}

/* The MIG annotation (objects.h): a pick on MIG instances written as
 * "PROFILE:GPU@SLICE,..." and read back into the same pick; what does not
 * read is refused. */
static void test_mig_annotation(void **state)
{
    (void)state;
    const struct gp_mig_model *m = gp_mig_model_find("NVIDIA-A100-SXM4-80GB");
    assert_non_null(m);
    struct gp_pick k = {.ngpus = 3, .gpu = {0, 0, 3}, .mig_start = {0, 1, 6}};
    k.mig_profile = (int8_t)gp_mig_profile_find(m, "1g.10gb");
    char buf[128], gpus[64];
    gp_kube_mig_format(&k, m, buf, sizeof buf);
    assert_string_equal(buf, "1g.10gb:0@0,0@1,3@6");
    gp_kube_pick_format(&k, gpus, sizeof gpus);
    assert_string_equal(gpus, "0,3"); /* each GPU once: gp_kube_pick_parse reads it back */
    struct gp_pick back;
    assert_true(gp_kube_pick_parse(gpus, &back));
    assert_true(gp_kube_mig_parse(buf, m, &back));
    assert_int_equal(back.ngpus, 3);
    assert_int_equal(back.mig_profile, k.mig_profile);
    assert_memory_equal(back.gpu, k.gpu, 3);
    assert_memory_equal(back.mig_start, k.mig_start, 3);
    assert_true(gp_kube_mig_parse("3g.40gb:1@4", m, &back));
    assert_string_equal(m->profiles[back.mig_profile].name, "3g.40gb");
    const char *bad[] = {"3g.40gb:0@2", /* not a start of 3g.40gb */
                         "9g.90gb:0@0", "1g.10gb:", "1g.10gb:16@0", "1g.10gb:0@0,",
                         "1g.10gb0@0",  ":0@0",     "1g.10gb:0@8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (gp_kube_mig_parse(bad[i], m, &back))
            fail_msg("\"%s\" read as a MIG pick", bad[i]);
    assert_false(gp_kube_mig_parse("1g.10gb:0@0", NULL, &back));
    k.mig_profile = -1; /* not MIG: no annotation */
    gp_kube_mig_format(&k, m, buf, sizeof buf);
    assert_string_equal(buf, "");
}

/* A MIG pod bound by hand with the annotations gpuplane writes. */
static void mig_pod(struct world *w, const char *name, const char *mig)
{
    char meta[256];
    snprintf(meta, sizeof meta,
             ",\"annotations\":{\"gpuplane.io/node\":\"m1\",\"gpuplane.io/gpus\":\"0\","
             "\"gpuplane.io/mig\":\"%s\"}",
             mig);
    w_pod_full(w, name, 0, 0, "gpuplane", meta);
    w_bind(w, name, "m1");
}

/* The audit and MIG slices: instances side by side are clean; one that
 * overlaps another's memory slices is a violation (resource mig), and so
 * is a whole GPU booked where MIG instances are. */
static void test_mig_audit(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "m1", 2);              /* A100-SXM4-80GB: 8 memory slices per GPU */
    mig_pod(&w, "i1", "3g.40gb:0@4"); /* slices 4-7 of GPU 0 */
    mig_pod(&w, "i2", "1g.10gb:0@0,0@1");
    mig_pod(&w, "i3", "2g.20gb:0@2");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    mig_pod(&w, "i4", "1g.10gb:0@5"); /* inside i1's instance */
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.audit_violations, 1);
    assert_int_equal(st.audit_mig, 1);
    assert_int_equal(st.audit_gpu, 0);
    assert_string_equal(gp_kube_sched_audit_last(w.s),
                        "MIG slice 5 of GPU 0 of node m1 is booked by default/i1 and default/i4");
    assert_non_null(strstr(w_events(&w, "GPUDoubleBooked", "m1"), "MIG slice 5 of GPU 0"));
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/i4?gracePeriodSeconds=0", NULL,
            200);
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    /* a whole GPU given where MIG instances are */
    w_pod_full(&w, "whole", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"m1\",\"gpuplane.io/gpus\":\"0\"}");
    w_bind(&w, "whole", "m1");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_mig, 2);
    assert_string_equal(gp_kube_sched_audit_last(w.s),
                        "GPU 0 of node m1 is booked whole by default/whole and has MIG instances");
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bind_and_explain, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_stale_cache, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pod_without_rv, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_bind_rejected, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_full_node_and_delete, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_full_node_and_completion, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_restart, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_mismatch_and_audit, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_foreign_and_leader, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_preempt, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_preempt_bystander, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_bind_refused, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_bind_refused_pool, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_gang_kept_gone, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_stream_bounded, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_latency_metrics, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_metric_values, kd_start, kd_stop),
        cmocka_unit_test(test_mig_annotation),
        cmocka_unit_test_setup_teardown(test_mig_audit, kd_start, kd_stop),
    };
    if (gp_shared_mode(argc, argv)) {
        if (!gp_shared_have(SCHEMAS "/api__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        const struct CMUnitTest probes[] = {
            cmocka_unit_test_setup_teardown(test_schema_probes, kd_start, kd_stop),
        };
        int failed = cmocka_run_group_tests_name("probes", probes, NULL, NULL);
        return gp_shared_exit(failed + cmocka_run_group_tests_name("schemas", tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
