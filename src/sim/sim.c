/* sim.c - the simulator's entry points and its event loop: gp_sim_run
 * checks the inputs, starts the engine and the run (internal.h), and in
 * timed mode pops the event heap (arrivals, pod ends, back-off expiries,
 * Job deadlines, node boots, idle timers, spot notices), applies each
 * event through its part (jobs.c, runs.c, nodes.c), runs the engine's
 * cycles, logs the state for the samples and totals the run at its end.
 * The static packing experiment is in static.c. docs/simulator.md
 * describes the semantics and every metric. */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"
#include "sim/metrics.h"

#define DAY_S         86400.0
#define AUTO_SAMPLES  288                /* automatic interval: end / 288, at least 1 s */
#define MAX_SAMPLES   GP_SIM_MAX_SAMPLES /* more is a mistake in sample_s */
#define MAX_EVENTS    100000000          /* guards against workloads that never settle */
#define MAX_SAME_TIME 100000 /* cycles at one instant: zero-length runs retried at once */
#define MAX_INFLATE   100.0
/* automatic interval, no horizon: state changes the log keeps exactly
 * before a run is long enough to take a 1-2-5 step (samples_plan) */
#define LOG_EXACT_MAX ((uint64_t)1 << 18)

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Seeds r from the run's seed, a stream and up to four keys. */
void gp_sim_rng_keyed(struct gp_rng *r, uint64_t seed, enum stream s, uint64_t k1, uint64_t k2,
                      uint64_t k3, uint64_t k4)
{
    uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL * (uint64_t)s);
    h = mix64(h ^ (k1 + 0x632be59bd9b4e019ULL));
    h = mix64(h ^ (k2 + 0x85157af5ULL));
    h = mix64(h ^ (k3 + 0x2545f4914f6cdd1dULL));
    h = mix64(h ^ (k4 + 0x9e3779b97f4a7c15ULL));
    gp_rng_seed(r, h);
}

void gp_sim_config_default(struct gp_sim_config *c)
{
    memset(c, 0, sizeof *c);
    c->mode = GP_SIM_TIMED;
    c->policy = gp_policy_find("best-fit");
    if (!c->policy)
        c->policy = gp_policies[0];
    c->seed = 42;
    c->horizon_s = 0;
    c->sample_s = 0;
    c->inflate = 1.3;
    c->backoff_base_s = 10;
    c->backoff_max_s = 360;
}

void gp_sim_progress(struct run *r, double fraction)
{
    if (!r->cfg->progress)
        return;
    if (!(fraction > 0))
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    int pct = (int)(fraction * 100);
    if (pct <= r->progress_pct)
        return;
    r->progress_pct = pct;
    r->cfg->progress(r->cfg->progress_ctx, fraction);
}

enum gp_err gp_sim_nomem(struct run *r)
{
    return gp_diag_set(r->diag, GP_ENOMEM, "simulator: out of memory");
}

/* ---- input checks --------------------------------------------------------- */

const char *gp_sim_item_where(const struct gp_item *it, size_t i, char *buf, size_t n)
{
    if (it->source && *it->source)
        snprintf(buf, n, "%s: %s", it->source, it->name ? it->name : "item");
    else
        snprintf(buf, n, "workload item %zu (%s)", i, it->name ? it->name : "unnamed");
    return buf;
}

static enum gp_err check_pod(const struct gp_pod_spec *p, const char *where, struct gp_diag *diag)
{
    if (p->cpu_milli < 0 || p->mem_mib < 0)
        return gp_diag_set(diag, GP_EINVALID, "%s: negative cpu or memory request", where);
    if (p->gpu_count > GP_MAX_GPUS_PER_NODE)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: asks for %u GPUs on one node, more than the limit of %d", where,
                           p->gpu_count, GP_MAX_GPUS_PER_NODE);
    /* a share may be memory alone, or a replica of a shared GPU with
     * nothing declared; MIG instances come in any number */
    bool nothing = p->gpu_milli == 0 && p->gpu_mem_mib == 0 && !p->share_modes && !p->mig_profile;
    if (p->gpu_count > 0 && (nothing || p->gpu_milli > GP_GPU_MILLI))
        return gp_diag_set(diag, GP_EINVALID, "%s: GPU share of %u milli-GPU, expected 1 to %d",
                           where, p->gpu_milli, GP_GPU_MILLI);
    if (p->gpu_count > 1 && p->gpu_milli != GP_GPU_MILLI && !p->mig_profile)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: a share of a GPU (%u milli) is only possible with one GPU, "
                           "not %u",
                           where, p->gpu_milli, p->gpu_count);
    return GP_OK;
}

