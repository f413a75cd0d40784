/* manifest_pod.c - the pod spec of a manifest's object: its containers
 * and init containers (requests and limits of cpu, memory, nvidia.com/gpu,
 * nvidia.com/gpu.shared, nvidia.com/mig-<profile>), node selector,
 * tolerations and priority, and the gp_pod_spec built from them and the
 * annotations (GPU shares, models, sharing modes), with the checks that
 * need the whole pod. A new pod spec field is a row in pod_spec_fields
 * and its effect in gp_manifest_pod_finish. */
#include <stdio.h>
#include <string.h>

#include "engine/sharing.h"
#include "io/compat.h"
#include "io/manifest_internal.h"
#include "util/units.h"

/* One container's resources as written. */
struct resources {
    bool has_cpu, has_mem, has_gpu;
    int64_t cpu_milli, mem_mib, gpus;
    struct fy_node *gpu_node;
    int64_t shared, mig; /* nvidia.com/gpu.shared replicas, nvidia.com/mig-* instances */
};

/* One container being read: its requests and limits, and whether it is
 * an init container and a sidecar (restartPolicy: Always). */
struct container {
    struct manifest_obj *o;
    struct resources req, lim;
    bool init, sidecar;
};

/* What one container asks for, requests defaulted from limits. */
struct need {
    int64_t cpu_milli, mem_mib, gpus, shared, mig;
    bool sidecar;
};

/* --- containers ---------------------------------------------------------- */

/* Whether some GPU model has the MIG profile `name` ("1g.10gb"); also
 * its compute slices (the "1g") and memory (the "10gb"). */
static bool mig_profile_known(const char *name, unsigned *compute, uint32_t *mem_mib)
{
    for (size_t i = 0; i < gp_mig_nmodels; i++) {
        int q = gp_mig_profile_find(&gp_mig_models[i], name);
        if (q >= 0) {
            *compute = gp_mig_models[i].profiles[q].compute_slices;
            *mem_mib = gp_mig_models[i].profiles[q].memory_mib;
            return true;
        }
    }
    return false;
}

/* nvidia.com/mig-<profile>: a number of instances of one profile. */
static enum gp_err mig_resource(struct gp_yaml *y, struct fy_node *k, struct fy_node *val,
                                const char *profile, struct resources *r, struct manifest_obj *o)
{
    unsigned compute;
    uint32_t mem;
    if (!mig_profile_known(profile, &compute, &mem))
        return gp_yaml_fail(y, k, GP_EINVALID,
                            "no GPU model has the MIG profile \"%.40s\" (expected a profile of "
                            "data/mig-profiles.json, like nvidia.com/mig-1g.10gb)",
                            profile);
    if (o->mig_profile && strcmp(o->mig_profile, profile) != 0)
        return gp_yaml_fail(y, k, GP_EUNSUPPORTED,
                            "a second MIG profile in one pod (it already asks for %.40s); "
                            "gpuplane places MIG instances of one profile per pod",
                            o->mig_profile);
    const char *s;
    enum gp_err err = gp_yaml_text(y, val, "a number of MIG instances", &s);
    if (err == GP_OK && (!gp_units_uint(s, &r->mig) || r->mig > GP_MAX_GPUS_PER_NODE))
        err = gp_manifest_bad_value(y, val, "a whole number of MIG instances like 1");
    if (err != GP_OK)
        return err;
    if (!o->mig_profile && !(o->mig_profile = gp_arena_strdup(y->arena, profile)))
        return gp_manifest_oom(y);
    o->mig_node = val;
    o->mig_path = gp_manifest_path_copy(y);
    return GP_OK;
}

