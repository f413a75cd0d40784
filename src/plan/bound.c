/* bound.c - the packing bound (bound.h). The pods are grouped into classes
 * of identical request, the nodes into classes of identical capacity that
 * host the same pod classes (asked of the engine's own filters on an empty
 * node), and a linear relaxation of the best placement is built over the
 * classes: resources per node class, an arc-flow per node class for how
 * GPU shares fill single GPUs, and rounding cuts for multi-GPU pods. GLPK
 * solves it; the bound is then recomputed from the dual values alone, so
 * that it stays valid whatever the solver's tolerances. docs/bound.md has
 * the formulation and the argument. */
#include "plan/bound.h"

#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/vec.h"

/* A GPU's arc-flow has at most this many steps (1000 / step milli each);
 * shares are rounded down to the step, which keeps the relaxation valid. */
#define BOUND_MAX_STEPS 200
/* All node classes' arc-flows together have at most this many arcs; above
 * it the step grows to the next divisor of 1000. */
#define BOUND_MAX_ARCS 60000

/* Pods of identical request (everything the filters and the resources
 * look at, spec_cmp; names and priorities aside). */
struct pclass {
    const struct gp_pod_spec *spec; /* one of them */
    uint64_t count;
    uint32_t engine_id;
    uint32_t size; /* shares: gpu_milli in steps of the arc-flow, rounded down */
    int count_row; /* placed pods of the class <= count */
};

/* Nodes of identical capacity that host the same pod classes. */
struct nclass {
    const struct gp_node_spec *spec; /* one of them */
    uint64_t count;
    const uint64_t *fits; /* bit j: pod class j fits on an empty node */
};

struct node_ref {
    const struct gp_node_spec *spec;
    const uint64_t *fits;
    size_t words;
};

/* The LP in GLPK's triplet form (1-based; element 0 unused), every row
 * sum(a x) <= rhs, every column 0 <= x <= ub. */
struct lp {
    GP_VEC(int) ia;
    GP_VEC(int) ja;
    GP_VEC(double) ar;
    GP_VEC(double) rhs;
    GP_VEC(double) obj;
    GP_VEC(double) ub;
    GP_VEC(double) cpu; /* per column: the cpu (milli) and memory (MiB) one unit takes */
    GP_VEC(double) mem;
    bool nomem;
};

/* Element 0 of every array is unused (GLPK counts from 1). */
static int lp_init(struct lp *lp)
{
    memset(lp, 0, sizeof *lp);
    if (GP_VEC_PUSH(&lp->ia, 0) != 0 || GP_VEC_PUSH(&lp->ja, 0) != 0 ||
        GP_VEC_PUSH(&lp->ar, 0.0) != 0 || GP_VEC_PUSH(&lp->rhs, 0.0) != 0 ||
        GP_VEC_PUSH(&lp->obj, 0.0) != 0 || GP_VEC_PUSH(&lp->ub, 0.0) != 0 ||
        GP_VEC_PUSH(&lp->cpu, 0.0) != 0 || GP_VEC_PUSH(&lp->mem, 0.0) != 0)
        return -1;
    return 0;
}

static void lp_free(struct lp *lp)
{
    GP_VEC_FREE(&lp->ia);
    GP_VEC_FREE(&lp->ja);
    GP_VEC_FREE(&lp->ar);
    GP_VEC_FREE(&lp->rhs);
    GP_VEC_FREE(&lp->obj);
    GP_VEC_FREE(&lp->ub);
    GP_VEC_FREE(&lp->cpu);
    GP_VEC_FREE(&lp->mem);
}

static int lp_row(struct lp *lp, double rhs)
{
    if (GP_VEC_PUSH(&lp->rhs, rhs) != 0)
        lp->nomem = true;
    return (int)lp->rhs.len - 1;
}

static int lp_col(struct lp *lp, double obj, double ub, double cpu_milli, double mem_mib)
{
    if (GP_VEC_PUSH(&lp->obj, obj) != 0 || GP_VEC_PUSH(&lp->ub, ub) != 0 ||
        GP_VEC_PUSH(&lp->cpu, cpu_milli) != 0 || GP_VEC_PUSH(&lp->mem, mem_mib) != 0)
        lp->nomem = true;
    return (int)lp->obj.len - 1;
}

