/* test_policy.c - the built-in placement policies: the registry, and for
 * each policy small clusters where the right node (and GPU) is worked out
 * by hand in the comments; random's uniformity and determinism; and a
 * seeded property loop that every policy only ever places a pod where it
 * fits, on GPUs that can hold it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "util/rng.h"

/* ---- helpers ---- */

static struct gp_engine *engine_for(const char *policy, uint64_t seed)
{
    const struct gp_policy_ops *ops = gp_policy_find(policy);
    assert_non_null(ops);
    struct gp_engine *e = gp_engine_new(ops, seed);
    assert_non_null(e);
    return e;
}

static uint32_t node(struct gp_engine *e, int64_t cores, uint32_t gpus)
{
    struct gp_node_spec s;
    memset(&s, 0, sizeof s);
    s.name = "n";
    s.gpu_model = gpus ? "G" : NULL;
    s.cpu_milli = cores * 1000;
    s.mem_mib = (int64_t)1 << 30;
    s.gpu_count = gpus;
    s.gpu_mem_mib = gpus ? 16384 : 0;
    uint32_t id;
    assert_int_equal(gp_engine_node_add(e, &s, &id), GP_OK);
    return id;
}

/* Adds a pod and runs a cycle; a pod that fits nowhere is dropped so that
 * the queue stays empty. Returns the decision. */
static struct gp_decision place_milli(struct gp_engine *e, int64_t cpu_milli, uint32_t gpus,
                                      uint32_t gpu_milli)
{
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    s.cpu_milli = cpu_milli;
    s.mem_mib = 1024;
    s.gpu_count = gpus;
    s.gpu_milli = gpus ? gpu_milli : 0;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &s, 0, &id), GP_OK);
    struct gp_decision d;
    memset(&d, 0, sizeof d);
    assert_int_equal(gp_engine_schedule(e, 0, 0, &d, 1), 1);
    assert_int_equal(d.pod, id);
    if (d.kind != GP_DECISION_BIND)
        assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
    return d;
}

static struct gp_decision place(struct gp_engine *e, int64_t cores, uint32_t gpus,
                                uint32_t gpu_milli)
{
    return place_milli(e, cores * 1000, gpus, gpu_milli);
}

/* Asserts a bind to node, and (when gpu >= 0) to that single GPU. */
static void expect_bind(struct gp_decision d, uint32_t node_id, int gpu)
{
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, node_id);
    if (gpu >= 0) {
        assert_int_equal(d.pick.ngpus, 1);
        assert_int_equal(d.pick.gpu[0], gpu);
    }
}

/* ---- registry ---- */

static void test_registry(void **unused)
{
    (void)unused;
    static const char *const names[] = {"random",         "best-fit", "dot-product", "gpu-packing",
                                        "gpu-clustering", "spread",   "fgd",         "fgd-pack"};
    size_t n = 0;
    while (gp_policies[n])
        n++;
    assert_int_equal(n, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++) {
        const struct gp_policy_ops *ops = gp_policy_find(names[i]);
        assert_non_null(ops);
        assert_string_equal(ops->name, names[i]);
        assert_non_null(ops->summary);
        assert_non_null(ops->score);
        assert_true((ops->init == NULL) == (ops->destroy == NULL));
    }
    assert_null(gp_policy_find("fgd-typo"));
    assert_null(gp_policy_find(""));
    assert_null(gp_policy_find(NULL));
    assert_null(gp_policy_find("Best-Fit")); /* names are exact */
}

/* ---- best-fit ---- */

static void test_best_fit_node(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("best-fit", 1);
    node(e, 96, 8); /* 0 */
    node(e, 64, 2); /* 1 */
    node(e, 48, 4); /* 2 */
    /* pod 4 cores, 1 GPU; leftover = cpu_left/128*0.5 + gpus_left/8*0.5:
     *   n0: 92/128*.5 + 7/8*.5 = .796875  -> score 20
     *   n1: 60/128*.5 + 1/8*.5 = .296875  -> score 70
     *   n2: 44/128*.5 + 3/8*.5 = .359375  -> score 64 */
    expect_bind(place(e, 4, 1, 1000), 1, 0);
    /* n1 now 60 cores, 1 GPU: 56/128*.5 + 0 = .21875 -> 78, the best again */
    expect_bind(place(e, 4, 1, 1000), 1, 1);
    /* n1 has no GPU left: n2 (score 64) beats n0 (20) */
    expect_bind(place(e, 4, 1, 1000), 2, 0);
    gp_engine_free(e);

    /* the same GPUs, CPU decides */
    e = engine_for("best-fit", 1);
    node(e, 96, 2); /* 0: 92/128*.5 + 1/8*.5 = .421875 -> 57 */
    node(e, 32, 2); /* 1: 28/128*.5 + 1/8*.5 = .171875 -> 82 */
    expect_bind(place(e, 4, 1, 1000), 1, 0);
    gp_engine_free(e);
}

