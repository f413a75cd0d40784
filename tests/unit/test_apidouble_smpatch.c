/* test_apidouble_smpatch.c - the API double's strategic merge patch
 * (tests/apidouble/smpatch.c) as kube-apiserver applies one: a pod's
 * status.conditions merged on "type" (a PodScheduled condition patched in
 * beside the kubelet's Initialized, then changed in place, never twice),
 * an element with "$patch": "delete" removed, metadata.finalizers merged
 * as a set and ownerReferences on uid, a node's status.addresses on type,
 * while a list without a merge key (a node's taints) is replaced, and an RFC 7386 merge patch of
 * the same conditions replaces the list (the difference the double ignored before); a directive it
 * does not implement and an element without its merge key are 400s that change nothing. */
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

#define POD "/api/v1/namespaces/default/pods/p"
#define SMP "application/strategic-merge-patch+json"
#define MP  "application/merge-patch+json"

static long patch(struct gp_kube_client *c, const char *path, const char *ct, const char *body)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "PATCH", path, body, ct, &r, &d), GP_OK);
    long st = r.status;
    gp_kube_response_free(&r);
    return st;
}

static json_t *get_pod(struct gp_kube_client *c)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", POD, NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 200);
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    assert_non_null(doc);
    return doc;
}

/* The pod's conditions as "type=status" joined by spaces, in order. */
static void conditions(struct gp_kube_client *c, char *out, size_t n)
{
    json_t *p = get_pod(c);
    size_t i;
    json_t *e;
    out[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(p, "status"), "conditions"), i, e)
    {
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s=%s", len ? " " : "",
                 json_string_value(json_object_get(e, "type")),
                 json_string_value(json_object_get(e, "status")));
    }
    json_decref(p);
}

static void test_conditions_by_type(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
            "\"x\"}]}}",
            201);
    char got[256];
    /* the kubelet's condition first, then the scheduler's beside it */
    assert_int_equal(patch(c, POD "/status", SMP,
                           "{\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"status\":"
                           "\"True\"}]}}"),
                     200);
    assert_int_equal(patch(c, POD "/status", SMP,
                           "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
                           "\"False\",\"reason\":\"Unschedulable\"}]}}"),
                     200);
    conditions(c, got, sizeof got);
    assert_string_equal(got, "Initialized=True PodScheduled=False");
    /* the same type again: changed in place, not appended */
    assert_int_equal(patch(c, POD "/status", SMP,
                           "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
                           "\"True\"}]}}"),
                     200);
    conditions(c, got, sizeof got);
    assert_string_equal(got, "Initialized=True PodScheduled=True");
    json_t *p = get_pod(c);
    json_t *ps = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 1);
    assert_string_equal(json_string_value(json_object_get(ps, "reason")), "Unschedulable");
    json_decref(p); /* the element merged: a field the patch left out kept */
    /* "$patch": "delete" removes the element with that key */
    assert_int_equal(patch(c, POD "/status", SMP,
                           "{\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"$patch\":"
                           "\"delete\"}],\"$setElementOrder/conditions\":[{\"type\":"
                           "\"PodScheduled\"}]}}"),
                     200);
    conditions(c, got, sizeof got);
    assert_string_equal(got, "PodScheduled=True");
    /* an RFC 7386 merge patch replaces the list */
    assert_int_equal(patch(c, POD "/status", SMP,
                           "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
                           "\"False\"}]}}"),
                     200);
    assert_int_equal(patch(c, POD "/status", MP,
                           "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
                           "\"True\"}]}}"),
                     200);
    conditions(c, got, sizeof got);
    assert_string_equal(got, "Ready=True");
    /* refused, nothing changed */
    assert_int_equal(
        patch(c, POD "/status", SMP, "{\"status\":{\"conditions\":[{\"status\":\"True\"}]}}"), 400);
    assert_int_equal(patch(c, POD "/status", SMP, "{\"status\":{\"$retainKeys\":[\"phase\"]}}"),
                     400);
    conditions(c, got, sizeof got);
    assert_string_equal(got, "Ready=True");
    gp_kube_client_free(c);
}

/* The values of key in the list at path (two levels) of the object at url. */
static void values(struct gp_kube_client *c, const char *url, const char *part, const char *field,
                   const char *key, char *out, size_t n)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", url, NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 200);
    json_t *o = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    assert_non_null(o);
    size_t i;
    json_t *e;
    out[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(o, part), field), i, e)
    {
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? " " : "",
                 json_string_value(key ? json_object_get(e, key) : e));
    }
    json_decref(o);
}

static void test_metadata_and_lists(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"p\",\"finalizers\":[\"a/x\"],\"ownerReferences\":[{"
            "\"apiVersion\":\"v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs1\",\"uid\":\"u1\"}]},"
            "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
            201);
    assert_int_equal(
        patch(c, POD, SMP,
              "{\"metadata\":{\"finalizers\":[\"b/y\",\"a/x\"],\"ownerReferences\":[{"
              "\"apiVersion\":\"v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs2\",\"uid\":\"u2\"}]}}"),
        200);
    char got[256];
    values(c, POD, "metadata", "finalizers", NULL, got, sizeof got);
    assert_string_equal(got, "a/x b/y");
    values(c, POD, "metadata", "ownerReferences", "name", got, sizeof got);
    assert_string_equal(got, "rs1 rs2");
    /* a Node: taints have no patchMergeKey (replaced), addresses merge on type */
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"t1\",\"effect\":"
            "\"NoSchedule\"}]}}",
            201);
    assert_int_equal(patch(c, "/api/v1/nodes/n/status", SMP,
                           "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":"
                           "\"10.0.0.1\"}]}}"),
                     200);
    assert_int_equal(patch(c, "/api/v1/nodes/n/status", SMP,
                           "{\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":"
                           "\"n\"}]}}"),
                     200);
    values(c, "/api/v1/nodes/n", "status", "addresses", "type", got, sizeof got);
    assert_string_equal(got, "InternalIP Hostname");
    assert_int_equal(patch(c, "/api/v1/nodes/n", SMP,
                           "{\"spec\":{\"taints\":[{\"key\":\"t2\",\"effect\":\"NoSchedule\"}]}}"),
                     200);
    values(c, "/api/v1/nodes/n", "spec", "taints", "key", got, sizeof got);
    assert_string_equal(got, "t2");
    gp_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conditions_by_type, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_metadata_and_lists, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
