/* fgd_results.c - the reader for the FGD authors' published result tables
 * (fgd_results.h), on the shared CSV tokenizer. The header is read twice:
 * once to learn how many numbered columns there are, then through
 * gp_csv_header with the full column list, so that unknown, repeated and
 * missing columns and short rows get the tokenizer's usual messages. */
#include "io/fgd_results.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "util/fs.h"
#include "util/vec.h"

enum { COL_WORKLOAD, COL_POLICY, COL_TUNE, COL_SEED, COL_TOTAL_GPUS, COL_FIXED };

static const struct gp_csv_col fixed_cols[COL_FIXED] = {
    {"workload", true}, {"sc_policy", true}, {"tune", true}, {"seed", true}, {"total_gpus", false},
};

static const struct {
    const char *gp, *paper;
} policy_names[] = {
    {"random", "01-Random"},
    {"dot-product", "02-DotProd"},
    {"gpu-clustering", "03-GpuClustering"},
    {"gpu-packing", "04-GpuPacking"},
    {"best-fit", "05-BestFit"},
    {"fgd", "06-FGD"},
};

#define NPOLICY_NAMES (sizeof policy_names / sizeof policy_names[0])

const char *gp_fgd_paper_policy(const char *gp_name)
{
    for (size_t i = 0; gp_name && i < NPOLICY_NAMES; i++)
        if (strcmp(policy_names[i].gp, gp_name) == 0)
            return policy_names[i].paper;
    return NULL;
}

const char *gp_fgd_gp_policy(const char *paper_name)
{
    for (size_t i = 0; paper_name && i < NPOLICY_NAMES; i++)
        if (strcmp(policy_names[i].paper, paper_name) == 0)
            return policy_names[i].gp;
    return NULL;
}

/* A header field that names a value column: decimal digits only. */
static bool is_point_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* First pass: the number of value columns, i.e. the header fields made of
 * digits. Whether they are exactly 0..N-1 is checked by gp_csv_header. */
static enum gp_err count_points(const char *text, size_t len, const char *name, size_t *npoints,
                                struct gp_diag *diag)
{
    struct gp_csv c;
    gp_csv_init(&c, text, len, name);
    bool got = false;
    enum gp_err err = gp_csv_next(&c, &got, diag);
    if (err == GP_OK && !got)
        err = gp_diag_set(diag, GP_EPARSE, "%s: empty file, expected a header line", name);
    *npoints = 0;
    for (size_t i = 0; err == GP_OK && i < c.nfields; i++)
        if (is_point_name(c.fields[i]))
            (*npoints)++;
    if (err == GP_OK && *npoints == 0)
        err = gp_csv_fail(&c, GP_EPARSE, diag,
                          "expected value columns named 0, 1, 2, ... after "
                          "workload,sc_policy,tune,seed in the header");
    if (err == GP_OK && *npoints > GP_FGD_MAX_POINTS)
        err = gp_csv_fail(&c, GP_EPARSE, diag, "%zu value columns, expected at most %d", *npoints,
                          GP_FGD_MAX_POINTS);
    gp_csv_free(&c);
    return err;
}

static enum gp_err read_row(struct gp_csv *c, const int *idx, const struct gp_csv_col *cols,
                            size_t npoints, struct gp_arena *a, struct gp_fgd_row *row,
                            struct gp_diag *diag)
{
    memset(row, 0, sizeof *row);
    row->line = c->line;
    const char *wl = gp_csv_field(c, idx[COL_WORKLOAD]);
    const char *pol = gp_csv_field(c, idx[COL_POLICY]);
    if (!*wl)
        return gp_csv_bad(c, GP_EINVALID, idx[COL_WORKLOAD], "workload", "a workload name", diag);
    if (!*pol)
        return gp_csv_bad(c, GP_EINVALID, idx[COL_POLICY], "sc_policy", "a policy name", diag);
    enum gp_err err = gp_csv_number(c, idx[COL_TUNE], "tune", 0, 100, &row->tune, diag);
    if (err == GP_OK)
        err = gp_csv_int(c, idx[COL_SEED], "seed", 0, INT64_MAX, &row->seed, diag);
    row->total_gpus = -1;
    if (err == GP_OK && idx[COL_TOTAL_GPUS] >= 0)
        err =
            gp_csv_int(c, idx[COL_TOTAL_GPUS], "total_gpus", 0, INT64_MAX, &row->total_gpus, diag);
    if (err != GP_OK)
        return err;

