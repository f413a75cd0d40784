/* test_autoscale.c - the autoscaler and spot nodes: the pool choice and the
 * scale-up plan (engine/autoscale.h) by hand, then scenarios through the
 * simulator (a gang scaled from zero binds whole after the boot time; a
 * spot interruption in the middle of a gang restarts it whole and counts
 * the lost work; a busy node is never scaled down, an idle one is, to
 * zero; pods keep running during the notice and are evicted at its end),
 * and a property test over seeded random pools and workloads: the costs
 * add up, no pool exceeds its maximum, no busy node is removed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/autoscale.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/rng.h"

/* ---- the engine-layer autoscaler ---------------------------------------- */

static struct gp_node_spec node_spec(const char *pool, const char *model, uint32_t gpus,
                                     int64_t cpu_milli)
{
    struct gp_node_spec n = {0};
    n.name = pool;
    n.pool = pool;
    n.gpu_model = model;
    n.gpu_count = gpus;
    n.gpu_mem_mib = 81920;
    n.cpu_milli = cpu_milli;
    n.mem_mib = 1 << 20;
    return n;
}

static uint32_t add_pod(struct gp_engine *e, uint32_t gpus, uint32_t milli, uint32_t group)
{
    struct gp_pod_spec p = {0};
    p.name = "p";
    p.cpu_milli = 1000;
    p.mem_mib = 1024;
    p.gpu_count = gpus;
    p.gpu_milli = gpus ? milli : 0;
    p.group = group;
    uint32_t id;
    assert_int_equal(gp_engine_pod_add(e, &p, 0, &id), GP_OK);
    return id;
}

static void test_pick_cheapest_per_pod(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    assert_non_null(e);
    struct gp_node_spec big = node_spec("big", "A100", 8, 96000);
    struct gp_node_spec small = node_spec("small", "A100", 1, 16000);
    struct gp_autoscale_pool pools[2] = {{.spec = &big, .max = 4, .price_per_hour_usd = 20.0},
                                         {.spec = &small, .max = 4, .price_per_hour_usd = 3.0}};
    uint32_t one = add_pod(e, 1, 1000, 0), eight = add_pod(e, 8, 1000, 0);
    /* one GPU: $20 / 8 pods = $2.5 a pod on the big node, $3 on the small */
    assert_int_equal(gp_autoscale_pick_pool(e, pools, 2, NULL, gp_engine_pod(e, one)), 0);
    pools[1].price_per_hour_usd = 2.0;
    assert_int_equal(gp_autoscale_pick_pool(e, pools, 2, NULL, gp_engine_pod(e, one)), 1);
    /* eight GPUs fit only the big node */
    assert_int_equal(gp_autoscale_pick_pool(e, pools, 2, NULL, gp_engine_pod(e, eight)), 0);
    /* a pool at its maximum is not chosen */
    uint32_t planned[2] = {4, 0};
    assert_int_equal(gp_autoscale_pick_pool(e, pools, 2, planned, gp_engine_pod(e, eight)),
                     SIZE_MAX);
    /* a priced pool before one without a price */
    pools[0].price_per_hour_usd = 0;
    assert_int_equal(gp_autoscale_pick_pool(e, pools, 2, NULL, gp_engine_pod(e, one)), 1);
    gp_engine_free(e);
}

static void test_plan_fractions_and_booting(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec l4 = node_spec("l4", "L4", 1, 16000);
    struct gp_autoscale_pool pools[1] = {{.spec = &l4, .max = 10, .price_per_hour_usd = 1.0}};
    uint32_t pods[6], add[1];
    for (int i = 0; i < 6; i++)
        pods[i] = add_pod(e, 1, 250, 0);
    size_t placed;
    /* six quarter GPUs: two nodes, shared as the engine shares them */
    assert_int_equal(gp_autoscale_up(e, pools, 1, NULL, 0, pods, 6, add, &placed), GP_OK);
    assert_int_equal(add[0], 2);
    assert_int_equal(placed, 6);
    /* one node already booting holds four of them: one more is enough */
    uint32_t booting[1] = {0};
    pools[0].live = 1;
    assert_int_equal(gp_autoscale_up(e, pools, 1, booting, 1, pods, 6, add, &placed), GP_OK);
    assert_int_equal(add[0], 1);
    /* max reached: the rest waits */
    pools[0].max = 1;
    assert_int_equal(gp_autoscale_up(e, pools, 1, booting, 1, pods, 6, add, &placed), GP_OK);
    assert_int_equal(add[0], 0);
    assert_int_equal(placed, 4);
    gp_engine_free(e);
}

