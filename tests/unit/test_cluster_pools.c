/* test_cluster_pools.c - the Cluster YAML's pool sizes, boot time, prices,
 * provider offers (their GPUs against the pool's, providers that cannot
 * give nodes, the bring-your-own warning), spot fields, control plane and
 * autoscaler section: what each field reads to, and a one-line error
 * naming the field for each mistake. Also checks the compiled catalog (providers_table.c, generated
 * at build time) against data/providers.json. */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "io/cluster.h"
#include "io/providers.h"

#define HEAD                                                                                       \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n  nodePools:\n"        \
    "  - name: p\n    gpu: {model: A100-80GB, count: 8, memory: 80Gi}\n    cpu: \"96\"\n"          \
    "    memory: 1Ti\n"

static enum gp_err parse(const char *text, struct gp_arena *a, struct gp_cluster *c,
                         struct gp_diag *d)
{
    return gp_cluster_parse_yaml(text, strlen(text), "c.yaml", a, c, d);
}

static void test_fixed_and_autoscaled(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    assert_int_equal(parse(HEAD "    count: 3\n    pricePerHour: 20\n", &a, &c, &d), GP_OK);
    const struct gp_pool_spec *p = &c.pools[0];
    assert_int_equal(p->count, 3);
    assert_int_equal(p->min_count, 3);
    assert_int_equal(p->max_count, 3);
    assert_false(gp_pool_is_dynamic(p));
    assert_float_equal(p->on_demand_per_hour_usd, 20, 0);
    assert_float_equal(c.autoscaler.scale_down_unneeded_s, 600, 0); /* the default */
    assert_int_equal(parse(HEAD "    minCount: 1\n    maxCount: 5\n    initialCount: 2\n"
                                "    bootTime: 4m30s\n    pricePerGpuHour: 2.5\n",
                           &a, &c, &d),
                     GP_OK);
    p = &c.pools[0];
    assert_int_equal(p->count, 2);
    assert_int_equal(p->min_count, 1);
    assert_int_equal(p->max_count, 5);
    assert_true(gp_pool_is_dynamic(p));
    assert_float_equal(p->boot_s, 270, 0);
    assert_float_equal(p->price_per_hour_usd, 20, 1e-12);
    assert_int_equal(parse(HEAD "    maxCount: 5\n", &a, &c, &d), GP_OK);
    assert_int_equal(c.pools[0].count, 0); /* scales from zero */
    gp_arena_free(&a);
}

static void test_offer_spot_control_plane(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    const char *text =
        "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n"
        "  controlPlane: {offer: eks}\n  autoscaler: {scaleDownUnneededTime: 5m}\n"
        "  nodePools:\n"
        "  - name: od\n    gpu: {model: A100-80GB, count: 8}\n    cpu: \"96\"\n"
        "    memory: 1Ti\n    count: 1\n    offer: eks/p4de.24xlarge\n"
        "  - name: sp\n    gpu: {model: H100-80GB, count: 8}\n    cpu: \"96\"\n"
        "    memory: 1Ti\n    maxCount: 2\n    spot: true\n"
        "    offer: {provider: coreweave, instance: NVIDIA HGX H100}\n"
        "    interruptionRate: 0.2\n"
        "  - name: rec\n    gpu: {model: L4, count: 1}\n    cpu: \"8\"\n    memory: 32Gi\n"
        "    count: 1\n    spot: true\n    pricePerHour: 0.3\n"
        "    interruptionTimes: [3h, 1h, 90m]\n    spotNotice: 30s\n";
    assert_int_equal(parse(text, &a, &c, &d), GP_OK);
    assert_float_equal(c.control_plane_per_hour_usd, 0.1, 1e-12);
    assert_float_equal(c.autoscaler.scale_down_unneeded_s, 300, 0);
    assert_float_equal(c.pools[0].price_per_hour_usd, 27.44705, 1e-9);
    assert_string_equal(c.pools[0].offer, "eks/p4de.24xlarge");
    assert_true(c.pools[1].spot);
    assert_float_equal(c.pools[1].price_per_hour_usd, 19.71, 1e-9);     /* spot node price */
    assert_float_equal(c.pools[1].on_demand_per_hour_usd, 49.24, 1e-9); /* for the savings */
    assert_float_equal(c.pools[1].spot_rate_per_node_hour, 0.2, 0);
    assert_float_equal(c.pools[1].spot_notice_s, 120, 0); /* the default notice */
    assert_int_equal(c.pools[2].nspot_times, 3);
    assert_float_equal(c.pools[2].spot_times_s[0], 3600, 0); /* sorted */
    assert_float_equal(c.pools[2].spot_times_s[2], 10800, 0);
    assert_float_equal(c.pools[2].spot_notice_s, 30, 0);
    assert_float_equal(c.pools[2].on_demand_per_hour_usd, 0, 0); /* not known */
    gp_arena_free(&a);
}

