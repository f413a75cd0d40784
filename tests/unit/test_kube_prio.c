/* test_kube_prio.c - PriorityClasses and Volcano's PodGroups reaching the
 * scheduler from their informers (kube/priority.c, kube/sched.c) against
 * the API server double: a pod without spec.priority given its
 * priorityClassName's value and preemptionPolicy (so it preempts, or not),
 * the globalDefault class given to a pod naming none (so a lower class
 * cannot preempt it), spec.priority kept when the API filled it; a
 * Volcano PodGroup (scheduling.volcano.sh/v1beta1, minMember) whose pods
 * (annotation scheduling.k8s.io/group-name) wait for it, then are placed
 * all or none. And the table's rules alone (several globalDefaults: the
 * smallest; a class deleted; a missing class 0). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/priority.h"
#include "kube_double.h"
#include "shared_data.h"
#include "kube_world.h"

/* The world of kube_world.h, with the two informers of this test. */
struct pworld {
    struct world w;
    struct gp_kube_client *ic;
    struct gp_kube_informer *prios, *volcano;
};

static void p_open(struct pworld *p)
{
    w_open(&p->w, true);
    p->ic = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(p->ic, "/apis/scheduling.k8s.io/v1/priorityclasses", 0,
                                          gp_kube_sched_priority_change, p->w.s, &p->prios, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(p->ic, "/apis/scheduling.volcano.sh/v1beta1/podgroups", 0,
                                          gp_kube_sched_group_change, p->w.s, &p->volcano, &d),
                     GP_OK);
}

static void p_close(struct pworld *p)
{
    gp_kube_informer_free(p->prios);
    gp_kube_informer_free(p->volcano);
    gp_kube_client_free(p->ic);
    w_close(&p->w);
}

/* Classes and Volcano's groups synced first (as gpuplane schedule lists
 * the classes before the pods), then a cycle. */
static size_t p_cycle(struct pworld *p)
{
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_list(p->prios, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(p->volcano, &d), GP_OK);
    p->w.now += 1;
    return w_cycle(&p->w);
}

static void p_class(struct pworld *p, const char *name, int value, const char *extra)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
             "\"metadata\":{\"name\":\"%s\"},\"value\":%d%s}",
             name, value, extra ? extra : "");
    kd_call(p->w.admin, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", b, 201);
}

/* A one-GPU pod with no spec.priority (as a pod is before admission
 * fills it): spec_extra (",\"priorityClassName\":\"high\"") and metadata
 * extra (",\"annotations\":{...}") as given. */
