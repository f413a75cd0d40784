/* test_sim_rollouts.c - rolling updates of a served Deployment in timed
 * runs (sim/rollouts.c): rollouts worked by hand (surge with room; no room
 * and maxUnavailable 0: stalled; no room and maxUnavailable 1: it proceeds
 * one replica at a time; two overlapping ones), the reader's checks of the
 * strategy and of the list of rollouts, and property tests over random
 * specs on the simulator's path: with a steady count, never more than
 * replicas + maxSurge pods, never fewer than replicas - maxUnavailable
 * ready (Kubernetes' rounding: surge up, unavailable down), and complete
 * whenever there is room for one more replica or maxUnavailable allows;
 * with an HPA at work through several rollouts, never more than the
 * highest count + its maxSurge pods, and each rollout complete or
 * superseded. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/rng.h"

static enum gp_err sim(int nodes, const char *manifest, double horizon_s, struct gp_arena *a,
                       struct gp_sim_result *out, struct gp_diag *d)
{
    static struct gp_cluster cl;
    static struct gp_workload w;
    memset(&cl, 0, sizeof cl);
    memset(&w, 0, sizeof w);
    char c[512];
    snprintf(c, sizeof c,
             "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n"
             "  nodePools:\n  - name: g\n    gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n"
             "    cpu: \"192\"\n    memory: 2Ti\n    count: %d\n    pricePerHour: 8\n",
             nodes);
    enum gp_err err = gp_cluster_parse_yaml(c, strlen(c), "c.yaml", a, &cl, d);
    assert_int_equal(err, GP_OK);
    assert_int_equal(gp_cluster_expand(&cl, a, d), GP_OK);
    err = gp_workload_parse_manifest(manifest, strlen(manifest), "w.yaml", a, &w, d);
    if (err == GP_OK)
        err = gp_workload_finish(&w, a, d);
    if (err != GP_OK)
        return err;
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.horizon_s = horizon_s;
    cfg.sample_s = 60;
    return gp_sim_run(&cfg, &cl, &w, a, out, d);
}

/* A Deployment of `replicas` one-GPU pods served at 10 rps each, a cold
 * start, and a rollout at `at` with the strategy given. */
static void manifest(char *b, size_t n, int replicas, const char *cold, const char *at,
                     const char *surge, const char *unavailable)
{
    snprintf(b, n,
             "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
             "  replicas: %d\n  selector: {matchLabels: {app: web}}\n  template:\n"
             "    metadata: {labels: {app: web}}\n    spec:\n      containers:\n"
             "      - name: m\n        image: m\n        resources:\n"
             "          limits: {nvidia.com/gpu: 1, cpu: \"4\", memory: 16Gi}\n---\n"
             "apiVersion: gpuplane.io/v1\nkind: InferenceService\nmetadata: {name: web}\n"
             "spec:\n  deployment: web\n  requestsPerSecond: 10\n  coldStart: %s\n"
             "  load: {constant: %d}\n"
             "  rollout: {at: %s, maxSurge: \"%s\", maxUnavailable: \"%s\"}\n",
             replicas, cold, replicas * 5, at, surge, unavailable);
}

static const struct gp_sim_rollout *one(int nodes, int replicas, const char *surge,
                                        const char *unavailable, struct gp_arena *a,
                                        struct gp_sim_result *r)
{
    char m[2048];
    struct gp_diag d = {""};
    manifest(m, sizeof m, replicas, "60s", "10m", surge, unavailable);
    assert_int_equal(sim(nodes, m, 3 * 3600, a, r, &d), GP_OK);
    assert_int_equal(r->nservices, 1);
    assert_true(r->services[0].has_rollout);
    return &r->services[0].rollout;
}

