/* test_node_metrics.c - the node agent's per-GPU metrics (src/node/metrics.c):
 * the exposition after updates from an inventory and a health, the XID
 * counters raised by the counts' increase only, another GPU at an index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "node/metrics.h"

static struct gp_node_inventory inv;

static void fill(void)
{
    memset(&inv, 0, sizeof inv);
    inv.n_gpus = 2;
    for (unsigned i = 0; i < 2; i++) {
        struct gp_node_gpu *g = &inv.gpus[i];
        g->index = i;
        snprintf(g->uuid, sizeof g->uuid, "GPU-%u", i);
        g->memory_mib = 81920;
        g->healthy = true;
    }
    inv.gpus[0].util_percent = 37;
    inv.gpus[0].memory_used_mib = 1024;
}

static const char *expose(struct gp_node_metrics *nm)
{
    static char text[16384];
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_metrics_expose(nm->reg, &b);
    snprintf(text, sizeof text, "%s", gp_sbuf_str(&b));
    gp_sbuf_free(&b);
    return text;
}

static void has(const char *text, const char *line)
{
    char want[256];
    snprintf(want, sizeof want, "\n%s\n", line);
    if (!strstr(text, want))
        fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_metrics(void **state)
{
    (void)state;
    fill();
    struct gp_node_metrics nm;
    struct gp_diag d = {""};
    assert_int_equal(gp_node_metrics_init(&nm, &d), GP_OK);
    struct gp_node_health h;
    gp_node_health_init(&h, 2, NULL);
    assert_false(gp_node_health_xid(&h, 1, 13, 0, NULL));
    assert_false(gp_node_health_xid(&h, 1, 13, 1, NULL));
    assert_true(gp_node_health_xid(&h, 1, 79, 2, NULL));
    unsigned pods[2] = {3, 0};
    gp_node_metrics_update(&nm, &inv, &h, pods, 2);
    const char *t = expose(&nm);
    has(t, "# TYPE gpuplane_node_gpu_utilization_percent gauge");
    has(t, "gpuplane_node_gpu_utilization_percent{gpu=\"GPU-0\"} 37");
    has(t, "gpuplane_node_gpu_memory_used_bytes{gpu=\"GPU-0\"} 1.073741824e+09");
    has(t, "gpuplane_node_gpu_memory_total_bytes{gpu=\"GPU-1\"} 8.589934592e+10");
    has(t, "gpuplane_node_gpu_pods_allocated{gpu=\"GPU-0\"} 3");
    has(t, "gpuplane_node_gpu_pods_allocated{gpu=\"GPU-1\"} 0");
    has(t, "gpuplane_node_gpu_healthy{gpu=\"GPU-0\"} 1");
    has(t, "gpuplane_node_gpu_healthy{gpu=\"GPU-1\"} 0");
    has(t, "gpuplane_node_gpu_last_xid{gpu=\"GPU-1\"} 79");
    has(t, "# TYPE gpuplane_node_gpu_xids_application_total counter");
    has(t, "gpuplane_node_gpu_xids_application_total{gpu=\"GPU-1\"} 2");
    has(t, "gpuplane_node_gpu_xids_fatal_total{gpu=\"GPU-1\"} 1");
    has(t, "gpuplane_node_gpu_xids_recoverable_total{gpu=\"GPU-0\"} 0");
    /* updated again: counters rise by the increase only */
    gp_node_metrics_update(&nm, &inv, &h, NULL, 0);
    assert_false(gp_node_health_xid(&h, 1, 13, 3, NULL));
    gp_node_metrics_update(&nm, &inv, &h, NULL, 0);
    t = expose(&nm);
    has(t, "gpuplane_node_gpu_xids_application_total{gpu=\"GPU-1\"} 3");
    has(t, "gpuplane_node_gpu_xids_fatal_total{gpu=\"GPU-1\"} 1");
    has(t, "gpuplane_node_gpu_pods_allocated{gpu=\"GPU-0\"} 0");
    /* another GPU at index 1: its own series, counted from its own start */
    snprintf(inv.gpus[1].uuid, sizeof inv.gpus[1].uuid, "GPU-new");
    gp_node_health_init(&h, 2, NULL);
    assert_true(gp_node_health_xid(&h, 1, 74, 0, NULL));
    assert_true(gp_node_health_xid(&h, 1, 48, 0, NULL)); /* recoverable -> reset */
    gp_node_metrics_update(&nm, &inv, &h, NULL, 0);
    t = expose(&nm);
    has(t, "gpuplane_node_gpu_xids_recoverable_total{gpu=\"GPU-new\"} 1");
    has(t, "gpuplane_node_gpu_xids_reset_total{gpu=\"GPU-new\"} 1");
    has(t, "gpuplane_node_gpu_xids_application_total{gpu=\"GPU-1\"} 3");
    /* without a health: the inventory's own fields */
    inv.gpus[0].healthy = false;
    inv.gpus[0].last_xid = 31;
    gp_node_metrics_update(&nm, &inv, NULL, NULL, 0);
    t = expose(&nm);
    has(t, "gpuplane_node_gpu_healthy{gpu=\"GPU-0\"} 0");
    has(t, "gpuplane_node_gpu_last_xid{gpu=\"GPU-0\"} 31");
    gp_node_metrics_free(&nm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
