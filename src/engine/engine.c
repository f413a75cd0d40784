/* engine.c - the scheduling cycle: the queue, the filters, the policy's
 * score, the commit and the release, with per-node summaries and cluster
 * totals kept incrementally. Pure: no I/O, no clock, no globals. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

/* A gang and its members' state. */
struct group {
    struct gp_group_spec spec;
    GP_VEC(uint32_t) members; /* every pod ever added to it, in order */
    uint32_t bound;           /* members bound now */
    uint64_t cycle;           /* the scheduling cycle that last tried it */
};

struct gp_engine {
    const struct gp_policy_ops *policy;
    void *policy_state;
    struct gp_rng rng;
    GP_VEC(struct gp_node) nodes;
    GP_VEC(struct gp_pod) pods;
    GP_VEC(uint32_t) pending; /* pod ids in queue order */
    const char *models[GP_MAX_GPU_MODELS];
    uint32_t nmodels;
    uint64_t generation; /* bumped whenever capacity grows (release, node added) */
    /* Pods that failed at `failed_gen`, one per distinct request shape: a pod
     * of the same shape fails too until the generation changes (a bind only
     * takes capacity away), so it is answered without scanning the nodes. */
    GP_VEC(struct gp_decision) failed;
    uint64_t failed_gen;
    /* the same for gangs: a gang like a failed one (same member shape, same
     * number still needed, same topology) fails too at that generation */
    struct failed_gang {
        uint32_t pod; /* a member of the failed gang, for its shape */
        uint32_t need;
        struct gp_decision decision;
    } failed_gangs[16];
    uint32_t nfailed_gangs;
    GP_VEC(struct gp_shape) target;
    uint64_t target_version;
    int64_t next_seq;
    struct gp_engine_totals totals;
    GP_VEC(struct group) groups; /* gang id - 1 */
    GP_VEC(uint32_t) scratch;    /* a gang's members during its attempt */
    uint64_t cycle;              /* scheduling cycles so far */
    /* while a gang tries one topology domain: nodes outside it are rejected */
    const char *domain_key, *domain_value;
};

const char *gp_filter_name(enum gp_filter f)
{
    static const char *const names[] = {"node-state", "node-selector", "topology", "taint",
                                        "gpu-model",  "cpu",           "memory",   "gpu-count",
                                        "gpu-share",  "gpu-memory"};
    _Static_assert(sizeof names / sizeof names[0] == GP_FILTER_COUNT, "one name per filter");
    return (unsigned)f < GP_FILTER_COUNT ? names[f] : "none";
}

const char *gp_filter_text(enum gp_filter f)
{
    static const char *const texts[] = {
#define GP_FILTER_TEXT(name, text) text,
        GP_FILTERS(GP_FILTER_TEXT)
#undef GP_FILTER_TEXT
    };
    return (unsigned)f < GP_FILTER_COUNT ? texts[f] : "fits";
}

enum gp_filter gp_explain_main(const struct gp_explain *x)
{
    enum gp_filter best = GP_FILTER_COUNT;
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        if (f != GP_FILTER_TOPOLOGY && x->rejected[f] > 0 &&
            (best == GP_FILTER_COUNT || x->rejected[f] > x->rejected[best]))
            best = (enum gp_filter)f;
    /* nodes outside a gang's domain say why only when nothing else does */
    if (best == GP_FILTER_COUNT && x->rejected[GP_FILTER_TOPOLOGY] > 0)
        best = GP_FILTER_TOPOLOGY;
    return best;
}

struct gp_engine *gp_engine_new(const struct gp_policy_ops *policy, uint64_t seed)
{
    struct gp_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->policy = policy;
    gp_rng_seed(&e->rng, seed);
    if (policy && policy->init && policy->init(e, &e->policy_state) != 0) {
        free(e);
        return NULL;
    }
    return e;
}

void gp_engine_free(struct gp_engine *e)
{
    if (!e)
        return;
    if (e->policy && e->policy->destroy)
        e->policy->destroy(e->policy_state);
    GP_VEC_FREE(&e->nodes);
    GP_VEC_FREE(&e->pods);
    GP_VEC_FREE(&e->pending);
    GP_VEC_FREE(&e->failed);
    GP_VEC_FREE(&e->target);
    for (size_t i = 0; i < e->groups.len; i++)
        GP_VEC_FREE(&e->groups.items[i].members);
    GP_VEC_FREE(&e->groups);
    GP_VEC_FREE(&e->scratch);
    free(e);
}

/* Returns the model's index, interning it; -1 when the table is full. */
static int model_intern(struct gp_engine *e, const char *name)
{
    for (uint32_t i = 0; i < e->nmodels; i++)
        if (strcmp(e->models[i], name) == 0)
            return (int)i;
    if (e->nmodels == GP_MAX_GPU_MODELS)
        return -1;
    e->models[e->nmodels] = name;
    return (int)e->nmodels++;
}

