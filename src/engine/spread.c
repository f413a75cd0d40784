/* spread.c - kube-scheduler's PodTopologySpread plugin over the tallies of
 * topo.c (pkg/scheduler/framework/plugins/podtopologyspread: filtering.go,
 * scoring.go, common.go; read and re-derived; docs/affinity.md).
 *
 * A constraint counts, per domain of its topology key, the pods of the
 * pod's namespace its selector matches (an empty selector counts none),
 * on the eligible nodes: those that have every key of the pod's
 * constraints of that kind, match the pod's node selector and required
 * affinity (nodeAffinityPolicy Honor, the default) and, with
 * nodeTaintsPolicy Honor, carry no taint the pod does not tolerate (a
 * draining node is cordoned: node.kubernetes.io/unschedulable).
 *
 * DoNotSchedule filters: a node without the key is rejected; else the
 * matching pods of its domain, plus one if the pod matches its own
 * selector, less the smallest count over the eligible domains (0 when
 * there are fewer than minDomains), may not exceed maxSkew.
 *
 * ScheduleAnyway scores: over the feasible nodes that have every key,
 * round(sum of count x log(domains + 2) + maxSkew - 1), the count of the
 * node's domain (for kubernetes.io/hostname the node's own pods);
 * prefer.c turns it into 100 x (max + min - score) / max. */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOSTNAME_KEY "kubernetes.io/hostname"

static const struct gp_taint cordon = {"node.kubernetes.io/unschedulable", NULL,
                                       GP_EFFECT_NO_SCHEDULE};

/* Whether node n counts for constraint c of pod p (matchNodeInclusionPolicies). */
static bool included(const struct gp_node *n, const struct gp_pod *p, const struct gp_spread *c)
{
    if (!c->ignore_affinity && !gp_eng_node_inclusion(n, p))
        return false;
    if (c->honor_taints) {
        if (n->spec.ntaints && !gp_eng_taints_tolerated(n, p))
            return false;
        if (n->state == GP_NODE_DRAINING && !gp_eng_tolerates(p, &cordon))
            return false;
    }
    return true;
}

/* Whether node n has the keys of every constraint of p of one kind. */
static bool has_keys(const struct gp_engine *e, const struct cons_rec *r, const struct gp_node *n,
                     bool anyway)
{
    const struct gp_pod_constraints *c = r->c;
    for (size_t i = 0; i < c->nspread; i++)
        if (c->spread[i].schedule_anyway == anyway &&
            gp_eng_topo_dom(e, e->topo.tallies.items[r->spread[i]].key, n) == NONE)
            return false;
    return true;
}

/* Whether the tallies alone give the counts of p's constraints of one
 * kind: every node counts (no inclusion policy excludes one) and every
 * node not gone has every key (or there is one constraint). */
static bool tallies_suffice(const struct gp_engine *e, const struct cons_rec *r,
                            const struct gp_pod *p, bool anyway)
{
    const struct gp_pod_constraints *c = r->c;
    bool affinity = p->spec.nnode_selector || c->nnode_required;
    size_t n = 0;
    uint32_t live = e->totals.nodes_ready; /* ready or draining: not gone */
    bool all_keys = true;
    for (size_t i = 0; i < c->nspread; i++) {
        const struct gp_spread *s = &c->spread[i];
        if (s->schedule_anyway != anyway)
            continue;
        n++;
        if (s->honor_taints || (affinity && !s->ignore_affinity))
            return false;
        all_keys &= e->topo.keys.items[e->topo.tallies.items[r->spread[i]].key].with == live;
    }
    return n <= 1 || all_keys;
}

/* Counts per domain of constraint i from the eligible nodes, into
 * scratch from `at` (one slot per domain of its key); `present` marks
 * the domains with an eligible node (NULL: not wanted). */
static void count_eligible(const struct gp_engine *e, const struct cons_rec *r,
                           const struct gp_pod *p, size_t i, int64_t *out, uint8_t *present)
{
    const struct gp_spread *s = &r->c->spread[i];
    const struct tally *pn = &e->topo.tallies.items[r->spread_node[i]];
    uint32_t key = e->topo.tallies.items[r->spread[i]].key;
    for (size_t k = 0; k < e->nodes.len; k++) {
        const struct gp_node *n = &e->nodes.items[k];
        if (n->state == GP_NODE_GONE || !has_keys(e, r, n, s->schedule_anyway) ||
            !included(n, p, s))
            continue;
        uint32_t d = gp_eng_topo_dom(e, key, n);
        out[d] += k < pn->count.len ? pn->count.items[k] : 0;
        if (present)
            present[d] = 1;
    }
}

