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
 * sends the shape back to the scan, as the tree cannot order it.
 *
 * Every node also has a version, a new number from one clock on each of
 * its changes (gp_eng_node_ver): what is remembered of a node elsewhere
 * (the backfill reservation's memory, resv.c) holds while it is the same. */
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
    memset(x, 0, sizeof *x);
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

/* Fills the ranking from a scan of every node. */
static void rank_fill(struct gp_engine *e, struct ranking *r, const struct gp_pod *p)
{
    size_t nn = e->nodes.len;
    memset(r->rejected, 0, sizeof r->rejected);
    r->nan = r->nopick = 0;
    memset(r->why, WHY_UNSEEN, r->leaves); /* counts nothing before it is evaluated */
    for (size_t i = 0; i < nn; i++)
        rank_eval(e, r, (uint32_t)i, p);
    for (size_t i = nn; i < r->leaves; i++)
        r->tree[r->leaves + i] = NONE;
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
    }
    memcpy(d->explain.rejected, r->rejected, sizeof r->rejected);
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
    }
    memcpy(d->explain.rejected, r->rejected, sizeof r->rejected);
    e->resv_index_hits++;
    return true;
}

bool gp_eng_index_explain(struct gp_engine *e, const struct gp_pod *p, struct gp_explain *out)
{
    struct ranking *r = rank_get(e, p);
    if (!r || r->nan > 0 || r->tree[1] != NONE)
        return false;
    memcpy(out->rejected, r->rejected, sizeof r->rejected);
    out->nodes_total = (uint32_t)e->nodes.len;
    return true;
}
