/* sched.h - `gpuplane schedule`'s core: the engine (the simulator's, the
 * same decisions) driven by the API server's Nodes and Pods, and every
 * decision made durable before it is acted on (docs/kube.md, "The
 * scheduler"):
 *
 *  1. the chosen node and GPUs are patched into the pod's annotations
 *     (objects.h) with the pod's resourceVersion as a precondition;
 *  2. the pod is bound (POST .../pods/NAME/binding, uid and the patched
 *     resourceVersion as preconditions: 201 with a Status);
 *  3. anything else (409, a failed bind, a pod gone) rolls back: the
 *     annotations are cleared, then the engine's assumption released, and
 *     the pod waits out a back-off (1 s doubling to 10 s, kube-scheduler's
 *     podInitialBackoffSeconds and podMaxBackoffSeconds) outside the
 *     engine, so that it never holds up other pods.
 *
 * Pods of other schedulers that are bound count as capacity taken; a pod
 * that fits nowhere gets PodScheduled=False (reason Unschedulable) through
 * /status and a FailedScheduling Event in kube-scheduler's words;
 * preemption deletes the victims gracefully and binds the preemptor once
 * they are gone; a gang's members are bound all or none. State is rebuilt
 * from the API (after a restart, on becoming leader, when a node changes):
 * bound pods where they are bound, at the GPUs their annotations name;
 * half-finished decisions (annotated, not bound) resumed or rolled back;
 * no GPU given twice; every pending pod tried again.
 *
 * The audit (audit.c) checks, on every change, that no GPU, MIG slice or
 * GPU memory is booked twice on a node across all its pods; a violation is counted
 * (gp_kube_sched_stats().audit_violations, for /metrics) and reported as a
 * Warning Event on the node.
 *
 * One thread drives a scheduler: changes (gp_kube_sched_node_change,
 * _pod_change: the informers' callbacks) and cycles. */
#ifndef GP_KUBE_SCHED_H
#define GP_KUBE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/watch.h"
#include "util/err.h"

struct gp_kube_sched_opts {
    const char *scheduler_name; /* pods whose spec.schedulerName is this: "gpuplane" */
    const char *identity;       /* this replica: Events' reportingInstance */
    const char *policy;         /* an engine policy name; NULL: best-fit (gpuplane sim's) */
    double backoff_initial_s;   /* 1 */
    double backoff_max_s;       /* 10 */
    bool bind_events;           /* a Normal "Scheduled" Event per bind (kube-scheduler's) */
    unsigned binders;           /* binder threads gp_kube_run starts (8); 0: binds inline */
    uint64_t seed;
    /* --record: the event log (io/eventlog.h, docs/FORMATS.md) of what
     * reached the engine and what it decided, for `gpuplane sim --replay`;
     * NULL: none. Rotated to FILE.1 at record_max_bytes (0: never). */
    const char *record_path;
    uint64_t record_max_bytes;
    /* a pod of ours bound with gpuplane.io/phase still allocating and not
     * started this long after it was seen so: a Warning AllocationTimeout
     * Event, counted, and its phase written "expired", so that the node
     * agent's protocol no longer counts it (sched_alloc.c; 120; 0: never) */
    double allocating_timeout_s;
    /* how long a pod waits for the claims provisioned for its node
     * (volumes_bind.c; VolumeBindingArgs.bindTimeoutSeconds, 600) */
    double bind_timeout_s;
};

void gp_kube_sched_opts_default(struct gp_kube_sched_opts *o);