static void node_summarise(struct gp_node *n)
{
    n->gpus_whole_free = 0;
    n->gpu_milli_free = 0;
    n->gpu_milli_max_free = 0;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        uint32_t m = n->gpu[g].milli_free;
        n->gpus_whole_free += m == GP_GPU_MILLI && n->gpu[g].pods == 0;
        n->gpu_milli_free += m;
        if (m > n->gpu_milli_max_free)
            n->gpu_milli_max_free = m;
    }
}

enum gp_err gp_engine_node_add(struct gp_engine *e, const struct gp_node_spec *spec,
                               uint32_t *out_id)
{
    if (spec->gpu_count > GP_MAX_GPUS_PER_NODE || spec->cpu_milli < 0 || spec->mem_mib < 0)
        return GP_EINVALID;
    struct gp_node n;
    memset(&n, 0, sizeof n);
    n.spec = *spec;
    n.id = (uint32_t)e->nodes.len;
    n.state = GP_NODE_READY;
    n.cpu_free_milli = spec->cpu_milli;
    n.mem_free_mib = spec->mem_mib;
    if (spec->gpu_count > 0) {
        int m = model_intern(e, spec->gpu_model ? spec->gpu_model : "");
        if (m < 0)
            return GP_ELIMIT;
        n.model = (uint32_t)m;
    }
    for (uint32_t g = 0; g < spec->gpu_count; g++) {
        n.gpu[g].milli_free = GP_GPU_MILLI;
        n.gpu[g].mem_free_mib = spec->gpu_mem_mib;
    }
    node_summarise(&n);
    if (GP_VEC_PUSH(&e->nodes, n) != 0)
        return GP_ENOMEM;
    e->totals.nodes_ready++;
    e->totals.gpus += spec->gpu_count;
    e->totals.gpu_milli_total += (uint64_t)spec->gpu_count * GP_GPU_MILLI;
    e->totals.cpu_milli_total += spec->cpu_milli;
    e->totals.mem_mib_total += spec->mem_mib;
    e->generation++;
    if (out_id)
        *out_id = n.id;
    return GP_OK;
}

enum gp_err gp_engine_node_remove(struct gp_engine *e, uint32_t id)
{
    if (id >= e->nodes.len || e->nodes.items[id].state == GP_NODE_GONE)
        return GP_EINVALID;
    struct gp_node *n = &e->nodes.items[id];
    if (n->pods > 0)
        return GP_ESTATE;
    n->state = GP_NODE_GONE;
    e->totals.nodes_ready--;
    e->totals.gpus -= n->spec.gpu_count;
    e->totals.gpu_milli_total -= (uint64_t)n->spec.gpu_count * GP_GPU_MILLI;
    e->totals.cpu_milli_total -= n->spec.cpu_milli;
    e->totals.mem_mib_total -= n->spec.mem_mib;
    return GP_OK;
}

/* Queue order: higher priority first, then older (lower seq) first. */
static int queue_before(const struct gp_pod *a, const struct gp_pod *b)
{
    if (a->spec.priority != b->spec.priority)
        return a->spec.priority > b->spec.priority;
    return a->seq < b->seq;
}

static enum gp_err pending_insert(struct gp_engine *e, uint32_t pod)
{
    if (GP_VEC_RESERVE(&e->pending, e->pending.len + 1) != 0)
        return GP_ENOMEM;
    const struct gp_pod *p = &e->pods.items[pod];
    size_t lo = 0, hi = e->pending.len;
    while (lo < hi) { /* first position whose pod p goes before */
        size_t mid = lo + (hi - lo) / 2;
        if (queue_before(p, &e->pods.items[e->pending.items[mid]]))
            hi = mid;
        else
            lo = mid + 1;
    }
    memmove(&e->pending.items[lo + 1], &e->pending.items[lo],
            (e->pending.len - lo) * sizeof e->pending.items[0]);
    e->pending.items[lo] = pod;
    e->pending.len++;
    return GP_OK;
}

static void pending_remove(struct gp_engine *e, uint32_t pod)
{
    for (size_t i = 0; i < e->pending.len; i++) {
        if (e->pending.items[i] == pod) {
            memmove(&e->pending.items[i], &e->pending.items[i + 1],
                    (e->pending.len - i - 1) * sizeof e->pending.items[0]);
            e->pending.len--;
            return;
        }
    }
}

