/* internal.h - what the engine's source files share, and what nothing
 * outside src/engine may include (drivers include engine.h alone): the
 * engine's state (struct gp_engine and the records it keeps of queues,
 * gangs, request shapes, reservations and preemption searches), the
 * functions one part calls in another (gp_eng_*, grouped by the file that
 * defines them), and the node filter, inline because every scan of the
 * nodes runs it. */
#ifndef GP_ENGINE_INTERNAL_H
#define GP_ENGINE_INTERNAL_H

#include "engine/engine.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/share.h"
#include "util/idtab.h"
#include "util/kheap.h"
#include "util/olist.h"
#include "util/vec.h"

#define NONE UINT32_MAX

/* Resources a quota counts: GPU milli of any model, cpu milli, memory MiB,
 * then GPU milli of each model of the model table. */
enum { R_GPU, R_CPU, R_MEM, R_MODEL, NRES = R_MODEL + GP_MAX_GPU_MODELS };
#define NBASIC R_MODEL

/* A gang and its members' state. */
struct group {
    struct gp_group_spec spec;
    GP_VEC(uint32_t) members; /* every pod added to it and not forgotten, in order */
    uint32_t bound;           /* members bound now */
    uint64_t cycle;           /* the scheduling cycle that last tried it */
    uint32_t queue;           /* its members' queue */
    uint64_t mark;            /* the preemption search that last looked at it */
    bool forgotten;           /* gp_engine_group_forget: freed when no member is left */
    /* order.c: whether packs_need members of shape packs_shape pack into
     * the empty cluster (`packs`), as of topo_ver packs_ver - 1; 0: never */
    uint64_t packs_ver;
    uint32_t packs_shape, packs_need;
    bool packs;
    /* gang.c: whether min(pending, needed) = never_k members of shape
     * never_shape (all its pending members) never fit, as of topo_ver
     * never_ver - 1; 0: never asked */
    uint64_t never_ver;
    uint32_t never_shape, never_k;
    bool never;
};

/* A pod's place in the engine's order (FIFO: seq; SJF: duration hint, then
 * seq; FAIR inside a queue: priority, then seq), as plain values that stay
 * true once the pod is gone. */
struct okey {
    double k;
    int64_t seq;
};

/* One list of pod ids the ordered walk by shape merges (order.c): a
 * shape's pending pods or only its fresh ones (shape set), or a queue's
 * gang members (shape NONE), from rank `at` on. */
struct ostream {
    const struct gp_olist *l;
    size_t at;
    struct okey key; /* of the pod at rank at */
    uint32_t id;     /* that pod, read when the list was at version lver */
    uint64_t lver;
    uint32_t shape;
    bool fresh;
    /* parked (order.c, a held run): the shape's pods from rank hold_from
     * up to `at` are held back again without a visit, written when the
     * walk passes `at` or the state changes */
    bool parked;
    size_t hold_from;
};

/* One list the walk of pending.c merges: a shape's pods (all of them from
 * the first on, or only its fresh ones), or with shape NONE the queue's
 * gang members from `at` on. */
struct stream {
    uint32_t shape;
    size_t at;
    bool fresh;
};

/* A queue: its quota as caps, its use, its pending pods in order and its
 * bound pods. Use counts the queue's own pods and its descendants'.
 * Pod lists in the engine's order are util/olist.h's B+ trees (pending.c,
 * gp_eng_plist_*): an arrival or a departure costs O(log n). */
