/* test_bound.c - the packing bound: small clusters where the best packing
 * is worked out by hand (shares that cannot share a GPU, multi-GPU pods on
 * odd nodes, cpu that runs out per node, GPU models), the prefix rule of
 * the static curve, bad input, a check against an exhaustive search over
 * every placement of a few hundred tiny random instances, a check that no
 * policy's static run ever allocates more than the bound, and the bound on
 * the Alibaba openb trace (skipped without ../shared). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shared_data.h"

#include "engine/engine.h"
#include "engine/sharing.h"
#include "plan/bound.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/rng.h"

#define MAX_PODS 64

static struct gp_node_spec mknode(const char *model, uint32_t gpus, int64_t cores)
{
    struct gp_node_spec s;
    memset(&s, 0, sizeof s);
    s.name = "n";
    s.gpu_model = gpus ? model : NULL;
    s.gpu_count = gpus;
    s.gpu_mem_mib = gpus ? 16384 : 0;
    s.cpu_milli = cores * 1000;
    s.mem_mib = 65536;
    return s;
}

static struct gp_pod_spec mkpod(int64_t cpu_milli, uint32_t gpus, uint32_t milli)
{
    struct gp_pod_spec p;
    memset(&p, 0, sizeof p);
    p.name = "p";
    p.cpu_milli = cpu_milli;
    p.mem_mib = 1024;
    p.gpu_count = gpus;
    p.gpu_milli = gpus ? milli : 0;
    return p;
}

/* The bound for pods[0..n) on nodes[0..nn). */
static double bound_of(struct gp_node_spec *nodes, size_t nn, const struct gp_pod_spec *pods,
                       size_t n)
{
    const struct gp_pod_spec *ptr[MAX_PODS];
    assert_true(n <= MAX_PODS);
    for (size_t i = 0; i < n; i++)
        ptr[i] = &pods[i];
    struct gp_cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = nodes;
    c.nnodes = nn;
    struct gp_diag d = {""};
    double m = -1;
    enum gp_err err = gp_bound_packing(&c, ptr, n, &m, &d);
    if (err != GP_OK)
        print_error("gp_bound_packing: %s\n", d.msg);
    assert_int_equal(err, GP_OK);
    return m;
}

/* ---- by hand ---------------------------------------------------------------- */

/* Two nodes of 2 GPUs and ten shares of 600 milli: two never fit one GPU,
 * so at most 4 x 600 = 2400 of the 4000 milli can be allocated (a bound on
 * milli alone would say 4000). */
static void test_shares_that_cannot_pair(void **state)
{
    (void)state;
    struct gp_node_spec n[2] = {mknode("T4", 2, 32), mknode("T4", 2, 32)};
    struct gp_pod_spec p[10];
    for (int i = 0; i < 10; i++)
        p[i] = mkpod(1000, 1, 600);
    assert_true(bound_of(n, 2, p, 10) == 2400);
    /* with 400s to fill the gaps every GPU can be full */
    for (int i = 4; i < 8; i++)
        p[i] = mkpod(1000, 1, 400);
    assert_true(bound_of(n, 2, p, 10) == 4000);
}

/* One node of 2 GPUs; three 810s and the slivers 190 and 150: the best is
 * 810 + 190 on one GPU and 810 + 150 on the other, 1960. */
static void test_slivers(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 2, 32)};
    struct gp_pod_spec p[5] = {mkpod(1000, 1, 810), mkpod(1000, 1, 810), mkpod(1000, 1, 810),
                               mkpod(1000, 1, 190), mkpod(1000, 1, 150)};
    assert_true(bound_of(n, 1, p, 5) == 1960);
}

/* A node of 3 GPUs takes one 2-GPU pod, not two (the GPUs of a pod must be
 * on one node): 2000; a 1-GPU pod fills the last GPU: 3000. */
static void test_multi_gpu_on_odd_node(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("V100", 3, 64)};
    struct gp_pod_spec p[3] = {mkpod(1000, 2, 1000), mkpod(1000, 2, 1000), mkpod(1000, 1, 1000)};
    assert_true(bound_of(n, 1, p, 2) == 2000);
    assert_true(bound_of(n, 1, p, 3) == 3000);
}

/* Two nodes of 8 cores and 2 GPUs; pods of 6 cores and 1 GPU: one per node
 * (12 > 8), so 2000, though the cluster's 16 cores would feed 2.67 pods. */
