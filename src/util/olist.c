/* olist.c - the counted B+ tree of ids (olist.h). Insertion splits full
 * nodes on the way down (so a split never has to climb back up, and out
 * of memory leaves a well-formed tree); removal mends an underfull child
 * on the way back up, merging it with a sibling when both fit in one node
 * and otherwise evening the two out. Every node but the root stays at
 * least a quarter full, so the height is O(log n). */
#include "util/olist.h"

#include <stdlib.h>
#include <string.h>

enum {
    LEAF_CAP = 64,           /* ids in a leaf */
    LEAF_MIN = LEAF_CAP / 4, /* a leaf other than the root holds at least this */
    FAN = 32,                /* children of an inner node */
    FAN_MIN = FAN / 4,       /* an inner node other than the root: at least this */
    ROOT_CAP0 = 4            /* the room of a new list's first leaf */
};

/* A leaf (kid == NULL): n ids in order in id[]. An inner node: n children
 * in kid[], child c with count[c] ids under it, the first of them id[c].
 * The arrays follow the header in one allocation. */
struct ol_node {
    uint32_t n, cap;
    struct ol_node **kid;
    uint32_t *id;
    uint32_t *count;
};

/* Where gp_olist_at read last: a leaf, the rank of its first id, and the
 * list's version it is true for. */
struct ol_finger {
    const struct ol_node *leaf;
    uint32_t first;
    uint64_t ver;
};

static bool is_leaf(const struct ol_node *x)
{
    return x->kid == NULL;
}

static struct ol_node *node_new(uint32_t cap, bool leaf)
{
    size_t size = sizeof(struct ol_node) + (size_t)cap * sizeof(uint32_t);
    if (!leaf)
        size += (size_t)cap * (sizeof(struct ol_node *) + sizeof(uint32_t));
    struct ol_node *x = malloc(size);
    if (!x)
        return NULL;
    x->n = 0;
    x->cap = cap;
    char *p = (char *)(x + 1); /* aligned for pointers: the header's size is */
    x->kid = NULL;
    x->count = NULL;
    if (!leaf) {
        x->kid = (struct ol_node **)(void *)p;
        p += (size_t)cap * sizeof(struct ol_node *);
    }
    x->id = (uint32_t *)(void *)p;
    if (!leaf)
        x->count = x->id + cap;
    return x;
}

static void node_free(struct ol_node *x)
{
    if (!is_leaf(x))
        for (uint32_t c = 0; c < x->n; c++)
            node_free(x->kid[c]);
    free(x);
}

static uint32_t node_min(const struct ol_node *x)
{
    return is_leaf(x) ? LEAF_MIN : FAN_MIN;
}

/* The ids under entries [from, from + k) of x. */
static uint32_t entries_size(const struct ol_node *x, uint32_t from, uint32_t k)
{
    if (is_leaf(x))
        return k;
    uint32_t s = 0;
    for (uint32_t c = from; c < from + k; c++)
        s += x->count[c];
    return s;
}

/* Opens k entries at position at of x (those from at on move up). */
static void entries_open(struct ol_node *x, uint32_t at, uint32_t k)
{
    uint32_t tail = x->n - at;
    memmove(x->id + at + k, x->id + at, tail * sizeof *x->id);
    if (!is_leaf(x)) {
        memmove(x->kid + at + k, x->kid + at, tail * sizeof *x->kid);
        memmove(x->count + at + k, x->count + at, tail * sizeof *x->count);
    }
    x->n += k;
}

/* Drops entries [at, at + k) of x. */
static void entries_drop(struct ol_node *x, uint32_t at, uint32_t k)
{
    uint32_t tail = x->n - at - k;
    memmove(x->id + at, x->id + at + k, tail * sizeof *x->id);
    if (!is_leaf(x)) {
        memmove(x->kid + at, x->kid + at + k, tail * sizeof *x->kid);
        memmove(x->count + at, x->count + at + k, tail * sizeof *x->count);
    }
    x->n -= k;
}

/* Copies entries [from, from + k) of src to position at of dst (room made). */
static void entries_copy(struct ol_node *dst, uint32_t at, const struct ol_node *src, uint32_t from,
                         uint32_t k)
{
    entries_open(dst, at, k);
    memcpy(dst->id + at, src->id + from, k * sizeof *dst->id);
    if (!is_leaf(dst)) {
        memcpy(dst->kid + at, src->kid + from, k * sizeof *dst->kid);
        memcpy(dst->count + at, src->count + from, k * sizeof *dst->count);
    }
}

/* ---- insertion ------------------------------------------------------------- */

