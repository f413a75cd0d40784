/* kube_world.h - for tests of the scheduler (kube/sched.h) against the API
 * server double: GPU nodes and pods made as an administrator would, a
 * scheduler fed by informers that are synced by re-listing (deterministic:
 * a re-list delivers exactly what changed), cycles at a test clock, and
 * checks of what the API holds: where each pod is bound and which GPUs its
 * annotations name. Include after kube_double.h.
 *
 * The double plays the node agent's part (its --auto-allocate, through
 * /_control/auto_allocate; w_node labels its nodes as the agent's,
 * GP_KUBE_LABEL_AGENT, w_node_agent makes either kind): a pod bound with gpuplane.io/phase
 * allocating is marked allocated w_auto_allocate_ms after its Binding (0: at once; -1: never, set
 * before w_open, for tests of the agent's side), so that the next pod on its node may be bound (one
 * pod allocating per node, kube/sched_slot.c); w_cycle runs cycles while they bind pods that waited
 * for their node's slot. */
#ifndef GP_TEST_KUBE_WORLD_H
#define GP_TEST_KUBE_WORLD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/informer.h"
#include "kube/metrics.h"
#include "kube/objects.h"
#include "kube/sched.h"

__attribute__((unused)) static long w_auto_allocate_ms = 0;

struct world {
    struct gp_kube_client *admin, *c, *ic;
    struct gp_kube_sched *s;
    struct gp_kube_informer *nodes, *pods, *groups;
    double now;
};

/* record: the scheduler's event log (--record), NULL for none. */
__attribute__((unused)) static void w_open_record(struct world *w, bool leader, const char *record)
{
    memset(w, 0, sizeof *w);
    w->admin = kd_client();
    w->c = kd_client();
    w->ic = kd_client();
    struct gp_kube_sched_opts o;
    gp_kube_sched_opts_default(&o);
    o.backoff_initial_s = 0.5;
    o.backoff_max_s = 4;
    o.identity = "test-replica";
    o.record_path = record;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_sched_new(w->c, &o, &w->s, &d), GP_OK);
    assert_int_equal(gp_kube_informer_new(w->ic, "/api/v1/nodes", 0, gp_kube_sched_node_change,
                                          w->s, &w->nodes, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(w->ic, "/api/v1/pods", 0, gp_kube_sched_pod_change, w->s,
                                          &w->pods, &d),
                     GP_OK);
    assert_int_equal(gp_kube_informer_new(w->ic, "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 0,
                                          gp_kube_sched_group_change, w->s, &w->groups, &d),
                     GP_OK);
    gp_kube_sched_set_leader(w->s, leader);
    w->now = 100;
    char b[64];
    snprintf(b, sizeof b, "{\"ms\":%ld}", w_auto_allocate_ms);
    kd_call(w->admin, "POST", "/_control/auto_allocate", b, 200);
}

__attribute__((unused)) static void w_open(struct world *w, bool leader)
{
    /* GP_TEST_RECORD=FILE: every test's scheduler records into FILE (the
     * runs appended), for `gpuplane sim --replay` (tests/CMakeLists.txt) */
    w_open_record(w, leader, getenv("GP_TEST_RECORD"));
}

/* w_open as the leader, the scheduler keeping its metrics in *km (the
 * caller frees them after w_close: gp_kube_metrics_free). */
__attribute__((unused)) static void w_open_metrics(struct world *w, struct gp_kube_metrics *km)
{
    w_open(w, true);
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_metrics_init(km, &d), GP_OK);
    gp_kube_sched_set_metrics(w->s, km);
}

__attribute__((unused)) static long w_stat(struct world *w, const char *what);

__attribute__((unused)) static void w_close(struct world *w)
{
    assert_int_equal(w_stat(w, "schema_errors"), 0); /* everything sent was valid */
    gp_kube_informer_free(w->nodes);
    gp_kube_informer_free(w->pods);
    gp_kube_informer_free(w->groups);
    gp_kube_sched_free(w->s);
    gp_kube_client_free(w->admin);
    gp_kube_client_free(w->c);
    gp_kube_client_free(w->ic);
}

