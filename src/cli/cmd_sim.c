/* cmd_sim.c - `gpuplane sim`: load a cluster and workloads (or the built-in
 * demo), run the simulator, print the summary and write the requested
 * outputs. All input is read and checked before anything is written, and
 * each output file appears whole or not at all. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/sim_replay.h"
#include "cli/study_out.h"
#include "engine/engine.h"
#include "io/cluster.h"
#include "io/philly_vc.h"
#include "io/workload.h"
#include "report/report.h"
#include "sim/sim.h"
#include "util/arena.h"
#include "util/fs.h"
#include "util/sbuf.h"
#include "util/units.h"

#define GP_SIM_MAX_WORKLOADS 64
#define GP_DEMO_REPORT       "gpuplane-report.html"
#define MAX_HORIZON_S        (3650.0 * 86400.0) /* ten years of simulated time */

struct sim_opts {
    const char *cluster;
    const char *workloads[GP_SIM_MAX_WORKLOADS];
    size_t nworkloads;
    const char *policy;
    uint64_t seed;
    enum gp_sim_mode mode;
    double inflate;
    double horizon_s;
    double sample_s;
    enum gp_order order;
    bool backfill;
    bool vc_queues;
    const char *vc_sizes;
    const char *json, *csv, *report;
    bool compare_sharing;
    const char *replay; /* --replay FILE: a live scheduler's event log */
    bool quiet, no_progress, help;
};

static void sim_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane sim [--cluster FILE] [--workload FILE|DIR ...] [--policy NAME]\n"
               "                    [--seed N] [--mode timed|static] [--json FILE] [--csv FILE]\n"
               "                    [--report FILE] [options]\n"
               "\n"
               "Replays a workload on a cluster with gpuplane's scheduling engine and reports\n"
               "allocation, queueing delay, node- and GPU-hours. With no arguments it runs the\n"
               "built-in demo (a mixed cluster, inference services and a stream of batch and\n"
               "training jobs over one day) and writes " GP_DEMO_REPORT " into the current\n"
               "directory when that is writable.\n"
               "\n"
               "inputs:\n"
               "  --cluster FILE      cluster spec: a gpuplane Cluster YAML, or openb:NODES.csv,\n"
               "                      or philly:MACHINES (docs/FORMATS.md)\n"
               "  --workload ARG      Kubernetes manifests (a YAML/JSON file or a directory of\n"
               "                      them), openb:PODS.csv or philly:JOBS.csv; repeatable\n"
               "engine:\n"
               "  --policy NAME       placement policy (default best-fit):\n");
    for (size_t i = 0; gp_policies[i]; i++)
        fprintf(f, "                        %-15s %s\n", gp_policies[i]->name,
                gp_policies[i]->summary);
    fprintf(f, "  --seed N            random seed (default 1); same inputs and seed give\n"
               "                      byte-identical JSON and CSV\n"
               "  --order ORDER       timed: the order pending pods are tried in:\n"
               "                        fair  fair share between queues, priority then age\n"
               "                              inside; a pod that does not fit is skipped\n"
               "                              (default)\n"
               "                        fifo  the oldest pod of the cluster first\n"
               "                        sjf   the shortest expected run first\n"
               "                      fifo and sjf are strict: a pod that does not fit holds\n"
               "                      up the pods behind it\n"
               "  --backfill          timed: EASY backfilling - the first pod that does not fit\n"
               "                      reserves the room it will get, and pods behind it go\n"
               "                      only if they do not delay it (docs/simulator.md)\n"
               "  --vc-queues         one queue per virtual cluster (Philly) or queue name the\n"
               "                      workload's pods carry, weight 1, no quota\n"
               "  --vc-sizes FILE     with --vc-queues: VC sizes as the CSV \"vc,node num\"\n"
               "                      (Helios' philly_vc.csv): each listed VC is capped at its\n"
               "                      nodes x 8 GPUs and weighted by its node count\n"
               "simulation:\n"
               "  --mode MODE         timed (default): pods arrive, run and finish;\n"
               "                      static: the FGD packing experiment (pods arrive one at a\n"
               "                      time in a shuffled order and never leave)\n"
               "  --horizon DURATION  timed: simulated time, e.g. 24h, at most 3650d (default:\n"
               "                      until done)\n"
               "  --sample DURATION   timed: metrics interval, 1s to 3650d and at most 10 million\n"
               "                      samples in a run (default: horizon/288)\n"
               "  --inflate X         static: resample pods until their GPU request is X times\n"
               "                      the cluster's GPUs, 0 < X <= 100 (default 1.3)\n"
               "outputs (FILE '-' is standard output; a symlink is written through, a FIFO or\n"
               "device such as /dev/null written in place; all are checked before the run and\n"
               "replaced all together or not at all):\n"
               "  --json FILE         results as JSON (schema in docs/FORMATS.md)\n"
               "  --csv FILE          the timeline as CSV (static mode: the packing curve)\n"
               "  --report FILE       a self-contained HTML report with charts\n"
               "  --compare-sharing   the renter's question instead of a replay: for each GPU\n"
               "                      pool of --cluster, the nodes, GPUs and cost the workload\n"
               "                      needs with exclusive GPUs, time-slicing, MPS and MIG at\n"
               "                      the peak of what runs at once (drawn with --seed, up to\n"
               "                      --horizon), the cost of its work and what each gives up\n"
               "                      (docs/sharing.md); replay options are refused\n"
               "  --replay FILE       a `gpuplane schedule --record` event log instead: the\n"
               "                      same engine calls in the same order, the decisions\n"
               "                      compared with the recorded ones (exit 0 identical, 1\n"
               "                      different, 2 bad input; only --quiet goes with it)\n"
               "  --quiet             no summary on stdout\n"
               "  --no-progress       no progress bar (shown only on a terminal, once a run has\n"
               "                      taken GPUPLANE_PROGRESS_DELAY seconds, default 1)\n"
               "  -h, --help          this help\n");
    gp_opts_usage_common(f);
    fprintf(f, "\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n");
}

