/* test_driver_filter.c - the driver filter (docs/compat.md, "The driver
 * filter"): a pod whose CUDA needs a newer driver is never placed on a node
 * whose declared driver is older, the explanation says so with the numbers
 * in kube-scheduler's words, undeclared drivers and needs pass, pods alike
 * but for their need are not taken for one another, and the readers fill
 * the need from gpuplane.io/cuda or the image and the driver from
 * gpu.driver (with their errors). */
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
#include "io/compat.h"
#include "io/workload.h"

static uint32_t drv(const char *s)
{
    uint32_t c = 0;
    assert_true(gp_compat_parse_driver(s, &c));
    return c;
}

static struct gp_node_spec node(const char *name, const char *driver)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "A100-80GB";
    s.gpu_count = 8;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 64000;
    s.mem_mib = 524288;
    s.driver_version = driver ? drv(driver) : 0;
    return s;
}

static struct gp_pod_spec pod(const char *name, const char *cuda_min, const char *cuda)
{
    struct gp_pod_spec s = {0};
    s.name = name;
    s.cpu_milli = 1000;
    s.mem_mib = 1024;
    s.gpu_count = 1;
    s.gpu_milli = 1000;
    s.cuda_driver_min = cuda_min ? drv(cuda_min) : 0;
    s.cuda_version = cuda;
    return s;
}

/* The case: driver 525.60.13 cannot run CUDA 12.2 (535.54.03). */
static void test_never_on_an_older_driver(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec old = node("old", "525.60.13");
    assert_int_equal(gp_engine_node_add(e, &old, NULL), GP_OK);
    struct gp_pod_spec p = pod("p", "535.54.03", "12.2");
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    struct gp_decision d[4];
    size_t n = gp_engine_schedule(e, 0, 0, d, 4);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(gp_explain_main(&d[0].explain), GP_FILTER_DRIVER);
    assert_int_equal(d[0].explain.rejected[GP_FILTER_DRIVER], 1);
    char text[128];
    assert_int_equal(gp_engine_explain_driver(e, id, text, sizeof text), 1);
    assert_string_equal(text, "node(s) had driver 525.60 < 535.54 needed by CUDA 12.2");
    assert_string_equal(gp_filter_name(GP_FILTER_DRIVER), "cuda-driver");
    /* a node with the driver it needs takes it */
    struct gp_node_spec ok = node("ok", "535.54.03");
    assert_int_equal(gp_engine_node_add(e, &ok, NULL), GP_OK);
    n = gp_engine_schedule(e, 1, 0, d, 4);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    assert_int_equal(d[0].node, 1);
    gp_engine_free(e);
}

/* Several drivers: the range; drivers alike in major.minor: the patch. */
static void test_explanation_numbers(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec a = node("a", "550.54.15"), b = node("b", "550.90.07");
    gp_engine_node_add(e, &a, NULL);
    gp_engine_node_add(e, &b, NULL);
    struct gp_pod_spec p = pod("p", "575.51.03", "12.9.0");
    uint32_t id;
    gp_engine_pod_add(e, &p, 0, &id);
    char text[128];
    assert_int_equal(gp_engine_explain_driver(e, id, text, sizeof text), 2);
    assert_string_equal(text,
                        "node(s) had drivers 550.54 to 550.90 < 575.51 needed by CUDA 12.9.0");
    gp_engine_free(e);
    e = gp_engine_new(NULL, 1);
    struct gp_node_spec c = node("c", "560.35.03");
    gp_engine_node_add(e, &c, NULL);
    struct gp_pod_spec q = pod("q", "560.35.05", "12.6.3");
    gp_engine_pod_add(e, &q, 0, &id);
    assert_int_equal(gp_engine_explain_driver(e, id, text, sizeof text), 1);
    assert_string_equal(text, "node(s) had driver 560.35.03 < 560.35.05 needed by CUDA 12.6.3");
    gp_engine_free(e);
}

/* An undeclared driver or need passes; a pod alike but for its need is not
 * answered by another's failure (the request shape holds the need). */
static void test_unknown_passes_and_shapes(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(NULL, 1);
    struct gp_node_spec old = node("old", "525.60.13");
    gp_engine_node_add(e, &old, NULL);
    struct gp_pod_spec needy = pod("needy", "535.54.03", "12.2"), plain = pod("plain", NULL, NULL);
    uint32_t a, b;
    gp_engine_pod_add(e, &needy, 0, &a);
    gp_engine_pod_add(e, &plain, 0, &b);
    struct gp_decision d[4];
    size_t n = gp_engine_schedule(e, 0, 0, d, 4);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].pod, a);
    assert_int_equal(d[0].kind, GP_DECISION_UNSCHEDULABLE);
    assert_int_equal(d[1].pod, b);
    assert_int_equal(d[1].kind, GP_DECISION_BIND);
    gp_engine_free(e);
    e = gp_engine_new(NULL, 1);
    struct gp_node_spec undeclared = node("u", NULL);
    gp_engine_node_add(e, &undeclared, NULL);
    gp_engine_pod_add(e, &needy, 0, &a);
    n = gp_engine_schedule(e, 0, 0, d, 4);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, GP_DECISION_BIND);
    gp_engine_free(e);
}

static const char cluster_head[] =
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\n"
    "spec:\n  nodePools:\n  - name: a\n";

