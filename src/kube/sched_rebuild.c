/* sched_rebuild.c - the engine's state brought to what the API shows: a
 * pod the API shows bound placed in the engine on its node, at the GPUs
 * its gpuplane.io annotations name (gp_ks_engine_place, also used as pod
 * changes come, sched.c), and the whole engine rebuilt from the records
 * (gp_ks_rebuild: a restart, a new leader, a node that changed): bound
 * pods first (those bound, or maybe bound, that the API does not show yet
 * too: struct unseen), then half-finished decisions (annotated, not
 * bound) resumed or taken back, then every other pending pod of ours
 * queued again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"

/* The GPUs (or MIG instances) a pod's annotations name on node n, into
 * *pick: the gpuplane.io/mig instances on a MIG node of the engine, else
 * the gpuplane.io/gpus indexes; NULL when they name none there. */
const struct gp_pick *gp_ks_annotated_pick(struct gp_kube_sched *s, const struct spod *p,
                                           const struct snode *n, struct gp_pick *pick)
{
    const struct gp_kube_pod_info *in = &p->info;
    if (!p->ours || !in->ann_node || strcmp(in->ann_node, n->name) != 0)
        return NULL;
    uint32_t part = gp_ks_part(n, &p->spec);
    const struct gp_node *e = part != SP_NONE ? gp_engine_node(s->e, part) : NULL;
    if (in->ann_mig && e && e->mig_model >= 0)
        return gp_kube_mig_parse(in->ann_mig, &gp_mig_models[e->mig_model], pick) ? pick : NULL;
    if (!in->has_pick)
        return NULL;
    *pick = in->pick;
    return pick;
}

/* The GPU indexes of node n (bits) that pods of ours other than p name
 * there (gpuplane.io/gpus): bound there, or being bound there (ASSUMED),
 * and in a rebuild every such annotation (s->claims). */
static uint32_t claimed(struct gp_kube_sched *s, const struct spod *p, const struct snode *n)
{
    uint32_t mask = 0;
    json_t *at = s->claims ? json_object_get(s->node_index, n->name) : NULL;
    if (at)
        mask = s->claims[json_integer_value(at)];
    for (size_t i = 0; i < n->nbook; i++) {
        const struct spod *q = n->book[i];
        const struct gp_kube_pod_info *in = &q->info;
        if (q == p || !q->ours || !in->has_pick || in->ended || !in->ann_node ||
            strcmp(in->ann_node, n->name) != 0)
            continue;
        for (uint32_t k = 0; k < in->pick.ngpus; k++)
            mask |= 1u << (in->pick.gpu[k] % GP_MAX_GPUS_PER_NODE);
    }
    return mask;
}

/* A pod naming no GPUs on n (another scheduler's: the device plugin
 * chose) into the engine at GPUs no pod of ours names there when the
 * node has such GPUs free: the engine must never book one GPU for two
 * pods, and a named pod's index is the one its container has (gpuplane's
 * node agent reads the annotation). Whole GPUs and shares on a node of
 * one part (not split, not MIG instances); else, or when only named GPUs
 * are free, the engine's choice. */
static enum gp_err place_unnamed(struct gp_kube_sched *s, struct spod *p, const struct snode *n,
                                 uint32_t *part)
{
    uint32_t avoid = claimed(s, p, n);
    const struct gp_node *e = n->eng != SP_NONE ? gp_engine_node(s->e, n->eng) : NULL;
    const struct gp_pod_spec *sp = &p->spec;
    if (avoid && e && !n->info.split && e->mig_model < 0 && !sp->mig_profile && sp->gpu_count > 0) {
        struct gp_pick pick;
        memset(&pick, 0, sizeof pick);
        pick.mig_profile = -1;
        bool whole = sp->gpu_milli >= GP_GPU_MILLI;
        for (uint32_t g = 0; g < e->spec.gpu_count && g < GP_MAX_GPUS_PER_NODE; g++) {
            if (avoid & (1u << g))
                continue;
            if (whole) { /* the free unnamed GPUs, lowest first */
                if (e->gpu[g].pods == 0 && e->gpu[g].milli_free >= GP_GPU_MILLI &&
                    pick.ngpus < sp->gpu_count)
                    pick.gpu[pick.ngpus++] = (uint8_t)g;
                continue;
            }
            pick.ngpus = 1; /* a share: the first unnamed GPU that takes it */
            pick.gpu[0] = (uint8_t)g;
            if (gp_ks_place(s, p, n, &pick, false, part) == GP_OK)
                return GP_OK;
        }
        if (whole && pick.ngpus == sp->gpu_count &&
            gp_ks_place(s, p, n, &pick, false, part) == GP_OK)
            return GP_OK;
    }
    return gp_ks_place(s, p, n, NULL, true, part); /* sched_mig.c; logged there */
}

