/* test_kube_deploy.c - `gpuplane render --self` (kube/deploy.c) and the
 * permissions table behind it (kube/rbac.c):
 *
 *  - the files, in order, each one YAML document of the kind its name says;
 *    the ClusterRole's and Role's rules read back equal to the table, the
 *    Deployment's args equal to gp_deploy_schedule_args, its replicas,
 *    probes, requests and security context as documented; --no-namespace
 *    and the options' errors;
 *  - the table: every request the scheduler is said to make allowed, the
 *    ones it does not make refused (secrets, writing nodes, creating pods,
 *    another namespace's Lease or ConfigMap, another Lease's name), and
 *    request paths parsed into verbs as the API server's authorizer does;
 *  - the Deployment read by the project's strict manifest reader;
 *  - with ../shared: every object checked against the published Kubernetes
 *    v1.35 OpenAPI schemas (oapi_check.h, strict: an unknown field fails):
 *    Namespace, ServiceAccount and ConfigMap whole; the Deployment with its
 *    pod template from the core document and DeploymentSpec written here
 *    from the API reference; the RBAC kinds (not in ../shared) likewise
 *    from the API reference, their metadata from the core document. The
 *    checker is shown to find a misspelt field, a wrong type and a missing
 *    required field in the same objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <libfyaml.h>

#include "io/render.h"
#include "io/workload.h"
#include "kube/config.h"
#include "kube/deploy.h"
#include "kube/rbac.h"
#include "oapi_check.h"
#include "shared_data.h"
#include "util/arena.h"

static const char *const names[] = {
    "00-namespace.yaml",          "01-serviceaccount.yaml", "02-clusterrole.yaml",
    "03-clusterrolebinding.yaml", "04-role.yaml",           "05-rolebinding.yaml",
    "06-configmap.yaml",          "07-deployment.yaml",
};
static const char *const kinds[] = {"Namespace",          "ServiceAccount", "ClusterRole",
                                    "ClusterRoleBinding", "Role",           "RoleBinding",
                                    "ConfigMap",          "Deployment"};

static json_t *yaml_json(const char *text)
{
    struct fy_document *d = fy_document_build_from_string(NULL, text, strlen(text));
    assert_non_null(d);
    char *s = fy_emit_document_to_string(d, FYECF_MODE_JSON_ONELINE);
    fy_document_destroy(d);
    assert_non_null(s);
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("%s: %s", e.text, s);
    free(s);
    return j;
}

/* The default rendering, each file as JSON. */
static void render_default(json_t *objs[8], struct gp_render *r)
{
    struct gp_deploy_opts o;
    gp_deploy_opts_default(&o);
    struct gp_diag d = {""};
    memset(r, 0, sizeof *r);
    assert_int_equal(gp_deploy_render(&o, r, &d), GP_OK);
    assert_int_equal(r->nfiles, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(r->files[i].name, names[i]);
        objs[i] = yaml_json(gp_sbuf_str(&r->files[i].text));
        assert_string_equal(json_string_value(json_object_get(objs[i], "kind")), kinds[i]);
    }
}

static void free_objs(json_t *objs[8], struct gp_render *r)
{
    for (size_t i = 0; i < 8; i++)
        json_decref(objs[i]);
    gp_render_free(r);
}

static const char *str_at(json_t *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok && j; tok = strtok(NULL, ".")) {
        if (tok[0] >= '0' && tok[0] <= '9')
            j = json_array_get(j, (size_t)atoi(tok));
        else
            j = json_object_get(j, tok);
    }
    if (!j)
        fail_msg("%s: absent", path);
    if (json_is_integer(j)) {
        static char num[32];
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(j));
        return num;
    }
    if (json_is_boolean(j))
        return json_is_true(j) ? "true" : "false";
    return json_string_value(j);
}

/* The rules of a (Cluster)Role equal the table's rows of that scope. */
static void check_rules(json_t *role, enum gp_rbac_scope scope)
{
    json_t *rules = json_object_get(role, "rules");
    size_t k = 0;
    for (size_t i = 0; i < gp_rbac_nrules; i++) {
        const struct gp_rbac_rule *t = &gp_rbac_rules[i];
        if (t->scope != scope)
            continue;
        json_t *r = json_array_get(rules, k++);
        assert_non_null(r);
        assert_int_equal(json_array_size(json_object_get(r, "apiGroups")), 1);
        assert_string_equal(json_string_value(json_array_get(json_object_get(r, "apiGroups"), 0)),
                            t->group);
        assert_int_equal(json_array_size(json_object_get(r, "resources")), 1);
        assert_string_equal(json_string_value(json_array_get(json_object_get(r, "resources"), 0)),
                            t->resource);
        json_t *verbs = json_object_get(r, "verbs");
        size_t nv = 0;
        while (t->verbs[nv])
            nv++;
        assert_int_equal(json_array_size(verbs), nv);
        for (size_t v = 0; v < nv; v++)
            assert_string_equal(json_string_value(json_array_get(verbs, v)), t->verbs[v]);
        json_t *rn = json_object_get(r, "resourceNames");
        if (t->name) {
            assert_int_equal(json_array_size(rn), 1);
            assert_string_equal(json_string_value(json_array_get(rn, 0)), t->name);
        } else {
            assert_null(rn);
        }
    }
    assert_int_equal(json_array_size(rules), k);
    assert_true(k > 0);
}

