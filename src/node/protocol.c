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

/* The whole number a container asks of resource (its limits, else its
 * requests: the kubelet reads the limits of an extended resource); 0
 * when it asks none or the value does not read. */
static unsigned ctr_asks(json_t *c, const char *resource)
{
    json_t *res = json_object_get(c, "resources");
    json_t *v = json_object_get(json_object_get(res, "limits"), resource);
    if (!v)
        v = json_object_get(json_object_get(res, "requests"), resource);
    if (json_is_integer(v))
        return json_integer_value(v) > 0 && json_integer_value(v) <= 1024
                   ? (unsigned)json_integer_value(v)
                   : 0;
    const char *t = json_string_value(v);
    char *end = NULL;
    unsigned long n = t && *t >= '0' && *t <= '9' ? strtoul(t, &end, 10) : 0;
    return end && !*end && n <= 1024 ? (unsigned)n : 0;
}

/* Whether some container of the pod asks resource (n > 0: exactly n of
 * it, the size of the kubelet's request for that container). */
static bool pod_asks(json_t *pod, const char *resource, size_t n)
{
    json_t *spec = json_object_get(pod, "spec");
    const char *lists[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        json_t *cs = json_object_get(spec, lists[l]);
        for (size_t i = 0; i < json_array_size(cs); i++) {
            unsigned k = ctr_asks(json_array_get(cs, i), resource);
            if (k > 0 && (n == 0 || k == n))
                return true;
        }
    }
    return false;
}

/* The kubelet has admitted it already, as far as the API tells: a
 * container status of any state (the kubelet reports them, waiting in
 * ContainerCreating, from its first sync after the admission). */
static bool has_statuses(json_t *pod)
{
    json_t *st = json_object_get(pod, "status");
    return json_array_size(json_object_get(st, "containerStatuses")) > 0 ||
           json_array_size(json_object_get(st, "initContainerStatuses")) > 0;
}

static bool served_has(const struct gp_node_protocol *p, const char *uid)
{
    for (size_t i = 0; uid && *uid && i < GP_NODE_PROTOCOL_SERVED; i++)
        if (strcmp(p->served_uid[i], uid) == 0)
            return true;
    return false;
}

/* What one look found: the pods bound here that the kubelet may be
 * admitting now, as the API has them. */
struct look {
    int allocating; /* ours, gpuplane.io/phase allocating on this node */
    int expired;    /* ours, given up by the scheduler (phase expired) */
    int misplaced;  /* ours, with gpuplane.io/node naming another node */
    int foreign;    /* not placed by gpuplane (no gpuplane.io/phase) */
    char alloc_pod[2][320];
    char other_pod[320]; /* the first candidate not allocating */
    char other_why[192];
    char foreign_uid[128];
};

/* One look: the candidates of the Allocate at hand (the first pod
 * allocating into out, its namespace and name into p->ns, p->name);
 * -1 when the API could not be asked or the pod's annotations do not
 * read. */
