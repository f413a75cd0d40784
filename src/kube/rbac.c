/* rbac.c - the scheduler's API permissions as one table, and requests
 * checked against it as the API server's RBAC authorizer would
 * (kubernetes.io/docs/reference/access-authn-authz/rbac/). */
#include "kube/rbac.h"

#include <stdio.h>
#include <string.h>

/* Exactly the requests of sched_cycle.c, lease.c and the informers (run.c:
 * Nodes, Pods, PriorityClasses, PodGroups of both groups, its ConfigMap). Events go through
 * events.k8s.io/v1 (as kube-scheduler's do since 1.19), not core/v1, and are only created (a
 * message is written once, never a series patched); the pod's status
 * only patched (a strategic merge patch), never replaced. */
const struct gp_rbac_rule gp_rbac_rules[] = {
    {GP_RBAC_CLUSTER,
     "",
     "nodes",
     {"list", "watch"},
     NULL,
     "the cluster's capacity: labels, taints, allocatable, cordon, deletion"},
    {GP_RBAC_CLUSTER,
     "",
     "pods",
     {"list", "watch"},
     NULL,
     "every pod, any scheduler's: capacity other pods use is capacity taken"},
    {GP_RBAC_CLUSTER,
     "",
     "pods",
     {"patch"},
     NULL,
     "the device annotations of a decision that waits before its Binding (a gang's members), and "
     "their clearing"},
    {GP_RBAC_CLUSTER,
     "",
     "pods",
     {"get"},
     NULL,
     "a pod read again when its Binding got no answer (bound or not)"},
    {GP_RBAC_CLUSTER,
     "",
     "pods",
     {"delete"},
     NULL,
     "preemption: victims deleted gracefully (their uid as the precondition)"},
    {GP_RBAC_CLUSTER, "", "pods/binding", {"create"}, NULL, "the Binding of a pod to its node"},
    {GP_RBAC_CLUSTER,
     "",
     "pods/status",
     {"patch"},
     NULL,
     "PodScheduled=False (Unschedulable) on a pod that fits nowhere; preemption: the "
     "DisruptionTarget condition on a victim, status.nominatedNodeName on its preemptor"},
    {GP_RBAC_CLUSTER,
     "events.k8s.io",
     "events",
     {"create"},
     NULL,
     "Scheduled, FailedScheduling and Preempted Events, and the audit's Warnings"},
    {GP_RBAC_CLUSTER,
     "scheduling.k8s.io",
     "priorityclasses",
     {"list", "watch"},
     NULL,
     "pod priorities (ordering and preemption)"},
    {GP_RBAC_CLUSTER,
     "policy",
     "poddisruptionbudgets",
     {"list", "watch"},
     NULL,
     "preemption: victims that keep their PodDisruptionBudgets preferred"},
    /* volumes (volumes.c, VOLUMES' block): what VolumeBinding and VolumeZone read */
    {GP_RBAC_CLUSTER,
     "",
     "persistentvolumeclaims",
     {"list", "watch"},
     NULL,
     "a pod's claims: found, bound, being deleted (VolumeBinding)"},
    {GP_RBAC_CLUSTER,
     "",
     "persistentvolumeclaims",
     {"patch"},
     NULL,
     "WaitForFirstConsumer: volume.kubernetes.io/selected-node set on a claim to provision for "
     "the node chosen (VolumeBinding's PreBind; its resourceVersion the precondition)"},
    {GP_RBAC_CLUSTER,
     "",
     "persistentvolumes",
     {"list", "watch"},
     NULL,
     "a bound claim's volume: its node affinity and zone labels; an unbound claim's candidate "
     "volumes (VolumeBinding, VolumeZone)"},
    {GP_RBAC_CLUSTER,
     "",
     "persistentvolumes",
     {"patch"},
     NULL,
     "WaitForFirstConsumer: spec.claimRef set on the existing volume chosen for a claim "
     "(VolumeBinding's PreBind, static binding; its resourceVersion the precondition)"},
    {GP_RBAC_CLUSTER,
     "storage.k8s.io",
     "storageclasses",
     {"list", "watch"},
     NULL,
     "an unbound claim's class: Immediate or WaitForFirstConsumer binding"},
    {GP_RBAC_CLUSTER,
     "storage.k8s.io",
     "csinodes",
     {"list", "watch"},
     NULL,
     "each node's CSI volume limits (NodeVolumeLimits: spec.drivers[].allocatable.count)"},
    /* namespaces (namespaces.c, FILTERS): what InterPodAffinity reads */
    {GP_RBAC_CLUSTER,
     "",
     "namespaces",
     {"list", "watch"},
     NULL,
     "namespaces' labels, which a pod affinity term's namespaceSelector selects by"},
    {GP_RBAC_CLUSTER,
     "scheduling.x-k8s.io",
     "podgroups",
     {"list", "watch"},
     NULL,
     "gangs of scheduler-plugins' coscheduling"},
    {GP_RBAC_CLUSTER,
     "scheduling.volcano.sh",
     "podgroups",
     {"list", "watch"},
     NULL,
     "gangs of Volcano"},
    {GP_RBAC_NAMESPACE,
     "",
     "configmaps",
     {"list", "watch"},
     GP_RBAC_CONFIGMAP_NAME,
     "its configuration: the one ConfigMap listed at the start and watched (by "
     "fieldSelector=metadata.name, which resourceNames can restrict)"},
    {GP_RBAC_NAMESPACE,
     "coordination.k8s.io",
     "leases",
     {"create"},
     NULL,
     "leader election: the Lease made when there is none (create cannot be limited to a name)"},
    {GP_RBAC_NAMESPACE,
     "coordination.k8s.io",
     "leases",
     {"get", "update"},
     GP_RBAC_LEASE_NAME,
     "leader election: the Lease read, renewed and taken over"},
};

