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
 * A decision is then one cache lookup per unchanged node.
 *
 * "fgd-pack" (ours) adds four terms to FGD's cached score, none of which
 * needs a node's aggregates (docs/fragmentation.md, "Our policy"). Let c be
 * the target's GPU pods' CPU-milli per GPU-milli, and r the CPU per free
 * GPU the cluster can still give: c, or the ready GPU nodes' free CPU-milli
 * over their free GPU-milli when that is lower (a cluster short of CPU,
 * where no node can keep c for each of its GPUs). A node is "rich" after
 * a placement when it keeps at least r (for the CPU match) or c (for
 * CPU-only pods) CPU-milli per free GPU-milli:
 *   - model scarcity: -PRESSURE_WEIGHT x max(0, pressure(model) - PRESSURE_FREE)
 *     per GPU the pod takes, where pressure(model) is the GPU demand still
 *     expected from the target's shapes restricted to a set of models that
 *     contains it, over the free GPUs of that set;
 *   - CPU match for GPU pods: +MATCH_BONUS when a heavy pod (more than
 *     MATCH_HEAVY x c CPU per GPU) leaves the node rich at r, or a light
 *     pod (less than MATCH_LIGHT x c) leaves it not rich at r: CPU-hungry
 *     pods go where CPU is plentiful and CPU-light ones fill the GPUs of
 *     nodes short of CPU, so fewer GPUs end without the CPU to use them;
 *     with r below c each node is balanced towards what the cluster has;
 *   - CPU for CPU-only pods: +RICH_BONUS when the node stays rich at c
 *     (the pod takes only CPU that the node's free GPUs could not use);
 *   - busy first: +BUSY_BONUS for a node that already runs pods.
 * The last two sum to less than 1, so they only decide among nodes FGD
 * scores equal. The match bonus outweighs FGD's smaller differences (a
 * score step is about 40 GPU-milli of fragment), and the pressure term
 * outweighs both where a model runs short. */
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

/* Ours: the terms' constants (tuned on seeds 42-51, checked on 52-61). */
#define BUSY_BONUS      0.3
#define RICH_BONUS      0.6
#define MATCH_BONUS     12.0
#define MATCH_HEAVY     1.2
#define MATCH_LIGHT     0.8
#define PRESSURE_WEIGHT 100.0
#define PRESSURE_FREE   0.25
#define MAX_GROUPS      64

/* The target's shapes that accept only some of the cluster's GPU models,
 * grouped by their set of models. */
struct model_group {
    uint64_t mask;
    double demand_milli; /* GPU-milli expected from them by 100 % arrived */
};

/* What fgd-pack keeps beside FGD's cache. */
struct pack_plan {
    uint64_t key[4]; /* target version and cluster shape it was built for */
    uint32_t last_pod;
    bool have_pod;
    uint32_t nmodels;
    double cpu_per_gpu;                    /* c: the target's CPU-milli per GPU-milli */
    double free_milli[GP_MAX_GPU_MODELS];  /* per model, kept by on_bind/on_release */
    double gpu_free_milli, cpu_free_milli; /* of ready GPU nodes, kept likewise */
    double match_per_gpu;                  /* r = min(c, cpu_free / gpu_free), per pod */
    struct model_group groups[MAX_GROUPS];
    size_t ngroups;
    uint64_t pressure_at; /* allocated GPU-milli when pressure was computed */
    double pressure[GP_MAX_GPU_MODELS];
};

