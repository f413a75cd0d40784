/* internal.h - what the engine's source files share, and what nothing
 * outside src/engine may include (drivers include engine.h alone): the
 * engine's state (struct gp_engine, made of the records of pod_records.h
 * for queues, gangs, request shapes, reservations and preemption searches
 * and of node_records.h for topology counts, the node index and host
 * ports), the functions one part calls in another (gp_eng_*, grouped by
 * the file that defines them), and the node filter, inline because every
 * scan of the nodes runs it. */
#ifndef GP_ENGINE_INTERNAL_H
#define GP_ENGINE_INTERNAL_H

#include "engine/engine.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/node_records.h"
#include "engine/pod_records.h"
#include "engine/share.h"
#include "util/idtab.h"
#include "util/kheap.h"
#include "util/olist.h"
#include "util/vec.h"

/* claims.c: the bound pods' uses of each PersistentVolumeClaim, by key
 * (chained; nbuckets a power of two), and whether a use could not be
 * counted (out of memory: then the bound pods themselves are read, until
 * the next cycle counts them again) */
struct claim_ent;
struct claim_map {
    struct claim_ent **buckets;
    size_t nbuckets, len;
    bool broken;
};

struct csi_list; /* csi.c */

struct gp_engine {
    const struct gp_policy_ops *policy;
    void *policy_state;
    struct gp_rng rng;
    GP_VEC(struct gp_node) nodes;
    /* ports.c: per node id (made as pods with host ports bind), and
     * whether a list could not grow (then every such pod is refused
     * everywhere rather than given a port in use) */
    struct port_list *node_ports;
    size_t nnode_ports;
    bool ports_broken;
    struct claim_map claims;
    /* csi.c: per node id, the CSI volumes its bound pods hold (made as
     * pods with CSI volumes bind), and whether one could not be counted
     * (out of memory: nodes with a limit refuse such pods until the next
     * cycle counts them again) */
    struct csi_list *node_csi;
    size_t nnode_csi;
    bool csi_broken;
    struct pod_store pods;       /* pod_at(), px_at() */
    GP_VEC(struct queue) queues; /* queue 0 is the default queue */
    size_t npending;             /* pods in the queues' pending lists */
    bool quotas, model_quotas;   /* some queue has a finite cap (per model) */
    bool preempt;                /* some queue's pods may evict others */
    const char *models[GP_MAX_GPU_MODELS];
    uint32_t nmodels;
    uint64_t generation; /* bumped whenever capacity grows (release, node added) */
    /* Request shapes, interned: pods of one shape fit on exactly the same
     * nodes. A shape remembers the failure of its last pod that fitted
     * nowhere: a pod of the same shape fails too until the generation
     * changes (a bind only takes capacity away), so it is answered without
     * scanning the nodes. */
    GP_VEC(struct shape) shapes;
    uint32_t *shape_slots; /* open addressing: shape index + 1, 0 = empty */
    size_t nshape_slots;   /* a power of two, at least twice the shapes */
    uint64_t failed_gen;   /* of the gang failures below */
    /* the same for gangs: a gang like a failed one (same member shape, same
     * number still needed, same topology) fails too at that generation */
    struct failed_gang {
        uint32_t shape;           /* its members' shape */
        const char *topology_key; /* the gang's */
        bool topology_required;
        uint32_t need;
        struct gp_decision decision;
    } failed_gangs[16];
    uint32_t nfailed_gangs;
    /* backfill: the last attempt of a gang with a topology key held back
     * by the reservation (gang.c), at state state_ver and reservation
     * resv_stamp: a gang like it (same member shape, members pending and
     * still needed, topology) is held back alike while both hold; binds:
     * what its attempt added to topo.binds (gangs without a topology key:
     * their members' shape remembers, struct shape gheld_*) */
    struct held_gang {
        bool valid;
        uint64_t state_ver, resv_stamp, binds;
        uint32_t shape, need, n;
        const char *topology_key;
        bool topology_required;
    } held_gang;
    /* tests (test_held_gang.c): no gang held back from memory, no name
     * given back, gang_never_fits asked every time; under a reservation,
     * every node scanned; how often each answered */
    bool no_held_gang, no_resv_index;
    bool no_gang_index; /* tests: a gang's members outside a reservation never from the index */
    uint64_t held_gang_hits, resv_index_hits;
    GP_VEC(struct gp_shape) target;
    uint64_t target_version;
    int64_t next_seq;
    struct gp_engine_totals totals;
    struct gp_idtab groups;   /* struct group by gang id - 1 (group_at) */
    GP_VEC(uint32_t) scratch; /* a gang's members during its attempt */
    uint32_t gang_placed;     /* gang_try: members its last attempt placed */
    uint64_t cycle;           /* scheduling cycles so far */
    /* while a gang tries one topology domain: nodes outside it are rejected */
    const char *domain_key, *domain_value;
    double now_s; /* of the last cycle */
    enum gp_order order;
    bool backfill;
    /* a name for the state of the nodes and the pods bound: a new one
     * (from state_ctr, never reused) on every bind, release and node
     * change; a gang attempt taken back gives the state it restored its
     * name back (gang.c), so what was remembered of it holds again */
    uint64_t state_ver, state_ctr;
    uint64_t topo_ver;           /* bumped when a node or a queue is added or changed */
    struct gp_olist all;         /* FIFO, SJF: every pending pod, in the order */
    struct resv resv;            /* backfill: the head's reservation */
    GP_VEC(struct gp_node) proj; /* backfill: nodes as projected at the shadow time */
    GP_VEC(uint64_t) proj_mark;  /* proj[i] is valid when proj_mark[i] == proj_stamp */
    GP_VEC(int64_t) proj_slots;  /* pods like the head per node, as projected (resv.c) */
    GP_VEC(uint64_t) proj_ver;   /* the node's version its proj_slots entry was counted at */
    uint64_t proj_stamp;
    /* backfill: the incremental reservation (resv.c): per node what the
     * last computations found, valid for the head's key (its shape, the
     * pods needed, whether its label filters apply) of rcache_epoch;
     * tests: no_resv_incr makes every computation from scratch,
     * resv_check compares each with one from scratch (resv_mismatches);
     * resv_incr_hits counts the nodes and releases taken from memory */
    GP_VEC(struct resv_node) rnodes;
    uint64_t rcache_epoch;
    uint32_t rcache_shape, rcache_need;
    uint8_t rcache_lf;
    bool no_resv_incr, resv_check;
    uint64_t resv_incr_hits, resv_mismatches;
    GP_VEC(struct pod_end) ends; /* backfill: scratch for the projection */
    /* backfill: the bound pods with a duration hint by expected end (bind
     * time + hint), kept on every bind and release (resv.c); ends_oom:
     * an entry could not be added, the ends are listed and sorted again */
    struct gp_kheap end_heap;
    bool ends_oom;
    /* the same ends in order (key, then id) while ends_sorted_ok: at most
     * ends_sorted_max of them (resv.c; tests lower it) */
    GP_VEC(struct gp_kheap_item) ends_sorted;
    bool ends_sorted_ok;
    uint32_t ends_sorted_max;
    /* FIFO and SJF with backfill: the walk by shape (order.c) over the
     * lists of pending.c; lazy_gen: some shape passed pods over at this
     * generation */
    GP_VEC(struct ostream) ostreams;
    GP_VEC(uint32_t) lazy_shapes;
    uint64_t lazy_gen;
    bool no_by_shape;   /* tests: the walk along the whole line only (test_walk_shape.c) */
    bool no_park;       /* tests: no held run parked, every held pod visited */
    uint64_t park_held; /* pods held again in parked runs (test_walk_shape.c) */
    GP_VEC(struct resv_undo) resv_log;
    bool held; /* the last gp_eng_place() found room only on reserved capacity */
    /* during a gang attempt: per node, 1 + the filter that rejected the
     * attempt's member shape (0: not rejected); nodes that rejected one
     * member reject the next alike, since only the nodes members were
     * bound to changed */
    uint8_t *gang_rej;
    size_t ngang_rej;
    uint32_t gang_rej_shape; /* the shape it is for; NONE: off */
    struct gang_memo memo;   /* beside gang_rej, for node-local policies */
    bool qblocked_any;       /* this cycle, some queue is qblocked */
    /* preemption: the victim generation is bumped whenever the possible
     * victims, or the room they leave, may have changed (a release, a
     * node, a queue, an eviction, a pod reaching its minimum runtime), so
     * a pod whose search failed is not searched again before */
    uint64_t victim_gen;
    GP_VEC(uint32_t) immature; /* bound pods that may not be evicted yet */
    double next_mature_s;      /* the earliest time one of them may */
    GP_VEC(struct unit) units;
    GP_VEC(uint32_t) victims;         /* units' pods */
    GP_VEC(uint32_t) chosen;          /* indexes of the units released, in order */
    GP_VEC(uint32_t) gmembers;        /* a preempting gang's pending members */
    GP_VEC(struct gp_decision) tmp;   /* a tentative gang attempt's decisions */
    GP_VEC(struct freeable) freeable; /* per node: what the candidate victims hold */
    GP_VEC(int32_t) pdb_allowed;      /* per budget id: disruptions allowed (gp_engine_pdb_set) */
    GP_VEC(int32_t) pdb_left;         /* preempt.c: what a node's victims leave of each */
    uint64_t mark;                    /* preemption searches so far */
    /* gangs' searches that failed at `failed_victim_gen` (a pod alone's
     * failure is kept in its shape) */
    struct failed_preempt {
        uint32_t shape;           /* the pod's */
        const char *topology_key; /* a gang's */
        bool topology_required;
        int32_t priority;
        uint32_t need; /* 0 for a pod alone */
    } failed_preempt[16];
    uint32_t nfailed_preempt;
    uint64_t failed_victim_gen;
    struct node_index index;
    bool no_index, no_walk; /* gp_engine_set_index(e, false, false) */
    struct walk_mark fifo_mark;
    uint64_t pend_ver;   /* bumped when a pending pod leaves other than by a bind */
    uint64_t resv_stamp; /* bumped whenever the reservation is made anew */
    /* affinity and spreading (topo.c): domains, counts, per-pod records */
    struct topo topo;
    GP_VEC(struct cand) cands; /* a placement that combines scores (prefer.c) */
};

