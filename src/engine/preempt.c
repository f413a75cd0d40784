/* preempt.c - preemption and reclaim: when a bound pod may be evicted
 * (its minimum runtime), which pods a preemptor may evict (lower priority
 * in its queue, or borrowed quota of another branch), the search that
 * frees room with the fewest and cheapest victims (kube-scheduler's
 * node-by-node choice when a victim would break a PodDisruptionBudget),
 * and failed searches remembered until the possible victims change. */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A pod may be evicted once it has run its queue's minimum runtime, and
 * at least MIN_RUN_S whatever its queue says: never at the instant it was
 * bound (a bind and its eviction would chase each other in one instant). */
#define MIN_RUN_S 0.001

static double evictable_from(const struct gp_engine *e, const struct gp_pod *p)
{
    double min_s = e->queues.items[p->spec.queue].spec.min_runtime_s;
    return px_at(e, p->id)->bound_at_s + (min_s > MIN_RUN_S ? min_s : MIN_RUN_S);
}

static bool evictable(const struct gp_engine *e, const struct gp_pod *p)
{
    return e->now_s >= evictable_from(e, p);
}

/* A pod was bound for real (not tentatively): a possible victim once it
 * has run (evictable). While any queue may evict, it is watched until then. */
void gp_eng_note_bound(struct gp_engine *e, const struct gp_pod *p)
{
    /* no new victim yet: a pod bound now may be evicted only once it has
     * run, and mature_check says when (so a cycle's binds do not make the
     * failed searches of that cycle worth repeating) */
    if (!e->preempt)
        return;
    double from_s = evictable_from(e, p);
    if (GP_VEC_PUSH(&e->immature, p->id) != 0)
        from_s = e->now_s; /* out of memory: look again every cycle */
    if (e->immature.len == 1 || from_s < e->next_mature_s)
        e->next_mature_s = from_s;
}

/* Watched pods that became evictable are possible victims now: searches
 * that failed before may succeed. */
void gp_eng_mature_check(struct gp_engine *e)
{
    if (e->immature.len == 0 || e->now_s < e->next_mature_s)
        return;
    size_t k = 0;
    bool matured = false;
    double next = 0;
    for (size_t i = 0; i < e->immature.len; i++) {
        const struct gp_pod *p = pod_at(e, e->immature.items[i]);
        if (p->state != GP_POD_BOUND)
            continue;
        if (evictable(e, p)) {
            matured = true;
            continue;
        }
        double t = evictable_from(e, p);
        if (k == 0 || t < next)
            next = t;
        e->immature.items[k++] = p->id;
    }
    e->immature.len = k;
    e->next_mature_s = next;
    if (matured)
        e->victim_gen++;
}

double gp_engine_next_wake_s(const struct gp_engine *e)
{
    if (!e->preempt || e->immature.len == 0)
        return INFINITY;
    bool waiting = false;
    for (size_t i = 0; i < e->queues.len && !waiting; i++)
        waiting = e->queues.items[i].may_preempt && e->queues.items[i].npend > 0;
    if (!waiting)
        return INFINITY;
    return e->next_mature_s > e->now_s ? e->next_mature_s : INFINITY;
}

/* The lowest common ancestor of two queues; NONE for the root above the
 * top-level queues. */
static uint32_t queue_lca(const struct gp_engine *e, uint32_t a, uint32_t b)
{
    const struct queue *qs = e->queues.items;
    while (a != b && a != NONE && b != NONE) {
        uint32_t da = qs[a].depth, db = qs[b].depth;
        if (da >= db)
            a = qs[a].parent;
        if (db >= da)
            b = qs[b].parent;
    }
    return a == b ? a : NONE;
}

/* The ancestor of x (or x) whose parent is `top`. */
static uint32_t queue_below(const struct gp_engine *e, uint32_t top, uint32_t x)
{
    while (e->queues.items[x].parent != top)
        x = e->queues.items[x].parent;
    return x;
}

/* May a request `req` of queue x reclaim from another branch under the
 * parent of branch qc? Every queue from x up to qc stays within what it is
 * guaranteed with it, and qc is guaranteed something the request needs. */
