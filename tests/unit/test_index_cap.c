/* test_index_cap.c - the capacity index (src/engine/index.c,
 * gp_eng_cand_begin/next): on seeded random clusters (GPU models, no
 * sharing spec, exclusive, time-sliced, MPS and MIG GPUs, GPU-less nodes,
 * taints) changed by random binds, releases, drains, removals and new
 * nodes, the candidates of a random pod (whole GPUs, shares, memory-only
 * shares, replicas, MIG instances, CPU only, model constraints) come in
 * increasing node id and include every node the full scan's filters
 * (filter_own) pass; and the index leaves out most other nodes. Then, with
 * more request shapes than the rankings keep (each pod its own shape), the
 * decisions are those of the engine without the index (every node
 * scanned), with fewer nodes looked at (gp_engine_place_stats). And the
 * explanation of a pod that fits nowhere, counted from the index's
 * branches, is the count node by node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/internal.h"
#include "util/rng.h"

#define MAX_NODES 400

static const char *const models[] = {"A100-80GB", "H100-80GB", "L4"};
static const char *const only_h100[] = {"H100-80GB"};
static const char *const a100_l4[] = {"A100-80GB", "L4"};
static const struct gp_taint spot_taint[] = {{"spot", "true", GP_EFFECT_NO_SCHEDULE}};
static const struct gp_toleration spot_tol[] = {
    {"spot", "true", false, false, GP_EFFECT_NO_SCHEDULE}};

static struct gp_sharing_spec ex_spec, ts_spec, mps_spec, mig_spec;
static char node_names[MAX_NODES][16];

static void sharing_init(void)
{
    memset(&ex_spec, 0, sizeof ex_spec);
    ex_spec.mode = GP_SHARE_EXCLUSIVE;
    ex_spec.replicas = 1;
    memset(&ts_spec, 0, sizeof ts_spec);
    ts_spec.mode = GP_SHARE_TIMESLICE;
    ts_spec.replicas = 4;
    memset(&mps_spec, 0, sizeof mps_spec);
    mps_spec.mode = GP_SHARE_MPS;
    mps_spec.replicas = 4;
    mps_spec.mps.active_thread_pct = 50;
    memset(&mig_spec, 0, sizeof mig_spec);
    mig_spec.mode = GP_SHARE_MIG;
    mig_spec.replicas = 1;
    mig_spec.mig.model = gp_mig_model_find("A100-80GB");
    assert_non_null(mig_spec.mig.model);
    mig_spec.mig.dynamic = true;
}

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
    if (gp_rng_below(r, 8) == 0) {
        n.taints = spot_taint;
        n.ntaints = 1;
    }
    uint64_t s = gp_rng_below(r, 8);
    if (n.gpu_count && s == 0)
        n.sharing = &ts_spec;
    else if (n.gpu_count && s == 1)
        n.sharing = &mps_spec;
    else if (n.gpu_count && s == 2)
        n.sharing = &ex_spec;
    else if (n.gpu_count && n.gpu_count <= 8 && s == 3) {
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
    s.cpu_milli = 250 * (int64_t)gp_rng_below(r, 97);
    s.mem_mib = 1024 * (int64_t)gp_rng_below(r, 129);
    s.gpu_count = counts[gp_rng_below(r, 7)];
    s.gpu_milli = s.gpu_count ? GP_GPU_MILLI : 0;
    uint64_t kind = gp_rng_below(r, 6);
    if (s.gpu_count && kind == 0) { /* a share of one GPU */
        s.gpu_count = 1;
        s.gpu_milli = 100 * (uint32_t)(1 + gp_rng_below(r, 9));
        s.gpu_mem_mib = gp_rng_below(r, 2) ? 10240 : 0;
    } else if (s.gpu_count && kind == 1) { /* memory only */
        s.gpu_count = 1;
        s.gpu_milli = 0;
        s.gpu_mem_mib = 20480;
    } else if (s.gpu_count && kind == 2) { /* MIG instances */
        s.gpu_count = 1 + (uint32_t)gp_rng_below(r, 2);
        s.gpu_milli = 142;
        s.gpu_mem_mib = 10240;
        s.mig_profile = gp_rng_below(r, 2) ? "1g.10gb" : "3g.40gb";
        s.share_modes = 1u << GP_SHARE_MIG;
    } else if (s.gpu_count && kind == 3) { /* replicas */
        s.share_modes = 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS;
    }
    uint64_t m = gp_rng_below(r, 5);
    if (m == 0) {
        s.gpu_models = only_h100;
        s.ngpu_models = 1;
    } else if (m == 1) {
        s.gpu_models = a100_l4;
        s.ngpu_models = 2;
    }
    if (gp_rng_below(r, 4) == 0) {
        s.tolerations = spot_tol;
        s.ntolerations = 1;
    }
    return s;
}

