/* sched_internal.h - the scheduler's records of pods and nodes, shared by
 * sched.c (changes, rebuild), sched_cycle.c (decisions written) and
 * audit.c. Internal to src/kube. */
#ifndef GP_KUBE_SCHED_INTERNAL_H
#define GP_KUBE_SCHED_INTERNAL_H

#include <stdatomic.h>

#include "engine/engine.h"
#include "io/eventlog.h"
#include "kube/objects.h"
#include "kube/priority.h"
#include "kube/sched.h"
#include "util/arena.h"
#include "util/idtab.h"

#define SP_NONE UINT32_MAX

/* Where a pod stands for the scheduler. */
enum sp_state {
    SP_IGNORED,    /* not ours and not on a node: nothing to do */
    SP_WAITING,    /* ours, pending in the engine */
    SP_BACKOFF,    /* ours, out of the engine until retry_at */
    SP_ASSUMED,    /* ours, bound in the engine; annotation and Binding being written */
    SP_PREEMPTING, /* ours, bound in the engine; its victims are still going */
    SP_BOUND,      /* on a node in the API (ours or not) and in the engine there */
    SP_UNCOUNTED,  /* on a node in the API, but its GPUs were taken: not in the engine */
    SP_EVICTED,    /* released by the engine for a preemptor; its deletion is under way */
    SP_DONE,       /* ended or being deleted while pending: holds nothing */
};

struct snode;

struct spod {
    char *key; /* "ns/name" */
    json_t *obj;
    struct gp_kube_pod_info info; /* strings borrowed from obj */
    char *wait_group;             /* the PodGroup it waits for (gp_ks_group_wait); NULL */
    struct sns *ns;               /* its namespace's record (gp_ks_ns_pods) */
    size_t ns_at;                 /* its index in ns->pods */
    bool ours, readable;          /* readable: its spec could be read */
    struct gp_arena arena;        /* the engine spec's strings */
    struct gp_pod_spec spec;
    uint32_t eng; /* engine pod id, SP_NONE when not in the engine */
    enum sp_state st;
    uint32_t node;            /* engine node, when bound in the engine */
    struct gp_pick pick;      /* the engine's pick, when bound in the engine */
    bool resume;              /* ASSUMED after a rebuild: annotated already, bind it */
    unsigned attempts;        /* failed bind attempts in a row */
    double retry_at;          /* SP_BACKOFF; SP_PREEMPTING: its next try elsewhere (0: none) */
    unsigned victims;         /* SP_PREEMPTING: victims not yet gone */
    double nominated_at;      /* SP_PREEMPTING: when its victims were evicted (0: not a
                               * preemptor); its waiting message written once past it */
    bool wait_said;           /* SP_PREEMPTING: the waiting message is written */
    struct spod *preemptor;   /* SP_EVICTED: the pod it makes room for */
    uint32_t stop_node;       /* SP_EVICTED: the engine node it runs on until gone */
    struct gp_pick stop_pick; /* SP_EVICTED: the devices it holds until gone */
    char *last_message;       /* the Unschedulable message last written */
    struct bind_job *job;     /* ASSUMED: the bind job running for it (bind.c); NULL none */
    double alloc_since;       /* seen bound and allocating since (sched_alloc.c); 0: not */
    bool alloc_expired;       /* its allocating phase written "expired" (another scheduler's
                               * pod: past the timeout, no longer counted) */
    /* the node's one allocating slot (sched_slot.c) */
    struct snode *slot; /* the node whose slot it holds now; NULL: none */
    struct snode
        *binding; /* its bind job binds it there (set at dispatch, cleared with the result) */
    struct snode *bound_to; /* its Binding answered 201, or maybe went through (no answer, the
                             * pod unreadable), and the API does not show it bound yet */
    struct snode *wait_on;  /* ASSUMED, waiting for that node's slot */
    struct spod *wait_prev, *wait_next;
    /* waiting on a blocked node (sched_slot.c gp_ks_slot_unblock): when it
     * is tried elsewhere next (0: at once), and whether the Event saying it
     * stays was given this wait */
    double move_at;
    bool block_said;
    double recheck_at;  /* ASSUMED and maybe bound: when it is asked about again; 0: never */
    char resume_rv[64]; /* the version our last patch of it made (a gang's job annotating it,
                         * waiting; a blocked node's take-back, sched_unblock.c); "": none */
    double rebind_at;   /* ASSUMED, a gang's member kept after its Binding failed while its
                         * gang is on its nodes (bind.c BO_KEPT): when it is annotated and
                         * bound again; 0: not kept */
    /* the audit's booking: the node it books in the API's view */
    struct snode *booked;
    size_t booked_slot;
    /* pdb.c: a hash of the PodDisruptionBudget ids the engine was told it
     * counts against (gp_engine_pod_set_pdbs); 0: none */
    uint64_t pdb_print;
    /* unreadable (its spec refused) and bound there, not ended: the node
     * takes no new pods while it is (sched.c pod_unreadable); said: its
     * log line and Event given for this spell */
    struct snode *unread_on;
    bool unread_said;
    /* volumes.c: a pending pod of ours with claims: what VolumeBinding's or
     * VolumeZone's PreFilter refuses it with (NULL: none), a hash of what
     * they decided, its place in s->vpods (index + 1; 0: not there) */
    char *vol_msg;
    uint64_t vol_print;
    size_t vpod_at;
    /* volumes_bind.c: ASSUMED, its claims being provisioned for its node
     * since then (0: not) */
    double prov_at;
    uint64_t prov_rv; /* the newest resourceVersion its claims' patches made */
    /* with prov_at: held with its gang's members, this many (the gang's
     * decision waits for every member's claims); 0: a pod's own wait */
    size_t prov_gang;
    json_t *vol_pvs; /* the volumes it binds its claims to: "ns/claim" -> {pv, rv}; NULL none */
};

