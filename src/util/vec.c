/* vec.c - growth policy for GP_VEC. */
#include "util/vec.h"

#include <stdint.h>
#include <stdlib.h>

int gp_vec_grow(void **items, size_t *cap, size_t need, size_t elem)
{
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return -1;
        ncap *= 2;
    }
    void *p = realloc(*items, ncap * elem);
    if (!p)
        return -1;
    *items = p;
    *cap = ncap;
    return 0;
}
