/* test_preempt_pdb.c - the engine's preemption when a candidate victim
 * would break a PodDisruptionBudget (gp_engine_pod_set_pdb_violating, as
 * an older event log's pod_pdb lines replay it; gp_engine_pdb_set and
 * gp_engine_pod_set_pdbs, as the live scheduler's pdb.c gives the
 * budgets: test_budget_*): kube-scheduler's node-by-node
 * choice (pkg/scheduler/framework/preemption/preemption.go
 * pickOneNodeForPreemption: the fewest violations, then the lowest
 * highest victim priority, the lowest sum of priorities, the fewest
 * victims, the latest start) and its reprieve on the node
 * (plugins/defaultpreemption/default_preemption.go SelectVictimsOnNode:
 * the violating victims put back first); without budgets the search is
 * the one it always was (the simulator's golden tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

static char names[128][16];

static struct gp_engine *cluster(const uint32_t *gpus, uint32_t nodes)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_queue_spec q = {.name = "default"}; /* preempts by priority, as gpuplane schedule */
    uint32_t qid;
    assert_int_equal(gp_engine_queue_set(e, &q, &qid), GP_OK);
    assert_true(nodes <= 128);
    for (uint32_t i = 0; i < nodes; i++) {
        struct gp_node_spec n = {0};
        snprintf(names[i], sizeof names[i], "n%u", i);
        n.name = names[i];
        n.gpu_model = "H100";
        n.gpu_count = gpus[i];
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 64000;
        n.mem_mib = 524288;
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    return e;
}

/* A pod of `gpus` whole GPUs at priority prio, bound at once on node
 * `node` (the GPUs the engine picks there). */
static uint32_t bound(struct gp_engine *e, uint32_t node, uint32_t gpus, int32_t prio, double t)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = 1000;
    s.mem_mib = 4096;
    s.gpu_count = gpus;
    s.gpu_milli = 1000;
    s.priority = prio;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, t, &id), GP_OK);
    assert_int_equal(gp_engine_pod_assign(e, id, node, NULL), GP_OK);
    return id;
}

static uint32_t pending(struct gp_engine *e, uint32_t gpus, int32_t prio, double t)
{
    struct gp_pod_spec s = {0};
    s.name = "hi";
    s.cpu_milli = 1000;
    s.mem_mib = 4096;
    s.gpu_count = gpus;
    s.gpu_milli = 1000;
    s.priority = prio;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, t, &id), GP_OK);
    return id;
}

/* The pods evicted by one cycle at t, as a bit set of pod ids; the
 * preemptor bound. */
static uint64_t evicted(struct gp_engine *e, double t, uint32_t preemptor)
{
    struct gp_decision d[16];
    size_t n = gp_engine_schedule(e, t, 0, d, 16);
    uint64_t set = 0;
    bool bound_it = false;
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind == GP_DECISION_EVICT)
            set |= 1ull << d[i].pod;
        bound_it |= d[i].kind == GP_DECISION_BIND && d[i].pod == preemptor;
    }
    assert_true(bound_it);
    return set;
}

/* Every candidate breaks a budget: n0's two 1-GPU pods (priority 0) or
 * n1's one 2-GPU pod (priority 1). kube-scheduler evicts on the node of
 * the fewest violations (n1: one), not where the cheapest victims are
 * (n0: two violations; the engine's own search, cheapest first, took
 * those). */
static void test_fewest_violations(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){2, 2}, 2);
    uint32_t a1 = bound(e, 0, 1, 0, 0), a2 = bound(e, 0, 1, 0, 0), b = bound(e, 1, 2, 1, 0);
    gp_engine_pod_set_pdb_violating(e, a1, true);
    gp_engine_pod_set_pdb_violating(e, a2, true);
    gp_engine_pod_set_pdb_violating(e, b, true);
    uint32_t hi = pending(e, 2, 10, 1);
    assert_int_equal(evicted(e, 1, hi), 1ull << b);
    assert_int_equal(gp_engine_pod(e, hi)->node, 1);
    gp_engine_free(e);
}

