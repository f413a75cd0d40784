/* cmd_plan.c - `gpuplane plan`: what to rent for a workload (docs/plan.md).
 * Reads the workload (the built-in demo's without --workload), the limits
 * and the user's offers, lays out the workload's runs, generates the
 * candidates over the catalog (plan/), simulates the survivors with the
 * simulator on the machine's cores, prints the ranked table and writes
 * the JSON, the report page and, with --out, the winner's Cluster spec
 * and its `gpuplane render` files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "io/catalog.h"
#include "io/render.h"
#include "io/workload.h"
#include "plan/plan.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/sbuf.h"
#include "util/units.h"

#define PLAN_MAX_WORKLOADS 64

struct plan_opts {
    const char *workloads[PLAN_MAX_WORKLOADS];
    size_t nworkloads;
    const char *limits, *providers, *json, *report, *out;
    double horizon_s;
    uint64_t seed;
    int64_t threads, top;
    bool quiet, no_progress, help;
};

static void plan_usage(FILE *f)
{
    fprintf(f,
            "usage: gpuplane plan [--workload FILE|DIR ...] [--limits FILE] [--providers FILE]\n"
            "                     [--json FILE] [--report FILE] [--out DIR] [options]\n"
            "\n"
            "What to rent: candidate clusters over the provider catalog's offers (GPU models,\n"
            "sharing modes, pool sizes, on-demand and spot) and plain rented instances, each\n"
            "priced by a lower bound and the survivors simulated with the workload, ranked by\n"
            "monthly cost among those that meet the limits (docs/plan.md). Without\n"
            "--workload it plans the built-in demo workload.\n"
            "\n"
            "  --workload ARG      Kubernetes manifests (a file or a directory), openb:PODS.csv\n"
            "                      or philly:JOBS.csv; repeatable\n"
            "  --limits FILE       a PlanLimits file: p95 queueing delay, monthly budget,\n"
            "                      must-haves, providers and regions to avoid, spot\n"
            "                      (docs/plan.md); default: p95 delay 15 min, no budget\n"
            "  --providers FILE    your own offers laid over the catalog (the Offers file of\n"
            "                      gpuplane providers --offers, docs/FORMATS.md)\n"
            "  --horizon DURATION  simulated time per candidate (default 24h); costs are\n"
            "                      scaled to a month of 730 h\n"
            "  --seed N            random seed of every simulation (default 1)\n"
            "  --threads N         candidates simulated at once (default: the online CPUs);\n"
            "                      the plan is the same for any N\n"
            "  --top N             rows of the table (default 10)\n"
            "  --json FILE         the plan as JSON: candidates ranked, winner\n"
            "  --report FILE       an HTML page comparing the top candidates\n"
            "  --out DIR           the winner's Cluster spec (cluster.yaml) and its gpuplane\n"
            "                      render files\n"
            "  --quiet             no table on stdout\n"
            "  --no-progress       no progress on stderr (shown only on a terminal)\n"
            "  -h, --help          this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\nexit codes: 0 a plan (even one that meets no limit), 2 bad input or usage, "
               "1 any other failure\n");
}

static enum gp_err set_workload(void *opts, const char *v, struct gp_diag *d)
{
    struct plan_opts *o = opts;
    if (o->nworkloads == PLAN_MAX_WORKLOADS)
        return gp_diag_set(d, GP_EUSAGE, "--workload: at most %d workloads", PLAN_MAX_WORKLOADS);
    o->workloads[o->nworkloads++] = v;
    return GP_OK;
}

static enum gp_err set_horizon(void *opts, const char *v, struct gp_diag *d)
{
    struct plan_opts *o = opts;
    if (!gp_units_duration_s(v, &o->horizon_s) || o->horizon_s < 60 || o->horizon_s > 366 * 86400.0)
        return gp_diag_set(d, GP_EUSAGE,
                           "--horizon: expected a duration from 1m to 366d like 24h, got '%s'", v);
    return GP_OK;
}

static enum gp_err set_uint(const char *flag, const char *v, int64_t lo, int64_t hi, int64_t *out,
                            struct gp_diag *d)
{
    if (!gp_units_uint(v, out) || *out < lo || *out > hi)
        return gp_diag_set(d, GP_EUSAGE, "%s: expected an integer from %lld to %lld, got '%s'",
                           flag, (long long)lo, (long long)hi, v);
    return GP_OK;
}

static enum gp_err set_seed(void *opts, const char *v, struct gp_diag *d)
{
    int64_t s;
    enum gp_err err = set_uint("--seed", v, 0, INT64_MAX, &s, d);
    ((struct plan_opts *)opts)->seed = (uint64_t)s;
    return err;
}

static enum gp_err set_threads(void *opts, const char *v, struct gp_diag *d)
{
    return set_uint("--threads", v, 1, 256, &((struct plan_opts *)opts)->threads, d);
}

static enum gp_err set_top(void *opts, const char *v, struct gp_diag *d)
{
    return set_uint("--top", v, 1, 100000, &((struct plan_opts *)opts)->top, d);
}

static const struct gp_opt plan_opt_table[] = {
    GP_OPT_VALUE_FN("--workload", set_workload),
    GP_OPT_STRING_AT("--limits", struct plan_opts, limits),
    GP_OPT_STRING_AT("--providers", struct plan_opts, providers),
    GP_OPT_STRING_AT("--json", struct plan_opts, json),
    GP_OPT_STRING_AT("--report", struct plan_opts, report),
    GP_OPT_STRING_AT("--out", struct plan_opts, out),
    GP_OPT_VALUE_FN("--horizon", set_horizon),
    GP_OPT_VALUE_FN("--seed", set_seed),
    GP_OPT_VALUE_FN("--threads", set_threads),
    GP_OPT_VALUE_FN("--top", set_top),
    GP_OPT_FLAG_AT("--quiet", struct plan_opts, quiet),
    GP_OPT_FLAG_AT("--no-progress", struct plan_opts, no_progress),
    GP_OPT_FLAG_AT("--help", struct plan_opts, help),
    GP_OPT_FLAG_AT("-h", struct plan_opts, help),
};

/* What every candidate's simulation shares (read only). */
struct sim_ctx {
    const struct gp_workload *w;
    struct gp_sim_config cfg;
};

