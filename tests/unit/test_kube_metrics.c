/* test_kube_metrics.c - the metrics registry (kube/metrics.c) and its
 * Prometheus text exposition (format 0.0.4): the whole text of a small
 * registry compared byte for byte (HELP and TYPE lines, help and label
 * values escaped, a histogram's cumulative buckets ending in +Inf, _sum
 * and _count, with and without a label), values written as Go's
 * strconv 'g' -1 writes them, bad definitions refused, label sets bounded,
 * counters never going down, concurrent updates none lost, and the
 * scheduler's own metrics all present from the start. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/metrics.h"

static struct gp_metric *define(struct gp_metrics *m, const struct gp_metric_def *def)
{
    struct gp_metric *mt = NULL;
    struct gp_diag d = {""};
    if (gp_metrics_define(m, def, &mt, &d) != GP_OK)
        fail_msg("%s: %s", def->name, d.msg);
    return mt;
}

static char *expose(struct gp_metrics *m)
{
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_metrics_expose(m, &b);
    assert_false(b.oom);
    char *s = strdup(gp_sbuf_str(&b));
    gp_sbuf_free(&b);
    return s;
}

static void test_exposition(void **state)
{
    (void)state;
    struct gp_metrics *m;
    struct gp_diag d = {""};
    assert_int_equal(gp_metrics_new(&m, &d), GP_OK);
    static const char *const results[] = {"scheduled", "error", NULL};
    static const double bounds[] = {0.005, 0.1, 1, 2.5};
    struct gp_metric *c = define(m, &(struct gp_metric_def){.name = "t_decisions_total",
                                                            .help = "Decisions by result.",
                                                            .type = GP_METRIC_COUNTER,
                                                            .label = "result",
                                                            .values = results});
    struct gp_metric *g =
        define(m, &(struct gp_metric_def){.name = "t_gpu",
                                          .help = "GPUs \\ in use\nnow, \"per\" pool.",
                                          .type = GP_METRIC_GAUGE,
                                          .label = "pool",
                                          .values = NULL,
                                          .max_series = 4});
    struct gp_metric *h = define(m, &(struct gp_metric_def){.name = "t_latency_seconds",
                                                            .help = "Latency.",
                                                            .type = GP_METRIC_HISTOGRAM,
                                                            .label = NULL,
                                                            .values = NULL,
                                                            .max_series = 0,
                                                            .buckets = bounds,
                                                            .nbuckets = 4});
    struct gp_metric *hl = define(m, &(struct gp_metric_def){.name = "t_bind_seconds",
                                                             .help = "Bind.",
                                                             .type = GP_METRIC_HISTOGRAM,
                                                             .label = "code",
                                                             .values = NULL,
                                                             .max_series = 2,
                                                             .buckets = bounds,
                                                             .nbuckets = 2});
    struct gp_metric *u =
        define(m, &(struct gp_metric_def){.name = "t_up", .help = "", .type = GP_METRIC_GAUGE});

    gp_metrics_inc(gp_metrics_series(c, "scheduled"), 3);
    gp_metrics_inc(gp_metrics_series(c, "scheduled"), 1);
    gp_metrics_inc(gp_metrics_series(c, "scheduled"), -5); /* counters only go up */
    gp_metrics_set(gp_metrics_series(g, "a\\b\"c\nd"), 2.5);
    gp_metrics_set(gp_metrics_series(g, "h100"), 1234567);
    struct gp_metric_series *hs = gp_metrics_series(h, NULL);
    const double obs[] = {0.001, 0.005, 0.05, 0.5, 0.75, 3, 100};
    for (size_t i = 0; i < sizeof obs / sizeof obs[0]; i++)
        gp_metrics_observe(hs, obs[i]);
    gp_metrics_observe(gp_metrics_series(hl, "201"), 0.02);
    gp_metrics_set(gp_metrics_series(u, NULL), 1);

    char *text = expose(m);
    const char *want = "# HELP t_decisions_total Decisions by result.\n"
                       "# TYPE t_decisions_total counter\n"
                       "t_decisions_total{result=\"scheduled\"} 4\n"
                       "t_decisions_total{result=\"error\"} 0\n"
                       "# HELP t_gpu GPUs \\\\ in use\\nnow, \"per\" pool.\n"
                       "# TYPE t_gpu gauge\n"
                       "t_gpu{pool=\"a\\\\b\\\"c\\nd\"} 2.5\n"
                       "t_gpu{pool=\"h100\"} 1.234567e+06\n"
                       "# HELP t_latency_seconds Latency.\n"
                       "# TYPE t_latency_seconds histogram\n"
                       "t_latency_seconds_bucket{le=\"0.005\"} 2\n"
                       "t_latency_seconds_bucket{le=\"0.1\"} 3\n"
                       "t_latency_seconds_bucket{le=\"1\"} 5\n"
                       "t_latency_seconds_bucket{le=\"2.5\"} 5\n"
                       "t_latency_seconds_bucket{le=\"+Inf\"} 7\n"
                       "t_latency_seconds_sum 104.306\n"
                       "t_latency_seconds_count 7\n"
                       "# HELP t_bind_seconds Bind.\n"
                       "# TYPE t_bind_seconds histogram\n"
                       "t_bind_seconds_bucket{code=\"201\",le=\"0.005\"} 0\n"
                       "t_bind_seconds_bucket{code=\"201\",le=\"0.1\"} 1\n"
                       "t_bind_seconds_bucket{code=\"201\",le=\"+Inf\"} 1\n"
                       "t_bind_seconds_sum{code=\"201\"} 0.02\n"
                       "t_bind_seconds_count{code=\"201\"} 1\n"
                       "# HELP t_up \n"
                       "# TYPE t_up gauge\n"
                       "t_up 1\n";
    assert_string_equal(text, want);
    free(text);
    assert_true(gp_metrics_value(gp_metrics_series(c, "scheduled")) == 4);
    assert_int_equal(gp_metrics_count(hs), 7);
    gp_metrics_free(m);
}

