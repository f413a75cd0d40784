/* test_walk_shape.c - FIFO and SJF with backfill walk the pending pods by
 * request shape once the head's reservation is made (src/engine/order.c):
 * a shape that failed at this generation has only its fresh pods visited,
 * the pods it passes over are not touched (what the walk along the line
 * would write into them is written before anything reads it), and a pod
 * held back as its shape's last one was is held again without a placement
 * (and the shape's next pods so held are not visited: its stream parks).
 * A property test against the walk along the whole line (the same engine
 * with the walk by shape off): on seeded random clusters and workloads -
 * queues, gangs, duration hints (some none), cycles whose output fills up
 * (the walk stops mid-line), cycles with a budget, pods finishing and
 * leaving the queue (and forgotten: their records go), nodes added,
 * drained and removed (a shape may become hopeless within a generation) -
 * every decision is the same, in the same order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "util/rng.h"

#define MAX_DEC 400000

static const char *const models[] = {"A100-80GB", "H100-80GB"};
static const char *const only_h100[] = {"H100-80GB"};
static const struct gp_taint spot_taint[] = {{"spot", "true", GP_EFFECT_NO_SCHEDULE}};
static const struct gp_toleration spot_tol[] = {
    {"spot", "true", false, false, GP_EFFECT_NO_SCHEDULE}};
static char node_names[256][16];

static struct gp_node_spec rand_node(struct gp_rng *r, uint32_t i)
{
    struct gp_node_spec n;
    memset(&n, 0, sizeof n);
    snprintf(node_names[i % 256], sizeof node_names[0], "n%u", i);
    n.name = node_names[i % 256];
    n.gpu_count = gp_rng_below(r, 4) ? 8 : 4;
    n.gpu_model = models[gp_rng_below(r, 4) == 0]; /* few H100 nodes: they run out */
    n.gpu_mem_mib = 81920;
    n.cpu_milli = 32000 * (int64_t)(1 + gp_rng_below(r, 2));
    n.mem_mib = 262144;
    if (gp_rng_below(r, 6) == 0) {
        n.taints = spot_taint;
        n.ntaints = 1;
    }
    return n;
}

/* Request shapes: pods made from one template share its arrays. */
static struct gp_pod_spec shape_spec(size_t k)
{
    static const uint32_t gpus[] = {1, 2, 4, 8, 8, 1, 2, 8};
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.gpu_count = gpus[k % 8];
    s.gpu_milli = GP_GPU_MILLI;
    s.cpu_milli = 2000 * (int64_t)(1 + k % 3);
    s.mem_mib = 16384;
    if (k % 8 == 4 || k % 8 == 6) { /* H100 only: hopeless once they are drained */
        s.gpu_models = only_h100;
        s.ngpu_models = 1;
    }
    if (k % 5 == 1) {
        s.tolerations = spot_tol;
        s.ntolerations = 1;
    }
    return s;
}

static void assert_same(const struct gp_decision *a, const struct gp_decision *b, size_t k)
{
    if (a->kind != b->kind || a->pod != b->pod || a->node != b->node || a->gang != b->gang ||
        a->explain.nodes_total != b->explain.nodes_total ||
        memcmp(a->explain.rejected, b->explain.rejected, sizeof a->explain.rejected) != 0) {
        print_error("decision %zu: kind %d/%d pod %u/%u node %u/%u\n", k, a->kind, b->kind, a->pod,
                    b->pod, a->node, b->node);
        fail();
    }
    if (a->kind == GP_DECISION_BIND) {
        assert_int_equal(a->pick.ngpus, b->pick.ngpus);
        assert_memory_equal(a->pick.gpu, b->pick.gpu, a->pick.ngpus);
    }
}

static bool passed_over; /* some run passed pods over (the walk by shape ran) */
static bool parked;      /* some run held pods again in a parked run (order.c) */