static enum gp_err resource_map(struct gp_yaml *y, struct fy_node *v, struct resources *r,
                                struct manifest_obj *o)
{
    if (!fy_node_is_mapping(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a mapping of resource quantities, got %s",
                            gp_yaml_describe(v));
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(v, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
        const char *key, *s;
        enum gp_err err = gp_yaml_text(y, k, "a resource name", &key);
        if (err != GP_OK)
            return err;
        struct gp_yaml_saved saved = gp_yaml_push_key(y, key, k);
        if (strcmp(key, "cpu") == 0) {
            err = gp_yaml_cpu_milli(y, val, &r->cpu_milli);
            r->has_cpu = true;
        } else if (strcmp(key, "memory") == 0) {
            err = gp_yaml_mem_mib(y, val, &r->mem_mib);
            r->has_mem = true;
        } else if (strcmp(key, "nvidia.com/gpu") == 0) {
            err = gp_yaml_text(y, val, "a whole number of GPUs", &s);
            if (err == GP_OK && (!gp_units_uint(s, &r->gpus) || r->gpus > 1000000))
                err = gp_manifest_bad_value(
                    y, val,
                    "a whole number of GPUs like 1 (for a share of one GPU use the "
                    "gpuplane.io/gpu-milli annotation)");
            r->has_gpu = true;
            r->gpu_node = val;
            if (err == GP_OK && r->gpus > 0) {
                o->gpu_node = val;
                o->gpu_path = gp_manifest_path_copy(y);
            }
        } else if (strcmp(key, "nvidia.com/gpu.shared") == 0) {
            err = gp_yaml_text(y, val, "a number of replicas", &s);
            if (err == GP_OK && (!gp_units_uint(s, &r->shared) || r->shared > 1000000))
                err = gp_manifest_bad_value(y, val,
                                            "a whole number of replicas of shared GPUs like 1");
            if (err == GP_OK && r->shared > 0) {
                o->shared_node = val;
                o->shared_path = gp_manifest_path_copy(y);
            }
        } else if (strncmp(key, "nvidia.com/mig-", 15) == 0) {
            err = mig_resource(y, k, val, key + 15, r, o);
        }
        gp_yaml_pop(y, saved);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static enum gp_err res_requests(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct container *c = obj;
    return resource_map(y, v, &c->req, c->o);
}

static enum gp_err res_limits(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct container *c = obj;
    return resource_map(y, v, &c->lim, c->o);
}

static const struct gp_yaml_field resources_fields[] = {
    GP_YCUSTOM("requests", res_requests, 0),
    GP_YCUSTOM("limits", res_limits, 0),
};

static enum gp_err container_resources(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, resources_fields,
                          sizeof resources_fields / sizeof resources_fields[0], obj, false);
}

/* restartPolicy: Always makes an init container a sidecar; an app
 * container may not set it (the ContainerRestartRules gate is off by
 * default, so the API server refuses it). */
static enum gp_err container_restart(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct container *c = obj;
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a restart policy", &s);
    if (err != GP_OK)
        return err;
    if (!c->init)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "may not be set for non-init containers (a sidecar is an init "
                            "container with restartPolicy: Always)");
    if (strcmp(s, "Always") != 0)
        return gp_manifest_bad_value(y, v, "Always (the only restart policy of an init container)");
    c->sidecar = true;
    return GP_OK;
}

/* image: an app container's CUDA, when data/cuda-images.json knows it
 * (docs/compat.md); the pod needs the largest. Other images say nothing. */
static enum gp_err container_image(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct container *c = obj;
    const char *ref;
    enum gp_err err = gp_yaml_text(y, v, "a single value", &ref);
    struct gp_image_info info;
    struct gp_compat_result r;
    if (err != GP_OK || c->init || gp_compat_image(ref, &info) != GP_IMAGE_FOUND ||
        !gp_compat_check(&info.cuda, 0, GP_GPU_UNKNOWN, false, &r))
        return err;
    if (r.native_min > c->o->image_driver_min) {
        char ver[24];
        gp_compat_cuda_text(&info.cuda, ver, sizeof ver);
        c->o->image_driver_min = r.native_min;
        if (!(c->o->image_cuda = gp_arena_strdup(y->arena, ver)))
            return gp_manifest_oom(y);
    }
    return GP_OK;
}

static const struct gp_yaml_field container_fields[] = {
    GP_YCUSTOM("resources", container_resources, 0),
    GP_YCUSTOM("restartPolicy", container_restart, 0),
    GP_YCUSTOM("image", container_image, 0),
};

/* Reads one container: a request defaults to its limit, per resource, as
 * the API server's defaulting does. */
static enum gp_err read_container(struct gp_yaml *y, struct fy_node *item, struct manifest_obj *o,
                                  bool init, struct need *n)
{
    struct container c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.init = init;
    enum gp_err err = gp_yaml_object(
        y, item, container_fields, sizeof container_fields / sizeof container_fields[0], &c, false);
    if (err != GP_OK)
        return err;
    if (c.req.has_gpu && c.lim.has_gpu && c.req.gpus != c.lim.gpus) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "resources", NULL);
        err = gp_yaml_fail(y, c.req.gpu_node, GP_EINVALID,
                           "requests and limits of nvidia.com/gpu differ (%lld and %lld); "
                           "Kubernetes needs them equal",
                           (long long)c.req.gpus, (long long)c.lim.gpus);
        gp_yaml_pop(y, s);
        return err;
    }
    n->cpu_milli = c.req.has_cpu ? c.req.cpu_milli : c.lim.has_cpu ? c.lim.cpu_milli : 0;
    n->mem_mib = c.req.has_mem ? c.req.mem_mib : c.lim.has_mem ? c.lim.mem_mib : 0;
    n->gpus = c.req.has_gpu ? c.req.gpus : c.lim.has_gpu ? c.lim.gpus : 0;
    /* extended resources: a request must equal its limit; either says it */
    n->shared = c.req.shared > c.lim.shared ? c.req.shared : c.lim.shared;
    n->mig = c.req.mig > c.lim.mig ? c.req.mig : c.lim.mig;
    n->sidecar = c.sidecar;
    return GP_OK;
}

