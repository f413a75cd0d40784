/* test_gfd_labels.c - the labels NVIDIA's GPU feature discovery sets, as
 * gpuplane's pool nodes carry them: nvidia.com/gpu.product with -SHARED on
 * time-sliced and MPS GPUs that are not renamed, gpu.count, gpu.replicas
 * and gpu.sharing-strategy; a pool may not write them; and a nodeSelector
 * on gpu.product matches as on a real cluster (the plain model misses a
 * shared node, the -SHARED value selects it) while the model constraint it
 * becomes still names the pool's model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"

#define HEADER "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata:\n  name: gfd\nspec:\n"

static const char cluster_yaml[] =
    HEADER "  nodePools:\n"
           "  - name: l4\n"
           "    gpu: {model: L4, count: 4, memory: 24Gi}\n"
           "    cpu: 32\n    memory: 128Gi\n    count: 1\n"
           "  - name: l4-ts\n"
           "    gpu: {model: L4, count: 4, memory: 24Gi}\n"
           "    cpu: 32\n    memory: 128Gi\n    count: 1\n"
           "    sharing: {mode: timeslice, replicas: 4}\n"
           "  - name: l4-renamed\n"
           "    gpu: {model: L4, count: 4, memory: 24Gi}\n"
           "    cpu: 32\n    memory: 128Gi\n    count: 1\n"
           "    sharing: {mode: timeslice, replicas: 4, renameByDefault: true}\n"
           "  - name: l4-mps\n"
           "    gpu: {model: L4, count: 4, memory: 24Gi}\n"
           "    cpu: 32\n    memory: 128Gi\n    count: 1\n"
           "    sharing: {mode: mps, replicas: 2}\n"
           "  - name: cpu\n"
           "    cpu: 16\n    memory: 64Gi\n    count: 1\n";

static const char *label(const struct gp_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static void load_cluster(const char *text, struct gp_arena *a, struct gp_cluster *c)
{
    struct gp_diag d = {""};
    enum gp_err err = gp_cluster_parse_yaml(text, strlen(text), "c.yaml", a, c, &d);
    if (err == GP_OK)
        err = gp_cluster_expand(c, a, &d);
    if (err != GP_OK)
        print_error("cluster: %s\n", d.msg);
    assert_int_equal(err, GP_OK);
}

static void test_node_labels(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    load_cluster(cluster_yaml, &a, &c);
    assert_int_equal(c.nnodes, 5);
    /* pool: product, count, replicas, sharing-strategy */
    static const char *const want[5][5] = {
        {"l4", "L4", "4", "1", "none"},
        {"l4-ts", "L4-SHARED", "4", "4", "time-slicing"},
        {"l4-renamed", "L4", "4", "4", "time-slicing"},
        {"l4-mps", "L4-SHARED", "4", "2", "mps"},
        {"cpu", NULL, NULL, NULL, NULL},
    };
    static const char *const keys[4] = {"nvidia.com/gpu.product", "nvidia.com/gpu.count",
                                        "nvidia.com/gpu.replicas",
                                        "nvidia.com/gpu.sharing-strategy"};
    for (size_t i = 0; i < 5; i++) {
        const struct gp_node_spec *n = &c.nodes[i];
        assert_string_equal(n->pool, want[i][0]);
        assert_string_equal(label(n, "gpuplane.io/pool"), want[i][0]);
        for (size_t k = 0; k < 4; k++) {
            const char *v = label(n, keys[k]);
            if (!want[i][k + 1])
                assert_null(v);
            else
                assert_string_equal(v, want[i][k + 1]);
        }
    }
    gp_arena_free(&a);
}

/* A pool may not write a label that GFD sets. */
static void test_pool_may_not_write(void **state)
{
    (void)state;
    static const char text[] = HEADER "  nodePools:\n"
                                      "  - name: l4\n"
                                      "    gpu: {model: L4, count: 4}\n"
                                      "    cpu: 32\n    memory: 128Gi\n    count: 1\n"
                                      "    labels: {nvidia.com/gpu.sharing-strategy: none}\n";
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_parse_yaml(text, strlen(text), "c.yaml", &a, &c, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "nvidia.com/gpu.sharing-strategy\"]: this label is set on every "
                                  "node from the pool's gpu and sharing; remove it"));
    gp_arena_free(&a);
}

/* One 1-GPU pod per item, each selecting product; which node each binds to
 * on the cluster (-1: unschedulable). */
static const char pods_yaml[] =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\n"
    "spec:\n  nodeSelector: {nvidia.com/gpu.product: L4}\n"
    "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: shared}\n"
    "spec:\n  nodeSelector: {nvidia.com/gpu.product: L4-SHARED}\n"
    "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n";

/* The pool of the node each pod of pods_yaml binds to when only the pools
 * named in `pools` (1 or 2 of cluster_yaml's) are there, or "" when it
 * stays pending. */
static void placements(const char *const *pools, size_t npools, const char *out[2])
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    load_cluster(cluster_yaml, &a, &c);
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    struct gp_diag d = {""};
    enum gp_err err =
        gp_workload_parse_manifest(pods_yaml, strlen(pods_yaml), "w.yaml", &a, &w, &d);
    if (err == GP_OK)
        err = gp_workload_finish(&w, &a, &d);
    if (err != GP_OK)
        print_error("workload: %s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.nitems, 2);
    /* the model constraint is the model, less the suffix */
    assert_int_equal(w.items[1].pod.ngpu_models, 1);
    assert_string_equal(w.items[1].pod.gpu_models[0], "L4");
    for (int i = 0; i < 2; i++) {
        struct gp_engine *e = gp_engine_new(NULL, 1);
        for (size_t n = 0; n < c.nnodes; n++)
            for (size_t k = 0; k < npools; k++)
                if (strcmp(c.nodes[n].pool, pools[k]) == 0)
                    assert_int_equal(gp_engine_node_add(e, &c.nodes[n], NULL), GP_OK);
        uint32_t id;
        struct gp_decision dec;
        assert_int_equal(gp_engine_pod_add(e, &w.items[i].pod, 0, &id), GP_OK);
        assert_int_equal(gp_engine_schedule_pod(e, id, &dec), GP_OK);
        /* the caller's own string: the node's pool name lives in the arena freed below */
        out[i] = "";
        for (size_t k = 0; k < npools && dec.kind == GP_DECISION_BIND; k++)
            if (strcmp(gp_engine_node(e, dec.node)->spec.pool, pools[k]) == 0)
                out[i] = pools[k];
        gp_engine_free(e);
    }
    gp_arena_free(&a);
}

static void test_selector_matches_as_on_a_cluster(void **state)
{
    (void)state;
    const char *got[2];
    /* a time-sliced pool that is not renamed: only -SHARED selects it */
    static const char *const ts[] = {"l4-ts"};
    placements(ts, 1, got);
    assert_string_equal(got[0], "");
    assert_string_equal(got[1], "l4-ts");
    /* MPS likewise */
    static const char *const mps[] = {"l4-mps"};
    placements(mps, 1, got);
    assert_string_equal(got[0], "");
    assert_string_equal(got[1], "l4-mps");
    /* an exclusive pool beside it takes the plain selector, never -SHARED */
    static const char *const both[] = {"l4", "l4-ts"};
    placements(both, 2, got);
    assert_string_equal(got[0], "l4");
    assert_string_equal(got[1], "l4-ts");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_labels),
        cmocka_unit_test(test_pool_may_not_write),
        cmocka_unit_test(test_selector_matches_as_on_a_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
