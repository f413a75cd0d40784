/* sched_unblock.c - a decision waiting for a blocked node placed again
 * elsewhere (sched_slot.c, "blocked nodes"; docs/kube.md, "A blocked
 * node"), when nothing of it is irreversible: the pod (or no member of
 * its gang) bound, none with a Binding in flight or one that may have
 * gone through (bind.c BO_UNSURE), none kept (BO_KEPT). A Binding cannot
 * be undone (only deleting the pod frees its node), an annotation can.
 *
 * The new placement is decided before anything is written: the decision
 * is released in the engine and placed again by the engine's policy with
 * every blocked node left out (a required node term metadata.name NotIn
 * each, in the engine's copy of the pod only; its volumes' conditions
 * read again from its claims as they are now, volumes.c
 * gp_ks_volumes_now: a claim provisioned or bound for the old node since
 * the pod was read keeps it where its volume reaches); when it does not
 * fit, it is put back as it was and nothing is taken back. A gang's members move
 * together: every decided member released and the gang placed again whole
 * by the engine (gp_engine_schedule_group: at least minMember at once or
 * none, as a cycle places it), its members pending in the engine placed
 * with it if they fit; one member bound, or not to be taken back, and the
 * gang stays. When it fits, what was written of the old decision (a
 * decision resumed after a restart; a gang's annotations) is taken back
 * first, member by member: its annotations removed by the merge patch that the
 * rollback of a failed Binding sends (gp_ks_clear_annotations_rv,
 * sched_cycle.c), with the version seen unbound as its precondition - a
 * Binding landing meanwhile (a former leader's, still in flight) changes
 * the pod, and the patch is refused with 409 Conflict (metadata.
 * resourceVersion, an optimistic-concurrency precondition: Kubernetes API
 * Concepts, "Resource versions"; apimachinery's merge patch keeps the
 * version given). A 409 has the pod read again: bound, it stays bound and
 * keeps its annotations (the informer's view brought up to date from the
 * read); not bound, its annotations are removed with the version read as
 * the precondition, as bind.c's settle does. Only once every take-back
 * was answered 200 is the new decision kept and handed to bind.c
 * (annotated from the version the take-back made, then bound; a gang's
 * members as one job); otherwise the engine is put back as it was: a
 * member found bound makes its gang go forward where it was decided (the
 * members taken back before it kept there, annotated again and bound as
 * bind.c's BO_KEPT), and what could not be told (no answer, a member
 * gone) rebuilds the scheduler from the API (s->dirty), as a clearing
 * without an answer does in bind.c. So a pod never has two decisions, and
 * no GPU is booked twice: the engine holds the old place until the new
 * one replaces it, and the new one excludes the old node. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"
#include "kube/volumes_internal.h"

/* Whether engine node `node` is one of the nodes b[0..nb) (both parts of
 * a split node: sched_mig.c). */
static bool among(const struct gp_kube_sched *s, uint32_t node, struct snode *const *b, size_t nb)
{
    const struct gp_node *nd = gp_engine_node(s->e, node);
    for (size_t i = 0; nd && i < nb; i++)
        if (nd->spec.name && strcmp(nd->spec.name, b[i]->name) == 0)
            return true;
    return false;
}

/* c (NULL: none) with the nodes b[0..nb) left out: metadata.name NotIn
 * each, ANDed into each required node term (one term of them alone when
 * it has none; a term that selects no node left so), in s->spent: the
 * engine borrows it while its shapes may, and a rebuild frees it (counted
 * as a retired spec, so that a long block does not grow memory). */
