/* report.h - the simulator's outputs: the human summary, the JSON document
 * (stable schema, docs/FORMATS.md), the CSV timeline and the self-contained
 * HTML report with inline SVG charts. Each writer renders into a string
 * buffer; the CLI writes files atomically, so failures leave nothing behind.
 * Output depends only on the result and meta: the same run gives the same
 * bytes. */
#ifndef GP_REPORT_REPORT_H
#define GP_REPORT_REPORT_H

#include <stdio.h>

#include "sim/sim.h"
#include "util/sbuf.h"

struct gp_report_meta {
    const char *version;          /* gpuplane version */
    const char *cluster;          /* the --cluster argument, or "built-in demo" */
    const char *const *workloads; /* the --workload arguments */
    size_t nworkloads;
    const struct gp_cluster *cluster_spec; /* pools, for the summary; may be NULL */
};

void gp_report_summary(FILE *f, const struct gp_sim_result *r, const struct gp_report_meta *m);
void gp_report_json(struct gp_sbuf *out, const struct gp_sim_result *r,
                    const struct gp_report_meta *m);
void gp_report_csv(struct gp_sbuf *out, const struct gp_sim_result *r);
void gp_report_html(struct gp_sbuf *out, const struct gp_sim_result *r,
                    const struct gp_report_meta *m);

#endif
