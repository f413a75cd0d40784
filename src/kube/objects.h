/* objects.h - API objects as the engine sees them: a Pod (JSON as the API
 * server sends it) read into a gp_pod_spec, a Node into a gp_node_spec,
 * and the device annotations gpuplane writes on a pod before it binds it
 * (DESIGN.md section 7; docs/kube.md, "Annotations"):
 *
 *   gpuplane.io/node   the node chosen
 *   gpuplane.io/gpus   the GPUs of that node the pod gets, by index ("0,3")
 *   gpuplane.io/phase  "allocating" when written; the node agent sets
 *                      "allocated" once its Allocate served the pod
 *   gpuplane.io/mig    on MIG instances only: the profile, then each
 *                      instance as GPU@SLICE (its first memory slice):
 *                      "1g.10gb:0@0,0@1,3@6"
 *
 * Strings of a spec are copied into the arena given, so the spec lives as
 * long as that arena, not the JSON. */
#ifndef GP_KUBE_OBJECTS_H
#define GP_KUBE_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/model.h"
#include "io/podreq.h"
#include "util/arena.h"
#include "util/err.h"

#define GP_KUBE_ANN_NODE  "gpuplane.io/node"
#define GP_KUBE_ANN_GPUS  "gpuplane.io/gpus"
#define GP_KUBE_ANN_PHASE "gpuplane.io/phase"
#define GP_KUBE_ANN_MIG   "gpuplane.io/mig"

/* What the scheduler reads of a pod besides its requests. Strings are
 * borrowed from the JSON. */
struct gp_kube_pod_info {
    const char *ns, *name, *uid, *rv;
    const char *node_name;      /* spec.nodeName; NULL when unset or "" */
    const char *scheduler_name; /* spec.schedulerName ("default-scheduler" when unset) */
    bool terminating;           /* metadata.deletionTimestamp is set */
    bool ended;                 /* status.phase Succeeded or Failed: it holds nothing */
    const char *ann_node;       /* gpuplane.io/node; NULL when absent */
    bool has_pick;              /* gpuplane.io/gpus read into pick */
    const char *ann_mig;        /* gpuplane.io/mig; NULL when absent (read with the node's model) */
    const char *ann_phase;      /* gpuplane.io/phase; NULL when absent */
    bool started; /* status.phase Running, or a container running or terminated: admitted */
    struct gp_pick pick;
    const char *group; /* the PodGroup it belongs to (label scheduling.x-k8s.io/pod-group
                          or annotation scheduling.k8s.io/group-name); NULL: none */
    bool gated;        /* spec.schedulingGates not empty: not to be scheduled yet (they can only be
                        * removed: "Pod Scheduling Readiness", KEP-3521) */
    /* a persistentVolumeClaim or ephemeral volume: gpuplane reads no
     * claims, so its volumes are not checked (docs/kube.md, "Volumes: not
     * checked") */
    bool claims;
};

/* A Pod's members no reader here reads (objects_unread.c): the pods
 * informer leaves them out of its trees (gp_kube_informer_skip). */
struct gp_kube_jskip;
extern const struct gp_kube_jskip gp_kube_pod_unread;

/* The info alone, the same as gp_kube_pod_read gives (whether or not its
 * spec reads): for a pod whose spec the scheduler does not read again (the
 * engine holds the one it was given), without the cost of the spec. */
void gp_kube_pod_info_read(const json_t *pod, struct gp_kube_pod_info *info);

/* The same for a new version of a pod whose info (of version old, still
 * alive) is in *info: its spec's part (nodeName, schedulerName, gates,
 * claims) and its status's (ended, started) are kept when the new
 * version's spec or status is old's very value (the watch shares an
 * unchanged member with the stored version, gp_kube_jload_reuse: the value
 * is immutable and both hold it), else read; its metadata is always read.
 * old NULL: gp_kube_pod_info_read. */
void gp_kube_pod_info_reread(const json_t *pod, const json_t *old, struct gp_kube_pod_info *info);

/* Reads a pod: info (gp_kube_pod_info_read), and its request as
 * kube-scheduler computes it (PodRequests,
 * io/podreq.h: app containers and sidecars summed, an init container's
 * larger need with the sidecars before it winning, spec.overhead added),
 * cpu, memory, nvidia.com/gpu, nvidia.com/gpu.shared (replicas of renamed
 * time-sliced or MPS GPUs, gpu_resource GP_GPU_RES_SHARED), nvidia.com/mig-*,
 * gpuplane.io/gpu-milli and gpu-memory, gpu-model ("A|B"), nodeSelector,
 * affinity and topologySpreadConstraints (gp_kube_pod_constraints_read),
 * tolerations, priority. GP_EINVALID (with the field in diag) for what
 * cannot be read. */
