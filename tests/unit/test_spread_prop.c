/* test_spread_prop.c - property: a DoNotSchedule topology spread
 * constraint is never exceeded. Over seeded random clusters (zones, nodes
 * without the key, node sizes, drains), groups of pods with one or two
 * constraints (zone and hostname, random maxSkew), pods of other labels
 * that come and go, and four policies, after every cycle each group's
 * pods differ by at most maxSkew between any two domains of each of its
 * constraints, counted here from the pods themselves (the engine's
 * incremental counts are not trusted). Only the group's own pods match
 * its selector and none of them is released, so the bound holds by
 * induction from the empty cluster, as in kube-scheduler. Also: once the
 * cycles settle no pending pod has a node the engine's own filter would
 * give it (a failure remembered too long would leave one waiting: a pod
 * whose spreading a bind elsewhere satisfied, say). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "util/rng.h"

#define ZONE    "topology.kubernetes.io/zone"
#define HOST    "kubernetes.io/hostname"
#define NODES   12
#define ZONES   4
#define GROUPS  3
#define MAXPODS 160

static const char *const zone_names[ZONES] = {"z0", "z1", "z2", "z3"};
static const char *const node_names[NODES] = {"n0", "n1", "n2", "n3", "n4",  "n5",
                                              "n6", "n7", "n8", "n9", "n10", "n11"};
static const char *const group_names[GROUPS] = {"g0", "g1", "g2"};

struct world {
    struct gp_kv labels[NODES][1];
    size_t nnodes, nzones;
    bool keyed[NODES]; /* has the zone label */
    struct gp_kv app[GROUPS][1], other[1];
    struct gp_spread spread[GROUPS][2];
    struct gp_pod_constraints cons[GROUPS];
    int group_of[MAXPODS]; /* -1: a pod of another label */
    size_t npods;
};

/* Matching pods per domain of constraint c of group g; false if some
 * pair of domains differs by more than maxSkew. */
static bool skew_ok(const struct gp_engine *e, const struct world *w, int g, int c)
{
    const struct gp_spread *s = &w->spread[g][c];
    bool zone = strcmp(s->topology_key, ZONE) == 0;
    int count[NODES] = {0};
    bool domain[NODES] = {false};
    for (size_t i = 0; i < w->nnodes; i++) {
        const struct gp_node *n = gp_engine_node(e, (uint32_t)i);
        if (n->state == GP_NODE_GONE || (zone && !w->keyed[i]))
            continue;
        /* the group's pods may only use nodes with every key of theirs:
         * with a zone constraint, a node without the zone has no domain */
        if (!zone && w->cons[g].nspread == 2 && !w->keyed[i])
            continue;
        domain[zone ? (size_t)(w->labels[i][0].value[1] - '0') : i] = true;
    }
    for (size_t p = 0; p < w->npods; p++) {
        const struct gp_pod *pod = gp_engine_pod(e, (uint32_t)p);
        if (w->group_of[p] != g || pod->state != GP_POD_BOUND)
            continue;
        size_t d = zone ? (size_t)(w->labels[pod->node][0].value[1] - '0') : pod->node;
        count[d]++;
    }
    int lo = 1 << 30, hi = 0;
    for (size_t d = 0; d < NODES; d++) {
        if (!domain[d])
            continue;
        if (count[d] < lo)
            lo = count[d];
        if (count[d] > hi)
            hi = count[d];
    }
    return hi <= lo || hi - lo <= s->max_skew;
}

