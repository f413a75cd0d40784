/* kpa.h - a concurrency autoscaler with scale to zero, as Knative's Pod
 * Autoscaler decides (knative/serving pkg/autoscaler/scaling/
 * autoscaler.go, the decider; pkg/reconciler/autoscaling/kpa/scaler.go,
 * the scale to zero; defaults from config/core/configmaps/autoscaler.yaml):
 *
 *  - the observed concurrency (requests in flight, the activator's held
 *    requests included) is averaged per second over a stable window (60 s)
 *    and a panic window (6 s, 10 % of it);
 *  - desired (stable) = ceil(stable average / target), desired (panic) =
 *    ceil(panic average / target), each kept within [floor(ready / max
 *    scale-down rate), ceil(ready x max scale-up rate)], ready at least 1;
 *  - panic starts when desired (panic) / ready >= the panic threshold
 *    (200 %) and ends a stable window after it was last crossed; while
 *    panicking the count never goes down (the largest since it began);
 *  - a desired 0 (no request in the whole stable window) becomes 0 only
 *    after the scale-to-zero grace period (30 s); KEDA's cooldownPeriod
 *    (300 s) is the same rule with another period;
 *  - at zero the activator holds requests: they count as concurrency, so
 *    the first one brings a replica back (activation scale 1).
 *
 * Target = container concurrency target x target utilisation (100 x 70 %
 * by default). Pure: a fixed ring of per-second buckets, no clock. */
#ifndef GP_SERVE_KPA_H
#define GP_SERVE_KPA_H

#include <stdbool.h>
#include <stdint.h>

#define GP_KPA_STABLE_S     60 /* stable-window */
#define GP_KPA_PANIC_PCT    10.0
#define GP_KPA_PANIC_THRESH 2.0 /* panic-threshold-percentage 200 */
#define GP_KPA_UP_RATE      1000.0
#define GP_KPA_DOWN_RATE    2.0
#define GP_KPA_GRACE_S      30.0 /* scale-to-zero-grace-period */
#define GP_KPA_TICK_S       2.0  /* the decider runs every 2 s */
#define GP_KPA_TARGET       100.0
#define GP_KPA_UTILISATION  0.70
#define GP_KPA_MAX_WINDOW_S 3600 /* stable window at most an hour */

struct gp_kpa_spec {
    double target;       /* concurrency per replica the decider aims at */
    int32_t stable_s;    /* stable window in seconds (6 s .. 1 h) */
    double panic_pct;    /* panic window, percent of the stable one */
    double panic_thresh; /* ratio: 2.0 = 200 % */
    double up_rate, down_rate;
    double grace_s;               /* scale-to-zero grace (Knative) or cooldown (KEDA) */
    int32_t min_scale, max_scale; /* 0 = none for max */
    bool scale_to_zero;
};

void gp_serve_kpa_spec_default(struct gp_kpa_spec *s);

struct gp_kpa_state {
    double bucket[GP_KPA_MAX_WINDOW_S]; /* concurrency-seconds per second */
    int64_t last_sec;                   /* the latest second recorded; -1: none */
    int64_t first_sec;                  /* the first; a window not yet full averages
                                         * over the seconds since it */
    bool seen;
    double panic_since_s; /* < 0: not panicking */
    int32_t max_panic;
    double zero_since_s; /* when the decider first wanted 0; < 0: it does not */
};

void gp_serve_kpa_init(struct gp_kpa_state *st);

/* Records an average concurrency over [t0_s, t1_s). */
void gp_serve_kpa_record(const struct gp_kpa_spec *s, struct gp_kpa_state *st, double t0_s,
                         double t1_s, double concurrency);

/* The window averages at now_s: over the last `window` whole seconds, or
 * the seconds since the first record when fewer (as Knative's buckets do
 * for a revision that just started). */
double gp_serve_kpa_average(const struct gp_kpa_spec *s, const struct gp_kpa_state *st,
                            double now_s, double window_s);

struct gp_kpa_decision {
    int32_t replicas;
    bool panicking;
    double stable, panic; /* the averages */
};

/* One decider tick at now_s with `ready` ready replicas and the current
 * desired count `current`. */
struct gp_kpa_decision gp_serve_kpa_decide(const struct gp_kpa_spec *s, struct gp_kpa_state *st,
                                           double now_s, int32_t ready, int32_t current);

#endif
