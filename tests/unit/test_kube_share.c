/* test_kube_share.c - time-sliced and MPS nodes from the API
 * (kube/objects.h, gp_kube_node_share_read; docs/kube.md, "Time-slicing
 * and MPS from the API") and a restart on them, against the API server
 * double with the audit clean after every cycle:
 *  - the reader alone: a node as the GPU Operator's time-slicing page
 *    shows it (gpu.count=4, gpu.replicas=4, nvidia.com/gpu: 16,
 *    Tesla-T4-SHARED), MPS's client limits, 8 GPUs x 4 replicas, nodes
 *    that do not share their GPUs so left as they were;
 *  - a restart (issue 14 item 4) on a node of 2 GPUs x 4 replicas: pods
 *    found bound on GPU 1 by their gpuplane.io/gpus are booked on GPU 1
 *    (the next pod packs there too), and after the restart a
 *    half-finished decision on GPU 0 is resumed there, the new pods fill
 *    the free replicas, none is given twice, and the node full refuses
 *    the next; booking them at the engine's own choice (GPU 0) fails it;
 *  - the audit counts replicas: a fifth pod planted on a GPU of four
 *    replicas is one violation;
 *  - renamed replicas (renameByDefault: true): a node advertising
 *    nvidia.com/gpu.shared and no nvidia.com/gpu read as its GPUs and
 *    replicas, pods asking nvidia.com/gpu.shared as io/manifest_pod.c
 *    reads them, eight such pods filling a node of 2 GPUs x 4 replicas,
 *    one asking nvidia.com/gpu refused there ("Insufficient
 *    nvidia.com/gpu": the node has none);
 *  - failRequestsGreaterThanOne from gpuplane.io/fail-requests-greater-
 *    than-one (MPS always; time-slicing the plugin's default false): a
 *    pod asking two replicas refused where the plugin fails it, with that
 *    reason, and bound on a node whose plugin keeps the default;
 *  - that rule per container, as the plugin checks each container's
 *    Allocate: two containers of one replica each bound, one container
 *    of two (app or init) refused, time-sliced, renamed and MPS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"
#include "engine/sharing.h"
#include "node/devices.h"
#include "node/labels.h"

/* A node of `gpus` GPUs, each advertised `replicas` times as
 * nvidia.com/gpu (renamed: as nvidia.com/gpu.shared, renameByDefault:
 * true, with nvidia.com/gpu 0), with GFD's labels for `strategy`
 * ("time-slicing", "mps"); extra: more labels (",\"k\":\"v\"") or "". */
static void w_shared_node_as(struct world *w, const char *name, unsigned gpus, unsigned replicas,
                             const char *strategy, bool renamed, const char *extra)
{
    char b[1024], res[96];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":"
             "\"NVIDIA-A100-SXM4-80GB%s\",\"nvidia.com/gpu.memory\":\"81920\","
             "\"nvidia.com/gpu.count\":\"%u\",\"nvidia.com/gpu.replicas\":\"%u\","
             "\"nvidia.com/gpu.sharing-strategy\":\"%s\"%s}},\"spec\":{}}",
             name, renamed ? "" : "-SHARED", gpus, replicas, strategy, extra);
    kd_call(w->admin, "POST", "/api/v1/nodes", b, 201);
    if (renamed)
        snprintf(res, sizeof res, "\"nvidia.com/gpu\":\"0\",\"nvidia.com/gpu.shared\":\"%u\"",
                 gpus * replicas);
    else
        snprintf(res, sizeof res, "\"nvidia.com/gpu\":\"%u\"", gpus * replicas);
    snprintf(b, sizeof b,
             "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",%s,\"pods\":"
             "\"110\"},\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",%s,\"pods\":\"110\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             res, res);
    char path[128];
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

static void w_shared_node(struct world *w, const char *name, unsigned gpus, unsigned replicas,
                          const char *strategy)
{
    w_shared_node_as(w, name, gpus, replicas, strategy, false, "");
}

/* A pod of gpuplane's asking n of resource res. */
static void w_pod_res(struct world *w, const char *name, const char *res, unsigned n)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
             "\"cpu\":\"1\",\"%s\":\"%u\"},\"limits\":{\"%s\":\"%u\"}}}]}}",
             name, res, n, res, n);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A pod of gpuplane's whose init containers (`init`, JSON array members,
 * may be "") and app containers (`ctrs`) each ask `res`: "c:N" entries
 * joined by ',' - app containers c1, c2, ... asking N each; init
 * containers i1, ... the same way ("s:N" a sidecar, restartPolicy
 * Always). */
