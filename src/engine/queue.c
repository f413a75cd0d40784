/* queue.c - pods entering and leaving the queues, and the queues: each
 * queue's pending list in the engine's order (and FIFO's and SJF's one
 * list; B+ trees, pending.c's gp_eng_plist_*), the pods a cycle bound
 * taken off them at its end, the interned request shapes, quotas
 * (declared, charged on bind and release, tested), and the fair share
 * that picks the queue a cycle takes its next pod from. */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A new pod joins its queue's pending list and, under FIFO and SJF, the
 * line, each at its place in the engine's order (internal.h's
 * order_before: FAIR inside a queue, higher priority first, then older
 * (lower seq) first; FIFO by age alone; SJF by duration hint, then age):
 * O(log n) (util/olist.h). */
static enum gp_err pending_insert(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = pod_at(e, pod);
    struct queue *q = &e->queues.items[p->spec.queue];
    if (gp_eng_plist_insert(e, &q->pending, pod) != GP_OK)
        return GP_ENOMEM;
    if (e->order != GP_ORDER_FAIR && gp_eng_plist_insert(e, &e->all, pod) != GP_OK) {
        gp_eng_plist_remove(e, &q->pending, pod);
        return GP_ENOMEM;
    }
    q->npend++;
    e->npending++;
    if (gp_eng_walk_add(e, pod) != GP_OK)
        gp_eng_walk_drop(e, q); /* out of memory: made again when needed */
    return GP_OK;
}

void gp_eng_pending_remove(struct gp_engine *e, uint32_t pod)
{
    e->pend_ver++;
    if (e->order != GP_ORDER_FAIR)
        gp_eng_plist_remove(e, &e->all, pod);
    const struct gp_pod *p = pod_at(e, pod);
    struct queue *q = &e->queues.items[p->spec.queue];
    gp_eng_walk_remove(e, pod);
    if (gp_eng_plist_remove(e, &q->pending, pod)) {
        px_at(e, pod)->listed_at = 0;
        q->npend--;
        e->npending--;
    }
}

void gp_eng_pending_tidy(struct gp_engine *e, const struct gp_decision *out, size_t ndec)
{
    for (size_t k = 0; k < ndec; k++) {
        if (out[k].kind != GP_DECISION_BIND)
            continue;
        uint32_t id = out[k].pod;
        if (gp_eng_plist_remove(e, &e->queues.items[pod_at(e, id)->spec.queue].pending, id))
            px_at(e, id)->listed_at = 0; /* off the list (pods.c) */
    }
    e->npending = 0;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        q->compactions++; /* a pod bound outside a cycle is not on it either */
        q->npend = gp_olist_len(&q->pending);
        e->npending += q->npend;
    }
    e->pods.compacted = true;
}

