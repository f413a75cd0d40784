/* internal.h - what the parts of the simulator share (the files of src/sim only;
 * drivers include sim/sim.h).
 *
 * One run of gp_sim_run is one `struct run`: the engine it drives, the
 * event heap, and the simulator's own view of the workload (items, their
 * submissions `inst`, logical pods `lpod`, the engine pods that are their
 * attempts `epod`) and of the cluster (sim nodes `snode`, pools
 * `pool_dyn`, topology domains `pool_topo`), with the running figures the
 * result is made from. Every part reads and writes it:
 *
 *   sim.c     the event loop, the events and the cycles; input checks;
 *             the keyed random streams; samples; the end of a run
 *   queues.c  the workload's queues: checks, the engine's queues, figures
 *   jobs.c    workload items and their submissions: Jobs, Deployments,
 *             attempts, retries and back-off, deadlines, gang restarts
 *   runs.c    a bound pod's run: its length and failure, its node and cost,
 *             time-sliced GPUs' rates, dynamic MIG's delay, evictions
 *   nodes.c   the cluster's nodes: topology domains, boot, idle removal,
 *             spot notices and interruptions
 *   scale.c   the autoscaler's driver (engine/autoscale.h plans)
 *   static.c  the static packing experiment (the FGD paper's)
 *   nofit.c   the pods that can never fit, and why, at the end of a run
 *
 * The names in here are private to src/sim/: struct tags and the helpers
 * below are short; functions with external linkage are gp_sim_<part>_*. */
#ifndef GP_SIM_INTERNAL_H
#define GP_SIM_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/autoscale.h"
#include "sim/colocate.h"
#include "sim/cost.h"
#include "sim/heap.h"
#include "sim/sim.h"
#include "sim/values.h"
#include "util/idtab.h"
#include "util/vec.h"

#define NONE UINT32_MAX /* no node, pod, domain, link */

/* 2^SIM_CHUNK_SHIFT records a chunk in the tables of instances, logical
 * and engine pods (util/idtab.h) */
#ifndef SIM_CHUNK_SHIFT
#define SIM_CHUNK_SHIFT 6
#endif

/* Independent random streams, so that e.g. changing failure_prob does not
 * shift the arrival times. Durations and failures are keyed by the pod
 * (item, submission, slot, attempt), not drawn in event order, so a pod
 * runs for the same time whichever policy places it. */
enum stream {
    STREAM_ARRIVAL = 1,
    STREAM_DURATION,
    STREAM_FAILURE,
    STREAM_SHUFFLE,
    STREAM_NODE_ORDER,
    STREAM_SPOT,       /* spot interruptions: keyed by pool and node */
    STREAM_COLD_START, /* a service replica's model load: keyed by service, pod, bind */
    STREAM_NODE_AGE,   /* the age of a node the run starts with (maxNodeLifetime) */
};

enum ev_kind {
    EV_ARRIVAL,  /* a = item */
    EV_END,      /* a = logical pod, b = 1 when the run fails | its end_ver << 1 */
    EV_RESUBMIT, /* a = logical pod, whose back-off has expired */
    EV_DEADLINE, /* a = instance: a Job's active deadline */
    EV_WAKE,     /* none: the engine asked for a cycle (a pod may be evicted now) */
    /* cluster dynamics: a = sim node unless said */
    EV_BOOT,        /* a requested node is ready */
    EV_IDLE,        /* b = the node's idle token: it may be removed if still idle */
    EV_SPOT_NOTICE, /* a spot node gets its notice (Poisson) */
    EV_SPOT_SERIES, /* a = pool, b = index in its recorded series */
    EV_SPOT_END,    /* the notice is over: pods evicted, the node leaves */
    EV_EXPIRE,      /* the node reached its pool's maxNodeLifetime */
    EV_SERVICE,     /* a = service: its autoscaler's sync (services.c) */
};

/* Events that do not keep a run going (a run without a horizon ends when
 * only these are left). */
