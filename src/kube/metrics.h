/* metrics.h - a small metrics registry (counters, gauges and histograms,
 * each with at most one label whose values form a fixed, bounded set) and
 * its exposition in the Prometheus text format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): a
 * "# HELP" and a "# TYPE" line per metric, label values escaped (\\, \",
 * \n), help text escaped (\\, \n), a histogram as cumulative
 * NAME_bucket{le="..."} lines ending with le="+Inf", then NAME_sum and
 * NAME_count. Values are written as the shortest decimal that reads back
 * as the same double (Go's strconv 'g', -1, as client_golang does), +Inf,
 * -Inf and NaN as Prometheus spells them.
 *
 * Every update and the exposition take the registry's one mutex, so the
 * scheduler's threads update while the HTTP server (httpd.h) reads.
 * Metrics are defined before use; a series (one label value) is made when
 * the metric is defined (fixed values) or on first use, up to the
 * metric's bound, past which the update is refused (never a new series:
 * the set of series, and the memory, stays bounded).
 *
 * The scheduler's own metrics (names, labels, buckets) are defined once,
 * below: gp_kube_metrics_init makes them all. docs/kube.md lists them. */
#ifndef GP_KUBE_METRICS_H
#define GP_KUBE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/sbuf.h"

/* The Content-Type of the exposition. */
#define GP_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define GP_METRICS_MAX_BUCKETS 32  /* upper bounds per histogram (+Inf apart) */
#define GP_METRICS_MAX_SERIES  256 /* label values per metric */

enum gp_metric_type { GP_METRIC_COUNTER, GP_METRIC_GAUGE, GP_METRIC_HISTOGRAM };

/* A metric's definition. name: [a-zA-Z_:][a-zA-Z0-9_:]*; label: NULL for
 * none, else [a-zA-Z_][a-zA-Z0-9_]* not starting with "__" and not "le";
 * values: the label's fixed values (NULL-terminated; NULL: made on first
 * use), each series present from the start with value 0; max_series: the
 * bound on label values (0: the number of fixed values, or 1 without a
 * label; at most GP_METRICS_MAX_SERIES); buckets: a histogram's upper
 * bounds, strictly increasing and finite (+Inf is implied). */
struct gp_metric_def {
    const char *name, *help;
    enum gp_metric_type type;
    const char *label;
    const char *const *values;
    size_t max_series;
    const double *buckets;
    size_t nbuckets;
};

struct gp_metrics;
struct gp_metric;        /* one metric of a registry */
struct gp_metric_series; /* one label value of a metric (or its only series) */

enum gp_err gp_metrics_new(struct gp_metrics **out, struct gp_diag *diag);
void gp_metrics_free(struct gp_metrics *m);

/* Defines a metric (the definition's strings are copied). Errors:
 * GP_EINVALID for a bad name, label, bucket list or bound, or a name
 * already defined (with or without a histogram's _bucket/_sum/_count);
 * GP_ENOMEM. */
enum gp_err gp_metrics_define(struct gp_metrics *m, const struct gp_metric_def *def,
                              struct gp_metric **out, struct gp_diag *diag);

/* The series of label value v (NULL for a metric without a label), made if
 * there is room; NULL when the metric's bound is reached, when the value
 * is not one of its fixed values, or when a label is given to a metric
 * without one (or none to one with). The pointer stays valid as long as
 * the registry. */
struct gp_metric_series *gp_metrics_series(struct gp_metric *metric, const char *v);

/* Updates; a NULL series is ignored (a refused label value costs nothing
 * more). inc: counters and gauges, v >= 0 for counters (a negative or NaN
 * v is ignored: counters only go up); set: gauges; observe: histograms. */
void gp_metrics_inc(struct gp_metric_series *s, double v);
void gp_metrics_set(struct gp_metric_series *s, double v);
void gp_metrics_observe(struct gp_metric_series *s, double v);

/* The value of a counter or gauge series; a histogram's sum. For tests. */
double gp_metrics_value(const struct gp_metric_series *s);
/* A histogram series' count. */
unsigned long long gp_metrics_count(const struct gp_metric_series *s);

