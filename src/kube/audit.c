/* audit.c - the continuous audit (issue 14 item 5): on every change of a
 * pod or node, the node's bookings checked so that no GPU and no GPU
 * memory is booked twice across all the pods on it - gpuplane's and other
 * schedulers'. A pod books a node when the API shows it there (bound, not
 * ended; being deleted still counts: its containers run out their grace)
 * or while gpuplane is writing its decision there (ASSUMED). Its GPUs are
 * the ones its device annotations name for that node (or, for a decision
 * being written, the engine's pick); a pod without them books GPUs the
 * device plugin chose, so only their number is checked. A pod on MIG
 * instances (its gpuplane.io/mig annotation, or the engine's MIG pick
 * while its decision is written) books memory slices of its GPUs: no slice
 * may be booked twice, and a GPU with MIG instances booked is not booked
 * whole by another pod; where gpuplane's node agent labels each GPU's
 * instances (objects_mig.c), an instance booked must be one of them. A node that goes from clean to
 * violating counts one violation and gets a Warning Event. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"

/* The node the pod books now, or NULL. */
static struct snode *booking(struct gp_kube_sched *s, struct spod *p)
{
    if (!p->readable || p->info.ended)
        return NULL;
    if (p->info.node_name)
        return gp_ks_node_get(s, p->info.node_name, true);
    if (p->st == SP_ASSUMED && s->e && p->node != SP_NONE) {
        const struct gp_node *n = gp_engine_node(s->e, p->node);
        return n ? gp_ks_node_get(s, n->spec.name, false) : NULL;
    }
    return NULL;
}

static void book_remove(struct spod *p)
{
    struct snode *n = p->booked;
    n->book[p->booked_slot] = n->book[--n->nbook];
    if (p->booked_slot < n->nbook)
        n->book[p->booked_slot]->booked_slot = p->booked_slot;
    p->booked = NULL;
}

static bool book_add(struct snode *n, struct spod *p)
{
    if (n->nbook == n->capbook) {
        size_t cap = n->capbook ? n->capbook * 2 : 16;
        struct spod **v = realloc(n->book, cap * sizeof *v);
        if (!v)
            return false;
        n->book = v;
        n->capbook = cap;
    }
    p->booked = n;
    p->booked_slot = n->nbook;
    n->book[n->nbook++] = p;
    return true;
}

void gp_ks_audit_pod(struct gp_kube_sched *s, struct spod *p, bool gone)
{
    struct snode *want = gone ? NULL : booking(s, p), *was = p->booked;
    if (was != want) {
        if (was)
            book_remove(p);
        if (want && !book_add(want, p))
            want = NULL;
        if (was)
            gp_ks_audit_node(s, was);
    }
    if (want)
        gp_ks_audit_node(s, want);
}

/* The GPUs p holds on node n by name (the node's GPU indexes: an engine
 * pick of a split node's part mapped, sched_mig.c), or NULL when it names
 * none. */
static const struct gp_pick *named_gpus(struct gp_kube_sched *s, const struct spod *p,
                                        const struct snode *n, struct gp_pick *buf)
{
    if (!p->info.node_name && p->st == SP_ASSUMED) {
        gp_ks_pick_to_node(s, p->node, &p->pick, buf);
        return buf;
    }
    if (p->ours && p->info.has_pick && p->info.ann_node && strcmp(p->info.ann_node, n->name) == 0)
        return &p->info.pick;
    return NULL;
}

/* The MIG model of node n's GPUs: the engine's when it has the node as a
 * MIG node, else the one its GPU model names (GPU feature discovery's
 * nvidia.com/gpu.product); NULL for GPUs without MIG. */
static const struct gp_mig_model *mig_model_of(const struct gp_kube_sched *s, const struct snode *n)
{
    if (n->info.mig) /* the MIG devices the node advertises */
        return n->info.mig;
    const struct gp_node *e = s->e && n->eng != SP_NONE ? gp_engine_node(s->e, n->eng) : NULL;
    if (e && e->mig_model >= 0)
        return &gp_mig_models[e->mig_model];
    return n->model_mig; /* gp_mig_model_find(n->spec.gpu_model), kept (sched.c) */
}

/* The profile of the MIG devices a pod that names no instance holds on a
 * node advertising MIG devices: its nvidia.com/mig-<profile>, or under
 * the single strategy its nvidia.com/gpu (each device an instance of the
 * node's one profile); -1 when it holds none. */
