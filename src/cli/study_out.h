/* study_out.h - outputs of the sharing study (src/plan/share_study.h): the
 * table printed by `gpuplane sim --compare-sharing`, its JSON document and
 * its HTML page. The options stay the caller's. */
#ifndef GP_CLI_STUDY_OUT_H
#define GP_CLI_STUDY_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "plan/share_study.h"
#include "util/sbuf.h"

/* The table, each mode's isolation and the cheapest option. */
void gp_study_print(FILE *f, const struct gp_study_option *o, size_t n, const char *workload);
/* {"sharing_study": [...], "cheapest": index or null} */
void gp_study_json(struct gp_sbuf *out, const struct gp_study_option *o, size_t n);
/* A self-contained page: bar charts of GPUs, cost and slowdown, and the table. */
void gp_study_html(struct gp_sbuf *out, const struct gp_study_option *o, size_t n,
                   const char *workload);

/* `gpuplane sim --compare-sharing`: loads the cluster and workloads, runs
 * the study, writes --json and --report (all or none) and prints the
 * table; returns the exit code (2 for bad input, with one line on stderr). */
int gp_cli_sharing_study(const char *cluster, const char *const *workloads, size_t nworkloads,
                         const char *json, const char *report, bool quiet);

#endif
