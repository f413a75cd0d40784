/* model.h - the engine's resource model: what a node offers, what a pod
 * asks for, and the per-node summaries that make filtering a few loads.
 *
 * Units are in the names: cpu in millicores (_milli), memory in MiB (_mib),
 * a GPU share in thousandths of a GPU (gpu_milli, 1000 = one whole GPU).
 * Strings and arrays inside a *_spec are borrowed: the caller keeps them
 * alive for as long as the engine holds the node or pod (in practice they
 * live in the run's arena). */
#ifndef GP_ENGINE_MODEL_H
#define GP_ENGINE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/mig.h"

#define GP_MAX_GPUS_PER_NODE 16
#define GP_GPU_MILLI         1000
#define GP_MAX_GPU_MODELS    64

struct gp_kv {
    const char *key;
    const char *value;
};

enum gp_taint_effect {
    GP_EFFECT_NO_SCHEDULE,
    GP_EFFECT_PREFER_NO_SCHEDULE,
    GP_EFFECT_NO_EXECUTE,
};

struct gp_taint {
    const char *key;
    const char *value; /* may be NULL or "" */
    enum gp_taint_effect effect;
};

/* Kubernetes toleration semantics: key NULL with op_exists tolerates every
 * taint; any_effect tolerates all effects of a matching key. */
struct gp_toleration {
    const char *key;
    const char *value;
    bool op_exists; /* operator Exists (else Equal) */
    bool any_effect;
    enum gp_taint_effect effect;
};

/* --- what kube-scheduler's NodeAffinity, InterPodAffinity and
 * PodTopologySpread plugins read (docs/affinity.md) -------------------- */

/* A requirement's operator: In, NotIn, Exists, DoesNotExist (node and
 * label selectors), Gt, Lt (node selectors: the label's value as an
 * integer against the one value). */
enum gp_match_op {
    GP_MATCH_IN,
    GP_MATCH_NOT_IN, /* also true when the key is absent */
    GP_MATCH_EXISTS,
    GP_MATCH_DOES_NOT_EXIST,
    GP_MATCH_GT,
    GP_MATCH_LT,
};

/* One requirement: key op values. */
struct gp_match_expr {
    const char *key;
    enum gp_match_op op;
    const char *const *values;
    size_t nvalues;
};

/* A NodeSelectorTerm: every requirement holds (ANDed); `labels` on the
 * node's labels, `fields` on its fields (metadata.name, In or NotIn of one
 * value). A term with neither matches no node. `weight` (1..100) for a
 * preferred term. */
struct gp_node_term {
    const struct gp_match_expr *labels;
    size_t nlabels;
    const struct gp_match_expr *fields;
    size_t nfields;
    int32_t weight;
};

/* A metav1.LabelSelector: matchLabels and matchExpressions, ANDed. Not
 * `set` (no selector written): matches nothing; set and empty: every pod. */
struct gp_label_selector {
    bool set;
    const struct gp_kv *labels;
    size_t nlabels;
    const struct gp_match_expr *exprs;
    size_t nexprs;
};

/* A PodAffinityTerm: the pods its selector matches in its namespaces (the
 * pod's own namespace when neither `namespaces` nor `ns_selector` is
 * given; ns_selector matches a namespace by its one label,
 * kubernetes.io/metadata.name), counted per value of the node label
 * topology_key. `weight` (1..100) for a preferred term. */
struct gp_pod_term {
    struct gp_label_selector selector;
    const char *const *namespaces;
    size_t nnamespaces;
    struct gp_label_selector ns_selector;
    const char *topology_key;
    int32_t weight;
};

/* A TopologySpreadConstraint: the pods its selector matches in the pod's
 * namespace may differ by at most max_skew between the values of
 * topology_key. DoNotSchedule is a filter, ScheduleAnyway a score.
 * min_domains (DoNotSchedule only; 0 = not given, 1): fewer eligible
 * domains count the global minimum as 0. A domain is eligible from the
 * nodes that match the pod's node selector and required affinity (unless
 * ignore_affinity, nodeAffinityPolicy: Ignore) and, with honor_taints
 * (nodeTaintsPolicy: Honor), whose taints it tolerates. */
struct gp_spread {
    int32_t max_skew;
    const char *topology_key;
    bool schedule_anyway;
    struct gp_label_selector selector;
    int32_t min_domains;
    bool ignore_affinity;
    bool honor_taints;
};

