/* test_kube_podreq.c - a pod's GPUs counted alike by the three readers
 * that count them: the live scheduler's (kube/objects.c, the Pod JSON),
 * the simulator's manifest reader (io/manifest_pod.c, the same pod as
 * YAML) and the node agent's split of gpuplane.io/gpus over the containers
 * (node/podseq.c, gpus_needed). The rule is Kubernetes' PodRequests with
 * sidecars (io/podreq.h; k8s.io/component-helpers resource/helpers.go,
 * KEP-753): app containers and sidecars (init containers with
 * restartPolicy: Always) are summed, each init container needs itself and
 * the sidecars before it, the pod the larger. Every number is worked by
 * hand in the comments. Then against the API server double: a pod with a
 * GPU sidecar and a GPU init container gets as many GPUs as the agent will
 * split, and the node's other GPUs stay free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "io/workload.h"
#include "node/podseq.h"

/* One pod written twice: Pod JSON and manifest YAML. */
struct case_pod {
    const char *json_spec; /* the spec's containers/initContainers as JSON members */
    const char *yaml_spec; /* the same under "spec:" */
    unsigned gpus;         /* worked by hand */
    int64_t cpu_milli;
    unsigned mig; /* nvidia.com/mig-1g.10gb instances, worked by hand */
    /* the most nvidia.com/gpu one container asks where less than the
     * pod's, else 0 (gpu_container_max: what failRequestsGreaterThanOne
     * checks, per container as the kubelet calls Allocate) */
    unsigned one;
};

/* s1 (sidecar, 1 GPU, 1 CPU), i1 (init, 3 GPUs, 4 CPUs), app a (1 GPU,
 * 2 CPUs): sum = a + s1 = 2 GPUs, 3 CPUs; i1 needs 3 + s1's 1 = 4 GPUs,
 * 4 + 1 = 5 CPUs; the pod max(2, 4) = 4 GPUs, max(3, 5) = 5 CPUs. Read
 * as before sidecars (the sidecar a plain init container): max(1, 3, 1) =
 * 3 GPUs - one fewer than the agent splits. */
static const struct case_pod init_wins = {
    "\"initContainers\":[{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{"
    "\"requests\":{\"cpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}},{\"name\":\"i1\","
    "\"resources\":{\"requests\":{\"cpu\":\"4\"},\"limits\":{\"nvidia.com/gpu\":\"3\"}}}],"
    "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"2\"},\"limits\":{"
    "\"nvidia.com/gpu\":\"1\"}}}]",
    "  initContainers:\n"
    "  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: \"1\"}, limits: "
    "{nvidia.com/gpu: 1}}}\n"
    "  - {name: i1, resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 3}}}\n"
    "  containers:\n"
    "  - {name: a, resources: {requests: {cpu: \"2\"}, limits: {nvidia.com/gpu: 1}}}\n",
    4,
    5000,
    0,
    3};

/* i1 (init, 2 GPUs) before s1 (sidecar, 2 GPUs), app a (1 GPU): i1 runs
 * alone (2), s1's own need is 2, sum = a + s1 = 3: the pod 3. Before
 * sidecars: max(1, 2, 2) = 2. CPU: i1 1, s1 1, a 1: sum 2, init 1: 2. */
static const struct case_pod side_wins = {
    "\"initContainers\":[{\"name\":\"i1\",\"resources\":{\"requests\":{\"cpu\":\"1\","
    "\"nvidia.com/gpu\":\"2\"}}},{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{"
    "\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"2\"}}}],\"containers\":[{\"name\":\"a\","
    "\"resources\":{\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"}}}]",
    "  initContainers:\n"
    "  - {name: i1, resources: {requests: {cpu: \"1\", nvidia.com/gpu: 2}}}\n"
    "  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: \"1\", nvidia.com/gpu: "
    "2}}}\n"
    "  containers:\n"
    "  - {name: a, resources: {requests: {cpu: \"1\", nvidia.com/gpu: 1}}}\n",
    3,
    2000,
    0,
    2};

/* MIG instances follow the same rule: a sidecar of 1 instance and an app
 * container of 1 are 2 at once (before: max(1, 1) = 1); the init
 * container of 2 after the sidecar needs 2 + 1 = 3: the pod 3. */
static const struct case_pod mig_side = {
    "\"initContainers\":[{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{"
    "\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}},{\"name\":\"i1\",\"resources\":{"
    "\"limits\":{\"nvidia.com/mig-1g.10gb\":\"2\"}}}],\"containers\":[{\"name\":\"a\","
    "\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}]",
    "  containers:\n" /* the containers first: the order of the two lists does not matter */
    "  - {name: a, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}}\n"
    "  initContainers:\n"
    "  - {name: s1, restartPolicy: Always, resources: {limits: {nvidia.com/mig-1g.10gb: 1}}}\n"
    "  - {name: i1, resources: {limits: {nvidia.com/mig-1g.10gb: 2}}}\n",
    0,
    0,
    3,
    0};

/* two app containers of 1 GPU each: the pod 2, each container 1 (a
 * device plugin failing requests greater than one serves both) */
