/* test_k8s_schema.c - manifests read as the API server reads them with
 * fieldValidation=Strict (io/k8s_schema.c): the edit distance behind "did
 * you mean", the generated field tree, the model table (sorted, complete
 * for every modelled type, every row a real field), gpuplane's keys, and
 * the walk through the manifest reader: unknown fields at every level of
 * every kind, unknown resources, misspelt gpuplane keys and domains,
 * objects defined twice, and warnings once per field kind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/k8s_schema.h"
#include "io/workload.h"
#include "util/strdist.h"

struct parsed {
    struct gp_arena arena;
    struct gp_workload w;
    struct gp_diag diag;
    enum gp_err err;
};

static struct parsed *parse_as(struct parsed *p, const char *name, const char *text)
{
    if (!p) {
        p = calloc(1, sizeof *p);
        assert_non_null(p);
        gp_arena_init(&p->arena);
    }
    p->err = gp_workload_parse_manifest(text, strlen(text), name, &p->arena, &p->w, &p->diag);
    return p;
}

static struct parsed *parse_ok(const char *text)
{
    struct parsed *p = parse_as(NULL, "m.yaml", text);
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

static void expect_error(const char *text, const char *msg)
{
    struct parsed *p = parse_as(NULL, "m.yaml", text);
    if (p->err != GP_EINVALID || strcmp(p->diag.msg, msg) != 0)
        print_error("got %d \"%s\"\nwant \"%s\"\n", p->err, p->diag.msg, msg);
    assert_int_equal(p->err, GP_EINVALID);
    assert_string_equal(p->diag.msg, msg);
    assert_null(strchr(p->diag.msg, '\n'));
    assert_int_equal(p->w.nitems, 0);
    done(p);
}

#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
/* a Pod whose one container has `c` (indented 4) after its name */
#define POD(c)    POD_HEAD "spec:\n  containers:\n  - name: c\n" c
#define JOB(spec) "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n" spec
#define TEMPLATE  "  template:\n    spec:\n      containers:\n      - name: c\n"

/* --- the distance -------------------------------------------------------- */

