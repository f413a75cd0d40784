/* test_index.c - the node index (src/engine/index.c) makes exactly the
 * decisions of the scan of every node: the same node, the same GPUs, the
 * same explanation of a pod that fits nowhere, under every policy (and
 * none, and two faulty ones: scores that are not numbers, picks that are
 * not valid), on seeded random clusters (exclusive, time-sliced and MIG
 * GPUs, labels, taints, nodes added, drained and removed) and seeded
 * random pods (more request shapes than the index keeps rankings for),
 * placed by cycles and one at a time while pods finish. The same runs
 * with the index off are the reference; the index must also save score
 * calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "engine/engine.h"
#include "engine/sharing.h"
#include "util/rng.h"

#define MAX_NODES 300
#define MAX_DEC   200000

static const struct gp_policy_ops *wrapped; /* the policy the test policies call */
static unsigned long score_calls;

static double counting_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                             const struct gp_pod *pod, struct gp_pick *pick)
{
    score_calls++;
    return wrapped->score(state, e, node, pod, pick);
}

/* Node-local but faulty: not a number on some node states. */
static double nan_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                        const struct gp_pod *pod, struct gp_pick *pick)
{
    score_calls++;
    double s = wrapped->score(state, e, node, pod, pick);
    return node->cpu_free_milli % 3000 == 0 ? NAN : s;
}

/* Node-local but faulty: a pick that is not valid on some node states
 * (the engine then takes its default one). */
static double bad_pick_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                             const struct gp_pod *pod, struct gp_pick *pick)
{
    score_calls++;
    double s = wrapped->score(state, e, node, pod, pick);
    if (node->gpus_whole_free % 2 == 1) {
        pick->ngpus = 1;
        pick->gpu[0] = (uint8_t)(node->spec.gpu_count + 1);
    }
    return s;
}

static const char *const models[] = {"A100-80GB", "H100-80GB", "L4"};
static const char *const only_a100[] = {"A100-80GB"};
static const char *const only_h100_l4[] = {"H100-80GB", "L4"};
static const struct gp_kv zone_a[] = {{"zone", "a"}}, zone_b[] = {{"zone", "b"}};
static const struct gp_taint spot_taint[] = {{"spot", "true", GP_EFFECT_NO_SCHEDULE}};
static const struct gp_toleration spot_tol[] = {
    {"spot", "true", false, false, GP_EFFECT_NO_SCHEDULE}};

static struct gp_sharing_spec ts_spec, mig_spec;

static void sharing_init(void)
{
    memset(&ts_spec, 0, sizeof ts_spec);
    ts_spec.mode = GP_SHARE_TIMESLICE;
    ts_spec.replicas = 4;
    memset(&mig_spec, 0, sizeof mig_spec);
    mig_spec.mode = GP_SHARE_MIG;
    mig_spec.replicas = 1;
    mig_spec.mig.model = gp_mig_model_find("A100-80GB");
    assert_non_null(mig_spec.mig.model);
    mig_spec.mig.dynamic = true;
}

static char node_names[MAX_NODES][16];

static struct gp_node_spec rand_node(struct gp_rng *r, uint32_t i)
{
    static const uint32_t gpus[] = {0, 1, 2, 4, 8, 8, 8, 16};
    struct gp_node_spec n;
    memset(&n, 0, sizeof n);
    snprintf(node_names[i], sizeof node_names[i], "n%u", i);
    n.name = node_names[i];
    n.gpu_count = gpus[gp_rng_below(r, 8)];
    n.gpu_model = n.gpu_count ? models[gp_rng_below(r, 3)] : NULL;
    n.gpu_mem_mib = 81920;
    n.cpu_milli = 16000 * (int64_t)(1 + gp_rng_below(r, 8));
    n.mem_mib = 65536 * (int64_t)(1 + gp_rng_below(r, 8));
    uint64_t l = gp_rng_below(r, 4);
    n.labels = l == 0 ? zone_a : l == 1 ? zone_b : NULL;
    n.nlabels = l < 2;
    if (gp_rng_below(r, 8) == 0) {
        n.taints = spot_taint;
        n.ntaints = 1;
    }
    if (n.gpu_count && gp_rng_below(r, 6) == 0)
        n.sharing = &ts_spec;
    else if (n.gpu_count && n.gpu_count <= 8 && gp_rng_below(r, 6) == 0) {
        n.gpu_model = "A100-80GB";
        n.sharing = &mig_spec;
    }
    return n;
}

