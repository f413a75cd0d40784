/* llm.c - one LLM replica's batch, latencies and throughput at a request
 * rate (the linear model of llm.h). */
#include <math.h>

#include "serve/llm.h"

uint32_t gp_serve_llm_cap(const struct gp_serve_llm *m, double in_tokens, double out_tokens)
{
    double cap = m->max_batch ? m->max_batch : 256;
    double per = in_tokens + out_tokens;
    if (m->kv_tokens > 0 && per > 0) {
        double kv = floor(m->kv_tokens / per);
        if (kv < cap)
            cap = kv;
    }
    return cap < 1 ? 1 : (uint32_t)cap;
}

static double t_of(const struct gp_serve_llm *m, double n, double in, double out, double *ttft,
                   double *itl)
{
    *ttft = m->ttft_c_s + m->ttft_d_s * in * n;
    *itl = m->itl_a_s + m->itl_b_s * n;
    return *ttft + out * *itl;
}

struct gp_serve_llm_point gp_serve_llm_at(const struct gp_serve_llm *m, double lambda_per_s,
                                          double in_tokens, double out_tokens)
{
    struct gp_serve_llm_point p = {0};
    p.cap = gp_serve_llm_cap(m, in_tokens, out_tokens);
    double ttft, itl;
    double tcap = t_of(m, p.cap, in_tokens, out_tokens, &ttft, &itl);
    p.capacity_per_s = tcap > 0 ? p.cap / tcap : INFINITY;
    double lam = lambda_per_s > 0 ? lambda_per_s : 0;
    double den = 1.0 - lam * (m->ttft_d_s * in_tokens + out_tokens * m->itl_b_s);
    double n = den > 0 ? lam * (m->ttft_c_s + out_tokens * m->itl_a_s) / den : INFINITY;
    if (!(n <= p.cap)) {
        p.saturated = true;
        n = p.cap;
    }
    /* a lone request still runs at batch 1 */
    double at = n < 1 ? 1 : n;
    p.batch = n;
    p.e2e_s = t_of(m, at, in_tokens, out_tokens, &p.ttft_s, &p.itl_s);
    double served = p.saturated ? p.capacity_per_s : lam;
    p.tokens_per_s = served * out_tokens;
    return p;
}
