/* health.h - a node's GPU health from XID events: each XID classified
 * from NVIDIA's XID catalog (https://docs.nvidia.com/deploy/xid-errors/,
 * its "Resolution Bucket (Immediate Action)") into application errors
 * (ignored: the application is at fault, the GPU is fine), recoverable
 * ones (the GPU is unhealthy until a GPU reset is seen or a quiet period
 * passes without another) and fatal ones (unhealthy until the driver is
 * reloaded); the table and its sources are in docs/node.md, "Health".
 *
 * A pure state machine: no clock (the time is passed in, seconds on any
 * monotonic scale), no I/O, no threads; the agent feeds it what NVML says
 * and streams each change it returns (ListAndWatch), and posts it as an
 * Event on the Node (gp_node_health_event, the one call here that talks to
 * the API server). */
#ifndef GP_NODE_HEALTH_H
#define GP_NODE_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/inventory.h"
#include "util/err.h"

enum gp_xid_class {
    GP_XID_APPLICATION, /* ignored: RESTART_APP / IGNORE in the catalog */
    GP_XID_RECOVERABLE, /* until the quiet period (or a reset): the other buckets, unknown XIDs */
    GP_XID_FATAL,       /* until the driver reloads: RESTART_BM / RESTART_VM, the GPU lost */
    GP_XID_RESET,       /* until a GPU reset is seen: RESET_GPU, and XID 48 (its workflow's) */
    GP_XID_CLASS_COUNT
};

/* The class of an XID (any number: those the catalog does not list are
 * recoverable, as NVIDIA's device plugin treats every XID it does not
 * ignore as critical). */
enum gp_xid_class gp_node_xid_class(unsigned xid);
/* "application", "recoverable", "fatal", "reset". */
const char *gp_node_xid_class_name(enum gp_xid_class c);
/* The catalog's short description of an XID ("GPU has fallen off the
 * bus"), or NULL for one not in our table. */
const char *gp_node_xid_text(unsigned xid);

enum gp_node_health_state {
    GP_NODE_HEALTHY,
    GP_NODE_UNHEALTHY_RECOVERABLE, /* back on a reset or after the quiet period */
    GP_NODE_UNHEALTHY_FATAL,       /* back when the driver reloads */
    GP_NODE_UNHEALTHY_RESET,       /* back when a GPU reset is seen (no quiet period) */
};

/* What changed a GPU's health. */
enum gp_node_health_cause {
    GP_NODE_CAUSE_XID,           /* an XID came (xid, cls say which) */
    GP_NODE_CAUSE_LOST,          /* NVML said the GPU is lost (fatal) */
    GP_NODE_CAUSE_RESET,         /* a GPU reset was seen (a pending row remapping done) */
    GP_NODE_CAUSE_QUIET,         /* the quiet period passed without a recoverable XID */
    GP_NODE_CAUSE_DRIVER_RELOAD, /* the driver was reloaded */
    GP_NODE_CAUSE_BACK,          /* NVML reads a GPU it had reported lost again */
};

struct gp_node_health_opts {
    double quiet_s; /* 600: a recoverable GPU with no such XID for this long is healthy again */
};

void gp_node_health_opts_default(struct gp_node_health_opts *o);

struct gp_node_gpu_health {
    enum gp_node_health_state state;
    unsigned last_xid;            /* the last XID of any class; 0 for none */
    enum gp_xid_class last_class; /* its class */
    double bad_since_s;           /* when it became unhealthy */
    double last_bad_s;            /* the last recoverable or fatal XID (quiet period from here) */
    uint64_t xids[GP_XID_CLASS_COUNT]; /* XIDs seen, by class */
};

struct gp_node_health {
    struct gp_node_health_opts o;
    size_t n_gpus;
    struct gp_node_gpu_health gpus[GP_NODE_MAX_GPUS];
};

/* One GPU's change of health: what the agent streams and posts. */
struct gp_node_health_change {
    unsigned gpu; /* NVML's index */
    enum gp_node_health_state from, to;
    enum gp_node_health_cause cause;
    unsigned xid;          /* CAUSE_XID: the XID */
    enum gp_xid_class cls; /* CAUSE_XID: its class */
};

/* Every GPU healthy with no XIDs. n_gpus is capped at GP_NODE_MAX_GPUS; o
 * NULL: the defaults. */
void gp_node_health_init(struct gp_node_health *h, size_t n_gpus,
                         const struct gp_node_health_opts *o);

