/* test_queue.c - queues in the engine: quotas (caps, hierarchy, per GPU
 * model), fair-share order, preemption by priority inside a queue,
 * reclaim of a queue's guarantee from borrowers (the most recent victims,
 * whole gangs, after the minimum runtime, the fewest needed, none when the
 * preemptor would not fit), all worked out by hand; and property tests
 * over thousands of seeded random cases: no quota ever exceeded, no
 * partial gang, every eviction allowed by the rules, no deadlock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

#define GPU 1000 /* one GPU in milli */

static struct gp_node_spec qnode(const char *name, const char *model, uint32_t gpus)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = model;
    s.gpu_count = gpus;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 64000;
    s.mem_mib = 524288;
    return s;
}

static struct gp_pod_spec qpod(uint32_t queue, uint32_t gpus, int32_t priority)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 4096;
    s.gpu_count = gpus;
    s.gpu_milli = gpus ? GPU : 0;
    s.priority = priority;
    s.queue = queue;
    return s;
}

/* A queue with a GPU guarantee and (limit >= 0) a borrowing limit. */
static uint32_t add_queue(struct gp_engine *e, const char *name, uint32_t parent,
                          int64_t guaranteed_gpus, int64_t borrow_gpus, double weight)
{
    struct gp_queue_spec q = {0};
    q.name = name;
    q.parent = parent;
    q.weight = weight;
    q.gpu_milli.guaranteed = guaranteed_gpus * GPU;
    if (borrow_gpus >= 0) {
        q.gpu_milli.limited = true;
        q.gpu_milli.borrow_limit = borrow_gpus * GPU;
    }
    uint32_t id;
    assert_int_equal(gp_engine_queue_set(e, &q, &id), GP_OK);
    return id;
}

static struct gp_engine *cluster(uint32_t nodes, uint32_t gpus)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    static const char *const names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
    for (uint32_t i = 0; i < nodes; i++) {
        struct gp_node_spec n = qnode(names[i], "H100", gpus);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    return e;
}

static uint32_t submit(struct gp_engine *e, uint32_t queue, uint32_t gpus, int32_t prio, double t)
{
    struct gp_pod_spec p = qpod(queue, gpus, prio);
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &p, t, &id), GP_OK);
    return id;
}

static int64_t used_gpus(const struct gp_engine *e, uint32_t queue)
{
    struct gp_queue_usage u;
    assert_int_equal(gp_engine_queue_usage(e, queue, &u), GP_OK);
    return u.gpu_milli / GPU;
}

static size_t count_kind(const struct gp_decision *d, size_t n, enum gp_decision_kind kind)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += d[i].kind == kind;
    return c;
}

/* A guaranteed 2 GPUs and may borrow 1: at most 3 run; the others wait
 * for quota, which the decision says, and go in when one leaves. */
static void test_quota_cap(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t a = add_queue(e, "a", 0, 2, 1, 1);
    uint32_t first = submit(e, a, 1, 0, 0);
    for (int i = 0; i < 4; i++)
        submit(e, a, 1, 0, 0);
    struct gp_decision d[16];
    size_t n = gp_engine_schedule(e, 0, 0, d, 16);
    assert_int_equal(n, 5);
    assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 3);
    for (size_t i = 3; i < 5; i++) {
        assert_int_equal(d[i].kind, GP_DECISION_UNSCHEDULABLE);
        assert_int_equal(d[i].quota_queue, a);
        assert_int_equal(d[i].explain.rejected[GP_FILTER_QUOTA], 2);
        assert_int_equal(gp_explain_main(&d[i].explain), GP_FILTER_QUOTA);
    }
    assert_string_equal(gp_filter_name(GP_FILTER_QUOTA), "quota");
    assert_int_equal(used_gpus(e, a), 3);
    /* nothing changed: nothing is tried */
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 16), 0);
    /* time passed: the bound pods may be evicted now, so the waiting ones
     * look for victims once more (lower priorities: none), then rest */
    n = gp_engine_schedule(e, 1, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_UNSCHEDULABLE), 2);
    assert_int_equal(gp_engine_schedule(e, 1.5, 0, d, 16), 0);
    assert_int_equal(gp_engine_pod_finished(e, first), GP_OK);
    n = gp_engine_schedule(e, 2, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 1);
    assert_int_equal(used_gpus(e, a), 3);
    /* a raised quota lets the last one in */
    struct gp_queue_spec q = *gp_engine_queue_spec(e, a);
    q.gpu_milli.borrow_limit = 2 * GPU;
    assert_int_equal(gp_engine_queue_set(e, &q, NULL), GP_OK);
    n = gp_engine_schedule(e, 3, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 1);
    assert_int_equal(used_gpus(e, a), 4);
    gp_engine_free(e);
}