/* The nodes or the pods bound changed: the state gets a new name. */
static inline void gp_eng_state_bump(struct gp_engine *e)
{
    e->state_ver = ++e->state_ctr;
}

/* The record of pod `id`; the `gone` record (state DONE, no constraints)
 * for an id forgotten or never issued. Nothing but reads may reach it. */
static inline struct pod_rec *pod_rec_at(const struct gp_engine *e, uint32_t id)
{
    /* without the table's test of the record's bit: a record forgotten in
     * a chunk still held says so itself (state DONE, x.forgotten) */
    struct pod_rec *r = id < e->pods.tab.n ? gp_idtab_get_raw(&e->pods.tab, id) : NULL;
    return r ? r : e->pods.gone_p;
}

static inline struct gp_pod *pod_at(const struct gp_engine *e, uint32_t id)
{
    return &pod_rec_at(e, id)->pod;
}

static inline struct pod_x *px_at(const struct gp_engine *e, uint32_t id)
{
    return &pod_rec_at(e, id)->x;
}

/* The engine's state of a pod given by its record (what pod_at returned,
 * not a copy): px_at without the look-up. */
static inline struct pod_x *px_of(struct gp_pod *p)
{
    return &((struct pod_rec *)(void *)p)->x;
}

static inline const struct pod_x *pxc_of(const struct gp_pod *p)
{
    return &((const struct pod_rec *)(const void *)p)->x;
}

