/* test_kube_preempt.c - preemption written as kube-scheduler's
 * DefaultPreemption writes it (kube/sched_cycle.c, kube/pdb.c) against
 * the API server double: a PodDisruptionBudget steers the choice of
 * victim; each victim gets the DisruptionTarget condition (reason
 * PreemptionByScheduler) through /status before its DELETE, which carries
 * the victim's uid as its precondition, so that a pod re-created under the
 * same name is left alone (409 Conflict); the preemptor's
 * status.nominatedNodeName is written and, read back by a new scheduler
 * (a restart) while the victim still stops, keeps the freed GPU for the
 * preemptor: no second victim, no other pod on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "sim/replay.h"

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

static bool deleting(struct world *w, const char *name)
{
    json_t *o = w_pod_get(w, name);
    bool yes = json_object_get(json_object_get(o, "metadata"), "deletionTimestamp") != NULL;
    json_decref(o);
    return yes;
}

static const char *nominated(struct world *w, const char *name)
{
    static char b[64];
    json_t *o = w_pod_get(w, name);
    const char *n =
        json_string_value(json_object_get(json_object_get(o, "status"), "nominatedNodeName"));
    snprintf(b, sizeof b, "%s", n ? n : "");
    json_decref(o);
    return b;
}

/* The index in the double's request log of the first request of method
 * whose path ends with tail; -1 none. */
static long logged_at(struct world *w, const char *method, const char *tail)
{
    json_t *l = w_get(w, "/_control/requests");
    long at = -1;
    size_t i, n = strlen(tail);
    json_t *e;
    json_array_foreach(json_object_get(l, "requests"), i, e)
    {
        const char *m = json_string_value(json_object_get(e, "method"));
        const char *p = json_string_value(json_object_get(e, "path"));
        size_t pl = p ? strlen(p) : 0;
        if (at < 0 && m && strcmp(m, method) == 0 && pl >= n && strcmp(p + pl - n, tail) == 0)
            at = (long)i;
    }
    json_decref(l);
    return at;
}

static void pdb(struct world *w, const char *name, const char *app, int allowed)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
             "{\"name\":\"%s\",\"namespace\":\"default\"},\"spec\":{\"minAvailable\":1,"
             "\"selector\":{\"matchLabels\":{\"app\":\"%s\"}}},\"status\":{\"disruptionsAllowed\""
             ":%d,\"currentHealthy\":1,\"desiredHealthy\":1,\"expectedPods\":1}}",
             name, app, allowed);
    kd_call(w->admin, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", b, 201);
}

/* Two victims alike but for their labels, one GPU each on two nodes: the
 * engine's own order takes "b" (the newest); a budget that allows no
 * disruption of "b" (app=keep) makes "a" the victim, and one that allows
 * a disruption changes nothing. */
static void pdb_case_rec(int allowed, const char *victim, const char *kept, const char *record)
{
    struct world w;
    w_open_record(&w, true, record);
    struct gp_kube_client *ic = kd_client();
    struct gp_kube_informer *pdbs;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(ic, "/apis/policy/v1/poddisruptionbudgets", 0,
                                          gp_kube_sched_pdb_change, w.s, &pdbs, &d),
                     GP_OK);
    w_node(&w, "n1", 1);
    w_node(&w, "n2", 1);
    w_pod_full(&w, "a", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"spare\"}");
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    w_pod_full(&w, "b", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"keep\"}");
    assert_int_equal(w_cycle(&w), 1);
    if (allowed >= 0)
        pdb(&w, "keep", "keep", allowed);
    assert_int_equal(gp_kube_informer_list(pdbs, &d), GP_OK);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, victim));
    assert_false(deleting(&w, kept));
    assert_int_equal(gp_kube_sched_stats(w.s).evictions, 1);
    gp_kube_informer_free(pdbs);
    gp_kube_client_free(ic);
    w_close(&w);
}

static void pdb_case(int allowed, const char *victim, const char *kept)
{
    pdb_case_rec(allowed, victim, kept, NULL);
}