static bool reclaim_right(const struct gp_engine *e, const struct gp_pod *p,
                          const int64_t req[NBASIC], uint32_t x, uint32_t qc, bool within_only)
{
    for (;; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && q->guar[r] > 0 && q->used[r] + req[r] > q->guar[r])
                return false;
        if (x == qc)
            break;
    }
    if (within_only)
        return true;
    const struct queue *c = &e->queues.items[qc];
    for (int r = 0; r < NBASIC; r++)
        if (req[r] > 0 && c->guar[r] > 0)
            return true;
    if (req[R_GPU] > 0) /* or a model it may run on, within that model's guarantee */
        for (uint32_t m = 0; m < e->nmodels; m++)
            if ((p->model_mask >> m & 1) && c->guar[R_MODEL + m] > 0 &&
                c->used[R_MODEL + m] + req[R_GPU] <= c->guar[R_MODEL + m])
                return true;
    return false;
}

/* Does branch vc use more than it is guaranteed of something branch qc is
 * guaranteed and the request needs? (If not, none of its pods can be
 * reclaimed for it: releasing victims only lowers the use.) */
static bool branch_borrowing(const struct gp_engine *e, uint32_t vc, uint32_t qc,
                             const int64_t req[NBASIC])
{
    const struct queue *v = &e->queues.items[vc], *q = &e->queues.items[qc];
    for (int r = 0; r < NBASIC; r++)
        if (req[r] > 0 && q->guar[r] > 0 && v->used[r] > v->guar[r])
            return true;
    for (uint32_t m = 0; req[R_GPU] > 0 && m < e->nmodels; m++)
        if (q->guar[R_MODEL + m] > 0 && v->used[R_MODEL + m] > v->guar[R_MODEL + m])
            return true;
    return false;
}

static bool reclaimable_chain(const struct gp_engine *e, uint32_t x, uint32_t vc)
{
    for (;; x = e->queues.items[x].parent) {
        if (e->queues.items[x].spec.not_reclaimable)
            return false;
        if (x == vc)
            return true;
    }
}

/* Is branch vc still borrowing something the preemptor needs and the unit
 * holds? (Checked as victims are taken, with those before it released.) */
static bool unit_borrowing(const struct gp_engine *e, const struct unit *u,
                           const int64_t need[NBASIC])
{
    /* only what the preemptor's branch is guaranteed can be taken back */
    const struct queue *vc = &e->queues.items[u->vc], *qc = &e->queues.items[u->qc];
    for (uint32_t i = 0; i < u->n; i++) {
        const struct gp_pod *v = pod_at(e, e->victims.items[u->first + i]);
        int64_t held[NBASIC];
        pod_request(v, held);
        for (int r = 0; r < NBASIC; r++)
            if (need[r] > 0 && held[r] > 0 && qc->guar[r] > 0 && vc->used[r] > vc->guar[r])
                return true;
        uint32_t m = R_MODEL + e->nodes.items[v->node].model;
        if (need[R_GPU] > 0 && held[R_GPU] > 0 && qc->guar[m] > 0 && vc->used[m] > vc->guar[m])
            return true;
    }
    return false;
}

void gp_engine_pod_set_pdb_violating(struct gp_engine *e, uint32_t id, bool violating)
{
    if (id < gp_engine_pod_count(e) && gp_engine_pod(e, id))
        pod_at(e, id)->pdb_violating = violating;
}

enum gp_err gp_engine_pdb_set(struct gp_engine *e, uint32_t pdb, int32_t allowed)
{
    if (pdb >= (1u << 20))
        return GP_EINVALID; /* a driver's ids are small */
    if (pdb >= e->pdb_allowed.len) {
        if (GP_VEC_RESERVE(&e->pdb_allowed, (size_t)pdb + 1) != 0)
            return GP_ENOMEM;
        while (e->pdb_allowed.len <= pdb)
            e->pdb_allowed.items[e->pdb_allowed.len++] = 0;
    }
    e->pdb_allowed.items[pdb] = allowed;
    e->victim_gen++; /* searches that failed may go otherwise now */
    return GP_OK;
}

