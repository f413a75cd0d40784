/* fuzz_cli_opts.c - libFuzzer target for the command-line parser
 * (cli/opts.c: every kind of option, --name=value, --, the common limits,
 * "did you mean") and `gpuplane packing`'s lists (cli/packing_lists.c:
 * --seeds, --policies, --workloads). The input is the arguments, one a
 * line. Any input parses, or fails with a one-line usage error; parsed
 * seeds are distinct and within the maximum, policies are registered ones,
 * workloads exist in the fixture folder; never a crash, a hang or a leak.
 * (--version is left out: it ends the process, as it should.) */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "cli/packing.h"
#include "engine/engine.h"
#include "util/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 32

struct fuzz_opts {
    const char *cluster, *json, *seeds, *policies, *workloads;
    bool quiet, backfill, help;
    int64_t seed;
    double horizon_s;
};

static enum gp_err set_seed(void *opts, const char *v, struct gp_diag *d)
{
    struct fuzz_opts *o = opts;
    if (!gp_units_uint(v, &o->seed))
        return gp_diag_set(d, GP_EUSAGE, "--seed: expected a non-negative integer, got '%s'", v);
    return GP_OK;
}

static enum gp_err set_horizon(void *opts, const char *v, struct gp_diag *d)
{
    struct fuzz_opts *o = opts;
    if (!gp_units_duration_s(v, &o->horizon_s))
        return gp_diag_set(d, GP_EUSAGE, "--horizon: expected a duration, got '%s'", v);
    return GP_OK;
}

static const struct gp_opt table[] = {
    GP_OPT_STRING_AT("--cluster", struct fuzz_opts, cluster),
    GP_OPT_STRING_AT("--json", struct fuzz_opts, json),
    GP_OPT_STRING_AT("--seeds", struct fuzz_opts, seeds),
    GP_OPT_STRING_AT("--policies", struct fuzz_opts, policies),
    GP_OPT_STRING_AT("--workloads", struct fuzz_opts, workloads),
    GP_OPT_VALUE_FN("--seed", set_seed),
    GP_OPT_VALUE_FN("--horizon", set_horizon),
    GP_OPT_FLAG_AT("--quiet", struct fuzz_opts, quiet),
    GP_OPT_FLAG_AT("--backfill", struct fuzz_opts, backfill),
    GP_OPT_FLAG_AT("--help", struct fuzz_opts, help),
    GP_OPT_FLAG_AT("-h", struct fuzz_opts, help),
};

static void one_line(enum gp_err err, const struct gp_diag *d)
{
    if (err != GP_OK && (d->msg[0] == '\0' || strchr(d->msg, '\n')))
        __builtin_trap();
}

static void lists(const struct fuzz_opts *o)
{
    struct gp_arena a;
    struct gp_diag d = {""};
    gp_arena_init(&a);
    if (o->seeds) {
        uint64_t *seeds = NULL;
        size_t n = 0;
        enum gp_err err = gp_packing_parse_seeds(o->seeds, &a, &seeds, &n, &d);
        one_line(err, &d);
        if (err == GP_OK) {
            if (n == 0 || n > GP_PACKING_MAX_SEEDS)
                __builtin_trap();
            for (size_t i = 0; i < n && n < 2000; i++)
                for (size_t j = 0; j < i; j++)
                    if (seeds[i] == seeds[j])
                        __builtin_trap();
        }
    }
    const struct gp_policy_ops *pol[GP_PACKING_MAX_POLICIES];
    size_t np = 0;
    enum gp_err err = gp_packing_parse_policies(o->policies, &a, pol, &np, &d);
    one_line(err, &d);
    for (size_t i = 0; err == GP_OK && i < np; i++)
        if (!pol[i] || !gp_policy_find(pol[i]->name))
            __builtin_trap();
    if (o->workloads) {
        const char *wl[GP_PACKING_MAX_WORKLOADS];
        size_t nw = 0;
        err = gp_packing_parse_workloads(o->workloads, GP_FUZZ_PACKING_DIR, &a, wl, &nw, &d);
        one_line(err, &d);
        if (err == GP_OK && (nw == 0 || nw > GP_PACKING_MAX_WORKLOADS))
            __builtin_trap();
    }
    gp_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char cmd[] = "fuzz";
    char *argv[MAX_ARGS + 1] = {cmd};
    int argc = 1;
    for (char *p = text; argc < MAX_ARGS;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (strcmp(p, "--version") != 0)
            argv[argc++] = p;
        if (!nl)
            break;
        p = nl + 1;
    }
    struct fuzz_opts o;
    memset(&o, 0, sizeof o);
    struct gp_diag d = {""};
    enum gp_err err = gp_opts_parse(argc, argv, table, sizeof table / sizeof table[0], &o, &d);
    one_line(err, &d);
    if (err != GP_OK && err != GP_EUSAGE)
        __builtin_trap(); /* a command line is a usage error or nothing */
    if (err == GP_OK)
        lists(&o);
    gp_opts_limits_init(); /* --max-pods and --max-input-mib are process-wide */
    free(text);
    return 0;
}
