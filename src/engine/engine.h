/* engine.h - the scheduler. Pure: no I/O, no clock, no threads, no
 * globals. A driver (the simulator, or the Kubernetes world) tells it what
 * happened (nodes and pods come and go) and asks it to schedule; it answers
 * with decisions. The same sequence of calls always gives the same decisions.
 *
 * Cycle (gp_engine_schedule): pending pods in queue order (the queue with
 * the lowest weighted dominant share first; inside a queue priority, then
 * age) -> the queue's quota -> filter every node (state, selector, taints,
 * GPU model, cpu, memory, GPUs, per-model quota) -> score the feasible
 * nodes with the policy -> the best node wins (ties: lowest node id) and
 * the policy's choice of GPUs inside it -> commit. A pod that fits nowhere
 * may evict others (preemption inside its queue, reclaim of its queue's
 * guarantee); otherwise it gets an explanation, and is not tried again
 * until the cluster changes (a release or a node added). */
#ifndef GP_ENGINE_ENGINE_H
#define GP_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "engine/queue.h"
#include "util/err.h"
#include "util/rng.h"

struct gp_engine;

/* A placement policy: an ops struct. score() is called for every node that
 * passed the filters; the highest score wins. It also chooses the GPUs
 * inside the node (gp_engine_pick_default() is the usual answer). It may
 * read the whole cluster through the engine (e.g. FGD's fragmentation).
 * on_bind/on_release let a policy keep incremental state; both may be NULL. */
struct gp_policy_ops {
    const char *name;
    const char *summary;                            /* one line for --help */
    int (*init)(struct gp_engine *e, void **state); /* may be NULL */
    void (*destroy)(void *state);                   /* may be NULL */
    double (*score)(void *state, const struct gp_engine *e, const struct gp_node *node,
                    const struct gp_pod *pod, struct gp_pick *pick);
    void (*on_bind)(void *state, const struct gp_engine *e, const struct gp_node *node,
                    const struct gp_pod *pod);
    void (*on_release)(void *state, const struct gp_engine *e, const struct gp_node *node,
                       const struct gp_pod *pod);
    /* score() and its pick depend only on the node's own state, the pod's
     * request shape and the target - nothing else in the cluster, no random
     * draw - and on_bind/on_release change nothing another node's score
     * reads. Lets the engine keep a gang's scores between members alike and
     * rescore only the node the last member went to; the decisions are the
     * same either way. */
    bool node_local;
};

/* The registry of built-in policies, NULL-terminated. */
extern const struct gp_policy_ops *const gp_policies[];
const struct gp_policy_ops *gp_policy_find(const char *name);

enum gp_decision_kind {
    GP_DECISION_BIND,
    GP_DECISION_UNSCHEDULABLE,
    GP_DECISION_EVICT, /* a bound pod is stopped to make room for `by` */
};

/* Why a pod was evicted (EVICT decisions). */
enum gp_evict_reason {
    GP_EVICT_NONE,
    GP_EVICT_PREEMPTED, /* by a higher-priority pod of its own queue */
    GP_EVICT_RECLAIMED, /* by a queue taking back its guaranteed quota */
};

/* "No queue" in a decision's quota_queue. */
#define GP_QUEUE_NONE UINT32_MAX

/* Why a gang member was not placed (UNSCHEDULABLE decisions). */
enum gp_gang_wait {
    GP_GANG_NONE,       /* not a gang member, or a member placed on its own */
    GP_GANG_MEMBERS,    /* fewer members submitted than min_member */
    GP_GANG_NO_ROOM,    /* the members do not all fit now; nothing is held */
    GP_GANG_NEVER_FITS, /* they could not fit even the empty cluster */
};

/* An EVICT comes before the BIND (or the gang's BINDs) it makes room for,
 * in the same gp_engine_schedule answer; the evicted pod has left the
 * engine (as after gp_engine_pod_finished) and its resources are free. */