static void test_plan_gang_all_or_nothing(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n8 = node_spec("n8", "H100", 8, 96000);
    struct gp_autoscale_pool pools[1] = {{.spec = &n8, .max = 2, .price_per_hour_usd = 50.0}};
    struct gp_group_spec g = {"train", 3, NULL, false};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    uint32_t pods[4], add[1];
    for (int i = 0; i < 3; i++)
        pods[i] = add_pod(e, 8, 1000, gid);
    pods[3] = add_pod(e, 2, 1000, 0);
    size_t placed;
    /* three 8-GPU members, room for two nodes: nothing for the gang, one
     * node for the single pod */
    assert_int_equal(gp_autoscale_up(e, pools, 1, NULL, 0, pods, 4, add, &placed), GP_OK);
    assert_int_equal(add[0], 1);
    assert_int_equal(placed, 1);
    pools[0].max = 4;
    assert_int_equal(gp_autoscale_up(e, pools, 1, NULL, 0, pods, 4, add, &placed), GP_OK);
    assert_int_equal(add[0], 4);
    assert_int_equal(placed, 4);
    gp_engine_free(e);
}

static void test_may_remove(void **state)
{
    (void)state;
    struct gp_node n = {0};
    n.state = GP_NODE_READY;
    assert_true(gp_autoscale_may_remove(&n, 0, 600, 600, 1, 0));
    assert_false(gp_autoscale_may_remove(&n, 0, 599, 600, 1, 0)); /* not idle long enough */
    assert_false(gp_autoscale_may_remove(&n, 0, 600, 600, 1, 1)); /* the pool's minimum */
    n.pods = 1;
    assert_false(gp_autoscale_may_remove(&n, 0, 9999, 600, 5, 0)); /* busy */
    n.pods = 0;
    n.state = GP_NODE_DRAINING;
    assert_false(gp_autoscale_may_remove(&n, 0, 9999, 600, 5, 0));
}

/* ---- scenarios through the simulator ------------------------------------- */

struct world {
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_workload w;
    struct gp_sim_result r;
    struct gp_diag d;
};

static enum gp_err run_yaml_order(struct world *x, const char *cluster, const char *workload,
                                  double horizon_s, uint64_t seed, enum gp_order order);

static enum gp_err run_yaml(struct world *x, const char *cluster, const char *workload,
                            double horizon_s, uint64_t seed)
{
    return run_yaml_order(x, cluster, workload, horizon_s, seed, GP_ORDER_FAIR);
}

static enum gp_err run_yaml_order(struct world *x, const char *cluster, const char *workload,
                                  double horizon_s, uint64_t seed, enum gp_order order)
{
    memset(x, 0, sizeof *x);
    gp_arena_init(&x->a);
    enum gp_err err =
        gp_cluster_parse_yaml(cluster, strlen(cluster), "cluster.yaml", &x->a, &x->c, &x->d);
    if (err == GP_OK)
        err = gp_cluster_expand(&x->c, &x->a, &x->d);
    if (err == GP_OK)
        err = gp_workload_parse_manifest(workload, strlen(workload), "workload.yaml", &x->a, &x->w,
                                         &x->d);
    if (err != GP_OK) {
        print_message("%s\n", x->d.msg);
        return err;
    }
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.seed = seed;
    cfg.horizon_s = horizon_s;
    cfg.order = order;
    err = gp_sim_run(&cfg, &x->c, &x->w, &x->a, &x->r, &x->d);
    if (err != GP_OK)
        print_message("%s\n", x->d.msg);
    return err;
}

static const struct gp_sim_pool_cost *pool_cost(const struct world *x, const char *name)
{
    for (size_t i = 0; i < x->r.cost.npools; i++)
        if (strcmp(x->r.cost.pools[i].name, name) == 0)
            return &x->r.cost.pools[i];
    fail_msg("no pool %s", name);
    return NULL;
}

#define CLUSTER_HEAD_CP                                                                            \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n"                      \
    "  controlPlane: {pricePerHour: %.2f}\n  autoscaler: {scaleDownUnneededTime: %dm}\n"

#define CLUSTER_HEAD                                                                               \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n"                      \
    "  autoscaler: {scaleDownUnneededTime: 1m}\n  nodePools:\n"

/* A gang of two 8-GPU pods on a pool that starts empty: both nodes are
 * requested together and the gang binds whole when they are ready. */
static void test_gang_from_zero(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: h100\n"
                                       "    gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n"
                                       "    cpu: \"96\"\n    memory: 1Ti\n"
                                       "    minCount: 0\n    maxCount: 4\n    bootTime: 4m\n"
                                       "    pricePerHour: 40\n";
    const char *wl = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                     "metadata: {name: train}\nspec: {minMember: 2}\n---\n"
                     "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
                     "  annotations: {sim.gpuplane.io/duration: 1h}\n"
                     "spec:\n  parallelism: 2\n  completions: 2\n  template:\n"
                     "    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}\n"
                     "    spec:\n      containers:\n      - name: w\n"
                     "        resources: {requests: {cpu: \"8\"}, limits: {nvidia.com/gpu: 8}}\n";
    assert_int_equal(run_yaml(&x, cluster, wl, 0, 1), GP_OK);
    assert_int_equal(x.r.gangs_never_fit, 0);
    assert_int_equal(x.r.nodes_requested, 2);
    assert_int_equal(x.r.pods_completed, 2);
    assert_int_equal(x.r.nqueue_delays, 2);
    for (size_t i = 0; i < x.r.nqueue_delays; i++) /* both bound when the nodes were ready */
        assert_float_equal(x.r.queue_delays_s[i], 240.0, 1e-9);
    assert_float_equal(x.r.sim_end_s, 240.0 + 3600.0, 1e-9);
    const struct gp_sim_pool_cost *p = pool_cost(&x, "h100");
    assert_int_equal(p->peak_nodes, 2);
    /* billed from the request: two nodes for 4 min + 1 h, used for the hour */
    assert_float_equal(p->node_hours, 2 * (3840.0 / 3600.0), 1e-9);
    assert_float_equal(p->total_usd, 2 * 40 * (3840.0 / 3600.0), 1e-6);
    assert_float_equal(p->gpu_used_usd, 2 * 40.0, 1e-6);
    gp_arena_free(&x.a);
}

