/* study_out.c - the renter's question's outputs (src/plan/share_study.h):
 * a table on stdout with each option's trade-off, the JSON document
 * (docs/FORMATS.md, "Sharing study") and a self-contained HTML page with
 * bar charts of GPUs and cost per option. Deterministic: a function of the
 * options alone. */
#include "cli/study_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "util/arena.h"

#define HOURS_PER_MONTH 730.0

static const char *option_label(const struct gp_study_option *o, char *buf, size_t n)
{
    if (o->mode == GP_SHARE_TIMESLICE || o->mode == GP_SHARE_MPS)
        snprintf(buf, n, "%s %s x%u", o->pool, gp_share_mode_name(o->mode), o->replicas);
    else
        snprintf(buf, n, "%s %s", o->pool, gp_share_mode_name(o->mode));
    return buf;
}

/* Whether a mode isolates pods' memory and faults (exclusive GPUs, MIG). */
static bool isolated(enum gp_share_mode m)
{
    return m == GP_SHARE_EXCLUSIVE || m == GP_SHARE_MIG;
}

/* The cheapest feasible option (among isolated modes only, if asked), or -1. */
static int cheapest_of(const struct gp_study_option *o, size_t n, bool only_isolated)
{
    int best = -1;
    for (size_t i = 0; i < n; i++)
        if (o[i].feasible && (!only_isolated || isolated(o[i].mode)) &&
            (best < 0 || o[i].usd_per_hour < o[best].usd_per_hour ||
             (o[i].usd_per_hour == o[best].usd_per_hour && o[i].gpus < o[best].gpus)))
            best = (int)i;
    return best;
}

static int cheapest(const struct gp_study_option *o, size_t n)
{
    return cheapest_of(o, n, false);
}

void gp_study_print(FILE *f, const struct gp_study_option *o, size_t n, const char *workload)
{
    fprintf(f, "gpuplane sharing study: %s, %u pods at once\n\n", workload ? workload : "workload",
            n ? o[0].pods : 0);
    fprintf(f, "%-26s %6s %6s %6s %12s %12s %9s\n", "pool and sharing", "nodes", "GPUs", "busy",
            "$/hour", "$/month", "slowdown");
    char label[96];
    for (size_t i = 0; i < n; i++) {
        option_label(&o[i], label, sizeof label);
        if (!o[i].feasible) {
            fprintf(f, "%-26s  not possible: %s\n", label, o[i].why ? o[i].why : "");
            continue;
        }
        char slow[32] = "-";
        if (o[i].mode == GP_SHARE_TIMESLICE)
            snprintf(slow, sizeof slow, "%.2fx", o[i].slowdown_max);
        fprintf(f, "%-26s %6u %6u %6u %12.2f %12.0f %9s\n", label, o[i].nodes, o[i].gpus,
                o[i].gpus_busy, o[i].usd_per_hour, o[i].usd_per_hour * HOURS_PER_MONTH, slow);
    }
    fprintf(f, "\nisolation, by way of sharing:\n");
    bool seen[4] = {false};
    for (size_t i = 0; i < n; i++) {
        if (seen[o[i].mode])
            continue;
        seen[o[i].mode] = true;
        fprintf(f, "  %-10s %s\n", gp_share_mode_name(o[i].mode), o[i].isolation);
    }
    int best = cheapest(o, n), safe = cheapest_of(o, n, true);
    if (best >= 0) {
        fprintf(f, "\ncheapest: %s, %u GPUs on %u nodes, $%.2f/hour ($%.0f/month)",
                option_label(&o[best], label, sizeof label), o[best].gpus, o[best].nodes,
                o[best].usd_per_hour, o[best].usd_per_hour * HOURS_PER_MONTH);
        if (!isolated(o[best].mode))
            fprintf(f, ";\n  its pods are not isolated%s",
                    o[best].slowdown_max > 1.0005 ? " and the busiest GPU slows them down" : "");
        fprintf(f, "\n");
    }
    if (safe >= 0 && safe != best)
        fprintf(f, "cheapest with isolation: %s, %u GPUs on %u nodes, $%.2f/hour ($%.0f/month)\n",
                option_label(&o[safe], label, sizeof label), o[safe].gpus, o[safe].nodes,
                o[safe].usd_per_hour, o[safe].usd_per_hour * HOURS_PER_MONTH);
}

static json_t *jnum(double x)
{
    return json_real(isfinite(x) ? round(x * 1000) / 1000 : 0);
}