enum gp_err gp_engine_pod_add(struct gp_engine *e, const struct gp_pod_spec *spec, double now_s,
                              uint32_t *out_id)
{
    if (spec->cpu_milli < 0 || spec->mem_mib < 0 || spec->gpu_count > GP_MAX_GPUS_PER_NODE)
        return GP_EINVALID;
    /* a share of one GPU may be memory only (gpu_milli 0, gpu_mem_mib > 0) */
    if (spec->gpu_count > 0 &&
        (spec->gpu_milli > GP_GPU_MILLI ||
         (spec->gpu_milli == 0 && (spec->gpu_count > 1 || spec->gpu_mem_mib == 0)) ||
         (spec->gpu_count > 1 && spec->gpu_milli != GP_GPU_MILLI)))
        return GP_EINVALID;
    if (spec->group > e->groups.len)
        return GP_EINVALID;
    struct gp_pod p;
    memset(&p, 0, sizeof p);
    p.spec = *spec;
    p.id = (uint32_t)e->pods.len;
    p.state = GP_POD_PENDING;
    p.seq = e->next_seq++;
    p.added_at_s = now_s;
    p.tried_gen = UINT64_MAX;
    p.model_mask = spec->ngpu_models ? 0 : ~(uint64_t)0;
    for (size_t i = 0; i < spec->ngpu_models; i++) {
        int m = model_intern(e, spec->gpu_models[i]);
        if (m < 0)
            return GP_ELIMIT;
        p.model_mask |= (uint64_t)1 << m;
    }
    if (GP_VEC_PUSH(&e->pods, p) != 0)
        return GP_ENOMEM;
    enum gp_err err = pending_insert(e, p.id);
    if (err == GP_OK && p.spec.group &&
        GP_VEC_PUSH(&e->groups.items[p.spec.group - 1].members, p.id) != 0) {
        pending_remove(e, p.id);
        err = GP_ENOMEM;
    }
    if (err != GP_OK) {
        e->pods.len--;
        return err;
    }
    if (out_id)
        *out_id = p.id;
    return GP_OK;
}

static bool selector_matches(const struct gp_node *n, const struct gp_pod *p)
{
    for (size_t i = 0; i < p->spec.nnode_selector; i++) {
        const struct gp_kv *want = &p->spec.node_selector[i];
        bool found = false;
        for (size_t j = 0; j < n->spec.nlabels && !found; j++)
            found = strcmp(n->spec.labels[j].key, want->key) == 0 &&
                    strcmp(n->spec.labels[j].value, want->value) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool has_label(const struct gp_node *n, const char *key, const char *value)
{
    for (size_t j = 0; j < n->spec.nlabels; j++)
        if (strcmp(n->spec.labels[j].key, key) == 0)
            return !value || strcmp(n->spec.labels[j].value, value) == 0;
    return false;
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool tolerates(const struct gp_pod *p, const struct gp_taint *t)
{
    for (size_t i = 0; i < p->spec.ntolerations; i++) {
        const struct gp_toleration *tol = &p->spec.tolerations[i];
        if (!tol->any_effect && tol->effect != t->effect)
            continue;
        if (!tol->key || !*tol->key) {
            if (tol->op_exists)
                return true;
            continue;
        }
        if (strcmp(tol->key, t->key) != 0)
            continue;
        if (tol->op_exists || str_eq(tol->value, t->value))
            return true;
    }
    return false;
}

static bool taints_tolerated(const struct gp_node *n, const struct gp_pod *p)
{
    for (size_t i = 0; i < n->spec.ntaints; i++) {
        const struct gp_taint *t = &n->spec.taints[i];
        if (t->effect != GP_EFFECT_PREFER_NO_SCHEDULE && !tolerates(p, t))
            return false;
    }
    return true;
}

enum gp_filter gp_engine_filter(const struct gp_engine *e, const struct gp_node *n,
                                const struct gp_pod *p)
{
    if (n->state != GP_NODE_READY)
        return GP_FILTER_NODE_STATE;
    if (p->spec.nnode_selector && !selector_matches(n, p))
        return GP_FILTER_SELECTOR;
    if (e->domain_key && !has_label(n, e->domain_key, e->domain_value))
        return GP_FILTER_TOPOLOGY;
    if (n->spec.ntaints && !taints_tolerated(n, p))
        return GP_FILTER_TAINT;
    uint32_t want = p->spec.gpu_count;
    if (want > 0 && n->spec.gpu_count > 0 && !(p->model_mask >> n->model & 1))
        return GP_FILTER_GPU_MODEL;
    if (p->spec.cpu_milli > n->cpu_free_milli)
        return GP_FILTER_CPU;
    if (p->spec.mem_mib > n->mem_free_mib)
        return GP_FILTER_MEMORY;
    if (want == 0)
        return GP_FILTER_COUNT;
    uint32_t milli = p->spec.gpu_milli, mem = p->spec.gpu_mem_mib;
    if (milli == GP_GPU_MILLI) {
        if (n->gpus_whole_free < want)
            return GP_FILTER_GPU_COUNT;
        if (mem > n->spec.gpu_mem_mib)
            return GP_FILTER_GPU_MEMORY;
        return GP_FILTER_COUNT;
    }
    if (n->spec.gpu_count == 0)
        return GP_FILTER_GPU_COUNT;
    if (n->gpu_milli_max_free < milli)
        return GP_FILTER_GPU_SHARE;
    if (mem > 0) {
        for (uint32_t g = 0; g < n->spec.gpu_count; g++)
            if (n->gpu[g].milli_free >= milli && n->gpu[g].mem_free_mib >= mem)
                return GP_FILTER_COUNT;
        return GP_FILTER_GPU_MEMORY;
    }
    return GP_FILTER_COUNT;
}

int gp_engine_pick_default(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick)
{
    uint32_t want = p->spec.gpu_count, milli = p->spec.gpu_milli, mem = p->spec.gpu_mem_mib;
    pick->ngpus = 0;
    if (want == 0)
        return 0;
    if (milli == GP_GPU_MILLI) {
        for (uint32_t g = 0; g < n->spec.gpu_count && pick->ngpus < want; g++)
            if (n->gpu[g].milli_free == GP_GPU_MILLI && n->gpu[g].pods == 0 &&
                n->gpu[g].mem_free_mib >= mem)
                pick->gpu[pick->ngpus++] = (uint8_t)g;
        return pick->ngpus == want ? 0 : -1;
    }
    int best = -1;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        const struct gp_gpu *gpu = &n->gpu[g];
        if (gpu->milli_free < milli || gpu->mem_free_mib < mem)
            continue;
        if (best < 0 || gpu->milli_free < n->gpu[best].milli_free)
            best = (int)g;
    }
    if (best < 0)
        return -1;
    pick->ngpus = 1;
    pick->gpu[0] = (uint8_t)best;
    return 0;
}

/* A policy's pick must name distinct GPUs of the node that can hold the pod. */
static bool pick_valid(const struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    if (pick->ngpus != p->spec.gpu_count)
        return false;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t g = pick->gpu[i];
        if (g >= n->spec.gpu_count || (seen >> g & 1))
            return false;
        seen |= 1u << g;
        if (n->gpu[g].milli_free < p->spec.gpu_milli ||
            n->gpu[g].mem_free_mib < p->spec.gpu_mem_mib)
            return false;
        if (p->spec.gpu_milli == GP_GPU_MILLI && n->gpu[g].pods > 0)
            return false; /* a whole GPU must be empty, memory-only shares too */
    }
    return true;
}

static void commit(struct gp_engine *e, struct gp_pod *p, struct gp_node *n,
                   const struct gp_pick *pick)
{
    p->state = GP_POD_BOUND;
    p->node = n->id;
    p->pick = *pick;
    n->cpu_free_milli -= p->spec.cpu_milli;
    n->mem_free_mib -= p->spec.mem_mib;
    bool whole = p->spec.gpu_milli == GP_GPU_MILLI;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        struct gp_gpu *g = &n->gpu[pick->gpu[i]];
        g->milli_free -= p->spec.gpu_milli;
        /* a whole GPU is exclusive: its memory goes with it */
        g->mem_free_mib = whole ? 0 : g->mem_free_mib - p->spec.gpu_mem_mib;
        g->pods++;
    }
    node_summarise(n);
    n->pods++;
    e->totals.gpu_milli_alloc += (uint64_t)pick->ngpus * p->spec.gpu_milli;
    e->totals.cpu_milli_alloc += p->spec.cpu_milli;
    e->totals.mem_mib_alloc += p->spec.mem_mib;
    e->totals.pods_bound++;
    if (p->spec.group)
        e->groups.items[p->spec.group - 1].bound++;
    if (e->policy && e->policy->on_bind)
        e->policy->on_bind(e->policy_state, e, n, p);
}

