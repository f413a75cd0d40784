/* test_manifest.c - the Kubernetes manifest reader (io/manifest.c), the
 * duration distributions (io/dist.c) and workload loading (io/load.c):
 * the example workload field by field, Kubernetes defaults and resource
 * rules, one test per class of bad input with its exact message, and
 * directory loading order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/sharing.h"

#include "io/workload.h"

struct parsed {
    struct gp_arena arena;
    struct gp_workload w;
    struct gp_diag diag;
    enum gp_err err;
};

static struct parsed *parse(const char *text)
{
    struct parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    gp_arena_init(&p->arena);
    p->err =
        gp_workload_parse_manifest(text, strlen(text), "jobs.yaml", &p->arena, &p->w, &p->diag);
    if (p->err != GP_OK)
        assert_int_equal(p->w.nitems, 0);
    return p;
}

static struct parsed *parse_ok(const char *text)
{
    struct parsed *p = parse(text);
    if (p->err != GP_OK)
        print_error("%s\n", p->diag.msg);
    assert_int_equal(p->err, GP_OK);
    return p;
}

static void done(struct parsed *p)
{
    gp_arena_free(&p->arena);
    free(p);
}

static void expect_error(const char *text, enum gp_err err, const char *msg)
{
    struct parsed *p = parse(text);
    if (p->err != err || strcmp(p->diag.msg, msg) != 0)
        print_error("got %d \"%s\"\nwant %d \"%s\"\n", p->err, p->diag.msg, err, msg);
    assert_int_equal(p->err, err);
    assert_string_equal(p->diag.msg, msg);
    done(p);
}

static const char *selector(const struct gp_pod_spec *pod, const char *key)
{
    for (size_t i = 0; i < pod->nnode_selector; i++)
        if (strcmp(pod->node_selector[i].key, key) == 0)
            return pod->node_selector[i].value;
    return NULL;
}

#define POD_HEAD  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
#define POD(spec) POD_HEAD "spec:\n  containers:\n  - name: c\n" spec

/* --- the example --------------------------------------------------------- */