static inline bool kind_endless(uint32_t kind)
{
    return kind == EV_IDLE || kind == EV_SPOT_NOTICE || kind == EV_SPOT_SERIES ||
           kind == EV_SPOT_END || kind == EV_SERVICE || kind == EV_EXPIRE;
}

enum inst_state { INST_ACTIVE, INST_DONE, INST_FAILED };

/* A logical pod: one replica of a Deployment, one completion slot of a Job,
 * the pod of a Pod. Its attempts (after failures) are distinct engine pods. */
enum lpod_state { LP_PENDING, LP_RUNNING, LP_BACKOFF, LP_COMPLETED, LP_FAILED };

/* One submission of an item (an item with repeat = n has n instances). */
struct inst {
    uint32_t item;
    uint32_t k; /* submission number within the item */
    uint32_t created, succeeded, failures;
    uint32_t closed;     /* its logical pods COMPLETED or FAILED */
    uint32_t head, tail; /* its logical pods, linked through lpod.next */
    uint32_t group;      /* its gang in the engine; 0 = not a gang */
    double submit_s;
    uint8_t state;
    uint8_t has_deadline; /* its EV_DEADLINE is in the heap and live */
    uint8_t maxfit;       /* a gang: 0 unknown, 1 fits every pool at its maximum, 2 does not */
    uint8_t nofit;        /* a gang that can never start: enum inst_nofit */
    uint8_t settled;      /* ended, every pod COMPLETED or FAILED (jobs.c) */
};

/* Why a gang can never start (nofit.c reports it). */
enum inst_nofit {
    NOFIT_NONE,
    NOFIT_NEVER,   /* the engine: it cannot fit the empty cluster, nor it at its maximum */
    NOFIT_MEMBERS, /* its minMember exceeds the members that can exist: it waits for ever */
};

struct lpod {
    uint32_t inst;
    uint32_t slot;     /* index of the pod within its instance */
    uint32_t next;     /* next logical pod of the same instance */
    uint32_t epod;     /* current engine pod when PENDING or RUNNING */
    uint32_t runs;     /* binds so far */
    uint32_t failures; /* its own failures (Deployment back-off) */
    uint8_t state;
    uint8_t has_event; /* an EV_END or EV_RESUBMIT for it is in the heap and live */
    uint8_t resume;    /* evicted: its next bind resumes the same run */
    /* the current run, drawn at its first bind: its length and where it
     * fails (in work seconds; < 0: it does not), the work saved by
     * checkpoints before evictions, and its latest bind */
    double len_s, fail_work_s, saved_s, bound_s;
    /* while running: its sim node, the links of that node's pod list, what
     * it costs per second and the GPUs it holds */
    uint32_t node, nprev, nnext;
    double rate_usd_s, gpus;
    /* progress: work_s done at rate_t_s, going on at `rate` work seconds
     * per second (below 1 on a crowded time-sliced GPU; rate_t_s is in
     * the future while a MIG re-partition delays the start) */
    double work_s, rate_t_s, rate;
    /* on time-sliced GPUs: the coloc index of its node's GPU 0
     * (GP_COLOC_NONE when it holds no replica) and which GPUs of the node
     * it holds replicas of (bit g: GPU g) */
    uint32_t ts_gpu;
    uint16_t ts_gpus;
    uint32_t end_ver; /* the live EV_END carries it; older ones are stale */
};

/* One of the costliest jobs so far (cost.c's top jobs): its cost, its
 * instance id (the earlier wins a tie, as the scan in id order did), its
 * item and submission number. */
struct top_job {
    double usd;
    uint32_t inst, item, k;
};

/* One engine pod (an attempt), indexed by the engine's dense pod id. */
struct epod {
    uint32_t lpod;
    double added_s;
    uint8_t counted; /* its unschedulable explanation has been counted */
    uint8_t unsched; /* it is in the autoscaler's list */
    uint64_t tried;  /* the cycle of its last decision */
};

/* A node of the cluster as the simulator sees it: requested (booting),
 * ready, draining (a spot notice), gone. Billed from request to removal. */
