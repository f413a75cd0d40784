/* autoscale.c - the cluster autoscaler's scale-up plan and scale-down rule
 * (autoscale.h): pending pods packed onto booting and hypothetical nodes
 * with the engine's filters, new nodes from the cheapest pool per pod,
 * gangs with a topology key inside one domain of new nodes. */
#include "engine/autoscale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE_POOL     SIZE_MAX
#define NO_DOMAIN     GP_AUTOSCALE_NO_DOMAIN
#define LABEL_DOMAIN  (UINT32_MAX - 1) /* a pool whose fixed labels give the value */
#define MAX_FIT_COUNT 256              /* copies of a pod counted on an empty node */

/* A node of the plan: booting, or new. */
struct hnode {
    struct gp_node n;
    uint32_t pool;
    uint32_t domain; /* a new node of a pool with domains; NO_DOMAIN otherwise */
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
    uint32_t **dplan; /* per pool with domains: new nodes planned in each */
};

/* One value of a gang's topology key the plan may pack it into: dom[i]
 * says how pool i gives a new node that value (a domain, LABEL_DOMAIN, or
 * NO_DOMAIN: it cannot). */
struct want {
    const char *key, *value;
    uint32_t *dom;
};

static const char *label_of(const struct gp_node_spec *n, const char *key)
{
    for (size_t i = 0; i < n->nlabels; i++)
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    return NULL;
}

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The value of label key on a node of the plan. */
static const char *hnode_value(const struct plan *pl, const struct hnode *h, const char *key)
{
    const struct gp_autoscale_pool *ap = &pl->pools[h->pool];
    if (h->domain != NO_DOMAIN && str_eq(ap->domain_key, key))
        return ap->domain_values[h->domain];
    return label_of(&h->n.spec, key);
}

static uint32_t domain_used(const struct plan *pl, size_t pool, uint32_t d)
{
    const struct gp_autoscale_pool *ap = &pl->pools[pool];
    return (ap->domain_live ? ap->domain_live[d] : 0) + pl->dplan[pool][d];
}

/* The fullest domain of a pool with room (ties: the first); NO_DOMAIN when
 * none has room. */
static uint32_t default_domain(const struct plan *pl, size_t pool)
{
    const struct gp_autoscale_pool *ap = &pl->pools[pool];
    uint32_t best = NO_DOMAIN, best_used = 0;
    for (uint32_t d = 0; d < ap->ndomains; d++) {
        uint32_t u = domain_used(pl, pool, d);
        if (u < ap->nodes_per_domain && (best == NO_DOMAIN || u > best_used)) {
            best = d;
            best_used = u;
        }
    }
    return best;
}

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

/* The cheapest pool with room for a new node that holds p (inside want's
 * value when want is not NULL); *domain gets the new node's domain. */
static size_t pick_pool(struct plan *pl, const uint32_t *planned, const struct gp_pod *p,
                        const struct want *want, uint32_t *domain)
{
    size_t best = NONE_POOL;
    uint32_t best_domain = NO_DOMAIN;
    double best_cost = INFINITY;
    bool best_priced = false;
    for (size_t i = 0; i < pl->npools; i++) {
        const struct gp_autoscale_pool *ap = &pl->pools[i];
        if (!pl->probe_ok[i] || (uint64_t)ap->live + (planned ? planned[i] : 0) >= ap->max)
            continue;
        uint32_t d = NO_DOMAIN;
        if (want) {
            d = want->dom[i];
            if (d == NO_DOMAIN)
                continue;
            if (d == LABEL_DOMAIN)
                d = NO_DOMAIN;
            else if (domain_used(pl, i, d) >= ap->nodes_per_domain)
                continue;
        } else if (ap->ndomains > 0 && pl->dplan[i] && (d = default_domain(pl, i)) == NO_DOMAIN) {
            continue;
        }
        uint32_t k = fits_empty(pl, i, p);
        if (k == 0)
            continue;
        bool priced = ap->price_per_hour_usd > 0 && isfinite(ap->price_per_hour_usd);
        double cost = priced ? ap->price_per_hour_usd / k : INFINITY;
        if (best == NONE_POOL || (priced && !best_priced) ||
            (priced == best_priced && priced && cost < best_cost)) {
            best = i;
            best_domain = d;
            best_cost = cost;
            best_priced = priced;
        }
    }
    if (domain)
        *domain = best_domain;
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
    pl->dplan = calloc(n, sizeof *pl->dplan);
    if (!pl->probe || !pl->probe_ok || !pl->fit_shape || !pl->fit_n || !pl->dplan)
        return GP_ENOMEM;
    for (size_t i = 0; i < npools; i++) {
        pl->fit_n[i] = UINT32_MAX;
        pl->probe_ok[i] =
            pools[i].spec && gp_engine_node_probe(e, pools[i].spec, &pl->probe[i]) == GP_OK;
        if (pools[i].ndomains > 0 && pools[i].domain_key && pools[i].domain_values &&
            pools[i].nodes_per_domain > 0 &&
            !(pl->dplan[i] = calloc(pools[i].ndomains, sizeof *pl->dplan[i])))
            return GP_ENOMEM;
    }
    return GP_OK;
}