/* Gang gid (ids start at 1); NULL when freed or unknown. */
static inline struct group *group_at(const struct gp_engine *e, uint32_t gid)
{
    return gid ? gp_idtab_get(&e->groups, gid - 1) : NULL;
}

/* Pods like p that must be placed together: a gang's members still
 * needed, else 1. */
static inline uint32_t pod_need(const struct gp_engine *e, const struct gp_pod *p)
{
    if (!p->spec.group)
        return 1;
    const struct group *g = group_at(e, p->spec.group);
    return g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 1;
}

/* Whether pod `id` is in the store (issued and not forgotten). */
static inline bool pod_known(const struct gp_engine *e, uint32_t id)
{
    return pod_rec_at(e, id) != &e->pods.gone;
}

/* A topology domain of a gang attempt: one value of the gang's node label
 * and the free GPU-milli of its ready nodes. */
struct domain {
    const char *value;
    uint64_t free_milli;
};

/* ---- pods.c: the pods' storage ------------------------------------------- */
/* Forgets the pods ended since the last reap (the start of a cycle). */
void gp_eng_pods_reap(struct gp_engine *e);
/* The pods in q's pending list that are listed ended were dropped from it. */
void gp_eng_pods_unlisted(struct gp_engine *e);
void gp_eng_pods_free(struct gp_engine *e);

/* ---- filter.c: the node filters' parts ---------------------------------- */
bool gp_eng_selector_matches(const struct gp_node *n, const struct gp_pod *p);
bool gp_eng_has_label(const struct gp_node *n, const char *key, const char *value);
bool gp_eng_str_eq(const char *a, const char *b);
bool gp_eng_taints_tolerated(const struct gp_node *n, const struct gp_pod *p);
bool gp_eng_tolerates(const struct gp_pod *p, const struct gp_taint *t);
bool gp_eng_model_quota_blocks(const struct gp_engine *e, const struct gp_pod *p, uint32_t m);
bool gp_eng_fits_empty(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p);
bool gp_eng_fits_some_empty(const struct gp_engine *e, const struct gp_pod *p);

/* ---- affinity.c: selectors, node affinity -------------------------------- */
/* A node's label as kube-scheduler's plugins read it (kubernetes.io/hostname
 * is the node's name unless it says otherwise); NULL when absent. */
const char *gp_eng_node_label(const struct gp_node *n, const char *key);
bool gp_eng_expr_matches(const struct gp_match_expr *x, const char *value);
bool gp_eng_selector_matches_labels(const struct gp_label_selector *s, const struct gp_kv *labels,
                                    size_t nlabels);
bool gp_eng_selector_empty(const struct gp_label_selector *s);
bool gp_eng_node_term_matches(const struct gp_node *n, const struct gp_node_term *t);
bool gp_eng_node_affinity_ok(const struct gp_node *n, const struct gp_pod *p);
bool gp_eng_node_inclusion(const struct gp_node *n, const struct gp_pod *p);
int64_t gp_eng_node_affinity_score(const struct gp_node *n, const struct gp_pod *p);

/* ---- topo.c, interpod.c, spread.c: pods counted per domain --------------- */
enum gp_err gp_eng_topo_pod_added(struct gp_engine *e, struct gp_pod *p);
void gp_eng_topo_bind(struct gp_engine *e, const struct gp_pod *p, const struct gp_node *n,
                      int sign);
enum gp_err gp_eng_topo_node_added(struct gp_engine *e, const struct gp_node *n);
void gp_eng_topo_node_gone(struct gp_engine *e, const struct gp_node *n);
void gp_eng_topo_free(struct gp_engine *e);
/* The domain of node n for key k: NONE without the label, TOPO_NEW for a
 * value no node in the cluster has (a probe). */
#define TOPO_NEW (NONE - 1)
uint32_t gp_eng_topo_dom(const struct gp_engine *e, uint32_t k, const struct gp_node *n);
int64_t gp_eng_tally_at(const struct gp_engine *e, uint32_t t, const struct gp_node *n);
bool gp_eng_term_matches(const struct gp_engine *e, const struct gp_pod_term *t,
                         const char *owner_ns, const struct gp_pod *p);
bool gp_eng_matcher_matches(const struct gp_engine *e, const struct matcher *m,
                            const struct gp_pod *p);
/* namespaces.c: namespace ns's labels (none when not given); false when no
 * namespace was ever given (each then has its name's label alone). */
