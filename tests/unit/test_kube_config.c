/* test_kube_config.c - gpuplane's configuration as a watched ConfigMap
 * (kube/config.h, kube/run.c): the reader's one line per bad key; and,
 * against the API server double, gpuplane schedule running while the
 * ConfigMap is edited: decisions follow a new policy (spread after
 * best-fit), a bad edit keeps the last good configuration (a log line,
 * a Warning Event on the ConfigMap, the metric), a deletion brings the
 * flags' values back, a schedulerName change is reported as needing a
 * restart and not applied, and a restart reads the ConfigMap (a bad one
 * is then the error, naming its key). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <unistd.h>

#include "kube_double.h"
#include "kube_world.h"
#include "kube/config.h"
#include "kube/rbac.h"
#include "kube/run.h"
#include "kube/sched_internal.h"
#include "util/sbuf.h"

#define CM_NS   "gpuplane-system"
#define CM_PATH "/api/v1/namespaces/" CM_NS "/configmaps"
#define CM_ITEM CM_PATH "/" GP_RBAC_CONFIGMAP_NAME

/* --- the reader ---------------------------------------------------------- */

static json_t *cm_of(const char *data)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"" GP_RBAC_CONFIGMAP_NAME "\",\"namespace\":\"" CM_NS
             "\"},\"data\":%s}",
             data);
    json_t *j = json_loads(b, 0, NULL);
    assert_non_null(j);
    return j;
}

static void test_parse(void **state)
{
    (void)state;
    struct gp_kube_sched_opts so;
    gp_kube_sched_opts_default(&so);
    so.policy = "fgd";
    struct gp_kube_conf base, c;
    gp_kube_conf_from_opts(&so, &base);
    struct gp_diag d = {""};
    /* none: the flags' */
    assert_int_equal(gp_kube_conf_parse(NULL, &base, &c, &d), GP_OK);
    assert_int_equal(gp_kube_conf_diff(&base, &c), 0);
    assert_string_equal(c.policy, "fgd");
    json_t *j = cm_of("{}");
    assert_int_equal(gp_kube_conf_parse(j, &base, &c, &d), GP_OK);
    assert_int_equal(gp_kube_conf_diff(&base, &c), 0);
    json_decref(j);
    /* every key */
    j = cm_of("{\"schedulerName\":\"gpu.a\",\"policy\":\"spread\",\"podInitialBackoffSeconds\":"
              "\"0.5\",\"podMaxBackoffSeconds\":\"30\"}");
    assert_int_equal(gp_kube_conf_parse(j, &base, &c, &d), GP_OK);
    assert_string_equal(c.scheduler_name, "gpu.a");
    assert_string_equal(c.policy, "spread");
    assert_true(c.backoff_initial_s == 0.5 && c.backoff_max_s == 30);
    assert_int_equal(gp_kube_conf_diff(&base, &c),
                     GP_KCONF_SCHEDULER_NAME | GP_KCONF_POLICY | GP_KCONF_BACKOFF);
    json_decref(j);
    /* bad versions: one line naming the key, *out untouched */
    const char *bad[][2] = {
        {"{\"policy\":\"tightest\"}",
         "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": data.policy: expected one of random, "
         "best-fit, dot-product, gpu-packing, gpu-clustering, spread, fgd, fgd-pack, got "
         "\"tightest\""},
        {"{\"schedulerName\":\"Gpu_A\"}",
         "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": data.schedulerName: expected a DNS-1123 "
         "subdomain (as spec.schedulerName), got \"Gpu_A\""},
        {"{\"podInitialBackoffSeconds\":\"0\"}",
         "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": data.podInitialBackoffSeconds: expected "
         "seconds, a number > 0 and <= 86400, got \"0\""},
        {"{\"podMaxBackoffSeconds\":\"10s\"}",
         "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": data.podMaxBackoffSeconds: expected "
         "seconds, a number > 0 and <= 86400, got \"10s\""},
        {"{\"podInitialBackoffSeconds\":\"20\"}",
         "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": data.podMaxBackoffSeconds: expected at "
         "least podInitialBackoffSeconds (20), got 10"},
        {"{\"polciy\":\"spread\"}",
         "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": data.polciy: not a key gpuplane reads "
         "(schedulerName, policy, podInitialBackoffSeconds, podMaxBackoffSeconds)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = cm_of(bad[i][0]);
        struct gp_kube_conf keep = base;
        assert_int_equal(gp_kube_conf_parse(j, &base, &keep, &d), GP_EINVALID);
        assert_string_equal(d.msg, bad[i][1]);
        assert_int_equal(gp_kube_conf_diff(&base, &keep), 0);
        json_decref(j);
    }
    char p[200];
    assert_true(gp_kube_conf_path("ns", "cm", p, sizeof p));
    assert_string_equal(p, "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dcm");
}

/* The live settings reach the scheduler; the restart ones do not. */
static void test_apply(void **state)
{
    (void)state;
    struct gp_kube_sched_opts so;
    gp_kube_sched_opts_default(&so);
    struct gp_kube_sched *s;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_new(NULL, &so, &s, &d), GP_OK);
    assert_true(gp_ks_backoff_s(s, 3) == 4); /* 1, 2, 4 */
    struct gp_kube_conf c;
    gp_kube_conf_from_opts(&so, &c);
    c.backoff_initial_s = 0.25;
    c.backoff_max_s = 0.5;
    snprintf(c.policy, sizeof c.policy, "spread");
    snprintf(c.scheduler_name, sizeof c.scheduler_name, "other");
    s->dirty = false;
    assert_int_equal(gp_kube_sched_conf_apply(s, &c), GP_KCONF_POLICY | GP_KCONF_BACKOFF);
    assert_true(gp_ks_backoff_s(s, 3) == 0.5);
    assert_string_equal(s->policy->name, "spread");
    assert_true(s->dirty); /* the next cycle rebuilds the engine with it */
    assert_string_equal(s->o.scheduler_name, "gpuplane");
    assert_int_equal(gp_kube_sched_conf_apply(s, &c), 0); /* the same again: nothing */
    gp_kube_sched_free(s);
}

