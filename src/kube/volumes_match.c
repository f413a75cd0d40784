/* volumes_match.c - the existing PersistentVolumes an unbound claim of a
 * WaitForFirstConsumer class may be bound to, as kube-scheduler's
 * VolumeBinding finds them for a node (pkg/scheduler/framework/plugins/
 * volumebinding/binder.go findMatchingVolumes, with
 * pkg/controller/volume/persistentvolume/util FindMatchingVolume,
 * CheckAccessModes and CheckVolumeModeMismatches, and
 * pkg/volume/util CheckNodeAffinity; kubernetes v1.28): a volume
 * claimRef'd to the claim first (it alone, where it fits the node), else
 * the Available volume of the claim's class, claimed by no other claim,
 * of enough capacity, the same volumeMode, the claim's access modes and
 * label selector, whose node affinity the node meets, of the least
 * capacity. volumes.c reads the node-independent part into the pod's
 * conditions, volumes_bind.c chooses for the node decided. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/volumes_internal.h"
#include "util/units.h"

#define ANN_BETA_CLASS "volume.beta.kubernetes.io/storage-class"

/* jansson's iterators take no const object (nothing here changes one) */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

static const char *str_of(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const json_t *at2(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

const char *gp_ks_claim_class(const json_t *pvc)
{
    const char *beta = str_of(at2(pvc, "metadata", "annotations"), ANN_BETA_CLASS);
    const char *cls = beta ? beta : str_of(json_object_get(pvc, "spec"), "storageClassName");
    return cls ? cls : "";
}

/* GetPersistentVolumeClass: the beta annotation, else spec.storageClassName. */
static const char *pv_class(const json_t *pv)
{
    const char *beta = str_of(at2(pv, "metadata", "annotations"), ANN_BETA_CLASS);
    const char *cls = beta ? beta : str_of(json_object_get(pv, "spec"), "storageClassName");
    return cls ? cls : "";
}

bool gp_ks_pv_bound_to(const json_t *pv, const json_t *pvc)
{
    const json_t *ref = at2(pv, "spec", "claimRef");
    const json_t *meta = json_object_get(pvc, "metadata");
    const char *rn = str_of(ref, "name"), *rns = str_of(ref, "namespace"), *ru = str_of(ref, "uid");
    const char *n = str_of(meta, "name"), *ns = str_of(meta, "namespace"), *u = str_of(meta, "uid");
    if (!ref || !rn || !n || strcmp(rn, n) != 0 || strcmp(rns ? rns : "", ns ? ns : "") != 0)
        return false;
    return !ru || !ru[0] || (u && strcmp(ru, u) == 0);
}

/* A storage quantity in bytes (rounded up); false when it does not parse. */
static bool bytes_of(const char *q, int64_t *out)
{
    *out = 0;
    return !q || gp_units_quantity(q, 0, 0, INT64_MAX, out) == GP_UNITS_QTY_OK;
}

/* CheckAccessModes: each of the claim's access modes among the volume's. */
static bool modes_ok(const json_t *pvc, const json_t *pv)
{
    const json_t *have = at2(pv, "spec", "accessModes");
    size_t i, k;
    json_t *m, *h;
    json_array_foreach(at2(pvc, "spec", "accessModes"), i, m)
    {
        bool in = false;
        json_array_foreach(have, k, h) in = in || (json_is_string(m) && json_equal(m, h));
        if (!in)
            return false;
    }
    return true;
}

/* The claim's spec.selector (metav1.LabelSelectorAsSelector: matchLabels
 * and matchExpressions ANDed; an empty selector matches every volume)
 * against the volume's labels; one that does not parse matches none
 * (upstream's FindMatchingVolume answers an error, no node passing). */
static bool selector_ok(const json_t *sel, const json_t *labels)
{
    if (!sel || json_is_null(sel))
        return true;
    const char *k;
    json_t *v;
    json_object_foreach(mut(json_object_get(sel, "matchLabels")), k, v)
    {
        const char *have = str_of(labels, k);
        if (!json_is_string(v) || !have || strcmp(have, json_string_value(v)) != 0)
            return false;
    }
    size_t i, j;
    json_t *e, *x;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = str_of(e, "key"), *op = str_of(e, "operator");
        const json_t *vals = json_object_get(e, "values");
        const char *have = key ? str_of(labels, key) : NULL;
        bool in = false;
        json_array_foreach(vals, j, x) in =
            in || (have && json_is_string(x) && strcmp(have, json_string_value(x)) == 0);
        if (!key || !op)
            return false;
        bool ok = strcmp(op, "In") == 0             ? json_array_size(vals) && in
                  : strcmp(op, "NotIn") == 0        ? json_array_size(vals) && !in
                  : strcmp(op, "Exists") == 0       ? have != NULL
                  : strcmp(op, "DoesNotExist") == 0 ? have == NULL
                                                    : false;
        if (!ok)
            return false;
    }
    return true;
}

enum gp_pvm gp_ks_pv_match(const json_t *pvc, const json_t *pv)
{
    const json_t *ps = json_object_get(pv, "spec"), *cs = json_object_get(pvc, "spec");
    if (json_object_get(ps, "claimRef") && !json_is_null(json_object_get(ps, "claimRef")) &&
        !gp_ks_pv_bound_to(pv, pvc))
        return GP_PVM_NO;
    int64_t have, want;
    if (!bytes_of(str_of(at2(cs, "resources", "requests"), "storage"), &want) ||
        !bytes_of(str_of(json_object_get(ps, "capacity"), "storage"), &have) || have < want)
        return GP_PVM_NO;
    /* CheckVolumeModeMismatches: Filesystem when not given */
    const char *cm = str_of(cs, "volumeMode"), *pm = str_of(ps, "volumeMode");
    if (strcmp(cm ? cm : "Filesystem", pm ? pm : "Filesystem") != 0)
        return GP_PVM_NO;
    if (json_object_get(json_object_get(pv, "metadata"), "deletionTimestamp"))
        return GP_PVM_NO;
    if (gp_ks_pv_bound_to(pv, pvc))
        return GP_PVM_PREBOUND;
    const char *phase = str_of(json_object_get(pv, "status"), "phase");
    if (!phase || strcmp(phase, "Available") != 0 ||
        !selector_ok(json_object_get(cs, "selector"), at2(pv, "metadata", "labels")) ||
        strcmp(pv_class(pv), gp_ks_claim_class(pvc)) != 0 || !modes_ok(pvc, pv))
        return GP_PVM_NO;
    return GP_PVM_YES;
}

/* A NodeSelectorRequirement against value v (NULL: the label absent). */
static bool req_ok(const json_t *e, const char *v)
{
    const char *op = str_of(e, "operator");
    const json_t *vals = json_object_get(e, "values");
    if (!op)
        return false;
    if (strcmp(op, "Exists") == 0)
        return v != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return v == NULL;
    bool in = false;
    size_t i;
    json_t *x;
    json_array_foreach(vals, i, x) in =
        in || (v && json_string_value(x) && strcmp(v, json_string_value(x)) == 0);
    if (strcmp(op, "In") == 0)
        return in;
    if (strcmp(op, "NotIn") == 0)
        return !in;
    if ((strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) && v && json_array_size(vals) == 1) {
        char *end1, *end2;
        const char *w = json_string_value(json_array_get(vals, 0));
        long long a = strtoll(v, &end1, 10), b = w ? strtoll(w, &end2, 10) : 0;
        if (!w || *end1 || *end2 || !*v || !*w)
            return false;
        return op[0] == 'G' ? a > b : a < b;
    }
    return false;
}

bool gp_ks_pv_fits(const json_t *pv, const json_t *labels)
{
    const json_t *req = at2(json_object_get(pv, "spec"), "nodeAffinity", "required");
    if (!req)
        return true;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, t)
    {
        const json_t *le = json_object_get(t, "matchExpressions"),
                     *fe = json_object_get(t, "matchFields");
        if (json_array_size(le) + json_array_size(fe) == 0)
            continue; /* an empty term matches nothing */
        bool ok = true;
        size_t k;
        json_t *e;
        json_array_foreach(le, k, e) ok = ok && req_ok(e, str_of(labels, str_of(e, "key")));
        json_array_foreach(fe, k, e) ok = ok && req_ok(e, "");
        if (ok)
            return true;
    }
    return false;
}

