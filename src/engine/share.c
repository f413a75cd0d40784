/* share.c - pods on shared GPUs: filters, the choice of GPUs and MIG
 * instances, and the per-GPU accounting of exclusive, time-sliced, MPS and
 * MIG pools (share.h, docs/sharing.md). */
#include "engine/share.h"

#include <stdio.h>
#include <string.h>

static int node_mode(const struct gp_node *n)
{
    return n->spec.sharing ? (int)n->spec.sharing->mode : -1;
}

static bool is_whole(const struct gp_pod *p)
{
    return p->spec.gpu_milli == GP_GPU_MILLI && !p->spec.mig_profile;
}

static unsigned popcount8(unsigned x)
{
    unsigned c = 0;
    for (; x; x &= x - 1)
        c++;
    return c;
}

/* --- whole GPUs and NVLink domains ---------------------------------------- */

static bool gpu_free(const struct gp_gpu *g)
{
    return g->milli_free == GP_GPU_MILLI && g->pods == 0;
}

int gp_share_pick_whole(const struct gp_node *n, uint32_t want, struct gp_pick *pick)
{
    uint32_t count = n->spec.gpu_count, d = n->spec.nvlink_gpus;
    pick->ngpus = 0;
    if (d == 0 || d >= count) { /* no domains: the lowest-indexed free GPUs */
        if (n->gpus_whole_free == count && want <= count) { /* all free: the first ones */
            for (; pick->ngpus < want; pick->ngpus++)
                pick->gpu[pick->ngpus] = pick->ngpus;
            return 0;
        }
        for (uint32_t g = 0; g < count && pick->ngpus < want; g++)
            if (gpu_free(&n->gpu[g]))
                pick->gpu[pick->ngpus++] = (uint8_t)g;
        return pick->ngpus == want ? 0 : -1;
    }
    uint32_t ndom = (count + d - 1) / d, nfree[GP_MAX_GPUS_PER_NODE] = {0}, total = 0;
    for (uint32_t g = 0; g < count; g++)
        if (gpu_free(&n->gpu[g])) {
            nfree[g / d]++;
            total++;
        }
    if (total < want)
        return -1;
    int best = -1; /* one domain that holds them all, the fullest such */
    for (uint32_t k = 0; k < ndom; k++)
        if (nfree[k] >= want && (best < 0 || nfree[k] < nfree[best]))
            best = (int)k;
    while (pick->ngpus < want) {
        int k = best;
        if (k < 0) /* they span domains: the emptiest first */
            for (uint32_t j = 0; j < ndom; j++)
                if (nfree[j] > 0 && (k < 0 || nfree[j] > nfree[k]))
                    k = (int)j;
        uint32_t end = (uint32_t)(k + 1) * d < count ? (uint32_t)(k + 1) * d : count;
        for (uint32_t g = (uint32_t)k * d; g < end && pick->ngpus < want; g++)
            if (gpu_free(&n->gpu[g]))
                pick->gpu[pick->ngpus++] = (uint8_t)g;
        nfree[k] = 0;
    }
    return 0;
}

/* --- pods ---------------------------------------------------------------- */

/* The smallest profile (memory slices, then compute slices) without media
 * extensions that holds a fraction of milli thousandths of the GPU's
 * compute and mem_mib of memory; -1 when none does. */
static int smallest_profile(const struct gp_mig_model *m, uint32_t milli, uint32_t mem_mib)
{
    int best = -1;
    for (size_t i = 0; i < m->nprofiles; i++) {
        const struct gp_mig_profile *pr = &m->profiles[i];
        if (pr->media_ext || pr->memory_mib < mem_mib ||
            (uint64_t)pr->compute_slices * GP_GPU_MILLI < (uint64_t)milli * m->compute_slices)
            continue;
        if (best < 0 || pr->memory_slices < m->profiles[best].memory_slices ||
            (pr->memory_slices == m->profiles[best].memory_slices &&
             pr->compute_slices < m->profiles[best].compute_slices))
            best = (int)i;
    }
    return best;
}

void gp_share_pod_init(struct gp_pod *p)
{
    const struct gp_pod_spec *s = &p->spec;
    bool fraction = s->gpu_count == 1 && s->gpu_milli < GP_GPU_MILLI;
    bool mig_ok = !s->share_modes || (s->share_modes >> GP_SHARE_MIG & 1);
    for (size_t i = 0; i < GP_MIG_MAX_MODELS; i++) {
        int q = -1;
        if (i < gp_mig_nmodels && s->gpu_count > 0) {
            if (s->mig_profile)
                q = gp_mig_profile_find(&gp_mig_models[i], s->mig_profile);
            else if (fraction && mig_ok)
                q = smallest_profile(&gp_mig_models[i], s->gpu_milli, s->gpu_mem_mib);
        }
        p->mig_profile_of[i] = (int8_t)q;
    }
}