static const struct gp_pod_constraints *without(struct gp_kube_sched *s,
                                                const struct gp_pod_constraints *c,
                                                struct snode *const *b, size_t nb)
{
    struct gp_arena *a = &s->spent;
    struct gp_pod_constraints *out = gp_arena_alloc(a, sizeof *out);
    struct gp_match_expr *x = gp_arena_alloc(a, nb * sizeof *x);
    size_t nt = c && c->nnode_required ? c->nnode_required : 1;
    struct gp_node_term *t = gp_arena_alloc(a, nt * sizeof *t);
    if (!out || !x || !t)
        return NULL;
    for (size_t i = 0; i < nb; i++) {
        const char **v = gp_arena_alloc(a, sizeof *v);
        if (!v || !(*v = gp_arena_strdup(a, b[i]->name)))
            return NULL;
        x[i] = (struct gp_match_expr){"metadata.name", GP_MATCH_NOT_IN, v, 1};
    }
    for (size_t k = 0; k < nt; k++) {
        const struct gp_node_term *o = c && c->nnode_required ? &c->node_required[k] : NULL;
        t[k] = o ? *o : (struct gp_node_term){0};
        if (o && o->nlabels == 0 && o->nfields == 0)
            continue; /* selects no node: still none */
        size_t nf = o ? o->nfields : 0;
        struct gp_match_expr *f = gp_arena_alloc(a, (nf + nb) * sizeof *f);
        if (!f)
            return NULL;
        if (nf)
            memcpy(f, o->fields, nf * sizeof *f);
        memcpy(f + nf, x, nb * sizeof *f);
        t[k].fields = f;
        t[k].nfields = nf + nb;
    }
    if (c)
        *out = *c;
    else
        memset(out, 0, sizeof *out);
    out->node_required = t;
    out->nnode_required = nt;
    s->spent_specs++;
    return out;
}

/* What taking back a written decision came to. */
enum take {
    T_CLEARED, /* its annotations removed (or nothing was written) */
    T_BOUND,   /* it was bound meanwhile: read back, its annotations kept */
    T_GONE,    /* deleted, or another pod of the name */
    T_UNKNOWN, /* no answer, or refused: its annotations may remain */
};

/* One pod of a move: a decision (ASSUMED) or, for a gang, a member still
 * pending in the engine, placed with the others if it fits. */
struct mv {
    struct spod *p;
    bool decided, written;                 /* ASSUMED; annotated (taken back before the new one) */
    const struct gp_pod_constraints *excl; /* its constraints without the blocked nodes */
    uint32_t was_node;                     /* decided: where it was */
    struct gp_pick was_pick;
    bool placed; /* the new placement's */
    uint32_t node;
    struct gp_pick pick;
    enum take took;
    char rv[64]; /* T_CLEARED, written: the version its take-back made */
    json_t *got; /* T_BOUND: the pod read back */
};

/* Every pod of m[0..k) back as it was before the move: the tentative
 * places released first (one may hold another's old GPUs), then each
 * added with its own constraints and a decided one assigned where it was.
 * An engine refusal releases the pod (gp_ks_release); a written one
 * released so rebuilds the scheduler from the API (its annotations stay). */
static void restore(struct gp_kube_sched *s, struct mv *m, size_t k)
{
    for (size_t i = 0; i < k; i++)
        gp_ks_engine_drop(s, m[i].p);
    for (size_t i = 0; i < k; i++) {
        struct spod *p = m[i].p;
        if (gp_ks_engine_add(s, p) != GP_OK)
            gp_ks_release(s, p);
        else if (m[i].decided)
            gp_ks_put_back(s, p, m[i].was_node, &m[i].was_pick);
        if (m[i].written && p->st != SP_ASSUMED)
            s->dirty = true;
    }
}

/* m[0..k) (gid: their engine gang, all its pods in the engine pending or
 * decided; 0: one pod alone) placed again without the nodes b[0..nb), in
 * the engine only, every decided pod elsewhere: true, the new places in
 * m[i].node and pick, written to --record's log as the assignments made;
 * false with everything as it was (restore). */
