/* test_kube_limiter.c - the client-side rate limit shared as kube-scheduler
 * shares it (kube/retry.h gp_kube_limiter, kube/run.c limits_make), against
 * the API server double: several clients, each on its own thread, on one
 * limiter send together at most burst + qps * t requests in t seconds
 * (with a bucket each they send several times that), and a whole
 * `gpuplane schedule` run (its informers' lists, its writes, its binders)
 * keeps --qps/--burst together, the requests counted by the double's log;
 * watches are not rate limited (client-go's Request.Watch) and not counted. */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"
#include "kube/retry.h"
#include "kube/run.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define QPS      20.0
#define BURST    5.0
#define WINDOW_S 1.0
#define NCLIENTS 4

struct sender {
    struct gp_kube_client *c;
    double until_s; /* requests answered before this are counted */
    unsigned in_window, sent;
    enum gp_err err;
};

/* GETs as fast as the limiter lets, until the window ends. */
static void *send_main(void *arg)
{
    struct sender *s = arg;
    while (mono_s() < s->until_s) {
        struct gp_kube_response r;
        struct gp_diag d = {""};
        s->err = gp_kube_request(s->c, "GET", "/api/v1/nodes", NULL, NULL, &r, &d);
        if (s->err != GP_OK)
            return NULL;
        gp_kube_response_free(&r);
        s->sent++;
        if (mono_s() <= s->until_s)
            s->in_window++;
    }
    return NULL;
}

/* NCLIENTS clients, on `limiter` (NULL: a bucket each), sending for
 * WINDOW_S: the requests answered within it, all of them sent (the
 * double's count) and how long until the last thread stopped. */
static void send_together(struct gp_kube_limiter *limiter, double t0, unsigned *in_window,
                          long *sent, double *elapsed_s)
{
    struct gp_kube_config cfg = {.server = kd_server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.qps = QPS;
    o.burst = BURST;
    o.limiter = limiter;
    struct sender s[NCLIENTS];
    pthread_t th[NCLIENTS];
    struct gp_diag d = {""};
    struct gp_kube_client *admin = kd_client();
    struct world w = {.admin = admin};
    long before = w_stat(&w, "requests");
    for (size_t i = 0; i < NCLIENTS; i++) {
        s[i] = (struct sender){.until_s = t0 + WINDOW_S};
        assert_int_equal(gp_kube_client_new(&cfg, &o, &s[i].c, &d), GP_OK);
    }
    for (size_t i = 0; i < NCLIENTS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, send_main, &s[i]), 0);
    *in_window = 0;
    for (size_t i = 0; i < NCLIENTS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(s[i].err, GP_OK);
        *in_window += s[i].in_window;
        gp_kube_client_free(s[i].c);
    }
    *elapsed_s = mono_s() - t0;
    *sent = w_stat(&w, "requests") - before; /* (the double counts no /_control/ request) */
    gp_kube_client_free(admin);
}

/* On one limiter the clients together keep burst + qps * t, in the window
 * and up to the last request sent; the limit is reached (they are not
 * held back further). */
static void test_clients_share(void **state)
{
    (void)state;
    double t0 = mono_s();
    struct gp_kube_limiter *l = gp_kube_limiter_new(QPS, BURST, t0);
    assert_non_null(l);
    unsigned in_window;
    long sent;
    double elapsed;
    send_together(l, t0, &in_window, &sent, &elapsed);
    gp_kube_limiter_free(l);
    print_message("one limiter: %u answered in %.1f s, %ld sent in %.2f s\n", in_window, WINDOW_S,
                  sent, elapsed);
    double most = BURST + QPS * WINDOW_S + 1;
    if (in_window > most)
        fail_msg("%u requests answered in %.1f s on one limiter (qps %.0f, burst %.0f: at most "
                 "%.0f)",
                 in_window, WINDOW_S, QPS, BURST, most);
    if ((double)sent > BURST + QPS * elapsed + 1)
        fail_msg("%ld requests sent in %.2f s on one limiter", sent, elapsed);
    assert_true(in_window >= BURST + QPS * WINDOW_S * 0.7);
}

/* A bucket each (opts.limiter NULL, as before the limiter): together the
 * clients send about NCLIENTS times the limit. This is what the run did
 * with its informers', scheduling and Lease clients. */
static void test_clients_apart(void **state)
{
    (void)state;
    unsigned in_window;
    long sent;
    double elapsed;
    send_together(NULL, mono_s(), &in_window, &sent, &elapsed);
    print_message("a bucket each: %u answered in %.1f s\n", in_window, WINDOW_S);
    assert_true(in_window > 2 * (BURST + QPS * WINDOW_S));
}

