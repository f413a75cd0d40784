/* share_study.c - the renter's question (share_study.h): for each GPU pool
 * and way of sharing, the fewest nodes that hold every peak of the
 * workload's timeline (share_peaks.c), with the pods the pool may not
 * take sized on the pools they may go to, packed by the engine itself
 * (share_pack.c); options ranked by the cost of the work they do, those
 * that leave a service past its latency limit (share_latency.c) after
 * those that meet every one. */
#include "plan/share_study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/share_internal.h"

/* The replica counts tried for time-slicing and MPS. */
static const uint32_t ts_replicas[] = {2, 4, 6, 8, 12, 16};
static const uint32_t mps_replicas[] = {2, 3, 4, 5, 6, 7, 8};

struct study {
    const struct gp_cluster *c;
    const struct gp_workload *w;
    struct gp_study_peak *peaks;
    size_t npeaks;
    /* per pool (cluster order): a node as configured; per item x pool:
     * whether the item may go there (no placement constraint refuses it)
     * and, when not, the filter that refused it */
    struct gp_node_spec *configured;
    bool *gpu_pool;
    bool *may;
    enum gp_filter *refused_by;
    bool *has_pods;               /* per item: some peak runs a pod of it */
    struct gp_study_limited *lim; /* the services with a latencyLimit */
    size_t nlim;
    struct gp_arena *a;
    struct gp_diag *diag;
};

static bool *may_at(const struct study *s, size_t item, size_t pool)
{
    return &s->may[item * s->c->npools + pool];
}

static enum gp_err oom(struct study *s)
{
    return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
}

/* The node spec of pool p shared by sh: the pool with one node, expanded
 * as every cluster is (gp_cluster_expand: its labels, the pool and model
 * labels, its price). */
static enum gp_err pool_node(struct study *s, const struct gp_pool_spec *p,
                             const struct gp_sharing_spec *sh, struct gp_node_spec *out)
{
    struct gp_pool_spec *one = gp_arena_alloc(s->a, sizeof *one);
    if (!one)
        return oom(s);
    *one = *p;
    one->count = one->min_count = one->max_count = 1;
    one->sharing = *sh;
    struct gp_cluster c = {.name = p->name, .source = p->name, .pools = one, .npools = 1};
    enum gp_err err = gp_cluster_expand(&c, s->a, s->diag);
    if (err == GP_OK)
        *out = c.nodes[0];
    return err;
}

/* Where each item's pods may go: one pod of it on one empty node of every
 * pool, as configured; a placement constraint's refusal keeps it away. */
static enum gp_err eligibility(struct study *s)
{
    size_t np = s->c->npools, ni = s->w->nitems, cells = ni * np > 0 ? ni * np : 1;
    s->configured = gp_arena_alloc(s->a, (np ? np : 1) * sizeof *s->configured);
    s->gpu_pool = gp_arena_alloc(s->a, (np ? np : 1) * sizeof *s->gpu_pool);
    s->may = gp_arena_alloc(s->a, cells * sizeof *s->may);
    s->refused_by = gp_arena_alloc(s->a, cells * sizeof *s->refused_by);
    s->has_pods = gp_arena_alloc(s->a, (ni ? ni : 1) * sizeof *s->has_pods);
    if (!s->configured || !s->gpu_pool || !s->may || !s->refused_by || !s->has_pods)
        return oom(s);
    for (size_t i = 0; i < ni; i++) {
        s->has_pods[i] = false;
        for (size_t k = 0; k < s->npeaks && !s->has_pods[i]; k++)
            s->has_pods[i] = s->peaks[k].count[i] > 0;
    }
    for (size_t q = 0; q < np; q++) {
        const struct gp_pool_spec *p = &s->c->pools[q];
        s->gpu_pool[q] = p->gpu_model && *p->gpu_model && p->gpus_per_node > 0;
        enum gp_err err = GP_OK;
        if (s->gpu_pool[q] && (err = pool_node(s, p, &p->sharing, &s->configured[q])) != GP_OK)
            return err;
        for (size_t i = 0; i < ni; i++) {
            *may_at(s, i, q) = false;
            s->refused_by[i * np + q] = GP_FILTER_COUNT;
            if (!s->gpu_pool[q] || !s->has_pods[i])
                continue;
            const struct gp_pod_spec *pod = &s->w->items[i].pod;
            struct gp_study_trial t;
            if ((err = gp_study_pack(&s->configured[q], 1, &pod, 1, &t, s->diag)) != GP_OK)
                return err;
            *may_at(s, i, q) = t.all || gp_study_resource_filter(t.reason);
            if (!*may_at(s, i, q))
                s->refused_by[i * np + q] = t.reason;
        }
    }
    return GP_OK;
}

