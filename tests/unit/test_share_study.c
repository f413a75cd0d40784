/* test_share_study.c - the renter's question: on hand-sized cases the
 * number of nodes each sharing mode needs is worked out by hand (services,
 * a stream of Jobs sized by what runs at once, pods that may go only to
 * one pool, the cost of the work ranking the options); on the shipped
 * example (40 small models on A100 and H100 pools) the relations that
 * must hold between the modes do; the timeline the study reads is the
 * simulator's own; services with a latencyLimit decide by latency: a
 * cheaper time-slicing setting that slows five models past their p99 is
 * shown as missing and not recommended, and an LLM that MPS holds by
 * memory misses its TTFT limit at half the SMs (and on MIG's 3g). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "io/cluster.h"
#include "io/workload.h"
#include "plan/share_study.h"
#include "sim/sim.h"
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

static const struct gp_study_option *find(const struct gp_study *s, const char *pool,
                                          enum gp_share_mode mode)
{
    for (size_t i = 0; i < s->noptions; i++)
        if (strcmp(s->options[i].pool, pool) == 0 && s->options[i].mode == mode)
            return &s->options[i];
    fail_msg("no option %s/%d", pool, (int)mode);
    return NULL;
}

/* The study of a workload on a cluster (both loaded), on the timeline of
 * seed 1 up to horizon_s (0: all of it). */
static void run_study(const struct gp_cluster *c, const struct gp_workload *w, double horizon_s,
                      struct gp_arena *a, struct gp_study *out)
{
    struct gp_diag d = {0};
    struct gp_sim_span *spans;
    size_t n;
    assert_int_equal(gp_sim_timeline(w, 1, horizon_s, a, &spans, &n, &d), GP_OK);
    struct gp_study_run *runs = gp_arena_alloc(a, (n ? n : 1) * sizeof *runs);
    assert_non_null(runs);
    for (size_t i = 0; i < n; i++)
        runs[i] = (struct gp_study_run){spans[i].item, spans[i].start_s, spans[i].end_s};
    enum gp_err err = gp_study_sharing(c, w, runs, n, a, out, &d);
    if (err != GP_OK)
        print_message("study: %s\n", d.msg);
    assert_int_equal(err, GP_OK);
}

/* The study of workload wl on cluster cl (both YAML text). */
static void study(const char *cl, const char *wl, double horizon_s, struct gp_arena *a,
                  struct gp_study *out)
{
    struct gp_diag d = {0};
    struct gp_cluster c;
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    assert_int_equal(gp_cluster_parse_yaml(cl, strlen(cl), "c.yaml", a, &c, &d), GP_OK);
    assert_int_equal(gp_cluster_expand(&c, a, &d), GP_OK);
    assert_int_equal(gp_workload_parse_manifest(wl, strlen(wl), "w.yaml", a, &w, &d), GP_OK);
    assert_int_equal(gp_workload_finish(&w, a, &d), GP_OK);
    run_study(&c, &w, horizon_s, a, out);
}

static bool near(double x, double want)
{
    return x > want - 0.005 && x < want + 0.005;
}