/* A parent capped at 4 GPUs holds its two unlimited children to 4 in all;
 * a child's own cap holds too. */
static void test_quota_hierarchy(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t p = add_queue(e, "org", 0, 4, 0, 1);
    uint32_t c1 = add_queue(e, "team-1", p, 0, -1, 1);
    uint32_t c2 = add_queue(e, "team-2", p, 0, 1, 1);
    for (int i = 0; i < 3; i++) {
        submit(e, c2, 1, 0, 0);
        submit(e, c1, 1, 0, 0);
    }
    struct gp_decision d[16];
    size_t n = gp_engine_schedule(e, 0, 0, d, 16);
    assert_int_equal(n, 6);
    assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 4);
    assert_int_equal(used_gpus(e, p), 4);
    assert_true(used_gpus(e, c2) <= 1);
    assert_int_equal(used_gpus(e, c1) + used_gpus(e, c2), 4);
    for (size_t i = 0; i < n; i++)
        if (d[i].kind == GP_DECISION_UNSCHEDULABLE)
            assert_true(d[i].quota_queue == p || d[i].quota_queue == c2);
    /* the default queue is not limited by any of them */
    for (int i = 0; i < 4; i++)
        submit(e, 0, 1, 0, 1);
    n = gp_engine_schedule(e, 1, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 4);
    assert_int_equal(gp_engine_queue_parent(e, c1), p);
    assert_int_equal(gp_engine_queue_parent(e, p), GP_QUEUE_NONE);
    gp_engine_free(e);
}

/* A per-model cap: at most 2 A100 GPUs; L4s are not limited. Nodes
 * with the model are rejected under "quota", the others fit. */
static void test_quota_per_model(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec a = qnode("a100", "A100", 4), l = qnode("l4", "L4", 4);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &l, NULL);
    struct gp_model_quota mq = {"A100", {0, 2 * GPU, true}};
    struct gp_queue_spec q = {0};
    q.name = "a";
    q.models = &mq;
    q.nmodels = 1;
    uint32_t id;
    assert_int_equal(gp_engine_queue_set(e, &q, &id), GP_OK);
    static const char *const only_a100[] = {"A100"};
    struct gp_pod_spec p = qpod(id, 1, 0);
    p.gpu_models = only_a100;
    p.ngpu_models = 1;
    for (int i = 0; i < 3; i++)
        gp_engine_pod_add(e, &p, 0, NULL);
    struct gp_pod_spec any = qpod(id, 1, 0);
    gp_engine_pod_add(e, &any, 0, NULL);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 4);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    assert_int_equal(d[2].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[2].explain.rejected[GP_FILTER_QUOTA], 1);     /* a100 */
    assert_int_equal(d[2].explain.rejected[GP_FILTER_GPU_MODEL], 1); /* l4 */
    assert_int_equal(d[2].quota_queue, GP_QUEUE_NONE); /* a node's model, not the queue */
    assert_int_equal(d[3].kind, GP_DECISION_BIND);
    assert_int_equal(d[3].node, 1); /* the A100s are over quota: an L4 */
    assert_int_equal(gp_engine_queue_model_used(e, id, gp_engine_node(e, 0)->model), 2 * GPU);
    gp_engine_free(e);
}

static char queue_letter(const struct gp_engine *e, uint32_t pod)
{
    return (char)('A' + gp_engine_pod(e, pod)->spec.queue - 1);
}

/* DRF by hand. 8 GPUs; A (weight 2) submits 8 one-GPU pods, then B (weight
 * 1) 8. Shares are used/8 over the weight: A 0, B 0 -> A (lower id);
 * A 1/16 > B 0 -> B; A 1/16 < B 1/8 -> A; A 2/16 = B 1/8 -> A; A 3/16 > 1/8
 * -> B; B 2/8 > 3/16 -> A; A 4/16 = B -> A; A 5/16 > 1/4 -> B. */
static void test_drf_order(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t a = add_queue(e, "A", 0, 0, -1, 2);
    uint32_t b = add_queue(e, "B", 0, 0, -1, 1);
    for (int i = 0; i < 8; i++)
        submit(e, a, 1, 0, 0);
    for (int i = 0; i < 8; i++)
        submit(e, b, 1, 0, 0);
    struct gp_decision d[32];
    size_t n = gp_engine_schedule(e, 0, 0, d, 32);
    char order[9] = {0};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i].kind == GP_DECISION_BIND)
            order[k++] = queue_letter(e, d[i].pod);
    assert_string_equal(order, "ABAABAAB");
    gp_engine_free(e);
}

/* A queue below its guarantee goes first, whatever its weight and age:
 * C (guaranteed 2 GPUs) submits last and is placed first. Priority then
 * age order the pods inside a queue. */
