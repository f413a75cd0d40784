/* test_interpod_index.c - property: with pods of required pod
 * anti-affinity bound, the node index (index.c's rankings, and
 * gp_eng_index_place_excl for the pods an anti-affinity term concerns)
 * makes exactly the decisions of the scan of every node - the same node,
 * the same GPUs, the same explanation - on seeded random clusters (zones,
 * nodes without the zone label, nodes added and drained) with pods of
 * hostname and zone anti-affinity (their own terms, terms matching other
 * pods, a term of another namespace), plain pods of labels such terms
 * select or not, pods finishing, under the node-local policies and none.
 * The runs with the index off are the reference. Also: the index visits
 * far fewer nodes than the scan (before gp_eng_interpod_hit and the
 * exclusions every pod was placed by a scan once one anti-affinity pod
 * was bound), and no bound pod breaks a bound pod's anti-affinity,
 * counted here from the pods themselves. */
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

#define ZONE      "topology.kubernetes.io/zone"
#define HOST      "kubernetes.io/hostname"
#define MAX_NODES 160
#define MAX_PODS  4096
#define MAX_DEC   60000

static const char *const zones[] = {"z0", "z1", "z2"};
static char node_names[MAX_NODES][16];
static struct gp_kv node_labels[MAX_NODES][2];
static int node_zone[MAX_NODES]; /* -1: no zone label */

static const struct gp_kv l_web[] = {{"app", "web"}}, l_db[] = {{"app", "db"}},
                          l_cache[] = {{"app", "cache"}}, l_batch[] = {{"app", "batch"}};

/* The kinds of pod: labels, namespace, constraints. */
enum { K_WEB, K_DB, K_CACHE, K_BATCH, K_DB_ANTI, K_CACHE_ANTI, K_WEB_GUARD, K_OTHER_NS, NKINDS };
static struct gp_pod_term terms[NKINDS];
static struct gp_pod_constraints cons[NKINDS];
static const char *const ns_default[] = {"default"};

static struct gp_pod_term term(const struct gp_kv *sel, const char *key)
{
    struct gp_pod_term t;
    memset(&t, 0, sizeof t);
    t.selector.set = true;
    t.selector.labels = sel;
    t.selector.nlabels = 1;
    t.topology_key = key;
    return t;
}

static void kinds_init(void)
{
    memset(cons, 0, sizeof cons);
    /* db: one per node among themselves */
    terms[K_DB_ANTI] = term(l_db, HOST);
    /* cache: one per zone */
    terms[K_CACHE_ANTI] = term(l_cache, ZONE);
    /* a web guard: no web pod on its node (it concerns the many) */
    terms[K_WEB_GUARD] = term(l_web, HOST);
    /* a pod of namespace "team" keeping batch pods of "default" off its zone */
    terms[K_OTHER_NS] = term(l_batch, ZONE);
    terms[K_OTHER_NS].namespaces = ns_default;
    terms[K_OTHER_NS].nnamespaces = 1;
    for (int k = K_DB_ANTI; k < NKINDS; k++) {
        cons[k].anti = &terms[k];
        cons[k].nanti = 1;
    }
}

static struct gp_node_spec rand_node(struct gp_rng *r, uint32_t i)
{
    struct gp_node_spec n;
    memset(&n, 0, sizeof n);
    snprintf(node_names[i], sizeof node_names[i], "n%u", i);
    n.name = node_names[i];
    n.gpu_count = (uint32_t)(gp_rng_below(r, 4) ? 8 : gp_rng_below(r, 3));
    n.gpu_model = n.gpu_count ? "H100" : NULL;
    n.gpu_mem_mib = 81920;
    n.cpu_milli = 16000 * (int64_t)(1 + gp_rng_below(r, 6));
    n.mem_mib = 65536 * (int64_t)(1 + gp_rng_below(r, 6));
    node_labels[i][0].key = HOST;
    node_labels[i][0].value = node_names[i];
    node_zone[i] = gp_rng_below(r, 8) ? (int)gp_rng_below(r, 3) : -1;
    node_labels[i][1].key = ZONE;
    node_labels[i][1].value = node_zone[i] >= 0 ? zones[node_zone[i]] : NULL;
    n.labels = node_labels[i];
    n.nlabels = node_zone[i] >= 0 ? 2 : 1;
    return n;
}

