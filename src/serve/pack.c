/* pack.c - dense packing of small models within their latency limits (see
 * pack.h): the latency of a service's replicas at a speed and a memory
 * share (plain: M/M/c; LLM: batch, KV cache, TTFT and ITL); replicas by
 * first fit onto time-sliced or MPS GPUs, each placement kept only when
 * every service on that GPU still meets its limit, or onto MIG layouts,
 * each service on the profile that needs the least of a GPU. */
#include <math.h>

#include "serve/erlang.h"
#include "serve/pack.h"

#define P99 0.99

/* An LLM's TTFT p99 at c replicas of speed v and memory fraction f: the
 * simulator's model (sim/services.c): each replica offered lambda / c runs
 * as one at full speed offered lambda / (c v), v times faster; its batch
 * slots (c x cap) are the servers of an M/M/c whose wait comes before the
 * prefill. */
static double llm_latency(const struct gp_pack_service *s, uint32_t c, double v, double f,
                          double *itl_s)
{
    struct gp_serve_llm m = *s->llm;
    if (m.kv_tokens > 0 && f < 1)
        m.kv_tokens *= f;
    double lam = s->peak_rps > 0 ? s->peak_rps : 0;
    struct gp_serve_llm_point p = gp_serve_llm_at(&m, lam / c / v, s->in_tokens, s->out_tokens);
    *itl_s = p.itl_s / v;
    if (p.saturated || !(p.e2e_s > 0))
        return INFINITY;
    double ttft = p.ttft_s / v;
    if (lam <= 0)
        return ttft;
    double servers = (double)c * p.cap, mu = v / p.e2e_s;
    if (lam >= servers * mu || servers > UINT32_MAX)
        return INFINITY;
    /* the wait: 0 with probability 1 - C, else Exp(theta) */
    double pw = gp_serve_erlang_c((uint32_t)servers, lam / mu);
    double theta = servers * mu - lam;
    double wait = pw > 1 - P99 ? log(pw / (1 - P99)) / theta : 0;
    return ttft + wait;
}

double gp_serve_pack_latency(const struct gp_pack_service *s, uint32_t c, double v, double mem_frac,
                             double *itl_s)
{
    double itl = 0;
    double t = INFINITY;
    if (c > 0 && v > 0) {
        if (s->llm) {
            t = llm_latency(s, c, v, mem_frac, &itl);
        } else {
            double mu = s->rps_alone * v;
            if (!(mu > 0))
                t = INFINITY;
            else if (s->peak_rps <= 0)
                t = -log(1 - P99) / mu; /* no queue: a request's own service */
            else if (s->peak_rps < c * mu)
                t = gp_serve_mmc_quantile_s(c, s->peak_rps, mu, P99);
        }
    }
    if (itl_s)
        *itl_s = s->llm ? (c > 0 && v > 0 ? itl : INFINITY) : 0;
    return t;
}

bool gp_serve_pack_within(const struct gp_pack_service *s, double p99_s, double itl_s)
{
    if (!(p99_s <= s->limit_s))
        return false;
    return !s->llm || !(s->itl_limit_s > 0) || itl_s <= s->itl_limit_s;
}

/* Whether no replica count can meet the limits at speed v: a plain
 * request's own service time, or an LLM request's prefill and decode step
 * at batch 1, is already past them. */
static bool beyond_reach(const struct gp_pack_service *s, double v)
{
    if (!(v > 0))
        return true;
    if (!s->llm)
        return !(s->rps_alone * v > 0) || -log(1 - P99) / (s->rps_alone * v) > s->limit_s;
    const struct gp_serve_llm *m = s->llm;
    double ttft = (m->ttft_c_s + m->ttft_d_s * s->in_tokens) / v;
    double itl = (m->itl_a_s + m->itl_b_s) / v;
    return !gp_serve_pack_within(s, ttft, itl);
}

uint32_t gp_serve_pack_replicas_at(const struct gp_pack_service *s, double v, double mem_frac,
                                   uint32_t max, double *p99_s)
{
    *p99_s = INFINITY;
    if (max == 0 || beyond_reach(s, v))
        return 0;
    /* more replicas never raise the latency: doubling, then halving back
     * to the first count within the limits */
    uint32_t bad = 0, good = 0;
    for (uint32_t c = 1;; c = c > max / 2 ? max : 2 * c) {
        double itl, p = gp_serve_pack_latency(s, c, v, mem_frac, &itl);
        if (gp_serve_pack_within(s, p, itl)) {
            good = c;
            break;
        }
        bad = c;
        if (c == max)
            return 0;
    }
    while (good - bad > 1) {
        uint32_t mid = bad + (good - bad) / 2;
        double itl, p = gp_serve_pack_latency(s, mid, v, mem_frac, &itl);
        if (gp_serve_pack_within(s, p, itl))
            good = mid;
        else
            bad = mid;
    }
    *p99_s = gp_serve_pack_latency(s, good, v, mem_frac, NULL);
    return good;
}

