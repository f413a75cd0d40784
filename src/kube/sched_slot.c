/* sched_slot.c - at most one pod allocating per node (DESIGN.md section 7;
 * docs/kube.md, "One pod allocating per node"; the agent's side is
 * node/protocol.c, docs/node.md "Which pod an Allocate serves"). The
 * kubelet's Allocate names devices, never the pod, so the node agent
 * takes the one pod of its node at gpuplane.io/phase=allocating and
 * refuses when it finds two. A node has one slot: a pod holds it
 *  - from the dispatch of the bind job that binds it until its result,
 *  - from a Binding answered 201 (or one that may have gone through, the
 *    pod unreadable: bind.c BO_UNSURE) until the API shows the pod bound,
 *  - while the API shows it bound there with the phase "allocating" for
 *    that node, not started, not ended, not being deleted (the agent's own
 *    rule), whoever bound it: after a restart or a leader change, and
 *    another replica's pods, are counted so;
 *  - while the API shows it (any pod asking a GPU, whoever placed it,
 *    expired or not) bound there and not admitted by the kubelet yet
 *    (awaits_admission: the agent refuses ours beside such a pod);
 *  - while the API shows another scheduler's pod (another gpuplane
 *    replica) annotated allocating for that node and not bound yet: it is
 *    being bound.
 * A pod asking no GPU holds no slot and waits for none: no Allocate is
 * made for it (gp_ks_slot_node).
 * A pod of another scheduler stops counting --allocating-timeout after it
 * was first seen so (sched_alloc.c); ours is then written "expired".
 * A decision for a node whose slot is taken waits, ASSUMED (the engine's
 * assumption kept, so its GPUs stay booked) and not annotated, in the
 * node's queue, oldest first; when the slot frees the node is kicked and
 * the next cycle dispatches its first waiting pod (a slot held past
 * --allocating-timeout blocks its node: "blocked nodes" below). A waiting
 * pod that is deleted, changes or is taken back leaves the queue; a
 * rebuild forgets the queues (a decision not annotated is not durable:
 * decided again).
 *
 * Only a node whose agent says it serves the protocol has a slot (its
 * label GP_KUBE_LABEL_AGENT): on any other (NVIDIA's own device plugin, a
 * node pool the agent is not rolled onto yet) no one marks a pod
 * allocated, and a slot would let one pod in per --allocating-timeout;
 * there pods are bound as kube-scheduler binds them, side by side, the
 * kubelet's device manager choosing the devices. A node whose label comes
 * or goes is seen by gp_ks_slot_node_changed: the holdings counted again,
 * the pods waiting for a slot that no longer exists dispatched. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sched_internal.h"

bool gp_ks_obj_agent(const json_t *obj)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *v = json_string_value(json_object_get(labels, GP_KUBE_LABEL_AGENT));
    /* any version: one this scheduler does not know is still an agent
     * that marks its pods (waiting is the safe side) */
    return v && v[0];
}

bool gp_ks_node_agent(const struct snode *n)
{
    return n && n->agent;
}

/* The scheduler's record of p's engine node, agent or not; NULL: none. */
static struct snode *engine_node(struct gp_kube_sched *s, const struct spod *p)
{
    if (!s->e || p->node == SP_NONE)
        return NULL;
    const struct gp_node *n = gp_engine_node(s->e, p->node);
    return n ? gp_ks_node_get(s, n->spec.name, false) : NULL;
}

struct snode *gp_ks_slot_node(struct gp_kube_sched *s, const struct spod *p)
{
    /* a pod asking no GPU gets no Allocate (the kubelet's device manager
     * calls the plugin only for a container that requests its resource:
     * pkg/kubelet/cm/devicemanager/manager.go, allocateContainerResources),
     * so no agent marks it allocated: it neither waits for a slot nor
     * holds one (the review's R16), and its decision is written without
     * gpuplane.io/phase (bind.c), so the agent does not count it either */
    struct snode *n = gp_ks_asks_gpu(p) ? engine_node(s, p) : NULL;
    return gp_ks_node_agent(n) ? n : NULL;
}

