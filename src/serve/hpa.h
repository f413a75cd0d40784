/* hpa.h - the Horizontal Pod Autoscaler's algorithm (autoscaling/v2), as
 * kube-controller-manager runs it: kubernetes/kubernetes
 * pkg/controller/podautoscaler/replica_calculator.go (the replica count a
 * metric asks for: tolerance, unready and missing pods) and horizontal.go
 * (reconcileAutoscaler's bounds, stabilizeRecommendationWithBehaviors,
 * convertDesiredReplicasWithBehaviorRate and the scale-up and scale-down
 * limits of the `behavior` policies); documented in "Horizontal Pod
 * Autoscaling" (kubernetes.io/docs/tasks/run-application/
 * horizontal-pod-autoscale/). The caller runs gp_serve_hpa_sync every
 * sync period (15 s, --horizontal-pod-autoscaler-sync-period) and applies
 * the replica count it returns.
 *
 * Pure: no allocation (the history is a fixed ring), no clock (times are
 * the caller's, in seconds). */
#ifndef GP_SERVE_HPA_H
#define GP_SERVE_HPA_H

#include <stdbool.h>
#include <stdint.h>

#define GP_HPA_SYNC_S            15.0  /* --horizontal-pod-autoscaler-sync-period */
#define GP_HPA_TOLERANCE         0.1   /* --horizontal-pod-autoscaler-tolerance */
#define GP_HPA_CPU_INIT_S        300.0 /* --horizontal-pod-autoscaler-cpu-initialization-period */
#define GP_HPA_READINESS_DELAY_S 30.0  /* --horizontal-pod-autoscaler-initial-readiness-delay */
#define GP_HPA_DOWN_WINDOW_S     300.0 /* scaleDown.stabilizationWindowSeconds default */
#define GP_HPA_MAX_POLICIES      4
#define GP_HPA_MAX_PERIOD_S      1800 /* periodSeconds: 1..1800 (API validation) */
#define GP_HPA_MAX_WINDOW_S      3600 /* stabilizationWindowSeconds: 0..3600 */
#define GP_HPA_HISTORY           512  /* recommendations and scale events kept */

enum gp_hpa_policy_type { GP_HPA_PODS, GP_HPA_PERCENT };
enum gp_hpa_select { GP_HPA_SELECT_MAX, GP_HPA_SELECT_MIN, GP_HPA_SELECT_DISABLED };

struct gp_hpa_policy {
    enum gp_hpa_policy_type type;
    int32_t value;
    int32_t period_s;
};

/* HPAScalingRules: one direction of `behavior`. */
struct gp_hpa_rules {
    int32_t window_s; /* stabilizationWindowSeconds */
    enum gp_hpa_select select;
    struct gp_hpa_policy policies[GP_HPA_MAX_POLICIES];
    uint32_t npolicies;
};

struct gp_hpa_spec {
    int32_t min_replicas, max_replicas;
    double target;    /* the metric's target: an average value per pod */
    double tolerance; /* GP_HPA_TOLERANCE */
    /* the metric is the CPU resource: the readiness rules of groupPods
     * apply (cpu initialisation period, initial readiness delay) */
    bool cpu;
    double cpu_init_s, readiness_delay_s, metric_window_s;
    struct gp_hpa_rules up, down;
};

/* autoscaling/v2's defaults (SetDefaults_HorizontalPodAutoscalerBehavior):
 * scale-up window 0, policies {Pods 4 / 15 s, Percent 100 / 15 s}, Max;
 * scale-down window 300 s, {Percent 100 / 15 s}, Max; tolerance 0.1. */
void gp_serve_hpa_spec_default(struct gp_hpa_spec *s, int32_t min_replicas, int32_t max_replicas,
                               double target);

/* One pod of the scale target, as the replica calculator sees it. */
enum gp_hpa_phase { GP_HPA_POD_PENDING, GP_HPA_POD_RUNNING, GP_HPA_POD_FAILED };

struct gp_hpa_pod {
    enum gp_hpa_phase phase;
    bool deleting;   /* deletionTimestamp set: ignored */
    bool has_metric; /* else a missing pod */
    double metric;   /* its value */
    /* for the CPU rules: its Ready condition, when it last changed, its
     * start, and the metric's timestamp; has_ready false = no condition */
    bool has_ready, ready;
    double ready_change_s, start_s, metric_t_s;
};

/* What the replica calculator proposes for one metric
 * (calcPlainMetricReplicas): `current` unchanged within the tolerance or
 * when the missing and unready pods would reverse the direction;
 * valid false when no pod has a usable metric (the HPA then keeps the
 * count: "did not receive metrics for targeted pods"). */
struct gp_hpa_proposal {
    int32_t replicas;
    bool valid;
    double usage_ratio; /* the ready pods' mean / target */
    uint32_t ready, unready, missing, ignored;
};

struct gp_hpa_proposal gp_serve_hpa_replicas(const struct gp_hpa_spec *s, int32_t current,
                                             const struct gp_hpa_pod *pods, uint32_t npods,
                                             double now_s);

/* The HPA's memory: recommendations for the stabilisation windows and
 * scale events for the policies' periods. Zero it to start. */
struct gp_hpa_rec {
    double t_s;
    int32_t replicas;
};

struct gp_hpa_state {
    struct gp_hpa_rec recs[GP_HPA_HISTORY];
    uint32_t nrecs;
    struct gp_hpa_rec up_events[GP_HPA_HISTORY], down_events[GP_HPA_HISTORY];
    uint32_t nup, ndown;
};

/* One sync: current = the scale target's spec.replicas, proposed = the
 * largest valid proposal of the metrics (valid false: none). Applies
 * reconcileAutoscaler's order: spec.replicas 0 with minReplicas > 0 turns
 * autoscaling off (0 kept); above max -> max; below min -> min; else the
 * proposal is stabilised (scale-up: the lowest recommendation of the
 * up window, scale-down: the highest of the down window), then limited by
 * the policies of its direction and clamped to [min, max]. Records the
 * recommendation and, when the count changes, the scale event. Returns
 * the new spec.replicas. */
int32_t gp_serve_hpa_sync(const struct gp_hpa_spec *s, struct gp_hpa_state *st, double now_s,
                          int32_t current, int32_t proposed, bool valid);

/* The limits themselves (calculateScaleUpLimitWithScalingRules,
 * calculateScaleDownLimitWithBehaviors), for tests. */
int32_t gp_serve_hpa_up_limit(const struct gp_hpa_rules *r, const struct gp_hpa_state *st,
                              double now_s, int32_t current);
int32_t gp_serve_hpa_down_limit(const struct gp_hpa_rules *r, const struct gp_hpa_state *st,
                                double now_s, int32_t current);

#endif
