/* hpa.c - the Horizontal Pod Autoscaler's replica calculation, stabilisation
 * and behavior policies (kubernetes/kubernetes pkg/controller/podautoscaler:
 * replica_calculator.go and horizontal.go; see hpa.h). Written from their
 * documented semantics, not copied. */
#include <math.h>
#include <stddef.h>

#include "serve/hpa.h"

void gp_serve_hpa_spec_default(struct gp_hpa_spec *s, int32_t min_replicas, int32_t max_replicas,
                               double target)
{
    *s = (struct gp_hpa_spec){
        .min_replicas = min_replicas,
        .max_replicas = max_replicas,
        .target = target,
        .tolerance = GP_HPA_TOLERANCE,
        .cpu_init_s = GP_HPA_CPU_INIT_S,
        .readiness_delay_s = GP_HPA_READINESS_DELAY_S,
        .metric_window_s = 30.0,
        .up = {.window_s = 0,
               .select = GP_HPA_SELECT_MAX,
               .policies = {{GP_HPA_PODS, 4, 15}, {GP_HPA_PERCENT, 100, 15}},
               .npolicies = 2},
        .down = {.window_s = (int32_t)GP_HPA_DOWN_WINDOW_S,
                 .select = GP_HPA_SELECT_MAX,
                 .policies = {{GP_HPA_PERCENT, 100, 15}},
                 .npolicies = 1},
    };
}

/* groupPods' verdict for one pod */
enum group { G_READY, G_UNREADY, G_MISSING, G_IGNORED };

static enum group group_pod(const struct gp_hpa_spec *s, const struct gp_hpa_pod *p, double now_s)
{
    if (p->deleting || p->phase == GP_HPA_POD_FAILED)
        return G_IGNORED;
    if (p->phase == GP_HPA_POD_PENDING)
        return G_UNREADY;
    if (!p->has_metric)
        return G_MISSING;
    if (s->cpu) {
        bool unready;
        if (!p->has_ready) {
            unready = true;
        } else if (p->start_s + s->cpu_init_s > now_s) {
            /* still within the initialisation period: unready, or no full
             * metric window since the last transition */
            unready = !p->ready || p->metric_t_s < p->ready_change_s + s->metric_window_s;
        } else {
            /* after it: only a pod that has never been ready */
            unready = !p->ready && p->start_s + s->readiness_delay_s > p->ready_change_s;
        }
        if (unready)
            return G_UNREADY;
    }
    return G_READY;
}

struct gp_hpa_proposal gp_serve_hpa_replicas(const struct gp_hpa_spec *s, int32_t current,
                                             const struct gp_hpa_pod *pods, uint32_t npods,
                                             double now_s)
{
    struct gp_hpa_proposal out = {.replicas = current};
    double sum = 0;
    for (uint32_t i = 0; i < npods; i++) {
        switch (group_pod(s, &pods[i], now_s)) {
        case G_READY:
            out.ready++;
            sum += pods[i].metric;
            break;
        case G_UNREADY:
            out.unready++;
            break;
        case G_MISSING:
            out.missing++;
            break;
        case G_IGNORED:
            out.ignored++;
            break;
        }
    }
    if (out.ready == 0 || !(s->target > 0))
        return out; /* no metrics: invalid */
    out.valid = true;
    double ratio = sum / out.ready / s->target;
    out.usage_ratio = ratio;
    bool up_with_unready = out.unready > 0 && ratio > 1.0;
    if (!up_with_unready && out.missing == 0) {
        if (fabs(1.0 - ratio) <= s->tolerance)
            return out;
        out.replicas = (int32_t)ceil(ratio * out.ready);
        return out;
    }
    /* missing pods: at the target on a scale-down, 0 on a scale-up;
     * unready pods on a scale-up: 0 */
    double n = out.ready, total = sum;
    if (out.missing > 0) {
        n += out.missing;
        if (ratio < 1.0)
            total += s->target * out.missing;
    }
    if (up_with_unready)
        n += out.unready;
    double nratio = total / n / s->target;
    if (fabs(1.0 - nratio) <= s->tolerance || (ratio < 1.0 && nratio > 1.0) ||
        (ratio > 1.0 && nratio < 1.0))
        return out;
    int32_t r = (int32_t)ceil(nratio * n);
    if ((nratio < 1.0 && r > current) || (nratio > 1.0 && r < current))
        return out;
    out.replicas = r;
    return out;
}

/* replicas changed by events after now - period (getReplicasChangePerPeriod) */
static int32_t change_in_period(const struct gp_hpa_rec *ev, uint32_t n, double now_s,
                                int32_t period_s)
{
    int32_t sum = 0;
    double cutoff = now_s - period_s;
    for (uint32_t i = 0; i < n; i++)
        if (ev[i].t_s > cutoff)
            sum += ev[i].replicas;
    return sum;
}

