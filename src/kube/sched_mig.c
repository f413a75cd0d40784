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
 * cycle: the engine never decides anything for them. */
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

enum gp_err gp_ks_assign(struct gp_kube_sched *s, struct spod *p, uint32_t node,
                         const struct gp_pick *pick)
{
    const struct gp_node *n = gp_engine_node(s->e, node);
    if (pick && n && n->spec.sharing && n->mig_model >= 0 && pick->mig_profile >= 0)
        return assign_at(s, p, node, pick);
    return assign(s, p->eng, node, pick);
}
