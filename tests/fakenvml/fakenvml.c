/* fakenvml.c - a fake libnvidia-ml.so.1 for the node agent's tests: it
 * exports exactly the NVML calls src/node/nvml.c uses (node/nvml_abi.h)
 * and answers them from a text file named by $GPUPLANE_FAKE_NVML, read at
 * each nvmlInit_v2 (docs/node.md, "The fake NVML", has the format):
 * GPUs, MIG devices, NVLinks, utilisation, persistence, failures (init,
 * one call, every call after N, every call, a GPU lost) and XIDs read
 * from a file the test appends to, which nvmlEventSetWait_v2 follows.
 * With "live" the configuration is read again whenever the file changes,
 * so a test can change what a running agent sees. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "node/nvml_abi.h"

#define EXPORT __attribute__((visibility("default")))

#define GP_X(name, req, params) EXPORT int name params;
GP_NVML_CALLS(GP_X)
#undef GP_X
EXPORT const char *nvmlErrorString(int rc);

#define MAX_GPUS  64
#define MAX_MIGS  7
#define MAX_LINKS GP_NVML_NVLINK_MAX_LINKS

struct gp_nvml_device {
    int gpu; /* index of the GPU (the parent, for a MIG device) */
    int mig; /* -1 for the GPU itself */
};

struct gp_nvml_gpu_instance {
    int gpu, mig;
};

struct gp_nvml_event_set {
    unsigned long long registered; /* bit per GPU */
    long offset;                   /* how far into the XID file (its end at creation) */
};

struct fake_mig {
    char uuid[GP_NVML_UUID_LEN];
    unsigned gi, ci, profile, start, size, sms, gislices, cislices;
    unsigned copy, dec, enc, jpeg, ofa;
    int noinfo; /* nvmlGpuInstanceGetInfo says NO_PERMISSION, as to a non-root caller */
    unsigned long long memory_mib;
    struct gp_nvml_device dev;
    struct gp_nvml_gpu_instance ginst;
};

struct fake_gpu {
    char name[GP_NVML_NAME_LEN], uuid[GP_NVML_UUID_LEN], bus[GP_NVML_BUS_ID_LEN];
    unsigned pciid, util, mig_mode; /* mig_mode: 0 off, 1 on, 2 not supported */
    int cc_major, cc_minor, persistence;
    int remap; /* a row remapping pending: 1, 0; -1 NOT_SUPPORTED (the default) */
    unsigned long long memory_mib, used_mib;
    int lost;
    size_t n_migs;
    struct fake_mig migs[MAX_MIGS];
    int link_active[MAX_LINKS];
    char link_peer[MAX_LINKS][GP_NVML_BUS_ID_LEN];
    struct gp_nvml_device dev;
};

static struct {
    pthread_mutex_t mu;
    int inited;
    char driver[GP_NVML_DRIVER_VERSION_LEN];
    int cuda, cuda_rc;
    int init_rc;
    long calls, fail_after;
    int fail_after_rc;
    char fail_call[64];
    int fail_call_rc;
    int fail_all_rc; /* every call, nvmlInit_v2 too, returns it (NVML gone) */
    int live;        /* read the configuration again when it changes */
    struct stat conf_st;
    char xids[512];
    size_t n_gpus;
    struct fake_gpu gpus[MAX_GPUS];
} F = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* --- the configuration ------------------------------------------------ */

/* The next "key=value" (value maybe "quoted") or bare word of *p. */
static int next_token(char **p, char *key, size_t nk, char *val, size_t nv)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || *s == '#')
        return 0;
    size_t k = 0;
    while (*s && *s != '=' && *s != ' ' && *s != '\t') {
        if (k + 1 < nk)
            key[k++] = *s;
        s++;
    }
    key[k] = '\0';
    val[0] = '\0';
    if (*s == '=') {
        s++;
        size_t v = 0;
        char end = ' ';
        if (*s == '"') {
            end = '"';
            s++;
        }
        while (*s && *s != end && !(end == ' ' && *s == '\t')) {
            if (v + 1 < nv)
                val[v++] = *s;
            s++;
        }
        val[v] = '\0';
        if (*s == '"')
            s++;
    }
    *p = s;
    return 1;
}

