/* study_out.h - outputs of the sharing study (src/plan/share_study.h): the
 * table printed by `gpuplane sim --compare-sharing`, its JSON document
 * (study_out.c) and its HTML page in the simulation report's style
 * (study_html.c). The study stays the caller's. */
#ifndef GP_CLI_STUDY_OUT_H
#define GP_CLI_STUDY_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "plan/share_study.h"
#include "util/sbuf.h"

#define GP_STUDY_HOURS_PER_MONTH 730.0

/* The services part (study_serve.c): per GPU pool, the fewest GPUs that
 * keep every InferenceService with a latencyLimit within it, shared by
 * time-slicing, MPS or MIG, against one replica per GPU (docs/serve.md,
 * "Dense packing"). */
struct gp_study_svc_row {
    const char *pool, *gpu_model;
    uint32_t one_per_gpu;                           /* GPUs, one replica each */
    uint32_t ts_gpus, ts_replicas, ts_infeasible;   /* the best time-slicing setting */
    uint32_t mps_gpus, mps_clients, mps_infeasible; /* the best MPS setting */
    bool has_mig;                                   /* the GPU has MIG profiles */
    uint32_t mig_gpus, mig_infeasible;              /* packed on MIG instances */
};

struct gp_study_services {
    struct gp_study_svc_row *rows; /* in the arena */
    size_t nrows;
    size_t nservices; /* packed: plain models and LLMs with a latencyLimit */
};

enum gp_err gp_study_services(const struct gp_cluster *c, const struct gp_workload *w,
                              struct gp_arena *a, struct gp_study_services *out, struct gp_diag *d);
void gp_study_services_print(FILE *f, const struct gp_study_services *s);
json_t *gp_study_services_json(const struct gp_study_services *s);
void gp_study_services_html(struct gp_sbuf *out, const struct gp_study_services *s);

/* What the study was run on, for the outputs' headers. */
struct gp_study_meta {
    const char *version;
    const char *cluster;  /* the --cluster argument */
    const char *workload; /* the first --workload argument */
    uint64_t seed;
    double horizon_s;                         /* 0: the whole timeline */
    const struct gp_study_services *services; /* NULL, or none: no services part */
};

/* "a100 timeslice x4", "a100 mig" into buf. */
const char *gp_study_label(const struct gp_study_option *o, char *buf, size_t n);

/* One service's latency in an option, in words: "chat: p99 0.412 s, over
 * its 0.200 s limit (4 replicas at 0.50x)"; an LLM's TTFT (and ITL). */
const char *gp_study_latency_text(const struct gp_study_latency *l, char *buf, size_t n);
/* The option's service closest to (or furthest past) its limit; NULL when
 * it has none. */
const struct gp_study_latency *gp_study_latency_worst(const struct gp_study_option *o);

/* The recommendation lines (the cheapest option for the work that meets
 * every latency limit, what it gives up, the cheapest with isolation, the
 * cheapest by the hour when it is another, and a cheaper option that
 * misses a limit), each a sentence, into lines[]; returns how many. */
size_t gp_study_advice(const struct gp_study *s, char lines[][512], size_t cap);

/* The table, the placement constraints, each mode's isolation and the
 * recommendations. */
void gp_study_print(FILE *f, const struct gp_study *s, const struct gp_study_meta *m);
/* The JSON document (docs/FORMATS.md, "Sharing study"). */
void gp_study_json(struct gp_sbuf *out, const struct gp_study *s, const struct gp_study_meta *m);
/* A self-contained page in the simulation report's style: the
 * recommendations, cards, bar charts of GPUs, cost and the cost of the
 * work, and the table. */
void gp_study_html(struct gp_sbuf *out, const struct gp_study *s, const struct gp_study_meta *m);

/* What `gpuplane sim --compare-sharing` was given. */
struct gp_study_args {
    const char *cluster;
    const char *const *workloads;
    size_t nworkloads;
    const char *json, *report;
    uint64_t seed;
    double horizon_s;
    bool quiet;
};

/* `gpuplane sim --compare-sharing`: loads the cluster and workloads, lays
 * out the workload's timeline (gp_sim_timeline), runs the study, writes
 * --json and --report (all or none) and prints the table; returns the exit
 * code (2 for bad input, with one line on stderr). */
int gp_cli_sharing_study(const struct gp_study_args *args);

#endif