static void test_example_workload(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_workload_load(GP_EXAMPLES_DIR "/workload-mixed.yaml", &a, &w, &d);
    if (err != GP_OK)
        print_error("%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.nitems, 7);

    const struct gp_item *it = &w.items[0];
    assert_string_equal(it->name, "llm-chat");
    assert_string_equal(it->source, GP_EXAMPLES_DIR "/workload-mixed.yaml:7");
    assert_int_equal(it->kind, GP_ITEM_DEPLOYMENT);
    assert_int_equal(it->replicas, 6);
    assert_string_equal(it->pod.name, "llm-chat");
    assert_int_equal(it->pod.cpu_milli, 4000);
    assert_int_equal(it->pod.mem_mib, 24 * 1024);
    assert_int_equal(it->pod.gpu_count, 1);
    assert_int_equal(it->pod.gpu_milli, 500);
    assert_int_equal(it->pod.gpu_mem_mib, 20 * 1024);
    assert_int_equal(it->pod.ngpu_models, 2);
    assert_string_equal(it->pod.gpu_models[0], "L40S");
    assert_string_equal(it->pod.gpu_models[1], "A100-80GB");
    assert_int_equal(it->pod.priority, 1000);
    assert_int_equal(it->pod.ntolerations, 1);
    assert_string_equal(it->pod.tolerations[0].key, "nvidia.com/gpu");
    assert_true(it->pod.tolerations[0].op_exists);
    assert_false(it->pod.tolerations[0].any_effect);
    assert_int_equal(it->pod.tolerations[0].effect, GP_EFFECT_NO_SCHEDULE);
    assert_false(it->has_duration);
    assert_true(it->arrival_s == 0);
    assert_int_equal(it->repeat, 1);
    assert_string_equal(it->queue, "inference");

    it = &w.items[1];
    assert_string_equal(it->name, "embeddings");
    assert_int_equal(it->replicas, 8);
    assert_int_equal(it->pod.cpu_milli, 1500);
    assert_int_equal(it->pod.gpu_count, 1);
    assert_int_equal(it->pod.gpu_milli, 250);
    assert_int_equal(it->pod.gpu_mem_mib, 5 * 1024);
    assert_int_equal(it->pod.ngpu_models, 1); /* from the node selector */
    assert_string_equal(it->pod.gpu_models[0], "L4");
    assert_string_equal(selector(&it->pod, "nvidia.com/gpu.product"), "L4");
    assert_string_equal(it->queue, "inference"); /* the template's label */

    it = &w.items[2];
    assert_string_equal(it->name, "api-gateway");
    assert_int_equal(it->replicas, 3);
    assert_int_equal(it->pod.cpu_milli, 2000); /* the request, not the limit */
    assert_int_equal(it->pod.mem_mib, 4096);
    assert_int_equal(it->pod.gpu_count, 0);
    assert_int_equal(it->pod.gpu_milli, 0);
    assert_null(it->queue);

    it = &w.items[3];
    assert_string_equal(it->name, "batch-eval");
    assert_int_equal(it->kind, GP_ITEM_JOB);
    assert_int_equal(it->completions, 1);
    assert_int_equal(it->parallelism, 1);
    assert_int_equal(it->backoff_limit, 3);
    assert_int_equal(it->pod.cpu_milli, 4000); /* max(containers 4, init 0.5) */
    assert_int_equal(it->pod.mem_mib, 16 * 1024);
    assert_int_equal(it->pod.gpu_count, 1); /* a limit alone is the request */
    assert_int_equal(it->pod.gpu_milli, 1000);
    assert_true(it->arrival_s == 600);
    assert_true(it->has_duration);
    assert_int_equal(it->duration.kind, GP_DIST_EXP);
    assert_true(it->duration.a == 1800);
    assert_int_equal(it->repeat, 300);
    assert_int_equal(it->interarrival.kind, GP_DIST_EXP);
    assert_true(it->interarrival.a == 120);
    assert_true(it->failure_prob == 0.02);
    assert_string_equal(it->queue, "batch");

    it = &w.items[4];
    assert_string_equal(it->name, "hparam-sweep");
    assert_int_equal(it->completions, 16);
    assert_int_equal(it->parallelism, 4);
    assert_int_equal(it->backoff_limit, 6); /* the Kubernetes default */
    assert_int_equal(it->pod.gpu_count, 1);
    assert_true(it->arrival_s == 7200);
    assert_int_equal(it->duration.kind, GP_DIST_LOGNORMAL);
    assert_true(it->duration.a == 2400);
    assert_true(it->duration.b == 0.5);

    it = &w.items[5];
    assert_string_equal(it->name, "train-llm");
    assert_int_equal(it->backoff_limit, 1);
    assert_int_equal(it->pod.gpu_count, 8);
    assert_int_equal(it->pod.gpu_milli, 1000);
    assert_int_equal(it->pod.cpu_milli, 80000);
    assert_int_equal(it->pod.mem_mib, 900 * 1024);
    assert_int_equal(it->pod.priority, 100);
    assert_int_equal(it->pod.ngpu_models, 1);
    assert_string_equal(it->pod.gpu_models[0], "A100-80GB");
    assert_int_equal(it->duration.kind, GP_DIST_UNIFORM);
    assert_true(it->duration.a == 6 * 3600);
    assert_true(it->duration.b == 10 * 3600);
    assert_true(it->arrival_s == 3600);

    it = &w.items[6];
    assert_string_equal(it->name, "notebook");
    assert_int_equal(it->kind, GP_ITEM_POD);
    assert_int_equal(it->backoff_limit, 1); /* sim.gpuplane.io/retries */
    assert_int_equal(it->pod.gpu_count, 1);
    assert_int_equal(it->duration.kind, GP_DIST_FIXED);
    assert_true(it->duration.a == 4 * 3600);
    assert_true(it->arrival_s == 1800);
    assert_string_equal(it->queue, "research");
    gp_arena_free(&a);
}

/* --- what is read, and Kubernetes' defaults ------------------------------ */

static void test_defaults(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok(POD("") "---\n"
                         "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n"
                         "spec:\n  template:\n    spec:\n      containers: [{name: c}]\n"
                         "---\n"
                         "apiVersion: apps/v1\nkind: Deployment\nmetadata: {generateName: d-}\n"
                         "spec:\n  template:\n    spec:\n      containers: [{name: c}]\n");
    assert_int_equal(p->w.nitems, 3);
    const struct gp_item *pod = &p->w.items[0], *job = &p->w.items[1], *dep = &p->w.items[2];
    assert_int_equal(pod->kind, GP_ITEM_POD);
    assert_int_equal(pod->backoff_limit, 0);
    assert_false(pod->has_duration);
    assert_int_equal(pod->repeat, 1);
    assert_int_equal(pod->interarrival.kind, GP_DIST_FIXED);
    assert_true(pod->interarrival.a == 0);
    assert_true(pod->failure_prob == 0);
    assert_int_equal(pod->pod.cpu_milli, 0);
    assert_int_equal(pod->pod.gpu_count, 0);
    assert_int_equal(pod->pod.ntolerations, 0);
    assert_string_equal(pod->source, "jobs.yaml:1");
    assert_int_equal(job->completions, 1);
    assert_int_equal(job->parallelism, 1);
    assert_int_equal(job->backoff_limit, 6);
    assert_string_equal(job->source, "jobs.yaml:9");
    assert_int_equal(dep->replicas, 1);
    assert_string_equal(dep->name, "d-");
    done(p);
}

static void test_resources(void **state)
{
    (void)state;
    /* containers add up; each init container runs alone, so the pod needs
     * the larger of the sum and each init container; limits alone count as
     * requests */
    struct parsed *p =
        parse_ok(POD_HEAD "spec:\n"
                          "  initContainers:\n"
                          "  - {name: i1, resources: {requests: {cpu: \"8\", "
                          "memory: 1Gi}}}\n"
                          "  - {name: i2, resources: {limits: {nvidia.com/gpu: 3}}}\n"
                          "  containers:\n"
                          "  - {name: a, resources: {requests: {cpu: 1500m, "
                          "memory: 2Gi, nvidia.com/gpu: 1}, limits: {cpu: 4, "
                          "nvidia.com/gpu: 1}}}\n"
                          "  - {name: b, resources: {limits: {cpu: 500m, memory: "
                          "512Mi, nvidia.com/gpu: \"1\"}}}\n"
                          "  - {name: c, resources: {requests: {ephemeral-storage: "
                          "10Gi}}}\n");
    const struct gp_pod_spec *pod = &p->w.items[0].pod;
    assert_int_equal(pod->cpu_milli, 8000);     /* max(1.5 + 0.5, 8) */
    assert_int_equal(pod->mem_mib, 2048 + 512); /* max(2.5Gi, 1Gi) */
    assert_int_equal(pod->gpu_count, 3);        /* max(1 + 1, 3) */
    assert_int_equal(pod->gpu_milli, GP_GPU_MILLI);
    done(p);
}

static void test_gpu_shares(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok("apiVersion: v1\nkind: Pod\nmetadata:\n  name: m\n  annotations:\n"
                 "    gpuplane.io/gpu-memory: 10Gi\n"
                 "spec:\n  containers: [{name: c}]\n"
                 "---\n"
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: s\n  annotations:\n"
                 "    gpuplane.io/gpu-milli: \"1000\"\n"
                 "spec:\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
                 "---\n"
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\n  annotations:\n"
                 "    gpuplane.io/gpu-memory: 40Gi\n"
                 "    gpuplane.io/gpu-model: \" A100-80GB | H100-80GB \"\n"
                 "spec:\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]\n");
    const struct gp_pod_spec *mem_only = &p->w.items[0].pod;
    assert_int_equal(mem_only->gpu_count, 1);
    assert_int_equal(mem_only->gpu_milli, 0); /* a share by memory alone */
    assert_int_equal(mem_only->gpu_mem_mib, 10240);
    const struct gp_pod_spec *whole = &p->w.items[1].pod;
    assert_int_equal(whole->gpu_count, 1);
    assert_int_equal(whole->gpu_milli, 1000);
    const struct gp_pod_spec *two = &p->w.items[2].pod;
    assert_int_equal(two->gpu_count, 2);
    assert_int_equal(two->gpu_milli, 1000);
    assert_int_equal(two->gpu_mem_mib, 40960);
    assert_int_equal(two->ngpu_models, 2);
    assert_string_equal(two->gpu_models[0], "A100-80GB");
    assert_string_equal(two->gpu_models[1], "H100-80GB");
    done(p);
}

static void test_constraints(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok(POD_HEAD "spec:\n"
                          "  priority: -5\n"
                          "  nodeSelector: {nvidia.com/gpu.product: H100-80GB, zone: a}\n"
                          "  tolerations:\n"
                          "  - {operator: Exists}\n"
                          "  - {key: spot, value: \"true\", effect: NoExecute, "
                          "tolerationSeconds: 30}\n"
                          "  - {key: dedicated, operator: Equal, value: ml}\n"
                          "  containers:\n"
                          "  - {name: c, resources: {limits: {nvidia.com/gpu: 1}}}\n");
    const struct gp_pod_spec *pod = &p->w.items[0].pod;
    assert_int_equal(pod->priority, -5);
    assert_int_equal(pod->nnode_selector, 2);
    assert_string_equal(selector(pod, "zone"), "a");
    assert_int_equal(pod->ngpu_models, 1);
    assert_string_equal(pod->gpu_models[0], "H100-80GB");
    assert_int_equal(pod->ntolerations, 3);
    const struct gp_toleration *t = pod->tolerations;
    assert_null(t[0].key); /* tolerates everything */
    assert_true(t[0].op_exists);
    assert_true(t[0].any_effect);
    assert_string_equal(t[1].key, "spot");
    assert_string_equal(t[1].value, "true");
    assert_false(t[1].op_exists);
    assert_false(t[1].any_effect);
    assert_int_equal(t[1].effect, GP_EFFECT_NO_EXECUTE);
    assert_string_equal(t[2].value, "ml");
    assert_true(t[2].any_effect);
    done(p);
}

static void test_template_wins(void **state)
{
    (void)state;
    struct parsed *p = parse_ok("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
                                "  labels: {gpuplane.io/queue: outer}\n"
                                "  annotations:\n"
                                "    sim.gpuplane.io/duration: 1h\n"
                                "    sim.gpuplane.io/arrival: 5m\n"
                                "spec:\n  template:\n"
                                "    metadata:\n"
                                "      name: ignored\n"
                                "      labels: {gpuplane.io/queue: inner}\n"
                                "      annotations: {sim.gpuplane.io/duration: 2h}\n"
                                "    spec: {containers: [{name: c}]}\n");
    const struct gp_item *it = &p->w.items[0];
    assert_string_equal(it->name, "j");
    assert_true(it->duration.a == 7200);
    assert_true(it->arrival_s == 300);
    assert_string_equal(it->queue, "inner");
    done(p);
}

static void test_lists_and_json(void **state)
{
    (void)state;
    struct parsed *p = parse_ok(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c}]}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c}]}}\n"
        "---\n"
        "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": \"j\", "
        "\"annotations\": {\"sim.gpuplane.io/repeat\": \"3\"}},\n"
        "\t\"spec\": {\"completions\": 2, \"template\": {\"spec\": {\"containers\": [{\"name\": "
        "\"c\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": 2}}}]}}}}\n"
        "---\n");
    assert_int_equal(p->w.nitems, 3);
    assert_string_equal(p->w.items[0].name, "a");
    assert_string_equal(p->w.items[0].source, "jobs.yaml:4");
    assert_string_equal(p->w.items[1].source, "jobs.yaml:5");
    assert_string_equal(p->w.items[2].name, "j");
    assert_int_equal(p->w.items[2].completions, 2);
    assert_int_equal(p->w.items[2].repeat, 3);
    assert_int_equal(p->w.items[2].pod.gpu_count, 2);
    done(p);
}

