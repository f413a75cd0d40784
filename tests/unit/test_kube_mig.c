/* test_kube_mig.c - MIG from the API (kube/objects.h, gp_kube_node_mig_read;
 * docs/kube.md, "MIG from the API"): Nodes shaped as NVIDIA's GPU feature
 * discovery and device plugin publish them (the labels of
 * ../shared/k8s/samples/nvidia-gfd/, the resources the device plugin
 * advertises) read into the engine's MIG model, pods' nvidia.com/mig-*
 * requests placed on instances and written as gpuplane.io/mig, against
 * the API server double with the audit clean after every cycle:
 *  - the mixed strategy (an H100 in all-balanced: 2 x 1g.10gb, 2g.20gb,
 *    3g.40gb) beside a node of whole GPUs: each instance given once, a
 *    whole-GPU pod on the whole GPUs, a profile the node lacks and one
 *    whose instances are all taken Unschedulable in kube-scheduler's words
 *    ("Insufficient nvidia.com/mig-1g.10gb");
 *  - the single strategy (all-1g.10gb: nvidia.com/gpu counts MIG devices):
 *    seven pods on seven instances, the eighth Insufficient nvidia.com/gpu;
 *  - a node with whole and MIG-enabled GPUs side by side (four H100s, GPUs
 *    1 and 2 in all-1g.10gb): placed on as two parts, whole-GPU pods on
 *    the whole GPUs and MIG pods on the MIG ones, by the GPU indexes
 *    gpuplane's node agent labels (node/labels.c builds the label from the
 *    inventory) or, without the label (NVIDIA's own plugin), by the rule
 *    (whole GPUs first); counted once in kube-scheduler's words; a
 *    restart reads both kinds back; the audit names a whole booking on a
 *    GPU in MIG mode;
 *  - the same with MIG GPUs of different layouts under NVIDIA's own
 *    plugin (no gpuplane agent): placed on by count, nothing named for a
 *    MIG pod, every MIG pod there audited by its number;
 *  - a device unhealthy (allocatable below capacity): no more pods than
 *    allocatable, placed on again once healthy;
 *  - a node whose layout is being applied (mig.config.state pending);
 *  - the readers alone: the sample label sets, uneven layouts, requests.
 * Its "shared" run reads the mixed node's labels whole from
 * ../shared/k8s/samples/nvidia-gfd/ (skipped without it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "engine/sharing.h"
#include "node/labels.h"

#define GFD_DIR GP_SHARED_DIR "/k8s/samples/nvidia-gfd"

static bool use_samples; /* the shared run: the labels of the published samples */

/* GFD's labels of the H100 in the mixed sample (the nvidia.com ones that
 * matter here), or the sample file's whole. */
static json_t *mixed_labels(void)
{
    if (use_samples) {
        json_t *j = json_load_file(GFD_DIR "/h100-mig-mixed-node-labels.json", 0, NULL);
        assert_non_null(j);
        return j;
    }
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "nvidia.com/gpu.product",
                     "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count", "1", "nvidia.com/gpu.memory",
                     "81559", "nvidia.com/gpu.replicas", "0", "nvidia.com/mig.capable", "true",
                     "nvidia.com/mig.config", "all-balanced", "nvidia.com/mig.config.state",
                     "success", "nvidia.com/mig.strategy", "mixed", "nvidia.com/mig-1g.10gb.count",
                     "2");
}

/* The same H100 under the single strategy with all-1g.10gb, as the GPU
 * Operator's MIG page shows it (quoted-nvidia-docs.md section 5). */
static json_t *single_labels(void)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "nvidia.com/gpu.product",
                     "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "nvidia.com/gpu.count", "7",
                     "nvidia.com/gpu.memory", "9984", "nvidia.com/mig.capable", "true",
                     "nvidia.com/mig.config", "all-1g.10gb", "nvidia.com/mig.config.state",
                     "success", "nvidia.com/mig.strategy", "single");
}

/* A node with these labels (stolen) and these extended resources (JSON
 * "\"nvidia.com/mig-1g.10gb\":\"2\",..." in capacity and allocatable). */
/* The same with its allocatable's extended resources apart (alloc: a
 * device unhealthy is in capacity only). */
static void mig_node_alloc(struct world *w, const char *name, json_t *labels, const char *res,
                           const char *alloc);

static void mig_node(struct world *w, const char *name, json_t *labels, const char *res)
{
    mig_node_alloc(w, name, labels, res, res);
}

static void mig_node_alloc(struct world *w, const char *name, json_t *labels, const char *res,
                           const char *alloc)
{
    json_t *n = json_pack("{s:{s:s,s:o},s:{}}", "metadata", "name", name, "labels", labels, "spec");
    char *text = json_dumps(n, JSON_COMPACT);
    json_decref(n);
    kd_call(w->admin, "POST", "/api/v1/nodes", text, 201);
    free(text);
    char b[1024], path[128];
    snprintf(b, sizeof b,
             "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"%s%s},"
             "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"%s%s},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             res[0] ? "," : "", res, alloc[0] ? "," : "", alloc);
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

