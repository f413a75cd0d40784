/* place.c - one pod's placement: filter the nodes that may hold it (the
 * capacity index's candidates, in node order; every node when it cannot
 * say), score the feasible ones with the policy, pick the GPUs (the
 * policy's pick, checked, or the default one) and commit the best; when
 * none fits, count every node's rejection for the explanation. One node's
 * evaluation as the scan
 * makes it (gp_eng_node_eval), which the node index (index.c) and, during
 * a gang attempt with a node-local policy, the memo - a tournament tree
 * over every node's score - use to make the same choice as the scan
 * without it. */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gp_engine_pick_default(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick)
{
    uint32_t want = p->spec.gpu_count, milli = p->spec.gpu_milli, mem = p->spec.gpu_mem_mib;
    pick->ngpus = 0;
    if (want == 0)
        return 0;
    if (n->spec.sharing)
        return gp_share_pick(n, p, pick);
    if (milli == GP_GPU_MILLI) {
        /* a GPU with nothing on it has all its memory: the summary and the
         * node's GPU memory answer first */
        if (n->gpus_whole_free < want || mem > n->spec.gpu_mem_mib)
            return -1;
        return gp_share_pick_whole(n, want, pick); /* NVLink domains too */
    }
    int best = -1;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        const struct gp_gpu *gpu = &n->gpu[g];
        if (gpu->milli_free < milli || gpu->mem_free_mib < mem)
            continue;
        if (best < 0 || gpu->milli_free < n->gpu[best].milli_free)
            best = (int)g;
    }
    if (best < 0)
        return -1;
    pick->ngpus = 1;
    pick->gpu[0] = (uint8_t)best;
    return 0;
}

/* A policy's pick must name distinct GPUs of the node that can hold the pod. */
static bool pick_valid(const struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    if (pick->ngpus != p->spec.gpu_count || (n->spec.sharing && p->spec.gpu_count > 0))
        return false; /* on a shared GPU the engine chooses (share.c) */
    uint32_t seen = 0;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t g = pick->gpu[i];
        if (g >= n->spec.gpu_count || (seen >> g & 1))
            return false;
        seen |= 1u << g;
        if (n->gpu[g].milli_free < p->spec.gpu_milli ||
            n->gpu[g].mem_free_mib < p->spec.gpu_mem_mib)
            return false;
        if (p->spec.gpu_milli == GP_GPU_MILLI && n->gpu[g].pods > 0)
            return false; /* a whole GPU must be empty, memory-only shares too */
    }
    return true;
}

/* Room in the memo for nn nodes. 0, or -1 when out of memory. */
int gp_eng_memo_reserve(struct gang_memo *m, size_t nn)
{
    if (m->cap >= nn)
        return 0;
    size_t leaves = 1;
    while (leaves < nn)
        leaves *= 2;
    if (leaves > SIZE_MAX / (2 * sizeof *m->tree))
        return -1;
    double *score = realloc(m->score, nn * sizeof *score);
    if (score)
        m->score = score;
    struct gp_pick *pick = realloc(m->pick, nn * sizeof *pick);
    if (pick)
        m->pick = pick;
    uint32_t *tree = realloc(m->tree, 2 * leaves * sizeof *tree);
    if (tree)
        m->tree = tree;
    if (!score || !pick || !tree)
        return -1;
    m->cap = nn;
    m->leaves = leaves;
    return 0;
}

/* The winner of two subtrees, a's nodes before b's: the higher score, a
 * on ties, as gp_eng_place()'s scan in node order. */
static inline uint32_t memo_win(const struct gang_memo *m, uint32_t a, uint32_t b)
{
    if (a == NONE)
        return b;
    if (b == NONE)
        return a;
    return m->score[b] > m->score[a] ? b : a;
}

/* Sets node i's leaf (i, or NONE when it is no candidate) and the winners
 * above it. */
static void memo_set(struct gang_memo *m, uint32_t i, uint32_t leaf)
{
    size_t k = m->leaves + i;
    m->tree[k] = leaf;
    for (k /= 2; k >= 1; k /= 2)
        m->tree[k] = memo_win(m, m->tree[2 * k], m->tree[2 * k + 1]);
}