/* --- per-GPU accounting -------------------------------------------------- */

/* The layout without its free instances; held maps to the new indexes. */
static void mig_drop_free(struct gp_mig_gpu *mg)
{
    struct gp_mig_gpu out = *mg;
    out.layout.n = 0;
    out.held = 0;
    for (unsigned i = 0; i < mg->layout.n; i++)
        if (mg->held >> i & 1) {
            out.held |= (uint8_t)(1u << out.layout.n);
            out.layout.inst[out.layout.n++] = mg->layout.inst[i];
        }
    *mg = out;
}

/* The profile masks of a MIG GPU (struct gp_mig_gpu). */
static void mig_masks(const struct gp_mig_model *m, struct gp_mig_gpu *mg, bool dynamic)
{
    mg->free_mask = 0;
    mg->nheld = (uint8_t)popcount8(mg->held);
    for (unsigned i = 0; i < mg->layout.n; i++)
        if (!(mg->held >> i & 1))
            mg->free_mask |= (uint16_t)(1u << mg->layout.inst[i].profile);
    mg->create_mask = mg->reset_mask = 0;
    memset(mg->create_start, -1, sizeof mg->create_start);
    memset(mg->reset_start, -1, sizeof mg->reset_start);
    if (!dynamic)
        return;
    struct gp_mig_gpu held_only = *mg;
    mig_drop_free(&held_only);
    uint32_t can_create = gp_mig_free_profiles(m, &mg->layout);
    uint32_t can_reset = gp_mig_free_profiles(m, &held_only.layout);
    for (unsigned q = 0; q < m->nprofiles; q++) {
        if (can_create >> q & 1)
            mg->create_start[q] = (int8_t)gp_mig_place(m, &mg->layout, q);
        if ((can_reset >> q & 1) && !(can_create >> q & 1)) /* else CREATE comes first */
            mg->reset_start[q] = (int8_t)gp_mig_place(m, &held_only.layout, q);
        if (mg->create_start[q] >= 0)
            mg->create_mask |= (uint16_t)(1u << q);
        if (mg->reset_start[q] >= 0)
            mg->reset_mask |= (uint16_t)(1u << q);
    }
}

/* The node's mask: the profiles one more instance of which fits a GPU. */
static void mig_node_mask(struct gp_node *n)
{
    n->mig_way_mask[0] = n->mig_way_mask[1] = n->mig_way_mask[2] = 0;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        n->mig_way_mask[0] |= n->mig[g].free_mask;
        n->mig_way_mask[1] |= n->mig[g].create_mask;
        n->mig_way_mask[2] |= n->mig[g].reset_mask;
    }
    n->mig_mask = n->mig_way_mask[0] | n->mig_way_mask[1] | n->mig_way_mask[2];
}

/* A MIG GPU's free compute and memory (the slices no pod holds) and its
 * masks. */
static void mig_account(struct gp_node *n, uint32_t g, struct gp_gpu *gpu)
{
    const struct gp_mig_model *m = &gp_mig_models[n->mig_model];
    struct gp_mig_gpu *mg = &n->mig[g];
    mig_masks(m, mg, n->spec.sharing->mig.dynamic);
    unsigned compute = 0, memory = 0;
    for (unsigned i = 0; i < mg->layout.n; i++)
        if (mg->held >> i & 1) {
            compute += m->profiles[mg->layout.inst[i].profile].compute_slices;
            memory += m->profiles[mg->layout.inst[i].profile].memory_slices;
        }
    gpu->milli_free = (m->compute_slices - compute) * GP_GPU_MILLI / m->compute_slices;
    gpu->mem_free_mib =
        (uint32_t)((uint64_t)n->spec.gpu_mem_mib * (m->memory_slices - memory) / m->memory_slices);
    gpu->pods = popcount8(mg->held);
}

/* A time-sliced or MPS GPU: the free replicas' share of the whole. */
static uint32_t replica_milli(uint32_t replicas, uint32_t pods)
{
    return replicas ? (replicas - pods) * GP_GPU_MILLI / replicas : 0;
}

