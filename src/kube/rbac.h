/* rbac.h - the one table of what `gpuplane schedule` may do in the API:
 * every verb on every resource it uses, and nothing else. `gpuplane render
 * --self` writes its ClusterRole and Role from it (deploy.h), docs/kube.md
 * lists it, and tests check requests against it (gp_rbac_allows_request:
 * every request the scheduler makes to the API double must be allowed).
 *
 * Verbs are the API server's (kubernetes.io/docs/reference/access-authn-
 * authz/authorization/#determine-the-request-verb): GET of one object is
 * get, of a collection list, with watch=true watch; POST create; PUT
 * update; PATCH patch; DELETE of one object delete, of a collection
 * deletecollection. A subresource is "RESOURCE/SUB" ("pods/binding"). */
#ifndef GP_KUBE_RBAC_H
#define GP_KUBE_RBAC_H

#include <stdbool.h>
#include <stddef.h>

/* Where a rule holds: everywhere (the ClusterRole, bound by a
 * ClusterRoleBinding), or only in gpuplane's own namespace (a Role and
 * RoleBinding there: its Lease). */
enum gp_rbac_scope { GP_RBAC_CLUSTER, GP_RBAC_NAMESPACE };

#define GP_RBAC_MAX_VERBS 4

struct gp_rbac_rule {
    enum gp_rbac_scope scope;
    const char *group;                        /* API group: "" for core */
    const char *resource;                     /* "pods", "pods/binding" */
    const char *verbs[GP_RBAC_MAX_VERBS + 1]; /* NULL-terminated */
    const char *name;                         /* resourceNames: the one object allowed; NULL: any */
    const char *why;                          /* what the scheduler does with it (docs, comments) */
};

/* The name of the Lease a rule with a name refers to (its resourceNames).
 * render --self passes it to the scheduler's --leader-elect-resource-name. */
#define GP_RBAC_LEASE_NAME "gpuplane-scheduler"
/* The ConfigMap of its configuration (kube/config.h), listed and watched
 * with fieldSelector=metadata.name=NAME: the API server takes a list's or
 * watch's name from that selector (k8s.io/apiserver's RequestInfoFactory),
 * so that resourceNames can restrict them. */
#define GP_RBAC_CONFIGMAP_NAME "gpuplane-scheduler-config"

extern const struct gp_rbac_rule gp_rbac_rules[];
extern const size_t gp_rbac_nrules;

/* Whether some rule grants verb on group/resource[/subresource] (in any
 * scope, for some object): the question for "does gpuplane ever need
 * this". subresource NULL or "" for none. */
bool gp_rbac_allows(const char *verb, const char *group, const char *resource,
                    const char *subresource);

/* A request as the API server's authorizer sees it. */
struct gp_rbac_request {
    char verb[24];
    char group[64];
    char resource[64];
    char subresource[32];
    char ns[64];    /* "" for cluster-scoped or all namespaces */
    char name[256]; /* "" for a collection */
};

/* Parses an API path ("/api/v1/namespaces/NS/pods/NAME/binding",
 * "/apis/GROUP/VERSION/RES?watch=true&...") and its method. A list or
 * watch whose fieldSelector requires metadata.name=NAME (one term of it,
 * "=" or "==", the value %-decoded) is named NAME, as the API server's
 * RequestInfoFactory names it (FieldSelector.RequiresExactMatch). False for a
 * path that is not a resource request (/version, /healthz, /apis). */
bool gp_rbac_parse_request(const char *method, const char *path, struct gp_rbac_request *out);

/* The first rule of gp_rbac_rules that allows the parsed request when
 * gpuplane runs in own_ns (its index), or -1: what tests use to find the
 * rules a run never needed. */
int gp_rbac_match(const struct gp_rbac_request *q, const char *own_ns);

/* Whether the Roles render --self writes allow the request when gpuplane
 * runs in namespace own_ns: a cluster rule anywhere, a namespace rule in
 * own_ns only, a named rule for that object only. When not, why says
 * which verb, resource and namespace were refused. */
bool gp_rbac_allows_request(const char *method, const char *path, const char *own_ns, char *why,
                            size_t n);

#endif