/* Every candidate breaks a budget: two 1-GPU pods of app=keep on one
 * node, one 2-GPU pod of app=keep2 (a higher priority) on the other, both
 * budgets used up. kube-scheduler evicts on the node of the fewest PDB
 * violations (pickOneNodeForPreemption): the one pod of keep2, not the two
 * of keep (the engine's own search, the cheapest first, took those). */
static void test_pdb_fewest_violations(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *ic = kd_client();
    struct gp_kube_informer *pdbs;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(ic, "/apis/policy/v1/poddisruptionbudgets", 0,
                                          gp_kube_sched_pdb_change, w.s, &pdbs, &d),
                     GP_OK);
    w_node(&w, "n1", 2);
    w_node(&w, "n2", 2);
    w_pod_full(&w, "a1", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"keep\"}");
    w_pod_full(&w, "a2", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"keep\"}");
    assert_int_equal(w_cycle(&w), 2);
    char an[64];
    snprintf(an, sizeof an, "%s", w_node_of(&w, "a1", NULL));
    assert_string_equal(w_node_of(&w, "a2", NULL), an); /* packed together */
    w_pod_full(&w, "b", 2, 1, "gpuplane", ",\"labels\":{\"app\":\"keep2\"}");
    assert_int_equal(w_cycle(&w), 1);
    pdb(&w, "keep", "keep", 0);
    pdb(&w, "keep2", "keep2", 0);
    assert_int_equal(gp_kube_informer_list(pdbs, &d), GP_OK);
    w_pod_full(&w, "high", 2, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "b"));
    assert_false(deleting(&w, "a1"));
    assert_false(deleting(&w, "a2"));
    gp_kube_informer_free(pdbs);
    gp_kube_client_free(ic);
    w_close(&w);
}

/* --record with a budget that steered the victim: the log holds the
 * budget and b's link to it (pdb_set, pod_pdbs), so `gpuplane sim
 * --replay` evicts the same pod (without them the replay's engine takes
 * "b", the recorded run "a"; test_kube_preempt_pdb's test_replay). */
static void test_pdb_replay(void **state)
{
    (void)state;
    char path[] = "/tmp/gp-pdb-replay-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    pdb_case_rec(0, "a", "b", path);
    struct gp_replay_result r;
    struct gp_diag d = {""};
    assert_int_equal(gp_replay_file(path, NULL, NULL, &r, &d), GP_OK);
    if (r.has_diff)
        fail_msg("%s at line %zu:\n  recorded %s\n  replayed %s", r.first.what, r.first.line,
                 r.first.recorded, r.first.replayed);
    assert_true(r.decisions >= 4); /* two binds, the eviction and the preemptor's bind */
    assert_int_equal(r.matched, r.decisions);
    unlink(path);
}

static void test_pdb_steers(void **state)
{
    (void)state;
    pdb_case(-1, "b", "a"); /* no budget: the newest goes */
}

static void test_pdb_steers_used_up(void **state)
{
    (void)state;
    pdb_case(0, "a", "b"); /* b's budget is used up: a goes instead */
}

static void test_pdb_steers_allows(void **state)
{
    (void)state;
    pdb_case(1, "b", "a"); /* b's budget allows one: the order as without */
}

/* The victim's DisruptionTarget condition, written before its DELETE
 * (which names its uid); the preemptor nominated to the node. */