bool gp_eng_ns_labels(const struct gp_engine *e, const char *ns, const struct gp_kv **labels,
                      size_t *nlabels);
void gp_eng_ns_free(struct gp_engine *e);
/* topo.c: the tallies of matchers with a namespaceSelector term, for the
 * bound pods of namespace ns (every one: NULL), counted out (sign -1) or
 * in (1) under the namespaces' labels as they are now. */
void gp_eng_topo_ns_recount(struct gp_engine *e, const char *ns, int sign);
const char *gp_eng_pod_ns(const struct gp_pod *p);
/* The prefilter state of pod p now (computed on first use); NULL when out
 * of memory. */
const struct topo_pre *gp_eng_topo_pre(const struct gp_engine *e, const struct gp_pod *p);
enum gp_filter gp_eng_topo_filter(const struct gp_engine *e, const struct gp_node *n,
                                  const struct gp_pod *p);
enum gp_filter gp_eng_spread_filter(const struct gp_engine *e, const struct topo_pre *pre,
                                    const struct gp_node *n, const struct gp_pod *p);
enum gp_filter gp_eng_interpod_filter(const struct gp_engine *e, const struct topo_pre *pre,
                                      const struct gp_node *n, const struct gp_pod *p);
bool gp_eng_spread_prefilter(const struct gp_engine *e, struct topo_pre *pre,
                             const struct gp_pod *p);
bool gp_eng_interpod_prefilter(const struct gp_engine *e, struct topo_pre *pre,
                               const struct gp_pod *p);
/* Raw scores of the candidates (prefer.c normalises them). */
void gp_eng_interpod_scores(const struct gp_engine *e, const struct gp_pod *p, const struct cand *c,
                            size_t n, int64_t *raw, bool *any);
bool gp_eng_spread_scores(const struct gp_engine *e, const struct gp_pod *p, const struct cand *c,
                          size_t n, int64_t *raw, bool *ignored);

/* Whether a bound pod's required anti-affinity term matches p (cached by
 * shape until e->topo.anti_gen changes). */
bool gp_eng_interpod_hit(const struct gp_engine *e, const struct gp_pod *p);
/* Whether p's topology filters only exclude domains: required
 * anti-affinity (its own, bound pods'), no required affinity nor
 * DoNotSchedule spreading (index.c's gp_eng_index_place_excl). */
bool gp_eng_interpod_excl_only(const struct gp_engine *e, const struct gp_pod *p);

/* Whether pod p's filters read other pods (it has such constraints, or a
 * bound pod's required anti-affinity term matches it). */
static inline bool topo_hard(const struct gp_engine *e, const struct gp_pod *p)
{
    uint32_t r = px_at(e, p->id)->cons;
    return (r != NONE && e->topo.recs.items[r].hard &&
            e->topo.recs.items[r].c == p->spec.constraints) ||
           (e->topo.anti_owners > 0 && gp_eng_interpod_hit(e, p));
}

/* Whether a bind may let p fit: its required affinity or DoNotSchedule
 * spreading wants pods somewhere. */
static inline bool cons_grows(const struct gp_pod_constraints *c)
{
    if (!c)
        return false;
    bool grows = c->naffinity > 0;
    for (size_t i = 0; i < c->nspread && !grows; i++)
        grows = !c->spread[i].schedule_anyway;
    return grows;
}

static inline bool pod_grows(const struct gp_engine *e, const struct gp_pod *p)
{
    (void)e;
    return cons_grows(p->spec.constraints);
}

/* The generation a failed attempt of p is remembered at: a pod whose
 * required affinity or DoNotSchedule spreading a bind may satisfy is tried
 * again after any bind or release, the others when capacity grows. */
static inline uint64_t pod_gen(const struct gp_engine *e, const struct gp_pod *p)
{
    return pod_grows(e, p) ? e->generation + e->topo.binds : e->generation;
}

/* The same for the pods of shape s (they share their constraints). */
static inline uint64_t shape_gen(const struct gp_engine *e, const struct shape *s)
{
    return cons_grows(s->key.constraints) ? e->generation + e->topo.binds : e->generation;
}

/* ---- prefer.c: preferences' scores added to the policy's ------------------ */
/* Whether p's placement adds preferences' scores to the policy's. */
bool gp_eng_soft(const struct gp_engine *e, const struct gp_pod *p);
/* The candidate that wins (index into c), c in node order; n > 0. */
size_t gp_eng_soft_choose(struct gp_engine *e, const struct gp_pod *p, const struct cand *c,
                          size_t n);

/* ---- place.c: one pod's placement, and the gang memo ---------------------- */
int gp_eng_memo_reserve(struct gang_memo *m, size_t nn);
void gp_eng_place(struct gp_engine *e, struct gp_pod *p, struct gp_decision *d);
/* Node n for pod p as the scan sees it: true when it is a candidate (it
 * passes the filters and has a valid pick: the policy's, else the default
 * one), with its score and pick; *f gets the filter that rejected it,
 * GP_FILTER_COUNT when none did. */
bool gp_eng_node_eval(struct gp_engine *e, struct gp_node *n, const struct gp_pod *p,
                      enum gp_filter *f, double *score, struct gp_pick *pick);

/* ---- index.c: the node index ---------------------------------------------- */
/* Node `node` changed (a bind, a release, added, drained, removed). */
void gp_eng_index_touch(struct gp_engine *e, uint32_t node);
/* Node `node`'s version: a number no other state of any node had; 0 when
 * not known. */
