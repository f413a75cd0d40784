/* test_share_study.c - the renter's question: on a hand-sized case the
 * number of nodes each sharing mode needs is worked out by hand; on the
 * shipped example (40 small models on A100 and H100 pools) the relations
 * that must hold between the modes do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/cluster.h"
#include "io/workload.h"
#include "plan/share_study.h"
#include "util/arena.h"

static const char *cluster_yaml = "apiVersion: gpuplane.io/v1\n"
                                  "kind: Cluster\n"
                                  "metadata: {name: t}\n"
                                  "spec:\n"
                                  "  nodePools:\n"
                                  "  - name: a100\n"
                                  "    gpu: {model: A100-80GB, count: 2, memory: 80Gi}\n"
                                  "    cpu: \"64\"\n"
                                  "    memory: 512Gi\n"
                                  "    count: 1\n"
                                  "    pricePerHour: 10\n"
                                  "  - name: l4\n"
                                  "    gpu: {model: L4, count: 1, memory: 24Gi}\n"
                                  "    cpu: \"16\"\n"
                                  "    memory: 64Gi\n"
                                  "    count: 1\n"
                                  "    pricePerHour: 1\n";

/* Six models of 20 GiB and 30 % of a GPU each. */
static const char *workload_yaml = "apiVersion: apps/v1\n"
                                   "kind: Deployment\n"
                                   "metadata: {name: m}\n"
                                   "spec:\n"
                                   "  replicas: 6\n"
                                   "  template:\n"
                                   "    metadata:\n"
                                   "      annotations: {gpuplane.io/gpu-milli: \"300\", "
                                   "gpuplane.io/gpu-memory: 20Gi}\n"
                                   "    spec:\n"
                                   "      containers:\n"
                                   "      - name: c\n"
                                   "        resources: {requests: {cpu: \"1\", memory: 4Gi}}\n";

static const struct gp_study_option *find(const struct gp_study_option *o, size_t n,
                                          const char *pool, enum gp_share_mode mode)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(o[i].pool, pool) == 0 && o[i].mode == mode)
            return &o[i];
    fail_msg("no option %s/%d", pool, (int)mode);
    return NULL;
}

static void test_hand_sized(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {0};
    struct gp_cluster c;
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    assert_int_equal(
        gp_cluster_parse_yaml(cluster_yaml, strlen(cluster_yaml), "c.yaml", &a, &c, &d), GP_OK);
    assert_int_equal(gp_cluster_expand(&c, &a, &d), GP_OK);
    assert_int_equal(
        gp_workload_parse_manifest(workload_yaml, strlen(workload_yaml), "w.yaml", &a, &w, &d),
        GP_OK);
    struct gp_study_option *o;
    size_t n;
    assert_int_equal(gp_study_sharing(&c, &w, &a, &o, &n, &d), GP_OK);
    assert_int_equal(n, 7); /* a100: four modes; l4: no MIG */
    /* exclusive: one GPU per model, 2 per node: 3 nodes */
    const struct gp_study_option *x = find(o, n, "a100", GP_SHARE_EXCLUSIVE);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 3);
    assert_int_equal(x->gpus, 6);
    assert_int_equal(x->gpus_busy, 6);
    assert_true(x->usd_per_hour == 30);
    /* time-slicing: 4 x 20 GiB per 80 GiB GPU: 2 GPUs, 1 node; 4 x 30 % on
     * one GPU is 1.2 of it */
    x = find(o, n, "a100", GP_SHARE_TIMESLICE);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->gpus_busy, 2);
    assert_true(x->slowdown_max > 1.19 && x->slowdown_max < 1.21);
    /* MPS: 3 clients of 26 GiB and 33 % hold a 20 GiB, 30 % model: 2 GPUs */
    x = find(o, n, "a100", GP_SHARE_MPS);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->replicas, 3);
    /* MIG: 30 % needs 3 of 7 compute slices, a 3g.40gb each, two per GPU:
     * 3 GPUs, 2 nodes */
    x = find(o, n, "a100", GP_SHARE_MIG);
    assert_int_equal(x->nodes, 2);
    assert_int_equal(x->gpus_busy, 3);
    /* an L4 has 24 GiB: one model per GPU whatever the mode */
    x = find(o, n, "l4", GP_SHARE_TIMESLICE);
    assert_int_equal(x->nodes, 6);
    assert_true(x->usd_per_hour == 6);
    x = find(o, n, "l4", GP_SHARE_MPS); /* 2 clients of 12 GiB: too small */
    assert_false(x->feasible);
    assert_string_equal(x->why, "pod m fits no empty l4 node: no GPU with enough free GPU memory");
    gp_arena_free(&a);
}

static void test_example(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {0};
    struct gp_cluster c;
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    assert_int_equal(gp_cluster_load(GP_EXAMPLES_DIR "/renters-question/cluster.yaml", &a, &c, &d),
                     GP_OK);
    assert_int_equal(gp_workload_load(GP_EXAMPLES_DIR "/renters-question/models.yaml", &a, &w, &d),
                     GP_OK);
    struct gp_study_option *o;
    size_t n;
    assert_int_equal(gp_study_sharing(&c, &w, &a, &o, &n, &d), GP_OK);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) {
        const struct gp_study_option *x = &o[i];
        assert_true(x->feasible);
        assert_true(x->gpus_busy <= x->gpus && x->gpus == x->nodes * 8);
        if (x->mode == GP_SHARE_EXCLUSIVE)
            assert_int_equal(x->gpus_busy, x->pods); /* a whole GPU per model */
        else /* sharing needs fewer GPUs than exclusive on the same pool */
            assert_true(x->gpus_busy < find(o, n, x->pool, GP_SHARE_EXCLUSIVE)->gpus_busy);
        assert_true(x->slowdown_max >= 1 && x->slowdown_mean <= x->slowdown_max);
    }
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_sized),
        cmocka_unit_test(test_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
