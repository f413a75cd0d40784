/* test_serve_rollout.c - the Deployment controller's reconcile
 * (serve/rollout.h): Kubernetes' rounding of maxSurge (up) and
 * maxUnavailable (down) by hand; a rollout worked step by step; a rollover
 * (a new template while the previous rollout's pods are not ready) and a
 * scale-up during a rollout (proportional scaling) worked by hand, both
 * the examples of Kubernetes' own source and documentation; and a seeded
 * property test over random strategies, random rollouts (overlapping
 * ones included), random changes of spec.replicas and random readiness:
 * after every reconcile, never more than spec.replicas + maxSurge pods,
 * and never fewer than spec.replicas - maxUnavailable available unless
 * there were already fewer before it (the transient of a scale-up, whose
 * new pods are not ready yet) - the controller itself never takes a
 * ready pod below that floor; and every rollout whose pods get ready
 * completes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "serve/rollout.h"
#include "util/rng.h"

#define PCT(v) ((struct gp_rollout_value){(v), true})
#define ABS(v) ((struct gp_rollout_value){(v), false})

static void test_fenceposts(void **state)
{
    (void)state;
    int32_t s, u;
    /* 25 % of 10: surge ceil(2.5) = 3, unavailable floor(2.5) = 2 */
    gp_serve_rollout_fenceposts(10, PCT(25), PCT(25), &s, &u);
    assert_int_equal(s, 3);
    assert_int_equal(u, 2);
    /* 10 % of 3: surge ceil(0.3) = 1, unavailable floor(0.3) = 0 */
    gp_serve_rollout_fenceposts(3, PCT(10), PCT(10), &s, &u);
    assert_int_equal(s, 1);
    assert_int_equal(u, 0);
    /* both 0: unavailable 1 */
    gp_serve_rollout_fenceposts(5, ABS(0), PCT(0), &s, &u);
    assert_int_equal(s, 0);
    assert_int_equal(u, 1);
    /* absolute values as given */
    gp_serve_rollout_fenceposts(5, ABS(2), ABS(1), &s, &u);
    assert_int_equal(s, 2);
    assert_int_equal(u, 1);
    /* MaxUnavailable: at most spec.replicas, 0 at 0 replicas */
    struct gp_deploy d;
    gp_serve_deploy_init(&d, 2, ABS(0), ABS(5));
    assert_int_equal(gp_serve_deploy_max_unavailable(&d), 2);
    d.replicas = 0;
    assert_int_equal(gp_serve_deploy_max_unavailable(&d), 0);
}

static void ready(struct gp_deploy *d, uint32_t i, int32_t n)
{
    d->rs[i].available += n;
    if (d->rs[i].available > d->rs[i].pods)
        d->rs[i].available = d->rs[i].pods;
}

static void test_steps(void **state)
{
    (void)state;
    /* 4 replicas, surge 1, unavailable 1 (25 %/25 %, the defaults) */
    struct gp_deploy d;
    int32_t delta[GP_DEPLOY_MAX_RS];
    gp_serve_deploy_init(&d, 4, PCT(25), PCT(25));
    assert_true(gp_serve_deploy_rollout(&d, PCT(25), PCT(25)));
    gp_serve_deploy_sync(&d, delta);
    /* +1 new (5 = 4 + 1), then old down to keep 3 available: 4 - 1 */
    assert_int_equal(delta[1], 1);
    assert_int_equal(delta[0], -1);
    assert_int_equal(d.rs[0].pods, 3);
    assert_int_equal(d.rs[1].pods, 1);
    /* 4 pods < 5: one more new; none of the new ready, 3 available: no
     * old one may go */
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(delta[1], 1);
    assert_int_equal(delta[0], 0);
    /* nothing ready: no progress */
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(delta[0] + delta[1], 0);
    /* one new ready: 4 available, one old may go (5 pods, none created) */
    ready(&d, 1, 1);
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(delta[1], 0);
    assert_int_equal(delta[0], -1);
    assert_int_equal(d.rs[0].pods, 2);
    assert_false(gp_serve_deploy_complete(&d));
    for (int k = 0; k < 10 && !gp_serve_deploy_complete(&d); k++) {
        ready(&d, 1, 4);
        gp_serve_deploy_sync(&d, delta);
    }
    assert_true(gp_serve_deploy_complete(&d));
}

/* 10 replicas, maxSurge 3, maxUnavailable 2: the new ReplicaSet's pods
 * never get ready (rolling.go's comment on reconcileOldReplicaSets, and
 * kubernetes.io "Deployments", "Proportional scaling"). */
