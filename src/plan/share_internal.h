/* share_internal.h - what the sharing study's files share (share_study.h
 * is the interface): the peaks of the workload's timeline
 * (share_peaks.c) and packing pods on n nodes of a pool with the engine
 * (share_pack.c). Not for use outside src/plan/share_*.c. */
#ifndef GP_PLAN_SHARE_INTERNAL_H
#define GP_PLAN_SHARE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "plan/share_study.h"

#define GP_STUDY_MAX_PEAKS 256 /* sets of pods sized; more are thinned by GPU demand */
#define GP_STUDY_MAX_NODES 4096

/* A set of pods that run at once and that no other such set contains. */
struct gp_study_peak {
    double t_s;      /* when it first runs whole (its last pod starts) */
    uint32_t pods;   /* with GPUs */
    uint32_t *count; /* per workload item */
};

/* The peaks of the runs of the workload's pods with GPUs, by time; gpu_runs
 * and cpu_runs count the runs of pods with and without GPUs; *max is the
 * index of the peak with the most pods. Arrays in arena a. */
enum gp_err gp_study_peaks(const struct gp_workload *w, const struct gp_study_run *runs,
                           size_t nruns, struct gp_arena *a, struct gp_study_peak **out,
                           size_t *npeaks, size_t *max, size_t *gpu_runs, uint32_t *cpu_runs,
                           struct gp_diag *diag);

/* The pods of a peak whose item is marked in take (NULL: all), largest GPU
 * memory first, as pointers to the items' pod specs; *n of them. The array
 * is malloc'd (free it); NULL with *n = 0 when there are none. */
enum gp_err gp_study_peak_pods(const struct gp_workload *w, const struct gp_study_peak *p,
                               const bool *take, const struct gp_pod_spec ***out, size_t *n,
                               struct gp_diag *diag);

/* What packing a set of pods onto n empty nodes gives. */
struct gp_study_trial {
    bool all;      /* every pod placed */
    size_t failed; /* the first that was not */
    enum gp_filter reason;
    bool has_refusal; /* the sharing filter's why, in words */
    char refusal[256];
    uint32_t gpus_busy;
    uint32_t pods;
    /* each pod runs at 1 / slowdown of its speed alone: time-slicing's
     * company, an MPS client's thread limit, a MIG instance smaller than
     * its demand (docs/sharing.md) */
    double slowdown_sum, slowdown_max, rate_sum;
};

/* Packs pods (in this order) onto n nodes of spec with the engine (best
 * fit) and measures the slowdowns. */
enum gp_err gp_study_pack(const struct gp_node_spec *spec, uint32_t n,
                          const struct gp_pod_spec *const *pods, size_t npods,
                          struct gp_study_trial *t, struct gp_diag *diag);

/* The same, and when every pod is placed, per pod (npods entries each, in
 * the order given): its speed (1 / slowdown) and the memory it may use as
 * a fraction of its GPUs' (an MPS client's pinned-memory limit, a MIG
 * instance's memory, on a time-sliced GPU what it declares, else 1). */
enum gp_err gp_study_pack_pods(const struct gp_node_spec *spec, uint32_t n,
                               const struct gp_pod_spec *const *pods, size_t npods,
                               struct gp_study_trial *t, double *speed, double *mem_frac,
                               struct gp_diag *diag);

/* The latency of the services with a latencyLimit in an option (its pool
 * spec on nodes nodes, the items of take): each checked at every peak that
 * runs its pods (share_latency.c), o->latency and o->meets_limits in the
 * arena. sv/item: the limited services and each one's Deployment item. */
struct gp_study_limited {
    const struct gp_service *svc;
    size_t item;
    struct gp_pack_service model; /* gp_study_pack_service */
};
enum gp_err gp_study_latency_check(const struct gp_workload *w, const struct gp_study_peak *peaks,
                                   size_t npeaks, const struct gp_study_limited *lim, size_t nlim,
                                   const struct gp_node_spec *spec, uint32_t nodes,
                                   const bool *take, struct gp_study_option *o, struct gp_arena *a,
                                   struct gp_diag *diag);

/* The fewest nodes of spec, at least lo, that hold pods (the packing is
 * taken to hold more pods on more nodes); 0 when not even
 * GP_STUDY_MAX_NODES (or one node per pod) do. */
enum gp_err gp_study_fewest(const struct gp_node_spec *spec, uint32_t lo,
                            const struct gp_pod_spec *const *pods, size_t npods, uint32_t *n,
                            struct gp_diag *diag);

/* Whether a filter rejects a pod for what a node's GPUs have now or how
 * they are shared, which another way of sharing may change, rather than
 * for where the pod may go at all (a node selector, a taint, a GPU model,
 * affinities, or a node with too little CPU or memory for it). */
bool gp_study_resource_filter(enum gp_filter f);

#endif