static void expect_error(const char *text, const char *want)
{
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    enum gp_err err = parse(text, &a, &c, &d);
    if (err == GP_OK || !strstr(d.msg, want))
        fail_msg("got \"%s\", want an error with \"%s\"", d.msg, want);
    assert_null(strchr(d.msg, '\n'));
    assert_true(strncmp(d.msg, "c.yaml:", 7) == 0);
    gp_arena_free(&a);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error(HEAD "    count: 2\n    maxCount: 4\n",
                 "spec.nodePools[0].maxCount: not with count");
    expect_error(HEAD "    minCount: 1\n", "missing required field \"count\"");
    expect_error(HEAD "    minCount: 5\n    maxCount: 4\n",
                 "c.yaml:10:15: spec.nodePools[0].minCount: expected at most maxCount (4), got 5");
    expect_error(HEAD "    maxCount: 0\n", "maxCount: expected at least 1 node");
    expect_error(HEAD "    maxCount: 3\n    initialCount: 4\n",
                 "initialCount: expected from minCount (0) to maxCount (3), got 4");
    expect_error(HEAD "    count: 1\n    bootTime: soon\n",
                 "bootTime: expected a duration like 30s, 4m or 1h30m");
    expect_error(HEAD "    count: 1\n    pricePerHour: 3\n    pricePerGpuHour: 1\n",
                 "pricePerGpuHour: not with pricePerHour");
    expect_error(HEAD "    count: 1\n    offer: eks/p4de.24xlarge\n    pricePerHour: 3\n",
                 "offer: not with pricePerHour");
    expect_error(HEAD "    count: 1\n    offer: nowhere/x\n", "offer: no provider \"nowhere\"");
    expect_error(HEAD "    count: 1\n    offer: eks/p9\n", "eks has no offer \"p9\"");
    expect_error(HEAD "    count: 1\n    offer: eks\n", "offer: expected an offer");
    expect_error(HEAD "    count: 1\n    offer: aks/Standard_NC24ads_A100_v4\n",
                 "offer: aks/Standard_NC24ads_A100_v4 has 1 GPUs per node, the pool's gpu.count "
                 "is 8");
    expect_error(HEAD "    count: 1\n    offer: akamai_lke/GPU Linode\n",
                 "c.yaml:11:12: spec.nodePools[0].offer: akamai_lke/GPU Linode names 2 offers; "
                 "write offer: {provider: akamai_lke, instance: GPU Linode, gpu: ...} with gpu "
                 "one of: RTX PRO 6000 Blackwell Server Edition, RTX 4000 Ada");
    /* the offer's GPUs are the pool's: the model, then the memory */
    expect_error(HEAD "    count: 1\n    offer: eks/p5.48xlarge\n",
                 "c.yaml:11:12: spec.nodePools[0].offer: eks/p5.48xlarge has H100 SXM 80GB GPUs, "
                 "not the pool's gpu.model A100-80GB");
    expect_error(HEAD "    count: 1\n    offer: eks/p4d.24xlarge\n",
                 "offer: eks/p4d.24xlarge has A100 SXM 40GB GPUs, not the pool's gpu.model "
                 "A100-80GB");
    /* providers whose machines cannot be nodes (data/providers.json: none) */
    expect_error(HEAD "    count: 1\n    offer: runpod/Secure Cloud\n",
                 "c.yaml:11:12: spec.nodePools[0].offer: runpod's machines cannot be Kubernetes "
                 "nodes");
    expect_error(HEAD "    count: 1\n    offer: {provider: vastai, instance: \"marketplace median "
                      "(verified, on-demand)\"}\n",
                 "offer: vastai's machines cannot be Kubernetes nodes");
    expect_error(HEAD "    count: 1\n    spot: true\n    offer: eks/p4de.24xlarge\n",
                 "has no spot price");
    expect_error(HEAD "    count: 1\n    interruptionRate: 0.1\n",
                 "interruptionRate: only with spot: true");
    expect_error(HEAD "    count: 1\n    spot: yes\n", "spot: expected true or false");
    expect_error(HEAD "    count: 1\n    spot: true\n    interruptionRate: 0.1\n"
                      "    interruptionTimes: [1h]\n",
                 "interruptionRate: not with a recorded series");
    expect_error(HEAD "    count: 1\n    spot: true\n    interruptionTimes: [1h, later]\n",
                 "interruptionTimes[1]: expected a duration");
    expect_error(HEAD "    count: 1\n    spot: true\n    interruptionFile: no-such-file.txt\n",
                 "interruptionFile: expected a readable regular file");
    expect_error(HEAD "    count: 1\n    spot: true\n    spotNotice: 2h\n",
                 "spotNotice: expected a duration like 30s, 4m or 1h30m (at most 3600 s)");
    expect_error(HEAD "    count: 1\n    onDemandPricePerHour: 3\n",
                 "onDemandPricePerHour: only with spot: true");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n"
                 "  controlPlane: {offer: lambda}\n  nodePools:\n  - name: c\n    cpu: \"1\"\n"
                 "    memory: 1Gi\n    count: 1\n",
                 "spec.controlPlane.offer: data/providers.json has no control-plane fee for "
                 "lambda");
    expect_error("apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n"
                 "  autoscaler: {scaleDownDelay: 5m}\n  nodePools:\n  - name: c\n    cpu: \"1\"\n"
                 "    memory: 1Gi\n    count: 1\n",
                 "spec.autoscaler.scaleDownDelay: unknown field");
}

