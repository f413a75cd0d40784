/* cli.h - the subcommand table and helpers shared by the subcommands. */
#ifndef GP_CLI_CLI_H
#define GP_CLI_CLI_H

#include "util/err.h"

struct gp_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand; returns the exit code */
};

int gp_cmd_sim(int argc, char **argv);
int gp_cmd_packing(int argc, char **argv);
int gp_cmd_render(int argc, char **argv);

/* Prints "gpuplane: <msg>" to stderr and returns the exit code for err. */
int gp_cli_fail(enum gp_err err, const char *msg);

/* The built-in demo's YAML, compiled in from examples/demo/. */
extern const char gp_demo_cluster_yaml[];
extern const size_t gp_demo_cluster_yaml_len;
extern const char gp_demo_workload_yaml[];
extern const size_t gp_demo_workload_yaml_len;

#endif
