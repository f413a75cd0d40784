/* test_held_gang.c - backfill's memories (src/engine/gang.c, index.c): a
 * gang held back by the head's reservation is remembered (without a
 * topology key in its member shape, with how many members its attempt
 * placed: a gang of that shape needing more is held back alike; with one,
 * struct held_gang: a gang of one member shape, as many members pending
 * and needed, the same topology) without an attempt while the state and
 * the reservation are those of the first (test_held_sizes: gangs of three
 * sizes at one state); a gang's members are placed from the node index; a
 * gang attempt taken back gives the state its name back, so what was
 * remembered of it (shapes held back, the reservation) holds again;
 * whether a gang never fits is kept while the nodes stay; and under the
 * reservation a pod alone is placed from the node index (its candidates
 * best first until one would not delay the head). A property test against
 * the same engine without any of them (e->no_held_gang, no_resv_index,
 * no_gang_index):
 * on seeded random clusters of whole-GPU
 * nodes and workloads of many gangs alike beside pods alone - FIFO, SJF and
 * fair share with backfill, duration hints (some none), cycles whose output
 * fills up, cycles with a budget, pods finishing and forgotten, nodes
 * added, drained and removed, no policy and best-fit - every decision is
 * the same, in the same order, and gangs were held back from memory. */
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
    n.gpu_count = gp_rng_below(r, 5) ? 8 : 4;
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

/* over the runs with them: gangs held back from memory, placements under a
 * reservation from the node index */
static uint64_t hits, index_hits;

/* gangs of 2 to 1 + gang_sizes members needed (test_sizes: up to 6, so
 * that gangs of one member shape needing more, as many and fewer members
 * than a held attempt placed meet at one state) */
static uint32_t gang_sizes = 2;

