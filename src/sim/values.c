/* values.c - chunked storage of a run's per-pod figures (values.h).
 * Chunks are mapped pages of their own (mmap), not heap blocks: a chunk
 * freed while the values are gathered goes back to the system at once,
 * so the gathered copy takes the room the chunks gave up (a heap block
 * freed in the middle of the heap stays resident), and pages of a chunk
 * not yet written take no memory. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (mmap(2)) */
#include "sim/values.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK ((size_t)1 << GP_SIM_VALUES_SHIFT)

int gp_sim_values_push(struct gp_sim_values *s, double v)
{
    size_t off = s->n & (CHUNK - 1);
    if (off == 0 && (s->n >> GP_SIM_VALUES_SHIFT) == s->nchunks) {
        if (s->nchunks == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 4;
            double **t = realloc(s->chunks, cap * sizeof *t);
            if (!t)
                return -1;
            s->chunks = t;
            s->cap = cap;
        }
        void *m = mmap(NULL, CHUNK * sizeof(double), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -1;
        double *c = m;
        s->chunks[s->nchunks++] = c;
    }
    s->chunks[s->n >> GP_SIM_VALUES_SHIFT][off] = v;
    s->n++;
    return 0;
}

void gp_sim_values_drain(struct gp_sim_values *s, double *dst)
{
    for (size_t c = 0, done = 0; c < s->nchunks; c++) {
        size_t k = s->n - done < CHUNK ? s->n - done : CHUNK;
        if (k)
            memcpy(dst + done, s->chunks[c], k * sizeof *dst);
        done += k;
        munmap(s->chunks[c], CHUNK * sizeof(double));
        s->chunks[c] = NULL;
    }
    gp_sim_values_free(s);
}

size_t gp_sim_values_bytes(const struct gp_sim_values *s)
{
    return s->nchunks * CHUNK * sizeof(double) + s->cap * sizeof(double *);
}

void gp_sim_values_free(struct gp_sim_values *s)
{
    for (size_t c = 0; c < s->nchunks; c++)
        if (s->chunks[c])
            munmap(s->chunks[c], CHUNK * sizeof(double));
    free(s->chunks);
    memset(s, 0, sizeof *s);
}
