/* index.c - the node index: for a request shape placed again and again, a
 * ranking of every node kept from one decision to the next, so that a
 * decision is a lookup at the root of a tournament tree instead of a scan
 * of the cluster.
 *
 * A ranking holds, per node, what gp_eng_node_eval() says of the shape
 * there (rejected by a filter, or a candidate with its score) and a
 * tournament tree whose root is the node the scan of gp_eng_place() would
 * choose: the highest score, ties to the lowest node id. It also keeps the
 * explanation of the nodes (how many each filter rejects), so a shape that
 * fits nowhere is answered as the scan would answer it. Every change to a
 * node (a bind, a release, a node added, drained or removed) is appended to
 * one change log; a ranking replays the log from where it last stopped when
 * it is next asked (each changed node once), or is rebuilt by a scan when
 * it fell too far behind. Rankings are kept for the most recently used
 * shapes, made on a shape's second placement (one-off shapes cost only the
 * scan they always did).
 *
 * It answers only when the scan's choice is a function of the nodes' own
 * states and the shape: a node-local policy (or none), no filter outside
 * filter_fit (gp_eng_pod_indexable), no per-model quota, reservation, gang
 * domain or gang rejections (place.c checks); a score that is not a number
 * sends the shape back to the scan, as the tree cannot order it. A pod
 * whose filters read the other pods only to exclude domains (required
 * anti-affinity: gp_eng_interpod_excl_only) is answered from its shape's
 * ranking too, its winners best first until one the exclusions pass
 * (gp_eng_index_place_excl).
 *
 * Every node also has a version, a new number from one clock on each of
 * its changes (gp_eng_node_ver): what is remembered of a node elsewhere
 * (the backfill reservation's memory, resv.c) holds while it is the same.
 *
 * Under the rankings, the capacity index (DESIGN.md section 4): the nodes
 * in classes of one GPU model and sharing mode (the nodes without GPUs in
 * their own), each class a tree over its members in node order of the
 * largest free CPU and memory, the most whole GPUs free, the largest free
 * share of one GPU and the MIG profiles some GPU has room for, kept on
 * every change (gp_eng_index_touch). A pod's candidates are the members of
 * the classes its request may use (its GPU models; a whole-GPU, share,
 * replica or MIG test by the class's mode) in the branches whose largest
 * free capacity holds it, merged in node order (gp_eng_cand_begin/next):
 * every node the filters would pass is among them, and each other node is
 * one a filter rejects. The scan of gp_eng_place() and a ranking's fill
 * look at those alone, in the order the scan of every node did, so their
 * choice (and a random policy's draws, one per feasible node) is the same;
 * the nodes left out are counted for an explanation only when the pod
 * fits nowhere (the explanation names every node), and then from the
 * classes' trees where whole branches fail the same filter first
 * (gp_eng_cand_explain: the ready count and the smallest free CPU and
 * memory are kept beside the largest). */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rankings kept at most (the least recently used one is reused). */
#define RANK_MAX 64
/* Ranking.why: 0 = a candidate; 1 + f = rejected by filter f; WHY_NOPICK =
 * it passes the filters but no valid pick exists (the scan counts it under
 * no filter and never chooses it). */
#define WHY_NOPICK (GP_FILTER_COUNT + 1)
/* ... and WHY_UNSEEN: not evaluated yet (counted nowhere) */
#define WHY_UNSEEN (GP_FILTER_COUNT + 2)

struct ranking {
    uint32_t shape; /* NONE: a free slot */
    bool valid;     /* filled, and synced with the log up to `synced` */
    uint64_t synced;
    uint64_t target_version; /* the target the scores were made for */
    uint64_t used;           /* the index's clock at its last use */
    size_t leaves;           /* a power of two, at least the nodes */
    double *score;           /* per node, a candidate's */
    uint8_t *why;            /* per node */
    uint32_t *tree;          /* 2 x leaves: each subtree's winner; NONE: none */
    uint32_t rejected[GP_FILTER_COUNT];
    uint32_t nan;    /* candidates whose score is not a number */
    uint32_t nopick; /* nodes that pass the filters with no valid pick */
    /* filled from the capacity index's candidates: the other nodes are
     * WHY_UNSEEN (rejected, and counted in `rejected` once an explanation
     * needs them: rank_complete) */
    bool partial;
    /* explained once from the capacity index since the fill: the next
     * explanation completes the ranking instead (its counts then kept
     * node by node as the log is replayed) */
    bool explained;
};