void gp_share_node_init(struct gp_node *n)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    n->mig_model = -1;
    if (!s || n->spec.gpu_count == 0)
        return;
    if (s->mode == GP_SHARE_MIG && s->mig.model) {
        n->mig_model = (int16_t)(s->mig.model - gp_mig_models);
        const struct gp_mig_layout *own = s->mig.gpu_layouts; /* each GPU its own layout */
        for (uint32_t g = 0; g < (own ? n->spec.gpu_count : 1); g++) {
            n->mig[g].layout = own ? own[g] : s->mig.layout;
            n->mig[g].held = 0;
            mig_account(n, g, &n->gpu[g]);
        }
        for (uint32_t g = 1; !own && g < n->spec.gpu_count; g++) { /* all alike */
            n->mig[g] = n->mig[0];
            n->gpu[g] = n->gpu[0];
        }
        mig_node_mask(n);
    } else if (s->mode == GP_SHARE_MPS && s->mps.pinned_mem_mib > 0) {
        for (uint32_t g = 0; g < n->spec.gpu_count; g++)
            n->gpu[g].mem_free_mib = s->mps.pinned_mem_mib * s->replicas;
    }
}

/* --- which requests go where -------------------------------------------- */

/* The MIG profile a pod takes on a MIG node: its own, the smallest that
 * holds its fraction, or - whole GPUs on a pool of the single strategy,
 * where the device plugin advertises each instance as nvidia.com/gpu - the
 * pool's one profile; -1 when none. */
static int pod_profile(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    if (is_whole(p))
        return s->mig.strategy == GP_MIG_SINGLE && s->mig.layout.n > 0
                   ? s->mig.layout.inst[0].profile
                   : -1;
    return p->mig_profile_of[n->mig_model];
}

/* Why a node refuses a pod's GPU request whatever is free on it, as the
 * device plugin advertises the node's GPUs (docs/sharing.md). */
enum refusal {
    REF_NONE,
    REF_PINNED,         /* gpuplane.io/sharing does not allow the node's mode */
    REF_MIG_PROFILE,    /* nvidia.com/mig-<profile> on a node without MIG */
    REF_MIG_NONE,       /* no MIG instance of the node's model serves it */
    REF_MIG_GPU,        /* nvidia.com/gpu under MIG's mixed strategy */
    REF_MIG_SINGLE,     /* nvidia.com/mig-<profile> under the single strategy */
    REF_RENAMED,        /* nvidia.com/gpu on renamed replicas (nvidia.com/gpu.shared) */
    REF_SHARED,         /* nvidia.com/gpu.shared on a node that does not advertise it */
    REF_GREATER_THAN_1, /* more than one replica where the plugin fails such requests */
    REF_FRACTIONS,      /* fractions accounted (no sharing spec): no pin, no MIG */
};

/* The most replicas one container of the pod asks: what the device
 * plugin's failRequestsGreaterThanOne checks, in each container's Allocate
 * (NVIDIA k8s-device-plugin internal/rm ValidateRequest). */
static uint32_t container_count(const struct gp_pod *p)
{
    uint32_t c = p->spec.gpu_container_max;
    return c && c < p->spec.gpu_count ? c : p->spec.gpu_count;
}

static enum refusal refusal(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    int mode = node_mode(n);
    uint8_t res = p->spec.gpu_resource;
    if (mode < 0 || (mode == GP_SHARE_MIG && n->mig_model < 0)) { /* fractions accounted */
        if (p->spec.mig_profile)
            return REF_MIG_PROFILE;
        if (res == GP_GPU_RES_SHARED)
            return REF_SHARED;
        return !p->spec.share_modes ||
                       (is_whole(p) && (p->spec.share_modes >> GP_SHARE_EXCLUSIVE & 1))
                   ? REF_NONE
                   : REF_FRACTIONS;
    }
    if (p->spec.share_modes && !(p->spec.share_modes >> mode & 1))
        return REF_PINNED;
    if (mode != GP_SHARE_MIG && p->spec.mig_profile)
        return REF_MIG_PROFILE;
    if (mode == GP_SHARE_MIG) {
        if (res == GP_GPU_RES_SHARED)
            return REF_SHARED;
        if (res == GP_GPU_RES_GPU && !p->spec.mig_profile && s->mig.strategy == GP_MIG_MIXED)
            return REF_MIG_GPU;
        if (p->spec.mig_profile && s->mig.strategy == GP_MIG_SINGLE)
            return REF_MIG_SINGLE;
        return pod_profile(n, p) >= 0 ? REF_NONE : REF_MIG_NONE;
    }
    if (mode == GP_SHARE_EXCLUSIVE) /* whole GPUs; a fraction takes one */
        return res == GP_GPU_RES_SHARED ? REF_SHARED : REF_NONE;
    /* time-slicing and MPS: replicas, advertised as nvidia.com/gpu or,
     * renamed, as nvidia.com/gpu.shared; a share by annotations alone
     * takes one replica */
    if (res == GP_GPU_RES_GPU && s->rename_by_default)
        return REF_RENAMED;
    if (res == GP_GPU_RES_SHARED && !s->rename_by_default)
        return REF_SHARED;
    /* per container, as the plugin checks each container's Allocate */
    if (container_count(p) > 1 && (s->fail_requests_greater_than_one || s->mode == GP_SHARE_MPS))
        return REF_GREATER_THAN_1;
    return REF_NONE;
}

