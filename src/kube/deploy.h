/* deploy.h - gpuplane's own deployment, for `gpuplane render --self`:
 *
 *   00-namespace.yaml           the Namespace (Pod Security "restricted"),
 *                               unless it exists already
 *   01-serviceaccount.yaml      the scheduler's ServiceAccount
 *   02-clusterrole.yaml         what it may do everywhere (rbac.h's cluster
 *   03-clusterrolebinding.yaml  rules), bound to the ServiceAccount
 *   04-role.yaml                what it may do in its own namespace (its
 *   05-rolebinding.yaml         Lease), bound likewise
 *   06-configmap.yaml           its settings (schedulerName, policy, the
 *                               back-offs), which `gpuplane schedule` lists
 *                               and watches (kube/config.h)
 *   07-deployment.yaml          the scheduler: replicas (2) with leader
 *                               election, probes on /healthz and /readyz,
 *                               resource requests, non-root with a
 *                               read-only root filesystem
 *
 * The files are numbered so that `kubectl apply -f DIR` (which applies a
 * directory's files in name order) makes the Namespace first. Output is
 * fixed text: the same options give the same bytes. */
#ifndef GP_KUBE_DEPLOY_H
#define GP_KUBE_DEPLOY_H

#include <stdbool.h>

#include "io/render.h"
#include "kube/rbac.h"
#include "util/err.h"

#define GP_DEPLOY_NAMESPACE      "gpuplane-system"
#define GP_DEPLOY_NAME           "gpuplane-scheduler"   /* ServiceAccount, Roles, Deployment */
#define GP_DEPLOY_CONFIGMAP      GP_RBAC_CONFIGMAP_NAME /* the one its Role lets it read */
#define GP_DEPLOY_IMAGE          "gpuplane:" GP_VERSION
#define GP_DEPLOY_SCHEDULER_NAME "gpuplane"
#define GP_DEPLOY_POLICY         "best-fit" /* gpuplane sim's default */
#define GP_DEPLOY_HTTP_PORT      8080       /* /metrics, /healthz, /readyz (httpd.h) */
#define GP_DEPLOY_HTTP_ADDR      ":8080"

/* The arguments the Deployment gives `gpuplane schedule` (after the
 * subcommand), one per element: flags of src/cli/cmd_schedule.c. */
extern const char *const gp_deploy_schedule_args[];

struct gp_deploy_opts {
    const char *ns;             /* GP_DEPLOY_NAMESPACE: a DNS-1123 label */
    bool namespace_object;      /* write 00-namespace.yaml */
    const char *image;          /* GP_DEPLOY_IMAGE */
    const char *scheduler_name; /* the pods' spec.schedulerName: a DNS-1123 subdomain */
    unsigned replicas;          /* 2 (1 to 10) */
    const char *policy;         /* GP_DEPLOY_POLICY: a policy name (not checked here) */
};

void gp_deploy_opts_default(struct gp_deploy_opts *o);

/* Renders the files into out (emptied first). Errors: GP_EUSAGE for an
 * option out of range, naming its flag (--namespace, --image,
 * --scheduler-name, --policy, --replicas); GP_ENOMEM. On error *out is empty. */
enum gp_err gp_deploy_render(const struct gp_deploy_opts *o, struct gp_render *out,
                             struct gp_diag *diag);

#endif