enum gp_err gp_kube_pod_read(const json_t *pod, struct gp_arena *a, struct gp_pod_spec *spec,
                             struct gp_kube_pod_info *info, struct gp_diag *diag);

/* What the scheduler reads of a node besides its spec. */
struct gp_kube_node_info {
    const char *name;
    bool schedulable; /* Ready and not cordoned (spec.unschedulable) */
    bool ready;       /* its Ready condition True: a node not Ready takes no new pod */
    /* cordoned (spec.unschedulable): the node's spec carries the taint
     * node.kubernetes.io/unschedulable:NoSchedule (the node lifecycle
     * controller's, added here when the Node lacks it), so only a pod that
     * tolerates it goes there, as kube-scheduler's NodeUnschedulable has it */
    bool cordoned;
    /* GPUs as the API shows them (the audit's): whole ones (nvidia.com/gpu,
     * not under MIG's single strategy) and MIG-enabled ones; gpus is both */
    uint32_t gpus, whole_gpus, mig_gpus;
    const struct gp_mig_model *mig;        /* the MIG-enabled GPUs' model; NULL: none */
    bool mig_single;                       /* MIG's single strategy (devices as nvidia.com/gpu) */
    uint16_t mig_cap[GP_MIG_MAX_PROFILES]; /* MIG devices advertised, per profile index */
    /* of those, the ones allocatable (healthy), mixed strategy; where the
     * layouts are gpuplane's bookkeeping the others are left out of them */
    uint16_t mig_alloc[GP_MIG_MAX_PROFILES];
    /* why the engine gets none of its GPUs though it has MIG devices (the
     * layout is changing, uneven, ...); NULL */
    const char *mig_why;
    /* time-slicing or MPS: the replicas of each GPU (>= 2; gpus counts
     * GPUs, not replicas; beside MIG GPUs, of each whole GPU); 0 when the
     * node does not share its GPUs so */
    uint32_t replicas;
    /* whole and MIG-enabled GPUs side by side (mixed strategy): the node is
     * placed on as two parts, spec its whole GPUs and mig_spec its MIG
     * GPUs, part GPU i being the node's GPU whole_index[i] or mig_index[i]
     * (gpuplane's node agent labels which GPUs are in MIG mode,
     * GP_KUBE_LABEL_MIG_GPUS; without the label: whole GPUs first, the
     * rule of docs/kube.md), its CPU and memory shared out between them in
     * proportion to their GPUs */
    bool split;
    bool split_labelled; /* the indexes come from GP_KUBE_LABEL_MIG_GPUS */
    struct gp_node_spec mig_spec;
    uint8_t whole_index[GP_MAX_GPUS_PER_NODE], mig_index[GP_MAX_GPUS_PER_NODE];
    /* nparts engine nodes in all: 2 when split (part 0 spec, part 1
     * mig_spec), else 1; part_of[g] the part of the node's GPU g, whose GPU
     * i is the i-th GPU of that part by index. GPUs in MIG mode of
     * different layouts are one part, each GPU with its own (the engine's
     * gpu_layouts, engine/sharing.h) */
    uint32_t nparts;
    uint8_t part_of[GP_MAX_GPUS_PER_NODE];
    /* the layouts came from GP_KUBE_LABEL_MIG_LAYOUT: gpu_layout[g] (in
     * the arena, one per GPU, empty for whole ones) is what GPU g has,
     * and the audit checks that each instance booked is one of them */
    bool layouts_labelled;
    const struct gp_mig_layout *gpu_layout;
    /* GPUs of different layouts without gpuplane's agent (NVIDIA's own
     * device plugin, which picks the devices): gpu_layout packed from the
     * counts, gpuplane's bookkeeping only; MIG pods are placed and audited
     * by their number and no instance or GPU is written for them */
    bool mig_by_count;
};

/* The node label gpuplane's node agent (node/labels.c) puts on a node of
 * the mixed strategy with a GPU in MIG mode: those GPUs' indexes joined by
 * '.' ("1.3": a label value holds no comma). */
#define GP_KUBE_LABEL_MIG_GPUS "gpuplane.io/mig-gpus"

/* The node label gpuplane's node agent (node/labels.c) puts on every node
 * it serves: the version of the per-node protocol it speaks (DESIGN.md
 * section 7; docs/node.md). The scheduler keeps one pod allocating at a
 * time only on nodes that carry it (kube/sched_slot.c): elsewhere no one
 * marks a pod allocated, and it binds as kube-scheduler does. */
