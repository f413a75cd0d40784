/* report.c - the simulator's text outputs: the human summary, the JSON
 * document (schema in docs/FORMATS.md, "Simulation output") and the CSV
 * timeline, plus the formatting helpers of report_fmt.h. Everything here is
 * a function of the result and the meta alone, so a run's output is
 * byte-identical from one invocation to the next. */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report/report_fmt.h"
#include "report/report_services.h"

/* ---- formatting helpers ------------------------------------------------ */

void gp_report_fmt_num(char *buf, size_t n, double x, int maxdec)
{
    if (n == 0)
        return;
    buf[0] = '\0';
    if (!isfinite(x))
        return;
    if (maxdec < 0)
        maxdec = 0;
    if (maxdec > 9)
        maxdec = 9;
    if (fabs(x) >= 1e15) {
        snprintf(buf, n, "%.15g", x);
        return;
    }
    snprintf(buf, n, "%.*f", maxdec, x);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf);
        while (end > dot + 1 && end[-1] == '0')
            *--end = '\0';
        if (end == dot + 1)
            *dot = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        snprintf(buf, n, "0");
}

void gp_report_fmt_duration(char *buf, size_t n, double s)
{
    char num[64];

    if (n == 0)
        return;
    if (!isfinite(s) || s < 0) {
        snprintf(buf, n, "-");
    } else if (s == 0) {
        snprintf(buf, n, "0 s");
    } else if (s < 0.0005) {
        snprintf(buf, n, "< 1 ms");
    } else if (s < 0.9995) {
        snprintf(buf, n, "%.0f ms", s * 1000.0);
    } else if (s < 9.95) {
        gp_report_fmt_num(num, sizeof num, s, 1);
        snprintf(buf, n, "%s s", num);
    } else if (s < 59.5) {
        snprintf(buf, n, "%.0f s", s);
    } else if (s < 3599.5) {
        long total = lround(s);
        long min = total / 60, sec = total % 60;
        if (sec == 0)
            snprintf(buf, n, "%ld min", min);
        else
            snprintf(buf, n, "%ld min %ld s", min, sec);
    } else if (s < 47.95 * 3600.0) {
        gp_report_fmt_num(num, sizeof num, s / 3600.0, 1);
        snprintf(buf, n, "%s h", num);
    } else {
        gp_report_fmt_num(num, sizeof num, s / 86400.0, 1);
        snprintf(buf, n, "%s d", num);
    }
}

void gp_report_fmt_stat(char *buf, size_t n, const struct gp_sim_stats *st, double v)
{
    if (st->n == 0)
        snprintf(buf, n, "n/a");
    else
        gp_report_fmt_duration(buf, n, v);
}

const char *gp_report_plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static double finite_or0(double x)
{
    return isfinite(x) ? x : 0.0;
}

double gp_report_gpu_avg_pct(const struct gp_sim_result *r)
{
    double total = finite_or0(r->gpu_hours_total);
    if (total > 0)
        return 100.0 * finite_or0(r->gpu_hours_allocated) / total;
    if (!r->samples || r->nsamples == 0)
        return 0.0;
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < r->nsamples; i++) {
        if (isfinite(r->samples[i].gpu_alloc_pct)) {
            sum += r->samples[i].gpu_alloc_pct;
            n++;
        }
    }
    return n ? sum / (double)n : 0.0;
}

double gp_report_gpu_peak_pct(const struct gp_sim_result *r)
{
    return finite_or0(r->gpu_alloc_peak_pct);
}

double gp_report_gpu_idle_pct(const struct gp_sim_result *r)
{
    double total = finite_or0(r->gpu_hours_total);
    if (total <= 0)
        return 0.0;
    return 100.0 * finite_or0(r->gpu_hours_idle) / total;
}

double gp_report_static_final_pct(const struct gp_sim_result *r, double *arrived_pct)
{
    if (arrived_pct)
        *arrived_pct = 0;
    if (!r->curve || r->ncurve == 0)
        return 0.0;
    const struct gp_sim_point *p = &r->curve[r->ncurve - 1];
    if (arrived_pct)
        *arrived_pct = finite_or0(p->arrived_pct);
    return finite_or0(p->unallocated_pct);
}

