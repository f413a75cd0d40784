/* objects.c - Pods and Nodes as the API server sends them (JSON) read into
 * the engine's specs, the device annotations' format, and the
 * explanation of an unschedulable pod in kube-scheduler's words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mig.h"
#include "engine/sharing.h"
#include "io/podreq.h"
#include "kube/objects.h"
#include "util/units.h"

/* jansson's iterators and reference counts take non-const pointers; the
 * objects are only read (or their count kept) here. */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* A quantity: the server writes strings; a number is taken as written. */
static const char *qty(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    return NULL;
}

struct req {
    int64_t cpu_milli, mem_mib, gpus;
    int64_t mig;         /* nvidia.com/mig-<profile> instances */
    const char *profile; /* that profile (borrowed from the JSON); NULL: none */
    int64_t shared;      /* nvidia.com/gpu.shared: replicas of renamed shared GPUs */
    /* the pod's: the most nvidia.com/gpu, nvidia.com/gpu.shared one
     * container asks (failRequestsGreaterThanOne is per container) */
    int64_t gpus_one, shared_one;
    bool other; /* a container's: it asks another resource (objects_scalar.c) */
};

/* nvidia.com/mig-<profile>: one profile per pod, as gpuplane places MIG
 * instances (io/manifest_pod.c reads manifests the same way). */
static enum gp_err mig_request(const char *k, const char *s, const char *where, struct req *r,
                               struct gp_diag *d)
{
    const char *profile = k + strlen("nvidia.com/mig-");
    int64_t n;
    if (!profile[0] || !gp_units_count(s, &n) || n > GP_MAX_GPUS_PER_NODE)
        return gp_diag_set(d, GP_EINVALID,
                           "%s.resources.requests.%s: not a number of MIG devices from 0 to %d",
                           where, k, GP_MAX_GPUS_PER_NODE);
    if (n == 0)
        return GP_OK;
    if (r->profile && strcmp(r->profile, profile) != 0)
        return gp_diag_set(d, GP_EINVALID,
                           "%s.resources.requests.%s: a second MIG profile in one pod (it asks "
                           "for nvidia.com/mig-%s); gpuplane places one profile per pod",
                           where, k, r->profile);
    r->profile = profile;
    r->mig = n;
    return GP_OK;
}

static enum gp_err read_request(const char *k, const json_t *v, const char *where, struct req *r,
                                struct gp_diag *d)
{
    char b[32];
    const char *s = qty(v, b, sizeof b);
    bool ok = s != NULL;
    enum gp_units_qty q = GP_UNITS_QTY_SYNTAX; /* (the whole quantity grammar: util/units.h) */
    if (ok && strcmp(k, "cpu") == 0)
        ok = (q = gp_units_quantity(s, 3, 0, GP_UNITS_QTY_MAX, &r->cpu_milli)) == GP_UNITS_QTY_OK;
    else if (ok && strcmp(k, "memory") == 0)
        ok = (q = gp_units_quantity(s, 0, 20, GP_UNITS_QTY_MAX, &r->mem_mib)) == GP_UNITS_QTY_OK;
    else if (ok && strcmp(k, "nvidia.com/gpu") == 0)
        ok = gp_units_count(s, &r->gpus) && r->gpus <= GP_MAX_GPUS_PER_NODE;
    else if (ok && strcmp(k, "nvidia.com/gpu.shared") == 0)
        ok = gp_units_count(s, &r->shared) && r->shared <= GP_MAX_GPUS_PER_NODE;
    else if (ok && strncmp(k, "nvidia.com/mig-", 15) == 0)
        return mig_request(k, s, where, r, d);
    else
        r->other = true;
    bool count = strncmp(k, "nvidia.com/gpu", 14) == 0;
    if (!ok)
        return gp_diag_set(d, GP_EINVALID, "%s.resources.requests.%s: \"%s\" is %s%s", where, k,
                           s ? s : "?",
                           count                      ? "not a whole number from 0 to "
                           : q == GP_UNITS_QTY_SYNTAX ? "not a quantity"
                                                      : gp_units_quantity_why(q),
                           count ? "16" : "");
    return GP_OK;
}

/* A container's requests; a resource with a limit and no request is
 * requested at its limit, per resource, as the API server's defaulting
 * (SetDefaults_ResourceRequirements) writes it. The profile a MIG
 * request names is borrowed from the JSON. */
