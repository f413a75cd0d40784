/* gang.c - gangs (PodGroups) placed all or nothing: the attempt member by
 * member, taken back unless enough are bound; one attempt per topology
 * domain; whether a gang could fit the empty cluster; failed attempts
 * remembered per member shape until the cluster changes. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether the gang could fit the empty cluster, within the domain
 * key=value when key is set: every member fits some node of it when empty,
 * and its `need` first GPU requests fit the GPUs of the nodes that can take
 * a member (a capacity test: a gang that passes may still not pack). */
static bool gang_fits_empty(const struct gp_engine *e, const uint32_t *members, size_t n,
                            uint32_t need, const char *key, const char *value)
{
    uint64_t eligible = 0, wanted = 0;
    for (size_t k = 0; k < n; k++) {
        const struct gp_pod *p = pod_at(e, members[k]);
        bool any = false;
        for (size_t i = 0; i < e->nodes.len && !any; i++) {
            const struct gp_node *node = &e->nodes.items[i];
            any = (!key || gp_eng_has_label(node, key, value)) && gp_eng_fits_empty(e, node, p);
        }
        if (!any)
            return false;
    }
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *node = &e->nodes.items[i];
        if (key && !gp_eng_has_label(node, key, value))
            continue;
        for (size_t k = 0; k < n; k++) {
            if (gp_eng_fits_empty(e, node, pod_at(e, members[k]))) {
                /* a time-sliced or MPS GPU holds `replicas` requests */
                const struct gp_sharing_spec *sh = node->spec.sharing;
                uint64_t per_gpu =
                    sh && (sh->mode == GP_SHARE_TIMESLICE || sh->mode == GP_SHARE_MPS)
                        ? sh->replicas
                        : 1;
                eligible += (uint64_t)node->spec.gpu_count * per_gpu * GP_GPU_MILLI;
                break;
            }
        }
    }
    for (size_t k = 0; k < n && k < need; k++) {
        const struct gp_pod *p = pod_at(e, members[k]);
        wanted += (uint64_t)p->spec.gpu_count * p->spec.gpu_milli;
    }
    return wanted <= eligible;
}

/* A gang never fits when it cannot fit the empty cluster - or, with a
 * required topology domain, no domain of the empty cluster. */
static bool gang_never_fits(const struct gp_engine *e, const struct group *g,
                            const uint32_t *members, size_t n, uint32_t need)
{
    const char *key = g->spec.topology_key;
    if (!key || !g->spec.topology_required)
        return !gang_fits_empty(e, members, n, need, NULL, NULL);
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *node = &e->nodes.items[i];
        for (size_t j = 0; j < node->spec.nlabels; j++)
            if (strcmp(node->spec.labels[j].key, key) == 0 &&
                gang_fits_empty(e, members, n, need, key, node->spec.labels[j].value))
                return false;
    }
    return true;
}

/* gang_never_fits, kept in the gang while the nodes do not change
 * (topo_ver) when its pending members are of one shape: then what it
 * says depends on that shape and min(n, need) alone. */
static bool gang_never_fits_kept(const struct gp_engine *e, struct group *g,
                                 const uint32_t *members, size_t n, uint32_t need)
{
    uint32_t shape = pod_at(e, members[0])->shape;
    for (size_t k = 1; k < n; k++)
        if (pod_at(e, members[k])->shape != shape)
            return gang_never_fits(e, g, members, n, need);
    if (e->no_held_gang)
        return gang_never_fits(e, g, members, n, need);
    uint32_t kk = n < need ? (uint32_t)n : need;
    if (g->never_ver != e->topo_ver + 1 || g->never_shape != shape || g->never_k != kk) {
        g->never = gang_never_fits(e, g, members, n, need);
        g->never_ver = e->topo_ver + 1;
        g->never_shape = shape;
        g->never_k = kk;
    }
    return g->never;
}

/* Places the members one after another, each where the policy likes best
 * given the members placed before it. Keeps them when at least `need` are
 * bound; otherwise takes every one back, so a gang never holds resources
 * while it waits. *fail gets the first member's explanation. */