static void test_condition_then_delete(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    json_t *low = w_pod_get(&w, "low");
    assert_non_null(json_object_get(json_object_get(low, "metadata"), "deletionTimestamp"));
    size_t i;
    json_t *c, *dt = NULL;
    json_array_foreach(json_object_get(json_object_get(low, "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), "DisruptionTarget") == 0)
            dt = c;
    }
    assert_non_null(dt);
    assert_string_equal(json_string_value(json_object_get(dt, "status")), "True");
    assert_string_equal(json_string_value(json_object_get(dt, "reason")), "PreemptionByScheduler");
    assert_string_equal(json_string_value(json_object_get(dt, "message")),
                        "gpuplane: preempting to accommodate a higher priority pod");
    json_decref(low);
    long patched = logged_at(&w, "PATCH", "/pods/low/status");
    long deleted = logged_at(&w, "DELETE", "/pods/low");
    assert_true(patched >= 0 && deleted >= 0);
    assert_true(patched < deleted);
    assert_string_equal(nominated(&w, "high"), "n1");
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    w_close(&w);
}

/* A victim whose phase ends (the kubelet writes Failed before the final
 * delete) frees its preemptor then: it is bound, and stays so once the
 * victim's DELETED comes. */
static void test_victim_ends(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    kd_call(w.admin, "PATCH", "/api/v1/namespaces/default/pods/low/status",
            "{\"status\":{\"phase\":\"Failed\"}}", 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    w_close(&w);
}

/* A victim whose DELETE fails (403: its condition PATCH and its DELETE
 * refused) is not left running for ever with its preemptor waiting: the
 * next cycle starts again from the API and preempts it again, and once it
 * is gone the preemptor binds (the review's R1). */
static void test_delete_fails(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":2,\"match\":\"pods/low\"}", 200);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_false(deleting(&w, "low")); /* refused */
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    for (int i = 0; i < 3 && !deleting(&w, "low"); i++) {
        w.now += 1;
        w_cycle(&w);
    }
    assert_true(deleting(&w, "low")); /* preempted again */
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    for (int i = 0; i < 3 && strcmp(w_node_of(&w, "high", NULL), "n1") != 0; i++) {
        w.now += 1;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

/* How many requests of method the double's log holds whose path ends
 * with tail. */
static long logged_count(struct world *w, const char *method, const char *tail)
{
    json_t *l = w_get(w, "/_control/requests");
    long n = 0;
    size_t i, tl = strlen(tail);
    json_t *e;
    json_array_foreach(json_object_get(l, "requests"), i, e)
    {
        const char *m = json_string_value(json_object_get(e, "method"));
        const char *p = json_string_value(json_object_get(e, "path"));
        size_t pl = p ? strlen(p) : 0;
        n += m && strcmp(m, method) == 0 && pl >= tl && strcmp(p + pl - tl, tail) == 0;
    }
    json_decref(l);
    return n;
}

/* A DELETE that keeps failing (403) costs one attempt per back-off of
 * the preemptor (0.5 s doubled, at most 4 s in these tests), not a
 * rebuild and a DELETE every cycle: 24 cycles over 6 s make 4 attempts
 * (at 0, 0.5, 1.5 and 3.5 s) and no rebuild (2ac236c rebuilt and sent a
 * DELETE at each of the 24). The victim keeps its room meanwhile, and
 * once the DELETE goes through the preemptor binds. */
static void test_delete_backoff(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    uint64_t rebuilds = gp_kube_sched_stats(w.s).rebuilds;
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1000,\"match\":\"pods/low\"}", 200);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    for (int i = 0; i < 24; i++) {
        w.now += 0.25;
        assert_int_equal(w_cycle(&w), 0);
    }
    long deletes = logged_count(&w, "DELETE", "/pods/low");
    assert_true(deletes >= 3 && deletes <= 5);
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, rebuilds);
    assert_false(deleting(&w, "low"));
    assert_string_equal(w_node_of(&w, "high", NULL), "");
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    for (int i = 0; i < 40 && !deleting(&w, "low"); i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_true(deleting(&w, "low"));
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

/* The same for a gang's preemption (a PodGroup of minMember 2 evicting
 * two pods): its members go back together, the second victim is spared
 * once the first DELETE is refused, and a refusal that lasts costs a
 * DELETE per back-off, no rebuild (2ac236c rebuilt at every cycle). */
static void test_delete_backoff_gang(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "low1", 1);
    w_pod(&w, "low2", 1);
    assert_int_equal(w_cycle(&w), 2);
    kd_call(w.admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
            "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"train\"},\"spec\":{\"minMember\":2}}",
            201);
    w.now += 1;
    w_cycle(&w);
    uint64_t rebuilds = gp_kube_sched_stats(w.s).rebuilds;
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1000,\"match\":\"pods/low\"}", 200);
    const char *member = ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"train\"}";
    w_pod_full(&w, "g1", 1, 100, "gpuplane", member);
    w_pod_full(&w, "g2", 1, 100, "gpuplane", member);
    for (int i = 0; i < 24; i++) {
        w.now += 0.25;
        assert_int_equal(w_cycle(&w), 0);
    }
    long deletes =
        logged_count(&w, "DELETE", "/pods/low1") + logged_count(&w, "DELETE", "/pods/low2");
    assert_true(deletes >= 3 && deletes <= 8);
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, rebuilds);
    assert_false(deleting(&w, "low1"));
    assert_false(deleting(&w, "low2"));
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    for (int i = 0; i < 40 && !(deleting(&w, "low1") && deleting(&w, "low2")); i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_true(deleting(&w, "low1") && deleting(&w, "low2"));
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "g1", NULL), "n1");
    assert_string_equal(w_node_of(&w, "g2", NULL), "n1");
    w_check_distinct(&w);
    w_close(&w);
}