/* gpu.driver read into the pool and its nodes; its errors. */
static void test_cluster_driver(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c;
    struct gp_diag d = {""};
    char text[512];
    snprintf(text, sizeof text, "%s%s", cluster_head,
             "    gpu: {model: A100-80GB, count: 8, driver: \"535.104.05\"}\n"
             "    cpu: \"96\"\n    memory: 1Ti\n    count: 2\n");
    assert_int_equal(gp_cluster_parse_yaml(text, strlen(text), "c.yaml", &a, &c, &d), GP_OK);
    assert_int_equal(c.pools[0].driver_version, drv("535.104.05"));
    assert_int_equal(gp_cluster_expand(&c, &a, &d), GP_OK);
    assert_int_equal(c.nodes[1].driver_version, drv("535.104.05"));
    snprintf(text, sizeof text, "%s%s", cluster_head,
             "    gpu: {model: A100-80GB, count: 8, driver: r535}\n"
             "    cpu: \"96\"\n    memory: 1Ti\n    count: 2\n");
    assert_int_equal(gp_cluster_parse_yaml(text, strlen(text), "c.yaml", &a, &c, &d), GP_EINVALID);
    assert_string_equal(d.msg, "c.yaml:7:47: spec.nodePools[0].gpu.driver: expected an NVIDIA "
                               "driver version like \"535.104.05\", got \"r535\"");
    gp_arena_free(&a);
}

static const char pod_head[] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n";

static enum gp_err parse_pod(const char *meta, const char *image, const char *gpus,
                             struct gp_arena *a, struct gp_workload *w, struct gp_diag *d)
{
    char text[1024];
    snprintf(text, sizeof text,
             "%s%sspec:\n  containers:\n  - name: c\n    image: %s\n    resources: {limits: "
             "{%s}}\n",
             pod_head, meta, image, gpus);
    memset(w, 0, sizeof *w);
    return gp_workload_parse_manifest(text, strlen(text), "m.yaml", a, w, d);
}

/* The need: gpuplane.io/cuda, else the image's, only for GPU pods; errors. */
static void test_manifest_need(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w;
    struct gp_diag d = {""};
    assert_int_equal(parse_pod("  annotations: {gpuplane.io/cuda: \"12.2\"}\n", "busybox",
                               "nvidia.com/gpu: 1", &a, &w, &d),
                     GP_OK);
    assert_int_equal(w.items[0].pod.cuda_driver_min, drv("535.54.03"));
    assert_string_equal(w.items[0].pod.cuda_version, "12.2");
    assert_int_equal(
        parse_pod("", "nvcr.io/nvidia/pytorch:24.05-py3", "nvidia.com/gpu: 1", &a, &w, &d), GP_OK);
    assert_int_equal(w.items[0].pod.cuda_driver_min, drv("550.54.15"));
    assert_string_equal(w.items[0].pod.cuda_version, "12.4.1");
    /* the annotation wins over the image */
    assert_int_equal(parse_pod("  annotations: {gpuplane.io/cuda: \"12.8\"}\n",
                               "nvcr.io/nvidia/pytorch:24.05-py3", "nvidia.com/gpu: 1", &a, &w, &d),
                     GP_OK);
    assert_int_equal(w.items[0].pod.cuda_driver_min, drv("570.26"));
    /* an image the table does not know, or a CPU pod: no need */
    assert_int_equal(parse_pod("", "ghcr.io/example/eval:2.1", "nvidia.com/gpu: 1", &a, &w, &d),
                     GP_OK);
    assert_int_equal(w.items[0].pod.cuda_driver_min, 0);
    assert_int_equal(parse_pod("", "nvidia/cuda:12.4.1-base-ubuntu22.04", "cpu: 1", &a, &w, &d),
                     GP_OK);
    assert_int_equal(w.items[0].pod.cuda_driver_min, 0);
    assert_int_equal(parse_pod("  annotations: {gpuplane.io/cuda: \"12.7\"}\n", "busybox",
                               "nvidia.com/gpu: 1", &a, &w, &d),
                     GP_EINVALID);
    assert_non_null(strstr(d.msg, "m.yaml:5:35: Pod/p.metadata.annotations[\"gpuplane.io/cuda\"]: "
                                  "CUDA 12.7 is not in data/cuda-driver-compat.json"));
    assert_int_equal(parse_pod("  annotations: {gpuplane.io/cuda: twelve}\n", "busybox",
                               "nvidia.com/gpu: 1", &a, &w, &d),
                     GP_EINVALID);
    assert_non_null(strstr(d.msg, "expected a CUDA version like \"12.2\" or \"12.4.1\""));
    assert_int_equal(
        parse_pod("  annotations: {gpuplane.io/cuda: \"12.2\"}\n", "busybox", "cpu: 1", &a, &w, &d),
        GP_EINVALID);
    assert_non_null(strstr(d.msg, "a CUDA version on a pod that asks for no GPU"));
    assert_int_equal(parse_pod("  annotations: {gpuplane.io/cudaa: \"12.2\"}\n", "busybox",
                               "nvidia.com/gpu: 1", &a, &w, &d),
                     GP_EINVALID);
    assert_non_null(strstr(d.msg, "did you mean \"gpuplane.io/cuda\"?"));
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_on_an_older_driver),
        cmocka_unit_test(test_explanation_numbers),
        cmocka_unit_test(test_unknown_passes_and_shapes),
        cmocka_unit_test(test_cluster_driver),
        cmocka_unit_test(test_manifest_need),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
