/* test_gang.c - gangs: all or nothing, nothing held while waiting,
 * waiting for members, topology domains, never-fits detection, and
 * property tests (no partial gang is ever bound; no deadlock: once the
 * cluster drains, every gang that fits the empty cluster is placed), and
 * the same placements from a node-local policy's memo of scores. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/sharing.h"

static const struct gp_kv rack_a = {"rack", "a"}, rack_b = {"rack", "b"};

static struct gp_node_spec gnode(const char *name, uint32_t gpus, const struct gp_kv *rack)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "H100";
    s.gpu_count = gpus;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 64000;
    s.mem_mib = 524288;
    if (rack) {
        s.labels = rack;
        s.nlabels = 1;
    }
    return s;
}

static struct gp_pod_spec gpod(uint32_t gpus, uint32_t group)
{
    struct gp_pod_spec s = {0};
    s.name = "worker";
    s.cpu_milli = 8000;
    s.mem_mib = 65536;
    s.gpu_count = gpus;
    s.gpu_milli = 1000;
    s.group = group;
    return s;
}

static uint32_t add_gang(struct gp_engine *e, uint32_t min, uint32_t pods, uint32_t gpus,
                         const char *topology_key, bool required)
{
    struct gp_group_spec g = {"train", min, topology_key, required};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    for (uint32_t i = 0; i < pods; i++) {
        struct gp_pod_spec p = gpod(gpus, gid);
        assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_OK);
    }
    return gid;
}

static uint64_t alloc_milli(const struct gp_engine *e)
{
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    return t.gpu_milli_alloc;
}

static void test_gang_placed_whole(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec a = gnode("a", 4, NULL), b = gnode("b", 4, NULL);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    uint32_t gid = add_gang(e, 2, 2, 4, NULL, false);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_true(d[0].node != d[1].node);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    gp_engine_free(e);
}

/* A plain pod holds 2 GPUs of node a; a gang of 2 x 4 GPUs cannot fit and
 * must hold nothing while it waits. When the pod leaves, the gang goes in. */
static void test_gang_holds_nothing_while_waiting(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec a = gnode("a", 4, NULL), b = gnode("b", 4, NULL);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    struct gp_pod_spec plain = gpod(2, 0);
    uint32_t pid;
    gp_engine_pod_add(e, &plain, 0, &pid);
    struct gp_decision d[8];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 1);
    uint32_t gid = add_gang(e, 2, 2, 4, NULL, false);
    size_t n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(d[i].kind, GP_DECISION_UNSCHEDULABLE);
        assert_int_equal(d[i].gang, GP_GANG_NO_ROOM);
    }
    assert_int_equal(gp_engine_group_bound(e, gid), 0);
    assert_int_equal(alloc_milli(e), 2000); /* only the plain pod */
    /* a one-GPU pod that arrives later still fits: the gang blocks nothing */
    struct gp_pod_spec small = gpod(1, 0);
    gp_engine_pod_add(e, &small, 2, NULL);
    n = gp_engine_schedule(e, 2, 0, d, 8);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    gp_engine_pod_finished(e, pid);
    gp_engine_pod_finished(e, d[0].pod);
    n = gp_engine_schedule(e, 3, 0, d, 8);
    assert_int_equal(n, 2);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    gp_engine_free(e);
}

/* gp_engine_schedule_group: one gang placed outside the queue order, all
 * or nothing - a plain pod pending beside it is not touched; a gang that
 * does not fit binds none and holds nothing; 0 for a group without
 * pending members or with more than cap. */
static void test_schedule_group(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec a = gnode("a", 4, NULL), b = gnode("b", 4, NULL);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    struct gp_pod_spec plain = gpod(1, 0);
    gp_engine_pod_add(e, &plain, 0, NULL);
    uint32_t fits = add_gang(e, 2, 2, 4, NULL, false);
    uint32_t big = add_gang(e, 2, 2, 4, NULL, false);
    struct gp_decision d[8];
    assert_int_equal(gp_engine_schedule_group(e, fits, d, 1), 0); /* room for one decision */
    assert_int_equal(gp_engine_group_bound(e, fits), 0);
    assert_int_equal(gp_engine_schedule_group(e, fits, d, 8), 2);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_true(d[0].node != d[1].node);
    assert_int_equal(gp_engine_group_bound(e, fits), 2);
    assert_int_equal(gp_engine_schedule_group(e, fits, d, 8), 0); /* none pending */
    assert_int_equal(gp_engine_schedule_group(e, big, d, 8), 2);  /* no room left */
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[1].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(gp_engine_group_bound(e, big), 0);
    assert_int_equal(alloc_milli(e), 8000);          /* the first gang's alone */
    assert_int_equal(gp_engine_pending_count(e), 3); /* the plain pod and the big gang */
    assert_int_equal(gp_engine_schedule_group(e, 99, d, 8), 0);
    gp_engine_free(e);
}