static void test_surge_with_room(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    /* 6 replicas, surge 2, unavailable 0, 8 GPUs: at 600 two new pods
     * bind, ready at 660; then two old ones go, and at the next reconcile
     * (661) two more new ones come: three waves of 60 s and two
     * reconciles of 1 s between them: complete in 182 s, never below 6
     * ready, 8 pods and 2 spare GPUs at most */
    const struct gp_sim_rollout *ro = one(1, 6, "2", "0", &a, &r);
    assert_int_equal(ro->status, GP_ROLLOUT_COMPLETE);
    assert_true(ro->start_s == 600);
    assert_true(ro->duration_s == 182);
    assert_int_equal(ro->replicas, 6);
    assert_int_equal(ro->max_surge, 2);
    assert_int_equal(ro->max_unavailable, 0);
    assert_int_equal(ro->min_ready, 6);
    assert_int_equal(ro->max_pods, 8);
    assert_true(ro->spare_gpus_peak == 2);
    assert_false(ro->no_room);
    assert_int_equal(r.services[0].cold_starts, 12);
    gp_arena_free(&a);
}

static void test_no_room_stalls(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    /* 8 replicas fill the 8 GPUs; the surge pods never bind and
     * maxUnavailable 0 lets no old one go: stalled (no progress for
     * 600 s), the old 8 still serving */
    const struct gp_sim_rollout *ro = one(1, 8, "2", "0", &a, &r);
    assert_int_equal(ro->status, GP_ROLLOUT_STALLED);
    assert_true(ro->no_room);
    assert_true(ro->no_room_s >= 600 && ro->no_room_s <= 602);
    assert_int_equal(ro->min_ready, 8);
    assert_int_equal(ro->max_pods, 10);
    assert_true(ro->spare_gpus_peak == 0);
    assert_true(r.services[0].replicas[r.services[0].n - 1] == 8);
    gp_arena_free(&a);
}

static void test_no_room_through_unavailable(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    /* the same with maxUnavailable 1: at each step one old pod goes, its
     * GPU takes a waiting new pod at once, which loads for 60 s: 8 steps,
     * 480 s, never below 7 ready */
    const struct gp_sim_rollout *ro = one(1, 8, "2", "1", &a, &r);
    assert_int_equal(ro->status, GP_ROLLOUT_COMPLETE);
    assert_true(ro->no_room);
    assert_true(ro->duration_s == 480);
    assert_int_equal(ro->min_ready, 7);
    assert_int_equal(ro->max_pods, 10);
    /* percent: 25 % of 8 unavailable is 2, two steps at a time: 240 s */
    ro = one(1, 8, "25%", "25%", &a, &r);
    assert_int_equal(ro->status, GP_ROLLOUT_COMPLETE);
    assert_int_equal(ro->max_surge, 2);
    assert_int_equal(ro->max_unavailable, 2);
    assert_true(ro->duration_s == 240);
    assert_int_equal(ro->min_ready, 6);
    gp_arena_free(&a);
}