/* The compiled table says what data/providers.json says. */
/* topology: {key, nodesPerDomain}: read as written, and each mistake named. */
static void test_topology(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    assert_int_equal(parse(HEAD "    maxCount: 64\n"
                                "    topology: {key: topology.kubernetes.io/rack, "
                                "nodesPerDomain: 32}\n",
                           &a, &c, &d),
                     GP_OK);
    assert_string_equal(c.pools[0].topology_key, "topology.kubernetes.io/rack");
    assert_int_equal(c.pools[0].nodes_per_domain, 32);
    assert_int_equal(parse(HEAD "    count: 2\n", &a, &c, &d), GP_OK);
    assert_null(c.pools[0].topology_key); /* none unless written */
    assert_int_equal(c.pools[0].nodes_per_domain, 0);
    gp_arena_free(&a);
    expect_error(HEAD "    count: 2\n    topology: rack\n", "topology: expected a mapping");
    expect_error(HEAD "    count: 2\n    topology: {key: gpuplane.io/rack}\n",
                 "topology: missing required field \"nodesPerDomain\"");
    expect_error(HEAD "    count: 2\n    topology: {key: gpuplane.io/rack, nodesPerDomain: 0}\n",
                 "topology.nodesPerDomain:");
    expect_error(HEAD "    count: 2\n    topology: {key: \"bad key!\", nodesPerDomain: 2}\n",
                 "topology.key: expected a label key");
    expect_error(HEAD "    count: 2\n    topology: {key: gpuplane.io/pool, nodesPerDomain: 2}\n",
                 "topology.key: this label is set on every node");
    expect_error(HEAD "    count: 2\n    labels: {gpuplane.io/rack: r1}\n"
                      "    topology: {key: gpuplane.io/rack, nodesPerDomain: 2}\n",
                 "topology.key: gpuplane.io/rack is also one of the pool's labels");
    expect_error(HEAD "    count: 2\n    topology: {key: gpuplane.io/rack, nodesPerDomain: 2, "
                      "size: 3}\n",
                 "topology.size: unknown field");
}

