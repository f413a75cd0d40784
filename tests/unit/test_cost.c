/* test_cost.c - cost accounting against a real demand curve: Philly's
 * active nodes per minute (../shared/data/philly/helios-artifact/
 * philly_node_sequence.csv, its first three days, averaged per hour) become one
 * hour-long whole-node pod per active node and hour, run once on a fixed
 * cluster of Philly's size and once on a pool that scales to zero. The
 * autoscaled cluster must bill fewer node-hours and cost less, yet never
 * less than the work itself; every pod runs in both. Also the JSON keys of
 * the cost section. Skips without ../shared. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shared_data.h"

#include "io/cluster.h"
#include "io/workload.h"
#include "report/report.h"
#include "sim/sim.h"
#include "util/fs.h"

#define SEQ_PATH GP_SHARED_DIR "/data/philly/helios-artifact/philly_node_sequence.csv"
#define HOURS    (3 * 24)
#define PRICE_H  27.45 /* an 8-GPU node, EKS p4de.24xlarge on demand */

#define CLUSTER_FMT                                                                                \
    "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: philly}\nspec:\n"                 \
    "  controlPlane: {pricePerHour: 0.10}\n  autoscaler: {scaleDownUnneededTime: 10m}\n"           \
    "  nodePools:\n  - name: gpu\n    gpu: {model: P100, count: 8, memory: 16Gi}\n"                \
    "    cpu: \"32\"\n    memory: 256Gi\n    pricePerHour: %.2f\n%s"

/* Hourly demand: the mean of the active-node counts of each hour. */
static size_t read_demand(uint32_t *demand, uint32_t *total)
{
    char *text = NULL;
    size_t len = 0;
    struct gp_diag d = {""};
    if (gp_fs_read(SEQ_PATH, &text, &len, &d) != GP_OK)
        return 0;
    char *line = strchr(text, '\n');
    double sum = 0;
    size_t minutes = 0, hours = 0;
    while (line && hours < HOURS) {
        line++;
        unsigned act = 0, tot = 0;
        const char *comma = strchr(line, ',');
        if (!comma || sscanf(comma + 1, "%u,%u", &act, &tot) != 2)
            break;
        *total = tot > *total ? tot : *total;
        sum += act;
        if (++minutes == 60) {
            demand[hours++] = (uint32_t)lround(sum / 60);
            sum = 0;
            minutes = 0;
        }
        line = strchr(line, '\n');
    }
    free(text);
    return hours;
}

static void run(const char *size, const uint32_t *demand, size_t hours, struct gp_sim_result *out,
                struct gp_arena *a)
{
    char text[1024];
    snprintf(text, sizeof text, CLUSTER_FMT, PRICE_H, size);
    struct gp_cluster c;
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    assert_int_equal(gp_cluster_parse_yaml(text, strlen(text), "philly.yaml", a, &c, &d), GP_OK);
    assert_int_equal(gp_cluster_expand(&c, a, &d), GP_OK);
    for (size_t h = 0; h < hours; h++) {
        struct gp_item it = {0};
        it.name = "hour";
        it.kind = GP_ITEM_JOB;
        it.pod.name = "hour";
        it.pod.cpu_milli = 4000;
        it.pod.mem_mib = 32768;
        it.pod.gpu_count = 8;
        it.pod.gpu_milli = 1000;
        it.completions = it.parallelism = demand[h];
        it.arrival_s = (double)h * 3600;
        it.has_duration = true;
        it.duration = (struct gp_dist){GP_DIST_FIXED, 3600, 0};
        it.repeat = 1;
        if (demand[h])
            assert_int_equal(gp_workload_append(&w, a, &it), GP_OK);
    }
    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.horizon_s = (double)hours * 3600 + 3600;
    assert_int_equal(gp_sim_run(&cfg, &c, &w, a, out, &d), GP_OK);
}