static enum gp_err read_requests(const json_t *res, const char *where, struct req *r,
                                 struct gp_diag *d)
{
    const json_t *rq = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
    const char *k;
    json_t *v;
    json_object_foreach(mut(rq), k, v)
    {
        enum gp_err err = read_request(k, v, where, r, d);
        if (err != GP_OK)
            return err;
    }
    json_object_foreach(mut(lim), k, v)
    {
        if (json_object_get(rq, k))
            continue;
        enum gp_err err = read_request(k, v, where, r, d);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static void need_of(const struct req *r, int64_t v[GP_PODREQ_COUNT])
{
    v[GP_PODREQ_CPU_MILLI] = r->cpu_milli;
    v[GP_PODREQ_MEM_MIB] = r->mem_mib;
    v[GP_PODREQ_GPUS] = r->gpus;
    v[GP_PODREQ_SHARED] = r->shared;
    v[GP_PODREQ_MIG] = r->mig;
}

/* The pod's request as kube-scheduler computes it (k8s.io/component-helpers
 * resource/helpers.go PodRequests, KEP-753's sidecars): the rule of
 * io/podreq.h, the manifest reader's. A sidecar (an init container with
 * restartPolicy: Always) runs beside the app containers, so its GPUs are
 * the pod's for its whole life; spec.overhead is added last. */
static enum gp_err pod_requests(const json_t *spec, struct req *total,
                                struct gp_kube_scalar_acc *sc, struct gp_diag *d)
{
    struct gp_podreq acc;
    memset(&acc, 0, sizeof acc);
    int64_t v[GP_PODREQ_COUNT];
    size_t i;
    json_t *c;
    char where[64];
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        struct req r = {0, 0, 0, 0, total->profile, 0, 0, 0, false};
        snprintf(where, sizeof where, "spec.containers[%zu]", i);
        enum gp_err err = read_requests(json_object_get(c, "resources"), where, &r, d);
        if (err != GP_OK)
            return err;
        total->profile = r.profile;
        need_of(&r, v);
        gp_podreq_app(&acc, v);
        if (r.other && (err = gp_kube_scalars_container(sc, json_object_get(c, "resources"), false,
                                                        false, where, d)) != GP_OK)
            return err;
    }
    json_array_foreach(json_object_get(spec, "initContainers"), i, c)
    {
        struct req r = {0, 0, 0, 0, total->profile, 0, 0, 0, false};
        snprintf(where, sizeof where, "spec.initContainers[%zu]", i);
        enum gp_err err = read_requests(json_object_get(c, "resources"), where, &r, d);
        if (err != GP_OK)
            return err;
        total->profile = r.profile;
        const char *rp = str(c, "restartPolicy");
        bool sidecar = rp && strcmp(rp, "Always") == 0;
        need_of(&r, v);
        gp_podreq_init(&acc, v, sidecar);
        /* every init container once any has another resource: its
         * init(i) counts the sidecars before it */
        if ((r.other || sc->n) &&
            (err = gp_kube_scalars_container(sc, json_object_get(c, "resources"), true, sidecar,
                                             where, d)) != GP_OK)
            return err;
    }
    total->cpu_milli = gp_podreq_total(&acc, GP_PODREQ_CPU_MILLI);
    total->mem_mib = gp_podreq_total(&acc, GP_PODREQ_MEM_MIB);
    total->gpus = gp_podreq_total(&acc, GP_PODREQ_GPUS);
    total->mig = gp_podreq_total(&acc, GP_PODREQ_MIG);
    total->shared = gp_podreq_total(&acc, GP_PODREQ_SHARED);
    total->gpus_one = gp_podreq_container_max(&acc, GP_PODREQ_GPUS);
    total->shared_one = gp_podreq_container_max(&acc, GP_PODREQ_SHARED);
    const json_t *over = json_object_get(spec, "overhead"); /* RuntimeClass admission's */
    char b[32];
    int64_t x;
    const char *q = qty(json_object_get(over, "cpu"), b, sizeof b);
    if (q && !gp_units_cpu_milli(q, &x))
        return gp_diag_set(d, GP_EINVALID, "spec.overhead.cpu: not a quantity");
    total->cpu_milli += q ? x : 0;
    q = qty(json_object_get(over, "memory"), b, sizeof b);
    if (q && !gp_units_mem_mib(q, &x))
        return gp_diag_set(d, GP_EINVALID, "spec.overhead.memory: not a quantity");
    total->mem_mib += q ? x : 0;
    if (total->gpus > GP_MAX_GPUS_PER_NODE)
        return gp_diag_set(d, GP_EINVALID,
                           "spec.containers: more than %d nvidia.com/gpu (sidecars included)",
                           GP_MAX_GPUS_PER_NODE);
    if (total->mig > GP_MAX_GPUS_PER_NODE)
        return gp_diag_set(d, GP_EINVALID,
                           "spec.containers: more than %d nvidia.com/mig-%s (sidecars included)",
                           GP_MAX_GPUS_PER_NODE, total->profile);
    if (total->mig > 0 && total->gpus > 0)
        return gp_diag_set(d, GP_EINVALID,
                           "spec.containers: nvidia.com/gpu and nvidia.com/mig-%s in one pod",
                           total->profile);
    /* as io/manifest_pod.c: replicas of renamed time-sliced or MPS GPUs,
     * alone (a node advertises either them or whole GPUs) */
    if (total->shared > GP_MAX_GPUS_PER_NODE)
        return gp_diag_set(d, GP_EINVALID,
                           "spec.containers: more than %d nvidia.com/gpu.shared (sidecars "
                           "included)",
                           GP_MAX_GPUS_PER_NODE);
    if (total->shared > 0 && (total->gpus > 0 || total->mig > 0))
        return gp_diag_set(d, GP_EINVALID,
                           "spec.containers: nvidia.com/gpu.shared and %s%s in one pod",
                           total->gpus > 0 ? "nvidia.com/gpu" : "nvidia.com/mig-",
                           total->gpus > 0 ? "" : total->profile);
    return GP_OK;
}

static enum gp_err pod_kv(const json_t *map, struct gp_arena *a, const struct gp_kv **out,
                          size_t *n)
{
    size_t count = json_object_size(map), i = 0;
    *out = NULL;
    *n = 0;
    if (!count)
        return GP_OK;
    struct gp_kv *kv = gp_arena_alloc(a, count * sizeof *kv);
    if (!kv)
        return GP_ENOMEM;
    const char *k;
    json_t *v;
    json_object_foreach(mut(map), k, v)
    {
        if (!json_is_string(v))
            continue;
        kv[i].key = gp_arena_strdup(a, k);
        kv[i].value = gp_arena_strdup(a, json_string_value(v));
        i++;
    }
    *out = kv;
    *n = i;
    return GP_OK;
}

static enum gp_taint_effect effect_of(const char *s)
{
    if (s && strcmp(s, "NoExecute") == 0)
        return GP_EFFECT_NO_EXECUTE;
    if (s && strcmp(s, "PreferNoSchedule") == 0)
        return GP_EFFECT_PREFER_NO_SCHEDULE;
    return GP_EFFECT_NO_SCHEDULE;
}

static enum gp_err pod_tolerations(const json_t *list, struct gp_arena *a, struct gp_pod_spec *s)
{
    size_t n = json_array_size(list), i;
    if (!n)
        return GP_OK;
    struct gp_toleration *t = gp_arena_alloc(a, n * sizeof *t);
    if (!t)
        return GP_ENOMEM;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *key = str(v, "key"), *op = str(v, "operator"), *eff = str(v, "effect");
        t[i].key = key && key[0] ? gp_arena_strdup(a, key) : NULL;
        t[i].value = str(v, "value") ? gp_arena_strdup(a, str(v, "value")) : NULL;
        t[i].op_exists = op && strcmp(op, "Exists") == 0;
        t[i].any_effect = !eff || !eff[0];
        t[i].effect = effect_of(eff);
    }
    s->tolerations = t;
    s->ntolerations = n;
    return GP_OK;
}

