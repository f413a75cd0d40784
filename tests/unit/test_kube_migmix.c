/* test_kube_migmix.c - MIG nodes beyond one layout of whole GPUs
 * (kube/objects_mig.c, kube/sched_mig.c; docs/kube.md, "Whole and MIG GPUs
 * on one node"), against the API server double with the audit clean
 * after every cycle:
 *  - whole GPUs time-sliced beside MIG ones (four H100s, GPUs 1 and 2 in
 *    all-1g.10gb, the others 4 replicas each: GFD's gpu.replicas and
 *    gpu.sharing-strategy are nvidia.com/gpu's, the labels built by
 *    gpuplane's node agent from that inventory): replicas on the whole
 *    GPUs, instances on the MIG ones, a restart that reads both back, the
 *    audit naming a replica booked on a GPU in MIG mode;
 *  - MIG GPUs of different layouts (gpuplane.io/mig-layout.<index>): each
 *    pod on an instance its GPU has, another scheduler's pod counted on
 *    the GPU with its profile, a restart booking each pod at the instance
 *    it names;
 *  - the readers: MPS beside MIG devices and MIG devices time-sliced
 *    refused with their reason (NVIDIA's device plugin refuses the first),
 *    a mixed node with no MIG device time-sliced as any such node. */
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

static const struct gp_mig_model *h100(void)
{
    const struct gp_mig_model *m = gp_mig_model_find("NVIDIA-H100-80GB-HBM3");
    assert_non_null(m);
    return m;
}

/* Four H100s, GPUs 1 and 2 in MIG mode with seven 1g.10gb each. */
static void inventory(struct gp_node_inventory *inv)
{
    memset(inv, 0, sizeof *inv);
    snprintf(inv->driver_version, sizeof inv->driver_version, "550.54.15");
    inv->cuda_driver_version = 12040;
    inv->n_gpus = 4;
    for (unsigned i = 0; i < 4; i++) {
        struct gp_node_gpu *g = &inv->gpus[i];
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
            m->start = k;
            m->size = 1;
        }
    }
}

/* The labels gpuplane's node agent builds for inv under sh, as a JSON
 * object. */
static json_t *agent_labels(const struct gp_node_inventory *inv, const struct gp_node_sharing *sh)
{
    static struct gp_node_labels out;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_labels_build(inv, sh, NULL, &out, &d), GP_OK);
    json_t *l = json_object();
    for (size_t i = 0; i < out.n; i++)
        json_object_set_new(l, out.items[i].key, json_string(out.items[i].value));
    return l;
}

/* A node with these labels (stolen) and these extended resources (JSON
 * "\"nvidia.com/mig-1g.10gb\":\"2\",..." in capacity and allocatable). */
static void mig_node(struct world *w, const char *name, json_t *labels, const char *res)
{
    json_t *n = json_pack("{s:{s:s,s:o},s:{}}", "metadata", "name", name, "labels", labels, "spec");
    char *text = json_dumps(n, JSON_COMPACT);
    json_decref(n);
    kd_call(w->admin, "POST", "/api/v1/nodes", text, 201);
    free(text);
    char b[1024], path[128];
    snprintf(b, sizeof b,
             "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",%s},"
             "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\",%s},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             res, res);
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

/* A pod of scheduler `sched` asking `res`
 * ("\"nvidia.com/mig-1g.10gb\":\"1\""). */
static void sched_pod(struct world *w, const char *name, const char *sched, const char *res)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"%s\","
             "\"priority\":0,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
             "\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",%s},\"limits\":{%s}}}]}}",
             name, sched, res, res);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A pod of gpuplane's asking `res`. */
