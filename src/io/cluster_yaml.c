/* cluster_yaml.c - the gpuplane Cluster spec reader (apiVersion
 * gpuplane.io/v1, kind Cluster): node pools with GPU model and count,
 * per-node CPU and memory, size, price, labels, taints and GPU sharing
 * (time-slicing, MPS, MIG). Every object is a table of fields below;
 * adding a field is a row (and, for a new kind of value, a small
 * handler). Unknown fields are errors. Checks that need the whole pool
 * (sharing against the GPU model) run once the pool is read. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/cluster.h"
#include "io/providers.h"
#include "io/yaml_walk.h"
#include "util/units.h"
#include "util/vec.h"

/* What a pool list walk needs beyond the cluster. */
struct pools_walk {
    struct gp_cluster *c;
    uint64_t nodes; /* total so far, against GP_CLUSTER_MAX_NODES */
};

/* A pool while it is read: the spec (first, so the field table's offsets
 * hold) and the sharing fields' nodes, kept for the checks that run when
 * the whole pool is known. A NULL node is a field not written. */
struct layout_entry {
    const char *profile;
    uint32_t count;
    struct fy_node *key, *value;
};

struct pool_obj {
    struct gp_pool_spec spec;
    struct {
        struct fy_node *node, *mode, *replicas, *rename, *fail_gt1, *oversubscribe, *mps, *mig;
        struct fy_node *mps_pct, *mps_mem, *mig_strategy, *mig_layout, *mig_dynamic;
        struct fy_node *mig_reconf;
        int64_t mps_mem_mib;
        const char *layout_name; /* layout: all-balanced */
        struct layout_entry *layout;
        size_t nlayout;
    } sh;
    /* size, price and spot fields as written (NULL: not written) */
    struct {
        struct fy_node *count, *min, *max, *initial, *boot, *price, *gpu_price, *od_price;
        struct fy_node *offer, *spot, *rate, *times, *file, *notice, *topology;
        double gpu_price_usd;
        const char *offer_provider, *offer_instance, *offer_gpu;
    } f;
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
    GP_YFIELD("nvlinkDomain", GP_YT_U32, struct gp_pool_spec, nvlink_gpus, 0, 1,
              GP_MAX_GPUS_PER_NODE),
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
        return oom(y);
    enum gp_err err = gp_yaml_list(y, v, taint_item, taints);
    if (err == GP_OK) {
        p->taints = taints;
        p->ntaints = (size_t)n;
    }
    return err;
}

/* --- spec.nodePools[].sharing -------------------------------------------- */

static enum gp_err yaml_bool(struct gp_yaml *y, struct fy_node *v, bool *out)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "true or false", &s);
    if (err != GP_OK)
        return err;
    bool plain = fy_node_get_style(v) == FYNS_PLAIN;
    if (plain && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")))
        *out = true;
    else if (plain && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")))
        *out = false;
    else {
        char q[80];
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected true or false%s, got \"%s\"",
                           plain ? "" : " without quotes", gp_yaml_quote(v, q, sizeof q));
    }
    return err;
}

static enum gp_err sharing_mode(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    static const enum gp_share_mode modes[] = {GP_SHARE_EXCLUSIVE, GP_SHARE_TIMESLICE, GP_SHARE_MPS,
                                               GP_SHARE_MIG};
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a sharing mode", &s);
    if (err != GP_OK)
        return err;
    po->sh.mode = v;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(s, gp_share_mode_name(modes[i])) == 0) {
            po->spec.sharing.mode = modes[i];
            return GP_OK;
        }
    }
    char q[80];
    return gp_yaml_fail(y, v, GP_EINVALID, "expected exclusive, timeslice, mps or mig, got \"%s\"",
                        gp_yaml_quote(v, q, sizeof q));
}

static enum gp_err sharing_replicas(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    int64_t n;
    enum gp_err err = gp_yaml_int(y, v, 2, GP_SHARE_MAX_REPLICAS, &n);
    if (err == GP_OK) {
        po->spec.sharing.replicas = (uint32_t)n;
        po->sh.replicas = v;
    }
    return err;
}

static enum gp_err sharing_rename(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.rename = v;
    return yaml_bool(y, v, &po->spec.sharing.rename_by_default);
}

static enum gp_err sharing_fail_gt1(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.fail_gt1 = v;
    return yaml_bool(y, v, &po->spec.sharing.fail_requests_greater_than_one);
}

static enum gp_err sharing_oversubscribe(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.oversubscribe = v;
    return yaml_bool(y, v, &po->spec.sharing.oversubscribe);
}

static enum gp_err mps_pct(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    int64_t n;
    enum gp_err err = gp_yaml_int(y, v, 1, 100, &n);
    if (err == GP_OK) {
        po->spec.sharing.mps.active_thread_pct = (uint32_t)n;
        po->sh.mps_pct = v;
    }
    return err;
}

static enum gp_err mps_mem(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    enum gp_err err = gp_yaml_mem_mib(y, v, &po->sh.mps_mem_mib);
    char q[80];
    if (err == GP_OK && (po->sh.mps_mem_mib <= 0 || po->sh.mps_mem_mib > UINT32_MAX))
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "expected a memory quantity from 1Mi to 4Pi, got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    if (err == GP_OK)
        po->sh.mps_mem = v;
    return err;
}

static const struct gp_yaml_field mps_fields[] = {
    GP_YCUSTOM("activeThreadPercentage", mps_pct, 0),
    GP_YCUSTOM("pinnedMemoryLimit", mps_mem, 0),
};