/* Each is at most 1e15 (units.h), so sums of int64 cannot overflow before
 * this check trips. */
static enum gp_err check_total(struct gp_yaml *y, struct fy_node *item,
                               const struct manifest_obj *o)
{
    for (int k = 0; k < GP_PODREQ_COUNT; k++)
        if (o->req.sum[k] > 1e15 || o->req.side[k] > 1e15 || o->req.init[k] > 1e15)
            return gp_yaml_fail(y, item, GP_EINVALID, "the pod's total resources are too large");
    return GP_OK;
}

static void need_vector(const struct need *n, int64_t v[GP_PODREQ_COUNT])
{
    v[GP_PODREQ_CPU_MILLI] = n->cpu_milli;
    v[GP_PODREQ_MEM_MIB] = n->mem_mib;
    v[GP_PODREQ_GPUS] = n->gpus;
    v[GP_PODREQ_SHARED] = n->shared;
    v[GP_PODREQ_MIG] = n->mig;
}

static enum gp_err container_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct manifest_obj *o = ctx;
    struct need n = {0};
    (void)i;
    enum gp_err err = read_container(y, item, o, false, &n);
    if (err != GP_OK)
        return err;
    int64_t v[GP_PODREQ_COUNT];
    need_vector(&n, v);
    gp_podreq_app(&o->req, v);
    return check_total(y, item, o);
}

/* An init container, in order: Kubernetes' PodRequests with sidecars
 * (io/podreq.h), for every resource alike - a sidecar's GPUs, shared
 * replicas and MIG instances run beside the app containers' and add to
 * them. */
static enum gp_err init_container_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct manifest_obj *o = ctx;
    struct need n = {0};
    (void)i;
    enum gp_err err = read_container(y, item, o, true, &n);
    if (err != GP_OK)
        return err;
    int64_t v[GP_PODREQ_COUNT];
    need_vector(&n, v);
    gp_podreq_init(&o->req, v, n.sidecar);
    return check_total(y, item, o);
}

static enum gp_err spec_containers(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    if (fy_node_is_sequence(v) && fy_node_sequence_item_count(v) == 0)
        return gp_yaml_fail(y, v, GP_EINVALID, "expected at least one container");
    return gp_yaml_list(y, v, container_item, obj);
}

static enum gp_err spec_init_containers(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_list(y, v, init_container_item, obj);
}

/* --- scheduling constraints ---------------------------------------------- */

