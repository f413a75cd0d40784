/* test_sim.c - the simulator: hand-worked timed scenarios (queueing, exact
 * time integrals, samples, unschedulable counts), retry back-off and its
 * limit, Jobs, Deployments, the horizon rules, determinism, the static
 * packing experiment on a cluster small enough to check by hand, input
 * errors, and a property test over a few hundred random small runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "sim/metrics.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/rng.h"

#define HOUR 3600.0

static void near_(double got, double want, double eps, const char *what, int line)
{
    if (!(fabs(got - want) <= eps)) {
        print_error("line %d: %s = %.9g, expected %.9g (+/- %g)\n", line, what, got, want, eps);
        fail();
    }
}
#define assert_near(got, want, eps) near_((got), (want), (eps), #got, __LINE__)

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

static struct gp_item pod_item(const char *name, uint32_t gpus, uint32_t milli, double dur_s)
{
    struct gp_item it = {0};
    it.name = name;
    it.source = "test";
    it.kind = GP_ITEM_POD;
    it.pod.name = name;
    it.pod.cpu_milli = 1000;
    it.pod.mem_mib = 1024;
    it.pod.gpu_count = gpus;
    it.pod.gpu_milli = gpus ? milli : 0;
    it.repeat = 1;
    if (dur_s >= 0) {
        it.has_duration = true;
        it.duration.kind = GP_DIST_FIXED;
        it.duration.a = dur_s;
    }
    return it;
}

static struct gp_sim_config config(enum gp_sim_mode mode)
{
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    c.mode = mode;
    c.policy = NULL; /* first feasible node: these tests are about the simulator */
    return c;
}

static enum gp_err run(const struct gp_sim_config *c, struct gp_node_spec *nodes, size_t nnodes,
                       struct gp_item *items, size_t nitems, struct gp_arena *a,
                       struct gp_sim_result *out)
{
    struct gp_cluster cl = {
        .name = "test", .source = "test-cluster", .nodes = nodes, .nnodes = nnodes};
    struct gp_workload w = {.items = items, .nitems = nitems, .cap = nitems};
    struct gp_diag d = {{0}};
    enum gp_err err = gp_sim_run(c, &cl, &w, a, out, &d);
    if (err != GP_OK)
        print_message("gp_sim_run: %s\n", d.msg);
    return err;
}

static void check_accounting(const struct gp_sim_result *r)
{
    assert_int_equal(r->pods_submitted, r->pods_completed + r->pods_failed + r->pods_pending_end +
                                            r->pods_running_end);
    assert_true(r->pods_scheduled <= r->pods_submitted);
    assert_true(r->pods_completed <= r->pods_scheduled);
    assert_true(r->pods_running_end <= r->pods_scheduled);
    assert_true(r->binds >= r->pods_scheduled);
    assert_true(r->binds <= r->pods_submitted + r->pod_retries);
    if (r->mode == GP_SIM_TIMED)
        assert_int_equal(r->nqueue_delays, r->binds);
}

/* 1 node with 2 GPUs at $2/h; three 1-GPU pods of 1 h and one 4-GPU pod
 * arrive at 0. A and B run 0-1 h, C waits and runs 1-2 h; D never fits. */
static void test_timed_by_hand(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 2, 2.0)};
    struct gp_item it[] = {pod_item("a", 1, 1000, HOUR), pod_item("b", 1, 1000, HOUR),
                           pod_item("c", 1, 1000, HOUR), pod_item("d", 4, 1000, HOUR)};
    struct gp_sim_config c = config(GP_SIM_TIMED);
    c.sample_s = 1800;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 4, &a, &r), GP_OK);

    assert_near(r.sim_end_s, 2 * HOUR, 0);
    assert_int_equal(r.pods_submitted, 4);
    assert_int_equal(r.pods_scheduled, 3);
    assert_int_equal(r.pods_completed, 3);
    assert_int_equal(r.pods_failed, 0);
    assert_int_equal(r.pods_pending_end, 1);
    assert_int_equal(r.pods_running_end, 0);
    assert_int_equal(r.binds, 3);
    assert_int_equal(r.pod_retries, 0);
    check_accounting(&r);

    assert_int_equal(r.nqueue_delays, 3);
    assert_near(r.queue_delays_s[0], 0, 0);
    assert_near(r.queue_delays_s[1], 0, 0);
    assert_near(r.queue_delays_s[2], HOUR, 0);
    assert_near(r.queue_delay_s.mean, 1200, 1e-9);
    assert_near(r.queue_delay_s.p50, 0, 0); /* nearest rank: 2nd of 3 */
    assert_near(r.queue_delay_s.p95, HOUR, 0);
    assert_near(r.queue_delay_s.p99, HOUR, 0);
    assert_near(r.queue_delay_s.max, HOUR, 0);

    assert_near(r.node_hours, 2, 1e-12);
    assert_near(r.gpu_hours_total, 4, 1e-12);
    assert_near(r.gpu_hours_allocated, 3, 1e-12);
    assert_near(r.gpu_hours_idle, 1, 1e-12);
    assert_near(r.cost_usd, 4, 1e-12);
    assert_int_equal(r.nodes, 1);
    assert_int_equal(r.gpus, 2);

    /* C was unschedulable once at 0 (it fits at 1 h); D is tried again at
     * 1 h and 2 h, when GPUs are released, but counts once */
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        assert_int_equal(r.unschedulable[f], f == GP_FILTER_GPU_COUNT ? 2 : 0);

    /* samples at 0, 30, 60, 90, 120 min */
    assert_int_equal(r.nsamples, 5);
    const double gpu[] = {100, 100, 50, 50, 0};
    const uint32_t pending[] = {2, 2, 1, 1, 1}, running[] = {2, 2, 1, 1, 0};
    for (size_t i = 0; i < 5; i++) {
        assert_near(r.samples[i].t_s, 1800.0 * (double)i, 0);
        assert_near(r.samples[i].gpu_alloc_pct, gpu[i], 1e-9);
        assert_int_equal(r.samples[i].pending, pending[i]);
        assert_int_equal(r.samples[i].running, running[i]);
        assert_int_equal(r.samples[i].nodes, 1);
        assert_near(r.samples[i].cpu_alloc_pct, 100.0 * running[i] * 1000 / 64000, 1e-9);
    }
    gp_arena_free(&a);
}

