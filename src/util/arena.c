/* arena.c - bump allocator in growing blocks; a large array that grows
 * has a block of its own, reallocated in place. */
#include "util/arena.h"

#include <stdarg.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_arena_block {
    struct gp_arena_block *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

void gp_arena_init(struct gp_arena *a)
{
    a->head = NULL;
    a->block_size = 64 * 1024;
}

void gp_arena_free(struct gp_arena *a)
{
    struct gp_arena_block *b = a->head;
    while (b) {
        struct gp_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

void *gp_arena_alloc(struct gp_arena *a, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX - sizeof(struct gp_arena_block) - align)
        return NULL;
    size = (size + align - 1) & ~(align - 1);
    if (size == 0)
        size = align;
    struct gp_arena_block *b = a->head;
    if (!b || b->cap - b->used < size) {
        size_t cap = a->block_size;
        if (cap < size)
            cap = size;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
        if (a->block_size < 4u * 1024 * 1024)
            a->block_size *= 2;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void gp_arena_adopt(struct gp_arena *dst, struct gp_arena *src)
{
    struct gp_arena_block *first = src->head, *last = first;
    if (!first)
        return;
    while (last->next)
        last = last->next;
    if (dst->head) { /* behind dst's newest block, which keeps taking allocations */
        last->next = dst->head->next;
        dst->head->next = first;
    } else {
        dst->head = first;
    }
    src->head = NULL;
}

size_t gp_arena_nblocks(const struct gp_arena *a)
{
    size_t n = 0;
    for (const struct gp_arena_block *b = a->head; b; b = b->next)
        n++;
    return n;
}

size_t gp_arena_bytes(const struct gp_arena *a)
{
    size_t n = 0;
    for (const struct gp_arena_block *b = a->head; b; b = b->next)
        n += sizeof *b + b->cap;
    return n;
}

/* A growing allocation at least this large (bytes) gets a block of its own. */
#define GROW_OWN_MIN ((size_t)16 * 1024)

/* A block of its own for size bytes (rounded already), not zeroed, linked
 * behind the head so that the head's free room stays in use. */
static void *own_block(struct gp_arena *a, size_t size)
{
    struct gp_arena_block *b = malloc(sizeof *b + size);
    if (!b)
        return NULL;
    b->used = b->cap = size;
    if (a->head) {
        b->next = a->head->next;
        a->head->next = b;
    } else {
        b->next = NULL;
        a->head = b;
    }
    return b->data;
}

void *gp_arena_grow(struct gp_arena *a, void *p, size_t old_size, size_t new_size)
{
    const size_t align = alignof(max_align_t);
    if (new_size > SIZE_MAX - sizeof(struct gp_arena_block) - align)
        return NULL;
    size_t old = (old_size + align - 1) & ~(align - 1);
    size_t want = (new_size + align - 1) & ~(align - 1);
    if (p && want <= old)
        return p;
    for (struct gp_arena_block **link = &a->head; p && *link; link = &(*link)->next) {
        struct gp_arena_block *b = *link;
        if ((void *)b->data != p)
            continue;
        if (b->used != old || b->cap != old)
            break; /* it shares its block: copied below */
        struct gp_arena_block *nb = realloc(b, sizeof *nb + want);
        if (!nb)
            return NULL;
        nb->used = nb->cap = want;
        *link = nb;
        return nb->data;
    }
    void *q = want < GROW_OWN_MIN ? gp_arena_alloc(a, new_size) : own_block(a, want);
    if (q && p && old_size)
        memcpy(q, p, old_size);
    return q;
}

void *gp_arena_memdup(struct gp_arena *a, const void *p, size_t size)
{
    void *q = gp_arena_alloc(a, size);
    if (q && size)
        memcpy(q, p, size);
    return q;
}

char *gp_arena_strndup(struct gp_arena *a, const char *s, size_t n)
{
    char *q = gp_arena_alloc(a, n + 1);
    if (q) {
        memcpy(q, s, n);
        q[n] = '\0';
    }
    return q;
}

char *gp_arena_strdup(struct gp_arena *a, const char *s)
{
    return gp_arena_strndup(a, s, strlen(s));
}

char *gp_arena_printf(struct gp_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *q = gp_arena_alloc(a, (size_t)n + 1);
    if (!q)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(q, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return q;
}
