/* topo.c - the pods kube-scheduler's InterPodAffinity and
 * PodTopologySpread count per topology domain, kept as they are bound and
 * released: node label keys and each node's domain (a value of the key),
 * matchers (which pods a term or a constraint selects), tallies (per
 * domain, the pods a matcher matches, or the owners of a term), the
 * record each kind of pod keeps of its tallies, and the prefilter state
 * of one pod (kube-scheduler's PreFilter) cached until the cluster
 * changes. A bind costs one test per matcher; a decision reads the
 * tallies, it does not scan the pods. The filters and scores themselves
 * are in interpod.c and spread.c (docs/affinity.md). */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

#define NS_NAME_LABEL "kubernetes.io/metadata.name"

const char *gp_eng_pod_ns(const struct gp_pod *p)
{
    return p->spec.namespace_name && *p->spec.namespace_name ? p->spec.namespace_name : "default";
}

/* --- matching -------------------------------------------------------------- */

static bool ns_listed(const struct gp_engine *e, const struct gp_pod_term *t, const char *owner_ns,
                      const char *ns)
{
    if (t->nnamespaces == 0 && !t->ns_selector.set)
        return strcmp(owner_ns, ns) == 0; /* the owner's own namespace */
    for (size_t i = 0; i < t->nnamespaces; i++)
        if (strcmp(t->namespaces[i], ns) == 0)
            return true;
    if (!t->ns_selector.set)
        return false;
    /* the namespace's labels as the driver gave them (namespaces.c; none
     * for a namespace not given, as kube-scheduler's
     * GetNamespaceLabelsSnapshot); given none at all (the simulator), the
     * one the API server sets on every namespace */
    const struct gp_kv *labels;
    size_t n;
    struct gp_kv label = {NS_NAME_LABEL, ns};
    if (!gp_eng_ns_labels(e, ns, &labels, &n)) {
        labels = &label;
        n = 1;
    }
    return gp_eng_selector_matches_labels(&t->ns_selector, labels, n);
}

bool gp_eng_term_matches(const struct gp_engine *e, const struct gp_pod_term *t,
                         const char *owner_ns, const struct gp_pod *p)
{
    return ns_listed(e, t, owner_ns, gp_eng_pod_ns(p)) &&
           gp_eng_selector_matches_labels(&t->selector, p->spec.labels, p->spec.nlabels);
}

bool gp_eng_matcher_matches(const struct gp_engine *e, const struct matcher *m,
                            const struct gp_pod *p)
{
    if (m->sel) /* spreading counts the pod's namespace; an empty selector counts none */
        return !gp_eng_selector_empty(m->sel) && strcmp(m->ns, gp_eng_pod_ns(p)) == 0 &&
               gp_eng_selector_matches_labels(m->sel, p->spec.labels, p->spec.nlabels);
    if (m->nterms == 0)
        return false;
    for (size_t i = 0; i < m->nterms; i++)
        if (!gp_eng_term_matches(e, &m->terms[i], m->ns, p))
            return false;
    return true;
}

/* --- keys and domains ------------------------------------------------------ */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The domain of `value` in key k; NONE when k has none. */
static uint32_t value_find(const struct topo_key *k, const char *value)
{
    if (!k->nslots)
        return NONE;
    for (size_t j = hash_str(value) & (k->nslots - 1); k->slots[j]; j = (j + 1) & (k->nslots - 1))
        if (strcmp(k->values.items[k->slots[j] - 1], value) == 0)
            return k->slots[j] - 1;
    return NONE;
}

static int slots_put(uint32_t *slots, size_t nslots, const char *value, uint32_t d)
{
    size_t j = hash_str(value) & (nslots - 1);
    while (slots[j])
        j = (j + 1) & (nslots - 1);
    slots[j] = d + 1;
    return 0;
}

