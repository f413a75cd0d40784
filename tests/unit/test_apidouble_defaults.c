/* test_apidouble_defaults.c - a Pod created on the API double gets what
 * kube-apiserver v1.28 fills in (tests/apidouble/writes.c pod_defaults):
 * the recorded server's pod (../shared/k8s/samples/recorded-apiserver-
 * v1.28/pod-create.json) made again from what its client sent has that
 * spec, field for field (the two DefaultTolerationSeconds tolerations,
 * dnsPolicy, enableServiceLinks, priority, preemptionPolicy, ...); what a
 * pod says itself is kept (a NoExecute toleration of its own of either
 * taint, or one of every taint, adds none for it; its own policies), a
 * limit without a request is requested, priority comes from the named
 * class, or the smallest globalDefault one (its name written); a pod
 * created with schedulingGates has PodScheduled False, reason
 * SchedulingGated (strategy.go applySchedulingGatedCondition), kept by an
 * update and replaced by the Binding's; and a Binding of a pod with
 * schedulingGates is refused (409) until a patch removes them, as the
 * real server's setPodHostAndAnnotations refuses it;
 * a patch that changes a pod's spec beyond what ValidatePodUpdate allows
 * (nodeName, schedulerName, tolerations taken away) is 422 Invalid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube_double.h"
#include "shared_data.h"

/* The pod the double answers a create of body with (201). */
static json_t *create(struct gp_kube_client *c, const char *body)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "POST", "/api/v1/namespaces/default/pods", body,
                                     "application/json", &r, &d),
                     GP_OK);
    if (r.status != 201)
        fail_msg("POST pod: HTTP %ld: %s", r.status, r.body);
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    assert_non_null(doc);
    return doc;
}

static json_t *spec_of(json_t *pod)
{
    return json_object_get(pod, "spec");
}

/* The tolerations' keys with their seconds, "key=300 ..." */
static void tolerations_of(json_t *pod, char *out, size_t n)
{
    size_t i, len = 0;
    json_t *t;
    out[0] = '\0';
    json_array_foreach(json_object_get(spec_of(pod), "tolerations"), i, t)
    {
        const char *k = json_string_value(json_object_get(t, "key"));
        len += (size_t)snprintf(
            out + len, n - len, "%s%s=%lld", len ? " " : "", k ? k : "*",
            (long long)json_integer_value(json_object_get(t, "tolerationSeconds")));
    }
}

#define POD(name, spec)                                                                            \
    "{\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"containers\":[{\"name\":\"c\","             \
    "\"image\":\"x:1\"}]" spec "}}"