bool gp_share_mode_ok(const struct gp_node *n, const struct gp_pod *p)
{
    return refusal(n, p) == REF_NONE;
}

const char *gp_share_refusal(const struct gp_node *n, const struct gp_pod *p, char *buf,
                             size_t size)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    const char *mode = s ? gp_share_mode_name(s->mode) : "fraction-accounted";
    switch (refusal(n, p)) {
    case REF_NONE:
        return NULL;
    case REF_PINNED:
        snprintf(buf, size, "its gpuplane.io/sharing annotation does not allow %s", mode);
        break;
    case REF_MIG_PROFILE:
        snprintf(buf, size, "it asks for nvidia.com/mig-%s, which only MIG GPUs advertise",
                 p->spec.mig_profile);
        break;
    case REF_MIG_NONE:
        if (p->spec.mig_profile)
            snprintf(buf, size, "the %s has no MIG profile %s", n->spec.gpu_model,
                     p->spec.mig_profile);
        else if (is_whole(p))
            snprintf(buf, size,
                     "it asks for nvidia.com/gpu, and under MIG's single strategy without a "
                     "layout no instance is advertised as such");
        else
            snprintf(buf, size, "no MIG profile of the %s holds its share", n->spec.gpu_model);
        break;
    case REF_MIG_GPU:
        snprintf(buf, size,
                 "it asks for nvidia.com/gpu, which the device plugin does not advertise for "
                 "GPUs in MIG mode under the mixed strategy (they offer nvidia.com/mig-<profile>)");
        break;
    case REF_MIG_SINGLE:
        snprintf(buf, size,
                 "it asks for nvidia.com/mig-%s, and under MIG's single strategy the device "
                 "plugin advertises every instance as nvidia.com/gpu",
                 p->spec.mig_profile);
        break;
    case REF_RENAMED:
        snprintf(buf, size,
                 "it asks for nvidia.com/gpu, and with renameByDefault: true the device plugin "
                 "advertises these %s replicas as nvidia.com/gpu.shared only",
                 mode);
        break;
    case REF_SHARED:
        snprintf(buf, size,
                 "it asks for nvidia.com/gpu.shared, which the device plugin advertises only "
                 "for time-sliced or MPS GPUs with renameByDefault: true");
        break;
    case REF_GREATER_THAN_1:
        snprintf(buf, size,
                 "%s %u replicas, and the device plugin fails requests for more than "
                 "one (failRequestsGreaterThanOne%s)",
                 container_count(p) < p->spec.gpu_count ? "one of its containers asks for"
                                                        : "it asks for",
                 container_count(p), s->mode == GP_SHARE_MPS ? ", always under MPS" : ": true");
        break;
    case REF_FRACTIONS:
        snprintf(buf, size, "its gpuplane.io/sharing annotation allows no mode of these GPUs");
        break;
    }
    return buf;
}

/* --- MIG ----------------------------------------------------------------- */

/* How one more instance of profile q gets onto a GPU: an instance that is
 * free already, a new one in unpartitioned slices, or a new one after the
 * free instances are removed (dynamic pools only). */
enum mig_way { MIG_NONE, MIG_FREE, MIG_CREATE, MIG_RESET };

/* The way (and where: the instance's start) for q on mg. */
static enum mig_way mig_way(const struct gp_mig_model *m, const struct gp_mig_gpu *mg, unsigned q,
                            bool dynamic, enum mig_way at_most, int *start)
{
    uint16_t bit = (uint16_t)(1u << q);
    if (!((mg->free_mask | mg->create_mask | mg->reset_mask) & bit))
        return MIG_NONE;
    int best = -1;
    for (unsigned i = 0; i < mg->layout.n; i++)
        if (mg->layout.inst[i].profile == q && !(mg->held >> i & 1) &&
            (best < 0 || mg->layout.inst[i].start < best))
            best = mg->layout.inst[i].start;
    if (best >= 0) {
        *start = best;
        return MIG_FREE;
    }
    if (!dynamic || at_most == MIG_FREE)
        return MIG_NONE;
    (void)m;
    if (mg->create_mask & bit) {
        *start = mg->create_start[q];
        return MIG_CREATE;
    }
    if (at_most == MIG_CREATE || !(mg->reset_mask & bit))
        return MIG_NONE;
    *start = mg->reset_start[q];
    return MIG_RESET;
}

/* Puts an instance of q at start on mg as `way` says; returns false when
 * it cannot (a stale pick). */
