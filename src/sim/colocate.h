/* colocate.h - which running pods share each time-sliced GPU, and the
 * rate at which each of them progresses: the simulator's model of
 * time-slicing (docs/simulator.md, "Shared GPUs"). CUDA time-slicing gives
 * the processes on a GPU turns on the whole of it, so pods whose compute
 * demands (in thousandths of the GPU) add up to D > 1000 each run at
 * 1000 / D of their speed alone; at D <= 1000 nobody slows down.
 *
 * A GPU is known by (node, gpu); members are the caller's ids. The
 * tracker owns its memory; nothing else. */
#ifndef GP_SIM_COLOCATE_H
#define GP_SIM_COLOCATE_H

#include <stddef.h>
#include <stdint.h>

#include "util/vec.h"

#define GP_COLOC_NONE UINT32_MAX

struct gp_coloc_gpu {
    GP_VEC(uint32_t) members;
    double demand_milli; /* sum of the members' demands */
};

struct gp_coloc {
    GP_VEC(struct gp_coloc_gpu) gpus;
    GP_VEC(uint32_t) base; /* per node id: index of its GPU 0 in gpus, or GP_COLOC_NONE */
};

void gp_coloc_init(struct gp_coloc *c);
void gp_coloc_free(struct gp_coloc *c);

/* Adds member id with its demand to GPU gpu of node (a node of ngpus
 * GPUs); *index is the GPU's index for the calls below. -1 when out of
 * memory. */
int gp_coloc_join(struct gp_coloc *c, uint32_t node, uint32_t ngpus, uint32_t gpu, uint32_t id,
                  double demand_milli, uint32_t *index);
/* Removes member id (with the demand it joined with). */
void gp_coloc_leave(struct gp_coloc *c, uint32_t index, uint32_t id, double demand_milli);
/* The members of a GPU, in no order. */
const uint32_t *gp_coloc_members(const struct gp_coloc *c, uint32_t index, size_t *n);
/* The rate of every member of a GPU: 1, or 1000 / demand above 1000. */
double gp_coloc_rate(const struct gp_coloc *c, uint32_t index);

#endif