/* The automatic sample interval: end / 288, at least 1 s. */
static void test_auto_samples(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_item it[] = {pod_item("a", 1, 1000, 2 * 288.0 * 10)}; /* 5760 s */
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.nsamples, 289);
    assert_near(r.samples[1].t_s, 20, 0);
    assert_near(r.samples[288].t_s, 5760, 0);
    assert_near(r.samples[287].gpu_alloc_pct, 100, 0);
    assert_near(r.samples[288].gpu_alloc_pct, 0, 0);
    assert_near(r.cost_usd, 0, 0); /* no price known */

    it[0].duration.a = 10; /* a short run: 1 s samples */
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.nsamples, 11);
    gp_arena_free(&a);
}

/* A Pod that always fails, with 2 retries: 3 runs, the item fails. The
 * node is idle exactly during the back-offs, 10 s then 20 s. */
static void test_backoff_and_limit(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_item it[] = {pod_item("flaky", 1, 1000, 100)};
    it[0].failure_prob = 1;
    it[0].backoff_limit = 2;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 1);
    assert_int_equal(r.pods_scheduled, 1);
    assert_int_equal(r.binds, 3);
    assert_int_equal(r.pod_retries, 2);
    assert_int_equal(r.pods_failed, 1);
    assert_int_equal(r.pods_completed, 0);
    check_accounting(&r);
    double busy_s = r.gpu_hours_allocated * HOUR;
    assert_true(busy_s < 300); /* each run fails inside its 100 s */
    assert_near(r.sim_end_s - busy_s, 10 + 20, 1e-6);
    for (size_t i = 0; i < r.nqueue_delays; i++)
        assert_near(r.queue_delays_s[i], 0, 0); /* delays count from the resubmission */

    /* base 10, cap 25, 5 retries: gaps 10, 20, 25, 25, 25 */
    it[0].backoff_limit = 5;
    c.backoff_max_s = 25;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.binds, 6);
    assert_int_equal(r.pods_failed, 1);
    assert_near(r.sim_end_s - r.gpu_hours_allocated * HOUR, 105, 1e-6);

    /* no retries (the Pod default): one run, failed */
    it[0].backoff_limit = 0;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.binds, 1);
    assert_int_equal(r.pod_retries, 0);
    assert_int_equal(r.pods_failed, 1);

    /* never fails: completes at 100 s */
    it[0].failure_prob = 0;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.pods_completed, 1);
    assert_near(r.sim_end_s, 100, 0);
    gp_arena_free(&a);
}

/* A Job of 5 completions, 2 at a time, 100 s each, on 4 GPUs:
 * 2 run 0-100, 2 run 100-200, 1 runs 200-300. */
static void test_job_parallelism(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4, 0)};
    struct gp_item it[] = {pod_item("job", 1, 1000, 100)};
    it[0].kind = GP_ITEM_JOB;
    it[0].completions = 5;
    it[0].parallelism = 2;
    it[0].backoff_limit = 6;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    c.sample_s = 50;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_near(r.sim_end_s, 300, 0);
    assert_int_equal(r.pods_submitted, 5);
    assert_int_equal(r.pods_completed, 5);
    assert_int_equal(r.binds, 5);
    check_accounting(&r);
    assert_near(r.gpu_hours_allocated * HOUR, 500, 1e-9);
    const uint32_t running[] = {2, 2, 2, 2, 1, 1, 0};
    assert_int_equal(r.nsamples, 7);
    for (size_t i = 0; i < r.nsamples; i++) {
        assert_int_equal(r.samples[i].running, running[i]);
        assert_int_equal(r.samples[i].pending, 0);
    }
    gp_arena_free(&a);
}

