/* deploy.c - gpuplane's own deployment as YAML (deploy.h): the RBAC
 * objects written from rbac.h's table, the ConfigMap and the Deployment. */
#include "kube/deploy.h"

#include <stdio.h>
#include <string.h>

#include "kube/rbac.h"

/* The flags of src/cli/cmd_schedule.c; $(VAR) is expanded by the kubelet
 * from the container's env (the downward API). The settings are the
 * ConfigMap's, which the scheduler lists and watches (kube/config.h). */
const char *const gp_deploy_schedule_args[] = {
    "--config-namespace=$(POD_NAMESPACE)",
    "--config-name=" GP_DEPLOY_CONFIGMAP,
    "--leader-elect=true",
    "--lease-namespace=$(POD_NAMESPACE)",
    "--lease-name=" GP_RBAC_LEASE_NAME,
    "--identity=$(POD_NAME)",
    "--metrics-addr=" GP_DEPLOY_HTTP_ADDR,
    NULL,
};

void gp_deploy_opts_default(struct gp_deploy_opts *o)
{
    o->ns = GP_DEPLOY_NAMESPACE;
    o->namespace_object = true;
    o->image = GP_DEPLOY_IMAGE;
    o->scheduler_name = GP_DEPLOY_SCHEDULER_NAME;
    o->replicas = 2;
    o->policy = GP_DEPLOY_POLICY;
}

/* A DNS-1123 label ([a-z0-9-], alphanumeric at both ends, at most 63) or,
 * with dots, a subdomain (labels joined by '.', at most 253). */
static bool dns1123(const char *s, bool subdomain)
{
    size_t n = strlen(s);
    if (n == 0 || n > (subdomain ? 253u : 63u))
        return false;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.' && subdomain) {
            if (label == 0 || s[i - 1] == '-')
                return false;
            label = 0;
            continue;
        }
        if (!alnum && c != '-')
            return false;
        if (c == '-' && label == 0)
            return false;
        if (++label > 63)
            return false;
    }
    return s[n - 1] != '-' && s[n - 1] != '.';
}

/* An image reference: printable, no spaces, at most 1024 bytes (the
 * registry, repository, tag and digest rules are the runtime's). */
static bool image_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 1024)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return false;
    return true;
}

static enum gp_err check(const struct gp_deploy_opts *o, struct gp_diag *d)
{
    if (!o->ns || !dns1123(o->ns, false))
        return gp_diag_set(d, GP_EUSAGE,
                           "--namespace %s: expected a DNS-1123 label (lower-case letters, "
                           "digits and '-', at most 63)",
                           o->ns ? o->ns : "");
    if (!o->image || !image_ok(o->image))
        return gp_diag_set(d, GP_EUSAGE, "--image: expected an image reference without spaces");
    if (!o->scheduler_name || !dns1123(o->scheduler_name, true))
        return gp_diag_set(d, GP_EUSAGE,
                           "--scheduler-name %s: expected a DNS-1123 subdomain, as "
                           "spec.schedulerName must be",
                           o->scheduler_name ? o->scheduler_name : "");
    if (!o->policy || !dns1123(o->policy, false))
        return gp_diag_set(d, GP_EUSAGE, "--policy %s: expected a policy name",
                           o->policy ? o->policy : "");
    if (o->replicas < 1 || o->replicas > 10)
        return gp_diag_set(d, GP_EUSAGE, "--replicas %u: expected 1 to 10", o->replicas);
    return GP_OK;
}

static void labels(struct gp_sbuf *b, int indent)
{
    gp_sbuf_printf(b, "%*sapp.kubernetes.io/name: gpuplane\n", indent, "");
    gp_sbuf_printf(b, "%*sapp.kubernetes.io/component: scheduler\n", indent, "");
}