/* Whether bound pod p is one the node agent counts as the kubelet may be
 * admitting now (node/protocol.c look, the review's R3): it asks a GPU,
 * has no container status (the kubelet reports them from its first sync
 * after the admission), is not Running, ended or being deleted, and is
 * not marked allocated. The agent serves ours only while it is the one
 * such pod (another scheduler's, an expired or a misplaced decision of
 * ours beside it: refused, the pod Failed), so every one of them holds
 * the slot, whoever placed it, until the kubelet has admitted it. */
static bool awaits_admission(const struct spod *p)
{
    const struct gp_kube_pod_info *in = &p->info;
    const json_t *st = json_object_get(p->obj, "status");
    return !in->started && !(in->ann_phase && strcmp(in->ann_phase, "allocated") == 0) &&
           json_array_size(json_object_get(st, "containerStatuses")) == 0 &&
           json_array_size(json_object_get(st, "initContainerStatuses")) == 0;
}

/* The node whose slot p would hold now, agent or not, or NULL. */
static struct snode *holding_any(struct gp_kube_sched *s, const struct spod *p)
{
    const struct gp_kube_pod_info *in = &p->info;
    if (!p->obj || in->ended || in->terminating || !gp_ks_asks_gpu(p))
        return NULL;
    if (!in->node_name && p->binding)
        return p->binding;
    if (!in->node_name && p->bound_to)
        return p->bound_to;
    if (in->node_name) /* the agent's candidates: each holds its node's slot */
        return awaits_admission(p) ? gp_ks_node_get(s, in->node_name, true) : NULL;
    if (in->started || p->alloc_expired || !in->ann_phase ||
        strcmp(in->ann_phase, "allocating") != 0 || !in->ann_node)
        return NULL;
    /* bound: where its annotation says; not bound: another scheduler's
     * decision being written (ours not in flight is no decision now) */
    if (in->node_name ? strcmp(in->node_name, in->ann_node) != 0 : p->ours)
        return NULL;
    return gp_ks_node_get(s, in->ann_node, true);
}

/* The node whose slot p holds now, or NULL: only an agent's node has one. */
static struct snode *holding(struct gp_kube_sched *s, const struct spod *p)
{
    struct snode *n = holding_any(s, p);
    return gp_ks_node_agent(n) ? n : NULL;
}

static void kick(struct gp_kube_sched *s, struct snode *n)
{
    if (n->kicked || !n->wait_head)
        return;
    if (s->nkick == s->capkick) {
        size_t cap = s->capkick ? s->capkick * 2 : 64;
        struct snode **v = realloc(s->kick, cap * sizeof *v);
        if (!v)
            return; /* kicked again by its next change */
        s->kick = v;
        s->capkick = cap;
    }
    s->kick[s->nkick++] = n;
    n->kicked = true;
}

static void unwait(struct gp_kube_sched *s, struct spod *p)
{
    struct snode *n = p->wait_on;
    if (p->wait_prev)
        p->wait_prev->wait_next = p->wait_next;
    else
        n->wait_head = p->wait_next;
    if (!n->wait_head) { /* no pod waits for it now: out of s->wnodes */
        if (n->wprev)
            n->wprev->wnext = n->wnext;
        else
            s->wnodes = n->wnext;
        if (n->wnext)
            n->wnext->wprev = n->wprev;
        n->wnext = n->wprev = NULL;
    }
    if (p->wait_next)
        p->wait_next->wait_prev = p->wait_prev;
    else
        n->wait_tail = p->wait_prev;
    p->wait_prev = p->wait_next = NULL;
    p->wait_on = NULL;
    p->move_at = 0;
    p->block_said = false;
    s->slot_waiting--;
    if (n->slot_n == 0)
        kick(s, n);
}