/* Named GPUs taken in the engine by pods that name none (booked there
 * before p came: a foreign pod bound while p's decision was written, a
 * rebuild): those move to other GPUs, p gets the ones it names. True when
 * p was placed so. */
static bool place_named_over(struct gp_kube_sched *s, struct spod *p, struct snode *n,
                             const struct gp_pick *pick, uint32_t *part)
{
    uint32_t want = 0;
    for (uint32_t k = 0; k < pick->ngpus; k++)
        want |= 1u << (pick->gpu[k] % GP_MAX_GPUS_PER_NODE);
    struct spod *moved[GP_MAX_GPUS_PER_NODE];
    size_t nmoved = 0;
    for (size_t i = 0; i < n->nbook && nmoved < GP_MAX_GPUS_PER_NODE; i++) {
        struct spod *q = n->book[i];
        struct gp_pick named, at;
        if (q == p || q->eng == SP_NONE || q->st != SP_BOUND ||
            gp_ks_annotated_pick(s, q, n, &named))
            continue;
        const struct gp_node *e = gp_engine_node(s->e, q->node);
        if (!e || e->mig_model >= 0) /* (MIG instances: gpuplane.io/mig's) */
            continue;
        gp_ks_pick_to_node(s, q->node, &q->pick, &at);
        uint32_t has = 0;
        for (uint32_t k = 0; k < at.ngpus; k++)
            has |= 1u << (at.gpu[k] % GP_MAX_GPUS_PER_NODE);
        if (has & want)
            moved[nmoved++] = q;
    }
    if (nmoved == 0)
        return false;
    for (size_t i = 0; i < nmoved; i++)
        gp_ks_engine_drop(s, moved[i]);
    /* (fails when a named pod holds them too: the audit says) */
    bool ok = gp_ks_place(s, p, n, pick, false, part) == GP_OK;
    for (size_t i = 0; i < nmoved; i++) /* elsewhere, or uncounted (the audit says) */
        gp_ks_engine_place(s, moved[i], n->name);
    return ok;
}

/* A pod the API shows on node `name`, into the engine there: at the GPUs
 * its annotations name when they are gpuplane's for that node (a pod
 * naming none moved off them, place_named_over), else wherever the GPUs
 * are free but at GPUs named by pods of ours (place_unnamed). */
void gp_ks_engine_place(struct gp_kube_sched *s, struct spod *p, const char *name)
{
    struct snode *n = gp_ks_node_get(s, name, true);
    if (!p->readable || !n || n->eng == SP_NONE) {
        /* on a node not known (yet, or any more): counted once it comes,
         * by the rebuild its arrival makes (the audit books the pod on the
         * node's record, gp_ks_node_change sees nbook > 0); marking the
         * engine dirty here rebuilt it at every cycle until then */
        p->st = SP_UNCOUNTED;
        return;
    }
    if (gp_ks_engine_add_any(s, p, true) != GP_OK) {
        p->st = SP_UNCOUNTED;
        return;
    }
    struct gp_pick named;
    const struct gp_pick *pick = gp_ks_annotated_pick(s, p, n, &named);
    uint32_t part; /* n->eng unless split */
    enum gp_err err;
    if (!pick)
        err = place_unnamed(s, p, n, &part);
    else if ((err = gp_ks_place(s, p, n, pick, false, &part)) != GP_OK && p->eng != SP_NONE)
        err = place_named_over(s, p, n, pick, &part) ? GP_OK
                                                     : gp_ks_place(s, p, n, pick, true, &part);
    if (err != GP_OK || p->eng == SP_NONE) {
        gp_ks_engine_drop(s, p);
        p->st = SP_UNCOUNTED; /* the audit says why */
        return;
    }
    const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
    p->node = part;
    p->pick = ep->pick;
    p->st = SP_BOUND;
}

/* --- rebuild ----------------------------------------------------------- */

/* Whether p's annotations are a decision gpuplane wrote and has not
 * bound yet: the node, the GPUs and the phase "allocating", the keys its
 * one annotation patch writes together (bind.c annotate_text; DESIGN.md
 * section 7, docs/kube.md "Annotations"), the node agent's "allocated"
 * coming only after the Binding; for a pod asking no GPU, the node, no
 * GPU and no phase, as that patch writes them. A gpuplane.io/node set by
 * a user alone, or the annotations of a running pod copied into a new one
 * (phase "allocated"), is no decision: the pod is decided anew. */
