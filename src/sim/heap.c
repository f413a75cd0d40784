/* heap.c - a binary min-heap of simulator events keyed by (time, seq). */
#include "sim/heap.h"

#include <stdlib.h>

#include "util/vec.h"

void gp_sim_heap_init(struct gp_sim_heap *h)
{
    h->items = NULL;
    h->len = h->cap = 0;
    h->next_seq = 0;
}

void gp_sim_heap_free(struct gp_sim_heap *h)
{
    free(h->items);
    gp_sim_heap_init(h);
}

static bool before(const struct gp_sim_event *x, const struct gp_sim_event *y)
{
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s;
    return x->seq < y->seq;
}

int gp_sim_heap_push(struct gp_sim_heap *h, double t_s, uint32_t kind, uint32_t a, uint32_t b)
{
    if (h->len == h->cap && gp_vec_grow((void **)&h->items, &h->cap, h->len + 1, sizeof *h->items))
        return -1;
    struct gp_sim_event ev = {.t_s = t_s, .seq = h->next_seq++, .kind = kind, .a = a, .b = b};
    size_t i = h->len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&ev, &h->items[parent]))
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = ev;
    return 0;
}

const struct gp_sim_event *gp_sim_heap_peek(const struct gp_sim_heap *h)
{
    return h->len ? &h->items[0] : NULL;
}

bool gp_sim_heap_pop(struct gp_sim_heap *h, struct gp_sim_event *out)
{
    if (h->len == 0)
        return false;
    *out = h->items[0];
    struct gp_sim_event last = h->items[--h->len];
    size_t n = h->len, i = 0;
    if (n == 0)
        return true;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h->items[c + 1], &h->items[c]))
            c++;
        if (!before(&h->items[c], &last))
            break;
        h->items[i] = h->items[c];
        i = c;
    }
    h->items[i] = last;
    return true;
}