static void res_pod(struct world *w, const char *name, const char *res)
{
    sched_pod(w, name, "gpuplane", res);
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

/* The bound pods' bookings on their node: replicas[g] pods naming GPU g
 * whole (gpuplane.io/gpus, no gpuplane.io/mig), slices[g] the memory
 * slices of GPU g gpuplane.io/mig names (none twice); returns the MIG
 * instances. */
static unsigned bookings(struct world *w, unsigned replicas[4], uint32_t slices[4])
{
    memset(replicas, 0, 4 * sizeof *replicas);
    memset(slices, 0, 4 * sizeof *slices);
    unsigned instances = 0;
    json_t *list = w_get(w, "/api/v1/pods");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        if (!json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")))
            continue;
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        const char *g = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
        const char *m = json_string_value(json_object_get(ann, GP_KUBE_ANN_MIG));
        struct gp_pick pick;
        if (m) {
            assert_true(gp_kube_mig_parse(m, h100(), &pick));
            const struct gp_mig_profile *pr = &h100()->profiles[pick.mig_profile];
            for (unsigned k = 0; k < pick.ngpus; k++) {
                uint32_t span = ((1u << pr->memory_slices) - 1) << pick.mig_start[k];
                assert_true(pick.gpu[k] < 4);
                if (slices[pick.gpu[k]] & span)
                    fail_msg("a MIG slice of GPU %u given twice (%s)", pick.gpu[k], m);
                slices[pick.gpu[k]] |= span;
                instances++;
            }
        } else if (g) {
            assert_true(gp_kube_pick_parse(g, &pick));
            for (unsigned k = 0; k < pick.ngpus; k++) {
                assert_true(pick.gpu[k] < 4);
                replicas[pick.gpu[k]]++;
            }
        }
    }
    json_decref(list);
    return instances;
}

#define TS_RES "\"nvidia.com/gpu\":\"8\",\"nvidia.com/mig-1g.10gb\":\"14\""

/* Whole GPUs time-sliced (4 replicas) beside GPUs in MIG mode. */
static void test_split_timesliced(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    inventory(&inv);
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4, .mig_strategy = GP_NODE_MIG_MIXED};
    json_t *l = agent_labels(&inv, &sh);
    /* the whole GPUs' labels win (GFD's order): their product and replicas */
    assert_string_equal(json_string_value(json_object_get(l, "nvidia.com/gpu.product")),
                        "NVIDIA-H100-80GB-HBM3-SHARED");
    assert_string_equal(json_string_value(json_object_get(l, "nvidia.com/gpu.replicas")), "4");
    assert_string_equal(json_string_value(json_object_get(l, GP_KUBE_LABEL_MIG_GPUS)), "1.2");
    struct world w;
    w_open(&w, true);
    mig_node(&w, "ts", l, TS_RES);
    char name[16];
    for (int i = 1; i <= 9; i++) {
        snprintf(name, sizeof name, "r%d", i);
        res_pod(&w, name, "\"nvidia.com/gpu\":\"1\"");
    }
    for (int i = 1; i <= 14; i++) {
        snprintf(name, sizeof name, "m%d", i);
        res_pod(&w, name, "\"nvidia.com/mig-1g.10gb\":\"1\"");
    }
    assert_int_equal(w_cycle(&w), 22);
    unsigned rep[4];
    uint32_t sl[4];
    assert_int_equal(bookings(&w, rep, sl), 14);
    /* 4 replicas on each whole GPU, 7 instances on each MIG one */
    assert_int_equal(rep[0], 4);
    assert_int_equal(rep[3], 4);
    assert_int_equal(rep[1] + rep[2], 0);
    assert_int_equal(sl[1], 0x7f);
    assert_int_equal(sl[2], 0x7f);
    assert_int_equal(sl[0] | sl[3], 0);
    unsigned unbound = 0;
    for (int i = 1; i <= 9; i++) {
        snprintf(name, sizeof name, "r%d", i);
        if (!w_node_of(&w, name, NULL)[0] && ++unbound)
            assert_string_equal(condition_of(&w, name),
                                "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
                                " preemption: 0/1 nodes are available: 1 No preemption victims "
                                "found for incoming pod..");
    }
    assert_int_equal(unbound, 1);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* a restart reads both kinds back: a deleted replica's GPU goes to the
     * pod left, and only that one */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    const char *g1;
    w_node_of(&w, "r1", &g1);
    char r1[8];
    snprintf(r1, sizeof r1, "%s", g1);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/r1?gracePeriodSeconds=0", NULL,
            200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_int_equal(bookings(&w, rep, sl), 14);
    assert_int_equal(rep[0], 4);
    assert_int_equal(rep[3], 4);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* a replica of ours named on a GPU in MIG mode: the audit says so */
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"bad\",\"annotations\":{\"gpuplane.io/node\":\"ts\","
             "\"gpuplane.io/gpus\":\"1\"}},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priority\":0,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
             "\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}");
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
    w_bind(&w, "bad", "ts");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    assert_string_equal(gp_kube_sched_audit_last(w.s),
                        "GPU 1 of node ts is in MIG mode and booked whole by default/bad");
    assert_int_equal(gp_kube_sched_stats(w.s).audit_mig, 1);
    w_close(&w);
}