/* Gives a bound pod's resources back. `grow` bumps the cluster generation
 * (capacity grew); a gang's rollback restores an earlier state and does not. */
static void release(struct gp_engine *e, struct gp_pod *p, bool grow)
{
    struct gp_node *n = &e->nodes.items[p->node];
    n->cpu_free_milli += p->spec.cpu_milli;
    n->mem_free_mib += p->spec.mem_mib;
    bool whole = p->spec.gpu_milli == GP_GPU_MILLI;
    for (uint32_t i = 0; i < p->pick.ngpus; i++) {
        struct gp_gpu *g = &n->gpu[p->pick.gpu[i]];
        g->milli_free += p->spec.gpu_milli;
        g->mem_free_mib = whole ? n->spec.gpu_mem_mib : g->mem_free_mib + p->spec.gpu_mem_mib;
        g->pods--;
    }
    node_summarise(n);
    n->pods--;
    e->totals.gpu_milli_alloc -= (uint64_t)p->pick.ngpus * p->spec.gpu_milli;
    e->totals.cpu_milli_alloc -= p->spec.cpu_milli;
    e->totals.mem_mib_alloc -= p->spec.mem_mib;
    e->totals.pods_bound--;
    if (p->spec.group)
        e->groups.items[p->spec.group - 1].bound--;
    if (grow)
        e->generation++;
    if (e->policy && e->policy->on_release)
        e->policy->on_release(e->policy_state, e, n, p);
}

enum gp_err gp_engine_pod_finished(struct gp_engine *e, uint32_t id)
{
    if (id >= e->pods.len)
        return GP_EINVALID;
    struct gp_pod *p = &e->pods.items[id];
    switch (p->state) {
    case GP_POD_PENDING:
        pending_remove(e, id);
        break;
    case GP_POD_BOUND:
        release(e, p, true);
        break;
    case GP_POD_DONE:
        return GP_ESTATE;
    }
    p->state = GP_POD_DONE;
    return GP_OK;
}

