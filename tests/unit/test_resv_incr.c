/* test_resv_incr.c - backfill's incremental reservation (src/engine/order.c,
 * "the incremental reservation"): the head's projection is made with what
 * each node remembers of the last computations (its slots, the releases
 * an earlier walk made on it and the slots after each), used only while
 * the node and the head's key are unchanged and the walk releases the
 * same pods in the same order there. Two checks on seeded random clusters
 * and workloads - FIFO, SJF and fair share with backfill; gangs beside
 * pods alone, whole GPUs and fractions; duration hints that are right,
 * wrong (pods ending before or long after their hint, so ends become
 * overdue and change order) or absent; cycles whose output fills up or
 * with a budget; nodes added, drained and removed; no policy and
 * best-fit:
 *   - every decision is the same, in the same order, as the same engine's
 *     with the memory off (e->no_resv_incr), and the memory was used
 *     (e->resv_incr_hits);
 *   - every computation equals one from scratch (e->resv_check: the
 *     shadow time, the spare, each node's projection and slots; the
 *     sorted array of the bound pods' ends is the heap's order);
 *   - the ends read in order from the sorted array, from the heap (the
 *     array kept at most 3 long, so that it goes off and is made anew) or
 *     listed and sorted every time (e->ends_oom) give the same decisions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/policy.h"
#include "util/rng.h"

#define MAX_DEC 200000

static char node_names[256][16];

static struct gp_node_spec rand_node(struct gp_rng *r, uint32_t i)
{
    struct gp_node_spec n;
    memset(&n, 0, sizeof n);
    snprintf(node_names[i % 256], sizeof node_names[0], "n%u", i);
    n.name = node_names[i % 256];
    n.gpu_count = gp_rng_below(r, 4) ? 8 : 4;
    n.gpu_model = "A100-80GB";
    n.gpu_mem_mib = 81920;
    n.cpu_milli = 64000;
    n.mem_mib = 524288;
    return n;
}

static void assert_same(const struct gp_decision *a, const struct gp_decision *b, size_t k)
{
    if (a->kind != b->kind || a->pod != b->pod || a->node != b->node || a->gang != b->gang ||
        a->explain.nodes_total != b->explain.nodes_total ||
        memcmp(a->explain.rejected, b->explain.rejected, sizeof a->explain.rejected) != 0) {
        print_error("decision %zu: kind %d/%d pod %u/%u node %u/%u gang %d/%d\n", k, a->kind,
                    b->kind, a->pod, b->pod, a->node, b->node, a->gang, b->gang);
        fail();
    }
    if (a->kind == GP_DECISION_BIND) {
        assert_int_equal(a->pick.ngpus, b->pick.ngpus);
        assert_memory_equal(a->pick.gpu, b->pick.gpu, a->pick.ngpus);
    }
}

/* over the runs with the memory: its hits and the computations that
 * differed from one from scratch */
static uint64_t hits, mismatches;

/* how the projection reads the bound pods' ends: 0 as the engine does
 * (from the sorted array), 1 listed and sorted every time (e->ends_oom),
 * 2 the sorted array at most 3 long (so it goes off and is made anew from
 * the heap again and again) */
static int ends_mode;

/* One seeded run; every decision appended to out. Returns how many.
 * `memory`: the incremental reservation on; `check`: each computation
 * compared with one from scratch (which remakes every node's memory). */
