/* err.c - error names, exit codes and diagnostics. */
#include "util/err.h"

#include <stdio.h>

const char *gp_strerror(enum gp_err err)
{
    static const char *const names[] = {
#define GP_ERR_STR(name, msg, code) msg,
        GP_ERRORS(GP_ERR_STR)
#undef GP_ERR_STR
    };
    if ((unsigned)err >= GP_E_COUNT)
        return "unknown error";
    return names[err];
}

int gp_err_exit_code(enum gp_err err)
{
    static const int codes[] = {
#define GP_ERR_CODE(name, msg, code) code,
        GP_ERRORS(GP_ERR_CODE)
#undef GP_ERR_CODE
    };
    if ((unsigned)err >= GP_E_COUNT)
        return 1;
    return codes[err];
}

enum gp_err gp_diag_vset(struct gp_diag *diag, enum gp_err err, const char *fmt, va_list ap)
{
    if (diag)
        vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
    return err;
}

enum gp_err gp_diag_set(struct gp_diag *diag, enum gp_err err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gp_diag_vset(diag, err, fmt, ap);
    va_end(ap);
    return err;
}