/* Splits x's full child c in two: its second half becomes child c + 1.
 * Returns -1 (nothing changed) when out of memory. */
static int split_child(struct ol_node *x, uint32_t c)
{
    struct ol_node *y = x->kid[c];
    struct ol_node *z = node_new(is_leaf(y) ? LEAF_CAP : FAN, is_leaf(y));
    if (!z)
        return -1;
    uint32_t half = y->n / 2, k = y->n - half;
    entries_copy(z, 0, y, half, k);
    entries_drop(y, half, k);
    entries_open(x, c + 1, 1);
    x->kid[c + 1] = z;
    x->id[c + 1] = z->id[0];
    x->count[c + 1] = entries_size(z, 0, z->n);
    x->count[c] -= x->count[c + 1];
    return 0;
}

/* Inserts id at rank r under x, which is not full. */
static int insert_nonfull(struct ol_node *x, uint32_t r, uint32_t id)
{
    if (is_leaf(x)) {
        entries_open(x, r, 1);
        x->id[r] = id;
        return 0;
    }
    uint32_t c = 0; /* the child whose ranks, its end included, hold r */
    while (c + 1 < x->n && r > x->count[c])
        r -= x->count[c++];
    if (x->kid[c]->n == x->kid[c]->cap) {
        if (split_child(x, c) != 0)
            return -1;
        if (r > x->count[c])
            r -= x->count[c++];
    }
    if (insert_nonfull(x->kid[c], r, id) != 0)
        return -1;
    x->count[c]++;
    x->id[c] = x->kid[c]->id[0];
    return 0;
}

int gp_olist_insert_at(struct gp_olist *l, size_t i, uint32_t id)
{
    if (i > l->len || l->len == UINT32_MAX)
        return -1;
    if (!l->finger && !(l->finger = calloc(1, sizeof *l->finger)))
        return -1;
    l->ver++;
    struct ol_node *r = l->root;
    if (!r) {
        if (!(r = l->root = node_new(ROOT_CAP0, true)))
            return -1;
    } else if (is_leaf(r) && r->n == r->cap && r->cap < LEAF_CAP) { /* a short list grows */
        uint32_t cap = 2 * r->cap < LEAF_CAP ? 2 * r->cap : LEAF_CAP;
        struct ol_node *g = node_new(cap, true);
        if (!g)
            return -1;
        entries_copy(g, 0, r, 0, r->n);
        free(r);
        r = l->root = g;
    } else if (r->n == r->cap) { /* a full root: a new one above it, and a split */
        struct ol_node *top = node_new(FAN, false);
        if (!top)
            return -1;
        top->n = 1;
        top->kid[0] = r;
        top->id[0] = r->id[0];
        top->count[0] = l->len;
        if (split_child(top, 0) != 0) {
            free(top);
            return -1;
        }
        l->root = top;
        l->height++;
    }
    if (insert_nonfull(l->root, (uint32_t)i, id) != 0)
        return -1;
    l->len++;
    return 0;
}

/* ---- removal --------------------------------------------------------------- */

/* Child c of x fell below its minimum: merged with a sibling when the two
 * fit in one node, or else the two evened out. */
static void mend_child(struct ol_node *x, uint32_t c)
{
    uint32_t left = c + 1 < x->n ? c : c - 1;
    struct ol_node *a = x->kid[left], *b = x->kid[left + 1];
    if (a->n + b->n <= a->cap) {
        entries_copy(a, a->n, b, 0, b->n);
        x->count[left] += x->count[left + 1];
        entries_drop(x, left + 1, 1);
        free(b);
        return;
    }
    uint32_t half = (a->n + b->n) / 2;
    if (a->n < half) { /* b's first entries to a's end */
        uint32_t k = half - a->n, s = entries_size(b, 0, k);
        entries_copy(a, a->n, b, 0, k);
        entries_drop(b, 0, k);
        x->count[left] += s;
        x->count[left + 1] -= s;
    } else { /* a's last entries to b's front */
        uint32_t k = a->n - half, s = entries_size(a, half, k);
        entries_copy(b, 0, a, half, k);
        entries_drop(a, half, k);
        x->count[left] -= s;
        x->count[left + 1] += s;
    }
    x->id[left + 1] = b->id[0];
}

/* Removes the id at rank r under x. */
static void remove_under(struct ol_node *x, uint32_t r)
{
    if (is_leaf(x)) {
        entries_drop(x, r, 1);
        return;
    }
    uint32_t c = 0;
    while (r >= x->count[c])
        r -= x->count[c++];
    struct ol_node *y = x->kid[c];
    remove_under(y, r);
    x->count[c]--;
    x->id[c] = y->id[0]; /* y is not empty: it held more than its minimum */
    if (y->n < node_min(y))
        mend_child(x, c);
}