struct queue {
    struct gp_queue_spec spec;
    uint32_t parent; /* NONE: top level */
    uint32_t depth;  /* 0 at the top */
    int64_t guar[NRES];
    int64_t cap[NRES]; /* guaranteed + borrowing limit; INT64_MAX: none */
    int64_t used[NRES];
    uint8_t guaranteed_res[NRES]; /* the resources with a guarantee */
    uint32_t nguaranteed_res;
    bool capped;       /* a finite cap on gpu, cpu or memory, here or above */
    bool model_capped; /* a finite per-model cap, here or above */
    bool guaranteed;   /* a guarantee here or above */
    bool may_preempt;  /* its pods may evict others */
    bool avail;        /* the cycle: pods left to try here or below */
    /* its pending pods in the order (priority, then age), and until the
     * end of a cycle the pods that cycle bound (gp_eng_pending_bound) */
    struct gp_olist pending;
    GP_VEC(uint32_t) bound; /* its own bound pods, in no order */
    size_t cursor;          /* the cycle's walk over pending: the next rank */
    size_t npend;           /* its pending pods */
    uint64_t ver;           /* bumped whenever its use changes */
    uint64_t compactions;   /* of `pending`: each drops every pod not pending (pods.c) */
    /* pending.c: its pending pods by shape (the shapes listed in `shapes`)
     * and its gang members, when `lists`; the walk's heap in a cycle where
     * `walk` is on */
    bool lists, walk;
    GP_VEC(uint32_t) shapes;
    struct gp_olist gangs;
    GP_VEC(struct stream) heap;
    /* ordered cycles (FIFO, SJF, backfill): a pod of this subtree hit this
     * queue's cap; with backfill, that pod's reservation of the quota */
    bool qblocked, qresv;
    uint32_t qhead;         /* the pod the reservation is for */
    uint64_t qresv_ver;     /* ver when it was computed */
    double qshadow_s;       /* when enough of the subtree's pods will have ended */
    int64_t qspare[NBASIC]; /* what is left of the cap then, beyond the head */
};

/* What decides where a pod fits, compared by content (shape_key.c: the
 * readers give every pod its own copy of its arrays, and pods of one
 * template must still be one shape); arrays in order, so equal requests
 * written in two orders get two shapes, different ones never one. */
struct shape_key {
    int64_t cpu_milli, mem_mib;
    uint32_t gpu_count, gpu_milli, gpu_mem_mib, queue;
    uint64_t model_mask;
    const struct gp_kv *node_selector;
    const struct gp_toleration *tolerations;
    size_t nnode_selector, ntolerations;
    uint8_t share_modes, gpu_resource;
    const char *mig_profile;
    /* the pod's affinity and spreading; its labels and namespace (what
     * other pods' terms select it by) */
    const struct gp_pod_constraints *constraints;
    const struct gp_kv *labels;
    size_t nlabels;
    const char *ns;
    uint32_t cuda_driver_min;
    uint32_t gpu_container_max;      /* failRequestsGreaterThanOne's count (share.c) */
    const struct gp_scalar *scalars; /* its other resources (model.h), by content */
    size_t nscalars;
    const struct gp_host_port *host_ports; /* by content */
    size_t nhost_ports;
};

struct shape {
    struct shape_key key;
    uint64_t hash;       /* gp_eng_shape_hash(&key) */
    uint64_t failed_gen; /* the generation of `failed`; UINT64_MAX: none */
    struct gp_decision failed;
    /* a pod alone of this shape and priority found no victims at this
     * victim generation */
    uint64_t preempt_failed_gen;
    int32_t preempt_failed_priority;
    /* ordered cycles: a pod alone of this shape can never fit (no node,
     * or a cap, too small even when empty), as of e->topo_ver */
    uint64_t hopeless_ver;
    bool hopeless;
    /* the node index (index.c): this shape's ranking, NONE: none; and how
     * often it was placed from a scan (a ranking is made on the second) */
    uint32_t rank;
    uint32_t placed;
    /* interpod.c: whether a bound pod's required anti-affinity term
     * matches its pods (labels and namespace are the shape's), as of
     * e->topo.anti_gen + 1 = anti_seen (0: not known) */
    uint64_t anti_seen;
    bool anti_hit;
    /* pending.c: its pending pods, those of them that never had a
     * decision, and whether it is on its queue's list of shapes */
    struct gp_olist pend, fresh;
    bool listed;
    /* place.c, backfill: a pod of this shape was held back by the
     * reservation at state_ver held_ver and reservation held_stamp, with
     * this explanation */
    uint64_t held_ver, held_stamp;
    struct gp_explain held_explain;
    /* gang.c, backfill: a gang without a topology key whose members are of
     * this shape was held back by the reservation at state_ver gheld_ver
     * and reservation gheld_stamp, its attempt placing gheld_placed
     * members before the first that failed (and adding gheld_binds to
     * topo.binds): a gang of this shape that needs more members than that
     * is held back alike (struct held_gang covers gangs with a topology) */
    uint64_t gheld_ver, gheld_stamp, gheld_binds;
    uint32_t gheld_placed;
    /* order.c, backfill: what its failure at blk_gen holds up */
    uint64_t blk_gen;
    uint8_t blk;
    uint32_t blk_queue;
    /* order.c, the walk by shape: at generation lazy_gen its pods that had
     * a decision, up to lazy_until in the order, were passed over as a
     * whole; each of them that does not say it was tried at that
     * generation was, with blk and blk_queue as above (written into the
     * pods before blk changes within the generation) */
    uint64_t lazy_gen;
    struct okey lazy_until;
    bool lazy_listed; /* on e->lazy_shapes during a walk */
};