struct snode {
    char *name;
    json_t *obj; /* NULL: a node only pods name so far */
    struct gp_arena arena;
    struct gp_node_spec spec;
    struct gp_kube_node_info info;
    /* gp_mig_model_find(spec.gpu_model), NULL without one: looked up when
     * the spec is read, not at each audit of the node (audit.c) */
    const struct gp_mig_model *model_mig;
    uint64_t print;     /* a hash of what the engine reads of it */
    uint32_t eng;       /* engine node id, SP_NONE when not in the engine */
    uint32_t eng_mig;   /* info.split: its MIG part's engine node (sched_mig.c); else SP_NONE */
    struct spod **book; /* pods booked on it (audit) */
    size_t nbook, capbook;
    bool violating;
    /* sched_slot.c: the pods holding its allocating slot (1 at most by
     * gpuplane's doing), the decisions waiting for it, oldest first */
    unsigned slot_n;
    struct spod *wait_head, *wait_tail;
    struct snode *wnext, *wprev; /* in s->wnodes while wait_head is set */
    bool kicked;                 /* in s->kick */
    double slot_since; /* slot_n last went from 0 to 1 (blocked past --allocating-timeout) */
    bool ref;          /* sched_records.c: something refers to it */
    unsigned unread;   /* bound pods on it whose spec gpuplane cannot read: drained */
    bool unread_said;  /* its own object cannot be read: said (a line, an Event) this spell */
    bool agent;        /* obj has the agent's label (gp_ks_obj_agent), false without obj */
};

/* A PodGroup (scheduling.x-k8s.io or Volcano): a gang. */
/* A namespace's pods (sched_records.c), so that what concerns one
 * namespace (a PodDisruptionBudget's change, pdb.c) walks its pods, not
 * every pod; freed with its last pod. */
struct sns {
    char *name;
    struct spod **pods;
    size_t n, cap;
};

struct sgroup {
    char *key; /* "ns/name" */
    uint32_t min_member;
    uint32_t eng; /* engine group id (from 1); 0: not in this engine yet */
    bool deleted; /* the API deleted it: freed once no pod names it (sched_records.c) */
    bool ref;     /* sched_records.c: a pod names it */
};