/* Filters every node, scores the feasible ones and commits the best. Fills
 * *d with a BIND or an UNSCHEDULABLE decision. */
static void place(struct gp_engine *e, struct gp_pod *p, struct gp_decision *d)
{
    memset(d, 0, sizeof *d);
    d->pod = p->id;
    struct gp_node *best = NULL;
    double best_score = 0;
    struct gp_pick best_pick = {0}, pick;
    for (size_t i = 0; i < e->nodes.len; i++) {
        struct gp_node *n = &e->nodes.items[i];
        enum gp_filter f = gp_engine_filter(e, n, p);
        if (f != GP_FILTER_COUNT) {
            d->explain.rejected[f]++;
            continue;
        }
        double score;
        if (e->policy) {
            memset(&pick, 0, sizeof pick);
            score = e->policy->score(e->policy_state, e, n, p, &pick);
            if (!pick_valid(n, p, &pick) && gp_engine_pick_default(n, p, &pick) != 0)
                continue;
        } else {
            score = 0;
            gp_engine_pick_default(n, p, &pick);
        }
        if (!best || score > best_score) {
            best = n;
            best_score = score;
            best_pick = pick;
        }
    }
    d->explain.nodes_total = (uint32_t)e->nodes.len;
    if (!best) {
        d->kind = GP_DECISION_UNSCHEDULABLE;
        p->tried_gen = e->generation;
        return;
    }
    d->kind = GP_DECISION_BIND;
    d->node = best->id;
    d->pick = best_pick;
    commit(e, p, best, &best_pick);
}

/* Two pods of the same shape fit on exactly the same nodes. Arrays are
 * compared by identity (pods made from one template share them), so this
 * may say "different" for equal requests, never "same" for different ones. */
static bool same_shape(const struct gp_pod *a, const struct gp_pod *b)
{
    const struct gp_pod_spec *x = &a->spec, *y = &b->spec;
    return x->cpu_milli == y->cpu_milli && x->mem_mib == y->mem_mib &&
           x->gpu_count == y->gpu_count && x->gpu_milli == y->gpu_milli &&
           x->gpu_mem_mib == y->gpu_mem_mib && a->model_mask == b->model_mask &&
           x->nnode_selector == y->nnode_selector && x->node_selector == y->node_selector &&
           x->ntolerations == y->ntolerations && x->tolerations == y->tolerations;
}

/* The cached failure of a pod of p's shape at the current generation. */
static const struct gp_decision *failed_lookup(struct gp_engine *e, const struct gp_pod *p)
{
    if (e->failed_gen != e->generation) {
        e->failed.len = 0;
        e->nfailed_gangs = 0;
        e->failed_gen = e->generation;
        return NULL;
    }
    for (size_t i = 0; i < e->failed.len; i++)
        if (same_shape(&e->pods.items[e->failed.items[i].pod], p))
            return &e->failed.items[i];
    return NULL;
}

/* Could pod p fit node n if n were empty? (The "never fits" test.) */
static bool fits_empty(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    if (n->state != GP_NODE_READY || (p->spec.nnode_selector && !selector_matches(n, p)) ||
        (n->spec.ntaints && !taints_tolerated(n, p)))
        return false;
    (void)e;
    if (p->spec.cpu_milli > n->spec.cpu_milli || p->spec.mem_mib > n->spec.mem_mib)
        return false;
    if (p->spec.gpu_count == 0)
        return true;
    return (p->model_mask >> n->model & 1) && p->spec.gpu_count <= n->spec.gpu_count &&
           p->spec.gpu_mem_mib <= n->spec.gpu_mem_mib;
}

/* Whether the gang could fit the empty cluster, within the domain
 * key=value when key is set: every member fits some node of it when empty,
 * and its `need` first GPU requests fit the GPUs of the nodes that can take
 * a member (a capacity test: a gang that passes may still not pack). */
static bool gang_fits_empty(const struct gp_engine *e, const uint32_t *members, size_t n,
                            uint32_t need, const char *key, const char *value)
{
    uint64_t eligible = 0, wanted = 0;
    for (size_t k = 0; k < n; k++) {
        const struct gp_pod *p = &e->pods.items[members[k]];
        bool any = false;
        for (size_t i = 0; i < e->nodes.len && !any; i++) {
            const struct gp_node *node = &e->nodes.items[i];
            any = (!key || has_label(node, key, value)) && fits_empty(e, node, p);
        }
        if (!any)
            return false;
    }
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *node = &e->nodes.items[i];
        if (key && !has_label(node, key, value))
            continue;
        for (size_t k = 0; k < n; k++) {
            if (fits_empty(e, node, &e->pods.items[members[k]])) {
                eligible += (uint64_t)node->spec.gpu_count * GP_GPU_MILLI;
                break;
            }
        }
    }
    for (size_t k = 0; k < n && k < need; k++) {
        const struct gp_pod *p = &e->pods.items[members[k]];
        wanted += (uint64_t)p->spec.gpu_count * p->spec.gpu_milli;
    }
    return wanted <= eligible;
}

