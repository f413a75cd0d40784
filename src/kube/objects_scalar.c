/* objects_scalar.c - the resources kube-scheduler's NodeResourcesFit
 * checks beyond cpu, memory and the GPUs (noderesources/fit.go
 * fitsRequest: the node's pod count, ephemeral-storage, and the scalar
 * resources - hugepages-<size>, extended resources such as
 * example.com/foo, kubernetes.io/-prefixed ones: schedutil
 * IsScalarResourceName), read from the API's JSON into the engine's
 * struct gp_scalar lists (engine/model.h): a Pod's requests counted as
 * every request is (io/podreq.h: app containers and sidecars summed, an
 * init container's larger need with the sidecars before it), a Node's
 * status.allocatable (else capacity) and its `pods`. Amounts are
 * Quantity.Value()'s: bytes, devices, rounded up. NVIDIA's resources
 * (nvidia.com/gpu, gpu.shared, mig-*) are the GPUs' (objects.c,
 * objects_mig.c), not these. And the host ports a Pod's containers bind,
 * which kube-scheduler's NodePorts checks (nodeports/node_ports.go
 * getContainerPorts: spec.containers[].ports[] with a hostPort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/objects.h"
#include "util/units.h"

static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

bool gp_kube_scalar_name(const char *k)
{
    if (strcmp(k, "nvidia.com/gpu") == 0 || strcmp(k, "nvidia.com/gpu.shared") == 0 ||
        strncmp(k, "nvidia.com/mig-", 15) == 0)
        return false;
    return strcmp(k, "ephemeral-storage") == 0 || strncmp(k, "hugepages-", 10) == 0 ||
           strchr(k, '/') != NULL;
}

/* A quantity: the server writes strings; a number is taken as written. */
static bool amount_of(const json_t *v, int64_t *out, enum gp_units_qty *why)
{
    char b[32];
    const char *s = json_string_value(v);
    if (!s && json_is_integer(v)) {
        snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        s = b;
    }
    *why = s ? gp_units_quantity(s, 0, 0, GP_UNITS_QTY_MAX, out) : GP_UNITS_QTY_SYNTAX;
    return *why == GP_UNITS_QTY_OK;
}

/* The accumulator of name, made (zeroed) when new; NULL past the limit. */
static struct gp_podreq *acc_of(struct gp_kube_scalar_acc *sc, const char *name)
{
    for (size_t i = 0; i < sc->n; i++)
        if (strcmp(sc->name[i], name) == 0)
            return &sc->acc[i];
    if (sc->n == GP_MAX_SCALARS)
        return NULL;
    memset(&sc->acc[sc->n], 0, sizeof sc->acc[sc->n]);
    sc->name[sc->n] = name;
    return &sc->acc[sc->n++];
}

enum gp_err gp_kube_scalars_container(struct gp_kube_scalar_acc *sc, const json_t *res, bool init,
                                      bool sidecar, const char *where, struct gp_diag *d)
{
    int64_t need[GP_MAX_SCALARS] = {0};
    const json_t *rq = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
    for (int pass = 0; pass < 2; pass++) { /* a limit without a request is the request */
        const char *k;
        json_t *v;
        json_object_foreach(mut(pass ? lim : rq), k, v)
        {
            if ((pass && json_object_get(rq, k)) || !gp_kube_scalar_name(k))
                continue;
            int64_t x;
            enum gp_units_qty why;
            if (!amount_of(v, &x, &why))
                return gp_diag_set(d, GP_EINVALID, "%s.resources.%s.%s: \"%s\" is %s", where,
                                   pass ? "limits" : "requests", k,
                                   json_string_value(v) ? json_string_value(v) : "?",
                                   why == GP_UNITS_QTY_SYNTAX ? "not a quantity"
                                                              : gp_units_quantity_why(why));
            if (x == 0)
                continue;
            if (!acc_of(sc, k))
                return gp_diag_set(d, GP_EINVALID,
                                   "%s.resources: more than %d resources beyond cpu, memory and "
                                   "NVIDIA's in one pod (gpuplane checks at most %d)",
                                   where, GP_MAX_SCALARS, GP_MAX_SCALARS);
            need[acc_of(sc, k) - sc->acc] = x;
        }
    }
    int64_t v[GP_PODREQ_COUNT] = {0};
    for (size_t i = 0; i < sc->n; i++) {
        v[0] = need[i];
        if (init)
            gp_podreq_init(&sc->acc[i], v, sidecar);
        else
            gp_podreq_app(&sc->acc[i], v);
    }
    return GP_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct gp_scalar *)a)->name, ((const struct gp_scalar *)b)->name);
}

enum gp_err gp_kube_scalars_finish(const struct gp_kube_scalar_acc *sc, struct gp_arena *a,
                                   struct gp_pod_spec *s, struct gp_diag *d)
{
    s->scalars = NULL;
    s->nscalars = 0;
    if (sc->n == 0)
        return GP_OK;
    struct gp_scalar *out = gp_arena_alloc(a, sc->n * sizeof *out);
    if (!out)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < sc->n; i++) {
        int64_t total = gp_podreq_total(&sc->acc[i], 0);
        if (total <= 0)
            continue;
        if (!(out[n].name = gp_arena_strdup(a, sc->name[i])))
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
        out[n++].amount = total;
    }
    qsort(out, n, sizeof *out, by_name);
    s->scalars = n ? out : NULL;
    s->nscalars = n;
    return GP_OK;
}

