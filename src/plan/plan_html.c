/* plan_html.c - the planner's report page (docs/plan.md, "Outputs"): one
 * self-contained HTML page with the top candidates side by side - their
 * pools, the monthly cost broken down (GPUs in use, idle GPUs, control
 * plane, CPU nodes) as a bar chart drawn in inline SVG, queueing, idle
 * share and what each gives up against the winner. */
#include <math.h>
#include <stdio.h>

#include "plan/plan_internal.h"

static void bar(struct gp_sbuf *b, double x, double w, const char *color, double y)
{
    if (w > 0)
        gp_sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>",
                       x, y, w, color);
}

static void chart(const struct gp_plan *p, size_t n, struct gp_sbuf *b)
{
    double top = 0;
    for (size_t i = 0; i < n; i++)
        top = p->cands[i].monthly_usd > top ? p->cands[i].monthly_usd : top;
    if (top <= 0)
        return;
    double k = GP_PLAN_MONTH_H / (p->demand->horizon_s / 3600), scale = 520 / top;
    gp_sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"%zu\">",
                   n * 22 + 30);
    for (size_t i = 0; i < n; i++) {
        const struct gp_plan_sim *s = &p->cands[i].sim;
        double y = 10 + 22.0 * (double)i, x = 40;
        gp_sbuf_printf(b, "<text x=\"0\" y=\"%.1f\" font-size=\"12\">#%zu</text>", y + 12, i + 1);
        double parts[4] = {s->gpu_used_usd, s->gpu_idle_usd, s->control_plane_usd, s->other_usd};
        static const char *const colors[4] = {"#2b6cb0", "#e53e3e", "#718096", "#a0aec0"};
        for (int j = 0; j < 4; j++) {
            bar(b, x, parts[j] * k * scale, colors[j], y);
            x += parts[j] * k * scale;
        }
        gp_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">$%.0f</text>", x + 6,
                       y + 12, p->cands[i].monthly_usd);
    }
    gp_sbuf_printf(b,
                   "<text x=\"40\" y=\"%zu\" font-size=\"11\"><tspan fill=\"#2b6cb0\">GPUs in "
                   "use</tspan> <tspan fill=\"#e53e3e\">idle GPUs</tspan> <tspan "
                   "fill=\"#718096\">control plane</tspan> <tspan fill=\"#a0aec0\">CPU "
                   "nodes</tspan></text></svg>\n",
                   n * 22 + 24);
}

/* One chart of the top candidates over time: GPU allocation % (pending
 * false) or pending pods. */
static void series_chart(const struct gp_plan *p, bool pending, struct gp_sbuf *b)
{
    static const char *const colors[GP_PLAN_SERIES] = {"#2b6cb0", "#dd6b20", "#38a169", "#805ad5"};
    double tmax = 0, ymax = pending ? 1 : 100;
    for (size_t i = 0; i < GP_PLAN_SERIES; i++)
        for (size_t k = 0; k < p->series[i].n; k++) {
            tmax = p->series[i].t_s[k] > tmax ? p->series[i].t_s[k] : tmax;
            if (pending && p->series[i].pending[k] > ymax)
                ymax = p->series[i].pending[k];
        }
    if (tmax <= 0)
        return;
    gp_sbuf_printf(b,
                   "<h2>%s over time</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                   "width=\"760\" height=\"220\"><rect x=\"50\" y=\"10\" width=\"680\" "
                   "height=\"180\" fill=\"none\" stroke=\"#ccc\"/>"
                   "<text x=\"0\" y=\"20\" font-size=\"11\">%.0f</text><text x=\"0\" "
                   "y=\"190\" font-size=\"11\">0</text><text x=\"680\" y=\"210\" "
                   "font-size=\"11\">%.1f h</text>",
                   pending ? "Pending pods" : "GPU allocation (%)", ymax, tmax / 3600);
    for (size_t i = 0; i < GP_PLAN_SERIES; i++) {
        const struct gp_plan_series *s = &p->series[i];
        if (s->n == 0)
            continue;
        gp_sbuf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                       colors[i]);
        for (size_t k = 0; k < s->n; k++) {
            double y = pending ? s->pending[k] : s->gpu_alloc_pct[k];
            gp_sbuf_printf(b, "%s%.1f,%.1f", k ? " " : "", 50 + 680 * s->t_s[k] / tmax,
                           190 - 180 * y / ymax);
        }
        gp_sbuf_printf(b, "\"/><text x=\"%zu\" y=\"210\" font-size=\"11\" fill=\"%s\">#%zu</text>",
                       60 + 40 * i, colors[i], i + 1);
    }
    gp_sbuf_add(b, "</svg>\n");
}