static enum gp_err sharing_mps(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.mps = v;
    return gp_yaml_object(y, v, mps_fields, sizeof mps_fields / sizeof mps_fields[0], po, true);
}

static enum gp_err mig_strategy(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "single or mixed", &s);
    if (err != GP_OK)
        return err;
    po->sh.mig_strategy = v;
    if (strcmp(s, "single") == 0)
        po->spec.sharing.mig.strategy = GP_MIG_SINGLE;
    else if (strcmp(s, "mixed") == 0)
        po->spec.sharing.mig.strategy = GP_MIG_MIXED;
    else {
        char q[80];
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected single or mixed, got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    }
    return err;
}

static enum gp_err mig_layout(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.mig_layout = v;
    if (fy_node_is_scalar(v) && !fy_node_is_alias(v))
        return gp_yaml_string(y, v, &po->sh.layout_name);
    if (!fy_node_is_mapping(v)) {
        const char *unused;
        if (fy_node_is_alias(v))
            return gp_yaml_text(y, v, "a mapping", &unused);
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a map of MIG profiles to counts like {\"1g.10gb\": 7} or a "
                            "mig-parted config name like all-1g.10gb, got %s",
                            gp_yaml_describe(v));
    }
    int total = fy_node_mapping_item_count(v);
    if (total > GP_MIG_MAX_PROFILES)
        return gp_yaml_fail(y, v, GP_ELIMIT, "%d profiles, more than a GPU has (%d)", total,
                            GP_MIG_MAX_PROFILES);
    if (total <= 0)
        return GP_OK;
    po->sh.layout = gp_arena_alloc(y->arena, (size_t)total * sizeof *po->sh.layout);
    if (!po->sh.layout)
        return oom(y);
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(v, &it)) != NULL && po->sh.nlayout < (size_t)total) {
        struct layout_entry *e = &po->sh.layout[po->sh.nlayout];
        e->key = fy_node_pair_key(pair);
        e->value = fy_node_pair_value(pair);
        enum gp_err err = gp_yaml_text(y, e->key, "a MIG profile name", &e->profile);
        if (err != GP_OK)
            return err;
        struct gp_yaml_saved sv = gp_yaml_push_key(y, e->profile, e->key);
        int64_t n = 0;
        err = gp_yaml_int(y, e->value, 0, 64, &n);
        gp_yaml_pop(y, sv);
        if (err != GP_OK)
            return err;
        e->count = (uint32_t)n;
        po->sh.nlayout++;
    }
    return GP_OK;
}

static enum gp_err mig_dynamic(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.mig_dynamic = v;
    return yaml_bool(y, v, &po->spec.sharing.mig.dynamic);
}

static enum gp_err yaml_duration(struct gp_yaml *y, struct fy_node *v, double max_s, double *out);

/* How long a dynamic re-partition takes before its instance serves a pod. */
static enum gp_err mig_reconfigure(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.mig_reconf = v;
    return yaml_duration(y, v, 86400, &po->spec.sharing.mig.reconfigure_s);
}

static const struct gp_yaml_field mig_fields[] = {
    GP_YCUSTOM("strategy", mig_strategy, 0),
    GP_YCUSTOM("layout", mig_layout, 0),
    GP_YCUSTOM("dynamic", mig_dynamic, 0),
    GP_YCUSTOM("reconfigureTime", mig_reconfigure, 0),
};

static enum gp_err sharing_mig(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.mig = v;
    return gp_yaml_object(y, v, mig_fields, sizeof mig_fields / sizeof mig_fields[0], po, true);
}

static const struct gp_yaml_field sharing_fields[] = {
    GP_YCUSTOM("mode", sharing_mode, 0),
    GP_YCUSTOM("replicas", sharing_replicas, 0),
    GP_YCUSTOM("renameByDefault", sharing_rename, 0),
    GP_YCUSTOM("failRequestsGreaterThanOne", sharing_fail_gt1, 0),
    GP_YCUSTOM("oversubscribe", sharing_oversubscribe, 0),
    GP_YCUSTOM("mps", sharing_mps, 0),
    GP_YCUSTOM("mig", sharing_mig, 0),
};

static enum gp_err pool_sharing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->sh.node = v;
    return gp_yaml_object(y, v, sharing_fields, sizeof sharing_fields / sizeof sharing_fields[0],
                          po, true);
}