static enum gp_err pod_annotations(const json_t *ann, struct gp_arena *a, struct gp_pod_spec *s,
                                   struct gp_diag *d)
{
    const char *milli = str(ann, "gpuplane.io/gpu-milli");
    const char *mem = str(ann, "gpuplane.io/gpu-memory");
    const char *models = str(ann, "gpuplane.io/gpu-model");
    int64_t v;
    if (s->mig_profile && (milli || mem))
        return gp_diag_set(d, GP_EINVALID,
                           "metadata.annotations.gpuplane.io/gpu-%s: cannot be combined with "
                           "nvidia.com/mig-%s (a MIG instance's share is its profile's)",
                           milli ? "milli" : "memory", s->mig_profile);
    if (milli) {
        if (!gp_units_uint(milli, &v) || v < 1 || v > GP_GPU_MILLI)
            return gp_diag_set(d, GP_EINVALID,
                               "metadata.annotations.gpuplane.io/gpu-milli: \"%s\" is not a "
                               "number of thousandths of a GPU from 1 to 1000",
                               milli);
        if (s->gpu_count > 1)
            return gp_diag_set(d, GP_EINVALID,
                               "metadata.annotations.gpuplane.io/gpu-milli: a share is part of "
                               "one GPU, the pod asks %u",
                               s->gpu_count);
        if (s->gpu_count == 0)
            s->gpu_resource = GP_GPU_RES_NONE;
        s->gpu_count = 1;
        s->gpu_milli = (uint32_t)v;
    }
    if (mem) {
        if (!gp_units_mem_mib(mem, &v) || v <= 0 || v > UINT32_MAX)
            return gp_diag_set(d, GP_EINVALID,
                               "metadata.annotations.gpuplane.io/gpu-memory: \"%s\" is not a "
                               "GPU memory quantity like 10Gi",
                               mem);
        if (s->gpu_count == 0) {
            s->gpu_count = 1;
            s->gpu_milli = 0;
            s->gpu_resource = GP_GPU_RES_NONE;
        }
        s->gpu_mem_mib = (uint32_t)v;
    }
    if (models && models[0]) {
        size_t n = 1;
        for (const char *p = models; *p; p++)
            n += *p == '|';
        const char **list = gp_arena_alloc(a, n * sizeof *list);
        char *copy = gp_arena_strdup(a, models);
        if (!list || !copy)
            return GP_ENOMEM;
        size_t k = 0;
        for (char *save, *t = strtok_r(copy, "|", &save); t && k < n;
             t = strtok_r(NULL, "|", &save))
            list[k++] = t;
        s->gpu_models = list;
        s->ngpu_models = k;
    }
    return GP_OK;
}

