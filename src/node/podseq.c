/* podseq.c - a pod of several GPU containers served one Allocate at a
 * time: each container's part of the pod's GPU list, the next container
 * handed out, duplicates across containers refused, the pod marked
 * allocated after its last container (podseq.h). */
#include "node/podseq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/objects.h"

void gp_node_podseq_init(struct gp_node_podseq *s, struct gp_node_protocol *proto)
{
    memset(s, 0, sizeof *s);
    s->proto = proto;
    pthread_mutex_init(&s->mu, NULL);
}

void gp_node_podseq_destroy(struct gp_node_podseq *s)
{
    pthread_mutex_destroy(&s->mu);
}

/* --- the plan ---------------------------------------------------------- */

/* resources.limits[resource] (the kubelet reads the limits; requests when
 * there are none) as a whole number; 0 when absent. */
static enum gp_err ask(const json_t *c, const char *resource, const char *where, unsigned *out,
                       struct gp_diag *diag)
{
    const json_t *res = json_object_get(c, "resources");
    const json_t *v = json_object_get(json_object_get(res, "limits"), resource);
    if (!v)
        v = json_object_get(json_object_get(res, "requests"), resource);
    *out = 0;
    if (!v)
        return GP_OK;
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 1024) {
        *out = (unsigned)json_integer_value(v);
        return GP_OK;
    }
    const char *s = json_string_value(v);
    char *end = NULL;
    unsigned long n = s && *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
    if (!s || !end || *end || n > 1024)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s.resources.limits.%s: \"%s\" is not a whole number", where, resource,
                           s ? s : "(not a string)");
    *out = (unsigned)n;
    return GP_OK;
}

static enum gp_err plan_add(struct gp_node_podplan *p, const json_t *c, enum gp_node_ctr_kind kind,
                            unsigned n, unsigned first, const char *where, struct gp_diag *diag)
{
    if (p->n == GP_NODE_PODSEQ_MAX_CTRS)
        return gp_diag_set(diag, GP_ELIMIT, "%s: more than %d containers asking one resource",
                           where, GP_NODE_PODSEQ_MAX_CTRS);
    struct gp_node_ctr *x = &p->c[p->n++];
    const char *name = json_string_value(json_object_get(c, "name"));
    snprintf(x->name, sizeof x->name, "%s", name ? name : "");
    x->kind = kind;
    x->n = n;
    x->first = first;
    return GP_OK;
}

enum gp_err gp_node_podplan_read(const json_t *pod, const char *resource, size_t n_gpus, bool split,
                                 struct gp_node_podplan *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->split = split;
    const json_t *spec = json_object_get(pod, "spec");
    unsigned held = 0; /* GPUs kept by the sidecars and app containers so far */
    char where[64];
    enum gp_err e = GP_OK;
    const json_t *inits = json_object_get(spec, "initContainers");
    for (size_t i = 0; i < json_array_size(inits) && e == GP_OK; i++) {
        const json_t *c = json_array_get(inits, i);
        unsigned n;
        snprintf(where, sizeof where, "spec.initContainers[%zu]", i);
        if ((e = ask(c, resource, where, &n, diag)) != GP_OK || n == 0)
            continue;
        const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
        bool sidecar = rp && strcmp(rp, "Always") == 0;
        e = plan_add(out, c, sidecar ? GP_NODE_CTR_SIDECAR : GP_NODE_CTR_INIT, n, held, where,
                     diag);
        if (held + n > out->gpus_needed)
            out->gpus_needed = held + n;
        if (sidecar)
            held += n;
    }
    const json_t *ctrs = json_object_get(spec, "containers");
    for (size_t i = 0; i < json_array_size(ctrs) && e == GP_OK; i++) {
        const json_t *c = json_array_get(ctrs, i);
        unsigned n;
        snprintf(where, sizeof where, "spec.containers[%zu]", i);
        if ((e = ask(c, resource, where, &n, diag)) != GP_OK || n == 0)
            continue;
        e = plan_add(out, c, GP_NODE_CTR_APP, n, held, where, diag);
        held += n;
        if (held > out->gpus_needed)
            out->gpus_needed = held;
    }
    if (e != GP_OK)
        return e;
    if (split && out->gpus_needed > n_gpus)
        return gp_diag_set(diag, GP_EINVALID,
                           "its containers need %u GPU(s) of %s (restartable init and app "
                           "containers keep theirs), %s names %zu",
                           out->gpus_needed, resource, GP_KUBE_ANN_GPUS, n_gpus);
    return GP_OK;
}

/* --- the pod at hand ------------------------------------------------------ */

/* The pod the protocol's last choice named, as the API has it now. */
static json_t *pod_get(struct gp_node_protocol *p, struct gp_diag *diag)
{
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
    struct gp_kube_response r = {0};
    pthread_mutex_lock(&p->mu);
    enum gp_err e = gp_kube_request(p->client, "GET", path, NULL, NULL, &r, diag);
    pthread_mutex_unlock(&p->mu);
    if (e == GP_OK)
        e = gp_kube_status_err(r.status, r.body, "GET", path, diag);
    json_t *pod = e == GP_OK ? json_loads(r.body, 0, NULL) : NULL;
    if (e == GP_OK && !pod)
        gp_diag_set(diag, GP_EIO, "GET %s: the answer is not JSON", path);
    gp_kube_response_free(&r);
    return pod;
}

