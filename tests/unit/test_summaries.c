/* test_summaries.c - what the simulator's result says about a run, checked
 * on runs small enough to work out by hand: the GPU allocation's exact
 * peak (from the binds and releases, not the samples), the bill as one
 * number (cost_usd is cost.total_usd, the control plane included),
 * statistics with nothing behind them (n = 0), and the pods that can
 * never fit with their reasons in numbers (single pods and gangs, each
 * kind of need, grouped, and the pods that only wait left out). The
 * writers' side of the same rules is in test_report.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/cluster.h"
#include "io/workload.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "sim/sim.h"
#include "util/arena.h"

#define HOUR 3600.0

static struct gp_node_spec node(const char *name, uint32_t gpus, double price)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = gpus ? "T4" : NULL;
    s.gpu_count = gpus;
    s.gpu_mem_mib = 16384;
    s.cpu_milli = 64000;
    s.mem_mib = 262144;
    s.price_per_hour_usd = price;
    return s;
}

static struct gp_item pod_item(const char *name, uint32_t gpus, double arrival_s, double dur_s)
{
    struct gp_item it = {0};
    it.name = name;
    it.source = "test";
    it.kind = GP_ITEM_POD;
    it.pod.name = name;
    it.pod.cpu_milli = 1000;
    it.pod.mem_mib = 1024;
    it.pod.gpu_count = gpus;
    it.pod.gpu_milli = gpus ? 1000 : 0;
    it.repeat = 1;
    it.arrival_s = arrival_s;
    it.has_duration = true;
    it.duration.kind = GP_DIST_FIXED;
    it.duration.a = dur_s;
    return it;
}

static struct gp_sim_config config(void)
{
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    c.policy = NULL; /* first feasible node */
    return c;
}

static void run(const struct gp_sim_config *c, struct gp_cluster *cl, struct gp_item *items,
                size_t nitems, struct gp_arena *a, struct gp_sim_result *out)
{
    struct gp_workload w = {.items = items, .nitems = nitems, .cap = nitems};
    struct gp_diag d = {{0}};
    enum gp_err err = gp_sim_run(c, cl, &w, a, out, &d);
    if (err != GP_OK)
        fail_msg("gp_sim_run: %s", d.msg);
}

/* One 8-GPU node sampled every hour for 2 h; an 8-GPU pod runs from 0:20
 * to 0:30 and a 2-GPU pod from 1:10 to 1:40. Every sample (0, 1 h, 2 h)
 * sees an idle cluster; the allocation was 100 % from 0:20 to 0:30. */
static void test_peak_between_samples(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0)};
    struct gp_cluster cl = {.name = "test", .source = "test", .nodes = n, .nnodes = 1};
    struct gp_item it[] = {pod_item("big", 8, 1200, 600), pod_item("small", 2, 4200, 1800)};
    struct gp_sim_config c = config();
    c.sample_s = HOUR;
    c.horizon_s = 2 * HOUR;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&c, &cl, it, 2, &a, &r);
    assert_int_equal(r.nsamples, 3);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.samples[i].gpu_alloc_pct == 0);
    assert_true(r.gpu_alloc_peak_pct == 100);
    assert_true(r.gpu_alloc_peak_t_s == 1200);
    assert_true(r.gpu_alloc_peak_gpus == 8);

    /* the small one alone: 25 % from 1:10 */
    run(&c, &cl, it + 1, 1, &a, &r);
    assert_true(r.gpu_alloc_peak_pct == 25);
    assert_true(r.gpu_alloc_peak_t_s == 4200);
    assert_true(r.gpu_alloc_peak_gpus == 2);

    /* nothing runs: no peak */
    run(&c, &cl, it, 0, &a, &r);
    assert_true(r.gpu_alloc_peak_pct == 0 && r.gpu_alloc_peak_gpus == 0);
    gp_arena_free(&a);
}

/* A $2/h node and a $0.10/h control plane for 1 h: the bill is $2.10,
 * and cost_usd is that number, not the nodes' $2 alone. */
