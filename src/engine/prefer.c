/* prefer.c - a pod's preferences added to the policy's score, as
 * kube-scheduler adds its score plugins: each plugin's score per feasible
 * node normalised to 0..100 as that plugin does (NodeAffinity: x 100 /
 * the largest; InterPodAffinity: min-max; PodTopologySpread: 100 x (max +
 * min - s) / max), times the plugin's weight in kube-scheduler's default
 * profile (2 each), added to the policy's score. The policy stands where
 * NodeResourcesFit's scoring strategy stands in kube-scheduler (weight 1,
 * the same 0..100 scale), so a preference a pod states outweighs the
 * policy's packing as it does on a real cluster, and the policy decides
 * between the nodes the preferences rate alike. Pods without preferences
 * (and no bound pod's terms concern them) never come here: their choice
 * is the policy's alone, as before. docs/policies.md. */
#include "engine/internal.h"

#include <stdlib.h>

/* kube-scheduler's default weights (pkg/scheduler/apis/config/v1/default_plugins.go). */
#define W_NODE_AFFINITY 2
#define W_INTERPOD      2
#define W_SPREAD        2
#define MAX_NODE_SCORE  100

bool gp_eng_soft(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct topo *t = &e->topo;
    uint32_t r = px_at(e, p->id)->cons;
    if (r != NONE && t->recs.items[r].soft)
        return true;
    for (size_t i = 0; t->scoring_owners > 0 && i < t->tallies.len; i++) {
        const struct tally *y = &t->tallies.items[i];
        if ((y->kind == T_AFF_REQ || y->kind == T_AFF_PREF || y->kind == T_ANTI_PREF) &&
            y->total != 0 && gp_eng_term_matches(e, y->term, y->ns, p))
            return true;
    }
    return false;
}

/* NodeAffinity's NormalizeScore (DefaultNormalizeScore, not reversed). */
static void add_node_affinity(const struct gp_engine *e, const struct gp_pod *p,
                              const struct cand *c, size_t n, int64_t *raw, int64_t *total)
{
    int64_t max = 0;
    for (size_t k = 0; k < n; k++) {
        raw[k] = gp_eng_node_affinity_score(&e->nodes.items[c[k].node], p);
        if (raw[k] > max)
            max = raw[k];
    }
    for (size_t k = 0; max > 0 && k < n; k++)
        total[k] += W_NODE_AFFINITY * (MAX_NODE_SCORE * raw[k] / max);
}

/* InterPodAffinity's NormalizeScore: min-max, truncated. */
static void add_interpod(const struct gp_engine *e, const struct gp_pod *p, const struct cand *c,
                         size_t n, int64_t *raw, int64_t *total)
{
    bool any;
    gp_eng_interpod_scores(e, p, c, n, raw, &any);
    if (!any)
        return;
    int64_t min = INT64_MAX, max = INT64_MIN;
    for (size_t k = 0; k < n; k++) {
        if (raw[k] > max)
            max = raw[k];
        if (raw[k] < min)
            min = raw[k];
    }
    double diff = (double)max - (double)min;
    for (size_t k = 0; diff > 0 && k < n; k++)
        total[k] +=
            W_INTERPOD * (int64_t)((double)MAX_NODE_SCORE * ((double)(raw[k] - min) / diff));
}

/* PodTopologySpread's NormalizeScore: fewer matching pods score more;
 * nodes without every key score 0. */
static bool add_spread(const struct gp_engine *e, const struct gp_pod *p, const struct cand *c,
                       size_t n, int64_t *raw, bool *ignored, int64_t *total)
{
    uint32_t r = px_at(e, p->id)->cons;
    bool soft = false;
    for (size_t i = 0; r != NONE && i < e->topo.recs.items[r].c->nspread; i++)
        soft |= e->topo.recs.items[r].c->spread[i].schedule_anyway;
    if (!soft)
        return true;
    if (!gp_eng_spread_scores(e, p, c, n, raw, ignored))
        return false;
    int64_t min = INT64_MAX, max = 0;
    for (size_t k = 0; k < n; k++) {
        if (ignored[k])
            continue;
        if (raw[k] < min)
            min = raw[k];
        if (raw[k] > max)
            max = raw[k];
    }
    for (size_t k = 0; k < n; k++) {
        if (ignored[k])
            continue;
        total[k] +=
            W_SPREAD * (max == 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE * (max + min - raw[k]) / max);
    }
    return true;
}

size_t gp_eng_soft_choose(struct gp_engine *e, const struct gp_pod *p, const struct cand *c,
                          size_t n)
{
    int64_t *raw = calloc(n, sizeof *raw), *total = calloc(n, sizeof *total);
    bool *ignored = calloc(n, sizeof *ignored);
    bool ok = raw && total && ignored;
    if (ok) {
        add_node_affinity(e, p, c, n, raw, total);
        add_interpod(e, p, c, n, raw, total);
        ok = add_spread(e, p, c, n, raw, ignored, total);
    }
    /* the highest sum wins, ties to the first (the lowest node id), as the
     * scan: out of memory, the policy's score alone */
    size_t best = 0;
    double best_score = 0;
    for (size_t k = 0; k < n; k++) {
        double s = c[k].score + (ok ? (double)total[k] : 0);
        if (k == 0 || s > best_score) {
            best = k;
            best_score = s;
        }
    }
    free(raw);
    free(total);
    free(ignored);
    return best;
}
