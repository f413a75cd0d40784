/* pdb.c - PodDisruptionBudgets (policy/v1) as kube-scheduler's
 * DefaultPreemption reads them: the budgets from their informer, each
 * given to the engine under a stable id with its status.disruptionsAllowed
 * (gp_engine_pdb_set), and each pod in the engine the ids of the budgets
 * its disruption counts against (gp_engine_pod_set_pdbs), kept current on
 * a budget's add, update and delete, on a pod's change (its labels) and
 * given again to a rebuilt engine (gp_ks_pdb_engine). The engine counts
 * them as filterPodsWithPDBViolation does (pkg/scheduler/framework/
 * plugins/defaultpreemption/default_preemption.go, v1.28): on each node
 * the candidate victims, the most important first, take one from every
 * budget they count against, and a victim violates when one goes below
 * zero (preempt.c). A pod counts against a budget of its namespace whose
 * spec.selector matches its labels (a nil or empty selector, or one that
 * does not parse, matches nothing; a pod without labels matches none),
 * unless it is in the budget's status.disruptedPods already (the API
 * server counted it). status.disruptionsAllowed is taken as it is (absent:
 * 0), as kube-scheduler does: it does not compare status.observedGeneration
 * with metadata.generation (only the Eviction API does). Every call is in
 * the --record log (pdb_set, pod_pdbs), so a replay counts the same. */
#include <stdlib.h>
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

/* The budgets a pod counts against at most (the engine's limit). */
#define PDBS_MAX 1024

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The ids of the budgets p counts against, ascending, into ids[0..PDBS_MAX). */
static size_t pod_budgets(const struct gp_kube_sched *s, const struct spod *p, uint32_t *ids)
{
    if (json_object_size(s->pdbs) == 0 || !p->obj)
        return 0;
    const json_t *labels = json_object_get(json_object_get(p->obj, "metadata"), "labels");
    if (json_object_size(labels) == 0)
        return 0;
    const char *ns = p->info.ns ? p->info.ns : "", *key;
    json_t *b;
    size_t n = 0;
    json_object_foreach(s->pdbs, key, b)
    {
        const char *bns = gp_kube_meta(b, "namespace");
        if (strcmp(bns ? bns : "", ns) != 0 ||
            selector_match(json_object_get(json_object_get(b, "spec"), "selector"), labels) != 1)
            continue;
        const json_t *st = json_object_get(b, "status");
        if (json_object_get(json_object_get(st, "disruptedPods"), p->info.name))
            continue; /* counted by the API already */
        const json_t *id = json_object_get(s->pdb_ids, key);
        if (json_is_integer(id) && n < PDBS_MAX)
            ids[n++] = (uint32_t)json_integer_value(id);
    }
    if (n > 1)
        qsort(ids, n, sizeof *ids, u32_cmp);
    return n;
}

/* What p->pdb_print holds: FNV-1a over the count and the ids; 0 only for none. */
static uint64_t ids_print(const uint32_t *ids, size_t n)
{
    if (n == 0)
        return 0;
    uint64_t h = 1469598103934665603ull;
    h = (h ^ n) * 1099511628211ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ids[i]) * 1099511628211ull;
    return h ? h : 1;
}

void gp_ks_pdb_mark(struct gp_kube_sched *s, struct spod *p)
{
    if (!s->e || p->eng == SP_NONE || (json_object_size(s->pdbs) == 0 && p->pdb_print == 0))
        return;
    uint32_t ids[PDBS_MAX];
    size_t n = pod_budgets(s, p, ids);
    uint64_t print = ids_print(ids, n);
    if (print == p->pdb_print)
        return; /* the engine has these already */
    enum gp_err err = gp_engine_pod_set_pdbs(s->e, p->eng, ids, n);
    gp_evlog_pod_pdbs(s->rec, p->eng, ids, n, err); /* --record: a replay links the same */
    if (err == GP_OK)
        p->pdb_print = print;
}

void gp_ks_pdb_enter(struct gp_kube_sched *s, struct spod *p)
{
    p->pdb_print = 0; /* a pod enters an engine counting against no budget */
    gp_ks_pdb_mark(s, p);
}