static void w_pod_ctrs(struct world *w, const char *name, const char *res, const char *init,
                       const char *ctrs)
{
    char b[2048], inits[768] = "", apps[768] = "";
    const char *lists[2] = {init, ctrs};
    char *outs[2] = {inits, apps};
    for (int l = 0; l < 2; l++) {
        size_t len = 0;
        unsigned k = 0;
        for (const char *c = lists[l]; c && *c;) {
            char kind = c[0];
            unsigned n = (unsigned)strtoul(c + 2, NULL, 10);
            k++;
            len += (size_t)snprintf(
                outs[l] + len, 768 - len,
                "%s{\"name\":\"%c%u\",\"image\":\"x\"%s,\"resources\":{\"limits\":{\"%s\":"
                "\"%u\"}}}",
                k > 1 ? "," : "",
                l             ? 'c'
                : kind == 's' ? 's'
                              : 'i',
                k, kind == 's' ? ",\"restartPolicy\":\"Always\"" : "", res, n);
            c = strchr(c, ',');
            c = c ? c + 1 : NULL;
        }
    }
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"initContainers\":[%s],\"containers\":[%s]}}",
             name, inits, apps);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* A pod of one replica that gpuplane placed before (its annotations name
 * node and GPUs), bound there or, with bound false, not yet (the
 * scheduler died between the patch and the Binding). */
static void w_placed(struct world *w, const char *pod, const char *node, const char *gpus,
                     bool bound)
{
    char meta[256];
    snprintf(meta, sizeof meta,
             ",\"annotations\":{\"gpuplane.io/node\":\"%s\",\"gpuplane.io/gpus\":\"%s\","
             "\"gpuplane.io/phase\":\"%s\"}",
             node, gpus, bound ? "allocated" : "allocating");
    w_pod_full(w, pod, 1, 0, "gpuplane", meta);
    if (bound)
        w_bind(w, pod, node);
}

static void assert_on(struct world *w, const char *pod, const char *node, const char *gpus)
{
    const char *g;
    assert_string_equal(w_node_of(w, pod, &g), node);
    assert_string_equal(g, gpus);
}

/* A node with labels and, in allocatable, `gpus` (JSON members). */
static json_t *node_json_res(const char *labels, const char *gpus)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"n\",\"labels\":{%s}},\"spec\":{},\"status\":"
             "{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"64Gi\",%s},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             labels, gpus);
    json_t *j = json_loads(b, 0, NULL);
    assert_non_null(j);
    return j;
}

static json_t *node_json(const char *labels, unsigned allocatable)
{
    char res[64];
    snprintf(res, sizeof res, "\"nvidia.com/gpu\":\"%u\"", allocatable);
    return node_json_res(labels, res);
}

static enum gp_err read_node(const char *labels, unsigned allocatable, struct gp_arena *a,
                             struct gp_node_spec *s, struct gp_kube_node_info *info)
{
    json_t *j = node_json(labels, allocatable);
    struct gp_diag d = {""};
    enum gp_err err = gp_kube_node_read(j, a, s, info, &d);
    json_decref(j);
    return err;
}

static void test_readers(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_node_spec s;
    struct gp_kube_node_info info;
    /* the GPU Operator's page: 4 T4s, 4 replicas, nvidia.com/gpu: 16 */
    assert_int_equal(read_node("\"nvidia.com/gpu.count\":\"4\",\"nvidia.com/gpu.product\":"
                               "\"Tesla-T4-SHARED\",\"nvidia.com/gpu.replicas\":\"4\"",
                               16, &a, &s, &info),
                     GP_OK);
    assert_int_equal(s.gpu_count, 4);
    assert_string_equal(s.gpu_model, "Tesla-T4");
    assert_non_null(s.sharing);
    assert_int_equal(s.sharing->mode, GP_SHARE_TIMESLICE);
    assert_int_equal(s.sharing->replicas, 4);
    assert_false(s.sharing->fail_requests_greater_than_one);
    assert_int_equal(info.gpus, 4);
    assert_int_equal(info.replicas, 4);
    /* MPS: the plugin's default client limits */
    assert_int_equal(
        read_node("\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB-SHARED\","
                  "\"nvidia.com/gpu.memory\":\"81920\",\"nvidia.com/gpu.replicas\":\"4\","
                  "\"nvidia.com/gpu.sharing-strategy\":\"mps\"",
                  8, &a, &s, &info),
        GP_OK);
    assert_int_equal(s.gpu_count, 2);
    assert_int_equal(s.sharing->mode, GP_SHARE_MPS);
    assert_int_equal(s.sharing->mps.active_thread_pct, 25);
    assert_int_equal(s.sharing->mps.pinned_mem_mib, 20480);
    assert_true(s.sharing->fail_requests_greater_than_one);
    /* 8 GPUs x 4: more nvidia.com/gpu than a node has GPUs */
    assert_int_equal(read_node("\"nvidia.com/gpu.replicas\":\"4\","
                               "\"nvidia.com/gpu.sharing-strategy\":\"time-slicing\"",
                               32, &a, &s, &info),
                     GP_OK);
    assert_int_equal(s.gpu_count, 8);
    /* not shared so: whole GPUs as before */
    const char *plain[] = {
        "\"nvidia.com/gpu.replicas\":\"1\",\"nvidia.com/gpu.sharing-strategy\":\"none\"",
        "\"nvidia.com/gpu.replicas\":\"4\",\"nvidia.com/gpu.sharing-strategy\":\"none\"",
        "\"nvidia.com/gpu.product\":\"A100-SHARED\"",
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        assert_int_equal(read_node(plain[i], 4, &a, &s, &info), GP_OK);
        assert_int_equal(s.gpu_count, 4);
        assert_null(s.sharing);
        assert_int_equal(info.replicas, 0);
    }
    assert_int_equal(read_node("\"nvidia.com/gpu.replicas\":\"1\"", 32, &a, &s, &info),
                     GP_EINVALID); /* 32 GPUs */
    gp_arena_free(&a);
}

