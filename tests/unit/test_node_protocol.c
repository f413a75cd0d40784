/* test_node_protocol.c - which pod an Allocate serves (node/protocol.h,
 * docs/node.md "Which pod an Allocate serves"), against the API server
 * double: the candidates (bound here, asking the resource, not admitted
 * by the kubelet), a pod whose decision names another node refused, and
 * the mark "allocated" made on the version the look saw: a pod the
 * scheduler gave up on between the look and the mark (phase expired, its
 * GPUs free for another) is refused, a pod changed otherwise is marked
 * all the same (the review's R3, issue 16). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube_double.h"
#include "node/protocol.h"

#define NODE "n1"

/* A pod bound to NODE asking `gpus` nvidia.com/gpu, with gpuplane's
 * annotations when phase is set (gpuplane.io/node naming `on`). */
static void pod_bound(struct gp_kube_client *c, const char *name, unsigned gpus, const char *phase,
                      const char *on)
{
    char body[1024], ann[256] = "", path[160];
    if (phase)
        snprintf(ann, sizeof ann,
                 ",\"annotations\":{\"gpuplane.io/node\":\"%s\",\"gpuplane.io/gpus\":\"1\","
                 "\"gpuplane.io/phase\":\"%s\"}",
                 on, phase);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"%s},\"spec\":{\"containers\":[{\"name\":\"main\","
             "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, ann, gpus);
    kd_call(c, "POST", "/api/v1/namespaces/default/pods", body, 201);
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/binding", name);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
             "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"" NODE "\"}}",
             name);
    kd_call(c, "POST", path, body, 201);
}

static void pod_patch(struct gp_kube_client *c, const char *name, const char *sub, const char *body)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s%s", name, sub);
    kd_call(c, "PATCH", path, body, 200);
}

static void pod_delete(struct gp_kube_client *c, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s?gracePeriodSeconds=0", name);
    kd_call(c, "DELETE", path, NULL, 200);
}

static const char *phase_of(struct gp_kube_client *c, const char *name)
{
    static char out[64];
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", path, NULL, NULL, &r, &d), GP_OK);
    json_t *pod = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    const char *p = json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "annotations"), "gpuplane.io/phase"));
    snprintf(out, sizeof out, "%s", p ? p : "");
    json_decref(pod);
    return out;
}

/* An Allocate's look (1 device): its error and choice. */
static enum gp_err choose(struct gp_node_protocol *pr, struct gp_node_choice *ch, struct gp_diag *d)
{
    return gp_node_protocol_choice(pr, "nvidia.com/gpu", 1, true, ch, d);
}

static void test_candidates(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    struct gp_node_protocol pr;
    gp_node_protocol_init(&pr, c, NODE);
    pr.wait_s = 0.1;
    struct gp_node_choice ch;
    struct gp_diag d = {""};
    /* pods that are no Allocate's: asking no GPU, admitted (a container
     * status), ended; then ours allocating: it is the one */
    pod_bound(c, "cpu", 0, NULL, NULL);
    pod_bound(c, "started", 1, NULL, NULL);
    pod_patch(c, "started", "/status",
              "{\"status\":{\"containerStatuses\":[{\"name\":\"main\",\"image\":\"x\","
              "\"imageID\":\"\",\"ready\":false,\"restartCount\":0,"
              "\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]}}");
    pod_bound(c, "done", 1, NULL, NULL);
    pod_patch(c, "done", "/status", "{\"status\":{\"phase\":\"Succeeded\"}}");
    pod_bound(c, "mine", 1, "allocating", NODE);
    assert_int_equal(choose(&pr, &ch, &d), GP_OK);
    assert_true(ch.set);
    assert_string_equal(ch.pod, "default/mine");
    assert_int_equal(ch.n, 1);
    assert_int_equal(ch.index[0], 1);
    assert_int_equal(gp_node_protocol_done(&pr, "nvidia.com/gpu", &ch, NULL, true, &d), GP_OK);
    assert_string_equal(phase_of(c, "mine"), "allocated");
    /* a foreign pod asking 2 is not a 1-device Allocate's; alone with no
     * other candidate, nothing is served blind */
    pod_bound(c, "two", 2, NULL, NULL);
    assert_int_equal(choose(&pr, &ch, &d), GP_ESTATE);
    assert_false(ch.set);
    assert_non_null(strstr(d.msg, "no pod bound to node n1 awaits admission asking 1"));
    /* ours whose decision names another node: refused, with the reason */
    pod_bound(c, "stray", 1, "allocating", "n2");
    assert_int_equal(choose(&pr, &ch, &d), GP_ESTATE);
    assert_string_equal(d.msg, "pod default/stray (gpuplane.io/node: n2, gpuplane.io/phase: "
                               "allocating) is no longer the scheduler's decision on node n1: its "
                               "GPUs may be another pod's now; refusing (the pod fails with "
                               "UnexpectedAdmissionError and its controller makes a new one)");
    /* GetPreferredAllocation (no wait) names no preference, refuses nothing */
    unsigned long refused = pr.refused;
    assert_int_equal(gp_node_protocol_choice(&pr, "nvidia.com/gpu", 1, false, &ch, &d), GP_OK);
    assert_false(ch.set);
    assert_int_equal(pr.refused, refused);
    gp_node_protocol_destroy(&pr);
    gp_kube_client_free(c);
}

static void test_expired_meanwhile(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    struct gp_node_protocol pr;
    gp_node_protocol_init(&pr, c, NODE);
    pr.wait_s = 0.1;
    struct gp_node_choice ch;
    struct gp_diag d = {""};
    /* the look finds p allocating; the scheduler gives it up before the
     * mark: the mark is refused, and p stays expired */
    pod_bound(c, "p", 1, "allocating", NODE);
    assert_int_equal(choose(&pr, &ch, &d), GP_OK);
    assert_true(ch.set);
    pod_patch(c, "p", "", "{\"metadata\":{\"annotations\":{\"gpuplane.io/phase\":\"expired\"}}}");
    assert_int_equal(gp_node_protocol_done(&pr, "nvidia.com/gpu", &ch, NULL, true, &d), GP_ESTATE);
    assert_string_equal(d.msg, "pod default/p could not be marked allocated: it is "
                               "gpuplane.io/phase expired now, no longer allocating on node n1");
    assert_string_equal(phase_of(c, "p"), "expired");
    assert_int_equal(pr.refused, 1);
    pod_delete(c, "p");
    /* q changed otherwise between the look and the mark (a label): read
     * again, still allocating here, marked */
    pod_bound(c, "q", 1, "allocating", NODE);
    assert_int_equal(choose(&pr, &ch, &d), GP_OK);
    assert_string_equal(ch.pod, "default/q");
    pod_patch(c, "q", "", "{\"metadata\":{\"labels\":{\"team\":\"a\"}}}");
    assert_int_equal(gp_node_protocol_done(&pr, "nvidia.com/gpu", &ch, NULL, true, &d), GP_OK);
    assert_string_equal(phase_of(c, "q"), "allocated");
    assert_int_equal(pr.served, 1);
    gp_node_protocol_destroy(&pr);
    gp_kube_client_free(c);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_candidates, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_expired_meanwhile, kd_start, kd_stop),
    };
    (void)argc;
    (void)argv;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