__attribute__((unused)) static void w_sync(struct world *w)
{
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_informer_list(w->groups, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(w->nodes, &d), GP_OK);
    assert_int_equal(gp_kube_informer_list(w->pods, &d), GP_OK);
}

/* Synced, one cycle, the audit checked, and again while that bound pods
 * and pods still wait for their node's slot: the pods bound. */
__attribute__((unused)) static size_t w_cycle(struct world *w)
{
    size_t total = 0, bound;
    do {
        w_sync(w);
        struct gp_diag d = {""};
        assert_int_equal(gp_kube_sched_cycle(w->s, w->now, &bound, &d), GP_OK);
        w_sync(w);
        if (gp_kube_sched_audit_all(w->s) != 0 || gp_kube_sched_stats(w->s).audit_violations != 0)
            fail_msg("audit: %s", gp_kube_sched_audit_last(w->s));
        total += bound;
    } while (bound > 0 && gp_kube_sched_stats(w->s).slot_waiting > 0);
    return total;
}

/* A node of `gpus` whole GPUs; agent: labelled as served by gpuplane's
 * node agent (GP_KUBE_LABEL_AGENT: one pod allocating at a time there,
 * the part the double plays), else by another device plugin. */
__attribute__((unused)) static void w_node_agent(struct world *w, const char *name, unsigned gpus,
                                                 bool agent)
{
    char b[512];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"nvidia.com/gpu.product\":"
             "\"NVIDIA-A100-SXM4-80GB\",\"nvidia.com/gpu.memory\":\"81920\"%s}},\"spec\":{}}",
             name, agent ? ",\"" GP_KUBE_LABEL_AGENT "\":\"" GP_KUBE_AGENT_PROTOCOL "\"" : "");
    kd_call(w->admin, "POST", "/api/v1/nodes", b, 201);
    snprintf(b, sizeof b,
             "{\"status\":{\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":"
             "\"%u\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\","
             "\"nvidia.com/gpu\":\"%u\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\","
             "\"status\":\"True\"}]}}",
             gpus, gpus);
    char path[128];
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    kd_call(w->admin, "PATCH", path, b, 200);
}

__attribute__((unused)) static void w_node(struct world *w, const char *name, unsigned gpus)
{
    w_node_agent(w, name, gpus, true);
}

/* A pod asking `gpus` GPUs (0 with milli > 0: a share), with extra
 * metadata JSON (",\"annotations\":{...}") when not NULL. */
__attribute__((unused)) static void w_pod_full(struct world *w, const char *name, unsigned gpus,
                                               int priority, const char *sched, const char *meta)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\"%s},\"spec\":{\"schedulerName\":\"%s\","
             "\"priority\":%d,\"terminationGracePeriodSeconds\":30,\"containers\":[{\"name\":"
             "\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
             "\"1Gi\",\"nvidia.com/gpu\":\"%u\"},\"limits\":{\"nvidia.com/gpu\":\"%u\"}}}]}}",
             name, meta ? meta : "", sched, priority, gpus, gpus);
    kd_call(w->admin, "POST", "/api/v1/namespaces/default/pods", b, 201);
}

__attribute__((unused)) static void w_pod(struct world *w, const char *name, unsigned gpus)
{
    w_pod_full(w, name, gpus, 0, "gpuplane", NULL);
}

static json_t *w_get(struct world *w, const char *path)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(w->admin, "GET", path, NULL, NULL, &r, &d), GP_OK);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    assert_non_null(j);
    return j;
}

static json_t *w_pod_get(struct world *w, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s", name);
    return w_get(w, path);
}

/* The pod's annotation key as the API has it ("" for none; a static
 * buffer, good until the next call). */
__attribute__((unused)) static const char *w_ann(struct world *w, const char *pod, const char *key)
{
    static char out[128];
    json_t *p = w_pod_get(w, pod);
    json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(ann, key));
    snprintf(out, sizeof out, "%s", v ? v : "");
    json_decref(p);
    return out;
}

