/* eventlog.h - the scheduler's event log (docs/FORMATS.md, "Event log"):
 * what reached the engine of a live `gpuplane schedule` and what it
 * decided, one JSON object a line, appended as it happens, so that
 * `gpuplane sim --replay` can make the same engine calls in the same order
 * and compare its decisions with the recorded ones.
 *
 * The writer (eventlog_write.c) is driven by kube/sched.c, one call after
 * each engine call, from the scheduling thread only; it flushes at the end
 * of every cycle, so a crash leaves a readable prefix (at most a torn last
 * line), and it rotates at a size cap: FILE becomes FILE.1 and a new FILE
 * starts, whose engine events begin at the next reset (the scheduler
 * rebuilds its engine then), so each file replays on its own.
 *
 * The reader (eventlog_read.c) gives one event a line, type-checked, with
 * "FILE:LINE: FIELD: ..." for what does not read. It sits in io/ because
 * both kube/ (the writer's caller) and sim/ (the replay) use the format. */
#ifndef GP_IO_EVENTLOG_H
#define GP_IO_EVENTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "util/arena.h"
#include "util/err.h"

#define GP_EVLOG_FORMAT  "gpuplane-events"
#define GP_EVLOG_VERSION 1
/* A line longer than this does not read (a node's labels are far less). */
#define GP_EVLOG_LINE_MAX (4u << 20)

/* --- the writer ----------------------------------------------------------- */

struct gp_evlog;

/* Opens path for appending (created when absent; a torn last line of a
 * previous run is ended first) and writes the header. max_bytes: the size
 * at which gp_evlog_rotate_due says so (0: never). */
enum gp_err gp_evlog_open(const char *path, uint64_t max_bytes, const char *scheduler,
                          const char *identity, struct gp_evlog **out, struct gp_diag *diag);
/* Flushes and closes; NULL is fine. */
void gp_evlog_close(struct gp_evlog *w);

/* Every call below does nothing when w is NULL, or once a write failed
 * (gp_evlog_error says why). Engine events between a rotation and the next
 * reset are dropped (they would replay on no engine). */

/* An API object's change as the scheduler received it (informational:
 * the engine calls it led to follow). obj: "pod", "node", "podgroup". */
void gp_evlog_change(struct gp_evlog *w, double t_s, const char *obj, const char *type,
                     const char *key, const char *rv);
/* A new engine: gp_engine_new(policy, seed). */
void gp_evlog_reset(struct gp_evlog *w, const char *policy, uint64_t seed);
void gp_evlog_queue_set(struct gp_evlog *w, const struct gp_queue_spec *q, enum gp_err err,
                        uint32_t id);
void gp_evlog_node_add(struct gp_evlog *w, const struct gp_node_spec *n, enum gp_err err,
                       uint32_t id);
void gp_evlog_node_drain(struct gp_evlog *w, uint32_t node);
void gp_evlog_group_add(struct gp_evlog *w, const struct gp_group_spec *g, enum gp_err err,
                        uint32_t id);
void gp_evlog_pod_add(struct gp_evlog *w, const struct gp_pod_spec *p, double t_s, enum gp_err err,
                      uint32_t id);
/* pick NULL: wherever the GPUs are free. */
void gp_evlog_pod_assign(struct gp_evlog *w, uint32_t pod, uint32_t node,
                         const struct gp_pick *pick, enum gp_err err);
void gp_evlog_pod_finished(struct gp_evlog *w, uint32_t pod);
void gp_evlog_pod_forget(struct gp_evlog *w, uint32_t pod);
/* gp_engine_pdb_set(pdb, allowed) and gp_engine_pod_set_pdbs(pod,
 * pdbs[0..n)): the PodDisruptionBudgets the driver gave the engine (a
 * budget's disruptionsAllowed by its id; the budgets a pod counts
 * against), so that a replay counts them as the live run did. */
void gp_evlog_pdb_set(struct gp_evlog *w, uint32_t pdb, int32_t allowed, enum gp_err err);
void gp_evlog_pod_pdbs(struct gp_evlog *w, uint32_t pod, const uint32_t *pdbs, size_t n,
                       enum gp_err err);
/* A namespace's labels given (gp_engine_namespace_set), or the namespace
 * deleted (labels NULL, n 0: gp_engine_namespace_delete). */
void gp_evlog_namespace(struct gp_evlog *w, const char *name, const struct gp_kv *labels, size_t n,
                        bool deleted);
/* One cycle, gp_engine_schedule(e, t_s, 0, out, cap) giving dec[0..n):
 * the cycle, each decision (names read from e), its end; then a flush. */
void gp_evlog_cycle(struct gp_evlog *w, const struct gp_engine *e, double t_s, size_t cap,
                    const struct gp_decision *dec, size_t n);

/* Whether the file reached its cap (rotate before the next engine event). */
bool gp_evlog_rotate_due(const struct gp_evlog *w);
/* FILE renamed FILE.1 (replacing it), a new FILE with its header; engine
 * events are dropped until the next gp_evlog_reset. */