static inline uint64_t gp_eng_node_ver(const struct gp_engine *e, uint32_t node)
{
    return node < e->index.nver ? e->index.ver[node] : 0;
}
/* p's placement from its shape's ranking, as the scan of gp_eng_place()
 * makes it: *best (NULL: none fits) with its pick, and the explanation in
 * d. False when the index cannot answer (place.c says when it may ask). */
bool gp_eng_index_place(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                        struct gp_node **best, struct gp_pick *pick);
/* The same for a pod whose topology filters only exclude domains
 * (gp_eng_interpod_excl_only): the ranking's winners, best first, each the
 * topology filter rejects taken off the tree until one passes (and put
 * back). False when the index cannot answer, when more than an eighth of
 * the nodes were taken off, or when every candidate is excluded (the scan
 * then decides and explains). */
bool gp_eng_index_place_excl(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                             struct gp_node **best, struct gp_pick *pick);
/* The same under the head's reservation (backfill): the best candidate
 * that takes at most `spare` of the head's slots (gp_eng_resv_loss), as
 * the scan chooses it; *held: how many better ones would take more (0:
 * none). False when the index cannot answer, or p has no candidate at all
 * (the scan then says whether p is held back). */
bool gp_eng_index_place_resv(struct gp_engine *e, const struct gp_pod *p, int64_t spare,
                             struct gp_decision *d, struct gp_node **best, struct gp_pick *pick,
                             uint32_t *held);
/* The explanation the scan would give for p when it fits nowhere; false
 * when p fits somewhere or the index cannot say. */
bool gp_eng_index_explain(struct gp_engine *e, const struct gp_pod *p, struct gp_explain *out);
void gp_eng_index_free(struct gp_engine *e);
/* A walk over the nodes that may pass p's filters (filter_own) as far as
 * their free capacity, GPU model and sharing mode say: every node that
 * passes is among them, in increasing node id, so that a scan over them
 * makes the choice (and the policy's draws) of a scan over every node;
 * the nodes left out are rejected by a filter, and counted only when an
 * explanation needs them. False when the index cannot say (off, out of
 * memory, too many classes): the caller scans every node. */
bool gp_eng_cand_begin(struct gp_engine *e, const struct gp_pod *p, struct cand_walk *w);
/* The next candidate, NONE after the last. */
uint32_t gp_eng_cand_next(struct cand_walk *w);
/* The explanation of a pod that fits nowhere from the capacity index:
 * rejected[f] = the nodes whose first failing filter_own filter is f, as a
 * count over every node makes it, with a branch of a class counted at once
 * where every node in it fails the same filter first, and the other nodes
 * evaluated one by one. False (rejected untouched) when the index cannot
 * say: off or broken, a gang domain, or a pod's node selector or required
 * node affinity (the labels are per node). */
bool gp_eng_cand_explain(struct gp_engine *e, const struct gp_pod *p,
                         uint32_t rejected[GP_FILTER_COUNT]);

/* ---- node.c: what a bind takes from a node and a release gives back ------ */
void gp_eng_node_summarise(struct gp_node *n);
bool gp_eng_node_take(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick);
void gp_eng_node_give(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick);
void gp_eng_commit(struct gp_engine *e, struct gp_pod *p, struct gp_node *n,
                   const struct gp_pick *pick);
void gp_eng_release(struct gp_engine *e, struct gp_pod *p, bool grow);

/* ---- queue.c: pending lists, quotas, fair share --------------------------- */
void gp_eng_pending_remove(struct gp_engine *e, uint32_t pod);
/* After a cycle that wrote out[0..ndec): the pods it bound leave their
 * queues' pending lists, which then hold pending pods alone (a compaction
 * of every queue's list, pods.c), and the pending counts follow. (The line
 * of FIFO and SJF drops them in order.c.) */
void gp_eng_pending_tidy(struct gp_engine *e, const struct gp_decision *out, size_t ndec);
void gp_eng_queue_charge(struct gp_engine *e, const struct gp_pod *p, uint32_t model, int sign);
uint32_t gp_eng_quota_blocks(const struct gp_engine *e, const struct gp_pod *p, int64_t times);
bool gp_eng_quota_never_fits(const struct gp_engine *e, const struct gp_pod *p, uint32_t need);
void gp_eng_queue_limits(struct gp_engine *e, struct queue *q);
void gp_eng_queues_refresh(struct gp_engine *e);
uint32_t gp_eng_pick_queue(struct gp_engine *e);

/* The engine's order: FAIR as the queues keep it (priority, then age);
 * FIFO by age alone; SJF by duration hint (none after every known one),
 * then age. */
static inline struct okey okey_of(const struct gp_engine *e, const struct gp_pod *p)
{
    struct okey k = {0, p->seq};
    if (e->order == GP_ORDER_SJF)
        k.k = p->spec.duration_hint_s > 0 ? p->spec.duration_hint_s : (double)INFINITY;
    else if (e->order == GP_ORDER_FAIR)
        k.k = -(double)p->spec.priority;
    return k;
}

static inline bool okey_before(struct okey a, struct okey b)
{
    return a.k != b.k ? a.k < b.k : a.seq < b.seq;
}

static inline bool order_before(const struct gp_engine *e, const struct gp_pod *a,
                                const struct gp_pod *b)
{
    return okey_before(okey_of(e, a), okey_of(e, b));
}