static struct gp_pod_spec kind_pod(struct gp_rng *r, int k)
{
    static const uint32_t counts[] = {0, 1, 1, 2, 4};
    struct gp_pod_spec s;
    memset(&s, 0, sizeof s);
    s.name = "p";
    /* a few sizes, so that shapes repeat and get rankings */
    s.cpu_milli = 1000 * (int64_t)(1 + 3 * gp_rng_below(r, 3));
    s.mem_mib = 8192 * (int64_t)(1 + gp_rng_below(r, 3));
    s.gpu_count = counts[gp_rng_below(r, 5)];
    s.gpu_milli = s.gpu_count ? GP_GPU_MILLI : 0;
    if (s.gpu_count == 1 && gp_rng_below(r, 4) == 0)
        s.gpu_milli = 500; /* a share */
    static const struct gp_kv *const labels[NKINDS] = {l_web, l_db,    l_cache, l_batch,
                                                       l_db,  l_cache, l_batch, l_batch};
    s.labels = labels[k];
    s.nlabels = 1;
    s.namespace_name = k == K_OTHER_NS ? "team" : "default";
    s.constraints = k >= K_DB_ANTI ? &cons[k] : NULL;
    return s;
}

/* Whether a bound pod of an anti-affinity kind has, in its domain, a
 * bound pod its term selects (its namespace and labels), or is itself
 * in the domain of such a term's owner: counted from the pods. */
static void assert_anti_kept(const struct gp_engine *e, const int *kind, size_t npods)
{
    for (uint32_t a = 0; a < npods; a++) {
        const struct gp_pod *o = gp_engine_pod(e, a);
        if (kind[a] < K_DB_ANTI || !o || o->state != GP_POD_BOUND)
            continue;
        const struct gp_pod_term *t = &terms[kind[a]];
        bool zone = strcmp(t->topology_key, ZONE) == 0;
        const char *ns = t->nnamespaces ? t->namespaces[0] : "default";
        for (uint32_t b = 0; b < npods; b++) {
            const struct gp_pod *q = gp_engine_pod(e, b);
            if (b == a || !q || q->state != GP_POD_BOUND)
                continue;
            const char *qns = kind[b] == K_OTHER_NS ? "team" : "default";
            if (strcmp(qns, ns) != 0 ||
                strcmp(q->spec.labels[0].value, t->selector.labels[0].value) != 0)
                continue;
            bool same = zone ? node_zone[o->node] >= 0 && node_zone[o->node] == node_zone[q->node]
                             : o->node == q->node;
            if (same) {
                print_error("pod %u (kind %d) on n%u shares its domain with pod %u on n%u\n", a,
                            kind[a], o->node, b, q->node);
                fail();
            }
        }
    }
}

static uint64_t visits;

