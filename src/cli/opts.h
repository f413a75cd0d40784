/* opts.h - the subcommands' option parser: a table of options, each a
 * flag (a bool), a string, or a custom setter, read into the command's own
 * options struct. "--name value" and "--name=value" both work; an unknown
 * option, a missing or empty value, or a value given to a flag is a usage
 * error naming the option. A custom setter with takes_value 0 gets NULL. */
#ifndef GP_CLI_OPTS_H
#define GP_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

enum gp_opt_kind {
    GP_OPT_FLAG,   /* sets the bool at offset */
    GP_OPT_STRING, /* sets the const char * at offset to the argument (borrowed) */
    GP_OPT_CUSTOM, /* calls set(opts, value, diag) */
};

struct gp_opt {
    const char *name; /* "--seed", or "-h" */
    enum gp_opt_kind kind;
    size_t offset; /* FLAG, STRING: offsetof the member in the options struct */
    enum gp_err (*set)(void *opts, const char *value, struct gp_diag *diag); /* CUSTOM */
    int takes_value; /* CUSTOM: 1 if it takes a value */
};

#define GP_OPT_FLAG_AT(name, type, member)                                                         \
    {                                                                                              \
        (name), GP_OPT_FLAG, offsetof(type, member), NULL, 0                                       \
    }
#define GP_OPT_STRING_AT(name, type, member)                                                       \
    {                                                                                              \
        (name), GP_OPT_STRING, offsetof(type, member), NULL, 1                                     \
    }
#define GP_OPT_VALUE_FN(name, fn)                                                                  \
    {                                                                                              \
        (name), GP_OPT_CUSTOM, 0, (fn), 1                                                          \
    }

/* Parses argv[1..argc) (argv[0] is the command, named in errors) into opts.
 * Besides the table, every command takes --max-input-mib N and --max-pods
 * N (they set the process-wide limits of util/fs.h and io/workload.h) and
 * --version (prints the version and exits 0). "--" ends the options; an
 * argument that is not an option, before or after it, is a usage error.
 * An unknown option's message names the nearest one ("did you mean"). */
enum gp_err gp_opts_parse(int argc, char **argv, const struct gp_opt *table, size_t n, void *opts,
                          struct gp_diag *diag);

/* Sets the default input limits, with the flags named in their messages
 * (main, before a command runs). */
void gp_opts_limits_init(void);
/* Prints the common options' help lines (each command's --help). */
void gp_opts_usage_common(FILE *f);

#endif
