/* retry.c - the token bucket and the back-off rules (see retry.h). */
#include "kube/retry.h"

#include <ctype.h>
#include <math.h>
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
