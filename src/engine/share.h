/* share.h - pods on shared GPUs: the GPU part of the filters, the choice of
 * GPUs (and MIG instances) inside a node, and the per-GPU accounting, for
 * each way a pool shares its GPUs (docs/sharing.md):
 *
 *   exclusive   a pod gets whole GPUs; a fraction takes a whole GPU too
 *   timeslice   a pod gets replicas (one, or N for nvidia.com/gpu: N) of
 *               the GPUs' `replicas` each; its declared GPU memory is
 *               accounted, not enforced
 *   mps         a pod gets one of `replicas` MPS clients, each limited to
 *               active_thread_pct of the SMs and pinned_mem_mib of memory
 *   mig         a pod gets MIG instances of one profile; a dynamic pool
 *               creates instances (removing free ones) when none is free
 *
 * A node without a sharing spec (the openb trace's GPU-sharing cluster)
 * accounts fractions of compute and memory per GPU; the engine's core
 * handles it (node.c, place.c). Used by the engine's core only (through
 * internal.h); pure, no state. */
#ifndef GP_ENGINE_SHARE_H
#define GP_ENGINE_SHARE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/model.h"
#include "engine/sharing.h"

/* want whole free GPUs of a node, into pick: inside one NVLink domain
 * when the node has domains and one holds them (the domain with the fewest
 * free GPUs that does: best fit, so free domains stay whole), otherwise
 * from the domains with the most free GPUs first; on a node without
 * domains the lowest-indexed free GPUs. -1 when fewer are free. */
int gp_share_pick_whole(const struct gp_node *n, uint32_t want, struct gp_pick *pick);

/* Fills p->mig_profile_of for every MIG model from p->spec. */
void gp_share_pod_init(struct gp_pod *p);

/* Sets up a new node's shared GPUs from its pool's spec (a MIG pool's
 * static layout on every GPU). */
void gp_share_node_init(struct gp_node *n);

/* Whether the pod's request may go to a node shared this way at all, as
 * NVIDIA's device plugin advertises the node's GPUs: the resource it asks
 * for (nvidia.com/gpu, nvidia.com/gpu.shared when renamed, a MIG profile
 * the model has), failRequestsGreaterThanOne, a pinned mode. */
bool gp_share_mode_ok(const struct gp_node *n, const struct gp_pod *p);

/* Why gp_share_mode_ok refuses: one phrase ("it asks for nvidia.com/gpu,
 * and with renameByDefault: true ...") written into buf; NULL when it
 * does not refuse. */
const char *gp_share_refusal(const struct gp_node *n, const struct gp_pod *p, char *buf,
                             size_t size);

/* Whether the pod fits the node (which has a sharing spec) when no pod
 * holds any of its GPUs, replicas or instances (the "never fits" test). */
bool gp_share_empty_fits(const struct gp_node *n, const struct gp_pod *p);

/* The GPU filters for a pod with GPUs on a node with a sharing spec whose
 * mode the pod accepts: GP_FILTER_COUNT when it fits now, else the filter
 * that rejects it (gpu-count, gpu-memory, gpu-share, gpu-replica, mig). */
enum gp_filter gp_share_filter(const struct gp_node *n, const struct gp_pod *p);

/* The GPUs (and MIG instances) for the pod on such a node; 0, or -1 when
 * it does not fit. */
int gp_share_pick(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick);

/* The GPUs (or MIG instances) a driver names for the pod on such a node
 * (a pod already running there: its device annotations read back after a
 * restart), checked against the node's sharing by the rules
 * gp_share_filter and gp_share_pick place by, so that a pick is accepted
 * exactly when placement could have chosen it: one free replica (or MPS
 * client) on each named GPU, the GPU's memory left, a client's limits;
 * whole free GPUs on an exclusive pool; free instances of the pod's
 * profile on MIG. A GPU named twice is refused (an instance, on MIG).
 * Writes the pick as gp_share_pick would; 0, or -1 when refused. */
int gp_share_pick_named(const struct gp_node *n, const struct gp_pod *p,
                        const struct gp_pick *named, struct gp_pick *pick);

/* Takes a picked pod's GPU resources from the node's GPUs (and MIG
 * layouts), or gives them back; the node summary is the caller's. take
 * returns true when the pod's declared GPU memory did not fit (a
 * time-sliced pool that allows oversubscription). */
bool gp_share_take(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick);
void gp_share_give(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick);

#endif
