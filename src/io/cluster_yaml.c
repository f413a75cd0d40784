/* cluster_yaml.c - the gpuplane Cluster spec reader (apiVersion
 * gpuplane.io/v1, kind Cluster): node pools with GPU model and count,
 * per-node CPU and memory, size, price, labels and taints. Every object
 * is a table of fields below; adding a field is a row (and, for a new
 * kind of value, a small handler). Unknown fields are errors. */
#include <string.h>

#include "io/cluster.h"
#include "io/yaml_walk.h"

/* What a pool list walk needs beyond the cluster. */
struct pools_walk {
    struct gp_cluster *c;
    uint64_t nodes; /* total so far, against GP_CLUSTER_MAX_NODES */
};

static enum gp_err oom(struct gp_yaml *y)
{
    return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
}

/* --- spec.nodePools[].gpu ------------------------------------------------ */

static const struct gp_yaml_field gpu_fields[] = {
    GP_YFIELD("model", GP_YT_STRING, struct gp_pool_spec, gpu_model, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("count", GP_YT_U32, struct gp_pool_spec, gpus_per_node, GP_YF_REQUIRED, 1,
              GP_MAX_GPUS_PER_NODE),
    GP_YFIELD("memory", GP_YT_MEM_MIB32, struct gp_pool_spec, gpu_mem_mib, 0, 1, UINT32_MAX),
};

static enum gp_err pool_gpu(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pool_spec *p = obj;
    enum gp_err err =
        gp_yaml_object(y, v, gpu_fields, sizeof gpu_fields / sizeof gpu_fields[0], p, true);
    if (err != GP_OK)
        return err;
    if (!gp_yaml_label_value_ok(p->gpu_model)) {
        struct fy_node *m = fy_node_mapping_lookup_by_string(v, "model", 5);
        struct gp_yaml_saved s = gp_yaml_push_key(y, "model", m);
        char q[80];
        err = gp_yaml_fail(y, m, GP_EINVALID,
                           "expected a GPU model usable as a label value (at most 63 of "
                           "[A-Za-z0-9_.-]) like A100-80GB, got \"%s\"",
                           gp_yaml_quote(m, q, sizeof q));
        gp_yaml_pop(y, s);
    }
    return err;
}

/* --- spec.nodePools[].taints --------------------------------------------- */

static enum gp_err taint_key(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_taint *t = obj;
    enum gp_err err = gp_yaml_string(y, v, &t->key);
    char q[80];
    if (err == GP_OK && !gp_yaml_qualified_name_ok(t->key))
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected a taint key like nvidia.com/gpu ([prefix/]name), got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    return err;
}

static enum gp_err taint_value(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_taint *t = obj;
    enum gp_err err = gp_yaml_text(y, v, "a string", &t->value);
    char q[80];
    if (err == GP_OK && !gp_yaml_label_value_ok(t->value))
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected a taint value (at most 63 of [A-Za-z0-9_.-]), got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    return err;
}

static enum gp_err taint_effect(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_taint *t = obj;
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a taint effect", &s);
    if (err != GP_OK)
        return err;
    if (strcmp(s, "NoSchedule") == 0)
        t->effect = GP_EFFECT_NO_SCHEDULE;
    else if (strcmp(s, "PreferNoSchedule") == 0)
        t->effect = GP_EFFECT_PREFER_NO_SCHEDULE;
    else if (strcmp(s, "NoExecute") == 0)
        t->effect = GP_EFFECT_NO_EXECUTE;
    else {
        char q[80];
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    }
    return err;
}

static const struct gp_yaml_field taint_fields[] = {
    GP_YCUSTOM("key", taint_key, GP_YF_REQUIRED),
    GP_YCUSTOM("value", taint_value, 0),
    GP_YCUSTOM("effect", taint_effect, GP_YF_REQUIRED),
};

static enum gp_err taint_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct gp_taint *taints = ctx;
    taints[i].value = ""; /* absent: an empty value, as in Kubernetes */
    return gp_yaml_object(y, item, taint_fields, sizeof taint_fields / sizeof taint_fields[0],
                          &taints[i], true);
}

