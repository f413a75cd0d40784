/* test_kube_bind.c - binding in parallel (kube/bind.c) against the API
 * server double: four binder threads on clients of their own, answers
 * slowed so that the binds overlap (halves of GPUs among them, two to a
 * GPU, booked by the audit while their binds run), and failures injected
 * among them -
 * Bindings answered 409 and 500, annotation patches answered 409 by a
 * stale cache (pods changed after the scheduler saw them), a pod deleted
 * while its bind runs, and the replica losing the lead with binds queued.
 * After every cycle and its binds: the audit clean, no GPU named twice in
 * the API, and in the end every pod bound once (the double counts the
 * Bindings) or back in the queue with its annotations cleared. One binder
 * with jobs queued makes them a batch (patches, then Bindings, pipelined)
 * with the same guarantees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

#define NBINDERS 4

struct pool {
    struct gp_kube_client *c[NBINDERS];
};

static void pool_start(struct world *w, struct pool *p)
{
    for (int i = 0; i < NBINDERS; i++)
        p->c[i] = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_start_binders(w->s, p->c, NBINDERS, NULL, NULL, &d), GP_OK);
}

static void pool_close(struct world *w, struct pool *p)
{
    gp_kube_sched_stop_binders(w->s);
    for (int i = 0; i < NBINDERS; i++)
        gp_kube_client_free(p->c[i]);
}

/* No GPU booked over its whole in the API: each bound pod of ours at the
 * GPUs its annotations name, 1000/1000 of each or its gpu-milli share. */
static void check_booked(struct world *w)
{
    json_t *list = w_get(w, "/api/v1/pods");
    size_t i;
    json_t *p;
    char key[64][32];
    unsigned milli[64];
    size_t nkeys = 0;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        const char *an = json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE));
        const char *ag = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
        const char *share = json_string_value(json_object_get(ann, "gpuplane.io/gpu-milli"));
        if (!n || !an || !ag || strcmp(n, an) != 0)
            continue;
        struct gp_pick k;
        assert_true(gp_kube_pick_parse(ag, &k));
        for (unsigned g = 0; g < k.ngpus; g++) {
            char id[32];
            snprintf(id, sizeof id, "%s/%u", n, k.gpu[g]);
            size_t j = 0;
            while (j < nkeys && strcmp(key[j], id) != 0)
                j++;
            if (j == nkeys) {
                assert_true(nkeys < 64);
                snprintf(key[nkeys], sizeof key[0], "%s", id);
                milli[nkeys++] = 0;
            }
            milli[j] += share ? (unsigned)atoi(share) : 1000;
            if (milli[j] > 1000)
                fail_msg("GPU %s booked %u/1000", id, milli[j]);
        }
    }
    json_decref(list);
}

/* A cycle, its binds waited for, the informers synced, the audit and the
 * API checked: the pods bound. */
static size_t cycle_all(struct world *w)
{
    w_sync(w);
    size_t bound, more;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w->s, w->now, &bound, &d), GP_OK);
    gp_kube_sched_wait_binds(w->s, &more);
    w_sync(w);
    if (gp_kube_sched_audit_all(w->s) != 0 || gp_kube_sched_stats(w->s).audit_violations != 0)
        fail_msg("audit: %s", gp_kube_sched_audit_last(w->s));
    check_booked(w);
    return bound + more;
}

/* Pods bound in the API, and pods not bound that still carry annotations. */
static void api_count(struct world *w, int *bound, int *annotated_unbound)
{
    *bound = *annotated_unbound = 0;
    json_t *list = w_get(w, "/api/v1/pods");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        if (n)
            (*bound)++;
        else if (json_object_get(ann, GP_KUBE_ANN_GPUS))
            (*annotated_unbound)++;
    }
    json_decref(list);
}