static enum gp_err read_node_res(const char *labels, const char *gpus, struct gp_arena *a,
                                 struct gp_node_spec *s, struct gp_kube_node_info *info,
                                 struct gp_diag *d)
{
    json_t *j = node_json_res(labels, gpus);
    enum gp_err err = gp_kube_node_read(j, a, s, info, d);
    json_decref(j);
    return err;
}

#define T4_RENAMED                                                                                 \
    "\"nvidia.com/gpu.count\":\"4\",\"nvidia.com/gpu.product\":\"Tesla-T4\","                      \
    "\"nvidia.com/gpu.replicas\":\"4\",\"nvidia.com/gpu.sharing-strategy\":\"time-slicing\""

/* renameByDefault: true - the replicas as nvidia.com/gpu.shared, no
 * nvidia.com/gpu (NVIDIA's device plugin README); the pods asking it. */
static void test_renamed_readers(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_node_spec s;
    struct gp_kube_node_info info;
    struct gp_diag d = {""};
    static const char *const shapes[] = {
        "\"nvidia.com/gpu\":\"0\",\"nvidia.com/gpu.shared\":\"16\"", /* a plugin renamed since */
        "\"nvidia.com/gpu.shared\":\"16\"",
    };
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(read_node_res(T4_RENAMED, shapes[i], &a, &s, &info, &d), GP_OK);
        assert_int_equal(s.gpu_count, 4);
        assert_string_equal(s.gpu_model, "Tesla-T4");
        assert_non_null(s.sharing);
        assert_int_equal(s.sharing->mode, GP_SHARE_TIMESLICE);
        assert_int_equal(s.sharing->replicas, 4);
        assert_true(s.sharing->rename_by_default);
        assert_int_equal(info.gpus, 4);
        assert_int_equal(info.replicas, 4);
    }
    /* not renamed: nvidia.com/gpu as before */
    assert_int_equal(read_node_res(T4_RENAMED, "\"nvidia.com/gpu\":\"16\"", &a, &s, &info, &d),
                     GP_OK);
    assert_false(s.sharing->rename_by_default);
    /* no replicas labelled: nvidia.com/gpu.shared is no GPU of gpuplane's */
    assert_int_equal(read_node_res("\"nvidia.com/gpu.product\":\"Tesla-T4\"",
                                   "\"nvidia.com/gpu.shared\":\"16\"", &a, &s, &info, &d),
                     GP_OK);
    assert_int_equal(s.gpu_count, 0);
    assert_int_equal(
        read_node_res(T4_RENAMED, "\"nvidia.com/gpu.shared\":\"x\"", &a, &s, &info, &d),
        GP_EINVALID);
    assert_string_equal(d.msg, "node n: status.allocatable.nvidia.com/gpu.shared: \"x\" is not a "
                               "number of replicas from 0 to 64 (16 GPUs of 4 replicas)");
    /* pods: nvidia.com/gpu.shared as io/manifest_pod.c reads it */
    json_t *pod = json_loads(
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{"
        "\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu.shared\":\"2\"}}}]}}",
        0, NULL);
    struct gp_pod_spec ps;
    struct gp_kube_pod_info pi;
    assert_int_equal(gp_kube_pod_read(pod, &a, &ps, &pi, &d), GP_OK);
    assert_int_equal(ps.gpu_count, 2);
    assert_int_equal(ps.gpu_milli, 1000);
    assert_int_equal(ps.gpu_resource, GP_GPU_RES_SHARED);
    json_decref(pod);
    pod = json_loads("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                     "\"resources\":{\"limits\":{\"nvidia.com/gpu.shared\":\"1\",\"nvidia.com/"
                     "gpu\":\"1\"}}}]}}",
                     0, NULL);
    assert_int_equal(gp_kube_pod_read(pod, &a, &ps, &pi, &d), GP_EINVALID);
    assert_string_equal(d.msg,
                        "spec.containers: nvidia.com/gpu.shared and nvidia.com/gpu in one pod");
    json_decref(pod);
    gp_arena_free(&a);
}