static bool mig_apply(const struct gp_mig_model *m, struct gp_mig_gpu *mg, unsigned q, int start)
{
    for (unsigned i = 0; i < mg->layout.n; i++)
        if (mg->layout.inst[i].profile == q && mg->layout.inst[i].start == start &&
            !(mg->held >> i & 1)) {
            mg->held |= (uint8_t)(1u << i);
            return true;
        }
    if (!gp_mig_fits(m, &mg->layout, q, (unsigned)start))
        mig_drop_free(mg);
    if (mg->layout.n >= GP_MIG_MAX_INSTANCES || !gp_mig_fits(m, &mg->layout, q, (unsigned)start))
        return false;
    mg->held |= (uint8_t)(1u << mg->layout.n);
    mg->layout.inst[mg->layout.n++] = (struct gp_mig_instance){(uint8_t)q, (uint8_t)start};
    return true;
}

/* gpu_count instances of the pod's profile, one at a time: a free
 * instance first (no re-partitioning), then a new one in free slices,
 * then one after removing free instances; among GPUs the busiest first
 * (most instances held, then the lowest index), so that empty GPUs stay
 * whole for the largest profiles. */
/* The GPU for one more instance of q, the way and its start; -1. */
static int mig_best_gpu(const struct gp_mig_model *m, const struct gp_mig_gpu *mg, uint32_t ngpus,
                        const uint16_t way_mask[3], unsigned q, bool dynamic, enum mig_way *way_out,
                        int *start)
{
    uint16_t bit = (uint16_t)(1u << q);
    for (enum mig_way way = MIG_FREE; way <= MIG_RESET; way++) {
        if (way_mask && !(way_mask[way - MIG_FREE] & bit))
            continue;
        int best = -1;
        for (uint32_t g = 0; g < ngpus; g++) {
            uint16_t mask = way == MIG_FREE     ? mg[g].free_mask
                            : way == MIG_CREATE ? mg[g].create_mask
                                                : mg[g].reset_mask;
            if ((mask & bit) && (best < 0 || mg[g].nheld > mg[best].nheld))
                best = (int)g;
        }
        if (best >= 0 && mig_way(m, &mg[best], q, dynamic, way, start) == way) {
            *way_out = way;
            return best;
        }
    }
    return -1;
}

/* gpu_count instances of the pod's profile, one at a time: a free
 * instance first (no re-partitioning), then a new one in free slices,
 * then one after removing free instances; among GPUs the busiest first
 * (most instances held, then the lowest index), so that empty GPUs stay
 * whole for the largest profiles. */
static int mig_pick(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick)
{
    const struct gp_mig_model *m = &gp_mig_models[n->mig_model];
    int q = pod_profile(n, p);
    bool dynamic = n->spec.sharing->mig.dynamic;
    pick->ngpus = 0;
    pick->mig_profile = (int8_t)q;
    pick->reconfigured = 0;
    if (q < 0 || !(n->mig_mask >> q & 1))
        return -1;
    enum mig_way way;
    int start;
    if (p->spec.gpu_count == 1) { /* no scratch copy for one instance */
        int g = mig_best_gpu(m, n->mig, n->spec.gpu_count, n->mig_way_mask, (unsigned)q, dynamic,
                             &way, &start);
        if (g < 0)
            return -1;
        pick->ngpus = 1;
        pick->gpu[0] = (uint8_t)g;
        pick->mig_start[0] = (uint8_t)start;
        pick->reconfigured = way == MIG_FREE ? 0 : (uint16_t)(1u << g);
        return 0;
    }
    struct gp_mig_gpu mg[GP_MAX_GPUS_PER_NODE];
    memcpy(mg, n->mig, n->spec.gpu_count * sizeof mg[0]);
    for (uint32_t k = 0; k < p->spec.gpu_count; k++) {
        int g = mig_best_gpu(m, mg, n->spec.gpu_count, NULL, (unsigned)q, dynamic, &way, &start);
        if (g < 0 || !mig_apply(m, &mg[g], (unsigned)q, start))
            return -1;
        mig_masks(m, &mg[g], dynamic);
        if (way != MIG_FREE)
            pick->reconfigured |= (uint16_t)(1u << g);
        pick->gpu[k] = (uint8_t)g;
        pick->mig_start[k] = (uint8_t)start;
        pick->ngpus++;
    }
    return 0;
}

/* Whether the pod's MIG instances fit the node were no instance held. */
static bool mig_empty_fits(const struct gp_node *n, const struct gp_pod *p)
{
    struct gp_node empty = *n;
    struct gp_pick pick;
    bool dynamic = n->spec.sharing->mig.dynamic;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        empty.mig[g].held = 0;
        if (dynamic) /* an empty dynamic GPU may take any layout */
            empty.mig[g].layout.n = 0;
        mig_masks(&gp_mig_models[n->mig_model], &empty.mig[g], dynamic);
    }
    mig_node_mask(&empty);
    return mig_pick(&empty, p, &pick) == 0;
}

