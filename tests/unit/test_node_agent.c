/* test_node_agent.c - the node agent (src/node/agent.c) run in a thread on
 * the fake NVML (tests/fakenvml/) and the API server double: the CDI spec
 * it writes itself (at start, valid, atomically, left at stop), and the
 * Events of XIDs regarding the Node with the Node's uid (checked against
 * the published schema in the shared run); NVML at run time: a GPU lost
 * streamed unhealthy and back, NVML failing mid-run (the last inventory
 * kept, a metric and an Event, back-off) and coming back with the GPUs
 * read again (health restored where they are back, the CDI spec and the
 * devices following). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube_double.h"
#include "node/agent.h"
#include "node/cdi.h"
#include "node/nvml.h"
#include "node/nvwatch.h"
#include "shared_data.h"

#define NODE "gpu-node-1"

static char dir[64], conf[128], xids[128], cdi_dir[128], root[128], plugin_dir[128];

static void write_file(const char *path, const char *text)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0); /* the fake reads it whole or not at all */
}

static void append(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(line, f);
    fclose(f);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Waits (at most 30 s) until the fake NVML has created `n` XID event sets
 * on this test's XID file (xids.sets, tests/fakenvml): an XID appended
 * before the agent's set exists is never reported, so a fixed sleep here
 * fails on a slow machine. */
static void wait_event_sets(long n)
{
    char path[300];
    snprintf(path, sizeof path, "%s.sets", xids);
    long have = 0;
    for (int i = 0; i < 1500; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%ld", &have) != 1)
                have = 0;
            fclose(f);
        }
        if (have >= n)
            return;
        sleep_s(0.02);
    }
    fail_msg("the agent's XID event set %ld not created within 30 s (%ld so far)", n, have);
}

#define HDR "driver 535.104.05\ncuda 12020\n"
#define GPU_A(n, bus)                                                                              \
    "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-a" #n " pci=00000000:" bus ":00.0 "               \
    "pciid=0x20B210DE memory=81920 used=0 cc=8.0 util=0 persistence=1 mig=0\n"

static const char two_gpus[] = HDR GPU_A(0, "07") GPU_A(1, "0F");

static int setup(void **state)
{
    if (kd_start(state) != 0)
        return -1;
    snprintf(dir, sizeof dir, "/tmp/gpa-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(conf, sizeof conf, "%s/nvml.conf", dir);
    snprintf(xids, sizeof xids, "%s/xids", dir);
    snprintf(cdi_dir, sizeof cdi_dir, "%s/cdi", dir); /* made by the agent */
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(plugin_dir, sizeof plugin_dir, "%s/dp", dir);
    if (mkdir(root, 0755) != 0 || mkdir(plugin_dir, 0755) != 0)
        return -1;
    write_file(xids, "");
    setenv("GPUPLANE_FAKE_NVML", conf, 1);
    setenv(GP_NVML_ENV, GP_FAKENVML, 1);
    return 0;
}

static void rm_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        rm_tree(p);
    }
    closedir(d);
    rmdir(path);
}

static int teardown(void **state)
{
    rm_tree(dir);
    return kd_stop(state);
}

/* --- the agent in a thread ------------------------------------------------ */

struct run {
    struct gp_node_agent_opts o;
    struct gp_kube_config cfg;
    volatile sig_atomic_t stop;
    atomic_uint port;
    pthread_t th;
    enum gp_err err;
    struct gp_node_agent_result res;
    struct gp_diag d;
};

static void *agent_main(void *arg)
{
    struct run *r = arg;
    r->err = gp_node_agent_run(&r->o, &r->res, &r->d);
    return NULL;
}

static double agent_sample_s; /* 0: the agent's default */