void gp_olist_remove_at(struct gp_olist *l, size_t i)
{
    if (i >= l->len)
        return;
    l->ver++;
    remove_under(l->root, (uint32_t)i);
    l->len--;
    struct ol_node *r = l->root;
    if (!is_leaf(r) && r->n == 1) { /* the root's one child is the root */
        l->root = r->kid[0];
        free(r);
        l->height--;
    } else if (r->n == 0) {
        free(r);
        l->root = NULL;
    }
}

/* ---- reading --------------------------------------------------------------- */

uint32_t gp_olist_at(const struct gp_olist *l, size_t i)
{
    if (i >= l->len)
        return UINT32_MAX;
    struct ol_finger *f = l->finger; /* a cache: written through a const list */
    if (f->leaf && f->ver == l->ver && i >= f->first && i - f->first < f->leaf->n)
        return f->leaf->id[i - f->first];
    const struct ol_node *x = l->root;
    uint32_t r = (uint32_t)i;
    while (!is_leaf(x)) {
        uint32_t c = 0;
        while (r >= x->count[c])
            r -= x->count[c++];
        x = x->kid[c];
    }
    f->leaf = x;
    f->first = (uint32_t)i - r;
    f->ver = l->ver;
    return x->id[r];
}

uint32_t gp_olist_first(const struct gp_olist *l)
{
    return l->root ? l->root->id[0] : UINT32_MAX;
}

uint32_t gp_olist_last(const struct gp_olist *l)
{
    const struct ol_node *x = l->root;
    if (!x)
        return UINT32_MAX;
    while (!is_leaf(x))
        x = x->kid[x->n - 1];
    return x->id[x->n - 1];
}

/* The first of x's n entries whose id is not below. */
static uint32_t first_not_below(const struct ol_node *x, bool (*below)(const void *, uint32_t),
                                const void *ctx)
{
    uint32_t lo = 0, hi = x->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (below(ctx, x->id[mid]))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t gp_olist_count(const struct gp_olist *l, bool (*below)(const void *ctx, uint32_t id),
                      const void *ctx)
{
    const struct ol_node *x = l->root;
    size_t n = 0;
    if (!x)
        return 0;
    while (!is_leaf(x)) {
        /* the last child whose first id is below holds the boundary;
         * every child before it is below all through */
        uint32_t c = first_not_below(x, below, ctx);
        if (c == 0)
            return n;
        for (uint32_t j = 0; j + 1 < c; j++)
            n += x->count[j];
        x = x->kid[c - 1];
    }
    return n + first_not_below(x, below, ctx);
}

void gp_olist_free(struct gp_olist *l)
{
    if (l->root)
        node_free(l->root);
    free(l->finger);
    uint64_t ver = l->ver + 1;
    memset(l, 0, sizeof *l);
    l->ver = ver;
}

static size_t node_bytes(const struct ol_node *x)
{
    size_t b = sizeof *x + (size_t)x->cap * sizeof(uint32_t);
    if (!is_leaf(x)) {
        b += (size_t)x->cap * (sizeof(struct ol_node *) + sizeof(uint32_t));
        for (uint32_t c = 0; c < x->n; c++)
            b += node_bytes(x->kid[c]);
    }
    return b;
}

size_t gp_olist_bytes(const struct gp_olist *l)
{
    return (l->root ? node_bytes(l->root) : 0) + (l->finger ? sizeof *l->finger : 0);
}

/* Checks the subtree x at `depth` levels above the leaves; its size in *n. */
static bool node_valid(const struct ol_node *x, uint32_t depth, bool root, uint32_t *n)
{
    if (x->n > x->cap || (!root && x->n < node_min(x)) || x->n == 0)
        return false;
    if (is_leaf(x)) {
        *n = x->n;
        return depth == 0 && (root || x->cap == LEAF_CAP);
    }
    if (depth == 0 || x->cap != FAN || (root && x->n < 2))
        return false;
    uint32_t sum = 0;
    for (uint32_t c = 0; c < x->n; c++) {
        uint32_t k;
        if (!node_valid(x->kid[c], depth - 1, false, &k) || k != x->count[c] ||
            x->id[c] != x->kid[c]->id[0])
            return false;
        sum += k;
    }
    *n = sum;
    return true;
}

bool gp_olist_valid(const struct gp_olist *l)
{
    if (!l->root)
        return l->len == 0 && l->height == 0;
    if (!l->finger)
        return false;
    uint32_t n;
    return node_valid(l->root, l->height, true, &n) && n == l->len;
}