/* The services with a latencyLimit whose Deployment runs on the timeline. */
static enum gp_err limited(struct study *s)
{
    const struct gp_workload *w = s->w;
    s->lim = gp_arena_alloc(s->a, (w->nservices ? w->nservices : 1) * sizeof *s->lim);
    if (!s->lim)
        return oom(s);
    for (size_t j = 0; j < w->nservices; j++) {
        const struct gp_service *v = &w->services[j];
        if (!(v->latency_limit_s > 0) || !v->deployment)
            continue;
        for (size_t i = 0; i < w->nitems; i++)
            if (w->items[i].kind == GP_ITEM_DEPLOYMENT && s->has_pods[i] && w->items[i].name &&
                strcmp(w->items[i].name, v->deployment) == 0) {
                struct gp_study_limited *l = &s->lim[s->nlim++];
                l->svc = v;
                l->item = i;
                gp_study_pack_service(w, v, &l->model);
                break;
            }
    }
    return GP_OK;
}

/* What a way of sharing isolates, one line (in the arena). */
static const char *isolation_text(struct study *s, const struct gp_sharing_spec *sh)
{
    switch (sh->mode) {
    case GP_SHARE_EXCLUSIVE:
        return "full: each pod has whole GPUs to itself";
    case GP_SHARE_TIMESLICE:
        return "none for memory or faults: the pods of a GPU share its time and memory "
               "(slowdown in the table)";
    case GP_SHARE_MPS: {
        const char *t = gp_arena_printf(
            s->a,
            "limits per client (%u %% of the SMs, %.0f GiB of memory), but no fault isolation: "
            "a fault in one client stops the others on its GPU",
            sh->mps.active_thread_pct, sh->mps.pinned_mem_mib / 1024.0);
        return t ? t : "per-client limits";
    }
    case GP_SHARE_MIG:
        return "in hardware: each instance has its own memory, cache and SMs";
    }
    return "";
}

/* The fewest nodes of spec that hold the pods of items marked in take at
 * every peak; *at is the peak that needed them (the first such). 0 nodes
 * when some peak needs more than the search tries. */