#define MIXED_RES                                                                                  \
    "\"nvidia.com/gpu\":\"0\",\"nvidia.com/mig-1g.10gb\":\"2\",\"nvidia.com/mig-2g.20gb\":\"1\","  \
    "\"nvidia.com/mig-3g.40gb\":\"1\""

/* A pod of `sched` asking `res` ("\"nvidia.com/mig-1g.10gb\":\"1\""). */
static void res_pod(struct world *w, const char *name, const char *sched, const char *res)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"%s\",\"priority\":0,"
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\",\"memory\":\"1Gi\",%s},\"limits\":{%s}}}]}}",
             name, sched, res, res);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static const char *condition_of(struct world *w, const char *pod)
{
    static char out[512];
    json_t *p = w_pod_get(w, pod);
    json_t *c = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 0);
    const char *m = json_string_value(json_object_get(c, "message"));
    snprintf(out, sizeof out, "%s", m ? m : "");
    json_decref(p);
    return out;
}

/* Every bound pod's gpuplane.io/mig instances on its node: no memory slice
 * of a GPU in two of them (the model's placement sizes). */
static unsigned check_slices(struct world *w, const struct gp_mig_model *m)
{
    json_t *list = w_get(w, "/api/v1/pods");
    uint32_t used[8][GP_MAX_GPUS_PER_NODE] = {{0}};
    char nodes[8][32] = {{0}};
    unsigned instances = 0;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        const char *mig = json_string_value(json_object_get(ann, GP_KUBE_ANN_MIG));
        if (!n || !mig)
            continue;
        assert_string_equal(json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE)), n);
        size_t k = 0;
        while (k < 8 && nodes[k][0] && strcmp(nodes[k], n) != 0)
            k++;
        assert_true(k < 8);
        snprintf(nodes[k], sizeof nodes[k], "%s", n);
        struct gp_pick pick;
        assert_true(gp_kube_mig_parse(mig, m, &pick));
        const struct gp_mig_profile *pr = &m->profiles[pick.mig_profile];
        for (unsigned j = 0; j < pick.ngpus; j++) {
            uint32_t span = ((1u << pr->memory_slices) - 1) << pick.mig_start[j];
            if (used[k][pick.gpu[j]] & span)
                fail_msg("a MIG slice of GPU %u of %s given twice (%s)", pick.gpu[j], n, mig);
            used[k][pick.gpu[j]] |= span;
            instances++;
        }
    }
    json_decref(list);
    return instances;
}

static const struct gp_mig_model *h100(void)
{
    const struct gp_mig_model *m = gp_mig_model_find("NVIDIA-H100-80GB-HBM3");
    assert_non_null(m);
    return m;
}