/* Appends the exposition of every metric, in the order defined, series in
 * the order made. */
void gp_metrics_expose(struct gp_metrics *m, struct gp_sbuf *out);

/* A double as the exposition writes it: the shortest "%.*g" that reads
 * back as v, "+Inf", "-Inf", "NaN". buf: at least 32 bytes. */
const char *gp_metrics_format_value(double v, char buf[32]);

/* --- the scheduler's metrics ------------------------------------------ */

/* Names (and labels) after kube-scheduler's own where one exists
 * (kubernetes/kubernetes pkg/scheduler/metrics/metrics.go:
 * scheduler_schedule_attempts_total{result}, scheduler_pending_pods{queue},
 * leader_election_master_status). */
#define GP_KM_DECISIONS        "gpuplane_scheduler_decisions_total"
#define GP_KM_SCHEDULING_S     "gpuplane_scheduler_scheduling_duration_seconds"
#define GP_KM_BIND_S           "gpuplane_scheduler_bind_duration_seconds"
#define GP_KM_BIND_FAILURES    "gpuplane_scheduler_bind_failures_total"
#define GP_KM_PREEMPTIONS      "gpuplane_scheduler_preemption_victims_total"
#define GP_KM_PENDING          "gpuplane_scheduler_pending_pods"
#define GP_KM_GPU_ALLOCATED    "gpuplane_scheduler_gpu_allocated"
#define GP_KM_GPU_CAPACITY     "gpuplane_scheduler_gpu_capacity"
#define GP_KM_AUDIT_VIOLATIONS "gpuplane_scheduler_audit_violations_total"
#define GP_KM_LEADER           "gpuplane_scheduler_leader"
#define GP_KM_ALLOC_TIMEOUTS   "gpuplane_scheduler_allocation_timeouts_total"
#define GP_KM_SLOT_WAITING     "gpuplane_scheduler_allocating_slot_waiting_pods"
#define GP_KM_INFORMER_ERRORS  "gpuplane_scheduler_informer_errors_total"
#define GP_KM_CLAIM_PATCHES    "gpuplane_scheduler_claim_patches_total"
#define GP_KM_PREBIND_FAILURES "gpuplane_scheduler_volume_binding_failures_total"
#define GP_KM_EVENTS_LOST      "gpuplane_scheduler_events_lost_total"

/* decisions_total{result}: one per scheduling attempt's outcome. */
enum gp_km_result {
    GP_KM_SCHEDULED,     /* "scheduled": annotated and bound */
    GP_KM_UNSCHEDULABLE, /* "unschedulable": no node fits (PodScheduled=False) */
    GP_KM_ERROR,         /* "error": an API or internal failure; requeued */
    GP_KM_RESULT_COUNT
};

/* bind_failures_total{reason}: a failed annotation patch or Binding. */
enum gp_km_bind_failure {
    GP_KM_BIND_CONFLICT, /* "conflict": 409 (stale resourceVersion, already bound) */
    GP_KM_BIND_REJECTED, /* "rejected": another 4xx (a webhook, 403, 422) */
    GP_KM_BIND_ERROR,    /* "error": 5xx, transport, timeout */
    GP_KM_BIND_FAILURE_COUNT
};

/* pending_pods{queue}: kube-scheduler's queues. */
enum gp_km_queue {
    GP_KM_QUEUE_ACTIVE,        /* "active": waiting for a scheduling attempt */
    GP_KM_QUEUE_BACKOFF,       /* "backoff": failed, waiting its back-off */
    GP_KM_QUEUE_UNSCHEDULABLE, /* "unschedulable": waiting for a change in the cluster */
    GP_KM_QUEUE_COUNT
};

/* audit_violations_total{resource}: what the audit found booked twice. */
enum gp_km_audit {
    GP_KM_AUDIT_GPU,    /* "gpu": a whole GPU (or a replica) given twice */
    GP_KM_AUDIT_MIG,    /* "mig": a MIG slice given twice */
    GP_KM_AUDIT_MEMORY, /* "memory": a GPU's memory over-committed */
    GP_KM_AUDIT_COUNT
};

