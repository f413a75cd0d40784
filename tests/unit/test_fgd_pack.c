/* test_fgd_pack.c - each term and constant of fgd-pack (ours,
 * src/engine/policy_fgd.c) pinned by value: on cases worked out by hand,
 * the exact amount fgd-pack adds to FGD's score (its score minus fgd's, on
 * fresh policy states), so that doubling or halving any constant changes
 * a pinned number. test_fgd.c has the decisions that follow from each term.
 *
 * Notation: c is the target's GPU pods' CPU-milli per GPU-milli; r the CPU
 * per free GPU the cluster can still give, min(c, the ready GPU nodes' free
 * CPU-milli / their free GPU-milli); a node is rich after a placement when
 * it keeps at least r (CPU match) or c (CPU-only pods) CPU-milli per free
 * GPU-milli. The constants, as the policy has them: busy 0.3, CPU-only
 * rich 0.6, match 12 for heavy pods (> 1.2 c per GPU) left rich and light
 * pods (< 0.8 c) left not rich, model pressure 100 x (p - 0.25) per GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"

static struct gp_node_spec node(const char *name, const char *model, uint32_t gpus,
                                int64_t cpu_milli, const struct gp_kv *label)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = model;
    s.gpu_count = gpus;
    s.gpu_mem_mib = 16384;
    s.cpu_milli = cpu_milli;
    s.mem_mib = 1 << 20;
    s.labels = label;
    s.nlabels = label ? 1 : 0;
    return s;
}

static struct gp_pod_spec pod(int64_t cpu_milli, uint32_t gpus, uint32_t milli)
{
    struct gp_pod_spec s = {0};
    s.name = "p";
    s.cpu_milli = cpu_milli;
    s.mem_mib = 1024;
    s.gpu_count = gpus;
    s.gpu_milli = milli;
    return s;
}

static struct gp_engine *engine(const struct gp_node_spec *nodes, size_t n)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("fgd-pack"), 1);
    assert_non_null(e);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gp_engine_node_add(e, &nodes[i], NULL), GP_OK);
    return e;
}

/* Binds a pod on the node carrying label (its only fit). */
static void bind_on(struct gp_engine *e, const struct gp_kv *label, struct gp_pod_spec p)
{
    p.node_selector = label;
    p.nnode_selector = 1;
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
}

static double score(const char *policy, struct gp_engine *e, uint32_t node, uint32_t pod)
{
    const struct gp_policy_ops *ops = gp_policy_find(policy);
    void *st = NULL;
    assert_int_equal(ops->init(e, &st), 0);
    struct gp_pick pick;
    double s = ops->score(st, e, gp_engine_node(e, node), gp_engine_pod(e, pod), &pick);
    ops->destroy(st);
    return s;
}

/* What fgd-pack adds to FGD's score of node for a pod of that shape. */
static double terms(struct gp_engine *e, uint32_t node, struct gp_pod_spec p)
{
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    double t = score("fgd-pack", e, node, id) - score("fgd", e, node, id);
    assert_int_equal(gp_engine_pod_finished(e, id), GP_OK);
    return t;
}

/* Nodes of 8 GPUs: P 72 cores, M 80, R 160. Target: one-GPU pods of 4 and
 * of 16 cores, as many of each: c = 10 000 / 1000 = 10, heavy above 12
 * cores per GPU, light below 8. The cluster has 312 cores for 24 free
 * GPUs, 13 per GPU, more than c: r = c = 10. After a one-GPU pod a node
 * has 7 free GPUs and is rich with at least 70 cores left. No model is
 * restricted (no pressure) and every node is empty (no busy bonus). */
static void test_match_terms(void **state)
{
    (void)state;
    struct gp_node_spec n[3] = {node("P", "G2", 8, 72000, NULL), node("M", "G2", 8, 80000, NULL),
                                node("R", "G2", 8, 160000, NULL)};
    struct gp_engine *e = engine(n, 3);
    struct gp_pod_spec t[2] = {pod(4000, 1, 1000), pod(16000, 1, 1000)};
    assert_int_equal(gp_engine_set_target(e, t, NULL, 2, 1.0), GP_OK);
    enum { P, M, R };
    /* heavy, 13 cores = 1.3 c: R keeps 147 (rich): 12; P keeps 59: 0 */
    assert_float_equal(terms(e, R, pod(13000, 1, 1000)), 12, 1e-9);
    assert_float_equal(terms(e, P, pod(13000, 1, 1000)), 0, 1e-9);
    /* light, 7 cores = 0.7 c: P keeps 65 (not rich): 12; R keeps 153: 0;
     * M keeps 73, rich at c (70) though not at the cluster's 13 per GPU
     * (91): r is capped at c, 0 */
    assert_float_equal(terms(e, P, pod(7000, 1, 1000)), 12, 1e-9);
    assert_float_equal(terms(e, R, pod(7000, 1, 1000)), 0, 1e-9);
    assert_float_equal(terms(e, M, pod(7000, 1, 1000)), 0, 1e-9);
    /* between 0.8 c and 1.2 c no bonus anywhere: 11 cores (heavy were the
     * bound 1.2 halved), 9 cores (light were 0.8 doubled, heavy were 1.2
     * halved) */
    for (uint32_t k = P; k <= R; k++) {
        assert_float_equal(terms(e, k, pod(11000, 1, 1000)), 0, 1e-9);
        assert_float_equal(terms(e, k, pod(9000, 1, 1000)), 0, 1e-9);
    }
    /* a share counts its fraction: 5 cores for 0.4 GPU is 12.5 per GPU,
     * heavy; R keeps 155 for 7.6 free GPUs (>= 76): 12 */
    assert_float_equal(terms(e, R, pod(5000, 1, 400)), 12, 1e-9);
    /* a pod taking all of a node's free GPUs leaves it rich (24 cores for
     * no GPU): a light 8-GPU pod (6 cores per GPU) gets nothing on P */
    assert_float_equal(terms(e, P, pod(48000, 8, 1000)), 0, 1e-9);
    gp_engine_free(e);
}

