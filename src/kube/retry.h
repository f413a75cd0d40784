/* retry.h - when the API client may send: a token bucket (QPS and burst,
 * as client-go's flags), the same bucket behind a lock for clients that
 * share one limit (gp_kube_limiter), and the back-off between retries
 * (exponential, with seeded jitter, Retry-After honoured). The caller
 * gives the time, so the rules are tested without sleeping. */
#ifndef GP_KUBE_RETRY_H
#define GP_KUBE_RETRY_H

#include <stdbool.h>

#include "util/rng.h"

struct gp_kube_bucket {
    double qps;    /* tokens added per second; <= 0: no limit */
    double burst;  /* the most tokens held */
    double tokens; /* may go negative: requests already promised a slot */
    double last_s; /* when tokens was last brought up to date */
};

void gp_kube_bucket_init(struct gp_kube_bucket *b, double qps, double burst, double now_s);
/* Takes a token for a request at now_s and returns how long it must wait
 * before it is sent (0 when a token is there). */
double gp_kube_bucket_take(struct gp_kube_bucket *b, double now_s);

/* One client-side rate limit shared by several clients, each on its own
 * thread: a token bucket behind a mutex. client-go builds one
 * flowcontrol.NewTokenBucketRateLimiter(QPS, Burst) per clientset
 * (k8s.io/client-go/kubernetes/clientset.go, NewForConfigAndClient) and
 * hands that one rest.Config to every group's client, so all of a
 * clientset's requests (its informers' lists, its writes) wait on the one
 * bucket; kube-scheduler makes its informers and its binding and status
 * writes from one clientset (cmd/kube-scheduler/app/options/options.go,
 * createClients, v1.28), its Lease from a clientset of its own
 * (resourcelock.NewFromKubeconfig). The caller owns the limiter and frees
 * it after every client that borrows it (gp_kube_client_opts.limiter). */
struct gp_kube_limiter;

/* NULL when out of memory; qps <= 0: no limit (take always 0). */
struct gp_kube_limiter *gp_kube_limiter_new(double qps, double burst, double now_s);
void gp_kube_limiter_free(struct gp_kube_limiter *l);
/* gp_kube_bucket_take on the shared bucket (safe from any thread). */
double gp_kube_limiter_take(struct gp_kube_limiter *l, double now_s);

/* The wait before retry number `attempt` (1 for the first retry): a
 * uniform draw in [d/2, d] with d = min(max_s, base_s * 2^(attempt-1)). */
double gp_kube_backoff_s(double base_s, double max_s, unsigned attempt, struct gp_rng *rng);

/* A Retry-After header's value in seconds (delta-seconds only; an HTTP
 * date or anything else gives -1). */
double gp_kube_retry_after_parse(const char *value);

/* Whether a response status is worth retrying: 429 and 5xx (except 501,
 * which will not change). */
bool gp_kube_status_retryable(long status);

#endif
