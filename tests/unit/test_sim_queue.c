/* test_sim_queue.c - queues, evictions and jobs in the simulator, worked
 * out by hand: reclaim with the work lost since the last checkpoint (and
 * all of it without checkpoints), the minimum runtime, per-queue figures,
 * a Job's active deadline, failures per hour (their rate, statistically),
 * job completion times; queue errors named by object; and no quota
 * invented when the workload declares no queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "sim/sim.h"
#include "util/arena.h"

#define HOUR 3600.0

static void near_(double got, double want, double eps, const char *what, int line)
{
    if (!(fabs(got - want) <= eps)) {
        print_error("line %d: %s = %.9g, expected %.9g (+/- %g)\n", line, what, got, want, eps);
        fail();
    }
}
#define assert_near(got, want, eps) near_((got), (want), (eps), #got, __LINE__)

static struct gp_node_spec node(const char *name, uint32_t gpus)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = "H100";
    s.gpu_count = gpus;
    s.gpu_mem_mib = 81920;
    s.cpu_milli = 64000;
    s.mem_mib = 262144;
    return s;
}

static struct gp_item item(const char *name, enum gp_item_kind kind, uint32_t gpus, double dur_s,
                           const char *queue)
{
    struct gp_item it = {0};
    it.name = name;
    it.source = "jobs.yaml:1";
    it.kind = kind;
    it.pod.name = name;
    it.pod.cpu_milli = 1000;
    it.pod.mem_mib = 1024;
    it.pod.gpu_count = gpus;
    it.pod.gpu_milli = gpus ? 1000 : 0;
    it.repeat = 1;
    it.completions = it.parallelism = 1;
    it.queue = queue;
    if (dur_s >= 0) {
        it.has_duration = true;
        it.duration.kind = GP_DIST_FIXED;
        it.duration.a = dur_s;
    }
    return it;
}

static struct gp_queue_def queue(const char *name, const char *parent, double guaranteed_gpus)
{
    struct gp_queue_def q = {0};
    q.source = "queues.yaml:1";
    q.parent = parent;
    q.spec.name = name;
    q.spec.weight = 1;
    q.spec.gpu_milli.guaranteed = (int64_t)(guaranteed_gpus * 1000);
    return q;
}

static enum gp_err run(struct gp_node_spec *nodes, size_t nnodes, struct gp_item *items,
                       size_t nitems, struct gp_queue_def *queues, size_t nqueues,
                       struct gp_arena *a, struct gp_sim_result *out, struct gp_diag *d)
{
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    c.policy = NULL;
    struct gp_cluster cl = {
        .name = "t", .source = "cluster.yaml", .nodes = nodes, .nnodes = nnodes};
    struct gp_workload w = {.items = items,
                            .nitems = nitems,
                            .cap = nitems,
                            .queues = queues,
                            .nqueues = nqueues,
                            .queues_cap = nqueues};
    return gp_sim_run(&c, &cl, &w, a, out, d);
}

static void check_accounting(const struct gp_sim_result *r)
{
    assert_int_equal(r->pods_submitted, r->pods_completed + r->pods_failed + r->pods_pending_end +
                                            r->pods_running_end);
    assert_true(r->binds <= r->pods_submitted + r->pod_retries + r->preemptions);
    assert_int_equal(r->nqueue_delays, r->binds);
    assert_int_equal(r->preemptions, r->preempted + r->reclaimed);
    uint64_t binds = 0, evicted = 0;
    for (size_t i = 0; i < r->nqueues; i++) {
        binds += r->queues[i].binds;
        evicted += r->queues[i].evicted;
    }
    assert_int_equal(binds, r->binds);
    assert_int_equal(evicted, r->preemptions);
}

/* One node of 4 GPUs. A (no guarantee) runs a Job of 4 one-GPU pods of
 * 10 h from 0, checkpointing every hour; B (guaranteed 4 GPUs) submits a
 * 2-GPU pod of 1 h at 2.5 h. It reclaims 2 of A's GPUs: each evicted pod
 * loses the 0.5 h since its last checkpoint (1 GPU-hour in all) and
 * resumes at 3.5 h with 2 h of work done: A's job ends at 3.5 + 8 = 11.5 h.
 * Without checkpoints each loses its 2.5 h and starts over: 3.5 + 10. */