/* key == lit, lit a literal (its length known at compile time). */
#define KEY_IS(key, len, lit) ((len) == sizeof(lit) - 1 && memcmp((key), (lit), (len)) == 0)

/* The info's metadata: its members walked once (a look-up hashes its key,
 * ~150 instructions; the info reads a dozen of them), the annotations'
 * too; the labels, often many, by look-up. */
static void info_meta(const json_t *meta, struct gp_kube_pod_info *info)
{
    const char *key;
    size_t n;
    json_t *v;
    const json_t *ann = NULL;
    info->ns = info->name = info->uid = info->rv = "";
    json_object_keylen_foreach(mut(meta), key, n, v)
    {
        const char *sv = json_string_value(v);
        if (KEY_IS(key, n, "namespace"))
            info->ns = sv ? sv : "";
        else if (KEY_IS(key, n, "name"))
            info->name = sv ? sv : "";
        else if (KEY_IS(key, n, "uid"))
            info->uid = sv ? sv : "";
        else if (KEY_IS(key, n, "resourceVersion"))
            info->rv = sv ? sv : "";
        else if (KEY_IS(key, n, "deletionTimestamp"))
            info->terminating = !json_is_null(v);
        else if (KEY_IS(key, n, "labels"))
            info->group = str(v, "scheduling.x-k8s.io/pod-group");
        else if (KEY_IS(key, n, "annotations"))
            ann = v;
    }
    const char *gpus = NULL, *group = NULL;
    json_object_keylen_foreach(mut(ann), key, n, v)
    {
        const char *sv = json_string_value(v);
        if (KEY_IS(key, n, GP_KUBE_ANN_NODE))
            info->ann_node = sv;
        else if (KEY_IS(key, n, GP_KUBE_ANN_GPUS))
            gpus = sv;
        else if (KEY_IS(key, n, GP_KUBE_ANN_MIG))
            info->ann_mig = sv;
        else if (KEY_IS(key, n, GP_KUBE_ANN_PHASE))
            info->ann_phase = sv;
        else if (KEY_IS(key, n, "scheduling.k8s.io/group-name"))
            group = sv;
    }
    info->has_pick = gpus && gp_kube_pick_parse(gpus, &info->pick);
    if (!info->group)
        info->group = group;
}

/* The info's spec: nodeName, schedulerName, gates, claims. */
static void info_spec(const json_t *spec, struct gp_kube_pod_info *info)
{
    const char *node = str(spec, "nodeName");
    info->node_name = node && node[0] ? node : NULL;
    const char *sched = str(spec, "schedulerName");
    info->scheduler_name = sched && sched[0] ? sched : "default-scheduler";
    info->gated = json_array_size(json_object_get(spec, "schedulingGates")) > 0;
    size_t vi;
    json_t *vol;
    json_array_foreach(json_object_get(spec, "volumes"), vi, vol)
    {
        info->claims = info->claims || json_object_get(vol, "persistentVolumeClaim") ||
                       json_object_get(vol, "ephemeral");
    }
}

/* The info's status: ended, started. */
static void info_status(const json_t *status, struct gp_kube_pod_info *info)
{
    const char *phase = str(status, "phase");
    info->ended = phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    info->started = phase && strcmp(phase, "Running") == 0;
    size_t ci;
    json_t *cs;
    json_array_foreach(json_object_get(status, "containerStatuses"), ci, cs)
    {
        const json_t *state = json_object_get(cs, "state");
        info->started = info->started || json_object_get(state, "running") ||
                        json_object_get(state, "terminated");
    }
}

