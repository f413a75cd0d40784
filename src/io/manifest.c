/* manifest.c - the Kubernetes manifest reader: a YAML (or JSON) stream of
 * Pods, Deployments and Jobs (or a List of them) with gpuplane and
 * simulation annotations, read into workload items, with the PodGroups
 * that make gangs and the Queues (gpuplane's or Volcano's) pods join. Fields Kubernetes
 * allows and we do not use are skipped; the fields we read are checked
 * for type and units; unknown gpuplane.io/ and sim.gpuplane.io/
 * annotations are errors, so that a typo is never silently ignored. */
#include <math.h>
#include <string.h>

#include "engine/sharing.h"
#include "io/workload.h"
#include "io/yaml_walk.h"
#include "util/units.h"

/* Kubernetes defaults. */
#define JOB_BACKOFF_LIMIT_DEFAULT 6
#define INT32_LIMIT               2147483647.0

/* The gpuplane and simulation annotations of one metadata block. */
struct hints {
    bool has_arrival, has_duration, has_repeat, has_interarrival, has_failure, has_retries;
    bool has_gpu_milli, has_gpu_mem, has_models, has_failure_rate, has_checkpoint, has_sharing;
    double arrival_s, failure_rate_per_s, checkpoint_s;
    struct gp_dist duration, interarrival;
    uint32_t repeat, retries, gpu_milli, gpu_mem_mib;
    uint8_t share_modes; /* gpuplane.io/sharing: bits 1 << enum gp_share_mode */
    double failure_prob;
    const char *const *models;
    size_t nmodels;
    /* where each was written, for errors found when they are combined */
    const char *retries_path, *milli_path, *models_path, *sharing_path;
    struct fy_node *retries_node, *milli_node, *models_node, *sharing_node;
};

/* One container's resources as written. */
struct resources {
    bool has_cpu, has_mem, has_gpu;
    int64_t cpu_milli, mem_mib, gpus;
    struct fy_node *gpu_node;
    int64_t shared, mig; /* nvidia.com/gpu.shared replicas, nvidia.com/mig-* instances */
};

/* One object being read. level 0 is the object's metadata, 1 the pod
 * template's; what the template says wins. */
struct obj {
    struct gp_workload *w;
    struct gp_item item;
    int level;
    struct hints h[2];
    /* the queue named by gpuplane.io/queue, by Kueue's label and by
     * Volcano's annotation, in that order of precedence */
    const char *queue[2], *kueue[2], *vqueue[2];
    const char *group[2]; /* the PodGroup named by a label or annotation */
    uint32_t deadline_s;  /* Job spec.activeDeadlineSeconds; 0 = none */
    /* the pod spec, summed over containers, max over init containers */
    int64_t cpu_milli, mem_mib, gpus;
    int64_t init_cpu_milli, init_mem_mib, init_gpus;
    struct fy_node *gpu_node; /* the last nvidia.com/gpu seen, for errors */
    const char *gpu_path;
    /* shared replicas and MIG instances (of one profile), summed over the
     * containers; where the last was written */
    int64_t shared, mig;
    const char *mig_profile;
    struct fy_node *shared_node, *mig_node;
    const char *shared_path, *mig_path;
    const struct gp_kv *selector;
    size_t nselector;
    struct fy_node *selector_node;
    const char *selector_path;
    struct gp_toleration *tolerations;
    size_t ntolerations;
};

struct container {
    struct obj *o;
    struct resources req, lim;
};

static enum gp_err oom(struct gp_yaml *y)
{
    return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
}

/* Remembers the current path in the arena, for a later error. */
static const char *path_copy(struct gp_yaml *y)
{
    const char *p = gp_arena_strdup(y->arena, y->path);
    return p ? p : "";
}

/* Fails at a node with the path it was read under. */
static enum gp_err fail_at(struct gp_yaml *y, const char *path, struct fy_node *n, const char *msg,
                           const char *detail)
{
    gp_yaml_set_root(y, path);
    return gp_yaml_fail(y, n, GP_EINVALID, "%s%s", msg, detail);
}

/* --- annotations --------------------------------------------------------- */

static struct hints *hints_of(void *obj)
{
    struct obj *o = obj;
    return &o->h[o->level];
}

static enum gp_err bad_value(struct gp_yaml *y, struct fy_node *v, const char *expected)
{
    char q[80];
    return gp_yaml_fail(y, v, GP_EINVALID, "expected %s, got \"%s\"", expected,
                        gp_yaml_quote(v, q, sizeof q));
}

static enum gp_err ann_arrival(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && (!gp_units_duration_s(s, &h->arrival_s) || h->arrival_s > 1e9))
        err = bad_value(y, v, "a duration from the start like 90s, 15m or 2h30m");
    h->has_arrival = err == GP_OK;
    return err;
}

#define DIST_EXPECTED                                                                              \
    "a duration or distribution like 30m, exp(30m), uniform(10m,2h) or lognormal(20m,1.0)"

static enum gp_err ann_duration(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && !gp_dist_parse(s, &h->duration))
        err = bad_value(y, v, DIST_EXPECTED);
    h->has_duration = err == GP_OK;
    return err;
}

static enum gp_err ann_interarrival(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && !gp_dist_parse(s, &h->interarrival))
        err = bad_value(y, v, DIST_EXPECTED);
    h->has_interarrival = err == GP_OK;
    return err;
}

/* An integer annotation in [min, max]; quoted or not. */
static enum gp_err ann_uint(struct gp_yaml *y, struct fy_node *v, int64_t min, int64_t max,
                            const char *expected, uint32_t *out)
{
    const char *s;
    int64_t n;
    enum gp_err err = gp_yaml_text(y, v, "an integer", &s);
    if (err == GP_OK && (!gp_units_uint(s, &n) || n < min || n > max))
        err = bad_value(y, v, expected);
    if (err == GP_OK)
        *out = (uint32_t)n;
    return err;
}

static enum gp_err ann_repeat(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    enum gp_err err = ann_uint(y, v, 1, GP_WORKLOAD_MAX_REPEAT,
                               "a number of submissions from 1 to 10000000", &h->repeat);
    h->has_repeat = err == GP_OK;
    return err;
}

static enum gp_err ann_retries(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    enum gp_err err =
        ann_uint(y, v, 0, 1000000, "a number of retries from 0 to 1000000", &h->retries);
    h->has_retries = err == GP_OK;
    h->retries_node = v;
    h->retries_path = path_copy(y);
    return err;
}

static enum gp_err ann_failure(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a probability", &s);
    if (err == GP_OK &&
        (!gp_units_number(s, &h->failure_prob) || !(h->failure_prob >= 0 && h->failure_prob <= 1)))
        err = bad_value(y, v, "a probability from 0 to 1 like 0.05");
    h->has_failure = err == GP_OK;
    return err;
}

/* "0.1/h": a number of failures per second, minute, hour or day. */
static enum gp_err ann_failure_rate(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a rate", &s);
    if (err != GP_OK)
        return err;
    const char *slash = strchr(s, '/');
    double per = 0, n;
    if (slash) {
        const char *u = slash + 1;
        per = strcmp(u, "s") == 0   ? 1
              : strcmp(u, "m") == 0 ? 60
              : strcmp(u, "h") == 0 ? 3600
              : strcmp(u, "d") == 0 ? 86400
                                    : 0;
    }
    char *num = gp_arena_strndup(y->arena, s, slash ? (size_t)(slash - s) : strlen(s));
    if (!num)
        return oom(y);
    if (per == 0 || !gp_units_number(num, &n) || !(n >= 0) || n > 1e9)
        return bad_value(y, v, "a failure rate like 0.1/h (failures per s, m, h or d)");
    h->failure_rate_per_s = n / per;
    h->has_failure_rate = true;
    return GP_OK;
}