static void test_drf_guarantee_first(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(1, 4);
    uint32_t a = add_queue(e, "A", 0, 0, -1, 10);
    uint32_t c = add_queue(e, "C", 0, 2, -1, 1);
    submit(e, a, 1, 0, 0);
    uint32_t c_low = submit(e, c, 1, 0, 0);
    uint32_t c_high = submit(e, c, 1, 5, 0);
    struct gp_decision d[8];
    size_t n = gp_engine_schedule(e, 0, 0, d, 8);
    assert_int_equal(n, 3);
    assert_int_equal(d[0].pod, c_high); /* C first (under its guarantee), priority first */
    assert_int_equal(d[1].pod, c_low);  /* C at 1/2 of its guarantee: still first */
    assert_int_equal(queue_letter(e, d[2].pod), 'A');
    (void)a;
    gp_engine_free(e);
}

/* The scenario. 12 GPUs (3 nodes x 4); A is guaranteed 4 and B 8.
 * A runs 12 one-GPU pods (binds at t = 0, 10, 20: it borrows 8 of B's
 * idle quota). B submits 4 at t = 100: each takes back one GPU from A,
 * the 4 A pods bound at t = 20 exactly. Then 4 more take the ones of
 * t = 10; a 9th would take B over its guarantee and evicts nothing. */
static void test_reclaim_scenario(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(3, 4);
    uint32_t a = add_queue(e, "A", 0, 4, -1, 1);
    uint32_t b = add_queue(e, "B", 0, 8, -1, 1);
    uint32_t apods[12];
    struct gp_decision d[32];
    for (int batch = 0; batch < 3; batch++) {
        for (int i = 0; i < 4; i++)
            apods[batch * 4 + i] = submit(e, a, 1, 0, batch * 10);
        size_t n = gp_engine_schedule(e, batch * 10, 0, d, 32);
        assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 4);
    }
    assert_int_equal(used_gpus(e, a), 12);
    for (int round = 0; round < 2; round++) {
        uint32_t bpods[4];
        for (int i = 0; i < 4; i++)
            bpods[i] = submit(e, b, 1, 0, 100 + round);
        size_t n = gp_engine_schedule(e, 100 + round, 0, d, 32);
        assert_int_equal(n, 8);
        /* each EVICT comes just before the BIND it makes room for */
        for (size_t i = 0; i < n; i += 2) {
            assert_int_equal(d[i].kind, GP_DECISION_EVICT);
            assert_int_equal(d[i].evict, GP_EVICT_RECLAIMED);
            assert_int_equal(d[i + 1].kind, GP_DECISION_BIND);
            assert_int_equal(d[i].by, d[i + 1].pod);
            assert_int_equal(d[i + 1].pod, bpods[i / 2]);
            /* the victims: the four bound last (t = 20, then t = 10) */
            uint32_t v = d[i].pod;
            int batch = 2 - round;
            assert_true(v >= apods[batch * 4] && v <= apods[batch * 4 + 3]);
            assert_int_equal(gp_engine_pod(e, v)->state, GP_POD_DONE);
            assert_int_equal(gp_engine_pod_finished(e, v), GP_ESTATE); /* already gone */
        }
    }
    assert_int_equal(used_gpus(e, a), 4);
    assert_int_equal(used_gpus(e, b), 8);
    submit(e, b, 1, 0, 200);
    size_t n = gp_engine_schedule(e, 200, 0, d, 32);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(used_gpus(e, a), 4);
    gp_engine_free(e);
}

/* A's pods may not be evicted before they have run 60 s: B waits, and
 * takes its GPU back at t = 60 without anything else changing. */
static void test_reclaim_min_runtime(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(1, 4);
    struct gp_queue_spec qa = {0};
    qa.name = "A";
    qa.min_runtime_s = 60;
    uint32_t a;
    assert_int_equal(gp_engine_queue_set(e, &qa, &a), GP_OK);
    uint32_t b = add_queue(e, "B", 0, 2, -1, 1);
    for (int i = 0; i < 4; i++)
        submit(e, a, 1, 0, 0);
    struct gp_decision d[16];
    assert_int_equal(count_kind(d, gp_engine_schedule(e, 0, 0, d, 16), GP_DECISION_BIND), 4);
    assert_int_equal(gp_engine_pod_bound_at(e, 0), 0);
    submit(e, b, 2, 0, 30);
    size_t n = gp_engine_schedule(e, 30, 0, d, 16);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    n = gp_engine_schedule(e, 59.5, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_EVICT), 0);
    n = gp_engine_schedule(e, 60, 0, d, 16);
    assert_int_equal(n, 3);
    assert_int_equal(count_kind(d, n, GP_DECISION_EVICT), 2);
    assert_int_equal(d[2].kind, GP_DECISION_BIND);
    assert_int_equal(gp_engine_pod_bound_at(e, d[2].pod), 60);
    gp_engine_free(e);
}