static inline uint32_t rank_win(const struct ranking *r, uint32_t a, uint32_t b)
{
    if (a == NONE)
        return b;
    if (b == NONE)
        return a;
    return r->score[b] > r->score[a] ? b : a;
}

void gp_eng_index_free(struct gp_engine *e)
{
    struct node_index *x = &e->index;
    for (size_t i = 0; i < x->nrank; i++) {
        free(x->rank[i].score);
        free(x->rank[i].why);
        free(x->rank[i].tree);
    }
    free(x->rank);
    GP_VEC_FREE(&x->log);
    GP_VEC_FREE(&x->out);
    free(x->seen);
    free(x->ver);
    for (size_t i = 0; i < x->cap.ncls; i++) {
        GP_VEC_FREE(&x->cap.cls[i].member);
        free(x->cap.cls[i].tree);
    }
    free(x->cap.cls);
    GP_VEC_FREE(&x->cap.slot);
    GP_VEC_FREE(&x->cap.pos);
    memset(x, 0, sizeof *x);
}

/* ---- the capacity index ---------------------------------------------------- */

static const struct cap_sum cap_none = {.cpu_milli = INT64_MIN,
                                        .mem_mib = INT64_MIN,
                                        .cpu_min_milli = INT64_MAX,
                                        .mem_min_mib = INT64_MAX};

/* What node n offers, as the filters read it; nothing when not ready. */
static struct cap_sum cap_leaf(const struct gp_node *n)
{
    if (n->state != GP_NODE_READY)
        return cap_none;
    struct cap_sum s = {.cpu_milli = n->cpu_free_milli,
                        .mem_mib = n->mem_free_mib,
                        .whole = n->gpus_whole_free,
                        .share_milli = n->gpu_milli_max_free,
                        .mig_mask = n->mig_mask,
                        .ready = 1,
                        .cpu_min_milli = n->cpu_free_milli,
                        .mem_min_mib = n->mem_free_mib};
    return s;
}

#define CAP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CAP_MIN(a, b) ((a) < (b) ? (a) : (b))

static inline struct cap_sum cap_join(const struct cap_sum *a, const struct cap_sum *b)
{
    struct cap_sum s = {.cpu_milli = CAP_MAX(a->cpu_milli, b->cpu_milli),
                        .mem_mib = CAP_MAX(a->mem_mib, b->mem_mib),
                        .whole = CAP_MAX(a->whole, b->whole),
                        .share_milli = CAP_MAX(a->share_milli, b->share_milli),
                        .mig_mask = a->mig_mask | b->mig_mask,
                        .ready = a->ready + b->ready,
                        .cpu_min_milli = CAP_MIN(a->cpu_min_milli, b->cpu_min_milli),
                        .mem_min_mib = CAP_MIN(a->mem_min_mib, b->mem_min_mib)};
    return s;
}

/* Whether a branch whose largest free capacity is s may hold request q. */
static inline bool cap_ok(const struct cap_sum *s, const struct cap_req *q)
{
    return s->cpu_milli >= q->cpu_milli && s->mem_mib >= q->mem_mib && s->whole >= q->whole &&
           s->share_milli >= q->share_milli && (!q->mig || s->mig_mask != 0);
}

/* Fills class c's tree from its members' nodes. */
static void cap_build(const struct gp_engine *e, struct cap_class *c)
{
    for (size_t j = 0; j < c->leaves; j++)
        c->tree[c->leaves + j] =
            j < c->member.len ? cap_leaf(&e->nodes.items[c->member.items[j]]) : cap_none;
    for (size_t k = c->leaves - 1; k >= 1; k--)
        c->tree[k] = cap_join(&c->tree[2 * k], &c->tree[2 * k + 1]);
}

/* A new node, the last by id, into its class (made when it is the first
 * of its model and mode). 0, or -1 when out of memory. */