struct gp_kube_sched {
    struct gp_kube_client *c;
    struct gp_kube_sched_opts o;
    const struct gp_policy_ops *policy;
    struct gp_engine *e;
    double now_s;
    json_t *pod_index, *node_index; /* key -> index in pods / nodes */
    struct spod **pods;
    size_t npods, cappods;
    struct snode **nodes;
    size_t nnodes, capnodes;
    /* gp_ks_rebuild only (NULL otherwise, sched_rebuild.c): per node, in nodes' order, the
     * GPU indexes (bits) gpuplane.io/gpus of a pod of ours names there */
    uint32_t *claims;
    json_t *group_index; /* key -> index in groups */
    /* PodGroup key -> {pod key: true}: gang members waiting for it
     * (sched_records.c gp_ks_group_wait) */
    json_t *group_wait;
    json_t *ns_index; /* namespace -> index in nss */
    struct sns **nss;
    size_t nnss, capnss;
    struct sgroup *groups;
    struct gp_kube_priorities prio; /* PriorityClasses (priority.h) */
    size_t ngroups, capgroups;
    /* engine pod id -> record (struct spod *), released when the engine
     * forgets the pod: bounded by the pods in the engine, not every id */
    struct gp_idtab by_eng;
    struct gp_decision *dec;
    size_t capdec;
    /* sched_cycle.c: a gang's members decided in one cycle, one job */
    struct spod **gang;
    size_t capgang;
    bool leader, dirty; /* dirty: rebuild before the next cycle */
    /* hints, so that the scans run on every loop are skipped when they
     * would find nothing: a pod may be SP_BACKOFF (maybe_backoff), or may
     * wait for gp_ks_resume (PREEMPTING, or ASSUMED to resume); set where a
     * pod becomes so and by every rebuild, cleared by a scan finding none */
    bool maybe_backoff, maybe_resume;
    size_t nstopping; /* pods evicted and not yet gone (at least: a scan checks) */
    /* specs the engine was given and may still borrow (its request shapes
     * keep them): freed with the engine (sched.c, spec_retire) */
    struct gp_arena spent;
    size_t spent_specs;            /* specs retired into spent since the last rebuild */
    _Atomic uint64_t event_seq;    /* Events' names (binders too) */
    struct gp_kube_events *events; /* the Event sender (events.h; borrowed); NULL: sent inline */
    _Atomic uint64_t events_lost;  /* Events sent inline and not created (binders too) */
    atomic_bool leading;           /* s->leader, for the binders */
    struct gp_ks_pool *pool;       /* binder threads (bind.c); NULL: binds on this thread */
    size_t in_flight;              /* bind jobs handed out, their results not applied yet */
    struct gp_kube_sched_stats st;
    struct gp_kube_metrics *km;
    struct gp_kube_sched_stats exported; /* what the metrics have counted */
    char audit_last[512];
    /* sched_alloc.c: its last scan of the pods left allocating, and the
     * earliest time one is due (0: none) */
    double alloc_scan_s, alloc_next_s;
    struct gp_evlog *rec; /* --record's event log; NULL: none */
    /* sched_slot.c: nodes whose slot may have freed with pods waiting for
     * it; pods waiting; a pod may be due for a re-check (recheck_at) */
    struct snode **kick;
    size_t nkick, capkick;
    size_t slot_waiting;
    /* sched_slot.c: the nodes with pods waiting (wait_head set), linked
     * through snode's wnext/wprev, so the blocked-node checks of every
     * loop visit those alone, not every node */
    struct snode *wnodes;
    bool maybe_recheck;
    bool any_split; /* a node was ever split in two parts (sched_mig.c) */
    /* sched_records.c: a node record without its Node (deleted, or
     * only pods named it) or a deleted PodGroup may be left unused */
    bool nodes_gone, groups_gone;
    /* leading until then (CLOCK_MONOTONIC; the Lease's renew deadline), for the binders */
    _Atomic double lead_until_s;
    /* the scheduling thread's last write (CLOCK_MONOTONIC): a long cycle's progress, for
     * /healthz (gp_kube_sched_beat_s) */
    _Atomic double beat_s;
    json_t *pdbs; /* pdb.c: "ns/name" -> PodDisruptionBudget; NULL until one comes */
    /* pdb.c: "ns/name" -> its budget id in the engine (gp_engine_pdb_set),
     * the same while it lives; which ids living budgets hold */
    json_t *pdb_ids;
    bool *pdb_taken;
    size_t npdb_taken;
    /* volumes.c: PersistentVolumeClaims ("ns/name"), PersistentVolumes and
     * StorageClasses (by name) as their informers deliver them; NULL until one comes */
    json_t *pvcs, *pvs, *scs;
    json_t *csinodes;    /* volumes_limits.c: CSINodes by name; NULL until one comes */
    struct spod **vpods; /* the pods of ours with claims read so far */
    size_t nvpods, capvpods;
    /* namespaces.c: namespace name -> its metadata.labels as last given to
     * the engine; NULL until one comes */
    json_t *namespaces;
};

