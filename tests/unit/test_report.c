/* test_report.c - the simulator's output writers (io/report.h): a timed
 * and a static result built by hand are rendered as summary, JSON and CSV
 * and compared byte for byte with tests/golden/report-*.{txt,json,csv};
 * the JSON is parsed back and checked for every documented key; the HTML is
 * checked for balance, self-containment, escaping, chart titles and the
 * absence of nan/inf; plus the number, duration and tick formatting.
 *
 * To rewrite the golden files after an intended change of the output, run
 *   GP_UPDATE_GOLDEN=1 ./test_report
 * (or GP_UPDATE_GOLDEN=1 ctest -R test_report) and review the diff.
 * GP_REPORT_HTML_DIR=DIR also writes the two HTML reports there, to look at. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>

#include "io/svg.h"
#include "report/report.h"
#include "report/report_fmt.h"
#include "util/fs.h"

#define GOLDEN_DIR GP_TEST_DATA "/../golden"

/* ---- fixtures ------------------------------------------------------------ */

#define NSAMPLES 49
#define NDELAYS  60
#define NCURVE   53

static struct gp_sim_sample samples[NSAMPLES];
static double delays[NDELAYS];
static struct gp_sim_point curve[NCURVE];

static const char *const timed_workloads[] = {"examples/inference.yaml", "examples/train.yaml"};
static struct gp_pool_spec pools[] = {
    {.name = "a100",
     .gpu_model = "A100-80GB",
     .gpus_per_node = 8,
     .count = 4,
     .price_per_hour_usd = 32.77},
    {.name = "t4", .gpu_model = "T4", .gpus_per_node = 4, .count = 8},
};
static struct gp_cluster cluster = {.name = "demo", .pools = pools, .npools = 2};

/* Pods that can never fit: ten 9-GPU pods on 8-GPU nodes, a gang too big
 * for a rack, a gang whose minMember exceeds its pods. */
static struct gp_sim_nofit nofit[] = {
    {.kind = GP_SIM_NOFIT_GPUS, .need = 9, .have = 8, .gpus = 9, .pods = 10},
    {.kind = GP_SIM_NOFIT_GANG_GPUS,
     .gang = "pretrain",
     .what = "gpuplane.io/rack",
     .need = 24000,
     .have = 16000,
     .gpus = 3,
     .pods = 3,
     .gangs = 1},
    {.kind = GP_SIM_NOFIT_GANG_MEMBERS,
     .gang = "sweep",
     .need = 9,
     .have = 8,
     .pods = 8,
     .gangs = 1},
};
static struct gp_sim_nofit static_nofit[] = {
    {.kind = GP_SIM_NOFIT_CPU, .need = 128000, .have = 96000, .pods = 2},
};

/* A day of a 12-node, 64-GPU cluster sampled every 30 min: a morning ramp,
 * a busy plateau with waves, an evening decline. */
static void timed_result(struct gp_sim_result *r, struct gp_report_meta *m)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < NSAMPLES; i++) {
        double gpu;
        if (i < 12)
            gpu = i * 7.5;
        else if (i < 40)
            gpu = 80 + ((i % 6) < 3 ? (i % 6) * 5 : (6 - i % 6) * 5);
        else
            gpu = 80 - (i - 40) * 8;
        samples[i] =
            (struct gp_sim_sample){.t_s = i * 1800.0,
                                   .gpu_alloc_pct = gpu,
                                   .cpu_alloc_pct = gpu * 0.55 + 3,
                                   .mem_alloc_pct = gpu * 0.4 + 5,
                                   .pending = (uint32_t)(i >= 12 && i < 40 ? (i % 8) * 3 : 0),
                                   .running = (uint32_t)(gpu * 0.8),
                                   .nodes = 12};
    }
    static const double tail[NDELAYS - 30] = {
        0.4, 1.2,  2.5,  3.2,  7,    12,   25,   42,   58,   75,   130,  250,  250,  400,   610,
        900, 1500, 2400, 3700, 4000, 5000, 6100, 7200, 7900, 8500, 9000, 9000, 9500, 10000, 10800};
    for (int i = 0; i < NDELAYS; i++)
        delays[i] = i < 30 ? 0 : tail[i - 30];
    r->mode = GP_SIM_TIMED;
    r->policy = "fgd";
    r->seed = 42;
    r->sim_end_s = 86400;
    r->pods_submitted = 1200;
    r->pods_scheduled = 1180;
    r->pods_completed = 1100;
    r->pods_failed = 5;
    r->pods_pending_end = 15;
    r->pods_running_end = 80;
    r->pod_retries = 12;
    r->binds = 1192;
    r->queue_delay_s = (struct gp_sim_stats){
        .mean = 1612.345678, .p50 = 3.2, .p95 = 250, .p99 = 9000, .max = 10800, .n = NDELAYS};
    r->queue_delays_s = delays;
    r->nqueue_delays = NDELAYS;
    r->node_hours = 288;
    r->gpu_hours_total = 1536;
    r->gpu_hours_allocated = 1112.125;
    r->gpu_hours_idle = 423.875;
    r->cost_usd = 1234.56; /* the whole bill, as cost.total_usd */
    r->cost.total_usd = 1234.56;
    r->cost.gpu_used_usd = 900;
    r->cost.gpu_idle_usd = 300.56;
    r->cost.control_plane_usd = 34;
    /* the exact peak: the highest sample here (95 % at 7.5 h), 60.8 of 64 GPUs */
    r->gpu_alloc_peak_pct = 95;
    r->gpu_alloc_peak_t_s = 27000;
    r->gpu_alloc_peak_gpus = 60.8;
    r->nofit = nofit;
    r->nnofit = 3;
    r->pods_never_fit = 21;
    r->unschedulable[GP_FILTER_GPU_COUNT] = 812;
    r->unschedulable[GP_FILTER_TAINT] = 120;
    r->unschedulable[GP_FILTER_CPU] = 40;
    r->unschedulable[GP_FILTER_GPU_MODEL] = 7;
    r->unschedulable[GP_FILTER_MEMORY] = 3;
    r->unschedulable[GP_FILTER_SELECTOR] = 2;
    r->samples = samples;
    r->nsamples = NSAMPLES;
    r->nodes = 12;
    r->gpus = 64;

    memset(m, 0, sizeof *m);
    m->version = "test";
    m->cluster = "examples/cluster.yaml";
    m->workloads = timed_workloads;
    m->nworkloads = 2;
    m->cluster_spec = &cluster;
}