static void test_reclaim_lost_work(void **state)
{
    (void)state;
    for (int with_checkpoint = 1; with_checkpoint >= 0; with_checkpoint--) {
        struct gp_node_spec n[] = {node("n0", 4)};
        struct gp_item it[] = {item("train", GP_ITEM_JOB, 1, 10 * HOUR, "a"),
                               item("urgent", GP_ITEM_POD, 2, HOUR, "b")};
        it[0].completions = it[0].parallelism = 4;
        it[0].checkpoint_s = with_checkpoint ? HOUR : 0;
        it[1].arrival_s = 2.5 * HOUR;
        struct gp_queue_def q[] = {queue("a", NULL, 0), queue("b", NULL, 4)};
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_sim_result r;
        struct gp_diag d = {{0}};
        assert_int_equal(run(n, 1, it, 2, q, 2, &a, &r, &d), GP_OK);
        check_accounting(&r);
        assert_int_equal(r.preemptions, 2);
        assert_int_equal(r.reclaimed, 2);
        assert_near(r.lost_gpu_hours, with_checkpoint ? 1.0 : 5.0, 1e-9);
        assert_int_equal(r.pods_completed, 5);
        assert_int_equal(r.binds, 7);
        double a_end = with_checkpoint ? 11.5 * HOUR : 13.5 * HOUR;
        assert_near(r.sim_end_s, a_end, 1e-6);
        assert_int_equal(r.jobs_submitted, 2);
        assert_int_equal(r.jobs_completed, 2);
        assert_near(r.jct_s.mean, (a_end + HOUR) / 2, 1e-6);
        assert_near(r.jct_s.p50, HOUR, 1e-6); /* nearest rank of 2: the first */
        assert_int_equal(r.nqueues, 2);
        assert_string_equal(r.queues[0].name, "a");
        assert_true(r.queues[0].declared);
        assert_int_equal(r.queues[0].evicted, 2);
        assert_near(r.queues[0].lost_gpu_hours, r.lost_gpu_hours, 1e-12);
        assert_near(r.queues[0].jct_s.mean, a_end, 1e-6);
        /* B held 2 GPUs for 1 h; A all 4 but 2 for that hour */
        assert_near(r.queues[1].gpu_hours_allocated, 2.0, 1e-9);
        /* A: 4 GPUs 0-2.5 h, 2 for B's hour, 4 from 3.5 h to 10 h, then 2 */
        assert_near(r.queues[0].gpu_hours_allocated, with_checkpoint ? 41.0 : 45.0, 1e-6);
        assert_near(r.queues[1].queue_delay_s.max, 0, 0); /* bound the moment it came */
        assert_near(r.queues[1].guaranteed_gpus, 4, 0);
        assert_true(r.queues[1].limit_gpus < 0);
        gp_arena_free(&a);
    }
}

/* A's pods may not be evicted before 3 h: B waits from 2.5 h to 3 h, and
 * the evicted pods, checkpointed every hour, lose nothing. */
static void test_min_runtime(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4)};
    struct gp_item it[] = {item("train", GP_ITEM_JOB, 1, 10 * HOUR, "a"),
                           item("urgent", GP_ITEM_POD, 2, HOUR, "b")};
    it[0].completions = it[0].parallelism = 4;
    it[0].checkpoint_s = HOUR;
    it[1].arrival_s = 2.5 * HOUR;
    struct gp_queue_def q[] = {queue("a", NULL, 0), queue("b", NULL, 4)};
    q[0].spec.min_runtime_s = 3 * HOUR;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {{0}};
    assert_int_equal(run(n, 1, it, 2, q, 2, &a, &r, &d), GP_OK);
    assert_int_equal(r.preemptions, 2);
    assert_near(r.lost_gpu_hours, 0, 1e-9);
    assert_near(r.queues[1].queue_delay_s.max, 0.5 * HOUR, 1e-6);
    /* resumed at 4 h with 3 h done: 4 + 7 = 11 h */
    assert_near(r.sim_end_s, 11 * HOUR, 1e-6);
    gp_arena_free(&a);
}

/* Inside a queue a higher priority preempts: the default queue does not
 * (no Queue declared for it), a declared one does. */
