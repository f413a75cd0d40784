/* pending.c - a queue's pending pods grouped by request shape, and the
 * fair-share cycle's walk over them that costs what changed rather than
 * the length of the queue.
 *
 * Pods of one shape fit on exactly the same nodes, and a bind only takes
 * capacity away; so once a pod of a shape fails at a cluster generation,
 * every later pod of that shape fails too until the generation changes,
 * and the scan's answer for them is the failure remembered in the shape
 * (cycle.c). The plain walk (cycle.c) still visits every pending pod each
 * cycle to hand out those answers. This walk keeps, per shape, its pending
 * pods in queue order (`pend`) and those that never had a decision
 * (`fresh`), and merges the shapes' lists in queue order with a small heap:
 * a shape that has not failed at this generation has its pods tried from
 * its first one on, until one fails; after that only its fresh pods are
 * visited, and they get the remembered failure, as in the plain walk. A
 * pod that already had a decision and whose shape failed again at this
 * generation is not visited: it would get the same decision again (its
 * explanation aside), which is the one difference from the plain walk - a
 * waiting pod gets no new decision until its shape is tried again. Gang
 * members are walked one by one as before (their own list, `gangs`).
 *
 * It is used for the queues of a fair cycle without backfill, budget or
 * preemption whose pods no quota can stop (gp_eng_walk_fast); the others
 * take the plain walk, after which their lists are dropped, and made again
 * from the queue's pending list when the walk is next used for them. A
 * queue's pending list (cycle.c's) keeps its order; pods bound by this
 * walk leave it when they are more than half of it. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

/* The engine's order (FAIR: a queue's, higher priority first, then older). */
static inline bool before(const struct gp_engine *e, uint32_t a, uint32_t b)
{
    return order_before(e, pod_at(e, a), pod_at(e, b));
}

/* ---- sorted lists of pod ids, items[head..len) ----------------------------- */

static enum gp_err plist_insert(const struct gp_engine *e, struct plist *l, uint32_t pod)
{
    size_t lo = l->head, hi = l->len;
    while (lo < hi) { /* the first position whose pod `pod` goes before */
        size_t mid = lo + (hi - lo) / 2;
        if (before(e, pod, l->items[mid]))
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo == l->head && l->head > 0) { /* in front: the room before the head */
        l->items[--l->head] = pod;
        return GP_OK;
    }
    if (l->len == l->cap) {
        if (l->head > l->len / 2) { /* half of it is room before the head: move down */
            memmove(l->items, l->items + l->head, (l->len - l->head) * sizeof *l->items);
            lo -= l->head;
            l->len -= l->head;
            l->head = 0;
        } else {
            size_t cap = l->cap ? 2 * l->cap : 8;
            uint32_t *items = realloc(l->items, cap * sizeof *items);
            if (!items)
                return GP_ENOMEM;
            l->items = items;
            l->cap = cap;
        }
    }
    memmove(l->items + lo + 1, l->items + lo, (l->len - lo) * sizeof *l->items);
    l->items[lo] = pod;
    l->len++;
    return GP_OK;
}

static void plist_remove(const struct gp_engine *e, struct plist *l, uint32_t pod)
{
    if (l->head < l->len && l->items[l->head] == pod) {
        l->head++;
    } else {
        size_t lo = l->head, hi = l->len;
        while (lo < hi) { /* the first position not before `pod` */
            size_t mid = lo + (hi - lo) / 2;
            if (before(e, l->items[mid], pod))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == l->len || l->items[lo] != pod)
            return;
        memmove(l->items + lo, l->items + lo + 1, (l->len - lo - 1) * sizeof *l->items);
        l->len--;
    }
    if (l->head == l->len)
        l->head = l->len = 0;
}

static bool plist_empty(const struct plist *l)
{
    return l->head == l->len;
}