/* p's holding brought up to date. */
static void hold(struct gp_kube_sched *s, struct spod *p, bool gone)
{
    struct snode *want = gone ? NULL : holding(s, p);
    if (want != p->slot) {
        if (p->slot && --p->slot->slot_n == 0)
            kick(s, p->slot);
        if (want && want->slot_n++ == 0)
            want->slot_since = s->now_s; /* held from now on, without a break */
        p->slot = want;
    }
}

void gp_ks_slot_update(struct gp_kube_sched *s, struct spod *p, bool gone)
{
    if (p->info.node_name || gone)
        p->bound_to = NULL; /* the API shows where it is: its view holds from now */
    hold(s, p, gone);
    /* (its engine node's, agent or not: a waiting pod whose node lost its
     * agent is dispatched from the queue by gp_ks_slot_node_changed, not
     * left out of it undispatched) */
    if (p->wait_on && (gone || p->st != SP_ASSUMED || p->job || p->eng == SP_NONE ||
                       engine_node(s, p) != p->wait_on))
        unwait(s, p);
}

void gp_ks_slot_node_changed(struct gp_kube_sched *s, struct snode *n)
{
    /* the pods holding or that would hold its slot, counted again: with
     * the label they hold it (a Binding in flight, a pod bound and not
     * marked yet: the agent's own rule counts them too), without it none
     * does */
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        if (p->slot == n || holding_any(s, p) == n)
            hold(s, p, false);
    }
    if (n->slot_n == 0)
        kick(s, n); /* its waiting pods: bound now if it has no slot any more */
}

bool gp_ks_slot_free(struct gp_kube_sched *s, const struct spod *p)
{
    struct snode *n = gp_ks_slot_node(s, p);
    if (!n)
        return true; /* no record of the node: nothing known to hold it */
    unsigned mine = p->slot == n ? 1 : 0;
    return n->slot_n == mine && (!n->wait_head || n->wait_head == p);
}

void gp_ks_slot_wait(struct gp_kube_sched *s, struct spod *p)
{
    struct snode *n = gp_ks_slot_node(s, p);
    if (!n) { /* no slot there (no agent): an annotated decision is resumed */
        if (p->wait_on)
            unwait(s, p);
        s->maybe_resume = s->maybe_resume || p->resume;
        return;
    }
    if (p->wait_on == n)
        return;
    if (p->wait_on)
        unwait(s, p);
    p->wait_on = n;
    p->wait_prev = n->wait_tail;
    p->wait_next = NULL;
    if (n->wait_tail) {
        n->wait_tail->wait_next = p;
    } else { /* its first waiting pod: into s->wnodes */
        n->wait_head = p;
        n->wprev = NULL;
        n->wnext = s->wnodes;
        if (s->wnodes)
            s->wnodes->wprev = n;
        s->wnodes = n;
    }
    n->wait_tail = p;
    s->slot_waiting++;
    if (n->slot_n == 0)
        kick(s, n); /* free already (a gang's member annotated meanwhile) */
}

void gp_ks_slot_run(struct gp_kube_sched *s, size_t *bound)
{
    while (s->nkick > 0) {
        struct snode *n = s->kick[--s->nkick];
        n->kicked = false;
        /* the dispatch takes the pod out of the queue (its job set); a
         * bind done at once and failed frees the slot for the next one */
        while (n->wait_head && gp_ks_slot_free(s, n->wait_head)) {
            struct spod *p = n->wait_head;
            gp_ks_bind_dispatch(s, &p, 1, bound);
            if (p->wait_on == n)
                break; /* not dispatched after all: left waiting */
        }
    }
}

void gp_ks_slot_reset(struct gp_kube_sched *s)
{
    for (size_t i = 0; i < s->nnodes; i++) {
        struct snode *n = s->nodes[i];
        n->slot_n = 0;
        n->wait_head = n->wait_tail = NULL;
        n->wnext = n->wprev = NULL;
        n->kicked = false;
        n->slot_since = 0;
    }
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        p->slot = p->wait_on = NULL;
        p->wait_prev = p->wait_next = NULL;
        p->move_at = 0;
        p->block_said = false;
        p->binding = NULL; /* no bind is in flight at a rebuild */
        p->recheck_at = 0;
        p->resume_rv[0] = '\0';
    }
    s->nkick = 0;
    s->slot_waiting = 0;
    s->wnodes = NULL;
    s->maybe_recheck = false;
}

