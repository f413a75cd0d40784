/* services.c - inference services in a timed run (docs/serve.md): each
 * InferenceService drives the replicas of its Deployment. At every sync
 * of its autoscaler (15 s for the HPA, 2 s for the concurrency
 * autoscaler) the load offered since the last sync is served by the
 * replicas that were ready then - an M/M/c (Erlang C) stretch while they
 * keep up, a FIFO backlog that drains at their capacity when they do not
 * (or when none is ready: requests are held, as Knative's activator
 * holds them) - and the autoscaler (serve/hpa.h, serve/kpa.h) sets the
 * replica count. New replicas are pods like any other: they wait for
 * placement, for a node to boot when a pool must grow, then for their
 * model to load (the cold start); removed ones leave the engine
 * (pending first, then loading, then ready, newest first, as a
 * ReplicaSet scales down). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/services.h"

#define STABLE_RHO 0.999 /* above it a stretch is served as a backlog */
#define TINY       1e-9

void gp_sim_services_free(struct run *r)
{
    for (size_t i = 0; r->svcs && i < r->nsvcs; i++) {
        struct svc_run *sv = &r->svcs[i];
        GP_VEC_FREE(&sv->reps);
        GP_VEC_FREE(&sv->pods);
        GP_VEC_FREE(&sv->backlog);
        GP_VEC_FREE(&sv->lat);
        GP_VEC_FREE(&sv->ttft);
        GP_VEC_FREE(&sv->lat_t);
        GP_VEC_FREE(&sv->readies);
        GP_VEC_FREE(&sv->waits);
        free(sv->rolls);
    }
    free(r->svcs);
    r->svcs = NULL;
    r->nsvcs = 0;
}