static enum gp_err check_inputs(const struct gp_sim_config *cfg, const struct gp_cluster *cluster,
                                const struct gp_workload *wl, struct gp_diag *diag)
{
    if (!(cfg->horizon_s >= 0) || isinf(cfg->horizon_s))
        return gp_diag_set(diag, GP_EINVALID,
                           "simulation horizon: expected a finite number of "
                           "seconds >= 0, got %g",
                           cfg->horizon_s);
    if (!(cfg->sample_s >= 0) || isinf(cfg->sample_s))
        return gp_diag_set(diag, GP_EINVALID,
                           "sample interval: expected a finite number of seconds >= 0, got %g",
                           cfg->sample_s);
    if (!(cfg->backoff_base_s >= 0) || !(cfg->backoff_max_s >= 0) || isinf(cfg->backoff_base_s) ||
        isinf(cfg->backoff_max_s))
        return gp_diag_set(diag, GP_EINVALID,
                           "retry back-off: expected finite seconds >= 0, got base %g, max %g",
                           cfg->backoff_base_s, cfg->backoff_max_s);
    if (cfg->mode == GP_SIM_STATIC && !(cfg->inflate >= 0 && cfg->inflate <= MAX_INFLATE))
        return gp_diag_set(diag, GP_EINVALID, "inflate: expected a ratio from 0 to %g, got %g",
                           MAX_INFLATE, cfg->inflate);
    if (cfg->mode != GP_SIM_TIMED && cfg->mode != GP_SIM_STATIC)
        return gp_diag_set(diag, GP_EINVALID, "unknown simulation mode %d", (int)cfg->mode);
    for (size_t i = 0; i < cluster->nnodes; i++) {
        const struct gp_node_spec *n = &cluster->nodes[i];
        const char *name = n->name ? n->name : "unnamed";
        if (n->gpu_count > GP_MAX_GPUS_PER_NODE)
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: node %s has %u GPUs, more than the limit of %d",
                               cluster->source ? cluster->source : "cluster", name, n->gpu_count,
                               GP_MAX_GPUS_PER_NODE);
        if (n->cpu_milli < 0 || n->mem_mib < 0)
            return gp_diag_set(diag, GP_EINVALID, "%s: node %s has negative cpu or memory",
                               cluster->source ? cluster->source : "cluster", name);
    }
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        char where[256];
        gp_sim_item_where(it, i, where, sizeof where);
        enum gp_err err = check_pod(&it->pod, where, diag);
        if (err != GP_OK)
            return err;
        if (cfg->mode == GP_SIM_STATIC)
            continue;
        if (!(it->arrival_s >= 0) || isinf(it->arrival_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: arrival: expected a finite time >= 0 s, got %g", where,
                               it->arrival_s);
        if (!(it->failure_prob >= 0 && it->failure_prob <= 1))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: failure probability: expected 0 to 1, got %g", where,
                               it->failure_prob);
        if (!(it->failure_rate_per_s >= 0) || isinf(it->failure_rate_per_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: failure rate: expected a finite rate >= 0, got %g per s", where,
                               it->failure_rate_per_s);
        if (!(it->checkpoint_s >= 0) || isinf(it->checkpoint_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: checkpoint interval: expected a finite time >= 0 s, got %g",
                               where, it->checkpoint_s);
        if (!(it->active_deadline_s >= 0) || isinf(it->active_deadline_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: active deadline: expected a finite time >= 0 s, got %g", where,
                               it->active_deadline_s);
        if (it->kind != GP_ITEM_POD && it->kind != GP_ITEM_DEPLOYMENT && it->kind != GP_ITEM_JOB)
            return gp_diag_set(diag, GP_EINVALID, "%s: unknown item kind %d", where, (int)it->kind);
    }
    return GP_OK;
}

/* ---- events ------------------------------------------------------------- */

/* Arrivals and Job deadlines are finite work; a pod's end or resubmission
 * is finite unless its item is endless (a Deployment's failures go on
 * forever). The count of live finite events in the heap decides when a run
 * without a horizon is over, so events made stale (by a failed Job, a
 * finished one's deadline) are discounted at once. */
enum gp_err gp_sim_push_event(struct run *r, double t_s, uint32_t kind, uint32_t a, uint32_t b)
{
    if (gp_sim_heap_push(&r->heap, t_s, kind, a, b) != 0)
        return gp_sim_nomem(r);
    bool finite = true;
    if (kind_endless(kind)) {
        finite = false;
    } else if (kind == EV_DEADLINE) {
        inst_at(r, a)->has_deadline = 1;
    } else if (kind != EV_ARRIVAL && kind != EV_WAKE && kind != EV_BOOT) {
        struct lpod *l = lpod_at(r, a); /* EV_END, EV_RESUBMIT: a logical pod */
        l->has_event = 1;
        finite = lpod_finite(r, l);
    }
    r->finite_events += finite;
    return GP_OK;
}

/* Whether a popped event still matters; if so, it leaves the live count. */
static bool event_take(struct run *r, const struct gp_sim_event *ev)
{
    if (kind_endless(ev->kind))
        return true; /* apply_event checks that it still matters */
    if (ev->kind == EV_ARRIVAL || ev->kind == EV_WAKE || ev->kind == EV_BOOT) {
        r->finite_events--;
        if (ev->kind == EV_WAKE && ev->t_s == r->wake_s)
            r->wake_s = INFINITY;
        return true;
    }
    if (ev->kind == EV_DEADLINE) {
        struct inst *in = inst_at(r, ev->a);
        if (!in || !in->has_deadline)
            return false; /* the Job ended first; it was discounted then */
        in->has_deadline = 0;
        r->finite_events--;
        return in->state == INST_ACTIVE;
    }
    /* EV_END (its run, by end_ver), EV_RESUBMIT: a logical pod, released
     * (NULL) once its instance is over, when its events were discounted */
    struct lpod *l = lpod_at(r, ev->a);
    bool live = l && l->has_event &&
                (ev->kind == EV_END ? l->state == LP_RUNNING && ev->b >> 1 == l->end_ver
                                    : l->state == LP_BACKOFF);
    if (!live)
        return false;
    l->has_event = 0;
    r->finite_events -= lpod_finite(r, l);
    return true;
}

/* ---- cycles and the state over time ------------------------------------- */

/* Cycles at the current time: one, and another after each that evicted
 * pods (they are back in the queue and may fit elsewhere). */
#define MAX_EVICT_CYCLES 16

enum gp_err gp_sim_pod_forget(struct run *r, uint32_t epod)
{
    enum gp_err err = gp_engine_pod_forget(r->e, epod);
    gp_idtab_release(&r->epods, epod);
    return err == GP_OK
               ? GP_OK
               : gp_diag_set(r->diag, err, "simulator: engine refused to forget pod %u: %s", epod,
                             gp_strerror(err));
}

bool gp_sim_strict_order(const struct run *r)
{
    return r->cfg->order != GP_ORDER_FAIR && !r->cfg->backfill;
}

static enum gp_err schedule_cycle(struct run *r)
{
    r->cycle_mark = r->cycles;
    for (int round = 0; round < MAX_EVICT_CYCLES; round++) {
        size_t pending = gp_engine_pending_count(r->e);
        if (pending == 0)
            return GP_OK;
        struct gp_engine_totals t;
        gp_engine_totals(r->e, &t);
        /* a decision per pending pod, and at most one eviction per bound pod */
        if (GP_VEC_RESERVE(&r->dec, pending + t.pods_bound) != 0)
            return gp_sim_nomem(r);
        size_t n = gp_engine_schedule(r->e, r->now_s, 0, r->dec.items, r->dec.cap);
        r->cycles++;
        bool evicted = false;
        for (size_t i = 0; i < n; i++) {
            const struct gp_decision *d = &r->dec.items[i];
            if (!epod_at(r, d->pod))
                return gp_diag_set(r->diag, GP_ESTATE, "simulator: decision for unknown pod %u",
                                   d->pod);
            enum gp_err err;
            if (d->kind == GP_DECISION_BIND) {
                err = gp_sim_runs_on_bind(r, d);
            } else if (d->kind == GP_DECISION_EVICT) {
                err = gp_sim_runs_on_evict(r, d);
                evicted = true;
            } else {
                err = gp_sim_jobs_on_unschedulable(r, d);
            }
            if (err != GP_OK)
                return err;
        }
        if (!evicted)
            break;
    }
    /* strict orders: pods behind a blocked head get no decision; a new one
     * is news for the autoscaler all the same */
    if (r->dynamic && gp_sim_strict_order(r) && r->epods.n != r->as_epods &&
        gp_engine_pending_count(r->e) > 0)
        r->as_dirty = true;
    if (r->dynamic && r->as_dirty) {
        enum gp_err err = gp_sim_scale_run(r);
        if (err != GP_OK)
            return err;
    }
    /* a waiting pod may evict one that reaches its minimum runtime later:
     * the engine must look again then, even if nothing else happens */
    double wake = gp_engine_next_wake_s(r->e);
    if (isfinite(wake) && wake > r->now_s && wake < r->wake_s) {
        r->wake_s = wake;
        return gp_sim_push_event(r, wake, EV_WAKE, 0, 0);
    }
    return GP_OK;
}

static void state_now(const struct run *r, struct gp_sim_sample *s)
{
    struct gp_engine_totals t;
    gp_engine_totals(r->e, &t);
    memset(s, 0, sizeof *s);
    s->gpu_alloc_pct =
        t.gpu_milli_total ? 100.0 * (double)t.gpu_milli_alloc / (double)t.gpu_milli_total : 0;
    s->cpu_alloc_pct =
        t.cpu_milli_total > 0 ? 100.0 * (double)t.cpu_milli_alloc / (double)t.cpu_milli_total : 0;
    s->mem_alloc_pct =
        t.mem_mib_total > 0 ? 100.0 * (double)t.mem_mib_alloc / (double)t.mem_mib_total : 0;
    size_t pending = gp_engine_pending_count(r->e);
    s->pending = pending > UINT32_MAX ? UINT32_MAX : (uint32_t)pending;
    s->running = t.pods_bound > UINT32_MAX ? UINT32_MAX : (uint32_t)t.pods_bound;
    s->nodes = t.nodes_ready;
}

/* Field by field: the struct has padding, which memcmp would read. */
static bool sample_eq(const struct gp_sim_sample *a, const struct gp_sim_sample *b)
{
    return a->t_s == b->t_s && a->gpu_alloc_pct == b->gpu_alloc_pct &&
           a->cpu_alloc_pct == b->cpu_alloc_pct && a->mem_alloc_pct == b->mem_alloc_pct &&
           a->pending == b->pending && a->running == b->running && a->nodes == b->nodes &&
           a->cost_usd == b->cost_usd;
}

/* Whether a multiple of grid_s, as the samples compute it ((double)i *
 * step), lies in [t0_s, t1_s). */
static bool grid_between(double t0_s, double t1_s, double grid_s)
{
    double i = ceil(t0_s / grid_s);
    if (i * grid_s < t0_s)
        i += 1;
    else if (i > 0 && (i - 1) * grid_s >= t0_s)
        i -= 1;
    return i * grid_s < t1_s;
}

/* The 1-2-5 value at or above x >= 1 (1, 2, 5, 10, 20, 50, ...). */
static double nice_step(double x)
{
    double d = 1;
    while (d * 10 <= x)
        d *= 10;
    return x <= d ? d : x <= 2 * d ? 2 * d : x <= 5 * d ? 5 * d : 10 * d;
}

/* The grid a long automatic run keeps the log for by now: the power of
 * ten at or below the 1-2-5 step of a run ending now, which divides the
 * step of any later end (samples_plan). */
static double nice_grid(double now_s)
{
    double c = nice_step(now_s / AUTO_SAMPLES > 1 ? now_s / AUTO_SAMPLES : 1), d = 1;
    while (d * 10 <= c)
        d *= 10;
    return d;
}

/* An entry is final (a later time follows it): the exact peak of the GPU
 * allocation is the highest such entry, the first time it was reached
 * (a pod that ran between two samples counts). */
static void log_seal(struct run *r, const struct change *c)
{
    struct gp_sim_result *out = r->out;
    if (c->s.gpu_alloc_pct > out->gpu_alloc_peak_pct) {
        out->gpu_alloc_peak_pct = c->s.gpu_alloc_pct;
        out->gpu_alloc_peak_t_s = c->t_s;
        out->gpu_alloc_peak_gpus = (double)c->gpu_milli_alloc / GP_GPU_MILLI;
    }
}

/* Keeps the entries a sample on the grid can read: an entry whose time
 * and its successor's hold no multiple of the grid is read by no sample
 * (each reads the last entry at or before its time). Exact with the kept
 * successor too: the entries dropped before held no grid point either. */
static void log_thin(struct run *r)
{
    size_t k = 0, n = r->log.len;
    for (size_t i = 0; i < n; i++)
        if (i + 1 == n || grid_between(r->log.items[i].t_s, r->log.items[i + 1].t_s, r->log_grid_s))
            r->log.items[k++] = r->log.items[i];
    r->log.len = k;
    if (r->log.cap > 2 * k + 1024) { /* the exact phase's room given back */
        size_t cap = 2 * k + 1024;
        struct change *t = realloc(r->log.items, cap * sizeof *t);
        if (t) {
            r->log.items = t;
            r->log.cap = cap;
        }
    }
}

/* Records the state from now on (one entry per distinct time and state),
 * thinned to the entries the samples will read: with the sample step
 * known (an interval, or a horizon), those at the step's multiples; in an
 * automatic run without a horizon, all of them for the first
 * LOG_EXACT_MAX changes, then those of a grid that divides any 1-2-5 step
 * the run can end with. The log holds about one entry per sample
 * (docs/simulator.md, "Samples"), not two per pod. */
static enum gp_err log_state(struct run *r)
{
    struct change c = {.t_s = r->now_s,
                       .cost_usd = r->cost_usd + r->cp_per_s * r->now_s,
                       .rate_usd_s = r->price_per_s + r->cp_per_s};
    state_now(r, &c.s);
    struct gp_engine_totals t;
    gp_engine_totals(r->e, &t);
    c.gpu_milli_alloc = t.gpu_milli_alloc;
    if (r->log.len > 0) {
        struct change *last = &r->log.items[r->log.len - 1];
        c.s.t_s = last->s.t_s;
        if (sample_eq(&last->s, &c.s) && last->rate_usd_s == c.rate_usd_s)
            return GP_OK;
        if (last->t_s == r->now_s) {
            *last = c;
            return GP_OK;
        }
        log_seal(r, last);
        r->log_changes++;
        if (!r->log_step_known && (r->log_nice || r->log_changes > LOG_EXACT_MAX)) {
            double g = nice_grid(r->now_s);
            r->log_nice = true;
            if (g != r->log_grid_s) { /* coarser: what the finer grid kept, thinned */
                r->log_grid_s = g;
                log_thin(r);
                last = &r->log.items[r->log.len - 1];
            }
        }
        if (r->log_grid_s > 0 && !grid_between(last->t_s, c.t_s, r->log_grid_s)) {
            *last = c; /* no sample reads it */
            return GP_OK;
        }
    }
    return GP_VEC_PUSH(&r->log, c) == 0 ? GP_OK : gp_sim_nomem(r);
}

/* Integrates the constant state of [now, t) and moves the clock to t. */
static void advance(struct run *r, double t_s)
{
    double dt = t_s - r->now_s;
    if (dt > 0) {
        struct gp_engine_totals t;
        gp_engine_totals(r->e, &t);
        r->node_s += (double)t.nodes_ready * dt;
        r->gpu_milli_total_s += (double)t.gpu_milli_total * dt;
        r->gpu_milli_alloc_s += (double)t.gpu_milli_alloc * dt;
        r->cost_usd += r->price_per_s * dt;
        for (size_t i = 0; i < r->nqueues; i++)
            r->queues[i].alloc_milli_s += (double)r->queues[i].alloc_milli * dt;
        r->now_s = t_s;
    }
}

/* ---- the timed run ------------------------------------------------------- */

/* The cost figures at the end of the run (sim/cost.h). */
static enum gp_err cost_finish(struct run *r, double end)
{
    for (size_t i = 0; i < r->snodes.len; i++) {
        const struct snode *sn = &r->snodes.items[i];
        if (sn->state == SN_GONE)
            continue;
        gp_cost_node(&r->cost, sn->pool, sn->since_s, end, node_price_h(sn->spec),
                     sn->spec->gpu_count);
        if (sn->requested) /* its bill closes with the run, rounded as its provider bills */
            gp_sim_nodes_bill_close(r, (uint32_t)i, end);
    }
    for (uint32_t i = gp_idtab_first(&r->lpods); i < r->lpods.n; i++) {
        struct lpod *l = lpod_at(r, i);
        if (l && l->state == LP_RUNNING)
            gp_sim_runs_cost(r, l, end);
    }
    for (uint32_t i = gp_idtab_first(&r->insts); i < r->insts.n; i++)
        if (inst_at(r, i)) /* the instances not released: their cost is final now */
            gp_sim_cost_job_done(r, i);
    /* every instance's cost in id order (released ones too), the
     * Deployments' summed as services, the jobs' kept in place */
    size_t ninst = r->inst_usd.n, njobs = 0, nd = 0;
    double services = 0;
    double *usd = gp_arena_alloc(r->a, (ninst ? ninst : 1) * sizeof *usd);
    if (!usd)
        return gp_sim_nomem(r);
    gp_sim_values_drain(&r->inst_usd, usd);
    for (size_t i = 0; i < ninst; i++) {
        if (nd < r->deploy_insts.len && r->deploy_insts.items[nd] == i) {
            nd++;
            services += usd[i];
            if (GP_VEC_PUSH(&r->deploy_usd, usd[i]) != 0)
                return gp_sim_nomem(r);
            continue;
        }
        usd[njobs++] = usd[i];
    }
    struct gp_sim_job_cost top[GP_SIM_TOP_JOBS];
    for (size_t i = 0; i < r->ntop; i++) {
        const struct gp_item *it = &r->wl->items[r->top[i].item];
        top[i] = (struct gp_sim_job_cost){
            .name = it->name ? it->name : "unnamed", .k = r->top[i].k, .usd = r->top[i].usd};
    }
    enum gp_err err = gp_cost_finish(&r->cost, r->cost_usd, r->cp_per_s * end, services, usd, njobs,
                                     top, r->ntop, r->lost_usd, r->a, r->out);
    return err != GP_OK ? gp_sim_nomem(r) : GP_OK;
}

double gp_sim_inst_usd(const struct run *r, uint32_t ii)
{
    if (ii < r->inst_usd.n)
        return *gp_sim_values_at(&r->inst_usd, ii);
    size_t lo = 0, hi = r->deploy_usd.len; /* drained: a Deployment's, by binary search */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->deploy_insts.items[mid] < ii)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->deploy_usd.len && r->deploy_insts.items[lo] == ii ? r->deploy_usd.items[lo] : 0;
}

