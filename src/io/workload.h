/* workload.h - a workload as the readers produce it: a list of items, each
 * one Kubernetes object (a Pod, a Deployment, a Job) or one trace row, with
 * its pod template and its simulation hints. Readers: Kubernetes manifests
 * with sim.gpuplane.io annotations (manifest.c), the openb pod CSV and the
 * Philly job CSV (openb.c, philly.c). Everything lives in the caller's arena. */
#ifndef GP_IO_WORKLOAD_H
#define GP_IO_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"
#include "engine/queue.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/rng.h"

enum gp_item_kind {
    GP_ITEM_POD,
    GP_ITEM_DEPLOYMENT, /* `replicas` pods that run until the end */
    GP_ITEM_JOB,        /* `completions` successful pods, `parallelism` at a time */
};

/* A random (or fixed) duration in seconds. */
enum gp_dist_kind {
    GP_DIST_FIXED,     /* a */
    GP_DIST_EXP,       /* exponential with mean a */
    GP_DIST_UNIFORM,   /* uniform in [a, b] */
    GP_DIST_LOGNORMAL, /* median a, sigma b (of the underlying normal) */
};

struct gp_dist {
    enum gp_dist_kind kind;
    double a, b;
};

double gp_dist_sample(const struct gp_dist *d, struct gp_rng *r);
/* Parses "30m", "exp(30m)", "uniform(10m,2h)", "lognormal(20m,1.0)". */
bool gp_dist_parse(const char *s, struct gp_dist *out);

struct gp_item {
    const char *name;
    const char *source; /* "file:line" of the object or row, for messages */
    enum gp_item_kind kind;
    struct gp_pod_spec pod; /* the pod template */
    uint32_t replicas;      /* DEPLOYMENT */
    uint32_t completions;   /* JOB */
    uint32_t parallelism;   /* JOB */
    uint32_t backoff_limit; /* JOB: failed pods tolerated; POD: retries (default 0) */
    double arrival_s;       /* first submission, seconds from the start */
    bool has_duration;      /* false: runs until the end of the simulation */
    struct gp_dist duration;
    uint32_t repeat;             /* submissions of this item (a stream); >= 1 */
    struct gp_dist interarrival; /* between submissions when repeat > 1 */
    double failure_prob;         /* each pod run fails with this probability */
    const char *queue;           /* gpuplane.io/queue label; may be NULL */
    /* a gang (PodGroup): each submission's pods are placed all together,
     * at least gang_min of them at once; 0 = not a gang */
    const char *group_name; /* the PodGroup it names; NULL = none */
    uint32_t gang_min;
    const char *topology_key; /* node label the gang's nodes share; NULL = any */
    bool topology_required;   /* else preferred */
    /* a gang placed across more than one value of topology_key runs this
     * many times slower (the PodGroup's gpuplane.io/topology-slowdown;
     * GP_TOPOLOGY_SLOWDOWN by default) */
    double topology_slowdown;
    /* the PodGroup's scheduleTimeoutSeconds: the simulator counts gangs
     * that waited longer for their placement; 0 = none */
    double gang_timeout_s;
    /* the pods that can ever be members at once: the sum over every object
     * naming the PodGroup of the pods it runs at once (gp_workload_finish);
     * below gang_min the gang can never start, as in Kubernetes, where its
     * pods stay pending. 0 = not counted (trace readers) */
    uint32_t gang_members;
    double active_deadline_s;  /* JOB: fails once this long after its submission; 0 = none */
    double failure_rate_per_s; /* each pod run also fails at an exponential time; 0 = none */
    double checkpoint_s;       /* work is saved this often: an evicted pod loses only what
                                * came after; 0 = no checkpoints */
    /* priority, as the API server's Priority admission plugin sets it
     * (gp_workload_finish): the PriorityClass named (NULL: none), whether
     * spec.priority and spec.preemptionPolicy were written, and where each
     * was ("FILE:LINE:COL: PATH", for messages) */
    const char *priority_class;
    const char *priority_class_at, *priority_at, *preemption_at;
    bool has_priority;
    uint8_t preemption; /* spec.preemptionPolicy: 0 unset, GP_PREEMPT_LOWER or GP_PREEMPT_NEVER */
};