size_t gp_report_top_reasons(const struct gp_sim_result *r, enum gp_filter *order)
{
    size_t n = 0;
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        order[n++] = (enum gp_filter)f;
    /* insertion sort: stable, so equal counts keep the filter order */
    for (size_t i = 1; i < n; i++) {
        enum gp_filter f = order[i];
        size_t j = i;
        while (j > 0 && r->unschedulable[order[j - 1]] < r->unschedulable[f]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = f;
    }
    size_t nonzero = 0;
    while (nonzero < n && r->unschedulable[order[nonzero]] > 0)
        nonzero++;
    return nonzero;
}

const char *gp_report_reason_text(const struct gp_sim_result *r, enum gp_filter f)
{
    if (f == GP_FILTER_DRIVER && r->unschedulable_driver[0])
        return r->unschedulable_driver;
    return gp_filter_text(f);
}

/* ---- summary ------------------------------------------------------------ */

#define LABEL_W           16 /* width of the label column */
#define MAX_POOLS_SHOWN   8
#define MAX_REASONS_SHOWN 5

static const char *str_or(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

static void line_label(FILE *f, const char *label)
{
    fprintf(f, "  %-*s", LABEL_W, label);
}

static void summary_cluster(FILE *f, const struct gp_sim_result *r, const struct gp_report_meta *m)
{
    line_label(f, "cluster");
    fprintf(f, "%s: %" PRIu32 " %s, %" PRIu64 " %s\n", str_or(m ? m->cluster : NULL, "(unnamed)"),
            r->nodes, gp_report_plural(r->nodes, "node", "nodes"), r->gpus,
            gp_report_plural(r->gpus, "GPU", "GPUs"));
    const struct gp_cluster *c = m ? m->cluster_spec : NULL;
    if (!c || !c->pools)
        return;
    int namew = 4;
    size_t shown = c->npools < MAX_POOLS_SHOWN ? c->npools : MAX_POOLS_SHOWN;
    for (size_t i = 0; i < shown; i++) {
        int len = (int)strlen(str_or(c->pools[i].name, "-"));
        if (len > namew)
            namew = len > 32 ? 32 : len;
    }
    for (size_t i = 0; i < shown; i++) {
        const struct gp_pool_spec *p = &c->pools[i];
        char what[160], size[40];
        if (p->max_count > p->min_count)
            snprintf(size, sizeof size, "%" PRIu32 "-%" PRIu32, p->min_count, p->max_count);
        else
            snprintf(size, sizeof size, "%" PRIu32, p->count);
        if (p->gpus_per_node > 0)
            snprintf(what, sizeof what, "%s x %" PRIu32 " %s%s", size, p->gpus_per_node,
                     str_or(p->gpu_model, "GPU"), p->spot ? " spot" : "");
        else
            snprintf(what, sizeof what, "%s x CPU only%s", size, p->spot ? " spot" : "");
        line_label(f, "");
        if (p->price_per_hour_usd > 0 && isfinite(p->price_per_hour_usd))
            fprintf(f, "  %-*.*s  %-22s  $%.2f/h per node\n", namew, namew, str_or(p->name, "-"),
                    what, p->price_per_hour_usd);
        else
            fprintf(f, "  %-*.*s  %s\n", namew, namew, str_or(p->name, "-"), what);
    }
    if (c->npools > shown) {
        line_label(f, "");
        fprintf(f, "  ... and %zu more %s\n", c->npools - shown,
                gp_report_plural(c->npools - shown, "pool", "pools"));
    }
}

static void summary_workloads(FILE *f, const struct gp_report_meta *m)
{
    if (!m || !m->workloads || m->nworkloads == 0)
        return;
    line_label(f, m->nworkloads == 1 ? "workload" : "workloads");
    for (size_t i = 0; i < m->nworkloads; i++)
        fprintf(f, "%s%s", i ? ", " : "", str_or(m->workloads[i], "-"));
    fputc('\n', f);
}

#define MAX_NOFIT_SHOWN 5

/* The pods that can never fit, a line per reason. */
static void summary_nofit(FILE *f, const struct gp_sim_result *r)
{
    size_t shown = r->nnofit < MAX_NOFIT_SHOWN ? r->nnofit : MAX_NOFIT_SHOWN;
    for (size_t i = 0; r->nofit && i < shown; i++) {
        char line[1024];
        gp_report_nofit_line(line, sizeof line, &r->nofit[i]);
        line_label(f, i ? "" : "never fit");
        fprintf(f, "%s\n", line);
    }
    if (r->nofit && r->nnofit > shown) {
        uint64_t rest = 0;
        for (size_t i = shown; i < r->nnofit; i++)
            rest += r->nofit[i].pods;
        line_label(f, "");
        fprintf(f, "%" PRIu64 " more %s can never fit, for other reasons\n", rest,
                gp_report_plural(rest, "pod", "pods"));
    }
}

static void summary_pods(FILE *f, const struct gp_sim_result *r)
{
    line_label(f, "pods");
    if (r->mode == GP_SIM_STATIC) {
        fprintf(f, "%" PRIu64 " arrived, %" PRIu64 " scheduled, %" PRIu64 " failed (fit nowhere)\n",
                r->pods_submitted, r->pods_scheduled, r->pods_failed);
        summary_nofit(f, r);
        return;
    }
    fprintf(f,
            "%" PRIu64 " submitted, %" PRIu64 " scheduled, %" PRIu64 " completed, %" PRIu64
            " failed\n",
            r->pods_submitted, r->pods_scheduled, r->pods_completed, r->pods_failed);
    line_label(f, "");
    fprintf(f, "%" PRIu64 " pending and %" PRIu64 " running at the end, %" PRIu64 " %s\n",
            r->pods_pending_end, r->pods_running_end, r->pod_retries,
            gp_report_plural(r->pod_retries, "retry", "retries"));
    if (r->gang_restarts || r->gangs_never_fit || r->gangs_across_domains ||
        r->gangs_over_timeout) {
        line_label(f, "gangs");
        fprintf(f,
                "%" PRIu64 " %s restarted with a failed one, %" PRIu64 " never fit the cluster\n",
                r->gang_restarts, gp_report_plural(r->gang_restarts, "member", "members"),
                r->gangs_never_fit);
        if (r->gangs_across_domains || r->gangs_over_timeout) {
            line_label(f, "");
            fprintf(f,
                    "%" PRIu64 " placed across topology domains (slower), %" PRIu64
                    " placed after their schedule timeout\n",
                    r->gangs_across_domains, r->gangs_over_timeout);
        }
    }
    /* pods that can never fit and gangs that can never start (their
     * PodGroup's minMember above its members among them), with numbers */
    summary_nofit(f, r);
    if (r->preemptions) {
        line_label(f, "evictions");
        fprintf(f,
                "%" PRIu64 " (%" PRIu64 " preempted, %" PRIu64 " reclaimed), %.1f GPU-hours lost\n",
                r->preemptions, r->preempted, r->reclaimed, r->lost_gpu_hours);
    }
    if (r->mig_reconfigurations || r->oom_kills || r->timeslice_slowdown > 1.0005) {
        line_label(f, "shared GPUs");
        fprintf(f,
                "%" PRIu64 " MIG %s, %" PRIu64 " %s out of GPU memory, time-sliced pods ran "
                "%.2fx slower\n",
                r->mig_reconfigurations,
                gp_report_plural(r->mig_reconfigurations, "re-partition", "re-partitions"),
                r->oom_kills, gp_report_plural(r->oom_kills, "pod", "pods"), r->timeslice_slowdown);
    }
    if (r->jobs_submitted) {
        char mean[32], p95[32];
        gp_report_fmt_stat(mean, sizeof mean, &r->jct_s, r->jct_s.mean);
        gp_report_fmt_stat(p95, sizeof p95, &r->jct_s, r->jct_s.p95);
        line_label(f, "jobs");
        fprintf(f,
                "%" PRIu64 " submitted, %" PRIu64 " completed, %" PRIu64
                " failed; completion time mean %s, p95 %s\n",
                r->jobs_submitted, r->jobs_completed, r->jobs_failed, mean, p95);
    }
    size_t declared = 0;
    for (size_t i = 0; r->queues && i < r->nqueues; i++)
        declared += r->queues[i].declared;
    for (size_t i = 0; declared && i < r->nqueues; i++) {
        const struct gp_sim_queue *q = &r->queues[i];
        char delay[32];
        gp_report_fmt_stat(delay, sizeof delay, &q->queue_delay_s, q->queue_delay_s.mean);
        line_label(f, i ? "" : "queues");
        fprintf(f, "%-16s %8.1f GPU-h, %" PRIu64 " %s, %" PRIu64 " evicted, delay mean %s\n",
                q->name ? q->name : "", q->gpu_hours_allocated, q->binds,
                gp_report_plural(q->binds, "bind", "binds"), q->evicted, delay);
    }
}

static void summary_delay(FILE *f, const struct gp_sim_result *r)
{
    const struct gp_sim_stats *q = &r->queue_delay_s;
    double v[5] = {q->mean, q->p50, q->p95, q->p99, q->max};
    line_label(f, "queueing delay");
    fprintf(f, "%12s%12s%12s%12s%12s\n", "mean", "p50", "p95", "p99", "max");
    line_label(f, "");
    for (int i = 0; i < 5; i++) {
        char d[32];
        gp_report_fmt_stat(d, sizeof d, q, v[i]);
        fprintf(f, "%12s", d);
    }
    fputc('\n', f);
}

static double pct_of(double part, double whole)
{
    return whole > 0 && isfinite(part) ? 100.0 * part / whole : 0;
}

/* The money: the total and its parts, the pools, the costliest job, and
 * what the cluster's dynamics did (autoscaler, spot). */
static void summary_cost(FILE *f, const struct gp_sim_result *r)
{
    const struct gp_sim_cost *c = &r->cost;
    double total = finite_or0(c->total_usd);
    if (total > 0) {
        line_label(f, "cost");
        fprintf(f, "$%.2f: GPUs used $%.2f, idle $%.2f (%.1f %%)", total,
                finite_or0(c->gpu_used_usd), finite_or0(c->gpu_idle_usd),
                pct_of(c->gpu_idle_usd, c->gpu_used_usd + c->gpu_idle_usd));
        if (c->control_plane_usd > 0)
            fprintf(f, ", control plane $%.2f", c->control_plane_usd);
        if (c->other_usd > 0)
            fprintf(f, ", CPU nodes $%.2f", c->other_usd);
        fputc('\n', f);
        bool many = c->npools > 1;
        for (size_t i = 0; many && c->pools && i < c->npools && i < MAX_POOLS_SHOWN; i++) {
            const struct gp_sim_pool_cost *p = &c->pools[i];
            line_label(f, "");
            fprintf(f, "  %-16.16s $%10.2f  %7.1f node-h", str_or(p->name, "-"),
                    finite_or0(p->total_usd), finite_or0(p->node_hours));
            if (p->gpu_hours > 0)
                fprintf(f, ", %.0f %% of GPU-h used", pct_of(p->gpu_hours_used, p->gpu_hours));
            if (p->spot && p->on_demand_usd >= 0)
                fprintf(f, ", spot: saved $%.2f", p->spot_savings_usd);
            else if (p->spot)
                fprintf(f, ", spot");
            fputc('\n', f);
        }
        if (c->lost_work_usd > 0 || c->spot_savings_usd > 0) {
            line_label(f, "");
            fprintf(f, "lost work $%.2f, spot savings $%.2f\n", finite_or0(c->lost_work_usd),
                    finite_or0(c->spot_savings_usd));
        }
        if (c->ntop_jobs > 0) {
            line_label(f, "");
            fprintf(f, "per job mean $%.2f, p95 $%.2f; costliest %s #%" PRIu32 " $%.2f\n",
                    c->job_usd.mean, c->job_usd.p95, str_or(c->top_jobs[0].name, "-"),
                    c->top_jobs[0].k, c->top_jobs[0].usd);
        }
    } else if (isfinite(r->cost_usd) && r->cost_usd > 0) {
        line_label(f, "cost");
        fprintf(f, "$%.2f\n", r->cost_usd);
    }
    if (r->nodes_requested || r->nodes_removed) {
        line_label(f, "autoscaler");
        fprintf(f, "%" PRIu64 " %s requested, %" PRIu64 " removed\n", r->nodes_requested,
                gp_report_plural(r->nodes_requested, "node", "nodes"), r->nodes_removed);
    }
    if (r->spot_interruptions || r->spot_interruptions_missed) {
        line_label(f, "spot");
        fprintf(f, "%" PRIu64 " %s, %" PRIu64 " %s evicted, %.1f GPU-hours lost",
                r->spot_interruptions,
                gp_report_plural(r->spot_interruptions, "interruption", "interruptions"),
                r->spot_evictions, gp_report_plural(r->spot_evictions, "pod", "pods"),
                finite_or0(r->spot_lost_gpu_hours));
        if (r->spot_interruptions_missed)
            fprintf(f, "; %" PRIu64 " recorded %s no node", r->spot_interruptions_missed,
                    gp_report_plural(r->spot_interruptions_missed, "one found", "ones found"));
        fprintf(f, "\n");
    }
    if (r->node_expirations) {
        line_label(f, "node lifetime");
        fprintf(f,
                "%" PRIu64 " %s replaced at their maximum age, %" PRIu64 " %s evicted, %.1f "
                "GPU-hours lost\n",
                r->node_expirations, gp_report_plural(r->node_expirations, "node", "nodes"),
                r->expiry_evictions, gp_report_plural(r->expiry_evictions, "pod", "pods"),
                finite_or0(r->expiry_lost_gpu_hours));
    }
    if (r->billing_rounding_usd >= 0.005) {
        line_label(f, "billing");
        fprintf(f,
                "$%.2f of rounding (each removed node's time billed to its pool's "
                "granularity and minimum)\n",
                r->billing_rounding_usd);
    }
}

static void summary_usage(FILE *f, const struct gp_sim_result *r)
{
    line_label(f, "GPU allocation");
    fprintf(f, "%.1f %% average, %.1f %% peak\n", gp_report_gpu_avg_pct(r),
            gp_report_gpu_peak_pct(r));
    line_label(f, "node-hours");
    fprintf(f, "%.1f\n", finite_or0(r->node_hours));
    line_label(f, "GPU-hours");
    fprintf(f, "%.1f total, %.1f allocated, %.1f idle (%.1f %% idle)\n",
            finite_or0(r->gpu_hours_total), finite_or0(r->gpu_hours_allocated),
            finite_or0(r->gpu_hours_idle), gp_report_gpu_idle_pct(r));
    summary_cost(f, r);
}

static void summary_static(FILE *f, const struct gp_sim_result *r)
{
    double arrived;
    double final = gp_report_static_final_pct(r, &arrived);
    line_label(f, "unallocated GPU");
    fprintf(f, "%.2f %% of capacity at 100 %% arrived (ideal packing: 0 %%)\n",
            finite_or0(r->unallocated_gpu_pct_at_100));
    if (r->ncurve > 0) {
        line_label(f, "");
        fprintf(f, "%.2f %% at the end (%.0f %% arrived)\n", final, arrived);
    }
}

static void summary_reasons(FILE *f, const struct gp_sim_result *r)
{
    enum gp_filter order[GP_FILTER_COUNT];
    size_t n = gp_report_top_reasons(r, order);
    if (n == 0) {
        line_label(f, "unschedulable");
        fprintf(f, "none\n");
        return;
    }
    line_label(f, "unschedulable");
    fprintf(f, "pods that did not fit when tried, by main reason:\n");
    char first[32];
    snprintf(first, sizeof first, "%" PRIu64, r->unschedulable[order[0]]);
    int w = (int)strlen(first);
    size_t shown = n < MAX_REASONS_SHOWN ? n : MAX_REASONS_SHOWN;
    for (size_t i = 0; i < shown; i++) {
        line_label(f, "");
        fprintf(f, "%*" PRIu64 "  %s\n", w, r->unschedulable[order[i]],
                gp_report_reason_text(r, order[i]));
    }
    if (n > shown) {
        uint64_t rest = 0;
        for (size_t i = shown; i < n; i++)
            rest += r->unschedulable[order[i]];
        line_label(f, "");
        fprintf(f, "%*" PRIu64 "  other reasons\n", w, rest);
    }
}

void gp_report_summary(FILE *f, const struct gp_sim_result *r, const struct gp_report_meta *m)
{
    bool timed = r->mode != GP_SIM_STATIC;
    char d[32];

    if (m && m->version && *m->version)
        fprintf(f, "gpuplane %s - simulation summary\n", m->version);
    else
        fprintf(f, "gpuplane - simulation summary\n");
    line_label(f, "mode");
    fprintf(f, "%s, policy %s, seed %" PRIu64 "\n", timed ? "timed" : "static packing",
            str_or(r->policy, "-"), r->seed);
    summary_cluster(f, r, m);
    summary_workloads(f, m);
    if (timed) {
        gp_report_fmt_duration(d, sizeof d, r->sim_end_s);
        line_label(f, "simulated time");
        fprintf(f, "%s\n", d);
    }
    fputc('\n', f);
    summary_pods(f, r);
    if (timed) {
        summary_delay(f, r);
        fputc('\n', f);
        summary_usage(f, r);
    } else {
        fputc('\n', f);
        summary_static(f, r);
    }
    summary_reasons(f, r);
    gp_report_services_summary(f, r);
}

/* ---- JSON ---------------------------------------------------------------- */

/* Builds the document; any allocation failure clears *ok (jansson's
 * json_object_set_new and json_array_append_new take NULL and fail). */
struct jctx {
    bool ok;
};

static void jset(struct jctx *c, json_t *obj, const char *key, json_t *v)
{
    if (!obj || json_object_set_new(obj, key, v) != 0)
        c->ok = false;
}

static void jpush(struct jctx *c, json_t *arr, json_t *v)
{
    if (!arr || json_array_append_new(arr, v) != 0)
        c->ok = false;
}

/* A real rounded to dec decimals, so the text is short and stable; null
 * when not finite (JSON has no NaN). */
static json_t *jreal(double x, int dec)
{
    if (!isfinite(x))
        return json_null();
    double p = pow(10.0, dec);
    double v = round(x * p) / p;
    if (!isfinite(v))
        v = x;
    if (v == 0)
        v = 0.0; /* no "-0.0" */
    return json_real(v);
}

static json_t *juint(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v);
}

/* Appends the UTF-8 sequence at s to *out (or U+FFFD for an invalid byte)
 * and returns the bytes consumed. Rejects overlong forms, surrogates and
 * code points above U+10FFFF, as jansson does. */
static size_t utf8_step(const unsigned char *s, char *out, size_t *olen)
{
    unsigned char c = s[0];
    size_t need = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
        out[(*olen)++] = (char)c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        cp = c & 0x07;
    }
    size_t i = 1;
    for (; need && i <= need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            break;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    bool valid = need > 0 && i == need + 1;
    if (valid && ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                  (cp >= 0xD800 && cp <= 0xDFFF)))
        valid = false;
    if (!valid) {
        memcpy(out + *olen, "\xEF\xBF\xBD", 3);
        *olen += 3;
        return 1;
    }
    memcpy(out + *olen, s, need + 1);
    *olen += need + 1;
    return need + 1;
}