static void test_best_fit_ties_quantised(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("best-fit", 1);
    node(e, 64, 2); /* 0 */
    node(e, 63, 2); /* 1 */
    /* pod 4 cores, 1 GPU: n0 .296875 -> 70.3 -> 70; n1 59/128*.5 + .0625 =
     * .29296875 -> 70.7 -> 70. Node 1 is tighter, but the reference scores
     * in integers, so they tie and the lowest node id wins. */
    expect_bind(place(e, 4, 1, 1000), 0, 0);
    gp_engine_free(e);
}

static void test_best_fit_share_gpu(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("best-fit", 1);
    node(e, 64, 4);
    /* best fit inside the node: the GPU with the least free milli that fits */
    expect_bind(place(e, 1, 1, 400), 0, 0); /* all free: lowest index; 600 1000 1000 1000 */
    expect_bind(place(e, 1, 1, 700), 0, 1); /* 600 too small; 600 300 1000 1000 */
    expect_bind(place(e, 1, 1, 800), 0, 2); /* 600 300 200 1000 */
    expect_bind(place(e, 1, 1, 250), 0, 1); /* 300 is the tightest fit */
    expect_bind(place(e, 1, 1, 150), 0, 2); /* 200 is the tightest fit */
    expect_bind(place(e, 1, 1, 600), 0, 0); /* exactly 600 */
    /* a whole GPU takes the only GPU with nothing on it */
    struct gp_decision d = place(e, 1, 1, 1000);
    expect_bind(d, 0, 3);
    assert_int_equal(place(e, 1, 1, 1000).kind, GP_DECISION_UNSCHEDULABLE);
    gp_engine_free(e);
}

static void test_best_fit_share_across_nodes(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("best-fit", 1);
    node(e, 32, 2);                          /* 0 */
    node(e, 32, 2);                          /* 1 */
    expect_bind(place(e, 2, 1, 1000), 0, 0); /* tie -> n0 */
    /* share 500: n0 has 1000 GPU-milli left, n1 2000: n0 is the best fit */
    expect_bind(place(e, 2, 1, 500), 0, 1);
    /* share 600: n0's GPU 1 has 500 free only, so n1 */
    expect_bind(place(e, 2, 1, 600), 1, 0);
    gp_engine_free(e);
}

/* ---- dot-product ---- */

static void test_dot_product(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("dot-product", 1);
    node(e, 128, 1); /* 0: CPU-rich */
    node(e, 64, 8);  /* 1: GPU-rich */
    /* vectors over (128 cores, 8 GPUs); score = 100 * (1 - dot/2):
     * pod 1 core, 1 GPU = (1/128, 1/8):
     *   n0 (1, 1/8):  dot = .0078125 + .015625 = .0234375  -> 98.8 -> 98
     *   n1 (1/2, 1):  dot = .00390625 + .125   = .12890625 -> 93.6 -> 93
     * the GPU-heavy pod avoids the GPU-rich node */
    expect_bind(place(e, 1, 1, 1000), 0, 0);
    gp_engine_free(e);

    e = engine_for("dot-product", 1);
    node(e, 128, 1);
    node(e, 64, 8);
    /* pod 32 cores, 1 GPU = (1/4, 1/8):
     *   n0: dot = .25 + .015625 = .265625 -> 86.7 -> 86
     *   n1: dot = .125 + .125   = .25     -> 87.5 -> 87
     * the CPU-heavy pod avoids the CPU-rich node */
    expect_bind(place(e, 32, 1, 1000), 1, 0);
    /* shares count their milli in the merged GPU dimension; share 500 =
     * (1/128, 1/16): n0 (1, 1/8) dot .015625 -> 99.2 -> 99; n1 (1/4, 7/8)
     * dot .056640625 -> 97.2 -> 97. Share 300 then: n0 99, n1 98 */
    expect_bind(place(e, 1, 1, 500), 0, 0);
    expect_bind(place(e, 1, 1, 300), 0, 0);
    gp_engine_free(e);
}