static void bad_rollout(struct gp_deploy *d)
{
    int32_t delta[GP_DEPLOY_MAX_RS];
    gp_serve_deploy_init(d, 10, ABS(3), ABS(2));
    assert_true(gp_serve_deploy_rollout(d, ABS(3), ABS(2)));
    /* new up to 3 (13 = 10 + 3); old: 13 - 8 - 3 unavailable new = 2 may
     * go, and 10 available - 8 = 2: the old set to 8 */
    gp_serve_deploy_sync(d, delta);
    assert_int_equal(d->rs[0].pods, 8);
    assert_int_equal(d->rs[1].pods, 3);
    /* new up by 13 - 11 = 2 to 5; old: 13 - 8 - 5 = 0 may go */
    gp_serve_deploy_sync(d, delta);
    assert_int_equal(d->rs[0].pods, 8);
    assert_int_equal(d->rs[1].pods, 5);
    assert_int_equal(delta[1], 2);
    assert_int_equal(delta[0], 0);
}

static void test_rollover(void **state)
{
    (void)state;
    struct gp_deploy d;
    int32_t delta[GP_DEPLOY_MAX_RS];
    bad_rollout(&d);
    /* a new template ("roll over", rolling.go's case 2): the third
     * ReplicaSet starts at 0, 13 pods being there already; the old sets
     * may lose 13 - 8 - 0 = 5: the oldest (8, all available) has no
     * unhealthy pod, the previous new one's 5 unready pods go; 8
     * available is the floor: no available pod goes */
    assert_true(gp_serve_deploy_rollout(&d, ABS(3), ABS(2)));
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(d.nrs, 3);
    assert_int_equal(d.rs[0].pods, 8);
    assert_int_equal(d.rs[1].pods, 0);
    assert_int_equal(d.rs[2].pods, 0);
    assert_int_equal(delta[1], -5);
    /* then the new one grows by 13 - 8 = 5 */
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(d.rs[2].pods, 5);
    assert_int_equal(delta[2], 5);
    assert_int_equal(d.rs[0].pods, 8);
    /* 3 of them ready: 13 - 8 - 2 = 3 may go and 11 - 8 = 3 available
     * spare: the oldest down to 5 */
    ready(&d, 2, 3);
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(d.rs[0].pods, 5);
    assert_int_equal(d.rs[2].pods, 5);
    /* next: the new one up by 13 - 10 = 3 to 8; old: 13 - 8 - 5 = 0 */
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(d.rs[2].pods, 8);
    assert_int_equal(d.rs[0].pods, 5);
    for (int k = 0; k < 20 && !gp_serve_deploy_complete(&d); k++) {
        ready(&d, 2, 10);
        gp_serve_deploy_sync(&d, delta);
    }
    assert_true(gp_serve_deploy_complete(&d));
    assert_int_equal(d.rs[0].pods + d.rs[1].pods, 0);
}

static void test_proportional(void **state)
{
    (void)state;
    struct gp_deploy d;
    int32_t delta[GP_DEPLOY_MAX_RS];
    bad_rollout(&d); /* old 8, new 5 (unready), both annotated max 10 + 3 = 13 */
    /* scaled to 15 (an autoscaler): 15 + 3 = 18 allowed, 13 there: 5 to
     * add, the largest first: old round(8 x 18 / 13) - 8 = round(11.08)
     * - 8 = 3, new min(round(5 x 18 / 13) - 5, 5 - 3) = round(6.92) - 5
     * = 2: old 11, new 7 (kubernetes.io's "3 replicas are added to the
     * old ReplicaSet and 2 replicas are added to the new ReplicaSet");
     * then the rollout: 18 pods, 18 allowed, no scale-up; 18 - 13 - 7 < 0:
     * no old pod goes */
    d.replicas = 15;
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(d.rs[0].pods, 11);
    assert_int_equal(d.rs[1].pods, 7);
    assert_int_equal(delta[0], 3);
    assert_int_equal(delta[1], 2);
    assert_int_equal(d.rs[0].max_ann, 18);
    assert_int_equal(d.rs[1].desired_ann, 15);
    /* no scaling event any more: the next sync is the rollout's (nothing) */
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(delta[0] + delta[1], 0);
    /* the old pods were available, 8 of them: 3 new ones load; now they
     * are; scaled down to 6: 6 + 3 = 9 allowed, 18 there: 9 to remove,
     * the largest first: old round(11 x 9 / 18) - 11 = round(5.5) - 11 =
     * -5, new max(round(7 x 9 / 18) - 7, -9 + 5) = round(3.5) - 7 = -3,
     * the leftover -1 to the largest: old 5, new 4; the rollout then: 9
     * pods, 6 - 2 = 4 to keep available, 4 unready new: 9 - 4 - 4 = 1 may
     * go, 5 available - 4 = 1: old 4 */
    ready(&d, 0, 3);
    d.replicas = 6;
    gp_serve_deploy_sync(&d, delta);
    assert_int_equal(d.rs[1].pods, 4);
    assert_int_equal(d.rs[0].pods, 4);
    assert_int_equal(delta[0], -7);
    assert_int_equal(delta[1], -3);
    /* once the new pods get ready, it completes at 6 */
    for (int k = 0; k < 20 && !gp_serve_deploy_complete(&d); k++) {
        ready(&d, 1, 10);
        gp_serve_deploy_sync(&d, delta);
    }
    assert_true(gp_serve_deploy_complete(&d));
    assert_int_equal(d.rs[1].pods, 6);
}