    double *values = gp_arena_alloc(a, npoints * sizeof *values);
    row->workload = gp_arena_strdup(a, wl);
    row->policy = gp_arena_strdup(a, pol);
    if (!values || !row->workload || !row->policy)
        return gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", c->name);
    size_t plen = strlen(GP_FGD_WORKLOAD_PREFIX);
    row->workload_short =
        strncmp(row->workload, GP_FGD_WORKLOAD_PREFIX, plen) == 0 && row->workload[plen]
            ? row->workload + plen
            : row->workload;
    row->policy_gp = gp_fgd_gp_policy(row->policy);
    for (size_t x = 0; x < npoints; x++) {
        int k = idx[COL_FIXED + x];
        if (!gp_csv_field(c, k)[0]) {
            values[x] = NAN;
            continue;
        }
        err = gp_csv_number(c, k, cols[COL_FIXED + x].name, -DBL_MAX, DBL_MAX, &values[x], diag);
        if (err != GP_OK)
            return err;
    }
    row->values = values;
    return GP_OK;
}

enum gp_err gp_fgd_results_parse(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_fgd_results *out, struct gp_diag *diag)
{
    GP_VEC(struct gp_fgd_row) rows = {0};
    struct gp_csv_col *cols = NULL;
    int *idx = NULL;
    struct gp_csv c;
    gp_csv_init(&c, text, len, name);
    memset(out, 0, sizeof *out);
    size_t npoints = 0;
    enum gp_err err = count_points(text, len, name, &npoints, diag);
    if (err != GP_OK)
        goto done;

    size_t ncols = COL_FIXED + npoints;
    cols = calloc(ncols, sizeof *cols);
    idx = calloc(ncols, sizeof *idx);
    if (!cols || !idx) {
        err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
        goto done;
    }
    memcpy(cols, fixed_cols, sizeof fixed_cols);
    for (size_t x = 0; x < npoints; x++) {
        cols[COL_FIXED + x].name = gp_arena_printf(a, "%zu", x);
        cols[COL_FIXED + x].required = true;
        if (!cols[COL_FIXED + x].name) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto done;
        }
    }
    if ((err = gp_csv_header(&c, cols, ncols, 0, idx, diag)) != GP_OK)
        goto done;

    bool got;
    while ((err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        struct gp_fgd_row row;
        if ((err = read_row(&c, idx, cols, npoints, a, &row, diag)) != GP_OK)
            goto done;
        if (GP_VEC_PUSH(&rows, row) != 0) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto done;
        }
    }
    if (err != GP_OK)
        goto done;

    out->rows = rows.len ? gp_arena_memdup(a, rows.items, rows.len * sizeof *rows.items) : NULL;
    if (rows.len && !out->rows) {
        err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
        goto done;
    }
    out->source = gp_arena_strdup(a, name);
    out->nrows = rows.len;
    out->npoints = npoints;
    out->has_total_gpus = idx[COL_TOTAL_GPUS] >= 0;
done:
    if (err != GP_OK)
        memset(out, 0, sizeof *out);
    gp_csv_free(&c);
    free(cols);
    free(idx);
    GP_VEC_FREE(&rows);
    return err;
}

enum gp_err gp_fgd_results_load(const char *path, struct gp_arena *a, struct gp_fgd_results *out,
                                struct gp_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err == GP_OK)
        err = gp_fgd_results_parse(text, len, path, a, out, diag);
    free(text);
    return err;
}

size_t gp_fgd_results_stat(const struct gp_fgd_results *r, const char *workload_short,
                           const char *policy_gp, double tune, size_t x, double *mean, double *sd)
{
    *mean = NAN;
    *sd = NAN;
    if (!r || x >= r->npoints || !workload_short || !policy_gp)
        return 0;
    size_t n = 0;
    double sum = 0;
    for (size_t pass = 0; pass < 2; pass++) {
        double acc = 0;
        size_t k = 0;
        for (size_t i = 0; i < r->nrows; i++) {
            const struct gp_fgd_row *row = &r->rows[i];
            double v = row->values[x];
            if (isnan(v) || !row->policy_gp || strcmp(row->policy_gp, policy_gp) != 0 ||
                strcmp(row->workload_short, workload_short) != 0 || fabs(row->tune - tune) > 1e-9)
                continue;
            if (pass == 0)
                acc += v;
            else
                acc += (v - sum / (double)n) * (v - sum / (double)n);
            k++;
        }
        if (pass == 0) {
            n = k;
            sum = acc;
            if (n == 0)
                return 0;
            *mean = sum / (double)n;
        } else {
            *sd = n > 1 ? sqrt(acc / (double)(n - 1)) : 0;
        }
    }
    return n;
}