/* Two H100s of different layouts, as mig-parted applies a config per
 * device: GPU 0 in all-1g.10gb, GPU 1 as 4g.40gb at 0 and 3g.40gb at 4. */
static void two_layouts(struct gp_node_inventory *inv)
{
    inventory(inv);
    inv->n_gpus = 2;
    inv->gpus[0] = inv->gpus[1];
    inv->gpus[0].index = 0;
    struct gp_node_gpu *g = &inv->gpus[1];
    g->index = 1;
    g->n_migs = 2;
    static const struct {
        const char *profile;
        unsigned start, size;
        uint64_t mem;
    } inst[] = {{"4g.40gb", 0, 4, 40192}, {"3g.40gb", 4, 4, 40192}};
    for (unsigned k = 0; k < 2; k++) {
        snprintf(g->migs[k].profile, sizeof g->migs[k].profile, "%s", inst[k].profile);
        g->migs[k].start = inst[k].start;
        g->migs[k].size = inst[k].size;
        g->migs[k].memory_mib = inst[k].mem;
    }
}

#define DL_RES                                                                                     \
    "\"nvidia.com/gpu\":\"0\",\"nvidia.com/mig-1g.10gb\":\"7\",\"nvidia.com/mig-3g.40gb\":\"1\","  \
    "\"nvidia.com/mig-4g.40gb\":\"1\""

/* MIG GPUs of different layouts on one node: each pod on an instance its
 * GPU has, by the layouts the agent labels. */
static void test_two_layouts(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    two_layouts(&inv);
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    json_t *l = agent_labels(&inv, &sh);
    assert_string_equal(json_string_value(json_object_get(l, GP_KUBE_LABEL_MIG_LAYOUT "0")),
                        "1g.10gb-0123456");
    assert_string_equal(json_string_value(json_object_get(l, GP_KUBE_LABEL_MIG_LAYOUT "1")),
                        "4g.40gb-0_3g.40gb-4");
    assert_true(gp_node_labels_owned(GP_KUBE_LABEL_MIG_LAYOUT "1"));
    struct world w;
    w_open(&w, true);
    mig_node(&w, "dl", l, DL_RES);
    char name[16];
    for (int i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "s%d", i);
        res_pod(&w, name, "\"nvidia.com/mig-1g.10gb\":\"1\"");
    }
    res_pod(&w, "three", "\"nvidia.com/mig-3g.40gb\":\"1\"");
    res_pod(&w, "four", "\"nvidia.com/mig-4g.40gb\":\"1\"");
    assert_int_equal(w_cycle(&w), 9);
    assert_string_equal(w_ann(&w, "three", GP_KUBE_ANN_MIG), "3g.40gb:1@4");
    assert_string_equal(w_ann(&w, "four", GP_KUBE_ANN_MIG), "4g.40gb:1@0");
    assert_string_equal(w_ann(&w, "four", GP_KUBE_ANN_GPUS), "1");
    unsigned rep[4];
    uint32_t sl[4];
    assert_int_equal(bookings(&w, rep, sl), 9);
    assert_int_equal(sl[0], 0x7f); /* the seven 1g.10gb of GPU 0 */
    assert_int_equal(sl[1], 0xff);
    unsigned unbound = 0;
    for (int i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "s%d", i);
        if (w_node_of(&w, name, NULL)[0])
            assert_int_equal(strncmp(w_ann(&w, name, GP_KUBE_ANN_MIG), "1g.10gb:0@", 10), 0);
        else if (++unbound) /* one node for kube-scheduler, whatever its parts */
            assert_string_equal(condition_of(&w, name),
                                "0/1 nodes are available: 1 Insufficient "
                                "nvidia.com/mig-1g.10gb."
                                " preemption: 0/1 nodes are available: 1 No preemption victims "
                                "found for incoming pod..");
    }
    assert_int_equal(unbound, 1);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* a restart reads them back; a deleted pod's instance goes to the next */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/three?gracePeriodSeconds=0", NULL,
            200);
    res_pod(&w, "three2", "\"nvidia.com/mig-3g.40gb\":\"1\"");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_ann(&w, "three2", GP_KUBE_ANN_MIG), "3g.40gb:1@4");
    assert_int_equal(bookings(&w, rep, sl), 9);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* an instance GPU 1 does not have: the audit says so */
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"bad\",\"annotations\":{\"gpuplane.io/node\":\"dl\","
             "\"gpuplane.io/gpus\":\"1\",\"gpuplane.io/mig\":\"1g.10gb:1@4\"}},\"spec\":{"
             "\"schedulerName\":\"gpuplane\",\"priority\":0,\"containers\":[{\"name\":\"c\","
             "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}]}}");
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
    w_bind(&w, "bad", "dl");
    w_sync(&w);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 1);
    assert_string_equal(
        gp_kube_sched_audit_last(w.s),
        "pod default/bad books MIG instance 1g.10gb at slice 4 of GPU 1 of node dl, "
        "which has none there");
    w_close(&w);
}