/* A JSON string; invalid UTF-8 bytes become U+FFFD; NULL gives null. */
static json_t *jstr(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t len = strlen(s);
    char *clean = malloc(len * 3 + 1);
    if (!clean)
        return NULL;
    size_t olen = 0;
    for (size_t i = 0; i < len;)
        i += utf8_step((const unsigned char *)s + i, clean, &olen);
    clean[olen] = '\0';
    j = json_string(clean);
    free(clean);
    return j;
}

static json_t *json_input(struct jctx *c, const struct gp_report_meta *m)
{
    json_t *in = json_object();
    jset(c, in, "cluster", jstr(m && m->cluster ? m->cluster : ""));
    json_t *w = json_array();
    for (size_t i = 0; m && m->workloads && i < m->nworkloads; i++)
        jpush(c, w, jstr(m->workloads[i]));
    jset(c, in, "workloads", w);
    return in;
}

static json_t *json_timeline(struct jctx *c, const struct gp_sim_result *r)
{
    json_t *tl = json_array();
    for (size_t i = 0; r->samples && i < r->nsamples; i++) {
        const struct gp_sim_sample *s = &r->samples[i];
        json_t *o = json_object();
        jset(c, o, "t_s", jreal(s->t_s, 3));
        jset(c, o, "gpu_alloc_pct", jreal(s->gpu_alloc_pct, 4));
        jset(c, o, "cpu_alloc_pct", jreal(s->cpu_alloc_pct, 4));
        jset(c, o, "mem_alloc_pct", jreal(s->mem_alloc_pct, 4));
        jset(c, o, "pending", json_integer(s->pending));
        jset(c, o, "running", json_integer(s->running));
        jset(c, o, "nodes", json_integer(s->nodes));
        jpush(c, tl, o);
    }
    return tl;
}

