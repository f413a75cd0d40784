/* run.h - `gpuplane schedule`'s loop: an informer thread each for its
 * ConfigMap (config.h: listed first, before the scheduler is made, then
 * watched and applied between cycles), Nodes,
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
    const char *metrics_addr; /* NULL: no HTTP server */
    /* /healthz fails when the scheduling loop made no progress for stall_s
     * (0: 60), or when leading without a renewal for the Lease's duration
     * + lease_tolerance_s (0: 20, kube-scheduler's); run.c */
    double healthz_stall_s, healthz_lease_tolerance_s;
    double max_s;                /* stop after this long (0: until *stop) */
    uint64_t stop_after_binds;   /* stop once this many pods are bound (0: never) */
    bool stop_when_idle;         /* stop once pods were bound and every pending one fits nowhere */
    volatile sig_atomic_t *stop; /* set non-zero to stop (a signal handler); may be NULL */
    FILE *
        log; /* told where /metrics listens (its port) and what the ConfigMap changed; NULL: none */
    /* the ConfigMap of gpuplane's configuration (config.h): its keys over
     * sched's values (the flags'); a bad version at the start is an error
     * (GP_EINVALID, the line naming the key), later one the last good
     * configuration is kept through (logged, a Warning Event, a metric);
     * its deletion brings the flags' values back. config_name NULL: none. */
    const char *config_ns, *config_name;
};

struct gp_kube_run_result {
    struct gp_kube_sched_stats stats;
    double synced_s;     /* from the start until both informers had listed */
    double first_bind_s; /* from the start to the first and the last bind; -1 none */
    double last_bind_s;
    double wall_s;
    uint64_t config_applied; /* ConfigMap versions that changed what runs */
    uint64_t config_invalid; /* versions refused (the last good one kept) */
};

enum gp_err gp_kube_run(const struct gp_kube_run_opts *o, struct gp_kube_run_result *res,
                        struct gp_diag *diag);

#endif