static void test_parallel_failures(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    struct pool pool;
    pool_start(&w, &pool);
    for (int i = 1; i <= 4; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%d", i);
        w_node(&w, n, 4);
    }
    char name[16];
    for (int i = 0; i < 24; i++) { /* 24 pods, 16 GPUs */
        snprintf(name, sizeof name, "p%02d", i);
        w_pod(&w, name, 1);
    }
    for (int i = 0; i < 4; i++) { /* and two GPUs' worth of halves: A100s, not MIG ones */
        snprintf(name, sizeof name, "h%d", i);
        w_pod_full(&w, name, 0, 10, "gpuplane",
                   ",\"annotations\":{\"gpuplane.io/gpu-milli\":\"500\"}");
    }
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":409,\"count\":6,\"match\":\"/binding\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":500,\"count\":8,\"match\":\"/binding\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"delay_ms\":20,\"count\":40,\"match\":\"/namespaces/default/pods/\"}", 200);
    w_sync(&w);
    /* three pods change after the scheduler saw them: their patches get 409 */
    for (int i = 0; i < 3; i++) {
        char path[96];
        snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/p%02d", i * 5);
        kd_call(w.admin, "PATCH", path, "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    }
    /* the first cycle hands its binds out; one pod is deleted while they run */
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_true(gp_kube_sched_stats(w.s).binds_in_flight > 1); /* handed out, not done */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/p23?gracePeriodSeconds=0", NULL,
            200);
    w_sync(&w);
    size_t more;
    gp_kube_sched_wait_binds(w.s, &more);
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    check_booked(&w);
    int api_bound = 0, stale = 0;
    api_count(&w, &api_bound, &stale);
    /* (one bind per node at a time: the first cycle's binds are the four
     * nodes' first pods, kube/sched_slot.c) */
    assert_true(gp_kube_sched_stats(w.s).rollbacks >= 1);
    assert_int_equal(stale, 0); /* every decision taken back was cleared before it was let go */
    for (int round = 0; round < 30; round++) {
        w.now += 1;
        cycle_all(&w);
        api_count(&w, &api_bound, &stale);
        struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
        if (api_bound == 18 && st.waiting_backoff == 0 && st.binds_in_flight == 0)
            break;
    }
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(api_bound, 18);              /* every GPU used once: 14 whole, 2 halved */
    assert_int_equal(stale, 0);                   /* no decision taken back left its annotations */
    assert_int_equal(w_stat(&w, "bindings"), 18); /* each pod bound once */
    assert_int_equal(st.binds, 18);
    assert_true(st.bind_conflicts >= 6);
    /* a plain pod's one write is its Binding: no patch to conflict (a
     * touched pod's stale Binding is refused whole, 409, and read back) */
    assert_int_equal(st.patch_conflicts, 0);
    /* each 409 read back unbound and taken back, and each 500 past the
     * client's retries (how many depends on how the batches fell) */
    assert_true(st.rollbacks >= 6 + st.bind_errors);
    assert_int_equal(st.binds_in_flight, 0);
    assert_int_equal(st.assumed, 0);
    assert_int_equal(st.pending, 9); /* 27 pods alive, 18 bound: the others queued */
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    pool_close(&w, &pool);
    w_close(&w);
}

static void test_parallel_leader_lost(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    struct pool pool;
    pool_start(&w, &pool);
    w_node(&w, "n1", 8);
    w_node(&w, "n2", 8);
    char name[16];
    for (int i = 0; i < 16; i++) {
        snprintf(name, sizeof name, "q%02d", i);
        w_pod(&w, name, 1);
    }
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"delay_ms\":30,\"count\":200,\"match\":\"/namespaces/default/pods/\"}", 200);
    w_sync(&w);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    gp_kube_sched_set_leader(w.s, false); /* binds queued: not written by a follower */
    size_t more;
    gp_kube_sched_wait_binds(w.s, &more);
    w_sync(&w);
    long bindings = w_stat(&w, "bindings");
    assert_true(bindings < 16);
    int api_bound, stale;
    api_count(&w, &api_bound, &stale);
    assert_int_equal(api_bound, bindings);
    w.now += 1;
    assert_int_equal(cycle_all(&w), 0); /* a follower binds nothing */
    assert_int_equal(w_stat(&w, "bindings"), bindings);
    gp_kube_sched_set_leader(w.s, true); /* rebuilt: half-finished decisions resumed */
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    for (int round = 0; round < 10 && api_bound < 16; round++) {
        w.now += 1;
        cycle_all(&w);
        api_count(&w, &api_bound, &stale);
    }
    assert_int_equal(api_bound, 16);
    assert_int_equal(stale, 0);
    assert_int_equal(w_stat(&w, "bindings"), 16);
    pool_close(&w, &pool);
    w_close(&w);
}

/* Requests of method whose path starts with prefix, in the double's log. */
static int requests_of(struct world *w, const char *method, const char *prefix)
{
    json_t *l = w_get(w, "/_control/requests");
    size_t i;
    json_t *r;
    int n = 0;
    json_array_foreach(json_object_get(l, "requests"), i, r)
    {
        const char *m = json_string_value(json_object_get(r, "method"));
        const char *p = json_string_value(json_object_get(r, "path"));
        n += m && p && strcmp(m, method) == 0 && strncmp(p, prefix, strlen(prefix)) == 0;
    }
    json_decref(l);
    return n;
}

/* One binder with a queue of plain jobs: it takes them as a batch, each
 * pod's one write, its Binding carrying its annotations, pipelined on its
 * connection (bind.c jobs_run). Failures among them are each pod's own:
 * Bindings answered 409 (two pods changed after the scheduler saw them,
 * their versions stale; two refused by the fault) read back and taken
 * back, nothing left to clear; a 500 retried alone; in the end every pod
 * bound once, none annotated unbound, and no write but the Bindings. */
