/* sim.h - the simulator: a virtual clock and an event heap ordered by
 * (time, sequence) drive the engine through a workload on a cluster.
 *
 * Timed mode: items are submitted at their arrival times, pods run for
 * their duration and finish (or fail, and are retried with exponential
 * back-off up to their limit); Deployments run to the end. Queues the
 * workload declares get their quotas in the engine; a pod the engine
 * evicts goes back to its queue and loses the work since its last
 * checkpoint. A Job past its active deadline fails. Metrics are sampled on
 * a fixed interval of virtual time.
 *
 * Static mode (the FGD paper's packing experiment): the workload's pods are
 * shuffled with the seed, resampled with replacement until their GPU
 * request reaches `inflate` x the cluster's GPUs, and arrive one at a time;
 * none finishes, a pod that fits nowhere fails, the next one arrives. */
#ifndef GP_SIM_SIM_H
#define GP_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "util/err.h"

enum gp_sim_mode {
    GP_SIM_TIMED,
    GP_SIM_STATIC,
};

/* The most timeline samples one run may take (a smaller sample_s is an
 * error). */
#define GP_SIM_MAX_SAMPLES 10000000

struct gp_sim_config {
    enum gp_sim_mode mode;
    const struct gp_policy_ops *policy;
    uint64_t seed;
    double horizon_s;      /* timed: simulated time; 0 = until the workload is done */
    double sample_s;       /* timed: metrics interval; 0 = automatic; at most
                            * GP_SIM_MAX_SAMPLES samples in a run */
    double inflate;        /* static: target GPU request / capacity (1.3) */
    double backoff_base_s; /* retry back-off: base * 2^(attempt-1), capped */
    double backoff_max_s;
    enum gp_order order; /* the engine's queue order (timed mode) */
    bool backfill;
    /* the engine without its indexes (gp_engine_set_index): the same
     * results, slower; for benchmarks */
    bool no_index;
    /* progress callback (driver-side, may be NULL): fraction done in [0,1] */
    void (*progress)(void *ctx, double fraction);
    void *progress_ctx;
};

void gp_sim_config_default(struct gp_sim_config *c);

/* One metrics sample of the timed mode. */
struct gp_sim_sample {
    double t_s;
    double gpu_alloc_pct; /* allocated GPU-milli / total GPU-milli */
    double cpu_alloc_pct;
    double mem_alloc_pct;
    uint32_t pending;
    uint32_t running;
    uint32_t nodes;
    double cost_usd; /* what the cluster cost from 0 to t_s (nodes and control plane) */
};

/* A point of the static curve. */
struct gp_sim_point {
    double arrived_pct;
    double unallocated_pct;
};

/* Statistics of a set of values; n = 0: there were none, and the figures
 * (all 0) mean nothing: the reports print n/a (JSON null). */
struct gp_sim_stats {
    double mean, p50, p95, p99, max;
    uint64_t n; /* the values behind them */
};

/* The figures of one queue (timed mode). The list holds the queues the
 * workload declares, in order, then - when it declares none - the queue
 * names items carry (e.g. Philly's virtual clusters) in order of first
 * submission, then "default" when some pod went there. */
struct gp_sim_queue {
    const char *name;
    bool declared;                      /* a Queue object, with quotas in the engine */
    double guaranteed_gpus, limit_gpus; /* declared: GPU quota; limit < 0 = none */
    uint64_t pods_submitted;
    uint64_t binds;
    uint64_t evicted; /* its pods evicted (preempted or reclaimed) */
    uint64_t jobs_submitted, jobs_completed, jobs_failed;
    double gpu_hours_allocated;
    double lost_gpu_hours; /* work its evicted pods lost (preempted, reclaimed, spot) */
    double cost_usd;       /* its pods' share of the GPU nodes' cost (docs/simulator.md) */
    double lost_work_usd;  /* the part of cost_usd whose work was lost */
    struct gp_sim_stats queue_delay_s; /* submission to bind, of its binds */
    struct gp_sim_stats jct_s;         /* of its completed jobs */
};

