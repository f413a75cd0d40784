/* test_sim_services.c - InferenceServices in timed runs, against figures
 * worked by hand: fixed replicas at a constant load give exactly the M/M/c
 * closed form (Erlang C); the HPA's scale-up waits for the cold start and
 * the backlog drains at the capacity it reaches; the concurrency
 * autoscaler scales to zero after a quiet spell and the next request pays
 * a cold start; the reader's strict checks; and a run without services
 * has no services. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/cluster.h"
#include "io/service.h"
#include "io/workload.h"
#include "serve/erlang.h"
#include "sim/sim.h"

#define CLUSTER                                                                                    \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"        \
    "  - name: g\n    gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n    cpu: \"192\"\n"         \
    "    memory: 2Ti\n    count: 2\n    pricePerHour: 8\n"

#define DEPLOYMENT(replicas)                                                                       \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " replicas   \
    "\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"   \
    "    spec:\n      containers:\n      - name: m\n        image: m\n        resources:\n"        \
    "          limits: {nvidia.com/gpu: 1, cpu: \"4\", memory: 16Gi}\n---\n"

#define SERVICE "apiVersion: gpuplane.io/v1\nkind: InferenceService\nmetadata: {name: web}\nspec:\n"

static enum gp_err sim(const char *manifest, double horizon_s, struct gp_arena *a,
                       struct gp_sim_result *out, struct gp_diag *d)
{
    static struct gp_cluster cl;
    static struct gp_workload w;
    memset(&cl, 0, sizeof cl);
    memset(&w, 0, sizeof w);
    enum gp_err err = gp_cluster_parse_yaml(CLUSTER, strlen(CLUSTER), "c.yaml", a, &cl, d);
    assert_int_equal(err, GP_OK);
    assert_int_equal(gp_cluster_expand(&cl, a, d), GP_OK);
    err = gp_workload_parse_manifest(manifest, strlen(manifest), "w.yaml", a, &w, d);
    if (err == GP_OK)
        err = gp_workload_finish(&w, a, d);
    if (err != GP_OK)
        return err;
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    c.horizon_s = horizon_s;
    c.sample_s = 60;
    return gp_sim_run(&c, &cl, &w, a, out, d);
}

/* P(T > t) of M/M/2 at lambda 15, mu 10 by hand: a = 1.5, C = 4.5 / 7,
 * theta = 5: (1 - C) e^-10t + C (2 e^-5t - e^-10t) */
static double mm2_sf(double t)
{
    double c = 4.5 / 7.0;
    return (1 - c) * exp(-10 * t) + c * (2 * exp(-5 * t) - exp(-10 * t));
}