static enum gp_err pool_taints(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pool_spec *p = obj;
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, taint_item, NULL); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n <= 0)
        return GP_OK;
    struct gp_taint *taints = gp_arena_alloc(y->arena, (size_t)n * sizeof *taints);
    if (!taints)
        return oom(y);
    enum gp_err err = gp_yaml_list(y, v, taint_item, taints);
    if (err == GP_OK) {
        p->taints = taints;
        p->ntaints = (size_t)n;
    }
    return err;
}

/* --- spec.nodePools[] ---------------------------------------------------- */

static enum gp_err pool_name(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pool_spec *p = obj;
    enum gp_err err = gp_yaml_string(y, v, &p->name);
    char q[80];
    if (err == GP_OK && !gp_yaml_dns_label_ok(p->name))
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected a pool name made of at most 63 of [a-z0-9-], beginning and "
                           "ending with a letter or digit, like a100-spot, got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    return err;
}

static enum gp_err pool_labels(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pool_spec *p = obj;
    enum gp_err err = gp_yaml_kv_map(y, v, true, &p->labels, &p->nlabels);
    for (size_t i = 0; err == GP_OK && i < p->nlabels; i++) {
        const char *k = p->labels[i].key;
        if (strcmp(k, "gpuplane.io/pool") == 0 || strcmp(k, "nvidia.com/gpu.product") == 0) {
            struct fy_node *kn = gp_yaml_key_node(v, k);
            struct gp_yaml_saved s = gp_yaml_push_key(y, k, kn);
            err = gp_yaml_fail(y, kn, GP_EINVALID,
                               "this label is set on every node from the pool's %s; remove it",
                               k[0] == 'g' ? "name" : "gpu.model");
            gp_yaml_pop(y, s);
        }
    }
    return err;
}

static const struct gp_yaml_field pool_fields[] = {
    GP_YCUSTOM("name", pool_name, GP_YF_REQUIRED),
    GP_YCUSTOM("gpu", pool_gpu, 0),
    GP_YFIELD("cpu", GP_YT_CPU_MILLI, struct gp_pool_spec, cpu_milli, GP_YF_REQUIRED, 1, 1e12),
    GP_YFIELD("memory", GP_YT_MEM_MIB, struct gp_pool_spec, mem_mib, GP_YF_REQUIRED, 1, 1e12),
    GP_YFIELD("count", GP_YT_U32, struct gp_pool_spec, count, GP_YF_REQUIRED, 0,
              GP_CLUSTER_MAX_NODES),
    GP_YFIELD("pricePerHour", GP_YT_NUMBER, struct gp_pool_spec, price_per_hour_usd, 0, 0, 1e6),
    GP_YCUSTOM("labels", pool_labels, 0),
    GP_YCUSTOM("taints", pool_taints, 0),
};

static enum gp_err pool_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct pools_walk *w = ctx;
    struct gp_pool_spec *p = &w->c->pools[i];
    enum gp_err err =
        gp_yaml_object(y, item, pool_fields, sizeof pool_fields / sizeof pool_fields[0], p, true);
    if (err != GP_OK)
        return err;
    for (size_t j = 0; j < i; j++) {
        if (strcmp(w->c->pools[j].name, p->name) == 0) {
            struct fy_node *n = fy_node_mapping_lookup_by_string(item, "name", 4);
            struct gp_yaml_saved s = gp_yaml_push_key(y, "name", n);
            err = gp_yaml_fail(y, n, GP_EINVALID,
                               "duplicate pool name \"%s\" (also spec.nodePools[%zu].name)",
                               p->name, j);
            gp_yaml_pop(y, s);
            return err;
        }
    }
    w->nodes += p->count;
    if (w->nodes > GP_CLUSTER_MAX_NODES) {
        struct fy_node *n = fy_node_mapping_lookup_by_string(item, "count", 5);
        struct gp_yaml_saved s = gp_yaml_push_key(y, "count", n);
        err = gp_yaml_fail(y, n, GP_ELIMIT, "the cluster has more than %d nodes in all",
                           GP_CLUSTER_MAX_NODES);
        gp_yaml_pop(y, s);
        return err;
    }
    w->c->npools = i + 1;
    return GP_OK;
}

