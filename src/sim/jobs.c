/* jobs.c - the workload's items in a timed run: each arrival submits an
 * instance (a Pod, a Job's completions with its parallelism, a
 * Deployment's replicas, a gang), whose logical pods enter the engine as
 * attempts; ends, failures with their back-off and limit, active
 * deadlines, gang restarts, and the engine's unschedulable answers. */
#include <math.h>
#include <string.h>

#include "sim/internal.h"

static double backoff_s(const struct run *r, uint32_t failures)
{
    double base = r->cfg->backoff_base_s, max = r->cfg->backoff_max_s;
    double d = failures >= 1 && failures <= 63 ? ldexp(base, (int)failures - 1) : max;
    return d < max ? d : max;
}

static uint32_t job_target(const struct gp_item *it)
{
    if (it->kind == GP_ITEM_POD)
        return 1;
    return it->completions ? it->completions : 1;
}

static uint32_t job_parallel(const struct gp_item *it)
{
    if (it->kind == GP_ITEM_POD)
        return 1;
    return it->parallelism ? it->parallelism : 1;
}

/* Once instance ii has ended and none of its pods can come back (each is
 * COMPLETED or FAILED), the engine may free its gang (the members it still
 * knows keep it until they are forgotten), and the instance and its
 * logical pods are released - unless nofit.c will look at them (a pod
 * that never ran). Called last, after the instance's pointers are used. */
