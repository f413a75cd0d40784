/* pods.c - the pods' storage: records in chunks of dense ids, an ended
 * pod the driver has forgotten (gp_engine_pod_forget) freed at the start
 * of the next cycle, and a chunk freed once every id in it has been
 * issued and forgotten, so that
 * an engine that runs for months holds what its live pods need, not a
 * record of every pod it has ever seen (internal.h, "the pods' storage";
 * the chunks are util/idtab.h's).
 *
 * A pod is forgotten only when nothing of the engine lists it any more.
 * Every list but one drops a pod as it ends (the pending lists, the
 * queues' bound lists, FIFO's and SJF's list) or skips it by its state
 * (the immature list reads `gone` as ended); a gang's member list drops
 * it here. The one exception is a queue's pending list, which keeps the
 * pods bound from it until the cycle's end (a compaction: queue.c's
 * gp_eng_pending_tidy) and finds pods by a search on their order, which
 * must read their records: an ended pod still in it waits (`listed`)
 * until a compaction has dropped it (a pod knows the count of its list's
 * compactions when it was bound from it). */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether pod id (ended, its record intact) is still in its queue's
 * pending list: it was bound from it and no compaction has run since
 * (one drops every pod that is not pending; queue.c's pending_remove
 * takes a pod out at once). */
static bool in_pending_list(const struct gp_engine *e, uint32_t id)
{
    const struct pod_rec *r = pod_rec_at(e, id);
    const struct queue *q = &e->queues.items[r->pod.spec.queue];
    return r->x.listed_at != 0 && r->x.listed_at - 1 == q->compactions;
}

/* Forgets pod id: off its gang's member list, its record given back. */
static void forget(struct gp_engine *e, uint32_t id)
{
    struct pod_store *s = &e->pods;
    if (!gp_idtab_get(&s->tab, id))
        return; /* freed already */
    struct pod_rec *r = pod_rec_at(e, id);
    const struct gp_pod *p = &r->pod;
    r->x.forgotten = 1; /* what its record says while its chunk is held */
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
    free(r->x.pdbs);
    r->x.pdbs = NULL;
    r->x.npdbs = 0;
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
        if (in_pending_list(e, id)) {
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
        if (in_pending_list(e, id))
            s->listed.items[k++] = id;
        else
            forget(e, id);
    }
    s->listed.len = k;
}

void gp_eng_pods_free(struct gp_engine *e)
{
    struct pod_store *s = &e->pods;
    for (uint32_t i = gp_idtab_first(&s->tab); i < s->tab.n; i++) {
        struct pod_rec *r = gp_idtab_get(&s->tab, i);
        if (r)
            free(r->x.pdbs);
    }
    gp_idtab_free(&s->tab);
    GP_VEC_FREE(&s->ended);
    GP_VEC_FREE(&s->listed);
}