static struct gp_pod_spec rand_pod(struct gp_rng *r)
{
    static const uint32_t counts[] = {0, 1, 1, 1, 2, 4, 8};
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.cpu_milli = 1000 * (int64_t)(1 + gp_rng_below(r, 24));
    s.mem_mib = 8192 * (int64_t)(1 + gp_rng_below(r, 16));
    s.gpu_count = counts[gp_rng_below(r, 7)];
    s.gpu_milli = s.gpu_count ? GP_GPU_MILLI : 0;
    uint64_t kind = gp_rng_below(r, 6);
    if (s.gpu_count && kind == 0) { /* a share of one GPU */
        s.gpu_count = 1;
        s.gpu_milli = 100 * (uint32_t)(1 + gp_rng_below(r, 9));
        s.gpu_mem_mib = gp_rng_below(r, 2) ? 10240 * (uint32_t)(1 + gp_rng_below(r, 4)) : 0;
    } else if (s.gpu_count && kind == 1) { /* MIG instances */
        s.gpu_count = 1 + (uint32_t)gp_rng_below(r, 2);
        s.gpu_milli = 142;
        s.gpu_mem_mib = 10240;
        s.mig_profile = gp_rng_below(r, 2) ? "1g.10gb" : "3g.40gb";
        s.share_modes = 1u << GP_SHARE_MIG;
    }
    uint64_t m = gp_rng_below(r, 5);
    if (m == 0) {
        s.gpu_models = only_a100;
        s.ngpu_models = 1;
    } else if (m == 1) {
        s.gpu_models = only_h100_l4;
        s.ngpu_models = 2;
    }
    if (gp_rng_below(r, 6) == 0) {
        s.node_selector = gp_rng_below(r, 2) ? zone_a : zone_b;
        s.nnode_selector = 1;
    }
    if (gp_rng_below(r, 4) == 0) {
        s.tolerations = spot_tol;
        s.ntolerations = 1;
    }
    return s;
}

static const char *running; /* the policy compared now, for messages */

static void assert_same(const struct gp_decision *a, const struct gp_decision *b, size_t k)
{
    if (a->kind != b->kind || a->pod != b->pod || a->node != b->node || a->gang != b->gang ||
        a->explain.nodes_total != b->explain.nodes_total ||
        memcmp(a->explain.rejected, b->explain.rejected, sizeof a->explain.rejected) != 0) {
        print_error("%s: decision %zu: kind %d/%d pod %u/%u node %u/%u\n", running, k, a->kind,
                    b->kind, a->pod, b->pod, a->node, b->node);
        fail();
    }
    if (a->kind != GP_DECISION_BIND)
        return;
    if (a->pick.mig_profile != b->pick.mig_profile)
        print_error("%s: decision %zu\n", running, k);
    assert_int_equal(a->pick.ngpus, b->pick.ngpus);
    assert_memory_equal(a->pick.gpu, b->pick.gpu, a->pick.ngpus);
    assert_memory_equal(a->pick.mig_start, b->pick.mig_start, a->pick.ngpus);
    assert_int_equal(a->pick.mig_profile, b->pick.mig_profile);
    assert_int_equal(a->pick.reconfigured, b->pick.reconfigured);
}

/* One seeded run, with the node index and the walk by shape on or off;
 * every decision is appended to out. Returns how many. */
static enum gp_order run_order; /* the order and backfill of the runs */
static bool run_backfill;

