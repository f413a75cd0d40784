/* engine.c - the scheduling cycle: the queues (quotas, fair share), the
 * filters, the policy's score, the commit and the release, gangs placed
 * all or nothing, and preemption and reclaim, with per-node summaries,
 * per-queue use and cluster totals kept incrementally. Pure: no I/O, no
 * clock, no globals. */
#include "engine/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/share.h"
#include "util/vec.h"

#define NONE UINT32_MAX

/* Resources a quota counts: GPU milli of any model, cpu milli, memory MiB,
 * then GPU milli of each model of the model table. */
enum { R_GPU, R_CPU, R_MEM, R_MODEL, NRES = R_MODEL + GP_MAX_GPU_MODELS };
#define NBASIC R_MODEL

/* A gang and its members' state. */
struct group {
    struct gp_group_spec spec;
    GP_VEC(uint32_t) members; /* every pod ever added to it, in order */
    uint32_t bound;           /* members bound now */
    uint64_t cycle;           /* the scheduling cycle that last tried it */
    uint32_t queue;           /* its members' queue */
    uint64_t mark;            /* the preemption search that last looked at it */
};

/* A queue: its quota as caps, its use, its pending pods in order and its
 * bound pods. Use counts the queue's own pods and its descendants'. */
struct queue {
    struct gp_queue_spec spec;
    uint32_t parent; /* NONE: top level */
    uint32_t depth;  /* 0 at the top */
    int64_t guar[NRES];
    int64_t cap[NRES]; /* guaranteed + borrowing limit; INT64_MAX: none */
    int64_t used[NRES];
    uint8_t guaranteed_res[NRES]; /* the resources with a guarantee */
    uint32_t nguaranteed_res;
    bool capped;              /* a finite cap on gpu, cpu or memory, here or above */
    bool model_capped;        /* a finite per-model cap, here or above */
    bool guaranteed;          /* a guarantee here or above */
    bool may_preempt;         /* its pods may evict others */
    bool avail;               /* the cycle: pods left to try here or below */
    GP_VEC(uint32_t) pending; /* pod ids: priority, then age */
    GP_VEC(uint32_t) bound;   /* its own bound pods, in no order */
    size_t cursor, keep;      /* the cycle's walk over pending */
    uint64_t ver;             /* bumped whenever its use changes */
    /* ordered cycles (FIFO, SJF, backfill): a pod of this subtree hit this
     * queue's cap; with backfill, that pod's reservation of the quota */
    bool qblocked, qresv;
    uint32_t qhead;         /* the pod the reservation is for */
    uint64_t qresv_ver;     /* ver when it was computed */
    double qshadow_s;       /* when enough of the subtree's pods will have ended */
    int64_t qspare[NBASIC]; /* what is left of the cap then, beyond the head */
};

/* What decides where a pod fits. Arrays are compared by identity (pods
 * made from one template share them), so equal requests may get two
 * shapes, different ones never one. */
struct shape_key {
    int64_t cpu_milli, mem_mib;
    uint32_t gpu_count, gpu_milli, gpu_mem_mib, queue;
    uint64_t model_mask;
    const void *node_selector, *tolerations;
    size_t nnode_selector, ntolerations;
    uint8_t share_modes;
    const char *mig_profile; /* by identity too */
};

struct shape {
    struct shape_key key;
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
};

/* The engine's own per-pod state, beside the public struct gp_pod. */
struct pod_x {
    uint32_t slot;        /* index in its queue's bound list, when bound */
    uint64_t preempt_gen; /* victim generation of its last failed preemption */
    double bound_at_s;    /* engine time of its bind, when bound */
    uint8_t blk;          /* ordered cycles: what its last failure blocks (enum blk) */
    uint32_t blk_queue;   /* BLK_QUOTA: the queue whose cap it hit */
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
    bool projected; /* the node had a projection before */
    int64_t spare;
    struct gp_node before;
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
};

/* During a gang attempt with a node-local policy (gp_policy_ops.node_local):
 * the member shape's score and pick on every node, kept from one member to
 * the next alike, and a tournament tree over them whose root is the node
 * place() would choose (the highest score, ties to the lowest id). Between
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

struct gp_engine {
    const struct gp_policy_ops *policy;
    void *policy_state;
    struct gp_rng rng;
    GP_VEC(struct gp_node) nodes;
    GP_VEC(struct gp_pod) pods;
    GP_VEC(struct pod_x) px;     /* beside pods */
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
        uint32_t pod; /* a member of the failed gang, for its shape */
        uint32_t need;
        struct gp_decision decision;
    } failed_gangs[16];
    uint32_t nfailed_gangs;
    GP_VEC(struct gp_shape) target;
    uint64_t target_version;
    int64_t next_seq;
    struct gp_engine_totals totals;
    GP_VEC(struct group) groups; /* gang id - 1 */
    GP_VEC(uint32_t) scratch;    /* a gang's members during its attempt */
    uint64_t cycle;              /* scheduling cycles so far */
    /* while a gang tries one topology domain: nodes outside it are rejected */
    const char *domain_key, *domain_value;
    double now_s; /* of the last cycle */
    enum gp_order order;
    bool backfill;
    uint64_t state_ver;          /* bumped on every bind, release and node change */
    uint64_t topo_ver;           /* bumped when a node or a queue is added or changed */
    GP_VEC(uint32_t) all;        /* FIFO, SJF: every pending pod, in the order */
    struct resv resv;            /* backfill: the head's reservation */
    GP_VEC(struct gp_node) proj; /* backfill: nodes as projected at the shadow time */
    GP_VEC(uint64_t) proj_mark;  /* proj[i] is valid when proj_mark[i] == proj_stamp */
    uint64_t proj_stamp;
    GP_VEC(struct pod_end) ends; /* backfill: scratch for the projection */
    GP_VEC(struct resv_undo) resv_log;
    bool held; /* the last place() found room only on reserved capacity */
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
    uint64_t mark;                    /* preemption searches so far */
    /* gangs' searches that failed at `failed_victim_gen` (a pod alone's
     * failure is kept in its shape) */
    struct failed_preempt {
        uint32_t pod;
        uint32_t need; /* 0 for a pod alone */
    } failed_preempt[16];
    uint32_t nfailed_preempt;
    uint64_t failed_victim_gen;
};

const char *gp_filter_name(enum gp_filter f)
{
    static const char *const names[] = {"node-state", "node-selector", "topology",   "taint",
                                        "gpu-model",  "sharing",       "cpu",        "memory",
                                        "gpu-count",  "gpu-share",     "gpu-memory", "gpu-replica",
                                        "mig",        "quota"};
    _Static_assert(sizeof names / sizeof names[0] == GP_FILTER_COUNT, "one name per filter");
    return (unsigned)f < GP_FILTER_COUNT ? names[f] : "none";
}

const char *gp_filter_text(enum gp_filter f)
{
    static const char *const texts[] = {
#define GP_FILTER_TEXT(name, text) text,
        GP_FILTERS(GP_FILTER_TEXT)
#undef GP_FILTER_TEXT
    };
    return (unsigned)f < GP_FILTER_COUNT ? texts[f] : "fits";
}

enum gp_filter gp_explain_main(const struct gp_explain *x)
{
    enum gp_filter best = GP_FILTER_COUNT;
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        if (f != GP_FILTER_TOPOLOGY && x->rejected[f] > 0 &&
            (best == GP_FILTER_COUNT || x->rejected[f] > x->rejected[best]))
            best = (enum gp_filter)f;
    /* nodes outside a gang's domain say why only when nothing else does */
    if (best == GP_FILTER_COUNT && x->rejected[GP_FILTER_TOPOLOGY] > 0)
        best = GP_FILTER_TOPOLOGY;
    return best;
}

static void queue_limits(struct gp_engine *e, struct queue *q);
static void queues_refresh(struct gp_engine *e);

struct gp_engine *gp_engine_new(const struct gp_policy_ops *policy, uint64_t seed)
{
    struct gp_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->policy = policy;
    e->gang_rej_shape = NONE;
    e->memo.shape = NONE;
    gp_rng_seed(&e->rng, seed);
    struct queue q0;
    memset(&q0, 0, sizeof q0);
    q0.spec.name = "default";
    q0.spec.weight = 1;
    q0.spec.no_preempt_within = true;
    q0.parent = NONE;
    if (GP_VEC_PUSH(&e->queues, q0) != 0) {
        free(e);
        return NULL;
    }
    queue_limits(e, &e->queues.items[0]);
    queues_refresh(e);
    if (policy && policy->init && policy->init(e, &e->policy_state) != 0) {
        GP_VEC_FREE(&e->queues);
        free(e);
        return NULL;
    }
    return e;
}

void gp_engine_free(struct gp_engine *e)
{
    if (!e)
        return;
    if (e->policy && e->policy->destroy)
        e->policy->destroy(e->policy_state);
    GP_VEC_FREE(&e->nodes);
    GP_VEC_FREE(&e->pods);
    GP_VEC_FREE(&e->px);
    for (size_t i = 0; i < e->queues.len; i++) {
        GP_VEC_FREE(&e->queues.items[i].pending);
        GP_VEC_FREE(&e->queues.items[i].bound);
    }
    GP_VEC_FREE(&e->queues);
    GP_VEC_FREE(&e->shapes);
    free(e->shape_slots);
    GP_VEC_FREE(&e->target);
    for (size_t i = 0; i < e->groups.len; i++)
        GP_VEC_FREE(&e->groups.items[i].members);
    GP_VEC_FREE(&e->groups);
    GP_VEC_FREE(&e->scratch);
    GP_VEC_FREE(&e->immature);
    GP_VEC_FREE(&e->units);
    GP_VEC_FREE(&e->victims);
    GP_VEC_FREE(&e->chosen);
    GP_VEC_FREE(&e->gmembers);
    GP_VEC_FREE(&e->tmp);
    GP_VEC_FREE(&e->freeable);
    GP_VEC_FREE(&e->proj);
    GP_VEC_FREE(&e->proj_mark);
    GP_VEC_FREE(&e->all);
    free(e->gang_rej);
    free(e->memo.score);
    free(e->memo.pick);
    free(e->memo.tree);
    GP_VEC_FREE(&e->ends);
    GP_VEC_FREE(&e->resv_log);
    free(e);
}

/* Returns the model's index, interning it; -1 when the table is full. */
static int model_intern(struct gp_engine *e, const char *name)
{
    for (uint32_t i = 0; i < e->nmodels; i++)
        if (strcmp(e->models[i], name) == 0)
            return (int)i;
    if (e->nmodels == GP_MAX_GPU_MODELS)
        return -1;
    e->models[e->nmodels] = name;
    return (int)e->nmodels++;
}

static void node_summarise(struct gp_node *n)
{
    n->gpus_whole_free = 0;
    n->gpu_milli_free = 0;
    n->gpu_milli_max_free = 0;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        uint32_t m = n->gpu[g].milli_free;
        n->gpus_whole_free += m == GP_GPU_MILLI && n->gpu[g].pods == 0;
        n->gpu_milli_free += m;
        if (m > n->gpu_milli_max_free)
            n->gpu_milli_max_free = m;
    }
}

enum gp_err gp_engine_set_order(struct gp_engine *e, enum gp_order order, bool backfill)
{
    if (e->pods.len > 0)
        return GP_ESTATE;
    if (order != GP_ORDER_FAIR && order != GP_ORDER_FIFO && order != GP_ORDER_SJF)
        return GP_EINVALID;
    e->order = order;
    e->backfill = backfill;
    return GP_OK;
}

enum gp_err gp_engine_node_probe(struct gp_engine *e, const struct gp_node_spec *spec,
                                 struct gp_node *out)
{
    if (spec->gpu_count > GP_MAX_GPUS_PER_NODE || spec->cpu_milli < 0 || spec->mem_mib < 0)
        return GP_EINVALID;
    struct gp_node n;
    memset(&n, 0, sizeof n);
    n.spec = *spec;
    n.id = NONE;
    n.state = GP_NODE_READY;
    n.cpu_free_milli = spec->cpu_milli;
    n.mem_free_mib = spec->mem_mib;
    if (spec->gpu_count > 0) {
        int m = model_intern(e, spec->gpu_model ? spec->gpu_model : "");
        if (m < 0)
            return GP_ELIMIT;
        n.model = (uint32_t)m;
    }
    for (uint32_t g = 0; g < spec->gpu_count; g++) {
        n.gpu[g].milli_free = GP_GPU_MILLI;
        n.gpu[g].mem_free_mib = spec->gpu_mem_mib;
    }
    gp_share_node_init(&n);
    node_summarise(&n);
    *out = n;
    return GP_OK;
}

enum gp_err gp_engine_node_add(struct gp_engine *e, const struct gp_node_spec *spec,
                               uint32_t *out_id)
{
    struct gp_node n;
    enum gp_err err = gp_engine_node_probe(e, spec, &n);
    if (err != GP_OK)
        return err;
    n.id = (uint32_t)e->nodes.len;
    if (GP_VEC_PUSH(&e->nodes, n) != 0)
        return GP_ENOMEM;
    e->totals.nodes_ready++;
    e->totals.gpus += spec->gpu_count;
    e->totals.gpu_milli_total += (uint64_t)spec->gpu_count * GP_GPU_MILLI;
    e->totals.cpu_milli_total += spec->cpu_milli;
    e->totals.mem_mib_total += spec->mem_mib;
    e->generation++;
    e->victim_gen++;
    e->state_ver++;
    e->topo_ver++;
    if (out_id)
        *out_id = n.id;
    return GP_OK;
}

enum gp_err gp_engine_node_drain(struct gp_engine *e, uint32_t id)
{
    if (id >= e->nodes.len || e->nodes.items[id].state != GP_NODE_READY)
        return GP_EINVALID;
    e->nodes.items[id].state = GP_NODE_DRAINING;
    e->victim_gen++;
    e->state_ver++;
    e->topo_ver++;
    return GP_OK;
}

enum gp_err gp_engine_node_remove(struct gp_engine *e, uint32_t id)
{
    if (id >= e->nodes.len || e->nodes.items[id].state == GP_NODE_GONE)
        return GP_EINVALID;
    struct gp_node *n = &e->nodes.items[id];
    if (n->pods > 0)
        return GP_ESTATE;
    n->state = GP_NODE_GONE;
    e->state_ver++;
    e->topo_ver++;
    e->totals.nodes_ready--;
    e->totals.gpus -= n->spec.gpu_count;
    e->totals.gpu_milli_total -= (uint64_t)n->spec.gpu_count * GP_GPU_MILLI;
    e->totals.cpu_milli_total -= n->spec.cpu_milli;
    e->totals.mem_mib_total -= n->spec.mem_mib;
    return GP_OK;
}