/* --- gpuplane schedule running ------------------------------------------- */

struct runner {
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    struct gp_kube_run_result res;
    volatile sig_atomic_t stop;
    enum gp_err err;
    struct gp_diag d;
    char log_path[64];
};

static void *run_main(void *arg)
{
    struct runner *r = arg;
    r->err = gp_kube_run(&r->o, &r->res, &r->d);
    return NULL;
}

static void runner_init(struct runner *r)
{
    memset(r, 0, sizeof *r);
    r->cfg = (struct gp_kube_config){.server = kd_server, .ns = "default"};
    r->o.cfg = &r->cfg;
    gp_kube_client_opts_default(&r->o.client);
    r->o.client.qps = 0;
    r->o.client.backoff_base_s = 0.01;
    gp_kube_sched_opts_default(&r->o.sched); /* the flags: best-fit */
    gp_kube_lease_opts_default(&r->o.lease);
    r->o.max_s = 30;
    r->o.stop = &r->stop;
    r->o.config_ns = CM_NS;
    r->o.config_name = GP_RBAC_CONFIGMAP_NAME;
    snprintf(r->log_path, sizeof r->log_path, "/tmp/gp-config-log-XXXXXX");
    int fd = mkstemp(r->log_path);
    assert_true(fd >= 0);
    r->o.log = fdopen(fd, "w");
    assert_non_null(r->o.log);
}

static void runner_end(struct runner *r)
{
    fclose(r->o.log);
    unlink(r->log_path);
}

/* Whether the run's log holds `want` (at least n times). */
static bool logged(const struct runner *r, const char *want, int n)
{
    FILE *f = fopen(r->log_path, "r");
    if (!f)
        return false;
    static char buf[65536];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    int k = 0;
    for (const char *p = buf; (p = strstr(p, want)); p++)
        k++;
    return k >= n;
}

