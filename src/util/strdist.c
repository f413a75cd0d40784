/* strdist.c - edit distances between names, for "did you mean" messages. */
#include "util/strdist.h"

#include <string.h>

unsigned gp_strdist(const char *a, const char *b)
{
    return gp_strdist_max(a, b, ~0u - 1);
}

unsigned gp_strdist_max(const char *a, const char *b, unsigned max)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > GP_STRDIST_MAX)
        n = GP_STRDIST_MAX;
    if (m > GP_STRDIST_MAX)
        m = GP_STRDIST_MAX;
    /* three rows of the dynamic programme: i-2, i-1 and i */
    unsigned rows[3][GP_STRDIST_MAX + 1];
    unsigned *two = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= m; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (unsigned)i;
        unsigned row_min = cur[0];
        for (size_t j = 1; j <= m; j++) {
            unsigned cost = a[i - 1] != b[j - 1];
            unsigned best = prev[j - 1] + cost;
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            cur[j] = best;
            if (best < row_min)
                row_min = best;
        }
        if (row_min > max)
            return max + 1; /* every later row is at least as far */
        unsigned *t = two;
        two = prev;
        prev = cur;
        cur = t;
    }
    return prev[m] <= max ? prev[m] : max + 1;
}

size_t gp_strdist_nearest(const char *key, const void *items, size_t n, size_t stride,
                          unsigned *dist)
{
    size_t best = 0;
    unsigned best_d = ~0u;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        memcpy(&name, (const char *)items + i * stride, sizeof name);
        unsigned d = gp_strdist(key, name);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    if (dist)
        *dist = best_d;
    return best;
}

bool gp_strdist_close(const char *key, unsigned dist)
{
    size_t len = strlen(key);
    if (dist <= 1)
        return len >= 3;
    return dist <= 3 && 4 * (size_t)dist <= len;
}
