/* report_html.c - the HTML report: one self-contained page (inline CSS,
 * inline SVG charts from svg.c, no scripts, no external resources) with the
 * run's parameters, the headline figures as cards, the unschedulable
 * reasons and the charts: GPU allocation, pending and running pods over
 * time and the queueing-delay histogram (timed mode), or the unallocated
 * GPU curve (static mode). Every user string is escaped; the page holds no
 * clock time, so the same run gives the same bytes. */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/svg.h"
#include "report/html.h"
#include "report/report_fmt.h"
#include "report/report_services.h"

#define C_BLUE  "#2f6690"
#define C_OCHRE "#c17f2a"
#define C_GREEN "#4f8a5b"
#define C_RED   "#b5452b"
#define C_GRAY  "#8a96a3"
#define C_INK   "#3e4c59"

#define MAX_POOLS_SHOWN 16 /* in the parameters table */

static const char css[] =
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#f5f6f8;color:#1f2933;"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
    "sans-serif}\n"
    "main{max-width:940px;margin:0 auto;padding:28px 20px 40px}\n"
    "h1{font-size:22px;font-weight:600;margin:0 0 2px}\n"
    "h2{font-size:15px;font-weight:600;margin:0 0 8px}\n"
    ".sub{color:#616e7c;margin:0 0 16px}\n"
    ".panel{background:#fff;border:1px solid #e1e5ea;border-radius:6px;padding:14px 16px;"
    "margin:14px 0}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "th,td{text-align:left;vertical-align:top;padding:4px 10px 4px 0}\n"
    "th{color:#616e7c;font-weight:500;width:150px;white-space:nowrap}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;width:90px;padding-right:16px}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px;"
    "margin:14px 0}\n"
    ".card{background:#fff;border:1px solid #e1e5ea;border-radius:6px;padding:10px 14px}\n"
    ".card .k{color:#616e7c;font-size:12px;text-transform:uppercase;letter-spacing:.04em}\n"
    ".card .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums;margin:2px 0}\n"
    ".card .n{color:#7b8794;font-size:12px}\n"
    ".chart{background:#fff;border:1px solid #e1e5ea;border-radius:6px;padding:6px;"
    "margin:14px 0}\n"
    ".chart svg{display:block;width:100%;height:auto}\n"
    "footer{color:#7b8794;font-size:12px;margin-top:24px}\n";

