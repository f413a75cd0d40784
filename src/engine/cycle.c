/* cycle.c - the scheduling cycle and the engine's public face: an engine
 * made and freed, the fair-share cycle (gp_engine_schedule) and one pod's
 * try in it (a gang whole; preemption when its queue may), the static
 * packing experiment's one-pod call, the GPU model table, the target
 * shapes and the accessors. The engine is pure: no I/O, no clock, no
 * globals; the state it keeps is in internal.h. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

struct gp_engine *gp_engine_new(const struct gp_policy_ops *policy, uint64_t seed)
{
    struct gp_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->policy = policy;
    e->gang_rej_shape = NONE;
    e->memo.shape = NONE;
    gp_idtab_init(&e->pods.tab, sizeof(struct pod_rec), GP_ENG_POD_CHUNK_SHIFT);
    gp_idtab_init(&e->groups, sizeof(struct group), GP_ENG_POD_CHUNK_SHIFT);
    e->pods.gone_p = &e->pods.gone;
    e->pods.gone.pod.state = GP_POD_DONE;
    e->pods.gone.pod.id = NONE;
    e->pods.gone.pod.shape = NONE;
    e->pods.gone.x.slot = e->pods.gone.x.cons = NONE;
    gp_eng_ends_init(e);
    e->lazy_gen = UINT64_MAX;
    gp_rng_seed(&e->rng, seed);
    struct queue q0;
    memset(&q0, 0, sizeof q0);
    q0.spec.name = "default";
    q0.spec.weight = 1;
    q0.spec.no_preempt_within = true;
    q0.parent = NONE;
    if (GP_VEC_PUSH(&e->queues, q0) != 0) {
        free(e);
        return NULL;
    }
    gp_eng_queue_limits(e, &e->queues.items[0]);
    gp_eng_queues_refresh(e);
    if (policy && policy->init && policy->init(e, &e->policy_state) != 0) {
        GP_VEC_FREE(&e->queues);
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
    gp_eng_pods_free(e);
    for (size_t i = 0; i < e->queues.len; i++) {
        gp_olist_free(&e->queues.items[i].pending);
        GP_VEC_FREE(&e->queues.items[i].bound);
        gp_eng_walk_free(e, &e->queues.items[i]);
    }
    for (size_t i = 0; i < e->shapes.len; i++) {
        gp_olist_free(&e->shapes.items[i].pend);
        gp_olist_free(&e->shapes.items[i].fresh);
    }
    GP_VEC_FREE(&e->queues);
    GP_VEC_FREE(&e->shapes);
    free(e->shape_slots);
    GP_VEC_FREE(&e->target);
    for (uint32_t i = gp_idtab_first(&e->groups); i < e->groups.n; i++) {
        struct group *g = gp_idtab_get(&e->groups, i);
        if (g)
            GP_VEC_FREE(&g->members);
    }
    gp_idtab_free(&e->groups);
    GP_VEC_FREE(&e->scratch);
    GP_VEC_FREE(&e->immature);
    GP_VEC_FREE(&e->units);
    GP_VEC_FREE(&e->victims);
    GP_VEC_FREE(&e->chosen);
    GP_VEC_FREE(&e->gmembers);
    GP_VEC_FREE(&e->tmp);
    GP_VEC_FREE(&e->freeable);
    GP_VEC_FREE(&e->pdb_allowed);
    GP_VEC_FREE(&e->pdb_left);
    GP_VEC_FREE(&e->proj);
    GP_VEC_FREE(&e->proj_mark);
    GP_VEC_FREE(&e->proj_slots);
    gp_eng_resv_free(e);
    gp_olist_free(&e->all);
    free(e->gang_rej);
    free(e->memo.score);
    free(e->memo.pick);
    free(e->memo.tree);
    GP_VEC_FREE(&e->ends);
    gp_kheap_free(&e->end_heap);
    GP_VEC_FREE(&e->ostreams);
    GP_VEC_FREE(&e->lazy_shapes);
    GP_VEC_FREE(&e->resv_log);
    gp_eng_index_free(e);
    gp_eng_topo_free(e);
    gp_eng_ports_free(e);
    gp_eng_claims_free(e);
    gp_eng_csi_free(e);
    GP_VEC_FREE(&e->cands);
    free(e);
}

/* Returns the model's index, interning it; -1 when the table is full. */
int gp_eng_model_intern(struct gp_engine *e, const char *name)
{
    for (uint32_t i = 0; i < e->nmodels; i++)
        if (strcmp(e->models[i], name) == 0)
            return (int)i;
    if (e->nmodels == GP_MAX_GPU_MODELS)
        return -1;
    e->models[e->nmodels] = name;
    return (int)e->nmodels++;
}

