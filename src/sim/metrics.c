/* metrics.c - sorting and nearest-rank percentiles of simulator samples. */
#include "sim/metrics.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

void gp_sim_metrics_sort(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_double);
}

double gp_sim_metrics_percentile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0.0;
    if (!(p > 0))
        return sorted[0];
    if (p >= 100)
        return sorted[n - 1];
    /* rank = ceil(p/100 * n), computed so that e.g. p = 95, n = 20 gives
     * exactly 19 despite binary rounding of p/100 */
    double exact = p * (double)n / 100.0;
    size_t rank = (size_t)ceil(exact - 1e-9 * exact);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

void gp_sim_metrics_stats(const double *sorted, size_t n, struct gp_sim_stats *out)
{
    out->mean = out->p50 = out->p95 = out->p99 = out->max = 0.0;
    out->n = n;
    if (n == 0)
        return;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    out->mean = sum / (double)n;
    out->p50 = gp_sim_metrics_percentile(sorted, n, 50);
    out->p95 = gp_sim_metrics_percentile(sorted, n, 95);
    out->p99 = gp_sim_metrics_percentile(sorted, n, 99);
    out->max = sorted[n - 1];
}