/* What one node pool cost (timed mode). Node-hours are billed from the
 * request to the removal: booting and draining nodes count. */
struct gp_sim_pool_cost {
    const char *name;
    bool spot, autoscaled;
    uint32_t min_nodes, max_nodes, peak_nodes; /* peak: booting and ready at once (not draining) */
    uint64_t nodes_requested, nodes_removed;   /* by the autoscaler and spot replacements */
    uint64_t interruptions;                    /* spot notices */
    uint64_t interruptions_missed; /* recorded ones that found no ready node (dropped) */
    bool limits;                   /* the pool sets maxNodeLifetime or billing rounding */
    uint64_t expirations;          /* nodes replaced at maxNodeLifetime */
    double billing_rounding_usd;   /* billed time rounded up (billingGranularity, billingMinimum) */
    double node_hours;
    double gpu_hours, gpu_hours_used; /* billed GPU-hours, and those pods held */
    double total_usd, gpu_used_usd, gpu_idle_usd, other_usd;
    double on_demand_usd;    /* the same node-hours at the on-demand price; < 0: not known */
    double spot_savings_usd; /* on_demand_usd - total_usd for a spot pool with a known price */
};

/* A PodGroup whose gang can never start, and how often it was submitted. */
struct gp_sim_gang_short {
    const char *podgroup;
    uint32_t min_member; /* minMember */
    uint32_t members;    /* the pods its objects run at once, all together */
    uint64_t submissions;
};

/* A job's cost (its pods' share of the GPU nodes they ran on). */
struct gp_sim_job_cost {
    const char *name; /* the item's name */
    uint32_t k;       /* its submission number */
    double usd;
};

#define GP_SIM_TOP_JOBS 5

/* The money (docs/simulator.md, "Cost"): total_usd = gpu_used_usd +
 * gpu_idle_usd + control_plane_usd + other_usd. GPU nodes' whole price is
 * GPU cost, used in the share the bound pods hold (their GPUs / the node's),
 * idle otherwise (booting nodes are idle); other_usd is CPU-only nodes;
 * gpu_used_usd is split by queue (queues[].cost_usd) and between jobs and
 * services (Deployments). */
struct gp_sim_cost {
    double total_usd, gpu_used_usd, gpu_idle_usd, control_plane_usd, other_usd;
    double lost_work_usd;    /* the part of gpu_used_usd spent on work later lost */
    double spot_savings_usd; /* over the spot pools with a known on-demand price */
    double jobs_usd, services_usd;
    struct gp_sim_stats job_usd;                      /* per job (Pod or Job submission) */
    struct gp_sim_job_cost top_jobs[GP_SIM_TOP_JOBS]; /* the costliest, costliest first */
    size_t ntop_jobs;
    struct gp_sim_pool_cost *pools; /* per pool, in the cluster's order (in the arena) */
    size_t npools;
};

/* Why pods can never fit (docs/simulator.md, "Pods that can never fit"):
 * no node that can exist (the cluster's, and its pools at their maximum)
 * could take them, even empty, or their queue's cap is below one pod (a
 * gang: its minMember pods). The reason is the first need that no node
 * meets, checked in the engine's filter order; need and have are in the
 * unit of the kind. Strings are in the result's arena. */
