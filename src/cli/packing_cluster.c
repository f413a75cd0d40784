/* packing_cluster.c - the cluster variants of `gpuplane packing`: every
 * node's CPU scaled (--cpu-scale), and a seeded random sample of the nodes
 * (--node-sample), so that a policy can be checked on clusters it was not
 * tuned on (docs/fragmentation.md, "Off the tuned setting"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/packing.h"
#include "util/rng.h"

/* Mixed into the run's seed so that the sample is a stream of its own. */
#define SAMPLE_STREAM 0x6e6f64652d73616dULL /* "node-sam" */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t gp_packing_sample_size(size_t nnodes, double node_sample)
{
    if (node_sample >= 1 || nnodes == 0)
        return nnodes;
    double k = floor(node_sample * (double)nnodes + 0.5);
    return k < 1 ? 1 : (size_t)k;
}

enum gp_err gp_packing_cluster(const struct gp_cluster *base, double cpu_scale, double node_sample,
                               uint64_t seed, struct gp_arena *a, struct gp_cluster *out,
                               struct gp_diag *d)
{
    *out = *base;
    size_t n = base->nnodes, k = gp_packing_sample_size(n, node_sample);
    size_t *pick = gp_arena_alloc(a, (n ? n : 1) * sizeof *pick);
    struct gp_node_spec *nodes = gp_arena_alloc(a, (n ? n : 1) * sizeof *nodes);
    struct gp_pool_spec *pools =
        gp_arena_alloc(a, (base->npools ? base->npools : 1) * sizeof *pools);
    if (!pick || !nodes || !pools)
        return gp_diag_set(d, GP_ENOMEM, "packing: out of memory");
    for (size_t i = 0; i < n; i++)
        pick[i] = i;
    if (k < n) { /* the first k of a seeded partial shuffle, in file order */
        struct gp_rng rng;
        gp_rng_seed(&rng, seed ^ SAMPLE_STREAM);
        for (size_t i = 0; i < k; i++) {
            size_t j = i + (size_t)gp_rng_below(&rng, n - i);
            size_t t = pick[i];
            pick[i] = pick[j];
            pick[j] = t;
        }
        qsort(pick, k, sizeof *pick, cmp_size);
    }
    if (base->npools)
        memcpy(pools, base->pools, base->npools * sizeof *pools);
    for (size_t p = 0; p < base->npools; p++) {
        pools[p].cpu_milli = llround((double)pools[p].cpu_milli * cpu_scale);
        if (k < n)
            pools[p].count = 0;
    }
    for (size_t i = 0; i < k; i++) {
        nodes[i] = base->nodes[pick[i]];
        nodes[i].cpu_milli = llround((double)nodes[i].cpu_milli * cpu_scale);
        for (size_t p = 0; k < n && nodes[i].pool && p < base->npools; p++)
            if (pools[p].name && strcmp(pools[p].name, nodes[i].pool) == 0) {
                pools[p].count++;
                break;
            }
    }
    out->nodes = nodes;
    out->nnodes = k;
    out->pools = pools;
    return GP_OK;
}
