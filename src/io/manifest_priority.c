/* manifest_priority.c - PriorityClass objects (scheduling.k8s.io/v1) and
 * the priority each pod takes from them, as the API server's Priority
 * admission plugin gives it (plugin/pkg/admission/priority): the class a
 * pod names, or the one globalDefault class, sets spec.priority and
 * spec.preemptionPolicy; a name no class has, or a value the pod wrote
 * that disagrees with its class, is refused in the plugin's words. The
 * two classes every cluster has (system-cluster-critical,
 * system-node-critical) are built in. Pods are resolved once every file
 * is read (gp_workload_finish calls gp_manifest_finish_priorities), since
 * a class may be in any of them. */
#include <stdio.h>
#include <string.h>

#include "io/manifest_internal.h"

/* The API's limit for classes that are not the system's own
 * (scheduling.HighestUserDefinablePriority). */
#define USER_PRIORITY_MAX 1000000000

static const struct gp_priority_class builtin[] = {
    {"system-cluster-critical", "built in", 2000000000, false, false},
    {"system-node-critical", "built in", 2000001000, false, false},
};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])

/* A PriorityClass as written. */
struct pclass_in {
    struct gp_priority_class c;
    bool has_value;
    const char *global; /* globalDefault, as written */
    uint8_t preemption;
    struct fy_node *name_node, *global_node;
};

static enum gp_err pc_value(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pclass_in *p = obj;
    int64_t x;
    enum gp_err err = gp_yaml_int(y, v, -(int64_t)GP_MANIFEST_INT32_LIMIT - 1,
                                  (int64_t)GP_MANIFEST_INT32_LIMIT, &x);
    if (err != GP_OK)
        return err;
    p->c.value = (int32_t)x;
    p->has_value = true;
    return GP_OK;
}

static enum gp_err pc_global(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pclass_in *p = obj;
    enum gp_err err = gp_yaml_text(y, v, "true or false", &p->global);
    if (err == GP_OK && strcmp(p->global, "true") != 0 && strcmp(p->global, "false") != 0)
        err = gp_manifest_bad_value(y, v, "true or false");
    p->global_node = v;
    return err;
}

static enum gp_err pc_preemption(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_manifest_preemption(y, v, &((struct pclass_in *)obj)->preemption);
}

static const struct gp_yaml_field pc_meta_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct pclass_in, c.name, GP_YF_REQUIRED, 0, 0),
};

static enum gp_err pc_meta(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pclass_in *p = obj;
    p->name_node =
        fy_node_is_mapping(v) ? fy_node_mapping_lookup_by_string(v, "name", FY_NT) : NULL;
    return gp_yaml_object(y, v, pc_meta_fields, sizeof pc_meta_fields / sizeof pc_meta_fields[0],
                          obj, false);
}

