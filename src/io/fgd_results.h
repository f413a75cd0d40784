/* fgd_results.h - a reader for the result tables the FGD authors published
 * with their simulator (hkust-adsl/kubernetes-scheduler-simulator,
 * experiments/analysis/expected_results/): analysis_allo_discrete.csv and its
 * siblings, copied to ../shared/data/fgd-expected-results/.
 *
 * Format: a CSV header `workload,sc_policy,tune,seed[,total_gpus],0,1,...,N`
 * (the numbered columns in any order, but exactly 0..N, N >= 0), then one row
 * per run, e.g.
 *   openb_pod_list_default,06-FGD,1.3,42,6212,0.25,0.99,...
 * Column X holds the metric when the arrived GPU request reached X % of the
 * cluster's GPUs (for analysis_allo_discrete.csv: allocation %, so the paper's
 * "unallocated GPU %" is 100 - value). An empty value cell reads as NaN
 * (no sample); any other value must be a finite number.
 *
 * Also here: the mapping between the paper's names and gpuplane's (policy
 * "06-FGD" is `fgd`, workload "openb_pod_list_default" is `default`), and
 * the mean and sample standard deviation over the runs of one cell. */
#ifndef GP_IO_FGD_RESULTS_H
#define GP_IO_FGD_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

/* The prefix of the paper's workload names, after which the openb file
 * name's variant follows ("openb_pod_list_" + "default"). */
#define GP_FGD_WORKLOAD_PREFIX "openb_pod_list_"

/* The most value columns a table may have (x = 0 .. 10000 %). */
#define GP_FGD_MAX_POINTS 10001

struct gp_fgd_row {
    const char *workload;       /* as in the file: "openb_pod_list_default" */
    const char *workload_short; /* without GP_FGD_WORKLOAD_PREFIX: "default" */
    const char *policy;         /* as in the file: "06-FGD" */
    const char *policy_gp;      /* gpuplane's policy name ("fgd"), or NULL if unknown */
    double tune;                /* the inflation factor, 1.3 */
    int64_t seed;
    int64_t total_gpus;   /* -1 when the file has no total_gpus column */
    const double *values; /* npoints values, values[x] for column x; NaN = empty */
    unsigned long line;   /* line of the row in the file, for messages */
};

struct gp_fgd_results {
    const char *source; /* the name given to the reader */
    struct gp_fgd_row *rows;
    size_t nrows;
    size_t npoints; /* value columns: x = 0 .. npoints - 1 */
    bool has_total_gpus;
};

/* Parses a whole table; text is borrowed (need not be NUL-terminated), name
 * is used in messages. Every string and array of *out lives in arena a.
 * Errors (GP_EPARSE, GP_EINVALID, GP_ENOMEM) name "NAME:LINE" and the column,
 * e.g. `allo.csv:7: column 'seed': expected an integer 0..2^53, got "x"`.
 * An input with a header and no rows is valid (nrows 0). */
enum gp_err gp_fgd_results_parse(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_fgd_results *out, struct gp_diag *diag);

/* Reads the file at path and parses it (GP_ENOTFOUND when it is missing). */
enum gp_err gp_fgd_results_load(const char *path, struct gp_arena *a, struct gp_fgd_results *out,
                                struct gp_diag *diag);

/* The paper's policy name for a gpuplane policy ("fgd" -> "06-FGD"), or
 * NULL when the paper has no such policy. */
const char *gp_fgd_paper_policy(const char *gp_name);
/* gpuplane's policy name for a paper name ("06-FGD" -> "fgd"), or NULL. */
const char *gp_fgd_gp_policy(const char *paper_name);

/* Mean and sample standard deviation (n - 1 in the denominator; 0 for a
 * single run) of column x over the rows whose workload_short, policy_gp and
 * tune (within 1e-9) match; rows whose value is NaN are left out. Returns
 * the number of rows used; *mean and *sd are NaN when it is 0. */
size_t gp_fgd_results_stat(const struct gp_fgd_results *r, const char *workload_short,
                           const char *policy_gp, double tune, size_t x, double *mean, double *sd);

#endif