static void test_gang_waits_for_members(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gnode("a", 8, NULL);
    gp_engine_node_add(e, &a, NULL);
    uint32_t gid = add_gang(e, 3, 2, 1, NULL, false);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].gang, GP_GANG_MEMBERS);
    assert_int_equal(alloc_milli(e), 0);
    struct gp_pod_spec third = gpod(1, gid);
    gp_engine_pod_add(e, &third, 1, NULL);
    n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 3);
    assert_int_equal(gp_engine_group_bound(e, gid), 3);
    /* a fourth member joins the running gang on its own */
    gp_engine_pod_add(e, &third, 2, NULL);
    n = gp_engine_schedule(e, 2, 0, d, 8);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(gp_engine_group_bound(e, gid), 4);
    gp_engine_free(e);
}

static void test_gang_never_fits(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gnode("a", 8, NULL), b = gnode("b", 8, NULL);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    add_gang(e, 3, 3, 8, NULL, false); /* 24 GPUs on a 16-GPU cluster */
    struct gp_pod_spec huge = gpod(1, 0);
    huge.cpu_milli = 1000000; /* fits no node at all */
    struct gp_group_spec g = {"huge", 1, NULL, false};
    uint32_t gid;
    gp_engine_group_add(e, &g, &gid);
    huge.group = gid;
    gp_engine_pod_add(e, &huge, 0, NULL);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(d[i].gang, GP_GANG_NEVER_FITS);
    assert_int_equal(alloc_milli(e), 0);
    gp_engine_free(e);
}

/* On a time-sliced node of 2 GPUs x 4 replicas (nvidia.com/gpu: 8 in
 * all, as the device plugin advertises it) a gang of 3 pods of
 * nvidia.com/gpu: 2 and one of a pod of nvidia.com/gpu: 3 each fit,
 * though each asks more than the node's 2 physical GPUs (not both at
 * once: the second waits for room, it is not "never fits"); a gang of
 * 5 x 2 replicas never does. */
static void test_gang_on_replicas(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = {.mode = GP_SHARE_TIMESLICE, .replicas = 4};
    struct gp_node_spec a = gnode("a", 2, NULL);
    a.sharing = &ts;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    gp_engine_node_add(e, &a, NULL);
    add_gang(e, 3, 3, 2, NULL, false);
    add_gang(e, 1, 1, 3, NULL, false);
    struct gp_decision d[8];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 4);
    for (size_t i = 0; i < 3; i++) /* the first gang: 6 replicas */
        assert_int_equal(d[i].kind, GP_DECISION_BIND);
    assert_int_equal(d[3].gang, GP_GANG_NO_ROOM); /* 3 more do not fit the 2 left */
    gp_engine_free(e);

    e = gp_engine_new(NULL, 1);
    gp_engine_node_add(e, &a, NULL);
    add_gang(e, 1, 1, 3, NULL, false);
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 1);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[0].pick.ngpus, 3); /* replicas of GPUs 0, 1 and one again */
    gp_engine_free(e);

    e = gp_engine_new(NULL, 1);
    gp_engine_node_add(e, &a, NULL);
    add_gang(e, 5, 5, 2, NULL, false);
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 8), 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(d[i].gang, GP_GANG_NEVER_FITS);
    gp_engine_free(e);
}

/* Racks a (nodes 0, 1) and b (nodes 2, 3) of 2 GPUs; a plain pod takes one
 * GPU of node 0. A gang of 2 x 2 GPUs that requires one rack goes to rack b;
 * one that only prefers a rack spans racks when no rack has room. */