static void test_philly_scale_to_zero(void **state)
{
    (void)state;
    static uint32_t demand[HOURS];
    uint32_t total = 0;
    GP_NEED_SHARED(SEQ_PATH);
    size_t hours = read_demand(demand, &total);
    if (hours < HOURS)
        fail_msg("%s: %zu hours of demand, expected %d", SEQ_PATH, hours, HOURS);
    double work_node_h = 0;
    uint64_t pods = 0;
    for (size_t h = 0; h < hours; h++) {
        work_node_h += demand[h];
        pods += demand[h];
    }
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result fixed, scaled;
    char size[128];
    snprintf(size, sizeof size, "    count: %u\n", total);
    run(size, demand, hours, &fixed, &a);
    snprintf(size, sizeof size, "    minCount: 0\n    maxCount: %u\n    bootTime: 4m\n", total);
    run(size, demand, hours, &scaled, &a);

    const struct gp_sim_pool_cost *pf = &fixed.cost.pools[0], *ps = &scaled.cost.pools[0];
    print_message("Philly, first 3 days, %zu h: demand %.0f node-hours (%" PRIu64 " pods), "
                  "%u nodes\n",
                  hours, work_node_h, pods, total);
    print_message("  fixed:         %9.0f node-hours  $%10.2f  (GPU idle $%.2f)\n", pf->node_hours,
                  fixed.cost.total_usd, fixed.cost.gpu_idle_usd);
    print_message("  scale to zero: %9.0f node-hours  $%10.2f  (GPU idle $%.2f), %" PRIu64
                  " nodes requested, %" PRIu64 " removed, peak %u, mean delay %.0f s\n",
                  ps->node_hours, scaled.cost.total_usd, scaled.cost.gpu_idle_usd,
                  ps->nodes_requested, ps->nodes_removed, ps->peak_nodes,
                  scaled.queue_delay_s.mean);
    /* every pod ran in both */
    assert_int_equal(fixed.pods_completed, pods);
    assert_int_equal(scaled.pods_completed, pods);
    /* the fixed cluster bills every node for the whole run */
    assert_float_equal(pf->node_hours, (double)total * (hours + 1), 1e-6);
    /* scaling bills less, but never less than the work (plus boot) */
    assert_true(ps->node_hours < pf->node_hours);
    assert_true(ps->node_hours >= work_node_h);
    assert_true(scaled.cost.total_usd < fixed.cost.total_usd);
    assert_true(scaled.cost.gpu_idle_usd < fixed.cost.gpu_idle_usd);
    assert_true(ps->peak_nodes <= total);
    /* the same work is paid in both: used cost equal */
    assert_float_equal(scaled.cost.gpu_used_usd, fixed.cost.gpu_used_usd,
                       1e-6 * fixed.cost.gpu_used_usd);
    /* pods wait about a boot time when the pool grows, never on a fixed one */
    assert_float_equal(fixed.queue_delay_s.max, 0, 0);
    assert_true(scaled.queue_delay_s.max >= 240 - 1e-9);
    gp_arena_free(&a);
}

/* The JSON has the cost section with its parts adding up. */
static void test_json_cost_keys(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    uint32_t demand[3] = {2, 0, 1};
    struct gp_sim_result r;
    run("    minCount: 0\n    maxCount: 3\n    bootTime: 1m\n", demand, 3, &r, &a);
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_json(&b, &r, NULL);
    const char *j = gp_sbuf_str(&b);
    static const char *const keys[] = {"\"cost\"",
                                       "\"total_usd\"",
                                       "\"gpu_used_usd\"",
                                       "\"gpu_idle_usd\"",
                                       "\"control_plane_usd\"",
                                       "\"other_usd\"",
                                       "\"by_pool\"",
                                       "\"by_queue\"",
                                       "\"lost_work_usd\"",
                                       "\"spot_savings_usd\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(j, keys[i]))
            fail_msg("no %s in the JSON", keys[i]);
    const struct gp_sim_cost *c = &r.cost;
    assert_float_equal(c->gpu_used_usd + c->gpu_idle_usd + c->control_plane_usd + c->other_usd,
                       c->total_usd, 1e-6);
    /* 3 pod-hours of whole nodes at PRICE_H are the used part */
    assert_float_equal(c->gpu_used_usd, 3 * PRICE_H, 1e-6);
    assert_float_equal(c->control_plane_usd, 0.10 * r.sim_end_s / 3600, 1e-9);
    gp_sbuf_free(&b);
    gp_arena_free(&a);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_cost_keys),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_philly_scale_to_zero),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
