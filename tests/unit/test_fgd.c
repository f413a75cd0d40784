/* test_fgd.c - the target workload ("typical pods"), the FGD fragmentation
 * measure and the fgd policy's choices on cases worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "engine/frag.h"

static struct gp_node_spec node2(const char *name, int64_t cpu_milli)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "T4";
    s.gpu_count = 2;
    s.gpu_mem_mib = 16384;
    s.cpu_milli = cpu_milli;
    s.mem_mib = 65536;
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

static void test_target_keeps_popular_shapes(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_pod_spec specs[] = {pod(1000, 1, 1000), pod(2000, 1, 500), pod(4000, 0, 0),
                                  pod(1000, 1, 1000)};
    uint32_t counts[] = {40, 30, 10, 20}; /* the first and last are one shape: 60 */
    size_t n;
    uint64_t v1, v2;
    assert_int_equal(gp_engine_set_target(e, specs, counts, 4, 0.95), GP_OK);
    const struct gp_shape *s = gp_engine_target(e, &n, &v1);
    assert_int_equal(n, 3);
    assert_int_equal(s[0].cpu_milli, 1000);
    assert_float_equal(s[0].weight, 0.6, 1e-12);
    assert_int_equal(s[1].gpu_milli, 500);
    assert_int_equal(s[2].gpu_count, 0);
    /* 90 % is covered by the two most popular: reweighted 2/3 and 1/3 */
    assert_int_equal(gp_engine_set_target(e, specs, counts, 4, 0.9), GP_OK);
    s = gp_engine_target(e, &n, &v2);
    assert_int_equal(n, 2);
    assert_float_equal(s[0].weight, 2.0 / 3, 1e-12);
    assert_float_equal(s[1].weight, 1.0 / 3, 1e-12);
    assert_true(v2 != v1);
    assert_int_equal(gp_engine_set_target(e, specs, counts, 4, 0), GP_EINVALID);
    gp_engine_free(e);
}

/* Binds a pod on node `node`, GPU `gpu`, by making it the only fit. */
static void bind_share(struct gp_engine *e, uint32_t milli, uint32_t *out)
{
    struct gp_pod_spec p = pod(1000, 1, milli);
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    if (out)
        *out = d.node;
}

static void test_frag_measure_by_hand(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = node2("a", 32000);
    gp_engine_node_add(e, &a, NULL);
    /* target: half one-GPU pods, half CPU-only pods */
    struct gp_pod_spec specs[] = {pod(1000, 1, 1000), pod(1000, 0, 0)};
    gp_engine_set_target(e, specs, NULL, 2, 1.0);
    struct gp_frag *f = gp_frag_new();
    /* empty node: the whole-GPU shape fits and no GPU is partly used (0);
     * for the CPU-only shape all 2000 idle milli are fragment: 0.5 x 2000 */
    assert_float_equal(gp_frag_node(f, e, gp_engine_node(e, 0)), 1000, 1e-9);
    bind_share(e, 300, NULL); /* GPU 0 now has 700 free */
    gp_frag_touch(f, 0);
    /* whole-GPU shape: GPU 1 fits, GPU 0's 700 is fragment; CPU-only: 1700 */
    assert_float_equal(gp_frag_node(f, e, gp_engine_node(e, 0)), 0.5 * 700 + 0.5 * 1700, 1e-9);
    /* tentatively a second share of 700 on GPU 1: no GPU fits a whole-GPU
     * pod, so all 1000 idle milli are fragment for both shapes */
    struct gp_pod_spec q = pod(1000, 1, 700);
    uint32_t id;
    gp_engine_pod_add(e, &q, 0, &id);
    struct gp_pick pick = {.ngpus = 1, .gpu = {1}};
    assert_float_equal(gp_frag_node_after(f, e, gp_engine_node(e, 0), gp_engine_pod(e, id), &pick),
                       1000, 1e-9);
    gp_frag_free(f);
    gp_engine_free(e);
}

/* Target: one-GPU pods only. Node a has 500 free on GPU 0 and GPU 1 free;
 * node b is empty. A 500 share: on a's GPU 0 fragmentation falls 500 -> 0
 * (score trunc(100 sigmoid(0.5)) = 62); on a's GPU 1 it rises 500 -> 1000
 * (37); on b it rises 0 -> 500 (37). FGD fills a's GPU 0. */