static void lp_coef(struct lp *lp, int row, int col, double v)
{
    if (v == 0 || row <= 0 || col <= 0)
        return;
    if (GP_VEC_PUSH(&lp->ia, row) != 0 || GP_VEC_PUSH(&lp->ja, col) != 0 ||
        GP_VEC_PUSH(&lp->ar, v) != 0)
        lp->nomem = true;
}

static uint64_t request_milli(const struct gp_pod_spec *p)
{
    return (uint64_t)p->gpu_count * p->gpu_milli;
}

static bool is_share(const struct gp_pod_spec *p)
{
    return p->gpu_count == 1 && p->gpu_milli < GP_GPU_MILLI;
}

static uint64_t capacity_milli(const struct gp_cluster *c)
{
    uint64_t cap = 0;
    for (size_t i = 0; i < c->nnodes; i++)
        cap += (uint64_t)c->nodes[i].gpu_count * GP_GPU_MILLI;
    return cap;
}

/* ---- classes --------------------------------------------------------------- */

static int cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* A total order on pod specs by everything the filters and the resources
 * look at (names, priorities, gangs, queues and duration hints aside): the
 * sharing modes a pod accepts, its MIG profile and the resource it asks for
 * (nvidia.com/gpu or nvidia.com/gpu.shared) too, which decide where it fits
 * as much as its model or selector do. */
static int spec_cmp(const struct gp_pod_spec *a, const struct gp_pod_spec *b)
{
    int c;
    if ((c = cmp_i64(a->cpu_milli, b->cpu_milli)) || (c = cmp_i64(a->mem_mib, b->mem_mib)) ||
        (c = cmp_i64(a->gpu_count, b->gpu_count)) || (c = cmp_i64(a->gpu_milli, b->gpu_milli)) ||
        (c = cmp_i64(a->gpu_mem_mib, b->gpu_mem_mib)) ||
        (c = cmp_i64(a->share_modes, b->share_modes)) ||
        (c = cmp_i64(a->gpu_resource, b->gpu_resource)) ||
        (c = cmp_i64(a->mig_profile != NULL, b->mig_profile != NULL)) ||
        (c = cmp_str(a->mig_profile, b->mig_profile)) ||
        (c = cmp_i64((int64_t)a->ngpu_models, (int64_t)b->ngpu_models)) ||
        (c = cmp_i64((int64_t)a->nnode_selector, (int64_t)b->nnode_selector)) ||
        (c = cmp_i64((int64_t)a->ntolerations, (int64_t)b->ntolerations)))
        return c;
    for (size_t i = 0; i < a->ngpu_models; i++)
        if ((c = cmp_str(a->gpu_models[i], b->gpu_models[i])))
            return c;
    for (size_t i = 0; i < a->nnode_selector; i++)
        if ((c = cmp_str(a->node_selector[i].key, b->node_selector[i].key)) ||
            (c = cmp_str(a->node_selector[i].value, b->node_selector[i].value)))
            return c;
    for (size_t i = 0; i < a->ntolerations; i++) {
        const struct gp_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if ((c = cmp_str(x->key, y->key)) || (c = cmp_str(x->value, y->value)) ||
            (c = cmp_i64(x->op_exists, y->op_exists)) ||
            (c = cmp_i64(x->any_effect, y->any_effect)) || (c = cmp_i64(x->effect, y->effect)))
            return c;
    }
    return 0;
}

static int pod_cmp(const void *pa, const void *pb)
{
    return spec_cmp(*(const struct gp_pod_spec *const *)pa, *(const struct gp_pod_spec *const *)pb);
}

static int node_cmp(const void *pa, const void *pb)
{
    const struct node_ref *a = pa, *b = pb;
    int c;
    if ((c = cmp_i64(a->spec->gpu_count, b->spec->gpu_count)) ||
        (c = cmp_i64(a->spec->cpu_milli, b->spec->cpu_milli)) ||
        (c = cmp_i64(a->spec->mem_mib, b->spec->mem_mib)))
        return c;
    for (size_t w = 0; w < a->words; w++)
        if (a->fits[w] != b->fits[w])
            return a->fits[w] < b->fits[w] ? -1 : 1;
    return 0;
}

static const char *pod_name(const struct gp_pod_spec *p)
{
    return p->name ? p->name : "unnamed";
}

