/* test_kube_words.c - the scheduler (kube/sched.h) against the API server
 * double (issue 14):
 *  - a node whose only change is a label documented as a volatile
 *    timestamp (GPU Feature Discovery's nvidia.com/gfd.timestamp) does not
 *    rebuild the engine; any other label change does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

static void label(struct world *w, const char *node, const char *key, const char *value)
{
    char path[128], body[256];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    snprintf(body, sizeof body, "{\"metadata\":{\"labels\":{\"%s\":\"%s\"}}}", key, value);
    kd_call(w->admin, "PATCH", path, body, 200);
}

static void test_timestamp_label(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    label(&w, "n1", "nvidia.com/gfd.timestamp", "1715709242");
    w_pod(&w, "a", 1);
    assert_int_equal(w_cycle(&w), 1);
    uint64_t before = gp_kube_sched_stats(w.s).rebuilds;
    /* GFD's labelling passes: the timestamp alone, each MODIFIED */
    char ts[32];
    for (int i = 1; i <= 5; i++) {
        snprintf(ts, sizeof ts, "%d", 1715709242 + 60 * i);
        label(&w, "n1", "nvidia.com/gfd.timestamp", ts);
        label(&w, "n2", "nvidia.com/gfd.timestamp", ts); /* n2 had none: added */
        w_pod(&w, i == 1 ? "b" : i == 2 ? "c" : i == 3 ? "d" : i == 4 ? "e" : "f", 1);
        assert_int_equal(w_cycle(&w), 1);
    }
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, before);
    /* a label a selector may read: the engine is told (a rebuild) */
    label(&w, "n1", "example.com/rack", "r7");
    w_cycle(&w);
    assert_true(gp_kube_sched_stats(w.s).rebuilds > before);
    w_check_distinct(&w);
    w_close(&w);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_timestamp_label, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