static void plan_free(struct plan *pl)
{
    for (size_t i = 0; pl->dplan && i < pl->npools; i++)
        free(pl->dplan[i]);
    free(pl->dplan);
    free(pl->h);
    free(pl->probe);
    free(pl->probe_ok);
    free(pl->fit_shape);
    free(pl->fit_n);
}

static enum gp_err hnode_push(struct plan *pl, const struct gp_node *n, size_t pool,
                              uint32_t domain)
{
    if (pl->nh == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 16;
        struct hnode *h = realloc(pl->h, cap * sizeof *h);
        if (!h)
            return GP_ENOMEM;
        pl->h = h;
        pl->cap = cap;
    }
    pl->h[pl->nh].n = *n;
    pl->h[pl->nh].pool = (uint32_t)pool;
    pl->h[pl->nh].domain = domain;
    pl->nh++;
    return GP_OK;
}

/* Takes back the new nodes from index nh0 on and restores the nodes
 * before it from saved. */
static void plan_truncate(struct plan *pl, size_t nh0, const struct hnode *saved)
{
    for (size_t k = nh0; k < pl->nh; k++) {
        pl->add[pl->h[k].pool]--;
        if (pl->h[k].domain != NO_DOMAIN)
            pl->dplan[pl->h[k].pool][pl->h[k].domain]--;
    }
    pl->nh = nh0;
    if (nh0)
        memcpy(pl->h, saved, nh0 * sizeof *saved);
}

/* Places p on a node of the plan (inside want's value when not NULL),
 * opening one if needed; *ok false when no pool can take it. */