static void restart(const char *strategy)
{
    struct world a;
    w_open(&a, true);
    w_shared_node(&a, "ts", 2, 4, strategy);
    /* three pods a gpuplane before placed on GPU 1, and a new one */
    w_placed(&a, "b1", "ts", "1", true);
    w_placed(&a, "b2", "ts", "1", true);
    w_placed(&a, "b3", "ts", "1", true);
    w_pod(&a, "p1", 1);
    assert_int_equal(w_cycle(&a), 1);
    /* booked where their annotations say: GPU 1, the fullest with a
     * free replica, takes the new pod (at the engine's own choice they
     * would be on GPU 0, and p1 with them) */
    assert_on(&a, "p1", "ts", "1");
    w_close(&a);
    /* the restart: GPU 1's four replicas are taken */
    struct world b;
    w_open(&b, true);
    w_placed(&b, "half", "ts", "0", false);
    w_pod(&b, "q1", 1);
    w_pod(&b, "q2", 1);
    assert_int_equal(w_cycle(&b), 3);
    assert_on(&b, "half", "ts", "0"); /* resumed at its GPU */
    assert_on(&b, "q1", "ts", "0");
    assert_on(&b, "q2", "ts", "0");
    for (int i = 1; i <= 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "b%d", i);
        assert_on(&b, name, "ts", "1"); /* untouched */
    }
    assert_int_equal(gp_kube_sched_stats(b.s).resumed, 1);
    /* one replica left, on GPU 0 */
    w_pod(&b, "q3", 1);
    w_pod(&b, "q4", 1);
    assert_int_equal(w_cycle(&b), 1);
    assert_on(&b, "q3", "ts", "0");
    assert_string_equal(w_node_of(&b, "q4", NULL), "");
    /* kube-scheduler's words: the node advertises no more nvidia.com/gpu */
    assert_string_equal(
        w_events(&b, "FailedScheduling", "q4"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    /* a share by gpuplane's annotation alone asks no resource: gpuplane's words */
    w_pod_full(&b, "frac", 0, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/gpu-milli\":\"500\"}");
    b.now += 1;
    assert_int_equal(w_cycle(&b), 0);
    assert_string_equal(w_events(&b, "FailedScheduling", "frac"),
                        strcmp(strategy, "mps") == 0
                            ? "0/1 nodes are available: 1 no GPU with enough free share."
                              " preemption: 0/1 nodes are available: 1 No preemption victims found "
                              "for incoming pod.."
                            : "0/1 nodes are available: 1 no GPU with a free shared replica."
                              " preemption: 0/1 nodes are available: 1 No preemption victims found "
                              "for incoming pod..");
    /* a fifth pod planted on GPU 1 by hand: the audit counts replicas */
    w_placed(&b, "x", "ts", "1", true);
    w_sync(&b);
    assert_int_equal(gp_kube_sched_audit_all(b.s), 1);
    assert_int_equal(gp_kube_sched_stats(b.s).audit_violations, 1);
    assert_string_equal(
        gp_kube_sched_audit_last(b.s),
        "GPU 1 of node ts is booked by 5 pods (default/b1 and others), it has 4 replicas");
    w_close(&b);
}

/* A node whose plugin renames its replicas: pods asking
 * nvidia.com/gpu.shared fill its replicas, a pod asking nvidia.com/gpu
 * is refused in kube-scheduler's words (the node has none). */
static void test_renamed(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_shared_node_as(&w, "rn", 2, 4, "time-slicing", true, "");
    for (int i = 0; i < 8; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        w_pod_res(&w, name, "nvidia.com/gpu.shared", 1);
    }
    w_pod(&w, "whole", 1);
    assert_int_equal(w_cycle(&w), 8);
    unsigned on[2] = {0, 0};
    for (int i = 0; i < 8; i++) {
        char name[8];
        const char *g;
        snprintf(name, sizeof name, "s%d", i);
        assert_string_equal(w_node_of(&w, name, &g), "rn");
        assert_true(strcmp(g, "0") == 0 || strcmp(g, "1") == 0);
        on[g[0] - '0']++;
    }
    assert_int_equal(on[0], 4); /* four replicas of each GPU */
    assert_int_equal(on[1], 4);
    assert_string_equal(w_node_of(&w, "whole", NULL), "");
    assert_string_equal(
        w_events(&w, "FailedScheduling", "whole"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    /* full: kube-scheduler's words for the resource asked */
    w_pod_res(&w, "s8", "nvidia.com/gpu.shared", 1);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(
        w_events(&w, "FailedScheduling", "s8"),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.shared."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    w_close(&w);
}

/* failRequestsGreaterThanOne from the node's label: read (MPS always
 * true, time-slicing false unless the label says true), and a pod asking
 * two replicas refused with its reason where the plugin would fail it,
 * bound where it would not. */
static void test_greater_than_one(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_node_spec s;
    struct gp_kube_node_info info;
    struct gp_diag d = {""};
    static const struct {
        const char *labels;
        bool fail;
    } cases[] = {
        {T4_RENAMED, false},
        {T4_RENAMED ",\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"true\"", true},
        {T4_RENAMED ",\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"false\"", false},
        {T4_RENAMED ",\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"yes\"", false},
        {"\"nvidia.com/gpu.replicas\":\"4\",\"nvidia.com/gpu.sharing-strategy\":\"mps\","
         "\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"false\"",
         true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(
            read_node_res(cases[i].labels, "\"nvidia.com/gpu\":\"16\"", &a, &s, &info, &d), GP_OK);
        assert_non_null(s.sharing);
        if (s.sharing->fail_requests_greater_than_one != cases[i].fail)
            fail_msg("%s: fail_requests_greater_than_one %d", cases[i].labels, !cases[i].fail);
    }
    gp_arena_free(&a);

    struct world w;
    w_open(&w, true);
    w_shared_node_as(&w, "tsf", 2, 4, "time-slicing", false,
                     ",\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"true\"");
    w_pod(&w, "two", 2);
    w_pod(&w, "one", 1);
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "one", NULL), "tsf");
    assert_string_equal(w_node_of(&w, "two", NULL), "");
    assert_string_equal(
        w_events(&w, "FailedScheduling", "two"),
        "0/1 nodes are available: 1 node(s) refuse a container asking more than "
        "one shared nvidia.com/gpu (failRequestsGreaterThanOne)."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..");
    /* a node whose plugin keeps the default: two replicas there */
    w_shared_node(&w, "ts", 2, 4, "time-slicing");
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "two", NULL), "ts");
    w_close(&w);
}

/* failRequestsGreaterThanOne per container, as NVIDIA's plugin checks
 * each container's Allocate (internal/rm ValidateRequest; the kubelet
 * sends one per container): on a node whose plugin fails such requests
 * (time-slicing with the label, MPS always, renamed or not) a pod of two
 * app containers asking one replica each, or a sidecar and an app
 * container of one each, is bound; one container asking two (an app
 * container, or a plain init container whose own Allocate asks two while
 * the pod's count is two as well) is refused with the reason. */
static void per_container(const char *strategy, bool renamed, const char *extra)
{
    const char *res = renamed ? "nvidia.com/gpu.shared" : "nvidia.com/gpu";
    struct world w;
    w_open(&w, true);
    w_shared_node_as(&w, "f", 2, 4, strategy, renamed, extra);
    w_pod_ctrs(&w, "pair", res, "", "c:1,c:1");
    w_pod_ctrs(&w, "side", res, "s:1", "c:1");
    w_pod_ctrs(&w, "big", res, "", "c:2");
    w_pod_ctrs(&w, "init2", res, "i:2", "c:1,c:1");
    assert_int_equal(w_cycle(&w), 2);
    const char *g;
    assert_string_equal(w_node_of(&w, "pair", &g), "f");
    assert_int_equal(strlen(g), 3); /* two replicas: "0,1" */
    assert_string_equal(w_node_of(&w, "side", &g), "f");
    assert_int_equal(strlen(g), 3);
    char want[256];
    snprintf(
        want, sizeof want,
        "0/1 nodes are available: 1 node(s) refuse a container asking more than one %s "
        "(failRequestsGreaterThanOne)."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..",
        renamed ? "nvidia.com/gpu.shared" : "shared nvidia.com/gpu");
    assert_string_equal(w_node_of(&w, "big", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "big"), want);
    assert_string_equal(w_node_of(&w, "init2", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "init2"), want);
    w_close(&w);
}

static void test_per_container(void **state)
{
    (void)state;
    per_container("time-slicing", false, ",\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"true\"");
}

static void test_per_container_renamed(void **state)
{
    (void)state;
    per_container("time-slicing", true, ",\"" GP_SHARING_LABEL_FAIL_GT1 "\":\"true\"");
}

static void test_per_container_mps(void **state)
{
    (void)state;
    per_container("mps", false, "");
}

/* Four H100s, GPUs 1 and 2 in MIG mode with seven 1g.10gb each. */
static void mixed_inventory(struct gp_node_inventory *inv)
{
    memset(inv, 0, sizeof *inv);
    snprintf(inv->driver_version, sizeof inv->driver_version, "550.54.15");
    inv->cuda_driver_version = 12040;
    inv->n_gpus = 4;
    for (unsigned i = 0; i < 4; i++) {
        struct gp_node_gpu *g = &inv->gpus[i];
        g->index = i;
        snprintf(g->uuid, sizeof g->uuid, "GPU-%u", i);
        snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
        g->memory_mib = 81559;
        g->cc_major = 9;
        g->mig_capable = true;
        g->healthy = true;
        g->mig_enabled = i == 1 || i == 2;
        for (unsigned k = 0; g->mig_enabled && k < 7; k++) {
            struct gp_node_mig *m = &g->migs[g->n_migs++];
            snprintf(m->uuid, sizeof m->uuid, "MIG-%u-%u", i, k);
            snprintf(m->profile, sizeof m->profile, "1g.10gb");
            m->memory_mib = 9984;
            m->gi_slices = m->ci_slices = 1;
            m->start = k;
            m->size = 1;
        }
    }
}

/* A node as gpuplane's node agent publishes inv under sh: the labels it
 * builds, and as capacity and allocatable each resource its device
 * plugin advertises with its device count (plus `extra` JSON members). */
static void agent_node(struct world *w, const char *name, const struct gp_node_inventory *inv,
                       const struct gp_node_sharing *sh, const char *extra)
{
    static struct gp_node_labels out;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_labels_build(inv, sh, NULL, &out, &d), GP_OK);
    json_t *l = json_object();
    for (size_t i = 0; i < out.n; i++)
        json_object_set_new(l, out.items[i].key, json_string(out.items[i].value));
    json_t *n = json_pack("{s:{s:s,s:o},s:{}}", "metadata", "name", name, "labels", l, "spec");
    char *text = json_dumps(n, JSON_COMPACT);
    json_decref(n);
    kd_call(w->admin, "POST", "/api/v1/nodes", text, 201);
    free(text);
    struct gp_node_devset set;
    assert_int_equal(gp_node_devset_build(inv, sh, &set, &d), GP_OK);
    char res[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < set.n_resources; i++)
        o += (size_t)snprintf(res + o, sizeof res - o, ",\"%s\":\"%zu\"", set.res[i].name,
                              set.res[i].n);
    gp_node_devset_free(&set);
    char b[1536], path[128];
    snprintf(b, sizeof b,
             "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"%s%s},"
             "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"pods\":\"110\"%s%s},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             res, extra, res, extra);
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

/* Pods bound on node, per GPU index their gpuplane.io/gpus name (MIG
 * pods, which name gpuplane.io/mig too, in mig[]). */
static void per_gpu(struct world *w, unsigned whole[4], unsigned mig[4])
{
    memset(whole, 0, 4 * sizeof *whole);
    memset(mig, 0, 4 * sizeof *mig);
    json_t *list = w_get(w, "/api/v1/pods");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        if (!json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")))
            continue;
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        const char *g = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
        bool is_mig = json_object_get(ann, GP_KUBE_ANN_MIG) != NULL;
        struct gp_pick pick;
        if (!g || !gp_kube_pick_parse(g, &pick))
            continue;
        for (unsigned k = 0; k < pick.ngpus; k++) {
            assert_true(pick.gpu[k] < 4);
            (is_mig ? mig : whole)[pick.gpu[k]]++;
        }
    }
    json_decref(list);
}

/* Renamed replicas beside MIG GPUs: the mixed strategy with nvidia.com/gpu
 * time-sliced and renameByDefault: true. NVIDIA's plugin replicates and
 * renames only the resources its sharing names (api/config/v1
 * ReplicatedResources, the default shared rename), so the whole GPUs are
 * nvidia.com/gpu.shared (2 GPUs x 4 replicas), the MIG devices stay
 * nvidia.com/mig-1g.10gb (14), there is no nvidia.com/gpu, and GFD labels
 * gpu.replicas 4 with no -SHARED; the node and its resources here are the
 * ones gpuplane's agent publishes for that inventory. Pods asking
 * nvidia.com/gpu.shared fill the whole GPUs (0 and 3), MIG pods the MIG
 * ones, a pod asking nvidia.com/gpu is refused (the node has none), a
 * restart reads both back, the audit stays clean; MIG devices renamed
 * (their resource time-sliced) are counted, not placed on. */
static void renamed_mig(const char *gpu0)
{
    struct gp_node_inventory inv;
    mixed_inventory(&inv);
    const struct gp_node_sharing sh = {.mode = GP_NODE_SHARE_TIME_SLICING,
                                       .replicas = 4,
                                       .rename_by_default = true,
                                       .mig_strategy = GP_NODE_MIG_MIXED};
    struct world w;
    w_open(&w, true);
    agent_node(&w, "rm", &inv, &sh, gpu0);
    char name[16];
    for (int i = 1; i <= 9; i++) {
        snprintf(name, sizeof name, "s%d", i);
        w_pod_res(&w, name, "nvidia.com/gpu.shared", 1);
    }
    for (int i = 1; i <= 14; i++) {
        snprintf(name, sizeof name, "m%d", i);
        w_pod_res(&w, name, "nvidia.com/mig-1g.10gb", 1);
    }
    w_pod(&w, "whole", 1);
    assert_int_equal(w_cycle(&w), 22);
    unsigned whole[4], mig[4];
    per_gpu(&w, whole, mig);
    assert_int_equal(whole[0], 4); /* four replicas on each whole GPU */
    assert_int_equal(whole[3], 4);
    assert_int_equal(whole[1] + whole[2], 0);
    assert_int_equal(mig[1], 7); /* seven instances on each MIG GPU */
    assert_int_equal(mig[2], 7);
    assert_int_equal(mig[0] + mig[3], 0);
    unsigned unbound = 0;
    for (int i = 1; i <= 9; i++) {
        snprintf(name, sizeof name, "s%d", i);
        if (!w_node_of(&w, name, NULL)[0] && ++unbound)
            assert_string_equal(w_events(&w, "FailedScheduling", name),
                                "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.shared."
                                " preemption: 0/1 nodes are available: 1 No preemption victims "
                                "found for incoming pod..");
    }
    assert_int_equal(unbound, 1);
    assert_string_equal(w_node_of(&w, "whole", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "whole"),
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 "
                        "nodes are available: 1 No preemption victims found for incoming pod..");
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    /* a restart reads both kinds back: a deleted replica's GPU goes to the
     * pod left, and only that one */
    gp_kube_sched_set_leader(w.s, false);
    gp_kube_sched_set_leader(w.s, true);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/s1?gracePeriodSeconds=0", NULL,
            200);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 1);
    per_gpu(&w, whole, mig);
    assert_int_equal(whole[0], 4);
    assert_int_equal(whole[3], 4);
    assert_int_equal(mig[1] + mig[2], 14);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    w_close(&w);
}