/* ---- gpu-packing ---- */

static void test_gpu_packing(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("gpu-packing", 1);
    node(e, 64, 8); /* 0 */
    node(e, 64, 2); /* 1 */
    node(e, 64, 4); /* 2 */
    /* idle nodes score 33 - GPUs: 25, 31, 29 -> the smallest, n1 */
    expect_bind(place(e, 1, 1, 300), 1, 0);
    /* a partly used GPU: 100 - (70% free)/10 = 93 beats idle nodes */
    expect_bind(place(e, 1, 1, 500), 1, 0);
    /* a whole GPU on a busy node: 50 - 1 = 49, over idle 25 and 29 */
    expect_bind(place(e, 1, 1, 1000), 1, 1);
    /* n1 has no whole GPU left; idle n2 (29) beats idle n0 (25) */
    expect_bind(place(e, 1, 1, 1000), 2, 0);
    /* share 150: n1's GPU 0 (200 free): 100 - 2 = 98; n2 must open a
     * fully free GPU: 49; n0 idle: 25 */
    expect_bind(place(e, 1, 1, 150), 1, 0);
    /* 2 whole GPUs: n2 (busy) 50 - 2 = 48 over n0 (idle) 25 */
    struct gp_decision d = place(e, 1, 2, 1000);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 2);
    assert_int_equal(d.pick.ngpus, 2);
    assert_int_equal(d.pick.gpu[0], 1);
    assert_int_equal(d.pick.gpu[1], 2);
    /* a pod without GPU scores 0 everywhere: the lowest id */
    expect_bind(place(e, 1, 0, 0), 0, -1);
    gp_engine_free(e);
}

static void test_gpu_packing_fullest_gpu(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("gpu-packing", 1);
    node(e, 64, 1);                         /* 0 */
    node(e, 64, 1);                         /* 1 */
    expect_bind(place(e, 1, 1, 300), 0, 0); /* idle tie (32 each): n0, 700 left */
    expect_bind(place(e, 1, 1, 800), 1, 0); /* only n1 fits: 200 left */
    /* share 100: n0's GPU (70% free) 100 - 7 = 93; n1's (20% free)
     * 100 - 2 = 98: the fuller GPU wins although its node id is higher */
    expect_bind(place(e, 1, 1, 100), 1, 0);
    gp_engine_free(e);
}

/* ---- gpu-clustering ---- */

static void test_gpu_clustering_bands(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("gpu-clustering", 1);
    node(e, 128, 8); /* 0 */
    node(e, 32, 8);  /* 1 */
    node(e, 8, 2);   /* 2 */
    /* fullness = 25 * (8000 - free GPU-milli) / 8000
     * 1 GPU, 1 core: all idle (band 25): n0 25+0, n1 25+0, n2 25+18 -> n2 */
    expect_bind(place(e, 1, 1, 1000), 2, 0);
    /* 2 GPUs, 32 cores: n2 too small; idle n0 and n1 tie at 25 -> n0 */
    struct gp_decision d = place(e, 32, 2, 1000);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 0);
    /* 1 GPU, 64 cores: only n0 has the CPU, so it now mixes kinds */
    expect_bind(place(e, 64, 1, 1000), 0, 2);
    /* 1 GPU, 1 core: n2 only 1-GPU pods: 75 + 21 = 96; n0 mixed with
     * 1-GPU pods: 50 + 9 = 59; n1 idle: 25 */
    expect_bind(place(e, 1, 1, 1000), 2, 1);
    /* again: n2 is full; mixed n0 (50 + 9 = 59) beats idle n1 (25) */
    expect_bind(place(e, 1, 1, 1000), 0, 3);
    /* a share: n0 runs other kinds only (0 + 12), idle n1 (25) wins */
    expect_bind(place(e, 1, 1, 500), 1, 0);
    /* another share: n1 runs only shares: 75 + 1 = 76, on the same GPU */
    expect_bind(place(e, 1, 1, 200), 1, 0);
    /* a pod without GPU scores 0 everywhere: the lowest id */
    expect_bind(place(e, 1, 0, 0), 0, -1);
    gp_engine_free(e);
}

