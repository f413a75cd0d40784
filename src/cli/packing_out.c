/* packing_out.c - the outputs of `gpuplane packing` (packing.h): the text
 * table for stdout, the same table as Markdown, every run and summary as
 * JSON, and one self-contained HTML page (inline CSS and SVG charts from
 * io/svg.c in the style of the simulation report, no scripts) with a chart
 * per workload of the mean unallocated-GPU curve of each policy beside the
 * paper's. Every output depends only on the results: no clock, no host. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/packing.h"
#include "io/fgd_results.h"
#include "io/svg.h"

#define CURVE_FROM_PCT 75 /* the charts start here, as the paper's Fig. 9(a) */

static const char *const palette[] = {
    "#8a96a3", "#c17f2a", "#7b5ea7", "#3a9ea5", "#2f6690", "#b5452b", "#4f8a5b", "#3e4c59",
};
#define NPALETTE (sizeof palette / sizeof palette[0])

/* ---- shared formatting --------------------------------------------------- */

void gp_packing_fmt_seeds(char *buf, size_t n, const uint64_t *seeds, size_t nseeds)
{
    size_t o = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < nseeds && o < n;) {
        size_t j = i;
        while (j + 1 < nseeds && seeds[j + 1] == seeds[j] + 1)
            j++;
        int k = j > i ? snprintf(buf + o, n - o, "%s%" PRIu64 "-%" PRIu64, i ? "," : "", seeds[i],
                                 seeds[j])
                      : snprintf(buf + o, n - o, "%s%" PRIu64, i ? "," : "", seeds[i]);
        if (k < 0 || (size_t)k >= n - o) {
            if (n >= 4)
                memcpy(buf + n - 4, "...", 4);
            return;
        }
        o += (size_t)k;
        i = j + 1;
    }
}

/* "13.64 ± 0.30"; "-" when there is no value. */
static void fmt_mean_sd(char *buf, size_t n, double mean, double sd)
{
    if (!isfinite(mean))
        snprintf(buf, n, "-");
    else if (!isfinite(sd))
        snprintf(buf, n, "%.2f", mean);
    else
        snprintf(buf, n, "%.2f \xc2\xb1 %.2f", mean, sd);
}

/* "+0.03", "-1.20", never "-0.00"; "-" when there is no value. */
static void fmt_diff(char *buf, size_t n, double diff)
{
    if (!isfinite(diff)) {
        snprintf(buf, n, "-");
        return;
    }
    double r = round(diff * 100) / 100;
    snprintf(buf, n, "%+.2f", r == 0 ? 0.0 : r);
}

/* Characters, not bytes, of a UTF-8 string (for column widths). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static void pad(FILE *f, const char *s, size_t width, bool right)
{
    size_t w = text_width(s);
    if (right)
        fprintf(f, "%*s%s", (int)(width > w ? width - w : 0), "", s);
    else
        fprintf(f, "%s%*s", s, (int)(width > w ? width - w : 0), "");
}

static size_t count_off(const struct gp_packing *pk, size_t *with_paper)
{
    size_t off = 0;
    *with_paper = 0;
    for (size_t i = 0; i < pk->nworkloads * pk->npolicies; i++) {
        if (pk->sums[i].paper_n > 0)
            (*with_paper)++;
        if (pk->sums[i].off)
            off++;
    }
    return off;
}

static bool any_bound(const struct gp_packing *pk)
{
    for (size_t w = 0; w < pk->nworkloads; w++)
        if (pk->bounds[w].have)
            return true;
    return false;
}

/* A bound that may say little is marked (docs/bound.md, "When the bound
 * says little"); the outputs explain the mark below their table. */
#define BOUND_MARK "\xe2\x80\xa0" /* a dagger */

static bool uninformative(const struct gp_packing *pk, size_t w)
{
    return pk->bounds[w].have && !pk->bounds[w].informative;
}

static bool any_uninformative(const struct gp_packing *pk)
{
    for (size_t w = 0; w < pk->nworkloads; w++)
        if (uninformative(pk, w))
            return true;
    return false;
}

