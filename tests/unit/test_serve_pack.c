/* test_serve_pack.c - dense packing of small models within their latency
 * limits (serve/pack.h), against cases worked by hand: four quarter-GPU
 * models share one time-sliced GPU where one per GPU takes four; a fifth
 * would slow all five to 0.8 and break a 100 ms p99, so it opens a GPU,
 * while a 200 ms limit takes it (not a sixth); memory caps a GPU; MPS's
 * thread limit slows every client alike, so more replicas but fewer GPUs;
 * a limit below a request's own service time is infeasible. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "serve/erlang.h"
#include "serve/pack.h"

#define CAP 256

static uint32_t pack(const struct gp_pack_gpu *g, struct gp_pack_service *s, size_t n,
                     uint32_t *baseline)
{
    static uint32_t gpu_of[CAP], count[CAP], order[CAP];
    static double demand[CAP], mem[CAP];
    static size_t first[CAP];
    struct gp_pack_work w = {CAP, gpu_of, demand, mem, count, first, order};
    return gp_serve_pack(g, s, n, &w, baseline);
}

/* mu 100/s alone, 50/s offered, a quarter of a GPU and 10 GiB each */
static struct gp_pack_service small(double limit_s)
{
    return (struct gp_pack_service){.rps_alone = 100,
                                    .peak_rps = 50,
                                    .limit_s = limit_s,
                                    .demand_milli = 250,
                                    .mem_mib = 10240};
}

static const struct gp_pack_gpu TS = {GP_PACK_TIMESLICE, 8, 81920, 0, 0};

static void test_four_share_one(void **state)
{
    (void)state;
    struct gp_pack_service s[4];
    for (int i = 0; i < 4; i++)
        s[i] = small(0.1);
    uint32_t base;
    /* D = 1000: nobody slows; M/M/1 at 50 of 100: p99 = ln(100) / 50 */
    assert_int_equal(pack(&TS, s, 4, &base), 1);
    assert_int_equal(base, 4);
    for (int i = 0; i < 4; i++) {
        assert_true(s[i].feasible);
        assert_int_equal(s[i].replicas, 1);
        assert_true(fabs(s[i].p99_s - log(100) / 50) < 1e-9);
        assert_true(s[i].speed == 1);
    }
}

static void test_fifth_breaks_the_limit(void **state)
{
    (void)state;
    struct gp_pack_service s[6];
    uint32_t base;
    /* a fifth on the GPU: D = 1250, speed 0.8, mu 80: p99 ln(100) / 30 =
     * 0.154 s > 0.1 s: it goes to a second GPU */
    for (int i = 0; i < 5; i++)
        s[i] = small(0.1);
    assert_int_equal(pack(&TS, s, 5, &base), 2);
    assert_int_equal(base, 5);
    assert_true(fabs(s[4].p99_s - log(100) / 50) < 1e-9);
    /* within 0.2 s five share it (0.154 s each); a sixth: D = 1500, mu
     * 66.7, p99 ln(100) / 16.7 = 0.276 s > 0.2 s: a second GPU */
    for (int i = 0; i < 6; i++)
        s[i] = small(0.2);
    assert_int_equal(pack(&TS, s, 6, &base), 2);
    assert_int_equal(base, 6);
    for (int i = 0; i < 5; i++) {
        assert_true(fabs(s[i].speed - 0.8) < 1e-12);
        assert_true(fabs(s[i].p99_s - log(100) / 30) < 1e-9);
    }
    assert_true(s[5].speed == 1);
}

static void test_memory(void **state)
{
    (void)state;
    struct gp_pack_service s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = small(1);
        s[i].mem_mib = 30720; /* 30 GiB: two fit 80 GiB */
    }
    uint32_t base;
    assert_int_equal(pack(&TS, s, 4, &base), 2);
    /* and the device plugin's replicas per GPU */
    struct gp_pack_gpu two = TS;
    two.max_pods = 2;
    for (int i = 0; i < 4; i++)
        s[i] = small(1);
    assert_int_equal(pack(&two, s, 4, &base), 2);
}

static void test_mps(void **state)
{
    (void)state;
    /* 4 clients of 250 milli each; a model wanting 500 runs at 0.5 (mu
     * 50): one replica cannot keep up with 50/s, two can (M/M/2 at a = 1);
     * 2 models x 2 replicas = 4 clients: one GPU, where one replica per
     * GPU at full speed takes 2 */
    struct gp_pack_gpu g = {GP_PACK_MPS, 4, 81920, 250, 20480};
    struct gp_pack_service s[2];
    for (int i = 0; i < 2; i++) {
        s[i] = small(0.3);
        s[i].demand_milli = 500;
    }
    double p2 = gp_serve_mmc_quantile_s(2, 50, 50, 0.99);
    assert_true(p2 <= 0.3);
    uint32_t base;
    assert_int_equal(pack(&g, s, 2, &base), 1);
    assert_int_equal(base, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(s[i].replicas, 2);
        assert_true(fabs(s[i].speed - 0.5) < 1e-12);
        assert_true(fabs(s[i].p99_s - p2) < 1e-9);
    }
    /* a replica over the client's memory limit cannot go */
    s[0].mem_mib = 30720;
    assert_int_equal(pack(&g, s, 2, &base), 1);
    assert_false(s[0].feasible);
    assert_true(s[1].feasible);
}

static void test_infeasible(void **state)
{
    (void)state;
    /* 10 ms: below a request's own p99 at 100/s (ln(100) / 100 = 46 ms)
     * whatever the replicas */
    struct gp_pack_service s[2] = {small(0.01), small(0.1)};
    uint32_t base;
    assert_int_equal(pack(&TS, s, 2, &base), 1);
    assert_false(s[0].feasible);
    assert_int_equal(s[0].replicas, 0);
    assert_true(s[1].feasible);
    assert_int_equal(base, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_share_one), cmocka_unit_test(test_fifth_breaks_the_limit),
        cmocka_unit_test(test_memory),         cmocka_unit_test(test_mps),
        cmocka_unit_test(test_infeasible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
