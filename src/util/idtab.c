/* idtab.c - records under dense ids, released one by one, in chunks freed
 * when all their ids are released (idtab.h). A chunk is its count of live
 * records (uint32_t), a bit per record (set while it lives), padding to 16
 * bytes, then the records. */
#include "util/idtab.h"

#include <stdlib.h>
#include <string.h>

void gp_idtab_init(struct gp_idtab *t, size_t size, unsigned shift)
{
    memset(t, 0, sizeof *t);
    t->size = size;
    t->shift = shift;
    size_t bits = (((size_t)1 << shift) + 7) >> 3;
    t->header = (sizeof(uint32_t) + bits + 15) / 16 * 16;
}

void gp_idtab_free(struct gp_idtab *t)
{
    for (size_t i = t->head; i < t->len; i++)
        free(t->chunk[i]);
    free(t->chunk);
    t->chunk = t->win = NULL;
    t->head = t->len = t->cap = t->nchunks = t->nwin = 0;
}

static uint32_t *live_of(unsigned char *k)
{
    return (uint32_t *)(void *)k;
}

static void window_set(struct gp_idtab *t)
{
    t->win = t->chunk + t->head;
    t->nwin = t->len - t->head;
}

void *gp_idtab_add(struct gp_idtab *t, uint32_t *id)
{
    if (t->n == UINT32_MAX)
        return NULL;
    uint32_t c = t->n >> t->shift;
    if (t->len == t->head) { /* an empty window starts at the new chunk */
        t->head = t->len = 0;
        t->base = c;
    }
    if (c - t->base == t->len - t->head) { /* a new chunk at the end of the window */
        if (t->len == t->cap) {
            if (t->head > 0) { /* room before the window: move it down */
                memmove(t->chunk, t->chunk + t->head, (t->len - t->head) * sizeof *t->chunk);
                t->len -= t->head;
                t->head = 0;
            } else {
                size_t cap = t->cap ? 2 * t->cap : 16;
                unsigned char **chunk = realloc(t->chunk, cap * sizeof *chunk);
                if (!chunk)
                    return NULL;
                t->chunk = chunk;
                t->cap = cap;
            }
        }
        unsigned char *k = malloc(t->header + (t->size << t->shift));
        if (!k)
            return NULL;
        memset(k, 0, t->header);
        t->chunk[t->len++] = k;
        t->nchunks++;
        window_set(t);
    }
    unsigned char *k = t->chunk[t->head + (c - t->base)];
    uint32_t i = t->n & ((1u << t->shift) - 1);
    k[sizeof(uint32_t) + (i >> 3)] |= (unsigned char)(1u << (i & 7));
    (*live_of(k))++;
    unsigned char *r = k + t->header + (size_t)i * t->size;
    memset(r, 0, t->size);
    if (id)
        *id = t->n;
    t->n++;
    return r;
}

/* Frees chunk i of the window when every id of it is issued and released,
 * and drops freed chunks from the front of the window. */
static void chunk_maybe_free(struct gp_idtab *t, size_t i)
{
    unsigned char *k = t->chunk[i];
    uint64_t end = ((uint64_t)t->base + (i - t->head) + 1) << t->shift;
    if (!k || *live_of(k) > 0 || end > t->n)
        return;
    free(k);
    t->chunk[i] = NULL;
    t->nchunks--;
    while (t->head < t->len && !t->chunk[t->head]) {
        t->head++;
        t->base++;
    }
    window_set(t);
}

void gp_idtab_release(struct gp_idtab *t, uint32_t id)
{
    if (!gp_idtab_get(t, id))
        return;
    size_t ci = t->head + ((id >> t->shift) - t->base);
    unsigned char *k = t->chunk[ci];
    uint32_t i = id & ((1u << t->shift) - 1);
    k[sizeof(uint32_t) + (i >> 3)] &= (unsigned char)~(1u << (i & 7));
    (*live_of(k))--;
    chunk_maybe_free(t, ci);
}

void gp_idtab_unadd(struct gp_idtab *t)
{
    if (t->n == 0)
        return;
    uint32_t id = t->n - 1;
    size_t ci = t->head + ((id >> t->shift) - t->base);
    unsigned char *k = t->chunk[ci];
    uint32_t i = id & ((1u << t->shift) - 1);
    k[sizeof(uint32_t) + (i >> 3)] &= (unsigned char)~(1u << (i & 7));
    (*live_of(k))--;
    t->n--;
    if (i == 0) { /* it was the chunk's first record: the chunk goes */
        free(k);
        t->len--;
        t->nchunks--;
        window_set(t);
    }
}

size_t gp_idtab_held_bytes(const struct gp_idtab *t)
{
    return t->nchunks * (t->header + (t->size << t->shift));
}

uint32_t gp_idtab_first(const struct gp_idtab *t)
{
    return t->len > t->head ? t->base << t->shift : t->n;
}
