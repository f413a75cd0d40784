/* pack.h - dense packing of many small models: the replicas of services
 * with a latency limit placed on the fewest GPUs of one kind, shared by
 * time-slicing, MPS or MIG, such that every service stays within its
 * limit (docs/serve.md, "Dense packing").
 *
 * Latency: a plain model's replicas are an M/M/c (serve/erlang.h) at its
 * peak load, each serving its requests/s alone times the mean speed of
 * its replicas; its limit is the p99 of a request's time in the system.
 * An LLM's replicas are the simulator's (docs/serve.md, "In the
 * simulator"): each runs the batch of serve/llm.h at the load it gets,
 * slowed by its speed (a replica at speed v serves as one at full speed
 * offered lambda / v, v times faster), with a KV cache in proportion to
 * the memory its share gives it against a whole GPU (and so a batch cap);
 * the batch slots of all replicas are an M/M/c for the wait; its limit is
 * the p99 of the time to first token (wait plus prefill at the batch) and,
 * when given, an inter-token latency at the batch.
 *
 * Speed: co-location slows replicas down as the simulator models it
 * (docs/simulator.md, "Shared GPUs"; docs/sharing.md): on a time-sliced
 * GPU whose replicas' compute demands add up to D > 1000 milli each runs
 * at 1000 / D of its speed alone; an MPS client runs at its thread limit
 * over its demand when that is below 1, whatever its company; a MIG
 * instance at its compute slices' share of the GPU over the demand, when
 * below 1, whatever its neighbours (MIG isolates them).
 *
 * Method: time-slicing and MPS: each service gets the fewest replicas
 * meeting its limit at full speed (MPS: at its client's speed); the
 * replicas, services by compute demand then memory, largest first, go one
 * by one to the first GPU that has room (memory, the device plugin's
 * replicas per GPU) and on which every service it holds still meets its
 * limit with the new company, else to a new GPU. MIG: each service takes
 * the profile (memory holding the replica) whose fewest replicas meeting
 * the limit there use the least of a GPU (replicas x the larger of the
 * profile's compute and memory fractions); instances, largest first, go to
 * the first GPU whose layout takes one more (gp_mig_add: the placements
 * the engine allows), else to a new GPU. Greedy first fits, not optima;
 * the baseline is one replica per GPU (exclusive GPUs: the replicas each
 * service needs at full speed). A replica of several GPUs (a model split
 * over them) shares none: it counts its GPUs whole, at full speed, in the
 * packing as in the baseline. Pure: the caller owns every array. */
#ifndef GP_SERVE_PACK_H
#define GP_SERVE_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/mig.h"
#include "serve/llm.h"

enum gp_pack_share { GP_PACK_TIMESLICE, GP_PACK_MPS, GP_PACK_MIG };

/* One GPU of the kind packed, shared one way. */
struct gp_pack_gpu {
    enum gp_pack_share mode;
    uint32_t max_pods;       /* replicas per GPU the device plugin advertises (not MIG) */
    double mem_mib;          /* the GPU's memory; 0: not limited (LLM: KV cache not scaled) */
    double mps_thread_milli; /* MPS: each client's share of the SMs (1000 / replicas by default) */
    double mps_mem_mib;      /* MPS: each client's pinned-memory limit; 0: none */
    const struct gp_mig_model *mig; /* MIG: the GPU's profiles */
};

struct gp_pack_service {
    /* in */
    double rps_alone;               /* plain: requests/s a replica serves alone on the GPU */
    double peak_rps;                /* the load to meet */
    double limit_s;                 /* plain: the p99 of a request's time; LLM: the p99 of TTFT */
    double demand_milli;            /* compute a replica wants, in thousandths of the GPU */
    double mem_mib;                 /* GPU memory a replica holds */
    const struct gp_serve_llm *llm; /* an LLM replica (as on a whole GPU); NULL: plain */
    double in_tokens, out_tokens;   /* LLM: a request's mean tokens */
    double itl_limit_s;             /* LLM: the inter-token latency to stay within; 0: none */
    uint32_t gpus; /* GPUs a replica holds; above 1 they are its alone (not shared, full speed) */
    /* out */
    bool feasible;     /* its limit can be met at all on this GPU and mode */
    uint32_t replicas; /* the fewest that meet it (at full speed, or MPS's, or MIG's) */
    double p99_s;      /* with the company it got (LLM: TTFT) */
    double itl_s;      /* LLM: the inter-token latency at its batch */
    double speed;      /* its replicas' mean speed where they landed */
    int mig_profile;   /* MIG: the profile index each replica takes; -1 otherwise */
};

/* The latency of c replicas of s at mean speed v whose memory is mem_frac
 * of a whole GPU's (LLM: the KV cache scales with it; at most 1): plain,
 * the M/M/c p99 of a request's time at the peak; LLM, the p99 of TTFT and
 * in *itl_s (if not NULL) the inter-token latency at the batch. INFINITY
 * when they cannot keep up (an LLM replica past its batch cap). */
double gp_serve_pack_latency(const struct gp_pack_service *s, uint32_t c, double v, double mem_frac,
                             double *itl_s);

/* Whether a latency (and an LLM's ITL) is within the service's limits. */
bool gp_serve_pack_within(const struct gp_pack_service *s, double p99_s, double itl_s);

/* The fewest replicas (at most max) of speed v and memory fraction
 * mem_frac that meet the service's limits; 0 when none does. *p99_s:
 * theirs. */
uint32_t gp_serve_pack_replicas_at(const struct gp_pack_service *s, double v, double mem_frac,
                                   uint32_t max, double *p99_s);
/* The same with the memory of a whole GPU. */
uint32_t gp_serve_pack_replicas(const struct gp_pack_service *s, double v, uint32_t max,
                                double *p99_s);

/* The caller's arrays for a packing: per replica (cap entries: at least
 * the replicas of all services, at most GP_PACK_MAX_REPLICAS each) the GPU
 * it went to, and per GPU (cap entries) its demand, memory and replicas
 * (MIG: its layout, which a MIG packing requires); per service (n
 * entries) its first replica's entry and the order. */
struct gp_pack_work {
    size_t cap;
    uint32_t *gpu_of;
    double *demand, *mem;
    uint32_t *count;
    size_t *first;
    uint32_t *order;
    struct gp_mig_layout *layout; /* MIG only */
};

/* Packs the n services onto GPUs of kind g: returns the GPUs used and, in
 * *baseline, the GPUs of one replica per GPU. A service that cannot meet
 * its limit (or would pass w->cap) is marked not feasible and takes none. */
#define GP_PACK_MAX_REPLICAS 1024
uint32_t gp_serve_pack(const struct gp_pack_gpu *g, struct gp_pack_service *s, size_t n,
                       struct gp_pack_work *w, uint32_t *baseline);

#endif