/* status.disruptionsAllowed (absent or not an integer: 0), in int32's range */
static int32_t allowed_of(const json_t *b)
{
    const json_t *al = json_object_get(json_object_get(b, "status"), "disruptionsAllowed");
    json_int_t v = json_is_integer(al) ? json_integer_value(al) : 0;
    return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static void budget_tell(struct gp_kube_sched *s, uint32_t id, int32_t allowed)
{
    if (!s->e)
        return; /* the first rebuild tells it (gp_ks_pdb_engine) */
    enum gp_err err = gp_engine_pdb_set(s->e, id, allowed);
    gp_evlog_pdb_set(s->rec, id, allowed, err);
}

void gp_ks_pdb_engine(struct gp_kube_sched *s)
{
    const char *key;
    json_t *b;
    json_object_foreach(s->pdbs, key, b)
    {
        const json_t *id = json_object_get(s->pdb_ids, key);
        if (json_is_integer(id))
            budget_tell(s, (uint32_t)json_integer_value(id), allowed_of(b));
    }
}

/* The lowest id no living budget has (ids stay small: the engine keeps a
 * count per id); UINT32_MAX when out of memory. */
static uint32_t id_take(struct gp_kube_sched *s)
{
    size_t i = 0;
    while (i < s->npdb_taken && s->pdb_taken[i])
        i++;
    if (i == s->npdb_taken) {
        size_t cap = s->npdb_taken ? 2 * s->npdb_taken : 16;
        bool *t = realloc(s->pdb_taken, cap * sizeof *t);
        if (!t)
            return UINT32_MAX;
        memset(t + s->npdb_taken, 0, (cap - s->npdb_taken) * sizeof *t);
        s->pdb_taken = t;
        s->npdb_taken = cap;
    }
    s->pdb_taken[i] = true;
    return (uint32_t)i;
}

void gp_ks_pdb_free(struct gp_kube_sched *s)
{
    json_decref(s->pdbs);
    json_decref(s->pdb_ids);
    free(s->pdb_taken);
}

/* Whether a budget's change can change which pods count against it: its
 * selector or its disruptedPods (not its disruptionsAllowed alone). */
static bool members_may_change(const json_t *before, const json_t *now)
{
    const json_t *sb = json_object_get(json_object_get(before, "spec"), "selector");
    const json_t *sn = json_object_get(json_object_get(now, "spec"), "selector");
    const json_t *db = json_object_get(json_object_get(before, "status"), "disruptedPods");
    const json_t *dn = json_object_get(json_object_get(now, "status"), "disruptedPods");
    return !before || !now || !(sb == sn || (sb && sn && json_equal(sb, sn))) ||
           !(db == dn || (db && dn && json_equal(db, dn)));
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
    if ((!s->pdbs && !(s->pdbs = json_object())) || (!s->pdb_ids && !(s->pdb_ids = json_object())))
        return;
    gp_evlog_change(s->rec, s->now_s, "poddisruptionbudget", gp_kube_event_type_name(type), key,
                    gp_kube_meta(obj, "resourceVersion"));
    json_t *before = json_incref(json_object_get(s->pdbs, key));
    const json_t *idj = json_object_get(s->pdb_ids, key);
    uint32_t id = json_is_integer(idj) ? (uint32_t)json_integer_value(idj) : UINT32_MAX;
    if (type == GP_KUBE_DELETED) {
        json_object_del(s->pdbs, key);
        json_object_del(s->pdb_ids, key);
    } else {
        if (id == UINT32_MAX) { /* a new budget: its id for as long as it lives */
            if ((id = id_take(s)) == UINT32_MAX ||
                json_object_set_new(s->pdb_ids, key, json_integer(id)) != 0) {
                if (id != UINT32_MAX)
                    s->pdb_taken[id] = false;
                json_decref(before);
                return;
            }
        }
        json_object_set(s->pdbs, key, mut(obj));
        if (!before || allowed_of(before) != allowed_of(obj))
            budget_tell(s, id, allowed_of(obj));
    }
    /* the pods whose budgets it may change: those of its namespace its
     * selector matched before or matches now (a pod's own change marks
     * it again: sched.c), not every pod against every budget (R13); none
     * when only what it allows changed (the engine counts that itself) */
    const json_t *now = type == GP_KUBE_DELETED ? NULL : obj;
    if (members_may_change(before, now)) {
        const json_t *was = json_object_get(json_object_get(before, "spec"), "selector");
        const json_t *sel = json_object_get(json_object_get(now, "spec"), "selector");
        size_t n;
        struct spod *const *v = gp_ks_ns_pods(s, ns ? ns : "", &n);
        for (size_t i = 0; i < n; i++) {
            const json_t *labels =
                json_object_get(json_object_get(v[i]->obj, "metadata"), "labels");
            if (json_object_size(labels) > 0 &&
                (selector_match(was, labels) == 1 || selector_match(sel, labels) == 1))
                gp_ks_pdb_mark(s, v[i]);
        }
        s->st.pdb_pods_walked += n;
    }
    if (type == GP_KUBE_DELETED && id != UINT32_MAX && id < s->npdb_taken)
        s->pdb_taken[id] = false; /* no pod counts against it now: free for the next */
    json_decref(before);
}