void gp_kube_pod_info_read(const json_t *pod, struct gp_kube_pod_info *info)
{
    memset(info, 0, sizeof *info);
    info_meta(json_object_get(pod, "metadata"), info);
    info_spec(json_object_get(pod, "spec"), info);
    info_status(json_object_get(pod, "status"), info);
}

void gp_kube_pod_info_reread(const json_t *pod, const json_t *old, struct gp_kube_pod_info *info)
{
    const json_t *spec = json_object_get(pod, "spec"), *status = json_object_get(pod, "status");
    bool same_spec = old && spec && spec == json_object_get(old, "spec");
    bool same_status = old && status && status == json_object_get(old, "status");
    struct gp_kube_pod_info was = *info;
    memset(info, 0, sizeof *info);
    info_meta(json_object_get(pod, "metadata"), info);
    if (same_spec) { /* one immutable value, alive in both versions: what it gave */
        info->node_name = was.node_name;
        info->scheduler_name = was.scheduler_name;
        info->gated = was.gated;
        info->claims = was.claims;
    } else {
        info_spec(spec, info);
    }
    if (same_status) {
        info->ended = was.ended;
        info->started = was.started;
    } else {
        info_status(status, info);
    }
}

/* The claims of the pod's persistentVolumeClaim volumes, "namespace/name"
 * (what kube-scheduler's NodeInfo counts in PVCRefCounts: an ephemeral
 * volume's claim is not counted, nor read by VolumeRestrictions); rwop is
 * the scheduler's to set (volumes.c), from the claim. */
static enum gp_err pod_claims(const json_t *pod, struct gp_arena *a, struct gp_pod_spec *s)
{
    const json_t *vols = json_object_get(json_object_get(pod, "spec"), "volumes");
    const char *ns = str(json_object_get(pod, "metadata"), "namespace");
    size_t n = 0, i;
    json_t *vol;
    json_array_foreach(vols, i, vol) n += json_object_get(vol, "persistentVolumeClaim") != NULL;
    if (n == 0)
        return GP_OK;
    struct gp_claim_use *c = gp_arena_alloc(a, n * sizeof *c);
    if (!c)
        return GP_ENOMEM;
    size_t k = 0;
    json_array_foreach(vols, i, vol)
    {
        const char *cn = str(json_object_get(vol, "persistentVolumeClaim"), "claimName");
        if (!json_object_get(vol, "persistentVolumeClaim"))
            continue;
        char key[600];
        snprintf(key, sizeof key, "%s/%s", ns && ns[0] ? ns : "default", cn ? cn : "");
        if (!(c[k].key = gp_arena_strdup(a, key)))
            return GP_ENOMEM;
        c[k++].rwop = false;
    }
    s->claims = c;
    s->nclaims = k;
    return GP_OK;
}

enum gp_err gp_kube_pod_read(const json_t *pod, struct gp_arena *a, struct gp_pod_spec *s,
                             struct gp_kube_pod_info *info, struct gp_diag *d)
{
    memset(s, 0, sizeof *s);
    gp_kube_pod_info_read(pod, info);
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    struct req r = {0, 0, 0, 0, NULL, 0, 0, 0, false};
    struct gp_kube_scalar_acc sc;
    sc.n = 0; /* (the rest is made as names come: most pods ask none) */
    enum gp_err err = pod_requests(spec, &r, &sc, d);
    if (err == GP_OK && sc.n)
        err = gp_kube_scalars_finish(&sc, a, s, d); /* objects_scalar.c */
    if (err != GP_OK)
        return err;
    s->name = gp_arena_printf(a, "%s/%s", info->ns, info->name);
    s->namespace_name = gp_arena_strdup(a, info->ns);
    s->cpu_milli = r.cpu_milli;
    s->mem_mib = r.mem_mib;
    s->gpu_count = (uint32_t)r.gpus;
    s->gpu_milli = r.gpus ? GP_GPU_MILLI : 0;
    s->gpu_resource = GP_GPU_RES_GPU;
    if (r.shared > 0) { /* as io/manifest_pod.c: replicas of renamed shared GPUs */
        s->gpu_count = (uint32_t)r.shared;
        s->gpu_milli = GP_GPU_MILLI;
        s->share_modes = 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS;
        s->gpu_resource = GP_GPU_RES_SHARED;
    }
    /* one container's most, where it is less than the pod's (0: the same) */
    int64_t one = r.shared > 0 ? r.shared_one : r.gpus_one;
    s->gpu_container_max = one < (int64_t)s->gpu_count && !r.mig ? (uint32_t)one : 0;
    if (r.mig > 0) { /* as io/manifest_pod.c: the share is the profile's compute of 7 slices */
        unsigned compute = 0;
        uint32_t mem = 0;
        gp_kube_mig_profile_info(r.profile, &compute, &mem);
        s->mig_profile = gp_arena_strdup(a, r.profile);
        s->gpu_count = (uint32_t)r.mig;
        s->gpu_milli = compute >= 7 || compute == 0 ? GP_GPU_MILLI : compute * GP_GPU_MILLI / 7;
        s->gpu_mem_mib = mem;
        s->share_modes = 1u << GP_SHARE_MIG;
    }
    json_t *prio = json_object_get(spec, "priority");
    s->priority = json_is_integer(prio) ? (int32_t)json_integer_value(prio) : 0;
    const char *pp = str(spec, "preemptionPolicy");
    s->preempt_never = pp && strcmp(pp, "Never") == 0;
    if ((err = pod_kv(json_object_get(spec, "nodeSelector"), a, &s->node_selector,
                      &s->nnode_selector)) != GP_OK ||
        (err = pod_kv(json_object_get(meta, "labels"), a, &s->labels, &s->nlabels)) != GP_OK ||
        (err = pod_tolerations(json_object_get(spec, "tolerations"), a, s)) != GP_OK ||
        (err = pod_claims(pod, a, s)) != GP_OK)
        return err == GP_ENOMEM ? gp_diag_set(d, err, "out of memory") : err;
    if ((err = gp_kube_pod_constraints_read(spec, a, s, d)) != GP_OK || /* objects_affinity.c */
        (err = gp_kube_pod_ports_read(spec, a, s, d)) != GP_OK)         /* objects_scalar.c */
        return err;
    const json_t *ann = json_object_get(meta, "annotations");
    err = pod_annotations(ann, a, s, d);
    return err == GP_OK ? gp_kube_pod_sharing_read(ann, s, d) : err; /* objects_share.c */
}