static void test_files(void **state)
{
    (void)state;
    json_t *o[8];
    struct gp_render r;
    render_default(o, &r);
    assert_string_equal(str_at(o[0], "metadata.name"), GP_DEPLOY_NAMESPACE);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(o[0], "metadata"), "labels"),
                            "pod-security.kubernetes.io/enforce")),
                        "restricted");
    for (size_t i = 1; i < 8; i++) {
        bool cluster = i == 2 || i == 3;
        json_t *ns = json_object_get(json_object_get(o[i], "metadata"), "namespace");
        if (cluster)
            assert_null(ns);
        else
            assert_string_equal(json_string_value(ns), GP_DEPLOY_NAMESPACE);
    }
    check_rules(o[2], GP_RBAC_CLUSTER);
    check_rules(o[4], GP_RBAC_NAMESPACE);
    for (size_t i = 3; i <= 5; i += 2) {
        assert_string_equal(str_at(o[i], "roleRef.kind"), i == 3 ? "ClusterRole" : "Role");
        assert_string_equal(
            str_at(o[i], "roleRef.name"),
            json_string_value(json_object_get(json_object_get(o[i - 1], "metadata"), "name")));
        assert_string_equal(str_at(o[i], "subjects.0.kind"), "ServiceAccount");
        assert_string_equal(str_at(o[i], "subjects.0.name"), str_at(o[1], "metadata.name"));
        assert_string_equal(str_at(o[i], "subjects.0.namespace"), GP_DEPLOY_NAMESPACE);
    }
    /* the ConfigMap's keys: what the scheduler reads of it (kube/config.h,
     * the ConfigMap parsed as it would be), and the one its Role lets it read */
    assert_string_equal(str_at(o[6], "data.schedulerName"), GP_DEPLOY_SCHEDULER_NAME);
    assert_string_equal(str_at(o[6], "data.policy"), GP_DEPLOY_POLICY);
    assert_string_equal(str_at(o[6], "metadata.name"), GP_RBAC_CONFIGMAP_NAME);
    {
        struct gp_kube_sched_opts so;
        gp_kube_sched_opts_default(&so);
        struct gp_kube_conf base, got;
        gp_kube_conf_from_opts(&so, &base);
        struct gp_diag d = {""};
        if (gp_kube_conf_parse(o[6], &base, &got, &d) != GP_OK)
            fail_msg("the rendered ConfigMap: %s", d.msg);
        assert_int_equal(gp_kube_conf_diff(&base, &got), 0); /* its values: the defaults */
    }
    /* the Deployment */
    json_t *dep = o[7];
    assert_string_equal(str_at(dep, "spec.replicas"), "2");
    assert_string_equal(str_at(dep, "spec.template.spec.serviceAccountName"),
                        str_at(o[1], "metadata.name"));
    json_t *c = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(dep, "spec"), "template"), "spec"),
            "containers"),
        0);
    assert_string_equal(str_at(c, "image"), GP_DEPLOY_IMAGE);
    json_t *args = json_object_get(c, "args");
    assert_string_equal(json_string_value(json_array_get(args, 0)), "schedule");
    size_t na = 0;
    for (; gp_deploy_schedule_args[na]; na++)
        assert_string_equal(json_string_value(json_array_get(args, na + 1)),
                            gp_deploy_schedule_args[na]);
    assert_int_equal(json_array_size(args), na + 1);
    assert_string_equal(str_at(c, "livenessProbe.httpGet.path"), "/healthz");
    assert_string_equal(str_at(c, "readinessProbe.httpGet.path"), "/readyz");
    assert_string_equal(str_at(c, "livenessProbe.httpGet.port"), "http");
    assert_string_equal(str_at(c, "ports.0.name"), "http");
    /* every $(VAR) of the args is an env var of the container (else the
     * kubelet leaves the text as it is); the ConfigMap's keys exist */
    json_t *env = json_object_get(c, "env");
    for (size_t i = 0; i < json_array_size(args); i++) {
        const char *arg = json_string_value(json_array_get(args, i)), *v = strstr(arg, "$(");
        if (!v)
            continue;
        const char *end = strchr(v, ')');
        assert_non_null(end);
        bool defined = false;
        for (size_t k = 0; k < json_array_size(env); k++) {
            const char *n = json_string_value(json_object_get(json_array_get(env, k), "name"));
            defined |= strlen(n) == (size_t)(end - v - 2) && strncmp(n, v + 2, strlen(n)) == 0;
        }
        if (!defined)
            fail_msg("%s: not an env var of the container", arg);
    }
    for (size_t k = 0; k < json_array_size(env); k++) {
        json_t *ref = json_object_get(json_object_get(json_array_get(env, k), "valueFrom"),
                                      "configMapKeyRef");
        if (!ref)
            continue;
        assert_string_equal(str_at(ref, "name"), str_at(o[6], "metadata.name"));
        assert_non_null(json_object_get(json_object_get(o[6], "data"), str_at(ref, "key")));
    }
    assert_string_equal(str_at(c, "ports.0.containerPort"), "8080");
    assert_string_equal(str_at(c, "resources.requests.cpu"), "100m");
    /* the measured peak (674 MiB at 50,000 pods) requested, three times it the
     * limit; a critical add-on's priority class */
    assert_string_equal(str_at(c, "resources.requests.memory"), "768Mi");
    assert_string_equal(str_at(c, "resources.limits.memory"), "2Gi");
    assert_string_equal(str_at(dep, "spec.template.spec.priorityClassName"),
                        "system-cluster-critical");
    assert_string_equal(str_at(c, "securityContext.readOnlyRootFilesystem"), "true");
    assert_string_equal(str_at(c, "securityContext.allowPrivilegeEscalation"), "false");
    assert_string_equal(str_at(c, "securityContext.capabilities.drop.0"), "ALL");
    assert_string_equal(str_at(dep, "spec.template.spec.securityContext.runAsNonRoot"), "true");
    /* the selector selects the template */
    assert_true(json_equal(
        json_object_get(json_object_get(json_object_get(dep, "spec"), "selector"), "matchLabels"),
        json_object_get(
            json_object_get(json_object_get(json_object_get(dep, "spec"), "template"), "metadata"),
            "labels")));
    free_objs(o, &r);
}

