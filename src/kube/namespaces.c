/* namespaces.c - the Namespaces' labels, as kube-scheduler's
 * InterPodAffinity reads them through its namespace lister
 * (pkg/scheduler/framework/plugins/interpodaffinity: a term's
 * namespaceSelector selects namespaces by their labels, and a bound pod's
 * term selects the incoming pod by its namespace's labels,
 * GetNamespaceLabelsSnapshot; kubernetes v1.28): kept from the Namespace
 * informer and given to the engine (gp_engine_namespace_set) when they
 * change - an update that leaves the labels as they were (an annotation,
 * the status, a finalizer) costs the engine nothing - and to every new
 * engine after a rebuild (docs/kube.md, "Affinity and spreading"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"

/* The labels (a JSON object, or NULL) given to s's engine for namespace
 * name; false when out of memory. Values that are not strings (only a
 * double sends them) are left out. */
static bool give(struct gp_kube_sched *s, const char *name, const json_t *labels)
{
    if (!s->e) /* no engine yet: the first rebuild gives what is kept */
        return true;
    size_t n = json_object_size(labels), k = 0;
    struct gp_kv *kv = malloc((n ? n : 1) * sizeof *kv);
    if (!kv)
        return false;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)labels, key, v) if (json_is_string(v)) kv[k++] =
        (struct gp_kv){key, json_string_value(v)};
    enum gp_err err = gp_engine_namespace_set(s->e, name, kv, k); /* (copied) */
    if (err == GP_OK)
        gp_evlog_namespace(s->rec, name, kv, k, false);
    free(kv);
    return err == GP_OK;
}

void gp_kube_sched_namespace_change(enum gp_kube_event_type type, const json_t *obj,
                                    const json_t *old, void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    const char *name = gp_kube_meta(obj, "name");
    if (!name || !*name)
        return;
    gp_evlog_change(s->rec, s->now_s, "namespace", gp_kube_event_type_name(type), name,
                    gp_kube_meta(obj, "resourceVersion"));
    if (!s->namespaces && !(s->namespaces = json_object())) {
        s->dirty = true; /* out of memory: the rebuild gives what is known */
        return;
    }
    if (type == GP_KUBE_DELETED) {
        if (json_object_get(s->namespaces, name)) {
            json_object_del(s->namespaces, name);
            if (s->e && gp_engine_namespace_delete(s->e, name) == GP_OK)
                gp_evlog_namespace(s->rec, name, NULL, 0, true);
        }
        return;
    }
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    json_t *kept = json_object_get(s->namespaces, name);
    if (kept && (labels ? json_equal(kept, labels) : json_object_size(kept) == 0))
        return;                                                  /* the labels are as they were */
    json_t *copy = labels ? json_incref(labels) : json_object(); /* (trees are not changed) */
    if (!copy || json_object_set_new(s->namespaces, name, copy) != 0 || !give(s, name, copy))
        s->dirty = true;
}

bool gp_ks_namespaces_apply(struct gp_kube_sched *s)
{
    const char *name;
    json_t *labels;
    json_object_foreach(s->namespaces, name, labels) if (!give(s, name, labels)) return false;
    return true;
}