static void agent_start(struct run *r, double rediscover_s)
{
    memset(r, 0, sizeof *r);
    r->cfg = (struct gp_kube_config){.server = kd_server, .ns = "default"};
    r->o.node_name = NODE;
    r->o.cfg = &r->cfg;
    r->o.sharing.replicas = 1;
    r->o.plugin_dir = plugin_dir;
    r->o.cdi_dir = cdi_dir;
    r->o.driver_root = root;
    r->o.metrics_addr = "127.0.0.1:0";
    r->o.metrics_port = &r->port;
    r->o.poll_s = 0.05;
    r->o.rediscover_s = rediscover_s;
    r->o.sample_s = agent_sample_s;
    r->o.max_s = 60;
    r->o.stop = &r->stop;
    r->o.quiet = true;
    assert_int_equal(pthread_create(&r->th, NULL, agent_main, r), 0);
    for (int i = 0; i < 1000 && !atomic_load(&r->port); i++)
        sleep_s(0.01);
    assert_true(atomic_load(&r->port) > 0);
}

static void agent_stop(struct run *r)
{
    r->stop = 1;
    pthread_join(r->th, NULL);
    if (r->err != GP_OK)
        fail_msg("agent: %s", r->d.msg);
}

/* --- what the agent left ------------------------------------------------ */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The CDI spec's device names, space-separated, once the file is there. */
static const char *cdi_devices(void)
{
    static char out[1024];
    char path[256];
    snprintf(path, sizeof path, "%s/%s", cdi_dir, GP_NODE_CDI_FILE);
    out[0] = '\0';
    const char *text = read_text(path);
    if (!text)
        return out;
    struct gp_diag d;
    if (gp_node_cdi_validate(text, &d) != GP_OK)
        fail_msg("%s: %s", path, d.msg);
    json_t *spec = json_loads(text, 0, NULL);
    assert_non_null(spec);
    size_t i;
    json_t *dev;
    json_array_foreach(json_object_get(spec, "devices"), i, dev)
    {
        size_t len = strlen(out);
        snprintf(out + len, sizeof out - len, "%s%s", len ? " " : "",
                 json_string_value(json_object_get(dev, "name")));
    }
    json_decref(spec);
    return out;
}

static const char *wait_cdi(const char *want)
{
    const char *got = "";
    for (int i = 0; i < 1000; i++) {
        got = cdi_devices();
        if (!strcmp(got, want))
            break;
        sleep_s(0.02);
    }
    return got;
}

/* The files in the CDI directory, space-separated (no temporary may stay). */
static const char *cdi_files(void)
{
    static char out[1024];
    out[0] = '\0';
    DIR *d = opendir(cdi_dir);
    if (!d)
        return out;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
            continue;
        size_t len = strlen(out);
        snprintf(out + len, sizeof out - len, "%s%s", len ? " " : "", e->d_name);
    }
    closedir(d);
    return out;
}

/* The Node's uid in the double. */
static const char *node_uid(struct gp_kube_client *c)
{
    static char uid[64];
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/api/v1/nodes/" NODE, NULL, NULL, &r, &d), GP_OK);
    assert_int_equal(r.status, 200);
    json_t *o = json_loads(r.body, 0, NULL);
    snprintf(uid, sizeof uid, "%s",
             json_string_value(json_object_get(json_object_get(o, "metadata"), "uid")));
    json_decref(o);
    gp_kube_response_free(&r);
    return uid;
}

/* The Events regarding the Node: "reason|uid" for each, ";"-joined. */
static const char *node_events(struct gp_kube_client *c)
{
    static char out[4096];
    out[0] = '\0';
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET", "/apis/events.k8s.io/v1/events", NULL, NULL, &r, &d),
                     GP_OK);
    json_t *list = json_loads(r.body, 0, NULL);
    gp_kube_response_free(&r);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(list, "items"), i, e)
    {
        json_t *reg = json_object_get(e, "regarding");
        if (strcmp(json_string_value(json_object_get(reg, "kind")), "Node") != 0)
            continue;
        const char *uid = json_string_value(json_object_get(reg, "uid"));
        size_t len = strlen(out);
        snprintf(out + len, sizeof out - len, "%s%s|%s", len ? ";" : "",
                 json_string_value(json_object_get(e, "reason")), uid ? uid : "-");
    }
    json_decref(list);
    return out;
}

