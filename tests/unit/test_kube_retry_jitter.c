/* test_kube_retry_jitter.c - the API client's back-off has jitter
 * (kube/retry.c gp_kube_backoff_s; issue 14 item 1: "retries with
 * back-off and jitter"): retries of one attempt number drawn from one
 * seeded RNG are spread over [d/2, d], not one value, and clients seeded
 * apart (gpuplane schedule seeds each binder's client differently, run.c)
 * draw apart, so that replicas and binders retrying after the same 429 or
 * 5xx do not all come back at once. test_kube_client's test_backoff checks
 * the range and the seed's repeatability; both pass with the jitter taken
 * out, this test does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/retry.h"
#include "util/rng.h"

#define DRAWS 64

static void test_spread(void **state)
{
    (void)state;
    struct gp_rng r;
    gp_rng_seed(&r, 1);
    for (unsigned attempt = 1; attempt <= 10; attempt++) {
        double cap = 0.2 * (double)(1u << (attempt - 1));
        if (cap > 30)
            cap = 30;
        double lo = cap, hi = 0;
        for (int i = 0; i < DRAWS; i++) {
            double d = gp_kube_backoff_s(0.2, 30, attempt, &r);
            assert_true(d >= cap / 2 && d <= cap);
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
        }
        /* 64 uniform draws over [cap/2, cap]: the lowest in the bottom
         * fifth and the highest in the top fifth but for ~1e-6 */
        if (lo > cap * 0.6 || hi < cap * 0.9)
            fail_msg("attempt %u: draws in [%g, %g] of [%g, %g]: no jitter", attempt, lo, hi,
                     cap / 2, cap);
    }
}

static void test_seeds_apart(void **state)
{
    (void)state;
    struct gp_rng a, b;
    gp_rng_seed(&a, 2); /* run.c: binder i's client is seeded seed + 1 + i */
    gp_rng_seed(&b, 3);
    int same = 0;
    for (int i = 0; i < DRAWS; i++)
        same += gp_kube_backoff_s(0.2, 30, 3, &a) == gp_kube_backoff_s(0.2, 30, 3, &b);
    assert_true(same < DRAWS / 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_seeds_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