static enum gp_err set_workload(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (o->nworkloads == GP_SIM_MAX_WORKLOADS)
        return gp_diag_set(d, GP_EUSAGE, "--workload: at most %d workloads", GP_SIM_MAX_WORKLOADS);
    o->workloads[o->nworkloads++] = v;
    return GP_OK;
}

static enum gp_err set_policy(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (!gp_policy_find(v)) {
        char names[256] = "";
        for (size_t i = 0; gp_policies[i]; i++) {
            if (i)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, gp_policies[i]->name, sizeof names - strlen(names) - 1);
        }
        return gp_diag_set(d, GP_EUSAGE, "--policy: unknown policy '%s' (expected one of: %s)", v,
                           names);
    }
    o->policy = v;
    return GP_OK;
}

static enum gp_err set_seed(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    int64_t seed;
    if (!gp_units_uint(v, &seed))
        return gp_diag_set(d, GP_EUSAGE, "--seed: expected a non-negative integer, got '%s'", v);
    o->seed = (uint64_t)seed;
    return GP_OK;
}

static enum gp_err set_mode(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (strcmp(v, "timed") == 0)
        o->mode = GP_SIM_TIMED;
    else if (strcmp(v, "static") == 0)
        o->mode = GP_SIM_STATIC;
    else
        return gp_diag_set(d, GP_EUSAGE, "--mode: expected 'timed' or 'static', got '%s'", v);
    return GP_OK;
}

static enum gp_err set_inflate(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (!gp_units_number(v, &o->inflate) || o->inflate <= 0 || o->inflate > 100)
        return gp_diag_set(d, GP_EUSAGE,
                           "--inflate: expected a number greater than 0 and at most 100 (e.g. "
                           "1.3), got '%s'",
                           v);
    return GP_OK;
}