/* Queue order: higher priority first, then older (lower seq) first. */
static int queue_before(const struct gp_pod *a, const struct gp_pod *b)
{
    if (a->spec.priority != b->spec.priority)
        return a->spec.priority > b->spec.priority;
    return a->seq < b->seq;
}

/* A pod's duration hint as an SJF key: unknown (0) after every known one. */
static double sjf_key(const struct gp_pod *p)
{
    return p->spec.duration_hint_s > 0 ? p->spec.duration_hint_s : INFINITY;
}

/* The engine's order: FAIR as queue_before (inside a queue); FIFO by age
 * alone; SJF by duration hint, then age. */
static int pod_before(const struct gp_engine *e, const struct gp_pod *a, const struct gp_pod *b)
{
    switch (e->order) {
    case GP_ORDER_FIFO:
        return a->seq < b->seq;
    case GP_ORDER_SJF: {
        double ka = sjf_key(a), kb = sjf_key(b);
        if (ka != kb)
            return ka < kb;
        return a->seq < b->seq;
    }
    case GP_ORDER_FAIR:
        break;
    }
    return queue_before(a, b);
}

static enum gp_err pending_insert(struct gp_engine *e, uint32_t pod)
{
    const struct gp_pod *p = &e->pods.items[pod];
    struct queue *q = &e->queues.items[p->spec.queue];
    if (GP_VEC_RESERVE(&q->pending, q->pending.len + 1) != 0)
        return GP_ENOMEM;
    if (e->order != GP_ORDER_FAIR) { /* one list over every queue */
        if (GP_VEC_RESERVE(&e->all, e->all.len + 1) != 0)
            return GP_ENOMEM;
        size_t lo = 0, hi = e->all.len;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pod_before(e, p, &e->pods.items[e->all.items[mid]]))
                hi = mid;
            else
                lo = mid + 1;
        }
        memmove(&e->all.items[lo + 1], &e->all.items[lo],
                (e->all.len - lo) * sizeof e->all.items[0]);
        e->all.items[lo] = pod;
        e->all.len++;
    }
    size_t lo = 0, hi = q->pending.len;
    while (lo < hi) { /* first position whose pod p goes before */
        size_t mid = lo + (hi - lo) / 2;
        if (pod_before(e, p, &e->pods.items[q->pending.items[mid]]))
            hi = mid;
        else
            lo = mid + 1;
    }
    memmove(&q->pending.items[lo + 1], &q->pending.items[lo],
            (q->pending.len - lo) * sizeof q->pending.items[0]);
    q->pending.items[lo] = pod;
    q->pending.len++;
    e->npending++;
    return GP_OK;
}

static void pending_remove(struct gp_engine *e, uint32_t pod)
{
    for (size_t i = e->all.len; i-- > 0;) {
        if (e->all.items[i] == pod) {
            memmove(&e->all.items[i], &e->all.items[i + 1],
                    (e->all.len - i - 1) * sizeof e->all.items[0]);
            e->all.len--;
            break;
        }
    }
    struct queue *q = &e->queues.items[e->pods.items[pod].spec.queue];
    for (size_t i = 0; i < q->pending.len; i++) {
        if (q->pending.items[i] == pod) {
            memmove(&q->pending.items[i], &q->pending.items[i + 1],
                    (q->pending.len - i - 1) * sizeof q->pending.items[0]);
            q->pending.len--;
            e->npending--;
            return;
        }
    }
}

static uint64_t shape_hash(const struct shape_key *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    const uint64_t words[] = {(uint64_t)k->cpu_milli,
                              (uint64_t)k->mem_mib,
                              (uint64_t)k->gpu_count << 32 | k->gpu_milli,
                              (uint64_t)k->gpu_mem_mib << 32 | k->queue,
                              k->model_mask,
                              (uint64_t)(uintptr_t)k->node_selector ^ k->nnode_selector,
                              (uint64_t)(uintptr_t)k->tolerations ^ k->ntolerations,
                              (uint64_t)(uintptr_t)k->mig_profile ^ k->share_modes};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        h ^= words[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ULL;
    }
    return h ^ (h >> 31);
}

static bool shape_key_eq(const struct shape_key *a, const struct shape_key *b)
{
    return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
           a->gpu_count == b->gpu_count && a->gpu_milli == b->gpu_milli &&
           a->gpu_mem_mib == b->gpu_mem_mib && a->queue == b->queue &&
           a->model_mask == b->model_mask && a->node_selector == b->node_selector &&
           a->nnode_selector == b->nnode_selector && a->tolerations == b->tolerations &&
           a->ntolerations == b->ntolerations && a->share_modes == b->share_modes &&
           a->mig_profile == b->mig_profile;
}

/* The shape of key k, added when new; NONE when out of memory. */
static uint32_t shape_intern(struct gp_engine *e, const struct shape_key *k)
{
    if (2 * (e->shapes.len + 1) > e->nshape_slots) { /* grow and rehash */
        size_t n = e->nshape_slots ? 2 * e->nshape_slots : 64;
        uint32_t *slots = calloc(n, sizeof *slots);
        if (!slots)
            return NONE;
        for (size_t i = 0; i < e->shapes.len; i++) {
            size_t j = (size_t)shape_hash(&e->shapes.items[i].key) & (n - 1);
            while (slots[j])
                j = (j + 1) & (n - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(e->shape_slots);
        e->shape_slots = slots;
        e->nshape_slots = n;
    }
    size_t j = (size_t)shape_hash(k) & (e->nshape_slots - 1);
    for (; e->shape_slots[j]; j = (j + 1) & (e->nshape_slots - 1))
        if (shape_key_eq(&e->shapes.items[e->shape_slots[j] - 1].key, k))
            return e->shape_slots[j] - 1;
    struct shape s;
    memset(&s, 0, sizeof s);
    s.key = *k;
    s.failed_gen = UINT64_MAX;
    s.preempt_failed_gen = UINT64_MAX;
    s.hopeless_ver = UINT64_MAX;
    if (e->shapes.len >= NONE - 1 || GP_VEC_PUSH(&e->shapes, s) != 0)
        return NONE;
    e->shape_slots[j] = (uint32_t)e->shapes.len;
    return (uint32_t)e->shapes.len - 1;
}

enum gp_err gp_engine_pod_add(struct gp_engine *e, const struct gp_pod_spec *spec, double now_s,
                              uint32_t *out_id)
{
    if (spec->cpu_milli < 0 || spec->mem_mib < 0 || spec->gpu_count > GP_MAX_GPUS_PER_NODE)
        return GP_EINVALID;
    /* a share of one GPU may be memory only (gpu_milli 0, gpu_mem_mib > 0) */
    /* (or nothing at all: a replica of a shared GPU); MIG instances come
     * in any number, whatever their share */
    bool mig = spec->mig_profile != NULL;
    if (spec->gpu_count > 0 &&
        (spec->gpu_milli > GP_GPU_MILLI ||
         (spec->gpu_milli == 0 && !mig &&
          (spec->gpu_count > 1 || (spec->gpu_mem_mib == 0 && !spec->share_modes))) ||
         (spec->gpu_count > 1 && spec->gpu_milli != GP_GPU_MILLI && !mig)))
        return GP_EINVALID;
    if (mig && spec->gpu_count == 0)
        return GP_EINVALID;
    if (spec->group > e->groups.len || spec->queue >= e->queues.len)
        return GP_EINVALID;
    struct group *g = spec->group ? &e->groups.items[spec->group - 1] : NULL;
    if (g && g->members.len > 0 && g->queue != spec->queue)
        return GP_EINVALID; /* a gang lives in one queue */
    struct gp_pod p;
    memset(&p, 0, sizeof p);
    p.spec = *spec;
    p.id = (uint32_t)e->pods.len;
    p.state = GP_POD_PENDING;
    p.seq = e->next_seq++;
    p.added_at_s = now_s;
    p.tried_gen = UINT64_MAX;
    p.model_mask = spec->ngpu_models ? 0 : ~(uint64_t)0;
    for (size_t i = 0; i < spec->ngpu_models; i++) {
        int m = model_intern(e, spec->gpu_models[i]);
        if (m < 0)
            return GP_ELIMIT;
        p.model_mask |= (uint64_t)1 << m;
    }
    gp_share_pod_init(&p);
    struct shape_key k = {spec->cpu_milli,      spec->mem_mib,       spec->gpu_count,
                          spec->gpu_milli,      spec->gpu_mem_mib,   spec->queue,
                          p.model_mask,         spec->node_selector, spec->tolerations,
                          spec->nnode_selector, spec->ntolerations,  spec->share_modes,
                          spec->mig_profile};
    p.shape = shape_intern(e, &k);
    if (p.shape == NONE)
        return GP_ENOMEM;
    struct pod_x x = {NONE, UINT64_MAX, 0, BLK_NONE, NONE};
    struct queue *q = &e->queues.items[spec->queue];
    /* a queue's bound pods are some of its live ones: commit never grows */
    if (GP_VEC_RESERVE(&q->bound, q->pending.len + q->bound.len + 1) != 0 ||
        GP_VEC_RESERVE(&e->px, e->pods.len + 1) != 0 || GP_VEC_PUSH(&e->pods, p) != 0)
        return GP_ENOMEM;
    e->px.items[e->px.len++] = x;
    enum gp_err err = pending_insert(e, p.id);
    if (err == GP_OK && g && GP_VEC_PUSH(&g->members, p.id) != 0) {
        pending_remove(e, p.id);
        err = GP_ENOMEM;
    }
    if (err != GP_OK) {
        e->pods.len--;
        e->px.len--;
        return err;
    }
    if (g)
        g->queue = spec->queue;
    if (out_id)
        *out_id = p.id;
    return GP_OK;
}

static bool selector_matches(const struct gp_node *n, const struct gp_pod *p)
{
    for (size_t i = 0; i < p->spec.nnode_selector; i++) {
        const struct gp_kv *want = &p->spec.node_selector[i];
        bool found = false;
        for (size_t j = 0; j < n->spec.nlabels && !found; j++)
            found = strcmp(n->spec.labels[j].key, want->key) == 0 &&
                    strcmp(n->spec.labels[j].value, want->value) == 0;
        if (!found)
            return false;
    }
    return true;
}

static bool has_label(const struct gp_node *n, const char *key, const char *value)
{
    for (size_t j = 0; j < n->spec.nlabels; j++)
        if (strcmp(n->spec.labels[j].key, key) == 0)
            return !value || strcmp(n->spec.labels[j].value, value) == 0;
    return false;
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool tolerates(const struct gp_pod *p, const struct gp_taint *t)
{
    for (size_t i = 0; i < p->spec.ntolerations; i++) {
        const struct gp_toleration *tol = &p->spec.tolerations[i];
        if (!tol->any_effect && tol->effect != t->effect)
            continue;
        if (!tol->key || !*tol->key) {
            if (tol->op_exists)
                return true;
            continue;
        }
        if (strcmp(tol->key, t->key) != 0)
            continue;
        if (tol->op_exists || str_eq(tol->value, t->value))
            return true;
    }
    return false;
}

static bool taints_tolerated(const struct gp_node *n, const struct gp_pod *p)
{
    for (size_t i = 0; i < n->spec.ntaints; i++) {
        const struct gp_taint *t = &n->spec.taints[i];
        if (t->effect != GP_EFFECT_PREFER_NO_SCHEDULE && !tolerates(p, t))
            return false;
    }
    return true;
}

/* The node filters without quotas. */
static inline enum gp_filter filter_fit(const struct gp_engine *e, const struct gp_node *n,
                                        const struct gp_pod *p)
{
    if (n->state != GP_NODE_READY)
        return GP_FILTER_NODE_STATE;
    if (p->spec.nnode_selector && !selector_matches(n, p))
        return GP_FILTER_SELECTOR;
    if (e->domain_key && !has_label(n, e->domain_key, e->domain_value))
        return GP_FILTER_TOPOLOGY;
    if (n->spec.ntaints && !taints_tolerated(n, p))
        return GP_FILTER_TAINT;
    uint32_t want = p->spec.gpu_count;
    if (want > 0 && n->spec.gpu_count > 0) {
        if (!(p->model_mask >> n->model & 1))
            return GP_FILTER_GPU_MODEL;
        if ((n->spec.sharing || p->spec.share_modes || p->spec.mig_profile) &&
            !gp_share_mode_ok(n, p))
            return GP_FILTER_SHARING;
    }
    if (p->spec.cpu_milli > n->cpu_free_milli)
        return GP_FILTER_CPU;
    if (p->spec.mem_mib > n->mem_free_mib)
        return GP_FILTER_MEMORY;
    if (want == 0)
        return GP_FILTER_COUNT;
    if (n->spec.sharing)
        return gp_share_filter(n, p);
    uint32_t milli = p->spec.gpu_milli, mem = p->spec.gpu_mem_mib;
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

/* GPU milli a pod takes (a memory-only share takes none). */
static inline int64_t gpu_req(const struct gp_pod *p)
{
    return (int64_t)p->spec.gpu_count * p->spec.gpu_milli;
}

/* Whether the pod's GPUs on a node of model m would take its queue, or an
 * ancestor, over the per-model cap. */
static bool model_quota_blocks(const struct gp_engine *e, const struct gp_pod *p, uint32_t m)
{
    int64_t want = gpu_req(p);
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        if (q->cap[R_MODEL + m] != INT64_MAX && q->used[R_MODEL + m] + want > q->cap[R_MODEL + m])
            return true;
    }
    return false;
}

enum gp_filter gp_engine_filter(const struct gp_engine *e, const struct gp_node *n,
                                const struct gp_pod *p)
{
    enum gp_filter f = filter_fit(e, n, p);
    if (f == GP_FILTER_COUNT && e->model_quotas && p->spec.gpu_count > 0 &&
        e->queues.items[p->spec.queue].model_capped && model_quota_blocks(e, p, n->model))
        return GP_FILTER_QUOTA;
    return f;
}

int gp_engine_pick_default(const struct gp_node *n, const struct gp_pod *p, struct gp_pick *pick)
{
    uint32_t want = p->spec.gpu_count, milli = p->spec.gpu_milli, mem = p->spec.gpu_mem_mib;
    pick->ngpus = 0;
    if (want == 0)
        return 0;
    if (n->spec.sharing)
        return gp_share_pick(n, p, pick);
    if (milli == GP_GPU_MILLI) {
        /* a GPU with nothing on it has all its memory: the summary and the
         * node's GPU memory answer first */
        if (n->gpus_whole_free < want || mem > n->spec.gpu_mem_mib)
            return -1;
        return gp_share_pick_whole(n, want, pick); /* NVLink domains too */
    }
    int best = -1;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        const struct gp_gpu *gpu = &n->gpu[g];
        if (gpu->milli_free < milli || gpu->mem_free_mib < mem)
            continue;
        if (best < 0 || gpu->milli_free < n->gpu[best].milli_free)
            best = (int)g;
    }
    if (best < 0)
        return -1;
    pick->ngpus = 1;
    pick->gpu[0] = (uint8_t)best;
    return 0;
}

/* A policy's pick must name distinct GPUs of the node that can hold the pod. */
static bool pick_valid(const struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    if (pick->ngpus != p->spec.gpu_count || (n->spec.sharing && p->spec.gpu_count > 0))
        return false; /* on a shared GPU the engine chooses (share.c) */
    uint32_t seen = 0;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        uint32_t g = pick->gpu[i];
        if (g >= n->spec.gpu_count || (seen >> g & 1))
            return false;
        seen |= 1u << g;
        if (n->gpu[g].milli_free < p->spec.gpu_milli ||
            n->gpu[g].mem_free_mib < p->spec.gpu_mem_mib)
            return false;
        if (p->spec.gpu_milli == GP_GPU_MILLI && n->gpu[g].pods > 0)
            return false; /* a whole GPU must be empty, memory-only shares too */
    }
    return true;
}

/* Adds (sign 1) or takes back (-1) a pod's use to its queue and every
 * ancestor. */
static void queue_charge(struct gp_engine *e, const struct gp_pod *p, uint32_t model, int sign)
{
    int64_t gpu = sign * gpu_req(p), cpu = sign * p->spec.cpu_milli, mem = sign * p->spec.mem_mib;
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        struct queue *q = &e->queues.items[x];
        q->ver++;
        q->used[R_GPU] += gpu;
        q->used[R_CPU] += cpu;
        q->used[R_MEM] += mem;
        if (p->spec.gpu_count > 0)
            q->used[R_MODEL + model] += gpu;
    }
}

