/* test_compat.c - driver <-> CUDA compatibility (io/compat.h): the
 * compiled tables against data/cuda-driver-compat.json and
 * data/cuda-images.json; NVIDIA's published minimums (typed in here, not
 * read from the tables); the verdict at and around every boundary of every
 * release (the toolkit's own minimum, the minor-version minimum of its
 * major release, the forward-compatibility branches); GPU classes; image
 * references. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "io/compat.h"

static uint32_t drv(const char *s)
{
    uint32_t code = 0;
    if (!gp_compat_parse_driver(s, &code))
        fail_msg("driver '%s' not read", s);
    return code;
}

static struct gp_cuda_version cu(const char *s)
{
    struct gp_cuda_version v = {0, 0, 0};
    if (!gp_compat_parse_cuda(s, &v))
        fail_msg("CUDA '%s' not read", s);
    return v;
}

static enum gp_compat_verdict verdict(const char *cuda, const char *driver, enum gp_gpu_class g,
                                      bool ships)
{
    struct gp_cuda_version v = cu(cuda);
    struct gp_compat_result r;
    if (!gp_compat_check(&v, drv(driver), g, ships, &r))
        fail_msg("CUDA %s not in the table: %s", cuda, r.reason);
    return r.verdict;
}

/* Versions read and printed; codes order as versions do. */
static void test_versions(void **state)
{
    (void)state;
    assert_int_equal(drv("535.104.05"), 53510405);
    assert_int_equal(drv("570.26"), 57002600);
    assert_int_equal(drv("580"), 58000000);
    assert_true(drv("570.124.06") > drv("570.26"));
    assert_true(drv("525.60.13") < drv("525.85.12"));
    static const char *const bad[] = {"",         "535.",        ".535", "535..05", "535.104.05.1",
                                      "535.1000", "535.104.100", "r535", "535-104", "0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint32_t c;
        if (gp_compat_parse_driver(bad[i], &c))
            fail_msg("'%s' read as a driver", bad[i]);
    }
    char buf[32];
    gp_compat_driver_text(drv("535.104.05"), true, buf, sizeof buf);
    assert_string_equal(buf, "535.104.05");
    gp_compat_driver_text(drv("535.104.05"), false, buf, sizeof buf);
    assert_string_equal(buf, "535.104");
    gp_compat_driver_text(drv("525.60.13"), false, buf, sizeof buf);
    assert_string_equal(buf, "525.60");
    gp_compat_driver_text(drv("570.26"), true, buf, sizeof buf);
    assert_string_equal(buf, "570.26");
    gp_compat_driver_text(drv("580.00"), true, buf, sizeof buf);
    assert_string_equal(buf, "580");
    struct gp_cuda_version v = cu("12.8.0.038"); /* NGC writes a fourth part */
    assert_int_equal(v.patch, 0);
    v = cu("12.4");
    assert_int_equal(v.patch, -1);
    assert_false(gp_compat_parse_cuda("12", &v));
    assert_false(gp_compat_parse_cuda("12.x", &v));
    assert_false(gp_compat_parse_cuda("v12.4", &v));
}

/* NVIDIA's numbers, typed in from the CUDA release notes (Table 3, and
 * Table 2 for minor-version compatibility) so that a table the build
 * misread fails here. */