enum gp_err gp_engine_pod_set_pdbs(struct gp_engine *e, uint32_t id, const uint32_t *pdbs, size_t n)
{
    if (id >= gp_engine_pod_count(e) || !gp_engine_pod(e, id))
        return GP_EINVALID;
    struct pod_x *x = px_at(e, id);
    uint32_t *l = NULL;
    if (n > 0) {
        if (n > 1024 || !(l = malloc(n * sizeof *l)))
            return n > 1024 ? GP_EINVALID : GP_ENOMEM;
        memcpy(l, pdbs, n * sizeof *l);
    }
    free(x->pdbs);
    x->pdbs = l;
    x->npdbs = (uint32_t)n;
    e->victim_gen++;
    return GP_OK;
}

/* Cost order of victims: those that keep every PodDisruptionBudget first
 * (with one at stake, preempt_by_node decides as kube-scheduler does and
 * walks this order backwards: the most important first), then lowest
 * priority first, then the most recently bound, then the newest pod.
 * Without PDBs (the simulator never has any) the order is the one it
 * always was. */
static int unit_cost_cmp(const void *pa, const void *pb);

static int unit_cmp(const void *pa, const void *pb)
{
    const struct unit *a = pa, *b = pb;
    if (a->pdb_violating != b->pdb_violating)
        return a->pdb_violating ? 1 : -1;
    return unit_cost_cmp(pa, pb);
}

/* The cost order alone (kube-scheduler's MoreImportantPod, reversed):
 * preempt_by_node's, which counts budgets per node in that order. */
static int unit_cost_cmp(const void *pa, const void *pb)
{
    const struct unit *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->bound_at_s != b->bound_at_s)
        return a->bound_at_s > b->bound_at_s ? -1 : 1;
    return a->key > b->key ? -1 : a->key < b->key;
}

/* The possible victims of pod p (a gang's member when gid is set, for
 * `times` members): units of pods it may evict, in e->units, cost order. */
static size_t collect_units(struct gp_engine *e, const struct gp_pod *p, uint32_t gid,
                            uint32_t times)
{
    e->units.len = e->victims.len = 0;
    e->mark++;
    int64_t req[NBASIC];
    pod_request(p, req);
    for (int r = 0; r < NBASIC; r++)
        req[r] *= times;
    uint32_t own = p->spec.queue;
    /* reclaim needs the pod's own queue within its guarantee, at least */
    bool may_reclaim = e->queues.items[own].guaranteed && reclaim_right(e, p, req, own, own, true);
    for (uint32_t vq = 0; vq < e->queues.len; vq++) {
        const struct queue *q = &e->queues.items[vq];
        if (q->bound.len == 0)
            continue;
        enum gp_evict_reason reason = GP_EVICT_PREEMPTED;
        uint32_t vc = NONE, qc = NONE;
        if (vq == own) {
            if (q->spec.no_preempt_within)
                continue;
        } else {
            if (!may_reclaim)
                continue;
            uint32_t top = queue_lca(e, own, vq);
            if (top == own || top == vq)
                continue; /* one contains the other: no reclaim inside a lineage */
            vc = queue_below(e, top, vq);
            qc = queue_below(e, top, own);
            if (!reclaim_right(e, p, req, own, qc, false) || !reclaimable_chain(e, vq, vc) ||
                !branch_borrowing(e, vc, qc, req))
                continue;
            reason = GP_EVICT_RECLAIMED;
        }
        for (size_t i = 0; i < q->bound.len; i++) {
            const struct gp_pod *v = pod_at(e, q->bound.items[i]);
            if (!evictable(e, v))
                continue;
            if (reason == GP_EVICT_PREEMPTED && v->spec.priority >= p->spec.priority)
                continue;
            struct unit u = {(uint32_t)e->victims.len,
                             0,
                             v->spec.priority,
                             px_at(e, v->id)->bound_at_s,
                             v->id,
                             vc,
                             qc,
                             reason,
                             v->pdb_violating,
                             px_at(e, v->id)->npdbs > 0};
            if (v->spec.group) { /* a gang goes whole */
                struct group *g = group_at(e, v->spec.group);
                if (v->spec.group == gid || g->mark == e->mark)
                    continue;
                g->mark = e->mark;
                bool ok = true;
                for (size_t k = 0; k < g->members.len && ok; k++) {
                    const struct gp_pod *m = pod_at(e, g->members.items[k]);
                    if (m->state != GP_POD_BOUND)
                        continue;
                    ok = evictable(e, m) && GP_VEC_PUSH(&e->victims, m->id) == 0;
                    if (px_at(e, m->id)->bound_at_s > u.bound_at_s)
                        u.bound_at_s = px_at(e, m->id)->bound_at_s;
                    if (m->id > u.key)
                        u.key = m->id;
                    u.pdb_violating |= m->pdb_violating;
                    u.budgets |= px_at(e, m->id)->npdbs > 0;
                }
                if (!ok) {
                    e->victims.len = u.first;
                    continue;
                }
            } else if (GP_VEC_PUSH(&e->victims, v->id) != 0) {
                continue;
            }
            u.n = (uint32_t)e->victims.len - u.first;
            if (GP_VEC_PUSH(&e->units, u) != 0)
                e->victims.len = u.first;
        }
    }
    return e->units.len;
}

