/* nvml.c - NVML loaded with dlopen and the node's GPUs read from it
 * (node/nvml.h): symbols resolved from our own declarations
 * (node/nvml_abi.h), the inventory filled GPU by GPU, MIG devices named
 * with the engine's MIG tables, NVLink peers matched by PCI bus id, and the
 * XID event set. */
#include "node/nvml.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/mig.h"
#include "node/nvml_abi.h"

struct nvml_calls {
#define GP_X(name, req, params) int(*name) params;
    GP_NVML_CALLS(GP_X)
#undef GP_X
};

static const struct {
    const char *name;
    bool required;
    size_t offset;
} nvml_syms[] = {
#define GP_X(name, req, params) {#name, req, offsetof(struct nvml_calls, name)},
    GP_NVML_CALLS(GP_X)
#undef GP_X
};

struct gp_nvml {
    void *lib;
    struct nvml_calls c;
    const char *(*error_string)(int);
    struct gp_nvml_event_set *events;
    int lost_gpu;    /* the GPU the last failure found lost; -1 none */
    unsigned n_devs; /* the handles the event set knows, by NVML index */
    struct gp_nvml_device *devs[GP_NODE_MAX_GPUS];
};

int gp_nvml_exit_code(enum gp_err err)
{
    return err == GP_ENOTFOUND ? GP_NVML_EXIT_NO_DRIVER : gp_err_exit_code(err);
}

static const char *errstr(const struct gp_nvml *nv, int rc)
{
    const char *s = nv->error_string ? nv->error_string(rc) : NULL;
    return s && *s ? s : "unknown NVML error";
}

/* A call that is absent from the library reads as NOT_SUPPORTED. */
#define OPT(nv, fn, ...) ((nv)->c.fn ? (nv)->c.fn(__VA_ARGS__) : GP_NVML_ERROR_NOT_SUPPORTED)

/* What an optional query's answer means: the value is there (true), NVML
 * has no such value for this device (false: NOT_SUPPORTED, NOT_FOUND,
 * NO_PERMISSION), or the call failed (an error in diag). */
static bool absent(int rc)
{
    return rc == GP_NVML_ERROR_NOT_SUPPORTED || rc == GP_NVML_ERROR_NOT_FOUND ||
           rc == GP_NVML_ERROR_NO_PERMISSION || rc == GP_NVML_ERROR_FUNCTION_NOT_FOUND;
}

static enum gp_err fail(struct gp_nvml *nv, struct gp_diag *diag, const char *call, int gpu, int rc)
{
    if (rc == GP_NVML_ERROR_GPU_IS_LOST)
        nv->lost_gpu = gpu;
    if (gpu >= 0)
        return gp_diag_set(diag, GP_EIO, "NVML: %s on GPU %d: %s", call, gpu, errstr(nv, rc));
    return gp_diag_set(diag, GP_EIO, "NVML: %s: %s", call, errstr(nv, rc));
}