/* A cluster short of CPU: P 8 GPUs and 48 cores, R 8 GPUs and 72 cores;
 * the target of test_match_terms (c = 10). The cluster has 120 cores for
 * 16 GPUs: r = 7.5, below c, and a node is rich after a one-GPU pod with
 * 52.5 cores left for its 7 GPUs. */
static void test_match_follows_the_clusters_cpu(void **state)
{
    (void)state;
    struct gp_node_spec n[2] = {node("P", "G2", 8, 48000, NULL), node("R", "G2", 8, 72000, NULL)};
    struct gp_engine *e = engine(n, 2);
    struct gp_pod_spec t[2] = {pod(4000, 1, 1000), pod(16000, 1, 1000)};
    assert_int_equal(gp_engine_set_target(e, t, NULL, 2, 1.0), GP_OK);
    /* light (7 cores): R keeps 65 >= 52.5, rich: 0 (at c it would not be
     * rich, 65 < 70, and get 12); P keeps 41: 12 */
    assert_float_equal(terms(e, 1, pod(7000, 1, 1000)), 0, 1e-9);
    assert_float_equal(terms(e, 0, pod(7000, 1, 1000)), 12, 1e-9);
    /* heavy (13 cores): R keeps 59 >= 52.5: 12 (at c: 0); P keeps 35: 0 */
    assert_float_equal(terms(e, 1, pod(13000, 1, 1000)), 12, 1e-9);
    assert_float_equal(terms(e, 0, pod(13000, 1, 1000)), 0, 1e-9);
    /* CPU-only pods still need c per free GPU: a 4-core one leaves R 68
     * cores for 8 GPUs, under 80, so no bonus (at r, 60, it would get 0.6) */
    assert_float_equal(terms(e, 1, pod(4000, 0, 0)), 0, 1e-9);
    /* r follows the binds: a CPU-only pod of 20 cores on R leaves 100
     * cores for 16 GPUs, r = 6.25, rich with 43.75 cores for 7 GPUs. The
     * light pod leaves R 45 cores: rich now (at 7.5 it was not, 45 < 52.5),
     * so R gets only the busy bonus; P keeps 41: still 12 */
    static const struct gp_kv on_r = {"host", "R"};
    gp_engine_free(e);
    n[1].labels = &on_r;
    n[1].nlabels = 1;
    e = engine(n, 2);
    assert_int_equal(gp_engine_set_target(e, t, NULL, 2, 1.0), GP_OK);
    bind_on(e, &on_r, pod(20000, 0, 0));
    assert_float_equal(terms(e, 0, pod(7000, 1, 1000)), 12, 1e-9);
    assert_float_equal(terms(e, 1, pod(7000, 1, 1000)), 0.3, 1e-9);
    gp_engine_free(e);
}

/* Nodes a (16 cores) and b (64 cores), 2 T4 GPUs each. Target: one-GPU
 * pods of 8 cores and CPU-only pods of 4, as many of each: c = 8. A
 * CPU-only pod of 4 cores leaves a 12 cores for 2 free GPUs (< 16: not
 * rich) and b 60 (rich): 0 and 0.6. Once b runs a pod (a 1-core CPU-only
 * one, pinned there), it is busy as well: 0.9. */
static void test_cpu_only_and_busy_terms(void **state)
{
    (void)state;
    static const struct gp_kv on_b = {"host", "b"};
    struct gp_node_spec n[2] = {node("a", "T4", 2, 16000, NULL), node("b", "T4", 2, 64000, &on_b)};
    struct gp_engine *e = engine(n, 2);
    struct gp_pod_spec t[2] = {pod(8000, 1, 1000), pod(4000, 0, 0)};
    assert_int_equal(gp_engine_set_target(e, t, NULL, 2, 1.0), GP_OK);
    assert_float_equal(terms(e, 0, pod(4000, 0, 0)), 0, 1e-9);
    assert_float_equal(terms(e, 1, pod(4000, 0, 0)), 0.6, 1e-9);
    bind_on(e, &on_b, pod(1000, 0, 0));
    assert_float_equal(terms(e, 1, pod(4000, 0, 0)), 0.6 + 0.3, 1e-9);
    assert_float_equal(terms(e, 0, pod(4000, 0, 0)), 0, 1e-9);
    /* a GPU pod gets the busy bonus but not the CPU-only one: 8 cores is c
     * itself, no match either */
    assert_float_equal(terms(e, 1, pod(8000, 1, 1000)), 0.3, 1e-9);
    assert_float_equal(terms(e, 0, pod(8000, 1, 1000)), 0, 1e-9);
    gp_engine_free(e);
}