const char *gp_ks_pv_find(const json_t *pvs, const json_t *pvc, const json_t *labels,
                          const json_t *skip, bool *prebound)
{
    *prebound = false;
    const char *best = NULL, *name;
    int64_t best_bytes = 0;
    json_t *pv;
    json_object_foreach(mut(pvs), name, pv)
    {
        if (skip && json_object_get(skip, name))
            continue;
        enum gp_pvm m = gp_ks_pv_match(pvc, pv);
        *prebound = m == GP_PVM_PREBOUND;
        if (m == GP_PVM_PREBOUND) /* FindMatchingVolume: it or nothing */
            return gp_ks_pv_fits(pv, labels) ? name : NULL;
        if (m != GP_PVM_YES || !gp_ks_pv_fits(pv, labels))
            continue;
        int64_t b;
        bytes_of(str_of(at2(pv, "spec", "capacity"), "storage"), &b);
        if (!best || b < best_bytes || (b == best_bytes && strcmp(name, best) < 0)) {
            best = name;
            best_bytes = b;
        }
    }
    return best;
}

bool gp_ks_topology_fits(const json_t *sc, const json_t *labels)
{
    const json_t *topo = json_object_get(sc, "allowedTopologies");
    if (json_array_size(topo) == 0)
        return true;
    size_t i, k, j;
    json_t *t, *e, *v;
    json_array_foreach(topo, i, t)
    {
        const json_t *exprs = json_object_get(t, "matchLabelExpressions");
        bool ok = json_array_size(exprs) > 0; /* (a term of none matches no node) */
        json_array_foreach(exprs, k, e)
        {
            const char *have = str_of(labels, str_of(e, "key") ? str_of(e, "key") : "");
            bool in = false;
            json_array_foreach(json_object_get(e, "values"), j, v) in =
                in || (have && json_is_string(v) && strcmp(have, json_string_value(v)) == 0);
            ok = ok && in;
        }
        if (ok)
            return true;
    }
    return false;
}
