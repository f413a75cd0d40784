/* report_services.h - the inference services' part of the simulator's
 * outputs (report_services.c): the JSON `services` array and the summary's
 * lines. Internal to report/. */
#ifndef GP_REPORT_REPORT_SERVICES_H
#define GP_REPORT_REPORT_SERVICES_H

#include <jansson.h>
#include <stdio.h>

#include "sim/sim.h"

/* One object per service (docs/FORMATS.md, "services"); NULL when out of
 * memory. Only called when r->nservices > 0, so that runs without
 * services keep their documents byte for byte. */
json_t *gp_report_services_json(const struct gp_sim_result *r);

/* The HTML report's services: a table of every service, and for the
 * first GP_REPORT_SERVICE_CHARTS of them charts of ready replicas (a
 * rollout marked), the load offered beside the load unserved, and p99
 * latency over time, and a line per rollout (nothing when there is none). */
#define GP_REPORT_SERVICE_CHARTS 8
struct gp_sbuf;
void gp_report_services_html(struct gp_sbuf *o, const struct gp_sim_result *r);

/* The summary's services table (nothing when there is none). */
void gp_report_services_summary(FILE *f, const struct gp_sim_result *r);

#endif
