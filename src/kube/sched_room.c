/* sched_room.c - room on a waiting preemptor's own node outside what the
 * pods stopping there still hold. A preemptor waits on its node
 * (SP_PREEMPTING) while its victims stop: the engine released them when
 * it evicted them and placed the preemptor on their devices, so the
 * engine alone sees no difference between a GPU a victim still runs on
 * and one another pod freed. kube-scheduler evaluates the nominated node
 * first at each attempt, with the victims still in its cache until they
 * are gone (schedule_one.go findNodesThatFitPod / evaluateNominatedNode,
 * v1.28; KEP-1923 "Prefer Nominated Node"), and binds the pod there at
 * once when it fits beside them. Here: the pods stopping on the node get
 * their devices booked back in the engine for the time of the check
 * (engine pods of each one's GPUs, MIG instances or shared replicas by
 * its pick, with its host ports and other resources; its cpu and memory
 * are held already: sched_cycle.c victim_hold), the preemptor is tried
 * there with the engine's own filters and its default choice of GPUs,
 * and the bookings are let go again - every step through the engine's
 * public calls and into --record's log, so `gpuplane sim --replay` runs
 * the same. What it gets is beside the stopping pods as the engine and
 * the audit count them: a free replica of a time-sliced GPU one of them
 * shares, never its replica, MIG instance or whole GPU. */
#include <stdint.h>
#include <stdlib.h>

#include "kube/sched_internal.h"

/* Whether p's node may have room beside the pods stopping there: the
 * cheap test before the bookings, so that a preemptor with nothing new
 * beside it costs nothing. A GPU counts that the engine shows with some
 * share free (another pod ended) or that p holds alone, unless a stopping
 * pod holds it whole (a node that neither shares its GPUs nor has MIG);
 * the bookings decide. cpu and memory as on_stopping reads them (the
 * victims' holds counted). */
bool gp_ks_room_maybe(const struct gp_kube_sched *s, const struct spod *p)
{
    const struct gp_node *nd = s->e && p->node != SP_NONE ? gp_engine_node(s->e, p->node) : NULL;
    if (!nd || nd->state != GP_NODE_READY || s->nstopping == 0)
        return false;
    if ((p->spec.cpu_milli > 0 && nd->cpu_free_milli < 0) ||
        (p->spec.mem_mib > 0 && nd->mem_free_mib < 0))
        return false;
    bool plain = !nd->spec.sharing && nd->mig_model < 0, any = false;
    uint32_t stopping = 0, whole = 0, mine = 0; /* bit g: GPU g */
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *v = s->pods[i];
        if (v->st != SP_EVICTED || v->stop_node != p->node)
            continue;
        any = true;
        for (unsigned a = 0; a < v->stop_pick.ngpus; a++) {
            uint32_t bit = 1u << (v->stop_pick.gpu[a] % GP_MAX_GPUS_PER_NODE);
            stopping |= bit;
            if (plain && v->spec.gpu_milli >= GP_GPU_MILLI)
                whole |= bit;
        }
    }
    if (!any)
        return false;
    if (p->spec.gpu_count == 0)
        return true; /* (its cpu and memory fit: its ports and the rest, the filters') */
    for (unsigned b = 0; b < p->pick.ngpus; b++)
        mine |= 1u << (p->pick.gpu[b] % GP_MAX_GPUS_PER_NODE);
    for (uint32_t g = 0; g < nd->spec.gpu_count && g < GP_MAX_GPUS_PER_NODE; g++) {
        /* some share free (of memory for a memory-only share) */
        bool part = p->spec.gpu_milli > 0 ? nd->gpu[g].milli_free > 0 : nd->gpu[g].mem_free_mib > 0;
        if (!(whole >> g & 1) && (part || ((mine & ~stopping) >> g & 1)))
            return true;
    }
    return false;
}

/* Books in the engine what stopping pod v still holds on `node` but its
 * cpu and memory: one engine pod per GPU of its pick (its share, GPU
 * memory, MIG instance), the first with its host ports and other
 * resources; their ids into ids[*n]. A booking the engine refuses (the
 * device taken meanwhile by a pod that waits for v, or a MIG instance a
 * layout change removed) is dropped and counted in *refused. */
