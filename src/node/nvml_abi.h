/* nvml_abi.h - our own declarations of the part of NVIDIA's NVML C API
 * that the node agent calls (node/nvml.c) and that the test suite's fake
 * library implements (tests/fakenvml/): return codes, constants, struct
 * layouts and the calls' signatures, written from NVIDIA's public NVML API
 * reference (https://docs.nvidia.com/deploy/nvml-api/: "Device Queries",
 * "Initialization and Cleanup", "Event Handling Methods", "Multi Instance
 * GPU Management", "NvLink Methods", and the struct pages nvmlMemory_t,
 * nvmlPciInfo_t, nvmlUtilization_t, nvmlEventData_t,
 * nvmlDeviceAttributes_t, nvmlGpuInstanceInfo_t). No NVIDIA header is
 * copied or included. The names are the versioned symbols the library
 * exports (nvml.h #defines nvmlInit to nvmlInit_v2, and so on).
 *
 * NVML's enums are C enums (int-sized) and its handles opaque pointers;
 * we use int and pointers to incomplete structs, which have the same
 * representation. */
#ifndef GP_NODE_NVML_ABI_H
#define GP_NODE_NVML_ABI_H

/* nvmlReturn_t values used */
#define GP_NVML_SUCCESS                  0
#define GP_NVML_ERROR_UNINITIALIZED      1
#define GP_NVML_ERROR_INVALID_ARGUMENT   2
#define GP_NVML_ERROR_NOT_SUPPORTED      3
#define GP_NVML_ERROR_NO_PERMISSION      4
#define GP_NVML_ERROR_NOT_FOUND          6
#define GP_NVML_ERROR_DRIVER_NOT_LOADED  9
#define GP_NVML_ERROR_TIMEOUT            10
#define GP_NVML_ERROR_FUNCTION_NOT_FOUND 13
#define GP_NVML_ERROR_GPU_IS_LOST        15
#define GP_NVML_ERROR_UNKNOWN            999

/* buffer sizes: NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE (80),
 * NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE (96),
 * NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE (16) and _BUFFER_SIZE (32) */
#define GP_NVML_DRIVER_VERSION_LEN 80
#define GP_NVML_NAME_LEN           96
#define GP_NVML_UUID_LEN           96
#define GP_NVML_BUS_ID_LEGACY_LEN  16
#define GP_NVML_BUS_ID_LEN         32

#define GP_NVML_NVLINK_MAX_LINKS 18 /* NVML_NVLINK_MAX_LINKS */
#define GP_NVML_FEATURE_ENABLED  1  /* nvmlEnableState_t: NVML_FEATURE_ENABLED */
#define GP_NVML_MIG_ENABLE       1  /* NVML_DEVICE_MIG_ENABLE */
/* nvmlEventType: nvmlEventTypeXidCriticalError */
#define GP_NVML_EVENT_XID_CRITICAL 0x0000000000000008ULL
#define GP_NVML_XID_UNKNOWN        999u /* eventData when the XID is not known */

struct gp_nvml_device;       /* nvmlDevice_t points to one */
struct gp_nvml_event_set;    /* nvmlEventSet_t */
struct gp_nvml_gpu_instance; /* nvmlGpuInstance_t */

/* nvmlMemory_t: bytes */
struct gp_nvml_memory {
    unsigned long long total, free, used;
};

/* nvmlPciInfo_t (the _v3 call's layout) */
struct gp_nvml_pci_info {
    char bus_id_legacy[GP_NVML_BUS_ID_LEGACY_LEN];
    unsigned domain, bus, device;
    unsigned pci_device_id; /* device << 16 | vendor: 0x20B210DE */
    unsigned pci_subsystem_id;
    char bus_id[GP_NVML_BUS_ID_LEN]; /* "00000000:07:00.0" */
};

/* nvmlUtilization_t: percent over the last sample period */
struct gp_nvml_utilization {
    unsigned gpu, memory;
};

/* nvmlEventData_t (nvmlEventSetWait_v2) */
struct gp_nvml_event_data {
    struct gp_nvml_device *device;
    unsigned long long event_type;
    unsigned long long event_data; /* the XID */
    unsigned gpu_instance_id;      /* 0xFFFFFFFF when not attributable */
    unsigned compute_instance_id;
};

/* nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2) */
struct gp_nvml_device_attributes {
    unsigned multiprocessor_count;
    unsigned shared_copy_engine_count, shared_decoder_count, shared_encoder_count;
    unsigned shared_jpeg_count, shared_ofa_count;
    unsigned gpu_instance_slice_count, compute_instance_slice_count;
    unsigned long long memory_size_mb;
};