/* A gang never fits when it cannot fit the empty cluster - or, with a
 * required topology domain, no domain of the empty cluster. */
static bool gang_never_fits(const struct gp_engine *e, const struct group *g,
                            const uint32_t *members, size_t n, uint32_t need)
{
    const char *key = g->spec.topology_key;
    if (!key || !g->spec.topology_required)
        return !gang_fits_empty(e, members, n, need, NULL, NULL);
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *node = &e->nodes.items[i];
        for (size_t j = 0; j < node->spec.nlabels; j++)
            if (strcmp(node->spec.labels[j].key, key) == 0 &&
                gang_fits_empty(e, members, n, need, key, node->spec.labels[j].value))
                return false;
    }
    return true;
}

/* Places the members one after another, each where the policy likes best
 * given the members placed before it. Keeps them when at least `need` are
 * bound; otherwise takes every one back, so a gang never holds resources
 * while it waits. *fail gets the first member's explanation. */
static bool gang_try(struct gp_engine *e, const uint32_t *members, size_t n, uint32_t need,
                     struct gp_decision *out, struct gp_decision *fail, bool *have_fail)
{
    uint32_t placed = 0;
    for (size_t k = 0; k < n; k++) {
        place(e, &e->pods.items[members[k]], &out[k]);
        if (out[k].kind == GP_DECISION_BIND)
            placed++;
        else if (!*have_fail) {
            *fail = out[k];
            *have_fail = true;
        }
    }
    if (placed >= need)
        return true;
    for (size_t k = n; k-- > 0;) {
        struct gp_pod *p = &e->pods.items[members[k]];
        if (out[k].kind == GP_DECISION_BIND) {
            release(e, p, false);
            p->state = GP_POD_PENDING;
        }
    }
    return false;
}

/* Free GPU milli of the ready nodes in one topology domain. */
static uint64_t domain_free(const struct gp_engine *e, const char *key, const char *value)
{
    uint64_t free_milli = 0;
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *n = &e->nodes.items[i];
        if (n->state == GP_NODE_READY && has_label(n, key, value))
            free_milli += n->gpu_milli_free;
    }
    return free_milli;
}

/* Tries the gang once per topology domain, the domain with the most free
 * GPU first (ties by name), then - when the domain is only preferred -
 * anywhere. */
static bool gang_try_domains(struct gp_engine *e, const struct group *g, const uint32_t *members,
                             size_t n, uint32_t need, struct gp_decision *out,
                             struct gp_decision *fail, bool *have_fail)
{
    const char *key = g->spec.topology_key;
    if (!key)
        return gang_try(e, members, n, need, out, fail, have_fail);
    const char *tried_last = NULL;
    for (;;) {
        /* the next domain: most free GPU below the last one tried */
        const char *best = NULL;
        uint64_t best_free = 0, last_free = tried_last ? domain_free(e, key, tried_last) : 0;
        for (size_t i = 0; i < e->nodes.len; i++) {
            const struct gp_node *node = &e->nodes.items[i];
            const char *v = NULL;
            for (size_t j = 0; j < node->spec.nlabels && !v; j++)
                if (strcmp(node->spec.labels[j].key, key) == 0)
                    v = node->spec.labels[j].value;
            if (!v || node->state != GP_NODE_READY)
                continue;
            uint64_t f = domain_free(e, key, v);
            bool after_last =
                !tried_last || f < last_free || (f == last_free && strcmp(v, tried_last) > 0);
            bool better = !best || f > best_free || (f == best_free && strcmp(v, best) < 0);
            if (after_last && better) {
                best = v;
                best_free = f;
            }
        }
        if (!best)
            break;
        e->domain_key = key;
        e->domain_value = best;
        bool ok = gang_try(e, members, n, need, out, fail, have_fail);
        e->domain_key = e->domain_value = NULL;
        if (ok)
            return true;
        tried_last = best;
    }
    return !g->spec.topology_required && gang_try(e, members, n, need, out, fail, have_fail);
}

/* A failed gang at this generation that this one is like: members of the
 * same shape (all members of a gang share one template), as many still
 * needed, the same topology. */
static const struct gp_decision *failed_gang_lookup(struct gp_engine *e, const struct group *g,
                                                    uint32_t member, uint32_t need)
{
    if (e->failed_gen != e->generation) {
        e->failed.len = 0;
        e->nfailed_gangs = 0;
        e->failed_gen = e->generation;
        return NULL;
    }
    const struct gp_pod *p = &e->pods.items[member];
    for (uint32_t i = 0; i < e->nfailed_gangs; i++) {
        const struct failed_gang *f = &e->failed_gangs[i];
        const struct gp_pod *q = &e->pods.items[f->pod];
        const struct group *h = &e->groups.items[q->spec.group - 1];
        if (f->need == need && same_shape(p, q) &&
            str_eq(h->spec.topology_key, g->spec.topology_key) &&
            h->spec.topology_required == g->spec.topology_required)
            return &f->decision;
    }
    return NULL;
}

/* One attempt at a gang: a decision for each of its pending members, in
 * queue order, written to out (room for all of them is the caller's). */
