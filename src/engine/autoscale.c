/* autoscale.c - the cluster autoscaler's scale-up plan and scale-down rule
 * (autoscale.h): pending pods packed onto booting and hypothetical nodes
 * with the engine's filters, new nodes from the cheapest pool per pod. */
#include "engine/autoscale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE_POOL     SIZE_MAX
#define MAX_FIT_COUNT 256 /* copies of a pod counted on an empty node */

/* A node of the plan: booting, or new. */
struct hnode {
    struct gp_node n;
    uint32_t pool;
};

struct plan {
    struct gp_engine *e;
    const struct gp_autoscale_pool *pools;
    size_t npools;
    struct hnode *h;
    size_t nh, cap;
    uint32_t *add;
    struct gp_node *probe; /* an empty node per pool */
    bool *probe_ok;
    /* per pool: the last shape counted and how many fit an empty node */
    uint32_t *fit_shape, *fit_n;
};

static uint32_t fits_empty(struct plan *pl, size_t pool, const struct gp_pod *p)
{
    if (pl->fit_shape[pool] == p->shape && pl->fit_n[pool] != UINT32_MAX)
        return pl->fit_n[pool];
    struct gp_node n = pl->probe[pool];
    uint32_t k = 0;
    while (k < MAX_FIT_COUNT && gp_engine_node_take(pl->e, &n, p))
        k++;
    pl->fit_shape[pool] = p->shape;
    pl->fit_n[pool] = k;
    return k;
}

static size_t pick_pool(struct plan *pl, const uint32_t *planned, const struct gp_pod *p)
{
    size_t best = NONE_POOL;
    double best_cost = INFINITY;
    bool best_priced = false;
    for (size_t i = 0; i < pl->npools; i++) {
        const struct gp_autoscale_pool *ap = &pl->pools[i];
        if (!pl->probe_ok[i] || (uint64_t)ap->live + (planned ? planned[i] : 0) >= ap->max)
            continue;
        uint32_t k = fits_empty(pl, i, p);
        if (k == 0)
            continue;
        bool priced = ap->price_per_hour_usd > 0 && isfinite(ap->price_per_hour_usd);
        double cost = priced ? ap->price_per_hour_usd / k : INFINITY;
        if (best == NONE_POOL || (priced && !best_priced) ||
            (priced == best_priced && priced && cost < best_cost)) {
            best = i;
            best_cost = cost;
            best_priced = priced;
        }
    }
    return best;
}

static enum gp_err plan_init(struct plan *pl, struct gp_engine *e,
                             const struct gp_autoscale_pool *pools, size_t npools, uint32_t *add)
{
    memset(pl, 0, sizeof *pl);
    pl->e = e;
    pl->pools = pools;
    pl->npools = npools;
    pl->add = add;
    size_t n = npools ? npools : 1;
    pl->probe = calloc(n, sizeof *pl->probe);
    pl->probe_ok = calloc(n, sizeof *pl->probe_ok);
    pl->fit_shape = calloc(n, sizeof *pl->fit_shape);
    pl->fit_n = calloc(n, sizeof *pl->fit_n);
    if (!pl->probe || !pl->probe_ok || !pl->fit_shape || !pl->fit_n)
        return GP_ENOMEM;
    for (size_t i = 0; i < npools; i++) {
        pl->fit_n[i] = UINT32_MAX;
        pl->probe_ok[i] =
            pools[i].spec && gp_engine_node_probe(e, pools[i].spec, &pl->probe[i]) == GP_OK;
    }
    return GP_OK;
}

static void plan_free(struct plan *pl)
{
    free(pl->h);
    free(pl->probe);
    free(pl->probe_ok);
    free(pl->fit_shape);
    free(pl->fit_n);
}

static enum gp_err hnode_push(struct plan *pl, size_t pool)
{
    if (pl->nh == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 16;
        struct hnode *h = realloc(pl->h, cap * sizeof *h);
        if (!h)
            return GP_ENOMEM;
        pl->h = h;
        pl->cap = cap;
    }
    pl->h[pl->nh].n = pl->probe[pool];
    pl->h[pl->nh].pool = (uint32_t)pool;
    pl->nh++;
    return GP_OK;
}

/* Places p on a node of the plan, opening one if needed; false when no
 * pool can take it. */