/* A new domain for `value`, every tally of key ki given its count 0. */
static uint32_t domain_add(struct gp_engine *e, uint32_t ki, const char *value)
{
    struct topo_key *k = &e->topo.keys.items[ki];
    uint32_t d = (uint32_t)k->values.len;
    if (2 * (k->values.len + 1) > k->nslots) {
        size_t n = k->nslots ? 2 * k->nslots : 16;
        uint32_t *slots = calloc(n, sizeof *slots);
        if (!slots)
            return NONE;
        for (size_t i = 0; i < k->values.len; i++)
            slots_put(slots, n, k->values.items[i], (uint32_t)i);
        free(k->slots);
        k->slots = slots;
        k->nslots = n;
    }
    for (size_t t = 0; t < e->topo.tallies.len; t++) {
        struct tally *y = &e->topo.tallies.items[t];
        if (y->key == ki && GP_VEC_PUSH(&y->count, 0) != 0)
            return NONE;
    }
    if (GP_VEC_PUSH(&k->values, value) != 0 || GP_VEC_PUSH(&k->live, 0) != 0)
        return NONE;
    slots_put(k->slots, k->nslots, value, d);
    return d;
}

/* Node n's domain in key ki, made when new; NONE without the label.
 * *err on running out of memory. */
static uint32_t node_domain(struct gp_engine *e, uint32_t ki, const struct gp_node *n, bool *err)
{
    struct topo_key *k = &e->topo.keys.items[ki];
    if (k->per_node) {
        for (size_t t = 0; t < e->topo.tallies.len; t++) {
            struct tally *y = &e->topo.tallies.items[t];
            while (y->key == ki && y->count.len <= n->id)
                if (GP_VEC_PUSH(&y->count, 0) != 0) {
                    *err = true;
                    return NONE;
                }
        }
        return n->id;
    }
    const char *v = gp_eng_node_label(n, k->key);
    if (!v)
        return NONE;
    uint32_t d = value_find(k, v);
    if (d == NONE && (d = domain_add(e, ki, v)) == NONE)
        *err = true;
    return d;
}

/* Places node n in key ki's domains. */
static enum gp_err key_node(struct gp_engine *e, uint32_t ki, const struct gp_node *n)
{
    bool err = false;
    uint32_t d = node_domain(e, ki, n, &err);
    struct topo_key *k = &e->topo.keys.items[ki];
    if (err || GP_VEC_RESERVE(&k->dom, n->id + 1) != 0)
        return GP_ENOMEM;
    while (k->dom.len <= n->id)
        k->dom.items[k->dom.len++] = NONE;
    k->dom.items[n->id] = d;
    if (d != NONE && n->state != GP_NODE_GONE) {
        if (!k->per_node)
            k->live.items[d]++;
        k->with++;
    }
    return GP_OK;
}

/* The key `key` (NULL: the per-node pseudo-key), added when new. */
static uint32_t key_get(struct gp_engine *e, const char *key)
{
    struct topo *t = &e->topo;
    for (size_t i = 0; i < t->keys.len; i++)
        if (key ? !t->keys.items[i].per_node && strcmp(t->keys.items[i].key, key) == 0
                : t->keys.items[i].per_node)
            return (uint32_t)i;
    struct topo_key k;
    memset(&k, 0, sizeof k);
    k.key = key;
    k.per_node = key == NULL;
    if (GP_VEC_PUSH(&t->keys, k) != 0)
        return NONE;
    uint32_t ki = (uint32_t)t->keys.len - 1;
    for (size_t i = 0; i < e->nodes.len; i++)
        if (key_node(e, ki, &e->nodes.items[i]) != GP_OK)
            return NONE;
    return ki;
}

enum gp_err gp_eng_topo_node_added(struct gp_engine *e, const struct gp_node *n)
{
    for (size_t i = 0; i < e->topo.keys.len; i++)
        if (key_node(e, (uint32_t)i, n) != GP_OK)
            return GP_ENOMEM;
    return GP_OK;
}

void gp_eng_topo_node_gone(struct gp_engine *e, const struct gp_node *n)
{
    for (size_t i = 0; i < e->topo.keys.len; i++) {
        struct topo_key *k = &e->topo.keys.items[i];
        uint32_t d = n->id < k->dom.len ? k->dom.items[n->id] : NONE;
        if (d == NONE)
            continue;
        if (!k->per_node)
            k->live.items[d]--;
        k->with--;
    }
}

