/* plan_demand.c - the planner's view of a workload: its GPU items grouped
 * into classes of need (the same allowed GPU models and node selector), and
 * for each what a node must have (GPUs per pod, GPU memory, CPU and memory
 * per GPU, driver) and what the class asks for over the horizon: GPU-hours
 * whole and shared, its peak and its base (the services that run all the
 * time), from the runs a replay would make if nothing waited. Pods that
 * ask MIG instances form classes of their own (their instance-hours per
 * profile), and so do pods whose required node affinity names a zone or
 * region (topology.kubernetes.io/zone or region In [...]). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

#define GFD_PRODUCT "nvidia.com/gpu.product"
#define ZONE_KEY    "topology.kubernetes.io/zone"
#define REGION_KEY  "topology.kubernetes.io/region"

static bool kv_eq(const struct gp_kv *a, size_t na, const struct gp_kv *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].key, b[i].key) != 0 || strcmp(a[i].value, b[i].value) != 0)
            return false;
    return true;
}

static bool models_eq(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return false;
    return true;
}

/* The pod's selector without the GPU product (the pool's model sets it). */
static enum gp_err selector_of(const struct gp_pod_spec *p, struct gp_arena *a,
                               const struct gp_kv **out, size_t *n)
{
    struct gp_kv *kv = gp_arena_alloc(a, (p->nnode_selector + 1) * sizeof *kv);
    if (!kv)
        return GP_ENOMEM;
    *n = 0;
    for (size_t i = 0; i < p->nnode_selector; i++)
        if (strcmp(p->node_selector[i].key, GFD_PRODUCT) != 0)
            kv[(*n)++] = p->node_selector[i];
    *out = kv;
    return GP_OK;
}

/* The pod's required zone or region (its one required node-affinity
 * term's first In on topology.kubernetes.io/zone or region; Kubernetes'
 * well-known labels, kubernetes.io/docs/reference/labels-annotations-taints);
 * NULL when it has none. */
static const struct gp_match_expr *zone_of(const struct gp_pod_spec *p)
{
    const struct gp_pod_constraints *k = p->constraints;
    if (!k || k->nnode_required != 1)
        return NULL;
    const struct gp_node_term *t = &k->node_required[0];
    for (size_t i = 0; i < t->nlabels; i++)
        if (t->labels[i].op == GP_MATCH_IN && t->labels[i].nvalues > 0 &&
            (strcmp(t->labels[i].key, ZONE_KEY) == 0 || strcmp(t->labels[i].key, REGION_KEY) == 0))
            return &t->labels[i];
    return NULL;
}

static bool zone_eq(const struct gp_plan_need *nd, const struct gp_match_expr *z)
{
    if (!z || !nd->zone_key)
        return !z && !nd->zone_key;
    return strcmp(nd->zone_key, z->key) == 0 &&
           models_eq(nd->zone_values, nd->nzone_values, z->values, z->nvalues);
}

/* The index of the MIG profile in the need, added when new; -1 when the
 * need has no room for another. */
static int mig_index(struct gp_plan_need *nd, const char *profile, bool add)
{
    for (size_t k = 0; k < nd->nmig; k++)
        if (strcmp(nd->mig_profiles[k].profile, profile) == 0)
            return (int)k;
    if (!add || nd->nmig == GP_PLAN_MIG_PROFILES)
        return -1;
    nd->mig_profiles[nd->nmig].profile = profile;
    return (int)nd->nmig++;
}

struct edge {
    double t, d; /* time, change */
};

static int edge_cmp(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d < y->d ? -1 : x->d > y->d; /* ends before starts at one instant */
}

/* The peak of a sum of intervals. */
static double peak_of(struct edge *e, size_t n)
{
    qsort(e, n, sizeof *e, edge_cmp);
    double cur = 0, peak = 0;
    for (size_t i = 0; i < n; i++) {
        cur += e[i].d;
        peak = cur > peak ? cur : peak;
    }
    return peak;
}

static void need_label(struct gp_plan_need *nd, struct gp_arena *a)
{
    if (nd->nmodels == 1)
        nd->label = nd->models[0];
    else if (nd->nmodels > 1)
        nd->label = gp_arena_printf(a, "%s or %zu more", nd->models[0], nd->nmodels - 1);
    else
        nd->label = "any GPU";
    if (nd->nselector && nd->label)
        nd->label =
            gp_arena_printf(a, "%s, %s=%s", nd->label, nd->selector[0].key, nd->selector[0].value);
    if (nd->mig && nd->label)
        nd->label = gp_arena_printf(a, "%s, MIG %s%s", nd->label, nd->mig_profiles[0].profile,
                                    nd->nmig > 1 ? "..." : "");
    if (nd->zone_key && nd->label)
        nd->label =
            gp_arena_printf(a, "%s, %s %s", nd->label,
                            strstr(nd->zone_key, "zone") ? "zone" : "region", nd->zone_values[0]);
}