struct fgd_state {
    frag_formula formula;
    bool ours;
    struct pack_plan plan;
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

/* Field by field: the struct has padding, which memcmp would read. */
static bool shape_eq(const struct pod_shape *a, const struct pod_shape *b)
{
    return a->cpu_milli == b->cpu_milli && a->gpu_count == b->gpu_count &&
           a->gpu_milli == b->gpu_milli && a->gpu_mem_mib == b->gpu_mem_mib &&
           a->model_mask == b->model_mask;
}

/* The shape index of pod, interning it; SIZE_MAX when out of memory. */
static size_t shape_of(struct fgd_state *s, const struct gp_pod *pod)
{
    if (s->have_last && s->last_pod == pod->id)
        return s->last_shape;
    struct pod_shape k = {pod->spec.cpu_milli, pod->spec.gpu_count, pod->spec.gpu_milli,
                          pod->spec.gpu_mem_mib, pod->model_mask};
    size_t i = 0;
    while (i < s->shapes.len && !shape_eq(&s->shapes.items[i], &k))
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

static int fgd_pack_init(struct gp_engine *e, void **state)
{
    (void)e;
    int rc = frag_init(state, fgd_formula);
    if (rc == 0)
        ((struct fgd_state *)*state)->ours = true;
    return rc;
}

/* Rebuilds the plan when the target or the set of nodes changed: free GPUs
 * per model, the model-restricted groups and their expected demand, and the
 * target's CPU per GPU. */
static void plan_build(struct pack_plan *p, const struct gp_engine *e)
{
    size_t n;
    uint64_t version;
    const struct gp_shape *sh = gp_engine_target(e, &n, &version);
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    uint64_t key[4] = {version, t.nodes_ready, t.gpu_milli_total, gp_engine_node_count(e)};
    if (memcmp(key, p->key, sizeof key) == 0)
        return;
    memcpy(p->key, key, sizeof key);
    p->nmodels = (uint32_t)gp_engine_model_count(e);
    if (p->nmodels > GP_MAX_GPU_MODELS)
        p->nmodels = GP_MAX_GPU_MODELS;
    memset(p->free_milli, 0, sizeof p->free_milli);
    p->gpu_free_milli = p->cpu_free_milli = 0;
    uint64_t present = 0;
    for (size_t i = 0; i < gp_engine_node_count(e); i++) {
        const struct gp_node *node = gp_engine_node(e, (uint32_t)i);
        if (node->state != GP_NODE_READY || node->spec.gpu_count == 0)
            continue;
        p->gpu_free_milli += node->gpu_milli_free;
        p->cpu_free_milli += (double)node->cpu_free_milli;
        if (node->model >= p->nmodels)
            continue;
        p->free_milli[node->model] += node->gpu_milli_free;
        present |= 1ull << node->model;
    }
    double milli = 0, cpu = 0; /* per pod of the target, on average */
    for (size_t m = 0; m < n; m++) {
        milli += sh[m].weight * sh[m].gpu_count * (double)sh[m].gpu_milli;
        if (sh[m].gpu_count > 0)
            cpu += sh[m].weight * (double)sh[m].cpu_milli;
    }
    p->cpu_per_gpu = milli > 0 ? cpu / milli : 0;
    p->ngroups = 0;
    p->pressure_at = UINT64_MAX;
    memset(p->pressure, 0, sizeof p->pressure);
    for (size_t m = 0; m < n && milli > 0; m++) {
        uint64_t mask = sh[m].model_mask & present;
        if (sh[m].gpu_count == 0 || mask == 0 || mask == present)
            continue;
        /* its share of the GPU request, times the cluster's GPUs */
        double demand = (double)t.gpu_milli_total * sh[m].weight * sh[m].gpu_count *
                        (double)sh[m].gpu_milli / milli;
        size_t k = 0;
        while (k < p->ngroups && p->groups[k].mask != mask)
            k++;
        if (k == MAX_GROUPS)
            continue;
        if (k == p->ngroups)
            p->groups[p->ngroups++] = (struct model_group){mask, 0};
        p->groups[k].demand_milli += demand;
    }
}

/* pressure(model) = sum over the groups that accept the model of their
 * demand still to come (the unallocated fraction of it) over the free GPUs
 * of their models. */
static void plan_pressure(struct pack_plan *p, const struct gp_engine *e)
{
    struct gp_engine_totals t;
    gp_engine_totals(e, &t);
    if (t.gpu_milli_alloc == p->pressure_at || t.gpu_milli_total == 0)
        return;
    p->pressure_at = t.gpu_milli_alloc;
    double left = 1.0 - (double)t.gpu_milli_alloc / (double)t.gpu_milli_total;
    memset(p->pressure, 0, sizeof p->pressure);
    for (size_t k = 0; k < p->ngroups; k++) {
        double free_milli = 0;
        for (uint32_t g = 0; g < p->nmodels; g++)
            if (p->groups[k].mask >> g & 1)
                free_milli += p->free_milli[g];
        if (free_milli <= 0)
            continue;
        double x = p->groups[k].demand_milli * left / free_milli;
        for (uint32_t g = 0; g < p->nmodels; g++)
            if (p->groups[k].mask >> g & 1)
                p->pressure[g] += x;
    }
}

/* The CPU match: MATCH_BONUS when a heavy GPU pod leaves the node rich at
 * r or a light one leaves it not rich at r; 0 for the pods in between. */
static double match_term(const struct pack_plan *p, const struct gp_node *node,
                         const struct gp_pod *pod)
{
    double milli = pod->spec.gpu_count * (double)pod->spec.gpu_milli;
    if (p->cpu_per_gpu <= 0 || milli <= 0)
        return 0;
    double cpu_per_gpu = (double)pod->spec.cpu_milli / milli;
    bool rich = (double)(node->cpu_free_milli - pod->spec.cpu_milli) >=
                p->match_per_gpu * ((double)node->gpu_milli_free - milli);
    if (cpu_per_gpu > MATCH_HEAVY * p->cpu_per_gpu)
        return rich ? MATCH_BONUS : 0;
    if (cpu_per_gpu < MATCH_LIGHT * p->cpu_per_gpu)
        return rich ? 0 : MATCH_BONUS;
    return 0;
}

/* Ours: FGD's score plus the four terms of the header comment. */
static double pack_terms(struct fgd_state *s, const struct gp_engine *e, const struct gp_node *node,
                         const struct gp_pod *pod)
{
    struct pack_plan *p = &s->plan;
    if (!p->have_pod || p->last_pod != pod->id) { /* once per pod */
        plan_build(p, e);
        plan_pressure(p, e);
        double r = p->gpu_free_milli > 0 ? p->cpu_free_milli / p->gpu_free_milli : p->cpu_per_gpu;
        p->match_per_gpu = r < p->cpu_per_gpu ? r : p->cpu_per_gpu;
        p->last_pod = pod->id;
        p->have_pod = true;
    }
    double terms = node->pods > 0 ? BUSY_BONUS : 0;
    if (pod->spec.gpu_count == 0) {
        double cpu_after = (double)(node->cpu_free_milli - pod->spec.cpu_milli);
        if (cpu_after >= p->cpu_per_gpu * node->gpu_milli_free)
            terms += RICH_BONUS;
    } else {
        terms += match_term(p, node, pod);
        if (node->model < p->nmodels && p->pressure[node->model] > PRESSURE_FREE) {
            double gpus = pod->spec.gpu_count * (double)pod->spec.gpu_milli / GP_GPU_MILLI;
            terms -= PRESSURE_WEIGHT * (p->pressure[node->model] - PRESSURE_FREE) * gpus;
        }
    }
    return terms;
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
    double score;
    if (c && c->version == version) {
        *pick = c->pick;
        score = c->score;
    } else {
        score = compute(s, e, node, pod, pick);
        if (c) {
            c->version = version;
            c->score = score;
            c->pick = *pick;
        }
    }
    return s->ours ? score + pack_terms(s, e, node, pod) : score;
}

static void fgd_changed(void *state, const struct gp_engine *e, const struct gp_node *node,
                        const struct gp_pod *pod)
{
    (void)e;
    (void)pod;
    struct fgd_state *s = state;
    gp_frag_touch(s->frag, node->id);
}

/* fgd-pack keeps the free GPU-milli of ready GPU nodes per model, and
 * their free GPU-milli and CPU-milli in all, as pods come (sign -1) and go
 * (+1); plan_build counts ready nodes only, and recounts when the number of
 * ready nodes changes. */
static void pack_count(struct pack_plan *p, const struct gp_node *node, const struct gp_pod *pod,
                       double sign)
{
    if (node->state != GP_NODE_READY || node->spec.gpu_count == 0)
        return;
    double milli = pod->spec.gpu_count * (double)pod->spec.gpu_milli;
    p->gpu_free_milli += sign * milli;
    p->cpu_free_milli += sign * (double)pod->spec.cpu_milli;
    if (node->model < GP_MAX_GPU_MODELS)
        p->free_milli[node->model] += sign * milli;
}

static void pack_bind(void *state, const struct gp_engine *e, const struct gp_node *node,
                      const struct gp_pod *pod)
{
    fgd_changed(state, e, node, pod);
    pack_count(&((struct fgd_state *)state)->plan, node, pod, -1);
}

static void pack_release(void *state, const struct gp_engine *e, const struct gp_node *node,
                         const struct gp_pod *pod)
{
    fgd_changed(state, e, node, pod);
    pack_count(&((struct fgd_state *)state)->plan, node, pod, +1);
}

const struct gp_policy_ops gp_policy_fgd = {
    .name = "fgd",
    .summary = "least growth of the target workload's GPU fragmentation (FGD, ATC'23)",
    .init = fgd_init,
    .destroy = fgd_destroy,
    .score = fgd_score,
    .on_bind = fgd_changed,
    .on_release = fgd_changed,
    .node_local = true, /* a node's fragmentation, for the pod's shape and the target */
};

const struct gp_policy_ops gp_policy_fgd_pack = {
    .name = "fgd-pack",
    .summary = "FGD plus GPU-model scarcity, CPU-matched placement and busy nodes first (ours)",
    .init = fgd_pack_init,
    .destroy = fgd_destroy,
    .score = fgd_score,
    .on_bind = pack_bind,
    .on_release = pack_release,
    .node_local = false, /* model pressure reads the whole cluster's free GPUs */
};