uint32_t gp_eng_topo_dom(const struct gp_engine *e, uint32_t ki, const struct gp_node *n)
{
    const struct topo_key *k = &e->topo.keys.items[ki];
    /* a cluster node, or a copy of one (a projection, the autoscaler's
     * plan): its id; a probe's is NONE */
    if (n->id < k->dom.len)
        return k->dom.items[n->id];
    if (k->per_node) /* a probe: a node of its own */
        return TOPO_NEW;
    const char *v = gp_eng_node_label(n, k->key);
    if (!v)
        return NONE;
    uint32_t d = value_find(k, v);
    return d == NONE ? TOPO_NEW : d;
}

int64_t gp_eng_tally_at(const struct gp_engine *e, uint32_t t, const struct gp_node *n)
{
    const struct tally *y = &e->topo.tallies.items[t];
    uint32_t d = gp_eng_topo_dom(e, y->key, n);
    return d < y->count.len ? y->count.items[d] : 0;
}

/* --- matchers and tallies -------------------------------------------------- */

static uint32_t matcher_get(struct gp_engine *e, const struct gp_pod_term *terms, size_t nterms,
                            const struct gp_label_selector *sel, const char *ns)
{
    struct topo *t = &e->topo;
    for (size_t i = 0; i < t->matchers.len; i++) {
        const struct matcher *m = &t->matchers.items[i];
        if (m->terms == terms && m->nterms == nterms && m->sel == sel && strcmp(m->ns, ns) == 0)
            return (uint32_t)i;
    }
    struct matcher m = {terms, nterms, sel, ns};
    if (GP_VEC_PUSH(&t->matchers, m) != 0)
        return NONE;
    return (uint32_t)t->matchers.len - 1;
}

/* Counts a pod bound on n (sign 1) or released from it (-1) into tally y,
 * with weight w in its domain. */
static void tally_add(struct gp_engine *e, struct tally *y, const struct gp_node *n, int64_t w,
                      int sign)
{
    uint32_t d = n->id < e->topo.keys.items[y->key].dom.len
                     ? e->topo.keys.items[y->key].dom.items[n->id]
                     : NONE;
    if (d == NONE || d >= y->count.len)
        return;
    y->count.items[d] += sign * w;
    y->total += sign;
    /* an owners' term that starts or stops counting: the pods it matches
     * read the other pods, or no longer (topo_hard, gp_eng_interpod_hit) */
    if (y->kind == T_ANTI_REQ && y->total == (sign > 0 ? 1 : 0))
        e->topo.anti_gen++;
}

static bool owns(const struct gp_engine *e, const struct gp_pod *p, uint32_t t, int64_t *w)
{
    uint32_t r = px_at(e, p->id)->cons;
    if (r == NONE)
        return false;
    const struct cons_rec *c = &e->topo.recs.items[r];
    for (size_t i = 0; i < c->nown; i++)
        if (c->own[i] == t) {
            *w = c->own_w[i];
            return true;
        }
    return false;
}

/* The tally of (kind, key, matcher or term and namespace), made when new
 * and then counted from the pods bound now. */
static uint32_t tally_get(struct gp_engine *e, uint8_t kind, uint32_t key, uint32_t matcher,
                          const struct gp_pod_term *term, const char *ns)
{
    struct topo *t = &e->topo;
    if (key == NONE || (kind == T_MATCH && matcher == NONE))
        return NONE;
    for (size_t i = 0; i < t->tallies.len; i++) {
        const struct tally *y = &t->tallies.items[i];
        if (y->kind == kind && y->key == key && y->matcher == matcher && y->term == term &&
            (!ns || strcmp(y->ns, ns) == 0))
            return (uint32_t)i;
    }
    struct tally y;
    memset(&y, 0, sizeof y);
    y.kind = kind;
    y.key = key;
    y.matcher = matcher;
    y.term = term;
    y.ns = ns;
    const struct topo_key *k = &t->keys.items[key];
    size_t ndom = k->per_node ? e->nodes.len : k->values.len;
    if (GP_VEC_RESERVE(&y.count, ndom ? ndom : 1) != 0)
        return NONE;
    memset(y.count.items, 0, (ndom ? ndom : 1) * sizeof *y.count.items);
    y.count.len = ndom;
    if (GP_VEC_PUSH(&t->tallies, y) != 0) {
        GP_VEC_FREE(&y.count);
        return NONE;
    }
    uint32_t ti = (uint32_t)t->tallies.len - 1;
    struct tally *ny = &t->tallies.items[ti];
    /* once, when the tally is made: the pods in the store */
    for (uint32_t i = gp_idtab_first(&e->pods.tab); i < e->pods.tab.n; i++) {
        const struct gp_pod *p = pod_at(e, i);
        if (p->state != GP_POD_BOUND)
            continue;
        int64_t w = 1;
        if (kind == T_MATCH ? gp_eng_matcher_matches(e, &t->matchers.items[matcher], p)
                            : owns(e, p, ti, &w))
            tally_add(e, ny, &e->nodes.items[p->node], w, 1);
    }
    return ti;
}