struct gp_decision {
    enum gp_decision_kind kind;
    uint32_t pod;
    uint32_t node;             /* BIND; EVICT: where it ran */
    struct gp_pick pick;       /* BIND; EVICT: the GPUs it had */
    uint8_t evict;             /* EVICT: an enum gp_evict_reason */
    struct gp_explain explain; /* UNSCHEDULABLE (a BIND's counts are 0) */
    enum gp_gang_wait gang;    /* UNSCHEDULABLE */
    union {
        /* UNSCHEDULABLE because its queue (or an ancestor) has no quota
         * left for it: that queue, and every node is counted under
         * GP_FILTER_QUOTA; GP_QUEUE_NONE otherwise */
        uint32_t quota_queue;
        uint32_t by; /* EVICT: the pod it makes room for */
    };
};

/* A gang (a PodGroup): its pods are placed all together or not at all. At
 * least min_member of them must be bound at once; members placed beyond
 * that join one by one. With a topology key, members go to nodes that share
 * one value of that node label (a rack, an InfiniBand domain): required
 * (late members too join the running gang's domain), or preferred (tried
 * first, then anywhere). */
struct gp_group_spec {
    const char *name;
    uint32_t min_member;
    const char *topology_key; /* NULL: no topology constraint */
    bool topology_required;
};

/* Registers a gang; ids start at 1 (0 in a pod spec means "no gang"). */
enum gp_err gp_engine_group_add(struct gp_engine *e, const struct gp_group_spec *spec,
                                uint32_t *out_id);
/* The driver will add no more members to the gang: the engine frees it
 * once every member it has is forgotten (gp_engine_pod_forget); from then
 * on a pod that names it is refused (GP_EINVALID), and so is a second
 * call. Gang ids are not reused. */
enum gp_err gp_engine_group_forget(struct gp_engine *e, uint32_t group);
/* Bound members of a gang now. */
uint32_t gp_engine_group_bound(const struct gp_engine *e, uint32_t group);

/* Queues (queue.h). Queue 0 is the default queue, named "default": a
 * top-level queue with no quota whose pods never preempt one another.
 * Declares a queue, or - when a queue of that name exists - changes its
 * quota, weight and preemption rules (its parent must stay the same);
 * "default" changes queue 0. Ids are dense; a parent (spec->parent, 0 =
 * top level) is declared before its children. A change lets pods that
 * waited try again; lowering a quota below its use evicts nothing. */
enum gp_err gp_engine_queue_set(struct gp_engine *e, const struct gp_queue_spec *spec,
                                uint32_t *out_id);
size_t gp_engine_queue_count(const struct gp_engine *e);
/* The queue's spec as set (strings borrowed from the caller); NULL if none. */
const struct gp_queue_spec *gp_engine_queue_spec(const struct gp_engine *e, uint32_t id);
/* Parent id of a queue; GP_QUEUE_NONE for a top-level queue or a bad id. */
uint32_t gp_engine_queue_parent(const struct gp_engine *e, uint32_t id);

/* What a queue and its descendants use now. */
struct gp_queue_usage {
    int64_t gpu_milli, cpu_milli, mem_mib;
    uint32_t pods_bound;   /* this queue's own pods, bound */
    uint32_t pods_pending; /* this queue's own pods, pending */
};
enum gp_err gp_engine_queue_usage(const struct gp_engine *e, uint32_t id,
                                  struct gp_queue_usage *out);
/* GPU milli of model `model` (an index of the model table) used by a queue
 * and its descendants. */
int64_t gp_engine_queue_model_used(const struct gp_engine *e, uint32_t id, uint32_t model);

