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
    bool fresh;         /* of the new version (a rollout's new ReplicaSet) */
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

/* A rolling update in virtual time (rollouts.c). */
struct svc_roll {
    bool active, done;
    struct gp_rollout m;
    double start_s, end_s, progress_s; /* began, ended, last progress */
    int32_t min_ready, max_pods;
    double spare_gpus_peak, gpus_per_pod;
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
    struct svc_roll roll;
};

/* ---- services.c ---------------------------------------------------------- */

/* 0: not bound, 1: loading, 2: ready (the order a ReplicaSet removes them in) */
int gp_sim_services_rank(const struct run *r, const struct replica *rep);
/* One more replica of the service's Deployment (fresh: of the new version). */
enum gp_err gp_sim_services_add(struct run *r, struct svc_run *sv, bool fresh);
/* Replica i leaves the engine and the service. */
enum gp_err gp_sim_services_remove(struct run *r, struct svc_run *sv, size_t i);

/* ---- rollouts.c ---------------------------------------------------------- */

/* The Deployment controller's reconcile at a sync: starts the service's
 * rollout once its time has come, then creates and removes replicas as
 * serve/rollout.h says. *rolling: the rollout is under way (the
 * autoscaler waits, the next sync comes sooner). */
#define GP_SIM_ROLLOUT_TICK_S 1.0
enum gp_err gp_sim_rollout_step(struct run *r, struct svc_run *sv, bool *rolling);
/* The rollout's figures at the end of the run. */
void gp_sim_rollout_result(const struct svc_run *sv, double end_s, struct gp_sim_rollout *o);

#endif
