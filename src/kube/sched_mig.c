/* sched_mig.c - the parts of a node of whole and MIG GPUs side by side
 * (objects.h, info.split; docs/kube.md, "Whole and MIG GPUs on one node"):
 * two engine nodes of the node's name, a pod's part by its request, each
 * part's GPU numbers mapped to the node's indexes and back, and the node
 * counted once in kube-scheduler's "0/N nodes are available"; and a pod
 * the API shows at named GPUs or MIG instances (its gpuplane.io/gpus or
 * gpuplane.io/mig annotation, read back after a restart or a new leader)
 * put into the engine there: gp_engine_pod_assign books a pick it is
 * given at exactly those GPUs or instances, checked by placement's rules
 * (engine/share.c, gp_share_pick_named), or refuses it. */
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

uint32_t gp_ks_part(const struct snode *n, const struct gp_pod_spec *spec)
{
    return n->info.split && n->eng_mig != SP_NONE && spec->mig_profile ? n->eng_mig : n->eng;
}

static enum gp_err part_add(struct gp_kube_sched *s, const struct snode *n,
                            const struct gp_node_spec *spec, uint32_t *id)
{
    enum gp_err err = gp_engine_node_add(s->e, spec, id);
    gp_evlog_node_add(s->rec, spec, err, *id);
    if (err == GP_OK && !n->info.schedulable) {
        gp_engine_node_drain(s->e, *id);
        gp_evlog_node_drain(s->rec, *id);
    }
    return err;
}

enum gp_err gp_ks_node_add(struct gp_kube_sched *s, struct snode *n)
{
    uint32_t id, mid;
    enum gp_err err = part_add(s, n, &n->spec, &id);
    if (err != GP_OK)
        return err;
    n->eng = id;
    if (!n->info.split)
        return GP_OK;
    s->any_split = true;
    if ((err = part_add(s, n, &n->info.mig_spec, &mid)) == GP_OK)
        n->eng_mig = mid;
    return err;
}

/* The node record of engine node `node` and whether that is its MIG part;
 * NULL when the node is not split. */
static const struct snode *split_of(struct gp_kube_sched *s, uint32_t node, bool *mig)
{
    const struct gp_node *e = s->e ? gp_engine_node(s->e, node) : NULL;
    const struct snode *n = e ? gp_ks_node_get(s, e->spec.name, false) : NULL;
    if (!n || !n->info.split || (node != n->eng && node != n->eng_mig))
        return NULL;
    *mig = node == n->eng_mig;
    return n;
}

void gp_ks_pick_to_node(struct gp_kube_sched *s, uint32_t node, const struct gp_pick *pick,
                        struct gp_pick *out)
{
    *out = *pick;
    bool mig;
    const struct snode *n = split_of(s, node, &mig);
    if (!n)
        return;
    const uint8_t *index = mig ? n->info.mig_index : n->info.whole_index;
    uint32_t count = mig ? n->info.mig_gpus : n->info.whole_gpus;
    for (uint32_t i = 0; i < out->ngpus; i++)
        if (out->gpu[i] < count)
            out->gpu[i] = index[out->gpu[i]];
}

/* The reverse: the node's GPU indexes of pick as engine node `node`
 * numbers them; false when one is not a GPU of that part. */
static bool pick_to_part(struct gp_kube_sched *s, uint32_t node, const struct gp_pick *pick,
                         struct gp_pick *out)
{
    *out = *pick;
    bool mig;
    const struct snode *n = split_of(s, node, &mig);
    if (!n)
        return true;
    const uint8_t *index = mig ? n->info.mig_index : n->info.whole_index;
    uint32_t count = mig ? n->info.mig_gpus : n->info.whole_gpus;
    for (uint32_t i = 0; i < out->ngpus; i++) {
        uint32_t k = 0;
        while (k < count && index[k] != out->gpu[i])
            k++;
        if (k == count)
            return false;
        out->gpu[i] = (uint8_t)k;
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
    uint32_t split = 0; /* (scanned only once a node was split) */
    for (size_t i = 0; s->any_split && i < s->nnodes; i++)
        split += s->nodes[i]->eng_mig != SP_NONE;
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

enum gp_err gp_ks_assign(struct gp_kube_sched *s, struct spod *p, uint32_t node,
                         const struct gp_pick *pick)
{
    struct gp_pick local; /* the node's GPU indexes as the part numbers them */
    if (pick && !pick_to_part(s, node, pick, &local))
        return GP_ELIMIT;
    return assign(s, p->eng, node, pick ? &local : NULL);
}
