/* devices.h - what the device plugin advertises and hands out, as NVIDIA's
 * k8s-device-plugin does (README "Shared Access to GPUs", "Configuration
 * Option Details"; internal/rm/device_map.go): the resources of a node
 * (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-<profile>), their
 * device IDs (a GPU or MIG UUID; "<uuid>::<n>" for the n-th replica of a
 * shared one), the preferred allocation (NVLink-aligned whole GPUs, the
 * scheduler's choice first) and a container's Allocate answer
 * (NVIDIA_VISIBLE_DEVICES by UUID, the MPS limits, CDI device names).
 *
 * No gRPC here: plugin.c carries these over the wire. */
#ifndef GP_NODE_DEVICES_H
#define GP_NODE_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/inventory.h"
#include "util/err.h"

#define GP_NODE_MAX_RESOURCES 9  /* nvidia.com/gpu and up to eight MIG profiles */
#define GP_NODE_DEV_ID_LEN    64 /* the API: "Max length of this field is 63 characters" */
#define GP_NODE_ALLOC_MAX     64 /* devices one container may get */

/* One advertised device. */
struct gp_node_dev {
    char id[GP_NODE_DEV_ID_LEN]; /* "GPU-…", "MIG-…" or "GPU-…::3" */
    char uuid[GP_NODE_UUID_LEN]; /* what the container sees: the GPU or MIG UUID */
    size_t gpu;                  /* position in the inventory's gpus[] */
    int mig;                     /* position in that GPU's migs[]; -1: the whole GPU */
    unsigned replica;            /* 0..replicas-1 */
    uint64_t memory_mib;         /* of the GPU or MIG device (MPS: split by replicas) */
    bool healthy;
};

/* One resource: a socket, a Register, a ListAndWatch stream of its own. */
struct gp_node_resource {
    char name[64];   /* "nvidia.com/gpu" */
    char socket[96]; /* "nvidia-gpu.sock": NVIDIA's names */
    unsigned replicas;
    bool shared; /* replicas > 1 */
    size_t n;
    struct gp_node_dev *devs; /* malloc'd */
};

struct gp_node_devset {
    struct gp_node_sharing sharing;
    size_t n_resources;
    struct gp_node_resource res[GP_NODE_MAX_RESOURCES];
};

/* The resources of a node under a sharing configuration. GP_EINVALID
 * with a one-line diag for a configuration NVIDIA's plugin refuses too:
 * replicas 0, MPS with MIG devices, the single strategy over GPUs whose
 * MIG layouts differ, an ID over 63 characters. */
enum gp_err gp_node_devset_build(const struct gp_node_inventory *inv,
                                 const struct gp_node_sharing *sh, struct gp_node_devset *out,
                                 struct gp_diag *diag);
void gp_node_devset_free(struct gp_node_devset *s);

/* Health from the inventory (a MIG device follows its GPU); true when a
 * device of r changed. */
bool gp_node_devset_health(struct gp_node_resource *r, const struct gp_node_inventory *inv);

/* The device of r with that ID; -1 when none. */
long gp_node_dev_find(const struct gp_node_resource *r, const char *id);

/* The scheduler's choice for the container at hand: GPUs by NVML index.
 * For a pod of one container it is the pod's gpuplane.io/gpus; for a pod
 * of several, the part of that list the container gets (node/podseq.h,
 * docs/node.md "Pods of several containers"). MIG devices are checked
 * against the pod's GPUs (pod_index, or index when n_pod is 0): a pod
 * may hold several instances of one GPU. */
struct gp_node_choice {
    bool set;
    size_t n;
    unsigned index[GP_NODE_MAX_GPUS];
    size_t n_pod; /* 0: the same as index */
    unsigned pod_index[GP_NODE_MAX_GPUS];
    char pod[320];      /* "ns/name" (63 + 1 + 253 characters at most), for messages */
    char container[64]; /* the container served; "" when the pod's spec was not read */
    /* The MIG instances the scheduler chose for the pod (gpuplane.io/mig,
     * docs/kube.md "Annotations": "1g.10gb:0@0,0@1"), each a GPU index and
     * the instance's first memory slice; n_mig 0 when the pod names none
     * (its MIG devices are then only checked against its GPUs). */
    size_t n_mig;
    char mig_profile[32];
    unsigned mig_gpu[GP_NODE_ALLOC_MAX], mig_start[GP_NODE_ALLOC_MAX];
};