#define GP_KUBE_LABEL_AGENT    "gpuplane.io/agent"
#define GP_KUBE_AGENT_PROTOCOL "1"

/* The taint of a cordoned node (k8s.io/api/core/v1 TaintNodeUnschedulable,
 * NoSchedule), which kube-scheduler's NodeUnschedulable lets a pod pass
 * when the pod tolerates it. */
#define GP_KUBE_TAINT_UNSCHEDULABLE "node.kubernetes.io/unschedulable"

/* The prefix of the node labels gpuplane's node agent puts on a node of
 * the mixed strategy, one per GPU in MIG mode ("gpuplane.io/mig-layout.1"):
 * the GPU instances of that GPU, by profile (a '+' written '.'), each
 * with its starts (memory slices) as digits, joined by '_':
 * "4g.40gb-0_3g.40gb-4", "1g.10gb-0123456"; "none" when it has none. */
#define GP_KUBE_LABEL_MIG_LAYOUT "gpuplane.io/mig-layout."

/* "1.3" into mask (bit i: GPU i); false when it is not distinct indexes
 * below 16 joined by '.'. */
bool gp_kube_mig_gpus_parse(const char *s, uint32_t *mask);

/* Reads a node: status.allocatable (capacity when absent) cpu, memory and
 * nvidia.com/gpu; labels (GPU feature discovery's nvidia.com/gpu.product
 * as the GPU model, nvidia.com/gpu.memory in MiB per GPU, gpuplane.io/pool);
 * spec.taints; its MIG layout (gp_kube_node_mig_read); its time-sliced
 * or MPS replicas (gp_kube_node_share_read). */
enum gp_err gp_kube_node_read(const json_t *node, struct gp_arena *a, struct gp_node_spec *spec,
                              struct gp_kube_node_info *info, struct gp_diag *diag);

/* objects_mig.c: a node's MIG layout as NVIDIA's stack publishes it
 * (docs/kube.md, "MIG from the API"), on a spec read with its whole GPUs:
 * nvidia.com/mig.strategy mixed (nvidia.com/mig-<profile> devices in
 * status.capacity, MIG-enabled GPUs nvidia.com/gpu.count less the whole
 * GPUs) or single (nvidia.com/gpu devices of the profile
 * nvidia.com/gpu.product ends with, "-MIG-1g.10gb"), the model that
 * gpu.product names; each MIG GPU's instances as gpuplane's node agent
 * labels them (GP_KUBE_LABEL_MIG_LAYOUT), else the same instances on every
 * MIG GPU, placed by the engine's rule, or - GPUs of different layouts on a
 * node without gpuplane's agent - instances packed from the counts
 * (info->mig_by_count), as spec->sharing (in the arena; each GPU its own
 * layout where they differ); whole GPUs beside them
 * split the node in two (info->split, info->mig_spec), the whole part
 * time-sliced as gp_kube_node_share_read reads it when GFD's gpu.replicas
 * (nvidia.com/gpu's) says so. A layout gpuplane cannot know (uneven,
 * changing, a GP_KUBE_LABEL_MIG_GPUS that disagrees with the counts, MPS
 * beside MIG devices, MIG devices time-sliced) leaves the spec no GPUs
 * and says why in info->mig_why; info has the counts either way. */
enum gp_err gp_kube_node_mig_read(const json_t *node, struct gp_arena *a, struct gp_node_spec *spec,
                                  struct gp_kube_node_info *info, struct gp_diag *diag);
/* objects_share.c: a node whose GPUs the device plugin shares by
 * time-slicing or MPS (docs/kube.md, "Time-slicing and MPS from the
 * API"), on a spec read with nvidia.com/gpu as its GPUs: GFD's
 * nvidia.com/gpu.replicas (>= 2) and nvidia.com/gpu.sharing-strategy
 * (time-slicing, or absent; mps) make the spec's GPUs nvidia.com/gpu over
 * the replicas - or, renamed (renameByDefault: true, no nvidia.com/gpu),
 * nvidia.com/gpu.shared over them -, its model gpu.product less
 * "-SHARED", and spec->sharing that mode (in the arena); info->replicas
 * set. Nothing changes for other nodes (MIG ones included: objects_mig.c
 * calls it for the whole part). Under the mixed MIG strategy the replicas
 * are nvidia.com/gpu's. gp_kube_node_replicas: those replicas, 1 when the
 * node does not share its GPUs so. */
