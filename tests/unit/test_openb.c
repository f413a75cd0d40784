/* test_openb.c - the openb node and pod list readers (io/openb.c) on small
 * synthetic fixtures, every error class, and the real trace files under
 * GP_SHARED_DIR when they are there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared_data.h"

#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"
#include "util/fs.h"

#define OPENB_SHARED GP_SHARED_DIR "/data/openb/"

static char *slurp(const char *path, size_t *len)
{
    char *text = NULL;
    struct gp_diag d;
    if (gp_fs_read(path, &text, len, &d) != GP_OK)
        fail_msg("%s", d.msg);
    return text;
}

static const char *label(const struct gp_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static void test_nodes_fixture(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp(GP_TEST_DATA "/openb/nodes.csv", &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_parse_openb(text, len, "nodes.csv", &a, &c, &d), GP_OK);
    assert_string_equal(c.source, "nodes.csv");
    assert_int_equal(c.nnodes, 7);

    const struct gp_node_spec *n = &c.nodes[0];
    assert_string_equal(n->name, "node-a");
    assert_int_equal(n->cpu_milli, 96000);
    assert_int_equal(n->mem_mib, 393216);
    assert_int_equal(n->gpu_count, 8);
    assert_string_equal(n->gpu_model, "G2");
    assert_int_equal(n->gpu_mem_mib, 0); /* undisclosed model */
    assert_string_equal(n->pool, "openb-G2-8gpu");
    assert_string_equal(label(n, "nvidia.com/gpu.product"), "G2");
    assert_string_equal(label(n, "gpuplane.io/pool"), "openb-G2-8gpu");

    n = &c.nodes[1]; /* CPU-only */
    assert_string_equal(n->name, "node-b");
    assert_int_equal(n->gpu_count, 0);
    assert_null(n->gpu_model);
    assert_int_equal(n->cpu_milli, 32000);
    assert_int_equal(n->mem_mib, 262144);
    assert_string_equal(n->pool, "openb-cpu");
    assert_null(label(n, "nvidia.com/gpu.product"));
    assert_int_equal(n->nlabels, 1);

    n = &c.nodes[2];
    assert_string_equal(n->gpu_model, "T4");
    assert_int_equal(n->gpu_mem_mib, 16384);
    assert_int_equal(n->gpu_count, 2);
    assert_string_equal(n->pool, "openb-T4-2gpu");
    assert_string_equal(c.nodes[3].pool, "openb-G2-8gpu");
    assert_string_equal(c.nodes[4].pool, "openb-P100-2gpu-16c-120gi");
    assert_int_equal(c.nodes[4].gpu_mem_mib, 16384);
    assert_string_equal(c.nodes[5].pool, "openb-P100-2gpu-64c-256gi");
    assert_string_equal(c.nodes[6].pool, "openb-A10-1gpu");
    assert_int_equal(c.nodes[6].gpu_mem_mib, 24576);
    assert_int_equal(c.nodes[6].mem_mib, 1048576);

    /* one pool per shape, in order of first appearance */
    assert_int_equal(c.npools, 6);
    static const struct {
        const char *name, *model;
        uint32_t gpus, count;
        int64_t cpu, mem;
    } want[] = {
        {"openb-G2-8gpu", "G2", 8, 2, 96000, 393216},
        {"openb-cpu", NULL, 0, 1, 32000, 262144},
        {"openb-T4-2gpu", "T4", 2, 1, 104000, 524288},
        {"openb-P100-2gpu-16c-120gi", "P100", 2, 1, 16000, 122880},
        {"openb-P100-2gpu-64c-256gi", "P100", 2, 1, 64000, 262144},
        {"openb-A10-1gpu", "A10", 1, 1, 128000, 1048576},
    };
    for (size_t i = 0; i < 6; i++) {
        const struct gp_pool_spec *p = &c.pools[i];
        assert_string_equal(p->name, want[i].name);
        if (want[i].model)
            assert_string_equal(p->gpu_model, want[i].model);
        else
            assert_null(p->gpu_model);
        assert_int_equal(p->gpus_per_node, want[i].gpus);
        assert_int_equal(p->count, want[i].count);
        assert_int_equal(p->cpu_milli, want[i].cpu);
        assert_int_equal(p->mem_mib, want[i].mem);
        assert_int_equal(p->nlabels, 0);
    }
    gp_arena_free(&a);
    free(text);
}