/* ---- blocked nodes ------------------------------------------------------
 * A slot held without a break for --allocating-timeout is blocked: a pod
 * bound there that the kubelet never admits (another scheduler's, or an
 * expired decision of ours) holds it for as long as it stays so, and the
 * agent would refuse ours beside it. A decision waiting for a blocked
 * node is taken back and placed again with the blocked nodes left out (a
 * required node term metadata.name NotIn each), when some other node
 * passes its filters and nothing of it is irreversible: it goes elsewhere,
 * the engine's policy choosing (sched_unblock.c). What was written of it
 * (a decision resumed after a restart, annotated and not bound) is taken
 * back once the new place is found, never before: its annotations removed
 * with the version seen unbound as the precondition, a 409 read again
 * (bound meanwhile, it stays bound). Otherwise it keeps its decision (its
 * GPUs booked on the blocked node, bound the moment the slot frees) and is
 * tried elsewhere again after a back-off. A gang moves whole, all its
 * members' decisions taken back and the gang placed again (all or none)
 * when no member is bound, being bound or maybe bound; one member bound
 * and the gang stays, as a pod bound does: their Event says so. A gang is
 * tried once a pass, by its first member due. */

static bool blocked(const struct gp_kube_sched *s, const struct snode *n)
{
    return s->o.allocating_timeout_s > 0 && n->slot_n > 0 &&
           s->now_s - n->slot_since >= s->o.allocating_timeout_s;
}

const struct spod *gp_ks_slot_holder(const struct gp_kube_sched *s, const struct snode *n,
                                     const struct spod * not )
{
    for (size_t i = 0; n && i < s->npods; i++)
        if (s->pods[i]->slot == n && s->pods[i] != not )
            return s->pods[i];
    return NULL;
}

/* Why n takes none of gpuplane's pods asking a GPU, for an Event. */
static void block_words(const struct gp_kube_sched *s, const struct snode *n, char *buf,
                        size_t size)
{
    const struct spod *h = gp_ks_slot_holder(s, n, NULL);
    char who[400];
    if (h)
        snprintf(who, sizeof who, "pod %s %s", h->key,
                 h->info.node_name ? "is bound there and the kubelet has not admitted it"
                                   : "is being bound there");
    else
        snprintf(who, sizeof who, "its allocating slot is held");
    snprintf(buf, size,
             "node %s has taken no pod of gpuplane's asking a GPU for %.0f s: %s (gpuplane's node "
             "agent cannot tell that pod's Allocate from the next one's and would refuse both)",
             n->name, s->now_s - n->slot_since, who);
}