/* A pod of `gpus` GPUs (0: none) asking `cpu` cores. */
static void pod_cpu(struct world *w, const char *name, unsigned gpus, unsigned cpu, int priority)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":%d,\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":"
             "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"%u\",\"memory\":"
             "\"1Gi\",\"nvidia.com/gpu\":\"%u\"},\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, priority, cpu, gpus, gpus);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A victim in its grace period holds its cpu and memory, not only its
 * GPUs (the review's R4): of n1's 64 cores low (60) still uses 60, so
 * neither c1 (10 cores, decided in the cycle that preempts) nor c2 (10,
 * later) is bound there until low is gone - the kubelet could not admit
 * them (without the hold both were bound at once, into cores the engine
 * had freed) - and then all three are. */
static void test_victim_holds_cpu(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    pod_cpu(&w, "low", 1, 60, 0);
    assert_int_equal(w_cycle(&w), 1);
    pod_cpu(&w, "high", 1, 1, 100);
    pod_cpu(&w, "c1", 0, 10, 0);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    pod_cpu(&w, "c2", 0, 10, 0);
    for (int i = 0; i < 3; i++) {
        w.now += 1;
        assert_int_equal(w_cycle(&w), 0);
    }
    assert_string_equal(w_node_of(&w, "c1", NULL), "");
    assert_string_equal(w_node_of(&w, "c2", NULL), "");
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    for (int i = 0; i < 4; i++) {
        w.now += 1;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    assert_string_equal(w_node_of(&w, "c1", NULL), "n1");
    assert_string_equal(w_node_of(&w, "c2", NULL), "n1");
    w_close(&w);
}

/* A preemptor is not pinned to its nominated node through its victims'
 * grace period (the review's R7): high preempts low; once the other
 * node's pod, of a priority it could not preempt, is gone, its next try (after its
 * back-off) binds it on n2 while low still stops, as kube-scheduler binds
 * a nominated pod wherever it fits at its next attempt. low's GPU stays
 * held until it is gone. */
static void test_preemptor_moves(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_node(&w, "n2", 1);
    w_pod_full(&w, "keep", 1, 200, "gpuplane", NULL);
    assert_int_equal(w_cycle(&w), 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    char vnode[64], knode[64];
    snprintf(vnode, sizeof vnode, "%s", w_node_of(&w, "low", NULL));
    snprintf(knode, sizeof knode, "%s", w_node_of(&w, "keep", NULL));
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    assert_string_equal(nominated(&w, "high"), vnode);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/keep?gracePeriodSeconds=0", NULL,
            200);
    for (int i = 0; i < 12 && strcmp(w_node_of(&w, "high", NULL), "") == 0; i++) {
        w.now += 0.25;
        w_cycle(&w);
    }
    assert_string_equal(w_node_of(&w, "high", NULL), knode);
    assert_string_equal(nominated(&w, "high"), ""); /* its stale nomination cleared */
    assert_true(deleting(&w, "low"));               /* still stopping */
    w_pod(&w, "next", 1);                           /* low's GPU is not free yet */
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "next", NULL), vnode);
    w_check_distinct(&w);
    w_close(&w);
}

/* A victim deleted and re-created under its name (a StatefulSet's)
 * between what the scheduler saw and its DELETE: the precondition's uid is
 * the old pod's, the double answers 409, the new pod stays. */