bool gp_eng_node_eval(struct gp_engine *e, struct gp_node *n, const struct gp_pod *p,
                      enum gp_filter *f, double *score, struct gp_pick *pick)
{
    *f = filter_own(e, n, p); /* the memo is off when other pods' counts matter */
    if (*f != GP_FILTER_COUNT)
        return false;
    memset(pick, 0, sizeof *pick);
    if (!e->policy) { /* the first node that passes, with the default pick */
        *score = 0;
        gp_engine_pick_default(n, p, pick);
        return true;
    }
    *score = e->policy->score(e->policy_state, e, n, p, pick);
    return pick_valid(n, p, pick) || gp_engine_pick_default(n, p, pick) == 0;
}

/* Brings the memo up to date for pod p: rescores the node the last member
 * went to. False when a score is not a number (the tree could not order
 * it as the scan does): the memo is then off for this attempt. */
static bool memo_update(struct gp_engine *e, const struct gp_pod *p)
{
    struct gang_memo *m = &e->memo;
    uint32_t i = m->dirty;
    if (i == NONE)
        return true;
    m->dirty = NONE;
    enum gp_filter f;
    double score;
    struct gp_pick pick;
    uint32_t leaf = NONE;
    if (gp_eng_node_eval(e, &e->nodes.items[i], p, &f, &score, &pick)) {
        if (isnan(score)) {
            m->shape = NONE;
            return false;
        }
        m->score[i] = score;
        m->pick[i] = pick;
        leaf = i;
    } else if (f != GP_FILTER_COUNT) {
        m->rejected[f]++;
        e->gang_rej[i] = (uint8_t)(f + 1);
    }
    memo_set(m, i, leaf);
    return true;
}

/* Fills the memo for pod p from a scan of every node, and chooses as
 * gp_eng_place() does. Returns the best node (NULL: none) with its pick. */
static struct gp_node *memo_fill(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                                 struct gp_pick *best_pick)
{
    struct gang_memo *m = &e->memo;
    uint8_t *rej = e->gang_rej;
    bool nan = false;
    e->index.visits += e->nodes.len;
    for (size_t i = 0; i < e->nodes.len; i++) {
        m->tree[m->leaves + i] = NONE;
        if (rej[i]) { /* it rejected an earlier member alike */
            d->explain.rejected[rej[i] - 1]++;
            continue;
        }
        enum gp_filter f;
        double score;
        struct gp_pick pick;
        if (gp_eng_node_eval(e, &e->nodes.items[i], p, &f, &score, &pick)) {
            nan |= isnan(score);
            m->score[i] = score;
            m->pick[i] = pick;
            m->tree[m->leaves + i] = (uint32_t)i;
        } else if (f != GP_FILTER_COUNT) {
            d->explain.rejected[f]++;
            rej[i] = (uint8_t)(f + 1);
        }
    }
    for (size_t i = e->nodes.len; i < m->leaves; i++)
        m->tree[m->leaves + i] = NONE;
    struct gp_node *best = NULL;
    if (nan) { /* as the scan: the first candidate, then any strictly better */
        double best_score = 0;
        for (size_t i = 0; i < e->nodes.len; i++) {
            if (m->tree[m->leaves + i] == NONE || (best && !(m->score[i] > best_score)))
                continue;
            best = &e->nodes.items[i];
            best_score = m->score[i];
        }
        m->shape = NONE; /* the tree cannot order such scores */
    } else {
        for (size_t k = m->leaves - 1; k >= 1; k--)
            m->tree[k] = memo_win(m, m->tree[2 * k], m->tree[2 * k + 1]);
        memcpy(m->rejected, d->explain.rejected, sizeof m->rejected);
        m->valid = true;
        m->dirty = NONE;
        if (m->tree[1] != NONE)
            best = &e->nodes.items[m->tree[1]];
    }
    if (best)
        *best_pick = m->pick[best->id];
    return best;
}

/* The filters of the scan for node n (filter_own, the test of topo_hard
 * hoisted, then the per-model quota as gp_engine_filter has it). */
static inline enum gp_filter place_filter(const struct gp_engine *e, const struct gp_node *n,
                                          const struct gp_pod *p, bool hard, bool model_quota)
{
    enum gp_filter f = filter_own(e, n, p);
    if (f == GP_FILTER_COUNT && hard)
        f = gp_eng_topo_filter(e, n, p);
    if (f == GP_FILTER_COUNT && model_quota && gp_eng_model_quota_blocks(e, p, n->model))
        f = GP_FILTER_QUOTA;
    return f;
}