/* ---- the arc-flow of one GPU ---------------------------------------------- */

struct arc {
    uint32_t from; /* in steps */
    uint32_t size; /* in steps */
};
typedef GP_VEC(struct arc) arc_vec;

/* The arcs of a GPU of `steps` steps for item sizes sizes[0..n) (distinct,
 * decreasing): an arc of size s leaves every node reachable with items of
 * size >= s, so every multiset of items that fits is exactly one path (its
 * items in decreasing order). Returns 0, or -1 when out of memory. */
static int arcflow_build(const uint32_t *sizes, size_t n, uint32_t steps, arc_vec *out)
{
    bool *reach = calloc((size_t)steps + 1, sizeof *reach);
    if (!reach)
        return -1;
    reach[0] = true;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        uint32_t s = sizes[i];
        for (uint32_t v = 0; s <= steps && v <= steps - s; v++) {
            if (!reach[v])
                continue;
            struct arc a = {v, s};
            if (GP_VEC_PUSH(out, a) != 0) {
                rc = -1;
                break;
            }
            reach[v + s] = true;
        }
    }
    free(reach);
    return rc;
}

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* ---- the state of one computation ------------------------------------------ */

struct bound {
    const struct gp_cluster *cluster;
    struct gp_diag *diag;
    struct gp_engine *e;
    const struct gp_pod_spec **sorted; /* the pods, in spec_cmp order */
    struct pclass *pc;                 /* the classes with a GPU request */
    size_t npc;
    uint64_t *fits; /* per cluster node, `words` words */
    size_t words;
    struct node_ref *refs;
    struct nclass *nc;
    size_t nnc;
    uint32_t step; /* milli per arc-flow step */
    struct lp lp;
};

static enum gp_err nomem(struct bound *b)
{
    return gp_diag_set(b->diag, GP_ENOMEM, "bound: out of memory");
}

static bool class_fits(const struct nclass *k, size_t j)
{
    return k->fits[j / 64] >> (j % 64) & 1;
}

/* Groups the pods into classes and gives each class's representative to
 * the engine, which checks that it is a valid pod. Only the classes that
 * request GPU are kept: the others allocate nothing, and leaving them out
 * only relaxes the problem. */
static enum gp_err pod_classes(struct bound *b, const struct gp_pod_spec *const *pods, size_t n)
{
    if (n == 0)
        return GP_OK;
    b->sorted = malloc(n * sizeof *b->sorted);
    b->pc = malloc(n * sizeof *b->pc);
    if (!b->sorted || !b->pc)
        return nomem(b);
    for (size_t i = 0; i < n; i++) {
        if (!pods[i])
            return gp_diag_set(b->diag, GP_EINVALID, "bound: pod %zu of the sequence is missing",
                               i);
        b->sorted[i] = pods[i];
    }
    qsort(b->sorted, n, sizeof *b->sorted, pod_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && spec_cmp(b->sorted[i], b->sorted[j]) == 0)
            j++;
        const struct gp_pod_spec *p = b->sorted[i];
        /* gangs only restrict placements further: the bound ignores them */
        struct gp_pod_spec alone = *p;
        alone.group = 0;
        uint32_t id;
        enum gp_err err = gp_engine_pod_add(b->e, &alone, 0, &id);
        if (err == GP_ENOMEM)
            return nomem(b);
        if (err == GP_ELIMIT)
            return gp_diag_set(b->diag, err, "bound: pod %s: more than %d GPU models", pod_name(p),
                               GP_MAX_GPU_MODELS);
        if (err != GP_OK)
            return gp_diag_set(b->diag, err,
                               "bound: pod %s: the engine refuses its request (cpu %lld milli, "
                               "memory %lld MiB, %u GPU x %u milli): %s",
                               pod_name(p), (long long)p->cpu_milli, (long long)p->mem_mib,
                               p->gpu_count, p->gpu_milli, gp_strerror(err));
        if (request_milli(p) > 0) {
            struct pclass c = {p, j - i, id, 0, 0};
            b->pc[b->npc++] = c;
        }
        i = j;
    }
    return GP_OK;
}

/* Gives the nodes to the engine, asks it which pod classes fit on each
 * empty node, and groups the nodes that host at least one into classes. */