static void fmt_bound(char *buf, size_t n, const struct gp_packing *pk, size_t w)
{
    const struct gp_packing_bound *b = &pk->bounds[w];
    if (b->have && isfinite(b->pct))
        snprintf(buf, n, "%.2f%s", b->pct, b->informative ? "" : " " BOUND_MARK);
    else
        snprintf(buf, n, "%s", b->note ? b->note : "not available");
}

/* The caveat of an uninformative bound: the figures of one workload. */
static void fmt_caveat(char *buf, size_t n, const struct gp_packing *pk, size_t w)
{
    const struct gp_packing_bound *b = &pk->bounds[w];
    snprintf(buf, n,
             "%s: they ask for %.1f %% of the CPU and %.1f %% of the memory; the bound's "
             "placement leaves %.1f %% and %.1f %% free",
             pk->workloads[w], b->left_cpu_pct, b->left_mem_pct, b->free_cpu_pct, b->free_mem_pct);
}

/* What the mark means, in two lines for the text table. */
#define CAVEAT_1 "may say little: the bound leaves out the pods without a GPU request, which"
#define CAVEAT_2                                                                                   \
    "a run must place when they fit, with CPU or memory that the bound gives to GPU pods "         \
    "(docs/bound.md)"
#define CAVEAT_HEAD CAVEAT_1 " " CAVEAT_2

/* "1213 nodes, 6212 GPUs", then the variant: ", CPU x 0.6", ", each seed
 * on a random 607 of the nodes"; times is "x" or the UTF-8 sign. */
static void fmt_cluster(char *buf, size_t n, const struct gp_packing *pk, const char *times)
{
    int k = snprintf(buf, n, "%" PRIu32 " nodes, %" PRIu64 " GPUs", pk->nodes, pk->gpus);
    if (k > 0 && (size_t)k < n && pk->cpu_scale != 1)
        k += snprintf(buf + k, n - (size_t)k, ", every node's CPU %s %g", times, pk->cpu_scale);
    if (k > 0 && (size_t)k < n && pk->node_sample < 1)
        snprintf(buf + k, n - (size_t)k, ", each seed on a random %" PRIu32 " of the nodes",
                 pk->sample_nodes);
}

/* Why there is no paper column: the variant, or otherwise (none given). */
static const char *no_paper(const struct gp_packing *pk, const char *otherwise)
{
    return pk->cpu_scale != 1 || pk->node_sample < 1
               ? "none (the published runs are on the whole cluster at its full CPU)"
               : otherwise;
}

/* ---- the text table ------------------------------------------------------ */