static void test_ignores_other_fields(void **state)
{
    (void)state;
    /* a real manifest carries much we do not read: it must not matter */
    struct parsed *p = parse_ok("apiVersion: apps/v1\nkind: Deployment\n"
                                "metadata:\n  name: web\n  namespace: prod\n"
                                "  annotations: {deployment.kubernetes.io/revision: \"3\", "
                                "note: [not, a, string]}\n"
                                "spec:\n  replicas: 2\n  strategy: {type: RollingUpdate}\n"
                                "  selector: {matchLabels: {app: web}}\n"
                                "  template:\n    spec:\n"
                                "      affinity: {nodeAffinity: {}}\n"
                                "      volumes: [{name: v, emptyDir: {}}]\n"
                                "      containers:\n"
                                "      - name: c\n        image: nginx\n"
                                "        env: [{name: A, value: b}]\n"
                                "        livenessProbe: {httpGet: {path: /, port: 80}}\n"
                                "status: {replicas: 2}\n");
    assert_int_equal(p->w.items[0].replicas, 2);
    done(p);
}

/* --- bad input, one class per test --------------------------------------- */

static void test_syntax_error(void **state)
{
    (void)state;
    expect_error(POD("    resources: {requests: {cpu: 1}\n"), GP_EPARSE,
                 "jobs.yaml:9:1: YAML syntax error: missing comma in flow mapping");
    expect_error(POD_HEAD "spec: {containers: [{name: c}]}\n---\nkind: Pod\n  bad: indent\n",
                 GP_EPARSE, "jobs.yaml:7:7: YAML syntax error: invalid multiline plain key");
}

