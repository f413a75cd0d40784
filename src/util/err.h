/* err.h - the project's one error enum (an X-macro), gp_strerror, and a
 * diagnostic buffer that carries the one-line message for the user. */
#ifndef GP_UTIL_ERR_H
#define GP_UTIL_ERR_H

#include <stdarg.h>

/* X(name, message, exit code). Exit code 2 is "bad input or usage". */
#define GP_ERRORS(X)                                                                               \
    X(OK, "success", 0)                                                                            \
    X(NOMEM, "out of memory", 1)                                                                   \
    X(IO, "input/output error", 1)                                                                 \
    X(NOTFOUND, "file not found", 2)                                                               \
    X(PARSE, "syntax error", 2)                                                                    \
    X(INVALID, "invalid input", 2)                                                                 \
    X(USAGE, "usage error", 2)                                                                     \
    X(UNSUPPORTED, "not supported", 2)                                                             \
    X(LIMIT, "limit exceeded", 1)                                                                  \
    X(STATE, "invalid state", 1)

enum gp_err {
#define GP_ERR_ENUM(name, msg, code) GP_E##name,
    GP_ERRORS(GP_ERR_ENUM)
#undef GP_ERR_ENUM
        GP_E_COUNT
};

#define GP_OK GP_EOK

const char *gp_strerror(enum gp_err err);
/* The process exit code for an error: 0 for GP_OK, 2 for bad input, else 1. */
int gp_err_exit_code(enum gp_err err);

/* A one-line diagnostic, e.g. "cluster.yaml:12:5: nodePools[0].count: expected a
 * non-negative integer, got \"-3\"". Callers own it, usually on the stack. */
struct gp_diag {
    char msg[512];
};

/* Formats into diag (if not NULL) and returns err, so that a caller can write
 * `return gp_diag_set(d, GP_EPARSE, "%s:%d: ...", ...)`. */
enum gp_err gp_diag_set(struct gp_diag *diag, enum gp_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum gp_err gp_diag_vset(struct gp_diag *diag, enum gp_err err, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