static int look(struct gp_node_protocol *p, const char *resource, size_t n_devices,
                struct gp_node_choice *out, struct look *lk, struct gp_diag *diag)
{
    char path[512];
    memset(lk, 0, sizeof *lk);
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
    json_t *items = json_object_get(list, "items");
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *pod = json_array_get(items, i);
        const char *node = ann(pod, GP_KUBE_ANN_NODE), *phase = ann(pod, GP_KUBE_ANN_PHASE);
        json_t *meta = json_object_get(pod, "metadata");
        const char *uid = json_string_value(json_object_get(meta, "uid"));
        bool deleting = json_object_get(meta, "deletionTimestamp") &&
                        !json_is_null(json_object_get(meta, "deletionTimestamp"));
        bool ours = phase != NULL;
        /* admitted, going, or served by this agent: no Allocate's pod */
        if (deleting || admitted(pod) || has_statuses(pod) || served_has(p, uid) ||
            (ours && strcmp(phase, GP_NODE_PHASE_ALLOCATED) == 0))
            continue;
        /* a pod that asks nothing of the resource (or, not ours, not this
         * request's size in any container) is not the one */
        if (!pod_asks(pod, resource, ours ? 0 : n_devices))
            continue;
        const char *pns = json_string_value(json_object_get(meta, "namespace"));
        const char *pname = json_string_value(json_object_get(meta, "name"));
        char who[320];
        snprintf(who, sizeof who, "%s/%s", pns ? pns : "", pname ? pname : "");
        bool here = node && strcmp(node, p->node) == 0;
        if (!ours || !here || strcmp(phase, GP_NODE_PHASE_ALLOCATING) != 0) {
            if (!ours && lk->foreign++ == 0)
                snprintf(lk->foreign_uid, sizeof lk->foreign_uid, "%s", uid ? uid : "");
            else if (ours && strcmp(phase, GP_NODE_PHASE_EXPIRED) == 0)
                lk->expired++;
            else if (ours)
                lk->misplaced++;
            if (!lk->other_pod[0]) {
                snprintf(lk->other_pod, sizeof lk->other_pod, "%s", who);
                if (!ours)
                    snprintf(lk->other_why, sizeof lk->other_why, "(not placed by gpuplane)");
                else if (strcmp(phase, GP_NODE_PHASE_EXPIRED) == 0)
                    snprintf(lk->other_why, sizeof lk->other_why, "(%s: %s)", GP_KUBE_ANN_PHASE,
                             GP_NODE_PHASE_EXPIRED);
                else
                    snprintf(lk->other_why, sizeof lk->other_why, "(%s: %.32s, %s: %.32s)",
                             GP_KUBE_ANN_NODE, node ? node : "none", GP_KUBE_ANN_PHASE, phase);
            }
            continue;
        }
        if (lk->allocating < 2)
            snprintf(lk->alloc_pod[lk->allocating], sizeof lk->alloc_pod[0], "%s", who);
        if (lk->allocating++ > 0)
            continue;
        snprintf(p->ns, sizeof p->ns, "%s", pns ? pns : "");
        snprintf(p->name, sizeof p->name, "%s", pname ? pname : "");
        snprintf(p->rv, sizeof p->rv, "%s",
                 json_string_value(json_object_get(meta, "resourceVersion"))
                     ? json_string_value(json_object_get(meta, "resourceVersion"))
                     : "");
        snprintf(out->pod, sizeof out->pod, "%s", who);
        struct gp_pick pick;
        const char *gpus = ann(pod, GP_KUBE_ANN_GPUS);
        if (!gpus || !gp_kube_pick_parse(gpus, &pick)) {
            gp_diag_set(diag, GP_EINVALID, "pod %s: %s is \"%s\", not a list of GPU indexes", who,
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
            gp_diag_set(diag, GP_EINVALID, "pod %s: %s", who, md.msg);
            json_decref(list);
            return -1;
        }
    }
    json_decref(list);
    return 0;
}