static const struct case_pod two_ones = {
    "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}},"
    "{\"name\":\"b\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]",
    "  containers:\n"
    "  - {name: a, resources: {limits: {nvidia.com/gpu: 1}}}\n"
    "  - {name: b, resources: {limits: {nvidia.com/gpu: 1}}}\n",
    2,
    0,
    0,
    1};

static json_t *pod_json(const struct case_pod *c)
{
    char b[2048];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u1\"},"
             "\"spec\":{%s}}",
             c->json_spec);
    json_t *p = json_loads(b, 0, NULL);
    assert_non_null(p);
    return p;
}

static void check_case(const struct case_pod *c)
{
    /* the live scheduler's reader */
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_pod_spec s;
    struct gp_kube_pod_info info;
    struct gp_diag d = {""};
    json_t *p = pod_json(c);
    assert_int_equal(gp_kube_pod_read(p, &a, &s, &info, &d), GP_OK);
    assert_int_equal(s.gpu_count, c->mig ? c->mig : c->gpus);
    if (c->mig)
        assert_string_equal(s.mig_profile, "1g.10gb");
    assert_int_equal(s.cpu_milli, c->cpu_milli);
    assert_int_equal(s.gpu_container_max, c->one);
    /* the node agent's split needs as many */
    struct gp_node_podplan plan;
    const char *res = c->mig ? "nvidia.com/mig-1g.10gb" : "nvidia.com/gpu";
    assert_int_equal(gp_node_podplan_read(p, res, s.gpu_count, !c->mig, &plan, &d), GP_OK);
    assert_int_equal(plan.gpus_needed, s.gpu_count);
    json_decref(p);
    /* the manifest reader */
    char y[2048];
    snprintf(y, sizeof y, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n%s",
             c->yaml_spec);
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    enum gp_err err = gp_workload_parse_manifest(y, strlen(y), "p.yaml", &a, &w, &d);
    if (err == GP_OK)
        err = gp_workload_finish(&w, &a, &d);
    if (err != GP_OK)
        print_error("%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.items[0].pod.gpu_count, s.gpu_count);
    assert_int_equal(w.items[0].pod.cpu_milli, s.cpu_milli);
    assert_int_equal(w.items[0].pod.mem_mib, s.mem_mib);
    assert_int_equal(w.items[0].pod.gpu_container_max, s.gpu_container_max);
    gp_arena_free(&a);
}

static void test_readers_agree(void **state)
{
    (void)state;
    check_case(&init_wins);
    check_case(&side_wins);
    check_case(&mig_side);
    check_case(&two_ones);
}

/* spec.overhead (RuntimeClass admission) is added last, as PodRequests
 * adds it: app 2 CPUs + overhead 250m = 2250m; 1Gi + 512Mi. */
static void test_overhead(void **state)
{
    (void)state;
    json_t *p = json_loads("{\"metadata\":{\"name\":\"o\"},\"spec\":{\"overhead\":{\"cpu\":"
                           "\"250m\",\"memory\":\"512Mi\"},\"containers\":[{\"name\":\"a\","
                           "\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}]}}",
                           0, NULL);
    assert_non_null(p);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_pod_spec s;
    struct gp_kube_pod_info info;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_pod_read(p, &a, &s, &info, &d), GP_OK);
    assert_int_equal(s.cpu_milli, 2250);
    assert_int_equal(s.mem_mib, 1536);
    json_object_set_new(json_object_get(json_object_get(p, "spec"), "overhead"), "cpu",
                        json_string("lots"));
    assert_int_equal(gp_kube_pod_read(p, &a, &s, &info, &d), GP_EINVALID);
    assert_string_equal(d.msg, "spec.overhead.cpu: not a quantity");
    json_decref(p);
    gp_arena_free(&a);
}

/* Against the double: init_wins's pod on a node of 5 GPUs gets 4 named
 * GPUs (the agent splits s1 its first, i1 the next 3, a the second), so
 * a pod of 2 GPUs more fits nowhere while a pod of 1 does. */
static void test_scheduled(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 5);
    char b[2048];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"side\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":0,%s}}",
             init_wins.json_spec);
    /* the double wants an image on every container */
    json_t *pod = json_loads(b, 0, NULL);
    assert_non_null(pod);
    const char *lists[] = {"initContainers", "containers"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(json_object_get(pod, "spec"), lists[l]), i, c)
            json_object_set_new(c, "image", json_string("x"));
    }
    char *text = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", text, 201);
    free(text);
    assert_int_equal(w_cycle(&w), 1);
    json_t *got = w_pod_get(&w, "side");
    const char *gpus = json_string_value(json_object_get(
        json_object_get(json_object_get(got, "metadata"), "annotations"), GP_KUBE_ANN_GPUS));
    assert_non_null(gpus);
    struct gp_pick pick;
    assert_true(gp_kube_pick_parse(gpus, &pick));
    assert_int_equal(pick.ngpus, 4);
    struct gp_node_podplan plan;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_podplan_read(got, "nvidia.com/gpu", pick.ngpus, true, &plan, &d),
                     GP_OK);
    json_decref(got);
    w_pod(&w, "two", 2);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    w_pod(&w, "one", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "one", NULL), "n1");
    assert_string_equal(w_node_of(&w, "two", NULL), "");
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers_agree),
        cmocka_unit_test(test_overhead),
        cmocka_unit_test_setup_teardown(test_scheduled, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
