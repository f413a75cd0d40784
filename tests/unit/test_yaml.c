/* test_yaml.c - the Cluster spec reader (io/cluster_yaml.c) and pool
 * expansion: the example file field by field, defaults, and one test per
 * class of bad input with the exact one-line message users see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/cluster.h"

#define HEADER "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata:\n  name: demo\nspec:\n"

struct parsed {
    struct gp_arena arena;
    struct gp_cluster c;
    struct gp_diag diag;
    enum gp_err err;
};

static struct parsed *parse(const char *text)
{
    struct parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    gp_arena_init(&p->arena);
    p->err = gp_cluster_parse_yaml(text, strlen(text), "cluster.yaml", &p->arena, &p->c, &p->diag);
    return p;
}

static void done(struct parsed *p)
{
    gp_arena_free(&p->arena);
    free(p);
}

/* Parses text expecting err and exactly the message msg. */
static void expect_error(const char *text, enum gp_err err, const char *msg)
{
    struct parsed *p = parse(text);
    if (p->err != err || strcmp(p->diag.msg, msg) != 0)
        print_error("got %d \"%s\"\nwant %d \"%s\"\n", p->err, p->diag.msg, err, msg);
    assert_int_equal(p->err, err);
    assert_string_equal(p->diag.msg, msg);
    assert_null(p->c.pools); /* nothing half-filled is left behind */
    done(p);
}

static const char *label(const struct gp_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static void test_example_cluster(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = gp_cluster_load(GP_EXAMPLES_DIR "/cluster-mixed.yaml", &a, &c, &d);
    if (err != GP_OK)
        print_error("%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_string_equal(c.name, "mixed");
    assert_string_equal(c.source, GP_EXAMPLES_DIR "/cluster-mixed.yaml");
    assert_int_equal(c.npools, 4);

    const struct gp_pool_spec *p = &c.pools[0];
    assert_string_equal(p->name, "a100");
    assert_string_equal(p->gpu_model, "A100-80GB");
    assert_int_equal(p->gpus_per_node, 8);
    assert_int_equal(p->gpu_mem_mib, 80 * 1024);
    assert_int_equal(p->cpu_milli, 96000);
    assert_int_equal(p->mem_mib, 1152 * 1024);
    assert_int_equal(p->count, 2);
    assert_true(p->price_per_hour_usd == 27.44705);
    assert_int_equal(p->nlabels, 2);
    assert_string_equal(p->labels[0].key, "topology.kubernetes.io/zone");
    assert_string_equal(p->labels[0].value, "us-east-1a");
    assert_int_equal(p->ntaints, 1);
    assert_string_equal(p->taints[0].key, "nvidia.com/gpu");
    assert_string_equal(p->taints[0].value, "present");
    assert_int_equal(p->taints[0].effect, GP_EFFECT_NO_SCHEDULE);

    p = &c.pools[1];
    assert_string_equal(p->name, "l40s");
    assert_string_equal(p->gpu_model, "L40S");
    assert_int_equal(p->gpus_per_node, 1);
    assert_int_equal(p->gpu_mem_mib, 48 * 1024);
    assert_int_equal(p->count, 4);
    assert_true(p->price_per_hour_usd == 1.57);

    p = &c.pools[2];
    assert_string_equal(p->name, "l4");
    assert_int_equal(p->gpus_per_node, 4);
    assert_int_equal(p->gpu_mem_mib, 24 * 1024);

    p = &c.pools[3];
    assert_string_equal(p->name, "cpu");
    assert_null(p->gpu_model);
    assert_int_equal(p->gpus_per_node, 0);
    assert_int_equal(p->cpu_milli, 32000);
    assert_int_equal(p->mem_mib, 128 * 1024);
    assert_true(p->price_per_hour_usd == 0);
    assert_int_equal(p->ntaints, 0);

    /* gp_cluster_load expands the pools */
    assert_int_equal(c.nnodes, 2 + 4 + 4 + 2);
    const struct gp_node_spec *n = &c.nodes[1];
    assert_string_equal(n->name, "a100-1");
    assert_string_equal(n->pool, "a100");
    assert_string_equal(n->gpu_model, "A100-80GB");
    assert_int_equal(n->gpu_count, 8);
    assert_int_equal(n->gpu_mem_mib, 80 * 1024);
    assert_int_equal(n->cpu_milli, 96000);
    assert_true(n->price_per_hour_usd == 27.44705);
    assert_int_equal(n->ntaints, 1);
    assert_string_equal(label(n, "gpuplane.io/pool"), "a100");
    assert_string_equal(label(n, "nvidia.com/gpu.product"), "A100-80GB");
    assert_string_equal(label(n, "topology.kubernetes.io/zone"), "us-east-1a");
    n = &c.nodes[11];
    assert_string_equal(n->name, "cpu-1");
    assert_null(n->gpu_model);
    assert_int_equal(n->gpu_count, 0);
    assert_string_equal(label(n, "gpuplane.io/pool"), "cpu");
    assert_null(label(n, "nvidia.com/gpu.product"));
    gp_arena_free(&a);
}

static void test_brief_example(void **state)
{
    (void)state;
    struct parsed *p = parse(HEADER "  nodePools:\n"
                                    "  - name: a100\n"
                                    "    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n"
                                    "    cpu: \"96\"\n"
                                    "    memory: 1Ti\n"
                                    "    count: 4\n"
                                    "    pricePerHour: 32.77\n"
                                    "    labels: {topology.kubernetes.io/zone: us-east-1a}\n"
                                    "    taints: [{key: nvidia.com/gpu, value: present, effect: "
                                    "NoSchedule}]\n"
                                    "  - name: cpu\n"
                                    "    cpu: 500m\n"
                                    "    memory: 128Gi\n"
                                    "    count: 0\n");
    if (p->err != GP_OK)
        print_error("%s\n", p->diag.msg);
    assert_int_equal(p->err, GP_OK);
    assert_string_equal(p->c.name, "demo");
    assert_string_equal(p->c.source, "cluster.yaml");
    assert_int_equal(p->c.npools, 2);
    assert_int_equal(p->c.pools[0].mem_mib, 1024 * 1024);
    assert_true(p->c.pools[0].price_per_hour_usd == 32.77);
    assert_int_equal(p->c.pools[1].cpu_milli, 500);
    assert_int_equal(p->c.pools[1].count, 0);
    assert_null(p->c.nodes); /* the parser leaves expansion to gp_cluster_expand */

    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_expand(&p->c, &p->arena, &d), GP_OK);
    assert_int_equal(p->c.nnodes, 4);
    assert_string_equal(p->c.nodes[3].name, "a100-3");
    done(p);
}

static void test_syntax_error(void **state)
{
    (void)state;
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: [8\n", GP_EPARSE,
                 "cluster.yaml:9:1: YAML syntax error: flow sequence without a closing bracket");
    expect_error(HEADER "  nodePools:\n  - name: a\n   cpu: 8\n", GP_EPARSE,
                 "cluster.yaml:8:4: YAML syntax error: invalid indentation in mapping");
}

static void test_syntax_error_is_quiet(void **state)
{
    (void)state;
    /* libfyaml must not print on its own: the one diag line is ours */
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(fileno(stderr));
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), fileno(stderr)) >= 0);
    struct parsed *p = parse("a: [1, 2\nb: {\n");
    fflush(stderr);
    assert_true(dup2(saved, fileno(stderr)) >= 0);
    close(saved);
    assert_int_equal(p->err, GP_EPARSE);
    assert_int_equal(ftell(tmp), 0);
    fclose(tmp);
    done(p);
}

