/* cli.h - the subcommand table and helpers shared by the subcommands. */
#ifndef GP_CLI_CLI_H
#define GP_CLI_CLI_H

#include <stdbool.h>
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
int gp_cmd_providers(int argc, char **argv);
int gp_cmd_compat(int argc, char **argv);
int gp_cmd_schedule(int argc, char **argv);
int gp_cmd_plan(int argc, char **argv);
int gp_cmd_node(int argc, char **argv); /* cmd_node.c: its own subcommand table */

/* A command's outputs (outputs.c, util/output.h). prepare checks each
 * output (flags[i] names paths[i] in messages; NULL paths are skipped)
 * before the run and creates its temporary: a missing or unwritable
 * directory, a directory or block device, or two outputs naming one file
 * are usage errors. outputs_input refuses an input argument ("openb:F" is
 * the file F) that is one of the outputs, or a directory of manifests
 * holding an output it would read. */
enum gp_err gp_cli_outputs_prepare(const char *const *flags, const char *const *paths, size_t n,
                                   struct gp_diag *d);
enum gp_err gp_cli_outputs_input(const char *flag, const char *arg, struct gp_diag *d);
/* True if an output is standard output ("-", /dev/stdout). */
bool gp_cli_outputs_stdout(void);
/* Writes bufs[i] to paths[i] for each i whose path is not NULL (an output
 * not prepared is prepared now): every file or none is replaced (see
 * util/output.h). The buffers stay the caller's. */
enum gp_err gp_cli_write_all(const char *const *paths, const struct gp_sbuf *bufs, size_t n,
                             struct gp_diag *d);
/* Removes the temporaries of outputs never committed (main, at exit). */
void gp_cli_outputs_release(void);

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