static enum gp_err node_classes(struct bound *b)
{
    const struct gp_cluster *c = b->cluster;
    b->words = (b->npc + 63) / 64;
    for (size_t i = 0; i < c->nnodes; i++) {
        const struct gp_node_spec *s = &c->nodes[i];
        if (s->sharing)
            return gp_diag_set(b->diag, GP_EUNSUPPORTED,
                               "bound: node %s shares its GPUs (a sharing spec); the bound "
                               "models exclusive GPUs of 1000 milli only",
                               s->name ? s->name : "unnamed");
        enum gp_err err = gp_engine_node_add(b->e, s, NULL);
        if (err == GP_ENOMEM)
            return nomem(b);
        if (err == GP_ELIMIT)
            return gp_diag_set(b->diag, err, "bound: node %s: more than %d GPU models",
                               s->name ? s->name : "unnamed", GP_MAX_GPU_MODELS);
        if (err != GP_OK)
            return gp_diag_set(b->diag, err,
                               "bound: node %s: the engine refuses it (%u GPUs, cpu %lld milli, "
                               "memory %lld MiB): %s",
                               s->name ? s->name : "unnamed", s->gpu_count, (long long)s->cpu_milli,
                               (long long)s->mem_mib, gp_strerror(err));
    }
    if (c->nnodes == 0 || b->npc == 0)
        return GP_OK;
    b->fits = calloc(c->nnodes * b->words, sizeof *b->fits);
    b->refs = malloc(c->nnodes * sizeof *b->refs);
    b->nc = malloc(c->nnodes * sizeof *b->nc);
    if (!b->fits || !b->refs || !b->nc)
        return nomem(b);
    size_t nrefs = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const struct gp_node_spec *s = &c->nodes[i];
        const struct gp_node *node = gp_engine_node(b->e, (uint32_t)i);
        uint64_t *fits = &b->fits[i * b->words];
        bool any = false;
        for (size_t j = 0; j < b->npc; j++) {
            const struct gp_pod *pod = gp_engine_pod(b->e, b->pc[j].engine_id);
            struct gp_pick pick;
            if (gp_engine_filter(b->e, node, pod) == GP_FILTER_COUNT &&
                gp_engine_pick_default(node, pod, &pick) == 0) {
                fits[j / 64] |= (uint64_t)1 << (j % 64);
                any = true;
            }
        }
        if (any) {
            struct node_ref r = {s, fits, b->words};
            b->refs[nrefs++] = r;
        }
    }
    qsort(b->refs, nrefs, sizeof *b->refs, node_cmp);
    for (size_t i = 0; i < nrefs;) {
        size_t j = i + 1;
        while (j < nrefs && node_cmp(&b->refs[i], &b->refs[j]) == 0)
            j++;
        struct nclass k = {b->refs[i].spec, j - i, b->refs[i].fits};
        b->nc[b->nnc++] = k;
        i = j;
    }
    return GP_OK;
}

/* ---- the relaxation -------------------------------------------------------- */

/* The distinct share sizes (in steps, > 0) that fit on node class k,
 * decreasing; returns how many. */
static size_t class_sizes(const struct bound *b, const struct nclass *k, uint32_t *sizes)
{
    size_t n = 0;
    for (size_t j = 0; j < b->npc; j++) {
        uint32_t s = b->pc[j].size;
        if (s == 0 || !class_fits(k, j))
            continue;
        size_t at = 0;
        while (at < n && sizes[at] > s)
            at++;
        if (at < n && sizes[at] == s)
            continue;
        memmove(&sizes[at + 1], &sizes[at], (n - at) * sizeof *sizes);
        sizes[at] = s;
        n++;
    }
    return n;
}

/* Chooses the arc-flow step: the greatest common divisor of the shares and
 * 1000 when that is fine enough and small enough, else the next divisor of
 * 1000 that keeps the graphs within BOUND_MAX_STEPS and BOUND_MAX_ARCS. */