/* informer_errors_total{resource}: a list or watch that failed (the API
 * not reached, 401/403, 5xx, a drop), by the informer's resource. */
enum gp_km_informer {
    GP_KM_INF_PODS,           /* "pods" */
    GP_KM_INF_NODES,          /* "nodes" */
    GP_KM_INF_PODGROUPS,      /* "podgroups.scheduling.x-k8s.io" */
    GP_KM_INF_VOLCANO,        /* "podgroups.scheduling.volcano.sh" */
    GP_KM_INF_PRIORITIES,     /* "priorityclasses" */
    GP_KM_INF_CONFIGMAP,      /* "configmaps" (gpuplane's own) */
    GP_KM_INF_PDBS,           /* "poddisruptionbudgets" */
    GP_KM_INF_PVCS,           /* "persistentvolumeclaims" */
    GP_KM_INF_PVS,            /* "persistentvolumes" */
    GP_KM_INF_STORAGECLASSES, /* "storageclasses" */
    GP_KM_INF_NAMESPACES,     /* "namespaces" */
    GP_KM_INF_CSINODES,       /* "csinodes" */
    GP_KM_INFORMER_COUNT
};

#define GP_KM_MAX_POOLS 64 /* gpu_allocated{pool} and gpu_capacity{pool} */

extern const char *const gp_km_result_names[GP_KM_RESULT_COUNT + 1];
extern const char *const gp_km_bind_failure_names[GP_KM_BIND_FAILURE_COUNT + 1];
extern const char *const gp_km_queue_names[GP_KM_QUEUE_COUNT + 1];
extern const char *const gp_km_audit_names[GP_KM_AUDIT_COUNT + 1];
extern const char *const gp_km_informer_names[GP_KM_INFORMER_COUNT + 1];
/* The histograms' buckets: 1 ms doubling to 16.384 s (15 bounds). */
extern const double gp_km_duration_buckets_s[15];

/* The scheduler's metrics in a registry of their own. */
struct gp_kube_metrics {
    struct gp_metrics *reg;
    struct gp_metric_series *decisions[GP_KM_RESULT_COUNT];
    struct gp_metric_series *scheduling_s; /* observe: one attempt, queue pop to decision */
    struct gp_metric_series *bind_s; /* observe: annotation patch + Binding, first byte to 201 */
    struct gp_metric_series *bind_failures[GP_KM_BIND_FAILURE_COUNT];
    struct gp_metric_series *preemption_victims;         /* inc: pods deleted for a preemptor */
    struct gp_metric_series *pending[GP_KM_QUEUE_COUNT]; /* set */
    struct gp_metric *gpu_allocated;                     /* {pool}: gp_kube_metrics_pool */
    struct gp_metric *gpu_capacity;                      /* {pool} */
    struct gp_metric_series *audit[GP_KM_AUDIT_COUNT];   /* inc */
    struct gp_metric_series *leader;                     /* set: 1 leader, 0 not */
    struct gp_metric_series *allocation_timeouts; /* inc: pods left allocating (sched_alloc.c) */
    struct gp_metric_series
        *slot_waiting; /* set: pods waiting for their node's slot (sched_slot.c) */
    struct gp_metric_series *informer_errors[GP_KM_INFORMER_COUNT]; /* inc (run.c) */
    struct gp_metric_series *claim_patches;           /* inc: claims given their selected node */
    struct gp_metric_series *volume_binding_failures; /* inc: decisions taken back in PreBind */
    struct gp_metric_series *events_lost;             /* inc: Events not created */
};

enum gp_err gp_kube_metrics_init(struct gp_kube_metrics *km, struct gp_diag *diag);
void gp_kube_metrics_free(struct gp_kube_metrics *km);

/* Sets a pool's allocated and total GPUs (whole GPUs; shares as fractions).
 * False when the pool is past GP_KM_MAX_POOLS (not exported). */
bool gp_kube_metrics_pool(struct gp_kube_metrics *km, const char *pool, double allocated,
                          double capacity);

#endif