/* One seeded run; every decision appended to out. Returns how many. */
static size_t run(const struct gp_policy_ops *ops, bool index, uint64_t seed,
                  struct gp_decision *out)
{
    struct gp_engine *e = gp_engine_new(ops, seed);
    assert_non_null(e);
    gp_engine_set_index(e, index, true);
    struct gp_rng r;
    gp_rng_seed(&r, seed);
    uint32_t nnodes = 24 + (uint32_t)gp_rng_below(&r, 100);
    for (uint32_t i = 0; i < nnodes; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    static int kind[MAX_PODS];
    size_t nout = 0;
    static struct gp_decision d[2048];
    /* the anti-affinity kinds rare, as a few guarded pods among many */
    static const int mix[] = {K_WEB,     K_WEB,        K_WEB,       K_WEB,     K_WEB,   K_DB,
                              K_DB,      K_DB,         K_CACHE,     K_BATCH,   K_BATCH, K_DB_ANTI,
                              K_DB_ANTI, K_CACHE_ANTI, K_WEB_GUARD, K_OTHER_NS};
    for (int step = 0; step < 40; step++) {
        uint64_t adds = gp_rng_below(&r, 60);
        for (uint64_t k = 0; k < adds && gp_engine_pod_count(e) < MAX_PODS; k++) {
            int kd = mix[gp_rng_below(&r, sizeof mix / sizeof mix[0])];
            struct gp_pod_spec ps = kind_pod(&r, kd);
            uint32_t id;
            assert_int_equal(gp_engine_pod_add(e, &ps, step, &id), GP_OK);
            kind[id] = kd;
        }
        size_t n = gp_engine_schedule(e, step, 0, d, 2048);
        assert_true(nout + n <= MAX_DEC);
        memcpy(out + nout, d, n * sizeof d[0]);
        nout += n;
        size_t npods = gp_engine_pod_count(e);
        assert_anti_kept(e, kind, npods);
        for (uint32_t id = 0; id < npods; id++) /* some leave */
            if (gp_engine_pod(e, id)->state == GP_POD_BOUND && gp_rng_below(&r, 6) == 0)
                assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
        uint64_t ev = gp_rng_below(&r, 8);
        uint32_t node = (uint32_t)gp_rng_below(&r, gp_engine_node_count(e));
        if (ev == 0 && gp_engine_node_count(e) < MAX_NODES) {
            uint64_t more = 1 + gp_rng_below(&r, 12);
            for (uint64_t k = 0; k < more && gp_engine_node_count(e) < MAX_NODES; k++) {
                struct gp_node_spec ns = rand_node(&r, (uint32_t)gp_engine_node_count(e));
                assert_int_equal(gp_engine_node_add(e, &ns, NULL), GP_OK);
            }
        } else if (ev == 1 && gp_engine_node(e, node)->state == GP_NODE_READY) {
            assert_int_equal(gp_engine_node_drain(e, node), GP_OK);
        }
    }
    uint64_t v = 0;
    gp_engine_place_stats(e, NULL, &v);
    visits += v;
    gp_engine_free(e);
    return nout;
}

static void assert_same(const struct gp_decision *a, const struct gp_decision *b, size_t k,
                        const char *what, uint64_t seed)
{
    if (a->kind != b->kind || a->pod != b->pod || a->node != b->node ||
        a->explain.nodes_total != b->explain.nodes_total ||
        memcmp(a->explain.rejected, b->explain.rejected, sizeof a->explain.rejected) != 0) {
        print_error("%s seed %llu: decision %zu: kind %d/%d pod %u/%u node %u/%u\n", what,
                    (unsigned long long)seed, k, a->kind, b->kind, a->pod, b->pod, a->node,
                    b->node);
        fail();
    }
    if (a->kind != GP_DECISION_BIND)
        return;
    assert_int_equal(a->pick.ngpus, b->pick.ngpus);
    assert_memory_equal(a->pick.gpu, b->pick.gpu, a->pick.ngpus);
}

static void compare(const struct gp_policy_ops *ops, const char *what)
{
    static struct gp_decision with[MAX_DEC], without[MAX_DEC];
    size_t binds = 0, fails = 0;
    uint64_t v_with = 0, v_without = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        visits = 0;
        size_t n1 = run(ops, true, seed, with);
        v_with += visits;
        visits = 0;
        size_t n2 = run(ops, false, seed, without);
        v_without += visits;
        if (n1 != n2) {
            print_error("%s seed %llu: %zu decisions with the index, %zu without\n", what,
                        (unsigned long long)seed, n1, n2);
            fail();
        }
        for (size_t k = 0; k < n1; k++) {
            assert_same(&with[k], &without[k], k, what, seed);
            binds += with[k].kind == GP_DECISION_BIND;
            fails += with[k].kind == GP_DECISION_UNSCHEDULABLE;
        }
    }
    print_message("%s: %zu binds, %zu unschedulable; nodes visited %llu with the index, %llu "
                  "without\n",
                  what, binds, fails, (unsigned long long)v_with, (unsigned long long)v_without);
    assert_true(binds > 1000);
    assert_true(fails > 100);
    assert_true(v_with < v_without);
}