static const char *wait_events(struct gp_kube_client *c, const char *want)
{
    const char *got = "";
    for (int i = 0; i < 1000; i++) {
        got = node_events(c);
        if (strstr(got, want))
            break;
        sleep_s(0.02);
    }
    return got;
}

/* --- the tests -------------------------------------------------------- */

/* The CDI spec written at start into a directory the agent makes, valid,
 * no temporary beside it, and left when the agent stops. */
static void test_cdi_written(void **state)
{
    (void)state;
    write_file(conf, two_gpus);
    struct run *r = calloc(1, sizeof *r);
    agent_start(r, 0);
    assert_string_equal(wait_cdi("0 GPU-a0 1 GPU-a1 all"), "0 GPU-a0 1 GPU-a1 all");
    assert_string_equal(cdi_files(), GP_NODE_CDI_FILE);
    agent_stop(r);
    assert_string_equal(cdi_devices(), "0 GPU-a0 1 GPU-a1 all"); /* left, as NVIDIA's plugin */
    free(r);
}

/* An XID's Event regards the Node with its uid (read through the API). */
static void test_event_uid(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\"}}", 201);
    char uid[64];
    snprintf(uid, sizeof uid, "%s", node_uid(c));
    assert_true(uid[0] != '\0');
    write_file(conf, two_gpus);
    char line[256];
    snprintf(line, sizeof line, "xids %s\n", xids);
    append(conf, line);
    struct run *r = calloc(1, sizeof *r);
    agent_start(r, 0);
    wait_event_sets(1); /* the XID thread registered */
    append(xids, "1 79\n");
    char want[128];
    snprintf(want, sizeof want, "GPUUnhealthy|%s", uid);
    assert_string_equal(wait_events(c, want), want);
    agent_stop(r);
    free(r);
    gp_kube_client_free(c);
}

/* A metric's value on the agent's /metrics (the whole sample name, labels
 * included), or -1 when it is not there. */