static void test_gpu_clustering_own_kind_first(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("gpu-clustering", 1);
    node(e, 16, 8);                               /* 0 */
    node(e, 128, 8);                              /* 1 */
    expect_bind(place(e, 1, 1, 1000), 0, 0);      /* idle tie -> n0 */
    struct gp_decision d = place(e, 32, 2, 1000); /* only n1 has the CPU */
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 1);
    expect_bind(place(e, 64, 1, 1000), 1, 2); /* n1 mixes kinds */
    /* 1 GPU: n0 runs only 1-GPU pods: 75 + 25*1000/8000 = 78; n1 is fuller
     * but mixed: 50 + 25*3000/8000 = 59; the pure node wins */
    expect_bind(place(e, 1, 1, 1000), 0, 1);
    gp_engine_free(e);
}

static void test_gpu_clustering_release(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("gpu-clustering", 1);
    node(e, 32, 8); /* 0 */
    node(e, 32, 8); /* 1 */
    struct gp_decision d = place(e, 1, 1, 1000);
    expect_bind(d, 0, 0);
    /* while it runs, a share avoids n0 (other kind: 0 + 3) for idle n1 (25) */
    struct gp_decision s = place(e, 1, 1, 100);
    expect_bind(s, 1, 0);
    assert_int_equal(gp_engine_pod_finished(e, s.pod), GP_OK);
    assert_int_equal(gp_engine_pod_finished(e, d.pod), GP_OK);
    /* once both are released both nodes are idle again: tie -> n0 */
    expect_bind(place(e, 1, 1, 100), 0, 0);
    gp_engine_free(e);
}

/* ---- spread ---- */

static void test_spread(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("spread", 1);
    node(e, 64, 4); /* 0 */
    node(e, 64, 4); /* 1 */
    node(e, 32, 2); /* 2 */
    /* share of own capacity left (cpu, mem, gpu), averaged: n0 and n1 tie */
    expect_bind(place(e, 8, 1, 1000), 0, 0);
    /* n1 is now emptier than n0 (and than n2: 24/32 cpu, 1/2 gpu) */
    expect_bind(place(e, 8, 1, 1000), 1, 0);
    /* after placing, n0 and n1 would keep cpu 48/64 = .75 and gpu 2/4 = .5,
     * n2 cpu 24/32 = .75 and gpu 1/2 = .5 too; n2 runs no pod yet, so more
     * of its memory is free and it wins */
    expect_bind(place(e, 8, 1, 1000), 2, 0);
    gp_engine_free(e);

    /* the same CPU, the GPUs decide: 1/2 of n0's GPUs stay free, 7/8 of n1's */
    e = engine_for("spread", 1);
    node(e, 64, 2); /* 0 */
    node(e, 64, 8); /* 1 */
    expect_bind(place(e, 8, 1, 1000), 1, 0);
    gp_engine_free(e);

    /* shares go to the emptiest GPU */
    e = engine_for("spread", 1);
    node(e, 64, 2);
    expect_bind(place(e, 1, 1, 300), 0, 0); /* 1000 1000: lowest index */
    expect_bind(place(e, 1, 1, 300), 0, 1); /* 700 1000 */
    expect_bind(place(e, 1, 1, 300), 0, 0); /* 700 700 */
    expect_bind(place(e, 1, 1, 500), 0, 1); /* 400 700 */
    gp_engine_free(e);
}

static void test_spread_opposite_best_fit(void **unused)
{
    (void)unused;
    static const char *const policies[] = {"best-fit", "spread"};
    for (int i = 0; i < 2; i++) {
        struct gp_engine *e = engine_for(policies[i], 1);
        node(e, 64, 4);
        node(e, 64, 4);
        expect_bind(place(e, 16, 2, 1000), 0, -1);
        /* best-fit fills node 0, spread moves to the empty node 1 */
        struct gp_decision d = place(e, 16, 1, 1000);
        assert_int_equal(d.kind, GP_DECISION_BIND);
        assert_int_equal(d.node, i == 0 ? 0 : 1);
        gp_engine_free(e);
    }
}

/* ---- random ---- */

static void test_random_uniform(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("random", 42);
    for (int i = 0; i < 4; i++)
        node(e, 100000, 0);
    enum { PODS = 4000 };
    unsigned count[4] = {0};
    for (int i = 0; i < PODS; i++) {
        struct gp_decision d = place_milli(e, 1, 0, 0);
        assert_int_equal(d.kind, GP_DECISION_BIND);
        assert_true(d.node < 4);
        count[d.node]++;
    }
    /* 1000 expected each, standard deviation about 27 */
    for (int i = 0; i < 4; i++) {
        assert_in_range(count[i], 850, 1150);
    }
    gp_engine_free(e);
}