static void test_cost_one_number(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 2.0)};
    struct gp_cluster cl = {.name = "test",
                            .source = "test",
                            .nodes = n,
                            .nnodes = 1,
                            .control_plane_per_hour_usd = 0.10};
    struct gp_item it[] = {pod_item("a", 1, 0, HOUR)};
    struct gp_sim_config c = config();
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&c, &cl, it, 1, &a, &r);
    assert_true(fabs(r.cost.total_usd - 2.10) < 1e-9);
    assert_true(fabs(r.cost.control_plane_usd - 0.10) < 1e-9);
    assert_true(r.cost_usd == r.cost.total_usd);
    gp_arena_free(&a);
}

/* Statistics say how many values are behind them: none when nothing was
 * bound or completed. */
static void test_stats_count(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_cluster cl = {.name = "test", .source = "test", .nodes = n, .nnodes = 1};
    struct gp_item it[] = {pod_item("a", 1, 0, HOUR), pod_item("b", 1, 0, HOUR),
                           pod_item("huge", 4, 0, HOUR)};
    struct gp_sim_config c = config();
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&c, &cl, it, 3, &a, &r);
    assert_int_equal(r.queue_delay_s.n, 2); /* a and b; huge never binds */
    assert_int_equal(r.jct_s.n, 2);
    assert_int_equal(r.cost.job_usd.n, 3);
    run(&c, &cl, it + 2, 1, &a, &r);
    assert_int_equal(r.queue_delay_s.n, 0);
    assert_int_equal(r.jct_s.n, 0);
    gp_arena_free(&a);
}

/* ---- pods that can never fit -------------------------------------------------- */

/* Two A100 nodes (8 GPUs, 96 CPUs, 1 TiB, rack a) and two tainted T4
 * nodes (4 GPUs, 32 CPUs, 128 GiB, rack b). */
static const char cluster_yaml[] =
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"
    "  - name: a100\n    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n    cpu: \"96\"\n"
    "    memory: 1Ti\n    count: 2\n    labels: {gpuplane.io/rack: a}\n"
    "  - name: t4\n    gpu: {model: T4, count: 4, memory: 16Gi}\n    cpu: \"32\"\n"
    "    memory: 128Gi\n    count: 2\n    labels: {gpuplane.io/rack: b}\n"
    "    taints: [{key: dedicated, value: infer, effect: NoSchedule}]\n";

/* A Pod (or a Job with `extra` under spec) of 1 h asking `limits`. */
#define POD(name, meta, spec, limits)                                                              \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\n  annotations: "                      \
    "{sim.gpuplane.io/duration: 1h" meta "}\nspec:\n" spec "  containers:\n  - name: c\n"          \
    "    resources: {limits: {" limits "}}\n---\n"
#define JOB(name, n, meta, labels, limits)                                                         \
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " name "\n  annotations: "                \
    "{sim.gpuplane.io/duration: 1h" meta "}\nspec:\n  parallelism: " n "\n  completions: " n       \
    "\n  template:\n    metadata: {labels: {" labels "}}\n    spec:\n      containers:\n"          \
    "      - name: c\n        resources: {limits: {" limits "}}\n---\n"
#define PODGROUP(name, min, topo)                                                                  \
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: " name "\n" topo \
    "spec: {minMember: " min "}\n---\n"

struct world {
    struct gp_arena a;
    struct gp_cluster cl;
    struct gp_workload w;
    struct gp_sim_result r;
};

static void simulate(struct world *x, const char *cluster, const char *manifests)
{
    struct gp_diag d = {{0}};
    gp_arena_init(&x->a);
    memset(&x->w, 0, sizeof x->w);
    if (gp_cluster_parse_yaml(cluster, strlen(cluster), "cluster.yaml", &x->a, &x->cl, &d) !=
            GP_OK ||
        gp_cluster_expand(&x->cl, &x->a, &d) != GP_OK ||
        gp_workload_parse_manifest(manifests, strlen(manifests), "pods.yaml", &x->a, &x->w, &d) !=
            GP_OK ||
        gp_workload_finish(&x->w, &x->a, &d) != GP_OK)
        fail_msg("%s", d.msg);
    struct gp_sim_config c = config();
    c.horizon_s = 4 * HOUR;
    if (gp_sim_run(&c, &x->cl, &x->w, &x->a, &x->r, &d) != GP_OK)
        fail_msg("gp_sim_run: %s", d.msg);
}