/* A PodSpec's or a PriorityClass's preemptionPolicy. */
#define GP_PREEMPT_LOWER 1 /* PreemptLowerPriority, the default */
#define GP_PREEMPT_NEVER 2 /* Never: the pod waits, it never evicts */

/* A PriorityClass (scheduling.k8s.io/v1) the manifests define, or one of
 * the two every cluster has (system-cluster-critical, system-node-critical). */
struct gp_priority_class {
    const char *name;
    const char *source; /* "FILE:LINE" of the object */
    int32_t value;
    bool global_default;
    bool never; /* preemptionPolicy: Never */
};

/* How much slower a gang runs across topology domains (racks, InfiniBand
 * islands) than inside one, when its PodGroup does not say: its traffic
 * then crosses a slower fabric (docs/simulator.md, "Gangs"). */
#define GP_TOPOLOGY_SLOWDOWN 1.25

/* A queue the workload declares (a gpuplane.io Queue, or a Volcano Queue):
 * the engine's spec, with its parent named. */
struct gp_queue_def {
    const char *source;        /* "file:line" of the object */
    const char *parent;        /* the parent queue's name; NULL = top level */
    struct gp_queue_spec spec; /* spec.parent is resolved when the queues are added */
};

/* A PodGroup the manifests declared (scheduler-plugins' or Volcano's):
 * the gang of the objects that name it, in any file. */
struct gp_group_def {
    const char *name;
    const char *source; /* "file:line" of the object */
    const char *queue;  /* Volcano's spec.queue; NULL = none */
    uint32_t min_member;
    uint32_t timeout_s; /* scheduleTimeoutSeconds; 0 = none */
    const char *topology_key;
    bool topology_required;
    double topology_slowdown; /* 0 = the default */
    bool warned;              /* gp_workload_finish said what is wrong with it */
};

/* Model rows a workload can warn about (k8s_model.c checks its table fits). */
#define GP_WORKLOAD_WARN_WORDS 8

/* An object the manifests defined, for finding a second one of the same
 * kind, namespace and name (k8s_schema.c). */
struct gp_k8s_object {
    const char *key;    /* "group/Kind namespace/name", in the arena */
    const char *source; /* "file:line" */
    uint32_t hash;
};

struct gp_service; /* io/service.h */

/* A trace file read for the static mode only (gp_workload.static_only):
 * its rows that ask for the same pod (the same CPU, memory, GPU count, GPU
 * share and GPU models) are one item, the first such row's (its name and
 * "file:line"), whose `repeat` counts the rows; the order of the rows is
 * kept as one item index per row. That is all a static run reads of a
 * trace (the requests, their order, their count: sim/static.c); names,
 * sources and times of the other rows are not kept. */
struct gp_trace {
    size_t first, nitems; /* its items: w->items[first .. first + nitems - 1] */
    uint32_t *row_items;  /* per row, in file order: its item, less first (in the arena) */
    size_t nrows;
};

struct gp_workload {
    struct gp_item *items; /* in the arena */
    size_t nitems, cap;
    /* Set before reading for a static run: trace readers (openb) then keep
     * a gp_trace per file instead of an item per row. Such a workload is
     * for the static mode only (arrivals and durations are checked, not
     * kept). */
    bool static_only;
    struct gp_trace *traces; /* in the arena, in item order */
    size_t ntraces, traces_cap;
    struct gp_queue_def *queues; /* in the arena, in the order they were read */
    size_t nqueues, queues_cap;
    struct gp_priority_class *pclasses; /* in the arena, in the order they were read */
    size_t npclasses, pclasses_cap;
    struct gp_group_def *groups; /* in the arena, in the order they were read */
    size_t ngroups, groups_cap;
    /* What the manifests say and the simulation does not model, one line
     * each ("FILE:LINE: PATH is not simulated; ..."), in the arena, in the
     * order found; the command prints them (docs/FORMATS.md, "Validation"). */
    const char **warnings;
    size_t nwarnings, warnings_cap;
    uint64_t warned[GP_WORKLOAD_WARN_WORDS]; /* model rows already warned about */
    /* every named object read, and an open-addressing index of them */
    struct gp_k8s_object *objects;
    size_t nobjects, objects_cap;
    uint32_t *object_slots; /* object index + 1; 0 = empty */
    size_t nslots;          /* a power of two, or 0 */
    /* inference services (InferenceService objects, io/service.h), in the
     * order read; each names a Deployment among the items */
    struct gp_service *services; /* in the arena */
    size_t nservices, services_cap;
};