uint32_t gp_serve_pack_replicas(const struct gp_pack_service *s, double v, uint32_t max,
                                double *p99_s)
{
    return gp_serve_pack_replicas_at(s, v, 1, max, p99_s);
}

static double mps_speed(const struct gp_pack_gpu *g, const struct gp_pack_service *s)
{
    if (g->mode != GP_PACK_MPS || !(g->mps_thread_milli > 0))
        return 1;
    double d = s->demand_milli > 1000 ? 1000 : s->demand_milli;
    return d > g->mps_thread_milli ? g->mps_thread_milli / d : 1;
}

/* The memory a replica has, as a fraction of the GPU's: an MPS client's
 * pinned-memory limit; on a time-sliced GPU (nothing partitions it) what
 * it declares, or all of it when it declares none. */
static double mem_frac(const struct gp_pack_gpu *g, const struct gp_pack_service *s)
{
    if (!(g->mem_mib > 0))
        return 1;
    double m = g->mode == GP_PACK_MPS && g->mps_mem_mib > 0 ? g->mps_mem_mib
               : s->mem_mib > 0                             ? s->mem_mib
                                                            : g->mem_mib;
    return m < g->mem_mib ? m / g->mem_mib : 1;
}

/* A replica's speed on GPU k (time-slicing: 1000 / D above 1000) */
static double speed_on(const struct gp_pack_gpu *g, const struct gp_pack_service *s,
                       const double *demand, uint32_t k)
{
    if (g->mode == GP_PACK_MPS)
        return mps_speed(g, s);
    return demand[k] > 1000 ? 1000 / demand[k] : 1;
}

struct packing {
    const struct gp_pack_gpu *g;
    struct gp_pack_service *s;
    size_t n;
    const size_t *first; /* per service: its first entry in gpu_of */
    uint32_t *gpu_of;    /* UINT32_MAX: not placed yet */
    double *demand, *mem;
    uint32_t *count;
};

/* Service i's mean speed, its replicas not yet placed counted at full speed. */
static double mean_speed(const struct packing *p, size_t i)
{
    const struct gp_pack_service *s = &p->s[i];
    double sum = 0;
    for (uint32_t r = 0; r < s->replicas; r++) {
        uint32_t k = p->gpu_of[p->first[i] + r];
        sum += k == UINT32_MAX ? mps_speed(p->g, s) : speed_on(p->g, s, p->demand, k);
    }
    return s->replicas ? sum / s->replicas : 0;
}

static bool service_ok(const struct packing *p, size_t i)
{
    const struct gp_pack_service *s = &p->s[i];
    double itl,
        t = gp_serve_pack_latency(s, s->replicas, mean_speed(p, i), mem_frac(p->g, s), &itl);
    return gp_serve_pack_within(s, t, itl);
}

/* A service whose replicas hold several GPUs each: not packed. */
static bool whole(const struct gp_pack_service *s)
{
    return s->gpus > 1;
}

/* Whether every service with a replica on GPU k meets its limit. */
static bool gpu_ok(const struct packing *p, uint32_t k)
{
    for (size_t i = 0; i < p->n; i++) {
        const struct gp_pack_service *s = &p->s[i];
        if (!s->feasible || whole(s))
            continue;
        bool on = false;
        for (uint32_t r = 0; r < s->replicas && !on; r++)
            on = p->gpu_of[p->first[i] + r] == k;
        if (on && !service_ok(p, i))
            return false;
    }
    return true;
}

static bool fits(const struct packing *p, const struct gp_pack_service *s, uint32_t k)
{
    const struct gp_pack_gpu *g = p->g;
    if (p->count[k] >= g->max_pods)
        return false;
    if (g->mem_mib > 0 && p->mem[k] + s->mem_mib > g->mem_mib)
        return false;
    return true;
}

