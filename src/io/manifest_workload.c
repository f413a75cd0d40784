/* manifest_workload.c - the workload kinds of a manifest: Pod,
 * Deployment (replicas) and Job (completions, parallelism, backoffLimit,
 * activeDeadlineSeconds), their pod templates, and the workload item one
 * object becomes (the name first, so that every error names the object;
 * then metadata, the spec, and the item's hints, queue and PodGroup).
 * Adding a kind is a row in `kinds` and its spec table. */
#include <stdio.h>
#include <string.h>

#include "io/manifest_internal.h"

/* Kubernetes defaults. */
#define JOB_BACKOFF_LIMIT_DEFAULT 6

/* --- pod templates, Deployments and Jobs --------------------------------- */

static enum gp_err template_metadata(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    const char *name = o->item.name; /* a template's own name is not the object's */
    o->level = 1;
    enum gp_err err = gp_manifest_metadata(y, v, obj);
    o->level = 0;
    o->item.name = name;
    return err;
}

static const struct gp_yaml_field template_fields[] = {
    GP_YCUSTOM("metadata", template_metadata, 0),
    GP_YCUSTOM("spec", gp_manifest_pod_spec, GP_YF_REQUIRED),
};

static enum gp_err pod_template(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, template_fields, sizeof template_fields / sizeof template_fields[0],
                          obj, false);
}

static const struct gp_yaml_field deployment_spec_fields[] = {
    GP_YFIELD("replicas", GP_YT_U32, struct manifest_obj, item.replicas, 0, 0,
              GP_MANIFEST_INT32_LIMIT),
    GP_YCUSTOM("template", pod_template, GP_YF_REQUIRED),
};

static const struct gp_yaml_field job_spec_fields[] = {
    GP_YFIELD("completions", GP_YT_U32, struct manifest_obj, item.completions, 0, 0,
              GP_MANIFEST_INT32_LIMIT),
    GP_YFIELD("parallelism", GP_YT_U32, struct manifest_obj, item.parallelism, 0, 0,
              GP_MANIFEST_INT32_LIMIT),
    GP_YFIELD("backoffLimit", GP_YT_U32, struct manifest_obj, item.backoff_limit, 0, 0,
              GP_MANIFEST_INT32_LIMIT),
    GP_YFIELD("activeDeadlineSeconds", GP_YT_U32, struct manifest_obj, deadline_s, 0, 1,
              GP_MANIFEST_INT32_LIMIT),
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
 * before the walk (see read_object in manifest.c and
 * gp_manifest_read_workload). */
#define TOP_IGNORED                                                                                \
    {"apiVersion", GP_YT_IGNORE, 0, 0, 0, 0, NULL}, {"kind", GP_YT_IGNORE, 0, 0, 0, 0, NULL},      \
    {                                                                                              \
        "metadata", GP_YT_IGNORE, 0, 0, 0, 0, NULL                                                 \
    }

static const struct gp_yaml_field pod_fields[] = {
    TOP_IGNORED,
    GP_YCUSTOM("spec", gp_manifest_pod_spec, GP_YF_REQUIRED),
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
static const struct manifest_kind kinds[] = {
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

const struct manifest_kind *gp_manifest_kind_find(const char *kind)
{
    for (size_t i = 0; i < NKINDS; i++)
        if (strcmp(kinds[i].kind, kind) == 0)
            return &kinds[i];
    return NULL;
}

/* --- building the item --------------------------------------------------- */

/* Turns what was read into the item's pod and hints. */
static enum gp_err finish(struct gp_yaml *y, struct manifest_obj *o)
{
    struct gp_item *it = &o->item;
    struct manifest_hints h = gp_manifest_hints_merge(&o->h[0], &o->h[1]);
    enum gp_err err = gp_manifest_pod_finish(y, o, &h);
    if (err != GP_OK)
        return err;

    if (h.has_retries && it->kind != GP_ITEM_POD)
        return gp_manifest_fail_at(y, h.retries_path, h.retries_node, "only for a Pod",
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

enum gp_err gp_manifest_read_workload(struct gp_yaml *y, struct fy_node *n,
                                      struct manifest_stream *st, const struct manifest_kind *k,
                                      int line)
{
    enum gp_err err;
    struct manifest_obj *o = gp_arena_alloc(st->a, sizeof *o); /* zeroed; large for the stack */
    if (!o)
        return gp_manifest_oom(y);
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
    err = gp_manifest_metadata(y, meta, o);
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
        return gp_manifest_oom(y);
    return gp_workload_append(st->w, st->a, &o->item) == GP_OK ? GP_OK : gp_manifest_oom(y);
}