static void test_bad_quantity(void **state)
{
    (void)state;
    expect_error("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n"
                 "  template:\n    spec:\n      containers:\n      - name: c\n"
                 "        resources:\n          requests:\n            cpu: \"2\"\n"
                 "            memory: 16 GB\n",
                 GP_EINVALID,
                 "jobs.yaml:13:21: Job/train.spec.template.spec.containers[0].resources.requests."
                 "memory: expected a Kubernetes quantity like 16Gi, got \"16 GB\"");
    expect_error(POD("    resources: {limits: {cpu: 2 cores}}\n"), GP_EINVALID,
                 "jobs.yaml:8:31: Pod/p.spec.containers[0].resources.limits.cpu: expected a "
                 "Kubernetes CPU quantity like 8 or 500m, got \"2 cores\"");
    expect_error(POD("    resources: {limits: {nvidia.com/gpu: 0.5}}\n"), GP_EINVALID,
                 "jobs.yaml:8:42: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: "
                 "expected a whole number of GPUs like 1 (for a share of one GPU use the "
                 "gpuplane.io/gpu-milli annotation), got \"0.5\"");
    expect_error(POD("    resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: "
                     "2}}\n"),
                 GP_EINVALID,
                 "jobs.yaml:8:44: Pod/p.spec.containers[0].resources: requests and limits of "
                 "nvidia.com/gpu differ (1 and 2); Kubernetes needs them equal");
    expect_error(POD("    resources: {limits: {nvidia.com/gpu: 17}}\n"), GP_EINVALID,
                 "jobs.yaml:8:42: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: "
                 "too many GPUs for one node (the pod asks for 17 GPUs in all; a node has at most "
                 "16)");
    expect_error(POD("    resources: {limits: {nvidia.com/mig-9g.1gb: 1}}\n"), GP_EINVALID,
                 "jobs.yaml:8:26: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/"
                 "mig-9g.1gb\"]: no GPU model has the MIG profile \"9g.1gb\" (expected a "
                 "profile of data/mig-profiles.json, like nvidia.com/mig-1g.10gb)");
    expect_error(POD("    resources: {limits: {nvidia.com/gpu.shared: 1.5}}\n"), GP_EINVALID,
                 "jobs.yaml:8:49: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/"
                 "gpu.shared\"]: expected a whole number of replicas of shared GPUs like 1, got "
                 "\"1.5\"");
    expect_error(POD("    resources: {limits: {nvidia.com/gpu.shared: 17}}\n"), GP_EINVALID,
                 "jobs.yaml:8:49: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/"
                 "gpu.shared\"]: too many replicas for one pod (it asks for 17 in all; a pod "
                 "takes at most 16)");
    expect_error(POD("    resources: {limits: {nvidia.com/gpu: 1, nvidia.com/mig-1g.10gb: 1}}\n"),
                 GP_EINVALID,
                 "jobs.yaml:8:42: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: "
                 "cannot be combined with nvidia.com/mig-* in one pod");
    expect_error(POD("    resources: {limits: {nvidia.com/mig-1g.10gb: 1, "
                     "nvidia.com/mig-2g.20gb: 1}}\n"),
                 GP_EUNSUPPORTED,
                 "jobs.yaml:8:53: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/"
                 "mig-2g.20gb\"]: a second MIG profile in one pod (it already asks for "
                 "1g.10gb); gpuplane places MIG instances of one profile per pod");
}

/* Requests for shared GPUs as NVIDIA's device plugin names them, and the
 * gpuplane.io/sharing annotation that pins modes. */