static void test_published_minimums(void **state)
{
    (void)state;
    static const struct {
        const char *cuda, *toolkit, *minor;
    } pub[] = {
        {"11.0.1", "450.36.06", "450.36.06"},
        {"11.1.0", "455.23", "450.80.02"},
        {"11.4.0", "470.42.01", "450.80.02"},
        {"11.8.0", "520.61.05", "450.80.02"},
        {"12.0.0", "525.60.13", "525.60.13"},
        {"12.1.0", "530.30.02", "525.60.13"},
        {"12.2.0", "535.54.03", "525.60.13"},
        {"12.2.2", "535.104.05", "525.60.13"},
        {"12.4.0", "550.54.14", "525.60.13"},
        {"12.4.1", "550.54.15", "525.60.13"},
        {"12.6.0", "560.28.03", "525.60.13"},
        {"12.8.0", "570.26", "525.60.13"},
        {"12.8.1", "570.124.06", "525.60.13"},
        {"12.9.1", "575.57.08", "525.60.13"},
        {"13.0.0", "580.65.06", "580"},
        {"13.1.0", "590.44.01", "580"},
        {"13.4.0", "615", "580"},
    };
    for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
        struct gp_cuda_version v = cu(pub[i].cuda);
        const struct gp_cuda_release *r = gp_compat_release(&v);
        assert_non_null(r);
        if (gp_compat_native_min(r) != drv(pub[i].toolkit) ||
            gp_compat_minor_min(r) != drv(pub[i].minor))
            fail_msg("CUDA %s: table %u / %u, published %s / %s", pub[i].cuda,
                     gp_compat_native_min(r), gp_compat_minor_min(r), pub[i].toolkit, pub[i].minor);
    }
    /* a minor version alone is its first release, the one that asks least */
    struct gp_cuda_version v = cu("12.2");
    assert_int_equal(gp_compat_release(&v)->patch, 0);
    v = cu("11.0");
    assert_int_equal(gp_compat_release(&v)->patch, 1);
    v = cu("12.7"); /* no such toolkit: 565 reports it all the same */
    assert_null(gp_compat_release(&v));
    assert_string_equal(gp_compat_reported(drv("565.57.01")), "12.7");
    assert_string_equal(gp_compat_reported(drv("535.104.05")), "12.2");
    assert_null(gp_compat_reported(drv("999.1")));
}

/* One patch and one minor version below a code (535.54.03 -> 535.54.02). */
static uint32_t below(uint32_t code)
{
    return code - 1;
}

/* Every release at and around its boundaries: its own minimum (native at,
 * not native one below), its minor-version minimum (minor-version at, and
 * one below does not run where no forward package can help: a GeForce
 * GPU), and forward compatibility on a data-centre GPU with the package in
 * the image for every branch of the matrix. */
static void test_every_boundary(void **state)
{
    (void)state;
    char d[32], v[24];
    size_t cases = 0;
    for (size_t i = 0; i < gp_cuda_nreleases; i++) {
        const struct gp_cuda_release *r = &gp_cuda_releases[i];
        struct gp_cuda_version cv = {r->major, r->minor, r->patch};
        gp_compat_cuda_text(&cv, v, sizeof v);
        uint32_t native = gp_compat_native_min(r), minor = gp_compat_minor_min(r);
        struct gp_compat_result res;
        uint32_t probe[] = {native, native + 1, below(native), minor, below(minor)};
        for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
            uint32_t dr = probe[k];
            enum gp_compat_verdict want = dr >= native  ? GP_COMPAT_NATIVE
                                          : dr >= minor ? GP_COMPAT_MINOR
                                                        : GP_COMPAT_NO;
            assert_true(gp_compat_check(&cv, dr, GP_GPU_CONSUMER, false, &res));
            gp_compat_driver_text(dr, true, d, sizeof d);
            if (res.verdict != want)
                fail_msg("CUDA %s on %s (GeForce): verdict %d, want %d: %s", v, d, res.verdict,
                         want, res.reason);
            cases++;
        }
        /* forward compatibility: every branch of the matrix that has a
         * package for this release, on a data-centre GPU whose image ships it */
        for (size_t f = 0; f < gp_cuda_nforward; f++) {
            const struct gp_cuda_forward *fw = &gp_cuda_forward[f];
            uint32_t dr = (uint32_t)fw->branch * 100000u + 1000u; /* 535.10 */
            bool has = false;
            for (unsigned p = 0; p < fw->count; p++) {
                struct gp_cuda_package pk = gp_cuda_packages[fw->first + p];
                has |= pk.major > r->major || (pk.major == r->major && pk.minor >= r->minor);
            }
            assert_true(gp_compat_check(&cv, dr, GP_GPU_DATACENTER, true, &res));
            enum gp_compat_verdict want = dr >= native  ? GP_COMPAT_NATIVE
                                          : has         ? GP_COMPAT_FORWARD
                                          : dr >= minor ? GP_COMPAT_MINOR
                                                        : GP_COMPAT_NO;
            gp_compat_driver_text(dr, true, d, sizeof d);
            if (res.verdict != want)
                fail_msg("CUDA %s on %s (data centre, cuda-compat in the image): verdict %d, "
                         "want %d: %s",
                         v, d, res.verdict, want, res.reason);
            cases++;
        }
    }
    assert_true(cases > 300);
}