/* Service i's replica r onto the first GPU that takes it, or a new one. */
static void place(struct packing *p, size_t i, uint32_t r, uint32_t *used)
{
    struct gp_pack_service *s = &p->s[i];
    size_t at = p->first[i] + r;
    for (uint32_t k = 0; k < *used; k++) {
        if (!fits(p, s, k))
            continue;
        p->gpu_of[at] = k;
        p->demand[k] += s->demand_milli;
        if (gpu_ok(p, k)) {
            p->mem[k] += s->mem_mib;
            p->count[k]++;
            return;
        }
        p->demand[k] -= s->demand_milli;
        p->gpu_of[at] = UINT32_MAX;
    }
    uint32_t k = (*used)++;
    p->gpu_of[at] = k;
    p->demand[k] = s->demand_milli;
    p->mem[k] = s->mem_mib;
    p->count[k] = 1;
}

/* The order replicas go in: compute demand, then memory, largest first. */
static bool before(const struct gp_pack_service *a, const struct gp_pack_service *b)
{
    if (a->demand_milli != b->demand_milli)
        return a->demand_milli > b->demand_milli;
    return a->mem_mib > b->mem_mib;
}

/* A MIG profile's speed for s (its compute over the demand, at most 1) and
 * its memory as a fraction of the GPU's. */
static double mig_speed(const struct gp_mig_model *m, unsigned p, const struct gp_pack_service *s)
{
    double milli = 1000.0 * m->profiles[p].compute_slices / m->compute_slices;
    double d = s->demand_milli > 1000 ? 1000 : s->demand_milli;
    return d > milli ? milli / d : 1;
}

static double mig_mem_frac(const struct gp_pack_gpu *g, unsigned p)
{
    const struct gp_mig_model *m = g->mig;
    double whole = g->mem_mib > 0 ? g->mem_mib : m->profiles[m->nprofiles - 1].memory_mib;
    double f = whole > 0 ? m->profiles[p].memory_mib / whole : 1;
    return f < 1 ? f : 1;
}

/* The profile for service s that needs the least of a GPU, and its
 * replicas; -1 when none meets the limit (or holds the replica). */
static int mig_choose(const struct gp_pack_gpu *g, const struct gp_pack_service *s, uint32_t max,
                      uint32_t *replicas, double *p99_s)
{
    const struct gp_mig_model *m = g->mig;
    int best = -1;
    double best_cost = INFINITY;
    *replicas = 0;
    *p99_s = INFINITY;
    for (unsigned p = 0; p < m->nprofiles; p++) {
        const struct gp_mig_profile *pr = &m->profiles[p];
        if (pr->media_ext || (s->mem_mib > 0 && pr->memory_mib < s->mem_mib))
            continue;
        double p99;
        uint32_t r =
            gp_serve_pack_replicas_at(s, mig_speed(m, p, s), mig_mem_frac(g, p), max, &p99);
        if (r == 0)
            continue;
        double fc = (double)pr->compute_slices / m->compute_slices;
        double fm = (double)pr->memory_slices / m->memory_slices;
        double cost = r * (fc > fm ? fc : fm);
        if (cost < best_cost - 1e-12 || (fabs(cost - best_cost) <= 1e-12 && r < *replicas)) {
            best = (int)p;
            best_cost = cost;
            *replicas = r;
            *p99_s = p99;
        }
    }
    return best;
}

/* The MIG packing: instances largest first (memory slices, then compute),
 * each on the first GPU whose layout takes it. */
static uint32_t pack_mig(const struct gp_pack_gpu *g, struct gp_pack_service *s, size_t n,
                         struct gp_pack_work *w)
{
    const struct gp_mig_model *m = g->mig;
    uint32_t used = 0;
    for (size_t k = 1; k < n; k++) /* order: the profile's size, largest first (stable) */
        for (size_t j = k; j > 0; j--) {
            const struct gp_pack_service *a = &s[w->order[j]], *b = &s[w->order[j - 1]];
            int pa = a->feasible ? a->mig_profile : -1, pb = b->feasible ? b->mig_profile : -1;
            unsigned ma = pa >= 0 ? m->profiles[pa].memory_slices : 0;
            unsigned mb = pb >= 0 ? m->profiles[pb].memory_slices : 0;
            unsigned ca = pa >= 0 ? m->profiles[pa].compute_slices : 0;
            unsigned cb = pb >= 0 ? m->profiles[pb].compute_slices : 0;
            if (!(ma > mb || (ma == mb && ca > cb)))
                break;
            uint32_t t = w->order[j];
            w->order[j] = w->order[j - 1];
            w->order[j - 1] = t;
        }
    for (size_t k = 0; k < n; k++) {
        size_t i = w->order[k];
        if (!s[i].feasible || whole(&s[i]))
            continue;
        for (uint32_t r = 0; r < s[i].replicas; r++) {
            uint32_t at = 0;
            while (at < used && gp_mig_add(m, &w->layout[at], (unsigned)s[i].mig_profile) < 0)
                at++;
            if (at == used) {
                w->layout[used++] = (struct gp_mig_layout){0};
                gp_mig_add(m, &w->layout[at], (unsigned)s[i].mig_profile);
            }
            w->gpu_of[w->first[i] + r] = at;
        }
    }
    return used;
}

