/* test_engine_pending.c - issue 15 item 2: with tens of thousands of pods
 * pending on a full cluster, a cycle in which one pod ends and one arrives
 * costs work proportional to what changed, not to the queue. The work is
 * counted, not timed: the decisions a cycle writes and the placements it
 * makes (gp_engine_place_stats). Under the fair order, FIFO with backfill
 * and strict FIFO, 5,000 and 50,000 pods pending (eight request shapes)
 * cost the same within a small constant; the engine with its pending-side
 * structures off (gp_engine_set_index(e, true, false): the walk along the
 * whole line, a decision for every pending pod each cycle) is checked to
 * cost ten times more at ten times the queue, so the count would see a
 * walk that grows with the queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

#define NNODES 250
#define GPUS   8
#define CYCLES 40

static const char *const models[] = {"A100-80GB", "H100-80GB"};
static const char *const only_h100[] = {"H100-80GB"};

/* The work of CYCLES cycles (decisions written + placements made) with
 * npending pods queued behind a full cluster. */
static uint64_t run(uint64_t npending, enum gp_order order, bool backfill, bool pending_index)
{
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 42);
    assert_non_null(e);
    assert_int_equal(gp_engine_set_order(e, order, backfill), GP_OK);
    gp_engine_set_index(e, true, pending_index);
    static char names[NNODES][16];
    for (uint32_t i = 0; i < NNODES; i++) {
        snprintf(names[i], sizeof names[i], "n%u", i);
        struct gp_node_spec n = {.name = names[i],
                                 .gpu_model = models[i % 2],
                                 .gpu_count = GPUS,
                                 .gpu_mem_mib = 81920,
                                 .cpu_milli = 128000,
                                 .mem_mib = 1 << 20};
        assert_int_equal(gp_engine_node_add(e, &n, NULL), GP_OK);
    }
    struct gp_pod_spec specs[8];
    static const uint32_t gpus[8] = {1, 1, 2, 2, 4, 4, 8, 8};
    for (size_t k = 0; k < 8; k++) {
        specs[k] = (struct gp_pod_spec){.name = "p",
                                        .gpu_count = gpus[k],
                                        .gpu_milli = 1000,
                                        .cpu_milli = 1000 + (int64_t)k % 2,
                                        .mem_mib = 4096,
                                        .duration_hint_s = 3600};
        if (k % 2) {
            specs[k].gpu_models = only_h100;
            specs[k].ngpu_models = 1;
        }
    }
    size_t cap = npending + NNODES * GPUS + 16;
    struct gp_decision *d = malloc(cap * sizeof *d);
    uint32_t *bound = malloc((NNODES * GPUS + CYCLES) * sizeof *bound);
    assert_non_null(d);
    assert_non_null(bound);
    double now = 0;
    for (size_t i = 0; i < NNODES * GPUS; i++) /* the cluster full of one-GPU pods */
        assert_int_equal(gp_engine_pod_add(e, &specs[0], now, NULL), GP_OK);
    size_t nb = 0, head = 0, n = gp_engine_schedule(e, now, 0, d, cap);
    for (size_t i = 0; i < n; i++)
        if (d[i].kind == GP_DECISION_BIND)
            bound[nb++] = d[i].pod;
    assert_int_equal(nb, NNODES * GPUS);
    for (uint64_t i = 0; i < npending; i++) /* the queue behind them */
        assert_int_equal(gp_engine_pod_add(e, &specs[i % 8], now, NULL), GP_OK);
    gp_engine_schedule(e, now, 0, d, cap); /* each pending pod's first decision */
    uint64_t p0, p1, work = 0;
    gp_engine_place_stats(e, &p0, NULL);
    for (size_t c = 0; c < CYCLES; c++) {
        now += 1;
        assert_int_equal(gp_engine_pod_finished(e, bound[head++]), GP_OK);
        assert_int_equal(gp_engine_pod_add(e, &specs[0], now, NULL), GP_OK);
        n = gp_engine_schedule(e, now, 0, d, cap);
        work += n;
        for (size_t i = 0; i < n; i++)
            if (d[i].kind == GP_DECISION_BIND)
                bound[nb++] = d[i].pod;
    }
    gp_engine_place_stats(e, &p1, NULL);
    work += p1 - p0;
    free(d);
    free(bound);
    gp_engine_free(e);
    return work;
}

static void test_cycle_costs_what_changed(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum gp_order order;
        bool backfill;
    } orders[] = {{"fair", GP_ORDER_FAIR, false},
                  {"fifo+backfill", GP_ORDER_FIFO, true},
                  {"fifo", GP_ORDER_FIFO, false}};
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        uint64_t small = run(5000, orders[o].order, orders[o].backfill, true);
        uint64_t large = run(50000, orders[o].order, orders[o].backfill, true);
        print_message("%s: work of %d cycles, 5,000 pending %llu, 50,000 pending %llu\n",
                      orders[o].name, CYCLES, (unsigned long long)small, (unsigned long long)large);
        /* a few decisions and placements a cycle, whatever the queue */
        assert_true(large <= small + 8 * CYCLES);
        assert_true(large <= 64 * CYCLES);
    }
    /* the measure sees a walk that grows with the queue */
    uint64_t small = run(5000, GP_ORDER_FAIR, false, false);
    uint64_t large = run(50000, GP_ORDER_FAIR, false, false);
    print_message("fair, pending side off: %llu, %llu\n", (unsigned long long)small,
                  (unsigned long long)large);
    assert_true(large > 5 * small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cycle_costs_what_changed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