static void test_hand_sized(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study s;
    study(cluster_yaml, workload_yaml, 0, &a, &s);
    assert_int_equal(s.noptions, 7); /* a100: four modes; l4: no MIG */
    assert_int_equal(s.peak_pods, 6);
    /* exclusive: one GPU per model, 2 per node: 3 nodes */
    const struct gp_study_option *x = find(&s, "a100", GP_SHARE_EXCLUSIVE);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 3);
    assert_int_equal(x->gpus, 6);
    assert_int_equal(x->gpus_busy, 6);
    assert_true(x->usd_per_hour == 30);
    assert_true(near(x->work_usd_per_hour, 30));
    /* time-slicing: 4 x 20 GiB per 80 GiB GPU: 2 GPUs, 1 node; 4 x 30 % on
     * one GPU is 1.2 of it: 4 pods at 1/1.2, 2 at full speed do the work
     * of 5.33 pods, so an hour of the work of 6 costs 10 x 6 / 5.33 */
    x = find(&s, "a100", GP_SHARE_TIMESLICE);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->gpus_busy, 2);
    assert_true(x->slowdown_max > 1.19 && x->slowdown_max < 1.21);
    assert_true(near(x->work_usd_per_hour, 11.25));
    /* MPS: 3 clients of 26 GiB and 33 % hold a 20 GiB, 30 % model: 2 GPUs */
    x = find(&s, "a100", GP_SHARE_MPS);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->replicas, 3);
    assert_true(near(x->work_usd_per_hour, 10)); /* 30 % of the SMs fit 33 % */
    /* MIG: 30 % needs 3 of 7 compute slices, a 3g.40gb each, two per GPU:
     * 3 GPUs, 2 nodes */
    x = find(&s, "a100", GP_SHARE_MIG);
    assert_int_equal(x->nodes, 2);
    assert_int_equal(x->gpus_busy, 3);
    /* an L4 has 24 GiB: one model per GPU whatever the mode */
    x = find(&s, "l4", GP_SHARE_TIMESLICE);
    assert_int_equal(x->nodes, 6);
    assert_true(x->usd_per_hour == 6);
    x = find(&s, "l4", GP_SHARE_MPS); /* 2 clients of 12 GiB: too small */
    assert_false(x->feasible);
    assert_string_equal(x->why, "pod m fits no empty l4 node: no GPU with enough free GPU memory");
    /* cheapest for the work: the l4 at $6 an hour of work (no slowdown),
     * against the a100's MPS at $10 */
    assert_true(s.cheapest >= 0);
    assert_string_equal(s.options[s.cheapest].pool, "l4");
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
    assert_int_equal(gp_workload_finish(&w, &a, &d), GP_OK);
    struct gp_study s;
    run_study(&c, &w, 0, &a, &s);
    assert_int_equal(s.noptions, 8);
    for (size_t i = 0; i < s.noptions; i++) {
        const struct gp_study_option *x = &s.options[i];
        assert_true(x->feasible);
        assert_true(x->gpus_busy <= x->gpus && x->gpus == x->nodes * 8);
        if (x->mode == GP_SHARE_EXCLUSIVE)
            assert_int_equal(x->gpus_busy, x->pods); /* a whole GPU per model */
        else /* sharing needs fewer GPUs than exclusive on the same pool */
            assert_true(x->gpus_busy < find(&s, x->pool, GP_SHARE_EXCLUSIVE)->gpus_busy);
        assert_true(x->slowdown_max >= 1 && x->slowdown_mean <= x->slowdown_max);
        /* the work costs at least the rent, and as much when nothing slows */
        assert_true(x->work_usd_per_hour >= x->usd_per_hour - 1e-9);
        if (x->slowdown_max <= 1)
            assert_true(near(x->work_usd_per_hour, x->usd_per_hour));
        /* no option is cheaper for the work than the cheapest */
        assert_true(x->work_usd_per_hour >= s.options[s.cheapest].work_usd_per_hour - 1e-9);
    }
    gp_arena_free(&a);
}

#define POOL(name, gpus, price, sharing)                                                           \
    "  - name: " name "\n    gpu: {model: A100-80GB, count: " gpus ", memory: 80Gi}\n"             \
    "    cpu: \"64\"\n    memory: 512Gi\n    count: 1\n    pricePerHour: " price "\n" sharing

#define CLUSTER_HEAD                                                                               \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"

#define ORDINARY(pods, gpus)                                                                       \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: svc}\nspec:\n  replicas: " pods       \
    "\n  template:\n    spec:\n      containers:\n      - name: c\n"                               \
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
    struct gp_study s;
    study(CLUSTER_HEAD POOL("a100", "2", "10", "")
              POOL("renamed", "2", "10",
                   "    sharing: {mode: timeslice, replicas: 2, renameByDefault: true}\n"),
          ORDINARY("4", "1"), 0, &a, &s);
    const struct gp_study_option *x = find(&s, "a100", GP_SHARE_EXCLUSIVE);
    assert_int_equal(x->nodes, 2);
    x = find(&s, "a100", GP_SHARE_TIMESLICE);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 1);
    assert_int_equal(x->replicas, 2);
    assert_int_equal(x->gpus_busy, 2);
    assert_false(x->rename_by_default);
    assert_true(x->slowdown_max > 1.99 && x->slowdown_max < 2.01);
    x = find(&s, "a100", GP_SHARE_MPS);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 1);
    x = find(&s, "a100", GP_SHARE_MIG); /* the mixed strategy has no nvidia.com/gpu */
    assert_false(x->feasible);
    assert_non_null(strstr(x->why, "pod svc fits no empty a100 node: it asks for nvidia.com/gpu"));
    x = find(&s, "renamed", GP_SHARE_TIMESLICE);
    assert_false(x->feasible);
    assert_true(x->rename_by_default);
    assert_non_null(strstr(x->why, "renameByDefault: true"));
    gp_arena_free(&a);

    gp_arena_init(&a);
    study(CLUSTER_HEAD POOL("a100", "2", "10", "") POOL(
              "strict", "2", "10",
              "    sharing: {mode: timeslice, replicas: 2, failRequestsGreaterThanOne: true}\n"),
          ORDINARY("4", "2"), 0, &a, &s);
    /* 2 replicas each, one of each GPU: x4 holds the 8 on 1 node at a
     * quarter speed, x2 on 2 nodes at half speed - the same work, less
     * slowdown: x2 */
    x = find(&s, "a100", GP_SHARE_TIMESLICE);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 2);
    assert_int_equal(x->replicas, 2);
    assert_true(near(x->slowdown_max, 2));
    x = find(&s, "strict", GP_SHARE_TIMESLICE);
    assert_false(x->feasible);
    assert_true(x->fail_requests_greater_than_one);
    assert_non_null(strstr(x->why, "failRequestsGreaterThanOne"));
    x = find(&s, "a100", GP_SHARE_MPS); /* the plugin always fails them under MPS */
    assert_false(x->feasible);
    assert_non_null(strstr(x->why, "always under MPS"));
    gp_arena_free(&a);
}

