/* inventory.h - a node's GPUs as the node agent knows them: the one
 * description that discovery fills (NVML, or a test by hand) and that the
 * labels, the CDI spec, the device plugin, health and the doctor read.
 *
 * Everything is fixed-size and owned by the struct itself (no pointers),
 * so an inventory can be copied by assignment, compared field by field and
 * swapped in one step when discovery runs again. Strings are
 * NUL-terminated and truncated to their arrays. */
#ifndef GP_NODE_INVENTORY_H
#define GP_NODE_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GP_NODE_MAX_GPUS 64 /* GPUs one node can report */
#define GP_NODE_MAX_MIGS 7  /* MIG devices per GPU (A100/H100: at most seven) */
#define GP_NODE_UUID_LEN 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96 */
#define GP_NODE_NAME_LEN 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE is 96 */
#define GP_NODE_PCI_LEN  32 /* "00000000:07:00.0" */
#define GP_NODE_VER_LEN  32 /* "535.104.05" */

/* One MIG device (a GPU instance with one compute instance), as
 * nvidia-smi -L lists it. */
struct gp_node_mig {
    char uuid[GP_NODE_UUID_LEN]; /* "MIG-…" */
    char profile[32];            /* "1g.10gb", the name the mixed strategy advertises */
    unsigned gi_id, ci_id;       /* GPU and compute instance ids */
    unsigned start, size;        /* placement on the GPU, in memory slices */
    uint64_t memory_mib;
    /* nvmlDeviceGetAttributes_v2 on the MIG device: what GFD labels as
     * nvidia.com/mig-<profile>.{multiprocessors,slices.*,engines.*} */
    unsigned multiprocessors;
    unsigned gi_slices, ci_slices; /* gpuInstanceSliceCount, computeInstanceSliceCount */
    unsigned engines_copy, engines_decoder, engines_encoder, engines_jpeg, engines_ofa;
};

/* One physical GPU. */
struct gp_node_gpu {
    unsigned index;              /* NVML's device index */
    char uuid[GP_NODE_UUID_LEN]; /* "GPU-…" */
    char name[GP_NODE_NAME_LEN]; /* NVML's product name, "NVIDIA A100-SXM4-80GB" */
    char pci_bus_id[GP_NODE_PCI_LEN];
    uint64_t memory_mib;         /* total framebuffer memory */
    unsigned cc_major, cc_minor; /* CUDA compute capability */
    bool mig_capable;            /* the GPU supports MIG */
    bool mig_enabled;            /* MIG mode currently on */
    size_t n_migs;
    struct gp_node_mig migs[GP_NODE_MAX_MIGS];
    uint64_t nvlink_peers; /* bit i set: an active NVLink to the GPU of index i */
    unsigned util_percent; /* last sample of GPU utilisation */
    uint64_t memory_used_mib;
    bool persistence_mode; /* NVML's persistence mode on (nvmlDeviceGetPersistenceMode) */
    bool healthy;          /* false while an XID keeps it out (node/health) */
    /* a row remapping pends until a GPU reset (nvmlDeviceGetRemappedRows'
     * isPending, Ampere and newer): 1 pending, 0 not, -1 not known (not
     * supported, or MIG instances active) */
    int remap_pending;
    unsigned last_xid; /* the last XID seen on it; 0 for none */
};

/* A node's GPUs and driver. */
struct gp_node_inventory {
    char driver_version[GP_NODE_VER_LEN]; /* "535.104.05" */
    int cuda_driver_version;              /* as NVML says it: 12020 for CUDA 12.2 */
    size_t n_gpus;
    struct gp_node_gpu gpus[GP_NODE_MAX_GPUS];
};

/* How the device plugin shares the node's GPUs (NVIDIA k8s-device-plugin's
 * config file: sharing.timeSlicing / sharing.mps, and the MIG strategy). */
enum gp_node_share_mode {
    GP_NODE_SHARE_NONE,
    GP_NODE_SHARE_TIME_SLICING,
    GP_NODE_SHARE_MPS,
};

enum gp_node_mig_strategy {
    GP_NODE_MIG_NONE,   /* MIG devices not advertised */
    GP_NODE_MIG_SINGLE, /* every GPU in one MIG layout, advertised as nvidia.com/gpu */
    GP_NODE_MIG_MIXED,  /* advertised as nvidia.com/mig-<profile> */
};

#define GP_NODE_SHARING_MAX_NAMES 9 /* nvidia.com/gpu and eight MIG profiles */

struct gp_node_sharing {
    enum gp_node_share_mode mode;
    unsigned replicas;      /* per GPU; 1 when not shared */
    bool rename_by_default; /* shared GPUs advertised as nvidia.com/gpu.shared */
    bool fail_requests_greater_than_one;
    enum gp_node_mig_strategy mig_strategy;
    /* The resources shared, as the config file names them
     * (sharing.timeSlicing.resources[].name: "nvidia.com/gpu",
     * "nvidia.com/mig-1g.10gb"): NVIDIA's plugin replicates, and renames,
     * only those (api/config/v1 ReplicatedResources; GFD labels the others
     * with replicas 1, internal/lm/resource.go). None named (the
     * --time-slicing and --mps flags): nvidia.com/gpu alone. */
    size_t n_named;
    char named[GP_NODE_SHARING_MAX_NAMES][64];
    /* MPS: the host directory NVIDIA's MPS control daemon keeps its
     * per-resource pipe directories and its shm under (flags.mpsRoot,
     * NVIDIA's --mps-root); "" is NVIDIA's default GP_NODE_MPS_ROOT_DEFAULT */
    char mps_root[256];
};

#define GP_NODE_MPS_ROOT_DEFAULT "/run/nvidia/mps"

/* Whether sh replicates the resource (its name before any ".shared":
 * "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"; under MIG's single strategy
 * the MIG devices are nvidia.com/gpu). */
static inline bool gp_node_sharing_replicates(const struct gp_node_sharing *sh,
                                              const char *resource)
{
    if (sh->mode == GP_NODE_SHARE_NONE || sh->replicas < 2)
        return false;
    if (sh->n_named == 0)
        return strcmp(resource, "nvidia.com/gpu") == 0;
    for (size_t i = 0; i < sh->n_named && i < GP_NODE_SHARING_MAX_NAMES; i++)
        if (strcmp(sh->named[i], resource) == 0)
            return true;
    return false;
}

#endif
