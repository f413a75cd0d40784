/* sched_mig.c - a pod the API shows on MIG instances put into the engine
 * at those instances (its gpuplane.io/mig annotation, read back after a
 * restart or a new leader). The engine's gp_engine_pod_assign takes its
 * own choice of GPUs on a node that shares them (engine.h), and its
 * choice for one more instance of a profile is fixed by the node's state
 * (the busiest GPU, then the lowest free start: engine/share.c), so the
 * named instances are had without touching the engine: every other free
 * instance of the profile is held by a placeholder pod first (one
 * instance each, in the engine's own order), the named ones are then the
 * only free ones when the pod is assigned, and the placeholders leave.
 * Placeholders live between two calls of this function, never across a
 * cycle: the engine never decides anything for them.
 *
 * Also the two parts of a node of whole and MIG GPUs side by side
 * (objects.h, info.split; docs/kube.md, "Whole and MIG GPUs on one node"):
 * two engine nodes of the node's name, a pod's part by its request, each
 * part's GPU numbers mapped to the node's indexes and back, and the node
 * counted once in kube-scheduler's "0/N nodes are available". */
#include <string.h>

#include "engine/sharing.h"
#include "io/eventlog.h"
#include "kube/sched_internal.h"

#define PLACEHOLDERS (GP_MAX_GPUS_PER_NODE * GP_MIG_MAX_INSTANCES)

static bool named(const struct gp_pick *want, uint8_t gpu, uint8_t start, uint32_t *taken)
{
    for (uint32_t i = 0; i < want->ngpus; i++)
        if (!(*taken >> i & 1) && want->gpu[i] == gpu && want->mig_start[i] == start) {
            *taken |= 1u << i;
            return true;
        }
    return false;
}

/* Every engine call is logged (--record) so that a replay makes the same
 * calls, placeholders included. */
static void drop(struct gp_kube_sched *s, uint32_t id)
{
    gp_engine_pod_finished(s->e, id);
    gp_evlog_pod_finished(s->rec, id);
    gp_engine_pod_forget(s->e, id);
    gp_evlog_pod_forget(s->rec, id);
}

static enum gp_err assign(struct gp_kube_sched *s, uint32_t id, uint32_t node,
                          const struct gp_pick *pick)
{
    enum gp_err err = gp_engine_pod_assign(s->e, id, node, pick);
    gp_evlog_pod_assign(s->rec, id, node, pick, err);
    return err;
}

/* The pod (pending in the engine) bound on MIG node `node` at the
 * instances of want; GP_ELIMIT (nothing changed) when they are not free
 * instances of its profile there. */
static enum gp_err assign_at(struct gp_kube_sched *s, struct spod *p, uint32_t node,
                             const struct gp_pick *want)
{
    const struct gp_node *n = gp_engine_node(s->e, node);
    const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
    if (!n || !ep || want->ngpus != ep->spec.gpu_count || want->ngpus == 0)
        return GP_ELIMIT;
    const struct gp_mig_model *m = &gp_mig_models[n->mig_model];
    if (want->mig_profile < 0 || (size_t)want->mig_profile >= m->nprofiles)
        return GP_ELIMIT;
    /* one instance of the pod's profile, nothing else */
    struct gp_pod_spec one = ep->spec;
    one.name = "gpuplane.io/mig-placeholder";
    one.cpu_milli = one.mem_mib = 0;
    one.gpu_count = 1;
    one.group = 0;
    one.constraints = NULL;
    one.labels = NULL;
    one.nlabels = 0;
    one.node_selector = NULL;
    one.nnode_selector = 0;
    one.tolerations = NULL;
    one.ntolerations = 0;
    one.gpu_models = NULL;
    one.ngpu_models = 0;
    if (one.mig_profile) /* the model's own string: it outlives the engine */
        one.mig_profile = m->profiles[want->mig_profile].name;
    uint32_t ph[PLACEHOLDERS], taken = 0;
    bool is_named[PLACEHOLDERS];
    size_t nph = 0;
    enum gp_err err = GP_OK;
    while (nph < PLACEHOLDERS) {
        uint32_t id;
        enum gp_err aerr = gp_engine_pod_add(s->e, &one, s->now_s, &id);
        gp_evlog_pod_add(s->rec, &one, s->now_s, aerr, id);
        if (aerr != GP_OK) {
            err = GP_ENOMEM;
            break;
        }
        if (assign(s, id, node, NULL) != GP_OK) {
            drop(s, id); /* no free instance of the profile is left */
            break;
        }
        const struct gp_pod *q = gp_engine_pod(s->e, id);
        if (q->pick.mig_profile != want->mig_profile || q->pick.reconfigured) {
            drop(s, id); /* not one of the layout's free instances: stop there */
            break;
        }
        is_named[nph] = named(want, q->pick.gpu[0], q->pick.mig_start[0], &taken);
        ph[nph++] = id;
    }
    if (err == GP_OK && taken != (1u << want->ngpus) - 1)
        err = GP_ELIMIT; /* a named instance is not free (or not there) */
    if (err == GP_OK) {
        for (size_t i = 0; i < nph; i++)
            if (is_named[i])
                drop(s, ph[i]);
        err = assign(s, p->eng, node, NULL);
    }
    for (size_t i = 0; i < nph; i++)
        if (err != GP_OK || !is_named[i])
            drop(s, ph[i]);
    if (err != GP_OK)
        return err;
    return GP_OK; /* only the named ones were free: the engine's pick is them */
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
    pick = pick ? &local : NULL;
    const struct gp_node *n = gp_engine_node(s->e, node);
    if (pick && n && n->spec.sharing && n->mig_model >= 0 && pick->mig_profile >= 0)
        return assign_at(s, p, node, pick);
    return assign(s, p->eng, node, pick);
}
