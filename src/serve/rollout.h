/* rollout.h - a Deployment's rolling update as the Deployment controller
 * runs it (kubernetes/kubernetes pkg/controller/deployment/rolling.go and
 * util/deployment_util.go):
 *  - maxSurge and maxUnavailable, absolute or a percent of replicas:
 *    surge rounds up, unavailable rounds down (ResolveFenceposts); both 0
 *    would block the rollout, so unavailable becomes 1;
 *  - the new ReplicaSet grows while all pods stay within replicas +
 *    maxSurge (reconcileNewReplicaSet);
 *  - the old ones shrink while the available pods stay at or above
 *    replicas - maxUnavailable: unhealthy old pods first, then available
 *    ones (reconcileOldReplicaSets, cleanupUnhealthyReplicas,
 *    scaleDownOldReplicaSetsForRollingUpdate).
 * The caller says when new pods become available (placed, booted, model
 * loaded) between reconciles. Pure. */
#ifndef GP_SERVE_ROLLOUT_H
#define GP_SERVE_ROLLOUT_H

#include <stdbool.h>
#include <stdint.h>

/* An IntOrString of the strategy: a count, or a percent of replicas. */
struct gp_rollout_value {
    int32_t value;
    bool percent;
};

/* The fenceposts for `replicas`: *surge rounded up, *unavailable down. */
void gp_serve_rollout_fenceposts(int32_t replicas, struct gp_rollout_value surge,
                                 struct gp_rollout_value unavailable, int32_t *max_surge,
                                 int32_t *max_unavailable);

struct gp_rollout {
    int32_t replicas, max_surge, max_unavailable;
    int32_t old_pods, old_ready; /* the old ReplicaSets, together */
    int32_t new_pods, new_ready; /* the new ReplicaSet */
};

/* A rollout of `replicas` from a fully available old version. */
void gp_serve_rollout_start(struct gp_rollout *r, int32_t replicas, struct gp_rollout_value surge,
                            struct gp_rollout_value unavailable);

/* One reconcile: the new ReplicaSet scaled up, then the old ones down.
 * Returns the pods created (*created) and removed (*removed). */
void gp_serve_rollout_reconcile(struct gp_rollout *r, int32_t *created, int32_t *removed);

/* n of the new pods became available (at most those not yet). */
void gp_serve_rollout_ready(struct gp_rollout *r, int32_t n);

/* Done: every pod is new and available. */
bool gp_serve_rollout_done(const struct gp_rollout *r);

#endif