/* The shape of key k, added when new; NONE when out of memory. */
static uint32_t shape_intern(struct gp_engine *e, const struct shape_key *k)
{
    if (2 * (e->shapes.len + 1) > e->nshape_slots) { /* grow and rehash */
        size_t n = e->nshape_slots ? 2 * e->nshape_slots : 64;
        uint32_t *slots = calloc(n, sizeof *slots);
        if (!slots)
            return NONE;
        for (size_t i = 0; i < e->shapes.len; i++) {
            size_t j = (size_t)e->shapes.items[i].hash & (n - 1);
            while (slots[j])
                j = (j + 1) & (n - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(e->shape_slots);
        e->shape_slots = slots;
        e->nshape_slots = n;
    }
    uint64_t h = gp_eng_shape_hash(k); /* by content: shape_key.c */
    size_t j = (size_t)h & (e->nshape_slots - 1);
    for (; e->shape_slots[j]; j = (j + 1) & (e->nshape_slots - 1)) {
        const struct shape *t = &e->shapes.items[e->shape_slots[j] - 1];
        if (t->hash == h && gp_eng_shape_eq(&t->key, k))
            return e->shape_slots[j] - 1;
    }
    struct shape s;
    memset(&s, 0, sizeof s);
    s.key = *k;
    s.hash = h;
    s.failed_gen = UINT64_MAX;
    s.lazy_gen = UINT64_MAX;
    s.preempt_failed_gen = UINT64_MAX;
    s.hopeless_ver = UINT64_MAX;
    s.rank = NONE;
    s.held_ver = UINT64_MAX;
    s.gheld_ver = UINT64_MAX;
    s.blk_gen = UINT64_MAX;
    if (e->shapes.len >= NONE - 1 || GP_VEC_PUSH(&e->shapes, s) != 0)
        return NONE;
    e->shape_slots[j] = (uint32_t)e->shapes.len;
    return (uint32_t)e->shapes.len - 1;
}

enum gp_err gp_engine_pod_add(struct gp_engine *e, const struct gp_pod_spec *spec, double now_s,
                              uint32_t *out_id)
{
    if (spec->cpu_milli < 0 || spec->mem_mib < 0 || spec->gpu_count > GP_MAX_GPUS_PER_NODE)
        return GP_EINVALID;
    /* a share of one GPU may be memory only (gpu_milli 0, gpu_mem_mib > 0) */
    /* (or nothing at all: a replica of a shared GPU); MIG instances come
     * in any number, whatever their share */
    bool mig = spec->mig_profile != NULL;
    if (spec->gpu_count > 0 &&
        (spec->gpu_milli > GP_GPU_MILLI ||
         (spec->gpu_milli == 0 && !mig &&
          (spec->gpu_count > 1 || (spec->gpu_mem_mib == 0 && !spec->share_modes))) ||
         (spec->gpu_count > 1 && spec->gpu_milli != GP_GPU_MILLI && !mig)))
        return GP_EINVALID;
    if (mig && spec->gpu_count == 0)
        return GP_EINVALID;
    if ((spec->group && !group_at(e, spec->group)) || spec->queue >= e->queues.len)
        return GP_EINVALID;
    struct group *g = spec->group ? group_at(e, spec->group) : NULL;
    if (g && g->members.len > 0 && g->queue != spec->queue)
        return GP_EINVALID; /* a gang lives in one queue */
    struct gp_pod p;
    memset(&p, 0, sizeof p);
    p.spec = *spec;
    p.id = e->pods.tab.n;
    p.state = GP_POD_PENDING;
    p.seq = e->next_seq++;
    p.added_at_s = now_s;
    p.tried_gen = UINT64_MAX;
    p.label_filters = (uint8_t)((spec->nnode_selector ? 1 : 0) |
                                (spec->constraints && spec->constraints->nnode_required ? 2 : 0) |
                                (spec->constraints && spec->constraints->nvolumes ? 4 : 0));
    for (size_t i = 0; i < spec->nclaims; i++)
        if (spec->claims[i].rwop)
            p.label_filters |= 8;
    p.model_mask = spec->ngpu_models ? 0 : ~(uint64_t)0;
    for (size_t i = 0; i < spec->ngpu_models; i++) {
        int m = gp_eng_model_intern(e, spec->gpu_models[i]);
        if (m < 0)
            return GP_ELIMIT;
        p.model_mask |= (uint64_t)1 << m;
    }
    gp_share_pod_init(&p);
    struct shape_key k = {
        spec->cpu_milli,    spec->mem_mib,        spec->gpu_count,       spec->gpu_milli,
        spec->gpu_mem_mib,  spec->queue,          p.model_mask,          spec->node_selector,
        spec->tolerations,  spec->nnode_selector, spec->ntolerations,    spec->share_modes,
        spec->gpu_resource, spec->mig_profile,    spec->constraints,     spec->labels,
        spec->nlabels,      spec->namespace_name, spec->cuda_driver_min, spec->gpu_container_max,
        spec->scalars,      spec->nscalars,       spec->host_ports,      spec->nhost_ports,
        spec->claims,       spec->nclaims,        spec->csi_volumes,     spec->ncsi_volumes};
    p.shape = shape_intern(e, &k);
    if (p.shape == NONE)
        return GP_ENOMEM;
    struct pod_x x = {
        .slot = NONE, .cons = NONE, .preempt_gen = UINT64_MAX, .blk = BLK_NONE, .blk_queue = NONE};
    struct queue *q = &e->queues.items[spec->queue];
    /* a queue's bound pods are some of its live ones: commit never grows */
    if (GP_VEC_RESERVE(&q->bound, gp_olist_len(&q->pending) + q->bound.len + 1) != 0)
        return GP_ENOMEM;
    struct pod_rec *rec = gp_idtab_add(&e->pods.tab, NULL);
    if (!rec)
        return GP_ENOMEM;
    rec->pod = p;
    rec->x = x;
    enum gp_err err = gp_eng_topo_pod_added(e, &rec->pod);
    if (err != GP_OK) {
        gp_idtab_unadd(&e->pods.tab);
        return err;
    }
    err = pending_insert(e, p.id);
    if (err == GP_OK && g && GP_VEC_PUSH(&g->members, p.id) != 0) {
        gp_eng_pending_remove(e, p.id);
        err = GP_ENOMEM;
    }
    if (err != GP_OK) {
        gp_idtab_unadd(&e->pods.tab);
        return err;
    }
    if (g)
        g->queue = spec->queue;
    if (out_id)
        *out_id = p.id;
    return GP_OK;
}

/* Adds (sign 1) or takes back (-1) a pod's use to its queue and every
 * ancestor. */
void gp_eng_queue_charge(struct gp_engine *e, const struct gp_pod *p, uint32_t model, int sign)
{
    int64_t gpu = sign * gpu_req(p), cpu = sign * p->spec.cpu_milli, mem = sign * p->spec.mem_mib;
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        struct queue *q = &e->queues.items[x];
        q->ver++;
        q->used[R_GPU] += gpu;
        q->used[R_CPU] += cpu;
        q->used[R_MEM] += mem;
        if (p->spec.gpu_count > 0)
            q->used[R_MODEL + model] += gpu;
    }
    gp_eng_ends_charge(e, p, sign); /* a bind or a release: backfill's ends follow */
}

enum gp_err gp_engine_pod_finished(struct gp_engine *e, uint32_t id)
{
    if (id >= e->pods.tab.n)
        return GP_EINVALID;
    struct gp_pod *p = pod_at(e, id);
    if (p == &e->pods.gone.pod || px_at(e, id)->forgotten)
        return GP_ESTATE; /* ended and forgotten */
    switch (p->state) {
    case GP_POD_PENDING:
        gp_eng_pending_remove(e, id);
        break;
    case GP_POD_BOUND:
        gp_eng_release(e, p, true);
        break;
    case GP_POD_DONE:
        return GP_ESTATE;
    }
    p->state = GP_POD_DONE;
    return GP_OK;
}

enum gp_err gp_engine_pod_forget(struct gp_engine *e, uint32_t id)
{
    const struct gp_pod *p = pod_at(e, id);
    if (p == &e->pods.gone.pod || px_at(e, id)->forgotten)
        return GP_EINVALID;
    if (p->state != GP_POD_DONE)
        return GP_ESTATE;
    return GP_VEC_PUSH(&e->pods.ended, id) == 0 ? GP_OK : GP_ENOMEM;
}

/* The queue (the pod's own or an ancestor) whose cap on gpu, cpu or memory
 * a request of `times` pods like p would exceed; NONE when none. */
uint32_t gp_eng_quota_blocks(const struct gp_engine *e, const struct gp_pod *p, int64_t times)
{
    int64_t req[NBASIC];
    pod_request(p, req);
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && q->cap[r] != INT64_MAX && (req[r] > (q->cap[r] - q->used[r]) / times))
                return x;
    }
    return NONE;
}