static void test_renamed_mig(void **state)
{
    (void)state;
    renamed_mig(""); /* no nvidia.com/gpu at all */
}

static void test_renamed_mig_zero(void **state)
{
    (void)state;
    renamed_mig(",\"nvidia.com/gpu\":\"0\""); /* a plugin renamed since */
}

/* The reader on such nodes: the counts, and MIG devices renamed (a
 * config that time-slices the MIG resource too) not read. */
static void test_renamed_mig_reader(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_node_spec s;
    struct gp_kube_node_info info;
    struct gp_diag d = {""};
    const char *labels =
        "\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\",\"nvidia.com/gpu.count\":\"4\","
        "\"nvidia.com/gpu.replicas\":\"4\",\"nvidia.com/gpu.sharing-strategy\":\"time-slicing\","
        "\"nvidia.com/gpu.memory\":\"81559\",\"nvidia.com/mig.strategy\":\"mixed\"";
    assert_int_equal(read_node_res(labels,
                                   "\"nvidia.com/gpu.shared\":\"8\",\"nvidia.com/mig-1g.10gb\":"
                                   "\"14\"",
                                   &a, &s, &info, &d),
                     GP_OK);
    assert_null(info.mig_why);
    assert_int_equal(info.whole_gpus, 2);
    assert_int_equal(info.mig_gpus, 2);
    assert_int_equal(info.replicas, 4);
    assert_true(info.split);
    assert_int_equal(s.gpu_count, 2);
    assert_non_null(s.sharing);
    assert_true(s.sharing->rename_by_default);
    assert_int_equal(s.sharing->replicas, 4);
    assert_string_equal(s.gpu_model, "NVIDIA-H100-80GB-HBM3");
    assert_int_equal(info.mig_spec.gpu_count, 2);
    assert_int_equal(info.mig_spec.sharing->mode, GP_SHARE_MIG);
    /* the MIG devices renamed too: not read */
    assert_int_equal(read_node_res(labels,
                                   "\"nvidia.com/gpu.shared\":\"8\",\"nvidia.com/mig-1g.10gb."
                                   "shared\":\"56\"",
                                   &a, &s, &info, &d),
                     GP_OK);
    assert_non_null(info.mig_why);
    assert_string_equal(info.mig_why, "nvidia.com/mig-1g.10gb.shared is 56: MIG devices "
                                      "time-sliced are not read");
    assert_int_equal(s.gpu_count, 0);
    /* nvidia.com/gpu.shared that does not read */
    assert_int_equal(read_node_res(labels,
                                   "\"nvidia.com/gpu.shared\":\"many\",\"nvidia.com/mig-1g.10gb\":"
                                   "\"14\"",
                                   &a, &s, &info, &d),
                     GP_EINVALID);
    assert_non_null(strstr(d.msg, "nvidia.com/gpu.shared: \"many\""));
    gp_arena_free(&a);
}

