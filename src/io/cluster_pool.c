/* cluster_pool.c - spec.nodePools[] of a Cluster spec: the table of a
 * pool's fields, and the pool's own: name, gpu (model, count, memory,
 * NVLink domains, driver), labels, taints, size (count, or minCount, maxCount and
 * initialCount for an autoscaled pool), bootTime and topology. A pool is
 * checked once it is read (sharing, size, price, spot, topology, in that
 * order); pool names are unique and the cluster's nodes bounded. */
#include <stdio.h>
#include <string.h>

#include "io/cluster_internal.h"
#include "io/compat.h"

/* What a pool list walk needs beyond the cluster. */
struct pools_walk {
    struct gp_cluster *c;
    uint64_t nodes; /* total so far, against GP_CLUSTER_MAX_NODES */
};

/* --- spec.nodePools[].gpu ------------------------------------------------ */

/* gpu.driver: the NVIDIA driver of the pool's node image ("535.104.05"),
 * for the driver filter (docs/compat.md). */
static enum gp_err pool_gpu_driver(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pool_spec *p = obj;
    const char *s;
    char q[80];
    enum gp_err err = gp_yaml_text(y, v, "a driver version", &s);
    if (err == GP_OK && !gp_compat_parse_driver(s, &p->driver_version))
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected an NVIDIA driver version like \"535.104.05\", got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    return err;
}

