/* lease.c - leader election over a coordination.k8s.io/v1 Lease (lease.h),
 * following client-go's leaderelection.tryAcquireOrRenew: get the Lease
 * (create it when absent), keep following while another holder's record
 * keeps changing within leaseDurationSeconds of this replica's clock,
 * else write this replica as holder (renewTime now, acquireTime and
 * leaseTransitions moved on a change of holder) conditioned on the
 * Lease's resourceVersion. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "kube/lease.h"

void gp_kube_lease_opts_default(struct gp_kube_lease_opts *o)
{
    *o = (struct gp_kube_lease_opts){
        .ns = "kube-system",
        .name = "gpuplane-scheduler",
        .identity = "gpuplane",
        .duration_s = 15,
        .renew_deadline_s = 10,
        .retry_period_s = 2,
    };
}

void gp_kube_lease_client_opts(const struct gp_kube_lease_opts *lo, struct gp_kube_client_opts *co)
{
    double t = lo->renew_deadline_s / 4;
    co->request_timeout_s = t;
    if (co->connect_timeout_s > t)
        co->connect_timeout_s = t;
    co->max_retries = 0;
    co->retry_after_max_s = 0;
}

struct gp_kube_lease {
    struct gp_kube_client *c;
    struct gp_kube_lease_opts o;
    char path[768], coll[512];
    char holder[256];
    char *observed; /* the holder, renewTime and transitions last seen */
    double observed_at;
    double renewed_at; /* this replica's last successful write */
    bool leading;
};

enum gp_err gp_kube_lease_new(struct gp_kube_client *c, const struct gp_kube_lease_opts *o,
                              struct gp_kube_lease **out, struct gp_diag *d)
{
    struct gp_kube_lease *l = calloc(1, sizeof *l);
    if (!l)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    l->c = c;
    l->o = *o;
    snprintf(l->coll, sizeof l->coll, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", o->ns);
    snprintf(l->path, sizeof l->path, "%s/%s", l->coll, o->name);
    l->observed_at = -1e300;
    *out = l;
    return GP_OK;
}

void gp_kube_lease_free(struct gp_kube_lease *l)
{
    if (l)
        free(l->observed);
    free(l);
}

double gp_kube_lease_deadline(const struct gp_kube_lease *l)
{
    return l->leading ? l->renewed_at + l->o.renew_deadline_s : -INFINITY;
}

const char *gp_kube_lease_holder(const struct gp_kube_lease *l)
{
    return l->holder;
}

static void micro_time(char *buf, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char b[32];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.20s.%06dZ", b, (int)(ts.tv_nsec / 1000 % 1000000));
}

static long request(struct gp_kube_lease *l, const char *method, const char *path, json_t *body,
                    json_t **out)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    enum gp_err err =
        gp_kube_request(l->c, method, path, text, text ? "application/json" : NULL, &r, &d);
    free(text);
    *out = NULL;
    if (err != GP_OK)
        return 0;
    long st = r.status;
    *out = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    return st;
}

/* The Lease written with this replica as holder; its spec from `cur` (NULL: a create). */
static bool write(struct gp_kube_lease *l, json_t *cur, double now_s)
{
    char t[40];
    micro_time(t, sizeof t);
    json_t *spec = cur ? json_object_get(cur, "spec") : NULL;
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    bool same = holder && strcmp(holder, l->o.identity) == 0;
    json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
    const char *acquired = json_string_value(json_object_get(spec, "acquireTime"));
    json_t *ns = json_pack("{s:s,s:i,s:s,s:s,s:I}", "holderIdentity", l->o.identity,
                           "leaseDurationSeconds", (int)l->o.duration_s, "acquireTime",
                           same && acquired ? acquired : t, "renewTime", t, "leaseTransitions",
                           cur && !same && holder && holder[0] ? transitions + 1 : transitions);
    json_t *meta = json_pack("{s:s,s:s}", "name", l->o.name, "namespace", l->o.ns);
    const char *rv = cur ? json_string_value(
                               json_object_get(json_object_get(cur, "metadata"), "resourceVersion"))
                         : NULL;
    if (rv)
        json_object_set_new(meta, "resourceVersion", json_string(rv));
    json_t *body = json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "coordination.k8s.io/v1", "kind",
                             "Lease", "metadata", meta, "spec", ns);
    json_t *ans;
    long st =
        cur ? request(l, "PUT", l->path, body, &ans) : request(l, "POST", l->coll, body, &ans);
    json_decref(ans);
    if (st == 200 || st == 201) {
        snprintf(l->holder, sizeof l->holder, "%s", l->o.identity);
        l->renewed_at = now_s;
        l->leading = true;
        return true;
    }
    return false;
}

bool gp_kube_lease_tick(struct gp_kube_lease *l, double now_s)
{
    json_t *cur;
    long st = request(l, "GET", l->path, NULL, &cur);
    bool ok = false;
    if (st == 404) {
        ok = write(l, NULL, now_s);
    } else if (st == 200 && cur) {
        json_t *spec = json_object_get(cur, "spec");
        const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
        char *seen = json_dumps(spec, JSON_SORT_KEYS | JSON_COMPACT);
        if (!l->observed || !seen || strcmp(seen, l->observed) != 0) {
            free(l->observed);
            l->observed = seen; /* the record changed: its holder is alive */
            l->observed_at = now_s;
        } else {
            free(seen);
        }
        snprintf(l->holder, sizeof l->holder, "%s", holder ? holder : "");
        json_t *dur = json_object_get(spec, "leaseDurationSeconds");
        double duration = json_is_integer(dur) ? (double)json_integer_value(dur) : l->o.duration_s;
        bool mine = holder && strcmp(holder, l->o.identity) == 0;
        bool free_ = !holder || !holder[0] || l->observed_at + duration <= now_s;
        if (mine || free_)
            ok = write(l, cur, now_s);
    }
    json_decref(cur);
    if (!ok && l->leading && now_s - l->renewed_at < l->o.renew_deadline_s)
        return true; /* a failed renewal: still leading until the deadline */
    if (!ok)
        l->leading = false;
    return l->leading;
}

void gp_kube_lease_release(struct gp_kube_lease *l)
{
    if (!l->leading)
        return;
    json_t *cur;
    if (request(l, "GET", l->path, NULL, &cur) == 200 && cur) {
        json_t *spec = json_object_get(cur, "spec");
        const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
        if (holder && strcmp(holder, l->o.identity) == 0) {
            json_object_set_new(spec, "holderIdentity", json_string(""));
            json_t *ans;
            request(l, "PUT", l->path, json_incref(cur), &ans);
            json_decref(ans);
        }
    }
    json_decref(cur);
    l->leading = false;
}
