/* outputs.c - a command's output files (util/output.h): checked before
 * the run, refused when they name one of its inputs, and written all new
 * or all old. One set per process: a command prepares its outputs, writes
 * them with gp_cli_write_all, and main() releases what is left. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "io/workload.h"
#include "util/output.h"

static struct gp_output_set outputs;

enum gp_err gp_cli_outputs_prepare(const char *const *flags, const char *const *paths, size_t n,
                                   struct gp_diag *d)
{
    for (size_t i = 0; i < n; i++) {
        if (!paths[i])
            continue;
        enum gp_err err = gp_output_add(&outputs, flags[i], paths[i], NULL, d);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

enum gp_err gp_cli_outputs_input(const char *flag, const char *arg, struct gp_diag *d)
{
    if (!arg)
        return GP_OK;
    return gp_output_check_input(&outputs, flag, gp_workload_arg_path(arg), gp_workload_dir_reads,
                                 d);
}

bool gp_cli_outputs_stdout(void)
{
    return gp_output_uses_fd(&outputs, 1);
}

static size_t find(const char *path)
{
    for (size_t k = 0; k < outputs.n; k++)
        if (outputs.items[k].path == path)
            return k;
    for (size_t k = 0; k < outputs.n; k++)
        if (strcmp(outputs.items[k].path, path) == 0)
            return k;
    return outputs.n;
}

enum gp_err gp_cli_write_all(const char *const *paths, const struct gp_sbuf *bufs, size_t n,
                             struct gp_diag *d)
{
    enum gp_err err = GP_OK;
    for (size_t i = 0; i < n && err == GP_OK; i++)
        if (paths[i] && bufs[i].oom)
            err = gp_diag_set(d, GP_ENOMEM, "%s: out of memory while rendering", paths[i]);
    for (size_t i = 0; i < n && err == GP_OK; i++) {
        if (!paths[i])
            continue;
        size_t k = find(paths[i]);
        if (k == outputs.n)
            err = gp_output_add(&outputs, "output", paths[i], &k, d);
        if (err == GP_OK)
            err = gp_output_put(&outputs, k, gp_sbuf_str(&bufs[i]), bufs[i].len, d);
    }
    if (err == GP_OK)
        err = gp_output_commit(&outputs, d);
    return err;
}

void gp_cli_outputs_release(void)
{
    gp_output_set_free(&outputs);
}
