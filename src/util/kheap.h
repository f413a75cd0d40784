/* kheap.h - a binary min-heap of (key, id) pairs, ordered by key then id,
 * that knows where each entry is (so an entry can be removed or re-keyed
 * in O(log n)) and can be read in order without being taken apart: a walk
 * visits the k smallest entries in O(k log k), leaving the heap as it is.
 * Where an entry sits is told to the owner through `moved` (it stores the
 * position, e.g. in the record of `id`), so the heap needs no table by id.
 *
 *   struct gp_kheap h;
 *   gp_kheap_init(&h, on_moved, ctx);          // on_moved(ctx, id, pos)
 *   gp_kheap_push(&h, 12.5, 7);                // GP_OK or GP_ENOMEM
 *   gp_kheap_remove(&h, pos_of_7);
 *   gp_kheap_walk_begin(&h);
 *   for (struct gp_kheap_item it; gp_kheap_walk_next(&h, &it);) ...
 *   gp_kheap_free(&h);
 */
#ifndef GP_UTIL_KHEAP_H
#define GP_UTIL_KHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct gp_kheap_item {
    double key;
    uint32_t id;
};

struct gp_kheap {
    struct gp_kheap_item *items;
    size_t len, cap;
    /* told the new position of each entry that moves (or is added) */
    void (*moved)(void *ctx, uint32_t id, size_t pos);
    void *ctx;
    /* a walk's frontier: positions whose parent was visited, as a heap */
    size_t *walk;
    size_t nwalk, walk_cap;
    bool walk_oom; /* the frontier could not grow: the walk ended early */
};

void gp_kheap_init(struct gp_kheap *h, void (*moved)(void *ctx, uint32_t id, size_t pos),
                   void *ctx);
void gp_kheap_free(struct gp_kheap *h);
enum gp_err gp_kheap_push(struct gp_kheap *h, double key, uint32_t id);
/* Removes the entry at position pos (< len). */
void gp_kheap_remove(struct gp_kheap *h, size_t pos);
/* Gives the entry at pos a new key. */
void gp_kheap_rekey(struct gp_kheap *h, size_t pos, double key);
/* Starts a walk of the entries in order (key, then id); the heap must not
 * change until the walk is done. */
void gp_kheap_walk_begin(struct gp_kheap *h);
/* The next entry of the walk; false when every entry was visited (or the
 * frontier ran out of memory: h->walk_oom). */
bool gp_kheap_walk_next(struct gp_kheap *h, struct gp_kheap_item *out);

#endif
