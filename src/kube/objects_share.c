/* objects_share.c - a Node whose GPUs NVIDIA's device plugin shares by
 * time-slicing or MPS, read into the engine's sharing model (docs/kube.md,
 * "Time-slicing and MPS from the API"): the plugin advertises each GPU
 * `replicas` times as nvidia.com/gpu, so the node's GPUs are its
 * nvidia.com/gpu over GFD's nvidia.com/gpu.replicas, and its
 * nvidia.com/gpu.sharing-strategy says which way.
 *
 * Sources: NVIDIA's device plugin README (github.com/NVIDIA/k8s-device-plugin,
 * shared access to GPUs: 8 GPUs with replicas 10 are advertised as 80
 * nvidia.com/gpu; under MPS each client gets 100 / replicas % of the
 * threads and the GPU's memory / replicas; docs/sharing.md), GFD's labels
 * (internal/lm/resource.go: gpu.replicas, gpu.sharing-strategy
 * time-slicing | mps | none, gpu.product with "-SHARED" on shared GPUs that
 * are not renamed) and the GPU Operator's time-slicing page, quoted in
 * ../shared/k8s/samples/quoted-nvidia-docs.md section 3 (gpu.count=4,
 * gpu.replicas=4, nvidia.com/gpu: 16). With renameByDefault: true the
 * plugin advertises the replicas as nvidia.com/gpu.shared instead and no
 * nvidia.com/gpu (README, "With renameByDefault=true ... nvidia.com/gpu.shared";
 * ../shared/notes/k8s-api-wire.md section 3), and gpu.product has no
 * "-SHARED" (internal/lm/resource.go: the suffix only when not renamed). */
#include <stdio.h>
#include <string.h>

#include "engine/sharing.h"
#include "kube/objects.h"
#include "util/units.h"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The mode GFD's labels give: time-slicing or MPS; -1 when the node's
 * GPUs are not shared that way (the label none, an unknown strategy, MIG). */
static int labelled_mode(const json_t *labels)
{
    const char *mig = str(labels, "nvidia.com/mig.strategy");
    if (mig && strcmp(mig, "single") == 0)
        return -1; /* MIG devices as nvidia.com/gpu: objects_mig.c */
    /* mixed: the replicas are nvidia.com/gpu's, the whole GPUs' (MIG
     * devices beside them: objects_mig.c) */
    const char *strategy = str(labels, "nvidia.com/gpu.sharing-strategy");
    if (!strategy || strcmp(strategy, "time-slicing") == 0) /* older GFD: replicas alone */
        return GP_SHARE_TIMESLICE;
    return strcmp(strategy, "mps") == 0 ? GP_SHARE_MPS : -1;
}

uint32_t gp_kube_node_replicas(const json_t *node)
{
    const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
    const char *r = str(labels, "nvidia.com/gpu.replicas");
    int64_t n;
    int mode = labelled_mode(labels);
    if (!r || mode < 0 || !gp_units_uint(r, &n) || n < 2)
        return 1;
    int64_t max = mode == GP_SHARE_MPS ? GP_MPS_MAX_CLIENTS : GP_SHARE_MAX_REPLICAS;
    return n > max ? 1 : (uint32_t)n;
}

/* The node's nvidia.com/gpu.shared (allocatable, else capacity, as
 * objects.c reads nvidia.com/gpu): *n, 0 when absent. */
static enum gp_err shared_count(const json_t *node, const char *name, uint32_t replicas, int64_t *n,
                                struct gp_diag *d)
{
    const json_t *status = json_object_get(node, "status");
    const json_t *alloc = json_object_get(status, "allocatable");
    if (!alloc)
        alloc = json_object_get(status, "capacity");
    const json_t *v = json_object_get(alloc, "nvidia.com/gpu.shared");
    char b[32];
    const char *q = json_is_string(v) ? json_string_value(v) : NULL;
    if (json_is_integer(v)) {
        snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        q = b;
    }
    *n = 0;
    if (q && (!gp_units_uint(q, n) || *n > (int64_t)GP_MAX_GPUS_PER_NODE * replicas))
        return gp_diag_set(d, GP_EINVALID,
                           "node %s: status.allocatable.nvidia.com/gpu.shared: \"%s\" is not a "
                           "number of replicas from 0 to %u (%d GPUs of %u replicas)",
                           name, q, GP_MAX_GPUS_PER_NODE * replicas, GP_MAX_GPUS_PER_NODE,
                           replicas);
    return GP_OK;
}

enum gp_err gp_kube_node_whole_replicas(const json_t *node, const char *name, uint32_t gpu,
                                        uint32_t *out, struct gp_diag *d)
{
    uint32_t replicas = gp_kube_node_replicas(node);
    int64_t shared = 0;
    *out = gpu;
    if (gpu > 0 || replicas < 2)
        return GP_OK;
    enum gp_err err = shared_count(node, name, replicas, &shared, d);
    if (err == GP_OK)
        *out = (uint32_t)shared;
    return err;
}