/* ---- shape_key.c: request shapes compared by content ---------------------- */
uint64_t gp_eng_shape_hash(const struct shape_key *k);
bool gp_eng_shape_eq(const struct shape_key *a, const struct shape_key *b);
/* Whether two pods' constraints say the same, by content (NULL equals
 * only NULL): topo.c keeps one record for pods whose constraints are
 * alike though each reader's copy is its own (the live scheduler reads
 * each pod into its own arena). */
bool gp_eng_cons_eq(const struct gp_pod_constraints *a, const struct gp_pod_constraints *b);
/* Whether node n has what pod p asks of its other resources (struct
 * gp_scalar): free now, or (empty) all it offers; and the pod's amounts
 * taken from (sign 1) or given back to (-1) the node's free (filter.c). */
bool gp_eng_scalars_fit(const struct gp_node *n, const struct gp_pod *p, bool empty);
/* ports.c: whether p's host ports conflict with those the pods bound on
 * n hold (HostPortInfo.CheckConflict); a pod's bind (sign 1) or release
 * (-1) recorded; the lists freed. */
bool gp_eng_ports_conflict(const struct gp_engine *e, const struct gp_node *n,
                           const struct gp_pod *p);
void gp_eng_ports_bind(struct gp_engine *e, const struct gp_pod *p, uint32_t node, int sign);
void gp_eng_ports_free(struct gp_engine *e);

/* claims.c: p's claims counted as used (sign 1, as it binds) or not (-1);
 * whether a ReadWriteOncePod claim of p is used by another bound pod
 * (VolumeRestrictions' Filter: then no node passes, GP_FILTER_RWOP); the
 * counts made anew from the bound pods when a use could not be counted
 * (a cycle's start); the counts freed. */
void gp_eng_claims_bind(struct gp_engine *e, const struct gp_pod *p, int sign);
bool gp_eng_claims_held(const struct gp_engine *e, const struct gp_pod *p);
void gp_eng_claims_recount(struct gp_engine *e);
void gp_eng_claims_free(struct gp_engine *e);

/* csi.c: p's CSI volumes counted on node `node` (sign 1, as it binds) or
 * not (-1); whether p's new volumes would take node n past one of its
 * drivers' limits (NodeVolumeLimits' Filter, GP_FILTER_VOLUME_LIMITS; e
 * NULL: n as if empty, the "never fits" test); the counts made again
 * from the bound pods when one was lost (the cycle's start); freed. */
void gp_eng_csi_bind(struct gp_engine *e, const struct gp_pod *p, uint32_t node, int sign);
bool gp_eng_csi_exceeds(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p);
void gp_eng_csi_recount(struct gp_engine *e);
void gp_eng_csi_free(struct gp_engine *e);
void gp_eng_scalars_take(struct gp_node *n, const struct gp_pod *p, int sign);

/* ---- pending.c: pending pods by shape, and the walk over them ------------- */
enum gp_err gp_eng_walk_add(struct gp_engine *e, uint32_t pod);
void gp_eng_walk_remove(struct gp_engine *e, uint32_t pod);
/* Drops q's lists (a plain walk changed what they say); made again when
 * the walk next runs on q. */
void gp_eng_walk_drop(struct gp_engine *e, struct queue *q);
void gp_eng_walk_free(struct gp_engine *e, struct queue *q);
/* Lists of pod ids in the engine's order (util/olist.h): pod in at its
 * place (GP_ENOMEM: the list as it was), out (false: it was not there). */
enum gp_err gp_eng_plist_insert(const struct gp_engine *e, struct gp_olist *l, uint32_t pod);
bool gp_eng_plist_remove(const struct gp_engine *e, struct gp_olist *l, uint32_t pod);
/* The ordered walk's lists of q (FIFO, SJF): fresh pods are those without a
 * decision (pod_x.decided); made when missing. */
enum gp_err gp_eng_walk_lists(struct gp_engine *e, struct queue *q);
/* Pod `pod` had its first decision: no longer fresh. */
void gp_eng_walk_decided(struct gp_engine *e, uint32_t pod);
/* The first rank of l whose pod comes after the pod of key k. */
size_t gp_eng_plist_after(const struct gp_engine *e, const struct gp_olist *l, struct okey k);
/* Whether a cycle with this budget walks q by shape. */
bool gp_eng_walk_fast(const struct gp_engine *e, const struct queue *q, size_t budget);
/* Before a cycle's first pick of queues: q's heap of lists. */
enum gp_err gp_eng_walk_begin(struct gp_engine *e, struct queue *q);
/* Tries q's pods in order until something is bound (*changed) or none is
 * left; false when the cycle must stop (out full). */
bool gp_eng_walk_step(struct gp_engine *e, struct queue *q, struct gp_decision *out, size_t cap,
                      size_t *ndec, size_t *tried, bool *full, bool *changed);
/* After the cycle. */
void gp_eng_walk_end(struct gp_engine *e, struct queue *q);

/* ---- gang.c: gangs placed all or nothing --------------------------------- */
bool gp_eng_gang_try_domains(struct gp_engine *e, const struct group *g, const uint32_t *members,
                             size_t n, uint32_t need, struct gp_decision *out,
                             struct gp_decision *fail, bool *have_fail);