static enum gp_err place_one(struct plan *pl, const struct gp_pod *p, const struct want *want,
                             bool *ok)
{
    *ok = true;
    for (size_t k = 0; k < pl->nh; k++) {
        if (want && !str_eq(hnode_value(pl, &pl->h[k], want->key), want->value))
            continue;
        if (gp_engine_node_take(pl->e, &pl->h[k].n, p))
            return GP_OK;
    }
    uint32_t domain;
    size_t pool = pick_pool(pl, pl->add, p, want, &domain);
    if (pool == NONE_POOL) {
        *ok = false;
        return GP_OK;
    }
    enum gp_err err = hnode_push(pl, &pl->probe[pool], pool, domain);
    if (err != GP_OK)
        return err;
    pl->add[pool]++;
    if (domain != NO_DOMAIN)
        pl->dplan[pool][domain]++;
    if (!gp_engine_node_take(pl->e, &pl->h[pl->nh - 1].n, p)) { /* cannot happen: it fit */
        pl->nh--;
        pl->add[pool]--;
        if (domain != NO_DOMAIN)
            pl->dplan[pool][domain]--;
        *ok = false;
    }
    return GP_OK;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* Packs pods[order[i..j)] (one unit: a pod, or a gang's pending members)
 * inside want; *all whether every one found a place. */
static enum gp_err place_unit(struct plan *pl, const struct gp_autoscale_input *in,
                              const uint64_t *order, size_t i, size_t j, const struct want *want,
                              bool *all)
{
    *all = true;
    for (size_t k = i; k < j && *all; k++) {
        const struct gp_pod *p = gp_engine_pod(pl->e, in->pods[order[k] & 0xffffffffu]);
        enum gp_err err = place_one(pl, p, want, all);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* The candidate values of a gang's topology key (struct want), each with
 * how every pool could give a new node that value. */
struct cands {
    struct want *c;
    uint32_t *dom; /* n x npools */
    size_t n, cap;
};

static struct want *cand_get(struct cands *cs, size_t npools, const char *key, const char *value)
{
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->c[i].value, value) == 0)
            return &cs->c[i];
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 8;
        struct want *c = realloc(cs->c, cap * sizeof *c);
        if (!c)
            return NULL;
        cs->c = c;
        uint32_t *dom = realloc(cs->dom, cap * (npools ? npools : 1) * sizeof *dom);
        if (!dom)
            return NULL;
        cs->dom = dom;
        cs->cap = cap;
        for (size_t i = 0; i < cs->n; i++) /* dom moved */
            cs->c[i].dom = cs->dom + i * npools;
    }
    struct want *w = &cs->c[cs->n];
    w->key = key;
    w->value = value;
    w->dom = cs->dom + cs->n * npools;
    for (size_t i = 0; i < npools; i++)
        w->dom[i] = NO_DOMAIN;
    cs->n++;
    return w;
}

/* Lists the values a gang of key `key` could be packed into: those of the
 * plan's nodes, then each pool's partly used domains with room and its
 * first empty one, or the value its fixed labels give. */
static enum gp_err cands_list(struct plan *pl, const char *key, struct cands *cs)
{
    cs->n = 0;
    for (size_t k = 0; k < pl->nh; k++) {
        const char *v = hnode_value(pl, &pl->h[k], key);
        if (v && !cand_get(cs, pl->npools, key, v))
            return GP_ENOMEM;
    }
    for (size_t i = 0; i < pl->npools; i++) {
        const struct gp_autoscale_pool *ap = &pl->pools[i];
        if (!pl->probe_ok[i] || (uint64_t)ap->live + pl->add[i] >= ap->max)
            continue;
        if (pl->dplan[i] && str_eq(ap->domain_key, key)) {
            bool empty_seen = false;
            for (uint32_t d = 0; d < ap->ndomains; d++) {
                uint32_t u = domain_used(pl, i, d);
                if (u >= ap->nodes_per_domain || (u == 0 && empty_seen))
                    continue;
                empty_seen |= u == 0;
                struct want *w = cand_get(cs, pl->npools, key, ap->domain_values[d]);
                if (!w)
                    return GP_ENOMEM;
                w->dom[i] = d;
            }
            continue;
        }
        const char *v = label_of(&pl->probe[i].spec, key);
        if (v) {
            struct want *w = cand_get(cs, pl->npools, key, v);
            if (!w)
                return GP_ENOMEM;
            w->dom[i] = LABEL_DOMAIN;
        }
    }
    return GP_OK;
}

/* What the new nodes from index nh0 on cost: unpriced ones, then the
 * price, then how many. Lower is better. */
struct tally {
    size_t unpriced, n;
    double usd;
};

static struct tally plan_tally(const struct plan *pl, size_t nh0)
{
    struct tally t = {0, 0, 0};
    for (size_t k = nh0; k < pl->nh; k++) {
        double p = pl->pools[pl->h[k].pool].price_per_hour_usd;
        if (p > 0 && isfinite(p))
            t.usd += p;
        else
            t.unpriced++;
        t.n++;
    }
    return t;
}

static bool tally_less(const struct tally *a, const struct tally *b)
{
    if (a->unpriced != b->unpriced)
        return a->unpriced < b->unpriced;
    if (a->usd != b->usd)
        return a->usd < b->usd;
    return a->n < b->n;
}

/* A gang with a topology key: packed inside the candidate value whose new
 * nodes cost least; *all false when none holds it (the plan is then as
 * before, and the caller falls back for a preferred topology). */
static enum gp_err place_gang_topo(struct plan *pl, const struct gp_autoscale_input *in,
                                   const uint64_t *order, size_t i, size_t j, const char *key,
                                   const struct hnode *saved, struct cands *cs, bool *all)
{
    size_t nh0 = pl->nh;
    enum gp_err err = cands_list(pl, key, cs);
    size_t best = SIZE_MAX;
    struct tally best_t = {0, 0, 0};
    for (size_t c = 0; err == GP_OK && c < cs->n; c++) {
        bool ok;
        err = place_unit(pl, in, order, i, j, &cs->c[c], &ok);
        if (err == GP_OK && ok) {
            struct tally t = plan_tally(pl, nh0);
            if (best == SIZE_MAX || tally_less(&t, &best_t)) {
                best = c;
                best_t = t;
            }
        }
        plan_truncate(pl, nh0, saved);
    }
    *all = false;
    if (err == GP_OK && best != SIZE_MAX) /* again, for good: the same steps */
        err = place_unit(pl, in, order, i, j, &cs->c[best], all);
    if (err == GP_OK && !*all)
        plan_truncate(pl, nh0, saved);
    return err;
}

enum gp_err gp_autoscale_plan(struct gp_engine *e, const struct gp_autoscale_input *in,
                              uint32_t *add, struct gp_autoscale_node *nodes, size_t *nnodes,
                              size_t *placed)
{
    struct plan pl;
    uint64_t *order = NULL;
    uint32_t *first = NULL;
    struct hnode *saved = NULL;
    struct cands cs = {0};
    size_t nplaced = 0, npods = in->npods;
    const uint32_t *pods = in->pods;
    if (in->npools)
        memset(add, 0, in->npools * sizeof *add);
    if (nnodes)
        *nnodes = 0;
    enum gp_err err = plan_init(&pl, e, in->pools, in->npools, add);
    if (err != GP_OK)
        goto out;
    for (size_t i = 0; i < in->nbooting; i++) {
        struct gp_node n;
        if (in->booting_pool[i] >= in->npools) {
            err = GP_EINVALID;
            goto out;
        }
        if (in->booting[i] && gp_engine_node_probe(e, in->booting[i], &n) == GP_OK &&
            (err = hnode_push(&pl, &n, in->booting_pool[i], NO_DOMAIN)) != GP_OK)
            goto out;
    }
    size_t nboot = pl.nh;
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
        uint32_t g = p0->spec.group;
        const struct gp_autoscale_gang *gang =
            g && in->gangs && g <= in->ngangs ? &in->gangs[g - 1] : NULL;
        size_t nh0 = pl.nh;
        if (g) { /* a snapshot to roll back to */
            struct hnode *s = realloc(saved, (nh0 ? nh0 : 1) * sizeof *s);
            if (!s) {
                err = GP_ENOMEM;
                goto out;
            }
            saved = s;
            if (nh0)
                memcpy(saved, pl.h, nh0 * sizeof *saved);
        }
        bool all = false;
        if (gang && gang->topology_key) {
            err = place_gang_topo(&pl, in, order, i, j, gang->topology_key, saved, &cs, &all);
            if (err == GP_OK && !all && !gang->topology_required)
                err = place_unit(&pl, in, order, i, j, NULL, &all);
        } else {
            err = place_unit(&pl, in, order, i, j, NULL, &all);
        }
        if (err != GP_OK)
            goto out;
        if (all)
            nplaced += j - i;
        else if (g) /* nothing for a gang that does not fit whole */
            plan_truncate(&pl, nh0, saved);
        i = j;
    }
    for (size_t k = nboot; nodes && k < pl.nh; k++) {
        nodes[k - nboot].pool = pl.h[k].pool;
        nodes[k - nboot].domain = pl.h[k].domain;
    }
    if (nnodes)
        *nnodes = pl.nh - nboot;
out:
    if (placed)
        *placed = nplaced;
    if (err != GP_OK && in->npools)
        memset(add, 0, in->npools * sizeof *add);
    if (err != GP_OK && nnodes)
        *nnodes = 0;
    free(order);
    free(first);
    free(saved);
    free(cs.c);
    free(cs.dom);
    plan_free(&pl);
    return err;
}

