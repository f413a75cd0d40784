/* plan.h - what to rent (`gpuplane plan`, docs/plan.md): from a workload's
 * GPU needs (the runs a timed replay would make) and the provider catalog,
 * candidate clusters over providers x GPU offers x sharing modes x pool
 * sizes (fixed, from zero, a base of on-demand nodes with spot above it)
 * and plain rented instances; a lower bound on each candidate's cost from
 * a linear programme (GLPK: the GPU-hours each need class must get from
 * the pools that can serve it, at their prices, within their sizes);
 * the survivors simulated by a caller's function, in parallel on pthreads
 * and in a fixed order of batches, so the plan is the same whatever the
 * thread count; a ranking by monthly cost among those that meet the
 * limits, with near-ties within the prices' uncertainty.
 *
 * The simulation itself is the caller's (plan sits beside sim, not above
 * it): gp_plan_run calls back with each candidate's Cluster, parsed from the
 * candidate's own Cluster YAML (the spec --out writes). Everything lives
 * in the caller's arena unless said otherwise. */
#ifndef GP_PLAN_PLAN_H
#define GP_PLAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/catalog.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/sbuf.h"

/* Hours in the month the plan prices (AWS's and GCP's convention). */
#define GP_PLAN_MONTH_H 730.0

/* The limits file (docs/plan.md, "The limits file"). Absent numbers are < 0. */
struct gp_plan_limits {
    const char *file; /* NULL: no file, the defaults */
    double queue_p95_s;
    double latency_p99_s; /* the inference services' p99 latency (docs/serve.md) */
    double monthly_budget_usd;
    bool rwx, managed_only, drivers_preinstalled, spot_allowed, plain_allowed;
    const char *interconnect; /* a word the provider's interconnect must have; NULL any */
    const char **avoid_providers, **avoid_regions, **only_providers;
    size_t navoid_providers, navoid_regions, nonly_providers; /* only: 0 = any */
    /* spot: interruptions per node-hour (< 0: the catalog's, else the
     * default), checkpoint interval for jobs that declare none (< 0: the
     * workload's), restart: the replacement node's boot time */
    double spot_rate_per_node_hour, checkpoint_s, restart_s;
    double price_uncertainty_pct; /* near-tie threshold; default 5 */
    /* nodeLifetimes: the candidates' nodes live as the provider's mode
     * with a maximum lifetime does (data/provider-limits.json: EKS Auto
     * Mode 21 days, GKE flex-start 7 days), replaced at that age */
    bool node_lifetimes;
};

void gp_plan_limits_default(struct gp_plan_limits *l);
/* Reads a limits file, as strictly as a Cluster spec: an unknown field, a
 * bad value or a missing apiVersion/kind is one line "FILE:LINE:COL: PATH:
 * ..." and GP_EINVALID (exit 2). */
enum gp_err gp_plan_limits_load(const char *path, struct gp_arena *a, struct gp_plan_limits *out,
                                struct gp_diag *diag);
enum gp_err gp_plan_limits_parse(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_plan_limits *out, struct gp_diag *diag);

/* One pod run the workload would make if nothing waited (sim's
 * gp_sim_timeline, copied so that plan need not include sim). */
struct gp_plan_span {
    uint32_t item;
    double start_s, end_s;
};

/* One MIG profile a MIG need asks for (nvidia.com/mig-<profile>): its
 * instance-hours, and its instances at the peak and all the time. */
#define GP_PLAN_MIG_PROFILES 4
struct gp_plan_mig_need {
    const char *profile; /* "1g.10gb" */
    double inst_hours, peak, base;
};

/* A class of GPU need: the workload's GPU items that ask for the same
 * GPU models and node labels (nodeSelector), the same required zone or
 * region (node affinity), and MIG instances or not, with what a node must
 * have for all of them and what they ask for over the horizon. */