static void test_sharing_requests(void **state)
{
    (void)state;
    struct parsed *p = parse_ok(POD("    resources: {limits: {nvidia.com/mig-3g.40gb: 2}}\n"));
    const struct gp_pod_spec *pod = &p->w.items[0].pod;
    assert_string_equal(pod->mig_profile, "3g.40gb");
    assert_int_equal(pod->gpu_count, 2);
    assert_int_equal(pod->gpu_milli, 428); /* 3 of 7 compute slices */
    assert_int_equal(pod->gpu_mem_mib, 40 * 1024);
    assert_int_equal(pod->share_modes, 1u << GP_SHARE_MIG);
    done(p);

    p = parse_ok(POD_HEAD "  annotations: {gpuplane.io/gpu-memory: 12Gi}\n"
                          "spec:\n  containers:\n  - name: c\n"
                          "    resources: {limits: {nvidia.com/gpu.shared: 1}}\n");
    pod = &p->w.items[0].pod;
    assert_int_equal(pod->gpu_count, 1);
    assert_int_equal(pod->gpu_milli, 1000); /* a replica, no share declared */
    assert_int_equal(pod->gpu_mem_mib, 12 * 1024);
    assert_int_equal(pod->share_modes, 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS);
    assert_int_equal(pod->gpu_resource, GP_GPU_RES_SHARED);
    assert_null(pod->mig_profile);
    done(p);

    /* the resource names the request is made with (docs/sharing.md) */
    p = parse_ok(POD("    resources: {limits: {nvidia.com/gpu.shared: 2}}\n"));
    pod = &p->w.items[0].pod;
    assert_int_equal(pod->gpu_count, 2); /* two replicas */
    assert_int_equal(pod->gpu_resource, GP_GPU_RES_SHARED);
    done(p);
    p = parse_ok(POD("    resources: {limits: {nvidia.com/gpu: 2}}\n"));
    assert_int_equal(p->w.items[0].pod.gpu_resource, GP_GPU_RES_GPU);
    done(p);
    p = parse_ok(POD_HEAD "  annotations: {gpuplane.io/gpu-milli: \"250\"}\n"
                          "spec:\n  containers:\n  - name: c\n");
    assert_int_equal(p->w.items[0].pod.gpu_resource, GP_GPU_RES_NONE);
    done(p);
    p = parse_ok(POD_HEAD "  annotations: {gpuplane.io/gpu-milli: \"250\"}\n"
                          "spec:\n  containers:\n  - name: c\n"
                          "    resources: {limits: {nvidia.com/gpu: 1}}\n");
    assert_int_equal(p->w.items[0].pod.gpu_resource, GP_GPU_RES_GPU);
    done(p);
    /* whole GPUs may be pinned to time-slicing: nvidia.com/gpu: 1 is a replica there */
    p = parse_ok(POD_HEAD "  annotations: {gpuplane.io/sharing: timeslice}\n"
                          "spec:\n  containers:\n  - name: c\n"
                          "    resources: {limits: {nvidia.com/gpu: 1}}\n");
    assert_int_equal(p->w.items[0].pod.share_modes, 1u << GP_SHARE_TIMESLICE);
    done(p);
    expect_error(POD_HEAD "  annotations: {gpuplane.io/gpu-milli: \"250\"}\n"
                          "spec:\n  containers:\n  - name: c\n"
                          "    resources: {limits: {nvidia.com/gpu.shared: 2}}\n",
                 GP_EINVALID,
                 "jobs.yaml:9:49: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/"
                 "gpu.shared\"]: more than one replica cannot be combined with "
                 "gpuplane.io/gpu-milli (a share is part of one GPU)");

    p = parse_ok(POD_HEAD "  annotations: {gpuplane.io/gpu-milli: \"250\", "
                          "gpuplane.io/sharing: \"mps, mig\"}\n"
                          "spec:\n  containers:\n  - name: c\n");
    pod = &p->w.items[0].pod;
    assert_int_equal(pod->gpu_milli, 250);
    assert_int_equal(pod->share_modes, 1u << GP_SHARE_MPS | 1u << GP_SHARE_MIG);
    done(p);

    expect_error(POD_HEAD "  annotations: {gpuplane.io/sharing: mig}\n"
                          "spec:\n  containers:\n  - name: c\n"
                          "    resources: {limits: {nvidia.com/gpu.shared: 1}}\n",
                 GP_EINVALID,
                 "jobs.yaml:5:38: Pod/p.metadata.annotations[\"gpuplane.io/sharing\"]: allows no "
                 "mode the pod's GPU request can use (nvidia.com/gpu.shared needs timeslice or "
                 "mps, nvidia.com/mig-* mig)");
    expect_error(POD_HEAD "  annotations: {gpuplane.io/sharing: hami}\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:5:38: Pod/p.metadata.annotations[\"gpuplane.io/sharing\"]: expected "
                 "sharing modes separated by commas: exclusive, timeslice, mps, mig, got \"hami\"");
}

static void test_wrong_types(void **state)
{
    (void)state;
    expect_error(POD_HEAD "spec:\n  priority: high\n  containers: [{name: c}]\n", GP_EINVALID,
                 "jobs.yaml:6:13: Pod/p.spec.priority: expected an integer from -2147483648 to "
                 "2147483647, got \"high\"");
    expect_error("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                 "spec:\n  replicas: \"2\"\n  template: {spec: {containers: [{name: c}]}}\n",
                 GP_EINVALID,
                 "jobs.yaml:5:13: Deployment/d.spec.replicas: expected a non-negative integer, "
                 "got the string \"2\" (remove the quotes)");
    expect_error("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n"
                 "spec:\n  completions: -1\n  template: {spec: {containers: [{name: c}]}}\n",
                 GP_EINVALID,
                 "jobs.yaml:5:16: Job/j.spec.completions: expected a non-negative integer, got "
                 "\"-1\"");
    expect_error(POD_HEAD "spec:\n  containers: {name: c}\n", GP_EINVALID,
                 "jobs.yaml:6:16: Pod/p.spec.containers: expected a list, got a mapping");
    expect_error(POD_HEAD "spec:\n  nodeSelector: {zone: [a]}\n  containers: [{name: c}]\n",
                 GP_EINVALID,
                 "jobs.yaml:6:25: Pod/p.spec.nodeSelector.zone: expected a string, got a list");
    expect_error(POD_HEAD "spec:\n  tolerations: [{key: a, operator: Exists, value: b}]\n"
                          "  containers: [{name: c}]\n",
                 GP_EINVALID,
                 "jobs.yaml:6:18: Pod/p.spec.tolerations[0]: value must be empty when operator is "
                 "Exists");
    expect_error(POD_HEAD "spec:\n  tolerations: [{key: a, operator: In}]\n"
                          "  containers: [{name: c}]\n",
                 GP_EINVALID,
                 "jobs.yaml:6:36: Pod/p.spec.tolerations[0].operator: expected Equal or Exists, "
                 "got \"In\"");
}

static void test_missing_required(void **state)
{
    (void)state;
    expect_error("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                 "spec:\n  replicas: 2\n",
                 GP_EINVALID,
                 "jobs.yaml:5:3: Deployment/d.spec: missing required field \"template\"");
    expect_error("apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\nspec: {}\n", GP_EINVALID,
                 "jobs.yaml:3:12: Pod.metadata: missing required field \"name\"");
    expect_error("kind: Pod\nmetadata: {name: x}\n", GP_EINVALID,
                 "jobs.yaml:1:1: missing required field \"apiVersion\"");
    expect_error(POD_HEAD "spec:\n  containers: []\n", GP_EINVALID,
                 "jobs.yaml:6:3: Pod/p.spec.containers: expected at least one container");
    expect_error(POD_HEAD, GP_EINVALID, "jobs.yaml:1:1: Pod/p: missing required field \"spec\"");
}