static void test_cpu_per_node(void **state)
{
    (void)state;
    struct gp_node_spec n[2] = {mknode("T4", 2, 8), mknode("T4", 2, 8)};
    struct gp_pod_spec p[4];
    for (int i = 0; i < 4; i++)
        p[i] = mkpod(6000, 1, 1000);
    assert_true(bound_of(n, 2, p, 4) == 2000);
    /* 2-core pods fill the rest: 2 nodes x (6 + 2 cores, 2 GPUs) */
    p[2] = mkpod(2000, 1, 1000);
    p[3] = mkpod(2000, 1, 1000);
    assert_true(bound_of(n, 2, p, 4) == 4000);
}

/* Pods that ask for model A only use A's 2 GPUs; a model no node has gets
 * nothing. */
static void test_models(void **state)
{
    (void)state;
    struct gp_node_spec n[2] = {mknode("A", 2, 32), mknode("B", 2, 32)};
    static const char *const only_a[] = {"A"}, *const only_c[] = {"C"};
    struct gp_pod_spec p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = mkpod(1000, 1, 1000);
        p[i].gpu_models = i < 4 ? only_a : only_c;
        p[i].ngpu_models = 1;
    }
    assert_true(bound_of(n, 2, p, 6) == 2000);
    p[0].gpu_models = NULL; /* one pod may go anywhere */
    p[0].ngpu_models = 0;
    assert_true(bound_of(n, 2, p, 6) == 3000);
}

/* The bound never exceeds what arrived, and pods without GPU count for
 * nothing; without GPUs it is 0 and so is the unallocated % (as in the
 * simulator). */
static void test_small_totals(void **state)
{
    (void)state;
    struct gp_node_spec n[2] = {mknode("T4", 4, 32), mknode(NULL, 0, 32)};
    struct gp_pod_spec p[3] = {mkpod(1000, 1, 1000), mkpod(1000, 1, 500), mkpod(4000, 0, 0)};
    assert_true(bound_of(n, 2, p, 3) == 1500);
    assert_true(bound_of(n, 2, p + 2, 1) == 0);
    assert_true(bound_of(n, 2, p, 0) == 0);

    struct gp_cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = n + 1;
    c.nnodes = 1;
    const struct gp_pod_spec *ptr[3] = {&p[0], &p[1], &p[2]};
    struct gp_bound_result r;
    struct gp_diag d = {""};
    assert_int_equal(gp_bound_at(&c, ptr, 3, 100, &r, &d), GP_OK);
    assert_int_equal(r.prefix, 0);
    assert_true(r.max_alloc_milli == 0);
    assert_true(r.unallocated_pct == 0);
}

/* The bound of a multiset of pods does not depend on their order. */
static void test_order_independent(void **state)
{
    (void)state;
    struct gp_node_spec n[3] = {mknode("T4", 2, 16), mknode("T4", 4, 24), mknode("V100", 8, 64)};
    struct gp_pod_spec p[24], q[24];
    for (int i = 0; i < 24; i++)
        p[i] = mkpod(1000 * (1 + i % 7), i % 5 == 0 ? 2 : 1, i % 3 == 0 ? 1000 : 130 * (1 + i % 7));
    for (int i = 0; i < 24; i++)
        if (p[i].gpu_count > 1)
            p[i].gpu_milli = 1000;
    for (int i = 0; i < 24; i++)
        q[i] = p[(i * 7) % 24];
    double a = bound_of(n, 3, p, 24), b = bound_of(n, 3, q, 24);
    assert_true(a == b);
    assert_true(a == bound_of(n, 3, p, 24));
}

/* Pods that differ only in the sharing modes they accept or in their MIG
 * profile fit different nodes, so the bound keeps them in classes of their
 * own. One plain GPU (fractions accounted: no MPS, no MIG) and two
 * 500-milli shares, one for any GPU and one pinned to MPS (or asking for a
 * MIG instance): only the first can run. The engine places 500, and so
 * must the bound say, whichever pod comes first (merged into one class,
 * the bound took the fit of whichever sorted first: 1000 one way, 0 the
 * other, below what the engine places). */
