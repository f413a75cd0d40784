/* rollout.c - the Deployment controller's reconcile of a Deployment's
 * ReplicaSets (see rollout.h), written from the controller's documented
 * behaviour and its source's rules (kubernetes/kubernetes
 * pkg/controller/deployment sync.go, rolling.go, util/deployment_util.go). */
#include <math.h>

#include "serve/rollout.h"

void gp_serve_rollout_fenceposts(int32_t replicas, struct gp_rollout_value surge,
                                 struct gp_rollout_value unavailable, int32_t *max_surge,
                                 int32_t *max_unavailable)
{
    int32_t s = surge.percent ? (int32_t)ceil((double)surge.value * replicas / 100.0) : surge.value;
    int32_t u = unavailable.percent ? (int32_t)floor((double)unavailable.value * replicas / 100.0)
                                    : unavailable.value;
    if (s < 0)
        s = 0;
    if (u < 0)
        u = 0;
    if (s == 0 && u == 0)
        u = 1; /* else the rollout could never make progress */
    *max_surge = s;
    *max_unavailable = u;
}

static int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

static int32_t max32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

int32_t gp_serve_deploy_max_surge(const struct gp_deploy *d)
{
    int32_t s, u;
    gp_serve_rollout_fenceposts(d->replicas, d->surge, d->unavailable, &s, &u);
    return s;
}

int32_t gp_serve_deploy_max_unavailable(const struct gp_deploy *d)
{
    if (d->replicas <= 0)
        return 0;
    int32_t s, u;
    gp_serve_rollout_fenceposts(d->replicas, d->surge, d->unavailable, &s, &u);
    return min32(u, d->replicas);
}

/* scaleReplicaSet: the size, and the annotations of the Deployment now */
static void scale_rs(struct gp_deploy *d, uint32_t i, int32_t pods, int32_t *delta)
{
    struct gp_rs *rs = &d->rs[i];
    if (pods < 0)
        pods = 0;
    delta[i] += pods - rs->pods;
    rs->pods = pods;
    rs->available = min32(rs->available, pods); /* the unavailable pods go first */
    rs->desired_ann = d->replicas;
    rs->max_ann = d->replicas + gp_serve_deploy_max_surge(d);
}

/* scaleReplicaSetAndRecordEvent: nothing (annotations neither) when the size is right */
static void scale_rs_event(struct gp_deploy *d, uint32_t i, int32_t pods, int32_t *delta)
{
    if (d->rs[i].pods != pods)
        scale_rs(d, i, pods, delta);
}

void gp_serve_deploy_init(struct gp_deploy *d, int32_t replicas, struct gp_rollout_value surge,
                          struct gp_rollout_value unavailable)
{
    *d = (struct gp_deploy){.replicas = replicas > 0 ? replicas : 0,
                            .surge = surge,
                            .unavailable = unavailable,
                            .nrs = 1};
    int32_t delta[GP_DEPLOY_MAX_RS] = {0};
    scale_rs(d, 0, d->replicas, delta);
    d->rs[0].available = d->replicas;
}

bool gp_serve_deploy_rollout(struct gp_deploy *d, struct gp_rollout_value surge,
                             struct gp_rollout_value unavailable)
{
    if (d->nrs >= GP_DEPLOY_MAX_RS)
        return false;
    d->surge = surge;
    d->unavailable = unavailable;
    /* created by getNewReplicaSet with the annotations of the Deployment
     * now; its size comes with the rolling update's first scale-up */
    d->rs[d->nrs] = (struct gp_rs){0};
    d->rs[d->nrs].desired_ann = d->replicas;
    d->rs[d->nrs].max_ann = d->replicas + gp_serve_deploy_max_surge(d);
    d->nrs++;
    return true;
}

int32_t gp_serve_deploy_pods(const struct gp_deploy *d)
{
    int32_t n = 0;
    for (uint32_t i = 0; i < d->nrs; i++)
        n += d->rs[i].pods;
    return n;
}

int32_t gp_serve_deploy_available(const struct gp_deploy *d)
{
    int32_t n = 0;
    for (uint32_t i = 0; i < d->nrs; i++)
        n += d->rs[i].available;
    return n;
}

bool gp_serve_deploy_complete(const struct gp_deploy *d)
{
    const struct gp_rs *nw = &d->rs[d->nrs - 1];
    return nw->pods == d->replicas && nw->available == d->replicas &&
           gp_serve_deploy_pods(d) == d->replicas;
}

/* isScalingEvent: an active ReplicaSet annotated with another spec.replicas */
static bool scaling_event(const struct gp_deploy *d)
{
    for (uint32_t i = 0; i < d->nrs; i++)
        if (d->rs[i].pods > 0 && d->rs[i].desired_ann != d->replicas)
            return true;
    return false;
}

/* GetProportion, with getReplicaSetFraction */
static int32_t proportion(const struct gp_deploy *d, const struct gp_rs *rs, int32_t to_add,
                          int32_t added, int32_t total)
{
    if (rs->pods == 0 || to_add == 0 || to_add == added)
        return 0;
    int32_t fraction;
    if (d->replicas == 0) {
        fraction = -rs->pods;
    } else {
        int32_t deployment = d->replicas + gp_serve_deploy_max_surge(d);
        int32_t annotated = rs->max_ann > 0 ? rs->max_ann : total; /* else status.replicas */
        double size = (double)rs->pods * deployment / annotated;
        fraction = (int32_t)round(size) - rs->pods; /* RoundToInt32: half away from zero */
    }
    int32_t allowed = to_add - added;
    return to_add > 0 ? min32(fraction, allowed) : max32(fraction, allowed);
}