static bool place(struct gp_kube_sched *s, struct mv *m, size_t k, uint32_t gid,
                  struct snode *const *b, size_t nb)
{
    /* first whether each decided pod passes some other node's filters,
     * before anything changes (as sched_cycle.c waiting_moves) */
    for (size_t i = 0; i < k; i++) {
        struct spod *p = m[i].p;
        const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
        bool elsewhere = false;
        for (size_t n = 0; ep && m[i].decided && n < gp_engine_node_count(s->e) && !elsewhere;
             n++) {
            const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)n);
            elsewhere = nd && nd->state == GP_NODE_READY && !among(s, (uint32_t)n, b, nb) &&
                        gp_engine_filter(s->e, nd, ep) == GP_FILTER_COUNT;
        }
        if (!ep || (m[i].decided && !elsewhere))
            return false;
        /* its volumes as they are now (a claim provisioned or bound for
         * the old node since it was read: its volume reaches only some) */
        const struct gp_pod_constraints *now;
        m[i].excl = gp_ks_volumes_now(s, p, &s->spent, &now) ? without(s, now, b, nb) : NULL;
        if (!m[i].excl)
            return false;
        m[i].was_node = p->node;
        m[i].was_pick = ep->pick;
        m[i].placed = false;
    }
    bool ok = true;
    for (size_t i = 0; i < k; i++)
        gp_ks_engine_drop(s, m[i].p);
    for (size_t i = 0; i < k && ok; i++) {
        struct spod *p = m[i].p;
        const struct gp_pod_constraints *own = p->spec.constraints;
        p->spec.constraints = m[i].excl; /* the engine's copy only: the pod's own stay */
        ok = gp_ks_engine_add(s, p) == GP_OK;
        p->spec.constraints = own;
    }
    struct gp_decision one, *many = NULL, *dec = &one;
    size_t nd = 0;
    if (ok && gid) { /* the gang whole, all or none (gang.c), outside the queue order */
        dec = many = malloc(k * sizeof *many);
        nd = many ? gp_engine_schedule_group(s->e, gid, many, k) : 0;
    } else if (ok && gp_engine_schedule_pod(s->e, m[0].p->eng, &one) == GP_OK) {
        nd = 1;
    }
    for (size_t j = 0; j < nd; j++) {
        if (dec[j].kind != GP_DECISION_BIND)
            continue;
        gp_evlog_pod_assign(s->rec, dec[j].pod, dec[j].node, &dec[j].pick, GP_OK);
        for (size_t i = 0; i < k; i++)
            if (m[i].p->eng == dec[j].pod) {
                m[i].placed = true;
                m[i].node = dec[j].node;
                m[i].pick = dec[j].pick;
            }
    }
    free(many);
    for (size_t i = 0; i < k; i++)
        ok = ok && (m[i].placed || !m[i].decided);
    if (!ok) {
        restore(s, m, k);
        return false;
    }
    /* a pending member the gang did not need: pending again as it was */
    for (size_t i = 0; i < k; i++)
        if (!m[i].placed) {
            gp_ks_engine_drop(s, m[i].p);
            if (gp_ks_engine_add(s, m[i].p) != GP_OK)
                gp_ks_release(s, m[i].p);
        }
    return true;
}

/* p's written decision taken back (its annotations removed from the
 * version seen unbound; on a 409 read again, as said above). */
static enum take take_back(struct gp_kube_sched *s, struct mv *m)
{
    struct spod *p = m->p;
    const char *ns = p->info.ns, *name = p->info.name;
    const char *rv = p->resume_rv[0] ? p->resume_rv : p->info.rv;
    if (!gp_ks_leading(s))
        return T_UNKNOWN;
    /* no version seen (a bad object): read first, as after a 409 - a merge
     * patch with "" has no precondition (the registry's Update takes
     * version 0 as unconditional: AllowUnconditionalUpdate) */
    long st =
        rv && rv[0] ? gp_ks_clear_annotations_rv(s->c, ns, name, rv, m->rv, sizeof m->rv) : 409;
    if (st == 200 && m->rv[0])
        return T_CLEARED;
    if (st == 404)
        return T_GONE;
    if (st != 409)
        return T_UNKNOWN;
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    json_t *now;
    long gs = gp_ks_send(s->c, "GET", path, NULL, NULL, &now);
    const char *uid = gp_kube_meta(now, "uid");
    enum take t = T_UNKNOWN;
    if (gs == 404 || (gs == 200 && uid && strcmp(uid, p->info.uid) != 0)) {
        t = T_GONE;
    } else if (gs == 200 && now) {
        const char *nn =
            json_string_value(json_object_get(json_object_get(now, "spec"), "nodeName"));
        const char *rv_read = gp_kube_meta(now, "resourceVersion");
        if (nn && nn[0]) {
            m->got = json_incref(now);
            t = T_BOUND;
        } else if (rv_read && rv_read[0] && gp_ks_leading(s)) {
            st = gp_ks_clear_annotations_rv(s->c, ns, name, rv_read, m->rv, sizeof m->rv);
            t = st == 200 && m->rv[0] ? T_CLEARED : st == 404 ? T_GONE : T_UNKNOWN;
        }
    }
    json_decref(now);
    return t;
}