static enum gp_err ann_checkpoint(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && (!gp_units_duration_s(s, &h->checkpoint_s) || !(h->checkpoint_s > 0) ||
                         h->checkpoint_s > 1e9))
        err = bad_value(y, v, "a checkpoint interval greater than zero like 30m");
    h->has_checkpoint = err == GP_OK;
    return err;
}

static enum gp_err ann_gpu_milli(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    enum gp_err err = ann_uint(y, v, 1, GP_GPU_MILLI,
                               "thousandths of one GPU from 1 to 1000 like \"250\"", &h->gpu_milli);
    h->has_gpu_milli = err == GP_OK;
    h->milli_node = v;
    h->milli_path = path_copy(y);
    return err;
}

static enum gp_err ann_gpu_memory(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    int64_t mib;
    enum gp_err err = gp_yaml_mem_mib(y, v, &mib);
    if (err == GP_OK && (mib <= 0 || mib > UINT32_MAX))
        err = bad_value(y, v, "a positive GPU memory quantity like 10Gi");
    if (err == GP_OK)
        h->gpu_mem_mib = (uint32_t)mib;
    h->has_gpu_mem = err == GP_OK;
    return err;
}

/* "timeslice", "mps,mig", ...: the sharing modes a pod accepts. */
static enum gp_err ann_sharing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    static const char *const expected =
        "sharing modes separated by commas: exclusive, timeslice, mps, mig";
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a list of sharing modes", &s);
    if (err != GP_OK)
        return err;
    uint8_t modes = 0;
    for (const char *p = s;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && *p == ' ')
            p++, len--;
        while (len > 0 && p[len - 1] == ' ')
            len--;
        int found = -1;
        for (int m = GP_SHARE_EXCLUSIVE; m <= GP_SHARE_MIG; m++) {
            const char *name = gp_share_mode_name((enum gp_share_mode)m);
            if (strlen(name) == len && strncmp(name, p, len) == 0)
                found = m;
        }
        if (found < 0)
            return bad_value(y, v, expected);
        modes |= (uint8_t)(1u << found);
        if (!end)
            break;
        p = end + 1;
    }
    h->share_modes = modes;
    h->has_sharing = true;
    h->sharing_node = v;
    h->sharing_path = path_copy(y);
    return GP_OK;
}

static enum gp_err ann_gpu_model(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a GPU model list", &s);
    if (err != GP_OK)
        return err;
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == '|';
    if (n > GP_MAX_GPU_MODELS)
        return bad_value(y, v, "at most 64 GPU models");
    const char **models = gp_arena_alloc(y->arena, n * sizeof *models);
    if (!models)
        return oom(y);
    size_t count = 0;
    const char *p = s;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        while (len && *p == ' ') {
            p++;
            len--;
        }
        while (len && p[len - 1] == ' ')
            len--;
        char *m = gp_arena_strndup(y->arena, p, len);
        if (!m)
            return oom(y);
        if (!*m || !gp_yaml_label_value_ok(m))
            return bad_value(y, v, "GPU models separated by | like \"A100-80GB|H100-80GB\"");
        models[count++] = m;
        if (!bar)
            break;
        p = bar + 1;
    }
    h->models = models;
    h->nmodels = count;
    h->has_models = true;
    h->models_node = v;
    h->models_path = path_copy(y);
    return GP_OK;
}

/* Known annotations under our prefixes; anything else there is a typo. */
static const struct gp_yaml_field annotation_fields[] = {
    GP_YCUSTOM("sim.gpuplane.io/arrival", ann_arrival, 0),
    GP_YCUSTOM("sim.gpuplane.io/duration", ann_duration, 0),
    GP_YCUSTOM("sim.gpuplane.io/repeat", ann_repeat, 0),
    GP_YCUSTOM("sim.gpuplane.io/interarrival", ann_interarrival, 0),
    GP_YCUSTOM("sim.gpuplane.io/failure-probability", ann_failure, 0),
    GP_YCUSTOM("sim.gpuplane.io/retries", ann_retries, 0),
    GP_YCUSTOM("sim.gpuplane.io/failure-rate", ann_failure_rate, 0),
    GP_YCUSTOM("sim.gpuplane.io/checkpoint-interval", ann_checkpoint, 0),
    GP_YCUSTOM("gpuplane.io/gpu-milli", ann_gpu_milli, 0),
    GP_YCUSTOM("gpuplane.io/gpu-memory", ann_gpu_memory, 0),
    GP_YCUSTOM("gpuplane.io/gpu-model", ann_gpu_model, 0),
    GP_YCUSTOM("gpuplane.io/sharing", ann_sharing, 0),
};
#define NANNOTATIONS (sizeof annotation_fields / sizeof annotation_fields[0])

static bool our_prefix(const char *key)
{
    return strncmp(key, "gpuplane.io/", 12) == 0 || strncmp(key, "sim.gpuplane.io/", 16) == 0;
}

static enum gp_err meta_annotations(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    if (!fy_node_is_mapping(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a mapping of strings, got %s",
                            gp_yaml_describe(v));
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(v, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
        const char *key;
        enum gp_err err = gp_yaml_text(y, k, "a string key", &key);
        if (err != GP_OK)
            return err;
        if (strcmp(key, "scheduling.k8s.io/group-name") == 0) { /* Volcano */
            struct obj *o = obj;
            err = gp_yaml_string(y, val, &o->group[o->level]);
            if (err != GP_OK)
                return err;
            continue;
        }
        if (strcmp(key, "scheduling.volcano.sh/queue-name") == 0) {
            struct obj *o = obj;
            struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
            err = gp_yaml_string(y, val, &o->vqueue[o->level]);
            gp_yaml_pop(y, s);
            if (err != GP_OK)
                return err;
            continue;
        }
        if (!our_prefix(key))
            continue;
        struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
        size_t i;
        for (i = 0; i < NANNOTATIONS; i++)
            if (strcmp(annotation_fields[i].key, key) == 0)
                break;
        if (i == NANNOTATIONS) {
            char expected[640];
            size_t o = 0;
            expected[0] = '\0';
            for (size_t j = 0; j < NANNOTATIONS && o < sizeof expected; j++) {
                int n = snprintf(expected + o, sizeof expected - o, "%s%s", j ? ", " : "",
                                 annotation_fields[j].key);
                o += n > 0 ? (size_t)n : 0;
            }
            err = gp_yaml_fail(y, k, GP_EINVALID,
                               "unknown gpuplane annotation (expected one of: %s)", expected);
        } else if (gp_yaml_is_null(val)) {
            err = gp_yaml_fail(y, k, GP_EINVALID, "expected a value, got null");
        } else {
            err = annotation_fields[i].fn(y, val, obj);
        }
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static enum gp_err meta_labels(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct obj *o = obj;
    const struct gp_kv *kv;
    size_t n;
    enum gp_err err = gp_yaml_kv_map(y, v, true, &kv, &n);
    for (size_t i = 0; err == GP_OK && i < n; i++)
        if (strcmp(kv[i].key, "gpuplane.io/queue") == 0)
            o->queue[o->level] = kv[i].value;
        else if (strcmp(kv[i].key, "kueue.x-k8s.io/queue-name") == 0)
            o->kueue[o->level] = kv[i].value;
        else if (strcmp(kv[i].key, "scheduling.x-k8s.io/pod-group") == 0) /* scheduler-plugins */
            o->group[o->level] = kv[i].value;
    return err;
}

/* metadata of the object (level 0) and of its pod template (level 1) */
static const struct gp_yaml_field meta_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct obj, item.name, 0, 0, 0),
    GP_YCUSTOM("labels", meta_labels, 0),
    GP_YCUSTOM("annotations", meta_annotations, 0),
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
                                const char *profile, struct resources *r, struct obj *o)
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
        err = bad_value(y, val, "a whole number of MIG instances like 1");
    if (err != GP_OK)
        return err;
    if (!o->mig_profile && !(o->mig_profile = gp_arena_strdup(y->arena, profile)))
        return oom(y);
    o->mig_node = val;
    o->mig_path = path_copy(y);
    return GP_OK;
}

