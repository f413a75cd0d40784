/* share_pack.c - the sharing study's packing (share_internal.h): a set of
 * pods placed one by one by the engine itself (best fit) onto n empty
 * nodes of a pool, the slowdown of each pod where it lands (and the memory
 * it may use), and the fewest nodes that hold a set. */
#include <stdlib.h>
#include <string.h>

#include "engine/share.h"
#include "plan/share_internal.h"

bool gp_study_resource_filter(enum gp_filter f)
{
    switch (f) {
    case GP_FILTER_SHARING:
    case GP_FILTER_GPU_COUNT:
    case GP_FILTER_GPU_SHARE:
    case GP_FILTER_GPU_MEMORY:
    case GP_FILTER_GPU_REPLICA:
    case GP_FILTER_MIG:
        return true;
    default: /* node selector, taint, GPU model, affinities: where it may go;
              * a node's CPU or memory too small for it, whatever the mode */
        return false;
    }
}

/* A pod's compute demand: its gpu-milli, or all of a GPU when it declares
 * none. */
static double demand_milli(const struct gp_pod *p)
{
    return p->spec.gpu_milli > 0 ? p->spec.gpu_milli : GP_GPU_MILLI;
}

/* How much slower than alone a bound pod runs (docs/sharing.md, "The
 * renter's question"): on time-sliced GPUs the company of its most crowded
 * GPU (demand[g]: the sum over the GPU's pods, each counted once); under
 * MPS its client's thread limit; on MIG an instance with less compute than
 * it wants. */
static double slowdown(const struct gp_node *n, const struct gp_pod *p, const double *demand)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    double slow = 1;
    if (!s || p->pick.ngpus == 0)
        return 1;
    if (s->mode == GP_SHARE_TIMESLICE) {
        for (uint32_t i = 0; i < p->pick.ngpus; i++)
            if (demand[p->pick.gpu[i]] / GP_GPU_MILLI > slow)
                slow = demand[p->pick.gpu[i]] / GP_GPU_MILLI;
    } else if (s->mode == GP_SHARE_MPS && s->mps.active_thread_pct > 0) {
        double limit = s->mps.active_thread_pct * (GP_GPU_MILLI / 100.0);
        if (demand_milli(p) > limit)
            slow = demand_milli(p) / limit;
    } else if (s->mode == GP_SHARE_MIG && n->mig_model >= 0 && p->pick.mig_profile >= 0) {
        const struct gp_mig_model *m = &gp_mig_models[n->mig_model];
        double instance = (double)m->profiles[p->pick.mig_profile].compute_slices * GP_GPU_MILLI /
                          m->compute_slices;
        if (demand_milli(p) > instance)
            slow = demand_milli(p) / instance;
    }
    return slow;
}

/* The memory a bound pod may use, as a fraction of its GPU's: an MPS
 * client's pinned-memory limit, a MIG instance's memory, what it declares
 * on a time-sliced GPU (nothing partitions it), else all of it. */
static double mem_frac(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    double gpu = n->spec.gpu_mem_mib, m = gpu;
    if (!s || !(gpu > 0) || p->pick.ngpus == 0)
        return 1;
    if (s->mode == GP_SHARE_MPS && s->mps.pinned_mem_mib > 0)
        m = s->mps.pinned_mem_mib;
    else if (s->mode == GP_SHARE_MIG && n->mig_model >= 0 && p->pick.mig_profile >= 0)
        m = gp_mig_models[n->mig_model].profiles[p->pick.mig_profile].memory_mib;
    else if (s->mode == GP_SHARE_TIMESLICE && p->spec.gpu_mem_mib > 0)
        m = p->spec.gpu_mem_mib;
    return m < gpu ? m / gpu : 1;
}

/* Busy GPUs and each bound pod's slowdown (and, per pod id, its speed and
 * memory fraction where asked). */
