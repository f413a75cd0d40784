/* plan_internal.h - what the planner's files share: its constants and the
 * pieces of a candidate (its Cluster YAML, its lower bound, its spot rate). */
#ifndef GP_PLAN_PLAN_INTERNAL_H
#define GP_PLAN_PLAN_INTERNAL_H

#include "plan/plan.h"

#define GP_PLAN_MAX_NEEDS 4
#define GP_PLAN_NEED_ALL  (-2) /* a plain instance's pool: every need */

/* The CPU pool for CPU-only pods: the catalog lists GPU offers only, so
 * every candidate prices it alike (the demo's CPU node: 32 vCPU, 128 GiB,
 * $1.36 per node-hour; docs/plan.md). */
#define GP_PLAN_CPU_NODE_MILLI 32000.0
#define GP_PLAN_CPU_NODE_MIB   (128.0 * 1024)
#define GP_PLAN_CPU_NODE_USD   1.36

/* A GPU node's CPU and memory per GPU at the least (the catalog gives
 * neither): 8 vCPU and 64 GiB, or what the node's pods ask for. */
#define GP_PLAN_CPU_PER_GPU_MILLI 8000
#define GP_PLAN_MEM_PER_GPU_MIB   (64 * 1024)

/* The interruption rate spot pools use when neither the limits file nor
 * the catalog gives one (per node-hour; marked as assumed). */
#define GP_PLAN_SPOT_RATE_DEFAULT 0.05
#define GP_PLAN_BOOT_S            300.0 /* a GPU node's boot, request to ready */
#define GP_PLAN_SPOT_NOTICE_S     120.0 /* AWS's two minutes */

const char *gp_plan_model_for(const struct gp_plan_need *nd, const struct gp_offer *o,
                              struct gp_arena *a);
/* The provider's billing granularity in seconds from the catalog's
 * billing text ("per second", "per minute", "hourly"); 0 when it says none. */
double gp_plan_billing_s(const struct gp_provider *p);
/* Sets c's spot rate from the limits (else the default, assumed) and its
 * billing granularity. */
void gp_plan_spot_rate(struct gp_plan_cand *c, const struct gp_plan_limits *l);
/* The candidate's Cluster YAML with spot rates x rate_scale. */
enum gp_err gp_plan_yaml(const struct gp_plan_cand *c, const struct gp_plan_demand *d,
                         const struct gp_plan_limits *l, double rate_scale, struct gp_arena *a,
                         const char **out, struct gp_diag *diag);
/* A lower bound on the candidate's cost over the horizon (USD); -1 when
 * its pools cannot hold the work at all. */
enum gp_err gp_plan_bound(const struct gp_plan_cand *c, const struct gp_plan_demand *d, double *usd,
                          struct gp_diag *diag);
/* The GPU-hours need nd's work takes on pool p: its whole-GPU and
 * fractional pods' hours on exclusive GPUs; on time-sliced or MPS GPUs a
 * pod at its share but never under one replica; on MIG GPUs the
 * instance-hours of each profile over the instances of it a GPU of the
 * pool's layout holds, the largest over the profiles. */
double gp_plan_need_hours(const struct gp_plan_need *nd, const struct gp_plan_pool *p);
/* Whether pool p can serve need nd (model, labels, memory, GPUs). */
bool gp_plan_serves(const struct gp_plan_cand *c, const struct gp_plan_pool *p,
                    const struct gp_plan_demand *d, size_t need);

/* The p95 queueing delay a candidate must meet: the limits file's, else
 * 15 minutes. */
double gp_plan_queue_limit_s(const struct gp_plan_limits *l);

/* Dollars as the reports print them, to the whole dollar: a figure that
 * rounds to zero is 0, never the "-0" printf makes of a tiny negative
 * difference. */
double gp_plan_usd_shown(double usd);

#endif