/* The engine's own per-pod state, beside the public struct gp_pod. */
struct pod_x {
    uint32_t slot;        /* index in its queue's bound list, when bound */
    uint32_t cons;        /* its constraints' record (e->topo.recs); NONE: none */
    uint64_t preempt_gen; /* victim generation of its last failed preemption */
    double bound_at_s;    /* engine time of its bind, when bound */
    uint8_t blk;          /* ordered cycles: what its last failure blocks (enum blk) */
    uint32_t blk_queue;   /* BLK_QUOTA: the queue whose cap it hit */
    uint8_t decided;      /* ordered cycles: it had an UNSCHEDULABLE decision */
    uint8_t forgotten;    /* forgotten, its record kept while a pending list holds it */
    uint32_t end_at;      /* backfill, bound: 1 + its place in e->end_heap; 0: not there */
    /* 1 + its queue's `compactions` when it was bound from its pending
     * list, where it stays until the next compaction; 0: not there */
    uint64_t listed_at;
    /* the PodDisruptionBudgets (the driver's ids) a disruption of it
     * counts against: gp_engine_pod_set_pdbs; preempt.c */
    uint32_t *pdbs;
    uint32_t npdbs;
};

/* ---- the pods' storage (pods.c) -------------------------------------------
 * Pod ids are dense and never reused; the records live in a table of
 * chunks (util/idtab.h). A pod that has ended (finished, dropped or
 * evicted) and that the driver has forgotten (gp_engine_pod_forget) is
 * forgotten by the engine at the start of the next cycle (gp_eng_pods_reap):
 * from then on nothing of the engine refers to it, gp_engine_pod() returns
 * NULL and inside the engine its id reads as `gone` (state DONE); a chunk
 * whose every id has been forgotten is freed. So the memory the pods take
 * is bounded by the pods alive at once (and those that share their
 * chunks), not by every pod ever submitted. */
#ifndef GP_ENG_POD_CHUNK_SHIFT
#define GP_ENG_POD_CHUNK_SHIFT 6
#endif

struct pod_rec {
    struct gp_pod pod;
    struct pod_x x;
};

struct pod_store {
    struct gp_idtab tab;    /* struct pod_rec by pod id */
    GP_VEC(uint32_t) ended; /* ended pods the driver forgot since the last reap */
    /* ended pods still in their queue's pending list (bound from it, left
     * for a later compaction): forgotten after it */
    GP_VEC(uint32_t) listed;
    bool compacted;         /* a pending list was compacted since the last reap */
    struct pod_rec gone;    /* what a forgotten or unknown id reads as */
    struct pod_rec *gone_p; /* &gone (reached through a const engine) */
};

/* The record of pod `id`; the `gone` record (state DONE, no constraints)
 * for an id forgotten or never issued. Nothing but reads may reach it. */
static inline struct pod_rec *pod_rec_at(const struct gp_engine *e, uint32_t id);

/* What a pod that did not fit holds up in an ordered cycle (FIFO, SJF or
 * backfill; docs/ARCHITECTURE.md "Queue orders and backfill"). */
enum blk {
    BLK_NONE,  /* nothing: it can never fit, or its gang waits for members */
    BLK_ROOM,  /* the pods behind it (no room now: it heads the line) */
    BLK_QUOTA, /* the pods of the subtree of the queue whose cap it hit */
    BLK_HELD,  /* nothing: it was held back by a reservation (backfill) */
};

/* EASY backfilling: the reservation of the cycle's first pod that does
 * not fit for lack of room (the head). At shadow_s enough of the bound
 * pods will have ended (bind time + duration hint) for `need` pods like
 * the head to fit; `spare` is how many more than need fit then. The
 * projected nodes at shadow_s are e->proj. */
struct resv {
    bool on;         /* this cycle has a head: later pods are checked */
    bool valid;      /* the fields below were computed */
    uint32_t head;   /* the head pod (a gang: its first pending member) */
    uint32_t group;  /* the head's gang, 0 if none */
    uint32_t need;   /* pods like the head that must fit */
    double shadow_s; /* INFINITY: the known ends never make room */
    int64_t spare;
    uint64_t ver; /* e->state_ver it describes */
};

