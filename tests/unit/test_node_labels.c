/* test_node_labels.c - GFD's node labels from an inventory: golden against
 * the label sets NVIDIA published for H100 nodes (../shared/k8s/samples/
 * nvidia-gfd/, MIG single and mixed), the product's -SHARED and -MIG-
 * forms, the single strategy's invalid layouts, and the merge patch onto a
 * Node of the API server double (owned labels removed, others kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>

#include "kube_double.h"
#include "engine/sharing.h"
#include "kube/objects.h"
#include "node/labels.h"
#include "shared_data.h"

#define GFD GP_SHARED_DIR "/k8s/samples/nvidia-gfd/"

static struct gp_node_inventory inv;
static struct gp_node_labels out;

/* The H100 of the samples: driver 550.54.15, CUDA 12.4, 81559 MiB. */
static void h100(size_t n)
{
    memset(&inv, 0, sizeof inv);
    snprintf(inv.driver_version, sizeof inv.driver_version, "550.54.15");
    inv.cuda_driver_version = 12040;
    inv.n_gpus = n;
    for (size_t i = 0; i < n; i++) {
        struct gp_node_gpu *g = &inv.gpus[i];
        g->index = (unsigned)i;
        snprintf(g->uuid, sizeof g->uuid, "GPU-%08zx-0000-0000-0000-000000000000", i);
        snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
        g->memory_mib = 81559;
        g->cc_major = 9;
        g->mig_capable = true;
        g->healthy = true;
    }
}

/* A MIG device as nvmlDeviceGetAttributes_v2 reports it on an H100 (the
 * mixed sample's values). */
static void add_mig(struct gp_node_gpu *g, unsigned gslices)
{
    struct gp_node_mig *m = &g->migs[g->n_migs++];
    g->mig_enabled = true;
    static const struct {
        const char *name;
        uint64_t mib;
        unsigned sms;
    } t[] = {{"", 0, 0}, {"1g.10gb", 9984, 16}, {"2g.20gb", 20096, 32}, {"3g.40gb", 40320, 60}};
    snprintf(m->profile, sizeof m->profile, "%s", t[gslices].name);
    snprintf(m->uuid, sizeof m->uuid, "MIG-%u-%zu", g->index, g->n_migs);
    m->memory_mib = t[gslices].mib;
    m->multiprocessors = t[gslices].sms;
    m->gi_slices = m->ci_slices = gslices;
    m->engines_copy = m->engines_decoder = m->engines_jpeg = gslices;
}

static const struct gp_node_sharing no_sharing = {
    .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_NONE};

static void build(const struct gp_node_sharing *sh, const struct gp_node_label_opts *o)
{
    struct gp_diag d = {""};
    enum gp_err err = gp_node_labels_build(&inv, sh, o, &out, &d);
    if (err != GP_OK)
        fail_msg("labels: %s", d.msg);
}

static void expect(const char *key, const char *value)
{
    const char *v = gp_node_labels_get(&out, key);
    if (!v || strcmp(v, value) != 0)
        fail_msg("%s: expected \"%s\", got %s%s%s", key, value, v ? "\"" : "", v ? v : "none",
                 v ? "\"" : "");
}

/* Every label GFD owns in the sample (the GPU Operator's and NFD's left
 * out) is in out with its value, and out has no other. */
static void golden(const char *file)
{
    json_error_t je;
    json_t *s = json_load_file(file, 0, &je);
    if (!s)
        fail_msg("%s: %s", file, je.text);
    size_t owned = 0;
    const char *k;
    json_t *v;
    json_object_foreach(s, k, v)
    {
        if (!gp_node_labels_owned(k))
            continue;
        owned++;
        expect(k, json_string_value(v));
    }
    size_t ours = 0; /* gpuplane's own labels (gpuplane.io/mig-gpus) are not GFD's */
    for (size_t i = 0; i < out.n; i++)
        if (strncmp(out.items[i].key, "gpuplane.io/", 12) == 0)
            ours++;
        else if (!json_object_get(s, out.items[i].key))
            fail_msg("%s: %s=%s is not in the sample", file, out.items[i].key, out.items[i].value);
    assert_int_equal(owned + ours, out.n);
    json_decref(s);
}

static void test_golden_mig_single(void **state)
{
    (void)state;
    GP_NEED_SHARED(GFD "h100-mig-single-node-labels.json");
    h100(1); /* mig.config all-disabled */
    struct gp_node_sharing sh = no_sharing;
    sh.mig_strategy = GP_NODE_MIG_SINGLE;
    struct gp_node_label_opts o = {"PIO-4124GS-TNR-01-NC24B", NULL, 1715703041, false};
    build(&sh, &o);
    golden(GFD "h100-mig-single-node-labels.json");
}