/* Fails at node `at` with the path ...sharing[.sub[.field]] pushed. */
static enum gp_err sharing_fail(struct gp_yaml *y, const struct pool_obj *po, const char *sub,
                                const char *field, struct fy_node *at, enum gp_err err,
                                const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static enum gp_err sharing_fail(struct gp_yaml *y, const struct pool_obj *po, const char *sub,
                                const char *field, struct fy_node *at, enum gp_err err,
                                const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct gp_yaml_saved s0 = gp_yaml_push_key(y, "sharing", NULL);
    struct fy_node *parent = po->sh.node;
    if (sub) {
        struct fy_node *subnode = fy_node_mapping_lookup_by_string(parent, sub, strlen(sub));
        gp_yaml_push_key(y, sub, gp_yaml_key_node(parent, sub));
        parent = subnode;
    }
    if (field)
        gp_yaml_push_key(y, field, gp_yaml_key_node(parent, field));
    err = gp_yaml_fail(y, at, err, "%s", msg);
    gp_yaml_pop(y, s0);
    return err;
}

/* A field written for a mode that does not use it. */
static enum gp_err sharing_unused(struct gp_yaml *y, const struct pool_obj *po, const char *field,
                                  struct fy_node *at, const char *modes, const char *why)
{
    return sharing_fail(y, po, NULL, field, at, GP_EINVALID,
                        "only with mode: %s; the pool's mode is %s%s", modes,
                        gp_share_mode_name(po->spec.sharing.mode), why);
}

/* "A30-24GB, A100-40GB, ..." for messages. */
static const char *mig_model_list(char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < gp_mig_nmodels && o < size; i++) {
        int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", gp_mig_models[i].id);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

static const char *profile_list(const struct gp_mig_model *m, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->nprofiles && o < size; i++) {
        int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", m->profiles[i].name);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    return buf;
}

/* MIG: the model, the layout (a profile map or a named config) placed on
 * the GPU, the strategy's rule and dynamic re-partitioning. */
static enum gp_err check_mig(struct gp_yaml *y, struct pool_obj *po)
{
    struct gp_sharing_spec *sh = &po->spec.sharing;
    char buf[200];
    const struct gp_mig_model *m = gp_mig_model_find(po->spec.gpu_model);
    if (!m)
        return sharing_fail(y, po, NULL, "mode", po->sh.mode, GP_EINVALID,
                            "mode mig needs a GPU model with MIG (%s); gpu.model %s has none",
                            mig_model_list(buf, sizeof buf), po->spec.gpu_model);
    sh->mig.model = m;
    if (!po->sh.mig)
        return sharing_fail(y, po, NULL, NULL, po->sh.node, GP_EINVALID,
                            "missing required field \"mig\" (mode: mig)");
    struct gp_mig_counts counts;
    memset(&counts, 0, sizeof counts);
    if (po->sh.layout_name) {
        bool enabled;
        if (!gp_mig_named_config(m, po->sh.layout_name, &counts, &enabled))
            return sharing_fail(y, po, "mig", "layout", po->sh.mig_layout, GP_EINVALID,
                                "\"%s\" is not a mig-parted config for %s (expected a map like "
                                "{\"%s\": %u}, all-balanced, or all-<profile> with a profile of: "
                                "%s)",
                                po->sh.layout_name, m->id, m->profiles[0].name,
                                m->profiles[0].max_instances, profile_list(m, buf, sizeof buf));
        if (!enabled)
            return sharing_fail(y, po, "mig", "layout", po->sh.mig_layout, GP_EINVALID,
                                "all-disabled turns MIG off; use mode: exclusive");
        sh->mig.config = po->sh.layout_name;
    }
    for (size_t i = 0; i < po->sh.nlayout; i++) {
        const struct layout_entry *e = &po->sh.layout[i];
        int p = gp_mig_profile_find(m, e->profile);
        if (p < 0) {
            struct gp_yaml_saved s0 = gp_yaml_push_key(y, "sharing", NULL);
            gp_yaml_push_key(y, "mig", NULL);
            gp_yaml_push_key(y, "layout", NULL);
            gp_yaml_push_key(y, e->profile, e->key);
            char q[80];
            enum gp_err err = gp_yaml_fail(
                y, e->key, GP_EINVALID, "\"%s\" is not a MIG profile of %s (expected one of: %s)",
                gp_yaml_quote(e->key, q, sizeof q), m->id, profile_list(m, buf, sizeof buf));
            gp_yaml_pop(y, s0);
            return err;
        }
        if (counts.n[p] != 0 || e->count > UINT8_MAX)
            return sharing_fail(y, po, "mig", "layout", e->key, GP_EINVALID, "\"%s\" written twice",
                                e->profile);
        counts.n[p] = (uint8_t)e->count;
    }
    char why[200];
    if (!gp_mig_layout_from_counts(m, &counts, &sh->mig.layout, why, sizeof why))
        return sharing_fail(y, po, "mig", "layout", po->sh.mig_layout, GP_EINVALID, "%s", why);
    if (sh->mig.layout.n == 0 && !sh->mig.dynamic)
        return sharing_fail(y, po, "mig", po->sh.mig_layout ? "layout" : NULL,
                            po->sh.mig_layout ? po->sh.mig_layout : po->sh.mig, GP_EINVALID,
                            "%s: no GPU instances, so the GPUs could not be used; give a layout "
                            "like {\"%s\": %u} or set dynamic: true",
                            po->sh.mig_layout ? "an empty layout" : "missing layout",
                            m->profiles[0].name, m->profiles[0].max_instances);
    if (po->sh.mig_reconf && !sh->mig.dynamic)
        return sharing_fail(y, po, "mig", "reconfigureTime", po->sh.mig_reconf, GP_EINVALID,
                            "only with dynamic: true (a static layout is never re-partitioned)");
    if (sh->mig.strategy == GP_MIG_SINGLE) {
        if (sh->mig.dynamic)
            return sharing_fail(y, po, "mig", "dynamic", po->sh.mig_dynamic, GP_EINVALID,
                                "dynamic MIG needs strategy: mixed (single advertises every "
                                "instance as nvidia.com/gpu, so pods cannot ask for a profile)");
        for (unsigned i = 1; i < sh->mig.layout.n; i++)
            if (sh->mig.layout.inst[i].profile != sh->mig.layout.inst[0].profile)
                return sharing_fail(
                    y, po, "mig", "layout", po->sh.mig_layout, GP_EINVALID,
                    "strategy single needs every instance to be the same profile, the layout "
                    "has %s and %s (use strategy: mixed)",
                    m->profiles[sh->mig.layout.inst[0].profile].name,
                    m->profiles[sh->mig.layout.inst[i].profile].name);
    }
    return GP_OK;
}

/* MPS: at most 48 clients, limits no larger than the device plugin's
 * equal shares (a client can only lower them), defaults as it sets them. */
static enum gp_err check_mps(struct gp_yaml *y, struct pool_obj *po)
{
    struct gp_sharing_spec *sh = &po->spec.sharing;
    if (sh->replicas > GP_MPS_MAX_CLIENTS)
        return sharing_fail(y, po, NULL, "replicas", po->sh.replicas, GP_EINVALID,
                            "MPS allows at most %d clients per GPU (Volta and newer), got %u",
                            GP_MPS_MAX_CLIENTS, sh->replicas);
    if (po->sh.fail_gt1 && !sh->fail_requests_greater_than_one)
        return sharing_fail(y, po, NULL, "failRequestsGreaterThanOne", po->sh.fail_gt1, GP_EINVALID,
                            "NVIDIA's device plugin always refuses MPS requests for more than "
                            "one replica; remove the field or set it to true");
    sh->fail_requests_greater_than_one = true;
    uint32_t share_pct = 100 / sh->replicas;
    if (!po->sh.mps_pct)
        sh->mps.active_thread_pct = share_pct;
    else if (sh->mps.active_thread_pct > share_pct)
        return sharing_fail(y, po, "mps", "activeThreadPercentage", po->sh.mps_pct, GP_EINVALID,
                            "%u is more than the %u %% NVIDIA's device plugin gives each of %u "
                            "MPS clients (100 / replicas); a client can only lower it",
                            sh->mps.active_thread_pct, share_pct, sh->replicas);
    uint32_t share_mib = po->spec.gpu_mem_mib / sh->replicas;
    if (!po->sh.mps_mem) {
        sh->mps.pinned_mem_mib = share_mib;
    } else if (po->spec.gpu_mem_mib && (uint64_t)po->sh.mps_mem_mib > share_mib) {
        char q[80];
        return sharing_fail(y, po, "mps", "pinnedMemoryLimit", po->sh.mps_mem, GP_EINVALID,
                            "%s is more than the %uMi NVIDIA's device plugin gives each of %u "
                            "MPS clients (the GPU's memory / replicas); a client can only lower "
                            "it",
                            gp_yaml_quote(po->sh.mps_mem, q, sizeof q), share_mib, sh->replicas);
    } else {
        sh->mps.pinned_mem_mib = (uint32_t)po->sh.mps_mem_mib;
    }
    return GP_OK;
}

/* The sharing spec against the rest of the pool, once the pool is read. */
static enum gp_err check_sharing(struct gp_yaml *y, struct pool_obj *po)
{
    struct gp_sharing_spec *sh = &po->spec.sharing;
    enum gp_share_mode mode = sh->mode;
    bool replicated = mode == GP_SHARE_TIMESLICE || mode == GP_SHARE_MPS;
    if (!po->sh.node) {
        sh->replicas = 1;
        return GP_OK;
    }
    if (mode != GP_SHARE_EXCLUSIVE && (!po->spec.gpu_model || po->spec.gpus_per_node == 0))
        return sharing_fail(y, po, NULL, "mode", po->sh.mode, GP_EINVALID,
                            "sharing needs GPUs; the pool has no gpu");
    if (!replicated) {
        const char *why = mode == GP_SHARE_MIG ? " (a MIG instance is not shared further)" : "";
        if (po->sh.replicas)
            return sharing_unused(y, po, "replicas", po->sh.replicas, "timeslice or mps", why);
        if (po->sh.rename)
            return sharing_unused(y, po, "renameByDefault", po->sh.rename, "timeslice or mps", why);
        if (po->sh.fail_gt1)
            return sharing_unused(y, po, "failRequestsGreaterThanOne", po->sh.fail_gt1,
                                  "timeslice or mps", why);
        sh->replicas = 1;
    } else if (!po->sh.replicas) {
        return sharing_fail(y, po, NULL, NULL, po->sh.node, GP_EINVALID,
                            "missing required field \"replicas\" (mode: %s)",
                            gp_share_mode_name(mode));
    }
    if (po->sh.oversubscribe && mode != GP_SHARE_TIMESLICE)
        return sharing_unused(y, po, "oversubscribe", po->sh.oversubscribe, "timeslice",
                              mode == GP_SHARE_MPS ? " (MPS enforces each client's memory limit)"
                                                   : "");
    if (po->sh.mps && mode != GP_SHARE_MPS)
        return sharing_unused(y, po, "mps", po->sh.mps, "mps",
                              mode == GP_SHARE_MIG ? " (MPS cannot run on a GPU in MIG mode)" : "");
    if (po->sh.mig && mode != GP_SHARE_MIG)
        return sharing_unused(y, po, "mig", po->sh.mig, "mig",
                              mode == GP_SHARE_MPS ? " (MPS cannot run on a GPU in MIG mode)" : "");
    if (mode == GP_SHARE_MPS)
        return check_mps(y, po);
    if (mode == GP_SHARE_MIG)
        return check_mig(y, po);
    return GP_OK;
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

/* --- spec.nodePools[]: size, boot, prices, spot ----------------------- */

/* Fails at node `at` with ".key" pushed on the path. */
static enum gp_err key_fail(struct gp_yaml *y, const char *key, struct fy_node *at, enum gp_err err,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static enum gp_err key_fail(struct gp_yaml *y, const char *key, struct fy_node *at, enum gp_err err,
                            const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct gp_yaml_saved s = gp_yaml_push_key(y, key, at);
    err = gp_yaml_fail(y, at, err, "%s", msg);
    gp_yaml_pop(y, s);
    return err;
}

/* A duration like 90s, 4m or 1h30m, at most max_s. */
static enum gp_err yaml_duration(struct gp_yaml *y, struct fy_node *v, double max_s, double *out)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err != GP_OK)
        return err;
    double d;
    if (!gp_units_duration_s(s, &d) || !(d <= max_s)) {
        char q[80];
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a duration like 30s, 4m or 1h30m (at most %g s), got \"%s\"",
                            max_s, gp_yaml_quote(v, q, sizeof q));
    }
    *out = d;
    return GP_OK;
}

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
    struct pool_obj *po = obj;
    po->f.count = v;
    return pool_u32(y, v, &po->spec.count);
}