/* A stream of 20 Jobs, one every 30 min, each running 3 h on one GPU, is
 * sized by the most that run at once (6, from the 6th submission on), not
 * by what is submitted (20) nor by one Job's parallelism (1): 3 nodes of 2
 * GPUs. Up to a horizon of 1 h only 2 are submitted: 1 node. */
static void test_stream_by_peak(void **state)
{
    (void)state;
    static const char *wl = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
                            "  annotations: {sim.gpuplane.io/repeat: \"20\", "
                            "sim.gpuplane.io/interarrival: 30m, sim.gpuplane.io/duration: 3h}\n"
                            "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n"
                            "        resources: {limits: {nvidia.com/gpu: 1}}\n";
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study s;
    study(CLUSTER_HEAD POOL("a100", "2", "10", ""), wl, 0, &a, &s);
    assert_int_equal(s.runs, 20);
    assert_int_equal(s.peak_pods, 6);
    assert_true(near(s.peak_t_s, 5 * 1800)); /* the 6th starts at 2.5 h; the 1st ends at 3 h */
    const struct gp_study_option *x = find(&s, "a100", GP_SHARE_EXCLUSIVE);
    assert_int_equal(x->nodes, 3);
    assert_int_equal(x->pods, 6);
    gp_arena_free(&a);

    gp_arena_init(&a);
    study(CLUSTER_HEAD POOL("a100", "2", "10", ""), wl, 3600, &a, &s);
    assert_int_equal(s.runs, 2);
    assert_int_equal(find(&s, "a100", GP_SHARE_EXCLUSIVE)->nodes, 1);
    gp_arena_free(&a);
}

/* A pod with a node selector that only one pool matches is sized on that
 * pool for every option of the others, and its nodes are part of their
 * cost: 4 services of 1 GPU go anywhere; training pods of 2 GPUs (2 at
 * once) select the h100 pool (4 GPUs a node, $20). a100 exclusive: 2 nodes
 * ($20) for the services, plus 1 h100 node ($20) for the training. */
static void test_selector_sizes_elsewhere(void **state)
{
    (void)state;
    static const char *wl =
        ORDINARY("4", "1") "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n"
                           "  annotations: {sim.gpuplane.io/repeat: \"2\", "
                           "sim.gpuplane.io/interarrival: 10m, sim.gpuplane.io/duration: 2h}\n"
                           "spec:\n  template:\n    spec:\n"
                           "      nodeSelector: {gpuplane.io/pool: h100}\n"
                           "      containers:\n      - name: c\n"
                           "        resources: {limits: {nvidia.com/gpu: 2}}\n";
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study s;
    study(CLUSTER_HEAD POOL("a100", "2", "10", "") POOL("h100", "4", "20", ""), wl, 0, &a, &s);
    const struct gp_study_option *x = find(&s, "a100", GP_SHARE_EXCLUSIVE);
    assert_true(x->feasible);
    assert_int_equal(x->nodes, 2);
    assert_true(near(x->pool_usd_per_hour, 20));
    assert_int_equal(x->nforced, 1);
    assert_string_equal(x->forced[0].pool, "h100");
    assert_int_equal(x->forced[0].nodes, 1);
    assert_int_equal(x->forced[0].pods, 2);
    assert_true(near(x->usd_per_hour, 40));
    assert_int_equal(x->pods, 6);
    /* on h100 everything fits: 4 + 2 x 2 = 8 GPUs, 2 nodes, nothing forced */
    x = find(&s, "h100", GP_SHARE_EXCLUSIVE);
    assert_int_equal(x->nodes, 2);
    assert_int_equal(x->nforced, 0);
    assert_true(near(x->usd_per_hour, 40));
    assert_int_equal(s.nconstraints, 1);
    assert_string_equal(s.constraints[0].item, "train");
    assert_string_equal(s.constraints[0].pools, "h100");
    assert_int_equal(s.constraints[0].peak_pods, 2);
    assert_non_null(strstr(s.constraints[0].refused, "a100: node(s) didn't match node selector"));
    gp_arena_free(&a);
}