static enum gp_err spec_node_selector(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    o->selector_node = v;
    o->selector_path = gp_manifest_path_copy(y);
    return gp_yaml_kv_map(y, v, true, &o->selector, &o->nselector);
}

/* A toleration as written, checked as Kubernetes does. */
struct toleration_in {
    const char *key, *op, *value, *effect;
};

static enum gp_err tol_text(struct gp_yaml *y, struct fy_node *v, const char **out)
{
    return gp_yaml_text(y, v, "a string", out);
}

static enum gp_err tol_key(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return tol_text(y, v, &((struct toleration_in *)obj)->key);
}

static enum gp_err tol_op(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct toleration_in *t = obj;
    enum gp_err err = tol_text(y, v, &t->op);
    if (err == GP_OK && strcmp(t->op, "Equal") != 0 && strcmp(t->op, "Exists") != 0)
        err = gp_manifest_bad_value(y, v, "Equal or Exists");
    return err;
}

static enum gp_err tol_value(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return tol_text(y, v, &((struct toleration_in *)obj)->value);
}

static enum gp_err tol_effect(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct toleration_in *t = obj;
    enum gp_err err = tol_text(y, v, &t->effect);
    if (err == GP_OK && *t->effect && strcmp(t->effect, "NoSchedule") != 0 &&
        strcmp(t->effect, "PreferNoSchedule") != 0 && strcmp(t->effect, "NoExecute") != 0)
        err = gp_manifest_bad_value(y, v,
                                    "NoSchedule, PreferNoSchedule or NoExecute (or none for all)");
    return err;
}

static const struct gp_yaml_field toleration_fields[] = {
    GP_YCUSTOM("key", tol_key, 0),
    GP_YCUSTOM("operator", tol_op, 0),
    GP_YCUSTOM("value", tol_value, 0),
    GP_YCUSTOM("effect", tol_effect, 0),
    {"tolerationSeconds", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err toleration_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct manifest_obj *o = ctx;
    struct toleration_in in = {"", "Equal", "", ""};
    enum gp_err err =
        gp_yaml_object(y, item, toleration_fields,
                       sizeof toleration_fields / sizeof toleration_fields[0], &in, false);
    if (err != GP_OK)
        return err;
    bool exists = strcmp(in.op, "Exists") == 0;
    if (exists && *in.value)
        return gp_yaml_fail(y, item, GP_EINVALID, "value must be empty when operator is Exists");
    if (!*in.key && !exists)
        return gp_yaml_fail(y, item, GP_EINVALID, "an empty key needs operator Exists");
    if (*in.key && !gp_yaml_qualified_name_ok(in.key))
        return gp_yaml_fail(y, item, GP_EINVALID,
                            "key: expected a taint key ([prefix/]name), got \"%.80s\"", in.key);
    struct gp_toleration *t = &o->tolerations[i];
    t->key = *in.key ? in.key : NULL;
    t->value = in.value;
    t->op_exists = exists;
    t->any_effect = !*in.effect;
    t->effect = strcmp(in.effect, "NoExecute") == 0          ? GP_EFFECT_NO_EXECUTE
                : strcmp(in.effect, "PreferNoSchedule") == 0 ? GP_EFFECT_PREFER_NO_SCHEDULE
                                                             : GP_EFFECT_NO_SCHEDULE;
    o->ntolerations = i + 1;
    return GP_OK;
}

static enum gp_err spec_tolerations(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, toleration_item, o); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n <= 0)
        return GP_OK;
    o->tolerations = gp_arena_alloc(y->arena, (size_t)n * sizeof *o->tolerations);
    if (!o->tolerations)
        return gp_manifest_oom(y);
    return gp_yaml_list(y, v, toleration_item, o);
}

/* overhead: what the pod's sandbox costs beyond its containers (set by
 * a RuntimeClass's admission), added to the pod's request. */