static void test_gang_topology(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec n0 = gnode("n0", 2, &rack_a), n1 = gnode("n1", 2, &rack_a),
                        n2 = gnode("n2", 2, &rack_b), n3 = gnode("n3", 2, &rack_b);
    gp_engine_node_add(e, &n0, NULL);
    gp_engine_node_add(e, &n1, NULL);
    gp_engine_node_add(e, &n2, NULL);
    gp_engine_node_add(e, &n3, NULL);
    struct gp_pod_spec plain = gpod(1, 0);
    struct gp_decision d[8];
    gp_engine_pod_add(e, &plain, 0, NULL);
    gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(d[0].node, 0);
    add_gang(e, 2, 2, 2, "rack", true);
    size_t n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[0].node, 2);
    assert_int_equal(d[1].node, 3);
    /* left: one GPU on n0 and two on n1 (rack a). Two 1-GPU... a gang of
     * 2 x 1 GPU fits rack a; a required gang of 2 x 2 GPUs does not fit any
     * rack, and a preferred one does not fit anywhere either */
    add_gang(e, 2, 2, 2, "rack", true);
    n = gp_engine_schedule(e, 2, 0, d, 8);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[0].gang, GP_GANG_NO_ROOM);
    assert_true(d[0].explain.rejected[GP_FILTER_TOPOLOGY] > 0);
    gp_engine_free(e);

    /* preferred: rack a has 1 + 1 free GPUs, rack b 2: a gang of 3 x 1 GPU
     * fits no single rack and spans them */
    e = gp_engine_new(NULL, 1);
    gp_engine_node_add(e, &n0, NULL);
    gp_engine_node_add(e, &n1, NULL);
    gp_engine_node_add(e, &n2, NULL);
    gp_engine_node_add(e, &n3, NULL);
    struct gp_pod_spec two = gpod(2, 0);
    gp_engine_pod_add(e, &two, 0, NULL);   /* fills n0 */
    gp_engine_pod_add(e, &two, 0, NULL);   /* fills n1 */
    gp_engine_pod_add(e, &plain, 0, NULL); /* one GPU of n2 */
    gp_engine_schedule(e, 0, 0, d, 8);
    uint32_t gid = add_gang(e, 2, 2, 1, "rack", false);
    n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 2);
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    gp_engine_free(e);
}

/* ---- properties ------------------------------------------------------- */

static void check_no_partial_gang(const struct gp_engine *e, uint32_t ngroups,
                                  const uint32_t *min_member)
{
    for (uint32_t g = 1; g <= ngroups; g++) {
        uint32_t bound = gp_engine_group_bound(e, g);
        assert_true(bound == 0 || bound >= min_member[g]);
    }
}

static void test_property_gangs(void **state)
{
    (void)state;
    static const char *const policies[] = {"best-fit", "fgd", "random", "spread"};
    for (uint64_t seed = 1; seed <= 300; seed++) {
        struct gp_rng r;
        gp_rng_seed(&r, seed);
        struct gp_engine *e = gp_engine_new(gp_policy_find(policies[seed % 4]), seed);
        char names[8][16];
        uint32_t nnodes = 2 + (uint32_t)gp_rng_below(&r, 6);
        for (uint32_t i = 0; i < nnodes; i++) {
            snprintf(names[i], sizeof names[i], "n%u", i);
            struct gp_node_spec s =
                gnode(names[i], 1u << gp_rng_below(&r, 4), gp_rng_below(&r, 2) ? &rack_a : &rack_b);
            gp_engine_node_add(e, &s, NULL);
        }
        uint32_t min_member[64] = {0}, ngroups = 0;
        bool placed[64] = {false}, never[64] = {false};
        struct gp_decision d[256];
        for (int step = 0; step < 40; step++) {
            uint64_t op = gp_rng_below(&r, 6);
            if (op < 2 && ngroups < 63) {
                uint32_t members = 1 + (uint32_t)gp_rng_below(&r, 4);
                uint32_t min = 1 + (uint32_t)gp_rng_below(&r, members);
                bool topo = gp_rng_below(&r, 3) == 0;
                uint32_t gid = add_gang(e, min, members, 1u << gp_rng_below(&r, 3),
                                        topo ? "rack" : NULL, gp_rng_below(&r, 2));
                min_member[gid] = min;
                ngroups = gid;
            } else if (op < 4) {
                struct gp_pod_spec p = gpod(1 + (uint32_t)gp_rng_below(&r, 2), 0);
                gp_engine_pod_add(e, &p, step, NULL);
            } else if (op == 4) {
                size_t n = gp_engine_schedule(e, step, 0, d, 256);
                for (size_t i = 0; i < n; i++) {
                    uint32_t g = gp_engine_pod(e, d[i].pod)->spec.group;
                    if (g && d[i].kind == GP_DECISION_BIND)
                        placed[g] = true;
                    if (g && d[i].gang == GP_GANG_NEVER_FITS)
                        never[g] = true;
                }
            } else if (gp_engine_pod_count(e) > 0) {
                /* plain pods leave; gang members stay (they run) */
                uint32_t id = (uint32_t)gp_rng_below(&r, gp_engine_pod_count(e));
                const struct gp_pod *p = gp_engine_pod(e, id);
                if (p->state == GP_POD_BOUND && p->spec.group == 0)
                    gp_engine_pod_finished(e, id);
            }
            check_no_partial_gang(e, ngroups, min_member);
        }
        /* drain: every bound pod leaves, cycle after cycle, until the queue
         * makes no more progress; then every gang that could ever fit ran */
        for (int round = 0; round < 200 && gp_engine_pending_count(e) > 0; round++) {
            size_t n = gp_engine_schedule(e, 100 + round, 0, d, 256);
            bool progress = false;
            for (size_t i = 0; i < n; i++) {
                uint32_t g = gp_engine_pod(e, d[i].pod)->spec.group;
                if (d[i].kind == GP_DECISION_BIND) {
                    progress = true;
                    if (g)
                        placed[g] = true;
                }
                if (g && d[i].gang == GP_GANG_NEVER_FITS)
                    never[g] = true;
            }
            check_no_partial_gang(e, ngroups, min_member);
            size_t finished = 0;
            for (uint32_t id = 0; id < gp_engine_pod_count(e); id++)
                if (gp_engine_pod(e, id)->state == GP_POD_BOUND)
                    finished += gp_engine_pod_finished(e, id) == GP_OK;
            if (!progress && finished == 0)
                break; /* the cluster is empty and nothing more fits */
        }
        for (uint32_t g = 1; g <= ngroups; g++)
            assert_true(placed[g] || never[g]);
        gp_engine_free(e);
    }
}