enum gp_err gp_nvml_open(const char *path, struct gp_nvml **out, struct gp_diag *diag)
{
    *out = NULL;
    bool given = true;
    if (!path || !*path) {
        path = getenv(GP_NVML_ENV);
        if (!path || !*path) {
            path = GP_NVML_LIB;
            given = false;
        }
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        if (!given)
            return gp_diag_set(diag, GP_ENOTFOUND, "%s", GP_NVML_NO_DRIVER_MSG);
        const char *why = dlerror();
        return gp_diag_set(diag, GP_ENOTFOUND,
                           "NVML: %s not loaded (%s): is the NVIDIA driver "
                           "installed?",
                           path, why ? why : "dlopen failed");
    }
    struct gp_nvml *nv = calloc(1, sizeof *nv);
    if (!nv) {
        dlclose(lib);
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    }
    nv->lib = lib;
    nv->lost_gpu = -1;
    for (size_t i = 0; i < sizeof nvml_syms / sizeof nvml_syms[0]; i++) {
        void *p = dlsym(lib, nvml_syms[i].name);
        if (!p && nvml_syms[i].required) {
            gp_diag_set(diag, GP_EIO, "NVML: %s lacks %s: not a usable libnvidia-ml", path,
                        nvml_syms[i].name);
            dlclose(lib);
            free(nv);
            return GP_EIO;
        }
        memcpy((char *)&nv->c + nvml_syms[i].offset, &p, sizeof p);
    }
    void *es = dlsym(lib, GP_NVML_ERROR_STRING_SYM);
    memcpy(&nv->error_string, &es, sizeof es);
    int rc = nv->c.nvmlInit_v2();
    if (rc != GP_NVML_SUCCESS) {
        enum gp_err err = GP_EIO;
        if (rc == GP_NVML_ERROR_DRIVER_NOT_LOADED)
            err = gp_diag_set(diag, GP_ENOTFOUND,
                              "NVML: nvmlInit_v2: %s: is the NVIDIA kernel driver loaded?",
                              errstr(nv, rc));
        else
            err = fail(nv, diag, "nvmlInit_v2", -1, rc);
        dlclose(lib);
        free(nv);
        return err;
    }
    *out = nv;
    return GP_OK;
}

void gp_nvml_close(struct gp_nvml *nv)
{
    if (!nv)
        return;
    if (nv->events)
        OPT(nv, nvmlEventSetFree, nv->events);
    nv->c.nvmlShutdown();
    dlclose(nv->lib);
    free(nv);
}

/* src copied into dst[n], cut to fit and NUL-terminated. */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static uint64_t mib(unsigned long long bytes)
{
    return bytes / (1024ull * 1024ull);
}

/* The MIG profile's name: from the engine's table (data/mig-profiles.json)
 * by NVML's profile id, else by the slices and memory; else built as NVML
 * names them, "<slices>g.<GiB rounded up>gb". A compute instance smaller
 * than its GPU instance is "<ci>c.<profile>". */
static void mig_profile_name(const struct gp_node_gpu *g, unsigned pci_id, bool have_profile_id,
                             unsigned profile_id, struct gp_node_mig *m)
{
    const struct gp_mig_model *model = gp_mig_model_find(g->name);
    if (!model)
        model = gp_mig_model_by_pci(pci_id);
    const struct gp_mig_profile *best = NULL;
    for (size_t i = 0; model && i < model->nprofiles; i++) {
        const struct gp_mig_profile *p = &model->profiles[i];
        if (have_profile_id && p->smi_id == profile_id) {
            best = p;
            break;
        }
        if (have_profile_id || (m->gi_slices && p->compute_slices != m->gi_slices) ||
            p->media_ext || p->memory_mib < m->memory_mib)
            continue;
        if (m->size && p->memory_slices != m->size)
            continue;
        if (!best || p->memory_mib < best->memory_mib)
            best = p;
    }
    char base[32];
    if (best)
        copy_str(base, sizeof base, best->name);
    else
        snprintf(base, sizeof base, "%ug.%llugb", m->gi_slices,
                 (unsigned long long)((m->memory_mib + 1023) / 1024));
    if (m->ci_slices && m->ci_slices < m->gi_slices)
        snprintf(m->profile, sizeof m->profile, "%uc.%.16s", m->ci_slices, base);
    else
        copy_str(m->profile, sizeof m->profile, base);
    if (best && !m->size)
        m->size = best->memory_slices;
}