static const struct gp_yaml_field pc_fields[] = {
    {"apiVersion", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"kind", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    GP_YCUSTOM("metadata", pc_meta, GP_YF_REQUIRED),
    GP_YCUSTOM("value", pc_value, GP_YF_REQUIRED),
    GP_YCUSTOM("globalDefault", pc_global, 0),
    GP_YCUSTOM("preemptionPolicy", pc_preemption, 0),
    {"description", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static const struct gp_priority_class *find(const struct gp_workload *w, const char *name)
{
    for (size_t i = 0; i < w->npclasses; i++)
        if (strcmp(w->pclasses[i].name, name) == 0)
            return &w->pclasses[i];
    for (size_t i = 0; i < NBUILTIN; i++)
        if (strcmp(builtin[i].name, name) == 0)
            return &builtin[i];
    return NULL;
}

enum gp_err gp_manifest_read_priority_class(struct gp_yaml *y, struct fy_node *n,
                                            struct manifest_stream *st, int line)
{
    struct gp_workload *w = st->w;
    struct pclass_in p;
    memset(&p, 0, sizeof p);
    char outer[sizeof y->path];
    memcpy(outer, y->path, sizeof outer);
    /* the name first, so that every path names the object */
    struct fy_node *meta = fy_node_mapping_lookup_by_string(n, "metadata", FY_NT);
    struct fy_node *name = meta && fy_node_is_mapping(meta)
                               ? fy_node_mapping_lookup_by_string(meta, "name", FY_NT)
                               : NULL;
    size_t len = 0;
    const char *text = name && fy_node_is_scalar(name) ? fy_node_get_scalar(name, &len) : NULL;
    char root[160];
    if (text && len > 0 && len <= 100)
        snprintf(root, sizeof root, "PriorityClass/%.*s", (int)len, text);
    else
        snprintf(root, sizeof root, "PriorityClass");
    gp_yaml_set_root(y, root);
    enum gp_err err =
        gp_yaml_object(y, n, pc_fields, sizeof pc_fields / sizeof pc_fields[0], &p, true);
    /* the API server's validation of the class itself */
    if (err == GP_OK && strncmp(p.c.name, "system-", 7) == 0) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "metadata", NULL);
        gp_yaml_push_key(y, "name", NULL);
        err = gp_yaml_fail(y, p.name_node, GP_EINVALID,
                           "priority class names with 'system-' prefix are reserved");
        gp_yaml_pop(y, s);
    }
    if (err == GP_OK && p.c.value > USER_PRIORITY_MAX) {
        struct gp_yaml_saved s = gp_yaml_push_key(y, "value", gp_yaml_key_node(n, "value"));
        err = gp_yaml_fail(y, fy_node_mapping_lookup_by_string(n, "value", FY_NT), GP_EINVALID,
                           "maximum allowed value of a user defined priority is %d",
                           USER_PRIORITY_MAX);
        gp_yaml_pop(y, s);
    }
    p.c.global_default = p.global && strcmp(p.global, "true") == 0;
    p.c.never = p.preemption == GP_PREEMPT_NEVER;
    if (err == GP_OK && p.c.global_default) {
        for (size_t i = 0; i < w->npclasses; i++) {
            if (!w->pclasses[i].global_default)
                continue;
            struct gp_yaml_saved s =
                gp_yaml_push_key(y, "globalDefault", gp_yaml_key_node(n, "globalDefault"));
            err = gp_yaml_fail(y, p.global_node, GP_EINVALID,
                               "PriorityClass %s is already marked as default (%s). Only one "
                               "default can exist",
                               w->pclasses[i].name, w->pclasses[i].source);
            gp_yaml_pop(y, s);
            break;
        }
    }
    if (err == GP_OK) { /* defined twice is k8s_schema.c's check; this keeps find() exact */
        const struct gp_priority_class *was = find(w, p.c.name);
        if (was)
            err = gp_yaml_fail(y, p.name_node, GP_EINVALID, "defined twice (first at %s)",
                               was->source);
    }
    gp_yaml_set_root(y, outer);
    if (err != GP_OK)
        return err;
    p.c.source = gp_arena_printf(st->a, "%s:%d", y->name, line);
    if (!p.c.source)
        return gp_manifest_oom(y);
    if (w->npclasses == w->pclasses_cap) {
        size_t cap = w->pclasses_cap ? 2 * w->pclasses_cap : 8;
        struct gp_priority_class *c = gp_arena_alloc(st->a, cap * sizeof *c);
        if (!c)
            return gp_manifest_oom(y);
        if (w->npclasses)
            memcpy(c, w->pclasses, w->npclasses * sizeof *c);
        w->pclasses = c;
        w->pclasses_cap = cap;
    }
    w->pclasses[w->npclasses++] = p.c;
    return GP_OK;
}

static const char *policy_name(bool never)
{
    return never ? "Never" : "PreemptLowerPriority";
}

/* One item's priority from its class, as the admission plugin's Admit. */
static enum gp_err resolve(const struct gp_workload *w, const struct gp_priority_class *dflt,
                           struct gp_item *it, struct gp_diag *diag)
{
    const struct gp_priority_class *c = dflt;
    if (it->priority_class) {
        c = find(w, it->priority_class);
        if (!c)
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: no PriorityClass with name %s was found (define one: "
                               "apiVersion: scheduling.k8s.io/v1, kind: PriorityClass)",
                               it->priority_class_at, it->priority_class);
    }
    if (!c)
        return GP_OK; /* no class and no default: spec.priority as written, or 0 */
    if (it->has_priority && it->pod.priority != c->value)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: the integer value of priority (%d) must not be provided in pod "
                           "spec; priority admission controller computed %d from the given "
                           "PriorityClass name",
                           it->priority_at, (int)it->pod.priority, (int)c->value);
    if (it->preemption && (it->preemption == GP_PREEMPT_NEVER) != c->never)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: the string value of PreemptionPolicy (%s) must not be provided "
                           "in pod spec; priority admission controller computed %s from the "
                           "given PriorityClass name",
                           it->preemption_at, policy_name(it->preemption == GP_PREEMPT_NEVER),
                           policy_name(c->never));
    it->pod.priority = c->value;
    it->pod.preempt_never = c->never;
    return GP_OK;
}

enum gp_err gp_manifest_finish_priorities(struct gp_workload *w, struct gp_diag *diag)
{
    const struct gp_priority_class *dflt = NULL;
    for (size_t i = 0; i < w->npclasses && !dflt; i++)
        if (w->pclasses[i].global_default)
            dflt = &w->pclasses[i];
    for (size_t i = 0; i < w->nitems; i++) {
        struct gp_item *it = &w->items[i];
        enum gp_err err = resolve(w, dflt, it, diag);
        if (err != GP_OK)
            return err;
        /* no class: the pod's own preemptionPolicy (Never waits too) */
        if (!it->priority_class && !dflt)
            it->pod.preempt_never = it->preemption == GP_PREEMPT_NEVER;
    }
    return GP_OK;
}
