/* pod_records.h - the records the engine keeps of the pods' side of its
 * state, which struct gp_engine (internal.h) embeds: gangs, the order keys
 * and the lists the ordered walks merge, queues with their quotas and
 * pending lists, request shapes, the per-pod state and the pods' storage,
 * backfill's reservation and its projection, preemption's victim units,
 * the gang memo and the FIFO walk's mark. Plain types only; what works on
 * them is declared in internal.h. Nothing outside src/engine includes it. */
#ifndef GP_ENGINE_POD_RECORDS_H
#define GP_ENGINE_POD_RECORDS_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/idtab.h"
#include "util/olist.h"
#include "util/vec.h"

/* No id: no pod, node, queue, shape or record. */
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
    /* its ReadWriteOncePod claims, by content (the others decide nothing
     * of where it fits) */
    const struct gp_claim_use *claims;
    size_t nclaims;
    const struct gp_csi_volume *csi_volumes; /* by content */
    size_t ncsi_volumes;
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
    bool kept;       /* the last ordered cycle ended with it on */
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

/* order.c: where the last FIFO cycle's walk ended and the state it ran
 * in (it is picked up there while that state holds). */
struct walk_mark {
    bool valid, resv_on;
    uint64_t gen, state_ver, victim_gen, topo_ver, pend_ver;
    size_t len;
};

#endif