static void test_random_gpu_uniform(void **unused)
{
    (void)unused;
    struct gp_engine *e = engine_for("random", 7);
    node(e, 1000, 4);
    unsigned count[4] = {0};
    /* 200 shares of 10 milli fill at most 2000 of the 4000 milli, so every
     * GPU stays a candidate: each should get about 50 */
    for (int i = 0; i < 200; i++) {
        struct gp_decision d = place_milli(e, 1, 1, 10);
        assert_int_equal(d.kind, GP_DECISION_BIND);
        assert_int_equal(d.pick.ngpus, 1);
        count[d.pick.gpu[0]]++;
    }
    for (int i = 0; i < 4; i++) {
        assert_in_range(count[i], 25, 75);
    }
    gp_engine_free(e);
}

static void random_run(uint64_t seed, uint32_t *nodes, uint8_t *gpus, int n)
{
    struct gp_engine *e = engine_for("random", seed);
    for (int i = 0; i < 8; i++)
        node(e, 64, 4);
    for (int i = 0; i < n; i++) {
        struct gp_decision d = place(e, 1, 1, 100);
        assert_int_equal(d.kind, GP_DECISION_BIND);
        nodes[i] = d.node;
        gpus[i] = d.pick.gpu[0];
    }
    gp_engine_free(e);
}

static void test_random_deterministic(void **unused)
{
    (void)unused;
    enum { N = 64 };
    uint32_t n1[N], n2[N], n3[N];
    uint8_t g1[N], g2[N], g3[N];
    random_run(11, n1, g1, N);
    random_run(11, n2, g2, N);
    random_run(12, n3, g3, N);
    assert_memory_equal(n1, n2, sizeof n1);
    assert_memory_equal(g1, g2, sizeof g1);
    /* another seed places differently (64 draws over 8 nodes) */
    assert_memory_not_equal(n1, n3, sizeof n1);
}

/* ---- property: every policy places only where the pod fits ---- */

struct snapshot {
    bool fits;
    struct gp_gpu gpu[GP_MAX_GPUS_PER_NODE];
};

static void check_pick(const struct gp_node *n, const struct gp_gpu *gpu_before,
                       const struct gp_pod_spec *p, const struct gp_pick *pick)
{
    assert_int_equal(pick->ngpus, p->gpu_count);
    uint32_t seen = 0;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t g = pick->gpu[i];
        assert_true(g < n->spec.gpu_count);
        assert_false(seen >> g & 1);
        seen |= 1u << g;
        assert_true(gpu_before[g].milli_free >= p->gpu_milli);
        assert_true(gpu_before[g].mem_free_mib >= p->gpu_mem_mib);
        if (p->gpu_milli == GP_GPU_MILLI)
            assert_int_equal(gpu_before[g].milli_free, GP_GPU_MILLI);
    }
}