void gp_packing_print(FILE *f, const struct gp_packing *pk)
{
    char seeds[128];
    gp_packing_fmt_seeds(seeds, sizeof seeds, pk->seeds, pk->nseeds);
    size_t total = pk->nworkloads * pk->npolicies * pk->nseeds;
    fprintf(f, "gpuplane packing - the FGD paper's static packing experiment (ATC '23)\n");
    char cluster[160];
    fmt_cluster(cluster, sizeof cluster, pk, "x");
    fprintf(f, "  cluster   %s: %s\n", pk->cluster_path, cluster);
    fprintf(f,
            "  runs      %zu workload%s x %zu polic%s x %zu seed%s (%s) = %zu simulations, "
            "inflate %g\n",
            pk->nworkloads, pk->nworkloads == 1 ? "" : "s", pk->npolicies,
            pk->npolicies == 1 ? "y" : "ies", pk->nseeds, pk->nseeds == 1 ? "" : "s", seeds, total,
            pk->inflate);
    fprintf(f, "  paper     %s\n",
            pk->expected_path ? pk->expected_path
                              : no_paper(pk, "none (no published results given)"));
    fprintf(f,
            "\nunallocated GPU %% at 100 %% arrived, mean \xc2\xb1 sd over the seeds; paper: "
            "the authors' runs;\ndiff = ours - paper in points, * where it is more than %g\n\n",
            GP_PACKING_OFF_PTS);

    size_t ww = strlen("workload"), pw = strlen("lower bound");
    for (size_t w = 0; w < pk->nworkloads; w++)
        ww = strlen(pk->workloads[w]) > ww ? strlen(pk->workloads[w]) : ww;
    for (size_t p = 0; p < pk->npolicies; p++)
        pw = strlen(pk->policies[p]->name) > pw ? strlen(pk->policies[p]->name) : pw;
    pad(f, "workload", ww + 2, false);
    pad(f, "policy", pw + 2, false);
    fprintf(f, "%15s  %15s  %7s\n", "ours", "paper", "diff");
    for (size_t w = 0; w < pk->nworkloads; w++) {
        for (size_t p = 0; p < pk->npolicies; p++) {
            const struct gp_packing_sum *s = &pk->sums[w * pk->npolicies + p];
            char ours[48], paper[48], diff[24];
            fmt_mean_sd(ours, sizeof ours, s->mean, s->sd);
            fmt_mean_sd(paper, sizeof paper, s->paper_mean, s->paper_sd);
            fmt_diff(diff, sizeof diff, s->diff);
            pad(f, p == 0 ? pk->workloads[w] : "", ww + 2, false);
            pad(f, pk->policies[p]->name, pw + 2, false);
            pad(f, ours, 15, true);
            fputs("  ", f);
            pad(f, paper, 15, true);
            fputs("  ", f);
            pad(f, diff, 7, true);
            fputs(s->off ? " *\n" : "\n", f);
        }
        char bound[64];
        fmt_bound(bound, sizeof bound, pk, w);
        pad(f, "", ww + 2, false);
        pad(f, "lower bound", pw + 2, false);
        pad(f, bound, uninformative(pk, w) ? 17 : 15, true);
        fputs("\n", f);
    }
    if (any_uninformative(pk)) {
        fprintf(f, "\n" BOUND_MARK " " CAVEAT_1 "\n  " CAVEAT_2 ":\n");
        for (size_t w = 0; w < pk->nworkloads; w++)
            if (uninformative(pk, w)) {
                char caveat[512];
                fmt_caveat(caveat, sizeof caveat, pk, w);
                fprintf(f, "  %s\n", caveat);
            }
    }
    size_t with_paper, off = count_off(pk, &with_paper);
    if (with_paper > 0)
        fprintf(f, "\n%zu of %zu workload-policy cells are more than %g point%s from the paper\n",
                off, with_paper, GP_PACKING_OFF_PTS, GP_PACKING_OFF_PTS == 1 ? "" : "s");
}

/* ---- Markdown ------------------------------------------------------------ */

