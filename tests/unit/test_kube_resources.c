/* test_kube_resources.c - the live scheduler (kube/sched.h) against the API
 * server double checks what kube-scheduler's NodeResourcesFit checks
 * beyond cpu, memory and GPUs (pkg/scheduler/framework/plugins/noderesources/fit.go
 * fitsRequest; issue 14, the review's R2; kube/objects_scalar.c):
 *  - a node's status.allocatable.pods: "Too many pods", its own pods and
 *    other schedulers' alike counted;
 *  - ephemeral-storage, hugepages-2Mi and an extended resource
 *    (example.com/foo): "Insufficient <name>", a node without the resource
 *    as short as a full one, every resource a node lacks named (a node
 *    out of pods and cpu under both);
 *  - a pod's request of them counted as every request is (an init
 *    container's larger need wins), given back when the pod is deleted;
 *  - host ports as NodePorts checks them (nodeports/node_ports.go: "node(s)
 *    didn't have free ports for the requested pod ports"): the same port and
 *    protocol on overlapping addresses, another scheduler's pod's included;
 *    another protocol or another address is free;
 *  - a quantity that does not read leaves the pod unreadable, one line;
 *  - a pod with a persistentVolumeClaim or ephemeral volume is marked as
 *    one whose volumes are not checked (info.claims; docs/kube.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_double.h"
#include "kube_world.h"

/* A node of 4 GPUs whose status.allocatable is given more members (JSON). */
static void rnode(struct world *w, const char *name, const char *alloc)
{
    w_node(w, name, 4);
    char b[1024], path[128];
    snprintf(b, sizeof b,
             "{\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":"
             "\"4\"%s}}}",
             alloc);
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

/* A pod of sched asking one GPU, cpu and the requests given (JSON
 * members), with an init container asking init (NULL: none). */
static void rpod(struct world *w, const char *name, const char *sched, const char *cpu,
                 const char *req, const char *init)
{
    char b[2048], ic[512] = "";
    if (init)
        snprintf(ic, sizeof ic,
                 ",\"initContainers\":[{\"name\":\"i\",\"image\":\"x\",\"resources\":{"
                 "\"requests\":{%s},\"limits\":{%s}}}]",
                 init, init);
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"%s\"%s,"
             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
             "\"cpu\":\"%s\",\"nvidia.com/gpu\":\"1\"%s},\"limits\":{\"nvidia.com/gpu\":\"1\"%s}}}"
             "]}}",
             name, sched, ic, cpu, req, req);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static const char *message_of(struct world *w, const char *name)
{
    static char out[2048];
    json_t *p = w_pod_get(w, name);
    json_t *c = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 0);
    const char *m = json_string_value(json_object_get(c, "message"));
    snprintf(out, sizeof out, "%s", m ? m : "");
    json_decref(p);
    return out;
}

#define NO_VICTIMS(n)                                                                              \
    " preemption: 0/" #n " nodes are available: " #n " No preemption victims found for incoming "  \
    "pod.."

static void test_too_many_pods(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    rnode(&w, "n1", ",\"pods\":\"3\"");
    rpod(&w, "theirs", "default-scheduler", "1", "", NULL);
    w_bind(&w, "theirs", "n1");
    rpod(&w, "a", "gpuplane", "1", "", NULL);
    rpod(&w, "b", "gpuplane", "1", "", NULL);
    rpod(&w, "c", "gpuplane", "1", "", NULL);
    w_cycle(&w);
    int bound = 0;
    bound += strcmp(w_node_of(&w, "a", NULL), "n1") == 0;
    bound += strcmp(w_node_of(&w, "b", NULL), "n1") == 0;
    bound += strcmp(w_node_of(&w, "c", NULL), "n1") == 0;
    assert_int_equal(bound, 2); /* 4 GPUs, but room for 3 pods, one of them theirs */
    const char *left = strcmp(w_node_of(&w, "c", NULL), "") == 0   ? "c"
                       : strcmp(w_node_of(&w, "b", NULL), "") == 0 ? "b"
                                                                   : "a";
    assert_string_equal(message_of(&w, left),
                        "0/1 nodes are available: 1 Too many pods." NO_VICTIMS(1));
    /* every resource short: out of pods and cpu (8 cpus, 5 left; asks 7) */
    rpod(&w, "big", "gpuplane", "7", "", NULL);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "big", NULL), "");
    assert_string_equal(
        message_of(&w, "big"),
        "0/1 nodes are available: 1 Insufficient cpu, 1 Too many pods." NO_VICTIMS(1));
    w_close(&w);
}

