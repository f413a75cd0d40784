/* manifest.c - the Kubernetes manifest reader: a YAML (or JSON) stream of
 * Pods, Deployments and Jobs (or a List of them) with gpuplane and
 * simulation annotations, read into workload items, with the PodGroups
 * that make gangs, the Queues (gpuplane's or Volcano's) pods join and the
 * PriorityClasses that give them their priority. Each
 * object is first checked as the API server checks it (k8s_schema.c:
 * unknown fields, resources, gpuplane keys, objects defined twice); the
 * fields we read are checked for type and units, and the fields Kubernetes
 * defines and we do not use are skipped (or warned about by the check).
 *
 * This file is the document loop and the dispatch by kind, the gangs
 * joined to their PodGroups, and the helpers the parts share; the parts
 * are listed in io/manifest_internal.h. */
#include <string.h>

#include "io/k8s_schema.h"
#include "io/manifest_internal.h"

enum gp_err gp_manifest_oom(struct gp_yaml *y)
{
    return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
}

/* Remembers the current path in the arena, for a later error. */
const char *gp_manifest_path_copy(struct gp_yaml *y)
{
    const char *p = gp_arena_strdup(y->arena, y->path);
    return p ? p : "";
}

/* Fails at a node with the path it was read under. */
enum gp_err gp_manifest_fail_at(struct gp_yaml *y, const char *path, struct fy_node *n,
                                const char *msg, const char *detail)
{
    gp_yaml_set_root(y, path);
    return gp_yaml_fail(y, n, GP_EINVALID, "%s%s", msg, detail);
}

enum gp_err gp_manifest_bad_value(struct gp_yaml *y, struct fy_node *v, const char *expected)
{
    char q[80];
    return gp_yaml_fail(y, v, GP_EINVALID, "expected %s, got \"%s\"", expected,
                        gp_yaml_quote(v, q, sizeof q));
}

bool gp_manifest_our_prefix(const char *key)
{
    return strncmp(key, "gpuplane.io/", 12) == 0 || strncmp(key, "sim.gpuplane.io/", 16) == 0;
}

/* --- objects and documents ----------------------------------------------- */

static enum gp_err read_object(struct gp_yaml *y, struct fy_node *n, struct manifest_stream *st,
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

/* The object's apiVersion, which must be one of the (one or two) versions
 * its kind is served under; *which says which one matched. */
static enum gp_err check_api(struct gp_yaml *y, struct fy_node *n, const char *kind,
                             const char *api0, const char *api1, int *which)
{
    const char *api;
    struct fy_node *api_node;
    enum gp_err err = top_string(y, n, "apiVersion", &api, &api_node);
    if (err != GP_OK)
        return err;
    if (strcmp(api, api0) == 0 || (api1 && strcmp(api, api1) == 0)) {
        *which = strcmp(api, api0) == 0 ? 0 : 1;
        return GP_OK;
    }
    char q[80];
    struct gp_yaml_saved s = gp_yaml_push_key(y, "apiVersion", NULL);
    gp_yaml_quote(api_node, q, sizeof q);
    if (api1)
        err = gp_yaml_fail(y, api_node, GP_EINVALID,
                           "expected \"%s\" or \"%s\" for a %s, got \"%s\"", api0, api1, kind, q);
    else
        err = gp_yaml_fail(y, api_node, GP_EINVALID, "expected \"%s\" for a %s, got \"%s\"", api0,
                           kind, q);
    gp_yaml_pop(y, s);
    return err;
}

static enum gp_err read_object(struct gp_yaml *y, struct fy_node *n, struct manifest_stream *st,
                               bool in_list)
{
    if (!fy_node_is_mapping(n))
        return gp_yaml_fail(y, n, GP_EINVALID, "expected a Kubernetes object (a mapping), got %s",
                            gp_yaml_describe(n));
    int line = 0, col = 0;
    gp_yaml_node_mark(n, &line, &col);
    const char *kind;
    struct fy_node *kind_node;
    int which = 0;
    enum gp_err err = gp_k8s_validate(y, n, st->w); /* fields as the API server checks them */
    if (err == GP_OK)
        err = top_string(y, n, "kind", &kind, &kind_node);
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
        err = check_api(y, n, kind, "gpuplane.io/v1", "scheduling.volcano.sh/v1beta1", &which);
        return err != GP_OK ? err : gp_manifest_read_queue(y, n, st, which == 1, line);
    }
    if (strcmp(kind, "PriorityClass") == 0) {
        err = check_api(y, n, kind, "scheduling.k8s.io/v1", NULL, &which);
        return err != GP_OK ? err : gp_manifest_read_priority_class(y, n, st, line);
    }
    if (strcmp(kind, "PodGroup") == 0) {
        err = check_api(y, n, kind, "scheduling.x-k8s.io/v1alpha1", "scheduling.volcano.sh/v1beta1",
                        &which);
        return err != GP_OK ? err : gp_manifest_read_podgroup(y, n, st, line);
    }
    if (strcmp(kind, "InferenceService") == 0) { /* docs/serve.md */
        err = check_api(y, n, kind, "gpuplane.io/v1", NULL, &which);
        return err != GP_OK ? err : gp_manifest_read_service(y, n, st, line);
    }
    const struct manifest_kind *k = gp_manifest_kind_find(kind);
    if (!k) {
        char q[80];
        return gp_yaml_fail(
            y, kind_node, GP_EUNSUPPORTED,
            "unknown kind \"%s\" in the object starting at line %d (expected one "
            "of: Pod, Deployment, Job, PodGroup, Queue, PriorityClass, InferenceService, "
            "List)",
            gp_yaml_quote(kind_node, q, sizeof q), line);
    }
    err = check_api(y, n, k->kind, k->api_version, NULL, &which);
    return err != GP_OK ? err : gp_manifest_read_workload(y, n, st, k, line);
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
    struct manifest_stream st = {w, a};
    size_t before = w->nitems, before_queues = w->nqueues, before_classes = w->npclasses;
    size_t before_groups = w->ngroups, before_services = w->nservices;
    struct gp_k8s_mark mark = gp_k8s_mark(w);
    gp_yaml_init(&y, name, a, diag);
    enum gp_err err = gp_yaml_each_document(&y, text, len, manifest_document, &st);
    /* the objects read so far join the PodGroups read so far */
    if (err == GP_OK)
        err = gp_manifest_join(w, a, diag, false);
    if (err != GP_OK) {
        w->nitems = before;
        w->nqueues = before_queues;
        w->npclasses = before_classes;
        w->ngroups = before_groups;
        w->nservices = before_services;
        gp_k8s_restore(w, &mark);
    }
    return err;
}