static enum gp_err spec_overhead(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    struct resources r;
    memset(&r, 0, sizeof r);
    void *it = NULL;
    struct fy_node_pair *p;
    while (fy_node_is_mapping(v) && (p = fy_node_mapping_iterate(v, &it)) != NULL) {
        const char *key;
        struct fy_node *k = fy_node_pair_key(p);
        enum gp_err err = gp_yaml_text(y, k, "a resource name", &key);
        if (err != GP_OK)
            return err;
        if (strcmp(key, "cpu") != 0 && strcmp(key, "memory") != 0 &&
            strcmp(key, "ephemeral-storage") != 0 && strncmp(key, "hugepages-", 10) != 0) {
            struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
            err = gp_yaml_fail(y, k, GP_EINVALID,
                               "expected cpu or memory (a pod's overhead is its sandbox's, not "
                               "a device's)");
            gp_yaml_pop(y, s);
            return err;
        }
    }
    enum gp_err err = resource_map(y, v, &r, o);
    o->over_cpu_milli = r.cpu_milli;
    o->over_mem_mib = r.mem_mib;
    return err;
}

/* "FILE:LINE:COL: PATH" of node v at the current path, for a message made
 * once the whole workload is read. */
static const char *here(struct gp_yaml *y, struct fy_node *v)
{
    int line = y->line, col = y->col;
    gp_yaml_node_mark(v, &line, &col);
    const char *s = gp_arena_printf(y->arena, "%s:%d:%d: %s", y->name, line, col, y->path);
    return s ? s : "";
}

static enum gp_err spec_priority(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    int64_t x;
    enum gp_err err = gp_yaml_int(y, v, -(int64_t)GP_MANIFEST_INT32_LIMIT - 1,
                                  (int64_t)GP_MANIFEST_INT32_LIMIT, &x);
    if (err != GP_OK)
        return err;
    o->item.pod.priority = (int32_t)x;
    o->item.has_priority = true;
    o->item.priority_at = here(y, v);
    return GP_OK;
}

static enum gp_err spec_priority_class(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    enum gp_err err = gp_yaml_string(y, v, &o->item.priority_class);
    if (err == GP_OK)
        o->item.priority_class_at = here(y, v);
    return err;
}

/* Reads "PreemptLowerPriority" or "Never" as GP_PREEMPT_*. */
enum gp_err gp_manifest_preemption(struct gp_yaml *y, struct fy_node *v, uint8_t *out)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a preemption policy", &s);
    if (err == GP_OK && strcmp(s, "PreemptLowerPriority") != 0 && strcmp(s, "Never") != 0)
        err = gp_manifest_bad_value(y, v, "PreemptLowerPriority or Never");
    if (err == GP_OK)
        *out = strcmp(s, "Never") == 0 ? GP_PREEMPT_NEVER : GP_PREEMPT_LOWER;
    return err;
}

static enum gp_err spec_preemption(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    enum gp_err err = gp_manifest_preemption(y, v, &o->item.preemption);
    if (err == GP_OK)
        o->item.preemption_at = here(y, v);
    return err;
}

static const struct gp_yaml_field pod_spec_fields[] = {
    GP_YCUSTOM("containers", spec_containers, GP_YF_REQUIRED),
    GP_YCUSTOM("initContainers", spec_init_containers, 0),
    GP_YCUSTOM("nodeSelector", spec_node_selector, 0),
    GP_YCUSTOM("tolerations", spec_tolerations, 0),
    GP_YCUSTOM("overhead", spec_overhead, 0),
    GP_YCUSTOM("priority", spec_priority, 0),
    GP_YCUSTOM("priorityClassName", spec_priority_class, 0),
    GP_YCUSTOM("preemptionPolicy", spec_preemption, 0),
    GP_YCUSTOM("affinity", gp_manifest_affinity, 0),
    GP_YCUSTOM("topologySpreadConstraints", gp_manifest_spread, 0),
};

enum gp_err gp_manifest_pod_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, pod_spec_fields, sizeof pod_spec_fields / sizeof pod_spec_fields[0],
                          obj, false);
}

/* --- building the pod ---------------------------------------------------- */

/* The pod's CPU, memory and GPU request: whole GPUs, a share (milli or
 * memory), a shared replica or MIG instances, and the sharing modes it
 * accepts. */
