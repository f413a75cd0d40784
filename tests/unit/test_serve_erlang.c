/* test_serve_erlang.c - Erlang B and C against their closed forms worked
 * by hand, the M/M/c sojourn time's distribution (M/M/1's is exponential,
 * M/M/2 at a = 1 is e^-t (1 + t/3)) and its percentiles, and the
 * percentiles of a mixture of stretches. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "serve/erlang.h"

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

/* C(c, a) = (a^c/c! c/(c-a)) / (sum_{k<c} a^k/k! + a^c/c! c/(c-a)) */
static double erlang_c_closed(uint32_t c, double a)
{
    double term = 1, sum = 0;
    for (uint32_t k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double top = term * c / (c - a);
    return top / (sum + top);
}

static void test_erlang_c_hand(void **state)
{
    (void)state;
    /* c = 2, a = 1: B(1) = 1/2, B(2) = 0.5 / 2.5 = 0.2; C = 0.4 / 1.2 = 1/3 */
    near(gp_serve_erlang_b(2, 1.0), 0.2, 1e-12);
    near(gp_serve_erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
    /* M/M/1: C = rho */
    near(gp_serve_erlang_c(1, 0.7), 0.7, 1e-12);
    /* c = 3, a = 2: top = 8/6 x 3 = 4, sum = 1 + 2 + 2 = 5: C = 4/9 */
    near(gp_serve_erlang_c(3, 2.0), 4.0 / 9.0, 1e-12);
    near(gp_serve_mmc_wait_mean_s(3, 2.0, 1.0), 4.0 / 9.0, 1e-12);
    /* the recursion agrees with the closed form where the latter is stable */
    for (uint32_t c = 1; c <= 40; c++)
        for (double rho = 0.05; rho < 1.0; rho += 0.1)
            near(gp_serve_erlang_c(c, rho * c), erlang_c_closed(c, rho * c), 1e-9);
    /* bounds */
    assert_true(gp_serve_erlang_c(4, 4.0) == 1.0);
    assert_true(gp_serve_erlang_c(4, 0.0) == 0.0);
    assert_true(gp_serve_erlang_c(0, 1.0) == 1.0);
    assert_true(isinf(gp_serve_mmc_wait_mean_s(2, 2.0, 1.0)));
    /* large c stays finite (the factorials of the closed form overflow) */
    double big = gp_serve_erlang_c(2000, 1900.0);
    assert_true(big > 0 && big < 1);
}

static void test_sojourn(void **state)
{
    (void)state;
    /* M/M/1, mu 1, lambda 0.5: T ~ Exp(0.5); p99 = ln 100 / 0.5 */
    struct gp_serve_lat l = gp_serve_mmc_lat(1, 0.5, 1.0, 1.0);
    for (double t = 0.1; t < 30; t += 1.7)
        near(gp_serve_lat_sf(&l, t), exp(-0.5 * t), 1e-12);
    near(gp_serve_mmc_quantile_s(1, 0.5, 1.0, 0.99), log(100.0) / 0.5, 1e-6);
    near(gp_serve_mmc_quantile_s(1, 0.5, 1.0, 0.50), log(2.0) / 0.5, 1e-6);
    /* M/M/2, lambda = mu = 1: pw = 1/3, theta = mu: P(T > t) = e^-t (1 + t/3);
     * the median by hand: 0.975 gives 0.4998, 0.97 gives 0.5017 */
    l = gp_serve_mmc_lat(2, 1.0, 1.0, 1.0);
    for (double t = 0.1; t < 20; t += 0.9)
        near(gp_serve_lat_sf(&l, t), exp(-t) * (1 + t / 3), 1e-9);
    double med = gp_serve_mmc_quantile_s(2, 1.0, 1.0, 0.5);
    assert_true(med > 0.970 && med < 0.975);
    near(exp(-med) * (1 + med / 3), 0.5, 1e-8);
    /* near theta = mu the two branches meet */
    struct gp_serve_lat a = gp_serve_mmc_lat(2, 1.0 + 1e-7, 1.0, 1.0);
    near(gp_serve_lat_sf(&a, 3.0), gp_serve_lat_sf(&l, 3.0), 1e-6);
    /* more servers, less latency; more load, more */
    assert_true(gp_serve_mmc_quantile_s(4, 3.0, 1.0, 0.99) <
                gp_serve_mmc_quantile_s(4, 3.5, 1.0, 0.99));
    assert_true(gp_serve_mmc_quantile_s(5, 3.5, 1.0, 0.99) <
                gp_serve_mmc_quantile_s(4, 3.5, 1.0, 0.99));
}

static void test_mixture(void **state)
{
    (void)state;
    /* half the requests Exp(1) (no wait), half after a 10 s backlog:
     * P(T > t) = e^-t / 2 + 1/2 below 10 s; the median is
     * 10 + ln(1 + e^-10), the 25th percentile ln 2 */
    struct gp_serve_lat m[2] = {
        {.weight = 5, .pw = 0, .mu_per_s = 1.0},
        {.weight = 5, .pw = 0, .mu_per_s = 1.0, .offset_s = 10.0},
    };
    near(gp_serve_lat_quantile(m, 2, 0.5), 10.0 + log(1 + exp(-10.0)), 1e-6);
    near(gp_serve_lat_quantile(m, 2, 0.25), log(2.0), 1e-6);
    /* weights matter, zero weights do not */
    m[1].weight = 0;
    near(gp_serve_lat_quantile(m, 2, 0.5), log(2.0), 1e-6);
    m[0].weight = 0;
    assert_true(gp_serve_lat_quantile(m, 2, 0.5) == 0);
    /* an unstable stretch has no finite percentile */
    struct gp_serve_lat u = gp_serve_mmc_lat(1, 2.0, 1.0, 1.0);
    assert_true(isinf(gp_serve_lat_quantile(&u, 1, 0.5)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_erlang_c_hand),
        cmocka_unit_test(test_sojourn),
        cmocka_unit_test(test_mixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
