/* objects_mig.c - MIG as NVIDIA's stack publishes it on the API's objects,
 * read into the engine's MIG model (docs/kube.md, "MIG from the API"):
 * a Node's layout from GPU feature discovery's labels and the device
 * plugin's resources (each GPU's instances as gpuplane's node agent labels
 * them, one part per layout; whole GPUs beside MIG ones split off, by
 * the indexes gpuplane's node agent labels in MIG mode or by a rule), a pod's
 * nvidia.com/mig-<profile> request, and the words kube-scheduler would use for a MIG request that
 * fits nowhere.
 *
 * Sources: NVIDIA's device plugin (github.com/NVIDIA/k8s-device-plugin,
 * internal/rm and docs/gpu-feature-discovery/README.md: under the mixed
 * strategy each MIG device is nvidia.com/mig-<profile> and a GPU not in
 * MIG mode nvidia.com/gpu; under single every GPU is in MIG mode with one
 * profile and each device is nvidia.com/gpu, GFD's gpu.product then ends
 * "-MIG-<profile>" and gpu.count counts MIG devices), the GPU Operator's
 * MIG page (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
 * gpu-operator-mig.html: nvidia.com/mig.config names mig-parted's config,
 * nvidia.com/mig.config.state says whether it is applied) and the label
 * sets in ../shared/k8s/samples/nvidia-gfd/. */
#include <stdio.h>
#include <string.h>

#include "engine/sharing.h"
#include "kube/objects.h"
#include "util/units.h"

#define MIG_PREFIX "nvidia.com/mig-"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

/* A count: the server writes quantities as strings; a number as written. */
static bool count_of(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return *out >= 0;
    }
    return json_is_string(v) && gp_units_uint(json_string_value(v), out);
}

/* The layout every MIG-enabled GPU has: the instances per GPU from what
 * the node advertises (cap[p] over gpus), placed by the engine's rule.
 * False with why when they do not split evenly or cannot be placed. */
static bool layout_of(const struct gp_mig_model *m, const uint16_t *cap, uint32_t gpus,
                      struct gp_mig_layout *out, char *why, size_t n)
{
    struct gp_mig_counts per = {{0}};
    for (size_t p = 0; p < m->nprofiles; p++) {
        if (cap[p] % gpus) {
            snprintf(why, n,
                     "%u nvidia.com/mig-%s on %u MIG-enabled GPUs: not the same layout on "
                     "every GPU",
                     cap[p], m->profiles[p].name, gpus);
            return false;
        }
        per.n[p] = (uint8_t)(cap[p] / gpus);
    }
    char reason[160];
    if (!gp_mig_layout_from_counts(m, &per, out, reason, sizeof reason)) {
        snprintf(why, n, "the MIG instances per GPU do not make a layout: %s", reason);
        return false;
    }
    return true;
}

/* Mixed strategy: instances of each profile from the nvidia.com/mig-*
 * resources; MIG-enabled GPUs are gpu.count less the whole GPUs. Returns
 * the GPUs in MIG mode (0: none), or 0 with why set. */
static uint32_t mixed(const json_t *labels, const json_t *res, const struct gp_mig_model *m,
                      uint32_t whole, struct gp_kube_node_info *info, char *why, size_t n)
{
    const char *k;
    json_t *v;
    uint32_t total = 0;
    json_object_foreach(mut(res), k, v)
    {
        if (strncmp(k, MIG_PREFIX, sizeof MIG_PREFIX - 1) != 0)
            continue;
        int64_t c;
        if (!count_of(v, &c) || c > 0xffff) {
            snprintf(why, n, "%s: not a number of MIG devices", k);
            return 0;
        }
        size_t kl = strlen(k);
        if (c > 0 && kl > 7 && strcmp(k + kl - 7, ".shared") == 0) { /* renamed replicas */
            snprintf(why, n, "%s is %lld: MIG devices time-sliced are not read", k, (long long)c);
            return 0;
        }
        int p = gp_mig_profile_by_resource(m, k);
        char rk[96];
        snprintf(rk, sizeof rk, "%.80s.replicas", k); /* GFD's, per MIG profile */
        int64_t rep = 1;
        if (p >= 0 && c > 0 && str(labels, rk) && gp_units_uint(str(labels, rk), &rep) && rep > 1) {
            snprintf(why, n, "%s is %lld: MIG devices time-sliced are not read", rk,
                     (long long)rep);
            return 0;
        }
        if (p < 0) {
            if (c > 0)
                snprintf(why, n, "%s: not a MIG profile of %s", k, m->id);
            if (c > 0)
                return 0;
            continue;
        }
        info->mig_cap[p] = info->mig_alloc[p] = (uint16_t)c;
        total += (uint32_t)c;
    }
    if (total == 0)
        return 0; /* no MIG device advertised: whole GPUs only */
    int64_t count = 0;
    const char *gc = str(labels, "nvidia.com/gpu.count");
    if (!gc || !gp_units_uint(gc, &count) || count <= (int64_t)whole ||
        count > GP_MAX_GPUS_PER_NODE) {
        snprintf(why, n,
                 "nvidia.com/gpu.count is \"%s\" with %u whole GPUs: how many GPUs are in MIG "
                 "mode is not known",
                 gc ? gc : "", whole);
        return 0;
    }
    return (uint32_t)(count - whole);
}