enum gp_err gp_sim_services_start(struct run *r)
{
    const struct gp_workload *w = r->wl;
    if (w->nservices == 0)
        return GP_OK;
    r->svcs = calloc(w->nservices, sizeof *r->svcs);
    if (!r->svcs)
        return gp_sim_nomem(r);
    r->nsvcs = w->nservices;
    for (size_t i = 0; i < w->nservices; i++) {
        struct svc_run *sv = &r->svcs[i];
        const struct gp_service *s = &w->services[i];
        sv->s = s;
        sv->item = NONE;
        sv->inst = NONE;
        for (size_t k = 0; k < w->nitems && sv->item == NONE; k++)
            if (w->items[k].kind == GP_ITEM_DEPLOYMENT && w->items[k].name &&
                strcmp(w->items[k].name, s->deployment) == 0)
                sv->item = (uint32_t)k;
        if (sv->item == NONE)
            return gp_diag_set(r->diag, GP_EINVALID,
                               "%s: InferenceService %s: spec.deployment: no Deployment named "
                               "\"%s\" in the manifests",
                               s->source, s->name, s->deployment);
        for (size_t j = 0; j < i; j++)
            if (r->svcs[j].item == sv->item)
                return gp_diag_set(r->diag, GP_EINVALID,
                                   "%s: InferenceService %s: spec.deployment: Deployment \"%s\" "
                                   "already serves InferenceService %s",
                                   s->source, s->name, s->deployment, r->svcs[j].s->name);
        if (w->items[sv->item].repeat > 1)
            return gp_diag_set(r->diag, GP_EINVALID,
                               "%s: InferenceService %s: Deployment \"%s\" has "
                               "sim.gpuplane.io/repeat; a served Deployment is submitted once",
                               s->source, s->name, s->deployment);
        sv->desired = (int32_t)w->items[sv->item].replicas;
        sv->scale_due_s = s->sync_s;
        gp_serve_kpa_init(&sv->kpa);
        if (GP_VEC_PUSH(&sv->readies, ((struct ready_change){0, 0})) != 0)
            return gp_sim_nomem(r);
        enum gp_err err = gp_sim_push_event(r, s->sync_s, EV_SERVICE, (uint32_t)i, 0);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* The Deployment's instance, once it has arrived: its pods are the replicas. */
static enum gp_err find_inst(struct run *r, struct svc_run *sv)
{
    if (sv->found || r->now_s < r->wl->items[sv->item].arrival_s)
        return GP_OK;
    for (; sv->scan < r->insts.n; sv->scan++) {
        const struct inst *x =
            inst_at(r, (uint32_t)sv->scan); /* NULL: released (not a Deployment) */
        if (x && x->item == sv->item)
            break;
    }
    if (sv->scan == r->insts.n)
        return GP_OK;
    sv->found = true;
    sv->inst = (uint32_t)sv->scan;
    const struct inst *in = inst_at(r, sv->inst);
    for (uint32_t lp = in->head; lp != NONE; lp = lpod_at(r, lp)->next) {
        struct replica rep = {lp, 0, INFINITY, 0};
        if (GP_VEC_PUSH(&sv->reps, rep) != 0)
            return gp_sim_nomem(r);
    }
    return GP_OK;
}

/* What one replica serves: requests/s (plain), or the LLM point at its share. */
struct capacity {
    uint32_t servers; /* M/M/c servers: replicas, or their batch slots */
    double mu;        /* per server */
    double total;     /* requests/s all of them serve at most */
    double ttft_s;    /* LLM: time to first token at the batch, without queueing */
    bool saturated;
};

static struct capacity capacity_of(const struct svc_run *sv, double lam, double in, double out)
{
    struct capacity c = {0};
    if (sv->ready == 0 || !(sv->rate_sum > 0))
        return c;
    double speed = sv->rate_sum / sv->ready;
    const struct gp_service *s = sv->s;
    if (!s->llm) {
        c.servers = sv->ready;
        c.mu = s->rps_per_replica * speed;
        c.total = c.mu * c.servers;
        return c;
    }
    /* a replica at speed v serves as one at full speed offered lam / v, v times faster */
    struct gp_serve_llm_point p = gp_serve_llm_at(&s->model, lam / sv->ready / speed, in, out);
    c.servers = sv->ready * p.cap;
    c.mu = speed / p.e2e_s;
    c.total = sv->ready * p.capacity_per_s * speed;
    c.ttft_s = p.ttft_s / speed;
    c.saturated = p.saturated;
    return c;
}

/* Whether two values agree within a relative `rel` (or both are tiny). */
static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-12;
}

/* A stretch like the last one (parameters within 0.2 %, within a minute of
 * it) is merged into it, its weight added and its parameters averaged by
 * weight: a steady or slowly changing load gives a few stretches per
 * minute instead of one per sync, for the percentiles' cost. */
#define MERGE_REL 0.002
#define MERGE_S   60.0

static bool merge_lat(struct gp_serve_lat *a, const struct gp_serve_lat *b)
{
    if (!(close_to(a->pw, b->pw, MERGE_REL) &&
          close_to(a->theta_per_s, b->theta_per_s, MERGE_REL) &&
          close_to(a->mu_per_s, b->mu_per_s, MERGE_REL) &&
          close_to(a->offset_s, b->offset_s, MERGE_REL)))
        return false;
    double w = a->weight + b->weight;
    if (w > 0) {
        double x = a->weight / w, y = b->weight / w;
        a->pw = x * a->pw + y * b->pw;
        a->theta_per_s = x * a->theta_per_s + y * b->theta_per_s;
        a->mu_per_s = x * a->mu_per_s + y * b->mu_per_s;
        a->offset_s = x * a->offset_s + y * b->offset_s;
    }
    a->weight = w;
    return true;
}

static enum gp_err push_lat(struct run *r, struct svc_run *sv, struct gp_serve_lat l, double ttft_s,
                            double t_s)
{
    struct gp_serve_lat f = l;
    f.mu_per_s = 1e9; /* the wait, then the prefill: a constant */
    f.offset_s += ttft_s;
    size_t n = sv->lat.len;
    if (n > 0 && t_s - sv->lat_first_t <= MERGE_S) {
        struct gp_serve_lat a = sv->lat.items[n - 1];
        struct gp_serve_lat b = sv->s->llm ? sv->ttft.items[n - 1] : f;
        if ((!sv->s->llm || close_to(b.offset_s, f.offset_s, MERGE_REL)) && merge_lat(&a, &l)) {
            sv->lat.items[n - 1] = a;
            if (sv->s->llm)
                merge_lat(&sv->ttft.items[n - 1], &f);
            sv->lat_t.items[n - 1] = (float)t_s;
            return GP_OK;
        }
    }
    sv->lat_first_t = t_s;
    if (GP_VEC_PUSH(&sv->lat, l) != 0 || GP_VEC_PUSH(&sv->lat_t, (float)t_s) != 0)
        return gp_sim_nomem(r);
    if (sv->s->llm && GP_VEC_PUSH(&sv->ttft, f) != 0)
        return gp_sim_nomem(r);
    return GP_OK;
}

/* The requests of [t0, t1): an M/M/c stretch, or the backlog. */
static enum gp_err serve(struct run *r, struct svc_run *sv, double t0, double t1, double lam,
                         double in, double out)
{
    double dt = t1 - t0, n = lam * dt;
    sv->requests += n;
    struct capacity c = capacity_of(sv, lam, in, out);
    if (c.total > 0 && sv->backlog_n <= TINY && !c.saturated && lam < STABLE_RHO * c.total) {
        if (n > 0) {
            struct gp_serve_lat l = gp_serve_mmc_lat(c.servers, lam, c.mu, n);
            enum gp_err err = push_lat(r, sv, l, c.ttft_s, t1);
            if (err != GP_OK)
                return err;
        }
        sv->tokens += n * out;
        double wq = gp_serve_mmc_wait_mean_s(c.servers, lam, c.mu);
        sv->last_conc = lam * (wq + 1.0 / c.mu);
        return GP_OK;
    }
    /* the backlog: FIFO, drained at the replicas' capacity */
    if (n > TINY) {
        struct chunk ch = {t0 + dt / 2, n};
        if (GP_VEC_PUSH(&sv->backlog, ch) != 0)
            return gp_sim_nomem(r);
        sv->backlog_n += n;
        sv->joined += n;
    }
    double room = c.total * dt, served = 0;
    while (room > TINY && sv->bhead < sv->backlog.len) {
        struct chunk *ch = &sv->backlog.items[sv->bhead];
        double take = ch->n < room ? ch->n : room;
        double drained = t0 + (served + take) / c.total;
        double wait = drained > ch->t_s ? drained - ch->t_s : 0;
        struct gp_serve_lat l = {.weight = take, .mu_per_s = c.mu, .offset_s = wait};
        enum gp_err err = push_lat(r, sv, l, c.ttft_s, t1);
        if (err != GP_OK)
            return err;
        if (wait > 0)
            sv->queued += take;
        room -= take;
        served += take;
        ch->n -= take;
        if (ch->n <= TINY)
            sv->bhead++;
    }
    sv->backlog_n -= served;
    if (sv->backlog_n < TINY)
        sv->backlog_n = 0;
    if (sv->bhead == sv->backlog.len) { /* empty: reuse the array */
        sv->bhead = 0;
        sv->backlog.len = 0;
    }
    sv->tokens += served * out;
    if (sv->backlog_n > 0 || (c.total <= 0 && n > 0))
        sv->unserved_s += dt;
    sv->last_conc = (c.mu > 0 ? (served / dt) / c.mu : 0) + sv->backlog_n;
    return GP_OK;
}

/* New binds since the last sync (each pays a cold start, drawn keyed by
 * the service, the pod and the bind), the GPU time of [t0, t1), and the
 * ready set at t1. */
static void replicas_update(struct run *r, struct svc_run *sv, uint32_t svc, double t0)
{
    uint32_t ready = 0;
    double rate = 0;
    for (size_t i = 0; i < sv->reps.len; i++) {
        struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        if (l->state != LP_RUNNING) {
            rep->ready_at_s = INFINITY;
            continue;
        }
        if (l->runs != rep->runs_seen) {
            rep->runs_seen = l->runs;
            double cold = 0;
            if (sv->s->has_cold_start) {
                struct gp_rng g;
                gp_sim_rng_keyed(&g, r->cfg->seed, STREAM_COLD_START, svc, rep->lp, l->runs, 0);
                cold = dist_draw(&sv->s->cold_start, &g);
            }
            double start = l->rate_t_s > l->bound_s ? l->rate_t_s : l->bound_s;
            rep->ready_at_s = start + cold;
            sv->cold_starts++;
        }
        double from = l->bound_s > t0 ? l->bound_s : t0;
        if (r->now_s > from)
            sv->gpu_s += l->gpus * (r->now_s - from);
        if (r->now_s >= rep->ready_at_s) {
            ready++;
            rate += l->rate > 0 ? l->rate : 0;
        }
    }
    sv->ready = ready;
    sv->rate_sum = rate;
    if (ready > sv->peak_ready)
        sv->peak_ready = ready;
}

/* The replicas running now that were ready at t: sv->ready, sv->rate_sum. */
static void ready_set_at(struct run *r, struct svc_run *sv, double t)
{
    uint32_t ready = 0;
    double rate = 0;
    for (size_t i = 0; i < sv->reps.len; i++) {
        const struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        if (l->state == LP_RUNNING && rep->ready_at_s <= t) {
            ready++;
            rate += l->rate > 0 ? l->rate : 0;
        }
    }
    sv->ready = ready;
    sv->rate_sum = rate;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* [t0, t1) served in pieces split where a replica became ready, each with
 * the replicas ready through it (a replica that stopped in between is
 * taken as gone since t0). */
static enum gp_err serve_interval(struct run *r, struct svc_run *sv, double t0, double t1,
                                  double lam, double in, double out)
{
    double cuts[64];
    size_t nc = 0;
    for (size_t i = 0; i < sv->reps.len && nc < 64; i++) {
        double t = sv->reps.items[i].ready_at_s;
        if (t > t0 && t < t1)
            cuts[nc++] = t;
    }
    qsort(cuts, nc, sizeof *cuts, cmp_double);
    double a = t0;
    for (size_t k = 0; k <= nc; k++) {
        double b = k < nc ? cuts[k] : t1;
        if (b <= a)
            continue;
        ready_set_at(r, sv, a);
        enum gp_err err = serve(r, sv, a, b, lam, in, out);
        if (err != GP_OK)
            return err;
        a = b;
    }
    return GP_OK;
}

/* The HPA's view of the pods (every ReplicaSet's: the Deployment's
 * selector): Pending until bound, without a metric while the model loads,
 * the load `rps` spread over the ready ones otherwise. */
static enum gp_err hpa_sync(struct run *r, struct svc_run *sv, double rps)
{
    const struct gp_service *s = sv->s;
    sv->pods.len = 0;
    double per = 0;
    if (sv->ready > 0) {
        double cap = s->llm ? 0 : s->rps_per_replica * sv->rate_sum;
        if (s->llm) {
            struct capacity c = capacity_of(sv, rps, s->in_tokens, s->out_tokens);
            cap = c.total;
        }
        switch (s->hpa_metric) {
        case GP_HPA_UTILIZATION: /* a busy GPU shows 100 %, no more */
            per = cap > 0 ? 100.0 * fmin(1.0, rps / cap) : 100.0;
            break;
        case GP_HPA_RPS:
            per = rps / sv->ready;
            break;
        case GP_HPA_CONCURRENCY:
            per = sv->last_conc / sv->ready;
            break;
        }
    }
    for (size_t i = 0; i < sv->reps.len; i++) {
        const struct replica *rep = &sv->reps.items[i];
        const struct lpod *l = lpod_at(r, rep->lp);
        struct gp_hpa_pod p = {.phase = GP_HPA_POD_RUNNING};
        if (l->state != LP_RUNNING)
            p.phase = GP_HPA_POD_PENDING;
        else if (r->now_s >= rep->ready_at_s) {
            p.has_metric = true;
            p.metric = per;
        }
        if (GP_VEC_PUSH(&sv->pods, p) != 0)
            return gp_sim_nomem(r);
    }
    struct gp_hpa_proposal pr = gp_serve_hpa_replicas(&s->hpa, sv->desired, sv->pods.items,
                                                      (uint32_t)sv->pods.len, r->now_s);
    sv->desired =
        gp_serve_hpa_sync(&s->hpa, &sv->hpa, r->now_s, sv->desired, pr.replicas, pr.valid);
    return GP_OK;
}

/* A replica leaves: out of the engine, its accounting closed. */
static enum gp_err replica_stop(struct run *r, uint32_t lp)
{
    struct lpod *l = lpod_at(r, lp);
    if (l->has_event) { /* a pending resubmission is now stale */
        l->has_event = 0;
        r->finite_events -= lpod_finite(r, l);
    }
    if (l->state == LP_PENDING || l->state == LP_RUNNING) {
        enum gp_err err = gp_engine_pod_finished(r->e, l->epod);
        if (err != GP_OK)
            return gp_diag_set(r->diag, err, "simulator: engine refused to remove pod %u", l->epod);
        if (l->state == LP_RUNNING && (err = gp_sim_runs_unbind(r, l)) != GP_OK)
            return err;
        if ((err = gp_sim_pod_forget(r, l->epod)) != GP_OK) /* the engine may free it */
            return err;
    }
    l->state = LP_COMPLETED;
    return GP_OK;
}

int gp_sim_services_rank(const struct run *r, const struct replica *rep)
{
    const struct lpod *l = lpod_at(r, rep->lp);
    if (l->state != LP_RUNNING)
        return 0;
    return r->now_s >= rep->ready_at_s ? 2 : 1;
}

enum gp_err gp_sim_services_add(struct run *r, struct svc_run *sv, uint32_t rev)
{
    uint32_t lp;
    enum gp_err err = gp_sim_jobs_replica_add(r, sv->inst, &lp);
    if (err != GP_OK)
        return err;
    struct replica rep = {lp, 0, INFINITY, rev};
    if (GP_VEC_PUSH(&sv->reps, rep) != 0)
        return gp_sim_nomem(r);
    return GP_OK;
}

enum gp_err gp_sim_services_remove(struct run *r, struct svc_run *sv, size_t i)
{
    enum gp_err err = replica_stop(r, sv->reps.items[i].lp);
    if (err != GP_OK)
        return err;
    memmove(&sv->reps.items[i], &sv->reps.items[i + 1],
            (sv->reps.len - i - 1) * sizeof *sv->reps.items);
    sv->reps.len--;
    return GP_OK;
}

static enum gp_err apply_desired(struct run *r, struct svc_run *sv)
{
    int32_t want = sv->desired < 0 ? 0 : sv->desired;
    while ((int32_t)sv->reps.len < want) {
        enum gp_err err = gp_sim_services_add(r, sv, 0);
        if (err != GP_OK)
            return err;
    }
    while ((int32_t)sv->reps.len > want) {
        size_t pick = 0;
        int best = 3;
        for (size_t i = sv->reps.len; i-- > 0;) { /* the newest of the lowest rank */
            int k = gp_sim_services_rank(r, &sv->reps.items[i]);
            if (k < best) {
                best = k;
                pick = i;
            }
        }
        enum gp_err err = gp_sim_services_remove(r, sv, pick);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* The waiting requests after a sync: while some wait, when some joined,
 * and once when none are left. */
static enum gp_err waits_note(struct run *r, struct svc_run *sv, double t)
{
    size_t n = sv->waits.len;
    const struct wait_change *last = n ? &sv->waits.items[n - 1] : NULL;
    if (sv->backlog_n <= 0 &&
        (last ? last->backlog <= 0 && last->joined == sv->joined : sv->joined <= 0))
        return GP_OK;
    struct wait_change w = {t, sv->backlog_n, sv->joined};
    if (GP_VEC_PUSH(&sv->waits, w) != 0)
        return gp_sim_nomem(r);
    return GP_OK;
}

enum gp_err gp_sim_services_on_tick(struct run *r, uint32_t svc)
{
    struct svc_run *sv = &r->svcs[svc];
    const struct gp_service *s = sv->s;
    double t1 = r->now_s, t0 = sv->last_t, dt = t1 - t0;
    enum gp_err err = find_inst(r, sv);
    if (err != GP_OK || dt <= 0)
        return err;
    double in = s->in_tokens, out = s->out_tokens;
    double lam = gp_load_mean(&s->load, t0, t1, &in, &out);
    sv->last_rps = lam;
    replicas_update(r, sv, svc, t0);
    if ((err = serve_interval(r, sv, t0, t1, lam, in, out)) != GP_OK)
        return err;
    ready_set_at(r, sv, t1);
    if ((err = waits_note(r, sv, t1)) != GP_OK)
        return err;
    /* the autoscaler at its own period; from a service's first rollout on,
     * the Deployment controller reconciles the ReplicaSets at every tick
     * (every second while a rollout runs), the autoscaler running on */
    bool rolling = false, decided = false;
    if (sv->found) {
        if (s->scaler == GP_SCALER_CONCURRENCY)
            gp_serve_kpa_record(&s->kpa, &sv->kpa, t0, t1, sv->last_conc);
        if (t1 >= sv->scale_due_s - 1e-9) {
            decided = true;
            double rps = lam;
            if (sv->dep_on && sv->scale_t < t0) { /* the load since its last decision */
                double tin = in, tout = out;
                rps = gp_load_mean(&s->load, sv->scale_t, t1, &tin, &tout);
            }
            if (s->scaler == GP_SCALER_HPA) {
                err = hpa_sync(r, sv, rps);
            } else if (s->scaler == GP_SCALER_CONCURRENCY) {
                struct gp_kpa_decision d =
                    gp_serve_kpa_decide(&s->kpa, &sv->kpa, t1, (int32_t)sv->ready, sv->desired);
                sv->desired = d.replicas;
            }
            sv->scale_t = t1;
        }
        if (err == GP_OK)
            err = gp_sim_rollout_reconcile(r, sv, &rolling);
        if (err == GP_OK && !sv->dep_on)
            err = apply_desired(r, sv);
        if (err != GP_OK)
            return err;
        ready_set_at(r, sv, t1);
    }
    if (sv->readies.items[sv->readies.len - 1].ready != sv->ready &&
        GP_VEC_PUSH(&sv->readies, ((struct ready_change){t1, sv->ready})) != 0)
        return gp_sim_nomem(r);
    sv->last_t = t1;
    double next = t1 + s->sync_s;
    if (decided)
        sv->scale_due_s = next;
    else if (sv->found)
        next = sv->scale_due_s;
    if (rolling && t1 + GP_SIM_ROLLOUT_TICK_S < next) /* a rollout reconciles every second */
        next = t1 + GP_SIM_ROLLOUT_TICK_S;
    double at = gp_sim_rollout_next_s(sv, t1); /* the sync before a rollout comes at its time */
    if (at < next)
        next = at;
    return gp_sim_push_event(r, next, EV_SERVICE, svc, 0);
}

static uint32_t ready_at(const struct svc_run *sv, double t)
{
    size_t lo = 0, hi = sv->readies.len;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (sv->readies.items[mid].t_s <= t)
            lo = mid;
        else
            hi = mid;
    }
    return sv->readies.items[lo].ready;
}

static enum gp_err service_finish(struct run *r, struct svc_run *sv, struct gp_sim_service *o,
                                  double end)
{
    const struct gp_service *s = sv->s;
    if (end > sv->last_t) { /* the stretch since the last sync */
        double in = s->in_tokens, out = s->out_tokens;
        double lam = gp_load_mean(&s->load, sv->last_t, end, &in, &out);
        replicas_update(r, sv, (uint32_t)(sv - r->svcs), sv->last_t);
        enum gp_err err = serve_interval(r, sv, sv->last_t, end, lam, in, out);
        if (err == GP_OK)
            err = waits_note(r, sv, end);
        if (err != GP_OK)
            return err;
        sv->last_t = end;
    }
    o->has_rollout = s->nrollouts > 0;
    if (s->nrollouts > 0) {
        o->rollouts = gp_arena_alloc(r->a, s->nrollouts * sizeof *o->rollouts);
        if (!o->rollouts)
            return gp_sim_nomem(r);
        for (size_t k = 0; k < s->nrollouts; k++)
            gp_sim_rollout_result(sv, k, end, &o->rollouts[k]);
        o->nrollouts = s->nrollouts;
        o->rollout = o->rollouts[0];
    }
    /* requests still waiting: their wait so far, a lower bound */
    double mu = s->llm ? 1.0 : s->rps_per_replica;
    for (size_t i = sv->bhead; i < sv->backlog.len; i++) {
        const struct chunk *ch = &sv->backlog.items[i];
        if (ch->n <= TINY)
            continue;
        struct gp_serve_lat l = {.weight = ch->n, .mu_per_s = mu, .offset_s = end - ch->t_s};
        enum gp_err err = push_lat(r, sv, l, 0, end);
        if (err != GP_OK)
            return err;
    }
    o->name = s->name;
    o->llm = s->llm;
    o->p50_latency_s = gp_serve_lat_quantile(sv->lat.items, sv->lat.len, 0.50);
    o->p95_latency_s = gp_serve_lat_quantile(sv->lat.items, sv->lat.len, 0.95);
    o->p99_latency_s = gp_serve_lat_quantile(sv->lat.items, sv->lat.len, 0.99);
    if (s->llm) {
        o->ttft_p99_s = gp_serve_lat_quantile(sv->ttft.items, sv->ttft.len, 0.99);
        o->tokens_per_s = end > 0 ? sv->tokens / end : 0;
    }
    o->unserved_s = sv->unserved_s;
    o->requests = sv->requests;
    o->requests_queued = sv->queued;
    o->requests_unserved = sv->backlog_n;
    o->cold_starts = sv->cold_starts;
    o->peak_replicas = sv->peak_ready;
    o->gpu_hours = sv->gpu_s / 3600.0;
    if (sv->found)
        o->cost_usd = gp_sim_inst_usd(r, sv->inst);
    double units = s->llm ? sv->tokens : sv->requests - sv->backlog_n;
    o->usd_per_million = units > 0 ? o->cost_usd / (units / 1e6) : 0;
    /* timelines at the result's samples */
    size_t n = r->out->nsamples;
    o->n = n;
    o->replicas = gp_arena_alloc(r->a, (n ? n : 1) * sizeof(double));
    o->load = gp_arena_alloc(r->a, (n ? n : 1) * sizeof(double));
    o->p99_timeline_s = gp_arena_alloc(r->a, (n ? n : 1) * sizeof(double));
    o->queued = gp_arena_alloc(r->a, (n ? n : 1) * sizeof(double));
    o->unserved_load = gp_arena_alloc(r->a, (n ? n : 1) * sizeof(double));
    if (!o->replicas || !o->load || !o->p99_timeline_s || !o->queued || !o->unserved_load)
        return gp_sim_nomem(r);
    size_t j = 0, w = 0;
    double joined_at = 0; /* requests that had joined the wait by the sample */
    for (size_t i = 0; i < n; i++) {
        double t = r->out->samples[i].t_s;
        o->replicas[i] = ready_at(sv, t);
        /* the waits: the backlog at t, and the requests that joined it before the next sample */
        double tn = i + 1 < n ? r->out->samples[i + 1].t_s : t;
        while (w < sv->waits.len && sv->waits.items[w].t_s <= t)
            w++;
        o->queued[i] = w > 0 ? sv->waits.items[w - 1].backlog : 0;
        size_t wn = w;
        while (wn < sv->waits.len && sv->waits.items[wn].t_s <= tn)
            wn++;
        double joined_next = wn > 0 ? sv->waits.items[wn - 1].joined : 0;
        if (w > 0)
            joined_at = sv->waits.items[w - 1].joined;
        o->unserved_load[i] = tn > t ? (joined_next - joined_at) / (tn - t) : 0;
        double a = t, b = i + 1 < n ? r->out->samples[i + 1].t_s : t + s->sync_s;
        double tin = 0, tout = 0;
        o->load[i] = b > a ? gp_load_mean(&s->load, a, b, &tin, &tout) : 0;
        /* the stretches that ended in (prev, t] */
        size_t k = j;
        while (k < sv->lat_t.len && (double)sv->lat_t.items[k] <= t)
            k++;
        o->p99_timeline_s[i] =
            i && k > j ? gp_serve_lat_quantile(&sv->lat.items[j], k - j, 0.99) : 0;
        j = k;
    }
    return GP_OK;
}

enum gp_err gp_sim_services_finish(struct run *r, double end_s)
{
    if (r->nsvcs == 0)
        return GP_OK;
    struct gp_sim_service *o = gp_arena_alloc(r->a, r->nsvcs * sizeof *o);
    if (!o)
        return gp_sim_nomem(r);
    memset(o, 0, r->nsvcs * sizeof *o);
    for (size_t i = 0; i < r->nsvcs; i++) {
        enum gp_err err = service_finish(r, &r->svcs[i], &o[i], end_s);
        if (err != GP_OK)
            return err;
    }
    r->out->services = o;
    r->out->nservices = r->nsvcs;
    return GP_OK;
}