/* An undo record of the projection, for a gang attempt taken back. */
struct resv_undo {
    uint32_t node;
    bool projected; /* the node had a projection of its own (e->proj) before */
    int64_t spare;
    struct gp_node before; /* that projection, when it had one */
};

/* One bound pod released on a node's projection: the pods like the head
 * that fit the node once it and every pod before it in the node's
 * sequence are released. */
struct resv_step {
    uint32_t pod;
    int64_t slots;
};

/* What the reservation remembers of one node from one computation to the
 * next (resv.c, "the incremental reservation"): while the node is
 * unchanged (its version, index.c) and the head's key is the same
 * (e->rcache_epoch), slots0 is how many pods like the head fit it as it
 * is, and seq the releases an earlier walk made on it, in its order, with
 * the slots after each; `copy` is the node with every pod of seq released
 * (when copy_ok). m: how many of seq the current computation released. */
struct resv_node {
    uint64_t epoch, ver;
    int64_t slots0;
    uint32_t m;
    bool copy_ok;
    GP_VEC(struct resv_step) seq;
    struct gp_node copy;
};

/* A bound pod's expected end, for the projection. */
struct pod_end {
    double end_s;
    uint32_t pod;
};

/* What a preemption search could free on a node. */
struct freeable {
    int64_t gpu_milli, cpu_milli, mem_mib;
};

/* A set of victims evicted together: one pod, or a gang's bound members. */
struct unit {
    uint32_t first, n; /* pods in e->victims */
    int32_t priority;
    double bound_at_s; /* the latest bind among them */
    uint32_t key;      /* the newest pod id among them, the last tie-break */
    uint32_t vc, qc;   /* reclaim: the victim's and the preemptor's branches under
                        * their common ancestor */
    enum gp_evict_reason reason;
    bool pdb_violating; /* a member would break a PodDisruptionBudget, judged alone */
    bool budgets;       /* a member counts against a budget (gp_engine_pod_set_pdbs) */
};

/* During a gang attempt with a node-local policy (gp_policy_ops.node_local):
 * the member shape's score and pick on every node, kept from one member to
 * the next alike, and a tournament tree over them whose root is the node
 * gp_eng_place() would choose (the highest score, ties to the lowest id). Between
 * two members only the node the first went to changed, so the next member
 * rescores that node alone. Not used when a member's filters may change on
 * other nodes too (per-model quotas, a backfill reservation). */
struct gang_memo {
    uint32_t shape; /* the member shape it is for; NONE: off */
    bool valid;     /* filled by a scan of every node */
    uint32_t dirty; /* the node the last member went to; NONE: none */
    size_t cap;     /* nodes the arrays hold */
    size_t leaves;  /* a power of two, at least cap */
    double *score;  /* per node, valid where its leaf names it */
    struct gp_pick *pick;
    uint32_t *tree;                     /* 2 x leaves: each subtree's winner; NONE: no candidate */
    uint32_t rejected[GP_FILTER_COUNT]; /* the explanation of the nodes as memoised */
};

/* ---- topology domains and the pods counted in them (topo.c) -------------
 * kube-scheduler's InterPodAffinity and PodTopologySpread count, per value
 * of a node label (a domain: a node, a zone, a rack), the pods some
 * selector matches. Here the counts are kept as pods are bound and
 * released, not recounted per decision: a *tally* is one such count per
 * domain of one key, for one matcher (the pods a pod's term or constraint
 * selects) or for one term owners hold (the pods bound with that term of
 * their own, which others are checked against). docs/affinity.md. */

/* A node label some term or constraint counts over; per_node: the
 * pseudo-key whose domains are the nodes themselves. */
struct topo_key {
    const char *key;
    bool per_node;
    GP_VEC(uint32_t) dom;        /* per node id: its domain; NONE without the label */
    GP_VEC(const char *) values; /* per domain: the label's value */
    GP_VEC(uint32_t) live;       /* per domain: nodes in it that are not gone */
    uint32_t with;               /* nodes not gone that have the label */
    uint32_t *slots;             /* open addressing of values: domain + 1 */
    size_t nslots;
};

/* Which pods a tally counts: all of `terms` match (an affinity's required
 * terms, or one term), each in its namespaces (owner_ns by default); or,
 * for spreading, `sel` in the namespace ns. */
