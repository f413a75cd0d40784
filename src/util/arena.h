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
/* Grows p (old_size bytes from gp_arena_alloc or gp_arena_grow; NULL: a
 * new allocation) to new_size bytes, keeping its content; the bytes past
 * old_size are not zeroed. From 16 KiB on, the allocation has a block of
 * its own, and a block of its own is reallocated in place of the block:
 * a large array that doubles leaves no old copies behind (and the system
 * extends it without copying); a smaller one is copied into a new
 * allocation (the old one stays until gp_arena_free). Pointers into p are
 * invalid afterwards. NULL when out of memory (p is then still valid). */
void *gp_arena_grow(struct gp_arena *a, void *p, size_t old_size, size_t new_size);
/* How many blocks the arena holds, and their bytes (headers included):
 * what it costs the process (tests, memory accounting). */
size_t gp_arena_nblocks(const struct gp_arena *a);
size_t gp_arena_bytes(const struct gp_arena *a);
/* Moves every block of src into dst (src is left empty, dst keeps
 * allocating where it was): what was allocated in src now lives until
 * gp_arena_free(dst). */
void gp_arena_adopt(struct gp_arena *dst, struct gp_arena *src);
/* Copies of strings and memory into the arena. */
char *gp_arena_strdup(struct gp_arena *a, const char *s);
char *gp_arena_strndup(struct gp_arena *a, const char *s, size_t n);
void *gp_arena_memdup(struct gp_arena *a, const void *p, size_t size);
char *gp_arena_printf(struct gp_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
