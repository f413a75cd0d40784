/* test_kube_onealloc.c - one pod allocating per node (DESIGN.md section 7;
 * kube/sched_slot.c; docs/kube.md, "One pod allocating per node") and the
 * Binding that may have gone through (kube/bind.c), against the API
 * server double:
 *  - twelve pods decided for two nodes in one cycle, eight binders, the
 *    double playing the agent 30 ms after each Binding (--auto-allocate):
 *    every pod bound once, and the double's watch, replayed from before
 *    the first pod, never shows two pods allocating on one node;
 *  - a restart finding a pod left allocating on the node, a half-finished
 *    decision of ours, and another replica's decision being written: the
 *    new pod waits for each, the half-finished one is bound first;
 *  - deleting a waiting pod loses nothing, deleting the allocating pod
 *    frees the slot, a node that goes away with a pod waiting for it;
 *  - a Binding whose answer is lost and whose pod cannot be read back:
 *    its annotations are kept (it is bound), its GPU and its node's slot
 *    too; one refused and unreadable: kept until a re-check reads it
 *    unbound, then taken back and bound again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "kube/informer.h"
#include "node/protocol.h"

/* --- the watch's view: pods allocating on each node, at every event ------ */

struct tracker {
    json_t *pods; /* "ns/name" -> node it is allocating on */
    int max;      /* most pods allocating on one node at once */
    char worst[256];
    unsigned became; /* times a pod started allocating on a node */
};

static bool agent_counts(const json_t *pod, const char **node)
{
    json_t *m = json_object_get((json_t *)(uintptr_t)pod, "metadata");
    json_t *ann = json_object_get(m, "annotations");
    const char *n = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    const char *an = json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE));
    const char *ph = json_string_value(json_object_get(ann, GP_KUBE_ANN_PHASE));
    const char *st = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    *node = n;
    return n && an && ph && strcmp(n, an) == 0 && strcmp(ph, "allocating") == 0 &&
           !json_object_get(m, "deletionTimestamp") &&
           !(st && (strcmp(st, "Running") == 0 || strcmp(st, "Succeeded") == 0 ||
                    strcmp(st, "Failed") == 0));
}

static void track(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    (void)old;
    struct tracker *t = ctx;
    char key[320];
    snprintf(key, sizeof key, "%s/%s", gp_kube_meta(obj, "namespace"), gp_kube_meta(obj, "name"));
    const char *node;
    bool alloc = type != GP_KUBE_DELETED && agent_counts(obj, &node);
    bool was = json_object_get(t->pods, key) != NULL;
    if (alloc && !was)
        t->became++;
    if (alloc)
        json_object_set_new(t->pods, key, json_string(node));
    else
        json_object_del(t->pods, key);
    const char *k1, *k2;
    json_t *v1, *v2;
    json_object_foreach(t->pods, k1, v1)
    {
        int n = 0;
        json_object_foreach(t->pods, k2, v2)
        {
            n += strcmp(json_string_value(v1), json_string_value(v2)) == 0;
        }
        if (n > t->max) {
            t->max = n;
            snprintf(t->worst, sizeof t->worst, "%d pods allocating on %s (%s among them)", n,
                     json_string_value(v1), k1);
        }
    }
}

/* --- helpers ------------------------------------------------------------- */

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

/* The agent's mark, as node/protocol.c writes it. */
static void allocated(struct world *w, const char *pod)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", pod);
    kd_call(w->admin, "PATCH", path,
            "{\"metadata\":{\"annotations\":{\"gpuplane.io/phase\":\"allocated\"}}}", 200);
}

/* The agent's choice for the next Allocate on node: "ns/name", "refused"
 * (more than one allocating) or "" (none). */
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

/* Requests of method whose path ends with tail, in the double's log. */
static int requests(struct world *w, const char *method, const char *tail)
{
    json_t *l = w_get(w, "/_control/requests");
    size_t i;
    json_t *r;
    int n = 0;
    json_array_foreach(json_object_get(l, "requests"), i, r)
    {
        const char *m = json_string_value(json_object_get(r, "method"));
        const char *p = json_string_value(json_object_get(r, "path"));
        size_t lp = p ? strlen(p) : 0, lt = strlen(tail);
        n += m && p && strcmp(m, method) == 0 && lp >= lt && strcmp(p + lp - lt, tail) == 0;
    }
    json_decref(l);
    return n;
}

static void fault(struct world *w, const char *json)
{
    kd_call(w->admin, "POST", "/_control/fault", json, 200);
}