/* A victim that is a gang member takes its whole gang: A's gang of 2 x 4
 * GPUs fills both nodes; B's one-GPU pod evicts both members. */
static void test_reclaim_gang_whole(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t a = add_queue(e, "A", 0, 0, -1, 1);
    uint32_t b = add_queue(e, "B", 0, 1, -1, 1);
    struct gp_group_spec g = {"train", 2, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    for (int i = 0; i < 2; i++) {
        struct gp_pod_spec p = qpod(a, 4, 0);
        p.group = gid;
        assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_OK);
    }
    struct gp_decision d[8];
    assert_int_equal(count_kind(d, gp_engine_schedule(e, 0, 0, d, 8), GP_DECISION_BIND), 2);
    uint32_t bp = submit(e, b, 1, 0, 5);
    size_t n = gp_engine_schedule(e, 5, 0, d, 8);
    assert_int_equal(n, 3);
    assert_int_equal(d[0].kind, GP_DECISION_EVICT);
    assert_int_equal(d[1].kind, GP_DECISION_EVICT);
    assert_int_equal(d[2].kind, GP_DECISION_BIND);
    assert_int_equal(d[2].pod, bp);
    assert_int_equal(gp_engine_group_bound(e, gid), 0);
    assert_int_equal(used_gpus(e, a), 0);
    gp_engine_free(e);
}

/* A gang preempts too, whole or not at all: B's gang of 2 x 2 GPUs
 * (guaranteed 4) reclaims 4 GPUs from A's one-GPU pods. */
static void test_gang_reclaims(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t a = add_queue(e, "A", 0, 0, -1, 1);
    uint32_t b = add_queue(e, "B", 0, 4, -1, 1);
    for (int i = 0; i < 8; i++)
        submit(e, a, 1, 0, i);
    struct gp_decision d[16];
    for (int i = 0; i < 8; i++)
        gp_engine_schedule(e, i, 0, d, 16);
    assert_int_equal(used_gpus(e, a), 8);
    struct gp_group_spec g = {"train", 2, NULL, false};
    uint32_t gid;
    gp_engine_group_add(e, &g, &gid);
    for (int i = 0; i < 2; i++) {
        struct gp_pod_spec p = qpod(b, 2, 0);
        p.group = gid;
        gp_engine_pod_add(e, &p, 10, NULL);
    }
    size_t n = gp_engine_schedule(e, 10, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_EVICT), 4);
    assert_int_equal(count_kind(d, n, GP_DECISION_BIND), 2);
    assert_int_equal(d[4].kind, GP_DECISION_BIND); /* the evictions come first */
    assert_int_equal(gp_engine_group_bound(e, gid), 2);
    assert_int_equal(used_gpus(e, a), 4);
    gp_engine_free(e);
}

/* Inside a queue a higher priority evicts the cheapest lower ones needed:
 * on one 4-GPU node x (1 GPU, t = 5), y (2 GPUs, t = 1) and z (1 GPU,
 * t = 3) run at priority 0; a 3-GPU pod at priority 9 takes x, z, y in
 * cost order (until it fits), then puts back what it can: y is needed,
 * z is not, x is. Victims: x and y. */
static void test_preempt_fewest(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(1, 4);
    uint32_t a = add_queue(e, "A", 0, 0, -1, 1);
    struct gp_decision d[8];
    uint32_t y = submit(e, a, 2, 0, 1);
    gp_engine_schedule(e, 1, 0, d, 8);
    uint32_t z = submit(e, a, 1, 0, 3);
    gp_engine_schedule(e, 3, 0, d, 8);
    uint32_t x = submit(e, a, 1, 0, 5);
    gp_engine_schedule(e, 5, 0, d, 8);
    uint32_t hi = submit(e, a, 3, 9, 6);
    size_t n = gp_engine_schedule(e, 6, 0, d, 8);
    assert_int_equal(n, 3);
    assert_int_equal(d[0].kind, GP_DECISION_EVICT);
    assert_int_equal(d[0].evict, GP_EVICT_PREEMPTED);
    assert_int_equal(d[1].kind, GP_DECISION_EVICT);
    assert_true((d[0].pod == x && d[1].pod == y) || (d[0].pod == y && d[1].pod == x));
    assert_int_equal(d[2].kind, GP_DECISION_BIND);
    assert_int_equal(d[2].pod, hi);
    assert_int_equal(gp_engine_pod(e, z)->state, GP_POD_BOUND);
    gp_engine_free(e);
}

