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
 * from the queue's pending list when the walk is next used for them. The
 * pods it binds leave the queue's pending list at the cycle's end (queue.c,
 * gp_eng_pending_tidy).
 *
 * Every list here (a shape's, the gang members', and the queues' and the
 * line's of queue.c and order.c) is a util/olist.h B+ tree of pod ids kept
 * in the engine's order: a pod goes in or out in O(log n) comparisons. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

/* The engine's order (FAIR: a queue's, higher priority first, then older). */
static inline bool before(const struct gp_engine *e, uint32_t a, uint32_t b)
{
    return order_before(e, pod_at(e, a), pod_at(e, b));
}

/* ---- lists of pod ids in the engine's order -----------------------------------
 * util/olist.h's B+ trees, searched through the pods' keys: a pod's place
 * is the number of pods of the list that go before it. */

struct key_probe {
    const struct gp_engine *e;
    struct okey k;
};

/* Pod id goes before the probe's key. */
static bool goes_before(const void *ctx, uint32_t id)
{
    const struct key_probe *b = ctx;
    return okey_before(okey_of(b->e, pod_at(b->e, id)), b->k);
}

/* Pod id does not come after the probe's key. */
static bool not_after(const void *ctx, uint32_t id)
{
    const struct key_probe *b = ctx;
    return !okey_before(b->k, okey_of(b->e, pod_at(b->e, id)));
}

enum gp_err gp_eng_plist_insert(const struct gp_engine *e, struct gp_olist *l, uint32_t pod)
{
    struct key_probe b = {e, okey_of(e, pod_at(e, pod))};
    size_t n = gp_olist_len(l), r;
    if (n == 0 || not_after(&b, gp_olist_last(l)))
        r = n; /* at the end, as most arrivals are */
    else
        r = gp_olist_count(l, not_after, &b);
    return gp_olist_insert_at(l, r, pod) == 0 ? GP_OK : GP_ENOMEM;
}

bool gp_eng_plist_remove(const struct gp_engine *e, struct gp_olist *l, uint32_t pod)
{
    if (gp_olist_first(l) == pod) { /* the front, as most departures are */
        gp_olist_remove_at(l, 0);
        return true;
    }
    struct key_probe b = {e, okey_of(e, pod_at(e, pod))};
    size_t r = gp_olist_count(l, goes_before, &b);
    if (gp_olist_at(l, r) != pod)
        return false;
    gp_olist_remove_at(l, r);
    return true;
}

size_t gp_eng_plist_after(const struct gp_engine *e, const struct gp_olist *l, struct okey k)
{
    struct key_probe b = {e, k};
    size_t n = gp_olist_len(l);
    if (n == 0 || !not_after(&b, gp_olist_first(l)))
        return 0; /* the whole list after k, as the walk by shape mostly finds it */
    return gp_olist_count(l, not_after, &b);
}

static bool plist_empty(const struct gp_olist *l)
{
    return gp_olist_len(l) == 0;
}

/* ---- membership -------------------------------------------------------------- */

enum gp_err gp_eng_walk_add(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = pod_at(e, pod);
    struct queue *q = &e->queues.items[p->spec.queue];
    if (!q->lists)
        return GP_OK;
    if (p->spec.group)
        return gp_eng_plist_insert(e, &q->gangs, pod);
    struct shape *s = &e->shapes.items[p->shape];
    if (!s->listed) {
        if (GP_VEC_PUSH(&q->shapes, p->shape) != 0)
            return GP_ENOMEM;
        s->listed = true;
    }
    enum gp_err err = gp_eng_plist_insert(e, &s->pend, pod);
    if (err == GP_OK && (err = gp_eng_plist_insert(e, &s->fresh, pod)) != GP_OK)
        gp_eng_plist_remove(e, &s->pend, pod);
    return err;
}

void gp_eng_walk_remove(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = pod_at(e, pod);
    struct queue *q = &e->queues.items[p->spec.queue];
    if (!q->lists)
        return;
    if (p->spec.group) {
        gp_eng_plist_remove(e, &q->gangs, pod);
        return;
    }
    struct shape *s = &e->shapes.items[p->shape];
    gp_eng_plist_remove(e, &s->pend, pod);
    gp_eng_plist_remove(e, &s->fresh, pod);
}

void gp_eng_walk_drop(struct gp_engine *e, struct queue *q)
{
    for (size_t i = 0; i < q->shapes.len; i++) {
        struct shape *s = &e->shapes.items[q->shapes.items[i]];
        gp_eng_lazy_write(e, s); /* before its list goes */
        gp_olist_free(&s->pend);
        gp_olist_free(&s->fresh);
        s->listed = false;
    }
    q->shapes.len = 0;
    gp_olist_free(&q->gangs);
    q->lists = false;
}

/* The lists of q from its pending list (in queue order: appends). A fresh
 * pod never had a decision: for the fair walk, it was never tried; for the
 * ordered one (FIFO, SJF), it has no UNSCHEDULABLE decision yet. */
static enum gp_err lists_build(struct gp_engine *e, struct queue *q)
{
    q->lists = true;
    bool ordered = e->order != GP_ORDER_FAIR;
    for (size_t i = 0; i < gp_olist_len(&q->pending); i++) {
        uint32_t id = gp_olist_at(&q->pending, i);
        if (pod_at(e, id)->state != GP_POD_PENDING)
            continue;
        enum gp_err err = gp_eng_walk_add(e, id);
        if (err == GP_OK && !pod_at(e, id)->spec.group &&
            (ordered ? px_at(e, id)->decided
                     : pod_at(e, id)->tried_gen != UINT64_MAX)) /* it had a decision */
            gp_eng_plist_remove(e, &e->shapes.items[pod_at(e, id)->shape].fresh, id);
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
        gp_eng_plist_remove(e, &e->shapes.items[p->shape].fresh, pod);
}

void gp_eng_walk_free(struct gp_engine *e, struct queue *q)
{
    (void)e;
    gp_olist_free(&q->gangs);
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
        return gp_olist_at(&q->gangs, t->at);
    const struct shape *s = &e->shapes.items[t->shape];
    return gp_olist_first(t->fresh ? &s->fresh : &s->pend);
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
        struct stream t = {NONE, 0, false};
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
        left = ++t->at < gp_olist_len(&q->gangs);
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
    for (size_t i = 0; i < gp_olist_len(&q->gangs);) /* gang members bound in this cycle leave */
        if (pod_at(e, gp_olist_at(&q->gangs, i))->state != GP_POD_PENDING)
            gp_olist_remove_at(&q->gangs, i);
        else
            i++;
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
                gp_eng_plist_remove(e, &s->pend, id);
            gp_eng_plist_remove(e, &s->fresh, id); /* tried, or placed and tried before */
            if (stays && !t->fresh) /* it failed: the shape's fresh pods only, from here */
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