/* The mixed strategy beside whole GPUs. */
static void test_mixed(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    mig_node(&w, "mx", mixed_labels(), MIXED_RES);
    w_node(&w, "w1", 2); /* A100s, not in MIG mode */
    res_pod(&w, "a", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "b", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "c", "gpuplane", "\"nvidia.com/mig-2g.20gb\":\"1\"");
    res_pod(&w, "d", "gpuplane", "\"nvidia.com/mig-3g.40gb\":\"1\"");
    res_pod(&w, "g", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    res_pod(&w, "lacks", "gpuplane", "\"nvidia.com/mig-4g.40gb\":\"1\"");
    assert_int_equal(w_cycle(&w), 5);
    const char *node_a = w_node_of(&w, "a", NULL);
    assert_string_equal(node_a, "mx");
    assert_string_equal(w_node_of(&w, "d", NULL), "mx");
    assert_string_equal(w_node_of(&w, "g", NULL), "w1");
    /* all-balanced on an H100-80GB: 3g.40gb at 4, 2g.20gb at 0, 1g.10gb at
     * 2 and 3 (docs/sharing.md) */
    assert_string_equal(w_ann(&w, "d", GP_KUBE_ANN_MIG), "3g.40gb:0@4");
    assert_string_equal(w_ann(&w, "c", GP_KUBE_ANN_MIG), "2g.20gb:0@0");
    char ab[64];
    snprintf(ab, sizeof ab, "%s ", w_ann(&w, "a", GP_KUBE_ANN_MIG));
    snprintf(ab + strlen(ab), sizeof ab - strlen(ab), "%s", w_ann(&w, "b", GP_KUBE_ANN_MIG));
    assert_true(strcmp(ab, "1g.10gb:0@2 1g.10gb:0@3") == 0 ||
                strcmp(ab, "1g.10gb:0@3 1g.10gb:0@2") == 0);
    assert_string_equal(w_ann(&w, "a", GP_KUBE_ANN_GPUS), "0");
    assert_string_equal(w_ann(&w, "a", GP_KUBE_ANN_PHASE), "allocated"); /* the double as agent */
    assert_string_equal(w_ann(&w, "g", GP_KUBE_ANN_MIG), "");
    assert_int_equal(check_slices(&w, h100()), 4);
    assert_string_equal(
        condition_of(&w, "lacks"),
        "0/2 nodes are available: 2 Insufficient nvidia.com/mig-4g.40gb."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
    /* every 1g.10gb taken: the next one fits nowhere */
    res_pod(&w, "e", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(
        condition_of(&w, "e"),
        "0/2 nodes are available: 2 Insufficient nvidia.com/mig-1g.10gb."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
    assert_string_equal(
        w_events(&w, "FailedScheduling", "e"),
        "0/2 nodes are available: 2 Insufficient nvidia.com/mig-1g.10gb."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
    /* a whole GPU on the MIG node: none there */
    res_pod(&w, "g2", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    res_pod(&w, "g3", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(
        condition_of(&w, strcmp(w_node_of(&w, "g2", NULL), "") ? "g3" : "g2"),
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
        " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..");
    /* a rebuild (a restart) reads the instances back: nothing moves */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/a?gracePeriodSeconds=0", NULL, 200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1); /* e takes a's instance, and only that one */
    assert_string_equal(w_node_of(&w, "e", NULL), "mx");
    assert_int_equal(check_slices(&w, h100()), 4);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

/* The single strategy: nvidia.com/gpu counts MIG devices. */
static void test_single(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    mig_node(&w, "sg", single_labels(), "\"nvidia.com/gpu\":\"7\"");
    char name[16];
    for (int i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "s%d", i);
        res_pod(&w, name, "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    }
    res_pod(&w, "mixedreq", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    assert_int_equal(w_cycle(&w), 7);
    assert_int_equal(check_slices(&w, h100()), 7);
    unsigned unbound = 0;
    for (int i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "s%d", i);
        if (!w_node_of(&w, name, NULL)[0]) {
            unbound++;
            assert_string_equal(condition_of(&w, name),
                                "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
                                " preemption: 0/1 nodes are available: 1 No preemption victims "
                                "found for incoming pod..");
        } else {
            assert_int_equal(strncmp(w_ann(&w, name, GP_KUBE_ANN_MIG), "1g.10gb:0@", 10), 0);
        }
    }
    assert_int_equal(unbound, 1);
    /* under single the device plugin has no nvidia.com/mig-* resource */
    assert_string_equal(
        condition_of(&w, "mixedreq"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    w_close(&w);
}

/* Eight H100s of all-1g.10gb under the single strategy: NVIDIA's plugin
 * advertises the 56 MIG devices as nvidia.com/gpu (and GFD counts them in
 * gpu.count). Such a node was refused as "not a number of GPUs from 0 to
 * 16" and never used; all 56 instances are placed, a 57th pod waits. */
static void test_single_eight(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    json_t *l = single_labels();
    json_object_set_new(l, "nvidia.com/gpu.count", json_string("56"));
    mig_node(&w, "sg8", l, "\"nvidia.com/gpu\":\"56\"");
    char name[16];
    for (int i = 1; i <= 57; i++) {
        snprintf(name, sizeof name, "e%d", i);
        res_pod(&w, name, "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    }
    assert_int_equal(w_cycle(&w), 56);
    assert_int_equal(check_slices(&w, h100()), 56);
    w_close(&w);
}

/* The label gpuplane's node agent puts on four H100s whose GPUs 1 and 2
 * are in MIG mode with seven 1g.10gb each (node/labels.c from the
 * inventory, the mixed strategy). */
static const char *agent_mig_gpus(void)
{
    static struct gp_node_inventory inv;
    static struct gp_node_labels out;
    memset(&inv, 0, sizeof inv);
    snprintf(inv.driver_version, sizeof inv.driver_version, "550.54.15");
    inv.cuda_driver_version = 12040;
    inv.n_gpus = 4;
    for (unsigned i = 0; i < 4; i++) {
        struct gp_node_gpu *g = &inv.gpus[i];
        g->index = i;
        snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
        g->memory_mib = 81559;
        g->cc_major = 9;
        g->mig_capable = true;
        g->mig_enabled = i == 1 || i == 2;
        for (unsigned k = 0; g->mig_enabled && k < 7; k++) {
            struct gp_node_mig *m = &g->migs[g->n_migs++];
            snprintf(m->profile, sizeof m->profile, "1g.10gb");
            m->memory_mib = 9984;
            m->gi_slices = m->ci_slices = 1;
        }
    }
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    struct gp_diag d = {""};
    assert_int_equal(gp_node_labels_build(&inv, &sh, NULL, &out, &d), GP_OK);
    assert_string_equal(gp_node_labels_get(&out, "nvidia.com/mig-1g.10gb.count"), "14");
    assert_string_equal(gp_node_labels_get(&out, "nvidia.com/gpu.count"), "4");
    const char *v = gp_node_labels_get(&out, GP_KUBE_LABEL_MIG_GPUS);
    assert_non_null(v);
    assert_true(
        gp_node_labels_owned(GP_KUBE_LABEL_MIG_GPUS)); /* removed when it no longer applies */
    /* single and none strategies: no such label */
    const struct gp_node_sharing single = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_NONE};
    static struct gp_node_labels other;
    assert_int_equal(gp_node_labels_build(&inv, &single, NULL, &other, &d), GP_OK);
    assert_null(gp_node_labels_get(&other, GP_KUBE_LABEL_MIG_GPUS));
    return v;
}

/* The GPU indexes in the pods' annotations: whole-GPU pods' gpuplane.io/gpus
 * and MIG pods' gpuplane.io/mig GPUs, as masks (bit g: GPU g). */
static void kinds(struct world *w, uint32_t *whole, uint32_t *mig)
{
    *whole = *mig = 0;
    json_t *list = w_get(w, "/api/v1/pods");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        const char *g = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
        const char *m = json_string_value(json_object_get(ann, GP_KUBE_ANN_MIG));
        struct gp_pick pick;
        if (m) {
            assert_true(gp_kube_mig_parse(m, h100(), &pick));
            for (unsigned k = 0; k < pick.ngpus; k++)
                *mig |= 1u << pick.gpu[k];
        } else if (g) {
            assert_true(gp_kube_pick_parse(g, &pick));
            for (unsigned k = 0; k < pick.ngpus; k++) {
                if (*whole >> pick.gpu[k] & 1)
                    fail_msg("GPU %u named whole twice", pick.gpu[k]);
                *whole |= 1u << pick.gpu[k];
            }
        }
    }
    json_decref(list);
}

#define SPLIT_RES "\"nvidia.com/gpu\":\"2\",\"nvidia.com/mig-1g.10gb\":\"14\""

/* Four H100s, two whole and two in MIG mode (all-1g.10gb): labelled, the
 * GPUs the agent says (1 and 2 in MIG mode); not, the rule (0 and 1
 * whole). */
static void split_case(bool labelled)
{
    struct world w;
    w_open(&w, true);
    json_t *l = mixed_labels();
    json_object_set_new(l, "nvidia.com/gpu.count", json_string("4"));
    if (labelled)
        json_object_set_new(l, GP_KUBE_LABEL_MIG_GPUS, json_string(agent_mig_gpus()));
    mig_node(&w, "sx", l, SPLIT_RES);
    uint32_t want_whole = labelled ? 0x9 : 0x3, want_mig = labelled ? 0x6 : 0xc;
    char name[16];
    res_pod(&w, "w1", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    res_pod(&w, "w2", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    for (int i = 1; i <= 14; i++) {
        snprintf(name, sizeof name, "m%d", i);
        res_pod(&w, name, "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    }
    assert_int_equal(w_cycle(&w), 16);
    uint32_t whole, mig;
    kinds(&w, &whole, &mig);
    assert_int_equal(whole, want_whole);
    assert_int_equal(mig, want_mig);
    assert_int_equal(check_slices(&w, h100()), 14);
    /* full on both kinds: counted as one node, in the resource asked */
    res_pod(&w, "w3", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    res_pod(&w, "m15", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(
        condition_of(&w, "w3"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    assert_string_equal(
        condition_of(&w, "m15"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    /* a restart reads both kinds back; a deleted pod's GPU or instance
     * goes to the next of its kind, and only that one */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    char w1[16];
    snprintf(w1, sizeof w1, "%s", w_ann(&w, "w1", GP_KUBE_ANN_GPUS));
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/w1?gracePeriodSeconds=0", NULL,
            200);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/m1?gracePeriodSeconds=0", NULL,
            200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 2);
    assert_string_equal(w_ann(&w, "w3", GP_KUBE_ANN_GPUS), w1);
    assert_string_equal(w_node_of(&w, "m15", NULL), "sx");
    kinds(&w, &whole, &mig);
    assert_int_equal(whole, want_whole);
    assert_int_equal(mig, want_mig);
    assert_int_equal(check_slices(&w, h100()), 14);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* a pod of ours annotated whole on a GPU in MIG mode (a scheduler that
     * mapped no index) and bound: the audit names it */
    unsigned g = labelled ? 1 : 2;
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"bad\",\"annotations\":{\"gpuplane.io/node\":\"sx\","
             "\"gpuplane.io/gpus\":\"%u\"}},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":0,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
             "\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
             g);
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
    w_bind(&w, "bad", "sx");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    char want[128];
    snprintf(want, sizeof want, "GPU %u of node sx is in MIG mode and booked whole by default/bad",
             g);
    assert_string_equal(gp_kube_sched_audit_last(w.s), want);
    w_close(&w);
}

static void test_split_labelled(void **state)
{
    (void)state;
    split_case(true);
}

static void test_split_rule(void **state)
{
    (void)state;
    split_case(false);
}

/* A pod of ours bound by someone else with these annotations (JSON
 * ",\"gpuplane.io/mig\":..." after the node's). */
static void annotated_pod(struct world *w, const char *name, const char *node, const char *res,
                          const char *ann)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"annotations\":{\"gpuplane.io/node\":\"%s\"%s}},"
             "\"spec\":{\"schedulerName\":\"gpuplane\",\"priority\":0,\"containers\":[{\"name\":"
             "\"c\",\"image\":\"x\",\"resources\":{\"limits\":{%s}}}]}}",
             name, node, ann, res);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
    w_bind(w, name, node);
}

/* Whole and MIG-enabled GPUs on one node (mixed) whose MIG GPUs do not
 * share one layout (14 x 1g.10gb and 2 x 3g.40gb on 4 GPUs) under NVIDIA's
 * own device plugin (no gpuplane.io/agent): placed by count, as
 * kube-scheduler places by the node's nvidia.com/mig-* and the plugin
 * picks the devices; no instance nor GPU named for a MIG pod; the audit
 * counts every MIG pod by its number. Before, such a node was counted and
 * never placed on. */
static void test_whole_and_mig(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    json_t *l = mixed_labels();
    json_object_set_new(l, "nvidia.com/gpu.count", json_string("8"));
    mig_node(&w, "both", l,
             "\"nvidia.com/gpu\":\"4\",\"nvidia.com/mig-1g.10gb\":\"14\","
             "\"nvidia.com/mig-3g.40gb\":\"2\"");
    res_pod(&w, "ours", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "our3", "gpuplane", "\"nvidia.com/mig-3g.40gb\":\"2\"");
    res_pod(&w, "ourg", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    res_pod(&w, "kw", "default-scheduler", "\"nvidia.com/gpu\":\"3\"");
    res_pod(&w, "km", "default-scheduler", "\"nvidia.com/mig-1g.10gb\":\"13\"");
    w_bind(&w, "kw", "both");
    w_bind(&w, "km", "both");
    assert_int_equal(w_cycle(&w), 3);
    for (size_t i = 0; i < 2; i++) { /* the device plugin picks: nothing named */
        const char *pod = i ? "our3" : "ours";
        assert_string_equal(w_node_of(&w, pod, NULL), "both");
        assert_string_equal(w_ann(&w, pod, GP_KUBE_ANN_MIG), "");
        assert_string_equal(w_ann(&w, pod, GP_KUBE_ANN_GPUS), "");
    }
    const char *g;
    assert_string_equal(w_node_of(&w, "ourg", &g), "both");
    assert_true(strlen(g) == 1 && g[0] >= '0' && g[0] <= '3'); /* the rule: whole GPUs first */
    res_pod(&w, "ours2", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "ourg2", "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(
        condition_of(&w, "ours2"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    assert_string_equal(
        condition_of(&w, "ourg2"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    /* a restart books them again by count: still nothing free */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 0);
    /* one freed: the next pod gets it */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/ours?gracePeriodSeconds=0", NULL,
            200);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "ours2", NULL), "both");
    /* instances named on such a node (an old decision, another replica's)
     * are not trusted: counted by their number, not their slices - two
     * pods naming one instance are two devices of the 14 */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/ours2?gracePeriodSeconds=0", NULL,
            200);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/km?gracePeriodSeconds=0", NULL,
            200);
    annotated_pod(&w, "n1", "both", "\"nvidia.com/mig-1g.10gb\":\"1\"",
                  ",\"gpuplane.io/gpus\":\"4\",\"gpuplane.io/mig\":\"1g.10gb:4@0\"");
    annotated_pod(&w, "n2", "both", "\"nvidia.com/mig-1g.10gb\":\"1\"",
                  ",\"gpuplane.io/gpus\":\"4\",\"gpuplane.io/mig\":\"1g.10gb:4@0\"");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    /* a decision of ours annotated and not bound when a new leader
     * starts: resumed, at any free instance (none was named) */
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"hf\",\"annotations\":{\"gpuplane.io/node\":\"both\","
             "\"gpuplane.io/gpus\":\"\",\"gpuplane.io/phase\":\"allocating\"}},\"spec\":{"
             "\"schedulerName\":\"gpuplane\",\"priority\":0,\"containers\":[{\"name\":\"c\","
             "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}]}}");
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "hf", NULL), "both");
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 1);
    /* one nvidia.com/mig-1g.10gb more than it has */
    res_pod(&w, "km2", "default-scheduler", "\"nvidia.com/mig-1g.10gb\":\"12\"");
    w_bind(&w, "km2", "both");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    assert_string_equal(gp_kube_sched_audit_last(w.s),
                        "node both: 15 nvidia.com/mig-1g.10gb booked, it has 14");
    assert_int_equal(gp_kube_sched_stats(w.s).audit_mig, 1);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/km2?gracePeriodSeconds=0", NULL,
            200);
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    /* two whole GPUs more than it has */
    res_pod(&w, "kw2", "default-scheduler", "\"nvidia.com/gpu\":\"2\"");
    w_bind(&w, "kw2", "both");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_gpu, 1);
    w_close(&w);
}

/* A device unhealthy (NVIDIA's plugin reports it so: the kubelet counts it
 * in capacity, not in allocatable): no more pods placed than the node's
 * allocatable, as kube-scheduler's NodeResourcesFit places; placed on
 * again once it is healthy. Before, the layout (read from capacity)
 * offered the unhealthy device too. */
static void test_unhealthy(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    mig_node_alloc(&w, "uh", mixed_labels(), MIXED_RES,
                   "\"nvidia.com/gpu\":\"0\",\"nvidia.com/mig-1g.10gb\":\"1\","
                   "\"nvidia.com/mig-2g.20gb\":\"1\",\"nvidia.com/mig-3g.40gb\":\"1\"");
    res_pod(&w, "u1", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "u2", "gpuplane", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "u3", "gpuplane", "\"nvidia.com/mig-2g.20gb\":\"1\"");
    assert_int_equal(w_cycle(&w), 2);
    const char *left = w_node_of(&w, "u1", NULL)[0] ? "u2" : "u1";
    assert_string_equal(
        condition_of(&w, left),
        "0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    /* healthy again: the second 1g.10gb placed */
    kd_call(w.admin, "PATCH", "/api/v1/nodes/uh/status",
            "{\"status\":{\"allocatable\":{\"nvidia.com/mig-1g.10gb\":\"2\"}}}", 200);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, left, NULL), "uh");
    assert_int_equal(check_slices(&w, h100()), 3);
    w_close(&w);
}

/* The single strategy with a device unhealthy: capacity's nvidia.com/gpu
 * 7 (one GPU of 7 1g.10gb), allocatable's 6. The kubelet keeps the
 * unhealthy device in capacity only (devicemanager GetCapacity), so the
 * node is still one GPU in MIG mode, of which 6 devices are placed on, as
 * kube-scheduler's NodeResourcesFit places by allocatable. Before, the
 * layout was read from allocatable's 6, "not whole GPUs of 7": the node
 * placed nothing at all. */
static void test_unhealthy_single(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    mig_node_alloc(&w, "su", single_labels(), "\"nvidia.com/gpu\":\"7\"",
                   "\"nvidia.com/gpu\":\"6\"");
    char name[16];
    for (int i = 1; i <= 7; i++) {
        snprintf(name, sizeof name, "s%d", i);
        res_pod(&w, name, "gpuplane", "\"nvidia.com/gpu\":\"1\"");
    }
    assert_int_equal(w_cycle(&w), 6);
    unsigned unbound = 0;
    for (int i = 1; i <= 7; i++) {
        snprintf(name, sizeof name, "s%d", i);
        if (!w_node_of(&w, name, NULL)[0]) {
            unbound++;
            assert_string_equal(condition_of(&w, name),
                                "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
                                " preemption: 0/1 nodes are available: 1 No preemption victims "
                                "found for incoming pod..");
        }
    }
    assert_int_equal(unbound, 1);
    /* healthy again: the seventh placed */
    kd_call(w.admin, "PATCH", "/api/v1/nodes/su/status",
            "{\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"7\"}}}", 200);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_int_equal(check_slices(&w, h100()), 7);
    w_close(&w);
}

/* The readers alone: the sample labels, layouts gpuplane cannot know. */
static enum gp_err read_node(json_t *labels, const char *res, struct gp_arena *a,
                             struct gp_node_spec *s, struct gp_kube_node_info *info)
{
    char b[1024];
    snprintf(b, sizeof b, "{\"status\":{\"capacity\":{\"cpu\":\"8\",\"memory\":\"64Gi\"%s%s}}}",
             res[0] ? "," : "", res);
    json_t *n = json_loads(b, 0, NULL);
    assert_non_null(n);
    json_object_set_new(n, "metadata", json_pack("{s:s,s:o}", "name", "n", "labels", labels));
    struct gp_diag d = {""};
    memset(info, 0, sizeof *info);
    enum gp_err err = gp_kube_node_read(n, a, s, info, &d);
    json_decref(n);
    return err;
}

static void test_readers(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_node_spec s;
    struct gp_kube_node_info in;
    char buf[128];
    const struct gp_mig_model *m = h100();
    /* mixed, all-balanced */
    assert_int_equal(read_node(mixed_labels(), MIXED_RES, &a, &s, &in), GP_OK);
    assert_null(in.mig_why);
    assert_non_null(s.sharing);
    assert_int_equal(s.sharing->mode, GP_SHARE_MIG);
    assert_int_equal(s.sharing->mig.strategy, GP_MIG_MIXED);
    assert_ptr_equal(s.sharing->mig.model, m);
    assert_int_equal(s.gpu_count, 1);
    assert_int_equal(in.gpus, 1);
    assert_string_equal(gp_mig_layout_format(m, &s.sharing->mig.layout, buf, sizeof buf),
                        "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3");
    assert_int_equal(in.mig_cap[gp_mig_profile_find(m, "1g.10gb")], 2);
    /* the single strategy: 7 devices of 1g.10gb are one GPU */
    assert_int_equal(read_node(single_labels(), "\"nvidia.com/gpu\":\"14\"", &a, &s, &in), GP_OK);
    assert_null(in.mig_why);
    assert_int_equal(s.gpu_count, 2);
    assert_int_equal(s.sharing->mig.strategy, GP_MIG_SINGLE);
    assert_string_equal(s.gpu_model, "NVIDIA-H100-80GB-HBM3");
    assert_int_equal(s.sharing->mig.layout.n, 7);
    /* MIG disabled under single (the published sample): whole GPUs */
    json_t *off = single_labels();
    json_object_set_new(off, "nvidia.com/gpu.product", json_string("NVIDIA-H100-80GB-HBM3"));
    json_object_set_new(off, "nvidia.com/mig.config", json_string("all-disabled"));
    assert_int_equal(read_node(off, "\"nvidia.com/gpu\":\"1\"", &a, &s, &in), GP_OK);
    assert_null(s.sharing);
    assert_null(in.mig);
    assert_int_equal(s.gpu_count, 1);
    /* uneven: 3 x 1g.10gb on 2 GPUs, served by gpuplane's agent (which
     * labels each GPU's instances, and did not): not placed on */
    json_t *two = mixed_labels();
    json_object_set_new(two, "nvidia.com/gpu.count", json_string("2"));
    json_object_set_new(two, GP_KUBE_LABEL_AGENT, json_string(GP_KUBE_AGENT_PROTOCOL));
    assert_int_equal(read_node(two, "\"nvidia.com/mig-1g.10gb\":\"3\"", &a, &s, &in), GP_OK);
    assert_string_equal(in.mig_why,
                        "3 nvidia.com/mig-1g.10gb on 2 MIG-enabled GPUs: not the same layout on "
                        "every GPU");
    assert_int_equal(s.gpu_count, 0);
    assert_int_equal(in.gpus, 2);
    assert_false(in.mig_by_count);
    /* the same under NVIDIA's own plugin: placed by count, the instances
     * packed onto the GPUs as gpuplane's bookkeeping */
    two = mixed_labels();
    json_object_set_new(two, "nvidia.com/gpu.count", json_string("2"));
    assert_int_equal(read_node(two, "\"nvidia.com/mig-1g.10gb\":\"3\"", &a, &s, &in), GP_OK);
    assert_null(in.mig_why);
    assert_true(in.mig_by_count);
    assert_int_equal(s.gpu_count, 2);
    assert_non_null(s.sharing->mig.gpu_layouts);
    assert_int_equal(s.sharing->mig.gpu_layouts[0].n + s.sharing->mig.gpu_layouts[1].n, 3);
    /* devices that fit no GPUs: 3 x 7g.80gb on 2 GPUs */
    two = mixed_labels();
    json_object_set_new(two, "nvidia.com/gpu.count", json_string("2"));
    assert_int_equal(read_node(two, "\"nvidia.com/mig-7g.80gb\":\"3\"", &a, &s, &in), GP_OK);
    assert_string_equal(in.mig_why,
                        "3 nvidia.com/mig-7g.80gb on 2 MIG-enabled GPUs: not the same layout on "
                        "every GPU; nor do they pack into the GPUs in MIG mode");
    assert_int_equal(s.gpu_count, 0);
    /* a layout being applied */
    json_t *pend = mixed_labels();
    json_object_set_new(pend, "nvidia.com/mig.config.state", json_string("pending"));
    assert_int_equal(read_node(pend, MIXED_RES, &a, &s, &in), GP_OK);
    assert_string_equal(in.mig_why,
                        "nvidia.com/mig.config.state is \"pending\": the layout is changing");
    /* whole and MIG GPUs side by side: two parts, by the agent's label */
    json_t *sp = mixed_labels();
    json_object_set_new(sp, "nvidia.com/gpu.count", json_string("4"));
    json_object_set_new(sp, GP_KUBE_LABEL_MIG_GPUS, json_string("3.0"));
    assert_int_equal(read_node(sp, SPLIT_RES, &a, &s, &in), GP_OK);
    assert_null(in.mig_why);
    assert_true(in.split);
    assert_true(in.split_labelled);
    assert_null(s.sharing);
    assert_int_equal(s.gpu_count, 2);
    assert_int_equal(in.mig_spec.gpu_count, 2);
    assert_int_equal(in.mig_spec.sharing->mode, GP_SHARE_MIG);
    assert_int_equal(in.mig_spec.sharing->mig.layout.n, 7);
    assert_int_equal(in.whole_index[0], 1);
    assert_int_equal(in.whole_index[1], 2);
    assert_int_equal(in.mig_index[0], 0);
    assert_int_equal(in.mig_index[1], 3);
    /* 8 CPUs and 64Gi shared out by GPUs, 2 and 2 */
    assert_int_equal(s.cpu_milli, 4000);
    assert_int_equal(in.mig_spec.cpu_milli, 4000);
    assert_int_equal(s.mem_mib + in.mig_spec.mem_mib, 64 * 1024);
    /* without the label: whole GPUs first */
    sp = mixed_labels();
    json_object_set_new(sp, "nvidia.com/gpu.count", json_string("4"));
    assert_int_equal(read_node(sp, SPLIT_RES, &a, &s, &in), GP_OK);
    assert_true(in.split);
    assert_false(in.split_labelled);
    assert_int_equal(in.whole_index[1], 1);
    assert_int_equal(in.mig_index[0], 2);
    /* a label that disagrees with the counts, or does not read */
    const char *bad[] = {"0.1.2", "1.1", "1.4", "1,2", "", "1.", "01.2x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sp = mixed_labels();
        json_object_set_new(sp, "nvidia.com/gpu.count", json_string("4"));
        json_object_set_new(sp, GP_KUBE_LABEL_MIG_GPUS, json_string(bad[i]));
        assert_int_equal(read_node(sp, SPLIT_RES, &a, &s, &in), GP_OK);
        assert_non_null(in.mig_why);
        assert_false(in.split);
        assert_int_equal(s.gpu_count, 0);
    }
    assert_string_equal(in.mig_why, "gpuplane.io/mig-gpus is \"01.2x\": not 2 distinct GPU "
                                    "indexes below 4 (nvidia.com/gpu.count less nvidia.com/gpu)");
    /* more instances than a GPU holds */
    assert_int_equal(read_node(mixed_labels(), "\"nvidia.com/mig-3g.40gb\":\"3\"", &a, &s, &in),
                     GP_OK);
    assert_non_null(strstr(in.mig_why, "do not make a layout"));
    gp_arena_free(&a);
}

static enum gp_err read_pod(const char *res, struct gp_arena *a, struct gp_pod_spec *s,
                            struct gp_diag *d)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":{\"containers\":"
             "[{\"name\":\"c\",\"resources\":{\"limits\":{%s}}}]}}",
             res);
    json_t *p = json_loads(b, 0, NULL);
    assert_non_null(p);
    struct gp_kube_pod_info info;
    enum gp_err err = gp_kube_pod_read(p, a, s, &info, d);
    json_decref(p);
    return err;
}

static void test_pod_requests(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_pod_spec s;
    struct gp_diag d = {""};
    assert_int_equal(read_pod("\"nvidia.com/mig-3g.40gb\":\"2\"", &a, &s, &d), GP_OK);
    assert_string_equal(s.mig_profile, "3g.40gb");
    assert_int_equal(s.gpu_count, 2);
    assert_int_equal(s.gpu_milli, 3 * 1000 / 7);
    assert_int_equal(s.gpu_mem_mib, 40 * 1024);
    assert_int_equal(s.share_modes, 1u << GP_SHARE_MIG);
    assert_int_equal(read_pod("\"nvidia.com/mig-1g.10gb\":\"0\"", &a, &s, &d), GP_OK);
    assert_null(s.mig_profile);
    assert_int_equal(s.gpu_count, 0);
    assert_int_equal(
        read_pod("\"nvidia.com/mig-1g.10gb\":\"1\",\"nvidia.com/mig-2g.20gb\":\"1\"", &a, &s, &d),
        GP_EINVALID);
    assert_non_null(strstr(d.msg, "a second MIG profile in one pod"));
    assert_int_equal(
        read_pod("\"nvidia.com/mig-1g.10gb\":\"1\",\"nvidia.com/gpu\":\"1\"", &a, &s, &d),
        GP_EINVALID);
    assert_string_equal(d.msg,
                        "spec.containers: nvidia.com/gpu and nvidia.com/mig-1g.10gb in one pod");
    assert_int_equal(read_pod("\"nvidia.com/mig-1g.10gb\":\"x\"", &a, &s, &d), GP_EINVALID);
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_pod_requests),
        cmocka_unit_test_setup_teardown(test_mixed, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_single, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_single_eight, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_whole_and_mig, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_unhealthy, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_unhealthy_single, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_split_labelled, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_split_rule, kd_start, kd_stop),
    };
    if (gp_shared_mode(argc, argv)) {
        if (!gp_shared_have(GFD_DIR "/h100-mig-mixed-node-labels.json"))
            return GP_SHARED_SKIP_EXIT;
        use_samples = true;
        const struct CMUnitTest shared[] = {
            cmocka_unit_test(test_readers),
            cmocka_unit_test_setup_teardown(test_mixed, kd_start, kd_stop),
        };
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