static void test_values(void **state)
{
    (void)state;
    struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {-2, "-2"},
        {0.1, "0.1"},
        {0.005, "0.005"},
        {2.5, "2.5"},
        {100000, "100000"},
        {999999, "999999"},
        {1e6, "1e+06"},
        {1234567, "1.234567e+06"},
        {0.0001, "0.0001"},
        {0.00001, "1e-05"},
        {1.0 / 3, "0.3333333333333333"},
        {16.384, "16.384"},
        {1e300, "1e+300"},
        {1.0 / 0.0, "+Inf"},
        {-1.0 / 0.0, "-Inf"},
        {0.0 / 0.0, "NaN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        const char *got = gp_metrics_format_value(cases[i].v, buf);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%.17g: got %s, want %s", cases[i].v, got, cases[i].want);
    }
}

static void test_bad_definitions(void **state)
{
    (void)state;
    struct gp_metrics *m;
    struct gp_diag d = {""};
    assert_int_equal(gp_metrics_new(&m, &d), GP_OK);
    static const double up[] = {1, 2}, down[] = {2, 1}, inf[] = {1, 1.0 / 0.0};
    static const char *const vals[] = {"a", "b", "c", NULL};
    define(m, &(struct gp_metric_def){.name = "x_seconds",
                                      .help = "",
                                      .type = GP_METRIC_HISTOGRAM,
                                      .label = NULL,
                                      .values = NULL,
                                      .max_series = 0,
                                      .buckets = up,
                                      .nbuckets = 2});
    define(m, &(struct gp_metric_def){
                  .name = "ns:x", .help = "", .type = GP_METRIC_GAUGE}); /* colons: allowed */
    struct {
        struct gp_metric_def def;
        const char *msg;
    } bad[] = {
        {{.name = "1x", .help = "", .type = GP_METRIC_GAUGE},
         "metrics: 1x: not a valid metric name"},
        {{.name = "a-b", .help = "", .type = GP_METRIC_GAUGE},
         "metrics: a-b: not a valid metric name"},
        {{.name = "", .help = "", .type = GP_METRIC_GAUGE}, "metrics: : not a valid metric name"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_GAUGE,
          .label = "__x",
          .values = NULL,
          .max_series = 2},
         "metrics: y: label '__x' is not a valid label name"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_GAUGE,
          .label = "a:b",
          .values = NULL,
          .max_series = 2},
         "metrics: y: label 'a:b' is not a valid label name"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_HISTOGRAM,
          .label = "le",
          .values = NULL,
          .max_series = 2,
          .buckets = up,
          .nbuckets = 2},
         "metrics: y: label 'le' is not a valid label name"},
        {{.name = "y", .help = "", .type = GP_METRIC_GAUGE, .label = "pool"},
         "metrics: y: a label needs 1 to 256 values"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_GAUGE,
          .label = "pool",
          .values = NULL,
          .max_series = 257},
         "metrics: y: a label needs 1 to 256 values"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_GAUGE,
          .label = "pool",
          .values = vals,
          .max_series = 2},
         "metrics: y: a label needs 1 to 256 values"},
        {{.name = "y", .help = "", .type = GP_METRIC_GAUGE, .label = NULL, .values = vals},
         "metrics: y: label values without a label"},
        {{.name = "y", .help = "", .type = GP_METRIC_HISTOGRAM},
         "metrics: y: a histogram needs 1 to 32 buckets"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_HISTOGRAM,
          .label = NULL,
          .values = NULL,
          .max_series = 0,
          .buckets = down,
          .nbuckets = 2},
         "metrics: y: buckets must be finite and increasing"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_HISTOGRAM,
          .label = NULL,
          .values = NULL,
          .max_series = 0,
          .buckets = inf,
          .nbuckets = 2},
         "metrics: y: buckets must be finite and increasing"},
        {{.name = "y",
          .help = "",
          .type = GP_METRIC_GAUGE,
          .label = NULL,
          .values = NULL,
          .max_series = 0,
          .buckets = up,
          .nbuckets = 2},
         "metrics: y: buckets on a metric not a histogram"},
        {{.name = "x_seconds", .help = "", .type = GP_METRIC_GAUGE},
         "metrics: x_seconds: clashes with metric x_seconds"},
        {{.name = "x_seconds_count", .help = "", .type = GP_METRIC_COUNTER},
         "metrics: x_seconds_count: clashes with metric x_seconds"},
        {{.name = "x",
          .help = "",
          .type = GP_METRIC_HISTOGRAM,
          .label = NULL,
          .values = NULL,
          .max_series = 0,
          .buckets = up,
          .nbuckets = 2},
         NULL}, /* x_bucket etc.: no clash */
        {{.name = "x_seconds_sum_", .help = "", .type = GP_METRIC_GAUGE}, NULL},
        {{.name = "ns",
          .help = "",
          .type = GP_METRIC_HISTOGRAM,
          .label = NULL,
          .values = NULL,
          .max_series = 0,
          .buckets = up,
          .nbuckets = 2},
         NULL},
        {{.name = "ns_count", .help = "", .type = GP_METRIC_GAUGE},
         "metrics: ns_count: clashes with metric ns"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct gp_metric *mt = (void *)1;
        d.msg[0] = '\0';
        enum gp_err err = gp_metrics_define(m, &bad[i].def, &mt, &d);
        if (!bad[i].msg) {
            assert_int_equal(err, GP_OK);
            continue;
        }
        if (err != GP_EINVALID || strcmp(d.msg, bad[i].msg) != 0)
            fail_msg("case %zu: got %d '%s', want '%s'", i, err, d.msg, bad[i].msg);
        assert_null(mt);
    }
    gp_metrics_free(m);
}