/* The row whose sentence is `want`, which must be there with `pods` pods. */
static const struct gp_sim_nofit *row(const struct gp_sim_result *r, const char *want,
                                      uint64_t pods)
{
    char got[640];
    for (size_t i = 0; i < r->nnofit; i++) {
        gp_report_nofit_text(got, sizeof got, &r->nofit[i]);
        if (strcmp(got, want) == 0) {
            if (r->nofit[i].pods != pods)
                fail_msg("\"%s\": %llu pods, expected %llu", want,
                         (unsigned long long)r->nofit[i].pods, (unsigned long long)pods);
            return &r->nofit[i];
        }
    }
    for (size_t i = 0; i < r->nnofit; i++) {
        gp_report_nofit_text(got, sizeof got, &r->nofit[i]);
        print_message("row %zu: %llu pods: %s\n", i, (unsigned long long)r->nofit[i].pods, got);
    }
    fail_msg("no row \"%s\"", want);
    return NULL;
}

/* Single pods, a reason of each kind; identical reasons grouped. */
static void test_nofit_pods(void **state)
{
    (void)state;
    struct world x;
    simulate(&x, cluster_yaml,
             JOB("big", "10", "", "app: big", "nvidia.com/gpu: 9")    /* 10 x 9 GPUs */
             POD("big-too", "", "", "nvidia.com/gpu: 9")              /* the same reason */
             POD("cpu-hog", "", "", "cpu: \"128\"")                   /* 128 of 96 CPUs */
             POD("mem-hog", "", "", "memory: 2Ti, nvidia.com/gpu: 1") /* 2 of 1 TiB */
             POD("lost", "", "  nodeSelector: {gpuplane.io/pool: h200}\n", "nvidia.com/gpu: 1")
                 POD("h100", ", gpuplane.io/gpu-model: H100-80GB", "", "nvidia.com/gpu: 1")
                     POD("t4", ", gpuplane.io/gpu-model: T4", "", "nvidia.com/gpu: 1") /* tainted */
             POD("big-t4", ", gpuplane.io/gpu-model: T4",
                 "  tolerations: [{key: dedicated, "
                 "operator: Exists}]\n",
                 "nvidia.com/gpu: 6") /* 6 of 4 T4s */
             POD("vram", ", gpuplane.io/gpu-memory: 96Gi", "", "nvidia.com/gpu: 1")
                 POD("wide", "", "", "cpu: \"64\", nvidia.com/gpu: 8") /* fits an A100 node */
             POD("fits", "", "", "nvidia.com/gpu: 8"));
    const struct gp_sim_result *r = &x.r;
    assert_int_equal(row(r, "they need 9 GPUs, the largest node has 8", 11)->gangs, 0);
    row(r, "they need 128 CPUs, the largest node has 96", 1);
    row(r, "they need 2 TiB of memory, the largest node has 1 TiB", 1);
    row(r, "no node matches their node selector gpuplane.io/pool=h200 (0 of 4 nodes)", 1);
    row(r, "they need a H100-80GB GPU, the nodes they may use have A100-80GB, T4", 1);
    row(r,
        "all 2 nodes they may use have a taint they do not tolerate (such as "
        "dedicated=infer:NoSchedule)",
        1);
    row(r, "they need 6 GPUs, the largest T4 node has 4", 1);
    row(r, "they need 96 GiB of GPU memory, the largest GPU has 80 GiB", 1);
    assert_int_equal(r->nnofit, 8);
    assert_int_equal(r->pods_never_fit, 18);
    assert_int_equal(r->nofit[0].pods, 11); /* most pods first */
    /* they stay pending, as Kubernetes leaves them */
    assert_true(r->pods_pending_end >= 18);

    /* the summary says it */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    struct gp_report_meta m = {.cluster = "cluster.yaml"};
    gp_report_summary(f, r, &m);
    fclose(f);
    if (!strstr(text, "  never fit       11 pods can never fit: they need 9 GPUs, the largest "
                      "node has 8\n"))
        fail_msg("summary:\n%s", text);
    free(text);
    gp_arena_free(&x.a);
}

/* Pods that wait for room, or for nodes an autoscaled pool can add, are not
 * reported; nor is anything when every pod was bound. */