/* Random changes: pods bound (where the default choice puts them), some
 * finished, nodes drained, removed and added. */
static void churn(struct gp_engine *e, struct gp_rng *r, double now)
{
    uint64_t adds = 20 + gp_rng_below(r, 60);
    for (uint64_t k = 0; k < adds; k++) {
        struct gp_pod_spec ps = rand_pod(r);
        uint32_t id;
        assert_int_equal(gp_engine_pod_add(e, &ps, now, &id), GP_OK);
    }
    static struct gp_decision d[4096];
    gp_engine_schedule(e, now, 0, d, 4096);
    size_t npods = gp_engine_pod_count(e);
    for (uint32_t id = 0; id < npods; id++)
        if (gp_engine_pod(e, id)->state != GP_POD_DONE && gp_rng_below(r, 5) == 0)
            assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
    uint32_t node = (uint32_t)gp_rng_below(r, gp_engine_node_count(e));
    uint64_t ev = gp_rng_below(r, 6);
    if (ev == 0 && gp_engine_node_count(e) < MAX_NODES - 30) {
        uint64_t more = 1 + gp_rng_below(r, 30);
        for (uint64_t k = 0; k < more; k++) {
            struct gp_node_spec ns = rand_node(r, (uint32_t)gp_engine_node_count(e));
            assert_int_equal(gp_engine_node_add(e, &ns, NULL), GP_OK);
        }
    } else if (ev == 1 && gp_engine_node(e, node)->state == GP_NODE_READY) {
        assert_int_equal(gp_engine_node_drain(e, node), GP_OK);
    } else if (ev == 2 && gp_engine_node(e, node)->state != GP_NODE_GONE &&
               gp_engine_node(e, node)->pods == 0) {
        assert_int_equal(gp_engine_node_remove(e, node), GP_OK);
    }
}

static void test_candidates_hold_every_fit(void **state)
{
    (void)state;
    sharing_init();
    unsigned long fits = 0, walked = 0, looked = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), seed);
        assert_non_null(e);
        struct gp_rng r;
        gp_rng_seed(&r, seed);
        uint32_t nnodes = 20 + (uint32_t)gp_rng_below(&r, 200);
        for (uint32_t i = 0; i < nnodes; i++) {
            struct gp_node_spec n = rand_node(&r, i);
            assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        }
        for (int step = 0; step < 25; step++) {
            churn(e, &r, step);
            for (int t = 0; t < 40; t++) { /* pods that are asked about, not placed */
                struct gp_pod_spec ps = rand_pod(&r);
                uint32_t id;
                assert_int_equal(gp_engine_pod_add(e, &ps, step, &id), GP_OK);
                const struct gp_pod *p = gp_engine_pod(e, id);
                static unsigned char in[MAX_NODES];
                memset(in, 0, sizeof in);
                struct cand_walk w;
                assert_true(gp_eng_cand_begin(e, p, &w));
                uint32_t i, last = NONE;
                while ((i = gp_eng_cand_next(&w)) != NONE) {
                    assert_true(i < gp_engine_node_count(e));
                    assert_true(last == NONE || i > last); /* node order, each once */
                    last = i;
                    in[i] = 1;
                    walked++;
                }
                for (uint32_t n = 0; n < gp_engine_node_count(e); n++) {
                    looked++;
                    if (filter_own(e, gp_engine_node(e, n), p) != GP_FILTER_COUNT)
                        continue;
                    fits++;
                    if (!in[n]) {
                        print_error("seed %llu step %d: node %u passes the filters, not a "
                                    "candidate\n",
                                    (unsigned long long)seed, step, n);
                        fail();
                    }
                }
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
            }
        }
        gp_engine_free(e);
    }
    /* the walks matter: some fit, and most nodes that do not are left out */
    assert_true(fits > 10000);
    assert_true(walked < fits + (looked - fits) / 2);
}