static void test_pipelined_batch(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *bc = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_start_binders(w.s, &bc, 1, NULL, NULL, &d), GP_OK);
    char name[16];
    for (int i = 0; i < 16; i++) { /* a node each: one pod allocating per node (sched_slot.c) */
        snprintf(name, sizeof name, "n%02d", i);
        w_node(&w, name, 1);
        snprintf(name, sizeof name, "b%02d", i);
        w_pod(&w, name, 1);
    }
    /* the first request held 50 ms: the other jobs queue up behind it */
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"delay_ms\":50,\"count\":1,\"match\":\"/namespaces/default/pods/\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":409,\"count\":2,\"match\":\"/binding\"}", 200);
    kd_call(w.admin, "POST", "/_control/fault",
            "{\"status\":500,\"count\":1,\"match\":\"/binding\"}", 200);
    w_sync(&w);
    for (int i = 3; i < 12; i += 6) { /* b03, b09: their patches get 409 */
        char path[96];
        snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/b%02d", i);
        kd_call(w.admin, "PATCH", path, "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}", 200);
    }
    size_t bound, more;
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    gp_kube_sched_wait_binds(w.s, &more);
    w_sync(&w);
    assert_true(gp_kube_client_pipelined(bc) >= 10); /* most went in batches */
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    check_booked(&w);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.patch_conflicts, 0);
    assert_int_equal(st.bind_conflicts, 4); /* the 500 retried alone by the client: bound */
    assert_int_equal(st.rollbacks, 4);
    int api_bound, stale;
    api_count(&w, &api_bound, &stale);
    assert_int_equal(api_bound, 12); /* 16 less two stale and two refused Bindings */
    /* no annotation patch and nothing cleared: the only patches are the
     * test's own two */
    assert_int_equal(requests_of(&w, "PATCH", "/api/v1/namespaces/default/pods/b"), 2);
    assert_int_equal(stale, 0);
    for (int round = 0; round < 20 && api_bound < 16; round++) {
        w.now += 1;
        cycle_all(&w);
        api_count(&w, &api_bound, &stale);
    }
    st = gp_kube_sched_stats(w.s);
    assert_int_equal(api_bound, 16);
    assert_int_equal(stale, 0);
    assert_int_equal(w_stat(&w, "bindings"), 16); /* each pod bound once */
    assert_int_equal(st.binds, 16);
    assert_int_equal(st.binds_in_flight, 0);
    gp_kube_sched_stop_binders(w.s);
    gp_kube_client_free(bc);
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&w);
}

/* A pod that carries keys of ours its decision does not write (copied
 * from a running pod: a MIG placement, the agent's "allocated"): a
 * Binding merges annotations and cannot remove one, so such a pod is
 * annotated first, the stale keys removed (null in the merge patch), then
 * bound; the others of the cycle keep their one write. */
static void test_copied_annotations(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1; /* no agent: the phase as the decision wrote it */
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 1); /* a GPU pod a node: one pod allocating per node (sched_slot.c) */
    w_node(&w, "n2", 1);
    w_node(&w, "n3", 1);
    w_pod_full(&w, "gpu", 1, 0, "gpuplane",
               ",\"annotations\":{\"" GP_KUBE_ANN_MIG "\":\"1g.10gb:0@0\",\"" GP_KUBE_ANN_PHASE
               "\":\"allocated\"}");
    w_pod_full(&w, "cpu", 0, 0, "gpuplane",
               ",\"annotations\":{\"" GP_KUBE_ANN_PHASE "\":\"allocated\"}");
    w_pod(&w, "plain", 1);
    w_cycle(&w);
    w_cycle(&w);
    assert_string_not_equal(w_node_of(&w, "gpu", NULL), "");
    assert_string_not_equal(w_node_of(&w, "plain", NULL), "");
    char cpu_node[64];
    snprintf(cpu_node, sizeof cpu_node, "%s", w_node_of(&w, "cpu", NULL));
    assert_string_not_equal(cpu_node, "");
    assert_string_equal(w_ann(&w, "gpu", GP_KUBE_ANN_MIG), ""); /* not a MIG decision */
    assert_string_equal(w_ann(&w, "gpu", GP_KUBE_ANN_PHASE), "allocating");
    assert_string_equal(w_ann(&w, "cpu", GP_KUBE_ANN_PHASE), ""); /* asks no GPU: no phase */
    assert_string_equal(w_ann(&w, "cpu", GP_KUBE_ANN_NODE), cpu_node);
    /* the two with stale keys patched, the plain one not */
    assert_int_equal(requests_of(&w, "PATCH", "/api/v1/namespaces/default/pods/gpu"), 1);
    assert_int_equal(requests_of(&w, "PATCH", "/api/v1/namespaces/default/pods/cpu"), 1);
    assert_int_equal(requests_of(&w, "PATCH", "/api/v1/namespaces/default/pods/plain"), 0);
    w_check_distinct(&w);
    w_close(&w);
    w_auto_allocate_ms = 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parallel_failures, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_parallel_leader_lost, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_pipelined_batch, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_copied_annotations, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