static void test_distance(void **state)
{
    (void)state;
    assert_int_equal(gp_strdist("", ""), 0);
    assert_int_equal(gp_strdist("", "abc"), 3);
    assert_int_equal(gp_strdist("abc", ""), 3);
    assert_int_equal(gp_strdist("resource", "resources"), 1);
    assert_int_equal(gp_strdist("nodeSelecter", "nodeSelector"), 1);
    assert_int_equal(gp_strdist("backOffLimit", "backoffLimit"), 1);
    assert_int_equal(gp_strdist("limtis", "limits"), 1); /* a swap is one edit */
    assert_int_equal(gp_strdist("kitten", "sitting"), 3);
    assert_int_equal(gp_strdist("sim.gpuplan.io", "sim.gpuplane.io"), 1);
    assert_int_equal(gp_strdist("ca", "abc"), 3); /* OSA, not full Damerau */
    /* long names are compared on their first GP_STRDIST_MAX bytes */
    char a[200], b[200];
    memset(a, 'x', sizeof a - 1);
    a[sizeof a - 1] = '\0';
    memcpy(b, a, sizeof b);
    b[150] = 'y';
    assert_int_equal(gp_strdist(a, b), 0);
    b[3] = 'y';
    assert_int_equal(gp_strdist(a, b), 1);

    /* the bounded distance is the distance, or max + 1 past max */
    static const char *const pairs[][2] = {
        {"kitten", "sitting"},
        {"sim.gpuplan.io", "sim.gpuplane.io"},
        {"gpuplane.oi", "gpuplane.io"},
        {"example.com", "gpuplane.io"},
        {"ab", "ba"},
        {"", "xyz"},
        {"abcdef", "badcfe"},
        {"app.kubernetes.io", "sim.gpuplane.io"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        for (unsigned max = 0; max < 6; max++) {
            unsigned d = gp_strdist(pairs[i][0], pairs[i][1]);
            assert_int_equal(gp_strdist_max(pairs[i][0], pairs[i][1], max), d <= max ? d : max + 1);
        }
    static const char *const names[] = {"limits", "requests", "claims", "limit"};
    unsigned d;
    assert_int_equal(gp_strdist_nearest("request", names, 4, sizeof names[0], &d), 1);
    assert_int_equal(d, 1);
    assert_int_equal(gp_strdist_nearest("limitz", names, 4, sizeof names[0], &d), 0); /* tie */
    assert_true(gp_strdist_close("resource", 1));
    assert_false(gp_strdist_close("ab", 1));
    assert_false(gp_strdist_close("9g.1gb", 2));
    assert_true(gp_strdist_close("nodeSelecter", 3));
    assert_false(gp_strdist_close("nodeSelecterrrrrrrrrr", 4));
}

/* --- the tables ---------------------------------------------------------- */

static void test_tree(void **state)
{
    (void)state;
    for (size_t t = 1; t < gp_k8s_ntypes; t++)
        assert_true(strcmp(gp_k8s_types[t - 1].name, gp_k8s_types[t].name) < 0);
    for (size_t t = 0; t < gp_k8s_ntypes; t++) {
        const struct gp_k8s_type *ty = &gp_k8s_types[t];
        for (unsigned i = 1; i < ty->count; i++)
            assert_true(strcmp(gp_k8s_fields[ty->first + i - 1].name,
                               gp_k8s_fields[ty->first + i].name) < 0);
    }
    int spec = gp_k8s_type_find("PodSpec");
    assert_true(spec >= 0);
    const struct gp_k8s_field *f = gp_k8s_field_find((unsigned)spec, "containers");
    assert_non_null(f);
    assert_int_equal(f->kind, GP_K8S_LIST);
    assert_string_equal(gp_k8s_types[f->type].name, "Container");
    assert_null(gp_k8s_field_find((unsigned)spec, "container"));
    assert_int_equal(gp_k8s_type_find("NoSuchType"), -1);
    /* every kind the reader accepts has a root */
    static const char *const kinds[][2] = {
        {"Pod", "v1"},
        {"Job", "batch/v1"},
        {"Deployment", "apps/v1"},
        {"PodGroup", "scheduling.x-k8s.io/v1alpha1"},
        {"PodGroup", "scheduling.volcano.sh/v1beta1"},
        {"Queue", "gpuplane.io/v1"},
        {"Queue", "scheduling.volcano.sh/v1beta1"},
        {"PriorityClass", "scheduling.k8s.io/v1"},
        {"List", "v1"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t j;
        for (j = 0; j < gp_k8s_nroots; j++)
            if (!strcmp(gp_k8s_roots[j].kind, kinds[i][0]) &&
                !strcmp(gp_k8s_roots[j].api_version, kinds[i][1]))
                break;
        assert_true(j < gp_k8s_nroots);
    }
}

/* Visits type t and, through its modelled fields, the types they hold:
 * every field must have a row. */
static void check_modelled(unsigned t, unsigned char *seen)
{
    if (seen[t])
        return;
    seen[t] = 1;
    const struct gp_k8s_type *ty = &gp_k8s_types[t];
    for (unsigned i = 0; i < ty->count; i++) {
        const struct gp_k8s_field *f = &gp_k8s_fields[ty->first + i];
        const struct gp_k8s_model *row = gp_k8s_model_find(ty->name, f->name);
        if (!row)
            print_error("no row in k8s_model.c for %s.%s\n", ty->name, f->name);
        assert_non_null(row);
        if (row->cls == GP_K8S_MODELLED &&
            (f->kind == GP_K8S_OBJECT || f->kind == GP_K8S_LIST || f->kind == GP_K8S_MAPOF))
            check_modelled(f->type, seen);
    }
}

static void test_model_table(void **state)
{
    (void)state;
    for (size_t i = 1; i < gp_k8s_nmodel; i++) {
        int c = strcmp(gp_k8s_model[i - 1].type, gp_k8s_model[i].type);
        if (c > 0 || (c == 0 && strcmp(gp_k8s_model[i - 1].field, gp_k8s_model[i].field) >= 0))
            print_error("k8s_model.c: %s.%s is out of order\n", gp_k8s_model[i].type,
                        gp_k8s_model[i].field);
        assert_true(c < 0 ||
                    (c == 0 && strcmp(gp_k8s_model[i - 1].field, gp_k8s_model[i].field) < 0));
    }
    unsigned char *seen = calloc(gp_k8s_ntypes, 1);
    assert_non_null(seen);
    for (size_t r = 0; r < gp_k8s_nroots; r++)
        check_modelled(gp_k8s_roots[r].type, seen);
    /* every row is a real field of a modelled type (or a resource name) */
    for (size_t i = 0; i < gp_k8s_nmodel; i++) {
        const struct gp_k8s_model *m = &gp_k8s_model[i];
        assert_true((m->cls == GP_K8S_WARN) == (m->assumes != NULL));
        if (strcmp(m->type, "resources") == 0)
            continue;
        int t = gp_k8s_type_find(m->type);
        if (t < 0 || !gp_k8s_field_find((unsigned)t, m->field) || !seen[t])
            print_error("k8s_model.c: %s.%s is not a field of a modelled type\n", m->type,
                        m->field);
        assert_true(t >= 0);
        assert_non_null(gp_k8s_field_find((unsigned)t, m->field));
        assert_true(seen[t]);
        if (m->check != GP_K8S_CHECK_NONE)
            assert_int_equal(m->cls, GP_K8S_MODELLED);
    }
    free(seen);
    assert_non_null(gp_k8s_model_find("Container", "livenessProbe"));
    assert_null(gp_k8s_model_find("Container", "nope"));
}

/* Every gpuplane key of the table is one the reader reads in its place. */
static void test_keys_are_read(void **state)
{
    (void)state;
    static const char *const values[][2] = {
        {"gpuplane.io/cuda", "\"12.2\""},
        {"gpuplane.io/gpu-memory", "10Gi"},
        {"gpuplane.io/gpu-milli", "\"500\""},
        {"gpuplane.io/gpu-model", "A100-80GB"},
        {"gpuplane.io/queue", "q"},
        {"gpuplane.io/sharing", "exclusive"},
        {"gpuplane.io/topology-key", "rack"},
        {"gpuplane.io/topology-policy", "required"},
        {"gpuplane.io/topology-slowdown", "\"1.5\""},
        {"sim.gpuplane.io/arrival", "1h"},
        {"sim.gpuplane.io/checkpoint-interval", "30m"},
        {"sim.gpuplane.io/duration", "1h"},
        {"sim.gpuplane.io/failure-probability", "\"0.1\""},
        {"sim.gpuplane.io/failure-rate", "0.1/h"},
        {"sim.gpuplane.io/interarrival", "exp(1h)"},
        {"sim.gpuplane.io/repeat", "\"2\""},
        {"sim.gpuplane.io/retries", "\"2\""},
    };
    assert_int_equal(gp_k8s_nkeys, sizeof values / sizeof values[0]);
    for (size_t i = 0; i < gp_k8s_nkeys; i++) {
        const struct gp_k8s_key *k = &gp_k8s_keys[i];
        assert_string_equal(k->key, values[i][0]);
        char text[512];
        if (k->places & GP_K8S_PODGROUP_ANNOTATION)
            snprintf(text, sizeof text,
                     "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                     "metadata:\n  name: g\n  annotations: {%s: %s}\n",
                     k->key, values[i][1]);
        else
            snprintf(text, sizeof text,
                     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  %s: {%s: %s}\n"
                     "spec:\n  containers:\n  - {name: c, resources: {limits: "
                     "{nvidia.com/gpu: 1}}}\n",
                     k->places & GP_K8S_POD_LABEL ? "labels" : "annotations", k->key, values[i][1]);
        struct parsed *p = parse_ok(text);
        done(p);
    }
}

/* --- unknown fields ------------------------------------------------------ */

static void test_unknown_fields(void **state)
{
    (void)state;
    expect_error(JOB("  template:\n    spec:\n      containers:\n      - name: c\n"
                     "        resource: {limits: {nvidia.com/gpu: 1}}\n"),
                 "m.yaml:10:9: Job/train.spec.template.spec.containers[0].resource: unknown "
                 "field; did you mean \"resources\"?");
    expect_error(POD("    resources: {request: {cpu: 1}}\n"),
                 "m.yaml:8:17: Pod/p.spec.containers[0].resources.request: unknown field; did "
                 "you mean \"requests\"?");
    expect_error(POD("    resources: {limit: {nvidia.com/gpu: 1}}\n"),
                 "m.yaml:8:17: Pod/p.spec.containers[0].resources.limit: unknown field; did "
                 "you mean \"limits\"?");
    expect_error(POD("  nodeSelecter: {nvidia.com/gpu.product: L4}\n"),
                 "m.yaml:8:3: Pod/p.spec.nodeSelecter: unknown field; did you mean "
                 "\"nodeSelector\"?");
    expect_error(JOB("  backOffLimit: 3\n" TEMPLATE),
                 "m.yaml:6:3: Job/train.spec.backOffLimit: unknown field; did you mean "
                 "\"backoffLimit\"?");
    expect_error("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                 "spec:\n  replica: 2\n" TEMPLATE,
                 "m.yaml:5:3: Deployment/web.spec.replica: unknown field; did you mean "
                 "\"replicas\"?");
    expect_error(POD_HEAD "  nmespace: prod\nspec: {containers: [{name: c}]}\n",
                 "m.yaml:5:3: Pod/p.metadata.nmespace: unknown field; did you mean "
                 "\"namespace\"?");
    expect_error(JOB("  template:\n    metadata: {lables: {a: b}}\n    spec:\n"
                     "      containers: [{name: c}]\n"),
                 "m.yaml:7:16: Job/train.spec.template.metadata.lables: unknown field; did you "
                 "mean \"labels\"?");
    expect_error(POD("  tolerations: [{key: a, operater: Exists}]\n"),
                 "m.yaml:8:26: Pod/p.spec.tolerations[0].operater: unknown field; did you mean "
                 "\"operator\"?");
    /* the top level, where kind and apiVersion live */
    expect_error(POD_HEAD "spec: {containers: [{name: c}]}\nstatuss: {}\n",
                 "m.yaml:6:1: Pod/p.statuss: unknown field; did you mean \"status\"?");
    /* far from every field: the list */
    expect_error(POD("    resources: {foo: {}}\n"),
                 "m.yaml:8:17: Pod/p.spec.containers[0].resources.foo: unknown field (expected "
                 "one of: claims, limits, requests)");
    /* inside what gpuplane does not read, as the API server would */
    expect_error(POD("    livenessProbe: {httpGet: {paht: /, port: 80}}\n"),
                 "m.yaml:8:31: Pod/p.spec.containers[0].livenessProbe.httpGet.paht: unknown "
                 "field; did you mean \"path\"?");
    expect_error(POD("    livenessProbe: yes\n"),
                 "m.yaml:8:20: Pod/p.spec.containers[0].livenessProbe: expected a mapping, got "
                 "a string");
    expect_error(POD("    env: {A: b}\n"),
                 "m.yaml:8:11: Pod/p.spec.containers[0].env: expected a list, got a mapping");
    expect_error(POD("    image: [a]\n"),
                 "m.yaml:8:13: Pod/p.spec.containers[0].image: expected a single value, got a "
                 "list");
    expect_error(POD_HEAD "spec:\n  volumes: [{name: v, emptyDir: {mediun: Memory}}]\n"
                          "  containers: [{name: c}]\n",
                 "m.yaml:6:34: Pod/p.spec.volumes[0].emptyDir.mediun: unknown field; did you "
                 "mean \"medium\"?");
    expect_error(POD_HEAD "spec: {containers: [{name: c}]}\nstatus: {phse: Running}\n",
                 "m.yaml:6:10: Pod/p.status.phse: unknown field; did you mean \"phase\"?");
}

static void test_unknown_fields_other_kinds(void **state)
{
    (void)state;
    expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                 "spec: {minMembers: 2}\n",
                 "m.yaml:4:8: PodGroup/g.spec.minMembers: unknown field; did you mean "
                 "\"minMember\"?");
    /* Volcano's PodGroup has a queue; scheduler-plugins' does not */
    expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                 "spec: {queue: q}\n",
                 "m.yaml:4:8: PodGroup/g.spec.queue: unknown field (expected one of: minMember, "
                 "minResources, scheduleTimeoutSeconds)");
    expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
                 "spec: {minMember: 2, queu: q}\n",
                 "m.yaml:4:22: PodGroup/g.spec.queu: unknown field; did you mean \"queue\"?");
    expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
                 "spec: {capabilty: {cpu: 1}}\n",
                 "m.yaml:4:8: Queue/q.spec.capabilty: unknown field; did you mean "
                 "\"capability\"?");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Queue\nmetadata: {name: q}\n"
                 "spec: {gpuModels: [{model: L4, guarantee: 1}]}\n",
                 "m.yaml:4:32: Queue/q.spec.gpuModels[0].guarantee: unknown field; did you mean "
                 "\"guaranteed\"?");
    expect_error("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n"
                 "  metadata: {name: p}\n  spec: {containers: [{name: c, imagee: x}]}\n",
                 "m.yaml:7:33: Pod/p.spec.containers[0].imagee: unknown field; did you mean "
                 "\"image\"?");
    expect_error("apiVersion: v1\nkind: List\nitem: []\n",
                 "m.yaml:3:1: List.item: unknown field; did you mean \"items\"?");
}