static void test_golden_mig_mixed(void **state)
{
    (void)state;
    GP_NEED_SHARED(GFD "h100-mig-mixed-node-labels.json");
    h100(1); /* mig.config all-balanced: 2 x 1g.10gb, 1 x 2g.20gb, 1 x 3g.40gb */
    add_mig(&inv.gpus[0], 1);
    add_mig(&inv.gpus[0], 1);
    add_mig(&inv.gpus[0], 2);
    add_mig(&inv.gpus[0], 3);
    struct gp_node_sharing sh = no_sharing;
    sh.mig_strategy = GP_NODE_MIG_MIXED;
    struct gp_node_label_opts o = {"PIO-4124GS-TNR-01-NC24B", NULL, 1715709242, false};
    build(&sh, &o);
    golden(GFD "h100-mig-mixed-node-labels.json");
}

/* Every key in the regex lists of NVIDIA's GFD end-to-end test is made
 * (gpu.mode given a PCI class): the lists' lines are "key=value-regex". */
static void test_regex_lists_keys(void **state)
{
    (void)state;
    GP_NEED_SHARED(GFD "gfd-expected-labels-mig-mixed.regex.txt");
    h100(1);
    add_mig(&inv.gpus[0], 1);
    struct gp_node_sharing sh = no_sharing;
    sh.mig_strategy = GP_NODE_MIG_MIXED;
    struct gp_node_label_opts o = {"DGX H100", "0x030200", 1715709242, false};
    build(&sh, &o);
    expect("nvidia.com/gpu.machine", "DGX-H100");
    expect("nvidia.com/gpu.mode", "compute");
    FILE *f = fopen(GFD "gfd-expected-labels-mig-mixed.regex.txt", "r");
    assert_non_null(f);
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        char key[128];
        size_t o2 = 0;
        for (const char *c = line; *c && *c != '=' && o2 + 1 < sizeof key; c++)
            if (*c != '\\')
                key[o2++] = *c;
        key[o2] = '\0';
        if (strncmp(key, "nvidia.com/mig-", 15) == 0) { /* mig-[0-9]+g.[0-9]+gb.X */
            char rest[64];
            snprintf(rest, sizeof rest, "%s", strstr(key, "gb.") + 3);
            snprintf(key, sizeof key, "nvidia.com/mig-1g.10gb.%s", rest);
        }
        key[strcspn(key, "=")] = '\0';
        if (!gp_node_labels_get(&out, key))
            fail_msg("GFD's list has %s, the labels do not", key);
        n++;
    }
    fclose(f);
    assert_int_equal(n, 39);
}

/* NVIDIA's gpu-sharing page: four time-sliced T4s, 4 replicas. */
static void t4s(void)
{
    memset(&inv, 0, sizeof inv);
    snprintf(inv.driver_version, sizeof inv.driver_version, "535.104.05");
    inv.cuda_driver_version = 12020;
    inv.n_gpus = 4;
    for (size_t i = 0; i < 4; i++) {
        snprintf(inv.gpus[i].name, sizeof inv.gpus[i].name, "Tesla T4");
        inv.gpus[i].memory_mib = 15360;
        inv.gpus[i].cc_major = 7;
        inv.gpus[i].cc_minor = 5;
    }
}

static void test_time_slicing_shared(void **state)
{
    (void)state;
    t4s();
    struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4, .mig_strategy = GP_NODE_MIG_NONE};
    build(&sh, NULL);
    expect("nvidia.com/gpu.product", "Tesla-T4-SHARED");
    expect("nvidia.com/gpu.count", "4");
    expect("nvidia.com/gpu.replicas", "4");
    expect("nvidia.com/gpu.sharing-strategy", "time-slicing");
    expect("nvidia.com/gpu.family", "turing");
    expect("nvidia.com/gpu.machine", "unknown");
    expect("nvidia.com/cuda.driver.rev", "05");
    expect("nvidia.com/cuda.runtime-version.full", "12.2");
    assert_null(gp_node_labels_get(&out, "nvidia.com/mig.strategy"));
    assert_null(gp_node_labels_get(&out, "nvidia.com/gfd.timestamp"));
    sh.rename_by_default = true; /* advertised as nvidia.com/gpu.shared: no suffix */
    build(&sh, NULL);
    expect("nvidia.com/gpu.product", "Tesla-T4");
    expect("nvidia.com/gpu.replicas", "4");
    sh.mode = GP_NODE_SHARE_MPS;
    sh.rename_by_default = false;
    build(&sh, NULL);
    expect("nvidia.com/gpu.product", "Tesla-T4-SHARED");
    expect("nvidia.com/gpu.sharing-strategy", "mps");
    expect("nvidia.com/mps.capable", "true");
    sh.replicas = 1; /* one replica is not shared */
    build(&sh, NULL);
    expect("nvidia.com/gpu.product", "Tesla-T4");
    expect("nvidia.com/gpu.sharing-strategy", "none");
}