/* Whether p asks a GPU device (whole, shared or MIG): a node agent's
 * Allocate serves it (sched_slot.c). */
static inline bool gp_ks_asks_gpu(const struct spod *p)
{
    return !p->readable || p->spec.gpu_count > 0;
}

/* sched.c */
/* The record of engine pod id; NULL when it has left the engine. */
static inline struct spod *gp_ks_by_eng(const struct gp_kube_sched *s, uint32_t id)
{
    struct spod **r = gp_idtab_get(&s->by_eng, id);
    return r ? *r : NULL;
}
struct spod *gp_ks_pod_find(struct gp_kube_sched *s, const char *key);
struct snode *gp_ks_node_get(struct gp_kube_sched *s, const char *name, bool create);
enum gp_err gp_ks_engine_add(struct gp_kube_sched *s, struct spod *p);
/* The pod into the engine (queued, not placed): a gang member only once
 * its PodGroup is known, unless any_group (a pod already on a node). */
enum gp_err gp_ks_engine_add_any(struct gp_kube_sched *s, struct spod *p, bool any_group);
void gp_ks_engine_drop(struct gp_kube_sched *s, struct spod *p);
/* The engine node(s) of n take no new pods (its pods stay). */
void gp_ks_node_drain(struct gp_kube_sched *s, const struct snode *n);

/* sched_rebuild.c. gp_ks_annotated_pick: the GPUs (or MIG instances) p's
 * gpuplane.io annotations name on n, into *pick (NULL when none there);
 * gp_ks_engine_place: a pod the API shows on node `name` into the engine
 * there (SP_BOUND, or SP_UNCOUNTED when it does not fit: the audit says);
 * gp_ks_rebuild: the engine rebuilt from the records. */
const struct gp_pick *gp_ks_annotated_pick(struct gp_kube_sched *s, const struct spod *p,
                                           const struct snode *n, struct gp_pick *pick);
void gp_ks_engine_place(struct gp_kube_sched *s, struct spod *p, const char *name);
enum gp_err gp_ks_rebuild(struct gp_kube_sched *s, struct gp_diag *d);
double gp_ks_backoff_s(const struct gp_kube_sched *s, unsigned attempts);

/* A node's record freed (its spec retired while the engine may borrow it). */
void gp_ks_node_free(struct gp_kube_sched *s, struct snode *n);

/* sched_records.c: records nothing refers to any more freed (after
 * s->nodes_gone or s->groups_gone was set); whether the PodGroup a pod
 * names was deleted; a Warning Event on gang member p that loses its
 * decision (why), with how many of its other members are bound; and that
 * Event for a kept member (bind.c BO_KEPT) ending or going before its
 * Binding went through (rebind_at cleared). */
void gp_ks_records_sweep(struct gp_kube_sched *s);
bool gp_ks_group_deleted(const struct gp_kube_sched *s, const struct gp_kube_pod_info *in);
/* Gang members waiting for their PodGroup (key "ns/name"): gp_ks_group_wait
 * notes p (pending, kept out of the engine until it comes),
 * gp_ks_group_unwait forgets it (it went, or names another),
 * gp_ks_group_admit lets the pending ones into the engine (its PodGroup
 * came: sched.c gp_kube_sched_group_change). */
void gp_ks_group_wait(struct gp_kube_sched *s, struct spod *p, const char *key);
void gp_ks_group_unwait(struct gp_kube_sched *s, struct spod *p);
void gp_ks_group_admit(struct gp_kube_sched *s, const char *key);
/* Pods by namespace: gp_ks_ns_add files p under its key's namespace
 * (false: out of memory), gp_ks_ns_remove takes it out, gp_ks_ns_pods
 * answers the pods of namespace ns (*n of them; NULL, 0 for none). */