static const char *const static_workloads[] = {"openb:data/openb_pod_list_default.csv"};

/* The FGD packing experiment on the openb cluster: the curve follows the
 * ideal line with 5 % lost by 100 % arrived, and creeps down after. */
static void static_result(struct gp_sim_result *r, struct gp_report_meta *m)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < NCURVE; i++) {
        double x = i * 2.5;
        curve[i].arrived_pct = x;
        curve[i].unallocated_pct = x <= 100 ? 100 - 0.95 * x : 5 - 0.04 * (x - 100);
    }
    r->mode = GP_SIM_STATIC;
    r->policy = "best-fit";
    r->seed = 7;
    r->pods_submitted = 10866;
    r->pods_scheduled = 10100;
    r->pods_failed = 766;
    r->pods_running_end = 10100;
    r->binds = 10100;
    r->nofit = static_nofit;
    r->nnofit = 1;
    r->pods_never_fit = 2;
    r->unschedulable[GP_FILTER_GPU_SHARE] = 5000;
    r->unschedulable[GP_FILTER_GPU_COUNT] = 3000;
    r->unschedulable[GP_FILTER_CPU] = 200;
    r->unallocated_gpu_pct_at_100 = 5;
    r->curve = curve;
    r->ncurve = NCURVE;
    r->nodes = 1213;
    r->gpus = 6212;

    memset(m, 0, sizeof *m);
    m->version = "test";
    m->cluster = "openb:data/openb_node_list_gpu_node.csv";
    m->workloads = static_workloads;
    m->nworkloads = 1;
}

/* ---- helpers ---------------------------------------------------------------- */

static char *summary_text(const struct gp_sim_result *r, const struct gp_report_meta *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    gp_report_summary(f, r, m);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* Compares text with the golden file, or rewrites it under GP_UPDATE_GOLDEN=1. */
static void check_golden(const char *name, const char *text)
{
    char path[1024];
    struct gp_diag diag = {{0}};
    snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, name);
    const char *update = getenv("GP_UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        assert_int_equal(gp_fs_write_atomic(path, text, strlen(text), &diag), GP_OK);
        fprintf(stderr, "rewrote %s\n", path);
        return;
    }
    char *want = NULL;
    size_t wlen = 0;
    if (gp_fs_read(path, &want, &wlen, &diag) != GP_OK)
        fail_msg("%s (run with GP_UPDATE_GOLDEN=1 to create it)", diag.msg);
    if (strcmp(want, text) != 0) {
        size_t i = 0, line = 1;
        while (want[i] && want[i] == text[i]) {
            if (want[i] == '\n')
                line++;
            i++;
        }
        free(want);
        fail_msg("%s differs from the output at line %zu (GP_UPDATE_GOLDEN=1 rewrites it)", path,
                 line);
    }
    free(want);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

/* "nan" or "inf" as a word of its own, in any case (not "info", "inference"). */
static bool has_nonfinite_word(const char *s)
{
    static const char *const words[] = {"nan", "inf"};
    for (const char *p = s; *p; p++) {
        for (int w = 0; w < 2; w++) {
            if (strncasecmp(p, words[w], 3) != 0)
                continue;
            bool before =
                p > s && ((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'));
            char a = p[3];
            bool after = (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z');
            if (!before && !after)
                return true;
        }
    }
    return false;
}

static void check_html(const char *html, const char *const *titles, size_t ntitles)
{
    assert_true(strncmp(html, "<!DOCTYPE html>\n", 16) == 0);
    size_t len = strlen(html);
    assert_true(len > 7 && strcmp(html + len - 8, "</html>\n") == 0);
    /* balanced elements */
    static const char *const tags[][2] = {
        {"<svg", "</svg>"},     {"<section", "</section>"}, {"<div", "</div>"},
        {"<table", "</table>"}, {"<tr>", "</tr>"},          {"<g ", "</g>"},
        {"<text", "</text>"},   {"<title>", "</title>"},    {"<header>", "</header>"},
        {"<main>", "</main>"},  {"<style>", "</style>"},    {"<body>", "</body>"},
        {"<head>", "</head>"},
    };
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (count(html, tags[i][0]) != count(html, tags[i][1]))
            fail_msg("unbalanced %s: %zu open, %zu closed", tags[i][0], count(html, tags[i][0]),
                     count(html, tags[i][1]));
    assert_int_equal(count(html, "<svg"), ntitles);
    for (size_t i = 0; i < ntitles; i++)
        if (!strstr(html, titles[i]))
            fail_msg("chart title missing: %s", titles[i]);
    assert_false(has_nonfinite_word(html));
    /* self-contained: no script, no external resource */
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "href="));
    assert_null(strstr(html, "url("));
    assert_null(strstr(html, "@import"));
    assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}

static void maybe_save_html(const char *name, const char *html)
{
    const char *dir = getenv("GP_REPORT_HTML_DIR");
    if (!dir)
        return;
    char path[1024];
    struct gp_diag diag;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(gp_fs_write_atomic(path, html, strlen(html), &diag), GP_OK);
}

static json_t *parse_json(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!j)
        fail_msg("JSON does not parse: line %d: %s", err.line, err.text);
    return j;
}

/* The value at a dotted path of object keys, which must exist. */
static json_t *jget(json_t *root, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *v = root;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
        v = json_object_get(v, k);
        if (!v)
            fail_msg("JSON key missing: %s", path);
    }
    return v;
}

