/* test_kube_gang.c - gangs (PodGroups, scheduler-plugins' coscheduling)
 * in the live scheduler against the API server double (issue 14):
 *  - all or none at any size: a gang of 100 members (more than a job of
 *    64 held before: the review's R5) whose last member's annotation is
 *    refused has none bound, and all bound once the refusal is gone;
 *    with and without binder threads;
 *  - a PodGroup that comes after its members lets them into the engine
 *    without a rebuild (R13). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

#define BIG     100
#define BINDERS 3

static void podgroup(struct world *w, const char *name, unsigned min)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"minMember\":%u}}",
             name, min);
    kd_call(w->admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups", b,
            201);
}

static void member(struct world *w, const char *group, unsigned i)
{
    char name[32], meta[128];
    snprintf(name, sizeof name, "m%03u", i);
    snprintf(meta, sizeof meta, ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"%s\"}", group);
    w_pod_full(w, name, 1, 0, "gpuplane", meta);
}

static unsigned bound_count(struct world *w)
{
    unsigned n = 0;
    for (unsigned i = 0; i < BIG; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%03u", i);
        n += w_node_of(w, name, NULL)[0] != '\0';
    }
    return n;
}

/* The cycle, then (with binders) the binds in flight waited for. */
static size_t cycle(struct world *w)
{
    size_t n = w_cycle(w), more = 0;
    gp_kube_sched_wait_binds(w->s, &more);
    w_sync(w);
    return n + more;
}

static void big_gang(unsigned binders)
{
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *bc[BINDERS] = {NULL};
    assert_true(binders <= BINDERS);
    if (binders) {
        for (unsigned i = 0; i < binders; i++)
            bc[i] = kd_client();
        struct gp_diag d = {""};
        assert_int_equal(gp_kube_sched_start_binders(w.s, bc, binders, NULL, NULL, &d), GP_OK);
    }
    for (unsigned i = 0; i < BIG / 4; i++) { /* room for all: 25 nodes of 4 GPUs */
        char name[16];
        snprintf(name, sizeof name, "n%02u", i);
        w_node_agent(&w, name, 4, false);
    }
    podgroup(&w, "big", BIG);
    for (unsigned i = 0; i < BIG; i++)
        member(&w, "big", i);
    /* the last member's annotation patch refused: every member back */
    char fault[128];
    snprintf(fault, sizeof fault, "{\"status\":422,\"count\":1,\"match\":\"/pods/m%03u\"}",
             BIG - 1);
    kd_call(w.admin, "POST", "/_control/fault", fault, 200);
    cycle(&w);
    assert_int_equal(bound_count(&w), 0);
    assert_int_equal(gp_kube_sched_stats(w.s).rollbacks, BIG);
    w.now += 2; /* past the back-off */
    assert_int_equal(cycle(&w), BIG);
    assert_int_equal(bound_count(&w), BIG);
    w_check_distinct(&w);
    if (binders)
        gp_kube_sched_stop_binders(w.s);
    w_close(&w);
    for (unsigned i = 0; i < binders; i++)
        gp_kube_client_free(bc[i]);
}

static void test_big_gang(void **state)
{
    (void)state;
    big_gang(0);
}

static void test_big_gang_binders(void **state)
{
    (void)state;
    big_gang(3);
}

/* PodGroups that come after their members (a Job's controller makes
 * both; the order is the informers'): the members are let into the
 * engine as each arrives, and bound, without a rebuild of the engine (the
 * review's R13: each new PodGroup rebuilt it); one deleted and made again
 * while its member waits, the same. */
static void test_group_no_rebuild(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node_agent(&w, "n1", 8, false);
    w_pod(&w, "solo", 1);
    assert_int_equal(cycle(&w), 1); /* the first cycle's rebuild */
    uint64_t rebuilds = gp_kube_sched_stats(w.s).rebuilds;
    const char *groups[] = {"a", "b", "c"};
    for (unsigned g = 0; g < 3; g++) {
        char name[16], meta[128];
        for (unsigned i = 0; i < 2; i++) {
            snprintf(name, sizeof name, "%s%u", groups[g], i);
            snprintf(meta, sizeof meta, ",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"%s\"}",
                     groups[g]);
            w_pod_full(&w, name, 1, 0, "gpuplane", meta);
        }
        w.now += 1;
        assert_int_equal(cycle(&w), 0); /* no PodGroup yet: they wait */
        podgroup(&w, groups[g], 2);
        w.now += 1;
        assert_int_equal(cycle(&w), 2);
        snprintf(name, sizeof name, "%s1", groups[g]);
        assert_string_equal(w_node_of(&w, name, NULL), "n1");
    }
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, rebuilds);
    w_check_distinct(&w);
    w_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_big_gang, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_big_gang_binders, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_group_no_rebuild, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