/* A Job whose pods always fail: the second failure exceeds backoffLimit 1,
 * the Job fails and its 3 pods count as failed; nothing stays allocated. */
static void test_job_fails(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4, 0)};
    struct gp_item it[] = {pod_item("job", 1, 1000, 100)};
    it[0].kind = GP_ITEM_JOB;
    it[0].completions = 3;
    it[0].parallelism = 3;
    it[0].backoff_limit = 1;
    it[0].failure_prob = 1;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 3);
    assert_int_equal(r.pods_failed, 3);
    assert_int_equal(r.pods_completed, 0);
    assert_int_equal(r.pods_running_end, 0);
    assert_int_equal(r.pods_pending_end, 0);
    check_accounting(&r);
    assert_true(r.sim_end_s < 100);
    assert_near(r.samples[r.nsamples - 1].gpu_alloc_pct, 0, 0);
    gp_arena_free(&a);
}

/* Deployments run to the end: the horizon, or 24 h when only endless
 * items exist, or the last event of the finite items. */
static void test_deployment_runs_to_end(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4, 1.0)};
    struct gp_item it[] = {pod_item("web", 1, 1000, -1), pod_item("batch", 1, 1000, 100)};
    it[0].kind = GP_ITEM_DEPLOYMENT;
    it[0].replicas = 2;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    c.horizon_s = HOUR;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_near(r.sim_end_s, HOUR, 0);
    assert_int_equal(r.pods_submitted, 2);
    assert_int_equal(r.pods_running_end, 2);
    assert_int_equal(r.pods_completed, 0);
    check_accounting(&r);
    assert_near(r.gpu_hours_allocated, 2, 1e-12);
    assert_near(r.cost_usd, 1, 1e-12);

    c.horizon_s = 0; /* only Deployments: 24 h */
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_near(r.sim_end_s, 86400, 0);
    assert_near(r.gpu_hours_allocated, 48, 1e-9);

    /* with a finite Pod: stops at its end */
    assert_int_equal(run(&c, n, 1, it, 2, &a, &r), GP_OK);
    assert_near(r.sim_end_s, 100, 0);
    assert_int_equal(r.pods_completed, 1);
    assert_int_equal(r.pods_running_end, 2);
    check_accounting(&r);

    /* a failing replica is replaced after the back-off, without limit */
    it[0].replicas = 1;
    it[0].has_duration = true;
    it[0].duration.kind = GP_DIST_FIXED;
    it[0].duration.a = 600;
    it[0].failure_prob = 1;
    c.horizon_s = HOUR;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 1);
    assert_int_equal(r.pods_failed, 0);
    /* runs last < 600 s, back-offs 10, 20, 40, 80, 160 s: 5 failures by 3310 s */
    assert_true(r.pod_retries >= 5);
    assert_int_equal(r.binds, r.pod_retries + 1); /* each attempt binds at once */
    check_accounting(&r);
    gp_arena_free(&a);
}

/* Items arriving later than the last event, repeats with interarrival. */
static void test_repeat_and_arrival(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_item it[] = {pod_item("s", 1, 1000, 10)};
    it[0].arrival_s = 1000;
    it[0].repeat = 4;
    it[0].interarrival.kind = GP_DIST_FIXED;
    it[0].interarrival.a = 5; /* arrivals at 1000, 1005, 1010, 1015 */
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 4);
    assert_int_equal(r.pods_completed, 4);
    /* runs 1000-1010, 1010-1020, 1020-1030, 1030-1040 */
    assert_near(r.sim_end_s, 1040, 0);
    assert_near(r.queue_delays_s[0], 0, 0);
    assert_near(r.queue_delays_s[1], 5, 0);
    assert_near(r.queue_delays_s[2], 10, 0);
    assert_near(r.queue_delays_s[3], 15, 0);
    gp_arena_free(&a);
}

/* A random workload that uses every source of randomness. */
static void random_workload(struct gp_item *it, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        it[i] = pod_item("r", 1 + (uint32_t)(i % 2), 1000, 0);
        if (i % 3 == 0) {
            it[i].pod.gpu_count = 1;
            it[i].pod.gpu_milli = 300;
        }
        it[i].duration.kind = GP_DIST_EXP;
        it[i].duration.a = 600;
        it[i].repeat = 10;
        it[i].interarrival.kind = GP_DIST_EXP;
        it[i].interarrival.a = 120;
        it[i].arrival_s = 30.0 * (double)i;
        it[i].failure_prob = 0.2;
        it[i].backoff_limit = 2;
        if (i % 4 == 1) {
            it[i].kind = GP_ITEM_JOB;
            it[i].completions = 4;
            it[i].parallelism = 2;
        }
    }
}