static enum gp_err resource_map(struct gp_yaml *y, struct fy_node *v, struct resources *r,
                                struct obj *o)
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
                err = bad_value(y, val,
                                "a whole number of GPUs like 1 (for a share of one GPU use the "
                                "gpuplane.io/gpu-milli annotation)");
            r->has_gpu = true;
            r->gpu_node = val;
            if (err == GP_OK && r->gpus > 0) {
                o->gpu_node = val;
                o->gpu_path = path_copy(y);
            }
        } else if (strcmp(key, "nvidia.com/gpu.shared") == 0) {
            err = gp_yaml_text(y, val, "a number of replicas", &s);
            if (err == GP_OK && (!gp_units_uint(s, &r->shared) || r->shared != 1))
                err = bad_value(y, val,
                                "1 (a replica of one shared GPU; for more compute ask for a "
                                "larger share with gpuplane.io/gpu-milli)");
            if (err == GP_OK) {
                o->shared_node = val;
                o->shared_path = path_copy(y);
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

static const struct gp_yaml_field container_fields[] = {
    GP_YCUSTOM("resources", container_resources, 0),
};

/* Reads one container: a request defaults to its limit, as in Kubernetes. */
static enum gp_err read_container(struct gp_yaml *y, struct fy_node *item, struct obj *o,
                                  int64_t *cpu, int64_t *mem, int64_t *gpus, int64_t *shared,
                                  int64_t *mig)
{
    struct container c;
    memset(&c, 0, sizeof c);
    c.o = o;
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
    *cpu = c.req.has_cpu ? c.req.cpu_milli : c.lim.has_cpu ? c.lim.cpu_milli : 0;
    *mem = c.req.has_mem ? c.req.mem_mib : c.lim.has_mem ? c.lim.mem_mib : 0;
    *gpus = c.req.has_gpu ? c.req.gpus : c.lim.has_gpu ? c.lim.gpus : 0;
    /* extended resources: a request must equal its limit; either says it */
    *shared = c.req.shared > c.lim.shared ? c.req.shared : c.lim.shared;
    *mig = c.req.mig > c.lim.mig ? c.req.mig : c.lim.mig;
    return GP_OK;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static enum gp_err container_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct obj *o = ctx;
    int64_t cpu = 0, mem = 0, gpus = 0, shared = 0, mig = 0;
    (void)i;
    enum gp_err err = read_container(y, item, o, &cpu, &mem, &gpus, &shared, &mig);
    if (err != GP_OK)
        return err;
    o->shared += shared;
    o->mig += mig;
    /* each is at most 1e15 (units.h), so sums of int64 cannot overflow
     * before this check trips */
    o->cpu_milli += cpu;
    o->mem_mib += mem;
    o->gpus += gpus;
    if (o->cpu_milli > 1e15 || o->mem_mib > 1e15 || o->gpus > 1e15)
        return gp_yaml_fail(y, item, GP_EINVALID, "the pod's total resources are too large");
    return GP_OK;
}

static enum gp_err init_container_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct obj *o = ctx;
    int64_t cpu = 0, mem = 0, gpus = 0, shared = 0, mig = 0;
    (void)i;
    enum gp_err err = read_container(y, item, o, &cpu, &mem, &gpus, &shared, &mig);
    /* an init container's shared GPU or MIG instance is the pod's anyway */
    o->shared = o->shared > shared ? o->shared : shared;
    o->mig = o->mig > mig ? o->mig : mig;
    o->init_cpu_milli = max64(o->init_cpu_milli, cpu);
    o->init_mem_mib = max64(o->init_mem_mib, mem);
    o->init_gpus = max64(o->init_gpus, gpus);
    return err;
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
    struct obj *o = obj;
    o->selector_node = v;
    o->selector_path = path_copy(y);
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
        err = bad_value(y, v, "Equal or Exists");
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
        err = bad_value(y, v, "NoSchedule, PreferNoSchedule or NoExecute (or none for all)");
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
    struct obj *o = ctx;
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
    struct obj *o = obj;
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, toleration_item, o); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n <= 0)
        return GP_OK;
    o->tolerations = gp_arena_alloc(y->arena, (size_t)n * sizeof *o->tolerations);
    if (!o->tolerations)
        return oom(y);
    return gp_yaml_list(y, v, toleration_item, o);
}

static const struct gp_yaml_field pod_spec_fields[] = {
    GP_YCUSTOM("containers", spec_containers, GP_YF_REQUIRED),
    GP_YCUSTOM("initContainers", spec_init_containers, 0),
    GP_YCUSTOM("nodeSelector", spec_node_selector, 0),
    GP_YCUSTOM("tolerations", spec_tolerations, 0),
    GP_YFIELD("priority", GP_YT_I32, struct obj, item.pod.priority, 0, -INT32_LIMIT - 1,
              INT32_LIMIT),
};

static enum gp_err pod_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, pod_spec_fields, sizeof pod_spec_fields / sizeof pod_spec_fields[0],
                          obj, false);
}

/* --- pod templates, Deployments and Jobs --------------------------------- */

static enum gp_err template_metadata(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct obj *o = obj;
    const char *name = o->item.name; /* a template's own name is not the object's */
    o->level = 1;
    enum gp_err err =
        gp_yaml_object(y, v, meta_fields, sizeof meta_fields / sizeof meta_fields[0], obj, false);
    o->level = 0;
    o->item.name = name;
    return err;
}

static const struct gp_yaml_field template_fields[] = {
    GP_YCUSTOM("metadata", template_metadata, 0),
    GP_YCUSTOM("spec", pod_spec, GP_YF_REQUIRED),
};

static enum gp_err pod_template(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, template_fields, sizeof template_fields / sizeof template_fields[0],
                          obj, false);
}

static const struct gp_yaml_field deployment_spec_fields[] = {
    GP_YFIELD("replicas", GP_YT_U32, struct obj, item.replicas, 0, 0, INT32_LIMIT),
    GP_YCUSTOM("template", pod_template, GP_YF_REQUIRED),
};

static const struct gp_yaml_field job_spec_fields[] = {
    GP_YFIELD("completions", GP_YT_U32, struct obj, item.completions, 0, 0, INT32_LIMIT),
    GP_YFIELD("parallelism", GP_YT_U32, struct obj, item.parallelism, 0, 0, INT32_LIMIT),
    GP_YFIELD("backoffLimit", GP_YT_U32, struct obj, item.backoff_limit, 0, 0, INT32_LIMIT),
    GP_YFIELD("activeDeadlineSeconds", GP_YT_U32, struct obj, deadline_s, 0, 1, INT32_LIMIT),
    GP_YCUSTOM("template", pod_template, GP_YF_REQUIRED),
};

static enum gp_err deployment_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, deployment_spec_fields,
                          sizeof deployment_spec_fields / sizeof deployment_spec_fields[0], obj,
                          false);
}

static enum gp_err job_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, job_spec_fields, sizeof job_spec_fields / sizeof job_spec_fields[0],
                          obj, false);
}

/* The top level of each kind: apiVersion, kind and metadata are read
 * before the walk (see read_object). */
#define TOP_IGNORED                                                                                \
    {"apiVersion", GP_YT_IGNORE, 0, 0, 0, 0, NULL}, {"kind", GP_YT_IGNORE, 0, 0, 0, 0, NULL},      \
    {                                                                                              \
        "metadata", GP_YT_IGNORE, 0, 0, 0, 0, NULL                                                 \
    }