/* Single strategy: every GPU in MIG mode with one profile, whose devices
 * are nvidia.com/gpu; the GPUs are the devices over the instances per GPU
 * (mig-parted's named config, else the profile's maximum). */
static uint32_t single(const json_t *labels, const char *profile, uint32_t devices,
                       const struct gp_mig_model *m, struct gp_kube_node_info *info, char *why,
                       size_t n)
{
    int p = gp_mig_profile_find(m, profile);
    if (p < 0) {
        snprintf(why, n, "nvidia.com/gpu.product names the MIG profile \"%s\", not one of %s",
                 profile, m->id);
        return 0;
    }
    if (devices == 0)
        return 0;
    struct gp_mig_counts named;
    bool enabled = false;
    unsigned per = m->profiles[p].max_instances;
    if (gp_mig_named_config(m, str(labels, "nvidia.com/mig.config"), &named, &enabled) && enabled &&
        named.n[p] > 0)
        per = named.n[p];
    if (devices % per || devices / per > GP_MAX_GPUS_PER_NODE) {
        snprintf(why, n, "%u MIG devices of %s are not whole GPUs of %u", devices, profile, per);
        return 0;
    }
    info->mig_cap[p] = info->mig_alloc[p] = (uint16_t)devices; /* capacity's: the caller
                                                                * sets allocatable's */
    return devices / per;
}

