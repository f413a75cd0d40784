/* httpd.h - the scheduler's HTTP endpoints over libmicrohttpd, on a thread
 * of their own:
 *
 *   GET /metrics  the registry's exposition (metrics.h), Content-Type
 *                 "text/plain; version=0.0.4; charset=utf-8"
 *   GET /healthz  200 "ok" when healthy (liveness), else 500 with the
 *                 reason: the optional health callback (gpuplane schedule:
 *                 the scheduling loop's heartbeat and the leader-election
 *                 watchdog, run.c) says so; without one, always 200
 *   GET /readyz   200 "ok" when ready, else 503 with the reason: ready
 *                 means the informers have synced and, with leader
 *                 election on, this replica is the leader or a standby
 *                 ready to take over (a standby that cannot reach the
 *                 Lease is not ready); an optional callback can add a
 *                 condition of its own
 *
 * HEAD is answered like GET without the body; another method is 405
 * (Allow: GET, HEAD); another path 404. Responses are text/plain. Paths
 * are matched exactly (a query string is ignored), as kube-scheduler's
 * /healthz and /readyz are probed (kubernetes.io/docs/reference/using-api/
 * health-checks/). The readiness flags are atomics that the scheduler's
 * threads set; the registry is read under its own lock. */
#ifndef GP_KUBE_HTTPD_H
#define GP_KUBE_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/metrics.h"
#include "util/err.h"

/* The leader-election state /readyz reads (with leader election on). */
enum gp_httpd_role {
    GP_HTTPD_ROLE_NONE,    /* not yet known, or the Lease cannot be read: not ready */
    GP_HTTPD_ROLE_LEADER,  /* holds the Lease */
    GP_HTTPD_ROLE_STANDBY, /* another replica holds it; this one watches and can take over */
};

/* An extra readiness condition: true when ready, else false with a short
 * reason written into why (n bytes). Called on the server's thread. */
typedef bool (*gp_httpd_ready_fn)(void *ctx, char *why, size_t n);

struct gp_httpd_opts {
    /* "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every IPv4 interface); port 0
     * picks a free one (gp_httpd_port). */
    const char *addr;
    struct gp_metrics *metrics; /* NULL: /metrics is empty */
    bool leader_election;       /* /readyz needs a role (gp_httpd_set_role) */
    gp_httpd_ready_fn ready;    /* NULL: none */
    void *ready_ctx;
    gp_httpd_ready_fn healthy; /* /healthz's condition, as ready is /readyz's; NULL: none */
    void *healthy_ctx;
};

struct gp_httpd;

/* Binds and starts serving. Errors: GP_EUSAGE for an address that does
 * not parse or resolve ("--metrics-addr"-style, named in the message),
 * GP_EIO when it cannot be bound, GP_ENOMEM. */
enum gp_err gp_httpd_start(const struct gp_httpd_opts *o, struct gp_httpd **out,
                           struct gp_diag *diag);
/* Stops serving (connections in progress are closed) and frees. */
void gp_httpd_stop(struct gp_httpd *h);

/* The port bound. */
unsigned gp_httpd_port(const struct gp_httpd *h);

/* Readiness: safe from any thread. */
void gp_httpd_set_synced(struct gp_httpd *h, bool synced);
void gp_httpd_set_role(struct gp_httpd *h, enum gp_httpd_role role);

/* Whether /readyz would answer 200 now; the reason into why when not. */
bool gp_httpd_ready(struct gp_httpd *h, char *why, size_t n);
/* Whether /healthz would answer 200 now; the reason into why when not. */
bool gp_httpd_healthy(struct gp_httpd *h, char *why, size_t n);

/* Splits "HOST:PORT", "[V6]:PORT" or ":PORT" into host ("" for none) and
 * port; false when it does not parse. For tests and the flag's check. */
bool gp_httpd_parse_addr(const char *addr, char *host, size_t hostn, unsigned *port);

#endif
