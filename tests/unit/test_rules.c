/* test_rules.c - placement rules that must hold on every path, each set up
 * so that breaking the rule changes the outcome: a gang whose topology is
 * required is never split across domains (a gang that could only be placed
 * split, in a cycle and under preemption; a late member stays in the
 * gang's domain), a NoExecute taint repels pods that do not tolerate it, a
 * node selector with several keys needs all of them, and a draining node
 * (a spot notice, a scale-down) takes no new pods while pods are pending -
 * in the engine and in the simulator's spot notice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/arena.h"

/* Labels: rack, then host (the node's name, for pinning a pod). */
static const struct gp_kv l_n0[] = {{"rack", "a"}, {"host", "n0"}},
                          l_n1[] = {{"rack", "a"}, {"host", "n1"}},
                          l_n2[] = {{"rack", "b"}, {"host", "n2"}},
                          l_n3[] = {{"rack", "b"}, {"host", "n3"}};

static struct gp_node_spec node(const char *name, uint32_t gpus, const struct gp_kv *labels,
                                size_t nlabels)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "H100";
    s.gpu_count = gpus;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 64000;
    s.mem_mib = 524288;
    s.labels = labels;
    s.nlabels = nlabels;
    return s;
}

static struct gp_pod_spec pod(uint32_t gpus)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 4000;
    s.mem_mib = 16384;
    s.gpu_count = gpus;
    s.gpu_milli = 1000;
    return s;
}

static uint64_t alloc_milli(const struct gp_engine *e)
{
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    return t.gpu_milli_alloc;
}

static const char *rack_of(const struct gp_engine *e, uint32_t n)
{
    return gp_engine_node(e, n)->spec.labels[0].value;
}

/* Adds a gang of `pods` members of `gpus` GPUs each (min_member `min`,
 * topology key "rack") in queue `queue` with priority `prio`. */
static uint32_t add_gang(struct gp_engine *e, uint32_t min, uint32_t pods, uint32_t gpus,
                         bool required, uint32_t queue, int32_t prio, double now_s)
{
    struct gp_group_spec g = {"train", min, "rack", required};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    for (uint32_t i = 0; i < pods; i++) {
        struct gp_pod_spec p = pod(gpus);
        p.group = gid;
        p.queue = queue;
        p.priority = prio;
        assert_int_equal(gp_engine_pod_add(e, &p, now_s, NULL), GP_OK);
    }
    return gid;
}

/* ---- a required topology is never split -------------------------------- */

/* Racks a (n0, n1) and b (n2, n3) of 2-GPU nodes; one GPU of n0 and one of
 * n3 are taken by pods pinned there, so each rack has 3 free GPUs but only
 * one node with 2. A gang of 2 x 2 GPUs then fits no single rack, yet fits
 * the cluster spread over n1 and n2: splitting is the only way to place it.
 * The plain pods are in queue `queue` with priority 0. */
static struct gp_engine *two_racks(uint32_t queue)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n[4] = {node("n0", 2, l_n0, 2), node("n1", 2, l_n1, 2),
                                node("n2", 2, l_n2, 2), node("n3", 2, l_n3, 2)};
    for (int i = 0; i < 4; i++)
        assert_int_equal(gp_engine_node_add(e, &n[i], NULL), GP_OK);
    if (queue) {
        struct gp_queue_spec q = {.name = "team"};
        uint32_t id;
        assert_int_equal(gp_engine_queue_set(e, &q, &id), GP_OK);
        assert_int_equal(id, queue);
    }
    struct gp_pod_spec p0 = pod(1), p3 = pod(1);
    p0.node_selector = &l_n0[1];
    p3.node_selector = &l_n3[1];
    p0.nnode_selector = p3.nnode_selector = 1;
    p0.queue = p3.queue = queue;
    assert_int_equal(gp_engine_pod_add(e, &p0, 0, NULL), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &p3, 0, NULL), GP_OK);
    struct gp_decision d[4];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 4), 2);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[0].node, 0);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_int_equal(d[1].node, 3);
    return e;
}

