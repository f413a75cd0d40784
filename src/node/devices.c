/* devices.c - the device plugin's resources, device IDs, preferred
 * allocations and Allocate answers, following NVIDIA's k8s-device-plugin
 * (devices.h). */
#include "node/devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RES_GPU "nvidia.com/gpu"

static struct gp_node_resource *res_get(struct gp_node_devset *s, const char *base,
                                        struct gp_diag *diag)
{
    char name[64];
    /* only the resources the sharing names are replicated, and renamed
     * with renameByDefault: "<name>.shared" (NVIDIA README, "Shared Access
     * to GPUs": "nvidia.com/gpu.shared"; api/config/v1: each replicated
     * resource gets the default shared rename) */
    bool rep = gp_node_sharing_replicates(&s->sharing, base);
    snprintf(name, sizeof name, "%s%s", base, rep && s->sharing.rename_by_default ? ".shared" : "");
    for (size_t i = 0; i < s->n_resources; i++)
        if (strcmp(s->res[i].name, name) == 0)
            return &s->res[i];
    if (s->n_resources == GP_NODE_MAX_RESOURCES) {
        gp_diag_set(diag, GP_ELIMIT, "more than %d resources on one node", GP_NODE_MAX_RESOURCES);
        return NULL;
    }
    struct gp_node_resource *r = &s->res[s->n_resources++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    /* the socket: "nvidia-" and the name after the domain, as NVIDIA's
     * plugin names it (nvidia-gpu.sock, nvidia-mig-1g.10gb.sock) */
    snprintf(r->socket, sizeof r->socket, "nvidia-%s.sock", name + strlen("nvidia.com/"));
    r->replicas = rep ? s->sharing.replicas : 1;
    r->shared = r->replicas > 1;
    return r;
}

static enum gp_err res_add(struct gp_node_resource *r, const char *uuid, size_t gpu, int mig,
                           uint64_t memory_mib, bool healthy, struct gp_diag *diag)
{
    struct gp_node_dev *d = realloc(r->devs, (r->n + r->replicas) * sizeof *d);
    if (!d)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    r->devs = d;
    for (unsigned k = 0; k < r->replicas; k++) {
        struct gp_node_dev *x = &r->devs[r->n++];
        memset(x, 0, sizeof *x);
        int len = r->shared ? snprintf(x->id, sizeof x->id, "%s::%u", uuid, k)
                            : snprintf(x->id, sizeof x->id, "%s", uuid);
        if (len < 0 || (size_t)len >= sizeof x->id)
            return gp_diag_set(diag, GP_EINVALID,
                               "device ID of %s longer than the 63 characters the device plugin "
                               "API allows",
                               uuid);
        snprintf(x->uuid, sizeof x->uuid, "%s", uuid);
        x->gpu = gpu;
        x->mig = mig;
        x->replica = k;
        x->memory_mib = memory_mib / r->replicas;
        x->healthy = healthy;
    }
    return GP_OK;
}

/* The single strategy: every GPU MIG-enabled with devices of one profile
 * (NVIDIA README, "MIG strategy single"). true when it holds; false with
 * the reason; *any set when some GPU has MIG on. */
static bool single_ok(const struct gp_node_inventory *inv, bool *any, struct gp_diag *diag)
{
    const char *profile = NULL;
    *any = false;
    for (size_t g = 0; g < inv->n_gpus; g++)
        if (inv->gpus[g].mig_enabled)
            *any = true;
    if (!*any)
        return true;
    for (size_t g = 0; g < inv->n_gpus; g++) {
        const struct gp_node_gpu *gpu = &inv->gpus[g];
        if (!gpu->mig_enabled || gpu->n_migs == 0) {
            gp_diag_set(diag, GP_EINVALID,
                        "mig strategy single: GPU %u (%s) has no MIG devices while others do",
                        gpu->index, gpu->uuid);
            return false;
        }
        for (size_t m = 0; m < gpu->n_migs; m++) {
            if (!profile)
                profile = gpu->migs[m].profile;
            else if (strcmp(profile, gpu->migs[m].profile) != 0) {
                gp_diag_set(diag, GP_EINVALID,
                            "mig strategy single: GPU %u has %s devices and %s ones; single needs "
                            "one profile on every GPU (use mixed)",
                            gpu->index, gpu->migs[m].profile, profile);
                return false;
            }
        }
    }
    return true;
}

enum gp_err gp_node_devset_build(const struct gp_node_inventory *inv,
                                 const struct gp_node_sharing *sh, struct gp_node_devset *out,
                                 struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->sharing = *sh;
    if (out->sharing.mode == GP_NODE_SHARE_NONE)
        out->sharing.replicas = 1;
    if (out->sharing.replicas == 0)
        return gp_diag_set(diag, GP_EINVALID, "sharing: replicas must be at least 1");
    bool single_mig = false;
    if (sh->mig_strategy == GP_NODE_MIG_SINGLE && !single_ok(inv, &single_mig, diag))
        return GP_EINVALID;
    enum gp_err e = GP_OK;
    /* nvidia.com/gpu first, whatever holds it */
    if (!res_get(out, RES_GPU, diag))
        return GP_ELIMIT;
    for (size_t g = 0; g < inv->n_gpus && e == GP_OK; g++) {
        const struct gp_node_gpu *gpu = &inv->gpus[g];
        bool migs = gpu->mig_enabled && gpu->n_migs > 0 &&
                    (sh->mig_strategy == GP_NODE_MIG_MIXED ||
                     (sh->mig_strategy == GP_NODE_MIG_SINGLE && single_mig));
        if (!migs) {
            e = res_add(&out->res[0], gpu->uuid, g, -1, gpu->memory_mib, gpu->healthy, diag);
            continue;
        }
        if (out->sharing.mode == GP_NODE_SHARE_MPS)
            e = gp_diag_set(diag, GP_EINVALID,
                            "sharing: MPS is not supported with MIG devices (GPU %u); NVIDIA's "
                            "plugin refuses it too",
                            gpu->index);
        for (size_t m = 0; m < gpu->n_migs && e == GP_OK; m++) {
            char base[64];
            if (sh->mig_strategy == GP_NODE_MIG_SINGLE)
                snprintf(base, sizeof base, "%s", RES_GPU);
            else
                snprintf(base, sizeof base, "nvidia.com/mig-%.40s", gpu->migs[m].profile);
            struct gp_node_resource *r = res_get(out, base, diag);
            e = r ? res_add(r, gpu->migs[m].uuid, g, (int)m, gpu->migs[m].memory_mib, gpu->healthy,
                            diag)
                  : GP_ELIMIT;
        }
    }
    if (e != GP_OK) {
        gp_node_devset_free(out);
        return e;
    }
    /* a resource without devices is not advertised (nvidia.com/gpu when
     * every GPU is in MIG mode under the mixed strategy) */
    size_t k = 0;
    for (size_t i = 0; i < out->n_resources; i++) {
        if (out->res[i].n == 0) {
            free(out->res[i].devs);
            continue;
        }
        out->res[k++] = out->res[i];
    }
    out->n_resources = k;
    return GP_OK;
}

void gp_node_devset_free(struct gp_node_devset *s)
{
    for (size_t i = 0; i < s->n_resources; i++) {
        free(s->res[i].devs);
        s->res[i].devs = NULL;
        s->res[i].n = 0;
    }
    s->n_resources = 0;
}

bool gp_node_devset_health(struct gp_node_resource *r, const struct gp_node_inventory *inv)
{
    bool changed = false;
    for (size_t i = 0; i < r->n; i++) {
        bool h = r->devs[i].gpu < inv->n_gpus && inv->gpus[r->devs[i].gpu].healthy;
        if (h != r->devs[i].healthy)
            changed = true;
        r->devs[i].healthy = h;
    }
    return changed;
}

long gp_node_dev_find(const struct gp_node_resource *r, const char *id)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->devs[i].id, id) == 0)
            return (long)i;
    return -1;
}