bool gp_ks_ns_add(struct gp_kube_sched *s, struct spod *p);
void gp_ks_ns_remove(struct gp_kube_sched *s, struct spod *p);
struct spod *const *gp_ks_ns_pods(const struct gp_kube_sched *s, const char *ns, size_t *n);
void gp_ks_gang_event(struct gp_kube_sched *s, const struct spod *p, const char *why);
void gp_ks_kept_gone(struct gp_kube_sched *s, struct spod *p);

/* sched_cycle.c */
/* A request on client c (body stolen): the status, 0 for no answer. */
long gp_ks_send(struct gp_kube_client *c, const char *method, const char *path, json_t *body,
                const char *ctype, json_t **out);
/* gpuplane's device annotations removed (with rv, when not NULL, as the
 * precondition: only from the version seen unbound); false when no
 * answer came. */
bool gp_ks_clear_annotations(struct gp_kube_client *c, const char *ns, const char *name,
                             const char *rv);
/* The same patch: the answer's status (0: none), and in new_rv (room n;
 * NULL: not wanted) the version it made ("" unless 200). */
long gp_ks_clear_annotations_rv(struct gp_kube_client *c, const char *ns, const char *name,
                                const char *rv, char *new_rv, size_t n);
/* A decision taken back once what it wrote is cleared: the engine's
 * assumption released, the pod backed off. */
void gp_ks_release(struct gp_kube_sched *s, struct spod *p);
/* p (in the engine, pending: a move tried and not taken) assigned again
 * on node with pick, as it was, and written to --record's log; false with
 * p released (gp_ks_release) when the engine refuses. */
bool gp_ks_put_back(struct gp_kube_sched *s, struct spod *p, uint32_t node,
                    const struct gp_pick *pick);
/* attempt_s: how long the engine's cycle took (scheduling_duration_seconds) */
enum gp_err gp_ks_write_decisions(struct gp_kube_sched *s, size_t n, double attempt_s,
                                  size_t *bound);
void gp_ks_resume(struct gp_kube_sched *s, size_t *bound);
/* pdb.c: the ids of the PodDisruptionBudgets p counts against given to
 * the engine (gp_engine_pod_set_pdbs), when they changed, for p in it;
 * gp_ks_pdb_enter: the same for p just entered the engine (it counts
 * against none there yet); gp_ks_pdb_engine: every budget's
 * disruptionsAllowed given to a new engine (gp_engine_pdb_set, the
 * rebuild, before its pods); gp_ks_pdb_free: the budgets kept. */
void gp_ks_pdb_mark(struct gp_kube_sched *s, struct spod *p);
void gp_ks_pdb_enter(struct gp_kube_sched *s, struct spod *p);
void gp_ks_pdb_engine(struct gp_kube_sched *s);
void gp_ks_pdb_free(struct gp_kube_sched *s);
/* The rebuild's step for pending pods nominated (status.nominatedNodeName)
 * to a node where lower-priority pods are still stopping: their claim kept. */
void gp_ks_nominated_claim(struct gp_kube_sched *s);
/* sched_room.c: room on a waiting preemptor's own node beside what the
 * pods stopping there hold. gp_ks_room_maybe: a cheap test (some GPU
 * share free, or p's alone, not held whole by a stopping pod; cpu and
 * memory). gp_ks_room_place: p, pending, tried on engine node `node`
 * alone with the stopping pods' devices booked for the time of the check
 * - GP_OK: bound there on the engine's default choice of GPUs (p->node,
 * p->pick), *exact when every booking was made; GP_ELIMIT: no room
 * beside them; GP_ENOMEM. */
bool gp_ks_room_maybe(const struct gp_kube_sched *s, const struct spod *p);
enum gp_err gp_ks_room_place(struct gp_kube_sched *s, struct spod *p, uint32_t node, bool *exact);
/* An Event (events.k8s.io/v1) about an object, handed to the scheduler's
 * Event sender (s->events: true when queued) or, without one, sent now
 * on client c (true when created); any thread. gp_ks_event: the same with
 * the scheduler's client, leader only. */
bool gp_ks_event_send(struct gp_kube_sched *s, struct gp_kube_client *c, const char *kind,
                      const char *ns, const char *name, const char *uid, const char *type,
                      const char *reason, const char *action, const char *note);
/* Leading, and the Lease's renew deadline (gp_kube_sched_lead_until) not
 * passed: checked before every write, on any thread - as kube-scheduler
 * writes nothing once its leader election's renewal fails past
 * RenewDeadline (OnStoppedLeading). */