static void test_own_kept(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    char t[512];
    json_t *p = create(c, POD("plain", ""));
    tolerations_of(p, t, sizeof t);
    assert_string_equal(t, "node.kubernetes.io/not-ready=300 node.kubernetes.io/unreachable=300");
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "schedulerName")),
                        "default-scheduler");
    assert_int_equal(json_integer_value(json_object_get(spec_of(p), "priority")), 0);
    json_decref(p);

    p = create(c, POD("own", ",\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\","
                             "\"operator\":\"Exists\",\"effect\":\"NoExecute\","
                             "\"tolerationSeconds\":60}],\"dnsPolicy\":\"Default\","
                             "\"schedulerName\":\"gpuplane\",\"restartPolicy\":\"Never\""));
    tolerations_of(p, t, sizeof t);
    assert_string_equal(t, "node.kubernetes.io/not-ready=60 node.kubernetes.io/unreachable=300");
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "dnsPolicy")), "Default");
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "schedulerName")),
                        "gpuplane");
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "restartPolicy")), "Never");
    json_decref(p);

    /* a toleration of every taint (no key, Exists), every effect: none added */
    p = create(c, POD("all", ",\"tolerations\":[{\"operator\":\"Exists\"}]"));
    tolerations_of(p, t, sizeof t);
    assert_string_equal(t, "*=0");
    json_decref(p);
    /* a NoSchedule one of the key tolerates no NoExecute: both added */
    p = create(c, POD("nosched", ",\"tolerations\":[{\"key\":\"node.kubernetes.io/unreachable\","
                                 "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]"));
    tolerations_of(p, t, sizeof t);
    assert_string_equal(t, "node.kubernetes.io/unreachable=0 node.kubernetes.io/not-ready=300 "
                           "node.kubernetes.io/unreachable=300");
    json_decref(p);

    /* a limit without a request is requested */
    p = create(c, "{\"metadata\":{\"name\":\"lim\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                  "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"},"
                  "\"requests\":{\"cpu\":\"1\"}}}]}}");
    json_t *ctr = json_array_get(json_object_get(spec_of(p), "containers"), 0);
    json_t *req = json_object_get(json_object_get(ctr, "resources"), "requests");
    assert_string_equal(json_string_value(json_object_get(req, "nvidia.com/gpu")), "2");
    assert_string_equal(json_string_value(json_object_get(req, "cpu")), "1");
    assert_string_equal(json_string_value(json_object_get(ctr, "imagePullPolicy")), "Always");
    json_decref(p);

    /* priority from the class named, or the smallest globalDefault one */
    kd_call(c, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
            "{\"metadata\":{\"name\":\"high\"},\"value\":1000,\"preemptionPolicy\":\"Never\"}",
            201);
    p = create(c, POD("named", ",\"priorityClassName\":\"high\""));
    assert_int_equal(json_integer_value(json_object_get(spec_of(p), "priority")), 1000);
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "preemptionPolicy")),
                        "Never");
    json_decref(p);
    kd_call(c, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
            "{\"metadata\":{\"name\":\"d5\"},\"value\":500,\"globalDefault\":true}", 201);
    kd_call(c, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
            "{\"metadata\":{\"name\":\"d3\"},\"value\":300,\"globalDefault\":true}", 201);
    p = create(c, POD("dflt", ""));
    assert_int_equal(json_integer_value(json_object_get(spec_of(p), "priority")), 300);
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "priorityClassName")), "d3");
    assert_string_equal(json_string_value(json_object_get(spec_of(p), "preemptionPolicy")),
                        "PreemptLowerPriority");
    json_decref(p);
    gp_kube_client_free(c);
}

/* What the recorded server's client sent: its managedFields less what
 * the server's defaulting owns in them too. */
static const char recorded_body[] =
    "{\"metadata\":{\"name\":\"custom-sched-pod-1\"},\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"image\":\"registry.k8s.io/pause:3.9\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
    "\"2\"},\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"2\"}}}],"
    "\"automountServiceAccountToken\":false,\"schedulerName\":\"custom\"}}";

static void test_as_recorded(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/k8s/samples/recorded-apiserver-v1.28/pod-create.json",
             GP_SHARED_DIR);
    GP_NEED_SHARED(path);
    /* the file is the pod, then the status line */
    json_error_t err;
    json_t *want = json_load_file(path, JSON_DISABLE_EOF_CHECK, &err);
    if (!want)
        fail_msg("%s:%d: %s", path, err.line, err.text);
    struct gp_kube_client *c = kd_client();
    json_t *got = create(c, recorded_body);
    if (!json_equal(spec_of(got), spec_of(want))) {
        char *a = json_dumps(spec_of(got), JSON_SORT_KEYS),
             *b = json_dumps(spec_of(want), JSON_SORT_KEYS);
        fail_msg("the double's spec\n%s\nthe recorded server's\n%s", a, b);
    }
    assert_string_equal(json_string_value(json_object_get(json_object_get(got, "status"), "phase")),
                        "Pending");
    json_decref(got);
    json_decref(want);
    gp_kube_client_free(c);
}

static long req(struct gp_kube_client *c, const char *method, const char *path, const char *body,
                const char *type, char *text, size_t n)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, method, path, body, type, &r, &d), GP_OK);
    snprintf(text, n, "%.*s", (int)r.len, r.body ? r.body : "");
    long status = r.status;
    gp_kube_response_free(&r);
    return status;
}