static bool same_result(const struct gp_sim_result *x, const struct gp_sim_result *y)
{
    if (x->sim_end_s != y->sim_end_s || x->pods_submitted != y->pods_submitted ||
        x->pods_scheduled != y->pods_scheduled || x->pods_completed != y->pods_completed ||
        x->pods_failed != y->pods_failed || x->pods_pending_end != y->pods_pending_end ||
        x->pods_running_end != y->pods_running_end || x->pod_retries != y->pod_retries ||
        x->binds != y->binds || x->node_hours != y->node_hours ||
        x->gpu_hours_allocated != y->gpu_hours_allocated || x->cost_usd != y->cost_usd ||
        x->nqueue_delays != y->nqueue_delays || x->nsamples != y->nsamples ||
        x->ncurve != y->ncurve || x->unallocated_gpu_pct_at_100 != y->unallocated_gpu_pct_at_100)
        return false;
    if (memcmp(x->unschedulable, y->unschedulable, sizeof x->unschedulable) != 0)
        return false;
    if (x->nqueue_delays &&
        memcmp(x->queue_delays_s, y->queue_delays_s, x->nqueue_delays * sizeof(double)) != 0)
        return false;
    for (size_t i = 0; i < x->nsamples; i++) {
        const struct gp_sim_sample *a = &x->samples[i], *b = &y->samples[i];
        if (a->t_s != b->t_s || a->gpu_alloc_pct != b->gpu_alloc_pct ||
            a->cpu_alloc_pct != b->cpu_alloc_pct || a->mem_alloc_pct != b->mem_alloc_pct ||
            a->pending != b->pending || a->running != b->running || a->nodes != b->nodes)
            return false;
    }
    for (size_t i = 0; i < x->ncurve; i++)
        if (x->curve[i].arrived_pct != y->curve[i].arrived_pct ||
            x->curve[i].unallocated_pct != y->curve[i].unallocated_pct)
            return false;
    return true;
}

static void test_determinism(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4, 3.0), node("n1", 2, 1.5), node("n2", 8, 6.0)};
    struct gp_item it[12];
    random_workload(it, 12);
    struct gp_sim_config c = config(GP_SIM_TIMED);
    c.policy = gp_policy_find("random");
    if (!c.policy)
        c.policy = gp_policies[0];
    c.seed = 7;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r1, r2, r3;
    assert_int_equal(run(&c, n, 3, it, 12, &a, &r1), GP_OK);
    assert_int_equal(run(&c, n, 3, it, 12, &a, &r2), GP_OK);
    assert_true(same_result(&r1, &r2));
    check_accounting(&r1);
    assert_true(r1.pod_retries > 0);
    c.seed = 8;
    assert_int_equal(run(&c, n, 3, it, 12, &a, &r3), GP_OK);
    assert_false(same_result(&r1, &r3));
    assert_true(r1.sim_end_s != r3.sim_end_s);
    gp_arena_free(&a);
}

/* Durations are drawn per pod, not in event order: on a cluster too big to
 * queue, two policies place pods differently but every pod runs as long,
 * so the allocated GPU-hours agree exactly. */
static void test_durations_independent_of_policy(void **state)
{
    (void)state;
    const struct gp_policy_ops *p1 = gp_policy_find("best-fit"), *p2 = gp_policy_find("spread");
    assert_non_null(p1);
    assert_non_null(p2);
    struct gp_node_spec n[32];
    for (int i = 0; i < 32; i++)
        n[i] = node("n", 8, 1.0);
    struct gp_item it[12];
    random_workload(it, 12);
    for (int i = 0; i < 12; i++)
        it[i].failure_prob = 0;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r1, r2;
    c.policy = p1;
    assert_int_equal(run(&c, n, 32, it, 12, &a, &r1), GP_OK);
    c.policy = p2;
    assert_int_equal(run(&c, n, 32, it, 12, &a, &r2), GP_OK);
    assert_near(r1.queue_delay_s.max, 0, 0);
    assert_near(r2.queue_delay_s.max, 0, 0);
    assert_true(r1.gpu_hours_allocated == r2.gpu_hours_allocated);
    assert_true(r1.sim_end_s == r2.sim_end_s);
    gp_arena_free(&a);
}

/* Static: 2 nodes x 1 GPU, three 600-milli shares (90 % of capacity).
 * Inflate 1.0: the next resampled pod would cross 100 %, so none is added.
 * Pod 1 and 2 take one GPU each, pod 3 fits nowhere. */