static void test_share_modes_apart(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 1, 8)};
    struct gp_pod_spec any = mkpod(1000, 1, 500), mps = any, mig = any;
    mps.share_modes = 1u << GP_SHARE_MPS;
    mig.mig_profile = "1g.10gb";
    const struct gp_pod_spec *pinned[2] = {&mps, &mig};
    for (int k = 0; k < 2; k++) {
        struct gp_pod_spec ab[2] = {any, *pinned[k]}, ba[2] = {*pinned[k], any};
        /* what the engine places, the pinned pod first */
        struct gp_engine *e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n[0], NULL), GP_OK);
        for (int i = 0; i < 2; i++) {
            uint32_t id;
            struct gp_decision d;
            assert_int_equal(gp_engine_pod_add(e, &ba[i], 0, &id), GP_OK);
            assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
            assert_int_equal(d.kind, i == 0 ? GP_DECISION_UNSCHEDULABLE : GP_DECISION_BIND);
        }
        struct gp_engine_totals t;
        gp_engine_totals(e, &t);
        assert_int_equal(t.gpu_milli_alloc, 500);
        gp_engine_free(e);
        assert_true(bound_of(n, 1, ab, 2) == 500);
        assert_true(bound_of(n, 1, ba, 2) == 500);
    }
}

/* Pods that differ only in the resource they ask for are apart too. The
 * bound takes nodes without a sharing spec only (GPUs whose fractions are
 * accounted), and those advertise no nvidia.com/gpu.shared: a pod asking
 * nvidia.com/gpu: 1 takes the GPU, one asking nvidia.com/gpu.shared: 1
 * never fits (as on a renamed pool the other way round). In one class the
 * bound took the fit of whichever sorted first (1000 or 0). */
static void test_resource_names_apart(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 1, 8)};
    struct gp_pod_spec gpu = mkpod(1000, 1, 1000), shared = gpu;
    shared.gpu_resource = GP_GPU_RES_SHARED;
    struct gp_pod_spec ab[2] = {gpu, shared}, ba[2] = {shared, gpu};
    /* what the engine places, in either order */
    for (int k = 0; k < 2; k++) {
        const struct gp_pod_spec *in = k == 0 ? ab : ba;
        struct gp_engine *e = gp_engine_new(NULL, 1);
        assert_int_equal(gp_engine_node_add(e, &n[0], NULL), GP_OK);
        for (int i = 0; i < 2; i++) {
            uint32_t id;
            struct gp_decision d;
            assert_int_equal(gp_engine_pod_add(e, &in[i], 0, &id), GP_OK);
            assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
            bool asks_shared = in[i].gpu_resource == GP_GPU_RES_SHARED;
            assert_int_equal(d.kind, asks_shared ? GP_DECISION_UNSCHEDULABLE : GP_DECISION_BIND);
        }
        struct gp_engine_totals t;
        gp_engine_totals(e, &t);
        assert_int_equal(t.gpu_milli_alloc, 1000);
        gp_engine_free(e);
    }
    assert_true(bound_of(n, 1, ab, 2) == 1000);
    assert_true(bound_of(n, 1, ba, 2) == 1000);
}

/* The bound leaves CPU-only pods out, and says when that may matter. One
 * node of 1 GPU and 8 cores; a 1-GPU pod of 6 cores and a CPU-only pod of
 * c cores. The bound is 1000 either way; its placement leaves 2 cores. A
 * CPU-only pod of 4 cores asks for more than that: a run that gets it
 * first places it and then has no room for the GPU pod (0 allocated), and
 * the bound says it is not informative. One of 2 cores fits beside. */
static void test_caveat(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 1, 8)};
    struct gp_cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = n;
    c.nnodes = 1;
    for (int cores = 2; cores <= 4; cores += 2) {
        struct gp_pod_spec p[2] = {mkpod(1000 * cores, 0, 0), mkpod(6000, 1, 1000)};
        const struct gp_pod_spec *ptr[2] = {&p[0], &p[1]};
        struct gp_bound_result r;
        struct gp_diag d = {""};
        assert_int_equal(gp_bound_at(&c, ptr, 2, 100, &r, &d), GP_OK);
        assert_true(r.max_alloc_milli == 1000);
        assert_int_equal(r.left_out_pods, 1);
        assert_true(r.left_out_cpu_milli == 1000.0 * cores);
        assert_true(r.cluster_cpu_milli == 8000);
        assert_float_equal(r.lp_cpu_milli, 6000, 1e-6);
        assert_true(r.informative == (cores == 2));
    }
}