/* Counters, kept from the start (for /metrics: docs/kube.md). */
struct gp_kube_sched_stats {
    uint64_t binds;                   /* Bindings answered 201 */
    uint64_t patch_conflicts;         /* annotation patches answered 409 */
    uint64_t bind_failures;           /* Bindings not answered 201 (409 included) */
    uint64_t bind_conflicts;          /* of which 409 */
    uint64_t bind_rejected;           /* of which another 4xx (a webhook, 403, 422) */
    uint64_t bind_errors;             /* of which 5xx or no answer */
    uint64_t rollbacks;               /* decisions taken back */
    uint64_t unschedulable;           /* PodScheduled=False written */
    uint64_t events;                  /* Events created */
    uint64_t evictions;               /* victims deleted for a preemptor */
    uint64_t rebuilds;                /* engine state rebuilt from the API */
    uint64_t resumed;                 /* half-finished decisions bound after a rebuild */
    uint64_t pdb_pods_walked;         /* pods a PodDisruptionBudget's change looked at (pdb.c) */
    uint64_t gang_kept;               /* gang members kept after a failed Binding (bind.c) */
    uint64_t audit_runs;              /* node audits */
    uint64_t audit_violations;        /* nodes found with a GPU or GPU memory booked twice */
    uint64_t audit_gpu, audit_memory; /* of which a GPU, GPU memory */
    uint64_t audit_mig;               /* of which a MIG slice */
    uint64_t allocation_timeouts;     /* pods left allocating past allocating_timeout_s */
    uint64_t pending, waiting_backoff, assumed; /* now (assumed: binds in flight included) */
    uint64_t binds_in_flight;                   /* bind jobs handed to binders, not applied */
    uint64_t unschedulable_now;                 /* pending, and found to fit nowhere */
    /* memory, now: bounded by the pods alive, not every pod seen */
    uint64_t records;          /* pods the scheduler keeps (the API's, not deleted) */
    uint64_t engine_pods_held; /* pod records the engine holds (whole chunks) */
    uint64_t engine_ids_held;  /* engine ids the scheduler maps (whole chunks) */
    uint64_t retired_specs;    /* specs kept for the engine's shapes until the next rebuild */
    uint64_t node_records;     /* nodes the scheduler keeps (the API's, and nodes pods name) */
    uint64_t group_records;    /* PodGroups it keeps (the API's, and deleted ones pods name) */
    /* decided and waiting for their node's allocating slot (one pod
     * allocating per node: sched_slot.c), now */
    uint64_t slot_waiting;
    /* the volume objects kept (volumes.c), now */
    uint64_t volume_claims, volumes, storage_classes;
    /* claims annotated with the node chosen (volumes_bind.c), and the
     * decisions taken back because their claims were not provisioned */
    uint64_t claim_patches, claim_failures;
    /* Events not created: refused or unanswered, or dropped by the Event
     * sender (its queue full, or left when it stopped: events.h) */
    uint64_t events_lost;
};

struct gp_kube_sched;

/* c: the client the scheduler writes with (its own thread's). */
enum gp_err gp_kube_sched_new(struct gp_kube_client *c, const struct gp_kube_sched_opts *o,
                              struct gp_kube_sched **out, struct gp_diag *diag);
void gp_kube_sched_free(struct gp_kube_sched *s);

/* Informer callbacks (gp_kube_change_fn; ctx is the scheduler). */
void gp_kube_sched_node_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                               void *ctx);
void gp_kube_sched_pod_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx);

/* PodGroups (scheduling.x-k8s.io/v1alpha1 or scheduling.volcano.sh/v1beta1:
 * spec.minMember): a pod naming one (label scheduling.x-k8s.io/pod-group
 * or annotation scheduling.k8s.io/group-name, in its namespace) is a gang
 * member, placed with the others all or none; until its PodGroup is seen
 * it waits. A changed minMember takes effect at the next rebuild. */
void gp_kube_sched_group_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                                void *ctx);

/* PriorityClasses (scheduling.k8s.io/v1, priority.h): a pod without
 * spec.priority (which the API's admission fills) gets its class's value
 * and preemptionPolicy, or the globalDefault class's, when it is read; a
 * class applies to pods read after it arrived (gpuplane schedule lists
 * the classes before the pods), as in Kubernetes, where a class changed
 * later changes no existing pod's priority. */
void gp_kube_sched_priority_change(enum gp_kube_event_type type, const json_t *obj,
                                   const json_t *old, void *ctx);

/* PodDisruptionBudgets (policy/v1, pdb.c): preemption takes a victim
 * that would break one (its budget's status.disruptionsAllowed used up)
 * only after every other, as kube-scheduler's DefaultPreemption prefers
 * the candidates violating fewer budgets. */
void gp_kube_sched_pdb_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx);

/* PersistentVolumeClaims, PersistentVolumes (core/v1) and StorageClasses
 * (storage.k8s.io/v1), volumes.c: kept as kube-scheduler's VolumeBinding
 * and VolumeZone read them (docs/kube.md, "Volumes"). */
void gp_kube_sched_pvc_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                              void *ctx);
void gp_kube_sched_pv_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx);
void gp_kube_sched_sc_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old,
                             void *ctx);
/* CSINodes (storage.k8s.io/v1), volumes_limits.c: each node's CSI volume
 * limits, as kube-scheduler's NodeVolumeLimits reads them (docs/kube.md,
 * "CSI volume limits"). */
void gp_kube_sched_csinode_change(enum gp_kube_event_type type, const json_t *obj,
                                  const json_t *old, void *ctx);
/* Namespaces (namespaces.c): their labels, which a pod affinity term's
 * namespaceSelector selects by, given to the engine (gp_engine_namespace_set)
 * when they change. */
void gp_kube_sched_namespace_change(enum gp_kube_event_type type, const json_t *obj,
                                    const json_t *old, void *ctx);