static void property_one(const struct gp_policy_ops *ops, uint64_t seed)
{
    static const char *const models[] = {"A100", "T4"};
    static const char *const only_t4[] = {"T4"};
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    struct gp_engine *e = gp_engine_new(ops, seed);
    assert_non_null(e);
    /* a private state to call score() directly and check the GPUs it picks */
    void *state = NULL;
    if (ops->init)
        assert_int_equal(ops->init(e, &state), 0);

    uint32_t nnodes = 2 + (uint32_t)gp_rng_below(&r, 5);
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec s;
        memset(&s, 0, sizeof s);
        s.name = "n";
        s.cpu_milli = 1000 * (int64_t)(4 + gp_rng_below(&r, 60));
        s.mem_mib = 1024 * (int64_t)(8 + gp_rng_below(&r, 120));
        s.gpu_count = (uint32_t)gp_rng_below(&r, 9);
        s.gpu_model = s.gpu_count ? models[gp_rng_below(&r, 2)] : NULL;
        s.gpu_mem_mib = s.gpu_count ? 16384 : 0;
        assert_int_equal(gp_engine_node_add(e, &s, NULL), GP_OK);
    }

    uint32_t bound[256];
    size_t nbound = 0;
    for (int step = 0; step < 200; step++) {
        /* now and then a bound pod finishes */
        if (nbound > 0 && gp_rng_below(&r, 5) == 0) {
            size_t k = (size_t)gp_rng_below(&r, nbound);
            assert_int_equal(gp_engine_pod_finished(e, bound[k]), GP_OK);
            if (ops->on_release) {
                const struct gp_pod *p = gp_engine_pod(e, bound[k]);
                ops->on_release(state, e, gp_engine_node(e, p->node), p);
            }
            bound[k] = bound[--nbound];
        }
        struct gp_pod_spec s;
        memset(&s, 0, sizeof s);
        s.name = "p";
        s.cpu_milli = 100 * (int64_t)gp_rng_below(&r, 160);
        s.mem_mib = 256 * (int64_t)gp_rng_below(&r, 64);
        switch (gp_rng_below(&r, 4)) {
        case 0: /* CPU only */
            break;
        case 1: /* a share, sometimes with GPU memory */
            s.gpu_count = 1;
            s.gpu_milli = 50 * (uint32_t)(1 + gp_rng_below(&r, 19));
            s.gpu_mem_mib = gp_rng_below(&r, 3) == 0 ? 4096 : 0;
            break;
        default: /* whole GPUs */
            s.gpu_count = 1 + (uint32_t)gp_rng_below(&r, 4);
            s.gpu_milli = GP_GPU_MILLI;
            break;
        }
        if (s.gpu_count && gp_rng_below(&r, 4) == 0) {
            s.gpu_models = only_t4;
            s.ngpu_models = 1;
        }
        uint32_t id;
        assert_int_equal(gp_engine_pod_add(e, &s, 0, &id), GP_OK);
        const struct gp_pod *pod = gp_engine_pod(e, id);

        struct snapshot snap[8];
        bool any = false;
        for (uint32_t i = 0; i < nnodes; i++) {
            const struct gp_node *n = gp_engine_node(e, i);
            snap[i].fits = gp_engine_filter(e, n, pod) == GP_FILTER_COUNT;
            memcpy(snap[i].gpu, n->gpu, sizeof n->gpu);
            any |= snap[i].fits;
            if (snap[i].fits) {
                struct gp_pick pick;
                memset(&pick, 0, sizeof pick);
                double score = ops->score(state, e, n, pod, &pick);
                assert_true(score == score); /* not NaN */
                check_pick(n, n->gpu, &s, &pick);
            }
        }

        struct gp_decision d;
        assert_int_equal(gp_engine_schedule(e, 0, 0, &d, 1), 1);
        assert_int_equal(d.pod, id);
        if (d.kind == GP_DECISION_BIND) {
            assert_true(d.node < nnodes);
            assert_true(snap[d.node].fits);
            check_pick(gp_engine_node(e, d.node), snap[d.node].gpu, &s, &d.pick);
            if (ops->on_bind)
                ops->on_bind(state, e, gp_engine_node(e, d.node), gp_engine_pod(e, id));
            if (nbound < sizeof bound / sizeof bound[0])
                bound[nbound++] = id;
        } else {
            assert_false(any);
            assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
        }
        /* nothing is ever over-allocated */
        for (uint32_t i = 0; i < nnodes; i++) {
            const struct gp_node *n = gp_engine_node(e, i);
            assert_true(n->cpu_free_milli >= 0);
            assert_true(n->mem_free_mib >= 0);
            for (uint32_t g = 0; g < n->spec.gpu_count; g++)
                assert_true(n->gpu[g].milli_free <= GP_GPU_MILLI);
        }
    }
    if (ops->destroy)
        ops->destroy(state);
    gp_engine_free(e);
}

static void test_property_fits(void **unused)
{
    (void)unused;
    for (size_t i = 0; gp_policies[i]; i++)
        for (uint64_t seed = 1; seed <= 20; seed++)
            property_one(gp_policies[i], seed * 7919 + i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_best_fit_node),
        cmocka_unit_test(test_best_fit_ties_quantised),
        cmocka_unit_test(test_best_fit_share_gpu),
        cmocka_unit_test(test_best_fit_share_across_nodes),
        cmocka_unit_test(test_dot_product),
        cmocka_unit_test(test_gpu_packing),
        cmocka_unit_test(test_gpu_packing_fullest_gpu),
        cmocka_unit_test(test_gpu_clustering_bands),
        cmocka_unit_test(test_gpu_clustering_own_kind_first),
        cmocka_unit_test(test_gpu_clustering_release),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_spread_opposite_best_fit),
        cmocka_unit_test(test_random_uniform),
        cmocka_unit_test(test_random_gpu_uniform),
        cmocka_unit_test(test_random_deterministic),
        cmocka_unit_test(test_property_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
