/* sched_mig.c - the parts of a node of whole and MIG GPUs side by side
 * (objects.h, info.split; docs/kube.md, "Whole and MIG GPUs on one node"):
 * two engine nodes of the node's name, a pod's part by its request, each
 * part's GPU numbers mapped to the node's indexes and back, and the node
 * counted once in kube-scheduler's "0/N nodes are available"; and a pod
 * the API shows at named GPUs or MIG instances (its gpuplane.io/gpus or
 * gpuplane.io/mig annotation, read back after a restart or a new leader)
 * put into the engine there: gp_engine_pod_assign books a pick it is
 * given at exactly those GPUs or instances, checked by placement's rules
 * (engine/share.c, gp_share_pick_named), or refuses it. On a node whose
 * MIG instances gpuplane does not know (info.mig_by_count) a MIG pod is
 * booked wherever an instance of its profile is free and named nowhere:
 * NVIDIA's device plugin picks its devices. */
#include <string.h>

#include "engine/sharing.h"
#include "io/eventlog.h"
#include "kube/sched_internal.h"

/* Every engine call is logged (--record) so that a replay makes the same
 * calls. */
static enum gp_err assign(struct gp_kube_sched *s, uint32_t id, uint32_t node,
                          const struct gp_pick *pick)
{
    enum gp_err err = gp_engine_pod_assign(s->e, id, node, pick);
    gp_evlog_pod_assign(s->rec, id, node, pick, err);
    return err;
}

/* --- nodes of whole and MIG GPUs (objects.h, info.split) ----------------- */

/* A split node's parts: part 0 is n->eng, part 1 n->eng_mig. */
static uint32_t nparts(const struct snode *n)
{
    return n->info.split && n->eng_mig != SP_NONE ? 2 : 1;
}

static uint32_t part_id(const struct snode *n, uint32_t k)
{
    return k == 0 ? n->eng : n->eng_mig;
}

uint32_t gp_ks_part(const struct snode *n, const struct gp_pod_spec *spec)
{
    return n->info.split && n->eng_mig != SP_NONE && spec->mig_profile ? n->eng_mig : n->eng;
}

static enum gp_err part_add(struct gp_kube_sched *s, const struct snode *n,
                            const struct gp_node_spec *spec, uint32_t *id)
{
    enum gp_err err = gp_engine_node_add(s->e, spec, id);
    gp_evlog_node_add(s->rec, spec, err, *id);
    if (err == GP_OK && !n->info.ready) { /* a cordoned node: its taint (objects.c) */
        gp_engine_node_drain(s->e, *id);
        gp_evlog_node_drain(s->rec, *id);
    }
    return err;
}

enum gp_err gp_ks_node_add(struct gp_kube_sched *s, struct snode *n)
{
    uint32_t id;
    enum gp_err err = part_add(s, n, &n->spec, &id);
    if (err != GP_OK)
        return err;
    n->eng = id;
    if (!n->info.split)
        return GP_OK;
    s->any_split = true;
    if ((err = part_add(s, n, &n->info.mig_spec, &id)) == GP_OK)
        n->eng_mig = id;
    return err;
}

/* The node record of engine node `node`, or NULL. */
static const struct snode *node_of(struct gp_kube_sched *s, uint32_t node)
{
    const struct gp_node *e = s->e ? gp_engine_node(s->e, node) : NULL;
    return e ? gp_ks_node_get(s, e->spec.name, false) : NULL;
}

/* The node record of engine node `node` and which of its parts that is;
 * NULL when the node is not split (none is before any_split: a node's
 * eng_mig is set only once any_split is, and any_split stays; the audit
 * maps every pick being written through here, so the look-up by name is
 * left out where no node was ever split). */
static const struct snode *split_of(struct gp_kube_sched *s, uint32_t node, uint32_t *part)
{
    if (!s->any_split)
        return NULL;
    const struct snode *n = node_of(s, node);
    if (!n || nparts(n) < 2)
        return NULL;
    for (uint32_t k = 0; k < nparts(n); k++)
        if (part_id(n, k) == node) {
            *part = k;
            return n;
        }
    return NULL;
}

/* The node's GPU index of part k's GPU i (the i-th of the part by index),
 * or -1. */
static int node_gpu(const struct snode *n, uint32_t k, uint32_t i)
{
    for (uint32_t g = 0; g < n->info.gpus && g < GP_MAX_GPUS_PER_NODE; g++)
        if (n->info.part_of[g] == k && i-- == 0)
            return (int)g;
    return -1;
}

