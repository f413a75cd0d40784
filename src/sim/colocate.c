/* colocate.c - the pods of each time-sliced GPU and their common rate
 * (colocate.h). */
#include "sim/colocate.h"

#include <stdlib.h>
#include <string.h>

void gp_coloc_init(struct gp_coloc *c)
{
    memset(c, 0, sizeof *c);
}

void gp_coloc_free(struct gp_coloc *c)
{
    for (size_t i = 0; i < c->gpus.len; i++)
        GP_VEC_FREE(&c->gpus.items[i].members);
    GP_VEC_FREE(&c->gpus);
    GP_VEC_FREE(&c->base);
    memset(c, 0, sizeof *c);
}

int gp_coloc_join(struct gp_coloc *c, uint32_t node, uint32_t ngpus, uint32_t gpu, uint32_t id,
                  double demand_milli, uint32_t *index)
{
    while (c->base.len <= node)
        if (GP_VEC_PUSH(&c->base, GP_COLOC_NONE) != 0)
            return -1;
    if (c->base.items[node] == GP_COLOC_NONE) { /* the node's GPUs, on first use */
        uint32_t first = (uint32_t)c->gpus.len;
        for (uint32_t g = 0; g < ngpus; g++) {
            struct gp_coloc_gpu empty;
            memset(&empty, 0, sizeof empty);
            if (GP_VEC_PUSH(&c->gpus, empty) != 0)
                return -1;
        }
        c->base.items[node] = first;
    }
    uint32_t i = c->base.items[node] + gpu;
    struct gp_coloc_gpu *g = &c->gpus.items[i];
    if (GP_VEC_PUSH(&g->members, id) != 0)
        return -1;
    g->demand_milli += demand_milli;
    *index = i;
    return 0;
}

void gp_coloc_leave(struct gp_coloc *c, uint32_t index, uint32_t id, double demand_milli)
{
    struct gp_coloc_gpu *g = &c->gpus.items[index];
    for (size_t k = 0; k < g->members.len; k++)
        if (g->members.items[k] == id) {
            g->members.items[k] = g->members.items[--g->members.len];
            g->demand_milli -= demand_milli;
            break;
        }
    if (g->members.len == 0)
        g->demand_milli = 0; /* no drift from sums of doubles */
}

const uint32_t *gp_coloc_members(const struct gp_coloc *c, uint32_t index, size_t *n)
{
    *n = c->gpus.items[index].members.len;
    return c->gpus.items[index].members.items;
}

double gp_coloc_rate(const struct gp_coloc *c, uint32_t index)
{
    double d = c->gpus.items[index].demand_milli;
    return d > 1000 ? 1000 / d : 1;
}