/* A node condition of a pod's volumes, as kube-scheduler's VolumeBinding
 * (a bound claim's PersistentVolume spec.nodeAffinity) and VolumeZone (its
 * topology labels) check it: a node passes when it matches one of the
 * terms (ORed, as NodeSelectorTerms; none: no node passes - a claim the
 * plugins' PreFilter refuses). Rejected as GP_FILTER_VOLUME_ZONE when
 * zone, GP_FILTER_VOLUME_BIND when bind (an unbound claim of a
 * WaitForFirstConsumer class: its class's allowedTopologies, or the node
 * its selected-node annotation names), else GP_FILTER_VOLUME_BINDING. */
struct gp_volume_terms {
    const struct gp_node_term *terms;
    size_t nterms;
    bool zone;
    bool bind;
};

/* A pod's affinity and spreading. Every array may be empty; node_required
 * non-empty is requiredDuringSchedulingIgnoredDuringExecution's terms
 * (ORed). volumes: the conditions of its volumes, all of which a node
 * must pass (VolumeBinding's before VolumeZone's); none for the
 * simulator's pods. */
struct gp_pod_constraints {
    const struct gp_node_term *node_required;
    size_t nnode_required;
    const struct gp_node_term *node_preferred;
    size_t nnode_preferred;
    const struct gp_pod_term *affinity, *affinity_preferred;
    size_t naffinity, naffinity_preferred;
    const struct gp_pod_term *anti, *anti_preferred;
    size_t nanti, nanti_preferred;
    const struct gp_spread *spread;
    size_t nspread;
    const struct gp_volume_terms *volumes;
    size_t nvolumes;
};

struct gp_sharing_spec; /* engine/sharing.h */

/* A resource beyond cpu, memory and the GPUs that kube-scheduler's
 * NodeResourcesFit checks as it checks them (noderesources/fit.go
 * fitsRequest: ephemeral-storage, hugepages-<size>, extended resources
 * such as example.com/foo), in its own unit (bytes, devices). Lists of
 * them are sorted by name (strcmp), each name once, amounts above 0. The
 * simulator's readers give none. */
#define GP_MAX_SCALARS 16
struct gp_scalar {
    const char *name;
    int64_t amount;
};

/* A container's hostPort, as kube-scheduler's NodePorts plugin reads it
 * (nodeports/node_ports.go): no two pods of a node may hold the same port
 * and protocol on addresses that overlap (ip NULL: 0.0.0.0, every one). */
enum gp_port_protocol { GP_PROTO_TCP, GP_PROTO_UDP, GP_PROTO_SCTP };
struct gp_host_port {
    const char *ip;
    uint16_t port; /* 1..65535 */
    uint8_t protocol;
};

/* A PersistentVolumeClaim a pod's persistentVolumeClaim volume names, as
 * kube-scheduler's NodeInfo counts it (PVCRefCounts; framework/types.go):
 * key "namespace/name". rwop: the claim's spec.accessModes hold
 * ReadWriteOncePod, so no node passes while another bound pod uses the
 * claim (VolumeRestrictions; GP_FILTER_RWOP). A bound pod's claims count
 * as used whatever rwop says. */
struct gp_claim_use {
    const char *key;
    bool rwop;
};

/* A CSI volume a pod's claim puts on its node, as kube-scheduler's
 * NodeVolumeLimits counts it (nodevolumelimits/csi.go
 * filterAttachableVolumes): the driver and the volume's unique name (one
 * volume however many pods of the node use it: "driver/volumeHandle" for
 * a bound claim's CSI PersistentVolume). */
struct gp_csi_volume {
    const char *driver;
    const char *name;
};

/* How many CSI volumes of one driver a node may hold (CSINode
 * spec.drivers[].allocatable.count; getVolumeLimits): a pod whose new
 * volumes would take the node's count of that driver past max is refused
 * there (GP_FILTER_VOLUME_LIMITS). */
struct gp_csi_limit {
    const char *driver;
    uint32_t max;
};