static enum gp_err choose_step(struct bound *b, uint32_t *sizes)
{
    static const uint32_t divisors[] = {1,  2,  4,   5,   8,   10,  20,  25,
                                        40, 50, 100, 125, 200, 250, 500, 1000};
    uint32_t g = GP_GPU_MILLI;
    for (size_t j = 0; j < b->npc; j++)
        if (is_share(b->pc[j].spec) && b->pc[j].spec->gpu_milli > 0)
            g = gcd_u32(g, b->pc[j].spec->gpu_milli);
    arc_vec arcs = {0};
    enum gp_err err = GP_OK;
    for (size_t d = 0; d < sizeof divisors / sizeof divisors[0]; d++) {
        uint32_t q = divisors[d];
        if (q < g || GP_GPU_MILLI / q > BOUND_MAX_STEPS)
            continue;
        for (size_t j = 0; j < b->npc; j++)
            b->pc[j].size = is_share(b->pc[j].spec) ? b->pc[j].spec->gpu_milli / q : 0;
        size_t total = 0;
        for (size_t k = 0; k < b->nnc && total <= BOUND_MAX_ARCS; k++) {
            arcs.len = 0;
            size_t ns = class_sizes(b, &b->nc[k], sizes);
            if (arcflow_build(sizes, ns, GP_GPU_MILLI / q, &arcs) != 0) {
                err = nomem(b);
                goto done;
            }
            total += arcs.len;
        }
        b->step = q;
        if (total <= BOUND_MAX_ARCS)
            break;
    }
done:
    GP_VEC_FREE(&arcs);
    return err;
}

/* A pod's cpu (res 0) or memory (res 1). */
static int64_t pod_amount(const struct gp_pod_spec *p, int res)
{
    return res == 0 ? p->cpu_milli : p->mem_mib;
}

/* Rounding cuts on one node's cpu (res 0) or memory (res 1) capacity C:
 * for a divisor a, sum floor(amount / a) x <= nodes floor(C / a), for the
 * distinct amounts a of the pods that fit where at most 2 x G pods of size
 * a fit a node, and where the cut says more than the resource row (when a
 * divides C, the row divided by a implies it). Returns the number of rows;
 * row[i] and div[i] describe them. */
#define MAX_KNAPSACK_CUTS 32
static size_t knapsack_cuts(struct bound *b, const struct nclass *k, int res, int *row,
                            int64_t *div)
{
    const struct gp_node_spec *s = k->spec;
    int64_t cap = res == 0 ? s->cpu_milli : s->mem_mib;
    size_t n = 0;
    for (size_t j = 0; j < b->npc && n < MAX_KNAPSACK_CUTS; j++) {
        int64_t a = pod_amount(b->pc[j].spec, res);
        if (!class_fits(k, j) || a <= 0 || cap / a > 2 * (int64_t)s->gpu_count)
            continue;
        bool seen = cap % a == 0;
        for (size_t i = 0; i < n && !seen; i++)
            seen = div[i] == a;
        if (seen)
            continue;
        div[n] = a;
        row[n++] = lp_row(&b->lp, (double)k->count * (double)(cap / a));
    }
    return n;
}