/* --- a kind of pod's record ------------------------------------------------- */

static void rec_free(struct cons_rec *r)
{
    free(r->aff);
    free(r->own_w);
}

/* Registers what pods of constraints c in namespace ns count (their own
 * terms' tallies) and own (the tallies other pods read). */
static enum gp_err rec_build(struct gp_engine *e, struct cons_rec *r)
{
    const struct gp_pod_constraints *c = r->c;
    const char *ns = r->ns;
    size_t nown = c->naffinity + c->nanti + c->naffinity_preferred + c->nanti_preferred;
    size_t nid = c->naffinity + c->nanti + c->naffinity_preferred + c->nanti_preferred +
                 2 * c->nspread + nown;
    uint32_t *ids = calloc(nid ? nid : 1, sizeof *ids);
    r->own_w = calloc(nown ? nown : 1, sizeof *r->own_w);
    if (!ids || !r->own_w) {
        free(ids);
        return GP_ENOMEM;
    }
    r->aff = ids;
    r->anti = r->aff + c->naffinity;
    r->aff_pref = r->anti + c->nanti;
    r->anti_pref = r->aff_pref + c->naffinity_preferred;
    r->spread = r->anti_pref + c->nanti_preferred;
    r->spread_node = r->spread + c->nspread;
    r->own = r->spread_node + c->nspread;
    r->aff_all = c->naffinity ? matcher_get(e, c->affinity, c->naffinity, NULL, ns) : NONE;
    bool bad = c->naffinity && r->aff_all == NONE;
    for (size_t i = 0; i < c->naffinity; i++)
        bad |= (r->aff[i] = tally_get(e, T_MATCH, key_get(e, c->affinity[i].topology_key),
                                      r->aff_all, NULL, NULL)) == NONE;
    for (size_t i = 0; i < c->nanti; i++)
        bad |=
            (r->anti[i] = tally_get(e, T_MATCH, key_get(e, c->anti[i].topology_key),
                                    matcher_get(e, &c->anti[i], 1, NULL, ns), NULL, NULL)) == NONE;
    for (size_t i = 0; i < c->naffinity_preferred; i++)
        bad |= (r->aff_pref[i] = tally_get(
                    e, T_MATCH, key_get(e, c->affinity_preferred[i].topology_key),
                    matcher_get(e, &c->affinity_preferred[i], 1, NULL, ns), NULL, NULL)) == NONE;
    for (size_t i = 0; i < c->nanti_preferred; i++)
        bad |= (r->anti_pref[i] = tally_get(
                    e, T_MATCH, key_get(e, c->anti_preferred[i].topology_key),
                    matcher_get(e, &c->anti_preferred[i], 1, NULL, ns), NULL, NULL)) == NONE;
    for (size_t i = 0; i < c->nspread; i++) {
        uint32_t m = matcher_get(e, NULL, 0, &c->spread[i].selector, ns);
        bad |= (r->spread[i] = tally_get(e, T_MATCH, key_get(e, c->spread[i].topology_key), m, NULL,
                                         NULL)) == NONE;
        bad |= (r->spread_node[i] = tally_get(e, T_MATCH, key_get(e, NULL), m, NULL, NULL)) == NONE;
    }
    /* what its bound pods hold against the others */
    struct {
        const struct gp_pod_term *t;
        size_t n;
        uint8_t kind;
        int sign;
    } owned[] = {{c->anti, c->nanti, T_ANTI_REQ, 1},
                 {c->affinity, c->naffinity, T_AFF_REQ, 1},
                 {c->affinity_preferred, c->naffinity_preferred, T_AFF_PREF, 1},
                 {c->anti_preferred, c->nanti_preferred, T_ANTI_PREF, -1}};
    for (size_t g = 0; g < sizeof owned / sizeof owned[0]; g++)
        for (size_t i = 0; i < owned[g].n; i++) {
            const struct gp_pod_term *t = &owned[g].t[i];
            uint32_t y = tally_get(e, owned[g].kind, key_get(e, t->topology_key), NONE, t, ns);
            bad |= y == NONE;
            r->own[r->nown] = y;
            /* required terms count each owner once (InterPodAffinity's
             * hardPodAffinityWeight, 1 by default, for affinity) */
            r->own_w[r->nown++] = owned[g].kind == T_AFF_PREF || owned[g].kind == T_ANTI_PREF
                                      ? owned[g].sign * (int64_t)t->weight
                                      : 1;
        }
    bool hard_spread = false, soft_spread = false;
    for (size_t i = 0; i < c->nspread; i++)
        *(c->spread[i].schedule_anyway ? &soft_spread : &hard_spread) = true;
    r->grows = c->naffinity > 0 || hard_spread;
    r->hard = c->naffinity > 0 || c->nanti > 0 || hard_spread;
    r->soft = c->nnode_preferred > 0 || c->naffinity_preferred > 0 || c->nanti_preferred > 0 ||
              soft_spread;
    r->anti_owner = c->nanti > 0;
    r->scoring_owner = c->naffinity > 0 || c->naffinity_preferred > 0 || c->nanti_preferred > 0;
    return bad ? GP_ENOMEM : GP_OK;
}

