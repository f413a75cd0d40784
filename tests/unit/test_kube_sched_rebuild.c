/* test_kube_sched_rebuild.c - the rebuild of the scheduler's engine from
 * the API (src/kube/sched_rebuild.c) against the API server double
 * (issue 14, the review's R14):
 *  - a half-finished decision (annotated, not bound) is resumed only
 *    where the pod passes every filter a fresh decision runs: a
 *    nodeSelector the node's labels no longer match, a taint it does not
 *    tolerate, CPU another pod took since - each sends it elsewhere;
 *  - annotations gpuplane did not write as one decision (a user's
 *    gpuplane.io/node and gpus without the phase; a running pod's copied,
 *    phase "allocated") are no decision: the pod is decided anew; a pod
 *    asking no GPU, whose decision has no phase, is resumed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

/* A pod of ours asking 1 GPU and `cpu` cores, with extra metadata (meta)
 * and spec members (spec, ",\"nodeSelector\":{...}") when not NULL. */
static void pod_spec(struct world *w, const char *name, const char *sched, unsigned gpus,
                     unsigned cpu, const char *meta, const char *spec)
{
    char b[1536];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"%s},\"spec\":{\"schedulerName\":\"%s\"%s,"
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
             "\"cpu\":\"%u\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"%u\"},\"limits\":{"
             "\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, meta ? meta : "", sched, spec ? spec : "", cpu, gpus, gpus);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* gpuplane's decision for n1's GPU 0, written and not bound (the
 * scheduler stopped between the patch and the Binding). */
#define HALF_N1                                                                                    \
    ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"0\","                    \
    "\"gpuplane.io/phase\":\"allocating\"}"

enum unfit { UNFIT_SELECTOR, UNFIT_TAINT, UNFIT_CPU };

/* Two nodes; the half-finished decision names n1, where the pod no
 * longer fits for reason `why`; n2 takes it. */
static void resume_unfit(enum unfit why)
{
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    const char *spec = NULL;
    if (why == UNFIT_SELECTOR) { /* n2 alone is labelled as the pod asks */
        kd_call(w.admin, "PATCH", "/api/v1/nodes/n2",
                "{\"metadata\":{\"labels\":{\"zone\":\"b\"}}}", 200);
        spec = ",\"nodeSelector\":{\"zone\":\"b\"}";
    } else if (why == UNFIT_TAINT) { /* tainted after the decision was written */
        kd_call(w.admin, "PATCH", "/api/v1/nodes/n1",
                "{\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"infer\","
                "\"effect\":\"NoSchedule\"}]}}",
                200);
    } else { /* another scheduler's pod took 60 of n1's 64 cores */
        pod_spec(&w, "hog", "default-scheduler", 0, 60, NULL, NULL);
        w_bind(&w, "hog", "n1");
    }
    pod_spec(&w, "half", "gpuplane", 1, 8, HALF_N1, spec);
    assert_int_equal(w_cycle(&w), 1);
    const char *g;
    assert_string_equal(w_node_of(&w, "half", &g), "n2");
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 0);
    w_check_distinct(&w);
    w_close(&w);
}

static void test_resume_selector(void **state)
{
    (void)state;
    resume_unfit(UNFIT_SELECTOR);
}

static void test_resume_taint(void **state)
{
    (void)state;
    resume_unfit(UNFIT_TAINT);
}

static void test_resume_cpu(void **state)
{
    (void)state;
    resume_unfit(UNFIT_CPU);
}

/* The same decision where the pod still fits is resumed at its GPU (the
 * control: the tests above fail for the rule they break, not another). */
static void test_resume_fits(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/n1", "{\"metadata\":{\"labels\":{\"zone\":\"b\"}}}",
            200);
    pod_spec(&w, "half", "gpuplane", 1, 8,
             ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"2\","
             "\"gpuplane.io/phase\":\"allocating\"}",
             ",\"nodeSelector\":{\"zone\":\"b\"}");
    assert_int_equal(w_cycle(&w), 1);
    const char *g;
    assert_string_equal(w_node_of(&w, "half", &g), "n1");
    assert_string_equal(g, "2");
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 1);
    w_close(&w);
}

