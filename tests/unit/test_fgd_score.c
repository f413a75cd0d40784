/* test_fgd_score.c - FGD's score is the paper's formula at its published
 * scale: the exact scores of four nodes worked out by hand from the
 * fragmentation measure and the score of the FGD authors' simulator
 * (../shared/notes/openb-fgd.md section 2; src/engine/frag.h,
 * src/engine/policy_fgd.c), and the node and GPU the engine then picks.
 *
 * The measure. For each shape m of the target workload, with weight w_m, a
 * node's idle GPU-milli counts as fragment: all of it when m asks for no
 * GPU, or does not accept the node's GPU model, or does not fit (too little
 * CPU, or fewer than m's count of GPUs with m's share free); otherwise only
 * the idle milli of GPUs with less than m's per-GPU share free.
 * F(node) = sum over m of w_m x fragment_m(node), in GPU-milli.
 *
 * The score of a node (and, for a share, of each GPU it fits on, the best
 * GPU winning): the decrease of F, in GPUs, through a sigmoid onto
 * Kubernetes' 0..100 and truncated to an integer:
 *     score = trunc(100 / (1 + exp(-(F_before - F_after) / 1000)))
 *
 * Target (set with coverage 1: every shape kept, weights count / 10):
 *     S1  1 whole GPU, 4 cores              w 0.4
 *     S2  a 500-milli share, 2 cores        w 0.3
 *     S3  2 whole GPUs of model V100 only,  w 0.2
 *         8 cores
 *     S4  no GPU, 16 cores                  w 0.1
 * Nodes (free GPU-milli per GPU, free cores):
 *     A (0)  T4   [1000 1000 1000 1000]  32
 *     B (1)  T4   [ 500  400 1000 1000]  28  (a 500 and a 600 share run)
 *     C (2)  T4   [   0    0 1000 1000]   6  (a 2-GPU pod of 26 cores runs)
 *     D (3)  V100 [1000 1000]            16
 * Pods scored: P1 a 300-milli share of 2 cores; P2 one GPU, 4 cores; P3 two
 * GPUs, 4 cores. The hand computations are beside each assertion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/frag.h"

static const struct gp_kv host_a = {"host", "A"}, host_b = {"host", "B"}, host_c = {"host", "C"};

static struct gp_node_spec node(const char *name, const char *model, uint32_t gpus,
                                int64_t cpu_milli, const struct gp_kv *host)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = model;
    s.gpu_count = gpus;
    s.gpu_mem_mib = 16384;
    s.cpu_milli = cpu_milli;
    s.mem_mib = 262144;
    s.labels = host;
    s.nlabels = host ? 1 : 0;
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

/* Binds a pod pinned to a host, with the GPUs the engine's pick gives it
 * (no target is set yet, so FGD scores every GPU alike: the lowest index
 * that fits). */
static void bind_on(struct gp_engine *e, const struct gp_kv *host, int64_t cpu_milli, uint32_t gpus,
                    uint32_t milli)
{
    struct gp_pod_spec p = pod(cpu_milli, gpus, milli);
    p.node_selector = host;
    p.nnode_selector = 1;
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
}

/* The cluster and target above, on an engine running fgd. */
static struct gp_engine *setup(void)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("fgd"), 1);
    assert_non_null(e);
    struct gp_node_spec n[4] = {
        node("A", "T4", 4, 32000, &host_a), node("B", "T4", 4, 32000, &host_b),
        node("C", "T4", 4, 32000, &host_c), node("D", "V100", 2, 16000, NULL)};
    for (int i = 0; i < 4; i++)
        assert_int_equal(gp_engine_node_add(e, &n[i], NULL), GP_OK);
    bind_on(e, &host_b, 2000, 1, 500);   /* B's GPU 0: 500 free */
    bind_on(e, &host_b, 2000, 1, 600);   /* no room on GPU 0: GPU 1, 400 free */
    bind_on(e, &host_c, 26000, 2, 1000); /* C's GPUs 0 and 1 */
    static const char *const v100[] = {"V100"};
    struct gp_pod_spec t[4] = {pod(4000, 1, 1000), pod(2000, 1, 500), pod(8000, 2, 1000),
                               pod(16000, 0, 0)};
    t[2].gpu_models = v100;
    t[2].ngpu_models = 1;
    const uint32_t counts[4] = {4, 3, 2, 1};
    assert_int_equal(gp_engine_set_target(e, t, counts, 4, 1.0), GP_OK);
    size_t ns;
    gp_engine_target(e, &ns, NULL);
    assert_int_equal(ns, 4);
    return e;
}

static uint32_t add(struct gp_engine *e, int64_t cpu_milli, uint32_t gpus, uint32_t milli)
{
    struct gp_pod_spec p = pod(cpu_milli, gpus, milli);
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    return id;
}

/* The fragmentation of each node before any pod is scored. */
static void test_measure_by_hand(void **state)
{
    (void)state;
    struct gp_engine *e = setup();
    struct gp_frag *f = gp_frag_new();
    /* A: S1 0, S2 0, S3 4000 (a T4: not its model), S4 4000 (no GPU):
     *    0.2 x 4000 + 0.1 x 4000 = 1200 */
    assert_float_equal(gp_frag_node(f, e, gp_engine_node(e, 0)), 1200, 1e-9);
    /* B: S1 fits on GPU 2: GPUs 0 and 1 are below 1000, 400 + 500 = 900;
     *    S2 fits: GPU 1 below 500, 400; S3, S4 all 2900:
     *    0.4 x 900 + 0.3 x 400 + 0.2 x 2900 + 0.1 x 2900 = 360 + 120 + 580 + 290 = 1350 */
    assert_float_equal(gp_frag_node(f, e, gp_engine_node(e, 1)), 1350, 1e-9);
    /* C: S1, S2 fit, nothing below their share; S3, S4 2000: 400 + 200 = 600 */
    assert_float_equal(gp_frag_node(f, e, gp_engine_node(e, 2)), 600, 1e-9);
    /* D: S1, S2, S3 (a V100, 2 free GPUs, 16 >= 8 cores) fit: 0; S4 2000:
     *    0.1 x 2000 = 200 */
    assert_float_equal(gp_frag_node(f, e, gp_engine_node(e, 3)), 200, 1e-9);
    gp_frag_free(f);
    gp_engine_free(e);
}

