/* filter.c - the node filters' parts: the names and texts of the
 * filters and of a decision's main reason, node selectors, labels and
 * taints, the per-model quota test, and whether a pod could fit a node
 * once it is empty (the "never fits" test). The filter itself
 * (filter_fit) is inline in internal.h: every scan of the nodes runs it. */
#include "engine/internal.h"

#include <stdio.h>
#include <string.h>

const char *gp_filter_name(enum gp_filter f)
{
    static const char *const names[] = {"node-state",
                                        "node-selector",
                                        "node-affinity",
                                        "topology",
                                        "taint",
                                        "gpu-model",
                                        "sharing",
                                        "cuda-driver",
                                        "host-ports",
                                        "pods",
                                        "cpu",
                                        "memory",
                                        "extended-resource",
                                        "gpu-count",
                                        "gpu-share",
                                        "gpu-memory",
                                        "gpu-replica",
                                        "mig",
                                        "volume-restrictions",
                                        "node-volume-limits",
                                        "volume-binding",
                                        "volume-bind-conflict",
                                        "volume-zone",
                                        "pod-topology-spread",
                                        "pod-affinity",
                                        "pod-anti-affinity",
                                        "existing-anti-affinity",
                                        "quota"};
    _Static_assert(sizeof names / sizeof names[0] == GP_FILTER_COUNT, "one name per filter");
    return (unsigned)f < GP_FILTER_COUNT ? names[f] : "none";
}

bool gp_filter_optional(enum gp_filter f)
{
    return f == GP_FILTER_NODE_AFFINITY || f == GP_FILTER_SPREAD || f == GP_FILTER_POD_AFFINITY ||
           f == GP_FILTER_POD_ANTI_AFFINITY || f == GP_FILTER_EXISTING_ANTI_AFFINITY ||
           f == GP_FILTER_PODS || f == GP_FILTER_SCALAR || f == GP_FILTER_PORTS ||
           f == GP_FILTER_VOLUME_BINDING || f == GP_FILTER_VOLUME_ZONE || f == GP_FILTER_RWOP ||
           f == GP_FILTER_VOLUME_BIND || f == GP_FILTER_VOLUME_LIMITS;
}

enum gp_filter gp_eng_volumes_filter(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_pod_constraints *c = p->spec.constraints;
    for (size_t i = 0; c && i < c->nvolumes; i++) {
        const struct gp_volume_terms *v = &c->volumes[i];
        bool ok = false;
        for (size_t j = 0; j < v->nterms && !ok; j++)
            ok = gp_eng_node_term_matches(n, &v->terms[j]);
        if (!ok)
            return v->zone   ? GP_FILTER_VOLUME_ZONE
                   : v->bind ? GP_FILTER_VOLUME_BIND
                             : GP_FILTER_VOLUME_BINDING;
    }
    return GP_FILTER_COUNT;
}

const char *gp_filter_text(enum gp_filter f)
{
    static const char *const texts[] = {
#define GP_FILTER_TEXT(name, text) text,
        GP_FILTERS(GP_FILTER_TEXT)
#undef GP_FILTER_TEXT
    };
    return (unsigned)f < GP_FILTER_COUNT ? texts[f] : "fits";
}

enum gp_filter gp_explain_main(const struct gp_explain *x)
{
    enum gp_filter best = GP_FILTER_COUNT;
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        if (f != GP_FILTER_TOPOLOGY && x->rejected[f] > 0 &&
            (best == GP_FILTER_COUNT || x->rejected[f] > x->rejected[best]))
            best = (enum gp_filter)f;
    /* nodes outside a gang's domain say why only when nothing else does */
    if (best == GP_FILTER_COUNT && x->rejected[GP_FILTER_TOPOLOGY] > 0)
        best = GP_FILTER_TOPOLOGY;
    return best;
}

bool gp_eng_selector_matches(const struct gp_node *n, const struct gp_pod *p)
{
    for (size_t i = 0; i < p->spec.nnode_selector; i++) {
        const struct gp_kv *want = &p->spec.node_selector[i];
        const char *have = gp_eng_node_label(n, want->key);
        if (!have || strcmp(have, want->value) != 0)
            return false;
    }
    return true;
}

