/* manifest_group.c - the scheduling objects of a manifest that are not
 * workloads: PodGroups (scheduler-plugins' and Volcano's: the gangs pods
 * join) and Queues (gpuplane.io/v1, strict; Volcano's, mapped to ours:
 * deserved or guarantee is what the queue is guaranteed, capability caps
 * it). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/manifest_internal.h"
#include "util/units.h"

/* PodGroup: scheduler-plugins' and Volcano's CRDs share what we read:
 * metadata.name, spec.minMember (default 1), and our topology annotations
 * gpuplane.io/topology-key (a node label) and gpuplane.io/topology-policy
 * (required, or preferred: the default). */
static enum gp_err podgroup_annotations(struct gp_yaml *y, struct fy_node *v, void *ctx)
{
    struct gp_group_def *g = ctx;
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
        if (!gp_manifest_our_prefix(key))
            continue;
        struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
        if (strcmp(key, "gpuplane.io/topology-key") == 0) {
            err = gp_yaml_string(y, val, &g->topology_key);
            if (err == GP_OK && !gp_yaml_qualified_name_ok(g->topology_key))
                err = gp_manifest_bad_value(y, val, "a node label key like gpuplane.io/rack");
        } else if (strcmp(key, "gpuplane.io/topology-slowdown") == 0) {
            double x;
            err = gp_yaml_text(y, val, "a factor", &text);
            if (err == GP_OK && (!gp_units_number(text, &x) || !(x >= 1 && x <= 100)))
                err = gp_manifest_bad_value(y, val, "a slowdown factor from 1 to 100 like \"1.3\"");
            if (err == GP_OK)
                g->topology_slowdown = x;
        } else if (strcmp(key, "gpuplane.io/topology-policy") == 0) {
            err = gp_yaml_text(y, val, "required or preferred", &text);
            if (err == GP_OK && strcmp(text, "required") != 0 && strcmp(text, "preferred") != 0)
                err = gp_manifest_bad_value(y, val, "required or preferred");
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
    GP_YFIELD("name", GP_YT_STRING, struct gp_group_def, name, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("annotations", podgroup_annotations, 0),
};

static const struct gp_yaml_field podgroup_spec_fields[] = {
    GP_YFIELD("minMember", GP_YT_U32, struct gp_group_def, min_member, 0, 1, 100000),
    GP_YFIELD("queue", GP_YT_STRING, struct gp_group_def, queue, 0, 0, 0),
    GP_YFIELD("scheduleTimeoutSeconds", GP_YT_U32, struct gp_group_def, timeout_s, 0, 1,
              2147483647),
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

enum gp_err gp_manifest_read_podgroup(struct gp_yaml *y, struct fy_node *n,
                                      struct manifest_stream *st, int line)
{
    struct gp_group_def g;
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
    struct gp_workload *w = st->w;
    /* both CRDs and every namespace: pods name their PodGroup by name only */
    for (size_t i = 0; i < w->ngroups; i++)
        if (strcmp(w->groups[i].name, g.name) == 0)
            return gp_yaml_fail(y, n, GP_EINVALID,
                                "PodGroup \"%s\" is defined twice (also at %s); pods name "
                                "their PodGroup by name alone",
                                g.name, w->groups[i].source);
    g.source = gp_arena_printf(st->a, "%s:%d", y->name, line);
    if (!g.source)
        return gp_manifest_oom(y);
    if (w->ngroups == w->groups_cap) {
        size_t cap = w->groups_cap ? w->groups_cap * 2 : 8;
        struct gp_group_def *p = gp_arena_alloc(st->a, cap * sizeof *p);
        if (!p)
            return gp_manifest_oom(y);
        if (w->ngroups)
            memcpy(p, w->groups, w->ngroups * sizeof *p);
        w->groups = p;
        w->groups_cap = cap;
    }
    w->groups[w->ngroups++] = g;
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
        err = gp_manifest_bad_value(y, v, "a number of GPUs like 16 or 2.5");
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
        err = gp_manifest_bad_value(y, v, "true or false");
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
        err = gp_manifest_bad_value(y, v, "LowerPriority or Never");
    return err;
}

static enum gp_err q_min_runtime(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct queue_in *q = obj;
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err == GP_OK &&
        (!gp_units_duration_s(s, &q->def.spec.min_runtime_s) || q->def.spec.min_runtime_s > 1e9))
        err = gp_manifest_bad_value(y, v, "a duration like 30m");
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
        return gp_manifest_oom(y);
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
        err = gp_manifest_bad_value(y, fy_node_mapping_lookup_by_string(v, "name", FY_NT),
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
            return gp_manifest_oom(y);
        if (w->nqueues)
            memcpy(q, w->queues, w->nqueues * sizeof *q);
        w->queues = q;
        w->queues_cap = cap;
    }
    w->queues[w->nqueues++] = *def;
    return GP_OK;
}

/* A gpuplane.io/v1 Queue or a Volcano Queue, into w->queues. */
enum gp_err gp_manifest_read_queue(struct gp_yaml *y, struct fy_node *n, struct manifest_stream *st,
                                   bool volcano, int line)
{
    struct queue_in *q = gp_arena_alloc(st->a, sizeof *q); /* zeroed */
    if (!q)
        return gp_manifest_oom(y);
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
        return gp_manifest_oom(y);
    for (size_t i = 0; i < st->w->nqueues; i++)
        if (strcmp(st->w->queues[i].spec.name, spec->name) == 0)
            return gp_yaml_fail(y, n, GP_EINVALID, "Queue \"%s\" is defined twice (also at %s)",
                                spec->name, st->w->queues[i].source);
    return queue_append(y, st->w, &q->def);
}