/* The class of item i, added when new; -1 out of memory. */
static int class_of(const struct gp_item *it, struct gp_plan_demand *d, size_t cap,
                    struct gp_arena *a)
{
    const struct gp_kv *sel;
    size_t nsel;
    if (selector_of(&it->pod, a, &sel, &nsel) != GP_OK)
        return -1;
    const struct gp_match_expr *z = zone_of(&it->pod);
    bool mig = it->pod.mig_profile != NULL;
    for (size_t c = 0; c < d->nneeds; c++) {
        struct gp_plan_need *nd = &d->needs[c];
        if (models_eq(nd->models, nd->nmodels, it->pod.gpu_models, it->pod.ngpu_models) &&
            kv_eq(nd->selector, nd->nselector, sel, nsel) && zone_eq(nd, z) && nd->mig == mig &&
            (!mig || mig_index(nd, it->pod.mig_profile, true) >= 0))
            return (int)c;
    }
    if (d->nneeds == cap)
        return -1;
    struct gp_plan_need *nd = &d->needs[d->nneeds];
    memset(nd, 0, sizeof *nd);
    nd->models = it->pod.gpu_models;
    nd->nmodels = it->pod.ngpu_models;
    nd->selector = sel;
    nd->nselector = nsel;
    nd->min_milli = 1000;
    nd->share_modes = 0xF;
    nd->mig = mig;
    if (mig)
        mig_index(nd, it->pod.mig_profile, true);
    if (z) {
        nd->zone_key = z->key;
        nd->zone_values = z->values;
        nd->nzone_values = z->nvalues;
    }
    return (int)d->nneeds++;
}

/* What a pod asks of a node, per GPU it takes there. */
static void add_node_needs(struct gp_plan_need *nd, const struct gp_pod_spec *p)
{
    if (p->cuda_driver_min > nd->driver_min)
        nd->driver_min = p->cuda_driver_min;
    /* a MIG pod: its instances' memory is its profile's, and its share
     * (the profile's compute of 7 slices) says how many fit a GPU */
    uint32_t milli = p->gpu_milli ? p->gpu_milli : 1000;
    double per = p->mig_profile        ? 1000.0 / milli / p->gpu_count
                 : p->gpu_milli < 1000 ? 1000.0 / milli
                                       : 1.0 / p->gpu_count;
    int64_t cpu = (int64_t)ceil((double)p->cpu_milli * per);
    int64_t mem = (int64_t)ceil((double)p->mem_mib * per);
    nd->cpu_per_gpu_milli = cpu > nd->cpu_per_gpu_milli ? cpu : nd->cpu_per_gpu_milli;
    nd->mem_per_gpu_mib = mem > nd->mem_per_gpu_mib ? mem : nd->mem_per_gpu_mib;
    if (p->mig_profile)
        return;
    uint32_t mem_gb = (p->gpu_mem_mib + 1023) / 1024;
    nd->max_gpus = p->gpu_count > nd->max_gpus ? p->gpu_count : nd->max_gpus;
    nd->min_mem_gb = mem_gb > nd->min_mem_gb ? mem_gb : nd->min_mem_gb;
    if (p->gpu_milli < nd->min_milli && p->gpu_milli > 0)
        nd->min_milli = p->gpu_milli;
    if (p->gpu_milli < 1000) {
        nd->max_frac_milli = p->gpu_milli > nd->max_frac_milli ? p->gpu_milli : nd->max_frac_milli;
        nd->max_frac_mem_mib =
            p->gpu_mem_mib > nd->max_frac_mem_mib ? p->gpu_mem_mib : nd->max_frac_mem_mib;
    }
}

/* A MIG class's instance-hours, peak and base per profile (e: scratch
 * for 2 x nspans edges). */
static void mig_stats(struct gp_plan_need *nd, int c, const int *cls, const struct gp_workload *w,
                      const struct gp_plan_span *spans, size_t nspans, double h, struct edge *e)
{
    for (size_t k = 0; k < nd->nmig; k++) {
        struct gp_plan_mig_need *m = &nd->mig_profiles[k];
        size_t ne = 0;
        for (size_t s = 0; s < nspans; s++) {
            const struct gp_pod_spec *p = &w->items[spans[s].item].pod;
            double t0 = spans[s].start_s, t1 = spans[s].end_s < h ? spans[s].end_s : h;
            if (cls[spans[s].item] != c || t1 <= t0 || strcmp(p->mig_profile, m->profile) != 0)
                continue;
            m->inst_hours += p->gpu_count * (t1 - t0) / 3600.0;
            if (spans[s].end_s >= h && t0 <= 0)
                m->base += p->gpu_count;
            e[ne++] = (struct edge){t0, (double)p->gpu_count};
            e[ne++] = (struct edge){t1, -(double)p->gpu_count};
        }
        m->peak = peak_of(e, ne);
    }
}