/* A statistic's value, or null when nothing is behind it (st->n == 0). */
static json_t *jstat(const struct gp_sim_stats *st, double v, int dec)
{
    return st->n ? jreal(v, dec) : json_null();
}

static json_t *json_stats(struct jctx *c, const struct gp_sim_stats *st, bool max)
{
    json_t *o = json_object();
    jset(c, o, "mean", jstat(st, st->mean, 3));
    jset(c, o, "p50", jstat(st, st->p50, 3));
    jset(c, o, "p95", jstat(st, st->p95, 3));
    jset(c, o, "p99", jstat(st, st->p99, 3));
    if (max)
        jset(c, o, "max", jstat(st, st->max, 3));
    return o;
}

static json_t *json_queues(struct jctx *c, const struct gp_sim_result *r)
{
    json_t *qs = json_array();
    for (size_t i = 0; r->queues && i < r->nqueues; i++) {
        const struct gp_sim_queue *q = &r->queues[i];
        json_t *o = json_object();
        jset(c, o, "name", jstr(q->name ? q->name : ""));
        jset(c, o, "declared", json_boolean(q->declared));
        jset(c, o, "guaranteed_gpus", jreal(q->guaranteed_gpus, 3));
        jset(c, o, "limit_gpus", q->limit_gpus < 0 ? json_null() : jreal(q->limit_gpus, 3));
        json_t *pods = json_object();
        jset(c, pods, "submitted", juint(q->pods_submitted));
        jset(c, pods, "binds", juint(q->binds));
        jset(c, pods, "evicted", juint(q->evicted));
        jset(c, o, "pods", pods);
        json_t *jobs = json_object();
        jset(c, jobs, "submitted", juint(q->jobs_submitted));
        jset(c, jobs, "completed", juint(q->jobs_completed));
        jset(c, jobs, "failed", juint(q->jobs_failed));
        jset(c, jobs, "jct_s", json_stats(c, &q->jct_s, false));
        jset(c, o, "jobs", jobs);
        jset(c, o, "queue_delay_s", json_stats(c, &q->queue_delay_s, true));
        jset(c, o, "gpu_hours_allocated", jreal(q->gpu_hours_allocated, 4));
        jset(c, o, "lost_gpu_hours", jreal(q->lost_gpu_hours, 4));
        jpush(c, qs, o);
    }
    return qs;
}