enum gp_err gp_engine_set_order(struct gp_engine *e, enum gp_order order, bool backfill)
{
    if (e->pods.tab.n > 0)
        return GP_ESTATE;
    if (order != GP_ORDER_FAIR && order != GP_ORDER_FIFO && order != GP_ORDER_SJF)
        return GP_EINVALID;
    e->order = order;
    e->backfill = backfill;
    return GP_OK;
}

void gp_engine_set_index(struct gp_engine *e, bool nodes, bool pending)
{
    e->no_index = !nodes;
    e->no_walk = !pending;
}

/* The cached failure of a pod of p's shape at the current generation. */
static const struct gp_decision *failed_lookup(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct shape *s = &e->shapes.items[p->shape];
    return s->failed_gen == pod_gen(e, p) ? &s->failed : NULL;
}

static void failed_remember(struct gp_engine *e, const struct gp_pod *p,
                            const struct gp_decision *d)
{
    struct shape *s = &e->shapes.items[p->shape];
    s->failed = *d;
    s->failed_gen = pod_gen(e, p);
}

/* Tries pod p (and, for a gang member, its whole gang once per cycle),
 * appending its decisions. Returns whether p stays pending; *changed when
 * something was bound or evicted (the queues' shares moved). */
bool gp_eng_try_pod(struct gp_engine *e, struct gp_pod *p, struct gp_decision *out, size_t cap,
                    size_t *ndec, size_t *tried, bool *full, bool *changed)
{
    uint32_t id = p->id;
    /* with a reservation (backfill), only the head may evict; a pod of
     * preemptionPolicy Never never does */
    bool may_preempt = e->preempt && e->queues.items[p->spec.queue].may_preempt && !e->resv.on &&
                       !p->spec.preempt_never;
    bool retry = may_preempt && px_at(e, id)->preempt_gen != e->victim_gen;
    if (p->tried_gen == pod_gen(e, p) && !retry)
        return true; /* not until the cluster changes */
    e->held = false;
    if (p->spec.group) {
        uint32_t gid = p->spec.group;
        struct group *g = group_at(e, gid);
        if (g->cycle == e->cycle)
            return true;
        if (cap - *ndec < gp_eng_gang_pending(e, gid)) {
            *full = true; /* no room for the whole gang's decisions */
            return true;
        }
        g->cycle = e->cycle;
        (*tried)++;
        size_t n = gp_eng_place_gang(e, gid, out + *ndec);
        if (e->held && p->state != GP_POD_BOUND) { /* held back: no decisions */
            for (size_t i = 0; i < g->members.len; i++)
                px_at(e, g->members.items[i])->blk = BLK_HELD;
            return true;
        }
        if (p->state != GP_POD_BOUND && retry && n > 0 && out[*ndec].gang == GP_GANG_NO_ROOM) {
            size_t m = gp_eng_preempt(e, p, gid, out + *ndec, cap - *ndec, full);
            if (m > 0) {
                *ndec += m;
                *changed = true;
                return p->state != GP_POD_BOUND;
            }
            for (size_t i = 0; i < g->members.len; i++)
                px_at(e, g->members.items[i])->preempt_gen = e->victim_gen;
        }
        for (size_t k = 0; k < n; k++)
            if (out[*ndec + k].kind == GP_DECISION_BIND) {
                gp_eng_note_bound(e, pod_at(e, out[*ndec + k].pod));
                *changed = true;
            }
        *ndec += n;
        return p->state != GP_POD_BOUND;
    }
    (*tried)++;
    struct gp_decision *d = &out[*ndec];
    const struct gp_decision *known = failed_lookup(e, p);
    if (known) {
        *d = *known;
        d->pod = id;
        p->tried_gen = pod_gen(e, p);
    } else {
        gp_eng_place(e, p, d);
        if (e->held) { /* it fits only on capacity reserved for the head: no decision */
            px_at(e, id)->blk = BLK_HELD;
            return true;
        }
        if (d->kind != GP_DECISION_BIND)
            failed_remember(e, p, d);
    }
    if (d->kind == GP_DECISION_BIND) {
        (*ndec)++;
        gp_eng_note_bound(e, p);
        *changed = true;
        return false;
    }
    if (retry) { /* preempt writes to out only when it succeeds */
        size_t m = gp_eng_preempt(e, p, 0, d, cap - *ndec, full);
        if (m > 0) {
            *ndec += m;
            *changed = true;
            return false;
        }
        if (!*full)
            px_at(e, id)->preempt_gen = e->victim_gen;
    }
    (*ndec)++;
    return true;
}