enum gp_err gp_autoscale_up(struct gp_engine *e, const struct gp_autoscale_pool *pools,
                            size_t npools, const uint32_t *booting, size_t nbooting,
                            const uint32_t *pods, size_t npods, uint32_t *add, size_t *placed)
{
    const struct gp_node_spec **specs = malloc((nbooting ? nbooting : 1) * sizeof *specs);
    if (!specs) {
        if (npools)
            memset(add, 0, npools * sizeof *add);
        if (placed)
            *placed = 0;
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < nbooting; i++)
        specs[i] = booting[i] < npools ? pools[booting[i]].spec : NULL;
    struct gp_autoscale_input in = {.pools = pools,
                                    .npools = npools,
                                    .booting = specs,
                                    .booting_pool = booting,
                                    .nbooting = nbooting,
                                    .pods = pods,
                                    .npods = npods};
    enum gp_err err = gp_autoscale_plan(e, &in, add, NULL, NULL, placed);
    free(specs);
    return err;
}

size_t gp_autoscale_pick_pool(struct gp_engine *e, const struct gp_autoscale_pool *pools,
                              size_t npools, const uint32_t *planned, const struct gp_pod *p)
{
    struct plan pl;
    size_t best = NONE_POOL;
    if (plan_init(&pl, e, pools, npools, NULL) == GP_OK)
        best = pick_pool(&pl, planned, p, NULL, NULL);
    plan_free(&pl);
    return best;
}

bool gp_autoscale_may_remove(const struct gp_node *n, double idle_since_s, double now_s,
                             double unneeded_s, uint32_t live, uint32_t min)
{
    return n && n->state == GP_NODE_READY && n->pods == 0 && now_s - idle_since_s >= unneeded_s &&
           live > min;
}