static void test_unknown_field(void **state)
{
    (void)state;
    expect_error(
        HEADER "  nodePools:\n"
               "  - name: a100\n"
               "    gpus: {model: A100-80GB, count: 8}\n",
        GP_EINVALID,
        "cluster.yaml:8:5: spec.nodePools[0].gpus: unknown field (expected one of: name, "
        "gpu, cpu, memory, count, minCount, maxCount, initialCount, bootTime, pricePerHour, "
        "pricePerGpuHour, onDemandPricePerHour, offer, spot, interruptionRate, interruptionTimes, "
        "interruptionFile, spotNotice, billingGranularity, billingMinimum, maxNodeLifetime, "
        "labels, taints, sharing, topology)");
    expect_error(HEADER "  nodePools:\n"
                        "  - name: a100\n"
                        "    gpu: {model: A100-80GB, cnt: 8}\n",
                 GP_EINVALID,
                 "cluster.yaml:8:29: spec.nodePools[0].gpu.cnt: unknown field (expected one of: "
                 "model, count, memory, nvlinkDomain, driver)");
    expect_error(HEADER "  nodepools: []\n", GP_EINVALID,
                 "cluster.yaml:6:3: spec.nodepools: unknown field (expected one of: nodePools, "
                 "controlPlane, autoscaler)");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Cluster\nstatus: {}\n", GP_EINVALID,
                 "cluster.yaml:3:1: status: unknown field (expected one of: apiVersion, kind, "
                 "metadata, spec)");
}