/* Instance ii's cost is final (it is released, or the run ends): a job
 * among the costliest takes its place in r->top, costliest first, the
 * lower id first on a tie (as a scan of the jobs in id order would). */
void gp_sim_cost_job_done(struct run *r, uint32_t ii)
{
    const struct inst *in = inst_at(r, ii);
    if (!in || r->wl->items[in->item].kind == GP_ITEM_DEPLOYMENT)
        return;
    double usd = *gp_sim_values_at(&r->inst_usd, ii);
    if (!(usd > 0))
        return;
    size_t j = r->ntop;
    while (j > 0 &&
           (usd > r->top[j - 1].usd || (usd == r->top[j - 1].usd && ii < r->top[j - 1].inst)))
        j--;
    if (j >= GP_SIM_TOP_JOBS)
        return;
    size_t last = r->ntop < GP_SIM_TOP_JOBS ? r->ntop : GP_SIM_TOP_JOBS - 1;
    for (size_t k = last; k > j; k--)
        r->top[k] = r->top[k - 1];
    r->top[j] = (struct top_job){.usd = usd, .inst = ii, .item = in->item, .k = in->k};
    if (r->ntop < GP_SIM_TOP_JOBS)
        r->ntop++;
}

static enum gp_err apply_event(struct run *r, const struct gp_sim_event *ev)
{
    switch (ev->kind) {
    case EV_ARRIVAL:
        return gp_sim_jobs_on_arrival(r, ev->a);
    case EV_END:
        return gp_sim_jobs_on_end(r, lpod_at(r, ev->a)->epod, ev->b & 1);
    case EV_RESUBMIT:
        return gp_sim_jobs_on_resubmit(r, ev->a);
    case EV_DEADLINE: /* the Job ran too long: it fails, its pods stop */
        r->out->jobs_deadline_exceeded++;
        return gp_sim_jobs_fail(r, ev->a);
    case EV_WAKE:
        return GP_OK;
    case EV_BOOT:
        return gp_sim_nodes_on_boot(r, ev->a);
    case EV_IDLE:
        return gp_sim_nodes_on_idle(r, ev->a, ev->b);
    case EV_SPOT_NOTICE:
        return gp_sim_nodes_spot_notice(r, ev->a);
    case EV_SPOT_SERIES:
        return gp_sim_nodes_on_spot_series(r, ev->a, ev->b);
    case EV_SPOT_END:
        return gp_sim_nodes_on_spot_end(r, ev->a);
    case EV_EXPIRE:
        return gp_sim_nodes_on_expire(r, ev->a);
    case EV_SERVICE:
        return gp_sim_services_on_tick(r, ev->a);
    }
    return GP_OK;
}