static size_t run(enum gp_order order, const struct gp_policy_ops *policy, bool memory, bool check,
                  uint64_t seed, struct gp_decision *out)
{
    struct gp_engine *e = gp_engine_new(policy, seed);
    assert_non_null(e);
    e->no_resv_incr = !memory;
    e->resv_check = check;
    e->ends_oom = ends_mode == 1;
    if (ends_mode == 2)
        e->ends_sorted_max = 3;
    assert_int_equal(gp_engine_set_order(e, order, true), GP_OK);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    uint32_t queues[3] = {0, 0, 0};
    for (int q = 1; q < 3; q++) {
        struct gp_queue_spec qs;
        memset(&qs, 0, sizeof qs);
        qs.name = q == 1 ? "a" : "b";
        qs.weight = q;
        qs.no_preempt_within = true;
        assert_int_equal(gp_engine_queue_set(e, &qs, &queues[q]), GP_OK);
    }
    uint32_t nnodes = 3 + (uint32_t)gp_rng_below(&r, 10), nmade = nnodes;
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    static const uint32_t gpus[] = {1, 2, 4, 8};
    static const uint32_t milli[] = {GP_GPU_MILLI, GP_GPU_MILLI, GP_GPU_MILLI, 500, 250};
    static const double hints[] = {0, 3, 6, 9, 25, 60, 140};
    size_t nout = 0;
    static struct gp_decision d[4096];
    for (int step = 0; step < 90; step++) {
        double now = 3.0 * step;
        uint64_t adds = gp_rng_below(&r, step < 20 ? 14 : 6);
        for (uint64_t k = 0; k < adds; k++) {
            struct gp_pod_spec ps;
            memset(&ps, 0, sizeof ps);
            ps.name = "p";
            ps.gpu_milli = GP_GPU_MILLI;
            ps.mem_mib = 16384;
            ps.queue = queues[gp_rng_below(&r, 3)];
            ps.duration_hint_s = hints[gp_rng_below(&r, 7)];
            if (gp_rng_below(&r, 3) == 0) { /* a gang of whole nodes */
                struct gp_group_spec gs = {"g", 2 + (uint32_t)gp_rng_below(&r, 3), NULL, false};
                uint32_t gid;
                assert_int_equal(gp_engine_group_add(e, &gs, &gid), GP_OK);
                ps.gpu_count = gp_rng_below(&r, 3) ? 8 : 4;
                ps.cpu_milli = 16000;
                ps.group = gid;
                ps.duration_hint_s = hints[1 + gp_rng_below(&r, 6)];
                for (uint32_t m = 0; m < gs.min_member; m++)
                    assert_int_equal(gp_engine_pod_add(e, &ps, now, NULL), GP_OK);
                continue;
            }
            ps.gpu_milli = milli[gp_rng_below(&r, 5)];
            ps.gpu_count = ps.gpu_milli == GP_GPU_MILLI ? gpus[gp_rng_below(&r, 4)] : 1;
            ps.cpu_milli = 2000 * (int64_t)ps.gpu_count;
            assert_int_equal(gp_engine_pod_add(e, &ps, now, NULL), GP_OK);
        }
        for (int c = 0; c < 1 + (int)gp_rng_below(&r, 3); c++) {
            uint64_t kind = gp_rng_below(&r, 12);
            size_t cap = kind == 0 ? 1 + gp_rng_below(&r, 8) : 4096; /* out fills up */
            size_t budget = kind == 1 ? 1 + gp_rng_below(&r, 8) : 0;
            size_t n = gp_engine_schedule(e, now, budget, d, cap);
            assert_true(nout + n <= MAX_DEC);
            memcpy(out + nout, d, n * sizeof d[0]);
            nout += n;
        }
        /* pods end at their hint, before it or long after it (overdue) */
        size_t npods = gp_engine_pod_count(e);
        for (uint32_t id = 0; id < npods; id++) {
            const struct gp_pod *p = gp_engine_pod(e, id);
            if (!p || p->state == GP_POD_DONE)
                continue;
            bool end;
            if (p->state == GP_POD_BOUND) {
                double due = gp_engine_pod_bound_at(e, id) + p->spec.duration_hint_s;
                uint64_t odds = p->spec.duration_hint_s > 0 && now >= due ? 2 : 9;
                end = gp_rng_below(&r, odds) == 0;
            } else {
                end = gp_rng_below(&r, 50) == 0;
            }
            if (end) {
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
                if (gp_rng_below(&r, 8))
                    assert_int_equal(gp_engine_pod_forget(e, id), GP_OK);
            }
        }
        uint64_t ev = gp_rng_below(&r, 18);
        uint32_t node = (uint32_t)gp_rng_below(&r, gp_engine_node_count(e));
        const struct gp_node *n = gp_engine_node(e, node);
        if (ev == 0 && nmade < 200) {
            struct gp_node_spec ns = rand_node(&r, nmade++);
            assert_int_equal(gp_engine_node_add(e, &ns, NULL), GP_OK);
        } else if (ev == 1 && n->state == GP_NODE_READY) {
            assert_int_equal(gp_engine_node_drain(e, node), GP_OK);
        } else if (ev == 2 && n->state != GP_NODE_GONE && n->pods == 0) {
            assert_int_equal(gp_engine_node_remove(e, node), GP_OK);
        }
    }
    if (memory) {
        hits += e->resv_incr_hits;
        mismatches += e->resv_mismatches;
    }
    gp_engine_free(e);
    return nout;
}

static void same_runs(const struct gp_decision *a, size_t na, const struct gp_decision *b,
                      size_t nb, enum gp_order order, uint64_t seed)
{
    if (na != nb)
        print_error("order %d seed %llu: %zu decisions from scratch, %zu incremental\n", order,
                    (unsigned long long)seed, na, nb);
    for (size_t k = 0; k < na && k < nb; k++)
        assert_same(&a[k], &b[k], k);
    assert_int_equal(na, nb);
}

/* From scratch, incremental, incremental with every computation checked. */
static void compare(enum gp_order order, const struct gp_policy_ops *policy, uint64_t seed)
{
    static struct gp_decision a[MAX_DEC], b[MAX_DEC];
    size_t na = run(order, policy, false, false, seed, a);
    size_t nb = run(order, policy, true, false, seed, b);
    same_runs(a, na, b, nb, order, seed);
    nb = run(order, policy, true, true, seed, b);
    same_runs(a, na, b, nb, order, seed);
    /* the ends read from the array, from the heap or listed: the same */
    ends_mode = 1;
    na = run(order, policy, true, false, seed, a);
    same_runs(a, na, b, nb, order, seed);
    ends_mode = 2;
    na = run(order, policy, true, true, seed, a);
    ends_mode = 0;
    same_runs(a, na, b, nb, order, seed);
}

static void check_order(enum gp_order order, uint64_t first)
{
    hits = mismatches = 0;
    for (uint64_t seed = first; seed < first + 25; seed++)
        compare(order, seed % 2 ? NULL : &gp_policy_best_fit, seed);
    if (mismatches)
        print_error("%llu computations differ from one from scratch\n",
                    (unsigned long long)mismatches);
    assert_int_equal(mismatches, 0);
    assert_true(hits > 0);
}

static void test_fifo(void **state)
{
    (void)state;
    check_order(GP_ORDER_FIFO, 1);
}

static void test_sjf(void **state)
{
    (void)state;
    check_order(GP_ORDER_SJF, 101);
}

static void test_fair(void **state)
{
    (void)state;
    check_order(GP_ORDER_FAIR, 201);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_sjf),
        cmocka_unit_test(test_fair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