bool gp_ks_leading(const struct gp_kube_sched *s);
/* An Event (events.k8s.io/v1) about an object: kind "Pod" or "Node"; not
 * sent unless gp_ks_leading. */
void gp_ks_event(struct gp_kube_sched *s, const char *kind, const char *ns, const char *name,
                 const char *uid, const char *type, const char *reason, const char *action,
                 const char *note);

/* bind.c: the pods m[0..k) (ASSUMED; a gang's members together) made
 * durable and bound, by a binder or here and now without a pool; results
 * collected (all of them with wait_all); a pod's record going while its
 * job runs */
void gp_ks_bind_dispatch(struct gp_kube_sched *s, struct spod *const *m, size_t k, size_t *bound);
void gp_ks_bind_collect(struct gp_kube_sched *s, bool wait_all, size_t *bound);
void gp_ks_bind_orphan(struct spod *p);

/* sched_mig.c: the pod (pending in the engine) bound on node n, in the
 * engine node (*part) of the right kind: at the GPUs of pick (the node's
 * indexes, MIG instances included: gp_engine_pod_assign books a named
 * pick itself, checked by placement's rules), or with pick NULL, or when
 * those are not free and `anywhere`, at the engine's choice; a MIG pod on
 * a node placed by count (info.mig_by_count) always at the engine's
 * choice; GP_ELIMIT when nothing was free. */
enum gp_err gp_ks_place(struct gp_kube_sched *s, struct spod *p, const struct snode *n,
                        const struct gp_pick *pick, bool anywhere, uint32_t *part);
/* A node of whole and MIG GPUs side by side (info.split) is two engine
 * nodes of the same name: n->eng its whole GPUs, n->eng_mig its GPUs in
 * MIG mode (each with its own layout), each numbering its GPUs from 0.
 * gp_ks_part: the one a pod of spec goes
 * to (n->eng for any other node); gp_ks_node_add: n added (both parts);
 * gp_ks_pick_to_node: a pick on engine node `node` in the node's GPU
 * indexes (what the annotations and the audit name; a MIG pick on a node
 * placed by count names nothing); gp_ks_explain_text:
 * gp_kube_explain_pod_text with each split node counted once. */
uint32_t gp_ks_part(const struct snode *n, const struct gp_pod_spec *spec);
enum gp_err gp_ks_node_add(struct gp_kube_sched *s, struct snode *n);
void gp_ks_pick_to_node(struct gp_kube_sched *s, uint32_t node, const struct gp_pick *pick,
                        struct gp_pick *out);
void gp_ks_explain_text(const struct gp_kube_sched *s, const struct gp_explain *x,
                        const struct gp_pod_spec *pod, char *buf, size_t size);

/* sched_explain.c: kube-scheduler's words for unschedulable pod p, node
 * by node where the engine's counts cannot say them. gp_ks_words_nodes:
 * the nodes the engine turned away by state, selector, node affinity or
 * taint taken out of x and named (a cordon, a taint by key and value, a
 * node not Ready, NodeAffinity's words), and DefaultPreemption's reason
 * for every node (none for a gang's member); gp_ks_words_apply: those
 * added to msg (made from x), then the " preemption: ..." part. w holds
 * what a batch of decisions shares (the lowest priority on each node),
 * zeroed before the batch, gp_ks_words_free after it. */
struct gp_ks_words {
    bool have;
    int32_t *low; /* by engine node: the lowest priority of a pod on it */
    size_t nlow;
};
struct gp_ks_reasons {
    struct gp_kube_reasons nodes_words; /* the nodes' own reasons */
    bool preempt;                       /* a " preemption: " part follows */
    bool never;                         /* preemptionPolicy Never */
    uint32_t nodes;                     /* the nodes kube-scheduler sees */
    struct gp_kube_reasons victims;     /* DefaultPreemption's, by node */
    bool terminating; /* PodEligibleToPreemptOthers: its victims are still terminating */
};
void gp_ks_words_nodes(struct gp_kube_sched *s, struct gp_ks_words *w, const struct spod *p,
                       struct gp_explain *x, struct gp_ks_reasons *out);