void gp_plan_html(const struct gp_plan *p, const char *workload, size_t top, struct gp_sbuf *b)
{
    size_t n = 0;
    while (n < p->ncands && n < top && p->cands[n].state == GP_PLAN_SIMULATED)
        n++;
    gp_sbuf_add(b,
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gpuplane "
                "plan</title><style>body{font-family:sans-serif;margin:2em}table{border-"
                "collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:"
                "right}td.l,th.l{text-align:left}</style></head><body>\n<h1>gpuplane plan</h1>\n");
    gp_sbuf_add(b, "<p>Workload: ");
    gp_sbuf_add_xml(b, workload);
    gp_sbuf_printf(b, ". %zu candidates, %zu simulated, %zu pruned by their lower bounds.</p>\n",
                   p->ncands, p->nsimulated, p->npruned);
    struct gp_sbuf why;
    gp_sbuf_init(&why);
    gp_plan_why(p, &why);
    gp_sbuf_add(b, "<p>");
    gp_sbuf_add_xml(b, gp_sbuf_str(&why));
    gp_sbuf_add(b, "</p>\n");
    gp_sbuf_free(&why);
    chart(p, n, b);
    gp_sbuf_add(b, "<table><tr><th>rank</th><th class=\"l\">provider</th><th "
                   "class=\"l\">candidate</th><th>$/month</th><th>GPUs in use</th><th>idle "
                   "GPUs</th><th>control plane</th><th>spot savings</th><th>lost work</th><th>idle "
                   "share</th><th>p95 delay (s)</th><th>limits</th><th class=\"l\">against the "
                   "winner</th></tr>\n");
    double k = GP_PLAN_MONTH_H / (p->demand->horizon_s / 3600);
    for (size_t i = 0; i < n; i++) {
        const struct gp_plan_cand *c = &p->cands[i], *w = &p->cands[0];
        const struct gp_plan_sim *s = &c->sim;
        gp_sbuf_printf(b, "<tr><td>%zu</td><td class=\"l\">", i + 1);
        gp_sbuf_add_xml(b, c->provider->id);
        gp_sbuf_add(b, "</td><td class=\"l\">");
        gp_sbuf_add_xml(b, c->what);
        gp_sbuf_printf(b,
                       "</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>"
                       "<td>%.0f</td><td>%.1f %%</td><td>%.0f</td><td>%s</td><td class=\"l\">",
                       c->monthly_usd, gp_plan_usd_shown(s->gpu_used_usd * k),
                       gp_plan_usd_shown(s->gpu_idle_usd * k), s->control_plane_usd * k,
                       s->spot_savings_usd * k, s->lost_work_usd * k,
                       s->gpu_hours_total > 0 ? 100 * s->gpu_hours_idle / s->gpu_hours_total : 0,
                       s->queue_p95_s, c->limits_met ? "met" : "missed");
        if (i == 0)
            gp_sbuf_add(b, "the winner");
        else
            gp_sbuf_printf(b, "+$%.0f a month; p95 delay %+.0f s; idle GPUs %+.0f $/month",
                           c->monthly_usd - w->monthly_usd, s->queue_p95_s - w->sim.queue_p95_s,
                           gp_plan_usd_shown((s->gpu_idle_usd - w->sim.gpu_idle_usd) * k));
        gp_sbuf_add(b, "</td></tr>\n");
    }
    gp_sbuf_add(b, "</table>\n");
    series_chart(p, false, b);
    series_chart(p, true, b);
    if (n) {
        gp_sbuf_add(b, "<h2>The winner's Cluster spec</h2>\n<pre>");
        gp_sbuf_add_xml(b, p->cands[0].yaml);
        gp_sbuf_add(b, "</pre>\n");
    }
    gp_sbuf_add(b, "</body></html>\n");
}