/* --- time-slicing and MPS ------------------------------------------------ */

/* Whether a replica of a GPU with mem_free_mib left holds the pod's
 * declared memory. */
static bool replica_mem_fits(const struct gp_node *n, uint32_t mem_free_mib, const struct gp_pod *p)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    uint32_t mem = p->spec.gpu_mem_mib;
    if (s->mode == GP_SHARE_MPS)
        return s->mps.pinned_mem_mib == 0 ? mem <= n->spec.gpu_mem_mib
                                          : mem <= s->mps.pinned_mem_mib;
    return mem <= mem_free_mib;
}

/* The pod's replicas (gpu_count of them: nvidia.com/gpu: N on replicas
 * takes N), one at a time: each from the GPU with a free replica that
 * holds the pod's declared memory (any free replica when the pool
 * oversubscribes), a GPU the pod has no replica on yet first, then the
 * fullest, then the lowest index. One replica thus goes to the fullest
 * GPU (packing); several spread over distinct GPUs while there are some,
 * as the device plugin's default allocation prefers, and share one
 * otherwise (docs/sharing.md). Declared memory counts per replica. 0, or
 * -1 when they do not fit. */
static int replica_pick(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    uint32_t want = p->spec.gpu_count, mem = p->spec.gpu_mem_mib;
    uint32_t pods[GP_MAX_GPUS_PER_NODE], mem_free[GP_MAX_GPUS_PER_NODE], mine = 0;
    bool over_ok = s->mode == GP_SHARE_TIMESLICE && s->oversubscribe;
    if (want == 0 || want > GP_MAX_GPUS_PER_NODE)
        return -1;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        pods[g] = n->gpu[g].pods;
        mem_free[g] = n->gpu[g].mem_free_mib;
    }
    pick->ngpus = 0;
    for (uint32_t k = 0; k < want; k++) {
        int best = -1;
        bool best_fits = false, best_new = false;
        for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
            if (pods[g] >= s->replicas)
                continue;
            bool fits = replica_mem_fits(n, mem_free[g], p), fresh = !(mine >> g & 1);
            if ((!fits && !over_ok) || (!fresh && s->distinct_replicas))
                continue;
            if (best < 0 || (fits && !best_fits) ||
                (fits == best_fits &&
                 ((fresh && !best_new) || (fresh == best_new && pods[g] > pods[best])))) {
                best = (int)g;
                best_fits = fits;
                best_new = fresh;
            }
        }
        if (best < 0)
            return -1;
        pick->gpu[pick->ngpus++] = (uint8_t)best;
        pods[best]++;
        mem_free[best] = mem_free[best] > mem ? mem_free[best] - mem : 0;
        mine |= 1u << best;
    }
    return 0;
}

/* Free replicas on the node, all GPUs together (one a GPU when a pod's
 * replicas must be on distinct GPUs). */
static uint32_t replicas_free(const struct gp_node *n)
{
    uint32_t free = 0;
    const struct gp_sharing_spec *s = n->spec.sharing;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++)
        if (n->gpu[g].pods < s->replicas)
            free += s->distinct_replicas ? 1 : s->replicas - n->gpu[g].pods;
    return free;
}

/* --- the filter and the pick --------------------------------------------- */

enum gp_filter gp_share_filter(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    uint32_t mem = p->spec.gpu_mem_mib;
    struct gp_pick pick;
    switch (s->mode) {
    case GP_SHARE_EXCLUSIVE:
        if (n->gpus_whole_free < p->spec.gpu_count)
            return GP_FILTER_GPU_COUNT;
        return mem > n->spec.gpu_mem_mib ? GP_FILTER_GPU_MEMORY : GP_FILTER_COUNT;
    case GP_SHARE_MPS:
        /* a declared share must fit a client's limits; a replica asked
         * for without one takes what the client gets */
        if (!is_whole(p) && s->mps.active_thread_pct > 0 &&
            p->spec.gpu_milli > s->mps.active_thread_pct * (GP_GPU_MILLI / 100))
            return GP_FILTER_GPU_SHARE;
        /* fall through */
    case GP_SHARE_TIMESLICE:
        if (n->gpu_milli_max_free == 0 ||
            (p->spec.gpu_count > 1 && replicas_free(n) < p->spec.gpu_count))
            return GP_FILTER_GPU_REPLICA;
        if (mem > n->spec.gpu_mem_mib && !(s->mode == GP_SHARE_TIMESLICE && s->oversubscribe))
            return GP_FILTER_GPU_MEMORY;
        return replica_pick(n, p, &pick) == 0 ? GP_FILTER_COUNT : GP_FILTER_GPU_MEMORY;
    case GP_SHARE_MIG: {
        int q = pod_profile(n, p);
        if (q < 0 || !(n->mig_mask >> q & 1))
            return GP_FILTER_MIG;
        if (p->spec.gpu_count == 1) /* the masks answer for one instance */
            return GP_FILTER_COUNT;
        return mig_pick(n, p, &pick) == 0 ? GP_FILTER_COUNT : GP_FILTER_MIG;
    }
    }
    return GP_FILTER_SHARING;
}

