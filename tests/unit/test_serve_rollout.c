/* test_serve_rollout.c - the rolling update: Kubernetes' rounding of
 * maxSurge (up) and maxUnavailable (down) by hand, a rollout worked step by
 * step, and a property test over random strategies and random readiness:
 * never more than replicas + maxSurge pods, never fewer than replicas -
 * maxUnavailable available, and done once every new pod gets ready. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "serve/rollout.h"
#include "util/rng.h"

static void test_fenceposts(void **state)
{
    (void)state;
    int32_t s, u;
    /* 25 % of 10: surge ceil(2.5) = 3, unavailable floor(2.5) = 2 */
    gp_serve_rollout_fenceposts(10, (struct gp_rollout_value){25, true},
                                (struct gp_rollout_value){25, true}, &s, &u);
    assert_int_equal(s, 3);
    assert_int_equal(u, 2);
    /* 10 % of 3: surge ceil(0.3) = 1, unavailable floor(0.3) = 0 */
    gp_serve_rollout_fenceposts(3, (struct gp_rollout_value){10, true},
                                (struct gp_rollout_value){10, true}, &s, &u);
    assert_int_equal(s, 1);
    assert_int_equal(u, 0);
    /* both 0: unavailable 1 */
    gp_serve_rollout_fenceposts(5, (struct gp_rollout_value){0, false},
                                (struct gp_rollout_value){0, true}, &s, &u);
    assert_int_equal(s, 0);
    assert_int_equal(u, 1);
    /* absolute values as given */
    gp_serve_rollout_fenceposts(5, (struct gp_rollout_value){2, false},
                                (struct gp_rollout_value){1, false}, &s, &u);
    assert_int_equal(s, 2);
    assert_int_equal(u, 1);
}

static void test_steps(void **state)
{
    (void)state;
    /* 4 replicas, surge 1, unavailable 1 (the defaults are 25 %/25 %) */
    struct gp_rollout r;
    gp_serve_rollout_start(&r, 4, (struct gp_rollout_value){25, true},
                           (struct gp_rollout_value){25, true});
    int32_t c, d;
    gp_serve_rollout_reconcile(&r, &c, &d);
    /* +1 new (5 = 4 + 1), then old down to keep 3 available: 4 - 1 */
    assert_int_equal(c, 1);
    assert_int_equal(d, 1);
    assert_int_equal(r.old_pods, 3);
    assert_int_equal(r.new_pods, 1);
    /* 4 pods < 5: one more new; none of the new ready, 3 available: no
     * old one may go */
    gp_serve_rollout_reconcile(&r, &c, &d);
    assert_int_equal(c, 1);
    assert_int_equal(d, 0);
    /* nothing ready: no progress */
    gp_serve_rollout_reconcile(&r, &c, &d);
    assert_int_equal(c + d, 0);
    /* one new ready: 4 available, one old may go (5 pods, none created) */
    gp_serve_rollout_ready(&r, 1);
    gp_serve_rollout_reconcile(&r, &c, &d);
    assert_int_equal(c, 0);
    assert_int_equal(d, 1);
    assert_int_equal(r.old_pods, 2);
    assert_false(gp_serve_rollout_done(&r));
    for (int k = 0; k < 10 && !gp_serve_rollout_done(&r); k++) {
        gp_serve_rollout_ready(&r, 4);
        gp_serve_rollout_reconcile(&r, &c, &d);
    }
    assert_true(gp_serve_rollout_done(&r));
}

static void test_invariants_property(void **state)
{
    (void)state;
    struct gp_rng g;
    gp_rng_seed(&g, 13);
    for (int trial = 0; trial < 5000; trial++) {
        int32_t n = 1 + (int32_t)gp_rng_below(&g, 40);
        struct gp_rollout_value s = {(int32_t)gp_rng_below(&g, 5), false};
        struct gp_rollout_value u = {(int32_t)gp_rng_below(&g, 5), false};
        if (gp_rng_below(&g, 2)) {
            s = (struct gp_rollout_value){(int32_t)gp_rng_below(&g, 101), true};
            u = (struct gp_rollout_value){(int32_t)gp_rng_below(&g, 101), true};
        }
        struct gp_rollout r;
        gp_serve_rollout_start(&r, n, s, u);
        int32_t cap = n + r.max_surge, floor_ = n - r.max_unavailable;
        bool done = false;
        for (int step = 0; step < 10000 && !done; step++) {
            int32_t c, d;
            gp_serve_rollout_reconcile(&r, &c, &d);
            if (r.old_pods + r.new_pods > cap || r.old_ready + r.new_ready < floor_)
                fail_msg("trial %d step %d: %d replicas surge %d unavailable %d: %d + %d pods, "
                         "%d + %d available",
                         trial, step, n, r.max_surge, r.max_unavailable, r.old_pods, r.new_pods,
                         r.old_ready, r.new_ready);
            /* some of the new pods get ready (none, some or all) */
            int32_t waiting = r.new_pods - r.new_ready;
            if (waiting > 0)
                gp_serve_rollout_ready(&r, (int32_t)gp_rng_below(&g, (uint64_t)waiting + 1));
            done = gp_serve_rollout_done(&r);
        }
        if (!done)
            fail_msg("trial %d: %d replicas surge %d unavailable %d never completed", trial, n,
                     r.max_surge, r.max_unavailable);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fenceposts),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_invariants_property),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