static const char *spot_gang_wl =
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
    "metadata: {name: train}\nspec: {minMember: 2}\n---\n"
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
    "  annotations: {sim.gpuplane.io/duration: 3h, sim.gpuplane.io/checkpoint-interval: 30m}\n"
    "spec:\n  parallelism: 2\n  completions: 2\n  template:\n"
    "    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}\n"
    "    spec:\n      containers:\n      - name: w\n"
    "        resources: {requests: {cpu: \"8\"}, limits: {nvidia.com/gpu: 8}}\n";

/* One node of a running gang is interrupted at 1 h with a 2 min notice:
 * at 1 h 02 both members stop (the gang restarts whole) and lose the 2
 * minutes since their checkpoint at 1 h; the replacement, requested at the
 * notice, is ready at 1 h 04, and the gang resumes there for its last 2 h. */
static void test_spot_interrupts_gang(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: spot\n"
                                       "    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n"
                                       "    cpu: \"96\"\n    memory: 1Ti\n"
                                       "    count: 2\n    bootTime: 4m\n"
                                       "    pricePerHour: 10\n    onDemandPricePerHour: 25\n"
                                       "    spot: true\n    interruptionTimes: [1h]\n"
                                       "    spotNotice: 2m\n";
    assert_int_equal(run_yaml(&x, cluster, spot_gang_wl, 0, 1), GP_OK);
    assert_int_equal(x.r.spot_interruptions, 1);
    assert_int_equal(x.r.spot_evictions, 2);
    assert_float_equal(x.r.spot_lost_gpu_hours, 2 * 8 * (120.0 / 3600.0), 1e-9);
    assert_int_equal(x.r.preemptions, 0);
    assert_int_equal(x.r.pods_completed, 2);
    assert_int_equal(x.r.jobs_completed, 1);
    assert_int_equal(x.r.nodes_requested, 1);
    assert_float_equal(x.r.sim_end_s, 3 * 3600.0 + 240.0, 1e-6);
    /* the lost work is paid: 2 x 8 GPUs x 2 min at $10 / 8 GPUs an hour */
    assert_float_equal(x.r.cost.lost_work_usd, 2 * 10 * (120.0 / 3600.0), 1e-9);
    const struct gp_sim_pool_cost *p = pool_cost(&x, "spot");
    assert_int_equal(p->interruptions, 1);
    assert_true(p->spot_savings_usd > 0);
    assert_float_equal(p->spot_savings_usd, p->node_hours * 15, 1e-6);
    gp_arena_free(&x.a);
}

/* A node with a running pod is never scaled down; once idle for the
 * cool-down it goes, and the pool is at zero. */
static void test_no_scale_down_of_busy_node(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: l4\n"
                                       "    gpu: {model: L4, count: 1, memory: 24Gi}\n"
                                       "    cpu: \"16\"\n    memory: 64Gi\n"
                                       "    minCount: 0\n    maxCount: 3\n    initialCount: 1\n"
                                       "    pricePerGpuHour: 1\n";
    const char *wl = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: infer\n"
                     "  annotations: {sim.gpuplane.io/duration: 2h}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 1}}\n";
    assert_int_equal(run_yaml(&x, cluster, wl, 3 * 3600.0, 1), GP_OK);
    assert_int_equal(x.r.pods_completed, 1);
    assert_int_equal(x.r.nodes_requested, 0);
    assert_int_equal(x.r.nodes_removed, 1);
    const struct gp_sim_pool_cost *p = pool_cost(&x, "l4");
    /* busy for 2 h, then idle 1 min: billed 2 h 1 min, not a second more */
    assert_float_equal(p->node_hours, 2 + 1.0 / 60, 1e-9);
    assert_float_equal(p->gpu_idle_usd, 1.0 / 60, 1e-9);
    assert_int_equal(x.r.samples[x.r.nsamples - 1].nodes, 0); /* scaled to zero */
    gp_arena_free(&x.a);
}

/* During the 30 min notice the node's pods keep running: one that ends in
 * the notice completes; the other is evicted at its end, having lost its
 * 1.5 h of work (no checkpoints). */
