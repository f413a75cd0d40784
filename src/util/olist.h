/* olist.h - a sequence of uint32 ids in an order the caller keeps, with
 * insert, remove and read by rank in O(log n): a B+ tree whose leaves hold
 * the ids in sequence and whose inner nodes hold, per child, the number of
 * ids under it (to go to a rank) and its first id (to search the order).
 *
 * The list knows no order of its own: the caller inserts at the rank its
 * order gives, found with gp_olist_count and a predicate that holds for a
 * prefix of the sequence (the ids that go before the new one). The engine's
 * pending lists (src/engine/pending.c, gp_eng_plist_*) are these lists, so
 * that an arrival or a departure anywhere in a queue of 50,000 pods costs
 * a few dozen comparisons and moves, not a move of every id behind it.
 *
 *   struct gp_olist l = {0};                      // empty
 *   gp_olist_insert_at(&l, 0, 7);                 // 0, or -1: no memory
 *   size_t r = gp_olist_count(&l, goes_before, ctx);
 *   for (size_t i = 0; i < gp_olist_len(&l); i++) use(gp_olist_at(&l, i));
 *   gp_olist_remove_at(&l, r);
 *   gp_olist_free(&l);
 *
 * Reading rank after rank costs O(1) each: the list keeps a finger on the
 * leaf it read last (a cache, updated even through a const list: a list
 * is not to be read by two threads at once). A leaf holds up to 64 ids and
 * at least 16 (the root excepted, which starts small: a short list costs
 * tens of bytes); an inner node up to 32 children and at least 8. */
#ifndef GP_UTIL_OLIST_H
#define GP_UTIL_OLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ol_node;
struct ol_finger;

struct gp_olist {
    struct ol_node *root; /* NULL: empty */
    uint32_t len;         /* ids */
    uint32_t height;      /* levels of inner nodes above the leaves */
    uint64_t ver;         /* bumped by every change */
    /* the leaf gp_olist_at read last (made with the first id) */
    struct ol_finger *finger;
};

static inline size_t gp_olist_len(const struct gp_olist *l)
{
    return l->len;
}

/* The id at rank i; UINT32_MAX when i >= len. */
uint32_t gp_olist_at(const struct gp_olist *l, size_t i);

/* The first and the last id in O(1) and O(log n) (an inner node keeps
 * its children's first ids); UINT32_MAX when empty. */
uint32_t gp_olist_first(const struct gp_olist *l);
uint32_t gp_olist_last(const struct gp_olist *l);

/* Inserts id at rank i (<= len): the ids from rank i on move up one.
 * Returns 0, or -1 when out of memory or i > len (the sequence is then as
 * it was). */
int gp_olist_insert_at(struct gp_olist *l, size_t i, uint32_t id);

/* Removes the id at rank i (nothing when i >= len). */
void gp_olist_remove_at(struct gp_olist *l, size_t i);

/* The number of leading ids x for which below(ctx, x) holds; below must
 * hold for a prefix of the sequence and not after it (e.g. "x goes before
 * y" in the order the list is kept in). O(log n) calls of below. */
size_t gp_olist_count(const struct gp_olist *l, bool (*below)(const void *ctx, uint32_t id),
                      const void *ctx);

/* Empties the list, giving its memory back. */
void gp_olist_free(struct gp_olist *l);

/* Bytes the list holds (its nodes). */
size_t gp_olist_bytes(const struct gp_olist *l);

/* Whether the tree is well formed (counts, first ids, fill, one depth for
 * every leaf): for tests. */
bool gp_olist_valid(const struct gp_olist *l);

#endif
