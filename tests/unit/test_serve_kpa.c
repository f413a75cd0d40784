/* test_serve_kpa.c - the concurrency autoscaler (Knative's KPA semantics)
 * on cases worked by hand: the steady state, panic on a burst (the panic
 * window's average, no scale-down while panicking, the end of panic a
 * stable window after the last crossing, the 2x scale-down rate), scale to
 * zero after the grace period, and the activator's held requests bringing
 * a replica back from zero. Target 70 (100 x 70 %). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "serve/kpa.h"

/* feeds concurrency c from t0 to t1 and runs the decider every 2 s;
 * returns the last decision */
static struct gp_kpa_decision run(const struct gp_kpa_spec *s, struct gp_kpa_state *st, double t0,
                                  double t1, double c, int32_t *replicas)
{
    struct gp_kpa_decision d = {0};
    for (double t = t0; t < t1; t += 2) {
        gp_serve_kpa_record(s, st, t, t + 2, c);
        d = gp_serve_kpa_decide(s, st, t + 2, *replicas, *replicas);
        *replicas = d.replicas;
    }
    return d;
}

static void test_steady(void **state)
{
    (void)state;
    struct gp_kpa_spec s;
    gp_serve_kpa_spec_default(&s);
    assert_true(fabs(s.target - 70.0) < 1e-12);
    struct gp_kpa_state st;
    gp_serve_kpa_init(&st);
    int32_t n = 2;
    /* 140 in flight on 2: ceil(140 / 70) = 2, panic 2 / 2 = 1 < 2 */
    struct gp_kpa_decision d = run(&s, &st, 0, 120, 140, &n);
    assert_int_equal(n, 2);
    assert_false(d.panicking);
    assert_true(fabs(d.stable - 140) < 1e-9);
    /* 350 from the start on 3: the windows average over the seconds seen
     * so far, ceil(350 / 70) = 5, panic 5 / 3 < 2 */
    gp_serve_kpa_init(&st);
    n = 3;
    d = run(&s, &st, 0, 120, 350, &n);
    assert_int_equal(n, 5);
}

static void test_panic(void **state)
{
    (void)state;
    struct gp_kpa_spec s;
    gp_serve_kpa_spec_default(&s);
    struct gp_kpa_state st;
    gp_serve_kpa_init(&st);
    int32_t n = 1;
    run(&s, &st, 0, 60, 10, &n);
    assert_int_equal(n, 1);
    /* a 6 s burst of 500: panic average 500 -> ceil(500 / 70) = 8, 8 / 1
     * >= 2: panic; the stable average (54 x 10 + 6 x 500) / 60 = 59 asks
     * for 1 only, the panic count wins */
    struct gp_kpa_decision d = run(&s, &st, 60, 66, 500, &n);
    assert_true(d.panicking);
    assert_true(fabs(d.panic - 500) < 1e-9);
    assert_true(fabs(d.stable - 59) < 1e-9);
    assert_int_equal(n, 8);
    /* (the ticks: 62 crossed with ceil(1040 / 6 / 70) = 3 on 1; 64 gave 5,
     * 5 / 3 < 2; 66 gave 8, 8 / 5 < 2: the last crossing was at 62.)
     * Back to 10: no scale-down while panicking, until 60 s after the last
     * crossing: the tick at 122 ends it */
    d = run(&s, &st, 66, 120, 10, &n);
    assert_true(d.panicking);
    assert_int_equal(n, 8);
    d = run(&s, &st, 120, 122, 10, &n);
    assert_false(d.panicking);
    /* then the stable count (ceil(2560 / 60 / 70) = 1), at most halved per
     * tick: 8 -> 4 -> 2 -> 1 */
    assert_int_equal(n, 4);
    run(&s, &st, 122, 124, 10, &n);
    assert_int_equal(n, 2);
    run(&s, &st, 124, 126, 10, &n);
    assert_int_equal(n, 1);
    /* a max scale caps the panic count */
    gp_serve_kpa_init(&st);
    s.max_scale = 3;
    n = 1;
    run(&s, &st, 0, 6, 500, &n);
    assert_int_equal(n, 3);
}

static void test_scale_to_zero(void **state)
{
    (void)state;
    struct gp_kpa_spec s;
    gp_serve_kpa_spec_default(&s);
    struct gp_kpa_state st;
    gp_serve_kpa_init(&st);
    int32_t n = 1;
    run(&s, &st, 0, 60, 10, &n);
    assert_int_equal(n, 1);
    /* no request from 60: the stable average reaches 0 only at 120; the
     * decider asks for 0 from then and gets it 30 s later (grace) */
    run(&s, &st, 60, 118, 0, &n);
    assert_int_equal(n, 1);
    run(&s, &st, 118, 120, 0, &n);
    assert_int_equal(n, 1); /* wants 0 at 120: the grace begins */
    run(&s, &st, 120, 148, 0, &n);
    assert_int_equal(n, 1);
    run(&s, &st, 148, 150, 0, &n);
    assert_int_equal(n, 0);
    /* one request held by the activator for 2 s: stable 2 / 60 > 0 -> 1 */
    struct gp_kpa_decision d = run(&s, &st, 150, 152, 1, &n);
    assert_int_equal(n, 1);
    assert_false(d.panicking);
    /* without scale to zero (or with a min scale) it stays at 1 */
    gp_serve_kpa_init(&st);
    s.scale_to_zero = false;
    n = 1;
    run(&s, &st, 0, 300, 0, &n);
    assert_int_equal(n, 1);
    /* KEDA's cooldown of 300 s is the same rule with another period */
    gp_serve_kpa_init(&st);
    s.scale_to_zero = true;
    s.grace_s = 300;
    n = 1;
    run(&s, &st, 0, 2, 5, &n);
    run(&s, &st, 2, 62, 0, &n); /* the stable average is 0 at 62: wants 0 */
    run(&s, &st, 62, 360, 0, &n);
    assert_int_equal(n, 1);
    run(&s, &st, 360, 364, 0, &n);
    assert_int_equal(n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady),
        cmocka_unit_test(test_panic),
        cmocka_unit_test(test_scale_to_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
