/* arena.c - bump allocator in growing blocks. */
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