static enum gp_err finish_resources(struct gp_yaml *y, struct manifest_obj *o,
                                    const struct manifest_hints *h)
{
    struct gp_pod_spec *pod = &o->item.pod;
    char detail[160];

    /* Kubernetes' PodRequests (io/podreq.h): the larger of the app
     * containers' and sidecars' sum and the largest init container's
     * need, then the overhead */
    pod->cpu_milli = gp_podreq_total(&o->req, GP_PODREQ_CPU_MILLI) + o->over_cpu_milli;
    pod->mem_mib = gp_podreq_total(&o->req, GP_PODREQ_MEM_MIB) + o->over_mem_mib;
    int64_t gpus = gp_podreq_total(&o->req, GP_PODREQ_GPUS);
    int64_t shared = gp_podreq_total(&o->req, GP_PODREQ_SHARED);
    int64_t mig = gp_podreq_total(&o->req, GP_PODREQ_MIG);
    if (gpus > GP_MAX_GPUS_PER_NODE) {
        snprintf(detail, sizeof detail,
                 " (the pod asks for %lld GPUs in all; a node has at most %d)", (long long)gpus,
                 GP_MAX_GPUS_PER_NODE);
        if (!o->gpu_path)
            return gp_yaml_fail(y, NULL, GP_EINVALID, "too many GPUs for one node%s", detail);
        return gp_manifest_fail_at(y, o->gpu_path, o->gpu_node, "too many GPUs for one node",
                                   detail);
    }
    pod->gpu_count = (uint32_t)gpus;
    pod->gpu_milli = gpus > 0 ? GP_GPU_MILLI : 0;
    if ((mig > 0 || shared > 0) && gpus > 0)
        return gp_manifest_fail_at(y, o->gpu_path, o->gpu_node, "cannot be combined with",
                                   mig > 0 ? " nvidia.com/mig-* in one pod"
                                           : " nvidia.com/gpu.shared in one pod");
    if (mig > 0 && shared > 0)
        return gp_manifest_fail_at(y, o->mig_path, o->mig_node, "cannot be combined with",
                                   " nvidia.com/gpu.shared in one pod");
    if (mig > 0 && (h->has_gpu_milli || h->has_gpu_mem))
        return gp_manifest_fail_at(
            y, o->mig_path, o->mig_node, "cannot be combined with",
            " the gpuplane.io/gpu-milli or gpu-memory annotations (a MIG instance's "
            "share is its profile's)");
    if (h->has_gpu_milli) {
        if (gpus > 1) {
            snprintf(detail, sizeof detail,
                     " with nvidia.com/gpu: %lld (a share is part of one GPU)", (long long)gpus);
            return gp_manifest_fail_at(y, h->milli_path, h->milli_node, "cannot be combined",
                                       detail);
        }
        pod->gpu_count = 1;
        pod->gpu_milli = h->gpu_milli;
    }
    if (h->has_gpu_mem) {
        pod->gpu_mem_mib = h->gpu_mem_mib;
        if (pod->gpu_count == 0)
            pod->gpu_count = 1; /* a share of one GPU by memory alone: gpu_milli stays 0 */
    }
    if (shared > 0) { /* replicas of renamed time-sliced or MPS GPUs */
        if (shared > GP_MAX_GPUS_PER_NODE) {
            snprintf(detail, sizeof detail, " (it asks for %lld in all; a pod takes at most %d)",
                     (long long)shared, GP_MAX_GPUS_PER_NODE);
            return gp_manifest_fail_at(y, o->shared_path, o->shared_node,
                                       "too many replicas for one pod", detail);
        }
        if (h->has_gpu_milli && shared > 1)
            return gp_manifest_fail_at(y, o->shared_path, o->shared_node,
                                       "more than one replica cannot be combined with",
                                       " gpuplane.io/gpu-milli (a share is part of one GPU)");
        pod->gpu_count = (uint32_t)shared;
        if (!h->has_gpu_milli)
            pod->gpu_milli = GP_GPU_MILLI;
        pod->share_modes = 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS;
        pod->gpu_resource = GP_GPU_RES_SHARED;
    }
    if (pod->gpu_count > 0 && gpus == 0 && shared == 0 && mig == 0)
        pod->gpu_resource = GP_GPU_RES_NONE; /* a share by gpuplane's annotations alone */
    /* the most one container asks, where less than the pod's (0: the
     * same): failRequestsGreaterThanOne checks each container's request */
    int64_t one = gp_podreq_container_max(&o->req, shared > 0 ? GP_PODREQ_SHARED : GP_PODREQ_GPUS);
    if (mig == 0 && one < (int64_t)pod->gpu_count)
        pod->gpu_container_max = (uint32_t)one;
    if (mig > GP_MAX_GPUS_PER_NODE) {
        snprintf(detail, sizeof detail, " (it asks for %lld in all; a pod takes at most %d)",
                 (long long)mig, GP_MAX_GPUS_PER_NODE);
        return gp_manifest_fail_at(y, o->mig_path, o->mig_node,
                                   "too many MIG instances for one pod", detail);
    }
    if (mig > 0) { /* its share for quotas: the profile's compute of 7 slices */
        unsigned compute = 0;
        uint32_t mem = 0;
        mig_profile_known(o->mig_profile, &compute, &mem);
        pod->gpu_count = (uint32_t)mig;
        pod->gpu_milli = compute >= 7 ? GP_GPU_MILLI : compute * GP_GPU_MILLI / 7;
        pod->gpu_mem_mib = mem;
        pod->mig_profile = o->mig_profile;
        pod->share_modes = 1u << GP_SHARE_MIG;
    }
    if (h->has_sharing) {
        if (pod->gpu_count == 0)
            return gp_manifest_fail_at(y, h->sharing_path, h->sharing_node,
                                       "sharing modes for a pod that asks for no GPU", "");
        uint8_t modes = pod->share_modes ? pod->share_modes & h->share_modes : h->share_modes;
        if (!modes)
            return gp_manifest_fail_at(
                y, h->sharing_path, h->sharing_node, "allows no mode the pod's GPU request can use",
                " (nvidia.com/gpu.shared needs timeslice or mps, nvidia.com/mig-* mig)");
        pod->share_modes = modes;
    }
    return GP_OK;
}