/* A pod's own gpuplane.io/sharing, read as io/manifest_pod.c reads it:
 * the modes named, intersected with what the resource implies; the bad
 * ones one line naming the field. */
static void test_pin_reader(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    static const struct {
        const char *res, *pin;
        uint8_t modes; /* 0: refused with msg */
        const char *msg;
    } cases[] = {
        {"\"nvidia.com/gpu\":\"1\"", "timeslice, mps",
         1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS, NULL},
        {"\"nvidia.com/gpu\":\"2\"", "exclusive", 1u << GP_SHARE_EXCLUSIVE, NULL},
        {"\"nvidia.com/gpu.shared\":\"1\"", "mps,exclusive", 1u << GP_SHARE_MPS, NULL},
        {"\"nvidia.com/mig-1g.10gb\":\"1\"", "mig", 1u << GP_SHARE_MIG, NULL},
        {"\"nvidia.com/gpu.shared\":\"1\"", "exclusive", 0,
         "metadata.annotations.gpuplane.io/sharing: \"exclusive\" allows no mode the pod's GPU "
         "request can use (nvidia.com/gpu.shared needs timeslice or mps, nvidia.com/mig-* mig)"},
        {"\"nvidia.com/gpu\":\"1\"", "time-slicing", 0,
         "metadata.annotations.gpuplane.io/sharing: \"time-slicing\" is not a list of sharing "
         "modes separated by commas (exclusive, timeslice, mps, mig)"},
        {"\"nvidia.com/gpu\":\"1\"", "mps,", 0,
         "metadata.annotations.gpuplane.io/sharing: \"mps,\" is not a list of sharing modes "
         "separated by commas (exclusive, timeslice, mps, mig)"},
        {"\"cpu\":\"1\"", "mps", 0,
         "metadata.annotations.gpuplane.io/sharing: sharing modes for a pod that asks for no GPU"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[512];
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"annotations\":{"
                 "\"gpuplane.io/sharing\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"resources\":{\"limits\":{%s}}}]}}",
                 cases[i].pin, cases[i].res);
        json_t *pod = json_loads(b, 0, NULL);
        assert_non_null(pod);
        struct gp_pod_spec ps;
        struct gp_kube_pod_info pi;
        struct gp_diag d = {""};
        enum gp_err err = gp_kube_pod_read(pod, &a, &ps, &pi, &d);
        json_decref(pod);
        if (cases[i].modes) {
            if (err != GP_OK)
                fail_msg("%s: %s", cases[i].pin, d.msg);
            assert_int_equal(ps.share_modes, cases[i].modes);
        } else {
            assert_int_equal(err, GP_EINVALID);
            assert_string_equal(d.msg, cases[i].msg);
        }
    }
    gp_arena_free(&a);
}

