/* main.c - gpuplane's entry point: a table of subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "io/cluster.h"
#include "io/workload.h"

static const struct gp_cmd commands[] = {
    {"sim", "replay a workload on a cluster with the scheduling engine (no arguments: a demo)",
     gp_cmd_sim},
    {"packing", "the FGD paper's static packing experiment on the openb trace, beside its numbers",
     gp_cmd_packing},
    {"render", "the NVIDIA device plugin, MIG and node-label configs of a cluster's GPU sharing",
     gp_cmd_render},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuplane <command> [options]\n"
               "\n"
               "GPU scheduling for Kubernetes on rented GPU clouds.\n"
               "\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n"
               "options:\n"
               "  -h, --help     show this help; `gpuplane <command> --help` for a command\n"
               "  --version      print the version\n"
               "\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n"
               "Start with `gpuplane sim`: it runs a built-in demo and writes "
               "gpuplane-report.html.\n");
}

int gp_cli_fail(enum gp_err err, const char *msg)
{
    fprintf(stderr, "gpuplane: %s\n", msg && *msg ? msg : gp_strerror(err));
    return gp_err_exit_code(err);
}

void gp_cli_warn(const struct gp_workload *w)
{
    for (size_t i = 0; i < w->nwarnings; i++)
        fprintf(stderr, "warning: %s\n", w->warnings[i]);
}

void gp_cli_warn_cluster(const struct gp_cluster *c)
{
    for (size_t i = 0; i < c->nwarnings; i++)
        fprintf(stderr, "warning: %s\n", c->warnings[i]);
}

int main(int argc, char **argv)
{
    gp_opts_limits_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("gpuplane %s\n", GP_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            gp_cli_outputs_release();
            return rc;
        }
    fprintf(stderr, "gpuplane: unknown command '%s' (see gpuplane --help)\n", name);
    return 2;
}