static enum gp_err inst_settle(struct run *r, uint32_t ii)
{
    struct inst *in = inst_at(r, ii);
    if (!in || in->settled || in->state == INST_ACTIVE || in->closed < in->created)
        return GP_OK;
    in->settled = 1;
    enum gp_err err = in->group ? gp_engine_group_forget(r->e, in->group) : GP_OK;
    if (err != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: engine refused to forget gang %u", in->group);
    if (in->group && in->nofit)
        return GP_OK;
    for (uint32_t lp = in->head; lp != NONE; lp = lpod_at(r, lp)->next)
        if (lpod_at(r, lp)->runs == 0 && lpod_at(r, lp)->state != LP_COMPLETED)
            return GP_OK;
    for (uint32_t lp = in->head; lp != NONE;) {
        uint32_t next = lpod_at(r, lp)->next;
        gp_idtab_release(&r->lpods, lp);
        lp = next;
    }
    gp_sim_cost_job_done(r, ii); /* its cost is final: one of the costliest? */
    gp_idtab_release(&r->insts, ii);
    return GP_OK;
}

/* The end of a submission of a Pod or Job item (Deployments never end):
 * counted, with its completion time when it completed; its deadline, if
 * still pending, is discounted. */
static enum gp_err job_end(struct run *r, uint32_t ii, bool completed)
{
    struct inst *in = inst_at(r, ii);
    const struct gp_item *it = &r->wl->items[in->item];
    if (in->has_deadline) {
        in->has_deadline = 0;
        r->finite_events--;
    }
    if (it->kind == GP_ITEM_DEPLOYMENT)
        return GP_OK;
    size_t qi = 0;
    struct queue_run *q = r->nqueues ? &r->queues[r->items[in->item].queue] : NULL;
    if (q)
        qi = r->items[in->item].queue;
    if (!completed) {
        r->out->jobs_failed++;
        if (q)
            r->out->queues[qi].jobs_failed++;
        return GP_OK;
    }
    double jct = r->now_s - in->submit_s;
    r->out->jobs_completed++;
    if (q) /* kept once: the run's are its queues' (queues.c) */
        r->out->queues[qi].jobs_completed++;
    if (gp_sim_values_push(q ? &q->jcts : &r->jcts, jct) != 0)
        return gp_sim_nomem(r);
    return GP_OK;
}

/* What is left of the run an attempt of l will make, as the engine's
 * duration hint (shortest job first, backfill): the simulator knows each
 * run's length in advance (gp_sim_runs_on_bind draws it from the same keyed stream),
 * so the orders that use it see the truth, as an oracle would; 0 for a run
 * without end. */
static double duration_hint(const struct run *r, const struct lpod *l, const struct inst *in,
                            const struct gp_item *it)
{
    if (!it->has_duration || it->kind == GP_ITEM_DEPLOYMENT)
        return 0;
    if (l->resume)
        return l->len_s - l->saved_s > 0 ? l->len_s - l->saved_s : 0;
    struct gp_rng dur;
    gp_sim_rng_keyed(&dur, r->cfg->seed, STREAM_DURATION, in->item, in->k, in->group ? 0 : l->slot,
                     l->runs + 1);
    return dist_draw(&it->duration, &dur);
}

/* A new attempt of logical pod lp enters the engine's queue. */
enum gp_err gp_sim_jobs_attempt_add(struct run *r, uint32_t lp)
{
    struct lpod *l = lpod_at(r, lp);
    const struct inst *in = inst_at(r, l->inst);
    const struct gp_item *it = &r->wl->items[in->item];
    uint32_t id;
    struct gp_pod_spec spec = it->pod;
    spec.group = in->group;
    spec.queue = r->items[in->item].equeue;
    spec.duration_hint_s = duration_hint(r, l, in, it);
    enum gp_err err = gp_engine_pod_add(r->e, &spec, r->now_s, &id);
    if (err != GP_OK) {
        char where[256];
        return gp_diag_set(r->diag, err, "%s: the engine refused its pod: %s",
                           gp_sim_item_where(it, in->item, where, sizeof where), gp_strerror(err));
    }
    uint32_t eid;
    struct epod *ep = gp_idtab_add(&r->epods, &eid);
    if (!ep)
        return gp_sim_nomem(r);
    if (id != eid)
        return gp_diag_set(r->diag, GP_ESTATE, "simulator: engine pod ids are not dense");
    ep->lpod = lp;
    ep->added_s = r->now_s;
    l->epod = id;
    l->state = LP_PENDING;
    return GP_OK;
}

static enum gp_err lpod_create(struct run *r, uint32_t ii)
{
    struct inst *in = inst_at(r, ii);
    struct lpod l = {.inst = ii,
                     .slot = in->created,
                     .next = NONE,
                     .epod = NONE,
                     .node = NONE,
                     .nprev = NONE,
                     .nnext = NONE,
                     .ts_gpu = GP_COLOC_NONE};
    uint32_t lp;
    struct lpod *nl = r->lpods.n < NONE ? gp_idtab_add(&r->lpods, &lp) : NULL;
    if (!nl)
        return gp_sim_nomem(r);
    *nl = l;
    in->created++;
    if (in->tail == NONE)
        in->head = lp;
    else
        lpod_at(r, in->tail)->next = lp;
    in->tail = lp;
    r->out->pods_submitted++;
    if (r->nqueues)
        r->out->queues[r->items[in->item].queue].pods_submitted++;
    return gp_sim_jobs_attempt_add(r, lp);
}

enum gp_err gp_sim_jobs_replica_add(struct run *r, uint32_t ii, uint32_t *lp)
{
    *lp = r->lpods.n; /* the id lpod_create's record gets */
    return lpod_create(r, ii);
}

/* Counts a submission of a gang that can never start, under its PodGroup. */
static enum gp_err never_start(struct run *r, const struct gp_item *it)
{
    struct gp_sim_result *out = r->out;
    out->gangs_never_start++;
    const char *name = it->group_name ? it->group_name : it->name;
    for (size_t i = 0; i < out->nnever_start; i++)
        if (strcmp(out->never_start[i].podgroup, name) == 0) {
            out->never_start[i].submissions++;
            return GP_OK;
        }
    struct gp_sim_gang_short *p =
        gp_arena_alloc(r->a, (out->nnever_start + 1) * sizeof *out->never_start);
    if (!p)
        return gp_sim_nomem(r);
    if (out->nnever_start)
        memcpy(p, out->never_start, out->nnever_start * sizeof *p);
    p[out->nnever_start++] = (struct gp_sim_gang_short){name, it->gang_min, it->gang_members, 1};
    out->never_start = p;
    return GP_OK;
}

static enum gp_err instance_submit(struct run *r, uint32_t item, uint32_t k)
{
    const struct gp_item *it = &r->wl->items[item];
    struct inst in = {.item = item,
                      .k = k,
                      .head = NONE,
                      .tail = NONE,
                      .submit_s = r->now_s,
                      .state = INST_ACTIVE};
    uint32_t ii;
    struct inst *ni = r->insts.n < NONE ? gp_idtab_add(&r->insts, &ii) : NULL;
    if (!ni)
        return gp_sim_nomem(r);
    *ni = in;
    if (gp_sim_values_push(&r->inst_usd, 0) != 0 ||
        (it->kind == GP_ITEM_DEPLOYMENT && GP_VEC_PUSH(&r->deploy_insts, ii) != 0))
        return gp_sim_nomem(r);
    uint32_t n;
    if (it->kind == GP_ITEM_DEPLOYMENT) {
        n = it->replicas;
    } else {
        uint32_t target = job_target(it), par = job_parallel(it);
        n = par < target ? par : target;
    }
    if (it->kind != GP_ITEM_DEPLOYMENT) {
        r->out->jobs_submitted++;
        if (r->nqueues)
            r->out->queues[r->items[item].queue].jobs_submitted++;
    }
    if (n == 0)
        inst_at(r, ii)->state = INST_DONE;
    if (n > 0 && it->active_deadline_s > 0) {
        double t = r->now_s + it->active_deadline_s;
        enum gp_err err = isfinite(t) ? gp_sim_push_event(r, t, EV_DEADLINE, ii, 0) : GP_OK;
        if (err != GP_OK)
            return err;
    }
    if (it->gang_min > 0 && n > 0) { /* each submission is one gang */
        /* a PodGroup whose objects never run minMember pods at once waits
         * for members for ever, as in Kubernetes: not clamped */
        bool never = it->gang_members > 0 && it->gang_members < it->gang_min;
        if (never) {
            inst_at(r, ii)->nofit = NOFIT_MEMBERS; /* reported by nofit.c */
            enum gp_err err = never_start(r, it);
            if (err != GP_OK)
                return err;
        }
        struct gp_group_spec g = {it->name, never || it->gang_min < n ? it->gang_min : n,
                                  it->topology_key, it->topology_required};
        enum gp_err err = gp_engine_group_add(r->e, &g, &inst_at(r, ii)->group);
        if (err != GP_OK)
            return gp_diag_set(r->diag, err, "simulator: cannot add gang %s: %s",
                               it->name ? it->name : "unnamed", gp_strerror(err));
        /* the autoscaler needs what the engine keeps to itself: the gang's
         * topology, and (strict orders) its instance */
        struct gp_autoscale_gang ag = {g.topology_key, g.topology_required};
        if (inst_at(r, ii)->group != r->gangs.len + 1)
            return gp_diag_set(r->diag, GP_ESTATE, "simulator: engine gang ids are not dense");
        if (GP_VEC_PUSH(&r->gangs, ag) != 0 || GP_VEC_PUSH(&r->group_inst, ii) != 0)
            return gp_sim_nomem(r);
    }
    for (uint32_t i = 0; i < n; i++) {
        enum gp_err err = lpod_create(r, ii);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

enum gp_err gp_sim_jobs_on_arrival(struct run *r, uint32_t item)
{
    const struct gp_item *it = &r->wl->items[item];
    struct item_run *ir = &r->items[item];
    uint32_t k = ir->next_k++;
    r->arrivals_done++;
    enum gp_err err = instance_submit(r, item, k);
    if (err != GP_OK)
        return err;
    uint32_t repeat = it->repeat ? it->repeat : 1;
    if (ir->next_k < repeat) {
        double t = r->now_s + dist_draw(&it->interarrival, &ir->arrivals);
        if (isfinite(t))
            return gp_sim_push_event(r, t, EV_ARRIVAL, item, 0);
    }
    return GP_OK;
}

/* Takes every unfinished pod of a failed instance out of the engine. */
enum gp_err gp_sim_jobs_fail(struct run *r, uint32_t ii)
{
    struct inst *in = inst_at(r, ii);
    bool finite = !item_endless(&r->wl->items[in->item]);
    in->state = INST_FAILED;
    for (uint32_t lp = in->head; lp != NONE; lp = lpod_at(r, lp)->next) {
        struct lpod *l = lpod_at(r, lp);
        if (l->state == LP_COMPLETED || l->state == LP_FAILED)
            continue;
        if (l->has_event) { /* its end or resubmission is now stale */
            l->has_event = 0;
            r->finite_events -= finite;
        }
        if (l->state == LP_PENDING || l->state == LP_RUNNING) {
            enum gp_err err = gp_engine_pod_finished(r->e, l->epod);
            if (err != GP_OK)
                return gp_diag_set(r->diag, err, "simulator: engine refused to remove pod %u",
                                   l->epod);
            if (l->state == LP_RUNNING && (err = gp_sim_runs_unbind(r, l)) != GP_OK)
                return err;
            /* one that never ran stays known: nofit.c looks at it */
            if (l->runs > 0 && (err = gp_sim_pod_forget(r, l->epod)) != GP_OK)
                return err;
        }
        l->state = LP_FAILED;
        in->closed++;
        r->out->pods_failed++;
    }
    enum gp_err err = job_end(r, ii, false);
    return err == GP_OK ? inst_settle(r, ii) : err;
}

/* A member of a gang failed: every other running member is stopped and
 * goes back to the queue with it at time t, as a distributed job restarts
 * all of its workers. */
static enum gp_err gang_restart(struct run *r, uint32_t ii, double t)
{
    struct inst *in = inst_at(r, ii);
    for (uint32_t lp = in->head; lp != NONE; lp = lpod_at(r, lp)->next) {
        struct lpod *l = lpod_at(r, lp);
        l->resume = 0; /* the job starts over: no member resumes a run */
        if (l->state != LP_RUNNING)
            continue;
        if (l->has_event) {
            l->has_event = 0;
            r->finite_events -= lpod_finite(r, l);
        }
        enum gp_err err = gp_engine_pod_finished(r->e, l->epod);
        if (err != GP_OK)
            return gp_diag_set(r->diag, err, "simulator: engine refused to stop pod %u", l->epod);
        if ((err = gp_sim_runs_unbind(r, l)) != GP_OK ||
            (err = gp_sim_pod_forget(r, l->epod)) != GP_OK)
            return err;
        l->state = LP_BACKOFF;
        r->out->gang_restarts++;
        if ((err = gp_sim_push_event(r, t, EV_RESUBMIT, lp, 0)) != GP_OK)
            return err;
    }
    return GP_OK;
}

enum gp_err gp_sim_jobs_on_end(struct run *r, uint32_t epod, bool failed)
{
    uint32_t lp = epod_at(r, epod)->lpod;
    struct lpod *l = lpod_at(r, lp);
    enum gp_err err = gp_engine_pod_finished(r->e, epod);
    if (err != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: engine refused to finish pod %u", epod);
    if (l->ts_gpu != GP_COLOC_NONE && !failed) { /* how much the company slowed it */
        r->ts_wall_s += r->now_s - l->bound_s;
        r->ts_work_s += work_now(r, l) - l->saved_s;
    }
    if ((err = gp_sim_runs_unbind(r, l)) != GP_OK || (err = gp_sim_pod_forget(r, epod)) != GP_OK)
        return err;
    l->resume = 0;
    uint32_t ii = l->inst;
    struct inst *in = inst_at(r, ii);
    const struct gp_item *it = &r->wl->items[in->item];
    if (!failed) {
        l->state = LP_COMPLETED;
        r->out->pods_completed++;
        in->succeeded++;
        in->closed++;
        if (in->succeeded >= job_target(it)) {
            in->state = INST_DONE;
            err = job_end(r, ii, true);
            return err == GP_OK ? inst_settle(r, ii) : err;
        }
        if (in->created < job_target(it))
            return lpod_create(r, ii);
        return GP_OK;
    }
    l->failures++;
    in->failures++;
    l->state = LP_BACKOFF;
    if (it->kind == GP_ITEM_DEPLOYMENT) /* replaced, with no limit */
        return gp_sim_push_event(r, r->now_s + backoff_s(r, l->failures), EV_RESUBMIT, lp, 0);
    if (in->failures > it->backoff_limit)
        return gp_sim_jobs_fail(r, ii);
    double t = r->now_s + backoff_s(r, in->failures);
    if (in->group) /* a gang fails whole: its running members stop and restart with it */
        if ((err = gang_restart(r, ii, t)) != GP_OK)
            return err;
    return gp_sim_push_event(r, t, EV_RESUBMIT, lp, 0);
}

enum gp_err gp_sim_jobs_on_resubmit(struct run *r, uint32_t lp)
{
    r->out->pod_retries++;
    return gp_sim_jobs_attempt_add(r, lp);
}

enum gp_err gp_sim_jobs_on_unschedulable(struct run *r, const struct gp_decision *d)
{
    struct epod *ep = epod_at(r, d->pod);
    struct lpod *l = lpod_at(r, ep->lpod);
    ep->tried = r->cycles;
    if (d->gang == GP_GANG_NEVER_FITS && l->state == LP_PENDING &&
        !gp_sim_scale_gang_fits_max(r, l->inst)) {
        /* reported at once, not left pending in silence: the job fails */
        r->out->gangs_never_fit++;
        inst_at(r, l->inst)->nofit = NOFIT_NEVER;
        return gp_sim_jobs_fail(r, l->inst);
    }
    /* the autoscaler looks at pods that new nodes could help: not those
     * waiting for gang members or for their queue's quota */
    if (r->dynamic && !ep->unsched && l->state == LP_PENDING && d->gang != GP_GANG_MEMBERS &&
        d->quota_queue == GP_QUEUE_NONE) {
        if (GP_VEC_PUSH(&r->unsched, d->pod) != 0)
            return gp_sim_nomem(r);
        ep->unsched = 1;
        r->as_dirty = true;
    }
    if (ep->counted || l->state == LP_FAILED)
        return GP_OK;
    ep->counted = 1;
    enum gp_filter main_reason = gp_explain_main(&d->explain);
    if (main_reason != GP_FILTER_COUNT) /* a gang waiting for members scanned no node */
        r->out->unschedulable[main_reason]++;
    if (main_reason == GP_FILTER_DRIVER && !r->out->unschedulable_driver[0])
        gp_engine_explain_driver(r->e, d->pod, r->out->unschedulable_driver,
                                 sizeof r->out->unschedulable_driver);
    return GP_OK;
}