/* The order in which a cycle tries pending pods (docs/ARCHITECTURE.md,
 * "Queue orders and backfill"): FAIR is the default (queues by weighted
 * dominant share; inside a queue priority, then age); FIFO tries the
 * oldest pending pod of the cluster first; SJF the one with the shortest
 * duration hint (unknown hints last, then age). Without backfill, under
 * FIFO and SJF a pod that does not fit for lack of room stops the cycle
 * for the pods behind it (the head of the line blocks), while FAIR skips
 * it and goes on (greedy, as always). With backfill, in every order, the
 * first such pod reserves the room it will get (EASY: from the bound
 * pods' bind times and duration hints) and later pods go only when they
 * do not delay it. A pod stopped by a cap holds up only its capped
 * queue's subtree; one that can never fit holds up nothing. */
enum gp_order {
    GP_ORDER_FAIR = 0,
    GP_ORDER_FIFO,
    GP_ORDER_SJF,
};
/* Sets the order (before the first pod is added; GP_ESTATE after). */
enum gp_err gp_engine_set_order(struct gp_engine *e, enum gp_order order, bool backfill);

/* The engine's indexes, both on by default (tests and benchmarks turn
 * them off to compare):
 *  - nodes: the node index, per request shape a ranking of the nodes kept
 *    from one decision to the next; off, every decision scans every node.
 *    The decisions are the same either way.
 *  - pending: a fair cycle (no backfill, budget or preemption) walks the
 *    pending pods of queues without caps by request shape: once a pod of a
 *    shape fails, the shape's pods that already had a decision are not
 *    tried again in that cycle nor until the cluster's capacity grows, and
 *    get no new decision (it would be the same); off, every pending pod is
 *    visited and gets one. Under backfill likewise a pod that had its
 *    decision, of a shape that failed at this generation, gets none again,
 *    and a FIFO cycle in which nothing changed since the last one starts
 *    where that one ended. The binds and each pod's first decision are
 *    the same either way.
 * May be changed at any time. */
void gp_engine_set_index(struct gp_engine *e, bool nodes, bool pending);

/* Creates an engine with a policy and a seed (for policies that draw random
 * numbers). Returns NULL when out of memory or when the policy's init fails. */
struct gp_engine *gp_engine_new(const struct gp_policy_ops *policy, uint64_t seed);
void gp_engine_free(struct gp_engine *e);

/* Nodes. ids are dense and never reused. */
enum gp_err gp_engine_node_add(struct gp_engine *e, const struct gp_node_spec *spec,
                               uint32_t *out_id);
/* The node's pods must have been released first (GP_ESTATE otherwise). */
enum gp_err gp_engine_node_remove(struct gp_engine *e, uint32_t node);
/* A ready node stops taking pods (cordoned: a spot notice, a scale-down);
 * its pods keep running until the driver stops them. GP_EINVALID unless
 * the node is ready. */
enum gp_err gp_engine_node_drain(struct gp_engine *e, uint32_t node);

/* Hypothetical nodes, for an autoscaler that asks "would these pods fit
 * on a new node of this pool?" with the engine's own rules. probe fills
 * *out with an empty ready node of the spec that is not in the cluster
 * (id UINT32_MAX); take tries one pod on a node value (a probe or a copy
 * of a cluster node): the node filters without quotas and the default
 * choice of GPUs; when it fits, the pod's resources are taken from *n and
 * it returns true. Neither changes the cluster. */
enum gp_err gp_engine_node_probe(struct gp_engine *e, const struct gp_node_spec *spec,
                                 struct gp_node *out);
bool gp_engine_node_take(const struct gp_engine *e, struct gp_node *n, const struct gp_pod *p);

/* Pods enter their queue's pending list. ids are dense and never reused.
 * GP_EINVALID for an unknown queue or gang, or a gang member in another
 * queue than the gang's first member.
 *
 * Ownership and lifetime: the engine copies the spec (its strings and
 * arrays stay the caller's, and must outlive the pod's record). A pod that
 * has ended - finished or dropped (gp_engine_pod_finished) or evicted (an
 * EVICT decision) - keeps its record until the driver forgets it
 * (gp_engine_pod_forget). */
