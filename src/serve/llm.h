/* llm.h - a calibrated analytical model of one LLM serving replica
 * (continuous batching): the decode step (inter-token latency) grows with
 * the running batch, ITL = a + b x batch; time to first token grows with
 * the prompt and the batch, TTFT = c + d x input_tokens x batch (the shape
 * llm-d's Workload Variant Autoscaler fits, design/modeling-
 * optimization.md). A request of I input and O output tokens stays
 * T(N) = TTFT(N) + O x ITL(N) at a running batch N; a replica offered
 * lambda requests/s runs, by Little's law, N = lambda T(N), which is linear:
 *   N = lambda (c + O a) / (1 - lambda (d I + O b)).
 * The batch is capped by max_batch and by the KV cache: kv_tokens / (I + O)
 * requests' tokens fit at once. Past the cap (or when the denominator is
 * not positive) the replica is saturated: it serves cap / T(cap)
 * requests/s and the rest queues.
 *
 * Pure. */
#ifndef GP_SERVE_LLM_H
#define GP_SERVE_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_serve_llm {
    double itl_a_s, itl_b_s;   /* ITL = a + b x batch */
    double ttft_c_s, ttft_d_s; /* TTFT = c + d x input_tokens x batch */
    uint32_t max_batch;        /* the engine's max running requests (max_num_seqs) */
    double kv_tokens;          /* tokens the KV cache holds; 0 = no limit */
};

struct gp_serve_llm_point {
    double batch;  /* running requests per replica */
    uint32_t cap;  /* the most that fit at once */
    double ttft_s; /* at that batch, without queueing */
    double itl_s;
    double e2e_s;          /* T(batch) */
    double tokens_per_s;   /* output tokens per second per replica */
    double capacity_per_s; /* requests/s one replica serves at its cap */
    bool saturated;
};

/* The batch cap for requests of in + out tokens. */
uint32_t gp_serve_llm_cap(const struct gp_serve_llm *m, double in_tokens, double out_tokens);

/* One replica at lambda requests/s of in/out tokens (means). */
struct gp_serve_llm_point gp_serve_llm_at(const struct gp_serve_llm *m, double lambda_per_s,
                                          double in_tokens, double out_tokens);

/* The LLM presets: a model on a GPU, calibrated from published figures
 * (data/serving-models.json holds each figure with its source and the
 * arithmetic; test_serve_presets checks this table against it). */
struct gp_serve_preset {
    const char *name;
    struct gp_serve_llm model;
    double in_tokens, out_tokens; /* the workload it was calibrated on */
};
extern const struct gp_serve_preset gp_serve_presets[];
extern const size_t gp_serve_npresets;
/* The preset of that name; NULL. */
const struct gp_serve_preset *gp_serve_preset_find(const char *name);

#endif