/* On the node chosen, a victim that breaks a budget is put back first:
 * of v (violating) and w (not), both priority 0 and either enough, w
 * goes. */
static void test_violating_reprieved(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){2}, 1);
    uint32_t w = bound(e, 0, 1, 0, 0), v = bound(e, 0, 1, 0, 0.5);
    gp_engine_pod_set_pdb_violating(e, v, true);
    uint32_t hi = pending(e, 1, 10, 1);
    assert_int_equal(evicted(e, 1, hi), 1ull << w);
    assert_int_equal(gp_engine_pod(e, v)->state, GP_POD_BOUND);
    gp_engine_free(e);
}

/* Violations alike (none on the nodes that can host it: the violating
 * pod on n2 cannot make room there), then the lowest sum of priorities,
 * each counted 2^31 up: n1's one 2-GPU pod rather than n0's two 1-GPU
 * pods of the same priority (the engine's search, the most recently
 * bound first, took n0's). */
static void test_fewest_victims(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){2, 2, 1}, 3);
    uint32_t y = bound(e, 1, 2, 0, 0);
    bound(e, 0, 1, 0, 1);
    bound(e, 0, 1, 0, 2);
    uint32_t z = bound(e, 2, 1, 0, 0);
    gp_engine_pod_set_pdb_violating(e, z, true);
    uint32_t hi = pending(e, 2, 10, 3);
    assert_int_equal(evicted(e, 3, hi), 1ull << y);
    gp_engine_free(e);
}

/* The highest victim priority decides before the sum: n0's pods of
 * priority 1 and 1 (sum 2) rather than n1's 0 and 3 (highest 3). */
static void test_lowest_highest(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){2, 2}, 2);
    uint32_t a = bound(e, 0, 1, 1, 0), b = bound(e, 0, 1, 1, 0);
    uint32_t c = bound(e, 1, 1, 0, 1), d = bound(e, 1, 1, 3, 1);
    gp_engine_pod_set_pdb_violating(e, c, true); /* n1 then has one violation */
    gp_engine_pod_set_pdb_violating(e, a, true); /* and n0 one too */
    uint32_t hi = pending(e, 2, 10, 2);
    assert_int_equal(evicted(e, 2, hi), 1ull << a | 1ull << b);
    (void)d;
    gp_engine_free(e);
}

/* Like DryRunPreemption, the nodes are tried only until there are enough
 * candidates (10 % of them, at least 100) with one that breaks no budget:
 * of 120 one-GPU nodes whose pods all break one but n105's (priority 5)
 * and n110's (priority 1), the search stops at n105 (the 106th candidate)
 * and evicts there, not at n110 that it never tries. */
static void test_enough_candidates(void **state)
{
    (void)state;
    uint32_t gpus[120];
    for (int i = 0; i < 120; i++)
        gpus[i] = 1;
    struct gp_engine *e = cluster(gpus, 120);
    uint32_t at105 = 0;
    for (uint32_t i = 0; i < 120; i++) {
        uint32_t id = bound(e, i, 1, i == 105 ? 5 : i == 110 ? 1 : 0, 0);
        if (i == 105)
            at105 = id;
        if (i != 105 && i != 110)
            gp_engine_pod_set_pdb_violating(e, id, true);
    }
    uint32_t hi = pending(e, 1, 10, 1);
    struct gp_decision d[4];
    size_t n = gp_engine_schedule(e, 1, 0, d, 4);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, GP_DECISION_EVICT);
    assert_int_equal(d[0].pod, at105);
    assert_int_equal(d[1].pod, hi);
    gp_engine_free(e);
}

/* Budgets counted per budget over a node's victims (gp_engine_pdb_set,
 * gp_engine_pod_set_pdbs; filterPodsWithPDBViolation): n0's two pods of
 * priority 0 share a budget that allows one disruption, n1's two of
 * priority 1 have none. Each alone keeps the budget, but evicting both
 * breaks it once: n0 has one violation, n1 none, so n1's pods go
 * (judged alone, n0 would have won on its lower victim priority). */