static const struct gp_yaml_field pod_fields[] = {
    TOP_IGNORED,
    GP_YCUSTOM("spec", pod_spec, GP_YF_REQUIRED),
};
static const struct gp_yaml_field deployment_fields[] = {
    TOP_IGNORED,
    GP_YCUSTOM("spec", deployment_spec, GP_YF_REQUIRED),
};
static const struct gp_yaml_field job_fields[] = {
    TOP_IGNORED,
    GP_YCUSTOM("spec", job_spec, GP_YF_REQUIRED),
};

/* The kinds we read: adding one is a row and its spec table. */
static const struct kind {
    const char *kind;
    const char *api_version;
    enum gp_item_kind item_kind;
    const struct gp_yaml_field *fields;
    size_t nfields;
} kinds[] = {
#define KIND(name, api, item_kind, fields)                                                         \
    {                                                                                              \
        name, api, item_kind, fields, sizeof fields / sizeof fields[0]                             \
    }
    KIND("Pod", "v1", GP_ITEM_POD, pod_fields),
    KIND("Deployment", "apps/v1", GP_ITEM_DEPLOYMENT, deployment_fields),
    KIND("Job", "batch/v1", GP_ITEM_JOB, job_fields),
#undef KIND
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* --- building the item --------------------------------------------------- */

/* Merges the object's and the template's hints; the template wins. */
static struct hints merge(const struct hints *obj, const struct hints *tpl)
{
    struct hints h = *obj;
#define TAKE(flag, ...)                                                                            \
    do {                                                                                           \
        if (tpl->flag) {                                                                           \
            h.flag = true;                                                                         \
            __VA_ARGS__;                                                                           \
        }                                                                                          \
    } while (0)
    TAKE(has_arrival, h.arrival_s = tpl->arrival_s);
    TAKE(has_duration, h.duration = tpl->duration);
    TAKE(has_repeat, h.repeat = tpl->repeat);
    TAKE(has_interarrival, h.interarrival = tpl->interarrival);
    TAKE(has_failure, h.failure_prob = tpl->failure_prob);
    TAKE(has_failure_rate, h.failure_rate_per_s = tpl->failure_rate_per_s);
    TAKE(has_checkpoint, h.checkpoint_s = tpl->checkpoint_s);
    TAKE(has_retries, h.retries = tpl->retries, h.retries_node = tpl->retries_node,
         h.retries_path = tpl->retries_path);
    TAKE(has_gpu_milli, h.gpu_milli = tpl->gpu_milli, h.milli_node = tpl->milli_node,
         h.milli_path = tpl->milli_path);
    TAKE(has_gpu_mem, h.gpu_mem_mib = tpl->gpu_mem_mib);
    TAKE(has_sharing, h.share_modes = tpl->share_modes, h.sharing_node = tpl->sharing_node,
         h.sharing_path = tpl->sharing_path);
    TAKE(has_models, h.models = tpl->models, h.nmodels = tpl->nmodels,
         h.models_node = tpl->models_node, h.models_path = tpl->models_path);
#undef TAKE
    return h;
}

/* Turns what was read into the item's pod and hints. */
static enum gp_err finish(struct gp_yaml *y, struct obj *o)
{
    struct gp_item *it = &o->item;
    struct gp_pod_spec *pod = &it->pod;
    struct hints h = merge(&o->h[0], &o->h[1]);
    char detail[160];

    pod->name = it->name;
    pod->cpu_milli = max64(o->cpu_milli, o->init_cpu_milli);
    pod->mem_mib = max64(o->mem_mib, o->init_mem_mib);
    int64_t gpus = max64(o->gpus, o->init_gpus);
    if (gpus > GP_MAX_GPUS_PER_NODE) {
        snprintf(detail, sizeof detail,
                 " (the pod asks for %lld GPUs in all; a node has at most %d)", (long long)gpus,
                 GP_MAX_GPUS_PER_NODE);
        if (!o->gpu_path)
            return gp_yaml_fail(y, NULL, GP_EINVALID, "too many GPUs for one node%s", detail);
        return fail_at(y, o->gpu_path, o->gpu_node, "too many GPUs for one node", detail);
    }
    pod->gpu_count = (uint32_t)gpus;
    pod->gpu_milli = gpus > 0 ? GP_GPU_MILLI : 0;
    if ((o->mig > 0 || o->shared > 0) && gpus > 0)
        return fail_at(y, o->gpu_path, o->gpu_node, "cannot be combined with",
                       o->mig > 0 ? " nvidia.com/mig-* in one pod"
                                  : " nvidia.com/gpu.shared in one pod");
    if (o->mig > 0 && o->shared > 0)
        return fail_at(y, o->mig_path, o->mig_node, "cannot be combined with",
                       " nvidia.com/gpu.shared in one pod");
    if (o->mig > 0 && (h.has_gpu_milli || h.has_gpu_mem))
        return fail_at(y, o->mig_path, o->mig_node, "cannot be combined with",
                       " the gpuplane.io/gpu-milli or gpu-memory annotations (a MIG instance's "
                       "share is its profile's)");
    if (h.has_gpu_milli) {
        if (gpus > 1) {
            snprintf(detail, sizeof detail,
                     " with nvidia.com/gpu: %lld (a share is part of one GPU)", (long long)gpus);
            return fail_at(y, h.milli_path, h.milli_node, "cannot be combined", detail);
        }
        pod->gpu_count = 1;
        pod->gpu_milli = h.gpu_milli;
    }
    if (h.has_gpu_mem) {
        pod->gpu_mem_mib = h.gpu_mem_mib;
        if (pod->gpu_count == 0)
            pod->gpu_count = 1; /* a share of one GPU by memory alone: gpu_milli stays 0 */
    }
    if (o->shared > 0) { /* a replica: time-slicing or MPS */
        pod->gpu_count = 1;
        if (!h.has_gpu_milli)
            pod->gpu_milli = 0;
        pod->share_modes = 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS;
    }
    if (o->mig > 0) { /* its share for quotas: the profile's compute of 7 slices */
        unsigned compute = 0;
        uint32_t mem = 0;
        mig_profile_known(o->mig_profile, &compute, &mem);
        pod->gpu_count = (uint32_t)o->mig;
        pod->gpu_milli = compute >= 7 ? GP_GPU_MILLI : compute * GP_GPU_MILLI / 7;
        pod->gpu_mem_mib = mem;
        pod->mig_profile = o->mig_profile;
        pod->share_modes = 1u << GP_SHARE_MIG;
    }
    if (h.has_sharing) {
        if (pod->gpu_count == 0)
            return fail_at(y, h.sharing_path, h.sharing_node,
                           "sharing modes for a pod that asks for no GPU", "");
        uint8_t modes = pod->share_modes ? pod->share_modes & h.share_modes : h.share_modes;
        if (pod->gpu_milli == GP_GPU_MILLI && !pod->mig_profile)
            modes &= 1u << GP_SHARE_EXCLUSIVE;
        if (!modes)
            return fail_at(y, h.sharing_path, h.sharing_node,
                           "allows no mode the pod's GPU request can use",
                           " (whole GPUs need exclusive, nvidia.com/gpu.shared timeslice or mps, "
                           "nvidia.com/mig-* mig)");
        pod->share_modes = modes;
    }
    const char *product = NULL;
    for (size_t i = 0; i < o->nselector; i++)
        if (strcmp(o->selector[i].key, "nvidia.com/gpu.product") == 0)
            product = o->selector[i].value;
    if (h.has_models) {
        if (pod->gpu_count == 0)
            return fail_at(y, h.models_path, h.models_node,
                           "a GPU model constraint on a pod that asks for no GPU", "");
        pod->gpu_models = h.models;
        pod->ngpu_models = h.nmodels;
    }
    if (product && pod->gpu_count > 0) {
        bool allowed = !h.has_models;
        for (size_t i = 0; i < h.nmodels; i++)
            allowed |= strcmp(h.models[i], product) == 0;
        if (!allowed) {
            snprintf(detail, sizeof detail, " %.80s", product);
            return fail_at(
                y, h.models_path, h.models_node,
                "does not allow the model of nodeSelector nvidia.com/gpu.product:", detail);
        }
        const char **one = gp_arena_alloc(y->arena, sizeof *one);
        if (!one)
            return oom(y);
        one[0] = product;
        pod->gpu_models = one;
        pod->ngpu_models = 1;
    }
    pod->node_selector = o->selector;
    pod->nnode_selector = o->nselector;
    pod->tolerations = o->tolerations;
    pod->ntolerations = o->ntolerations;

    if (h.has_retries && it->kind != GP_ITEM_POD)
        return fail_at(y, h.retries_path, h.retries_node, "only for a Pod",
                       it->kind == GP_ITEM_JOB ? "; a Job has spec.backoffLimit" : "");
    if (it->kind == GP_ITEM_POD)
        it->backoff_limit = h.has_retries ? h.retries : 0;
    it->arrival_s = h.has_arrival ? h.arrival_s : 0;
    it->has_duration = h.has_duration;
    it->duration = h.duration;
    it->repeat = h.has_repeat ? h.repeat : 1;
    it->interarrival = h.interarrival; /* fixed 0 unless given */
    it->failure_prob = h.has_failure ? h.failure_prob : 0;
    it->failure_rate_per_s = h.has_failure_rate ? h.failure_rate_per_s : 0;
    it->checkpoint_s = h.has_checkpoint ? h.checkpoint_s : 0;
    it->active_deadline_s = o->deadline_s;
    for (int level = 1; level >= 0 && !it->queue; level--)
        it->queue = o->queue[level]   ? o->queue[level]
                    : o->kueue[level] ? o->kueue[level]
                                      : o->vqueue[level];
    it->group_name = o->group[1] ? o->group[1] : o->group[0];
    return GP_OK;
}

/* --- objects and documents ----------------------------------------------- */

/* A PodGroup read from the stream: the gang its pods form. */
struct podgroup {
    const char *name;
    const char *queue; /* Volcano's spec.queue; NULL = none */
    uint32_t min_member;
    uint32_t timeout_s; /* scheduleTimeoutSeconds; 0 = none */
    const char *topology_key;
    bool topology_required;
    double topology_slowdown; /* 0 = the default */
};

struct stream {
    struct gp_workload *w;
    struct gp_arena *a;
    struct podgroup *groups; /* in the arena */
    size_t ngroups, cap;
};

/* PodGroup: scheduler-plugins' and Volcano's CRDs share what we read:
 * metadata.name, spec.minMember (default 1), and our topology annotations
 * gpuplane.io/topology-key (a node label) and gpuplane.io/topology-policy
 * (required, or preferred: the default). */
static enum gp_err podgroup_annotations(struct gp_yaml *y, struct fy_node *v, void *ctx)
{
    struct podgroup *g = ctx;
    if (!fy_node_is_mapping(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a mapping of strings, got %s",
                            gp_yaml_describe(v));
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(v, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
        const char *key, *text = "";
        enum gp_err err = gp_yaml_text(y, k, "a string key", &key);
        if (err != GP_OK)
            return err;
        if (!our_prefix(key))
            continue;
        struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
        if (strcmp(key, "gpuplane.io/topology-key") == 0) {
            err = gp_yaml_string(y, val, &g->topology_key);
            if (err == GP_OK && !gp_yaml_qualified_name_ok(g->topology_key))
                err = bad_value(y, val, "a node label key like gpuplane.io/rack");
        } else if (strcmp(key, "gpuplane.io/topology-slowdown") == 0) {
            double x;
            err = gp_yaml_text(y, val, "a factor", &text);
            if (err == GP_OK && (!gp_units_number(text, &x) || !(x >= 1 && x <= 100)))
                err = bad_value(y, val, "a slowdown factor from 1 to 100 like \"1.3\"");
            if (err == GP_OK)
                g->topology_slowdown = x;
        } else if (strcmp(key, "gpuplane.io/topology-policy") == 0) {
            err = gp_yaml_text(y, val, "required or preferred", &text);
            if (err == GP_OK && strcmp(text, "required") != 0 && strcmp(text, "preferred") != 0)
                err = bad_value(y, val, "required or preferred");
            g->topology_required = err == GP_OK && strcmp(text, "required") == 0;
        } else {
            err = gp_yaml_fail(y, k, GP_EINVALID,
                               "unknown gpuplane annotation on a PodGroup (expected one of: "
                               "gpuplane.io/topology-key, gpuplane.io/topology-policy, "
                               "gpuplane.io/topology-slowdown)");
        }
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static const struct gp_yaml_field podgroup_meta_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct podgroup, name, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("annotations", podgroup_annotations, 0),
};

static const struct gp_yaml_field podgroup_spec_fields[] = {
    GP_YFIELD("minMember", GP_YT_U32, struct podgroup, min_member, 0, 1, 100000),
    GP_YFIELD("queue", GP_YT_STRING, struct podgroup, queue, 0, 0, 0),
    GP_YFIELD("scheduleTimeoutSeconds", GP_YT_U32, struct podgroup, timeout_s, 0, 1, 2147483647),
};

static enum gp_err podgroup_meta(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, podgroup_meta_fields,
                          sizeof podgroup_meta_fields / sizeof podgroup_meta_fields[0], obj, false);
}

static enum gp_err podgroup_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, podgroup_spec_fields,
                          sizeof podgroup_spec_fields / sizeof podgroup_spec_fields[0], obj, false);
}

