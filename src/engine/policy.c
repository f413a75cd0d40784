/* policy.c - the registry of built-in placement policies, and the helpers
 * they share (GPU choices inside a node, pod kinds, per-node tables). */
#include "engine/policy.h"

#include <stdlib.h>
#include <string.h>

const struct gp_policy_ops *const gp_policies[] = {
    &gp_policy_random,      &gp_policy_best_fit,       &gp_policy_dot_product,
    &gp_policy_gpu_packing, &gp_policy_gpu_clustering, &gp_policy_spread,
    &gp_policy_fgd,         &gp_policy_fgd_pack,       NULL,
};

const struct gp_policy_ops *gp_policy_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; gp_policies[i]; i++)
        if (strcmp(gp_policies[i]->name, name) == 0)
            return gp_policies[i];
    return NULL;
}

bool gp_policy_gpu_fits(const struct gp_gpu *gpu, const struct gp_pod *pod)
{
    return gpu->milli_free >= pod->spec.gpu_milli && gpu->mem_free_mib >= pod->spec.gpu_mem_mib;
}

static bool is_share(const struct gp_pod *pod)
{
    return pod->spec.gpu_count == 1 && pod->spec.gpu_milli < GP_GPU_MILLI;
}

int gp_policy_pick_share_random(const struct gp_node *node, const struct gp_pod *pod,
                                struct gp_rng *rng, struct gp_pick *pick)
{
    if (!is_share(pod))
        return gp_engine_pick_default(node, pod, pick);
    uint32_t nfit = 0;
    for (uint32_t g = 0; g < node->spec.gpu_count; g++)
        nfit += gp_policy_gpu_fits(&node->gpu[g], pod);
    pick->ngpus = 0;
    if (nfit == 0)
        return -1;
    uint64_t k = gp_rng_below(rng, nfit);
    for (uint32_t g = 0; g < node->spec.gpu_count; g++) {
        if (!gp_policy_gpu_fits(&node->gpu[g], pod))
            continue;
        if (k-- == 0) {
            pick->ngpus = 1;
            pick->gpu[0] = (uint8_t)g;
            break;
        }
    }
    return 0;
}

int gp_policy_pick_share_worst(const struct gp_node *node, const struct gp_pod *pod,
                               struct gp_pick *pick)
{
    if (!is_share(pod))
        return gp_engine_pick_default(node, pod, pick);
    int best = -1;
    for (uint32_t g = 0; g < node->spec.gpu_count; g++) {
        if (!gp_policy_gpu_fits(&node->gpu[g], pod))
            continue;
        if (best < 0 || node->gpu[g].milli_free > node->gpu[best].milli_free)
            best = (int)g;
    }
    pick->ngpus = 0;
    if (best < 0)
        return -1;
    pick->ngpus = 1;
    pick->gpu[0] = (uint8_t)best;
    return 0;
}

unsigned gp_policy_pod_kind(const struct gp_pod *pod)
{
    uint32_t n = pod->spec.gpu_count;
    if (n == 0)
        return GP_POLICY_KIND_NONE;
    if (is_share(pod))
        return GP_POLICY_KIND_SHARE;
    if (n > GP_MAX_GPUS_PER_NODE) /* fits no node; keep the index in range */
        n = GP_MAX_GPUS_PER_NODE;
    return 1 + n;
}

void gp_policy_table_init(struct gp_policy_table *t, size_t elem_size)
{
    t->items = NULL;
    t->len = 0;
    t->elem_size = elem_size;
}

void gp_policy_table_free(struct gp_policy_table *t)
{
    free(t->items);
    t->items = NULL;
    t->len = 0;
}

void *gp_policy_table_at(struct gp_policy_table *t, uint32_t id)
{
    if (id >= t->len) {
        size_t len = t->len ? t->len : 64;
        while (len <= id)
            len *= 2;
        if (len > SIZE_MAX / t->elem_size)
            return NULL;
        unsigned char *items = realloc(t->items, len * t->elem_size);
        if (!items)
            return NULL;
        memset(items + t->len * t->elem_size, 0, (len - t->len) * t->elem_size);
        t->items = items;
        t->len = len;
    }
    return t->items + (size_t)id * t->elem_size;
}

const void *gp_policy_table_peek(const struct gp_policy_table *t, uint32_t id)
{
    return id < t->len ? t->items + (size_t)id * t->elem_size : NULL;
}