static void test_fgd_fills_the_fragment(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("fgd"), 1);
    struct gp_node_spec a = node2("a", 32000), b = node2("b", 32000);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    struct gp_pod_spec whole = pod(1000, 1, 1000);
    gp_engine_set_target(e, &whole, NULL, 1, 1.0);
    uint32_t node;
    bind_share(e, 500, &node); /* empty cluster: all scores equal, node a wins */
    assert_int_equal(node, 0);
    struct gp_pod_spec share = pod(1000, 1, 500);
    uint32_t id;
    struct gp_decision d;
    gp_engine_pod_add(e, &share, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 0);
    const struct gp_pod *first = gp_engine_pod(e, 0);
    assert_int_equal(d.pick.gpu[0], first->pick.gpu[0]); /* the same GPU */
    gp_engine_free(e);
}

/* Target: one-GPU pods that need 8 cores. A CPU-only pod of 4 cores: on
 * node a (10 cores) it would leave 6, too few for the target, so a's two
 * idle GPUs become fragment (score trunc(100 sigmoid(-2)) = 11); node b has
 * cores to spare (50). FGD puts it on b although a comes first. */
static void test_fgd_keeps_cpu_for_gpu_pods(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("fgd"), 1);
    struct gp_node_spec a = node2("a", 10000), b = node2("b", 100000);
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    struct gp_pod_spec whole = pod(8000, 1, 1000);
    gp_engine_set_target(e, &whole, NULL, 1, 1.0);
    struct gp_pod_spec cpu = pod(4000, 0, 0);
    uint32_t id;
    struct gp_decision d;
    gp_engine_pod_add(e, &cpu, 0, &id);
    gp_engine_schedule_pod(e, id, &d);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    assert_int_equal(d.node, 1);
    /* best-fit would have taken the smaller node */
    struct gp_engine *bf = gp_engine_new(gp_policy_find("best-fit"), 1);
    gp_engine_node_add(bf, &a, NULL);
    gp_engine_node_add(bf, &b, NULL);
    gp_engine_pod_add(bf, &cpu, 0, &id);
    gp_engine_schedule_pod(bf, id, &d);
    assert_int_equal(d.node, 0);
    gp_engine_free(bf);
    gp_engine_free(e);
}

/* Target: one-GPU pods. Node a is empty; node b already runs one such pod
 * (placed there by a node selector). A one-GPU pod leaves no fragment on
 * either node, so FGD scores both 50 and takes a, the lower id; fgd-pack
 * prefers the busy node b and keeps a empty. */
static void test_fgd_pack_prefers_busy_nodes(void **state)
{
    (void)state;
    static const struct gp_kv label = {"pool", "b"};
    const char *names[] = {"fgd", "fgd-pack"};
    for (int k = 0; k < 2; k++) {
        struct gp_engine *e = gp_engine_new(gp_policy_find(names[k]), 1);
        struct gp_node_spec a = node2("a", 32000), b = node2("b", 32000);
        b.labels = &label;
        b.nlabels = 1;
        gp_engine_node_add(e, &a, NULL);
        gp_engine_node_add(e, &b, NULL);
        struct gp_pod_spec whole = pod(1000, 1, 1000);
        gp_engine_set_target(e, &whole, NULL, 1, 1.0);
        struct gp_pod_spec pinned = whole;
        pinned.node_selector = &label;
        pinned.nnode_selector = 1;
        uint32_t id;
        struct gp_decision d;
        gp_engine_pod_add(e, &pinned, 0, &id);
        gp_engine_schedule_pod(e, id, &d);
        assert_int_equal(d.node, 1);
        gp_engine_pod_add(e, &whole, 0, &id);
        gp_engine_schedule_pod(e, id, &d);
        assert_int_equal(d.kind, GP_DECISION_BIND);
        assert_int_equal(d.node, k == 0 ? 0 : 1);
        gp_engine_free(e);
    }
}

/* Schedules one pod with the named policy on a fresh engine holding nodes
 * a (id 0) and b (id 1) and the target specs x counts; returns its node. */
static uint32_t place_one(const char *policy, const struct gp_node_spec *a,
                          const struct gp_node_spec *b, const struct gp_pod_spec *specs,
                          const uint32_t *counts, size_t n, const struct gp_pod_spec *p)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find(policy), 1);
    assert_non_null(e);
    assert_int_equal(gp_engine_node_add(e, a, NULL), GP_OK);
    assert_int_equal(gp_engine_node_add(e, b, NULL), GP_OK);
    assert_int_equal(gp_engine_set_target(e, specs, counts, n, 1.0), GP_OK);
    uint32_t id;
    struct gp_decision d;
    assert_int_equal(gp_engine_pod_add(e, p, 0, &id), GP_OK);
    assert_int_equal(gp_engine_schedule_pod(e, id, &d), GP_OK);
    assert_int_equal(d.kind, GP_DECISION_BIND);
    gp_engine_free(e);
    return d.node;
}