static void test_unknown_kind(void **state)
{
    (void)state;
    expect_error(POD("") "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n",
                 GP_EUNSUPPORTED,
                 "jobs.yaml:10:7: unknown kind \"Service\" in the object starting at line 9 "
                 "(expected one of: Pod, Deployment, Job, PodGroup, Queue, PriorityClass, "
                 "InferenceService, List)");
    expect_error("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: d}\n",
                 GP_EINVALID,
                 "jobs.yaml:1:13: apiVersion: expected \"apps/v1\" for a Deployment, got "
                 "\"extensions/v1beta1\"");
    expect_error("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n",
                 GP_EINVALID, "jobs.yaml:5:9: items[0]: a List inside a List is not supported");
    expect_error("- a\n", GP_EINVALID,
                 "jobs.yaml:1:3: expected a Kubernetes object (a mapping), got a list");
}

/* PodGroups of both CRDs make the objects that name them gangs. */
static void test_podgroups(void **state)
{
    (void)state;
    struct parsed *p = parse_ok(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: train\n"
        "  annotations:\n    gpuplane.io/topology-key: gpuplane.io/rack\n"
        "    gpuplane.io/topology-policy: required\n"
        "spec:\n  minMember: 4\n  scheduleTimeoutSeconds: 600\n"
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
        "metadata: {name: eval}\nspec: {minMember: 2, queue: research}\n"
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: workers\n"
        "spec:\n  parallelism: 4\n  completions: 4\n  template:\n    metadata:\n"
        "      labels: {scheduling.x-k8s.io/pod-group: train}\n"
        "    spec:\n      containers:\n      - name: c\n"
        "        resources: {limits: {nvidia.com/gpu: 8}}\n"
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: evals\n"
        "  annotations: {scheduling.k8s.io/group-name: eval}\n"
        "spec:\n  parallelism: 2\n  template:\n    spec:\n      containers:\n"
        "      - name: c\n---\n" POD(""));
    assert_int_equal(p->w.nitems, 3); /* PodGroups are not items */
    const struct gp_item *train = &p->w.items[0], *evals = &p->w.items[1], *pod = &p->w.items[2];
    assert_string_equal(train->group_name, "train");
    assert_int_equal(train->gang_min, 4);
    assert_string_equal(train->topology_key, "gpuplane.io/rack");
    assert_true(train->topology_required);
    assert_true(train->gang_timeout_s == 600);
    assert_true(train->topology_slowdown == GP_TOPOLOGY_SLOWDOWN);
    assert_int_equal(evals->gang_min, 2);
    assert_true(evals->gang_timeout_s == 0);
    assert_null(evals->topology_key);
    assert_int_equal(pod->gang_min, 0);
    done(p);
    /* a PodGroup no file defines: an error once every file is read */
    p = parse_ok("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  labels: "
                 "{scheduling.x-k8s.io/pod-group: nope}\nspec:\n  template:\n    spec:\n"
                 "      containers:\n      - name: c\n");
    assert_int_equal(p->w.items[0].gang_min, 0);
    assert_int_equal(gp_workload_finish(&p->w, &p->arena, &p->diag), GP_EINVALID);
    assert_string_equal(p->diag.msg,
                        "jobs.yaml:1: j names PodGroup \"nope\", which no workload file defines");
    done(p);
    expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                 "spec: {minMember: 0}\n",
                 GP_EINVALID,
                 "jobs.yaml:4:19: PodGroup.spec.minMember: expected an integer from 1 to 100000, "
                 "got \"0\"");
    expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n"
                 "  annotations: {gpuplane.io/topology-policy: strict}\n",
                 GP_EINVALID,
                 "jobs.yaml:5:46: PodGroup.metadata.annotations[\"gpuplane.io/topology-policy\"]: "
                 "expected required or preferred, got \"strict\"");
    p = parse_ok("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n"
                 "  name: g\n  annotations: {gpuplane.io/topology-key: rack, "
                 "gpuplane.io/topology-slowdown: \"1.4\"}\n"
                 "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                 "  labels: {scheduling.x-k8s.io/pod-group: g}\nspec: {containers: [{name: c}]}\n");
    assert_true(p->w.items[0].topology_slowdown == 1.4);
    done(p);
    expect_error(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n"
        "  annotations: {gpuplane.io/topology-slowdown: \"0.5\"}\n",
        GP_EINVALID,
        "jobs.yaml:5:48: PodGroup.metadata.annotations[\"gpuplane.io/topology-slowdown\"]: "
        "expected a slowdown factor from 1 to 100 like \"1.3\", got \"0.5\"");
}

