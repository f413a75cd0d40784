/* study_html.c - the sharing study's HTML page (study_out.h): one
 * self-contained page in the simulation report's style (report/html.h:
 * the same style sheet, cards and palette), with the recommendations
 * first, then cards, horizontal bar charts of GPUs, cost and the cost of
 * the work per option, the table with each option's isolation or why it
 * is not possible, and the pods that may not go to every pool. Every user
 * string is escaped; the page holds no clock time. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/study_out.h"
#include "report/html.h"

static const char *const mode_color[] = {GP_HTML_BLUE, GP_HTML_OCHRE, GP_HTML_GREEN, GP_HTML_RED};

/* One horizontal bar chart in a chart panel: a bar per feasible option. */
static void bars(struct gp_sbuf *out, const char *title, const char *unit, const struct gp_study *s,
                 double (*value)(const struct gp_study_option *))
{
    double max = 0;
    size_t rows = 0;
    for (size_t i = 0; i < s->noptions; i++)
        if (s->options[i].feasible) {
            rows++;
            if (value(&s->options[i]) > max)
                max = value(&s->options[i]);
        }
    int row_h = 22, left = 210, width = 880, bar_w = width - left - 120;
    int height = 40 + (int)rows * row_h;
    gp_sbuf_printf(out,
                   "<div class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 "
                   "%d %d\" width=\"%d\" height=\"%d\" font-family=\"system-ui,sans-serif\" "
                   "font-size=\"12\" fill=\"" GP_HTML_INK "\">\n<text x=\"8\" y=\"18\" "
                   "font-size=\"14\" font-weight=\"600\">",
                   width, height, width, height);
    gp_sbuf_add_xml(out, title);
    gp_sbuf_add(out, "</text>\n");
    int y = 30;
    char label[96];
    for (size_t i = 0; i < s->noptions; i++) {
        const struct gp_study_option *o = &s->options[i];
        if (!o->feasible)
            continue;
        double v = value(o);
        int w = max > 0 ? (int)lround(v / max * bar_w) : 0;
        gp_sbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8, y + 15);
        gp_sbuf_add_xml(out, gp_study_label(o, label, sizeof label));
        gp_sbuf_printf(out,
                       "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" "
                       "fill=\"%s\"/><text x=\"%d\" y=\"%d\">%.6g %s</text>\n",
                       left, y + 3, w, row_h - 6, mode_color[o->mode % 4], left + w + 6, y + 15,
                       round(v * 100) / 100, unit);
        y += row_h;
    }
    gp_sbuf_add(out, "</svg></div>\n");
}

static double v_gpus(const struct gp_study_option *o)
{
    return o->gpus;
}

static double v_cost(const struct gp_study_option *o)
{
    return o->usd_per_hour * GP_STUDY_HOURS_PER_MONTH;
}

static double v_work(const struct gp_study_option *o)
{
    return o->work_usd_per_hour * GP_STUDY_HOURS_PER_MONTH;
}

static void header(struct gp_sbuf *out, const struct gp_study *s, const struct gp_study_meta *m)
{
    gp_sbuf_add(out, "<h1>Which GPUs, shared how?</h1>\n<p class=\"sub\">");
    gp_sbuf_add_xml(out, m && m->workload ? m->workload : "workload");
    gp_sbuf_add(out, " on the pools of ");
    gp_sbuf_add_xml(out, m && m->cluster ? m->cluster : "the cluster");
    gp_sbuf_printf(out,
                   ": each pool shared each way holds every set of pods that runs at once on "
                   "the workload's timeline (seed %llu%s), packed by gpuplane's engine.</p>\n",
                   (unsigned long long)(m ? m->seed : 1),
                   m && m->horizon_s > 0 ? ", up to the horizon" : "");
    char lines[8][512];
    size_t n = gp_study_advice(s, lines, 8);
    gp_sbuf_add(out, "<section class=\"panel\"><h2>Recommendations</h2>\n<ul>\n");
    for (size_t i = 0; i < n; i++) {
        gp_sbuf_add(out, "<li>");
        gp_sbuf_add_xml(out, lines[i]);
        gp_sbuf_add(out, "</li>\n");
    }
    for (size_t i = 0; i < s->nconstraints; i++) {
        const struct gp_study_constraint *c = &s->constraints[i];
        char line[1024];
        snprintf(line, sizeof line,
                 "%s (up to %u at once) may go only to %s (%s); the options on other pools rent "
                 "these for it as they are configured",
                 c->item, c->peak_pods, c->pools[0] ? c->pools : "no pool", c->refused);
        gp_sbuf_add(out, "<li>");
        gp_sbuf_add_xml(out, line);
        gp_sbuf_add(out, "</li>\n");
    }
    gp_sbuf_add(out, "</ul>\n</section>\n");
}

