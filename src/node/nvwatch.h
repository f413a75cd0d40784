/* nvwatch.h - the node's GPUs kept from NVML while the agent runs: NVML
 * opened and the GPUs discovered at start, discovered again every period,
 * XID events fed to the health state machine (node/health.h) from a
 * thread of its own; a GPU that NVML reports lost (GPU_IS_LOST: fallen off
 * the bus) or that is gone from its list kept and marked unhealthy; NVML
 * failing mid-run kept as the last inventory while NVML is opened again
 * with back-off; and, when it answers again, the inventory read again and
 * health restored for the GPUs that are back (docs/node.md, "NVML at run
 * time"). The agent polls it and streams what changed.
 *
 * The inventory it serves keeps a GPU at the position it was first seen
 * at, with index == position (what the device plugin, the health state
 * and the metrics key on); GPUs that appear later are added at the end.
 * The CDI spec is built from gp_node_nvwatch_present: the GPUs NVML lists
 * now, with NVML's index of today. */
#ifndef GP_NODE_NVWATCH_H
#define GP_NODE_NVWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/health.h"
#include "node/inventory.h"
#include "util/err.h"

#define GP_NODE_NVWATCH_PERIOD_S      60.0 /* as GFD's --sleep-interval default */
#define GP_NODE_NVWATCH_SAMPLE_S      10.0 /* utilisation and memory used for /metrics */
#define GP_NODE_NVWATCH_BACKOFF_MAX_S 60.0
#define GP_NODE_NVWATCH_MAX_CHANGES   128 /* health changes one poll reports */

struct gp_node_nvwatch_opts {
    const char *nvml_path; /* as gp_nvml_open's */
    double period_s;       /* discovery again; 0: GP_NODE_NVWATCH_PERIOD_S */
    double
        sample_s; /* utilisation and memory used between discoveries; 0: GP_NODE_NVWATCH_SAMPLE_S */
    double backoff_max_s;                     /* 0: GP_NODE_NVWATCH_BACKOFF_MAX_S */
    const struct gp_node_health_opts *health; /* NULL: the defaults */
};

/* What one poll found. */
struct gp_node_nvwatch_report {
    size_t n_changes, dropped; /* health changes (those past the array: dropped) */
    struct gp_node_health_change changes[GP_NODE_NVWATCH_MAX_CHANGES];
    bool discovered;      /* a discovery ran (and succeeded) */
    bool changed;         /* the inventory served differs from the last poll's */
    bool devices_changed; /* GPUs or MIG devices appeared or changed: re-advertise */
    bool went_down;       /* NVML failed: the last inventory is kept; msg says why */
    bool came_back;       /* NVML answers again; msg says what it lists */
    char msg[512];
};

struct gp_node_nvwatch_stats {
    bool up;                   /* NVML answering */
    unsigned long discoveries; /* discoveries that succeeded (the first included) */
    unsigned long failures;    /* times NVML failed mid-run */
    unsigned long retries;     /* attempts to open NVML again */
    unsigned long lost;        /* GPUs served that NVML reports lost or no longer lists */
    double next_retry_s;       /* while down: when the next attempt is due */
    size_t lost_at_start;      /* GPUs lost at start: not served (they cannot be named) */
};

struct gp_node_nvwatch;

/* Opens NVML, discovers, opens the XID event set and starts its thread.
 * Errors at start are gp_nvml_open's and gp_node_discover's (exit codes
 * by gp_nvml_exit_code); a GPU lost at start is left out (it cannot be
 * named) and counted in the stats. */
enum gp_err gp_node_nvwatch_start(const struct gp_node_nvwatch_opts *o,
                                  struct gp_node_nvwatch **out, struct gp_diag *diag);
/* Stops the thread, closes NVML, frees. NULL is fine. */
void gp_node_nvwatch_stop(struct gp_node_nvwatch *w);

/* Does what is due at now_s (seconds, CLOCK_MONOTONIC): takes the XID
 * thread's health changes, discovers again when the period has passed or
 * the event wait failed, opens NVML again when it is down and the back-off
 * has passed, runs the health tick. */
void gp_node_nvwatch_poll(struct gp_node_nvwatch *w, double now_s,
                          struct gp_node_nvwatch_report *rep);

/* The inventory served, health applied (healthy, last_xid). */
void gp_node_nvwatch_inventory(struct gp_node_nvwatch *w, struct gp_node_inventory *out);
/* The GPUs NVML lists now (none lost or gone), with NVML's indexes, health
 * applied: what the CDI spec describes. */
void gp_node_nvwatch_present(struct gp_node_nvwatch *w, struct gp_node_inventory *out);
/* A copy of the health state (by position, as the inventory served). */
void gp_node_nvwatch_health(struct gp_node_nvwatch *w, struct gp_node_health *out);
void gp_node_nvwatch_stats(struct gp_node_nvwatch *w, struct gp_node_nvwatch_stats *out);

/* The wait before attempt number `attempt` (0 the first) to open NVML
 * again: first_s doubled each attempt, at most max_s. */
double gp_node_nvwatch_backoff_s(unsigned attempt, double first_s, double max_s);

#endif