enum gp_sim_nofit_kind {
    GP_SIM_NOFIT_SELECTOR,     /* no node matches their selector `what`; need: the nodes */
    GP_SIM_NOFIT_TAINT,        /* every node they may use (need of them) has a taint they do
                                * not tolerate, such as `what` */
    GP_SIM_NOFIT_GPU_MODEL,    /* they accept models `what`, the nodes have `have_what` */
    GP_SIM_NOFIT_SHARING,      /* they ask for `what`, the nodes share GPUs as `have_what` */
    GP_SIM_NOFIT_CPU,          /* milli-CPU */
    GP_SIM_NOFIT_MEMORY,       /* MiB */
    GP_SIM_NOFIT_GPUS,         /* GPUs (MIG instances of profile `what` when set) */
    GP_SIM_NOFIT_GPU_MEMORY,   /* MiB per GPU */
    GP_SIM_NOFIT_TOGETHER,     /* each need is met by some node, all of them by none */
    GP_SIM_NOFIT_FILTER,       /* some other filter (`filter`) rejects every node */
    GP_SIM_NOFIT_QUOTA,        /* queue `what`'s cap on `resource` (CPU, MEMORY or GPUS) */
    GP_SIM_NOFIT_GANG_GPUS,    /* a gang: milli-GPU in one domain of label `what` (NULL: in
                                * the cluster), of the nodes that can take its pods */
    GP_SIM_NOFIT_GANG_MEMBERS, /* a gang: minMember (need) > the members that can exist */
};

struct gp_sim_nofit {
    enum gp_sim_nofit_kind kind;
    enum gp_sim_nofit_kind resource; /* QUOTA: the resource capped */
    enum gp_filter filter;           /* FILTER */
    const char *gang;                /* the gang's name; NULL: single pods */
    const char *what, *have_what;
    int64_t need, have;
    /* the largest node `have` is of those they may use (their selector,
     * tolerations, GPU model, sharing), smaller than the cluster's largest */
    bool narrowed;
    const char *scope;          /* narrowed by their GPU models alone: those models ("T4") */
    int64_t cpu_milli, mem_mib; /* TOGETHER: what one pod asks */
    uint32_t gpus;
    uint64_t pods;  /* pods that can never fit for this reason */
    uint64_t gangs; /* gangs among them (the rows of one gang) */
};

/* One inference service (an InferenceService, docs/serve.md) over a timed
 * run. The timelines have one value per result sample (samples[i].t_s):
 * ready replicas and the load offered then (requests/s). Latencies are
 * the percentiles of every request's time in the system over the run
 * (queueing included); unserved_s is the time during which requests
 * waited for capacity (a backlog, or none ready with load offered). */
/* A service's rolling update (docs/serve.md, "Rolling updates"). */
enum gp_sim_rollout_status {
    GP_ROLLOUT_COMPLETE,    /* every replica new and ready */
    GP_ROLLOUT_PROGRESSING, /* under way at the end of the run */
    GP_ROLLOUT_STALLED,     /* no progress for progressDeadlineSeconds (600 s) at the end */
    GP_ROLLOUT_NOT_STARTED, /* its time, or its Deployment, did not come */
    GP_ROLLOUT_SUPERSEDED,  /* the next rollout began before it completed */
};

struct gp_sim_rollout {
    enum gp_sim_rollout_status status;
    double at_s, start_s;
    double duration_s; /* start to complete; to the end of the run otherwise */
    int32_t replicas, max_surge, max_unavailable;
    int32_t min_ready, max_pods;         /* the lowest ready and the most pods, over the rollout */
    int32_t replicas_low, replicas_high; /* the range of spec.replicas (the autoscaler's) */
    double below_min_available_s; /* time with fewer than spec.replicas - maxUnavailable ready */
    double spare_gpus_peak;       /* GPUs held beyond replicas' worth, at most */
    bool no_room;                 /* a surge replica waited unplaced while no node was booting */
    double no_room_s;             /* when that was first seen */
};