static void cards(struct gp_sbuf *out, const struct gp_study *s)
{
    char v[96], note[160], label[96];
    gp_sbuf_add(out, "<div class=\"cards\">\n");
    snprintf(v, sizeof v, "%u", s->peak_pods);
    snprintf(note, sizeof note, "%zu pod %s on the timeline, %zu %s sized", s->runs,
             s->runs == 1 ? "run" : "runs", s->peaks, s->peaks == 1 ? "set" : "sets");
    gp_report_html_card(out, "pods at the peak", v, note);
    if (s->cheapest >= 0) {
        const struct gp_study_option *o = &s->options[s->cheapest];
        gp_report_html_usd(v, sizeof v, o->work_usd_per_hour * GP_STUDY_HOURS_PER_MONTH);
        snprintf(note, sizeof note, "%s: the work of a month",
                 gp_study_label(o, label, sizeof label));
        gp_report_html_card(out, "cheapest for the work", v, note);
    }
    if (s->cheapest_isolated >= 0) {
        const struct gp_study_option *o = &s->options[s->cheapest_isolated];
        gp_report_html_usd(v, sizeof v, o->work_usd_per_hour * GP_STUDY_HOURS_PER_MONTH);
        snprintf(note, sizeof note, "%s: the work of a month",
                 gp_study_label(o, label, sizeof label));
        gp_report_html_card(out, "cheapest with isolation", v, note);
    }
    size_t ok = 0;
    for (size_t i = 0; i < s->noptions; i++)
        ok += s->options[i].feasible;
    snprintf(v, sizeof v, "%zu of %zu", ok, s->noptions);
    gp_report_html_card(out, "options possible", v, "pool x way of sharing");
    gp_sbuf_add(out, "</div>\n");
}

static void table(struct gp_sbuf *out, const struct gp_study *s)
{
    gp_sbuf_add(out, "<section class=\"panel\"><h2>Options</h2>\n<table>\n<tr><th>pool and "
                     "sharing</th><td class=\"num\">nodes</td><td class=\"num\">GPUs</td>"
                     "<td class=\"num\">busy</td><td class=\"num\">$/hour</td>"
                     "<td class=\"num\">work $/h</td><td class=\"num\">slowdown</td>");
    if (s->nlimited)
        gp_sbuf_add(out, "<td>latency limits</td>");
    gp_sbuf_add(out, "<td>isolation, or why not</td></tr>\n");
    char label[96], usd[48], work[48];
    for (size_t i = 0; i < s->noptions; i++) {
        const struct gp_study_option *o = &s->options[i];
        gp_sbuf_add(out, "<tr><th>");
        gp_sbuf_add_xml(out, gp_study_label(o, label, sizeof label));
        gp_sbuf_add(out, "</th>");
        if (o->feasible) {
            gp_report_html_usd(usd, sizeof usd, o->usd_per_hour);
            gp_report_html_usd(work, sizeof work, o->work_usd_per_hour);
            gp_sbuf_printf(out,
                           "<td class=\"num\">%u</td><td class=\"num\">%u</td><td "
                           "class=\"num\">%u</td><td class=\"num\">%s</td><td "
                           "class=\"num\">%s</td><td class=\"num\">%.2fx</td><td>",
                           o->nodes, o->gpus, o->gpus_busy, usd, work, o->slowdown_max);
            if (s->nlimited) {
                const struct gp_study_latency *w = gp_study_latency_worst(o);
                char lat[320];
                gp_sbuf_add(out, o->meets_limits ? "met; the closest: " : "<b>missed</b>: ");
                gp_sbuf_add_xml(out, w ? gp_study_latency_text(w, lat, sizeof lat)
                                       : "none on this pool");
                gp_sbuf_add(out, "</td><td>");
            }
            gp_sbuf_add_xml(out, o->isolation);
            for (size_t k = 0; k < o->nforced; k++) {
                char line[256];
                snprintf(line, sizeof line,
                         "; with %u node%s of %s (%s, as configured) for up to %u pod%s",
                         o->forced[k].nodes, o->forced[k].nodes == 1 ? "" : "s", o->forced[k].pool,
                         gp_share_mode_name(o->forced[k].mode), o->forced[k].pods,
                         o->forced[k].pods == 1 ? "" : "s");
                gp_sbuf_add_xml(out, line);
            }
        } else {
            gp_sbuf_printf(out, "<td class=\"num\" colspan=\"%d\">not possible</td><td>",
                           s->nlimited ? 7 : 6);
            gp_sbuf_add_xml(out, o->why ? o->why : "");
        }
        gp_sbuf_add(out, "</td></tr>\n");
    }
    gp_sbuf_add(out, "</table>\n<p class=\"sub\">work $/h: what an hour of the peak's work at "
                     "full speed costs; a pod slowed down s times does 1/s of its work per "
                     "hour.</p>\n</section>\n");
}

void gp_study_html(struct gp_sbuf *out, const struct gp_study *s, const struct gp_study_meta *m)
{
    gp_sbuf_add(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>gpuplane sharing study: ");
    gp_sbuf_add_xml(out, m && m->workload ? m->workload : "workload");
    gp_sbuf_add(out, "</title>\n<style>\n");
    gp_sbuf_add(out, gp_report_html_css());
    gp_sbuf_add(out, "</style>\n</head>\n<body>\n<main>\n");
    header(out, s, m);
    cards(out, s);
    bars(out, "GPUs to rent", "GPUs", s, v_gpus);
    bars(out, "Cost per month (730 h)", "USD", s, v_cost);
    bars(out, "Cost of a month of the work (slowdowns counted)", "USD", s, v_work);
    table(out, s);
    if (m)
        gp_study_services_html(out, m->services);
    gp_sbuf_add(out, "<footer>Generated by gpuplane ");
    gp_sbuf_add_xml(out, m && m->version ? m->version : "");
    gp_sbuf_add(out, ". The same inputs and seed give the same page.</footer>\n"
                     "</main>\n</body>\n</html>\n");
}