static size_t run(const struct gp_policy_ops *ops, bool index, bool walk, uint64_t seed,
                  struct gp_decision *out)
{
    struct gp_engine *e = gp_engine_new(ops, seed);
    assert_non_null(e);
    gp_engine_set_index(e, index, walk);
    assert_int_equal(gp_engine_set_order(e, run_order, run_backfill), GP_OK);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    uint32_t nnodes = 16 + (uint32_t)gp_rng_below(&r, 120);
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    /* request shapes: sometimes more than the index keeps rankings for */
    size_t nshapes = 4 + (size_t)gp_rng_below(&r, seed % 3 == 0 ? 90 : 24);
    struct gp_pod_spec shapes[96];
    for (size_t i = 0; i < nshapes; i++)
        shapes[i] = rand_pod(&r);
    gp_engine_set_target(e, shapes, NULL, nshapes < 6 ? nshapes : 6, 1.0);
    size_t nout = 0;
    static struct gp_decision d[4096];
    for (int step = 0; step < 60; step++) {
        double now = step;
        uint64_t adds = gp_rng_below(&r, 40);
        for (uint64_t k = 0; k < adds; k++) {
            /* a few shapes most of the time, so their rankings are used */
            size_t s = gp_rng_below(&r, 4) ? gp_rng_below(&r, nshapes < 5 ? nshapes : 5)
                                           : gp_rng_below(&r, nshapes);
            uint32_t id;
            struct gp_pod_spec ps = shapes[s];
            ps.duration_hint_s = (double)gp_rng_below(&r, 4) * 3; /* for SJF and backfill */
            assert_int_equal(gp_engine_pod_add(e, &ps, now, &id), GP_OK);
            if (run_order == GP_ORDER_FAIR && !run_backfill &&
                gp_rng_below(&r, 5) == 0) { /* placed at once, as the static mode does */
                assert_true(nout < MAX_DEC);
                assert_int_equal(gp_engine_schedule_pod(e, id, &out[nout++]), GP_OK);
            }
        }
        size_t n = gp_engine_schedule(e, now, 0, d, 4096);
        assert_true(nout + n <= MAX_DEC);
        memcpy(out + nout, d, n * sizeof d[0]);
        nout += n;
        size_t npods = gp_engine_pod_count(e);
        for (uint32_t id = 0; id < npods; id++) /* some leave */
            if (gp_engine_pod(e, id)->state != GP_POD_DONE && gp_rng_below(&r, 4) == 0)
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
        uint64_t ev = gp_rng_below(&r, 10);
        uint32_t node = (uint32_t)gp_rng_below(&r, gp_engine_node_count(e));
        if (ev == 0 && gp_engine_node_count(e) < MAX_NODES) { /* grows, past a power of 2 */
            uint64_t more = 1 + gp_rng_below(&r, 24);
            for (uint64_t k = 0; k < more && gp_engine_node_count(e) < MAX_NODES; k++) {
                struct gp_node_spec ns = rand_node(&r, (uint32_t)gp_engine_node_count(e));
                assert_int_equal(gp_engine_node_add(e, &ns, NULL), GP_OK);
            }
        } else if (ev == 1 && gp_engine_node(e, node)->state == GP_NODE_READY) {
            assert_int_equal(gp_engine_node_drain(e, node), GP_OK);
        } else if (ev == 2 && gp_engine_node(e, node)->state != GP_NODE_GONE &&
                   gp_engine_node(e, node)->pods == 0) {
            assert_int_equal(gp_engine_node_remove(e, node), GP_OK);
        } else if (ev == 3) { /* a new target: FGD's scores change everywhere */
            size_t from = gp_rng_below(&r, nshapes);
            gp_engine_set_target(e, shapes + from, NULL, nshapes - from, 1.0);
        }
    }
    gp_engine_free(e);
    return nout;
}

/* The decisions that tell what happened: binds and evictions, and each
 * pod's first decision (the walk by shape gives a waiting pod no new one
 * while its shape keeps failing). Returns how many are kept in d. */
static size_t firsts(struct gp_decision *d, size_t n)
{
    static unsigned char seen[MAX_DEC];
    memset(seen, 0, sizeof seen);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(d[i].pod < MAX_DEC);
        if (d[i].kind == GP_DECISION_UNSCHEDULABLE && seen[d[i].pod])
            continue;
        seen[d[i].pod] = 1;
        d[k++] = d[i];
    }
    return k;
}

/* Compares the seeded runs with the node index on and off (with the walk
 * by shape on and off: every decision), and with the walk on and off
 * (binds and first decisions). */
