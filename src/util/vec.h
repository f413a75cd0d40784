/* vec.h - a growable array of any element type, as a macro over a struct:
 *   struct { struct gp_pod *items; size_t len, cap; } pods = {0};
 *   if (GP_VEC_PUSH(&pods, pod) != 0) ... out of memory
 *   free(pods.items);
 * The array owns its heap buffer; elements are copied by value. */
#ifndef GP_UTIL_VEC_H
#define GP_UTIL_VEC_H

#include <stddef.h>

/* Grows *items to hold at least `need` elements of `elem` bytes. 0 or -1. */
int gp_vec_grow(void **items, size_t *cap, size_t need, size_t elem);

#define GP_VEC(type)                                                                               \
    struct {                                                                                       \
        type *items;                                                                               \
        size_t len, cap;                                                                           \
    }

#define GP_VEC_RESERVE(v, n)                                                                       \
    ((n) <= (v)->cap ? 0 : gp_vec_grow((void **)&(v)->items, &(v)->cap, (n), sizeof *(v)->items))

#define GP_VEC_PUSH(v, x)                                                                          \
    (GP_VEC_RESERVE((v), (v)->len + 1) != 0 ? -1 : ((v)->items[(v)->len++] = (x), 0))

#define GP_VEC_FREE(v)                                                                             \
    do {                                                                                           \
        free((v)->items);                                                                          \
        (v)->items = NULL;                                                                         \
        (v)->len = (v)->cap = 0;                                                                   \
    } while (0)

#endif