static void test_anti_index_same_decisions(void **state)
{
    (void)state;
    kinds_init();
    for (size_t i = 0; gp_policies[i]; i++)
        if (gp_policies[i]->node_local)
            compare(gp_policies[i], gp_policies[i]->name);
    compare(NULL, "no policy");
}

/* The benchmark's shape, small: one pod of hostname anti-affinity bound
 * among many pods, then pods no term concerns (web) and pods its term
 * keeps off its node (db), of two shapes each: after each shape's first
 * placement (a scan that makes its ranking) a pod costs the nodes changed
 * since, not a scan (before: every pod a walk over the capacity index's
 * candidates, about every node of a cluster with room). */
static void test_anti_index_visits(void **state)
{
    (void)state;
    kinds_init();
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    struct gp_rng r;
    gp_rng_seed(&r, 7);
    for (uint32_t i = 0; i < 150; i++) {
        struct gp_node_spec n = rand_node(&r, i);
        n.gpu_count = 8;
        n.gpu_model = "H100";
        n.cpu_milli = 128000;
        n.mem_mib = 1 << 20;
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    static int kind[MAX_PODS];
    struct gp_pod_spec guard = kind_pod(&r, K_DB_ANTI);
    guard.gpu_count = 1;
    guard.gpu_milli = GP_GPU_MILLI;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &guard, 0, &id), GP_OK);
    kind[id] = K_DB_ANTI;
    static struct gp_decision d[1024];
    assert_int_equal(gp_engine_schedule(e, 0, 0, d, 1024), 1);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    uint32_t guarded = d[0].node;
    uint64_t v0 = 0, places0 = 0;
    gp_engine_place_stats(e, &places0, &v0);
    for (int i = 0; i < 800; i++) {
        struct gp_pod_spec ps = kind_pod(&r, i % 2 ? K_WEB : K_DB);
        ps.cpu_milli = 1000;
        ps.mem_mib = 4096;
        ps.gpu_count = 1;
        ps.gpu_milli = i % 4 < 2 ? GP_GPU_MILLI : 500;
        assert_int_equal(gp_engine_pod_add(e, &ps, 1, &id), GP_OK);
        kind[id] = i % 2 ? K_WEB : K_DB;
    }
    size_t binds = 0;
    for (int c = 0; c < 4; c++) {
        size_t n = gp_engine_schedule(e, 1 + c, 0, d, 1024);
        for (size_t k = 0; k < n; k++) {
            binds += d[k].kind == GP_DECISION_BIND;
            if (d[k].kind == GP_DECISION_BIND && kind[d[k].pod] == K_DB)
                assert_int_not_equal(d[k].node, guarded); /* its term keeps db off */
        }
    }
    assert_int_equal(binds, 800);
    assert_anti_kept(e, kind, gp_engine_pod_count(e));
    uint64_t v1 = 0, places1 = 0;
    gp_engine_place_stats(e, &places1, &v1);
    print_message("800 pods beside one anti-affinity pod on 150 nodes: %llu nodes visited in %llu "
                  "placements\n",
                  (unsigned long long)(v1 - v0), (unsigned long long)(places1 - places0));
    /* 4 first placements scan (600 visits); the rest, about 2 visits a
     * pod (the node the last pod went to, the winner tested): a scan of
     * the candidates was 150 a pod, 120,000 in all */
    assert_true(v1 - v0 < 8000);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_anti_index_same_decisions),
        cmocka_unit_test(test_anti_index_visits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