/* The Events of a move made: one for each pod placed again. */
static void moved_events(struct gp_kube_sched *s, const struct mv *m, size_t k, const char *why,
                         const struct snode *on)
{
    for (size_t i = 0; i < k; i++) {
        const struct spod *p = m[i].p;
        char note[1800];
        if (!m[i].placed)
            continue;
        if (p->info.group)
            snprintf(note, sizeof note,
                     "%s; the decision of its gang %s/%s for %s was taken back, no member being "
                     "bound (each member's annotations removed), and the gang was placed again "
                     "without %s",
                     why, p->info.ns, p->info.group, on->name, on->name);
        else if (!m[i].written)
            snprintf(note, sizeof note,
                     "%s; its decision for %s was taken back (nothing had been written of it) "
                     "and it was placed again without %s",
                     why, on->name, on->name);
        else
            snprintf(note, sizeof note,
                     "%s; its decision for %s was taken back (its annotations removed: it was "
                     "not bound) and it was placed again without %s",
                     why, on->name, on->name);
        gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Normal",
                    "AllocatingSlotBlocked", "Scheduling", note);
    }
}

/* The move m[0..k) could not be finished: m[failed]'s take-back was not
 * answered 200. The engine as it was; those taken back before it (none
 * for a pod alone) kept on their nodes when m[failed] turned out bound
 * (its gang goes forward: annotated again and bound there, bind.c
 * BO_KEPT's way), else taken back for good (decided anew) with the
 * scheduler rebuilt from the API. */
static void unfinished(struct gp_kube_sched *s, struct mv *m, size_t k, size_t failed)
{
    restore(s, m, k);
    struct mv *f = &m[failed];
    for (size_t i = 0; i < failed; i++) {
        struct spod *q = m[i].p;
        if (!m[i].written || q->st != SP_ASSUMED)
            continue;
        q->resume = false; /* nothing written of it now */
        gp_kube_str_copy(q->resume_rv, sizeof q->resume_rv, m[i].rv);
        if (f->took == T_BOUND) {
            q->rebind_at = s->now_s; /* annotated again, then bound, as a kept member */
            s->maybe_resume = s->maybe_recheck = true;
        } else {
            gp_ks_release(s, q);
            if (q->info.group)
                gp_ks_gang_event(s, q,
                                 "its decision is taken back: a member of its gang "
                                 "could not be taken back with it");
            s->dirty = true;
        }
    }
    struct spod *p = f->p;
    switch (f->took) {
    case T_BOUND: /* the informer's view brought up to date: bound where it is */
        gp_kube_sched_pod_change(GP_KUBE_MODIFIED, f->got, NULL, s);
        break;
    case T_GONE: /* its DELETED event follows */
        gp_ks_engine_drop(s, p);
        p->st = SP_DONE;
        gp_ks_audit_pod(s, p, false);
        gp_ks_slot_update(s, p, false);
        break;
    case T_UNKNOWN:
        s->dirty = true; /* its annotations may remain: the state comes from the API again */
        break;
    case T_CLEARED:
        break;
    }
}

/* m[0..k), placed again in the engine (place), made so: what was written
 * of each taken back in turn, stopping at the first not answered 200
 * (unfinished); then the new decisions handed to bind.c, a gang's
 * members as one job (all annotated, then bound). */
