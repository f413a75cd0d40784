/* kheap.c - the min-heap of (key, id) pairs with positions and the ordered
 * walk (kheap.h). */
#include "util/kheap.h"

#include <stdlib.h>

static bool item_less(const struct gp_kheap_item *a, const struct gp_kheap_item *b)
{
    if (a->key != b->key)
        return a->key < b->key;
    return a->id < b->id;
}

static void place(struct gp_kheap *h, size_t pos, struct gp_kheap_item it)
{
    h->items[pos] = it;
    if (h->moved)
        h->moved(h->ctx, it.id, pos);
}

static void sift_up(struct gp_kheap *h, size_t pos)
{
    struct gp_kheap_item it = h->items[pos];
    while (pos > 0) {
        size_t up = (pos - 1) / 2;
        if (!item_less(&it, &h->items[up]))
            break;
        place(h, pos, h->items[up]);
        pos = up;
    }
    place(h, pos, it);
}

static void sift_down(struct gp_kheap *h, size_t pos)
{
    struct gp_kheap_item it = h->items[pos];
    for (;;) {
        size_t m = 2 * pos + 1;
        if (m >= h->len)
            break;
        if (m + 1 < h->len && item_less(&h->items[m + 1], &h->items[m]))
            m++;
        if (!item_less(&h->items[m], &it))
            break;
        place(h, pos, h->items[m]);
        pos = m;
    }
    place(h, pos, it);
}

void gp_kheap_init(struct gp_kheap *h, void (*moved)(void *ctx, uint32_t id, size_t pos), void *ctx)
{
    *h = (struct gp_kheap){0};
    h->moved = moved;
    h->ctx = ctx;
}

void gp_kheap_free(struct gp_kheap *h)
{
    free(h->items);
    free(h->walk);
    gp_kheap_init(h, h->moved, h->ctx);
}

enum gp_err gp_kheap_push(struct gp_kheap *h, double key, uint32_t id)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        struct gp_kheap_item *items = realloc(h->items, cap * sizeof *items);
        if (!items)
            return GP_ENOMEM;
        h->items = items;
        h->cap = cap;
    }
    h->items[h->len++] = (struct gp_kheap_item){key, id};
    sift_up(h, h->len - 1);
    return GP_OK;
}

void gp_kheap_remove(struct gp_kheap *h, size_t pos)
{
    struct gp_kheap_item last = h->items[--h->len];
    if (pos == h->len)
        return;
    bool up = item_less(&last, &h->items[pos]);
    h->items[pos] = last;
    if (up)
        sift_up(h, pos);
    else
        sift_down(h, pos);
}

void gp_kheap_rekey(struct gp_kheap *h, size_t pos, double key)
{
    double old = h->items[pos].key;
    h->items[pos].key = key;
    if (key < old)
        sift_up(h, pos);
    else
        sift_down(h, pos);
}

/* ---- the ordered walk: a second heap over positions of the first ---------- */

static bool pos_less(const struct gp_kheap *h, size_t a, size_t b)
{
    return item_less(&h->items[a], &h->items[b]);
}

static void walk_push(struct gp_kheap *h, size_t pos)
{
    if (h->nwalk == h->walk_cap) {
        size_t cap = h->walk_cap ? 2 * h->walk_cap : 32;
        size_t *w = realloc(h->walk, cap * sizeof *w);
        if (!w) {
            h->walk_oom = true;
            return;
        }
        h->walk = w;
        h->walk_cap = cap;
    }
    size_t i = h->nwalk++;
    while (i > 0 && pos_less(h, pos, h->walk[(i - 1) / 2])) {
        h->walk[i] = h->walk[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->walk[i] = pos;
}

void gp_kheap_walk_begin(struct gp_kheap *h)
{
    h->nwalk = 0;
    h->walk_oom = false;
    if (h->len > 0)
        walk_push(h, 0);
}

bool gp_kheap_walk_next(struct gp_kheap *h, struct gp_kheap_item *out)
{
    if (h->nwalk == 0 || h->walk_oom)
        return false;
    size_t top = h->walk[0], last = h->walk[--h->nwalk], i = 0;
    for (;;) { /* the last position sifted down from the root */
        size_t m = 2 * i + 1;
        if (m >= h->nwalk)
            break;
        if (m + 1 < h->nwalk && pos_less(h, h->walk[m + 1], h->walk[m]))
            m++;
        if (!pos_less(h, h->walk[m], last))
            break;
        h->walk[i] = h->walk[m];
        i = m;
    }
    if (h->nwalk > 0)
        h->walk[i] = last;
    *out = h->items[top];
    /* an entry's children are the only ones that may come next after it */
    if (2 * top + 1 < h->len)
        walk_push(h, 2 * top + 1);
    if (2 * top + 2 < h->len)
        walk_push(h, 2 * top + 2);
    return !h->walk_oom;
}