/* ---- the prefix rule ---------------------------------------------------------- */

/* One GPU (1000 milli); requests 400, 600, 300: the curve reads X % after
 * the fewest pods whose request reaches X % of 1000. */
static void test_prefix(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 1, 8)};
    struct gp_cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = n;
    c.nnodes = 1;
    struct gp_pod_spec p[3] = {mkpod(1000, 1, 400), mkpod(1000, 1, 600), mkpod(1000, 1, 300)};
    const struct gp_pod_spec *ptr[3] = {&p[0], &p[1], &p[2]};
    assert_int_equal(gp_bound_prefix(&c, ptr, 3, 0), 0);
    assert_int_equal(gp_bound_prefix(&c, ptr, 3, 40), 1);
    assert_int_equal(gp_bound_prefix(&c, ptr, 3, 41), 2);
    assert_int_equal(gp_bound_prefix(&c, ptr, 3, 100), 2);
    assert_int_equal(gp_bound_prefix(&c, ptr, 3, 130), 3);
    assert_int_equal(gp_bound_prefix(&c, ptr, 3, 131), 3);

    struct gp_bound_result r;
    struct gp_diag d = {""};
    assert_int_equal(gp_bound_at(&c, ptr, 3, 100, &r, &d), GP_OK);
    assert_int_equal(r.prefix, 2);
    assert_int_equal(r.capacity_milli, 1000);
    assert_int_equal(r.arrived_milli, 1000);
    assert_true(r.max_alloc_milli == 1000); /* 400 + 600 fill the GPU */
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 2, 8)};
    struct gp_cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = n;
    c.nnodes = 1;
    struct gp_pod_spec p[2] = {mkpod(1000, 1, 500), mkpod(1000, 2, 500)};
    p[1].name = "half-of-two";
    const struct gp_pod_spec *ptr[2] = {&p[0], &p[1]};
    struct gp_diag d = {""};
    double m = -1;
    struct gp_bound_result r;

    assert_int_equal(gp_bound_packing(NULL, ptr, 1, &m, &d), GP_EINVALID);
    assert_int_equal(gp_bound_packing(&c, NULL, 1, &m, &d), GP_EINVALID);
    assert_int_equal(gp_bound_packing(&c, ptr, 1, NULL, &d), GP_EINVALID);
    assert_int_equal(gp_bound_at(&c, ptr, 1, 100, NULL, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "bound:"));

    /* a pod the engine refuses: 2 GPUs of 500 milli each */
    assert_int_equal(gp_bound_packing(&c, ptr, 2, &m, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "half-of-two"));
    /* a missing pod */
    const struct gp_pod_spec *holes[2] = {&p[0], NULL};
    assert_int_equal(gp_bound_packing(&c, holes, 2, &m, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "pod 1"));
    /* a node with more GPUs than the engine handles */
    n[0].gpu_count = GP_MAX_GPUS_PER_NODE + 1;
    n[0].name = "huge";
    assert_int_equal(gp_bound_packing(&c, ptr, 1, &m, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "huge"));
    assert_int_equal(gp_bound_at(&c, ptr, 1, 100, &r, &d), GP_EINVALID);
    /* GPU sharing (MIG, time-slicing) is not modelled: refused, not guessed */
    static const int some_spec = 1;
    n[0] = mknode("A100", 2, 8);
    n[0].sharing = (const struct gp_sharing_spec *)(const void *)&some_spec;
    assert_int_equal(gp_bound_packing(&c, ptr, 1, &m, &d), GP_EUNSUPPORTED);
    assert_non_null(strstr(d.msg, "shares its GPUs"));
}

/* A gang member counts as a pod of its own (gangs only restrict). */
static void test_gang_ignored(void **state)
{
    (void)state;
    struct gp_node_spec n[1] = {mknode("T4", 2, 32)};
    struct gp_pod_spec p[2] = {mkpod(1000, 1, 1000), mkpod(1000, 1, 1000)};
    p[0].group = p[1].group = 3;
    assert_true(bound_of(n, 1, p, 2) == 2000);
}

/* ---- exhaustive search on tiny instances --------------------------------------- */

#define BF_NODES 3
#define BF_GPUS  4
#define BF_PODS  7