static void test_static_by_hand(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0), node("n1", 1, 0)};
    struct gp_item it[] = {pod_item("p", 1, 600, -1), pod_item("q", 1, 600, -1),
                           pod_item("r", 1, 600, -1)};
    struct gp_sim_config c = config(GP_SIM_STATIC);
    c.inflate = 1.0;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 2, it, 3, &a, &r), GP_OK);
    assert_int_equal(r.mode, GP_SIM_STATIC);
    assert_int_equal(r.pods_submitted, 3);
    assert_int_equal(r.pods_scheduled, 2);
    assert_int_equal(r.pods_failed, 1);
    assert_int_equal(r.pods_running_end, 2);
    check_accounting(&r);
    assert_int_equal(r.nsamples, 0);
    assert_int_equal(r.unschedulable[GP_FILTER_GPU_SHARE], 1); /* one pod, main reason */
    assert_int_equal(r.ncurve, 101);
    for (size_t x = 0; x <= 100; x++) {
        double want = x == 0 ? 100 : x <= 30 ? 70 : 40;
        assert_near(r.curve[x].arrived_pct, (double)x, 0);
        assert_near(r.curve[x].unallocated_pct, want, 1e-9);
    }
    assert_near(r.unallocated_gpu_pct_at_100, 40, 1e-9); /* never reached: final */
    gp_arena_free(&a);
}

/* Static: 2 nodes x 2 GPUs, four 1-GPU pods (100 %). Inflate 1.5 appends
 * two more (150 % exactly, which is included); 1.3 appends one (the next
 * would cross 130 %); 0.5 keeps two. */
static void test_static_inflate(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 2, 0), node("n1", 2, 0)};
    struct gp_item it[] = {pod_item("a", 1, 1000, -1), pod_item("b", 1, 1000, -1),
                           pod_item("c", 1, 1000, -1), pod_item("d", 1, 1000, -1)};
    struct gp_sim_config c = config(GP_SIM_STATIC);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    c.inflate = 1.5;
    assert_int_equal(run(&c, n, 2, it, 4, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 6);
    assert_int_equal(r.pods_scheduled, 4);
    assert_int_equal(r.pods_failed, 2);
    assert_int_equal(r.unschedulable[GP_FILTER_GPU_COUNT], 2); /* 2 pods, main reason */
    assert_int_equal(r.ncurve, 151);
    for (size_t x = 0; x <= 150; x++) {
        double want = x == 0 ? 100 : x >= 76 ? 0 : 100 - 25 * ceil((double)x / 25);
        assert_near(r.curve[x].unallocated_pct, want, 1e-9);
    }
    assert_near(r.unallocated_gpu_pct_at_100, 0, 0);
    c.inflate = 1.3;
    assert_int_equal(run(&c, n, 2, it, 4, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 5);
    assert_int_equal(r.ncurve, 131);
    c.inflate = 0.5;
    assert_int_equal(run(&c, n, 2, it, 4, &a, &r), GP_OK);
    assert_int_equal(r.pods_submitted, 2);
    assert_near(r.unallocated_gpu_pct_at_100, 50, 0);
    gp_arena_free(&a);
}

/* The shuffle follows the seed: a mix of shapes gives different curves. */
static void test_static_shuffle_seeded(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0), node("n1", 4, 0), node("n2", 2, 0)};
    struct gp_item it[40];
    for (size_t i = 0; i < 40; i++) {
        uint32_t g = (uint32_t)(i % 4);
        it[i] = pod_item("p", g == 3 ? 4 : 1, g == 0 ? 250 : 1000, -1);
        it[i].pod.cpu_milli = 2000 + 1000 * (int64_t)(i % 7);
    }
    struct gp_sim_config c = config(GP_SIM_STATIC);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r1, r2, r3;
    c.seed = 1;
    assert_int_equal(run(&c, n, 3, it, 40, &a, &r1), GP_OK);
    assert_int_equal(run(&c, n, 3, it, 40, &a, &r2), GP_OK);
    assert_true(same_result(&r1, &r2));
    bool differs = false;
    for (uint64_t s = 2; s < 10 && !differs; s++) {
        c.seed = s;
        assert_int_equal(run(&c, n, 3, it, 40, &a, &r3), GP_OK);
        differs = !same_result(&r1, &r3);
    }
    assert_true(differs);
    gp_arena_free(&a);
}

struct prog {
    int calls;
    double last;
    bool monotone;
};

static void on_progress(void *ctx, double f)
{
    struct prog *p = ctx;
    if (f < p->last || f < 0 || f > 1)
        p->monotone = false;
    p->last = f;
    p->calls++;
}