static void test_notice_honoured(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: spot\n"
                                       "    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n"
                                       "    cpu: \"96\"\n    memory: 1Ti\n"
                                       "    count: 1\n    bootTime: 4m\n    pricePerHour: 8\n"
                                       "    spot: true\n    interruptionTimes: [1h]\n"
                                       "    spotNotice: 30m\n";
    const char *wl = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: short\n"
                     "  annotations: {sim.gpuplane.io/duration: 80m}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 4}}\n"
                     "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: long\n"
                     "  annotations: {sim.gpuplane.io/duration: 5h}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 4}}\n";
    assert_int_equal(run_yaml(&x, cluster, wl, 0, 1), GP_OK);
    assert_int_equal(x.r.spot_interruptions, 1);
    assert_int_equal(x.r.spot_evictions, 1);
    assert_float_equal(x.r.spot_lost_gpu_hours, 4 * 1.5, 1e-9);
    assert_int_equal(x.r.pods_completed, 2);
    /* the long pod starts over at 1 h 30 on the replacement: ends at 6 h 30 */
    assert_float_equal(x.r.sim_end_s, 6.5 * 3600, 1e-6);
    assert_int_equal(x.r.nodes_requested, 1);
    gp_arena_free(&x.a);
}

/* ---- topology, shared GPUs, series, strict orders ------------------------ */

/* Engine level: pools with racks of two nodes. A gang of three 8-GPU pods
 * that requires one rack fits none: nothing is planned; preferred, it is
 * packed anyway; a rack of four holds it, in one domain. */
static void test_plan_topology(void **state)
{
    (void)state;
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    struct gp_node_spec n8 = node_spec("n8", "H100", 8, 96000);
    static const char *const values[] = {"n8-d0", "n8-d1", "n8-d2", "n8-d3"};
    uint32_t live[4] = {1, 0, 0, 0};
    struct gp_autoscale_pool pools[1] = {{.spec = &n8,
                                          .live = 1,
                                          .max = 8,
                                          .price_per_hour_usd = 50,
                                          .domain_key = "rack",
                                          .domain_values = values,
                                          .domain_live = live,
                                          .ndomains = 4,
                                          .nodes_per_domain = 2}};
    struct gp_group_spec g = {"train", 3, "rack", true};
    uint32_t gid;
    assert_int_equal(gp_engine_group_add(e, &g, &gid), GP_OK);
    uint32_t pods[4], add[1];
    for (int i = 0; i < 3; i++)
        pods[i] = add_pod(e, 8, 1000, gid);
    pods[3] = add_pod(e, 1, 1000, 0);
    struct gp_autoscale_gang gangs[1] = {{"rack", true}};
    struct gp_autoscale_input in = {
        .pools = pools, .npools = 1, .pods = pods, .npods = 4, .gangs = gangs, .ngangs = 1};
    struct gp_autoscale_node nodes[8];
    size_t nn, placed;
    assert_int_equal(gp_autoscale_plan(e, &in, add, nodes, &nn, &placed), GP_OK);
    /* only the single pod: one node, in the fullest rack with room (d0) */
    assert_int_equal(placed, 1);
    assert_int_equal(add[0], 1);
    assert_int_equal(nn, 1);
    assert_int_equal(nodes[0].domain, 0);
    gangs[0].topology_required = false; /* preferred: packed across racks */
    assert_int_equal(gp_autoscale_plan(e, &in, add, nodes, &nn, &placed), GP_OK);
    assert_int_equal(placed, 4);
    assert_int_equal(add[0], 4);
    gangs[0].topology_required = true;
    pools[0].nodes_per_domain = 4; /* d0 has room for 3 */
    assert_int_equal(gp_autoscale_plan(e, &in, add, nodes, &nn, &placed), GP_OK);
    assert_int_equal(placed, 4);
    assert_int_equal(add[0], 4);
    assert_int_equal(nn, 4);
    /* the gang first: three nodes in one rack, d0 (the first with room) */
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(nodes[i].domain, 0);
    /* the single pod then finds d0 full (1 + 3) and opens d1 */
    assert_int_equal(nodes[3].domain, 1);
    gp_engine_free(e);
}

/* Through the simulator: racks of three nodes; one node is busy in rack
 * d0, so a gang of three 8-GPU members that requires one rack cannot use
 * d0's two free slots: three new nodes in d1, and the gang binds whole
 * when they are ready. */
