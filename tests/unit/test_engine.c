/* test_engine.c - unit tests of the engine's filters, queue, commit and
 * release, and property tests of its invariants: nothing over-allocated,
 * summaries and totals always equal to what the bound pods add up to. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

static struct gp_node_spec gpu_node(const char *name, const char *model, uint32_t gpus)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = model;
    s.gpu_count = gpus;
    s.gpu_mem_mib = 16384;
    s.cpu_milli = 32000;
    s.mem_mib = 131072;
    return s;
}

static struct gp_pod_spec gpu_pod(const char *name, uint32_t gpus, uint32_t milli)
{
    struct gp_pod_spec s = {0};
    s.name = name;
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = gpus;
    s.gpu_milli = milli;
    return s;
}

static void test_whole_gpus_first_fit(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gpu_node("a", "T4", 2), b = gpu_node("b", "T4", 4);
    assert_int_equal(gp_engine_node_add(e, &a, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, &b, NULL), GP_OK);
    struct gp_pod_spec p4 = gpu_pod("p4", 4, 1000), p2 = gpu_pod("p2", 2, 1000);
    uint32_t id4, id2;
    assert_int_equal(gp_engine_pod_add(e, &p4, 0, &id4), GP_OK);
    assert_int_equal(gp_engine_pod_add(e, &p2, 0, &id2), GP_OK);
    struct gp_decision d[4];
    size_t n = gp_engine_schedule(e, 0, 0, d, 4);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[0].node, 1); /* only b has 4 GPUs */
    assert_int_equal(d[0].pick.ngpus, 4);
    assert_int_equal(d[1].node, 0);
    assert_int_equal(d[1].pick.gpu[0], 0);
    assert_int_equal(d[1].pick.gpu[1], 1);
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    assert_int_equal(t.gpu_milli_alloc, 6000);
    assert_int_equal(t.gpu_milli_total, 6000);
    gp_engine_free(e);
}

static void test_share_best_fit_inside_node(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gpu_node("a", "T4", 2);
    gp_engine_node_add(e, &a, NULL);
    struct gp_pod_spec big = gpu_pod("big", 1, 700), small = gpu_pod("small", 1, 200);
    uint32_t id;
    struct gp_decision d;
    gp_engine_pod_add(e, &big, 0, &id);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.pick.gpu[0], 0);
    /* 300 left on GPU 0, 1000 on GPU 1: a 200 share goes to the fuller GPU 0 */
    gp_engine_pod_add(e, &small, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.pick.gpu[0], 0);
    const struct gp_node *n = gp_engine_node(e, 0);
    assert_int_equal(n->gpu[0].milli_free, 100);
    assert_int_equal(n->gpus_whole_free, 1);
    assert_int_equal(n->gpu_milli_max_free, 1000);
    /* a whole-GPU pod still fits on GPU 1 */
    struct gp_pod_spec whole = gpu_pod("whole", 1, 1000);
    gp_engine_pod_add(e, &whole, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.pick.gpu[0], 1);
    /* and now another 200 share fits nowhere */
    gp_engine_pod_add(e, &small, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_SHARE], 1);
    gp_engine_free(e);
}

static void test_explanations_count_first_filter(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_kv label = {"zone", "a"};
    struct gp_taint taint = {"dedicated", "train", GP_EFFECT_NO_SCHEDULE};
    struct gp_node_spec n0 = gpu_node("n0", "T4", 1), n1 = gpu_node("n1", "A100", 8),
                        n2 = gpu_node("n2", "A100", 8), n3 = gpu_node("n3", "A100", 1);
    n1.taints = &taint;
    n1.ntaints = 1;
    n2.labels = &label;
    n2.nlabels = 1;
    n2.cpu_milli = 500;
    n3.labels = &label;
    n3.nlabels = 1;
    gp_engine_node_add(e, &n0, NULL);
    gp_engine_node_add(e, &n1, NULL);
    gp_engine_node_add(e, &n2, NULL);
    gp_engine_node_add(e, &n3, NULL);
    const char *models[] = {"A100"};
    struct gp_pod_spec p = gpu_pod("p", 4, 1000);
    p.gpu_models = models;
    p.ngpu_models = 1;
    uint32_t id;
    gp_engine_pod_add(e, &p, 0, &id);
    struct gp_decision d;
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.nodes_total, 4);
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_MODEL], 1); /* n0 */
    assert_int_equal(d.explain.rejected[GP_FILTER_TAINT], 1);     /* n1 */
    assert_int_equal(d.explain.rejected[GP_FILTER_CPU], 1);       /* n2 */
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_COUNT], 1); /* n3 */
    /* a toleration and a selector make n1 the only candidate */
    struct gp_toleration tol = {"dedicated", "train", false, false, GP_EFFECT_NO_SCHEDULE};
    struct gp_pod_spec q = p;
    q.tolerations = &tol;
    q.ntolerations = 1;
    gp_engine_pod_add(e, &q, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 1);
    struct gp_pod_spec r = gpu_pod("r", 1, 1000);
    r.node_selector = &label;
    r.nnode_selector = 1;
    gp_engine_pod_add(e, &r, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 3); /* n2 matches the selector but lacks cpu */
    gp_engine_free(e);
}

