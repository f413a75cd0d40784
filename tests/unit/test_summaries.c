/* test_summaries.c - what the simulator's result says about a run, checked
 * on runs small enough to work out by hand: the GPU allocation's exact
 * peak (from the binds and releases, not the samples), the bill as one
 * number (cost_usd is cost.total_usd, the control plane included) and
 * statistics with nothing behind them (n = 0). The writers' side of the
 * same rules is in test_report.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"
#include "util/arena.h"

#define HOUR 3600.0

static struct gp_node_spec node(const char *name, uint32_t gpus, double price)
{
    struct gp_node_spec s = {0};
    s.name = name;
    s.gpu_model = gpus ? "T4" : NULL;
    s.gpu_count = gpus;
    s.gpu_mem_mib = 16384;
    s.cpu_milli = 64000;
    s.mem_mib = 262144;
    s.price_per_hour_usd = price;
    return s;
}

static struct gp_item pod_item(const char *name, uint32_t gpus, double arrival_s, double dur_s)
{
    struct gp_item it = {0};
    it.name = name;
    it.source = "test";
    it.kind = GP_ITEM_POD;
    it.pod.name = name;
    it.pod.cpu_milli = 1000;
    it.pod.mem_mib = 1024;
    it.pod.gpu_count = gpus;
    it.pod.gpu_milli = gpus ? 1000 : 0;
    it.repeat = 1;
    it.arrival_s = arrival_s;
    it.has_duration = true;
    it.duration.kind = GP_DIST_FIXED;
    it.duration.a = dur_s;
    return it;
}

static struct gp_sim_config config(void)
{
    struct gp_sim_config c;
    gp_sim_config_default(&c);
    c.policy = NULL; /* first feasible node */
    return c;
}

static void run(const struct gp_sim_config *c, struct gp_cluster *cl, struct gp_item *items,
                size_t nitems, struct gp_arena *a, struct gp_sim_result *out)
{
    struct gp_workload w = {.items = items, .nitems = nitems, .cap = nitems};
    struct gp_diag d = {{0}};
    enum gp_err err = gp_sim_run(c, cl, &w, a, out, &d);
    if (err != GP_OK)
        fail_msg("gp_sim_run: %s", d.msg);
}

/* One 8-GPU node sampled every hour for 2 h; an 8-GPU pod runs from 0:20
 * to 0:30 and a 2-GPU pod from 1:10 to 1:40. Every sample (0, 1 h, 2 h)
 * sees an idle cluster; the allocation was 100 % from 0:20 to 0:30. */
static void test_peak_between_samples(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 8, 0)};
    struct gp_cluster cl = {.name = "test", .source = "test", .nodes = n, .nnodes = 1};
    struct gp_item it[] = {pod_item("big", 8, 1200, 600), pod_item("small", 2, 4200, 1800)};
    struct gp_sim_config c = config();
    c.sample_s = HOUR;
    c.horizon_s = 2 * HOUR;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&c, &cl, it, 2, &a, &r);
    assert_int_equal(r.nsamples, 3);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.samples[i].gpu_alloc_pct == 0);
    assert_true(r.gpu_alloc_peak_pct == 100);
    assert_true(r.gpu_alloc_peak_t_s == 1200);
    assert_true(r.gpu_alloc_peak_gpus == 8);

    /* the small one alone: 25 % from 1:10 */
    run(&c, &cl, it + 1, 1, &a, &r);
    assert_true(r.gpu_alloc_peak_pct == 25);
    assert_true(r.gpu_alloc_peak_t_s == 4200);
    assert_true(r.gpu_alloc_peak_gpus == 2);

    /* nothing runs: no peak */
    run(&c, &cl, it, 0, &a, &r);
    assert_true(r.gpu_alloc_peak_pct == 0 && r.gpu_alloc_peak_gpus == 0);
    gp_arena_free(&a);
}

/* A $2/h node and a $0.10/h control plane for 1 h: the bill is $2.10,
 * and cost_usd is that number, not the nodes' $2 alone. */
static void test_cost_one_number(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 2.0)};
    struct gp_cluster cl = {.name = "test",
                            .source = "test",
                            .nodes = n,
                            .nnodes = 1,
                            .control_plane_per_hour_usd = 0.10};
    struct gp_item it[] = {pod_item("a", 1, 0, HOUR)};
    struct gp_sim_config c = config();
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&c, &cl, it, 1, &a, &r);
    assert_true(fabs(r.cost.total_usd - 2.10) < 1e-9);
    assert_true(fabs(r.cost.control_plane_usd - 0.10) < 1e-9);
    assert_true(r.cost_usd == r.cost.total_usd);
    gp_arena_free(&a);
}

/* Statistics say how many values are behind them: none when nothing was
 * bound or completed. */
static void test_stats_count(void **state)
{
    (void)state;
    struct gp_node_spec n[] = {node("n0", 1, 0)};
    struct gp_cluster cl = {.name = "test", .source = "test", .nodes = n, .nnodes = 1};
    struct gp_item it[] = {pod_item("a", 1, 0, HOUR), pod_item("b", 1, 0, HOUR),
                           pod_item("huge", 4, 0, HOUR)};
    struct gp_sim_config c = config();
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    run(&c, &cl, it, 3, &a, &r);
    assert_int_equal(r.queue_delay_s.n, 2); /* a and b; huge never binds */
    assert_int_equal(r.jct_s.n, 2);
    assert_int_equal(r.cost.job_usd.n, 3);
    run(&c, &cl, it + 2, 1, &a, &r);
    assert_int_equal(r.queue_delay_s.n, 0);
    assert_int_equal(r.jct_s.n, 0);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_between_samples),
        cmocka_unit_test(test_cost_one_number),
        cmocka_unit_test(test_stats_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
