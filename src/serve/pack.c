/* pack.c - dense packing of small models within their latency limits (see
 * pack.h): replicas by first fit onto time-sliced or MPS GPUs, each
 * placement kept only when every service on that GPU still meets its p99. */
#include <math.h>

#include "serve/erlang.h"
#include "serve/pack.h"

#define P99 0.99

/* The p99 of c replicas of mean speed v at the service's peak; INFINITY
 * when they cannot keep up. */
static double p99_at(const struct gp_pack_service *s, uint32_t c, double v)
{
    double mu = s->rps_alone * v;
    if (c == 0 || !(mu > 0))
        return INFINITY;
    if (s->peak_rps <= 0)
        return -log(1 - P99) / mu; /* no queue: a request's own service */
    if (s->peak_rps >= c * mu)
        return INFINITY;
    return gp_serve_mmc_quantile_s(c, s->peak_rps, mu, P99);
}

uint32_t gp_serve_pack_replicas(const struct gp_pack_service *s, double v, uint32_t max,
                                double *p99_s)
{
    *p99_s = INFINITY;
    /* no replica count beats a request's own service time */
    if (!(s->rps_alone * v > 0) || -log(1 - P99) / (s->rps_alone * v) > s->limit_s)
        return 0;
    /* more replicas never raise the p99: the first within the limit */
    for (uint32_t c = 1; c <= max; c++) {
        double p = p99_at(s, c, v);
        if (p <= s->limit_s) {
            *p99_s = p;
            return c;
        }
    }
    return 0;
}

static double mps_speed(const struct gp_pack_gpu *g, const struct gp_pack_service *s)
{
    if (g->mode != GP_PACK_MPS || !(g->mps_thread_milli > 0))
        return 1;
    double d = s->demand_milli > 1000 ? 1000 : s->demand_milli;
    return d > g->mps_thread_milli ? g->mps_thread_milli / d : 1;
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

/* Whether every service with a replica on GPU k meets its limit. */
static bool gpu_ok(const struct packing *p, uint32_t k)
{
    for (size_t i = 0; i < p->n; i++) {
        const struct gp_pack_service *s = &p->s[i];
        if (!s->feasible)
            continue;
        bool on = false;
        for (uint32_t r = 0; r < s->replicas && !on; r++)
            on = p->gpu_of[p->first[i] + r] == k;
        if (on && !(p99_at(s, s->replicas, mean_speed(p, i)) <= s->limit_s))
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

uint32_t gp_serve_pack(const struct gp_pack_gpu *g, struct gp_pack_service *s, size_t n,
                       struct gp_pack_work *w, uint32_t *baseline)
{
    *baseline = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct gp_pack_service *x = &s[i];
        double p99;
        bool room = (g->mem_mib <= 0 || x->mem_mib <= g->mem_mib) &&
                    (g->mode != GP_PACK_MPS || g->mps_mem_mib <= 0 || x->mem_mib <= g->mps_mem_mib);
        x->replicas =
            room ? gp_serve_pack_replicas(x, mps_speed(g, x), GP_PACK_MAX_REPLICAS, &p99) : 0;
        if (total + x->replicas > w->cap)
            x->replicas = 0;
        x->feasible = x->replicas > 0;
        x->p99_s = x->feasible ? p99 : INFINITY;
        x->speed = 0;
        /* one replica per GPU: each at full speed, as many as it needs then */
        double alone;
        if (x->feasible)
            *baseline += gp_serve_pack_replicas(x, 1, GP_PACK_MAX_REPLICAS, &alone);
        w->first[i] = total;
        w->order[i] = (uint32_t)i;
        total += x->replicas;
    }
    for (size_t k = 0; k < total; k++)
        w->gpu_of[k] = UINT32_MAX;
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
        for (uint32_t r = 0; r < s[i].replicas; r++)
            place(&p, i, r, &used);
    }
    for (size_t i = 0; i < n; i++)
        if (s[i].feasible) {
            s[i].speed = mean_speed(&p, i);
            s[i].p99_s = p99_at(&s[i], s[i].replicas, s[i].speed);
        }
    return used;
}