/* Takes a pod's CPU, memory and GPUs (as picked) from a node value;
 * returns true when its declared GPU memory did not fit (time-slicing
 * with oversubscription). */
static bool node_take(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    n->cpu_free_milli -= p->spec.cpu_milli;
    n->mem_free_mib -= p->spec.mem_mib;
    n->pods++;
    if (n->spec.sharing) {
        bool over = gp_share_take(n, p, pick);
        node_summarise(n);
        return over;
    }
    bool whole = p->spec.gpu_milli == GP_GPU_MILLI;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        struct gp_gpu *g = &n->gpu[pick->gpu[i]];
        g->milli_free -= p->spec.gpu_milli;
        /* a whole GPU is exclusive: its memory goes with it */
        g->mem_free_mib = whole ? 0 : g->mem_free_mib - p->spec.gpu_mem_mib;
        g->pods++;
    }
    node_summarise(n);
    return false;
}

/* Gives back what node_take took. */
static void node_give(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    n->cpu_free_milli += p->spec.cpu_milli;
    n->mem_free_mib += p->spec.mem_mib;
    n->pods--;
    if (n->spec.sharing) {
        gp_share_give(n, p, pick);
        node_summarise(n);
        return;
    }
    bool whole = p->spec.gpu_milli == GP_GPU_MILLI;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        struct gp_gpu *g = &n->gpu[pick->gpu[i]];
        g->milli_free += p->spec.gpu_milli;
        g->mem_free_mib = whole ? n->spec.gpu_mem_mib : g->mem_free_mib + p->spec.gpu_mem_mib;
        g->pods--;
    }
    node_summarise(n);
}

bool gp_engine_node_take(const struct gp_engine *e, struct gp_node *n, const struct gp_pod *p)
{
    struct gp_pick pick;
    if (filter_fit(e, n, p) != GP_FILTER_COUNT || gp_engine_pick_default(n, p, &pick) != 0)
        return false;
    node_take(n, p, &pick);
    return true;
}

static void commit(struct gp_engine *e, struct gp_pod *p, struct gp_node *n,
                   const struct gp_pick *pick)
{
    p->state = GP_POD_BOUND;
    p->node = n->id;
    p->pick = *pick;
    e->state_ver++;
    e->px.items[p->id].bound_at_s = e->now_s;
    struct queue *q = &e->queues.items[p->spec.queue];
    e->px.items[p->id].slot = (uint32_t)q->bound.len;
    q->bound.items[q->bound.len++] = p->id; /* room reserved by gp_engine_pod_add */
    queue_charge(e, p, n->model, 1);
    uint32_t free_before = n->gpu_milli_free;
    p->oversubscribed = node_take(n, p, pick);
    p->gpu_milli_taken = free_before - n->gpu_milli_free;
    e->totals.gpu_milli_alloc += p->gpu_milli_taken;
    e->totals.cpu_milli_alloc += p->spec.cpu_milli;
    e->totals.mem_mib_alloc += p->spec.mem_mib;
    e->totals.pods_bound++;
    if (p->spec.group)
        e->groups.items[p->spec.group - 1].bound++;
    if (e->policy && e->policy->on_bind)
        e->policy->on_bind(e->policy_state, e, n, p);
}

/* Gives a bound pod's resources back. `grow` bumps the cluster generation
 * (capacity grew); a gang's rollback restores an earlier state and does not. */
static void release(struct gp_engine *e, struct gp_pod *p, bool grow)
{
    struct gp_node *n = &e->nodes.items[p->node];
    struct queue *q = &e->queues.items[p->spec.queue];
    uint32_t slot = e->px.items[p->id].slot, last = q->bound.items[--q->bound.len];
    q->bound.items[slot] = last;
    e->px.items[last].slot = slot;
    e->px.items[p->id].slot = NONE;
    e->state_ver++;
    queue_charge(e, p, n->model, -1);
    node_give(n, p, &p->pick);
    e->totals.gpu_milli_alloc -= p->gpu_milli_taken;
    e->totals.cpu_milli_alloc -= p->spec.cpu_milli;
    e->totals.mem_mib_alloc -= p->spec.mem_mib;
    e->totals.pods_bound--;
    if (p->spec.group)
        e->groups.items[p->spec.group - 1].bound--;
    if (grow) {
        e->generation++;
        e->victim_gen++;
    }
    if (e->policy && e->policy->on_release)
        e->policy->on_release(e->policy_state, e, n, p);
}

enum gp_err gp_engine_pod_finished(struct gp_engine *e, uint32_t id)
{
    if (id >= e->pods.len)
        return GP_EINVALID;
    struct gp_pod *p = &e->pods.items[id];
    switch (p->state) {
    case GP_POD_PENDING:
        pending_remove(e, id);
        break;
    case GP_POD_BOUND:
        release(e, p, true);
        break;
    case GP_POD_DONE:
        return GP_ESTATE;
    }
    p->state = GP_POD_DONE;
    return GP_OK;
}

/* The pod's request of gpu, cpu and memory, as quotas count them. */
static void pod_request(const struct gp_pod *p, int64_t req[NBASIC])
{
    req[R_GPU] = gpu_req(p);
    req[R_CPU] = p->spec.cpu_milli;
    req[R_MEM] = p->spec.mem_mib;
}

/* The queue (the pod's own or an ancestor) whose cap on gpu, cpu or memory
 * a request of `times` pods like p would exceed; NONE when none. */
static uint32_t quota_blocks(const struct gp_engine *e, const struct gp_pod *p, int64_t times)
{
    int64_t req[NBASIC];
    pod_request(p, req);
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && q->cap[r] != INT64_MAX && (req[r] > (q->cap[r] - q->used[r]) / times))
                return x;
    }
    return NONE;
}

/* ---- backfill: the head's reservation ----------------------------------- */

/* How many pods like u fit node n as it is (up to cap): the node filters
 * without quotas, and for whole GPUs the free whole GPUs, cpu and memory;
 * a share is taken again and again on a copy. */
static int64_t head_slots(const struct gp_engine *e, const struct gp_node *n,
                          const struct gp_pod *u, int64_t cap)
{
    if (filter_fit(e, n, u) != GP_FILTER_COUNT)
        return 0;
    int64_t k = cap;
    if (u->spec.cpu_milli > 0 && n->cpu_free_milli / u->spec.cpu_milli < k)
        k = n->cpu_free_milli / u->spec.cpu_milli;
    if (u->spec.mem_mib > 0 && n->mem_free_mib / u->spec.mem_mib < k)
        k = n->mem_free_mib / u->spec.mem_mib;
    if (u->spec.gpu_count == 0)
        return k;
    if (u->spec.gpu_milli == GP_GPU_MILLI)
        return (int64_t)(n->gpus_whole_free / u->spec.gpu_count) < k
                   ? (int64_t)(n->gpus_whole_free / u->spec.gpu_count)
                   : k;
    struct gp_node c = *n;
    struct gp_pick pick;
    int64_t got = 0;
    while (got < k && filter_fit(e, &c, u) == GP_FILTER_COUNT &&
           gp_engine_pick_default(&c, u, &pick) == 0) {
        node_take(&c, u, &pick);
        got++;
    }
    return got;
}

/* Node i as projected at the shadow time (the node itself when no
 * release or backfilled pod touched it). */
static const struct gp_node *proj_get(const struct gp_engine *e, uint32_t i)
{
    return i < e->proj_mark.len && e->proj_mark.items[i] == e->proj_stamp ? &e->proj.items[i]
                                                                          : &e->nodes.items[i];
}

/* Does the reservation hold pod p back? Not the head (or its gang), nor a
 * pod whose hint says it ends by the shadow time. */
static bool resv_applies(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct resv *r = &e->resv;
    if (!r->on || p->id == r->head || (r->group && p->spec.group == r->group))
        return false;
    double h = p->spec.duration_hint_s;
    return !(h > 0 && e->now_s + h <= r->shadow_s);
}

/* How many of the head's slots at the shadow time pod p takes on node n. */
static int64_t resv_loss(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_pod *u = &e->pods.items[e->resv.head];
    const struct gp_node *at = proj_get(e, n->id);
    int64_t before = head_slots(e, at, u, e->resv.need);
    if (before == 0)
        return 0;
    struct gp_node c = *at;
    struct gp_pick pick;
    if (gp_engine_pick_default(&c, p, &pick) != 0)
        return before; /* cannot tell: count the node lost */
    node_take(&c, p, &pick);
    return before - head_slots(e, &c, u, e->resv.need);
}

/* Pod p, held back by the reservation, was bound on node n: the
 * projection loses what it takes (logged, for a gang attempt taken back). */
static void resv_take(struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    if (n->id >= e->proj.len)
        return; /* no projection (out of memory): nothing to follow */
    int64_t loss = resv_loss(e, n, p);
    bool projected = proj_get(e, n->id) != n;
    struct resv_undo u = {n->id, projected, e->resv.spare, *proj_get(e, n->id)};
    if (GP_VEC_PUSH(&e->resv_log, u) != 0) {
        e->resv.spare = -1; /* out of memory: hold back everything else */
        return;
    }
    if (!projected) {
        e->proj.items[n->id] = *n;
        e->proj_mark.items[n->id] = e->proj_stamp;
    }
    struct gp_node *at = &e->proj.items[n->id];
    struct gp_pick pick;
    if (gp_engine_pick_default(at, p, &pick) == 0)
        node_take(at, p, &pick);
    e->resv.spare -= loss;
}

/* Takes back the projection changes logged since `mark`. */
static void resv_undo(struct gp_engine *e, size_t mark)
{
    while (e->resv_log.len > mark) {
        const struct resv_undo *u = &e->resv_log.items[--e->resv_log.len];
        e->resv.spare = u->spare;
        e->proj.items[u->node] = u->before;
        if (!u->projected)
            e->proj_mark.items[u->node] = e->proj_stamp - 1;
    }
}

/* ---- gangs: the memo of a node-local policy's scores ------------------- */

/* Room in the memo for nn nodes. 0, or -1 when out of memory. */
static int memo_reserve(struct gang_memo *m, size_t nn)
{
    if (m->cap >= nn)
        return 0;
    size_t leaves = 1;
    while (leaves < nn)
        leaves *= 2;
    if (leaves > SIZE_MAX / (2 * sizeof *m->tree))
        return -1;
    double *score = realloc(m->score, nn * sizeof *score);
    if (score)
        m->score = score;
    struct gp_pick *pick = realloc(m->pick, nn * sizeof *pick);
    if (pick)
        m->pick = pick;
    uint32_t *tree = realloc(m->tree, 2 * leaves * sizeof *tree);
    if (tree)
        m->tree = tree;
    if (!score || !pick || !tree)
        return -1;
    m->cap = nn;
    m->leaves = leaves;
    return 0;
}

/* The winner of two subtrees, a's nodes before b's: the higher score, a
 * on ties, as place()'s scan in node order. */
static inline uint32_t memo_win(const struct gang_memo *m, uint32_t a, uint32_t b)
{
    if (a == NONE)
        return b;
    if (b == NONE)
        return a;
    return m->score[b] > m->score[a] ? b : a;
}

/* Sets node i's leaf (i, or NONE when it is no candidate) and the winners
 * above it. */
static void memo_set(struct gang_memo *m, uint32_t i, uint32_t leaf)
{
    size_t k = m->leaves + i;
    m->tree[k] = leaf;
    for (k /= 2; k >= 1; k /= 2)
        m->tree[k] = memo_win(m, m->tree[2 * k], m->tree[2 * k + 1]);
}

/* Filters and scores node n for pod p as place() does, for the memo: true
 * with its score and pick when it is a candidate (it passes the filters
 * and the pick is valid, or the default one fits); *f gets the filter that
 * rejected it, GP_FILTER_COUNT when none did. */
static bool memo_eval(struct gp_engine *e, struct gp_node *n, const struct gp_pod *p,
                      enum gp_filter *f, double *score, struct gp_pick *pick)
{
    *f = filter_fit(e, n, p);
    if (*f != GP_FILTER_COUNT)
        return false;
    memset(pick, 0, sizeof *pick);
    *score = e->policy->score(e->policy_state, e, n, p, pick);
    return pick_valid(n, p, pick) || gp_engine_pick_default(n, p, pick) == 0;
}