static void test_required_topology_never_split(void **state)
{
    (void)state;
    struct gp_decision d[8];
    /* preferred: the gang is placed, split over n1 and n2 (the set-up
     * leaves no other way) */
    struct gp_engine *e = two_racks(0);
    uint32_t gid = add_gang(e, 2, 2, 2, false, 0, 0, 1);
    assert_int_equal(gp_engine_schedule(e, 1, 0, d, 8), 2);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    assert_int_equal(d[0].node + d[1].node, 1 + 2);
    gp_engine_free(e);

    /* required: it waits, holding nothing (and is not tried again until
     * the cluster changes) */
    e = two_racks(0);
    gid = add_gang(e, 2, 2, 2, true, 0, 0, 1);
    size_t n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(d[i].kind, GP_DECISION_UNSCHEDULABLE);
        assert_int_equal(d[i].gang, GP_GANG_NO_ROOM); /* the empty cluster holds it */
        assert_true(d[i].explain.rejected[GP_FILTER_TOPOLOGY] > 0);
    }
    assert_int_equal(gp_engine_schedule(e, 2, 0, d, 8), 0);
    assert_int_equal(gp_engine_group_bound(e, gid), 0);
    assert_int_equal(alloc_milli(e), 2000);
    /* and once a rack has room it goes there whole: n0's pod leaves */
    assert_int_equal(gp_engine_pod_finished(e, 0), GP_OK);
    assert_int_equal(gp_engine_schedule(e, 3, 0, d, 8), 2);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    assert_string_equal(rack_of(e, d[0].node), "a");
    assert_string_equal(rack_of(e, d[1].node), "a");
    gp_engine_free(e);
}

/* The same gang with a higher priority than the plain pods of its queue:
 * it may preempt, and does - one victim, then both members in one rack -
 * rather than take the free GPUs of two racks without evicting anyone. */
static void test_required_topology_under_preemption(void **state)
{
    (void)state;
    struct gp_engine *e = two_racks(1);
    uint32_t gid = add_gang(e, 2, 2, 2, true, 1, 10, 10);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 10, 0, d, 8);
    assert_int_equal(n, 3);
    assert_int_equal(d[0].kind, GP_DECISION_EVICT);
    assert_int_equal(d[0].evict, GP_EVICT_PREEMPTED);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_int_equal(d[2].kind, GP_DECISION_BIND);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    assert_string_equal(rack_of(e, d[1].node), rack_of(e, d[2].node));
    assert_string_equal(rack_of(e, d[0].node), rack_of(e, d[1].node)); /* room made there */
    gp_engine_free(e);
}

/* A running gang's late members (beyond min_member) join one by one, but
 * still inside the gang's rack. Nodes of 3 GPUs; the gang's two 2-GPU
 * members fill rack a to one free GPU per node. A late 2-GPU member fits
 * only rack b, and waits; a late 1-GPU member joins in rack a. */
static void test_required_topology_late_member(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n[4] = {node("n0", 3, l_n0, 2), node("n1", 3, l_n1, 2),
                                node("n2", 3, l_n2, 2), node("n3", 3, l_n3, 2)};
    for (int i = 0; i < 4; i++)
        assert_int_equal(gp_engine_node_add(e, &n[i], NULL), GP_OK);
    uint32_t gid = add_gang(e, 2, 2, 2, true, 0, 0, 0);
    struct gp_decision d[8];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 2);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    assert_string_equal(rack_of(e, d[0].node), "a"); /* the tie of free GPUs goes by name */
    assert_string_equal(rack_of(e, d[1].node), "a");
    assert_true(d[0].node != d[1].node);
    struct gp_pod_spec two = pod(2), one = pod(1);
    two.group = one.group = gid;
    assert_int_equal(gp_engine_pod_add(e, &two, 1, NULL), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &one, 1, NULL), GP_OK);
    size_t k = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(k, 2);
    if (d[0].kind == GP_DECISION_BIND)
        fail_msg("the 2-GPU late member went to rack %s", rack_of(e, d[0].node));
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[0].explain.rejected[GP_FILTER_TOPOLOGY], 2); /* rack b's nodes */
    assert_int_equal(d[0].explain.rejected[GP_FILTER_GPU_COUNT], 2);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_string_equal(rack_of(e, d[1].node), "a");
    assert_int_equal(gp_engine_group_bound(e, gid), 3);
    gp_engine_free(e);
}