static const struct gp_yaml_field podgroup_fields[] = {
    {"apiVersion", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"kind", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    GP_YCUSTOM("metadata", podgroup_meta, GP_YF_REQUIRED),
    GP_YCUSTOM("spec", podgroup_spec, 0),
};

static enum gp_err read_podgroup(struct gp_yaml *y, struct fy_node *n, struct stream *st)
{
    struct podgroup g;
    memset(&g, 0, sizeof g);
    g.min_member = 1;
    char outer[sizeof y->path];
    memcpy(outer, y->path, sizeof outer);
    gp_yaml_set_root(y, "PodGroup");
    enum gp_err err = gp_yaml_object(y, n, podgroup_fields,
                                     sizeof podgroup_fields / sizeof podgroup_fields[0], &g, false);
    gp_yaml_set_root(y, outer);
    if (err != GP_OK)
        return err;
    for (size_t i = 0; i < st->ngroups; i++)
        if (strcmp(st->groups[i].name, g.name) == 0)
            return gp_yaml_fail(y, n, GP_EINVALID, "PodGroup \"%s\" is defined twice", g.name);
    if (st->ngroups == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 8;
        struct podgroup *p = gp_arena_alloc(st->a, cap * sizeof *p);
        if (!p)
            return oom(y);
        if (st->ngroups)
            memcpy(p, st->groups, st->ngroups * sizeof *p);
        st->groups = p;
        st->cap = cap;
    }
    st->groups[st->ngroups++] = g;
    return GP_OK;
}

/* --- Queues ---------------------------------------------------------------- */

#define QUEUE_MAX_GPUS 1e9 /* a quota of GPUs, in GPUs */

/* What one resource map (guaranteed, borrowingLimit, Volcano's capability,
 * deserved, guarantee.resource) said, per resource: gpu milli, cpu milli,
 * memory MiB. */
struct res_map {
    bool has[3];
    int64_t v[3];
};

/* A queue being read. */
struct queue_in {
    struct gp_queue_def def;
    bool volcano;
    struct res_map guaranteed, borrow, capability, deserved, guarantee;
    struct gp_model_quota *models;
    size_t nmodels;
    const char *within;   /* preemption.withinQueue */
    const char *reclaim;  /* reclaimable, as written */
    struct fy_node *spec; /* for errors that name the spec */
};

/* A number of GPUs (a whole or decimal number, quoted or not) in milli. */
static enum gp_err gpu_quantity(struct gp_yaml *y, struct fy_node *v, int64_t *milli)
{
    const char *s;
    double n;
    enum gp_err err = gp_yaml_text(y, v, "a number of GPUs", &s);
    if (err == GP_OK && (!gp_units_number(s, &n) || !(n >= 0) || n > QUEUE_MAX_GPUS))
        err = bad_value(y, v, "a number of GPUs like 16 or 2.5");
    if (err == GP_OK)
        *milli = (int64_t)llround(n * GP_GPU_MILLI);
    return err;
}

/* A map of resource names to quantities. gpuplane's Queue knows only
 * nvidia.com/gpu, cpu and memory; Volcano's may list others, skipped. */
static enum gp_err res_map_read(struct gp_yaml *y, struct fy_node *v, struct res_map *r,
                                bool strict)
{
    if (!fy_node_is_mapping(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a mapping of resource quantities, got %s",
                            gp_yaml_describe(v));
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(v, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
        const char *key;
        enum gp_err err = gp_yaml_text(y, k, "a resource name", &key);
        if (err != GP_OK)
            return err;
        struct gp_yaml_saved saved = gp_yaml_push_key(y, key, k);
        int i = strcmp(key, "nvidia.com/gpu") == 0 ? 0
                : strcmp(key, "cpu") == 0          ? 1
                : strcmp(key, "memory") == 0       ? 2
                                                   : -1;
        if (i < 0 && strict)
            err = gp_yaml_fail(y, k, GP_EUNSUPPORTED,
                               "unknown resource (expected one of: nvidia.com/gpu, cpu, memory; "
                               "per GPU model, use gpuModels)");
        else if (i == 0)
            err = gpu_quantity(y, val, &r->v[0]);
        else if (i == 1)
            err = gp_yaml_cpu_milli(y, val, &r->v[1]);
        else if (i == 2)
            err = gp_yaml_mem_mib(y, val, &r->v[2]);
        if (err == GP_OK && i >= 0)
            r->has[i] = true;
        gp_yaml_pop(y, saved);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static enum gp_err q_guaranteed(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return res_map_read(y, v, &((struct queue_in *)obj)->guaranteed, true);
}

static enum gp_err q_borrow(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return res_map_read(y, v, &((struct queue_in *)obj)->borrow, true);
}

static enum gp_err q_capability(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return res_map_read(y, v, &((struct queue_in *)obj)->capability, false);
}

static enum gp_err q_deserved(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return res_map_read(y, v, &((struct queue_in *)obj)->deserved, false);
}

static enum gp_err q_guarantee_resource(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return res_map_read(y, v, &((struct queue_in *)obj)->guarantee, false);
}

static const struct gp_yaml_field volcano_guarantee_fields[] = {
    GP_YCUSTOM("resource", q_guarantee_resource, 0),
};

static enum gp_err q_guarantee(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, volcano_guarantee_fields, 1, obj, false);
}

static enum gp_err q_bool(struct gp_yaml *y, struct fy_node *v, const char **out)
{
    enum gp_err err = gp_yaml_text(y, v, "true or false", out);
    if (err == GP_OK && strcmp(*out, "true") != 0 && strcmp(*out, "false") != 0)
        err = bad_value(y, v, "true or false");
    return err;
}

static enum gp_err q_reclaimable(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return q_bool(y, v, &((struct queue_in *)obj)->reclaim);
}

static enum gp_err q_parent(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    enum gp_err err = gp_yaml_string(y, v, &q->def.parent);
    if (err == GP_OK && q->volcano && strcmp(q->def.parent, "root") == 0)
        q->def.parent = NULL; /* Volcano's implicit root queue */
    return err;
}

static enum gp_err q_within(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    enum gp_err err = gp_yaml_text(y, v, "LowerPriority or Never", &q->within);
    if (err == GP_OK && strcmp(q->within, "LowerPriority") != 0 && strcmp(q->within, "Never") != 0)
        err = bad_value(y, v, "LowerPriority or Never");
    return err;
}

static enum gp_err q_min_runtime(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK &&
        (!gp_units_duration_s(s, &q->def.spec.min_runtime_s) || q->def.spec.min_runtime_s > 1e9))
        err = bad_value(y, v, "a duration like 30m");
    return err;
}

static const struct gp_yaml_field preemption_fields[] = {
    GP_YCUSTOM("withinQueue", q_within, 0),
    GP_YCUSTOM("minRuntime", q_min_runtime, 0),
};

static enum gp_err q_preemption(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, preemption_fields,
                          sizeof preemption_fields / sizeof preemption_fields[0], obj, true);
}

/* One gpuModels entry: {model, guaranteed, borrowingLimit} in GPUs. */
struct model_in {
    const char *model;
    struct fy_node *guaranteed, *borrow;
};

static enum gp_err mq_guaranteed(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    ((struct model_in *)obj)->guaranteed = v;
    (void)y;
    return GP_OK;
}

static enum gp_err mq_borrow(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    ((struct model_in *)obj)->borrow = v;
    (void)y;
    return GP_OK;
}

static const struct gp_yaml_field model_quota_fields[] = {
    GP_YFIELD("model", GP_YT_STRING, struct model_in, model, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("guaranteed", mq_guaranteed, 0),
    GP_YCUSTOM("borrowingLimit", mq_borrow, 0),
};

static enum gp_err model_quota_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct queue_in *q = ctx;
    struct model_in m = {NULL, NULL, NULL};
    enum gp_err err =
        gp_yaml_object(y, item, model_quota_fields,
                       sizeof model_quota_fields / sizeof model_quota_fields[0], &m, true);
    if (err != GP_OK)
        return err;
    if (!gp_yaml_label_value_ok(m.model))
        return gp_yaml_fail(y, item, GP_EINVALID,
                            "model: expected a GPU model like A100-80GB, got \"%.80s\"", m.model);
    for (size_t j = 0; j < i; j++)
        if (strcmp(q->models[j].model, m.model) == 0)
            return gp_yaml_fail(y, item, GP_EINVALID, "model %s is listed twice", m.model);
    struct gp_model_quota *mq = &q->models[i];
    mq->model = m.model;
    if (m.guaranteed) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "guaranteed", NULL);
        err = gpu_quantity(y, m.guaranteed, &mq->gpu_milli.guaranteed);
        gp_yaml_pop(y, s);
    }
    if (err == GP_OK && m.borrow) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "borrowingLimit", NULL);
        err = gpu_quantity(y, m.borrow, &mq->gpu_milli.borrow_limit);
        mq->gpu_milli.limited = true;
        gp_yaml_pop(y, s);
    }
    q->nmodels = i + 1;
    return err;
}

