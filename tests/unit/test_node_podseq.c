/* test_node_podseq.c - each container's part of a pod's GPU list
 * (src/node/podseq.c, gp_node_podplan_read): the kubelet's order (init
 * containers, then app containers), plain init containers on the run the
 * containers after them reuse, sidecars and app containers on runs of
 * their own, containers asking nothing left out, a list too short, bad
 * quantities; and the devices' check of a MIG pod's several instances on
 * one GPU (src/node/devices.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/podseq.h"

static json_t *pod(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    if (!j)
        fail_msg("bad test JSON: %s", err.text);
    return j;
}

static void test_plan(void **state)
{
    (void)state;
    struct gp_node_podplan pl;
    struct gp_diag d;
    /* an init container of 2, app containers of 1 and 1, one asking none */
    json_t *p = pod("{\"spec\":{\"initContainers\":[{\"name\":\"fetch\",\"resources\":"
                    "{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}],\"containers\":["
                    "{\"name\":\"train\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}},"
                    "{\"name\":\"log\"},{\"name\":\"eval\",\"resources\":"
                    "{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}");
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu", 2, true, &pl, &d), GP_OK);
    assert_int_equal(pl.n, 3);
    assert_int_equal(pl.gpus_needed, 2);
    assert_string_equal(pl.c[0].name, "fetch");
    assert_int_equal(pl.c[0].kind, GP_NODE_CTR_INIT);
    assert_int_equal(pl.c[0].first, 0);
    assert_int_equal(pl.c[0].n, 2);
    assert_string_equal(pl.c[1].name, "train");
    assert_int_equal(pl.c[1].first, 0);
    assert_string_equal(pl.c[2].name, "eval");
    assert_int_equal(pl.c[2].kind, GP_NODE_CTR_APP);
    assert_int_equal(pl.c[2].first, 1);
    /* another resource: nobody asks it */
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu.shared", 2, true, &pl, &d), GP_OK);
    assert_int_equal(pl.n, 0);
    /* one GPU is too few for two app containers */
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu", 1, true, &pl, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "need 2 GPU(s) of nvidia.com/gpu"));
    /* not split (a MIG pod): no length asked */
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu", 1, false, &pl, &d), GP_OK);
    json_decref(p);

    /* a sidecar keeps its GPU: the init container after it and the app
     * container go past it */
    p = pod("{\"spec\":{\"initContainers\":[{\"name\":\"proxy\",\"restartPolicy\":\"Always\","
            "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}},{\"name\":\"warm\","
            "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}],\"containers\":["
            "{\"name\":\"main\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}}");
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu", 3, true, &pl, &d), GP_OK);
    assert_int_equal(pl.gpus_needed, 3);
    assert_int_equal(pl.c[0].kind, GP_NODE_CTR_SIDECAR);
    assert_int_equal(pl.c[0].first, 0);
    assert_int_equal(pl.c[1].kind, GP_NODE_CTR_INIT);
    assert_int_equal(pl.c[1].first, 1);
    assert_int_equal(pl.c[2].first, 1);
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu", 2, true, &pl, &d), GP_EINVALID);
    json_decref(p);

    /* requests when there are no limits; a bad quantity named */
    p = pod("{\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"nvidia.com/"
            "gpu\":\"1\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
            "\"500m\"}}}]}}");
    assert_int_equal(gp_node_podplan_read(p, "nvidia.com/gpu", 4, true, &pl, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "spec.containers[1].resources.limits.nvidia.com/gpu: \"500m\" is not a "
                        "whole number");
    json_decref(p);
}

static void test_mig_several_on_one_gpu(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    memset(&inv, 0, sizeof inv);
    inv.n_gpus = 2;
    for (unsigned g = 0; g < 2; g++) {
        struct gp_node_gpu *x = &inv.gpus[g];
        x->index = g;
        snprintf(x->uuid, sizeof x->uuid, "GPU-%u", g);
        x->healthy = true;
        x->mig_enabled = true;
        x->n_migs = 2;
        for (unsigned m = 0; m < 2; m++) {
            snprintf(x->migs[m].uuid, GP_NODE_UUID_LEN, "MIG-%u-%u", g, m);
            snprintf(x->migs[m].profile, sizeof x->migs[m].profile, "1g.10gb");
        }
    }
    struct gp_node_sharing sh = {.replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    struct gp_node_devset s;
    struct gp_diag d;
    struct gp_node_alloc a;
    assert_int_equal(gp_node_devset_build(&inv, &sh, &s, &d), GP_OK);
    /* the pod's GPU is 0 (gpuplane.io/gpus "0"): two instances of it */
    struct gp_node_choice ch = {.set = true, .n = 1, .index = {0}, .pod = "default/m"};
    const char *two[] = {"MIG-0-0", "MIG-0-1"};
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, two, 2, &ch, &sh, &a, &d), GP_OK);
    assert_string_equal(a.visible, "MIG-0-0,MIG-0-1");
    assert_int_equal(a.n_asked, 2);
    assert_string_equal(a.asked[1], "MIG-0-1");
    const char *off[] = {"MIG-1-0"};
    assert_int_equal(gp_node_dev_allocate(&s.res[0], &inv, off, 1, &ch, &sh, &a, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "not on the GPUs the scheduler chose"));
    gp_node_devset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_mig_several_on_one_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