static void test_pods_fixture(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp(GP_TEST_DATA "/openb/pods.csv", &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_workload_parse_openb(text, len, "pods.csv", &a, &w, &d), GP_OK);
    assert_int_equal(w.nitems, 5);

    const struct gp_item *it = &w.items[0];
    assert_string_equal(it->name, "pod-cpu");
    assert_string_equal(it->pod.name, "pod-cpu");
    assert_string_equal(it->source, "pods.csv:2");
    assert_int_equal(it->kind, GP_ITEM_POD);
    assert_int_equal(it->pod.cpu_milli, 4000);
    assert_int_equal(it->pod.mem_mib, 8192);
    assert_int_equal(it->pod.gpu_count, 0);
    assert_int_equal(it->pod.gpu_milli, 0);
    assert_int_equal(it->pod.ngpu_models, 0);
    assert_int_equal(it->repeat, 1);
    assert_true(it->arrival_s == 0.0); /* 100 - 100 */
    assert_true(it->has_duration);
    assert_int_equal(it->duration.kind, GP_DIST_FIXED);
    assert_true(it->duration.a == 100.0);
    assert_null(it->queue);

    it = &w.items[1];
    assert_string_equal(it->name, "pod-share");
    assert_int_equal(it->pod.gpu_count, 1);
    assert_int_equal(it->pod.gpu_milli, 460);
    assert_true(it->arrival_s == 50.0);
    assert_true(it->has_duration);
    assert_true(it->duration.a == 1000.0);

    it = &w.items[2]; /* deletion == creation: no duration; repeated model once */
    assert_int_equal(it->pod.gpu_count, 1);
    assert_int_equal(it->pod.gpu_milli, 1000);
    assert_false(it->has_duration);
    assert_int_equal(it->pod.ngpu_models, 2);
    assert_string_equal(it->pod.gpu_models[0], "V100M16");
    assert_string_equal(it->pod.gpu_models[1], "V100M32");

    it = &w.items[3]; /* no deletion time */
    assert_int_equal(it->pod.gpu_count, 8);
    assert_int_equal(it->pod.gpu_milli, 1000);
    assert_int_equal(it->pod.cpu_milli, 64000);
    assert_true(it->arrival_s == 300.0);
    assert_false(it->has_duration);
    assert_int_equal(it->pod.ngpu_models, 1);
    assert_string_equal(it->pod.gpu_models[0], "G2");

    it = &w.items[4]; /* no times at all; quoted spec with a blank */
    assert_string_equal(it->source, "pods.csv:6");
    assert_true(it->arrival_s == 0.0);
    assert_false(it->has_duration);
    assert_int_equal(it->pod.gpu_count, 2);
    assert_int_equal(it->pod.ngpu_models, 2);
    assert_string_equal(it->pod.gpu_models[0], "T4");
    assert_string_equal(it->pod.gpu_models[1], "P100");
    gp_arena_free(&a);
    free(text);
}

static void test_pods_five_columns(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp(GP_TEST_DATA "/openb/pods_multigpu.csv", &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_workload_parse_openb(text, len, "m.csv", &a, &w, &d), GP_OK);
    assert_int_equal(w.nitems, 2);
    assert_string_equal(w.items[0].name, "mp-0");
    assert_int_equal(w.items[0].pod.gpu_count, 4);
    assert_int_equal(w.items[0].pod.gpu_milli, 1000);
    assert_int_equal(w.items[0].pod.cpu_milli, 32000);
    assert_int_equal(w.items[0].pod.mem_mib, 65536);
    assert_false(w.items[0].has_duration);
    assert_true(w.items[0].arrival_s == 0.0);
    assert_string_equal(w.items[1].name, "mp-1");
    assert_int_equal(w.items[1].pod.gpu_milli, 50);
    gp_arena_free(&a);
    free(text);
}

/* Parses text as a pod list and returns the error; d gets the message. */
static enum gp_err pods(const char *text, struct gp_diag *d)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    enum gp_err err = gp_workload_parse_openb(text, strlen(text), "p.csv", &a, &w, d);
    if (err != GP_OK)
        assert_int_equal(w.nitems, 0);
    gp_arena_free(&a);
    return err;
}

static enum gp_err nodes(const char *text, struct gp_diag *d)
{
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c = {0};
    enum gp_err err = gp_cluster_parse_openb(text, strlen(text), "n.csv", &a, &c, d);
    gp_arena_free(&a);
    return err;
}

#define POD_HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"