enum gp_err gp_node_protocol_choice(void *ctx, const char *resource, size_t n_devices, bool wait,
                                    struct gp_node_choice *out, struct gp_diag *diag)
{
    struct gp_node_protocol *p = ctx;
    memset(out, 0, sizeof *out);
    double until = now_s() + (wait ? p->wait_s : 0);
    struct look lk;
    for (;;) {
        if (look(p, resource, wait ? n_devices : 0, out, &lk, diag) < 0) {
            memset(out, 0, sizeof *out);
            if (wait)
                p->refused++;
            return GP_EIO;
        }
        int others = lk.expired + lk.misplaced + lk.foreign;
        if (lk.allocating > 1) { /* the protocol broken: never guessed */
            memset(out, 0, sizeof *out);
            if (wait)
                p->refused++;
            return gp_diag_set(diag, GP_ESTATE,
                               "%d pods allocating on node %s at once (%s, %s, ...): the per-node "
                               "protocol allows one; refusing rather than guessing",
                               lk.allocating, p->node, lk.alloc_pod[0], lk.alloc_pod[1]);
        }
        if (lk.allocating == 1 && others == 0) { /* the one pod being admitted */
            out->set = true;
            return GP_OK;
        }
        if (lk.allocating == 0 && lk.foreign > 0 && lk.expired + lk.misplaced == 0) {
            /* pods another scheduler placed, none of ours: the kubelet's
             * devices, as NVIDIA's plugin serves them */
            memset(out, 0, sizeof *out);
            if (wait) {
                p->foreign++;
                if (lk.foreign == 1 && lk.foreign_uid[0]) { /* it is no candidate again */
                    snprintf(p->served_uid[p->served_next], sizeof p->served_uid[0], "%s",
                             lk.foreign_uid);
                    p->served_next = (p->served_next + 1) % GP_NODE_PROTOCOL_SERVED;
                }
            }
            return GP_OK;
        }
        if (!wait || now_s() >= until)
            break;
        struct timespec ts = {0, (long)(p->poll_s * 1e9)};
        nanosleep(&ts, NULL);
    }
    memset(out, 0, sizeof *out);
    if (!wait) /* GetPreferredAllocation: no preference */
        return GP_OK;
    p->refused++;
    if (lk.allocating == 0 && lk.expired + lk.misplaced == 1 && lk.foreign == 0)
        return gp_diag_set(diag, GP_ESTATE,
                           "pod %s %s is no longer the scheduler's decision on node %s: its "
                           "GPUs may be another pod's now; refusing (the pod fails with "
                           "UnexpectedAdmissionError and its controller makes a new one)",
                           lk.other_pod, lk.other_why, p->node);
    if (lk.allocating + lk.expired + lk.misplaced + lk.foreign == 0)
        return gp_diag_set(diag, GP_ESTATE,
                           "no pod bound to node %s awaits admission asking %zu %s: cannot tell "
                           "which pod this Allocate serves; refusing rather than guessing",
                           p->node, n_devices, resource);
    char first[1024];
    if (lk.allocating)
        snprintf(first, sizeof first, "%s allocating, %s %s", lk.alloc_pod[0], lk.other_pod,
                 lk.other_why);
    else
        snprintf(first, sizeof first, "%s %s, ...", lk.other_pod, lk.other_why);
    return gp_diag_set(diag, GP_ESTATE,
                       "%d pods bound to node %s await admission asking %s (%s): cannot tell "
                       "which one this Allocate serves; refusing rather than guessing",
                       lk.allocating + lk.expired + lk.misplaced + lk.foreign, p->node, resource,
                       first);
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
     * its Allocate lock over the look, the answer and this), on the
     * version the look saw: a pod the scheduler gave up on meanwhile
     * (phase expired, its GPUs free for another) makes the patch a 409
     * and the answer a refusal; a pod changed otherwise is read again */
    char path[512], body[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
    struct gp_diag d = {{0}};
    enum gp_err e = GP_OK;
    for (int attempt = 0; attempt < 3; attempt++) {
        char rvs[96] = "";
        if (p->rv[0])
            snprintf(rvs, sizeof rvs, "\"resourceVersion\":\"%s\",", p->rv);
        snprintf(body, sizeof body, "{\"metadata\":{%s\"annotations\":{\"%s\":\"%s\"}}}", rvs,
                 GP_KUBE_ANN_PHASE, GP_NODE_PHASE_ALLOCATED);
        struct gp_kube_response r = {0};
        pthread_mutex_lock(&p->mu);
        e = gp_kube_request(p->client, "PATCH", path, body, "application/merge-patch+json", &r, &d);
        pthread_mutex_unlock(&p->mu);
        long status = r.status;
        if (e == GP_OK)
            e = gp_kube_status_err(r.status, r.body, "PATCH", path, &d);
        gp_kube_response_free(&r);
        if (e == GP_OK || status != 409)
            break;
        /* the pod changed since the look: still this node's allocating pod? */
        struct gp_kube_response g = {0};
        pthread_mutex_lock(&p->mu);
        enum gp_err ge = gp_kube_request(p->client, "GET", path, NULL, NULL, &g, &d);
        pthread_mutex_unlock(&p->mu);
        json_t *pod = ge == GP_OK && g.status == 200 ? json_loads(g.body, 0, NULL) : NULL;
        gp_kube_response_free(&g);
        const char *phase = pod ? ann(pod, GP_KUBE_ANN_PHASE) : NULL;
        const char *node = pod ? ann(pod, GP_KUBE_ANN_NODE) : NULL;
        const char *rv = pod ? json_string_value(json_object_get(json_object_get(pod, "metadata"),
                                                                 "resourceVersion"))
                             : NULL;
        bool still = phase && node && rv && strcmp(phase, GP_NODE_PHASE_ALLOCATING) == 0 &&
                     strcmp(node, p->node) == 0;
        if (still)
            snprintf(p->rv, sizeof p->rv, "%s", rv);
        else
            gp_diag_set(&d, GP_ESTATE, "it is %s %s now, no longer allocating on node %s",
                        GP_KUBE_ANN_PHASE, phase ? phase : "(none)", p->node);
        json_decref(pod);
        if (!still) {
            e = GP_ESTATE;
            break;
        }
    }
    if (e != GP_OK) {
        p->refused++;
        return gp_diag_set(diag, e, "pod %s/%s could not be marked %s: %s", p->ns, p->name,
                           GP_NODE_PHASE_ALLOCATED, d.msg);
    }
    p->served++;
    return GP_OK;
}