enum gp_err gp_kube_node_share_read(const json_t *node, struct gp_arena *a,
                                    struct gp_node_spec *spec, struct gp_kube_node_info *info,
                                    struct gp_diag *diag);
uint32_t gp_kube_node_replicas(const json_t *node);
/* The whole GPUs' replicas as the device plugin advertises them beside
 * MIG devices (the mixed strategy, objects_mig.c): gpu, the node's
 * nvidia.com/gpu, when it has some or its GPUs are not replicated;
 * else, renamed (renameByDefault: true), its nvidia.com/gpu.shared, as
 * NVIDIA's plugin renames only the resources its sharing replicates
 * (nvidia.com/gpu) and leaves nvidia.com/mig-<profile> as they are.
 * GP_EINVALID when nvidia.com/gpu.shared does not read. */
enum gp_err gp_kube_node_whole_replicas(const json_t *node, const char *name, uint32_t gpu,
                                        uint32_t *out, struct gp_diag *diag);
/* objects_share.c: a pod's own sharing pin, the annotation
 * gpuplane.io/sharing ("timeslice, mps": any of exclusive, timeslice,
 * mps, mig), as io/manifest_pod.c reads it: spec->share_modes becomes the
 * modes named, intersected with those its resource implies
 * (nvidia.com/gpu.shared: timeslice, mps; nvidia.com/mig-*: mig), on a
 * spec whose GPU request is read. GP_EINVALID with one line naming the
 * field: a mode not known, a pod asking no GPU, nothing left. */
enum gp_err gp_kube_pod_sharing_read(const json_t *annotations, struct gp_pod_spec *spec,
                                     struct gp_diag *diag);
/* objects_affinity.c: the pod's spec.affinity (nodeAffinity, podAffinity,
 * podAntiAffinity, required and preferred) and
 * spec.topologySpreadConstraints into spec->constraints (in the arena;
 * NULL when it has none, the common pod: the engine then tracks nothing
 * for it), matchLabelKeys and mismatchLabelKeys merged with
 * spec->labels, which must be read first. GP_EINVALID with one line
 * naming the field for what does not read (an operator not known, a
 * weight outside 1-100, a maxSkew below 1, a missing topologyKey, ...). */
enum gp_err gp_kube_pod_constraints_read(const json_t *spec, struct gp_arena *a,
                                         struct gp_pod_spec *s, struct gp_diag *d);
/* objects_affinity.c: one NodeSelectorTerm (matchExpressions on labels,
 * matchFields on metadata.name) into t, as a required node affinity's
 * terms are read (a PersistentVolume's spec.nodeAffinity: kube/volumes.c);
 * GP_EINVALID with one line for what does not read. */
enum gp_err gp_kube_node_term_read(const json_t *o, struct gp_arena *a, struct gp_node_term *t,
                                   struct gp_diag *d);
/* objects_scalar.c: the resources NodeResourcesFit checks beyond cpu,
 * memory and NVIDIA's (noderesources/fit.go): ephemeral-storage,
 * hugepages-<size>, and names with a '/' (extended resources,
 * kubernetes.io/ ones) but nvidia.com/gpu, gpu.shared and mig-*. */
bool gp_kube_scalar_name(const char *k);
/* A pod's such requests, counted per name as io/podreq.h counts every
 * request: each container fed in the order podreq.h asks (init: an init
 * container; sidecar: its restartPolicy Always), then finished into
 * spec->scalars (sorted, amounts above 0; in the arena). n must be 0
 * before the first container. GP_EINVALID with one line: an amount not a
 * quantity, more than GP_MAX_SCALARS names. */
struct gp_kube_scalar_acc {
    size_t n;
    const char *name[GP_MAX_SCALARS]; /* borrowed from the JSON */
    struct gp_podreq acc[GP_MAX_SCALARS];
};
enum gp_err gp_kube_scalars_container(struct gp_kube_scalar_acc *sc, const json_t *resources,
                                      bool init, bool sidecar, const char *where,
                                      struct gp_diag *d);
enum gp_err gp_kube_scalars_finish(const struct gp_kube_scalar_acc *sc, struct gp_arena *a,
                                   struct gp_pod_spec *s, struct gp_diag *d);
/* A Node's allocatable pods (spec->pods_limited, pods_max) and such
 * resources (spec->scalars, sorted, those above 0); GP_EINVALID with one
 * line naming the field, or past GP_MAX_SCALARS. */
enum gp_err gp_kube_node_scalars_read(const json_t *allocatable, const char *node,
                                      struct gp_arena *a, struct gp_node_spec *s,
                                      struct gp_diag *d);
