/* policy_fgd.c - "fgd": Fragmentation Gradient Descent (Weng et al., ATC'23).
 * A pod goes to the node, and the GPU inside it, where the expected
 * fragmentation of the target workload (frag.h) grows the least. As in the
 * authors' simulator, the score is the growth squashed into Kubernetes'
 * 0..100 integer range, sigmoid((F_before - F_after) / 1000) x 100 truncated,
 * so equal scores fall to the engine's tie-break (the lowest node id); for a
 * share the GPU with the best score wins, the lowest index on ties; whole
 * GPUs are gp_engine_pick_default's.
 *
 * Speed: a node's score for a pod depends only on the node's state and the
 * pod's shape, so scores are cached per (pod shape, node) and recomputed
 * only after the node changed (a bind or release on it) or the target did.
 * A decision is then one cache lookup per unchanged node. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/frag.h"
#include "engine/policy.h"
#include "util/vec.h"

/* The fields of a pod that its score depends on. */
struct pod_shape {
    int64_t cpu_milli;
    uint32_t gpu_count, gpu_milli, gpu_mem_mib;
    uint64_t model_mask;
};

struct cache_entry {
    uint64_t version; /* the node's frag version when computed; 0 = empty */
    double score;
    struct gp_pick pick;
};

struct cache_row {
    struct cache_entry *entries; /* indexed by node id */
    size_t len;
};

/* A score from the fragmentation before and after a tentative placement. */
typedef double (*frag_formula)(const struct gp_node *node, const struct gp_pod *pod, double before,
                               double after);

struct fgd_state {
    frag_formula formula;
    struct gp_frag *frag;
    GP_VEC(struct pod_shape) shapes;
    GP_VEC(struct cache_row) rows; /* one per shape */
    uint32_t last_pod;             /* the pod whose shape is last_shape */
    size_t last_shape;
    bool have_last;
};

static int frag_init(void **state, frag_formula formula)
{
    struct fgd_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->formula = formula;
    s->frag = gp_frag_new();
    if (!s->frag) {
        free(s);
        return -1;
    }
    *state = s;
    return 0;
}

static void fgd_destroy(void *state)
{
    struct fgd_state *s = state;
    if (!s)
        return;
    for (size_t i = 0; i < s->rows.len; i++)
        free(s->rows.items[i].entries);
    GP_VEC_FREE(&s->rows);
    GP_VEC_FREE(&s->shapes);
    gp_frag_free(s->frag);
    free(s);
}

/* The shape index of pod, interning it; SIZE_MAX when out of memory. */
static size_t shape_of(struct fgd_state *s, const struct gp_pod *pod)
{
    if (s->have_last && s->last_pod == pod->id)
        return s->last_shape;
    struct pod_shape k = {pod->spec.cpu_milli, pod->spec.gpu_count, pod->spec.gpu_milli,
                          pod->spec.gpu_mem_mib, pod->model_mask};
    size_t i = 0;
    while (i < s->shapes.len && memcmp(&s->shapes.items[i], &k, sizeof k) != 0)
        i++;
    if (i == s->shapes.len) {
        struct cache_row row = {NULL, 0};
        if (GP_VEC_PUSH(&s->shapes, k) != 0)
            return SIZE_MAX;
        if (GP_VEC_PUSH(&s->rows, row) != 0) {
            s->shapes.len--;
            return SIZE_MAX;
        }
    }
    s->last_pod = pod->id;
    s->last_shape = i;
    s->have_last = true;
    return i;
}

static struct cache_entry *cache_entry(struct fgd_state *s, size_t shape, uint32_t node)
{
    struct cache_row *row = &s->rows.items[shape];
    if (node >= row->len) {
        size_t len = row->len ? row->len : 64;
        while (len <= node)
            len *= 2;
        struct cache_entry *p = realloc(row->entries, len * sizeof *p);
        if (!p)
            return NULL;
        memset(p + row->len, 0, (len - row->len) * sizeof *p);
        row->entries = p;
        row->len = len;
    }
    return &row->entries[node];
}

/* The authors' score: the fragmentation decrease, in GPUs, through a
 * sigmoid onto 0..100 and truncated to an integer. */