static double metric(struct run *r, const char *sample)
{
    char server[64];
    snprintf(server, sizeof server, "http://127.0.0.1:%u", atomic_load(&r->port));
    struct gp_kube_config cfg = {.server = server, .ns = "default"};
    struct gp_kube_client_opts o;
    gp_kube_client_opts_default(&o);
    o.qps = 0;
    struct gp_kube_client *c;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_client_new(&cfg, &o, &c, &d), GP_OK);
    struct gp_kube_response resp;
    assert_int_equal(gp_kube_request(c, "GET", "/metrics", NULL, NULL, &resp, &d), GP_OK);
    double v = -1;
    size_t n = strlen(sample);
    for (const char *p = resp.body; p && *p;) {
        if (strncmp(p, sample, n) == 0 && p[n] == ' ') {
            v = strtod(p + n + 1, NULL);
            break;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    gp_kube_response_free(&resp);
    gp_kube_client_free(c);
    return v;
}

static double wait_metric(struct run *r, const char *sample, double want)
{
    double v = -1;
    for (int i = 0; i < 1000; i++) {
        if ((v = metric(r, sample)) == want)
            break;
        sleep_s(0.02);
    }
    return v;
}

/* How many times `what` is in the Node's Events. */
static int count_events(struct gp_kube_client *c, const char *what)
{
    int n = 0;
    for (const char *p = node_events(c); (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static int wait_count(struct gp_kube_client *c, const char *what, int want)
{
    int n = 0;
    for (int i = 0; i < 1000 && (n = count_events(c, what)) < want; i++)
        sleep_s(0.02);
    return n;
}

static void live_conf(const char *gpus, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, "live\nxids %s\n%s%s", xids, gpus, extra);
    write_file(conf, text);
}

/* A GPU that falls off the bus (the event wait answers GPU_IS_LOST, then
 * discovery finds which): streamed unhealthy, counted lost, out of the CDI
 * spec; NVML reading it again brings it back. */
static void test_gpu_lost(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\"}}", 201);
    live_conf(two_gpus, "");
    struct run *r = calloc(1, sizeof *r);
    agent_start(r, 0.1);
    assert_string_equal(wait_cdi("0 GPU-a0 1 GPU-a1 all"), "0 GPU-a0 1 GPU-a1 all");
    wait_event_sets(1);
    append(xids, "lost 1\n");
    assert_true(wait_metric(r, "gpuplane_node_gpus_lost", 1) == 1);
    assert_int_equal(wait_count(c, "GPUUnhealthy", 1), 1);
    assert_true(wait_metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a1\"}", 0) == 0);
    assert_true(metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a0\"}") == 1);
    assert_true(metric(r, "gpuplane_node_plugin_devices{resource=\"nvidia.com/gpu\"}") == 2);
    assert_true(metric(r, "gpuplane_node_plugin_devices_healthy{resource=\"nvidia.com/gpu\"}") ==
                1);
    assert_string_equal(wait_cdi("0 GPU-a0 all"), "0 GPU-a0 all");
    assert_true(metric(r, "gpuplane_node_nvml_up") == 1); /* one GPU lost is not NVML down */
    live_conf(two_gpus, "");                              /* read again: GPU 1 answers */
    assert_true(wait_metric(r, "gpuplane_node_gpus_lost", 0) == 0);
    assert_true(wait_metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a1\"}", 1) == 1);
    assert_int_equal(wait_count(c, "GPUHealthy", 1), 1);
    assert_string_equal(wait_cdi("0 GPU-a0 1 GPU-a1 all"), "0 GPU-a0 1 GPU-a1 all");
    agent_stop(r);
    free(r);
    gp_kube_client_free(c);
}

/* NVML failing mid-run: the last inventory served, nvml_up 0 and an
 * Event, retried with back-off; back with GPU 1 gone and GPU 2 new: GPU 0
 * (out for a recoverable XID) healthy again, GPU 1 unhealthy, GPU 2
 * advertised, the CDI spec rewritten; XIDs followed again. */
static void test_nvml_down_and_back(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\"}}", 201);
    live_conf(two_gpus, "");
    struct run *r = calloc(1, sizeof *r);
    agent_start(r, 0.1);
    assert_string_equal(wait_cdi("0 GPU-a0 1 GPU-a1 all"), "0 GPU-a0 1 GPU-a1 all");
    wait_event_sets(1);
    append(xids, "0 48\n"); /* recoverable: out until a reset, a quiet period or a reload */
    assert_true(wait_metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a0\"}", 0) == 0);
    live_conf(two_gpus, "fail-all 999\n");
    assert_true(wait_metric(r, "gpuplane_node_nvml_up", 0) == 0);
    assert_int_equal(wait_count(c, "NVMLUnavailable", 1), 1);
    assert_true(metric(r, "gpuplane_node_nvml_failures_total") == 1);
    /* the last inventory still served, health as it was */
    assert_true(metric(r, "gpuplane_node_plugin_devices{resource=\"nvidia.com/gpu\"}") == 2);
    assert_true(metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a1\"}") == 1);
    assert_true(wait_metric(r, "gpuplane_node_nvml_retries_total", 2) == 2);
    assert_true(metric(r, "gpuplane_node_nvml_up") == 0);
    live_conf(HDR GPU_A(0, "07") GPU_A(2, "17"), "");
    assert_true(wait_metric(r, "gpuplane_node_nvml_up", 1) == 1);
    assert_int_equal(wait_count(c, "NVMLAvailable", 1), 1);
    assert_true(wait_metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a0\"}", 1) == 1);
    assert_true(metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a1\"}") == 0);
    assert_true(metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a2\"}") == 1);
    assert_true(metric(r, "gpuplane_node_gpus_lost") == 1);
    assert_true(wait_metric(r, "gpuplane_node_plugin_devices{resource=\"nvidia.com/gpu\"}", 3) ==
                3);
    assert_true(metric(r, "gpuplane_node_plugin_devices_healthy{resource=\"nvidia.com/gpu\"}") ==
                2);
    assert_string_equal(wait_cdi("0 GPU-a0 1 GPU-a2 all"), "0 GPU-a0 1 GPU-a2 all");
    /* XIDs followed again, on the new event set (GPU-a2 is NVML's GPU 1 now) */
    wait_event_sets(2); /* the set made again once NVML is back */
    append(xids, "1 79\n");
    assert_true(wait_metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a2\"}", 0) == 0);
    assert_true(metric(r, "gpuplane_node_gpu_healthy{gpu=\"GPU-a0\"}") == 1);
    agent_stop(r);
    free(r);
    gp_kube_client_free(c);
}