/* Never evict in vain: the 4-GPU pod at priority 5 could only get 2 GPUs
 * from the priority-0 pods (the others have priority 20); nothing moves.
 * And the default queue never preempts. */
static void test_preempt_not_in_vain(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(1, 4);
    uint32_t a = add_queue(e, "A", 0, 0, -1, 1);
    struct gp_decision d[8];
    submit(e, a, 1, 0, 0);
    submit(e, a, 1, 20, 0);
    submit(e, a, 1, 0, 0);
    submit(e, a, 1, 20, 0);
    assert_int_equal(count_kind(d, gp_engine_schedule(e, 0, 0, d, 8), GP_DECISION_BIND), 4);
    submit(e, a, 4, 5, 1);
    size_t n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    assert_int_equal(t.pods_bound, 4);
    gp_engine_free(e);

    e = cluster(1, 4);
    for (int i = 0; i < 4; i++)
        submit(e, 0, 1, 0, 0);
    gp_engine_schedule(e, 0, 0, d, 8);
    submit(e, 0, 1, 100, 1);
    n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    gp_engine_free(e);
}

/* A pod at its queue's cap evicts a lower-priority pod of its queue: the
 * quota, not the node, is what it takes back. */
static void test_preempt_for_quota(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t a = add_queue(e, "A", 0, 2, 0, 1);
    struct gp_decision d[8];
    uint32_t low = submit(e, a, 1, 0, 0);
    submit(e, a, 1, 1, 0);
    gp_engine_schedule(e, 0, 0, d, 8);
    uint32_t hi = submit(e, a, 1, 10, 1);
    size_t n = gp_engine_schedule(e, 1, 0, d, 8);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, GP_DECISION_EVICT);
    assert_int_equal(d[0].pod, low);
    assert_int_equal(d[1].pod, hi);
    assert_int_equal(used_gpus(e, a), 2);
    gp_engine_free(e);
}

/* Reclaim only between branches: C1 and C2 share parent P (guaranteed 4
 * of 8 GPUs); D (guaranteed 4) is P's sibling. C2 (guaranteed 2 inside P)
 * takes back from C1, which borrowed P's quota; D cannot take from P,
 * which holds no more than its guarantee; an unreclaimable queue keeps
 * what it borrowed. */
static void test_reclaim_hierarchy(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(2, 4);
    uint32_t p = add_queue(e, "P", 0, 4, -1, 1);
    uint32_t c1 = add_queue(e, "C1", p, 0, -1, 1);
    uint32_t c2 = add_queue(e, "C2", p, 2, -1, 1);
    uint32_t dq = add_queue(e, "D", 0, 4, -1, 1);
    struct gp_decision d[16];
    for (int i = 0; i < 4; i++)
        submit(e, c1, 1, 0, 0);
    for (int i = 0; i < 4; i++)
        submit(e, dq, 1, 0, 0);
    assert_int_equal(count_kind(d, gp_engine_schedule(e, 0, 0, d, 16), GP_DECISION_BIND), 8);
    submit(e, dq, 1, 0, 1); /* D over its guarantee: nothing */
    assert_int_equal(count_kind(d, gp_engine_schedule(e, 1, 0, d, 16), GP_DECISION_EVICT), 0);
    submit(e, c2, 1, 0, 2);
    size_t n = gp_engine_schedule(e, 2, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_EVICT), 1);
    assert_int_equal(gp_engine_pod(e, d[0].pod)->spec.queue, c1);
    assert_int_equal(used_gpus(e, c2), 1);
    gp_engine_free(e);

    e = cluster(1, 4);
    struct gp_queue_spec keep = {0};
    keep.name = "keep";
    keep.not_reclaimable = true;
    uint32_t k;
    gp_engine_queue_set(e, &keep, &k);
    uint32_t g = add_queue(e, "G", 0, 4, -1, 1);
    for (int i = 0; i < 4; i++)
        submit(e, k, 1, 0, 0);
    gp_engine_schedule(e, 0, 0, d, 16);
    submit(e, g, 1, 0, 1);
    n = gp_engine_schedule(e, 1, 0, d, 16);
    assert_int_equal(count_kind(d, n, GP_DECISION_EVICT), 0);
    gp_engine_free(e);
}