/* --- resources ------------------------------------------------------------ */

static void test_resources(void **state)
{
    (void)state;
    expect_error(POD("    resources: {limits: {nvidia.com/gpus: 1}}\n"),
                 "m.yaml:8:26: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/gpus\"]: "
                 "unknown resource; did you mean \"nvidia.com/gpu\"?");
    expect_error(POD("    resources: {limits: {nvida.com/gpu: 1}}\n"),
                 "m.yaml:8:26: Pod/p.spec.containers[0].resources.limits[\"nvida.com/gpu\"]: "
                 "unknown resource; did you mean \"nvidia.com/gpu\"?");
    expect_error(POD("    resources: {requests: {memroy: 1Gi}}\n"),
                 "m.yaml:8:28: Pod/p.spec.containers[0].resources.requests.memroy: unknown "
                 "resource; did you mean \"memory\"?");
    expect_error(POD("    resources: {limits: {nvidia.com/mig-1g.10g: 1}}\n"),
                 "m.yaml:8:26: Pod/p.spec.containers[0].resources.limits[\"nvidia.com/"
                 "mig-1g.10g\"]: no GPU model has the MIG profile \"1g.10g\"; did you mean "
                 "\"nvidia.com/mig-1g.10gb\"?");
    expect_error(POD("    resources: {limits: {example.com/foo: 1}}\n"),
                 "m.yaml:8:26: Pod/p.spec.containers[0].resources.limits[\"example.com/foo\"]: "
                 "unknown resource (expected cpu, memory, ephemeral-storage, hugepages-<size>, "
                 "nvidia.com/gpu, nvidia.com/gpu.shared or nvidia.com/mig-<profile>; the cluster "
                 "declares no other)");
    expect_error(POD_HEAD "spec:\n  initContainers: [{name: i, resources: {requests: {cpus: 1}}}]\n"
                          "  containers: [{name: c}]\n",
                 "m.yaml:6:53: Pod/p.spec.initContainers[0].resources.requests.cpus: unknown "
                 "resource; did you mean \"cpu\"?");
    /* what the reader reads and what Kubernetes defines pass */
    struct parsed *p =
        parse_ok(POD("    resources:\n      requests: {cpu: 1, memory: 1Gi, ephemeral-storage: "
                     "1Gi, hugepages-2Mi: 1Gi}\n      limits: {nvidia.com/mig-1g.10gb: 1}\n"));
    assert_int_equal(p->w.nwarnings, 2);
    assert_string_equal(p->w.warnings[0],
                        "m.yaml:9: Pod/p.spec.containers[0].resources.requests.ephemeral-"
                        "storage is not simulated; local storage is not simulated: every node "
                        "is taken to have enough");
    done(p);
}

