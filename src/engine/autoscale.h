/* autoscale.h - the cluster autoscaler's decisions, with the engine's own
 * rules. Pure like the engine: no I/O, no clock (the driver passes now_s),
 * no state between calls.
 *
 * Scale up: the pods the engine found unschedulable are packed, in the
 * order given, onto the nodes already booting and then onto hypothetical
 * new nodes (gp_engine_node_probe / gp_engine_node_take, so a pod fits a
 * new node exactly when the engine would place it there: GPU model,
 * selectors, taints, fractions of a GPU, MIG, memory). A gang's pending
 * members are placed all together or not at all. A pod that fits no node
 * yet opens a new node in the cheapest pool that can hold it: the lowest
 * price per pod of its shape, that is the node price divided by how many
 * such pods fit an empty node (a pod asking for one GPU pays less on a
 * 1-GPU node than on an 8-GPU one); pools without a price come after those
 * with one; ties go to the earlier pool. A pool never grows beyond max.
 * Because each call plans from scratch, pods that booting nodes will hold
 * ask for nothing more.
 *
 * Scale down: a ready node with no pod, idle for the cool-down, whose pool
 * stays at or above its minimum. */
#ifndef GP_ENGINE_AUTOSCALE_H
#define GP_ENGINE_AUTOSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* A pool the autoscaler may grow. */
struct gp_autoscale_pool {
    const struct gp_node_spec *spec; /* what a new node is (borrowed) */
    uint32_t live;                   /* nodes that count against max: booting, ready */
    uint32_t max;
    double price_per_hour_usd; /* per node; <= 0 = not known */
};

/* Plans a scale-up: pods (engine pod ids, pending, found unschedulable, in
 * queue order) onto the booting nodes (booting[i] = the pool of each) and
 * new nodes; add[p] (npools entries, zeroed here) gets the new nodes of
 * pool p. Only pods the engine knows and that are pending count. *placed,
 * when not NULL, gets how many pods the plan holds (on booting or new
 * nodes). GP_ENOMEM, or GP_EINVALID for a bad pool index. */
enum gp_err gp_autoscale_up(struct gp_engine *e, const struct gp_autoscale_pool *pools,
                            size_t npools, const uint32_t *booting, size_t nbooting,
                            const uint32_t *pods, size_t npods, uint32_t *add, size_t *placed);

/* The pool a new node for pod p comes from (the rule above), among pools
 * with room (live + planned[i] < max, planned may be NULL); SIZE_MAX when
 * none can hold it. */
size_t gp_autoscale_pick_pool(struct gp_engine *e, const struct gp_autoscale_pool *pools,
                              size_t npools, const uint32_t *planned, const struct gp_pod *p);

/* Whether an idle node may go now: ready, no pods, idle since idle_since_s
 * for at least unneeded_s, and its pool keeps at least min nodes after it
 * (live counts the node). */
bool gp_autoscale_may_remove(const struct gp_node *n, double idle_since_s, double now_s,
                             double unneeded_s, uint32_t live, uint32_t min);

#endif