/* A pod pinned to a sharing mode (gpuplane.io/sharing) goes only to nodes
 * shared that way, as in the simulator: pinned exclusive it waits beside a
 * time-sliced node (which advertises nvidia.com/gpu, so gpuplane's words,
 * not kube-scheduler's "Insufficient") and takes the whole-GPU node once
 * there; pinned timeslice it takes a replica though whole GPUs are free;
 * unpinned it may go to either. */
static void test_pin(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_shared_node(&w, "ts", 2, 4, "time-slicing");
    w_pod_full(&w, "ex1", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/sharing\":\"exclusive\"}");
    w_pod(&w, "any", 1);
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "any", NULL), "ts");
    assert_string_equal(w_node_of(&w, "ex1", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "ex1"),
                        "0/1 nodes are available: 1 node(s) share their GPUs in a way the pod's "
                        "gpuplane.io/sharing does not allow. preemption: 0/1 nodes are available: "
                        "1 No preemption victims found for incoming pod..");
    w_node(&w, "ex", 2);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "ex1", NULL), "ex");
    w_pod_full(&w, "ts1", 1, 0, "gpuplane",
               ",\"annotations\":{\"gpuplane.io/sharing\":\"timeslice\"}");
    w.now += 10;
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "ts1", NULL), "ts");
    assert_int_equal(gp_kube_sched_stats(w.s).audit_violations, 0);
    w_close(&w);
}

