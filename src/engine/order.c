/* order.c - ordered cycles (FIFO, SJF, and any order with backfill): what
 * a pod that does not fit holds up (the rest of the line, its quota's
 * subtree, or nothing), and EASY backfilling around it: the head's
 * reservation of quota here, of room in resv.c; past the head, the walk
 * by shape. docs/ARCHITECTURE.md, "Queue orders and backfill". */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Node n as it is when empty. */
static void node_emptied(const struct gp_node *n, struct gp_node *c)
{
    *c = *n;
    c->cpu_free_milli = n->spec.cpu_milli;
    c->mem_free_mib = n->spec.mem_mib;
    for (size_t i = 0; i < n->spec.nscalars; i++)
        c->scalar_free[i] = n->spec.scalars[i].amount;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        c->gpu[g].milli_free = GP_GPU_MILLI;
        c->gpu[g].mem_free_mib = n->spec.gpu_mem_mib;
        c->gpu[g].pods = 0;
    }
    gp_eng_node_summarise(c);
    c->pods = 0;
}

/* Whether `need` pods like p (a gang's member) pack into the empty
 * cluster - inside one domain when its topology is required. Exact for a
 * gang of alike members; the others are judged by p. */
static bool gang_packs_empty(const struct gp_engine *e, const struct group *g,
                             const struct gp_pod *p, uint32_t need)
{
    const char *key = g->spec.topology_required ? g->spec.topology_key : NULL;
    GP_VEC(struct domain) domains = {0};
    uint64_t total = 0;
    bool ok = false;
    struct gp_node c;
    for (size_t i = 0; i < e->nodes.len && !ok; i++) {
        const struct gp_node *n = &e->nodes.items[i];
        const char *v = NULL;
        for (size_t j = 0; key && j < n->spec.nlabels && !v; j++)
            if (strcmp(n->spec.labels[j].key, key) == 0)
                v = n->spec.labels[j].value;
        if (key && !v)
            continue;
        node_emptied(n, &c);
        uint64_t k = (uint64_t)gp_eng_head_slots(e, &c, p, need);
        if (k == 0)
            continue;
        if (!key) {
            total += k;
            ok = total >= need;
            continue;
        }
        size_t d = 0;
        while (d < domains.len && strcmp(domains.items[d].value, v) != 0)
            d++;
        if (d == domains.len) {
            struct domain nd = {v, 0};
            if (GP_VEC_PUSH(&domains, nd) != 0) {
                ok = true; /* out of memory: say it fits (it then waits, as before) */
                break;
            }
        }
        domains.items[d].free_milli += k;
        ok = domains.items[d].free_milli >= need;
    }
    GP_VEC_FREE(&domains);
    return ok;
}

/* Sets what the pod of an UNSCHEDULABLE decision holds up (enum blk). */
static void classify(struct gp_engine *e, const struct gp_decision *d)
{
    const struct gp_pod *p = pod_at(e, d->pod);
    struct pod_x *x = px_at(e, d->pod);
    uint32_t need = pod_need(e, p);
    x->blk = BLK_NONE;
    if (d->gang == GP_GANG_MEMBERS || d->gang == GP_GANG_NEVER_FITS ||
        (e->quotas && gp_eng_quota_never_fits(e, p, need)))
        return;
    if (d->explain.rejected[GP_FILTER_QUOTA] > 0 && d->quota_queue == GP_QUEUE_NONE)
        return; /* a per-model cap: it holds up nothing */
    if (d->quota_queue != GP_QUEUE_NONE) {
        x->blk = BLK_QUOTA;
        x->blk_queue = d->quota_queue;
        return;
    }
    bool fits;
    if (p->spec.group) {
        struct group *g = group_at(e, p->spec.group);
        if (topo_hard(e, p)) { /* its filters read the other pods */
            fits = gang_packs_empty(e, g, p, need);
        } else {
            /* the empty cluster changes with the nodes alone (topo_ver) */
            if (g->packs_ver != e->topo_ver + 1 || g->packs_shape != p->shape ||
                g->packs_need != need) {
                g->packs = gang_packs_empty(e, g, p, need);
                g->packs_ver = e->topo_ver + 1;
                g->packs_shape = p->shape;
                g->packs_need = need;
            }
            fits = g->packs;
        }
    } else {
        struct shape *s = &e->shapes.items[p->shape];
        if (s->hopeless_ver != e->topo_ver) {
            s->hopeless = !gp_eng_fits_some_empty(e, p);
            s->hopeless_ver = e->topo_ver;
        }
        fits = !s->hopeless;
    }
    x->blk = fits ? BLK_ROOM : BLK_NONE;
}