static double timed_fraction(const struct run *r, bool endless_only)
{
    double f;
    if (r->cfg->horizon_s > 0)
        f = r->now_s / r->cfg->horizon_s;
    else if (endless_only)
        f = r->now_s / DAY_S;
    else /* the end is unknown: arrivals so far, the best cheap guess */
        f = r->arrivals_total ? (double)r->arrivals_done / (double)r->arrivals_total : 0;
    return f < 0.99 ? f : 0.99; /* 1 is reported once, at the end */
}

/* The sample interval for a run that ends at end_s, and the number of
 * samples: at 0, step, 2 step, ... <= end_s, plus one at end_s when it is
 * not a multiple of step (so the last sample is the final state);
 * GP_ELIMIT when too many. */
static enum gp_err samples_plan(struct run *r, double end_s, double *step, size_t *n)
{
    *step = r->cfg->sample_s;
    if (!(*step > 0)) {
        *step = end_s / AUTO_SAMPLES;
        if (*step < 1)
            *step = 1;
        if (r->log_nice) /* a long run: the log was kept for a 1-2-5 step (log_state) */
            *step = nice_step(*step);
    }
    double regular = floor(end_s / *step) + 1;
    double count = regular + ((regular - 1) * *step < end_s);
    if (count > MAX_SAMPLES)
        return gp_diag_set(r->diag, GP_ELIMIT,
                           "sample interval %g s over %g s of simulation gives more than %d "
                           "samples; choose a longer interval",
                           *step, end_s, MAX_SAMPLES);
    *n = (size_t)count;
    return GP_OK;
}