static bool chosen(const struct gp_node_choice *c, unsigned nvml_index)
{
    for (size_t i = 0; c && c->set && i < c->n; i++)
        if (c->index[i] == nvml_index)
            return true;
    return false;
}

/* One of the pod's GPUs (MIG devices are checked against these). */
static bool pod_chosen(const struct gp_node_choice *c, unsigned nvml_index)
{
    if (!c || !c->set)
        return false;
    if (c->n_pod == 0)
        return chosen(c, nvml_index);
    for (size_t i = 0; i < c->n_pod; i++)
        if (c->pod_index[i] == nvml_index)
            return true;
    return false;
}

enum gp_err gp_node_choice_mig_parse(const char *s, struct gp_node_choice *c, struct gp_diag *diag)
{
    c->n_mig = 0;
    c->mig_profile[0] = '\0';
    const char *colon = strchr(s, ':');
    size_t plen = colon ? (size_t)(colon - s) : 0;
    if (!colon || plen == 0 || plen >= sizeof c->mig_profile)
        return gp_diag_set(diag, GP_EINVALID,
                           "gpuplane.io/mig is \"%.200s\", not PROFILE:GPU@SLICE,...", s);
    memcpy(c->mig_profile, s, plen);
    c->mig_profile[plen] = '\0';
    const char *q = colon + 1;
    for (;;) {
        char *end;
        unsigned long g = strtoul(q, &end, 10), st;
        bool ok = end != q && *end == '@' && *q >= '0' && *q <= '9';
        if (ok) {
            q = end + 1;
            st = strtoul(q, &end, 10);
            ok = end != q && *q >= '0' && *q <= '9' && (*end == ',' || *end == '\0') &&
                 g < GP_NODE_MAX_GPUS && st < 64;
        }
        if (!ok)
            return gp_diag_set(diag, GP_EINVALID,
                               "gpuplane.io/mig is \"%.200s\", not PROFILE:GPU@SLICE,...", s);
        for (size_t i = 0; i < c->n_mig; i++)
            if (c->mig_gpu[i] == g && c->mig_start[i] == st)
                return gp_diag_set(diag, GP_EINVALID,
                                   "gpuplane.io/mig \"%.200s\" names instance %lu@%lu twice", s, g,
                                   st);
        bool listed = false;
        for (size_t i = 0; i < c->n; i++)
            listed |= c->index[i] == g;
        if (!listed)
            return gp_diag_set(diag, GP_EINVALID,
                               "gpuplane.io/mig \"%.200s\" names GPU %lu, which gpuplane.io/gpus "
                               "does not",
                               s, g);
        if (c->n_mig == GP_NODE_ALLOC_MAX)
            return gp_diag_set(diag, GP_ELIMIT, "gpuplane.io/mig names more than %d instances",
                               GP_NODE_ALLOC_MAX);
        c->mig_gpu[c->n_mig] = (unsigned)g;
        c->mig_start[c->n_mig++] = (unsigned)st;
        if (*end == '\0')
            return GP_OK;
        q = end + 1;
    }
}