static void unit_release(struct gp_engine *e, const struct unit *u)
{
    for (uint32_t i = 0; i < u->n; i++)
        gp_eng_release(e, pod_at(e, e->victims.items[u->first + i]), false);
}

/* Puts a released unit back exactly where it was, as it was. */
static void unit_restore(struct gp_engine *e, const struct unit *u)
{
    for (uint32_t i = u->n; i-- > 0;) {
        struct gp_pod *v = pod_at(e, e->victims.items[u->first + i]);
        double at = px_at(e, v->id)->bound_at_s;
        gp_eng_commit(e, v, &e->nodes.items[v->node], &v->pick);
        px_at(e, v->id)->bound_at_s = at;
        gp_eng_ends_rebound(e, v);
    }
}

/* Takes back a gang's tentative binds. */
static void gang_undo(struct gp_engine *e, const uint32_t *members, size_t n,
                      const struct gp_decision *d)
{
    for (size_t k = n; k-- > 0;) {
        struct gp_pod *m = pod_at(e, members[k]);
        if (d[k].kind == GP_DECISION_BIND) {
            gp_eng_release(e, m, false);
            m->state = GP_POD_PENDING;
        }
    }
}

/* Would the preemptor fit now? A pod: within its quotas and some node
 * passes every filter. A gang: a tentative placement, taken back. */
static bool preemptor_fits(struct gp_engine *e, struct gp_pod *p, const struct group *g,
                           uint32_t need)
{
    if (!g) {
        if (e->quotas && e->queues.items[p->spec.queue].capped &&
            gp_eng_quota_blocks(e, p, 1) != NONE)
            return false;
        for (size_t i = 0; i < e->nodes.len; i++)
            if (gp_engine_filter(e, &e->nodes.items[i], p) == GP_FILTER_COUNT)
                return true;
        return false;
    }
    struct gp_decision fail;
    bool have_fail = false;
    const uint32_t *members = e->gmembers.items;
    size_t n = e->gmembers.len;
    if (!gp_eng_gang_try_domains(e, g, members, n, need, e->tmp.items, &fail, &have_fail))
        return false;
    gang_undo(e, members, n, e->tmp.items);
    return true;
}

static bool preempt_known_failed(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    if (need == 0) {
        const struct shape *s = &e->shapes.items[p->shape];
        return s->preempt_failed_gen == e->victim_gen &&
               s->preempt_failed_priority == p->spec.priority;
    }
    if (e->failed_victim_gen != e->victim_gen) {
        e->nfailed_preempt = 0;
        e->failed_victim_gen = e->victim_gen;
        return false;
    }
    for (uint32_t i = 0; i < e->nfailed_preempt; i++) {
        const struct failed_preempt *f = &e->failed_preempt[i];
        if (f->need != need || p->shape != f->shape || p->spec.priority != f->priority)
            continue;
        if (need == 0)
            return true;
        const struct group *a = group_at(e, p->spec.group);
        if (gp_eng_str_eq(a->spec.topology_key, f->topology_key) &&
            a->spec.topology_required == f->topology_required)
            return true;
    }
    return false;
}

