/* bound.h - how well could any placement do? An upper bound on the GPU-milli
 * that any placement of a pod sequence (even an offline one that knows the
 * whole sequence and may leave pods out) can allocate on a cluster, hence a
 * lower bound on the static experiment's unallocated GPU %. It is the
 * optimum of a linear relaxation (node and pod classes, an arc-flow for the
 * packing of GPU shares into GPUs, cuts for whole GPUs per node), solved
 * with GLPK and certified through its dual; docs/bound.md explains the
 * formulation and why it is valid.
 *
 * Pure: no I/O, no globals of ours (GLPK's terminal output is switched off),
 * deterministic. Nothing returned points into memory of the callee; the
 * cluster and the pods stay the caller's. */
#ifndef GP_PLAN_BOUND_H
#define GP_PLAN_BOUND_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "io/cluster.h"
#include "util/err.h"

/* Upper bound on the GPU-milli that any placement of the first n pods of
 * the sequence could allocate on the cluster; *max_alloc_milli is set (a
 * whole number of milli, never above the pods' GPU request nor the
 * cluster's GPU-milli). Pods are told apart by their requests only: names,
 * priorities and gangs are ignored. Errors: GP_EINVALID for a node or pod
 * the engine would refuse (the diag names it), GP_ELIMIT for more GPU
 * models than the engine handles, GP_EUNSUPPORTED for a node with a GPU
 * sharing spec (the bound models exclusive GPUs), GP_ENOMEM, GP_ESTATE when
 * the LP solver fails. */
enum gp_err gp_bound_packing(const struct gp_cluster *cluster,
                             const struct gp_pod_spec *const *pods, size_t n,
                             double *max_alloc_milli, struct gp_diag *diag);

/* The number of pods of the sequence that the static mode has seen when it
 * reads its value at arrived_pct % (curve[arrived_pct]): the fewest pods
 * whose GPU request is >= arrived_pct % of the cluster's GPU capacity,
 * compared exactly in milli; n when the sequence never gets there; 0 when
 * the cluster has no GPU. */
size_t gp_bound_prefix(const struct gp_cluster *cluster, const struct gp_pod_spec *const *pods,
                       size_t n, unsigned arrived_pct);

struct gp_bound_result {
    size_t prefix;           /* pods of the sequence covered (gp_bound_prefix) */
    uint64_t capacity_milli; /* the cluster's GPUs x 1000 */
    uint64_t arrived_milli;  /* GPU request of those pods */
    double max_alloc_milli;  /* upper bound on the allocated GPU-milli */
    double unallocated_pct;  /* lower bound: 100 - max_alloc / capacity x 100 (0 without GPUs) */
    double lp_primal_milli;  /* the solver's own optimum (max_alloc comes from its dual) */
    size_t node_classes;     /* size of the relaxation, for reports */
    size_t pod_classes;      /* classes with a GPU request */
    size_t lp_rows, lp_cols;
    /* When the bound says little (docs/bound.md): the LP leaves out the pods
     * without a GPU request (CPU-only pods, memory-only shares), which a
     * run must place when they fit. informative is false when those pods
     * ask for more cpu or memory than the placement of the solver's optimum
     * leaves free in the cluster: a run must then give them cpu or memory
     * that the bound gave to GPU pods, and may end far above the bound.
     * True does not promise a tight bound; false warns that it may be far
     * below what any policy can reach. */
    uint64_t left_out_pods;
    double left_out_cpu_milli, left_out_mem_mib;
    double cluster_cpu_milli, cluster_mem_mib; /* every node's */
    double lp_cpu_milli, lp_mem_mib;           /* taken by the optimum's pods */
    bool informative;
};

/* The bound where the static mode reads curve[arrived_pct] of the sequence
 * (arrived_pct 100: its unallocated_gpu_pct_at_100). The result is a lower
 * bound on the unallocated GPU % that any policy reaches there. */
enum gp_err gp_bound_at(const struct gp_cluster *cluster, const struct gp_pod_spec *const *pods,
                        size_t n, unsigned arrived_pct, struct gp_bound_result *out,
                        struct gp_diag *diag);

#endif