enum gp_err gp_engine_pod_add(struct gp_engine *e, const struct gp_pod_spec *spec, double now_s,
                              uint32_t *out_id);
/* A bound pod finished (or failed, or was stopped by the driver): its
 * resources are released and it leaves the engine. A pending pod is simply
 * dropped. (A pod the engine evicted has already left: GP_ESTATE.) */
enum gp_err gp_engine_pod_finished(struct gp_engine *e, uint32_t pod);
/* The driver is done with an ended pod (GP_ESTATE if it has not ended,
 * GP_EINVALID for an unknown or forgotten id): the engine frees what it
 * holds of it at the start of the next gp_engine_schedule, after which
 * gp_engine_pod returns NULL for its id (which is never reused) and
 * gp_engine_pod_finished says GP_ESTATE. Its gang's member list drops it
 * too. Until then the record stays readable. An engine whose driver
 * forgets every pod it is done with - the simulator does, and a live
 * scheduler that runs for months must - holds memory for the pods alive
 * at once, not for every pod it has seen (internal.h, "the pods'
 * storage"). */
enum gp_err gp_engine_pod_forget(struct gp_engine *e, uint32_t pod);

/* One scheduling cycle at time now_s: tries up to `budget` pending pods (0 =
 * all) in queue order, appends a decision per tried pod to out, preceded
 * by the EVICT decisions that made room for it, and returns the number of
 * decisions written (at most cap: room for one per pending pod plus one
 * per bound pod is always enough). Binds and evictions are committed when
 * this returns. now_s must not go back in time; it dates binds, for the
 * queues' minimum runtime before eviction. */
size_t gp_engine_schedule(struct gp_engine *e, double now_s, size_t budget, struct gp_decision *out,
                          size_t cap);

/* When a driver with nothing else to tell the engine should still run a
 * cycle: the earliest time after the last cycle's now_s at which a bound
 * pod becomes evictable (it has run, and its queue's minimum runtime)
 * while pods that may evict wait. INFINITY when there is no such time. */
double gp_engine_next_wake_s(const struct gp_engine *e);

/* Why the driver filter rejects nodes for pod: "node(s) had driver 525.60
 * < 535.54 needed by CUDA 12.2", kube-scheduler's words with the numbers
 * (the node drivers it rejects, "drivers 525.60 to 530.30" when they
 * differ; the patch too when major.minor alike). Returns how many nodes it
 * rejects for that (0: none, buf empty). */
size_t gp_engine_explain_driver(const struct gp_engine *e, uint32_t pod, char *buf, size_t size);

/* Tries to place one pod now, outside the queue order (the static packing
 * experiment). Returns 1 with a BIND or UNSCHEDULABLE decision in *out. */
enum gp_err gp_engine_schedule_pod(struct gp_engine *e, uint32_t pod, struct gp_decision *out);
/* The same for a gang: one attempt at its pending members now, outside
 * the queue order, all or nothing as a cycle places it (at least the
 * members still needed bound at once, else none), without preemption.
 * With backfill, while the head the last cycle reserved room for is still
 * pending, the gang is held back as a pod behind that head is (the
 * reservation made for the state now; UNSCHEDULABLE, GP_GANG_NO_ROOM).
 * Writes a BIND or UNSCHEDULABLE decision per pending member to out and
 * returns their number; 0 with nothing changed when the group is unknown,
 * has no pending member or more than cap. */
size_t gp_engine_schedule_group(struct gp_engine *e, uint32_t group, struct gp_decision *out,
                                size_t cap);