static void test_bad_annotation(void **state)
{
    (void)state;
    expect_error(POD_HEAD "  annotations:\n    sim.gpuplane.io/durations: 30m\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:5: Pod/p.metadata.annotations[\"sim.gpuplane.io/durations\"]: "
                 "unknown gpuplane annotation; did you mean \"sim.gpuplane.io/duration\"?");
    expect_error(POD_HEAD "  annotations:\n    sim.gpuplane.io/duration: exp(30 minutes)\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:31: Pod/p.metadata.annotations[\"sim.gpuplane.io/duration\"]: "
                 "expected a duration or distribution like 30m, exp(30m), uniform(10m,2h) or "
                 "lognormal(20m,1.0), got \"exp(30 minutes)\"");
    expect_error(POD_HEAD "  annotations:\n    sim.gpuplane.io/failure-probability: \"1.5\"\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:42: Pod/p.metadata.annotations[\"sim.gpuplane.io/"
                 "failure-probability\"]: expected a probability from 0 to 1 like 0.05, got "
                 "\"1.5\"");
    expect_error(POD_HEAD "  annotations:\n    sim.gpuplane.io/repeat: \"0\"\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:29: Pod/p.metadata.annotations[\"sim.gpuplane.io/repeat\"]: expected "
                 "a number of submissions from 1 to 10000000, got \"0\"");
    expect_error(POD_HEAD "  annotations:\n    gpuplane.io/gpu-milli: \"250\"\n"
                          "spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
                          "2}}}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:28: Pod/p.metadata.annotations[\"gpuplane.io/gpu-milli\"]: cannot be "
                 "combined with nvidia.com/gpu: 2 (a share is part of one GPU)");
    expect_error(POD_HEAD "  annotations:\n    gpuplane.io/gpu-milli: \"1500\"\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:28: Pod/p.metadata.annotations[\"gpuplane.io/gpu-milli\"]: expected "
                 "thousandths of one GPU from 1 to 1000 like \"250\", got \"1500\"");
    expect_error(POD_HEAD "  annotations:\n    gpuplane.io/gpu-model: A100-80GB\n"
                          "spec:\n  nodeSelector: {nvidia.com/gpu.product: H100}\n"
                          "  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n",
                 GP_EINVALID,
                 "jobs.yaml:6:28: Pod/p.metadata.annotations[\"gpuplane.io/gpu-model\"]: does not "
                 "allow the model of nodeSelector nvidia.com/gpu.product: H100");
    expect_error(POD_HEAD "  annotations:\n    gpuplane.io/gpu-model: \"A100||H100\"\n"
                          "spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
                          "1}}}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:28: Pod/p.metadata.annotations[\"gpuplane.io/gpu-model\"]: expected "
                 "GPU models separated by | like \"A100-80GB|H100-80GB\", got \"A100||H100\"");
    expect_error(
        POD_HEAD "  annotations:\n    gpuplane.io/gpu-model: A100\n"
                 "spec: {containers: [{name: c}]}\n",
        GP_EINVALID,
        "jobs.yaml:6:28: Pod/p.metadata.annotations[\"gpuplane.io/gpu-model\"]: a GPU model "
        "constraint on a pod that asks for no GPU");
    expect_error(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
        "  annotations: {sim.gpuplane.io/retries: \"3\"}\n"
        "spec: {template: {spec: {containers: [{name: c}]}}}\n",
        GP_EINVALID,
        "jobs.yaml:5:42: Job/j.metadata.annotations[\"sim.gpuplane.io/retries\"]: only for "
        "a Pod; a Job has spec.backoffLimit");
    expect_error(POD_HEAD "  annotations:\n    gpuplane.io/queue: batch\n"
                          "spec: {containers: [{name: c}]}\n",
                 GP_EINVALID,
                 "jobs.yaml:6:5: Pod/p.metadata.annotations[\"gpuplane.io/queue\"]: "
                 "gpuplane.io/queue belongs in the labels of a Pod, Job or Deployment, not here");
}

static void test_error_keeps_workload(void **state)
{
    (void)state;
    /* a failed file adds nothing, even when its first objects were good */
    struct gp_arena a;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    gp_arena_init(&a);
    const char *good = POD("");
    assert_int_equal(gp_workload_parse_manifest(good, strlen(good), "a.yaml", &a, &w, &d), GP_OK);
    const char *bad = POD("") "---\n" POD("    resources: {requests: {cpu: x}}\n");
    assert_int_equal(gp_workload_parse_manifest(bad, strlen(bad), "b.yaml", &a, &w, &d),
                     GP_EINVALID);
    assert_int_equal(w.nitems, 1);
    gp_arena_free(&a);
}

/* --- distributions ------------------------------------------------------- */

static void test_dist_parse(void **state)
{
    (void)state;
    struct gp_dist d;
    assert_true(gp_dist_parse("30m", &d));
    assert_int_equal(d.kind, GP_DIST_FIXED);
    assert_true(d.a == 1800);
    assert_true(gp_dist_parse("fixed(2h30m)", &d));
    assert_true(d.a == 9000);
    assert_true(gp_dist_parse("exp(30m)", &d));
    assert_int_equal(d.kind, GP_DIST_EXP);
    assert_true(d.a == 1800);
    assert_true(gp_dist_parse("uniform(10m, 2h)", &d));
    assert_int_equal(d.kind, GP_DIST_UNIFORM);
    assert_true(d.a == 600 && d.b == 7200);
    assert_true(gp_dist_parse("lognormal(20m,1.0)", &d));
    assert_int_equal(d.kind, GP_DIST_LOGNORMAL);
    assert_true(d.a == 1200 && d.b == 1.0);
    assert_true(gp_dist_parse("45", &d));
    assert_true(d.a == 45);

    const char *bad[] = {"",
                         "exp()",
                         "exp(1m",
                         "exp(1m,2m)",
                         "uniform(1m)",
                         "uniform(2h,1h)",
                         "lognormal(1m,-1)",
                         "lognormal(1m,11)",
                         "normal(1m)",
                         "(1m)",
                         "exp(1m)x",
                         "uniform(1m,,2m)",
                         "30 m",
                         "-5m",
                         "99999999999d",
                         "uniform(1m,2m,3m)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (gp_dist_parse(bad[i], &d))
            print_error("accepted \"%s\"\n", bad[i]);
        assert_false(gp_dist_parse(bad[i], &d));
    }
}

