/* runs.c - a bound pod's run: its length and failure point drawn from
 * the keyed streams at its first bind (an evicted pod resumes), its place
 * in its node's list and its cost, its rate on a time-sliced GPU
 * (colocate.h) and the delay of a MIG re-partition, a gang across
 * domains, and evictions with the work lost since the last checkpoint. */
#include <math.h>
#include <string.h>

#include "engine/sharing.h"
#include "sim/internal.h"

/* The queue figures of lpod l's item; NULL when there are none. */
static struct queue_run *lpod_queue(const struct run *r, const struct lpod *l, size_t *index)
{
    if (!r->nqueues)
        return NULL;
    uint32_t q = r->items[inst_at(r, l->inst)->item].queue;
    if (index)
        *index = q;
    return &r->queues[q];
}

/* What a running pod has cost from its bind to now: to its job, its queue
 * and its node's pool. */
void gp_sim_runs_cost(struct run *r, struct lpod *l, double until_s)
{
    double secs = until_s - l->bound_s;
    if (!(secs > 0) || l->node == NONE)
        return;
    double usd = secs * l->rate_usd_s;
    *gp_sim_values_at(&r->inst_usd, l->inst) += usd;
    size_t qi;
    if (lpod_queue(r, l, &qi))
        r->out->queues[qi].cost_usd += usd;
    gp_cost_pod(&r->cost, r->snodes.items[l->node].pool, secs, l->rate_usd_s, l->gpus);
}

/* A pod's compute demand on a time-sliced GPU: its share, or all of it. */
static double ts_demand(const struct gp_item *it)
{
    return it->pod.gpu_milli > 0 ? it->pod.gpu_milli : GP_GPU_MILLI;
}

/* When the current run of l ends from now (it has saved_s of work done):
 * at its failure point, or at its length; none for a run without end. */
static enum gp_err push_run_end(struct run *r, struct lpod *l, uint32_t lp,
                                const struct gp_item *it)
{
    bool fails = l->fail_work_s >= 0;
    double t;
    if (fails)
        t = l->rate_t_s + (l->fail_work_s - l->work_s) / l->rate;
    else if (!it->has_duration || it->kind == GP_ITEM_DEPLOYMENT)
        return GP_OK; /* runs until the end (a Deployment's pods never complete) */
    else
        t = l->rate_t_s + (l->len_s - l->work_s) / l->rate;
    if (!isfinite(t))
        return GP_OK;
    if (t < r->now_s)
        t = r->now_s;
    l->end_ver = (l->end_ver + 1) & 0x7fffffffu;
    return gp_sim_push_event(r, t, EV_END, lp, (uint32_t)fails | l->end_ver << 1);
}

/* The rate of a pod on time-sliced GPUs: its slowest GPU's (a pod with
 * replicas of several GPUs goes at the pace of the most crowded). */
static double ts_rate(const struct run *r, const struct lpod *l)
{
    double rate = 1;
    for (uint32_t g = 0; g < GP_MAX_GPUS_PER_NODE; g++)
        if (l->ts_gpus >> g & 1) {
            double x = gp_coloc_rate(&r->coloc, l->ts_gpu + g);
            rate = x < rate ? x : rate;
        }
    return rate;
}

/* The pods of a time-sliced GPU whose company changed: each keeps the work
 * done so far, goes on at its new rate, and gets its end anew. */