/* ---- the gang memo of node-local policies ------------------------------ */

/* A policy under test, wrapped to count its score calls. */
static const struct gp_policy_ops *memo_base;
static unsigned long memo_calls;

static double counting_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                             const struct gp_pod *pod, struct gp_pick *pick)
{
    memo_calls++;
    return memo_base->score(state, e, node, pod, pick);
}

static const struct gp_kv memo_racks[3] = {{"rack", "a"}, {"rack", "b"}, {"rack", "c"}};
static const char *const memo_h100[] = {"H100"};

/* A gang member's template: whole GPUs, or a share of one; some only on H100. */
static struct gp_pod_spec memo_pod(struct gp_rng *r, uint32_t group)
{
    struct gp_pod_spec s = gpod(1u << gp_rng_below(r, 4), group);
    s.cpu_milli = 2000 * (int64_t)(1 + gp_rng_below(r, 8));
    s.mem_mib = 16384 * (int64_t)(1 + gp_rng_below(r, 4));
    if (gp_rng_below(r, 4) == 0) {
        s.gpu_count = 1;
        s.gpu_milli = 250 * (uint32_t)(1 + gp_rng_below(r, 3));
    }
    if (gp_rng_below(r, 4) == 0) {
        s.gpu_models = memo_h100;
        s.ngpu_models = 1;
    }
    s.duration_hint_s = (double)gp_rng_below(r, 3) * 5;
    return s;
}

/* One seeded run with the policy's node_local flag as given: a random
 * cluster (node sizes, two GPU models, three racks) partly filled, then
 * rounds of gangs of one or two member shapes, with and without a topology,
 * that fit or not, while pods finish. Every decision is appended to out;
 * returns how many, and the score calls in *calls. */