void gp_ks_words_apply(const struct gp_ks_reasons *r, char *msg, size_t size);
void gp_ks_words_free(struct gp_ks_words *w);
/* kube-scheduler's message for preemptor p (SP_PREEMPTING, its victims
 * evicted and still stopping): the histogram with the victims' requests
 * still counted on its nominated node; then, when retried, the
 * " preemption: not eligible due to a terminating pod on the nominated
 * node." of a later attempt (none on the attempt that preempted). */
void gp_ks_words_waiting(struct gp_kube_sched *s, const struct spod *p, bool retried, char *msg,
                         size_t size);
/* Whether the pod tolerates a cordoned node's taint (GP_KUBE_TAINT_UNSCHEDULABLE). */
bool gp_ks_tolerates_cordon(const struct gp_pod_spec *ps);

/* The PV controller's annotation on a claim the scheduler chose a node
 * for (AnnSelectedNode, pkg/controller/volume/persistentvolume/util). */
#define GP_KUBE_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"

/* volumes.c: the stores freed (gp_kube_sched_free); gp_ks_volumes_apply:
 * for pod p (pending, ours, spec just read from pod into spec, strings in
 * a) its volumes' conditions added to spec's constraints, or the PreFilter
 * refusal noted (p->vol_msg) with one condition no node passes;
 * gp_ks_volumes_forget: p's record going; gp_ks_volumes_words:
 * kube-scheduler's message for p refused so (false when it is not:
 * the engine's explanation says it), x the engine's account of the nodes. */
void gp_ks_volumes_free(struct gp_kube_sched *s);
enum gp_err gp_ks_volumes_apply(struct gp_kube_sched *s, struct spod *p, const json_t *pod,
                                struct gp_arena *a, struct gp_pod_spec *spec, struct gp_diag *d);
void gp_ks_volumes_forget(struct gp_kube_sched *s, struct spod *p);
struct gp_ks_words;
bool gp_ks_volumes_words(struct gp_kube_sched *s, struct gp_ks_words *w, const struct spod *p,
                         const struct gp_explain *x, char *msg, size_t size);
/* volumes_bind.c: at the dispatch of the bind of m[0..k) (ASSUMED on
 * their engine nodes; a gang's members together): true when their claims
 * of a WaitForFirstConsumer class are being provisioned or bound for
 * those nodes (annotated now if not yet; gp_ks_resume asks again), or
 * were not and the decision was taken back (a gang's: every member's;
 * Events, backed off); false: go on with the annotation patches and the
 * Bindings. gp_ks_volumes_gang_resume: p held with its gang (prov_gang),
 * the members held with it dispatched again together, once a pass (by the
 * first of them in s->pods; s->gang used). */
bool gp_ks_volumes_bind_hold(struct gp_kube_sched *s, struct spod *const *m, size_t k);
void gp_ks_volumes_gang_resume(struct gp_kube_sched *s, struct spod *p, size_t *bound);
/* volumes_limits.c (NodeVolumeLimits): node `name`'s CSI volume limits
 * from its CSINode into spec (strings in a), *print a hash of them (0:
 * none); pod's CSI volumes into spec (in: its info; strings in a), for
 * every pod; a hash of those the pod would have now. GP_ENOMEM: out of
 * memory. */
enum gp_err gp_ks_csi_node(struct gp_kube_sched *s, const char *name, struct gp_arena *a,
                           struct gp_node_spec *spec, uint64_t *print);
enum gp_err gp_ks_csi_pod(struct gp_kube_sched *s, const json_t *pod,
                          const struct gp_kube_pod_info *in, struct gp_arena *a,
                          struct gp_pod_spec *spec);
uint64_t gp_ks_csi_print(const struct gp_kube_sched *s, const json_t *pod,
                         const struct gp_kube_pod_info *in);
/* sched.c: a pending pod of ours read again from its object (its volumes
 * changed) and queued again with the new spec. */
void gp_ks_pod_reread(struct gp_kube_sched *s, struct spod *p);

/* namespaces.c: every namespace's labels given to a new engine
 * (gp_ks_rebuild); false when out of memory. */
bool gp_ks_namespaces_apply(struct gp_kube_sched *s);

/* sched_alloc.c: pods of ours bound and still allocating past the
 * timeout reported and marked expired (leader only); the earliest time
 * one is due (INFINITY: none). */