/* --- tests ---------------------------------------------------------------- */

#define NBINDERS 8
#define NPODS    12

static void test_many_on_one_node(void **state)
{
    (void)state;
    w_auto_allocate_ms = 30;
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *bc[NBINDERS];
    for (int i = 0; i < NBINDERS; i++)
        bc[i] = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_start_binders(w.s, bc, NBINDERS, NULL, NULL, &d), GP_OK);
    w_node(&w, "n1", 8);
    w_node(&w, "n2", 8);
    struct tracker t = {.pods = json_object()};
    struct gp_kube_client *tc = kd_client();
    struct gp_kube_informer *watch;
    assert_int_equal(gp_kube_informer_new(tc, "/api/v1/pods", 0, track, &t, &watch, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(watch, &d), GP_OK); /* from before the first pod */
    for (int i = 0; i < NPODS; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%02d", i);
        w_pod(&w, name, 1);
    }
    w_sync(&w);
    size_t bound;
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    /* all decided at once (best-fit: eight on n1, four on n2), one per node
     * handed to the binders, the others waiting with their GPUs booked */
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.slot_waiting, NPODS - 2);
    assert_int_equal(st.assumed, NPODS);
    assert_true(st.binds_in_flight <= 2);
    for (int round = 0; round < 400; round++) {
        nap_ms(5);
        w_sync(&w);
        assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
        if (gp_kube_sched_audit_all(w.s) != 0)
            fail_msg("audit: %s", gp_kube_sched_audit_last(w.s));
        st = gp_kube_sched_stats(w.s);
        if (st.binds == NPODS && st.binds_in_flight == 0)
            break;
    }
    st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.binds, NPODS);
    assert_int_equal(st.slot_waiting, 0);
    assert_int_equal(st.rollbacks, 0);
    assert_int_equal(w_stat(&w, "bindings"), NPODS); /* each pod bound once */
    /* the double marks each pod allocated 30 ms after its Binding, on its
     * own thread: waited for (at most 30 s), not slept out, so that a
     * loaded machine's late timer is no failure */
    for (int k = 0, left = NPODS; k < 3000 && left > 0; k++) {
        left = 0;
        for (int i = 0; i < NPODS; i++) {
            char name[16];
            snprintf(name, sizeof name, "p%02d", i);
            left += strcmp(w_ann(&w, name, GP_KUBE_ANN_PHASE), "allocated") != 0;
        }
        if (left > 0)
            nap_ms(10);
    }
    for (int i = 0; i < NPODS; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%02d", i);
        assert_string_not_equal(w_node_of(&w, name, NULL), "");
        assert_string_equal(w_ann(&w, name, GP_KUBE_ANN_PHASE), "allocated");
    }
    w_check_distinct(&w);
    /* every event since the list, in the server's order */
    assert_int_equal(gp_kube_informer_watch(watch, 1, &d), GP_OK);
    assert_int_equal(t.became, NPODS);
    if (t.max > 1)
        fail_msg("%s", t.worst);
    assert_int_equal(t.max, 1);
    gp_kube_informer_free(watch);
    gp_kube_client_free(tc);
    json_decref(t.pods);
    gp_kube_sched_stop_binders(w.s);
    for (int i = 0; i < NBINDERS; i++)
        gp_kube_client_free(bc[i]);
    w_close(&w);
}

static void test_restart(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 8);
    /* left by a replica before: old1 bound and allocating at GPU 0; half
     * annotated for GPU 1, not bound; and another gpuplane (its own
     * scheduler name) writing its decision for GPU 7 */
    w_pod_full(&w, "old1", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"0\","
               "\"gpuplane.io/phase\":\"allocating\"}");
    w_bind(&w, "old1", "n1");
    w_pod_full(&w, "half", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"1\","
               "\"gpuplane.io/phase\":\"allocating\"}");
    w_pod_full(&w, "other", 1, 0, "gpuplane-b",
               ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"7\","
               "\"gpuplane.io/phase\":\"allocating\"}");
    w_pod(&w, "p1", 1);
    assert_int_equal(w_cycle(&w), 0);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.slot_waiting, 2);                       /* half and p1 */
    assert_string_equal(w_ann(&w, "p1", GP_KUBE_ANN_NODE), ""); /* not written while it waits */
    allocated(&w, "old1");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0); /* the other replica's decision holds it */
    w_bind(&w, "other", "n1");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    allocated(&w, "other");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1); /* the half-finished one first, at its GPU */
    const char *gpus;
    assert_string_equal(w_node_of(&w, "half", &gpus), "n1");
    assert_string_equal(gpus, "1");
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 1);
    assert_string_equal(w_node_of(&w, "p1", NULL), "");
    assert_string_equal(agent_choice(&w, "n1"), "default/half");
    allocated(&w, "half");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "p1", NULL), "n1");
    assert_string_equal(agent_choice(&w, "n1"), "default/p1");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    w_check_distinct(&w);
    w_close(&w);
}