struct run_thread {
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    struct gp_kube_run_result res;
    enum gp_err err;
    atomic_int done;
};

static void *run_main(void *arg)
{
    struct run_thread *rt = arg;
    struct gp_diag d = {""};
    rt->err = gp_kube_run(&rt->o, &rt->res, &d);
    if (rt->err != GP_OK)
        fprintf(stderr, "gp_kube_run: %s\n", d.msg);
    atomic_store(&rt->done, 1);
    return NULL;
}

/* The requests the double logged from entry `from` on that the run made:
 * not watches (not rate limited; the double logs no /_control/ call), and
 * not Events, which go on a bucket of their own (kube/run.c events_start),
 * counted in *events. */
static long run_requests(struct world *w, size_t from, size_t *total, long *events)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(w->admin, "GET", "/_control/requests", NULL, NULL, &r, &d),
                     GP_OK);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    json_t *a = json_object_get(j, "requests");
    assert_true(json_is_array(a));
    long n = 0;
    *total = json_array_size(a);
    *events = 0;
    for (size_t i = from; i < json_array_size(a); i++) {
        const char *p = json_string_value(json_object_get(json_array_get(a, i), "path"));
        if (p && strstr(p, "/events") && !strstr(p, "watch=true"))
            (*events)++;
        else if (p && !strstr(p, "watch=true"))
            n++;
    }
    json_decref(j);
    return n;
}

/* A run with --qps 4 --burst 2: its ten informers' lists, its status
 * writes and its eight binders' Bindings together keep burst + qps * t at
 * every time t of the run (the double's log read every 50 ms while it
 * runs), and its Events (a "Scheduled" one a bind), on their own bucket
 * of the same QPS and burst, keep it apart. Before the run shared one
 * limiter, each informer and the scheduling client had the whole limit
 * and the binders a share of it: the lists went out at once, 12 requests
 * at t = 0.05 s where 2 are allowed. */
static void test_run_keeps_limit(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 8);
    w_node(&w, "n2", 8);
    for (int i = 1; i <= 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        w_pod(&w, name, 1);
    }
    size_t from;
    long ev = 0, ev_worst_n = 0;
    run_requests(&w, 0, &from, &ev);
    static struct run_thread rt;
    memset(&rt, 0, sizeof rt);
    rt.cfg = (struct gp_kube_config){.server = kd_server, .ns = "default"};
    rt.o.cfg = &rt.cfg;
    gp_kube_client_opts_default(&rt.o.client);
    rt.o.client.qps = 4;
    rt.o.client.burst = 2;
    rt.o.client.backoff_base_s = 0.01;
    gp_kube_sched_opts_default(&rt.o.sched);
    gp_kube_lease_opts_default(&rt.o.lease);
    rt.o.max_s = 4;
    double t0 = mono_s(), worst = -1e9, worst_t = 0, ev_worst = -1e9, ev_worst_t = 0;
    long worst_n = 0, n = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_main, &rt), 0);
    for (bool last = false; !last;) {
        last = atomic_load(&rt.done);
        size_t end;
        n = run_requests(&w, from, &end, &ev);
        double t = mono_s() - t0; /* after the count was read: the bound at its largest */
        double over = (double)n - (rt.o.client.burst + rt.o.client.qps * t);
        if (over > worst) {
            worst = over;
            worst_t = t;
            worst_n = n;
        }
        double ev_over = (double)ev - (rt.o.client.burst + rt.o.client.qps * t);
        if (ev_over > ev_worst) {
            ev_worst = ev_over;
            ev_worst_t = t;
            ev_worst_n = ev;
        }
        if (!last)
            nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    pthread_join(th, NULL);
    assert_int_equal(rt.err, GP_OK);
    print_message("the run: %ld requests in %.2f s; the most over burst + qps t: %.1f (%ld at "
                  "%.2f s)\n",
                  n, rt.res.wall_s, worst, worst_n, worst_t);
    if (worst > 1)
        fail_msg("the run had sent %ld requests at %.2f s (qps %.0f, burst %.0f: at most %.1f)",
                 worst_n, worst_t, rt.o.client.qps, rt.o.client.burst,
                 rt.o.client.burst + rt.o.client.qps * worst_t);
    if (ev_worst > 1)
        fail_msg("the run had sent %ld Events at %.2f s (qps %.0f, burst %.0f: at most %.1f)",
                 ev_worst_n, ev_worst_t, rt.o.client.qps, rt.o.client.burst,
                 rt.o.client.burst + rt.o.client.qps * ev_worst_t);
    assert_true(rt.res.stats.binds > 0); /* synced and binding within the limit */
    assert_true(ev > 0);                 /* its Events sent, on their own bucket */
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_clients_share, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_clients_apart, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_run_keeps_limit, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
