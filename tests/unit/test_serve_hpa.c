/* test_serve_hpa.c - the HPA's algorithm against cases worked by hand from
 * kubernetes/kubernetes pkg/controller/podautoscaler (replica_calculator.go,
 * horizontal.go): the tolerance, missing and unready pods in each
 * direction, the CPU readiness rules, the default and custom `behavior`
 * policies with selectPolicy Max, Min and Disabled, the stabilisation
 * windows, min/max bounds, and a sync without metrics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "serve/hpa.h"

static struct gp_hpa_pod ready_pod(double m)
{
    return (struct gp_hpa_pod){.phase = GP_HPA_POD_RUNNING, .has_metric = true, .metric = m};
}

static int32_t calc(const struct gp_hpa_spec *s, int32_t cur, const struct gp_hpa_pod *p,
                    uint32_t n)
{
    struct gp_hpa_proposal pr = gp_serve_hpa_replicas(s, cur, p, n, 1000.0);
    assert_true(pr.valid);
    return pr.replicas;
}

static void test_tolerance(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    struct gp_hpa_pod p[10];
    for (int i = 0; i < 10; i++)
        p[i] = ready_pod(105); /* ratio 1.05: within 0.1 */
    assert_int_equal(calc(&s, 4, p, 4), 4);
    for (int i = 0; i < 4; i++)
        p[i] = ready_pod(109); /* 1.09: within */
    assert_int_equal(calc(&s, 4, p, 4), 4);
    for (int i = 0; i < 4; i++)
        p[i] = ready_pod(111); /* 1.11: out, ceil(4.44) = 5 */
    assert_int_equal(calc(&s, 4, p, 4), 5);
    for (int i = 0; i < 4; i++)
        p[i] = ready_pod(91); /* 0.91: within */
    assert_int_equal(calc(&s, 4, p, 4), 4);
    for (int i = 0; i < 4; i++)
        p[i] = ready_pod(115); /* ceil(1.15 x 4) = 5 */
    assert_int_equal(calc(&s, 4, p, 4), 5);
    for (int i = 0; i < 10; i++)
        p[i] = ready_pod(50); /* ceil(0.5 x 10) = 5 */
    assert_int_equal(calc(&s, 10, p, 10), 5);
    s.tolerance = 0.2; /* a per-HPA tolerance (KEP-4951) */
    for (int i = 0; i < 4; i++)
        p[i] = ready_pod(115);
    assert_int_equal(calc(&s, 4, p, 4), 4);
}

static void test_missing_and_unready(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    struct gp_hpa_pod p[8];
    /* scale-down, 2 missing count at the target: (4 x 40 + 2 x 100) / 6 =
     * 60 -> ceil(0.6 x 6) = 4 (without the rule: ceil(0.4 x 4) = 2) */
    for (int i = 0; i < 4; i++)
        p[i] = ready_pod(40);
    p[4] = p[5] = (struct gp_hpa_pod){.phase = GP_HPA_POD_RUNNING};
    assert_int_equal(calc(&s, 6, p, 6), 4);
    /* scale-up, 2 missing count as 0: 2 x 130 / 4 = 65 reverses the
     * direction -> current (the plain rule would say ceil(1.3 x 2) = 3) */
    p[0] = p[1] = ready_pod(130);
    p[2] = p[3] = (struct gp_hpa_pod){.phase = GP_HPA_POD_RUNNING};
    assert_int_equal(calc(&s, 4, p, 4), 4);
    /* scale-up, 2 pending count as 0: 300 / 4 = 75 -> current (plain: 3) */
    p[0] = p[1] = ready_pod(150);
    p[2] = p[3] = (struct gp_hpa_pod){.phase = GP_HPA_POD_PENDING};
    assert_int_equal(calc(&s, 4, p, 4), 4);
    /* a real scale-up with pending pods: 2 x 400 / 4 = 200 -> ceil(2 x 4) = 8 */
    p[0] = p[1] = ready_pod(400);
    assert_int_equal(calc(&s, 4, p, 4), 8);
    /* scale-down ignores pending pods: ceil(0.5 x 2) = 1 */
    p[0] = p[1] = ready_pod(50);
    assert_int_equal(calc(&s, 4, p, 4), 1);
    /* deleting and failed pods are ignored */
    p[2] = ready_pod(1000);
    p[2].deleting = true;
    p[3] = ready_pod(1000);
    p[3].phase = GP_HPA_POD_FAILED;
    assert_int_equal(calc(&s, 4, p, 4), 1);
    /* no pod with a metric: invalid */
    p[0] = p[1] = (struct gp_hpa_pod){.phase = GP_HPA_POD_PENDING};
    struct gp_hpa_proposal pr = gp_serve_hpa_replicas(&s, 2, p, 2, 0);
    assert_false(pr.valid);
    assert_int_equal(pr.replicas, 2);
}