static void test_deletions(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 1);
    w_pod(&w, "p1", 1);
    assert_int_equal(w_cycle(&w), 1);
    const char *n1 = w_node_of(&w, "p1", NULL);
    assert_string_equal(n1, "n2"); /* best-fit: the fullest node that fits */
    w_pod(&w, "p2", 1);
    w_pod(&w, "p3", 1);
    w_pod(&w, "p4", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1); /* n1's slot to one, two wait */
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 2);
    const char *first = NULL, *waiting[2];
    size_t nw = 0;
    static const char *const names[] = {"p2", "p3", "p4"};
    for (int i = 0; i < 3; i++) {
        if (w_node_of(&w, names[i], NULL)[0])
            first = names[i];
        else
            waiting[nw++] = names[i];
    }
    assert_non_null(first);
    assert_int_equal(nw, 2);
    /* a waiting pod deleted: gone from the queue, nothing else changes */
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0",
             waiting[1]);
    kd_call(w.admin, "DELETE", path, NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    /* the allocating pod deleted: the slot is free, the next one bound */
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", first);
    kd_call(w.admin, "DELETE", path, NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, waiting[0], NULL), "n1");
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 0);
    /* a pod waiting for a node that goes away: pending again, never written */
    w_pod(&w, "p5", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    kd_call(w.admin, "DELETE", "/api/v1/nodes/n1", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.slot_waiting, 0);
    assert_int_equal(st.assumed, 0);
    assert_string_equal(w_ann(&w, "p5", GP_KUBE_ANN_NODE), "");
    w_close(&w);
}

/* The scheduler's client answering within 0.3 s: a late answer is none. */
static void open_impatient(struct world *w)
{
    w_open(w, true);
    gp_kube_informer_free(w->nodes);
    gp_kube_informer_free(w->pods);
    gp_kube_informer_free(w->groups);
    gp_kube_sched_free(w->s);
    gp_kube_client_free(w->c);
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_client_opts co;
    gp_kube_client_opts_default(&co);
    co.backoff_base_s = 0.01;
    co.request_timeout_s = 0.3;
    co.qps = 0;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &co, &w->c, &d), GP_OK);
    struct gp_kube_sched_opts o;
    gp_kube_sched_opts_default(&o);
    o.backoff_initial_s = 0.5;
    o.backoff_max_s = 4;
    o.identity = "test-replica";
    assert_int_equal(gp_kube_sched_new(w->c, &o, &w->s, &d), GP_OK);
    assert_int_equal(gp_kube_informer_new(w->ic, "/api/v1/nodes", 0, gp_kube_sched_node_change,
                                          w->s, &w->nodes, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(w->ic, "/api/v1/pods", 0, gp_kube_sched_pod_change, w->s,
                                          &w->pods, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(w->ic, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 0,
                                          gp_kube_sched_group_change, w->s, &w->groups, &d),
                     GP_OK);
    gp_kube_sched_set_leader(w->s, true);
}

static void test_late_binding_unreadable(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    open_impatient(&w);
    w_node(&w, "n1", 2);
    w_pod(&w, "p1", 1);
    w_sync(&w);
    /* p1's one write, its Binding carrying its annotations, is applied
     * but answered after the client gave up, and every read of it fails
     * (the first GET and the client's five retries) */
    fault(&w, "{\"late_ms\":1000,\"count\":1,\"match\":\"/pods/p1/binding\"}");
    fault(&w, "{\"status\":500,\"count\":6,\"match\":\"/pods/p1\"}");
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(bound, 0); /* not known */
    assert_string_equal(w_node_of(&w, "p1", NULL), "n1");
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.rollbacks, 0); /* not taken back: it may be bound (it is) */
    assert_int_equal(st.assumed, 1);
    assert_string_equal(w_ann(&w, "p1", GP_KUBE_ANN_GPUS), "0");
    assert_string_equal(w_ann(&w, "p1", GP_KUBE_ANN_PHASE), "allocating");
    assert_int_equal(requests(&w, "PATCH", "/pods/p1"), 0); /* no clearing was sent */
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    /* p2 waits: p1 holds n1's slot (the informer shows it bound: ours, at
     * GPU 0, allocating) */
    w_pod(&w, "p2", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    assert_string_equal(agent_choice(&w, "n1"), "default/p1");
    allocated(&w, "p1");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    const char *gpus;
    assert_string_equal(w_node_of(&w, "p2", &gpus), "n1");
    assert_string_equal(gpus, "1");
    assert_string_equal(w_ann(&w, "p1", GP_KUBE_ANN_GPUS), "0");
    w_check_distinct(&w);
    assert_int_equal(gp_kube_sched_stats(w.s).rollbacks, 0);
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&w);
}