#define USD_DEC 6 /* cost figures: to the micro-dollar */

static json_t *json_pool_cost(struct jctx *c, const struct gp_sim_pool_cost *p)
{
    json_t *o = json_object();
    jset(c, o, "name", jstr(p->name ? p->name : ""));
    jset(c, o, "spot", json_boolean(p->spot));
    jset(c, o, "autoscaled", json_boolean(p->autoscaled));
    jset(c, o, "min_nodes", json_integer(p->min_nodes));
    jset(c, o, "max_nodes", json_integer(p->max_nodes));
    jset(c, o, "peak_nodes", json_integer(p->peak_nodes));
    jset(c, o, "nodes_requested", juint(p->nodes_requested));
    jset(c, o, "nodes_removed", juint(p->nodes_removed));
    jset(c, o, "interruptions", juint(p->interruptions));
    jset(c, o, "interruptions_missed", juint(p->interruptions_missed));
    if (p->limits) { /* docs/FORMATS.md, "Provider limits" */
        jset(c, o, "expirations", juint(p->expirations));
        jset(c, o, "billing_rounding_usd", jreal(p->billing_rounding_usd, USD_DEC));
    }
    jset(c, o, "node_hours", jreal(p->node_hours, 4));
    jset(c, o, "gpu_hours", jreal(p->gpu_hours, 4));
    jset(c, o, "gpu_hours_used", jreal(p->gpu_hours_used, 4));
    jset(c, o, "total_usd", jreal(p->total_usd, USD_DEC));
    jset(c, o, "gpu_used_usd", jreal(p->gpu_used_usd, USD_DEC));
    jset(c, o, "gpu_idle_usd", jreal(p->gpu_idle_usd, USD_DEC));
    jset(c, o, "other_usd", jreal(p->other_usd, USD_DEC));
    jset(c, o, "on_demand_usd",
         p->on_demand_usd < 0 ? json_null() : jreal(p->on_demand_usd, USD_DEC));
    jset(c, o, "spot_savings_usd", jreal(p->spot_savings_usd, USD_DEC));
    return o;
}

