/* plan_run.c - the planner's search (docs/plan.md, "Search"): candidates in
 * order of their lower bounds, those over the budget pruned, the rest
 * simulated in batches of a fixed size on pthreads (each candidate its own
 * cluster and engine, through the caller's function); before each batch,
 * every candidate whose bound is above the cheapest simulated one that
 * meets the limits (plus the price uncertainty) is pruned. The batches do
 * not depend on the thread count, so neither does the plan. Then the
 * ranking (limits met first, then monthly cost, then generation order) and
 * the winner's spot sensitivity at half and double its interruption rate. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_internal.h"

#define BATCH 16

/* The default p95 queueing delay when the limits file gives none. */
#define DEFAULT_QUEUE_P95_S 900.0

double gp_plan_queue_limit_s(const struct gp_plan_limits *l)
{
    return l->queue_p95_s >= 0 ? l->queue_p95_s : DEFAULT_QUEUE_P95_S;
}

static double monthly(const struct gp_plan *p, double usd)
{
    return usd * GP_PLAN_MONTH_H / (p->demand->horizon_s / 3600.0);
}

/* limits_met and the margins, from the simulation. */
static void judge(const struct gp_plan *p, struct gp_plan_cand *c)
{
    const struct gp_plan_sim *s = &c->sim;
    /* the simulation bills each node as its provider does (billingGranularity,
     * billingMinimum in the candidate's spec): the rounding is in cost_usd */
    c->billing_rounding_usd = monthly(p, s->billing_rounding_usd);
    c->monthly_usd = monthly(p, s->cost_usd);
    c->all_scheduled = s->pods_never_fit == 0 && s->pods_pending_end * 100 <= s->pods_submitted;
    c->queue_margin_s = gp_plan_queue_limit_s(p->limits) - s->queue_p95_s;
    c->budget_margin_usd =
        p->limits->monthly_budget_usd >= 0 ? p->limits->monthly_budget_usd - c->monthly_usd : 0;
    c->latency_margin_s = p->limits->latency_p99_s >= 0 && s->latency_p99_s >= 0
                              ? p->limits->latency_p99_s - s->latency_p99_s
                              : 0;
    c->limits_met = c->all_scheduled && c->queue_margin_s >= 0 && c->budget_margin_usd >= 0 &&
                    c->latency_margin_s >= 0;
    /* spot as an expected cost: interruptions x the work each loses */
    c->spot_expected_lost_usd = 0;
    if (s->spot_node_hours > 0 && s->spot_gpu_hours > 0) {
        double busy = s->spot_gpu_hours_used / s->spot_gpu_hours;
        double ckpt_h = p->limits->checkpoint_s > 0 ? p->limits->checkpoint_s / 3600.0 : 1.0;
        double restart_h =
            (p->limits->restart_s >= 0 ? p->limits->restart_s : GP_PLAN_BOOT_S) / 3600.0;
        double per_gpu_h = s->spot_usd / s->spot_gpu_hours;
        double gpus_per_node = s->spot_gpu_hours / s->spot_node_hours;
        c->spot_expected_lost_usd =
            monthly(p, c->spot_rate * s->spot_node_hours * busy * gpus_per_node *
                           (ckpt_h / 2 + restart_h) * per_gpu_h);
    }
}

struct job {
    struct gp_plan *p;
    struct gp_plan_cand **batch;
    struct gp_cluster *clusters;
    enum gp_err *errs;
    struct gp_diag *diags;
    size_t n, stride, first;
    gp_plan_sim_fn sim;
    void *ctx;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    for (size_t i = j->first; i < j->n; i += j->stride) {
        struct gp_plan_cand *c = j->batch[i];
        j->errs[i] = j->sim(j->ctx, &j->clusters[i], &c->sim, &j->diags[i]);
    }
    return NULL;
}

/* Simulates n candidates on up to `threads` threads. */
static enum gp_err simulate(struct gp_plan *p, struct gp_plan_cand **batch, size_t n,
                            unsigned threads, gp_plan_sim_fn sim, void *ctx, struct gp_arena *a,
                            struct gp_diag *diag)
{
    struct gp_cluster clusters[BATCH];
    enum gp_err errs[BATCH];
    struct gp_diag diags[BATCH];
    struct job jobs[BATCH];
    pthread_t tids[BATCH];
    if (n == 0) /* nothing to run (and no jobs[0] for this thread) */
        return GP_OK;
    for (size_t i = 0; i < n; i++) {
        memset(&clusters[i], 0, sizeof clusters[i]);
        enum gp_err err = gp_plan_cluster(p, batch[i], 1.0, a, &clusters[i], diag);
        if (err != GP_OK)
            return err;
        diags[i].msg[0] = '\0';
        errs[i] = GP_OK;
    }
    size_t nt = threads < 1 ? 1 : threads > n ? n : threads;
    size_t started = 0;
    for (size_t t = 0; t < nt; t++) {
        jobs[t] = (struct job){p, batch, clusters, errs, diags, n, nt, t, sim, ctx};
        if (t == 0 || pthread_create(&tids[t], NULL, worker, &jobs[t]) != 0)
            continue; /* thread 0 is this one; a thread that cannot start: done below */
        started |= (size_t)1 << t;
    }
    worker(&jobs[0]);
    for (size_t t = 1; t < nt; t++) {
        if (started >> t & 1)
            pthread_join(tids[t], NULL);
        else
            worker(&jobs[t]);
    }
    for (size_t i = 0; i < n; i++) {
        if (errs[i] != GP_OK)
            return gp_diag_set(diag, errs[i], "plan: candidate %zu: %s", batch[i]->id,
                               diags[i].msg);
        batch[i]->state = GP_PLAN_SIMULATED;
        judge(p, batch[i]);
    }
    return GP_OK;
}