static bool rec_needed(const struct gp_pod_constraints *c)
{
    return c->naffinity || c->nanti || c->naffinity_preferred || c->nanti_preferred || c->nspread ||
           c->nnode_preferred;
}

enum gp_err gp_eng_topo_pod_added(struct gp_engine *e, struct gp_pod *p)
{
    const struct gp_pod_constraints *c = p->spec.constraints;
    struct pod_x *x = px_at(e, p->id);
    x->cons = NONE;
    if (!c || !rec_needed(c))
        return GP_OK;
    const char *ns = gp_eng_pod_ns(p);
    struct topo *t = &e->topo;
    /* by content: pods of one template read by the live scheduler each
     * have their own copy, and one record (its matchers and tallies) must
     * serve them all, or each bind would test every pod's selectors; the
     * pod then borrows the record's copy (alike, and alive as long: the
     * engine's borrowed specs outlive it) */
    for (size_t i = 0; i < t->recs.len; i++)
        if (strcmp(t->recs.items[i].ns, ns) == 0 && gp_eng_cons_eq(t->recs.items[i].c, c)) {
            p->spec.constraints = t->recs.items[i].c; /* the record's: topo_hard's identity */
            x->cons = (uint32_t)i;
            return GP_OK;
        }
    struct cons_rec r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.ns = ns;
    enum gp_err err = rec_build(e, &r);
    if (err == GP_OK && GP_VEC_PUSH(&t->recs, r) != 0)
        err = GP_ENOMEM;
    if (err != GP_OK) {
        rec_free(&r);
        return err;
    }
    x->cons = (uint32_t)t->recs.len - 1;
    return GP_OK;
}

void gp_eng_topo_bind(struct gp_engine *e, const struct gp_pod *p, const struct gp_node *n,
                      int sign)
{
    struct topo *t = &e->topo;
    t->binds++;
    if (t->tallies.len == 0)
        return;
    /* the pods the matchers select: each matcher tested once */
    for (size_t m = 0; m < t->matchers.len; m++) {
        if (!gp_eng_matcher_matches(e, &t->matchers.items[m], p))
            continue;
        for (size_t i = 0; i < t->tallies.len; i++) {
            struct tally *y = &t->tallies.items[i];
            if (y->kind == T_MATCH && y->matcher == m)
                tally_add(e, y, n, 1, sign);
        }
    }
    uint32_t r = px_at(e, p->id)->cons;
    if (r == NONE)
        return;
    const struct cons_rec *c = &t->recs.items[r];
    for (size_t i = 0; i < c->nown; i++)
        tally_add(e, &t->tallies.items[c->own[i]], n, c->own_w[i], sign);
    if (c->anti_owner)
        t->anti_owners += sign;
    if (c->scoring_owner)
        t->scoring_owners += sign;
}