static void compare(const struct gp_policy_ops *ops, const char *what)
{
    static struct gp_decision with[MAX_DEC], without[MAX_DEC];
    unsigned long calls_with = 0, calls_without = 0;
    size_t binds = 0, fails = 0, dropped = 0;
    running = what;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        for (int walk = 0; walk < 2; walk++) {
            score_calls = 0;
            size_t n1 = run(ops, true, walk, seed, with);
            calls_with += score_calls;
            score_calls = 0;
            size_t n2 = run(ops, false, walk, seed, without);
            calls_without += score_calls;
            if (n1 != n2) {
                print_error("%s seed %llu walk %d: %zu decisions with the index, %zu without\n",
                            what, (unsigned long long)seed, walk, n1, n2);
                fail();
            }
            for (size_t k = 0; k < n1; k++) {
                assert_same(&with[k], &without[k], k);
                binds += with[k].kind == GP_DECISION_BIND;
                fails += with[k].kind == GP_DECISION_UNSCHEDULABLE;
            }
        }
        size_t n1 = run(ops, true, true, seed, with);
        size_t n2 = run(ops, true, false, seed, without);
        size_t k1 = firsts(with, n1), k2 = firsts(without, n2);
        dropped += n2 - n1;
        if (k1 != k2) {
            print_error("%s seed %llu: %zu binds and first decisions walking by shape, %zu "
                        "without\n",
                        what, (unsigned long long)seed, k1, k2);
            fail();
        }
        for (size_t k = 0; k < k1; k++)
            assert_same(&with[k], &without[k], k);
    }
    bool plain = run_order == GP_ORDER_FAIR && !run_backfill;
    assert_true(binds > (plain || run_backfill ? 1000u : 100u));
    assert_true(fails > 100);
    if (plain || run_backfill) /* the walks left out repeated decisions */
        assert_true(dropped > 100);
    if (plain && ops && ops->node_local && ops->score != nan_score) /* it saves most calls */
        assert_true(2 * calls_with < calls_without);
}

static void test_index_same_decisions(void **state)
{
    (void)state;
    sharing_init();
    for (size_t i = 0; gp_policies[i]; i++) {
        struct gp_policy_ops ops = *gp_policies[i];
        wrapped = gp_policies[i];
        ops.score = counting_score;
        compare(&ops, ops.name);
    }
    compare(NULL, "no policy");
}

static void test_index_faulty_policies(void **state)
{
    (void)state;
    sharing_init();
    struct gp_policy_ops ops = *gp_policy_find("best-fit");
    wrapped = gp_policy_find("best-fit");
    ops.score = nan_score;
    compare(&ops, "nan scores");
    ops.score = bad_pick_score;
    compare(&ops, "bad picks");
    wrapped = gp_policy_find("spread");
    ops = *wrapped;
    ops.score = bad_pick_score;
    compare(&ops, "bad picks (spread)");
}

/* The queue orders, with and without backfill: the index and the walks
 * that skip what cannot change (a FIFO walk picked up where it ended, a
 * failed shape's pods answered alike, a held shape held again) change no
 * bind and no first decision. */
static void test_index_orders(void **state)
{
    (void)state;
    sharing_init();
    static const enum gp_order orders[] = {GP_ORDER_FIFO, GP_ORDER_SJF, GP_ORDER_FAIR};
    const char *names[] = {"best-fit", "fgd", "random"};
    for (size_t o = 0; o < 3; o++)
        for (int bf = 0; bf < 2; bf++) {
            if (orders[o] == GP_ORDER_FAIR && !bf)
                continue; /* the tests above */
            run_order = orders[o];
            run_backfill = bf;
            for (size_t i = 0; i < 3; i++) {
                wrapped = gp_policy_find(names[i]);
                struct gp_policy_ops ops = *wrapped;
                ops.score = counting_score;
                compare(&ops, names[i]);
            }
        }
    run_order = GP_ORDER_FAIR;
    run_backfill = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_same_decisions),
        cmocka_unit_test(test_index_faulty_policies),
        cmocka_unit_test(test_index_orders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