/* Two H100s: GPU 0 in all-1g.10gb, GPU 1 as two 3g.40gb (at 0 and 4). */
static void twin_layouts(struct gp_node_inventory *inv)
{
    two_layouts(inv);
    struct gp_node_gpu *g = &inv->gpus[1];
    for (unsigned k = 0; k < 2; k++) {
        snprintf(g->migs[k].profile, sizeof g->migs[k].profile, "3g.40gb");
        g->migs[k].start = 4 * k;
    }
}

#define TWIN_RES                                                                                   \
    "\"nvidia.com/gpu\":\"0\",\"nvidia.com/mig-1g.10gb\":\"7\",\"nvidia.com/mig-3g.40gb\":\"2\""

/* An agent-labelled node with a MIG device unhealthy (allocatable's
 * 1g.10gb 6 of capacity's 7): no more of them placed than the kubelet
 * admits (NodeResourcesFit and the device manager count allocatable).
 * Before, the labelled layouts offered all 7. */
static void test_unhealthy_labelled(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    two_layouts(&inv);
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    struct world w;
    w_open(&w, true);
    mig_node(&w, "dl", agent_labels(&inv, &sh), DL_RES);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/dl/status",
            "{\"status\":{\"allocatable\":{\"nvidia.com/mig-1g.10gb\":\"6\"}}}", 200);
    char name[16];
    for (int i = 1; i <= 7; i++) {
        snprintf(name, sizeof name, "s%d", i);
        res_pod(&w, name, "\"nvidia.com/mig-1g.10gb\":\"1\"");
    }
    assert_int_equal(w_cycle(&w), 6);
    w_close(&w);
}

/* GPUs of different layouts: another scheduler's pod (no annotations:
 * the device plugin chose its device) is counted on the GPU that has its
 * profile, and a restart books each pod of ours at the instance it names,
 * not at the engine's first choice (f437d94: before, a pod named on GPU
 * 1 went back to the engine's choice, and the next one was given the
 * instance it holds). */
