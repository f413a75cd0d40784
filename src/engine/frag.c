/* frag.c - the FGD fragmentation measure with per-node aggregates. */
#include "engine/frag.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define MAX_THRESHOLDS 64

struct node_agg {
    uint64_t changed_at;  /* the tracker's clock at the last gp_frag_touch */
    uint64_t agg_version; /* node version the aggregates below are for; 0 = never */
    double frag;          /* F(node) at agg_stamp */
    uint32_t total_free;
    uint8_t cnt_ge[MAX_THRESHOLDS];  /* GPUs with milli_free >= threshold */
    uint32_t sum_lt[MAX_THRESHOLDS]; /* idle milli of GPUs below the threshold */
};

struct gp_frag {
    uint64_t target_version; /* of the target the thresholds were made for */
    uint64_t clock;          /* ticks on every touch and target change */
    uint64_t target_at;      /* the clock when the target last changed */
    uint32_t thresholds[MAX_THRESHOLDS];
    uint32_t nthresholds;
    uint8_t *shape_threshold; /* per target shape, index into thresholds */
    size_t nshapes;
    GP_VEC(struct node_agg) nodes;
};

struct gp_frag *gp_frag_new(void)
{
    return calloc(1, sizeof(struct gp_frag));
}

void gp_frag_free(struct gp_frag *f)
{
    if (!f)
        return;
    free(f->shape_threshold);
    GP_VEC_FREE(&f->nodes);
    free(f);
}

static struct node_agg *node_agg(struct gp_frag *f, uint32_t node)
{
    if (node >= f->nodes.len) {
        if (GP_VEC_RESERVE(&f->nodes, (size_t)node + 1) != 0)
            return NULL;
        memset(&f->nodes.items[f->nodes.len], 0,
               ((size_t)node + 1 - f->nodes.len) * sizeof f->nodes.items[0]);
        f->nodes.len = (size_t)node + 1;
    }
    return &f->nodes.items[node];
}

void gp_frag_touch(struct gp_frag *f, uint32_t node)
{
    struct node_agg *a = node_agg(f, node);
    if (a)
        a->changed_at = ++f->clock;
}

/* A node's version: the later of its last change and the target's. */
static uint64_t version_of(const struct gp_frag *f, const struct node_agg *a)
{
    return a->changed_at > f->target_at ? a->changed_at : f->target_at;
}

/* Rebuilds the thresholds when the engine's target changed. 0 or -1. */
static int sync_target(struct gp_frag *f, const struct gp_engine *e)
{
    size_t n;
    uint64_t version;
    const struct gp_shape *shapes = gp_engine_target(e, &n, &version);
    if (version == f->target_version && f->shape_threshold)
        return 0;
    uint8_t *idx = malloc(n ? n : 1);
    if (!idx)
        return -1;
    f->nthresholds = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = shapes[i].gpu_milli, k = 0;
        while (k < f->nthresholds && f->thresholds[k] != t)
            k++;
        if (k == f->nthresholds) {
            if (k == MAX_THRESHOLDS) { /* more share sizes than we track: merge upward */
                k = MAX_THRESHOLDS - 1;
            } else {
                f->thresholds[k] = t;
                f->nthresholds++;
            }
        }
        idx[i] = (uint8_t)k;
    }
    free(f->shape_threshold);
    f->shape_threshold = idx;
    f->nshapes = n;
    f->target_version = version;
    f->target_at = ++f->clock;
    return 0;
}

uint64_t gp_frag_node_version(struct gp_frag *f, const struct gp_engine *e, uint32_t node)
{
    struct node_agg *a = node_agg(f, node);
    if (!a || sync_target(f, e) != 0)
        return 0;
    return version_of(f, a);
}

/* Fragment of shape m, given the (possibly tentative) node aggregates. */
static double frag_sum(const struct gp_frag *f, const struct gp_shape *shapes,
                       const struct gp_node *node, int64_t cpu_free, uint32_t total_free,
                       const uint8_t *cnt_ge, const uint32_t *sum_lt)
{
    double sum = 0;
    for (size_t m = 0; m < f->nshapes; m++) {
        const struct gp_shape *s = &shapes[m];
        uint32_t k = f->shape_threshold[m];
        double frag = total_free;
        if (s->gpu_count > 0 && (s->model_mask >> node->model & 1) && cpu_free >= s->cpu_milli &&
            cnt_ge[k] >= s->gpu_count)
            frag = sum_lt[k];
        sum += s->weight * frag;
    }
    return sum;
}

static struct node_agg *fresh_agg(struct gp_frag *f, const struct gp_engine *e,
                                  const struct gp_node *node)
{
    if (sync_target(f, e) != 0)
        return NULL;
    struct node_agg *a = node_agg(f, node->id);
    if (!a)
        return NULL;
    uint64_t version = version_of(f, a);
    if (a->agg_version == version && version != 0)
        return a;
    a->total_free = node->gpu_milli_free;
    for (uint32_t k = 0; k < f->nthresholds; k++) {
        uint32_t t = f->thresholds[k];
        uint8_t cnt = 0;
        uint32_t lt = 0;
        for (uint32_t g = 0; g < node->spec.gpu_count; g++) {
            uint32_t free_milli = node->gpu[g].milli_free;
            if (free_milli >= t)
                cnt++;
            else
                lt += free_milli;
        }
        a->cnt_ge[k] = cnt;
        a->sum_lt[k] = lt;
    }
    a->frag = f->nshapes ? frag_sum(f, gp_engine_target(e, NULL, NULL), node, node->cpu_free_milli,
                                    a->total_free, a->cnt_ge, a->sum_lt)
                         : 0;
    a->agg_version = version;
    return a;
}

double gp_frag_node(struct gp_frag *f, const struct gp_engine *e, const struct gp_node *node)
{
    struct node_agg *a = fresh_agg(f, e, node);
    return a ? a->frag : -1;
}

double gp_frag_node_after(struct gp_frag *f, const struct gp_engine *e, const struct gp_node *node,
                          const struct gp_pod *pod, const struct gp_pick *pick)
{
    struct node_agg *a = fresh_agg(f, e, node);
    if (!a)
        return -1;
    if (f->nshapes == 0)
        return 0;
    uint8_t cnt_ge[MAX_THRESHOLDS];
    uint32_t sum_lt[MAX_THRESHOLDS];
    memcpy(cnt_ge, a->cnt_ge, f->nthresholds * sizeof cnt_ge[0]);
    memcpy(sum_lt, a->sum_lt, f->nthresholds * sizeof sum_lt[0]);
    uint32_t total = a->total_free;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t before = node->gpu[pick->gpu[i]].milli_free;
        uint32_t after = before - pod->spec.gpu_milli;
        total -= pod->spec.gpu_milli;
        for (uint32_t k = 0; k < f->nthresholds; k++) {
            uint32_t t = f->thresholds[k];
            if (before < t) {
                sum_lt[k] -= pod->spec.gpu_milli;
            } else if (after < t) {
                cnt_ge[k]--;
                sum_lt[k] += after;
            }
        }
    }
    return frag_sum(f, gp_engine_target(e, NULL, NULL), node,
                    node->cpu_free_milli - pod->spec.cpu_milli, total, cnt_ge, sum_lt);
}