static void check_json_schema(json_t *j, bool is_static)
{
    static const char *const numbers[] = {
        "gpuplane.schema",
        "seed",
        "sim_end_s",
        "cluster.nodes",
        "cluster.gpus",
        "pods.submitted",
        "pods.scheduled",
        "pods.completed",
        "pods.failed",
        "pods.pending_at_end",
        "pods.running_at_end",
        "pods.retries",
        "node_hours",
        "gpu_hours.total",
        "gpu_hours.allocated",
        "gpu_hours.idle",
        "cost_usd",
        "cost.total_usd",
        "gpu_alloc.mean_pct",
        "gpu_alloc.peak_pct",
        "gpu_alloc.peak_t_s",
        "gpu_alloc.peak_gpus",
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        if (!json_is_number(jget(j, numbers[i])))
            fail_msg("not a number: %s", numbers[i]);
    /* statistics: numbers, or null when nothing is behind them */
    static const char *const stats[] = {
        "queue_delay_s.mean", "queue_delay_s.p50", "queue_delay_s.p95",
        "queue_delay_s.p99",  "queue_delay_s.max", "jobs.jct_s.mean",
        "jobs.jct_s.p50",     "jobs.jct_s.p95",    "jobs.jct_s.p99",
    };
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        if (!json_is_number(jget(j, stats[i])) && !json_is_null(jget(j, stats[i])))
            fail_msg("neither a number nor null: %s", stats[i]);
    /* one number: the whole bill */
    assert_true(json_equal(jget(j, "cost_usd"), jget(j, "cost.total_usd")));
    assert_true(json_is_string(jget(j, "gpuplane.version")));
    assert_int_equal(json_integer_value(jget(j, "gpuplane.schema")), 1);
    assert_true(json_is_string(jget(j, "input.cluster")));
    assert_true(json_is_array(jget(j, "input.workloads")));
    assert_string_equal(json_string_value(jget(j, "mode")), is_static ? "static" : "timed");
    assert_true(json_is_string(jget(j, "policy")));
    json_t *un = jget(j, "unschedulable");
    /* every filter, but the affinity and spreading ones only when they
     * rejected a node (none does here) */
    size_t listed = 0;
    for (int f = 0; f < GP_FILTER_COUNT; f++) {
        json_t *v = json_object_get(un, gp_filter_name((enum gp_filter)f));
        if (gp_filter_optional((enum gp_filter)f)) {
            assert_null(v);
            continue;
        }
        assert_true(json_is_integer(v));
        listed++;
    }
    assert_int_equal(json_object_size(un), listed);
    json_t *tl = jget(j, "timeline");
    assert_true(json_is_array(tl));
    static const char *const sample_keys[] = {
        "t_s", "gpu_alloc_pct", "cpu_alloc_pct", "mem_alloc_pct", "pending", "running", "nodes"};
    for (size_t i = 0; i < json_array_size(tl); i++) {
        json_t *s = json_array_get(tl, i);
        assert_int_equal(json_object_size(s), 7);
        for (size_t k = 0; k < 7; k++)
            assert_true(json_is_number(json_object_get(s, sample_keys[k])));
    }
    json_t *st = json_object_get(j, "static");
    if (!is_static) {
        assert_null(st);
        return;
    }
    assert_true(json_is_number(jget(j, "static.unallocated_gpu_pct_at_100")));
    json_t *cv = jget(j, "static.curve");
    assert_true(json_is_array(cv));
    for (size_t i = 0; i < json_array_size(cv); i++) {
        json_t *pt = json_array_get(cv, i);
        assert_int_equal(json_array_size(pt), 2);
        assert_true(json_is_number(json_array_get(pt, 0)));
        assert_true(json_is_number(json_array_get(pt, 1)));
    }
}

/* ---- tests -------------------------------------------------------------------- */

static void test_timed_golden(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    char *sum = summary_text(&r, &m);
    check_golden("report-timed.txt", sum);
    free(sum);
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_json(&b, &r, &m);
    assert_false(b.oom);
    check_golden("report-timed.json", gp_sbuf_str(&b));
    gp_sbuf_free(&b);
    gp_report_csv(&b, &r);
    check_golden("report-timed.csv", gp_sbuf_str(&b));
    gp_sbuf_free(&b);
}

static void test_static_golden(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    static_result(&r, &m);
    char *sum = summary_text(&r, &m);
    check_golden("report-static.txt", sum);
    free(sum);
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_json(&b, &r, &m);
    check_golden("report-static.json", gp_sbuf_str(&b));
    gp_sbuf_free(&b);
    gp_report_csv(&b, &r);
    check_golden("report-static.csv", gp_sbuf_str(&b));
    gp_sbuf_free(&b);
}

static void test_summary_numbers(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    char *s = summary_text(&r, &m);
    static const char *const want[] = {
        "timed, policy fgd, seed 42", /* run parameters */
        "examples/cluster.yaml: 12 nodes, 64 GPUs",
        "4 x 8 A100-80GB", /* the pools */
        "$32.77/h per node",
        "8 x 4 T4",
        "examples/inference.yaml, examples/train.yaml",
        "simulated time  24 h",
        "1200 submitted, 1180 scheduled, 1100 completed, 5 failed",
        "15 pending and 80 running at the end, 12 retries",
        "26 min 52 s",                 /* mean delay 1612 s */
        "3.2 s",                       /* p50 */
        "4 min 10 s",                  /* p95 250 s */
        "2.5 h",                       /* p99 9000 s */
        "3 h",                         /* max 10800 s */
        "72.4 % average, 95.0 % peak", /* 1112.125 / 1536 GPU-hours; highest sample */
        "1536.0 total, 1112.1 allocated, 423.9 idle (27.6 % idle)",
        "node-hours      288.0",
        "$1234.56",
        "812  Insufficient nvidia.com/gpu", /* reasons, highest first, aligned */
        "120  node(s) had untolerated taint",
        " 40  Insufficient cpu",
        "  2  other reasons", /* the sixth reason, beyond the top five */
        "never fit       10 pods can never fit: they need 9 GPUs, the largest node has 8",
        ("1 gang (3 pods) can never start: gang pretrain needs 24 GPUs in one rack, the largest "
         "rack has 16"),
        "1 gang (8 pods) can never start: gang sweep: minMember 9 > 8 members that can exist",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(s, want[i]))
            fail_msg("summary lacks \"%s\":\n%s", want[i], s);
    assert_false(has_nonfinite_word(s));
    /* about 20-30 lines */
    size_t lines = 0;
    for (const char *c = s; *c; c++)
        lines += *c == '\n';
    assert_in_range(lines, 15, 32);
    free(s);

    struct gp_sim_result st;
    static_result(&st, &m);
    s = summary_text(&st, &m);
    assert_non_null(strstr(s, "static packing, policy best-fit, seed 7"));
    assert_non_null(strstr(s, "10866 arrived, 10100 scheduled, 766 failed"));
    assert_non_null(strstr(s, "5.00 % of capacity at 100 % arrived"));
    assert_non_null(strstr(s, "3.80 % at the end (130 % arrived)"));
    assert_non_null(strstr(s, "5000  no GPU with enough free share"));
    assert_non_null(strstr(s, "2 pods can never fit: they need 128 CPUs, the largest node has 96"));
    assert_null(strstr(s, "queueing delay")); /* no time in static mode */
    free(s);
}

static void test_json_schema(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    struct gp_sbuf b;

    timed_result(&r, &m);
    gp_sbuf_init(&b);
    gp_report_json(&b, &r, &m);
    json_t *j = parse_json(gp_sbuf_str(&b));
    check_json_schema(j, false);
    assert_int_equal(json_integer_value(jget(j, "pods.submitted")), 1200);
    assert_int_equal(json_integer_value(jget(j, "unschedulable.gpu-count")), 812);
    assert_int_equal(json_array_size(jget(j, "timeline")), NSAMPLES);
    assert_true(json_real_value(jget(j, "queue_delay_s.mean")) == 1612.346); /* 3 decimals */
    assert_string_equal(json_string_value(json_array_get(jget(j, "input.workloads"), 1)),
                        "examples/train.yaml");
    json_decref(j);
    gp_sbuf_free(&b);

    static_result(&r, &m);
    gp_report_json(&b, &r, &m);
    j = parse_json(gp_sbuf_str(&b));
    check_json_schema(j, true);
    assert_int_equal(json_array_size(jget(j, "static.curve")), NCURVE);
    assert_true(json_real_value(jget(j, "static.unallocated_gpu_pct_at_100")) == 5.0);
    json_decref(j);
    gp_sbuf_free(&b);
}

static const char *const timed_titles[] = {
    "GPU allocation over time",    "Pending pods over time", "Running pods over time",
    "Queueing delay distribution", "Cost over time",
};
static const char *const static_titles[] = {"Unallocated GPUs vs arrived GPU request"};

static void test_html(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    struct gp_sbuf b;

    timed_result(&r, &m);
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    assert_false(b.oom);
    check_html(gp_sbuf_str(&b), timed_titles, 5);
    const char *h = gp_sbuf_str(&b);
    assert_non_null(strstr(h, "examples/cluster.yaml"));
    assert_non_null(strstr(h, "p95 4 min 10 s")); /* the histogram's markers */
    assert_non_null(strstr(h, "p99 2.5 h"));
    assert_non_null(strstr(h, "Insufficient nvidia.com/gpu"));
    assert_non_null(strstr(h, "time (h)")); /* a day is shown in hours */
    maybe_save_html("report-timed.html", h);
    gp_sbuf_free(&b);

    static_result(&r, &m);
    gp_report_html(&b, &r, &m);
    check_html(gp_sbuf_str(&b), static_titles, 1);
    h = gp_sbuf_str(&b);
    assert_non_null(strstr(h, "ideal (100 - x)"));
    assert_non_null(strstr(h, "at 100 %: 5.0 % unallocated"));
    maybe_save_html("report-static.html", h);
    gp_sbuf_free(&b);
}

static void test_html_queues(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    struct gp_sbuf b;
    timed_result(&r, &m);
    struct gp_sim_queue q[2];
    memset(q, 0, sizeof q);
    q[0].name = "research";
    q[0].declared = true;
    q[0].guaranteed_gpus = 4;
    q[0].limit_gpus = 8;
    q[0].binds = 10;
    q[0].evicted = 3;
    q[0].lost_gpu_hours = 1.5;
    q[1].name = "prod <team>";
    q[1].declared = true;
    q[1].limit_gpus = -1;
    r.queues = q;
    r.nqueues = 2;
    r.preemptions = 3;
    r.preempted = 1;
    r.reclaimed = 2;
    r.lost_gpu_hours = 1.5;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    const char *h = gp_sbuf_str(&b);
    check_html(h, timed_titles, 5);
    assert_non_null(strstr(h, "<h2>Queues</h2>"));
    assert_non_null(strstr(h, "3 evictions (1 preempted by a higher priority in their queue, 2 "
                              "reclaimed by a queue under its guarantee) lost 1.5 GPU-hours"));
    assert_non_null(strstr(h, "<td class=\"num\">4 / 8</td>"));
    assert_non_null(strstr(h, "<td>prod &lt;team&gt;</td><td class=\"num\">0 / none</td>"));
    gp_sbuf_free(&b);
    /* without declared queues there is no such section */
    timed_result(&r, &m);
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    assert_null(strstr(gp_sbuf_str(&b), "<h2>Queues</h2>"));
    gp_sbuf_free(&b);
}

static void test_deterministic(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0)
            timed_result(&r, &m);
        else
            static_result(&r, &m);
        struct gp_sbuf a, b;
        gp_sbuf_init(&a);
        gp_sbuf_init(&b);
        gp_report_html(&a, &r, &m);
        gp_report_json(&a, &r, &m);
        gp_report_csv(&a, &r);
        gp_report_html(&b, &r, &m);
        gp_report_json(&b, &r, &m);
        gp_report_csv(&b, &r);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.data, b.data, a.len);
        gp_sbuf_free(&a);
        gp_sbuf_free(&b);
    }
}