struct bf {
    const struct gp_node_spec *nodes;
    size_t nn;
    const struct gp_pod_spec *pods;
    size_t np;
    int64_t cpu[BF_NODES], mem[BF_NODES];
    uint32_t milli[BF_NODES][BF_GPUS], npods[BF_NODES][BF_GPUS];
    uint64_t rest[BF_PODS + 1]; /* GPU request of pods i.. */
    uint64_t best;
};

static bool bf_model_ok(const struct gp_node_spec *n, const struct gp_pod_spec *p)
{
    if (p->gpu_count == 0 || p->ngpu_models == 0 || n->gpu_count == 0)
        return true;
    for (size_t i = 0; i < p->ngpu_models; i++)
        if (strcmp(p->gpu_models[i], n->gpu_model) == 0)
            return true;
    return false;
}

/* Every placement of pods i.. (or none) on top of the state s. */
static void bf_search(struct bf *s, size_t i, uint64_t alloc)
{
    if (alloc > s->best)
        s->best = alloc;
    if (i == s->np || alloc + s->rest[i] <= s->best)
        return;
    const struct gp_pod_spec *p = &s->pods[i];
    uint64_t req = (uint64_t)p->gpu_count * p->gpu_milli;
    bf_search(s, i + 1, alloc); /* left out */
    for (size_t j = 0; j < s->nn; j++) {
        const struct gp_node_spec *n = &s->nodes[j];
        if (!bf_model_ok(n, p) || p->cpu_milli > s->cpu[j] || p->mem_mib > s->mem[j])
            continue;
        s->cpu[j] -= p->cpu_milli;
        s->mem[j] -= p->mem_mib;
        if (p->gpu_count == 0) {
            bf_search(s, i + 1, alloc);
        } else if (p->gpu_milli < 1000) {
            for (uint32_t g = 0; g < n->gpu_count; g++) {
                bool dup = false; /* GPUs with the same free milli are alike */
                for (uint32_t h = 0; h < g && !dup; h++)
                    dup = s->milli[j][h] == s->milli[j][g];
                if (dup || s->milli[j][g] < p->gpu_milli)
                    continue;
                s->milli[j][g] -= p->gpu_milli;
                s->npods[j][g]++;
                bf_search(s, i + 1, alloc + req);
                s->milli[j][g] += p->gpu_milli;
                s->npods[j][g]--;
            }
        } else {
            uint32_t took[BF_GPUS], k = 0;
            for (uint32_t g = 0; g < n->gpu_count && k < p->gpu_count; g++)
                if (s->npods[j][g] == 0)
                    took[k++] = g;
            if (k == p->gpu_count) {
                for (uint32_t t = 0; t < k; t++) {
                    s->milli[j][took[t]] = 0;
                    s->npods[j][took[t]] = 1;
                }
                bf_search(s, i + 1, alloc + req);
                for (uint32_t t = 0; t < k; t++) {
                    s->milli[j][took[t]] = 1000;
                    s->npods[j][took[t]] = 0;
                }
            }
        }
        s->cpu[j] += p->cpu_milli;
        s->mem[j] += p->mem_mib;
    }
}

static uint64_t best_packing(struct gp_node_spec *nodes, size_t nn, const struct gp_pod_spec *pods,
                             size_t np)
{
    struct bf s;
    memset(&s, 0, sizeof s);
    s.nodes = nodes;
    s.nn = nn;
    s.pods = pods;
    s.np = np;
    for (size_t j = 0; j < nn; j++) {
        s.cpu[j] = nodes[j].cpu_milli;
        s.mem[j] = nodes[j].mem_mib;
        for (uint32_t g = 0; g < nodes[j].gpu_count; g++)
            s.milli[j][g] = 1000;
    }
    for (size_t i = np; i-- > 0;)
        s.rest[i] = s.rest[i + 1] + (uint64_t)pods[i].gpu_count * pods[i].gpu_milli;
    bf_search(&s, 0, 0);
    return s.best;
}

/* 400 tiny random instances (odd shares included, which the arc-flow
 * rounds to its step): the bound is never below the best packing found by
 * trying every placement, and it is exact on most of them. */