static enum gp_err spec_pools(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_cluster *c = obj;
    struct pools_walk w = {c, 0};
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, pool_item, &w); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n <= 0)
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a list of at least one node pool");
    if (n > GP_CLUSTER_MAX_POOLS)
        return gp_yaml_fail(y, v, GP_ELIMIT, "%d node pools, more than the %d supported", n,
                            GP_CLUSTER_MAX_POOLS);
    c->pools = gp_arena_alloc(y->arena, (size_t)n * sizeof *c->pools);
    if (!c->pools)
        return oom(y);
    return gp_yaml_list(y, v, pool_item, &w);
}

/* --- the document -------------------------------------------------------- */

static const struct gp_yaml_field spec_fields[] = {
    GP_YCUSTOM("nodePools", spec_pools, GP_YF_REQUIRED),
};

static enum gp_err cluster_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, spec_fields, sizeof spec_fields / sizeof spec_fields[0], obj, true);
}

static enum gp_err ignore_map(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    const struct gp_kv *kv;
    size_t n;
    (void)obj;
    return gp_yaml_kv_map(y, v, false, &kv, &n);
}

static const struct gp_yaml_field metadata_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct gp_cluster, name, GP_YF_REQUIRED, 0, 0),
    GP_YCUSTOM("labels", ignore_map, 0),
    GP_YCUSTOM("annotations", ignore_map, 0),
};

static enum gp_err cluster_metadata(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, metadata_fields, sizeof metadata_fields / sizeof metadata_fields[0],
                          obj, true);
}

static enum gp_err expect_text(struct gp_yaml *y, struct fy_node *v, const char *want)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a string", &s);
    char q[80];
    if (err == GP_OK && strcmp(s, want) != 0)
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected \"%s\", got \"%s\"", want,
                           gp_yaml_quote(v, q, sizeof q));
    return err;
}

static enum gp_err cluster_api_version(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return expect_text(y, v, "gpuplane.io/v1");
}

static enum gp_err cluster_kind(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return expect_text(y, v, "Cluster");
}

static const struct gp_yaml_field cluster_fields[] = {
    GP_YCUSTOM("apiVersion", cluster_api_version, GP_YF_REQUIRED),
    GP_YCUSTOM("kind", cluster_kind, GP_YF_REQUIRED),
    GP_YCUSTOM("metadata", cluster_metadata, GP_YF_REQUIRED),
    GP_YCUSTOM("spec", cluster_spec, GP_YF_REQUIRED),
};

struct cluster_doc {
    struct gp_cluster *c;
    int docs;
};

static enum gp_err cluster_document(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    struct cluster_doc *d = ctx;
    if (d->docs++ > 0)
        return gp_yaml_fail(y, root, GP_EINVALID,
                            "a second YAML document; a cluster file holds one Cluster");
    return gp_yaml_object(y, root, cluster_fields, sizeof cluster_fields / sizeof cluster_fields[0],
                          d->c, true);
}

enum gp_err gp_cluster_parse_yaml(const char *text, size_t len, const char *name,
                                  struct gp_arena *a, struct gp_cluster *out, struct gp_diag *diag)
{
    struct gp_yaml y;
    struct cluster_doc d = {out, 0};
    memset(out, 0, sizeof *out);
    gp_yaml_init(&y, name, a, diag);
    enum gp_err err = gp_yaml_each_document(&y, text, len, cluster_document, &d);
    if (err == GP_OK && d.docs == 0)
        err = gp_diag_set(diag, GP_EINVALID, "%s: empty file, expected a Cluster document", y.name);
    if (err == GP_OK) {
        out->source = gp_arena_strdup(a, y.name);
        if (!out->source)
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", y.name);
    }
    if (err != GP_OK)
        memset(out, 0, sizeof *out);
    return err;
}