/* A bring-your-own offer beside a managed control plane is read, with one
 * warning naming the pool's offer; without the control plane, none. */
static void test_byo_offer_warning(void **state)
{
    (void)state;
    struct gp_arena a;
    struct gp_cluster c;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    const char *pools = "  nodePools:\n"
                        "  - name: cpu\n    cpu: \"8\"\n    memory: 32Gi\n    count: 1\n"
                        "  - name: a10\n    gpu: {model: A10, count: 1}\n    cpu: \"30\"\n"
                        "    memory: 200Gi\n    count: 1\n    offer: lambda/1x A10\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s%s",
             "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n", pools,
             "  controlPlane: {offer: eks}\n"); /* after the pools: read in any order */
    assert_int_equal(parse(text, &a, &c, &d), GP_OK);
    assert_int_equal(c.nwarnings, 1);
    assert_string_equal(c.warnings[0],
                        "c.yaml:15:12: spec.nodePools[1].offer: lambda is bring-your-own "
                        "Kubernetes (data/providers.json: its machines join a cluster you run "
                        "yourself, e.g. k3s or kubeadm), not eks's managed control plane "
                        "(spec.controlPlane.offer); the cost counts both");
    assert_float_equal(c.pools[1].price_per_hour_usd, 1.29, 1e-12); /* read all the same */
    snprintf(text, sizeof text, "%s%s",
             "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n", pools);
    assert_int_equal(parse(text, &a, &c, &d), GP_OK);
    assert_int_equal(c.nwarnings, 0);
    snprintf(text, sizeof text, "%s%s%s",
             "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: t}\nspec:\n",
             "  controlPlane: {pricePerHour: 0.1}\n", pools); /* no provider named */
    assert_int_equal(parse(text, &a, &c, &d), GP_OK);
    assert_int_equal(c.nwarnings, 0);
    gp_arena_free(&a);
}

/* gp_offer_gpu_matches: which gpu.model names which catalog GPU. */
static void test_offer_gpu_matches(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *form;
        uint32_t mem_gb;
        const char *model;
        bool want;
    } cases[] = {
        {"A100 SXM 80GB", "SXM", 80, "A100-80GB", true},
        {"A100 SXM 80GB", "SXM", 80, "A100", true},
        {"A100 SXM 80GB", "SXM", 80, "a100-sxm4-80gb", true},        /* case, SXM4 is SXM */
        {"A100 SXM 80GB", "SXM", 80, "NVIDIA-A100-SXM4-80GB", true}, /* GFD's product label */
        {"A100 SXM 80GB", "SXM", 80, "A100-40GB", false},            /* memory */
        {"A100 SXM 80GB", "SXM", 80, "A100-PCIE-80GB", false},       /* form factor */
        {"A100 SXM 80GB", "SXM", 80, "H100-80GB", false},            /* family */
        {"A10 24GB", "PCIe", 24, "A100", false},                     /* A100 is not A10 */
        {"A10 24GB", "PCIe", 24, "NVIDIA-A10", true},
        {"GH200 96GB", "GH200", 96, "H100", false},   /* H100 is not GH200 */
        {"H100 80GB", "", 80, "H100-SXM-80GB", true}, /* form factor not known: not checked */
        {"H100 80GB", "", 80, "NVIDIA-H100-80GB-HBM3", true},
        {"H100 NVL 94GB", "NVL (PCIe)", 94, "H100-80GB", false},
        {"H100 NVL 94GB", "NVL (PCIe)", 94, "H100-NVL", true},
        {"A100 40GB / 80GB", "", 0, "A100-40GB", true}, /* either memory */
        {"A100 40GB / 80GB", "", 0, "A100-48GB", false},
        {"RTX 4000 Ada", "PCIe", 0, "RTX-6000-Ada", false},
        {"RTX 4000 Ada", "PCIe", 0, "RTX-4000-Ada", true},
        {"V100 32GB", "", 32, "Tesla-V100-SXM2-32GB", true},
        {"MI325X / MI350X / B300", "", 0, "B300", true},
        {"T1-45 flavor (GPU model not stated in guide)", "", 0, "V100", false},
        {"H100 SXM 80GB", "SXM", 80, "", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gp_offer o = {
            "p", "i", cases[i].gpu, cases[i].form, 8, cases[i].mem_gb, 1, -1, -1, -1, "", "",
            "",  -1};
        if (gp_offer_gpu_matches(&o, cases[i].model) != cases[i].want)
            fail_msg("\"%s\" against offer GPU \"%s\" (%s): want %s", cases[i].model, cases[i].gpu,
                     cases[i].form, cases[i].want ? "a match" : "no match");
    }
}

