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
 * Topology (gp_autoscale_plan): a gang whose topology key is required is
 * packed onto nodes that share one value of that label - booting nodes
 * that carry it, new nodes of pools whose fixed labels give it, new nodes
 * of pools that assign it per block of nodes (a domain, with room for
 * nodes_per_domain live nodes). Every candidate domain is tried and the one
 * whose new nodes cost least wins (unpriced nodes count after priced ones,
 * then fewer new nodes, then the first candidate: booting nodes' domains,
 * then the pools' in order, a pool's partly used domains before its first
 * empty one). A gang that fits no domain gets nothing; one whose topology
 * is preferred is then packed as if it had none. New nodes of a pool with
 * domains that no gang placed go to the fullest domain with room.
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
    /* a domain per block of nodes (gp_pool_spec.topology_key): a new node
     * of domain d carries label domain_key = domain_values[d]; a domain
     * holds at most nodes_per_domain live nodes, domain_live[d] now (NULL:
     * none). ndomains 0: the pool has no domains (all borrowed) */
    const char *domain_key;
    const char *const *domain_values;
    const uint32_t *domain_live;
    uint32_t ndomains, nodes_per_domain;
};

/* A gang's topology, as given to gp_engine_group_add (the engine keeps
 * its gangs' specs to itself). */
struct gp_autoscale_gang {
    const char *topology_key; /* NULL: none */
    bool topology_required;
};

#define GP_AUTOSCALE_NO_DOMAIN UINT32_MAX

/* A new node of the plan: its pool and, for a pool with domains, its
 * domain (GP_AUTOSCALE_NO_DOMAIN otherwise). */
struct gp_autoscale_node {
    uint32_t pool, domain;
};

/* What a plan starts from. booting[i] is a booting node's spec (its labels
 * give its domain) and booting_pool[i] its pool; gangs[g - 1] the topology
 * of gang g (NULL, or g beyond ngangs: none). */
struct gp_autoscale_input {
    const struct gp_autoscale_pool *pools;
    size_t npools;
    const struct gp_node_spec *const *booting;
    const uint32_t *booting_pool;
    size_t nbooting;
    const uint32_t *pods; /* engine pod ids, in queue order */
    size_t npods;
    const struct gp_autoscale_gang *gangs;
    size_t ngangs;
};

/* Plans a scale-up as gp_autoscale_up does, with topology: add[p] (npools
 * entries) gets the new nodes of pool p, and nodes (when not NULL, room for
 * the sum over pools of max - live) each new node, *nnodes how many.
 * *placed as gp_autoscale_up. GP_ENOMEM, or GP_EINVALID for a bad pool
 * index. */
enum gp_err gp_autoscale_plan(struct gp_engine *e, const struct gp_autoscale_input *in,
                              uint32_t *add, struct gp_autoscale_node *nodes, size_t *nnodes,
                              size_t *placed);

/* Plans a scale-up: pods (engine pod ids, pending, found unschedulable, in
 * queue order) onto the booting nodes (booting[i] = the pool of each, a
 * node like the pool's spec) and
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