/* Binds a pending pod where the driver says (a pod another scheduler
 * placed, or one gpuplane bound before a restart): on `node` with `pick`,
 * or NULL for the default choice of GPUs. Only the GPUs are checked (cpu
 * and memory may go below zero: the kubelet admitted it): on a node that
 * shares its GPUs, by its sharing's rules (a free replica or MPS client
 * on each named GPU, its memory and limits; free MIG instances of the
 * pod's profile: gp_share_pick_named), else free shares of distinct GPUs.
 * The named GPUs are booked, never another choice. GP_ESTATE unless the
 * pod is pending and the node exists; GP_ELIMIT when the GPUs named (or
 * any GPUs) are not free or a GPU is named twice: nothing changes then. */
enum gp_err gp_engine_pod_assign(struct gp_engine *e, uint32_t pod, uint32_t node,
                                 const struct gp_pick *pick);

/* Read-only views for drivers and policies. */
size_t gp_engine_node_count(const struct gp_engine *e);
const struct gp_node *gp_engine_node(const struct gp_engine *e, uint32_t id);
/* A namespace's labels (its Namespace's metadata.labels), which a pod
 * affinity term's namespaceSelector selects by (kube-scheduler's
 * InterPodAffinity: the Namespace objects' labels). Copied. Once any
 * namespace was given, one never given (or deleted) has no labels, as
 * kube-scheduler's GetNamespaceLabelsSnapshot of a namespace it cannot
 * find; before (the simulator), each namespace has the one label the API
 * server sets on every one, kubernetes.io/metadata.name. A change re-counts
 * only what terms with a namespaceSelector count of that namespace's bound
 * pods, nothing when the labels are as they were (namespaces.c), and the
 * pending pods are tried again. GP_EINVALID: no name, a NULL key or value;
 * delete: GP_ENOTFOUND when not given. */
enum gp_err gp_engine_namespace_set(struct gp_engine *e, const char *name,
                                    const struct gp_kv *labels, size_t nlabels);
enum gp_err gp_engine_namespace_delete(struct gp_engine *e, const char *name);
/* Pod ids issued so far (every pod ever added, forgotten ones too). */
size_t gp_engine_pod_count(const struct gp_engine *e);
/* NULL for an id never issued or a pod forgotten (see gp_engine_pod_add). */
const struct gp_pod *gp_engine_pod(const struct gp_engine *e, uint32_t id);
/* Pod records the engine holds memory for now (whole chunks of them):
 * bounded by the pods alive at once, for tests and benchmarks. */
size_t gp_engine_pods_held(const struct gp_engine *e);
/* Whether evicting the pod would break a PodDisruptionBudget: preemption
 * takes such victims last and reprieves them first (preempt.c, as
 * kube-scheduler's DefaultPreemption prefers candidates violating fewer
 * PDBs). Nothing for an id not alive. */
void gp_engine_pod_set_pdb_violating(struct gp_engine *e, uint32_t id, bool violating);
/* PodDisruptionBudgets counted per budget, as kube-scheduler's
 * filterPodsWithPDBViolation (plugins/defaultpreemption/
 * default_preemption.go): budget `pdb` (a small id the driver chooses)
 * allows `allowed` disruptions now (status.disruptionsAllowed); a pod's
 * budgets are those a disruption of it counts against (its namespace's,
 * selector matching, the pod not in status.disruptedPods). On each node
 * the candidate victims, the most important first, take one from each of
 * their budgets; a victim whose budget goes below zero violates it. */
enum gp_err gp_engine_pdb_set(struct gp_engine *e, uint32_t pdb, int32_t allowed);
/* n 0: none. GP_EINVALID for a pod not alive. */
enum gp_err gp_engine_pod_set_pdbs(struct gp_engine *e, uint32_t id, const uint32_t *pdbs,
                                   size_t n);
/* When a bound pod was bound (the now_s of that cycle); -1 if not bound. */
double gp_engine_pod_bound_at(const struct gp_engine *e, uint32_t id);
size_t gp_engine_pending_count(const struct gp_engine *e);
/* The pending pods in the engine's order: under FIFO and SJF the one list
 * a cycle walks; under FAIR each queue's pods in its order, queue after
 * queue by id (a cycle serves queues by share). Writes up to cap ids to
 * out; returns how many pods are pending. */