static enum gp_err set_horizon(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (!gp_units_duration_s(v, &o->horizon_s) || o->horizon_s <= 0 || o->horizon_s > MAX_HORIZON_S)
        return gp_diag_set(d, GP_EUSAGE,
                           "--horizon: expected a positive duration of at most 3650d (ten years) "
                           "like 24h or 90m, got '%s'",
                           v);
    return GP_OK;
}

static enum gp_err set_sample(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (!gp_units_duration_s(v, &o->sample_s) || !(o->sample_s >= 1) || o->sample_s > MAX_HORIZON_S)
        return gp_diag_set(d, GP_EUSAGE,
                           "--sample: expected a duration from 1s to 3650d like 5m, got '%s'", v);
    return GP_OK;
}

static enum gp_err set_order(void *opts, const char *v, struct gp_diag *d)
{
    struct sim_opts *o = opts;
    if (strcmp(v, "fair") == 0)
        o->order = GP_ORDER_FAIR;
    else if (strcmp(v, "fifo") == 0)
        o->order = GP_ORDER_FIFO;
    else if (strcmp(v, "sjf") == 0)
        o->order = GP_ORDER_SJF;
    else
        return gp_diag_set(d, GP_EUSAGE, "--order: expected 'fair', 'fifo' or 'sjf', got '%s'", v);
    return GP_OK;
}

static const struct gp_opt sim_opt_table[] = {
    GP_OPT_STRING_AT("--cluster", struct sim_opts, cluster),
    GP_OPT_VALUE_FN("--workload", set_workload),
    GP_OPT_VALUE_FN("--policy", set_policy),
    GP_OPT_VALUE_FN("--seed", set_seed),
    GP_OPT_VALUE_FN("--mode", set_mode),
    GP_OPT_VALUE_FN("--inflate", set_inflate),
    GP_OPT_VALUE_FN("--horizon", set_horizon),
    GP_OPT_VALUE_FN("--sample", set_sample),
    GP_OPT_VALUE_FN("--order", set_order),
    GP_OPT_FLAG_AT("--backfill", struct sim_opts, backfill),
    GP_OPT_FLAG_AT("--vc-queues", struct sim_opts, vc_queues),
    GP_OPT_STRING_AT("--vc-sizes", struct sim_opts, vc_sizes),
    GP_OPT_STRING_AT("--json", struct sim_opts, json),
    GP_OPT_STRING_AT("--csv", struct sim_opts, csv),
    GP_OPT_STRING_AT("--report", struct sim_opts, report),
    GP_OPT_FLAG_AT("--compare-sharing", struct sim_opts, compare_sharing),
    GP_OPT_STRING_AT("--replay", struct sim_opts, replay),
    GP_OPT_FLAG_AT("--quiet", struct sim_opts, quiet),
    GP_OPT_FLAG_AT("--no-progress", struct sim_opts, no_progress),
    GP_OPT_FLAG_AT("--help", struct sim_opts, help),
    GP_OPT_FLAG_AT("-h", struct sim_opts, help),
};

/* The first option on the command line that --compare-sharing would
 * ignore (it sizes pools for the workload's timeline; it replays nothing),
 * with why; NULL when none. */
static const char *study_ignored(int argc, char **argv, const char **why)
{
    static const struct {
        const char *name, *why;
    } ignored[] = {
        {"--policy", "it packs every option with best-fit"},
        {"--mode", "it lays out the timed workload's timeline"},
        {"--inflate", "it lays out the timed workload's timeline"},
        {"--order", "no pod waits for another there"},
        {"--backfill", "no pod waits for another there"},
        {"--vc-queues", "queues play no part in it"},
        {"--vc-sizes", "queues play no part in it"},
        {"--sample", "it samples no timeline"},
        {"--csv", "it writes no timeline"},
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        for (size_t k = 0; k < sizeof ignored / sizeof ignored[0]; k++) {
            size_t len = strlen(ignored[k].name);
            if (strncmp(argv[i], ignored[k].name, len) == 0 &&
                (argv[i][len] == '\0' || argv[i][len] == '=')) {
                *why = ignored[k].why;
                return ignored[k].name;
            }
        }
    }
    return NULL;
}