static enum gp_err pool_min(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.min = v;
    return pool_u32(y, v, &po->spec.min_count);
}

static enum gp_err pool_max(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.max = v;
    return pool_u32(y, v, &po->spec.max_count);
}

static enum gp_err pool_initial(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.initial = v;
    return pool_u32(y, v, &po->spec.count);
}

#define MAX_BOOT_S       86400.0 /* a day */
#define MAX_NOTICE_S     3600.0
#define MAX_PRICE        1e6
#define MAX_RATE         1000.0 /* interruptions per node-hour */
#define MAX_TIMES        1000000
#define MAX_TIME_S       1e9
#define MAX_SERIES_BYTES (16u << 20)

static enum gp_err pool_boot(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.boot = v;
    return yaml_duration(y, v, MAX_BOOT_S, &po->spec.boot_s);
}

static enum gp_err pool_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &po->spec.price_per_hour_usd);
}

static enum gp_err pool_gpu_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.gpu_price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &po->f.gpu_price_usd);
}

static enum gp_err pool_od_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.od_price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &po->spec.on_demand_per_hour_usd);
}

static const struct gp_yaml_field offer_fields[] = {
    GP_YFIELD("provider", GP_YT_STRING, struct pool_obj, f.offer_provider, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("instance", GP_YT_STRING, struct pool_obj, f.offer_instance, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("gpu", GP_YT_STRING, struct pool_obj, f.offer_gpu, 0, 0, 0),
};

/* offer: "provider/instance", or {provider, instance, gpu} when the
 * instance name has a slash or names several offers. */
static enum gp_err pool_offer(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.offer = v;
    if (fy_node_is_mapping(v))
        return gp_yaml_object(y, v, offer_fields, sizeof offer_fields / sizeof offer_fields[0], po,
                              true);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "an offer like eks/p4de.24xlarge", &s);
    if (err != GP_OK)
        return err;
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1]) {
        char q[80];
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected an offer of data/providers.json as provider/instance like "
                            "eks/p4de.24xlarge, got \"%s\"",
                            gp_yaml_quote(v, q, sizeof q));
    }
    char *prov = gp_arena_strdup(y->arena, s);
    if (!prov)
        return oom(y);
    prov[slash - s] = '\0';
    po->f.offer_provider = prov;
    po->f.offer_instance = prov + (slash - s) + 1;
    return GP_OK;
}