static void test_bounded(void **state)
{
    (void)state;
    struct gp_metrics *m;
    struct gp_diag d = {""};
    assert_int_equal(gp_metrics_new(&m, &d), GP_OK);
    static const char *const vals[] = {"a", "b", NULL};
    struct gp_metric *fixed = define(
        m, &(struct gp_metric_def){
               .name = "f", .help = "", .type = GP_METRIC_COUNTER, .label = "k", .values = vals});
    struct gp_metric *open = define(m, &(struct gp_metric_def){.name = "o",
                                                               .help = "",
                                                               .type = GP_METRIC_GAUGE,
                                                               .label = "k",
                                                               .values = NULL,
                                                               .max_series = 3});
    struct gp_metric *none =
        define(m, &(struct gp_metric_def){.name = "n", .help = "", .type = GP_METRIC_COUNTER});
    assert_non_null(gp_metrics_series(fixed, "a"));
    assert_null(gp_metrics_series(fixed, "c")); /* not one of the fixed values */
    assert_null(gp_metrics_series(fixed, NULL));
    assert_null(gp_metrics_series(none, "a"));
    assert_non_null(gp_metrics_series(none, NULL));
    struct gp_metric_series *s1 = gp_metrics_series(open, "p1");
    assert_non_null(gp_metrics_series(open, "p2"));
    assert_non_null(gp_metrics_series(open, "p3"));
    assert_null(gp_metrics_series(open, "p4")); /* the bound */
    assert_ptr_equal(gp_metrics_series(open, "p1"), s1);
    gp_metrics_inc(NULL, 1); /* refused series: ignored */
    gp_metrics_set(NULL, 1);
    gp_metrics_observe(NULL, 1);
    /* an update of the wrong kind is ignored */
    gp_metrics_set(gp_metrics_series(none, NULL), 7);
    gp_metrics_observe(gp_metrics_series(none, NULL), 7);
    gp_metrics_inc(gp_metrics_series(none, NULL), 0.0 / 0.0);
    assert_true(gp_metrics_value(gp_metrics_series(none, NULL)) == 0);
    gp_metrics_inc(s1, -2); /* gauges go down */
    assert_true(gp_metrics_value(s1) == -2);
    char *text = expose(m);
    assert_non_null(strstr(text, "o{k=\"p3\"} 0\n# HELP n \n"));
    assert_null(strstr(text, "p4"));
    free(text);
    gp_metrics_free(m);
}

