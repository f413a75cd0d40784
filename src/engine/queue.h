/* queue.h - what a queue is: a node of the queue tree with, per resource,
 * a guaranteed quota and a borrowing limit, a fair-share weight and its
 * preemption rules. Plain data, shared by the engine (engine.h:
 * gp_engine_queue_set) and the workload readers (a Queue object becomes a
 * struct gp_queue_def in io/workload.h). docs/ARCHITECTURE.md "Queues"
 * gives the semantics.
 *
 * Units are in the names: GPUs in milli-GPU (1000 = one GPU), CPU in
 * millicores, memory in MiB. Strings and arrays are borrowed: the caller
 * keeps them alive for as long as the engine holds the queue. */
#ifndef GP_ENGINE_QUEUE_H
#define GP_ENGINE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One resource's quota. The queue's use of the resource (its own pods and
 * its descendants') never exceeds guaranteed + borrow_limit when `limited`.
 * What it uses above `guaranteed` is borrowed: idle quota of other queues,
 * which they may reclaim. All zero (the default): no guarantee, no limit. */
struct gp_quota {
    int64_t guaranteed;   /* >= 0; 0: none */
    int64_t borrow_limit; /* >= 0; read only when limited */
    bool limited;         /* false: it may borrow without bound */
};

/* The quota of GPUs of one model (counted in milli-GPU, as gpu). */
struct gp_model_quota {
    const char *model; /* a node's gpu_model, e.g. "A100-80GB" */
    struct gp_quota gpu_milli;
};

/* A zeroed spec is a queue with weight 1 and no quota. */
struct gp_queue_spec {
    const char *name;
    uint32_t parent; /* a queue id; 0: a top-level queue */
    double weight;   /* fair-share weight, > 0 (1 when 0 is given) */
    struct gp_quota gpu_milli, cpu_milli, mem_mib;
    const struct gp_model_quota *models; /* per GPU model; none = no per-model quota */
    size_t nmodels;
    bool no_preempt_within; /* a higher-priority pod does not evict lower ones of this queue */
    bool not_reclaimable;   /* what this queue borrowed is never reclaimed from it */
    double min_runtime_s;   /* its pods run at least this long before they may be evicted */
};

#endif
