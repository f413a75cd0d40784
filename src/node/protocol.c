/* protocol.c - finding the pod an Allocate serves (the one pod with
 * gpuplane.io/phase=allocating on this node), with the GPUs and MIG
 * instances the scheduler chose, and marking it allocated (protocol.h). */
#include "node/protocol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "kube/objects.h"

void gp_node_protocol_init(struct gp_node_protocol *p, struct gp_kube_client *client,
                           const char *node)
{
    memset(p, 0, sizeof *p);
    p->client = client;
    p->node = node;
    p->wait_s = 2.0;
    p->poll_s = 0.05;
    pthread_mutex_init(&p->mu, NULL);
}

void gp_node_protocol_destroy(struct gp_node_protocol *p)
{
    pthread_mutex_destroy(&p->mu);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *ann(json_t *pod, const char *key)
{
    json_t *a = json_object_get(json_object_get(pod, "metadata"), "annotations");
    return json_string_value(json_object_get(a, key));
}

/* A pod the kubelet is done admitting, whatever its annotation says: it
 * ended (a refused Allocate makes it Failed, reason
 * UnexpectedAdmissionError) or a container of it started. Such a pod left
 * at "allocating" is no Allocate's pod and must block none (docs/node.md,
 * "Which pod an Allocate serves"). A pod the scheduler gave up on is
 * "expired", not "allocating", and is not counted either. */
static bool admitted(json_t *pod)
{
    json_t *st = json_object_get(pod, "status");
    const char *phase = json_string_value(json_object_get(st, "phase"));
    if (phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0 ||
                  strcmp(phase, "Running") == 0))
        return true;
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
    {
        json_t *state = json_object_get(cs, "state");
        if (json_object_get(state, "running") || json_object_get(state, "terminated"))
            return true;
    }
    return false;
}

/* One look: how many pods are allocating on the node (the first into
 * out); -1 when the API could not be asked. */
static int look(struct gp_node_protocol *p, struct gp_node_choice *out, char *ns, size_t nsn,
                char *name, size_t namen, struct gp_diag *diag)
{
    char path[512];
    /* bound pods only: the kubelet admits a pod after its Binding */
    snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", p->node);
    struct gp_kube_response r = {0};
    pthread_mutex_lock(&p->mu);
    enum gp_err e = gp_kube_request(p->client, "GET", path, NULL, NULL, &r, diag);
    pthread_mutex_unlock(&p->mu);
    if (e == GP_OK)
        e = gp_kube_status_err(r.status, r.body, "GET", path, diag);
    if (e != GP_OK) {
        gp_kube_response_free(&r);
        return -1;
    }
    json_t *list = json_loads(r.body, 0, NULL);
    gp_kube_response_free(&r);
    int n = 0;
    char first[320] = "", second[320] = "";
    json_t *items = json_object_get(list, "items");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *pod = json_array_get(items, i);
        const char *node = ann(pod, GP_KUBE_ANN_NODE), *phase = ann(pod, GP_KUBE_ANN_PHASE);
        json_t *meta = json_object_get(pod, "metadata");
        if (!node || strcmp(node, p->node) != 0 || !phase ||
            strcmp(phase, GP_NODE_PHASE_ALLOCATING) != 0 ||
            (json_object_get(meta, "deletionTimestamp") &&
             !json_is_null(json_object_get(meta, "deletionTimestamp"))) ||
            admitted(pod))
            continue;
        const char *pns = json_string_value(json_object_get(meta, "namespace"));
        const char *pname = json_string_value(json_object_get(meta, "name"));
        char *dst = n == 0 ? first : second;
        snprintf(dst, sizeof first, "%s/%s", pns ? pns : "", pname ? pname : "");
        if (n++ > 0)
            continue;
        snprintf(ns, nsn, "%s", pns ? pns : "");
        snprintf(name, namen, "%s", pname ? pname : "");
        snprintf(out->pod, sizeof out->pod, "%s", first);
        struct gp_pick pick;
        const char *gpus = ann(pod, GP_KUBE_ANN_GPUS);
        if (!gpus || !gp_kube_pick_parse(gpus, &pick)) {
            gp_diag_set(diag, GP_EINVALID, "pod %s: %s is \"%s\", not a list of GPU indexes", first,
                        GP_KUBE_ANN_GPUS, gpus ? gpus : "");
            json_decref(list);
            return -1;
        }
        out->n = pick.ngpus;
        for (size_t g = 0; g < pick.ngpus; g++)
            out->index[g] = pick.gpu[g];
        /* the exact MIG instances (docs/kube.md, "Annotations") */
        const char *mig = ann(pod, GP_KUBE_ANN_MIG);
        struct gp_diag md;
        if (mig && gp_node_choice_mig_parse(mig, out, &md) != GP_OK) {
            gp_diag_set(diag, GP_EINVALID, "pod %s: %s", first, md.msg);
            json_decref(list);
            return -1;
        }
    }
    json_decref(list);
    if (n > 1)
        gp_diag_set(diag, GP_ESTATE,
                    "%d pods allocating on node %s at once (%s, %s, ...): the per-node protocol "
                    "allows one; refusing rather than guessing",
                    n, p->node, first, second);
    return n;
}