/* Brings the memo up to date for pod p: rescores the node the last member
 * went to. False when a score is not a number (the tree could not order
 * it as the scan does): the memo is then off for this attempt. */
static bool memo_update(struct gp_engine *e, const struct gp_pod *p)
{
    struct gang_memo *m = &e->memo;
    uint32_t i = m->dirty;
    if (i == NONE)
        return true;
    m->dirty = NONE;
    enum gp_filter f;
    double score;
    struct gp_pick pick;
    uint32_t leaf = NONE;
    if (memo_eval(e, &e->nodes.items[i], p, &f, &score, &pick)) {
        if (isnan(score)) {
            m->shape = NONE;
            return false;
        }
        m->score[i] = score;
        m->pick[i] = pick;
        leaf = i;
    } else if (f != GP_FILTER_COUNT) {
        m->rejected[f]++;
        e->gang_rej[i] = (uint8_t)(f + 1);
    }
    memo_set(m, i, leaf);
    return true;
}

/* Fills the memo for pod p from a scan of every node, and chooses as
 * place() does. Returns the best node (NULL: none) with its pick. */
static struct gp_node *memo_fill(struct gp_engine *e, const struct gp_pod *p, struct gp_decision *d,
                                 struct gp_pick *best_pick)
{
    struct gang_memo *m = &e->memo;
    uint8_t *rej = e->gang_rej;
    bool nan = false;
    for (size_t i = 0; i < e->nodes.len; i++) {
        m->tree[m->leaves + i] = NONE;
        if (rej[i]) { /* it rejected an earlier member alike */
            d->explain.rejected[rej[i] - 1]++;
            continue;
        }
        enum gp_filter f;
        double score;
        struct gp_pick pick;
        if (memo_eval(e, &e->nodes.items[i], p, &f, &score, &pick)) {
            nan |= isnan(score);
            m->score[i] = score;
            m->pick[i] = pick;
            m->tree[m->leaves + i] = (uint32_t)i;
        } else if (f != GP_FILTER_COUNT) {
            d->explain.rejected[f]++;
            rej[i] = (uint8_t)(f + 1);
        }
    }
    for (size_t i = e->nodes.len; i < m->leaves; i++)
        m->tree[m->leaves + i] = NONE;
    struct gp_node *best = NULL;
    if (nan) { /* as the scan: the first candidate, then any strictly better */
        double best_score = 0;
        for (size_t i = 0; i < e->nodes.len; i++) {
            if (m->tree[m->leaves + i] == NONE || (best && !(m->score[i] > best_score)))
                continue;
            best = &e->nodes.items[i];
            best_score = m->score[i];
        }
        m->shape = NONE; /* the tree cannot order such scores */
    } else {
        for (size_t k = m->leaves - 1; k >= 1; k--)
            m->tree[k] = memo_win(m, m->tree[2 * k], m->tree[2 * k + 1]);
        memcpy(m->rejected, d->explain.rejected, sizeof m->rejected);
        m->valid = true;
        m->dirty = NONE;
        if (m->tree[1] != NONE)
            best = &e->nodes.items[m->tree[1]];
    }
    if (best)
        *best_pick = m->pick[best->id];
    return best;
}

/* Filters every node, scores the feasible ones and commits the best. Fills
 * *d with a BIND or an UNSCHEDULABLE decision. */
static void place(struct gp_engine *e, struct gp_pod *p, struct gp_decision *d)
{
    memset(d, 0, sizeof *d);
    d->pod = p->id;
    d->quota_queue = GP_QUEUE_NONE;
    if (e->quotas && e->queues.items[p->spec.queue].capped) {
        uint32_t q = quota_blocks(e, p, 1);
        if (q != NONE) { /* no node is looked at: the queue says no */
            d->kind = GP_DECISION_UNSCHEDULABLE;
            d->quota_queue = q;
            d->explain.nodes_total = (uint32_t)e->nodes.len;
            d->explain.rejected[GP_FILTER_QUOTA] = (uint32_t)e->nodes.len;
            p->tried_gen = e->generation;
            return;
        }
    }
    struct gp_node *best = NULL;
    double best_score = 0;
    struct gp_pick best_pick = {0}, pick;
    bool model_quota =
        e->model_quotas && p->spec.gpu_count > 0 && e->queues.items[p->spec.queue].model_capped;
    bool resv = resv_applies(e, p);
    int64_t spare = e->resv.spare > 0 ? e->resv.spare : 0;
    uint32_t held = 0;
    uint8_t *rej = e->gang_rej_shape == p->shape ? e->gang_rej : NULL;
    /* a gang's member with a node-local policy: from the memo, when the
     * filters of the nodes it did not change stay as they were */
    struct gang_memo *m = &e->memo;
    bool memo = m->shape != NONE && m->shape == p->shape && rej && !model_quota && !resv;
    if (memo && m->valid && memo_update(e, p)) {
        memcpy(d->explain.rejected, m->rejected, sizeof m->rejected);
        if (m->tree[1] != NONE) {
            best = &e->nodes.items[m->tree[1]];
            best_pick = m->pick[m->tree[1]];
        }
        goto chosen;
    }
    m->valid = false;
    if (memo && m->shape != NONE) {
        best = memo_fill(e, p, d, &best_pick);
        goto chosen;
    }
    for (size_t i = 0; i < e->nodes.len; i++) {
        if (rej && rej[i]) { /* it rejected an earlier member alike */
            d->explain.rejected[rej[i] - 1]++;
            continue;
        }
        struct gp_node *n = &e->nodes.items[i];
        enum gp_filter f = filter_fit(e, n, p);
        if (f == GP_FILTER_COUNT && model_quota && model_quota_blocks(e, p, n->model))
            f = GP_FILTER_QUOTA; /* as gp_engine_filter */
        if (f != GP_FILTER_COUNT) {
            d->explain.rejected[f]++;
            if (rej)
                rej[i] = (uint8_t)(f + 1);
            continue;
        }
        if (resv && resv_loss(e, n, p) > spare) { /* it would delay the head */
            held++;
            continue;
        }
        double score;
        if (e->policy) {
            memset(&pick, 0, sizeof pick);
            score = e->policy->score(e->policy_state, e, n, p, &pick);
            /* the pick matters only on a node that would win: checked there */
            if (best && !(score > best_score))
                continue;
            if (!pick_valid(n, p, &pick) && gp_engine_pick_default(n, p, &pick) != 0)
                continue;
        } else {
            score = 0;
            gp_engine_pick_default(n, p, &pick);
        }
        if (!best || score > best_score) {
            best = n;
            best_score = score;
            best_pick = pick;
        }
    }
chosen:
    d->explain.nodes_total = (uint32_t)e->nodes.len;
    if (!best) {
        d->kind = GP_DECISION_UNSCHEDULABLE;
        p->tried_gen = e->generation;
        if (held)
            e->held = true;
        return;
    }
    d->kind = GP_DECISION_BIND;
    d->node = best->id;
    d->pick = best_pick;
    if (resv)
        resv_take(e, best, p); /* before the commit: the loss is measured on the projection */
    if (m->valid)
        m->dirty = best->id; /* the one node whose score the commit changes */
    commit(e, p, best, &best_pick);
}

/* The cached failure of a pod of p's shape at the current generation. */
static const struct gp_decision *failed_lookup(const struct gp_engine *e, const struct gp_pod *p)
{
    const struct shape *s = &e->shapes.items[p->shape];
    return s->failed_gen == e->generation ? &s->failed : NULL;
}

static void failed_remember(struct gp_engine *e, const struct gp_pod *p,
                            const struct gp_decision *d)
{
    struct shape *s = &e->shapes.items[p->shape];
    s->failed = *d;
    s->failed_gen = e->generation;
}

/* Could pod p fit node n if n were empty? (The "never fits" test.) */
static bool fits_empty(const struct gp_engine *e, const struct gp_node *n, const struct gp_pod *p)
{
    if (n->state != GP_NODE_READY || (p->spec.nnode_selector && !selector_matches(n, p)) ||
        (n->spec.ntaints && !taints_tolerated(n, p)))
        return false;
    (void)e;
    if (p->spec.cpu_milli > n->spec.cpu_milli || p->spec.mem_mib > n->spec.mem_mib)
        return false;
    if (p->spec.gpu_count == 0)
        return true;
    if (!(p->model_mask >> n->model & 1))
        return false;
    if (n->spec.sharing || p->spec.share_modes || p->spec.mig_profile) {
        if (n->spec.gpu_count == 0 || !gp_share_mode_ok(n, p))
            return false;
        if (n->mig_model >= 0) /* an instance of the profile on an empty node */
            return gp_share_empty_fits(n, p);
    }
    return p->spec.gpu_count <= n->spec.gpu_count && p->spec.gpu_mem_mib <= n->spec.gpu_mem_mib;
}

/* Whether the gang could fit the empty cluster, within the domain
 * key=value when key is set: every member fits some node of it when empty,
 * and its `need` first GPU requests fit the GPUs of the nodes that can take
 * a member (a capacity test: a gang that passes may still not pack). */
static bool gang_fits_empty(const struct gp_engine *e, const uint32_t *members, size_t n,
                            uint32_t need, const char *key, const char *value)
{
    uint64_t eligible = 0, wanted = 0;
    for (size_t k = 0; k < n; k++) {
        const struct gp_pod *p = &e->pods.items[members[k]];
        bool any = false;
        for (size_t i = 0; i < e->nodes.len && !any; i++) {
            const struct gp_node *node = &e->nodes.items[i];
            any = (!key || has_label(node, key, value)) && fits_empty(e, node, p);
        }
        if (!any)
            return false;
    }
    for (size_t i = 0; i < e->nodes.len; i++) {
        const struct gp_node *node = &e->nodes.items[i];
        if (key && !has_label(node, key, value))
            continue;
        for (size_t k = 0; k < n; k++) {
            if (fits_empty(e, node, &e->pods.items[members[k]])) {
                eligible += (uint64_t)node->spec.gpu_count * GP_GPU_MILLI;
                break;
            }
        }
    }
    for (size_t k = 0; k < n && k < need; k++) {
        const struct gp_pod *p = &e->pods.items[members[k]];
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

/* Whether `need` pods like p exceed a cap of its queue or an ancestor even
 * when the queue uses nothing: they can never run together. */
static bool quota_never_fits(const struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    int64_t req[NBASIC];
    pod_request(p, req);
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && q->cap[r] != INT64_MAX && req[r] > q->cap[r] / need)
                return true;
    }
    return false;
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
    bool memo = remember && e->policy && e->policy->node_local && memo_reserve(&e->memo, nn) == 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t shape = e->pods.items[members[k]].shape;
        if (remember && shape != e->gang_rej_shape) { /* the first member, or another shape */
            memset(e->gang_rej, 0, nn);
            e->gang_rej_shape = shape;
            e->memo.shape = memo ? shape : NONE;
            e->memo.valid = false;
        }
        place(e, &e->pods.items[members[k]], &out[k]);
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
    if (placed >= need)
        return true;
    for (size_t k = n; k-- > 0;) {
        struct gp_pod *p = &e->pods.items[members[k]];
        if (out[k].kind == GP_DECISION_BIND) {
            release(e, p, false);
            p->state = GP_POD_PENDING;
        }
    }
    resv_undo(e, mark);
    return false;
}

/* A topology domain of a gang attempt: one value of the gang's node label
 * and the free GPU-milli of its ready nodes. */
struct domain {
    const char *value;
    uint64_t free_milli;
};

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
static bool gang_try_domains(struct gp_engine *e, const struct group *g, const uint32_t *members,
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
        const struct gp_pod *p = &e->pods.items[members[k]];
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
    const struct gp_pod *p = &e->pods.items[member];
    for (uint32_t i = 0; i < e->nfailed_gangs; i++) {
        const struct failed_gang *f = &e->failed_gangs[i];
        const struct gp_pod *q = &e->pods.items[f->pod];
        const struct group *h = &e->groups.items[q->spec.group - 1];
        if (f->need == need && p->shape == q->shape &&
            str_eq(h->spec.topology_key, g->spec.topology_key) &&
            h->spec.topology_required == g->spec.topology_required)
            return &f->decision;
    }
    return NULL;
}

/* One attempt at a gang: a decision for each of its pending members, in
 * queue order, written to out (room for all of them is the caller's). */
static size_t place_gang(struct gp_engine *e, uint32_t gid, struct gp_decision *out)
{
    struct group *g = &e->groups.items[gid - 1];
    e->scratch.len = 0;
    for (size_t i = 0; i < g->members.len; i++) {
        uint32_t id = g->members.items[i];
        if (e->pods.items[id].state == GP_POD_PENDING)
            if (GP_VEC_PUSH(&e->scratch, id) != 0)
                return 0; /* out of memory: try again next cycle */
    }
    const uint32_t *members = e->scratch.items;
    size_t n = e->scratch.len;
    uint32_t need = g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 0;
    if (need == 0) { /* the gang runs: late members join one by one */
        for (size_t k = 0; k < n; k++)
            place(e, &e->pods.items[members[k]], &out[k]);
        return n;
    }
    struct gp_decision fail;
    bool have_fail = false;
    enum gp_gang_wait why = GP_GANG_MEMBERS;
    memset(&fail, 0, sizeof fail);
    fail.quota_queue = GP_QUEUE_NONE;
    if (n >= need) {
        const struct gp_decision *known = failed_gang_lookup(e, g, members[0], need);
        if (known) {
            fail = *known;
            why = known->gang;
        } else if (gang_try_domains(e, g, members, n, need, out, &fail, &have_fail)) {
            return n;
        } else {
            why = gang_never_fits(e, g, members, n, need) ||
                          quota_never_fits(e, &e->pods.items[members[0]], need)
                      ? GP_GANG_NEVER_FITS
                      : GP_GANG_NO_ROOM;
            fail.gang = why;
            if (!e->held && e->nfailed_gangs < sizeof e->failed_gangs / sizeof e->failed_gangs[0]) {
                struct failed_gang *f = &e->failed_gangs[e->nfailed_gangs++];
                f->pod = members[0];
                f->need = need;
                f->decision = fail;
            }
        }
    }
    for (size_t k = 0; k < n; k++) {
        struct gp_pod *p = &e->pods.items[members[k]];
        out[k] = fail;
        out[k].kind = GP_DECISION_UNSCHEDULABLE;
        out[k].pod = p->id;
        out[k].gang = why;
        out[k].explain.nodes_total = (uint32_t)e->nodes.len;
        /* waiting for members: try again when one arrives, whatever the cluster */
        p->tried_gen = why == GP_GANG_MEMBERS ? UINT64_MAX : e->generation;
    }
    return n;
}

