/* report_services.c - the inference services of a timed run in the JSON
 * document (the `services` array: one object per service with its
 * `replicas` and `load` timelines, latency percentiles, unserved time,
 * cold starts and cost, and for LLM services `ttft_p99_s` and
 * `tokens_per_s`) and in the human summary. */
#include <math.h>
#include <stdlib.h>

#include "io/svg.h"
#include "report/report_fmt.h"
#include "report/report_services.h"
#include "util/sbuf.h"

/* a real rounded to dec decimals; null when not finite */
static json_t *real(double x, int dec)
{
    if (!isfinite(x))
        return json_null();
    double p = pow(10.0, dec);
    double v = round(x * p) / p;
    if (!isfinite(v))
        v = x;
    if (v == 0)
        v = 0.0;
    return json_real(v);
}

static bool set(json_t *o, const char *k, json_t *v)
{
    return o && json_object_set_new(o, k, v) == 0;
}

static json_t *series(const double *v, size_t n, int dec)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, real(v[i], dec)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

#define GP_REPORT_ROLLOUT_MARKS 4 /* the first rollouts marked on a replica chart */

static const char *const STATUS[] = {"complete", "progressing", "stalled", "not started",
                                     "superseded"};

static json_t *rollout_json(const struct gp_sim_rollout *ro)
{
    json_t *o = json_object();
    bool ok =
        set(o, "at_s", real(ro->at_s, 3)) && set(o, "status", json_string(STATUS[ro->status]));
    if (ok && ro->status != GP_ROLLOUT_NOT_STARTED)
        ok = set(o, "start_s", real(ro->start_s, 3)) &&
             set(o, "duration_s", real(ro->duration_s, 3)) &&
             set(o, "replicas", json_integer(ro->replicas)) &&
             set(o, "max_surge", json_integer(ro->max_surge)) &&
             set(o, "max_unavailable", json_integer(ro->max_unavailable)) &&
             set(o, "min_ready", json_integer(ro->min_ready)) &&
             set(o, "max_pods", json_integer(ro->max_pods)) &&
             set(o, "replicas_low", json_integer(ro->replicas_low)) &&
             set(o, "replicas_high", json_integer(ro->replicas_high)) &&
             set(o, "below_min_available_s", real(ro->below_min_available_s, 3)) &&
             set(o, "spare_gpus_peak", real(ro->spare_gpus_peak, 3)) &&
             set(o, "no_room", json_boolean(ro->no_room)) &&
             (!ro->no_room || set(o, "no_room_s", real(ro->no_room_s, 3)));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* One line of what a rollout did, for the summary and the report. */
static void rollout_text(char *b, size_t n, const struct gp_sim_rollout *ro)
{
    char d[32], at[32];
    gp_report_fmt_duration(d, sizeof d, ro->duration_s);
    gp_report_fmt_duration(at, sizeof at, ro->at_s);
    if (ro->status == GP_ROLLOUT_NOT_STARTED) {
        snprintf(b, n, "rollout at %s: not started", at);
        return;
    }
    char range[48] = "";
    if (ro->replicas_low != ro->replicas_high)
        snprintf(range, sizeof range, ", scaled %d-%d while it ran", ro->replicas_low,
                 ro->replicas_high);
    int k = snprintf(b, n,
                     "rollout at %s: %s %s %s, %d replicas (surge %d, unavailable %d%s), "
                     "ready >= %d, %g spare GPUs",
                     at, STATUS[ro->status], ro->status == GP_ROLLOUT_COMPLETE ? "in" : "after", d,
                     ro->replicas, ro->max_surge, ro->max_unavailable, range, ro->min_ready,
                     ro->spare_gpus_peak);
    if (ro->no_room && k > 0 && (size_t)k < n)
        snprintf(b + k, n - (size_t)k, "; no room for surge replicas: %s",
                 ro->status == GP_ROLLOUT_STALLED ? "stalled"
                 : ro->max_unavailable > 0        ? "went on through maxUnavailable"
                                                  : "waited for room");
}

static json_t *one(const struct gp_sim_service *s)
{
    json_t *o = json_object();
    bool ok =
        set(o, "name", json_string(s->name ? s->name : "")) &&
        set(o, "kind", json_string(s->llm ? "llm" : "requests")) &&
        set(o, "replicas", series(s->replicas, s->n, 0)) &&
        set(o, "load", series(s->load, s->n, 4)) &&
        set(o, "p99_latency_timeline_s", series(s->p99_timeline_s, s->n, 4)) &&
        set(o, "queued", series(s->queued, s->n, 1)) &&
        set(o, "unserved_load", series(s->unserved_load, s->n, 4)) &&
        set(o, "p50_latency_s", real(s->p50_latency_s, 4)) &&
        set(o, "p95_latency_s", real(s->p95_latency_s, 4)) &&
        set(o, "p99_latency_s", real(s->p99_latency_s, 4)) &&
        set(o, "unserved_s", real(s->unserved_s, 3)) && set(o, "requests", real(s->requests, 1)) &&
        set(o, "requests_queued", real(s->requests_queued, 1)) &&
        set(o, "requests_unserved", real(s->requests_unserved, 1)) &&
        set(o, "cold_starts", json_integer((json_int_t)s->cold_starts)) &&
        set(o, "peak_replicas", json_integer(s->peak_replicas)) &&
        set(o, "gpu_hours", real(s->gpu_hours, 4)) && set(o, "cost_usd", real(s->cost_usd, 2)) &&
        set(o, s->llm ? "usd_per_million_tokens" : "usd_per_million_requests",
            real(s->usd_per_million, 4));
    if (ok && s->llm)
        ok = set(o, "ttft_p99_s", real(s->ttft_p99_s, 4)) &&
             set(o, "tokens_per_s", real(s->tokens_per_s, 2));
    if (ok && s->has_rollout)
        ok = set(o, "rollout", rollout_json(&s->rollout));
    if (ok && s->has_rollout) {
        json_t *a = json_array();
        for (size_t k = 0; a && k < s->nrollouts; k++)
            if (json_array_append_new(a, rollout_json(&s->rollouts[k])) != 0) {
                json_decref(a);
                a = NULL;
            }
        ok = set(o, "rollouts", a);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *gp_report_services_json(const struct gp_sim_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->nservices; i++)
        if (json_array_append_new(a, one(&r->services[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

void gp_report_services_summary(FILE *f, const struct gp_sim_result *r)
{
    if (r->nservices == 0)
        return;
    char p50[32], p99[32], un[32], num[32], cost[40];
    fprintf(f, "\n  services        %-14s %9s %9s %9s %11s %6s %10s\n", "", "p50", "p99",
            "unserved", "replicas", "cold", "cost");
    for (size_t i = 0; i < r->nservices; i++) {
        const struct gp_sim_service *s = &r->services[i];
        gp_report_fmt_duration(p50, sizeof p50, s->p50_latency_s);
        gp_report_fmt_duration(p99, sizeof p99, s->p99_latency_s);
        gp_report_fmt_duration(un, sizeof un, s->unserved_s);
        gp_report_fmt_num(num, sizeof num, s->cost_usd, 2);
        snprintf(cost, sizeof cost, "$%s", num);
        fprintf(f, "                  %-14.14s %9s %9s %9s %6s %4u %6llu %10s\n",
                s->name ? s->name : "", p50, p99, un, "peak", s->peak_replicas,
                (unsigned long long)s->cold_starts, cost);
        if (s->llm) {
            char tt[32];
            gp_report_fmt_duration(tt, sizeof tt, s->ttft_p99_s);
            gp_report_fmt_num(num, sizeof num, s->tokens_per_s, 1);
            fprintf(f, "                  %-14s TTFT p99 %s, %s tokens/s\n", "", tt, num);
        }
        for (size_t k = 0; s->has_rollout && k < s->nrollouts; k++) {
            char ro[320];
            rollout_text(ro, sizeof ro, &s->rollouts[k]);
            fprintf(f, "                  %-14s %s\n", "", ro);
        }
    }
}

/* ---- HTML ------------------------------------------------------------------ */

/* A chart of one series over time, or two (the second dashed, both in
 * the legend), with the markers given. */
struct chart_in {
    const char *title, *ylabel, *xlabel;
    const double *t;
    size_t n;
    double xmax;
    bool step;
    const double *y, *y2;
    const char *name, *name2, *color, *color2;
    const struct gp_svg_marker *markers;
    size_t nmarkers;
};

static void line_chart(struct gp_sbuf *o, const struct chart_in *in)
{
    struct gp_svg_series s[2] = {
        {.name = in->y2 ? in->name : NULL,
         .x = in->t,
         .y = in->y,
         .n = in->n,
         .color = in->color,
         .step = in->step,
         .area = true},
        {.name = in->name2,
         .x = in->t,
         .y = in->y2,
         .n = in->n,
         .color = in->color2,
         .dashed = true,
         .step = in->step,
         .area = true},
    };
    struct gp_svg_chart ch = {0};
    ch.title = in->title;
    ch.x = (struct gp_svg_axis){.label = in->xlabel, .min = 0, .fixed_min = true};
    if (in->xmax > 0) {
        ch.x.fixed_max = true;
        ch.x.max = in->xmax;
    }
    ch.y =
        (struct gp_svg_axis){.label = in->ylabel, .min = 0, .fixed_min = true, .integer = in->step};
    ch.series = s;
    ch.nseries = in->y2 ? 2 : 1;
    ch.markers = in->markers;
    ch.nmarkers = in->nmarkers;
    ch.empty_text = "no samples";
    gp_sbuf_add(o, "<section class=\"chart\">\n");
    gp_svg_line_chart(o, &ch);
    gp_sbuf_add(o, "</section>\n");
}

void gp_report_services_html(struct gp_sbuf *o, const struct gp_sim_result *r)
{
    if (r->nservices == 0)
        return;
    gp_sbuf_add(o, "<section class=\"panel\">\n<h2>Inference services</h2>\n<p class=\"sub\">"
                   "Latency is each request's time in the system (queueing included, "
                   "docs/serve.md); unserved is the time requests waited for capacity; "
                   "each new replica pays a cold start.</p>\n<table>\n"
                   "<tr><th>service</th><th>kind</th><th class=\"num\">p50</th>"
                   "<th class=\"num\">p95</th><th class=\"num\">p99</th>"
                   "<th class=\"num\">TTFT p99</th><th class=\"num\">unserved</th>"
                   "<th class=\"num\">peak replicas</th><th class=\"num\">cold starts</th>"
                   "<th class=\"num\">GPU-hours</th><th class=\"num\">cost</th>"
                   "<th class=\"num\">$ per million</th></tr>\n");
    for (size_t i = 0; i < r->nservices; i++) {
        const struct gp_sim_service *s = &r->services[i];
        char p50[32], p95[32], p99[32], tt[32] = "-", un[32];
        gp_report_fmt_duration(p50, sizeof p50, s->p50_latency_s);
        gp_report_fmt_duration(p95, sizeof p95, s->p95_latency_s);
        gp_report_fmt_duration(p99, sizeof p99, s->p99_latency_s);
        if (s->llm)
            gp_report_fmt_duration(tt, sizeof tt, s->ttft_p99_s);
        gp_report_fmt_duration(un, sizeof un, s->unserved_s);
        gp_sbuf_add(o, "<tr><td>");
        gp_sbuf_add_xml(o, s->name ? s->name : "-");
        gp_sbuf_printf(o,
                       "</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                       "<td class=\"num\">%s</td><td class=\"num\">%s</td>"
                       "<td class=\"num\">%s</td><td class=\"num\">%u</td>"
                       "<td class=\"num\">%llu</td><td class=\"num\">%.1f</td>"
                       "<td class=\"num\">$%.2f</td><td class=\"num\">$%.2f %s</td></tr>\n",
                       s->llm ? "LLM" : "requests", p50, p95, p99, tt, un, s->peak_replicas,
                       (unsigned long long)s->cold_starts, s->gpu_hours, s->cost_usd,
                       s->usd_per_million, s->llm ? "tokens" : "requests");
    }
    gp_sbuf_add(o, "</table>\n");
    for (size_t i = 0; i < r->nservices; i++) {
        const struct gp_sim_service *s = &r->services[i];
        for (size_t k = 0; s->has_rollout && k < s->nrollouts; k++) {
            char ro[320];
            rollout_text(ro, sizeof ro, &s->rollouts[k]);
            gp_sbuf_add(o, "<p>");
            gp_sbuf_add_xml(o, s->name ? s->name : "-");
            gp_sbuf_add(o, ": ");
            gp_sbuf_add_xml(o, ro);
            gp_sbuf_add(o, "</p>\n");
        }
    }
    gp_sbuf_add(o, "</section>\n");

    size_t n = r->samples ? r->nsamples : 0;
    double end = isfinite(r->sim_end_s) ? r->sim_end_s : 0;
    double div = end >= 72 * 3600.0 ? 86400.0 : end >= 3 * 3600.0 ? 3600.0 : end >= 180 ? 60 : 1;
    const char *xlabel = div == 86400.0  ? "time (days)"
                         : div == 3600.0 ? "time (h)"
                         : div == 60     ? "time (min)"
                                         : "time (s)";
    double *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) {
        o->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = r->samples[i].t_s / div;
    for (size_t i = 0; i < r->nservices && i < GP_REPORT_SERVICE_CHARTS; i++) {
        const struct gp_sim_service *s = &r->services[i];
        size_t k = s->n < n ? s->n : n;
        const char *nm = s->name ? s->name : "-";
        struct gp_svg_marker mk[2 * GP_REPORT_ROLLOUT_MARKS];
        size_t nmk = 0;
        for (size_t q = 0; s->has_rollout && q < s->nrollouts && q < GP_REPORT_ROLLOUT_MARKS; q++) {
            const struct gp_sim_rollout *ro = &s->rollouts[q];
            if (ro->status == GP_ROLLOUT_NOT_STARTED)
                continue;
            mk[nmk++] = (struct gp_svg_marker){ro->start_s / div, "rollout", "#6a4c93"};
            if (ro->status == GP_ROLLOUT_COMPLETE)
                mk[nmk++] = (struct gp_svg_marker){(ro->start_s + ro->duration_s) / div,
                                                   "rolled out", "#6a4c93"};
        }
        char title[160];
        struct chart_in c = {.title = title, .xlabel = xlabel, .t = t, .n = k, .xmax = end / div};
        snprintf(title, sizeof title, "%.60s: ready replicas", nm);
        c.ylabel = "replicas";
        c.y = s->replicas;
        c.step = true;
        c.color = "#2f6690";
        c.markers = mk;
        c.nmarkers = nmk;
        line_chart(o, &c);
        snprintf(title, sizeof title, "%.60s: load offered and unserved", nm);
        c = (struct chart_in){.title = title,
                              .ylabel = "requests/s",
                              .xlabel = xlabel,
                              .t = t,
                              .n = k,
                              .xmax = end / div,
                              .y = s->load,
                              .name = "offered",
                              .color = "#c17f2a",
                              .y2 = s->unserved_load,
                              .name2 = "unserved (joined the wait)",
                              .color2 = "#b5452b"};
        line_chart(o, &c);
        snprintf(title, sizeof title, "%.60s: p99 latency of each interval", nm);
        c = (struct chart_in){.title = title,
                              .ylabel = "p99 latency (s)",
                              .xlabel = xlabel,
                              .t = t,
                              .n = k,
                              .xmax = end / div,
                              .y = s->p99_timeline_s,
                              .color = "#b5452b"};
        line_chart(o, &c);
    }
    free(t);
}