size_t gp_eng_place_gang(struct gp_engine *e, uint32_t gid, struct gp_decision *out);
size_t gp_eng_gang_pending(const struct gp_engine *e, uint32_t gid);
void gp_eng_group_maybe_free(struct gp_engine *e, uint32_t gid);

/* ---- preempt.c: preemption and reclaim ------------------------------------ */
void gp_eng_note_bound(struct gp_engine *e, const struct gp_pod *p);
void gp_eng_mature_check(struct gp_engine *e);
size_t gp_eng_preempt(struct gp_engine *e, struct gp_pod *p, uint32_t gid, struct gp_decision *out,
                      size_t room, bool *full);

/* ---- order.c: ordered cycles (FIFO, SJF) and backfill --------------------- */
/* Writes into the pods shape s passed over in a walk by shape what the
 * walk over the whole line would have (their tried_gen and blk). */
void gp_eng_lazy_write(struct gp_engine *e, struct shape *s);
size_t gp_eng_schedule_ordered(struct gp_engine *e, size_t budget, struct gp_decision *out,
                               size_t cap);

/* ---- resv.c: backfill's reservation of room -------------------------------- */
void gp_eng_ends_init(struct gp_engine *e);
/* Pod p was bound (sign 1) or released (-1): its expected end in or out. */
void gp_eng_ends_charge(struct gp_engine *e, const struct gp_pod *p, int sign);
/* Bound pod p's bind time was set back (a victim restored). */
void gp_eng_ends_rebound(struct gp_engine *e, const struct gp_pod *p);
/* Lists into e->ends the expected ends of the bound pods of queue x's
 * subtree (NONE: of every queue), sorted. False when out of memory. */
bool gp_eng_ends_list(struct gp_engine *e, uint32_t x);
/* How many pods like u fit node n as it is (up to cap). */
int64_t gp_eng_head_slots(const struct gp_engine *e, const struct gp_node *n,
                          const struct gp_pod *u, int64_t cap);
/* Head p, of which `need` pods must fit, does not fit for lack of room:
 * its reservation (kept when the head and the state are the same). */
void gp_eng_resv_compute(struct gp_engine *e, const struct gp_pod *p, uint32_t need);
bool gp_eng_resv_applies(const struct gp_engine *e, const struct gp_pod *p);
int64_t gp_eng_resv_loss(const struct gp_engine *e, const struct gp_node *n,
                         const struct gp_pod *p);
void gp_eng_resv_take(struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p);
void gp_eng_resv_undo(struct gp_engine *e, size_t mark);
void gp_eng_resv_free(struct gp_engine *e);

/* ---- cycle.c: the cycle and the engine's tables --------------------------- */
int gp_eng_model_intern(struct gp_engine *e, const char *name);
bool gp_eng_try_pod(struct gp_engine *e, struct gp_pod *p, struct gp_decision *out, size_t cap,
                    size_t *ndec, size_t *tried, bool *full, bool *changed);

/* Whether the node's declared driver runs the pod's CUDA (either unknown:
 * yes). */
static inline bool gp_eng_driver_ok(const struct gp_node *n, const struct gp_pod *p)
{
    return !p->spec.cuda_driver_min || !n->spec.driver_version ||
           n->spec.driver_version >= p->spec.cuda_driver_min;
}

/* filter.c: the first of the pod's volume conditions (model.h, struct
 * gp_volume_terms) node n fails, GP_FILTER_COUNT when it passes them all. */
enum gp_filter gp_eng_volumes_filter(const struct gp_node *n, const struct gp_pod *p);