static enum gp_err q_models(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, model_quota_item, q); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n > GP_MAX_GPU_MODELS)
        return gp_yaml_fail(y, v, GP_EINVALID, "at most %d GPU models", GP_MAX_GPU_MODELS);
    if (n <= 0)
        return GP_OK;
    q->models = gp_arena_alloc(y->arena, (size_t)n * sizeof *q->models);
    if (!q->models)
        return oom(y);
    return gp_yaml_list(y, v, model_quota_item, q);
}

static const struct gp_yaml_field queue_spec_fields[] = {
    GP_YCUSTOM("parent", q_parent, 0),
    GP_YFIELD("weight", GP_YT_NUMBER, struct queue_in, def.spec.weight, 0, 1e-6, 1e6),
    GP_YCUSTOM("guaranteed", q_guaranteed, 0),
    GP_YCUSTOM("borrowingLimit", q_borrow, 0),
    GP_YCUSTOM("gpuModels", q_models, 0),
    GP_YCUSTOM("preemption", q_preemption, 0),
    GP_YCUSTOM("reclaimable", q_reclaimable, 0),
};

/* Volcano's Queue (scheduling.volcano.sh/v1beta1): the fields that map to
 * ours; the others (state, priority, affinity, ...) are skipped. */
static const struct gp_yaml_field volcano_queue_spec_fields[] = {
    GP_YCUSTOM("parent", q_parent, 0),
    GP_YFIELD("weight", GP_YT_NUMBER, struct queue_in, def.spec.weight, 0, 1, 65535),
    GP_YCUSTOM("capability", q_capability, 0),
    GP_YCUSTOM("deserved", q_deserved, 0),
    GP_YCUSTOM("guarantee", q_guarantee, 0),
    GP_YCUSTOM("reclaimable", q_reclaimable, 0),
};