/* Whether `need` pods like p exceed a cap of its queue or an ancestor even
 * when the queue uses nothing: they can never run together. */
bool gp_eng_quota_never_fits(const struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    int64_t req[NBASIC];
    pod_request(p, req);
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && q->cap[r] != INT64_MAX && req[r] > q->cap[r] / need)
                return true;
    }
    return false;
}

/* ---- queues --------------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void quota_apply(struct queue *q, int r, const struct gp_quota *x)
{
    q->guar[r] = x->guaranteed;
    q->cap[r] = x->limited ? sat_add(x->guaranteed, x->borrow_limit) : INT64_MAX;
}

/* The guarantees and caps of q from its spec; its models are interned. */
void gp_eng_queue_limits(struct gp_engine *e, struct queue *q)
{
    for (int r = 0; r < NRES; r++) {
        q->guar[r] = 0;
        q->cap[r] = INT64_MAX;
    }
    quota_apply(q, R_GPU, &q->spec.gpu_milli);
    quota_apply(q, R_CPU, &q->spec.cpu_milli);
    quota_apply(q, R_MEM, &q->spec.mem_mib);
    for (size_t i = 0; i < q->spec.nmodels; i++) {
        int m = gp_eng_model_intern(e, q->spec.models[i].model);
        if (m >= 0)
            quota_apply(q, R_MODEL + m, &q->spec.models[i].gpu_milli);
    }
    q->nguaranteed_res = 0;
    for (int r = 0; r < NRES; r++)
        if (q->guar[r] > 0)
            q->guaranteed_res[q->nguaranteed_res++] = (uint8_t)r;
}