static enum gp_err place_one(struct plan *pl, const struct gp_pod *p, bool *ok)
{
    *ok = true;
    for (size_t k = 0; k < pl->nh; k++)
        if (gp_engine_node_take(pl->e, &pl->h[k].n, p))
            return GP_OK;
    size_t pool = pick_pool(pl, pl->add, p);
    if (pool == NONE_POOL) {
        *ok = false;
        return GP_OK;
    }
    enum gp_err err = hnode_push(pl, pool);
    if (err != GP_OK)
        return err;
    pl->add[pool]++;
    if (!gp_engine_node_take(pl->e, &pl->h[pl->nh - 1].n, p)) { /* cannot happen: it fit */
        pl->nh--;
        pl->add[pool]--;
        *ok = false;
    }
    return GP_OK;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

enum gp_err gp_autoscale_up(struct gp_engine *e, const struct gp_autoscale_pool *pools,
                            size_t npools, const uint32_t *booting, size_t nbooting,
                            const uint32_t *pods, size_t npods, uint32_t *add, size_t *placed)
{
    struct plan pl;
    uint64_t *order = NULL;
    uint32_t *first = NULL;
    struct hnode *saved = NULL;
    size_t nplaced = 0;
    if (npools)
        memset(add, 0, npools * sizeof *add);
    enum gp_err err = plan_init(&pl, e, pools, npools, add);
    if (err != GP_OK)
        goto out;
    for (size_t i = 0; i < nbooting; i++) {
        if (booting[i] >= npools) {
            err = GP_EINVALID;
            goto out;
        }
        if (pl.probe_ok[booting[i]] && (err = hnode_push(&pl, booting[i])) != GP_OK)
            goto out;
    }
    /* gang members together, at the place of the gang's first member:
     * sort keys (position of the unit's first pod << 32 | position) */
    uint32_t maxg = 0;
    for (size_t i = 0; i < npods; i++) {
        const struct gp_pod *p = gp_engine_pod(e, pods[i]);
        if (p && p->spec.group > maxg)
            maxg = p->spec.group;
    }
    order = malloc((npods ? npods : 1) * sizeof *order);
    first = malloc(((size_t)maxg + 1) * sizeof *first);
    if (!order || !first) {
        err = GP_ENOMEM;
        goto out;
    }
    memset(first, 0xff, ((size_t)maxg + 1) * sizeof *first);
    size_t n = 0;
    for (size_t i = 0; i < npods && i < UINT32_MAX; i++) {
        const struct gp_pod *p = gp_engine_pod(e, pods[i]);
        if (!p || p->state != GP_POD_PENDING)
            continue;
        uint32_t unit = (uint32_t)i;
        if (p->spec.group) {
            if (first[p->spec.group] == UINT32_MAX)
                first[p->spec.group] = (uint32_t)i;
            unit = first[p->spec.group];
        }
        order[n++] = (uint64_t)unit << 32 | (uint64_t)i;
    }
    qsort(order, n, sizeof *order, cmp_u64);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && order[j] >> 32 == order[i] >> 32)
            j++;
        const struct gp_pod *p0 = gp_engine_pod(e, pods[order[i] & 0xffffffffu]);
        bool gang = p0->spec.group != 0;
        size_t nh0 = pl.nh;
        if (gang) { /* a snapshot to roll back to */
            struct hnode *s = realloc(saved, (nh0 ? nh0 : 1) * sizeof *s);
            if (!s) {
                err = GP_ENOMEM;
                goto out;
            }
            saved = s;
            if (nh0)
                memcpy(saved, pl.h, nh0 * sizeof *saved);
        }
        bool all = true;
        for (size_t k = i; k < j && all; k++) {
            const struct gp_pod *p = gp_engine_pod(e, pods[order[k] & 0xffffffffu]);
            if ((err = place_one(&pl, p, &all)) != GP_OK)
                goto out;
        }
        if (all) {
            nplaced += j - i;
        } else if (gang) { /* nothing for a gang that does not fit whole */
            for (size_t k = nh0; k < pl.nh; k++)
                add[pl.h[k].pool]--;
            pl.nh = nh0;
            if (nh0)
                memcpy(pl.h, saved, nh0 * sizeof *saved);
        }
        i = j;
    }
out:
    if (placed)
        *placed = nplaced;
    if (err != GP_OK && npools)
        memset(add, 0, npools * sizeof *add);
    free(order);
    free(first);
    free(saved);
    plan_free(&pl);
    return err;
}

size_t gp_autoscale_pick_pool(struct gp_engine *e, const struct gp_autoscale_pool *pools,
                              size_t npools, const uint32_t *planned, const struct gp_pod *p)
{
    struct plan pl;
    size_t best = NONE_POOL;
    if (plan_init(&pl, e, pools, npools, NULL) == GP_OK)
        best = pick_pool(&pl, planned, p);
    plan_free(&pl);
    return best;
}

bool gp_autoscale_may_remove(const struct gp_node *n, double idle_since_s, double now_s,
                             double unneeded_s, uint32_t live, uint32_t min)
{
    return n && n->state == GP_NODE_READY && n->pods == 0 && now_s - idle_since_s >= unneeded_s &&
           live > min;
}