struct worker {
    struct gp_metric_series *c, *h;
    struct gp_metrics *m;
};

static void *hammer(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < 20000; i++) {
        gp_metrics_inc(w->c, 1);
        gp_metrics_observe(w->h, 0.5);
        if (i % 5000 == 0) { /* a reader at the same time, as /metrics is */
            struct gp_sbuf b;
            gp_sbuf_init(&b);
            gp_metrics_expose(w->m, &b);
            gp_sbuf_free(&b);
        }
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    (void)state;
    struct gp_metrics *m;
    struct gp_diag d = {""};
    static const double b[] = {1};
    assert_int_equal(gp_metrics_new(&m, &d), GP_OK);
    struct worker w = {
        gp_metrics_series(
            define(m, &(struct gp_metric_def){.name = "c", .help = "", .type = GP_METRIC_COUNTER}),
            NULL),
        gp_metrics_series(define(m, &(struct gp_metric_def){.name = "h",
                                                            .help = "",
                                                            .type = GP_METRIC_HISTOGRAM,
                                                            .label = NULL,
                                                            .values = NULL,
                                                            .max_series = 0,
                                                            .buckets = b,
                                                            .nbuckets = 1}),
                          NULL),
        m};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, &w), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_true(gp_metrics_value(w.c) == 80000);
    assert_int_equal(gp_metrics_count(w.h), 80000);
    char *text = expose(m);
    assert_non_null(strstr(text, "h_bucket{le=\"1\"} 80000\nh_bucket{le=\"+Inf\"} 80000\n"));
    free(text);
    gp_metrics_free(m);
}

