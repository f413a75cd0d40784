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
#include "kube_changes.h"

static void on_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    kc_add(ctx, type, obj, old);
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
    struct kc_log log = {.len = 0};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    kc_pod(admin, "p1");
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 0, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    assert_string_equal(kc_take(&log), "ADDED p1\n");
    /* the watch cut after its first event */
    kd_call(admin, "POST", "/_control/fault", "{\"drop_after\":1,\"count\":1}", 200);
    kc_pod(admin, "p2");
    kc_pod(admin, "p3");
    char rv2[64];
    rv_of(admin, "p2", rv2, sizeof rv2);
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_EIO);
    assert_string_equal(kc_take(&log), "ADDED p2\n");
    assert_string_equal(gp_kube_informer_rv(inf), rv2); /* p2's, the last seen */
    /* resumed from there (the next watch asks for gp_kube_informer_rv): p3 alone */
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(kc_take(&log), "ADDED p3\n");
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
