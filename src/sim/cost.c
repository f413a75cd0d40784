/* cost.c - the simulator's cost accounting per pool, queue and job, and
 * the result's cost summary (cost.h, docs/simulator.md "Cost"). */
#include "sim/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"

enum gp_err gp_cost_init(struct gp_cost *c, size_t npools)
{
    memset(c, 0, sizeof *c);
    c->pools = calloc(npools ? npools : 1, sizeof *c->pools);
    if (!c->pools)
        return GP_ENOMEM;
    c->npools = npools;
    return GP_OK;
}

void gp_cost_free(struct gp_cost *c)
{
    free(c->pools);
    memset(c, 0, sizeof *c);
}

void gp_cost_node(struct gp_cost *c, size_t pool, double from_s, double to_s, double price_per_hour,
                  uint32_t gpus)
{
    if (pool >= c->npools || !(to_s > from_s))
        return;
    struct gp_cost_pool *p = &c->pools[pool];
    double dt = to_s - from_s;
    p->node_s += dt;
    p->gpu_s += dt * gpus;
    if (price_per_hour > 0 && isfinite(price_per_hour))
        p->billed_usd += dt * price_per_hour / 3600.0;
}

void gp_cost_pod(struct gp_cost *c, size_t pool, double seconds, double rate_usd_s, double gpus)
{
    if (pool >= c->npools || !(seconds > 0))
        return;
    struct gp_cost_pool *p = &c->pools[pool];
    p->used_usd += seconds * rate_usd_s;
    p->used_gpu_s += seconds * gpus;
}

/* Indexes of the n costliest jobs, costliest first (ties: earlier job). */
enum gp_err gp_cost_finish(const struct gp_cost *c, double total_nodes_usd,
                           double control_plane_usd, double services_usd, double *job_usd,
                           size_t njobs, const struct gp_sim_job_cost *top, size_t ntop,
                           double lost_work_usd, struct gp_arena *a, struct gp_sim_result *out)
{
    struct gp_sim_cost *cost = &out->cost;
    memset(cost, 0, sizeof *cost);
    if (c->npools) {
        cost->pools = gp_arena_alloc(a, c->npools * sizeof *cost->pools);
        if (!cost->pools)
            return GP_ENOMEM;
        memset(cost->pools, 0, c->npools * sizeof *cost->pools);
        cost->npools = c->npools;
    }
    double parts_nodes = 0;
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_cost_pool *p = &c->pools[i];
        struct gp_sim_pool_cost *o = &cost->pools[i];
        o->name = p->name;
        o->spot = p->spot;
        o->autoscaled = p->autoscaled;
        o->min_nodes = p->min_nodes;
        o->max_nodes = p->max_nodes;
        o->peak_nodes = p->peak_nodes;
        o->nodes_requested = p->requested;
        o->nodes_removed = p->removed;
        o->interruptions = p->interruptions;
        o->interruptions_missed = p->interruptions_missed;
        o->limits = p->limits;
        o->expirations = p->expirations;
        o->billing_rounding_usd = p->rounding_usd;
        o->node_hours = p->node_s / 3600.0;
        o->gpu_hours = p->gpu_s / 3600.0;
        o->gpu_hours_used = p->used_gpu_s / 3600.0;
        o->total_usd = p->billed_usd;
        if (p->gpu) {
            o->gpu_used_usd = p->used_usd;
            o->gpu_idle_usd = p->billed_usd - p->used_usd;
        } else {
            o->other_usd = p->billed_usd;
        }
        o->on_demand_usd = p->on_demand_per_hour > 0 ? o->node_hours * p->on_demand_per_hour : -1;
        if (p->spot && o->on_demand_usd >= 0)
            o->spot_savings_usd = o->on_demand_usd - o->total_usd;
        cost->gpu_used_usd += o->gpu_used_usd;
        cost->gpu_idle_usd += o->gpu_idle_usd;
        cost->other_usd += o->other_usd;
        cost->spot_savings_usd += o->spot_savings_usd;
        parts_nodes += o->total_usd;
    }
    (void)parts_nodes;
    cost->control_plane_usd = control_plane_usd;
    cost->total_usd = total_nodes_usd + control_plane_usd;
    cost->lost_work_usd = lost_work_usd;
    cost->services_usd = services_usd;
    if (njobs) {
        for (size_t i = 0; i < njobs; i++) /* in submission order, as ever */
            cost->jobs_usd += job_usd[i];
        gp_sim_metrics_sort(job_usd, njobs);
        gp_sim_metrics_stats(job_usd, njobs, &cost->job_usd);
    }
    cost->ntop_jobs = ntop < GP_SIM_TOP_JOBS ? ntop : GP_SIM_TOP_JOBS;
    for (size_t i = 0; i < cost->ntop_jobs; i++)
        cost->top_jobs[i] = top[i];
    return GP_OK;
}