/* A label the controllers put on every pod they make, unless the
 * template has it: a Job's pods carry its name (the Job controller's
 * batch.kubernetes.io/job-name and job-name), a Deployment's the
 * pod-template-hash of their ReplicaSet (here a hash of the
 * Deployment's namespace and name: one per Deployment, as one revision). */
static enum gp_err controller_labels(struct gp_yaml *y, struct manifest_obj *o, struct gp_kv *kv,
                                     size_t *n)
{
    const struct gp_item *it = &o->item;
    const char *keys[2] = {NULL, NULL}, *value = it->name;
    if (it->kind == GP_ITEM_JOB) {
        keys[0] = "batch.kubernetes.io/job-name";
        keys[1] = "job-name";
    } else if (it->kind == GP_ITEM_DEPLOYMENT) {
        uint32_t h = 2166136261u;
        for (const char *s = o->ns[0] ? o->ns[0] : "default"; *s; s++)
            h = (h ^ (unsigned char)*s) * 16777619u;
        h = (h ^ '/') * 16777619u;
        for (const char *s = it->name; *s; s++)
            h = (h ^ (unsigned char)*s) * 16777619u;
        value = gp_arena_printf(y->arena, "%08x", (unsigned)h);
        if (!value)
            return gp_manifest_oom(y);
        keys[0] = "pod-template-hash";
    }
    for (size_t k = 0; k < 2 && keys[k]; k++) {
        bool have = false;
        for (size_t i = 0; i < *n && !have; i++)
            have = strcmp(kv[i].key, keys[k]) == 0;
        if (!have) {
            kv[*n].key = keys[k];
            kv[(*n)++].value = value;
        }
    }
    return GP_OK;
}

/* What other pods' affinity and spreading see of this one: its namespace
 * (the object's; "default" when none) and labels (a Pod's own, else its
 * template's, with the controller's), and its own constraints, their
 * matchLabelKeys merged now that its labels are known. */