struct gp_sim_service {
    const char *name;
    bool llm;
    double *replicas, *load; /* nsamples each, in the arena */
    double *p99_timeline_s;  /* p99 latency of each sample's interval (0: no request) */
    double *queued;          /* requests waiting for capacity at each sample */
    double *unserved_load;   /* requests/s that joined the wait, from each sample to the next */
    bool has_rollout;
    struct gp_sim_rollout rollout;   /* the first of rollouts */
    struct gp_sim_rollout *rollouts; /* nrollouts, in time, in the arena */
    size_t nrollouts;
    size_t n;
    double p50_latency_s, p95_latency_s, p99_latency_s;
    double ttft_p99_s;   /* LLM: time to first token, queueing included */
    double tokens_per_s; /* LLM: output tokens served per second over the run */
    double unserved_s;
    double requests, requests_queued, requests_unserved; /* offered; waited behind a backlog;
                                                          * still waiting at the end */
    uint64_t cold_starts;   /* replica binds, each paying the model load */
    uint32_t peak_replicas; /* ready at once */
    double gpu_hours;       /* its replicas' GPUs, from bind to stop (loading included) */
    double cost_usd;        /* its pods' share of the GPU nodes they ran on */
    double usd_per_million; /* per million requests (per million output tokens: LLM) */
};

struct gp_sim_result {
    enum gp_sim_mode mode;
    const char *policy;
    uint64_t seed;
    double sim_end_s; /* virtual time at the end */
    uint64_t pods_submitted;
    uint64_t pods_scheduled; /* distinct pods bound at least once */
    uint64_t pods_completed;
    uint64_t pods_failed; /* gave up: retries exhausted, or (static) fit nowhere */
    uint64_t pods_pending_end;
    uint64_t pods_running_end;
    uint64_t pod_retries;
    uint64_t gang_restarts;   /* running gang members stopped because another failed */
    uint64_t gangs_never_fit; /* gangs failed at once: they could not fit the empty cluster */
    /* gang submissions that can never start: their PodGroup's minMember is
     * more than the pods its objects ever run at once; as in Kubernetes
     * their pods stay pending. Per PodGroup below (in the arena). */
    uint64_t gangs_never_start;
    struct gp_sim_gang_short *never_start;
    size_t nnever_start;
    /* gang placements whose members sit in more than one topology domain
     * (they run their PodGroup's topology slowdown slower) */
    uint64_t gangs_across_domains;
    uint64_t gangs_over_timeout; /* first placed after their scheduleTimeoutSeconds */
    /* pods that can never fit, by reason, most pods first (identical
     * reasons grouped); timed mode: never bound (pending at the end, or
     * failed: gangs at once, Jobs by their deadline); static: failed */
    struct gp_sim_nofit *nofit; /* in the arena */
    size_t nnofit;
    uint64_t pods_never_fit; /* their pods */
    /* evictions: running pods stopped to make room for another, then put
     * back in their queue; the work since their last checkpoint is lost */
    uint64_t preemptions;  /* all evictions */
    uint64_t preempted;    /* by a higher priority in their queue */
    uint64_t reclaimed;    /* by a queue taking back its guarantee */
    double lost_gpu_hours; /* GPU-hours of work the evicted pods lost */
    /* shared GPUs (docs/simulator.md, "Shared GPUs") */
    uint64_t mig_reconfigurations; /* GPUs re-partitioned for a pod (dynamic MIG) */
    uint64_t oom_kills;            /* pods failed: their GPU memory was oversubscribed */
    double timeslice_slowdown;     /* completed runs on time-sliced GPUs: wall time / work */
    /* jobs: each submission of a Pod or a Job item (not Deployments) */
    uint64_t jobs_submitted, jobs_completed, jobs_failed;
    uint64_t jobs_deadline_exceeded; /* failed by their active deadline */
    struct gp_sim_stats jct_s;       /* job completion time: submission to its last pod's end */
    struct gp_sim_queue *queues;     /* per queue, in the arena */
    size_t nqueues;
    uint64_t binds;
    struct gp_sim_stats queue_delay_s; /* submission to bind, of bound pods */
    double *queue_delays_s;            /* every bound pod's delay (sorted) */
    size_t nqueue_delays;
    double node_hours;
    double gpu_hours_total;
    double gpu_hours_allocated;
    double gpu_hours_idle;
    double cost_usd; /* the whole bill: cost.total_usd, the same number (control plane included) */
    struct gp_sim_cost cost;
    /* GPU allocation: its exact peak over the run, from the state after
     * each instant's binds and releases (not from the samples), when it
     * was first reached, and the GPUs allocated then (timed mode) */
    double gpu_alloc_peak_pct, gpu_alloc_peak_t_s, gpu_alloc_peak_gpus;
    /* cluster dynamics (timed mode) */
    uint64_t nodes_requested, nodes_removed; /* autoscaler scale-ups and scale-downs */
    uint64_t spot_interruptions;             /* notices given */
    /* recorded interruptions (interruptionTimes) that came while their pool
     * had no ready node: dropped, counted here */
    uint64_t spot_interruptions_missed;
    uint64_t spot_evictions;    /* pods stopped by them (gang members included) */
    double spot_lost_gpu_hours; /* work those pods lost */
    /* nodes replaced at their pool's maxNodeLifetime, the pods that
     * stopped (gang members included) and the work they lost */
    bool provider_limits; /* some pool sets maxNodeLifetime or billing rounding */
    uint64_t node_expirations, expiry_evictions;
    double expiry_lost_gpu_hours;
    /* what the pools' billingGranularity and billingMinimum added to the
     * nodes' exact time (in cost_usd already) */
    double billing_rounding_usd;
    /* pod attempts found unschedulable, each counted once under its main
     * reason (gp_explain_main: the filter that rejected the most nodes) */
    uint64_t unschedulable[GP_FILTER_COUNT];
    /* the first such pod rejected for its driver, in kube-scheduler's
     * words with the numbers ("node(s) had driver 525.60 < 535.54 needed
     * by CUDA 12.2"); "" when none */
    char unschedulable_driver[128];
    struct gp_sim_sample *samples;
    size_t nsamples;
    /* static mode */
    double unallocated_gpu_pct_at_100;
    struct gp_sim_point *curve;
    size_t ncurve;
    /* cluster */
    uint32_t nodes;
    uint64_t gpus;
    /* inference services (timed mode), in the workload's order; in the arena */
    struct gp_sim_service *services;
    size_t nservices;
};