static void test_reader(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    const char *bad[][2] = {
        {"25", "120%"},
        {"-1", "0"},
        {"1.5", "0"},
        {"x", "0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char m[2048];
        struct gp_diag d = {""};
        manifest(m, sizeof m, 2, "60s", "10m", bad[i][0], bad[i][1]);
        assert_int_equal(sim(1, m, 3600, &a, &r, &d), GP_EINVALID);
        assert_non_null(strstr(d.msg, "InferenceService/web.spec.rollout.max"));
    }
    char m[2048];
    struct gp_diag d = {""};
    manifest(m, sizeof m, 2, "60s", "10m", "1", "0");
    char *at = strstr(m, "at: 10m, ");
    assert_non_null(at);
    memmove(at, at + 9, strlen(at + 9) + 1); /* no `at` */
    assert_int_equal(sim(1, m, 3600, &a, &r, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "rollout"));
    gp_arena_free(&a);
}

/* Two rollouts 30 s apart, each surge 2 and unavailable 0, of 6
 * replicas on 8 GPUs with a 60 s model load. At 600 the first one's two
 * new pods bind (ready at 660); at 630 the second template comes: its
 * ReplicaSet starts at 0 (8 pods, 6 + 2, are there), and the old ones may
 * lose 8 - 6 - 0 = 2: the first template's 6 are all available, the first
 * rollout's 2 loading pods go ("rollover"); at 631 the new set grows by
 * 8 - 6 = 2 (ready at 691), and from there in three waves of 60 s and
 * two reconciles of 1 s as one rollout alone: complete at 813, 183 s
 * after it began; the first one superseded after 30 s. 6 + 2 + 6 cold
 * starts. */
static void test_overlapping(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    char m[2048];
    struct gp_diag d = {""};
    manifest(m, sizeof m, 6, "60s", "10m", "2", "0");
    char *ro = strstr(m, "  rollout: ");
    assert_non_null(ro);
    snprintf(ro, sizeof m - (size_t)(ro - m),
             "  rollouts:\n  - {at: 10m, maxSurge: 2, maxUnavailable: 0}\n"
             "  - {at: 630s, maxSurge: 2, maxUnavailable: 0}\n");
    assert_int_equal(sim(1, m, 3600, &a, &r, &d), GP_OK);
    const struct gp_sim_service *s = &r.services[0];
    assert_true(s->has_rollout);
    assert_int_equal(s->nrollouts, 2);
    const struct gp_sim_rollout *r1 = &s->rollouts[0], *r2 = &s->rollouts[1];
    assert_int_equal(r1->status, GP_ROLLOUT_SUPERSEDED);
    assert_true(r1->start_s == 600 && r1->duration_s == 30);
    assert_int_equal(r1->max_pods, 8);
    assert_int_equal(r1->min_ready, 6);
    assert_int_equal(r2->status, GP_ROLLOUT_COMPLETE);
    assert_true(r2->start_s == 630);
    assert_true(r2->duration_s == 183);
    assert_int_equal(r2->min_ready, 6);
    assert_int_equal(r2->max_pods, 8);
    assert_int_equal(r2->replicas_low, 6);
    assert_int_equal(r2->replicas_high, 6);
    assert_true(r2->below_min_available_s == 0);
    assert_int_equal(s->cold_starts, 14);
    /* the first rollout is also `rollout` */
    assert_int_equal(s->rollout.status, GP_ROLLOUT_SUPERSEDED);
    gp_arena_free(&a);
}

/* A scale-up at a rollout's start: 4 replicas (no model load) serve 60
 * rps at 10 each; the HPA (rps per pod, target 10) at 15 s sees 15 per
 * pod and asks for ceil(4 x 1.5) = 6; the rollout (surge 2, unavailable 0)
 * begins then: the first template's set, annotated 4, makes it a scaling
 * event, the one active set goes to 6, then the new one grows to 8 - 6 =
 * 2, and none may go (8 - 6 - 2 unready = 0): 4 ready against the new
 * count's floor of 6 for one reconcile (below_min_available_s 1). At 16
 * all 8 are ready: 2 old go; 17: 2 new; 18: 2 old; 19: 2 new; 20: the last
 * 2 old: complete in 5 s at 6, 8 pods at most; 4 + 2 + 6 binds. */
static void test_scale_at_start(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    char m[2048];
    struct gp_diag d = {""};
    manifest(m, sizeof m, 4, "0s", "15s", "2", "0");
    char *cut = strstr(m, "  load: ");
    assert_non_null(cut);
    snprintf(cut, sizeof m - (size_t)(cut - m),
             "  load: {constant: 60}\n  autoscaler:\n    hpa: {minReplicas: 1, maxReplicas: 10, "
             "metric: rps, target: 10}\n  rollout: {at: 15s, maxSurge: 2, maxUnavailable: 0}\n");
    assert_int_equal(sim(1, m, 600, &a, &r, &d), GP_OK);
    const struct gp_sim_service *s = &r.services[0];
    const struct gp_sim_rollout *ro = &s->rollouts[0];
    assert_int_equal(ro->status, GP_ROLLOUT_COMPLETE);
    assert_true(ro->start_s == 15);
    assert_true(ro->duration_s == 5);
    assert_int_equal(ro->replicas, 6);
    assert_int_equal(ro->replicas_low, 6);
    assert_int_equal(ro->replicas_high, 6);
    assert_int_equal(ro->min_ready, 4);
    assert_int_equal(ro->max_pods, 8);
    assert_true(ro->below_min_available_s == 1);
    assert_int_equal(s->cold_starts, 12);
    assert_true(s->replicas[s->n - 1] == 6);
    gp_arena_free(&a);
}

/* Bad rollouts: out of order, the wrong types, both forms: one line
 * naming the field. */
static void test_reader_rollouts(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    const char *bad[][2] = {
        {"  rollouts:\n  - {at: 1h}\n  - {at: 30m}\n", "spec.rollouts[1].at"},
        {"  rollouts:\n  - {at: 1h}\n  - {at: 1h}\n", "increasing time"},
        {"  rollouts: {at: 1h}\n", "spec.rollouts"},
        {"  rollouts: [1h]\n", "spec.rollouts[0]"},
        {"  rollouts:\n  - {at: [1h]}\n", "spec.rollouts[0].at"},
        {"  rollouts:\n  - {at: 1h, maxSurge: {a: 1}}\n", "spec.rollouts[0].maxSurge"},
        {"  rollouts:\n  - {at: 1h, maxUnavailable: 1.5}\n", "spec.rollouts[0].maxUnavailable"},
        {"  rollouts:\n  - {at: 1h, surge: 1}\n", "spec.rollouts[0]"},
        {"  rollout: {at: 1h}\n  rollouts:\n  - {at: 2h}\n", "not both"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char m[2048];
        struct gp_diag d = {""};
        manifest(m, sizeof m, 2, "60s", "10m", "1", "0");
        char *ro = strstr(m, "  rollout: ");
        assert_non_null(ro);
        snprintf(ro, sizeof m - (size_t)(ro - m), "%s", bad[i][0]);
        assert_int_equal(sim(1, m, 3600, &a, &r, &d), GP_EINVALID);
        if (!strstr(d.msg, bad[i][1]) || strchr(d.msg, '\n'))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, d.msg, bad[i][1]);
        assert_non_null(strstr(d.msg, "w.yaml:"));
    }
    gp_arena_free(&a);
}

/* Kubernetes' fenceposts, by integer arithmetic */
static void fenceposts(int replicas, int s, bool sp, int u, bool up, int *ms, int *mu)
{
    *ms = sp ? (s * replicas + 99) / 100 : s;
    *mu = up ? u * replicas / 100 : u;
    if (*ms == 0 && *mu == 0)
        *mu = 1;
}

static void test_property(void **state)
{
    (void)state;
    struct gp_rng g;
    gp_rng_seed(&g, 13);
    int complete = 0, stalled = 0;
    for (int it = 0; it < 150; it++) {
        struct gp_arena a;
        gp_arena_init(&a);
        int nodes = 1 + (int)gp_rng_below(&g, 2);
        int cap = 8 * nodes;
        /* a full cluster a quarter of the time: no room for a surge */
        int replicas = gp_rng_below(&g, 4) == 0 ? cap : 1 + (int)gp_rng_below(&g, (uint64_t)cap);
        bool sp = gp_rng_below(&g, 2), up = gp_rng_below(&g, 2);
        int s = sp ? (int)gp_rng_below(&g, 101) : (int)gp_rng_below(&g, 4);
        int u = up ? (int)gp_rng_below(&g, 101) : (int)gp_rng_below(&g, 4);
        char ss[16], us[16], cold[64];
        snprintf(ss, sizeof ss, "%d%s", s, sp ? "%" : "");
        snprintf(us, sizeof us, "%d%s", u, up ? "%" : "");
        snprintf(cold, sizeof cold, "uniform(%ds,%ds)", 5 + (int)gp_rng_below(&g, 30),
                 40 + (int)gp_rng_below(&g, 80));
        char m[2048];
        manifest(m, sizeof m, replicas, cold, "10m", ss, us);
        struct gp_sim_result r;
        struct gp_diag d = {""};
        assert_int_equal(sim(nodes, m, 3 * 3600, &a, &r, &d), GP_OK);
        const struct gp_sim_rollout *ro = &r.services[0].rollout;
        int ms, mu;
        fenceposts(replicas, s, sp, u, up, &ms, &mu);
        assert_int_equal(ro->replicas, replicas);
        assert_int_equal(ro->max_surge, ms);
        assert_int_equal(ro->max_unavailable, mu);
        int floor_ready = replicas - mu > 0 ? replicas - mu : 0;
        assert_true(ro->min_ready >= floor_ready);
        assert_true(ro->max_pods <= replicas + ms);
        if (replicas < cap || mu > 0) {
            assert_int_equal(ro->status, GP_ROLLOUT_COMPLETE);
            complete++;
        } else {
            assert_int_equal(ro->status, GP_ROLLOUT_STALLED);
            assert_true(ro->no_room);
            stalled++;
        }
        gp_arena_free(&a);
    }
    assert_true(complete > 100 && stalled > 0);
}

/* An HPA following a diurnal load (an hour's period) through two or
 * three rollouts of random strategies at random times: never more pods
 * than the highest spec.replicas + its maxSurge, the time below the
 * floor within the rollout, every rollout but the last complete or
 * superseded and the last complete, and the autoscaler at work during
 * most of them. */
static void test_property_autoscaled(void **state)
{
    (void)state;
    struct gp_rng g;
    gp_rng_seed(&g, 1313);
    int scaled = 0, superseded = 0, complete = 0;
    for (int it = 0; it < 40; it++) {
        struct gp_arena a;
        gp_arena_init(&a);
        char m[4096];
        manifest(m, sizeof m, 4, "uniform(30s,150s)", "10m", "1", "0");
        char *cut = strstr(m, "  load: ");
        assert_non_null(cut);
        int n = snprintf(cut, sizeof m - (size_t)(cut - m),
                         "  load: {diurnal: {mean: 40, amplitude: 0.8, period: 30m}}\n"
                         "  autoscaler:\n    hpa: {minReplicas: 2, maxReplicas: 10, "
                         "metric: rps, target: 7}\n  rollouts:\n");
        cut += n;
        int nro = 2 + (int)gp_rng_below(&g, 2);
        double at = 0;
        int ms[3], ref[3];
        for (int k = 0; k < nro; k++) {
            at += 20 + (double)gp_rng_below(&g, 500);
            bool sp = gp_rng_below(&g, 2), up = gp_rng_below(&g, 2);
            int sv = sp ? (int)gp_rng_below(&g, 101) : (int)gp_rng_below(&g, 4);
            int uv = up ? (int)gp_rng_below(&g, 101) : (int)gp_rng_below(&g, 4);
            ms[k] = sv;
            ref[k] = sp;
            n = snprintf(cut, sizeof m - (size_t)(cut - m),
                         "  - {at: %.0fs, maxSurge: \"%d%s\", maxUnavailable: \"%d%s\"}\n", at, sv,
                         sp ? "%" : "", uv, up ? "%" : "");
            cut += n;
        }
        struct gp_sim_result r;
        struct gp_diag d = {""};
        assert_int_equal(sim(3, m, 4 * 3600, &a, &r, &d), GP_OK);
        const struct gp_sim_service *s = &r.services[0];
        assert_int_equal(s->nrollouts, (size_t)nro);
        for (int k = 0; k < nro; k++) {
            const struct gp_sim_rollout *ro = &s->rollouts[k];
            int hi = ro->replicas_high;
            int cap = hi + (ref[k] ? (ms[k] * hi + 99) / 100 : ms[k]);
            if (ro->max_pods > cap)
                fail_msg("run %d rollout %d: %d pods, at most %d", it, k, ro->max_pods, cap);
            assert_true(ro->replicas_low <= ro->replicas && ro->replicas <= hi);
            assert_true(ro->below_min_available_s <= ro->duration_s);
            if (k + 1 < nro)
                assert_true(ro->status == GP_ROLLOUT_COMPLETE ||
                            ro->status == GP_ROLLOUT_SUPERSEDED);
            else
                assert_int_equal(ro->status, GP_ROLLOUT_COMPLETE);
            scaled += ro->replicas_low != hi;
            superseded += ro->status == GP_ROLLOUT_SUPERSEDED;
            complete += ro->status == GP_ROLLOUT_COMPLETE;
        }
        gp_arena_free(&a);
    }
    if (!(scaled > 20 && superseded > 20 && complete > 50))
        fail_msg("scaled %d, superseded %d, complete %d", scaled, superseded, complete);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_surge_with_room),
        cmocka_unit_test(test_no_room_stalls),
        cmocka_unit_test(test_no_room_through_unavailable),
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_overlapping),
        cmocka_unit_test(test_scale_at_start),
        cmocka_unit_test(test_reader_rollouts),
        cmocka_unit_test(test_property),
        cmocka_unit_test(test_property_autoscaled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