/* One seeded run; every decision appended to out. Returns how many. */
static size_t run(enum gp_order order, const struct gp_policy_ops *policy, bool memo, uint64_t seed,
                  struct gp_decision *out)
{
    struct gp_engine *e = gp_engine_new(policy, seed);
    assert_non_null(e);
    e->no_held_gang = e->no_resv_index = e->no_gang_index = !memo;
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
    uint32_t nnodes = 4 + (uint32_t)gp_rng_below(&r, 10), nmade = nnodes;
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    static const uint32_t gpus[] = {1, 2, 4, 8};
    static const double hints[] = {0, 4, 9, 25, 60, 140};
    size_t nout = 0;
    static struct gp_decision d[4096];
    for (int step = 0; step < 80; step++) {
        double now = 3.0 * step;
        uint64_t adds = gp_rng_below(&r, step < 20 ? 16 : 7);
        for (uint64_t k = 0; k < adds; k++) {
            struct gp_pod_spec ps;
            memset(&ps, 0, sizeof ps);
            ps.name = "p";
            ps.gpu_milli = GP_GPU_MILLI;
            ps.mem_mib = 16384;
            ps.queue = queues[gp_rng_below(&r, 3)];
            ps.duration_hint_s = hints[gp_rng_below(&r, 6)];
            if (gp_rng_below(&r, 3) == 0) { /* a gang of whole nodes: many alike */
                struct gp_group_spec gs = {"g", 2 + (uint32_t)gp_rng_below(&r, gang_sizes), NULL,
                                           false};
                uint32_t gid;
                assert_int_equal(gp_engine_group_add(e, &gs, &gid), GP_OK);
                ps.gpu_count = 8;
                ps.cpu_milli = 16000;
                ps.group = gid;
                ps.duration_hint_s = hints[1 + gp_rng_below(&r, 5)];
                uint32_t members = gs.min_member + (gp_rng_below(&r, 6) == 0);
                for (uint32_t m = 0; m < members; m++)
                    assert_int_equal(gp_engine_pod_add(e, &ps, now, NULL), GP_OK);
                continue;
            }
            ps.gpu_count = gpus[gp_rng_below(&r, 4)];
            ps.cpu_milli = 2000 * (int64_t)ps.gpu_count;
            assert_int_equal(gp_engine_pod_add(e, &ps, now, NULL), GP_OK);
        }
        for (int c = 0; c < 1 + (int)gp_rng_below(&r, 3); c++) {
            uint64_t kind = gp_rng_below(&r, 10);
            size_t cap = kind == 0 ? 1 + gp_rng_below(&r, 8) : 4096; /* out fills up */
            size_t budget = kind == 1 ? 1 + gp_rng_below(&r, 8) : 0;
            size_t n = gp_engine_schedule(e, now, budget, d, cap);
            assert_true(nout + n <= MAX_DEC);
            memcpy(out + nout, d, n * sizeof d[0]);
            nout += n;
        }
        size_t npods = gp_engine_pod_count(e);
        for (uint32_t id = 0; id < npods; id++) { /* some end, bound or pending */
            const struct gp_pod *p = gp_engine_pod(e, id);
            if (!p || p->state == GP_POD_DONE)
                continue;
            uint64_t odds = p->state == GP_POD_BOUND ? (step % 4 == 0 ? 30 : 5) : 40;
            if (gp_rng_below(&r, odds) == 0) {
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
                if (gp_rng_below(&r, 8))
                    assert_int_equal(gp_engine_pod_forget(e, id), GP_OK);
            }
        }
        uint64_t ev = gp_rng_below(&r, 16);
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
    if (memo) {
        hits += e->held_gang_hits;
        index_hits += e->resv_index_hits;
    }
    gp_engine_free(e);
    return nout;
}

static void compare(enum gp_order order, const struct gp_policy_ops *policy, uint64_t seed)
{
    static struct gp_decision a[MAX_DEC], b[MAX_DEC];
    size_t na = run(order, policy, false, seed, a), nb = run(order, policy, true, seed, b);
    if (na != nb)
        print_error("order %d seed %llu: %zu decisions without the memory, %zu with it\n", order,
                    (unsigned long long)seed, na, nb);
    for (size_t k = 0; k < na && k < nb; k++)
        assert_same(&a[k], &b[k], k);
    assert_int_equal(na, nb);
}

static void test_fifo(void **state)
{
    (void)state;
    hits = index_hits = 0;
    for (uint64_t seed = 1; seed <= 30; seed++)
        compare(GP_ORDER_FIFO, seed % 2 ? NULL : &gp_policy_best_fit, seed);
    assert_true(hits > 0);
    assert_true(index_hits > 0);
}

static void test_sjf(void **state)
{
    (void)state;
    hits = index_hits = 0;
    for (uint64_t seed = 101; seed <= 120; seed++)
        compare(GP_ORDER_SJF, seed % 2 ? NULL : &gp_policy_best_fit, seed);
    assert_true(hits > 0);
    assert_true(index_hits > 0);
}

static void test_fair(void **state)
{
    (void)state;
    hits = index_hits = 0;
    for (uint64_t seed = 201; seed <= 220; seed++)
        compare(GP_ORDER_FAIR, seed % 2 ? NULL : &gp_policy_best_fit, seed);
    assert_true(hits > 0);
    assert_true(index_hits > 0);
}

/* Gangs of many sizes alike (one member shape per queue): a gang that
 * needs more members than a held attempt of its shape placed at this
 * state is held back from the shape's memory; one that needs as many or
 * fewer is tried (it fits). */
static void test_sizes(void **state)
{
    (void)state;
    hits = index_hits = 0;
    gang_sizes = 5;
    for (uint64_t seed = 301; seed <= 340; seed++)
        compare(seed % 3 == 0 ? GP_ORDER_SJF : GP_ORDER_FIFO, seed % 2 ? NULL : &gp_policy_best_fit,
                seed);
    gang_sizes = 2;
    assert_true(hits > 0);
}

/* A pod alone (gang 0) or the `members` members of a new gang needing
 * them all, of `gpus` whole GPUs each, added at now; the first id. */
static uint32_t add(struct gp_engine *e, uint32_t members, uint32_t gpus, double hint, double now)
{
    struct gp_pod_spec ps;
    memset(&ps, 0, sizeof ps);
    ps.name = "p";
    ps.gpu_count = gpus;
    ps.gpu_milli = GP_GPU_MILLI;
    ps.cpu_milli = 1000;
    ps.mem_mib = 1024;
    ps.duration_hint_s = hint;
    if (members > 0) {
        struct gp_group_spec gs = {"g", members, NULL, false};
        assert_int_equal(gp_engine_group_add(e, &gs, &ps.group), GP_OK);
    }
    uint32_t first = 0, id;
    for (uint32_t m = 0; m < (members ? members : 1); m++) {
        assert_int_equal(gp_engine_pod_add(e, &ps, now, &id), GP_OK);
        if (m == 0)
            first = id;
    }
    return first;
}

/* Six 8-GPU nodes: four full until 10, 10, 50 and 50, one half full until
 * 1000, one free. The head, a gang of four whole nodes, reserves them at
 * 50 with no spare. Gang B (two 4-GPU members) places one on the half
 * node (no loss to the head) and is held back at its second: its attempt
 * placed one. Gang D (three alike) needs more: held back from B's memory
 * without an attempt. Gang C (one alike) needs no more than B placed: it
 * is tried, and fits. Decisions as without the memory. */
static void scenario(bool memo, struct gp_decision *out, size_t *nout, uint64_t *nhits,
                     uint32_t *c_state)
{
    struct gp_engine *e = gp_engine_new(NULL, 1);
    assert_non_null(e);
    e->no_held_gang = e->no_resv_index = !memo;
    assert_int_equal(gp_engine_set_order(e, GP_ORDER_FIFO, true), GP_OK);
    for (uint32_t i = 0; i < 6; i++) {
        struct gp_node_spec n;
        memset(&n, 0, sizeof n);
        snprintf(node_names[i], sizeof node_names[0], "n%u", i);
        n.name = node_names[i];
        n.gpu_count = 8;
        n.gpu_model = "A100-80GB";
        n.gpu_mem_mib = 81920;
        n.cpu_milli = 64000;
        n.mem_mib = 524288;
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    static const double ends[] = {10, 10, 50, 50};
    for (int i = 0; i < 4; i++)
        add(e, 0, 8, ends[i], 0);
    add(e, 0, 4, 1000, 0);
    static struct gp_decision d[64];
    size_t n = gp_engine_schedule(e, 0, 0, d, 64);
    assert_int_equal(n, 5);            /* all bound, n5 free */
    add(e, 4, 8, 100, 1);              /* the head */
    add(e, 2, 4, 500, 1);              /* B */
    add(e, 3, 4, 500, 1);              /* D */
    uint32_t c = add(e, 1, 4, 500, 1); /* C */
    n = gp_engine_schedule(e, 1, 0, d, 64);
    memcpy(out, d, n * sizeof d[0]);
    *nout = n;
    *nhits = e->held_gang_hits;
    *c_state = gp_engine_pod(e, c)->state;
    gp_engine_free(e);
}

static void test_held_sizes(void **state)
{
    (void)state;
    struct gp_decision a[64], b[64];
    size_t na, nb;
    uint64_t ha, hb;
    uint32_t ca, cb;
    scenario(false, a, &na, &ha, &ca);
    scenario(true, b, &nb, &hb, &cb);
    assert_int_equal(na, nb);
    for (size_t k = 0; k < na; k++)
        assert_same(&a[k], &b[k], k);
    assert_int_equal(ca, GP_POD_BOUND); /* C fits beside the head's reservation */
    assert_int_equal(cb, GP_POD_BOUND);
    assert_int_equal(ha, 0);
    assert_int_equal(hb, 1); /* D, from B's attempt */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo),       cmocka_unit_test(test_sjf),
        cmocka_unit_test(test_fair),       cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_held_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