void gp_packing_markdown(struct gp_sbuf *b, const struct gp_packing *pk)
{
    char seeds[128];
    gp_packing_fmt_seeds(seeds, sizeof seeds, pk->seeds, pk->nseeds);
    bool bounds = any_bound(pk);
    char cluster[160];
    fmt_cluster(cluster, sizeof cluster, pk, "\xc3\x97");
    gp_sbuf_printf(b,
                   "Unallocated GPU %% at 100 %% arrived, mean \xc2\xb1 sd over seeds %s "
                   "(%zu run%s per cell), inflate %g, on %s. *paper*: the authors' published "
                   "runs (`%s`). *diff* = ours \xe2\x88\x92 paper in points; **bold** where it "
                   "is more than %g.\n\n",
                   seeds, pk->nseeds, pk->nseeds == 1 ? "" : "s", pk->inflate, cluster,
                   pk->expected_path ? "analysis_allo_discrete.csv" : no_paper(pk, "none given"),
                   GP_PACKING_OFF_PTS);
    gp_sbuf_add(b, bounds ? "| workload | policy | ours | paper | diff | lower bound |\n"
                            "|---|---|---:|---:|---:|---:|\n"
                          : "| workload | policy | ours | paper | diff |\n"
                            "|---|---|---:|---:|---:|\n");
    for (size_t w = 0; w < pk->nworkloads; w++) {
        for (size_t p = 0; p < pk->npolicies; p++) {
            const struct gp_packing_sum *s = &pk->sums[w * pk->npolicies + p];
            char ours[48], paper[48], diff[24];
            fmt_mean_sd(ours, sizeof ours, s->mean, s->sd);
            fmt_mean_sd(paper, sizeof paper, s->paper_mean, s->paper_sd);
            fmt_diff(diff, sizeof diff, s->diff);
            gp_sbuf_printf(b, "| %s | %s | %s | %s | %s%s%s |", pk->workloads[w],
                           pk->policies[p]->name, ours, paper, s->off ? "**" : "", diff,
                           s->off ? "**" : "");
            if (bounds) {
                char bound[64] = "";
                if (p == 0)
                    fmt_bound(bound, sizeof bound, pk, w);
                gp_sbuf_printf(b, " %s |", bound);
            }
            gp_sbuf_add(b, "\n");
        }
    }
    if (!bounds)
        gp_sbuf_add(b, "\nLower bound: not available.\n");
    if (any_uninformative(pk)) {
        gp_sbuf_printf(b, "\n" BOUND_MARK " %s:\n\n", CAVEAT_HEAD);
        for (size_t w = 0; w < pk->nworkloads; w++)
            if (uninformative(pk, w)) {
                char caveat[512];
                fmt_caveat(caveat, sizeof caveat, pk, w);
                gp_sbuf_printf(b, "* %s.\n", caveat);
            }
    }

    /* the compact view: one row per workload */
    gp_sbuf_add(b, "\nOurs (paper), mean over the seeds:\n\n| workload |");
    for (size_t p = 0; p < pk->npolicies; p++)
        gp_sbuf_printf(b, " %s |", pk->policies[p]->name);
    gp_sbuf_add(b, "\n|---|");
    for (size_t p = 0; p < pk->npolicies; p++)
        gp_sbuf_add(b, "---:|");
    gp_sbuf_add(b, "\n");
    for (size_t w = 0; w < pk->nworkloads; w++) {
        gp_sbuf_printf(b, "| %s |", pk->workloads[w]);
        for (size_t p = 0; p < pk->npolicies; p++) {
            const struct gp_packing_sum *s = &pk->sums[w * pk->npolicies + p];
            const char *bold = s->off ? "**" : "";
            if (!isfinite(s->mean))
                gp_sbuf_add(b, " - |");
            else if (isfinite(s->paper_mean))
                gp_sbuf_printf(b, " %s%.2f (%.2f)%s |", bold, s->mean, s->paper_mean, bold);
            else
                gp_sbuf_printf(b, " %.2f |", s->mean);
        }
        gp_sbuf_add(b, "\n");
    }
}

/* ---- JSON ---------------------------------------------------------------- */

/* Builds the document; any allocation failure clears *ok (jansson's setters
 * take NULL and fail). */
struct jctx {
    bool ok;
};

static void jset(struct jctx *c, json_t *obj, const char *key, json_t *v)
{
    if (!obj || json_object_set_new(obj, key, v) != 0)
        c->ok = false;
}

static void jpush(struct jctx *c, json_t *arr, json_t *v)
{
    if (!arr || json_array_append_new(arr, v) != 0)
        c->ok = false;
}

/* Rounded to dec decimals so the text is short and stable; null when not
 * finite (JSON has no NaN). */
static json_t *jreal(double x, int dec)
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

static json_t *juint(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v);
}

static json_t *jcurve(struct jctx *c, const double *v, size_t n)
{
    json_t *arr = json_array();
    for (size_t x = 0; x < n; x++)
        jpush(c, arr, jreal(v[x], 3));
    return arr;
}

