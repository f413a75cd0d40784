/* node_records.h - the records the engine keeps of the nodes' side of its
 * state, which struct gp_engine (internal.h) embeds: topology domains and
 * the pods counted per domain (inter-pod affinity, topology spread), the
 * candidates a placement scores, the capacity index and the node index
 * with its rankings, and the host ports each node's bound pods hold. Plain
 * types only; what works on them is declared in internal.h. Nothing
 * outside src/engine includes it. */
#ifndef GP_ENGINE_NODE_RECORDS_H
#define GP_ENGINE_NODE_RECORDS_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/vec.h"

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
    struct gp_ns_table *nst; /* namespaces' labels (namespaces.c); NULL: none given */
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

/* ports.c: the host ports the bound pods of one node hold */
struct port_use {
    uint32_t pod;
    const struct gp_host_port *hp;
};
struct port_list {
    struct port_use *items;
    uint32_t len, cap;
};

#endif