uint32_t gp_serve_pack(const struct gp_pack_gpu *g, struct gp_pack_service *s, size_t n,
                       struct gp_pack_work *w, uint32_t *baseline)
{
    *baseline = 0;
    size_t total = 0;
    uint32_t alone_gpus = 0; /* the GPUs of replicas of several GPUs */
    bool mig = g->mode == GP_PACK_MIG && g->mig && w->layout;
    for (size_t i = 0; i < n; i++) {
        struct gp_pack_service *x = &s[i];
        double p99;
        x->mig_profile = -1;
        w->first[i] = total;
        w->order[i] = (uint32_t)i;
        if (whole(x)) {
            x->replicas = gp_serve_pack_replicas(x, 1, GP_PACK_MAX_REPLICAS, &p99);
            x->feasible = x->replicas > 0;
            x->p99_s = gp_serve_pack_latency(x, x->replicas, 1, 1, &x->itl_s);
            x->speed = x->feasible ? 1 : 0;
            alone_gpus += x->replicas * x->gpus;
            *baseline += x->replicas * x->gpus;
            continue;
        }
        if (g->mode == GP_PACK_MIG) {
            x->mig_profile = mig ? mig_choose(g, x, GP_PACK_MAX_REPLICAS, &x->replicas, &p99) : -1;
            if (x->mig_profile < 0)
                x->replicas = 0;
        } else {
            bool room =
                (g->mem_mib <= 0 || x->mem_mib <= g->mem_mib) &&
                (g->mode != GP_PACK_MPS || g->mps_mem_mib <= 0 || x->mem_mib <= g->mps_mem_mib);
            x->replicas = room ? gp_serve_pack_replicas_at(x, mps_speed(g, x), mem_frac(g, x),
                                                           GP_PACK_MAX_REPLICAS, &p99)
                               : 0;
        }
        if (total + x->replicas > w->cap)
            x->replicas = 0;
        x->feasible = x->replicas > 0;
        x->p99_s = x->feasible ? p99 : INFINITY;
        x->itl_s = 0;
        x->speed = 0;
        /* one replica per GPU: each at full speed, as many as it needs then */
        double alone;
        if (x->feasible)
            *baseline += gp_serve_pack_replicas(x, 1, GP_PACK_MAX_REPLICAS, &alone);
        total += x->replicas;
    }
    for (size_t k = 0; k < total; k++)
        w->gpu_of[k] = UINT32_MAX;
    if (g->mode == GP_PACK_MIG) {
        uint32_t used = mig ? pack_mig(g, s, n, w) : 0;
        for (size_t i = 0; i < n; i++)
            if (s[i].feasible && !whole(&s[i])) {
                unsigned p = (unsigned)s[i].mig_profile;
                s[i].speed = mig_speed(g->mig, p, &s[i]);
                s[i].p99_s = gp_serve_pack_latency(&s[i], s[i].replicas, s[i].speed,
                                                   mig_mem_frac(g, p), &s[i].itl_s);
            }
        return used + alone_gpus;
    }
    /* insertion sort: stable, n is small */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && before(&s[w->order[j]], &s[w->order[j - 1]]); j--) {
            uint32_t t = w->order[j];
            w->order[j] = w->order[j - 1];
            w->order[j - 1] = t;
        }
    struct packing p = {g, s, n, w->first, w->gpu_of, w->demand, w->mem, w->count};
    uint32_t used = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = w->order[k];
        for (uint32_t r = 0; r < s[i].replicas && !whole(&s[i]); r++)
            place(&p, i, r, &used);
    }
    for (size_t i = 0; i < n; i++)
        if (s[i].feasible && !whole(&s[i])) {
            s[i].speed = mean_speed(&p, i);
            s[i].p99_s = gp_serve_pack_latency(&s[i], s[i].replicas, s[i].speed, mem_frac(g, &s[i]),
                                               &s[i].itl_s);
        }
    return used + alone_gpus;
}