/* gpuplane's own reason among kube-scheduler's, sorted as they are. */
static void test_explain_add(void **state)
{
    (void)state;
    struct gp_explain x;
    memset(&x, 0, sizeof x);
    x.nodes_total = 12;
    x.rejected[GP_FILTER_SELECTOR] = 4;
    x.rejected[GP_FILTER_GPU_COUNT] = 6;
    char buf[512];
    gp_kube_explain_text(&x, buf, sizeof buf);
    gp_kube_explain_add(buf, sizeof buf, 2, "node(s) refuse requests (x)");
    assert_string_equal(buf, "0/12 nodes are available: 2 node(s) refuse requests (x), 4 node(s) "
                             "didn't match Pod's node affinity/selector, 6 Insufficient "
                             "nvidia.com/gpu.");
    gp_kube_explain_add(buf, sizeof buf, 0, "nothing");
    assert_string_equal(buf, "0/12 nodes are available: 2 node(s) refuse requests (x), 4 node(s) "
                             "didn't match Pod's node affinity/selector, 6 Insufficient "
                             "nvidia.com/gpu.");
    memset(&x, 0, sizeof x);
    x.nodes_total = 3;
    gp_kube_explain_text(&x, buf, sizeof buf);
    gp_kube_explain_add(buf, sizeof buf, 3, "alone");
    assert_string_equal(buf, "0/3 nodes are available: 3 alone.");
}

/* A pod's replicas on distinct GPUs on a live node: gpuplane.io/gpus
 * names each GPU once and the agent refuses two replicas of one GPU for
 * one container (NVIDIA #491). Two replicas on a node of one GPU: before,
 * bound with gpuplane.io/gpus "0" (two replicas booked, one named, the
 * agent then refusing the container's two IDs); now refused, in gpuplane's
 * words: the node advertises 4 free nvidia.com/gpu, so kube-scheduler would
 * bind it and "Insufficient nvidia.com/gpu" would be false; on a node of two
 * GPUs both named. */
static void test_distinct_replicas(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_shared_node(&w, "one", 1, 4, "time-slicing");
    w_pod(&w, "two", 2);
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "two", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "two"),
                        "0/1 nodes are available: 1 node(s) had too few GPUs with a free replica "
                        "for the pod's replicas on distinct GPUs. preemption: 0/1 nodes are "
                        "available: 1 No preemption victims found for incoming pod..");
    w_shared_node(&w, "pair", 2, 4, "time-slicing");
    w_pod(&w, "fill", 1);
    w.now += 10;
    assert_int_equal(w_cycle(&w), 2);
    const char *g;
    assert_string_equal(w_node_of(&w, "two", &g), "pair");
    assert_true(strcmp(g, "0,1") == 0 || strcmp(g, "1,0") == 0);
    assert_int_equal(gp_kube_sched_audit_all(w.s), 0);
    w_close(&w);
}

static void test_restart_timeslice(void **state)
{
    (void)state;
    restart("time-slicing");
}

static void test_restart_mps(void **state)
{
    (void)state;
    restart("mps");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_renamed_readers),
        cmocka_unit_test_setup_teardown(test_renamed, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_greater_than_one, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_per_container, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_per_container_renamed, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_per_container_mps, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_renamed_mig, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_renamed_mig_zero, kd_start, kd_stop),
        cmocka_unit_test(test_renamed_mig_reader),
        cmocka_unit_test_setup_teardown(test_distinct_replicas, kd_start, kd_stop),
        cmocka_unit_test(test_pin_reader),
        cmocka_unit_test_setup_teardown(test_pin, kd_start, kd_stop),
        cmocka_unit_test(test_explain_add),
        cmocka_unit_test_setup_teardown(test_restart_timeslice, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_restart_mps, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