static void test_progress(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0)};
    struct gp_item it[300];
    for (size_t i = 0; i < 300; i++)
        it[i] = pod_item("p", 1, 100, 50);
    for (int mode = 0; mode < 2; mode++) {
        struct gp_sim_config c = config(mode ? GP_SIM_STATIC : GP_SIM_TIMED);
        struct prog p = {0, 0, true};
        c.progress = on_progress;
        c.progress_ctx = &p;
        for (size_t i = 0; i < 300; i++)
            it[i].arrival_s = (double)i;
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_sim_result r;
        assert_int_equal(run(&c, n, 1, it, 300, &a, &r), GP_OK);
        assert_true(p.calls >= 2 && p.calls <= 101);
        assert_true(p.monotone);
        assert_near(p.last, 1, 0);
        gp_arena_free(&a);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_item it[] = {pod_item("big", 20, 1000, 10)};
    it[0].source = "w.yaml:3";
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_cluster cl = {.nodes = n, .nnodes = 1};
    struct gp_workload w = {.items = it, .nitems = 1};
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {{0}};
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "w.yaml:3"));
    assert_non_null(strstr(d.msg, "20 GPUs"));

    it[0] = pod_item("share", 2, 500, 10);
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "share"));

    it[0] = pod_item("ok", 1, 1000, 10);
    it[0].failure_prob = 1.5;
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "failure probability"));

    it[0].failure_prob = 0;
    it[0].arrival_s = NAN;
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "arrival"));

    it[0].arrival_s = 0;
    c.horizon_s = -1;
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);
    c.horizon_s = 1e9;
    c.sample_s = 1;
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_ELIMIT);
    assert_non_null(strstr(d.msg, "sample interval"));

    c = config(GP_SIM_STATIC);
    c.inflate = NAN;
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);

    n[0].gpu_count = 17;
    c = config(GP_SIM_TIMED);
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "n0"));

    assert_int_equal(gp_sim_run(NULL, &cl, &w, &a, &r, &d), GP_EINVALID);
    gp_arena_free(&a);
}

/* A workload that fails and retries forever fast enough must stop with an
 * error, not hang: zero back-off and zero-length runs. */
static void test_no_hang(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_item it[] = {pod_item("crash", 1, 1000, 0)};
    it[0].kind = GP_ITEM_DEPLOYMENT;
    it[0].replicas = 1;
    it[0].failure_prob = 1;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    c.backoff_base_s = 1;
    c.backoff_max_s = 1;
    c.horizon_s = 1000;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 1, it, 1, &a, &r), GP_OK);
    /* a run of length 0 fails at once; replaced every second */
    assert_true(r.pod_retries >= 999 && r.pod_retries <= 1001);

    /* no back-off at all: the replica fails and returns at one instant,
     * forever; the run stops with an error instead of hanging */
    c.backoff_base_s = 0;
    c.backoff_max_s = 0;
    struct gp_cluster cl = {.nodes = n, .nnodes = 1};
    struct gp_workload w = {.items = it, .nitems = 1};
    struct gp_diag d = {{0}};
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_ELIMIT);
    assert_non_null(strstr(d.msg, "back-off"));
    gp_arena_free(&a);
}

static void test_percentiles(void **state)
{
    (void)state;
    double v[20];
    for (int i = 0; i < 20; i++)
        v[i] = (double)(20 - i);
    gp_sim_metrics_sort(v, 20);
    assert_near(v[0], 1, 0);
    assert_near(gp_sim_metrics_percentile(v, 20, 50), 10, 0);
    assert_near(gp_sim_metrics_percentile(v, 20, 95), 19, 0);
    assert_near(gp_sim_metrics_percentile(v, 20, 99), 20, 0);
    assert_near(gp_sim_metrics_percentile(v, 20, 5), 1, 0);
    assert_near(gp_sim_metrics_percentile(v, 1, 50), 1, 0);
    assert_near(gp_sim_metrics_percentile(v, 0, 50), 0, 0);
    struct gp_sim_stats s;
    gp_sim_metrics_stats(v, 20, &s);
    assert_near(s.mean, 10.5, 1e-12);
    assert_near(s.max, 20, 0);
}

