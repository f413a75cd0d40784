/* test_serve_llm.c - the LLM replica model on values worked by hand: the
 * batch from Little's law (linear in the model), the KV-cache cap, the
 * saturated capacity, and throughput that grows with load up to the cap. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "serve/llm.h"

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_llm_point(void **state)
{
    (void)state;
    struct gp_serve_llm m = {.itl_a_s = 0.01,
                             .itl_b_s = 0.0005,
                             .ttft_c_s = 0.05,
                             .ttft_d_s = 1e-5,
                             .max_batch = 64,
                             .kv_tokens = 10000};
    /* 100 in, 100 out: cap min(64, 10000 / 200) = 50 */
    assert_int_equal(gp_serve_llm_cap(&m, 100, 100), 50);
    /* lambda 1: N = 1 x (0.05 + 100 x 0.01) / (1 - (1e-5 x 100 + 100 x 0.0005))
     * = 1.05 / 0.949; T(N) = 1.05 + 0.051 N */
    struct gp_serve_llm_point p = gp_serve_llm_at(&m, 1.0, 100, 100);
    double n = 1.05 / 0.949;
    near(p.batch, n, 1e-12);
    near(p.e2e_s, 1.05 + 0.051 * n, 1e-12);
    near(p.e2e_s * 1.0, p.batch, 1e-12); /* Little */
    near(p.ttft_s, 0.05 + 0.001 * n, 1e-12);
    near(p.itl_s, 0.01 + 0.0005 * n, 1e-12);
    near(p.tokens_per_s, 100.0, 1e-12);
    assert_false(p.saturated);
    /* the cap: 50 / (1.05 + 0.051 x 50) = 50 / 3.6 requests/s */
    near(p.capacity_per_s, 50.0 / 3.6, 1e-12);
    /* past it: saturated, serving the capacity */
    p = gp_serve_llm_at(&m, 20.0, 100, 100);
    assert_true(p.saturated);
    near(p.batch, 50, 1e-12);
    near(p.tokens_per_s, 100.0 * 50.0 / 3.6, 1e-9);
    /* a lone request runs at batch 1 */
    p = gp_serve_llm_at(&m, 0, 100, 100);
    near(p.e2e_s, 1.05 + 0.051, 1e-12);
    near(p.tokens_per_s, 0, 1e-12);
    /* throughput and latency grow with the load until the cap */
    double last_tok = -1, last_e2e = 0;
    for (double lam = 0.5; lam < 13.8; lam += 0.5) {
        p = gp_serve_llm_at(&m, lam, 100, 100);
        assert_false(p.saturated);
        assert_true(p.tokens_per_s > last_tok && p.e2e_s > last_e2e);
        last_tok = p.tokens_per_s;
        last_e2e = p.e2e_s;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llm_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