void gp_ks_allocations(struct gp_kube_sched *s);
double gp_ks_allocations_next(const struct gp_kube_sched *s);

/* sched_slot.c: one pod allocating per node (DESIGN.md section 7). A
 * pod holds its node's slot from the dispatch of the job that binds it
 * until the API shows it allocated, ended, started, being deleted, gone,
 * or expired; pods of other schedulers (another gpuplane replica) bound or
 * annotated allocating hold it too. gp_ks_slot_update: p's holding and
 * waiting brought up to date (after any change of p; gone: its record
 * goes); gp_ks_slot_free: whether p may be bound at its engine node now;
 * gp_ks_slot_wait: p (ASSUMED) waits for it; gp_ks_slot_run: the waiting
 * pods of nodes whose slot freed dispatched; gp_ks_slot_reset: all of it
 * forgotten (a rebuild), then recomputed by gp_ks_slot_update. */
struct snode *gp_ks_slot_node(struct gp_kube_sched *s, const struct spod *p);
void gp_ks_slot_update(struct gp_kube_sched *s, struct spod *p, bool gone);
/* Only nodes whose agent serves the per-node protocol have a slot
 * (gp_ks_node_agent: the label GP_KUBE_LABEL_AGENT; gp_ks_slot_node is
 * NULL elsewhere); gp_ks_slot_node_changed: n's label may have come or
 * gone (the holdings counted again, its waiting pods dispatched when it
 * has no slot any more). gp_ks_obj_agent reads the label off a Node
 * object; gp_ks_node_agent answers from n->agent, set from it each time
 * n->obj is (sched.c), as the audit asks it for every pod it maps. */
bool gp_ks_obj_agent(const json_t *obj);
bool gp_ks_node_agent(const struct snode *n);
void gp_ks_slot_node_changed(struct gp_kube_sched *s, struct snode *n);
bool gp_ks_slot_free(struct gp_kube_sched *s, const struct spod *p);
void gp_ks_slot_wait(struct gp_kube_sched *s, struct spod *p);
void gp_ks_slot_run(struct gp_kube_sched *s, size_t *bound);
/* A node is blocked when its slot has been held without a break for
 * --allocating-timeout (a pod bound there the kubelet never admits):
 * gp_ks_slot_unblock takes back the waiting decisions for blocked nodes
 * that nothing irreversible was written of and places them again without
 * those nodes (leader only; sched_unblock.c); gp_ks_slot_next: when it has something to do next
 * (INFINITY: never); gp_ks_slot_holder: a pod holding n's slot other than
 * `not` (NULL: none). */
void gp_ks_slot_unblock(struct gp_kube_sched *s, size_t *bound);
/* sched_unblock.c: p, waiting for blocked node `on` (one of b[0..nb)),
 * placed again without the nodes b when nothing of its decision is
 * irreversible, what was written of it taken back first (why: the block's
 * words, for the Events): DONE, placed elsewhere and dispatched; NOWHERE,
 * no other node fits (nothing changed); FIXED, it cannot move (a gang's
 * member bound, a Binding in flight or maybe through); a gang's member
 * moves its whole gang (every member placed again, all or none); RACED, a take-back
 * was not answered 200 (the pod changed: read again, and its state
 * applied, or the scheduler rebuilt from the API). */
enum gp_ks_move { GP_KS_MOVE_DONE, GP_KS_MOVE_NOWHERE, GP_KS_MOVE_FIXED, GP_KS_MOVE_RACED };
enum gp_ks_move gp_ks_unblock_move(struct gp_kube_sched *s, struct spod *p, struct snode *const *b,
                                   size_t nb, const struct snode *on, const char *why,
                                   size_t *bound);
double gp_ks_slot_next(const struct gp_kube_sched *s);
const struct spod *gp_ks_slot_holder(const struct gp_kube_sched *s, const struct snode *n,
                                     const struct spod * not );
void gp_ks_slot_reset(struct gp_kube_sched *s);

/* audit.c: the pod's booking brought up to date (its node audited before
 * and after), a node audited */
void gp_ks_audit_pod(struct gp_kube_sched *s, struct spod *p, bool gone);
bool gp_ks_audit_node(struct gp_kube_sched *s, struct snode *n);

#endif