static void test_gang_topology_from_zero(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: h100\n"
                                       "    gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n"
                                       "    cpu: \"96\"\n    memory: 1Ti\n"
                                       "    minCount: 0\n    maxCount: 9\n    initialCount: 1\n"
                                       "    bootTime: 4m\n    pricePerHour: 40\n"
                                       "    topology: {key: topology.kubernetes.io/rack, "
                                       "nodesPerDomain: 3}\n";
    const char *wl = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: busy\n"
                     "  annotations: {sim.gpuplane.io/duration: 3h}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"8\"}, limits: {nvidia.com/gpu: 8}}\n---\n"
                     "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                     "metadata:\n  name: train\n  annotations: {gpuplane.io/topology-key: "
                     "topology.kubernetes.io/rack, gpuplane.io/topology-policy: required}\n"
                     "spec: {minMember: 3}\n---\n"
                     "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
                     "  annotations: {sim.gpuplane.io/duration: 1h}\n"
                     "spec:\n  parallelism: 3\n  completions: 3\n  template:\n"
                     "    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}\n"
                     "    spec:\n      containers:\n      - name: w\n"
                     "        resources: {requests: {cpu: \"8\"}, limits: {nvidia.com/gpu: 8}}\n";
    assert_int_equal(run_yaml(&x, cluster, wl, 0, 1), GP_OK);
    assert_int_equal(x.r.gangs_never_fit, 0);
    assert_int_equal(x.r.nodes_requested, 3);
    assert_int_equal(x.r.pods_completed, 4);
    assert_int_equal(x.r.jobs_completed, 2);
    assert_int_equal(x.r.unschedulable[GP_FILTER_TOPOLOGY], 0);
    /* busy at 0; the gang's three members when the new rack was ready */
    assert_int_equal(x.r.nqueue_delays, 4);
    assert_float_equal(x.r.queue_delays_s[0], 0, 1e-9);
    for (size_t i = 1; i < 4; i++)
        assert_float_equal(x.r.queue_delays_s[i], 240.0, 1e-9);
    assert_int_equal(pool_cost(&x, "h100")->peak_nodes, 4);
    gp_arena_free(&x.a);
}

/* A gang whose required rack can never be had (racks of two, three
 * members) fails at once instead of scaling the pool. */
static void test_gang_topology_never_fits(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: h100\n"
                                       "    gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n"
                                       "    cpu: \"96\"\n    memory: 1Ti\n"
                                       "    minCount: 0\n    maxCount: 8\n    bootTime: 4m\n"
                                       "    pricePerHour: 40\n"
                                       "    topology: {key: gpuplane.io/rack, nodesPerDomain: 2}\n";
    const char *wl = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                     "metadata:\n  name: train\n  annotations: {gpuplane.io/topology-key: "
                     "gpuplane.io/rack, gpuplane.io/topology-policy: required}\n"
                     "spec: {minMember: 3}\n---\n"
                     "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
                     "  annotations: {sim.gpuplane.io/duration: 1h}\n"
                     "spec:\n  parallelism: 3\n  completions: 3\n  template:\n"
                     "    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}\n"
                     "    spec:\n      containers:\n      - name: w\n"
                     "        resources: {requests: {cpu: \"8\"}, limits: {nvidia.com/gpu: 8}}\n";
    assert_int_equal(run_yaml(&x, cluster, wl, 3600, 1), GP_OK);
    assert_int_equal(x.r.gangs_never_fit, 1);
    assert_int_equal(x.r.jobs_failed, 1);
    assert_int_equal(x.r.nodes_requested, 0);
    gp_arena_free(&x.a);
}

static const char *pods_job(char *buf, size_t n, int pods, const char *limits, const char *ann)
{
    snprintf(buf, n,
             "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
             "  annotations: {sim.gpuplane.io/duration: 1h}\n"
             "spec:\n  parallelism: %d\n  completions: %d\n  template:\n"
             "    metadata: {annotations: {%s}}\n"
             "    spec:\n      containers:\n      - name: c\n"
             "        resources: {requests: {cpu: \"1\"}, limits: {%s}}\n",
             pods, pods, ann, limits);
    return buf;
}

/* 14 pods of 1g.10gb on a dynamic A100-80GB MIG pool of 1-GPU nodes from
 * zero: seven 1g.10gb instances fit one GPU, so two nodes. */
static void test_mig_from_zero(void **state)
{
    (void)state;
    struct world x;
    char wl[2048];
    const char *cluster = CLUSTER_HEAD "  - name: mig\n"
                                       "    gpu: {model: A100-80GB, count: 1, memory: 80Gi}\n"
                                       "    cpu: \"32\"\n    memory: 256Gi\n"
                                       "    minCount: 0\n    maxCount: 5\n    bootTime: 4m\n"
                                       "    pricePerHour: 4\n"
                                       "    sharing: {mode: mig, mig: {dynamic: true}}\n";
    assert_int_equal(
        run_yaml(&x, cluster, pods_job(wl, sizeof wl, 14, "nvidia.com/mig-1g.10gb: 1", ""), 0, 1),
        GP_OK);
    assert_int_equal(x.r.nodes_requested, 2);
    assert_int_equal(pool_cost(&x, "mig")->peak_nodes, 2);
    assert_int_equal(x.r.pods_completed, 14);
    assert_true(x.r.mig_reconfigurations > 0);
    gp_arena_free(&x.a);
}

/* 9 replica pods of 20 GiB on a 4-replica 80 GiB time-sliced pool of
 * 1-GPU nodes from zero: four a GPU, so three nodes. */
static void test_timeslice_from_zero(void **state)
{
    (void)state;
    struct world x;
    char wl[2048];
    const char *cluster = CLUSTER_HEAD "  - name: ts\n"
                                       "    gpu: {model: H100-80GB, count: 1, memory: 80Gi}\n"
                                       "    cpu: \"32\"\n    memory: 256Gi\n"
                                       "    minCount: 0\n    maxCount: 5\n    bootTime: 4m\n"
                                       "    pricePerHour: 4\n"
                                       "    sharing: {mode: timeslice, replicas: 4}\n";
    assert_int_equal(
        run_yaml(&x, cluster,
                 pods_job(wl, sizeof wl, 9, "nvidia.com/gpu: 1", "gpuplane.io/gpu-memory: 20Gi"), 0,
                 1),
        GP_OK);
    assert_int_equal(x.r.nodes_requested, 3);
    assert_int_equal(pool_cost(&x, "ts")->peak_nodes, 3);
    assert_int_equal(x.r.pods_completed, 9);
    gp_arena_free(&x.a);
}

/* A pod no pool can ever hold (five replicas of a 1-GPU node with four; two
 * where the device plugin fails requests greater than one; a MIG profile
 * on a time-sliced pool) asks for no node; two replicas where the plugin
 * serves them (its default) do. */
static void test_never_holdable_no_scale_up(void **state)
{
    (void)state;
    struct world x;
    char wl[2048];
    const char *cluster = CLUSTER_HEAD "  - name: ts\n"
                                       "    gpu: {model: H100-80GB, count: 1, memory: 80Gi}\n"
                                       "    cpu: \"32\"\n    memory: 256Gi\n"
                                       "    minCount: 0\n    maxCount: 5\n    bootTime: 4m\n"
                                       "    pricePerHour: 4\n"
                                       "    sharing: {mode: timeslice, replicas: 4}\n";
    static const char *const limits[] = {"nvidia.com/gpu: 5", "nvidia.com/mig-1g.10gb: 1"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(run_yaml(&x, cluster, pods_job(wl, sizeof wl, 2, limits[i], ""), 7200, 1),
                         GP_OK);
        assert_int_equal(x.r.nodes_requested, 0);
        assert_int_equal(x.r.binds, 0);
        assert_int_equal(x.r.pods_pending_end, 2);
        gp_arena_free(&x.a);
    }
    /* two replicas: one node serves them, unless the plugin fails them */
    static const char *const sharing[] = {
        "    sharing: {mode: timeslice, replicas: 4}\n",
        "    sharing: {mode: timeslice, replicas: 4, failRequestsGreaterThanOne: true}\n"};
    for (int i = 0; i < 2; i++) {
        char c[1024];
        snprintf(c, sizeof c, "%s", cluster);
        snprintf(strstr(c, sharing[0]), sizeof c - (size_t)(strstr(c, sharing[0]) - c), "%s",
                 sharing[i]);
        assert_int_equal(
            run_yaml(&x, c, pods_job(wl, sizeof wl, 2, "nvidia.com/gpu: 2", ""), 7200, 1), GP_OK);
        assert_int_equal(x.r.nodes_requested, i ? 0 : 1);
        assert_int_equal(x.r.binds, i ? 0 : 2);
        gp_arena_free(&x.a);
    }
}

/* A recorded interruption while the pool has no ready node is dropped and
 * counted; the next one, with a node ready, takes it. */
static void test_series_without_ready_node(void **state)
{
    (void)state;
    struct world x;
    const char *cluster = CLUSTER_HEAD "  - name: spot\n"
                                       "    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n"
                                       "    cpu: \"96\"\n    memory: 1Ti\n"
                                       "    minCount: 0\n    maxCount: 2\n    bootTime: 4m\n"
                                       "    pricePerHour: 8\n    spot: true\n"
                                       "    interruptionTimes: [30m, 1h2m, 2h]\n"
                                       "    spotNotice: 2m\n";
    /* arrives at 1 h: at 30 min there is no node, at 1 h 02 one is booting */
    const char *wl = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                     "  annotations: {sim.gpuplane.io/duration: 3h, "
                     "sim.gpuplane.io/arrival: 1h}\n"
                     "spec:\n  containers:\n  - name: c\n"
                     "    resources: {requests: {cpu: \"4\"}, limits: {nvidia.com/gpu: 8}}\n";
    assert_int_equal(run_yaml(&x, cluster, wl, 0, 1), GP_OK);
    assert_int_equal(x.r.spot_interruptions_missed, 2);
    assert_int_equal(pool_cost(&x, "spot")->interruptions_missed, 2);
    assert_int_equal(x.r.spot_interruptions, 1);
    assert_int_equal(x.r.spot_evictions, 1);
    assert_int_equal(x.r.nodes_requested, 2); /* the first, and the replacement */
    assert_int_equal(x.r.pods_completed, 1);
    gp_arena_free(&x.a);
}

/* Under strict FIFO and SJF the head blocks the cycle (the one node is
 * busy: no room, though a node could hold it): the pods behind it get no
 * decision, yet the autoscaler asks for their nodes at once - three nodes
 * at 0, all three pods bound when they are ready. FAIR tries them all. */
static void test_strict_order_untried(void **state)
{
    (void)state;
    struct world x;
    char wl[4096];
    const char *cluster = CLUSTER_HEAD "  - name: l4\n"
                                       "    gpu: {model: L4, count: 1, memory: 24Gi}\n"
                                       "    cpu: \"16\"\n    memory: 64Gi\n"
                                       "    minCount: 0\n    maxCount: 5\n    initialCount: 1\n"
                                       "    bootTime: 4m\n    pricePerHour: 1\n";
    const char *busy =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: busy\n"
        "  annotations: {sim.gpuplane.io/duration: 3h}\n"
        "spec:\n  containers:\n  - name: c\n"
        "    resources: {requests: {cpu: \"1\"}, limits: {nvidia.com/gpu: 1}}\n---\n";
    size_t n = strlen(busy);
    memcpy(wl, busy, n);
    pods_job(wl + n, sizeof wl - n, 3, "nvidia.com/gpu: 1", "");
    static const enum gp_order orders[] = {GP_ORDER_FIFO, GP_ORDER_SJF, GP_ORDER_FAIR};
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(run_yaml_order(&x, cluster, wl, 0, 1, orders[k]), GP_OK);
        assert_int_equal(x.r.nodes_requested, 3);
        assert_int_equal(x.r.nqueue_delays, 4);
        assert_float_equal(x.r.queue_delays_s[0], 0, 1e-9); /* on the node there */
        for (size_t i = 1; i < 4; i++)
            assert_float_equal(x.r.queue_delays_s[i], 240.0, 1e-9);
        /* SJF puts the hour-long pods first: busy takes a new node */
        assert_float_equal(x.r.sim_end_s, 3 * 3600.0 + (orders[k] == GP_ORDER_SJF ? 240 : 0), 1e-9);
        gp_arena_free(&x.a);
    }
}