enum gp_err gp_plan_demand(const struct gp_workload *w, const struct gp_plan_span *spans,
                           size_t nspans, double horizon_s, struct gp_arena *a,
                           struct gp_plan_demand *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->horizon_s = horizon_s;
    size_t cap = w->nitems ? w->nitems : 1;
    int *cls = gp_arena_alloc(a, cap * sizeof *cls);
    out->needs = gp_arena_alloc(a, cap * sizeof *out->needs);
    struct edge *e = malloc((2 * nspans + 1) * sizeof *e);
    struct edge *eall = malloc((2 * nspans + 1) * sizeof *eall);
    if (!cls || !out->needs || !e || !eall) {
        free(e);
        free(eall);
        return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
    }
    for (size_t i = 0; i < w->nitems; i++) {
        const struct gp_item *it = &w->items[i];
        cls[i] = -2; /* CPU only */
        if (it->pod.gpu_count == 0)
            continue;
        if ((cls[i] = class_of(it, out, cap, a)) < 0) {
            free(e);
            free(eall);
            return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
        }
        add_node_needs(&out->needs[cls[i]], &it->pod);
        out->needs[cls[i]].share_modes &= it->pod.share_modes ? it->pod.share_modes : 0xF;
        out->needs[cls[i]].gang |= it->group_name != NULL || it->gang_min > 0;
        if (it->topology_key && it->topology_required && !out->needs[cls[i]].topology_key)
            out->needs[cls[i]].topology_key = it->topology_key;
        if (it->pod.cuda_driver_min > out->driver_min)
            out->driver_min = it->pod.cuda_driver_min;
    }
    double h = horizon_s;
    /* CPU-only pods, and all GPU pods at once */
    size_t ne = 0, nall = 0;
    for (size_t s = 0; s < nspans; s++) {
        const struct gp_item *it = &w->items[spans[s].item];
        double t0 = spans[s].start_s, t1 = spans[s].end_s < h ? spans[s].end_s : h;
        if (t1 <= t0)
            continue;
        if (cls[spans[s].item] == -2) {
            out->cpu_hours += (double)it->pod.cpu_milli / 1000.0 * (t1 - t0) / 3600.0;
            e[ne++] = (struct edge){t0, (double)it->pod.cpu_milli};
            e[ne++] = (struct edge){t1, -(double)it->pod.cpu_milli};
        } else {
            eall[nall++] = (struct edge){t0, (double)it->pod.gpu_count};
            eall[nall++] = (struct edge){t1, -(double)it->pod.gpu_count};
        }
    }
    out->cpu_peak_milli = peak_of(e, ne);
    out->peak_total_gpus = (uint32_t)ceil(peak_of(eall, nall));
    /* each class: hours, peaks and base */
    for (size_t c = 0; c < out->nneeds; c++) {
        struct gp_plan_need *nd = &out->needs[c];
        size_t nw = 0, nf = 0;
        if (nd->mig)
            mig_stats(nd, (int)c, cls, w, spans, nspans, h, e);
        for (size_t s = 0; s < nspans && !nd->mig; s++) {
            if (cls[spans[s].item] != (int)c)
                continue;
            const struct gp_pod_spec *p = &w->items[spans[s].item].pod;
            double t0 = spans[s].start_s, t1 = spans[s].end_s < h ? spans[s].end_s : h;
            if (t1 <= t0)
                continue;
            double hours = (t1 - t0) / 3600.0, share = (double)p->gpu_milli / 1000.0;
            if (p->gpu_milli >= 1000) {
                nd->gpu_hours += p->gpu_count * hours;
            } else {
                nd->frac_pod_hours += hours;
                nd->share_hours += share * hours;
            }
            if (spans[s].end_s >= h && t0 <= 0) { /* a service, all the time */
                nd->base_gpus += p->gpu_milli >= 1000 ? p->gpu_count : 1.0;
                nd->base_shares += p->gpu_milli >= 1000 ? p->gpu_count : share;
            }
            e[nw++] = (struct edge){t0, p->gpu_milli >= 1000 ? (double)p->gpu_count : 1.0};
            e[nw++] = (struct edge){t1, p->gpu_milli >= 1000 ? -(double)p->gpu_count : -1.0};
            eall[nf++] = (struct edge){t0, p->gpu_milli >= 1000 ? (double)p->gpu_count : share};
            eall[nf++] = (struct edge){t1, p->gpu_milli >= 1000 ? -(double)p->gpu_count : -share};
        }
        nd->peak_gpus = peak_of(e, nw);
        nd->peak_shares = peak_of(eall, nf);
        need_label(nd, a);
        if (!nd->label) {
            free(e);
            free(eall);
            return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
        }
    }
    free(e);
    free(eall);
    return GP_OK;
}
