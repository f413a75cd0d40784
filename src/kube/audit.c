/* audit.c - the continuous audit (issue 14 item 5): on every change of a
 * pod or node, the node's bookings checked so that no GPU and no GPU
 * memory is booked twice across all the pods on it - gpuplane's and other
 * schedulers'. A pod books a node when the API shows it there (bound, not
 * ended; being deleted still counts: its containers run out their grace)
 * or while gpuplane is writing its decision there (ASSUMED). Its GPUs are
 * the ones its device annotations name for that node (or, for a decision
 * being written, the engine's pick); a pod without them books GPUs the
 * device plugin chose, so only their number is checked. A node that goes
 * from clean to violating counts one violation and gets a Warning Event. */
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

/* The GPUs p holds on node n by name, or NULL when it names none. */
static const struct gp_pick *named_gpus(const struct gp_kube_sched *s, const struct spod *p,
                                        const struct snode *n)
{
    if (!p->info.node_name && p->st == SP_ASSUMED)
        return &p->pick;
    if (p->ours && p->info.has_pick && p->info.ann_node && strcmp(p->info.ann_node, n->name) == 0)
        return &p->info.pick;
    (void)s;
    return NULL;
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
    uint32_t count = n->obj ? n->spec.gpu_count : 0, gmem = n->obj ? n->spec.gpu_mem_mib : 0;
    char msg[512] = "";
    bool memory = false; /* the violation is GPU memory's */
    for (size_t i = 0; i < n->nbook; i++) {
        const struct spod *p = n->book[i];
        const struct gp_pod_spec *sp = &p->spec;
        if (sp->gpu_count == 0)
            continue;
        const struct gp_pick *k = named_gpus(s, p, n);
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
    uint32_t empty = 0;
    uint64_t total = loose_whole * GP_GPU_MILLI + loose_milli;
    for (uint32_t g = 0; g < count && g < GP_MAX_GPUS_PER_NODE; g++) {
        empty += pods[g] == 0;
        total += milli[g];
        if (msg[0])
            continue;
        if (whole[g] && pods[g] > 1)
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
        s->st.audit_memory += memory;
        s->st.audit_gpu += !memory;
        snprintf(s->audit_last, sizeof s->audit_last, "%s", msg);
        gp_ks_event(s, "Node", "", n->name, NULL, "Warning", "GPUDoubleBooked", "Auditing", msg);
    }
    n->violating = bad;
    return bad;
}