/* The scan looked at the capacity index's candidates alone and p fits
 * nowhere: the explanation counts every node, as a scan of every node
 * does (the nodes passed over are rejected by a filter; a rejection is
 * remembered for a gang's next member alike, rej). Where the filters are
 * filter_own's alone and no gang remembers rejections, the capacity index
 * counts them, whole branches at once (gp_eng_cand_explain: the same
 * counts, without a visit to every node of a nearly full cluster). */
static void explain_all(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                        uint8_t *rej, bool hard, bool model_quota)
{
    if (!rej && !hard && !model_quota && gp_eng_cand_explain(e, p, d->explain.rejected))
        return;
    memset(d->explain.rejected, 0, sizeof d->explain.rejected);
    e->index.visits += e->nodes.len;
    for (size_t i = 0; i < e->nodes.len; i++) {
        if (rej && rej[i]) {
            d->explain.rejected[rej[i] - 1]++;
            continue;
        }
        enum gp_filter f = place_filter(e, &e->nodes.items[i], p, hard, model_quota);
        if (f != GP_FILTER_COUNT) {
            d->explain.rejected[f]++;
            if (rej)
                rej[i] = (uint8_t)(f + 1);
        }
    }
}

/* Filters the nodes (the capacity index's candidates, else every node),
 * scores the feasible ones and commits the best. Fills *d with a BIND or
 * an UNSCHEDULABLE decision. */
