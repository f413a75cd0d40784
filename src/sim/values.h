/* values.h - the per-pod figures a run keeps for its exact percentiles
 * (queueing delays, completion times, each job's cost): 8 bytes a value
 * in chunks of fixed size, so a run of millions of pods holds what the
 * values take and nothing more (no doubling array's spare half, no copy
 * while it grows). Gathered into one array at the end for sorting.
 *
 * Internal to sim/ (and its tests). */
#ifndef GP_SIM_VALUES_H
#define GP_SIM_VALUES_H

#include <stddef.h>

/* 2^GP_SIM_VALUES_SHIFT values a chunk (1 MiB of address space; the
 * pages written are what it holds) */
#define GP_SIM_VALUES_SHIFT 17

struct gp_sim_values {
    double **chunks;
    size_t nchunks, cap; /* chunks in use, slots in `chunks` */
    size_t n;            /* values */
};

/* Appends v; 0, or -1 when out of memory (nothing added). */
int gp_sim_values_push(struct gp_sim_values *s, double v);

/* The value at index i < s->n (it may be changed through the pointer). */
static inline double *gp_sim_values_at(const struct gp_sim_values *s, size_t i)
{
    return &s->chunks[i >> GP_SIM_VALUES_SHIFT][i & (((size_t)1 << GP_SIM_VALUES_SHIFT) - 1)];
}

/* Copies the values, in order, to dst (s->n of them) and frees each chunk
 * once copied: the set is empty afterwards. */
void gp_sim_values_drain(struct gp_sim_values *s, double *dst);

/* The bytes the set holds (chunks and their table). */
size_t gp_sim_values_bytes(const struct gp_sim_values *s);

void gp_sim_values_free(struct gp_sim_values *s);

#endif
