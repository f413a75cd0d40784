/* run.h - `gpuplane schedule`'s loop: an informer thread each for Nodes,
 * Pods and PodGroups (scheduling.x-k8s.io/v1alpha1; absent CRD: none) (a client of its own, list
 * then watch, resumed after a drop with a back-off, stopped by gp_kube_client_cancel), their
 * changes handed over a queue to the scheduling thread, which applies them (sched.h), takes or
 * renews the Lease (lease.h) every retry period, runs a cycle whenever
 * something changed or a back-off ended, and keeps the metrics
 * (metrics.h) and /metrics, /healthz, /readyz (httpd.h). */
#ifndef GP_KUBE_RUN_H
#define GP_KUBE_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/lease.h"
#include "kube/sched.h"

struct gp_kube_run_opts {
    const struct gp_kube_config *cfg;
    struct gp_kube_client_opts client;
    struct gp_kube_sched_opts sched;
    bool leader_elect;
    struct gp_kube_lease_opts lease;
    const char *metrics_addr;    /* NULL: no HTTP server */
    double max_s;                /* stop after this long (0: until *stop) */
    uint64_t stop_after_binds;   /* stop once this many pods are bound (0: never) */
    bool stop_when_idle;         /* stop once pods were bound and every pending one fits nowhere */
    volatile sig_atomic_t *stop; /* set non-zero to stop (a signal handler); may be NULL */
    FILE *log;                   /* told where /metrics listens (its port); NULL: none */
};

struct gp_kube_run_result {
    struct gp_kube_sched_stats stats;
    double synced_s;     /* from the start until both informers had listed */
    double first_bind_s; /* from the start to the first and the last bind; -1 none */
    double last_bind_s;
    double wall_s;
};

enum gp_err gp_kube_run(const struct gp_kube_run_opts *o, struct gp_kube_run_result *res,
                        struct gp_diag *diag);

#endif