/* Rows and columns of node class k (docs/bound.md, "Formulation"). */
static enum gp_err build_class(struct bound *b, const struct nclass *k, uint32_t *sizes,
                               int *size_row, int *node_row)
{
    struct lp *lp = &b->lp;
    const struct gp_node_spec *s = k->spec;
    const double nodes = (double)k->count, gpus = (double)s->gpu_count;
    bool any_cpu = false, any_mem = false;
    uint32_t kmax = 0;
    for (size_t j = 0; j < b->npc; j++) {
        if (!class_fits(k, j))
            continue;
        const struct gp_pod_spec *p = b->pc[j].spec;
        any_cpu |= p->cpu_milli > 0;
        any_mem |= p->mem_mib > 0;
        if (!is_share(p) && p->gpu_count > kmax)
            kmax = p->gpu_count;
    }
    /* resources of the class: each row divided by one node's capacity */
    int cpu_row = any_cpu ? lp_row(lp, nodes) : 0;
    int mem_row = any_mem ? lp_row(lp, nodes) : 0;
    int gpu_row = s->gpu_count > 0 ? lp_row(lp, nodes * gpus) : 0;
    /* whole GPUs in groups of t: sum floor(k/t) x <= nodes floor(G/t), where
     * it says more than the GPU row divided by t (when t does not divide G) */
    int group_row[GP_MAX_GPUS_PER_NODE + 1] = {0};
    for (uint32_t t = 2; t <= kmax; t++)
        if (s->gpu_count % t != 0)
            group_row[t] = lp_row(lp, nodes * (double)(s->gpu_count / t));
    int cut_row[2][MAX_KNAPSACK_CUTS];
    int64_t cut_div[2][MAX_KNAPSACK_CUTS];
    size_t ncuts[2];
    for (int r = 0; r < 2; r++)
        ncuts[r] = knapsack_cuts(b, k, r, cut_row[r], cut_div[r]);
    /* the arc-flow of the shares */
    size_t ns = class_sizes(b, k, sizes);
    uint32_t steps = GP_GPU_MILLI / b->step;
    for (size_t i = 0; i < ns; i++)
        size_row[sizes[i]] = lp_row(lp, 0);
    arc_vec arcs = {0};
    if (ns > 0 && arcflow_build(sizes, ns, steps, &arcs) != 0)
        return nomem(b);
    for (uint32_t v = 0; v <= steps; v++)
        node_row[v] = 0;
    for (size_t a = 0; a < arcs.len; a++)
        if (arcs.items[a].from > 0 && node_row[arcs.items[a].from] == 0)
            node_row[arcs.items[a].from] = lp_row(lp, 0);

    /* x[p][k]: pods of class p on node class k */
    for (size_t j = 0; j < b->npc; j++) {
        const struct pclass *pc = &b->pc[j];
        if (!class_fits(k, j))
            continue;
        const struct gp_pod_spec *p = pc->spec;
        int col = lp_col(lp, (double)request_milli(p) / GP_GPU_MILLI, (double)pc->count,
                         (double)p->cpu_milli, (double)p->mem_mib);
        lp_coef(lp, pc->count_row, col, 1);
        if (cpu_row)
            lp_coef(lp, cpu_row, col, (double)p->cpu_milli / (double)s->cpu_milli);
        if (mem_row)
            lp_coef(lp, mem_row, col, (double)p->mem_mib / (double)s->mem_mib);
        for (int r = 0; r < 2; r++)
            for (size_t i = 0; i < ncuts[r]; i++)
                lp_coef(lp, cut_row[r][i], col, (double)(pod_amount(p, r) / cut_div[r][i]));
        if (is_share(p)) {
            if (pc->size > 0)
                lp_coef(lp, size_row[pc->size], col, 1);
            continue;
        }
        lp_coef(lp, gpu_row, col, p->gpu_count);
        for (uint32_t t = 2; t <= kmax; t++)
            if (group_row[t])
                lp_coef(lp, group_row[t], col, p->gpu_count / t);
    }
    /* f[a]: GPUs of the class whose shares, in decreasing order, take arc a */
    for (size_t a = 0; a < arcs.len; a++) {
        const struct arc *arc = &arcs.items[a];
        int col = lp_col(lp, 0, nodes * gpus, 0, 0);
        lp_coef(lp, size_row[arc->size], col, -1);
        if (arc->from == 0)
            lp_coef(lp, gpu_row, col, 1); /* a GPU starts here */
        else
            lp_coef(lp, node_row[arc->from], col, 1); /* leaves no more than came in */
        if (arc->from + arc->size < steps)
            lp_coef(lp, node_row[arc->from + arc->size], col, -1);
    }
    GP_VEC_FREE(&arcs);
    return lp->nomem ? nomem(b) : GP_OK;
}

/* Solves the LP; *bound is the dual objective of GLPK's duals y (clamped
 * at zero): sum rhs y + sum ub max(0, c - A'y), an upper bound on the LP's
 * optimum for any y >= 0 (weak duality with the column bounds). res gets
 * the primal optimum and the cpu and memory its pods take. */