static enum gp_err rerate(struct run *r, uint32_t gpu)
{
    size_t n;
    const uint32_t *members = gp_coloc_members(&r->coloc, gpu, &n);
    for (size_t k = 0; k < n; k++) {
        struct lpod *l = lpod_at(r, members[k]);
        double rate = ts_rate(r, l);
        if (l->rate == rate)
            continue;
        if (r->now_s > l->rate_t_s) {
            l->work_s = work_now(r, l);
            l->rate_t_s = r->now_s;
        }
        l->rate = rate;
        if (l->has_event) { /* its end moves */
            l->has_event = 0;
            r->finite_events -= lpod_finite(r, l);
        }
        enum gp_err err = push_run_end(r, l, members[k], lpod_item(r, l));
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* A running pod stopped (it ended, failed, was stopped or evicted): its
 * GPUs no longer count for its queue, its cost is booked, it leaves its
 * node's list (an empty node starts to idle), and on a time-sliced GPU
 * the pods left there speed up. */
enum gp_err gp_sim_runs_unbind(struct run *r, struct lpod *l)
{
    struct queue_run *q = lpod_queue(r, l, NULL);
    if (q)
        q->alloc_milli -= pod_gpu_milli(&lpod_item(r, l)->pod);
    uint32_t base = l->ts_gpu, gpus = l->ts_gpus;
    if (base != GP_COLOC_NONE) {
        for (uint32_t g = 0; g < GP_MAX_GPUS_PER_NODE; g++)
            if (gpus >> g & 1)
                gp_coloc_leave(&r->coloc, base + g, epod_at(r, l->epod)->lpod,
                               ts_demand(lpod_item(r, l)));
        l->ts_gpu = GP_COLOC_NONE;
        l->ts_gpus = 0;
    }
    if (l->node != NONE) {
        gp_sim_runs_cost(r, l, r->now_s);
        struct snode *sn = &r->snodes.items[l->node];
        if (l->nprev != NONE)
            lpod_at(r, l->nprev)->nnext = l->nnext;
        else
            sn->head = l->nnext;
        if (l->nnext != NONE)
            lpod_at(r, l->nnext)->nprev = l->nprev;
        uint32_t node = l->node;
        l->node = l->nprev = l->nnext = NONE;
        if (--sn->pods == 0)
            gp_sim_nodes_idle(r, node);
    }
    enum gp_err err = GP_OK;
    for (uint32_t g = 0; base != GP_COLOC_NONE && g < GP_MAX_GPUS_PER_NODE && err == GP_OK; g++)
        if (gpus >> g & 1)
            err = rerate(r, base + g);
    return err;
}

/* The value of label key on the node a bound engine pod runs on; NULL. */
static const char *pod_label(const struct run *r, uint32_t epod, const char *key)
{
    const struct gp_pod *p = gp_engine_pod(r->e, epod);
    if (!p || p->state != GP_POD_BOUND)
        return NULL;
    const struct gp_node *n = gp_engine_node(r->e, p->node);
    for (size_t i = 0; i < n->spec.nlabels; i++)
        if (strcmp(n->spec.labels[i].key, key) == 0)
            return n->spec.labels[i].value;
    return NULL;
}

/* A gang member starts: a gang with a topology key whose bound members sit
 * in more than one domain (a preferred key could not be met) runs
 * topology_slowdown times slower, each member alike; its first member
 * counts the gang, and whether it waited longer than its PodGroup's
 * scheduleTimeoutSeconds. The engine binds a gang's members in one cycle,
 * so they are all bound when the first of them starts. */
static void gang_start(struct run *r, struct lpod *l, const struct gp_item *it)
{
    const struct inst *in = inst_at(r, l->inst);
    bool first = l->slot == 0 && l->runs == 1;
    if (first && it->gang_timeout_s > 0 && r->now_s - in->submit_s > it->gang_timeout_s)
        r->out->gangs_over_timeout++;
    if (!it->topology_key)
        return;
    const char *domain = NULL;
    bool across = false;
    for (uint32_t m = in->head; m != NONE && !across; m = lpod_at(r, m)->next) {
        const struct lpod *ml = lpod_at(r, m);
        if (ml->epod == NONE || (ml->state != LP_RUNNING && ml->state != LP_PENDING))
            continue;
        const char *v = pod_label(r, ml->epod, it->topology_key);
        if (!v)
            v = "";
        if (domain && strcmp(domain, v) != 0)
            across = true;
        domain = v;
    }
    if (!across)
        return;
    l->rate = 1 / (it->topology_slowdown >= 1 ? it->topology_slowdown : GP_TOPOLOGY_SLOWDOWN);
    if (l->slot == 0)
        r->out->gangs_across_domains++;
}

/* The run of a pod just bound starts from the work it had saved, at full
 * speed - unless it shares a time-sliced GPU, where every pod of the GPU
 * goes at the GPU's rate (colocate.h) - and after the re-partitioning
 * time when its MIG instance had to be created. A pod whose declared GPU
 * memory did not fit its time-sliced GPU fails at once, as its first CUDA
 * allocation would (out of memory), and is retried like any failure. */
static enum gp_err run_start(struct run *r, uint32_t lp, const struct gp_decision *d,
                             const struct gp_item *it)
{
    struct lpod *l = lpod_at(r, lp);
    const struct gp_node *node = gp_engine_node(r->e, d->node);
    const struct gp_sharing_spec *sh = node->spec.sharing;
    l->work_s = l->saved_s;
    l->rate_t_s = r->now_s;
    l->rate = 1;
    l->ts_gpu = GP_COLOC_NONE;
    l->ts_gpus = 0;
    if (d->pick.reconfigured && sh) {
        for (uint32_t g = d->pick.reconfigured; g; g &= g - 1)
            r->out->mig_reconfigurations++;
        l->rate_t_s += sh->mig.reconfigure_s > 0 ? sh->mig.reconfigure_s : GP_MIG_RECONFIGURE_S;
    }
    if (gp_engine_pod(r->e, d->pod)->oversubscribed) {
        r->out->oom_kills++;
        l->fail_work_s = l->work_s;
    }
    if (inst_at(r, l->inst)->group)
        gang_start(r, l, it);
    enum gp_err err;
    if (!sh || sh->mode != GP_SHARE_TIMESLICE || d->pick.ngpus == 0)
        return push_run_end(r, l, lp, it);
    /* its demand joins each GPU it holds replicas of, once (more replicas
     * of one GPU give it no more of its time) */
    for (uint32_t i = 0; i < d->pick.ngpus; i++) {
        uint32_t g = d->pick.gpu[i], index;
        if (l->ts_gpus >> g & 1)
            continue;
        if (gp_coloc_join(&r->coloc, d->node, node->spec.gpu_count, g, lp, ts_demand(it), &index) !=
            0)
            return gp_sim_nomem(r);
        l->ts_gpu = index - g;
        l->ts_gpus |= (uint16_t)(1u << g);
    }
    l->rate = ts_rate(r, l);
    if ((err = push_run_end(r, l, lp, it)) != GP_OK)
        return err;
    for (uint32_t g = 0; g < GP_MAX_GPUS_PER_NODE && err == GP_OK; g++)
        if (l->ts_gpus >> g & 1)
            err = rerate(r, l->ts_gpu + g); /* the others slow down */
    return err;
}

/* A bound pod joins its node's list; its cost per second is its share of
 * the node's GPUs times the node's price (nothing on a CPU-only node). */
static void bind_node(struct run *r, struct lpod *l, uint32_t lp, const struct gp_decision *d)
{
    l->node = l->nprev = l->nnext = NONE;
    l->rate_usd_s = l->gpus = 0;
    if (d->node >= r->enode_snode.len)
        return;
    uint32_t sni = r->enode_snode.items[d->node];
    struct snode *sn = &r->snodes.items[sni];
    const struct gp_pod *ep = gp_engine_pod(r->e, d->pod);
    double gpus = ep ? (double)ep->gpu_milli_taken / GP_GPU_MILLI : 0; /* what it holds */
    double node_gpus = sn->spec->gpu_count;
    double price = sn->spec->price_per_hour_usd;
    l->gpus = gpus;
    if (node_gpus > 0 && price > 0 && isfinite(price)) {
        double share = gpus / node_gpus;
        l->rate_usd_s = price / 3600.0 * (share < 1 ? share : 1);
    }
    l->node = sni;
    l->nnext = sn->head;
    if (sn->head != NONE)
        lpod_at(r, sn->head)->nprev = lp;
    sn->head = lp;
    if (sn->pods++ == 0)
        sn->idle_token++; /* no longer idle */
}

/* A pod was bound: record its delay and schedule the end of its run. A
 * new run draws its length and its failure; an evicted one resumes. */
enum gp_err gp_sim_runs_on_bind(struct run *r, const struct gp_decision *d)
{
    struct epod *ep = epod_at(r, d->pod);
    uint32_t lp = ep->lpod;
    struct lpod *l = lpod_at(r, lp);
    const struct inst *in = inst_at(r, l->inst);
    const struct gp_item *it = &r->wl->items[in->item];
    r->out->binds++;
    if (l->runs == 0)
        r->out->pods_scheduled++;
    l->runs++;
    l->state = LP_RUNNING;
    l->bound_s = r->now_s;
    bind_node(r, l, lp, d);
    double delay = r->now_s - ep->added_s;
    size_t qi;
    struct queue_run *q = lpod_queue(r, l, &qi);
    if (q) { /* kept once: the run's delays are its queues' (sim.c) */
        r->out->queues[qi].binds++;
        q->alloc_milli += pod_gpu_milli(&it->pod);
    }
    if (gp_sim_values_push(q ? &q->delays : &r->delays, delay) != 0)
        return gp_sim_nomem(r);
    if (l->resume) {
        l->resume = 0;
        return run_start(r, lp, d, it);
    }

    uint64_t seed = r->cfg->seed;
    struct gp_rng dur, fail;
    /* a gang's members run for one duration, the job's */
    gp_sim_rng_keyed(&dur, seed, STREAM_DURATION, in->item, in->k, in->group ? 0 : l->slot,
                     l->runs);
    gp_sim_rng_keyed(&fail, seed, STREAM_FAILURE, in->item, in->k, l->slot, l->runs);
    double u = gp_rng_unit(&fail), at = gp_rng_unit(&fail);
    /* a failure by probability needs a duration to happen in */
    bool fails = u < it->failure_prob && it->has_duration;
    l->len_s = it->has_duration ? dist_draw(&it->duration, &dur) : INFINITY;
    l->fail_work_s = fails ? at * l->len_s : -1;
    l->saved_s = 0;
    if (it->failure_rate_per_s > 0) { /* a time to failure, exponential */
        double ttf = -log1p(-gp_rng_unit(&fail)) / it->failure_rate_per_s;
        if (ttf < l->len_s && (l->fail_work_s < 0 || ttf < l->fail_work_s))
            l->fail_work_s = ttf;
    }
    return run_start(r, lp, d, it);
}

/* A running pod was stopped by the engine (to make room for another) or
 * by a spot interruption (spot: the caller released it): the work since
 * its last checkpoint (all of it, without checkpoints) is lost, and it
 * goes back to its queue as a new attempt that resumes the run. */
enum gp_err gp_sim_runs_evict(struct run *r, uint32_t lp, uint8_t reason, uint8_t cause)
{
    struct lpod *l = lpod_at(r, lp);
    const struct gp_item *it = lpod_item(r, l);
    if (l->has_event) { /* its end is stale now */
        l->has_event = 0;
        r->finite_events -= lpod_finite(r, l);
    }
    double rate = l->rate_usd_s;
    double ran = work_now(r, l) - l->saved_s; /* work, at the rate it ran */
    enum gp_err err = gp_sim_runs_unbind(r, l);
    if (err == GP_OK)
        err = gp_sim_pod_forget(r, l->epod);
    if (err != GP_OK)
        return err;
    double lost = it->checkpoint_s > 0 ? fmod(ran, it->checkpoint_s) : ran;
    l->saved_s += ran - lost;
    l->resume = 1;
    double lost_gpu_h = lost * (double)pod_gpu_milli(&it->pod) / GP_GPU_MILLI / 3600.0;
    if (cause == EVICT_BY_SPOT) {
        r->out->spot_evictions++;
        r->out->spot_lost_gpu_hours += lost_gpu_h;
    } else if (cause == EVICT_BY_EXPIRY) {
        r->out->expiry_evictions++;
        r->out->expiry_lost_gpu_hours += lost_gpu_h;
    } else {
        r->out->preemptions++;
        r->out->preempted += reason == GP_EVICT_PREEMPTED;
        r->out->reclaimed += reason == GP_EVICT_RECLAIMED;
        r->out->lost_gpu_hours += lost_gpu_h;
    }
    r->lost_usd += lost * rate;
    size_t qi;
    if (lpod_queue(r, l, &qi)) {
        r->out->queues[qi].evicted++;
        r->out->queues[qi].lost_gpu_hours += lost_gpu_h;
        r->out->queues[qi].lost_work_usd += lost * rate;
    }
    return gp_sim_jobs_attempt_add(r, lp);
}

enum gp_err gp_sim_runs_on_evict(struct run *r, const struct gp_decision *d)
{
    struct epod *ep = epod_at(r, d->pod);
    uint32_t lp = ep->lpod;
    struct lpod *l = lpod_at(r, lp);
    if (l->state != LP_RUNNING || l->epod != d->pod)
        return gp_diag_set(r->diag, GP_ESTATE, "simulator: the engine evicted pod %u, not running",
                           d->pod);
    return gp_sim_runs_evict(r, lp, d->evict, EVICT_BY_ENGINE);
}
