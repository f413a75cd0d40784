/* cluster_sharing.c - spec.nodePools[].sharing of a Cluster spec: how a
 * pool's GPUs are shared (exclusive, time-slicing, MPS, MIG) as NVIDIA's
 * device plugin and mig-parted configure it, read and then checked
 * against the pool's GPU model and memory (MPS clients' limits, MIG
 * profiles and layouts, the strategy's rules, dynamic re-partitioning). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "io/cluster_internal.h"

/* --- spec.nodePools[].sharing -------------------------------------------- */

static enum gp_err sharing_mode(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
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
    struct cluster_pool *po = obj;
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
    struct cluster_pool *po = obj;
    po->sh.rename = v;
    return gp_cluster_read_bool(y, v, &po->spec.sharing.rename_by_default);
}

static enum gp_err sharing_fail_gt1(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->sh.fail_gt1 = v;
    return gp_cluster_read_bool(y, v, &po->spec.sharing.fail_requests_greater_than_one);
}

static enum gp_err sharing_oversubscribe(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->sh.oversubscribe = v;
    return gp_cluster_read_bool(y, v, &po->spec.sharing.oversubscribe);
}

static enum gp_err mps_pct(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
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
    struct cluster_pool *po = obj;
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
    struct cluster_pool *po = obj;
    po->sh.mps = v;
    return gp_yaml_object(y, v, mps_fields, sizeof mps_fields / sizeof mps_fields[0], po, true);
}

static enum gp_err mig_strategy(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
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
    struct cluster_pool *po = obj;
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
        return gp_cluster_oom(y);
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(v, &it)) != NULL && po->sh.nlayout < (size_t)total) {
        struct cluster_layout_entry *e = &po->sh.layout[po->sh.nlayout];
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
    struct cluster_pool *po = obj;
    po->sh.mig_dynamic = v;
    return gp_cluster_read_bool(y, v, &po->spec.sharing.mig.dynamic);
}

/* How long a dynamic re-partition takes before its instance serves a pod. */
static enum gp_err mig_reconfigure(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->sh.mig_reconf = v;
    return gp_cluster_read_duration(y, v, 86400, &po->spec.sharing.mig.reconfigure_s);
}

static const struct gp_yaml_field mig_fields[] = {
    GP_YCUSTOM("strategy", mig_strategy, 0),
    GP_YCUSTOM("layout", mig_layout, 0),
    GP_YCUSTOM("dynamic", mig_dynamic, 0),
    GP_YCUSTOM("reconfigureTime", mig_reconfigure, 0),
};

static enum gp_err sharing_mig(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
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

enum gp_err gp_cluster_pool_sharing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->sh.node = v;
    return gp_yaml_object(y, v, sharing_fields, sizeof sharing_fields / sizeof sharing_fields[0],
                          po, true);
}

/* Fails at node `at` with the path ...sharing[.sub[.field]] pushed. */
static enum gp_err sharing_fail(struct gp_yaml *y, const struct cluster_pool *po, const char *sub,
                                const char *field, struct fy_node *at, enum gp_err err,
                                const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static enum gp_err sharing_fail(struct gp_yaml *y, const struct cluster_pool *po, const char *sub,
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
static enum gp_err sharing_unused(struct gp_yaml *y, const struct cluster_pool *po,
                                  const char *field, struct fy_node *at, const char *modes,
                                  const char *why)
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
static enum gp_err check_mig(struct gp_yaml *y, struct cluster_pool *po)
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
        const struct cluster_layout_entry *e = &po->sh.layout[i];
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
static enum gp_err check_mps(struct gp_yaml *y, struct cluster_pool *po)
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
enum gp_err gp_cluster_check_sharing(struct gp_yaml *y, struct cluster_pool *po)
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