/* User strings are escaped in HTML and kept valid in JSON. */
static void test_escaping(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    static const char *const evil_workloads[] = {"a&b.yaml", "bad-\xff-utf8.yaml"};
    struct gp_pool_spec evil_pool = {
        .name = "<pool>", .gpu_model = "\"T4\"", .gpus_per_node = 1, .count = 1};
    struct gp_cluster evil_cluster = {.pools = &evil_pool, .npools = 1};
    timed_result(&r, &m);
    r.policy = "<img onerror=x>";
    m.cluster = "<script>alert('x')</script>";
    m.workloads = evil_workloads;
    m.cluster_spec = &evil_cluster;
    m.version = "1.0 & \"beta\"";

    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    const char *h = gp_sbuf_str(&b);
    assert_null(strstr(h, "<script"));
    assert_null(strstr(h, "<img"));
    assert_null(strstr(h, "<pool>"));
    assert_non_null(strstr(h, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert_non_null(strstr(h, "a&amp;b.yaml"));
    assert_non_null(strstr(h, "&quot;T4&quot;"));
    gp_sbuf_free(&b);

    gp_report_json(&b, &r, &m);
    assert_false(b.oom);
    json_t *j = parse_json(gp_sbuf_str(&b));
    assert_string_equal(json_string_value(jget(j, "input.cluster")), m.cluster);
    assert_string_equal(json_string_value(jget(j, "policy")), r.policy);
    /* the invalid byte became U+FFFD */
    assert_string_equal(json_string_value(json_array_get(jget(j, "input.workloads"), 1)),
                        "bad-\xEF\xBF\xBD-utf8.yaml");
    json_decref(j);
    gp_sbuf_free(&b);
}

/* An empty result (nothing ran, no arrays, no meta) and one with NaN and
 * infinite values render without crashing and without nan/inf. */
static void test_empty_and_nonfinite(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        struct gp_sim_result r;
        memset(&r, 0, sizeof r);
        r.mode = mode ? GP_SIM_STATIC : GP_SIM_TIMED;
        struct gp_sbuf b;
        gp_sbuf_init(&b);
        gp_report_html(&b, &r, NULL);
        check_html(gp_sbuf_str(&b), mode ? static_titles : timed_titles, mode ? 1 : 4);
        gp_sbuf_free(&b);
        gp_report_json(&b, &r, NULL);
        json_t *j = parse_json(gp_sbuf_str(&b));
        check_json_schema(j, mode == 1);
        json_decref(j);
        gp_sbuf_free(&b);
        gp_report_csv(&b, &r);
        assert_string_equal(gp_sbuf_str(&b),
                            mode ? "arrived_pct,unallocated_pct\n"
                                 : "t_s,gpu_alloc_pct,cpu_alloc_pct,"
                                   "mem_alloc_pct,pending,running,nodes,cost_usd\n");
        gp_sbuf_free(&b);
        char *s = summary_text(&r, NULL);
        assert_false(has_nonfinite_word(s));
        free(s);
    }

    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    struct gp_sim_sample bad[3] = {
        {.t_s = 0, .gpu_alloc_pct = 10, .cpu_alloc_pct = 5, .mem_alloc_pct = 5},
        {.t_s = 60,
         .gpu_alloc_pct = NAN,
         .cpu_alloc_pct = INFINITY,
         .mem_alloc_pct = -INFINITY,
         .cost_usd = NAN},
        {.t_s = 120, .gpu_alloc_pct = 30, .cpu_alloc_pct = 5, .mem_alloc_pct = 5},
    };
    double bad_delays[3] = {0, NAN, INFINITY};
    r.samples = bad;
    r.nsamples = 3;
    r.queue_delays_s = bad_delays;
    r.nqueue_delays = 3;
    r.sim_end_s = NAN;
    r.queue_delay_s.p99 = INFINITY;
    r.node_hours = NAN;
    r.cost_usd = NAN;
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    check_html(gp_sbuf_str(&b), timed_titles, 5);
    gp_sbuf_free(&b);
    gp_report_json(&b, &r, &m);
    json_t *j = parse_json(gp_sbuf_str(&b));
    assert_true(json_is_null(jget(j, "sim_end_s")));
    assert_true(
        json_is_null(json_object_get(json_array_get(jget(j, "timeline"), 1), "gpu_alloc_pct")));
    json_decref(j);
    gp_sbuf_free(&b);
    gp_report_csv(&b, &r);
    assert_non_null(strstr(gp_sbuf_str(&b), "\n60,,,,0,0,0,\n"));
    gp_sbuf_free(&b);
    char *s = summary_text(&r, &m);
    assert_false(has_nonfinite_word(s));
    free(s);
}

/* Statistics with nothing behind them (no bind, no completed job) are
 * n/a in the summary and the HTML report and null in the JSON, never 0 s. */
static void test_stats_na(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    memset(&r.queue_delay_s, 0, sizeof r.queue_delay_s); /* n = 0: no bind */
    r.queue_delays_s = NULL;
    r.nqueue_delays = 0;
    r.binds = 0;
    r.jobs_submitted = 3; /* none completed: jct_s.n = 0 */
    r.jobs_failed = 1;
    struct gp_sim_queue q[1];
    memset(q, 0, sizeof q);
    q[0].name = "research";
    q[0].declared = true;
    q[0].jobs_submitted = 3;
    r.queues = q;
    r.nqueues = 1;

    char *s = summary_text(&r, &m);
    if (!strstr(s, "completion time mean n/a, p95 n/a"))
        fail_msg("summary's job line lacks n/a:\n%s", s);
    if (!strstr(s, "         n/a         n/a         n/a         n/a         n/a\n"))
        fail_msg("summary's delay table lacks n/a:\n%s", s);
    if (!strstr(s, "delay mean n/a"))
        fail_msg("summary's queue line lacks n/a:\n%s", s);
    assert_null(strstr(s, " 0 s ")); /* a duration of 0 s anywhere */
    assert_null(strstr(s, " 0 s\n"));
    free(s);

    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    const char *h = gp_sbuf_str(&b);
    assert_non_null(strstr(h, "<div class=\"k\">Queueing delay p50</div><div class=\"v\">n/a</div>"
                              "<div class=\"n\">mean n/a, p95 n/a, p99 n/a</div>"));
    /* the queue's row: delay p50, p95, and its JCT */
    assert_int_equal(count(h, "<td class=\"num\">n/a</td>"), 3);
    assert_null(strstr(h, ">0 s<"));
    gp_sbuf_free(&b);

    gp_report_json(&b, &r, &m);
    json_t *j = parse_json(gp_sbuf_str(&b));
    static const char *const nulls[] = {"queue_delay_s.mean", "queue_delay_s.p50",
                                        "queue_delay_s.max",  "jobs.jct_s.mean",
                                        "jobs.jct_s.p95",     "cost.per_job_usd.mean"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (!json_is_null(jget(j, nulls[i])))
            fail_msg("%s is not null", nulls[i]);
    json_t *q0 = json_array_get(jget(j, "queues"), 0);
    assert_true(json_is_null(jget(q0, "queue_delay_s.p50")));
    assert_true(json_is_null(jget(q0, "jobs.jct_s.mean")));
    json_decref(j);
    gp_sbuf_free(&b);

    /* one value behind them: a figure, 0 s when it is 0 */
    r.queue_delay_s.n = 1;
    s = summary_text(&r, &m);
    assert_non_null(strstr(s, "         0 s         0 s         0 s         0 s         0 s\n"));
    free(s);
}

/* Whether s has "1 WORD" for a plural WORD, as a phrase of its own. */
static const char *one_plural(const char *s)
{
    static const char *const words[] = {
        "nodes", "GPUs",  "pods",          "retries", "binds",         "members", "evictions",
        "pools", "gangs", "interruptions", "jobs",    "re-partitions", "reasons", "ones"};
    for (const char *p = s; *p; p++) {
        if (p[0] != '1' || p[1] != ' ' || (p > s && p[-1] >= '0' && p[-1] <= '9') ||
            (p > s && (p[-1] == '.' || p[-1] == ',')))
            continue;
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            size_t len = strlen(words[w]);
            char after = p[2 + len];
            if (strncmp(p + 2, words[w], len) == 0 && !(after >= 'a' && after <= 'z'))
                return words[w];
        }
    }
    return NULL;
}

/* Counts agree in number: "1 node", "1 GPU", "1 retry", in the summary
 * and the HTML report. */
static void test_plural(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    r.nodes = 1;
    r.gpus = 1;
    r.pod_retries = 1;
    r.gang_restarts = 1;
    r.gangs_never_fit = 1;
    r.preemptions = 1;
    r.preempted = 1;
    r.mig_reconfigurations = 1;
    r.oom_kills = 1;
    r.nodes_requested = 1;
    r.spot_interruptions = 1;
    r.spot_evictions = 1;
    r.spot_interruptions_missed = 1;
    struct gp_sim_queue q[1];
    memset(q, 0, sizeof q);
    q[0].name = "research";
    q[0].declared = true;
    q[0].binds = 1;
    q[0].queue_delay_s.n = 1;
    r.queues = q;
    r.nqueues = 1;
    m.cluster_spec = NULL;

    char *s = summary_text(&r, &m);
    const char *bad = one_plural(s);
    if (bad)
        fail_msg("summary says \"1 %s\":\n%s", bad, s);
    static const char *const want[] = {"1 node, 1 GPU",
                                       "1 retry",
                                       "1 member restarted",
                                       "1 bind,",
                                       "1 node requested",
                                       "1 interruption, 1 pod",
                                       "1 recorded one found no node"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(s, want[i]))
            fail_msg("summary lacks \"%s\":\n%s", want[i], s);
    free(s);

    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    const char *h = gp_sbuf_str(&b);
    if ((bad = one_plural(h)))
        fail_msg("HTML report says \"1 %s\"", bad);
    assert_non_null(strstr(h, "1 node, 1 GPU"));
    assert_non_null(strstr(h, "1 retry"));
    assert_non_null(strstr(h, "1 eviction ("));
    gp_sbuf_free(&b);

    /* and the plural where it is due */
    r.nodes = 2;
    r.gpus = 0;
    s = summary_text(&r, &m);
    assert_non_null(strstr(s, "2 nodes, 0 GPUs"));
    free(s);
}

/* The summary, the card and the JSON show the result's exact peak, not the
 * highest sample (a pod that ran between two samples counts). */
static void test_peak_exact(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    r.gpu_alloc_peak_pct = 100; /* the samples peak at 95 */
    r.gpu_alloc_peak_t_s = 1000;
    r.gpu_alloc_peak_gpus = 64;
    char *s = summary_text(&r, &m);
    assert_non_null(strstr(s, "72.4 % average, 100.0 % peak"));
    free(s);
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    assert_non_null(strstr(gp_sbuf_str(&b), "peak 100.0 %"));
    gp_sbuf_free(&b);
    gp_report_json(&b, &r, &m);
    json_t *j = parse_json(gp_sbuf_str(&b));
    assert_true(json_real_value(jget(j, "gpu_alloc.peak_pct")) == 100.0);
    assert_true(json_real_value(jget(j, "gpu_alloc.peak_t_s")) == 1000.0);
    assert_true(json_real_value(jget(j, "gpu_alloc.peak_gpus")) == 64.0);
    json_decref(j);
    gp_sbuf_free(&b);
}

/* The cost card is the whole bill (the control plane included), the total
 * the cost section adds up; cost_usd and cost.total_usd are one number. */
static void test_cost_card(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_html(&b, &r, &m);
    const char *h = gp_sbuf_str(&b);
    assert_non_null(strstr(h, "<div class=\"k\">Cost</div><div class=\"v\">$1,234.56</div>"
                              "<div class=\"n\">nodes and the control plane</div>"));
    assert_non_null(strstr(h, "Total $1,234.56, of which control plane $34.00"));
    gp_sbuf_free(&b);
}

/* Pods that can never fit are in the JSON and the HTML report too, with
 * the same words as the summary. */
static void test_nofit_outputs(void **state)
{
    (void)state;
    struct gp_sim_result r;
    struct gp_report_meta m;
    timed_result(&r, &m);
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_report_json(&b, &r, &m);
    json_t *j = parse_json(gp_sbuf_str(&b));
    assert_int_equal(json_integer_value(jget(j, "never_fit.pods")), 21);
    json_t *rows = jget(j, "never_fit.reasons");
    assert_int_equal(json_array_size(rows), 3);
    json_t *r0 = json_array_get(rows, 0), *r1 = json_array_get(rows, 1);
    assert_int_equal(json_integer_value(jget(r0, "pods")), 10);
    assert_int_equal(json_integer_value(jget(r0, "gangs")), 0);
    assert_true(json_is_null(jget(r0, "gang")));
    assert_string_equal(json_string_value(jget(r0, "resource")), "gpu-count");
    assert_int_equal(json_integer_value(jget(r0, "need")), 9);
    assert_int_equal(json_integer_value(jget(r0, "have")), 8);
    assert_string_equal(json_string_value(jget(r0, "reason")),
                        "they need 9 GPUs, the largest node has 8");
    assert_string_equal(json_string_value(jget(r1, "gang")), "pretrain");
    assert_string_equal(json_string_value(jget(r1, "resource")), "gang-gpus");
    assert_true(json_real_value(jget(r1, "need")) == 24.0);
    assert_true(json_real_value(jget(r1, "have")) == 16.0);
    assert_string_equal(json_string_value(jget(r1, "reason")),
                        "gang pretrain needs 24 GPUs in one rack, the largest rack has 16");
    json_decref(j);
    gp_sbuf_free(&b);

    gp_report_html(&b, &r, &m);
    const char *h = gp_sbuf_str(&b);
    assert_non_null(strstr(h, "<h2>Pods that can never fit</h2>"));
    assert_non_null(strstr(h, "<tr><td class=\"num\">10 pods</td><td>they need 9 GPUs, the "
                              "largest node has 8</td></tr>"));
    assert_non_null(strstr(h, "<td class=\"num\">1 gang (8 pods)</td><td>gang sweep: minMember "
                              "9 &gt; 8 members that can exist</td>"));
    assert_non_null(strstr(h, "80 running at the end; 21 pods can never fit"));
    gp_sbuf_free(&b);

    /* none: no section, an empty list */
    r.nofit = NULL;
    r.nnofit = 0;
    r.pods_never_fit = 0;
    gp_report_html(&b, &r, &m);
    assert_null(strstr(gp_sbuf_str(&b), "can never fit"));
    gp_sbuf_free(&b);
    char *sum = summary_text(&r, &m);
    assert_null(strstr(sum, "never fit"));
    free(sum);
}

/* Every kind of reason, in words and numbers. */
static void test_nofit_text(void **state)
{
    (void)state;
    static const struct {
        struct gp_sim_nofit nf;
        const char *want;
    } cases[] = {
        {{.kind = GP_SIM_NOFIT_GPUS, .need = 9, .have = 8},
         "they need 9 GPUs, the largest node has 8"},
        {{.kind = GP_SIM_NOFIT_GPUS, .need = 4, .have = 2, .narrowed = true, .scope = "T4"},
         "they need 4 GPUs, the largest T4 node has 2"},
        {{.kind = GP_SIM_NOFIT_GPUS, .need = 4, .have = 2, .narrowed = true},
         "they need 4 GPUs, the largest node they may use has 2"},
        {{.kind = GP_SIM_NOFIT_GPUS, .need = 1, .have = 0}, "they need 1 GPU, no node has a GPU"},
        {{.kind = GP_SIM_NOFIT_GPUS, .need = 2, .have = 1, .have_what = "per pod"},
         "they need 2 GPUs, a node gives one pod at most 1"},
        {{.kind = GP_SIM_NOFIT_GPUS, .need = 8, .have = 7, .what = "1g.10gb"},
         "they need 8 MIG 1g.10gb instances, the largest node holds 7"},
        {{.kind = GP_SIM_NOFIT_CPU, .need = 128000, .have = 96000},
         "they need 128 CPUs, the largest node has 96"},
        {{.kind = GP_SIM_NOFIT_CPU, .need = 1500, .have = 1000},
         "they need 1.5 CPUs, the largest node has 1"},
        {{.kind = GP_SIM_NOFIT_MEMORY, .need = 2097152, .have = 1048576},
         "they need 2 TiB of memory, the largest node has 1 TiB"},
        {{.kind = GP_SIM_NOFIT_GPU_MEMORY, .need = 98304, .have = 81920},
         "they need 96 GiB of GPU memory, the largest GPU has 80 GiB"},
        {{.kind = GP_SIM_NOFIT_SELECTOR, .what = "gpuplane.io/pool=h200", .need = 12},
         "no node matches their node selector gpuplane.io/pool=h200 (0 of 12 nodes)"},
        {{.kind = GP_SIM_NOFIT_TAINT, .what = "dedicated=infer:NoSchedule", .need = 4},
         "all 4 nodes they may use have a taint they do not tolerate (such as "
         "dedicated=infer:NoSchedule)"},
        {{.kind = GP_SIM_NOFIT_GPU_MODEL, .what = "H100-80GB", .have_what = "A100-80GB, T4"},
         "they need a H100-80GB GPU, the nodes they may use have A100-80GB, T4"},
        {{.kind = GP_SIM_NOFIT_SHARING, .what = "MIG 3g.40gb instances", .have_what = "timeslice"},
         "they ask for MIG 3g.40gb instances, the nodes they may use share GPUs as timeslice"},
        {{.kind = GP_SIM_NOFIT_TOGETHER, .cpu_milli = 64000, .mem_mib = 524288, .gpus = 8},
         "no node has 64 CPUs, 512 GiB of memory and 8 GPUs at once"},
        {{.kind = GP_SIM_NOFIT_QUOTA,
          .resource = GP_SIM_NOFIT_GPUS,
          .what = "team-a",
          .need = 16000,
          .have = 8000},
         "they need 16 GPUs, queue team-a's limit is 8 GPUs"},
        {{.kind = GP_SIM_NOFIT_GANG_GPUS, .gang = "big", .need = 24000, .have = 16000},
         "gang big needs 24 GPUs, the nodes that can take its pods have 16"},
        {{.kind = GP_SIM_NOFIT_GANG_GPUS,
          .gang = "big",
          .what = "topology.kubernetes.io/zone",
          .need = 24000,
          .have = 16000},
         "gang big needs 24 GPUs in one zone, the largest zone has 16"},
        {{.kind = GP_SIM_NOFIT_GANG_MEMBERS, .gang = "g", .need = 9, .have = 8},
         "gang g: minMember 9 > 8 members that can exist"},
        {{.kind = GP_SIM_NOFIT_GPUS, .gang = "g", .need = 9, .have = 8},
         "gang g: they need 9 GPUs, the largest node has 8"},
        {{.kind = GP_SIM_NOFIT_FILTER, .filter = GP_FILTER_NODE_STATE}, "the cluster has no node"},
    };
    char buf[640];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gp_report_nofit_text(buf, sizeof buf, &cases[i].nf);
        if (strcmp(buf, cases[i].want) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, buf, cases[i].want);
    }
    struct gp_sim_nofit one = {.kind = GP_SIM_NOFIT_GPUS, .need = 9, .have = 8, .pods = 1};
    gp_report_nofit_line(buf, sizeof buf, &one);
    assert_string_equal(buf, "1 pod can never fit: they need 9 GPUs, the largest node has 8");
    struct gp_sim_nofit gangs = {.kind = GP_SIM_NOFIT_GANG_MEMBERS,
                                 .gang = "g",
                                 .need = 2,
                                 .have = 1,
                                 .pods = 2,
                                 .gangs = 2};
    gp_report_nofit_line(buf, sizeof buf, &gangs);
    assert_string_equal(
        buf, "2 gangs (2 pods) can never start: gang g: minMember 2 > 1 member that can exist");
}