/* Runs one simulation. Memory of the result (arrays) lives in arena a.
 * Errors are bad input found late (e.g. a pod larger than any GP limit). */
enum gp_err gp_sim_run(const struct gp_sim_config *cfg, const struct gp_cluster *cluster,
                       const struct gp_workload *workload, struct gp_arena *a,
                       struct gp_sim_result *out, struct gp_diag *diag);

/* The static mode's arrival sequence for cfg (seed, inflate): the pods of
 * the workload shuffled and resampled exactly as gp_sim_run does, as
 * pointers to the workload's pod specs in an array in arena a. For tools
 * that analyse the same arrivals (e.g. a bound on the best packing). */
enum gp_err gp_sim_static_sequence(const struct gp_sim_config *cfg,
                                   const struct gp_cluster *cluster,
                                   const struct gp_workload *workload, struct gp_arena *a,
                                   const struct gp_pod_spec ***out, size_t *n,
                                   struct gp_diag *diag);

/* One pod's run on the timeline below: it runs from start_s to end_s
 * (INFINITY: to the end, a service). */
struct gp_sim_span {
    uint32_t item; /* the workload item whose pod it is */
    double start_s, end_s;
};

/* The runs the workload's pods would make if none ever waited for room:
 * the arrivals and durations a timed replay with this seed draws (the
 * same keyed streams), every pod starting when it is submitted, every run
 * succeeding (failures and retries are not drawn); submissions at or after
 * horizon_s (> 0) are left out. For tools that size a cluster by what runs
 * at once (the sharing study). The spans live in arena a, by item. */
enum gp_err gp_sim_timeline(const struct gp_workload *w, uint64_t seed, double horizon_s,
                            struct gp_arena *a, struct gp_sim_span **out, size_t *n,
                            struct gp_diag *diag);

#endif