/* Leadership (lease.c decides): only a leader writes. Becoming leader
 * rebuilds the state from what the informers delivered. */
void gp_kube_sched_set_leader(struct gp_kube_sched *s, bool leader);
/* The same, leading only until until_s (CLOCK_MONOTONIC seconds: the
 * Lease's renew deadline, gp_kube_lease_deadline): past it nothing more
 * is written - a binder checks it before each patch and Binding, a cycle
 * gives the leadership up - until leadership is set again. */
void gp_kube_sched_set_leader_until(struct gp_kube_sched *s, bool leader, double until_s);
/* The renew deadline moved to until_s (-INFINITY: leadership lost) by the
 * Lease's own thread while the scheduling thread may be in a cycle: what
 * the binders and the cycle's own writes check (gp_ks_leading) changes at
 * once; leadership itself (becoming leader, the rebuild) changes only by
 * gp_kube_sched_set_leader_until on the scheduling thread. Thread-safe;
 * the caller serializes it with its set_leader_until calls. */
void gp_kube_sched_lead_until(struct gp_kube_sched *s, double until_s);
/* When (CLOCK_MONOTONIC seconds) the scheduling thread last sent a
 * write of a cycle (a pod's status, an Event, an eviction): a cycle that
 * is long but moving; 0 before the first. Thread-safe (/healthz). */
double gp_kube_sched_beat_s(const struct gp_kube_sched *s);

/* One cycle at now_s (a monotonic clock): the state rebuilt if it must
 * be, pods whose back-off ended back in the queue, the engine's decisions
 * written. Returns the number of pods bound; GP_OK unless the state cannot
 * be kept (out of memory). Request failures are handled (rolled back and
 * retried), not returned. */
enum gp_err gp_kube_sched_cycle(struct gp_kube_sched *s, double now_s, size_t *bound,
                                struct gp_diag *diag);

/* Binding in parallel: n binder threads, binder i writing on cs[i] (the
 * caller's, one per thread, kept until the binders stop). From then on a
 * cycle hands its decisions to them and returns; their results are
 * applied by the next cycle (wake(wake_ctx) is called, from a binder
 * thread, when one is ready). Only the scheduling thread touches the
 * engine. Without binders a cycle writes its decisions itself. */
enum gp_err gp_kube_sched_start_binders(struct gp_kube_sched *s, struct gp_kube_client *const *cs,
                                        size_t n, void (*wake)(void *), void *wake_ctx,
                                        struct gp_diag *diag);
/* Stops the binders (gp_kube_sched_free does too); decisions they had
 * not finished are left half-finished for a leader's rebuild. */
void gp_kube_sched_stop_binders(struct gp_kube_sched *s);
/* Whether binders' results wait to be applied (by a cycle). */
bool gp_kube_sched_results_ready(struct gp_kube_sched *s);
/* Waits for every bind in flight and applies the results (the pods bound
 * added to *bound). */
void gp_kube_sched_wait_binds(struct gp_kube_sched *s, size_t *bound);

/* The earliest time a pod's back-off ends, or INFINITY. */
double gp_kube_sched_next_retry_s(const struct gp_kube_sched *s);

struct gp_kube_sched_stats gp_kube_sched_stats(const struct gp_kube_sched *s);
/* stats' binds and binds_in_flight alone, without its walk over every pod
 * (for a loop that asks on every turn). */
void gp_kube_sched_progress(const struct gp_kube_sched *s, uint64_t *binds, uint64_t *in_flight);

struct gp_kube_events;
/* Events sent by q (events.h; borrowed, set before the binders start):
 * queued and sent off the decisions' path. Without one they are sent
 * inline, each on the thread that makes it. Set again (NULL: inline) only
 * with the binders stopped and the sender before stopped
 * (gp_kube_events_stop): its losses stay counted in the stats. */
void gp_kube_sched_set_events(struct gp_kube_sched *s, struct gp_kube_events *q);

struct gp_kube_metrics;
/* The metrics (metrics.h) the scheduler keeps: bind latency as it binds;
 * gp_kube_sched_metrics brings the counters and gauges up to date (after
 * a cycle). km stays the caller's. */
void gp_kube_sched_set_metrics(struct gp_kube_sched *s, struct gp_kube_metrics *km);
void gp_kube_sched_metrics(struct gp_kube_sched *s);

/* Audits every node now (the tests' check; changes audit their nodes on
 * their own). Returns the number of nodes in violation. */
size_t gp_kube_sched_audit_all(struct gp_kube_sched *s);

/* The last violation found, as one line ("" when none). */
const char *gp_kube_sched_audit_last(const struct gp_kube_sched *s);

#endif