/* The progress bar: on a terminal only, and only once a run has taken more
 * than a second. */
struct progress {
    struct timespec start;
    double delay_s; /* 1 s, or GPUPLANE_PROGRESS_DELAY (seconds; tests use 0) */
    bool shown;
};

static double elapsed_s(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

static void progress_cb(void *ctx, double fraction)
{
    struct progress *p = ctx;
    if (!p->shown && elapsed_s(&p->start) < p->delay_s)
        return;
    p->shown = true;
    int width = 40, filled = (int)(fraction * width + 0.5);
    if (filled > width)
        filled = width;
    fprintf(stderr, "\r  simulating [%.*s%*s] %3d%%", filled,
            "########################################", width - filled, "",
            (int)(fraction * 100 + 0.5));
    fflush(stderr);
}

/* Writes every requested output; on any failure removes the ones already
 * written, so a run leaves all of its outputs or none. */
static enum gp_err write_outputs(const struct sim_opts *o, const struct gp_sim_result *r,
                                 const struct gp_report_meta *m, struct gp_diag *d)
{
    const char *paths[3] = {o->json, o->csv, o->report};
    struct gp_sbuf buf[3];
    for (int i = 0; i < 3; i++)
        gp_sbuf_init(&buf[i]);
    if (o->json)
        gp_report_json(&buf[0], r, m);
    if (o->csv)
        gp_report_csv(&buf[1], r);
    if (o->report)
        gp_report_html(&buf[2], r, m);
    enum gp_err err = gp_cli_write_all(paths, buf, 3, d);
    for (int i = 0; i < 3; i++)
        gp_sbuf_free(&buf[i]);
    return err;
}

/* Checks every output before anything is read or run (util/output.h),
 * and that none of them is one of the inputs. */
static enum gp_err prepare_outputs(const struct sim_opts *o, struct gp_diag *d)
{
    static const char *const flags[3] = {"--json", "--csv", "--report"};
    const char *paths[3] = {o->json, o->csv, o->report};
    enum gp_err err = gp_cli_outputs_prepare(flags, paths, 3, d);
    if (err == GP_OK)
        err = gp_cli_outputs_input("--cluster", o->cluster, d);
    for (size_t i = 0; i < o->nworkloads && err == GP_OK; i++)
        err = gp_cli_outputs_input("--workload", o->workloads[i], d);
    if (err == GP_OK)
        err = gp_cli_outputs_input("--vc-sizes", o->vc_sizes, d);
    return err;
}

/* The demo's report, when no output is asked for, goes to the current
 * directory if it is writable; *note says what happened. */
static void demo_report(struct sim_opts *o, char *note, size_t cap)
{
    static const char *const flag = "--report";
    const char *path = GP_DEMO_REPORT;
    struct gp_diag d = {""};
    char cwd[1024];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    if (gp_cli_outputs_prepare(&flag, &path, 1, &d) == GP_OK) {
        o->report = GP_DEMO_REPORT;
        snprintf(note, cap,
                 "wrote %s in the current directory (%s); --report FILE puts it elsewhere",
                 GP_DEMO_REPORT, cwd);
    } else {
        snprintf(note, cap,
                 "no report written: the current directory (%s) is not writable; --report FILE "
                 "writes it elsewhere",
                 cwd);
    }
}

int gp_cmd_sim(int argc, char **argv)
{
    struct sim_opts o;
    memset(&o, 0, sizeof o);
    o.policy = "best-fit";
    o.seed = 1;
    o.mode = GP_SIM_TIMED;
    o.inflate = 1.3;
    struct gp_diag diag = {""};
    struct gp_arena arena;
    gp_arena_init(&arena);
    struct gp_cluster cluster;
    struct gp_workload workload;
    struct gp_sim_result result;
    memset(&cluster, 0, sizeof cluster);
    memset(&workload, 0, sizeof workload);
    memset(&result, 0, sizeof result);
    int rc = 0;

    enum gp_err err = gp_opts_parse(argc, argv, sim_opt_table,
                                    sizeof sim_opt_table / sizeof sim_opt_table[0], &o, &diag);
    if (err != GP_OK)
        goto fail;
    if (o.help) {
        sim_usage(stdout);
        goto out;
    }
    if (o.replay) { /* the log holds the engine's every input: nothing else is read */
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "--") == 0)
                break;
            if (argv[i][0] == '-' && strncmp(argv[i], "--replay", 8) != 0 &&
                strcmp(argv[i], "--quiet") != 0 &&
                (i == 1 || strcmp(argv[i - 1], "--replay") != 0)) {
                err = gp_diag_set(&diag, GP_EUSAGE,
                                  "sim: --replay does not go with %.100s (the log holds the "
                                  "engine's every input; only --quiet goes with it)",
                                  argv[i]);
                goto fail;
            }
        }
        rc = gp_cli_sim_replay(o.replay, o.quiet);
        goto out;
    }
    if (o.compare_sharing) {
        const char *why, *flag = study_ignored(argc, argv, &why);
        if (flag) {
            err = gp_diag_set(&diag, GP_EUSAGE,
                              "sim: --compare-sharing does not use %s (%s; it reads --cluster, "
                              "--workload, --seed, --horizon, --json, --report and --quiet)",
                              flag, why);
            goto fail;
        }
        if ((err = prepare_outputs(&o, &diag)) != GP_OK)
            goto fail;
        struct gp_study_args sa = {
            o.cluster, o.workloads, o.nworkloads, o.json,
            o.report,  o.seed,      o.horizon_s,  o.quiet || gp_cli_outputs_stdout()};
        rc = gp_cli_sharing_study(&sa);
        goto out;
    }
    bool demo = !o.cluster && o.nworkloads == 0;
    if (!demo && !o.cluster) {
        err = gp_diag_set(&diag, GP_EUSAGE, "sim: --workload needs --cluster too");
        goto fail;
    }
    if (!demo && o.nworkloads == 0) {
        err = gp_diag_set(&diag, GP_EUSAGE, "sim: --cluster needs at least one --workload");
        goto fail;
    }
    if (o.vc_sizes && !o.vc_queues) {
        err = gp_diag_set(&diag, GP_EUSAGE, "sim: --vc-sizes needs --vc-queues");
        goto fail;
    }
    if (o.horizon_s > 0 && o.sample_s > 0 && o.horizon_s / o.sample_s + 2 > GP_SIM_MAX_SAMPLES) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "--sample: %g s over the --horizon of %g s is more than %d samples; "
                          "choose a longer interval",
                          o.sample_s, o.horizon_s, GP_SIM_MAX_SAMPLES);
        goto fail;
    }
    if ((err = prepare_outputs(&o, &diag)) != GP_OK)
        goto fail;
    char demo_note[1200] = "";
    if (demo && !o.report && !o.json && !o.csv)
        demo_report(&o, demo_note, sizeof demo_note);
    if (gp_cli_outputs_stdout())
        o.quiet = true; /* stdout carries an output */
    if (demo) {
        err = gp_cluster_parse_yaml(gp_demo_cluster_yaml, gp_demo_cluster_yaml_len,
                                    "demo/cluster.yaml", &arena, &cluster, &diag);
        if (err == GP_OK)
            err = gp_cluster_expand(&cluster, &arena, &diag);
        if (err == GP_OK)
            err = gp_workload_parse_manifest(gp_demo_workload_yaml, gp_demo_workload_yaml_len,
                                             "demo/workload.yaml", &arena, &workload, &diag);
        if (err == GP_OK)
            err = gp_workload_check_budget(&workload, &diag);
        if (err != GP_OK)
            goto fail;
        o.workloads[o.nworkloads++] = "built-in demo workload";
        if (o.horizon_s == 0)
            o.horizon_s = 86400;
    } else {
        if ((err = gp_cluster_load(o.cluster, &arena, &cluster, &diag)) != GP_OK)
            goto fail;
        workload.static_only = o.mode == GP_SIM_STATIC; /* traces keep what it reads */
        gp_cli_warn_cluster(&cluster);
        for (size_t i = 0; i < o.nworkloads; i++)
            if ((err = gp_workload_load(o.workloads[i], &arena, &workload, &diag)) != GP_OK)
                goto fail;
    }
    if ((err = gp_workload_finish(&workload, &arena, &diag)) != GP_OK)
        goto fail;
    gp_cli_warn(&workload);
    if (o.vc_queues) {
        char *text = NULL;
        size_t len = 0;
        if (o.vc_sizes && (err = gp_fs_read(o.vc_sizes, &text, &len, &diag)) != GP_OK)
            goto fail;
        err = gp_philly_vc_queues(&workload, text, len, o.vc_sizes, &arena, &diag);
        free(text);
        if (err != GP_OK)
            goto fail;
    }
    bool can_grow = false; /* pools that start empty may scale up */
    for (size_t i = 0; i < cluster.npools; i++)
        can_grow |= gp_pool_is_dynamic(&cluster.pools[i]) && cluster.pools[i].max_count > 0;
    if (cluster.nnodes == 0 && !can_grow) {
        err = gp_diag_set(&diag, GP_EINVALID, "%s: the cluster has no nodes",
                          demo ? "demo/cluster.yaml" : o.cluster);
        goto fail;
    }

    struct gp_sim_config cfg;
    gp_sim_config_default(&cfg);
    cfg.mode = o.mode;
    cfg.policy = gp_policy_find(o.policy);
    cfg.seed = o.seed;
    cfg.inflate = o.inflate;
    cfg.horizon_s = o.horizon_s;
    cfg.sample_s = o.sample_s;
    cfg.order = o.order;
    cfg.backfill = o.backfill;
    struct progress prog;
    clock_gettime(CLOCK_MONOTONIC, &prog.start);
    prog.shown = false;
    const char *delay = getenv("GPUPLANE_PROGRESS_DELAY");
    if (!delay || !gp_units_number(delay, &prog.delay_s) || prog.delay_s < 0)
        prog.delay_s = 1.0;
    if (!o.no_progress && isatty(STDERR_FILENO)) {
        cfg.progress = progress_cb;
        cfg.progress_ctx = &prog;
    }
    err = gp_sim_run(&cfg, &cluster, &workload, &arena, &result, &diag);
    if (prog.shown)
        fprintf(stderr, "\r%*s\r", 60, "");
    if (err != GP_OK)
        goto fail;
    double wall_s = elapsed_s(&prog.start);

    struct gp_report_meta meta = {
        .version = GP_VERSION,
        .cluster = demo ? "built-in demo cluster" : o.cluster,
        .workloads = o.workloads,
        .nworkloads = o.nworkloads,
        .cluster_spec = &cluster,
    };
    if ((err = write_outputs(&o, &result, &meta, &diag)) != GP_OK)
        goto fail;
    if (!o.quiet) {
        gp_report_summary(stdout, &result, &meta);
        printf("\nsimulated in %.2f s of wall time\n", wall_s);
        const char *outs[3] = {o.json, o.csv, demo_note[0] ? NULL : o.report};
        for (int i = 0; i < 3; i++)
            if (outs[i])
                printf("wrote %s\n", outs[i]);
        if (demo_note[0])
            printf("%s\n", demo_note);
    }
    goto out;
fail:
    rc = gp_cli_fail(err, diag.msg);
out:
    gp_arena_free(&arena);
    return rc;
}
