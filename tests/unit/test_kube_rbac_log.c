/* test_kube_rbac_log.c - least privilege both ways, against the API
 * server double's request log: gpuplane schedule (kube/run.c, its threads,
 * leader election on) runs a whole scenario as its own user (a bearer
 * token of the double's --tokens) while an administrator makes the
 * objects: pods bound, one whose Binding got no answer (read again), one
 * that fits nowhere (its status and Event), two preempted by a third,
 * PodGroups and PriorityClasses watched, a claim provisioned for its
 * pod's node (its selected-node patch), one bound to an existing volume
 * (the volume's claimRef patch), a gang (its members' annotation
 * patches), its Lease created, read and
 * renewed, its ConfigMap listed and watched. Then every request the scheduler made must be one that
 * gp_rbac_rules (kube/rbac.c, what render --self grants) allows, and every
 * verb of every rule must have been used by some request: a rule taken
 * out of the table, or one the scheduler no longer needs, fails it. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/rbac.h"
#include "kube/run.h"
#include "kube_double.h"
#include "kube_world.h"

#define OWN_NS     "gpuplane-system"
#define SCHED_USER "system:serviceaccount:gpuplane-system:gpuplane-scheduler"

static char tokens[64];

static int setup(void **state)
{
    snprintf(tokens, sizeof tokens, "/tmp/gp-rbac-tokens-XXXXXX");
    int fd = mkstemp(tokens);
    if (fd < 0)
        return -1;
    const char text[] = "admin-token,admin\nsched-token," SCHED_USER "\n";
    if (write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1))
        return -1;
    close(fd);
    kd_extra[0] = "--tokens";
    kd_extra[1] = tokens;
    kd_token = "admin-token"; /* the world's clients: the administrator */
    return kd_start(state);
}

static int teardown(void **state)
{
    int rc = kd_stop(state);
    unlink(tokens);
    return rc;
}

struct runner {
    struct gp_kube_run_opts o;
    struct gp_kube_config cfg;
    struct gp_kube_run_result res;
    volatile sig_atomic_t stop;
    enum gp_err err;
    char msg[512];
};

static void *run_main(void *arg)
{
    struct runner *r = arg;
    struct gp_diag d = {""};
    r->err = gp_kube_run(&r->o, &r->res, &d);
    snprintf(r->msg, sizeof r->msg, "%s", d.msg);
    return NULL;
}

/* Waits (at most 15 s) until the pod is on `node`. */
static void wait_bound(struct world *w, const char *pod, const char *node)
{
    for (int i = 0; i < 300; i++) {
        if (strcmp(w_node_of(w, pod, NULL), node) == 0)
            return;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    fail_msg("%s not bound to %s", pod, node);
}

static void scenario(struct world *w)
{
    w_node(w, "n1", 2);
    /* a's Binding applied, its answer lost (late past the client's
     * timeout): the scheduler asks whether a is bound */
    kd_call(w->admin, "POST", "/_control/fault",
            "{\"late_ms\":1500,\"count\":1,\"match\":\"/pods/a/binding\"}", 200);
    kd_call(w->admin, "POST", "/_control/grace_ms", "{\"ms\":100}", 200);
    kd_call(w->admin, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
            "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
            "\"metadata\":{\"name\":\"high\"},\"value\":1000}",
            201);
    w_pod_full(w, "a", 1, 0, "gpuplane", NULL);
    w_pod_full(w, "b", 1, 0, "gpuplane", NULL);
    w_pod_full(w, "huge", 8, 0, "gpuplane", NULL); /* fits nowhere */
    /* a claim of a WaitForFirstConsumer class, provisioned for its pod's
     * node (the claim's patch: volumes_bind.c; the double's provisioner) */
    kd_call(w->admin, "POST", "/apis/storage.k8s.io/v1/storageclasses",
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
            "{\"name\":\"gp3\"},\"provisioner\":\"ebs.csi.aws.com\",\"volumeBindingMode\":"
            "\"WaitForFirstConsumer\"}",
            201);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/persistentvolumeclaims",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":"
            "{\"name\":\"data\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
            "\"storageClassName\":\"gp3\",\"resources\":{\"requests\":{\"storage\":"
            "\"10Gi\"}}}}",
            201);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"vol\"},\"spec\":{\"schedulerName\":\"gpuplane\","
            "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
            "{\"cpu\":\"1\"}}}],\"volumes\":[{\"name\":\"d\",\"persistentVolumeClaim\":"
            "{\"claimName\":\"data\"}}]}}",
            201);
    /* a gang of two pods asking no GPU: its members annotated, then bound
     * (bind.c job_run: the pods' annotation patch; a plain pod's one write
     * is its Binding) */
    kd_call(w->admin, "POST", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
            "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
            "\"metadata\":{\"name\":\"pair\"},\"spec\":{\"minMember\":2}}",
            201);
    for (int i = 1; i <= 2; i++) {
        char pod[512];
        snprintf(pod, sizeof pod,
                 "{\"metadata\":{\"name\":\"g%d\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":"
                 "\"pair\"}},\"spec\":{\"schedulerName\":\"gpuplane\",\"containers\":[{\"name\":"
                 "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}",
                 i);
        kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", pod, 201);
    }
    /* a claim of a class without a provisioner, bound to an existing
     * volume (its claimRef's patch: volumes_bind.c; the double's PV
     * controller binds the claim) */
    kd_call(w->admin, "POST", "/apis/storage.k8s.io/v1/storageclasses",
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":"
            "{\"name\":\"local\"},\"provisioner\":\"kubernetes.io/no-provisioner\","
            "\"volumeBindingMode\":\"WaitForFirstConsumer\"}",
            201);
    kd_call(w->admin, "POST", "/api/v1/persistentvolumes",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":"
            "\"disk1\"},\"spec\":{\"capacity\":{\"storage\":\"10Gi\"},\"accessModes\":"
            "[\"ReadWriteOnce\"],\"storageClassName\":\"local\",\"hostPath\":{\"path\":"
            "\"/mnt/disk1\"}}}",
            201);
    kd_call(w->admin, "PATCH", "/api/v1/persistentvolumes/disk1/status",
            "{\"status\":{\"phase\":\"Available\"}}", 200);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/persistentvolumeclaims",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":"
            "{\"name\":\"disk\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
            "\"storageClassName\":\"local\",\"resources\":{\"requests\":{\"storage\":"
            "\"10Gi\"}}}}",
            201);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods",
            "{\"metadata\":{\"name\":\"svol\"},\"spec\":{\"schedulerName\":\"gpuplane\","
            "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
            "{\"cpu\":\"1\"}}}],\"volumes\":[{\"name\":\"d\",\"persistentVolumeClaim\":"
            "{\"claimName\":\"disk\"}}]}}",
            201);
}

