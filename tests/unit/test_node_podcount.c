/* test_node_podcount.c - the pods holding each GPU (src/node/podcount.c):
 * which pods hold GPUs (placed here, allocated, not ended; still while
 * being deleted), the counts as pods come, change and go, and the whole
 * through the API server double (an informer list then watch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "node/podcount.h"

static json_t *pod(const char *name, const char *node, const char *phase, const char *gpus,
                   const char *status)
{
    json_t *ann = json_object();
    if (node)
        json_object_set_new(ann, "gpuplane.io/node", json_string(node));
    if (phase)
        json_object_set_new(ann, "gpuplane.io/phase", json_string(phase));
    if (gpus)
        json_object_set_new(ann, "gpuplane.io/gpus", json_string(gpus));
    return json_pack("{s:{s:s,s:s,s:o},s:{s:s},s:{s:s}}", "metadata", "name", name, "namespace",
                     "default", "annotations", ann, "spec", "nodeName", node ? node : "n1",
                     "status", "phase", status ? status : "Running");
}

static void test_holds(void **state)
{
    (void)state;
    json_t *p = pod("a", "n1", "allocated", "0,3", NULL);
    assert_int_equal(gp_node_podcount_holds(p, "n1"), 0x9);
    assert_int_equal(gp_node_podcount_holds(p, "n2"), 0); /* another node's */
    json_decref(p);
    p = pod("a", "n1", "allocating", "0", NULL); /* not yet served */
    assert_int_equal(gp_node_podcount_holds(p, "n1"), 0);
    json_decref(p);
    p = pod("a", "n1", "allocated", "1", "Succeeded"); /* ended */
    assert_int_equal(gp_node_podcount_holds(p, "n1"), 0);
    json_decref(p);
    p = pod("a", "n1", "allocated", "1", "Failed");
    assert_int_equal(gp_node_podcount_holds(p, "n1"), 0);
    json_decref(p);
    p = pod("a", "n1", "allocated", "x", NULL); /* unreadable */
    assert_int_equal(gp_node_podcount_holds(p, "n1"), 0);
    json_decref(p);
    p = pod("a", NULL, NULL, NULL, NULL); /* not gpuplane's */
    assert_int_equal(gp_node_podcount_holds(p, "n1"), 0);
    json_decref(p);
}

static void test_counts(void **state)
{
    (void)state;
    struct gp_node_podcount pc;
    gp_node_podcount_init(&pc, "n1");
    json_t *a = pod("a", "n1", "allocated", "0,1", NULL);
    json_t *b = pod("b", "n1", "allocated", "1", NULL);
    json_t *b_done = pod("b", "n1", "allocated", "1", "Succeeded");
    json_t *c = pod("c", "n1", "allocating", "2", NULL);
    json_t *c_now = pod("c", "n1", "allocated", "2", NULL);
    gp_node_podcount_change(GP_KUBE_ADDED, a, NULL, &pc);
    gp_node_podcount_change(GP_KUBE_ADDED, b, NULL, &pc);
    gp_node_podcount_change(GP_KUBE_ADDED, c, NULL, &pc);
    unsigned n[4];
    gp_node_podcount_get(&pc, n, 4);
    assert_int_equal(n[0], 1);
    assert_int_equal(n[1], 2);
    assert_int_equal(n[2], 0);
    gp_node_podcount_change(GP_KUBE_MODIFIED, c_now, c, &pc);  /* c served */
    gp_node_podcount_change(GP_KUBE_MODIFIED, b_done, b, &pc); /* b ended */
    gp_node_podcount_change(GP_KUBE_MODIFIED, b_done, b_done, &pc);
    gp_node_podcount_get(&pc, n, 4);
    assert_int_equal(n[1], 1);
    assert_int_equal(n[2], 1);
    gp_node_podcount_change(GP_KUBE_DELETED, a, a, &pc); /* a gone */
    gp_node_podcount_get(&pc, n, 4);
    assert_int_equal(n[0], 0);
    assert_int_equal(n[1], 0);
    assert_int_equal(n[2], 1);
    json_decref(a);
    json_decref(b);
    json_decref(b_done);
    json_decref(c);
    json_decref(c_now);
    gp_node_podcount_free(&pc);
}

/* The counts reach want within 30 s (the watch's events, which a sanitizer
 * build on a loaded machine may take seconds to deliver). */
static bool settles(struct gp_node_podcount *pc, unsigned g, unsigned want)
{
    for (int i = 0; i < 600; i++) {
        unsigned n[4];
        gp_node_podcount_get(pc, n, 4);
        if (n[g] == want)
            return true;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static void test_watch(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/namespaces/default/pods",
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w\","
            "\"namespace\":\"default\",\"annotations\":{\"gpuplane.io/node\":\"n1\","
            "\"gpuplane.io/gpus\":\"2\",\"gpuplane.io/phase\":\"allocated\"}},\"spec\":{"
            "\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
            201);
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_node_podcount pc;
    struct gp_diag d = {""};
    gp_node_podcount_init(&pc, "n1");
    assert_int_equal(gp_node_podcount_start(&pc, &cfg, &d), GP_OK);
    assert_true(settles(&pc, 2, 1)); /* listed */
    kd_call(c, "PATCH", "/api/v1/namespaces/default/pods/w/status",
            "{\"status\":{\"phase\":\"Succeeded\"}}", 200);
    assert_true(settles(&pc, 2, 0)); /* watched: it ended */
    kd_call(c, "PATCH", "/api/v1/namespaces/default/pods/w/status",
            "{\"status\":{\"phase\":\"Running\"}}", 200);
    assert_true(settles(&pc, 2, 1));
    /* being deleted: it holds its GPU while its containers stop */
    kd_call(c, "DELETE", "/api/v1/namespaces/default/pods/w", NULL, 200);
    assert_true(settles(&pc, 2, 1));
    kd_call(c, "DELETE", "/api/v1/namespaces/default/pods/w", "{\"gracePeriodSeconds\":0}", 200);
    assert_true(settles(&pc, 2, 0)); /* gone */
    gp_node_podcount_free(&pc);
    gp_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holds),
        cmocka_unit_test(test_counts),
        cmocka_unit_test_setup_teardown(test_watch, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