int gp_share_pick(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    memset(pick, 0, sizeof *pick);
    pick->mig_profile = -1;
    if (s->mode == GP_SHARE_MIG)
        return mig_pick(n, p, pick);
    if (s->mode == GP_SHARE_EXCLUSIVE)
        return gp_share_pick_whole(n, p->spec.gpu_count, pick);
    return replica_pick(n, p, pick);
}

/* --- a pick the driver names ---------------------------------------------- */

/* Time-slicing and MPS: one replica on each named GPU (distinct GPUs,
 * checked by the caller), under the rules replica_pick and the filter
 * place by: a free replica, the pod's declared memory in what the GPU has
 * left (any when the pool oversubscribes) or, under MPS, in a client's
 * pinned-memory limit, and a declared share within a client's thread
 * limit. */
static bool replica_named_fits(const struct gp_node *n, const struct gp_pod *p,
                               const struct gp_pick *named)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    bool over_ok = s->mode == GP_SHARE_TIMESLICE && s->oversubscribe;
    if (s->mode == GP_SHARE_MPS && !is_whole(p) && s->mps.active_thread_pct > 0 &&
        p->spec.gpu_milli > s->mps.active_thread_pct * (GP_GPU_MILLI / 100))
        return false;
    for (uint32_t i = 0; i < named->ngpus; i++) {
        const struct gp_gpu *g = &n->gpu[named->gpu[i]];
        if (g->pods >= s->replicas || (!over_ok && !replica_mem_fits(n, g->mem_free_mib, p)))
            return false;
    }
    return true;
}

/* MIG: each named instance a free instance of the pod's profile in its
 * GPU's layout (the pod runs there: no re-partition), none named twice;
 * several may share a GPU, as mig_pick places them. */
static bool mig_named_fits(const struct gp_node *n, const struct gp_pod *p,
                           const struct gp_pick *named)
{
    int q = n->mig_model >= 0 ? pod_profile(n, p) : -1;
    if (q < 0 || named->mig_profile != q)
        return false;
    for (uint32_t i = 0; i < named->ngpus; i++) {
        uint32_t g = named->gpu[i], start = named->mig_start[i];
        for (uint32_t j = 0; j < i; j++)
            if (named->gpu[j] == g && named->mig_start[j] == start)
                return false;
        const struct gp_mig_gpu *mg = &n->mig[g];
        bool found = false;
        for (unsigned k = 0; k < mg->layout.n && !found; k++)
            found = mg->layout.inst[k].profile == (unsigned)q &&
                    mg->layout.inst[k].start == start && !(mg->held >> k & 1);
        if (!found)
            return false;
    }
    return true;
}

int gp_share_pick_named(const struct gp_node *n, const struct gp_pod *p,
                        const struct gp_pick *named, struct gp_pick *pick)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    if (named->ngpus != p->spec.gpu_count || named->ngpus > GP_MAX_GPUS_PER_NODE)
        return -1;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < named->ngpus; i++) {
        uint32_t g = named->gpu[i];
        if (g >= n->spec.gpu_count || (s->mode != GP_SHARE_MIG && (seen >> g & 1)))
            return -1;
        seen |= 1u << g;
    }
    bool ok = false;
    switch (s->mode) {
    case GP_SHARE_EXCLUSIVE: /* whole free GPUs, as gp_share_pick_whole takes them */
        ok = p->spec.gpu_mem_mib <= n->spec.gpu_mem_mib;
        for (uint32_t i = 0; i < named->ngpus && ok; i++)
            ok = gpu_free(&n->gpu[named->gpu[i]]);
        break;
    case GP_SHARE_TIMESLICE:
    case GP_SHARE_MPS:
        ok = replica_named_fits(n, p, named);
        break;
    case GP_SHARE_MIG:
        ok = mig_named_fits(n, p, named);
        break;
    }
    if (!ok)
        return -1;
    memset(pick, 0, sizeof *pick); /* as gp_share_pick writes one */
    pick->mig_profile = -1;
    pick->ngpus = named->ngpus;
    memcpy(pick->gpu, named->gpu, named->ngpus);
    if (s->mode == GP_SHARE_MIG) {
        pick->mig_profile = named->mig_profile;
        memcpy(pick->mig_start, named->mig_start, named->ngpus);
    }
    return 0;
}

