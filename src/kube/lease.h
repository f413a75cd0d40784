/* lease.h - leader election over a coordination.k8s.io/v1 Lease, as
 * client-go's leaderelection does it (k8s.io/client-go/tools/
 * leaderelection): a replica takes the Lease when it is absent, free
 * (no holder) or expired - its record unchanged for leaseDurationSeconds
 * by this replica's own clock, never by comparing renewTime with a clock
 * of another machine - writing its identity with the Lease's
 * resourceVersion as a precondition (two replicas racing: one gets 409);
 * the leader renews every retry period and stops leading when it has not
 * renewed for the renew deadline. Only the leader binds (sched.h). */
#ifndef GP_KUBE_LEASE_H
#define GP_KUBE_LEASE_H

#include <stdbool.h>

#include "kube/client.h"
#include "util/err.h"

struct gp_kube_lease_opts {
    const char *ns;          /* the Lease's namespace: "kube-system" */
    const char *name;        /* "gpuplane-scheduler" */
    const char *identity;    /* this replica (the pod's name and a random suffix) */
    double duration_s;       /* leaseDurationSeconds: 15 (kube-scheduler's) */
    double renew_deadline_s; /* 10 */
    double retry_period_s;   /* 2 */
};

void gp_kube_lease_opts_default(struct gp_kube_lease_opts *o);

struct gp_kube_lease;

enum gp_err gp_kube_lease_new(struct gp_kube_client *c, const struct gp_kube_lease_opts *o,
                              struct gp_kube_lease **out, struct gp_diag *diag);
void gp_kube_lease_free(struct gp_kube_lease *l);

/* One attempt at now_s (a monotonic clock) to take or renew the Lease;
 * returns whether this replica leads now. Call every retry period. */
bool gp_kube_lease_tick(struct gp_kube_lease *l, double now_s);

/* A client's options for the Lease's own client (gpuplane schedule makes
 * one): each request cut at a quarter of the renew deadline (connecting
 * included) and never retried by the client (no back-off, no wait for a
 * Retry-After), so that one tick - a GET and a write - ends within half
 * the renew deadline whatever the server does. client-go bounds a
 * renewal so (leaderelection.go, renew: tryAcquireOrRenew under a
 * context of RenewDeadline, tried again each RetryPeriod); here each
 * tick is one try, the caller's loop the retries. */
void gp_kube_lease_client_opts(const struct gp_kube_lease_opts *lo, struct gp_kube_client_opts *co);

/* Until when (the clock of gp_kube_lease_tick's now_s) this replica may
 * act as leader: its last successful write plus the renew deadline;
 * -INFINITY when it does not lead. */
double gp_kube_lease_deadline(const struct gp_kube_lease *l);

/* Gives the Lease up (holderIdentity emptied) if this replica holds it,
 * so that another takes over at once (client-go's ReleaseOnCancel). */
void gp_kube_lease_release(struct gp_kube_lease *l);

/* The holder last seen ("" when none) and the transitions counted. */
const char *gp_kube_lease_holder(const struct gp_kube_lease *l);

#endif