static enum gp_err simulate(void *ctx, const struct gp_cluster *c, struct gp_plan_sim *out,
                            struct gp_diag *diag)
{
    const struct sim_ctx *s = ctx;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_sim_result r;
    memset(&r, 0, sizeof r);
    enum gp_err err = gp_sim_run(&s->cfg, c, s->w, &a, &r, diag);
    if (err == GP_OK) {
        memset(out, 0, sizeof *out);
        out->cost_usd = r.cost_usd;
        out->horizon_s = s->cfg.horizon_s;
        out->gpu_used_usd = r.cost.gpu_used_usd;
        out->gpu_idle_usd = r.cost.gpu_idle_usd;
        out->control_plane_usd = r.cost.control_plane_usd;
        out->other_usd = r.cost.other_usd;
        out->spot_savings_usd = r.cost.spot_savings_usd;
        out->lost_work_usd = r.cost.lost_work_usd;
        out->lost_gpu_hours = r.lost_gpu_hours;
        out->gpu_hours_total = r.gpu_hours_total;
        out->gpu_hours_idle = r.gpu_hours_idle;
        out->queue_p95_s = r.queue_delay_s.p95;
        out->queue_max_s = r.queue_delay_s.max;
        out->jct_p95_s = r.jct_s.p95;
        out->pods_submitted = r.pods_submitted;
        out->pods_scheduled = r.pods_scheduled;
        out->pods_never_fit = r.pods_never_fit;
        out->pods_pending_end = r.pods_pending_end;
        out->spot_interruptions = r.spot_interruptions;
        out->billing_rounding_usd = r.billing_rounding_usd;
        out->node_expirations = r.node_expirations;
        out->latency_p99_s = -1;
        for (size_t i = 0; i < r.nservices; i++)
            if (r.services[i].p99_latency_s > out->latency_p99_s)
                out->latency_p99_s = r.services[i].p99_latency_s;
        for (size_t i = 0; i < r.cost.npools; i++) {
            const struct gp_sim_pool_cost *pc = &r.cost.pools[i];
            if (!pc->spot)
                continue;
            out->spot_node_hours += pc->node_hours;
            out->spot_gpu_hours += pc->gpu_hours;
            out->spot_gpu_hours_used += pc->gpu_hours_used;
            out->spot_usd += pc->total_usd;
        }
    }
    gp_arena_free(&a);
    return err;
}

