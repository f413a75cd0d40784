/* idtab.h - records under dense ids (0, 1, 2, ... in the order they are
 * added, never reused) that can be released one by one: the records live
 * in chunks of 2^shift, and a chunk is freed once every id in it has been
 * issued and released, so the memory held is bounded by the records still
 * alive (and those that share their chunks), not by the ids ever issued.
 * A record's address stays the same while it lives. The table owns its
 * chunks (malloc); free with gp_idtab_free.
 *
 *   struct gp_idtab t;
 *   gp_idtab_init(&t, sizeof(struct rec), 6);
 *   uint32_t id; struct rec *r = gp_idtab_add(&t, &id);   // zeroed; NULL: no memory
 *   r = gp_idtab_get(&t, id);                              // NULL once released
 *   gp_idtab_release(&t, id);
 */
#ifndef GP_UTIL_IDTAB_H
#define GP_UTIL_IDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_idtab {
    size_t size;           /* bytes per record */
    unsigned shift;        /* 2^shift records per chunk */
    size_t header;         /* bytes before a chunk's records: its live count and bit set */
    unsigned char **chunk; /* chunk[head + c - base] holds chunk number c; NULL: freed */
    size_t head, len, cap; /* chunk[head..len) is the window of chunks */
    unsigned char **win;   /* chunk + head */
    size_t nwin;           /* len - head */
    uint32_t base;         /* the chunk number of chunk[head] */
    uint32_t n;            /* ids issued */
    size_t nchunks;        /* chunks allocated now */
};

void gp_idtab_init(struct gp_idtab *t, size_t size, unsigned shift);
void gp_idtab_free(struct gp_idtab *t);
/* A zeroed record for the next id (*id); NULL when out of memory or out of
 * ids. */
void *gp_idtab_add(struct gp_idtab *t, uint32_t *id);
/* Takes back the record the last gp_idtab_add made (its id is issued
 * again by the next add). */
void gp_idtab_unadd(struct gp_idtab *t);
/* Releases the record of a live id: gp_idtab_get returns NULL for it from
 * now on. Nothing for an id already released or never issued. */
void gp_idtab_release(struct gp_idtab *t, uint32_t id);
/* Bytes of records the table holds memory for now (whole chunks). */
size_t gp_idtab_held_bytes(const struct gp_idtab *t);
/* The first id that may be live (every id below it is released). */
uint32_t gp_idtab_first(const struct gp_idtab *t);

/* The record of id; NULL when released or never issued. */
static inline void *gp_idtab_get(const struct gp_idtab *t, uint32_t id)
{
    size_t c = (size_t)(id >> t->shift) - t->base; /* wraps below the window */
    if (c >= t->nwin || !t->win[c])
        return NULL;
    unsigned char *k = t->win[c];
    uint32_t i = id & ((1u << t->shift) - 1);
    if (!(k[sizeof(uint32_t) + (i >> 3)] >> (i & 7) & 1)) /* its bit: live (an id not yet issued
                                                           * has none) */
        return NULL;
    return k + t->header + (size_t)i * t->size;
}

/* The same without the test of the record's own bit: the record of an id
 * whose chunk is still held, released or not (its content is as it was
 * left), NULL when the chunk is freed - for callers that mark released
 * records themselves and need the fastest look-up. */
static inline void *gp_idtab_get_raw(const struct gp_idtab *t, uint32_t id)
{
    size_t c = (size_t)(id >> t->shift) - t->base;
    unsigned char *k = c < t->nwin ? t->win[c] : NULL;
    return k ? k + t->header + (size_t)(id & ((1u << t->shift) - 1)) * t->size : NULL;
}

#endif