size_t gp_engine_schedule(struct gp_engine *e, double now_s, size_t budget, struct gp_decision *out,
                          size_t cap)
{
    size_t ndec = 0, tried = 0;
    bool full = false, changed = false;
    if (now_s > e->now_s)
        e->now_s = now_s;
    e->cycle++;
    gp_eng_pods_reap(e);
    gp_eng_mature_check(e);
    gp_eng_claims_recount(e);
    gp_eng_csi_recount(e);
    if (e->order != GP_ORDER_FAIR || e->backfill) {
        ndec = gp_eng_schedule_ordered(e, budget, out, cap);
        goto compact;
    }
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        q->cursor = 0;
        /* by shape (pending.c), when nothing but room decides */
        q->walk = gp_eng_walk_fast(e, q, budget) && gp_eng_walk_begin(e, q) == GP_OK;
        if (!q->walk && q->lists)
            gp_eng_walk_drop(e, q);
    }
    bool stop = false;
    while (!stop) {
        uint32_t cur = gp_eng_pick_queue(e);
        if (cur == NONE)
            break;
        /* this queue's pods, until something is bound or evicted (the
         * shares move) or the list ends */
        struct queue *q = &e->queues.items[cur];
        if (q->walk) {
            changed = false;
            stop = !gp_eng_walk_step(e, q, out, cap, &ndec, &tried, &full, &changed);
            continue;
        }
        const struct gp_olist *l = &q->pending;
        size_t i = q->cursor, len = gp_olist_len(l);
        bool may_preempt = e->preempt && q->may_preempt;
        changed = false;
        while (i < len && !changed) {
            uint32_t id = gp_olist_at(l, i);
            struct gp_pod *p = pod_at(e, id);
            if (p->state != GP_POD_PENDING) { /* a gang member placed earlier in this cycle */
                i++;
                continue;
            }
            if (full || ndec == cap || (budget && tried == budget)) {
                stop = true;
                break;
            }
            i++;
            if (p->tried_gen == pod_gen(e, p) && !(may_preempt && !p->spec.preempt_never &&
                                                   px_at(e, id)->preempt_gen != e->victim_gen))
                continue; /* not until the cluster changes */
            gp_eng_try_pod(e, p, out, cap, &ndec, &tried, &full, &changed);
        }
        q->cursor = i;
    }
compact:
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        if (q->walk) {
            gp_eng_walk_end(e, q);
            q->walk = false;
        } else if (q->lists && e->order == GP_ORDER_FAIR) {
            gp_eng_walk_drop(e, q); /* the plain walk changed what they say */
        }
    }
    gp_eng_pending_tidy(e, out, ndec); /* the pods bound leave the pending lists */
    return ndec;
}

enum gp_err gp_engine_schedule_pod(struct gp_engine *e, uint32_t id, struct gp_decision *out)
{
    if (id >= e->pods.tab.n)
        return GP_EINVALID;
    struct gp_pod *p = pod_at(e, id);
    if (p->state != GP_POD_PENDING)
        return GP_ESTATE;
    if (p->spec.group) /* gangs are placed whole, by gp_engine_schedule */
        return GP_EINVALID;
    gp_eng_place(e, p, out);
    if (out->kind == GP_DECISION_BIND)
        gp_eng_pending_remove(e, id);
    return GP_OK;
}