int32_t gp_serve_hpa_up_limit(const struct gp_hpa_rules *r, const struct gp_hpa_state *st,
                              double now_s, int32_t current)
{
    if (r->select == GP_HPA_SELECT_DISABLED)
        return current;
    bool pick_min = r->select == GP_HPA_SELECT_MIN;
    int64_t result = pick_min ? INT32_MAX : INT32_MIN;
    for (uint32_t i = 0; i < r->npolicies; i++) {
        const struct gp_hpa_policy *p = &r->policies[i];
        int32_t start = current - change_in_period(st->up_events, st->nup, now_s, p->period_s) +
                        change_in_period(st->down_events, st->ndown, now_s, p->period_s);
        int64_t proposed = p->type == GP_HPA_PODS
                               ? (int64_t)start + p->value
                               : (int64_t)ceil((double)start * (1.0 + p->value / 100.0));
        result = pick_min ? (proposed < result ? proposed : result)
                          : (proposed > result ? proposed : result);
    }
    return result > INT32_MAX ? INT32_MAX : result < INT32_MIN ? INT32_MIN : (int32_t)result;
}

int32_t gp_serve_hpa_down_limit(const struct gp_hpa_rules *r, const struct gp_hpa_state *st,
                                double now_s, int32_t current)
{
    if (r->select == GP_HPA_SELECT_DISABLED)
        return current;
    bool pick_min = r->select == GP_HPA_SELECT_MIN; /* the smallest change: the largest count */
    int64_t result = pick_min ? INT32_MIN : INT32_MAX;
    for (uint32_t i = 0; i < r->npolicies; i++) {
        const struct gp_hpa_policy *p = &r->policies[i];
        int32_t start = current + change_in_period(st->down_events, st->ndown, now_s, p->period_s) -
                        change_in_period(st->up_events, st->nup, now_s, p->period_s);
        /* Percent rounds toward zero here (int32(float64 * (1 - v/100))) */
        int64_t proposed = p->type == GP_HPA_PODS
                               ? (int64_t)start - p->value
                               : (int64_t)((double)start * (1.0 - p->value / 100.0));
        result = pick_min ? (proposed > result ? proposed : result)
                          : (proposed < result ? proposed : result);
    }
    return result > INT32_MAX ? INT32_MAX : result < INT32_MIN ? INT32_MIN : (int32_t)result;
}

/* Drops the entries at or before cutoff (they no longer count anywhere),
 * and the oldest when the ring is full. */
static void prune(struct gp_hpa_rec *v, uint32_t *n, double cutoff)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < *n; i++)
        if (v[i].t_s > cutoff)
            v[k++] = v[i];
    *n = k;
    if (*n == GP_HPA_HISTORY) {
        for (uint32_t i = 1; i < *n; i++)
            v[i - 1] = v[i];
        (*n)--;
    }
}

/* stabilizeRecommendationWithBehaviors: the recommendation kept within the
 * lowest of the up window and the highest of the down window, both
 * including this one; this one is recorded. */
static int32_t stabilise(const struct gp_hpa_spec *s, struct gp_hpa_state *st, double now_s,
                         int32_t current, int32_t desired)
{
    double up_cut = now_s - s->up.window_s, down_cut = now_s - s->down.window_s;
    int32_t up = desired, down = desired;
    for (uint32_t i = 0; i < st->nrecs; i++) {
        const struct gp_hpa_rec *r = &st->recs[i];
        if (r->t_s > up_cut && r->replicas < up)
            up = r->replicas;
        if (r->t_s > down_cut && r->replicas > down)
            down = r->replicas;
    }
    int32_t rec = current;
    if (rec < up)
        rec = up;
    if (rec > down)
        rec = down;
    prune(st->recs, &st->nrecs, up_cut < down_cut ? up_cut : down_cut);
    st->recs[st->nrecs++] = (struct gp_hpa_rec){now_s, desired};
    return rec;
}

int32_t gp_serve_hpa_sync(const struct gp_hpa_spec *s, struct gp_hpa_state *st, double now_s,
                          int32_t current, int32_t proposed, bool valid)
{
    int32_t desired;
    if (current == 0 && s->min_replicas != 0)
        return 0; /* autoscaling is disabled for this resource */
    if (current > s->max_replicas) {
        desired = s->max_replicas;
    } else if (current < s->min_replicas) {
        desired = s->min_replicas;
    } else {
        if (!valid)
            return current; /* the metrics failed: no rescale */
        int32_t want = proposed > 0 ? proposed : 0;
        want = stabilise(s, st, now_s, current, want);
        desired = want;
        if (want > current) {
            int32_t lim = gp_serve_hpa_up_limit(&s->up, st, now_s, current);
            if (lim < current)
                lim = current;
            int32_t maxr = s->max_replicas < lim ? s->max_replicas : lim;
            if (desired > maxr)
                desired = maxr;
        } else if (want < current) {
            int32_t lim = gp_serve_hpa_down_limit(&s->down, st, now_s, current);
            if (lim > current)
                lim = current;
            int32_t minr = s->min_replicas > lim ? s->min_replicas : lim;
            if (desired < minr)
                desired = minr;
        }
    }
    if (desired != current) { /* storeScaleEvent */
        struct gp_hpa_rec *ev = desired > current ? st->up_events : st->down_events;
        uint32_t *n = desired > current ? &st->nup : &st->ndown;
        prune(ev, n, now_s - GP_HPA_MAX_PERIOD_S);
        int32_t d = desired - current;
        ev[(*n)++] = (struct gp_hpa_rec){now_s, d > 0 ? d : -d};
    }
    return desired;
}