static void test_requests_match_rules(void **state)
{
    (void)state;
    struct world w;
    w_open(&w, false);
    scenario(&w);
    struct runner *r = calloc(1, sizeof *r);
    r->cfg = (struct gp_kube_config){.server = kd_server, .ns = "default", .token = "sched-token"};
    r->o.cfg = &r->cfg;
    gp_kube_client_opts_default(&r->o.client);
    r->o.client.qps = 0;
    r->o.client.backoff_base_s = 0.01;
    r->o.client.request_timeout_s = 1; /* a's late answer is not waited for */
    gp_kube_sched_opts_default(&r->o.sched);
    gp_kube_lease_opts_default(&r->o.lease);
    r->o.leader_elect = true;
    r->o.lease.ns = OWN_NS;
    r->o.lease.name = GP_RBAC_LEASE_NAME;
    r->o.lease.duration_s = 2;
    r->o.lease.renew_deadline_s = 1.5;
    r->o.lease.retry_period_s = 0.2;
    r->o.sched.identity = r->o.lease.identity = "replica-a";
    r->o.config_ns = OWN_NS; /* its ConfigMap (absent: the flags'), listed and watched */
    r->o.config_name = GP_RBAC_CONFIGMAP_NAME;
    r->o.max_s = 30;
    r->o.stop = &r->stop;
    pthread_t th;
    pthread_create(&th, NULL, run_main, r);
    wait_bound(&w, "a", "n1");
    wait_bound(&w, "b", "n1");
    wait_bound(&w, "vol", "n1");
    wait_bound(&w, "g1", "n1");
    wait_bound(&w, "g2", "n1");
    wait_bound(&w, "svol", "n1");
    /* two GPUs at priority 1000 (its class's): a and b are its victims */
    char pod[512];
    snprintf(pod, sizeof pod,
             "{\"metadata\":{\"name\":\"urgent\"},\"spec\":{\"schedulerName\":\"gpuplane\","
             "\"priorityClassName\":\"high\",\"containers\":[{\"name\":\"c\",\"image\":\"x\","
             "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"}}}]}}");
    kd_call(w.admin, "POST", "/api/v1/namespaces/default/pods", pod, 201);
    wait_bound(&w, "urgent", "n1");
    r->stop = 1;
    pthread_join(th, NULL);
    if (r->err != GP_OK)
        fail_msg("gpuplane schedule: %s", r->msg);
    assert_int_equal(r->res.stats.evictions, 2);
    assert_int_equal(r->res.stats.audit_violations, 0);

    /* every request of the scheduler's user: allowed, and the rules used */
    json_t *log = w_get(&w, "/_control/requests");
    json_t *reqs = json_object_get(log, "requests");
    bool used[64][GP_RBAC_MAX_VERBS] = {{false}};
    size_t mine = 0, i;
    json_t *e;
    json_array_foreach(reqs, i, e)
    {
        const char *user = json_string_value(json_object_get(e, "user"));
        const char *method = json_string_value(json_object_get(e, "method"));
        const char *path = json_string_value(json_object_get(e, "path"));
        assert_non_null(user);
        if (strcmp(user, SCHED_USER) != 0)
            continue;
        mine++;
        char why[512];
        if (!gp_rbac_allows_request(method, path, OWN_NS, why, sizeof why))
            fail_msg("the scheduler made a request its Roles refuse: %s %s: %s", method, path, why);
        struct gp_rbac_request q;
        assert_true(gp_rbac_parse_request(method, path, &q));
        int k = gp_rbac_match(&q, OWN_NS);
        assert_true(k >= 0 && (size_t)k < 64);
        for (size_t v = 0; gp_rbac_rules[k].verbs[v]; v++)
            if (strcmp(gp_rbac_rules[k].verbs[v], q.verb) == 0)
                used[k][v] = true;
    }
    assert_true(mine > 10);
    char unused[2048] = "";
    for (size_t k = 0; k < gp_rbac_nrules; k++)
        for (size_t v = 0; gp_rbac_rules[k].verbs[v]; v++)
            if (!used[k][v]) {
                size_t l = strlen(unused);
                snprintf(unused + l, sizeof unused - l, " %s %s%s%s;", gp_rbac_rules[k].verbs[v],
                         gp_rbac_rules[k].group[0] ? gp_rbac_rules[k].group : "core", "/",
                         gp_rbac_rules[k].resource);
            }
    if (unused[0])
        fail_msg("granted but never used (least privilege):%s", unused);
    json_decref(log);
    free(r);
    w_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_match_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