/* topology: {key: topology.kubernetes.io/rack, nodesPerDomain: 32} */
static const struct gp_yaml_field topology_fields[] = {
    GP_YFIELD("key", GP_YT_STRING, struct gp_pool_spec, topology_key, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("nodesPerDomain", GP_YT_U32, struct gp_pool_spec, nodes_per_domain, GP_YF_REQUIRED, 1,
              GP_CLUSTER_MAX_NODES),
};

static enum gp_err pool_topology(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
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
        return key_fail(y, "key", kn, GP_EINVALID,
                        "expected a label key ([prefix/]name) like topology.kubernetes.io/rack, "
                        "got \"%s\"",
                        k);
    if (strcmp(k, "gpuplane.io/pool") == 0 || strcmp(k, "nvidia.com/gpu.product") == 0)
        return key_fail(y, "key", kn, GP_EINVALID,
                        "this label is set on every node from the pool's %s; choose another key",
                        k[0] == 'g' ? "name" : "gpu.model");
    return GP_OK;
}

/* The topology's key is not also a fixed label, and its values
 * ("<pool>-d<k>") are label values of at most 63 characters. */
static enum gp_err check_topology(struct gp_yaml *y, struct pool_obj *po)
{
    const struct gp_pool_spec *p = &po->spec;
    if (!po->f.topology)
        return GP_OK;
    struct gp_yaml_saved s = gp_yaml_push_key(y, "topology", po->f.topology);
    struct fy_node *kn = fy_node_mapping_lookup_by_string(po->f.topology, "key", 3);
    enum gp_err err = GP_OK;
    for (size_t i = 0; i < p->nlabels; i++)
        if (strcmp(p->labels[i].key, p->topology_key) == 0)
            err = key_fail(y, "key", kn, GP_EINVALID,
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

static enum gp_err pool_spot(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.spot = v;
    return yaml_bool(y, v, &po->spec.spot);
}

static enum gp_err pool_rate(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.rate = v;
    return gp_yaml_number(y, v, 0, MAX_RATE, &po->spec.spot_rate_per_node_hour);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

struct times_walk {
    double *t;
};

static enum gp_err time_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct times_walk *w = ctx;
    return yaml_duration(y, item, MAX_TIME_S, &w->t[i]);
}

static enum gp_err pool_times(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.times = v;
    if (!fy_node_is_sequence(v))
        return gp_yaml_list(y, v, time_item, NULL); /* reports the type */
    int n = fy_node_sequence_item_count(v);
    if (n <= 0)
        return GP_OK;
    if (n > MAX_TIMES)
        return gp_yaml_fail(y, v, GP_ELIMIT, "%d times, more than the %d supported", n, MAX_TIMES);
    struct times_walk w = {gp_arena_alloc(y->arena, (size_t)n * sizeof(double))};
    if (!w.t)
        return oom(y);
    enum gp_err err = gp_yaml_list(y, v, time_item, &w);
    if (err != GP_OK)
        return err;
    qsort(w.t, (size_t)n, sizeof *w.t, cmp_double);
    po->spec.spot_times_s = w.t;
    po->spec.nspot_times = (size_t)n;
    return GP_OK;
}

/* The directory part of the YAML file's name, with its slash ("" when none). */
static size_t dir_len(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? (size_t)(slash - name) + 1 : 0;
}

/* interruptionFile: a text file of times (one duration per line, "#"
 * comments and blank lines ignored), relative to the cluster file. */
static enum gp_err pool_file(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    const char *rel;
    po->f.file = v;
    enum gp_err err = gp_yaml_string(y, v, &rel);
    if (err != GP_OK)
        return err;
    size_t dl = rel[0] == '/' ? 0 : dir_len(y->name);
    char *path = gp_arena_printf(y->arena, "%.*s%s", (int)dl, y->name, rel);
    if (!path)
        return oom(y);
    char q[80];
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_SERIES_BYTES)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a readable regular file of at most 16 MiB, got \"%s\" (%s)",
                            gp_yaml_quote(v, q, sizeof q), path);
    FILE *f = fopen(path, "r");
    if (!f)
        return gp_yaml_fail(y, v, GP_EIO, "cannot open \"%s\" (%s)", gp_yaml_quote(v, q, sizeof q),
                            path);
    GP_VEC(double) t = {0};
    char line[256];
    unsigned lineno = 0;
    while (err == GP_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *c = strchr(line, '#');
        if (c)
            *c = '\0';
        char *b = line, *e = line + strlen(line);
        while (*b == ' ' || *b == '\t')
            b++;
        while (e > b && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        double d;
        if (!*b)
            continue;
        if (!gp_units_duration_s(b, &d) || !(d <= MAX_TIME_S))
            err = gp_yaml_fail(y, v, GP_EINVALID,
                               "%s:%u: expected a time from the start like 3600, 90m or 2h30m, "
                               "got \"%.40s\"",
                               path, lineno, b);
        else if (t.len >= MAX_TIMES)
            err = gp_yaml_fail(y, v, GP_ELIMIT, "%s: more than %d times", path, MAX_TIMES);
        else if (GP_VEC_PUSH(&t, d) != 0)
            err = oom(y);
    }
    fclose(f);
    if (err == GP_OK && t.len > 0) {
        qsort(t.items, t.len, sizeof *t.items, cmp_double);
        po->spec.spot_times_s = gp_arena_memdup(y->arena, t.items, t.len * sizeof *t.items);
        po->spec.nspot_times = t.len;
        if (!po->spec.spot_times_s)
            err = oom(y);
    }
    GP_VEC_FREE(&t);
    return err;
}

static enum gp_err pool_notice(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pool_obj *po = obj;
    po->f.notice = v;
    return yaml_duration(y, v, MAX_NOTICE_S, &po->spec.spot_notice_s);
}

/* count (a fixed pool) or minCount/maxCount/initialCount (autoscaled). */
static enum gp_err check_size(struct gp_yaml *y, struct fy_node *item, struct pool_obj *po)
{
    struct gp_pool_spec *p = &po->spec;
    if (po->f.count) {
        struct fy_node *other = po->f.min ? po->f.min : po->f.max ? po->f.max : po->f.initial;
        if (other) {
            const char *k = po->f.min ? "minCount" : po->f.max ? "maxCount" : "initialCount";
            return key_fail(y, k, other, GP_EINVALID,
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
        return key_fail(y, "maxCount", po->f.max, GP_EINVALID,
                        "expected at least 1 node, got 0 (a pool that never has a node is "
                        "count: 0)");
    if (p->min_count > p->max_count)
        return key_fail(y, "minCount", po->f.min, GP_EINVALID,
                        "expected at most maxCount (%u), got %u", p->max_count, p->min_count);
    if (!po->f.initial)
        p->count = p->min_count;
    else if (p->count < p->min_count || p->count > p->max_count)
        return key_fail(y, "initialCount", po->f.initial, GP_EINVALID,
                        "expected from minCount (%u) to maxCount (%u), got %u", p->min_count,
                        p->max_count, p->count);
    return GP_OK;
}

/* The offer a pool names, or NULL with diag set. */
static const struct gp_offer *offer_find(struct gp_yaml *y, struct pool_obj *po, enum gp_err *err)
{
    const char *prov = po->f.offer_provider, *inst = po->f.offer_instance;
    const struct gp_offer *found = NULL;
    size_t nprov = 0, nmatch = 0, li = 0, lg = 0;
    char insts[240], gpus[240];
    insts[0] = gpus[0] = '\0';
    for (size_t i = 0; i < gp_noffers; i++) {
        const struct gp_offer *o = &gp_offers[i];
        if (strcmp(o->provider, prov) != 0)
            continue;
        nprov++;
        bool inst_ok = strcmp(o->instance, inst) == 0;
        if (inst_ok && (!po->f.offer_gpu || strcmp(o->gpu, po->f.offer_gpu) == 0)) {
            found = found ? found : o;
            nmatch++;
        }
        char *list = inst_ok ? gpus : insts;
        size_t *lo = inst_ok ? &lg : &li;
        const char *what = inst_ok ? o->gpu : o->instance;
        if (*what && *lo < sizeof insts) {
            int w = snprintf(list + *lo, sizeof insts - *lo, "%s%s", *lo ? ", " : "", what);
            *lo += w > 0 ? (size_t)w : 0;
        }
    }
    if (nmatch == 1)
        return found;
    if (nprov == 0)
        *err = key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "no provider \"%s\" with GPU offers in data/providers.json "
                        "(e.g. eks, gke, aks, oke, coreweave, lambda)",
                        prov);
    else if (nmatch == 0 && lg > 0)
        *err = key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "%s/%s has no offer with gpu \"%s\" (expected one of: %s)", prov, inst,
                        po->f.offer_gpu, gpus);
    else if (nmatch == 0)
        *err = key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "%s has no offer \"%s\" in data/providers.json (expected one of: %s)", prov,
                        inst, insts);
    else
        *err = key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "%s/%s names %zu offers; write offer: {provider: %s, instance: %s, gpu: "
                        "...} with gpu one of: %s",
                        prov, inst, nmatch, prov, inst, gpus);
    return NULL;
}

double gp_offer_node_price(const struct gp_offer *o, uint32_t gpus, int spot)
{
    double node = spot ? o->spot_node_hour : o->on_demand_node_hour;
    double gpu = spot ? o->spot_gpu_hour : o->on_demand_gpu_hour;
    if (node >= 0 && (o->gpus_per_node == 0 || o->gpus_per_node == gpus))
        return node;
    if (gpu >= 0 && gpus > 0)
        return gpu * gpus;
    return -1;
}

/* pricePerHour, pricePerGpuHour or offer: one of them; the offer resolved. */
static enum gp_err check_price(struct gp_yaml *y, struct pool_obj *po)
{
    struct gp_pool_spec *p = &po->spec;
    bool gpu = p->gpu_model && p->gpus_per_node > 0;
    if (po->f.price && po->f.gpu_price)
        return key_fail(y, "pricePerGpuHour", po->f.gpu_price, GP_EINVALID,
                        "not with pricePerHour (give the node's price or the GPU's, not both)");
    if (po->f.offer && (po->f.price || po->f.gpu_price))
        return key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "not with %s (the offer gives the price)",
                        po->f.price ? "pricePerHour" : "pricePerGpuHour");
    if (po->f.gpu_price) {
        if (!gpu)
            return key_fail(y, "pricePerGpuHour", po->f.gpu_price, GP_EINVALID,
                            "the pool has no GPUs; give pricePerHour");
        p->price_per_hour_usd = po->f.gpu_price_usd * p->gpus_per_node;
    }
    if (po->f.od_price && !p->spot)
        return key_fail(y, "onDemandPricePerHour", po->f.od_price, GP_EINVALID,
                        "only with spot: true (a spot pool's on-demand price, for the savings)");
    if (!p->spot && !po->f.od_price)
        p->on_demand_per_hour_usd = p->price_per_hour_usd;
    if (!po->f.offer)
        return GP_OK;
    enum gp_err err = GP_OK;
    const struct gp_offer *o = offer_find(y, po, &err);
    if (!o)
        return err;
    char q[80];
    gp_yaml_quote(po->f.offer, q, sizeof q);
    if (!gpu)
        return key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "a GPU offer for a pool without GPUs; give gpu: or pricePerHour");
    if (o->gpus_per_node && o->gpus_per_node != p->gpus_per_node)
        return key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "%s/%s has %u GPUs per node, the pool's gpu.count is %u", o->provider,
                        o->instance, o->gpus_per_node, p->gpus_per_node);
    double od = gp_offer_node_price(o, p->gpus_per_node, 0);
    double price = p->spot ? gp_offer_node_price(o, p->gpus_per_node, 1) : od;
    if (price < 0)
        return key_fail(y, "offer", po->f.offer, GP_EINVALID,
                        "%s/%s has no %s price in data/providers.json; give pricePerHour",
                        o->provider, o->instance, p->spot ? "spot" : "on-demand");
    p->price_per_hour_usd = price;
    if (!po->f.od_price)
        p->on_demand_per_hour_usd = od > 0 ? od : 0;
    p->offer = gp_arena_printf(y->arena, "%s/%s", o->provider, o->instance);
    if (!p->offer)
        return oom(y);
    return GP_OK;
}

