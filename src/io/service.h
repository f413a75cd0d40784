/* service.h - inference services as the manifest reader produces them: a
 * gpuplane.io/v1 InferenceService names the Deployment whose pods are its
 * replicas and says how each replica serves (requests/s at its GPU share,
 * or an LLM model), the load offered (constant, diurnal, spikes, a CSV
 * series, or a request trace such as Azure's LLM inference trace), the
 * cold start of a new replica, and the autoscaler that sets the replica
 * count (the HPA, or a Knative-style concurrency autoscaler with scale to
 * zero). Format: docs/serve.md; the reader is io/manifest_service.c.
 * Everything lives in the workload's arena. */
#ifndef GP_IO_SERVICE_H
#define GP_IO_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/workload.h"
#include "serve/hpa.h"
#include "serve/kpa.h"
#include "serve/llm.h"
#include "serve/rollout.h"

enum gp_load_kind {
    GP_LOAD_CONSTANT, /* rps */
    GP_LOAD_DIURNAL,  /* rps x (1 + amplitude cos(2 pi (t - peak) / period)) */
    GP_LOAD_SPIKES,   /* rps, and spike_rps more for length_s every every_s from first_s */
    GP_LOAD_SERIES,   /* a CSV t_s,rps: each rate held until the next row */
    GP_LOAD_TRACE,    /* a request trace, in bins of step_s: requests and their tokens */
};

struct gp_load {
    enum gp_load_kind kind;
    double rps;
    double amplitude, peak_s, period_s;
    double spike_rps, every_s, length_s, first_s;
    double scale; /* series and trace: the rates multiplied by it (1) */
    /* series: rows (t_s ascending, rps), the first at 0 or later (0 before) */
    double *series_t, *series_rps;
    size_t nseries;
    /* trace: bin i covers [i step_s, (i + 1) step_s): its requests and
     * their tokens; after the last bin the load is 0 */
    double step_s;
    size_t nbins;
    double *bin_req, *bin_in, *bin_out; /* requests, and the sums of their tokens */
    uint64_t trace_requests;
};

/* One rolling update: when the Deployment's template changes, and the
 * strategy it carries from then on (serve/rollout.h). */
#define GP_SERVICE_MAX_ROLLOUTS 32 /* GP_DEPLOY_MAX_RS - 1 */
struct gp_service_rollout {
    double at_s;
    struct gp_rollout_value max_surge, max_unavailable;
};

enum gp_scaler_kind { GP_SCALER_NONE, GP_SCALER_HPA, GP_SCALER_CONCURRENCY };

/* The HPA's metric: per pod, the load spread over the ready replicas. */
enum gp_hpa_metric {
    GP_HPA_UTILIZATION, /* percent of the replica's capacity (target 70) */
    GP_HPA_RPS,         /* requests/s per pod (an averageValue) */
    GP_HPA_CONCURRENCY, /* requests in flight per pod */
};

struct gp_service {
    const char *name;
    const char *source;     /* "file:line" */
    const char *deployment; /* the Deployment whose pods serve it */
    bool llm;
    double rps_per_replica; /* plain: requests/s one replica serves alone on its share */
    struct gp_serve_llm model;
    double in_tokens, out_tokens; /* LLM: mean tokens when the load gives none */
    const char *preset;           /* the LLM preset used, or NULL */
    bool has_cold_start;
    struct gp_dist cold_start; /* model load once the pod runs (0 when absent) */
    struct gp_load load;
    enum gp_scaler_kind scaler;
    enum gp_hpa_metric hpa_metric;
    struct gp_hpa_spec hpa;
    struct gp_kpa_spec kpa;
    double sync_s; /* the autoscaler's period: 15 s (HPA), 2 s (concurrency), 15 s without */
    /* the p99 latency it must stay within (0: none): dense packing and the
     * sharing study (docs/serve.md, "Dense packing") */
    double latency_limit_s;
    /* rolling updates of the Deployment (a new image or model version),
     * in increasing time (spec.rollouts, or spec.rollout as one) */
    struct gp_service_rollout *rollouts;
    size_t nrollouts;
};

/* The mean load offered over [t0_s, t1_s) in requests/s; a trace also
 * gives the mean tokens of those requests (*in, *out set only when it has
 * some; others leave them). */
double gp_load_mean(const struct gp_load *l, double t0_s, double t1_s, double *in, double *out);

/* The highest load offered (requests/s): a diurnal load's crest, a
 * spike's top, a series' highest row; a trace's highest mean over the
 * windows of window_s from its start. */
double gp_load_peak(const struct gp_load *l, double window_s);

/* Reads a request trace in the Azure LLM inference trace's format
 * (TIMESTAMP,ContextTokens,GeneratedTokens; the timestamp "YYYY-MM-DD
 * HH:MM:SS.fffffff", times taken from the first row) into bins of step_s. */
enum gp_err gp_load_parse_trace(const char *text, size_t len, const char *name, double step_s,
                                struct gp_arena *a, struct gp_load *out, struct gp_diag *diag);
/* Reads a series "t_s,rps" (a header row t_s,rps; rows in increasing t,
 * each rate held until the next row). */
enum gp_err gp_load_parse_series(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_load *out, struct gp_diag *diag);

/* Appends one service (copied) to w. */
enum gp_err gp_workload_add_service(struct gp_workload *w, struct gp_arena *a,
                                    const struct gp_service *s);

#endif