struct gp_node_spec {
    const char *name;
    const char *pool;      /* node pool name; may be NULL */
    const char *gpu_model; /* e.g. "A100-80GB"; NULL or "" when gpu_count is 0 */
    int64_t cpu_milli;
    int64_t mem_mib;
    uint32_t gpu_count;
    uint32_t gpu_mem_mib; /* per GPU; 0 = unknown (memory requests then only need 0) */
    /* GPUs per NVLink domain inside the node (consecutive from GPU 0, e.g.
     * 4 for two NVLink quads); 0 = none given: every GPU is alike */
    uint32_t nvlink_gpus;
    const struct gp_kv *labels;
    size_t nlabels;
    const struct gp_taint *taints;
    size_t ntaints;
    double price_per_hour_usd; /* whole node, for cost reports */
    /* how the GPUs are shared: the pool's spec (borrowed). NULL: fractions
     * of a GPU's compute and memory are accounted per GPU (the GPU-sharing
     * cluster of the openb trace); a whole GPU is exclusive either way */
    const struct gp_sharing_spec *sharing;
    /* the NVIDIA driver, as a number that orders like its version
     * (major * 100000 + minor * 100 + patch: 535.104.05 is 53510405;
     * io/compat.h); 0 = not declared: the driver filter passes it */
    uint32_t driver_version;
    /* the pods it may hold (a Node's status.allocatable.pods) when
     * pods_limited; otherwise no limit */
    bool pods_limited;
    uint32_t pods_max;
    /* the other resources it offers (struct gp_scalar; borrowed), at most
     * GP_MAX_SCALARS: a pod asking one it lacks does not fit */
    const struct gp_scalar *scalars;
    size_t nscalars;
    /* its CSI drivers' volume limits (struct gp_csi_limit, each driver
     * once; borrowed); none: no limit */
    const struct gp_csi_limit *csi_limits;
    size_t ncsi_limits;
};

/* The extended resource a pod asks its GPUs with, as NVIDIA's device
 * plugin names it; it decides which nodes can serve the request
 * (docs/sharing.md). A MIG profile request (mig_profile) names its own. */
enum gp_gpu_resource {
    /* nvidia.com/gpu: whole GPUs; on time-sliced and MPS GPUs that are not
     * renamed (renameByDefault false), gpu_count replicas; under MIG's
     * single strategy, instances */
    GP_GPU_RES_GPU = 0,
    GP_GPU_RES_SHARED, /* nvidia.com/gpu.shared: replicas of renamed time-sliced or MPS GPUs */
    GP_GPU_RES_NONE,   /* no NVIDIA resource: a share by gpuplane's annotations alone */
};

struct gp_pod_spec {
    const char *name;
    int64_t cpu_milli;
    int64_t mem_mib;
    /* GPUs: gpu_count GPUs, each with gpu_milli of its compute. gpu_milli is
     * 1000 for whole GPUs; below 1000 only with gpu_count == 1 (a share of
     * one GPU; 0 with gpu_mem_mib > 0 is a memory-only share). gpu_count == 0
     * is a CPU-only pod. */
    uint32_t gpu_count;
    uint32_t gpu_milli;
    uint32_t gpu_mem_mib; /* per GPU; 0 = not declared */
    /* the most of gpu_count one container of the pod asks (a Kubernetes
     * pod's requests are per container, the device plugin's Allocate too):
     * what failRequestsGreaterThanOne checks; 0 = gpu_count (one
     * container, or a reader that does not say) */
    uint32_t gpu_container_max;
    uint32_t queue;                /* an id from gp_engine_queue_set; 0 = the default queue */
    const char *const *gpu_models; /* allowed models; none = any */
    size_t ngpu_models;
    const struct gp_kv *node_selector;
    size_t nnode_selector;
    const struct gp_toleration *tolerations;
    size_t ntolerations;
    int32_t priority;
    /* preemptionPolicy: Never (a PriorityClass's): the pod waits in its
     * priority's place in the queue but never evicts another pod */
    bool preempt_never;
    uint32_t group; /* gang: an id from gp_engine_group_add; 0 = none */
    /* how long it is expected to run, for orders that use it (shortest job
     * first, backfill); 0 = unknown */
    double duration_hint_s;
    /* GPU sharing (docs/sharing.md). share_modes: the pool sharing modes
     * the pod accepts, bits 1 << enum gp_share_mode; 0 = any its request
     * fits. mig_profile: gpu_count MIG instances of this profile
     * ("1g.10gb", as nvidia.com/mig-1g.10gb asks); NULL = none. */
    uint8_t share_modes;
    const char *mig_profile;
    uint8_t gpu_resource; /* enum gp_gpu_resource */
    /* what other pods' affinity and spreading select it by: its namespace
     * (NULL: "default") and labels */
    const char *namespace_name;
    const struct gp_kv *labels;
    size_t nlabels;
    /* its node affinity, pod (anti-)affinity and topology spread
     * constraints; NULL: none */
    const struct gp_pod_constraints *constraints;
    /* the oldest NVIDIA driver its CUDA runs on, coded as driver_version
     * (the toolkit's own minimum: docs/compat.md); 0 = no CUDA need. A node
     * with an older declared driver is rejected (GP_FILTER_DRIVER).
     * cuda_version names the CUDA for explanations ("12.2"; borrowed) */
    uint32_t cuda_driver_min;
    const char *cuda_version;
    /* what it asks of the node's other resources (struct gp_scalar;
     * borrowed); none for the simulator's pods */
    const struct gp_scalar *scalars;
    size_t nscalars;
    /* the host ports its containers bind (borrowed); none for the
     * simulator's pods */
    const struct gp_host_port *host_ports;
    size_t nhost_ports;
    /* the PersistentVolumeClaims its volumes name (borrowed); none for the
     * simulator's pods */
    const struct gp_claim_use *claims;
    size_t nclaims;
    /* the CSI volumes its claims put on its node (borrowed); none for the
     * simulator's pods */
    const struct gp_csi_volume *csi_volumes;
    size_t ncsi_volumes;
};