static void reset(struct gp_node_podseq *s)
{
    s->uid[0] = '\0';
    s->resource[0] = '\0';
    s->next = s->pending = s->n_held = 0;
    memset(&s->plan, 0, sizeof s->plan);
}

/* A new pod (or the same one from its first container again): its plan.
 * With s->mu held. */
static enum gp_err begin(struct gp_node_podseq *s, const json_t *pod, const char *uid,
                         const char *resource, const struct gp_node_choice *pc,
                         struct gp_diag *diag)
{
    reset(s);
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    bool mig = json_object_get(ann, GP_KUBE_ANN_MIG) != NULL;
    struct gp_diag d;
    if (gp_node_podplan_read(pod, resource, pc->n, !mig, &s->plan, &d) != GP_OK)
        return gp_diag_set(diag, GP_EINVALID, "pod %s: %s", pc->pod, d.msg);
    if (s->plan.n == 0)
        return gp_diag_set(diag, GP_EINVALID,
                           "pod %s is allocating on this node but none of its containers asks %s",
                           pc->pod, resource);
    snprintf(s->uid, sizeof s->uid, "%s", uid);
    snprintf(s->resource, sizeof s->resource, "%s", resource);
    s->n_gpus = pc->n;
    memcpy(s->gpus, pc->index, sizeof s->gpus);
    return GP_OK;
}

enum gp_err gp_node_podseq_choice(void *ctx, const char *resource, size_t n_devices, bool wait,
                                  struct gp_node_choice *out, struct gp_diag *diag)
{
    struct gp_node_podseq *s = ctx;
    enum gp_err e = gp_node_protocol_choice(s->proto, resource, n_devices, wait, out, diag);
    if (e != GP_OK || !out->set)
        return e;
    json_t *pod = pod_get(s->proto, diag);
    if (!pod) {
        memset(out, 0, sizeof *out);
        return GP_EIO;
    }
    const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    uid = uid ? uid : "";
    pthread_mutex_lock(&s->mu);
    /* the next container of the pod being served, else its first */
    if (strcmp(s->uid, uid) != 0 || strcmp(s->resource, resource) != 0 || s->next >= s->plan.n)
        e = begin(s, pod, uid, resource, out, diag);
    json_decref(pod);
    const struct gp_node_ctr *c = e == GP_OK ? &s->plan.c[s->next] : NULL;
    if (c && wait && n_devices != c->n)
        e = gp_diag_set(diag, GP_EINVALID,
                        "pod %s: container %s asks %u %s, the kubelet's Allocate has %zu device(s) "
                        "(containers out of the kubelet's order?)",
                        out->pod, c->name, c->n, resource, n_devices);
    if (e != GP_OK) {
        reset(s);
        pthread_mutex_unlock(&s->mu);
        memset(out, 0, sizeof *out);
        return e;
    }
    snprintf(out->container, sizeof out->container, "%s", c->name);
    out->n_pod = s->n_gpus;
    memcpy(out->pod_index, s->gpus, sizeof out->pod_index);
    if (s->plan.split) {
        out->n = c->n;
        for (unsigned i = 0; i < c->n; i++)
            out->index[i] = s->gpus[c->first + i];
    }
    if (wait)
        s->pending = s->next;
    pthread_mutex_unlock(&s->mu);
    return GP_OK;
}

enum gp_err gp_node_podseq_done(void *ctx, const char *resource,
                                const struct gp_node_choice *choice,
                                const struct gp_node_alloc *alloc, bool ok, struct gp_diag *diag)
{
    struct gp_node_podseq *s = ctx;
    if (!choice->set)
        return GP_OK;
    pthread_mutex_lock(&s->mu);
    enum gp_err e = GP_OK;
    const struct gp_node_ctr *c = s->pending < s->plan.n ? &s->plan.c[s->pending] : NULL;
    if (ok && !c)
        e = gp_diag_set(diag, GP_ESTATE, "pod %s: no container of it waits for %s", choice->pod,
                        resource);
    if (ok && c && c->kind != GP_NODE_CTR_INIT) {
        /* a sidecar or app container keeps its devices: none of them may
         * be another's too (a plain init container's may: it has ended) */
        for (size_t i = 0; alloc && i < alloc->n_asked && e == GP_OK; i++)
            for (size_t k = 0; k < s->n_held && e == GP_OK; k++)
                if (strcmp(alloc->asked[i], s->held[k]) == 0)
                    e = gp_diag_set(diag, GP_EINVALID,
                                    "%s: device ID \"%s\" asked for container %s of pod %s, "
                                    "which another of its containers holds",
                                    resource, alloc->asked[i], c->name, choice->pod);
        for (size_t i = 0; alloc && i < alloc->n_asked && e == GP_OK; i++)
            if (s->n_held < GP_NODE_ALLOC_MAX)
                memcpy(s->held[s->n_held++], alloc->asked[i], GP_NODE_DEV_ID_LEN);
    }
    bool last = false;
    if (ok && e == GP_OK) {
        s->next = s->pending + 1;
        last = s->next >= s->plan.n;
    } else
        reset(s);
    pthread_mutex_unlock(&s->mu);
    if (!ok || e != GP_OK) {
        struct gp_diag dd;
        gp_node_protocol_done(s->proto, resource, choice, alloc, false, &dd);
        return e;
    }
    /* the pod allocated once its last container is served */
    return last ? gp_node_protocol_done(s->proto, resource, choice, alloc, true, diag) : GP_OK;
}