static void book_stopping(struct gp_kube_sched *s, const struct spod *v, uint32_t node,
                          uint32_t *ids, size_t *n, size_t *refused)
{
    unsigned k = v->stop_pick.ngpus > 0 ? v->stop_pick.ngpus : 1;
    const struct gp_node *nd = gp_engine_node(s->e, node);
    bool mig = nd && nd->mig_model >= 0;
    for (unsigned a = 0; a < k; a++) {
        struct gp_pod_spec h = {0};
        h.name = v->spec.name;
        h.namespace_name = v->spec.namespace_name;
        h.priority = INT32_MAX; /* (as victim_hold's: no preemptor picks it) */
        h.preempt_never = true;
        h.gpu_resource = v->spec.gpu_resource;
        struct gp_pick pk = {0};
        if (v->stop_pick.ngpus > 0) {
            h.gpu_count = 1;
            h.gpu_milli = v->spec.gpu_milli;
            h.gpu_mem_mib = v->spec.gpu_mem_mib;
            h.mig_profile = v->spec.mig_profile;
            h.share_modes = v->spec.share_modes;
            pk.ngpus = 1;
            pk.gpu[0] = v->stop_pick.gpu[a];
            /* (MIG instances only on a MIG node: elsewhere the pick's MIG
             * fields mean nothing, and none is written) */
            pk.mig_profile = mig ? v->stop_pick.mig_profile : -1;
            pk.mig_start[0] = mig ? v->stop_pick.mig_start[a] : 0;
        }
        if (a == 0) {
            h.host_ports = v->spec.host_ports;
            h.nhost_ports = v->spec.nhost_ports;
            h.scalars = v->spec.scalars;
            h.nscalars = v->spec.nscalars;
        }
        if (h.gpu_count == 0 && h.nhost_ports == 0 && h.nscalars == 0)
            continue; /* nothing the engine does not hold already */
        uint32_t id;
        enum gp_err err = gp_engine_pod_add(s->e, &h, s->now_s, &id);
        gp_evlog_pod_add(s->rec, &h, s->now_s, err, id);
        if (err != GP_OK) {
            (*refused)++;
            continue;
        }
        err = gp_engine_pod_assign(s->e, id, node, h.gpu_count ? &pk : NULL);
        gp_evlog_pod_assign(s->rec, id, node, h.gpu_count ? &pk : NULL, err);
        if (err == GP_OK) {
            ids[(*n)++] = id;
            continue;
        }
        (*refused)++;
        gp_engine_pod_finished(s->e, id); /* (pending: dropped) */
        gp_evlog_pod_finished(s->rec, id);
        gp_engine_pod_forget(s->e, id);
        gp_evlog_pod_forget(s->rec, id);
    }
}

/* p, pending in the engine (its place on `node` let go by the caller),
 * tried on `node` alone with the stopping pods' devices booked: GP_OK
 * when it passes every filter there and is bound there on the engine's
 * default choice of GPUs (p->node, p->pick set), GP_ELIMIT when it does
 * not fit beside them, GP_ENOMEM. *exact: every booking was made (else
 * what it got may be on a device the engine could not book back). The
 * bookings are gone again on return. */
enum gp_err gp_ks_room_place(struct gp_kube_sched *s, struct spod *p, uint32_t node, bool *exact)
{
    size_t cap = 0, n = 0, refused = 0;
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *v = s->pods[i];
        if (v->st == SP_EVICTED && v->stop_node == node)
            cap += v->stop_pick.ngpus > 0 ? v->stop_pick.ngpus : 1;
    }
    uint32_t *ids = cap ? malloc(cap * sizeof *ids) : NULL;
    if (cap && !ids)
        return GP_ENOMEM;
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *v = s->pods[i];
        if (v->st == SP_EVICTED && v->stop_node == node)
            book_stopping(s, v, node, ids, &n, &refused);
    }
    const struct gp_node *nd = gp_engine_node(s->e, node);
    const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
    enum gp_err err = GP_ELIMIT;
    if (nd && ep && nd->state == GP_NODE_READY &&
        gp_engine_filter(s->e, nd, ep) == GP_FILTER_COUNT) {
        err = gp_engine_pod_assign(s->e, p->eng, node, NULL);
        gp_evlog_pod_assign(s->rec, p->eng, node, NULL, err); /* (a replay chooses alike) */
    }
    for (size_t i = 0; i < n; i++) { /* the stopping pods' devices as before */
        gp_engine_pod_finished(s->e, ids[i]);
        gp_evlog_pod_finished(s->rec, ids[i]);
        gp_engine_pod_forget(s->e, ids[i]);
        gp_evlog_pod_forget(s->rec, ids[i]);
    }
    free(ids);
    if (err != GP_OK)
        return err == GP_ENOMEM ? GP_ENOMEM : GP_ELIMIT;
    p->node = node;
    p->pick = gp_engine_pod(s->e, p->eng)->pick;
    *exact = refused == 0;
    return GP_OK;
}