struct matcher {
    const struct gp_pod_term *terms;
    size_t nterms;
    const struct gp_label_selector *sel;
    const char *ns;
};

enum tally_kind {
    T_MATCH,     /* bound pods `matcher` matches */
    T_ANTI_REQ,  /* bound owners of a required anti-affinity term */
    T_AFF_REQ,   /* ... of a required affinity term (scores, hardPodAffinityWeight 1) */
    T_AFF_PREF,  /* ... of a preferred affinity term (scores + weight) */
    T_ANTI_PREF, /* ... of a preferred anti-affinity term (scores - weight) */
};

struct tally {
    uint8_t kind;
    uint32_t key;                   /* e->topo.keys index */
    uint32_t matcher;               /* T_MATCH: e->topo.matchers index */
    const struct gp_pod_term *term; /* the others: the owners' term */
    const char *ns;                 /* ... and the owners' namespace */
    GP_VEC(int64_t) count;          /* per domain: pods, or owners' weights */
    int64_t total;                  /* pods (owners) counted, in any domain */
};

/* What the pods of one kind (constraints and namespace) count and own:
 * tally indexes per term and constraint, in their order. */
struct cons_rec {
    const struct gp_pod_constraints *c;
    const char *ns;
    uint32_t aff_all;   /* required affinity: the matcher of all its terms; NONE */
    uint32_t *aff;      /* per required affinity term: T_MATCH (all terms, its key) */
    uint32_t *anti;     /* per required anti-affinity term: T_MATCH (the term, its key) */
    uint32_t *aff_pref; /* per preferred term: T_MATCH */
    uint32_t *anti_pref;
    uint32_t *spread;      /* per constraint: T_MATCH (its selector, its key) */
    uint32_t *spread_node; /* per constraint: T_MATCH (its selector, per node) */
    uint32_t *own;         /* tallies its bound pods add to, with own_w each */
    int64_t *own_w;
    size_t nown;
    bool grows;         /* a bind may let it fit: required affinity or DoNotSchedule spreading */
    bool hard;          /* required (anti-)affinity or DoNotSchedule spreading */
    bool soft;          /* preferred terms or ScheduleAnyway spreading */
    bool anti_owner;    /* its bound pods hold required anti-affinity terms */
    bool scoring_owner; /* its bound pods hold terms that score others */
};

/* The per-pod state kube-scheduler computes in PreFilter, for one pod at
 * one state_ver (topo.c fills it when a filter first needs it). */
struct topo_pre {
    uint32_t pod;
    uint64_t ver;
    bool valid;
    /* DoNotSchedule constraints: the counts per domain (the tally's own,
     * or computed from eligible nodes into counts[k]), the global
     * minimum and whether the pod counts itself */
    struct pre_spread {
        const int64_t *count; /* per domain of `key` */
        size_t ncount;
        size_t scratch_at; /* computed counts: their offset in scratch; SIZE_MAX: the tally's */
        uint32_t key;
        int64_t min;
        int32_t max_skew;
        bool self;
    } * sc;
    size_t nsc, sc_cap;
    GP_VEC(int64_t) scratch;  /* the computed counts, domains of every constraint in turn */
    bool aff_none;            /* no pod matches all its affinity terms anywhere */
    bool aff_self;            /* it matches all its own affinity terms */
    GP_VEC(uint32_t) ex_anti; /* owners' required anti-affinity tallies whose term matches it */
};

struct topo {
    GP_VEC(struct topo_key) keys;
    GP_VEC(struct matcher) matchers;
    GP_VEC(struct tally) tallies;
    GP_VEC(struct cons_rec) recs;
    uint32_t per_node;      /* the per-node pseudo-key; NONE until needed */
    int64_t anti_owners;    /* bound pods with required anti-affinity terms */
    int64_t scoring_owners; /* bound pods with terms that score others */
    uint64_t binds;         /* binds and releases, for the generation of pods that grow */
    /* changes when which pods the owners' required anti-affinity terms
     * match may change (a T_ANTI_REQ tally's total leaves or reaches 0, a
     * namespace's labels): struct shape's anti_seen */
    uint64_t anti_gen;
    struct topo_pre pre;
};

/* A feasible node of a placement with scores to combine (prefer.c). */
struct cand {
    uint32_t node;
    double score; /* the policy's */
    struct gp_pick pick;
};

struct ranking; /* index.c */