static void test_duration_format(void **state)
{
    (void)state;
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        {0, "0 s"},          {0.0001, "< 1 ms"},      {0.35, "350 ms"}, {1, "1 s"},
        {3.24, "3.2 s"},     {9.96, "10 s"},          {42.4, "42 s"},   {59.6, "1 min"},
        {250, "4 min 10 s"}, {3599.4, "59 min 59 s"}, {3600, "1 h"},    {9000, "2.5 h"},
        {86400, "24 h"},     {172800, "2 d"},         {-1, "-"},        {NAN, "-"},
        {INFINITY, "-"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gp_report_fmt_duration(buf, sizeof buf, cases[i].s);
        if (strcmp(buf, cases[i].want) != 0)
            fail_msg("duration %g: got \"%s\", want \"%s\"", cases[i].s, buf, cases[i].want);
    }
    gp_report_fmt_num(buf, sizeof buf, 72.5, 4);
    assert_string_equal(buf, "72.5");
    gp_report_fmt_num(buf, sizeof buf, 3600, 3);
    assert_string_equal(buf, "3600");
    gp_report_fmt_num(buf, sizeof buf, -0.00001, 3);
    assert_string_equal(buf, "0");
    gp_report_fmt_num(buf, sizeof buf, 1.0 / 3.0, 4);
    assert_string_equal(buf, "0.3333");
    gp_report_fmt_num(buf, sizeof buf, NAN, 4);
    assert_string_equal(buf, "");
}