static void test_cpu_readiness(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    s.cpu = true;
    struct gp_hpa_pod p[2] = {ready_pod(100), ready_pod(400)};
    p[0].has_ready = p[0].ready = true; /* long ready */
    p[0].start_s = -1000;
    /* p[1] started at 0, ready at 10; at 20 its metric (taken at 20) is
     * within a window (30 s) of the transition: unready, left out; the
     * ready pod alone is at the target -> current */
    p[1].has_ready = p[1].ready = true;
    p[1].start_s = 0;
    p[1].ready_change_s = 10;
    p[1].metric_t_s = 20;
    struct gp_hpa_proposal pr = gp_serve_hpa_replicas(&s, 2, p, 2, 20);
    assert_int_equal(pr.unready, 1);
    assert_int_equal(pr.replicas, 2);
    /* at 45 with a metric from 45, a full window after: ready, 250 -> 5 */
    p[1].metric_t_s = 45;
    pr = gp_serve_hpa_replicas(&s, 2, p, 2, 45);
    assert_int_equal(pr.unready, 0);
    assert_int_equal(pr.replicas, 5);
    /* past the initialisation period, unready and never ready since its
     * start (transition within the 30 s readiness delay): unready */
    p[1].ready = false;
    p[1].ready_change_s = 20;
    pr = gp_serve_hpa_replicas(&s, 2, p, 2, 400);
    assert_int_equal(pr.unready, 1);
    /* the same pod, once ready later on, then not: it counts */
    p[1].ready_change_s = 100;
    pr = gp_serve_hpa_replicas(&s, 2, p, 2, 400);
    assert_int_equal(pr.unready, 0);
    /* no Ready condition: unready */
    p[1].has_ready = false;
    pr = gp_serve_hpa_replicas(&s, 2, p, 2, 400);
    assert_int_equal(pr.unready, 1);
    /* the rules are the CPU's only */
    s.cpu = false;
    pr = gp_serve_hpa_replicas(&s, 2, p, 2, 400);
    assert_int_equal(pr.unready, 0);
}

static void test_default_scale_up(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    struct gp_hpa_state st;
    memset(&st, 0, sizeof st);
    /* max(1 + 4, ceil(1 x 2)) = 5 */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 1, 10, true), 5);
    /* 10 s later the +4 is within the 15 s period: the period began at 1 */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 10, 5, 10, true), 5);
    /* at 15 it is not (cutoff 0, the event at 0 is not after it): max(9, 10) */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 15, 5, 10, true), 10);
    /* at 30 from 10: max(14, 20) = 20, held to max 16 */
    s.max_replicas = 16;
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 30, 10, 40, true), 16);
}