/* A string copied, cut to the destination. */
static void copy(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static unsigned long long num(const char *v)
{
    return strtoull(v, NULL, 0);
}

static int parse_gpu(char *rest, struct fake_gpu *g)
{
    char k[64], v[128];
    memset(g, 0, sizeof *g);
    g->mig_mode = 2;
    g->persistence = -1;
    g->remap = -1;
    while (next_token(&rest, k, sizeof k, v, sizeof v)) {
        if (!strcmp(k, "name"))
            copy(g->name, sizeof g->name, v);
        else if (!strcmp(k, "uuid"))
            copy(g->uuid, sizeof g->uuid, v);
        else if (!strcmp(k, "pci"))
            copy(g->bus, sizeof g->bus, v);
        else if (!strcmp(k, "pciid"))
            g->pciid = (unsigned)num(v);
        else if (!strcmp(k, "memory"))
            g->memory_mib = num(v);
        else if (!strcmp(k, "used"))
            g->used_mib = num(v);
        else if (!strcmp(k, "cc"))
            sscanf(v, "%d.%d", &g->cc_major, &g->cc_minor);
        else if (!strcmp(k, "util"))
            g->util = (unsigned)num(v);
        else if (!strcmp(k, "persistence"))
            g->persistence = (int)num(v);
        else if (!strcmp(k, "remap"))
            g->remap = (int)num(v);
        else if (!strcmp(k, "mig"))
            g->mig_mode = !strcmp(v, "none") ? 2 : (unsigned)num(v);
        else if (!strcmp(k, "lost"))
            g->lost = 1;
        else
            return -1;
    }
    return 0;
}

static int parse_mig(char *rest, struct fake_mig *m)
{
    char k[64], v[128];
    memset(m, 0, sizeof *m);
    while (next_token(&rest, k, sizeof k, v, sizeof v)) {
        unsigned long long n = num(v);
        if (!strcmp(k, "uuid"))
            copy(m->uuid, sizeof m->uuid, v);
        else if (!strcmp(k, "gi"))
            m->gi = (unsigned)n;
        else if (!strcmp(k, "ci"))
            m->ci = (unsigned)n;
        else if (!strcmp(k, "profile"))
            m->profile = (unsigned)n;
        else if (!strcmp(k, "start"))
            m->start = (unsigned)n;
        else if (!strcmp(k, "size"))
            m->size = (unsigned)n;
        else if (!strcmp(k, "memory"))
            m->memory_mib = n;
        else if (!strcmp(k, "sms"))
            m->sms = (unsigned)n;
        else if (!strcmp(k, "gislices"))
            m->gislices = (unsigned)n;
        else if (!strcmp(k, "cislices"))
            m->cislices = (unsigned)n;
        else if (!strcmp(k, "copy"))
            m->copy = (unsigned)n;
        else if (!strcmp(k, "dec"))
            m->dec = (unsigned)n;
        else if (!strcmp(k, "enc"))
            m->enc = (unsigned)n;
        else if (!strcmp(k, "jpeg"))
            m->jpeg = (unsigned)n;
        else if (!strcmp(k, "ofa"))
            m->ofa = (unsigned)n;
        else if (!strcmp(k, "noinfo"))
            m->noinfo = 1;
        else
            return -1;
    }
    return 0;
}

static int parse_nvlink(char *rest, struct fake_gpu *g)
{
    char k[64], v[128];
    long link = -1;
    char peer[GP_NVML_BUS_ID_LEN] = "";
    int down = 0;
    while (next_token(&rest, k, sizeof k, v, sizeof v)) {
        if (!strcmp(k, "link"))
            link = (long)num(v);
        else if (!strcmp(k, "peer"))
            copy(peer, sizeof peer, v);
        else if (!strcmp(k, "down"))
            down = 1;
        else
            return -1;
    }
    if (link < 0 || link >= MAX_LINKS)
        return -1;
    g->link_active[link] = down ? 2 : 1; /* 0: no such link */
    snprintf(g->link_peer[link], sizeof g->link_peer[link], "%s", peer);
    return 0;
}

/* Reads the configuration; 0, or -1 after a line on stderr. */
static int load(void)
{
    memset(F.gpus, 0, sizeof F.gpus);
    F.n_gpus = 0;
    snprintf(F.driver, sizeof F.driver, "%s", "0.0");
    F.cuda = 0;
    F.cuda_rc = GP_NVML_SUCCESS;
    F.init_rc = GP_NVML_SUCCESS;
    F.calls = 0;
    F.fail_after = -1;
    F.fail_call[0] = '\0';
    F.fail_all_rc = GP_NVML_SUCCESS;
    F.live = 0;
    F.xids[0] = '\0';
    const char *path = getenv("GPUPLANE_FAKE_NVML");
    if (!path || !*path)
        return 0;
    FILE *f = fopen(path, "r");
    if (f)
        fstat(fileno(f), &F.conf_st);
    if (!f) {
        fprintf(stderr, "fakenvml: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            continue;
        char word[32];
        size_t w = 0;
        while (*s && !isspace((unsigned char)*s) && w + 1 < sizeof word)
            word[w++] = *s++;
        word[w] = '\0';
        struct fake_gpu *last = F.n_gpus ? &F.gpus[F.n_gpus - 1] : NULL;
        if (!strcmp(word, "driver")) {
            bad = sscanf(s, " %79s", F.driver) != 1;
        } else if (!strcmp(word, "cuda")) {
            char v[32] = "";
            bad = sscanf(s, " %31s", v) != 1;
            if (!strcmp(v, "none"))
                F.cuda_rc = 12; /* NVML_ERROR_LIBRARY_NOT_FOUND: no libcuda.so.1 */
            else
                F.cuda = (int)strtol(v, NULL, 10);
        } else if (!strcmp(word, "init-fail")) {
            bad = sscanf(s, " %d", &F.init_rc) != 1;
        } else if (!strcmp(word, "fail-after")) {
            bad = sscanf(s, " %ld %d", &F.fail_after, &F.fail_after_rc) != 2;
        } else if (!strcmp(word, "fail-all")) {
            bad = sscanf(s, " %d", &F.fail_all_rc) != 1;
        } else if (!strcmp(word, "live")) {
            F.live = 1;
        } else if (!strcmp(word, "fail-call")) {
            bad = sscanf(s, " %63s %d", F.fail_call, &F.fail_call_rc) != 2;
        } else if (!strcmp(word, "xids")) {
            bad = sscanf(s, " %511s", F.xids) != 1;
        } else if (!strcmp(word, "gpu")) {
            bad = F.n_gpus == MAX_GPUS || parse_gpu(s, &F.gpus[F.n_gpus]) != 0;
            if (!bad)
                F.n_gpus++;
        } else if (!strcmp(word, "mig")) {
            bad = !last || last->n_migs == MAX_MIGS || parse_mig(s, &last->migs[last->n_migs]);
            if (!bad)
                last->n_migs++;
        } else if (!strcmp(word, "nvlink")) {
            bad = !last || parse_nvlink(s, last) != 0;
        } else {
            bad = 1;
        }
    }
    fclose(f);
    if (bad) {
        fprintf(stderr, "fakenvml: %s:%d: not understood\n", path, lineno);
        return -1;
    }
    for (size_t i = 0; i < F.n_gpus; i++) {
        F.gpus[i].dev = (struct gp_nvml_device){(int)i, -1};
        for (size_t k = 0; k < F.gpus[i].n_migs; k++) {
            F.gpus[i].migs[k].dev = (struct gp_nvml_device){(int)i, (int)k};
            F.gpus[i].migs[k].ginst = (struct gp_nvml_gpu_instance){(int)i, (int)k};
        }
    }
    return 0;
}

/* --- the calls -------------------------------------------------------- */

/* With "live": the configuration read again when its file is another
 * (renamed over), or its size or time changed. */
static void reload_if_changed(void)
{
    const char *path = getenv("GPUPLANE_FAKE_NVML");
    struct stat st;
    if (!F.live || !path || stat(path, &st) != 0)
        return;
    if (st.st_ino == F.conf_st.st_ino && st.st_size == F.conf_st.st_size &&
        st.st_mtim.tv_sec == F.conf_st.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == F.conf_st.st_mtim.tv_nsec)
        return;
    if (load() != 0) { /* a bad file: every call fails until it is good */
        F.live = 1;
        F.fail_all_rc = GP_NVML_ERROR_UNKNOWN;
    }
}

/* Every call starts here: counts it and says whether it fails. */
static int enter(const char *name)
{
    reload_if_changed();
    F.calls++;
    if (F.fail_all_rc != GP_NVML_SUCCESS)
        return F.fail_all_rc;
    if (F.fail_after >= 0 && F.calls > F.fail_after)
        return F.fail_after_rc;
    if (F.fail_call[0] && !strcmp(F.fail_call, name))
        return F.fail_call_rc;
    if (!F.inited && strcmp(name, "nvmlInit_v2") != 0)
        return GP_NVML_ERROR_UNINITIALIZED;
    return GP_NVML_SUCCESS;
}

/* The GPU (and MIG device) a handle names, or an error. */
static int dev_of(const struct gp_nvml_device *d, struct fake_gpu **g, struct fake_mig **m)
{
    if (!d || d->gpu < 0 || (size_t)d->gpu >= F.n_gpus)
        return GP_NVML_ERROR_INVALID_ARGUMENT;
    *g = &F.gpus[d->gpu];
    if ((*g)->lost)
        return GP_NVML_ERROR_GPU_IS_LOST;
    *m = d->mig >= 0 ? &(*g)->migs[d->mig] : NULL;
    return GP_NVML_SUCCESS;
}

#define BEGIN(name)                                                                                \
    pthread_mutex_lock(&F.mu);                                                                     \
    int rc = enter(name);                                                                          \
    if (rc != GP_NVML_SUCCESS)                                                                     \
    goto out

#define BEGIN_DEV(name, d)                                                                         \
    BEGIN(name);                                                                                   \
    struct fake_gpu *g = NULL;                                                                     \
    struct fake_mig *m = NULL;                                                                     \
    if ((rc = dev_of((d), &g, &m)) != GP_NVML_SUCCESS)                                             \
    goto out

#define END                                                                                        \
    out:                                                                                           \
    pthread_mutex_unlock(&F.mu);                                                                   \
    return rc

const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case GP_NVML_SUCCESS:
        return "Success";
    case GP_NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case GP_NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case GP_NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case GP_NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case GP_NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case GP_NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case GP_NVML_ERROR_TIMEOUT:
        return "Timeout";
    case GP_NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

int nvmlInit_v2(void)
{
    pthread_mutex_lock(&F.mu);
    int rc = load() == 0 ? enter("nvmlInit_v2") : GP_NVML_ERROR_UNKNOWN;
    if (rc == GP_NVML_SUCCESS && F.init_rc != GP_NVML_SUCCESS)
        rc = F.init_rc;
    if (rc == GP_NVML_SUCCESS)
        F.inited = 1;
    pthread_mutex_unlock(&F.mu);
    return rc;
}

/* Shutdown and EventSetFree release what they hold even when failed by
 * the configuration, so a failing run leaks nothing. */
int nvmlShutdown(void)
{
    pthread_mutex_lock(&F.mu);
    int rc = enter("nvmlShutdown");
    F.inited = 0;
    pthread_mutex_unlock(&F.mu);
    return rc;
}

int nvmlSystemGetDriverVersion(char *version, unsigned length)
{
    BEGIN("nvmlSystemGetDriverVersion");
    if (strlen(F.driver) + 1 > length)
        rc = 7; /* INSUFFICIENT_SIZE */
    else
        snprintf(version, length, "%s", F.driver);
    END;
}

int nvmlSystemGetCudaDriverVersion(int *version)
{
    BEGIN("nvmlSystemGetCudaDriverVersion");
    rc = F.cuda_rc;
    *version = F.cuda;
    END;
}

int nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    BEGIN("nvmlSystemGetCudaDriverVersion_v2");
    rc = F.cuda_rc;
    *version = F.cuda;
    END;
}

int nvmlDeviceGetCount_v2(unsigned *count)
{
    BEGIN("nvmlDeviceGetCount_v2");
    *count = (unsigned)F.n_gpus;
    END;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, struct gp_nvml_device **device)
{
    BEGIN("nvmlDeviceGetHandleByIndex_v2");
    if (index >= F.n_gpus)
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
    else if (F.gpus[index].lost)
        rc = GP_NVML_ERROR_GPU_IS_LOST;
    else
        *device = &F.gpus[index].dev;
    END;
}

int nvmlDeviceGetName(struct gp_nvml_device *device, char *name, unsigned length)
{
    BEGIN_DEV("nvmlDeviceGetName", device);
    snprintf(name, length, "%s", g->name);
    END;
}

int nvmlDeviceGetUUID(struct gp_nvml_device *device, char *uuid, unsigned length)
{
    BEGIN_DEV("nvmlDeviceGetUUID", device);
    snprintf(uuid, length, "%s", m ? m->uuid : g->uuid);
    END;
}

int nvmlDeviceGetMemoryInfo(struct gp_nvml_device *device, struct gp_nvml_memory *memory)
{
    BEGIN_DEV("nvmlDeviceGetMemoryInfo", device);
    unsigned long long total = (m ? m->memory_mib : g->memory_mib) << 20;
    unsigned long long used = m ? 0 : g->used_mib << 20;
    *memory = (struct gp_nvml_memory){total, total - used, used};
    END;
}

int nvmlDeviceGetPciInfo_v3(struct gp_nvml_device *device, struct gp_nvml_pci_info *pci)
{
    BEGIN_DEV("nvmlDeviceGetPciInfo_v3", device);
    memset(pci, 0, sizeof *pci);
    snprintf(pci->bus_id, sizeof pci->bus_id, "%s", g->bus);
    pci->pci_device_id = g->pciid;
    END;
}

int nvmlDeviceGetCudaComputeCapability(struct gp_nvml_device *device, int *major, int *minor)
{
    BEGIN_DEV("nvmlDeviceGetCudaComputeCapability", device);
    *major = g->cc_major;
    *minor = g->cc_minor;
    END;
}

int nvmlDeviceGetMigMode(struct gp_nvml_device *device, unsigned *current, unsigned *pending)
{
    BEGIN_DEV("nvmlDeviceGetMigMode", device);
    if (g->mig_mode == 2)
        rc = GP_NVML_ERROR_NOT_SUPPORTED;
    else
        *current = *pending = g->mig_mode;
    END;
}

int nvmlDeviceGetMaxMigDeviceCount(struct gp_nvml_device *device, unsigned *count)
{
    BEGIN_DEV("nvmlDeviceGetMaxMigDeviceCount", device);
    *count = g->mig_mode == 1 ? MAX_MIGS : 0;
    END;
}

int nvmlDeviceGetMigDeviceHandleByIndex(struct gp_nvml_device *device, unsigned index,
                                        struct gp_nvml_device **mig)
{
    BEGIN_DEV("nvmlDeviceGetMigDeviceHandleByIndex", device);
    if (index >= g->n_migs)
        rc = GP_NVML_ERROR_NOT_FOUND;
    else
        *mig = &g->migs[index].dev;
    END;
}

int nvmlDeviceGetGpuInstanceId(struct gp_nvml_device *device, unsigned *id)
{
    BEGIN_DEV("nvmlDeviceGetGpuInstanceId", device);
    if (!m)
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
    else
        *id = m->gi;
    END;
}

int nvmlDeviceGetComputeInstanceId(struct gp_nvml_device *device, unsigned *id)
{
    BEGIN_DEV("nvmlDeviceGetComputeInstanceId", device);
    if (!m)
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
    else
        *id = m->ci;
    END;
}

int nvmlDeviceGetAttributes_v2(struct gp_nvml_device *device,
                               struct gp_nvml_device_attributes *attributes)
{
    BEGIN_DEV("nvmlDeviceGetAttributes_v2", device);
    if (!m) {
        rc = GP_NVML_ERROR_NOT_SUPPORTED;
        goto out;
    }
    *attributes = (struct gp_nvml_device_attributes){
        .multiprocessor_count = m->sms,
        .shared_copy_engine_count = m->copy,
        .shared_decoder_count = m->dec,
        .shared_encoder_count = m->enc,
        .shared_jpeg_count = m->jpeg,
        .shared_ofa_count = m->ofa,
        .gpu_instance_slice_count = m->gislices,
        .compute_instance_slice_count = m->cislices,
        .memory_size_mb = m->memory_mib,
    };
    END;
}

int nvmlDeviceGetGpuInstanceById(struct gp_nvml_device *device, unsigned id,
                                 struct gp_nvml_gpu_instance **gi)
{
    BEGIN_DEV("nvmlDeviceGetGpuInstanceById", device);
    rc = GP_NVML_ERROR_NOT_FOUND;
    for (size_t k = 0; k < g->n_migs; k++)
        if (g->migs[k].gi == id) {
            *gi = &g->migs[k].ginst;
            rc = GP_NVML_SUCCESS;
            break;
        }
    END;
}

int nvmlGpuInstanceGetInfo(struct gp_nvml_gpu_instance *gi, struct gp_nvml_gi_info *info)
{
    BEGIN("nvmlGpuInstanceGetInfo");
    if (!gi || gi->gpu < 0 || (size_t)gi->gpu >= F.n_gpus) {
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    struct fake_gpu *g = &F.gpus[gi->gpu];
    struct fake_mig *m = &g->migs[gi->mig];
    if (m->noinfo) {
        rc = GP_NVML_ERROR_NO_PERMISSION;
        goto out;
    }
    *info = (struct gp_nvml_gi_info){&g->dev, m->gi, m->profile, {m->start, m->size}};
    END;
}

int nvmlDeviceGetUtilizationRates(struct gp_nvml_device *device,
                                  struct gp_nvml_utilization *utilization)
{
    BEGIN_DEV("nvmlDeviceGetUtilizationRates", device);
    if (g->mig_mode == 1 || m)
        rc = GP_NVML_ERROR_NOT_SUPPORTED; /* as NVML on a MIG-enabled GPU */
    else
        *utilization = (struct gp_nvml_utilization){g->util, 0};
    END;
}

int nvmlDeviceGetNvLinkState(struct gp_nvml_device *device, unsigned link, int *active)
{
    BEGIN_DEV("nvmlDeviceGetNvLinkState", device);
    if (link >= MAX_LINKS)
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
    else if (!g->link_active[link])
        rc = GP_NVML_ERROR_NOT_SUPPORTED;
    else
        *active = g->link_active[link] == 1 ? GP_NVML_FEATURE_ENABLED : 0;
    END;
}

int nvmlDeviceGetNvLinkRemotePciInfo_v2(struct gp_nvml_device *device, unsigned link,
                                        struct gp_nvml_pci_info *pci)
{
    BEGIN_DEV("nvmlDeviceGetNvLinkRemotePciInfo_v2", device);
    if (link >= MAX_LINKS || !g->link_active[link]) {
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    memset(pci, 0, sizeof *pci);
    snprintf(pci->bus_id, sizeof pci->bus_id, "%s", g->link_peer[link]);
    END;
}

int nvmlDeviceGetPersistenceMode(struct gp_nvml_device *device, int *mode)
{
    BEGIN_DEV("nvmlDeviceGetPersistenceMode", device);
    if (g->persistence < 0)
        rc = GP_NVML_ERROR_NOT_SUPPORTED;
    else
        *mode = g->persistence ? GP_NVML_FEATURE_ENABLED : 0;
    END;
}

int nvmlDeviceGetRemappedRows(struct gp_nvml_device *device, unsigned *corr_rows,
                              unsigned *unc_rows, unsigned *is_pending, unsigned *failure_occurred)
{
    BEGIN_DEV("nvmlDeviceGetRemappedRows", device);
    if (g->remap < 0) {
        rc = GP_NVML_ERROR_NOT_SUPPORTED;
    } else {
        *corr_rows = 0;
        *unc_rows = (unsigned)g->remap;
        *is_pending = (unsigned)g->remap;
        *failure_occurred = 0;
    }
    END;
}

/* The event sets created on this XID file so far, counted in XIDS.sets
 * (absent: none; renamed into place, so read whole or not at all) once
 * each set follows the file, so that a test appends an XID only after a
 * set is there to see it instead of sleeping and hoping (a line appended
 * before the set exists is before its start, never reported). Lock held. */
static void count_event_set(void)
{
    char path[560], tmp[600];
    snprintf(path, sizeof path, "%s.sets", F.xids);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    long created = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%ld", &created) != 1)
            created = 0;
        fclose(f);
    }
    created++;
    f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%ld\n", created);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        remove(tmp);
}

int nvmlEventSetCreate(struct gp_nvml_event_set **set)
{
    BEGIN("nvmlEventSetCreate");
    *set = calloc(1, sizeof **set);
    if (!*set) {
        rc = 20; /* NVML_ERROR_MEMORY */
        goto out;
    }
    /* events from now on, as NVML's: the XID file followed from its end */
    struct stat st;
    if (F.xids[0] && stat(F.xids, &st) == 0)
        (*set)->offset = (long)st.st_size;
    if (F.xids[0])
        count_event_set();
    END;
}

int nvmlDeviceRegisterEvents(struct gp_nvml_device *device, unsigned long long types,
                             struct gp_nvml_event_set *set)
{
    BEGIN_DEV("nvmlDeviceRegisterEvents", device);
    if (!set || m)
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
    else if (types & GP_NVML_EVENT_XID_CRITICAL)
        set->registered |= 1ull << device->gpu;
    END;
}

/* The next whole line of the XID file past set->offset, if any:
 * "GPU XID [GI CI]" (1 filled), or "lost GPU" (2: that GPU is lost now). */
static int read_xid_line(struct gp_nvml_event_set *set, struct gp_nvml_event_data *d)
{
    FILE *f = F.xids[0] ? fopen(F.xids, "r") : NULL;
    if (!f)
        return 0;
    int found = 0;
    char line[256];
    while (!found && fseek(f, set->offset, SEEK_SET) == 0 && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n')
            break; /* not whole yet */
        set->offset += (long)n;
        unsigned gpu, gi = 0xFFFFFFFFu, ci = 0xFFFFFFFFu;
        unsigned long long xid;
        if (sscanf(line, "lost %u", &gpu) == 1 && gpu < F.n_gpus) {
            F.gpus[gpu].lost = 1;
            found = 2;
        } else if (sscanf(line, "%u %llu %u %u", &gpu, &xid, &gi, &ci) >= 2 && gpu < F.n_gpus &&
                   (set->registered >> gpu & 1)) {
            *d = (struct gp_nvml_event_data){&F.gpus[gpu].dev, GP_NVML_EVENT_XID_CRITICAL, xid, gi,
                                             ci};
            found = 1;
        }
    }
    fclose(f);
    return found;
}

int nvmlEventSetWait_v2(struct gp_nvml_event_set *set, struct gp_nvml_event_data *data,
                        unsigned timeout_ms)
{
    BEGIN("nvmlEventSetWait_v2");
    if (!set) {
        rc = GP_NVML_ERROR_INVALID_ARGUMENT;
        goto out;
    }
    for (unsigned waited = 0;; waited += 2) {
        int got = read_xid_line(set, data);
        if (got == 1)
            break;
        if (got == 2) {
            rc = GP_NVML_ERROR_GPU_IS_LOST;
            break;
        }
        if (waited >= timeout_ms) {
            rc = GP_NVML_ERROR_TIMEOUT;
            break;
        }
        pthread_mutex_unlock(&F.mu);
        nanosleep(&(struct timespec){0, 2000000}, NULL);
        pthread_mutex_lock(&F.mu);
    }
    END;
}

int nvmlEventSetFree(struct gp_nvml_event_set *set)
{
    pthread_mutex_lock(&F.mu);
    int rc = enter("nvmlEventSetFree");
    free(set);
    pthread_mutex_unlock(&F.mu);
    return rc;
}