/* nvmlGpuInstancePlacement_t and nvmlGpuInstanceInfo_t */
struct gp_nvml_gi_placement {
    unsigned start, size;
};
struct gp_nvml_gi_info {
    struct gp_nvml_device *device;
    unsigned id, profile_id;
    struct gp_nvml_gi_placement placement;
};

/* The calls, all returning nvmlReturn_t (int), nvmlErrorString apart:
 * X(symbol, required, parameters). A call that is not required may be
 * absent from an old library: it is then treated as NOT_SUPPORTED. */
#define GP_NVML_CALLS(X)                                                                           \
    X(nvmlInit_v2, 1, (void))                                                                      \
    X(nvmlShutdown, 1, (void))                                                                     \
    X(nvmlSystemGetDriverVersion, 1, (char *version, unsigned length))                             \
    X(nvmlSystemGetCudaDriverVersion, 0, (int *version))                                           \
    X(nvmlSystemGetCudaDriverVersion_v2, 0, (int *version))                                        \
    X(nvmlDeviceGetCount_v2, 1, (unsigned *count))                                                 \
    X(nvmlDeviceGetHandleByIndex_v2, 1, (unsigned index, struct gp_nvml_device **device))          \
    X(nvmlDeviceGetName, 1, (struct gp_nvml_device * device, char *name, unsigned length))         \
    X(nvmlDeviceGetUUID, 1, (struct gp_nvml_device * device, char *uuid, unsigned length))         \
    X(nvmlDeviceGetMemoryInfo, 1,                                                                  \
      (struct gp_nvml_device * device, struct gp_nvml_memory * memory))                            \
    X(nvmlDeviceGetPciInfo_v3, 1, (struct gp_nvml_device * device, struct gp_nvml_pci_info * pci)) \
    X(nvmlDeviceGetCudaComputeCapability, 0,                                                       \
      (struct gp_nvml_device * device, int *major, int *minor))                                    \
    X(nvmlDeviceGetMigMode, 0,                                                                     \
      (struct gp_nvml_device * device, unsigned *current, unsigned *pending))                      \
    X(nvmlDeviceGetMaxMigDeviceCount, 0, (struct gp_nvml_device * device, unsigned *count))        \
    X(nvmlDeviceGetMigDeviceHandleByIndex, 0,                                                      \
      (struct gp_nvml_device * device, unsigned index, struct gp_nvml_device **mig))               \
    X(nvmlDeviceGetGpuInstanceId, 0, (struct gp_nvml_device * device, unsigned *id))               \
    X(nvmlDeviceGetComputeInstanceId, 0, (struct gp_nvml_device * device, unsigned *id))           \
    X(nvmlDeviceGetAttributes_v2, 0,                                                               \
      (struct gp_nvml_device * device, struct gp_nvml_device_attributes * attributes))             \
    X(nvmlDeviceGetGpuInstanceById, 0,                                                             \
      (struct gp_nvml_device * device, unsigned id, struct gp_nvml_gpu_instance **gi))             \
    X(nvmlGpuInstanceGetInfo, 0,                                                                   \
      (struct gp_nvml_gpu_instance * gi, struct gp_nvml_gi_info * info))                           \
    X(nvmlDeviceGetUtilizationRates, 0,                                                            \
      (struct gp_nvml_device * device, struct gp_nvml_utilization * utilization))                  \
    X(nvmlDeviceGetNvLinkState, 0, (struct gp_nvml_device * device, unsigned link, int *active))   \
    X(nvmlDeviceGetNvLinkRemotePciInfo_v2, 0,                                                      \
      (struct gp_nvml_device * device, unsigned link, struct gp_nvml_pci_info *pci))               \
    X(nvmlDeviceGetPersistenceMode, 0, (struct gp_nvml_device * device, int *mode))                \
    X(nvmlDeviceGetRemappedRows, 0,                                                                \
      (struct gp_nvml_device * device, unsigned *corr_rows, unsigned *unc_rows,                    \
       unsigned *is_pending, unsigned *failure_occurred))                                          \
    X(nvmlEventSetCreate, 0, (struct gp_nvml_event_set * *set))                                    \
    X(nvmlDeviceRegisterEvents, 0,                                                                 \
      (struct gp_nvml_device * device, unsigned long long types, struct gp_nvml_event_set *set))   \
    X(nvmlEventSetWait_v2, 0,                                                                      \
      (struct gp_nvml_event_set * set, struct gp_nvml_event_data * data, unsigned timeout_ms))     \
    X(nvmlEventSetFree, 0, (struct gp_nvml_event_set * set))

/* const char *nvmlErrorString(nvmlReturn_t result): required too. */
#define GP_NVML_ERROR_STRING_SYM "nvmlErrorString"

#endif