static void test_select_policy(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    struct gp_hpa_state st;
    memset(&st, 0, sizeof st);
    assert_int_equal(gp_serve_hpa_up_limit(&s.up, &st, 0, 10), 20); /* Max of 14, 20 */
    s.up.select = GP_HPA_SELECT_MIN;
    assert_int_equal(gp_serve_hpa_up_limit(&s.up, &st, 0, 10), 14);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 10, 50, true), 14);
    s.up.select = GP_HPA_SELECT_DISABLED;
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 100, 14, 50, true), 14);
    /* scale-down: Pods 1 and Percent 50 per 60 s */
    s.down = (struct gp_hpa_rules){.window_s = 0,
                                   .select = GP_HPA_SELECT_MAX,
                                   .policies = {{GP_HPA_PODS, 1, 60}, {GP_HPA_PERCENT, 50, 60}},
                                   .npolicies = 2};
    memset(&st, 0, sizeof st);
    /* Max change: min(9, int(10 x 0.5) = 5) = 5; Min change: max(9, 5) = 9 */
    assert_int_equal(gp_serve_hpa_down_limit(&s.down, &st, 0, 10), 5);
    s.down.select = GP_HPA_SELECT_MIN;
    assert_int_equal(gp_serve_hpa_down_limit(&s.down, &st, 0, 10), 9);
    /* Percent rounds toward zero: int(3 x 0.5) = 1 */
    s.down.select = GP_HPA_SELECT_MAX;
    assert_int_equal(gp_serve_hpa_down_limit(&s.down, &st, 0, 3), 1);
    /* Disabled: no scale-down at all */
    s.down.select = GP_HPA_SELECT_DISABLED;
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 10, 1, true), 10);
}

static void test_policy_periods(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    s.down = (struct gp_hpa_rules){.window_s = 0,
                                   .select = GP_HPA_SELECT_MAX,
                                   .policies = {{GP_HPA_PODS, 1, 60}},
                                   .npolicies = 1};
    struct gp_hpa_state st;
    memset(&st, 0, sizeof st);
    /* one pod per minute: 5 -> 4 at 0, then held (start 5 - 1) until the
     * event at 0 leaves the period at 60 */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 5, 1, true), 4);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 15, 4, 1, true), 4);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 45, 4, 1, true), 4);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 60, 4, 1, true), 3);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 75, 3, 1, true), 3);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 120, 3, 1, true), 2);
}

static void test_stabilisation(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    struct gp_hpa_state st;
    memset(&st, 0, sizeof st);
    /* scale-down window 300 s: the highest recommendation of the window */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 10, 10, true), 10);
    for (double t = 15; t < 300; t += 15)
        assert_int_equal(gp_serve_hpa_sync(&s, &st, t, 10, 2, true), 10);
    /* at 300 the 10 of time 0 has left the window: 2 (100 % may go) */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 300, 10, 2, true), 2);
    /* a scale-up window: the lowest recommendation of the last 60 s */
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    s.up.window_s = 60;
    memset(&st, 0, sizeof st);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 2, 2, true), 2);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 15, 2, 6, true), 2);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 45, 2, 6, true), 2);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 60, 2, 6, true), 6);
    /* a flapping proposal within the down window does not flap */
    gp_serve_hpa_spec_default(&s, 1, 100, 100.0);
    memset(&st, 0, sizeof st);
    int32_t cur = 4;
    for (int k = 0; k < 20; k++) {
        cur = gp_serve_hpa_sync(&s, &st, 15.0 * k, cur, k % 2 ? 3 : 6, true);
        assert_int_equal(cur, 6);
    }
}

static void test_bounds_and_missing_metrics(void **state)
{
    (void)state;
    struct gp_hpa_spec s;
    gp_serve_hpa_spec_default(&s, 2, 10, 100.0);
    struct gp_hpa_state st;
    memset(&st, 0, sizeof st);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 12, 12, true), 10); /* above max */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 1, 1, true), 2);    /* below min */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 0, 5, true), 0);    /* scaled to 0 by hand */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 8, 50, true), 10);  /* limit 16, max 10 */
    memset(&st, 0, sizeof st);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 5, 1, true), 2); /* down to min */
    /* no metrics: the count stays, nothing is recorded */
    memset(&st, 0, sizeof st);
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 5, 0, false), 5);
    assert_int_equal(st.nrecs, 0);
    /* an out-of-bounds current is fixed even without metrics */
    assert_int_equal(gp_serve_hpa_sync(&s, &st, 0, 11, 0, false), 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerance),     cmocka_unit_test(test_missing_and_unready),
        cmocka_unit_test(test_cpu_readiness), cmocka_unit_test(test_default_scale_up),
        cmocka_unit_test(test_select_policy), cmocka_unit_test(test_policy_periods),
        cmocka_unit_test(test_stabilisation), cmocka_unit_test(test_bounds_and_missing_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