/* Every pod its own shape (more than the rankings keep): the decisions of
 * the engine with the index and without it, and the nodes looked at. */
static size_t run(const char *policy, bool index, uint64_t seed, struct gp_decision *out,
                  size_t cap, uint64_t *visits)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find(policy), seed);
    assert_non_null(e);
    gp_engine_set_index(e, index, index);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    for (uint32_t i = 0; i < 300; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    struct gp_pod_spec target[4];
    for (size_t i = 0; i < 4; i++)
        target[i] = rand_pod(&r);
    gp_engine_set_target(e, target, NULL, 4, 1.0);
    size_t nout = 0;
    for (int step = 0; step < 40; step++) {
        for (int k = 0; k < 60; k++) {
            struct gp_pod_spec ps = rand_pod(&r);
            ps.cpu_milli = 1 + (int64_t)(step * 60 + k); /* a shape of its own */
            uint32_t id;
            assert_int_equal(gp_engine_pod_add(e, &ps, step, &id), GP_OK);
        }
        assert_true(nout < cap);
        nout += gp_engine_schedule(e, step, 0, out + nout, cap - nout);
        size_t npods = gp_engine_pod_count(e);
        for (uint32_t id = 0; id < npods; id++)
            if (gp_engine_pod(e, id)->state == GP_POD_BOUND && gp_rng_below(&r, 3) == 0)
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
    }
    gp_engine_place_stats(e, NULL, visits);
    gp_engine_free(e);
    return nout;
}

static void test_distinct_shapes_same_decisions(void **state)
{
    (void)state;
    sharing_init();
    enum { CAP = 100000 };
    static struct gp_decision a[CAP], b[CAP];
    static const char *const policies[] = {"best-fit", "random", "fgd", "fgd-pack", "spread"};
    for (size_t pi = 0; pi < sizeof policies / sizeof policies[0]; pi++) {
        uint64_t va = 0, vb = 0;
        size_t binds = 0, fails = 0;
        for (uint64_t seed = 1; seed <= 3; seed++) {
            uint64_t v1, v2;
            size_t n1 = run(policies[pi], true, seed, a, CAP, &v1);
            size_t n2 = run(policies[pi], false, seed, b, CAP, &v2);
            va += v1;
            vb += v2;
            assert_int_equal(n1, n2);
            for (size_t k = 0; k < n1; k++) {
                if (a[k].kind != b[k].kind || a[k].pod != b[k].pod || a[k].node != b[k].node ||
                    memcmp(&a[k].explain, &b[k].explain, sizeof a[k].explain) != 0 ||
                    (a[k].kind == GP_DECISION_BIND &&
                     memcmp(&a[k].pick, &b[k].pick, sizeof a[k].pick) != 0)) {
                    print_error("%s seed %llu decision %zu: pod %u/%u node %u/%u\n", policies[pi],
                                (unsigned long long)seed, k, a[k].pod, b[k].pod, a[k].node,
                                b[k].node);
                    fail();
                }
                binds += a[k].kind == GP_DECISION_BIND;
                fails += a[k].kind == GP_DECISION_UNSCHEDULABLE;
            }
        }
        print_message("%s: %zu binds, %zu fails, nodes looked at %llu / %llu\n", policies[pi],
                      binds, fails, (unsigned long long)va, (unsigned long long)vb);
        assert_true(binds > 1000 && fails > 100);
        /* fewer: a node a filter rejects is looked at only when the pod
         * fits nowhere (here many small pods fit most nodes: random scores
         * them all, as it must) */
        assert_true(va < vb);
    }
}