static int cap_add(struct gp_engine *e, const struct gp_node *n)
{
    struct cap_index *x = &e->index.cap;
    uint32_t model = n->spec.gpu_count > 0 ? n->model : NONE;
    int mode = n->spec.sharing ? (int)n->spec.sharing->mode : -1;
    size_t k = 0;
    while (k < x->ncls && !(x->cls[k].model == model && x->cls[k].mode == mode))
        k++;
    if (k == x->ncls) {
        if (x->ncls == x->capcls) {
            size_t cap = x->capcls ? 2 * x->capcls : 8;
            struct cap_class *cls = realloc(x->cls, cap * sizeof *cls);
            if (!cls)
                return -1;
            x->cls = cls;
            x->capcls = cap;
        }
        memset(&x->cls[k], 0, sizeof x->cls[k]);
        x->cls[k].model = model;
        x->cls[k].mode = mode;
        x->cls[k].drv_lo = UINT32_MAX;
        x->ncls++;
    }
    struct cap_class *c = &x->cls[k];
    c->ntaint += n->spec.ntaints > 0;
    c->nlimited += n->spec.pods_limited;
    if (n->spec.driver_version && n->spec.driver_version < c->drv_lo)
        c->drv_lo = n->spec.driver_version;
    if (GP_VEC_PUSH(&c->member, n->id) != 0 || GP_VEC_PUSH(&x->slot, (uint32_t)k) != 0 ||
        GP_VEC_PUSH(&x->pos, (uint32_t)(c->member.len - 1)) != 0)
        return -1;
    if (c->member.len > c->leaves) { /* a tree twice as wide */
        size_t leaves = c->leaves ? 2 * c->leaves : 1;
        struct cap_sum *tree = realloc(c->tree, 2 * leaves * sizeof *tree);
        if (!tree)
            return -1;
        c->tree = tree;
        c->leaves = leaves;
        cap_build(e, c);
        return 0;
    }
    size_t j = c->member.len - 1;
    c->tree[c->leaves + j] = cap_leaf(n);
    for (size_t t = (c->leaves + j) / 2; t >= 1; t /= 2)
        c->tree[t] = cap_join(&c->tree[2 * t], &c->tree[2 * t + 1]);
    return 0;
}

/* Node `node` changed (or was added): its leaf, and the branches above. */
static void cap_touch(struct gp_engine *e, uint32_t node)
{
    struct cap_index *x = &e->index.cap;
    if (x->broken)
        return;
    if (node >= x->slot.len) { /* a new node: they come in id order */
        if (node != x->slot.len || cap_add(e, &e->nodes.items[node]) != 0)
            x->broken = true;
        return;
    }
    struct cap_class *c = &x->cls[x->slot.items[node]];
    size_t t = c->leaves + x->pos.items[node];
    c->tree[t] = cap_leaf(&e->nodes.items[node]);
    for (t /= 2; t >= 1; t /= 2)
        c->tree[t] = cap_join(&c->tree[2 * t], &c->tree[2 * t + 1]);
}

/* The request p makes of a node of class c, as filter_own tests it; false
 * when no node of c can pass (a GPU model p does not allow, GPUs asked of
 * a node without). The GPU tests follow filter_own and gp_share_filter:
 * whole GPUs free (no sharing spec, or exclusive), the largest free share
 * (no sharing spec), a free replica (time-slicing, MPS: milli left), a
 * free MIG profile (MIG; the pod's own among them is the filter's). */
static bool cap_request(const struct cap_class *c, const struct gp_pod *p, struct cap_req *q)
{
    memset(q, 0, sizeof *q);
    q->cpu_milli = p->spec.cpu_milli;
    q->mem_mib = p->spec.mem_mib;
    uint32_t want = p->spec.gpu_count;
    if (want == 0)
        return true;
    if (c->model == NONE || !(p->model_mask >> c->model & 1))
        return false;
    switch (c->mode) {
    case -1:
        if (p->spec.gpu_milli == GP_GPU_MILLI)
            q->whole = want;
        else
            q->share_milli = p->spec.gpu_milli;
        break;
    case GP_SHARE_EXCLUSIVE:
        q->whole = want;
        break;
    case GP_SHARE_TIMESLICE:
    case GP_SHARE_MPS:
        q->share_milli = 1;
        break;
    case GP_SHARE_MIG:
        q->mig = true;
        break;
    default:
        break; /* a mode the filters may not know: the cpu and memory alone */
    }
    return true;
}

/* The first member at or after j of class c whose node may hold q;
 * SIZE_MAX: none. The branch at tree index k covers members [lo, hi). */
static size_t cap_find(const struct cap_class *c, size_t k, size_t lo, size_t hi, size_t j,
                       const struct cap_req *q)
{
    if (hi <= j || lo >= c->member.len || !cap_ok(&c->tree[k], q))
        return SIZE_MAX;
    if (hi - lo == 1)
        return lo;
    size_t mid = lo + (hi - lo) / 2;
    size_t r = cap_find(c, 2 * k, lo, mid, j, q);
    return r != SIZE_MAX ? r : cap_find(c, 2 * k + 1, mid, hi, j, q);
}