/* filter_own's tests up to NodeResourcesFit's (the GPUs included). */
static inline enum gp_filter filter_node_fit(const struct gp_engine *e, const struct gp_node *n,
                                             const struct gp_pod *p)
{
    if (n->state != GP_NODE_READY)
        return GP_FILTER_NODE_STATE;
    if (p->label_filters) { /* the spec decides (a caller may test a copy without them) */
        if (p->spec.nnode_selector && !gp_eng_selector_matches(n, p))
            return GP_FILTER_SELECTOR;
        if (p->spec.constraints && p->spec.constraints->nnode_required &&
            !gp_eng_node_affinity_ok(n, p))
            return GP_FILTER_NODE_AFFINITY;
    }
    if (e->domain_key && !gp_eng_has_label(n, e->domain_key, e->domain_value))
        return GP_FILTER_TOPOLOGY;
    if (n->spec.ntaints && !gp_eng_taints_tolerated(n, p))
        return GP_FILTER_TAINT;
    uint32_t want = p->spec.gpu_count;
    /* whole GPUs, one pod each (the default sharing mode): share.c's
     * answers, inline */
    bool exclusive = n->spec.sharing && n->spec.sharing->mode == GP_SHARE_EXCLUSIVE;
    bool plain =
        !p->spec.share_modes && !p->spec.mig_profile && p->spec.gpu_resource != GP_GPU_RES_SHARED;
    if (want > 0 && n->spec.gpu_count > 0) {
        if (!(p->model_mask >> n->model & 1))
            return GP_FILTER_GPU_MODEL;
        if ((n->spec.sharing || !plain) && !(exclusive && plain) && !gp_share_mode_ok(n, p))
            return GP_FILTER_SHARING;
        if (!gp_eng_driver_ok(n, p))
            return GP_FILTER_DRIVER;
    }
    /* NodeResourcesFit's order (noderesources/fit.go): pods, cpu, memory,
     * the other resources */
    /* NodePorts runs before NodeResourcesFit (the default profile's order) */
    if (p->spec.nhost_ports && gp_eng_ports_conflict(e, n, p))
        return GP_FILTER_PORTS;
    if (n->pods >= n->pods_cap) /* (UINT32_MAX without a limit: one test) */
        return GP_FILTER_PODS;
    if (p->spec.cpu_milli > n->cpu_free_milli)
        return GP_FILTER_CPU;
    if (p->spec.mem_mib > n->mem_free_mib)
        return GP_FILTER_MEMORY;
    if (p->spec.nscalars && !gp_eng_scalars_fit(n, p, false))
        return GP_FILTER_SCALAR;
    if (want == 0)
        return GP_FILTER_COUNT;
    uint32_t milli = p->spec.gpu_milli, mem = p->spec.gpu_mem_mib;
    if (exclusive) { /* gp_share_filter: a fraction takes a whole GPU too */
        if (n->gpus_whole_free < want)
            return GP_FILTER_GPU_COUNT;
        return mem > n->spec.gpu_mem_mib ? GP_FILTER_GPU_MEMORY : GP_FILTER_COUNT;
    }
    if (n->spec.sharing)
        return gp_share_filter(n, p);
    if (milli == GP_GPU_MILLI) {
        if (n->gpus_whole_free < want)
            return GP_FILTER_GPU_COUNT;
        if (mem > n->spec.gpu_mem_mib)
            return GP_FILTER_GPU_MEMORY;
        return GP_FILTER_COUNT;
    }
    if (n->spec.gpu_count == 0)
        return GP_FILTER_GPU_COUNT;
    if (n->gpu_milli_max_free < milli)
        return GP_FILTER_GPU_SHARE;
    if (mem > 0) {
        for (uint32_t g = 0; g < n->spec.gpu_count; g++)
            if (n->gpu[g].milli_free >= milli && n->gpu[g].mem_free_mib >= mem)
                return GP_FILTER_COUNT;
        return GP_FILTER_GPU_MEMORY;
    }
    return GP_FILTER_COUNT;
}

/* The node filters without quotas, but the ones that read other pods: then
 * the pod's ReadWriteOncePod claims (VolumeRestrictions: the bound pods'
 * uses of a claim, the same on every node) and its volumes' conditions
 * (kube-scheduler's VolumeBinding and VolumeZone run after
 * NodeResourcesFit in the default profile). */
static inline enum gp_filter filter_own(const struct gp_engine *e, const struct gp_node *n,
                                        const struct gp_pod *p)
{
    enum gp_filter f = filter_node_fit(e, n, p);
    /* VolumeRestrictions runs after NodeResourcesFit, before VolumeBinding */
    if (f == GP_FILTER_COUNT && (p->label_filters & 8) && gp_eng_claims_held(e, p))
        f = GP_FILTER_RWOP;
    /* NodeVolumeLimits after VolumeRestrictions, before VolumeBinding */
    if (f == GP_FILTER_COUNT && p->spec.ncsi_volumes && n->spec.ncsi_limits &&
        gp_eng_csi_exceeds(e, n, p))
        f = GP_FILTER_VOLUME_LIMITS;
    if (f == GP_FILTER_COUNT && (p->label_filters & 4))
        f = gp_eng_volumes_filter(n, p);
    return f;
}

/* Whether filter_fit is every filter p must pass, so that what it and a
 * node-local policy say of a node depends on nothing but that node's state
 * and p's request shape: the node index (index.c) keeps them from one
 * decision to the next. Not for a pod whose filters or scores read the
 * other pods (inter-pod affinity, topology spread, preferences: topo.c,
 * prefer.c); the scan decides for those. */
static inline bool gp_eng_pod_indexable(const struct gp_engine *e, const struct gp_pod *p)
{
    /* (a ReadWriteOncePod claim: its filter reads the other pods, bit 3) */
    return !(p->label_filters & 8) && !topo_hard(e, p) && !gp_eng_soft(e, p);
}

/* Backfill: whether a pod of p's shape held back by the reservation at
 * this state and reservation may be held again from the shape's memory
 * (gp_eng_place, for a pod the reservation applies to and no gang's
 * rejections in play). */
static inline bool held_cacheable(const struct gp_engine *e, const struct gp_pod *p)
{
    return !e->domain_key && !e->no_index && (!e->policy || e->policy->node_local) &&
           gp_eng_pod_indexable(e, p);
}

/* The node filters without quotas: the pod's own, then kube-scheduler's
 * PodTopologySpread and InterPodAffinity, which read the other pods. */
static inline enum gp_filter filter_fit(const struct gp_engine *e, const struct gp_node *n,
                                        const struct gp_pod *p)
{
    enum gp_filter f = filter_own(e, n, p);
    if (f == GP_FILTER_COUNT && topo_hard(e, p))
        f = gp_eng_topo_filter(e, n, p);
    return f;
}

/* GPU milli a pod takes (a memory-only share takes none). */
static inline int64_t gpu_req(const struct gp_pod *p)
{
    return (int64_t)p->spec.gpu_count * p->spec.gpu_milli;
}

/* The pod's request of gpu, cpu and memory, as quotas count them. */
static inline void pod_request(const struct gp_pod *p, int64_t req[NBASIC])
{
    req[R_GPU] = gpu_req(p);
    req[R_CPU] = p->spec.cpu_milli;
    req[R_MEM] = p->spec.mem_mib;
}

#endif