static enum gp_err samples_build(struct run *r, double end_s)
{
    double step = 0;
    size_t n = 0;
    enum gp_err err = samples_plan(r, end_s, &step, &n);
    if (err != GP_OK)
        return err;
    struct gp_sim_sample *s = gp_arena_alloc(r->a, n * sizeof *s);
    if (!s)
        return gp_sim_nomem(r);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        double t = i + 1 == n ? end_s : (double)i * step;
        while (j + 1 < r->log.len && r->log.items[j + 1].t_s <= t)
            j++;
        const struct change *c = &r->log.items[j];
        s[i] = c->s;
        s[i].t_s = t;
        s[i].cost_usd = c->cost_usd + c->rate_usd_s * (t - c->t_s);
    }
    r->out->samples = s;
    r->out->nsamples = n;
    return GP_OK;
}

static enum gp_err run_timed(struct run *r)
{
    const struct gp_workload *wl = r->wl;
    const double horizon = r->cfg->horizon_s;
    bool endless_only = wl->nitems > 0;
    enum gp_err err = GP_OK;

    if ((err = gp_sim_nodes_start(r)) != GP_OK)
        return err;
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        gp_sim_rng_keyed(&r->items[i].arrivals, r->cfg->seed, STREAM_ARRIVAL, i, 0, 0, 0);
        r->arrivals_total += it->repeat ? it->repeat : 1;
        if (!item_endless(it))
            endless_only = false;
        if ((err = gp_sim_push_event(r, it->arrival_s, EV_ARRIVAL, (uint32_t)i, 0)) != GP_OK)
            return err;
    }
    if ((err = gp_sim_services_start(r)) != GP_OK)
        return err;
    if (horizon > 0) { /* a bad sample interval fails before the run, not after */
        double step;
        size_t n;
        if ((err = samples_plan(r, horizon, &step, &n)) != GP_OK)
            return err;
        r->log_step_known = true; /* the run ends at the horizon: the step is this */
        r->log_grid_s = step;
    } else if (r->cfg->sample_s > 0) {
        r->log_step_known = true;
        r->log_grid_s = r->cfg->sample_s;
    }
    if ((err = log_state(r)) != GP_OK)
        return err;

    const struct gp_sim_event *top;
    uint64_t same_time = 0; /* cycles in a row at the same instant */
    while ((top = gp_sim_heap_peek(&r->heap)) != NULL) {
        double t = top->t_s;
        if (horizon > 0) {
            if (t > horizon)
                break;
        } else if (!endless_only) {
            if (r->finite_events == 0)
                break;
        } else if (r->finite_events == 0 && t > DAY_S) {
            break;
        }
        same_time = t == r->now_s && r->events > 0 ? same_time + 1 : 0;
        if (same_time > MAX_SAME_TIME)
            return gp_diag_set(r->diag, GP_ELIMIT,
                               "simulation stopped: more than %d scheduling cycles at t = %g s; "
                               "pods end the moment they start and are retried without "
                               "back-off (check durations and the back-off)",
                               MAX_SAME_TIME, t);
        advance(r, t);
        while ((top = gp_sim_heap_peek(&r->heap)) != NULL && top->t_s == t) {
            struct gp_sim_event ev;
            gp_sim_heap_pop(&r->heap, &ev);
            if (!event_take(r, &ev))
                continue; /* stale: its Job failed meanwhile */
            if (++r->events > MAX_EVENTS)
                return gp_diag_set(r->diag, GP_ELIMIT,
                                   "simulation stopped after %d events at t = %g s: pods fail "
                                   "or arrive too often; set a horizon or check durations "
                                   "and back-off",
                                   MAX_EVENTS, t);
            if ((err = apply_event(r, &ev)) != GP_OK)
                return err;
        }
        if ((err = schedule_cycle(r)) != GP_OK)
            return err;
        if ((err = log_state(r)) != GP_OK)
            return err;
        gp_sim_progress(r, timed_fraction(r, endless_only));
    }

    double end = r->now_s;
    if (horizon > 0)
        end = horizon;
    else if (endless_only && end < DAY_S)
        end = DAY_S;
    advance(r, end);

    struct gp_sim_result *out = r->out;
    out->sim_end_s = end;
    out->node_hours = r->node_s / 3600.0;
    out->gpu_hours_total = r->gpu_milli_total_s / GP_GPU_MILLI / 3600.0;
    out->gpu_hours_allocated = r->gpu_milli_alloc_s / GP_GPU_MILLI / 3600.0;
    out->gpu_hours_idle = out->gpu_hours_total - out->gpu_hours_allocated;
    out->timeslice_slowdown = r->ts_work_s > 0 ? r->ts_wall_s / r->ts_work_s : 1;
    for (uint32_t i = gp_idtab_first(&r->lpods); i < r->lpods.n; i++) {
        const struct lpod *l = lpod_at(r, i); /* NULL: released, COMPLETED or FAILED */
        uint8_t s = l ? l->state : LP_COMPLETED;
        out->pods_pending_end += s == LP_PENDING || s == LP_BACKOFF;
        out->pods_running_end += s == LP_RUNNING;
    }
    if ((err = gp_sim_queues_finish(r)) != GP_OK) /* the delays and JCTs, by queue and all */
        return err;
    if ((err = gp_sim_nofit_finish(r)) != GP_OK)
        return err;
    if ((err = cost_finish(r, end)) != GP_OK)
        return err;
    /* one number: the whole bill, control plane included */
    out->cost_usd = out->cost.total_usd;
    if (r->log.len > 0)
        log_seal(r, &r->log.items[r->log.len - 1]);
    if ((err = samples_build(r, end)) != GP_OK)
        return err;
    return gp_sim_services_finish(r, end);
}