static void test_mig_single(void **state)
{
    (void)state;
    h100(2);
    for (size_t g = 0; g < 2; g++)
        for (int k = 0; k < 7; k++)
            add_mig(&inv.gpus[g], 1);
    struct gp_node_sharing sh = no_sharing;
    sh.mig_strategy = GP_NODE_MIG_SINGLE;
    build(&sh, NULL);
    /* NVIDIA's gpu-operator-mig page: all-1g.10gb under single */
    expect("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb");
    expect("nvidia.com/gpu.count", "14");
    expect("nvidia.com/gpu.memory", "9984");
    expect("nvidia.com/gpu.slices.gi", "1");
    expect("nvidia.com/gpu.slices.ci", "1");
    expect("nvidia.com/gpu.multiprocessors", "16");
    expect("nvidia.com/gpu.replicas", "1");
    expect("nvidia.com/gpu.family", "hopper");
    expect("nvidia.com/mig.strategy", "single");
    assert_null(gp_node_labels_get(&out, "nvidia.com/mig-1g.10gb.count"));
    /* two profiles: invalid for single */
    inv.gpus[1].migs[0].memory_mib = 20096;
    snprintf(inv.gpus[1].migs[0].profile, sizeof inv.gpus[1].migs[0].profile, "2g.20gb");
    build(&sh, NULL);
    expect("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-INVALID");
    expect("nvidia.com/gpu.count", "0");
    expect("nvidia.com/gpu.replicas", "0");
    expect("nvidia.com/gpu.memory", "0");
    /* a MIG-enabled GPU beside a full one: invalid too */
    h100(2);
    add_mig(&inv.gpus[0], 1);
    build(&sh, NULL);
    expect("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-INVALID");
}

static void test_bad_input(void **state)
{
    (void)state;
    struct gp_diag d = {""};
    h100(1);
    snprintf(inv.driver_version, sizeof inv.driver_version, "550");
    assert_int_equal(gp_node_labels_build(&inv, &no_sharing, NULL, &out, &d), GP_EINVALID);
    assert_non_null(strstr(d.msg, "X.Y[.Z]"));
    h100(1);
    add_mig(&inv.gpus[0], 3);
    struct gp_node_sharing sh = {.mode = GP_NODE_SHARE_MPS,
                                 .replicas = 2,
                                 .fail_requests_greater_than_one = true,
                                 .mig_strategy = GP_NODE_MIG_NONE};
    assert_int_equal(gp_node_labels_build(&inv, &sh, NULL, &out, &d), GP_EINVALID);
    inv.n_gpus = 0; /* no GPU: no labels */
    assert_int_equal(gp_node_labels_build(&inv, &no_sharing, NULL, &out, &d), GP_OK);
    assert_int_equal(out.n, 0);
}

static void test_sanitise(void **state)
{
    (void)state;
    h100(1);
    snprintf(inv.gpus[0].name, sizeof inv.gpus[0].name, "  NVIDIA  A100-SXM4-80GB (rev) ");
    build(&no_sharing, NULL);
    expect("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB-rev");
}

static void test_patch_body(void **state)
{
    (void)state;
    t4s();
    build(&no_sharing, NULL);
    char *body;
    size_t n;
    struct gp_diag d = {""};
    const char *cur = "{\"nvidia.com/gpu.product\":\"Tesla-T4\",\"nvidia.com/mig-1g.5gb.count\":"
                      "\"7\",\"nvidia.com/gpu.deploy.driver\":\"true\",\"kubernetes.io/os\":"
                      "\"linux\",\"nvidia.com/gpu.count\":\"3\"}";
    assert_int_equal(gp_node_labels_patch_body(cur, &out, &body, &n, &d), GP_OK);
    assert_non_null(strstr(body, "\"nvidia.com/mig-1g.5gb.count\":null"));
    assert_non_null(strstr(body, "\"nvidia.com/gpu.count\":\"4\""));
    assert_null(strstr(body, "gpu.deploy"));
    assert_null(strstr(body, "kubernetes.io/os"));
    assert_null(strstr(body, "\"nvidia.com/gpu.product\"")); /* unchanged */
    assert_int_equal(n, out.n - 1 + 1);
    free(body);
    assert_int_equal(gp_node_labels_patch_body("[1]", &out, &body, &n, &d), GP_EPARSE);
}