static bool gang_try(struct gp_engine *e, const uint32_t *members, size_t n, uint32_t need,
                     struct gp_decision *out, struct gp_decision *fail, bool *have_fail)
{
    uint32_t placed = 0;
    size_t mark = e->resv_log.len;
    uint64_t ver = e->state_ver;
    size_t nn = e->nodes.len;
    if (n > 1 && e->ngang_rej < nn) {
        uint8_t *r = realloc(e->gang_rej, nn);
        if (r) {
            e->gang_rej = r;
            e->ngang_rej = nn;
        }
    }
    /* else no node, or out of memory: scan every node */
    bool remember = n > 1 && nn > 0 && e->gang_rej && e->ngang_rej >= nn;
    /* a node-local policy's scores are kept from one member to the next */
    bool memo =
        remember && e->policy && e->policy->node_local && gp_eng_memo_reserve(&e->memo, nn) == 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t shape = pod_at(e, members[k])->shape;
        if (remember && shape != e->gang_rej_shape) { /* the first member, or another shape */
            memset(e->gang_rej, 0, nn);
            e->gang_rej_shape = shape;
            e->memo.shape = memo ? shape : NONE;
            e->memo.valid = false;
        }
        gp_eng_place(e, pod_at(e, members[k]), &out[k]);
        if (out[k].kind == GP_DECISION_BIND)
            placed++;
        else if (!*have_fail) {
            *fail = out[k];
            *have_fail = true;
        }
    }
    e->gang_rej_shape = NONE;
    e->memo.shape = NONE;
    e->memo.valid = false;
    e->gang_placed = placed;
    if (placed >= need)
        return true;
    for (size_t k = n; k-- > 0;) {
        struct gp_pod *p = pod_at(e, members[k]);
        if (out[k].kind == GP_DECISION_BIND) {
            gp_eng_release(e, p, false);
            p->state = GP_POD_PENDING;
        }
    }
    gp_eng_resv_undo(e, mark);
    /* the nodes, the pods bound, the projection and a node-local policy's
     * own state are as before the attempt: so is the state's name, and
     * what was remembered of it (a shape held back, the reservation)
     * holds again. The names the attempt went through are never reused. */
    if ((!e->policy || e->policy->node_local) && !e->no_held_gang)
        e->state_ver = ver;
    return false;
}

/* Most free GPU first, then by name: the order domains are tried in. */
static int domain_cmp(const void *pa, const void *pb)
{
    const struct domain *a = pa, *b = pb;
    if (a->free_milli != b->free_milli)
        return a->free_milli > b->free_milli ? -1 : 1;
    return strcmp(a->value, b->value);
}

/* Tries the gang once per topology domain, the domain with the most free
 * GPU first (ties by name), skipping domains with fewer free GPUs than the
 * members still needed ask for, then - when the domain is only preferred -
 * anywhere. The domains are listed in one pass over the nodes. */
bool gp_eng_gang_try_domains(struct gp_engine *e, const struct group *g, const uint32_t *members,
                             size_t n, uint32_t need, struct gp_decision *out,
                             struct gp_decision *fail, bool *have_fail)
{
    const char *key = g->spec.topology_key;
    if (!key)
        return gang_try(e, members, n, need, out, fail, have_fail);
    GP_VEC(struct domain) domains = {0};
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *node = &e->nodes.items[i];
        const char *v = NULL;
        for (size_t j = 0; j < node->spec.nlabels && !v; j++)
            if (strcmp(node->spec.labels[j].key, key) == 0)
                v = node->spec.labels[j].value;
        if (!v || node->state != GP_NODE_READY)
            continue;
        /* nodes of one domain are usually next to each other: look back first */
        size_t k = domains.len;
        while (k > 0 && strcmp(domains.items[k - 1].value, v) != 0)
            k--;
        if (k > 0) {
            domains.items[k - 1].free_milli += node->gpu_milli_free;
        } else {
            struct domain d = {v, node->gpu_milli_free};
            if (GP_VEC_PUSH(&domains, d) != 0)
                break; /* out of memory: try the domains listed so far */
        }
    }
    if (domains.len > 1) /* none: items is NULL, which qsort may not be given */
        qsort(domains.items, domains.len, sizeof domains.items[0], domain_cmp);
    uint64_t wanted = 0;
    for (size_t k = 0; k < n && k < need; k++) {
        const struct gp_pod *p = pod_at(e, members[k]);
        wanted += (uint64_t)p->spec.gpu_count * p->spec.gpu_milli;
    }
    bool ok = false;
    for (size_t k = 0; k < domains.len && !ok; k++) {
        /* sorted: once one domain lacks room, so do the rest - but a gang
         * that must stay in a domain still tries the roomiest one, so that
         * its members get an explanation */
        if (domains.items[k].free_milli < wanted && (k > 0 || !g->spec.topology_required))
            break;
        e->domain_key = key;
        e->domain_value = domains.items[k].value;
        ok = gang_try(e, members, n, need, out, fail, have_fail);
        e->domain_key = e->domain_value = NULL;
    }
    GP_VEC_FREE(&domains);
    if (ok)
        return true;
    return !g->spec.topology_required && gang_try(e, members, n, need, out, fail, have_fail);
}

/* A failed gang at this generation that this one is like: members of the
 * same shape (all members of a gang share one template), as many still
 * needed, the same topology. */