/* Property test: random small clusters and workloads, both modes. */
static void test_property_random_runs(void **state)
{
    (void)state;
    struct gp_rng g;
    gp_rng_seed(&g, 2024);
    static const char *const models[] = {"T4", "A100", "V100"};
    for (int trial = 0; trial < 300; trial++) {
        struct gp_node_spec n[6];
        size_t nn = 1 + gp_rng_below(&g, 6);
        for (size_t i = 0; i < nn; i++) {
            n[i] = node("n", (uint32_t)gp_rng_below(&g, 9), (double)gp_rng_below(&g, 5));
            n[i].gpu_model = n[i].gpu_count ? models[gp_rng_below(&g, 3)] : NULL;
            n[i].cpu_milli = 4000 + 4000 * (int64_t)gp_rng_below(&g, 8);
            n[i].mem_mib = 8192 * (1 + (int64_t)gp_rng_below(&g, 8));
        }
        struct gp_item it[12];
        const char *allowed[12];
        size_t ni = 1 + gp_rng_below(&g, 12);
        for (size_t i = 0; i < ni; i++) {
            uint32_t shape = (uint32_t)gp_rng_below(&g, 4);
            uint32_t gpus = shape == 0 ? 0 : shape == 1 ? 1 : 1 + (uint32_t)gp_rng_below(&g, 8);
            uint32_t milli = shape == 1 ? 100 * (1 + (uint32_t)gp_rng_below(&g, 9)) : 1000;
            it[i] = pod_item("p", gpus, milli, 0);
            it[i].pod.cpu_milli = 500 * (1 + (int64_t)gp_rng_below(&g, 16));
            it[i].pod.mem_mib = 1024 * (1 + (int64_t)gp_rng_below(&g, 32));
            if (gpus && gp_rng_below(&g, 4) == 0) {
                allowed[i] = models[gp_rng_below(&g, 3)];
                it[i].pod.gpu_models = &allowed[i];
                it[i].pod.ngpu_models = 1;
            }
            it[i].kind = (enum gp_item_kind)gp_rng_below(&g, 3);
            it[i].replicas = (uint32_t)gp_rng_below(&g, 4);
            it[i].completions = (uint32_t)gp_rng_below(&g, 6);
            it[i].parallelism = (uint32_t)gp_rng_below(&g, 4);
            it[i].backoff_limit = (uint32_t)gp_rng_below(&g, 4);
            it[i].arrival_s = (double)gp_rng_below(&g, 3600);
            it[i].has_duration = gp_rng_below(&g, 8) != 0;
            it[i].duration.kind = GP_DIST_EXP;
            it[i].duration.a = 60 + (double)gp_rng_below(&g, 3600);
            it[i].repeat = 1 + (uint32_t)gp_rng_below(&g, 4);
            it[i].interarrival.kind = GP_DIST_UNIFORM;
            it[i].interarrival.a = 0;
            it[i].interarrival.b = 600;
            it[i].failure_prob = gp_rng_below(&g, 2) ? 0 : gp_rng_unit(&g) * 0.6;
        }
        bool is_static = trial % 3 == 2;
        struct gp_sim_config c = config(is_static ? GP_SIM_STATIC : GP_SIM_TIMED);
        c.policy = gp_policies[gp_rng_below(&g, 2)]; /* whichever two come first */
        c.seed = gp_rng_next(&g);
        c.horizon_s = gp_rng_below(&g, 2) ? 0 : 3600.0 * (double)(1 + gp_rng_below(&g, 12));
        c.inflate = 0.5 + gp_rng_unit(&g);
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_sim_result r1, r2;
        assert_int_equal(run(&c, n, nn, it, ni, &a, &r1), GP_OK);
        assert_int_equal(run(&c, n, nn, it, ni, &a, &r2), GP_OK);
        assert_true(same_result(&r1, &r2));
        check_accounting(&r1);
        for (size_t i = 0; i < r1.nsamples; i++) {
            assert_true(r1.samples[i].gpu_alloc_pct <= 100.0 + 1e-9);
            assert_true(r1.samples[i].cpu_alloc_pct <= 100.0 + 1e-9);
            assert_true(r1.samples[i].mem_alloc_pct <= 100.0 + 1e-9);
            assert_true(r1.samples[i].running <= r1.pods_submitted);
            if (i > 0)
                assert_true(r1.samples[i].t_s > r1.samples[i - 1].t_s);
        }
        for (size_t i = 0; i < r1.nqueue_delays; i++) {
            assert_true(r1.queue_delays_s[i] >= 0);
            if (i > 0)
                assert_true(r1.queue_delays_s[i] >= r1.queue_delays_s[i - 1]);
        }
        assert_true(r1.gpu_hours_allocated <= r1.gpu_hours_total * (1 + 1e-12) + 1e-12);
        assert_true(r1.gpu_hours_idle >= -1e-9);
        if (is_static) {
            assert_int_equal(r1.pods_submitted, r1.pods_scheduled + r1.pods_failed);
            for (size_t x = 0; x < r1.ncurve; x++) {
                assert_true(r1.curve[x].unallocated_pct >= -1e-9);
                assert_true(r1.curve[x].unallocated_pct <= 100 + 1e-9);
                if (x > 0) /* pods never leave: allocation only grows */
                    assert_true(r1.curve[x].unallocated_pct <=
                                r1.curve[x - 1].unallocated_pct + 1e-9);
            }
        } else {
            if (c.horizon_s > 0)
                assert_true(r1.sim_end_s == c.horizon_s);
            assert_near(r1.node_hours, (double)nn * r1.sim_end_s / HOUR, 1e-6);
        }
        gp_arena_free(&a);
    }
}

/* A gang of three 8-GPU workers on two 8-GPU nodes can never fit: the job
 * fails at once instead of waiting in silence. */
static void test_gang_never_fits_fails_at_once(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0), node("n1", 8, 0)};
    struct gp_item it = pod_item("train", 8, 1000, HOUR);
    it.kind = GP_ITEM_JOB;
    it.completions = it.parallelism = 3;
    it.gang_min = 3;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 2, &it, 1, &a, &r), GP_OK);
    assert_int_equal(r.gangs_never_fit, 1);
    assert_int_equal(r.pods_failed, 3);
    assert_int_equal(r.binds, 0);
    assert_near(r.sim_end_s, 0, 0);
    gp_arena_free(&a);
}