/* ---- property: seeded random pools and workloads ----------------------- */

static void check_costs(const struct gp_sim_result *r)
{
    const struct gp_sim_cost *c = &r->cost;
    double tol = 1e-6 * (1 + c->total_usd);
    assert_float_equal(c->gpu_used_usd + c->gpu_idle_usd + c->control_plane_usd + c->other_usd,
                       c->total_usd, tol);
    double q = 0, pools = 0, used = 0;
    for (size_t i = 0; i < r->nqueues; i++)
        q += r->queues[i].cost_usd;
    assert_float_equal(q, c->gpu_used_usd, tol);
    assert_float_equal(c->jobs_usd + c->services_usd, c->gpu_used_usd, tol);
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_sim_pool_cost *p = &c->pools[i];
        pools += p->total_usd;
        used += p->gpu_used_usd;
        assert_true(p->gpu_idle_usd >= -tol);
        assert_true(p->gpu_hours_used <= p->gpu_hours + 1e-9);
        assert_true(p->peak_nodes <= p->max_nodes); /* never more than max */
    }
    assert_float_equal(pools + c->control_plane_usd, c->total_usd, tol);
    assert_float_equal(used, c->gpu_used_usd, tol);
    assert_true(c->lost_work_usd <= c->gpu_used_usd + tol);
}