/* The head p hit the cap of queue x: its reservation of the quota (kept
 * when the subtree's use has not changed since). */
static void qresv_compute(struct gp_engine *e, uint32_t x, const struct gp_pod *p)
{
    struct queue *q = &e->queues.items[x];
    q->qresv = true;
    if (q->qhead == p->id + 1 && q->qresv_ver == q->ver)
        return;
    int64_t req[NBASIC], room[NBASIC];
    pod_request(p, req);
    uint32_t need = pod_need(e, p);
    bool fits = true;
    for (int k = 0; k < NBASIC; k++) {
        req[k] *= need;
        room[k] = q->cap[k] == INT64_MAX ? INT64_MAX : q->cap[k] - q->used[k];
        fits &= req[k] <= room[k];
    }
    double shadow = e->now_s;
    if (!fits) {
        shadow = INFINITY;
        if (gp_eng_ends_list(e, x))
            for (size_t i = 0; i < e->ends.len && shadow == INFINITY; i++) {
                int64_t got[NBASIC];
                pod_request(pod_at(e, e->ends.items[i].pod), got);
                fits = true;
                for (int k = 0; k < NBASIC; k++) {
                    if (room[k] != INT64_MAX)
                        room[k] += got[k];
                    fits &= req[k] <= room[k];
                }
                if (fits)
                    shadow = e->ends.items[i].end_s;
            }
    }
    for (int k = 0; k < NBASIC; k++)
        q->qspare[k] = room[k] == INT64_MAX ? INT64_MAX : room[k] - req[k];
    q->qshadow_s = shadow;
    q->qhead = p->id + 1;
    q->qresv_ver = q->ver;
}

/* May pod p go past the pods blocked by the caps of its queue and its
 * ancestors? Without backfill, never; with it, when it ends by that
 * pod's shadow time or fits what is left of the cap then (a gang: all its
 * pending members). */
static bool quota_gate(const struct gp_engine *e, const struct gp_pod *p)
{
    int64_t req[NBASIC];
    pod_request(p, req);
    int64_t times = p->spec.group ? (int64_t)gp_eng_gang_pending(e, p->spec.group) : 1;
    double h = p->spec.duration_hint_s;
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        if (!q->qblocked)
            continue;
        if (!q->qresv)
            return false;
        if (h > 0 && e->now_s + h <= q->qshadow_s)
            continue;
        for (int k = 0; k < NBASIC; k++)
            if (req[k] > 0 && q->qspare[k] != INT64_MAX && req[k] * times > q->qspare[k])
                return false;
    }
    return true;
}

/* Pod b was bound past quota reservations: what it takes beyond their
 * shadow time comes off their spare. */
static void quota_account(struct gp_engine *e, const struct gp_pod *b)
{
    int64_t req[NBASIC];
    pod_request(b, req);
    double h = b->spec.duration_hint_s;
    for (uint32_t x = b->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        struct queue *q = &e->queues.items[x];
        if (!q->qresv)
            continue;
        if (!(h > 0 && e->now_s + h <= q->qshadow_s))
            for (int k = 0; k < NBASIC; k++)
                if (q->qspare[k] != INT64_MAX)
                    q->qspare[k] -= req[k];
        q->qresv_ver = q->ver;
    }
}

/* What pod p's failure holds up: the rest of the cycle (strict), its
 * quota's subtree, or - with backfill - nothing beyond its reservation. */
static void block(struct gp_engine *e, const struct gp_pod *p, bool *stop)
{
    const struct pod_x *x = pxc_of(p);
    if (x->blk == BLK_QUOTA) {
        struct queue *q = &e->queues.items[x->blk_queue];
        if (q->qblocked)
            return;
        q->qblocked = true;
        e->qblocked_any = true;
        if (e->backfill)
            qresv_compute(e, x->blk_queue, p);
    } else if (x->blk == BLK_ROOM) {
        if (!e->backfill)
            *stop = true;
        else if (!e->resv.on)
            gp_eng_resv_compute(e, p, pod_need(e, p));
    }
}

/* One pod of an ordered cycle. Returns whether it stays pending;
 * *changed when something was bound or evicted. */