bool gp_kube_mig_gpus_parse(const char *s, uint32_t *mask)
{
    *mask = 0;
    for (const char *p = s;;) {
        unsigned g = 0;
        size_t digits = 0;
        for (; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
            g = g * 10 + (unsigned)(*p - '0');
        if (!digits || g >= GP_MAX_GPUS_PER_NODE || (*mask >> g & 1) || (*p != '.' && *p))
            return false;
        *mask |= 1u << g;
        if (!*p++)
            return true;
    }
}

static unsigned bits(uint32_t m)
{
    unsigned n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* Which GPU is which on a node of whole and MIG-enabled GPUs: the indexes
 * gpuplane's node agent labels in MIG mode, else (NVIDIA's own device
 * plugin, which publishes no such thing) the whole GPUs first and the MIG
 * ones after them. The rule only keeps gpuplane's bookkeeping apart - the
 * plugin picks the devices of the resource a pod asks, whatever index the
 * annotations name - so no index is ever booked as both kinds. */
static void split_indexes(const json_t *labels, struct gp_kube_node_info *info, char *why, size_t n)
{
    uint32_t total = info->whole_gpus + info->mig_gpus, mask;
    const char *l = str(labels, GP_KUBE_LABEL_MIG_GPUS);
    if (l) {
        if (!gp_kube_mig_gpus_parse(l, &mask) || bits(mask) != info->mig_gpus || mask >> total) {
            snprintf(why, n,
                     "%s is \"%.40s\": not %u distinct GPU indexes below %u (nvidia.com/gpu.count "
                     "less nvidia.com/gpu)",
                     GP_KUBE_LABEL_MIG_GPUS, l, info->mig_gpus, total);
            return;
        }
        info->split_labelled = true;
    } else {
        mask = ((1u << info->mig_gpus) - 1) << info->whole_gpus;
    }
    uint32_t w = 0, m = 0;
    for (uint32_t g = 0; g < total; g++) {
        if (mask >> g & 1)
            info->mig_index[m++] = (uint8_t)g;
        else
            info->whole_index[w++] = (uint8_t)g;
    }
    info->split = true;
}

/* One GP_KUBE_LABEL_MIG_LAYOUT value into *l; false when it does not read
 * or is not a valid layout of m. */
static bool layout_parse(const struct gp_mig_model *m, const char *v, struct gp_mig_layout *l)
{
    memset(l, 0, sizeof *l);
    if (strcmp(v, "none") == 0)
        return true;
    for (const char *p = v; *p;) {
        const char *dash = strchr(p, '-');
        if (!dash || dash == p || dash - p >= 40)
            return false;
        char prof[48];
        snprintf(prof, sizeof prof, "%.*s", (int)(dash - p), p);
        int q = gp_mig_profile_find(m, prof);
        size_t len = strlen(prof);
        if (q < 0 && len > 3 && strcmp(prof + len - 3, ".me") == 0) { /* "+me", as written */
            prof[len - 3] = '+';
            q = gp_mig_profile_find(m, prof);
        }
        if (q < 0)
            return false;
        for (p = dash + 1; *p >= '0' && *p <= '7'; p++) {
            if (l->n == GP_MIG_MAX_INSTANCES)
                return false;
            l->inst[l->n].profile = (uint8_t)q;
            l->inst[l->n++].start = (uint8_t)(*p - '0');
        }
        if (p == dash + 1 || (*p && *p != '_') || (*p == '_' && !p[1]))
            return false;
        p += *p == '_';
    }
    char reason[160];
    return gp_mig_layout_valid(m, l, reason, sizeof reason);
}

/* The layout of each GPU in MIG mode from GP_KUBE_LABEL_MIG_LAYOUT (per[g]
 * for GPU g): 1 when every one of them has it and together they are the
 * devices the node advertises, 0 when none has it (the node's layout is
 * then the counts' over the GPUs), -1 with why otherwise. */
static int labelled_layouts(const json_t *labels, const struct gp_mig_model *m,
                            const struct gp_kube_node_info *info, struct gp_mig_layout *per,
                            char *why, size_t n)
{
    uint32_t found = 0;
    uint16_t sum[GP_MIG_MAX_PROFILES] = {0};
    for (uint32_t i = 0; i < info->mig_gpus; i++) {
        char key[64];
        unsigned g = info->mig_index[i];
        snprintf(key, sizeof key, "%s%u", GP_KUBE_LABEL_MIG_LAYOUT, g);
        const char *v = str(labels, key);
        if (!v)
            continue;
        found++;
        if (!layout_parse(m, v, &per[g])) {
            snprintf(why, n, "%s is \"%.63s\": not a MIG layout of %s", key, v, m->id);
            return -1;
        }
        for (unsigned k = 0; k < per[g].n; k++)
            sum[per[g].inst[k].profile]++;
    }
    if (found == 0)
        return 0;
    if (found != info->mig_gpus) {
        snprintf(why, n, "%s<index> is on %u of the %u GPUs in MIG mode", GP_KUBE_LABEL_MIG_LAYOUT,
                 found, info->mig_gpus);
        return -1;
    }
    for (size_t p = 0; p < m->nprofiles; p++)
        if (sum[p] != info->mig_cap[p]) {
            snprintf(why, n,
                     "%s<index> names %u nvidia.com/mig-%s, the node advertises %u: the layout is "
                     "changing",
                     GP_KUBE_LABEL_MIG_LAYOUT, sum[p], m->profiles[p].name, info->mig_cap[p]);
            return -1;
        }
    return 1;
}

static bool layout_same(const struct gp_mig_layout *a, const struct gp_mig_layout *b)
{
    if (a->n != b->n)
        return false;
    for (unsigned i = 0; i < a->n; i++) {
        bool found = false;
        for (unsigned j = 0; j < b->n && !found; j++)
            found =
                a->inst[i].profile == b->inst[j].profile && a->inst[i].start == b->inst[j].start;
        if (!found)
            return false;
    }
    return true;
}

/* The devices of each profile the kubelet offers (status.allocatable: an
 * unhealthy device is in capacity, not in allocatable, the device manager
 * counting healthy ones) into info->mig_alloc, at most the capacity. */
static void allocatable_of(const json_t *alloc, const struct gp_mig_model *m,
                           struct gp_kube_node_info *info)
{
    const char *k;
    json_t *v;
    json_object_foreach(mut(alloc), k, v)
    {
        int64_t c;
        int p = strncmp(k, MIG_PREFIX, sizeof MIG_PREFIX - 1) == 0
                    ? gp_mig_profile_by_resource(m, k)
                    : -1;
        if (p >= 0 && count_of(v, &c) && c < info->mig_cap[p])
            info->mig_alloc[p] = (uint16_t)c;
    }
}

/* Devices unhealthy (allocatable below capacity) where the layouts are
 * gpuplane's bookkeeping (no agent's labels: the plugin picks among the
 * healthy devices): as many instances of the profile taken out of per[],
 * from the last GPU in MIG mode back, so that no more pods are placed
 * there than kube-scheduler would place (NodeResourcesFit counts
 * allocatable). An instance fewer leaves a layout valid. */
static void drop_unhealthy(const struct gp_mig_model *m, const struct gp_kube_node_info *info,
                           struct gp_mig_layout *per)
{
    for (size_t q = 0; q < m->nprofiles; q++) {
        unsigned excess = info->mig_cap[q] - info->mig_alloc[q];
        for (uint32_t i = info->mig_gpus; excess > 0 && i-- > 0;) {
            struct gp_mig_layout *l = &per[info->mig_index[i]];
            for (unsigned j = l->n; excess > 0 && j-- > 0;)
                if (l->inst[j].profile == q) {
                    l->inst[j] = l->inst[--l->n];
                    excess--;
                }
        }
    }
}

/* NVIDIA's own device plugin on GPUs in MIG mode of different layouts:
 * the node says only how many devices of each profile it has (the plugin
 * serves nvidia.com/mig-<profile> from every GPU's devices of that
 * profile, DP internal/rm/device_map.go buildMigDeviceMap; GFD counts them
 * per node). Any layouts that hold those devices place pods as the real
 * ones do by count - every instance exists, and booking one takes no
 * other - so they are packed here into per[] (node GPU mig_index[i]):
 * the largest instances first, each on the first GPU whose instances
 * still make a layout. False when they do not pack so. */
static bool pack_counts(const struct gp_mig_model *m, const struct gp_kube_node_info *info,
                        struct gp_mig_layout *per)
{
    uint32_t total = 0, gpus = info->mig_gpus;
    for (size_t q = 0; q < m->nprofiles; q++)
        total += info->mig_cap[q];
    if (total > gpus * GP_MIG_MAX_INSTANCES) /* bounded on any input */
        return false;
    struct gp_mig_counts c[GP_MAX_GPUS_PER_NODE];
    memset(c, 0, sizeof c);
    bool used[GP_MIG_MAX_PROFILES] = {false};
    char reason[160];
    for (size_t step = 0; step < m->nprofiles; step++) {
        int q = -1; /* the largest profile not packed yet: memory, then compute slices */
        for (size_t k = 0; k < m->nprofiles; k++) {
            const struct gp_mig_profile *a = &m->profiles[k];
            if (!used[k] && (q < 0 || a->memory_slices > m->profiles[q].memory_slices ||
                             (a->memory_slices == m->profiles[q].memory_slices &&
                              a->compute_slices > m->profiles[q].compute_slices)))
                q = (int)k;
        }
        used[q] = true;
        for (unsigned k = 0; k < info->mig_cap[q]; k++) {
            uint32_t i = 0;
            for (; i < gpus; i++) {
                c[i].n[q]++;
                if (gp_mig_layout_from_counts(m, &c[i], &per[info->mig_index[i]], reason,
                                              sizeof reason))
                    break;
                c[i].n[q]--;
            }
            if (i == gpus)
                return false;
        }
    }
    for (uint32_t i = 0; i < gpus; i++) /* each GPU's last success may have been overwritten */
        if (!gp_mig_layout_from_counts(m, &c[i], &per[info->mig_index[i]], reason, sizeof reason))
            return false;
    return true;
}

/* The engine nodes of a MIG node (info->nparts, objects.h): its whole
 * GPUs (when any: spec keeps them, time-sliced when r >= 2), then its GPUs
 * in MIG mode, each with its own layout (per[g]; the engine's
 * gpu_layouts when they differ), the two with their share of CPU and
 * memory, in proportion to their GPUs, so that together they never offer
 * more than the node has. */
static enum gp_err make_parts(const json_t *node, const json_t *labels, struct gp_arena *a,
                              struct gp_node_spec *s, struct gp_kube_node_info *info,
                              const struct gp_mig_layout *per, const char *model_name, uint32_t r,
                              struct gp_diag *d)
{
    bool whole = info->whole_gpus > 0;
    for (uint32_t i = 0; i < info->whole_gpus; i++)
        info->part_of[info->whole_index[i]] = 0;
    for (uint32_t i = 0; i < info->mig_gpus; i++)
        info->part_of[info->mig_index[i]] = whole;
    info->nparts = whole ? 2 : 1;
    info->split = whole;
    char *model = gp_arena_strdup(a, model_name);
    struct gp_sharing_spec *sh = gp_arena_alloc(a, sizeof *sh);
    if (!model || !sh)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    struct gp_node_spec *ps = whole ? &info->mig_spec : s;
    const struct gp_node_spec base = *s;
    *ps = base;
    if (whole) { /* the MIG part its GPUs' share, the whole part what is left */
        ps->cpu_milli = base.cpu_milli * info->mig_gpus / info->gpus;
        ps->mem_mib = base.mem_mib * info->mig_gpus / info->gpus;
        s->cpu_milli = base.cpu_milli - ps->cpu_milli;
        s->mem_mib = base.mem_mib - ps->mem_mib;
        if (gp_kube_node_scalars_split(a, s, ps, info->mig_gpus, info->gpus) != GP_OK)
            return gp_diag_set(d, GP_ENOMEM, "out of memory"); /* objects_scalar.c */
    }
    memset(sh, 0, sizeof *sh);
    sh->mode = GP_SHARE_MIG;
    sh->replicas = 1;
    sh->mig.strategy = info->mig_single ? GP_MIG_SINGLE : GP_MIG_MIXED;
    sh->mig.model = info->mig;
    const char *config = str(labels, "nvidia.com/mig.config");
    sh->mig.config = config ? gp_arena_strdup(a, config) : NULL;
    sh->mig.layout = per[info->mig_index[0]];
    /* GPUs of different layouts (mig-parted applies a config per device):
     * each its own, the part's GPU i being the node's GPU mig_index[i] */
    bool alike = true;
    for (uint32_t i = 1; i < info->mig_gpus && alike; i++)
        alike = layout_same(&per[info->mig_index[i]], &sh->mig.layout);
    if (!alike) {
        struct gp_mig_layout *own = gp_arena_alloc(a, info->mig_gpus * sizeof *own);
        if (!own)
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < info->mig_gpus; i++)
            own[i] = per[info->mig_index[i]];
        sh->mig.gpu_layouts = own;
    }
    ps->sharing = sh;
    ps->gpu_count = info->mig_gpus;
    ps->gpu_model = model;
    if (info->mig_single) /* gpu.memory is then a MIG device's */
        ps->gpu_mem_mib = 0;
    if (!whole || r < 2)
        return GP_OK;
    /* the whole part time-sliced as any such node (objects_share.c): its
     * GPUs nvidia.com/gpu over the replicas, its model less "-SHARED" */
    struct gp_kube_node_info whole_info = {0};
    return gp_kube_node_share_read(node, a, s, &whole_info, d);
}

