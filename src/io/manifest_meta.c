/* manifest_meta.c - the metadata of a manifest's object and of its pod
 * template: the queue and PodGroup a pod names (gpuplane's, Kueue's,
 * scheduler-plugins' and Volcano's labels and annotations) and the
 * gpuplane.io/ and sim.gpuplane.io/ annotations (struct manifest_hints:
 * arrival, duration, repeat, failures, GPU shares, models, sharing modes).
 * An unknown annotation under our prefixes is an error. */
#include <stdio.h>
#include <string.h>

#include "engine/sharing.h"
#include "io/compat.h"
#include "io/manifest_internal.h"
#include "util/units.h"

/* --- annotations --------------------------------------------------------- */

static struct manifest_hints *hints_of(void *obj)
{
    struct manifest_obj *o = obj;
    return &o->h[o->level];
}

static enum gp_err ann_arrival(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && (!gp_units_duration_s(s, &h->arrival_s) || h->arrival_s > 1e9))
        err = gp_manifest_bad_value(y, v, "a duration from the start like 90s, 15m or 2h30m");
    h->has_arrival = err == GP_OK;
    return err;
}

#define DIST_EXPECTED                                                                              \
    "a duration or distribution like 30m, exp(30m), uniform(10m,2h) or lognormal(20m,1.0)"

static enum gp_err ann_duration(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && !gp_dist_parse(s, &h->duration))
        err = gp_manifest_bad_value(y, v, DIST_EXPECTED);
    h->has_duration = err == GP_OK;
    return err;
}

static enum gp_err ann_interarrival(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && !gp_dist_parse(s, &h->interarrival))
        err = gp_manifest_bad_value(y, v, DIST_EXPECTED);
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
        err = gp_manifest_bad_value(y, v, expected);
    if (err == GP_OK)
        *out = (uint32_t)n;
    return err;
}

static enum gp_err ann_repeat(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    enum gp_err err = ann_uint(y, v, 1, GP_WORKLOAD_MAX_REPEAT,
                               "a number of submissions from 1 to 10000000", &h->repeat);
    h->has_repeat = err == GP_OK;
    return err;
}

static enum gp_err ann_retries(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    enum gp_err err =
        ann_uint(y, v, 0, 1000000, "a number of retries from 0 to 1000000", &h->retries);
    h->has_retries = err == GP_OK;
    h->retries_node = v;
    h->retries_path = gp_manifest_path_copy(y);
    return err;
}

static enum gp_err ann_failure(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a probability", &s);
    if (err == GP_OK &&
        (!gp_units_number(s, &h->failure_prob) || !(h->failure_prob >= 0 && h->failure_prob <= 1)))
        err = gp_manifest_bad_value(y, v, "a probability from 0 to 1 like 0.05");
    h->has_failure = err == GP_OK;
    return err;
}

/* "0.1/h": a number of failures per second, minute, hour or day. */
static enum gp_err ann_failure_rate(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
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
        return gp_manifest_oom(y);
    if (per == 0 || !gp_units_number(num, &n) || !(n >= 0) || n > 1e9)
        return gp_manifest_bad_value(y, v, "a failure rate like 0.1/h (failures per s, m, h or d)");
    h->failure_rate_per_s = n / per;
    h->has_failure_rate = true;
    return GP_OK;
}

static enum gp_err ann_checkpoint(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK && (!gp_units_duration_s(s, &h->checkpoint_s) || !(h->checkpoint_s > 0) ||
                         h->checkpoint_s > 1e9))
        err = gp_manifest_bad_value(y, v, "a checkpoint interval greater than zero like 30m");
    h->has_checkpoint = err == GP_OK;
    return err;
}

static enum gp_err ann_gpu_milli(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    enum gp_err err = ann_uint(y, v, 1, GP_GPU_MILLI,
                               "thousandths of one GPU from 1 to 1000 like \"250\"", &h->gpu_milli);
    h->has_gpu_milli = err == GP_OK;
    h->milli_node = v;
    h->milli_path = gp_manifest_path_copy(y);
    return err;
}

static enum gp_err ann_gpu_memory(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    int64_t mib;
    enum gp_err err = gp_yaml_mem_mib(y, v, &mib);
    if (err == GP_OK && (mib <= 0 || mib > UINT32_MAX))
        err = gp_manifest_bad_value(y, v, "a positive GPU memory quantity like 10Gi");
    if (err == GP_OK)
        h->gpu_mem_mib = (uint32_t)mib;
    h->has_gpu_mem = err == GP_OK;
    return err;
}

/* gpuplane.io/cuda: the CUDA toolkit the pod's code was built with
 * ("12.2", "12.4.1"), a release of data/cuda-driver-compat.json. */