static void test_wrong_units(void **state)
{
    (void)state;
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8 cores\n    memory: 1Gi\n    count: "
                        "1\n",
                 GP_EINVALID,
                 "cluster.yaml:8:10: spec.nodePools[0].cpu: expected a Kubernetes CPU quantity "
                 "like 8 or 500m, got \"8 cores\"");
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    memory: 16 GB\n    count: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:9:13: spec.nodePools[0].memory: expected a Kubernetes quantity like "
                 "16Gi, got \"16 GB\"");
    expect_error(HEADER
                 "  nodePools:\n  - name: a\n    cpu: \"0\"\n    memory: 1Gi\n    count: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:8:10: spec.nodePools[0].cpu: must be greater than zero, got \"0\"");
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    memory: 1Gi\n    count: 1\n"
                        "    pricePerHour: $3\n",
                 GP_EINVALID,
                 "cluster.yaml:11:19: spec.nodePools[0].pricePerHour: expected a number from 0 to "
                 "1e+06, got \"$3\"");
}

static void test_negative_count(void **state)
{
    (void)state;
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    memory: 1Gi\n    count: -3\n",
                 GP_EINVALID,
                 "cluster.yaml:10:12: spec.nodePools[0].count: expected a non-negative integer up "
                 "to 100000, got \"-3\"");
    /* a quoted number is a string, as in Kubernetes */
    expect_error(HEADER
                 "  nodePools:\n  - name: a\n    cpu: 8\n    memory: 1Gi\n    count: \"3\"\n",
                 GP_EINVALID,
                 "cluster.yaml:10:12: spec.nodePools[0].count: expected a non-negative integer up "
                 "to 100000, got the string \"3\" (remove the quotes)");
}

static void test_missing_required(void **state)
{
    (void)state;
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    count: 1\n", GP_EINVALID,
                 "cluster.yaml:7:5: spec.nodePools[0]: missing required field \"memory\"");
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    memory: 1Gi\n    count: 1\n"
                        "    gpu: {count: 2}\n",
                 GP_EINVALID,
                 "cluster.yaml:11:11: spec.nodePools[0].gpu: missing required field \"model\"");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: x}\n", GP_EINVALID,
                 "cluster.yaml:1:1: missing required field \"spec\"");
    /* a null value counts as absent */
    expect_error(HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    memory:\n    count: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:7:5: spec.nodePools[0]: missing required field \"memory\"");
    expect_error(HEADER "  nodePools: []\n", GP_EINVALID,
                 "cluster.yaml:6:3: spec.nodePools: expected a list of at least one node pool");
}

static void test_duplicate_pool(void **state)
{
    (void)state;
    expect_error(HEADER "  nodePools:\n"
                        "  - {name: a, cpu: 8, memory: 1Gi, count: 1}\n"
                        "  - {name: b, cpu: 8, memory: 1Gi, count: 1}\n"
                        "  - {name: a, cpu: 8, memory: 1Gi, count: 1}\n",
                 GP_EINVALID,
                 "cluster.yaml:9:12: spec.nodePools[2].name: duplicate pool name \"a\" (also "
                 "spec.nodePools[0].name)");
    expect_error(
        HEADER "  nodePools:\n  - {name: A100, cpu: 8, memory: 1Gi, count: 1}\n", GP_EINVALID,
        "cluster.yaml:7:12: spec.nodePools[0].name: expected a pool name made of at most "
        "63 of [a-z0-9-], beginning and ending with a letter or digit, like a100-spot, got "
        "\"A100\"");
}

static void test_gpu_limits(void **state)
{
    (void)state;
    expect_error(HEADER "  nodePools:\n  - name: a\n    gpu: {model: H100, count: 17}\n    cpu: 8\n"
                        "    memory: 1Gi\n    count: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:8:31: spec.nodePools[0].gpu.count: expected an integer from 1 to "
                 "16, got \"17\"");
    expect_error(HEADER "  nodePools:\n  - name: a\n    gpu: {model: H100 SXM, count: 1}\n"
                        "    cpu: 8\n    memory: 1Gi\n    count: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:8:18: spec.nodePools[0].gpu.model: expected a GPU model usable as a "
                 "label value (at most 63 of [A-Za-z0-9_.-]) like A100-80GB, got \"H100 SXM\"");
    expect_error(HEADER "  nodePools:\n"
                        "  - {name: a, cpu: 8, memory: 1Gi, count: 60000}\n"
                        "  - {name: b, cpu: 8, memory: 1Gi, count: 60000}\n",
                 GP_ELIMIT,
                 "cluster.yaml:8:43: spec.nodePools[1].count: the cluster has more than 100000 "
                 "nodes in all");
    expect_error(HEADER
                 "  nodePools:\n  - name: a\n    gpu: {model: H100, count: 8, nvlinkDomain: 16}\n"
                 "    cpu: 8\n    memory: 1Gi\n    count: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:8:48: spec.nodePools[0].gpu.nvlinkDomain: expected at most the "
                 "node's 8 GPUs per NVLink domain, got 16");
    struct parsed *p = parse(HEADER "  nodePools:\n  - name: a\n"
                                    "    gpu: {model: H100, count: 8, nvlinkDomain: 4}\n"
                                    "    cpu: 8\n    memory: 1Gi\n    count: 2\n");
    assert_int_equal(p->err, GP_OK);
    assert_int_equal(gp_cluster_expand(&p->c, &p->arena, &p->diag), GP_OK);
    assert_int_equal(p->c.nodes[1].nvlink_gpus, 4); /* every node of the pool */
    done(p);
}

