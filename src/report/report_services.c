/* report_services.c - the inference services of a timed run in the JSON
 * document (the `services` array: one object per service with its
 * `replicas` and `load` timelines, latency percentiles, unserved time,
 * cold starts and cost, and for LLM services `ttft_p99_s` and
 * `tokens_per_s`) and in the human summary. */
#include <math.h>

#include "report/report_fmt.h"
#include "report/report_services.h"

/* a real rounded to dec decimals; null when not finite */
static json_t *real(double x, int dec)
{
    if (!isfinite(x))
        return json_null();
    double p = pow(10.0, dec);
    double v = round(x * p) / p;
    if (!isfinite(v))
        v = x;
    if (v == 0)
        v = 0.0;
    return json_real(v);
}

static bool set(json_t *o, const char *k, json_t *v)
{
    return o && json_object_set_new(o, k, v) == 0;
}

static json_t *series(const double *v, size_t n, int dec)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, real(v[i], dec)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *one(const struct gp_sim_service *s)
{
    json_t *o = json_object();
    bool ok =
        set(o, "name", json_string(s->name ? s->name : "")) &&
        set(o, "kind", json_string(s->llm ? "llm" : "requests")) &&
        set(o, "replicas", series(s->replicas, s->n, 0)) &&
        set(o, "load", series(s->load, s->n, 4)) &&
        set(o, "p99_latency_timeline_s", series(s->p99_timeline_s, s->n, 4)) &&
        set(o, "p50_latency_s", real(s->p50_latency_s, 4)) &&
        set(o, "p95_latency_s", real(s->p95_latency_s, 4)) &&
        set(o, "p99_latency_s", real(s->p99_latency_s, 4)) &&
        set(o, "unserved_s", real(s->unserved_s, 3)) && set(o, "requests", real(s->requests, 1)) &&
        set(o, "requests_queued", real(s->requests_queued, 1)) &&
        set(o, "requests_unserved", real(s->requests_unserved, 1)) &&
        set(o, "cold_starts", json_integer((json_int_t)s->cold_starts)) &&
        set(o, "peak_replicas", json_integer(s->peak_replicas)) &&
        set(o, "gpu_hours", real(s->gpu_hours, 4)) && set(o, "cost_usd", real(s->cost_usd, 2)) &&
        set(o, s->llm ? "usd_per_million_tokens" : "usd_per_million_requests",
            real(s->usd_per_million, 4));
    if (ok && s->llm)
        ok = set(o, "ttft_p99_s", real(s->ttft_p99_s, 4)) &&
             set(o, "tokens_per_s", real(s->tokens_per_s, 2));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *gp_report_services_json(const struct gp_sim_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->nservices; i++)
        if (json_array_append_new(a, one(&r->services[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

void gp_report_services_summary(FILE *f, const struct gp_sim_result *r)
{
    if (r->nservices == 0)
        return;
    char p50[32], p99[32], un[32], num[32], cost[40];
    fprintf(f, "\n  services        %-14s %9s %9s %9s %11s %6s %10s\n", "", "p50", "p99",
            "unserved", "replicas", "cold", "cost");
    for (size_t i = 0; i < r->nservices; i++) {
        const struct gp_sim_service *s = &r->services[i];
        gp_report_fmt_duration(p50, sizeof p50, s->p50_latency_s);
        gp_report_fmt_duration(p99, sizeof p99, s->p99_latency_s);
        gp_report_fmt_duration(un, sizeof un, s->unserved_s);
        gp_report_fmt_num(num, sizeof num, s->cost_usd, 2);
        snprintf(cost, sizeof cost, "$%s", num);
        fprintf(f, "                  %-14.14s %9s %9s %9s %6s %4u %6llu %10s\n",
                s->name ? s->name : "", p50, p99, un, "peak", s->peak_replicas,
                (unsigned long long)s->cold_starts, cost);
        if (s->llm) {
            char tt[32];
            gp_report_fmt_duration(tt, sizeof tt, s->ttft_p99_s);
            gp_report_fmt_num(num, sizeof num, s->tokens_per_s, 1);
            fprintf(f, "                  %-14s TTFT p99 %s, %s tokens/s\n", "", tt, num);
        }
    }
}
