/* cli.h - the subcommand table and helpers shared by the subcommands. */
#ifndef GP_CLI_CLI_H
#define GP_CLI_CLI_H

#include <stddef.h>

#include "util/err.h"
#include "util/sbuf.h"

struct gp_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand; returns the exit code */
};

int gp_cmd_sim(int argc, char **argv);
int gp_cmd_packing(int argc, char **argv);
int gp_cmd_render(int argc, char **argv);

/* Writes bufs[i] to paths[i] for each i whose path is not NULL, each file
 * atomically; on any failure (a buffer out of memory, a write) removes the
 * files already written, so there are all the outputs or none. The
 * buffers stay the caller's. */
enum gp_err gp_cli_write_all(const char *const *paths, const struct gp_sbuf *bufs, size_t n,
                             struct gp_diag *d);

/* Prints "gpuplane: <msg>" to stderr and returns the exit code for err. */
int gp_cli_fail(enum gp_err err, const char *msg);

/* Prints the workload's warnings (what its manifests say and the
 * simulation does not model), "warning: <line>" each, to stderr. */
struct gp_workload;
void gp_cli_warn(const struct gp_workload *w);

/* Prints the cluster's warnings (what its file says that the catalog
 * doubts), "warning: <line>" each, to stderr. */
struct gp_cluster;
void gp_cli_warn_cluster(const struct gp_cluster *c);

/* The built-in demo's YAML, compiled in from examples/demo/. */
extern const char gp_demo_cluster_yaml[];
extern const size_t gp_demo_cluster_yaml_len;
extern const char gp_demo_workload_yaml[];
extern const size_t gp_demo_workload_yaml_len;

#endif
