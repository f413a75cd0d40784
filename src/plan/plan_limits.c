/* plan_limits.c - the planner's limits file (docs/plan.md, "The limits
 * file"): apiVersion gpuplane.io/v1, kind PlanLimits, read as strictly as a
 * Cluster spec (io/yaml_walk.h): an unknown field, a value of the wrong
 * type or out of range, a second document, is one line "FILE:LINE:COL:
 * PATH: ..." and GP_EINVALID. */
#include <stdlib.h>
#include <string.h>

#include "io/yaml_walk.h"
#include "plan/plan.h"
#include "util/fs.h"
#include "util/units.h"

void gp_plan_limits_default(struct gp_plan_limits *l)
{
    memset(l, 0, sizeof *l);
    l->queue_p95_s = -1;
    l->latency_p99_s = -1;
    l->monthly_budget_usd = -1;
    l->spot_allowed = true;
    l->plain_allowed = true;
    l->spot_rate_per_node_hour = -1;
    l->checkpoint_s = -1;
    l->restart_s = -1;
    l->price_uncertainty_pct = 5;
}

static enum gp_err read_api(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_expect(y, v, "gpuplane.io/v1");
}

static enum gp_err read_kind(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_expect(y, v, "PlanLimits");
}

/* A duration ("5m", "90s"): > 0 and at most 30 days. */
static enum gp_err duration(struct gp_yaml *y, struct fy_node *v, double *out)
{
    const char *s;
    char q[80];
    enum gp_err err = gp_yaml_text(y, v, "a duration", &s);
    if (err != GP_OK)
        return err;
    if (!gp_units_duration_s(s, out) || *out < 0 || *out > 30 * 86400.0)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected a duration from 0s to 30d like 5m or 90s, got \"%s\"",
                            gp_yaml_quote(v, q, sizeof q));
    return GP_OK;
}

static enum gp_err read_queue(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, &((struct gp_plan_limits *)obj)->queue_p95_s);
}

static enum gp_err read_latency(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, &((struct gp_plan_limits *)obj)->latency_p99_s);
}

static enum gp_err read_ckpt(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    enum gp_err err = duration(y, v, &((struct gp_plan_limits *)obj)->checkpoint_s);
    if (err == GP_OK && ((struct gp_plan_limits *)obj)->checkpoint_s <= 0)
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected a duration above 0s");
    return err;
}

static enum gp_err read_restart(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return duration(y, v, &((struct gp_plan_limits *)obj)->restart_s);
}

static enum gp_err read_bool(struct gp_yaml *y, struct fy_node *v, bool *out)
{
    const char *s;
    char q[80];
    enum gp_err err = gp_yaml_text(y, v, "true or false", &s);
    if (err != GP_OK)
        return err;
    if (strcmp(s, "true") == 0)
        *out = true;
    else if (strcmp(s, "false") == 0)
        *out = false;
    else
        return gp_yaml_fail(y, v, GP_EINVALID, "expected true or false, got \"%s\"",
                            gp_yaml_quote(v, q, sizeof q));
    return GP_OK;
}

#define BOOL_FIELD(fn, member)                                                                     \
    static enum gp_err fn(struct gp_yaml *y, struct fy_node *v, void *obj)                         \
    {                                                                                              \
        return read_bool(y, v, &((struct gp_plan_limits *)obj)->member);                           \
    }
BOOL_FIELD(read_rwx, rwx)
BOOL_FIELD(read_managed, managed_only)
BOOL_FIELD(read_drivers, drivers_preinstalled)
BOOL_FIELD(read_spot_allowed, spot_allowed)
BOOL_FIELD(read_plain_allowed, plain_allowed)
BOOL_FIELD(read_node_lifetimes, node_lifetimes)

struct names {
    const char **items;
    size_t n;
    bool providers; /* each must be a provider of the catalog */
};

static enum gp_err name_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct names *nm = ctx;
    (void)i;
    enum gp_err err = gp_yaml_string(y, item, &nm->items[nm->n]);
    if (err == GP_OK && nm->providers && !gp_provider_find(nm->items[nm->n]))
        return gp_yaml_fail(y, item, GP_EINVALID,
                            "no provider \"%s\" in the catalog (gpuplane providers lists them)",
                            nm->items[nm->n]);
    nm->n++;
    return err;
}

static enum gp_err read_names(struct gp_yaml *y, struct fy_node *v, const char ***out, size_t *n,
                              bool providers)
{
    struct names nm = {NULL, 0, providers};
    size_t cap = fy_node_is_sequence(v) ? (size_t)fy_node_sequence_item_count(v) : 0;
    if (!(nm.items = gp_arena_alloc(y->arena, (cap ? cap : 1) * sizeof *nm.items)))
        return gp_yaml_fail(y, v, GP_ENOMEM, "out of memory");
    enum gp_err err = gp_yaml_list(y, v, name_item, &nm);
    *out = nm.items;
    *n = nm.n;
    return err;
}