static void test_layouts_restart(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    twin_layouts(&inv);
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    json_t *l = agent_labels(&inv, &sh);
    assert_string_equal(json_string_value(json_object_get(l, GP_KUBE_LABEL_MIG_LAYOUT "1")),
                        "3g.40gb-04");
    struct world w;
    w_open(&w, true);
    mig_node(&w, "tw", l, TWIN_RES);
    sched_pod(&w, "k1", "default-scheduler", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    w_bind(&w, "k1", "tw");
    res_pod(&w, "t1", "\"nvidia.com/mig-3g.40gb\":\"1\"");
    res_pod(&w, "t2", "\"nvidia.com/mig-3g.40gb\":\"1\"");
    assert_int_equal(w_cycle(&w), 2);
    char left[8], kept[64];
    bool first = strcmp(w_ann(&w, "t1", GP_KUBE_ANN_MIG), "3g.40gb:1@0") == 0;
    snprintf(left, sizeof left, "%s", first ? "t1" : "t2");
    snprintf(kept, sizeof kept, "%s", w_ann(&w, first ? "t2" : "t1", GP_KUBE_ANN_MIG));
    assert_string_equal(kept, "3g.40gb:1@4");
    gp_kube_sched_set_leader(w.s, false);
    char path[96];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", left);
    kd_call(w.admin, "DELETE", path, NULL, 200);
    w_sync(&w);
    gp_kube_sched_set_leader(w.s, true);
    res_pod(&w, "t3", "\"nvidia.com/mig-3g.40gb\":\"1\"");
    char name[16];
    for (int i = 1; i <= 7; i++) {
        snprintf(name, sizeof name, "s%d", i);
        res_pod(&w, name, "\"nvidia.com/mig-1g.10gb\":\"1\"");
    }
    w.now += 1;
    assert_int_equal(w_cycle(&w), 7); /* t3 and six: k1 holds a 1g.10gb */
    assert_string_equal(w_ann(&w, "t3", GP_KUBE_ANN_MIG), "3g.40gb:1@0");
    unsigned rep[4];
    uint32_t sl[4];
    assert_int_equal(bookings(&w, rep, sl), 8);
    assert_int_equal(sl[1], 0xff);
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

/* Two H100s: GPU 0 in all-1g.10gb, GPU 1 as 4g.40gb at 0 and three
 * 1g.10gb at 4, 5 and 6. */
static void ten_layouts(struct gp_node_inventory *inv)
{
    two_layouts(inv);
    struct gp_node_gpu *g = &inv->gpus[1];
    g->n_migs = 4;
    for (unsigned k = 1; k < 4; k++) {
        g->migs[k] = inv->gpus[0].migs[0];
        g->migs[k].start = 3 + k;
    }
}

#define TEN_RES                                                                                    \
    "\"nvidia.com/gpu\":\"0\",\"nvidia.com/mig-1g.10gb\":\"10\",\"nvidia.com/mig-4g.40gb\":\"1\""

/* A pod of several instances of one profile across GPUs of different
 * layouts, as NVIDIA's device plugin serves nvidia.com/mig-1g.10gb: 9 from
 * every GPU's devices of that profile (internal/rm/device_map.go) and the
 * kubelet asks only that the node advertise 9: placed across the two
 * GPUs, each instance named where its GPU has it (gpuplane.io/mig, as the
 * agent's Allocate serves it). Before, one layout's part had to hold all
 * 9 ("Insufficient nvidia.com/mig-1g.10gb"). */
static void test_across_layouts(void **state)
{
    (void)state;
    struct gp_node_inventory inv;
    ten_layouts(&inv);
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    json_t *l = agent_labels(&inv, &sh);
    assert_string_equal(json_string_value(json_object_get(l, GP_KUBE_LABEL_MIG_LAYOUT "1")),
                        "4g.40gb-0_1g.10gb-456");
    struct world w;
    w_open(&w, true);
    mig_node(&w, "tl", l, TEN_RES);
    res_pod(&w, "nine", "\"nvidia.com/mig-1g.10gb\":\"9\"");
    res_pod(&w, "four", "\"nvidia.com/mig-4g.40gb\":\"1\"");
    assert_int_equal(w_cycle(&w), 2);
    const char *m = w_ann(&w, "nine", GP_KUBE_ANN_MIG);
    struct gp_pick pick;
    assert_true(gp_kube_mig_parse(m, h100(), &pick));
    assert_int_equal(pick.ngpus, 9);
    unsigned on[2] = {0, 0};
    for (unsigned k = 0; k < pick.ngpus; k++) {
        assert_true(pick.gpu[k] < 2);
        assert_true(pick.gpu[k] == 0 || pick.mig_start[k] >= 4); /* GPU 1's are at 4, 5, 6 */
        on[pick.gpu[k]]++;
    }
    assert_true(on[0] >= 6 && on[1] >= 2);
    const char *gpus = w_ann(&w, "nine", GP_KUBE_ANN_GPUS); /* each GPU once */
    assert_true(strcmp(gpus, "0,1") == 0 || strcmp(gpus, "1,0") == 0);
    assert_string_equal(w_ann(&w, "four", GP_KUBE_ANN_MIG), "4g.40gb:1@0");
    unsigned rep[4];
    uint32_t sl[4];
    assert_int_equal(bookings(&w, rep, sl), 10);
    /* the tenth 1g.10gb to one pod, an eleventh to none */
    res_pod(&w, "one", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    res_pod(&w, "more", "\"nvidia.com/mig-1g.10gb\":\"1\"");
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    assert_int_equal(bookings(&w, rep, sl), 11);
    assert_int_equal(sl[0], 0x7f);
    assert_int_equal(sl[1], 0x7f);
    const char *left = w_node_of(&w, "one", NULL)[0] ? "more" : "one";
    assert_string_equal(condition_of(&w, left),
                        "0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.10gb."
                        " preemption: 0/1 nodes are available: 1 No preemption victims "
                        "found for incoming pod..");
    /* a restart books the nine back at their instances */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 0);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/four?gracePeriodSeconds=0", NULL,
            200);
    res_pod(&w, "four2", "\"nvidia.com/mig-4g.40gb\":\"1\"");
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_ann(&w, "four2", GP_KUBE_ANN_MIG), "4g.40gb:1@0");
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

static enum gp_err read_node(json_t *labels, const char *res, struct gp_arena *a,
                             struct gp_node_spec *s, struct gp_kube_node_info *info)
{
    char b[1024];
    snprintf(b, sizeof b, "{\"status\":{\"capacity\":{\"cpu\":\"8\",\"memory\":\"64Gi\",%s}}}",
             res);
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
    struct gp_node_inventory inv;
    inventory(&inv);
    const struct gp_node_sharing sh = {
        .mode = GP_NODE_SHARE_TIME_SLICING, .replicas = 4, .mig_strategy = GP_NODE_MIG_MIXED};
    /* time-sliced whole GPUs beside MIG ones: two parts, the whole one
     * time-sliced */
    assert_int_equal(read_node(agent_labels(&inv, &sh), TS_RES, &a, &s, &in), GP_OK);
    assert_null(in.mig_why);
    assert_true(in.split);
    assert_int_equal(in.whole_gpus, 2);
    assert_int_equal(in.mig_gpus, 2);
    assert_int_equal(in.gpus, 4);
    assert_int_equal(in.replicas, 4);
    assert_int_equal(s.gpu_count, 2);
    assert_non_null(s.sharing);
    assert_int_equal(s.sharing->mode, GP_SHARE_TIMESLICE);
    assert_int_equal(s.sharing->replicas, 4);
    assert_string_equal(s.gpu_model, "NVIDIA-H100-80GB-HBM3");
    assert_int_equal(in.mig_spec.sharing->mode, GP_SHARE_MIG);
    assert_int_equal(in.mig_spec.gpu_count, 2);
    assert_string_equal(in.mig_spec.gpu_model, "NVIDIA-H100-80GB-HBM3");
    /* MPS beside MIG devices: NVIDIA's plugin refuses it, so does the reader */
    json_t *mps = agent_labels(&inv, &sh);
    json_object_set_new(mps, "nvidia.com/gpu.sharing-strategy", json_string("mps"));
    assert_int_equal(read_node(mps, TS_RES, &a, &s, &in), GP_OK);
    assert_string_equal(in.mig_why, "nvidia.com/gpu.sharing-strategy is mps beside MIG devices: "
                                    "NVIDIA's device plugin refuses MPS with MIG");
    assert_int_equal(s.gpu_count, 0);
    assert_int_equal(in.whole_gpus, 2);
    /* MIG devices time-sliced: not read */
    json_t *tm = agent_labels(&inv, &sh);
    json_object_set_new(tm, "nvidia.com/mig-1g.10gb.replicas", json_string("2"));
    assert_int_equal(
        read_node(tm, "\"nvidia.com/gpu\":\"8\",\"nvidia.com/mig-1g.10gb\":\"28\"", &a, &s, &in),
        GP_OK);
    assert_string_equal(
        in.mig_why, "nvidia.com/mig-1g.10gb.replicas is 2: MIG devices time-sliced are not read");
    assert_int_equal(s.gpu_count, 0);
    /* the mixed strategy with no GPU in MIG mode, time-sliced: 2 GPUs of 4
     * replicas, not 8 GPUs */
    struct gp_node_inventory plain = inv;
    plain.n_gpus = 2;
    plain.gpus[1] = plain.gpus[0];
    plain.gpus[1].index = 1;
    assert_int_equal(read_node(agent_labels(&plain, &sh), "\"nvidia.com/gpu\":\"8\"", &a, &s, &in),
                     GP_OK);
    assert_null(in.mig);
    assert_int_equal(s.gpu_count, 2);
    assert_non_null(s.sharing);
    assert_int_equal(s.sharing->mode, GP_SHARE_TIMESLICE);
    assert_int_equal(in.replicas, 4);
    /* two layouts: one MIG part, each GPU its own layout (the engine's
     * gpu_layouts), so that one pod's instances may be on both */
    two_layouts(&inv);
    const struct gp_node_sharing mx = {
        .mode = GP_NODE_SHARE_NONE, .replicas = 1, .mig_strategy = GP_NODE_MIG_MIXED};
    assert_int_equal(read_node(agent_labels(&inv, &mx), DL_RES, &a, &s, &in), GP_OK);
    assert_null(in.mig_why);
    assert_false(in.split);
    assert_false(in.mig_by_count);
    assert_true(in.layouts_labelled);
    assert_int_equal(in.nparts, 1);
    assert_int_equal(s.gpu_count, 2);
    assert_int_equal(s.cpu_milli, 8000);
    assert_non_null(s.sharing->mig.gpu_layouts);
    char buf[128];
    assert_string_equal(
        gp_mig_layout_format(h100(), &s.sharing->mig.gpu_layouts[0], buf, sizeof buf),
        "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6");
    assert_string_equal(
        gp_mig_layout_format(h100(), &s.sharing->mig.gpu_layouts[1], buf, sizeof buf),
        "4g.40gb@0 3g.40gb@4");
    /* the labels and the devices disagree (a layout being applied), a
     * label that does not read, one GPU unlabelled: not placed on */
    static const struct {
        const char *key, *value, *why;
    } bad[] = {
        {GP_KUBE_LABEL_MIG_LAYOUT "1", "4g.40gb-0_2g.20gb-4",
         "gpuplane.io/mig-layout.<index> names 1 nvidia.com/mig-2g.20gb, the node advertises 0"},
        {GP_KUBE_LABEL_MIG_LAYOUT "1", "4g.40gb-0_3g.40gb-3",
         "gpuplane.io/mig-layout.1 is \"4g.40gb-0_3g.40gb-3\": not a MIG layout of "},
        {GP_KUBE_LABEL_MIG_LAYOUT "0", NULL,
         "gpuplane.io/mig-layout.<index> is on 1 of the 2 GPUs in MIG mode"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *lb = agent_labels(&inv, &mx);
        if (bad[i].value)
            json_object_set_new(lb, bad[i].key, json_string(bad[i].value));
        else
            json_object_del(lb, bad[i].key);
        assert_int_equal(read_node(lb, DL_RES, &a, &s, &in), GP_OK);
        assert_non_null(in.mig_why);
        if (strncmp(in.mig_why, bad[i].why, strlen(bad[i].why)) != 0)
            fail_msg("%s: %s", bad[i].why, in.mig_why);
        assert_int_equal(s.gpu_count, 0);
    }
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers),
        cmocka_unit_test_setup_teardown(test_split_timesliced, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_two_layouts, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_unhealthy_labelled, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_layouts_restart, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_across_layouts, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