/* ---- taints ------------------------------------------------------------ */

/* Node 0 has a NoExecute taint, node 1 none but its only GPU is taken: a pod
 * that does not tolerate the taint is unschedulable (taint on node 0), one
 * that tolerates only NoSchedule is too, one that tolerates NoExecute - by
 * effect, by any effect, or as an Exists wildcard - binds on node 0. The
 * same holds for a gang member, a never-fits test and an autoscaler probe. */
static void test_no_execute_repels(void **state)
{
    (void)state;
    static const struct gp_taint t = {"gpu", "reserved", GP_EFFECT_NO_EXECUTE};
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n0 = node("n0", 1, l_n0, 2), n1 = node("n1", 1, l_n1, 2);
    n0.taints = &t;
    n0.ntaints = 1;
    assert_int_equal(gp_engine_node_add(e, &n0, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &n1, NULL), GP_OK);
    struct gp_pod_spec p = pod(1);
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 1); /* the untainted node */

    /* node 1 is full now: only the tainted node has room */
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_TAINT], 1);
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_COUNT], 1);
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, 0), gp_engine_pod(e, id)),
                     GP_FILTER_TAINT);

    struct gp_toleration other = {"gpu", "reserved", false, false, GP_EFFECT_NO_SCHEDULE};
    struct gp_pod_spec q = pod(1);
    q.tolerations = &other;
    q.ntolerations = 1;
    assert_int_equal(gp_engine_pod_add(e, &q, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_TAINT], 1);

    /* a gang member that does not tolerate it: the gang never fits (node 1
     * holds one GPU, the gang needs two) */
    struct gp_group_spec g = {"pair", 2, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    struct gp_pod_spec m = pod(1);
    m.group = gid;
    assert_int_equal(gp_engine_pod_add(e, &m, 0, NULL), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &m, 0, NULL), GP_OK);
    struct gp_decision ds[8];
    size_t n = gp_engine_schedule(e, 0, 0, ds, 8);
    size_t gang_never = 0;
    for (size_t i = 0; i < n; i++)
        if (gp_engine_pod(e, ds[i].pod)->spec.group == gid) {
            assert_int_equal(ds[i].kind, GP_DECISION_UNSCHEDULABLE);
            gang_never += ds[i].gang == GP_GANG_NEVER_FITS;
        }
    assert_int_equal(gang_never, 2);

    /* an autoscaler probe of a tainted node spec says no as well */
    struct gp_node probe;
    assert_int_equal(gp_engine_node_probe(e, &n0, &probe), GP_OK);
    assert_false(gp_engine_node_take(e, &probe, gp_engine_pod(e, id)));

    const struct gp_toleration ok[] = {
        {"gpu", "reserved", false, false, GP_EFFECT_NO_EXECUTE}, /* Equal, that effect */
        {"gpu", NULL, true, true, GP_EFFECT_NO_SCHEDULE},        /* Exists, any effect */
        {NULL, NULL, true, true, GP_EFFECT_NO_SCHEDULE},         /* tolerates everything */
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        struct gp_pod_spec r = pod(1);
        r.tolerations = &ok[k];
        r.ntolerations = 1;
        assert_int_equal(gp_engine_pod_add(e, &r, 0, &id), GP_OK);
        assert_int_equal(gp_engine_node_probe(e, &n0, &probe), GP_OK); /* a fresh one */
        assert_true(gp_engine_node_take(e, &probe, gp_engine_pod(e, id)));
        assert_int_equal(gp_engine_filter(e, gp_engine_node(e, 0), gp_engine_pod(e, id)),
                         GP_FILTER_COUNT);
        gp_engine_pod_finished(e, id); /* pending: dropped */
    }
    struct gp_pod_spec r = pod(1);
    r.tolerations = &ok[0];
    r.ntolerations = 1;
    assert_int_equal(gp_engine_pod_add(e, &r, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 0);
    gp_engine_free(e);
}

/* ---- node selectors ------------------------------------------------------ */