/* Whether matcher m has a term whose namespaces a namespace's labels
 * decide. */
static bool matcher_ns_selects(const struct matcher *m)
{
    for (size_t i = 0; i < m->nterms; i++)
        if (m->terms[i].ns_selector.set)
            return true;
    return false;
}

void gp_eng_topo_ns_recount(struct gp_engine *e, const char *ns, int sign)
{
    struct topo *t = &e->topo;
    bool any = false;
    for (size_t m = 0; m < t->matchers.len && !any; m++)
        any = matcher_ns_selects(&t->matchers.items[m]);
    if (!any) /* no term reads a namespace's labels: nothing they decide is counted */
        return;
    for (uint32_t i = gp_idtab_first(&e->pods.tab); i < e->pods.tab.n; i++) {
        const struct gp_pod *p = pod_at(e, i);
        if (p->state != GP_POD_BOUND || (ns && strcmp(gp_eng_pod_ns(p), ns) != 0))
            continue;
        for (size_t m = 0; m < t->matchers.len; m++) {
            const struct matcher *mt = &t->matchers.items[m];
            if (!matcher_ns_selects(mt) || !gp_eng_matcher_matches(e, mt, p))
                continue;
            for (size_t k = 0; k < t->tallies.len; k++) {
                struct tally *y = &t->tallies.items[k];
                if (y->kind == T_MATCH && y->matcher == m)
                    tally_add(e, y, &e->nodes.items[p->node], 1, sign);
            }
        }
    }
}

void gp_eng_topo_free(struct gp_engine *e)
{
    gp_eng_ns_free(e);
    struct topo *t = &e->topo;
    for (size_t i = 0; i < t->keys.len; i++) {
        GP_VEC_FREE(&t->keys.items[i].dom);
        GP_VEC_FREE(&t->keys.items[i].values);
        GP_VEC_FREE(&t->keys.items[i].live);
        free(t->keys.items[i].slots);
    }
    for (size_t i = 0; i < t->tallies.len; i++)
        GP_VEC_FREE(&t->tallies.items[i].count);
    for (size_t i = 0; i < t->recs.len; i++)
        rec_free(&t->recs.items[i]);
    GP_VEC_FREE(&t->keys);
    GP_VEC_FREE(&t->matchers);
    GP_VEC_FREE(&t->tallies);
    GP_VEC_FREE(&t->recs);
    free(t->pre.sc);
    GP_VEC_FREE(&t->pre.scratch);
    GP_VEC_FREE(&t->pre.ex_anti);
}

/* --- the prefilter state and the filter ------------------------------------ */

const struct topo_pre *gp_eng_topo_pre(const struct gp_engine *ce, const struct gp_pod *p)
{
    /* a cache of what the engine's state implies, filled through a const
     * view as the filters are (the engine is single-threaded) */
    struct gp_engine *e = (struct gp_engine *)(uintptr_t)ce;
    struct topo_pre *pre = &e->topo.pre;
    if (pre->valid && pre->pod == p->id && pre->ver == e->state_ver)
        return pre;
    pre->valid = false;
    pre->pod = p->id;
    pre->ver = e->state_ver;
    if (!gp_eng_spread_prefilter(e, pre, p) || !gp_eng_interpod_prefilter(e, pre, p))
        return NULL;
    pre->valid = true;
    return pre;
}

enum gp_filter gp_eng_topo_filter(const struct gp_engine *e, const struct gp_node *n,
                                  const struct gp_pod *p)
{
    const struct topo_pre *pre = gp_eng_topo_pre(e, p);
    if (!pre) /* out of memory: as if the node did not fit */
        return GP_FILTER_POD_AFFINITY;
    enum gp_filter f = gp_eng_spread_filter(e, pre, n, p);
    return f != GP_FILTER_COUNT ? f : gp_eng_interpod_filter(e, pre, n, p);
}
