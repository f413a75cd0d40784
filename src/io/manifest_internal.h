/* manifest_internal.h - what the parts of the Kubernetes manifest reader
 * share; internal to src/io, the public interface is
 * gp_workload_parse_manifest in io/workload.h.
 *
 *   manifest.c          the document loop, dispatch by kind (List, Queue,
 *                       PodGroup, the workload kinds), the gangs joined to
 *                       their PodGroups; the helpers below
 *   manifest_meta.c     metadata: labels and gpuplane/sim annotations
 *                       (struct manifest_hints)
 *   manifest_pod.c      the pod spec: containers, resources, node selector,
 *                       tolerations, and the pod built from them
 *   manifest_affinity.c the pod spec's affinity and topology spread
 *                       constraints
 *   manifest_workload.c Pod, Deployment and Job: the kinds table, pod
 *                       templates, the item built from one object
 *   manifest_group.c    PodGroup and Queue (gpuplane's or Volcano's)
 *   manifest_priority.c PriorityClass, and the priority pods take from it
 *   manifest_gang.c     objects joined to their PodGroups (in any file),
 *                       members counted, gp_workload_finish
 *
 * The parts share the object being read (struct manifest_obj: what
 * metadata and the pod spec said, before it becomes a gp_item) and the
 * stream's state (struct manifest_stream: the workload read into).
 * Adding a pod spec field: a member in struct manifest_obj, a row in
 * manifest_pod.c's pod_spec_fields, and its effect on the pod in
 * gp_manifest_pod_finish. */
#ifndef GP_IO_MANIFEST_INTERNAL_H
#define GP_IO_MANIFEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/podreq.h"
#include "io/workload.h"
#include "io/yaml_walk.h"

#define GP_MANIFEST_INT32_LIMIT 2147483647.0

/* The gpuplane and simulation annotations of one metadata block. */
struct manifest_hints {
    bool has_arrival, has_duration, has_repeat, has_interarrival, has_failure, has_retries;
    bool has_gpu_milli, has_gpu_mem, has_models, has_failure_rate, has_checkpoint, has_sharing;
    bool has_cuda;
    double arrival_s, failure_rate_per_s, checkpoint_s;
    struct gp_dist duration, interarrival;
    uint32_t repeat, retries, gpu_milli, gpu_mem_mib;
    uint8_t share_modes; /* gpuplane.io/sharing: bits 1 << enum gp_share_mode */
    /* gpuplane.io/cuda: the oldest driver its CUDA runs on (io/compat.h
     * code) and the version as written */
    uint32_t cuda_driver_min;
    const char *cuda;
    double failure_prob;
    const char *const *models;
    size_t nmodels;
    /* where each was written, for errors found when they are combined */
    const char *retries_path, *milli_path, *models_path, *sharing_path, *cuda_path;
    struct fy_node *retries_node, *milli_node, *models_node, *sharing_node, *cuda_node;
};

/* A term's or a spread constraint's matchLabelKeys and mismatchLabelKeys:
 * merged into its selector once the pod's labels are known. */
struct manifest_label_keys {
    struct gp_label_selector *sel; /* in the arena */
    const char *const *match, *const *mismatch;
    size_t nmatch, nmismatch;
};

/* One object being read. level 0 is the object's metadata, 1 the pod
 * template's; what the template says wins. */
struct manifest_obj {
    struct gp_workload *w;
    struct gp_item item;
    int level;
    struct manifest_hints h[2];
    /* the queue named by gpuplane.io/queue, by Kueue's label and by
     * Volcano's annotation, in that order of precedence */
    const char *queue[2], *kueue[2], *vqueue[2];
    const char *group[2]; /* the PodGroup named by a label or annotation */
    uint32_t deadline_s;  /* Job spec.activeDeadlineSeconds; 0 = none */
    /* the pod spec's request as Kubernetes computes it (io/podreq.h:
     * app containers and sidecars summed, init containers' needs with the
     * sidecars before them), cpu, memory, nvidia.com/gpu, gpu.shared and
     * MIG instances; the overhead */
    struct gp_podreq req;
    int64_t over_cpu_milli, over_mem_mib;
    struct fy_node *gpu_node; /* the last nvidia.com/gpu seen, for errors */
    const char *gpu_path;
    /* the MIG profile of the instances (one per pod); where the last
     * shared replica and MIG instance request was written */
    const char *mig_profile;
    struct fy_node *shared_node, *mig_node;
    const char *shared_path, *mig_path;
    /* the CUDA of the app containers' images (data/cuda-images.json): the
     * largest need of those the table knows; 0 = none */
    uint32_t image_driver_min;
    const char *image_cuda;
    const struct gp_kv *selector;
    size_t nselector;
    struct fy_node *selector_node;
    const char *selector_path;
    struct gp_toleration *tolerations;
    size_t ntolerations;
    /* metadata: each level's labels and namespace */
    const struct gp_kv *labels[2];
    size_t nlabels[2];
    const char *ns[2];
    /* affinity and topologySpreadConstraints (manifest_affinity.c); NULL
     * until either is written */
    struct gp_pod_constraints *cons;
    struct manifest_label_keys *lkeys;
    size_t nlkeys, lkeys_cap;
};

/* One parse: where items, queues and PodGroups go (the workload's, so
 * that a PodGroup may be in another file than its pods). */