struct gp_plan_need {
    const char *const *models; /* allowed gpu.model names; n 0: any */
    size_t nmodels;
    const struct gp_kv *selector; /* other node labels they select; borrowed */
    size_t nselector;
    uint32_t max_gpus;   /* per pod */
    uint32_t min_mem_gb; /* per GPU */
    uint32_t min_milli;  /* smallest GPU share of a fractional pod; 1000: none */
    uint32_t driver_min; /* newest driver its pods need (compat coding); 0 none */
    int64_t cpu_per_gpu_milli, mem_per_gpu_mib; /* the most a GPU's pods ask for */
    double gpu_hours;                           /* whole-GPU pods: GPUs x hours */
    double frac_pod_hours;         /* fractional pods: pod-hours (a whole GPU each, unshared) */
    double share_hours;            /* fractional pods: their shares (milli / 1000) x hours */
    double peak_gpus;              /* GPUs at once at the peak, a fractional pod taking one */
    double peak_shares;            /* the same with fractional pods at their share */
    double base_gpus, base_shares; /* the same of the runs that last the horizon (services) */
    bool gang;                     /* some item is a gang */
    const char *topology_key;      /* a gang's required topology label; NULL none */
    const char *label;             /* "H100-80GB", "any GPU", for tables */
    /* MIG (mixed strategy): its pods ask nvidia.com/mig-<profile>; the
     * profiles, and no whole-GPU or shared hours */
    bool mig;
    struct gp_plan_mig_need mig_profiles[GP_PLAN_MIG_PROFILES];
    size_t nmig;
    /* a required node affinity on topology.kubernetes.io/zone or region:
     * the key and the values In [...] its pods allow; NULL none */
    const char *zone_key;
    const char *const *zone_values;
    size_t nzone_values;
    /* fractional pods: the largest share and declared memory (an MPS
     * client must hold them), and the sharing modes every pod accepts
     * (bits 1 << enum gp_share_mode; 0xF when no pod pins them) */
    uint32_t max_frac_milli, max_frac_mem_mib;
    uint8_t share_modes;
};

struct gp_plan_demand {
    struct gp_plan_need *needs;
    size_t nneeds;
    double cpu_peak_milli, cpu_mem_peak_mib; /* CPU-only pods at once */
    double cpu_hours;                        /* CPU-only pods' vCPU-hours */
    uint32_t peak_total_gpus;                /* all GPU pods at once (whole GPUs) */
    uint32_t driver_min;                     /* newest driver any pod needs */
    double horizon_s;
};

/* The needs of workload w from its runs (spans, by item) up to horizon_s. */
enum gp_err gp_plan_demand(const struct gp_workload *w, const struct gp_plan_span *spans,
                           size_t nspans, double horizon_s, struct gp_arena *a,
                           struct gp_plan_demand *out, struct gp_diag *diag);

/* One pool of a candidate. */
struct gp_plan_pool {
    const struct gp_catalog_row *row; /* NULL: the CPU pool */
    const char *name, *model;
    uint32_t gpus_per_node;
    uint32_t min_nodes, max_nodes; /* equal: fixed */
    bool spot;
    uint32_t replicas; /* time-slicing (or MPS) replicas; 0: exclusive */
    double node_usd_per_hour, on_demand_usd_per_hour;
    int need; /* the need it was made for; -1 none (CPU) */
    bool mps; /* the replicas are MPS clients */
    /* MIG, mixed strategy: the instances of each of its need's profiles
     * (mig_profiles order) on every GPU */
    bool mig;
    uint8_t mig_counts[GP_PLAN_MIG_PROFILES];
    /* the zone or region label its nodes carry; NULL none */
    const char *zone_key, *zone_value;
};

#define GP_PLAN_MAX_POOLS 12

/* What a simulation of a candidate says (the caller's callback fills it). */
struct gp_plan_sim {
    double cost_usd, horizon_s;
    double gpu_used_usd, gpu_idle_usd, control_plane_usd, other_usd;
    double spot_savings_usd, lost_work_usd, lost_gpu_hours;
    double gpu_hours_total, gpu_hours_idle;
    double queue_p95_s, queue_max_s, jct_p95_s;
    double latency_p99_s; /* the worst inference service's p99 latency; < 0: no service */
    uint64_t pods_submitted, pods_scheduled, pods_never_fit, pods_pending_end;
    uint64_t spot_interruptions;
    /* the spot pools: node-hours, GPU-hours billed and used, their cost */
    double spot_node_hours, spot_gpu_hours, spot_gpu_hours_used, spot_usd;
    /* what the providers' billing granularity and minimum added to the
     * nodes' exact time, and nodes replaced at their maximum lifetime */
    double billing_rounding_usd;
    uint64_t node_expirations;
};

enum gp_plan_state {
    GP_PLAN_PRUNED_INFEASIBLE, /* its pools cannot hold the GPU-hours at all */
    GP_PLAN_PRUNED_BUDGET,     /* its lower bound is over the budget */
    GP_PLAN_PRUNED_BOUND,      /* its lower bound is above a simulated winner's cost */
    GP_PLAN_SIMULATED,
};