bool gp_eng_cand_begin(struct gp_engine *e, const struct gp_pod *p, struct cand_walk *w)
{
    const struct cap_index *x = &e->index.cap;
    w->n = 0;
    if (e->no_index || x->broken || x->slot.len != e->nodes.len)
        return false;
    for (size_t k = 0; k < x->ncls; k++) {
        const struct cap_class *c = &x->cls[k];
        struct cap_req q;
        if (!cap_request(c, p, &q))
            continue;
        size_t j = cap_find(c, 1, 0, c->leaves, 0, &q);
        if (j == SIZE_MAX)
            continue;
        if (w->n == CAND_CLASSES_MAX)
            return false;
        w->cur[w->n].c = c;
        w->cur[w->n].req = q;
        w->cur[w->n].j = j;
        w->n++;
    }
    return true;
}

uint32_t gp_eng_cand_next(struct cand_walk *w)
{
    if (w->n == 0)
        return NONE;
    size_t b = 0; /* the class whose next candidate comes first */
    for (size_t k = 1; k < w->n; k++)
        if (w->cur[k].c->member.items[w->cur[k].j] < w->cur[b].c->member.items[w->cur[b].j])
            b = k;
    const struct cap_class *c = w->cur[b].c;
    uint32_t node = c->member.items[w->cur[b].j];
    size_t j = cap_find(c, 1, 0, c->leaves, w->cur[b].j + 1, &w->cur[b].req);
    if (j == SIZE_MAX)
        w->cur[b] = w->cur[--w->n];
    else
        w->cur[b].j = j;
    return node;
}

/* ---- an explanation counted from the capacity index ------------------------ */

/* What filter_own says of every ready node of class c before it reads the
 * node's free capacity: a filter that rejects them all (GPU_MODEL), none
 * (GP_FILTER_COUNT), or -1 when it depends on the node (taints, a sharing
 * mode test, a driver below the pod's need). Follows filter_own's order:
 * taints, then for a GPU pod on a node with GPUs the model, the sharing
 * mode and the driver. */
static int explain_static(const struct cap_class *c, const struct gp_pod *p)
{
    /* a pod limit (filter_own's PODS, before the free capacity the tree
     * sums) and the other resources: node by node, where the tree's sums
     * cannot say (the common case pays nothing on a bind) */
    if (c->ntaint > 0 || c->nlimited > 0 || p->spec.nscalars || p->spec.nhost_ports ||
        p->spec.ncsi_volumes)
        return -1;
    if (p->spec.gpu_count == 0 || c->model == NONE)
        return GP_FILTER_COUNT;
    if (!(p->model_mask >> c->model & 1))
        return GP_FILTER_GPU_MODEL;
    bool exclusive = c->mode == GP_SHARE_EXCLUSIVE;
    bool plain =
        !p->spec.share_modes && !p->spec.mig_profile && p->spec.gpu_resource != GP_GPU_RES_SHARED;
    if ((c->mode != -1 || !plain) && !(exclusive && plain))
        return -1; /* gp_share_mode_ok reads the node's sharing spec */
    if (p->spec.cuda_driver_min && c->drv_lo < p->spec.cuda_driver_min)
        return -1;
    return GP_FILTER_COUNT;
}

/* What filter_own's GPU tests say of every node below branch s (each ready,
 * past the static tests, with the CPU and memory the pod asks): a filter
 * that rejects them all, GP_FILTER_COUNT when they all pass, or -1 when it
 * depends on the node. */
static int explain_gpus(const struct cap_class *c, const struct cap_sum *s, const struct gp_pod *p)
{
    uint32_t want = p->spec.gpu_count, milli = p->spec.gpu_milli;
    if (want == 0)
        return GP_FILTER_COUNT;
    if (c->mode == GP_SHARE_EXCLUSIVE || (c->mode == -1 && milli == GP_GPU_MILLI))
        return s->whole < want ? GP_FILTER_GPU_COUNT : -1; /* then the GPU memory */
    if (c->mode != -1)
        return -1; /* gp_share_filter */
    if (c->model == NONE)
        return GP_FILTER_GPU_COUNT; /* a share of a node without GPUs */
    return s->share_milli < milli ? GP_FILTER_GPU_SHARE : -1;
}

/* Counts the members [lo, hi) of class c below tree index k into rej;
 * stat is explain_static's answer; *looked counts the nodes evaluated and
 * the branches counted at once. */