static void test_catalog_matches_json(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *root = json_load_file(GP_EXAMPLES_DIR "/../data/providers.json", 0, &jerr);
    assert_non_null(root);
    json_t *provs = json_object_get(root, "providers");
    size_t np = json_array_size(provs), k = 0;
    assert_int_equal(np, gp_nproviders);
    for (size_t i = 0; i < np; i++) {
        json_t *p = json_array_get(provs, i);
        assert_string_equal(json_string_value(json_object_get(p, "id")), gp_providers[i].id);
        json_t *fee = json_object_get(p, "control_plane_fee_usd_per_hour");
        assert_float_equal(json_is_number(fee) ? json_number_value(fee) : -1,
                           gp_providers[i].control_plane_usd_per_hour, 1e-12);
        const char *kube = json_string_value(json_object_get(p, "kubernetes"));
        assert_non_null(kube);
        assert_int_equal(gp_providers[i].kubernetes, strcmp(kube, "managed") == 0 ? GP_KUBE_MANAGED
                                                     : strcmp(kube, "byo") == 0   ? GP_KUBE_BYO
                                                                                  : GP_KUBE_NONE);
        assert_ptr_equal(gp_provider_find(gp_providers[i].id), &gp_providers[i]);
        json_t *offers = json_object_get(p, "gpu_offers");
        for (size_t j = 0; j < json_array_size(offers); j++, k++) {
            json_t *o = json_array_get(offers, j);
            assert_true(k < gp_noffers);
            const struct gp_offer *t = &gp_offers[k];
            const char *inst = json_string_value(json_object_get(o, "instance_type"));
            assert_string_equal(inst ? inst : "", t->instance);
            const char *form = json_string_value(json_object_get(o, "form_factor"));
            assert_string_equal(form ? form : "", t->form_factor);
            json_t *mem = json_object_get(o, "gpu_memory_gb");
            assert_int_equal(json_is_integer(mem) ? json_integer_value(mem) : 0, t->gpu_memory_gb);
            static const char *const keys[] = {"on_demand_usd_per_gpu_hour",
                                               "on_demand_usd_per_node_hour",
                                               "spot_usd_per_gpu_hour", "spot_usd_per_node_hour"};
            double want[4] = {t->on_demand_gpu_hour, t->on_demand_node_hour, t->spot_gpu_hour,
                              t->spot_node_hour};
            for (int m = 0; m < 4; m++) {
                json_t *v = json_object_get(o, keys[m]);
                assert_float_equal(json_is_number(v) ? json_number_value(v) : -1, want[m], 1e-9);
            }
        }
    }
    assert_int_equal(k, gp_noffers);
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_and_autoscaled),
        cmocka_unit_test(test_offer_spot_control_plane),
        cmocka_unit_test(test_byo_offer_warning),
        cmocka_unit_test(test_offer_gpu_matches),
        cmocka_unit_test(test_topology),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_catalog_matches_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