static void wait_logged(const struct runner *r, const char *want)
{
    for (int i = 0; i < 300; i++) {
        if (logged(r, want, 1))
            return;
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    fail_msg("the run never logged \"%s\"", want);
}

/* Waits (at most 15 s) until the pod is bound; its node. */
static const char *wait_node(struct world *w, const char *pod)
{
    for (int i = 0; i < 300; i++) {
        const char *n = w_node_of(w, pod, NULL);
        if (n[0])
            return n;
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    fail_msg("%s never bound", pod);
    return "";
}

/* Waits (at most 15 s) until an Event of `reason` about the ConfigMap
 * says `want`: the run logs a change before its Event is written. */
static void wait_event(struct world *w, const char *reason, const char *want)
{
    for (int i = 0; i < 300; i++) {
        if (strstr(w_events(w, reason, GP_RBAC_CONFIGMAP_NAME), want))
            return;
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    }
    fail_msg("no %s Event saying \"%s\"", reason, want);
}

static void cm_create(struct world *w, const char *data)
{
    char b[1024];
    snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"" GP_RBAC_CONFIGMAP_NAME "\"},\"data\":%s}",
             data);
    kd_call(w->admin, "POST", CM_PATH, b, 201);
}

static size_t on_body(char *b, size_t sz, size_t n, void *arg)
{
    struct gp_sbuf *sb = arg;
    gp_sbuf_addn(sb, b, sz * n);
    return sz * n;
}

/* Whether the run's /metrics holds line. */
static bool metric(const struct runner *r, const char *line)
{
    unsigned port = 0;
    FILE *f = fopen(r->log_path, "r");
    assert_non_null(f);
    char l[512];
    while (fgets(l, sizeof l, f))
        if (sscanf(l, "gpuplane schedule: /metrics, /healthz and /readyz on port %u", &port) == 1)
            break;
    fclose(f);
    assert_true(port > 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", port);
    struct gp_sbuf sb;
    gp_sbuf_init(&sb);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sb);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    bool found = strstr(gp_sbuf_str(&sb), line) != NULL;
    if (!found)
        fprintf(stderr, "/metrics lacks %s", line);
    gp_sbuf_free(&sb);
    return found;
}

static void test_live(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    cm_create(&w, "{\"policy\":\"best-fit\"}");
    static struct runner r;
    runner_init(&r);
    r.o.metrics_addr = "127.0.0.1:0";
    pthread_t th;
    pthread_create(&th, NULL, run_main, &r);
    wait_logged(&r, "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME ": read: policy=best-fit");
    /* best-fit: the two on one node */
    w_pod(&w, "p1", 1);
    char a[64];
    snprintf(a, sizeof a, "%s", wait_node(&w, "p1"));
    w_pod(&w, "p2", 1);
    assert_string_equal(wait_node(&w, "p2"), a);
    const char *b = strcmp(a, "n1") == 0 ? "n2" : "n1";
    /* spread from now on: the emptier node (best-fit would fill a) */
    kd_call(w.admin, "PATCH", CM_ITEM, "{\"data\":{\"policy\":\"spread\"}}", 200);
    wait_logged(&r, "applied: policy=spread");
    w_pod(&w, "p3", 1);
    assert_string_equal(wait_node(&w, "p3"), b);
    /* a bad edit: refused, logged, an Event, the metric; spread kept */
    kd_call(w.admin, "PATCH", CM_ITEM, "{\"data\":{\"policy\":\"tightest\"}}", 200);
    wait_logged(&r, "data.policy: expected one of random, best-fit");
    wait_logged(&r, "the last good configuration is kept");
    assert_true(metric(&r, "gpuplane_scheduler_config_last_reload_successful 0\n"));
    assert_true(metric(&r, "gpuplane_scheduler_config_reloads_total{result=\"invalid\"} 1\n"));
    w_pod(&w, "p4", 1); /* a: 2 of 4, b: 1 of 4 - spread takes b, best-fit a */
    assert_string_equal(wait_node(&w, "p4"), b);
    wait_event(&w, "InvalidConfiguration", "data.policy: expected one of");
    wait_event(&w, "ConfigurationApplied", "applied: policy=spread");
    /* mended: valid again, nothing else changes */
    kd_call(w.admin, "PATCH", CM_ITEM, "{\"data\":{\"policy\":\"spread\"}}", 200);
    for (int i = 0; i < 300 && !metric(&r, "gpuplane_scheduler_config_last_reload_successful 1\n");
         i++)
        nanosleep(&(struct timespec){0, 50 * 1000000L}, NULL);
    assert_true(metric(&r, "gpuplane_scheduler_config_last_reload_successful 1\n"));
    /* deleted: the flags' values (best-fit) - p5 and p6 on one node */
    kd_call(w.admin, "DELETE", CM_ITEM, NULL, 200);
    wait_logged(&r, "applied (deleted: the flags' values): policy=best-fit");
    w_pod(&w, "p5", 1);
    snprintf(a, sizeof a, "%s", wait_node(&w, "p5"));
    w_pod(&w, "p6", 1);
    assert_string_equal(wait_node(&w, "p6"), a);
    assert_true(metric(&r, "gpuplane_scheduler_config_reloads_total{result=\"applied\"} 2\n"));
    r.stop = 1;
    pthread_join(th, NULL);
    if (r.err != GP_OK)
        fail_msg("gpuplane schedule: %s", r.d.msg);
    assert_int_equal(r.res.config_applied, 2);
    assert_int_equal(r.res.config_invalid, 1);
    assert_int_equal(r.res.stats.binds, 6);
    assert_int_equal(r.res.stats.audit_violations, 0);
    runner_end(&r);
    w_close(&w);
}

/* A restart reads the ConfigMap; a bad one stops it at the start, naming
 * the key; schedulerName changes only with a restart. */
static void test_restart(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    w_node(&w, "n1", 4);
    w_node(&w, "n2", 4);
    cm_create(&w, "{\"policy\":\"spread\",\"schedulerName\":\"gpu-a\"}");
    static struct runner r;
    runner_init(&r);
    pthread_t th;
    pthread_create(&th, NULL, run_main, &r);
    w_pod_full(&w, "q1", 1, 0, "gpu-a", NULL);
    char a[64];
    snprintf(a, sizeof a, "%s", wait_node(&w, "q1"));
    w_pod_full(&w, "q2", 1, 0, "gpu-a", NULL);
    assert_string_not_equal(wait_node(&w, "q2"), a); /* spread, from the start */
    /* another schedulerName: reported, not applied */
    kd_call(w.admin, "PATCH", CM_ITEM, "{\"data\":{\"schedulerName\":\"gpu-b\"}}", 200);
    wait_logged(&r, "schedulerName=gpu-b needs a restart; running with schedulerName=gpu-a");
    wait_event(&w, "RestartRequired", "schedulerName=gpu-b needs a restart");
    w_pod_full(&w, "q3", 1, 0, "gpu-a", NULL);
    wait_node(&w, "q3");
    r.stop = 1;
    pthread_join(th, NULL);
    assert_int_equal(r.err, GP_OK);
    assert_int_equal(r.res.config_applied, 0);
    runner_end(&r);
    /* the restart: gpu-b's pods now */
    runner_init(&r);
    pthread_create(&th, NULL, run_main, &r);
    w_pod_full(&w, "q4", 1, 0, "gpu-b", NULL);
    wait_node(&w, "q4");
    wait_logged(&r, "read: policy=spread podInitialBackoffSeconds=1 podMaxBackoffSeconds=10 "
                    "schedulerName=gpu-b");
    r.stop = 1;
    pthread_join(th, NULL);
    assert_int_equal(r.err, GP_OK);
    runner_end(&r);
    /* a bad ConfigMap at the start: the error, nothing scheduled */
    kd_call(w.admin, "PATCH", CM_ITEM, "{\"data\":{\"podMaxBackoffSeconds\":\"0.5\"}}", 200);
    runner_init(&r);
    run_main(&r);
    assert_int_equal(r.err, GP_EINVALID);
    assert_string_equal(r.d.msg, "ConfigMap " CM_NS "/" GP_RBAC_CONFIGMAP_NAME
                                 ": data.podMaxBackoffSeconds: expected at least "
                                 "podInitialBackoffSeconds (1), got 0.5");
    assert_int_equal(r.res.stats.binds, 0);
    runner_end(&r);
    w_close(&w);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_apply),
        cmocka_unit_test_setup_teardown(test_live, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_restart, kd_start, kd_stop),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