enum gp_err gp_packing_json(struct gp_sbuf *b, const struct gp_packing *pk, struct gp_diag *diag)
{
    struct jctx c = {true};
    json_t *root = json_object();
    jset(&c, root, "gpuplane", json_string(GP_VERSION));
    jset(&c, root, "experiment", json_string("fgd-static-packing"));
    jset(&c, root, "metric", json_string("unallocated GPU % at 100 % arrived GPU request"));
    jset(&c, root, "data", json_string(pk->data_dir));
    json_t *cl = json_object();
    jset(&c, cl, "file", json_string(pk->cluster_path));
    jset(&c, cl, "nodes", juint(pk->nodes));
    jset(&c, cl, "gpus", juint(pk->gpus));
    jset(&c, cl, "cpu_scale", jreal(pk->cpu_scale, 6));
    jset(&c, cl, "node_sample", jreal(pk->node_sample, 6));
    jset(&c, cl, "sample_nodes", juint(pk->sample_nodes));
    jset(&c, root, "cluster", cl);
    jset(&c, root, "expected", pk->expected_path ? json_string(pk->expected_path) : json_null());
    jset(&c, root, "inflate", jreal(pk->inflate, 6));
    json_t *arr = json_array();
    for (size_t i = 0; i < pk->nworkloads; i++)
        jpush(&c, arr, json_string(pk->workloads[i]));
    jset(&c, root, "workloads", arr);
    arr = json_array();
    for (size_t i = 0; i < pk->npolicies; i++)
        jpush(&c, arr, json_string(pk->policies[i]->name));
    jset(&c, root, "policies", arr);
    arr = json_array();
    for (size_t i = 0; i < pk->nseeds; i++)
        jpush(&c, arr, juint(pk->seeds[i]));
    jset(&c, root, "seeds", arr);

    json_t *cells = json_array();
    json_t *sums = json_array();
    for (size_t w = 0; w < pk->nworkloads; w++) {
        for (size_t p = 0; p < pk->npolicies; p++) {
            size_t wp = w * pk->npolicies + p;
            for (size_t s = 0; s < pk->nseeds; s++) {
                const struct gp_packing_cell *cell = &pk->cells[wp * pk->nseeds + s];
                json_t *o = json_object();
                jset(&c, o, "workload", json_string(pk->workloads[w]));
                jset(&c, o, "policy", json_string(pk->policies[p]->name));
                jset(&c, o, "seed", juint(pk->seeds[s]));
                jset(&c, o, "unallocated_gpu_pct_at_100", jreal(cell->at100_pct, 4));
                jset(&c, o, "pods_submitted", juint(cell->pods_submitted));
                jset(&c, o, "pods_failed", juint(cell->pods_failed));
                jset(&c, o, "gpus", juint(cell->gpus));
                jpush(&c, cells, o);
            }
            const struct gp_packing_sum *s = &pk->sums[wp];
            json_t *o = json_object();
            jset(&c, o, "workload", json_string(pk->workloads[w]));
            jset(&c, o, "policy", json_string(pk->policies[p]->name));
            jset(&c, o, "n", juint(s->n));
            jset(&c, o, "mean", jreal(s->mean, 4));
            jset(&c, o, "sd", jreal(s->sd, 4));
            if (s->paper_n > 0) {
                json_t *pp = json_object();
                jset(&c, pp, "policy", json_string(gp_fgd_paper_policy(pk->policies[p]->name)));
                jset(&c, pp, "n", juint(s->paper_n));
                jset(&c, pp, "mean", jreal(s->paper_mean, 4));
                jset(&c, pp, "sd", jreal(s->paper_sd, 4));
                jset(&c, o, "paper", pp);
            } else {
                jset(&c, o, "paper", json_null());
            }
            jset(&c, o, "diff", jreal(s->diff, 4));
            jset(&c, o, "off", json_boolean(s->off));
            jset(&c, o, "curve", jcurve(&c, &pk->mean_curves[wp * pk->npoints], pk->npoints));
            jset(&c, o, "paper_curve",
                 s->paper_n > 0 ? jcurve(&c, &pk->paper_curves[wp * pk->npoints], pk->npoints)
                                : json_null());
            jpush(&c, sums, o);
        }
    }
    jset(&c, root, "cells", cells);
    jset(&c, root, "summary", sums);
    json_t *bounds = json_array();
    for (size_t w = 0; w < pk->nworkloads; w++) {
        json_t *o = json_object();
        jset(&c, o, "workload", json_string(pk->workloads[w]));
        const struct gp_packing_bound *bd = &pk->bounds[w];
        jset(&c, o, "available", json_boolean(bd->have));
        jset(&c, o, "unallocated_gpu_pct_at_100", bd->have ? jreal(bd->pct, 4) : json_null());
        jset(&c, o, "note", bd->have ? json_null() : json_string(bd->note ? bd->note : ""));
        jset(&c, o, "informative", bd->have ? json_boolean(bd->informative) : json_null());
        jset(&c, o, "left_out_cpu_pct", bd->have ? jreal(bd->left_cpu_pct, 2) : json_null());
        jset(&c, o, "left_out_mem_pct", bd->have ? jreal(bd->left_mem_pct, 2) : json_null());
        jset(&c, o, "free_cpu_pct", bd->have ? jreal(bd->free_cpu_pct, 2) : json_null());
        jset(&c, o, "free_mem_pct", bd->have ? jreal(bd->free_mem_pct, 2) : json_null());
        char caveat[768];
        if (uninformative(pk, w)) {
            char figures[512];
            fmt_caveat(figures, sizeof figures, pk, w);
            snprintf(caveat, sizeof caveat, "%s; %s", CAVEAT_HEAD, figures);
        }
        jset(&c, o, "caveat", uninformative(pk, w) ? json_string(caveat) : json_null());
        jpush(&c, bounds, o);
    }
    jset(&c, root, "lower_bounds", bounds);