static bool condition_true(const json_t *status, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        if (str(c, "type") && strcmp(str(c, "type"), type) == 0)
            return str(c, "status") && strcmp(str(c, "status"), "True") == 0;
    }
    return false;
}

enum gp_err gp_kube_node_read(const json_t *node, struct gp_arena *a, struct gp_node_spec *s,
                              struct gp_kube_node_info *info, struct gp_diag *d)
{
    memset(s, 0, sizeof *s);
    memset(info, 0, sizeof *info);
    const json_t *meta = json_object_get(node, "metadata"), *spec = json_object_get(node, "spec");
    const json_t *status = json_object_get(node, "status");
    info->name = str(meta, "name") ? str(meta, "name") : "";
    s->name = gp_arena_strdup(a, info->name);
    const json_t *alloc = json_object_get(status, "allocatable");
    if (!alloc)
        alloc = json_object_get(status, "capacity");
    char b[32];
    const char *cpu = qty(json_object_get(alloc, "cpu"), b, sizeof b);
    if (cpu && !gp_units_cpu_milli(cpu, &s->cpu_milli))
        return gp_diag_set(d, GP_EINVALID, "node %s: status.allocatable.cpu: not a quantity",
                           info->name);
    const char *mem = qty(json_object_get(alloc, "memory"), b, sizeof b);
    if (mem && !gp_units_mem_mib(mem, &s->mem_mib))
        return gp_diag_set(d, GP_EINVALID, "node %s: status.allocatable.memory: not a quantity",
                           info->name);
    const char *gpus = qty(json_object_get(alloc, "nvidia.com/gpu"), b, sizeof b);
    /* nvidia.com/gpu counts devices: a GPU's replicas when it is shared,
     * and under MIG's single strategy each MIG device (NVIDIA's plugin
     * advertises them all as nvidia.com/gpu: 8 A100s of all-1g.10gb are
     * 56), so the bound is the node's GPUs times that */
    const char *strategy = str(json_object_get(meta, "labels"), "nvidia.com/mig.strategy");
    int64_t per_gpu = gp_kube_node_replicas(node), n = 0;
    if (strategy && strcmp(strategy, "single") == 0 && per_gpu < GP_MIG_MAX_INSTANCES)
        per_gpu = GP_MIG_MAX_INSTANCES;
    if (gpus && (!gp_units_uint(gpus, &n) || n > (int64_t)GP_MAX_GPUS_PER_NODE * per_gpu))
        return gp_diag_set(d, GP_EINVALID,
                           "node %s: status.allocatable.nvidia.com/gpu: \"%s\" is not a count "
                           "from 0 to %lld (%d GPUs of %lld devices each)",
                           info->name, gpus, (long long)(GP_MAX_GPUS_PER_NODE * per_gpu),
                           GP_MAX_GPUS_PER_NODE, (long long)per_gpu);
    s->gpu_count = (uint32_t)n;
    enum gp_err err = gp_kube_node_scalars_read(alloc, info->name, a, s, d); /* objects_scalar.c */
    if (err != GP_OK)
        return err;
    const json_t *labels = json_object_get(meta, "labels");
    if (pod_kv(labels, a, &s->labels, &s->nlabels) != GP_OK)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    const char *product = str(labels, "nvidia.com/gpu.product");
    if (n > 0)
        s->gpu_model = gp_arena_strdup(a, product ? product : "unknown");
    const char *gmem = str(labels, "nvidia.com/gpu.memory");
    int64_t mib;
    if (gmem && gp_units_uint(gmem, &mib) && mib <= UINT32_MAX)
        s->gpu_mem_mib = (uint32_t)mib;
    const char *pool = str(labels, "gpuplane.io/pool");
    s->pool = pool ? gp_arena_strdup(a, pool) : NULL;
    info->cordoned = json_is_true(json_object_get(spec, "unschedulable"));
    info->ready = condition_true(status, "Ready");
    info->schedulable = info->ready && !info->cordoned;
    size_t nt = json_array_size(json_object_get(spec, "taints")), i;
    if (nt || info->cordoned) {
        struct gp_taint *t = gp_arena_alloc(a, (nt + 1) * sizeof *t);
        if (!t)
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        bool has_cordon = false;
        json_t *v;
        json_array_foreach(json_object_get(spec, "taints"), i, v)
        {
            t[i].key = gp_arena_strdup(a, str(v, "key") ? str(v, "key") : "");
            t[i].value = str(v, "value") ? gp_arena_strdup(a, str(v, "value")) : NULL;
            t[i].effect = effect_of(str(v, "effect"));
            has_cordon = has_cordon || (strcmp(t[i].key, GP_KUBE_TAINT_UNSCHEDULABLE) == 0 &&
                                        t[i].effect == GP_EFFECT_NO_SCHEDULE);
        }
        /* TaintNodesByCondition: a cordoned node carries this taint (the
         * node lifecycle controller adds it; a Node read before it did is
         * given it here) */
        if (info->cordoned && !has_cordon)
            t[nt++] = (struct gp_taint){.key = GP_KUBE_TAINT_UNSCHEDULABLE,
                                        .effect = GP_EFFECT_NO_SCHEDULE};
        s->taints = t;
        s->ntaints = nt;
    }
    err = gp_kube_node_mig_read(node, a, s, info, d);                         /* objects_mig.c */
    return err == GP_OK ? gp_kube_node_share_read(node, a, s, info, d) : err; /* objects_share.c */
}