/* The capacity index (index.c): the nodes in classes of one GPU model and
 * sharing mode (GPU-less nodes in their own), each a tree over its members
 * in node order of the largest free CPU, memory, whole GPUs, share of one
 * GPU and the free MIG profiles below each branch; a pod's candidates are
 * the members of the classes it may use whose branches can hold it,
 * visited in node order. */
struct cap_sum {
    int64_t cpu_milli, mem_mib; /* the largest free; INT64_MIN: no ready node */
    uint32_t whole;             /* the most GPUs free of one node */
    uint32_t share_milli;       /* the largest free milli of one GPU */
    uint32_t mig_mask;          /* any free MIG profile (mig_mask, ORed) */
    uint32_t ready;             /* ready nodes below (a count) */
    /* the smallest free of a ready node; INT64_MAX: none (for the counts
     * of an explanation, gp_eng_cand_explain) */
    int64_t cpu_min_milli, mem_min_mib;
};
struct cap_class {
    uint32_t model;          /* NONE: nodes without GPUs */
    int mode;                /* -1: no sharing spec, else enum gp_share_mode */
    GP_VEC(uint32_t) member; /* node ids, increasing */
    size_t leaves;           /* a power of two, at least the members */
    struct cap_sum *tree;    /* 2 x leaves, the root at 1 */
    uint32_t ntaint;         /* members with taints (specs do not change) */
    uint32_t nlimited;       /* members with a pod limit (spec.pods_limited) */
    uint32_t drv_lo;         /* the lowest known driver version; UINT32_MAX: none */
};
struct cap_index {
    struct cap_class *cls;
    size_t ncls, capcls;
    GP_VEC(uint32_t) slot; /* per node: its class */
    GP_VEC(uint32_t) pos;  /* per node: its place among the class's members */
    bool broken;           /* out of memory once: every decision scans */
};
/* A walk over a pod's candidates (gp_eng_cand_begin/next). */
#define CAND_CLASSES_MAX 64
struct cap_req {
    int64_t cpu_milli, mem_mib;
    uint32_t whole, share_milli;
    bool mig;
};
struct cand_walk {
    size_t n;
    struct {
        const struct cap_class *c;
        struct cap_req req;
        size_t j; /* the member it is at */
    } cur[CAND_CLASSES_MAX];
};

/* The node index (index.c): rankings of every node for the shapes placed
 * most recently, and the log of the nodes changed since (the node ids; the
 * first has sequence number `base`). */
struct node_index {
    struct ranking *rank; /* RANK_MAX of them, nrank in use */
    size_t nrank;
    GP_VEC(uint32_t) log;
    uint64_t base;
    uint64_t clock; /* uses, for the least recently used */
    uint64_t *seen; /* per node: the replay that last saw it */
    size_t nseen;
    uint64_t stamp;       /* replays so far */
    GP_VEC(uint32_t) out; /* gp_eng_index_place_resv: the leaves taken off */
    /* per node: its version, a new number from ver_clock on every change
     * (gp_eng_index_touch); 0 when unknown (out of memory) */
    uint64_t *ver;
    size_t nver;
    uint64_t ver_clock;
    struct cap_index cap;
    /* gp_eng_place's decisions, and the nodes they looked at (filters run,
     * from a scan, a ranking's fill or replay, or an explanation's count):
     * gp_engine_place_stats */
    uint64_t places, visits;
};

/* order.c: where the last FIFO cycle's walk ended and the state it ran
 * in (it is picked up there while that state holds). */
struct walk_mark {
    bool valid, resv_on;
    uint64_t gen, state_ver, victim_gen, topo_ver, pend_ver;
    size_t len;
};

/* ports.c: the host ports the bound pods of one node hold */
struct port_use {
    uint32_t pod;
    const struct gp_host_port *hp;
};
struct port_list {
    struct port_use *items;
    uint32_t len, cap;
};

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
bool gp_eng_term_matches(const struct gp_pod_term *t, const char *owner_ns, const struct gp_pod *p);
bool gp_eng_matcher_matches(const struct matcher *m, const struct gp_pod *p);
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
 * the pod's volumes' conditions (kube-scheduler's VolumeBinding and
 * VolumeZone run after NodeResourcesFit in the default profile). */
static inline enum gp_filter filter_own(const struct gp_engine *e, const struct gp_node *n,
                                        const struct gp_pod *p)
{
    enum gp_filter f = filter_node_fit(e, n, p);
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
    return !topo_hard(e, p) && !gp_eng_soft(e, p);
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