enum gp_err gp_kube_node_scalars_read(const json_t *alloc, const char *node, struct gp_arena *a,
                                      struct gp_node_spec *s, struct gp_diag *d)
{
    const json_t *pods = json_object_get(alloc, "pods");
    int64_t x;
    enum gp_units_qty why;
    if (pods) {
        if (!amount_of(pods, &x, &why) || x > UINT32_MAX)
            return gp_diag_set(d, GP_EINVALID,
                               "node %s: status.allocatable.pods: not a count of pods", node);
        s->pods_limited = true;
        s->pods_max = (uint32_t)x;
    }
    struct gp_scalar one[GP_MAX_SCALARS];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(mut(alloc), k, v)
    {
        if (!gp_kube_scalar_name(k))
            continue;
        if (!amount_of(v, &x, &why))
            return gp_diag_set(d, GP_EINVALID, "node %s: status.allocatable.%s: %s", node, k,
                               why == GP_UNITS_QTY_SYNTAX ? "not a quantity"
                                                          : gp_units_quantity_why(why));
        if (x == 0)
            continue; /* none of it: as if not listed */
        if (n == GP_MAX_SCALARS)
            return gp_diag_set(d, GP_EINVALID,
                               "node %s: status.allocatable: more than %d resources beyond cpu, "
                               "memory, pods and NVIDIA's (gpuplane checks at most %d)",
                               node, GP_MAX_SCALARS, GP_MAX_SCALARS);
        one[n].name = k;
        one[n++].amount = x;
    }
    s->scalars = NULL;
    s->nscalars = 0;
    if (!n)
        return GP_OK;
    struct gp_scalar *out = gp_arena_alloc(a, n * sizeof *out);
    if (!out)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        out[i].amount = one[i].amount;
        if (!(out[i].name = gp_arena_strdup(a, one[i].name)))
            return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    qsort(out, n, sizeof *out, by_name);
    s->scalars = out;
    s->nscalars = n;
    return GP_OK;
}

enum gp_err gp_kube_node_scalars_split(struct gp_arena *a, struct gp_node_spec *whole,
                                       struct gp_node_spec *mig, uint32_t mig_gpus, uint32_t gpus)
{
    if (gpus == 0)
        return GP_OK;
    if (whole->pods_limited) { /* each part at least one, if the node takes any */
        uint32_t total = whole->pods_max;
        mig->pods_max = (uint32_t)((uint64_t)total * mig_gpus / gpus);
        if (mig->pods_max == 0 && total > 0)
            mig->pods_max = 1;
        whole->pods_max = total > mig->pods_max ? total - mig->pods_max : (total > 0);
    }
    if (whole->nscalars == 0)
        return GP_OK;
    struct gp_scalar *w = gp_arena_alloc(a, whole->nscalars * sizeof *w);
    struct gp_scalar *m = gp_arena_alloc(a, whole->nscalars * sizeof *m);
    if (!w || !m)
        return GP_ENOMEM;
    size_t nw = 0, nm = 0; /* (an amount shared out to 0: not listed) */
    for (size_t i = 0; i < whole->nscalars; i++) {
        int64_t all = whole->scalars[i].amount, part = all * (int64_t)mig_gpus / (int64_t)gpus;
        if (part > 0)
            m[nm++] = (struct gp_scalar){whole->scalars[i].name, part};
        if (all - part > 0)
            w[nw++] = (struct gp_scalar){whole->scalars[i].name, all - part};
    }
    whole->scalars = nw ? w : NULL;
    whole->nscalars = nw;
    mig->scalars = nm ? m : NULL;
    mig->nscalars = nm;
    return GP_OK;
}

enum gp_err gp_kube_pod_ports_read(const json_t *spec, struct gp_arena *a, struct gp_pod_spec *s,
                                   struct gp_diag *d)
{
    s->host_ports = NULL;
    s->nhost_ports = 0;
    size_t i, j, n = 0;
    json_t *c, *port;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        json_array_foreach(json_object_get(c, "ports"), j, port)
        {
            n += json_integer_value(json_object_get(port, "hostPort")) != 0;
        }
    }
    if (n == 0)
        return GP_OK; /* the common pod */
    struct gp_host_port *out = gp_arena_alloc(a, n * sizeof *out);
    if (!out)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    size_t k = 0;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        json_array_foreach(json_object_get(c, "ports"), j, port)
        {
            const json_t *hp = json_object_get(port, "hostPort");
            json_int_t v = json_integer_value(hp);
            if (v == 0)
                continue;
            if (!json_is_integer(hp) || v < 1 || v > 65535)
                return gp_diag_set(d, GP_EINVALID,
                                   "spec.containers[%zu].ports[%zu].hostPort: not a port from 1 "
                                   "to 65535",
                                   i, j);
            const char *proto = json_string_value(json_object_get(port, "protocol"));
            static const char *const names[] = {"TCP", "UDP", "SCTP"};
            int pr = proto ? -1 : GP_PROTO_TCP; /* the API's default */
            for (int q = 0; proto && q < 3; q++)
                if (strcmp(proto, names[q]) == 0)
                    pr = q;
            if (pr < 0)
                return gp_diag_set(d, GP_EINVALID,
                                   "spec.containers[%zu].ports[%zu].protocol: \"%s\" is not TCP, "
                                   "UDP or SCTP",
                                   i, j, proto);
            const char *ip = json_string_value(json_object_get(port, "hostIP"));
            out[k].ip = ip && ip[0] ? gp_arena_strdup(a, ip) : NULL;
            if (ip && ip[0] && !out[k].ip)
                return gp_diag_set(d, GP_ENOMEM, "out of memory");
            out[k].port = (uint16_t)v;
            out[k++].protocol = (uint8_t)pr;
        }
    }
    s->host_ports = out;
    s->nhost_ports = k;
    return GP_OK;
}
