/* sharing.h - how a node pool's GPUs are shared, as the Cluster spec's
 * `sharing:` says it (src/io/cluster_sharing.c reads and checks it) and as
 * NVIDIA's stack implements it: whole GPUs (exclusive), time-slicing and
 * MPS (each GPU advertised `replicas` times by the device plugin), or MIG
 * (each GPU split into GPU instances, src/engine/mig.h).
 *
 * A pool owns one gp_sharing_spec (in its gp_pool_spec); every node of the
 * pool points at it (gp_node_spec.sharing, NULL for exclusive). It lives in
 * the run's arena and is never changed after the reader checked it. */
#ifndef GP_ENGINE_SHARING_H
#define GP_ENGINE_SHARING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/mig.h"

enum gp_share_mode {
    GP_SHARE_EXCLUSIVE = 0, /* one pod per GPU; the default */
    GP_SHARE_TIMESLICE,     /* CUDA time-slicing: no memory or fault isolation */
    GP_SHARE_MPS,           /* CUDA MPS: per-client thread % and pinned memory limits */
    GP_SHARE_MIG,           /* MIG GPU instances: hardware isolation */
};

enum gp_mig_strategy {
    GP_MIG_MIXED = 0, /* instances as nvidia.com/mig-<profile> (the default) */
    GP_MIG_SINGLE,    /* identical instances, each as nvidia.com/gpu */
};

#define GP_SHARE_MAX_REPLICAS 256 /* time-slicing replicas per GPU we accept */
#define GP_MPS_MAX_CLIENTS    48  /* MPS clients per GPU, Volta and newer */
/* Seconds a dynamic MIG re-partition takes before the new instance serves
 * its pod: destroying and creating the GPU instance and the device plugin
 * advertising it again (docs/sharing.md). */
#define GP_MIG_RECONFIGURE_S 60.0

struct gp_sharing_spec {
    enum gp_share_mode mode;
    /* timeslice and mps: the device plugin advertises each GPU this many
     * times (>= 2); 1 for exclusive and mig */
    uint32_t replicas;
    bool rename_by_default;              /* advertise nvidia.com/gpu.shared */
    bool fail_requests_greater_than_one; /* the plugin refuses requests > 1 (always for mps) */
    bool oversubscribe; /* timeslice: place pods whose declared GPU memory does not fit, flagged */
    /* timeslice, mps: a pod's replicas each on another GPU (the live
     * scheduler's nodes: gpuplane.io/gpus names each GPU once, and the node
     * agent refuses two replicas of one GPU for one container, NVIDIA
     * k8s-device-plugin #491); false in the simulator, where several
     * replicas of a pod may share a GPU as they may on a real node */
    bool distinct_replicas;
    struct {
        /* per client (one replica); defaults as NVIDIA's device plugin sets
         * them: 100 / replicas and the GPU's memory / replicas (0 when the
         * pool does not give its GPU memory) */
        uint32_t active_thread_pct;
        uint32_t pinned_mem_mib;
    } mps;
    struct {
        enum gp_mig_strategy strategy;
        const struct gp_mig_model *model; /* the pool's GPU model */
        const char *config;               /* the mig-parted config name written, or NULL */
        struct gp_mig_layout layout;      /* per GPU, placed; may be empty when dynamic */
        /* not dynamic: each GPU's own layout (gpu_count of them, borrowed)
         * when the node's GPUs differ (mig-parted applies a config per
         * device); NULL: every GPU has layout */
        const struct gp_mig_layout *gpu_layouts;
        bool dynamic; /* the engine may re-partition an empty GPU for pending pods */
        /* dynamic: seconds from a re-partition to its instance serving the
         * pod (0: GP_MIG_RECONFIGURE_S) */
        double reconfigure_s;
    } mig;
};

/* "exclusive", "timeslice", "mps", "mig". */
const char *gp_share_mode_name(enum gp_share_mode mode);
/* A list of mode names separated by commas (spaces around each allowed),
 * as the gpuplane.io/sharing annotation gives it, into *modes (bit 1 <<
 * mode each); false, *modes left alone, when a name is none of them. */
bool gp_share_modes_parse(const char *list, uint8_t *modes);
/* "mixed", "single". */
const char *gp_mig_strategy_name(enum gp_mig_strategy strategy);

/* The extended resource a pod asks for on a pool shared this way, as NVIDIA's
 * device plugin advertises it: "nvidia.com/gpu", or "nvidia.com/gpu.shared"
 * for renamed replicas. For mig, pass a profile index: the mixed strategy's
 * "nvidia.com/mig-1g.10gb", or "nvidia.com/gpu" under single. Writes into
 * buf and returns it. */
const char *gp_sharing_resource(const struct gp_sharing_spec *s, int mig_profile, char *buf,
                                size_t size);

/* What NVIDIA's GPU feature discovery (GFD) labels a node of a pool shared
 * this way with (its internal/lm/resource.go, docs/sharing.md):
 * nvidia.com/gpu.product is the model, with "-SHARED" appended on
 * time-sliced and MPS GPUs that are not renamed (renameByDefault false);
 * nvidia.com/gpu.replicas is the replicas (1 for whole GPUs, 0 for MIG's
 * mixed strategy, whose GPUs GFD labels without sharing);
 * nvidia.com/gpu.sharing-strategy is "time-slicing", "mps" or "none". s may
 * be NULL (exclusive). The product is written into buf and returned. */
#define GP_GFD_SHARED_SUFFIX "-SHARED"
const char *gp_sharing_gfd_product(const struct gp_sharing_spec *s, const char *model, char *buf,
                                   size_t size);
uint32_t gp_sharing_gfd_replicas(const struct gp_sharing_spec *s);
const char *gp_sharing_gfd_strategy(const struct gp_sharing_spec *s);
/* The length of the GPU model in a gpu.product label value: the whole
 * value, less a "-SHARED" suffix. */
size_t gp_sharing_gfd_model_len(const char *product);

/* The node label that says what the device plugin of a time-sliced or MPS
 * node does with a container asking more than one replica: "true" when it
 * fails it (failRequestsGreaterThanOne, always under MPS), "false" when it
 * hands out that many. gpuplane's node agent sets it from its sharing
 * config (node/labels.c), `gpuplane render` writes it into each shared
 * pool's node-labels.yaml beside the plugin config it renders (io/render.c),
 * and the live scheduler reads it (kube/objects_share.c); absent, the
 * plugin's default: false for time-slicing, true for MPS (NVIDIA's
 * k8s-device-plugin README, "Shared Access to GPUs"). It is not GFD's: the
 * API shows nothing else of that setting. */
#define GP_SHARING_LABEL_FAIL_GT1 "gpuplane.io/fail-requests-greater-than-one"

#endif