struct manifest_stream {
    struct gp_workload *w;
    struct gp_arena *a;
};

/* A workload kind we read (Pod, Deployment, Job): its top-level fields. */
struct manifest_kind {
    const char *kind;
    const char *api_version;
    enum gp_item_kind item_kind;
    const struct gp_yaml_field *fields;
    size_t nfields;
};

/* --- helpers (manifest.c) ---------------------------------------------- */

enum gp_err gp_manifest_oom(struct gp_yaml *y);
/* Remembers the current path in the arena, for a later error. */
const char *gp_manifest_path_copy(struct gp_yaml *y);
/* Fails at a node with the path it was read under. */
enum gp_err gp_manifest_fail_at(struct gp_yaml *y, const char *path, struct fy_node *n,
                                const char *msg, const char *detail);
/* "expected EXPECTED, got "VALUE"" at v. */
enum gp_err gp_manifest_bad_value(struct gp_yaml *y, struct fy_node *v, const char *expected);
/* Whether an annotation key is under gpuplane.io/ or sim.gpuplane.io/. */
bool gp_manifest_our_prefix(const char *key);

/* --- metadata (manifest_meta.c) ---------------------------------------- */

/* Reads a metadata block (name, labels, annotations) into the
 * struct manifest_obj `obj` at its current level. */
enum gp_err gp_manifest_metadata(struct gp_yaml *y, struct fy_node *v, void *obj);
/* Merges the object's and the template's hints; the template wins. */
struct manifest_hints gp_manifest_hints_merge(const struct manifest_hints *obj,
                                              const struct manifest_hints *tpl);

/* --- the pod spec (manifest_pod.c) ------------------------------------- */

/* A field handler: reads a pod spec into the struct manifest_obj `obj`. */
enum gp_err gp_manifest_pod_spec(struct gp_yaml *y, struct fy_node *v, void *obj);
/* A preemptionPolicy (a PodSpec's or a PriorityClass's) as GP_PREEMPT_*. */
enum gp_err gp_manifest_preemption(struct gp_yaml *y, struct fy_node *v, uint8_t *out);
/* Turns what the pod spec and the hints said into o->item.pod. */
enum gp_err gp_manifest_pod_finish(struct gp_yaml *y, struct manifest_obj *o,
                                   const struct manifest_hints *h);

/* --- affinity and spreading (manifest_affinity.c) --------------------- */

/* Field handlers of the pod spec: affinity, topologySpreadConstraints. */
enum gp_err gp_manifest_affinity(struct gp_yaml *y, struct fy_node *v, void *obj);
enum gp_err gp_manifest_spread(struct gp_yaml *y, struct fy_node *v, void *obj);
/* Once the pod's labels are known (labels, nlabels): matchLabelKeys and
 * mismatchLabelKeys merged into their selectors. */
enum gp_err gp_manifest_label_keys_apply(struct gp_yaml *y, struct manifest_obj *o,
                                         const struct gp_kv *labels, size_t nlabels);

/* --- workload kinds (manifest_workload.c) ------------------------------ */

/* The workload kind named `kind`; NULL if we do not read it. */
const struct manifest_kind *gp_manifest_kind_find(const char *kind);
/* Reads one object of kind k (its kind and apiVersion checked) that
 * starts at `line`, and appends its item to st->w. */
enum gp_err gp_manifest_read_workload(struct gp_yaml *y, struct fy_node *n,
                                      struct manifest_stream *st, const struct manifest_kind *k,
                                      int line);

/* --- InferenceService (manifest_service.c) ---------------------------- */

/* An InferenceService starting at `line`, into st->w->services. */
enum gp_err gp_manifest_read_service(struct gp_yaml *y, struct fy_node *n,
                                     struct manifest_stream *st, int line);

/* --- PodGroup and Queue (manifest_group.c) ----------------------------- */

/* A PodGroup starting at `line`, into st->w->groups. */
enum gp_err gp_manifest_read_podgroup(struct gp_yaml *y, struct fy_node *n,
                                      struct manifest_stream *st, int line);
/* --- gangs (manifest_gang.c) ------------------------------------------ */

/* Joins every object of w that names a PodGroup to the PodGroup of w of
 * that name and counts the gangs' members. Objects naming one w does not
 * have wait for a later file, or, when `last`, are an error; `last` also
 * warns about the PodGroups that can never start. */
enum gp_err gp_manifest_join(struct gp_workload *w, struct gp_arena *a, struct gp_diag *diag,
                             bool last);

/* A gpuplane.io/v1 Queue or a Volcano Queue starting at `line`, into
 * st->w->queues. */
enum gp_err gp_manifest_read_queue(struct gp_yaml *y, struct fy_node *n, struct manifest_stream *st,
                                   bool volcano, int line);

/* --- PriorityClass (manifest_priority.c) ------------------------------ */

/* A scheduling.k8s.io/v1 PriorityClass starting at `line`, into
 * st->w->pclasses. */
enum gp_err gp_manifest_read_priority_class(struct gp_yaml *y, struct fy_node *n,
                                            struct manifest_stream *st, int line);
/* Once every file is read: each item's priority from its PriorityClass
 * (the first half of gp_workload_finish). Idempotent. */
enum gp_err gp_manifest_finish_priorities(struct gp_workload *w, struct gp_diag *diag);

#endif