static void test_property_random(void **state)
{
    (void)state;
    static const char *models[] = {"A100-80GB", "H100-80GB", "L4"};
    uint64_t requested = 0, removed = 0, interruptions = 0, evictions = 0, binds = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct gp_rng g;
        gp_rng_seed(&g, seed * 7919);
        char cluster[4096], wl[8192];
        int n = snprintf(cluster, sizeof cluster, CLUSTER_HEAD_CP "  nodePools:\n",
                         gp_rng_below(&g, 3) * 0.05, 1 + (int)gp_rng_below(&g, 20));
        int npools = 1 + (int)gp_rng_below(&g, 3);
        for (int p = 0; p < npools; p++) {
            uint32_t gpus = 1u << gp_rng_below(&g, 4), mx = 1 + (uint32_t)gp_rng_below(&g, 4);
            uint32_t mn = (uint32_t)gp_rng_below(&g, mx + 1);
            bool spot = gp_rng_below(&g, 2);
            n += snprintf(cluster + n, sizeof cluster - (size_t)n,
                          "  - name: p%d\n    gpu: {model: %s, count: %u, memory: 80Gi}\n"
                          "    cpu: \"64\"\n    memory: 512Gi\n    minCount: %u\n"
                          "    maxCount: %u\n    bootTime: %um\n    pricePerGpuHour: %.2f\n"
                          "%s",
                          p, models[p % 3], gpus, mn, mx, (unsigned)gp_rng_below(&g, 6),
                          0.5 + gp_rng_unit(&g) * 4,
                          spot ? "    spot: true\n    interruptionRate: 0.5\n"
                                 "    spotNotice: 1m\n"
                               : "");
        }
        n += snprintf(cluster + n, sizeof cluster - (size_t)n,
                      "  - name: cpu\n    cpu: \"32\"\n    memory: 64Gi\n    count: 1\n"
                      "    pricePerHour: 0.5\n");
        int m = 0;
        int nitems = 2 + (int)gp_rng_below(&g, 5);
        for (int i = 0; i < nitems; i++) {
            uint32_t kind = (uint32_t)gp_rng_below(&g, 4);
            uint32_t gpus = 1u << gp_rng_below(&g, 3);
            const char *queue = gp_rng_below(&g, 2) ? "a" : "b";
            if (kind == 0) /* a fractional service */
                m += snprintf(wl + m, sizeof wl - (size_t)m,
                              "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: s%d\n"
                              "  labels: {gpuplane.io/queue: %s}\nspec:\n  replicas: %u\n"
                              "  template:\n    metadata: {annotations: "
                              "{gpuplane.io/gpu-milli: \"300\"}}\n    spec:\n      containers:\n"
                              "      - name: c\n        resources: {requests: {cpu: \"2\"}}\n"
                              "---\n",
                              i, queue, 1 + (unsigned)gp_rng_below(&g, 4));
            else if (kind == 1) /* a gang */
                m += snprintf(wl + m, sizeof wl - (size_t)m,
                              "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                              "metadata: {name: g%d}\nspec: {minMember: 2}\n---\n"
                              "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: g%d\n"
                              "  labels: {gpuplane.io/queue: %s}\n"
                              "  annotations: {sim.gpuplane.io/duration: exp(40m), "
                              "sim.gpuplane.io/repeat: \"4\", sim.gpuplane.io/interarrival: "
                              "exp(30m), sim.gpuplane.io/checkpoint-interval: 10m}\n"
                              "spec:\n  parallelism: 2\n  completions: 2\n  template:\n"
                              "    metadata: {labels: {scheduling.x-k8s.io/pod-group: g%d}}\n"
                              "    spec:\n      containers:\n      - name: w\n"
                              "        resources: {requests: {cpu: \"4\"}, limits: "
                              "{nvidia.com/gpu: %u}}\n---\n",
                              i, i, queue, i, gpus);
            else /* a stream of jobs, some CPU only */
                m += snprintf(wl + m, sizeof wl - (size_t)m,
                              "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j%d\n"
                              "  labels: {gpuplane.io/queue: %s}\n"
                              "  annotations: {sim.gpuplane.io/duration: exp(20m), "
                              "sim.gpuplane.io/repeat: \"10\", sim.gpuplane.io/interarrival: "
                              "exp(15m)}\nspec:\n  template:\n    spec:\n      containers:\n"
                              "      - name: c\n        resources: {requests: {cpu: \"2\"}, "
                              "limits: {nvidia.com/gpu: %u}}\n---\n",
                              i, queue, kind == 2 ? gpus : 0);
        }
        assert_true(n < (int)sizeof cluster && m < (int)sizeof wl);
        struct world x;
        enum gp_err err = run_yaml(&x, cluster, wl, 8 * 3600.0, seed);
        if (err != GP_OK)
            print_message("seed %llu:\n%s\n%s\n", (unsigned long long)seed, cluster, wl);
        assert_int_equal(err, GP_OK); /* a busy node removed would be an engine error */
        check_costs(&x.r);
        requested += x.r.nodes_requested;
        removed += x.r.nodes_removed;
        interruptions += x.r.spot_interruptions;
        evictions += x.r.spot_evictions;
        binds += x.r.binds;
        gp_arena_free(&x.a);
    }
    print_message("40 random runs: %llu binds, %llu nodes requested, %llu removed, %llu spot "
                  "interruptions, %llu pods evicted by them\n",
                  (unsigned long long)binds, (unsigned long long)requested,
                  (unsigned long long)removed, (unsigned long long)interruptions,
                  (unsigned long long)evictions);
    /* the cases exercise what they claim to */
    assert_true(requested > 0 && removed > 0 && interruptions > 0 && evictions > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_cheapest_per_pod),
        cmocka_unit_test(test_plan_fractions_and_booting),
        cmocka_unit_test(test_plan_gang_all_or_nothing),
        cmocka_unit_test(test_may_remove),
        cmocka_unit_test(test_gang_from_zero),
        cmocka_unit_test(test_spot_interrupts_gang),
        cmocka_unit_test(test_no_scale_down_of_busy_node),
        cmocka_unit_test(test_notice_honoured),
        cmocka_unit_test(test_plan_topology),
        cmocka_unit_test(test_gang_topology_from_zero),
        cmocka_unit_test(test_gang_topology_never_fits),
        cmocka_unit_test(test_mig_from_zero),
        cmocka_unit_test(test_timeslice_from_zero),
        cmocka_unit_test(test_never_holdable_no_scale_up),
        cmocka_unit_test(test_series_without_ready_node),
        cmocka_unit_test(test_strict_order_untried),
        cmocka_unit_test(test_property_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