enum snode_state { SN_BOOTING, SN_READY, SN_DRAINING, SN_GONE };

struct snode {
    const struct gp_node_spec *spec;
    uint32_t pool;  /* its row in r->pools */
    uint32_t enode; /* engine id once ready; NONE while booting */
    uint32_t pods;  /* running pods, listed from head through lpod.nnext */
    uint32_t head;
    uint32_t idle_token; /* bumped to cancel a pending EV_IDLE */
    uint32_t domain;     /* its topology domain in its pool; NONE: none */
    uint8_t state;
    uint8_t requested; /* requested during the run (not one it started with) */
    double since_s, idle_since_s;
};

/* A pool's dynamics: its spec, what a new node is, and its counts. */
struct pool_dyn {
    const struct gp_pool_spec *spec; /* NULL for nodes of no known pool */
    struct gp_node_spec tmpl;        /* a new node (name aside) */
    bool has_tmpl, dynamic;
    uint32_t live;   /* booting and ready: what counts against max */
    uint32_t billed; /* not gone */
    uint32_t next_name;
    uint32_t *dlive; /* topology domains: live nodes in each (pool_topo's n) */
};

/* A pool's topology domains (gp_pool_spec.topology_key): the label value
 * of each; n 0 when the pool has none. */
struct pool_topo {
    const char **values;
    uint32_t n;
};

/* The cluster's state from t_s on, for the samples, with the cost so far
 * and its rate from then on (USD per second). */
struct change {
    double t_s;
    struct gp_sim_sample s;
    double cost_usd, rate_usd_s;
    uint64_t gpu_milli_alloc; /* what s.gpu_alloc_pct is a share of the total of */
};

/* A pod of the static mode that fit nowhere: its item and engine pod. */
struct static_fail {
    uint32_t item, epod;
};

struct item_run {
    struct gp_rng arrivals;
    uint32_t next_k;
    uint32_t queue;  /* its entry in the result's queues (NONE in static mode) */
    uint32_t equeue; /* its queue in the engine */
};

/* A queue's running figures, beside the result's entry. */
struct queue_run {
    uint32_t equeue;      /* in the engine; NONE when the engine does not know it */
    int64_t alloc_milli;  /* GPU milli its bound pods hold now */
    double alloc_milli_s; /* the integral of alloc_milli */
    /* its binds' delays and its jobs' completion times: the run's own
     * figures are these of every queue together (8 bytes a value, kept
     * once) */
    struct gp_sim_values delays, jcts;
};

struct run {
    const struct gp_sim_config *cfg;
    const struct gp_cluster *cluster;
    const struct gp_workload *wl;
    struct gp_arena *a;
    struct gp_sim_result *out;
    struct gp_diag *diag;
    struct gp_engine *e;

    struct gp_sim_heap heap;
    struct item_run *items;
    /* by id (inst_at, lpod_at, epod_at): released when the run no longer
     * needs them, so a run holds what its live pods need (and the
     * figures below), not a record of every pod it has submitted */
    struct gp_idtab insts, lpods, epods;
    /* per instance id: what its pods cost (8 bytes an instance, kept for
     * the per-job percentiles in id order); the Deployments' ids (they
     * are services, not jobs); the costliest jobs released so far */
    struct gp_sim_values inst_usd;
    GP_VEC(uint32_t) deploy_insts;
    GP_VEC(double) deploy_usd; /* at the end: their cost (deploy_insts' order) */
    struct top_job top[GP_SIM_TOP_JOBS];
    size_t ntop;
    GP_VEC(struct gp_decision) dec;
    struct gp_sim_values delays, jcts; /* without queues (static mode) */
    /* the state log the samples read, thinned as it grows (sim.c,
     * log_state): an entry is kept while a sample may read it */
    GP_VEC(struct change) log;
    double log_grid_s;    /* entries are kept for the multiples of it; 0: all */
    bool log_step_known;  /* the sample step is known from the start (grid = step) */
    bool log_nice;        /* automatic step, long run: a 1-2-5 step (samples_plan) */
    uint64_t log_changes; /* entries the log would have unthinned */
    struct change peak;   /* the highest sealed entry (the exact peak) */
    bool have_peak;
    struct queue_run *queues; /* as out->queues */
    size_t nqueues;

