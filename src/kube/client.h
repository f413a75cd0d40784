/* client.h - the Kubernetes API client: HTTPS with libcurl (requests
 * written and read by http1.c over a kept connection libcurl opened;
 * watches by libcurl's HTTP), TLS verified
 * unless the kubeconfig says insecure-skip-tls-verify (against its
 * tls-server-name when it names one, else the URL's host), a bearer token
 * (re-read when its file changes) or a client certificate; a connect
 * timeout and a timeout on every request; retries with exponential
 * back-off and seeded jitter on 429 (Retry-After honoured) and 5xx, never
 * on other 4xx; responses capped in size; a client-side token bucket (QPS
 * and burst), its own or one shared by several clients (opts.limiter),
 * which every request and retry waits on, watches apart (client-go's
 * Request.Watch: "We specifically don't want to rate limit watches";
 * k8s.io/client-go/rest/request.go). One client is used by one thread at a time; a thread that
 * needs its own (an informer's watch) makes another from the same
 * configuration. */
#ifndef GP_KUBE_CLIENT_H
#define GP_KUBE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/kubeconfig.h"
#include "kube/watch.h"
#include "util/err.h"

struct gp_kube_limiter; /* retry.h */

struct gp_kube_client_opts {
    double connect_timeout_s;  /* 10 */
    double request_timeout_s;  /* 30: a whole request, retries apart */
    unsigned max_retries;      /* 5: retries after the first attempt */
    double backoff_base_s;     /* 0.2: the first retry waits 0.1-0.2 s */
    double backoff_max_s;      /* 30 */
    double retry_after_max_s;  /* 60: a longer Retry-After is cut to this */
    size_t max_response_bytes; /* 64 MiB */
    size_t max_line_bytes;     /* 16 MiB: one watch event */
    double qps, burst;         /* 50 and 100 (client-go's defaults are 5 and 10); qps 0: none */
    /* NULL: the client keeps a token bucket of its own (qps, burst); else
     * every request of the client waits on this limiter, shared with the
     * other clients given it (retry.h; borrowed: it must outlive them, and
     * qps and burst here are not read) */
    struct gp_kube_limiter *limiter;
    /* watch liveness: a stream that receives no byte for watch_idle_s ends
     * as a dropped connection (GP_EIO; the informer resumes from its last
     * resourceVersion). 120: twice kube-apiserver's bookmark period, one
     * minute (k8s.io/apiserver/pkg/storage/cacher: defaultBookmarkFrequency,
     * cacheWatcher.nextBookmarkTime). 0: none, the whole watch's timeout
     * alone */
    double watch_idle_s;
    /* TCP keepalive on every connection the client opens (requests' and
     * watches'): the first probe after this long idle, then one every this
     * long, as client-go's dialer (k8s.io/client-go/transport/cache.go,
     * net.Dialer{KeepAlive: 30 * time.Second}). 30; 0: off */
    double tcp_keepalive_s;
    uint64_t seed;  /* the jitter's seed */
    bool curl_http; /* false: requests written and read by http1.c over a kept
                     * connection libcurl opened; true: through libcurl's HTTP
                     * (watch streams always are) */
};

void gp_kube_client_opts_default(struct gp_kube_client_opts *o);

struct gp_kube_response {
    long status; /* the HTTP status of the last attempt */
    char *body;  /* malloc'd, NUL-terminated ("" when empty) */
    size_t len;
    unsigned attempts; /* 1 + the retries made */
    double waited_s;   /* time spent waiting between attempts and for the bucket */
};

void gp_kube_response_free(struct gp_kube_response *r);

struct gp_kube_client;

enum gp_err gp_kube_client_new(const struct gp_kube_config *cfg,
                               const struct gp_kube_client_opts *opts, struct gp_kube_client **out,
                               struct gp_diag *diag);
void gp_kube_client_free(struct gp_kube_client *c);

/* Asks the request or stream in progress (and any later) to stop soon;
 * safe from another thread or a signal handler. */
void gp_kube_client_cancel(struct gp_kube_client *c);

/* One request: path is absolute ("/api/v1/nodes?limit=500"), body and
 * content_type NULL for none. GP_OK means an answer came (any status: see
 * r->status and gp_kube_status_err); transport failures (refused, timed
 * out, the size cap) are GP_EIO or GP_ELIMIT with a one-line diag. 429
 * and 5xx are retried up to max_retries, transport failures too but only
 * for GET (a POST may have been applied). */
enum gp_err gp_kube_request(struct gp_kube_client *c, const char *method, const char *path,
                            const char *body, const char *content_type, struct gp_kube_response *r,
                            struct gp_diag *diag);

/* Requests that do not depend on each other's answers, made together:
 * with http1.c (not opts.curl_http) written at once on the kept connection
 * and answered in order (HTTP/1.1 pipelining, RFC 9112 §9.3.2), at most
 * GP_KUBE_BATCH_MAX; each call's result (err, r, d) as gp_kube_request
 * gives it, its retries (429, 5xx, a GET's transport failure) made alone
 * afterwards; one the server never read (it closed the connection after
 * an earlier answer) is sent again alone. Otherwise one after another. */
#define GP_KUBE_BATCH_MAX 16

struct gp_kube_call {
    const char *method, *path, *body, *content_type; /* as gp_kube_request's */
    enum gp_err err;
    struct gp_kube_response r; /* GP_OK: the caller frees it */
    struct gp_diag d;
};

void gp_kube_request_many(struct gp_kube_client *c, struct gp_kube_call *k, size_t n);

/* Requests sent pipelined so far (tests: the batches were made). */
unsigned long gp_kube_client_pipelined(const struct gp_kube_client *c);

/* A streaming GET (a watch), not rate limited: each line of a 200 answer goes to fn as it
 * arrives, until the server ends the stream, fn returns non-zero, the
 * timeout passes (GP_OK in all three) or the connection drops (GP_EIO),
 * or no byte came for opts.watch_idle_s (GP_EIO, the diag saying so: a
 * peer gone without a FIN or RST, a NAT that dropped the flow).
 * Not retried. Another status gives GP_OK with *status set and the
 * (capped) body in *err_body when err_body is not NULL. */
enum gp_err gp_kube_stream(struct gp_kube_client *c, const char *path, double timeout_s,
                           gp_kube_line_fn fn, void *ctx, long *status, char **err_body,
                           struct gp_diag *diag);

/* The Retry-After (seconds, cut to opts.retry_after_max_s) of the last
 * gp_kube_stream's answer; -1 when it had none. */
double gp_kube_client_stream_retry_after(const struct gp_kube_client *c);

/* The status as an error, with the Status body's message in diag:
 * 2xx GP_OK; 404 GP_ENOTFOUND; 409 and 410 GP_ESTATE; 400 and 422
 * GP_EINVALID; 401 and 403 GP_EUSAGE; 413 and 429 GP_ELIMIT; else GP_EIO. */
enum gp_err gp_kube_status_err(long status, const char *body, const char *method, const char *path,
                               struct gp_diag *diag);

/* The server's base URL ("https://host:port"). */
const char *gp_kube_client_server(const struct gp_kube_client *c);

/* The connections http1.c opened so far (0 with opts.curl_http). */
unsigned long gp_kube_client_connects(const struct gp_kube_client *c);

#endif