static int loose_profile(const struct snode *n, const struct spod *p)
{
    const struct gp_mig_model *m = n->info.mig;
    if (!m || p->spec.gpu_count == 0)
        return -1;
    if (p->spec.mig_profile)
        return gp_mig_profile_find(m, p->spec.mig_profile);
    if (n->info.mig_single && p->spec.gpu_resource == GP_GPU_RES_GPU)
        for (size_t q = 0; q < m->nprofiles; q++)
            if (n->info.mig_cap[q])
                return (int)q;
    return -1;
}

/* The MIG instances p holds on node n (pick->mig_profile >= 0), or false. */
static bool mig_booked(struct gp_kube_sched *s, const struct spod *p, const struct snode *n,
                       const struct gp_mig_model *m, struct gp_pick *pick)
{
    if (n->info.mig_by_count) /* instances gpuplane does not know: by number */
        return false;
    if (!p->info.node_name && p->st == SP_ASSUMED) {
        /* the engine's pick is on MIG instances only on a MIG node of the
         * engine (elsewhere its mig fields mean nothing) */
        const struct gp_node *e = s->e && p->node != SP_NONE ? gp_engine_node(s->e, p->node) : NULL;
        if (!e || e->mig_model < 0 || p->pick.mig_profile < 0)
            return false;
        gp_ks_pick_to_node(s, p->node, &p->pick, pick);
        return true;
    }
    return m && p->ours && p->info.ann_mig && p->info.ann_node &&
           strcmp(p->info.ann_node, n->name) == 0 && gp_kube_mig_parse(p->info.ann_mig, m, pick);
}

/* MIG bookings: each instance's memory slices into used[gpu] (a slice
 * booked twice, or a GPU out of range, is the message). */
static void audit_mig(const struct spod *p, const struct snode *n, const struct gp_mig_model *m,
                      const struct gp_pick *k, uint32_t count, uint32_t used[],
                      const char *by[][GP_MIG_MAX_SLICES], char *msg, size_t size)
{
    const struct gp_mig_profile *pr = &m->profiles[k->mig_profile];
    for (uint32_t i = 0; i < k->ngpus; i++) {
        uint32_t g = k->gpu[i];
        if (g >= count) {
            if (!msg[0])
                snprintf(msg, size,
                         "pod %s books a MIG instance on GPU %u of node %s, which has %u", p->key,
                         g, n->name, count);
            continue;
        }
        const struct gp_mig_layout *l = n->info.layouts_labelled ? &n->info.gpu_layout[g] : NULL;
        bool there = !l;
        for (unsigned j = 0; l && j < l->n && !there; j++)
            there = l->inst[j].profile == (unsigned)k->mig_profile &&
                    l->inst[j].start == k->mig_start[i];
        if (!there && !msg[0]) /* the node agent labels each GPU's instances */
            snprintf(msg, size,
                     "pod %s books MIG instance %s at slice %u of GPU %u of node %s, which has "
                     "none there",
                     p->key, pr->name, k->mig_start[i], g, n->name);
        for (uint32_t sl = k->mig_start[i]; sl < k->mig_start[i] + pr->memory_slices; sl++) {
            if (sl >= GP_MIG_MAX_SLICES)
                break;
            if ((used[g] >> sl & 1) && !msg[0])
                snprintf(msg, size, "MIG slice %u of GPU %u of node %s is booked by %s and %s", sl,
                         g, n->name, by[g][sl], p->key);
            used[g] |= 1u << sl;
            by[g][sl] = p->key;
        }
    }
}

/* A split node's GPUs in MIG mode (objects.h, info.split), bit g GPU g. */
static uint32_t in_mig_mask(const struct snode *n)
{
    uint32_t in_mig = 0;
    for (uint32_t i = 0; n->info.split && i < n->info.mig_gpus; i++)
        in_mig |= 1u << n->info.mig_index[i];
    return in_mig;
}

/* A node whose GPUs the device plugin shares by time-slicing or MPS
 * (n->info.replicas per GPU, objects_share.c): a pod that names GPUs
 * holds a replica of each (nvidia.com/gpu: 1 is one replica, not a whole
 * GPU), one that names none its gpu_count replicas anywhere. No GPU may
 * hold more pods than its replicas nor more declared GPU memory than it
 * has, nor the node more replicas than it advertises. On a node of whole
 * GPUs time-sliced beside MIG ones (objects_mig.c) these are the whole
 * GPUs' replicas: MIG pods are audited by their slices, and a replica
 * named on a GPU in MIG mode is a MIG violation. */