static bool order_step(struct gp_engine *e, struct gp_pod *p, struct gp_decision *out, size_t cap,
                       size_t *ndec, size_t *tried, bool *full, bool *stop, bool *changed)
{
    if (e->qblocked_any && !quota_gate(e, p))
        return true;
    bool may_preempt = e->preempt && e->queues.items[p->spec.queue].may_preempt && !e->resv.on &&
                       !p->spec.preempt_never;
    if (p->tried_gen == pod_gen(e, p) && !(may_preempt && px_of(p)->preempt_gen != e->victim_gen)) {
        block(e, p, stop); /* as when it last failed */
        return true;
    }
    /* backfill: a pod that had its decision, of a shape that failed at
     * this generation, fails alike; it gets no new decision */
    struct shape *sh = &e->shapes.items[p->shape];
    if (e->backfill && !e->no_walk && !p->spec.group && px_of(p)->decided &&
        sh->failed_gen == shape_gen(e, sh) && sh->blk_gen == shape_gen(e, sh) &&
        !(may_preempt && px_of(p)->preempt_gen != e->victim_gen)) {
        (*tried)++;
        p->tried_gen = pod_gen(e, p);
        px_of(p)->blk = sh->blk;
        px_of(p)->blk_queue = sh->blk_queue;
        block(e, p, stop);
        return true;
    }
    size_t first = *ndec, gfirst = 0;
    bool pending = gp_eng_try_pod(e, p, out, cap, ndec, tried, full, changed);
    uint32_t gclass = 0; /* the gang whose members were classified */
    for (size_t k = first; k < *ndec; k++) {
        const struct gp_decision *d = &out[k];
        const struct gp_pod *m = pod_at(e, d->pod);
        if (d->kind == GP_DECISION_BIND) {
            quota_account(e, m);
            gp_eng_walk_remove(e, m->id); /* out of the lists by shape */
        } else if (d->kind == GP_DECISION_UNSCHEDULABLE) {
            if (!px_at(e, m->id)->decided)
                gp_eng_walk_decided(e, m->id);
            px_at(e, m->id)->decided = 1;
            if (m->spec.group && m->spec.group == gclass) { /* as its first member */
                px_at(e, m->id)->blk = px_at(e, out[gfirst].pod)->blk;
                px_at(e, m->id)->blk_queue = px_at(e, out[gfirst].pod)->blk_queue;
                continue;
            }
            classify(e, d);
            gclass = m->spec.group;
            gfirst = k;
            if (!m->spec.group && d->pod == p->id) { /* for its shape's next pods */
                if (sh->lazy_gen == shape_gen(e, sh) &&
                    (sh->blk != px_at(e, m->id)->blk ||
                     sh->blk_queue != px_at(e, m->id)->blk_queue))
                    gp_eng_lazy_write(e, sh); /* the pods passed over keep what they had */
                sh->blk = px_at(e, m->id)->blk;
                sh->blk_queue = px_at(e, m->id)->blk_queue;
                sh->blk_gen = shape_gen(e, sh);
            }
        }
    }
    if (e->resv.on)
        e->resv.ver = e->state_ver; /* the projection has followed the binds */
    if (!pending)
        return false;
    if (!*full)
        block(e, p, stop);
    return true;
}

/* ---- the walk by shape: FIFO and SJF with backfill ------------------------
 * Once the head's reservation is on (and no cap, no preemption, no budget
 * is in play), a pod that had its decision, of a shape that failed at this
 * generation, does nothing in order_step but note that it was tried (its
 * tried_gen and blk): it gets no decision and holds up nothing more. So
 * after the head the walk goes over the lists of pending.c instead of the
 * whole line: each shape's pods in order, merged with a small heap, a
 * shape that failed with only its fresh pods (no decision yet) and a
 * shape that fails on the way switched to them. The pods passed over are
 * not touched: the shape says it (lazy_gen, lazy_until), and what
 * order_step would have written into them is written before anything
 * could read it otherwise - before the shape's blk changes within the
 * generation (a node drained or removed), or before a walk that is not by
 * shape (a budget, a cap, preemption): gp_eng_lazy_write. Every pod that
 * is tried is tried as in the walk over the whole line, in the same order,
 * so every decision is the same. */

static bool shape_passes(const struct gp_engine *e, const struct shape *s)
{
    return !cons_grows(s->key.constraints) && s->failed_gen == e->generation &&
           s->blk_gen == e->generation;
}