static enum gp_err size_for_peaks(struct study *s, const struct gp_node_spec *spec,
                                  const bool *take, uint32_t *nodes, size_t *at, uint32_t *most)
{
    *nodes = 0;
    *at = 0;
    *most = 0;
    bool any = false;
    for (size_t k = 0; k < s->npeaks; k++) {
        const struct gp_pod_spec **pods;
        size_t n;
        enum gp_err err = gp_study_peak_pods(s->w, &s->peaks[k], take, &pods, &n, s->diag);
        if (err != GP_OK || n == 0) {
            free(pods);
            if (err != GP_OK)
                return err;
            continue;
        }
        if (!any) {
            *at = k;
            any = true;
        }
        if (n > *most)
            *most = (uint32_t)n;
        uint32_t need = *nodes;
        struct gp_study_trial t;
        if (*nodes > 0)
            err = gp_study_pack(spec, *nodes, pods, n, &t, s->diag);
        if (err == GP_OK && (*nodes == 0 || !t.all)) {
            err = gp_study_fewest(spec, *nodes + 1, pods, n, &need, s->diag);
            if (err == GP_OK && need == 0) { /* too many */
                free(pods);
                *nodes = 0;
                *at = k;
                return GP_OK;
            }
            if (err == GP_OK) {
                *nodes = need;
                *at = k;
            }
        }
        free(pods);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* The trial of peak k's pods of the items in take on n nodes of spec. */
static enum gp_err trial_at(struct study *s, const struct gp_node_spec *spec, uint32_t n, size_t k,
                            const bool *take, struct gp_study_trial *t)
{
    const struct gp_pod_spec **pods;
    size_t np;
    memset(t, 0, sizeof *t);
    enum gp_err err = gp_study_peak_pods(s->w, &s->peaks[k], take, &pods, &np, s->diag);
    if (err == GP_OK && np > 0)
        err = gp_study_pack(spec, n, pods, np, t, s->diag);
    free(pods);
    return err;
}

/* The first pod of an item in take that fits no empty node of spec: its
 * item, and why (in the arena); -1 when every one fits. */
static enum gp_err first_misfit(struct study *s, const struct gp_node_spec *spec, const bool *take,
                                long *item, const char **why)
{
    *item = -1;
    for (size_t i = 0; i < s->w->nitems; i++) {
        if (!take[i])
            continue;
        const struct gp_pod_spec *pod = &s->w->items[i].pod;
        struct gp_study_trial t;
        enum gp_err err = gp_study_pack(spec, 1, &pod, 1, &t, s->diag);
        if (err != GP_OK)
            return err;
        if (!t.all) {
            *item = (long)i;
            *why = gp_arena_strdup(s->a, t.has_refusal ? t.refusal : gp_filter_text(t.reason));
            return *why ? GP_OK : oom(s);
        }
    }
    return GP_OK;
}

static const char *item_name(const struct study *s, size_t i)
{
    return s->w->items[i].name ? s->w->items[i].name : "?";
}

/* The pods pool q may not take, each on the first other pool it may go
 * to (as configured): o->forced, and what they add to its cost and work.
 * sizing_peak: the option's peak, where the forced pods are counted. */
static enum gp_err forced_pools(struct study *s, size_t q, size_t sizing_peak,
                                struct gp_study_option *o, double *rate_sum)
{
    size_t np = s->c->npools, ni = s->w->nitems;
    bool *take = gp_arena_alloc(s->a, (ni ? ni : 1) * sizeof *take);
    struct gp_study_forced *f = gp_arena_alloc(s->a, (np ? np : 1) * sizeof *f);
    if (!take || !f)
        return oom(s);
    size_t nf = 0;
    for (size_t h = 0; h < np; h++) {
        if (h == q || !s->gpu_pool[h])
            continue;
        bool any = false;
        for (size_t i = 0; i < ni; i++) {
            take[i] = false;
            if (!s->has_pods[i] || *may_at(s, i, q) || !*may_at(s, i, h))
                continue;
            bool earlier = false; /* the first pool it may go to is its home */
            for (size_t e = 0; e < h && !earlier; e++)
                earlier = e != q && *may_at(s, i, e);
            take[i] = !earlier;
            any |= take[i];
        }
        if (!any)
            continue;
        const struct gp_pool_spec *p = &s->c->pools[h];
        long bad;
        const char *why;
        enum gp_err err = first_misfit(s, &s->configured[h], take, &bad, &why);
        if (err != GP_OK)
            return err;
        if (bad >= 0) {
            o->feasible = false;
            o->why = gp_arena_printf(s->a,
                                     "pod %s may not go to %s and fits no empty %s node "
                                     "(%s, as configured): %s",
                                     item_name(s, (size_t)bad), o->pool, p->name,
                                     gp_share_mode_name(p->sharing.mode), why);
            return o->why ? GP_OK : oom(s);
        }
        uint32_t nodes, most;
        size_t at;
        if ((err = size_for_peaks(s, &s->configured[h], take, &nodes, &at, &most)) != GP_OK)
            return err;
        if (nodes == 0) {
            o->feasible = false;
            o->why = gp_arena_printf(s->a, "the pods %s may not take need more than %d %s nodes",
                                     o->pool, GP_STUDY_MAX_NODES, p->name);
            return o->why ? GP_OK : oom(s);
        }
        struct gp_study_trial t;
        if ((err = trial_at(s, &s->configured[h], nodes, sizing_peak, take, &t)) != GP_OK)
            return err;
        f[nf++] = (struct gp_study_forced){p->name,
                                           p->sharing.mode,
                                           p->sharing.replicas ? p->sharing.replicas : 1,
                                           nodes,
                                           nodes * p->gpus_per_node,
                                           most,
                                           nodes * p->price_per_hour_usd};
        o->usd_per_hour += nodes * p->price_per_hour_usd;
        o->pods += t.pods;
        o->slowdown_mean += t.slowdown_sum; /* a sum until the caller divides */
        if (t.slowdown_max > o->slowdown_max)
            o->slowdown_max = t.slowdown_max;
        *rate_sum += t.rate_sum;
    }
    o->forced = f;
    o->nforced = nf;
    return GP_OK;
}

/* One option: pool q shared by sh. */
static enum gp_err study_option(struct study *s, size_t q, const struct gp_sharing_spec *sh,
                                struct gp_study_option *o)
{
    const struct gp_pool_spec *p = &s->c->pools[q];
    size_t ni = s->w->nitems;
    memset(o, 0, sizeof *o);
    o->pool = p->name;
    o->gpu_model = p->gpu_model;
    o->mode = sh->mode;
    o->replicas = sh->replicas ? sh->replicas : 1;
    o->rename_by_default = sh->rename_by_default;
    o->fail_requests_greater_than_one = sh->fail_requests_greater_than_one;
    o->isolation = isolation_text(s, sh);
    struct gp_node_spec spec;
    enum gp_err err = pool_node(s, p, sh, &spec);
    bool *take = gp_arena_alloc(s->a, (ni ? ni : 1) * sizeof *take);
    if (err != GP_OK)
        return err;
    if (!take)
        return oom(s);
    long first = -1, refused = -1;
    for (size_t i = 0; i < ni; i++) {
        take[i] = s->has_pods[i] && *may_at(s, i, q);
        if (take[i] && first < 0)
            first = (long)i;
        if (s->has_pods[i] && !take[i] && refused < 0)
            refused = (long)i;
    }
    if (first < 0) {
        o->why = gp_arena_printf(
            s->a, "no pod may go to %s (pod %s: %s)", p->name,
            refused >= 0 ? item_name(s, (size_t)refused) : "?",
            refused >= 0 ? gp_filter_text(s->refused_by[(size_t)refused * s->c->npools + q])
                         : "no pods");
        return o->why ? GP_OK : oom(s);
    }
    long bad;
    const char *why;
    if ((err = first_misfit(s, &spec, take, &bad, &why)) != GP_OK)
        return err;
    if (bad >= 0) { /* a pod that fits no empty node rules the option out */
        o->why = gp_arena_printf(s->a, "pod %s fits no empty %s node: %s",
                                 item_name(s, (size_t)bad), p->name, why);
        return o->why ? GP_OK : oom(s);
    }
    size_t at;
    uint32_t most;
    if ((err = size_for_peaks(s, &spec, take, &o->nodes, &at, &most)) != GP_OK)
        return err;
    if (o->nodes == 0) {
        o->why = gp_arena_printf(s->a, "more than %d nodes", GP_STUDY_MAX_NODES);
        return o->why ? GP_OK : oom(s);
    }
    struct gp_study_trial t;
    if ((err = trial_at(s, &spec, o->nodes, at, take, &t)) != GP_OK)
        return err;
    o->feasible = true;
    o->gpus = o->nodes * p->gpus_per_node;
    o->gpus_busy = t.gpus_busy;
    o->peak_t_s = s->peaks[at].t_s;
    o->pool_usd_per_hour = o->usd_per_hour = o->nodes * p->price_per_hour_usd;
    o->pods = t.pods;
    o->slowdown_mean = t.slowdown_sum;
    o->slowdown_max = t.slowdown_max;
    double rate_sum = t.rate_sum;
    if ((err = forced_pools(s, q, at, o, &rate_sum)) != GP_OK || !o->feasible)
        return err;
    o->slowdown_mean = o->pods ? o->slowdown_mean / o->pods : 1;
    o->work_usd_per_hour = rate_sum > 0 ? o->usd_per_hour * o->pods / rate_sum : 0;
    return gp_study_latency_check(s->w, s->peaks, s->npeaks, s->lim, s->nlim, &spec, o->nodes, take,
                                  o, s->a, s->diag);
}

/* Whether x and y differ beyond rounding (sums of slowdowns in another
 * order). */
static bool differ(double x, double y)
{
    return fabs(x - y) > 1e-9 * (fabs(x) > fabs(y) ? fabs(x) : fabs(y));
}

/* Whether a is a better setting of one mode than b: feasible, within every
 * latency limit, cheaper work, then its pods slowed down less (the same
 * work at less delay), fewer nodes, then (tried in increasing order) fewer
 * replicas. */
static bool better(const struct gp_study_option *a, const struct gp_study_option *b, bool limits)
{
    if (a->feasible != b->feasible)
        return a->feasible;
    if (!a->feasible)
        return false;
    if (limits && a->meets_limits != b->meets_limits)
        return a->meets_limits;
    if (differ(a->work_usd_per_hour, b->work_usd_per_hour))
        return a->work_usd_per_hour < b->work_usd_per_hour;
    if (differ(a->slowdown_mean, b->slowdown_mean))
        return a->slowdown_mean < b->slowdown_mean;
    return a->nodes < b->nodes;
}

/* Whether a replicated option of pool p is renamed (its replicas
 * advertised as nvidia.com/gpu.shared): as the pool says when it shares
 * its GPUs that way, else when the workload asks for nvidia.com/gpu.shared
 * and never for nvidia.com/gpu, as the device plugin must then be set up. */
static bool rename_for(const struct study *s, const struct gp_pool_spec *p)
{
    if (p->sharing.mode == GP_SHARE_TIMESLICE || p->sharing.mode == GP_SHARE_MPS)
        return p->sharing.rename_by_default;
    bool shared = false;
    for (size_t i = 0; i < s->w->nitems; i++) {
        const struct gp_pod_spec *q = &s->w->items[i].pod;
        if (!s->has_pods[i] || q->gpu_count == 0 || q->mig_profile)
            continue;
        if (q->gpu_resource == GP_GPU_RES_GPU)
            return false;
        shared |= q->gpu_resource == GP_GPU_RES_SHARED;
    }
    return shared;
}

/* The best setting of a replicated mode (time-slicing or MPS), and in
 * *miss (*has_miss) the setting that would do the work cheaper but leaves
 * a service past its latency limit, when there is one. */
static enum gp_err study_replicated(struct study *s, size_t q, enum gp_share_mode mode,
                                    const uint32_t *replicas, size_t nr,
                                    struct gp_study_option *best, struct gp_study_option *miss,
                                    bool *has_miss)
{
    *has_miss = false;
    const struct gp_pool_spec *p = &s->c->pools[q];
    for (size_t i = 0; i < nr; i++) {
        struct gp_sharing_spec *sh = gp_arena_alloc(s->a, sizeof *sh);
        if (!sh)
            return oom(s);
        memset(sh, 0, sizeof *sh);
        sh->mode = mode;
        sh->replicas = replicas[i];
        sh->rename_by_default = rename_for(s, p);
        /* the pool's own setting, else the device plugin's default (false
         * for time-slicing; MPS always fails such requests) */
        sh->fail_requests_greater_than_one =
            p->sharing.mode == GP_SHARE_TIMESLICE && p->sharing.fail_requests_greater_than_one;
        if (mode == GP_SHARE_MPS) {
            sh->fail_requests_greater_than_one = true;
            sh->mps.active_thread_pct = 100 / replicas[i];
            sh->mps.pinned_mem_mib = p->gpu_mem_mib / replicas[i];
        }
        struct gp_study_option o;
        enum gp_err err = study_option(s, q, sh, &o);
        if (err != GP_OK)
            return err;
        if (i == 0 || better(&o, best, true))
            *best = o;
        if (i == 0 || better(&o, miss, false))
            *miss = o;
    }
    *has_miss = miss->feasible && !miss->meets_limits && best->replicas != miss->replicas;
    return GP_OK;
}

bool gp_study_isolated(enum gp_share_mode mode)
{
    return mode == GP_SHARE_EXCLUSIVE || mode == GP_SHARE_MIG;
}

/* Whether option a ranks before b: cheaper work, then less slowdown, then
 * fewer GPUs rented. */
static bool cheaper(const struct gp_study_option *a, const struct gp_study_option *b)
{
    if (differ(a->work_usd_per_hour, b->work_usd_per_hour))
        return a->work_usd_per_hour < b->work_usd_per_hour;
    if (differ(a->slowdown_mean, b->slowdown_mean))
        return a->slowdown_mean < b->slowdown_mean;
    return a->gpus < b->gpus;
}

/* The cheapest feasible option by the cost of its work (within every
 * latency limit, if asked; among isolated modes only, if asked; ties as
 * cheaper() says, then the first), or -1. */
static int cheapest_of(const struct gp_study_option *o, size_t n, bool only_isolated, bool limits)
{
    int best = -1;
    for (size_t i = 0; i < n; i++)
        if (o[i].feasible && (!limits || o[i].meets_limits) &&
            (!only_isolated || gp_study_isolated(o[i].mode)) &&
            (best < 0 || cheaper(&o[i], &o[best])))
            best = (int)i;
    return best;
}

/* The items whose pods may not go to every GPU pool, and where they may. */
static enum gp_err constraints(struct study *s, struct gp_study *out)
{
    size_t ni = s->w->nitems, np = s->c->npools, n = 0;
    struct gp_study_constraint *v = gp_arena_alloc(s->a, (ni ? ni : 1) * sizeof *v);
    if (!v)
        return oom(s);
    for (size_t i = 0; i < ni; i++) {
        if (!s->has_pods[i])
            continue;
        char pools[512] = "", refused[256] = "";
        for (size_t q = 0; q < np; q++) {
            if (!s->gpu_pool[q])
                continue;
            if (*may_at(s, i, q)) {
                size_t len = strlen(pools);
                snprintf(pools + len, sizeof pools - len, "%s%s", len ? ", " : "",
                         s->c->pools[q].name);
            } else if (!refused[0]) {
                snprintf(refused, sizeof refused, "%s: %s", s->c->pools[q].name,
                         gp_filter_text(s->refused_by[i * np + q]));
            }
        }
        if (!refused[0])
            continue;
        uint32_t most = 0;
        for (size_t k = 0; k < s->npeaks; k++)
            most = s->peaks[k].count[i] > most ? s->peaks[k].count[i] : most;
        v[n] = (struct gp_study_constraint){item_name(s, i), most, gp_arena_strdup(s->a, pools),
                                            gp_arena_strdup(s->a, refused)};
        if (!v[n].pools || !v[n].refused)
            return oom(s);
        n++;
    }
    out->constraints = v;
    out->nconstraints = n;
    return GP_OK;
}

/* Every option of GPU pool q: exclusive, time-slicing, MPS and MIG where
 * the model has it. */
static enum gp_err pool_options(struct study *s, size_t q, struct gp_study_option *o, size_t *k)
{
    const struct gp_pool_spec *p = &s->c->pools[q];
    struct gp_sharing_spec *ex = gp_arena_alloc(s->a, sizeof *ex);
    if (!ex)
        return oom(s);
    memset(ex, 0, sizeof *ex);
    ex->replicas = 1;
    enum gp_err err;
    bool miss;
    if ((err = study_option(s, q, ex, &o[(*k)++])) != GP_OK)
        return err;
    /* a setting that would be cheaper but misses a latency limit is a row of
     * its own, after the setting chosen */
    if ((err = study_replicated(s, q, GP_SHARE_TIMESLICE, ts_replicas,
                                sizeof ts_replicas / sizeof ts_replicas[0], &o[*k], &o[*k + 1],
                                &miss)) != GP_OK)
        return err;
    *k += miss ? 2 : 1;
    if ((err = study_replicated(s, q, GP_SHARE_MPS, mps_replicas,
                                sizeof mps_replicas / sizeof mps_replicas[0], &o[*k], &o[*k + 1],
                                &miss)) != GP_OK)
        return err;
    *k += miss ? 2 : 1;
    const struct gp_mig_model *m = gp_mig_model_find(p->gpu_model);
    if (!m)
        return GP_OK;
    struct gp_sharing_spec *mg = gp_arena_alloc(s->a, sizeof *mg);
    if (!mg)
        return oom(s);
    memset(mg, 0, sizeof *mg);
    mg->mode = GP_SHARE_MIG;
    mg->replicas = 1;
    mg->mig.model = m;
    mg->mig.dynamic = true;
    return study_option(s, q, mg, &o[(*k)++]);
}

enum gp_err gp_study_sharing(const struct gp_cluster *cluster, const struct gp_workload *w,
                             const struct gp_study_run *runs, size_t nruns, struct gp_arena *a,
                             struct gp_study *out, struct gp_diag *diag)
{
    struct study s = {.c = cluster, .w = w, .a = a, .diag = diag};
    memset(out, 0, sizeof *out);
    out->cheapest = out->cheapest_isolated = out->cheapest_fit = -1;
    size_t max = 0;
    enum gp_err err = gp_study_peaks(w, runs, nruns, a, &s.peaks, &s.npeaks, &max, &out->runs,
                                     &out->cpu_only_runs, diag);
    if (err != GP_OK)
        return err;
    if (s.npeaks == 0)
        return gp_diag_set(diag, GP_EINVALID, "the workload has no pods with GPUs to place");
    out->peak_pods = s.peaks[max].pods;
    out->peak_t_s = s.peaks[max].t_s;
    out->peaks = s.npeaks;
    if ((err = eligibility(&s)) != GP_OK || (err = limited(&s)) != GP_OK)
        return err;
    size_t cap = 0;
    for (size_t q = 0; q < cluster->npools; q++)
        cap += s.gpu_pool[q] ? 6 : 0; /* 4, and 2 settings that miss a latency limit */
    if (cap == 0)
        return gp_diag_set(diag, GP_EINVALID, "%s: no node pool with GPUs to study",
                           cluster->source ? cluster->source : "cluster");
    struct gp_study_option *opts = gp_arena_alloc(a, cap * sizeof *opts);
    if (!opts)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t q = 0; q < cluster->npools; q++)
        if (s.gpu_pool[q] && (err = pool_options(&s, q, opts, &k)) != GP_OK)
            return err;
    if ((err = constraints(&s, out)) != GP_OK)
        return err;
    out->options = opts;
    out->noptions = k;
    out->cheapest = cheapest_of(opts, k, false, true);
    out->cheapest_isolated = cheapest_of(opts, k, true, true);
    out->cheapest_fit = cheapest_of(opts, k, false, false);
    out->nlimited = s.nlim;
    return GP_OK;
}
