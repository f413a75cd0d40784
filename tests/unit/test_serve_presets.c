/* test_serve_presets.c - src/serve/presets.c holds the numbers of
 * data/serving-models.json, preset for preset and field for field; each
 * preset has a source and its calibration, and reproduces the published
 * figure it was fitted to (the 70B model's 814 tok/s at 50 users, the 8B
 * model's ITL at 472 users). */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "serve/llm.h"

#define JSON_PATH GP_EXAMPLES_DIR "/../data/serving-models.json"

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    assert_non_null(v);
    return json_number_value(v);
}

static void test_table_matches_json(void **state)
{
    (void)state;
    json_error_t e;
    json_t *root = json_load_file(JSON_PATH, 0, &e);
    assert_non_null(root);
    json_t *ps = json_object_get(root, "presets");
    assert_int_equal(json_array_size(ps), gp_serve_npresets);
    for (size_t i = 0; i < gp_serve_npresets; i++) {
        json_t *p = json_array_get(ps, i);
        const struct gp_serve_preset *c = &gp_serve_presets[i];
        assert_string_equal(json_string_value(json_object_get(p, "name")), c->name);
        assert_true(num(p, "itl_base_s") == c->model.itl_a_s);
        assert_true(num(p, "itl_per_batch_s") == c->model.itl_b_s);
        assert_true(num(p, "ttft_base_s") == c->model.ttft_c_s);
        assert_true(num(p, "ttft_per_token_batch_s") == c->model.ttft_d_s);
        assert_true(num(p, "max_batch") == c->model.max_batch);
        assert_true(num(p, "kv_tokens") == c->model.kv_tokens);
        assert_true(num(p, "input_tokens") == c->in_tokens);
        assert_true(num(p, "output_tokens") == c->out_tokens);
        assert_true(strlen(json_string_value(json_object_get(p, "source"))) > 20);
        assert_true(json_array_size(json_object_get(p, "calibration")) >= 1);
        assert_ptr_equal(gp_serve_preset_find(c->name), c);
    }
    assert_null(gp_serve_preset_find("gpt-9"));
    json_decref(root);
}

static void test_presets_reproduce_their_figures(void **state)
{
    (void)state;
    /* Llama-3.3-70B, 5000/500: at 50 running requests a request takes
     * TTFT + 500 ITL, so 50 x 500 / that tokens/s: NIM measured 814 */
    const struct gp_serve_llm *m = &gp_serve_preset_find("llama-3.3-70b-fp8/2xh100")->model;
    double ttft = m->ttft_c_s + m->ttft_d_s * 5000 * 50, itl = m->itl_a_s + m->itl_b_s * 50;
    double tok = 50 * 500 / (ttft + 500 * itl);
    assert_true(fabs(tok - 814) < 10);
    /* at 1: 51.7 tok/s */
    ttft = m->ttft_c_s + m->ttft_d_s * 5000;
    itl = m->itl_a_s + m->itl_b_s;
    assert_true(fabs(500 / (ttft + 500 * itl) - 51.7) < 1);
    /* the plateau: the KV cache holds about 100 requests of 5500 tokens */
    assert_int_equal(gp_serve_llm_cap(m, 5000, 500), 100);
    /* Qwen3-8B: ITL(472) = 1 / (15.1k / 472) s */
    m = &gp_serve_preset_find("qwen3-8b-fp8/h100")->model;
    assert_true(fabs(m->itl_a_s + m->itl_b_s * 472 - 472 / 15100.0) < 2e-4);
    assert_true(fabs(m->itl_a_s + m->itl_b_s - 1 / 214.0) < 2e-4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_json),
        cmocka_unit_test(test_presets_reproduce_their_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