void gp_eng_lazy_write(struct gp_engine *e, struct shape *s)
{
    uint64_t g = s->lazy_gen;
    s->lazy_gen = UINT64_MAX;
    if (g != e->generation)
        return; /* a generation ago: nothing reads it */
    for (size_t j = 0; j < gp_olist_len(&s->pend); j++) {
        struct gp_pod *p = pod_at(e, gp_olist_at(&s->pend, j));
        if (okey_before(s->lazy_until, okey_of(e, p)))
            break;
        struct pod_x *x = px_of(p);
        if (x->decided && p->tried_gen != g) {
            p->tried_gen = g;
            x->blk = s->blk;
            x->blk_queue = s->blk_queue;
        }
    }
}

/* Before a walk that is not by shape: what was passed over, written. */
static void lazy_write_all(struct gp_engine *e)
{
    if (e->lazy_gen != e->generation)
        return;
    for (size_t i = 0; i < e->queues.len; i++) {
        const struct queue *q = &e->queues.items[i];
        for (size_t j = 0; q->lists && j < q->shapes.len; j++)
            gp_eng_lazy_write(e, &e->shapes.items[q->shapes.items[j]]);
    }
    e->lazy_gen = UINT64_MAX;
}

/* Whether this cycle may walk by shape once the reservation is on: the
 * lists of every queue made (false, and nothing passed over left
 * unwritten, when not). */
static bool by_shape_ok(struct gp_engine *e, size_t budget)
{
    bool ok = e->backfill && !e->no_walk && !e->no_by_shape && budget == 0 && !e->quotas &&
              !e->model_quotas && !e->preempt;
    for (size_t i = 0; ok && i < e->queues.len; i++)
        ok = gp_eng_walk_lists(e, &e->queues.items[i]) == GP_OK;
    if (!ok)
        lazy_write_all(e);
    return ok;
}

/* Stream t at position `at`: true when it has a pod there (its key read). */
static bool ostream_at(const struct gp_engine *e, struct ostream *t, size_t at)
{
    t->at = at;
    if (at >= gp_olist_len(t->l))
        return false;
    t->id = gp_olist_at(t->l, at);
    t->lver = t->l->ver;
    t->key = okey_of(e, pod_at(e, t->id));
    return true;
}

/* Stream i sifted down the heap: it is held aside and each child that
 * comes before it moves up into the hole (one copy a level, not a swap);
 * the child chosen is the one a swap would take, ties alike. */
static void ostream_down(struct gp_engine *e, size_t i)
{
    struct ostream *h = e->ostreams.items;
    size_t n = e->ostreams.len;
    if (2 * i + 1 >= n)
        return;
    struct ostream t = h[i];
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        const struct okey *mk = &t.key;
        if (l < n && okey_before(h[l].key, *mk)) {
            m = l;
            mk = &h[l].key;
        }
        if (r < n && okey_before(h[r].key, *mk))
            m = r;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = t;
}

/* Shape s passes its pods with a decision over in this walk (room for
 * every shape is reserved by streams_begin). */
static void lazy_note(struct gp_engine *e, struct shape *s, uint32_t id)
{
    if (!s->lazy_listed) {
        s->lazy_listed = true;
        e->lazy_shapes.items[e->lazy_shapes.len++] = id;
    }
}

/* The streams of the walk after key k: per shape its pods (or its fresh
 * ones), per queue its gang members. */
static enum gp_err streams_begin(struct gp_engine *e, struct okey k)
{
    e->ostreams.len = 0;
    e->lazy_shapes.len = 0;
    if (GP_VEC_RESERVE(&e->lazy_shapes, e->shapes.len) != 0)
        return GP_ENOMEM;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        size_t n = 0;
        for (size_t j = 0; j < q->shapes.len; j++) {
            uint32_t id = q->shapes.items[j];
            struct shape *s = &e->shapes.items[id];
            if (gp_olist_len(&s->pend) == 0) { /* no pod left: off the queue's list */
                s->listed = false;
                continue;
            }
            q->shapes.items[n++] = id;
            bool pass = shape_passes(e, s);
            if (pass)
                lazy_note(e, s, id);
            struct ostream t = {pass ? &s->fresh : &s->pend, 0, {0, 0}, 0, 0, id, pass, false, 0};
            if (ostream_at(e, &t, gp_eng_plist_after(e, t.l, k)) &&
                GP_VEC_PUSH(&e->ostreams, t) != 0)
                return GP_ENOMEM;
        }
        q->shapes.len = n;
        struct ostream t = {&q->gangs, 0, {0, 0}, 0, 0, NONE, false, false, 0};
        if (ostream_at(e, &t, gp_eng_plist_after(e, t.l, k)) && GP_VEC_PUSH(&e->ostreams, t) != 0)
            return GP_ENOMEM;
    }
    for (size_t i = e->ostreams.len / 2; i-- > 0;)
        ostream_down(e, i);
    return GP_OK;
}