static void test_priority_in_queue(void **state)
{
    (void)state;
    for (int declared = 0; declared < 2; declared++) {
        struct gp_node_spec n[] = {node("n0", 2)};
        const char *qname = declared ? "a" : NULL;
        struct gp_item it[] = {item("low", GP_ITEM_POD, 2, 10 * HOUR, qname),
                               item("high", GP_ITEM_POD, 1, HOUR, qname)};
        it[1].pod.priority = 100;
        it[1].arrival_s = HOUR;
        struct gp_queue_def q[] = {queue("a", NULL, 0)};
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_sim_result r;
        struct gp_diag d = {{0}};
        assert_int_equal(run(n, 1, it, 2, q, declared ? 1 : 0, &a, &r, &d), GP_OK);
        check_accounting(&r);
        assert_int_equal(r.preempted, declared ? 1 : 0);
        /* preempted: high runs 1-2 h, low restarts at 2 h from scratch */
        assert_near(r.sim_end_s, declared ? 12 * HOUR : 11 * HOUR, 1e-6);
        assert_near(r.lost_gpu_hours, declared ? 2.0 : 0, 1e-9);
        gp_arena_free(&a);
    }
}

/* A Job of 2 one-hour pods, one at a time, with a deadline of 1.5 h: the
 * first completes, the second is stopped at 1.5 h and the job fails. */
static void test_job_deadline(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4)};
    struct gp_item it[] = {item("job", GP_ITEM_JOB, 1, HOUR, NULL),
                           item("ok", GP_ITEM_JOB, 1, HOUR, NULL)};
    it[0].completions = 2;
    it[0].active_deadline_s = 1.5 * HOUR;
    it[1].active_deadline_s = 1.5 * HOUR; /* finishes in time: its deadline is moot */
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {{0}};
    assert_int_equal(run(n, 1, it, 2, NULL, 0, &a, &r, &d), GP_OK);
    check_accounting(&r);
    assert_int_equal(r.jobs_submitted, 2);
    assert_int_equal(r.jobs_completed, 1);
    assert_int_equal(r.jobs_failed, 1);
    assert_int_equal(r.jobs_deadline_exceeded, 1);
    assert_int_equal(r.pods_completed, 2);
    assert_int_equal(r.pods_failed, 1);
    assert_near(r.sim_end_s, 1.5 * HOUR, 1e-6);
    assert_near(r.gpu_hours_allocated, 2.5, 1e-9);
    assert_near(r.jct_s.mean, HOUR, 1e-9);
    /* no declared queue: one row, the default queue, with everything */
    assert_int_equal(r.nqueues, 1);
    assert_string_equal(r.queues[0].name, "default");
    assert_false(r.queues[0].declared);
    assert_int_equal(r.queues[0].jobs_failed, 1);
    gp_arena_free(&a);
}

/* 4000 pods of 10 h (asking for nothing, so all run at once) that fail at
 * 0.1 per hour: the share that fails is 1 - e^-1 = 0.632 (3 sigma =
 * 0.023); the others complete in exactly 10 h. */
static void test_failure_rate(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 16)};
    struct gp_item it[] = {item("p", GP_ITEM_POD, 0, 10 * HOUR, NULL)};
    it[0].repeat = 4000;
    it[0].pod.cpu_milli = it[0].pod.mem_mib = 0;
    it[0].failure_rate_per_s = 0.1 / HOUR;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {{0}};
    assert_int_equal(run(n, 1, it, 1, NULL, 0, &a, &r, &d), GP_OK);
    double failed = (double)r.pods_failed / 4000;
    assert_near(failed, 1 - exp(-1), 0.023);
    assert_int_equal(r.jobs_completed + r.jobs_failed, 4000);
    assert_near(r.jct_s.mean, 10 * HOUR, 1e-6); /* the completed ran their 10 h */
    assert_near(r.jct_s.max, 10 * HOUR, 1e-6);
    gp_arena_free(&a);

    /* without a duration a pod fails at its exponential time all the same */
    struct gp_item endless[] = {item("svc", GP_ITEM_POD, 1, -1, NULL)};
    endless[0].failure_rate_per_s = 1 / HOUR;
    gp_arena_init(&a);
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    c.horizon_s = 1000 * HOUR;
    struct gp_cluster cl = {.name = "t", .source = "c", .nodes = n, .nnodes = 1};
    struct gp_workload w = {.items = endless, .nitems = 1, .cap = 1};
    assert_int_equal(gp_sim_run(&c, &cl, &w, &a, &r, &d), GP_OK);
    assert_int_equal(r.pods_failed, 1);
    gp_arena_free(&a);
}