/* Appends the items read from arg to w: "PATH" (a YAML/JSON manifest file,
 * or a directory of *.yaml, *.yml, *.json files, read in name order),
 * "openb:PATH" or "philly:PATH". */
enum gp_err gp_workload_load(const char *arg, struct gp_arena *a, struct gp_workload *w,
                             struct gp_diag *diag);

/* The pod budget: the most pods a workload may make, counted before the
 * simulator allocates any (gp_workload_item_pods: replicas, completions
 * or parallelism, plus backoffLimit retries when a pod can fail, times
 * sim.gpuplane.io/repeat). Process-wide; 0 restores the default. hint is
 * added to the message ("--max-pods raises it"). */
#define GP_WORKLOAD_MAX_PODS_DEFAULT 20000000u
void gp_workload_set_max_pods(uint64_t n, const char *hint);
uint64_t gp_workload_item_pods(const struct gp_item *it);
/* GP_EINVALID when w's items make more pods than the budget, naming the
 * item (file:line, kind/name) that crosses it and the count.
 * gp_workload_load checks after each argument (and keeps w as before). */
enum gp_err gp_workload_check_budget(const struct gp_workload *w, struct gp_diag *diag);

/* The file an input argument names: arg less an "openb:" or "philly:"
 * prefix (cluster arguments take the same prefixes). */
const char *gp_workload_arg_path(const char *arg);
/* True if gp_workload_load reads a file of this name in a directory:
 * *.yaml, *.yml, *.json, not hidden. */
bool gp_workload_dir_reads(const char *name);

/* Once every input is read: what refers across files.
 *  - Each item's priorityClassName is resolved to its PriorityClass (or a
 *    built-in one), and it takes the class's value and preemption policy;
 *    an item without one takes the globalDefault class's (when there is
 *    one), else its own spec.priority or 0. Errors as the Priority
 *    admission plugin words them (an unknown class, a spec.priority or
 *    spec.preemptionPolicy that disagrees with the class), naming the
 *    file, line and field.
 *  - Each object that names a PodGroup is joined to it, whatever file
 *    defines it (an object naming one that no file defines is an error);
 *    each gang's members are counted (gang_members), and a warning (in
 *    w->warnings, once per PodGroup) says which PodGroups need more pods
 *    than can ever exist, and which gather the pods of several objects.
 * Idempotent. */
enum gp_err gp_workload_finish(struct gp_workload *w, struct gp_arena *a, struct gp_diag *diag);

/* The readers behind it; each appends to w. A manifest joins the objects
 * read so far to the PodGroups read so far (gp_workload_finish again
 * after the last). */
enum gp_err gp_workload_parse_manifest(const char *text, size_t len, const char *name,
                                       struct gp_arena *a, struct gp_workload *w,
                                       struct gp_diag *diag);
enum gp_err gp_workload_parse_openb(const char *text, size_t len, const char *name,
                                    struct gp_arena *a, struct gp_workload *w,
                                    struct gp_diag *diag);
/* Reads the openb pod list file path as gp_workload_parse_openb reads its
 * text (the same items, traces and errors), in pieces of about 1 MiB that
 * end where a record ends, so that the file's text is not held whole: with
 * w->static_only a large trace costs little more than its rows' order. A
 * pipe or a device, or a file over the input limit, goes through
 * gp_fs_read as before. gp_workload_set_openb_piece sets the piece size
 * (tests; 0: the default). */
enum gp_err gp_workload_read_openb(const char *path, struct gp_arena *a, struct gp_workload *w,
                                   struct gp_diag *diag);
void gp_workload_set_openb_piece(size_t bytes);
enum gp_err gp_workload_parse_philly(const char *text, size_t len, const char *name,
                                     struct gp_arena *a, struct gp_workload *w,
                                     struct gp_diag *diag);

/* Adds a warning line to w (control characters replaced). */
enum gp_err gp_workload_warn(struct gp_workload *w, struct gp_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends one item (copied) to w, growing its array in the arena
 * (gp_arena_grow: pointers into w->items are invalid afterwards). */
enum gp_err gp_workload_append(struct gp_workload *w, struct gp_arena *a,
                               const struct gp_item *item);

#endif
