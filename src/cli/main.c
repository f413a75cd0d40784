/* main.c - gpuplane's entry point: a table of subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "util/strdist.h"

static const struct gp_cmd commands[] = {
    {"sim", "replay a workload on a cluster with the scheduling engine (no arguments: a demo)",
     gp_cmd_sim},
    {"packing", "the FGD paper's static packing experiment on the openb trace, beside its numbers",
     gp_cmd_packing},
    {"render", "the NVIDIA device plugin, MIG and node-label configs of a cluster's GPU sharing",
     gp_cmd_render},
    {"providers", "the GPU clouds of the catalog and their offers, with dated prices",
     gp_cmd_providers},
    {"compat", "whether a CUDA version or image runs on an NVIDIA driver, and why", gp_cmd_compat},
    {"schedule", "schedule a Kubernetes cluster's pods with the engine (schedulerName: gpuplane)",
     gp_cmd_schedule},
    {"plan", "what to rent: candidate clusters over the catalog, simulated and ranked by cost",
     gp_cmd_plan},
    {"node", "the node agent: doctor, labels, CDI spec (run on a GPU node)", gp_cmd_node},
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
               "  -h, --help     show this help; `gpuplane help <command>` or\n"
               "                 `gpuplane <command> --help` for a command\n"
               "  --version      print the version (also `gpuplane <command> --version`)\n"
               "\n"
               "exit codes: 0 success, 2 bad input or usage, 1 any other failure\n"
               "Start with `gpuplane sim`: it runs a built-in demo and writes "
               "gpuplane-report.html\n"
               "into the current directory when that is writable.\n");
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

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct gp_cmd *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    unsigned dist;
    size_t k = gp_strdist_nearest(name, commands, NCOMMANDS, sizeof commands[0], &dist);
    if (gp_strdist_close(name, dist))
        fprintf(stderr,
                "gpuplane: unknown command '%s'; did you mean '%s'? (see gpuplane --help)\n", name,
                commands[k].name);
    else
        fprintf(stderr, "gpuplane: unknown command '%s' (see gpuplane --help)\n", name);
    return 2;
}

static int run(const struct gp_cmd *c, int argc, char **argv)
{
    int rc = c->run(argc, argv);
    gp_cli_outputs_release();
    return rc;
}

int main(int argc, char **argv)
{
    gp_opts_limits_init();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 && argc > 2) { /* gpuplane help SUB: SUB --help */
        const struct gp_cmd *c = find_command(argv[2]);
        if (!c)
            return unknown_command(argv[2]);
        if (argc > 3) {
            fprintf(stderr, "gpuplane: help takes one command name, got '%s' after it\n", argv[3]);
            return 2;
        }
        static char help_flag[] = "--help";
        char *help_argv[] = {argv[2], help_flag, NULL};
        return run(c, 2, help_argv);
    }
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("gpuplane %s\n", GP_VERSION);
        return 0;
    }
    const struct gp_cmd *c = find_command(name);
    if (!c)
        return unknown_command(name);
    return run(c, argc - 1, argv + 1);
}
