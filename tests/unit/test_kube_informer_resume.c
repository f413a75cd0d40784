/* test_kube_informer_resume.c - a dropped watch resumes from the last
 * resourceVersion the informer saw (src/kube/informer.c; issue 14 item 2:
 * "a dropped connection resumes from the last resourceVersion"), against
 * the API server double with its bookmarks turned off, so that the events
 * alone move the version: a watch cut after one event leaves the informer
 * at that event's resourceVersion (the version the next watch asks for:
 * informer.c's watch path), and that watch gets only what came after,
 * without a re-list.
 * test_kube_informer's resume passes when the version is taken from
 * bookmarks alone: its bookmarks every 100 ms move it, and the store's
 * same-version check drops the event sent again. This test does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/informer.h"
#include "kube_double.h"

struct log {
    char text[1024];
    size_t len;
};

static void on_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    (void)old;
    struct log *l = ctx;
    const char *name = gp_kube_meta(obj, "name");
    int n = snprintf(l->text + l->len, sizeof l->text - l->len, "%s %s\n",
                     gp_kube_event_type_name(type), name ? name : "?");
    assert_true(n > 0 && (size_t)n < sizeof l->text - l->len);
    l->len += (size_t)n;
}

static const char *take(struct log *l)
{
    static char out[1024];
    memcpy(out, l->text, l->len + 1);
    l->len = 0;
    l->text[0] = '\0';
    return out;
}

static void pod(struct gp_kube_client *c, const char *name)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"x\"}]}}",
             name);
    kd_call(c, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

/* The pod's resourceVersion as the server holds it, into out. */
static void rv_of(struct gp_kube_client *c, const char *name, char *out, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", path, NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 200);
    json_t *p = json_loadb(r.body, r.len, 0, NULL);
    const char *rv = gp_kube_meta(p, "resourceVersion");
    assert_non_null(rv);
    snprintf(out, n, "%s", rv);
    json_decref(p);
    gp_kube_response_free(&r);
}

static void test_resume_from_event(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = kd_client();
    kd_call(admin, "POST", "/_control/bookmark_ms", "{\"ms\":0}", 200); /* events alone */
    struct log log = {.len = 0};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    pod(admin, "p1");
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 0, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    assert_string_equal(take(&log), "ADDED p1\n");
    /* the watch cut after its first event */
    kd_call(admin, "POST", "/_control/fault", "{\"drop_after\":1,\"count\":1}", 200);
    pod(admin, "p2");
    pod(admin, "p3");
    char rv2[64];
    rv_of(admin, "p2", rv2, sizeof rv2);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_EIO);
    assert_string_equal(take(&log), "ADDED p2\n");
    assert_string_equal(gp_kube_informer_rv(inf), rv2); /* p2's, the last seen */
    /* resumed from there (the next watch asks for gp_kube_informer_rv): p3 alone */
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(take(&log), "ADDED p3\n");
    assert_int_equal(gp_kube_informer_stats(inf).drops, 1);
    assert_int_equal(gp_kube_informer_stats(inf).lists, 1); /* resumed, not listed again */
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_resume_from_event, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