static enum gp_err measure(struct gp_engine *e, uint32_t n, struct gp_study_trial *t, double *speed,
                           double *mem, size_t nout, struct gp_diag *diag)
{
    double(*demand)[GP_MAX_GPUS_PER_NODE] = calloc(n ? n : 1, sizeof *demand);
    if (!demand)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    size_t npods = gp_engine_pod_count(e);
    for (size_t k = 0; k < npods; k++) { /* once on each GPU it holds replicas of */
        const struct gp_pod *p = gp_engine_pod(e, (uint32_t)k);
        if (p->state != GP_POD_BOUND)
            continue;
        uint32_t seen = 0;
        for (uint32_t i = 0; i < p->pick.ngpus; i++)
            if (!(seen >> p->pick.gpu[i] & 1)) {
                seen |= 1u << p->pick.gpu[i];
                demand[p->node][p->pick.gpu[i]] += demand_milli(p);
            }
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct gp_node *node = gp_engine_node(e, i);
        for (uint32_t g = 0; g < node->spec.gpu_count; g++)
            t->gpus_busy += node->gpu[g].pods > 0;
    }
    for (size_t k = 0; k < npods; k++) {
        const struct gp_pod *p = gp_engine_pod(e, (uint32_t)k);
        if (p->state != GP_POD_BOUND)
            continue;
        double slow = slowdown(gp_engine_node(e, p->node), p, demand[p->node]);
        if (speed && k < nout) {
            speed[k] = 1 / slow;
            mem[k] = mem_frac(gp_engine_node(e, p->node), p);
        }
        t->pods++;
        t->slowdown_sum += slow;
        t->rate_sum += 1 / slow;
        if (slow > t->slowdown_max)
            t->slowdown_max = slow;
    }
    free(demand);
    return GP_OK;
}

enum gp_err gp_study_pack(const struct gp_node_spec *spec, uint32_t n,
                          const struct gp_pod_spec *const *pods, size_t npods,
                          struct gp_study_trial *t, struct gp_diag *diag)
{
    return gp_study_pack_pods(spec, n, pods, npods, t, NULL, NULL, diag);
}

enum gp_err gp_study_pack_pods(const struct gp_node_spec *spec, uint32_t n,
                               const struct gp_pod_spec *const *pods, size_t npods,
                               struct gp_study_trial *t, double *speed, double *mem_frac,
                               struct gp_diag *diag)
{
    memset(t, 0, sizeof *t);
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    if (!e)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    enum gp_err err = GP_OK;
    for (uint32_t i = 0; i < n && err == GP_OK; i++)
        err = gp_engine_node_add(e, spec, NULL);
    t->all = true;
    for (size_t k = 0; k < npods && err == GP_OK && t->all; k++) {
        struct gp_pod_spec one = *pods[k];
        one.queue = 0; /* queues and gangs play no part here */
        one.group = 0;
        uint32_t id;
        struct gp_decision d;
        if ((err = gp_engine_pod_add(e, &one, 0, &id)) != GP_OK ||
            (err = gp_engine_schedule_pod(e, id, &d)) != GP_OK)
            break;
        if (id != k) /* a fresh engine numbers pods in order; else no per-pod figures */
            speed = mem_frac = NULL;
        if (d.kind != GP_DECISION_BIND) {
            t->all = false;
            t->failed = k;
            t->reason = gp_explain_main(&d.explain);
            if (t->reason == GP_FILTER_SHARING && n > 0 &&
                gp_share_refusal(gp_engine_node(e, 0), gp_engine_pod(e, id), t->refusal,
                                 sizeof t->refusal))
                t->has_refusal = true;
        }
    }
    if (err != GP_OK)
        err = gp_diag_set(diag, err, "pool %s: the engine refused a node or pod: %s",
                          spec->pool ? spec->pool : "?", gp_strerror(err));
    else if (t->all)
        err = measure(e, n, t, speed, mem_frac, npods, diag);
    gp_engine_free(e);
    return err;
}

enum gp_err gp_study_fewest(const struct gp_node_spec *spec, uint32_t lo,
                            const struct gp_pod_spec *const *pods, size_t npods, uint32_t *n,
                            struct gp_diag *diag)
{
    uint32_t cap = npods < GP_STUDY_MAX_NODES ? (uint32_t)npods : GP_STUDY_MAX_NODES;
    struct gp_study_trial t;
    enum gp_err err;
    *n = 0;
    if (lo < 1)
        lo = 1;
    if (lo > cap)
        return GP_OK;
    /* lo, lo + 1, lo + 3, lo + 7, ... until a size holds them, then halving
     * back between the last that did not and the first that did */
    uint32_t bad = lo - 1, good = 0, step = 1, at = lo;
    for (;;) {
        if ((err = gp_study_pack(spec, at, pods, npods, &t, diag)) != GP_OK)
            return err;
        if (t.all) {
            good = at;
            break;
        }
        bad = at;
        if (at >= cap)
            break;
        at = cap - bad > step ? bad + step : cap;
        step *= 2;
    }
    if (!good)
        return GP_OK;
    while (good - bad > 1) {
        uint32_t mid = bad + (good - bad) / 2;
        if ((err = gp_study_pack(spec, mid, pods, npods, &t, diag)) != GP_OK)
            return err;
        if (t.all)
            good = mid;
        else
            bad = mid;
    }
    *n = good;
    return GP_OK;
}