static void test_api_version_and_kind(void **state)
{
    (void)state;
    expect_error(
        "apiVersion: gpuplane.io/v2\nkind: Cluster\n", GP_EINVALID,
        "cluster.yaml:1:13: apiVersion: expected \"gpuplane.io/v1\", got \"gpuplane.io/v2\"");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Deployment\n", GP_EINVALID,
                 "cluster.yaml:2:7: kind: expected \"Cluster\", got \"Deployment\"");
}

static void test_labels_and_taints(void **state)
{
    (void)state;
    const char *pool =
        HEADER "  nodePools:\n  - name: a\n    cpu: 8\n    memory: 1Gi\n    count: 1\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%s    labels: {\"bad key\": x}\n", pool);
    expect_error(buf, GP_EINVALID,
                 "cluster.yaml:11:14: spec.nodePools[0].labels[\"bad key\"]: expected a Kubernetes "
                 "label key ([prefix/]name, the name at most 63 of [A-Za-z0-9_.-]), got \"bad "
                 "key\"");
    snprintf(buf, sizeof buf, "%s    labels: {gpuplane.io/pool: x}\n", pool);
    expect_error(buf, GP_EINVALID,
                 "cluster.yaml:11:14: spec.nodePools[0].labels[\"gpuplane.io/pool\"]: this label "
                 "is set on every node from the pool's name; remove it");
    snprintf(buf, sizeof buf, "%s    taints: [{key: x, effect: NoSchedul}]\n", pool);
    expect_error(buf, GP_EINVALID,
                 "cluster.yaml:11:31: spec.nodePools[0].taints[0].effect: expected NoSchedule, "
                 "PreferNoSchedule or NoExecute, got \"NoSchedul\"");
    snprintf(buf, sizeof buf, "%s    taints: [{effect: NoExecute}]\n", pool);
    expect_error(buf, GP_EINVALID,
                 "cluster.yaml:11:15: spec.nodePools[0].taints[0]: missing required field \"key\"");
    snprintf(buf, sizeof buf, "%s    taints: {key: x}\n", pool);
    expect_error(buf, GP_EINVALID,
                 "cluster.yaml:11:14: spec.nodePools[0].taints: expected a list, got a mapping");

    snprintf(buf, sizeof buf,
             "%s    taints: [{key: a, effect: NoExecute}, {key: b, value: v, "
             "effect: PreferNoSchedule}]\n",
             pool);
    struct parsed *p = parse(buf);
    assert_int_equal(p->err, GP_OK);
    assert_int_equal(p->c.pools[0].ntaints, 2);
    assert_int_equal(p->c.pools[0].taints[0].effect, GP_EFFECT_NO_EXECUTE);
    assert_string_equal(p->c.pools[0].taints[0].value, "");
    assert_int_equal(p->c.pools[0].taints[1].effect, GP_EFFECT_PREFER_NO_SCHEDULE);
    assert_string_equal(p->c.pools[0].taints[1].value, "v");
    done(p);
}

