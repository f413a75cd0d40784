/* metrics.h - summary statistics for the simulator's results: sorting a
 * sample and its mean and nearest-rank percentiles.
 *
 * Internal to sim/ (and its tests). */
#ifndef GP_SIM_METRICS_H
#define GP_SIM_METRICS_H

#include <stddef.h>

#include "sim/sim.h"

/* Sorts v ascending (NaNs are not expected; they sort last). */
void gp_sim_metrics_sort(double *v, size_t n);

/* The nearest-rank p-th percentile of sorted v (n >= 1, 0 < p <= 100): the
 * smallest value such that at least p % of the values are <= it, that is
 * v[ceil(p / 100 * n) - 1]. 0 when n is 0. */
double gp_sim_metrics_percentile(const double *sorted, size_t n, double p);

/* Mean, p50, p95, p99 and max of sorted v, and n; all 0 when n is 0. */
void gp_sim_metrics_stats(const double *sorted, size_t n, struct gp_sim_stats *out);

#endif