/* --- gpuplane's keys and domains ----------------------------------------- */

static void test_gpuplane_keys(void **state)
{
    (void)state;
    expect_error(POD_HEAD "  annotations: {sim.gpuplane.io/durration: 1h}\n"
                          "spec: {containers: [{name: c}]}\n",
                 "m.yaml:5:17: Pod/p.metadata.annotations[\"sim.gpuplane.io/durration\"]: "
                 "unknown gpuplane annotation; did you mean \"sim.gpuplane.io/duration\"?");
    expect_error(POD_HEAD "  annotations: {sim.gpuplan.io/duration: 1h}\n"
                          "spec: {containers: [{name: c}]}\n",
                 "m.yaml:5:17: Pod/p.metadata.annotations[\"sim.gpuplan.io/duration\"]: unknown "
                 "domain \"sim.gpuplan.io\"; did you mean \"sim.gpuplane.io/duration\"?");
    expect_error(POD_HEAD "  labels: {gpuplane.oi/queue: a}\nspec: {containers: [{name: c}]}\n",
                 "m.yaml:5:12: Pod/p.metadata.labels[\"gpuplane.oi/queue\"]: unknown domain "
                 "\"gpuplane.oi\"; did you mean \"gpuplane.io/queue\"?");
    expect_error(POD_HEAD "  labels: {gpuplane.io/qeue: a}\nspec: {containers: [{name: c}]}\n",
                 "m.yaml:5:12: Pod/p.metadata.labels[\"gpuplane.io/qeue\"]: unknown gpuplane "
                 "label; did you mean \"gpuplane.io/queue\"?");
    expect_error(POD_HEAD "  annotations: {GPUplane.io/gpu-milli: \"500\"}\n"
                          "spec: {containers: [{name: c}]}\n",
                 "m.yaml:5:17: Pod/p.metadata.annotations[\"GPUplane.io/gpu-milli\"]: unknown "
                 "domain \"GPUplane.io\"; did you mean \"gpuplane.io/gpu-milli\"?");
    expect_error(JOB("  template:\n    metadata:\n      annotations: {sim.gpuplane.io/foo: x}\n"
                     "    spec: {containers: [{name: c}]}\n"),
                 "m.yaml:8:21: Job/train.spec.template.metadata.annotations[\"sim.gpuplane.io/"
                 "foo\"]: unknown gpuplane annotation (expected one of: gpuplane.io/cuda, "
                 "gpuplane.io/gpu-memory, gpuplane.io/gpu-milli, gpuplane.io/gpu-model, "
                 "gpuplane.io/sharing, sim.gpuplane.io/arrival, "
                 "sim.gpuplane.io/checkpoint-interval, sim.gpuplane.io/duration, "
                 "sim.gpuplane.io/failure-probability, sim.gpuplane.io/failure-rate, "
                 "sim.gpuplane.io/interarrival, sim.gpuplane.io/repeat, ...)");
    /* a key of another place */
    expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n"
                 "  annotations: {sim.gpuplane.io/duration: 1h}\n",
                 "m.yaml:5:17: PodGroup/g.metadata.annotations[\"sim.gpuplane.io/duration\"]: "
                 "sim.gpuplane.io/duration belongs in the annotations of a Pod, Job or "
                 "Deployment, not here");
    expect_error(POD_HEAD "  annotations: {gpuplane.io/topology-key: rack}\n"
                          "spec: {containers: [{name: c}]}\n",
                 "m.yaml:5:17: Pod/p.metadata.annotations[\"gpuplane.io/topology-key\"]: "
                 "gpuplane.io/topology-key belongs in the annotations of a PodGroup, not here");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Queue\nmetadata:\n  name: q\n"
                 "  labels: {gpuplane.io/tier: a}\n",
                 "m.yaml:5:12: Queue/q.metadata.labels[\"gpuplane.io/tier\"]: gpuplane reads no "
                 "label on a Queue");
    /* a node selector's keys are the cluster's labels: only the domain is checked */
    expect_error(POD("  nodeSelector: {gpuplan.io/tier: a}\n"),
                 "m.yaml:8:18: Pod/p.spec.nodeSelector[\"gpuplan.io/tier\"]: unknown domain "
                 "\"gpuplan.io\"; did you mean \"gpuplane.io/tier\"?");
    struct parsed *p = parse_ok(POD("  nodeSelector: {gpuplane.io/tier: a, gpuplane.io/rack: "
                                    "b}\n"));
    done(p);
    /* other domains are the user's */
    p = parse_ok(POD_HEAD "  annotations: {example.com/x: y, gpuplane.example.com/z: w}\n"
                          "  labels: {app.kubernetes.io/name: a}\n"
                          "spec: {containers: [{name: c}]}\n");
    done(p);
}