static enum gp_err read_avoid_providers(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_plan_limits *l = obj;
    return read_names(y, v, &l->avoid_providers, &l->navoid_providers, true);
}

static enum gp_err read_avoid_regions(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_plan_limits *l = obj;
    return read_names(y, v, &l->avoid_regions, &l->navoid_regions, false);
}

static enum gp_err read_only_providers(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_plan_limits *l = obj;
    return read_names(y, v, &l->only_providers, &l->nonly_providers, true);
}

static const struct gp_yaml_field require_fields[] = {
    GP_YCUSTOM("providers", read_only_providers, 0),
    GP_YCUSTOM("rwxStorage", read_rwx, 0),
    GP_YFIELD("interconnect", GP_YT_STRING, struct gp_plan_limits, interconnect, 0, 0, 0),
    GP_YCUSTOM("managedControlPlane", read_managed, 0),
    GP_YCUSTOM("driversPreinstalled", read_drivers, 0),
};

static const struct gp_yaml_field avoid_fields[] = {
    GP_YCUSTOM("providers", read_avoid_providers, 0),
    GP_YCUSTOM("regions", read_avoid_regions, 0),
};

static const struct gp_yaml_field spot_fields[] = {
    GP_YCUSTOM("allowed", read_spot_allowed, 0),
    GP_YFIELD("interruptionRate", GP_YT_NUMBER, struct gp_plan_limits, spot_rate_per_node_hour, 0,
              0, 10),
    GP_YCUSTOM("checkpointInterval", read_ckpt, 0),
    GP_YCUSTOM("restartTime", read_restart, 0),
};

#define SUB(fn, table)                                                                             \
    static enum gp_err fn(struct gp_yaml *y, struct fy_node *v, void *obj)                         \
    {                                                                                              \
        return gp_yaml_object(y, v, table, sizeof table / sizeof table[0], obj, true);             \
    }
SUB(read_require, require_fields)
SUB(read_avoid, avoid_fields)
SUB(read_spot, spot_fields)

static const struct gp_yaml_field spec_fields[] = {
    GP_YCUSTOM("queueDelayP95", read_queue, 0),
    GP_YCUSTOM("latencyP99", read_latency, 0),
    GP_YFIELD("monthlyBudget", GP_YT_NUMBER, struct gp_plan_limits, monthly_budget_usd, 0, 0, 1e12),
    GP_YCUSTOM("require", read_require, 0),
    GP_YCUSTOM("avoid", read_avoid, 0),
    GP_YCUSTOM("spot", read_spot, 0),
    GP_YCUSTOM("plainInstances", read_plain_allowed, 0),
    GP_YCUSTOM("nodeLifetimes", read_node_lifetimes, 0),
    GP_YFIELD("priceUncertaintyPct", GP_YT_NUMBER, struct gp_plan_limits, price_uncertainty_pct, 0,
              0, 100),
};

SUB(read_spec, spec_fields)

static enum gp_err read_metadata(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    static const struct gp_yaml_field fields[] = {
        GP_YFIELD("name", GP_YT_IGNORE, struct gp_plan_limits, file, 0, 0, 0),
    };
    return gp_yaml_object(y, v, fields, 1, obj, true);
}

static const struct gp_yaml_field doc_fields[] = {
    GP_YCUSTOM("apiVersion", read_api, GP_YF_REQUIRED),
    GP_YCUSTOM("kind", read_kind, GP_YF_REQUIRED),
    GP_YCUSTOM("metadata", read_metadata, 0),
    GP_YCUSTOM("spec", read_spec, GP_YF_REQUIRED),
};

struct doc {
    struct gp_plan_limits *l;
    size_t docs;
};

static enum gp_err read_document(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    struct doc *d = ctx;
    if (d->docs++ > 0)
        return gp_yaml_fail(y, root, GP_EINVALID,
                            "a second YAML document; a limits file holds one PlanLimits");
    return gp_yaml_object(y, root, doc_fields, sizeof doc_fields / sizeof doc_fields[0], d->l,
                          true);
}

enum gp_err gp_plan_limits_parse(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_plan_limits *out, struct gp_diag *diag)
{
    struct gp_yaml y;
    struct doc d = {out, 0};
    gp_plan_limits_default(out);
    gp_yaml_init(&y, name, a, diag);
    enum gp_err err = gp_yaml_each_document(&y, text, len, read_document, &d);
    if (err == GP_OK && d.docs == 0)
        err =
            gp_diag_set(diag, GP_EINVALID, "%s: empty file, expected a PlanLimits document", name);
    if (err == GP_OK && !(out->file = gp_arena_strdup(a, name)))
        err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
    return err;
}

enum gp_err gp_plan_limits_load(const char *path, struct gp_arena *a, struct gp_plan_limits *out,
                                struct gp_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err != GP_OK)
        return err;
    err = gp_plan_limits_parse(text, len, path, a, out, diag);
    free(text);
    return err;
}