static json_t *json_cost(struct jctx *c, const struct gp_sim_result *r)
{
    const struct gp_sim_cost *k = &r->cost;
    json_t *o = json_object();
    jset(c, o, "total_usd", jreal(k->total_usd, USD_DEC));
    jset(c, o, "gpu_used_usd", jreal(k->gpu_used_usd, USD_DEC));
    jset(c, o, "gpu_idle_usd", jreal(k->gpu_idle_usd, USD_DEC));
    jset(c, o, "control_plane_usd", jreal(k->control_plane_usd, USD_DEC));
    jset(c, o, "other_usd", jreal(k->other_usd, USD_DEC));
    json_t *pools = json_array();
    for (size_t i = 0; k->pools && i < k->npools; i++)
        jpush(c, pools, json_pool_cost(c, &k->pools[i]));
    jset(c, o, "by_pool", pools);
    json_t *qs = json_array();
    for (size_t i = 0; r->mode == GP_SIM_TIMED && r->queues && i < r->nqueues; i++) {
        const struct gp_sim_queue *q = &r->queues[i];
        json_t *e = json_object();
        jset(c, e, "name", jstr(q->name ? q->name : ""));
        jset(c, e, "gpu_used_usd", jreal(q->cost_usd, USD_DEC));
        jset(c, e, "lost_work_usd", jreal(q->lost_work_usd, USD_DEC));
        jpush(c, qs, e);
    }
    jset(c, o, "by_queue", qs);
    jset(c, o, "lost_work_usd", jreal(k->lost_work_usd, USD_DEC));
    jset(c, o, "spot_savings_usd", jreal(k->spot_savings_usd, USD_DEC));
    jset(c, o, "jobs_usd", jreal(k->jobs_usd, USD_DEC));
    jset(c, o, "services_usd", jreal(k->services_usd, USD_DEC));
    json_t *per = json_object();
    jset(c, per, "mean", jstat(&k->job_usd, k->job_usd.mean, USD_DEC));
    jset(c, per, "p50", jstat(&k->job_usd, k->job_usd.p50, USD_DEC));
    jset(c, per, "p95", jstat(&k->job_usd, k->job_usd.p95, USD_DEC));
    jset(c, per, "max", jstat(&k->job_usd, k->job_usd.max, USD_DEC));
    json_t *top = json_array();
    for (size_t i = 0; i < k->ntop_jobs && i < GP_SIM_TOP_JOBS; i++) {
        json_t *e = json_object();
        jset(c, e, "name", jstr(k->top_jobs[i].name ? k->top_jobs[i].name : ""));
        jset(c, e, "k", json_integer(k->top_jobs[i].k));
        jset(c, e, "usd", jreal(k->top_jobs[i].usd, USD_DEC));
        jpush(c, top, e);
    }
    jset(c, per, "top", top);
    jset(c, o, "per_job_usd", per);
    return o;
}

/* A need or what a node has of it, in the unit the resource's name says
 * (docs/FORMATS.md); null for the reasons that are not a quantity. */
static json_t *jnofit_qty(const struct gp_sim_nofit *nf, int64_t v)
{
    enum gp_sim_nofit_kind k = nf->kind == GP_SIM_NOFIT_QUOTA ? nf->resource : nf->kind;
    switch (k) {
    case GP_SIM_NOFIT_CPU:
        return jreal((double)v / 1000.0, 3);
    case GP_SIM_NOFIT_GANG_GPUS:
        return jreal((double)v / GP_GPU_MILLI, 3);
    case GP_SIM_NOFIT_GPUS:
        if (nf->kind == GP_SIM_NOFIT_QUOTA)
            return jreal((double)v / GP_GPU_MILLI, 3);
        return json_integer(v);
    case GP_SIM_NOFIT_MEMORY:
    case GP_SIM_NOFIT_GPU_MEMORY:
    case GP_SIM_NOFIT_GANG_MEMBERS:
        return json_integer(v);
    default:
        return json_null();
    }
}