const size_t gp_rbac_nrules = sizeof gp_rbac_rules / sizeof gp_rbac_rules[0];

static bool has_verb(const struct gp_rbac_rule *r, const char *verb)
{
    for (size_t i = 0; r->verbs[i]; i++)
        if (strcmp(r->verbs[i], verb) == 0)
            return true;
    return false;
}

/* Whether r's resource is resource[/sub]. */
static bool same_resource(const struct gp_rbac_rule *r, const char *resource, const char *sub)
{
    size_t n = strlen(resource);
    if (strncmp(r->resource, resource, n) != 0)
        return false;
    if (!sub || !*sub)
        return r->resource[n] == '\0';
    return r->resource[n] == '/' && strcmp(r->resource + n + 1, sub) == 0;
}

bool gp_rbac_allows(const char *verb, const char *group, const char *resource,
                    const char *subresource)
{
    for (size_t i = 0; i < gp_rbac_nrules; i++) {
        const struct gp_rbac_rule *r = &gp_rbac_rules[i];
        if (strcmp(r->group, group ? group : "") == 0 && same_resource(r, resource, subresource) &&
            has_verb(r, verb))
            return true;
    }
    return false;
}

/* Copies the path segment at *p (up to '/', '?' or the end) into out;
 * false when it is empty or too long. */
static bool segment(const char **p, char *out, size_t n)
{
    if (**p == '/')
        (*p)++;
    size_t len = strcspn(*p, "/?");
    if (len == 0 || len >= n)
        return false;
    memcpy(out, *p, len);
    out[len] = '\0';
    *p += len;
    return true;
}

