/* config.c - gpuplane schedule's ConfigMap read into a configuration,
 * checked whole, and applied to a running scheduler between cycles
 * (config.h). */
#include "kube/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "kube/sched_internal.h"

void gp_kube_conf_from_opts(const struct gp_kube_sched_opts *o, struct gp_kube_conf *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->scheduler_name, sizeof out->scheduler_name, "%s",
             o->scheduler_name ? o->scheduler_name : "gpuplane");
    snprintf(out->policy, sizeof out->policy, "%s", o->policy ? o->policy : "best-fit");
    out->backoff_initial_s = o->backoff_initial_s;
    out->backoff_max_s = o->backoff_max_s;
}

/* A DNS-1123 subdomain: labels of [a-z0-9-], alphanumeric at both ends,
 * at most 63 each, joined by '.', at most 253 in all (spec.schedulerName's
 * rule). */
static bool subdomain(const char *s)
{
    size_t n = strlen(s), label = 0;
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.') {
            if (label == 0 || s[i - 1] == '-')
                return false;
            label = 0;
        } else if (alnum || (c == '-' && label > 0)) {
            if (++label > 63)
                return false;
        } else {
            return false;
        }
    }
    return s[n - 1] != '-' && s[n - 1] != '.';
}

/* Seconds: a decimal number > 0 and at most a day, nothing after it. */
static bool seconds(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v <= 0 || v > 86400)
        return false;
    *out = v;
    return true;
}

static void policy_names(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; gp_policies[i] && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", gp_policies[i]->name);
}

enum gp_err gp_kube_conf_parse(const json_t *cm, const struct gp_kube_conf *base,
                               struct gp_kube_conf *out, struct gp_diag *d)
{
    struct gp_kube_conf c = *base;
    if (!cm) {
        *out = c;
        return GP_OK;
    }
    const json_t *meta = json_object_get(cm, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    char who[400];
    snprintf(who, sizeof who, "ConfigMap %s/%s", ns ? ns : "", name ? name : "");
    const json_t *data = json_object_get(cm, "data");
    if (data && !json_is_object(data))
        return gp_diag_set(d, GP_EINVALID, "%s: data: expected an object of strings", who);
    const char *key;
    json_t *v;
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = data}; /* jansson's iterator takes a non-const object; nothing is changed */
    json_object_foreach(u.m, key, v)
    {
        const char *s = json_string_value(v);
        if (!s)
            return gp_diag_set(d, GP_EINVALID, "%s: data.%s: expected a string", who, key);
        if (strcmp(key, "schedulerName") == 0) {
            if (!subdomain(s))
                return gp_diag_set(d, GP_EINVALID,
                                   "%s: data.schedulerName: expected a DNS-1123 subdomain (as "
                                   "spec.schedulerName), got \"%.64s\"",
                                   who, s);
            snprintf(c.scheduler_name, sizeof c.scheduler_name, "%s", s);
        } else if (strcmp(key, "policy") == 0) {
            if (!gp_policy_find(s)) {
                char names[256];
                policy_names(names, sizeof names);
                return gp_diag_set(d, GP_EINVALID,
                                   "%s: data.policy: expected one of %s, got \"%.64s\"", who, names,
                                   s);
            }
            snprintf(c.policy, sizeof c.policy, "%s", s);
        } else if (strcmp(key, "podInitialBackoffSeconds") == 0 ||
                   strcmp(key, "podMaxBackoffSeconds") == 0) {
            bool initial = key[3] == 'I';
            if (!seconds(s, initial ? &c.backoff_initial_s : &c.backoff_max_s))
                return gp_diag_set(d, GP_EINVALID,
                                   "%s: data.%s: expected seconds, a number > 0 and <= 86400, "
                                   "got \"%.64s\"",
                                   who, key, s);
        } else {
            return gp_diag_set(d, GP_EINVALID,
                               "%s: data.%.64s: not a key gpuplane reads (schedulerName, policy, "
                               "podInitialBackoffSeconds, podMaxBackoffSeconds)",
                               who, key);
        }
    }
    if (c.backoff_max_s < c.backoff_initial_s) /* kube-scheduler's validation */
        return gp_diag_set(d, GP_EINVALID,
                           "%s: data.podMaxBackoffSeconds: expected at least "
                           "podInitialBackoffSeconds (%g), got %g",
                           who, c.backoff_initial_s, c.backoff_max_s);
    *out = c;
    return GP_OK;
}

unsigned gp_kube_conf_diff(const struct gp_kube_conf *a, const struct gp_kube_conf *b)
{
    unsigned w = 0;
    if (strcmp(a->scheduler_name, b->scheduler_name) != 0)
        w |= GP_KCONF_SCHEDULER_NAME;
    if (strcmp(a->policy, b->policy) != 0)
        w |= GP_KCONF_POLICY;
    if (a->backoff_initial_s != b->backoff_initial_s || a->backoff_max_s != b->backoff_max_s)
        w |= GP_KCONF_BACKOFF;
    return w;
}

void gp_kube_conf_describe(const struct gp_kube_conf *c, unsigned what, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    if (what & GP_KCONF_POLICY)
        len += (size_t)snprintf(buf + len, n - len, "policy=%s", c->policy);
    if ((what & GP_KCONF_BACKOFF) && len < n)
        len += (size_t)snprintf(buf + len, n - len,
                                "%spodInitialBackoffSeconds=%g podMaxBackoffSeconds=%g",
                                len ? " " : "", c->backoff_initial_s, c->backoff_max_s);
    if ((what & GP_KCONF_SCHEDULER_NAME) && len < n)
        snprintf(buf + len, n - len, "%sschedulerName=%s", len ? " " : "", c->scheduler_name);
}

bool gp_kube_conf_path(const char *ns, const char *name, char *buf, size_t n)
{
    /* '=' inside the query's value written %3D, as client-go's url.Values do */
    int k = snprintf(buf, n, "/api/v1/namespaces/%s/configmaps?fieldSelector=metadata.name%%3D%s",
                     ns, name);
    return k > 0 && (size_t)k < n;
}

unsigned gp_kube_sched_conf_apply(struct gp_kube_sched *s, const struct gp_kube_conf *c)
{
    unsigned done = 0;
    const struct gp_policy_ops *p = gp_policy_find(c->policy);
    if (p && p != s->policy) {
        s->policy = p;
        s->dirty = true; /* the next cycle starts from a new engine (gp_ks_rebuild) */
        done |= GP_KCONF_POLICY;
    }
    if (c->backoff_initial_s != s->o.backoff_initial_s || c->backoff_max_s != s->o.backoff_max_s) {
        s->o.backoff_initial_s = c->backoff_initial_s;
        s->o.backoff_max_s = c->backoff_max_s;
        done |= GP_KCONF_BACKOFF;
    }
    return done;
}

void gp_kube_sched_conf_event(struct gp_kube_sched *s, const char *ns, const char *name,
                              const char *uid, const char *type, const char *reason,
                              const char *note)
{
    gp_ks_event(s, "ConfigMap", ns, name, uid, type, reason, "Configure", note);
}