static void test_scalars(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    rnode(&w, "big",
          ",\"ephemeral-storage\":\"10Gi\",\"hugepages-2Mi\":\"1Gi\",\"example.com/foo\":\"3\"");
    static const char ask[] =
        ",\"ephemeral-storage\":\"4Gi\",\"hugepages-2Mi\":\"512Mi\",\"example.com/foo\":\"1\"";
    rpod(&w, "p0", "gpuplane", "1", ask, NULL);
    rpod(&w, "p1", "gpuplane", "1", ask, NULL);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "p0", NULL), "big");
    assert_string_equal(w_node_of(&w, "p1", NULL), "big");
    /* 2Gi of storage, no hugepages left, one foo: short of two */
    rpod(&w, "p2", "gpuplane", "1", ask, NULL);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "p2", NULL), "");
    assert_string_equal(message_of(&w, "p2"),
                        "0/1 nodes are available: 1 Insufficient ephemeral-storage, 1 "
                        "Insufficient hugepages-2Mi." NO_VICTIMS(1));
    /* an init container's 2 foo is the pod's need (max of 1 and 2): one left */
    rpod(&w, "init", "gpuplane", "1", ",\"example.com/foo\":\"1\"", "\"example.com/foo\":\"2\"");
    /* a node without foo at all is as short */
    rnode(&w, "plain", "");
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "init", NULL), "");
    assert_string_equal(message_of(&w, "init"),
                        "0/2 nodes are available: 2 Insufficient example.com/foo." NO_VICTIMS(2));
    /* pods deleted give their resources back: p2 and init both fit */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/p0?gracePeriodSeconds=0", NULL,
            200);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0", NULL,
            200);
    w.now += 5;
    w_cycle(&w);
    w.now += 5;
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "init", NULL), "big"); /* 2 of the 3 foo */
    assert_string_equal(w_node_of(&w, "p2", NULL), "big");   /* the third */
    w_close(&w);
}

/* A pod of sched asking one GPU whose container binds host ports (JSON
 * items of "ports"). */
static void ppod(struct world *w, const char *name, const char *sched, const char *ports)
{
    char b[2048];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedulerName\":\"%s\",\"containers\":[{"
             "\"name\":\"c\",\"image\":\"x\",\"ports\":[%s],\"resources\":{\"requests\":{"
             "\"cpu\":\"1\",\"nvidia.com/gpu\":\"1\"},\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
             name, sched, ports);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

static void test_host_ports(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    rnode(&w, "n1", "");
    ppod(&w, "theirs", "default-scheduler",
         "{\"containerPort\":80,\"hostPort\":8080,\"hostIP\":\"10.0.0.1\"}");
    w_bind(&w, "theirs", "n1");
    ppod(&w, "web", "gpuplane", "{\"containerPort\":80,\"hostPort\":8080}"); /* 0.0.0.0: clash */
    ppod(&w, "udp", "gpuplane",
         "{\"containerPort\":80,\"hostPort\":8080,\"protocol\":\"UDP\"}"); /* free */
    ppod(&w, "other-ip", "gpuplane",
         "{\"containerPort\":80,\"hostPort\":8080,\"hostIP\":\"10.0.0.2\"}"); /* free */
    ppod(&w, "plain", "gpuplane", "{\"containerPort\":80}");                  /* no host port */
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "web", NULL), "");
    assert_string_equal(message_of(&w, "web"),
                        "0/1 nodes are available: 1 node(s) didn't have free ports for the "
                        "requested pod ports." NO_VICTIMS(1));
    assert_string_equal(w_node_of(&w, "udp", NULL), "n1");
    assert_string_equal(w_node_of(&w, "other-ip", NULL), "n1");
    assert_string_equal(w_node_of(&w, "plain", NULL), "n1");
    /* 10.0.0.2:8080/TCP is ours now: one more on 10.0.0.2 clashes */
    ppod(&w, "again", "gpuplane",
         "{\"containerPort\":81,\"hostPort\":8080,\"hostIP\":\"10.0.0.2\"}");
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "again", NULL), "");
    /* their pod deleted: web's port is free */
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/theirs?gracePeriodSeconds=0", NULL,
            200);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/other-ip?gracePeriodSeconds=0",
            NULL, 200);
    kd_call(w.admin, "DELETE", "/api/v1/namespaces/default/pods/again?gracePeriodSeconds=0", NULL,
            200);
    w.now += 5;
    w_cycle(&w);
    w.now += 5;
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "web", NULL), "n1");
    w_close(&w);
}

static void test_unreadable(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, true);
    rnode(&w, "n1", ",\"example.com/foo\":\"3\"");
    rpod(&w, "bad", "gpuplane", "1", ",\"example.com/foo\":\"lots\"", NULL);
    w_cycle(&w);
    assert_string_equal(w_node_of(&w, "bad", NULL), "");
    assert_string_equal(w_events(&w, "FailedScheduling", "bad"),
                        "gpuplane cannot read the pod: spec.containers[0].resources.requests."
                        "example.com/foo: \"lots\" is not a quantity");
    w_close(&w);
}

static void test_claims(void **state)
{
    (void)state;
    static const struct {
        const char *volumes;
        bool claims;
    } cases[] = {
        {"[{\"name\":\"t\",\"projected\":{}},{\"name\":\"e\",\"emptyDir\":{}}]", false},
        {"[{\"name\":\"d\",\"persistentVolumeClaim\":{\"claimName\":\"data\"}}]", true},
        {"[{\"name\":\"s\",\"ephemeral\":{\"volumeClaimTemplate\":{}}}]", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[512];
        snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"volumes\":%s}}",
                 cases[i].volumes);
        json_t *j = json_loads(b, 0, NULL);
        assert_non_null(j);
        struct gp_kube_pod_info info;
        gp_kube_pod_info_read(j, &info);
        assert_int_equal(info.claims, cases[i].claims);
        json_decref(j);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_too_many_pods, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_scalars, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_host_ports, kd_start, kd_stop),
        cmocka_unit_test_setup_teardown(test_unreadable, kd_start, kd_stop),
        cmocka_unit_test(test_claims),
    };
    return kd_main(argc, argv, tests, NULL, NULL);
}