static void explain_count(const struct gp_engine *e, const struct cap_class *c, int stat, size_t k,
                          size_t lo, size_t hi, const struct gp_pod *p, uint32_t *rej,
                          uint64_t *looked)
{
    if (lo >= c->member.len)
        return;
    uint32_t cnt = (uint32_t)((hi < c->member.len ? hi : c->member.len) - lo);
    const struct cap_sum *s = &c->tree[k];
    int f = -1; /* the filter every member below fails first, if one */
    if (s->ready == 0) {
        f = GP_FILTER_NODE_STATE;
    } else if (s->ready == cnt && stat >= 0) {
        if (stat != GP_FILTER_COUNT)
            f = stat;
        else if (s->cpu_milli < p->spec.cpu_milli)
            f = GP_FILTER_CPU;
        else if (s->cpu_min_milli >= p->spec.cpu_milli && s->mem_mib < p->spec.mem_mib)
            f = GP_FILTER_MEMORY;
        else if (s->cpu_min_milli >= p->spec.cpu_milli && s->mem_min_mib >= p->spec.mem_mib)
            f = explain_gpus(c, s, p);
    }
    if (f >= 0) {
        (*looked)++;
        if (f != GP_FILTER_COUNT)
            rej[f] += cnt;
        return;
    }
    if (hi - lo == 1) {
        (*looked)++;
        enum gp_filter g = filter_own(e, &e->nodes.items[c->member.items[lo]], p);
        if (g != GP_FILTER_COUNT)
            rej[g]++;
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    explain_count(e, c, stat, 2 * k, lo, mid, p, rej, looked);
    explain_count(e, c, stat, 2 * k + 1, mid, hi, p, rej, looked);
}

bool gp_eng_cand_explain(struct gp_engine *e, const struct gp_pod *p,
                         uint32_t rejected[GP_FILTER_COUNT])
{
    const struct cap_index *x = &e->index.cap;
    if (e->no_index || x->broken || x->slot.len != e->nodes.len || e->domain_key)
        return false;
    if (p->label_filters &&
        ((p->label_filters & 8) || p->spec.nnode_selector ||
         (p->spec.constraints && (p->spec.constraints->nnode_required ||
                                  p->spec.constraints->nvolumes)))) /* (volumes: VOLUMES') */
        return false; /* labels are read node by node (a ReadWriteOncePod claim: each node too) */
    memset(rejected, 0, GP_FILTER_COUNT * sizeof *rejected);
    uint64_t looked = 0;
    for (size_t k = 0; k < x->ncls; k++) {
        const struct cap_class *c = &x->cls[k];
        int stat = explain_static(c, p);
        if (stat >= 0) {
            explain_count(e, c, stat, 1, 0, c->leaves, p, rejected, &looked);
            continue;
        }
        /* the node decides (taints, a sharing test, drivers): each one, as
         * the count of every node does */
        looked += c->member.len;
        for (size_t j = 0; j < c->member.len; j++) {
            enum gp_filter f = filter_own(e, &e->nodes.items[c->member.items[j]], p);
            if (f != GP_FILTER_COUNT)
                rejected[f]++;
        }
    }
    e->index.visits += looked;
    return true;
}

/* Room for nn nodes. 0, or -1 when out of memory. */
static int rank_reserve(struct ranking *r, size_t nn)
{
    if (r->leaves >= nn && r->tree)
        return 0;
    size_t leaves = 1;
    while (leaves < nn)
        leaves *= 2;
    if (leaves > SIZE_MAX / (2 * sizeof *r->tree))
        return -1;
    double *score = realloc(r->score, leaves * sizeof *score);
    if (score)
        r->score = score;
    uint8_t *why = realloc(r->why, leaves);
    if (why)
        r->why = why;
    uint32_t *tree = realloc(r->tree, 2 * leaves * sizeof *tree);
    if (tree)
        r->tree = tree;
    if (!score || !why || !tree)
        return -1;
    r->leaves = leaves;
    return 0;
}

/* Evaluates node i for pod p into the ranking's leaf, keeping the counts;
 * the tree above it is left to the caller. */
static void rank_eval(struct gp_engine *e, struct ranking *r, uint32_t i, const struct gp_pod *p)
{
    uint8_t old = r->why[i];
    if (old == 0)
        r->nan -= isnan(r->score[i]);
    else if (old <= GP_FILTER_COUNT)
        r->rejected[old - 1]--;
    else if (old == WHY_NOPICK)
        r->nopick--;
    enum gp_filter f;
    double score = 0;
    struct gp_pick pick;
    uint8_t why;
    e->index.visits++;
    if (gp_eng_node_eval(e, &e->nodes.items[i], p, &f, &score, &pick))
        why = 0;
    else
        why = f != GP_FILTER_COUNT ? (uint8_t)(f + 1) : WHY_NOPICK;
    r->why[i] = why;
    if (why == 0) {
        r->score[i] = score;
        r->nan += isnan(score);
    } else if (why <= GP_FILTER_COUNT) {
        r->rejected[why - 1]++;
    } else {
        r->nopick++;
    }
    r->tree[r->leaves + i] = why == 0 ? i : NONE;
}

/* Fills the ranking from the capacity index's candidates, or a scan of
 * every node. */
static void rank_fill(struct gp_engine *e, struct ranking *r, const struct gp_pod *p)
{
    size_t nn = e->nodes.len;
    memset(r->rejected, 0, sizeof r->rejected);
    r->nan = r->nopick = 0;
    memset(r->why, WHY_UNSEEN, r->leaves); /* counts nothing before it is evaluated */
    for (size_t i = 0; i < r->leaves; i++)
        r->tree[r->leaves + i] = NONE;
    struct cand_walk w;
    r->partial = gp_eng_cand_begin(e, p, &w);
    r->explained = false;
    if (r->partial) {
        uint32_t i;
        while ((i = gp_eng_cand_next(&w)) != NONE)
            rank_eval(e, r, i, p);
    } else {
        for (size_t i = 0; i < nn; i++)
            rank_eval(e, r, (uint32_t)i, p);
    }
    for (size_t k = r->leaves - 1; k >= 1; k--)
        r->tree[k] = rank_win(r, r->tree[2 * k], r->tree[2 * k + 1]);
    r->valid = true;
    r->synced = e->index.base + e->index.log.len;
    r->target_version = e->target_version;
}

/* Sets node i's leaf (i, or NONE: no candidate) and the winners above it. */
static void rank_leaf(struct ranking *r, uint32_t i, uint32_t leaf)
{
    r->tree[r->leaves + i] = leaf;
    for (size_t k = (r->leaves + i) / 2; k >= 1; k /= 2)
        r->tree[k] = rank_win(r, r->tree[2 * k], r->tree[2 * k + 1]);
}

/* A partial ranking's explanation made whole: the nodes the fill left out
 * evaluated (each rejected by a filter), once. */
static void rank_complete(struct gp_engine *e, struct ranking *r, const struct gp_pod *p)
{
    if (!r->partial)
        return;
    for (size_t i = 0; i < e->nodes.len; i++)
        if (r->why[i] == WHY_UNSEEN) {
            rank_eval(e, r, (uint32_t)i, p);
            if (r->why[i] == 0) /* cannot be: the index left out a candidate */
                rank_leaf(r, (uint32_t)i, (uint32_t)i);
        }
    r->partial = false;
}

/* The explanation of a ranking without a candidate: of a partial one
 * explained for the first time since its fill, from the capacity index's
 * counts where it can say (the same counts as the nodes left out
 * evaluated one by one); else (a shape that keeps failing: its ranking is
 * asked again) rank_complete evaluates them, once, and the ranking's
 * counts answer from then on. */
static void rank_explain(struct gp_engine *e, struct ranking *r, const struct gp_pod *p,
                         uint32_t rejected[GP_FILTER_COUNT])
{
    if (r->partial && !r->explained && gp_eng_cand_explain(e, p, rejected)) {
        r->explained = true;
        return;
    }
    rank_complete(e, r, p);
    memcpy(rejected, r->rejected, sizeof r->rejected);
}

/* Replays the changes the ranking has not seen, each changed node once. */
static void rank_catch_up(struct gp_engine *e, struct ranking *r, const struct gp_pod *p)
{
    struct node_index *x = &e->index;
    size_t from = (size_t)(r->synced - x->base);
    if (from == x->log.len)
        return;
    x->stamp++;
    for (size_t j = from; j < x->log.len; j++) {
        uint32_t i = x->log.items[j];
        if (x->seen[i] == x->stamp)
            continue;
        x->seen[i] = x->stamp;
        rank_eval(e, r, i, p);
        for (size_t k = (r->leaves + i) / 2; k >= 1; k /= 2)
            r->tree[k] = rank_win(r, r->tree[2 * k], r->tree[2 * k + 1]);
    }
    r->synced = x->base + x->log.len;
}

/* Room in the per-node marks for every node. 0, or -1. */
static int seen_reserve(struct node_index *x, size_t nn)
{
    if (x->nseen >= nn)
        return 0;
    size_t n = x->nseen ? x->nseen : 64;
    while (n < nn)
        n *= 2;
    uint64_t *seen = realloc(x->seen, n * sizeof *seen);
    if (!seen)
        return -1;
    memset(seen + x->nseen, 0, (n - x->nseen) * sizeof *seen);
    x->seen = seen;
    x->nseen = n;
    return 0;
}

/* The ranking of p's shape, up to date; NULL when there is none (the
 * shape's first placement, or out of memory). */
static struct ranking *rank_get(struct gp_engine *e, const struct gp_pod *p)
{
    struct node_index *x = &e->index;
    struct shape *s = &e->shapes.items[p->shape];
    size_t nn = e->nodes.len;
    if (nn == 0)
        return NULL;
    x->clock++;
    struct ranking *r = s->rank != NONE ? &x->rank[s->rank] : NULL;
    if (!r) {
        if (s->placed++ == 0) /* a shape seen once is not worth a ranking yet */
            return NULL;
        if (!x->rank && !(x->rank = calloc(RANK_MAX, sizeof *x->rank)))
            return NULL;
        uint32_t k = NONE;
        if (x->nrank < RANK_MAX) {
            k = (uint32_t)x->nrank++;
            x->rank[k].shape = NONE;
        } else { /* the least recently used one */
            k = 0;
            for (uint32_t i = 1; i < RANK_MAX; i++)
                if (x->rank[i].used < x->rank[k].used)
                    k = i;
        }
        r = &x->rank[k];
        if (r->shape != NONE)
            e->shapes.items[r->shape].rank = NONE;
        r->shape = p->shape;
        r->valid = false;
        s->rank = k;
    }
    r->used = x->clock;
    size_t leaves = r->leaves;
    if (rank_reserve(r, nn) != 0 || seen_reserve(x, nn) != 0) {
        r->valid = false;
        return NULL;
    }
    if (r->leaves != leaves) /* the tree grew: every leaf moved */
        r->valid = false;
    /* a ranking behind by more changes than there are nodes is rebuilt */
    if (!r->valid || r->target_version != e->target_version || r->synced < x->base ||
        x->base + x->log.len - r->synced > nn)
        rank_fill(e, r, p);
    else
        rank_catch_up(e, r, p);
    return r;
}

/* Drops the log's prefix that every valid ranking has seen; rankings far
 * behind are given up (rebuilt when next used). */
static void log_compact(struct node_index *x, size_t nn)
{
    uint64_t end = x->base + x->log.len, keep = end;
    for (size_t i = 0; i < x->nrank; i++) {
        struct ranking *r = &x->rank[i];
        if (!r->valid)
            continue;
        if (r->synced < x->base || end - r->synced > nn) {
            r->valid = false;
            continue;
        }
        if (r->synced < keep)
            keep = r->synced;
    }
    size_t drop = (size_t)(keep - x->base);
    memmove(x->log.items, x->log.items + drop, (x->log.len - drop) * sizeof *x->log.items);
    x->log.len -= drop;
    x->base = keep;
}

/* Node `node` gets a new version (room for it made as nodes are added). */
static void ver_bump(struct node_index *x, uint32_t node)
{
    if (node >= x->nver) {
        size_t n = x->nver ? x->nver : 64;
        while (n <= node)
            n *= 2;
        uint64_t *ver = realloc(x->ver, n * sizeof *ver);
        if (!ver)
            return; /* out of memory: this node's version stays unknown (0) */
        memset(ver + x->nver, 0, (n - x->nver) * sizeof *ver);
        x->ver = ver;
        x->nver = n;
    }
    x->ver[node] = ++x->ver_clock;
}

void gp_eng_index_touch(struct gp_engine *e, uint32_t node)
{
    struct node_index *x = &e->index;
    ver_bump(x, node);
    cap_touch(e, node);
    if (x->nrank == 0)
        return; /* no ranking to tell */
    if (x->log.len >= 2 * e->nodes.len + 64)
        log_compact(x, e->nodes.len);
    if (GP_VEC_PUSH(&x->log, node) != 0) { /* out of memory: every ranking is rebuilt */
        for (size_t i = 0; i < x->nrank; i++)
            x->rank[i].valid = false;
        x->base += x->log.len;
        x->log.len = 0;
    }
}

bool gp_eng_index_place(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                        struct gp_node **best, struct gp_pick *pick)
{
    struct ranking *r = rank_get(e, p);
    if (!r || r->nan > 0)
        return false;
    *best = NULL;
    uint32_t win = r->tree[1];
    if (win != NONE) { /* its pick, as the scan makes it */
        enum gp_filter f;
        double score;
        if (!gp_eng_node_eval(e, &e->nodes.items[win], p, &f, &score, pick))
            return false; /* cannot be: it is a candidate */
        *best = &e->nodes.items[win];
    } else {
        rank_explain(e, r, p, d->explain.rejected);
    }
    return true;
}

bool gp_eng_index_place_excl(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                             struct gp_node **best, struct gp_pick *pick)
{
    struct ranking *r = rank_get(e, p);
    if (!r || r->nan > 0)
        return false;
    *best = NULL;
    if (r->tree[1] == NONE) {
        /* no node passes filter_own: the scan's explanation is the
         * ranking's, but for a node without a valid pick, which the scan's
         * topology filter may count */
        if (r->nopick > 0)
            return false;
        rank_explain(e, r, p, d->explain.rejected);
        return true;
    }
    /* the candidates best first (ties to the lower node id, as the scan):
     * each the topology filter rejects (a domain an anti-affinity term
     * excludes) taken off, until one passes. Each costs a climb of the
     * tree; past an eighth of the nodes the scan is as cheap */
    struct node_index *x = &e->index;
    size_t most = e->nodes.len / 8 + 16;
    x->out.len = 0;
    uint32_t win;
    bool gave_up = false;
    while ((win = r->tree[1]) != NONE) {
        x->visits++;
        if (gp_eng_topo_filter(e, &e->nodes.items[win], p) == GP_FILTER_COUNT)
            break;
        if (x->out.len >= most || GP_VEC_PUSH(&x->out, win) != 0) {
            gave_up = true;
            break;
        }
        rank_leaf(r, win, NONE);
    }
    for (size_t k = 0; k < x->out.len; k++) /* and put back */
        rank_leaf(r, x->out.items[k], x->out.items[k]);
    if (gave_up || win == NONE)
        return false; /* the scan decides, and explains the topology's rejections */
    enum gp_filter f;
    double score;
    if (!gp_eng_node_eval(e, &e->nodes.items[win], p, &f, &score, pick))
        return false; /* cannot be: it is a candidate */
    *best = &e->nodes.items[win];
    return true;
}

bool gp_eng_index_place_resv(struct gp_engine *e, const struct gp_pod *p, int64_t spare,
                             struct gp_decision *d, struct gp_node **best, struct gp_pick *pick,
                             uint32_t *held)
{
    struct ranking *r = rank_get(e, p);
    if (!r || r->nan > 0 || (r->tree[1] == NONE && r->nopick > 0))
        return false; /* the scan says whether a node without a pick is held back */
    struct node_index *x = &e->index;
    x->out.len = 0;
    uint32_t win;
    bool oom = false;
    /* the candidates best first: each that would delay the head is taken
     * off the tree, until one would not */
    while ((win = r->tree[1]) != NONE && gp_eng_resv_loss(e, &e->nodes.items[win], p) > spare) {
        if (GP_VEC_PUSH(&x->out, win) != 0) {
            oom = true;
            break;
        }
        rank_leaf(r, win, NONE);
    }
    for (size_t k = 0; k < x->out.len; k++) /* and put back */
        rank_leaf(r, x->out.items[k], x->out.items[k]);
    if (oom)
        return false;
    *held = (uint32_t)x->out.len;
    *best = NULL;
    if (win != NONE) { /* its pick, as the scan makes it */
        enum gp_filter f;
        double score;
        if (!gp_eng_node_eval(e, &e->nodes.items[win], p, &f, &score, pick))
            return false; /* cannot be: it is a candidate */
        *best = &e->nodes.items[win];
    } else {
        rank_explain(e, r, p, d->explain.rejected);
    }
    e->resv_index_hits++;
    return true;
}

bool gp_eng_index_explain(struct gp_engine *e, const struct gp_pod *p, struct gp_explain *out)
{
    struct ranking *r = rank_get(e, p);
    if (!r || r->nan > 0 || r->tree[1] != NONE)
        return false;
    rank_explain(e, r, p, out->rejected);
    out->nodes_total = (uint32_t)e->nodes.len;
    return true;
}

void gp_engine_place_stats(const struct gp_engine *e, uint64_t *places, uint64_t *nodes_visited)
{
    if (places)
        *places = e->index.places;
    if (nodes_visited)
        *nodes_visited = e->index.visits;
}
