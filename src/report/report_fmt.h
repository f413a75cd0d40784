/* report_fmt.h - number and duration formatting and derived figures shared
 * by the report writers (report.c, report_html.c). Internal to report/; every
 * function is pure and writes into the caller's buffer. */
#ifndef GP_REPORT_REPORT_FMT_H
#define GP_REPORT_REPORT_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

/* A duration for people: "0 s", "350 ms", "3.2 s", "42 s", "4 min 10 s",
 * "2.5 h", "3.1 d". Non-finite or negative values give "-". */
void gp_report_fmt_duration(char *buf, size_t n, double s);

/* A statistic's value v as a duration, or "n/a" when nothing is behind
 * the statistics (st->n == 0): no bind, no completed job. */
void gp_report_fmt_stat(char *buf, size_t n, const struct gp_sim_stats *st, double v);

/* one or many, as count n asks: "1 node", "2 nodes", "0 nodes". */
const char *gp_report_plural(uint64_t n, const char *one, const char *many);

/* x with at most maxdec decimals and no trailing zeros ("72.5", "3600",
 * "0.0012"); never "-0". Non-finite values give "" (an empty CSV field). */
void gp_report_fmt_num(char *buf, size_t n, double x, int maxdec);

/* Time-averaged GPU allocation in percent: allocated / total GPU-hours, or
 * the mean of the samples when GPU-hours are unknown; 0 without data. */
double gp_report_gpu_avg_pct(const struct gp_sim_result *r);
/* The exact peak GPU allocation in percent (gp_sim_result's, from the
 * events, not the samples); 0 when unknown. */
double gp_report_gpu_peak_pct(const struct gp_sim_result *r);
/* Idle GPU-hours as a percentage of the total; 0 when the total is 0. */
double gp_report_gpu_idle_pct(const struct gp_sim_result *r);
/* Unallocated GPU % at the last point of the static curve (0 if none). */
double gp_report_static_final_pct(const struct gp_sim_result *r, double *arrived_pct);

/* Why pods can never fit, in words and numbers: "they need 9 GPUs, the
 * largest node has 8" (gang rows: "gang X needs 24 GPUs in one rack, the
 * largest rack has 16"). */
void gp_report_nofit_text(char *buf, size_t n, const struct gp_sim_nofit *nf);
/* The row as a sentence: "10 pods can never fit: REASON", "1 gang (8
 * pods) can never start: REASON". */
void gp_report_nofit_line(char *buf, size_t n, const struct gp_sim_nofit *nf);
/* The need no node meets, as the JSON names it: "gpu-count", "cpu", ... */
const char *gp_report_nofit_resource(const struct gp_sim_nofit *nf);

/* Filters ordered by their count, highest first (ties in filter order);
 * returns how many have a count above zero. order has GP_FILTER_COUNT slots. */
size_t gp_report_top_reasons(const struct gp_sim_result *r, enum gp_filter *order);
/* A main reason's words: the filter's text, or for the driver filter the
 * first pod's with its numbers (gp_sim_result.unschedulable_driver). */
const char *gp_report_reason_text(const struct gp_sim_result *r, enum gp_filter f);

#endif