static size_t gang_pending(const struct gp_engine *e, uint32_t gid)
{
    const struct group *g = &e->groups.items[gid - 1];
    size_t n = 0;
    for (size_t i = 0; i < g->members.len; i++)
        n += e->pods.items[g->members.items[i]].state == GP_POD_PENDING;
    return n;
}

/* ---- queues --------------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void quota_apply(struct queue *q, int r, const struct gp_quota *x)
{
    q->guar[r] = x->guaranteed;
    q->cap[r] = x->limited ? sat_add(x->guaranteed, x->borrow_limit) : INT64_MAX;
}

/* The guarantees and caps of q from its spec; its models are interned. */
static void queue_limits(struct gp_engine *e, struct queue *q)
{
    for (int r = 0; r < NRES; r++) {
        q->guar[r] = 0;
        q->cap[r] = INT64_MAX;
    }
    quota_apply(q, R_GPU, &q->spec.gpu_milli);
    quota_apply(q, R_CPU, &q->spec.cpu_milli);
    quota_apply(q, R_MEM, &q->spec.mem_mib);
    for (size_t i = 0; i < q->spec.nmodels; i++) {
        int m = model_intern(e, q->spec.models[i].model);
        if (m >= 0)
            quota_apply(q, R_MODEL + m, &q->spec.models[i].gpu_milli);
    }
    q->nguaranteed_res = 0;
    for (int r = 0; r < NRES; r++)
        if (q->guar[r] > 0)
            q->guaranteed_res[q->nguaranteed_res++] = (uint8_t)r;
}

/* The flags each queue inherits from its ancestors (parents come first). */
static void queues_refresh(struct gp_engine *e)
{
    e->quotas = e->model_quotas = e->preempt = false;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        const struct queue *up = q->parent == NONE ? NULL : &e->queues.items[q->parent];
        bool capped = false, model_capped = false, guaranteed = false;
        for (int r = 0; r < NRES; r++) {
            if (q->cap[r] != INT64_MAX)
                *(r < NBASIC ? &capped : &model_capped) = true;
            guaranteed |= q->guar[r] > 0;
        }
        q->capped = capped || (up && up->capped);
        q->model_capped = model_capped || (up && up->model_capped);
        q->guaranteed = guaranteed || (up && up->guaranteed);
        q->may_preempt = !q->spec.no_preempt_within || q->guaranteed;
        e->quotas |= q->capped;
        e->model_quotas |= q->model_capped;
        e->preempt |= q->may_preempt;
    }
}

static bool quota_ok(const struct gp_quota *q)
{
    return q->guaranteed >= 0 && (!q->limited || q->borrow_limit >= 0);
}

enum gp_err gp_engine_queue_set(struct gp_engine *e, const struct gp_queue_spec *spec,
                                uint32_t *out_id)
{
    if (!spec || !spec->name || !*spec->name || !(spec->weight >= 0) || spec->weight > 1e12 ||
        !(spec->min_runtime_s >= 0) || spec->min_runtime_s > 1e15 || !quota_ok(&spec->gpu_milli) ||
        !quota_ok(&spec->cpu_milli) || !quota_ok(&spec->mem_mib) ||
        spec->nmodels > GP_MAX_GPU_MODELS || (spec->nmodels && !spec->models))
        return GP_EINVALID;
    for (size_t i = 0; i < spec->nmodels; i++) {
        const struct gp_model_quota *m = &spec->models[i];
        if (!m->model || !*m->model || !quota_ok(&m->gpu_milli))
            return GP_EINVALID;
        for (size_t j = 0; j < i; j++)
            if (strcmp(spec->models[j].model, m->model) == 0)
                return GP_EINVALID;
        if (model_intern(e, m->model) < 0)
            return GP_ELIMIT;
    }
    uint32_t id = NONE;
    for (size_t i = 0; i < e->queues.len && id == NONE; i++)
        if (strcmp(e->queues.items[i].spec.name, spec->name) == 0)
            id = (uint32_t)i;
    uint32_t parent = spec->parent ? spec->parent : NONE;
    if (spec->parent >= e->queues.len || (id == 0 && parent != NONE) ||
        (id != NONE && e->queues.items[id].parent != parent))
        return GP_EINVALID;
    if (id == NONE) {
        struct queue q;
        memset(&q, 0, sizeof q);
        q.parent = parent;
        q.depth = parent == NONE ? 0 : e->queues.items[parent].depth + 1;
        if (e->queues.len >= NONE - 1 || GP_VEC_PUSH(&e->queues, q) != 0)
            return GP_ENOMEM;
        id = (uint32_t)e->queues.len - 1;
    }
    struct queue *q = &e->queues.items[id];
    q->spec = *spec;
    if (!(q->spec.weight > 0))
        q->spec.weight = 1;
    queue_limits(e, q);
    queues_refresh(e);
    e->generation++; /* what fits, and what may be evicted, may have changed */
    e->victim_gen++;
    e->state_ver++;
    e->topo_ver++;
    if (out_id)
        *out_id = id;
    return GP_OK;
}

size_t gp_engine_queue_count(const struct gp_engine *e)
{
    return e->queues.len;
}

const struct gp_queue_spec *gp_engine_queue_spec(const struct gp_engine *e, uint32_t id)
{
    return id < e->queues.len ? &e->queues.items[id].spec : NULL;
}

uint32_t gp_engine_queue_parent(const struct gp_engine *e, uint32_t id)
{
    return id < e->queues.len ? e->queues.items[id].parent : GP_QUEUE_NONE;
}

enum gp_err gp_engine_queue_usage(const struct gp_engine *e, uint32_t id,
                                  struct gp_queue_usage *out)
{
    if (id >= e->queues.len)
        return GP_EINVALID;
    const struct queue *q = &e->queues.items[id];
    out->gpu_milli = q->used[R_GPU];
    out->cpu_milli = q->used[R_CPU];
    out->mem_mib = q->used[R_MEM];
    out->pods_bound = (uint32_t)q->bound.len;
    out->pods_pending = 0;
    for (size_t i = 0; i < q->pending.len; i++)
        out->pods_pending += e->pods.items[q->pending.items[i]].state == GP_POD_PENDING;
    return GP_OK;
}

int64_t gp_engine_queue_model_used(const struct gp_engine *e, uint32_t id, uint32_t model)
{
    if (id >= e->queues.len || model >= GP_MAX_GPU_MODELS)
        return 0;
    return e->queues.items[id].used[R_MODEL + model];
}

/* ---- fair share ------------------------------------------------------------ */

/* A queue's fair-share key; the lower goes first. Tier 0: queues using less
 * than their guarantee, by the largest use/guarantee ratio over the
 * resources they are guaranteed. Tier 1: the others, by their dominant
 * share of the cluster (the largest use/capacity over gpu, cpu, memory).
 * Both are divided by the weight. */
static void queue_key(const struct gp_engine *e, const struct queue *q, int *tier, double *val)
{
    double g = -1;
    for (uint32_t i = 0; i < q->nguaranteed_res; i++) {
        int r = q->guaranteed_res[i];
        double x = (double)q->used[r] / (double)q->guar[r];
        if (x > g)
            g = x;
    }
    if (g >= 0 && g < 1) {
        *tier = 0;
        *val = g / q->spec.weight;
        return;
    }
    const struct gp_engine_totals *t = &e->totals;
    double d = 0;
    if (t->gpu_milli_total > 0)
        d = (double)q->used[R_GPU] / (double)t->gpu_milli_total;
    if (t->cpu_milli_total > 0 && (double)q->used[R_CPU] / (double)t->cpu_milli_total > d)
        d = (double)q->used[R_CPU] / (double)t->cpu_milli_total;
    if (t->mem_mib_total > 0 && (double)q->used[R_MEM] / (double)t->mem_mib_total > d)
        d = (double)q->used[R_MEM] / (double)t->mem_mib_total;
    *tier = 1;
    *val = d / q->spec.weight;
}

static bool queue_left(const struct queue *q)
{
    return q->cursor < q->pending.len;
}

/* The queue whose next pod the cycle tries: from the top of the tree, the
 * child with the lowest key among those with pods left, down to a queue
 * with pods of its own (which go before its children's); ties to the lower
 * id. NONE when every list is done. */
static uint32_t pick_queue(struct gp_engine *e)
{
    struct queue *qs = e->queues.items;
    size_t nq = e->queues.len;
    if (nq == 1)
        return queue_left(&qs[0]) ? 0 : NONE;
    bool any = false;
    for (size_t i = 0; i < nq; i++)
        qs[i].avail = false;
    for (size_t i = 0; i < nq; i++) {
        if (!queue_left(&qs[i]))
            continue;
        any = true;
        for (uint32_t x = (uint32_t)i; x != NONE && !qs[x].avail; x = qs[x].parent)
            qs[x].avail = true;
    }
    if (!any)
        return NONE;
    uint32_t at = NONE;
    for (;;) {
        if (at != NONE && queue_left(&qs[at]))
            return at;
        uint32_t best = NONE;
        int best_tier = 0;
        double best_val = 0;
        for (size_t i = 0; i < nq; i++) {
            if (qs[i].parent != at || !qs[i].avail)
                continue;
            int tier;
            double val;
            queue_key(e, &qs[i], &tier, &val);
            if (best == NONE || tier < best_tier || (tier == best_tier && val < best_val)) {
                best = (uint32_t)i;
                best_tier = tier;
                best_val = val;
            }
        }
        if (best == NONE)
            return NONE;
        at = best;
    }
}

/* ---- preemption and reclaim --------------------------------------------- */

/* A pod may be evicted once it has run its queue's minimum runtime, and
 * at least MIN_RUN_S whatever its queue says: never at the instant it was
 * bound (a bind and its eviction would chase each other in one instant). */
#define MIN_RUN_S 0.001

static double evictable_from(const struct gp_engine *e, const struct gp_pod *p)
{
    double min_s = e->queues.items[p->spec.queue].spec.min_runtime_s;
    return e->px.items[p->id].bound_at_s + (min_s > MIN_RUN_S ? min_s : MIN_RUN_S);
}

static bool evictable(const struct gp_engine *e, const struct gp_pod *p)
{
    return e->now_s >= evictable_from(e, p);
}

/* A pod was bound for real (not tentatively): a possible victim once it
 * has run (evictable). While any queue may evict, it is watched until then. */
static void note_bound(struct gp_engine *e, const struct gp_pod *p)
{
    /* no new victim yet: a pod bound now may be evicted only once it has
     * run, and mature_check says when (so a cycle's binds do not make the
     * failed searches of that cycle worth repeating) */
    if (!e->preempt)
        return;
    double from_s = evictable_from(e, p);
    if (GP_VEC_PUSH(&e->immature, p->id) != 0)
        from_s = e->now_s; /* out of memory: look again every cycle */
    if (e->immature.len == 1 || from_s < e->next_mature_s)
        e->next_mature_s = from_s;
}

/* Watched pods that became evictable are possible victims now: searches
 * that failed before may succeed. */
static void mature_check(struct gp_engine *e)
{
    if (e->immature.len == 0 || e->now_s < e->next_mature_s)
        return;
    size_t k = 0;
    bool matured = false;
    double next = 0;
    for (size_t i = 0; i < e->immature.len; i++) {
        const struct gp_pod *p = &e->pods.items[e->immature.items[i]];
        if (p->state != GP_POD_BOUND)
            continue;
        if (evictable(e, p)) {
            matured = true;
            continue;
        }
        double t = evictable_from(e, p);
        if (k == 0 || t < next)
            next = t;
        e->immature.items[k++] = p->id;
    }
    e->immature.len = k;
    e->next_mature_s = next;
    if (matured)
        e->victim_gen++;
}

double gp_engine_next_wake_s(const struct gp_engine *e)
{
    if (!e->preempt || e->immature.len == 0)
        return INFINITY;
    bool waiting = false;
    for (size_t i = 0; i < e->queues.len && !waiting; i++)
        waiting = e->queues.items[i].may_preempt && e->queues.items[i].pending.len > 0;
    if (!waiting)
        return INFINITY;
    return e->next_mature_s > e->now_s ? e->next_mature_s : INFINITY;
}

/* The lowest common ancestor of two queues; NONE for the root above the
 * top-level queues. */
static uint32_t queue_lca(const struct gp_engine *e, uint32_t a, uint32_t b)
{
    const struct queue *qs = e->queues.items;
    while (a != b && a != NONE && b != NONE) {
        uint32_t da = qs[a].depth, db = qs[b].depth;
        if (da >= db)
            a = qs[a].parent;
        if (db >= da)
            b = qs[b].parent;
    }
    return a == b ? a : NONE;
}

/* The ancestor of x (or x) whose parent is `top`. */
static uint32_t queue_below(const struct gp_engine *e, uint32_t top, uint32_t x)
{
    while (e->queues.items[x].parent != top)
        x = e->queues.items[x].parent;
    return x;
}

/* May a request `req` of queue x reclaim from another branch under the
 * parent of branch qc? Every queue from x up to qc stays within what it is
 * guaranteed with it, and qc is guaranteed something the request needs. */
static bool reclaim_right(const struct gp_engine *e, const struct gp_pod *p,
                          const int64_t req[NBASIC], uint32_t x, uint32_t qc, bool within_only)
{
    for (;; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && q->guar[r] > 0 && q->used[r] + req[r] > q->guar[r])
                return false;
        if (x == qc)
            break;
    }
    if (within_only)
        return true;
    const struct queue *c = &e->queues.items[qc];
    for (int r = 0; r < NBASIC; r++)
        if (req[r] > 0 && c->guar[r] > 0)
            return true;
    if (req[R_GPU] > 0) /* or a model it may run on, within that model's guarantee */
        for (uint32_t m = 0; m < e->nmodels; m++)
            if ((p->model_mask >> m & 1) && c->guar[R_MODEL + m] > 0 &&
                c->used[R_MODEL + m] + req[R_GPU] <= c->guar[R_MODEL + m])
                return true;
    return false;
}

/* Does branch vc use more than it is guaranteed of something branch qc is
 * guaranteed and the request needs? (If not, none of its pods can be
 * reclaimed for it: releasing victims only lowers the use.) */
