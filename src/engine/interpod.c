/* interpod.c - kube-scheduler's InterPodAffinity plugin over the tallies
 * of topo.c (pkg/scheduler/framework/plugins/interpodaffinity, read and
 * re-derived; docs/affinity.md).
 *
 * Filter, in the plugin's order: the pod's required affinity (every term's
 * topology key on the node, and in the node's domain of each a pod that
 * matches all the terms - unless no such pod exists anywhere and the pod
 * matches its own terms, the first of a group that wants to be together),
 * its required anti-affinity (no pod its term matches in the node's
 * domain), and the existing pods' required anti-affinity (no bound pod
 * whose term matches this pod in the node's domain of that term: the rule
 * is symmetric).
 *
 * Score: per node, the weights of the pod's preferred terms times the
 * matching pods in the node's domain (anti-affinity subtracts), plus the
 * bound pods' own terms that match this pod (a required affinity term 1,
 * hardPodAffinityWeight; a preferred one its weight, anti-affinity
 * negative); prefer.c normalises it (min-max to 0..100). */
#include "engine/internal.h"

static int64_t at(const struct gp_engine *e, uint32_t t, const struct gp_node *n, bool *has_key)
{
    const struct tally *y = &e->topo.tallies.items[t];
    uint32_t d = gp_eng_topo_dom(e, y->key, n);
    *has_key = d != NONE;
    return d < y->count.len ? y->count.items[d] : 0;
}

/* Whether any bound owner's required anti-affinity term matches p: the
 * same test as the prefilter's ex_anti, kept per shape (its pods have one
 * namespace and one set of labels) until e->topo.anti_gen moves, so that
 * a pod no such term concerns is placed from the node index even while
 * anti-affinity pods are bound elsewhere (its filters do not read them). */
bool gp_eng_interpod_hit(const struct gp_engine *ce, const struct gp_pod *p)
{
    /* a cache of the engine's state through a const view, as the
     * prefilter's (the engine is single-threaded) */
    struct gp_engine *e = (struct gp_engine *)(uintptr_t)ce;
    const struct topo *t = &e->topo;
    struct shape *s = p->shape < e->shapes.len ? &e->shapes.items[p->shape] : NULL;
    if (s && s->anti_seen == t->anti_gen + 1)
        return s->anti_hit;
    bool hit = false;
    for (size_t i = 0; !hit && i < t->tallies.len; i++) {
        const struct tally *y = &t->tallies.items[i];
        hit = y->kind == T_ANTI_REQ && y->total > 0 && gp_eng_term_matches(e, y->term, y->ns, p);
    }
    if (s) {
        s->anti_seen = t->anti_gen + 1;
        s->anti_hit = hit;
    }
    return hit;
}

bool gp_eng_interpod_excl_only(const struct gp_engine *e, const struct gp_pod *p)
{
    uint32_t r = px_at(e, p->id)->cons;
    /* neither required affinity nor DoNotSchedule spreading (grows): what
     * is left of the topology filters is required anti-affinity */
    return r == NONE || !e->topo.recs.items[r].grows;
}

bool gp_eng_interpod_prefilter(const struct gp_engine *e, struct topo_pre *pre,
                               const struct gp_pod *p)
{
    const struct topo *t = &e->topo;
    pre->ex_anti.len = 0;
    for (size_t i = 0; t->anti_owners > 0 && i < t->tallies.len; i++) {
        const struct tally *y = &t->tallies.items[i];
        if (y->kind == T_ANTI_REQ && y->total > 0 && gp_eng_term_matches(e, y->term, y->ns, p) &&
            GP_VEC_PUSH(&pre->ex_anti, (uint32_t)i) != 0)
            return false;
    }
    pre->aff_none = true;
    pre->aff_self = false;
    uint32_t r = px_at(e, p->id)->cons;
    if (r == NONE)
        return true;
    const struct cons_rec *c = &t->recs.items[r];
    for (size_t i = 0; i < c->c->naffinity; i++)
        pre->aff_none &= t->tallies.items[c->aff[i]].total == 0;
    if (c->aff_all != NONE)
        pre->aff_self = gp_eng_matcher_matches(e, &t->matchers.items[c->aff_all], p);
    return true;
}

enum gp_filter gp_eng_interpod_filter(const struct gp_engine *e, const struct topo_pre *pre,
                                      const struct gp_node *n, const struct gp_pod *p)
{
    uint32_t r = px_at(e, p->id)->cons;
    const struct cons_rec *c = r != NONE ? &e->topo.recs.items[r] : NULL;
    bool has;
    if (c && c->c->naffinity) {
        bool exist = true;
        for (size_t i = 0; i < c->c->naffinity; i++) {
            int64_t k = at(e, c->aff[i], n, &has);
            if (!has)
                return GP_FILTER_POD_AFFINITY; /* every topology key must be on the node */
            exist &= k > 0;
        }
        if (!exist && !(pre->aff_none && pre->aff_self))
            return GP_FILTER_POD_AFFINITY;
    }
    for (size_t i = 0; c && i < c->c->nanti; i++)
        if (at(e, c->anti[i], n, &has) > 0)
            return GP_FILTER_POD_ANTI_AFFINITY;
    for (size_t i = 0; i < pre->ex_anti.len; i++)
        if (at(e, pre->ex_anti.items[i], n, &has) > 0)
            return GP_FILTER_EXISTING_ANTI_AFFINITY;
    return GP_FILTER_COUNT;
}

void gp_eng_interpod_scores(const struct gp_engine *e, const struct gp_pod *p,
                            const struct cand *cand, size_t n, int64_t *raw, bool *any)
{
    const struct topo *t = &e->topo;
    uint32_t r = px_at(e, p->id)->cons;
    const struct cons_rec *c = r != NONE ? &t->recs.items[r] : NULL;
    bool has;
    *any = false;
    for (size_t k = 0; k < n; k++)
        raw[k] = 0;
    for (size_t i = 0; c && i < c->c->naffinity_preferred; i++) {
        int64_t w = c->c->affinity_preferred[i].weight;
        *any |= t->tallies.items[c->aff_pref[i]].total > 0;
        for (size_t k = 0; k < n; k++)
            raw[k] += w * at(e, c->aff_pref[i], &e->nodes.items[cand[k].node], &has);
    }
    for (size_t i = 0; c && i < c->c->nanti_preferred; i++) {
        int64_t w = c->c->anti_preferred[i].weight;
        *any |= t->tallies.items[c->anti_pref[i]].total > 0;
        for (size_t k = 0; k < n; k++)
            raw[k] -= w * at(e, c->anti_pref[i], &e->nodes.items[cand[k].node], &has);
    }
    for (size_t i = 0; t->scoring_owners > 0 && i < t->tallies.len; i++) {
        const struct tally *y = &t->tallies.items[i];
        if ((y->kind != T_AFF_REQ && y->kind != T_AFF_PREF && y->kind != T_ANTI_PREF) ||
            y->total == 0 || !gp_eng_term_matches(e, y->term, y->ns, p))
            continue;
        *any = true;
        for (size_t k = 0; k < n; k++)
            raw[k] += at(e, (uint32_t)i, &e->nodes.items[cand[k].node], &has);
    }
}