enum gp_err gp_node_protocol_choice(void *ctx, const char *resource, size_t n_devices, bool wait,
                                    struct gp_node_choice *out, struct gp_diag *diag)
{
    struct gp_node_protocol *p = ctx;
    (void)resource;
    (void)n_devices;
    memset(out, 0, sizeof *out);
    double until = now_s() + (wait ? p->wait_s : 0);
    for (;;) {
        char ns[128], name[128];
        int n = look(p, out, ns, sizeof ns, name, sizeof name, diag);
        if (n < 0 || n > 1) {
            memset(out, 0, sizeof *out);
            if (wait)
                p->refused++;
            return n > 1 ? GP_ESTATE : GP_EIO;
        }
        if (n == 1) {
            out->set = true;
            snprintf(p->ns, sizeof p->ns, "%s", ns);
            snprintf(p->name, sizeof p->name, "%s", name);
            return GP_OK;
        }
        if (now_s() >= until)
            break;
        struct timespec ts = {0, (long)(p->poll_s * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (wait)
        p->foreign++;
    return GP_OK;
}

enum gp_err gp_node_protocol_done(void *ctx, const char *resource,
                                  const struct gp_node_choice *choice,
                                  const struct gp_node_alloc *alloc, bool ok, struct gp_diag *diag)
{
    struct gp_node_protocol *p = ctx;
    (void)resource;
    (void)alloc;
    if (!choice->set)
        return GP_OK;
    if (!ok) {
        p->refused++;
        return GP_OK;
    }
    /* phase allocated before the next Allocate looks (the plugin holds
     * its Allocate lock over the look, the answer and this) */
    char path[512], body[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
    snprintf(body, sizeof body, "{\"metadata\":{\"annotations\":{\"%s\":\"%s\"}}}",
             GP_KUBE_ANN_PHASE, GP_NODE_PHASE_ALLOCATED);
    struct gp_kube_response r = {0};
    struct gp_diag d;
    pthread_mutex_lock(&p->mu);
    enum gp_err e =
        gp_kube_request(p->client, "PATCH", path, body, "application/merge-patch+json", &r, &d);
    pthread_mutex_unlock(&p->mu);
    if (e == GP_OK)
        e = gp_kube_status_err(r.status, r.body, "PATCH", path, &d);
    gp_kube_response_free(&r);
    if (e != GP_OK) {
        p->refused++;
        return gp_diag_set(diag, e, "pod %s/%s could not be marked %s: %s", p->ns, p->name,
                           GP_NODE_PHASE_ALLOCATED, d.msg);
    }
    p->served++;
    return GP_OK;
}