/* Pod p, of shape s, in a walk by shape (the reservation on, no cap, no
 * preemption): when order_step would find it tried already, or would try
 * it and gp_eng_place hold it back from the shape's memory of its last pod
 * held at this very state and reservation, does what they do (p tried at
 * this generation, blk HELD, no decision) and returns true; else false,
 * doing nothing. */
static bool held_again(struct gp_engine *e, struct gp_pod *p, const struct shape *s, size_t *tried)
{
    uint64_t g = pod_gen(e, p);
    if (p->tried_gen == g)
        return true; /* order_step: as when it last failed, which holds up nothing now */
    if (s->failed_gen == g || p->spec.group || !gp_eng_resv_applies(e, p))
        return false; /* a failure to take, or not held back */
    if ((e->gang_rej_shape == p->shape && e->gang_rej) || !held_cacheable(e, p) ||
        s->held_ver != e->state_ver || s->held_stamp != e->resv_stamp)
        return false;
    /* what gp_eng_try_pod, gp_eng_place and order_step leave */
    (*tried)++;
    e->memo.valid = false;
    e->cands.len = 0;
    e->held = true;
    p->tried_gen = g;
    px_of(p)->blk = BLK_HELD;
    e->resv.ver = e->state_ver;
    return true;
}

/* Pod b was bound by the walk by shape: off the line (e->all, in the
 * order). */
static void line_drop(struct gp_engine *e, const struct gp_pod *b)
{
    gp_eng_plist_remove(e, &e->all, b->id);
}

/* Whether a pending pod comes after key k (the walk stopped at it). */
static bool pending_after(const struct gp_engine *e, struct okey k)
{
    for (size_t i = 0; i < e->queues.len; i++) {
        const struct queue *q = &e->queues.items[i];
        if (gp_eng_plist_after(e, &q->gangs, k) < gp_olist_len(&q->gangs))
            return true;
        for (size_t j = 0; j < q->shapes.len; j++) {
            const struct gp_olist *l = &e->shapes.items[q->shapes.items[j]].pend;
            if (gp_eng_plist_after(e, l, k) < gp_olist_len(l))
                return true;
        }
    }
    return false;
}

/* ---- held runs ---------------------------------------------------------
 * Once a pod of a shape is held back at this state and reservation, the
 * shape's next pods are held again from its memory (held_again) - all but
 * those the reservation does not apply to (a hint that ends by the shadow
 * time) - until the state changes: a bind, a release, a new reservation.
 * So its stream parks: the pods from there on are read once (whether each
 * is held again: up to PARK_SCAN of them, up to the first that is not)
 * and the stream waits in the heap at the pod the scan stopped at. The
 * pods it stood over get what held_again writes into them (tried at this
 * generation, blk HELD; the engine's own fields it sets are set again by
 * the next try before anything reads them) when the walk passes that pod,
 * or, when the state changes or the output fills up at key k first, those
 * before k; the stream then goes on from the first pod after k, tried as
 * the walk along the line tries it. */
enum { PARK_SCAN = 64 };

/* The state a parked run holds in. */
struct park {
    uint64_t state_ver, stamp, gen;
    size_t n; /* streams parked */
};

static const struct okey okey_end = {INFINITY, INT64_MAX};

/* Whether pod q of a parked shape would be held again (held_again, the
 * shape's memory standing, its pods' held_cacheable true): true also when
 * it was tried at this generation (held_again then does nothing). */
static bool park_holds(const struct gp_engine *e, const struct gp_pod *q)
{
    return q->state != GP_POD_PENDING || q->tried_gen == pod_gen(e, q) || gp_eng_resv_applies(e, q);
}

/* Stream t (a shape's, from its first pod on) parks at rank t->at when
 * its shape's next pods would be held again. Its list does not change
 * while it is parked: only a bind of one of its own pods takes one off.
 * held_cacheable is asked of its first pod alone: what it reads of a pod
 * (its constraints' record, labels and namespace for the terms that
 * score) is its shape's. */