static bool branch_borrowing(const struct gp_engine *e, uint32_t vc, uint32_t qc,
                             const int64_t req[NBASIC])
{
    const struct queue *v = &e->queues.items[vc], *q = &e->queues.items[qc];
    for (int r = 0; r < NBASIC; r++)
        if (req[r] > 0 && q->guar[r] > 0 && v->used[r] > v->guar[r])
            return true;
    for (uint32_t m = 0; req[R_GPU] > 0 && m < e->nmodels; m++)
        if (q->guar[R_MODEL + m] > 0 && v->used[R_MODEL + m] > v->guar[R_MODEL + m])
            return true;
    return false;
}

static bool reclaimable_chain(const struct gp_engine *e, uint32_t x, uint32_t vc)
{
    for (;; x = e->queues.items[x].parent) {
        if (e->queues.items[x].spec.not_reclaimable)
            return false;
        if (x == vc)
            return true;
    }
}

/* Is branch vc still borrowing something the preemptor needs and the unit
 * holds? (Checked as victims are taken, with those before it released.) */
static bool unit_borrowing(const struct gp_engine *e, const struct unit *u,
                           const int64_t need[NBASIC])
{
    /* only what the preemptor's branch is guaranteed can be taken back */
    const struct queue *vc = &e->queues.items[u->vc], *qc = &e->queues.items[u->qc];
    for (uint32_t i = 0; i < u->n; i++) {
        const struct gp_pod *v = &e->pods.items[e->victims.items[u->first + i]];
        int64_t held[NBASIC];
        pod_request(v, held);
        for (int r = 0; r < NBASIC; r++)
            if (need[r] > 0 && held[r] > 0 && qc->guar[r] > 0 && vc->used[r] > vc->guar[r])
                return true;
        uint32_t m = R_MODEL + e->nodes.items[v->node].model;
        if (need[R_GPU] > 0 && held[R_GPU] > 0 && qc->guar[m] > 0 && vc->used[m] > vc->guar[m])
            return true;
    }
    return false;
}

/* Cost order of victims: lowest priority first, then the most recently
 * bound, then the newest pod. */
static int unit_cmp(const void *pa, const void *pb)
{
    const struct unit *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->bound_at_s != b->bound_at_s)
        return a->bound_at_s > b->bound_at_s ? -1 : 1;
    return a->key > b->key ? -1 : a->key < b->key;
}

/* The possible victims of pod p (a gang's member when gid is set, for
 * `times` members): units of pods it may evict, in e->units, cost order. */
static size_t collect_units(struct gp_engine *e, const struct gp_pod *p, uint32_t gid,
                            uint32_t times)
{
    e->units.len = e->victims.len = 0;
    e->mark++;
    int64_t req[NBASIC];
    pod_request(p, req);
    for (int r = 0; r < NBASIC; r++)
        req[r] *= times;
    uint32_t own = p->spec.queue;
    /* reclaim needs the pod's own queue within its guarantee, at least */
    bool may_reclaim = e->queues.items[own].guaranteed && reclaim_right(e, p, req, own, own, true);
    for (uint32_t vq = 0; vq < e->queues.len; vq++) {
        const struct queue *q = &e->queues.items[vq];
        if (q->bound.len == 0)
            continue;
        enum gp_evict_reason reason = GP_EVICT_PREEMPTED;
        uint32_t vc = NONE, qc = NONE;
        if (vq == own) {
            if (q->spec.no_preempt_within)
                continue;
        } else {
            if (!may_reclaim)
                continue;
            uint32_t top = queue_lca(e, own, vq);
            if (top == own || top == vq)
                continue; /* one contains the other: no reclaim inside a lineage */
            vc = queue_below(e, top, vq);
            qc = queue_below(e, top, own);
            if (!reclaim_right(e, p, req, own, qc, false) || !reclaimable_chain(e, vq, vc) ||
                !branch_borrowing(e, vc, qc, req))
                continue;
            reason = GP_EVICT_RECLAIMED;
        }
        for (size_t i = 0; i < q->bound.len; i++) {
            const struct gp_pod *v = &e->pods.items[q->bound.items[i]];
            if (!evictable(e, v))
                continue;
            if (reason == GP_EVICT_PREEMPTED && v->spec.priority >= p->spec.priority)
                continue;
            struct unit u = {(uint32_t)e->victims.len,
                             0,
                             v->spec.priority,
                             e->px.items[v->id].bound_at_s,
                             v->id,
                             vc,
                             qc,
                             reason};
            if (v->spec.group) { /* a gang goes whole */
                struct group *g = &e->groups.items[v->spec.group - 1];
                if (v->spec.group == gid || g->mark == e->mark)
                    continue;
                g->mark = e->mark;
                bool ok = true;
                for (size_t k = 0; k < g->members.len && ok; k++) {
                    const struct gp_pod *m = &e->pods.items[g->members.items[k]];
                    if (m->state != GP_POD_BOUND)
                        continue;
                    ok = evictable(e, m) && GP_VEC_PUSH(&e->victims, m->id) == 0;
                    if (e->px.items[m->id].bound_at_s > u.bound_at_s)
                        u.bound_at_s = e->px.items[m->id].bound_at_s;
                    if (m->id > u.key)
                        u.key = m->id;
                }
                if (!ok) {
                    e->victims.len = u.first;
                    continue;
                }
            } else if (GP_VEC_PUSH(&e->victims, v->id) != 0) {
                continue;
            }
            u.n = (uint32_t)e->victims.len - u.first;
            if (GP_VEC_PUSH(&e->units, u) != 0)
                e->victims.len = u.first;
        }
    }
    return e->units.len;
}

static void unit_release(struct gp_engine *e, const struct unit *u)
{
    for (uint32_t i = 0; i < u->n; i++)
        release(e, &e->pods.items[e->victims.items[u->first + i]], false);
}

/* Puts a released unit back exactly where it was, as it was. */
static void unit_restore(struct gp_engine *e, const struct unit *u)
{
    for (uint32_t i = u->n; i-- > 0;) {
        struct gp_pod *v = &e->pods.items[e->victims.items[u->first + i]];
        double at = e->px.items[v->id].bound_at_s;
        commit(e, v, &e->nodes.items[v->node], &v->pick);
        e->px.items[v->id].bound_at_s = at;
    }
}

/* Takes back a gang's tentative binds. */
static void gang_undo(struct gp_engine *e, const uint32_t *members, size_t n,
                      const struct gp_decision *d)
{
    for (size_t k = n; k-- > 0;) {
        struct gp_pod *m = &e->pods.items[members[k]];
        if (d[k].kind == GP_DECISION_BIND) {
            release(e, m, false);
            m->state = GP_POD_PENDING;
        }
    }
}

/* Would the preemptor fit now? A pod: within its quotas and some node
 * passes every filter. A gang: a tentative placement, taken back. */
static bool preemptor_fits(struct gp_engine *e, struct gp_pod *p, const struct group *g,
                           uint32_t need)
{
    if (!g) {
        if (e->quotas && e->queues.items[p->spec.queue].capped && quota_blocks(e, p, 1) != NONE)
            return false;
        for (size_t i = 0; i < e->nodes.len; i++)
            if (gp_engine_filter(e, &e->nodes.items[i], p) == GP_FILTER_COUNT)
                return true;
        return false;
    }
    struct gp_decision fail;
    bool have_fail = false;
    const uint32_t *members = e->gmembers.items;
    size_t n = e->gmembers.len;
    if (!gang_try_domains(e, g, members, n, need, e->tmp.items, &fail, &have_fail))
        return false;
    gang_undo(e, members, n, e->tmp.items);
    return true;
}

static bool preempt_known_failed(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    if (need == 0) {
        const struct shape *s = &e->shapes.items[p->shape];
        return s->preempt_failed_gen == e->victim_gen &&
               s->preempt_failed_priority == p->spec.priority;
    }
    if (e->failed_victim_gen != e->victim_gen) {
        e->nfailed_preempt = 0;
        e->failed_victim_gen = e->victim_gen;
        return false;
    }
    for (uint32_t i = 0; i < e->nfailed_preempt; i++) {
        const struct failed_preempt *f = &e->failed_preempt[i];
        const struct gp_pod *q = &e->pods.items[f->pod];
        if (f->need != need || p->shape != q->shape || p->spec.priority != q->spec.priority)
            continue;
        if (need == 0)
            return true;
        const struct group *a = &e->groups.items[p->spec.group - 1];
        const struct group *b = &e->groups.items[q->spec.group - 1];
        if (str_eq(a->spec.topology_key, b->spec.topology_key) &&
            a->spec.topology_required == b->spec.topology_required)
            return true;
    }
    return false;
}

static void preempt_failed(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    if (need == 0) {
        struct shape *s = &e->shapes.items[p->shape];
        s->preempt_failed_gen = e->victim_gen;
        s->preempt_failed_priority = p->spec.priority;
        return;
    }
    if (e->failed_victim_gen != e->victim_gen) {
        e->nfailed_preempt = 0;
        e->failed_victim_gen = e->victim_gen;
    }
    if (e->nfailed_preempt < sizeof e->failed_preempt / sizeof e->failed_preempt[0]) {
        struct failed_preempt *f = &e->failed_preempt[e->nfailed_preempt++];
        f->pod = p->id;
        f->need = need;
    }
}

/* An upper bound, cheap enough to stop hopeless searches before they
 * release anything: could `need` pods like p (0: p alone) fit if every
 * candidate victim left? Per node, what is free plus what the victims
 * there hold, in GPU share, cpu and memory. */
static bool room_possible(struct gp_engine *e, const struct gp_pod *p, uint32_t need)
{
    size_t nn = e->nodes.len;
    if (GP_VEC_RESERVE(&e->freeable, nn) != 0)
        return true; /* cannot tell: search */
    struct freeable *f = e->freeable.items;
    memset(f, 0, nn * sizeof *f);
    for (size_t i = 0; i < e->victims.len; i++) {
        const struct gp_pod *v = &e->pods.items[e->victims.items[i]];
        f[v->node].gpu_milli += gpu_req(v);
        f[v->node].cpu_milli += v->spec.cpu_milli;
        f[v->node].mem_mib += v->spec.mem_mib;
    }
    int64_t req[NBASIC];
    pod_request(p, req);
    uint64_t total = 0, want = need ? need : 1;
    for (size_t i = 0; i < nn; i++) {
        const struct gp_node *n = &e->nodes.items[i];
        if (!fits_empty(e, n, p))
            continue;
        int64_t have[NBASIC] = {(int64_t)n->gpu_milli_free + f[i].gpu_milli,
                                n->cpu_free_milli + f[i].cpu_milli, n->mem_free_mib + f[i].mem_mib};
        int64_t k = INT64_MAX;
        for (int r = 0; r < NBASIC; r++)
            if (req[r] > 0 && have[r] / req[r] < k)
                k = have[r] / req[r];
        total += (uint64_t)(k > (int64_t)want ? (int64_t)want : k);
        if (total >= want)
            return true;
    }
    return false;
}

static bool fits_some_empty(const struct gp_engine *e, const struct gp_pod *p)
{
    for (size_t i = 0; i < e->nodes.len; i++)
        if (fits_empty(e, &e->nodes.items[i], p))
            return true;
    return false;
}

/* Tries to make room for pod p (with gid, for the pending members of its
 * gang) by evicting others. Takes candidate victims in cost order,
 * releasing each until the preemptor fits, then puts back, the costliest
 * first, every one it can do without. If it fits, writes an EVICT decision
 * per victim and the preemptor's decisions (a BIND, or one per gang
 * member) to out and returns their number; otherwise everything is as
 * before and it returns 0 (with *full set when out had too little room). */
static size_t preempt(struct gp_engine *e, struct gp_pod *p, uint32_t gid, struct gp_decision *out,
                      size_t room, bool *full)
{
    struct group *g = gid ? &e->groups.items[gid - 1] : NULL;
    uint32_t need = 0;
    size_t npods = 1;
    if (g) {
        e->gmembers.len = 0;
        for (size_t i = 0; i < g->members.len; i++) {
            uint32_t id = g->members.items[i];
            if (e->pods.items[id].state == GP_POD_PENDING && GP_VEC_PUSH(&e->gmembers, id) != 0)
                return 0;
        }
        npods = e->gmembers.len;
        need = g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 0;
        if (need == 0 || npods < need || GP_VEC_RESERVE(&e->tmp, npods) != 0)
            return 0;
    }
    if (preempt_known_failed(e, p, need))
        return 0;
    if ((!g && !fits_some_empty(e, p)) || collect_units(e, p, gid, need ? need : 1) == 0 ||
        !room_possible(e, p, need)) {
        preempt_failed(e, p, need);
        return 0;
    }
    if (e->units.len > 1)
        qsort(e->units.items, e->units.len, sizeof e->units.items[0], unit_cmp);
    int64_t want[NBASIC];
    pod_request(p, want);
    e->chosen.len = 0;
    bool fits = false;
    for (size_t i = 0; i < e->units.len && !fits; i++) {
        const struct unit *u = &e->units.items[i];
        if (u->reason == GP_EVICT_RECLAIMED && !unit_borrowing(e, u, want))
            continue;
        if (GP_VEC_PUSH(&e->chosen, (uint32_t)i) != 0)
            break;
        unit_release(e, u);
        fits = preemptor_fits(e, p, g, need);
    }
    if (fits) { /* keep only the victims it needs, the cheapest */
        size_t keep = 0;
        for (size_t k = e->chosen.len; k-- > 0;) {
            const struct unit *u = &e->units.items[e->chosen.items[k]];
            unit_restore(e, u);
            if (preemptor_fits(e, p, g, need))
                continue; /* reprieved */
            unit_release(e, u);
            e->chosen.items[e->chosen.len - 1 - keep++] = e->chosen.items[k];
        }
        memmove(e->chosen.items, e->chosen.items + e->chosen.len - keep,
                keep * sizeof e->chosen.items[0]);
        e->chosen.len = keep;
    }
    size_t nvictims = 0;
    for (size_t k = 0; k < e->chosen.len; k++)
        nvictims += e->units.items[e->chosen.items[k]].n;
    struct gp_decision bind;
    bool placed = false, roomy = nvictims + npods <= room;
    if (fits && roomy) {
        if (g) {
            struct gp_decision fail;
            bool have_fail = false;
            placed = gang_try_domains(e, g, e->gmembers.items, npods, need, e->tmp.items, &fail,
                                      &have_fail);
        } else {
            place(e, p, &bind);
            placed = bind.kind == GP_DECISION_BIND;
        }
    }
    if (!placed) {
        for (size_t k = e->chosen.len; k-- > 0;)
            unit_restore(e, &e->units.items[e->chosen.items[k]]);
        if (fits && !roomy)
            *full = true; /* no room for the decisions: try again next cycle */
        else
            preempt_failed(e, p, need);
        return 0;
    }
    size_t n = 0;
    for (size_t k = 0; k < e->chosen.len; k++) {
        const struct unit *u = &e->units.items[e->chosen.items[k]];
        for (uint32_t i = 0; i < u->n; i++) {
            struct gp_pod *v = &e->pods.items[e->victims.items[u->first + i]];
            v->state = GP_POD_DONE;
            struct gp_decision *d = &out[n++];
            memset(d, 0, sizeof *d);
            d->kind = GP_DECISION_EVICT;
            d->pod = v->id;
            d->node = v->node;
            d->pick = v->pick;
            d->evict = (uint8_t)u->reason;
            d->by = p->id;
        }
    }
    if (g) {
        for (size_t k = 0; k < npods; k++) {
            out[n] = e->tmp.items[k];
            if (out[n].kind == GP_DECISION_BIND)
                note_bound(e, &e->pods.items[out[n].pod]);
            n++;
        }
    } else {
        out[n++] = bind;
        note_bound(e, p);
    }
    e->generation++; /* the victims' room, less what the preemptor took, is free */
    e->victim_gen++;
    return n;
}