/* The top candidates' timelines for the report page: each simulated
 * again, its samples kept. */
static enum gp_err keep_series(struct gp_plan *p, const struct sim_ctx *sc, struct gp_arena *a,
                               struct gp_diag *d)
{
    for (size_t i = 0; i < GP_PLAN_SERIES && i < p->ncands; i++) {
        const struct gp_plan_cand *c = &p->cands[i];
        if (c->state != GP_PLAN_SIMULATED)
            break;
        struct gp_cluster cl;
        memset(&cl, 0, sizeof cl);
        struct gp_sim_result r;
        memset(&r, 0, sizeof r);
        enum gp_err err = gp_plan_cluster(p, c, 1.0, a, &cl, d);
        if (err == GP_OK)
            err = gp_sim_run(&sc->cfg, &cl, sc->w, a, &r, d);
        if (err != GP_OK)
            return err;
        struct gp_plan_series *s = &p->series[i];
        size_t n = r.nsamples;
        s->t_s = gp_arena_alloc(a, (n ? n : 1) * sizeof *s->t_s);
        s->gpu_alloc_pct = gp_arena_alloc(a, (n ? n : 1) * sizeof *s->gpu_alloc_pct);
        s->pending = gp_arena_alloc(a, (n ? n : 1) * sizeof *s->pending);
        if (!s->t_s || !s->gpu_alloc_pct || !s->pending)
            return gp_diag_set(d, GP_ENOMEM, "plan: out of memory");
        for (size_t k = 0; k < n; k++) {
            s->t_s[k] = r.samples[k].t_s;
            s->gpu_alloc_pct[k] = r.samples[k].gpu_alloc_pct;
            s->pending[k] = r.samples[k].pending;
        }
        s->n = n;
    }
    return GP_OK;
}

struct progress {
    bool on, shown;
};

static void progress_cb(void *ctx, size_t done, size_t total)
{
    struct progress *p = ctx;
    if (!p->on)
        return;
    p->shown = true;
    fprintf(stderr, "\r  planning: %zu of at most %zu candidates simulated", done, total);
    fflush(stderr);
}

static enum gp_err load_workload(const struct plan_opts *o, struct gp_arena *a,
                                 struct gp_workload *w, struct gp_diag *d)
{
    enum gp_err err = GP_OK;
    if (o->nworkloads == 0) {
        err = gp_workload_parse_manifest(gp_demo_workload_yaml, gp_demo_workload_yaml_len,
                                         "demo/workload.yaml", a, w, d);
        if (err == GP_OK)
            err = gp_workload_check_budget(w, d);
    }
    for (size_t i = 0; i < o->nworkloads && err == GP_OK; i++)
        err = gp_workload_load(o->workloads[i], a, w, d);
    if (err == GP_OK)
        err = gp_workload_finish(w, a, d);
    return err;
}

/* Every output at once (the set is committed once, all or none): --json,
 * --report, and with --out DIR the winner's spec and its render files. */
