/* pods.c - the pods' storage: records in chunks of dense ids, a
 * pod that has ended forgotten at the start of the next cycle, and a
 * chunk freed once every id in it has been issued and forgotten, so that
 * an engine that runs for months holds what its live pods need, not a
 * record of every pod it has ever seen (internal.h, "the pods' storage";
 * the chunks are util/idtab.h's).
 *
 * A pod is forgotten only when nothing of the engine lists it any more.
 * Every list but one drops a pod as it ends (the pending lists, the
 * queues' bound lists, FIFO's and SJF's list) or skips it by its state
 * (the immature list reads `gone` as ended); a gang's member list drops
 * it here. The one exception is a queue's pending list, which keeps the
 * pods bound from it until it is compacted (cycle.c, pending.c) and finds
 * pods by a binary search on their order, which must read their records:
 * an ended pod still in it waits (`listed`) until a compaction has
 * dropped it. */
#include "engine/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Queue order as queue.c keeps the pending lists. */
static bool listed_before(const struct gp_engine *e, const struct gp_pod *a, const struct gp_pod *b)
{
    if (e->order == GP_ORDER_FIFO)
        return a->seq < b->seq;
    if (e->order == GP_ORDER_SJF) {
        double ka = a->spec.duration_hint_s > 0 ? a->spec.duration_hint_s : INFINITY;
        double kb = b->spec.duration_hint_s > 0 ? b->spec.duration_hint_s : INFINITY;
        if (ka != kb)
            return ka < kb;
        return a->seq < b->seq;
    }
    if (a->spec.priority != b->spec.priority)
        return a->spec.priority > b->spec.priority;
    return a->seq < b->seq;
}

/* Whether pod p (ended, its record intact) is still in its queue's
 * pending list. */
static bool in_pending_list(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct queue *q = &e->queues.items[p->spec.queue];
    size_t lo = 0, hi = q->pending.len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (listed_before(e, pod_at(e, q->pending.items[mid]), p))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < q->pending.len && q->pending.items[lo] == p->id;
}

/* Forgets pod id: off its gang's member list, its record given back. */
static void forget(struct gp_engine *e, uint32_t id)
{
    struct pod_store *s = &e->pods;
    const struct gp_pod *p = pod_at(e, id);
    if (p == &s->gone.pod)
        return;
    struct group *g = group_at(e, p->spec.group);
    if (g) {
        for (size_t i = 0; i < g->members.len; i++)
            if (g->members.items[i] == id) {
                memmove(&g->members.items[i], &g->members.items[i + 1],
                        (g->members.len - i - 1) * sizeof g->members.items[0]);
                g->members.len--;
                break;
            }
    }
    uint32_t gid = p->spec.group;
    gp_idtab_release(&s->tab, id);
    gp_eng_group_maybe_free(e, gid);
}

void gp_eng_pods_reap(struct gp_engine *e)
{
    struct pod_store *s = &e->pods;
    for (size_t i = 0; i < s->ended.len; i++) {
        uint32_t id = s->ended.items[i];
        struct pod_rec *r = pod_rec_at(e, id);
        if (r == s->gone_p || r->x.forgotten)
            continue; /* forgotten already (asked twice) */
        if (in_pending_list(e, &r->pod)) {
            r->x.forgotten = 1;
            (void)GP_VEC_PUSH(&s->listed, id); /* out of memory: kept for ever, which is safe */
            continue;
        }
        forget(e, id);
    }
    s->ended.len = 0;
    if (s->compacted) {
        s->compacted = false;
        gp_eng_pods_unlisted(e);
    }
}

void gp_eng_pods_unlisted(struct gp_engine *e)
{
    struct pod_store *s = &e->pods;
    size_t k = 0;
    for (size_t i = 0; i < s->listed.len; i++) {
        uint32_t id = s->listed.items[i];
        if (in_pending_list(e, pod_at(e, id)))
            s->listed.items[k++] = id;
        else
            forget(e, id);
    }
    s->listed.len = k;
}

void gp_eng_pods_free(struct gp_engine *e)
{
    struct pod_store *s = &e->pods;
    gp_idtab_free(&s->tab);
    GP_VEC_FREE(&s->ended);
    GP_VEC_FREE(&s->listed);
}
