/* opts.c - the table-driven option parser shared by the subcommands, and
 * the options every subcommand takes (the input limits, --version, --). */
#include "cli/opts.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/workload.h"
#include "util/fs.h"
#include "util/strdist.h"
#include "util/units.h"

#define MAX_INPUT_MIB_LIMIT 1048576u         /* 1 TiB */
#define MAX_PODS_LIMIT      1000000000000ull /* 10^12 */

const char gp_opts_input_hint[] = "--max-input-mib raises it";
const char gp_opts_pods_hint[] = "--max-pods raises it";

static enum gp_err set_max_input(void *opts, const char *v, struct gp_diag *d)
{
    (void)opts;
    int64_t n;
    if (!gp_units_uint(v, &n) || n < 1 || n > (int64_t)MAX_INPUT_MIB_LIMIT)
        return gp_diag_set(d, GP_EUSAGE,
                           "--max-input-mib: expected an integer from 1 to %u (MiB), got '%s'",
                           MAX_INPUT_MIB_LIMIT, v);
    gp_fs_set_max_read((uint64_t)n << 20, gp_opts_input_hint);
    return GP_OK;
}

static enum gp_err set_max_pods(void *opts, const char *v, struct gp_diag *d)
{
    (void)opts;
    int64_t n;
    if (!gp_units_uint(v, &n) || n < 1 || (uint64_t)n > MAX_PODS_LIMIT)
        return gp_diag_set(d, GP_EUSAGE, "--max-pods: expected an integer from 1 to %llu, got '%s'",
                           (unsigned long long)MAX_PODS_LIMIT, v);
    gp_workload_set_max_pods((uint64_t)n, gp_opts_pods_hint);
    return GP_OK;
}

/* --version: prints the version and ends the program, as it would before
 * any command has started (nothing is read or written). */
static enum gp_err print_version(void *opts, const char *v, struct gp_diag *d)
{
    (void)opts, (void)v, (void)d;
    printf("gpuplane %s\n", GP_VERSION);
    exit(fflush(stdout) == 0 ? 0 : 1);
}

/* The options of every subcommand, after its own. */
static const struct gp_opt common[] = {
    GP_OPT_VALUE_FN("--max-input-mib", set_max_input),
    GP_OPT_VALUE_FN("--max-pods", set_max_pods),
    {"--version", GP_OPT_CUSTOM, 0, print_version, 0},
};
#define NCOMMON (sizeof common / sizeof common[0])

void gp_opts_limits_init(void)
{
    gp_fs_set_max_read(0, gp_opts_input_hint);
    gp_workload_set_max_pods(0, gp_opts_pods_hint);
}

void gp_opts_usage_common(FILE *f)
{
    fprintf(f,
            "limits (every command):\n"
            "  --max-input-mib N   read at most N MiB from one input file (default %llu);\n"
            "                      a larger file, or a pipe or device giving more, is an\n"
            "                      error before anything is simulated\n"
            "  --max-pods N        a workload (sim, plan, packing) may make at most N pods\n"
            "                      (default %u), counted before any is made: replicas,\n"
            "                      completions or parallelism, plus backoffLimit retries\n"
            "                      when pods can fail, times sim.gpuplane.io/repeat\n"
            "  --version           print the version and exit\n"
            "  --                  ends the options (no command takes other arguments)\n",
            (unsigned long long)(GP_FS_MAX_READ_DEFAULT >> 20), GP_WORKLOAD_MAX_PODS_DEFAULT);
}

static const struct gp_opt *find(const struct gp_opt *table, size_t n, const char *arg, size_t len)
{
    for (size_t k = 0; k < n; k++)
        if (strlen(table[k].name) == len && strncmp(table[k].name, arg, len) == 0)
            return &table[k];
    return NULL;
}

/* "unknown option", with the nearest option the command takes when one is
 * close (an edit distance, or the only option that starts with it). */
static enum gp_err unknown(const char *cmd, const char *arg, size_t len, const struct gp_opt *table,
                           size_t n, struct gp_diag *d)
{
    char key[GP_STRDIST_MAX + 1];
    snprintf(key, sizeof key, "%.*s", (int)(len < GP_STRDIST_MAX ? len : GP_STRDIST_MAX), arg);
    const char *best = NULL, *prefixed = NULL;
    unsigned best_d = ~0u;
    size_t nprefixed = 0;
    for (size_t k = 0; k < n + NCOMMON; k++) {
        const char *name = k < n ? table[k].name : common[k - n].name;
        unsigned dist = gp_strdist(key, name);
        if (dist < best_d) {
            best_d = dist;
            best = name;
        }
        if (len >= 3 && strncmp(name, arg, len) == 0) {
            prefixed = name;
            nprefixed++;
        }
    }
    const char *hint = best && gp_strdist_close(key, best_d) ? best
                       : nprefixed == 1                      ? prefixed
                                                             : NULL;
    if (hint)
        return gp_diag_set(d, GP_EUSAGE,
                           "%s: unknown option '%s'; did you mean '%s'? (see gpuplane %s --help)",
                           cmd, arg, hint, cmd);
    return gp_diag_set(d, GP_EUSAGE, "%s: unknown option '%s' (see gpuplane %s --help)", cmd, arg,
                       cmd);
}

enum gp_err gp_opts_parse(int argc, char **argv, const struct gp_opt *table, size_t n, void *opts,
                          struct gp_diag *diag)
{
    const char *cmd = argc > 0 ? argv[0] : "gpuplane";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            if (i + 1 < argc)
                return gp_diag_set(diag, GP_EUSAGE,
                                   "%s: unexpected argument '%s' after '--' (gpuplane %s takes "
                                   "options only; see gpuplane %s --help)",
                                   cmd, argv[i + 1], cmd, cmd);
            return GP_OK;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            return gp_diag_set(diag, GP_EUSAGE,
                               "%s: unexpected argument '%s' (gpuplane %s takes options only, "
                               "like --cluster FILE; see gpuplane %s --help)",
                               cmd, arg, cmd, cmd);
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const struct gp_opt *o = find(table, n, arg, len);
        if (!o)
            o = find(common, NCOMMON, arg, len);
        if (!o)
            return unknown(cmd, arg, len, table, n, diag);
        const char *value = NULL;
        if (o->takes_value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return gp_diag_set(diag, GP_EUSAGE, "%s: option '%s' needs a value", cmd, o->name);
            if (!*value)
                return gp_diag_set(diag, GP_EUSAGE, "%s: option '%s' needs a non-empty value", cmd,
                                   o->name);
        } else if (eq) {
            return gp_diag_set(diag, GP_EUSAGE, "%s: option '%s' takes no value", cmd, o->name);
        }
        switch (o->kind) {
        case GP_OPT_FLAG:
            *(bool *)((char *)opts + o->offset) = true;
            break;
        case GP_OPT_STRING:
            *(const char **)((char *)opts + o->offset) = value;
            break;
        case GP_OPT_CUSTOM: {
            enum gp_err err = o->set(opts, value, diag);
            if (err != GP_OK)
                return err;
            break;
        }
        }
    }
    return GP_OK;
}