/* Queue names without Queue objects (Philly's virtual clusters) invent no
 * quota: the run is the one without names, plus a row per name. */
static void test_no_invented_quota(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 4), node("n1", 4)};
    struct gp_item named[6], plain[6];
    for (int i = 0; i < 6; i++) {
        named[i] =
            item("p", GP_ITEM_POD, 1 + (uint32_t)i % 4, (1 + i) * HOUR, i % 2 ? "vc1" : "vc2");
        named[i].arrival_s = i * 600;
        plain[i] = named[i];
        plain[i].queue = NULL;
    }
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r1, r2;
    struct gp_diag d = {{0}};
    assert_int_equal(run(n, 2, named, 6, NULL, 0, &a, &r1, &d), GP_OK);
    assert_int_equal(run(n, 2, plain, 6, NULL, 0, &a, &r2, &d), GP_OK);
    assert_int_equal(r1.nqueue_delays, r2.nqueue_delays);
    assert_memory_equal(r1.queue_delays_s, r2.queue_delays_s,
                        r1.nqueue_delays * sizeof r1.queue_delays_s[0]);
    assert_near(r1.sim_end_s, r2.sim_end_s, 0);
    assert_int_equal(r1.nqueues, 2);
    assert_string_equal(r1.queues[0].name, "vc2"); /* in order of first submission */
    assert_string_equal(r1.queues[1].name, "vc1");
    assert_false(r1.queues[0].declared);
    assert_int_equal(r1.queues[0].pods_submitted + r1.queues[1].pods_submitted, 6);
    assert_near(r1.queues[0].gpu_hours_allocated + r1.queues[1].gpu_hours_allocated,
                r1.gpu_hours_allocated, 1e-9);
    gp_arena_free(&a);
}

static void expect_error(struct gp_item *items, size_t nitems, struct gp_queue_def *q, size_t nq,
                         const char *want)
{
    struct gp_node_spec n[] = {node("n0", 4)};
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {{0}};
    assert_int_equal(run(n, 1, items, nitems, q, nq, &a, &r, &d), GP_EINVALID);
    if (strcmp(d.msg, want) != 0) {
        print_error("got  \"%s\"\nwant \"%s\"\n", d.msg, want);
        fail();
    }
    gp_arena_free(&a);
}

static void test_queue_errors(void **state)
{
    (void)state;
    struct gp_item it[] = {item("train", GP_ITEM_JOB, 1, HOUR, "nope")};
    struct gp_queue_def q[] = {queue("a", NULL, 1), queue("b", "a", 1), queue("c", "zz", 0)};
    expect_error(it, 1, q, 2,
                 "jobs.yaml:1: train: names queue \"nope\", which no Queue object declares");
    it[0].queue = "a";
    expect_error(it, 1, q, 2,
                 "jobs.yaml:1: train: names queue \"a\", which has child queues (\"b\"); pods go "
                 "to leaf queues");
    it[0].queue = "b";
    expect_error(it, 1, q, 3, "queues.yaml:1: Queue \"c\": its parent \"zz\" is not declared");
    struct gp_queue_def cyc[] = {queue("x", "y", 0), queue("y", "x", 0)};
    expect_error(it, 0, cyc, 2, "queues.yaml:1: Queue \"x\": its parents form a cycle");
    struct gp_queue_def twice[] = {queue("x", NULL, 0), queue("x", NULL, 0)};
    expect_error(it, 0, twice, 2,
                 "queues.yaml:1: Queue \"x\" is defined twice (also at queues.yaml:1)");
    struct gp_queue_def def[] = {queue("default", "x", 0), queue("x", NULL, 0)};
    expect_error(it, 0, def, 2,
                 "queues.yaml:1: Queue \"default\" is the top-level default queue: it cannot "
                 "have a parent");
    struct gp_item bad[] = {item("p", GP_ITEM_POD, 1, HOUR, NULL)};
    bad[0].failure_rate_per_s = -1;
    expect_error(bad, 1, NULL, 0,
                 "jobs.yaml:1: p: failure rate: expected a finite rate >= 0, got -1 per s");
}