/* Node t: 2 T4 GPUs; node g: 8 G2 GPUs (10 GPUs in all). Target: one-GPU
 * pods, 1/4 only for T4, 1/4 only for G2, 1/2 for any model. A one-GPU pod
 * for any model: on t it frees the G2-only shapes' fragment by 1/4 x 1000,
 * on g the T4-only shapes' by as much, so FGD scores both
 * trunc(100 sigmoid(0.25)) = 56 and takes t, the lower id. fgd-pack expects
 * 1/4 x 10 000 = 2500 milli of T4-only demand on 2000 milli of T4
 * (pressure 1.25) and as much G2-only demand on 8000 (0.3125): it takes
 * 100 x (1.25 - 0.25) = 100 points off t and 100 x 0.0625 = 6.25 off g, and
 * leaves the T4s to the pods that need them. */
static void test_fgd_pack_spares_scarce_models(void **state)
{
    (void)state;
    static const char *const t4[] = {"T4"}, *const g2[] = {"G2"};
    struct gp_node_spec t = node2("t", 64000), g = node2("g", 64000);
    g.gpu_model = "G2";
    g.gpu_count = 8;
    struct gp_pod_spec specs[3] = {pod(1000, 1, 1000), pod(1000, 1, 1000), pod(1000, 1, 1000)};
    specs[0].gpu_models = t4;
    specs[0].ngpu_models = 1;
    specs[1].gpu_models = g2;
    specs[1].ngpu_models = 1;
    uint32_t counts[3] = {1, 1, 2};
    struct gp_pod_spec any = pod(1000, 1, 1000);
    assert_int_equal(place_one("fgd", &t, &g, specs, counts, 3, &any), 0);
    assert_int_equal(place_one("fgd-pack", &t, &g, specs, counts, 3, &any), 1);
    /* a T4-only pod still goes to the T4 node */
    assert_int_equal(place_one("fgd-pack", &t, &g, specs, counts, 3, &specs[0]), 0);
    /* without model-restricted shapes in the target there is no pressure:
     * fgd-pack ties like FGD and takes t */
    struct gp_pod_spec plain = pod(1000, 1, 1000);
    assert_int_equal(place_one("fgd-pack", &t, &g, &plain, NULL, 1, &any), 0);
}

/* Nodes a (16 cores) and b (64 cores), 2 GPUs each. Target: half one-GPU
 * pods of 8 cores, half CPU-only pods of 4 cores: 8 CPU-milli per GPU-milli.
 * A CPU-only pod of 4 cores changes no fragment on either node (12 cores
 * left on a still fit the 8-core shape), so FGD scores both 50 and takes
 * a. fgd-pack sees that a would keep 12 000 CPU-milli for its 2000 free
 * GPU-milli, fewer than 8 x 2000, while b keeps 60 000: only b stays rich
 * in CPU, so the CPU-only pod goes to b and a's CPU stays for GPU pods. */
static void test_fgd_pack_puts_cpu_pods_where_cpu_is_spare(void **state)
{
    (void)state;
    struct gp_node_spec a = node2("a", 16000), b = node2("b", 64000);
    struct gp_pod_spec specs[2] = {pod(8000, 1, 1000), pod(4000, 0, 0)};
    uint32_t counts[2] = {1, 1};
    struct gp_pod_spec cpu = pod(4000, 0, 0);
    assert_int_equal(place_one("fgd", &a, &b, specs, counts, 2, &cpu), 0);
    assert_int_equal(place_one("fgd-pack", &a, &b, specs, counts, 2, &cpu), 1);
    /* a GPU pod is not moved by the CPU rule: both nodes score 50 and a
     * (the lower id) wins for fgd-pack too */
    struct gp_pod_spec gpu = pod(8000, 1, 1000);
    assert_int_equal(place_one("fgd-pack", &a, &b, specs, counts, 2, &gpu), 0);
}