static void test_explain_main_reason(void **state)
{
    (void)state;
    struct gp_explain x = {0};
    assert_int_equal(gp_explain_main(&x), GP_FILTER_COUNT);
    x.rejected[GP_FILTER_CPU] = 3;
    x.rejected[GP_FILTER_GPU_COUNT] = 5;
    assert_int_equal(gp_explain_main(&x), GP_FILTER_GPU_COUNT);
    x.rejected[GP_FILTER_TAINT] = 5; /* a tie goes to the earlier filter */
    assert_int_equal(gp_explain_main(&x), GP_FILTER_TAINT);
    x.rejected[GP_FILTER_TOPOLOGY] = 9; /* outside a gang's domain: not the reason */
    assert_int_equal(gp_explain_main(&x), GP_FILTER_TAINT);
    struct gp_explain only = {0};
    only.rejected[GP_FILTER_TOPOLOGY] = 2;
    assert_int_equal(gp_explain_main(&only), GP_FILTER_TOPOLOGY);
}

static void test_gpu_memory_filter(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gpu_node("a", "T4", 1); /* 16 GiB */
    gp_engine_node_add(e, &a, NULL);
    struct gp_pod_spec p = gpu_pod("p", 1, 300);
    p.gpu_mem_mib = 10240;
    uint32_t id;
    struct gp_decision d;
    gp_engine_pod_add(e, &p, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    gp_engine_pod_add(e, &p, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_MEMORY], 1);
    gp_engine_free(e);
}

static void test_memory_only_share_blocks_whole_gpu(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gpu_node("a", "T4", 1);
    gp_engine_node_add(e, &a, NULL);
    struct gp_pod_spec mem_only = gpu_pod("m", 1, 0);
    mem_only.gpu_mem_mib = 4096;
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &mem_only, 0, &id), GP_OK);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(gp_engine_node(e, 0)->gpus_whole_free, 0);
    /* the GPU is no longer whole: a whole-GPU pod must not share it */
    struct gp_pod_spec whole = gpu_pod("w", 1, 1000);
    gp_engine_pod_add(e, &whole, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_GPU_COUNT], 1);
    gp_engine_free(e);
}

static void test_queue_order_and_retry_after_release(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gpu_node("a", "T4", 1);
    gp_engine_node_add(e, &a, NULL);
    struct gp_pod_spec low = gpu_pod("low", 1, 1000), high = gpu_pod("high", 1, 1000);
    high.priority = 10;
    uint32_t idl, idh;
    gp_engine_pod_add(e, &low, 0, &idl);
    gp_engine_pod_add(e, &high, 1, &idh);
    struct gp_decision d[4];
    size_t n = gp_engine_schedule(e, 1, 0, d, 4);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].pod, idh); /* priority first, though younger */
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[1].pod, idl);
    assert_int_equal(d[1].kind, GP_DECISION_UNSCHEDULABLE);
    /* nothing changed: the unschedulable pod is not tried again */
    assert_int_equal(gp_engine_schedule(e, 2, 0, d, 4), 0);
    assert_int_equal(gp_engine_pending_count(e), 1);
    assert_int_equal(gp_engine_pod_finished(e, idh), GP_OK);
    n = gp_engine_schedule(e, 3, 0, d, 4);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].pod, idl);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(gp_engine_pod_finished(e, idh), GP_ESTATE);
    gp_engine_free(e);
}