/* Axis ticks step by 1, 2 or 5 x 10^k and cover the data. */
static void test_ticks(void **state)
{
    (void)state;
    struct gp_svg_ticks t;
    char buf[32];
    gp_svg_nice_ticks(0, 87, 6, false, true, &t); /* 17.4 rounds to 20; axis grows to 100 */
    assert_true(t.step == 20 && t.lo == 0 && t.hi == 100 && t.n == 6);
    gp_svg_nice_ticks(0, 24, 9, false, false, &t); /* 3 -> 5; the axis ends at 24 */
    assert_true(t.step == 5 && t.hi == 24 && t.n == 5);
    gp_svg_nice_ticks(0, 0, 6, false, true, &t); /* degenerate: 0..1 */
    assert_true(t.lo == 0 && t.hi == 1 && t.step == 0.2 && t.n == 6);
    gp_svg_fmt_tick(buf, sizeof buf, 0.6000000000000001, &t);
    assert_string_equal(buf, "0.6");
    gp_svg_nice_ticks(0, 37000, 6, false, true, &t);
    assert_true(t.step == 10000 && t.hi == 40000);
    gp_svg_fmt_tick(buf, sizeof buf, 30000, &t);
    assert_string_equal(buf, "30k");
    for (int k = 1; k < 500; k++) { /* every step is 1, 2 or 5 x 10^e and covers the range */
        double hi = k * 0.37;
        gp_svg_nice_ticks(0, hi, 6, false, true, &t);
        double e = pow(10, floor(log10(t.step)));
        double mant = t.step / e;
        assert_true(fabs(mant - 1) < 1e-9 || fabs(mant - 2) < 1e-9 || fabs(mant - 5) < 1e-9 ||
                    fabs(mant - 10) < 1e-9);
        assert_true(t.hi >= hi && t.n >= 2 && t.n <= 12);
    }
}