static size_t memo_run(const struct gp_policy_ops *base, bool node_local, uint64_t seed,
                       bool backfill, struct gp_decision *out, size_t cap, unsigned long *calls)
{
    static char names[96][16];
    struct gp_policy_ops ops = *base;
    ops.node_local = node_local;
    ops.score = counting_score;
    memo_base = base;
    memo_calls = 0;
    struct gp_engine *e = gp_engine_new(&ops, seed);
    assert_non_null(e);
    if (backfill)
        assert_int_equal(gp_engine_set_order(e, GP_ORDER_FIFO, true), GP_OK);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    uint32_t nnodes = 32 + (uint32_t)gp_rng_below(&r, 64);
    for (uint32_t i = 0; i < nnodes; i++) {
        snprintf(names[i], sizeof names[i], "n%u", i);
        struct gp_node_spec n =
            gnode(names[i], 1u << gp_rng_below(&r, 4), &memo_racks[gp_rng_below(&r, 3)]);
        n.gpu_model = gp_rng_below(&r, 3) ? "H100" : "A100";
        n.cpu_milli = 16000 * (int64_t)(1 + gp_rng_below(&r, 8));
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    struct gp_pod_spec target[3] = {gpod(1, 0), gpod(8, 0), gpod(1, 0)};
    target[2].gpu_milli = 500;
    const uint32_t counts[3] = {6, 1, 3};
    assert_int_equal(gp_engine_set_target(e, target, counts, 3, 1.0), GP_OK);
    struct gp_decision d[512];
    size_t nout = 0;
    for (int k = 0; k < 40; k++) { /* fill: plain pods here and there */
        struct gp_pod_spec p = memo_pod(&r, 0);
        assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_OK);
    }
    nout = gp_engine_schedule(e, 0, 0, out, cap);
    memo_calls = 0; /* from here on, the gangs' */
    for (int step = 1; step <= 10; step++) {
        for (int g = 0; g < 2; g++) {
            uint32_t members = 2 + (uint32_t)gp_rng_below(&r, 30);
            uint32_t min = 1 + (uint32_t)gp_rng_below(&r, members);
            uint64_t topo = gp_rng_below(&r, 3);
            struct gp_group_spec gs = {"train", min, topo ? "rack" : NULL, topo == 2};
            uint32_t gid;
            assert_int_equal(gp_engine_group_add(e, &gs, &gid), GP_OK);
            struct gp_pod_spec a = memo_pod(&r, gid), b = memo_pod(&r, gid);
            uint64_t mix = gp_rng_below(&r, 4); /* one shape, two in turn, two in halves */
            for (uint32_t m = 0; m < members; m++) {
                bool second = mix == 1 ? m % 3 == 2 : mix == 2 && 2 * m >= members;
                const struct gp_pod_spec *p = second ? &b : &a;
                assert_int_equal(gp_engine_pod_add(e, p, step, NULL), GP_OK);
            }
        }
        size_t n = gp_engine_schedule(e, step, 0, d, 512);
        assert_true(nout + n <= cap);
        memcpy(out + nout, d, n * sizeof d[0]);
        nout += n;
        for (uint32_t id = 0; id < gp_engine_pod_count(e); id++) /* about a third leave */
            if (gp_engine_pod(e, id)->state == GP_POD_BOUND && gp_rng_below(&r, 3) == 0)
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
    }
    *calls = memo_calls;
    gp_engine_free(e);
    return nout;
}

static void assert_same_decision(const struct gp_decision *a, const struct gp_decision *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->pod, b->pod);
    assert_int_equal(a->gang, b->gang);
    assert_int_equal(a->quota_queue, b->quota_queue);
    assert_int_equal(a->explain.nodes_total, b->explain.nodes_total);
    assert_memory_equal(a->explain.rejected, b->explain.rejected, sizeof a->explain.rejected);
    if (a->kind != GP_DECISION_BIND)
        return;
    assert_int_equal(a->node, b->node);
    assert_int_equal(a->pick.ngpus, b->pick.ngpus);
    assert_memory_equal(a->pick.gpu, b->pick.gpu, a->pick.ngpus);
}

/* A node-local policy's gang placements are the same whether the engine
 * keeps its scores between members or asks for every node every time -
 * and keeping them saves most of the score calls. */
static void test_gang_memo_same_decisions(void **state)
{
    (void)state;
    static const char *const policies[] = {"best-fit",       "dot-product", "spread",
                                           "gpu-clustering", "gpu-packing", "fgd"};
    static struct gp_decision with[4096], without[4096];
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        const struct gp_policy_ops *base = gp_policy_find(policies[i]);
        assert_non_null(base);
        assert_true(base->node_local);
        unsigned long calls_with = 0, calls_without = 0;
        size_t binds = 0;
        for (uint64_t seed = 1; seed <= 16; seed++) {
            unsigned long c1, c2;
            bool backfill = seed % 2 == 0;
            size_t n1 = memo_run(base, true, seed, backfill, with, 4096, &c1);
            size_t n2 = memo_run(base, false, seed, backfill, without, 4096, &c2);
            assert_int_equal(n1, n2);
            for (size_t k = 0; k < n1; k++) {
                assert_same_decision(&with[k], &without[k]);
                binds += with[k].kind == GP_DECISION_BIND;
            }
            calls_with += c1;
            calls_without += c2;
        }
        assert_true(binds > 100);
        assert_true(3 * calls_with < 2 * calls_without); /* here about half */
    }
    assert_false(gp_policy_find("random")->node_local);
    assert_false(gp_policy_find("fgd-pack")->node_local);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_placed_whole),
        cmocka_unit_test(test_gang_holds_nothing_while_waiting),
        cmocka_unit_test(test_schedule_group),
        cmocka_unit_test(test_gang_waits_for_members),
        cmocka_unit_test(test_gang_never_fits),
        cmocka_unit_test(test_gang_on_replicas),
        cmocka_unit_test(test_gang_topology),
        cmocka_unit_test(test_property_gangs),
        cmocka_unit_test(test_gang_memo_same_decisions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