/* gpuplane.io/node and gpus set by a user (no phase), and a running
 * pod's annotations copied (phase allocated): neither is resumed at the
 * GPU it names; the engine's own choice (the lowest free GPUs) binds
 * them. */
static void test_user_annotations(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    pod_spec(&w, "byhand", "gpuplane", 1, 1,
             ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"3\"}", NULL);
    pod_spec(&w, "copied", "gpuplane", 1, 1,
             ",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/gpus\":\"2\","
             "\"gpuplane.io/phase\":\"allocated\"}",
             NULL);
    assert_int_equal(w_cycle(&w), 2);
    const char *g;
    assert_string_equal(w_node_of(&w, "byhand", &g), "n1");
    assert_true(strcmp(g, "0") == 0 || strcmp(g, "1") == 0);
    assert_string_equal(w_node_of(&w, "copied", &g), "n1");
    assert_true(strcmp(g, "0") == 0 || strcmp(g, "1") == 0);
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 0);
    w_check_distinct(&w);
    w_close(&w);
}

/* A pod asking no GPU: gpuplane's decision names the node, no GPU and
 * no phase (bind.c); such a half-finished decision is resumed there. */
static void test_resume_cpu_only(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    pod_spec(&w, "cpu", "gpuplane", 0, 1,
             ",\"annotations\":{\"gpuplane.io/node\":\"n2\",\"gpuplane.io/gpus\":\"\"}", NULL);
    assert_int_equal(w_cycle(&w), 1);
    assert_string_equal(w_node_of(&w, "cpu", NULL), "n2");
    assert_int_equal(gp_kube_sched_stats(w.s).resumed, 1);
    w_close(&w);
}

/* A rebuild right after a Binding answered 201, before the informer has
 * brought the pod bound (the binders' results are applied, then the
 * engine is made anew at once: sched.c gp_kube_sched_cycle): the pod is
 * on its node at its GPUs in the new engine, not queued again with its
 * GPUs taken as free. Here pod "b-small" is bound to n1's GPU (one of
 * two); n1 changes (a label, a rebuild) while the pods informer has not
 * been read again, and "a-big", asking both GPUs, must not be bound over
 * it. */
static void test_bound_unseen(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    w_node_agent(&w, "n1", 2, false);
    w_pod(&w, "b-small", 1);
    w_sync(&w);
    size_t bound;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(bound, 1);
    assert_string_equal(w_node_of(&w, "b-small", NULL), "n1");
    /* a-big comes (fed as its ADDED event alone: b-small's Binding not
     * read yet), and n1 changes: the engine is rebuilt */
    w_pod(&w, "a-big", 2);
    json_t *o = w_pod_get(&w, "a-big");
    gp_kube_sched_pod_change(GP_KUBE_ADDED, o, NULL, w.s);
    json_decref(o);
    kd_call(w.admin, "PATCH", "/api/v1/nodes/n1", "{\"metadata\":{\"labels\":{\"zone\":\"b\"}}}",
            200);
    assert_int_equal(gp_kube_informer_list(w.nodes, &d), GP_OK);
    long binds = w_stat(&w, "bindings");
    w.now += 1;
    assert_int_equal(gp_kube_sched_cycle(w.s, w.now, &bound, &d), GP_OK);
    assert_int_equal(gp_kube_sched_stats(w.s).rebuilds, 2);
    assert_int_equal(bound, 0);
    assert_int_equal(w_stat(&w, "bindings"), binds);
    assert_string_equal(w_node_of(&w, "a-big", NULL), "");
    w_check_distinct(&w);
    /* the informer brings it: nothing changes */
    assert_int_equal(w_cycle(&w), 0);
    assert_string_equal(w_node_of(&w, "a-big", NULL), "");
    w_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resume_selector, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resume_taint, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resume_cpu, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resume_fits, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_user_annotations, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_resume_cpu_only, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_bound_unseen, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