/* gpuplane's own label: the agent serving the per-node protocol
 * (kube/sched_slot.c waits for its marks only where it is), owned, so an
 * agent that no longer serves it removes it. */
static void test_agent_label(void **state)
{
    (void)state;
    t4s();
    build(&no_sharing, NULL);
    assert_null(gp_node_labels_get(&out, GP_KUBE_LABEL_AGENT));
    struct gp_node_label_opts o = {.timestamp_s = -1, .agent = true};
    build(&no_sharing, &o);
    expect(GP_KUBE_LABEL_AGENT, GP_KUBE_AGENT_PROTOCOL);
    assert_true(gp_node_labels_owned(GP_KUBE_LABEL_AGENT));
    assert_false(gp_node_labels_owned("gpuplane.io/pool"));
    build(&no_sharing, NULL);
    char *body;
    size_t n;
    struct gp_diag d = {""};
    assert_int_equal(
        gp_node_labels_patch_body("{\"gpuplane.io/agent\":\"1\"}", &out, &body, &n, &d), GP_OK);
    assert_non_null(strstr(body, "\"gpuplane.io/agent\":null"));
    free(body);
}

/* What the plugin does with a container asking more than one replica,
 * for the scheduler (kube/objects_share.c): on shared GPUs only, always
 * "true" under MPS; owned. */
static void test_fail_gt1_label(void **state)
{
    (void)state;
    t4s();
    build(&no_sharing, NULL);
    assert_null(gp_node_labels_get(&out, GP_SHARING_LABEL_FAIL_GT1));
    struct gp_node_sharing ts = {
        .mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4, .mig_strategy = GP_NODE_MIG_NONE};
    build(&ts, NULL);
    expect(GP_SHARING_LABEL_FAIL_GT1, "false");
    ts.fail_requests_greater_than_one = true;
    build(&ts, NULL);
    expect(GP_SHARING_LABEL_FAIL_GT1, "true");
    struct gp_node_sharing mps = {
        .mode = GP_NODE_SHARE_MPS, .replicas = 4, .mig_strategy = GP_NODE_MIG_NONE};
    build(&mps, NULL);
    expect(GP_SHARING_LABEL_FAIL_GT1, "true");
    assert_true(gp_node_labels_owned(GP_SHARING_LABEL_FAIL_GT1));
}

static void test_apply_double(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"g1\",\"labels\":"
            "{\"kubernetes.io/hostname\":\"g1\",\"nvidia.com/gpu.deploy.driver\":\"true\","
            "\"nvidia.com/mig-1g.5gb.count\":\"7\",\"nvidia.com/mig.strategy\":\"mixed\"}}}",
            201);
    t4s();
    struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4, .mig_strategy = GP_NODE_MIG_NONE};
    build(&sh, NULL);
    struct gp_diag d = {""};
    size_t n = 0;
    if (gp_node_labels_apply(c, "g1", &out, &n, &d) != GP_OK)
        fail_msg("apply: %s", d.msg);
    assert_int_equal(n, out.n + 2); /* all set, two removed */
    struct gp_kube_response r;
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes/g1", NULL, NULL, &r, &d), GP_OK);
    json_t *node = json_loads(r.body, 0, NULL);
    gp_kube_response_free(&r);
    json_t *l = json_object_get(json_object_get(node, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(l, "nvidia.com/gpu.product")),
                        "Tesla-T4-SHARED");
    assert_string_equal(json_string_value(json_object_get(l, "kubernetes.io/hostname")), "g1");
    assert_string_equal(json_string_value(json_object_get(l, "nvidia.com/gpu.deploy.driver")),
                        "true");
    assert_null(json_object_get(l, "nvidia.com/mig-1g.5gb.count"));
    assert_null(json_object_get(l, "nvidia.com/mig.strategy"));
    assert_int_equal(json_object_size(l), out.n + 2);
    json_decref(node);
    /* again: nothing to change, no PATCH */
    assert_int_equal(gp_node_labels_apply(c, "g1", &out, &n, &d), GP_OK);
    assert_int_equal(n, 0);
    /* no such node */
    assert_int_equal(gp_node_labels_apply(c, "nope", &out, &n, &d), GP_ENOTFOUND);
    gp_kube_client_free(c);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_slicing_shared),
        cmocka_unit_test(test_mig_single),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_sanitise),
        cmocka_unit_test(test_patch_body),
        cmocka_unit_test(test_agent_label),
        cmocka_unit_test(test_fail_gt1_label),
        cmocka_unit_test_setup_teardown(test_apply_double, kd_start, kd_stop),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_golden_mig_single),
        cmocka_unit_test(test_golden_mig_mixed),
        cmocka_unit_test(test_regex_lists_keys),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