/* Whether the query has watch=true (or watch=1). */
static bool query_watch(const char *path)
{
    const char *q = strchr(path, '?');
    while (q && *q) {
        q++;
        if (strncmp(q, "watch=true", 10) == 0 || strncmp(q, "watch=1", 7) == 0) {
            char c = q[strncmp(q, "watch=1", 7) == 0 ? 7 : 10];
            if (c == '\0' || c == '&')
                return true;
        }
        q = strchr(q, '&');
    }
    return false;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The %-decoded value of the query's parameter key ('+' a space), into
 * out; false when absent, malformed or too long. */
static bool query_value(const char *path, const char *key, char *out, size_t n)
{
    const char *q = strchr(path, '?');
    size_t klen = strlen(key);
    while (q && *q) {
        q++;
        if (strncmp(q, key, klen) == 0 && q[klen] == '=') {
            size_t len = 0;
            for (const char *p = q + klen + 1; *p && *p != '&'; p++) {
                char c = *p;
                if (c == '%') {
                    int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
                    if (lo < 0)
                        return false;
                    c = (char)(hi * 16 + lo);
                    p += 2;
                } else if (c == '+') {
                    c = ' ';
                }
                if (len + 1 >= n)
                    return false;
                out[len++] = c;
            }
            out[len] = '\0';
            return true;
        }
        q = strchr(q, '&');
    }
    return false;
}

/* The name a field selector requires exactly: a term "metadata.name=V"
 * or "metadata.name==V" among its comma-separated terms (an AND), V a
 * valid path segment name (not "." or "..", no '/' or '%'). */
static bool selector_name(const char *sel, char *out, size_t n)
{
    const char *t = sel;
    while (*t) {
        size_t len = strcspn(t, ",");
        const char *k = "metadata.name";
        size_t kl = strlen(k);
        if (len > kl && strncmp(t, k, kl) == 0 && t[kl] == '=') {
            const char *v = t + kl + 1 + (t[kl + 1] == '=');
            size_t vl = len - (size_t)(v - t);
            if (vl == 0 || vl >= n || memchr(v, '/', vl) || memchr(v, '%', vl) ||
                (vl == 1 && v[0] == '.') || (vl == 2 && v[0] == '.' && v[1] == '.'))
                return false;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return true;
        }
        t += len;
        if (*t == ',')
            t++;
    }
    return false;
}

static const char *verb_of(const char *method, bool named, bool watch)
{
    if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
        return watch ? "watch" : named ? "get" : "list";
    if (strcmp(method, "POST") == 0)
        return "create";
    if (strcmp(method, "PUT") == 0)
        return "update";
    if (strcmp(method, "PATCH") == 0)
        return "patch";
    if (strcmp(method, "DELETE") == 0)
        return named ? "delete" : "deletecollection";
    return NULL;
}

bool gp_rbac_parse_request(const char *method, const char *path, struct gp_rbac_request *out)
{
    memset(out, 0, sizeof *out);
    const char *p = path;
    char version[32];
    if (strncmp(p, "/api/", 5) == 0) {
        p += 4;
    } else if (strncmp(p, "/apis/", 6) == 0) {
        p += 5;
        if (!segment(&p, out->group, sizeof out->group))
            return false;
    } else {
        return false;
    }
    if (!segment(&p, version, sizeof version))
        return false;
    char first[256];
    if (!segment(&p, first, sizeof first))
        return false;
    if (strcmp(first, "namespaces") == 0 && *p == '/') {
        char ns[64];
        if (!segment(&p, ns, sizeof ns))
            return false;
        if (*p == '/') { /* namespaces/NS/RESOURCE... */
            snprintf(out->ns, sizeof out->ns, "%s", ns);
            if (!segment(&p, out->resource, sizeof out->resource))
                return false;
        } else { /* the Namespace object itself */
            snprintf(out->resource, sizeof out->resource, "namespaces");
            snprintf(out->name, sizeof out->name, "%s", ns);
        }
    } else {
        size_t len = strlen(first);
        if (len >= sizeof out->resource)
            return false;
        memcpy(out->resource, first, len + 1);
    }
    if (*p == '/' && !out->name[0] && !segment(&p, out->name, sizeof out->name))
        return false;
    if (*p == '/' && !segment(&p, out->subresource, sizeof out->subresource))
        return false;
    if (*p == '/' || (*p && *p != '?'))
        return false;
    const char *verb = verb_of(method, out->name[0] != '\0', query_watch(path));
    if (!verb)
        return false;
    snprintf(out->verb, sizeof out->verb, "%s", verb);
    char sel[512];
    if ((strcmp(verb, "list") == 0 || strcmp(verb, "watch") == 0) &&
        query_value(path, "fieldSelector", sel, sizeof sel))
        selector_name(sel, out->name, sizeof out->name);
    return true;
}

int gp_rbac_match(const struct gp_rbac_request *q, const char *own_ns)
{
    for (size_t i = 0; i < gp_rbac_nrules; i++) {
        const struct gp_rbac_rule *r = &gp_rbac_rules[i];
        if (strcmp(r->group, q->group) != 0 || !same_resource(r, q->resource, q->subresource) ||
            !has_verb(r, q->verb))
            continue;
        if (r->scope == GP_RBAC_NAMESPACE && strcmp(q->ns, own_ns) != 0)
            continue;
        if (r->name && strcmp(r->name, q->name) != 0)
            continue;
        return (int)i;
    }
    return -1;
}

bool gp_rbac_allows_request(const char *method, const char *path, const char *own_ns, char *why,
                            size_t n)
{
    struct gp_rbac_request q;
    if (!gp_rbac_parse_request(method, path, &q)) {
        snprintf(why, n, "%s %s: not a resource request", method, path);
        return false;
    }
    if (gp_rbac_match(&q, own_ns) >= 0)
        return true;
    snprintf(why, n, "%s %s%s%s%s%s%s%s%s: not allowed", q.verb, q.group[0] ? q.group : "core", "/",
             q.resource, q.subresource[0] ? "/" : "", q.subresource, q.ns[0] ? " in " : "", q.ns,
             q.name[0] ? " (named)" : "");
    return false;
}