/* Both lists sorted by name: the index of each of the pod's in the node's
 * (NONE where the node lacks it), by one merge. */
static void scalar_match(const struct gp_node *n, const struct gp_pod *p,
                         uint32_t at[GP_MAX_SCALARS])
{
    size_t j = 0;
    for (size_t i = 0; i < p->spec.nscalars && i < GP_MAX_SCALARS; i++) {
        int c = 1;
        while (j < n->spec.nscalars &&
               (c = strcmp(n->spec.scalars[j].name, p->spec.scalars[i].name)) < 0)
            j++;
        at[i] = c == 0 ? (uint32_t)j : NONE;
    }
}

bool gp_eng_scalars_fit(const struct gp_node *n, const struct gp_pod *p, bool empty)
{
    uint32_t at[GP_MAX_SCALARS];
    scalar_match(n, p, at);
    for (size_t i = 0; i < p->spec.nscalars && i < GP_MAX_SCALARS; i++) {
        int64_t have = at[i] == NONE ? 0
                       : empty       ? n->spec.scalars[at[i]].amount
                                     : n->scalar_free[at[i]];
        if (p->spec.scalars[i].amount > have)
            return false;
    }
    return true;
}

void gp_eng_scalars_take(struct gp_node *n, const struct gp_pod *p, int sign)
{
    uint32_t at[GP_MAX_SCALARS];
    scalar_match(n, p, at);
    for (size_t i = 0; i < p->spec.nscalars && i < GP_MAX_SCALARS; i++)
        if (at[i] != NONE) /* a resource the node lacks: nothing of it to take */
            n->scalar_free[at[i]] -= sign * p->spec.scalars[i].amount;
}

bool gp_eng_has_label(const struct gp_node *n, const char *key, const char *value)
{
    const char *have = gp_eng_node_label(n, key);
    return have && (!value || strcmp(have, value) == 0);
}

bool gp_eng_str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

bool gp_eng_tolerates(const struct gp_pod *p, const struct gp_taint *t)
{
    for (size_t i = 0; i < p->spec.ntolerations; i++) {
        const struct gp_toleration *tol = &p->spec.tolerations[i];
        if (!tol->any_effect && tol->effect != t->effect)
            continue;
        if (!tol->key || !*tol->key) {
            if (tol->op_exists)
                return true;
            continue;
        }
        if (strcmp(tol->key, t->key) != 0)
            continue;
        if (tol->op_exists || gp_eng_str_eq(tol->value, t->value))
            return true;
    }
    return false;
}

bool gp_eng_taints_tolerated(const struct gp_node *n, const struct gp_pod *p)
{
    for (size_t i = 0; i < n->spec.ntaints; i++) {
        const struct gp_taint *t = &n->spec.taints[i];
        if (t->effect != GP_EFFECT_PREFER_NO_SCHEDULE && !gp_eng_tolerates(p, t))
            return false;
    }
    return true;
}

/* Whether the pod's GPUs on a node of model m would take its queue, or an
 * ancestor, over the per-model cap. */
bool gp_eng_model_quota_blocks(const struct gp_engine *e, const struct gp_pod *p, uint32_t m)
{
    int64_t want = gpu_req(p);
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        if (q->cap[R_MODEL + m] != INT64_MAX && q->used[R_MODEL + m] + want > q->cap[R_MODEL + m])
            return true;
    }
    return false;
}

enum gp_filter gp_engine_filter(const struct gp_engine *e, const struct gp_node *n,
                                const struct gp_pod *p)
{
    enum gp_filter f = filter_fit(e, n, p);
    if (f == GP_FILTER_COUNT && e->model_quotas && p->spec.gpu_count > 0 &&
        e->queues.items[p->spec.queue].model_capped && gp_eng_model_quota_blocks(e, p, n->model))
        return GP_FILTER_QUOTA;
    return f;
}

enum gp_filter gp_engine_filter_alone(const struct gp_engine *e, const struct gp_node *n,
                                      const struct gp_pod *p)
{
    enum gp_filter f = filter_own(e, n, p);
    if (f == GP_FILTER_COUNT && e->model_quotas && p->spec.gpu_count > 0 &&
        e->queues.items[p->spec.queue].model_capped && gp_eng_model_quota_blocks(e, p, n->model))
        return GP_FILTER_QUOTA;
    return f;
}