/* fgd's score of a node for a pod, from a fresh policy state. */
static double score(struct gp_engine *e, uint32_t node, uint32_t pod, struct gp_pick *pick)
{
    const struct gp_policy_ops *fgd = gp_policy_find("fgd");
    void *st = NULL;
    assert_int_equal(fgd->init(e, &st), 0);
    double s = fgd->score(st, e, gp_engine_node(e, node), gp_engine_pod(e, pod), pick);
    fgd->destroy(st);
    return s;
}

static void test_scores_by_hand(void **state)
{
    (void)state;
    struct gp_engine *e = setup();
    struct gp_pick pick;
    uint32_t p1 = add(e, 2000, 1, 300), p2 = add(e, 4000, 1, 1000), p3 = add(e, 4000, 2, 1000);

    /* P1 on A, any GPU alike (GPU 0 wins the tie): [700 1000 1000 1000], 30
     * cores: S1 700, S2 0, S3 3700, S4 3700:
     *   F_after = 280 + 0 + 740 + 370 = 1390; 1200 - 1390 = -190;
     *   100 / (1 + e^0.19) = 45.26 -> 45 */
    assert_float_equal(score(e, 0, p1, &pick), 45, 0);
    assert_int_equal(pick.ngpus, 1);
    assert_int_equal(pick.gpu[0], 0);

    /* P1 on B, per GPU (F_before 1350):
     *   GPU 0 -> [200 400 1000 1000]: S1 600, S2 600 (both below 500), S3
     *     2600, S4 2600: 240 + 180 + 520 + 260 = 1200; +150;
     *     100 / (1 + e^-0.15) = 53.74 -> 53
     *   GPU 1 -> [500 100 1000 1000]: S1 600, S2 100: 240 + 30 + 520 + 260
     *     = 1050; +300; 100 / (1 + e^-0.3) = 57.44 -> 57
     *   GPU 2 -> [500 400 700 1000]: S1 1600, S2 400: 640 + 120 + 520 + 260
     *     = 1540; -190; 45.26 -> 45 (GPU 3 the same)
     * the best GPU, 1, gives the node's score: 57 */
    assert_float_equal(score(e, 1, p1, &pick), 57, 0);
    assert_int_equal(pick.gpu[0], 1);

    /* P1 on D -> [700 1000], 14 cores: S1 700, S2 0, S3 1700 (one GPU with
     * 1000 free is not two), S4 1700: 280 + 0 + 340 + 170 = 790;
     *   200 - 790 = -590; 100 / (1 + e^0.59) = 35.66 -> 35 */
    assert_float_equal(score(e, 3, p1, &pick), 35, 0);

    /* P2 on C -> [0 0 0 1000], 2 cores left: S1 no longer fits (2 < 4
     * cores): all 1000; S2 fits (2 cores, GPU 3): 0; S3 1000; S4 1000:
     *   400 + 0 + 200 + 100 = 700; 600 - 700 = -100; 100 / (1 + e^0.1) = 47.50 -> 47 */
    assert_float_equal(score(e, 2, p2, &pick), 47, 0);
    assert_int_equal(pick.gpu[0], 2);

    /* P2 on A -> [0 1000 1000 1000]: S1 0, S2 0, S3 3000, S4 3000: 900;
     *   1200 - 900 = +300 -> 57; on B the same +300 (1350 -> 1050): 57 */
    assert_float_equal(score(e, 0, p2, &pick), 57, 0);
    assert_float_equal(score(e, 1, p2, &pick), 57, 0);

    /* P3 on D -> [0 0]: nothing idle, F_after 0; 200 - 0 = +200;
     *   100 / (1 + e^-0.2) = 54.98 -> 54. On A -> [0 0 1000 1000]: S3, S4
     *   2000: 600; +600; 100 / (1 + e^-0.6) = 64.57 -> 64 */
    assert_float_equal(score(e, 3, p3, &pick), 54, 0);
    assert_float_equal(score(e, 0, p3, &pick), 64, 0);
    gp_engine_free(e);
}

/* The engine's decisions follow the scores: P1 goes to B's GPU 1 (57, the
 * highest); P2 to A (57 on A and B: the lower id). */
static void test_decisions_follow(void **state)
{
    (void)state;
    struct gp_engine *e = setup();
    struct gp_decision d;
    uint32_t p1 = add(e, 2000, 1, 300);
    assert_int_equal(gp_engine_schedule_pod(e, p1, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 1);
    assert_int_equal(d.pick.gpu[0], 1);
    uint32_t p2 = add(e, 4000, 1, 1000);
    assert_int_equal(gp_engine_schedule_pod(e, p2, &d), GP_OK);
    assert_int_equal(d.node, 0);
    assert_int_equal(d.pick.gpu[0], 0);
    gp_engine_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measure_by_hand),
        cmocka_unit_test(test_scores_by_hand),
        cmocka_unit_test(test_decisions_follow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