static void test_invalid_requests_rejected(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_pod_spec p = gpu_pod("p", 2, 500); /* a share of two GPUs */
    assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_EINVALID);
    p = gpu_pod("p", 1, 0); /* no compute and no memory: asks for nothing */
    assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_EINVALID);
    p = gpu_pod("p", 1, 1001);
    assert_int_equal(gp_engine_pod_add(e, &p, 0, NULL), GP_EINVALID);
    struct gp_node_spec n = gpu_node("n", "T4", GP_MAX_GPUS_PER_NODE + 1);
    assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_EINVALID);
    assert_int_equal(gp_engine_pod_count(e), 0);
    gp_engine_free(e);
}

static void test_node_remove_needs_empty_node(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = gpu_node("a", "T4", 1);
    gp_engine_node_add(e, &a, NULL);
    struct gp_pod_spec p = gpu_pod("p", 1, 1000);
    uint32_t id;
    struct gp_decision d;
    gp_engine_pod_add(e, &p, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(gp_engine_node_remove(e, 0), GP_ESTATE);
    gp_engine_pod_finished(e, id);
    assert_int_equal(gp_engine_node_remove(e, 0), GP_OK);
    gp_engine_pod_add(e, &p, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d.explain.rejected[GP_FILTER_NODE_STATE], 1);
    gp_engine_free(e);
}

/* ---- property tests ---------------------------------------------------- */

/* A policy that scores at random and picks arbitrary (often invalid) GPUs:
 * the engine must never let a bad pick over-allocate. */
static double chaos_score(void *st, const struct gp_engine *e, const struct gp_node *n,
                          const struct gp_pod *p, struct gp_pick *pick)
{
    (void)st;
    struct gp_rng *r = gp_engine_rng(e);
    pick->ngpus = (uint8_t)p->spec.gpu_count;
    for (uint32_t i = 0; i < pick->ngpus; i++)
        pick->gpu[i] = (uint8_t)gp_rng_below(r, n->spec.gpu_count + 1);
    return gp_rng_unit(r);
}

static const struct gp_policy_ops chaos_policy = {
    .name = "chaos", .summary = "test only", .score = chaos_score};

static const char *const model_names[] = {"T4", "A100", "H100"};
static const struct gp_kv zone_labels[] = {{"zone", "a"}, {"zone", "b"}};
static const struct gp_taint spot_taint = {"spot", "true", GP_EFFECT_NO_SCHEDULE};
static const struct gp_toleration spot_tol = {"spot", NULL, true, true, GP_EFFECT_NO_SCHEDULE};

static void check_invariants(const struct gp_engine *e)
{
    size_t nn = gp_engine_node_count(e);
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    uint64_t milli_alloc = 0;
    int64_t cpu_alloc = 0, mem_alloc = 0;
    for (uint32_t i = 0; i < nn; i++) {
        const struct gp_node *n = gp_engine_node(e, i);
        int64_t cpu = 0, mem = 0;
        uint32_t gmilli[GP_MAX_GPUS_PER_NODE] = {0}, gmem[GP_MAX_GPUS_PER_NODE] = {0};
        uint32_t pods = 0;
        for (uint32_t j = 0; j < gp_engine_pod_count(e); j++) {
            const struct gp_pod *p = gp_engine_pod(e, j);
            if (p->state != GP_POD_BOUND || p->node != i)
                continue;
            pods++;
            cpu += p->spec.cpu_milli;
            mem += p->spec.mem_mib;
            assert_int_equal(p->pick.ngpus, p->spec.gpu_count);
            for (uint32_t g = 0; g < p->pick.ngpus; g++) {
                gmilli[p->pick.gpu[g]] += p->spec.gpu_milli;
                gmem[p->pick.gpu[g]] += p->spec.gpu_mem_mib;
            }
            /* a bound pod met its constraints */
            if (p->spec.gpu_count)
                assert_true(p->model_mask >> n->model & 1);
            if (n->spec.ntaints)
                assert_true(p->spec.ntolerations > 0);
        }
        assert_true(cpu <= n->spec.cpu_milli);
        assert_true(mem <= n->spec.mem_mib);
        assert_int_equal(n->cpu_free_milli, n->spec.cpu_milli - cpu);
        assert_int_equal(n->mem_free_mib, n->spec.mem_mib - mem);
        assert_int_equal(n->pods, pods);
        uint32_t whole = 0, sum = 0, max = 0;
        uint32_t gpods[GP_MAX_GPUS_PER_NODE] = {0};
        bool gwhole[GP_MAX_GPUS_PER_NODE] = {false};
        for (uint32_t j = 0; j < gp_engine_pod_count(e); j++) {
            const struct gp_pod *p = gp_engine_pod(e, j);
            if (p->state == GP_POD_BOUND && p->node == i)
                for (uint32_t g = 0; g < p->pick.ngpus; g++) {
                    gpods[p->pick.gpu[g]]++;
                    gwhole[p->pick.gpu[g]] |= p->spec.gpu_milli == GP_GPU_MILLI;
                }
        }
        for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
            /* a whole GPU is never shared */
            if (gwhole[g])
                assert_true(gpods[g] == 1);
            assert_true(gmilli[g] <= GP_GPU_MILLI);
            assert_true(gmem[g] <= n->spec.gpu_mem_mib);
            uint32_t mem_free = gwhole[g] ? 0 : n->spec.gpu_mem_mib - gmem[g];
            assert_int_equal(n->gpu[g].mem_free_mib, mem_free);
            assert_int_equal(n->gpu[g].milli_free, GP_GPU_MILLI - gmilli[g]);
            whole += gpods[g] == 0;
            sum += GP_GPU_MILLI - gmilli[g];
            if (GP_GPU_MILLI - gmilli[g] > max)
                max = GP_GPU_MILLI - gmilli[g];
            milli_alloc += gmilli[g];
        }
        assert_int_equal(n->gpus_whole_free, whole);
        assert_int_equal(n->gpu_milli_free, sum);
        assert_int_equal(n->gpu_milli_max_free, max);
        cpu_alloc += cpu;
        mem_alloc += mem;
    }
    assert_int_equal(t.gpu_milli_alloc, milli_alloc);
    assert_int_equal(t.cpu_milli_alloc, cpu_alloc);
    assert_int_equal(t.mem_mib_alloc, mem_alloc);
}