static void park_try(struct gp_engine *e, struct ostream *t, struct park *k, bool full)
{
    const struct shape *s = &e->shapes.items[t->shape];
    if (e->no_park || full || t->fresh || s->failed_gen == shape_gen(e, s) ||
        s->held_ver != e->state_ver || s->held_stamp != e->resv_stamp ||
        (e->gang_rej_shape == t->shape && e->gang_rej) ||
        !held_cacheable(e, pod_at(e, t->id))) /* alike for the pods of a shape (see below) */
        return;
    size_t r = t->at, len = gp_olist_len(t->l), end = r + PARK_SCAN < len ? r + PARK_SCAN : len;
    while (r < end && park_holds(e, pod_at(e, gp_olist_at(t->l, r))))
        r++;
    if (r == t->at)
        return; /* its next pod is tried */
    if (k->n++ == 0) {
        k->state_ver = e->state_ver;
        k->stamp = e->resv_stamp;
        k->gen = e->generation;
    }
    t->parked = true;
    t->hold_from = t->at;
    if (!ostream_at(e, t, r))
        t->key = okey_end; /* to the end of its list */
}

/* The pods of parked stream t from hold_from up to rank `upto`, held again
 * as held_again holds them. */
static void park_write(struct gp_engine *e, struct ostream *t, size_t upto)
{
    for (size_t r = t->hold_from; r < upto; r++) {
        struct gp_pod *q = pod_at(e, gp_olist_at(t->l, r));
        if (q->state != GP_POD_PENDING || q->tried_gen == pod_gen(e, q))
            continue;
        q->tried_gen = pod_gen(e, q);
        px_of(q)->blk = BLK_HELD;
        e->park_held++;
    }
    t->parked = false;
}

/* The state changed (or the output filled up) at the pod of key `at`:
 * every parked stream writes its run up to there and goes on from there
 * (one with no pod left there is left at the end of its list, for
 * park_sweep). The heap is to be made again. */
static void park_end(struct gp_engine *e, struct park *k, struct okey at)
{
    for (size_t i = 0; i < e->ostreams.len; i++) {
        struct ostream *t = &e->ostreams.items[i];
        if (!t->parked)
            continue;
        size_t upto = gp_eng_plist_after(e, t->l, at);
        park_write(e, t, upto);
        ostream_at(e, t, upto);
    }
    k->n = 0;
}

/* The heap made again after park_end, without the streams left at the end
 * of their lists. */
static void park_sweep(struct gp_engine *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->ostreams.len; i++) {
        const struct ostream *t = &e->ostreams.items[i];
        if (t->parked || t->at < gp_olist_len(t->l))
            e->ostreams.items[n++] = *t;
    }
    e->ostreams.len = n;
    for (size_t i = n / 2; i-- > 0;)
        ostream_down(e, i);
}

static bool park_moved(const struct gp_engine *e, const struct park *k)
{
    return e->state_ver != k->state_ver || e->resv_stamp != k->stamp || e->generation != k->gen;
}

/* The rest of an ordered cycle after `from`, where the head's reservation
 * was made, by shape. Returns whether the walk went to the end of the
 * line; *settled as the whole walk's; GP_ENOMEM in *err (nothing tried
 * yet: the caller walks the line). The pods it binds leave the line. */