#define DEFAULT_NOTICE_S 120.0 /* AWS's two-minute warning */

/* The interruption fields need spot: true; a rate or a series, not both. */
static enum gp_err check_spot(struct gp_yaml *y, struct pool_obj *po)
{
    struct gp_pool_spec *p = &po->spec;
    static const char *const keys[] = {"interruptionRate", "interruptionTimes", "interruptionFile",
                                       "spotNotice"};
    struct fy_node *nodes[] = {po->f.rate, po->f.times, po->f.file, po->f.notice};
    if (!p->spot) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (nodes[i])
                return key_fail(y, keys[i], nodes[i], GP_EINVALID, "only with spot: true");
        return GP_OK;
    }
    if (po->f.times && po->f.file)
        return key_fail(y, "interruptionFile", po->f.file, GP_EINVALID,
                        "not with interruptionTimes (one recorded series per pool)");
    if (po->f.rate && (po->f.times || po->f.file))
        return key_fail(y, "interruptionRate", po->f.rate, GP_EINVALID,
                        "not with a recorded series (%s): give a rate or the times",
                        po->f.times ? "interruptionTimes" : "interruptionFile");
    if (!po->f.notice)
        p->spot_notice_s = DEFAULT_NOTICE_S;
    return GP_OK;
}

bool gp_pool_is_dynamic(const struct gp_pool_spec *p)
{
    return p->max_count > p->min_count || p->spot;
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
    GP_YCUSTOM("pricePerHour", pool_price, 0),
    GP_YCUSTOM("pricePerGpuHour", pool_gpu_price, 0),
    GP_YCUSTOM("onDemandPricePerHour", pool_od_price, 0),
    GP_YCUSTOM("offer", pool_offer, 0),
    GP_YCUSTOM("spot", pool_spot, 0),
    GP_YCUSTOM("interruptionRate", pool_rate, 0),
    GP_YCUSTOM("interruptionTimes", pool_times, 0),
    GP_YCUSTOM("interruptionFile", pool_file, 0),
    GP_YCUSTOM("spotNotice", pool_notice, 0),
    GP_YCUSTOM("labels", pool_labels, 0),
    GP_YCUSTOM("taints", pool_taints, 0),
    GP_YCUSTOM("sharing", pool_sharing, 0),
    GP_YCUSTOM("topology", pool_topology, 0),
};