static const struct gp_decision *failed_gang_lookup(struct gp_engine *e, const struct group *g,
                                                    uint32_t member, uint32_t need)
{
    if (e->failed_gen != e->generation) {
        e->nfailed_gangs = 0;
        e->failed_gen = e->generation;
        return NULL;
    }
    const struct gp_pod *p = pod_at(e, member);
    if (pod_grows(e, p))
        return NULL; /* a bind may let it fit: no failure is remembered */
    for (uint32_t i = 0; i < e->nfailed_gangs; i++) {
        const struct failed_gang *f = &e->failed_gangs[i];
        if (f->need == need && p->shape == f->shape &&
            gp_eng_str_eq(f->topology_key, g->spec.topology_key) &&
            f->topology_required == g->spec.topology_required)
            return &f->decision;
    }
    return NULL;
}

/* Whether gang g's attempt with these pending members is a function of
 * the state, the reservation and the gang's class alone, so that it may be
 * remembered when held back (struct held_gang): every member of one
 * shape, held back by the reservation (resv_applies: its hint does not end
 * it by the shadow time), placed by nothing but the nodes' own states
 * (held_cacheable) - and the attempt gives the state its name back
 * (gang_try: a node-local policy). */
static bool held_class_ok(const struct gp_engine *e, const uint32_t *members, size_t n)
{
    if (!e->resv.on || n == 0 || !held_cacheable(e, pod_at(e, members[0])))
        return false;
    uint32_t shape = pod_at(e, members[0])->shape;
    for (size_t k = 0; k < n; k++) {
        const struct gp_pod *p = pod_at(e, members[k]);
        if (p->shape != shape || !gp_eng_resv_applies(e, p))
            return false;
    }
    return true;
}

/* Gang g, held_class_ok, of member shape s with `need` members still
 * needed: whether an attempt held back at this state and reservation
 * holds it back alike. Without a topology key the attempt is one pass
 * over the members, each placed where the scan puts it given those before
 * (what a member does depends on the state, the reservation and its shape
 * alone, not on the gang's size): the members placed before the first
 * that is held back are the same for every gang of that shape, and every
 * member after it is held back alike (nothing changed since). So a gang
 * that needs more members than that attempt placed is held back, its
 * attempt adding what that one added to topo.binds. With a topology key
 * the domains tried depend on the members needed: the last attempt's
 * exact class only (struct held_gang). */
static bool held_gang_hit(const struct gp_engine *e, const struct group *g, const struct shape *s,
                          uint32_t shape, size_t n, uint32_t need)
{
    if (!g->spec.topology_key)
        return s->gheld_ver == e->state_ver && s->gheld_stamp == e->resv_stamp &&
               need > s->gheld_placed;
    const struct held_gang *h = &e->held_gang;
    return h->valid && h->state_ver == e->state_ver && h->resv_stamp == e->resv_stamp &&
           h->shape == shape && h->n == n && h->need == need &&
           gp_eng_str_eq(h->topology_key, g->spec.topology_key) &&
           h->topology_required == g->spec.topology_required;
}

/* The domain a running gang's late members must join when its topology is
 * required: the label value of the node of a bound member; NULL when the
 * topology is not required or no member is bound. */
static const char *gang_domain(const struct gp_engine *e, const struct group *g)
{
    if (!g->spec.topology_key || !g->spec.topology_required)
        return NULL;
    for (size_t i = 0; i < g->members.len; i++) {
        const struct gp_pod *p = pod_at(e, g->members.items[i]);
        if (p->state != GP_POD_BOUND)
            continue;
        const struct gp_node *n = &e->nodes.items[p->node];
        for (size_t j = 0; j < n->spec.nlabels; j++)
            if (strcmp(n->spec.labels[j].key, g->spec.topology_key) == 0)
                return n->spec.labels[j].value;
    }
    return NULL;
}

/* One attempt at a gang: a decision for each of its pending members, in
 * queue order, written to out (room for all of them is the caller's). */