static void test_pod_errors(void **state)
{
    (void)state;
    struct gp_diag d;
    assert_int_equal(pods(POD_HEADER "a,1,1,1,abc\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "p.csv:2: column 'gpu_milli': expected an integer 0..1000, got \"abc\"");
    assert_int_equal(pods(POD_HEADER "a,1,1,1,1001\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "p.csv:2: column 'gpu_milli': expected an integer 0..1000, got \"1001\"");
    assert_int_equal(pods(POD_HEADER "a,1,1,2,500\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "p.csv:2: column 'gpu_milli': expected 1000 for a pod with num_gpu > "
                        "1 (a share needs num_gpu 1), got \"500\"");
    assert_int_equal(pods(POD_HEADER "a,1,1,1,0\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "p.csv:2: column 'gpu_milli': expected an integer 1..1000 for a pod "
                               "with GPUs, got \"0\"");
    assert_int_equal(pods(POD_HEADER "a,1,1,0,300\n", &d), GP_EINVALID);
    assert_string_equal(
        d.msg, "p.csv:2: column 'gpu_milli': expected 0 for a pod with num_gpu 0, got \"300\"");
    assert_int_equal(pods(POD_HEADER "a,-1,1,0,0\n", &d), GP_EINVALID);
    assert_string_equal(
        d.msg, "p.csv:2: column 'cpu_milli': expected an integer 0..1000000000, got \"-1\"");
    assert_int_equal(pods(POD_HEADER "a,1,1.5,0,0\n", &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "p.csv:2: column 'memory_mib': expected an integer"));
    assert_int_equal(pods(POD_HEADER "a,1,1,17,1000\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "p.csv:2: column 'num_gpu': expected an integer 0..16, got \"17\"");
    /* the error names the right line, after a good row and a blank line */
    assert_int_equal(pods(POD_HEADER "a,1,1,0,0\n\nb,1,1\n", &d), GP_EPARSE);
    assert_string_equal(d.msg, "p.csv:4: expected 5 fields as in the header, got 3");
    assert_int_equal(pods(POD_HEADER "a,1,1,0,\"0\n", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "p.csv:2: unterminated quoted field"));
    assert_int_equal(pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                          "a,1,1,1,1000,T4|bad model\n",
                          &d),
                     GP_EINVALID);
    assert_non_null(strstr(d.msg, "p.csv:2: column 'gpu_spec': expected GPU model names"));
    assert_int_equal(pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\n"
                          "a,1,1,0,0,yesterday\n",
                          &d),
                     GP_EINVALID);
    assert_string_equal(d.msg, "p.csv:2: column 'creation_time': expected a number 0..1e+12, got "
                               "\"yesterday\"");
    /* header problems */
    assert_int_equal(pods("name,cpu_milli,memory_mib,num_gpu\n", &d), GP_EPARSE);
    assert_string_equal(d.msg, "p.csv:1: missing required column 'gpu_milli' in the header");
    assert_int_equal(pods(POD_HEADER "\n", &d), GP_EINVALID);
    assert_int_equal(pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli,colour\n", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "p.csv:1: unknown column \"colour\""));
    assert_int_equal(pods("", &d), GP_EPARSE);
    assert_string_equal(d.msg, "p.csv: empty file, expected a header line");
    assert_int_equal(pods(POD_HEADER, &d), GP_EINVALID);
    assert_string_equal(d.msg, "p.csv: no pods, expected at least one row after the header");
}

static void test_pod_error_keeps_workload(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d;
    const char *good = POD_HEADER "a,1,1,0,0\n";
    const char *bad = POD_HEADER "b,1,1,0,0\nc,1,1,x,0\n";
    assert_int_equal(gp_workload_parse_openb(good, strlen(good), "g.csv", &a, &w, &d), GP_OK);
    assert_int_equal(w.nitems, 1);
    assert_int_equal(gp_workload_parse_openb(bad, strlen(bad), "b.csv", &a, &w, &d), GP_EINVALID);
    assert_int_equal(w.nitems, 1); /* nothing of the bad file stays */
    assert_string_equal(w.items[0].name, "a");
    gp_arena_free(&a);
}

#define NODE_HEADER "sn,cpu_milli,memory_mib,gpu,model\n"

static void test_node_errors(void **state)
{
    (void)state;
    struct gp_diag d;
    assert_int_equal(nodes(NODE_HEADER "n1,1000,1024,2,\n", &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "n.csv:2: column 'model': expected a GPU model name (1-63 of A-Z a-z "
                        "0-9 . _ -) for a node with GPUs, got \"\"");
    assert_int_equal(nodes(NODE_HEADER "n1,1000,1024,32,T4\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "n.csv:2: column 'gpu': expected an integer 0..16, got \"32\"");
    assert_int_equal(nodes(NODE_HEADER "n1,lots,1024,1,T4\n", &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "n.csv:2: column 'cpu_milli': expected an integer"));
    assert_int_equal(nodes(NODE_HEADER ",1000,1024,1,T4\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "n.csv:2: column 'sn': expected a node name, got \"\"");
    assert_int_equal(nodes(NODE_HEADER "n1,1000,1024,1,T4\nn1,1000,1024,1,T4\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "n.csv:3: column 'sn': node \"n1\" is already defined on line 2");
    assert_int_equal(nodes(NODE_HEADER "n1,1000,1024,1\n", &d), GP_EPARSE);
    assert_string_equal(d.msg, "n.csv:2: expected 5 fields as in the header, got 4");
    assert_int_equal(nodes("sn,cpu_milli,memory_mib\n", &d), GP_EPARSE);
    assert_string_equal(d.msg, "n.csv:1: missing required column 'gpu' in the header");
    assert_int_equal(nodes("", &d), GP_EPARSE);
    assert_string_equal(d.msg, "n.csv: empty file, expected a header line");
    assert_int_equal(nodes(NODE_HEADER "\r\n", &d), GP_EINVALID);
    assert_string_equal(d.msg, "n.csv: no nodes, expected at least one row after the header");
    /* a model on a CPU-only node is ignored, CRLF and no model column are fine */
    assert_int_equal(nodes(NODE_HEADER "n1,1000,1024,0,T4\r\n", &d), GP_OK);
    assert_int_equal(nodes("sn,cpu_milli,memory_mib,gpu\r\nn1,1000,1024,0\r\n", &d), GP_OK);
}

/* The real node lists: totals and per-model counts from the data README. */
static void test_real_nodes(void **state)
{
    (void)state;
    const char *path = OPENB_SHARED "openb_node_list_gpu_node.csv";
    GP_NEED_SHARED(path);
    size_t len;
    char *text = slurp(path, &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_cluster c = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_parse_openb(text, len, path, &a, &c, &d), GP_OK);
    assert_int_equal(c.nnodes, 1213);
    static const struct {
        const char *model;
        uint32_t nodes, gpus;
    } want[] = {
        {"G2", 549, 4392},    {"T4", 404, 842},     {"G3", 39, 312}, {"P100", 134, 265},
        {"V100M32", 30, 204}, {"V100M16", 55, 195}, {"A10", 2, 2},
    };
    uint32_t got_nodes[7] = {0}, got_gpus[7] = {0}, gpus = 0;
    int64_t cpu = 0, mem = 0;
    for (size_t i = 0; i < c.nnodes; i++) {
        const struct gp_node_spec *n = &c.nodes[i];
        gpus += n->gpu_count;
        cpu += n->cpu_milli;
        mem += n->mem_mib;
        assert_non_null(n->gpu_model);
        size_t m = 0;
        while (m < 7 && strcmp(want[m].model, n->gpu_model) != 0)
            m++;
        assert_true(m < 7);
        got_nodes[m]++;
        got_gpus[m] += n->gpu_count;
    }
    assert_int_equal(gpus, 6212);
    assert_int_equal(cpu, 107018000);
    assert_int_equal(mem, 503828480); /* 480.5 TiB */
    for (size_t m = 0; m < 7; m++) {
        assert_int_equal(got_nodes[m], want[m].nodes);
        assert_int_equal(got_gpus[m], want[m].gpus);
    }
    uint32_t pooled = 0;
    for (size_t i = 0; i < c.npools; i++)
        pooled += c.pools[i].count;
    assert_int_equal(pooled, 1213);
    assert_int_equal(c.npools, 15); /* distinct shapes of the GPU nodes */
    gp_arena_free(&a);
    free(text);

    path = OPENB_SHARED "openb_node_list_all_node.csv";
    GP_NEED_SHARED(path);
    text = slurp(path, &len);
    gp_arena_init(&a);
    assert_int_equal(gp_cluster_parse_openb(text, len, path, &a, &c, &d), GP_OK);
    assert_int_equal(c.nnodes, 1523);
    uint32_t cpu_only = 0;
    for (size_t i = 0; i < c.nnodes; i++)
        cpu_only += c.nodes[i].gpu_count == 0;
    assert_int_equal(cpu_only, 310);
    assert_int_equal(c.npools, 15 + 12); /* and of the CPU-only nodes */
    gp_arena_free(&a);
    free(text);
}

/* The real default pod list: the class counts of notes/openb-fgd.md. */
static void test_real_pods_default(void **state)
{
    (void)state;
    const char *path = OPENB_SHARED "openb_pod_list_default.csv";
    GP_NEED_SHARED(path);
    size_t len;
    char *text = slurp(path, &len);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_workload_parse_openb(text, len, path, &a, &w, &d), GP_OK);
    assert_int_equal(w.nitems, 8152);
    uint32_t cpu_only = 0, sharing = 0, whole = 0, multi = 0, by_count[9] = {0}, timed = 0;
    uint64_t gpu_milli = 0;
    double last = 0;
    for (size_t i = 0; i < w.nitems; i++) {
        const struct gp_pod_spec *p = &w.items[i].pod;
        if (p->gpu_count == 0)
            cpu_only++;
        else if (p->gpu_count == 1 && p->gpu_milli < 1000)
            sharing++;
        else if (p->gpu_count == 1)
            whole++;
        else
            multi++;
        if (p->gpu_count <= 8)
            by_count[p->gpu_count]++;
        gpu_milli += (uint64_t)p->gpu_count * p->gpu_milli;
        timed += w.items[i].has_duration;
        assert_int_equal(p->ngpu_models, 0);
        if (w.items[i].arrival_s > last)
            last = w.items[i].arrival_s;
    }
    assert_int_equal(cpu_only, 1088);
    assert_int_equal(sharing, 3078);
    assert_int_equal(whole, 3911);
    assert_int_equal(multi, 75);
    assert_int_equal(by_count[2], 16);
    assert_int_equal(by_count[4], 15);
    assert_int_equal(by_count[8], 44);
    assert_int_equal(gpu_milli, 6086800); /* 6086.8 GPUs */
    assert_int_equal(timed, 8151);        /* one pod has deletion <= creation */
    assert_true(last == 12901761.0);
    assert_string_equal(w.items[0].name, "openb-pod-0000");
    gp_arena_free(&a);
    free(text);
}

/* Every pod list variant parses, with the row counts and GPU requests of
 * the data README. */
static void test_real_pod_variants(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        size_t rows, with_spec;
        uint64_t gpu_milli;
    } want[] = {
        {"cpu0", 7064, 0, 6086800},         {"cpu037", 7336, 0, 6086800},
        {"cpu050", 7439, 0, 6086800},       {"cpu072", 7608, 0, 6086800},
        {"cpu100", 7853, 0, 6086800},       {"cpu200", 8832, 0, 6086800},
        {"cpu235", 9240, 0, 6086800},       {"cpu250", 9420, 0, 6086800},
        {"cpu300", 10094, 0, 6086800},      {"gpushare20", 8152, 0, 6531500},
        {"gpushare40", 8152, 0, 5641250},   {"gpushare60", 8152, 0, 4908340},
        {"gpushare80", 8152, 0, 4408190},   {"gpushare100", 8152, 0, 3952670},
        {"gpuspec05", 8152, 369, 6086800},  {"gpuspec10", 8152, 732, 6086800},
        {"gpuspec20", 8152, 1444, 6086800}, {"gpuspec25", 8152, 1759, 6086800},
        {"gpuspec33", 8152, 2388, 6086800}, {"multigpu20", 8324, 0, 7086800},
        {"multigpu30", 8508, 0, 8086800},   {"multigpu40", 8746, 0, 9442800},
        {"multigpu50", 9061, 0, 11358800},
    };
    char path[512];
    snprintf(path, sizeof path, "%sopenb_pod_list_cpu0.csv", OPENB_SHARED);
    GP_NEED_SHARED(path);
    for (size_t f = 0; f < sizeof want / sizeof want[0]; f++) {
        snprintf(path, sizeof path, "%sopenb_pod_list_%s.csv", OPENB_SHARED, want[f].file);
        size_t len;
        char *text = slurp(path, &len);
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_workload w = {0};
        struct gp_diag d = {""};
        if (gp_workload_parse_openb(text, len, path, &a, &w, &d) != GP_OK)
            fail_msg("%s", d.msg);
        assert_int_equal(w.nitems, want[f].rows);
        size_t with_spec = 0;
        uint64_t gpu_milli = 0;
        for (size_t i = 0; i < w.nitems; i++) {
            with_spec += w.items[i].pod.ngpu_models > 0;
            gpu_milli += (uint64_t)w.items[i].pod.gpu_count * w.items[i].pod.gpu_milli;
        }
        assert_int_equal(with_spec, want[f].with_spec);
        assert_int_equal(gpu_milli, want[f].gpu_milli);
        gp_arena_free(&a);
        free(text);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_fixture),
        cmocka_unit_test(test_pods_fixture),
        cmocka_unit_test(test_pods_five_columns),
        cmocka_unit_test(test_pod_errors),
        cmocka_unit_test(test_pod_error_keeps_workload),
        cmocka_unit_test(test_node_errors),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_real_nodes),
        cmocka_unit_test(test_real_pods_default),
        cmocka_unit_test(test_real_pod_variants),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