/* apiVersion, kind and metadata (namespaced when ns is not NULL). */
static void head(struct gp_sbuf *b, const char *api, const char *kind, const char *name,
                 const char *ns)
{
    gp_sbuf_printf(b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: ", api, kind);
    gp_render_scalar(b, name);
    gp_sbuf_add(b, "\n");
    if (ns) {
        gp_sbuf_add(b, "  namespace: ");
        gp_render_scalar(b, ns);
        gp_sbuf_add(b, "\n");
    }
    gp_sbuf_add(b, "  labels:\n");
    labels(b, 4);
}

static void rules(struct gp_sbuf *b, enum gp_rbac_scope scope)
{
    gp_sbuf_add(b, "rules:\n");
    for (size_t i = 0; i < gp_rbac_nrules; i++) {
        const struct gp_rbac_rule *r = &gp_rbac_rules[i];
        if (r->scope != scope)
            continue;
        gp_sbuf_printf(b, "# %s\n- apiGroups:\n  - ", r->why);
        gp_render_scalar(b, r->group);
        gp_sbuf_printf(b, "\n  resources:\n  - %s\n", r->resource);
        if (r->name)
            gp_sbuf_printf(b, "  resourceNames:\n  - %s\n", r->name);
        gp_sbuf_add(b, "  verbs:\n");
        for (size_t v = 0; r->verbs[v]; v++)
            gp_sbuf_printf(b, "  - %s\n", r->verbs[v]);
    }
}

static void binding(struct gp_sbuf *b, const char *kind, const char *role_kind,
                    const struct gp_deploy_opts *o)
{
    head(b, "rbac.authorization.k8s.io/v1", kind, GP_DEPLOY_NAME,
         strcmp(kind, "RoleBinding") == 0 ? o->ns : NULL);
    gp_sbuf_printf(b,
                   "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: %s\n  name: %s\n"
                   "subjects:\n- kind: ServiceAccount\n  name: %s\n  namespace: ",
                   role_kind, GP_DEPLOY_NAME, GP_DEPLOY_NAME);
    gp_render_scalar(b, o->ns);
    gp_sbuf_add(b, "\n");
}

static void configmap(struct gp_sbuf *b, const struct gp_deploy_opts *o)
{
    gp_sbuf_add(b, "# gpuplane schedule's settings: each replica lists and watches this ConfigMap\n"
                   "# (--config-namespace, --config-name) and applies a change between two\n"
                   "# cycles; schedulerName takes a rollout restart. A bad edit is refused (the\n"
                   "# last good settings kept, a Warning Event InvalidConfiguration on it).\n");
    head(b, "v1", "ConfigMap", GP_DEPLOY_CONFIGMAP, o->ns);
    gp_sbuf_add(b, "data:\n"
                   "  # the pods it takes: those whose spec.schedulerName is this\n"
                   "  schedulerName: ");
    gp_render_scalar(b, o->scheduler_name);
    gp_sbuf_add(b, "\n  # the placement policy (gpuplane sim --help lists them); live\n"
                   "  policy: ");
    gp_render_scalar(b, o->policy);
    gp_sbuf_add(b, "\n  # a pod that failed waits this long, doubled per failure up to the\n"
                   "  # maximum (kube-scheduler's settings of these names); live\n"
                   "  podInitialBackoffSeconds: \"1\"\n"
                   "  podMaxBackoffSeconds: \"10\"\n");
}

static void pod_spec(struct gp_sbuf *b, const struct gp_deploy_opts *o)
{
    gp_sbuf_add(b, "    spec:\n"
                   "      serviceAccountName: " GP_DEPLOY_NAME "\n"
                   "      # a cluster add-on that must not be preempted by the pods it\n"
                   "      # schedules, nor evicted before them (kubernetes.io, \"Guaranteed\n"
                   "      # Scheduling For Critical Add-On Pods\")\n"
                   "      priorityClassName: system-cluster-critical\n"
                   "      securityContext:\n"
                   "        runAsNonRoot: true\n"
                   "        runAsUser: 65532\n"
                   "        runAsGroup: 65532\n"
                   "        seccompProfile:\n"
                   "          type: RuntimeDefault\n"
                   "      # the replicas on different nodes where there are nodes enough\n"
                   "      affinity:\n"
                   "        podAntiAffinity:\n"
                   "          preferredDuringSchedulingIgnoredDuringExecution:\n"
                   "          - weight: 100\n"
                   "            podAffinityTerm:\n"
                   "              topologyKey: kubernetes.io/hostname\n"
                   "              labelSelector:\n"
                   "                matchLabels:\n");
    labels(b, 18);
    gp_sbuf_add(b, "      containers:\n"
                   "      - name: scheduler\n"
                   "        image: ");
    gp_render_scalar(b, o->image);
    gp_sbuf_add(b, "\n        imagePullPolicy: IfNotPresent\n"
                   "        command:\n"
                   "        - gpuplane\n"
                   "        args:\n"
                   "        - schedule\n");
    for (size_t i = 0; gp_deploy_schedule_args[i]; i++) {
        gp_sbuf_add(b, "        - ");
        gp_render_scalar(b, gp_deploy_schedule_args[i]);
        gp_sbuf_add(b, "\n");
    }
    gp_sbuf_printf(b, "        env:\n"
                      "        - name: POD_NAME\n"
                      "          valueFrom:\n"
                      "            fieldRef:\n"
                      "              fieldPath: metadata.name\n"
                      "        - name: POD_NAMESPACE\n"
                      "          valueFrom:\n"
                      "            fieldRef:\n"
                      "              fieldPath: metadata.namespace\n");
    gp_sbuf_printf(b,
                   "        ports:\n"
                   "        - name: http\n"
                   "          containerPort: %d\n"
                   "          protocol: TCP\n",
                   GP_DEPLOY_HTTP_PORT);
    gp_sbuf_add(b, "        livenessProbe:\n"
                   "          httpGet:\n"
                   "            path: /healthz\n"
                   "            port: http\n"
                   "          initialDelaySeconds: 5\n"
                   "          periodSeconds: 10\n"
                   "          timeoutSeconds: 2\n"
                   "          failureThreshold: 3\n"
                   "        readinessProbe:\n"
                   "          httpGet:\n"
                   "            path: /readyz\n"
                   "            port: http\n"
                   "          periodSeconds: 5\n"
                   "          timeoutSeconds: 2\n"
                   "          failureThreshold: 2\n"
                   "        # 674 MiB peak RSS at 5,000 nodes and 50,000 pods (bench_kube,\n"
                   "        # bench/RESULTS.md): the request holds that peak; the limit is\n"
                   "        # three times it, for a rebuild (a second engine while the first\n"
                   "        # is freed), a re-list's diff and a cluster twice that size\n"
                   "        resources:\n"
                   "          requests:\n"
                   "            cpu: 100m\n"
                   "            memory: 768Mi\n"
                   "          limits:\n"
                   "            memory: 2Gi\n"
                   "        securityContext:\n"
                   "          allowPrivilegeEscalation: false\n"
                   "          readOnlyRootFilesystem: true\n"
                   "          capabilities:\n"
                   "            drop:\n"
                   "            - ALL\n");
}

static void deployment(struct gp_sbuf *b, const struct gp_deploy_opts *o)
{
    gp_sbuf_add(b, "# gpuplane's scheduler: one replica leads (the Lease), the others stand by\n"
                   "# ready; /healthz is the liveness probe, /readyz the readiness probe.\n");
    head(b, "apps/v1", "Deployment", GP_DEPLOY_NAME, o->ns);
    gp_sbuf_printf(b,
                   "spec:\n"
                   "  replicas: %u\n"
                   "  selector:\n"
                   "    matchLabels:\n",
                   o->replicas);
    labels(b, 6);
    gp_sbuf_add(b, "  strategy:\n"
                   "    type: RollingUpdate\n"
                   "    rollingUpdate:\n"
                   "      maxSurge: 1\n"
                   "      maxUnavailable: 0\n"
                   "  template:\n"
                   "    metadata:\n"
                   "      labels:\n");
    labels(b, 8);
    pod_spec(b, o);
}

enum gp_err gp_deploy_render(const struct gp_deploy_opts *o, struct gp_render *out,
                             struct gp_diag *diag)
{
    gp_render_free(out);
    enum gp_err err = check(o, diag);
    if (err != GP_OK)
        return err;
    struct gp_sbuf *b;
    bool oom = false;
    if (o->namespace_object) {
        if ((b = gp_render_add_file(out, "00-namespace"))) {
            gp_sbuf_add(b, "# Pod Security \"restricted\": the scheduler's pods meet it.\n"
                           "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ");
            gp_render_scalar(b, o->ns);
            gp_sbuf_add(b, "\n  labels:\n");
            labels(b, 4);
            gp_sbuf_add(b, "    pod-security.kubernetes.io/enforce: restricted\n");
        }
        oom |= !b;
    }
    if ((b = gp_render_add_file(out, "01-serviceaccount")))
        head(b, "v1", "ServiceAccount", GP_DEPLOY_NAME, o->ns);
    oom |= !b;
    if ((b = gp_render_add_file(out, "02-clusterrole"))) {
        gp_sbuf_add(b, "# What gpuplane's scheduler does in every namespace, and nothing more\n"
                       "# (src/kube/rbac.c).\n");
        head(b, "rbac.authorization.k8s.io/v1", "ClusterRole", GP_DEPLOY_NAME, NULL);
        rules(b, GP_RBAC_CLUSTER);
    }
    oom |= !b;
    if ((b = gp_render_add_file(out, "03-clusterrolebinding")))
        binding(b, "ClusterRoleBinding", "ClusterRole", o);
    oom |= !b;
    if ((b = gp_render_add_file(out, "04-role"))) {
        gp_sbuf_add(b, "# What it does in its own namespace only: its Lease and its ConfigMap.\n");
        head(b, "rbac.authorization.k8s.io/v1", "Role", GP_DEPLOY_NAME, o->ns);
        rules(b, GP_RBAC_NAMESPACE);
    }
    oom |= !b;
    if ((b = gp_render_add_file(out, "05-rolebinding")))
        binding(b, "RoleBinding", "Role", o);
    oom |= !b;
    if ((b = gp_render_add_file(out, "06-configmap")))
        configmap(b, o);
    oom |= !b;
    if ((b = gp_render_add_file(out, "07-deployment")))
        deployment(b, o);
    oom |= !b;
    for (size_t i = 0; i < out->nfiles; i++)
        oom |= out->files[i].text.oom;
    if (oom) {
        gp_render_free(out);
        return gp_diag_set(diag, GP_ENOMEM, "render: out of memory");
    }
    return GP_OK;
}