/* The flags each queue inherits from its ancestors (parents come first). */
void gp_eng_queues_refresh(struct gp_engine *e)
{
    e->quotas = e->model_quotas = e->preempt = false;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        const struct queue *up = q->parent == NONE ? NULL : &e->queues.items[q->parent];
        bool capped = false, model_capped = false, guaranteed = false;
        for (int r = 0; r < NRES; r++) {
            if (q->cap[r] != INT64_MAX)
                *(r < NBASIC ? &capped : &model_capped) = true;
            guaranteed |= q->guar[r] > 0;
        }
        q->capped = capped || (up && up->capped);
        q->model_capped = model_capped || (up && up->model_capped);
        q->guaranteed = guaranteed || (up && up->guaranteed);
        q->may_preempt = !q->spec.no_preempt_within || q->guaranteed;
        e->quotas |= q->capped;
        e->model_quotas |= q->model_capped;
        e->preempt |= q->may_preempt;
    }
}

static bool quota_ok(const struct gp_quota *q)
{
    return q->guaranteed >= 0 && (!q->limited || q->borrow_limit >= 0);
}

enum gp_err gp_engine_queue_set(struct gp_engine *e, const struct gp_queue_spec *spec,
                                uint32_t *out_id)
{
    if (!spec || !spec->name || !*spec->name || !(spec->weight >= 0) || spec->weight > 1e12 ||
        !(spec->min_runtime_s >= 0) || spec->min_runtime_s > 1e15 || !quota_ok(&spec->gpu_milli) ||
        !quota_ok(&spec->cpu_milli) || !quota_ok(&spec->mem_mib) ||
        spec->nmodels > GP_MAX_GPU_MODELS || (spec->nmodels && !spec->models))
        return GP_EINVALID;
    for (size_t i = 0; i < spec->nmodels; i++) {
        const struct gp_model_quota *m = &spec->models[i];
        if (!m->model || !*m->model || !quota_ok(&m->gpu_milli))
            return GP_EINVALID;
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->models[j].model, m->model) == 0)
                return GP_EINVALID;
        if (gp_eng_model_intern(e, m->model) < 0)
            return GP_ELIMIT;
    }
    uint32_t id = NONE;
    for (size_t i = 0; i < e->queues.len && id == NONE; i++)
        if (strcmp(e->queues.items[i].spec.name, spec->name) == 0)
            id = (uint32_t)i;
    uint32_t parent = spec->parent ? spec->parent : NONE;
    if (spec->parent >= e->queues.len || (id == 0 && parent != NONE) ||
        (id != NONE && e->queues.items[id].parent != parent))
        return GP_EINVALID;
    if (id == NONE) {
        struct queue q;
        memset(&q, 0, sizeof q);
        q.parent = parent;
        q.depth = parent == NONE ? 0 : e->queues.items[parent].depth + 1;
        if (e->queues.len >= NONE - 1 || GP_VEC_PUSH(&e->queues, q) != 0)
            return GP_ENOMEM;
        id = (uint32_t)e->queues.len - 1;
    }
    struct queue *q = &e->queues.items[id];
    q->spec = *spec;
    if (!(q->spec.weight > 0))
        q->spec.weight = 1;
    gp_eng_queue_limits(e, q);
    gp_eng_queues_refresh(e);
    /* every pending pod is tried again as if new, with a decision each
     * (pending.c gives none to pods that had one and fail alike) */
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *x = &e->queues.items[i];
        for (size_t j = 0; j < gp_olist_len(&x->pending); j++) {
            struct gp_pod *p = pod_at(e, gp_olist_at(&x->pending, j));
            if (p->state == GP_POD_PENDING)
                p->tried_gen = UINT64_MAX;
        }
        gp_eng_walk_drop(e, x);
    }
    e->generation++; /* what fits, and what may be evicted, may have changed */
    e->victim_gen++;
    gp_eng_state_bump(e);
    e->topo_ver++;
    if (out_id)
        *out_id = id;
    return GP_OK;
}

size_t gp_engine_queue_count(const struct gp_engine *e)
{
    return e->queues.len;
}

const struct gp_queue_spec *gp_engine_queue_spec(const struct gp_engine *e, uint32_t id)
{
    return id < e->queues.len ? &e->queues.items[id].spec : NULL;
}

uint32_t gp_engine_queue_parent(const struct gp_engine *e, uint32_t id)
{
    return id < e->queues.len ? e->queues.items[id].parent : GP_QUEUE_NONE;
}

enum gp_err gp_engine_queue_usage(const struct gp_engine *e, uint32_t id,
                                  struct gp_queue_usage *out)
{
    if (id >= e->queues.len)
        return GP_EINVALID;
    const struct queue *q = &e->queues.items[id];
    out->gpu_milli = q->used[R_GPU];
    out->cpu_milli = q->used[R_CPU];
    out->mem_mib = q->used[R_MEM];
    out->pods_bound = (uint32_t)q->bound.len;
    out->pods_pending = 0;
    for (size_t i = 0; i < gp_olist_len(&q->pending); i++)
        out->pods_pending += pod_at(e, gp_olist_at(&q->pending, i))->state == GP_POD_PENDING;
    return GP_OK;
}

