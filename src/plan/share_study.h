/* share_study.h - the renter's question: for a workload of (mostly small)
 * inference services, how many nodes of each GPU pool of a cluster must be
 * rented, and at what cost, when the pool shares its GPUs each way -
 * exclusive, time-slicing, MPS, MIG - and what each way gives up
 * (isolation, interference). docs/sharing.md explains the method.
 *
 * Method: the workload's steady state (every Deployment's replicas, every
 * Job's parallelism, every Pod, all at once) is packed by the engine
 * itself (best fit, pods largest GPU memory first) onto n empty nodes of
 * the pool, shared the way under study; n is the fewest nodes that hold
 * every pod. Time-slicing and MPS are tried with several replica counts
 * and the one that needs the fewest nodes is kept (ties: fewer replicas,
 * which interfere less); MIG is dynamic (the engine lays out each GPU for
 * the pods), so it needs no configuration guess. Pure and deterministic;
 * everything returned lives in the caller's arena. */
#ifndef GP_PLAN_SHARE_STUDY_H
#define GP_PLAN_SHARE_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/sharing.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"
#include "util/err.h"

struct gp_study_option {
    const char *pool; /* the cluster's pool */
    const char *gpu_model;
    enum gp_share_mode mode;
    uint32_t replicas; /* time-slicing and MPS: per GPU; 1 otherwise */
    /* time-slicing and MPS: the device plugin's settings the option
     * assumes (docs/sharing.md) */
    bool rename_by_default, fail_requests_greater_than_one;
    bool feasible;      /* every pod fits some number of nodes */
    const char *why;    /* not feasible: which pod fits no node, and why */
    uint32_t nodes;     /* to rent */
    uint32_t gpus;      /* rented: nodes x GPUs per node */
    uint32_t gpus_busy; /* holding at least one pod */
    uint32_t pods;
    double usd_per_hour; /* nodes x the pool's price per node-hour; 0 when unknown */
    /* time-slicing: each pod runs at 1 / max(1, sum of its GPU's pods'
     * compute demand) of its speed alone (demand: its gpu-milli, or a
     * whole GPU when it declares none) */
    double slowdown_mean, slowdown_max;
    const char *isolation; /* one line: what the mode isolates and what not */
};

/* Every GPU pool of the cluster x every mode its GPU supports (MIG only
 * where data/mig-profiles.json has the model), in pool order. */
enum gp_err gp_study_sharing(const struct gp_cluster *cluster, const struct gp_workload *w,
                             struct gp_arena *a, struct gp_study_option **out, size_t *n,
                             struct gp_diag *diag);

#endif
