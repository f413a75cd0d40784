/* pdb.c - PodDisruptionBudgets (policy/v1) as kube-scheduler's
 * DefaultPreemption reads them: the budgets from their informer, and for
 * each pod in the engine whether evicting it would break one, handed to
 * the engine's preemption (gp_engine_pod_set_pdb_violating: with such a
 * candidate it chooses node by node as kube-scheduler does, the fewest
 * violations first, violating victims reprieved first: preempt.c). The rule is
 * filterPodsWithPDBViolation's (pkg/scheduler/framework/plugins/
 * defaultpreemption/default_preemption.go, v1.28): a budget of the pod's
 * namespace whose spec.selector matches the pod's labels (a nil or empty
 * selector, or one that does not parse, matches nothing; a pod without
 * labels matches none), the pod not already in its status.disruptedPods,
 * counts one disruption against status.disruptionsAllowed, and the pod
 * violates it when that goes below zero. kube-scheduler counts the
 * disruptions of one node's candidate victims together (the second pod of
 * a budget allowing one violates it); here each pod is judged alone,
 * against what the budget allows now (docs/kube.md, "Preemption"). */
#include <string.h>

#include "kube/sched_internal.h"

/* jansson's iterators take no const object (nothing here changes one) */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

static bool value_in(const json_t *values, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(values, i, x)
    {
        if (json_is_string(x) && strcmp(json_string_value(x), v) == 0)
            return true;
    }
    return false;
}

/* metav1.LabelSelectorAsSelector + Matches: 1 matches, 0 does not, -1 no
 * selector (nil, empty, or one that does not parse: matches nothing). */
static int selector_match(const json_t *sel, const json_t *labels)
{
    const json_t *ml = json_object_get(sel, "matchLabels");
    const json_t *me = json_object_get(sel, "matchExpressions");
    if (!json_is_object(sel) || (json_object_size(ml) == 0 && json_array_size(me) == 0))
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(mut(ml), k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!json_is_string(v) || !have || strcmp(have, json_string_value(v)) != 0)
            return json_is_string(v) ? 0 : -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(mut(me), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        const json_t *values = json_object_get(e, "values");
        if (!key || !op)
            return -1;
        const char *have = json_string_value(json_object_get(labels, key));
        bool in = strcmp(op, "In") == 0, notin = strcmp(op, "NotIn") == 0;
        if ((in || notin) && json_array_size(values) == 0)
            return -1; /* In and NotIn need values */
        if (in) {
            if (!have || !value_in(values, have))
                return 0;
        } else if (notin) {
            if (have && value_in(values, have))
                return 0;
        } else if (strcmp(op, "Exists") == 0) {
            if (!have)
                return 0;
        } else if (strcmp(op, "DoesNotExist") == 0) {
            if (have)
                return 0;
        } else {
            return -1;
        }
    }
    return 1;
}

bool gp_ks_pdb_violating(const struct gp_kube_sched *s, const struct spod *p)
{
    if (json_object_size(s->pdbs) == 0 || !p->obj)
        return false;
    const json_t *meta = json_object_get(p->obj, "metadata");
    const json_t *labels = json_object_get(meta, "labels");
    if (json_object_size(labels) == 0)
        return false;
    const char *ns = p->info.ns ? p->info.ns : "", *key;
    json_t *b;
    json_object_foreach(s->pdbs, key, b)
    {
        const char *bns = gp_kube_meta(b, "namespace");
        if (strcmp(bns ? bns : "", ns) != 0)
            continue;
        if (selector_match(json_object_get(json_object_get(b, "spec"), "selector"), labels) != 1)
            continue;
        const json_t *st = json_object_get(b, "status");
        if (json_object_get(json_object_get(st, "disruptedPods"), p->info.name))
            continue; /* counted by the API already */
        const json_t *al = json_object_get(st, "disruptionsAllowed");
        if ((json_is_integer(al) ? json_integer_value(al) : 0) - 1 < 0)
            return true;
    }
    return false;
}

void gp_ks_pdb_mark(struct gp_kube_sched *s, struct spod *p)
{
    if (s->e && p->eng != SP_NONE && (json_object_size(s->pdbs) > 0 || p->pdb_marked)) {
        bool v = gp_ks_pdb_violating(s, p);
        gp_engine_pod_set_pdb_violating(s->e, p->eng, v);
        /* --record: a replay gives the engine the same (a pod enters an
         * engine keeping every budget, so only a breach, or its end, is
         * written) */
        if (v || p->pdb_marked)
            gp_evlog_pod_pdb(s->rec, p->eng, v);
        p->pdb_marked = v;
    }
}

void gp_kube_sched_pdb_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx)
{
    (void)old;
    struct gp_kube_sched *s = ctx;
    const char *ns = gp_kube_meta(obj, "namespace"), *name = gp_kube_meta(obj, "name");
    if (!name)
        return;
    char key[600];
    snprintf(key, sizeof key, "%s/%s", ns ? ns : "", name);
    if (!s->pdbs && !(s->pdbs = json_object()))
        return;
    gp_evlog_change(s->rec, s->now_s, "poddisruptionbudget", gp_kube_event_type_name(type), key,
                    gp_kube_meta(obj, "resourceVersion"));
    /* the pods whose standing it may change: those of its namespace its
     * selector matched before or matches now (a pod's own change marks
     * it again: sched.c), not every pod against every budget (R13) */
    json_t *before = json_incref(json_object_get(s->pdbs, key));
    if (type == GP_KUBE_DELETED)
        json_object_del(s->pdbs, key);
    else
        json_object_set(s->pdbs, key, mut(obj));
    const json_t *was = json_object_get(json_object_get(before, "spec"), "selector");
    const json_t *now =
        type == GP_KUBE_DELETED ? NULL : json_object_get(json_object_get(obj, "spec"), "selector");
    size_t n;
    struct spod *const *v = gp_ks_ns_pods(s, ns ? ns : "", &n);
    for (size_t i = 0; i < n; i++) {
        const json_t *labels = json_object_get(json_object_get(v[i]->obj, "metadata"), "labels");
        if (json_object_size(labels) > 0 &&
            (selector_match(was, labels) == 1 || selector_match(now, labels) == 1))
            gp_ks_pdb_mark(s, v[i]);
    }
    s->st.pdb_pods_walked += n;
    json_decref(before);
}