void gp_eng_plist_free(struct plist *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ---- membership -------------------------------------------------------------- */

enum gp_err gp_eng_walk_add(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = pod_at(e, pod);
    struct queue *q = &e->queues.items[p->spec.queue];
    if (!q->lists)
        return GP_OK;
    if (p->spec.group)
        return plist_insert(e, &q->gangs, pod);
    struct shape *s = &e->shapes.items[p->shape];
    if (!s->listed) {
        if (GP_VEC_PUSH(&q->shapes, p->shape) != 0)
            return GP_ENOMEM;
        s->listed = true;
    }
    enum gp_err err = plist_insert(e, &s->pend, pod);
    if (err == GP_OK && (err = plist_insert(e, &s->fresh, pod)) != GP_OK)
        plist_remove(e, &s->pend, pod);
    return err;
}

void gp_eng_walk_remove(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = pod_at(e, pod);
    struct queue *q = &e->queues.items[p->spec.queue];
    if (!q->lists)
        return;
    if (p->spec.group) {
        plist_remove(e, &q->gangs, pod);
        return;
    }
    struct shape *s = &e->shapes.items[p->shape];
    plist_remove(e, &s->pend, pod);
    plist_remove(e, &s->fresh, pod);
}

void gp_eng_walk_drop(struct gp_engine *e, struct queue *q)
{
    for (size_t i = 0; i < q->shapes.len; i++) {
        struct shape *s = &e->shapes.items[q->shapes.items[i]];
        gp_eng_lazy_write(e, s); /* before its list goes */
        s->pend.head = s->pend.len = 0;
        s->fresh.head = s->fresh.len = 0;
        s->listed = false;
    }
    q->shapes.len = 0;
    q->gangs.head = q->gangs.len = 0;
    q->lists = false;
}

/* The lists of q from its pending list (in queue order: appends). A fresh
 * pod never had a decision: for the fair walk, it was never tried; for the
 * ordered one (FIFO, SJF), it has no UNSCHEDULABLE decision yet. */
static enum gp_err lists_build(struct gp_engine *e, struct queue *q)
{
    q->lists = true;
    bool ordered = e->order != GP_ORDER_FAIR;
    for (size_t i = 0; i < q->pending.len; i++) {
        uint32_t id = q->pending.items[i];
        if (pod_at(e, id)->state != GP_POD_PENDING)
            continue;
        enum gp_err err = gp_eng_walk_add(e, id);
        if (err == GP_OK && !pod_at(e, id)->spec.group &&
            (ordered ? px_at(e, id)->decided
                     : pod_at(e, id)->tried_gen != UINT64_MAX)) /* it had a decision */
            plist_remove(e, &e->shapes.items[pod_at(e, id)->shape].fresh, id);
        if (err != GP_OK) {
            gp_eng_walk_drop(e, q);
            return err;
        }
    }
    return GP_OK;
}

enum gp_err gp_eng_walk_lists(struct gp_engine *e, struct queue *q)
{
    return q->lists ? GP_OK : lists_build(e, q);
}

void gp_eng_walk_decided(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = pod_at(e, pod);
    if (!p->spec.group && e->queues.items[p->spec.queue].lists)
        plist_remove(e, &e->shapes.items[p->shape].fresh, pod);
}

size_t gp_eng_plist_after(const struct gp_engine *e, const struct plist *l, struct okey k)
{
    /* galloping from the head: the walk mostly starts near it */
    size_t lo = l->head, step = 1, hi = lo;
    while (hi < l->len && !okey_before(k, okey_of(e, pod_at(e, l->items[hi])))) {
        lo = hi + 1;
        hi = lo + step;
        step *= 2;
    }
    if (hi > l->len)
        hi = l->len;
    while (lo < hi) { /* the first in [lo, hi) that comes after k */
        size_t mid = lo + (hi - lo) / 2;
        if (okey_before(k, okey_of(e, pod_at(e, l->items[mid]))))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void gp_eng_walk_free(struct gp_engine *e, struct queue *q)
{
    (void)e;
    gp_eng_plist_free(&q->gangs);
    GP_VEC_FREE(&q->shapes);
    GP_VEC_FREE(&q->heap);
}

/* ---- the walk ------------------------------------------------------------------ */

bool gp_eng_walk_fast(const struct gp_engine *e, const struct queue *q, size_t budget)
{
    return !e->no_walk && e->order == GP_ORDER_FAIR && !e->backfill && budget == 0 && !e->preempt &&
           !q->capped && !q->model_capped;
}

/* The pod a stream stands at. */
static uint32_t stream_pod(const struct gp_engine *e, const struct queue *q, const struct stream *t)
{
    if (t->shape == NONE)
        return q->gangs.items[t->at];
    const struct shape *s = &e->shapes.items[t->shape];
    return t->fresh ? s->fresh.items[s->fresh.head] : s->pend.items[s->pend.head];
}

static bool stream_before(const struct gp_engine *e, const struct queue *q, const struct stream *a,
                          const struct stream *b)
{
    return before(e, stream_pod(e, q, a), stream_pod(e, q, b));
}

static void heap_down(const struct gp_engine *e, struct queue *q, size_t i)
{
    struct stream *h = q->heap.items;
    size_t n = q->heap.len;
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && stream_before(e, q, &h[l], &h[m]))
            m = l;
        if (r < n && stream_before(e, q, &h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        struct stream t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

enum gp_err gp_eng_walk_begin(struct gp_engine *e, struct queue *q)
{
    q->heap.len = 0;
    if (!q->lists) {
        enum gp_err err = lists_build(e, q);
        if (err != GP_OK)
            return err;
    }
    size_t k = 0;
    for (size_t i = 0; i < q->shapes.len; i++) {
        uint32_t id = q->shapes.items[i];
        struct shape *s = &e->shapes.items[id];
        if (plist_empty(&s->pend)) { /* no pod left: off the queue's list */
            s->listed = false;
            continue;
        }
        q->shapes.items[k++] = id;
        struct stream t = {id, 0, false};
        if (s->failed_gen == shape_gen(e, s)) { /* it failed: only its fresh pods */
            if (plist_empty(&s->fresh))
                continue;
            t.fresh = true;
        }
        if (GP_VEC_PUSH(&q->heap, t) != 0)
            return GP_ENOMEM;
    }
    q->shapes.len = k;
    if (!plist_empty(&q->gangs)) {
        struct stream t = {NONE, q->gangs.head, false};
        if (GP_VEC_PUSH(&q->heap, t) != 0)
            return GP_ENOMEM;
    }
    for (size_t i = q->heap.len / 2; i-- > 0;)
        heap_down(e, q, i);
    return GP_OK;
}

/* Moves the heap's top stream past the pod it stood at; off the heap when
 * it has no pod left. */
static void stream_next(struct gp_engine *e, struct queue *q)
{
    struct stream *t = &q->heap.items[0];
    bool left;
    if (t->shape == NONE) {
        left = ++t->at < q->gangs.len;
    } else {
        const struct shape *s = &e->shapes.items[t->shape];
        left = !plist_empty(t->fresh ? &s->fresh : &s->pend);
    }
    if (!left)
        q->heap.items[0] = q->heap.items[--q->heap.len];
    if (q->heap.len > 0)
        heap_down(e, q, 0);
}

void gp_eng_walk_end(struct gp_engine *e, struct queue *q)
{
    q->heap.len = 0;
    size_t k = 0; /* gang members bound in this cycle leave */
    for (size_t i = q->gangs.head; i < q->gangs.len; i++)
        if (pod_at(e, q->gangs.items[i])->state == GP_POD_PENDING)
            q->gangs.items[k++] = q->gangs.items[i];
    q->gangs.head = 0;
    q->gangs.len = k;
    if (q->pending.len > 2 * q->npend + 64) { /* the pods bound meanwhile leave */
        e->pods.compacted = true;
        q->compactions++;
        k = 0;
        for (size_t i = 0; i < q->pending.len; i++)
            if (pod_at(e, q->pending.items[i])->state == GP_POD_PENDING)
                q->pending.items[k++] = q->pending.items[i];
        q->pending.len = k;
    }
}

bool gp_eng_walk_step(struct gp_engine *e, struct queue *q, struct gp_decision *out, size_t cap,
                      size_t *ndec, size_t *tried, bool *full, bool *changed)
{
    while (q->heap.len > 0 && !*changed) {
        struct stream *t = &q->heap.items[0];
        uint32_t id = stream_pod(e, q, t);
        struct gp_pod *p = pod_at(e, id);
        if (p->state != GP_POD_PENDING) { /* a gang member placed earlier in this cycle */
            stream_next(e, q);
            continue;
        }
        if (*full || *ndec == cap)
            return false;
        size_t before_n = *ndec;
        if (t->shape == NONE) { /* a gang's member: as the plain walk */
            if (p->tried_gen != pod_gen(e, p))
                gp_eng_try_pod(e, p, out, cap, ndec, tried, full, changed);
            stream_next(e, q);
        } else {
            struct shape *s = &e->shapes.items[t->shape];
            bool stays = gp_eng_try_pod(e, p, out, cap, ndec, tried, full, changed);
            if (!stays)
                plist_remove(e, &s->pend, id);
            plist_remove(e, &s->fresh, id); /* tried, or placed and tried before */
            if (stays && !t->fresh)         /* it failed: the shape's fresh pods only, from here */
                t->fresh = true;
            stream_next(e, q);
        }
        for (size_t k = before_n; k < *ndec; k++)
            if (out[k].kind == GP_DECISION_BIND) {
                q->npend--;
                e->npending--;
            }
    }
    return true;
}