static void audit_replicas(struct gp_kube_sched *s, const struct snode *n,
                           const struct gp_mig_model *mm, char *msg, size_t size, bool *memory,
                           bool *mig)
{
    uint32_t r = n->info.replicas, count = n->info.gpus, gmem = n->spec.gpu_mem_mib;
    uint32_t pods[GP_MAX_GPUS_PER_NODE] = {0}, in_mig = in_mig_mask(n);
    uint64_t mem[GP_MAX_GPUS_PER_NODE] = {0}, held = 0;
    const char *first[GP_MAX_GPUS_PER_NODE] = {0};
    for (size_t i = 0; i < n->nbook; i++) {
        const struct spod *p = n->book[i];
        struct gp_pick kb;
        if (mig_booked(s, p, n, mm, &kb) || loose_profile(n, p) >= 0)
            continue; /* MIG devices, not replicas */
        const struct gp_pick *k = named_gpus(s, p, n, &kb);
        held += p->spec.gpu_count;
        if (!k || k->ngpus != p->spec.gpu_count)
            continue;
        for (uint32_t j = 0; j < k->ngpus; j++) {
            uint32_t x = k->gpu[j];
            if ((x >= count || x >= GP_MAX_GPUS_PER_NODE) && !msg[0])
                snprintf(msg, size, "pod %s books GPU %u of node %s, which has %u", p->key, x,
                         n->name, count);
            if (x >= count || x >= GP_MAX_GPUS_PER_NODE)
                continue;
            if ((in_mig >> x & 1) && !msg[0] && (*mig = true))
                snprintf(msg, size, "GPU %u of node %s is in MIG mode and booked whole by %s", x,
                         n->name, p->key);
            mem[x] += p->spec.gpu_mem_mib;
            if (pods[x]++ == 0)
                first[x] = p->key;
        }
    }
    for (uint32_t g = 0; g < count && g < GP_MAX_GPUS_PER_NODE && !msg[0]; g++) {
        if (pods[g] > r)
            snprintf(msg, size,
                     "GPU %u of node %s is booked by %u pods (%s and others), it has %u replicas",
                     g, n->name, pods[g], first[g], r);
        else if (gmem && mem[g] > gmem && (*memory = true))
            snprintf(msg, size, "GPU %u of node %s has %llu MiB of memory booked, %u exist", g,
                     n->name, (unsigned long long)mem[g], gmem);
    }
    uint32_t whole = n->info.mig ? n->info.whole_gpus : count;
    if (!msg[0] && held > (uint64_t)whole * r)
        snprintf(msg, size, "node %s: %llu replicas booked, it has %u", n->name,
                 (unsigned long long)held, whole * r);
}