static enum gp_err ann_cuda(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    struct gp_cuda_version cv;
    struct gp_compat_result r;
    enum gp_err err = gp_yaml_text(y, v, "a CUDA version", &s);
    if (err != GP_OK)
        return err;
    if (!gp_compat_parse_cuda(s, &cv))
        return gp_manifest_bad_value(y, v, "a CUDA version like \"12.2\" or \"12.4.1\"");
    if (!gp_compat_check(&cv, 0, GP_GPU_UNKNOWN, false, &r))
        return gp_yaml_fail(y, v, GP_EINVALID, "%s", r.reason);
    h->cuda_driver_min = r.native_min;
    h->cuda = s;
    h->has_cuda = true;
    h->cuda_node = v;
    h->cuda_path = gp_manifest_path_copy(y);
    return GP_OK;
}

/* "timeslice", "mps,mig", ...: the sharing modes a pod accepts. */
static enum gp_err ann_sharing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    static const char *const expected =
        "sharing modes separated by commas: exclusive, timeslice, mps, mig";
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a list of sharing modes", &s);
    if (err != GP_OK)
        return err;
    uint8_t modes = 0;
    if (!gp_share_modes_parse(s, &modes))
        return gp_manifest_bad_value(y, v, expected);
    h->share_modes = modes;
    h->has_sharing = true;
    h->sharing_node = v;
    h->sharing_path = gp_manifest_path_copy(y);
    return GP_OK;
}

static enum gp_err ann_gpu_model(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_hints *h = hints_of(obj);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a GPU model list", &s);
    if (err != GP_OK)
        return err;
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == '|';
    if (n > GP_MAX_GPU_MODELS)
        return gp_manifest_bad_value(y, v, "at most 64 GPU models");
    const char **models = gp_arena_alloc(y->arena, n * sizeof *models);
    if (!models)
        return gp_manifest_oom(y);
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
            return gp_manifest_oom(y);
        if (!*m || !gp_yaml_label_value_ok(m))
            return gp_manifest_bad_value(y, v,
                                         "GPU models separated by | like \"A100-80GB|H100-80GB\"");
        models[count++] = m;
        if (!bar)
            break;
        p = bar + 1;
    }
    h->models = models;
    h->nmodels = count;
    h->has_models = true;
    h->models_node = v;
    h->models_path = gp_manifest_path_copy(y);
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
    GP_YCUSTOM("gpuplane.io/cuda", ann_cuda, 0),
};
#define NANNOTATIONS (sizeof annotation_fields / sizeof annotation_fields[0])

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
            struct manifest_obj *o = obj;
            err = gp_yaml_string(y, val, &o->group[o->level]);
            if (err != GP_OK)
                return err;
            continue;
        }
        if (strcmp(key, "scheduling.volcano.sh/queue-name") == 0) {
            struct manifest_obj *o = obj;
            struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
            err = gp_yaml_string(y, val, &o->vqueue[o->level]);
            gp_yaml_pop(y, s);
            if (err != GP_OK)
                return err;
            continue;
        }
        if (!gp_manifest_our_prefix(key))
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
    struct manifest_obj *o = obj;
    const struct gp_kv *kv;
    size_t n;
    enum gp_err err = gp_yaml_kv_map(y, v, true, &kv, &n);
    o->labels[o->level] = kv;
    o->nlabels[o->level] = n;
    for (size_t i = 0; err == GP_OK && i < n; i++)
        if (strcmp(kv[i].key, "gpuplane.io/queue") == 0)
            o->queue[o->level] = kv[i].value;
        else if (strcmp(kv[i].key, "kueue.x-k8s.io/queue-name") == 0)
            o->kueue[o->level] = kv[i].value;
        else if (strcmp(kv[i].key, "scheduling.x-k8s.io/pod-group") == 0) /* scheduler-plugins */
            o->group[o->level] = kv[i].value;
    return err;
}

/* The namespace: what a pod affinity term and spreading count pods in. */
static enum gp_err meta_namespace(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    enum gp_err err = gp_yaml_string(y, v, &o->ns[o->level]);
    if (err == GP_OK && !gp_yaml_dns_label_ok(o->ns[o->level]))
        err = gp_manifest_bad_value(y, v, "a namespace name (at most 63 of [a-z0-9-])");
    return err;
}

/* metadata of the object (level 0) and of its pod template (level 1) */
static const struct gp_yaml_field meta_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct manifest_obj, item.name, 0, 0, 0),
    GP_YCUSTOM("namespace", meta_namespace, 0),
    GP_YCUSTOM("labels", meta_labels, 0),
    GP_YCUSTOM("annotations", meta_annotations, 0),
};

enum gp_err gp_manifest_metadata(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, meta_fields, sizeof meta_fields / sizeof meta_fields[0], obj,
                          false);
}

/* --- merging the object's and the template's hints ---------------------- */

/* The template's hints win over the object's, one by one. */
struct manifest_hints gp_manifest_hints_merge(const struct manifest_hints *obj,
                                              const struct manifest_hints *tpl)
{
    struct manifest_hints h = *obj;
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
    TAKE(has_cuda, h.cuda_driver_min = tpl->cuda_driver_min, h.cuda = tpl->cuda,
         h.cuda_node = tpl->cuda_node, h.cuda_path = tpl->cuda_path);
    TAKE(has_models, h.models = tpl->models, h.nmodels = tpl->nmodels,
         h.models_node = tpl->models_node, h.models_path = tpl->models_path);
#undef TAKE
    return h;
}