enum gp_err gp_evlog_rotate(struct gp_evlog *w, struct gp_diag *diag);
/* The first write failure ("" when none). */
const char *gp_evlog_error(const struct gp_evlog *w);
uint64_t gp_evlog_bytes(const struct gp_evlog *w);

/* A decision as one JSON object (the writer's, and the replay's for its
 * own decisions: the same bytes for the same decision). Caller frees. */
char *gp_evlog_decision_text(const struct gp_engine *e, uint64_t cycle, uint32_t index,
                             const struct gp_decision *d);
/* Whether two decisions say the same (kind, pod, node, GPUs and, on a
 * MIG node of e, the instances, eviction, explanation, gang, queue): their
 * JSON is equal. */
bool gp_evlog_decision_same(const struct gp_engine *e, const struct gp_decision *a,
                            const struct gp_decision *b);

/* --- the reader ----------------------------------------------------------- */

enum gp_evlog_kind {
    GP_EVLOG_HEADER, /* "log": a run of the writer starts */
    GP_EVLOG_CHANGE,
    GP_EVLOG_RESET,
    GP_EVLOG_QUEUE_SET,
    GP_EVLOG_NODE_ADD,
    GP_EVLOG_NODE_DRAIN,
    GP_EVLOG_GROUP_ADD,
    GP_EVLOG_POD_ADD,
    GP_EVLOG_POD_ASSIGN,
    GP_EVLOG_POD_FINISHED,
    GP_EVLOG_POD_FORGET,
    GP_EVLOG_CYCLE,
    GP_EVLOG_DECISION,
    GP_EVLOG_CYCLE_END,
    GP_EVLOG_POD_PDB,   /* gp_engine_pod_set_pdb_violating: an older log's budgets (read only) */
    GP_EVLOG_NAMESPACE, /* gp_engine_namespace_set / _delete (the driver's Namespaces) */
    GP_EVLOG_PDB_SET,   /* gp_engine_pdb_set (the Kubernetes driver's budgets) */
    GP_EVLOG_POD_PDBS,  /* gp_engine_pod_set_pdbs */
};

/* One line read. Strings and arrays live in the reader's arena (the specs
 * stay valid until gp_evlog_reader_close, as long as an engine given them
 * needs); text is the line itself, valid until the next read. */
struct gp_evlog_event {
    enum gp_evlog_kind kind;
    size_t line;
    const char *text;
    double t_s;           /* change, pod_add, cycle */
    bool ok;              /* the call's result: GP_OK or not */
    uint32_t id;          /* what the call issued, when ok */
    uint32_t pod, node;   /* node_drain, pod_assign, pod_finished, pod_forget, pod_pdb, pod_pdbs */
    bool violating;       /* pod_pdb */
    uint32_t pdb;         /* pdb_set: the budget's id */
    int32_t allowed;      /* pdb_set: its disruptionsAllowed */
    const uint32_t *pdbs; /* pod_pdbs: the budgets' ids */
    size_t npdbs;
    bool has_pick;              /* pod_assign */
    struct gp_pick pick;        /* pod_assign */
    const char *policy;         /* reset */
    uint64_t seed;              /* reset */
    uint64_t cycle;             /* cycle, decision, cycle_end */
    uint32_t index;             /* decision: its place in the cycle */
    size_t cap, count;          /* cycle: gp_engine_schedule's cap; cycle_end: decisions */
    struct gp_decision dec;     /* decision */
    struct gp_queue_spec queue; /* queue_set */
    struct gp_node_spec node_spec;
    struct gp_pod_spec pod_spec;
    struct gp_group_spec group;
    const char *obj, *type, *key; /* change */
    /* namespace: its name, and its labels (deleted: none, ns_deleted) */
    const char *ns_name;
    const struct gp_kv *ns_labels;
    size_t ns_nlabels;
    bool ns_deleted;
};

struct gp_evlog_reader;

/* path names the file in messages. */
enum gp_err gp_evlog_reader_open(FILE *f, const char *path, struct gp_evlog_reader **out,
                                 struct gp_diag *diag);
void gp_evlog_reader_close(struct gp_evlog_reader *r);
/* The next event: GP_OK with *ev, GP_ENOTFOUND at the end, or GP_EPARSE /
 * GP_EINVALID with "FILE:LINE: FIELD: ..." in diag. A line that does not
 * read and is the last one (or is followed by a header: a run that
 * crashed mid-line, then a new one appended) is torn: skipped, with a
 * warning (gp_evlog_reader_warning). */
enum gp_err gp_evlog_reader_next(struct gp_evlog_reader *r, struct gp_evlog_event *ev,
                                 struct gp_diag *diag);
/* A message kept to one line: control characters (a log's strings quoted
 * in it may hold any) become '?'. */
void gp_evlog_msg_clean(char *msg);
/* The warning of the last read ("" when none); cleared by the next read. */
const char *gp_evlog_reader_warning(const struct gp_evlog_reader *r);

/* One line parsed (the reader's step; the fuzz target's). a: the specs'
 * strings. where: "FILE:LINE" for messages. */
enum gp_err gp_evlog_parse_line(const char *text, size_t len, const char *where, struct gp_arena *a,
                                struct gp_evlog_event *ev, struct gp_diag *diag);

#endif