/* The transitions. Each returns true and fills *ch (if not NULL) when the
 * GPU's state changed, false when it did not (an application XID, a
 * recoverable one on a GPU already unhealthy, a reset of a healthy GPU, a
 * GPU index out of range). The rules:
 *   xid:    application: counted only. recoverable: HEALTHY ->
 *           RECOVERABLE, the quiet period restarts (also when already
 *           RECOVERABLE; a FATAL or RESET GPU stays so). reset: HEALTHY or
 *           RECOVERABLE -> RESET (a FATAL GPU stays FATAL). fatal: -> FATAL.
 *   lost:   -> FATAL.
 *   reset:  RECOVERABLE or RESET -> HEALTHY (a FATAL GPU stays FATAL).
 *   tick:   each RECOVERABLE GPU whose last recoverable XID is quiet_s old
 *           or more -> HEALTHY; up to cap changes written, all applied;
 *           returns how many changed.
 *   driver_reload: every unhealthy GPU -> HEALTHY; as tick. */
bool gp_node_health_xid(struct gp_node_health *h, unsigned gpu, unsigned xid, double now_s,
                        struct gp_node_health_change *ch);
bool gp_node_health_lost(struct gp_node_health *h, unsigned gpu, double now_s,
                         struct gp_node_health_change *ch);
bool gp_node_health_reset(struct gp_node_health *h, unsigned gpu, double now_s,
                          struct gp_node_health_change *ch);
size_t gp_node_health_tick(struct gp_node_health *h, double now_s, struct gp_node_health_change *ch,
                           size_t cap);
size_t gp_node_health_driver_reload(struct gp_node_health *h, double now_s,
                                    struct gp_node_health_change *ch, size_t cap);

/* back:   one GPU known to be good again: any unhealthy state -> HEALTHY
 *         with the cause given: BACK (a GPU NVML had reported lost, or
 *         that had gone from its list, answers again) or DRIVER_RELOAD
 *         (NVML initialised again, for each GPU it lists: the agent's
 *         per-GPU driver_reload, which leaves those still gone out).
 * grow:   room for GPUs that appeared: those past the old count start
 *         healthy; n_gpus is capped at GP_NODE_MAX_GPUS and never shrinks. */
bool gp_node_health_back(struct gp_node_health *h, unsigned gpu, enum gp_node_health_cause cause,
                         double now_s, struct gp_node_health_change *ch);
void gp_node_health_grow(struct gp_node_health *h, size_t n_gpus);

/* True when the GPU is healthy (false for an index out of range). */
bool gp_node_health_ok(const struct gp_node_health *h, unsigned gpu);
/* The time at which the next tick can change something (the earliest
 * quiet period's end), or a negative value when none is pending. */
double gp_node_health_next_s(const struct gp_node_health *h);

/* Copies health into the inventory: each GPU's healthy and last_xid
 * (GPUs matched by index; those past h->n_gpus left as they are). */
void gp_node_health_apply(const struct gp_node_health *h, struct gp_node_inventory *inv);

/* "healthy", "unhealthy (recoverable)", "unhealthy (fatal)", "unhealthy
 * (until a reset)". */
const char *gp_node_health_state_name(enum gp_node_health_state s);

/* A change as an Event's reason, type and note: "GPUUnhealthy" (Warning)
 * or "GPUHealthy" (Normal), and e.g. "GPU 0 (GPU-…): XID 79 (fatal: GPU
 * has fallen off the bus): unhealthy until the driver is reloaded". gpu
 * may be NULL (no UUID named). note: at least 256 bytes. */
const char *gp_node_health_reason(const struct gp_node_health_change *ch, const char **type);
void gp_node_health_note(const struct gp_node_health_change *ch, const struct gp_node_gpu *gpu,
                         char *note, size_t n);

/* Posts the change as an events.k8s.io/v1 Event regarding the Node
 * (namespace "default", reportingController "gpuplane.io/node-agent",
 * reportingInstance instance, action "XID" or "Recover"). node_uid may be
 * NULL. GP_OK once the server answered 201; else the client's error or
 * the status's (gp_kube_status_err) with a one-line diag. */
struct gp_kube_client;
enum gp_err gp_node_health_event(struct gp_kube_client *c, const char *node, const char *node_uid,
                                 const char *instance, const struct gp_node_health_change *ch,
                                 const struct gp_node_gpu *gpu, struct gp_diag *diag);

#endif