static void test_gated_binding(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    char t[2048];
    json_t *pod = create(c, POD("gated", ",\"schedulingGates\":[{\"name\":\"example.com/q\"}]"));
    /* PodScheduled False, SchedulingGated, as the real server's
     * applySchedulingGatedCondition writes it at create */
    json_t *cond = json_array_get(json_object_get(json_object_get(pod, "status"), "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(cond, "type")), "PodScheduled");
    assert_string_equal(json_string_value(json_object_get(cond, "status")), "False");
    assert_string_equal(json_string_value(json_object_get(cond, "reason")), "SchedulingGated");
    assert_string_equal(json_string_value(json_object_get(cond, "message")),
                        "Scheduling is blocked due to non-empty scheduling gates");
    json_decref(pod);
    pod = create(c, POD("open", "")); /* no gates: no condition */
    assert_null(json_object_get(json_object_get(pod, "status"), "conditions"));
    json_decref(pod);
    const char *bind = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
                       "\"gated\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                       "\"name\":\"n1\"}}";
    const char *path = "/api/v1/namespaces/default/pods/gated";
    char bpath[128];
    snprintf(bpath, sizeof bpath, "%s/binding", path);
    assert_int_equal(req(c, "POST", bpath, bind, "application/json", t, sizeof t), 409);
    assert_non_null(strstr(t, "pod gated has non-empty .spec.schedulingGates"));
    assert_int_equal(req(c, "GET", path, NULL, NULL, t, sizeof t), 200);
    assert_null(strstr(t, "\"nodeName\""));
    /* the gates removed (the one change of a pod's spec that may remove a field) */
    assert_int_equal(req(c, "PATCH", path, "{\"spec\":{\"schedulingGates\":null}}",
                         "application/merge-patch+json", t, sizeof t),
                     200);
    assert_non_null(strstr(t, "\"SchedulingGated\"")); /* an update keeps the status */
    assert_int_equal(req(c, "POST", bpath, bind, "application/json", t, sizeof t), 201);
    assert_int_equal(req(c, "GET", path, NULL, NULL, t, sizeof t), 200);
    assert_null(strstr(t, "\"SchedulingGated\"")); /* the Binding's PodScheduled True */
    gp_kube_client_free(c);
}

static void test_spec_fixed(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    char t[2048];
    json_decref(create(c, POD("fixed", "")));
    const char *path = "/api/v1/namespaces/default/pods/fixed",
               *mp = "application/merge-patch+json";
    assert_int_equal(req(c, "PATCH", path, "{\"spec\":{\"nodeName\":\"n9\"}}", mp, t, sizeof t),
                     422);
    assert_non_null(strstr(t, "Pod \\\"fixed\\\" is invalid: spec: Forbidden: pod updates may "
                              "not change fields other than"));
    assert_int_equal(
        req(c, "PATCH", path, "{\"spec\":{\"schedulerName\":\"other\"}}", mp, t, sizeof t), 422);
    assert_int_equal(req(c, "PATCH", path, "{\"spec\":{\"tolerations\":[]}}", mp, t, sizeof t),
                     422);
    assert_int_equal(req(c, "GET", path, NULL, NULL, t, sizeof t), 200);
    assert_null(strstr(t, "\"nodeName\""));
    assert_non_null(strstr(t, "\"default-scheduler\""));
    /* what may change does */
    assert_int_equal(req(c, "PATCH", path,
                         "{\"metadata\":{\"annotations\":{\"a\":\"b\"}},"
                         "\"spec\":{\"activeDeadlineSeconds\":60}}",
                         mp, t, sizeof t),
                     200);
    assert_int_equal(req(c, "PATCH", path,
                         "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x:2\"}]}}",
                         "application/strategic-merge-patch+json", t, sizeof t),
                     200);
    assert_non_null(strstr(t, "\"x:2\""));
    gp_kube_client_free(c);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest
        tests[] = {cmocka_unit_test_setup_teardown(test_own_kept, kd_start, kd_stop),
                   cmocka_unit_test_setup_teardown(test_gated_binding, kd_start, kd_stop),
                   cmocka_unit_test_setup_teardown(test_spec_fixed, kd_start, kd_stop)},
        shared[] = {cmocka_unit_test_setup_teardown(test_as_recorded, kd_start, kd_stop)};
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