    enum gp_err err = GP_OK;
    char *text =
        c.ok ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))
             : NULL;
    if (!text)
        err = gp_diag_set(diag, GP_ENOMEM, "packing: out of memory while writing JSON");
    else {
        gp_sbuf_add(b, text);
        gp_sbuf_add(b, "\n");
    }
    free(text);
    json_decref(root);
    return err;
}

/* ---- HTML ---------------------------------------------------------------- */

static const char css[] =
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#f5f6f8;color:#1f2933;"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
    "sans-serif}\n"
    "main{max-width:980px;margin:0 auto;padding:28px 20px 40px}\n"
    "h1{font-size:22px;font-weight:600;margin:0 0 2px}\n"
    "h2{font-size:15px;font-weight:600;margin:0 0 8px}\n"
    ".sub{color:#616e7c;margin:0 0 16px}\n"
    ".panel{background:#fff;border:1px solid #e1e5ea;border-radius:6px;padding:14px 16px;"
    "margin:14px 0}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "th,td{text-align:left;vertical-align:top;padding:3px 10px 3px 0}\n"
    "th{color:#616e7c;font-weight:500;white-space:nowrap}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;padding-right:16px}\n"
    "tr.first td{border-top:1px solid #e1e5ea}\n"
    "td.off{color:#b5452b;font-weight:600}\n"
    ".chart{background:#fff;border:1px solid #e1e5ea;border-radius:6px;padding:6px;"
    "margin:14px 0}\n"
    ".chart svg{display:block;width:100%;height:auto}\n"
    ".note{color:#616e7c;font-size:12px;margin:4px 0 0}\n"
    "footer{color:#7b8794;font-size:12px;margin-top:24px}\n";

static void param_row(struct gp_sbuf *o, const char *key, const char *value)
{
    gp_sbuf_add(o, "<tr><th>");
    gp_sbuf_add_xml(o, key);
    gp_sbuf_add(o, "</th><td>");
    gp_sbuf_add_xml(o, value);
    gp_sbuf_add(o, "</td></tr>\n");
}

