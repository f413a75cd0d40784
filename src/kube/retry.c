/* retry.c - the token bucket, the shared limiter and the back-off rules
 * (see retry.h). */
#include "kube/retry.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

void gp_kube_bucket_init(struct gp_kube_bucket *b, double qps, double burst, double now_s)
{
    b->qps = qps;
    b->burst = burst >= 1 ? burst : 1;
    b->tokens = b->burst;
    b->last_s = now_s;
}

double gp_kube_bucket_take(struct gp_kube_bucket *b, double now_s)
{
    if (b->qps <= 0)
        return 0;
    if (now_s > b->last_s) {
        b->tokens += (now_s - b->last_s) * b->qps;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last_s = now_s;
    }
    b->tokens -= 1;
    return b->tokens >= 0 ? 0 : -b->tokens / b->qps;
}

struct gp_kube_limiter {
    pthread_mutex_t mu;
    struct gp_kube_bucket b; /* under mu */
};

struct gp_kube_limiter *gp_kube_limiter_new(double qps, double burst, double now_s)
{
    struct gp_kube_limiter *l = malloc(sizeof *l);
    if (!l)
        return NULL;
    if (pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l);
        return NULL;
    }
    gp_kube_bucket_init(&l->b, qps, burst, now_s);
    return l;
}

void gp_kube_limiter_free(struct gp_kube_limiter *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    free(l);
}

double gp_kube_limiter_take(struct gp_kube_limiter *l, double now_s)
{
    pthread_mutex_lock(&l->mu);
    /* a thread that read the clock before another took its token: its
     * wait counted from the bucket's time, plus the difference */
    double t = now_s > l->b.last_s ? now_s : l->b.last_s;
    double wait = gp_kube_bucket_take(&l->b, t);
    pthread_mutex_unlock(&l->mu);
    return wait > 0 ? wait + (t - now_s) : 0;
}

double gp_kube_backoff_s(double base_s, double max_s, unsigned attempt, struct gp_rng *rng)
{
    double d = base_s * ldexp(1.0, attempt > 0 ? (int)(attempt < 60 ? attempt - 1 : 59) : 0);
    if (d > max_s)
        d = max_s;
    return d / 2 + gp_rng_unit(rng) * d / 2;
}

double gp_kube_retry_after_parse(const char *value)
{
    if (!value)
        return -1;
    while (*value == ' ' || *value == '\t')
        value++;
    if (!isdigit((unsigned char)*value))
        return -1;
    char *end;
    long v = strtol(value, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
        end++;
    if (*end || v < 0 || v > 86400)
        return -1;
    return (double)v;
}

bool gp_kube_status_retryable(long status)
{
    return status == 429 || (status >= 500 && status <= 599 && status != 501);
}
