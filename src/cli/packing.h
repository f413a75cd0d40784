/* packing.h - `gpuplane packing`, the FGD paper's static packing experiment
 * as a matrix of workloads x policies x seeds: what cmd_packing.c computes
 * and packing_out.c writes (the text table, Markdown, JSON and the HTML
 * report). Internal to cli/. Everything in struct gp_packing is owned by
 * cmd_packing.c; the writers only read it. */
#ifndef GP_CLI_PACKING_H
#define GP_CLI_PACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "io/cluster.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/sbuf.h"

/* The lists of the command line (packing_lists.c): at most this many
 * names or seeds; a workload NAME is the file PREFIX NAME.csv of --data. */
#define GP_PACKING_MAX_WORKLOADS   64
#define GP_PACKING_MAX_POLICIES    32
#define GP_PACKING_MAX_SEEDS       10000
#define GP_PACKING_POD_FILE_PREFIX "openb_pod_list_"

/* --workloads: "all" (the paper's 17) or names split at commas into out
 * (at most GP_PACKING_MAX_WORKLOADS); each must name a readable file of
 * dir. --policies: NULL (the paper's six), "all" (those, then every other
 * registered one) or names. --seeds: ranges and single seeds, "42-51",
 * "42,43,50-51", in the order given (*out in the arena). A name or seed
 * listed twice, an empty one, an unknown one: GP_EUSAGE naming the flag. */
enum gp_err gp_packing_parse_workloads(const char *arg, const char *dir, struct gp_arena *a,
                                       const char **out, size_t *n, struct gp_diag *d);
enum gp_err gp_packing_parse_policies(const char *arg, struct gp_arena *a,
                                      const struct gp_policy_ops **out, size_t *n,
                                      struct gp_diag *d);
enum gp_err gp_packing_parse_seeds(const char *arg, struct gp_arena *a, uint64_t **out, size_t *n,
                                   struct gp_diag *d);

/* A cell whose mean is further than this from the paper's is marked. */
#define GP_PACKING_OFF_PTS 1.0

/* One simulation: a (workload, policy, seed). */
struct gp_packing_cell {
    double at100_pct; /* unallocated GPU % at 100 % arrived */
    uint64_t pods_submitted, pods_failed;
    uint64_t gpus; /* of the cluster it ran on (a sample's, with --node-sample) */
};

/* One (workload, policy) over the seeds, beside the published runs. */
struct gp_packing_sum {
    size_t n;
    double mean, sd; /* ours; sd is the sample standard deviation (n - 1) */
    size_t paper_n;  /* published runs of this cell; 0 = none */
    double paper_mean, paper_sd;
    double diff; /* mean - paper_mean in points; NaN without the paper */
    bool off;    /* |diff| > GP_PACKING_OFF_PTS */
};

/* The lower bound of one workload, over the seeds (docs/bound.md). */
struct gp_packing_bound {
    bool have;
    double pct;       /* mean unallocated % over the seeds; NaN without one */
    const char *note; /* why there is none, e.g. "not available" */
    /* false when on some seed the pods the bound leaves out (no GPU
     * request) ask for more cpu or memory than its placement leaves free:
     * the bound may then say little (gp_bound_result.informative) */
    bool informative;
    /* means over the seeds, % of the cluster's cpu and memory: what those
     * pods ask for, and what the bound's placement leaves free */
    double left_cpu_pct, free_cpu_pct, left_mem_pct, free_mem_pct;
};

struct gp_packing {
    /* the experiment */
    const char *data_dir;
    const char *cluster_path;
    const char *expected_path;    /* the published table read, or NULL */
    const char *const *workloads; /* short names, "default" */
    size_t nworkloads;
    const struct gp_policy_ops *const *policies;
    size_t npolicies;
    const uint64_t *seeds;
    size_t nseeds;
    double inflate;
    double cpu_scale;      /* every node's CPU times this (1 = as in the trace) */
    double node_sample;    /* each seed runs on this fraction of the nodes (1 = all) */
    uint32_t nodes;        /* of the whole cluster */
    uint32_t sample_nodes; /* per seed: nodes when node_sample is 1 */
    uint64_t gpus;         /* of the whole cluster */
    /* results, filled by the run */
    size_t npoints;                  /* curve points: x = 0 .. npoints - 1 (% arrived) */
    struct gp_packing_cell *cells;   /* [(w * npolicies + p) * nseeds + s] */
    double *curves;                  /* [cell * npoints + x], unallocated %; NaN = none */
    struct gp_packing_sum *sums;     /* [w * npolicies + p] */
    double *mean_curves;             /* [(w * npolicies + p) * npoints + x] */
    double *paper_curves;            /* same shape, the published mean; NaN = none */
    struct gp_packing_bound *bounds; /* per workload (packing_bound in cmd_packing.c) */
};

/* The text table for stdout. */
void gp_packing_print(FILE *f, const struct gp_packing *pk);
/* The same table as Markdown, for docs. */
void gp_packing_markdown(struct gp_sbuf *b, const struct gp_packing *pk);
/* Every cell and every summary as JSON (stable: no clock, no paths other
 * than the inputs given). b->oom or GP_ENOMEM on allocation failure. */
enum gp_err gp_packing_json(struct gp_sbuf *b, const struct gp_packing *pk, struct gp_diag *diag);
/* One self-contained HTML page: the table and a chart per workload. */
void gp_packing_html(struct gp_sbuf *b, const struct gp_packing *pk);

/* The cluster a seed runs on: base with every node's (and pool's) CPU
 * times cpu_scale, rounded to the milli, and, when node_sample < 1, only
 * gp_packing_sample_size of its nodes, drawn uniformly with the seed and
 * kept in file order. Node specs are copied into a; their strings, labels
 * and taints stay base's. */
enum gp_err gp_packing_cluster(const struct gp_cluster *base, double cpu_scale, double node_sample,
                               uint64_t seed, struct gp_arena *a, struct gp_cluster *out,
                               struct gp_diag *d);
/* round(node_sample x nnodes), at least 1; nnodes when node_sample >= 1. */
size_t gp_packing_sample_size(size_t nnodes, double node_sample);

/* Seeds as ranges: "42-51", "1,3,7-9". */
void gp_packing_fmt_seeds(char *buf, size_t n, const uint64_t *seeds, size_t nseeds);

#endif
