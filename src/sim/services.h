/* services.h - an inference service's running state in a timed run,
 * shared by services.c (serving, autoscaling, results) and rollouts.c
 * (rolling updates of its Deployment). Internal to sim/. */
#ifndef GP_SIM_SERVICES_H
#define GP_SIM_SERVICES_H

#include "io/service.h"
#include "serve/erlang.h"
#include "serve/rollout.h"
#include "sim/internal.h"

struct replica {
    uint32_t lp;
    uint32_t runs_seen; /* binds seen: a new one pays a cold start */
    double ready_at_s;  /* INFINITY: not bound yet */
    uint32_t rev;       /* its ReplicaSet: 0 the first template, k the k-th rollout's */
};

struct chunk {
    double t_s, n; /* arrival time (mid-interval) and requests left */
};

struct ready_change {
    double t_s;
    uint32_t ready;
};

/* The waiting requests after a sync, kept while some wait (and once when
 * none are left): the backlog then, and the requests that joined it so
 * far, for the `queued` and `unserved_load` timelines. */
struct wait_change {
    double t_s;
    double backlog, joined;
};

/* One rollout's figures in virtual time (rollouts.c). */
enum svc_roll_state { ROLL_WAITING, ROLL_ACTIVE, ROLL_COMPLETE, ROLL_SUPERSEDED };
struct svc_roll {
    enum svc_roll_state state;
    double start_s, end_s, progress_s;            /* began, ended, last progress */
    int32_t replicas, max_surge, max_unavailable; /* when it began */
    int32_t min_ready, max_pods, replicas_low, replicas_high, new_ready;
    double spare_gpus_peak;
    double below_s, last_t; /* time below replicas - maxUnavailable ready */
    bool below;
    bool no_room; /* a new pod waited unplaced while no node was booting */
    double no_room_s;
};

struct svc_run {
    const struct gp_service *s;
    uint32_t item, inst;
    bool found;
    size_t scan; /* instances scanned for the Deployment's */
    int32_t desired;
    GP_VEC(struct replica) reps;
    struct gp_hpa_state hpa;
    struct gp_kpa_state kpa;
    GP_VEC(struct gp_hpa_pod) pods;
    GP_VEC(struct chunk) backlog;
    size_t bhead;
    double backlog_n;
    GP_VEC(struct gp_serve_lat) lat, ttft;
    GP_VEC(float) lat_t; /* the time each lat stretch ends */
    double lat_first_t;  /* when the last stretch began to gather merges */
    GP_VEC(struct ready_change) readies;
    GP_VEC(struct wait_change) waits;
    double last_t;
    /* the ready replicas of the interval being served */
    uint32_t ready;
    double rate_sum; /* their speeds (1 unless a time-sliced GPU slows them) */
    double last_rps, last_conc;
    double requests, queued, joined, tokens, unserved_s, gpu_s;
    uint64_t cold_starts;
    uint32_t peak_ready;
    /* the autoscaler's next decision, and its last (a rollout's controller
     * reconciles every second in between) */
    double scale_due_s, scale_t;
    /* the Deployment's ReplicaSets, from its first rollout on */
    bool dep_on;
    struct gp_deploy dep;
    uint32_t started; /* rollouts begun */
    double gpus_per_pod;
    struct svc_roll *rolls; /* s->nrollouts */
};

/* ---- services.c ---------------------------------------------------------- */

/* 0: not bound, 1: loading, 2: ready (the order a ReplicaSet removes them in) */
int gp_sim_services_rank(const struct run *r, const struct replica *rep);
/* One more replica of the service's Deployment, of ReplicaSet rev. */
enum gp_err gp_sim_services_add(struct run *r, struct svc_run *sv, uint32_t rev);
/* Replica i leaves the engine and the service. */
enum gp_err gp_sim_services_remove(struct run *r, struct svc_run *sv, size_t i);

/* ---- rollouts.c ---------------------------------------------------------- */

/* The Deployment controller at a sync (after the autoscaler set
 * sv->desired): begins the rollouts whose time has come, then, from the
 * first one on, reconciles the ReplicaSets as serve/rollout.h says
 * (before it, the caller applies sv->desired itself). *rolling: a rollout
 * is under way (the controller reconciles every second). */
#define GP_SIM_ROLLOUT_TICK_S 1.0
enum gp_err gp_sim_rollout_reconcile(struct run *r, struct svc_run *sv, bool *rolling);
/* The time of the next rollout to begin after t_s (INFINITY: none). */
double gp_sim_rollout_next_s(const struct svc_run *sv, double t_s);
/* Rollout k's figures at the end of the run. */
void gp_sim_rollout_result(const struct svc_run *sv, size_t k, double end_s,
                           struct gp_sim_rollout *o);

#endif