/* sync.go scale: the scaling event's sync */
static void scale(struct gp_deploy *d, int32_t *delta)
{
    uint32_t act[GP_DEPLOY_MAX_RS], n = 0;
    for (uint32_t i = 0; i < d->nrs; i++)
        if (d->rs[i].pods > 0)
            act[n++] = i;
    uint32_t nw = d->nrs - 1;
    if (n <= 1) { /* FindActiveOrLatest: the one active set, else the newest */
        scale_rs_event(d, n == 1 ? act[0] : nw, d->replicas, delta);
        return;
    }
    const struct gp_rs *n_rs = &d->rs[nw];
    if (n_rs->pods == d->replicas && n_rs->desired_ann == d->replicas &&
        n_rs->available == d->replicas) { /* IsSaturated */
        for (uint32_t k = 0; k < n; k++)
            if (act[k] != nw)
                scale_rs_event(d, act[k], 0, delta);
        return;
    }
    int32_t allowed = d->replicas > 0 ? d->replicas + gp_serve_deploy_max_surge(d) : 0;
    int32_t total = 0;
    for (uint32_t k = 0; k < n; k++)
        total += d->rs[act[k]].pods;
    int32_t to_add = allowed - total;
    /* ReplicaSetsBySizeNewer (adding) or BySizeOlder (removing): the
     * largest first, ties newer first when adding, older first otherwise */
    if (to_add != 0)
        for (uint32_t a = 1; a < n; a++)
            for (uint32_t b = a; b > 0; b--) {
                int32_t x = d->rs[act[b - 1]].pods, y = d->rs[act[b]].pods;
                bool swap = y > x || (y == x && (to_add > 0) == (act[b] > act[b - 1]));
                if (!swap)
                    break;
                uint32_t t = act[b];
                act[b] = act[b - 1];
                act[b - 1] = t;
            }
    int32_t size[GP_DEPLOY_MAX_RS], added = 0;
    for (uint32_t k = 0; k < n; k++) {
        int32_t p = proportion(d, &d->rs[act[k]], to_add, added, total);
        size[k] = d->rs[act[k]].pods + p;
        added += p;
    }
    if (to_add != 0) /* the leftover to the largest */
        size[0] = max32(size[0] + to_add - added, 0);
    for (uint32_t k = 0; k < n; k++)
        scale_rs(d, act[k], size[k], delta);
}

/* rolling.go reconcileOldReplicaSets */
static void scale_down_old(struct gp_deploy *d, int32_t *delta)
{
    uint32_t nw = d->nrs - 1;
    int32_t old = 0;
    for (uint32_t i = 0; i < nw; i++)
        old += d->rs[i].pods;
    if (old == 0)
        return;
    int32_t min_available = d->replicas - gp_serve_deploy_max_unavailable(d);
    int32_t new_unavailable = d->rs[nw].pods - d->rs[nw].available;
    int32_t max_down = gp_serve_deploy_pods(d) - min_available - new_unavailable;
    if (max_down <= 0)
        return;
    /* cleanupUnhealthyReplicas: the oldest sets first */
    int32_t cleaned = 0;
    for (uint32_t i = 0; i < nw && cleaned < max_down; i++) {
        struct gp_rs *rs = &d->rs[i];
        if (rs->pods == 0 || rs->pods == rs->available)
            continue;
        int32_t k = min32(max_down - cleaned, rs->pods - rs->available);
        scale_rs_event(d, i, rs->pods - k, delta);
        cleaned += k;
    }
    /* scaleDownOldReplicaSetsForRollingUpdate */
    int32_t available = gp_serve_deploy_available(d);
    if (available <= min_available)
        return;
    int32_t goal = available - min_available, done = 0;
    for (uint32_t i = 0; i < nw && done < goal; i++) {
        struct gp_rs *rs = &d->rs[i];
        if (rs->pods == 0)
            continue;
        int32_t k = min32(rs->pods, goal - done);
        scale_rs_event(d, i, rs->pods - k, delta);
        done += k;
    }
}

void gp_serve_deploy_sync(struct gp_deploy *d, int32_t delta[GP_DEPLOY_MAX_RS])
{
    for (uint32_t i = 0; i < GP_DEPLOY_MAX_RS; i++)
        delta[i] = 0;
    if (d->nrs == 0)
        return;
    if (scaling_event(d))
        scale(d, delta);
    /* reconcileNewReplicaSet */
    uint32_t nw = d->nrs - 1;
    struct gp_rs *n_rs = &d->rs[nw];
    if (n_rs->pods > d->replicas) {
        scale_rs_event(d, nw, d->replicas, delta);
    } else if (n_rs->pods < d->replicas) { /* NewRSNewReplicas */
        int32_t max_total = d->replicas + gp_serve_deploy_max_surge(d);
        int32_t current = gp_serve_deploy_pods(d);
        if (current < max_total)
            scale_rs_event(d, nw, n_rs->pods + min32(max_total - current, d->replicas - n_rs->pods),
                           delta);
    }
    scale_down_old(d, delta);
}