static json_t *json_nofit(struct jctx *c, const struct gp_sim_result *r)
{
    json_t *o = json_object();
    jset(c, o, "pods", juint(r->pods_never_fit));
    json_t *rows = json_array();
    for (size_t i = 0; r->nofit && i < r->nnofit; i++) {
        const struct gp_sim_nofit *nf = &r->nofit[i];
        char text[640];
        gp_report_nofit_text(text, sizeof text, nf);
        json_t *e = json_object();
        jset(c, e, "pods", juint(nf->pods));
        jset(c, e, "gangs", juint(nf->gangs));
        jset(c, e, "gang", jstr(nf->gang));
        jset(c, e, "resource", json_string(gp_report_nofit_resource(nf)));
        jset(c, e, "need", jnofit_qty(nf, nf->need));
        jset(c, e, "have", jnofit_qty(nf, nf->have));
        jset(c, e, "reason", jstr(text));
        jpush(c, rows, e);
    }
    jset(c, o, "reasons", rows);
    return o;
}

static json_t *json_static(struct jctx *c, const struct gp_sim_result *r)
{
    json_t *st = json_object();
    jset(c, st, "unallocated_gpu_pct_at_100", jreal(r->unallocated_gpu_pct_at_100, 4));
    json_t *curve = json_array();
    for (size_t i = 0; r->curve && i < r->ncurve; i++) {
        json_t *pt = json_array();
        jpush(c, pt, jreal(r->curve[i].arrived_pct, 4));
        jpush(c, pt, jreal(r->curve[i].unallocated_pct, 4));
        jpush(c, curve, pt);
    }
    jset(c, st, "curve", curve);
    return st;
}