/* The explanation counted from the capacity index (gp_eng_cand_explain)
 * is the count of every node's first failing filter (filter_own), on the
 * random clusters above with drivers of several versions; then, in a
 * nearly full cluster, a pod that fits nowhere is explained looking at a
 * few branches, not every node (the count node by node of before looked
 * at all 2,000). */
static void test_explain_counts(void **state)
{
    (void)state;
    sharing_init();
    static const uint32_t drivers[] = {0, 52506, 53554, 55006};
    unsigned long pods = 0, rejected = 0;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), seed);
        assert_non_null(e);
        struct gp_rng r;
        gp_rng_seed(&r, seed);
        uint32_t nnodes = 20 + (uint32_t)gp_rng_below(&r, 200);
        for (uint32_t i = 0; i < nnodes; i++) {
            struct gp_node_spec n = rand_node(&r, i);
            n.driver_version = seed % 2 ? drivers[gp_rng_below(&r, 4)] : 0;
            assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
        }
        for (int step = 0; step < 20; step++) {
            churn(e, &r, step);
            for (int t = 0; t < 40; t++) {
                struct gp_pod_spec ps = rand_pod(&r);
                ps.cuda_driver_min = gp_rng_below(&r, 3) == 0 ? drivers[gp_rng_below(&r, 4)] : 0;
                uint32_t id;
                assert_int_equal(gp_engine_pod_add(e, &ps, step, &id), GP_OK);
                const struct gp_pod *p = gp_engine_pod(e, id);
                uint32_t want[GP_FILTER_COUNT] = {0}, got[GP_FILTER_COUNT];
                for (uint32_t n = 0; n < gp_engine_node_count(e); n++) {
                    enum gp_filter f = filter_own(e, gp_engine_node(e, n), p);
                    if (f != GP_FILTER_COUNT)
                        want[f]++, rejected++;
                }
                assert_true(gp_eng_cand_explain(e, p, got));
                for (int f = 0; f < GP_FILTER_COUNT; f++)
                    if (got[f] != want[f]) {
                        print_error("seed %llu step %d: %s counted %u, the nodes say %u\n",
                                    (unsigned long long)seed, step,
                                    gp_filter_name((enum gp_filter)f), got[f], want[f]);
                        fail();
                    }
                pods++;
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
            }
        }
        gp_engine_free(e);
    }
    assert_true(pods == 16 * 20 * 40 && rejected > 100000);

    /* 2,000 8-GPU nodes with 7 GPUs taken each; a pod asking 8 fits nowhere */
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    for (uint32_t i = 0; i < 2000; i++) {
        struct gp_node_spec n = {.name = "n",
                                 .gpu_model = i % 2 ? "A100-80GB" : "H100-80GB",
                                 .gpu_count = 8,
                                 .gpu_mem_mib = 81920,
                                 .cpu_milli = 128000,
                                 .mem_mib = 1 << 20};
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    struct gp_pod_spec seven = {.name = "s",
                                .gpu_count = 7,
                                .gpu_milli = GP_GPU_MILLI,
                                .cpu_milli = 1000 + (int64_t)0,
                                .mem_mib = 1024};
    static struct gp_decision d[2048];
    for (uint32_t i = 0; i < 2000; i++) {
        seven.cpu_milli = 1000 + i % 7; /* a few shapes */
        assert_int_equal(gp_engine_pod_add(e, &seven, 0, NULL), GP_OK);
    }
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 2048), 2000);
    uint64_t p0, v0, p1, v1;
    gp_engine_place_stats(e, &p0, &v0);
    struct gp_pod_spec eight = {
        .name = "e", .gpu_count = 8, .gpu_milli = GP_GPU_MILLI, .cpu_milli = 1000, .mem_mib = 1024};
    for (int k = 0; k < 10; k++) {
        eight.cpu_milli = 2000 + k; /* each its own shape */
        assert_int_equal(gp_engine_pod_add(e, &eight, 1, NULL), GP_OK);
    }
    assert_int_equal(gp_engine_schedule(e, 1, 0, d, 2048), 10);
    for (int k = 0; k < 10; k++) {
        assert_int_equal(d[k].kind, GP_DECISION_UNSCHEDULABLE);
        assert_int_equal(d[k].explain.nodes_total, 2000);
        assert_int_equal(d[k].explain.rejected[GP_FILTER_GPU_COUNT], 2000);
    }
    gp_engine_place_stats(e, &p1, &v1);
    print_message("nearly full: %llu nodes looked at for %llu placements\n",
                  (unsigned long long)(v1 - v0), (unsigned long long)(p1 - p0));
    assert_true(p1 - p0 == 10 && v1 - v0 < 10 * 20);
    gp_engine_free(e);
}