static struct gp_rollout_value random_value(struct gp_rng *g)
{
    if (gp_rng_below(g, 2))
        return PCT((int32_t)gp_rng_below(g, 101));
    return ABS((int32_t)gp_rng_below(g, 5));
}

/* Kubernetes' fenceposts by integer arithmetic, for the bounds */
static void bounds(const struct gp_deploy *d, int32_t *cap, int32_t *floor_)
{
    int32_t n = d->replicas;
    int32_t s = d->surge.percent ? (d->surge.value * n + 99) / 100 : d->surge.value;
    int32_t u = d->unavailable.percent ? d->unavailable.value * n / 100 : d->unavailable.value;
    if (s == 0 && u == 0)
        u = 1;
    if (u > n)
        u = n;
    *cap = n + s;
    *floor_ = n - u;
}

static void test_invariants_property(void **state)
{
    (void)state;
    struct gp_rng g;
    gp_rng_seed(&g, 13);
    int scaled = 0, rolled_over = 0;
    for (int trial = 0; trial < 3000; trial++) {
        struct gp_deploy d;
        int32_t delta[GP_DEPLOY_MAX_RS];
        gp_serve_deploy_init(&d, (int32_t)gp_rng_below(&g, 30), random_value(&g), random_value(&g));
        int rollouts = 0;
        bool done = false;
        for (int step = 0; step < 20000 && !done; step++) {
            bool late = step >= 400; /* then no more changes: it must complete */
            /* a new template now and then, the strategy with it */
            if (!late && rollouts < 6 && gp_rng_below(&g, 40) == 0) {
                rolled_over += rollouts > 0 && !gp_serve_deploy_complete(&d);
                assert_true(gp_serve_deploy_rollout(&d, random_value(&g), random_value(&g)));
                rollouts++;
            }
            /* the autoscaler: spec.replicas up or down */
            int32_t prev_replicas = d.replicas;
            if (!late && gp_rng_below(&g, 15) == 0) {
                d.replicas = (int32_t)gp_rng_below(&g, 40);
                scaled += rollouts > 0;
            }
            struct gp_deploy prev = d;
            int32_t before = gp_serve_deploy_available(&d);
            gp_serve_deploy_sync(&d, delta);
            int32_t cap, floor_;
            bounds(&d, &cap, &floor_);
            int32_t pods = gp_serve_deploy_pods(&d), avail = gp_serve_deploy_available(&d);
            /* the controller takes no available pod below the floor, but
             * on a scale-down, whose proportional scaling removes pods from
             * every set (its unavailable ones first) */
            bool down = d.replicas < prev_replicas;
            int32_t low = before < floor_ ? before : floor_;
            if (pods > cap || (!down && avail < low))
                fail_msg("trial %d step %d: %d replicas: %d pods (at most %d), %d available "
                         "(at least %d; %d before)",
                         trial, step, d.replicas, pods, cap, avail, low, before);
            for (uint32_t i = 0; i < d.nrs; i++) {
                const struct gp_rs *a = &prev.rs[i], *b = &d.rs[i];
                assert_int_equal(b->pods - a->pods, delta[i]);
                int32_t keep = a->available < b->pods ? a->available : b->pods;
                if (b->available != keep)
                    fail_msg("trial %d step %d: set %u %d/%d -> %d/%d", trial, step, i, a->pods,
                             a->available, b->pods, b->available);
            }
            /* some unready pods get ready (none, some or all) */
            for (uint32_t i = 0; i < d.nrs; i++) {
                int32_t waiting = d.rs[i].pods - d.rs[i].available;
                if (waiting > 0)
                    d.rs[i].available += (int32_t)gp_rng_below(&g, (uint64_t)waiting + 1);
            }
            done = late && gp_serve_deploy_complete(&d);
        }
        if (!done)
            fail_msg("trial %d: %d replicas, %d rollouts never completed", trial, d.replicas,
                     rollouts);
    }
    assert_true(scaled > 1000 && rolled_over > 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fenceposts),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_rollover),
        cmocka_unit_test(test_proportional),
        cmocka_unit_test(test_invariants_property),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