static void preempt_failed(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    if (need == 0) {
        struct shape *s = &e->shapes.items[p->shape];
        s->preempt_failed_gen = e->victim_gen;
        s->preempt_failed_priority = p->spec.priority;
        return;
    }
    if (e->failed_victim_gen != e->victim_gen) {
        e->nfailed_preempt = 0;
        e->failed_victim_gen = e->victim_gen;
    }
    if (e->nfailed_preempt < sizeof e->failed_preempt / sizeof e->failed_preempt[0]) {
        struct failed_preempt *f = &e->failed_preempt[e->nfailed_preempt++];
        f->shape = p->shape;
        const struct group *g = group_at(e, p->spec.group);
        f->topology_key = g ? g->spec.topology_key : NULL;
        f->topology_required = g && g->spec.topology_required;
        f->priority = p->spec.priority;
        f->need = need;
    }
}

/* An upper bound, cheap enough to stop hopeless searches before they
 * release anything: could `need` pods like p (0: p alone) fit if every
 * candidate victim left? Per node, what is free plus what the victims
 * there hold, in GPU share, cpu and memory. */
static bool room_possible(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    size_t nn = e->nodes.len;
    if (GP_VEC_RESERVE(&e->freeable, nn) != 0)
        return true; /* cannot tell: search */
    struct freeable *f = e->freeable.items;
    memset(f, 0, nn * sizeof *f);
    for (size_t i = 0; i < e->victims.len; i++) {
        const struct gp_pod *v = pod_at(e, e->victims.items[i]);
        f[v->node].gpu_milli += gpu_req(v);
        f[v->node].cpu_milli += v->spec.cpu_milli;
        f[v->node].mem_mib += v->spec.mem_mib;
    }
    int64_t req[NBASIC];
    pod_request(p, req);
    uint64_t total = 0, want = need ? need : 1;
    for (size_t i = 0; i < nn; i++) {
        const struct gp_node *n = &e->nodes.items[i];
        if (!gp_eng_fits_empty(e, n, p))
            continue;
        int64_t have[NBASIC] = {(int64_t)n->gpu_milli_free + f[i].gpu_milli,
                                n->cpu_free_milli + f[i].cpu_milli, n->mem_free_mib + f[i].mem_mib};
        int64_t k = INT64_MAX;
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && have[r] / req[r] < k)
                k = have[r] / req[r];
        total += (uint64_t)(k > (int64_t)want ? (int64_t)want : k);
        if (total >= want)
            return true;
    }
    return false;
}

/* Would pod p (alone) fit node n now: within its quotas and through every
 * filter there. */
static bool preemptor_fits_on(struct gp_engine *e, const struct gp_pod *p, const struct gp_node *n)
{
    if (e->quotas && e->queues.items[p->spec.queue].capped && gp_eng_quota_blocks(e, p, 1) != NONE)
        return false;
    return gp_engine_filter(e, n, p) == GP_FILTER_COUNT;
}

/* One node's victims as kube-scheduler's pickOneNodeForPreemption weighs
 * them (pkg/scheduler/framework/preemption/preemption.go). */
struct node_victims {
    uint32_t node;
    uint32_t violations; /* victims that break a PodDisruptionBudget */
    int32_t highest;     /* the highest victim priority */
    int64_t sum;         /* sum of (priority + 2^31) over the victim pods */
    uint32_t pods;
    double earliest_s; /* the earliest bind among the highest-priority victims */
};

/* Is a better than b? The fewest PDB violations, then the lowest highest
 * victim priority, the lowest sum of priorities, the fewest victims, the
 * latest start of the highest-priority victims; then the first node. */
static bool node_victims_better(const struct node_victims *a, const struct node_victims *b)
{
    if (a->violations != b->violations)
        return a->violations < b->violations;
    if (a->highest != b->highest)
        return a->highest < b->highest;
    if (a->sum != b->sum)
        return a->sum < b->sum;
    if (a->pods != b->pods)
        return a->pods < b->pods;
    return a->earliest_s > b->earliest_s;
}