bool gp_share_empty_fits(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    if (!s || n->spec.gpu_count == 0 || !gp_share_mode_ok(n, p))
        return false;
    switch (s->mode) {
    case GP_SHARE_EXCLUSIVE:
        return p->spec.gpu_count <= n->spec.gpu_count && p->spec.gpu_mem_mib <= n->spec.gpu_mem_mib;
    case GP_SHARE_MIG:
        if (n->mig_model < 0) /* fractions accounted */
            return p->spec.gpu_count <= n->spec.gpu_count &&
                   p->spec.gpu_mem_mib <= n->spec.gpu_mem_mib;
        return mig_empty_fits(n, p);
    case GP_SHARE_TIMESLICE:
    case GP_SHARE_MPS: {
        struct gp_node empty = *n;
        for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
            empty.gpu[g].pods = empty.gpu[g].mem_over_mib = 0;
            empty.gpu[g].milli_free = GP_GPU_MILLI;
            empty.gpu[g].mem_free_mib = s->mode == GP_SHARE_MPS && s->mps.pinned_mem_mib > 0
                                            ? s->mps.pinned_mem_mib * s->replicas
                                            : n->spec.gpu_mem_mib;
        }
        empty.gpu_milli_max_free = GP_GPU_MILLI;
        return gp_share_filter(&empty, p) == GP_FILTER_COUNT;
    }
    }
    return false;
}

/* --- take and give ------------------------------------------------------- */

bool gp_share_take(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    bool over = false;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t g = pick->gpu[i];
        struct gp_gpu *gpu = &n->gpu[g];
        switch (s->mode) {
        case GP_SHARE_EXCLUSIVE:
            gpu->milli_free = 0;
            gpu->mem_free_mib = 0;
            gpu->pods++;
            break;
        case GP_SHARE_TIMESLICE: {
            uint32_t mem = p->spec.gpu_mem_mib;
            if (mem <= gpu->mem_free_mib) {
                gpu->mem_free_mib -= mem;
            } else {
                gpu->mem_over_mib += mem - gpu->mem_free_mib;
                gpu->mem_free_mib = 0;
                over = true;
            }
            gpu->pods++;
            gpu->milli_free = replica_milli(s->replicas, gpu->pods);
            break;
        }
        case GP_SHARE_MPS:
            gpu->pods++;
            gpu->milli_free = replica_milli(s->replicas, gpu->pods);
            if (s->mps.pinned_mem_mib > 0)
                gpu->mem_free_mib = s->mps.pinned_mem_mib * (s->replicas - gpu->pods);
            break;
        case GP_SHARE_MIG:
            mig_apply(&gp_mig_models[n->mig_model], &n->mig[g], (unsigned)pick->mig_profile,
                      pick->mig_start[i]);
            mig_account(n, g, gpu);
            break;
        }
    }
    if (s->mode == GP_SHARE_MIG)
        mig_node_mask(n);
    return over;
}

void gp_share_give(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    const struct gp_sharing_spec *s = n->spec.sharing;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t g = pick->gpu[i];
        struct gp_gpu *gpu = &n->gpu[g];
        switch (s->mode) {
        case GP_SHARE_EXCLUSIVE:
            gpu->milli_free = GP_GPU_MILLI;
            gpu->mem_free_mib = n->spec.gpu_mem_mib;
            gpu->pods--;
            break;
        case GP_SHARE_TIMESLICE: {
            uint32_t mem = p->spec.gpu_mem_mib;
            if (gpu->mem_over_mib >= mem) {
                gpu->mem_over_mib -= mem;
            } else {
                gpu->mem_free_mib += mem - gpu->mem_over_mib;
                gpu->mem_over_mib = 0;
            }
            gpu->pods--;
            gpu->milli_free = replica_milli(s->replicas, gpu->pods);
            break;
        }
        case GP_SHARE_MPS:
            gpu->pods--;
            gpu->milli_free = replica_milli(s->replicas, gpu->pods);
            if (s->mps.pinned_mem_mib > 0)
                gpu->mem_free_mib = s->mps.pinned_mem_mib * (s->replicas - gpu->pods);
            break;
        case GP_SHARE_MIG: {
            struct gp_mig_gpu *mg = &n->mig[g];
            for (unsigned k = 0; k < mg->layout.n; k++)
                if ((mg->held >> k & 1) && mg->layout.inst[k].profile == pick->mig_profile &&
                    mg->layout.inst[k].start == pick->mig_start[i]) {
                    mg->held &= (uint8_t) ~(1u << k);
                    break;
                }
            mig_account(n, g, gpu);
            break;
        }
        }
    }
    if (s->mode == GP_SHARE_MIG)
        mig_node_mask(n);
}