/* The position in the choice's MIG instances of d's instance (its GPU's
 * index, its first slice, its profile); -1 when it is none of them or
 * its placement is unknown (size 0: NVML refused the GPU instance info). */
static long mig_pick(const struct gp_node_choice *c, const struct gp_node_inventory *inv,
                     const struct gp_node_dev *d)
{
    if (!c || !c->set || d->mig < 0)
        return -1;
    const struct gp_node_gpu *gpu = &inv->gpus[d->gpu];
    const struct gp_node_mig *m = &gpu->migs[d->mig];
    if (m->size == 0 || strcmp(m->profile, c->mig_profile) != 0)
        return -1;
    for (size_t i = 0; i < c->n_mig; i++)
        if (c->mig_gpu[i] == gpu->index && c->mig_start[i] == m->start)
            return (long)i;
    return -1;
}

/* MIG devices for a choice that names instances: must first, then each
 * chosen instance the kubelet has available, in the annotation's order
 * (one replica of each when shared); nothing else. */
static size_t prefer_mig(const struct gp_node_resource *r, const struct gp_node_inventory *inv,
                         const bool *av, const bool *mu, size_t size,
                         const struct gp_node_choice *choice, size_t *out)
{
    size_t k = 0;
    bool inst[GP_NODE_ALLOC_MAX] = {false};
    for (size_t i = 0; i < r->n && k < size; i++)
        if (mu[i]) {
            long c = mig_pick(choice, inv, &r->devs[i]);
            if (c >= 0 && inst[c])
                continue;
            out[k++] = i;
            if (c >= 0)
                inst[c] = true;
        }
    for (size_t c = 0; c < choice->n_mig && k < size; c++)
        for (size_t i = 0; i < r->n && !inst[c]; i++)
            if (av[i] && !mu[i] && mig_pick(choice, inv, &r->devs[i]) == (long)c) {
                out[k++] = i;
                inst[c] = true;
            }
    return k;
}

