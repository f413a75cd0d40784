/* arena.h - a bump allocator: everything one simulation run (or one loaded
 * file) allocates lives in one arena and is freed at once. */
#ifndef GP_UTIL_ARENA_H
#define GP_UTIL_ARENA_H

#include <stddef.h>

struct gp_arena_block;

struct gp_arena {
    struct gp_arena_block *head; /* owned; newest block first */
    size_t block_size;
};

void gp_arena_init(struct gp_arena *a);
/* Frees every block; the arena may be reused afterwards. */
void gp_arena_free(struct gp_arena *a);
/* Zeroed memory aligned for any type; NULL only when out of memory. */
void *gp_arena_alloc(struct gp_arena *a, size_t size);
/* Copies of strings and memory into the arena. */
char *gp_arena_strdup(struct gp_arena *a, const char *s);
char *gp_arena_strndup(struct gp_arena *a, const char *s, size_t n);
void *gp_arena_memdup(struct gp_arena *a, const void *p, size_t size);
char *gp_arena_printf(struct gp_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
