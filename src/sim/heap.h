/* heap.h - the simulator's event queue: a binary min-heap of events in one
 * growable array, ordered by (time, sequence number). The sequence number
 * is assigned on push, so events of equal time come out in the order they
 * were pushed and every run is deterministic.
 *
 * Internal to sim/. The heap owns its array (malloc); free with
 * gp_sim_heap_free. */
#ifndef GP_SIM_HEAP_H
#define GP_SIM_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_sim_event {
    double t_s;
    uint64_t seq;
    uint32_t kind; /* the caller's event kind */
    uint32_t a, b; /* the caller's operands */
};

struct gp_sim_heap {
    struct gp_sim_event *items;
    size_t len, cap;
    uint64_t next_seq;
};

void gp_sim_heap_init(struct gp_sim_heap *h);
void gp_sim_heap_free(struct gp_sim_heap *h);
/* Pushes an event at t_s; 0, or -1 when out of memory (the heap is then
 * unchanged). */
int gp_sim_heap_push(struct gp_sim_heap *h, double t_s, uint32_t kind, uint32_t a, uint32_t b);
/* The earliest event, or NULL when the heap is empty. */
const struct gp_sim_event *gp_sim_heap_peek(const struct gp_sim_heap *h);
/* Removes the earliest event into *out; false when the heap is empty. */
bool gp_sim_heap_pop(struct gp_sim_heap *h, struct gp_sim_event *out);

#endif