/* Could pod p fit node n if n were empty? (The "never fits" test.) */
bool gp_eng_fits_empty(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    if (n->state != GP_NODE_READY || (p->spec.nnode_selector && !gp_eng_selector_matches(n, p)) ||
        (p->spec.constraints && p->spec.constraints->nnode_required &&
         !gp_eng_node_affinity_ok(n, p)) ||
        (n->spec.ntaints && !gp_eng_taints_tolerated(n, p)) ||
        ((p->label_filters & 4) && gp_eng_volumes_filter(n, p) != GP_FILTER_COUNT) ||
        (p->spec.ncsi_volumes && n->spec.ncsi_limits && gp_eng_csi_exceeds(NULL, n, p)))
        return false;
    (void)e;
    if (p->spec.cpu_milli > n->spec.cpu_milli || p->spec.mem_mib > n->spec.mem_mib ||
        (n->spec.pods_limited && n->spec.pods_max == 0) ||
        (p->spec.nscalars && !gp_eng_scalars_fit(n, p, true)))
        return false;
    if (p->spec.gpu_count == 0)
        return true;
    if (!(p->model_mask >> n->model & 1))
        return false;
    if (n->spec.sharing) /* replicas, clients or instances of an empty node */
        return gp_share_empty_fits(n, p);
    if (p->spec.share_modes || p->spec.mig_profile || p->spec.gpu_resource == GP_GPU_RES_SHARED) {
        if (n->spec.gpu_count == 0 || !gp_share_mode_ok(n, p))
            return false;
    }
    if (!gp_eng_driver_ok(n, p))
        return false;
    return p->spec.gpu_count <= n->spec.gpu_count && p->spec.gpu_mem_mib <= n->spec.gpu_mem_mib;
}

bool gp_eng_fits_some_empty(const struct gp_engine *e, const struct gp_pod *p)
{
    for (size_t i = 0; i < e->nodes.len; i++)
        if (gp_eng_fits_empty(e, &e->nodes.items[i], p))
            return true;
    return false;
}

void gp_driver_text(uint32_t code, bool full, char *buf, size_t size)
{
    unsigned maj = code / 100000u, min = code / 100u % 1000u, pat = code % 100u;
    if (min == 0 && pat == 0)
        snprintf(buf, size, "%u", maj);
    else if (full && pat)
        snprintf(buf, size, "%u.%02u.%02u", maj, min, pat);
    else
        snprintf(buf, size, "%u.%02u", maj, min);
}

size_t gp_engine_explain_driver(const struct gp_engine *e, uint32_t pod, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (!gp_engine_pod(e, pod) || size == 0)
        return 0;
    const struct gp_pod *p = pod_at(e, pod);
    uint32_t lo = UINT32_MAX, hi = 0;
    size_t count = 0;
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *n = &e->nodes.items[i];
        if (filter_fit(e, n, p) != GP_FILTER_DRIVER)
            continue;
        count++;
        lo = n->spec.driver_version < lo ? n->spec.driver_version : lo;
        hi = n->spec.driver_version > hi ? n->spec.driver_version : hi;
    }
    if (count == 0)
        return 0;
    /* major.minor, unless that makes the node's driver and the need alike */
    char a[24], b[24], need[24], hn[24];
    gp_driver_text(hi, false, hn, sizeof hn);
    gp_driver_text(p->spec.cuda_driver_min, false, need, sizeof need);
    bool full = strcmp(hn, need) == 0;
    gp_driver_text(lo, full, a, sizeof a);
    gp_driver_text(hi, full, b, sizeof b);
    gp_driver_text(p->spec.cuda_driver_min, full, need, sizeof need);
    const char *cuda = p->spec.cuda_version ? p->spec.cuda_version : "?";
    if (lo == hi)
        snprintf(buf, size, "node(s) had driver %s < %s needed by CUDA %s", a, need, cuda);
    else
        snprintf(buf, size, "node(s) had drivers %s to %s < %s needed by CUDA %s", a, b, need,
                 cuda);
    return count;
}