void gp_ks_pick_to_node(struct gp_kube_sched *s, uint32_t node, const struct gp_pick *pick,
                        struct gp_pick *out)
{
    *out = *pick;
    /* (the engine's node first: the node's record is found by name, and
     * the audit maps every pick being written through here) */
    const struct gp_node *e = pick->mig_profile >= 0 && s->e ? gp_engine_node(s->e, node) : NULL;
    if (e && e->mig_model >= 0) {
        const struct snode *c = node_of(s, node);
        if (c && c->info.mig_by_count) {
            out->ngpus = 0; /* no instance nor GPU: the device plugin picks */
            out->mig_profile = -1;
            return;
        }
    }
    uint32_t k;
    const struct snode *n = split_of(s, node, &k);
    for (uint32_t i = 0; n && i < out->ngpus; i++) {
        int g = node_gpu(n, k, out->gpu[i]);
        if (g >= 0)
            out->gpu[i] = (uint8_t)g;
    }
}

/* The reverse: the node's GPU indexes of pick as engine node `node`
 * numbers them; false when one is not a GPU of that part. */
static bool pick_to_part(struct gp_kube_sched *s, uint32_t node, const struct gp_pick *pick,
                         struct gp_pick *out)
{
    *out = *pick;
    uint32_t k;
    const struct snode *n = split_of(s, node, &k);
    if (!n)
        return true;
    for (uint32_t i = 0; i < out->ngpus; i++) {
        uint32_t g = out->gpu[i], local = 0;
        if (g >= n->info.gpus || g >= GP_MAX_GPUS_PER_NODE || n->info.part_of[g] != k)
            return false;
        for (uint32_t h = 0; h < g; h++)
            local += n->info.part_of[h] == k;
        out->gpu[i] = (uint8_t)local;
    }
    return true;
}

void gp_ks_explain_text(const struct gp_kube_sched *s, const struct gp_explain *x,
                        const struct gp_pod_spec *pod, char *buf, size_t size)
{
    /* a split node is two engine nodes: one node for kube-scheduler's
     * "0/N". The part that cannot serve the pod's kind of GPU turns it
     * away in the sharing filter (a MIG request on whole GPUs, a whole
     * GPU on MIG ones) unless a filter before it, one both parts share
     * (state, selectors, taints, model), already did: those reasons are
     * left out, the other part's kept. A pod asking no GPU: the earliest
     * reasons. */
    uint32_t split = 0; /* parts beyond one a node (scanned only once a node was split) */
    for (size_t i = 0; s->any_split && i < s->nnodes; i++)
        split += nparts(s->nodes[i]) - 1;
    struct gp_explain y = *x;
    split = split < y.nodes_total ? split : y.nodes_total;
    y.nodes_total -= split;
    if (pod && pod->gpu_count > 0) {
        uint32_t take =
            split < y.rejected[GP_FILTER_SHARING] ? split : y.rejected[GP_FILTER_SHARING];
        y.rejected[GP_FILTER_SHARING] -= take;
        split -= take;
    }
    for (int f = 0; f < GP_FILTER_COUNT && split > 0; f++) {
        uint32_t take = split < y.rejected[f] ? split : y.rejected[f];
        y.rejected[f] -= take;
        split -= take;
    }
    gp_kube_explain_pod_text(&y, pod, buf, size);
}

/* --- pods at named GPUs ---------------------------------------------------- */

/* The pod (pending in the engine) on engine node `node` at the GPUs of
 * pick (the node's indexes; NULL: the engine's choice). */
static enum gp_err assign_at(struct gp_kube_sched *s, struct spod *p, uint32_t node,
                             const struct gp_pick *pick)
{
    struct gp_pick local; /* the node's GPU indexes as the part numbers them */
    if (pick && !pick_to_part(s, node, pick, &local))
        return GP_ELIMIT;
    return assign(s, p->eng, node, pick ? &local : NULL);
}

enum gp_err gp_ks_place(struct gp_kube_sched *s, struct spod *p, const struct snode *n,
                        const struct gp_pick *pick, bool anywhere, uint32_t *part)
{
    uint32_t np = nparts(n);
    *part = gp_ks_part(n, &p->spec);
    if (n->info.mig_by_count && p->spec.mig_profile)
        pick = NULL; /* any free instance of its profile: the plugin chose */
    if (pick) {      /* the part of the GPUs named */
        uint32_t g = pick->ngpus ? pick->gpu[0] : 0;
        if (np > 1 && g < n->info.gpus && g < GP_MAX_GPUS_PER_NODE)
            *part = part_id(n, n->info.part_of[g]);
        enum gp_err err = assign_at(s, p, *part, pick);
        if (err == GP_OK || !anywhere)
            return err;
        *part = gp_ks_part(n, &p->spec);
    }
    return assign_at(s, p, *part, NULL); /* the engine's choice, on the pod's part */
}