static const char *str_or(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

/* An integer with thousands separators: "12,345". */
static void fmt_count(char *buf, size_t n, uint64_t v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRIu64, v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = '\0';
}

/* A quantity such as hours: one decimal below 1000, else a whole number
 * with thousands separators ("12.5", "4,347,581"). */
static void fmt_qty(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        v = 0;
    if (fabs(v) < 1000 || fabs(v) >= 1e18) {
        gp_report_fmt_num(buf, n, v, 1);
        if (!buf[0])
            snprintf(buf, n, "0");
        return;
    }
    fmt_count(buf, n, (uint64_t)llround(fabs(v)));
}

static void fmt_pct(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%.1f %%", isfinite(v) ? v : 0.0);
}

/* Dollars with thousands separators: "$12,345.67". */
static void fmt_usd(char *buf, size_t n, double v)
{
    char whole[32];
    double cents = round(v * 100);
    if (!isfinite(cents) || cents < 0 || cents >= 1e17) {
        snprintf(buf, n, "$%.2f", v);
        return;
    }
    uint64_t c = (uint64_t)cents;
    fmt_count(whole, sizeof whole, c / 100);
    snprintf(buf, n, "$%s.%02u", whole, (unsigned)(c % 100));
}

/* A card; value and note are plain text (escaped here); note may be NULL. */
static void card(struct gp_sbuf *o, const char *key, const char *value, const char *note)
{
    gp_sbuf_add(o, "<div class=\"card\"><div class=\"k\">");
    gp_sbuf_add_xml(o, key);
    gp_sbuf_add(o, "</div><div class=\"v\">");
    gp_sbuf_add_xml(o, value);
    gp_sbuf_add(o, "</div>");
    if (note && *note) {
        gp_sbuf_add(o, "<div class=\"n\">");
        gp_sbuf_add_xml(o, note);
        gp_sbuf_add(o, "</div>");
    }
    gp_sbuf_add(o, "</div>\n");
}

static void param_row(struct gp_sbuf *o, const char *key, const char *value)
{
    gp_sbuf_add(o, "<tr><th>");
    gp_sbuf_add_xml(o, key);
    gp_sbuf_add(o, "</th><td>");
    gp_sbuf_add_xml(o, value);
    gp_sbuf_add(o, "</td></tr>\n");
}

static void header(struct gp_sbuf *o, const struct gp_sim_result *r, const struct gp_report_meta *m)
{
    bool timed = r->mode != GP_SIM_STATIC;
    char buf[256];

    gp_sbuf_add(o, "<header>\n<h1>Simulation report</h1>\n<p class=\"sub\">gpuplane ");
    gp_sbuf_add_xml(o, str_or(m ? m->version : NULL, ""));
    gp_sbuf_add(o, timed ? " &middot; timed mode" : " &middot; static packing");
    gp_sbuf_add(o, " &middot; policy ");
    gp_sbuf_add_xml(o, str_or(r->policy, "-"));
    gp_sbuf_printf(o, " &middot; seed %" PRIu64 "</p>\n", r->seed);

    gp_sbuf_add(o, "<div class=\"panel\"><table>\n");
    char nodes[32], gpus[32];
    fmt_count(nodes, sizeof nodes, r->nodes);
    fmt_count(gpus, sizeof gpus, r->gpus);
    snprintf(buf, sizeof buf, "%s %s, %s %s", nodes, gp_report_plural(r->nodes, "node", "nodes"),
             gpus, gp_report_plural(r->gpus, "GPU", "GPUs"));
    gp_sbuf_add(o, "<tr><th>Cluster</th><td>");
    gp_sbuf_add_xml(o, str_or(m ? m->cluster : NULL, "(unnamed)"));
    gp_sbuf_add(o, " &mdash; ");
    gp_sbuf_add_xml(o, buf);
    gp_sbuf_add(o, "</td></tr>\n");

    const struct gp_cluster *c = m ? m->cluster_spec : NULL;
    if (c && c->pools && c->npools > 0) {
        gp_sbuf_add(o, "<tr><th>Node pools</th><td>");
        size_t shown = c->npools < MAX_POOLS_SHOWN ? c->npools : MAX_POOLS_SHOWN;
        for (size_t i = 0; i < shown; i++) {
            const struct gp_pool_spec *p = &c->pools[i];
            if (i > 0)
                gp_sbuf_add(o, "<br>");
            gp_sbuf_add_xml(o, str_or(p->name, "-"));
            if (p->gpus_per_node > 0) {
                gp_sbuf_printf(o, ": %" PRIu32 " &times; %" PRIu32 " ", p->count, p->gpus_per_node);
                gp_sbuf_add_xml(o, str_or(p->gpu_model, "GPU"));
            } else {
                gp_sbuf_printf(o, ": %" PRIu32 " &times; CPU only", p->count);
            }
            if (isfinite(p->price_per_hour_usd) && p->price_per_hour_usd > 0)
                gp_sbuf_printf(o, " ($%.2f per node-hour)", p->price_per_hour_usd);
        }
        if (c->npools > shown)
            gp_sbuf_printf(o, "<br>&hellip; and %zu more %s", c->npools - shown,
                           gp_report_plural(c->npools - shown, "pool", "pools"));
        gp_sbuf_add(o, "</td></tr>\n");
    }
    if (m && m->workloads && m->nworkloads > 0) {
        gp_sbuf_add(o, m->nworkloads == 1 ? "<tr><th>Workload</th><td>"
                                          : "<tr><th>Workloads</th><td>");
        for (size_t i = 0; i < m->nworkloads; i++) {
            if (i > 0)
                gp_sbuf_add(o, "<br>");
            gp_sbuf_add_xml(o, str_or(m->workloads[i], "-"));
        }
        gp_sbuf_add(o, "</td></tr>\n");
    }
    if (timed) {
        gp_report_fmt_duration(buf, sizeof buf, r->sim_end_s);
        param_row(o, "Simulated time", buf);
    }
    gp_sbuf_add(o, "</table></div>\n</header>\n");
}

static void cards(struct gp_sbuf *o, const struct gp_sim_result *r)
{
    char v[64], n[256], a[64], b[64], c[64], d[64];
    bool timed = r->mode != GP_SIM_STATIC;

    gp_sbuf_add(o, "<section class=\"cards\">\n");
    fmt_count(v, sizeof v, r->pods_submitted);
    fmt_count(a, sizeof a, r->pods_scheduled);
    if (timed) {
        fmt_count(b, sizeof b, r->pods_completed);
        snprintf(n, sizeof n, "%s scheduled, %s completed", a, b);
        card(o, "Pods submitted", v, n);
    } else {
        snprintf(n, sizeof n, "%s scheduled", a);
        card(o, "Pods arrived", v, n);
    }
    fmt_count(v, sizeof v, r->pods_failed);
    fmt_count(a, sizeof a, r->pod_retries);
    fmt_count(d, sizeof d, r->pods_never_fit);
    if (timed)
        snprintf(n, sizeof n, "%s %s", a, gp_report_plural(r->pod_retries, "retry", "retries"));
    else if (r->pods_never_fit)
        snprintf(n, sizeof n, "fit nowhere on arrival; %s can never fit", d);
    else
        snprintf(n, sizeof n, "fit nowhere on arrival");
    card(o, "Pods failed", v, n);
    if (timed) {
        fmt_count(v, sizeof v, r->pods_pending_end);
        fmt_count(a, sizeof a, r->pods_running_end);
        if (r->pods_never_fit)
            snprintf(n, sizeof n, "%s running at the end; %s %s can never fit", a, d,
                     gp_report_plural(r->pods_never_fit, "pod", "pods"));
        else
            snprintf(n, sizeof n, "%s running at the end", a);
        card(o, "Pending at end", v, n);

        const struct gp_sim_stats *qd = &r->queue_delay_s;
        gp_report_fmt_stat(v, sizeof v, qd, qd->p50);
        gp_report_fmt_stat(a, sizeof a, qd, qd->mean);
        gp_report_fmt_stat(b, sizeof b, qd, qd->p95);
        gp_report_fmt_stat(c, sizeof c, qd, qd->p99);
        snprintf(n, sizeof n, "mean %s, p95 %s, p99 %s", a, b, c);
        card(o, "Queueing delay p50", v, n);

        fmt_pct(v, sizeof v, gp_report_gpu_avg_pct(r));
        fmt_pct(a, sizeof a, gp_report_gpu_peak_pct(r));
        snprintf(n, sizeof n, "peak %s", a);
        card(o, "GPU allocation, average", v, n);

        fmt_pct(v, sizeof v, gp_report_gpu_idle_pct(r));
        fmt_qty(a, sizeof a, r->gpu_hours_idle);
        fmt_qty(b, sizeof b, r->gpu_hours_total);
        snprintf(n, sizeof n, "%s of %s GPU-hours", a, b);
        card(o, "GPU-hours idle", v, n);

        fmt_qty(v, sizeof v, r->node_hours);
        fmt_qty(d, sizeof d, r->gpu_hours_allocated);
        snprintf(n, sizeof n, "%s GPU-hours allocated", d);
        card(o, "Node-hours", v, n);

        /* the whole bill: cost.total_usd, the number the cost section adds up */
        double total = r->cost.total_usd > 0 ? r->cost.total_usd : r->cost_usd;
        if (isfinite(total) && total > 0) {
            fmt_usd(v, sizeof v, total);
            card(o, "Cost", v,
                 r->cost.control_plane_usd > 0 ? "nodes and the control plane"
                                               : "node-hours at node prices");
        }
    } else {
        double arrived;
        double final = gp_report_static_final_pct(r, &arrived);
        fmt_pct(v, sizeof v, r->unallocated_gpu_pct_at_100);
        card(o, "Unallocated at 100 % arrived", v, "ideal packing: 0.0 %");
        fmt_pct(v, sizeof v, final);
        gp_report_fmt_num(a, sizeof a, arrived, 1);
        snprintf(n, sizeof n, "after %s %% of capacity arrived", a);
        card(o, "Unallocated at the end", v, n);
    }
    gp_sbuf_add(o, "</section>\n");
}

/* The pods that can never fit, a row per reason. */
static void nofit_section(struct gp_sbuf *o, const struct gp_sim_result *r)
{
    if (!r->nofit || r->nnofit == 0)
        return;
    gp_sbuf_add(o, "<section class=\"panel\">\n<h2>Pods that can never fit</h2>\n"
                   "<p class=\"sub\">No node that can exist (the cluster's, its pools at "
                   "their maximum) takes them even when empty, or their queue's cap is below "
                   "them; grouped by the first need that no node meets.</p>\n<table>\n");
    for (size_t i = 0; i < r->nnofit; i++) {
        const struct gp_sim_nofit *nf = &r->nofit[i];
        char cnt[32], what[96], text[640];
        fmt_count(cnt, sizeof cnt, nf->pods);
        if (nf->gangs) {
            char g[32];
            fmt_count(g, sizeof g, nf->gangs);
            snprintf(what, sizeof what, "%s %s (%s %s)", g,
                     gp_report_plural(nf->gangs, "gang", "gangs"), cnt,
                     gp_report_plural(nf->pods, "pod", "pods"));
        } else {
            snprintf(what, sizeof what, "%s %s", cnt, gp_report_plural(nf->pods, "pod", "pods"));
        }
        gp_report_nofit_text(text, sizeof text, nf);
        gp_sbuf_add(o, "<tr><td class=\"num\">");
        gp_sbuf_add_xml(o, what);
        gp_sbuf_add(o, "</td><td>");
        gp_sbuf_add_xml(o, text);
        gp_sbuf_add(o, "</td></tr>\n");
    }
    gp_sbuf_add(o, "</table>\n</section>\n");
}

static void reasons(struct gp_sbuf *o, const struct gp_sim_result *r)
{
    enum gp_filter order[GP_FILTER_COUNT];
    size_t n = gp_report_top_reasons(r, order);
    if (n == 0)
        return;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += r->unschedulable[order[i]];
    gp_sbuf_add(o, "<section class=\"panel\">\n<h2>Unschedulable reasons</h2>\n"
                   "<p class=\"sub\">Pods that did not fit when they were tried, each "
                   "counted once under its main reason: the filter that rejected the most "
                   "nodes.</p>\n<table>\n");
    for (size_t i = 0; i < n; i++) {
        char cnt[32], pct[32];
        uint64_t v = r->unschedulable[order[i]];
        fmt_count(cnt, sizeof cnt, v);
        fmt_pct(pct, sizeof pct, total ? 100.0 * (double)v / (double)total : 0);
        gp_sbuf_printf(o, "<tr><td class=\"num\">%s</td><td class=\"num\">%s</td><td>", cnt, pct);
        gp_sbuf_add_xml(o, gp_report_reason_text(r, order[i]));
        gp_sbuf_add(o, " <span class=\"sub\">(");
        gp_sbuf_add_xml(o, gp_filter_name(order[i]));
        gp_sbuf_add(o, ")</span></td></tr>\n");
    }
    gp_sbuf_add(o, "</table>\n</section>\n");
}

/* Per queue: what it was promised, what it got, how long its pods waited
 * and what evictions cost it; and the evictions of the whole run. */
static void queues_section(struct gp_sbuf *o, const struct gp_sim_result *r)
{
    if (!r->queues || r->nqueues == 0 || (r->nqueues == 1 && !r->queues[0].declared))
        return;
    gp_sbuf_add(o, "<section class=\"panel\">\n<h2>Queues</h2>\n<p class=\"sub\">");
    if (r->preemptions)
        gp_sbuf_printf(o,
                       "%" PRIu64 " %s (%" PRIu64 " preempted by a higher priority in "
                       "their queue, %" PRIu64 " reclaimed by a queue under its guarantee) "
                       "lost %.1f GPU-hours of work since the pods' last checkpoints. ",
                       r->preemptions, gp_report_plural(r->preemptions, "eviction", "evictions"),
                       r->preempted, r->reclaimed, r->lost_gpu_hours);
    gp_sbuf_add(o, "GPU quota as declared (guaranteed / limit); delays are submission to "
                   "bind, completion times submission to the job's end.</p>\n<table>\n"
                   "<tr><th>queue</th><th class=\"num\">GPUs guaranteed / limit</th>"
                   "<th class=\"num\">GPU-hours</th><th class=\"num\">binds</th>"
                   "<th class=\"num\">delay p50</th><th class=\"num\">delay p95</th>"
                   "<th class=\"num\">jobs done / failed</th><th class=\"num\">JCT mean</th>"
                   "<th class=\"num\">evicted</th><th class=\"num\">GPU-h lost</th>"
                   "<th class=\"num\">cost</th></tr>\n");
    for (size_t i = 0; i < r->nqueues; i++) {
        const struct gp_sim_queue *q = &r->queues[i];
        char quota[64] = "-", p50[32], p95[32], jct[32];
        if (q->declared) {
            if (q->limit_gpus < 0)
                snprintf(quota, sizeof quota, "%g / none", q->guaranteed_gpus);
            else
                snprintf(quota, sizeof quota, "%g / %g", q->guaranteed_gpus, q->limit_gpus);
        }
        gp_report_fmt_stat(p50, sizeof p50, &q->queue_delay_s, q->queue_delay_s.p50);
        gp_report_fmt_stat(p95, sizeof p95, &q->queue_delay_s, q->queue_delay_s.p95);
        gp_report_fmt_stat(jct, sizeof jct, &q->jct_s, q->jct_s.mean);
        gp_sbuf_add(o, "<tr><td>");
        gp_sbuf_add_xml(o, str_or(q->name, "-"));
        gp_sbuf_printf(o,
                       "</td><td class=\"num\">%s</td><td class=\"num\">%.1f</td>"
                       "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%s</td>"
                       "<td class=\"num\">%s</td><td class=\"num\">%" PRIu64 " / %" PRIu64
                       "</td><td class=\"num\">%s</td><td class=\"num\">%" PRIu64 "</td>"
                       "<td class=\"num\">%.1f</td><td class=\"num\">$%.2f</td></tr>\n",
                       quota, q->gpu_hours_allocated, q->binds, p50, p95, q->jobs_completed,
                       q->jobs_failed, jct, q->evicted, q->lost_gpu_hours, q->cost_usd);
    }
    gp_sbuf_add(o, "</table>\n</section>\n");
}

/* ---- charts ---------------------------------------------------------------- */

struct time_unit {
    double div;
    const char *label;
};

static struct time_unit time_unit(double end_s)
{
    if (end_s >= 72 * 3600.0)
        return (struct time_unit){86400.0, "time (days)"};
    if (end_s >= 3 * 3600.0)
        return (struct time_unit){3600.0, "time (h)"};
    if (end_s >= 180.0)
        return (struct time_unit){60.0, "time (min)"};
    return (struct time_unit){1.0, "time (s)"};
}

static void chart_open(struct gp_sbuf *o)
{
    gp_sbuf_add(o, "<section class=\"chart\">\n");
}

static void chart_close(struct gp_sbuf *o)
{
    gp_sbuf_add(o, "</section>\n");
}

/* The timed charts; t, a, b and c are scratch arrays of nsamples doubles. */
static void time_charts(struct gp_sbuf *o, const struct gp_sim_result *r, double *t, double *a,
                        double *b, double *c)
{
    size_t n = r->samples ? r->nsamples : 0;
    double end = isfinite(r->sim_end_s) ? r->sim_end_s : 0;
    if (n > 0 && isfinite(r->samples[n - 1].t_s) && r->samples[n - 1].t_s > end)
        end = r->samples[n - 1].t_s;
    struct time_unit u = time_unit(end);
    for (size_t i = 0; i < n; i++)
        t[i] = r->samples[i].t_s / u.div;

    struct gp_svg_chart ch = {0};
    ch.x.label = u.label;
    ch.x.fixed_min = true;
    ch.x.min = 0;
    if (end > 0) {
        ch.x.fixed_max = true;
        ch.x.max = end / u.div;
    }
    ch.empty_text = "no samples";

    for (size_t i = 0; i < n; i++) {
        a[i] = r->samples[i].gpu_alloc_pct;
        b[i] = r->samples[i].cpu_alloc_pct;
        c[i] = r->samples[i].mem_alloc_pct;
    }
    struct gp_svg_series alloc[3] = {
        {.name = "GPU", .x = t, .y = a, .n = n, .color = C_BLUE, .area = true},
        {.name = "CPU", .x = t, .y = b, .n = n, .color = C_OCHRE},
        {.name = "memory", .x = t, .y = c, .n = n, .color = C_GREEN, .dashed = true},
    };
    ch.title = "GPU allocation over time";
    ch.y = (struct gp_svg_axis){.label = "allocated (% of capacity)",
                                .min = 0,
                                .max = 100,
                                .fixed_min = true,
                                .fixed_max = true};
    ch.series = alloc;
    ch.nseries = 3;
    chart_open(o);
    gp_svg_line_chart(o, &ch);
    chart_close(o);

    for (size_t i = 0; i < n; i++)
        a[i] = r->samples[i].pending;
    struct gp_svg_series pending = {
        .name = "pending", .x = t, .y = a, .n = n, .color = C_RED, .step = true, .area = true};
    ch.title = "Pending pods over time";
    ch.y =
        (struct gp_svg_axis){.label = "pods pending", .min = 0, .fixed_min = true, .integer = true};
    ch.series = &pending;
    ch.nseries = 1;
    chart_open(o);
    gp_svg_line_chart(o, &ch);
    chart_close(o);

    for (size_t i = 0; i < n; i++)
        a[i] = r->samples[i].running;
    struct gp_svg_series running = {
        .name = "running", .x = t, .y = a, .n = n, .color = C_BLUE, .step = true, .area = true};
    ch.title = "Running pods over time";
    ch.y =
        (struct gp_svg_axis){.label = "pods running", .min = 0, .fixed_min = true, .integer = true};
    ch.series = &running;
    ch.nseries = 1;
    chart_open(o);
    gp_svg_line_chart(o, &ch);
    chart_close(o);
}

/* Histogram bin edges: 0, then a roughly log-spaced ladder of round
 * durations (1 ms ... 30 d, doubling beyond). */
static const double ladder[] = {0.001, 0.002, 0.005, 0.01,   0.02,   0.05,   0.1,     0.2,
                                0.5,   1,     2,     5,      10,     20,     30,      60,
                                120,   300,   600,   1200,   1800,   3600,   7200,    14400,
                                28800, 43200, 86400, 172800, 345600, 604800, 1209600, 2592000};
#define NLADDER   (sizeof ladder / sizeof ladder[0])
#define MAX_EDGES 64

static double ladder_at(size_t k)
{
    if (k < NLADDER)
        return ladder[k];
    return ladder[NLADDER - 1] * pow(2.0, (double)(k - NLADDER + 1));
}

/* Where v falls on the bar axis: bin i plus the (log) fraction inside it. */
static double bin_pos(const double *edges, size_t nbins, double v)
{
    if (!(v > 0))
        return 0;
    for (size_t i = 0; i < nbins; i++) {
        if (v < edges[i + 1] || i + 1 == nbins) {
            double f = i == 0 ? v / edges[1] : log(v / edges[i]) / log(edges[i + 1] / edges[i]);
            return (double)i + (f < 0 ? 0 : f > 1 ? 1 : f);
        }
    }
    return (double)nbins;
}

static void delay_histogram(struct gp_sbuf *o, const struct gp_sim_result *r)
{
    double edges[MAX_EDGES + 1], counts[MAX_EDGES];
    char labels[MAX_EDGES + 1][32], titles[MAX_EDGES][128];
    const char *lp[MAX_EDGES + 1], *tp[MAX_EDGES];
    size_t nd = r->queue_delays_s ? r->nqueue_delays : 0;

    double pmin = INFINITY, pmax = 0;
    for (size_t i = 0; i < nd; i++) {
        double d = r->queue_delays_s[i];
        if (isfinite(d) && d > 0) {
            pmin = fmin(pmin, d);
            pmax = fmax(pmax, d);
        }
    }
    size_t klo = 9; /* 1 s when no delay is positive */
    if (pmax > 0) {
        klo = 0;
        while (ladder_at(klo + 1) <= pmin)
            klo++;
    }
    size_t nbins = 0;
    edges[0] = 0;
    for (size_t k = klo; nbins < MAX_EDGES; k++) {
        edges[++nbins] = ladder_at(k);
        if (ladder_at(k) > pmax)
            break;
    }
    for (size_t i = 0; i < nbins; i++)
        counts[i] = 0;
    for (size_t i = 0; i < nd; i++) {
        double d = r->queue_delays_s[i];
        if (!isfinite(d) || d < 0)
            continue;
        size_t b = 0;
        while (b + 1 < nbins && d >= edges[b + 1])
            b++;
        counts[b]++;
    }
    for (size_t i = 0; i <= nbins; i++) {
        gp_report_fmt_duration(labels[i], sizeof labels[i], edges[i]);
        lp[i] = labels[i];
    }
    for (size_t i = 0; i < nbins; i++) {
        unsigned long long cnt = (unsigned long long)counts[i];
        snprintf(titles[i], sizeof titles[i], "%.31s to %.31s: %llu pod%s", labels[i],
                 labels[i + 1], cnt, cnt == 1 ? "" : "s");
        tp[i] = titles[i];
    }

    const struct gp_sim_stats *q = &r->queue_delay_s;
    char m50[48], m95[48], m99[48], d[32];
    gp_report_fmt_duration(d, sizeof d, q->p50);
    snprintf(m50, sizeof m50, "p50 %s", d);
    gp_report_fmt_duration(d, sizeof d, q->p95);
    snprintf(m95, sizeof m95, "p95 %s", d);
    gp_report_fmt_duration(d, sizeof d, q->p99);
    snprintf(m99, sizeof m99, "p99 %s", d);
    struct gp_svg_marker mk[3] = {
        {bin_pos(edges, nbins, q->p50), m50, C_INK},
        {bin_pos(edges, nbins, q->p95), m95, C_OCHRE},
        {bin_pos(edges, nbins, q->p99), m99, C_RED},
    };

    struct gp_svg_chart ch = {0};
    ch.title = "Queueing delay distribution";
    ch.x.label = "queueing delay, submission to bind (log-spaced bins)";
    ch.y.label = "pods";
    ch.y.integer = true;
    /* all zero: a single bar says less than a sentence */
    bool show = nd > 0 && pmax > 0;
    ch.markers = show ? mk : NULL;
    ch.nmarkers = show ? 3 : 0;
    ch.empty_text = nd > 0 ? "every pod was bound as soon as it was submitted (no queueing delay)"
                           : "no pod was bound";
    struct gp_svg_bars bars = {.values = show ? counts : NULL,
                               .n = nbins,
                               .edge_labels = lp,
                               .bar_titles = tp,
                               .color = C_BLUE};
    chart_open(o);
    gp_svg_bar_chart(o, &ch, &bars);
    chart_close(o);
}

static void static_chart(struct gp_sbuf *o, const struct gp_sim_result *r, double *x, double *y)
{
    size_t n = r->curve ? r->ncurve : 0;
    double xmax = 100;
    for (size_t i = 0; i < n; i++) {
        x[i] = r->curve[i].arrived_pct;
        y[i] = r->curve[i].unallocated_pct;
        if (isfinite(x[i]) && x[i] > xmax)
            xmax = x[i];
    }
    double ix[3] = {0, 100, xmax}, iy[3] = {100, 0, 0};
    /* the reference first, so the policy's line is drawn over it */
    struct gp_svg_series s[2] = {
        {.name = "ideal (100 - x)", .x = ix, .y = iy, .n = 3, .color = C_GRAY, .dashed = true},
        {.name = str_or(r->policy, "policy"), .x = x, .y = y, .n = n, .color = C_BLUE},
    };
    char label[64], v[32];
    fmt_pct(v, sizeof v, r->unallocated_gpu_pct_at_100);
    snprintf(label, sizeof label, "at 100 %%: %s unallocated", v);
    struct gp_svg_marker mk = {100, label, C_INK};

    struct gp_svg_chart ch = {0};
    ch.title = "Unallocated GPUs vs arrived GPU request";
    ch.x = (struct gp_svg_axis){.label = "arrived GPU request (% of the cluster's GPUs)",
                                .min = 0,
                                .max = xmax,
                                .fixed_min = true,
                                .fixed_max = true};
    ch.y = (struct gp_svg_axis){.label = "unallocated (% of GPUs)",
                                .min = 0,
                                .max = 100,
                                .fixed_min = true,
                                .fixed_max = true};
    ch.series = s;
    ch.nseries = n > 0 ? 2 : 0;
    ch.markers = n > 0 ? &mk : NULL;
    ch.nmarkers = n > 0 ? 1 : 0;
    ch.empty_text = "no curve";
    chart_open(o);
    gp_svg_line_chart(o, &ch);
    chart_close(o);
}

/* The money: cumulative cost over time, cost by pool (bars, then a table
 * of the parts) and the total's parts. t and a: scratch of nsamples. */
static void cost_section(struct gp_sbuf *o, const struct gp_sim_result *r, double *t, double *a)
{
    const struct gp_sim_cost *c = &r->cost;
    if (!(c->total_usd > 0) || !isfinite(c->total_usd))
        return;
    size_t n = r->samples ? r->nsamples : 0;
    double end = isfinite(r->sim_end_s) ? r->sim_end_s : 0;
    struct time_unit u = time_unit(end);
    for (size_t i = 0; i < n; i++) {
        t[i] = r->samples[i].t_s / u.div;
        a[i] = r->samples[i].cost_usd;
    }
    struct gp_svg_chart ch = {0};
    ch.x = (struct gp_svg_axis){.label = u.label, .min = 0, .fixed_min = true};
    if (end > 0) {
        ch.x.fixed_max = true;
        ch.x.max = end / u.div;
    }
    ch.y = (struct gp_svg_axis){.label = "cost so far (USD)", .min = 0, .fixed_min = true};
    struct gp_svg_series cum = {
        .name = "nodes and control plane", .x = t, .y = a, .n = n, .color = C_OCHRE, .area = true};
    ch.title = "Cost over time";
    ch.series = &cum;
    ch.nseries = 1;
    ch.empty_text = "no samples";
    chart_open(o);
    gp_svg_line_chart(o, &ch);
    chart_close(o);

    size_t np = c->pools ? c->npools : 0;
    double *v = malloc((np ? np : 1) * sizeof *v);
    char(*titles)[96] = malloc((np ? np : 1) * sizeof *titles);
    const char **tp = malloc((np ? np : 1) * sizeof *tp);
    if (v && titles && tp && np > 0) {
        for (size_t i = 0; i < np; i++) {
            char usd[48];
            fmt_usd(usd, sizeof usd, c->pools[i].total_usd);
            v[i] = c->pools[i].total_usd;
            snprintf(titles[i], sizeof titles[i], "%.40s: %s", str_or(c->pools[i].name, "-"), usd);
            tp[i] = titles[i];
        }
        struct gp_svg_chart bc = {0};
        bc.title = "Cost by pool (in table order)";
        bc.x.label = "pools";
        bc.y.label = "USD";
        struct gp_svg_bars bars = {.values = v, .n = np, .bar_titles = tp, .color = C_OCHRE};
        chart_open(o);
        gp_svg_bar_chart(o, &bc, &bars);
        chart_close(o);
    } else if (np > 0) {
        o->oom = true;
    }
    free(v);
    free(titles);
    free(tp);

    gp_sbuf_add(o, "<section class=\"panel\">\n<h2>Cost by pool</h2>\n"
                   "<p class=\"sub\">Nodes are billed from request to removal (booting "
                   "included). A GPU node's price is GPU cost: used in the share its pods "
                   "hold, idle otherwise. CPU-only nodes are other cost.</p>\n<table>\n"
                   "<tr><th>pool</th><th>node-hours</th><th>GPU used</th><th>GPU idle</th>"
                   "<th>other</th><th>total</th><th>spot savings</th></tr>\n");
    for (size_t i = 0; i < np; i++) {
        const struct gp_sim_pool_cost *p = &c->pools[i];
        char nh[32], u1[48], u2[48], u3[48], u4[48], u5[48];
        fmt_qty(nh, sizeof nh, p->node_hours);
        fmt_usd(u1, sizeof u1, p->gpu_used_usd);
        fmt_usd(u2, sizeof u2, p->gpu_idle_usd);
        fmt_usd(u3, sizeof u3, p->other_usd);
        fmt_usd(u4, sizeof u4, p->total_usd);
        if (p->spot && p->on_demand_usd >= 0)
            fmt_usd(u5, sizeof u5, p->spot_savings_usd);
        else
            snprintf(u5, sizeof u5, "%s", p->spot ? "spot" : "-");
        gp_sbuf_add(o, "<tr><td>");
        gp_sbuf_add_xml(o, str_or(p->name, "-"));
        gp_sbuf_printf(o,
                       "</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                       "<td class=\"num\">%s</td><td class=\"num\">%s</td>"
                       "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                       nh, u1, u2, u3, u4, u5);
    }
    char tot[48], cp[48], lost[48];
    fmt_usd(tot, sizeof tot, c->total_usd);
    fmt_usd(cp, sizeof cp, c->control_plane_usd);
    fmt_usd(lost, sizeof lost, c->lost_work_usd);
    gp_sbuf_printf(o,
                   "</table>\n<p class=\"sub\">Total %s, of which control plane %s; work "
                   "lost to evictions cost %s.</p>\n</section>\n",
                   tot, cp, lost);
}

void gp_report_html(struct gp_sbuf *out, const struct gp_sim_result *r,
                    const struct gp_report_meta *m)
{
    bool timed = r->mode != GP_SIM_STATIC;
    size_t n = timed ? (r->samples ? r->nsamples : 0) : (r->curve ? r->ncurve : 0);
    double *scratch = malloc((n ? n : 1) * 4 * sizeof *scratch);
    if (!scratch) {
        out->oom = true;
        return;
    }

    gp_sbuf_add(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>gpuplane simulation report: ");
    gp_sbuf_add_xml(out, str_or(r->policy, "-"));
    gp_sbuf_add(out, " on ");
    gp_sbuf_add_xml(out, str_or(m ? m->cluster : NULL, "(unnamed)"));
    gp_sbuf_add(out, "</title>\n<style>\n");
    gp_sbuf_add(out, css);
    gp_sbuf_add(out, "</style>\n</head>\n<body>\n<main>\n");

    header(out, r, m);
    cards(out, r);
    nofit_section(out, r);
    reasons(out, r);
    if (timed) {
        time_charts(out, r, scratch, scratch + n, scratch + 2 * n, scratch + 3 * n);
        delay_histogram(out, r);
        queues_section(out, r);
        cost_section(out, r, scratch, scratch + n);
        gp_report_services_html(out, r); /* nothing without services */
    } else {
        static_chart(out, r, scratch, scratch + n);
    }

    gp_sbuf_add(out, "<footer>Generated by gpuplane ");
    gp_sbuf_add_xml(out, str_or(m ? m->version : NULL, ""));
    gp_sbuf_add(out, ". The same inputs and seed give the same report.</footer>\n"
                     "</main>\n</body>\n</html>\n");
    free(scratch);
}

/* --- the pieces other pages share (html.h) ------------------------------- */

const char *gp_report_html_css(void)
{
    return css;
}

void gp_report_html_card(struct gp_sbuf *o, const char *key, const char *value, const char *note)
{
    card(o, key, value, note);
}

void gp_report_html_usd(char *buf, size_t n, double v)
{
    fmt_usd(buf, n, v);
}