static bool walk_by_shape(struct gp_engine *e, const struct gp_pod *from, struct gp_decision *out,
                          size_t cap, size_t *ndec, size_t *tried, bool *full, bool *stop,
                          bool *changed, bool *settled, enum gp_err *err)
{
    struct okey last = okey_of(e, from);
    *err = streams_begin(e, last);
    if (*err != GP_OK) {
        for (size_t i = 0; i < e->lazy_shapes.len; i++)
            e->shapes.items[e->lazy_shapes.items[i]].lazy_listed = false;
        return false;
    }
    bool whole = true;
    struct park park = {0, 0, 0, 0};
    bool reheap = false;
    while (e->ostreams.len > 0) {
        struct ostream *t = &e->ostreams.items[0];
        if (t->parked) { /* the walk has come to where its run ends */
            park_write(e, t, t->at);
            park.n--;
            if (t->at >= gp_olist_len(t->l)) {
                *t = e->ostreams.items[--e->ostreams.len];
                if (e->ostreams.len > 0)
                    ostream_down(e, 0);
                continue;
            }
        }
        /* the pod it stands at (its list moved: a gang's members bound) */
        uint32_t id = t->l->ver == t->lver ? t->id : gp_olist_at(t->l, t->at);
        struct gp_pod *p = pod_at(e, id);
        struct okey k = t->key;
        if (p->state == GP_POD_PENDING) {
            if (*full || *ndec == cap) {
                whole = false;
                break;
            }
            last = k;
            size_t first = *ndec;
            if (t->shape == NONE && group_at(e, p->spec.group)->cycle == e->cycle) {
                /* a member of a gang tried in this cycle: order_step does
                 * nothing but find it pending (no cap, no preemption) */
                *settled &= p->tried_gen == pod_gen(e, p);
            } else if (!(t->shape != NONE && held_again(e, p, &e->shapes.items[t->shape], tried)) &&
                       order_step(e, p, out, cap, ndec, tried, full, stop, changed)) {
                *settled &= p->tried_gen == pod_gen(e, p);
            }
            for (size_t j = first; j < *ndec; j++)
                if (out[j].kind == GP_DECISION_BIND)
                    line_drop(e, pod_at(e, out[j].pod));
            if (park.n > 0 && (park_moved(e, &park) || *full || *ndec == cap)) {
                park_end(e, &park, k); /* the runs parked hold up to p */
                reheap = true;
            }
        }
        /* past p: the list lost p, or (a gang bound) members before it */
        bool left;
        if (t->l->ver == t->lver || gp_olist_at(t->l, t->at) == id)
            left = ostream_at(e, t, t->at + 1);
        else
            left = ostream_at(e, t, gp_eng_plist_after(e, t->l, k));
        if (t->shape != NONE && !t->fresh) {
            struct shape *s = &e->shapes.items[t->shape];
            if (shape_passes(e, s)) { /* it failed: its fresh pods only, from here */
                lazy_note(e, s, t->shape);
                t->l = &s->fresh;
                t->fresh = true;
                left = ostream_at(e, t, gp_eng_plist_after(e, t->l, k));
            } else if (left) {
                park_try(e, t, &park, *full || *ndec == cap);
            }
        }
        if (!left)
            *t = e->ostreams.items[--e->ostreams.len];
        if (reheap)
            park_sweep(e);
        else if (e->ostreams.len > 0)
            ostream_down(e, 0);
        reheap = false;
    }
    if (park.n > 0) /* not expected (the walk stops only once full): the runs end where it stops */
        park_end(e, &park, last);
    if (whole && (*full || *ndec == cap))
        whole = !pending_after(e, last); /* the line walked would stop at the next pod */
    struct okey until = whole ? (struct okey){INFINITY, INT64_MAX} : last;
    for (size_t i = 0; i < e->lazy_shapes.len; i++) {
        struct shape *s = &e->shapes.items[e->lazy_shapes.items[i]];
        s->lazy_listed = false;
        if (s->lazy_gen != e->generation || okey_before(s->lazy_until, until)) {
            s->lazy_gen = e->generation;
            s->lazy_until = until;
        }
        e->lazy_gen = e->generation;
    }
    return whole;
}

/* FIFO: a walk of the whole list after which every pod left had failed at
 * this generation (none waits for gang members) and no cap blocked any is
 * marked with the state it ran in. Until that state changes - a bind, a
 * release, a node, a queue, a pending pod removed, a victim maturing - a
 * pod it walked would again be skipped and hold up what it held up, so
 * the next cycle starts where it ended (pods are only appended), with the
 * head's reservation as it left it. */
static void mark_set(struct gp_engine *e, struct walk_mark *m, bool ok)
{
    m->valid = ok && e->order == GP_ORDER_FIFO && !e->qblocked_any;
    m->gen = e->generation;
    m->state_ver = e->state_ver;
    m->victim_gen = e->victim_gen;
    m->topo_ver = e->topo_ver;
    m->pend_ver = e->pend_ver;
    m->len = gp_olist_len(&e->all);
    m->resv_on = e->resv.on;
}

static bool mark_holds(const struct gp_engine *e, const struct walk_mark *m, size_t budget)
{
    return m->valid && budget == 0 && !e->no_walk && m->gen == e->generation &&
           m->state_ver == e->state_ver && m->victim_gen == e->victim_gen &&
           m->topo_ver == e->topo_ver && m->pend_ver == e->pend_ver &&
           m->len <= gp_olist_len(&e->all);
}

/* The line (FIFO's or SJF's list) as a cycle walks it: ranks [i, len) to
 * go. The pods the cycle binds stay on it until the walk is done. */
struct line {
    const struct gp_olist *l;
    size_t i, len;
    bool settled; /* every pod left was tried at this generation (mark_set) */
};

/* Tries the line's pods in turn until its end, a stop, or out full; with
 * `head`, also right after the pod whose failure made the reservation,
 * which it returns (NULL otherwise). */