bool gp_eng_spread_prefilter(const struct gp_engine *e, struct topo_pre *pre,
                             const struct gp_pod *p)
{
    pre->nsc = 0;
    pre->scratch.len = 0;
    uint32_t ri = px_at(e, p->id)->cons;
    if (ri == NONE)
        return true;
    const struct cons_rec *r = &e->topo.recs.items[ri];
    const struct gp_pod_constraints *c = r->c;
    if (c->nspread > pre->sc_cap) {
        struct pre_spread *sc = realloc(pre->sc, c->nspread * sizeof *sc);
        if (!sc)
            return false;
        pre->sc = sc;
        pre->sc_cap = c->nspread;
    }
    bool fast = tallies_suffice(e, r, p, false);
    for (size_t i = 0; i < c->nspread; i++) {
        const struct gp_spread *s = &c->spread[i];
        if (s->schedule_anyway)
            continue;
        const struct tally *y = &e->topo.tallies.items[r->spread[i]];
        const struct topo_key *k = &e->topo.keys.items[y->key];
        struct pre_spread *ps = &pre->sc[pre->nsc++];
        ps->key = y->key;
        ps->max_skew = s->max_skew;
        ps->self = gp_eng_selector_matches_labels(&s->selector, p->spec.labels, p->spec.nlabels);
        ps->ncount = k->values.len;
        ps->scratch_at = SIZE_MAX;
        ps->count = y->count.items;
        int64_t min = INT32_MAX; /* kube-scheduler's criticalPaths start at MaxInt32 */
        uint32_t domains = 0;
        if (fast) {
            for (size_t d = 0; d < k->values.len; d++)
                if (k->live.items[d] > 0) {
                    domains++;
                    if (y->count.items[d] < min)
                        min = y->count.items[d];
                }
        } else {
            size_t at = pre->scratch.len, nd = k->values.len;
            /* counts, then one presence byte per domain packed in int64s */
            if (GP_VEC_RESERVE(&pre->scratch, at + 2 * nd + 1) != 0)
                return false;
            memset(pre->scratch.items + at, 0, 2 * nd * sizeof *pre->scratch.items);
            pre->scratch.len = at + 2 * nd;
            int64_t *cnt = pre->scratch.items + at;
            uint8_t *present = (uint8_t *)(cnt + nd);
            count_eligible(e, r, p, i, cnt, present);
            for (size_t d = 0; d < nd; d++)
                if (present[d]) {
                    domains++;
                    if (cnt[d] < min)
                        min = cnt[d];
                }
            ps->scratch_at = at;
        }
        int32_t min_domains = s->min_domains > 0 ? s->min_domains : 1;
        ps->min = (int64_t)domains < min_domains ? 0 : min;
    }
    for (size_t k = 0; k < pre->nsc; k++) /* the scratch is where it stays now */
        if (pre->sc[k].scratch_at != SIZE_MAX)
            pre->sc[k].count = pre->scratch.items + pre->sc[k].scratch_at;
    return true;
}

enum gp_filter gp_eng_spread_filter(const struct gp_engine *e, const struct topo_pre *pre,
                                    const struct gp_node *n, const struct gp_pod *p)
{
    (void)p;
    for (size_t k = 0; k < pre->nsc; k++) {
        const struct pre_spread *ps = &pre->sc[k];
        uint32_t d = gp_eng_topo_dom(e, ps->key, n);
        if (d == NONE) /* ErrReasonNodeLabelNotMatch: the same words, and more */
            return GP_FILTER_SPREAD;
        int64_t cnt = d < ps->ncount ? ps->count[d] : 0;
        if (cnt + (ps->self ? 1 : 0) - ps->min > ps->max_skew)
            return GP_FILTER_SPREAD;
    }
    return GP_FILTER_COUNT;
}

bool gp_eng_spread_scores(const struct gp_engine *e, const struct gp_pod *p,
                          const struct cand *cand, size_t n, int64_t *raw, bool *ignored)
{
    uint32_t ri = px_at(e, p->id)->cons;
    const struct cons_rec *r = ri != NONE ? &e->topo.recs.items[ri] : NULL;
    for (size_t k = 0; k < n; k++) {
        raw[k] = 0;
        ignored[k] = r && !has_keys(e, r, &e->nodes.items[cand[k].node], true);
    }
    if (!r)
        return true;
    const struct gp_pod_constraints *c = r->c;
    bool fast = tallies_suffice(e, r, p, true);
    double *score = NULL;
    GP_VEC(int64_t) cnt = {0};
    GP_VEC(uint8_t) seen = {0};
    bool ok = true;
    score = calloc(n ? n : 1, sizeof *score);
    if (!score)
        return false;
    for (size_t i = 0; i < c->nspread && ok; i++) {
        const struct gp_spread *s = &c->spread[i];
        if (!s->schedule_anyway)
            continue;
        const struct tally *y = &e->topo.tallies.items[r->spread[i]];
        const struct tally *pn = &e->topo.tallies.items[r->spread_node[i]];
        const struct topo_key *k = &e->topo.keys.items[y->key];
        bool hostname = !k->per_node && strcmp(k->key, HOSTNAME_KEY) == 0;
        size_t nd = k->values.len;
        /* the domains of the scored nodes, and how many */
        if (GP_VEC_RESERVE(&seen, nd + 1) != 0 || GP_VEC_RESERVE(&cnt, nd + 1) != 0) {
            ok = false;
            break;
        }
        memset(seen.items, 0, nd + 1);
        memset(cnt.items, 0, (nd + 1) * sizeof *cnt.items);
        size_t size = 0;
        for (size_t q = 0; q < n; q++) {
            if (ignored[q])
                continue;
            uint32_t d = gp_eng_topo_dom(e, y->key, &e->nodes.items[cand[q].node]);
            if (hostname) {
                size++;
            } else if (d < nd && !seen.items[d]) {
                seen.items[d] = 1;
                size++;
            }
        }
        if (!hostname && !fast)
            count_eligible(e, r, p, i, cnt.items, NULL);
        double weight = log((double)size + 2);
        for (size_t q = 0; q < n; q++) {
            if (ignored[q])
                continue;
            const struct gp_node *node = &e->nodes.items[cand[q].node];
            uint32_t d = gp_eng_topo_dom(e, y->key, node);
            int64_t m;
            if (hostname)
                m = node->id < pn->count.len ? pn->count.items[node->id] : 0;
            else if (fast)
                m = d < y->count.len ? y->count.items[d] : 0;
            else
                m = d < nd ? cnt.items[d] : 0;
            score[q] += (double)m * weight + (double)(s->max_skew - 1);
        }
    }
    for (size_t q = 0; q < n; q++)
        raw[q] = (int64_t)llround(score[q]);
    free(score);
    GP_VEC_FREE(&cnt);
    GP_VEC_FREE(&seen);
    return ok;
}