/* A split node's pods and such resources shared out as its CPU and
 * memory are: the MIG part mig_gpus of gpus (a part that takes pods at
 * least one), the whole part the rest. */
enum gp_err gp_kube_node_scalars_split(struct gp_arena *a, struct gp_node_spec *whole,
                                       struct gp_node_spec *mig, uint32_t mig_gpus, uint32_t gpus);
/* objects_scalar.c: the host ports of the pod's containers
 * (spec.containers[].ports[] with a hostPort; protocol TCP unless given;
 * hostIP "" or absent: every address) into spec->host_ports, which the
 * engine checks as NodePorts does. GP_EINVALID with one line: a port
 * outside 1-65535, a protocol not TCP, UDP or SCTP. */
enum gp_err gp_kube_pod_ports_read(const json_t *spec, struct gp_arena *a, struct gp_pod_spec *s,
                                   struct gp_diag *d);
/* The compute slices and memory of a MIG profile by name, from the first
 * GPU model that has it; false when none has. */
bool gp_kube_mig_profile_info(const char *profile, unsigned *compute, uint32_t *mem_mib);

/* "0,3" from a pick (buf of at least 64 bytes). */
void gp_kube_pick_format(const struct gp_pick *pick, char *buf, size_t size);
/* A pick from "0,3": false when it is not a list of distinct indexes < 16. */
bool gp_kube_pick_parse(const char *s, struct gp_pick *pick);

/* "1g.10gb:0@0,3@6" from a MIG pick (pick->mig_profile a profile of
 * model m); "" when the pick is not on MIG instances (m NULL or
 * mig_profile < 0). buf of at least 128 bytes. */
void gp_kube_mig_format(const struct gp_pick *pick, const struct gp_mig_model *m, char *buf,
                        size_t size);
/* A MIG pick from "1g.10gb:0@0,3@6" for model m: gpu[], mig_start[],
 * mig_profile and ngpus set; false when it does not read (an unknown
 * profile, a GPU over 15, a start that is not one of the profile's). */
bool gp_kube_mig_parse(const char *s, const struct gp_mig_model *m, struct gp_pick *pick);

/* A histogram of reasons, each text once with its count of nodes (a
 * reason added again adds to its count; past GP_KUBE_REASONS_MAX
 * distinct texts more are dropped), and kube-scheduler's words for it:
 * "0/12 nodes are available: 4 node(s) were unschedulable, 8 Insufficient
 * nvidia.com/gpu." - the reasons as "COUNT TEXT" sorted as strings
 * (FitError.Error, sortReasonsHistogram), no "." when there are none. */
#define GP_KUBE_REASONS_MAX 32
struct gp_kube_reasons {
    size_t n;
    struct gp_kube_reason {
        uint32_t count;
        char text[160];
    } item[GP_KUBE_REASONS_MAX];
};
void gp_kube_reasons_add(struct gp_kube_reasons *r, uint32_t count, const char *text);
void gp_kube_reasons_format(const struct gp_kube_reasons *r, uint32_t nodes_total, char *buf,
                            size_t size);

/* The histogram of x's filters (a nodeSelector and a required node
 * affinity both NodeAffinity's "node(s) didn't match Pod's node
 * affinity/selector"; the other filters' words the engine's: the nodes'
 * own reasons, a cordon, a taint by name, are sched_explain.c's). */
void gp_kube_explain_text(const struct gp_explain *x, char *buf, size_t size);
/* The same with filter f's words replaced by text (f GP_FILTER_COUNT: none). */
void gp_kube_explain_text_as(const struct gp_explain *x, enum gp_filter f, const char *text,
                             char *buf, size_t size);
/* The same for the pod at hand, in the resource it asks: a MIG request's
 * refusals (no such MIG devices, none free, no GPUs) are kube-scheduler's
 * "Insufficient nvidia.com/mig-1g.10gb"; whole GPUs refused by a node in
 * MIG mode, one that renames its replicas or one with no free replica
 * "Insufficient nvidia.com/gpu", and nvidia.com/gpu.shared refused so
 * "Insufficient nvidia.com/gpu.shared" (the engine's share and memory
 * reasons, gpuplane's annotations, are kept: kube-scheduler has none). */
void gp_kube_explain_pod_text(const struct gp_explain *x, const struct gp_pod_spec *pod, char *buf,
                              size_t size);
/* A reason added to a text made by the functions above: "N text" among
 * the others, sorted as they are, added to the count of the same text if
 * there is one (n 0: nothing changes). */
void gp_kube_explain_add(char *buf, size_t size, uint32_t n, const char *text);

#endif
