/* test_kube_sched_pdb.c - a PodDisruptionBudget's change costs what it
 * concerns (src/kube/pdb.c, the review's R13): the scheduler looks at the
 * pods of the budget's namespace alone (pods by namespace,
 * sched_records.c), not at every pod against every budget, and none at
 * all when only its status.disruptionsAllowed changed (given to the engine
 * by the budget's id); still a budget's status update that leaves no
 * disruption allowed makes its pod the victim of last resort
 * (kube-scheduler's DefaultPreemption, filterPodsWithPDBViolation).
 * Against the API server double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

#define OTHERS 30 /* pods of another namespace */

static bool deleting(struct world *w, const char *name)
{
    json_t *o = w_pod_get(w, name);
    bool d = json_object_get(json_object_get(o, "metadata"), "deletionTimestamp") != NULL;
    json_decref(o);
    return d;
}

static void test_pdb_namespace_only(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    struct gp_kube_client *ic = kd_client();
    struct gp_kube_informer *pdbs;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(ic, "/apis/policy/v1/poddisruptionbudgets", 0,
                                          gp_kube_sched_pdb_change, w.s, &pdbs, &d),
                     GP_OK);
    w_node(&w, "n1", 1);
    w_node(&w, "n2", 1);
    for (unsigned i = 0; i < OTHERS; i++) { /* another scheduler's, pending */
        char b[512];
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"o%02u\",\"labels\":{\"app\":\"keep\"}},\"spec\":{"
                 "\"schedulerName\":\"other\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                 i);
        kd_call(w.admin, "POST", "/api/v1/namespaces/other/pods", b, 201);
    }
    w_pod_full(&w, "a", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"spare\"}");
    assert_int_equal(w_cycle(&w), 1);
    w.now += 1;
    w_pod_full(&w, "b", 1, 0, "gpuplane", ",\"labels\":{\"app\":\"keep\"}");
    assert_int_equal(w_cycle(&w), 1);
    /* a budget allowing one disruption of app=keep in default */
    kd_call(w.admin, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
            "{\"name\":\"keep\",\"namespace\":\"default\"},\"spec\":{\"minAvailable\":1,"
            "\"selector\":{\"matchLabels\":{\"app\":\"keep\"}}},\"status\":{"
            "\"disruptionsAllowed\":1,\"currentHealthy\":2,\"desiredHealthy\":1,"
            "\"expectedPods\":1}}",
            201);
    assert_int_equal(gp_kube_informer_list(pdbs, &d), GP_OK);
    assert_int_equal(gp_kube_sched_stats(w.s).pdb_pods_walked, 2); /* a and b, not o00.. */
    /* its status now allows none (the disruption controller's update) */
    kd_call(w.admin, "PATCH", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/keep/status",
            "{\"status\":{\"disruptionsAllowed\":0,\"currentHealthy\":1}}", 200);
    assert_int_equal(gp_kube_informer_list(pdbs, &d), GP_OK);
    /* no pod walked: its pods are the same, only what it allows changed
     * (gp_engine_pdb_set: the engine counts that itself) */
    assert_int_equal(gp_kube_sched_stats(w.s).pdb_pods_walked, 2);
    /* so the engine's newest victim (b) is spared: a goes */
    w_pod_full(&w, "high", 1, 100, "gpuplane", NULL);
    w.now += 1;
    assert_int_equal(w_cycle(&w), 0);
    assert_true(deleting(&w, "a"));
    assert_false(deleting(&w, "b"));
    gp_kube_informer_free(pdbs);
    gp_kube_client_free(ic);
    w_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pdb_namespace_only, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