static void test_queue_set_errors(void **state)
{
    (void)state;
    struct gp_engine *e = cluster(1, 4);
    struct gp_queue_spec q = {0};
    assert_int_equal(gp_engine_queue_set(e, &q, NULL), GP_EINVALID); /* no name */
    q.name = "a";
    q.parent = 7;
    assert_int_equal(gp_engine_queue_set(e, &q, NULL), GP_EINVALID); /* no such parent */
    q.parent = 0;
    q.weight = -1;
    assert_int_equal(gp_engine_queue_set(e, &q, NULL), GP_EINVALID);
    q.weight = 0; /* means 1 */
    q.cpu_milli.guaranteed = -5;
    assert_int_equal(gp_engine_queue_set(e, &q, NULL), GP_EINVALID);
    q.cpu_milli.guaranteed = 0;
    uint32_t a, b;
    assert_int_equal(gp_engine_queue_set(e, &q, &a), GP_OK);
    assert_int_equal(a, 1);
    assert_true(gp_engine_queue_spec(e, a)->weight == 1);
    struct gp_queue_spec child = {0};
    child.name = "b";
    child.parent = a;
    assert_int_equal(gp_engine_queue_set(e, &child, &b), GP_OK);
    child.parent = 0; /* moving a queue is refused */
    assert_int_equal(gp_engine_queue_set(e, &child, NULL), GP_EINVALID);
    struct gp_queue_spec def = {0};
    def.name = "default";
    def.gpu_milli.limited = true;
    uint32_t d0;
    assert_int_equal(gp_engine_queue_set(e, &def, &d0), GP_OK);
    assert_int_equal(d0, 0);
    assert_int_equal(gp_engine_queue_count(e), 3);
    struct gp_pod_spec p = qpod(9, 1, 0);
    assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_EINVALID); /* no such queue */
    /* the default queue capped at 0 GPUs: its pods wait for quota */
    p = qpod(0, 1, 0);
    gp_engine_pod_add(e, &p, 0, NULL);
    struct gp_decision d[4];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 4), 1);
    assert_int_equal(d[0].quota_queue, 0);
    gp_engine_free(e);
}

/* ---- properties ------------------------------------------------------------ */

static uint64_t rnd(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define MAXQ 6

struct world {
    struct gp_engine *e;
    uint32_t nq;
    struct gp_queue_spec spec[MAXQ + 1];
};

/* What every bound pod of a queue and its descendants adds up to, counted
 * from the pods themselves, against the queue's caps. */
static void check_quotas(const struct world *w)
{
    const struct gp_engine *e = w->e;
    int64_t gpu[MAXQ + 1] = {0}, cpu[MAXQ + 1] = {0}, mem[MAXQ + 1] = {0};
    for (uint32_t i = 0; i < gp_engine_pod_count(e); i++) {
        const struct gp_pod *p = gp_engine_pod(e, i);
        if (p->state != GP_POD_BOUND)
            continue;
        for (uint32_t q = p->spec.queue; q != GP_QUEUE_NONE; q = gp_engine_queue_parent(e, q)) {
            gpu[q] += (int64_t)p->spec.gpu_count * p->spec.gpu_milli;
            cpu[q] += p->spec.cpu_milli;
            mem[q] += p->spec.mem_mib;
        }
    }
    for (uint32_t q = 1; q <= w->nq; q++) {
        const struct gp_queue_spec *s = gp_engine_queue_spec(e, q);
        struct gp_queue_usage u;
        gp_engine_queue_usage(e, q, &u);
        assert_int_equal(u.gpu_milli, gpu[q]);
        assert_int_equal(u.cpu_milli, cpu[q]);
        assert_int_equal(u.mem_mib, mem[q]);
        if (s->gpu_milli.limited)
            assert_true(gpu[q] <= s->gpu_milli.guaranteed + s->gpu_milli.borrow_limit);
        if (s->cpu_milli.limited)
            assert_true(cpu[q] <= s->cpu_milli.guaranteed + s->cpu_milli.borrow_limit);
    }
}

static void check_gangs(const struct gp_engine *e, uint32_t ngroups, const uint32_t *min)
{
    for (uint32_t g = 1; g <= ngroups; g++) {
        uint32_t b = gp_engine_group_bound(e, g);
        assert_true(b == 0 || b >= min[g]);
    }
}

/* Every eviction follows the rules: the victim was bound, had run its
 * queue's minimum runtime, and is either of the preemptor's queue with a
 * lower priority or was reclaimed from another queue; the preemptor is
 * bound right after. */
static void check_evictions(const struct world *w, const struct gp_decision *d, size_t n,
                            double now, const double *bound_at)
{
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind != GP_DECISION_EVICT)
            continue;
        const struct gp_pod *v = gp_engine_pod(w->e, d[i].pod);
        const struct gp_pod *by = gp_engine_pod(w->e, d[i].by);
        assert_int_equal(v->state, GP_POD_DONE);
        assert_true(bound_at[v->id] >= 0);
        assert_true(now > bound_at[v->id]); /* it has run */
        assert_true(now - bound_at[v->id] >= w->spec[v->spec.queue].min_runtime_s);
        if (d[i].evict == GP_EVICT_PREEMPTED) {
            assert_int_equal(v->spec.queue, by->spec.queue);
            assert_true(v->spec.priority < by->spec.priority);
        } else {
            assert_int_equal(d[i].evict, GP_EVICT_RECLAIMED);
            assert_true(v->spec.queue != by->spec.queue);
        }
        assert_int_equal(by->state, GP_POD_BOUND);
        size_t j = i;
        while (j < n && d[j].kind == GP_DECISION_EVICT)
            j++;
        assert_true(j < n);
        assert_int_equal(d[j].kind, GP_DECISION_BIND);
    }
}