static enum gp_err write_outputs(const struct plan_opts *o, const struct gp_plan *p,
                                 const char *wname, struct gp_arena *a, struct gp_diag *d)
{
    const struct gp_plan_cand *w = p->ncands ? &p->cands[0] : NULL;
    bool out = o->out && w && w->state == GP_PLAN_SIMULATED;
    struct gp_render r;
    memset(&r, 0, sizeof r);
    enum gp_err err = GP_OK;
    if (out) {
        struct gp_cluster cl;
        memset(&cl, 0, sizeof cl);
        err = gp_plan_cluster(p, w, 1.0, a, &cl, d);
        if (err == GP_OK)
            err = gp_render_cluster(&cl, &r, d);
        if (err == GP_OK && mkdir(o->out, 0777) != 0 && errno != EEXIST)
            err = gp_diag_set(d, GP_EUSAGE, "--out %s: cannot create the directory: %s", o->out,
                              strerror(errno));
    }
    size_t n = 3 + r.nfiles;
    const char **paths = gp_arena_alloc(a, n * sizeof *paths);
    const char **flags = gp_arena_alloc(a, n * sizeof *flags);
    struct gp_sbuf *bufs = gp_arena_alloc(a, n * sizeof *bufs);
    if (err == GP_OK && (!paths || !flags || !bufs))
        err = gp_diag_set(d, GP_ENOMEM, "plan: out of memory");
    if (err != GP_OK) {
        gp_render_free(&r);
        return err;
    }
    for (size_t i = 0; i < 3; i++)
        gp_sbuf_init(&bufs[i]);
    paths[0] = o->json;
    paths[1] = o->report;
    paths[2] = out ? gp_arena_printf(a, "%s/cluster.yaml", o->out) : NULL;
    if (o->json)
        gp_plan_json(p, wname, &bufs[0]);
    if (o->report)
        gp_plan_html(p, wname, 8, &bufs[1]);
    if (out)
        gp_sbuf_add(&bufs[2], w->yaml);
    for (size_t i = 0; i < r.nfiles; i++) {
        bufs[3 + i] = r.files[i].text;
        paths[3 + i] = gp_arena_printf(a, "%s/%s", o->out, r.files[i].name);
    }
    for (size_t i = 0; i < n; i++)
        flags[i] = "--out";
    err = gp_cli_outputs_prepare(flags + 2, paths + 2, n - 2, d);
    if (err == GP_OK)
        err = gp_cli_write_all(paths, bufs, n, d);
    for (size_t i = 0; i < 3; i++)
        gp_sbuf_free(&bufs[i]);
    gp_render_free(&r);
    return err;
}