/* A MIG shape that keeps failing (the sharing test is the node's: no
 * count by branches) is explained from its ranking's counts once the
 * ranking is complete, not by a filter run on every node each time: 200
 * MIG nodes full of 7g.80gb instances, a 7g.80gb pod retried in 10 cycles
 * (a pod elsewhere ends before each) looks at a few nodes a cycle. */
static void test_explain_repeated_mig(void **state)
{
    (void)state;
    sharing_init();
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    for (uint32_t i = 0; i < 201; i++) {
        struct gp_node_spec n = {.name = "n",
                                 .gpu_model = "A100-80GB",
                                 .gpu_count = 8,
                                 .gpu_mem_mib = 81920,
                                 .cpu_milli = 128000,
                                 .mem_mib = 1 << 20};
        if (i < 200)
            n.sharing = &mig_spec;
        else
            n.gpu_count = 0, n.gpu_model = NULL; /* where the CPU pods go */
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    struct gp_pod_spec big = {.name = "m",
                              .gpu_count = 1,
                              .gpu_milli = 1000,
                              .gpu_mem_mib = 81920,
                              .cpu_milli = 100,
                              .mem_mib = 1024,
                              .mig_profile = "7g.80gb",
                              .share_modes = 1u << GP_SHARE_MIG};
    struct gp_pod_spec cpu = {.name = "c", .cpu_milli = 100, .mem_mib = 1024};
    static struct gp_decision d[4096];
    uint32_t cpu_ids[10];
    for (uint32_t i = 0; i < 1600; i++)
        assert_int_equal(gp_engine_pod_add(e, &big, 0, NULL), GP_OK);
    for (int k = 0; k < 10; k++)
        assert_int_equal(gp_engine_pod_add(e, &cpu, 0, &cpu_ids[k]), GP_OK);
    size_t n = gp_engine_schedule(e, 0, 0, d, 4096), binds = 0;
    for (size_t i = 0; i < n; i++)
        binds += d[i].kind == GP_DECISION_BIND;
    assert_int_equal(binds, 1610);
    assert_int_equal(gp_engine_pod_add(e, &big, 1, NULL), GP_OK); /* fits nowhere */
    gp_engine_schedule(e, 1, 0, d, 4096);
    assert_int_equal(gp_engine_pod_add(e, &big, 1, NULL), GP_OK); /* its ranking's fill */
    gp_engine_schedule(e, 2, 0, d, 4096);
    uint64_t p0, v0, p1, v1;
    gp_engine_place_stats(e, &p0, &v0);
    for (int k = 0; k < 10; k++) {
        assert_int_equal(gp_engine_pod_finished(e, cpu_ids[k]), GP_OK);
        n = gp_engine_schedule(e, 3 + k, 0, d, 4096);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(d[i].kind, GP_DECISION_UNSCHEDULABLE);
            assert_int_equal(d[i].explain.rejected[GP_FILTER_MIG], 200);
        }
    }
    gp_engine_place_stats(e, &p1, &v1);
    print_message("repeated MIG failure: %llu nodes looked at for %llu placements\n",
                  (unsigned long long)(v1 - v0), (unsigned long long)(p1 - p0));
    assert_true(p1 > p0);
    assert_true(v1 - v0 <= 8 * (p1 - p0) + 201);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_candidates_hold_every_fit),
        cmocka_unit_test(test_distinct_shapes_same_decisions),
        cmocka_unit_test(test_explain_counts),
        cmocka_unit_test(test_explain_repeated_mig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