/* A PodGroup with minMember 4 whose Job runs 2 pods at once can never
 * start: as in Kubernetes its pods stay pending for ever (the gang is not
 * clamped to 2), and each submission is counted under its PodGroup with
 * the numbers. A trace's gang (gang_members 0) is still clamped. */
static void test_gang_never_starts(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0), node("n1", 8, 0)};
    struct gp_item it[2] = {pod_item("train", 1, 1000, HOUR), pod_item("trace", 1, 1000, HOUR)};
    for (int i = 0; i < 2; i++) {
        it[i].kind = GP_ITEM_JOB;
        it[i].completions = it[i].parallelism = 2;
        it[i].gang_min = 4;
    }
    it[0].group_name = "g";
    it[0].gang_members = 2;
    it[0].repeat = 3;
    it[0].interarrival.a = 60;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    c.horizon_s = 4 * HOUR;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 2, it, 2, &a, &r), GP_OK);
    check_accounting(&r);
    assert_int_equal(r.gangs_never_start, 3);
    assert_int_equal(r.gangs_never_fit, 0);
    assert_int_equal(r.nnever_start, 1);
    assert_string_equal(r.never_start[0].podgroup, "g");
    assert_int_equal(r.never_start[0].min_member, 4);
    assert_int_equal(r.never_start[0].members, 2);
    assert_int_equal(r.never_start[0].submissions, 3);
    assert_int_equal(r.pods_pending_end, 6); /* train's, never bound */
    assert_int_equal(r.pods_completed, 2);   /* trace's, clamped to its 2 pods */
    gp_arena_free(&a);
}

/* A gang of two 8-GPU workers whose runs always fail (backoffLimit 1):
 * the first failure stops the other worker and both restart after the
 * back-off; the second failure ends the job. Both workers run together,
 * so each bind brings the whole gang. */
static void test_gang_restarts_together(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0), node("n1", 8, 0)};
    struct gp_item it = pod_item("train", 8, 1000, HOUR);
    it.kind = GP_ITEM_JOB;
    it.completions = it.parallelism = 2;
    it.gang_min = 2;
    it.failure_prob = 1.0;
    it.backoff_limit = 1;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 2, &it, 1, &a, &r), GP_OK);
    assert_int_equal(r.gang_restarts, 1);
    assert_int_equal(r.binds, 4);
    assert_int_equal(r.pods_failed, 2);
    assert_int_equal(r.pods_completed, 0);
    assert_int_equal(r.gangs_never_fit, 0);
    gp_arena_free(&a);
}

/* Gang members of a job start together: with one node busy for an hour,
 * a two-node gang waits and holds nothing, so a one-GPU pod arriving later
 * still starts at once. */
static void test_gang_waits_without_holding(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0), node("n1", 8, 0)};
    struct gp_item items[3];
    items[0] = pod_item("busy", 8, 1000, HOUR);
    items[1] = pod_item("train", 8, 1000, HOUR);
    items[1].kind = GP_ITEM_JOB;
    items[1].completions = items[1].parallelism = 2;
    items[1].gang_min = 2;
    items[1].arrival_s = 60;
    items[2] = pod_item("small", 1, 1000, 600);
    items[2].arrival_s = 120;
    struct gp_sim_config c = config(GP_SIM_TIMED);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    assert_int_equal(run(&c, n, 2, items, 3, &a, &r), GP_OK);
    assert_int_equal(r.pods_completed, 4);
    /* delays: busy 0, small 0 (n1 free), train x2: start when busy and
     * small are done, at 1 h: 3600 - 60 */
    assert_near(r.queue_delay_s.max, HOUR - 60, 1e-6);
    assert_int_equal(r.nqueue_delays, 4);
    assert_near(r.queue_delays_s[0], 0, 0);
    assert_near(r.queue_delays_s[1], 0, 0);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_never_fits_fails_at_once),
        cmocka_unit_test(test_gang_never_starts),
        cmocka_unit_test(test_gang_restarts_together),
        cmocka_unit_test(test_gang_waits_without_holding),
        cmocka_unit_test(test_timed_by_hand),
        cmocka_unit_test(test_auto_samples),
        cmocka_unit_test(test_backoff_and_limit),
        cmocka_unit_test(test_job_parallelism),
        cmocka_unit_test(test_job_fails),
        cmocka_unit_test(test_deployment_runs_to_end),
        cmocka_unit_test(test_repeat_and_arrival),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_durations_independent_of_policy),
        cmocka_unit_test(test_static_by_hand),
        cmocka_unit_test(test_static_inflate),
        cmocka_unit_test(test_static_shuffle_seeded),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_no_hang),
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_property_random_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