static void one_case(uint64_t seed)
{
    static const char *const policies[] = {"best-fit", "spread", "random", "gpu-packing", "fgd"};
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    struct world w;
    memset(&w, 0, sizeof w);
    const char *policy = policies[gp_rng_below(&r, 5)];
    struct gp_engine *e = gp_engine_new(gp_policy_find(policy), seed);
    assert_non_null(e);
    w.nnodes = 3 + gp_rng_below(&r, NODES - 2);
    w.nzones = 1 + gp_rng_below(&r, ZONES);
    for (size_t i = 0; i < w.nnodes; i++) {
        w.keyed[i] = gp_rng_below(&r, 10) != 0;
        w.labels[i][0].key = w.keyed[i] ? ZONE : "other";
        w.labels[i][0].value = zone_names[gp_rng_below(&r, w.nzones)];
        struct gp_node_spec s = {0};
        s.name = node_names[i];
        s.gpu_model = "H100";
        s.gpu_count = 1 + (uint32_t)gp_rng_below(&r, 8);
        s.gpu_mem_mib = 81920;
        s.cpu_milli = 64000;
        s.mem_mib = 1 << 20;
        s.labels = w.labels[i];
        s.nlabels = 1;
        assert_int_equal(gp_engine_node_add(e, &s, NULL), GP_OK);
    }
    for (int g = 0; g < GROUPS; g++) {
        w.app[g][0].key = "app";
        w.app[g][0].value = group_names[g];
        size_t nc = 1 + gp_rng_below(&r, 2);
        for (size_t c = 0; c < nc; c++) {
            struct gp_spread *s = &w.spread[g][c];
            s->max_skew = 1 + (int32_t)gp_rng_below(&r, 3);
            s->topology_key = c == 0 ? ZONE : HOST;
            s->selector.set = true;
            s->selector.labels = w.app[g];
            s->selector.nlabels = 1;
        }
        w.cons[g].spread = w.spread[g];
        w.cons[g].nspread = nc;
    }
    w.other[0].key = "app";
    w.other[0].value = "other";
    for (int round = 0; round < 12; round++) {
        size_t add = gp_rng_below(&r, 14);
        for (size_t k = 0; k < add && w.npods < MAXPODS; k++) {
            int g = (int)gp_rng_below(&r, GROUPS + 1) - 1;
            struct gp_pod_spec s = {0};
            s.name = "p";
            s.cpu_milli = 1000;
            s.mem_mib = 1024;
            s.gpu_count = 1 + (gp_rng_below(&r, 4) == 0);
            s.gpu_milli = GP_GPU_MILLI;
            s.labels = g >= 0 ? w.app[g] : w.other;
            s.nlabels = 1;
            s.constraints = g >= 0 ? &w.cons[g] : NULL;
            uint32_t id;
            assert_int_equal(gp_engine_pod_add(e, &s, round, &id), GP_OK);
            w.group_of[id] = g;
            w.npods = id + 1;
        }
        /* pods of other labels end; once in a while a node is drained */
        for (size_t p = 0; p < w.npods; p++)
            if (w.group_of[p] < 0 && gp_engine_pod(e, (uint32_t)p)->state == GP_POD_BOUND &&
                gp_rng_below(&r, 3) == 0)
                assert_int_equal(gp_engine_pod_finished(e, (uint32_t)p), GP_OK);
        if (gp_rng_below(&r, 8) == 0)
            gp_engine_node_drain(e, (uint32_t)gp_rng_below(&r, w.nnodes));
        struct gp_decision d[2 * MAXPODS + 8];
        gp_engine_schedule(e, round, 0, d, sizeof d / sizeof d[0]);
        for (int g = 0; g < GROUPS; g++)
            for (size_t c = 0; c < w.cons[g].nspread; c++)
                if (!skew_ok(e, &w, g, (int)c))
                    fail_msg("seed %llu round %d (%s): group %d constraint %zu exceeds maxSkew %d",
                             (unsigned long long)seed, round, policy, g, c,
                             w.spread[g][c].max_skew);
    }
    struct gp_decision d[2 * MAXPODS + 8];
    gp_engine_schedule(e, 100, 0, d, sizeof d / sizeof d[0]);
    for (size_t p = 0; p < w.npods; p++) {
        const struct gp_pod *pod = gp_engine_pod(e, (uint32_t)p);
        if (pod->state != GP_POD_PENDING)
            continue;
        for (uint32_t i = 0; i < w.nnodes; i++)
            if (gp_engine_filter(e, gp_engine_node(e, i), pod) == GP_FILTER_COUNT)
                fail_msg("seed %llu (%s): pod %zu pending, though node %u fits it",
                         (unsigned long long)seed, policy, p, i);
    }
    gp_engine_free(e);
}

static void test_skew_never_exceeded(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 600; seed++)
        one_case(seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skew_never_exceeded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