static void test_dist_sample(void **state)
{
    (void)state;
    struct gp_dist exp_d, uni, logn, fixed;
    assert_true(gp_dist_parse("exp(30m)", &exp_d));
    assert_true(gp_dist_parse("uniform(10m,2h)", &uni));
    assert_true(gp_dist_parse("lognormal(20m,1.0)", &logn));
    assert_true(gp_dist_parse("90s", &fixed));

    /* the same seed gives the same samples */
    struct gp_rng r1, r2;
    gp_rng_seed(&r1, 42);
    gp_rng_seed(&r2, 42);
    for (int i = 0; i < 100; i++) {
        assert_true(gp_dist_sample(&exp_d, &r1) == gp_dist_sample(&exp_d, &r2));
        assert_true(gp_dist_sample(&logn, &r1) == gp_dist_sample(&logn, &r2));
    }

    /* and the samples have the documented shape */
    const int n = 20000;
    double sum = 0, below_median = 0;
    gp_rng_seed(&r1, 7);
    for (int i = 0; i < n; i++) {
        double v = gp_dist_sample(&exp_d, &r1);
        assert_true(v >= 0);
        sum += v;
        double u = gp_dist_sample(&uni, &r1);
        assert_true(u >= 600 && u <= 7200);
        below_median += gp_dist_sample(&logn, &r1) < 1200;
        assert_true(gp_dist_sample(&fixed, &r1) == 90);
    }
    assert_true(sum / n > 1800 * 0.95 && sum / n < 1800 * 1.05);
    assert_true(below_median / n > 0.48 && below_median / n < 0.52);
}

/* --- loading ------------------------------------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    remove(path);
}

#define NAMED_POD(n)                                                                               \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " n "}\nspec: {containers: [{name: c}]}\n"

static void test_directory_order(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp-test-manifest-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "b.yaml", NAMED_POD("b1") "---\n" NAMED_POD("b2"));
    write_file(dir, "a.yml", NAMED_POD("a"));
    write_file(dir, "C.json",
               "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
               "\"C\"}, \"spec\": {\"containers\": [{\"name\": \"c\"}]}}\n");
    write_file(dir, "notes.txt", "not a manifest");
    write_file(dir, ".hidden.yaml", "not: [valid");

    struct gp_arena a;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_workload_load(dir, &a, &w, &d);
    if (err != GP_OK)
        print_error("%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(w.nitems, 4);
    /* bytewise name order: "C.json" < "a.yml" < "b.yaml" */
    assert_string_equal(w.items[0].name, "C");
    assert_string_equal(w.items[1].name, "a");
    assert_string_equal(w.items[2].name, "b1");
    assert_string_equal(w.items[3].name, "b2");
    char want[600];
    snprintf(want, sizeof want, "%s/b.yaml:6", dir);
    assert_string_equal(w.items[3].source, want);

    /* the same objects again are defined twice */
    err = gp_workload_load(dir, &a, &w, &d);
    assert_int_equal(err, GP_EINVALID);
    snprintf(want, sizeof want,
             "%s/C.json:1:58: Pod/C: defined twice in namespace \"default\" "
             "(first at %s/C.json:1)",
             dir, dir);
    assert_string_equal(d.msg, want);
    assert_int_equal(w.nitems, 4);

    /* a bad file names itself and leaves the workload as it was: nothing of
     * the directory's earlier files stays */
    write_file(dir, "d.yaml", NAMED_POD("d") "  extra: [\n");
    struct gp_workload w2 = {0};
    err = gp_workload_load(dir, &a, &w2, &d);
    assert_int_equal(err, GP_EPARSE);
    snprintf(want, sizeof want, "%s/d.yaml:", dir);
    assert_non_null(strstr(d.msg, want));
    assert_int_equal(w2.nitems, 0);
    assert_int_equal(w2.nobjects, 0);
    assert_int_equal(w2.nqueues, 0);

    remove_file(dir, "b.yaml");
    remove_file(dir, "a.yml");
    remove_file(dir, "C.json");
    remove_file(dir, "d.yaml");
    remove_file(dir, ".hidden.yaml");
    err = gp_workload_load(dir, &a, &w, &d);
    assert_int_equal(err, GP_EINVALID);
    assert_non_null(strstr(d.msg, "no *.yaml, *.yml or *.json files"));
    remove_file(dir, "notes.txt");
    rmdir(dir);
    gp_arena_free(&a);
}

static void test_missing_file(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    gp_arena_init(&a);
    assert_int_equal(gp_workload_load("/nonexistent/jobs.yaml", &a, &w, &d), GP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "/nonexistent/jobs.yaml"));
    assert_int_equal(gp_workload_load("openb:/nonexistent/pods.csv", &a, &w, &d), GP_ENOTFOUND);
    assert_int_equal(gp_workload_load("philly:/nonexistent/jobs.csv", &a, &w, &d), GP_ENOTFOUND);
    assert_int_equal(gp_workload_load("philly:", &a, &w, &d), GP_EUSAGE);
    assert_int_equal(gp_workload_load("", &a, &w, &d), GP_EUSAGE);
    assert_int_equal(w.nitems, 0);
    gp_arena_free(&a);
}

static void test_append_grows(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_workload w = {0};
    gp_arena_init(&a);
    for (uint32_t i = 0; i < 1000; i++) {
        struct gp_item it = {.name = "x", .replicas = i};
        assert_int_equal(gp_workload_append(&w, &a, &it), GP_OK);
    }
    assert_int_equal(w.nitems, 1000);
    assert_true(w.cap >= 1000);
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(w.items[i].replicas, i);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_workload),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_resources),
        cmocka_unit_test(test_gpu_shares),
        cmocka_unit_test(test_constraints),
        cmocka_unit_test(test_template_wins),
        cmocka_unit_test(test_lists_and_json),
        cmocka_unit_test(test_ignores_other_fields),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_bad_quantity),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_sharing_requests),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_unknown_kind),
        cmocka_unit_test(test_podgroups),
        cmocka_unit_test(test_bad_annotation),
        cmocka_unit_test(test_error_keeps_workload),
        cmocka_unit_test(test_dist_parse),
        cmocka_unit_test(test_dist_sample),
        cmocka_unit_test(test_directory_order),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_append_grows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