/* The cost of the work ranks the options, not the rent: 8 pods that want a
 * whole GPU each, on 2-GPU nodes at $10. Exclusive: 4 nodes, $40, nothing
 * slows. Time-slicing x4 rents one node ($10) but runs 4 pods a GPU at a
 * quarter speed: an hour of the work of 8 pods costs 10 x 8 / 2 = $40, as
 * with x2 (2 nodes, half speed); the same work, so the one that slows its
 * pods less is kept (x2), and exclusive is the cheapest for the work. */
static void test_work_ranks(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study s;
    study(CLUSTER_HEAD POOL("a100", "2", "10", ""), ORDINARY("8", "1"), 0, &a, &s);
    const struct gp_study_option *ex = find(&s, "a100", GP_SHARE_EXCLUSIVE),
                                 *ts = find(&s, "a100", GP_SHARE_TIMESLICE);
    assert_int_equal(ex->nodes, 4);
    assert_true(near(ex->work_usd_per_hour, 40));
    assert_int_equal(ts->replicas, 2);
    assert_int_equal(ts->nodes, 2);
    assert_true(near(ts->slowdown_mean, 2));
    assert_true(near(ts->work_usd_per_hour, 40));
    assert_true(s.cheapest >= 0);
    assert_int_equal(s.options[s.cheapest].mode, GP_SHARE_EXCLUSIVE);
    gp_arena_free(&a);
}

/* The timeline is the simulator's: a replay of a stream of Jobs with
 * random arrivals and durations on a cluster where none waits gives the
 * same completion times as the runs of gp_sim_timeline. */
static void test_timeline_is_the_simulators(void **state)
{
    (void)state;
    static const char *wl = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
                            "  annotations: {sim.gpuplane.io/repeat: \"50\", "
                            "sim.gpuplane.io/interarrival: exp(10m), "
                            "sim.gpuplane.io/duration: \"lognormal(20m,0.5)\"}\n"
                            "spec:\n  completions: 3\n  parallelism: 2\n  template:\n    spec:\n"
                            "      containers:\n      - name: c\n"
                            "        resources: {limits: {nvidia.com/gpu: 1}}\n";
    const char *cl = CLUSTER_HEAD "  - name: big\n    gpu: {model: A100-80GB, count: 8, memory: "
                                  "80Gi}\n    cpu: \"640\"\n    memory: 5120Gi\n    count: 40\n";
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_diag d = {0};
    struct gp_cluster c;
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    assert_int_equal(gp_cluster_parse_yaml(cl, strlen(cl), "c.yaml", &a, &c, &d), GP_OK);
    assert_int_equal(gp_cluster_expand(&c, &a, &d), GP_OK);
    enum gp_err err = gp_workload_parse_manifest(wl, strlen(wl), "w.yaml", &a, &w, &d);
    if (err != GP_OK)
        print_message("%s\n", d.msg);
    assert_int_equal(err, GP_OK);
    assert_int_equal(gp_workload_finish(&w, &a, &d), GP_OK);
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.seed = 7;
    struct gp_sim_result r;
    assert_int_equal(gp_sim_run(&cfg, &c, &w, &a, &r, &d), GP_OK);
    struct gp_sim_span *spans;
    size_t n;
    assert_int_equal(gp_sim_timeline(&w, 7, 0, &a, &spans, &n, &d), GP_OK);
    assert_int_equal(n, 150); /* 50 Jobs of 3 pods */
    assert_int_equal(r.pods_completed, 150);
    /* a Job ends when its last pod does; its 3 runs come together */
    double end[50] = {0}, start[50] = {0}, sum = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        size_t job = i / 3;
        if (i % 3 == 0)
            start[job] = spans[i].start_s;
        if (spans[i].end_s > end[job])
            end[job] = spans[i].end_s;
    }
    for (size_t j = 0; j < 50; j++) {
        sum += end[j] - start[j];
        last = end[j] > last ? end[j] : last;
    }
    assert_int_equal(r.jobs_completed, 50);
    assert_true(fabs(r.jct_s.mean - sum / 50) < 0.01);
    assert_true(fabs(r.sim_end_s - last) < 0.01);
    gp_arena_free(&a);
}

