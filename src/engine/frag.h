/* frag.h - the fragmentation measure of the FGD paper (Weng et al., ATC'23):
 * how much of a node's idle GPU capacity the target workload could not use.
 *
 * For each shape m of the engine's target workload (gp_engine_target), with
 * weight p_m, a node's idle GPU-milli counts as fragment:
 *   - all of it, when m asks for no GPU, or the node's GPU model is not one m
 *     accepts, or m cannot fit (too little CPU, or fewer than m.gpu_count
 *     GPUs with m.gpu_milli free);
 *   - otherwise only the idle milli of GPUs with less than m.gpu_milli free.
 * F(node) = sum over m of p_m x fragment_m(node), in GPU-milli. GPU memory
 * is not part of the measure, as in the paper.
 *
 * The tracker keeps, per node, the aggregates that make F(node) and the F
 * after a tentative placement O(shapes): for every GPU share threshold of
 * the target, the count of GPUs at or above it and the idle milli below it.
 * A node's aggregates are recomputed only after gp_frag_touch (a bind or a
 * release on it) or a change of the target. Internal to engine/. */
#ifndef GP_ENGINE_FRAG_H
#define GP_ENGINE_FRAG_H

#include <stdint.h>

#include "engine/engine.h"

struct gp_frag;

/* NULL when out of memory. The tracker borrows nothing; free it with
 * gp_frag_free. */
struct gp_frag *gp_frag_new(void);
void gp_frag_free(struct gp_frag *f);

/* The node changed (bind or release): its cached aggregates are stale. */
void gp_frag_touch(struct gp_frag *f, uint32_t node);
/* The node's version: a positive number that changes whenever the node is
 * touched or the target changes, for callers that cache per node (0 only
 * when out of memory). */
uint64_t gp_frag_node_version(struct gp_frag *f, const struct gp_engine *e, uint32_t node);

/* F(node) now, in GPU-milli; 0 when no target is set. Returns a negative
 * value only when out of memory. */
double gp_frag_node(struct gp_frag *f, const struct gp_engine *e, const struct gp_node *node);
/* F(node) after the pod is placed on the GPUs of pick (which must fit). */
double gp_frag_node_after(struct gp_frag *f, const struct gp_engine *e, const struct gp_node *node,
                          const struct gp_pod *pod, const struct gp_pick *pick);

#endif