void gp_kube_pick_format(const struct gp_pick *pick, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    uint32_t seen = 0; /* MIG instances may share a GPU: each GPU once */
    for (uint32_t i = 0; i < pick->ngpus && off < size; i++) {
        if (seen >> pick->gpu[i] & 1)
            continue;
        seen |= 1u << pick->gpu[i];
        int w = snprintf(buf + off, size - off, "%s%u", off ? "," : "", pick->gpu[i]);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

bool gp_kube_pick_parse(const char *s, struct gp_pick *pick)
{
    memset(pick, 0, sizeof *pick);
    pick->mig_profile = -1;
    if (!s[0])
        return true;
    uint32_t seen = 0;
    const char *p = s;
    for (;;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p || g < 0 || g >= GP_MAX_GPUS_PER_NODE || (seen >> g & 1) ||
            (*end != ',' && *end != '\0'))
            return false;
        seen |= 1u << g;
        pick->gpu[pick->ngpus++] = (uint8_t)g;
        if (*end == '\0')
            return true;
        p = end + 1;
    }
}

void gp_kube_reasons_add(struct gp_kube_reasons *r, uint32_t count, const char *text)
{
    if (count == 0)
        return;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->item[i].text, text) == 0) {
            r->item[i].count += count; /* one histogram entry a reason */
            return;
        }
    if (r->n == GP_KUBE_REASONS_MAX)
        return;
    r->item[r->n].count = count;
    snprintf(r->item[r->n].text, sizeof r->item[r->n].text, "%s", text);
    r->n++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void gp_kube_reasons_format(const struct gp_kube_reasons *r, uint32_t nodes_total, char *buf,
                            size_t size)
{
    /* kube-scheduler's FitError.Error (pkg/scheduler/framework/types.go):
     * NoNodeAvailableMsg "0/%v nodes are available" + ":", then each
     * reason's "COUNT REASON" (sortReasonsHistogram), sorted as strings
     * and joined by ", ", in SeparatorFormat " %v." */
    char items[GP_KUBE_REASONS_MAX][sizeof r->item[0].text + 12];
    const char *sorted[GP_KUBE_REASONS_MAX];
    for (size_t i = 0; i < r->n; i++) {
        snprintf(items[i], sizeof items[i], "%u %s", r->item[i].count, r->item[i].text);
        sorted[i] = items[i];
    }
    if (r->n)
        qsort(sorted, r->n, sizeof *sorted, cmp_str);
    size_t off = (size_t)snprintf(buf, size, "0/%u nodes are available:", nodes_total);
    for (size_t i = 0; i < r->n && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : " ", sorted[i]);
    if (off < size && r->n)
        snprintf(buf + off, size - off, ".");
}