void gp_study_json(struct gp_sbuf *out, const struct gp_study_option *o, size_t n)
{
    json_t *root = json_object(), *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "pool", json_string(o[i].pool));
        json_object_set_new(x, "gpu_model", json_string(o[i].gpu_model));
        json_object_set_new(x, "mode", json_string(gp_share_mode_name(o[i].mode)));
        json_object_set_new(x, "replicas", json_integer(o[i].replicas));
        json_object_set_new(x, "rename_by_default", json_boolean(o[i].rename_by_default));
        json_object_set_new(x, "fail_requests_greater_than_one",
                            json_boolean(o[i].fail_requests_greater_than_one));
        json_object_set_new(x, "feasible", json_boolean(o[i].feasible));
        json_object_set_new(x, "why", o[i].why ? json_string(o[i].why) : json_null());
        json_object_set_new(x, "nodes", json_integer(o[i].nodes));
        json_object_set_new(x, "gpus", json_integer(o[i].gpus));
        json_object_set_new(x, "gpus_busy", json_integer(o[i].gpus_busy));
        json_object_set_new(x, "pods", json_integer(o[i].pods));
        json_object_set_new(x, "usd_per_hour", jnum(o[i].usd_per_hour));
        json_object_set_new(x, "usd_per_month", jnum(o[i].usd_per_hour * HOURS_PER_MONTH));
        json_object_set_new(x, "slowdown_mean", jnum(o[i].slowdown_mean));
        json_object_set_new(x, "slowdown_max", jnum(o[i].slowdown_max));
        json_object_set_new(x, "isolation", json_string(o[i].isolation ? o[i].isolation : ""));
        json_array_append_new(arr, x);
    }
    json_object_set_new(root, "sharing_study", arr);
    int best = cheapest(o, n);
    json_object_set_new(root, "cheapest", best >= 0 ? json_integer(best) : json_null());
    int safe = cheapest_of(o, n, true);
    json_object_set_new(root, "cheapest_isolated", safe >= 0 ? json_integer(safe) : json_null());
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    if (s) {
        gp_sbuf_add(out, s);
        gp_sbuf_addc(out, '\n');
        free(s);
    }
    json_decref(root);
}

/* One horizontal bar chart: a bar per feasible option. */
static void bars(struct gp_sbuf *out, const char *title, const char *unit,
                 const struct gp_study_option *o, size_t n,
                 double (*value)(const struct gp_study_option *))
{
    double max = 0;
    size_t rows = 0;
    for (size_t i = 0; i < n; i++)
        if (o[i].feasible) {
            rows++;
            if (value(&o[i]) > max)
                max = value(&o[i]);
        }
    int row_h = 22, left = 210, width = 880, bar_w = width - left - 120;
    int height = 40 + (int)rows * row_h;
    gp_sbuf_printf(out,
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                   "font-family=\"sans-serif\" font-size=\"12\">\n<text x=\"0\" y=\"16\" "
                   "font-size=\"14\" font-weight=\"bold\">",
                   width, height);
    gp_sbuf_add_xml(out, title);
    gp_sbuf_add(out, "</text>\n");
    static const char *const colors[] = {"#2f6690", "#d9822b", "#3a7d44", "#9c2c77"};
    int y = 30;
    char label[96];
    for (size_t i = 0; i < n; i++) {
        if (!o[i].feasible)
            continue;
        double v = value(&o[i]);
        int w = max > 0 ? (int)lround(v / max * bar_w) : 0;
        gp_sbuf_printf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8, y + 15);
        gp_sbuf_add_xml(out, option_label(&o[i], label, sizeof label));
        gp_sbuf_printf(out,
                       "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                       "<text x=\"%d\" y=\"%d\">%.6g %s</text>\n",
                       left, y + 3, w, row_h - 6, colors[o[i].mode % 4], left + w + 6, y + 15,
                       round(v * 100) / 100, unit);
        y += row_h;
    }
    gp_sbuf_add(out, "</svg>\n");
}

static double v_gpus(const struct gp_study_option *o)
{
    return o->gpus;
}

static double v_cost(const struct gp_study_option *o)
{
    return o->usd_per_hour * HOURS_PER_MONTH;
}

static double v_slowdown(const struct gp_study_option *o)
{
    return o->slowdown_max;
}