enum gp_err gp_kube_node_mig_read(const json_t *node, struct gp_arena *a, struct gp_node_spec *s,
                                  struct gp_kube_node_info *info, struct gp_diag *d)
{
    const json_t *meta = json_object_get(node, "metadata");
    const json_t *status = json_object_get(node, "status");
    const json_t *labels = json_object_get(meta, "labels");
    /* the layout: what the node has (capacity), unhealthy devices too */
    const json_t *res = json_object_get(status, "capacity");
    if (!res)
        res = json_object_get(status, "allocatable");
    info->whole_gpus = info->gpus = s->gpu_count;
    const char *strategy = str(labels, "nvidia.com/mig.strategy");
    const char *product = str(labels, "nvidia.com/gpu.product");
    if (!strategy || !product ||
        (strcmp(strategy, "mixed") != 0 && strcmp(strategy, "single") != 0))
        return GP_OK;
    bool is_single = strcmp(strategy, "single") == 0;
    const char *suffix = strstr(product, "-MIG-");
    /* the model: gpu.product less "-MIG-<profile>" (single), or less
     * "-SHARED" (mixed, the whole GPUs time-sliced: GFD labels them last,
     * so their product wins, node/labels.c) */
    char model_name[128];
    snprintf(model_name, sizeof model_name, "%.*s",
             (int)(suffix ? (size_t)(suffix - product) : gp_sharing_gfd_model_len(product)),
             product);
    const struct gp_mig_model *m = gp_mig_model_find(model_name);
    if (!m || (is_single && !suffix))
        return GP_OK; /* no MIG model, or MIG disabled (single, all-disabled): whole GPUs */
    char why[256] = "";
    /* mixed: GFD's gpu.replicas and gpu.sharing-strategy are the whole
     * GPUs' (nvidia.com/gpu), as the device plugin replicates each
     * resource its config names on its own (DP api/config/v1/replicas.go);
     * nvidia.com/gpu counts their replicas */
    uint32_t r = is_single ? 1 : gp_kube_node_replicas(node), adv = s->gpu_count;
    /* renamed (renameByDefault): the whole GPUs' replicas are
     * nvidia.com/gpu.shared (objects_share.c) */
    enum gp_err err =
        is_single ? GP_OK : gp_kube_node_whole_replicas(node, info->name, adv, &adv, d);
    if (err != GP_OK)
        return err;
    uint32_t whole = adv / r;
    /* single: the layout from capacity's nvidia.com/gpu, unhealthy devices
     * too (the kubelet's device manager keeps every device the plugin
     * lists in capacity and only the healthy ones in allocatable:
     * pkg/kubelet/cm/devicemanager/manager.go GetCapacity), so that one
     * device unhealthy leaves its GPUs readable; the healthy count, s's
     * (allocatable), is what may be placed (drop_unhealthy below) */
    uint32_t single_cap = s->gpu_count;
    int64_t cap_count;
    if (is_single && count_of(json_object_get(res, "nvidia.com/gpu"), &cap_count) &&
        cap_count > (int64_t)s->gpu_count &&
        cap_count <= GP_MAX_GPUS_PER_NODE * GP_MIG_MAX_INSTANCES)
        single_cap = (uint32_t)cap_count;
    uint32_t gpus = is_single ? single(labels, suffix + 5, single_cap, m, info, why, sizeof why)
                              : mixed(labels, res, m, whole, info, why, sizeof why);
    if (is_single && gpus > 0) {
        int p = gp_mig_profile_find(m, suffix + 5);
        if (p >= 0 && s->gpu_count < info->mig_cap[p])
            info->mig_alloc[p] = (uint16_t)s->gpu_count;
    }
    if (!gpus && !why[0])
        return GP_OK; /* whole GPUs only: objects_share.c reads their sharing */
    const char *mode = str(labels, "nvidia.com/gpu.sharing-strategy");
    if (!why[0] && r > 1 && mode && strcmp(mode, "mps") == 0) /* docs/sharing.md, "MPS" */
        snprintf(why, sizeof why,
                 "nvidia.com/gpu.sharing-strategy is mps beside MIG devices: NVIDIA's device "
                 "plugin refuses MPS with MIG");
    info->mig = m;
    info->mig_single = is_single;
    info->whole_gpus = is_single ? 0 : whole;
    info->replicas = r > 1 ? r : 0;
    info->mig_gpus = gpus;
    info->gpus = info->whole_gpus + gpus;
    const char *state = str(labels, "nvidia.com/mig.config.state");
    if (!why[0] && info->whole_gpus > 0)
        split_indexes(labels, info, why, sizeof why);
    for (uint32_t i = 0; info->whole_gpus == 0 && i < gpus; i++)
        info->mig_index[i] = (uint8_t)i; /* every GPU in MIG mode */
    if (!why[0] && state && strcmp(state, "success") != 0)
        snprintf(why, sizeof why, "nvidia.com/mig.config.state is \"%s\": the layout is changing",
                 state);
    struct gp_mig_layout *per = gp_arena_alloc(a, GP_MAX_GPUS_PER_NODE * sizeof *per);
    if (!per)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    memset(per, 0, GP_MAX_GPUS_PER_NODE * sizeof *per);
    int labelled = 0;
    if (!why[0] && !is_single)
        labelled = labelled_layouts(labels, m, info, per, why, sizeof why);
    /* without the agent's labels: one layout over the GPUs from the
     * counts; where that fails and no agent of gpuplane's is there to
     * name instances to (NVIDIA's own plugin), placed by count, as
     * kube-scheduler does (pack_counts) */
    char uneven[256];
    bool agent = str(labels, GP_KUBE_LABEL_AGENT) != NULL;
    if (!why[0] && labelled == 0) {
        if (layout_of(m, info->mig_cap, gpus, &per[info->mig_index[0]], uneven, sizeof uneven))
            for (uint32_t i = 1; i < gpus; i++)
                per[info->mig_index[i]] = per[info->mig_index[0]];
        else if (!is_single && !agent && pack_counts(m, info, per))
            info->mig_by_count = true;
        else
            snprintf(why, sizeof why, "%.200s%s", uneven,
                     is_single || agent ? "" : "; nor do they pack into the GPUs in MIG mode");
    }
    if (why[0]) { /* counted by the audit, placed on by no one of ours */
        info->mig_why = gp_arena_strdup(a, why);
        info->split = false;
        s->gpu_count = 0;
        s->sharing = NULL;
        return info->mig_why ? GP_OK : gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (!is_single)
        allocatable_of(json_object_get(status, "allocatable"), m, info);
    /* labelled by gpuplane's agent too: the kubelet admits no more pods
     * of a profile than allocatable's healthy devices (which one is
     * unhealthy the Node does not say: the last GPU's instance is left
     * out, docs/kube.md) */
    drop_unhealthy(m, info, per);
    info->layouts_labelled = labelled > 0;
    info->gpu_layout = per;
    return make_parts(node, labels, a, s, info, per, model_name, r, d);
}

/* --- pods ----------------------------------------------------------------- */

bool gp_kube_mig_profile_info(const char *profile, unsigned *compute, uint32_t *mem_mib)
{
    for (size_t i = 0; i < gp_mig_nmodels; i++) {
        int q = gp_mig_profile_find(&gp_mig_models[i], profile);
        if (q >= 0) {
            *compute = gp_mig_models[i].profiles[q].compute_slices;
            *mem_mib = gp_mig_models[i].profiles[q].memory_mib;
            return true;
        }
    }
    return false;
}

void gp_kube_explain_pod_text(const struct gp_explain *x, const struct gp_pod_spec *pod, char *buf,
                              size_t size)
{
    /* kube-scheduler's NodeResourcesFit says "Insufficient <resource>" for
     * a node that does not advertise enough of the extended resource, 0
     * included: a MIG request on a node without that profile, or whole
     * GPUs on one whose GPUs are all in MIG mode (mixed strategy) */
    struct gp_explain y = *x;
    if (pod && pod->mig_profile) {
        y.rejected[GP_FILTER_MIG] +=
            y.rejected[GP_FILTER_SHARING] + y.rejected[GP_FILTER_GPU_COUNT];
        y.rejected[GP_FILTER_SHARING] = y.rejected[GP_FILTER_GPU_COUNT] = 0;
        char res[96];
        snprintf(res, sizeof res, "Insufficient nvidia.com/mig-%.60s", pod->mig_profile);
        gp_kube_explain_text_as(&y, GP_FILTER_MIG, res, buf, size);
        return;
    }
    /* the same for the resource a pod of whole GPUs or of renamed
     * replicas asks: too few GPUs, none advertised as that resource (MIG
     * GPUs, replicas renamed or not), and no free replica on a time-sliced
     * or MPS node (the plugin advertises each replica: a full node has no
     * more of the resource) are all kube-scheduler's "Insufficient
     * nvidia.com/gpu" or "Insufficient nvidia.com/gpu.shared" (issue 14) */
    bool shared = pod && pod->gpu_resource == GP_GPU_RES_SHARED;
    if (pod && (pod->gpu_resource == GP_GPU_RES_GPU || shared) && pod->gpu_count > 0) {
        y.rejected[GP_FILTER_GPU_COUNT] += y.rejected[GP_FILTER_SHARING] +
                                           y.rejected[GP_FILTER_MIG] +
                                           y.rejected[GP_FILTER_GPU_REPLICA];
        y.rejected[GP_FILTER_SHARING] = y.rejected[GP_FILTER_MIG] = 0;
        y.rejected[GP_FILTER_GPU_REPLICA] = 0;
    }
    gp_kube_explain_text_as(&y, shared ? GP_FILTER_GPU_COUNT : GP_FILTER_COUNT,
                            shared ? "Insufficient nvidia.com/gpu.shared" : NULL, buf, size);
}