/* ---- entry point ---------------------------------------------------------- */

enum gp_err gp_sim_run(const struct gp_sim_config *cfg, const struct gp_cluster *cluster,
                       const struct gp_workload *workload, struct gp_arena *a,
                       struct gp_sim_result *out, struct gp_diag *diag)
{
    if (!cfg || !cluster || !workload || !a || !out)
        return gp_diag_set(diag, GP_EINVALID,
                           "simulator: missing configuration, cluster, "
                           "workload, arena or result");
    memset(out, 0, sizeof *out);
    out->mode = cfg->mode;
    out->policy = cfg->policy ? cfg->policy->name : "none";
    out->seed = cfg->seed;
    if ((cluster->nnodes && !cluster->nodes) || (workload->nitems && !workload->items))
        return gp_diag_set(diag, GP_EINVALID, "simulator: cluster or workload without its array");
    enum gp_err err = check_inputs(cfg, cluster, workload, diag);
    if (err != GP_OK)
        return err;

    struct run r;
    memset(&r, 0, sizeof r);
    gp_idtab_init(&r.insts, sizeof(struct inst), SIM_CHUNK_SHIFT);
    gp_idtab_init(&r.lpods, sizeof(struct lpod), SIM_CHUNK_SHIFT);
    gp_idtab_init(&r.epods, sizeof(struct epod), SIM_CHUNK_SHIFT);
    r.cfg = cfg;
    r.cluster = cluster;
    r.wl = workload;
    r.a = a;
    r.out = out;
    r.diag = diag;
    r.progress_pct = -1;
    r.wake_s = INFINITY;
    gp_sim_heap_init(&r.heap);
    gp_coloc_init(&r.coloc);