static enum gp_err finish_identity(struct gp_yaml *y, struct manifest_obj *o)
{
    struct gp_pod_spec *pod = &o->item.pod;
    int level = o->item.kind == GP_ITEM_POD ? 0 : 1;
    size_t n = o->nlabels[level];
    struct gp_kv *kv = gp_arena_alloc(y->arena, (n + 2) * sizeof *kv);
    if (!kv)
        return gp_manifest_oom(y);
    if (n)
        memcpy(kv, o->labels[level], n * sizeof *kv);
    enum gp_err err = controller_labels(y, o, kv, &n);
    if (err != GP_OK)
        return err;
    pod->labels = n ? kv : NULL;
    pod->nlabels = n;
    pod->namespace_name = o->ns[0];
    err = gp_manifest_label_keys_apply(y, o, pod->labels, pod->nlabels);
    pod->constraints = o->cons;
    return err;
}

/* Where the pod may go: the GPU models it allows (the annotation and
 * nodeSelector nvidia.com/gpu.product, whose value is the model with
 * "-SHARED" on shared GPUs that are not renamed: the model is the value less
 * that suffix, the selector keeps it), its node selector and tolerations. */
static enum gp_err finish_placement(struct gp_yaml *y, struct manifest_obj *o,
                                    const struct manifest_hints *h)
{
    struct gp_pod_spec *pod = &o->item.pod;
    char detail[160];

    const char *product = NULL;
    for (size_t i = 0; i < o->nselector; i++)
        if (strcmp(o->selector[i].key, "nvidia.com/gpu.product") == 0)
            product = o->selector[i].value;
    if (product && pod->gpu_count > 0) {
        size_t n = gp_sharing_gfd_model_len(product);
        if (product[n] && !(product = gp_arena_printf(y->arena, "%.*s", (int)n, product)))
            return gp_manifest_oom(y);
    }
    if (h->has_models) {
        if (pod->gpu_count == 0)
            return gp_manifest_fail_at(y, h->models_path, h->models_node,
                                       "a GPU model constraint on a pod that asks for no GPU", "");
        pod->gpu_models = h->models;
        pod->ngpu_models = h->nmodels;
    }
    if (product && pod->gpu_count > 0) {
        bool allowed = !h->has_models;
        for (size_t i = 0; i < h->nmodels; i++)
            allowed |= strcmp(h->models[i], product) == 0;
        if (!allowed) {
            snprintf(detail, sizeof detail, " %.80s", product);
            return gp_manifest_fail_at(
                y, h->models_path, h->models_node,
                "does not allow the model of nodeSelector nvidia.com/gpu.product:", detail);
        }
        const char **one = gp_arena_alloc(y->arena, sizeof *one);
        if (!one)
            return gp_manifest_oom(y);
        one[0] = product;
        pod->gpu_models = one;
        pod->ngpu_models = 1;
    }
    pod->node_selector = o->selector;
    pod->nnode_selector = o->nselector;
    pod->tolerations = o->tolerations;
    pod->ntolerations = o->ntolerations;
    /* its CUDA: the annotation, else its images' (docs/compat.md) */
    if (h->has_cuda) {
        if (pod->gpu_count == 0)
            return gp_manifest_fail_at(y, h->cuda_path, h->cuda_node,
                                       "a CUDA version on a pod that asks for no GPU", "");
        pod->cuda_driver_min = h->cuda_driver_min;
        pod->cuda_version = h->cuda;
    } else if (o->image_driver_min && pod->gpu_count > 0) {
        pod->cuda_driver_min = o->image_driver_min;
        pod->cuda_version = o->image_cuda;
    }
    return finish_identity(y, o);
}

enum gp_err gp_manifest_pod_finish(struct gp_yaml *y, struct manifest_obj *o,
                                   const struct manifest_hints *h)
{
    o->item.pod.name = o->item.name;
    enum gp_err err = finish_resources(y, o, h);
    if (err == GP_OK)
        err = finish_placement(y, o, h);
    return err;
}