static void test_scheduler_metrics(void **state)
{
    (void)state;
    struct gp_kube_metrics km;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_metrics_init(&km, &d), GP_OK);
    for (int i = 0; i < GP_KM_RESULT_COUNT; i++)
        assert_non_null(km.decisions[i]);
    for (int i = 0; i < GP_KM_BIND_FAILURE_COUNT; i++)
        assert_non_null(km.bind_failures[i]);
    for (int i = 0; i < GP_KM_QUEUE_COUNT; i++)
        assert_non_null(km.pending[i]);
    for (int i = 0; i < GP_KM_AUDIT_COUNT; i++)
        assert_non_null(km.audit[i]);
    assert_non_null(km.scheduling_s);
    assert_non_null(km.bind_s);
    assert_non_null(km.leader);
    assert_non_null(km.preemption_victims);
    gp_metrics_inc(km.decisions[GP_KM_UNSCHEDULABLE], 1);
    gp_metrics_set(km.pending[GP_KM_QUEUE_BACKOFF], 12);
    gp_metrics_observe(km.scheduling_s, 0.003);
    assert_true(gp_kube_metrics_pool(&km, "h100-ts", 6.5, 16));
    char name[32];
    for (int i = 1; i < GP_KM_MAX_POOLS; i++) {
        snprintf(name, sizeof name, "p%d", i);
        assert_true(gp_kube_metrics_pool(&km, name, 0, 8));
    }
    assert_false(gp_kube_metrics_pool(&km, "one-too-many", 0, 8));
    char *text = expose(km.reg);
    const char *lines[] = {
        "# TYPE gpuplane_scheduler_decisions_total counter\n",
        "gpuplane_scheduler_decisions_total{result=\"scheduled\"} 0\n",
        "gpuplane_scheduler_decisions_total{result=\"unschedulable\"} 1\n",
        "gpuplane_scheduler_decisions_total{result=\"error\"} 0\n",
        "# TYPE gpuplane_scheduler_scheduling_duration_seconds histogram\n",
        "gpuplane_scheduler_scheduling_duration_seconds_bucket{le=\"0.002\"} 0\n",
        "gpuplane_scheduler_scheduling_duration_seconds_bucket{le=\"0.004\"} 1\n",
        "gpuplane_scheduler_scheduling_duration_seconds_bucket{le=\"16.384\"} 1\n",
        "gpuplane_scheduler_scheduling_duration_seconds_bucket{le=\"+Inf\"} 1\n",
        "gpuplane_scheduler_bind_duration_seconds_count 0\n",
        "gpuplane_scheduler_bind_failures_total{reason=\"conflict\"} 0\n",
        "gpuplane_scheduler_preemption_victims_total 0\n",
        "gpuplane_scheduler_pending_pods{queue=\"active\"} 0\n",
        "gpuplane_scheduler_pending_pods{queue=\"backoff\"} 12\n",
        "gpuplane_scheduler_pending_pods{queue=\"unschedulable\"} 0\n",
        "gpuplane_scheduler_gpu_allocated{pool=\"h100-ts\"} 6.5\n",
        "gpuplane_scheduler_gpu_capacity{pool=\"h100-ts\"} 16\n",
        "gpuplane_scheduler_audit_violations_total{resource=\"gpu\"} 0\n",
        "gpuplane_scheduler_audit_violations_total{resource=\"mig\"} 0\n",
        "gpuplane_scheduler_audit_violations_total{resource=\"memory\"} 0\n",
        "# TYPE gpuplane_scheduler_leader gauge\ngpuplane_scheduler_leader 0\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(text, lines[i]))
            fail_msg("missing: %s", lines[i]);
    assert_null(strstr(text, "one-too-many"));
    free(text);
    gp_kube_metrics_free(&km);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exposition),      cmocka_unit_test(test_values),
        cmocka_unit_test(test_bad_definitions), cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_concurrent),      cmocka_unit_test(test_scheduler_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