/* --- objects defined twice ------------------------------------------------ */

static void test_defined_twice(void **state)
{
    (void)state;
    expect_error(POD_HEAD "spec: {containers: [{name: c}]}\n---\n" POD_HEAD
                          "spec: {containers: [{name: c}]}\n",
                 "m.yaml:10:9: Pod/p: defined twice in namespace \"default\" (first at m.yaml:4)");
    /* another namespace, another kind, generateName: not the same object */
    struct parsed *p = parse_ok(
        POD_HEAD "spec: {containers: [{name: c}]}\n---\n" POD_HEAD
                 "  namespace: other\nspec: {containers: [{name: c}]}\n---\n"
                 "apiVersion: batch/v1\nkind: Job\nmetadata: {name: p}\nspec:\n" TEMPLATE "---\n"
                 "apiVersion: v1\nkind: Pod\nmetadata: {generateName: w-}\n"
                 "spec: {containers: [{name: c}]}\n---\n"
                 "apiVersion: v1\nkind: Pod\nmetadata: {generateName: w-}\n"
                 "spec: {containers: [{name: c}]}\n");
    assert_int_equal(p->w.nitems, 5);
    /* a second file: both places named; the failed file adds nothing */
    parse_as(p, "n.yaml",
             "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {containers: [{name: c}]}\n"
             "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: p, namespace: default}\n"
             "spec:\n" TEMPLATE);
    assert_int_equal(p->err, GP_EINVALID);
    assert_string_equal(p->diag.msg, "n.yaml:8:18: Job/p: defined twice in namespace "
                                     "\"default\" (first at m.yaml:16)");
    assert_int_equal(p->w.nitems, 5);
    assert_int_equal(p->w.nobjects, 3);
    parse_as(p, "o.yaml",
             "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec: {containers: [{name: c}]}\n");
    assert_int_equal(p->err, GP_OK); /* q was taken back with n.yaml */
    done(p);
    /* cluster-scoped kinds have no namespace */
    expect_error("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
                 "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                 "metadata: {name: q, namespace: x}\n",
                 "m.yaml:7:18: Queue/q: defined twice (first at m.yaml:3)");
    expect_error("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                 "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                 "metadata: {name: g}\n",
                 "m.yaml:7:18: PodGroup/g: defined twice in namespace \"default\" (first at "
                 "m.yaml:3)");
}