static bool decision_written(const struct spod *p)
{
    const struct gp_kube_pod_info *in = &p->info;
    if (!in->ann_node || !in->has_pick)
        return false;
    if (!gp_ks_asks_gpu(p))
        return !in->ann_phase && in->pick.ngpus == 0;
    return in->ann_phase && strcmp(in->ann_phase, "allocating") == 0;
}

/* Whether p (in the engine, pending) passes every filter of a fresh
 * decision on n's engine node, the engine's own (gp_engine_filter: node
 * state, nodeSelector and affinity, taints, cpu, memory, GPUs, spread,
 * inter-pod affinity, quotas), as kube-scheduler runs a pod's whole
 * Filter phase for every node it may go to
 * (pkg/scheduler/schedule_one.go, findNodesThatPassFilters); else the
 * reason, kube-scheduler's words, into why. The GPUs are left to
 * gp_ks_place, which books the named ones or refuses. */
static bool still_fits(struct gp_kube_sched *s, const struct spod *p, const struct snode *n,
                       char *why, size_t size)
{
    const struct gp_node *e = gp_engine_node(s->e, gp_ks_part(n, &p->spec));
    const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
    enum gp_filter f = e && ep ? gp_engine_filter(s->e, e, ep) : GP_FILTER_NODE_STATE;
    /* the GPUs: whether the ones it names are free is gp_ks_place's (at
     * exactly those, by placement's rules), not a count's */
    if (f == GP_FILTER_COUNT || f == GP_FILTER_GPU_COUNT || f == GP_FILTER_GPU_SHARE ||
        f == GP_FILTER_GPU_MEMORY || f == GP_FILTER_GPU_REPLICA || f == GP_FILTER_MIG)
        return true;
    snprintf(why, size, "no longer fits it: %s", gp_filter_text(f));
    return false;
}

/* A pod whose Binding answered 201, or may have gone through (bind.c
 * BO_UNSURE: unsure), that the API does not show bound yet (p->bound_to:
 * the informer has not brought it), and where the engine had it: the node
 * and its GPUs in the node's indexes (gp_ks_pick_to_node), read before the
 * engine is made anew. The new engine keeps it there, as kube-scheduler's
 * cache keeps a pod assumed until its informer brings it bound
 * (pkg/scheduler/internal/cache/cache.go AssumePod, FinishBinding; AddPod
 * confirms it), instead of deciding it anew with its GPUs taken as free:
 * they are another pod's then. */
struct unseen {
    struct spod *p;
    struct snode *n;
    struct gp_pick pick;
    bool unsure;
};

static bool is_unseen(const struct gp_kube_sched *s, const struct spod *p)
{
    return s->e && p->bound_to && !p->info.node_name && p->readable && p->eng != SP_NONE &&
           p->node != SP_NONE && (p->st == SP_BOUND || (p->st == SP_ASSUMED && p->recheck_at > 0));
}

/* The pods is_unseen says, from the old engine (*out malloc'd, NULL for
 * none); false when out of memory. */
static bool unseen_read(struct gp_kube_sched *s, struct unseen **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t k = 0;
    for (size_t i = 0; i < s->npods; i++)
        k += is_unseen(s, s->pods[i]);
    if (k == 0)
        return true;
    struct unseen *u = malloc(k * sizeof *u);
    if (!u)
        return false;
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        if (!is_unseen(s, p))
            continue;
        u[*n] = (struct unseen){p, p->bound_to, {0}, p->st == SP_ASSUMED};
        gp_ks_pick_to_node(s, p->node, &p->pick, &u[*n].pick);
        (*n)++;
    }
    *out = u;
    return true;
}

/* u into the new engine where it was: bound (SP_BOUND), or, unsure, its
 * decision kept (ASSUMED) and read back at once (bind.c settle). Where
 * that node is gone or its GPUs are taken, it is left out: decided anew
 * (step 3), the informer bringing where it is. */
static void unseen_place(struct gp_kube_sched *s, const struct unseen *u)
{
    struct spod *p = u->p;
    uint32_t part;
    if (u->n->eng == SP_NONE ||
        (u->unsure ? gp_ks_engine_add(s, p) : gp_ks_engine_add_any(s, p, true)) != GP_OK)
        return;
    if (gp_ks_place(s, p, u->n, &u->pick, false, &part) != GP_OK || p->eng == SP_NONE) {
        gp_ks_engine_drop(s, p);
        return;
    }
    p->node = part;
    p->pick = gp_engine_pod(s->e, p->eng)->pick;
    if (u->unsure)
        p->recheck_at = s->now_s > 0 ? s->now_s : 1e-9;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(struct spod *const *)a)->key, (*(struct spod *const *)b)->key);
}