/* The rule's cases by hand: the ones the issue and the docs name. */
static void test_rule_cases(void **state)
{
    (void)state;
    /* the example: NGC PyTorch 24.05 (CUDA 12.4.1) on 535.104.05 */
    assert_int_equal(verdict("12.4.1", "535.104.05", GP_GPU_UNKNOWN, true), GP_COMPAT_MINOR);
    assert_int_equal(verdict("12.4.1", "535.104.05", GP_GPU_DATACENTER, true), GP_COMPAT_FORWARD);
    assert_int_equal(verdict("12.4.1", "535.104.05", GP_GPU_DATACENTER, false), GP_COMPAT_MINOR);
    assert_int_equal(verdict("12.4.1", "535.104.05", GP_GPU_CONSUMER, true), GP_COMPAT_MINOR);
    /* across a major release: only forward compatibility */
    assert_int_equal(verdict("13.0.0", "535.104.05", GP_GPU_DATACENTER, false), GP_COMPAT_FORWARD);
    assert_int_equal(verdict("13.0.0", "535.104.05", GP_GPU_UNKNOWN, false), GP_COMPAT_FORWARD);
    assert_int_equal(verdict("13.0.0", "535.104.05", GP_GPU_CONSUMER, false), GP_COMPAT_NO);
    assert_int_equal(verdict("13.0.0", "535.104.05", GP_GPU_RTX_PRO, false), GP_COMPAT_FORWARD);
    /* branch 550 is not in the matrix (end of life): no package */
    assert_int_equal(verdict("13.0.0", "550.54.15", GP_GPU_DATACENTER, true), GP_COMPAT_NO);
    /* 13.x under minor-version compatibility from any R580 driver */
    assert_int_equal(verdict("13.2.0", "580.65.06", GP_GPU_CONSUMER, false), GP_COMPAT_MINOR);
    assert_int_equal(verdict("13.4.1", "615.00.01", GP_GPU_CONSUMER, false), GP_COMPAT_NATIVE);
    assert_int_equal(verdict("13.4.1", "610.43.02", GP_GPU_CONSUMER, false), GP_COMPAT_MINOR);
    /* the filter message: 525.60 < 535.54 for CUDA 12.2 */
    assert_int_equal(verdict("12.2", "525.60.13", GP_GPU_CONSUMER, false), GP_COMPAT_MINOR);
    assert_int_equal(verdict("12.2", "520.61.05", GP_GPU_CONSUMER, false), GP_COMPAT_NO);
    /* an AMD GPU runs no CUDA */
    assert_int_equal(verdict("12.2", "600.1", GP_GPU_NOT_NVIDIA, false), GP_COMPAT_NO);
    /* a patch the table lacks reads as the minor version's latest update */
    struct gp_cuda_version v = cu("13.4.3");
    struct gp_compat_result r;
    assert_true(gp_compat_check(&v, drv("615.1"), GP_GPU_UNKNOWN, false, &r));
    assert_int_equal(r.release->patch, 1);
    assert_non_null(strstr(r.reason, "read as CUDA 13.4 Update 1"));
    v = cu("12.7");
    assert_false(gp_compat_check(&v, drv("565.57.01"), GP_GPU_UNKNOWN, false, &r));
    assert_non_null(strstr(r.reason, "12.6, 12.8"));
}