    double now_s;
    double wake_s;          /* the earliest EV_WAKE in the heap; INFINITY: none */
    uint64_t finite_events; /* live events in the heap that are not endless */
    uint64_t events;        /* events applied */
    uint64_t arrivals_total, arrivals_done;
    double price_per_s; /* sum of node prices, per second */
    /* cluster dynamics and cost */
    GP_VEC(struct snode) snodes;
    GP_VEC(uint32_t) enode_snode; /* engine node id -> sim node */
    GP_VEC(uint32_t) unsched;     /* engine pods found unschedulable (some may be gone) */
    GP_VEC(uint32_t) untried;     /* strict orders: pending pods the cycle did not reach */
    GP_VEC(uint32_t) group_inst;  /* gang id - 1 -> its instance */
    GP_VEC(struct static_fail) static_failed; /* static mode: the pods that fit nowhere */
    GP_VEC(struct gp_autoscale_gang) gangs;   /* gang id - 1 -> its topology */
    uint64_t cycles;                          /* gp_engine_schedule calls */
    uint64_t cycle_mark;                      /* cycles before the current schedule_cycle */
    size_t as_epods;                          /* engine pods when the autoscaler last looked */
    /* the cluster's nodes as the run adds them: with their topology
     * domain's label (node_domain[i]; NULL: no pool has a topology) */
    const struct gp_node_spec *nodes;
    uint32_t *node_domain;
    struct pool_topo *topo; /* per cluster pool (arena); NULL: no pool has a topology */
    struct pool_dyn *pools;
    size_t npools;
    struct gp_cost cost;
    bool dynamic;                /* some pool autoscales or is spot */
    bool as_dirty;               /* the autoscaler has something new to look at */
    double cp_per_s;             /* the control plane's fee */
    double lost_usd;             /* cost of work lost */
    struct gp_coloc coloc;       /* pods on time-sliced GPUs */
    double ts_wall_s, ts_work_s; /* completed runs on time-sliced GPUs */
    /* integrals over time of the piecewise-constant state */
    double node_s, gpu_milli_total_s, gpu_milli_alloc_s, cost_usd;
    int progress_pct;
    struct svc_run *svcs; /* inference services (services.c); NULL: none */
    size_t nsvcs;
};

/* ---- small helpers every part uses -------------------------------------- */

/* An instance, a logical pod, an engine pod's record by id; NULL once
 * released (jobs.c) */
static inline struct inst *inst_at(const struct run *r, uint32_t ii)
{
    return gp_idtab_get(&r->insts, ii);
}

static inline struct lpod *lpod_at(const struct run *r, uint32_t lp)
{
    return gp_idtab_get(&r->lpods, lp);
}

static inline struct epod *epod_at(const struct run *r, uint32_t epod)
{
    return gp_idtab_get(&r->epods, epod);
}

/* An item whose pods never end on their own: a Deployment, or no duration. */
static inline bool item_endless(const struct gp_item *it)
{
    return it->kind == GP_ITEM_DEPLOYMENT || !it->has_duration;
}

static inline bool lpod_finite(const struct run *r, const struct lpod *l)
{
    return !item_endless(&r->wl->items[inst_at(r, l->inst)->item]);
}

/* Samples a distribution, clamped to >= 0. */
static inline double dist_draw(const struct gp_dist *d, struct gp_rng *rng)
{
    double v = gp_dist_sample(d, rng);
    return v > 0 ? v : 0;
}

/* GPU milli a pod of this template holds. */
static inline int64_t pod_gpu_milli(const struct gp_pod_spec *p)
{
    return (int64_t)p->gpu_count * p->gpu_milli;
}