size_t gp_engine_pending(const struct gp_engine *e, uint32_t *out, size_t cap);
/* Interned GPU model names; a node's `model` indexes this table. */
size_t gp_engine_model_count(const struct gp_engine *e);
const char *gp_engine_model_name(const struct gp_engine *e, uint32_t model);
/* The engine's generator, for policies that draw random numbers. */
struct gp_rng *gp_engine_rng(const struct gp_engine *e);
const struct gp_policy_ops *gp_engine_policy(const struct gp_engine *e);

/* The target workload: the mix of request shapes the cluster is expected to
 * receive, for policies that plan for it (FGD's fragmentation measure). */
struct gp_shape {
    int64_t cpu_milli;
    uint32_t gpu_count;
    uint32_t gpu_milli;  /* per GPU; 0 when gpu_count is 0 */
    uint64_t model_mask; /* allowed GPU models, as pod->model_mask */
    double weight;       /* share of pods; the weights sum to 1 */
};

/* Sets the target from pod specs, specs[i] standing for counts[i] pods:
 * the distinct shapes (cpu, GPU count, GPU share, allowed models), most
 * popular first, keeping the fewest that cover `coverage` (0..1] of all
 * pods, reweighted to sum to 1 - FGD's "typical pods". Replaces any earlier
 * target and bumps the target version. */
enum gp_err gp_engine_set_target(struct gp_engine *e, const struct gp_pod_spec *specs,
                                 const uint32_t *counts, size_t n, double coverage);
/* The target's shapes (NULL, 0 when none is set) and its version, which
 * changes whenever the target does. */
const struct gp_shape *gp_engine_target(const struct gp_engine *e, size_t *n, uint64_t *version);

/* Cluster totals, kept incrementally. */
struct gp_engine_totals {
    uint32_t nodes_ready;
    uint64_t gpus;
    uint64_t gpu_milli_total, gpu_milli_alloc;
    int64_t cpu_milli_total, cpu_milli_alloc;
    int64_t mem_mib_total, mem_mib_alloc;
    uint64_t pods_bound;
};
void gp_engine_totals(const struct gp_engine *e, struct gp_engine_totals *out);

/* Filters: the first filter that rejects node for pod, or GP_FILTER_COUNT
 * when the pod fits. Exposed for tests and for drivers that explain. */
enum gp_filter gp_engine_filter(const struct gp_engine *e, const struct gp_node *node,
                                const struct gp_pod *pod);

/* The filters that depend on the node and the pod alone - all of them
 * but kube-scheduler's PodTopologySpread and InterPodAffinity, which read
 * the other pods - and gp_engine_node_take with those: whether a pod
 * could ever fit a node whatever else runs (the simulator's "can never
 * fit"). */
enum gp_filter gp_engine_filter_alone(const struct gp_engine *e, const struct gp_node *node,
                                      const struct gp_pod *pod);
bool gp_engine_node_take_alone(const struct gp_engine *e, struct gp_node *n,
                               const struct gp_pod *p);

/* Placement statistics since the engine was made: the placements tried
 * (one pod each) and the nodes they looked at - a node's filters run by
 * a scan, a ranking's fill or replay, or an explanation's count (the node
 * index, DESIGN.md section 4, keeps the second well under the first times
 * the nodes). Either pointer may be NULL. */
void gp_engine_place_stats(const struct gp_engine *e, uint64_t *places, uint64_t *nodes_visited);

/* The default choice of GPUs inside a feasible node: for a share, the
 * fullest GPU it still fits on (best fit, lowest index on ties); for whole
 * GPUs, the lowest-indexed free ones. Returns 0, or -1 if it does not fit. */
int gp_engine_pick_default(const struct gp_node *node, const struct gp_pod *pod,
                           struct gp_pick *pick);

#endif
