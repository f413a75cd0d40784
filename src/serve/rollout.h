/* rollout.h - a Deployment's ReplicaSets as the Deployment controller
 * reconciles them (kubernetes/kubernetes pkg/controller/deployment:
 * deployment_controller.go syncDeployment, sync.go scale, rolling.go,
 * util/deployment_util.go):
 *  - maxSurge and maxUnavailable, absolute or a percent of spec.replicas:
 *    surge rounds up, unavailable rounds down (ResolveFenceposts); both 0
 *    would block the rollout, so unavailable becomes 1; the unavailable is
 *    at most spec.replicas, and 0 when spec.replicas is 0 (MaxUnavailable);
 *  - a template change (a rollout) adds a new ReplicaSet; the one that was
 *    new until then becomes old and is scaled down like the others
 *    ("rollover": it may never have finished);
 *  - a scaling event (spec.replicas differs from the desired-replicas
 *    annotation of an active ReplicaSet) is a sync of its own: with one
 *    active ReplicaSet it is scaled to spec.replicas; with a saturated new
 *    one the old ones go to 0; otherwise the pods to add or remove to reach
 *    spec.replicas + maxSurge are shared in proportion to each active set's
 *    size over its max-replicas annotation (GetProportion, rounded half
 *    away from zero), the largest set first (the newer first among equals
 *    when adding, the older first when removing), the rounding's leftover
 *    to the first ("proportional scaling");
 *  - otherwise the rolling update: the new ReplicaSet grows while all pods
 *    stay within spec.replicas + maxSurge (reconcileNewReplicaSet,
 *    NewRSNewReplicas), then the old ones shrink, oldest first: their
 *    unhealthy pods first within what keeps the new set's unavailable
 *    pods covered, then available ones while spec.replicas -
 *    maxUnavailable stay available (reconcileOldReplicaSets,
 *    cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate).
 * A ReplicaSet's pods follow its spec at once, the ones not available
 * removed first (the ReplicaSet controller's order). The caller says which
 * pods are available between syncs. Pure.
 *
 * The bounds, at the spec.replicas of each moment: after a reconcile at
 * most spec.replicas + maxSurge pods; no available pod removed while that
 * leaves fewer than spec.replicas - maxUnavailable available, but for a
 * scale change's transient: after a scale-up the new floor holds only once
 * the added pods are ready, and a scale-down's proportional scaling takes
 * pods from every active set whatever their availability (each set's
 * unavailable ones first). */
#ifndef GP_SERVE_ROLLOUT_H
#define GP_SERVE_ROLLOUT_H

#include <stdbool.h>
#include <stdint.h>

/* An IntOrString of the strategy: a count, or a percent of replicas. */
struct gp_rollout_value {
    int32_t value;
    bool percent;
};

/* The fenceposts for `replicas`: *surge rounded up, *unavailable down
 * (ResolveFenceposts: both 0 give unavailable 1). */
void gp_serve_rollout_fenceposts(int32_t replicas, struct gp_rollout_value surge,
                                 struct gp_rollout_value unavailable, int32_t *max_surge,
                                 int32_t *max_unavailable);

/* The first template and up to 32 rollouts of it. */
#define GP_DEPLOY_MAX_RS 33

struct gp_rs {
    int32_t pods;      /* spec.replicas; its pods follow it at once */
    int32_t available; /* of them, available (the caller observes it) */
    /* deployment.kubernetes.io/desired-replicas and max-replicas, set when
     * the Deployment last scaled it (max 0: none) */
    int32_t desired_ann, max_ann;
};

struct gp_deploy {
    int32_t replicas; /* spec.replicas: an autoscaler sets it */
    struct gp_rollout_value surge, unavailable;
    uint32_t nrs; /* ReplicaSets by creation; the last one is the new one */
    struct gp_rs rs[GP_DEPLOY_MAX_RS];
};

/* A Deployment of `replicas` available pods in one ReplicaSet. */
void gp_serve_deploy_init(struct gp_deploy *d, int32_t replicas, struct gp_rollout_value surge,
                          struct gp_rollout_value unavailable);

/* MaxSurge and MaxUnavailable at the current spec.replicas. */
int32_t gp_serve_deploy_max_surge(const struct gp_deploy *d);
int32_t gp_serve_deploy_max_unavailable(const struct gp_deploy *d);

/* The template changes, with the strategy given: a new ReplicaSet of no
 * pods. False (nothing changed) when GP_DEPLOY_MAX_RS are there. */
bool gp_serve_deploy_rollout(struct gp_deploy *d, struct gp_rollout_value surge,
                             struct gp_rollout_value unavailable);

/* One reconcile: a scaling event's sync when there is one, then the
 * rolling update's scale-up of the new ReplicaSet and scale-down of the
 * old ones (the syncs the ReplicaSets' updates trigger at once).
 * delta[i]: the pods ReplicaSet i gained (> 0) or lost (< 0). */
void gp_serve_deploy_sync(struct gp_deploy *d, int32_t delta[GP_DEPLOY_MAX_RS]);

/* Pods and available pods of every ReplicaSet. */
int32_t gp_serve_deploy_pods(const struct gp_deploy *d);
int32_t gp_serve_deploy_available(const struct gp_deploy *d);

/* DeploymentComplete: spec.replicas pods, all of the new ReplicaSet and
 * available. */
bool gp_serve_deploy_complete(const struct gp_deploy *d);

#endif