static size_t place_gang(struct gp_engine *e, uint32_t gid, struct gp_decision *out)
{
    struct group *g = &e->groups.items[gid - 1];
    e->scratch.len = 0;
    for (size_t i = 0; i < g->members.len; i++) {
        uint32_t id = g->members.items[i];
        if (e->pods.items[id].state == GP_POD_PENDING)
            if (GP_VEC_PUSH(&e->scratch, id) != 0)
                return 0; /* out of memory: try again next cycle */
    }
    const uint32_t *members = e->scratch.items;
    size_t n = e->scratch.len;
    uint32_t need = g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 0;
    if (need == 0) { /* the gang runs: late members join one by one */
        for (size_t k = 0; k < n; k++)
            place(e, &e->pods.items[members[k]], &out[k]);
        return n;
    }
    struct gp_decision fail;
    bool have_fail = false;
    enum gp_gang_wait why = GP_GANG_MEMBERS;
    memset(&fail, 0, sizeof fail);
    if (n >= need) {
        const struct gp_decision *known = failed_gang_lookup(e, g, members[0], need);
        if (known) {
            fail = *known;
            why = known->gang;
        } else if (gang_try_domains(e, g, members, n, need, out, &fail, &have_fail)) {
            return n;
        } else {
            why = gang_never_fits(e, g, members, n, need) ? GP_GANG_NEVER_FITS : GP_GANG_NO_ROOM;
            fail.gang = why;
            if (e->nfailed_gangs < sizeof e->failed_gangs / sizeof e->failed_gangs[0]) {
                struct failed_gang *f = &e->failed_gangs[e->nfailed_gangs++];
                f->pod = members[0];
                f->need = need;
                f->decision = fail;
            }
        }
    }
    for (size_t k = 0; k < n; k++) {
        struct gp_pod *p = &e->pods.items[members[k]];
        out[k] = fail;
        out[k].kind = GP_DECISION_UNSCHEDULABLE;
        out[k].pod = p->id;
        out[k].gang = why;
        out[k].explain.nodes_total = (uint32_t)e->nodes.len;
        /* waiting for members: try again when one arrives, whatever the cluster */
        p->tried_gen = why == GP_GANG_MEMBERS ? UINT64_MAX : e->generation;
    }
    return n;
}

static size_t gang_pending(const struct gp_engine *e, uint32_t gid)
{
    const struct group *g = &e->groups.items[gid - 1];
    size_t n = 0;
    for (size_t i = 0; i < g->members.len; i++)
        n += e->pods.items[g->members.items[i]].state == GP_POD_PENDING;
    return n;
}

size_t gp_engine_schedule(struct gp_engine *e, double now_s, size_t budget, struct gp_decision *out,
                          size_t cap)
{
    (void)now_s;
    size_t ndec = 0, tried = 0, keep = 0;
    bool full = false;
    e->cycle++;
    for (size_t i = 0; i < e->pending.len; i++) {
        uint32_t id = e->pending.items[i];
        struct gp_pod *p = &e->pods.items[id];
        if (p->state == GP_POD_BOUND) /* a gang member placed earlier in this cycle */
            continue;
        bool stop = full || ndec == cap || (budget && tried == budget);
        if (stop || p->tried_gen == e->generation) {
            e->pending.items[keep++] = id;
            continue;
        }
        if (p->spec.group) {
            struct group *g = &e->groups.items[p->spec.group - 1];
            if (g->cycle != e->cycle) {
                if (cap - ndec < gang_pending(e, p->spec.group)) {
                    full = true; /* no room for the whole gang's decisions */
                    e->pending.items[keep++] = id;
                    continue;
                }
                g->cycle = e->cycle;
                tried++;
                ndec += place_gang(e, p->spec.group, out + ndec);
            }
            if (p->state != GP_POD_BOUND)
                e->pending.items[keep++] = id;
            continue;
        }
        tried++;
        const struct gp_decision *known = failed_lookup(e, p);
        if (known) {
            out[ndec] = *known;
            out[ndec].pod = id;
            p->tried_gen = e->generation;
        } else {
            place(e, p, &out[ndec]);
            if (out[ndec].kind != GP_DECISION_BIND && e->failed.len < 64)
                (void)GP_VEC_PUSH(&e->failed, out[ndec]); /* a cache: failing to grow is fine */
        }
        if (out[ndec].kind != GP_DECISION_BIND)
            e->pending.items[keep++] = id;
        ndec++;
    }
    e->pending.len = keep;
    return ndec;
}

enum gp_err gp_engine_group_add(struct gp_engine *e, const struct gp_group_spec *spec,
                                uint32_t *out_id)
{
    if (spec->min_member == 0)
        return GP_EINVALID;
    struct group g;
    memset(&g, 0, sizeof g);
    g.spec = *spec;
    if (GP_VEC_PUSH(&e->groups, g) != 0)
        return GP_ENOMEM;
    if (out_id)
        *out_id = (uint32_t)e->groups.len;
    return GP_OK;
}