static enum gp_err read_mig(struct gp_nvml *nv, struct gp_nvml_device *dev, unsigned gi,
                            struct gp_node_gpu *g, unsigned pci_id, struct gp_diag *diag)
{
    unsigned max = 0;
    int rc = OPT(nv, nvmlDeviceGetMaxMigDeviceCount, dev, &max);
    if (absent(rc))
        return GP_OK;
    if (rc != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetMaxMigDeviceCount", (int)gi, rc);
    for (unsigned k = 0; k < max && g->n_migs < GP_NODE_MAX_MIGS; k++) {
        struct gp_nvml_device *md = NULL;
        rc = OPT(nv, nvmlDeviceGetMigDeviceHandleByIndex, dev, k, &md);
        if (rc == GP_NVML_ERROR_NOT_FOUND || rc == GP_NVML_ERROR_INVALID_ARGUMENT)
            continue; /* an empty slot */
        if (rc != GP_NVML_SUCCESS)
            return fail(nv, diag, "nvmlDeviceGetMigDeviceHandleByIndex", (int)gi, rc);
        struct gp_node_mig *m = &g->migs[g->n_migs];
        memset(m, 0, sizeof *m);
        char uuid[GP_NVML_UUID_LEN] = "";
        if ((rc = nv->c.nvmlDeviceGetUUID(md, uuid, sizeof uuid)) != GP_NVML_SUCCESS)
            return fail(nv, diag, "nvmlDeviceGetUUID (MIG device)", (int)gi, rc);
        copy_str(m->uuid, sizeof m->uuid, uuid);
        if ((rc = OPT(nv, nvmlDeviceGetGpuInstanceId, md, &m->gi_id)) != GP_NVML_SUCCESS &&
            !absent(rc))
            return fail(nv, diag, "nvmlDeviceGetGpuInstanceId", (int)gi, rc);
        if ((rc = OPT(nv, nvmlDeviceGetComputeInstanceId, md, &m->ci_id)) != GP_NVML_SUCCESS &&
            !absent(rc))
            return fail(nv, diag, "nvmlDeviceGetComputeInstanceId", (int)gi, rc);
        struct gp_nvml_memory mem = {0};
        if ((rc = nv->c.nvmlDeviceGetMemoryInfo(md, &mem)) != GP_NVML_SUCCESS)
            return fail(nv, diag, "nvmlDeviceGetMemoryInfo (MIG device)", (int)gi, rc);
        m->memory_mib = mib(mem.total);
        struct gp_nvml_device_attributes at = {0};
        rc = OPT(nv, nvmlDeviceGetAttributes_v2, md, &at);
        if (rc == GP_NVML_SUCCESS) {
            m->multiprocessors = at.multiprocessor_count;
            m->gi_slices = at.gpu_instance_slice_count;
            m->ci_slices = at.compute_instance_slice_count;
            m->engines_copy = at.shared_copy_engine_count;
            m->engines_decoder = at.shared_decoder_count;
            m->engines_encoder = at.shared_encoder_count;
            m->engines_jpeg = at.shared_jpeg_count;
            m->engines_ofa = at.shared_ofa_count;
        } else if (!absent(rc)) {
            return fail(nv, diag, "nvmlDeviceGetAttributes_v2", (int)gi, rc);
        }
        /* The placement and profile id: the GPU instance's info (root only
         * on real drivers: NO_PERMISSION leaves them to the tables). */
        bool have_profile = false;
        struct gp_nvml_gpu_instance *ginst = NULL;
        rc = OPT(nv, nvmlDeviceGetGpuInstanceById, dev, m->gi_id, &ginst);
        if (rc == GP_NVML_SUCCESS) {
            struct gp_nvml_gi_info info = {0};
            rc = OPT(nv, nvmlGpuInstanceGetInfo, ginst, &info);
            if (rc == GP_NVML_SUCCESS) {
                m->start = info.placement.start;
                m->size = info.placement.size;
                have_profile = true;
                mig_profile_name(g, pci_id, true, info.profile_id, m);
            } else if (!absent(rc)) {
                return fail(nv, diag, "nvmlGpuInstanceGetInfo", (int)gi, rc);
            }
        } else if (!absent(rc)) {
            return fail(nv, diag, "nvmlDeviceGetGpuInstanceById", (int)gi, rc);
        }
        if (!have_profile || !m->profile[0])
            mig_profile_name(g, pci_id, false, 0, m);
        g->n_migs++;
    }
    return GP_OK;
}

/* One GPU's fields (NVLink apart: it needs every GPU's bus id). */
static enum gp_err read_gpu(struct gp_nvml *nv, unsigned i, struct gp_nvml_device *dev,
                            struct gp_node_gpu *g, struct gp_diag *diag)
{
    int rc;
    g->index = i;
    g->healthy = true;
    char name[GP_NVML_NAME_LEN] = "", uuid[GP_NVML_UUID_LEN] = "";
    if ((rc = nv->c.nvmlDeviceGetName(dev, name, sizeof name)) != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetName", (int)i, rc);
    if ((rc = nv->c.nvmlDeviceGetUUID(dev, uuid, sizeof uuid)) != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetUUID", (int)i, rc);
    copy_str(g->name, sizeof g->name, name);
    copy_str(g->uuid, sizeof g->uuid, uuid);
    struct gp_nvml_pci_info pci = {0};
    if ((rc = nv->c.nvmlDeviceGetPciInfo_v3(dev, &pci)) != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetPciInfo_v3", (int)i, rc);
    pci.bus_id[sizeof pci.bus_id - 1] = '\0';
    copy_str(g->pci_bus_id, sizeof g->pci_bus_id, pci.bus_id);
    struct gp_nvml_memory mem = {0};
    if ((rc = nv->c.nvmlDeviceGetMemoryInfo(dev, &mem)) != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetMemoryInfo", (int)i, rc);
    g->memory_mib = mib(mem.total);
    g->memory_used_mib = mib(mem.used);
    int major = 0, minor = 0;
    rc = OPT(nv, nvmlDeviceGetCudaComputeCapability, dev, &major, &minor);
    if (rc == GP_NVML_SUCCESS) {
        g->cc_major = major > 0 ? (unsigned)major : 0;
        g->cc_minor = minor > 0 ? (unsigned)minor : 0;
    } else if (!absent(rc)) {
        return fail(nv, diag, "nvmlDeviceGetCudaComputeCapability", (int)i, rc);
    }
    unsigned cur = 0, pend = 0;
    rc = OPT(nv, nvmlDeviceGetMigMode, dev, &cur, &pend);
    if (rc == GP_NVML_SUCCESS) {
        g->mig_capable = true;
        g->mig_enabled = cur == GP_NVML_MIG_ENABLE;
    } else if (!absent(rc)) {
        return fail(nv, diag, "nvmlDeviceGetMigMode", (int)i, rc);
    }
    if (g->mig_enabled) {
        enum gp_err err = read_mig(nv, dev, i, g, pci.pci_device_id, diag);
        if (err != GP_OK)
            return err;
    }
    struct gp_nvml_utilization u = {0};
    rc = OPT(nv, nvmlDeviceGetUtilizationRates, dev, &u);
    if (rc == GP_NVML_SUCCESS)
        g->util_percent = u.gpu <= 100 ? u.gpu : 100;
    else if (!absent(rc))
        return fail(nv, diag, "nvmlDeviceGetUtilizationRates", (int)i, rc);
    int pm = 0;
    rc = OPT(nv, nvmlDeviceGetPersistenceMode, dev, &pm);
    if (rc == GP_NVML_SUCCESS)
        g->persistence_mode = pm == GP_NVML_FEATURE_ENABLED;
    else if (!absent(rc))
        return fail(nv, diag, "nvmlDeviceGetPersistenceMode", (int)i, rc);
    /* a pending row remapping is done by a GPU reset: the agent sees the
     * reset that a reset-class XID waits for when it ends (nvwatch.c) */
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    rc = OPT(nv, nvmlDeviceGetRemappedRows, dev, &corr, &unc, &pending, &failed);
    g->remap_pending = rc == GP_NVML_SUCCESS ? pending != 0 : -1;
    return GP_OK;
}

/* PCI bus ids compared as NVML may spell them: case apart, and with a
 * 4- or 8-digit domain ("0000:07:00.0" and "00000000:07:00.0"). */
static bool same_bus(const char *a, const char *b)
{
    const char *ca = strchr(a, ':'), *cb = strchr(b, ':');
    if (!ca || !cb)
        return strcasecmp(a, b) == 0;
    unsigned long da = strtoul(a, NULL, 16), db = strtoul(b, NULL, 16);
    return da == db && strcasecmp(ca, cb) == 0;
}

static enum gp_err read_nvlinks(struct gp_nvml *nv, struct gp_node_inventory *inv,
                                struct gp_nvml_device *const *devs, struct gp_diag *diag)
{
    for (size_t i = 0; i < inv->n_gpus; i++) {
        struct gp_node_gpu *g = &inv->gpus[i];
        for (unsigned l = 0; l < GP_NVML_NVLINK_MAX_LINKS; l++) {
            int active = 0;
            int rc = OPT(nv, nvmlDeviceGetNvLinkState, devs[i], l, &active);
            if (absent(rc) || rc == GP_NVML_ERROR_INVALID_ARGUMENT)
                continue; /* no such link on this GPU */
            if (rc != GP_NVML_SUCCESS)
                return fail(nv, diag, "nvmlDeviceGetNvLinkState", (int)g->index, rc);
            if (active != GP_NVML_FEATURE_ENABLED)
                continue;
            struct gp_nvml_pci_info pci = {0};
            rc = OPT(nv, nvmlDeviceGetNvLinkRemotePciInfo_v2, devs[i], l, &pci);
            if (absent(rc))
                continue;
            if (rc != GP_NVML_SUCCESS)
                return fail(nv, diag, "nvmlDeviceGetNvLinkRemotePciInfo_v2", (int)g->index, rc);
            pci.bus_id[sizeof pci.bus_id - 1] = '\0';
            for (size_t j = 0; j < inv->n_gpus && j < 64; j++) /* an NVSwitch matches none */
                if (j != i && same_bus(pci.bus_id, inv->gpus[j].pci_bus_id))
                    g->nvlink_peers |= 1ull << inv->gpus[j].index;
        }
    }
    return GP_OK;
}

enum gp_err gp_node_discover_lost(struct gp_nvml *nv, struct gp_node_inventory *out, uint64_t *lost,
                                  struct gp_diag *diag)
{
    struct gp_node_inventory *inv = calloc(1, sizeof *inv); /* ~60 KiB: not on the stack */
    struct gp_nvml_device **devs = calloc(GP_NODE_MAX_GPUS, sizeof *devs);
    enum gp_err err = GP_OK;
    int rc;
    nv->lost_gpu = -1;
    if (lost)
        *lost = 0;
    if (!inv || !devs) {
        err = gp_diag_set(diag, GP_ENOMEM, "out of memory");
        goto done;
    }
    char ver[GP_NVML_DRIVER_VERSION_LEN] = "";
    if ((rc = nv->c.nvmlSystemGetDriverVersion(ver, sizeof ver)) != GP_NVML_SUCCESS) {
        err = fail(nv, diag, "nvmlSystemGetDriverVersion", -1, rc);
        goto done;
    }
    copy_str(inv->driver_version, sizeof inv->driver_version, ver);
    int cuda = 0;
    rc = OPT(nv, nvmlSystemGetCudaDriverVersion_v2, &cuda);
    if (absent(rc))
        rc = OPT(nv, nvmlSystemGetCudaDriverVersion, &cuda);
    if (rc == GP_NVML_SUCCESS)
        inv->cuda_driver_version = cuda;
    else if (!absent(rc) && rc != 12 /* LIBRARY_NOT_FOUND: no libcuda.so.1 */) {
        err = fail(nv, diag, "nvmlSystemGetCudaDriverVersion_v2", -1, rc);
        goto done;
    }
    unsigned count = 0;
    if ((rc = nv->c.nvmlDeviceGetCount_v2(&count)) != GP_NVML_SUCCESS) {
        err = fail(nv, diag, "nvmlDeviceGetCount_v2", -1, rc);
        goto done;
    }
    if (count > GP_NODE_MAX_GPUS)
        count = GP_NODE_MAX_GPUS;
    for (unsigned i = 0; i < count; i++) {
        struct gp_node_gpu *g = &inv->gpus[inv->n_gpus];
        memset(g, 0, sizeof *g);
        struct gp_nvml_device *dev = NULL;
        if ((rc = nv->c.nvmlDeviceGetHandleByIndex_v2(i, &dev)) != GP_NVML_SUCCESS)
            err = fail(nv, diag, "nvmlDeviceGetHandleByIndex_v2", (int)i, rc);
        else
            err = read_gpu(nv, i, dev, g, diag);
        if (err != GP_OK && lost && nv->lost_gpu == (int)i) {
            *lost |= 1ull << i; /* fallen off the bus: the others are read all the same */
            nv->lost_gpu = -1;
            err = GP_OK;
            continue;
        }
        if (err != GP_OK)
            goto done;
        devs[inv->n_gpus++] = dev;
    }
    if ((err = read_nvlinks(nv, inv, devs, diag)) != GP_OK) {
        if (!lost || nv->lost_gpu < 0)
            goto done;
        *lost |= 1ull << (unsigned)nv->lost_gpu; /* lost between its read and its links */
        err = GP_OK;
    }
    *out = *inv;
done:
    free(inv);
    free(devs);
    return err;
}

enum gp_err gp_node_discover(struct gp_nvml *nv, struct gp_node_inventory *out,
                             struct gp_diag *diag)
{
    return gp_node_discover_lost(nv, out, NULL, diag);
}

enum gp_err gp_node_sample(struct gp_nvml *nv, struct gp_node_inventory *inv, struct gp_diag *diag)
{
    unsigned count = 0;
    int rc;
    if ((rc = nv->c.nvmlDeviceGetCount_v2(&count)) != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetCount_v2", -1, rc);
    if (count > GP_NODE_MAX_GPUS)
        count = GP_NODE_MAX_GPUS;
    for (unsigned i = 0; i < count; i++) {
        struct gp_nvml_device *dev = NULL;
        char uuid[GP_NVML_UUID_LEN] = "";
        struct gp_nvml_memory mem = {0};
        struct gp_nvml_utilization u = {0};
        const char *call = "nvmlDeviceGetHandleByIndex_v2";
        rc = nv->c.nvmlDeviceGetHandleByIndex_v2(i, &dev);
        if (rc == GP_NVML_SUCCESS) {
            call = "nvmlDeviceGetUUID";
            rc = nv->c.nvmlDeviceGetUUID(dev, uuid, sizeof uuid);
        }
        if (rc == GP_NVML_SUCCESS) {
            call = "nvmlDeviceGetMemoryInfo";
            rc = nv->c.nvmlDeviceGetMemoryInfo(dev, &mem);
        }
        if (rc == GP_NVML_ERROR_GPU_IS_LOST)
            continue; /* the next discovery marks it lost */
        if (rc != GP_NVML_SUCCESS)
            return fail(nv, diag, call, (int)i, rc);
        rc = OPT(nv, nvmlDeviceGetUtilizationRates, dev, &u);
        if (rc != GP_NVML_SUCCESS && !absent(rc) && rc != GP_NVML_ERROR_GPU_IS_LOST)
            return fail(nv, diag, "nvmlDeviceGetUtilizationRates", (int)i, rc);
        uuid[sizeof uuid - 1] = '\0';
        for (size_t g = 0; g < inv->n_gpus; g++) {
            if (strcmp(inv->gpus[g].uuid, uuid) != 0)
                continue;
            inv->gpus[g].memory_used_mib = mib(mem.used);
            if (rc == GP_NVML_SUCCESS)
                inv->gpus[g].util_percent = u.gpu <= 100 ? u.gpu : 100;
            break;
        }
    }
    return GP_OK;
}

int gp_nvml_lost_gpu(const struct gp_nvml *nv)
{
    return nv->lost_gpu;
}

enum gp_err gp_node_discover_path(const char *path, struct gp_node_inventory *out,
                                  struct gp_diag *diag)
{
    struct gp_nvml *nv;
    enum gp_err err = gp_nvml_open(path, &nv, diag);
    if (err != GP_OK)
        return err;
    err = gp_node_discover(nv, out, diag);
    gp_nvml_close(nv);
    return err;
}

enum gp_err gp_nvml_events_open(struct gp_nvml *nv, unsigned *n_registered, struct gp_diag *diag)
{
    *n_registered = 0;
    if (nv->events)
        return gp_diag_set(diag, GP_ESTATE, "NVML: the XID event set is already open");
    int rc = OPT(nv, nvmlEventSetCreate, &nv->events);
    if (rc != GP_NVML_SUCCESS) {
        nv->events = NULL;
        return fail(nv, diag, "nvmlEventSetCreate", -1, rc);
    }
    unsigned count = 0;
    if ((rc = nv->c.nvmlDeviceGetCount_v2(&count)) != GP_NVML_SUCCESS)
        return fail(nv, diag, "nvmlDeviceGetCount_v2", -1, rc);
    if (count > GP_NODE_MAX_GPUS)
        count = GP_NODE_MAX_GPUS;
    nv->n_devs = count;
    for (unsigned i = 0; i < count; i++) {
        rc = nv->c.nvmlDeviceGetHandleByIndex_v2(i, &nv->devs[i]);
        if (rc == GP_NVML_ERROR_GPU_IS_LOST) { /* the others are still watched */
            nv->devs[i] = NULL;
            continue;
        }
        if (rc != GP_NVML_SUCCESS)
            return fail(nv, diag, "nvmlDeviceGetHandleByIndex_v2", (int)i, rc);
        rc = OPT(nv, nvmlDeviceRegisterEvents, nv->devs[i], GP_NVML_EVENT_XID_CRITICAL, nv->events);
        if (rc == GP_NVML_SUCCESS)
            (*n_registered)++;
        else if (!absent(rc))
            return fail(nv, diag, "nvmlDeviceRegisterEvents", (int)i, rc);
    }
    return GP_OK;
}

enum gp_err gp_nvml_events_wait(struct gp_nvml *nv, unsigned timeout_ms, bool *got,
                                struct gp_nvml_xid *ev, struct gp_diag *diag)
{
    *got = false;
    if (!nv->events)
        return gp_diag_set(diag, GP_ESTATE, "NVML: the XID event set is not open");
    struct gp_nvml_event_data d = {0};
    int rc = OPT(nv, nvmlEventSetWait_v2, nv->events, &d, timeout_ms);
    if (rc == GP_NVML_ERROR_TIMEOUT)
        return GP_OK;
    if (rc != GP_NVML_SUCCESS) /* not fail(): discovery may be running in another thread */
        return gp_diag_set(diag, rc == GP_NVML_ERROR_GPU_IS_LOST ? GP_ENOTFOUND : GP_EIO,
                           "NVML: nvmlEventSetWait_v2: %s", errstr(nv, rc));
    if (!(d.event_type & GP_NVML_EVENT_XID_CRITICAL))
        return GP_OK; /* not registered for: nothing to report */
    ev->gpu_index = UINT32_MAX;
    for (unsigned i = 0; i < nv->n_devs; i++)
        if (nv->devs[i] && nv->devs[i] == d.device)
            ev->gpu_index = i;
    if (ev->gpu_index == UINT32_MAX)
        return GP_OK; /* a device we do not know (a MIG handle's parent unknown) */
    ev->xid = d.event_data <= 0xffffffffull ? (unsigned)d.event_data : GP_NVML_XID_UNKNOWN;
    ev->gi_id = d.gpu_instance_id;
    ev->ci_id = d.compute_instance_id;
    *got = true;
    return GP_OK;
}