static void check_step(const struct world *w, const struct gp_decision *d, size_t n, double now,
                       double *bound_at, uint32_t ngroups, const uint32_t *min)
{
    check_evictions(w, d, n, now, bound_at);
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind == GP_DECISION_BIND)
            bound_at[d[i].pod] = now;
        else if (d[i].kind == GP_DECISION_EVICT)
            bound_at[d[i].pod] = -1;
    }
    check_quotas(w);
    check_gangs(w->e, ngroups, min);
}

/* Could pod p (with the min_member - 1 others of its gang) run in the
 * empty cluster, within its queue's caps? */
static bool could_run(const struct gp_engine *e, const struct gp_pod *p, const uint32_t *min)
{
    uint32_t together = 1;
    if (p->spec.group) {
        uint32_t live = 0;
        for (uint32_t id = 0; id < gp_engine_pod_count(e); id++) {
            const struct gp_pod *m = gp_engine_pod(e, id);
            live += m->spec.group == p->spec.group && m->state != GP_POD_DONE;
        }
        if (live < min[p->spec.group])
            return false; /* its gang lost members: it waits for them */
        together = min[p->spec.group];
    }
    uint32_t room = 0;
    for (uint32_t i = 0; i < gp_engine_node_count(e); i++) {
        uint32_t g = gp_engine_node(e, i)->spec.gpu_count;
        room += p->spec.gpu_count ? g / p->spec.gpu_count : together;
    }
    if (room < together)
        return false;
    for (uint32_t q = p->spec.queue; q != GP_QUEUE_NONE; q = gp_engine_queue_parent(e, q)) {
        const struct gp_queue_spec *x = gp_engine_queue_spec(e, q);
        if (x->gpu_milli.limited && (int64_t)together * p->spec.gpu_count * GPU >
                                        x->gpu_milli.guaranteed + x->gpu_milli.borrow_limit)
            return false;
        if (x->cpu_milli.limited && (int64_t)together * p->spec.cpu_milli >
                                        x->cpu_milli.guaranteed + x->cpu_milli.borrow_limit)
            return false;
    }
    return true;
}

static void make_queues(struct world *w, uint64_t *s)
{
    w->nq = 1 + (uint32_t)(rnd(s) % MAXQ);
    for (uint32_t q = 1; q <= w->nq; q++) {
        struct gp_queue_spec *x = &w->spec[q];
        memset(x, 0, sizeof *x);
        static const char *const names[] = {"", "q1", "q2", "q3", "q4", "q5", "q6"};
        x->name = names[q];
        x->parent = q > 1 && rnd(s) % 3 == 0 ? 1 + (uint32_t)(rnd(s) % (q - 1)) : 0;
        x->weight = 1 + (double)(rnd(s) % 4);
        x->gpu_milli.guaranteed = (int64_t)(rnd(s) % 9) * GPU;
        if (rnd(s) % 2) {
            x->gpu_milli.limited = true;
            x->gpu_milli.borrow_limit = (int64_t)(rnd(s) % 9) * GPU;
        }
        if (rnd(s) % 4 == 0) {
            x->cpu_milli.limited = true;
            x->cpu_milli.borrow_limit = 4000 + (int64_t)(rnd(s) % 8) * 1000;
        }
        x->no_preempt_within = rnd(s) % 4 == 0;
        x->not_reclaimable = rnd(s) % 6 == 0;
        x->min_runtime_s = rnd(s) % 3 == 0 ? (double)(rnd(s) % 30) : 0;
        assert_int_equal(gp_engine_queue_set(w->e, x, NULL), GP_OK);
    }
    w->spec[0] = *gp_engine_queue_spec(w->e, 0);
}