static uint64_t rnd(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* 200 random runs with queues, priorities, gangs, checkpoints, failures
 * and deadlines: the accounting holds, every job ends at most once (and
 * all of them when no pod is left), and the same inputs give the same
 * result. */
static void test_property_runs(void **state)
{
    (void)state;
    static const char *const qnames[] = {"q0", "q1", "q2", "q3"};
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t s = seed;
        struct gp_node_spec n[4];
        size_t nn = 1 + rnd(&s) % 4;
        static const char *const names[] = {"n0", "n1", "n2", "n3"};
        for (size_t i = 0; i < nn; i++)
            n[i] = node(names[i], 2 + 2 * (uint32_t)(rnd(&s) % 3));
        struct gp_queue_def q[4];
        size_t nq = rnd(&s) % 5;
        for (size_t i = 0; i < nq; i++) {
            q[i] = queue(qnames[i], NULL, (double)(rnd(&s) % 6));
            if (rnd(&s) % 2) {
                q[i].spec.gpu_milli.limited = true;
                q[i].spec.gpu_milli.borrow_limit = (int64_t)(rnd(&s) % 6) * 1000;
            }
            q[i].spec.min_runtime_s = (double)(rnd(&s) % 3) * 600;
        }
        struct gp_item it[8];
        size_t ni = 1 + rnd(&s) % 8;
        for (size_t i = 0; i < ni; i++) {
            bool job = rnd(&s) % 2;
            it[i] = item("x", job ? GP_ITEM_JOB : GP_ITEM_POD, 1 + (uint32_t)(rnd(&s) % 2),
                         (double)(1 + rnd(&s) % 4) * HOUR, nq ? qnames[rnd(&s) % nq] : NULL);
            it[i].arrival_s = (double)(rnd(&s) % 4) * 1800;
            it[i].repeat = 1 + (uint32_t)(rnd(&s) % 3);
            it[i].interarrival.a = 900;
            it[i].pod.priority = (int32_t)(rnd(&s) % 3);
            it[i].checkpoint_s = rnd(&s) % 2 ? 1200 : 0;
            it[i].failure_rate_per_s = rnd(&s) % 3 == 0 ? 0.2 / HOUR : 0;
            if (job) {
                it[i].completions = 1 + (uint32_t)(rnd(&s) % 3);
                it[i].parallelism = 1 + (uint32_t)(rnd(&s) % 2);
                it[i].backoff_limit = (uint32_t)(rnd(&s) % 2);
                it[i].active_deadline_s = rnd(&s) % 3 == 0 ? 3 * HOUR : 0;
                if (rnd(&s) % 3 == 0) {
                    it[i].parallelism = it[i].completions;
                    it[i].gang_min = it[i].completions;
                }
            }
        }
        struct gp_arena a;
        gp_arena_init(&a);
        struct gp_sim_result r1, r2;
        struct gp_diag d = {{0}};
        enum gp_err err = run(n, nn, it, ni, q, nq, &a, &r1, &d);
        if (err != GP_OK)
            print_error("seed %llu: %s\n", (unsigned long long)seed, d.msg);
        assert_int_equal(err, GP_OK);
        assert_int_equal(run(n, nn, it, ni, q, nq, &a, &r2, &d), GP_OK);
        check_accounting(&r1);
        assert_true(r1.jobs_completed + r1.jobs_failed <= r1.jobs_submitted);
        if (r1.pods_pending_end + r1.pods_running_end == 0) /* every job ended, once */
            assert_int_equal(r1.jobs_completed + r1.jobs_failed, r1.jobs_submitted);
        assert_true(r1.lost_gpu_hours >= 0);
        assert_int_equal(r1.binds, r2.binds);
        assert_int_equal(r1.preemptions, r2.preemptions);
        assert_true(r1.sim_end_s == r2.sim_end_s);
        assert_true(r1.lost_gpu_hours == r2.lost_gpu_hours);
        assert_true(r1.jct_s.mean == r2.jct_s.mean);
        gp_arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reclaim_lost_work), cmocka_unit_test(test_min_runtime),
        cmocka_unit_test(test_priority_in_queue), cmocka_unit_test(test_job_deadline),
        cmocka_unit_test(test_failure_rate),      cmocka_unit_test(test_no_invented_quota),
        cmocka_unit_test(test_queue_errors),      cmocka_unit_test(test_property_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