static enum gp_err queue_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    q->spec = v;
    if (q->volcano)
        return gp_yaml_object(
            y, v, volcano_queue_spec_fields,
            sizeof volcano_queue_spec_fields / sizeof volcano_queue_spec_fields[0], obj, false);
    return gp_yaml_object(y, v, queue_spec_fields,
                          sizeof queue_spec_fields / sizeof queue_spec_fields[0], obj, true);
}

static const struct gp_yaml_field queue_meta_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct queue_in, def.spec.name, GP_YF_REQUIRED, 0, 0),
    {"labels", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"annotations", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err queue_meta(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    enum gp_err err =
        gp_yaml_object(y, v, queue_meta_fields,
                       sizeof queue_meta_fields / sizeof queue_meta_fields[0], obj, !q->volcano);
    if (err == GP_OK && !gp_yaml_label_value_ok(q->def.spec.name)) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "name", gp_yaml_key_node(v, "name"));
        err = bad_value(y, fy_node_mapping_lookup_by_string(v, "name", FY_NT),
                        "a queue name (at most 63 of [A-Za-z0-9_.-])");
        gp_yaml_pop(y, s);
    }
    return err;
}

static const struct gp_yaml_field queue_fields[] = {
    {"apiVersion", GP_YT_IGNORE, 0, 0, 0, 0, NULL},     {"kind", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    GP_YCUSTOM("metadata", queue_meta, GP_YF_REQUIRED), GP_YCUSTOM("spec", queue_spec, 0),
    {"status", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err queue_append(struct gp_yaml *y, struct gp_workload *w,
                                const struct gp_queue_def *def)
{
    if (w->nqueues == w->queues_cap) {
        size_t cap = w->queues_cap ? 2 * w->queues_cap : 8;
        struct gp_queue_def *q = gp_arena_alloc(y->arena, cap * sizeof *q);
        if (!q)
            return oom(y);
        if (w->nqueues)
            memcpy(q, w->queues, w->nqueues * sizeof *q);
        w->queues = q;
        w->queues_cap = cap;
    }
    w->queues[w->nqueues++] = *def;
    return GP_OK;
}

/* A gpuplane.io/v1 Queue or a Volcano Queue, into w->queues. */
static enum gp_err read_queue(struct gp_yaml *y, struct fy_node *n, struct stream *st, bool volcano,
                              int line)
{
    struct queue_in *q = gp_arena_alloc(st->a, sizeof *q); /* zeroed */
    if (!q)
        return oom(y);
    q->volcano = volcano;
    char outer[sizeof y->path];
    memcpy(outer, y->path, sizeof outer);
    gp_yaml_set_root(y, "Queue");
    enum gp_err err = gp_yaml_object(y, n, queue_fields,
                                     sizeof queue_fields / sizeof queue_fields[0], q, !volcano);
    struct gp_queue_spec *spec = &q->def.spec;
    for (int r = 0; err == GP_OK && r < 3; r++) {
        struct gp_quota *quota = r == 0   ? &spec->gpu_milli
                                 : r == 1 ? &spec->cpu_milli
                                          : &spec->mem_mib;
        static const char *const names[] = {"nvidia.com/gpu", "cpu", "memory"};
        if (!volcano) {
            quota->guaranteed = q->guaranteed.has[r] ? q->guaranteed.v[r] : 0;
            quota->limited = q->borrow.has[r];
            quota->borrow_limit = q->borrow.has[r] ? q->borrow.v[r] : 0;
            continue;
        }
        /* Volcano: deserved (what reclaim gives back), else guarantee;
         * capability caps it all */
        quota->guaranteed = q->deserved.has[r]    ? q->deserved.v[r]
                            : q->guarantee.has[r] ? q->guarantee.v[r]
                                                  : 0;
        if (q->capability.has[r]) {
            if (q->capability.v[r] < quota->guaranteed)
                err = gp_yaml_fail(y, q->spec, GP_EINVALID,
                                   "spec.capability[\"%s\"] is below what the queue is guaranteed",
                                   names[r]);
            quota->limited = true;
            quota->borrow_limit = q->capability.v[r] - quota->guaranteed;
        }
    }
    gp_yaml_set_root(y, outer);
    if (err != GP_OK)
        return err;
    spec->models = q->models;
    spec->nmodels = q->nmodels;
    spec->no_preempt_within = q->within && strcmp(q->within, "Never") == 0;
    spec->not_reclaimable = q->reclaim && strcmp(q->reclaim, "false") == 0;
    if (!(spec->weight > 0))
        spec->weight = 1;
    q->def.source = gp_arena_printf(st->a, "%s:%d", y->name, line);
    if (!q->def.source)
        return oom(y);
    for (size_t i = 0; i < st->w->nqueues; i++)
        if (strcmp(st->w->queues[i].spec.name, spec->name) == 0)
            return gp_yaml_fail(y, n, GP_EINVALID, "Queue \"%s\" is defined twice (also at %s)",
                                spec->name, st->w->queues[i].source);
    return queue_append(y, st->w, &q->def);
}

static enum gp_err read_object(struct gp_yaml *y, struct fy_node *n, struct stream *st,
                               bool in_list);

static enum gp_err list_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    (void)i;
    return read_object(y, item, ctx, true);
}

/* A required string field of the object itself (kind, apiVersion). */
static enum gp_err top_string(struct gp_yaml *y, struct fy_node *n, const char *key,
                              const char **out, struct fy_node **at)
{
    *at = fy_node_mapping_lookup_by_string(n, key, FY_NT);
    if (gp_yaml_is_null(*at))
        return gp_yaml_fail(y, n, GP_EINVALID, "missing required field \"%s\"", key);
    struct gp_yaml_saved s = gp_yaml_push_key(y, key, gp_yaml_key_node(n, key));
    enum gp_err err = gp_yaml_string(y, *at, out);
    gp_yaml_pop(y, s);
    return err;
}

static enum gp_err read_object(struct gp_yaml *y, struct fy_node *n, struct stream *st,
                               bool in_list)
{
    if (!fy_node_is_mapping(n))
        return gp_yaml_fail(y, n, GP_EINVALID, "expected a Kubernetes object (a mapping), got %s",
                            gp_yaml_describe(n));
    int line = 0, col = 0;
    gp_yaml_node_mark(n, &line, &col);
    const char *kind, *api;
    struct fy_node *kind_node, *api_node;
    enum gp_err err = top_string(y, n, "kind", &kind, &kind_node);
    if (err != GP_OK)
        return err;
    if (strcmp(kind, "List") == 0) {
        if (in_list)
            return gp_yaml_fail(y, kind_node, GP_EINVALID, "a List inside a List is not supported");
        struct fy_node *items = fy_node_mapping_lookup_by_string(n, "items", FY_NT);
        struct gp_yaml_saved s = gp_yaml_push_key(y, "items", gp_yaml_key_node(n, "items"));
        err = gp_yaml_list(y, items, list_item, st);
        gp_yaml_pop(y, s);
        return err;
    }
    if (strcmp(kind, "Queue") == 0) {
        err = top_string(y, n, "apiVersion", &api, &api_node);
        if (err != GP_OK)
            return err;
        bool volcano = strcmp(api, "scheduling.volcano.sh/v1beta1") == 0;
        if (!volcano && strcmp(api, "gpuplane.io/v1") != 0) {
            char q[80];
            struct gp_yaml_saved s = gp_yaml_push_key(y, "apiVersion", NULL);
            err = gp_yaml_fail(y, api_node, GP_EINVALID,
                               "expected \"gpuplane.io/v1\" or \"scheduling.volcano.sh/v1beta1\" "
                               "for a Queue, got \"%s\"",
                               gp_yaml_quote(api_node, q, sizeof q));
            gp_yaml_pop(y, s);
            return err;
        }
        return read_queue(y, n, st, volcano, line);
    }
    if (strcmp(kind, "PodGroup") == 0) {
        err = top_string(y, n, "apiVersion", &api, &api_node);
        if (err != GP_OK)
            return err;
        if (strcmp(api, "scheduling.x-k8s.io/v1alpha1") != 0 &&
            strcmp(api, "scheduling.volcano.sh/v1beta1") != 0) {
            char q[80];
            struct gp_yaml_saved s = gp_yaml_push_key(y, "apiVersion", NULL);
            err = gp_yaml_fail(y, api_node, GP_EINVALID,
                               "expected \"scheduling.x-k8s.io/v1alpha1\" or "
                               "\"scheduling.volcano.sh/v1beta1\" for a PodGroup, got \"%s\"",
                               gp_yaml_quote(api_node, q, sizeof q));
            gp_yaml_pop(y, s);
            return err;
        }
        return read_podgroup(y, n, st);
    }
    const struct kind *k = NULL;
    for (size_t i = 0; i < NKINDS; i++)
        if (strcmp(kinds[i].kind, kind) == 0)
            k = &kinds[i];
    if (!k) {
        char q[80];
        return gp_yaml_fail(y, kind_node, GP_EUNSUPPORTED,
                            "unknown kind \"%s\" in the object starting at line %d (expected one "
                            "of: Pod, Deployment, Job, PodGroup, Queue, List)",
                            gp_yaml_quote(kind_node, q, sizeof q), line);
    }
    err = top_string(y, n, "apiVersion", &api, &api_node);
    if (err != GP_OK)
        return err;
    if (strcmp(api, k->api_version) != 0) {
        char q[80];
        struct gp_yaml_saved s = gp_yaml_push_key(y, "apiVersion", NULL);
        err = gp_yaml_fail(y, api_node, GP_EINVALID, "expected \"%s\" for a %s, got \"%s\"",
                           k->api_version, k->kind, gp_yaml_quote(api_node, q, sizeof q));
        gp_yaml_pop(y, s);
        return err;
    }

    struct obj *o = gp_arena_alloc(st->a, sizeof *o); /* zeroed; large for the stack */
    if (!o)
        return oom(y);
    o->w = st->w;
    o->item.kind = k->item_kind;
    o->item.replicas = 1;
    o->item.completions = 1;
    o->item.parallelism = 1;
    o->item.backoff_limit = k->item_kind == GP_ITEM_JOB ? JOB_BACKOFF_LIMIT_DEFAULT : 0;

    /* the name first, so that every path names the object */
    char outer[sizeof y->path];
    memcpy(outer, y->path, sizeof outer);
    gp_yaml_set_root(y, k->kind);
    struct fy_node *meta = fy_node_mapping_lookup_by_string(n, "metadata", FY_NT);
    struct gp_yaml_saved s = gp_yaml_push_key(y, "metadata", gp_yaml_key_node(n, "metadata"));
    if (gp_yaml_is_null(meta)) {
        err = gp_yaml_fail(y, n, GP_EINVALID, "missing required field \"metadata\"");
    } else if (!fy_node_is_mapping(meta)) {
        err = gp_yaml_fail(y, meta, GP_EINVALID, "expected a mapping, got %s",
                           gp_yaml_describe(meta));
    } else {
        const char *key = "name";
        struct fy_node *name = fy_node_mapping_lookup_by_string(meta, key, FY_NT);
        if (gp_yaml_is_null(name)) {
            key = "generateName";
            name = fy_node_mapping_lookup_by_string(meta, key, FY_NT);
        }
        if (gp_yaml_is_null(name)) {
            err = gp_yaml_fail(y, meta, GP_EINVALID, "missing required field \"name\"");
        } else {
            struct gp_yaml_saved s2 = gp_yaml_push_key(y, key, gp_yaml_key_node(meta, key));
            err = gp_yaml_string(y, name, &o->item.name);
            gp_yaml_pop(y, s2);
        }
    }
    gp_yaml_pop(y, s);
    if (err != GP_OK)
        return err;
    char rootpath[128];
    snprintf(rootpath, sizeof rootpath, "%s/%.100s", k->kind, o->item.name);
    gp_yaml_set_root(y, rootpath);
    s = gp_yaml_push_key(y, "metadata", gp_yaml_key_node(n, "metadata"));
    err =
        gp_yaml_object(y, meta, meta_fields, sizeof meta_fields / sizeof meta_fields[0], o, false);
    gp_yaml_pop(y, s);
    if (err != GP_OK)
        return err;
    err = gp_yaml_object(y, n, k->fields, k->nfields, o, false);
    if (err == GP_OK)
        err = finish(y, o);
    if (err != GP_OK)
        return err;
    gp_yaml_set_root(y, outer);
    o->item.source = gp_arena_printf(st->a, "%s:%d", y->name, line);
    if (!o->item.source)
        return oom(y);
    return gp_workload_append(st->w, st->a, &o->item) == GP_OK ? GP_OK : oom(y);
}

static enum gp_err manifest_document(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    return read_object(y, root, ctx, false);
}

enum gp_err gp_workload_parse_manifest(const char *text, size_t len, const char *name,
                                       struct gp_arena *a, struct gp_workload *w,
                                       struct gp_diag *diag)
{
    struct gp_yaml y;
    struct stream st = {w, a, NULL, 0, 0};
    size_t before = w->nitems, before_queues = w->nqueues;
    gp_yaml_init(&y, name, a, diag);
    enum gp_err err = gp_yaml_each_document(&y, text, len, manifest_document, &st);
    /* each object that names a PodGroup of this file becomes a gang */
    for (size_t i = before; err == GP_OK && i < w->nitems; i++) {
        struct gp_item *it = &w->items[i];
        if (!it->group_name)
            continue;
        const struct podgroup *g = NULL;
        for (size_t k = 0; k < st.ngroups && !g; k++)
            if (strcmp(st.groups[k].name, it->group_name) == 0)
                g = &st.groups[k];
        if (!g) {
            err = gp_diag_set(diag, GP_EINVALID,
                              "%s: %s names PodGroup \"%s\", which this file does not define",
                              it->source, it->name, it->group_name);
            break;
        }
        it->gang_min = g->min_member;
        it->topology_key = g->topology_key;
        it->topology_required = g->topology_required;
        it->topology_slowdown =
            g->topology_slowdown > 0 ? g->topology_slowdown : GP_TOPOLOGY_SLOWDOWN;
        it->gang_timeout_s = g->timeout_s;
        if (!it->queue)
            it->queue = g->queue; /* Volcano: the PodGroup names the queue */
    }
    if (err != GP_OK) {
        w->nitems = before;
        w->nqueues = before_queues;
    }
    return err;
}