/* --- warnings -------------------------------------------------------------- */

static void test_warnings(void **state)
{
    (void)state;
    struct parsed *p =
        parse_ok(POD("    livenessProbe: {exec: {command: [true]}}\n    image: x\n"
                     "    env: [{name: A, value: b}]\n  volumes: [{name: v, emptyDir: "
                     "{}}]\n") "---\n"
                               "apiVersion: batch/v1\nkind: Job\nmetadata: {name: "
                               "j}\nspec:\n"
                               "  template:\n    spec:\n      containers:\n"
                               "      - {name: a, livenessProbe: {exec: {command: "
                               "[true]}}}\n"
                               "      - {name: b, readinessProbe: {exec: {command: "
                               "[true]}}}\n");
    assert_int_equal(p->w.nwarnings, 3); /* livenessProbe once, volumes, readinessProbe */
    assert_string_equal(p->w.warnings[0],
                        "m.yaml:8: Pod/p.spec.containers[0].livenessProbe is not simulated; the "
                        "simulation assumes the probe always succeeds");
    assert_string_equal(p->w.warnings[1], "m.yaml:11: Pod/p.spec.volumes is not simulated; "
                                          "every volume is taken to be available on every node");
    assert_string_equal(p->w.warnings[2],
                        "m.yaml:21: Job/j.spec.template.spec.containers[1].readinessProbe is "
                        "not simulated; the simulation assumes the pod is ready as soon as it "
                        "runs");
    done(p);
    /* once per run, not per file; a failed file takes its warnings back */
    p = parse_ok(POD("    startupProbe: {exec: {command: [true]}}\n"));
    assert_int_equal(p->w.nwarnings, 1);
    parse_as(p, "n.yaml", POD("    startupProbe: {}\n    resources: {limits: {gpu: 1}}\n"));
    assert_int_equal(p->err, GP_EINVALID);
    assert_int_equal(p->w.nwarnings, 1);
    parse_as(p, "o.yaml",
             "apiVersion: v1\nkind: Pod\nmetadata: {name: o}\nspec:\n  containers:\n"
             "  - {name: c, startupProbe: {}, readinessProbe: {}}\n");
    assert_int_equal(p->err, GP_OK);
    assert_int_equal(p->w.nwarnings, 2);
    assert_non_null(strstr(p->w.warnings[1], "o.yaml:6:"));
    assert_non_null(strstr(p->w.warnings[1], "readinessProbe"));
    done(p);
    /* fields that do not change scheduling are silent */
    p = parse_ok(POD("    image: x\n    command: [a]\n    args: [b]\n    ports: [{containerPort: "
                     "80}]\n    volumeMounts: [{name: v, mountPath: /v}]\n"));
    assert_int_equal(p->w.nwarnings, 0);
    done(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance),       cmocka_unit_test(test_tree),
        cmocka_unit_test(test_model_table),    cmocka_unit_test(test_keys_are_read),
        cmocka_unit_test(test_unknown_fields), cmocka_unit_test(test_unknown_fields_other_kinds),
        cmocka_unit_test(test_resources),      cmocka_unit_test(test_gpuplane_keys),
        cmocka_unit_test(test_defined_twice),  cmocka_unit_test(test_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