static enum gp_err solve(struct bound *b, double *bound, struct gp_bound_result *res)
{
    struct lp *lp = &b->lp;
    int nrows = (int)lp->rhs.len - 1, ncols = (int)lp->obj.len - 1;
    int ne = (int)lp->ia.len - 1;
    double primal = 0;
    *bound = 0;
    if (ncols <= 0)
        return GP_OK;
    enum gp_err err = GP_OK;
    double *y = calloc((size_t)nrows + 1, sizeof *y);
    double *d = malloc(((size_t)ncols + 1) * sizeof *d);
    if (!y || !d) {
        free(y);
        free(d);
        return nomem(b);
    }
    int old_term = glp_term_out(GLP_OFF);
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MAX);
    if (nrows > 0)
        glp_add_rows(P, nrows);
    for (int i = 1; i <= nrows; i++)
        glp_set_row_bnds(P, i, GLP_UP, 0.0, lp->rhs.items[i]);
    glp_add_cols(P, ncols);
    for (int j = 1; j <= ncols; j++) {
        double ub = lp->ub.items[j];
        glp_set_col_bnds(P, j, ub > 0 ? GLP_DB : GLP_FX, 0.0, ub > 0 ? ub : 0.0);
        glp_set_obj_coef(P, j, lp->obj.items[j]);
    }
    if (ne > 0)
        glp_load_matrix(P, ne, lp->ia.items, lp->ja.items, lp->ar.items);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int rc = glp_simplex(P, &parm), status = rc == 0 ? glp_get_status(P) : 0;
    if (rc != 0 || status != GLP_OPT) {
        err = gp_diag_set(b->diag, GP_ESTATE,
                          "bound: the LP solver found no optimum (%d rows, %d columns; "
                          "glp_simplex returned %d, status %d)",
                          nrows, ncols, rc, status);
        goto done;
    }
    primal = glp_get_obj_val(P);
    for (int j = 1; j <= ncols; j++) {
        double x = glp_get_col_prim(P, j);
        res->lp_cpu_milli += x * lp->cpu.items[j];
        res->lp_mem_mib += x * lp->mem.items[j];
    }
    double dual = 0;
    for (int i = 1; i <= nrows; i++) {
        double v = glp_get_row_dual(P, i);
        y[i] = v > 0 ? v : 0;
        dual += lp->rhs.items[i] * y[i];
    }
    memcpy(d, lp->obj.items, ((size_t)ncols + 1) * sizeof *d);
    for (int e = 1; e <= ne; e++)
        d[lp->ja.items[e]] -= lp->ar.items[e] * y[lp->ia.items[e]];
    for (int j = 1; j <= ncols; j++)
        if (d[j] > 0)
            dual += lp->ub.items[j] * d[j];
    *bound = dual;
done:
    res->lp_primal_milli = primal * GP_GPU_MILLI;
    glp_delete_prob(P);
    glp_term_out(old_term);
    free(y);
    free(d);
    return err;
}

/* The pods the LP leaves out (no GPU-milli request: CPU-only pods and
 * memory-only shares) and the cluster's cpu and memory, for the caveat. */
static void left_out(const struct gp_cluster *cluster, const struct gp_pod_spec *const *pods,
                     size_t n, struct gp_bound_result *res)
{
    for (size_t i = 0; i < cluster->nnodes; i++) {
        res->cluster_cpu_milli += (double)cluster->nodes[i].cpu_milli;
        res->cluster_mem_mib += (double)cluster->nodes[i].mem_mib;
    }
    for (size_t i = 0; i < n; i++)
        if (pods[i] && request_milli(pods[i]) == 0) {
            res->left_out_pods++;
            res->left_out_cpu_milli += (double)pods[i]->cpu_milli;
            res->left_out_mem_mib += (double)pods[i]->mem_mib;
        }
}

static enum gp_err bound_run(const struct gp_cluster *cluster,
                             const struct gp_pod_spec *const *pods, size_t n,
                             struct gp_bound_result *res, struct gp_diag *diag)
{
    struct bound b;
    memset(&b, 0, sizeof b);
    b.cluster = cluster;
    b.diag = diag;
    uint32_t *sizes = NULL;
    int *size_row = NULL, *node_row = NULL;
    enum gp_err err = GP_OK;
    if (!(b.e = gp_engine_new(NULL, 0)) || lp_init(&b.lp) != 0) {
        err = nomem(&b);
        goto done;
    }
    res->capacity_milli = capacity_milli(cluster);
    res->arrived_milli = 0;
    for (size_t i = 0; i < n; i++)
        res->arrived_milli += pods[i] ? request_milli(pods[i]) : 0;
    left_out(cluster, pods, n, res);
    if ((err = pod_classes(&b, pods, n)) != GP_OK || (err = node_classes(&b)) != GP_OK)
        goto done;
    res->pod_classes = b.npc;
    res->node_classes = b.nnc;