static const struct gp_pod *line_walk(struct gp_engine *e, struct line *ln, bool head,
                                      size_t budget, struct gp_decision *out, size_t cap,
                                      size_t *ndec, size_t *tried, bool *full, bool *stop,
                                      bool *changed)
{
    while (ln->i < ln->len && !*stop) {
        uint32_t id = gp_olist_at(ln->l, ln->i);
        struct gp_pod *p = pod_at(e, id);
        if (p->state != GP_POD_PENDING) { /* a gang member placed earlier in this cycle */
            ln->i++;
            continue;
        }
        if (*full || *ndec == cap || (budget && *tried == budget))
            break;
        ln->i++;
        if (order_step(e, p, out, cap, ndec, tried, full, stop, changed)) {
            ln->settled &=
                p->tried_gen == pod_gen(e, p) &&
                !(e->preempt && e->queues.items[p->spec.queue].may_preempt && !e->resv.on &&
                  !p->spec.preempt_never && px_at(e, id)->preempt_gen != e->victim_gen);
        }
        if (head && e->resv.on)
            return p; /* the head: the rest by shape */
    }
    return NULL;
}

/* A cycle in the engine's order (FIFO, SJF; FAIR with backfill): one pod
 * at a time, from the queue whose next pod comes first (FAIR: the queue
 * pick_queue chooses), stopping at the first pod that does not fit
 * (strict) or reserving room for it (backfill). */
size_t gp_eng_schedule_ordered(struct gp_engine *e, size_t budget, struct gp_decision *out,
                               size_t cap)
{
    size_t ndec = 0, tried = 0;
    bool full = false, stop = false;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        q->cursor = 0;
        q->qblocked = q->qresv = false;
    }
    e->resv.on = false;
    e->resv_log.len = 0;
    e->qblocked_any = false;
    if (e->order != GP_ORDER_FAIR) { /* one list, in the order */
        struct line ln = {&e->all, 0, gp_olist_len(&e->all), true};
        size_t len = ln.len;
        bool changed = false, by_shape = false, whole;
        struct walk_mark *m = &e->fifo_mark;
        if (mark_holds(e, m, budget)) { /* the pods walked last time would do as they did */
            ln.i = m->len;
            e->resv.on = m->resv_on;
        } else {
            by_shape = by_shape_ok(e, budget);
        }
        const struct gp_pod *from =
            line_walk(e, &ln, by_shape, budget, out, cap, &ndec, &tried, &full, &stop, &changed);
        whole = ln.i == len && !stop && !full;
        size_t walked = ndec, walked_to = ndec; /* decisions of the walk by shape */
        if (from && ln.i < len) { /* the walk by shape takes off the line the pods it binds */
            enum gp_err err;
            whole = walk_by_shape(e, from, out, cap, &ndec, &tried, &full, &stop, &changed,
                                  &ln.settled, &err);
            if (err == GP_OK) {
                len = ln.len = ln.i = gp_olist_len(&e->all);
                walked_to = ndec;
            } else { /* out of memory: the rest along the line */
                lazy_write_all(e);
                line_walk(e, &ln, false, budget, out, cap, &ndec, &tried, &full, &stop, &changed);
                whole = ln.i == len && !stop && !full;
            }
        }
        /* the other pods bound leave the line: every pod on it is pending */
        for (size_t j = 0; j < ndec; j++)
            if (out[j].kind == GP_DECISION_BIND && (j < walked || j >= walked_to))
                line_drop(e, pod_at(e, out[j].pod));
        mark_set(e, m, whole && ln.settled && budget == 0);
    }
    /* FAIR: the queue pick_queue chooses, until something is bound or
     * evicted (the shares move), as in the greedy cycle */
    while (e->order == GP_ORDER_FAIR && !stop) {
        uint32_t cur = gp_eng_pick_queue(e);
        if (cur == NONE)
            break;
        struct queue *q = &e->queues.items[cur];
        bool changed = false;
        while (q->cursor < gp_olist_len(&q->pending) && !changed && !stop) {
            uint32_t id = gp_olist_at(&q->pending, q->cursor);
            struct gp_pod *p = pod_at(e, id);
            if (p->state != GP_POD_PENDING) {
                q->cursor++;
                continue;
            }
            if (full || ndec == cap || (budget && tried == budget)) {
                stop = true;
                break;
            }
            q->cursor++;
            order_step(e, p, out, cap, &ndec, &tried, &full, &stop, &changed);
        }
    }
    /* outside a cycle nothing is held back, but by the reservation it
     * leaves (gp_engine_schedule_group) */
    e->resv.kept = e->resv.on;
    e->resv.on = false;
    return ndec;
}