static double fgd_formula(const struct gp_node *node, const struct gp_pod *pod, double before,
                          double after)
{
    (void)node;
    (void)pod;
    return trunc(100.0 / (1.0 + exp(-(before - after) / 1000.0)));
}

static int fgd_init(struct gp_engine *e, void **state)
{
    (void)e;
    return frag_init(state, fgd_formula);
}

/* Ours: FGD's score, and among nodes it scores equal, a node that already
 * runs pods before an empty one. FGD's integer score makes ties common; the
 * authors break them by a fixed random node order, which already tends to
 * pack. Preferring busy nodes outright keeps empty nodes whole for the
 * large pods still to come (see docs/fragmentation.md for the measurements
 * and the variants that did not help). */
static double fgd_pack_formula(const struct gp_node *node, const struct gp_pod *pod, double before,
                               double after)
{
    return fgd_formula(node, pod, before, after) + (node->pods > 0 ? 0.5 : 0.0);
}

static int fgd_pack_init(struct gp_engine *e, void **state)
{
    (void)e;
    return frag_init(state, fgd_pack_formula);
}

static double compute(struct fgd_state *s, const struct gp_engine *e, const struct gp_node *node,
                      const struct gp_pod *pod, struct gp_pick *pick)
{
    double before = gp_frag_node(s->frag, e, node);
    bool share = pod->spec.gpu_count == 1 && pod->spec.gpu_milli < GP_GPU_MILLI;
    if (!share) {
        if (gp_engine_pick_default(node, pod, pick) != 0)
            return -1;
        return s->formula(node, pod, before, gp_frag_node_after(s->frag, e, node, pod, pick));
    }
    double best = -1;
    pick->ngpus = 0;
    for (uint32_t g = 0; g < node->spec.gpu_count; g++) {
        if (!gp_policy_gpu_fits(&node->gpu[g], pod))
            continue;
        /* a GPU as free as an earlier fitting one scores the same */
        bool seen = false;
        for (uint32_t h = 0; h < g && !seen; h++)
            seen = gp_policy_gpu_fits(&node->gpu[h], pod) &&
                   node->gpu[h].milli_free == node->gpu[g].milli_free;
        if (seen)
            continue;
        struct gp_pick try = {.ngpus = 1, .gpu = {(uint8_t)g}};
        double score =
            s->formula(node, pod, before, gp_frag_node_after(s->frag, e, node, pod, &try));
        if (pick->ngpus == 0 || score > best) {
            best = score;
            *pick = try;
        }
    }
    return best;
}

static double fgd_score(void *state, const struct gp_engine *e, const struct gp_node *node,
                        const struct gp_pod *pod, struct gp_pick *pick)
{
    struct fgd_state *s = state;
    size_t shape = shape_of(s, pod);
    uint64_t version = gp_frag_node_version(s->frag, e, node->id);
    struct cache_entry *c =
        shape == SIZE_MAX || version == 0 ? NULL : cache_entry(s, shape, node->id);
    if (c && c->version == version) {
        *pick = c->pick;
        return c->score;
    }
    double score = compute(s, e, node, pod, pick);
    if (c) {
        c->version = version;
        c->score = score;
        c->pick = *pick;
    }
    return score;
}

static void fgd_changed(void *state, const struct gp_engine *e, const struct gp_node *node,
                        const struct gp_pod *pod)
{
    (void)e;
    (void)pod;
    struct fgd_state *s = state;
    gp_frag_touch(s->frag, node->id);
}

const struct gp_policy_ops gp_policy_fgd = {
    .name = "fgd",
    .summary = "least growth of the target workload's GPU fragmentation (FGD, ATC'23)",
    .init = fgd_init,
    .destroy = fgd_destroy,
    .score = fgd_score,
    .on_bind = fgd_changed,
    .on_release = fgd_changed,
};

const struct gp_policy_ops gp_policy_fgd_pack = {
    .name = "fgd-pack",
    .summary = "FGD, and among equal scores a busy node before an empty one (ours)",
    .init = fgd_pack_init,
    .destroy = fgd_destroy,
    .score = fgd_score,
    .on_bind = fgd_changed,
    .on_release = fgd_changed,
};