/* One GPU's free capacity inside a node. On a shared GPU (docs/sharing.md)
 * milli_free is what is left of the whole: the free replicas' share
 * (time-slicing, MPS) or the compute slices no pod holds (MIG). */
struct gp_gpu {
    uint32_t milli_free;
    uint32_t mem_free_mib;
    uint32_t pods;
    uint32_t mem_over_mib; /* time-slicing: declared memory beyond the GPU's */
};

/* One MIG GPU's instances and which of them hold a pod (bit i: inst[i]),
 * with the profiles (bit = profile index) of which one more instance can
 * be had: a free instance, a new one in unpartitioned slices, a new one
 * once the free instances are removed. Kept on every change (share.c). */
struct gp_mig_gpu {
    struct gp_mig_layout layout;
    uint8_t held, nheld; /* nheld: instances held */
    uint16_t free_mask, create_mask, reset_mask;
    /* dynamic pools: where a new instance of each profile would start
     * (gp_mig_place), in free slices and once free instances are removed;
     * -1 = nowhere */
    int8_t create_start[GP_MIG_MAX_PROFILES], reset_start[GP_MIG_MAX_PROFILES];
};

enum gp_node_state {
    GP_NODE_READY,
    GP_NODE_DRAINING, /* takes no new pods; its pods run until stopped */
    GP_NODE_GONE,
};

struct gp_node {
    struct gp_node_spec spec;
    uint32_t id;
    uint32_t model; /* interned spec.gpu_model, index into the engine's model table */
    enum gp_node_state state;
    int64_t cpu_free_milli;
    int64_t mem_free_mib;
    struct gp_gpu gpu[GP_MAX_GPUS_PER_NODE];
    /* summaries, kept by the engine on every bind and release */
    uint32_t gpus_whole_free;    /* GPUs with nothing on them */
    uint32_t gpu_milli_free;     /* sum of milli_free */
    uint32_t gpu_milli_max_free; /* largest milli_free of one GPU */
    uint32_t pods;
    uint32_t pods_cap; /* spec.pods_max when spec.pods_limited, else UINT32_MAX */
    /* what is free of spec.scalars[i], kept on every bind and release */
    int64_t scalar_free[GP_MAX_SCALARS];
    /* MIG nodes: mig_model indexes gp_mig_models; mig[] per GPU;
     * mig_mask: the profiles of which one more instance fits some GPU,
     * mig_way_mask: the same as a free instance, a new one in free slices,
     * a new one once free instances are removed */
    int16_t mig_model;
    uint16_t mig_mask;
    uint16_t mig_way_mask[3]; /* the same for a free instance, create, reset */
    struct gp_mig_gpu mig[GP_MAX_GPUS_PER_NODE];
};

enum gp_pod_state {
    GP_POD_PENDING,
    GP_POD_BOUND,
    GP_POD_DONE, /* finished or removed; its resources are released */
};

/* Which GPUs of a node a pod gets. For a share, ngpus is 1. On a MIG node
 * each entry is one instance, of the profile mig_profile, starting at
 * memory slice mig_start[i] of GPU gpu[i] (a GPU may appear more than
 * once); reconfigured has bit g set when GPU g's layout changes for it (a
 * dynamic pool creates the instance, removing free ones if it must). */
struct gp_pick {
    uint8_t ngpus;
    uint8_t gpu[GP_MAX_GPUS_PER_NODE];
    uint8_t mig_start[GP_MAX_GPUS_PER_NODE];
    int8_t mig_profile;
    uint16_t reconfigured;
};