static inline const struct gp_item *lpod_item(const struct run *r, const struct lpod *l)
{
    return &r->wl->items[inst_at(r, l->inst)->item];
}

/* The work a running pod has done by now. */
static inline double work_now(const struct run *r, const struct lpod *l)
{
    double dt = r->now_s - l->rate_t_s;
    return dt > 0 ? l->work_s + dt * l->rate : l->work_s;
}

static inline double node_price_h(const struct gp_node_spec *n)
{
    double p = n->price_per_hour_usd;
    return p > 0 && isfinite(p) ? p : 0;
}

/* ---- sim.c: the loop, events, shared helpers ----------------------------- */

/* The simulator is done with engine pod epod, which has ended: the engine
 * may free its record (gp_engine_pod_forget). Not for a pod that never ran
 * and was dropped: nofit.c reads those at the end of the run. */
enum gp_err gp_sim_pod_forget(struct run *r, uint32_t epod);

/* What instance ii's pods cost: so far, or once the run's cost is
 * finished, a Deployment's (the jobs' are then in the result). */
double gp_sim_inst_usd(const struct run *r, uint32_t ii);
/* Instance ii's cost is final: a job among the costliest joins r->top. */
void gp_sim_cost_job_done(struct run *r, uint32_t ii);
/* Sets r->diag to "out of memory" and returns GP_ENOMEM. */
enum gp_err gp_sim_nomem(struct run *r);
/* Seeds g from the run's seed, a stream and up to four keys. */
void gp_sim_rng_keyed(struct gp_rng *g, uint64_t seed, enum stream s, uint64_t k1, uint64_t k2,
                      uint64_t k3, uint64_t k4);
/* Pushes an event of `kind` (enum ev_kind) at t_s, and counts it live. */
enum gp_err gp_sim_push_event(struct run *r, double t_s, uint32_t kind, uint32_t a, uint32_t b);
/* Reports the fraction done to the driver's callback, once per percent. */
void gp_sim_progress(struct run *r, double fraction);
/* "source: name" of workload item i, for messages, in buf. */
const char *gp_sim_item_where(const struct gp_item *it, size_t i, char *buf, size_t n);
/* Whether the engine's order stops at a blocked head (fifo, sjf, no backfill). */
bool gp_sim_strict_order(const struct run *r);

/* ---- queues.c ------------------------------------------------------------ */

/* Checks the workload's queues, gives them to the engine (timed mode) and
 * builds the result's queue table. */
enum gp_err gp_sim_queues_plan(struct run *r);
/* The queues' figures at the end of the run. */
enum gp_err gp_sim_queues_finish(struct run *r);

/* ---- jobs.c -------------------------------------------------------------- */

enum gp_err gp_sim_jobs_on_arrival(struct run *r, uint32_t item);
enum gp_err gp_sim_jobs_on_end(struct run *r, uint32_t epod, bool failed);
enum gp_err gp_sim_jobs_on_resubmit(struct run *r, uint32_t lp);
enum gp_err gp_sim_jobs_on_unschedulable(struct run *r, const struct gp_decision *d);
/* A new attempt of logical pod lp enters the engine's queue. */
enum gp_err gp_sim_jobs_attempt_add(struct run *r, uint32_t lp);
/* Takes every unfinished pod of a failed instance out of the engine. */
enum gp_err gp_sim_jobs_fail(struct run *r, uint32_t ii);
/* One more logical pod (a replica) of instance ii, into the engine's
 * queue; its index in *lp. */
enum gp_err gp_sim_jobs_replica_add(struct run *r, uint32_t ii, uint32_t *lp);

/* ---- runs.c -------------------------------------------------------------- */

enum gp_err gp_sim_runs_on_bind(struct run *r, const struct gp_decision *d);
enum gp_err gp_sim_runs_on_evict(struct run *r, const struct gp_decision *d);
/* A running pod stopped by the engine, or (spot) by the driver, who has
 * released it: back to its queue, resuming from its last checkpoint. */