static enum gp_err pool_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct pools_walk *w = ctx;
    struct gp_pool_spec *p = &w->c->pools[i];
    struct pool_obj po;
    memset(&po, 0, sizeof po);
    enum gp_err err =
        gp_yaml_object(y, item, pool_fields, sizeof pool_fields / sizeof pool_fields[0], &po, true);
    if (err == GP_OK)
        err = check_sharing(y, &po);
    if (err == GP_OK)
        err = check_size(y, item, &po);
    if (err == GP_OK)
        err = check_price(y, &po);
    if (err == GP_OK)
        err = check_spot(y, &po);
    if (err == GP_OK)
        err = check_topology(y, &po);
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

/* spec.controlPlane: {pricePerHour: 0.10} or {offer: eks} */
struct cp_obj {
    struct gp_cluster *c;
    struct fy_node *price, *offer;
};

static enum gp_err cp_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cp_obj *o = obj;
    o->price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &o->c->control_plane_per_hour_usd);
}

static enum gp_err cp_offer(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cp_obj *o = obj;
    const char *id;
    o->offer = v;
    enum gp_err err = gp_yaml_string(y, v, &id);
    if (err != GP_OK)
        return err;
    char q[80], list[400];
    size_t lo = 0;
    list[0] = '\0';
    for (size_t i = 0; i < gp_nproviders; i++) {
        const struct gp_provider *p = &gp_providers[i];
        if (strcmp(p->id, id) == 0) {
            if (p->control_plane_usd_per_hour < 0)
                return gp_yaml_fail(y, v, GP_EINVALID,
                                    "data/providers.json has no control-plane fee for %s; give "
                                    "pricePerHour",
                                    id);
            o->c->control_plane_per_hour_usd = p->control_plane_usd_per_hour;
            o->c->control_plane_offer = p->id;
            return GP_OK;
        }
        if (p->control_plane_usd_per_hour >= 0 && lo < sizeof list) {
            int w = snprintf(list + lo, sizeof list - lo, "%s%s", lo ? ", " : "", p->id);
            lo += w > 0 ? (size_t)w : 0;
        }
    }
    return gp_yaml_fail(y, v, GP_EINVALID,
                        "expected a provider of data/providers.json with a known fee (%s), got "
                        "\"%s\"",
                        list, gp_yaml_quote(v, q, sizeof q));
}