static void test_documents(void **state)
{
    (void)state;
    expect_error("", GP_EINVALID, "cluster.yaml: empty file, expected a Cluster document");
    expect_error("# only a comment\n---\n", GP_EINVALID,
                 "cluster.yaml: empty file, expected a Cluster document");
    expect_error(HEADER "  nodePools: [{name: a, cpu: 8, memory: 1Gi, count: 1}]\n---\nx: 1\n",
                 GP_EINVALID,
                 "cluster.yaml:8:1: a second YAML document; a cluster file holds one Cluster");
    expect_error("- a\n- b\n", GP_EINVALID, "cluster.yaml:1:3: expected a mapping, got a list");
    expect_error(HEADER "  nodePools:\n  - &p {name: a, cpu: 8, memory: 1Gi, count: 1}\n  - *p\n",
                 GP_EINVALID,
                 "cluster.yaml:8:6: spec.nodePools[1]: YAML aliases (*p) are not supported; write "
                 "the value out");
    expect_error(HEADER "  nodePools:\n  - {<<: {name: a}, cpu: 8}\n", GP_EINVALID,
                 "cluster.yaml:7:6: spec.nodePools[0]: YAML merge keys (<<) are not supported; "
                 "write the fields out");
    expect_error(HEADER "  nodePools: [{name: a, name: b}]\n", GP_EPARSE,
                 "cluster.yaml:6:25: YAML syntax error: duplicate key");
}

static void test_json_cluster(void **state)
{
    (void)state;
    struct parsed *p = parse("{\"apiVersion\": \"gpuplane.io/v1\", \"kind\": \"Cluster\",\n"
                             " \"metadata\": {\"name\": \"j\"},\n"
                             " \"spec\": {\"nodePools\": [{\"name\": \"t4\", \"gpu\": {\"model\": "
                             "\"T4\", \"count\": 4}, \"cpu\": 48, \"memory\": \"192Gi\", "
                             "\"count\": 3}]}}\n");
    if (p->err != GP_OK)
        print_error("%s\n", p->diag.msg);
    assert_int_equal(p->err, GP_OK);
    assert_string_equal(p->c.pools[0].gpu_model, "T4");
    assert_int_equal(p->c.pools[0].gpus_per_node, 4);
    assert_int_equal(p->c.pools[0].gpu_mem_mib, 0); /* not declared */
    assert_int_equal(p->c.pools[0].cpu_milli, 48000);
    done(p);
}

static void test_missing_file(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    assert_int_equal(gp_cluster_load("/nonexistent/cluster.yaml", &a, &c, &d), GP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "/nonexistent/cluster.yaml"));
    assert_int_equal(gp_cluster_load("openb:/nonexistent/nodes.csv", &a, &c, &d), GP_ENOTFOUND);
    assert_int_equal(gp_cluster_load("philly:/nonexistent/machines", &a, &c, &d), GP_ENOTFOUND);
    assert_int_equal(gp_cluster_load("openb:", &a, &c, &d), GP_EUSAGE);
    assert_int_equal(gp_cluster_load("", &a, &c, &d), GP_EUSAGE);
    gp_arena_free(&a);
}

static void test_expand_replaces_reserved_labels(void **state)
{
    (void)state;
    /* a reader other than the YAML one may set them; expansion wins */
    struct gp_kv labels[] = {
        {"gpuplane.io/pool", "old"}, {"rack", "r1"}, {"nvidia.com/gpu.replicas", "9"}};
    struct gp_pool_spec pool = {.name = "p",
                                .gpu_model = "V100",
                                .gpus_per_node = 2,
                                .cpu_milli = 1000,
                                .mem_mib = 1024,
                                .count = 2,
                                .labels = labels,
                                .nlabels = 3};
    struct gp_cluster c = {.name = "x", .pools = &pool, .npools = 1};
    struct gp_arena a;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    assert_int_equal(gp_cluster_expand(&c, &a, &d), GP_OK);
    assert_int_equal(c.nnodes, 2);
    /* rack, the pool, and GFD's product, count, replicas, sharing-strategy */
    assert_int_equal(c.nodes[0].nlabels, 6);
    assert_string_equal(label(&c.nodes[0], "gpuplane.io/pool"), "p");
    assert_string_equal(label(&c.nodes[0], "nvidia.com/gpu.replicas"), "1");
    assert_string_equal(label(&c.nodes[0], "rack"), "r1");
    assert_string_equal(label(&c.nodes[1], "nvidia.com/gpu.product"), "V100");
    assert_string_equal(c.nodes[1].name, "p-1");

    pool.count = 200000;
    assert_int_equal(gp_cluster_expand(&c, &a, &d), GP_ELIMIT);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_cluster),
        cmocka_unit_test(test_brief_example),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_syntax_error_is_quiet),
        cmocka_unit_test(test_unknown_field),
        cmocka_unit_test(test_wrong_units),
        cmocka_unit_test(test_negative_count),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_duplicate_pool),
        cmocka_unit_test(test_gpu_limits),
        cmocka_unit_test(test_api_version_and_kind),
        cmocka_unit_test(test_labels_and_taints),
        cmocka_unit_test(test_documents),
        cmocka_unit_test(test_json_cluster),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_expand_replaces_reserved_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