/* Why the driver, not the engine, stopped a pod (gp_sim_runs_evict). */
enum evict_cause { EVICT_BY_ENGINE, EVICT_BY_SPOT, EVICT_BY_EXPIRY };
enum gp_err gp_sim_runs_evict(struct run *r, uint32_t lp, uint8_t reason, uint8_t cause);
/* The accounting of a running pod that stopped (its cost, queue, node). */
enum gp_err gp_sim_runs_unbind(struct run *r, struct lpod *l);
/* Books what a running pod cost from its bind to until_s. */
void gp_sim_runs_cost(struct run *r, struct lpod *l, double until_s);

/* ---- nodes.c ------------------------------------------------------------- */

/* The cluster's topology domains: labels on the nodes the run starts with. */
enum gp_err gp_sim_nodes_topo_init(struct run *r);
/* The nodes the run starts with, into the engine (static: seeded order). */
enum gp_err gp_sim_nodes_add_initial(struct run *r);
/* Timed mode: the pools' rows and templates, a sim node per node. */
enum gp_err gp_sim_nodes_init(struct run *r);
/* Timed mode, at time 0: idle timers, spot interruptions, pool minimums. */
enum gp_err gp_sim_nodes_start(struct run *r);
/* Requests a new node of pool p (in `domain`; NONE: any with room). */
enum gp_err gp_sim_nodes_request(struct run *r, uint32_t p, uint32_t domain);
/* Sim node sni has no pod left: it may be removed after the cool-down. */
void gp_sim_nodes_idle(struct run *r, uint32_t sni);
enum gp_err gp_sim_nodes_on_boot(struct run *r, uint32_t sni);
enum gp_err gp_sim_nodes_on_idle(struct run *r, uint32_t sni, uint32_t token);
enum gp_err gp_sim_nodes_spot_notice(struct run *r, uint32_t sni);
enum gp_err gp_sim_nodes_on_spot_series(struct run *r, uint32_t pool, uint32_t k);
enum gp_err gp_sim_nodes_on_spot_end(struct run *r, uint32_t sni);
/* A node reached its pool's maxNodeLifetime: drained, its pods stopped at
 * once (a forced disruption, as Karpenter expires a node), replaced. */
enum gp_err gp_sim_nodes_on_expire(struct run *r, uint32_t sni);
/* A node's bill closes at end_s: what its pool's billing granularity and
 * minimum add to its time since the request is billed (nodes.c calls it
 * when a node leaves; the run's end for the nodes requested during it). */
void gp_sim_nodes_bill_close(struct run *r, uint32_t sni, double end_s);

/* ---- scale.c ------------------------------------------------------------- */

/* Scale-up for the pods found unschedulable: requests the nodes planned. */
enum gp_err gp_sim_scale_run(struct run *r);
/* Whether instance ii's gang would fit with every pool at its maximum. */
bool gp_sim_scale_gang_fits_max(struct run *r, uint32_t ii);

/* ---- nofit.c ------------------------------------------------------------- */

/* The pods that can never fit, with their reasons, into the result (at
 * the end of a run, either mode). */
enum gp_err gp_sim_nofit_finish(struct run *r);

/* ---- services.c ---------------------------------------------------------- */

/* Timed mode, at time 0: each InferenceService's Deployment found, its
 * autoscaler's first sync scheduled. */
enum gp_err gp_sim_services_start(struct run *r);
/* EV_SERVICE: the load served since the last sync, then the autoscaler. */
enum gp_err gp_sim_services_on_tick(struct run *r, uint32_t svc);
/* At the end (after the samples and the cost): each service's figures. */
enum gp_err gp_sim_services_finish(struct run *r, double end_s);
void gp_sim_services_free(struct run *r);

/* ---- static.c ------------------------------------------------------------ */

/* Tells the engine which request shapes to expect (both modes). */
enum gp_err gp_sim_static_set_target(struct run *r);
/* The static packing experiment. */
enum gp_err gp_sim_static_run(struct run *r);

#endif