static const struct gp_yaml_field cp_fields[] = {
    GP_YCUSTOM("pricePerHour", cp_price, 0),
    GP_YCUSTOM("offer", cp_offer, 0),
};

static enum gp_err spec_control_plane(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cp_obj o = {obj, NULL, NULL};
    enum gp_err err =
        gp_yaml_object(y, v, cp_fields, sizeof cp_fields / sizeof cp_fields[0], &o, true);
    if (err == GP_OK && o.price && o.offer)
        err = key_fail(y, "offer", o.offer, GP_EINVALID,
                       "not with pricePerHour (the offer gives the fee)");
    return err;
}

static enum gp_err as_unneeded(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_cluster *c = obj;
    return yaml_duration(y, v, 7 * 86400.0, &c->autoscaler.scale_down_unneeded_s);
}

static const struct gp_yaml_field as_fields[] = {
    GP_YCUSTOM("scaleDownUnneededTime", as_unneeded, 0),
};

static enum gp_err spec_autoscaler(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, as_fields, sizeof as_fields / sizeof as_fields[0], obj, true);
}

static const struct gp_yaml_field spec_fields[] = {
    GP_YCUSTOM("nodePools", spec_pools, GP_YF_REQUIRED),
    GP_YCUSTOM("controlPlane", spec_control_plane, 0),
    GP_YCUSTOM("autoscaler", spec_autoscaler, 0),
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
    out->autoscaler.scale_down_unneeded_s = GP_AUTOSCALER_UNNEEDED_S;
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