/* A pool of one-H100 nodes at $7 an hour, for the latency cases. */
static const char *one_gpu_yaml =
    "apiVersion: gpuplane.io/v1\n"
    "kind: Cluster\n"
    "metadata: {name: t}\n"
    "spec:\n"
    "  nodePools:\n"
    "  - {name: h100, gpu: {model: H100-80GB, count: 1, memory: 80Gi},"
    " cpu: \"32\", memory: 256Gi, count: 1, pricePerHour: 7}\n";

/* Five quarter-GPU models of 10 GiB, 100 rps alone, 50 offered, p99 within
 * 100 ms (the case of docs/serve.md, "Dense packing"). */
static void five_models(char *buf, size_t n)
{
    size_t len = 0;
    for (int i = 1; i <= 5; i++)
        len += (size_t)snprintf(
            buf + len, n - len,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m%d}\nspec:\n"
            "  replicas: 1\n  template:\n    metadata:\n      annotations: "
            "{gpuplane.io/gpu-milli: \"250\", gpuplane.io/gpu-memory: 10Gi}\n    spec:\n"
            "      containers:\n      - {name: m, image: m, resources: {requests: {cpu: \"1\", "
            "memory: 4Gi}}}\n---\napiVersion: gpuplane.io/v1\nkind: InferenceService\n"
            "metadata: {name: m%d}\nspec: {deployment: m%d, requestsPerSecond: 100, load: "
            "{constant: 50}, latencyLimit: 100ms}\n---\n",
            i, i, i);
}

static const struct gp_study_option *find_setting(const struct gp_study *s, enum gp_share_mode mode,
                                                  bool meets)
{
    for (size_t i = 0; i < s->noptions; i++)
        if (s->options[i].mode == mode && s->options[i].feasible &&
            s->options[i].meets_limits == meets)
            return &s->options[i];
    return NULL;
}

static void test_latency_decides(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study s;
    char wl[8192];
    five_models(wl, sizeof wl);
    study(one_gpu_yaml, wl, 0, &a, &s);
    assert_int_equal(s.nlimited, 5);
    /* time-slicing x6 (or more) holds all five on one GPU: demands 1250, each
     * at 0.8 (mu 80): M/M/1 at 50 rps, p99 ln(100) / (80 - 50) = 0.1535 s
     * > 0.1 s. By fit alone it is the cheapest work, 7 x 5 / 4 = $8.75 */
    const struct gp_study_option *miss = find_setting(&s, GP_SHARE_TIMESLICE, false);
    assert_non_null(miss);
    assert_int_equal(miss->nodes, 1);
    assert_int_equal(miss->replicas, 6);
    assert_true(near(miss->work_usd_per_hour, 8.75));
    assert_int_equal(miss->nlatency, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_false(miss->latency[i].within);
        assert_int_equal(miss->latency[i].replicas, 1);
        assert_true(fabs(miss->latency[i].speed - 0.8) < 1e-12);
        assert_true(fabs(miss->latency[i].p99_s - log(100) / 30) < 1e-9);
    }
    /* x4 holds four per GPU (demand 1000: full speed, p99 ln(100) / 50 =
     * 92 ms): 2 nodes, $14; it is the setting shown, and the cheapest that
     * meets every limit (ties with MPS x3 and MIG at $14: the first) */
    const struct gp_study_option *ok = find_setting(&s, GP_SHARE_TIMESLICE, true);
    assert_non_null(ok);
    assert_int_equal(ok->replicas, 4);
    assert_int_equal(ok->nodes, 2);
    assert_true(fabs(ok->latency[0].p99_s - log(100) / 50) < 1e-9);
    assert_true(ok < miss); /* the chosen setting's row first */
    assert_true(s.cheapest >= 0);
    assert_ptr_equal(&s.options[s.cheapest], ok);
    assert_int_equal(s.cheapest_fit, (int)(miss - s.options));
    /* MIG: 250 milli of 10 GiB is a 2g.20gb (2 of 7 slices): full speed */
    const struct gp_study_option *mig = find(&s, "h100", GP_SHARE_MIG);
    assert_true(mig->meets_limits);
    assert_true(fabs(mig->latency[0].p99_s - log(100) / 50) < 1e-9);
    gp_arena_free(&a);
}