static void test_budget_counted_per_node(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){2, 2}, 2);
    uint32_t a1 = bound(e, 0, 1, 0, 0), a2 = bound(e, 0, 1, 0, 0);
    uint32_t b1 = bound(e, 1, 1, 1, 0), b2 = bound(e, 1, 1, 1, 0);
    const uint32_t budget = 3;
    assert_int_equal(gp_engine_pdb_set(e, budget, 1), GP_OK);
    assert_int_equal(gp_engine_pod_set_pdbs(e, a1, &budget, 1), GP_OK);
    assert_int_equal(gp_engine_pod_set_pdbs(e, a2, &budget, 1), GP_OK);
    uint32_t hi = pending(e, 2, 10, 1);
    assert_int_equal(evicted(e, 1, hi), 1ull << b1 | 1ull << b2);
    assert_int_equal(gp_engine_pod(e, a1)->state, GP_POD_BOUND);
    gp_engine_free(e);
}

/* The same budget allowing two: neither node breaks it, and the lower
 * victim priority decides (n0's pods go). */
static void test_budget_allows_both(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){2, 2}, 2);
    uint32_t a1 = bound(e, 0, 1, 0, 0), a2 = bound(e, 0, 1, 0, 0);
    bound(e, 1, 1, 1, 0);
    bound(e, 1, 1, 1, 0);
    const uint32_t budget = 0;
    assert_int_equal(gp_engine_pdb_set(e, budget, 2), GP_OK);
    assert_int_equal(gp_engine_pod_set_pdbs(e, a1, &budget, 1), GP_OK);
    assert_int_equal(gp_engine_pod_set_pdbs(e, a2, &budget, 1), GP_OK);
    uint32_t hi = pending(e, 2, 10, 1);
    assert_int_equal(evicted(e, 1, hi), 1ull << a1 | 1ull << a2);
    gp_engine_free(e);
}

/* A host port held by a lower-priority pod is freed by preempting it, as
 * kube-scheduler's dry run removes the victims and runs every filter
 * again (NodePorts among them): the node has GPUs to spare, only
 * hostPort 8080 stands in the way. */
static void test_host_port_preempted(void **state)
{
    (void)state;
    struct gp_engine *e = cluster((const uint32_t[]){8}, 1);
    static const struct gp_host_port port = {NULL, 8080, 0};
    struct gp_pod_spec s = {0};
    s.name = "lo";
    s.cpu_milli = 1000;
    s.mem_mib = 4096;
    s.gpu_count = 1;
    s.gpu_milli = 1000;
    s.host_ports = &port;
    s.nhost_ports = 1;
    uint32_t lo, hi;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &lo), GP_OK);
    assert_int_equal(gp_engine_pod_assign(e, lo, 0, NULL), GP_OK);
    /* a CPU-only holder too */
    s.gpu_count = 0;
    s.gpu_milli = 0;
    static const struct gp_host_port port2 = {NULL, 9090, 0};
    s.host_ports = &port2;
    uint32_t lo2, hi2;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &lo2), GP_OK);
    assert_int_equal(gp_engine_pod_assign(e, lo2, 0, NULL), GP_OK);
    s.priority = 10;
    assert_int_equal(gp_engine_pod_add(e, &s, 1, &hi2), GP_OK);
    assert_int_equal(evicted(e, 1, hi2), 1ull << lo2);
    s.priority = 0;
    s.host_ports = &port;
    s.gpu_count = 1;
    s.gpu_milli = 1000;
    s.name = "hi";
    s.priority = 10;
    assert_int_equal(gp_engine_pod_add(e, &s, 1, &hi), GP_OK);
    assert_int_equal(evicted(e, 1, hi), 1ull << lo);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fewest_violations),  cmocka_unit_test(test_violating_reprieved),
        cmocka_unit_test(test_fewest_victims),     cmocka_unit_test(test_lowest_highest),
        cmocka_unit_test(test_enough_candidates),  cmocka_unit_test(test_budget_counted_per_node),
        cmocka_unit_test(test_budget_allows_both), cmocka_unit_test(test_host_port_preempted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
