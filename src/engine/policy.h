/* policy.h - what the built-in placement policies share: their ops structs
 * (collected by the registry in policy.c), the GPU choices inside a node that
 * differ from gp_engine_pick_default, the pod "kind" that clustering-style
 * policies group by, and a per-node table for policies that keep incremental
 * state through on_bind/on_release (gpu-clustering now, FGD's cached
 * fragmentation later).
 *
 * Internal to engine/: drivers use the registry in engine.h. */
#ifndef GP_ENGINE_POLICY_H
#define GP_ENGINE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* The built-in policies, one per file (policy_<name>.c). */
extern const struct gp_policy_ops gp_policy_random;
extern const struct gp_policy_ops gp_policy_best_fit;
extern const struct gp_policy_ops gp_policy_dot_product;
extern const struct gp_policy_ops gp_policy_gpu_packing;
extern const struct gp_policy_ops gp_policy_gpu_clustering;
extern const struct gp_policy_ops gp_policy_spread;
extern const struct gp_policy_ops gp_policy_fgd;
extern const struct gp_policy_ops gp_policy_fgd_pack;

/* The normalisation constants of the FGD authors' simulator (their
 * "MaxSpec"): scores that compare nodes of different sizes divide by the
 * largest node they expect, not by the node's own capacity. */
#define GP_POLICY_MAX_CPU_MILLI 128000
#define GP_POLICY_MAX_GPU_MILLI 8000
/* Kubernetes' node score range, which those scores are quantised to. */
#define GP_POLICY_MAX_SCORE 100

/* Whether one GPU can take a share of the pod (gpu_milli and GPU memory). */
bool gp_policy_gpu_fits(const struct gp_gpu *gpu, const struct gp_pod *pod);

/* GPU choices for a share (gpu_count == 1, gpu_milli < 1000). For any
 * other pod they fall back to gp_engine_pick_default. 0, or -1 when no GPU
 * of the node fits. */
/* Uniformly among the GPUs the share fits on (one draw from rng when any fits). */
int gp_policy_pick_share_random(const struct gp_node *node, const struct gp_pod *pod,
                                struct gp_rng *rng, struct gp_pick *pick);
/* The emptiest GPU the share fits on (worst fit), lowest index on ties. */
int gp_policy_pick_share_worst(const struct gp_node *node, const struct gp_pod *pod,
                               struct gp_pick *pick);

/* A pod's kind, as the FGD authors' "GPU affinity": no GPU, a share of one
 * GPU, or k whole GPUs (kind 1 + k). */
#define GP_POLICY_KIND_NONE  0
#define GP_POLICY_KIND_SHARE 1
#define GP_POLICY_KINDS      (GP_MAX_GPUS_PER_NODE + 2)
unsigned gp_policy_pod_kind(const struct gp_pod *pod);

/* A table of per-node records of elem_size bytes, indexed by node id and
 * grown on demand; records never written read as all zeroes. Owned by the
 * policy's state; free with gp_policy_table_free. */
struct gp_policy_table {
    unsigned char *items;
    size_t len; /* records allocated (and zeroed) */
    size_t elem_size;
};

void gp_policy_table_init(struct gp_policy_table *t, size_t elem_size);
void gp_policy_table_free(struct gp_policy_table *t);
/* The record of node id for writing, growing the table; NULL when out of
 * memory. */
void *gp_policy_table_at(struct gp_policy_table *t, uint32_t id);
/* The record of node id for reading, or NULL when it was never written. */
const void *gp_policy_table_peek(const struct gp_policy_table *t, uint32_t id);

#endif