/* An LLM replica with round figures (test_serve_pack.c): ITL 10 ms, TTFT
 * 0.1 + 0.01 N s for 100 tokens in, 10 out; 30 GiB, no compute share (a
 * whole GPU's worth); 10 rps at peak, TTFT p99 within 200 ms. */
static const char *llm_yaml =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: chat}\nspec:\n  replicas: 1\n"
    "  template:\n    metadata:\n      annotations: {gpuplane.io/gpu-memory: 30Gi}\n    spec:\n"
    "      containers:\n      - {name: m, image: m, resources: {requests: {cpu: \"1\", memory: "
    "4Gi}}}\n---\napiVersion: gpuplane.io/v1\nkind: InferenceService\nmetadata: {name: chat}\n"
    "spec:\n  deployment: chat\n  llm: {itlBaseSeconds: 0.01, itlPerBatchSeconds: 0, "
    "ttftBaseSeconds: 0.1, ttftPerTokenSeconds: 0.0001, maxBatch: 64, inputTokens: 100, "
    "outputTokens: 10}\n  load: {constant: 10}\n  latencyLimit: 200ms\n";

static void test_llm_mps_fits_but_misses_ttft(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_study s;
    study(one_gpu_yaml, llm_yaml, 0, &a, &s);
    assert_int_equal(s.nlimited, 1);
    /* exclusive: N = 10 x 0.2 / 0.9 = 20/9, TTFT 0.1 + 0.01 x 20/9 = 0.1222 s */
    const struct gp_study_option *x = find(&s, "h100", GP_SHARE_EXCLUSIVE);
    assert_true(x->meets_limits);
    assert_true(x->latency[0].llm);
    assert_true(fabs(x->latency[0].p99_s - (0.1 + 0.2 / 9)) < 1e-9);
    /* MPS x2: its 30 GiB fit the client's 40 GiB (x3's 26.7 GiB do not),
     * but half the SMs for a whole GPU's demand run it at 0.5: as a
     * full-speed replica offered 20 rps, N = 20 x 0.2 / 0.8 = 5, TTFT
     * (0.1 + 0.05) / 0.5 = 0.30 s > 0.2 s; its KV cache is 40 of 80 GiB */
    x = find(&s, "h100", GP_SHARE_MPS);
    assert_true(x->feasible);
    assert_int_equal(x->replicas, 2);
    assert_false(x->meets_limits);
    assert_true(fabs(x->latency[0].speed - 0.5) < 1e-12);
    assert_true(fabs(x->latency[0].mem_frac - 0.5) < 1e-12);
    assert_true(fabs(x->latency[0].p99_s - 0.30) < 1e-9);
    assert_true(fabs(x->latency[0].itl_s - 0.02) < 1e-12);
    /* MIG: 30 GiB is a 3g.40gb, 3 of 7 slices: speed 3/7, offered 70/3 rps,
     * N = (70/3) x 0.2 / (1 - 0.7/3) = 6.087, TTFT (0.1 + 0.06087) x 7/3 =
     * 0.3754 s: missed as well */
    x = find(&s, "h100", GP_SHARE_MIG);
    assert_true(x->feasible);
    assert_false(x->meets_limits);
    double n = (70.0 / 3) * 0.2 / (1 - 0.7 / 3);
    assert_true(fabs(x->latency[0].p99_s - (0.1 + 0.01 * n) * 7 / 3) < 1e-9);
    /* the recommendation meets the limit: exclusive or time-slicing alone */
    assert_true(s.cheapest >= 0);
    assert_true(s.options[s.cheapest].meets_limits);
    assert_int_not_equal(s.options[s.cheapest].mode, GP_SHARE_MPS);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_sized),
        cmocka_unit_test(test_example),
        cmocka_unit_test(test_ordinary_manifests),
        cmocka_unit_test(test_stream_by_peak),
        cmocka_unit_test(test_selector_sizes_elsewhere),
        cmocka_unit_test(test_work_ranks),
        cmocka_unit_test(test_timeline_is_the_simulators),
        cmocka_unit_test(test_latency_decides),
        cmocka_unit_test(test_llm_mps_fits_but_misses_ttft),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
