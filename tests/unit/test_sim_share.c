/* test_sim_share.c - the simulator on shared GPUs, with answers worked out
 * by hand: time-sliced pods slow each other down in proportion to their
 * compute demand, a pod whose declared memory oversubscribes its GPU fails
 * (out of memory), and a dynamic MIG re-partition delays the pod it is
 * made for, once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/sharing.h"
#include "sim/sim.h"
#include "util/arena.h"

static struct gp_node_spec node(const struct gp_sharing_spec *sh)
{
    struct gp_node_spec n = {0};
    n.name = "n0";
    n.gpu_model = "A100-80GB";
    n.gpu_count = 1;
    n.gpu_mem_mib = 81920;
    n.cpu_milli = 64000;
    n.mem_mib = 524288;
    n.sharing = sh;
    return n;
}

/* A Pod arriving at t, running d seconds of work on a share of one GPU. */
static struct gp_item pod(const char *name, double t, double d, uint32_t milli, uint32_t mem_mib)
{
    struct gp_item it = {0};
    it.name = name;
    it.source = name;
    it.kind = GP_ITEM_POD;
    it.pod.name = name;
    it.pod.cpu_milli = 1000;
    it.pod.mem_mib = 1024;
    it.pod.gpu_count = 1;
    it.pod.gpu_milli = milli;
    it.pod.gpu_mem_mib = mem_mib;
    it.pod.share_modes = 1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS;
    it.arrival_s = t;
    it.repeat = 1;
    it.has_duration = true;
    it.duration.kind = GP_DIST_FIXED;
    it.duration.a = d;
    return it;
}

static void run(struct gp_node_spec *n, struct gp_item *items, size_t nitems,
                struct gp_sim_result *r, struct gp_arena *a)
{
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    struct gp_cluster cl = {.name = "t", .source = "t", .nodes = n, .nnodes = 1};
    struct gp_workload w = {.items = items, .nitems = nitems, .cap = nitems};
    struct gp_diag d = {{0}};
    enum gp_err err = gp_sim_run(&c, &cl, &w, a, r, &d);
    if (err != GP_OK)
        print_message("gp_sim_run: %s\n", d.msg);
    assert_int_equal(err, GP_OK);
}

static void test_timeslice_slowdown(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = {.mode = GP_SHARE_TIMESLICE, .replicas = 4};
    struct gp_node_spec n = node(&ts);
    /* a runs alone for 30 min (half its work), then with b at half speed
     * each: a needs 1 h more and ends at 1.5 h; b has done 30 min of work
     * by then and finishes alone at 2 h. Both jobs took 1.5 h. */
    struct gp_item items[] = {pod("a", 0, 3600, 0, 10240), pod("b", 1800, 3600, 0, 10240)};
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&n, items, 2, &r, &a);
    assert_int_equal(r.jobs_completed, 2);
    assert_true(r.jct_s.mean > 5399.99 && r.jct_s.mean < 5400.01);
    assert_true(r.sim_end_s > 7199.99 && r.sim_end_s < 7200.01);
    assert_true(r.timeslice_slowdown > 1.4999 && r.timeslice_slowdown < 1.5001);
    gp_arena_free(&a);

    /* two pods of 40 % each: 80 % of the GPU, nobody slows down */
    items[0] = pod("a", 0, 3600, 400, 10240);
    items[1] = pod("b", 0, 3600, 400, 10240);
    gp_arena_init(&a);
    run(&n, items, 2, &r, &a);
    assert_true(r.sim_end_s > 3599.99 && r.sim_end_s < 3600.01);
    assert_true(r.timeslice_slowdown > 0.9999 && r.timeslice_slowdown < 1.0001);
    gp_arena_free(&a);
}

/* nvidia.com/gpu: 2 on a 2-GPU time-sliced node holds a replica of each
 * GPU, and goes at the pace of the more crowded one. x (a tiny share,
 * 70 GiB) is on GPU 0 from t = 0; w (two replicas, 2 h of work) comes at
 * 1 s and takes one of each GPU; c (20 GiB, 1 h) at 2 s fits only GPU 1
 * (10 GiB left on GPU 0). GPU 1 then runs w and c at half speed: c ends
 * at 7202 s, w has done ~3601 s of work by then and ends ~3603 s later
 * (GPU 0 runs it at 1000/1001), x ends at ~14411 s. JCTs 7200, ~10803.6
 * and ~14411: mean ~10804.9. Had w gone at its first GPU's pace only,
 * it would have ended at ~7208 s (mean ~9605). */
static void test_timeslice_replicas_of_two_gpus(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = {.mode = GP_SHARE_TIMESLICE, .replicas = 4};
    struct gp_node_spec n = node(&ts);
    n.gpu_count = 2;
    struct gp_item items[] = {pod("x", 0, 14400, 1, 70 * 1024), pod("w", 1, 7200, 1000, 0),
                              pod("c", 2, 3600, 1000, 20 * 1024)};
    for (int i = 0; i < 3; i++) {
        items[i].pod.share_modes = 0;
        items[i].pod.gpu_resource = GP_GPU_RES_GPU; /* nvidia.com/gpu */
    }
    items[1].pod.gpu_count = 2;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&n, items, 3, &r, &a);
    assert_int_equal(r.jobs_completed, 3);
    assert_true(r.jct_s.mean > 10800 && r.jct_s.mean < 10810);
    gp_arena_free(&a);
}

static void test_timeslice_oom(void **state)
{
    (void)state;
    struct gp_sharing_spec ts = {.mode = GP_SHARE_TIMESLICE, .replicas = 4, .oversubscribe = true};
    struct gp_node_spec n = node(&ts);
    /* 50 GiB + 50 GiB declared on an 80 GiB GPU: b is placed, flagged, and
     * fails at once; with no retries it is a failed job */
    struct gp_item items[] = {pod("a", 0, 3600, 0, 51200), pod("b", 60, 3600, 0, 51200)};
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&n, items, 2, &r, &a);
    assert_int_equal(r.oom_kills, 1);
    assert_int_equal(r.jobs_completed, 1);
    assert_int_equal(r.jobs_failed, 1);
    gp_arena_free(&a);
}

static void test_mig_reconfigure_delay(void **state)
{
    (void)state;
    struct gp_sharing_spec mg = {.mode = GP_SHARE_MIG, .replicas = 1};
    mg.mig.model = gp_mig_model_find("A100-80GB");
    mg.mig.dynamic = true;
    mg.mig.reconfigure_s = 90;
    struct gp_node_spec n = node(&mg);
    /* a: its instance is created first, so it ends at 1 h + 90 s; b comes
     * after and takes the free instance a left: no delay */
    struct gp_item items[] = {pod("a", 0, 3600, 100, 10240), pod("b", 7200, 3600, 100, 10240)};
    for (int i = 0; i < 2; i++) {
        items[i].pod.share_modes = 1u << GP_SHARE_MIG;
        items[i].pod.mig_profile = "1g.10gb";
    }
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&n, items, 2, &r, &a);
    assert_int_equal(r.mig_reconfigurations, 1);
    assert_int_equal(r.jobs_completed, 2);
    /* JCTs: 3690 s and 3600 s */
    assert_true(r.jct_s.mean > 3644.99 && r.jct_s.mean < 3645.01);
    assert_true(r.sim_end_s > 10799.99 && r.sim_end_s < 10800.01);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeslice_slowdown),
        cmocka_unit_test(test_timeslice_replicas_of_two_gpus),
        cmocka_unit_test(test_timeslice_oom),
        cmocka_unit_test(test_mig_reconfigure_delay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