static void random_node(struct gp_rng *r, struct gp_node_spec *s, char *name)
{
    static const uint32_t gpu_counts[] = {0, 1, 2, 4, 8, 16};
    memset(s, 0, sizeof *s);
    s->name = name;
    s->gpu_count = gpu_counts[gp_rng_below(r, 6)];
    s->gpu_model = model_names[gp_rng_below(r, 3)];
    s->gpu_mem_mib = (uint32_t)(8192 << gp_rng_below(r, 4));
    s->cpu_milli = (int64_t)(4000 + gp_rng_below(r, 8) * 8000);
    s->mem_mib = (int64_t)(16384 + gp_rng_below(r, 8) * 32768);
    if (gp_rng_below(r, 3) == 0) {
        s->labels = &zone_labels[gp_rng_below(r, 2)];
        s->nlabels = 1;
    }
    if (gp_rng_below(r, 5) == 0) {
        s->taints = &spot_taint;
        s->ntaints = 1;
    }
}

static void random_pod(struct gp_rng *r, struct gp_pod_spec *s)
{
    static const uint32_t whole[] = {1, 2, 4, 8};
    memset(s, 0, sizeof *s);
    s->name = "p";
    s->cpu_milli = (int64_t)(100 + gp_rng_below(r, 16000));
    s->mem_mib = (int64_t)(256 + gp_rng_below(r, 65536));
    switch (gp_rng_below(r, 4)) {
    case 0:
        break; /* CPU only */
    case 1:
        s->gpu_count = 1;
        s->gpu_milli = (uint32_t)(gp_rng_below(r, 8) ? 50 + gp_rng_below(r, 950) : 0);
        if (s->gpu_milli == 0 || gp_rng_below(r, 2))
            s->gpu_mem_mib = (uint32_t)(1024 + gp_rng_below(r, 16384));
        break;
    default:
        s->gpu_count = whole[gp_rng_below(r, 4)];
        s->gpu_milli = GP_GPU_MILLI;
        break;
    }
    if (gp_rng_below(r, 4) == 0) {
        s->gpu_models = &model_names[gp_rng_below(r, 3)];
        s->ngpu_models = 1;
    }
    if (gp_rng_below(r, 6) == 0) {
        s->node_selector = &zone_labels[gp_rng_below(r, 2)];
        s->nnode_selector = 1;
    }
    if (gp_rng_below(r, 3) == 0) {
        s->tolerations = &spot_tol;
        s->ntolerations = 1;
    }
    s->priority = (int32_t)gp_rng_below(r, 3);
}

