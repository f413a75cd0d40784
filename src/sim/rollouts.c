/* rollouts.c - a rolling update of a service's Deployment in virtual time
 * (docs/serve.md, "Rolling updates"): at spec.rollout.at the Deployment's
 * template changes (a new image or model version) and the Deployment
 * controller replaces its replicas as serve/rollout.h models it
 * (kubernetes/kubernetes pkg/controller/deployment/rolling.go): the new
 * ReplicaSet grows within replicas + maxSurge, the old one shrinks while
 * replicas - maxUnavailable stay available. New replicas are pods like any
 * other: they wait for placement, for a node to boot when a pool must
 * grow, and for their model to load. The autoscaler waits while the
 * rollout runs; the controller reconciles every second. Recorded: when it
 * completed, the lowest ready count, the most pods, the GPUs held beyond
 * the replicas' own, and whether a surge replica found no room. */
#include <math.h>

#include "sim/services.h"

/* progressDeadlineSeconds' default: a Deployment that makes no progress
 * for it is reported Progressing=False, ProgressDeadlineExceeded
 * (kubernetes.io, "Deployments", "Failed Deployment") */
#define PROGRESS_DEADLINE_S 600.0

/* A new pod the engine found no room for while no node boots: the cluster
 * autoscaler is not bringing any (its pools are at their maximum, or no
 * pool's node fits it). */
static bool no_room_now(const struct run *r, const struct svc_run *sv)
{
    bool waiting = false;
    for (size_t i = 0; i < sv->reps.len && !waiting; i++) {
        const struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        if (rep->fresh && l->state == LP_PENDING) {
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

/* The pods as the model counts them: old and new, and of each the ready ones. */
static void observe(const struct run *r, const struct svc_run *sv, struct gp_rollout *m)
{
    m->old_pods = m->old_ready = m->new_pods = m->new_ready = 0;
    for (size_t i = 0; i < sv->reps.len; i++) {
        const struct replica *rep = &sv->reps.items[i];
        bool ready = gp_sim_services_rank(r, rep) == 2;
        if (rep->fresh) {
            m->new_pods++;
            m->new_ready += ready;
        } else {
            m->old_pods++;
            m->old_ready += ready;
        }
    }
}

/* Removes n replicas of the version `fresh` whose rank is within
 * [lo, hi], lowest rank first, newest first within a rank. */
static enum gp_err remove_some(struct run *r, struct svc_run *sv, bool fresh, int lo, int hi,
                               int32_t n)
{
    for (; n > 0; n--) {
        size_t pick = sv->reps.len;
        int best = hi + 1;
        for (size_t i = sv->reps.len; i-- > 0;) {
            const struct replica *rep = &sv->reps.items[i];
            int k = gp_sim_services_rank(r, rep);
            if (rep->fresh == fresh && k >= lo && k < best) {
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

static void start(struct run *r, struct svc_run *sv)
{
    const struct gp_service *s = sv->s;
    struct svc_roll *ro = &sv->roll;
    int32_t replicas = sv->desired > 0 ? sv->desired : 0;
    gp_serve_rollout_start(&ro->m, replicas, s->max_surge, s->max_unavailable);
    ro->active = true;
    ro->start_s = ro->progress_s = r->now_s;
    ro->min_ready = INT32_MAX;
    for (size_t i = 0; i < sv->reps.len; i++)
        sv->reps.items[i].fresh = false;
}

/* The figures after a reconcile: ready, pods, GPUs held beyond the replicas'. */
static void account(struct run *r, struct svc_run *sv)
{
    struct svc_roll *ro = &sv->roll;
    int32_t ready = 0;
    double gpus = 0;
    for (size_t i = 0; i < sv->reps.len; i++) {
        const struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        ready += gp_sim_services_rank(r, rep) == 2;
        if (l->state == LP_RUNNING) {
            gpus += l->gpus;
            if (l->gpus > ro->gpus_per_pod)
                ro->gpus_per_pod = l->gpus;
        }
    }
    if (ready < ro->min_ready)
        ro->min_ready = ready;
    if ((int32_t)sv->reps.len > ro->max_pods)
        ro->max_pods = (int32_t)sv->reps.len;
    double spare = gpus - ro->m.replicas * ro->gpus_per_pod;
    if (spare > ro->spare_gpus_peak)
        ro->spare_gpus_peak = spare;
    if (!ro->no_room && no_room_now(r, sv)) {
        ro->no_room = true;
        ro->no_room_s = r->now_s;
    }
}

enum gp_err gp_sim_rollout_step(struct run *r, struct svc_run *sv, bool *rolling)
{
    struct svc_roll *ro = &sv->roll;
    *rolling = false;
    if (!sv->s->has_rollout || ro->done)
        return GP_OK;
    if (!ro->active) {
        if (r->now_s < sv->s->rollout_at_s)
            return GP_OK;
        start(r, sv);
    }
    *rolling = true;
    struct gp_rollout before = ro->m;
    observe(r, sv, &before);
    if (before.new_ready > ro->m.new_ready)
        ro->progress_s = r->now_s;
    struct gp_rollout m = before;
    int32_t created, removed;
    gp_serve_rollout_reconcile(&m, &created, &removed);
    enum gp_err err = GP_OK;
    for (int32_t i = 0; i < created && err == GP_OK; i++)
        err = gp_sim_services_add(r, sv, true);
    /* the old ones: unhealthy first (not bound, then loading), then ready */
    int32_t ready_down = before.old_ready - m.old_ready;
    int32_t unhealthy_down = before.old_pods - m.old_pods - ready_down;
    if (err == GP_OK)
        err = remove_some(r, sv, false, 0, 1, unhealthy_down);
    if (err == GP_OK)
        err = remove_some(r, sv, false, 2, 2, ready_down);
    if (err == GP_OK && m.new_pods < before.new_pods) /* a new ReplicaSet above replicas */
        err = remove_some(r, sv, true, 0, 2, before.new_pods - m.new_pods);
    if (err != GP_OK)
        return err;
    if (created > 0 || removed > 0)
        ro->progress_s = r->now_s;
    ro->m = m;
    account(r, sv);
    if (gp_serve_rollout_done(&m)) {
        ro->active = false;
        ro->done = true;
        ro->end_s = r->now_s;
    }
    return GP_OK;
}

void gp_sim_rollout_result(const struct svc_run *sv, double end_s, struct gp_sim_rollout *o)
{
    const struct svc_roll *ro = &sv->roll;
    *o = (struct gp_sim_rollout){.at_s = sv->s->rollout_at_s};
    if (!ro->active && !ro->done) {
        o->status = GP_ROLLOUT_NOT_STARTED;
        return;
    }
    o->start_s = ro->start_s;
    o->replicas = ro->m.replicas;
    o->max_surge = ro->m.max_surge;
    o->max_unavailable = ro->m.max_unavailable;
    o->min_ready = ro->min_ready == INT32_MAX ? 0 : ro->min_ready;
    o->max_pods = ro->max_pods;
    o->spare_gpus_peak = ro->spare_gpus_peak;
    o->no_room = ro->no_room;
    o->no_room_s = ro->no_room_s;
    if (ro->done) {
        o->status = GP_ROLLOUT_COMPLETE;
        o->duration_s = ro->end_s - ro->start_s;
    } else {
        o->status = end_s - ro->progress_s >= PROGRESS_DEADLINE_S ? GP_ROLLOUT_STALLED
                                                                  : GP_ROLLOUT_PROGRESSING;
        o->duration_s = end_s - ro->start_s;
    }
}