static enum gp_err rebuild(struct gp_kube_sched *s, const struct unseen *un, size_t nun,
                           struct gp_diag *d);

enum gp_err gp_ks_rebuild(struct gp_kube_sched *s, struct gp_diag *d)
{
    struct unseen *un; /* read before the engine goes */
    size_t nun;
    if (!unseen_read(s, &un, &nun))
        return gp_diag_set(d, GP_ENOMEM, "out of memory (the rebuild)");
    enum gp_err err = rebuild(s, un, nun, d);
    free(un);
    return err;
}

static enum gp_err rebuild(struct gp_kube_sched *s, const struct unseen *un, size_t nun,
                           struct gp_diag *d)
{
    gp_engine_free(s->e);
    gp_arena_free(&s->spent); /* nothing borrows them now */
    s->spent_specs = 0;
    gp_idtab_free(&s->by_eng);
    gp_idtab_init(&s->by_eng, sizeof(struct spod *), 6);
    s->e = gp_engine_new(s->policy, s->o.seed);
    if (!s->e)
        return gp_diag_set(d, GP_ENOMEM, "out of memory (the engine)");
    gp_evlog_reset(s->rec, s->policy->name, s->o.seed);
    /* kube-scheduler preempts by priority (DefaultPreemption): the default
     * queue's pods may evict lower-priority ones (the engine's default
     * queue does not unless told) */
    struct gp_queue_spec q = {.name = "default"};
    uint32_t qid;
    enum gp_err qerr = gp_engine_queue_set(s->e, &q, &qid);
    gp_evlog_queue_set(s->rec, &q, qerr, qid);
    if (qerr != GP_OK || !gp_ks_namespaces_apply(s)) /* (namespaces.c) */
        return gp_diag_set(d, GP_ENOMEM, "out of memory (the engine)");
    gp_ks_pdb_engine(s); /* the PodDisruptionBudgets, before the pods that count against them */
    s->dirty = false;
    s->st.rebuilds++;
    gp_ks_slot_reset(s); /* recomputed below */
    for (size_t i = 0; i < s->ngroups; i++)
        s->groups[i].eng = 0;
    s->nodes_gone = true; /* (nothing holds a slot or is being bound now) */
    gp_ks_records_sweep(s);
    for (size_t i = 0; i < s->nnodes; i++) {
        struct snode *n = s->nodes[i];
        n->eng = n->eng_mig = SP_NONE;
        if (n->obj && gp_ks_node_add(s, n) != GP_OK)
            return gp_diag_set(d, GP_ENOMEM, "out of memory (node %s)", n->name);
        if (n->unread) /* a pod bound there that gpuplane cannot read (pod_unreadable) */
            gp_ks_node_drain(s, n);
    }
    for (size_t i = 0; i < s->npods; i++) {
        s->pods[i]->eng = SP_NONE;
        s->pods[i]->node = SP_NONE;
        s->pods[i]->prov_at = 0; /* a wait for claims (volumes_bind.c): decided anew */
        s->pods[i]->prov_rv = 0;
    }
    if (s->npods) /* (qsort of no array: UBSan's null argument) */
        qsort(s->pods, s->npods, sizeof *s->pods, by_key);
    for (size_t i = 0; i < s->npods; i++)
        json_object_set_new(s->pod_index, s->pods[i]->key, json_integer((json_int_t)i));
    /* 1. what the API shows on nodes, where it is (a victim still
     * stopping too: booked again; step 2b takes a nominated preemptor's
     * victims out again): first the
     * pods that name their GPUs, then those that name none, at GPUs no
     * pod of ours names (bound or being bound, step 2), when free ones
     * are left - else a pod naming none, sorted first, took the GPU a
     * gpuplane pod runs on, and was the one to give it back */
    s->nstopping = 0;
    s->claims = s->nnodes ? calloc(s->nnodes, sizeof *s->claims) : NULL;
    if (s->nnodes && !s->claims)
        return gp_diag_set(d, GP_ENOMEM, "out of memory (the rebuild)");
    for (size_t i = 0; i < s->npods; i++) {
        const struct gp_kube_pod_info *in = &s->pods[i]->info;
        json_t *at = in->ann_node ? json_object_get(s->node_index, in->ann_node) : NULL;
        if (!s->pods[i]->ours || !in->has_pick || in->ended || !at ||
            (in->node_name ? strcmp(in->node_name, in->ann_node) != 0
                           : !decision_written(s->pods[i])))
            continue;
        for (uint32_t k = 0; k < in->pick.ngpus; k++)
            s->claims[json_integer_value(at)] |= 1u << (in->pick.gpu[k] % GP_MAX_GPUS_PER_NODE);
    }
    for (size_t i = 0; i < nun; i++) { /* bound (or maybe) where the API does not show yet */
        json_t *at = json_object_get(s->node_index, un[i].n->name);
        for (uint32_t k = 0; at && k < un[i].pick.ngpus; k++)
            s->claims[json_integer_value(at)] |= 1u << (un[i].pick.gpu[k] % GP_MAX_GPUS_PER_NODE);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; pass == 1 && i < nun; i++) /* they name their GPUs: before pass 1's */
            unseen_place(s, &un[i]);
        for (size_t i = 0; i < s->npods; i++) {
            struct spod *p = s->pods[i];
            const struct gp_kube_pod_info *in = &p->info;
            bool named = p->ours && in->ann_node && (in->has_pick || in->ann_mig) &&
                         in->node_name && strcmp(in->ann_node, in->node_name) == 0;
            if (named != (pass == 0))
                continue;
            p->resume = false;
            p->rebind_at = 0; /* a kept gang member: a half-finished decision (step 2) */
            p->victims = 0;
            p->preemptor = NULL;
            if (in->node_name && !in->ended)
                gp_ks_engine_place(s, p, in->node_name);
            else if (in->ended || in->terminating)
                p->st = SP_DONE;
        }
    }
    free(s->claims);
    s->claims = NULL;
    /* 2. half-finished decisions: annotated, not bound - resumed where the
     * pod still fits at the GPUs it names, else taken back */
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        const struct gp_kube_pod_info *in = &p->info;
        if (!p->ours || !p->readable || in->node_name || p->st == SP_DONE || p->eng != SP_NONE ||
            !decision_written(p))
            continue; /* (in the engine already: bound where the API does not show yet) */
        struct snode *n = gp_ks_node_get(s, in->ann_node, false);
        struct gp_pick named;
        const struct gp_pick *pick = n ? gp_ks_annotated_pick(s, p, n, &named) : NULL;
        const char *lost = !n || n->eng == SP_NONE ? "is gone"
                           : !pick                 ? "does not have the GPUs it names"
                           : !n->info.ready        ? "takes no new pods (not ready)"
                           : n->info.cordoned && !gp_ks_tolerates_cordon(&p->spec)
                               ? "takes no new pods (cordoned)"
                               : NULL;
        uint32_t part;
        char unfit[200];
        if (!lost && gp_ks_engine_add(s, p) != GP_OK)
            continue;
        if (!lost && !still_fits(s, p, n, unfit, sizeof unfit)) {
            gp_ks_engine_drop(s, p);
            lost = unfit;
        }
        if (!lost && gp_ks_place(s, p, n, pick, false, &part) != GP_OK) { /* sched_mig.c */
            gp_ks_engine_drop(s, p);
            lost = "has its GPUs taken";
        }
        if (lost) { /* decided anew (step 3); a gang's member says where its gang stands */
            char why[400];
            snprintf(why, sizeof why, "its decision is taken back: node %s %s", in->ann_node, lost);
            if (in->group)
                gp_ks_gang_event(s, p, why);
            continue;
        }
        p->st = SP_ASSUMED;
        p->node = part;
        p->pick = gp_engine_pod(s->e, p->eng)->pick;
        p->resume = true;
    }
    gp_ks_nominated_claim(s);                  /* 2b. a preemptor's claim kept (sched_cycle.c) */
    s->maybe_backoff = s->maybe_resume = true; /* the next cycle looks */
    s->maybe_recheck = s->maybe_recheck || nun > 0;
    /* 3. every other pending pod of ours, tried again */
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        if (p->eng != SP_NONE || p->info.node_name || p->st == SP_DONE)
            continue;
        if (!p->ours || !p->readable) {
            p->st = SP_IGNORED;
        } else if (p->st != SP_BACKOFF) {
            enum gp_err err = gp_ks_engine_add(s, p);
            if (err == GP_ESTATE) { /* its PodGroup is not known yet */
                p->st = SP_IGNORED;
                continue;
            }
            if (err != GP_OK)
                return gp_diag_set(d, GP_ENOMEM, "out of memory (pod %s)", p->key);
            p->st = SP_WAITING;
        }
    }
    for (size_t i = 0; i < s->npods; i++) {
        gp_ks_audit_pod(s, s->pods[i], false);
        gp_ks_slot_update(s, s->pods[i], false);
    }
    return GP_OK;
}
