/* pack.h - dense packing of many small models: the replicas of services
 * with a latency limit placed on the fewest GPUs of one kind, shared by
 * time-slicing or MPS, such that every service's p99 stays within its
 * limit (docs/serve.md, "Dense packing").
 *
 * Co-location slows replicas down as the simulator models it
 * (docs/simulator.md, "Shared GPUs"; docs/sharing.md): on a time-sliced
 * GPU whose replicas' compute demands add up to D > 1000 milli each runs
 * at 1000 / D of its speed alone; an MPS client runs at its thread limit
 * over its demand when that is below 1, whatever its company. A service's
 * replicas are an M/M/c (serve/erlang.h) at its peak load, each serving
 * its requests/s alone times the mean speed of its replicas.
 *
 * Method: each service gets the fewest replicas whose p99 at full speed
 * (MPS: at its client's speed) meets its limit; the replicas, services by
 * compute demand then memory, largest first, go one by one to the first
 * GPU that has room (memory, the device plugin's replicas per GPU) and on
 * which every service it holds still meets its limit with the new
 * company, else to a new GPU. A greedy first fit, not an optimum; the
 * baseline is one replica per GPU (exclusive GPUs: the same replicas).
 * Pure: the caller owns every array. */
#ifndef GP_SERVE_PACK_H
#define GP_SERVE_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gp_pack_share { GP_PACK_TIMESLICE, GP_PACK_MPS };

/* One GPU of the kind packed, shared one way. */
struct gp_pack_gpu {
    enum gp_pack_share mode;
    uint32_t max_pods;       /* replicas per GPU the device plugin advertises */
    double mem_mib;          /* the GPU's memory; 0: not limited */
    double mps_thread_milli; /* MPS: each client's share of the SMs (1000 / replicas by default) */
    double mps_mem_mib;      /* MPS: each client's pinned-memory limit; 0: none */
};

struct gp_pack_service {
    /* in */
    double rps_alone;    /* requests/s a replica serves alone on the GPU */
    double peak_rps;     /* the load to meet */
    double limit_s;      /* the p99 to stay within */
    double demand_milli; /* compute a replica wants, in thousandths of the GPU */
    double mem_mib;      /* GPU memory a replica holds */
    /* out */
    bool feasible;     /* its limit can be met at all on this GPU and mode */
    uint32_t replicas; /* the fewest that meet it (at full speed, or MPS's) */
    double p99_s;      /* with the company it got */
    double speed;      /* its replicas' mean speed where they landed */
};

/* The fewest replicas (at most max) of speed v whose M/M/c p99 at
 * peak_rps is within limit_s; 0 when none is. *p99_s: theirs. */
uint32_t gp_serve_pack_replicas(const struct gp_pack_service *s, double v, uint32_t max,
                                double *p99_s);

/* The caller's arrays for a packing: per replica (cap entries: at least
 * the replicas of all services, at most GP_PACK_MAX_REPLICAS each) the GPU
 * it went to, and per GPU (cap entries) its demand, memory and replicas;
 * per service (n entries) its first replica's entry and the order. */
struct gp_pack_work {
    size_t cap;
    uint32_t *gpu_of;
    double *demand, *mem;
    uint32_t *count;
    size_t *first;
    uint32_t *order;
};

/* Packs the n services onto GPUs of kind g: returns the GPUs used and, in
 * *baseline, the GPUs of one replica per GPU. A service that cannot meet
 * its limit (or would pass w->cap) is marked not feasible and takes none. */
#define GP_PACK_MAX_REPLICAS 1024
uint32_t gp_serve_pack(const struct gp_pack_gpu *g, struct gp_pack_service *s, size_t n,
                       struct gp_pack_work *w, uint32_t *baseline);

#endif