void gp_ks_slot_unblock(struct gp_kube_sched *s, size_t *bound)
{
    if (!s->e || s->slot_waiting == 0 || s->o.allocating_timeout_s <= 0)
        return;
    bool due = false; /* a waiting pod of a blocked node due to move */
    for (const struct snode *n = s->wnodes; n && !due; n = n->wnext)
        for (const struct spod *p = n->wait_head; blocked(s, n) && p && !due; p = p->wait_next)
            due = p->move_at <= s->now_s;
    if (!due)
        return;
    /* every blocked node, waited for or not: the moves leave all out */
    struct snode **b = NULL;
    size_t nb = 0, cap = 0;
    for (size_t i = 0; i < s->nnodes; i++) {
        struct snode *n = s->nodes[i];
        if (!blocked(s, n))
            continue;
        if (nb == cap) {
            size_t c2 = cap ? cap * 2 : 8;
            struct snode **v = realloc(b, c2 * sizeof *v);
            if (!v)
                break; /* (out of memory) the nodes so far */
            b = v;
            cap = c2;
        }
        b[nb++] = n;
    }
    /* a gang is tried once a pass, by its first member due; its other
     * members waiting on blocked nodes take that try's outcome */
    struct tried {
        uint32_t group;
        enum gp_ks_move r;
    } *tried = NULL;
    size_t ntried = 0;
    for (size_t i = 0; i < nb; i++) {
        struct spod *next;
        for (struct spod *p = b[i]->wait_head; p; p = next) {
            next = p->wait_next;
            if (p->move_at > s->now_s)
                continue;
            char why[900], note[1800]; /* (an Event's note is cut at 1024 bytes) */
            block_words(s, b[i], why, sizeof why);
            uint32_t g = p->spec.group;
            enum gp_ks_move r = GP_KS_MOVE_DONE;
            size_t t = 0;
            while (g && t < ntried && tried[t].group != g)
                t++;
            if (g && t < ntried) {
                /* (a member still here after its gang moved: not one of its decision) */
                r = tried[t].r == GP_KS_MOVE_DONE ? GP_KS_MOVE_RACED : tried[t].r;
            } else {
                r = gp_ks_unblock_move(s, p, b, nb, b[i], why, bound);
                struct tried *v = g ? realloc(tried, (ntried + 1) * sizeof *v) : NULL;
                if (v) {
                    tried = v;
                    tried[ntried++] = (struct tried){g, r};
                }
                if (g) /* its members moved or changed, in this queue too: from its head again
                        * (those tried are past their move_at, or out of it) */
                    next = b[i]->wait_head;
            }
            if (r == GP_KS_MOVE_DONE || p->st != SP_ASSUMED || p->wait_on != b[i])
                continue;  /* moved; or taken back, bound meanwhile, gone (sched_unblock.c) */
            p->attempts++; /* tried again after a back-off */
            p->move_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
            if (p->block_said || r == GP_KS_MOVE_RACED)
                continue;
            p->block_said = true;
            char gang[400] = "";
            if (p->info.group)
                snprintf(gang, sizeof gang, "%s/%s", p->info.ns, p->info.group);
            if (r == GP_KS_MOVE_NOWHERE && !g)
                snprintf(note, sizeof note,
                         "%s; no other node fits the pod now: it stays decided for %s (its GPUs "
                         "booked there) and is bound once the slot frees, tried elsewhere again "
                         "meanwhile",
                         why, b[i]->name);
            else if (r == GP_KS_MOVE_NOWHERE)
                snprintf(note, sizeof note,
                         "%s; no other nodes fit its gang %s now, all its members together: it "
                         "stays decided for %s (its GPUs booked there) and is bound once the slot "
                         "frees, tried elsewhere again meanwhile",
                         why, gang, b[i]->name);
            else if (g)
                snprintf(note, sizeof note,
                         "%s; a member of its gang %s is bound, or its Binding may have gone "
                         "through (a Binding cannot be undone, and a gang is bound all or none): "
                         "its decision for %s stays and is bound once the slot frees",
                         why, gang, b[i]->name);
            else
                snprintf(note, sizeof note,
                         "%s; its Binding to %s may have gone through (a Binding cannot be "
                         "undone): its decision stays and is bound once the slot frees",
                         why, b[i]->name);
            gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning",
                        "AllocatingSlotBlocked", "Scheduling", note);
        }
    }
    free(tried);
    free(b);
}

double gp_ks_slot_next(const struct gp_kube_sched *s)
{
    double t = INFINITY;
    if (!s->leader || s->slot_waiting == 0 || s->o.allocating_timeout_s <= 0)
        return t;
    for (const struct snode *n = s->wnodes; n; n = n->wnext) {
        /* blocked from slot_since + the timeout on; then its first pod due
         * (not before: a pod due by then ends the walk of its waiters) */
        double at = n->slot_since + s->o.allocating_timeout_s;
        if (n->slot_n == 0 || at >= t)
            continue;
        double first = INFINITY;
        for (const struct spod *p = n->wait_head; p && first > at; p = p->wait_next)
            if (p->move_at < first)
                first = p->move_at;
        if (first > at)
            at = first;
        if (at < t)
            t = at;
    }
    return t;
}