int64_t gp_engine_queue_model_used(const struct gp_engine *e, uint32_t id, uint32_t model)
{
    if (id >= e->queues.len || model >= GP_MAX_GPU_MODELS)
        return 0;
    return e->queues.items[id].used[R_MODEL + model];
}

/* ---- fair share ------------------------------------------------------------ */

/* A queue's fair-share key; the lower goes first. Tier 0: queues using less
 * than their guarantee, by the largest use/guarantee ratio over the
 * resources they are guaranteed. Tier 1: the others, by their dominant
 * share of the cluster (the largest use/capacity over gpu, cpu, memory).
 * Both are divided by the weight. */
static void queue_key(const struct gp_engine *e, const struct queue *q, int *tier, double *val)
{
    double g = -1;
    for (uint32_t i = 0; i < q->nguaranteed_res; i++) {
        int r = q->guaranteed_res[i];
        double x = (double)q->used[r] / (double)q->guar[r];
        if (x > g)
            g = x;
    }
    if (g >= 0 && g < 1) {
        *tier = 0;
        *val = g / q->spec.weight;
        return;
    }
    const struct gp_engine_totals *t = &e->totals;
    double d = 0;
    if (t->gpu_milli_total > 0)
        d = (double)q->used[R_GPU] / (double)t->gpu_milli_total;
    if (t->cpu_milli_total > 0 && (double)q->used[R_CPU] / (double)t->cpu_milli_total > d)
        d = (double)q->used[R_CPU] / (double)t->cpu_milli_total;
    if (t->mem_mib_total > 0 && (double)q->used[R_MEM] / (double)t->mem_mib_total > d)
        d = (double)q->used[R_MEM] / (double)t->mem_mib_total;
    *tier = 1;
    *val = d / q->spec.weight;
}

static bool queue_left(const struct queue *q)
{
    return q->walk ? q->heap.len > 0 : q->cursor < gp_olist_len(&q->pending);
}

/* The queue whose next pod the cycle tries: from the top of the tree, the
 * child with the lowest key among those with pods left, down to a queue
 * with pods of its own (which go before its children's); ties to the lower
 * id. NONE when every list is done. */
uint32_t gp_eng_pick_queue(struct gp_engine *e)
{
    struct queue *qs = e->queues.items;
    size_t nq = e->queues.len;
    if (nq == 1)
        return queue_left(&qs[0]) ? 0 : NONE;
    bool any = false;
    for (size_t i = 0; i < nq; i++)
        qs[i].avail = false;
    for (size_t i = 0; i < nq; i++) {
        if (!queue_left(&qs[i]))
            continue;
        any = true;
        for (uint32_t x = (uint32_t)i; x != NONE && !qs[x].avail; x = qs[x].parent)
            qs[x].avail = true;
    }
    if (!any)
        return NONE;
    uint32_t at = NONE;
    for (;;) {
        if (at != NONE && queue_left(&qs[at]))
            return at;
        uint32_t best = NONE;
        int best_tier = 0;
        double best_val = 0;
        for (size_t i = 0; i < nq; i++) {
            if (qs[i].parent != at || !qs[i].avail)
                continue;
            int tier;
            double val;
            queue_key(e, &qs[i], &tier, &val);
            if (best == NONE || tier < best_tier || (tier == best_tier && val < best_val)) {
                best = (uint32_t)i;
                best_tier = tier;
                best_val = val;
            }
        }
        if (best == NONE)
            return NONE;
        at = best;
    }
}

size_t gp_engine_pending_count(const struct gp_engine *e)
{
    return e->npending;
}

/* The pending pods of list l after the n found so far, into out[n..cap). */
static size_t list_pending(const struct gp_engine *e, const struct gp_olist *l, uint32_t *out,
                           size_t cap, size_t n)
{
    for (size_t i = 0; i < gp_olist_len(l); i++) {
        uint32_t id = gp_olist_at(l, i);
        if (pod_at(e, id)->state == GP_POD_PENDING && n++ < cap)
            out[n - 1] = id;
    }
    return n;
}

size_t gp_engine_pending(const struct gp_engine *e, uint32_t *out, size_t cap)
{
    if (e->order != GP_ORDER_FAIR) /* one list over every queue */
        return list_pending(e, &e->all, out, cap, 0);
    size_t n = 0;
    for (size_t q = 0; q < e->queues.len; q++)
        n = list_pending(e, &e->queues.items[q].pending, out, cap, n);
    return n;
}