static void test_exhaustive(void **state)
{
    (void)state;
    static const char *const models[] = {"A", "B"};
    static const uint32_t shares[] = {100, 150, 190, 250, 251, 333, 334,
                                      400, 500, 600, 650, 810, 999};
    struct gp_rng g;
    gp_rng_seed(&g, 7);
    int exact = 0, total = 400;
    for (int round = 0; round < total; round++) {
        struct gp_node_spec n[BF_NODES];
        struct gp_pod_spec p[BF_PODS];
        size_t nn = 1 + gp_rng_below(&g, BF_NODES), np = 1 + gp_rng_below(&g, BF_PODS);
        for (size_t j = 0; j < nn; j++) {
            static const uint32_t gpus[] = {0, 1, 2, 3, 4};
            n[j] = mknode(models[gp_rng_below(&g, 2)], gpus[gp_rng_below(&g, 5)],
                          2 + (int64_t)gp_rng_below(&g, 15));
            n[j].mem_mib = 4096 * (1 + (int64_t)gp_rng_below(&g, 4));
        }
        for (size_t i = 0; i < np; i++) {
            uint32_t kind = (uint32_t)gp_rng_below(&g, 4);
            uint32_t gpus = kind == 0 ? 0 : kind == 1 ? 1 : 1 + (uint32_t)gp_rng_below(&g, 3);
            uint32_t milli = kind == 1 ? shares[gp_rng_below(&g, 13)] : 1000;
            p[i] = mkpod(500 * (1 + (int64_t)gp_rng_below(&g, 12)), gpus, milli);
            p[i].mem_mib = 1024 * (1 + (int64_t)gp_rng_below(&g, 6));
            if (gpus && gp_rng_below(&g, 4) == 0) {
                p[i].gpu_models = &models[gp_rng_below(&g, 2)];
                p[i].ngpu_models = 1;
            }
        }
        double bound = bound_of(n, nn, p, np);
        uint64_t best = best_packing(n, nn, p, np);
        if (bound < (double)best) {
            print_error("round %d: bound %.0f below the best packing %llu\n", round, bound,
                        (unsigned long long)best);
            fail();
        }
        exact += bound == (double)best;
    }
    print_message("bound exact on %d of %d tiny instances\n", exact, total);
    assert_true(exact >= total * 3 / 4);
}

/* ---- every policy's static runs stay under the bound ------------------------------ */

static void test_policies_under_bound(void **state)
{
    (void)state;
    static const char *const models[] = {"A", "B", "C"};
    struct gp_rng g;
    gp_rng_seed(&g, 2025);
    for (int round = 0; round < 12; round++) {
        struct gp_node_spec n[8];
        size_t nn = 2 + gp_rng_below(&g, 7);
        for (size_t j = 0; j < nn; j++) {
            static const uint32_t gpus[] = {1, 2, 4, 8};
            n[j] = mknode(models[gp_rng_below(&g, 3)], gpus[gp_rng_below(&g, 4)],
                          8 + 8 * (int64_t)gp_rng_below(&g, 8));
        }
        struct gp_item it[40];
        static const char *allowed[40];
        size_t ni = 10 + gp_rng_below(&g, 31);
        for (size_t i = 0; i < ni; i++) {
            memset(&it[i], 0, sizeof it[i]);
            uint32_t kind = (uint32_t)gp_rng_below(&g, 5);
            uint32_t gpus = kind == 0 ? 0 : kind <= 2 ? 1 : 1 + (uint32_t)gp_rng_below(&g, 4);
            uint32_t milli = kind == 1 ? 50 * (1 + (uint32_t)gp_rng_below(&g, 19)) : 1000;
            it[i].name = "p";
            it[i].source = "test";
            it[i].kind = GP_ITEM_POD;
            it[i].repeat = 1;
            it[i].pod = mkpod(1000 * (1 + (int64_t)gp_rng_below(&g, 12)), gpus, milli);
            it[i].pod.name = "p";
            it[i].pod.mem_mib = 1024 * (1 + (int64_t)gp_rng_below(&g, 16));
            if (gpus && gp_rng_below(&g, 4) == 0) {
                allowed[i] = models[gp_rng_below(&g, 3)];
                it[i].pod.gpu_models = &allowed[i];
                it[i].pod.ngpu_models = 1;
            }
        }
        struct gp_cluster c;
        memset(&c, 0, sizeof c);
        c.nodes = n;
        c.nnodes = nn;
        struct gp_workload w = {.items = it, .nitems = ni, .cap = ni};
        for (size_t k = 0; gp_policies[k]; k++) {
            struct gp_arena a;
            gp_arena_init(&a);
            struct gp_sim_config cfg;
            gp_sim_config_default(&cfg);
            cfg.mode = GP_SIM_STATIC;
            cfg.policy = gp_policies[k];
            cfg.seed = 100 + (uint64_t)round;
            cfg.inflate = 1.3;
            struct gp_sim_result res;
            struct gp_diag d = {""};
            assert_int_equal(gp_sim_run(&cfg, &c, &w, &a, &res, &d), GP_OK);
            const struct gp_pod_spec **seq;
            size_t ns;
            assert_int_equal(gp_sim_static_sequence(&cfg, &c, &w, &a, &seq, &ns, &d), GP_OK);
            static const unsigned xs[] = {50, 100, 130};
            for (size_t x = 0; x < 3; x++) {
                struct gp_bound_result r;
                assert_int_equal(gp_bound_at(&c, seq, ns, xs[x], &r, &d), GP_OK);
                assert_true(xs[x] < res.ncurve);
                double got = res.curve[xs[x]].unallocated_pct;
                if (r.unallocated_pct > got + 1e-9) {
                    print_error("round %d, %s at %u%%: unallocated %.6f%% below the bound "
                                "%.6f%%\n",
                                round, gp_policies[k]->name, xs[x], got, r.unallocated_pct);
                    fail();
                }
            }
            gp_arena_free(&a);
        }
    }
}