static int pair_cmp(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* The victims of units[list[0..n)] that p needs on node `node`, as
 * kube-scheduler's SelectVictimsOnNode finds them
 * (plugins/defaultpreemption/default_preemption.go): every candidate
 * released; none if p still does not fit there; else each put back in
 * turn - those that break a budget first, then the others, the most
 * important first (the highest priority, then the earliest bound: the
 * units are in cost order, so that is walking the list backwards) - and
 * kept out only if p no longer fits with it. Victims are flagged in
 * keep[] (by list position); everything is put back as it was. */
/* Which of the node's candidate units break a budget, as
 * filterPodsWithPDBViolation counts them: the most important first (the
 * list is in cost order: walked backwards), each member taking one from
 * every budget it counts against; a unit violates when one of them goes
 * below zero (or a member was marked violating alone). viol[k] for
 * list[k]; the counts start afresh on every node. */
static void node_violations(struct gp_engine *e, const uint32_t *list, size_t n, bool *viol)
{
    bool any = false;
    for (size_t k = 0; k < n; k++) {
        viol[k] = e->units.items[list[k]].pdb_violating;
        any |= e->units.items[list[k]].budgets;
    }
    size_t nb = e->pdb_allowed.len;
    if (!any || GP_VEC_RESERVE(&e->pdb_left, nb) != 0)
        return;
    if (nb > 0)
        memcpy(e->pdb_left.items, e->pdb_allowed.items, nb * sizeof *e->pdb_left.items);
    for (size_t k = n; k-- > 0;) {
        const struct unit *u = &e->units.items[list[k]];
        for (uint32_t i = 0; u->budgets && i < u->n; i++) {
            const struct pod_x *x = px_at(e, e->victims.items[u->first + i]);
            for (uint32_t b = 0; b < x->npdbs; b++) {
                uint32_t id = x->pdbs[b];
                /* a budget never set allows nothing (status absent) */
                if (id >= nb || --e->pdb_left.items[id] < 0)
                    viol[k] = true;
            }
        }
    }
}

static bool victims_on_node(struct gp_engine *e, const struct gp_pod *p, uint32_t node,
                            const uint32_t *list, size_t n, bool *keep, bool *viol,
                            struct node_victims *out)
{
    const struct gp_node *nd = &e->nodes.items[node];
    node_violations(e, list, n, viol);
    for (size_t k = 0; k < n; k++)
        unit_release(e, &e->units.items[list[k]]);
    bool fits = preemptor_fits_on(e, p, nd);
    memset(out, 0, sizeof *out);
    out->node = node;
    bool any = false;
    for (int pass = 0; pass < 2 && fits; pass++) /* the violating ones, then the others */
        for (size_t k = n; k-- > 0;) {
            const struct unit *u = &e->units.items[list[k]];
            if (viol[k] != (pass == 0))
                continue;
            unit_restore(e, u);
            keep[k] = !preemptor_fits_on(e, p, nd);
            if (!keep[k])
                continue; /* reprieved */
            unit_release(e, u);
            out->violations += viol[k];
            out->pods += u->n;
            for (uint32_t i = 0; i < u->n; i++) {
                const struct gp_pod *v = pod_at(e, e->victims.items[u->first + i]);
                double at = px_at(e, v->id)->bound_at_s;
                out->sum += (int64_t)v->spec.priority + ((int64_t)1 << 31);
                if (!any || v->spec.priority > out->highest) {
                    any = true;
                    out->highest = v->spec.priority;
                    out->earliest_s = at;
                } else if (v->spec.priority == out->highest && at < out->earliest_s) {
                    out->earliest_s = at;
                }
            }
        }
    /* put back every victim still out (reverse order of release) */
    for (size_t k = n; k-- > 0;)
        if (!fits || keep[k])
            unit_restore(e, &e->units.items[list[k]]);
    return fits && out->pods > 0;
}

/* kube-scheduler's choice, node by node, for a pod (not a gang) when some
 * candidate victim would break a PodDisruptionBudget: the victims each
 * node needs (victims_on_node), the node picked by node_victims_better,
 * its victims released and their unit indexes in e->chosen. false: no
 * node can host p however many it evicts (nothing changed). */
static bool preempt_by_node(struct gp_engine *e, const struct gp_pod *p)
{
    size_t npairs = 0;
    for (size_t i = 0; i < e->units.len; i++)
        npairs += e->units.items[i].n;
    uint32_t(*pairs)[2] = malloc(npairs * sizeof *pairs);
    uint32_t *list = malloc(e->units.len * sizeof *list);
    uint32_t *best_list = malloc(e->units.len * sizeof *best_list);
    bool *keep = malloc(e->units.len * sizeof *keep);
    bool *viol = malloc(e->units.len * sizeof *viol);
    bool found = false;
    size_t best_n = 0;
    struct node_victims best = {0};
    if (!pairs || !list || !best_list || !keep || !viol)
        goto done;
    npairs = 0;
    for (size_t i = 0; i < e->units.len; i++) { /* (node, unit) once per node a unit touches */
        const struct unit *u = &e->units.items[i];
        for (uint32_t k = 0; k < u->n; k++) {
            uint32_t nd = pod_at(e, e->victims.items[u->first + k])->node;
            bool seen = false;
            for (uint32_t j = 0; j < k && !seen; j++)
                seen = pod_at(e, e->victims.items[u->first + j])->node == nd;
            if (!seen) {
                pairs[npairs][0] = nd;
                pairs[npairs++][1] = (uint32_t)i;
            }
        }
    }
    qsort(pairs, npairs, sizeof *pairs, pair_cmp);
    /* as DryRunPreemption, the nodes tried stop once there are enough
     * candidates, one of them without violations (GetOffsetAndNumCandidates:
     * 10 % of the nodes, at least 100); from the first node, not a random
     * offset, so that a replay decides the same */
    size_t nnodes = 0, want, ncand = 0, nclean = 0;
    for (size_t a = 0; a < npairs; a++)
        nnodes += a == 0 || pairs[a][0] != pairs[a - 1][0];
    want = nnodes / 10 > 100 ? nnodes / 10 : 100;
    for (size_t a = 0; a < npairs && !(nclean > 0 && ncand >= want);) {
        size_t b = a, n = 0;
        for (; b < npairs && pairs[b][0] == pairs[a][0]; b++)
            list[n++] = pairs[b][1];
        struct node_victims nv;
        bool cand = victims_on_node(e, p, pairs[a][0], list, n, keep, viol, &nv);
        ncand += cand;
        nclean += cand && nv.violations == 0;
        if (cand && (!found || node_victims_better(&nv, &best))) {
            found = true;
            best = nv;
            best_n = 0;
            for (size_t k = 0; k < n; k++)
                if (keep[k])
                    best_list[best_n++] = list[k];
        }
        a = b;
    }
    e->chosen.len = 0;
    if (found && GP_VEC_RESERVE(&e->chosen, best_n) != 0)
        found = false;
    for (size_t k = 0; found && k < best_n; k++) {
        e->chosen.items[e->chosen.len++] = best_list[k];
        unit_release(e, &e->units.items[best_list[k]]);
    }
done:
    free(pairs);
    free(list);
    free(best_list);
    free(keep);
    free(viol);
    return found;
}

/* Tries to make room for pod p (with gid, for the pending members of its
 * gang) by evicting others. Takes candidate victims in cost order,
 * releasing each until the preemptor fits, then puts back, the costliest
 * first, every one it can do without. If it fits, writes an EVICT decision
 * per victim and the preemptor's decisions (a BIND, or one per gang
 * member) to out and returns their number; otherwise everything is as
 * before and it returns 0 (with *full set when out had too little room). */
size_t gp_eng_preempt(struct gp_engine *e, struct gp_pod *p, uint32_t gid, struct gp_decision *out,
                      size_t room, bool *full)
{
    struct group *g = gid ? group_at(e, gid) : NULL;
    uint32_t need = 0;
    size_t npods = 1;
    if (g) {
        e->gmembers.len = 0;
        for (size_t i = 0; i < g->members.len; i++) {
            uint32_t id = g->members.items[i];
            if (pod_at(e, id)->state == GP_POD_PENDING && GP_VEC_PUSH(&e->gmembers, id) != 0)
                return 0;
        }
        npods = e->gmembers.len;
        need = g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 0;
        if (need == 0 || npods < need || GP_VEC_RESERVE(&e->tmp, npods) != 0)
            return 0;
    }
    if (preempt_known_failed(e, p, need))
        return 0;
    if ((!g && !gp_eng_fits_some_empty(e, p)) || collect_units(e, p, gid, need ? need : 1) == 0 ||
        !room_possible(e, p, need)) {
        preempt_failed(e, p, need);
        return 0;
    }
    bool fits = false, pdb = false, reclaim = false;
    for (size_t i = 0; i < e->units.len; i++) {
        pdb |= e->units.items[i].pdb_violating || e->units.items[i].budgets;
        reclaim |= e->units.items[i].reason == GP_EVICT_RECLAIMED;
    }
    /* a budget at stake: kube-scheduler's node-by-node choice (the
     * simulator, which never has budgets, keeps the search below), the
     * units in cost order alone (node_violations counts budgets in it) */
    bool by_node = !g && pdb && !reclaim;
    if (e->units.len > 1)
        qsort(e->units.items, e->units.len, sizeof e->units.items[0],
              by_node ? unit_cost_cmp : unit_cmp);
    int64_t want[NBASIC];
    pod_request(p, want);
    e->chosen.len = 0;
    if (by_node)
        fits = preempt_by_node(e, p);
    for (size_t i = 0; i < e->units.len && !fits && !by_node; i++) {
        const struct unit *u = &e->units.items[i];
        if (u->reason == GP_EVICT_RECLAIMED && !unit_borrowing(e, u, want))
            continue;
        if (GP_VEC_PUSH(&e->chosen, (uint32_t)i) != 0)
            break;
        unit_release(e, u);
        fits = preemptor_fits(e, p, g, need);
    }
    if (fits && !by_node) { /* keep only the victims it needs, the cheapest */
        size_t keep = 0;
        for (size_t k = e->chosen.len; k-- > 0;) {
            const struct unit *u = &e->units.items[e->chosen.items[k]];
            unit_restore(e, u);
            if (preemptor_fits(e, p, g, need))
                continue; /* reprieved */
            unit_release(e, u);
            e->chosen.items[e->chosen.len - 1 - keep++] = e->chosen.items[k];
        }
        memmove(e->chosen.items, e->chosen.items + e->chosen.len - keep,
                keep * sizeof e->chosen.items[0]);
        e->chosen.len = keep;
    }
    size_t nvictims = 0;
    for (size_t k = 0; k < e->chosen.len; k++)
        nvictims += e->units.items[e->chosen.items[k]].n;
    struct gp_decision bind;
    bool placed = false, roomy = nvictims + npods <= room;
    if (fits && roomy) {
        if (g) {
            struct gp_decision fail;
            bool have_fail = false;
            placed = gp_eng_gang_try_domains(e, g, e->gmembers.items, npods, need, e->tmp.items,
                                             &fail, &have_fail);
        } else {
            gp_eng_place(e, p, &bind);
            placed = bind.kind == GP_DECISION_BIND;
        }
    }
    if (!placed) {
        for (size_t k = e->chosen.len; k-- > 0;)
            unit_restore(e, &e->units.items[e->chosen.items[k]]);
        if (fits && !roomy)
            *full = true; /* no room for the decisions: try again next cycle */
        else
            preempt_failed(e, p, need);
        return 0;
    }
    size_t n = 0;
    for (size_t k = 0; k < e->chosen.len; k++) {
        const struct unit *u = &e->units.items[e->chosen.items[k]];
        for (uint32_t i = 0; i < u->n; i++) {
            struct gp_pod *v = pod_at(e, e->victims.items[u->first + i]);
            v->state = GP_POD_DONE;
            struct gp_decision *d = &out[n++];
            memset(d, 0, sizeof *d);
            d->kind = GP_DECISION_EVICT;
            d->pod = v->id;
            d->node = v->node;
            d->pick = v->pick;
            d->evict = (uint8_t)u->reason;
            d->by = p->id;
        }
    }
    if (g) {
        for (size_t k = 0; k < npods; k++) {
            out[n] = e->tmp.items[k];
            if (out[n].kind == GP_DECISION_BIND)
                gp_eng_note_bound(e, pod_at(e, out[n].pod));
            n++;
        }
    } else {
        out[n++] = bind;
        gp_eng_note_bound(e, p);
    }
    e->generation++; /* the victims' room, less what the preemptor took, is free */
    e->victim_gen++;
    return n;
}