struct gp_pod {
    struct gp_pod_spec spec;
    uint32_t id;
    uint32_t shape;      /* engine: its request shape, interned (pods alike share it) */
    uint64_t model_mask; /* allowed models as bits of the model table; ~0 = any */
    enum gp_pod_state state;
    int64_t seq;       /* submission order, the tie-break for age */
    double added_at_s; /* engine time of the pod_add */
    uint32_t node;     /* when bound */
    struct gp_pick pick;
    uint64_t tried_gen; /* cluster generation of the last failed attempt */
    /* the MIG profile it takes on a GPU of each MIG model (gp_mig_models
     * index): its mig_profile, or the smallest profile that holds its
     * fraction; -1 = none */
    int8_t mig_profile_of[GP_MIG_MAX_MODELS];
    uint32_t gpu_milli_taken; /* when bound: GPU milli it made unavailable */
    bool oversubscribed;      /* when bound: its declared GPU memory did not fit */
    /* engine: whether it has a node selector (bit 0), required node
     * affinity (bit 1), volume conditions (bit 2) or a ReadWriteOncePod
     * claim (bit 3): one test on the common path */
    uint8_t label_filters;
    /* a victim that would break a PodDisruptionBudget whatever else is
     * evicted (gp_engine_pod_set_pdb_violating: an older event log's
     * pod_pdb lines replayed, and tests; the Kubernetes driver gives the
     * budgets themselves, gp_engine_pdb_set and gp_engine_pod_set_pdbs,
     * counted per candidate set): evicted only after every other
     * candidate */
    bool pdb_violating;
};

/* Why a node was rejected for a pod. Each rejected node counts once, under
 * the first filter that rejected it, in this order. */
#define GP_FILTERS(X)                                                                              \
    X(NODE_STATE, "node not ready")                                                                \
    X(SELECTOR, "node(s) didn't match node selector")                                              \
    X(NODE_AFFINITY, "node(s) didn't match Pod's node affinity/selector")                          \
    X(TOPOLOGY, "node(s) outside the gang's topology domain")                                      \
    X(TAINT, "node(s) had untolerated taint")                                                      \
    X(GPU_MODEL, "node(s) had a different GPU model")                                              \
    X(SHARING, "node(s) didn't share GPUs the way the pod asks")                                   \
    X(DRIVER, "node(s) had a driver older than the pod's CUDA needs")                              \
    X(PORTS, "node(s) didn't have free ports for the requested pod ports")                         \
    X(PODS, "Too many pods")                                                                       \
    X(CPU, "Insufficient cpu")                                                                     \
    X(MEMORY, "Insufficient memory")                                                               \
    X(SCALAR, "Insufficient extended resource")                                                    \
    X(GPU_COUNT, "Insufficient nvidia.com/gpu")                                                    \
    X(GPU_SHARE, "no GPU with enough free share")                                                  \
    X(GPU_MEMORY, "no GPU with enough free GPU memory")                                            \
    X(GPU_REPLICA, "no GPU with a free shared replica")                                            \
    X(MIG, "no free MIG instance of the profile")                                                  \
    X(RWOP, "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "    \
            "access mode")                                                                         \
    X(VOLUME_LIMITS, "node(s) exceed max volume count")                                            \
    X(VOLUME_BINDING, "node(s) had volume node affinity conflict")                                 \
    X(VOLUME_BIND, "node(s) didn't find available persistent volumes to bind")                     \
    X(VOLUME_ZONE, "node(s) had no available volume zone")                                         \
    X(SPREAD, "node(s) didn't match pod topology spread constraints")                              \
    X(POD_AFFINITY, "node(s) didn't match pod affinity rules")                                     \
    X(POD_ANTI_AFFINITY, "node(s) didn't match pod anti-affinity rules")                           \
    X(EXISTING_ANTI_AFFINITY, "node(s) didn't satisfy existing pods anti-affinity rules")          \
    X(QUOTA, "queue quota exceeded")

enum gp_filter {
#define GP_FILTER_ENUM(name, text) GP_FILTER_##name,
    GP_FILTERS(GP_FILTER_ENUM)
#undef GP_FILTER_ENUM
        GP_FILTER_COUNT
};

const char *gp_filter_name(enum gp_filter f); /* e.g. "cpu", "gpu-model" */
/* The filters of kube-scheduler's affinity and spreading plugins: outputs
 * list them only when they rejected a node, so that a run that uses none
 * reads as before they existed. */
bool gp_filter_optional(enum gp_filter f);
const char *gp_filter_text(enum gp_filter f); /* the human reason */

struct gp_explain {
    uint32_t nodes_total;
    uint32_t rejected[GP_FILTER_COUNT];
};

/* "525.60" from a driver code (model.h, driver_version); with full, the
 * patch too ("535.104.05"). */
void gp_driver_text(uint32_t code, bool full, char *buf, size_t size);

/* The main reason a pod did not fit: the filter that rejected the most
 * nodes (the earlier filter on ties), topology only when no other filter
 * rejected any node (a gang tried inside one domain also sees the nodes
 * outside it rejected); GP_FILTER_COUNT when none did. */
enum gp_filter gp_explain_main(const struct gp_explain *x);

#endif