/* The MIG instances of gpuplane.io/mig ("1g.10gb:0@0,0@1,3@6") into c,
 * whose index[0..n-1] already holds the pod's gpuplane.io/gpus.
 * GP_EINVALID with a one-line diag: not PROFILE:GPU@SLICE,..., an
 * instance named twice, more than GP_NODE_ALLOC_MAX of them, a GPU that
 * gpuplane.io/gpus does not name. */
enum gp_err gp_node_choice_mig_parse(const char *s, struct gp_node_choice *c, struct gp_diag *diag);

/* GetPreferredAllocation for one container: size devices of avail
 * including must. With a choice: replicas on the chosen GPUs (one per
 * GPU); MIG devices of a choice with instances: those instances only
 * (in the annotation's order; fewer when the kubelet has not them all). Otherwise whole GPUs the
 * most NVLinked together (then the lowest indexes) and, for replicas, distinct GPUs with the most
 * free replicas. Never two replicas of one GPU. out receives device positions in r; returns how
 * many (less than size when avail cannot give it). */
size_t gp_node_dev_prefer(const struct gp_node_resource *r, const struct gp_node_inventory *inv,
                          const char *const *avail, size_t n_avail, const char *const *must,
                          size_t n_must, size_t size, const struct gp_node_choice *choice,
                          size_t *out);

/* One container's Allocate answer. */
struct gp_node_alloc {
    size_t n;
    size_t dev[GP_NODE_ALLOC_MAX]; /* device positions in r */
    size_t n_asked;                /* the kubelet's IDs, as asked */
    char asked[GP_NODE_ALLOC_MAX][GP_NODE_DEV_ID_LEN];
    char visible[GP_NODE_ALLOC_MAX * GP_NODE_UUID_LEN]; /* NVIDIA_VISIBLE_DEVICES */
    bool mps;
    unsigned mps_thread_percent; /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE */
    char
        mps_mem_limit[GP_NODE_ALLOC_MAX * 24]; /* CUDA_MPS_PINNED_DEVICE_MEM_LIMIT "0=10240M,1=…" */
    /* MPS: how the container reaches the control daemon of its resource, as
     * NVIDIA's plugin answers (internal/plugin/mps.go updateReponse, with
     * internal/mps/root.go): CUDA_MPS_PIPE_DIRECTORY and the container path
     * of the pipe mount "/mps/<resource>/pipe", its host path
     * "<mpsRoot>/<resource>/pipe", and /dev/shm mounted from "<mpsRoot>/shm" */
    char mps_pipe_dir[128];
    char mps_pipe_host[384];
    char mps_shm_host[288];
};

/* Allocate for one container's device IDs. Refused (GP_EINVALID, the
 * reason in diag): an unknown or duplicate ID (HAMi #1741), two replicas
 * of one GPU or of one MIG device (NVIDIA #491), more than one shared
 * device under failRequestsGreaterThanOne, a choice the request cannot
 * match (its size differs; MIG devices that are not the instances the
 * scheduler chose, or, when it named none, off the pod's GPUs; a MIG
 * device whose placement NVML did not give). With a choice for whole
 * GPUs or replicas, the container gets the chosen GPUs whatever IDs the
 * kubelet picked (the scheduler is the one that books them); MIG devices
 * are never swapped (docs/node.md, "Which pod an Allocate serves"). */
enum gp_err gp_node_dev_allocate(const struct gp_node_resource *r,
                                 const struct gp_node_inventory *inv, const char *const *ids,
                                 size_t n_ids, const struct gp_node_choice *choice,
                                 const struct gp_node_sharing *sh, struct gp_node_alloc *out,
                                 struct gp_diag *diag);

#endif
