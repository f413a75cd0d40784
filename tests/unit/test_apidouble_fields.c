/* test_apidouble_fields.c - field selectors on the API double's lists and
 * watches (tests/apidouble/fields.c), as kube-apiserver v1.28 applies them:
 * the pod fields the node agent (spec.nodeName) and a scheduler
 * (spec.schedulerName, "default-scheduler" when unset) select on, `=`,
 * `==` and `!=`, terms joined by commas; a node's metadata.name and
 * spec.unschedulable; a watch sees an object come into the selector's view
 * as ADDED and leave it as DELETED (the version before, at the event's
 * resourceVersion); a field a kind does not offer is a 400 BadRequest
 * "field label not supported: F", a selector without an operator a 400
 * too. And a name in the path that is not UTF-8 (%FF) answered by a 404
 * whose Status writes the byte as U+FFFD, as Go's encoding/json does (the
 * double fell over on it before). */
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

/* The answer's body as JSON, after checking its status. */
static json_t *get_json(struct gp_kube_client *c, const char *path, long status)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", path, NULL, NULL, &r, &d), GP_OK);
    if (r.status != status)
        fail_msg("GET %s: HTTP %ld: %s", path, r.status, r.body);
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    assert_non_null(doc);
    return doc;
}

/* The names of a list's items, space-separated, in order. */
static void names_of(struct gp_kube_client *c, const char *path, char *out, size_t n)
{
    json_t *doc = get_json(c, path, 200);
    size_t i;
    json_t *it;
    out[0] = '\0';
    json_array_foreach(json_object_get(doc, "items"), i, it)
    {
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? " " : "",
                 json_string_value(json_object_get(json_object_get(it, "metadata"), "name")));
    }
    json_decref(doc);
}

static void pod(struct gp_kube_client *c, const char *name, const char *sched)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s\"containers\":[{\"name\":\"c\","
             "\"image\":\"x\"}]}}",
             name, sched ? "\"schedulerName\":\"" : "", sched ? sched : "", sched ? "\"," : "");
    kd_call(c, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static void bind(struct gp_kube_client *c, const char *name, const char *node)
{
    char path[256], b[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/binding", name);
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}",
             name, node);
    kd_call(c, "POST", path, b, 201);
}

static long current_rv(struct gp_kube_client *c)
{
    json_t *st = get_json(c, "/_control/stats", 200);
    long rv = (long)json_integer_value(json_object_get(st, "resourceVersion"));
    json_decref(st);
    return rv;
}

static void test_lists(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    pod(c, "a1", "gpuplane");
    pod(c, "a2", "gpuplane");
    pod(c, "a3", NULL); /* the default scheduler's */
    bind(c, "a1", "n1");
    bind(c, "a3", "n2");
    char got[256];
    names_of(c, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", got, sizeof got);
    assert_string_equal(got, "a1");
    names_of(c, "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3D%3Dn2", got,
             sizeof got);
    assert_string_equal(got, "a3");
    /* pending pods of one scheduler: no node, that scheduler */
    names_of(c, "/api/v1/pods?fieldSelector=spec.nodeName%3D%2Cspec.schedulerName%3Dgpuplane", got,
             sizeof got);
    assert_string_equal(got, "a2");
    names_of(c, "/api/v1/pods?fieldSelector=spec.schedulerName%3Ddefault-scheduler", got,
             sizeof got);
    assert_string_equal(got, "a3");
    names_of(c, "/api/v1/pods?fieldSelector=spec.nodeName!%3Dn1", got, sizeof got);
    assert_string_equal(got, "a2 a3");
    names_of(c, "/api/v1/pods?fieldSelector=metadata.name%3Da2", got, sizeof got);
    assert_string_equal(got, "a2");
    names_of(c, "/api/v1/pods?fieldSelector=status.phase%3DPending%2Cmetadata.namespace%3Ddefault",
             got, sizeof got);
    assert_string_equal(got, "a1 a2 a3");
    names_of(c, "/api/v1/pods?fieldSelector=", got, sizeof got);
    assert_string_equal(got, "a1 a2 a3");
    /* paginated: the pages hold only what the selector picks */
    json_t *page = get_json(c, "/api/v1/pods?fieldSelector=spec.nodeName!%3Dn2&limit=1", 200);
    assert_int_equal(json_array_size(json_object_get(page, "items")), 1);
    assert_int_equal(json_integer_value(
                         json_object_get(json_object_get(page, "metadata"), "remainingItemCount")),
                     1); /* a1 and a2 are not on n2 */
    json_decref(page);

    kd_call(c, "POST", "/api/v1/nodes", "{\"metadata\":{\"name\":\"n1\"},\"spec\":{}}", 201);
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"metadata\":{\"name\":\"n2\"},\"spec\":{\"unschedulable\":true}}", 201);
    names_of(c, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue", got, sizeof got);
    assert_string_equal(got, "n2");
    names_of(c, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse", got, sizeof got);
    assert_string_equal(got, "n1");
    names_of(c, "/api/v1/nodes?fieldSelector=metadata.name%3Dn1", got, sizeof got);
    assert_string_equal(got, "n1");
    gp_kube_client_free(c);
}

static void bad(struct gp_kube_client *c, const char *path, const char *message)
{
    json_t *st = get_json(c, path, 400);
    assert_string_equal(json_string_value(json_object_get(st, "kind")), "Status");
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "BadRequest");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 400);
    assert_string_equal(json_string_value(json_object_get(st, "message")), message);
    json_decref(st);
}