/* NVLinks between GPU position g and the GPUs of mask (positions). */
static unsigned links_to(const struct gp_node_inventory *inv, size_t g, const bool *in)
{
    unsigned n = 0;
    for (size_t h = 0; h < inv->n_gpus; h++)
        if (in[h] && h != g && (inv->gpus[g].nvlink_peers >> (inv->gpus[h].index & 63) & 1))
            n++;
    return n;
}

/* Whole GPUs: from must, grow greedily by the GPU with the most NVLinks
 * into the set (lowest position on ties); without must, every available
 * GPU is tried as the seed and the set with the most links inside wins. */
static size_t prefer_whole(const struct gp_node_resource *r, const struct gp_node_inventory *inv,
                           const bool *avail, const bool *must, size_t size, size_t *out)
{
    size_t n_gpus = inv->n_gpus;
    bool best[GP_NODE_MAX_GPUS] = {false}, cur[GP_NODE_MAX_GPUS];
    long best_score = -1;
    size_t best_n = 0;
    bool have_must = false;
    for (size_t g = 0; g < n_gpus; g++)
        have_must |= must[g];
    for (size_t seed = 0; seed < n_gpus; seed++) {
        if (have_must ? seed > 0 : !avail[seed])
            continue;
        memcpy(cur, must, sizeof cur);
        size_t n = 0;
        for (size_t g = 0; g < n_gpus; g++)
            n += cur[g];
        if (!have_must) {
            cur[seed] = true;
            n = 1;
        }
        while (n < size) {
            long pick = -1;
            unsigned pick_links = 0;
            for (size_t g = 0; g < n_gpus; g++) {
                if (!avail[g] || cur[g])
                    continue;
                unsigned l = links_to(inv, g, cur);
                if (pick < 0 || l > pick_links) {
                    pick = (long)g;
                    pick_links = l;
                }
            }
            if (pick < 0)
                break;
            cur[pick] = true;
            n++;
        }
        long score = 0;
        for (size_t g = 0; g < n_gpus; g++)
            if (cur[g])
                score += links_to(inv, g, cur);
        if (score > best_score) {
            best_score = score;
            memcpy(best, cur, sizeof best);
            best_n = n;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < r->n && k < best_n; i++)
        if (best[r->devs[i].gpu])
            out[k++] = i;
    return k;
}

size_t gp_node_dev_prefer(const struct gp_node_resource *r, const struct gp_node_inventory *inv,
                          const char *const *avail, size_t n_avail, const char *const *must,
                          size_t n_must, size_t size, const struct gp_node_choice *choice,
                          size_t *out)
{
    bool *av = calloc(r->n ? r->n : 1, sizeof *av), *mu = calloc(r->n ? r->n : 1, sizeof *mu);
    size_t k = 0;
    if (!av || !mu)
        goto done;
    for (size_t i = 0; i < n_avail; i++) {
        long d = gp_node_dev_find(r, avail[i]);
        if (d >= 0)
            av[d] = true;
    }
    for (size_t i = 0; i < n_must; i++) {
        long d = gp_node_dev_find(r, must[i]);
        if (d >= 0)
            av[d] = mu[d] = true;
    }
    if (!r->shared && r->n > 0 && r->devs[0].mig < 0 && !(choice && choice->set)) {
        bool gav[GP_NODE_MAX_GPUS] = {false}, gmu[GP_NODE_MAX_GPUS] = {false};
        for (size_t i = 0; i < r->n; i++) {
            gav[r->devs[i].gpu] |= av[i];
            gmu[r->devs[i].gpu] |= mu[i];
        }
        k = prefer_whole(r, inv, gav, gmu, size, out);
        goto done;
    }
    if (choice && choice->set && choice->n_mig > 0 && r->n > 0 && r->devs[0].mig >= 0) {
        k = prefer_mig(r, inv, av, mu, size, choice, out);
        goto done;
    }
    /* replicas or MIG devices, or a choice: must first, then the chosen
     * GPUs, then the GPUs with the most replicas still available; one
     * device per GPU */
    bool used[GP_NODE_MAX_GPUS] = {false};
    for (size_t i = 0; i < r->n && k < size; i++)
        if (mu[i] && !(r->shared && used[r->devs[i].gpu])) {
            out[k++] = i;
            used[r->devs[i].gpu] = r->shared;
        }
    unsigned free_of[GP_NODE_MAX_GPUS] = {0};
    for (size_t i = 0; i < r->n; i++)
        free_of[r->devs[i].gpu] += av[i];
    for (int pass = 0; pass < 2 && k < size; pass++) {
        while (k < size) {
            long pick = -1;
            for (size_t i = 0; i < r->n; i++) {
                const struct gp_node_dev *d = &r->devs[i];
                bool taken = false;
                for (size_t j = 0; j < k; j++)
                    taken |= out[j] == i;
                if (!av[i] || taken || (r->shared && used[d->gpu]))
                    continue;
                if (pass == 0 && !chosen(choice, inv->gpus[d->gpu].index))
                    continue;
                if (pick < 0 || free_of[d->gpu] > free_of[r->devs[pick].gpu])
                    pick = (long)i;
            }
            if (pick < 0)
                break;
            out[k++] = (size_t)pick;
            used[r->devs[pick].gpu] = r->shared;
        }
    }
done:
    free(av);
    free(mu);
    return k;
}

/* The answer's strings from the devices in out->dev. */
static void alloc_env(const struct gp_node_resource *r, const struct gp_node_sharing *sh,
                      struct gp_node_alloc *out)
{
    size_t len = 0;
    out->visible[0] = '\0';
    out->mps_mem_limit[0] = '\0';
    size_t mlen = 0;
    out->mps = sh->mode == GP_NODE_SHARE_MPS && r->shared;
    out->mps_thread_percent = out->mps ? 100 / r->replicas : 0;
    if (out->mps) {
        const char *root = sh->mps_root[0] ? sh->mps_root : GP_NODE_MPS_ROOT_DEFAULT;
        size_t rl = strlen(root);
        while (rl > 1 && root[rl - 1] == '/') /* filepath.Join's cleaning */
            rl--;
        if (rl == 1 && root[0] == '/')
            rl = 0;
        snprintf(out->mps_pipe_dir, sizeof out->mps_pipe_dir, "/mps/%s/pipe", r->name);
        snprintf(out->mps_pipe_host, sizeof out->mps_pipe_host, "%.*s/%s/pipe", (int)rl, root,
                 r->name);
        snprintf(out->mps_shm_host, sizeof out->mps_shm_host, "%.*s/shm", (int)rl, root);
    }
    for (size_t i = 0; i < out->n; i++) {
        const struct gp_node_dev *d = &r->devs[out->dev[i]];
        int w =
            snprintf(out->visible + len, sizeof out->visible - len, "%s%s", i ? "," : "", d->uuid);
        if (w > 0 && (size_t)w < sizeof out->visible - len)
            len += (size_t)w;
        if (out->mps) {
            /* the container's device ordinal i, as CUDA_VISIBLE_DEVICES
             * numbers them (MPS guide, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT) */
            w = snprintf(out->mps_mem_limit + mlen, sizeof out->mps_mem_limit - mlen, "%s%zu=%lluM",
                         i ? "," : "", i, (unsigned long long)d->memory_mib);
            if (w > 0 && (size_t)w < sizeof out->mps_mem_limit - mlen)
                mlen += (size_t)w;
        }
    }
}

enum gp_err gp_node_dev_allocate(const struct gp_node_resource *r,
                                 const struct gp_node_inventory *inv, const char *const *ids,
                                 size_t n_ids, const struct gp_node_choice *choice,
                                 const struct gp_node_sharing *sh, struct gp_node_alloc *out,
                                 struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (n_ids == 0)
        return gp_diag_set(diag, GP_EINVALID, "%s: a container asked for no devices", r->name);
    if (n_ids > GP_NODE_ALLOC_MAX)
        return gp_diag_set(diag, GP_ELIMIT, "%s: %zu devices for one container, at most %d",
                           r->name, n_ids, GP_NODE_ALLOC_MAX);
    /* NVIDIA README, "failRequestsGreaterThanOne": a request for more
     * than one shared device fails (UnexpectedAdmissionError) */
    if (r->shared && sh->fail_requests_greater_than_one && n_ids > 1)
        return gp_diag_set(diag, GP_EINVALID,
                           "request for '%s: %zu' too large: maximum request size for shared "
                           "resources is 1",
                           r->name, n_ids);
    bool gpu_seen[GP_NODE_MAX_GPUS] = {false};
    bool mig_seen[GP_NODE_MAX_GPUS][GP_NODE_MAX_MIGS] = {{false}};
    for (size_t i = 0; i < n_ids; i++) {
        long d = gp_node_dev_find(r, ids[i]);
        if (d < 0)
            return gp_diag_set(diag, GP_EINVALID, "%s: unknown device ID \"%s\"", r->name, ids[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ids[i], ids[j]) == 0) /* HAMi #1741 */
                return gp_diag_set(diag, GP_EINVALID, "%s: device ID \"%s\" asked twice", r->name,
                                   ids[i]);
        size_t g = r->devs[d].gpu;
        if (r->shared && r->devs[d].mig < 0 && gpu_seen[g]) /* NVIDIA k8s-device-plugin #491 */
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: two replicas of GPU %s for one container (\"%s\")", r->name,
                               r->devs[d].uuid, ids[i]);
        int m = r->devs[d].mig;
        if (r->shared && m >= 0 && mig_seen[g][m]) /* #491, for a MIG device's replicas */
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: two replicas of MIG device %s for one container (\"%s\")",
                               r->name, r->devs[d].uuid, ids[i]);
        gpu_seen[g] = true;
        if (m >= 0 && m < GP_NODE_MAX_MIGS)
            mig_seen[g][m] = true;
        out->dev[out->n++] = (size_t)d;
        memcpy(out->asked[out->n_asked++], r->devs[d].id, GP_NODE_DEV_ID_LEN);
    }
    if (choice && choice->set && r->devs[out->dev[0]].mig >= 0 && choice->n_mig > 0) {
        /* MIG devices: exactly the instances the scheduler chose (it books
         * their memory slices); never swapped for them as whole GPUs are,
         * since the kubelet names another instance when it holds the chosen
         * one for another container, or when it ignored the preference */
        for (size_t i = 0; i < out->n; i++) {
            const struct gp_node_dev *x = &r->devs[out->dev[i]];
            const struct gp_node_gpu *gpu = &inv->gpus[x->gpu];
            const struct gp_node_mig *m = &gpu->migs[x->mig];
            if (m->size == 0)
                return gp_diag_set(diag, GP_EINVALID,
                                   "%s: the placement of MIG device %s on GPU %u is unknown "
                                   "(NVML gave no GPU instance info: run the agent as root), so "
                                   "it cannot be matched to the instances the scheduler chose for "
                                   "%s",
                                   r->name, x->uuid, gpu->index, choice->pod);
            if (mig_pick(choice, inv, x) < 0)
                return gp_diag_set(diag, GP_EINVALID,
                                   "%s: the kubelet's MIG device %s (%s at GPU %u slice %u) for %s "
                                   "is not one of the instances the scheduler chose (%s:%zu "
                                   "instance(s))",
                                   r->name, x->uuid, m->profile, gpu->index, m->start, choice->pod,
                                   choice->mig_profile, choice->n_mig);
        }
    } else if (choice && choice->set && r->devs[out->dev[0]].mig >= 0) {
        /* MIG devices, no instances named: on the pod's GPUs, however many
         * of each */
        for (size_t i = 0; i < out->n; i++)
            if (!pod_chosen(choice, inv->gpus[r->devs[out->dev[i]].gpu].index))
                return gp_diag_set(diag, GP_EINVALID,
                                   "%s: the kubelet's MIG devices for %s are not on the GPUs the "
                                   "scheduler chose",
                                   r->name, choice->pod);
    } else if (choice && choice->set) {
        const char *ctr = choice->container[0] ? " container " : "";
        if (choice->n != n_ids)
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: the scheduler chose %zu GPU(s) for %s%s%s, the kubelet asked "
                               "%zu",
                               r->name, choice->n, choice->pod, ctr, choice->container, n_ids);
        bool match = true;
        for (size_t i = 0; i < out->n; i++)
            match &= chosen(choice, inv->gpus[r->devs[out->dev[i]].gpu].index);
        if (!match) {
            /* the scheduler booked these GPUs: the container gets them, a
             * device of each (the first replica when shared) */
            out->n = 0;
            for (size_t c = 0; c < choice->n; c++) {
                long pick = -1;
                for (size_t i = 0; i < r->n && pick < 0; i++)
                    if (inv->gpus[r->devs[i].gpu].index == choice->index[c])
                        pick = (long)i;
                if (pick < 0)
                    return gp_diag_set(diag, GP_EINVALID,
                                       "%s: the scheduler chose GPU %u for %s, not advertised here",
                                       r->name, choice->index[c], choice->pod);
                out->dev[out->n++] = (size_t)pick;
            }
        }
    }
    alloc_env(r, sh, out);
    return GP_OK;
}