    r.e = gp_engine_new(cfg->policy, cfg->seed);
    if (!r.e) {
        err = gp_diag_set(diag, GP_ENOMEM,
                          "cannot start the engine: out of memory, or policy %s failed to "
                          "initialise",
                          out->policy);
        goto done;
    }
    if ((err = gp_engine_set_order(r.e, cfg->order, cfg->backfill)) != GP_OK) {
        err = gp_diag_set(diag, err, "simulator: unknown queue order %d", (int)cfg->order);
        goto done;
    }
    gp_engine_set_index(r.e, !cfg->no_index, !cfg->no_index);
    r.items = calloc(workload->nitems ? workload->nitems : 1, sizeof *r.items);
    if (!r.items) {
        err = gp_sim_nomem(&r);
        goto done;
    }
    if ((err = gp_sim_nodes_topo_init(&r)) != GP_OK ||
        (err = gp_sim_nodes_add_initial(&r)) != GP_OK ||
        (err = gp_sim_static_set_target(&r)) != GP_OK || (err = gp_sim_queues_plan(&r)) != GP_OK)
        goto done;
    struct gp_engine_totals t;
    gp_engine_totals(r.e, &t);
    out->nodes = t.nodes_ready;
    out->gpus = t.gpus;

    if (cfg->mode == GP_SIM_TIMED && (err = gp_sim_nodes_init(&r)) != GP_OK)
        goto done;
    err = cfg->mode == GP_SIM_STATIC ? gp_sim_static_run(&r) : run_timed(&r);
    if (err == GP_OK && cfg->progress && r.progress_pct < 100)
        cfg->progress(cfg->progress_ctx, 1.0);
done:
    gp_engine_free(r.e);
    gp_sim_heap_free(&r.heap);
    gp_coloc_free(&r.coloc);
    free(r.items);
    gp_idtab_free(&r.insts);
    gp_idtab_free(&r.lpods);
    gp_idtab_free(&r.epods);
    gp_sim_values_free(&r.inst_usd);
    GP_VEC_FREE(&r.deploy_insts);
    GP_VEC_FREE(&r.deploy_usd);
    GP_VEC_FREE(&r.dec);
    gp_sim_values_free(&r.delays);
    gp_sim_values_free(&r.jcts);
    GP_VEC_FREE(&r.log);
    for (size_t i = 0; r.queues && i < r.nqueues; i++) {
        gp_sim_values_free(&r.queues[i].delays);
        gp_sim_values_free(&r.queues[i].jcts);
    }
    free(r.queues);
    GP_VEC_FREE(&r.snodes);
    GP_VEC_FREE(&r.enode_snode);
    GP_VEC_FREE(&r.unsched);
    GP_VEC_FREE(&r.untried);
    GP_VEC_FREE(&r.group_inst);
    GP_VEC_FREE(&r.static_failed);
    GP_VEC_FREE(&r.gangs);
    for (size_t i = 0; r.pools && i < r.npools; i++)
        free(r.pools[i].dlive);
    free(r.pools);
    gp_cost_free(&r.cost);
    gp_sim_services_free(&r);
    return err;
}
