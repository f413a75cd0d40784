/* test_serve_pack.c - dense packing of small models within their latency
 * limits (serve/pack.h), against cases worked by hand: four quarter-GPU
 * models share one time-sliced GPU where one per GPU takes four; a fifth
 * would slow all five to 0.8 and break a 100 ms p99, so it opens a GPU,
 * while a 200 ms limit takes it (not a sixth); memory caps a GPU; MPS's
 * thread limit slows every client alike, so more replicas but fewer GPUs;
 * a limit below a request's own service time is infeasible; an LLM that
 * MPS holds by memory misses its TTFT limit at half the SMs; an LLM's KV
 * cache at a quarter of the memory caps its batch; MIG puts each model on
 * the profile that needs least of a GPU, on layouts the engine allows. */
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
    static struct gp_mig_layout layout[CAP];
    struct gp_pack_work w = {CAP, gpu_of, demand, mem, count, first, order, layout};
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

static const struct gp_pack_gpu TS = {GP_PACK_TIMESLICE, 8, 81920, 0, 0, NULL};

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

static void test_replicas_of_several_gpus(void **state)
{
    (void)state;
    /* four quarter-GPU models share one GPU; a fifth split over 2 GPUs
     * shares none: its one replica (92 ms at full speed) holds 2 whole
     * GPUs, packed or not: 1 + 2 = 3 GPUs against 4 + 2 = 6 */
    struct gp_pack_service s[5];
    for (int i = 0; i < 5; i++)
        s[i] = small(0.1);
    s[4].gpus = 2;
    s[4].demand_milli = 1000;
    uint32_t base;
    assert_int_equal(pack(&TS, s, 5, &base), 3);
    assert_int_equal(base, 6);
    assert_true(s[4].feasible);
    assert_int_equal(s[4].replicas, 1);
    assert_true(s[4].speed == 1);
    for (int i = 0; i < 4; i++)
        assert_true(s[i].speed == 1); /* the 2-GPU replica is no company */
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
    struct gp_pack_gpu g = {GP_PACK_MPS, 4, 81920, 250, 20480, NULL};
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

/* An LLM replica with round figures: ITL = 10 ms at any batch, TTFT = 0.1
 * + 1e-4 x 100 x N = 0.1 + 0.01 N s; a request of 100 in, 10 out stays
 * T(N) = 0.2 + 0.01 N; at most 64 at once (no KV limit unless set). */
static const struct gp_serve_llm LLM = {0.01, 0, 0.1, 1e-4, 64, 0};

static struct gp_pack_service llm(const struct gp_serve_llm *m, double peak, double limit_s)
{
    return (struct gp_pack_service){.peak_rps = peak,
                                    .limit_s = limit_s,
                                    .demand_milli = 1000,
                                    .mem_mib = 30720, /* 30 GiB */
                                    .llm = m,
                                    .in_tokens = 100,
                                    .out_tokens = 10};
}

static void test_llm_mps_fits_but_misses_ttft(void **state)
{
    (void)state;
    struct gp_pack_service s = llm(&LLM, 10, 0.2);
    /* alone, 10 rps: Little's law N = 10 x 0.2 / (1 - 10 x 0.01) = 20/9;
     * TTFT = 0.1 + 0.01 x 20/9 = 0.1222 s; the 64 slots of T(N) = 0.2222 s
     * offered 2.2 Erlangs never wait (Erlang C ~1e-68) */
    double itl, t = gp_serve_pack_latency(&s, 1, 1, 1, &itl);
    assert_true(fabs(t - (0.1 + 0.2 / 9)) < 1e-9);
    assert_true(fabs(itl - 0.01) < 1e-12);
    /* an MPS client of 2 (half the SMs, 40 GiB: its 30 GiB fit) runs at 0.5:
     * as a full-speed replica offered 20 rps, N = 20 x 0.2 / 0.8 = 5, TTFT
     * (0.1 + 0.05) / 0.5 = 0.30 s > 0.2 s; and with any number of replicas
     * at least (0.1 + 0.01) / 0.5 = 0.22 s: MPS x2 cannot meet it */
    t = gp_serve_pack_latency(&s, 1, 0.5, 0.5, &itl);
    assert_true(fabs(t - 0.30) < 1e-9);
    assert_true(fabs(itl - 0.02) < 1e-12);
    double p99;
    assert_int_equal(gp_serve_pack_replicas_at(&s, 0.5, 0.5, GP_PACK_MAX_REPLICAS, &p99), 0);
    struct gp_pack_gpu mps = {GP_PACK_MPS, 2, 81920, 500, 40960, NULL};
    uint32_t base;
    assert_int_equal(pack(&mps, &s, 1, &base), 0);
    assert_false(s.feasible);
    /* time-sliced by 2, alone on its GPU (D = 1000): full speed, one GPU */
    struct gp_pack_gpu ts = {GP_PACK_TIMESLICE, 2, 81920, 0, 0, NULL};
    assert_int_equal(pack(&ts, &s, 1, &base), 1);
    assert_true(s.feasible);
    assert_int_equal(s.replicas, 1);
    assert_true(fabs(s.p99_s - (0.1 + 0.2 / 9)) < 1e-9);
    /* two of them on one time-sliced GPU: D = 2000, both at 0.5: 0.30 s
     * each, so the second opens a GPU */
    struct gp_pack_service two[2] = {llm(&LLM, 10, 0.2), llm(&LLM, 10, 0.2)};
    assert_int_equal(pack(&ts, two, 2, &base), 2);
    /* an ITL limit: 10 ms at full speed meets 15 ms; not at 0.5 (20 ms) */
    s.itl_limit_s = 0.015;
    s.limit_s = 1;
    assert_true(gp_serve_pack_within(&s, 0.3, 0.01));
    assert_false(gp_serve_pack_within(&s, 0.3, 0.02));
}

static void test_llm_kv_cache_per_share(void **state)
{
    (void)state;
    /* 2,200 tokens of KV cache on the whole GPU: 2200 / 110 = 20 requests
     * at once; at a quarter of the memory 550 / 110 = 5 */
    struct gp_serve_llm m = LLM;
    m.kv_tokens = 2200;
    struct gp_pack_service s = llm(&m, 30, 0.5);
    /* 30 rps on one replica: N = 30 x 0.2 / (1 - 0.3) = 60/7 = 8.57 <= 20,
     * TTFT = 0.1 + 0.01 x 60/7 = 0.1857 s (20 slots of T = 0.2857 s offered
     * 8.57 Erlangs: Erlang C 6e-4, below 1 %: no wait at the p99) */
    double itl;
    assert_true(fabs(gp_serve_pack_latency(&s, 1, 1, 1, &itl) - (0.1 + 0.6 / 7)) < 1e-9);
    /* at a quarter of the memory the batch would pass 5: saturated */
    assert_true(isinf(gp_serve_pack_latency(&s, 1, 1, 0.25, &itl)));
    /* two replicas: 15 rps each, N = 3 / 0.85 = 3.53 <= 5, TTFT at the
     * batch 0.1353 s; their 10 slots of T = 0.2353 s (mu 4.25) offered 30
     * rps carry 7.06 Erlangs: Erlang C = 0.2308, so the p99 waits
     * ln(0.2308 / 0.01) / (42.5 - 30) = 0.2511 s: TTFT p99 0.3864 s */
    double p99;
    assert_true(fabs(gp_serve_erlang_c(10, 30 / 4.25) - 0.2308) < 1e-4);
    assert_int_equal(gp_serve_pack_replicas_at(&s, 1, 0.25, GP_PACK_MAX_REPLICAS, &p99), 2);
    double wait = log(gp_serve_erlang_c(10, 30 / 4.25) / 0.01) / 12.5;
    assert_true(fabs(p99 - (0.1 + 0.03 / 0.85 + wait)) < 1e-9);
    assert_true(fabs(p99 - 0.3864) < 1e-4);
    /* MPS x4 gives each client 20 GiB of 80: the same quarter, and a
     * quarter of the SMs too (speed 0.25): past reach, (0.1 + 0.01) / 0.25
     * = 0.44 s is within 0.5 s, so more replicas do it */
    assert_true(gp_serve_pack_replicas_at(&s, 0.25, 0.25, GP_PACK_MAX_REPLICAS, &p99) > 2);
}

static void test_mig(void **state)
{
    (void)state;
    const struct gp_mig_model *a100 = gp_mig_model_find("A100-80GB");
    assert_non_null(a100);
    struct gp_pack_gpu g = {GP_PACK_MIG, 0, 81920, 0, 0, a100};
    struct gp_pack_service s[5];
    uint32_t base;
    /* within 1 s: a 1g.10gb (1/7 of the SMs: 143 of the 250 milli wanted,
     * speed 4/7, mu 57.1) serves 50 rps with p99 ln(100) / 7.14 = 0.645 s;
     * it needs 1/7 of a GPU (the least): seven fit a GPU, so five take one */
    for (int i = 0; i < 5; i++)
        s[i] = small(1);
    assert_int_equal(pack(&g, s, 5, &base), 1);
    assert_int_equal(base, 5);
    int p1 = gp_mig_profile_find(a100, "1g.10gb");
    for (int i = 0; i < 5; i++) {
        assert_int_equal(s[i].mig_profile, p1);
        assert_int_equal(s[i].replicas, 1);
        assert_true(fabs(s[i].speed - 4.0 / 7) < 1e-12);
        assert_true(fabs(s[i].p99_s - log(100) / (400.0 / 7 - 50)) < 1e-9);
    }
    /* 12 GiB does not fit 1g.10gb: 1g.20gb (2 of 8 memory slices, a
     * quarter) beats 2g.20gb (2 of 7 compute slices); four fit a GPU (starts
     * 0, 2, 4, 6): two GPUs */
    for (int i = 0; i < 5; i++) {
        s[i] = small(1);
        s[i].mem_mib = 12288;
    }
    assert_int_equal(pack(&g, s, 5, &base), 2);
    assert_int_equal(s[0].mig_profile, gp_mig_profile_find(a100, "1g.20gb"));
    /* within 100 ms: 1g.10gb x1 misses (0.645 s), x2 (M/M/2 at mu 57.1:
     * 93 ms) meets it for 2/7 of a GPU; 2g.20gb (286 milli: full speed, 92
     * ms) meets it alone for the same 2/7: the tie goes to fewer replicas.
     * Three 2g.20gb fit a GPU (starts 0, 2, 4): five take two */
    for (int i = 0; i < 5; i++)
        s[i] = small(0.1);
    assert_int_equal(pack(&g, s, 5, &base), 2);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(s[i].mig_profile, gp_mig_profile_find(a100, "2g.20gb"));
        assert_int_equal(s[i].replicas, 1);
        assert_true(s[i].speed == 1);
    }
    /* within 90 ms no replica alone meets it (92 ms at full speed): 1g.10gb
     * x3 (M/M/3 at mu 57.1: Erlang C 0.065, p99 81.6 ms) needs 3/7 of a
     * GPU, less than 2g.20gb x2 (4/7) or 3g.40gb x2 (1): fifteen 1g
     * instances, seven a GPU: 3 GPUs, where one per GPU needs two replicas
     * each at full speed (M/M/2 at mu 100: 48 ms), 10 GPUs */
    for (int i = 0; i < 5; i++)
        s[i] = small(0.09);
    assert_int_equal(pack(&g, s, 5, &base), 3);
    assert_int_equal(base, 10);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(s[i].mig_profile, p1);
        assert_int_equal(s[i].replicas, 3);
        assert_true(fabs(s[i].p99_s - 0.0816) < 1e-4);
    }
    /* no profile holds 100 GiB */
    s[0].mem_mib = 102400;
    assert_int_equal(pack(&g, s, 5, &base), 2);
    assert_false(s[0].feasible);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_share_one),
        cmocka_unit_test(test_fifth_breaks_the_limit),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_mps),
        cmocka_unit_test(test_infeasible),
        cmocka_unit_test(test_replicas_of_several_gpus),
        cmocka_unit_test(test_llm_mps_fits_but_misses_ttft),
        cmocka_unit_test(test_llm_kv_cache_per_share),
        cmocka_unit_test(test_mig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