/* One seeded run; every decision appended to out. Returns how many. */
static size_t run(enum gp_order order, bool by_shape, uint64_t seed, struct gp_decision *out)
{
    struct gp_engine *e = gp_engine_new(NULL, seed);
    assert_non_null(e);
    e->no_by_shape = !by_shape;
    assert_int_equal(gp_engine_set_order(e, order, true), GP_OK);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    uint32_t queues[3] = {0, 0, 0};
    for (int q = 1; q < 3; q++) {
        struct gp_queue_spec qs;
        memset(&qs, 0, sizeof qs);
        qs.name = q == 1 ? "a" : "b";
        qs.weight = q;
        qs.no_preempt_within = true; /* no preemption: the walk by shape may run */
        assert_int_equal(gp_engine_queue_set(e, &qs, &queues[q]), GP_OK);
    }
    uint32_t nnodes = 6 + (uint32_t)gp_rng_below(&r, 14), nmade = nnodes;
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    static struct gp_pod_spec shapes[8];
    for (size_t k = 0; k < 8; k++)
        shapes[k] = shape_spec(k);
    static const double hints[] = {0, 4, 9, 25, 60, 140};
    size_t nout = 0;
    static struct gp_decision d[4096];
    for (int step = 0; step < 90; step++) {
        double now = 3.0 * step;
        uint64_t adds = gp_rng_below(&r, step < 20 ? 30 : 12);
        for (uint64_t k = 0; k < adds; k++) {
            struct gp_pod_spec ps = shapes[gp_rng_below(&r, 8)];
            ps.queue = queues[gp_rng_below(&r, 3)];
            ps.duration_hint_s = hints[gp_rng_below(&r, 6)];
            if (gp_rng_below(&r, 12) == 0) { /* a gang of whole nodes */
                struct gp_group_spec gs = {"g", 2 + (uint32_t)gp_rng_below(&r, 2), NULL, false};
                uint32_t gid;
                assert_int_equal(gp_engine_group_add(e, &gs, &gid), GP_OK);
                ps = shapes[3];
                ps.queue = queues[gp_rng_below(&r, 3)];
                ps.duration_hint_s = hints[1 + gp_rng_below(&r, 5)];
                ps.group = gid;
                for (uint32_t m = 0; m < gs.min_member; m++)
                    assert_int_equal(gp_engine_pod_add(e, &ps, now, NULL), GP_OK);
                continue;
            }
            assert_int_equal(gp_engine_pod_add(e, &ps, now, NULL), GP_OK);
        }
        /* a few cycles between events: binds within one generation */
        for (int c = 0; c < 1 + (int)gp_rng_below(&r, 3); c++) {
            uint64_t kind = gp_rng_below(&r, 8);
            size_t cap = kind == 0 ? 1 + gp_rng_below(&r, 6) : 4096; /* out fills up */
            size_t budget = kind == 1 ? 1 + gp_rng_below(&r, 8) : 0;
            size_t n = gp_engine_schedule(e, now, budget, d, cap);
            assert_true(nout + n <= MAX_DEC);
            memcpy(out + nout, d, n * sizeof d[0]);
            nout += n;
            passed_over |= e->lazy_gen != UINT64_MAX;
            parked |= e->park_held > 0;
        }
        size_t npods = gp_engine_pod_count(e);
        for (uint32_t id = 0; id < npods; id++) { /* some end, bound or pending */
            const struct gp_pod *p = gp_engine_pod(e, id);
            if (!p || p->state == GP_POD_DONE)
                continue;
            uint64_t odds = p->state == GP_POD_BOUND ? (step % 4 == 0 ? 50 : 4) : 12;
            if (gp_rng_below(&r, odds) == 0) {
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
                if (gp_rng_below(&r, 8)) /* the driver is done with it: its record goes */
                    assert_int_equal(gp_engine_pod_forget(e, id), GP_OK);
            }
        }
        uint64_t ev = gp_rng_below(&r, 12);
        uint32_t node = (uint32_t)gp_rng_below(&r, gp_engine_node_count(e));
        const struct gp_node *n = gp_engine_node(e, node);
        if (ev == 0 && nmade < 250) {
            struct gp_node_spec ns = rand_node(&r, nmade++);
            assert_int_equal(gp_engine_node_add(e, &ns, NULL), GP_OK);
        } else if (ev <= 2 && n->state == GP_NODE_READY) { /* H100 nodes most of all */
            if (n->model == 1 || ev == 1)
                assert_int_equal(gp_engine_node_drain(e, node), GP_OK);
        } else if (ev == 3 && n->state != GP_NODE_GONE && n->pods == 0) {
            assert_int_equal(gp_engine_node_remove(e, node), GP_OK);
        }
    }
    gp_engine_free(e);
    return nout;
}

static void compare(enum gp_order order, uint64_t seed)
{
    static struct gp_decision a[MAX_DEC], b[MAX_DEC];
    size_t na = run(order, false, seed, a), nb = run(order, true, seed, b);
    if (na != nb)
        print_error("order %d seed %llu: %zu decisions along the line, %zu by shape\n", order,
                    (unsigned long long)seed, na, nb);
    for (size_t k = 0; k < na && k < nb; k++)
        assert_same(&a[k], &b[k], k);
    assert_int_equal(na, nb);
}

static void test_fifo_backfill(void **state)
{
    (void)state;
    passed_over = parked = false;
    for (uint64_t seed = 1; seed <= 40; seed++)
        compare(GP_ORDER_FIFO, seed);
    assert_true(passed_over);
    assert_true(parked);
}

static void test_sjf_backfill(void **state)
{
    (void)state;
    passed_over = parked = false;
    for (uint64_t seed = 101; seed <= 130; seed++)
        compare(GP_ORDER_SJF, seed);
    assert_true(passed_over);
    assert_true(parked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_backfill),
        cmocka_unit_test(test_sjf_backfill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
