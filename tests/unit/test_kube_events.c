/* test_kube_events.c - the Event sender (kube/events.h) against the API
 * server double: Events sent in the order posted; at most cap waiting
 * (client-go's DropIfChannelFull), the rest dropped and counted; a stop
 * bounded in time even when the server holds the request in flight; and a
 * scheduling cycle that makes an Event does not wait for its answer (the
 * Event arrives afterwards, its words those of an inline one). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube/events.h"
#include "kube_double.h"
#include "kube_world.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define EV_PATH "/apis/events.k8s.io/v1/namespaces/default/events"

/* An Event's body about pod `pod`, its name `name`. */
static char *event_body(const char *name, const char *pod)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
             "\"%s\",\"namespace\":\"default\"},\"eventTime\":\"2026-12-06T00:00:00.000000Z\","
             "\"reportingController\":\"gpuplane\",\"reportingInstance\":\"t\",\"action\":"
             "\"Scheduling\",\"reason\":\"Test\",\"note\":\"%s\",\"type\":\"Normal\","
             "\"regarding\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"%s\","
             "\"namespace\":\"default\"}}",
             name, name, pod);
    return strdup(b);
}

/* POSTs to the Events' path the double has received so far. */
static int event_posts(struct world *w)
{
    json_t *l = w_get(w, "/_control/requests");
    size_t i;
    json_t *r;
    int n = 0;
    json_array_foreach(json_object_get(l, "requests"), i, r)
    {
        const char *m = json_string_value(json_object_get(r, "method"));
        const char *p = json_string_value(json_object_get(r, "path"));
        n += m && p && strcmp(m, "POST") == 0 && strcmp(p, EV_PATH) == 0;
    }
    json_decref(l);
    return n;
}

static void wait_posts(struct world *w, int n)
{
    double end = mono_s() + 10;
    while (event_posts(w) < n && mono_s() < end) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(event_posts(w) >= n);
}

/* A world, a client of its own and a sender on it (cap 0: the default). */
struct rig {
    struct world w;
    struct gp_kube_client *c;
    struct gp_kube_events *q;
};

static void rig_open(struct rig *r, bool sched, size_t cap)
{
    w_open(&r->w, sched);
    r->c = kd_client();
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_events_start(r->c, cap, &r->q, &d), GP_OK);
}

static void rig_close(struct rig *r)
{
    gp_kube_events_free(r->q);
    gp_kube_client_free(r->c);
    kd_call(r->w.admin, "POST", "/_control/clear", NULL, 200);
    w_close(&r->w);
}

static void test_order_and_cap(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, false, 4);
    struct world *w = &r.w;
    struct gp_kube_events *q = r.q;
    /* the first Event held 400 ms by the server: four wait behind it, the
     * next three find the queue full */
    kd_call(w->admin, "POST", "/_control/fault",
            "{\"delay_ms\":400,\"count\":1,\"match\":\"/events\"}", 200);
    assert_true(gp_kube_events_post(q, EV_PATH, event_body("e0", "p")));
    wait_posts(w, 1); /* in flight */
    char name[8];
    for (int i = 1; i < 8; i++) {
        snprintf(name, sizeof name, "e%d", i);
        assert_int_equal(gp_kube_events_post(q, EV_PATH, event_body(name, "p")), i <= 4);
    }
    assert_true(gp_kube_events_flush(q, 10));
    struct gp_kube_events_stats st = gp_kube_events_stats(q);
    assert_int_equal(st.queued, 5);
    assert_int_equal(st.sent, 5);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.dropped, 3);
    /* created in the order posted: e0..e4, each once */
    json_t *l = w_get(w, EV_PATH);
    json_t *items = json_object_get(l, "items");
    assert_int_equal(json_array_size(items), 5);
    long last_rv = 0;
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "e%d", i);
        bool found = false;
        size_t k;
        json_t *e;
        json_array_foreach(items, k, e)
        {
            json_t *m = json_object_get(e, "metadata");
            if (strcmp(json_string_value(json_object_get(m, "name")), name) != 0)
                continue;
            long rv = atol(json_string_value(json_object_get(m, "resourceVersion")));
            assert_true(rv > last_rv);
            last_rv = rv;
            found = true;
        }
        assert_true(found);
    }
    json_decref(l);
    /* an Event that the server refuses is counted failed */
    kd_call(w->admin, "POST", "/_control/fault",
            "{\"status\":403,\"count\":1,\"match\":\"/events\"}", 200);
    assert_true(gp_kube_events_post(q, EV_PATH, event_body("e8", "p")));
    assert_true(gp_kube_events_flush(q, 10));
    assert_int_equal(gp_kube_events_stats(q).failed, 1);
    gp_kube_events_stop(q, 1);
    assert_false(gp_kube_events_post(q, EV_PATH, event_body("late", "p"))); /* stopped */
    assert_int_equal(gp_kube_events_stats(q).dropped, 4);
    rig_close(&r);
}

static void test_stop_bounded(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, false, 0);
    struct world *w = &r.w;
    struct gp_kube_events *q = r.q;
    /* the server holds the first Event 4 s: a stop with 0.3 s to drain
     * gives up on it and drops the two behind it */
    kd_call(w->admin, "POST", "/_control/fault",
            "{\"delay_ms\":4000,\"count\":1,\"match\":\"/events\"}", 200);
    assert_true(gp_kube_events_post(q, EV_PATH, event_body("s0", "p")));
    wait_posts(w, 1);
    assert_true(gp_kube_events_post(q, EV_PATH, event_body("s1", "p")));
    assert_true(gp_kube_events_post(q, EV_PATH, event_body("s2", "p")));
    double t0 = mono_s();
    gp_kube_events_stop(q, 0.3);
    double took = mono_s() - t0;
    assert_true(took < 2.0);
    struct gp_kube_events_stats st = gp_kube_events_stats(q);
    assert_int_equal(st.sent, 0);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.dropped, 2);
    rig_close(&r);
}

static void test_cycle_does_not_wait(void **state)
{
    (void)state;
    struct rig r;
    rig_open(&r, true, 0);
    struct world *w = &r.w;
    struct gp_kube_events *q = r.q;
    gp_kube_sched_set_events(w->s, q);
    w_node(w, "n1", 2);
    w_pod(w, "big", 4); /* fits nowhere: its status written, its Event made */
    w_sync(w);
    /* every Event held 1.5 s by the server */
    kd_call(w->admin, "POST", "/_control/fault",
            "{\"delay_ms\":1500,\"count\":10,\"match\":\"/namespaces/default/events\"}", 200);
    double t0 = mono_s();
    assert_int_equal(w_cycle(w), 0);
    double took = mono_s() - t0;
    assert_true(took < 1.0); /* inline, the cycle would have waited 1.5 s */
    assert_string_equal(w_events(w, "FailedScheduling", "big"), ""); /* not there yet */
    assert_true(gp_kube_events_flush(q, 10));
    assert_string_equal(w_events(w, "FailedScheduling", "big"),
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
                        " preemption: 0/1 nodes are available: 1 No preemption victims found"
                        " for incoming pod..");
    struct gp_kube_sched_stats st = gp_kube_sched_stats(w->s);
    assert_int_equal(st.events, 1);
    assert_int_equal(st.events_lost, 0);
    gp_kube_events_stop(q, 1);
    gp_kube_sched_set_events(w->s, NULL);
    rig_close(&r);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_order_and_cap, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_stop_bounded, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_cycle_does_not_wait, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