static void test_options(void **state)
{
    (void)state;
    struct gp_deploy_opts o;
    struct gp_render r = {0};
    struct gp_diag d = {""};
    gp_deploy_opts_default(&o);
    o.ns = "team-a";
    o.namespace_object = false;
    o.image = "registry.example/gpuplane@sha256:0123";
    o.scheduler_name = "gpu.example.com";
    o.replicas = 3;
    assert_int_equal(gp_deploy_render(&o, &r, &d), GP_OK);
    assert_int_equal(r.nfiles, 7);
    assert_string_equal(r.files[0].name, "01-serviceaccount.yaml");
    json_t *dep = yaml_json(gp_sbuf_str(&r.files[6].text));
    assert_string_equal(str_at(dep, "metadata.namespace"), "team-a");
    assert_string_equal(str_at(dep, "spec.replicas"), "3");
    assert_string_equal(str_at(dep, "spec.template.spec.containers.0.image"),
                        "registry.example/gpuplane@sha256:0123");
    json_decref(dep);
    json_t *crb = yaml_json(gp_sbuf_str(&r.files[2].text));
    assert_string_equal(str_at(crb, "subjects.0.namespace"), "team-a");
    json_decref(crb);
    assert_non_null(strstr(gp_sbuf_str(&r.files[5].text), "schedulerName: gpu.example.com\n"));
    struct {
        const char *field, *value;
        unsigned replicas;
        const char *msg;
    } bad[] = {
        {"ns", "Team", 2,
         "--namespace Team: expected a DNS-1123 label (lower-case letters, digits and '-', at "
         "most 63)"},
        {"ns", "a.b", 2, NULL},
        {"ns", "-a", 2, NULL},
        {"ns", "", 2, NULL},
        {"ns", "a234567890123456789012345678901234567890123456789012345678901234", 2, NULL},
        {"image", "a b", 2, "--image: expected an image reference without spaces"},
        {"image", "", 2, NULL},
        {"scheduler_name", "Gpu", 2,
         "--scheduler-name Gpu: expected a DNS-1123 subdomain, as spec.schedulerName must be"},
        {"scheduler_name", "a..b", 2, NULL},
        {"scheduler_name", "a-.b", 2, NULL},
        {"ns", "ok", 0, "--replicas 0: expected 1 to 10"},
        {"ns", "ok", 11, "--replicas 11: expected 1 to 10"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gp_deploy_opts_default(&o);
        if (strcmp(bad[i].field, "ns") == 0)
            o.ns = bad[i].value;
        else if (strcmp(bad[i].field, "image") == 0)
            o.image = bad[i].value;
        else
            o.scheduler_name = bad[i].value;
        o.replicas = bad[i].replicas;
        d.msg[0] = '\0';
        if (gp_deploy_render(&o, &r, &d) != GP_EUSAGE)
            fail_msg("case %zu (%s) rendered", i, bad[i].value);
        assert_int_equal(r.nfiles, 0);
        if (bad[i].msg)
            assert_string_equal(d.msg, bad[i].msg);
    }
    gp_render_free(&r);
}

static void test_rbac_table(void **state)
{
    (void)state;
    /* what the scheduler does (issue 14; docs/kube.md, "Permissions") */
    const char *yes[][4] = {
        {"list", "", "nodes", NULL},
        {"watch", "", "nodes", NULL},
        {"list", "", "pods", NULL},
        {"watch", "", "pods", NULL},
        {"patch", "", "pods", NULL},
        {"delete", "", "pods", NULL},
        {"create", "", "pods", "binding"},
        {"patch", "", "pods", "status"},
        {"create", "events.k8s.io", "events", NULL},
        {"get", "", "pods", NULL},
        {"list", "scheduling.k8s.io", "priorityclasses", NULL},
        {"watch", "scheduling.k8s.io", "priorityclasses", NULL},
        {"list", "policy", "poddisruptionbudgets", NULL},
        {"watch", "policy", "poddisruptionbudgets", NULL},
        {"list", "scheduling.x-k8s.io", "podgroups", NULL},
        {"watch", "scheduling.volcano.sh", "podgroups", NULL},
        {"get", "coordination.k8s.io", "leases", NULL},
        {"list", "", "configmaps", NULL},
        {"watch", "", "configmaps", NULL},
        {"create", "coordination.k8s.io", "leases", NULL},
        {"update", "coordination.k8s.io", "leases", NULL},
    };
    const char *no[][4] = {
        {"get", "", "secrets", NULL},
        {"list", "", "secrets", NULL},
        {"update", "", "nodes", NULL},
        {"patch", "", "nodes", NULL},
        {"delete", "", "nodes", NULL},
        {"create", "", "pods", NULL},
        {"update", "", "pods", NULL},
        {"update", "", "pods", "status"},
        {"patch", "events.k8s.io", "events", NULL},
        {"list", "", "events", NULL},
        {"deletecollection", "", "pods", NULL},
        {"create", "", "pods", "eviction"},
        {"create", "", "pods", "exec"},
        {"patch", "", "pods", "binding"},
        {"create", "", "events", NULL}, /* core events: not used */
        {"delete", "coordination.k8s.io", "leases", NULL},
        {"update", "", "configmaps", NULL},
        {"get", "", "configmaps", NULL}, /* listed and watched by name, never read alone */
        {"create", "", "configmaps", NULL},
        {"create", "", "bindings", NULL},
        {"list", "scheduling.k8s.io", "pods", NULL},
        {"list", "", "pods", "status"},
        {"escalate", "rbac.authorization.k8s.io", "clusterroles", NULL},
        {"get", "policy", "poddisruptionbudgets", NULL}, /* listed and watched, never read alone */
        {"update", "policy", "poddisruptionbudgets", "status"},
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (!gp_rbac_allows(yes[i][0], yes[i][1], yes[i][2], yes[i][3]))
            fail_msg("refused: %s %s/%s/%s", yes[i][0], yes[i][1], yes[i][2],
                     yes[i][3] ? yes[i][3] : "");
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (gp_rbac_allows(no[i][0], no[i][1], no[i][2], no[i][3]))
            fail_msg("allowed: %s %s/%s/%s", no[i][0], no[i][1], no[i][2],
                     no[i][3] ? no[i][3] : "");
    /* each row has verbs, and no two rows repeat a (scope, group, resource, verb, name) */
    for (size_t i = 0; i < gp_rbac_nrules; i++) {
        assert_non_null(gp_rbac_rules[i].verbs[0]);
        assert_non_null(gp_rbac_rules[i].why);
        for (size_t j = i + 1; j < gp_rbac_nrules; j++)
            for (size_t v = 0; gp_rbac_rules[i].verbs[v]; v++)
                for (size_t w = 0; gp_rbac_rules[j].verbs[w]; w++)
                    assert_false(
                        gp_rbac_rules[i].scope == gp_rbac_rules[j].scope &&
                        strcmp(gp_rbac_rules[i].group, gp_rbac_rules[j].group) == 0 &&
                        strcmp(gp_rbac_rules[i].resource, gp_rbac_rules[j].resource) == 0 &&
                        strcmp(gp_rbac_rules[i].verbs[v], gp_rbac_rules[j].verbs[w]) == 0 &&
                        (gp_rbac_rules[i].name == NULL) == (gp_rbac_rules[j].name == NULL));
    }
}

static void test_rbac_requests(void **state)
{
    (void)state;
    struct {
        const char *method, *path, *verb, *group, *resource, *sub, *ns, *name;
    } parse[] = {
        {"GET", "/api/v1/nodes?limit=500", "list", "", "nodes", "", "", ""},
        {"GET", "/api/v1/pods?watch=true&resourceVersion=5&allowWatchBookmarks=true", "watch", "",
         "pods", "", "", ""},
        {"GET", "/api/v1/pods?resourceVersion=5&watch=1", "watch", "", "pods", "", "", ""},
        {"GET", "/api/v1/pods?watchx=true", "list", "", "pods", "", "", ""},
        {"GET", "/api/v1/namespaces/a/pods/p", "get", "", "pods", "", "a", "p"},
        {"PATCH", "/api/v1/namespaces/a/pods/p", "patch", "", "pods", "", "a", "p"},
        {"POST", "/api/v1/namespaces/a/pods/p/binding", "create", "", "pods", "binding", "a", "p"},
        {"PATCH", "/api/v1/namespaces/a/pods/p/status", "patch", "", "pods", "status", "a", "p"},
        {"DELETE", "/api/v1/namespaces/a/pods/p", "delete", "", "pods", "", "a", "p"},
        {"DELETE", "/api/v1/namespaces/a/pods", "deletecollection", "", "pods", "", "a", ""},
        {"POST", "/apis/events.k8s.io/v1/namespaces/a/events", "create", "events.k8s.io", "events",
         "", "a", ""},
        {"PUT", "/apis/coordination.k8s.io/v1/namespaces/gs/leases/l", "update",
         "coordination.k8s.io", "leases", "", "gs", "l"},
        {"GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups?limit=10", "list",
         "scheduling.x-k8s.io", "podgroups", "", "", ""},
        {"GET", "/api/v1/namespaces/a", "get", "", "namespaces", "", "", "a"},
        {"GET", "/api/v1/namespaces", "list", "", "namespaces", "", "", ""},
        {"PUT", "/api/v1/nodes/n1/status", "update", "", "nodes", "status", "", "n1"},
        /* a list or watch named by its field selector (RequestInfoFactory) */
        {"GET", "/api/v1/namespaces/s/configmaps?fieldSelector=metadata.name%3Dcm&limit=500",
         "list", "", "configmaps", "", "s", "cm"},
        {"GET",
         "/api/v1/namespaces/s/configmaps?fieldSelector=metadata.name%3D%3Dcm&watch=1&"
         "resourceVersion=3",
         "watch", "", "configmaps", "", "s", "cm"},
        {"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1,metadata.name%3Dp&watch=1", "watch",
         "", "pods", "", "", "p"},
        {"GET", "/api/v1/namespaces/s/configmaps?fieldSelector=metadata.name%21%3Dcm", "list", "",
         "configmaps", "", "s", ""},
        {"GET", "/api/v1/namespaces/s/configmaps?fieldSelector=spec.x%3Dcm", "list", "",
         "configmaps", "", "s", ""},
        {"GET", "/api/v1/namespaces/s/configmaps?fieldSelector=metadata.name%3D..", "list", "",
         "configmaps", "", "s", ""},
        {"GET", "/api/v1/namespaces/s/configmaps?fieldSelector=metadata.name%3Dcm", "list", "",
         "configmaps", "", "s", "cm"},
    };
    for (size_t i = 0; i < sizeof parse / sizeof parse[0]; i++) {
        struct gp_rbac_request q;
        if (!gp_rbac_parse_request(parse[i].method, parse[i].path, &q))
            fail_msg("%s %s: not parsed", parse[i].method, parse[i].path);
        assert_string_equal(q.verb, parse[i].verb);
        assert_string_equal(q.group, parse[i].group);
        assert_string_equal(q.resource, parse[i].resource);
        assert_string_equal(q.subresource, parse[i].sub);
        assert_string_equal(q.ns, parse[i].ns);
        assert_string_equal(q.name, parse[i].name);
    }
    const char *unparsed[][2] = {{"GET", "/version"},        {"GET", "/apis"},
                                 {"GET", "/api/v1"},         {"GET", "/healthz"},
                                 {"GET", "/api/v1/a/b/c/d"}, {"TRACE", "/api/v1/nodes"},
                                 {"GET", "/api/v1//nodes"},  {"GET", "/apis/g/v1/x/y/z/w"}};
    for (size_t i = 0; i < sizeof unparsed / sizeof unparsed[0]; i++) {
        struct gp_rbac_request q;
        if (gp_rbac_parse_request(unparsed[i][0], unparsed[i][1], &q))
            fail_msg("%s %s parsed", unparsed[i][0], unparsed[i][1]);
    }
    const char *ns = GP_DEPLOY_NAMESPACE;
    const char *allowed[][2] = {
        {"GET", "/api/v1/nodes?limit=500"},
        {"GET", "/api/v1/pods?watch=true"},
        {"PATCH", "/api/v1/namespaces/team-a/pods/p"},
        {"POST", "/api/v1/namespaces/team-a/pods/p/binding"},
        {"PATCH", "/api/v1/namespaces/team-a/pods/p/status"},
        {"DELETE", "/api/v1/namespaces/team-b/pods/victim"},
        {"POST", "/apis/events.k8s.io/v1/namespaces/default/events"},
        {"GET", "/api/v1/namespaces/team-a/pods/p"},
        {"GET", "/apis/scheduling.k8s.io/v1/priorityclasses?limit=500"},
        {"GET", "/apis/policy/v1/poddisruptionbudgets?watch=true"},
        {"GET", "/apis/scheduling.volcano.sh/v1beta1/podgroups?watch=true"},
        {"POST", "/apis/coordination.k8s.io/v1/namespaces/gpuplane-system/leases"},
        {"GET",
         "/apis/coordination.k8s.io/v1/namespaces/gpuplane-system/leases/" GP_RBAC_LEASE_NAME},
        {"PUT",
         "/apis/coordination.k8s.io/v1/namespaces/gpuplane-system/leases/" GP_RBAC_LEASE_NAME},
        {"GET", "/api/v1/namespaces/gpuplane-system/"
                "configmaps?fieldSelector=metadata.name%3D" GP_RBAC_CONFIGMAP_NAME "&limit=500"},
        {"GET", "/api/v1/namespaces/gpuplane-system/"
                "configmaps?fieldSelector=metadata.name%3D" GP_RBAC_CONFIGMAP_NAME
                "&watch=1&resourceVersion=7"},
    };
    char why[256];
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (!gp_rbac_allows_request(allowed[i][0], allowed[i][1], ns, why, sizeof why))
            fail_msg("refused: %s %s: %s", allowed[i][0], allowed[i][1], why);
    struct {
        const char *method, *path, *why;
    } refused[] = {
        {"GET", "/api/v1/namespaces/a/secrets", "list core/secrets in a: not allowed"},
        {"PUT", "/api/v1/namespaces/a/pods/p/status",
         "update core/pods/status in a (named): not allowed"},
        {"PATCH", "/apis/events.k8s.io/v1/namespaces/a/events/e.1",
         "patch events.k8s.io/events in a (named): not allowed"},
        {"PUT", "/api/v1/nodes/n1", "update core/nodes (named): not allowed"},
        {"POST", "/api/v1/namespaces/a/pods", "create core/pods in a: not allowed"},
        {"POST", "/api/v1/namespaces/a/events", "create core/events in a: not allowed"},
        {"PUT", "/apis/coordination.k8s.io/v1/namespaces/gpuplane-system/leases/other",
         "update coordination.k8s.io/leases in gpuplane-system (named): not allowed"},
        {"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" GP_RBAC_LEASE_NAME,
         "update coordination.k8s.io/leases in kube-system (named): not allowed"},
        {"POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
         "create coordination.k8s.io/leases in kube-system: not allowed"},
        {"GET", "/api/v1/namespaces/gpuplane-system/configmaps",
         "list core/configmaps in gpuplane-system: not allowed"},
        {"GET", "/api/v1/configmaps?watch=true", "watch core/configmaps: not allowed"},
        /* resourceNames restricts a list or watch only through the selector */
        {"GET", "/api/v1/namespaces/gpuplane-system/configmaps?watch=1",
         "watch core/configmaps in gpuplane-system: not allowed"},
        {"GET", "/api/v1/namespaces/gpuplane-system/configmaps?fieldSelector=metadata.name%3Dother",
         "list core/configmaps in gpuplane-system (named): not allowed"},
        {"GET",
         "/api/v1/namespaces/kube-system/"
         "configmaps?fieldSelector=metadata.name%3D" GP_RBAC_CONFIGMAP_NAME,
         "list core/configmaps in kube-system (named): not allowed"},
        {"GET", "/api/v1/namespaces/gpuplane-system/configmaps/" GP_RBAC_CONFIGMAP_NAME,
         "get core/configmaps in gpuplane-system (named): not allowed"},
        {"POST", "/api/v1/namespaces/a/pods/p/eviction",
         "create core/pods/eviction in a (named): not allowed"},
        {"GET", "/version", "GET /version: not a resource request"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (gp_rbac_allows_request(refused[i].method, refused[i].path, ns, why, sizeof why))
            fail_msg("allowed: %s %s", refused[i].method, refused[i].path);
        assert_string_equal(why, refused[i].why);
    }
}

/* docs/kube.md's table of permissions is this table, row for row. */
static void test_docs_table(void **state)
{
    (void)state;
    const char *path = GP_TEST_DATA "/../../docs/kube.md";
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot read", path);
    char line[1024];
    const char *hdr = "| scope | API group | resource | verbs | name | what for |\n";
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strcmp(line, hdr) == 0;
    assert_true(found);
    assert_non_null(fgets(line, sizeof line, f)); /* |---|... */
    for (size_t i = 0; i < gp_rbac_nrules; i++) {
        const struct gp_rbac_rule *r = &gp_rbac_rules[i];
        char want[1024], verbs[128] = "";
        for (size_t v = 0; r->verbs[v]; v++)
            snprintf(verbs + strlen(verbs), sizeof verbs - strlen(verbs), "%s%s", v ? ", " : "",
                     r->verbs[v]);
        snprintf(want, sizeof want, "| %s | `%s` | `%s` | %s | %s%s%s | %s |\n",
                 r->scope == GP_RBAC_CLUSTER ? "cluster" : "namespace",
                 r->group[0] ? r->group : "core", r->resource, verbs, r->name ? "`" : "",
                 r->name ? r->name : "", r->name ? "`" : "", r->why);
        if (!fgets(line, sizeof line, f) || strcmp(line, want) != 0)
            fail_msg("docs/kube.md, permissions row %zu:\n  got  %s  want %s", i + 1, line, want);
    }
    assert_true(!fgets(line, sizeof line, f) || line[0] != '|'); /* no row more */
    fclose(f);
}

/* The Deployment as the manifest reader (strict fields) reads it. */
static void test_strict_reader(void **state)
{
    (void)state;
    json_t *o[8];
    struct gp_render r;
    render_default(o, &r);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_workload w = {0};
    struct gp_diag d = {""};
    const char *text = gp_sbuf_str(&r.files[7].text);
    if (gp_workload_parse_manifest(text, strlen(text), "07-deployment.yaml", &a, &w, &d) != GP_OK)
        fail_msg("%s", d.msg);
    assert_int_equal(w.nitems, 1);
    assert_int_equal(w.items[0].replicas, 2);
    /* the reader is strict: a misspelt field of the same Deployment fails */
    char *bad = strdup(text);
    char *p = strstr(bad, "readOnlyRootFilesystem");
    assert_non_null(p);
    p[0] = 'R';
    struct gp_workload w2 = {0};
    assert_int_not_equal(gp_workload_parse_manifest(bad, strlen(bad), "x.yaml", &a, &w2, &d),
                         GP_OK);
    assert_non_null(strstr(d.msg, "unknown field"));
    free(bad);
    gp_arena_free(&a);
    free_objs(o, &r);
}

/* --- the published schemas ---------------------------------------------- */

/* apps/v1 Deployment and rbac.authorization.k8s.io/v1, which ../shared's
 * documents do not cover, written in their form from the Kubernetes v1.35
 * API reference (kubernetes.io/docs/reference/kubernetes-api/:
 * workload-resources/deployment-v1, authorization-resources/cluster-role-v1,
 * role-v1, cluster-role-binding-v1, role-binding-v1); object metadata,
 * label selectors and the pod template are the core document's. */
static const char extra_schemas[] =
    "{"
    "\"gp.apps.v1.Deployment\":{\"type\":\"object\",\"properties\":{"
    "  \"apiVersion\":{\"type\":\"string\",\"enum\":[\"apps/v1\"]},"
    "  \"kind\":{\"type\":\"string\",\"enum\":[\"Deployment\"]},"
    "  \"metadata\":{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
    "ObjectMeta\"},"
    "  \"spec\":{\"$ref\":\"#/components/schemas/gp.apps.v1.DeploymentSpec\"}}},"
    "\"gp.apps.v1.DeploymentSpec\":{\"type\":\"object\",\"required\":[\"selector\",\"template\"],"
    "\"properties\":{"
    "  \"minReadySeconds\":{\"type\":\"integer\"},\"paused\":{\"type\":\"boolean\"},"
    "  \"progressDeadlineSeconds\":{\"type\":\"integer\"},\"replicas\":{\"type\":\"integer\"},"
    "  \"revisionHistoryLimit\":{\"type\":\"integer\"},"
    "  \"selector\":{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
    "LabelSelector\"},"
    "  \"strategy\":{\"type\":\"object\",\"properties\":{"
    "    \"type\":{\"type\":\"string\",\"enum\":[\"Recreate\",\"RollingUpdate\"]},"
    "    \"rollingUpdate\":{\"type\":\"object\",\"properties\":{"
    "      \"maxSurge\":{\"x-kubernetes-int-or-string\":true},"
    "      \"maxUnavailable\":{\"x-kubernetes-int-or-string\":true}}}}},"
    "  \"template\":{\"$ref\":\"#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec\"}}},"
    "\"gp.rbac.v1.PolicyRule\":{\"type\":\"object\",\"required\":[\"verbs\"],\"properties\":{"
    "  \"apiGroups\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "  \"nonResourceURLs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "  \"resourceNames\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "  \"resources\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "  \"verbs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}},"
    "\"gp.rbac.v1.ClusterRole\":{\"type\":\"object\",\"properties\":{"
    "  \"apiVersion\":{\"type\":\"string\",\"enum\":[\"rbac.authorization.k8s.io/v1\"]},"
    "  \"kind\":{\"type\":\"string\",\"enum\":[\"ClusterRole\"]},"
    "  \"metadata\":{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
    "ObjectMeta\"},"
    "  \"aggregationRule\":{\"type\":\"object\",\"properties\":{\"clusterRoleSelectors\":{"
    "    \"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/"
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector\"}}}},"
    "  \"rules\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/"
    "gp.rbac.v1.PolicyRule\"}}}},"
    "\"gp.rbac.v1.Role\":{\"type\":\"object\",\"properties\":{"
    "  \"apiVersion\":{\"type\":\"string\",\"enum\":[\"rbac.authorization.k8s.io/v1\"]},"
    "  \"kind\":{\"type\":\"string\",\"enum\":[\"Role\"]},"
    "  \"metadata\":{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
    "ObjectMeta\"},"
    "  \"rules\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/"
    "gp.rbac.v1.PolicyRule\"}}}},"
    "\"gp.rbac.v1.RoleRef\":{\"type\":\"object\",\"required\":[\"apiGroup\",\"kind\",\"name\"],"
    "\"properties\":{\"apiGroup\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
    "  \"name\":{\"type\":\"string\"}}},"
    "\"gp.rbac.v1.Subject\":{\"type\":\"object\",\"required\":[\"kind\",\"name\"],"
    "\"properties\":{\"apiGroup\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
    "  \"name\":{\"type\":\"string\"},\"namespace\":{\"type\":\"string\"}}},"
    "\"gp.rbac.v1.ClusterRoleBinding\":{\"type\":\"object\",\"required\":[\"roleRef\"],"
    "\"properties\":{"
    "  \"apiVersion\":{\"type\":\"string\",\"enum\":[\"rbac.authorization.k8s.io/v1\"]},"
    "  \"kind\":{\"type\":\"string\",\"enum\":[\"ClusterRoleBinding\"]},"
    "  \"metadata\":{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
    "ObjectMeta\"},"
    "  \"roleRef\":{\"$ref\":\"#/components/schemas/gp.rbac.v1.RoleRef\"},"
    "  \"subjects\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/"
    "gp.rbac.v1.Subject\"}}}},"
    "\"gp.rbac.v1.RoleBinding\":{\"type\":\"object\",\"required\":[\"roleRef\"],"
    "\"properties\":{"
    "  \"apiVersion\":{\"type\":\"string\",\"enum\":[\"rbac.authorization.k8s.io/v1\"]},"
    "  \"kind\":{\"type\":\"string\",\"enum\":[\"RoleBinding\"]},"
    "  \"metadata\":{\"$ref\":\"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
    "ObjectMeta\"},"
    "  \"roleRef\":{\"$ref\":\"#/components/schemas/gp.rbac.v1.RoleRef\"},"
    "  \"subjects\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/"
    "gp.rbac.v1.Subject\"}}}}"
    "}";

static const char *const schema_of[] = {
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.core.v1.ServiceAccount",
    "gp.rbac.v1.ClusterRole",
    "gp.rbac.v1.ClusterRoleBinding",
    "gp.rbac.v1.Role",
    "gp.rbac.v1.RoleBinding",
    "io.k8s.api.core.v1.ConfigMap",
    "gp.apps.v1.Deployment",
};

#define CORE_DOC GP_SHARED_DIR "/k8s/schemas/api__v1_openapi.json"

static json_t *load_schemas(void)
{
    json_error_t e;
    json_t *doc = json_load_file(CORE_DOC, 0, &e);
    if (!doc)
        fail_msg("%s: %s", CORE_DOC, e.text);
    json_t *schemas = json_incref(json_object_get(json_object_get(doc, "components"), "schemas"));
    json_decref(doc);
    json_t *extra = json_loads(extra_schemas, 0, &e);
    if (!extra)
        fail_msg("extra schemas: %s (column %d)", e.text, e.column);
    assert_int_equal(json_object_update(schemas, extra), 0);
    json_decref(extra);
    return schemas;
}

static void test_schemas(void **state)
{
    (void)state;
    GP_NEED_SHARED(CORE_DOC);
    json_t *schemas = load_schemas();
    json_t *o[8];
    struct gp_render r;
    render_default(o, &r);
    char err[512];
    for (size_t i = 0; i < 8; i++) {
        if (!oapi_check(schemas, schema_of[i], o[i], err, sizeof err))
            fail_msg("%s: %s", names[i], err);
        /* a core kind's apiVersion and kind are the document's own */
        json_t *gvk = json_array_get(json_object_get(json_object_get(schemas, schema_of[i]),
                                                     "x-kubernetes-group-version-kind"),
                                     0);
        if (gvk) {
            assert_string_equal(json_string_value(json_object_get(gvk, "group")), "");
            assert_string_equal(str_at(o[i], "apiVersion"),
                                json_string_value(json_object_get(gvk, "version")));
            assert_string_equal(str_at(o[i], "kind"),
                                json_string_value(json_object_get(gvk, "kind")));
        }
    }
    /* the checker finds what it must: a misspelt field, a wrong type, a
     * missing required field, an unknown enum value, in the same objects */
    json_t *c = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(o[7], "spec"), "template"), "spec"),
            "containers"),
        0);
    json_object_set_new(json_object_get(c, "securityContext"), "readOnlyRootFS", json_true());
    assert_false(oapi_check(schemas, schema_of[7], o[7], err, sizeof err));
    assert_string_equal(err, "spec.template.spec.containers[0].securityContext: unknown field "
                             "\"readOnlyRootFS\"");
    json_object_del(json_object_get(c, "securityContext"), "readOnlyRootFS");
    json_object_set_new(json_array_get(json_object_get(c, "ports"), 0), "containerPort",
                        json_string("8080"));
    assert_false(oapi_check(schemas, schema_of[7], o[7], err, sizeof err));
    assert_string_equal(
        err, "spec.template.spec.containers[0].ports[0].containerPort: expected integer, "
             "got string");
    json_object_set_new(json_array_get(json_object_get(c, "ports"), 0), "containerPort",
                        json_integer(8080));
    assert_true(oapi_check(schemas, schema_of[7], o[7], err, sizeof err));
    json_object_del(json_array_get(json_object_get(o[2], "rules"), 0), "verbs");
    assert_false(oapi_check(schemas, schema_of[2], o[2], err, sizeof err));
    assert_string_equal(err, "rules[0]: required field \"verbs\" missing");
    json_object_set_new(json_object_get(o[7], "spec"), "strategy",
                        json_pack("{s:s}", "type", "Rolling"));
    assert_false(oapi_check(schemas, schema_of[7], o[7], err, sizeof err));
    assert_string_equal(err, "spec.strategy.type: not one of the enum's values");
    json_object_set_new(json_object_get(o[6], "data"), "n", json_integer(1));
    assert_false(oapi_check(schemas, schema_of[6], o[6], err, sizeof err));
    assert_string_equal(err, "data.n: expected string, got integer");
    free_objs(o, &r);
    json_decref(schemas);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),         cmocka_unit_test(test_options),
        cmocka_unit_test(test_rbac_table),    cmocka_unit_test(test_rbac_requests),
        cmocka_unit_test(test_strict_reader), cmocka_unit_test(test_docs_table),
    };
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_schemas),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