static void test_property_queues(void **state)
{
    (void)state;
    static const char *const policies[] = {"best-fit", "spread", "fgd", "random"};
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        uint64_t s = seed;
        struct world w;
        memset(&w, 0, sizeof w);
        w.e = gp_engine_new(gp_policy_find(policies[seed % 4]), seed);
        uint32_t nnodes = 1 + (uint32_t)(rnd(&s) % 4);
        static const char *const names[] = {"n0", "n1", "n2", "n3"};
        for (uint32_t i = 0; i < nnodes; i++) {
            struct gp_node_spec n = qnode(names[i], "H100", 2 + (uint32_t)(rnd(&s) % 3) * 2);
            gp_engine_node_add(w.e, &n, NULL);
        }
        make_queues(&w, &s);
        uint32_t min[64] = {0}, ngroups = 0;
        double bound_at[512];
        uint32_t npods = 0;
        struct gp_decision d[1024];
        double now = 0;
        for (int step = 0; step < 40; step++) {
            now += (double)(rnd(&s) % 10);
            uint64_t r = rnd(&s) % 10;
            if (r < 5 && npods < 480) { /* a pod, or a gang */
                uint32_t q = (uint32_t)(rnd(&s) % (w.nq + 1));
                uint32_t gpus = (uint32_t)(rnd(&s) % 4);
                int32_t prio = (int32_t)(rnd(&s) % 3);
                uint32_t members = 1, gid = 0;
                if (rnd(&s) % 4 == 0 && ngroups < 63) {
                    struct gp_group_spec g = {"g", 1 + (uint32_t)(rnd(&s) % 3), NULL, false};
                    members = g.min_member + (uint32_t)(rnd(&s) % 2);
                    assert_int_equal(gp_engine_group_add(w.e, &g, &gid), GP_OK);
                    min[gid] = g.min_member;
                    ngroups = gid;
                    if (gpus == 0)
                        gpus = 1;
                }
                for (uint32_t m = 0; m < members; m++) {
                    struct gp_pod_spec p = qpod(q, gpus, prio);
                    p.group = gid;
                    uint32_t id;
                    assert_int_equal(gp_engine_pod_add(w.e, &p, now, &id), GP_OK);
                    bound_at[id] = -1;
                    npods++;
                }
            } else if (r < 8) { /* a bound pod leaves; a gang's members all at once */
                uint32_t n = (uint32_t)gp_engine_pod_count(w.e);
                for (uint32_t k = 0; n && k < 4; k++) {
                    uint32_t id = (uint32_t)(rnd(&s) % n);
                    const struct gp_pod *p = gp_engine_pod(w.e, id);
                    if (p->state != GP_POD_BOUND)
                        continue;
                    for (uint32_t j = 0; j < n; j++) {
                        const struct gp_pod *m = gp_engine_pod(w.e, j);
                        if (m->state == GP_POD_BOUND &&
                            (j == id || (p->spec.group && m->spec.group == p->spec.group))) {
                            assert_int_equal(gp_engine_pod_finished(w.e, j), GP_OK);
                            bound_at[j] = -1;
                        }
                    }
                    break;
                }
            }
            size_t n = gp_engine_schedule(w.e, now, 0, d, 1024);
            check_step(&w, d, n, now, bound_at, ngroups, min);
        }
        /* no deadlock: drain the cluster; every pod that could run in an
         * empty cluster within its queue's caps is placed at last */
        for (int round = 0; round < 600 && gp_engine_pending_count(w.e) > 0; round++) {
            now += 100;
            uint32_t n = (uint32_t)gp_engine_pod_count(w.e);
            for (uint32_t id = 0; id < n; id++)
                if (gp_engine_pod(w.e, id)->state == GP_POD_BOUND) {
                    gp_engine_pod_finished(w.e, id);
                    bound_at[id] = -1;
                }
            size_t nd = gp_engine_schedule(w.e, now, 0, d, 1024);
            check_step(&w, d, nd, now, bound_at, ngroups, min);
        }
        for (uint32_t id = 0; id < gp_engine_pod_count(w.e); id++) {
            const struct gp_pod *p = gp_engine_pod(w.e, id);
            if (p->state == GP_POD_PENDING && could_run(w.e, p, min)) {
                fprintf(stderr, "seed %llu: pod %u (queue %u, %u GPUs, gang %u) still waits\n",
                        (unsigned long long)seed, id, p->spec.queue, p->spec.gpu_count,
                        p->spec.group);
                fail();
            }
        }
        gp_engine_free(w.e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_cap),           cmocka_unit_test(test_quota_hierarchy),
        cmocka_unit_test(test_quota_per_model),     cmocka_unit_test(test_drf_order),
        cmocka_unit_test(test_drf_guarantee_first), cmocka_unit_test(test_reclaim_scenario),
        cmocka_unit_test(test_reclaim_min_runtime), cmocka_unit_test(test_reclaim_gang_whole),
        cmocka_unit_test(test_gang_reclaims),       cmocka_unit_test(test_preempt_fewest),
        cmocka_unit_test(test_preempt_not_in_vain), cmocka_unit_test(test_preempt_for_quota),
        cmocka_unit_test(test_reclaim_hierarchy),   cmocka_unit_test(test_queue_set_errors),
        cmocka_unit_test(test_property_queues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