/* The reasons' words on the kube path where they are not the engine's
 * (the simulator's, model.h): the nodes' own reasons (cordon, taint,
 * readiness) are named node by node (sched_explain.c); these are the
 * words for a count given without its nodes. A nodeSelector and a
 * required node affinity are one reason, NodeAffinity's ErrReasonPod
 * (pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go). */
static const char *kube_text(enum gp_filter f)
{
    switch (f) {
    case GP_FILTER_SELECTOR:
    case GP_FILTER_NODE_AFFINITY:
        return "node(s) didn't match Pod's node affinity/selector";
    default:
        return gp_filter_text(f);
    }
}

void gp_kube_explain_text(const struct gp_explain *x, char *buf, size_t size)
{
    gp_kube_explain_text_as(x, GP_FILTER_COUNT, NULL, buf, size);
}

void gp_kube_explain_text_as(const struct gp_explain *x, enum gp_filter f_as, const char *text,
                             char *buf, size_t size)
{
    struct gp_kube_reasons r = {0};
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        gp_kube_reasons_add(&r, x->rejected[f],
                            f == (int)f_as && text ? text : kube_text((enum gp_filter)f));
    gp_kube_reasons_format(&r, x->nodes_total, buf, size);
}

void gp_kube_explain_add(char *buf, size_t size, uint32_t n, const char *text)
{
    unsigned total;
    int head = 0;
    if (n == 0 || sscanf(buf, "0/%u nodes are available:%n", &total, &head) != 1 || head == 0)
        return;
    /* the text read back into its reasons, then formatted again */
    char body[1024];
    snprintf(body, sizeof body, "%s", buf + head);
    size_t len = strlen(body);
    if (len && body[len - 1] == '.')
        body[--len] = '\0';
    struct gp_kube_reasons r = {0};
    for (char *p = body[0] == ' ' ? body + 1 : body; *p;) {
        char *sep = strstr(p, ", ");
        if (sep)
            *sep = '\0';
        char *end;
        unsigned long c = strtoul(p, &end, 10);
        if (end != p && *end == ' ')
            gp_kube_reasons_add(&r, (uint32_t)c, end + 1);
        if (!sep)
            break;
        p = sep + 2;
    }
    gp_kube_reasons_add(&r, n, text);
    gp_kube_reasons_format(&r, total, buf, size);
}

void gp_kube_mig_format(const struct gp_pick *pick, const struct gp_mig_model *m, char *buf,
                        size_t size)
{
    buf[0] = '\0';
    if (!m || pick->mig_profile < 0 || (size_t)pick->mig_profile >= m->nprofiles)
        return;
    int w = snprintf(buf, size, "%s:", m->profiles[pick->mig_profile].name);
    size_t off = w > 0 ? (size_t)w : 0;
    for (uint32_t i = 0; i < pick->ngpus && off < size; i++) {
        w = snprintf(buf + off, size - off, "%s%u@%u", i ? "," : "", pick->gpu[i],
                     pick->mig_start[i]);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

bool gp_kube_mig_parse(const char *s, const struct gp_mig_model *m, struct gp_pick *pick)
{
    memset(pick, 0, sizeof *pick);
    pick->mig_profile = -1;
    const char *colon = strchr(s, ':');
    if (!m || !colon || colon == s || (size_t)(colon - s) >= 64)
        return false;
    char name[64];
    memcpy(name, s, (size_t)(colon - s));
    name[colon - s] = '\0';
    int prof = gp_mig_profile_find(m, name);
    if (prof < 0)
        return false;
    const struct gp_mig_profile *pr = &m->profiles[prof];
    const char *p = colon + 1;
    for (;;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p || g < 0 || g >= GP_MAX_GPUS_PER_NODE || *end != '@')
            return false;
        p = end + 1;
        long st = strtol(p, &end, 10);
        if (end == p || st < 0 || st >= GP_MIG_MAX_SLICES || !(pr->start_mask >> st & 1) ||
            (*end != ',' && *end != '\0') || pick->ngpus == GP_MAX_GPUS_PER_NODE)
            return false;
        pick->gpu[pick->ngpus] = (uint8_t)g;
        pick->mig_start[pick->ngpus++] = (uint8_t)st;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    pick->mig_profile = (int8_t)prof;
    return true;
}