bool gp_ks_audit_node(struct gp_kube_sched *s, struct snode *n)
{
    s->st.audit_runs++;
    if (!n->obj) { /* capacity unknown until the node is seen */
        n->violating = false;
        return false;
    }
    uint32_t milli[GP_MAX_GPUS_PER_NODE] = {0}, mem[GP_MAX_GPUS_PER_NODE] = {0};
    uint32_t pods[GP_MAX_GPUS_PER_NODE] = {0}, whole[GP_MAX_GPUS_PER_NODE] = {0};
    const char *first[GP_MAX_GPUS_PER_NODE] = {0}, *second[GP_MAX_GPUS_PER_NODE] = {0};
    uint64_t loose_whole = 0, loose_milli = 0;
    uint32_t count = n->obj ? n->info.gpus : 0, gmem = n->obj ? n->spec.gpu_mem_mib : 0;
    char msg[512] = "";
    bool memory = false, mig = false; /* the violation is GPU memory's, a MIG slice's */
    const struct gp_mig_model *mm = mig_model_of(s, n);
    uint32_t slices[GP_MAX_GPUS_PER_NODE] = {0};
    const char *slice_by[GP_MAX_GPUS_PER_NODE][GP_MIG_MAX_SLICES] = {{0}};
    uint32_t devices[GP_MIG_MAX_PROFILES] = {0}; /* MIG devices booked, per profile */
    if (n->info.replicas > 1) /* time-slicing, MPS: replicas, not whole GPUs or shares */
        audit_replicas(s, n, mm, msg, sizeof msg, &memory, &mig);
    for (size_t i = 0; i < n->nbook; i++) {
        const struct spod *p = n->book[i];
        const struct gp_pod_spec *sp = &p->spec;
        struct gp_pick mk;
        if (mig_booked(s, p, n, mm, &mk)) {
            if (mm && (size_t)mk.mig_profile < mm->nprofiles) {
                bool was = msg[0] != '\0';
                audit_mig(p, n, mm, &mk, count, slices, slice_by, msg, sizeof msg);
                mig = mig || (!was && msg[0]);
                devices[mk.mig_profile] += mk.ngpus;
            }
            continue; /* MIG instances, not whole GPUs or shares */
        }
        int lp = loose_profile(n, p);
        if (lp >= 0) { /* MIG devices the device plugin chose: only their number */
            devices[lp] += sp->gpu_count;
            continue;
        }
        if (sp->gpu_count == 0 || n->info.replicas > 1) /* replicas: audit_replicas */
            continue;
        struct gp_pick kb;
        const struct gp_pick *k = named_gpus(s, p, n, &kb);
        if (!k || k->ngpus != sp->gpu_count) {
            if (sp->gpu_milli == GP_GPU_MILLI)
                loose_whole += sp->gpu_count;
            else
                loose_milli += (uint64_t)sp->gpu_milli * sp->gpu_count;
            continue;
        }
        for (uint32_t g = 0; g < k->ngpus; g++) {
            uint32_t x = k->gpu[g];
            if (x >= count && !msg[0])
                snprintf(msg, sizeof msg, "pod %s books GPU %u of node %s, which has %u", p->key, x,
                         n->name, count);
            if (x >= GP_MAX_GPUS_PER_NODE)
                continue;
            milli[x] += sp->gpu_milli;
            mem[x] += sp->gpu_milli == GP_GPU_MILLI ? gmem : sp->gpu_mem_mib;
            whole[x] += sp->gpu_milli == GP_GPU_MILLI;
            if (pods[x]++ == 0)
                first[x] = p->key;
            else if (!second[x])
                second[x] = p->key;
        }
    }
    uint32_t in_mig = in_mig_mask(n);
    uint32_t empty = 0;
    uint64_t total = loose_whole * GP_GPU_MILLI + loose_milli;
    for (uint32_t g = 0; g < count && g < GP_MAX_GPUS_PER_NODE; g++) {
        empty += pods[g] == 0 && slices[g] == 0 && !(in_mig >> g & 1); /* whole pods go there */
        total += milli[g] + (slices[g] ? GP_GPU_MILLI : 0); /* a MIG GPU is not free for others */
        if (msg[0])
            continue;
        if (n->info.split && pods[g] && (in_mig >> g & 1) && (mig = true))
            snprintf(msg, sizeof msg, "GPU %u of node %s is in MIG mode and booked whole by %s", g,
                     n->name, first[g]);
        else if (n->info.split && slices[g] && !(in_mig >> g & 1) && (mig = true))
            snprintf(msg, sizeof msg, "GPU %u of node %s is not in MIG mode and has MIG instances",
                     g, n->name);
        else if (whole[g] && slices[g] && (mig = true))
            snprintf(msg, sizeof msg,
                     "GPU %u of node %s is booked whole by %s and has MIG instances", g, n->name,
                     first[g]);
        else if (whole[g] && pods[g] > 1)
            snprintf(msg, sizeof msg, "GPU %u of node %s is booked by %s and %s, one of them whole",
                     g, n->name, first[g], second[g]);
        else if (milli[g] > GP_GPU_MILLI)
            snprintf(msg, sizeof msg,
                     "GPU %u of node %s is booked %u/1000 (%s, %s and others' shares)", g, n->name,
                     milli[g], first[g], second[g] ? second[g] : "-");
        else if (gmem && mem[g] > gmem && (memory = true))
            snprintf(msg, sizeof msg, "GPU %u of node %s has %u MiB of memory booked, %u exist", g,
                     n->name, mem[g], gmem);
    }
    if (n->info.mig && empty > n->info.whole_gpus)
        empty = n->info.whole_gpus; /* the GPUs in MIG mode hold no whole pod */
    for (size_t q = 0; mm == n->info.mig && mm && q < mm->nprofiles && !msg[0]; q++)
        if (devices[q] > n->info.mig_cap[q] && (mig = true))
            snprintf(msg, sizeof msg, "node %s: %u nvidia.com/mig-%s booked, it has %u", n->name,
                     devices[q], mm->profiles[q].name, n->info.mig_cap[q]);
    if (!msg[0] && loose_whole > empty)
        snprintf(msg, sizeof msg,
                 "node %s: pods that name no GPU hold %llu whole GPUs, %u are free of named ones",
                 n->name, (unsigned long long)loose_whole, empty);
    if (!msg[0] && total > (uint64_t)count * GP_GPU_MILLI && n->obj)
        snprintf(msg, sizeof msg, "node %s: %llu/1000 GPUs booked, it has %u", n->name,
                 (unsigned long long)total, count);
    bool bad = msg[0] != '\0';
    if (bad && !n->violating) {
        s->st.audit_violations++;
        s->st.audit_memory += memory && !mig;
        s->st.audit_mig += mig;
        s->st.audit_gpu += !memory && !mig;
        snprintf(s->audit_last, sizeof s->audit_last, "%s", msg);
        gp_ks_event(s, "Node", "", n->name, NULL, "Warning", "GPUDoubleBooked", "Auditing", msg);
    }
    n->violating = bad;
    return bad;
}