static enum gp_ks_move moved(struct gp_kube_sched *s, struct mv *m, size_t k, const char *why,
                             const struct snode *on, size_t *bound)
{
    size_t failed = k;
    for (size_t i = 0; i < k && failed == k; i++) {
        m[i].took = m[i].written ? take_back(s, &m[i]) : T_CLEARED;
        if (m[i].took != T_CLEARED)
            failed = i;
    }
    if (failed < k) {
        unfinished(s, m, k, failed);
        for (size_t i = 0; i < k; i++)
            json_decref(m[i].got);
        return GP_KS_MOVE_RACED;
    }
    struct spod *one, **ps = k == 1 ? &one : malloc(k * sizeof *ps);
    size_t np = 0;
    for (size_t i = 0; i < k; i++) {
        struct spod *q = m[i].p;
        if (!m[i].placed)
            continue;
        q->node = m[i].node;
        q->pick = m[i].pick;
        q->st = SP_ASSUMED; /* (a gang's member pending till now, too) */
        if (m[i].written) { /* annotated anew from the version its take-back made */
            q->resume = false;
            gp_kube_str_copy(q->resume_rv, sizeof q->resume_rv, m[i].rv);
        }
        if (ps)
            ps[np++] = q;
        else
            gp_ks_release(s, q); /* (out of memory) decided anew after a back-off */
    }
    moved_events(s, m, k, why, on);
    for (size_t i = 0; i < np; i++) {
        gp_ks_audit_pod(s, ps[i], false);
        gp_ks_slot_update(s, ps[i], false); /* out of the blocked node's queue */
    }
    gp_ks_bind_dispatch(s, ps, np, bound);
    if (ps != &one)
        free(ps);
    return GP_KS_MOVE_DONE;
}

/* Whether decided pod q's decision can be taken back: nothing of it may
 * be bound (a Binding in flight, answered 201 or maybe through, a member
 * kept after its siblings were bound). */
static bool reversible(const struct spod *q)
{
    return q->st == SP_ASSUMED && !q->job && q->recheck_at == 0 && q->rebind_at == 0 &&
           !q->bound_to && !q->binding && !q->info.node_name && q->eng != SP_NONE;
}

/* The pods of p's gang into *m (malloc'd, *k of them): its decided
 * members and those pending in the engine; false (FIXED) when a member is
 * bound, or being or maybe bound, or otherwise past taking back. */
static bool gang_of(struct gp_kube_sched *s, const struct spod *p, struct mv **m, size_t *k)
{
    const struct gp_kube_pod_info *in = &p->info;
    uint32_t gid = p->spec.group;
    size_t n = 0;
    *m = NULL;
    *k = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < s->npods; i++) {
            struct spod *q = s->pods[i];
            const struct gp_kube_pod_info *qi = &q->info;
            if (!qi->group || strcmp(qi->group, in->group) != 0 || strcmp(qi->ns, in->ns) != 0)
                continue;
            /* a member bound (ended since, too: its gang went forward) */
            bool pending = q->st == SP_WAITING && q->eng != SP_NONE && !qi->node_name;
            bool ignored = !qi->node_name && !q->bound_to && !q->binding && !q->job &&
                           (q->st == SP_BACKOFF || q->st == SP_IGNORED || q->st == SP_DONE ||
                            (q->st == SP_WAITING && q->eng == SP_NONE));
            if (ignored)
                continue;
            if (!pending && !reversible(q))
                return false;
            if (q->spec.group != gid)
                return false; /* (its PodGroup made again meanwhile) */
            if (pass == 1)
                (*m)[n++] =
                    (struct mv){.p = q, .decided = !pending, .written = !pending && q->resume};
            else
                n++;
        }
        if (pass == 0) {
            *m = calloc(n ? n : 1, sizeof **m);
            if (!*m)
                return false;
            n = 0;
        }
    }
    *k = n;
    return true;
}

enum gp_ks_move gp_ks_unblock_move(struct gp_kube_sched *s, struct spod *p, struct snode *const *b,
                                   size_t nb, const struct snode *on, const char *why,
                                   size_t *bound)
{
    if (!reversible(p))
        return GP_KS_MOVE_FIXED;
    uint32_t gid = p->spec.group;
    struct mv one[1] = {{.p = p, .decided = true, .written = p->resume}}, *m = one;
    size_t k = 1;
    if (gid && !gang_of(s, p, &m, &k)) {
        free(m);
        return GP_KS_MOVE_FIXED;
    }
    enum gp_ks_move r =
        place(s, m, k, gid, b, nb) ? moved(s, m, k, why, on, bound) : GP_KS_MOVE_NOWHERE;
    if (m != one)
        free(m);
    return r;
}