void gp_eng_place(struct gp_engine *e, struct gp_pod *p, struct gp_decision *d)
{
    memset(d, 0, sizeof *d);
    d->pod = p->id;
    d->quota_queue = GP_QUEUE_NONE;
    e->index.places++;
    if (e->quotas && e->queues.items[p->spec.queue].capped) {
        uint32_t q = gp_eng_quota_blocks(e, p, 1);
        if (q != NONE) { /* no node is looked at: the queue says no */
            d->kind = GP_DECISION_UNSCHEDULABLE;
            d->quota_queue = q;
            d->explain.nodes_total = (uint32_t)e->nodes.len;
            d->explain.rejected[GP_FILTER_QUOTA] = (uint32_t)e->nodes.len;
            p->tried_gen = pod_gen(e, p);
            return;
        }
    }
    struct gp_node *best = NULL;
    double best_score = 0;
    struct gp_pick best_pick = {0}, pick;
    bool model_quota =
        e->model_quotas && p->spec.gpu_count > 0 && e->queues.items[p->spec.queue].model_capped;
    bool resv = gp_eng_resv_applies(e, p);
    int64_t spare = e->resv.spare > 0 ? e->resv.spare : 0;
    uint32_t held = 0;
    /* preferences (prefer.c): every candidate is scored before one is
     * chosen; filters that read other pods (topo.c) change on nodes the
     * last member did not go to: neither can be remembered between
     * members */
    bool soft = gp_eng_soft(e, p) && GP_VEC_RESERVE(&e->cands, e->nodes.len) == 0;
    /* (a ReadWriteOncePod claim: a bind elsewhere may refuse it, as topo's) */
    bool hard = topo_hard(e, p), topo = soft || hard || (p->label_filters & 8);
    e->cands.len = 0;
    uint8_t *rej = e->gang_rej_shape == p->shape && !topo ? e->gang_rej : NULL;
    /* a gang's member with a node-local policy: from the memo, when the
     * filters of the nodes it did not change stay as they were */
    struct gang_memo *m = &e->memo;
    struct shape *sh = &e->shapes.items[p->shape];
    bool held_cache = resv && !rej && held_cacheable(e, p);
    bool memo = m->shape != NONE && m->shape == p->shape && rej && !model_quota && !resv;
    bool local =
        !e->no_index && !model_quota && !e->domain_key && (!e->policy || e->policy->node_local);
    bool indexable = local && !topo;
    /* filters that read other pods only to exclude domains (required
     * anti-affinity, its own or a bound pod's): from the node index too,
     * its winners the exclusions reject passed over */
    bool excl = local && !soft && hard && gp_eng_interpod_excl_only(e, p);
    /* a gang's member outside the reservation: from the node index when it
     * answers (its ranking is kept from one attempt to the next, where the
     * memo is filled by a scan at each), else from the memo. What the memo
     * and the ranking choose is the scan's choice, and the nodes that
     * rejected an earlier member alike (rej) reject it again */
    if (indexable && rej && !resv && !e->no_gang_index &&
        gp_eng_index_place(e, p, d, &best, &best_pick)) {
        m->valid = false;
        goto chosen;
    }
    if (memo && m->valid && memo_update(e, p)) {
        memcpy(d->explain.rejected, m->rejected, sizeof m->rejected);
        if (m->tree[1] != NONE) {
            best = &e->nodes.items[m->tree[1]];
            best_pick = m->pick[m->tree[1]];
        }
        goto chosen;
    }
    m->valid = false;
    if (memo && m->shape != NONE) {
        best = memo_fill(e, p, d, &best_pick);
        goto chosen;
    }
    /* backfill: a pod of a shape held back at this state is held again */
    if (held_cache && sh->held_ver == e->state_ver && sh->held_stamp == e->resv_stamp) {
        d->explain = sh->held_explain;
        held = 1;
        goto chosen;
    }
    /* a pod alone with a node-local policy: from the node index (under the
     * head's reservation, its candidates best first until one would not
     * delay the head). Under the reservation a gang's member too: the
     * nodes that rejected an earlier member alike (rej) are unchanged
     * since and reject it again, as the ranking says of them; the nodes
     * the earlier members went to it has replayed. */
    if (indexable && !rej && !resv && gp_eng_index_place(e, p, d, &best, &best_pick))
        goto chosen;
    if (excl && !rej && !resv && gp_eng_index_place_excl(e, p, d, &best, &best_pick))
        goto chosen;
    if (indexable && resv && !e->no_resv_index &&
        gp_eng_index_place_resv(e, p, spare, d, &best, &best_pick, &held))
        goto chosen;
    /* the nodes that may hold p, in node order (index.c), else all */
    struct cand_walk walk;
    bool cand = gp_eng_cand_begin(e, p, &walk);
    for (size_t k = 0;; k++) {
        size_t i = k;
        if (cand && (i = gp_eng_cand_next(&walk)) == NONE)
            break;
        if (!cand && i >= e->nodes.len)
            break;
        e->index.visits++;
        if (rej && rej[i]) { /* it rejected an earlier member alike */
            d->explain.rejected[rej[i] - 1]++;
            continue;
        }
        struct gp_node *n = &e->nodes.items[i];
        enum gp_filter f = place_filter(e, n, p, hard, model_quota);
        if (f != GP_FILTER_COUNT) {
            d->explain.rejected[f]++;
            if (rej)
                rej[i] = (uint8_t)(f + 1);
            continue;
        }
        if (resv && gp_eng_resv_loss(e, n, p) > spare) { /* it would delay the head */
            held++;
            continue;
        }
        double score;
        if (e->policy) {
            memset(&pick, 0, sizeof pick);
            score = e->policy->score(e->policy_state, e, n, p, &pick);
            /* the pick matters only on a node that would win: checked there */
            if (best && !(score > best_score) && !soft)
                continue;
            if (!pick_valid(n, p, &pick) && gp_engine_pick_default(n, p, &pick) != 0)
                continue;
        } else {
            score = 0;
            memset(&pick, 0, sizeof pick);
            gp_engine_pick_default(n, p, &pick);
        }
        if (soft) { /* room reserved above */
            struct cand c = {n->id, score, pick};
            e->cands.items[e->cands.len++] = c;
            continue;
        }
        if (!best || score > best_score) {
            best = n;
            best_score = score;
            best_pick = pick;
        }
    }
    if (soft && e->cands.len) {
        const struct cand *c =
            &e->cands.items[gp_eng_soft_choose(e, p, e->cands.items, e->cands.len)];
        best = &e->nodes.items[c->node];
        best_pick = c->pick;
    }
    if (cand && !best)
        explain_all(e, p, d, rej, hard, model_quota);
chosen:
    d->explain.nodes_total = (uint32_t)e->nodes.len;
    if (!best) {
        d->kind = GP_DECISION_UNSCHEDULABLE;
        p->tried_gen = pod_gen(e, p);
        if (held) {
            e->held = true;
            if (held_cache) {
                sh->held_ver = e->state_ver;
                sh->held_stamp = e->resv_stamp;
                sh->held_explain = d->explain;
            }
        }
        return;
    }
    d->kind = GP_DECISION_BIND;
    d->node = best->id;
    d->pick = best_pick;
    /* a bind explains nothing: the scan of the candidates alone, the
     * ranking and the memo would count different nodes */
    memset(d->explain.rejected, 0, sizeof d->explain.rejected);
    if (resv)
        gp_eng_resv_take(e, best,
                         p); /* before the commit: the loss is measured on the projection */
    if (m->valid)
        m->dirty = best->id; /* the one node whose score the commit changes */
    gp_eng_commit(e, p, best, &best_pick);
}