/* ---- openb ------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The default trace, seed 42, at 100 % arrived: the bound is below FGD's
 * 4.80 % and not trivially low (3.10 % when written; the share sizes alone
 * force about 3 %: 810-milli shares leave slivers few pods can fill). */
static void test_openb(void **state)
{
    (void)state;
    const char *nodes = GP_SHARED_DIR "/data/openb/openb_node_list_gpu_node.csv";
    const char *pods = GP_SHARED_DIR "/data/openb/openb_pod_list_default.csv";
    GP_NEED_SHARED(nodes);
    GP_NEED_SHARED(pods);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    struct gp_workload w;
    memset(&c, 0, sizeof c);
    memset(&w, 0, sizeof w);
    struct gp_diag d = {""};
    char arg[4096];
    snprintf(arg, sizeof arg, "openb:%s", nodes);
    assert_int_equal(gp_cluster_load(arg, &a, &c, &d), GP_OK);
    snprintf(arg, sizeof arg, "openb:%s", pods);
    assert_int_equal(gp_workload_load(arg, &a, &w, &d), GP_OK);

    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.mode = GP_SIM_STATIC;
    cfg.seed = 42;
    cfg.inflate = 1.3;
    const struct gp_pod_spec **seq;
    size_t n;
    assert_int_equal(gp_sim_static_sequence(&cfg, &c, &w, &a, &seq, &n, &d), GP_OK);
    struct gp_bound_result r;
    double t0 = now_s();
    assert_int_equal(gp_bound_at(&c, seq, n, 100, &r, &d), GP_OK);
    double t1 = now_s();

    cfg.policy = gp_policy_find("fgd");
    assert_non_null(cfg.policy);
    struct gp_sim_result res;
    assert_int_equal(gp_sim_run(&cfg, &c, &w, &a, &res, &d), GP_OK);
    print_message("openb default, seed 42, 100 %% arrived (%zu pods): bound %.3f %% unallocated "
                  "(%zu node classes, %zu pod classes, LP %zu x %zu, %.2f s); fgd %.3f %%\n",
                  r.prefix, r.unallocated_pct, r.node_classes, r.pod_classes, r.lp_rows, r.lp_cols,
                  t1 - t0, res.unallocated_gpu_pct_at_100);
    assert_true(r.unallocated_pct <= res.unallocated_gpu_pct_at_100);
    assert_true(r.unallocated_pct >= 2.5);
    assert_true(r.max_alloc_milli <= (double)r.arrived_milli);
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shares_that_cannot_pair),
        cmocka_unit_test(test_slivers),
        cmocka_unit_test(test_multi_gpu_on_odd_node),
        cmocka_unit_test(test_cpu_per_node),
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_small_totals),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_share_modes_apart),
        cmocka_unit_test(test_resource_names_apart),
        cmocka_unit_test(test_caveat),
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_gang_ignored),
        cmocka_unit_test(test_exhaustive),
        cmocka_unit_test(test_policies_under_bound),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_openb),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
