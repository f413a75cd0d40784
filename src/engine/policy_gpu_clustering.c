/* policy_gpu_clustering.c - "gpu-clustering": the FGD authors'
 * GpuClusteringScore. Pods are grouped by kind (a GPU share, or k whole
 * GPUs; pods without GPU do not count) and a pod prefers, in four bands of
 * 25 points:
 *   a node that runs only pods of its own kind            75 + fullness
 *   a node that runs its kind among others                50 + fullness
 *   a node that runs no GPU pod                           25 + fullness
 *   a node that runs only other kinds                      0 + fullness
 * where fullness = 25 * (8000 - the node's free GPU-milli) / 8000, in
 * integers: against the largest node, so small nodes count as fuller. Pods
 * without GPU score 0 everywhere. The GPUs are gp_engine_pick_default's.
 *
 * The kinds on each node are counted incrementally in on_bind/on_release.
 * Should the table fail to grow, the policy counts from the engine's pods
 * instead (slow, but still right). */
#include <stdlib.h>

#include "engine/policy.h"

struct clustering {
    struct gp_policy_table kinds; /* per node: uint32_t count[GP_POLICY_KINDS] */
    bool lost;                    /* a bind was not counted: count from the pods */
};

static int clustering_init(struct gp_engine *e, void **state)
{
    (void)e;
    struct clustering *c = malloc(sizeof *c);
    if (!c)
        return -1;
    gp_policy_table_init(&c->kinds, sizeof(uint32_t[GP_POLICY_KINDS]));
    c->lost = false;
    *state = c;
    return 0;
}

static void clustering_destroy(void *state)
{
    struct clustering *c = state;
    if (!c)
        return;
    gp_policy_table_free(&c->kinds);
    free(c);
}

static void clustering_on_bind(void *state, const struct gp_engine *e, const struct gp_node *node,
                               const struct gp_pod *pod)
{
    (void)e;
    struct clustering *c = state;
    unsigned kind = gp_policy_pod_kind(pod);
    if (kind == GP_POLICY_KIND_NONE || c->lost)
        return;
    uint32_t *count = gp_policy_table_at(&c->kinds, node->id);
    if (!count) {
        c->lost = true;
        return;
    }
    count[kind]++;
}

static void clustering_on_release(void *state, const struct gp_engine *e,
                                  const struct gp_node *node, const struct gp_pod *pod)
{
    (void)e;
    struct clustering *c = state;
    unsigned kind = gp_policy_pod_kind(pod);
    if (kind == GP_POLICY_KIND_NONE || c->lost)
        return;
    uint32_t *count = gp_policy_table_at(&c->kinds, node->id);
    if (count && count[kind] > 0)
        count[kind]--;
}

/* The number of GPU kinds on the node, and whether `kind` is one of them. */
static unsigned node_kinds(const struct clustering *c, const struct gp_engine *e,
                           const struct gp_node *node, unsigned kind, bool *has_kind)
{
    uint32_t scanned[GP_POLICY_KINDS] = {0};
    const uint32_t *count = gp_policy_table_peek(&c->kinds, node->id);
    if (c->lost) {
        size_t npods = gp_engine_pod_count(e);
        for (uint32_t i = 0; i < npods; i++) {
            const struct gp_pod *p = gp_engine_pod(e, i);
            if (p->state == GP_POD_BOUND && p->node == node->id)
                scanned[gp_policy_pod_kind(p)]++;
        }
        count = scanned;
    }
    *has_kind = false;
    if (!count)
        return 0;
    unsigned kinds = 0;
    for (unsigned k = GP_POLICY_KIND_SHARE; k < GP_POLICY_KINDS; k++)
        kinds += count[k] > 0;
    *has_kind = count[kind] > 0;
    return kinds;
}

static double clustering_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                               const struct gp_pod *pod, struct gp_pick *pick)
{
    const struct clustering *c = state;
    gp_engine_pick_default(node, pod, pick);
    unsigned kind = gp_policy_pod_kind(pod);
    if (kind == GP_POLICY_KIND_NONE)
        return 0;
    const int64_t band = GP_POLICY_MAX_SCORE / 4;
    int64_t fullness =
        band * (GP_POLICY_MAX_GPU_MILLI - (int64_t)node->gpu_milli_free) / GP_POLICY_MAX_GPU_MILLI;
    bool has_kind;
    unsigned kinds = node_kinds(c, e, node, kind, &has_kind);
    int64_t base;
    if (has_kind)
        base = kinds == 1 ? 3 * band : 2 * band;
    else
        base = kinds == 0 ? band : 0;
    return (double)(base + fullness);
}

const struct gp_policy_ops gp_policy_gpu_clustering = {
    .name = "gpu-clustering",
    .summary = "nodes already running pods of the same GPU kind, then fuller nodes "
               "(FGD paper baseline)",
    .init = clustering_init,
    .destroy = clustering_destroy,
    .score = clustering_score,
    .on_bind = clustering_on_bind,
    .on_release = clustering_on_release,
    .node_local = true, /* the kinds counted are the node's own */
};