static void test_refused(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    bad(c, "/api/v1/pods?fieldSelector=spec.foo%3Dx", "field label not supported: spec.foo");
    bad(c, "/api/v1/pods?watch=1&fieldSelector=spec.containers%3Dx",
        "field label not supported: spec.containers");
    /* a node has no spec.nodeName */
    bad(c, "/api/v1/nodes?fieldSelector=spec.nodeName%3Dn1",
        "field label not supported: spec.nodeName");
    bad(c, "/api/v1/pods?fieldSelector=nodeName",
        "invalid selector: 'nodeName'; can't understand 'nodeName'");
    bad(c, "/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3D1",
        "\"data.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
    gp_kube_client_free(c);
}

/* The watch's lines from rv until its timeoutSeconds ends it, each as
 * "TYPE:NAME:RV;" */
static void watch_seen(struct gp_kube_client *c, const char *sel, long rv, char *out, size_t n)
{
    char path[512];
    snprintf(path, sizeof path,
             "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=%ld&fieldSelector=%s", rv, sel);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", path, NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 200);
    out[0] = '\0';
    for (char *line = r.body, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        json_t *ev = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
        assert_non_null(ev);
        json_t *m = json_object_get(json_object_get(ev, "object"), "metadata");
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s:%s:%s;", json_string_value(json_object_get(ev, "type")),
                 json_string_value(json_object_get(m, "name")),
                 json_string_value(json_object_get(m, "resourceVersion")));
        json_decref(ev);
    }
    gp_kube_response_free(&r);
}

static void test_watch(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    pod(c, "w0", "gpuplane"); /* so that rv0 is not 0 (0 asks for the current state) */
    long rv0 = current_rv(c);
    pod(c, "w1", "gpuplane");
    pod(c, "w2", "gpuplane");
    bind(c, "w1", "n7"); /* into spec.nodeName=n7's view */
    bind(c, "w2", "n8");
    kd_call(c, "PATCH", "/api/v1/namespaces/default/pods/w1",
            "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", 200);
    long rv_patch = current_rv(c);
    kd_call(c, "DELETE", "/api/v1/namespaces/default/pods/w1?gracePeriodSeconds=0", NULL, 200);
    long rv_del = current_rv(c);
    char got[512], want[512];
    watch_seen(c, "spec.nodeName%3Dn7", rv0, got, sizeof got);
    snprintf(want, sizeof want, "ADDED:w1:%ld;MODIFIED:w1:%ld;DELETED:w1:%ld;", rv0 + 3, rv_patch,
             rv_del);
    assert_string_equal(got, want);

    /* leaving the view: the pod's phase goes from Pending, a DELETED event
     * with the version before at the new resourceVersion */
    long rv1 = current_rv(c);
    kd_call(c, "PATCH", "/api/v1/namespaces/default/pods/w2/status",
            "{\"status\":{\"phase\":\"Running\"}}", 200);
    long rv2 = current_rv(c);
    watch_seen(c, "status.phase%3DPending", rv1, got, sizeof got);
    snprintf(want, sizeof want, "DELETED:w2:%ld;", rv2);
    assert_string_equal(got, want);
    watch_seen(c, "status.phase%3DRunning", rv1, got, sizeof got);
    snprintf(want, sizeof want, "ADDED:w2:%ld;", rv2);
    assert_string_equal(got, want);
    /* without a resourceVersion: what the selector picks now, as ADDED */
    watch_seen(c, "spec.nodeName%3Dn8", 0, got, sizeof got);
    snprintf(want, sizeof want, "ADDED:w2:%ld;", rv2);
    assert_string_equal(got, want);
    gp_kube_client_free(c);
}

static void test_name_not_utf8(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    json_t *st = get_json(c, "/api/v1/namespaces/default/pods/%FF", 404);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "pods \"\xef\xbf\xbd\" not found");
    assert_string_equal(json_string_value(json_object_get(json_object_get(st, "details"), "name")),
                        "\xef\xbf\xbd");
    json_decref(st);
    assert_true(current_rv(c) >= 0); /* still serving */
    gp_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lists, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_refused, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_watch, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_name_not_utf8, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
