/* share_study.h - the renter's question: for a workload, how many nodes of
 * each GPU pool of a cluster must be rented, at what cost, and at what cost
 * of the work done, when the pool shares its GPUs each way - exclusive,
 * time-slicing, MPS, MIG - and what each way gives up (isolation,
 * interference). docs/sharing.md explains the method.
 *
 * Method: the workload's pods run as its timeline says (the caller passes
 * the runs, gp_sim_timeline: every pod starting when it is submitted); the
 * study takes the sets of pods that run at once and that no other such set
 * contains (the peaks), and packs each with the engine itself (best fit,
 * pods largest GPU memory first) onto n empty nodes of the pool, shared the
 * way under study; n is the fewest nodes that hold every peak. A pod the
 * pool cannot take whatever it shares (a node selector, a taint, a GPU
 * model: a placement constraint) is sized on the first other pool it may
 * go to, as that pool is configured, and that pool's nodes are part of the
 * option's cost. Time-slicing and MPS are tried with several replica
 * counts; MIG is dynamic (the engine lays out each GPU for the pods).
 * Options are ranked by the cost of the work they do: a pod slowed down
 * s times (time-slicing's company, an MPS client's thread limit, a MIG
 * instance smaller than its demand) does 1/s of its work per hour. An
 * option that fits but leaves an InferenceService with a latencyLimit past
 * it (its replicas' p99 at the service's peak load, slowed as placed:
 * serve/pack.h's latency model) misses its limits and is not recommended.
 * Pure and deterministic; everything returned lives in the caller's
 * arena. */
#ifndef GP_PLAN_SHARE_STUDY_H
#define GP_PLAN_SHARE_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sharing.h"
#include "io/cluster.h"
#include "io/service.h"
#include "io/workload.h"
#include "serve/pack.h"
#include "util/arena.h"
#include "util/err.h"

/* A pod run on the workload's timeline (the layout of gp_sim_span). */
struct gp_study_run {
    uint32_t item;
    double start_s, end_s; /* end INFINITY: a service */
};

/* Pods an option leaves to another pool (they may not go to its own). */
struct gp_study_forced {
    const char *pool; /* where they go, shared as the cluster configures it */
    enum gp_share_mode mode;
    uint32_t replicas;
    uint32_t nodes, gpus, pods; /* pods: the most of them that run at once */
    double usd_per_hour;
};

/* One service with a latencyLimit in an option, at its worst peak. */
struct gp_study_latency {
    const char *service;
    bool llm;
    uint32_t replicas; /* its pods on the option's pool at that peak */
    double speed;      /* their mean speed (1 / slowdown) */
    double mem_frac;   /* their mean memory, as a fraction of a whole GPU's (LLM: KV cache) */
    double p99_s;      /* plain: a request's p99; LLM: TTFT's; INFINITY: they cannot keep up */
    double itl_s;      /* LLM: the inter-token latency at the batch */
    double limit_s;
    bool within;
};

struct gp_study_option {
    const char *pool; /* the cluster's pool */
    const char *gpu_model;
    enum gp_share_mode mode;
    uint32_t replicas; /* time-slicing and MPS: per GPU; 1 otherwise */
    /* time-slicing and MPS: the device plugin's settings the option
     * assumes (docs/sharing.md) */
    bool rename_by_default, fail_requests_greater_than_one;
    bool feasible;            /* every peak fits some number of nodes */
    const char *why;          /* not feasible: which pod fits no node, and why */
    uint32_t nodes;           /* of the pool, to rent */
    uint32_t gpus;            /* rented: nodes x GPUs per node */
    uint32_t gpus_busy;       /* holding at least one pod, at the option's peak */
    uint32_t pods;            /* at the option's peak, on the pool and elsewhere */
    double peak_t_s;          /* when the peak that needs the most nodes runs */
    double pool_usd_per_hour; /* the pool's nodes x its price; 0 when unknown */
    double usd_per_hour;      /* with the nodes of the pools the forced pods need */
    /* at the peak: each pod runs at 1 / slowdown of its speed alone */
    double slowdown_mean, slowdown_max;
    /* what an hour of the peak's work at full speed costs: usd_per_hour x
     * pods / sum of 1 / slowdown (usd_per_hour when nothing slows down) */
    double work_usd_per_hour;
    const char *isolation; /* one line: what the mode isolates and what not */
    const struct gp_study_forced *forced;
    size_t nforced;
    /* services with a latencyLimit whose pods the pool takes (none when
     * the workload has none): meets_limits when every one is within */
    bool meets_limits;
    const struct gp_study_latency *latency;
    size_t nlatency;
};

/* A workload item whose pods may not go to every GPU pool. */
struct gp_study_constraint {
    const char *item;
    uint32_t peak_pods;  /* the most of its pods that run at once */
    const char *pools;   /* the pools it may go to, "h100-ts" or "a100, h100"; "" for none */
    const char *refused; /* one pool it may not go to and why, e.g. "a100: node(s) ..." */
};

struct gp_study {
    struct gp_study_option *options; /* every GPU pool x every mode, in pool order */
    size_t noptions;
    /* lowest work_usd_per_hour among the options that fit and meet every
     * latency limit (ties: lower slowdown_mean, fewer GPUs); -1 when none */
    int cheapest;
    int cheapest_isolated;  /* the same among exclusive and MIG options; -1 */
    int cheapest_fit;       /* the same among those that fit, limits or not; -1 */
    size_t nlimited;        /* InferenceServices with a latencyLimit checked */
    size_t runs;            /* pod runs on the timeline (with GPUs) */
    uint32_t peak_pods;     /* the most pods with GPUs that run at once */
    double peak_t_s;        /* when first */
    size_t peaks;           /* the sets of pods the options were sized for */
    uint32_t cpu_only_runs; /* runs of pods without GPUs, not sized */
    const struct gp_study_constraint *constraints;
    size_t nconstraints;
};

/* The study of workload w (its runs on the timeline) on every GPU pool of
 * the cluster x every mode its GPU supports (MIG only where
 * data/mig-profiles.json has the model). */
enum gp_err gp_study_sharing(const struct gp_cluster *cluster, const struct gp_workload *w,
                             const struct gp_study_run *runs, size_t nruns, struct gp_arena *a,
                             struct gp_study *out, struct gp_diag *diag);

/* Service s of w as serve/pack.h models it: its Deployment's pod template
 * (compute demand, memory), its serving model, its peak load (a trace's
 * busiest minute) and its limit (an LLM's latencyLimit bounds its TTFT). */
void gp_study_pack_service(const struct gp_workload *w, const struct gp_service *s,
                           struct gp_pack_service *out);

/* Whether a mode isolates pods' memory and faults (exclusive GPUs, MIG). */
bool gp_study_isolated(enum gp_share_mode mode);

#endif