/* Binds a pod as someone else would (an administrator, another scheduler). */
__attribute__((unused)) static void w_bind(struct world *w, const char *pod, const char *node)
{
    char b[256], path[160];
    snprintf(b, sizeof b,
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\"},"
             "\"target\":{\"kind\":\"Node\",\"name\":\"%s\"}}",
             pod, node);
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/binding", pod);
    kd_call(w->admin, "POST", path, b, 201);
    json_t *o = w_pod_get(w, pod);
    const char *ph = json_string_value(json_object_get(
        json_object_get(json_object_get(o, "metadata"), "annotations"), GP_KUBE_ANN_PHASE));
    bool allocating = ph && strcmp(ph, "allocating") == 0; /* admitted through the agent */
    json_decref(o);
    if (allocating)
        return;
    /* the kubelet admits it (its first sync reports the container waiting):
     * no longer a pod the node agent may be admitting (node/protocol.c) */
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/%s/status", pod);
    kd_call(w->admin, "PATCH", path,
            "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"ready\":false,"
            "\"restartCount\":0,\"image\":\"x\",\"imageID\":\"\",\"state\":{\"waiting\":"
            "{\"reason\":\"ContainerCreating\"}}}]}}",
            200);
}

/* Where the pod is bound ("" when it is not) and the GPUs its annotations
 * name ("" when none), into static buffers. */
__attribute__((unused)) static const char *w_node_of(struct world *w, const char *name,
                                                     const char **gpus)
{
    static char node[64], g[64];
    json_t *p = w_pod_get(w, name);
    const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
    json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
    const char *an = json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE));
    const char *ag = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
    snprintf(node, sizeof node, "%s", n ? n : "");
    snprintf(g, sizeof g, "%s", ag ? ag : "");
    if (n && an && strcmp(n, an) != 0)
        snprintf(g, sizeof g, "mismatch:%s", an);
    json_decref(p);
    if (gpus)
        *gpus = g;
    return node;
}

/* Every bound pod of ours not ended names GPUs of its node, none named twice. */
__attribute__((unused)) static void w_check_distinct(struct world *w)
{
    json_t *list = w_get(w, "/api/v1/pods");
    size_t i;
    json_t *p;
    char seen[256][80];
    size_t nseen = 0;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        json_t *ann = json_object_get(json_object_get(p, "metadata"), "annotations");
        const char *an = json_string_value(json_object_get(ann, GP_KUBE_ANN_NODE));
        const char *ag = json_string_value(json_object_get(ann, GP_KUBE_ANN_GPUS));
        const char *ph = json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
        if (!n || !an || !ag || strcmp(n, an) != 0 ||
            (ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0)))
            continue; /* an ended pod holds nothing, whatever its annotations say */
        struct gp_pick k;
        assert_true(gp_kube_pick_parse(ag, &k));
        for (unsigned g = 0; g < k.ngpus; g++) {
            char key[80];
            snprintf(key, sizeof key, "%s/%u", n, k.gpu[g]);
            for (size_t j = 0; j < nseen; j++)
                if (strcmp(seen[j], key) == 0)
                    fail_msg("GPU %s named twice", key);
            assert_true(nseen < 256);
            snprintf(seen[nseen++], sizeof seen[0], "%s", key);
        }
    }
    json_decref(list);
}

__attribute__((unused)) static long w_stat(struct world *w, const char *what)
{
    json_t *s = w_get(w, "/_control/stats");
    long v = (long)json_integer_value(json_object_get(s, what));
    json_decref(s);
    return v;
}

/* The notes of the Events of reason `reason` about `name`, joined by '|'. */
__attribute__((unused)) static const char *w_events(struct world *w, const char *reason,
                                                    const char *name)
{
    static char out[4096];
    out[0] = '\0';
    json_t *list = w_get(w, "/apis/events.k8s.io/v1/events");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(list, "items"), i, e)
    {
        const char *r = json_string_value(json_object_get(e, "reason"));
        const char *n = json_string_value(json_object_get(json_object_get(e, "regarding"), "name"));
        if (r && n && strcmp(r, reason) == 0 && strcmp(n, name) == 0) {
            size_t len = strlen(out);
            snprintf(out + len, sizeof out - len, "%s%s", len ? "|" : "",
                     json_string_value(json_object_get(e, "note")));
        }
    }
    json_decref(list);
    return out;
}

#endif