/* ---- the cycle -------------------------------------------------------------- */

/* Tries pod p (and, for a gang member, its whole gang once per cycle),
 * appending its decisions. Returns whether p stays pending; *changed when
 * something was bound or evicted (the queues' shares moved). */
static bool try_pod(struct gp_engine *e, struct gp_pod *p, struct gp_decision *out, size_t cap,
                    size_t *ndec, size_t *tried, bool *full, bool *changed)
{
    uint32_t id = p->id;
    /* with a reservation (backfill), only the head may evict */
    bool may_preempt = e->preempt && e->queues.items[p->spec.queue].may_preempt && !e->resv.on;
    bool retry = may_preempt && e->px.items[id].preempt_gen != e->victim_gen;
    if (p->tried_gen == e->generation && !retry)
        return true; /* not until the cluster changes */
    e->held = false;
    if (p->spec.group) {
        uint32_t gid = p->spec.group;
        struct group *g = &e->groups.items[gid - 1];
        if (g->cycle == e->cycle)
            return true;
        if (cap - *ndec < gang_pending(e, gid)) {
            *full = true; /* no room for the whole gang's decisions */
            return true;
        }
        g->cycle = e->cycle;
        (*tried)++;
        size_t n = place_gang(e, gid, out + *ndec);
        if (e->held && p->state != GP_POD_BOUND) { /* held back: no decisions */
            for (size_t i = 0; i < g->members.len; i++)
                e->px.items[g->members.items[i]].blk = BLK_HELD;
            return true;
        }
        if (p->state != GP_POD_BOUND && retry && n > 0 && out[*ndec].gang == GP_GANG_NO_ROOM) {
            size_t m = preempt(e, p, gid, out + *ndec, cap - *ndec, full);
            if (m > 0) {
                *ndec += m;
                *changed = true;
                return p->state != GP_POD_BOUND;
            }
            for (size_t i = 0; i < g->members.len; i++)
                e->px.items[g->members.items[i]].preempt_gen = e->victim_gen;
        }
        for (size_t k = 0; k < n; k++)
            if (out[*ndec + k].kind == GP_DECISION_BIND) {
                note_bound(e, &e->pods.items[out[*ndec + k].pod]);
                *changed = true;
            }
        *ndec += n;
        return p->state != GP_POD_BOUND;
    }
    (*tried)++;
    struct gp_decision *d = &out[*ndec];
    const struct gp_decision *known = failed_lookup(e, p);
    if (known) {
        *d = *known;
        d->pod = id;
        p->tried_gen = e->generation;
    } else {
        place(e, p, d);
        if (e->held) { /* it fits only on capacity reserved for the head: no decision */
            e->px.items[id].blk = BLK_HELD;
            return true;
        }
        if (d->kind != GP_DECISION_BIND)
            failed_remember(e, p, d);
    }
    if (d->kind == GP_DECISION_BIND) {
        (*ndec)++;
        note_bound(e, p);
        *changed = true;
        return false;
    }
    if (retry) { /* preempt writes to out only when it succeeds */
        size_t m = preempt(e, p, 0, d, cap - *ndec, full);
        if (m > 0) {
            *ndec += m;
            *changed = true;
            return false;
        }
        if (!*full)
            e->px.items[id].preempt_gen = e->victim_gen;
    }
    (*ndec)++;
    return true;
}

/* ---- ordered cycles: FIFO, SJF, backfill ----------------------------------- */

/* Pods like p that must be placed together: a gang's members still
 * needed, else 1. */
static uint32_t pod_need(const struct gp_engine *e, const struct gp_pod *p)
{
    if (!p->spec.group)
        return 1;
    const struct group *g = &e->groups.items[p->spec.group - 1];
    return g->spec.min_member > g->bound ? g->spec.min_member - g->bound : 1;
}

/* Node n as it is when empty. */
static void node_emptied(const struct gp_node *n, struct gp_node *c)
{
    *c = *n;
    c->cpu_free_milli = n->spec.cpu_milli;
    c->mem_free_mib = n->spec.mem_mib;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        c->gpu[g].milli_free = GP_GPU_MILLI;
        c->gpu[g].mem_free_mib = n->spec.gpu_mem_mib;
        c->gpu[g].pods = 0;
    }
    node_summarise(c);
    c->pods = 0;
}

/* Whether `need` pods like p (a gang's member) pack into the empty
 * cluster - inside one domain when its topology is required. Exact for a
 * gang of alike members; the others are judged by p. */
static bool gang_packs_empty(const struct gp_engine *e, const struct group *g,
                             const struct gp_pod *p, uint32_t need)
{
    const char *key = g->spec.topology_required ? g->spec.topology_key : NULL;
    GP_VEC(struct domain) domains = {0};
    uint64_t total = 0;
    bool ok = false;
    struct gp_node c;
    for (size_t i = 0; i < e->nodes.len && !ok; i++) {
        const struct gp_node *n = &e->nodes.items[i];
        const char *v = NULL;
        for (size_t j = 0; key && j < n->spec.nlabels && !v; j++)
            if (strcmp(n->spec.labels[j].key, key) == 0)
                v = n->spec.labels[j].value;
        if (key && !v)
            continue;
        node_emptied(n, &c);
        uint64_t k = (uint64_t)head_slots(e, &c, p, need);
        if (k == 0)
            continue;
        if (!key) {
            total += k;
            ok = total >= need;
            continue;
        }
        size_t d = 0;
        while (d < domains.len && strcmp(domains.items[d].value, v) != 0)
            d++;
        if (d == domains.len) {
            struct domain nd = {v, 0};
            if (GP_VEC_PUSH(&domains, nd) != 0) {
                ok = true; /* out of memory: say it fits (it then waits, as before) */
                break;
            }
        }
        domains.items[d].free_milli += k;
        ok = domains.items[d].free_milli >= need;
    }
    GP_VEC_FREE(&domains);
    return ok;
}

/* Sets what the pod of an UNSCHEDULABLE decision holds up (enum blk). */
static void classify(struct gp_engine *e, const struct gp_decision *d)
{
    const struct gp_pod *p = &e->pods.items[d->pod];
    struct pod_x *x = &e->px.items[d->pod];
    uint32_t need = pod_need(e, p);
    x->blk = BLK_NONE;
    if (d->gang == GP_GANG_MEMBERS || d->gang == GP_GANG_NEVER_FITS ||
        (e->quotas && quota_never_fits(e, p, need)))
        return;
    if (d->explain.rejected[GP_FILTER_QUOTA] > 0 && d->quota_queue == GP_QUEUE_NONE)
        return; /* a per-model cap: it holds up nothing */
    if (d->quota_queue != GP_QUEUE_NONE) {
        x->blk = BLK_QUOTA;
        x->blk_queue = d->quota_queue;
        return;
    }
    bool fits;
    if (p->spec.group) {
        fits = gang_packs_empty(e, &e->groups.items[p->spec.group - 1], p, need);
    } else {
        struct shape *s = &e->shapes.items[p->shape];
        if (s->hopeless_ver != e->topo_ver) {
            s->hopeless = !fits_some_empty(e, p);
            s->hopeless_ver = e->topo_ver;
        }
        fits = !s->hopeless;
    }
    x->blk = fits ? BLK_ROOM : BLK_NONE;
}

static int pod_end_cmp(const void *pa, const void *pb)
{
    const struct pod_end *a = pa, *b = pb;
    if (a->end_s != b->end_s)
        return a->end_s < b->end_s ? -1 : 1;
    return a->pod < b->pod ? -1 : a->pod > b->pod;
}

/* Lists the expected ends (bind time + duration hint, not before now) of
 * the bound pods of queue x's subtree (NONE: of every queue), sorted.
 * Pods without a hint never end. False when out of memory. */
static bool ends_list(struct gp_engine *e, uint32_t x)
{
    e->ends.len = 0;
    for (size_t i = 0; i < e->queues.len; i++) {
        uint32_t y = (uint32_t)i;
        while (x != NONE && y != NONE && y != x)
            y = e->queues.items[y].parent;
        if (x != NONE && y != x)
            continue;
        const struct queue *q = &e->queues.items[i];
        for (size_t k = 0; k < q->bound.len; k++) {
            const struct gp_pod *p = &e->pods.items[q->bound.items[k]];
            if (!(p->spec.duration_hint_s > 0))
                continue;
            struct pod_end pe = {e->px.items[p->id].bound_at_s + p->spec.duration_hint_s, p->id};
            if (pe.end_s < e->now_s)
                pe.end_s = e->now_s; /* overdue: it may end any moment */
            if (GP_VEC_PUSH(&e->ends, pe) != 0)
                return false;
        }
    }
    if (e->ends.len > 1)
        qsort(e->ends.items, e->ends.len, sizeof e->ends.items[0], pod_end_cmp);
    return true;
}

/* The head p does not fit for lack of room: its reservation (kept from an
 * earlier cycle when nothing changed since). Counts, on every node, the
 * pods like p that fit; then releases the bound pods on a projection of
 * the nodes in the order of their expected ends until `need` fit. */
static void resv_compute(struct gp_engine *e, const struct gp_pod *p)
{
    struct resv *r = &e->resv;
    r->on = true;
    if (r->valid && r->head == p->id && r->ver == e->state_ver)
        return;
    uint32_t need = pod_need(e, p);
    size_t nn = e->nodes.len;
    r->valid = true;
    r->head = p->id;
    r->group = p->spec.group;
    r->need = need;
    r->ver = e->state_ver;
    r->shadow_s = INFINITY;
    r->spare = -1;
    if (GP_VEC_RESERVE(&e->proj, nn) != 0 || GP_VEC_RESERVE(&e->proj_mark, nn) != 0)
        return; /* out of memory: hold back everything else */
    while (e->proj_mark.len < nn)
        e->proj_mark.items[e->proj_mark.len++] = 0;
    e->proj.len = nn;
    e->proj_stamp++;
    e->resv_log.len = 0;
    int64_t total = 0;
    for (size_t i = 0; i < nn; i++)
        total += head_slots(e, &e->nodes.items[i], p, need);
    double shadow = e->now_s;
    if (total < need) {
        if (!ends_list(e, NONE))
            return;
        shadow = INFINITY;
        for (size_t k = 0; k < e->ends.len && shadow == INFINITY; k++) {
            const struct gp_pod *b = &e->pods.items[e->ends.items[k].pod];
            struct gp_node *at = &e->proj.items[b->node];
            if (e->proj_mark.items[b->node] != e->proj_stamp) {
                *at = e->nodes.items[b->node];
                e->proj_mark.items[b->node] = e->proj_stamp;
            }
            int64_t before = head_slots(e, at, p, need);
            node_give(at, b, &b->pick);
            total += head_slots(e, at, p, need) - before;
            if (total >= need)
                shadow = e->ends.items[k].end_s;
        }
    }
    r->shadow_s = shadow;
    r->spare = total - need;
}

/* The head p hit the cap of queue x: its reservation of the quota (kept
 * when the subtree's use has not changed since). */
static void qresv_compute(struct gp_engine *e, uint32_t x, const struct gp_pod *p)
{
    struct queue *q = &e->queues.items[x];
    q->qresv = true;
    if (q->qhead == p->id + 1 && q->qresv_ver == q->ver)
        return;
    int64_t req[NBASIC], room[NBASIC];
    pod_request(p, req);
    uint32_t need = pod_need(e, p);
    bool fits = true;
    for (int k = 0; k < NBASIC; k++) {
        req[k] *= need;
        room[k] = q->cap[k] == INT64_MAX ? INT64_MAX : q->cap[k] - q->used[k];
        fits &= req[k] <= room[k];
    }
    double shadow = e->now_s;
    if (!fits) {
        shadow = INFINITY;
        if (ends_list(e, x))
            for (size_t i = 0; i < e->ends.len && shadow == INFINITY; i++) {
                int64_t got[NBASIC];
                pod_request(&e->pods.items[e->ends.items[i].pod], got);
                fits = true;
                for (int k = 0; k < NBASIC; k++) {
                    if (room[k] != INT64_MAX)
                        room[k] += got[k];
                    fits &= req[k] <= room[k];
                }
                if (fits)
                    shadow = e->ends.items[i].end_s;
            }
    }
    for (int k = 0; k < NBASIC; k++)
        q->qspare[k] = room[k] == INT64_MAX ? INT64_MAX : room[k] - req[k];
    q->qshadow_s = shadow;
    q->qhead = p->id + 1;
    q->qresv_ver = q->ver;
}

/* May pod p go past the pods blocked by the caps of its queue and its
 * ancestors? Without backfill, never; with it, when it ends by that
 * pod's shadow time or fits what is left of the cap then (a gang: all its
 * pending members). */
static bool quota_gate(const struct gp_engine *e, const struct gp_pod *p)
{
    int64_t req[NBASIC];
    pod_request(p, req);
    int64_t times = p->spec.group ? (int64_t)gang_pending(e, p->spec.group) : 1;
    double h = p->spec.duration_hint_s;
    for (uint32_t x = p->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        const struct queue *q = &e->queues.items[x];
        if (!q->qblocked)
            continue;
        if (!q->qresv)
            return false;
        if (h > 0 && e->now_s + h <= q->qshadow_s)
            continue;
        for (int k = 0; k < NBASIC; k++)
            if (req[k] > 0 && q->qspare[k] != INT64_MAX && req[k] * times > q->qspare[k])
                return false;
    }
    return true;
}