size_t gp_engine_schedule_group(struct gp_engine *e, uint32_t group, struct gp_decision *out,
                                size_t cap)
{
    const struct group *g = group_at(e, group);
    size_t n = g ? gp_eng_gang_pending(e, group) : 0;
    if (n == 0 || n > cap)
        return 0;
    /* backfill: the last cycle's head, still pending, keeps its room. The
     * gang is held back as that cycle holds back the pods behind the head
     * (a gang tried now is one: it did not go in the cycle), by the
     * reservation made for the state now (resv.c; what was remembered of
     * an attempt held back is used only at the state and reservation it
     * was made at). The head gone, nothing is held back. */
    const struct gp_pod *head = e->resv.kept ? pod_at(e, e->resv.head) : NULL;
    if (head && head->state == GP_POD_PENDING && head->spec.group != group)
        gp_eng_resv_compute(e, head, pod_need(e, head));
    e->held = false;
    n = gp_eng_place_gang(e, group, out);
    for (size_t k = 0; k < n; k++)
        if (out[k].kind == GP_DECISION_BIND)
            gp_eng_pending_remove(e, out[k].pod);
        else if (e->held)
            px_at(e, out[k].pod)->blk = BLK_HELD; /* as gp_eng_try_pod marks them */
    e->resv.on = false;
    return n;
}

/* A driver's own placement (a pod bound before the engine knew it) on a
 * node without a sharing spec: the pick must name distinct GPUs of the
 * node that hold the pod now (share.c checks the other nodes). */
static bool assign_fits(const struct gp_node *n, const struct gp_pod *p, const struct gp_pick *k)
{
    if (k->ngpus != p->spec.gpu_count)
        return false;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < k->ngpus; i++) {
        uint32_t g = k->gpu[i];
        if (g >= n->spec.gpu_count || (seen >> g & 1))
            return false;
        seen |= 1u << g;
        const struct gp_gpu *u = &n->gpu[g];
        if (u->milli_free < p->spec.gpu_milli || u->mem_free_mib < p->spec.gpu_mem_mib ||
            (p->spec.gpu_milli == GP_GPU_MILLI && u->pods > 0))
            return false;
    }
    return true;
}

enum gp_err gp_engine_pod_assign(struct gp_engine *e, uint32_t id, uint32_t node,
                                 const struct gp_pick *pick)
{
    if (id >= e->pods.tab.n || node >= e->nodes.len)
        return GP_EINVALID;
    struct gp_pod *p = pod_at(e, id);
    struct gp_node *n = &e->nodes.items[node];
    if (p->state != GP_POD_PENDING || n->state == GP_NODE_GONE)
        return GP_ESTATE;
    struct gp_pick k;
    if (pick && n->spec.sharing) { /* replicas, clients or instances (share.c) */
        if (gp_share_pick_named(n, p, pick, &k) != 0)
            return GP_ELIMIT;
    } else if (pick) {
        k = *pick;
        if (!assign_fits(n, p, &k))
            return GP_ELIMIT;
    } else {
        /* only for a pod without a pick: the default choice names GPUs
         * alone, so the rest is set here (no MIG instance, none made) and
         * the pod's pick, which the event log writes, is defined */
        memset(&k, 0, sizeof k);
        k.mig_profile = -1;
        if (gp_engine_pick_default(n, p, &k) != 0)
            return GP_ELIMIT;
    }
    gp_eng_pending_remove(e, id);
    gp_eng_commit(e, p, n, &k);
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
    return e->pods.tab.n;
}

const struct gp_pod *gp_engine_pod(const struct gp_engine *e, uint32_t id)
{
    const struct pod_rec *r = pod_rec_at(e, id);
    return r == e->pods.gone_p || r->x.forgotten ? NULL : &r->pod;
}

size_t gp_engine_pods_held(const struct gp_engine *e)
{
    return e->pods.tab.nchunks << e->pods.tab.shift;
}

double gp_engine_pod_bound_at(const struct gp_engine *e, uint32_t id)
{
    return pod_at(e, id)->state == GP_POD_BOUND ? px_at(e, id)->bound_at_s : -1;
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
            int m = gp_eng_model_intern(e, p->gpu_models[k]);
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