static void test_backoff(void **state)
{
    (void)state;
    assert_true(gp_node_nvwatch_backoff_s(0, 1, 60) == 1);
    assert_true(gp_node_nvwatch_backoff_s(1, 1, 60) == 2);
    assert_true(gp_node_nvwatch_backoff_s(5, 1, 60) == 32);
    assert_true(gp_node_nvwatch_backoff_s(6, 1, 60) == 60);
    assert_true(gp_node_nvwatch_backoff_s(1000, 1, 60) == 60);
    assert_true(gp_node_nvwatch_backoff_s(2, 0.1, 60) == 0.4);
}

/* Utilisation and memory used follow NVML between discoveries (every
 * sample_s, not the discovery period): /metrics is not a minute old. A
 * discovery an hour away, samples every 0.1 s. */
static void test_sample_between_discoveries(void **state)
{
    (void)state;
    struct gp_kube_client *c = kd_client();
    kd_call(c, "POST", "/api/v1/nodes",
            "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\"}}", 201);
    live_conf(two_gpus, "");
    struct run *r = calloc(1, sizeof *r);
    agent_sample_s = 0.1;
    agent_start(r, 3600);
    agent_sample_s = 0;
    assert_true(wait_metric(r, "gpuplane_node_gpu_utilization_percent{gpu=\"GPU-a1\"}", 0) == 0);
    live_conf(
        HDR GPU_A(
            0, "07") "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-a1 pci=00000000:0F:00.0 "
                     "pciid=0x20B210DE memory=81920 used=2048 cc=8.0 util=70 persistence=1 mig=0\n",
        "");
    assert_true(wait_metric(r, "gpuplane_node_gpu_utilization_percent{gpu=\"GPU-a1\"}", 70) == 70);
    assert_true(wait_metric(r, "gpuplane_node_gpu_memory_used_bytes{gpu=\"GPU-a1\"}",
                            2048.0 * 1024 * 1024) == 2048.0 * 1024 * 1024);
    assert_true(metric(r, "gpuplane_node_gpu_utilization_percent{gpu=\"GPU-a0\"}") == 0);
    agent_stop(r);
    free(r);
    gp_kube_client_free(c);
}

#define SCHEMAS GP_SHARED_DIR "/k8s/schemas"

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cdi_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvml_down_and_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_between_discoveries, setup, teardown),
        cmocka_unit_test(test_backoff),
    };
    if (gp_shared_mode(argc, argv)) { /* the Events checked against the published schemas */
        if (!gp_shared_have(SCHEMAS "/apis__events.k8s.io__v1_openapi.json"))
            return GP_SHARED_SKIP_EXIT;
        kd_schemas = SCHEMAS;
        const struct CMUnitTest schema_tests[] = {
            cmocka_unit_test_setup_teardown(test_event_uid, setup, teardown),
            cmocka_unit_test_setup_teardown(test_nvml_down_and_back, setup, teardown),
        };
        return gp_shared_exit(cmocka_run_group_tests_name("schemas", schema_tests, NULL, NULL));
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
