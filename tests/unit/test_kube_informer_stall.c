/* test_kube_informer_stall.c - watch liveness (src/kube/client.c): a watch
 * whose connection goes silent (a peer gone without a FIN or RST, a NAT
 * that dropped the flow: the double's stall fault keeps the stream open
 * and sends nothing, no event and no bookmark) ends after the client's
 * watch_idle_s as a dropped connection (GP_EIO), long before the watch's
 * own timeout, and the informer resumes from the last resourceVersion it
 * saw: the events after it come, nothing twice, no re-list. A quiet watch
 * whose bookmarks keep coming (the double's every 100 ms, as
 * kube-apiserver's about every minute) is not cut. And every connection
 * the client opens, a request's kept one (http1.c) and a watch's, has TCP
 * keepalive on with client-go's 30 s (its dialer's KeepAlive). */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>

#include "kube/informer.h"
#include "kube_double.h"
#include "kube_changes.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct log {
    struct kc_log kc;
    int keepalive_idle_s; /* a watch's connection's TCP_KEEPIDLE, read during a change (-1: none) */
};

static int keepalive_idle_s(void);

static void on_change(enum gp_kube_event_type type, const json_t *obj, const json_t *old, void *ctx)
{
    struct log *l = ctx;
    kc_add(&l->kc, type, obj, old);
    l->keepalive_idle_s = keepalive_idle_s(); /* the watch's connection is open now */
}

/* A client whose watches end after idle_s without a byte (0: never). */
static struct gp_kube_client *idle_client(double idle_s)
{
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.qps = 0;
    o.request_timeout_s = 5;
    o.watch_idle_s = idle_s;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    return c;
}

/* The TCP_KEEPIDLE of this process' connections to the double (the
 * smallest; 0: one without SO_KEEPALIVE; -1: no connection found). */
static int keepalive_idle_s(void)
{
    unsigned port = 0;
    sscanf(strrchr(kd_server, ':') + 1, "%u", &port);
    int found = -1;
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_in peer;
        socklen_t pl = sizeof peer;
        int on = 0, idle = 0, intvl = 0;
        socklen_t ol = sizeof on;
        if (getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 || peer.sin_family != AF_INET ||
            ntohs(peer.sin_port) != port)
            continue;
        if (getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, &ol) != 0 || !on)
            return 0;
        getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, &ol);
        getsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, &ol);
        if (intvl != idle)
            return 0;
        if (found < 0 || idle < found)
            found = idle;
    }
    return found;
}

/* A watch stalled after its first event: noticed within the idle limit
 * (1 s, ten of the double's bookmark periods), GP_EIO as a drop; the next
 * watch resumes from that event's resourceVersion and delivers what came
 * after. Without the idle limit the first watch runs to its 20 s timeout
 * and the pods made meanwhile wait that long. */
static void test_stalled_watch(void **state)
{
    (void)state;
    struct gp_kube_client *admin = kd_client(), *c = idle_client(1.0);
    struct log log = {.kc = {.len = 0}};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    kc_pod(admin, "p1");
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 0, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    assert_string_equal(kc_take(&log.kc), "ADDED p1\n");
    kd_call(admin, "POST", "/_control/fault", "{\"stall_after\":1,\"count\":1}", 200);
    kc_pod(admin, "p2");
    double t0 = mono_s();
    enum gp_err err = gp_kube_informer_watch(inf, 20, &d);
    double took = mono_s() - t0;
    if (err != GP_EIO || took > 3)
        fail_msg("the stalled watch ended after %.1f s (%s: %s); the idle limit is 1 s", took,
                 gp_strerror(err), d.msg);
    print_message("the stalled watch ended after %.2f s: %s\n", took, d.msg);
    assert_non_null(strstr(d.msg, "nothing received for 1 s"));
    assert_string_equal(kc_take(&log.kc), "ADDED p2\n");
    assert_int_equal(log.keepalive_idle_s, 30); /* the watch's connection */
    kc_pod(admin, "p3");
    /* resumed from p2's version: p3 alone, no re-list */
    assert_int_equal(gp_kube_informer_watch(inf, 1, &d), GP_OK);
    assert_string_equal(kc_take(&log.kc), "ADDED p3\n");
    struct gp_kube_informer_stats st = gp_kube_informer_stats(inf);
    assert_int_equal(st.drops, 1);
    assert_int_equal(st.lists, 1);
    assert_int_equal(st.relists_410, 0);
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
    gp_kube_client_free(admin);
}

/* A watch with no event for 3 s but the double's bookmarks every 100 ms
 * is not cut by a 1 s idle limit: it runs to its timeout (GP_OK), no drop. */
static void test_quiet_watch_kept(void **state)
{
    (void)state;
    struct gp_kube_client *c = idle_client(1.0);
    struct log log = {.kc = {.len = 0}};
    struct gp_kube_informer *inf;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_new(c, "/api/v1/pods", 0, on_change, &log, &inf, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(inf, &d), GP_OK);
    double t0 = mono_s();
    assert_int_equal(gp_kube_informer_watch(inf, 3, &d), GP_OK);
    assert_true(mono_s() - t0 >= 2.5);
    struct gp_kube_informer_stats st = gp_kube_informer_stats(inf);
    assert_int_equal(st.drops, 0);
    assert_true(st.bookmarks >= 10);
    gp_kube_informer_free(inf);
    gp_kube_client_free(c);
}

/* A request's kept connection (http1.c, opened by libcurl from the
 * client's handle) has TCP keepalive at 30 s; with tcp_keepalive_s 0, none. */
static void test_request_keepalive(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "GET", "/api/v1/nodes", NULL, 200);
    assert_int_equal(keepalive_idle_s(), 30);
    gp_kube_client_free(c);
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.qps = 0;
    o.tcp_keepalive_s = 0;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    kd_call(c, "GET", "/api/v1/nodes", NULL, 200);
    assert_int_equal(keepalive_idle_s(), 0);
    gp_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stalled_watch, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_quiet_watch_kept, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_request_keepalive, kd_start, kd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