size_t gp_eng_place_gang(struct gp_engine *e, uint32_t gid, struct gp_decision *out)
{
    struct group *g = group_at(e, gid);
    e->scratch.len = 0;
    for (size_t i = 0; i < g->members.len; i++) {
        uint32_t id = g->members.items[i];
        if (pod_at(e, id)->state == GP_POD_PENDING)
            if (GP_VEC_PUSH(&e->scratch, id) != 0)
                return 0; /* out of memory: try again next cycle */
    }
    const uint32_t *members = e->scratch.items;
    size_t n = e->scratch.len;
    uint32_t need = g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 0;
    if (need == 0) { /* the gang runs: late members join one by one, in its domain */
        const char *domain = gang_domain(e, g);
        if (domain) {
            e->domain_key = g->spec.topology_key;
            e->domain_value = domain;
        }
        for (size_t k = 0; k < n; k++)
            gp_eng_place(e, pod_at(e, members[k]), &out[k]);
        e->domain_key = e->domain_value = NULL;
        return n;
    }
    struct gp_decision fail;
    bool have_fail = false;
    enum gp_gang_wait why = GP_GANG_MEMBERS;
    memset(&fail, 0, sizeof fail);
    fail.quota_queue = GP_QUEUE_NONE;
    if (n >= need) {
        const struct gp_decision *known = failed_gang_lookup(e, g, members[0], need);
        bool cls = !known && !e->no_held_gang && held_class_ok(e, members, n);
        uint32_t shape = pod_at(e, members[0])->shape;
        struct shape *s = &e->shapes.items[shape];
        uint64_t binds = e->topo.binds;
        if (known) {
            fail = *known;
            why = known->gang;
        } else if (cls && held_gang_hit(e, g, s, shape, n, need)) {
            /* as the attempt of the gang like it: held back, the state as it was */
            e->held = true;
            e->topo.binds += g->spec.topology_key ? e->held_gang.binds : s->gheld_binds;
            e->held_gang_hits++;
            why = GP_GANG_NO_ROOM;
        } else if (gp_eng_gang_try_domains(e, g, members, n, need, out, &fail, &have_fail)) {
            return n;
        } else if (e->held) {
            /* held back by the reservation: its decisions are not given
             * (gp_eng_try_pod), so whether it could ever fit is not asked */
            why = GP_GANG_NO_ROOM;
            if (cls && !g->spec.topology_key) {
                s->gheld_ver = e->state_ver;
                s->gheld_stamp = e->resv_stamp;
                s->gheld_binds = e->topo.binds - binds;
                s->gheld_placed = e->gang_placed;
            } else if (cls) {
                struct held_gang *h = &e->held_gang;
                *h = (struct held_gang){
                    true, e->state_ver, e->resv_stamp,        e->topo.binds - binds,    shape,
                    need, (uint32_t)n,  g->spec.topology_key, g->spec.topology_required};
            }
        } else {
            why = gang_never_fits_kept(e, g, members, n, need) ||
                          gp_eng_quota_never_fits(e, pod_at(e, members[0]), need)
                      ? GP_GANG_NEVER_FITS
                      : GP_GANG_NO_ROOM;
            fail.gang = why;
            if (e->nfailed_gangs < sizeof e->failed_gangs / sizeof e->failed_gangs[0]) {
                struct failed_gang *f = &e->failed_gangs[e->nfailed_gangs++];
                f->shape = pod_at(e, members[0])->shape;
                f->topology_key = g->spec.topology_key;
                f->topology_required = g->spec.topology_required;
                f->need = need;
                f->decision = fail;
            }
        }
    }
    for (size_t k = 0; k < n; k++) {
        struct gp_pod *p = pod_at(e, members[k]);
        out[k] = fail;
        out[k].kind = GP_DECISION_UNSCHEDULABLE;
        out[k].pod = p->id;
        out[k].gang = why;
        out[k].explain.nodes_total = (uint32_t)e->nodes.len;
        /* waiting for members: try again when one arrives, whatever the cluster */
        p->tried_gen = why == GP_GANG_MEMBERS ? UINT64_MAX : pod_gen(e, p);
    }
    return n;
}

size_t gp_eng_gang_pending(const struct gp_engine *e, uint32_t gid)
{
    const struct group *g = group_at(e, gid);
    size_t n = 0;
    for (size_t i = 0; i < g->members.len; i++)
        n += pod_at(e, g->members.items[i])->state == GP_POD_PENDING;
    return n;
}

enum gp_err gp_engine_group_add(struct gp_engine *e, const struct gp_group_spec *spec,
                                uint32_t *out_id)
{
    if (spec->min_member == 0)
        return GP_EINVALID;
    uint32_t id;
    struct group *g = e->groups.n < UINT32_MAX - 1 ? gp_idtab_add(&e->groups, &id) : NULL;
    if (!g)
        return GP_ENOMEM;
    g->spec = *spec;
    if (out_id)
        *out_id = id + 1;
    return GP_OK;
}

uint32_t gp_engine_group_bound(const struct gp_engine *e, uint32_t group)
{
    const struct group *g = group_at(e, group);
    return g ? g->bound : 0;
}

/* Frees gang g when the driver has forgotten it and no member is left. */
void gp_eng_group_maybe_free(struct gp_engine *e, uint32_t gid)
{
    struct group *g = group_at(e, gid);
    if (!g || !g->forgotten || g->members.len > 0)
        return;
    GP_VEC_FREE(&g->members);
    gp_idtab_release(&e->groups, gid - 1);
}

enum gp_err gp_engine_group_forget(struct gp_engine *e, uint32_t group)
{
    struct group *g = group_at(e, group);
    if (!g || g->forgotten)
        return GP_EINVALID;
    g->forgotten = true;
    gp_eng_group_maybe_free(e, group);
    return GP_OK;
}
