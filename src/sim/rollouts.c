/* rollouts.c - rolling updates of a service's Deployment in virtual time
 * (docs/serve.md, "Rolling updates"): at each spec.rollouts[k].at the
 * Deployment's template changes (a new image or model version) and the
 * Deployment controller reconciles its ReplicaSets as serve/rollout.h
 * models it (kubernetes/kubernetes pkg/controller/deployment): a new
 * ReplicaSet per rollout, grown within spec.replicas + maxSurge while the
 * old ones (the previous rollout's unfinished new one among them:
 * "rollover") shrink while spec.replicas - maxUnavailable stay available;
 * the autoscaler keeps setting spec.replicas meanwhile, which the
 * controller shares across the ReplicaSets ("proportional scaling"). New
 * replicas are pods like any other: they wait for placement, for a node to
 * boot when a pool must grow, and for their model to load. The controller
 * reconciles every second while a rollout runs. Recorded per rollout: how
 * it ended and when, the lowest ready count, the most pods, the range of
 * spec.replicas, the time below spec.replicas - maxUnavailable ready, the
 * GPUs held beyond the replicas' own, and whether a new replica found no
 * room. */
#include <math.h>
#include <stdlib.h>

#include "sim/services.h"

/* progressDeadlineSeconds' default: a Deployment that makes no progress
 * for it is reported Progressing=False, ProgressDeadlineExceeded
 * (kubernetes.io, "Deployments", "Failed Deployment") */
#define PROGRESS_DEADLINE_S 600.0

/* A pod of the new ReplicaSet the engine found no room for while no node
 * boots: the cluster autoscaler is not bringing any (its pools are at
 * their maximum, or no pool's node fits it). */
static bool no_room_now(const struct run *r, const struct svc_run *sv, uint32_t rev)
{
    bool waiting = false;
    for (size_t i = 0; i < sv->reps.len && !waiting; i++) {
        const struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        if (rep->rev == rev && l->state == LP_PENDING) {
            const struct epod *ep = epod_at(r, l->epod);
            waiting = ep && ep->tried != 0;
        }
    }
    if (!waiting)
        return false;
    for (size_t i = 0; i < r->snodes.len; i++)
        if (r->snodes.items[i].state == SN_BOOTING)
            return false;
    return true;
}

/* The ReplicaSets as the controller sees them: each one's pods and
 * available (ready) pods. */
static void observe(const struct run *r, struct svc_run *sv)
{
    struct gp_deploy *d = &sv->dep;
    for (uint32_t i = 0; i < d->nrs; i++)
        d->rs[i].pods = d->rs[i].available = 0;
    for (size_t i = 0; i < sv->reps.len; i++) {
        const struct replica *rep = &sv->reps.items[i];
        struct gp_rs *rs = &d->rs[rep->rev < d->nrs ? rep->rev : d->nrs - 1];
        rs->pods++;
        rs->available += gp_sim_services_rank(r, rep) == 2;
    }
}

/* Removes n replicas of ReplicaSet rev, lowest rank first (not bound, then
 * loading, then ready), newest first within a rank: the ReplicaSet
 * controller's order. */
