/* spot_times.c - a spot pool's recorded interruption times, one per line
 * (spot_times.h). The text is walked line by line in place, so a line of
 * any length is one line (a fixed line buffer used to split long ones). */
#include "io/spot_times.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/vec.h"

#define MAX_TOKEN 64 /* the longest time worth parsing: longer is never one */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

enum gp_err gp_spot_times_parse(const char *text, size_t len, const char *name, double max_time_s,
                                size_t max_times, struct gp_arena *a, const double **times,
                                size_t *n, struct gp_diag *diag)
{
    enum gp_err err = GP_OK;
    GP_VEC(double) t = {0};
    unsigned long lineno = 0;
    *times = NULL;
    *n = 0;
    for (size_t at = 0; at < len && err == GP_OK;) {
        const char *line = text + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - line) : len - at;
        at += ll + (nl != NULL);
        lineno++;
        if (memchr(line, '\0', ll)) {
            err = gp_diag_set(diag, GP_EINVALID, "%s:%lu: a NUL byte; expected text", name, lineno);
            break;
        }
        const char *hash = memchr(line, '#', ll);
        size_t end = hash ? (size_t)(hash - line) : ll, b = 0;
        while (b < end && blank(line[b]))
            b++;
        while (end > b && blank(line[end - 1]))
            end--;
        if (b == end)
            continue;
        char tok[MAX_TOKEN + 1];
        size_t tl = end - b;
        double d = 0;
        bool ok = tl <= MAX_TOKEN;
        if (ok) {
            memcpy(tok, line + b, tl);
            tok[tl] = '\0';
            ok = gp_units_duration_s(tok, &d) && d <= max_time_s;
        }
        if (!ok)
            err = gp_diag_set(diag, GP_EINVALID,
                              "%s:%lu: expected a time from the start like 3600, 90m or 2h30m, "
                              "got \"%.40s\"",
                              name, lineno, tl <= MAX_TOKEN ? tok : line + b);
        else if (t.len >= max_times)
            err = gp_diag_set(diag, GP_ELIMIT, "%s: more than %zu times", name, max_times);
        else if (GP_VEC_PUSH(&t, d) != 0)
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
    }
    if (err == GP_OK && t.len > 0) {
        qsort(t.items, t.len, sizeof *t.items, cmp_double);
        double *copy = gp_arena_memdup(a, t.items, t.len * sizeof *t.items);
        *times = copy;
        *n = t.len;
        if (!copy)
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
    }
    GP_VEC_FREE(&t);
    return err;
}