void gp_report_json(struct gp_sbuf *out, const struct gp_sim_result *r,
                    const struct gp_report_meta *m)
{
    struct jctx c = {.ok = true};
    json_t *root = json_object();

    json_t *hdr = json_object();
    jset(&c, hdr, "version", jstr(m && m->version ? m->version : ""));
    jset(&c, hdr, "schema", json_integer(1));
    jset(&c, root, "gpuplane", hdr);
    jset(&c, root, "input", json_input(&c, m));
    jset(&c, root, "mode", json_string(r->mode == GP_SIM_STATIC ? "static" : "timed"));
    jset(&c, root, "policy", jstr(r->policy ? r->policy : ""));
    /* seeds above INT64_MAX do not fit a JSON integer here: decimal string */
    if (r->seed > (uint64_t)INT64_MAX) {
        char seed[32];
        snprintf(seed, sizeof seed, "%" PRIu64, r->seed);
        jset(&c, root, "seed", json_string(seed));
    } else {
        jset(&c, root, "seed", json_integer((json_int_t)r->seed));
    }
    jset(&c, root, "sim_end_s", jreal(r->sim_end_s, 3));

    json_t *cl = json_object();
    jset(&c, cl, "nodes", json_integer(r->nodes));
    jset(&c, cl, "gpus", juint(r->gpus));
    jset(&c, root, "cluster", cl);

    json_t *pods = json_object();
    jset(&c, pods, "submitted", juint(r->pods_submitted));
    jset(&c, pods, "scheduled", juint(r->pods_scheduled));
    jset(&c, pods, "completed", juint(r->pods_completed));
    jset(&c, pods, "failed", juint(r->pods_failed));
    jset(&c, pods, "pending_at_end", juint(r->pods_pending_end));
    jset(&c, pods, "running_at_end", juint(r->pods_running_end));
    jset(&c, pods, "retries", juint(r->pod_retries));
    jset(&c, root, "pods", pods);

    json_t *gangs = json_object();
    jset(&c, gangs, "restarts", juint(r->gang_restarts));
    jset(&c, gangs, "never_fit", juint(r->gangs_never_fit));
    jset(&c, gangs, "across_domains", juint(r->gangs_across_domains));
    jset(&c, gangs, "over_timeout", juint(r->gangs_over_timeout));
    jset(&c, gangs, "never_start", juint(r->gangs_never_start));
    json_t *never = json_array();
    for (size_t i = 0; i < r->nnever_start; i++) {
        const struct gp_sim_gang_short *g = &r->never_start[i];
        json_t *e = json_object();
        jset(&c, e, "podgroup", jstr(g->podgroup));
        jset(&c, e, "min_member", juint(g->min_member));
        jset(&c, e, "members", juint(g->members));
        jset(&c, e, "submissions", juint(g->submissions));
        jpush(&c, never, e);
    }
    jset(&c, gangs, "never_start_podgroups", never);
    jset(&c, root, "gangs", gangs);
    jset(&c, root, "never_fit", json_nofit(&c, r));

    json_t *pre = json_object();
    jset(&c, pre, "count", juint(r->preemptions));
    jset(&c, pre, "preempted", juint(r->preempted));
    jset(&c, pre, "reclaimed", juint(r->reclaimed));
    jset(&c, pre, "lost_gpu_hours", jreal(r->lost_gpu_hours, 4));
    jset(&c, root, "preemptions", pre);

    json_t *jobs = json_object();
    jset(&c, jobs, "submitted", juint(r->jobs_submitted));
    jset(&c, jobs, "completed", juint(r->jobs_completed));
    jset(&c, jobs, "failed", juint(r->jobs_failed));
    jset(&c, jobs, "deadline_exceeded", juint(r->jobs_deadline_exceeded));
    jset(&c, jobs, "jct_s", json_stats(&c, &r->jct_s, false));
    jset(&c, root, "jobs", jobs);

    jset(&c, root, "queue_delay_s", json_stats(&c, &r->queue_delay_s, true));

    jset(&c, root, "node_hours", jreal(r->node_hours, 4));
    json_t *gh = json_object();
    jset(&c, gh, "total", jreal(r->gpu_hours_total, 4));
    jset(&c, gh, "allocated", jreal(r->gpu_hours_allocated, 4));
    jset(&c, gh, "idle", jreal(r->gpu_hours_idle, 4));
    jset(&c, root, "gpu_hours", gh);
    json_t *ga = json_object();
    jset(&c, ga, "mean_pct", jreal(gp_report_gpu_avg_pct(r), 4));
    jset(&c, ga, "peak_pct", jreal(r->gpu_alloc_peak_pct, 4));
    jset(&c, ga, "peak_t_s", jreal(r->gpu_alloc_peak_t_s, 3));
    jset(&c, ga, "peak_gpus", jreal(r->gpu_alloc_peak_gpus, 3));
    jset(&c, root, "gpu_alloc", ga);
    /* the whole bill, as cost.total_usd and to the same micro-dollar */
    jset(&c, root, "cost_usd", jreal(r->cost_usd, USD_DEC));
    jset(&c, root, "cost", json_cost(&c, r));
    json_t *dyn = json_object();
    jset(&c, dyn, "nodes_requested", juint(r->nodes_requested));
    jset(&c, dyn, "nodes_removed", juint(r->nodes_removed));
    jset(&c, root, "autoscaler", dyn);
    json_t *spot = json_object();
    jset(&c, spot, "interruptions", juint(r->spot_interruptions));
    jset(&c, spot, "interruptions_missed", juint(r->spot_interruptions_missed));
    jset(&c, spot, "evictions", juint(r->spot_evictions));
    jset(&c, spot, "lost_gpu_hours", jreal(r->spot_lost_gpu_hours, 4));
    jset(&c, root, "spot", spot);
    if (r->provider_limits) { /* some pool sets maxNodeLifetime or billing rounding */
        json_t *lim = json_object();
        jset(&c, lim, "node_expirations", juint(r->node_expirations));
        jset(&c, lim, "evictions", juint(r->expiry_evictions));
        jset(&c, lim, "lost_gpu_hours", jreal(r->expiry_lost_gpu_hours, 4));
        jset(&c, lim, "billing_rounding_usd", jreal(r->billing_rounding_usd, USD_DEC));
        jset(&c, root, "provider_limits", lim);
    }
    json_t *sh = json_object();
    jset(&c, sh, "mig_reconfigurations", juint(r->mig_reconfigurations));
    jset(&c, sh, "oom_kills", juint(r->oom_kills));
    jset(&c, sh, "timeslice_slowdown", jreal(r->timeslice_slowdown, 4));
    jset(&c, root, "sharing", sh);

    json_t *un = json_object();
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        if (!gp_filter_optional((enum gp_filter)f) || r->unschedulable[f] > 0)
            jset(&c, un, gp_filter_name((enum gp_filter)f), juint(r->unschedulable[f]));
    jset(&c, root, "unschedulable", un);
    jset(&c, root, "queues", json_queues(&c, r));

    jset(&c, root, "timeline", json_timeline(&c, r));
    if (r->nservices > 0) /* only then: documents without services keep their bytes */
        jset(&c, root, "services", gp_report_services_json(r));
    if (r->mode == GP_SIM_STATIC)
        jset(&c, root, "static", json_static(&c, r));

    char *text = NULL;
    if (c.ok && root)
        text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    if (text) {
        gp_sbuf_add(out, text);
        gp_sbuf_addc(out, '\n');
    } else {
        out->oom = true;
    }
    free(text);
    json_decref(root);
}

/* ---- CSV ----------------------------------------------------------------- */

void gp_report_csv(struct gp_sbuf *out, const struct gp_sim_result *r)
{
    char a[64], b[64], c[64], d[64], usd[64];

    if (r->mode == GP_SIM_STATIC) {
        gp_sbuf_add(out, "arrived_pct,unallocated_pct\n");
        for (size_t i = 0; r->curve && i < r->ncurve; i++) {
            gp_report_fmt_num(a, sizeof a, r->curve[i].arrived_pct, 4);
            gp_report_fmt_num(b, sizeof b, r->curve[i].unallocated_pct, 4);
            gp_sbuf_printf(out, "%s,%s\n", a, b);
        }
        return;
    }
    /* cost_usd: the bill so far (nodes and control plane), in the CSV
     * only (the JSON timeline keeps its seven keys) */
    gp_sbuf_add(out,
                "t_s,gpu_alloc_pct,cpu_alloc_pct,mem_alloc_pct,pending,running,nodes,cost_usd\n");
    for (size_t i = 0; r->samples && i < r->nsamples; i++) {
        const struct gp_sim_sample *s = &r->samples[i];
        gp_report_fmt_num(a, sizeof a, s->t_s, 3);
        gp_report_fmt_num(b, sizeof b, s->gpu_alloc_pct, 4);
        gp_report_fmt_num(c, sizeof c, s->cpu_alloc_pct, 4);
        gp_report_fmt_num(d, sizeof d, s->mem_alloc_pct, 4);
        gp_report_fmt_num(usd, sizeof usd, s->cost_usd, 4);
        gp_sbuf_printf(out, "%s,%s,%s,%s,%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%s\n", a, b, c, d,
                       s->pending, s->running, s->nodes, usd);
    }
}