static int by_bound(const void *a, const void *b)
{
    const struct gp_plan_cand *x = *(const struct gp_plan_cand *const *)a;
    const struct gp_plan_cand *y = *(const struct gp_plan_cand *const *)b;
    if (x->bound_usd != y->bound_usd)
        return x->bound_usd < y->bound_usd ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int by_rank(const void *a, const void *b)
{
    const struct gp_plan_cand *x = a, *y = b;
    bool xs = x->state == GP_PLAN_SIMULATED, ys = y->state == GP_PLAN_SIMULATED;
    if (xs != ys)
        return xs ? -1 : 1;
    if (xs) {
        if (x->limits_met != y->limits_met)
            return x->limits_met ? -1 : 1;
        if (x->monthly_usd != y->monthly_usd)
            return x->monthly_usd < y->monthly_usd ? -1 : 1;
    } else if (x->bound_usd != y->bound_usd) {
        return x->bound_usd < y->bound_usd ? -1 : 1;
    }
    return x->id < y->id ? -1 : x->id > y->id;
}

static bool has_spot(const struct gp_plan_cand *c)
{
    for (size_t i = 0; i < c->npools; i++)
        if (c->pools[i].spot)
            return true;
    return false;
}

static enum gp_err sensitivity(struct gp_plan *p, gp_plan_sim_fn sim, void *ctx, struct gp_arena *a,
                               struct gp_diag *diag)
{
    struct gp_plan_cand *w = &p->cands[0];
    p->nsens = 0;
    if (w->state != GP_PLAN_SIMULATED || !has_spot(w))
        return GP_OK;
    static const double scale[2] = {0.5, 2.0};
    for (size_t k = 0; k < 2; k++) {
        struct gp_cluster cl;
        memset(&cl, 0, sizeof cl);
        struct gp_plan_cand c = *w;
        enum gp_err err = gp_plan_cluster(p, w, scale[k], a, &cl, diag);
        if (err == GP_OK)
            err = sim(ctx, &cl, &c.sim, diag);
        if (err != GP_OK)
            return err;
        c.spot_rate = w->spot_rate * scale[k];
        judge(p, &c);
        p->sens[p->nsens++] =
            (struct gp_plan_sens){c.spot_rate, c.monthly_usd, c.limits_met, c.sim.queue_p95_s};
    }
    return GP_OK;
}

enum gp_err gp_plan_run(struct gp_plan *p, unsigned threads, gp_plan_sim_fn sim, void *ctx,
                        gp_plan_progress_fn progress, void *pctx, struct gp_arena *a,
                        struct gp_diag *diag)
{
    if (threads > BATCH)
        threads = BATCH;
    struct gp_plan_cand **order = malloc((p->ncands ? p->ncands : 1) * sizeof *order);
    if (!order)
        return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
    size_t n = 0;
    for (size_t i = 0; i < p->ncands; i++) {
        struct gp_plan_cand *c = &p->cands[i];
        if (c->bound_usd < 0)
            c->state = GP_PLAN_PRUNED_INFEASIBLE;
        else if (p->limits->monthly_budget_usd >= 0 &&
                 monthly(p, c->bound_usd) > p->limits->monthly_budget_usd)
            c->state = GP_PLAN_PRUNED_BUDGET;
        else
            order[n++] = c;
    }
    qsort(order, n, sizeof *order, by_bound);
    double slack = 1 + p->limits->price_uncertainty_pct / 100.0, best = INFINITY;
    enum gp_err err = GP_OK;
    size_t done = 0;
    for (size_t i = 0; i < n && err == GP_OK; i += BATCH) {
        size_t m = n - i < BATCH ? n - i : BATCH, k = 0;
        while (k < m && order[i + k]->bound_usd <= best * slack)
            k++;
        for (size_t j = i + k; j < n; j++)
            order[j]->state = GP_PLAN_PRUNED_BOUND; /* sorted: the rest is above too */
        if (k == 0)
            break;
        err = simulate(p, order + i, k, threads, sim, ctx, a, diag);
        for (size_t j = 0; j < k && err == GP_OK; j++)
            if (order[i + j]->limits_met && order[i + j]->sim.cost_usd < best)
                best = order[i + j]->sim.cost_usd;
        done += k;
        if (progress && err == GP_OK)
            progress(pctx, done, n);
        if (k < m)
            break;
    }
    free(order);
    if (err != GP_OK)
        return err;
    p->nsimulated = done;
    p->npruned = p->ncands - done;
    qsort(p->cands, p->ncands, sizeof *p->cands, by_rank);
    return p->ncands ? sensitivity(p, sim, ctx, a, diag) : GP_OK;
}