void gp_study_html(struct gp_sbuf *out, const struct gp_study_option *o, size_t n,
                   const char *workload)
{
    gp_sbuf_add(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>gpuplane sharing study</title><style>body{font-family:sans-serif;"
                     "margin:2em;max-width:960px}td,th{padding:2px 8px;text-align:right}"
                     "td:first-child,th:first-child,td:last-child{text-align:left}</style>"
                     "</head><body>\n<h1>Which GPUs, shared how?</h1>\n<p>");
    gp_sbuf_add_xml(out, workload ? workload : "workload");
    gp_sbuf_printf(out,
                   ": %u pods at once, packed by the engine on each pool shared each way "
                   "(the fewest nodes that hold them all).</p>\n",
                   n ? o[0].pods : 0);
    bars(out, "GPUs to rent", "GPUs", o, n, v_gpus);
    bars(out, "Cost per month (730 h)", "USD", o, n, v_cost);
    bars(out, "Worst slowdown of a pod (time-slicing shares compute)", "x", o, n, v_slowdown);
    gp_sbuf_add(out, "<table><tr><th>pool and sharing</th><th>nodes</th><th>GPUs</th>"
                     "<th>busy</th><th>$/hour</th><th>isolation</th></tr>\n");
    char label[96];
    for (size_t i = 0; i < n; i++) {
        gp_sbuf_add(out, "<tr><td>");
        gp_sbuf_add_xml(out, option_label(&o[i], label, sizeof label));
        if (o[i].feasible)
            gp_sbuf_printf(out, "</td><td>%u</td><td>%u</td><td>%u</td><td>%.2f</td><td>",
                           o[i].nodes, o[i].gpus, o[i].gpus_busy, o[i].usd_per_hour);
        else
            gp_sbuf_add(out, "</td><td colspan=\"4\">not possible</td><td>");
        gp_sbuf_add_xml(out, o[i].feasible ? o[i].isolation : o[i].why);
        gp_sbuf_add(out, "</td></tr>\n");
    }
    gp_sbuf_add(out, "</table>\n</body></html>\n");
}

/* Writes the requested outputs: each whole or not at all, none if one fails. */
static enum gp_err write_outputs(const char *json, const char *report,
                                 const struct gp_study_option *o, size_t n, const char *workload,
                                 struct gp_diag *d)
{
    const char *paths[2] = {json, report};
    struct gp_sbuf bufs[2];
    gp_sbuf_init(&bufs[0]);
    gp_sbuf_init(&bufs[1]);
    if (json)
        gp_study_json(&bufs[0], o, n);
    if (report)
        gp_study_html(&bufs[1], o, n, workload);
    enum gp_err err = gp_cli_write_all(paths, bufs, 2, d);
    gp_sbuf_free(&bufs[0]);
    gp_sbuf_free(&bufs[1]);
    return err;
}

int gp_cli_sharing_study(const char *cluster_arg, const char *const *workloads, size_t nworkloads,
                         const char *json, const char *report, bool quiet)
{
    struct gp_arena arena;
    struct gp_diag diag = {0};
    struct gp_cluster cluster;
    struct gp_workload w;
    struct gp_study_option *opts = NULL;
    size_t n = 0;
    enum gp_err err = GP_OK;
    gp_arena_init(&arena);
    memset(&cluster, 0, sizeof cluster); /* the openb and Philly readers set only what they know */
    memset(&w, 0, sizeof w);
    if (!cluster_arg || nworkloads == 0) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "--compare-sharing needs --cluster (the pools to compare) and "
                          "--workload");
        goto done;
    }
    if ((err = gp_cluster_load(cluster_arg, &arena, &cluster, &diag)) != GP_OK)
        goto done;
    gp_cli_warn_cluster(&cluster);
    for (size_t i = 0; i < nworkloads; i++)
        if ((err = gp_workload_load(workloads[i], &arena, &w, &diag)) != GP_OK)
            goto done;
    if ((err = gp_workload_finish(&w, &arena, &diag)) != GP_OK)
        goto done;
    gp_cli_warn(&w);
    if ((err = gp_study_sharing(&cluster, &w, &arena, &opts, &n, &diag)) != GP_OK)
        goto done;
    if ((err = write_outputs(json, report, opts, n, workloads[0], &diag)) != GP_OK)
        goto done;
    if (!quiet)
        gp_study_print(stdout, opts, n, workloads[0]);
done:
    gp_arena_free(&arena);
    return err == GP_OK ? 0 : gp_cli_fail(err, diag.msg);
}