static void test_gpu_class(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        enum gp_gpu_class want;
    } cases[] = {
        {"A100-80GB", GP_GPU_DATACENTER},
        {"NVIDIA-H100-80GB-HBM3", GP_GPU_DATACENTER},
        {"Tesla-V100-SXM2-32GB", GP_GPU_DATACENTER},
        {"L40S", GP_GPU_DATACENTER},
        {"A10G", GP_GPU_DATACENTER},
        {"GH200 96GB", GP_GPU_DATACENTER},
        {"B200", GP_GPU_DATACENTER},
        {"RTX 4090 24GB", GP_GPU_CONSUMER},
        {"NVIDIA-GeForce-RTX-3090", GP_GPU_CONSUMER},
        {"RTX4080", GP_GPU_CONSUMER},
        {"TITAN RTX", GP_GPU_CONSUMER},
        {"RTX 6000 Ada", GP_GPU_RTX_PRO},
        {"RTX A6000 48GB", GP_GPU_RTX_PRO},
        {"RTX PRO 6000 Blackwell Server Edition", GP_GPU_RTX_PRO},
        {"MI300X 192GB", GP_GPU_NOT_NVIDIA},
        {"AMD Instinct MI250", GP_GPU_NOT_NVIDIA},
        {"", GP_GPU_UNKNOWN},
        {"X9000", GP_GPU_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (gp_compat_gpu_class(cases[i].model) != cases[i].want)
            fail_msg("%s: class %d, want %d", cases[i].model, gp_compat_gpu_class(cases[i].model),
                     cases[i].want);
    assert_int_equal(gp_compat_gpu_class(NULL), GP_GPU_UNKNOWN);
}

/* Image references: NGC releases by the table, tags that name CUDA, and
 * the refusals. */
static void test_images(void **state)
{
    (void)state;
    static const struct {
        const char *ref;
        enum gp_image_found want;
        const char *cuda;
    } cases[] = {
        {"nvcr.io/nvidia/pytorch:24.05-py3", GP_IMAGE_FOUND, "12.4.1"},
        {"nvcr.io/nvidia/pytorch:24.05-py3@sha256:0123", GP_IMAGE_FOUND, "12.4.1"},
        {"nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3", GP_IMAGE_FOUND, "12.4"},
        {"nvcr.io/nvidia/tritonserver:24.10-py3", GP_IMAGE_FOUND, "12.6.2"},
        {"nvcr.io/nvidia/vllm:26.01-py3", GP_IMAGE_FOUND, "13.1.1"},
        {"nvcr.io/nvidia/tensorflow:21.06-tf2-py3", GP_IMAGE_FOUND, "11.3.1"},
        {"nvcr.io/nvidia/pytorch:24.055-py3", GP_IMAGE_UNKNOWN_TAG, NULL},
        {"nvcr.io/nvidia/pytorch:24.07-py3", GP_IMAGE_UNKNOWN_TAG, NULL},
        {"nvcr.io/nvidia/nemo:24.05", GP_IMAGE_UNKNOWN, NULL},
        {"nvidia/cuda:12.4.1-base-ubuntu22.04", GP_IMAGE_FOUND, "12.4.1"},
        {"docker.io/nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", GP_IMAGE_FOUND, "11.8.0"},
        {"nvcr.io/nvidia/cuda:13.0.2-devel-ubuntu24.04", GP_IMAGE_FOUND, "13.0.2"},
        {"nvidia/cuda:latest", GP_IMAGE_UNKNOWN_TAG, NULL},
        {"nvidia/cuda", GP_IMAGE_UNKNOWN_TAG, NULL},
        {"pytorch/pytorch:2.7.0-cuda12.8-cudnn9-devel", GP_IMAGE_FOUND, "12.8"},
        {"docker.io/library/pytorch/pytorch:2.3.0-cuda11.8-cudnn8-runtime", GP_IMAGE_FOUND, "11.8"},
        {"ghcr.io/pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime", GP_IMAGE_FOUND, "12.1"},
        {"pytorch/pytorch:latest", GP_IMAGE_UNKNOWN_TAG, NULL},
        {"vllm/vllm-openai:v0.9.0", GP_IMAGE_UNKNOWN, NULL},
        {"localhost:5000/team/trainer:1.2", GP_IMAGE_UNKNOWN, NULL},
        {"python:3.12", GP_IMAGE_UNKNOWN, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gp_image_info info;
        enum gp_image_found f = gp_compat_image(cases[i].ref, &info);
        if (f != cases[i].want)
            fail_msg("%s: found %d, want %d", cases[i].ref, f, cases[i].want);
        if (cases[i].cuda) {
            char v[24];
            gp_compat_cuda_text(&info.cuda, v, sizeof v);
            if (strcmp(v, cases[i].cuda) != 0)
                fail_msg("%s: CUDA %s, want %s", cases[i].ref, v, cases[i].cuda);
        }
    }
    struct gp_image_info info;
    assert_int_equal(gp_compat_image("localhost:5000/team/trainer:1.2", &info), GP_IMAGE_UNKNOWN);
    assert_string_equal(info.repository, "localhost:5000/team/trainer");
}

/* The compiled tables say what the JSON files say. */
static void test_tables_match_json(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *c = json_load_file(GP_EXAMPLES_DIR "/../data/cuda-driver-compat.json", 0, &jerr);
    assert_non_null(c);
    json_t *rels = json_object_get(c, "releases");
    assert_int_equal(json_array_size(rels), gp_cuda_nreleases);
    for (size_t i = 0; i < gp_cuda_nreleases; i++) {
        json_t *r = json_array_get(rels, i);
        const struct gp_cuda_release *t = &gp_cuda_releases[i];
        char v[24];
        snprintf(v, sizeof v, "%u.%u.%u", t->major, t->minor, t->patch);
        assert_string_equal(v, json_string_value(json_object_get(r, "version")));
        json_t *tk = json_object_get(r, "toolkit_driver_linux_min");
        assert_string_equal(t->toolkit_min, json_is_string(tk) ? json_string_value(tk) : "");
    }
    json_t *m = json_object_get(json_object_get(c, "forward_compatibility"),
                                "matrix_base_driver_branch_to_compat_package");
    assert_int_equal(json_object_size(m), gp_cuda_nforward);
    json_t *rep =
        json_object_get(json_object_get(c, "reported_cuda_version"), "observed_branch_to_reported");
    assert_int_equal(json_object_size(rep), gp_cuda_nreported);
    for (size_t i = 0; i < gp_cuda_nreported; i++) {
        char b[8];
        snprintf(b, sizeof b, "%u", gp_cuda_reported[i].branch);
        assert_string_equal(gp_cuda_reported[i].cuda, json_string_value(json_object_get(rep, b)));
    }
    json_decref(c);
    json_t *im = json_load_file(GP_EXAMPLES_DIR "/../data/cuda-images.json", 0, &jerr);
    assert_non_null(im);
    json_t *ngc = json_object_get(im, "ngc");
    assert_int_equal(json_array_size(ngc), gp_image_nngc);
    for (size_t i = 0; i < gp_image_nngc; i++) {
        json_t *n = json_array_get(ngc, i);
        assert_string_equal(gp_image_ngc[i].repository,
                            json_string_value(json_object_get(n, "repository")));
        assert_string_equal(gp_image_ngc[i].cuda, json_string_value(json_object_get(n, "cuda")));
        assert_int_equal(gp_image_ngc[i].compat_in_image,
                         json_is_true(json_object_get(n, "cuda_compat_in_image")));
        assert_true(strncmp(gp_image_ngc[i].source, "https://", 8) == 0);
    }
    json_decref(im);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_versions),          cmocka_unit_test(test_published_minimums),
        cmocka_unit_test(test_every_boundary),    cmocka_unit_test(test_rule_cases),
        cmocka_unit_test(test_gpu_class),         cmocka_unit_test(test_images),
        cmocka_unit_test(test_tables_match_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