/* A selector {zone: a, disk: ssd}: node 0 has only zone a, node 1 only
 * disk ssd, node 2 both keys with another zone, node 3 both as asked. Every
 * node but the last matches some key, and the policy (best-fit, ties to the
 * lowest id) would take any of them first, so only a rule that checks every
 * key sends the pod to node 3. */
static void test_selector_needs_every_key(void **state)
{
    (void)state;
    static const struct gp_kv zone_a[] = {{"zone", "a"}}, ssd[] = {{"disk", "ssd"}},
                              b_ssd[] = {{"zone", "b"}, {"disk", "ssd"}},
                              a_ssd[] = {{"disk", "ssd"}, {"zone", "a"}};
    static const struct gp_kv want[] = {{"zone", "a"}, {"disk", "ssd"}};
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n[4] = {node("za", 1, zone_a, 1), node("ssd", 1, ssd, 1),
                                node("zb-ssd", 1, b_ssd, 2), node("za-ssd", 1, a_ssd, 2)};
    for (int i = 0; i < 4; i++)
        assert_int_equal(gp_engine_node_add(e, &n[i], NULL), GP_OK);
    struct gp_pod_spec p = pod(1);
    p.node_selector = want;
    p.nnode_selector = 2;
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    for (uint32_t k = 0; k < 3; k++)
        assert_int_equal(gp_engine_filter(e, gp_engine_node(e, k), gp_engine_pod(e, id)),
                         GP_FILTER_SELECTOR);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 3);
    /* the one matching node is full: three nodes rejected by the selector */
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_SELECTOR], 3);
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_COUNT], 1);
    /* and a probe of a node with only one of the keys says no */
    struct gp_node probe;
    for (uint32_t k = 0; k < 3; k++) {
        assert_int_equal(gp_engine_node_probe(e, &n[k], &probe), GP_OK);
        assert_false(gp_engine_node_take(e, &probe, gp_engine_pod(e, id)));
    }
    assert_int_equal(gp_engine_node_probe(e, &n[3], &probe), GP_OK);
    assert_true(gp_engine_node_take(e, &probe, gp_engine_pod(e, id)));
    gp_engine_free(e);
}

/* ---- draining nodes -------------------------------------------------------- */

/* Nodes n0 and n1 of 2 GPUs; a pod holds one GPU of n0, which is then
 * drained. best-fit prefers the fuller n0 for one-GPU pods, so only the
 * drain keeps pending pods off it: of three pending pods two bind on n1 and
 * one waits (n0 not ready, n1 full) - also once n0's pod has left and n0 is
 * empty, and for a gang and a single-pod attempt. */
static void test_draining_node_takes_no_pods(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n0 = node("n0", 2, l_n0, 2), n1 = node("n1", 2, l_n1, 2);
    assert_int_equal(gp_engine_node_add(e, &n0, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &n1, NULL), GP_OK);
    struct gp_pod_spec p = pod(1);
    uint32_t first;
    struct gp_decision d[8];
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &first), GP_OK);
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 1);
    assert_int_equal(d[0].node, 0);

    assert_int_equal(gp_engine_node_drain(e, 0), GP_OK);
    assert_int_equal(gp_engine_node(e, 0)->state, GP_NODE_DRAINING);
    assert_int_equal(gp_engine_node_drain(e, 0), GP_EINVALID); /* not ready any more */
    for (int i = 0; i < 3; i++)
        assert_int_equal(gp_engine_pod_add(e, &p, 1, NULL), GP_OK);
    size_t n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 3);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[0].node, 1);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_int_equal(d[1].node, 1);
    assert_int_equal(d[2].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[2].explain.rejected[GP_FILTER_NODE_STATE], 1);
    assert_int_equal(d[2].explain.rejected[GP_FILTER_GPU_COUNT], 1);
    uint32_t waiting = d[2].pod;

    /* n0's pod leaves: n0 is empty, and still takes nothing */
    assert_int_equal(gp_engine_pod_finished(e, first), GP_OK);
    n = gp_engine_schedule(e, 2, 0, d, 8);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[0].explain.rejected[GP_FILTER_NODE_STATE], 1);
    assert_int_equal(gp_engine_schedule_pod(e, waiting, &d[0]), GP_OK);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(gp_engine_filter(e, gp_engine_node(e, 0), gp_engine_pod(e, waiting)),
                     GP_FILTER_NODE_STATE);
    /* a gang of two that only the drained node could hold */
    struct gp_group_spec g = {"pair", 2, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    struct gp_pod_spec m = pod(1);
    m.group = gid;
    assert_int_equal(gp_engine_pod_add(e, &m, 3, NULL), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &m, 3, NULL), GP_OK);
    n = gp_engine_schedule(e, 3, 0, d, 8);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(d[i].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(gp_engine_group_bound(e, gid), 0);
    assert_int_equal(gp_engine_node(e, 0)->pods, 0);
    assert_int_equal(gp_engine_node_remove(e, 0), GP_OK); /* empty: it may go */
    gp_engine_free(e);
}

