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

/* Runs the study of workload wl on cluster cl (both YAML text). */
static void study(const char *cl, const char *wl, struct gp_arena *a, struct gp_study_option **o,
                  size_t *n)
{
    struct gp_diag d = {0};
    struct gp_cluster c;
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    assert_int_equal(gp_cluster_parse_yaml(cl, strlen(cl), "c.yaml", a, &c, &d), GP_OK);
    assert_int_equal(gp_cluster_expand(&c, a, &d), GP_OK);
    assert_int_equal(gp_workload_parse_manifest(wl, strlen(wl), "w.yaml", a, &w, &d), GP_OK);
    assert_int_equal(gp_study_sharing(&c, &w, a, o, n, &d), GP_OK);
}

#define POOL(name, sharing)                                                                        \
    "  - name: " name "\n    gpu: {model: A100-80GB, count: 2, memory: 80Gi}\n"                    \
    "    cpu: \"64\"\n    memory: 512Gi\n    count: 1\n    pricePerHour: 10\n" sharing

#define CLUSTER_HEAD                                                                               \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"

#define ORDINARY(gpus)                                                                             \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: svc}\nspec:\n  replicas: 4\n"         \
    "  template:\n    spec:\n      containers:\n      - name: c\n"                                 \
    "        resources: {requests: {cpu: \"1\", memory: 4Gi}, limits: {nvidia.com/gpu: " gpus      \
    "}}\n"

/* Ordinary manifests (nvidia.com/gpu: 1, no gpuplane annotation) get
 * replicas of time-sliced and MPS GPUs, as the device plugin advertises
 * them without renaming: 4 pods on 2-GPU nodes take 1 node of 2 replicas
 * per GPU (2 pods a GPU, each at half speed), against 2 exclusive nodes.
 * A pool that renames its replicas (renameByDefault: true) serves none of
 * them, and one whose plugin fails requests greater than one serves no
 * nvidia.com/gpu: 2; the study says which pod and why. */
static void test_ordinary_manifests(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study_option *o;
    size_t n;
    study(CLUSTER_HEAD POOL("a100", "") POOL("renamed", "    sharing: {mode: timeslice, replicas: "
                                                        "2, renameByDefault: true}\n"),
          ORDINARY("1"), &a, &o, &n);
    const struct gp_study_option *x = find(o, n, "a100", GP_SHARE_EXCLUSIVE);
    assert_int_equal(x->nodes, 2);
    x = find(o, n, "a100", GP_SHARE_TIMESLICE);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->replicas, 2);
    assert_int_equal(x->gpus_busy, 2);
    assert_false(x->rename_by_default);
    assert_true(x->slowdown_max > 1.99 && x->slowdown_max < 2.01);
    x = find(o, n, "a100", GP_SHARE_MPS);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 1);
    x = find(o, n, "a100", GP_SHARE_MIG); /* the mixed strategy has no nvidia.com/gpu */
    assert_false(x->feasible);
    assert_non_null(strstr(x->why, "pod svc fits no empty a100 node: it asks for nvidia.com/gpu"));
    x = find(o, n, "renamed", GP_SHARE_TIMESLICE);
    assert_false(x->feasible);
    assert_true(x->rename_by_default);
    assert_non_null(strstr(x->why, "renameByDefault: true"));
    gp_arena_free(&a);

    gp_arena_init(&a);
    study(CLUSTER_HEAD POOL("a100", "")
              POOL("strict", "    sharing: {mode: timeslice, replicas: 2, "
                             "failRequestsGreaterThanOne: true}\n"),
          ORDINARY("2"), &a, &o, &n);
    x = find(o, n, "a100", GP_SHARE_TIMESLICE); /* 2 replicas each: 8 of 4 per node */
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->replicas, 4);
    x = find(o, n, "strict", GP_SHARE_TIMESLICE);
    assert_false(x->feasible);
    assert_true(x->fail_requests_greater_than_one);
    assert_non_null(strstr(x->why, "failRequestsGreaterThanOne"));
    x = find(o, n, "a100", GP_SHARE_MPS); /* the plugin always fails them under MPS */
    assert_false(x->feasible);
    assert_non_null(strstr(x->why, "always under MPS"));
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_sized),
        cmocka_unit_test(test_example),
        cmocka_unit_test(test_ordinary_manifests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
