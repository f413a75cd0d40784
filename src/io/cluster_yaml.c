/* cluster_yaml.c - the gpuplane Cluster spec reader (apiVersion
 * gpuplane.io/v1, kind Cluster): node pools with GPU model and count,
 * per-node CPU and memory, size, price, labels, taints and GPU sharing
 * (time-slicing, MPS, MIG). Every object is a table of fields;
 * adding a field is a row (and, for a new kind of value, a small
 * handler). Unknown fields are errors. Checks that need the whole pool
 * (sharing against the GPU model) run once the pool is read.
 *
 * This file is the document (apiVersion, kind, metadata, spec,
 * spec.autoscaler) and the helpers the parts share; the parts are listed
 * in io/cluster_internal.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "io/cluster_internal.h"
#include "io/providers.h"
#include "util/units.h"

enum gp_err gp_cluster_oom(struct gp_yaml *y)
{
    return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
}

enum gp_err gp_cluster_read_bool(struct gp_yaml *y, struct fy_node *v, bool *out)
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

enum gp_err gp_cluster_key_fail(struct gp_yaml *y, const char *key, struct fy_node *at,
                                enum gp_err err, const char *fmt, ...)
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

enum gp_err gp_cluster_read_duration(struct gp_yaml *y, struct fy_node *v, double max_s,
                                     double *out)
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

/* --- the document -------------------------------------------------------- */

static enum gp_err as_unneeded(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_cluster *c = obj;
    return gp_cluster_read_duration(y, v, 7 * 86400.0, &c->autoscaler.scale_down_unneeded_s);
}

static const struct gp_yaml_field as_fields[] = {
    GP_YCUSTOM("scaleDownUnneededTime", as_unneeded, 0),
};

static enum gp_err spec_autoscaler(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, as_fields, sizeof as_fields / sizeof as_fields[0], obj, true);
}

static const struct gp_yaml_field spec_fields[] = {
    GP_YCUSTOM("nodePools", gp_cluster_spec_pools, GP_YF_REQUIRED),
    GP_YCUSTOM("controlPlane", gp_cluster_spec_control_plane, 0),
    GP_YCUSTOM("autoscaler", spec_autoscaler, 0),
};

/* Adds a warning at node `at`, formatted as an error would be. */
static enum gp_err warn(struct gp_yaml *y, struct gp_cluster *c, struct fy_node *at,
                        const char *msg)
{
    struct gp_diag line = {""}, *diag = y->diag;
    y->diag = &line;
    gp_yaml_fail(y, at, GP_EINVALID, "%s", msg);
    y->diag = diag;
    if (c->nwarnings == c->warnings_cap) {
        size_t cap = c->warnings_cap ? 2 * c->warnings_cap : 4;
        const char **w = gp_arena_alloc(y->arena, cap * sizeof *w);
        if (!w)
            return gp_cluster_oom(y);
        if (c->nwarnings)
            memcpy(w, c->warnings, c->nwarnings * sizeof *w);
        c->warnings = w;
        c->warnings_cap = cap;
    }
    if (!(c->warnings[c->nwarnings] = gp_arena_strdup(y->arena, line.msg)))
        return gp_cluster_oom(y);
    c->nwarnings++;
    return GP_OK;
}

/* A bring-your-own provider's machines join a cluster you run yourself
 * (data/providers.json), not a managed control plane; another managed
 * provider's node pools belong to that provider's own control plane (a
 * GKE node pool cannot join EKS). A pool's offer of either kind next to
 * spec.controlPlane.offer is warned about. */
static enum gp_err warn_byo(struct gp_yaml *y, struct fy_node *spec, struct gp_cluster *c)
{
    struct fy_node *pools = fy_node_mapping_lookup_by_string(spec, "nodePools", FY_NT);
    for (size_t i = 0; c->control_plane_offer && i < c->npools; i++) {
        const char *offer = c->pools[i].offer;
        const char *slash = offer ? strchr(offer, '/') : NULL;
        char id[64];
        if (!slash || slash - offer >= (ptrdiff_t)sizeof id)
            continue;
        snprintf(id, sizeof id, "%.*s", (int)(slash - offer), offer);
        const struct gp_provider *prov = gp_provider_find(id);
        if (!prov || strcmp(prov->id, c->control_plane_offer) == 0)
            continue;
        char msg[320];
        if (prov->kubernetes == GP_KUBE_BYO)
            snprintf(msg, sizeof msg,
                     "%s is bring-your-own Kubernetes (data/providers.json: its machines join a "
                     "cluster you run yourself, e.g. k3s or kubeadm), not %s's managed control "
                     "plane (spec.controlPlane.offer); the cost counts both",
                     prov->id, c->control_plane_offer);
        else if (prov->kubernetes == GP_KUBE_MANAGED)
            snprintf(msg, sizeof msg,
                     "%s's nodes join %s's own managed clusters (data/providers.json: "
                     "kubernetes managed), not %s's control plane (spec.controlPlane.offer); "
                     "the cost counts %s's fee with %s's node prices",
                     prov->id, prov->id, c->control_plane_offer, c->control_plane_offer, prov->id);
        else
            continue;
        struct fy_node *item = fy_node_sequence_get_by_index(pools, (int)i);
        struct fy_node *at = fy_node_mapping_lookup_by_string(item, "offer", FY_NT);
        struct gp_yaml_saved s =
            gp_yaml_push_key(y, "nodePools", gp_yaml_key_node(spec, "nodePools"));
        gp_yaml_push_index(y, i, item);
        gp_yaml_push_key(y, "offer", gp_yaml_key_node(item, "offer"));
        enum gp_err err = warn(y, c, at, msg);
        gp_yaml_pop(y, s);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static enum gp_err cluster_spec(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    enum gp_err err =
        gp_yaml_object(y, v, spec_fields, sizeof spec_fields / sizeof spec_fields[0], obj, true);
    return err == GP_OK ? warn_byo(y, v, obj) : err;
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

static enum gp_err cluster_api_version(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_expect(y, v, "gpuplane.io/v1");
}

static enum gp_err cluster_kind(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_expect(y, v, "Cluster");
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