static enum gp_err run_plan(struct plan_opts *o, struct gp_arena *a, struct gp_diag *d)
{
    struct gp_plan_limits lim;
    gp_plan_limits_default(&lim);
    enum gp_err err = GP_OK;
    if (o->limits && (err = gp_plan_limits_load(o->limits, a, &lim, d)) != GP_OK)
        return err;
    int64_t today = (int64_t)(time(NULL) / 86400);
    struct gp_user_offers uo;
    memset(&uo, 0, sizeof uo);
    if (o->providers && (err = gp_catalog_offers_load(o->providers, today, a, &uo, d)) != GP_OK)
        return err;
    struct gp_catalog_row *rows;
    size_t nrows;
    if ((err = gp_catalog_rows(o->providers ? &uo : NULL, today, 365, a, &rows, &nrows, d)) !=
        GP_OK)
        return err;
    struct gp_workload w;
    memset(&w, 0, sizeof w);
    if ((err = load_workload(o, a, &w, d)) != GP_OK)
        return err;
    gp_cli_warn(&w);
    for (size_t i = 0; lim.checkpoint_s > 0 && i < w.nitems; i++)
        if (w.items[i].checkpoint_s == 0)
            w.items[i].checkpoint_s = lim.checkpoint_s;
    struct gp_sim_span *spans;
    size_t nspans;
    if ((err = gp_sim_timeline(&w, o->seed, o->horizon_s, a, &spans, &nspans, d)) != GP_OK)
        return err;
    struct gp_plan_span *ps = gp_arena_alloc(a, (nspans ? nspans : 1) * sizeof *ps);
    if (!ps)
        return gp_diag_set(d, GP_ENOMEM, "plan: out of memory");
    for (size_t i = 0; i < nspans; i++)
        ps[i] = (struct gp_plan_span){spans[i].item, spans[i].start_s, spans[i].end_s};
    struct gp_plan_demand dem;
    if ((err = gp_plan_demand(&w, ps, nspans, o->horizon_s, a, &dem, d)) != GP_OK)
        return err;
    struct gp_plan plan;
    if ((err = gp_plan_generate(&dem, &lim, rows, nrows, a, &plan, d)) != GP_OK)
        return err;
    struct sim_ctx sc = {&w, {0}};
    gp_sim_config_default(&sc.cfg);
    sc.cfg.seed = o->seed;
    sc.cfg.horizon_s = o->horizon_s;
    sc.cfg.policy = gp_policy_find("best-fit");
    struct progress prog = {!o->no_progress && isatty(STDERR_FILENO), false};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    err = gp_plan_run(&plan, (unsigned)o->threads, simulate, &sc, progress_cb, &prog, a, d);
    if (prog.shown)
        fprintf(stderr, "\r%*s\r", 70, "");
    if (err != GP_OK)
        return err;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    plan.wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (o->report && (err = keep_series(&plan, &sc, a, d)) != GP_OK)
        return err;
    const char *wname = o->nworkloads ? o->workloads[0] : "built-in demo workload";
    if ((err = write_outputs(o, &plan, wname, a, d)) != GP_OK)
        return err;
    bool won = plan.ncands && plan.cands[0].state == GP_PLAN_SIMULATED;
    if (!o->quiet) {
        struct gp_sbuf b;
        gp_sbuf_init(&b);
        gp_plan_summary(&plan, (size_t)o->top, &b);
        fputs(gp_sbuf_str(&b), stdout);
        gp_sbuf_free(&b);
        printf("\nplanned in %.2f s of wall time (%.0f candidates simulated per second)\n",
               plan.wall_s, plan.wall_s > 0 ? (double)plan.nsimulated / plan.wall_s : 0);
        if (o->out && won)
            printf("wrote %s/cluster.yaml and its render files\n", o->out);
    }
    return GP_OK;
}

int gp_cmd_plan(int argc, char **argv)
{
    struct plan_opts o;
    memset(&o, 0, sizeof o);
    o.horizon_s = 86400;
    o.seed = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    o.threads = ncpu > 0 ? (ncpu > 16 ? 16 : ncpu) : 1;
    o.top = 10;
    struct gp_diag diag = {""};
    struct gp_arena arena;
    gp_arena_init(&arena);
    enum gp_err err = gp_opts_parse(argc, argv, plan_opt_table,
                                    sizeof plan_opt_table / sizeof plan_opt_table[0], &o, &diag);
    int rc = 0;
    if (err == GP_OK && o.help) {
        plan_usage(stdout);
        goto out;
    }
    if (err == GP_OK) {
        static const char *const flags[2] = {"--json", "--report"};
        const char *paths[2] = {o.json, o.report};
        err = gp_cli_outputs_prepare(flags, paths, 2, &diag);
    }
    for (size_t i = 0; err == GP_OK && i < o.nworkloads; i++)
        err = gp_cli_outputs_input("--workload", o.workloads[i], &diag);
    if (err == GP_OK && gp_cli_outputs_stdout())
        o.quiet = true;
    if (err == GP_OK)
        err = run_plan(&o, &arena, &diag);
    if (err != GP_OK)
        rc = gp_cli_fail(err, diag.msg);
out:
    gp_arena_free(&arena);
    return rc;
}