/* A long series is thinned per pixel column but keeps its extremes. */
static void test_svg_thinning(void **state)
{
    (void)state;
    enum { N = 100000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = i == 54321 ? 100 : (i % 7) * 0.5; /* one spike to the top */
    }
    struct gp_svg_series s = {.name = "s", .x = x, .y = y, .n = N, .color = "#000"};
    struct gp_svg_chart c = {.title = "thin", .series = &s, .nseries = 1};
    c.y = (struct gp_svg_axis){
        .label = "y", .min = 0, .max = 100, .fixed_min = true, .fixed_max = true};
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    gp_svg_line_chart(&b, &c);
    assert_false(b.oom);
    assert_true(b.len < 60000); /* ~800 columns x 4 points, not 100k points */
    /* the plot's top edge is y = 48 (the top margin): the spike reaches it */
    assert_non_null(strstr(gp_sbuf_str(&b), " 48.0L"));
    assert_int_equal(count(gp_sbuf_str(&b), "<svg"), 1);
    assert_int_equal(count(gp_sbuf_str(&b), "</svg>"), 1);
    gp_sbuf_free(&b);
    free(x);
    free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timed_golden),
        cmocka_unit_test(test_static_golden),
        cmocka_unit_test(test_summary_numbers),
        cmocka_unit_test(test_json_schema),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_html_queues),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_empty_and_nonfinite),
        cmocka_unit_test(test_stats_na),
        cmocka_unit_test(test_plural),
        cmocka_unit_test(test_peak_exact),
        cmocka_unit_test(test_cost_card),
        cmocka_unit_test(test_nofit_outputs),
        cmocka_unit_test(test_nofit_text),
        cmocka_unit_test(test_duration_format),
        cmocka_unit_test(test_ticks),
        cmocka_unit_test(test_svg_thinning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