static void html_table(struct gp_sbuf *o, const struct gp_packing *pk)
{
    gp_sbuf_add(o, "<section class=\"panel\">\n<h2>Unallocated GPU % at 100 % arrived</h2>\n"
                   "<table>\n<tr><th>workload</th><th>policy</th><th class=\"num\">ours</th>"
                   "<th class=\"num\">paper</th><th class=\"num\">diff</th>"
                   "<th class=\"num\">lower bound</th></tr>\n");
    for (size_t w = 0; w < pk->nworkloads; w++) {
        for (size_t p = 0; p < pk->npolicies; p++) {
            const struct gp_packing_sum *s = &pk->sums[w * pk->npolicies + p];
            char ours[48], paper[48], diff[24], bound[64] = "";
            fmt_mean_sd(ours, sizeof ours, s->mean, s->sd);
            fmt_mean_sd(paper, sizeof paper, s->paper_mean, s->paper_sd);
            fmt_diff(diff, sizeof diff, s->diff);
            if (p == 0)
                fmt_bound(bound, sizeof bound, pk, w);
            gp_sbuf_add(o, p == 0 ? "<tr class=\"first\"><td>" : "<tr><td>");
            if (p == 0)
                gp_sbuf_add_xml(o, pk->workloads[w]);
            gp_sbuf_add(o, "</td><td>");
            gp_sbuf_add_xml(o, pk->policies[p]->name);
            gp_sbuf_add(o, "</td><td class=\"num\">");
            gp_sbuf_add_xml(o, ours);
            gp_sbuf_add(o, "</td><td class=\"num\">");
            gp_sbuf_add_xml(o, paper);
            gp_sbuf_add(o, s->off ? "</td><td class=\"num off\">" : "</td><td class=\"num\">");
            gp_sbuf_add_xml(o, diff);
            gp_sbuf_add(o, "</td><td class=\"num\">");
            gp_sbuf_add_xml(o, bound);
            gp_sbuf_add(o, "</td></tr>\n");
        }
    }
    gp_sbuf_printf(o,
                   "</table>\n<p class=\"note\">Mean &plusmn; sample sd over the seeds; "
                   "<i>paper</i>: the authors' published runs of the same workload and "
                   "policy; <i>diff</i> = ours &minus; paper in points, in red where it is "
                   "more than %g.</p>\n",
                   GP_PACKING_OFF_PTS);
    if (any_uninformative(pk)) {
        gp_sbuf_add(o, "<p class=\"note\">" BOUND_MARK " ");
        gp_sbuf_add_xml(o, CAVEAT_HEAD);
        gp_sbuf_add(o, ":</p>\n<ul class=\"note\">\n");
        for (size_t w = 0; w < pk->nworkloads; w++)
            if (uninformative(pk, w)) {
                char caveat[512];
                fmt_caveat(caveat, sizeof caveat, pk, w);
                gp_sbuf_add(o, "<li>");
                gp_sbuf_add_xml(o, caveat);
                gp_sbuf_add(o, "</li>\n");
            }
        gp_sbuf_add(o, "</ul>\n");
    }
    gp_sbuf_add(o, "</section>\n");
}