static void test_uid_mismatch(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    w_sync(&w); /* the scheduler sees high pending and the old low bound */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/low?gracePeriodSeconds=0", NULL,
            200);
    w_pod_full(&w, "low", 1, 0, "someone-else", NULL);
    json_t *fresh = w_pod_get(&w, "low");
    char uid[64];
    snprintf(uid, sizeof uid, "%s",
             json_string_value(json_object_get(json_object_get(fresh, "metadata"), "uid")));
    json_decref(fresh);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK); /* no sync first */
    assert_int_equal(gp_kube_sched_stats(w.s).evictions, 1);
    json_t *now = w_pod_get(&w, "low");
    assert_string_equal(json_string_value(json_object_get(json_object_get(now, "metadata"), "uid")),
                        uid);
    assert_null(json_object_get(json_object_get(now, "metadata"), "deletionTimestamp"));
    json_decref(now);
    w.now += 1;
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    assert_false(deleting(&w, "low"));
    w_close(&w);
}

/* A restart while the victim stops: the new scheduler reads high's
 * nominatedNodeName, keeps n1's GPU for it - no second victim (b on n2,
 * evictable by then), no rival of the same priority on it - and binds it
 * there once the victim is gone. */
static void test_nominated_restart(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_node(&w, "n2", 1);
    w_pod(&w, "a", 1);
    assert_int_equal(w_cycle(&w), 1);
    w_pod(&w, "b", 1);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    const char *victim = deleting(&w, "a") ? "a" : "b", *other = victim[0] == 'a' ? "b" : "a";
    assert_true(deleting(&w, victim));
    char vnode[64];
    snprintf(vnode, sizeof vnode, "%s", w_node_of(&w, victim, NULL));
    assert_string_equal(nominated(&w, "high"), vnode);
    w_close(&w); /* the scheduler goes; its victim still stops */
    w_open(&w, true);
    /* a rival of high's priority that never preempts, first in the queue's order */
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"a-rival\"},\"spec\":{\"schedulerName\":\"gpuplane\","
            "\"priority\":100,\"preemptionPolicy\":\"Never\",\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
            201);
    for (int i = 0; i < 3; i++) {
        w.now += 1;
        assert_int_equal(w_cycle(&w), 0);
    }
    assert_int_equal(gp_kube_sched_stats(w.s).evictions, 0);
    assert_false(deleting(&w, other));
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), vnode);
    assert_string_equal(w_node_of(&w, "a-rival", NULL), "");
    w_close(&w);
}

/* A restart once the victim is gone, its preemptor not yet bound: its
 * nomination still holds the room (the review's R15). a-rival, of the
 * same priority and first in the rebuilt queue, would take n1's GPU;
 * kube-scheduler filters it as if high (nominated there, priority as
 * high) were on n1 already, so high binds there and a-rival waits. */
static void test_nominated_gone_restart(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1);
    w_pod(&w, "low", 1);
    assert_int_equal(w_cycle(&w), 1);
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "low"));
    assert_string_equal(nominated(&w, "high"), "n1");
    w_close(&w); /* the scheduler goes; its victim goes too, before the next one lists */
    w_open(&w, true);
    kd_call(w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"a-rival\"},\"spec\":{\"schedulerName\":\"gpuplane\","
            "\"priority\":100,\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
            201);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "high", NULL), "n1");
    assert_string_equal(w_node_of(&w, "a-rival", NULL), "");
    w_check_distinct(&w);
    w_close(&w);
}

/* Run with "shared": the double checks every write against the published
 * OpenAPI schemas (the DeleteOptions of a DELETE too). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pdb_steers, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pdb_steers_used_up, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pdb_steers_allows, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pdb_replay, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pdb_fewest_violations, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_delete_fails, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_delete_backoff, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_delete_backoff_gang, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_victim_holds_cpu, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_preemptor_moves, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_condition_then_delete, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_victim_ends, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_uid_mismatch, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_nominated_restart, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_nominated_gone_restart, kd_start, kd_stop),
    };
    if (gp_shared_mode(argc, argv)) {
        if (!gp_shared_have(SCHEMAS "/api__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        return gp_shared_exit(cmocka_run_group_tests_name("schemas", tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