/* Model pressure. Node t: 2 T4 GPUs, 64 cores; node g: 8 G2 GPUs, 64
 * cores. Target: one-GPU pods of 1 core, 1 in 10 only for T4 (c = 1). The
 * T4-only shapes expect 1/10 of the cluster's 10 000 GPU-milli, 1000, on
 * the T4s' 2000 free: pressure 0.5, so a pod loses 100 x (0.5 - 0.25) = 25
 * per T4 GPU it takes; the G2s carry no restricted demand. */
static void test_pressure_term(void **state)
{
    (void)state;
    static const char *const t4[] = {"T4"};
    static const struct gp_kv on_g = {"host", "g"};
    struct gp_node_spec n[2] = {node("t", "T4", 2, 64000, NULL), node("g", "G2", 8, 64000, &on_g)};
    struct gp_engine *e = engine(n, 2);
    struct gp_pod_spec t[2] = {pod(1000, 1, 1000), pod(1000, 1, 1000)};
    t[0].gpu_models = t4;
    t[0].ngpu_models = 1;
    const uint32_t counts[2] = {1, 9};
    assert_int_equal(gp_engine_set_target(e, t, counts, 2, 1.0), GP_OK);
    /* one GPU, 1 core (c itself: no match): -25 on t, 0 on g */
    assert_float_equal(terms(e, 0, pod(1000, 1, 1000)), -25, 1e-9);
    assert_float_equal(terms(e, 1, pod(1000, 1, 1000)), 0, 1e-9);
    /* per GPU taken: two GPUs -50, a 500-milli share -12.5 (2 cores for
     * half a GPU is 4 c, heavy, and t stays rich: +12) */
    assert_float_equal(terms(e, 0, pod(2000, 2, 1000)), -50, 1e-9);
    assert_float_equal(terms(e, 0, pod(2000, 1, 500)), -12.5 + 12, 1e-9);
    /* the demand still to come shrinks as GPUs are allocated: with one
     * G2 GPU taken, 9/10 of it is left: 900 / 2000 = 0.45 on T4, -20 */
    bind_on(e, &on_g, pod(1000, 1, 1000));
    assert_float_equal(terms(e, 0, pod(1000, 1, 1000)), -20, 1e-9);
    /* under the threshold nothing: with 2 G2 GPUs instead of 8 the T4-only
     * shapes expect 1/10 of 4000, 400 on 2000 free: 0.2 < 0.25 */
    gp_engine_free(e);
    struct gp_node_spec small[2] = {node("t", "T4", 2, 64000, NULL),
                                    node("g", "G2", 2, 64000, NULL)};
    e = engine(small, 2);
    assert_int_equal(gp_engine_set_target(e, t, counts, 2, 1.0), GP_OK);
    assert_float_equal(terms(e, 0, pod(1000, 1, 1000)), 0, 1e-9);
    gp_engine_free(e);
}

/* The engine's own fgd-pack state keeps r as pods are bound: the cluster
 * of test_match_follows_the_clusters_cpu, a CPU-only pod of 20 cores bound
 * on R (r 7.5 -> 6.25), then a light pod. FGD scores P and R alike (both
 * keep the CPU for the target's shapes); fgd-pack gives P 12 and R only
 * its busy 0.3, so the pod goes to P. Had r stayed 7.5, R would get
 * 12.3 and take it. */
static void test_engine_keeps_r_as_pods_bind(void **state)
{
    (void)state;
    static const struct gp_kv on_r = {"host", "R"};
    struct gp_node_spec n[2] = {node("P", "G2", 8, 48000, NULL), node("R", "G2", 8, 72000, &on_r)};
    struct gp_pod_spec t[2] = {pod(4000, 1, 1000), pod(16000, 1, 1000)};
    struct gp_pod_spec light = pod(7000, 1, 1000);
    struct gp_engine *e = engine(n, 2);
    assert_int_equal(gp_engine_set_target(e, t, NULL, 2, 1.0), GP_OK);
    bind_on(e, &on_r, pod(20000, 0, 0));
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &light, 0, &id), GP_OK);
    assert_float_equal(score("fgd", e, 0, id), score("fgd", e, 1, id), 0);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 0);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_terms),
        cmocka_unit_test(test_match_follows_the_clusters_cpu),
        cmocka_unit_test(test_cpu_only_and_busy_terms),
        cmocka_unit_test(test_pressure_term),
        cmocka_unit_test(test_engine_keeps_r_as_pods_bind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