enum gp_err gp_kube_node_share_read(const json_t *node, struct gp_arena *a, struct gp_node_spec *s,
                                    struct gp_kube_node_info *info, struct gp_diag *d)
{
    uint32_t replicas = gp_kube_node_replicas(node);
    if (replicas < 2 || info->mig || info->mig_why)
        return GP_OK;
    const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
    /* renamed: the replicas are nvidia.com/gpu.shared, and the node has
     * no nvidia.com/gpu (a node showing both is read by its
     * nvidia.com/gpu, as the plugin never advertises both) */
    int64_t shared = 0;
    enum gp_err err = shared_count(node, info->name, replicas, &shared, d);
    if (err != GP_OK)
        return err;
    bool renamed = s->gpu_count == 0 && shared > 0;
    if (renamed) {
        const char *product = str(labels, "nvidia.com/gpu.product");
        s->gpu_count = (uint32_t)shared;
        s->gpu_model = gp_arena_strdup(a, product ? product : "unknown");
        if (!s->gpu_model)
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (s->gpu_count == 0)
        return GP_OK;
    struct gp_sharing_spec *sh = gp_arena_alloc(a, sizeof *sh);
    if (!sh)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    memset(sh, 0, sizeof *sh);
    sh->mode = (enum gp_share_mode)labelled_mode(labels);
    sh->replicas = replicas;
    sh->rename_by_default = renamed;
    /* a pod's replicas on distinct GPUs: gpuplane.io/gpus names each GPU
     * once, and the node agent refuses two replicas of one GPU for one
     * container (NVIDIA k8s-device-plugin #491), where the engine's
     * simulator model lets several share one */
    sh->distinct_replicas = true;
    /* The plugin's failRequestsGreaterThanOne: always true under MPS; for
     * time-slicing the node's GP_SHARING_LABEL_FAIL_GT1 (gpuplane's agent,
     * or `gpuplane render`'s node labels, say what the plugin was given),
     * else the plugin's default, false (NVIDIA's k8s-device-plugin README,
     * "Shared Access to GPUs": "If failRequestsGreaterThanOne=true, then
     * the plugin will fail to allocate any shared resources to a container
     * if they request more than one"). Under MPS the plugin sets it
     * whatever its config says (k8s-device-plugin api/config/v1/config.go,
     * after the flags are read: "We explicitly set
     * sharing.mps.failRequestsGreaterThanOne = true"; CHANGELOG v0.15.0-rc.2),
     * so a node labelled false under MPS is read as true: that is what its
     * Allocate enforces. */
    const char *fail = str(labels, GP_SHARING_LABEL_FAIL_GT1);
    sh->fail_requests_greater_than_one =
        sh->mode == GP_SHARE_MPS || (fail && strcmp(fail, "true") == 0);
    if (sh->mode == GP_SHARE_MPS) {
        sh->mps.active_thread_pct = 100 / replicas;
        sh->mps.pinned_mem_mib = s->gpu_mem_mib / replicas;
    }
    /* whole GPUs only: a replica missing (its GPU unhealthy) takes the
     * GPU's others with it, as the plugin's health is per GPU */
    s->gpu_count /= replicas;
    s->sharing = sh;
    if (s->gpu_model) { /* "Tesla-T4-SHARED" is a Tesla-T4 */
        char *model = gp_arena_strdup(a, s->gpu_model);
        if (!model)
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        model[gp_sharing_gfd_model_len(model)] = '\0';
        s->gpu_model = model;
    }
    info->gpus = info->whole_gpus = s->gpu_count;
    info->replicas = replicas;
    return GP_OK;
}

enum gp_err gp_kube_pod_sharing_read(const json_t *ann, struct gp_pod_spec *s, struct gp_diag *d)
{
    const char *v = str(ann, "gpuplane.io/sharing");
    if (!v)
        return GP_OK;
    uint8_t modes = 0;
    if (!gp_share_modes_parse(v, &modes))
        return gp_diag_set(d, GP_EINVALID,
                           "metadata.annotations.gpuplane.io/sharing: \"%.100s\" is not a "
                           "list of sharing modes separated by commas (exclusive, timeslice, "
                           "mps, mig)",
                           v);
    if (s->gpu_count == 0)
        return gp_diag_set(d, GP_EINVALID,
                           "metadata.annotations.gpuplane.io/sharing: sharing modes for a pod "
                           "that asks for no GPU");
    uint8_t left = s->share_modes ? s->share_modes & modes : modes;
    if (!left)
        return gp_diag_set(d, GP_EINVALID,
                           "metadata.annotations.gpuplane.io/sharing: \"%.100s\" allows no mode "
                           "the pod's GPU request can use (nvidia.com/gpu.shared needs timeslice "
                           "or mps, nvidia.com/mig-* mig)",
                           v);
    s->share_modes = left;
    return GP_OK;
}
