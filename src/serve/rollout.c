/* rollout.c - the Deployment controller's rolling update (see rollout.h),
 * written from the controller's documented behaviour. */
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

void gp_serve_rollout_start(struct gp_rollout *r, int32_t replicas, struct gp_rollout_value surge,
                            struct gp_rollout_value unavailable)
{
    *r = (struct gp_rollout){.replicas = replicas, .old_pods = replicas, .old_ready = replicas};
    gp_serve_rollout_fenceposts(replicas, surge, unavailable, &r->max_surge, &r->max_unavailable);
}

static int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

void gp_serve_rollout_reconcile(struct gp_rollout *r, int32_t *created, int32_t *removed)
{
    *created = *removed = 0;
    /* reconcileNewReplicaSet */
    if (r->new_pods < r->replicas) {
        int32_t room = r->replicas + r->max_surge - (r->old_pods + r->new_pods);
        int32_t up = min32(room, r->replicas - r->new_pods);
        if (up > 0) {
            r->new_pods += up;
            *created = up;
        }
    } else if (r->new_pods > r->replicas) {
        int32_t down = r->new_pods - r->replicas;
        r->new_pods -= down;
        if (r->new_ready > r->new_pods)
            r->new_ready = r->new_pods;
        *removed += down;
    }
    /* reconcileOldReplicaSets */
    if (r->old_pods == 0)
        return;
    int32_t min_available = r->replicas - r->max_unavailable;
    int32_t new_unavailable = r->new_pods - r->new_ready;
    int32_t max_down = r->old_pods + r->new_pods - min_available - new_unavailable;
    if (max_down <= 0)
        return;
    /* unhealthy old pods first: they serve nothing */
    int32_t unhealthy = min32(r->old_pods - r->old_ready, max_down);
    r->old_pods -= unhealthy;
    *removed += unhealthy;
    max_down -= unhealthy;
    /* then available ones, keeping min_available */
    int32_t total = r->old_ready + r->new_ready - min_available;
    int32_t down = min32(min32(total, r->old_ready), max_down);
    if (down > 0) {
        r->old_pods -= down;
        r->old_ready -= down;
        *removed += down;
    }
}

void gp_serve_rollout_ready(struct gp_rollout *r, int32_t n)
{
    int32_t left = r->new_pods - r->new_ready;
    r->new_ready += n < left ? (n > 0 ? n : 0) : left;
}

bool gp_serve_rollout_done(const struct gp_rollout *r)
{
    return r->old_pods == 0 && r->new_pods == r->replicas && r->new_ready == r->replicas;
}