static enum gp_err remove_some(struct run *r, struct svc_run *sv, uint32_t rev, int32_t n)
{
    for (; n > 0; n--) {
        size_t pick = sv->reps.len;
        int best = 3;
        for (size_t i = sv->reps.len; i-- > 0;) {
            const struct replica *rep = &sv->reps.items[i];
            int k = gp_sim_services_rank(r, rep);
            if (rep->rev == rev && k < best) {
                best = k;
                pick = i;
            }
        }
        if (pick == sv->reps.len)
            return GP_OK;
        enum gp_err err = gp_sim_services_remove(r, sv, pick);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* Rollout k begins: the template changes; the rollout before it, if still
 * under way, is superseded (its new ReplicaSet is an old one now). */
static void begin(struct run *r, struct svc_run *sv, size_t k)
{
    const struct gp_service_rollout *spec = &sv->s->rollouts[k];
    int32_t replicas = sv->desired > 0 ? sv->desired : 0;
    if (!sv->dep_on) { /* one ReplicaSet, scaled to the count applied until now */
        gp_serve_deploy_init(&sv->dep, (int32_t)sv->reps.len, spec->max_surge,
                             spec->max_unavailable);
        for (size_t i = 0; i < sv->reps.len; i++)
            sv->reps.items[i].rev = 0;
        sv->dep_on = true;
    }
    if (k > 0 && sv->rolls[k - 1].state == ROLL_ACTIVE) {
        sv->rolls[k - 1].state = ROLL_SUPERSEDED;
        sv->rolls[k - 1].end_s = r->now_s;
    }
    sv->dep.replicas = replicas;
    gp_serve_deploy_rollout(&sv->dep, spec->max_surge, spec->max_unavailable);
    struct svc_roll *ro = &sv->rolls[k];
    *ro = (struct svc_roll){.state = ROLL_ACTIVE,
                            .start_s = r->now_s,
                            .progress_s = r->now_s,
                            .last_t = r->now_s,
                            .replicas = replicas,
                            .min_ready = INT32_MAX,
                            .replicas_low = replicas,
                            .replicas_high = replicas};
    gp_serve_rollout_fenceposts(replicas, spec->max_surge, spec->max_unavailable, &ro->max_surge,
                                &ro->max_unavailable);
}

/* The figures after a reconcile: ready, pods, spec.replicas, the time
 * below its floor, GPUs held beyond the replicas'. */
static void account(struct run *r, struct svc_run *sv, struct svc_roll *ro)
{
    const struct gp_deploy *d = &sv->dep;
    int32_t ready = 0;
    double gpus = 0;
    for (size_t i = 0; i < sv->reps.len; i++) {
        const struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        ready += gp_sim_services_rank(r, rep) == 2;
        if (l->state == LP_RUNNING) {
            gpus += l->gpus;
            if (l->gpus > sv->gpus_per_pod)
                sv->gpus_per_pod = l->gpus;
        }
    }
    if (ready < ro->min_ready)
        ro->min_ready = ready;
    if ((int32_t)sv->reps.len > ro->max_pods)
        ro->max_pods = (int32_t)sv->reps.len;
    if (d->replicas < ro->replicas_low)
        ro->replicas_low = d->replicas;
    if (d->replicas > ro->replicas_high)
        ro->replicas_high = d->replicas;
    if (ro->below)
        ro->below_s += r->now_s - ro->last_t;
    ro->below = ready < d->replicas - gp_serve_deploy_max_unavailable(d);
    ro->last_t = r->now_s;
    double spare = gpus - d->replicas * sv->gpus_per_pod;
    if (spare > ro->spare_gpus_peak)
        ro->spare_gpus_peak = spare;
    if (!ro->no_room && no_room_now(r, sv, d->nrs - 1)) {
        ro->no_room = true;
        ro->no_room_s = r->now_s;
    }
}

double gp_sim_rollout_next_s(const struct svc_run *sv, double t_s)
{
    const struct gp_service *s = sv->s;
    for (size_t k = sv->started; k < s->nrollouts; k++)
        if (s->rollouts[k].at_s > t_s)
            return s->rollouts[k].at_s;
    return INFINITY;
}

enum gp_err gp_sim_rollout_reconcile(struct run *r, struct svc_run *sv, bool *rolling)
{
    const struct gp_service *s = sv->s;
    *rolling = false;
    if (s->nrollouts > 0 && !sv->rolls) {
        sv->rolls = calloc(s->nrollouts, sizeof *sv->rolls);
        if (!sv->rolls)
            return gp_sim_nomem(r);
    }
    while (sv->started < s->nrollouts && r->now_s >= s->rollouts[sv->started].at_s)
        begin(r, sv, sv->started++);
    if (!sv->dep_on)
        return GP_OK;
    struct svc_roll *ro = sv->started > 0 ? &sv->rolls[sv->started - 1] : NULL;
    if (ro && ro->state != ROLL_ACTIVE)
        ro = NULL;
    struct gp_deploy *d = &sv->dep;
    d->replicas = sv->desired > 0 ? sv->desired : 0;
    observe(r, sv);
    uint32_t nw = d->nrs - 1;
    if (ro && d->rs[nw].available > ro->new_ready)
        ro->progress_s = r->now_s;
    int32_t delta[GP_DEPLOY_MAX_RS];
    gp_serve_deploy_sync(d, delta);
    enum gp_err err = GP_OK;
    bool changed = false;
    for (uint32_t i = 0; i < d->nrs && err == GP_OK; i++) {
        changed |= delta[i] != 0;
        for (int32_t k = 0; k < delta[i] && err == GP_OK; k++)
            err = gp_sim_services_add(r, sv, i);
        if (err == GP_OK && delta[i] < 0)
            err = remove_some(r, sv, i, -delta[i]);
    }
    if (err != GP_OK || !ro)
        return err;
    *rolling = true;
    if (changed)
        ro->progress_s = r->now_s;
    ro->new_ready = d->rs[nw].available;
    account(r, sv, ro);
    if (gp_serve_deploy_complete(d)) {
        ro->state = ROLL_COMPLETE;
        ro->end_s = r->now_s;
        *rolling = false;
    }
    return GP_OK;
}

void gp_sim_rollout_result(const struct svc_run *sv, size_t k, double end_s,
                           struct gp_sim_rollout *o)
{
    const struct svc_roll *ro = sv->rolls ? &sv->rolls[k] : NULL;
    *o = (struct gp_sim_rollout){.at_s = sv->s->rollouts[k].at_s};
    if (!ro || ro->state == ROLL_WAITING) {
        o->status = GP_ROLLOUT_NOT_STARTED;
        return;
    }
    o->start_s = ro->start_s;
    o->replicas = ro->replicas;
    o->max_surge = ro->max_surge;
    o->max_unavailable = ro->max_unavailable;
    o->min_ready = ro->min_ready == INT32_MAX ? 0 : ro->min_ready;
    o->max_pods = ro->max_pods;
    o->replicas_low = ro->replicas_low;
    o->replicas_high = ro->replicas_high;
    o->below_min_available_s =
        ro->below_s +
        (ro->state == ROLL_ACTIVE && ro->below && end_s > ro->last_t ? end_s - ro->last_t : 0);
    o->spare_gpus_peak = ro->spare_gpus_peak;
    o->no_room = ro->no_room;
    o->no_room_s = ro->no_room_s;
    switch (ro->state) {
    case ROLL_COMPLETE:
        o->status = GP_ROLLOUT_COMPLETE;
        o->duration_s = ro->end_s - ro->start_s;
        break;
    case ROLL_SUPERSEDED:
        o->status = GP_ROLLOUT_SUPERSEDED;
        o->duration_s = ro->end_s - ro->start_s;
        break;
    default:
        o->status = end_s - ro->progress_s >= PROGRESS_DEADLINE_S ? GP_ROLLOUT_STALLED
                                                                  : GP_ROLLOUT_PROGRESSING;
        o->duration_s = end_s - ro->start_s;
        break;
    }
}
