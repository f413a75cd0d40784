/* opts.c - the table-driven option parser shared by the subcommands. */
#include "cli/opts.h"

#include <stdbool.h>
#include <string.h>

static const struct gp_opt *find(const struct gp_opt *table, size_t n, const char *arg, size_t len)
{
    for (size_t k = 0; k < n; k++)
        if (strlen(table[k].name) == len && strncmp(table[k].name, arg, len) == 0)
            return &table[k];
    return NULL;
}

enum gp_err gp_opts_parse(int argc, char **argv, const struct gp_opt *table, size_t n, void *opts,
                          struct gp_diag *diag)
{
    const char *cmd = argc > 0 ? argv[0] : "gpuplane";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const struct gp_opt *o = find(table, n, arg, len);
        if (!o)
            return gp_diag_set(diag, GP_EUSAGE, "%s: unknown option '%s' (see gpuplane %s --help)",
                               cmd, arg, cmd);
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