static void p_pod(struct pworld *p, const char *name, unsigned gpus, const char *spec_extra,
                  const char *meta)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"%s},\"spec\":{\"schedulerName\":\"gpuplane\"%s,"
             "\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":\"c\",\"image\":"
             "\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, meta ? meta : "", spec_extra ? spec_extra : "", gpus);
    kd_call(p->w.admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static bool deleting(struct pworld *p, const char *name)
{
    json_t *o = w_pod_get(&p->w, name);
    bool yes = json_object_get(json_object_get(o, "metadata"), "deletionTimestamp") != NULL;
    json_decref(o);
    return yes;
}

static void test_class_preempts(void **state)
{
    (void)state;
    struct pworld p;
    p_open(&p);
    p_class(&p, "high", 1000, NULL);
    p_class(&p, "high-never", 1000, ",\"preemptionPolicy\":\"Never\"");
    w_node(&p.w, "n1", 1);
    p_pod(&p, "low", 1, NULL, NULL); /* no class, no default: 0 */
    assert_int_equal(p_cycle(&p), 1);
    /* a class with preemptionPolicy Never: it waits, evicts nothing */
    p_pod(&p, "polite", 1, ",\"priorityClassName\":\"high-never\"", NULL);
    assert_int_equal(p_cycle(&p), 0);
    assert_false(deleting(&p, "low"));
    /* the class's 1000 over low's 0: low is the victim */
    p_pod(&p, "urgent", 1, ",\"priorityClassName\":\"high\"", NULL);
    assert_int_equal(p_cycle(&p), 0);
    assert_true(deleting(&p, "low"));
    /* the victim keeps its 30 s grace in the double (deleting() holds
     * however slow the machine is) until the test ends the deletion */
    kd_call(p.w.admin, "POST", "/_control/finish_deletions", NULL, 200);
    p_cycle(&p);
    assert_string_equal(w_node_of(&p.w, "urgent", NULL), "n1");
    assert_string_equal(w_node_of(&p.w, "polite", NULL), "");
    assert_int_equal(gp_kube_sched_stats(p.w.s).evictions, 1);
    p_close(&p);
}

static void test_global_default(void **state)
{
    (void)state;
    struct pworld p;
    p_open(&p);
    p_class(&p, "standard", 500, ",\"globalDefault\":true");
    p_class(&p, "mid", 300, NULL);
    w_node(&p.w, "n1", 1);
    w_node(&p.w, "n2", 1);
    p_pod(&p, "plain", 1, NULL, NULL); /* the default: 500 */
    /* spec.priority filled (by admission) is the pod's, whatever its class */
    p_pod(&p, "filled", 1, ",\"priority\":5,\"priorityClassName\":\"standard\"", NULL);
    assert_int_equal(p_cycle(&p), 2);
    p_pod(&p, "mid-pod", 1, ",\"priorityClassName\":\"mid\"", NULL);
    assert_int_equal(p_cycle(&p), 0);
    /* 300 preempts filled's 5, never plain's 500 (0 without the default) */
    assert_true(deleting(&p, "filled"));
    assert_false(deleting(&p, "plain"));
    p_close(&p);
}

static void volcano_pod(struct pworld *p, const char *name)
{
    p_pod(p, name, 2, NULL, ",\"annotations\":{\"scheduling.k8s.io/group-name\":\"job\"}");
}

static void test_volcano_gang(void **state)
{
    (void)state;
    struct pworld p;
    p_open(&p);
    w_node(&p.w, "n1", 4);
    volcano_pod(&p, "v1");
    volcano_pod(&p, "v2");
    volcano_pod(&p, "v3");
    assert_int_equal(p_cycle(&p), 0); /* their PodGroup is not there: they wait */
    kd_call(p.w.admin, "POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
            "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"job\"},\"spec\":{\"minMember\":3}}",
            201);
    assert_int_equal(p_cycle(&p), 0); /* 6 GPUs asked, 4 there: none, not two */
    assert_string_equal(w_node_of(&p.w, "v1", NULL), "");
    assert_string_equal(w_node_of(&p.w, "v2", NULL), "");
    w_node(&p.w, "n2", 4);
    assert_int_equal(p_cycle(&p), 3);
    w_check_distinct(&p.w);
    p_close(&p);
}

static void test_table(void **state)
{
    (void)state;
    struct gp_kube_priorities t;
    gp_kube_priorities_init(&t);
    json_t *a =
        json_loads("{\"metadata\":{\"name\":\"a\"},\"value\":70,\"globalDefault\":true}", 0, NULL);
    json_t *b = json_loads("{\"metadata\":{\"name\":\"b\"},\"value\":40,\"globalDefault\":true,"
                           "\"preemptionPolicy\":\"Never\"}",
                           0, NULL);
    json_t *bad = json_loads("{\"metadata\":{\"name\":\"c\"},\"value\":\"9\"}", 0, NULL);
    assert_true(gp_kube_priorities_change(&t, GP_KUBE_ADDED, a));
    assert_true(gp_kube_priorities_change(&t, GP_KUBE_ADDED, b));
    assert_false(gp_kube_priorities_change(&t, GP_KUBE_MODIFIED, b)); /* nothing changed */
    assert_false(gp_kube_priorities_change(&t, GP_KUBE_ADDED, bad));  /* no integer value */
    json_t *none = json_loads("{\"spec\":{}}", 0, NULL);
    json_t *own = json_loads("{\"spec\":{\"preemptionPolicy\":\"PreemptLowerPriority\"}}", 0, NULL);
    json_t *missing = json_loads("{\"spec\":{\"priorityClassName\":\"zzz\"}}", 0, NULL);
    json_t *named = json_loads("{\"spec\":{\"priorityClassName\":\"a\"}}", 0, NULL);
    int32_t prio;
    bool never;
    /* two globalDefaults: the smallest value, with its policy */
    assert_true(gp_kube_priorities_resolve(&t, none, &prio, &never));
    assert_int_equal(prio, 40);
    assert_true(never);
    assert_true(gp_kube_priorities_resolve(&t, own, &prio, &never));
    assert_false(never); /* the pod's own policy kept */
    assert_true(gp_kube_priorities_resolve(&t, missing, &prio, &never));
    assert_int_equal(prio, 0);
    assert_true(gp_kube_priorities_resolve(&t, named, &prio, &never));
    assert_int_equal(prio, 70);
    assert_false(never);
    assert_true(gp_kube_priorities_change(&t, GP_KUBE_DELETED, b));
    assert_true(gp_kube_priorities_resolve(&t, none, &prio, &never));
    assert_int_equal(prio, 70);
    assert_true(gp_kube_priorities_change(&t, GP_KUBE_DELETED, a));
    assert_true(gp_kube_priorities_resolve(&t, none, &prio, &never));
    assert_int_equal(prio, 0);
    json_t *filled = json_loads("{\"spec\":{\"priority\":3}}", 0, NULL);
    assert_false(gp_kube_priorities_resolve(&t, filled, &prio, &never));
    json_t *all[] = {a, b, bad, none, own, missing, named, filled};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        json_decref(all[i]);
    gp_kube_priorities_free(&t);
}

/* Each test on a double of its own: no class or group left by another. */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_class_preempts, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_global_default, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_volcano_gang, kd_start, kd_stop),
        cmocka_unit_test(test_table),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