/* Nodes of 8 GPUs: "poor" has 72 cores, "rich" 160. Target: one-GPU pods
 * of 4 and of 16 cores, as many of each: c = 20 000 / 2000 = 10 CPU-milli
 * per GPU-milli, so a pod is heavy above 12 and light below 8. Every pod
 * here leaves both nodes with at least 16 cores and 7 free GPUs, so both
 * target shapes still fit and FGD scores both nodes 50: it takes the first
 * one added. fgd-pack adds 12 where the pod matches the node:
 *  - a 16-core pod (heavy) leaves 56 000 CPU-milli on poor, under
 *    10 x 7000, and 144 000 on rich: it goes to rich, added second;
 *  - a 4-core pod (light) leaves 68 000 on poor (not rich) and 156 000 on
 *    rich: it goes to poor, added second;
 *  - a 10-core pod is neither: no bonus, so it ties like FGD. */
static void test_fgd_pack_matches_cpu_hungry_pods_to_cpu(void **state)
{
    (void)state;
    struct gp_node_spec poor = node2("poor", 72000), rich = node2("rich", 160000);
    poor.gpu_count = rich.gpu_count = 8;
    poor.mem_mib = rich.mem_mib = 262144;
    struct gp_pod_spec specs[2] = {pod(4000, 1, 1000), pod(16000, 1, 1000)};
    uint32_t counts[2] = {1, 1};
    struct gp_pod_spec heavy = pod(16000, 1, 1000), light = pod(4000, 1, 1000),
                       middle = pod(10000, 1, 1000);
    assert_int_equal(place_one("fgd", &poor, &rich, specs, counts, 2, &heavy), 0);
    assert_int_equal(place_one("fgd-pack", &poor, &rich, specs, counts, 2, &heavy), 1);
    assert_int_equal(place_one("fgd", &rich, &poor, specs, counts, 2, &light), 0);
    assert_int_equal(place_one("fgd-pack", &rich, &poor, specs, counts, 2, &light), 1);
    assert_int_equal(place_one("fgd-pack", &poor, &rich, specs, counts, 2, &middle), 0);
    assert_int_equal(place_one("fgd-pack", &rich, &poor, specs, counts, 2, &middle), 0);
}

/* Model scarcity outweighs the CPU match. Node t: 2 T4 GPUs, 64 cores;
 * node g: 8 G2 GPUs, 12 cores. Target: one-GPU pods of 1 core, 1 in 10
 * only for T4 (c = 1). An 8-core pod for any model is heavy. FGD: on g it
 * lowers the T4-only shape's fragment from 0.1 x 8000 to 0.1 x 7000
 * (score trunc(100 sigmoid(0.1)) = 52), on t it changes nothing (50): g.
 * fgd-pack: t stays rich (56 000 >= 1000), g does not (4000 < 7000), so
 * the match gives t 12; but 1000 milli of T4-only demand on 2000 free
 * (pressure 0.5) takes 100 x 0.25 = 25 off t: 37 against 52, g still. */
static void test_fgd_pack_scarcity_outweighs_cpu_match(void **state)
{
    (void)state;
    static const char *const t4[] = {"T4"};
    struct gp_node_spec t = node2("t", 64000), g = node2("g", 12000);
    g.gpu_model = "G2";
    g.gpu_count = 8;
    struct gp_pod_spec specs[2] = {pod(1000, 1, 1000), pod(1000, 1, 1000)};
    specs[0].gpu_models = t4;
    specs[0].ngpu_models = 1;
    uint32_t counts[2] = {1, 9};
    struct gp_pod_spec heavy = pod(8000, 1, 1000);
    assert_int_equal(place_one("fgd", &t, &g, specs, counts, 2, &heavy), 1);
    assert_int_equal(place_one("fgd-pack", &t, &g, specs, counts, 2, &heavy), 1);
    /* with no T4-only pods there is no pressure and the match decides: t,
     * even when g is added first */
    struct gp_pod_spec plain = pod(1000, 1, 1000);
    assert_int_equal(place_one("fgd", &g, &t, &plain, NULL, 1, &heavy), 0);
    assert_int_equal(place_one("fgd-pack", &g, &t, &plain, NULL, 1, &heavy), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_keeps_popular_shapes),
        cmocka_unit_test(test_frag_measure_by_hand),
        cmocka_unit_test(test_fgd_fills_the_fragment),
        cmocka_unit_test(test_fgd_keeps_cpu_for_gpu_pods),
        cmocka_unit_test(test_fgd_pack_prefers_busy_nodes),
        cmocka_unit_test(test_fgd_pack_spares_scarce_models),
        cmocka_unit_test(test_fgd_pack_puts_cpu_pods_where_cpu_is_spare),
        cmocka_unit_test(test_fgd_pack_matches_cpu_hungry_pods_to_cpu),
        cmocka_unit_test(test_fgd_pack_scarcity_outweighs_cpu_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