static void html_chart(struct gp_sbuf *o, const struct gp_packing *pk, size_t w, double *x)
{
    size_t np = pk->npoints;
    size_t from = np > CURVE_FROM_PCT + 1 ? CURVE_FROM_PCT : 0;
    size_t n = np - from;
    struct gp_svg_series *s = calloc(2 * pk->npolicies + 2, sizeof *s);
    if (!s) {
        o->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(from + i);
    size_t ns = 0;
    bool paper_any = false;
    /* the paper's dashed lines first, so ours are drawn over them */
    for (size_t p = 0; p < pk->npolicies; p++) {
        size_t wp = w * pk->npolicies + p;
        if (pk->sums[wp].paper_n == 0)
            continue;
        paper_any = true;
        s[ns++] = (struct gp_svg_series){.x = x,
                                         .y = &pk->paper_curves[wp * np + from],
                                         .n = n,
                                         .color = palette[p % NPALETTE],
                                         .dashed = true};
    }
    for (size_t p = 0; p < pk->npolicies; p++) {
        size_t wp = w * pk->npolicies + p;
        s[ns++] = (struct gp_svg_series){.name = pk->policies[p]->name,
                                         .x = x,
                                         .y = &pk->mean_curves[wp * np + from],
                                         .n = n,
                                         .color = palette[p % NPALETTE]};
    }
    if (paper_any) /* a legend entry for the dashed lines */
        s[ns++] =
            (struct gp_svg_series){.name = "paper (dashed)", .color = "#616e7c", .dashed = true};
    struct gp_svg_marker mk = {100, "100 %", "#3e4c59"};
    struct gp_svg_chart ch = {0};
    ch.title = pk->workloads[w];
    ch.width = 960;
    ch.height = 340;
    ch.x = (struct gp_svg_axis){.label = "arrived GPU request (% of the cluster's GPUs)",
                                .min = (double)from,
                                .max = (double)(np - 1),
                                .fixed_min = true,
                                .fixed_max = true,
                                .integer = true};
    ch.y = (struct gp_svg_axis){.label = "unallocated (% of GPUs)", .min = 0, .fixed_min = true};
    ch.series = s;
    ch.nseries = ns;
    ch.markers = from <= 100 && np > 100 ? &mk : NULL;
    ch.nmarkers = ch.markers ? 1 : 0;
    ch.empty_text = "no curve";
    gp_sbuf_add(o, "<div class=\"chart\">\n");
    gp_svg_line_chart(o, &ch);
    gp_sbuf_add(o, "</div>\n");
    free(s);
}

void gp_packing_html(struct gp_sbuf *o, const struct gp_packing *pk)
{
    double *x = malloc((pk->npoints ? pk->npoints : 1) * sizeof *x);
    if (!x) {
        o->oom = true;
        return;
    }
    char seeds[128], buf[256];
    gp_packing_fmt_seeds(seeds, sizeof seeds, pk->seeds, pk->nseeds);
    gp_sbuf_add(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>gpuplane packing: the FGD static packing experiment</title>\n"
                   "<style>\n");
    gp_sbuf_add(o, css);
    gp_sbuf_add(o, "</style>\n</head>\n<body>\n<main>\n<header>\n"
                   "<h1>Static packing: gpuplane beside the FGD paper</h1>\n"
                   "<p class=\"sub\">gpuplane ");
    gp_sbuf_add_xml(o, GP_VERSION);
    gp_sbuf_add(o, " &middot; the static packing experiment of Weng et al., USENIX ATC '23, "
                   "on the Alibaba openb trace</p>\n<div class=\"panel\"><table>\n");
    fmt_cluster(buf, sizeof buf, pk, "\xc3\x97");
    gp_sbuf_add(o, "<tr><th>Cluster</th><td>");
    gp_sbuf_add_xml(o, pk->cluster_path);
    gp_sbuf_add(o, " &mdash; ");
    gp_sbuf_add_xml(o, buf);
    gp_sbuf_add(o, "</td></tr>\n");
    snprintf(buf, sizeof buf, "%zu workload%s x %zu polic%s x %zu seed%s (%s)", pk->nworkloads,
             pk->nworkloads == 1 ? "" : "s", pk->npolicies, pk->npolicies == 1 ? "y" : "ies",
             pk->nseeds, pk->nseeds == 1 ? "" : "s", seeds);
    param_row(o, "Runs", buf);
    snprintf(buf, sizeof buf, "%g (pods resampled until their GPU request is %g %% of the GPUs)",
             pk->inflate, pk->inflate * 100);
    param_row(o, "Inflate", buf);
    param_row(o, "Published results",
              pk->expected_path ? pk->expected_path : no_paper(pk, "none given"));
    gp_sbuf_add(o, "</table></div>\n</header>\n");

    html_table(o, pk);
    gp_sbuf_add(o, "<section>\n<h2>Unallocated GPU % against arrived GPU request</h2>\n"
                   "<p class=\"note\">Solid: gpuplane, the mean over the seeds at each integer "
                   "% arrived. Dashed: the mean of the authors' published runs of the same "
                   "policy. The ideal is 100 &minus; x up to 100 % arrived, then 0.</p>\n");
    for (size_t w = 0; w < pk->nworkloads; w++)
        html_chart(o, pk, w, x);
    gp_sbuf_add(o, "</section>\n<footer>Generated by gpuplane ");
    gp_sbuf_add_xml(o, GP_VERSION);
    gp_sbuf_add(o, " (<code>gpuplane packing</code>). The same inputs give the same "
                   "page.</footer>\n</main>\n</body>\n</html>\n");
    free(x);
}