struct world {
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_workload w;
    struct gp_sim_result r;
    struct gp_diag d;
};

static void run_yaml(struct world *x, const char *cluster, const char *workload)
{
    memset(x, 0, sizeof *x);
    gp_arena_init(&x->a);
    enum gp_err err =
        gp_cluster_parse_yaml(cluster, strlen(cluster), "cluster.yaml", &x->a, &x->c, &x->d);
    if (err == GP_OK)
        err = gp_cluster_expand(&x->c, &x->a, &x->d);
    if (err == GP_OK)
        err = gp_workload_parse_manifest(workload, strlen(workload), "workload.yaml", &x->a, &x->w,
                                         &x->d);
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.seed = 1;
    if (err == GP_OK)
        err = gp_sim_run(&cfg, &x->c, &x->w, &x->a, &x->r, &x->d);
    if (err != GP_OK)
        fail_msg("%s", x->d.msg);
}

/* The simulator's spot notice drains the node. One spot node of 8 GPUs
 * runs `long` (4 GPUs, 5 h); its interruption comes at 1 h with a 30-min
 * notice, and a replacement (4-min boot) is asked for at once. `late` (4
 * GPUs, 40 min) arrives at 1 h 1 min: the draining node has 4 free GPUs,
 * but it must wait for the replacement (ready at 1 h 4 min: a 3-min wait)
 * rather than start there and be stopped with the node at 1 h 30. */
static void test_spot_notice_drains(void **state)
{
    (void)state;
    const char *cluster = "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\n"
                          "spec:\n  autoscaler: {scaleDownUnneededTime: 1m}\n  nodePools:\n"
                          "  - name: spot\n"
                          "    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n"
                          "    cpu: \"96\"\n    memory: 1Ti\n"
                          "    count: 1\n    bootTime: 4m\n    pricePerHour: 8\n"
                          "    spot: true\n    interruptionTimes: [1h]\n"
                          "    spotNotice: 30m\n";
    const char *wl = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: long\n"
                     "  annotations: {sim.gpuplane.io/duration: 5h}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 4}}\n"
                     "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: late\n"
                     "  annotations: {sim.gpuplane.io/duration: 40m, "
                     "sim.gpuplane.io/arrival: 61m}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 4}}\n";
    struct world x;
    run_yaml(&x, cluster, wl);
    assert_int_equal(x.r.spot_interruptions, 1);
    assert_int_equal(x.r.spot_evictions, 1); /* `long` only */
    assert_int_equal(x.r.pods_completed, 2);
    assert_true(x.r.unschedulable[GP_FILTER_NODE_STATE] >= 1);
    /* `late` waited for the replacement; `long` started at once, twice */
    assert_int_equal(x.r.binds, 3);
    assert_float_equal(x.r.queue_delay_s.max, 180, 1e-6);
    gp_arena_free(&x.a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_topology_never_split),
        cmocka_unit_test(test_required_topology_under_preemption),
        cmocka_unit_test(test_required_topology_late_member),
        cmocka_unit_test(test_no_execute_repels),
        cmocka_unit_test(test_selector_needs_every_key),
        cmocka_unit_test(test_draining_node_takes_no_pods),
        cmocka_unit_test(test_spot_notice_drains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