static double mm2_quantile(double p)
{
    double lo = 0, hi = 100;
    for (int i = 0; i < 200; i++) {
        double mid = (lo + hi) / 2;
        if (mm2_sf(mid) > 1 - p)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

static void test_fixed_replicas_erlang(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {""};
    const char *m = DEPLOYMENT("2") SERVICE "  deployment: web\n  requestsPerSecond: 10\n"
                                            "  load: {constant: 15}\n";
    assert_int_equal(sim(m, 3600, &a, &r, &d), GP_OK);
    assert_int_equal(r.nservices, 1);
    const struct gp_sim_service *s = &r.services[0];
    assert_string_equal(s->name, "web");
    assert_false(s->llm);
    assert_true(fabs(gp_serve_erlang_c(2, 1.5) - 4.5 / 7.0) < 1e-12);
    assert_true(fabs(s->p50_latency_s - mm2_quantile(0.50)) < 1e-6);
    assert_true(fabs(s->p95_latency_s - mm2_quantile(0.95)) < 1e-6);
    assert_true(fabs(s->p99_latency_s - mm2_quantile(0.99)) < 1e-6);
    assert_true(s->unserved_s == 0);
    assert_true(fabs(s->requests - 15.0 * 3600) < 1e-6);
    assert_int_equal(s->cold_starts, 2);
    assert_int_equal(s->peak_replicas, 2);
    assert_true(fabs(s->gpu_hours - 2.0) < 1e-9); /* 2 GPUs for an hour */
    for (size_t i = 0; i < s->n; i++) {
        assert_true(s->replicas[i] == (i == 0 ? 0 : 2)); /* bound at 0, after the sample */
        assert_true(fabs(s->load[i] - 15) < 1e-9);
    }
    assert_true(s->cost_usd > 0);
    gp_arena_free(&a);
}

static void test_hpa_cold_start(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {""};
    /* 50 rps on replicas of 10 rps, HPA on rps per pod, target 8; a 60 s
     * cold start. 0-60: nothing ready (3000 requests wait); 60: 1 ready at
     * 50/pod -> 7, limited to 1 + 4 = 5; 75: 1 ready + 4 loading (0 on a
     * scale-up): 50 / 5 / 8 = 1.25 -> ceil(6.25) = 7; from 135 all 7 are
     * ready. The backlog: 3000 + 40 x 60 (one ready 60-120) = 5400 at 120,
     * held at 5 ready (120-135), drained at 70 - 50 = 20/s: at 405 s. */
    const char *m = DEPLOYMENT("1") SERVICE
        "  deployment: web\n  requestsPerSecond: 10\n  coldStart: 60s\n"
        "  load: {constant: 50}\n"
        "  autoscaler:\n    hpa: {minReplicas: 1, maxReplicas: 10, metric: rps, target: 8}\n";
    assert_int_equal(sim(m, 3600, &a, &r, &d), GP_OK);
    const struct gp_sim_service *s = &r.services[0];
    assert_int_equal(s->peak_replicas, 7);
    assert_int_equal(s->cold_starts, 7);
    /* counted per sync interval with requests still waiting at its end:
     * the last one, 390-405, ends with the backlog gone */
    assert_true(s->unserved_s == 390);
    assert_true(s->requests_unserved == 0);
    /* every request that came before 405 s waited */
    assert_true(fabs(s->requests_queued - 50 * 405.0) < 1e-6);
    assert_true(s->p99_latency_s > 60);
    assert_true(s->p50_latency_s < 1);
    assert_true(s->replicas[s->n - 1] == 7);
    /* the waits at the samples (a minute apart): 3000 at 60 s, 5400 at
     * 120 s, none from 405 s; every request of 0-405 s joined the wait,
     * 50/s, and of the sample 360-420 s the 45 s before 405: 37.5/s */
    assert_true(fabs(s->queued[1] - 3000) < 1e-6);
    assert_true(fabs(s->queued[2] - 5400) < 1e-6);
    assert_true(s->queued[7] == 0);
    for (size_t i = 0; i < 6; i++)
        assert_true(fabs(s->unserved_load[i] - 50) < 1e-6);
    assert_true(fabs(s->unserved_load[6] - 37.5) < 1e-6);
    for (size_t i = 7; i < s->n; i++)
        assert_true(s->unserved_load[i] == 0);
    gp_arena_free(&a);
}

static void test_scale_to_zero(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct gp_diag d = {""};
    /* 5 rps for 10 minutes every hour; a quiet hour scales to zero, the
     * next burst is held until a replica has loaded (30 s) */
    const char *m =
        DEPLOYMENT("1") SERVICE "  deployment: web\n  requestsPerSecond: 10\n  coldStart: 30s\n"
                                "  load: {spikes: {base: 0, height: 5, every: 1h, length: 10m}}\n"
                                "  autoscaler:\n    concurrency: {target: 0.7}\n";
    assert_int_equal(sim(m, 2 * 3600, &a, &r, &d), GP_OK);
    const struct gp_sim_service *s = &r.services[0];
    assert_int_equal(s->n, 121);      /* a sample a minute */
    for (size_t i = 15; i <= 60; i++) /* quiet: at zero (the burst ends at 10 min) */
        assert_true(s->replicas[i] == 0);
    assert_true(s->replicas[61] > 0); /* the next burst brought replicas back */
    /* each burst's first ~30 s (a cold start, rounded up to a 2 s sync) waits */
    assert_true(s->unserved_s >= 60 && s->unserved_s <= 70);
    assert_true(fabs(s->requests_queued - 2 * 5 * 33.0) < 15);
    assert_true(s->p99_latency_s > 20 && s->p99_latency_s < 33);
    assert_true(s->p50_latency_s < 0.2);
    assert_true(s->cold_starts >= 2);
    gp_arena_free(&a);
}

static void test_reader_errors(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    struct {
        const char *spec, *msg;
    } cases[] = {
        {"  deployment: web\n  requestsPerSecond: 10\n  load: {constant: 1}\n  colour: red\n",
         "colour"},
        {"  deployment: web\n  load: {constant: 1}\n", "exactly one of requestsPerSecond"},
        {"  deployment: web\n  requestsPerSecond: 1\n  llm: {preset: qwen3-8b-fp8/h100}\n"
         "  load: {constant: 1}\n",
         "exactly one of requestsPerSecond"},
        {"  deployment: web\n  llm: {preset: gpt-9}\n  load: {constant: 1}\n", "qwen3-8b-fp8/h100"},
        {"  deployment: web\n  requestsPerSecond: 1\n  load: {constant: 1, diurnal: {mean: 1}}\n",
         "exactly one of constant"},
        {"  deployment: web\n  requestsPerSecond: 1\n  load: {constant: 1}\n"
         "  autoscaler: {hpa: {maxReplicas: 3, behavior: {scaleUp: {selectPolicy: Most}}}}\n",
         "Max, Min or Disabled"},
        {"  deployment: nope\n  requestsPerSecond: 1\n  load: {constant: 1}\n",
         "no Deployment named \"nope\""},
        {"  deployment: web\n  requestsPerSecond: 1\n  load: {trace: missing.csv}\n",
         "readable regular file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char m[4096];
        snprintf(m, sizeof m, "%s%s%s", DEPLOYMENT("1"), SERVICE, cases[i].spec);
        struct gp_diag d = {""};
        enum gp_err err = sim(m, 600, &a, &r, &d);
        if (err == GP_OK || !strstr(d.msg, cases[i].msg))
            fail_msg("case %zu: err %d, message \"%s\", expected \"%s\"", i, (int)err, d.msg,
                     cases[i].msg);
    }
    /* no services: none in the result */
    struct gp_diag d = {""};
    assert_int_equal(sim(DEPLOYMENT("1"), 600, &a, &r, &d), GP_OK);
    assert_int_equal(r.nservices, 0);
    assert_null(r.services);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_replicas_erlang),
        cmocka_unit_test(test_hpa_cold_start),
        cmocka_unit_test(test_scale_to_zero),
        cmocka_unit_test(test_reader_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