static void test_nofit_waiting(void **state)
{
    (void)state;
    static const char grows[] =
        "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: g}\nspec:\n  nodePools:\n"
        "  - name: small\n    gpu: {model: T4, count: 1, memory: 16Gi}\n    cpu: \"8\"\n"
        "    memory: 32Gi\n    count: 1\n"
        "  - name: big\n    gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n    cpu: \"96\"\n"
        "    memory: 1Ti\n    minCount: 0\n    maxCount: 1\n    bootTime: 5h\n";
    struct world x;
    /* the 8-GPU pod fits only a node the pool adds (after the horizon);
     * the 1-GPU pods queue for the one T4 */
    simulate(&x, grows,
             POD("train", "", "", "nvidia.com/gpu: 8")
                 JOB("small", "6", "", "app: s", "nvidia.com/gpu: 1"));
    assert_int_equal(x.r.pods_pending_end, 2); /* train, and a small one at 4 h */
    assert_int_equal(x.r.nnofit, 0);
    assert_int_equal(x.r.pods_never_fit, 0);
    assert_null(x.r.nofit);
    gp_arena_free(&x.a);
}

/* Gangs: too big for one rack, minMember above its pods, a member that no
 * node takes, and (no topology) too big for the cluster. */
static void test_nofit_gangs(void **state)
{
    (void)state;
    struct world x;
    simulate(&x, cluster_yaml,
             PODGROUP("rackwide", "3",
                      "  annotations: {gpuplane.io/topology-key: "
                      "gpuplane.io/rack, gpuplane.io/topology-policy: required}\n")
                 JOB("rackwide", "3", "", "scheduling.x-k8s.io/pod-group: rackwide",
                     "nvidia.com/gpu: 8") PODGROUP("short", "9", "")
                     JOB("short", "8", "", "scheduling.x-k8s.io/pod-group: short", "cpu: \"1\"")
                         PODGROUP("huge", "2", "")
                             JOB("huge", "2", "", "scheduling.x-k8s.io/pod-group: huge",
                                 "nvidia.com/gpu: 9") PODGROUP("all", "3", "")
                                 JOB("all", "3", "", "scheduling.x-k8s.io/pod-group: all",
                                     "nvidia.com/gpu: 8"));
    const struct gp_sim_result *r = &x.r;
    const struct gp_sim_nofit *g =
        row(r, "gang rackwide needs 24 GPUs in one rack, the largest rack has 16", 3);
    assert_int_equal(g->gangs, 1);
    /* Kubernetes leaves it pending: it waits for members that never come */
    assert_int_equal(row(r, "gang short: minMember 9 > 8 members that can exist", 8)->gangs, 1);
    row(r, "gang huge: they need 9 GPUs, the largest node has 8", 2);
    /* the T4 nodes are tainted: only the A100s can take a member */
    row(r, "gang all needs 24 GPUs, the nodes that can take its pods have 16", 3);
    assert_int_equal(r->nnofit, 4);
    assert_int_equal(r->pods_never_fit, 16);
    assert_int_equal(r->gangs_never_fit, 3); /* failed at once; "short" waits */
    gp_arena_free(&x.a);
}

/* A queue's cap below one pod: it can never run, whatever the nodes. */
static void test_nofit_quota(void **state)
{
    (void)state;
    struct world x;
    simulate(&x, cluster_yaml,
             "apiVersion: gpuplane.io/v1\nkind: Queue\nmetadata: {name: small}\nspec:\n"
             "  guaranteed: {nvidia.com/gpu: 2}\n  borrowingLimit: {nvidia.com/gpu: 2}\n---\n"
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: wide\n  labels: {gpuplane.io/queue: "
             "small}\n  annotations: {sim.gpuplane.io/duration: 1h}\nspec:\n  containers:\n"
             "  - name: c\n    resources: {limits: {nvidia.com/gpu: 8}}\n");
    row(&x.r, "they need 8 GPUs, queue small's limit is 4 GPUs", 1);
    gp_arena_free(&x.a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_between_samples), cmocka_unit_test(test_cost_one_number),
        cmocka_unit_test(test_stats_count),          cmocka_unit_test(test_nofit_pods),
        cmocka_unit_test(test_nofit_waiting),        cmocka_unit_test(test_nofit_gangs),
        cmocka_unit_test(test_nofit_quota),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