    sizes = malloc((b.npc + 1) * sizeof *sizes);
    size_row = calloc(GP_GPU_MILLI + 1, sizeof *size_row);
    node_row = calloc(GP_GPU_MILLI + 1, sizeof *node_row);
    if (!sizes || !size_row || !node_row) {
        err = nomem(&b);
        goto done;
    }
    if ((err = choose_step(&b, sizes)) != GP_OK)
        goto done;
    for (size_t j = 0; j < b.npc; j++)
        b.pc[j].count_row = lp_row(&b.lp, (double)b.pc[j].count);
    for (size_t k = 0; k < b.nnc; k++)
        if ((err = build_class(&b, &b.nc[k], sizes, size_row, node_row)) != GP_OK)
            goto done;
    if (b.lp.nomem) {
        err = nomem(&b);
        goto done;
    }
    res->lp_rows = b.lp.rhs.len - 1;
    res->lp_cols = b.lp.obj.len - 1;
    double dual;
    if ((err = solve(&b, &dual, res)) != GP_OK)
        goto done;
    /* allocations are whole milli: round down, after a margin far above the
     * rounding of the sums above */
    double m = floor(dual * GP_GPU_MILLI + 1e-6);
    if (m > (double)res->arrived_milli)
        m = (double)res->arrived_milli;
    if (m > (double)res->capacity_milli)
        m = (double)res->capacity_milli;
    res->max_alloc_milli = m > 0 ? m : 0;
    res->unallocated_pct = res->capacity_milli
                               ? 100.0 - 100.0 * res->max_alloc_milli / (double)res->capacity_milli
                               : 0;
    /* a whole milli-core or MiB of slack for the rounding of the sums */
    res->informative = res->left_out_cpu_milli <= res->cluster_cpu_milli - res->lp_cpu_milli + 1 &&
                       res->left_out_mem_mib <= res->cluster_mem_mib - res->lp_mem_mib + 1;
done:
    free(sizes);
    free(size_row);
    free(node_row);
    lp_free(&b.lp);
    free(b.sorted);
    free(b.pc);
    free(b.fits);
    free(b.refs);
    free(b.nc);
    gp_engine_free(b.e);
    return err;
}

/* ---- entry points ------------------------------------------------------------ */

size_t gp_bound_prefix(const struct gp_cluster *cluster, const struct gp_pod_spec *const *pods,
                       size_t n, unsigned arrived_pct)
{
    uint64_t cap = cluster && (cluster->nodes || !cluster->nnodes) ? capacity_milli(cluster) : 0;
    if (cap == 0 || (n > 0 && !pods))
        return 0;
    uint64_t arrived = 0;
    for (size_t i = 0;; i++) {
        if (arrived * 100 >= (uint64_t)arrived_pct * cap)
            return i;
        if (i == n)
            return n;
        arrived += pods[i] ? request_milli(pods[i]) : 0;
    }
}

static enum gp_err check_args(const struct gp_cluster *cluster,
                              const struct gp_pod_spec *const *pods, size_t n, const void *out,
                              struct gp_diag *diag)
{
    if (!cluster || !out || (n > 0 && !pods) || (cluster->nnodes > 0 && !cluster->nodes))
        return gp_diag_set(diag, GP_EINVALID,
                           "bound: missing cluster, pods or result (or a cluster without its "
                           "nodes)");
    return GP_OK;
}

enum gp_err gp_bound_packing(const struct gp_cluster *cluster,
                             const struct gp_pod_spec *const *pods, size_t n,
                             double *max_alloc_milli, struct gp_diag *diag)
{
    enum gp_err err = check_args(cluster, pods, n, max_alloc_milli, diag);
    if (err != GP_OK)
        return err;
    struct gp_bound_result res;
    memset(&res, 0, sizeof res);
    *max_alloc_milli = 0;
    if ((err = bound_run(cluster, pods, n, &res, diag)) == GP_OK)
        *max_alloc_milli = res.max_alloc_milli;
    return err;
}

enum gp_err gp_bound_at(const struct gp_cluster *cluster, const struct gp_pod_spec *const *pods,
                        size_t n, unsigned arrived_pct, struct gp_bound_result *out,
                        struct gp_diag *diag)
{
    enum gp_err err = check_args(cluster, pods, n, out, diag);
    if (err != GP_OK)
        return err;
    memset(out, 0, sizeof *out);
    out->prefix = gp_bound_prefix(cluster, pods, n, arrived_pct);
    return bound_run(cluster, pods, out->prefix, out, diag);
}