struct gp_plan_cand {
    size_t id; /* generation order, the last tie-break */
    const struct gp_provider *provider;
    bool plain;       /* a plain rented instance, no Kubernetes */
    const char *what; /* a short description for tables */
    struct gp_plan_pool pools[GP_PLAN_MAX_POOLS];
    size_t npools;
    double control_plane_usd_per_hour;
    double spot_rate; /* per node-hour, the one its spot pools use */
    bool spot_rate_assumed;
    const char *yaml; /* its Cluster spec */
    double bound_usd; /* lower bound on the horizon's cost; < 0: infeasible */
    enum gp_plan_state state;
    struct gp_plan_sim sim;
    double monthly_usd;
    /* limits: met, and the margin of each (limit - value; < 0 missed) */
    bool limits_met, all_scheduled;
    double queue_margin_s, budget_margin_usd, latency_margin_s;
    /* the expected cost of spot (docs/plan.md): interruptions x lost work */
    double spot_expected_lost_usd;
    /* the provider's billing granularity (the catalog's billing text; 0
     * unknown) and what rounding each started node's time up to it adds
     * to the month: requests x granularity / 2 x the node price */
    double billing_s, billing_rounding_usd;
};

/* Sensitivity of the winner to its spot interruption rate. */
struct gp_plan_sens {
    double rate;
    double monthly_usd;
    bool limits_met;
    double queue_p95_s;
};

/* A top candidate's timeline for the report page: metrics samples of its
 * simulation (the caller fills them, in the arena). */
#define GP_PLAN_SERIES 4
struct gp_plan_series {
    size_t n;
    double *t_s, *gpu_alloc_pct;
    uint32_t *pending;
};

struct gp_plan {
    struct gp_plan_cand *cands; /* ranked after gp_plan_run */
    size_t ncands;
    size_t nsimulated, npruned;
    const struct gp_plan_demand *demand;
    const struct gp_plan_limits *limits;
    struct gp_plan_sens sens[2]; /* half and double; nsens 0: the winner has no spot */
    /* per need, the providers that offer it ("eks, gke"; "" none) */
    const char **need_providers;
    struct gp_plan_series series[GP_PLAN_SERIES]; /* of cands[0..]; n 0: none */
    size_t nsens;
    double wall_s;
};

/* Generates the candidates over the rows (the catalog with the user's
 * offers) the limits allow, each with its Cluster YAML and lower bound. */
enum gp_err gp_plan_generate(const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                             const struct gp_catalog_row *rows, size_t nrows, struct gp_arena *a,
                             struct gp_plan *out, struct gp_diag *diag);

/* The caller's simulation of one cluster: fills *out. Called from several threads at once: it may
 * share nothing mutable. */
typedef enum gp_err (*gp_plan_sim_fn)(void *ctx, const struct gp_cluster *c,
                                      struct gp_plan_sim *out, struct gp_diag *diag);

/* progress(ctx, done, total), from the calling thread only, may be NULL */
typedef void (*gp_plan_progress_fn)(void *ctx, size_t done, size_t total);

/* Prunes by the bounds, simulates the survivors on `threads` threads in
 * batches of a fixed size (the pruning between batches decides the same
 * whatever the thread count), ranks them and runs the winner's spot
 * sensitivity. */
enum gp_err gp_plan_run(struct gp_plan *p, unsigned threads, gp_plan_sim_fn sim, void *ctx,
                        gp_plan_progress_fn progress, void *pctx, struct gp_arena *a,
                        struct gp_diag *diag);

/* A candidate's Cluster YAML with its spot rates scaled, parsed and
 * expanded (for the simulation and --out). */
enum gp_err gp_plan_cluster(const struct gp_plan *p, const struct gp_plan_cand *c,
                            double rate_scale, struct gp_arena *a, struct gp_cluster *out,
                            struct gp_diag *diag);

/* Outputs (plan_out.c): the ranked table and the winner's story; JSON;
 * the report page. */
void gp_plan_table(const struct gp_plan *p, size_t top, struct gp_sbuf *out);
void gp_plan_json(const struct gp_plan *p, const char *workload, struct gp_sbuf *out);
void gp_plan_html(const struct gp_plan *p, const char *workload, size_t top, struct gp_sbuf *out);
/* Why the winner beats the runner-up, one or two sentences. */
void gp_plan_why(const struct gp_plan *p, struct gp_sbuf *out);
/* The needs, the table of the top candidates, the why and the spot
 * sensitivity: what stdout shows. */
void gp_plan_summary(const struct gp_plan *p, size_t top, struct gp_sbuf *out);

#endif