/* The same lost answer, and the engine made anew (a node changed) before
 * the informer brings p1 bound: p1's decision is kept at its GPU (not
 * decided anew with its GPU taken as free) and read back at once, so
 * "a-big", asking both of n1's GPUs (fed as its ADDED event alone), is
 * not bound over it. */
static void test_late_binding_rebuild(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    open_impatient(&w);
    w_node_agent(&w, "n1", 2, false);
    w_pod(&w, "p1", 1);
    w_sync(&w);
    fault(&w, "{\"late_ms\":1000,\"count\":1,\"match\":\"/pods/p1/binding\"}");
    fault(&w, "{\"status\":500,\"count\":6,\"match\":\"/pods/p1\"}");
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(bound, 0); /* not known */
    assert_string_equal(w_node_of(&w, "p1", NULL), "n1");
    w_pod(&w, "a-big", 2);
    json_t *o = w_pod_get(&w, "a-big");
    gp_kube_sched_pod_change(GP_KUBE_ADDED, o, NULL, w.s);
    json_decref(o);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/n1", "{\"metadata\":{\"labels\":{\"zone\":\"b\"}}}",
            200);
    assert_int_equal(gp_kube_informer_list(w.nodes, &d), GP_OK);
    w.now += 1;
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, 2);
    assert_string_equal(w_node_of(&w, "a-big", NULL), "");
    assert_int_equal(bound, 1); /* p1, read back bound */
    assert_int_equal(gp_kube_sched_stats(w.s).rollbacks, 0);
    w_check_distinct(&w);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "a-big", NULL), "");
    assert_string_equal(w_ann(&w, "p1", GP_KUBE_ANN_GPUS), "0");
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&w);
}

static void test_refused_unreadable(void **state)
{
    (void)state;
    w_auto_allocate_ms = -1;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 2);
    w_pod(&w, "q1", 1);
    w_pod(&w, "q2", 1); /* after q1: the first cycle's order is the pods' names */
    w_sync(&w);
    /* q1's Binding answered 500 past the client's retries (it may have
     * been applied before one of them; here it was not), and q1 unreadable */
    fault(&w, "{\"status\":500,\"count\":6,\"match\":\"/pods/q1/binding\"}");
    fault(&w, "{\"status\":500,\"count\":6,\"match\":\"/pods/q1\"}");
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(bound, 0);
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w.s);
    assert_int_equal(st.rollbacks, 0);
    assert_int_equal(st.assumed, 2);      /* kept: its GPU booked */
    assert_int_equal(st.slot_waiting, 1); /* q2: q1 may be bound and allocating */
    assert_string_equal(w_ann(&w, "q1", GP_KUBE_ANN_GPUS), ""); /* refused whole */
    /* before its re-check it is kept; at it, read unbound and without
     * annotations: taken back with nothing to clear, then bound */
    w.now += 0.2;
    assert_int_equal(w_cycle(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).rollbacks, 0);
    assert_int_equal(gp_kube_sched_stats(w.s).slot_waiting, 1);
    w.now += 0.5;
    assert_int_equal(w_cycle(&w), 1); /* q2, its slot free */
    assert_int_equal(gp_kube_sched_stats(w.s).rollbacks, 1);
    assert_int_equal(requests(&w, "PATCH", "/pods/q1"), 0); /* never patched */
    assert_string_equal(w_ann(&w, "q1", GP_KUBE_ANN_GPUS), "");
    const char *gpus;
    assert_string_equal(w_node_of(&w, "q2", &gpus), "n1");
    assert_string_equal(gpus, "1");
    allocated(&w, "q2");
    w.now += 5;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "q1", &gpus), "n1");
    assert_string_equal(gpus, "0");
    assert_int_equal(w_stat(&w, "bindings"), 2);
    kd_call(w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_many_on_one_node, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_restart, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_deletions, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_late_binding_unreadable, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_late_binding_rebuild, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_refused_unreadable, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