static void run_property_case(uint64_t seed, const struct gp_policy_ops *policy)
{
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    struct gp_engine *e = gp_engine_new(policy, seed);
    assert_non_null(e);
    char names[20][16];
    uint32_t nnodes = 1 + (uint32_t)gp_rng_below(&r, 12);
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec s;
        snprintf(names[i], sizeof names[i], "n%u", i);
        random_node(&r, &s, names[i]);
        assert_int_equal(gp_engine_node_add(e, &s, NULL), GP_OK);
    }
    struct gp_decision d[64];
    for (int step = 0; step < 60; step++) {
        uint64_t op = gp_rng_below(&r, 10);
        if (op < 5) {
            struct gp_pod_spec s;
            random_pod(&r, &s);
            assert_int_equal(gp_engine_pod_add(e, &s, step, NULL), GP_OK);
        } else if (op < 8) {
            size_t n = gp_engine_schedule(e, step, gp_rng_below(&r, 4), d, 64);
            for (size_t i = 0; i < n; i++) {
                const struct gp_pod *p = gp_engine_pod(e, d[i].pod);
                if (d[i].kind == GP_DECISION_BIND) {
                    assert_int_equal(p->state, GP_POD_BOUND);
                    assert_int_equal(p->node, d[i].node);
                } else {
                    uint32_t sum = 0;
                    for (int f = 0; f < GP_FILTER_COUNT; f++)
                        sum += d[i].explain.rejected[f];
                    assert_int_equal(sum, nnodes); /* every node is explained */
                }
            }
        } else if (gp_engine_pod_count(e) > 0) {
            uint32_t id = (uint32_t)gp_rng_below(&r, gp_engine_pod_count(e));
            if (gp_engine_pod(e, id)->state != GP_POD_DONE)
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
        }
        check_invariants(e);
    }
    gp_engine_free(e);
}

static void test_property_nothing_over_allocated(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 1500; seed++)
        run_property_case(seed, seed % 2 ? NULL : &chaos_policy);
}

/* The same calls give the same decisions. */
static void test_property_deterministic(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint32_t nodes_a[64], nodes_b[64];
        size_t na = 0, nb = 0;
        for (int run = 0; run < 2; run++) {
            struct gp_rng r;
            gp_rng_seed(&r, seed);
            struct gp_engine *e = gp_engine_new(&chaos_policy, seed);
            char names[20][16];
            for (uint32_t i = 0; i < 8; i++) {
                struct gp_node_spec s;
                snprintf(names[i], sizeof names[i], "n%u", i);
                random_node(&r, &s, names[i]);
                gp_engine_node_add(e, &s, NULL);
            }
            for (int i = 0; i < 64; i++) {
                struct gp_pod_spec s;
                random_pod(&r, &s);
                gp_engine_pod_add(e, &s, 0, NULL);
            }
            struct gp_decision d[64];
            size_t n = gp_engine_schedule(e, 0, 0, d, 64);
            for (size_t i = 0; i < n; i++) {
                uint32_t v = d[i].kind == GP_DECISION_BIND ? d[i].node : UINT32_MAX;
                if (run == 0)
                    nodes_a[na++] = v;
                else
                    nodes_b[nb++] = v;
            }
            gp_engine_free(e);
        }
        assert_int_equal(na, nb);
        assert_memory_equal(nodes_a, nodes_b, na * sizeof nodes_a[0]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_gpus_first_fit),
        cmocka_unit_test(test_share_best_fit_inside_node),
        cmocka_unit_test(test_explanations_count_first_filter),
        cmocka_unit_test(test_explain_main_reason),
        cmocka_unit_test(test_gpu_memory_filter),
        cmocka_unit_test(test_memory_only_share_blocks_whole_gpu),
        cmocka_unit_test(test_queue_order_and_retry_after_release),
        cmocka_unit_test(test_invalid_requests_rejected),
        cmocka_unit_test(test_node_remove_needs_empty_node),
        cmocka_unit_test(test_property_nothing_over_allocated),
        cmocka_unit_test(test_property_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