/* Pod b was bound past quota reservations: what it takes beyond their
 * shadow time comes off their spare. */
static void quota_account(struct gp_engine *e, const struct gp_pod *b)
{
    int64_t req[NBASIC];
    pod_request(b, req);
    double h = b->spec.duration_hint_s;
    for (uint32_t x = b->spec.queue; x != NONE; x = e->queues.items[x].parent) {
        struct queue *q = &e->queues.items[x];
        if (!q->qresv)
            continue;
        if (!(h > 0 && e->now_s + h <= q->qshadow_s))
            for (int k = 0; k < NBASIC; k++)
                if (q->qspare[k] != INT64_MAX)
                    q->qspare[k] -= req[k];
        q->qresv_ver = q->ver;
    }
}

/* What pod p's failure holds up: the rest of the cycle (strict), its
 * quota's subtree, or - with backfill - nothing beyond its reservation. */
static void block(struct gp_engine *e, const struct gp_pod *p, bool *stop)
{
    const struct pod_x *x = &e->px.items[p->id];
    if (x->blk == BLK_QUOTA) {
        struct queue *q = &e->queues.items[x->blk_queue];
        if (q->qblocked)
            return;
        q->qblocked = true;
        e->qblocked_any = true;
        if (e->backfill)
            qresv_compute(e, x->blk_queue, p);
    } else if (x->blk == BLK_ROOM) {
        if (!e->backfill)
            *stop = true;
        else if (!e->resv.on)
            resv_compute(e, p);
    }
}

/* One pod of an ordered cycle. Returns whether it stays pending;
 * *changed when something was bound or evicted. */
static bool order_step(struct gp_engine *e, struct gp_pod *p, struct gp_decision *out, size_t cap,
                       size_t *ndec, size_t *tried, bool *full, bool *stop, bool *changed)
{
    if (e->qblocked_any && !quota_gate(e, p))
        return true;
    bool may_preempt = e->preempt && e->queues.items[p->spec.queue].may_preempt && !e->resv.on;
    if (p->tried_gen == e->generation &&
        !(may_preempt && e->px.items[p->id].preempt_gen != e->victim_gen)) {
        block(e, p, stop); /* as when it last failed */
        return true;
    }
    size_t first = *ndec, gfirst = 0;
    bool pending = try_pod(e, p, out, cap, ndec, tried, full, changed);
    uint32_t gclass = 0; /* the gang whose members were classified */
    for (size_t k = first; k < *ndec; k++) {
        const struct gp_decision *d = &out[k];
        const struct gp_pod *m = &e->pods.items[d->pod];
        if (d->kind == GP_DECISION_BIND) {
            quota_account(e, m);
        } else if (d->kind == GP_DECISION_UNSCHEDULABLE) {
            if (m->spec.group && m->spec.group == gclass) { /* as its first member */
                e->px.items[m->id].blk = e->px.items[out[gfirst].pod].blk;
                e->px.items[m->id].blk_queue = e->px.items[out[gfirst].pod].blk_queue;
                continue;
            }
            classify(e, d);
            gclass = m->spec.group;
            gfirst = k;
        }
    }
    if (e->resv.on)
        e->resv.ver = e->state_ver; /* the projection has followed the binds */
    if (!pending)
        return false;
    if (!*full)
        block(e, p, stop);
    return true;
}

/* A cycle in the engine's order (FIFO, SJF; FAIR with backfill): one pod
 * at a time, from the queue whose next pod comes first (FAIR: the queue
 * pick_queue chooses), stopping at the first pod that does not fit
 * (strict) or reserving room for it (backfill). */
static size_t schedule_ordered(struct gp_engine *e, size_t budget, struct gp_decision *out,
                               size_t cap)
{
    size_t ndec = 0, tried = 0;
    bool full = false, stop = false;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        q->cursor = q->keep = 0;
        q->qblocked = q->qresv = false;
    }
    e->resv.on = false;
    e->resv_log.len = 0;
    e->qblocked_any = false;
    if (e->order != GP_ORDER_FAIR) { /* one list, in the order */
        uint32_t *items = e->all.items;
        size_t i = 0, k = 0, len = e->all.len;
        bool changed = false;
        while (i < len && !stop) {
            uint32_t id = items[i];
            struct gp_pod *p = &e->pods.items[id];
            if (p->state != GP_POD_PENDING) { /* a gang member placed earlier in this cycle */
                i++;
                continue;
            }
            if (full || ndec == cap || (budget && tried == budget))
                break;
            i++;
            if (order_step(e, p, out, cap, &ndec, &tried, &full, &stop, &changed))
                items[k++] = id;
        }
        for (; i < len; i++) /* the rest stays as it was; pods bound meanwhile leave */
            if (e->pods.items[items[i]].state == GP_POD_PENDING)
                items[k++] = items[i];
        e->all.len = k;
    }
    /* FAIR: the queue pick_queue chooses, until something is bound or
     * evicted (the shares move), as in the greedy cycle */
    while (e->order == GP_ORDER_FAIR && !stop) {
        uint32_t cur = pick_queue(e);
        if (cur == NONE)
            break;
        struct queue *q = &e->queues.items[cur];
        bool changed = false;
        while (q->cursor < q->pending.len && !changed && !stop) {
            uint32_t id = q->pending.items[q->cursor];
            struct gp_pod *p = &e->pods.items[id];
            if (p->state != GP_POD_PENDING) {
                q->cursor++;
                continue;
            }
            if (full || ndec == cap || (budget && tried == budget)) {
                stop = true;
                break;
            }
            q->cursor++;
            if (order_step(e, p, out, cap, &ndec, &tried, &full, &stop, &changed))
                q->pending.items[q->keep++] = id;
        }
    }
    e->resv.on = false; /* outside a cycle nothing is held back */
    return ndec;
}

size_t gp_engine_schedule(struct gp_engine *e, double now_s, size_t budget, struct gp_decision *out,
                          size_t cap)
{
    size_t ndec = 0, tried = 0;
    bool full = false, changed = false;
    if (now_s > e->now_s)
        e->now_s = now_s;
    e->cycle++;
    mature_check(e);
    if (e->order != GP_ORDER_FAIR || e->backfill) {
        ndec = schedule_ordered(e, budget, out, cap);
        goto compact;
    }
    for (size_t i = 0; i < e->queues.len; i++)
        e->queues.items[i].cursor = e->queues.items[i].keep = 0;
    bool stop = false;
    while (!stop) {
        uint32_t cur = pick_queue(e);
        if (cur == NONE)
            break;
        /* this queue's pods, until something is bound or evicted (the
         * shares move) or the list ends */
        struct queue *q = &e->queues.items[cur];
        uint32_t *items = q->pending.items;
        size_t i = q->cursor, k = q->keep, len = q->pending.len;
        bool may_preempt = e->preempt && q->may_preempt;
        struct gp_pod *pods = e->pods.items;
        uint64_t gen = e->generation;
        changed = false;
        while (i < len && !changed) {
            uint32_t id = items[i];
            struct gp_pod *p = &pods[id];
            if (p->state != GP_POD_PENDING) { /* a gang member placed earlier in this cycle */
                i++;
                continue;
            }
            if (full || ndec == cap || (budget && tried == budget)) {
                stop = true;
                break;
            }
            i++;
            if (p->tried_gen == gen &&
                !(may_preempt && e->px.items[id].preempt_gen != e->victim_gen)) {
                items[k++] = id; /* not until the cluster changes */
                continue;
            }
            if (try_pod(e, p, out, cap, &ndec, &tried, &full, &changed))
                items[k++] = id;
            gen = e->generation;
        }
        q->cursor = i;
        q->keep = k;
    }
compact:
    /* the rest of each list stays as it was; pods bound meanwhile leave */
    e->npending = 0;
    for (size_t i = 0; i < e->queues.len; i++) {
        struct queue *q = &e->queues.items[i];
        size_t k = q->keep;
        for (size_t j = q->cursor; j < q->pending.len; j++)
            if (e->pods.items[q->pending.items[j]].state == GP_POD_PENDING)
                q->pending.items[k++] = q->pending.items[j];
        q->pending.len = k;
        e->npending += k;
    }
    return ndec;
}

enum gp_err gp_engine_group_add(struct gp_engine *e, const struct gp_group_spec *spec,
                                uint32_t *out_id)
{
    if (spec->min_member == 0)
        return GP_EINVALID;
    struct group g;
    memset(&g, 0, sizeof g);
    g.spec = *spec;
    if (GP_VEC_PUSH(&e->groups, g) != 0)
        return GP_ENOMEM;
    if (out_id)
        *out_id = (uint32_t)e->groups.len;
    return GP_OK;
}

uint32_t gp_engine_group_bound(const struct gp_engine *e, uint32_t group)
{
    return group >= 1 && group <= e->groups.len ? e->groups.items[group - 1].bound : 0;
}

enum gp_err gp_engine_schedule_pod(struct gp_engine *e, uint32_t id, struct gp_decision *out)
{
    if (id >= e->pods.len)
        return GP_EINVALID;
    struct gp_pod *p = &e->pods.items[id];
    if (p->state != GP_POD_PENDING)
        return GP_ESTATE;
    if (p->spec.group) /* gangs are placed whole, by gp_engine_schedule */
        return GP_EINVALID;
    place(e, p, out);
    if (out->kind == GP_DECISION_BIND)
        pending_remove(e, id);
    return GP_OK;
}

size_t gp_engine_node_count(const struct gp_engine *e)
{
    return e->nodes.len;
}

const struct gp_node *gp_engine_node(const struct gp_engine *e, uint32_t id)
{
    return id < e->nodes.len ? &e->nodes.items[id] : NULL;
}

size_t gp_engine_pod_count(const struct gp_engine *e)
{
    return e->pods.len;
}

const struct gp_pod *gp_engine_pod(const struct gp_engine *e, uint32_t id)
{
    return id < e->pods.len ? &e->pods.items[id] : NULL;
}

double gp_engine_pod_bound_at(const struct gp_engine *e, uint32_t id)
{
    return id < e->pods.len && e->pods.items[id].state == GP_POD_BOUND ? e->px.items[id].bound_at_s
                                                                       : -1;
}

size_t gp_engine_pending_count(const struct gp_engine *e)
{
    return e->npending;
}

size_t gp_engine_pending(const struct gp_engine *e, uint32_t *out, size_t cap)
{
    size_t n = 0;
    if (e->order != GP_ORDER_FAIR) {
        for (size_t i = 0; i < e->all.len; i++)
            if (e->pods.items[e->all.items[i]].state == GP_POD_PENDING && n++ < cap)
                out[n - 1] = e->all.items[i];
        return n;
    }
    for (size_t q = 0; q < e->queues.len; q++) {
        const struct queue *qu = &e->queues.items[q];
        for (size_t i = 0; i < qu->pending.len; i++)
            if (e->pods.items[qu->pending.items[i]].state == GP_POD_PENDING && n++ < cap)
                out[n - 1] = qu->pending.items[i];
    }
    return n;
}

size_t gp_engine_model_count(const struct gp_engine *e)
{
    return e->nmodels;
}

const char *gp_engine_model_name(const struct gp_engine *e, uint32_t model)
{
    return model < e->nmodels ? e->models[model] : NULL;
}

struct gp_rng *gp_engine_rng(const struct gp_engine *e)
{
    /* the generator is the engine's mutable state, reachable from a const view */
    return (struct gp_rng *)(uintptr_t)&e->rng;
}

const struct gp_policy_ops *gp_engine_policy(const struct gp_engine *e)
{
    return e->policy;
}

void gp_engine_totals(const struct gp_engine *e, struct gp_engine_totals *out)
{
    *out = e->totals;
}

/* Shape order for the target: more pods first, then a fixed order of the
 * fields, so that the result does not depend on the input order. */
static int shape_cmp(const void *pa, const void *pb)
{
    const struct gp_shape *a = pa, *b = pb;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    if (a->gpu_count != b->gpu_count)
        return a->gpu_count < b->gpu_count ? -1 : 1;
    if (a->gpu_milli != b->gpu_milli)
        return a->gpu_milli < b->gpu_milli ? -1 : 1;
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli < b->cpu_milli ? -1 : 1;
    if (a->model_mask != b->model_mask)
        return a->model_mask < b->model_mask ? -1 : 1;
    return 0;
}

enum gp_err gp_engine_set_target(struct gp_engine *e, const struct gp_pod_spec *specs,
                                 const uint32_t *counts, size_t n, double coverage)
{
    if (!(coverage > 0 && coverage <= 1))
        return GP_EINVALID;
    e->target.len = 0;
    e->target_version++;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const struct gp_pod_spec *p = &specs[i];
        struct gp_shape s = {.cpu_milli = p->cpu_milli, .gpu_count = p->gpu_count};
        s.gpu_milli = p->gpu_count ? p->gpu_milli : 0;
        s.model_mask = p->ngpu_models ? 0 : ~(uint64_t)0;
        for (size_t k = 0; k < p->ngpu_models; k++) {
            int m = model_intern(e, p->gpu_models[k]);
            if (m < 0)
                return GP_ELIMIT;
            s.model_mask |= (uint64_t)1 << m;
        }
        if (!s.gpu_count)
            s.model_mask = ~(uint64_t)0;
        double c = counts ? counts[i] : 1;
        total += c;
        size_t k = 0;
        while (k < e->target.len && !(e->target.items[k].cpu_milli == s.cpu_milli &&
                                      e->target.items[k].gpu_count == s.gpu_count &&
                                      e->target.items[k].gpu_milli == s.gpu_milli &&
                                      e->target.items[k].model_mask == s.model_mask))
            k++;
        if (k < e->target.len) {
            e->target.items[k].weight += c;
            continue;
        }
        s.weight = c;
        if (GP_VEC_PUSH(&e->target, s) != 0)
            return GP_ENOMEM;
    }
    if (total <= 0) {
        e->target.len = 0;
        return GP_OK;
    }
    qsort(e->target.items, e->target.len, sizeof e->target.items[0], shape_cmp);
    double cum = 0;
    size_t keep = 0;
    while (keep < e->target.len && cum < coverage * total - 1e-9)
        cum += e->target.items[keep++].weight;
    e->target.len = keep;
    for (size_t k = 0; k < keep; k++)
        e->target.items[k].weight /= cum;
    return GP_OK;
}

const struct gp_shape *gp_engine_target(const struct gp_engine *e, size_t *n, uint64_t *version)
{
    if (n)
        *n = e->target.len;
    if (version)
        *version = e->target_version;
    return e->target.len ? e->target.items : NULL;
}