uint32_t gp_engine_group_bound(const struct gp_engine *e, uint32_t group)
{
    return group >= 1 && group <= e->groups.len ? e->groups.items[group - 1].bound : 0;
}

enum gp_err gp_engine_schedule_pod(struct gp_engine *e, uint32_t id, struct gp_decision *out)
{
    if (id >= e->pods.len)
        return GP_EINVALID;
    struct gp_pod *p = &e->pods.items[id];
    if (p->state != GP_POD_PENDING)
        return GP_ESTATE;
    if (p->spec.group) /* gangs are placed whole, by gp_engine_schedule */
        return GP_EINVALID;
    place(e, p, out);
    if (out->kind == GP_DECISION_BIND)
        pending_remove(e, id);
    return GP_OK;
}

size_t gp_engine_node_count(const struct gp_engine *e)
{
    return e->nodes.len;
}

const struct gp_node *gp_engine_node(const struct gp_engine *e, uint32_t id)
{
    return id < e->nodes.len ? &e->nodes.items[id] : NULL;
}

size_t gp_engine_pod_count(const struct gp_engine *e)
{
    return e->pods.len;
}

const struct gp_pod *gp_engine_pod(const struct gp_engine *e, uint32_t id)
{
    return id < e->pods.len ? &e->pods.items[id] : NULL;
}

size_t gp_engine_pending_count(const struct gp_engine *e)
{
    return e->pending.len;
}

size_t gp_engine_model_count(const struct gp_engine *e)
{
    return e->nmodels;
}

const char *gp_engine_model_name(const struct gp_engine *e, uint32_t model)
{
    return model < e->nmodels ? e->models[model] : NULL;
}

struct gp_rng *gp_engine_rng(const struct gp_engine *e)
{
    /* the generator is the engine's mutable state, reachable from a const view */
    return (struct gp_rng *)(uintptr_t)&e->rng;
}

const struct gp_policy_ops *gp_engine_policy(const struct gp_engine *e)
{
    return e->policy;
}

void gp_engine_totals(const struct gp_engine *e, struct gp_engine_totals *out)
{
    *out = e->totals;
}

/* Shape order for the target: more pods first, then a fixed order of the
 * fields, so that the result does not depend on the input order. */
static int shape_cmp(const void *pa, const void *pb)
{
    const struct gp_shape *a = pa, *b = pb;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    if (a->gpu_count != b->gpu_count)
        return a->gpu_count < b->gpu_count ? -1 : 1;
    if (a->gpu_milli != b->gpu_milli)
        return a->gpu_milli < b->gpu_milli ? -1 : 1;
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli < b->cpu_milli ? -1 : 1;
    if (a->model_mask != b->model_mask)
        return a->model_mask < b->model_mask ? -1 : 1;
    return 0;
}

enum gp_err gp_engine_set_target(struct gp_engine *e, const struct gp_pod_spec *specs,
                                 const uint32_t *counts, size_t n, double coverage)
{
    if (!(coverage > 0 && coverage <= 1))
        return GP_EINVALID;
    e->target.len = 0;
    e->target_version++;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gp_pod_spec *p = &specs[i];
        struct gp_shape s = {.cpu_milli = p->cpu_milli, .gpu_count = p->gpu_count};
        s.gpu_milli = p->gpu_count ? p->gpu_milli : 0;
        s.model_mask = p->ngpu_models ? 0 : ~(uint64_t)0;
        for (size_t k = 0; k < p->ngpu_models; k++) {
            int m = model_intern(e, p->gpu_models[k]);
            if (m < 0)
                return GP_ELIMIT;
            s.model_mask |= (uint64_t)1 << m;
        }
        if (!s.gpu_count)
            s.model_mask = ~(uint64_t)0;
        double c = counts ? counts[i] : 1;
        total += c;
        size_t k = 0;
        while (k < e->target.len && !(e->target.items[k].cpu_milli == s.cpu_milli &&
                                      e->target.items[k].gpu_count == s.gpu_count &&
                                      e->target.items[k].gpu_milli == s.gpu_milli &&
                                      e->target.items[k].model_mask == s.model_mask))
            k++;
        if (k < e->target.len) {
            e->target.items[k].weight += c;
            continue;
        }
        s.weight = c;
        if (GP_VEC_PUSH(&e->target, s) != 0)
            return GP_ENOMEM;
    }
    if (total <= 0) {
        e->target.len = 0;
        return GP_OK;
    }
    qsort(e->target.items, e->target.len, sizeof e->target.items[0], shape_cmp);
    double cum = 0;
    size_t keep = 0;
    while (keep < e->target.len && cum < coverage * total - 1e-9)
        cum += e->target.items[keep++].weight;
    e->target.len = keep;
    for (size_t k = 0; k < keep; k++)
        e->target.items[k].weight /= cum;
    return GP_OK;
}

const struct gp_shape *gp_engine_target(const struct gp_engine *e, size_t *n, uint64_t *version)
{
    if (n)
        *n = e->target.len;
    if (version)
        *version = e->target_version;
    return e->target.len ? e->target.items : NULL;
}