static const struct gp_yaml_field gpu_fields[] = {
    GP_YFIELD("model", GP_YT_STRING, struct gp_pool_spec, gpu_model, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("count", GP_YT_U32, struct gp_pool_spec, gpus_per_node, GP_YF_REQUIRED, 1,
              GP_MAX_GPUS_PER_NODE),
    GP_YFIELD("memory", GP_YT_MEM_MIB32, struct gp_pool_spec, gpu_mem_mib, 0, 1, UINT32_MAX),
    GP_YFIELD("nvlinkDomain", GP_YT_U32, struct gp_pool_spec, nvlink_gpus, 0, 1,
              GP_MAX_GPUS_PER_NODE),
    GP_YCUSTOM("driver", pool_gpu_driver, 0),
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
    if (err == GP_OK && p->nvlink_gpus > p->gpus_per_node) {
        struct fy_node *m = fy_node_mapping_lookup_by_string(v, "nvlinkDomain", 12);
        struct gp_yaml_saved s = gp_yaml_push_key(y, "nvlinkDomain", m);
        err = gp_yaml_fail(y, m, GP_EINVALID,
                           "expected at most the node's %u GPUs per NVLink domain, got %u",
                           p->gpus_per_node, p->nvlink_gpus);
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
        return gp_cluster_oom(y);
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
        const char *owner = gp_cluster_label_owner(k);
        if (owner) {
            struct fy_node *kn = gp_yaml_key_node(v, k);
            struct gp_yaml_saved s = gp_yaml_push_key(y, k, kn);
            err = gp_yaml_fail(y, kn, GP_EINVALID,
                               "this label is set on every node from the pool's %s; remove it",
                               owner);
            gp_yaml_pop(y, s);
        }
    }
    return err;
}

/* --- spec.nodePools[]: size and boot ------------------------------------ */

#define MAX_BOOT_S 86400.0 /* a day */

static enum gp_err pool_u32(struct gp_yaml *y, struct fy_node *v, uint32_t *out)
{
    int64_t n;
    enum gp_err err = gp_yaml_int(y, v, 0, GP_CLUSTER_MAX_NODES, &n);
    if (err == GP_OK)
        *out = (uint32_t)n;
    return err;
}

static enum gp_err pool_count(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.count = v;
    return pool_u32(y, v, &po->spec.count);
}

static enum gp_err pool_min(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.min = v;
    return pool_u32(y, v, &po->spec.min_count);
}

static enum gp_err pool_max(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.max = v;
    return pool_u32(y, v, &po->spec.max_count);
}

static enum gp_err pool_initial(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.initial = v;
    return pool_u32(y, v, &po->spec.count);
}

static enum gp_err pool_boot(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.boot = v;
    return gp_cluster_read_duration(y, v, MAX_BOOT_S, &po->spec.boot_s);
}

/* count (a fixed pool) or minCount/maxCount/initialCount (autoscaled). */
static enum gp_err check_size(struct gp_yaml *y, struct fy_node *item, struct cluster_pool *po)
{
    struct gp_pool_spec *p = &po->spec;
    if (po->f.count) {
        struct fy_node *other = po->f.min ? po->f.min : po->f.max ? po->f.max : po->f.initial;
        if (other) {
            const char *k = po->f.min ? "minCount" : po->f.max ? "maxCount" : "initialCount";
            return gp_cluster_key_fail(
                y, k, other, GP_EINVALID,
                "not with count (count is a fixed size; an autoscaled pool gives "
                "minCount, maxCount and initialCount instead)");
        }
        p->min_count = p->max_count = p->count;
        return GP_OK;
    }
    if (!po->f.max) {
        return gp_yaml_fail(y, item, GP_EINVALID,
                            "missing required field \"count\" (a fixed size) or \"maxCount\" "
                            "(an autoscaled pool)");
    }
    if (p->max_count == 0)
        return gp_cluster_key_fail(
            y, "maxCount", po->f.max, GP_EINVALID,
            "expected at least 1 node, got 0 (a pool that never has a node is "
            "count: 0)");
    if (p->min_count > p->max_count)
        return gp_cluster_key_fail(y, "minCount", po->f.min, GP_EINVALID,
                                   "expected at most maxCount (%u), got %u", p->max_count,
                                   p->min_count);
    if (!po->f.initial)
        p->count = p->min_count;
    else if (p->count < p->min_count || p->count > p->max_count)
        return gp_cluster_key_fail(y, "initialCount", po->f.initial, GP_EINVALID,
                                   "expected from minCount (%u) to maxCount (%u), got %u",
                                   p->min_count, p->max_count, p->count);
    return GP_OK;
}

/* --- spec.nodePools[].topology ------------------------------------------ */

/* topology: {key: topology.kubernetes.io/rack, nodesPerDomain: 32} */
static const struct gp_yaml_field topology_fields[] = {
    GP_YFIELD("key", GP_YT_STRING, struct gp_pool_spec, topology_key, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("nodesPerDomain", GP_YT_U32, struct gp_pool_spec, nodes_per_domain, GP_YF_REQUIRED, 1,
              GP_CLUSTER_MAX_NODES),
};

static enum gp_err pool_topology(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.topology = v;
    if (!fy_node_is_mapping(v)) {
        char q[80];
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a mapping like {key: topology.kubernetes.io/rack, "
                            "nodesPerDomain: 32}, got \"%s\"",
                            gp_yaml_quote(v, q, sizeof q));
    }
    enum gp_err err = gp_yaml_object(
        y, v, topology_fields, sizeof topology_fields / sizeof topology_fields[0], &po->spec, true);
    if (err != GP_OK)
        return err;
    const char *k = po->spec.topology_key;
    struct fy_node *kn = fy_node_mapping_lookup_by_string(v, "key", 3);
    if (!gp_yaml_qualified_name_ok(k))
        return gp_cluster_key_fail(
            y, "key", kn, GP_EINVALID,
            "expected a label key ([prefix/]name) like topology.kubernetes.io/rack, "
            "got \"%s\"",
            k);
    const char *owner = gp_cluster_label_owner(k);
    if (owner)
        return gp_cluster_key_fail(
            y, "key", kn, GP_EINVALID,
            "this label is set on every node from the pool's %s; choose another key", owner);
    return GP_OK;
}

/* The topology's key is not also a fixed label, and its values
 * ("<pool>-d<k>") are label values of at most 63 characters. */
static enum gp_err check_topology(struct gp_yaml *y, struct cluster_pool *po)
{
    const struct gp_pool_spec *p = &po->spec;
    if (!po->f.topology)
        return GP_OK;
    struct gp_yaml_saved s = gp_yaml_push_key(y, "topology", po->f.topology);
    struct fy_node *kn = fy_node_mapping_lookup_by_string(po->f.topology, "key", 3);
    enum gp_err err = GP_OK;
    for (size_t i = 0; i < p->nlabels; i++)
        if (strcmp(p->labels[i].key, p->topology_key) == 0)
            err = gp_cluster_key_fail(
                y, "key", kn, GP_EINVALID,
                "%s is also one of the pool's labels (one value for every node); give "
                "either the label or the topology",
                p->topology_key);
    uint32_t nodes = p->max_count > p->count ? p->max_count : p->count;
    uint32_t last = nodes ? (nodes - 1) / p->nodes_per_domain : 0;
    char value[96];
    int n = snprintf(value, sizeof value, "%s-d%u", p->name ? p->name : "", last);
    if (err == GP_OK && (n < 0 || n > 63))
        err = gp_yaml_fail(y, po->f.topology, GP_EINVALID,
                           "the domains' label values (%s-d0 to %s-d%u) are longer than 63 "
                           "characters; use a shorter pool name",
                           p->name, p->name, last);
    gp_yaml_pop(y, s);
    return err;
}

/* --- spec.nodePools[] ---------------------------------------------------- */

bool gp_pool_is_dynamic(const struct gp_pool_spec *p)
{
    return p->max_count > p->min_count || p->spot || p->max_lifetime_s > 0;
}

static const struct gp_yaml_field pool_fields[] = {
    GP_YCUSTOM("name", pool_name, GP_YF_REQUIRED),
    GP_YCUSTOM("gpu", pool_gpu, 0),
    GP_YFIELD("cpu", GP_YT_CPU_MILLI, struct gp_pool_spec, cpu_milli, GP_YF_REQUIRED, 1, 1e12),
    GP_YFIELD("memory", GP_YT_MEM_MIB, struct gp_pool_spec, mem_mib, GP_YF_REQUIRED, 1, 1e12),
    GP_YCUSTOM("count", pool_count, 0),
    GP_YCUSTOM("minCount", pool_min, 0),
    GP_YCUSTOM("maxCount", pool_max, 0),
    GP_YCUSTOM("initialCount", pool_initial, 0),
    GP_YCUSTOM("bootTime", pool_boot, 0),
    GP_YCUSTOM("pricePerHour", gp_cluster_pool_price, 0),
    GP_YCUSTOM("pricePerGpuHour", gp_cluster_pool_gpu_price, 0),
    GP_YCUSTOM("onDemandPricePerHour", gp_cluster_pool_od_price, 0),
    GP_YCUSTOM("offer", gp_cluster_pool_offer, 0),
    GP_YCUSTOM("spot", gp_cluster_pool_spot, 0),
    GP_YCUSTOM("interruptionRate", gp_cluster_pool_rate, 0),
    GP_YCUSTOM("interruptionTimes", gp_cluster_pool_times, 0),
    GP_YCUSTOM("interruptionFile", gp_cluster_pool_file, 0),
    GP_YCUSTOM("spotNotice", gp_cluster_pool_notice, 0),
    GP_YCUSTOM("billingGranularity", gp_cluster_pool_granularity, 0),
    GP_YCUSTOM("billingMinimum", gp_cluster_pool_minimum, 0),
    GP_YCUSTOM("maxNodeLifetime", gp_cluster_pool_lifetime, 0),
    GP_YCUSTOM("labels", pool_labels, 0),
    GP_YCUSTOM("taints", pool_taints, 0),
    GP_YCUSTOM("sharing", gp_cluster_pool_sharing, 0),
    GP_YCUSTOM("topology", pool_topology, 0),
};

static enum gp_err pool_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct pools_walk *w = ctx;
    struct gp_pool_spec *p = &w->c->pools[i];
    struct cluster_pool po;
    memset(&po, 0, sizeof po);
    enum gp_err err =
        gp_yaml_object(y, item, pool_fields, sizeof pool_fields / sizeof pool_fields[0], &po, true);
    if (err == GP_OK)
        err = gp_cluster_check_sharing(y, &po);
    if (err == GP_OK)
        err = check_size(y, item, &po);
    if (err == GP_OK)
        err = gp_cluster_check_price(y, &po);
    if (err == GP_OK)
        err = gp_cluster_check_spot(y, &po);
    if (err == GP_OK)
        err = check_topology(y, &po);
    if (err == GP_OK)
        err = gp_cluster_check_limits(y, &po);
    if (err != GP_OK)
        return err;
    *p = po.spec;
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
    w->nodes += p->max_count > p->count ? p->max_count : p->count;
    if (w->nodes > GP_CLUSTER_MAX_NODES) {
        const char *key = po.f.count ? "count" : "maxCount";
        struct fy_node *n = fy_node_mapping_lookup_by_string(item, key, strlen(key));
        struct gp_yaml_saved s = gp_yaml_push_key(y, key, n);
        err = gp_yaml_fail(y, n, GP_ELIMIT, "the cluster has more than %d nodes in all",
                           GP_CLUSTER_MAX_NODES);
        gp_yaml_pop(y, s);
        return err;
    }
    w->c->npools = i + 1;
    return GP_OK;
}

enum gp_err gp_cluster_spec_pools(struct gp_yaml *y, struct fy_node *v, void *obj)
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
        return gp_cluster_oom(y);
    return gp_yaml_list(y, v, pool_item, &w);
}
