/* cost.h - the simulator's money: per pool, the node billing (request to
 * removal) and the share of it the bound pods used; at the end, the
 * result's gp_sim_cost (docs/simulator.md, "Cost"), whose parts add up to
 * the total: GPU used + GPU idle + control plane + other (CPU-only nodes).
 *
 * Internal to sim/ (and its tests). The caller owns the struct; arrays are
 * malloc'd here and freed by gp_cost_free. */
#ifndef GP_SIM_COST_H
#define GP_SIM_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"
#include "util/arena.h"
#include "util/err.h"

/* One pool's running figures. */
struct gp_cost_pool {
    const char *name;
    bool gpu; /* its nodes have GPUs: their cost is GPU cost */
    bool spot, autoscaled;
    uint32_t min_nodes, max_nodes, peak_nodes;
    double on_demand_per_hour; /* per node; <= 0: not known */
    double node_s, gpu_s;      /* closed billing intervals */
    double billed_usd;
    double used_usd, used_gpu_s; /* closed pod runs */
    uint64_t requested, removed, interruptions;
    uint64_t interruptions_missed; /* recorded ones that found no ready node */
    bool limits;                   /* maxNodeLifetime or billing rounding set */
    uint64_t expirations;          /* nodes replaced at maxNodeLifetime */
    double rounding_usd;           /* billed time rounded up, in billed_usd already */
};

struct gp_cost {
    struct gp_cost_pool *pools;
    size_t npools;
};

enum gp_err gp_cost_init(struct gp_cost *c, size_t npools);
void gp_cost_free(struct gp_cost *c);

/* A node of pool `pool` was billed for [from_s, to_s) at price_per_hour,
 * with `gpus` GPUs. */
void gp_cost_node(struct gp_cost *c, size_t pool, double from_s, double to_s, double price_per_hour,
                  uint32_t gpus);
/* A pod held `gpus` GPUs (fractions allowed) for `seconds` on a node of
 * pool `pool`, at rate_usd_s. */
void gp_cost_pod(struct gp_cost *c, size_t pool, double seconds, double rate_usd_s, double gpus);

/* Fills out->cost from the pools and the figures the simulator kept:
 * total_usd (the integral of the billing rate, the independent check of
 * the parts), the control plane's cost, the queues' and the jobs' shares
 * (job_usd: one per job, in submission order; summed in that order, then
 * sorted in place, so it must live as long as the result: in arena a),
 * the costliest jobs (top, ntop, costliest first), lost work. Arrays go
 * to arena a. */
enum gp_err gp_cost_finish(const struct gp_cost *c, double total_nodes_usd,
                           double control_plane_usd, double services_usd, double *job_usd,
                           size_t njobs, const struct gp_sim_job_cost *top, size_t ntop,
                           double lost_work_usd, struct gp_arena *a, struct gp_sim_result *out);

#endif
