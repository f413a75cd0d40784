/* study_out.c - the renter's question's outputs (src/plan/share_study.h):
 * a table on stdout with each option's trade-off and the recommendations,
 * the JSON document (docs/FORMATS.md, "Sharing study"), and the command
 * that runs the study. Deterministic: a function of the study alone. */
#include "cli/study_out.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "io/cluster.h"
#include "io/workload.h"
#include "sim/sim.h"
#include "util/arena.h"

const char *gp_study_label(const struct gp_study_option *o, char *buf, size_t n)
{
    if (o->mode == GP_SHARE_TIMESLICE || o->mode == GP_SHARE_MPS)
        snprintf(buf, n, "%s %s x%u", o->pool, gp_share_mode_name(o->mode), o->replicas);
    else
        snprintf(buf, n, "%s %s", o->pool, gp_share_mode_name(o->mode));
    return buf;
}

static const char *plural(uint32_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* "16 GPUs on 2 nodes, $54.90/hour ($40077/month)" */
static void rent_text(char *buf, size_t n, const struct gp_study_option *o)
{
    snprintf(buf, n, "%u %s on %u %s, $%.2f/hour ($%.0f/month)", o->gpus,
             plural(o->gpus, "GPU", "GPUs"), o->nodes, plural(o->nodes, "node", "nodes"),
             o->usd_per_hour, o->usd_per_hour * GP_STUDY_HOURS_PER_MONTH);
    size_t len = strlen(buf);
    for (size_t i = 0; i < o->nforced && len < n; i++) {
        snprintf(buf + len, n - len, ", with %u %s of %s", o->forced[i].nodes,
                 plural(o->forced[i].nodes, "node", "nodes"), o->forced[i].pool);
        len = strlen(buf);
    }
}

/* One advice line (512 bytes), cut if longer. */
static void put_line(char *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_line(char *line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, 512, fmt, ap);
    va_end(ap);
}

static double limit_ratio(const struct gp_study_latency *l)
{
    return l->limit_s > 0 ? l->p99_s / l->limit_s : 0;
}

const struct gp_study_latency *gp_study_latency_worst(const struct gp_study_option *o)
{
    const struct gp_study_latency *w = NULL;
    for (size_t i = 0; i < o->nlatency; i++) {
        const struct gp_study_latency *l = &o->latency[i];
        if (!w || (w->within && !l->within) ||
            (w->within == l->within && limit_ratio(l) > limit_ratio(w)))
            w = l;
    }
    return w;
}

const char *gp_study_latency_text(const struct gp_study_latency *l, char *buf, size_t n)
{
    char fig[96], how[128];
    const char *what = l->llm ? "TTFT p99" : "p99";
    if (isfinite(l->p99_s))
        snprintf(fig, sizeof fig, "%s %.3f s, %s its %.3f s limit", what, l->p99_s,
                 l->within ? "within" : "over", l->limit_s);
    else
        snprintf(fig, sizeof fig, "cannot keep up with its peak load (limit %.3f s)", l->limit_s);
    int len = snprintf(how, sizeof how, "%u %s at %.2fx", l->replicas,
                       l->replicas == 1 ? "replica" : "replicas", l->speed);
    if (l->llm && len > 0 && (size_t)len < sizeof how) {
        if (isfinite(l->itl_s))
            snprintf(how + len, sizeof how - (size_t)len, ", ITL %.1f ms, KV cache %.0f %%",
                     l->itl_s * 1000, l->mem_frac * 100);
        else
            snprintf(how + len, sizeof how - (size_t)len, ", KV cache %.0f %%", l->mem_frac * 100);
    }
    snprintf(buf, n, "%s: %s (%s)", l->service ? l->service : "?", fig, how);
    return buf;
}

/* The first service of o past its limit, in words. */
static const char *first_miss(const struct gp_study_option *o, char *buf, size_t n)
{
    for (size_t i = 0; i < o->nlatency; i++)
        if (!o->latency[i].within)
            return gp_study_latency_text(&o->latency[i], buf, n);
    snprintf(buf, n, "?");
    return buf;
}

size_t gp_study_advice(const struct gp_study *s, char lines[][512], size_t cap)
{
    size_t k = 0;
    char label[96], rent[256], lat[320];
    int best = s->cheapest, safe = s->cheapest_isolated, fit = s->cheapest_fit;
    if (best < 0 && s->nlimited > 0 && fit >= 0) {
        const struct gp_study_option *f = &s->options[fit];
        rent_text(rent, sizeof rent, f);
        if (k < cap)
            snprintf(lines[k++], 512,
                     "no option keeps every service within its latency limit: see the table");
        if (k < cap)
            put_line(lines[k++], "the cheapest that fits, %s (%s), misses %s",
                     gp_study_label(f, label, sizeof label), rent, first_miss(f, lat, sizeof lat));
        return k;
    }
    if (best < 0) {
        if (k < cap)
            snprintf(lines[k++], 512, "no option holds the workload: see why in the table");
        return k;
    }
    const struct gp_study_option *o = &s->options[best];
    rent_text(rent, sizeof rent, o);
    if (k < cap)
        snprintf(lines[k++], 512, "cheapest for the work: %s, %s; an hour of its work costs $%.2f",
                 gp_study_label(o, label, sizeof label), rent, o->work_usd_per_hour);
    if (k < cap && !gp_study_isolated(o->mode))
        snprintf(lines[k++], 512, "its pods are not isolated%s",
                 o->slowdown_max > 1.0005 ? "" : " (none of them slows down at the peak)");
    if (k < cap && o->slowdown_max > 1.0005)
        snprintf(lines[k++], 512,
                 "at the peak its pods run %.2fx slower on average, %.2fx at worst, so it "
                 "rents $%.2f/hour for $%.2f/hour of work",
                 o->slowdown_mean, o->slowdown_max, o->usd_per_hour, o->work_usd_per_hour);
    const struct gp_study_latency *w = gp_study_latency_worst(o);
    if (k < cap && w)
        put_line(lines[k++], "every service meets its latency limit there; the closest: %s",
                 gp_study_latency_text(w, lat, sizeof lat));
    if (k < cap && safe >= 0 && safe != best) {
        rent_text(rent, sizeof rent, &s->options[safe]);
        snprintf(lines[k++], 512,
                 "cheapest with isolation: %s, %s; an hour of its work costs $%.2f",
                 gp_study_label(&s->options[safe], label, sizeof label), rent,
                 s->options[safe].work_usd_per_hour);
    }
    int hourly = -1; /* the cheapest by the hour within the limits, if another */
    for (size_t i = 0; i < s->noptions; i++)
        if (s->options[i].feasible && s->options[i].meets_limits &&
            (hourly < 0 || s->options[i].usd_per_hour < s->options[hourly].usd_per_hour))
            hourly = (int)i;
    if (k < cap && hourly >= 0 && hourly != best &&
        s->options[hourly].usd_per_hour < o->usd_per_hour) {
        const struct gp_study_option *h = &s->options[hourly];
        snprintf(lines[k++], 512,
                 "%s rents for less ($%.2f/hour) but its pods run %.2fx slower on average: "
                 "an hour of its work costs $%.2f",
                 gp_study_label(h, label, sizeof label), h->usd_per_hour, h->slowdown_mean,
                 h->work_usd_per_hour);
    }
    if (k < cap && fit >= 0 && fit != best) {
        const struct gp_study_option *f = &s->options[fit];
        put_line(lines[k++], "%s costs less for the work ($%.2f/hour) but misses %s",
                 gp_study_label(f, label, sizeof label), f->work_usd_per_hour,
                 first_miss(f, lat, sizeof lat));
    }
    return k;
}

static void fmt_time(char *buf, size_t n, double t_s)
{
    if (t_s < 60)
        snprintf(buf, n, "%.0f s", t_s);
    else if (t_s < 3600)
        snprintf(buf, n, "%.0f min", t_s / 60);
    else
        snprintf(buf, n, "%.1f h", t_s / 3600);
}

void gp_study_print(FILE *f, const struct gp_study *s, const struct gp_study_meta *m)
{
    char when[32], label[96];
    fmt_time(when, sizeof when, s->peak_t_s);
    fprintf(f, "gpuplane sharing study: %s, %u %s at the peak (at %s)\n",
            m && m->workload ? m->workload : "workload", s->peak_pods,
            plural(s->peak_pods, "pod", "pods"), when);
    fprintf(f, "  sized for every set of pods that run at once on the timeline (%zu %s, %zu %s",
            s->runs, s->runs == 1 ? "run" : "runs", s->peaks,
            s->peaks == 1 ? "set that no other holds" : "sets that no other holds");
    if (s->cpu_only_runs)
        fprintf(f, "; %u %s of pods without GPUs not sized", s->cpu_only_runs,
                plural(s->cpu_only_runs, "run", "runs"));
    fprintf(f, ")\n\n");
    fprintf(f, "%-26s %6s %6s %6s %11s %10s %11s %9s%s\n", "pool and sharing", "nodes", "GPUs",
            "busy", "$/hour", "$/month", "work $/h", "slowdown", s->nlimited ? "  p99/limit" : "");
    for (size_t i = 0; i < s->noptions; i++) {
        const struct gp_study_option *o = &s->options[i];
        gp_study_label(o, label, sizeof label);
        if (!o->feasible) {
            fprintf(f, "%-26s  not possible: %s\n", label, o->why ? o->why : "");
            continue;
        }
        char slow[32];
        snprintf(slow, sizeof slow, "%.2fx", o->slowdown_max);
        char lim[32] = "";
        const struct gp_study_latency *w = gp_study_latency_worst(o);
        if (w && isfinite(limit_ratio(w)))
            snprintf(lim, sizeof lim, "  %9.2f%s", limit_ratio(w), w->within ? "" : " miss");
        else if (w)
            snprintf(lim, sizeof lim, "  %9s miss", "inf");
        fprintf(f, "%-26s %6u %6u %6u %11.2f %10.0f %11.2f %9s%s\n", label, o->nodes, o->gpus,
                o->gpus_busy, o->usd_per_hour, o->usd_per_hour * GP_STUDY_HOURS_PER_MONTH,
                o->work_usd_per_hour, slow, lim);
        for (size_t k = 0, shown = 0; k < o->nlatency; k++) {
            char lat[320];
            if (o->latency[k].within)
                continue;
            if (shown++ < 3)
                fprintf(f, "  misses a latency limit: %s\n",
                        gp_study_latency_text(&o->latency[k], lat, sizeof lat));
            else if (shown == 4)
                fprintf(f, "  and more services past their limits (the JSON lists them)\n");
        }
        for (size_t k = 0; k < o->nforced; k++) {
            const struct gp_study_forced *x = &o->forced[k];
            fprintf(f,
                    "  + %s (%s, as configured): %u %s, %u %s, $%.2f/hour for up to %u %s "
                    "it may not take\n",
                    x->pool, gp_share_mode_name(x->mode), x->nodes,
                    plural(x->nodes, "node", "nodes"), x->gpus, plural(x->gpus, "GPU", "GPUs"),
                    x->usd_per_hour, x->pods, plural(x->pods, "pod", "pods"));
        }
    }
    if (s->nconstraints) {
        fprintf(f, "\npods that may not go to every pool (sized where they may go):\n");
        for (size_t i = 0; i < s->nconstraints; i++) {
            const struct gp_study_constraint *c = &s->constraints[i];
            fprintf(f, "  %s: up to %u at once, only on %s (%s)\n", c->item, c->peak_pods,
                    c->pools[0] ? c->pools : "no pool", c->refused);
        }
    }
    fprintf(f, "\nisolation, by way of sharing:\n");
    bool seen[4] = {false};
    for (size_t i = 0; i < s->noptions; i++) {
        const struct gp_study_option *o = &s->options[i];
        if (seen[o->mode])
            continue;
        seen[o->mode] = true;
        fprintf(f, "  %-10s %s\n", gp_share_mode_name(o->mode), o->isolation);
    }
    char lines[8][512];
    size_t n = gp_study_advice(s, lines, 8);
    fprintf(f, "\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s\n", i == 0 || strncmp(lines[i], "cheapest", 8) == 0 ? "" : "  ", lines[i]);
    if (m)
        gp_study_services_print(f, m->services);
}

static json_t *jnum(double x)
{
    return json_real(isfinite(x) ? round(x * 1000) / 1000 : 0);
}

static json_t *option_json(const struct gp_study_option *o, bool with_latency)
{
    json_t *x = json_object();
    json_object_set_new(x, "pool", json_string(o->pool));
    json_object_set_new(x, "gpu_model", json_string(o->gpu_model));
    json_object_set_new(x, "mode", json_string(gp_share_mode_name(o->mode)));
    json_object_set_new(x, "replicas", json_integer(o->replicas));
    json_object_set_new(x, "rename_by_default", json_boolean(o->rename_by_default));
    json_object_set_new(x, "fail_requests_greater_than_one",
                        json_boolean(o->fail_requests_greater_than_one));
    json_object_set_new(x, "feasible", json_boolean(o->feasible));
    json_object_set_new(x, "why", o->why ? json_string(o->why) : json_null());
    json_object_set_new(x, "nodes", json_integer(o->nodes));
    json_object_set_new(x, "gpus", json_integer(o->gpus));
    json_object_set_new(x, "gpus_busy", json_integer(o->gpus_busy));
    json_object_set_new(x, "pods", json_integer(o->pods));
    json_object_set_new(x, "peak_t_s", jnum(o->peak_t_s));
    json_object_set_new(x, "pool_usd_per_hour", jnum(o->pool_usd_per_hour));
    json_object_set_new(x, "usd_per_hour", jnum(o->usd_per_hour));
    json_object_set_new(x, "usd_per_month", jnum(o->usd_per_hour * GP_STUDY_HOURS_PER_MONTH));
    json_object_set_new(x, "work_usd_per_hour", jnum(o->work_usd_per_hour));
    json_object_set_new(x, "slowdown_mean", jnum(o->slowdown_mean));
    json_object_set_new(x, "slowdown_max", jnum(o->slowdown_max));
    json_object_set_new(x, "isolation", json_string(o->isolation ? o->isolation : ""));
    json_t *forced = json_array();
    for (size_t k = 0; k < o->nforced; k++) {
        const struct gp_study_forced *f = &o->forced[k];
        json_t *y = json_object();
        json_object_set_new(y, "pool", json_string(f->pool));
        json_object_set_new(y, "mode", json_string(gp_share_mode_name(f->mode)));
        json_object_set_new(y, "replicas", json_integer(f->replicas));
        json_object_set_new(y, "nodes", json_integer(f->nodes));
        json_object_set_new(y, "gpus", json_integer(f->gpus));
        json_object_set_new(y, "pods", json_integer(f->pods));
        json_object_set_new(y, "usd_per_hour", jnum(f->usd_per_hour));
        json_array_append_new(forced, y);
    }
    json_object_set_new(x, "forced", forced);
    if (!with_latency)
        return x;
    json_object_set_new(x, "meets_latency_limits", json_boolean(o->feasible && o->meets_limits));
    json_t *lat = json_array();
    for (size_t k = 0; k < o->nlatency; k++) {
        const struct gp_study_latency *l = &o->latency[k];
        json_t *y = json_object();
        json_object_set_new(y, "service", json_string(l->service ? l->service : ""));
        json_object_set_new(y, "kind", json_string(l->llm ? "llm" : "requests"));
        json_object_set_new(y, "replicas", json_integer(l->replicas));
        json_object_set_new(y, "speed", jnum(l->speed));
        json_object_set_new(y, "mem_frac", jnum(l->mem_frac));
        json_object_set_new(y, l->llm ? "ttft_p99_s" : "p99_latency_s",
                            isfinite(l->p99_s) ? jnum(l->p99_s) : json_null());
        if (l->llm)
            json_object_set_new(y, "itl_s", isfinite(l->itl_s) ? jnum(l->itl_s) : json_null());
        json_object_set_new(y, "limit_s", jnum(l->limit_s));
        json_object_set_new(y, "within", json_boolean(l->within));
        json_array_append_new(lat, y);
    }
    json_object_set_new(x, "latency", lat);
    return x;
}

void gp_study_json(struct gp_sbuf *out, const struct gp_study *s, const struct gp_study_meta *m)
{
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "seed", json_integer((json_int_t)(m ? m->seed : 1)));
    json_object_set_new(root, "horizon_s",
                        m && m->horizon_s > 0 ? jnum(m->horizon_s) : json_null());
    json_object_set_new(root, "runs", json_integer((json_int_t)s->runs));
    json_object_set_new(root, "cpu_only_runs", json_integer(s->cpu_only_runs));
    json_t *peak = json_object();
    json_object_set_new(peak, "pods", json_integer(s->peak_pods));
    json_object_set_new(peak, "t_s", jnum(s->peak_t_s));
    json_object_set_new(peak, "sets", json_integer((json_int_t)s->peaks));
    json_object_set_new(root, "peak", peak);
    for (size_t i = 0; i < s->noptions; i++)
        json_array_append_new(arr, option_json(&s->options[i], s->nlimited > 0));
    json_object_set_new(root, "sharing_study", arr);
    json_object_set_new(root, "cheapest",
                        s->cheapest >= 0 ? json_integer(s->cheapest) : json_null());
    json_object_set_new(root, "cheapest_isolated",
                        s->cheapest_isolated >= 0 ? json_integer(s->cheapest_isolated)
                                                  : json_null());
    if (s->nlimited > 0) {
        json_object_set_new(root, "cheapest_fit",
                            s->cheapest_fit >= 0 ? json_integer(s->cheapest_fit) : json_null());
        json_object_set_new(root, "latency_limited_services",
                            json_integer((json_int_t)s->nlimited));
    }
    json_t *cons = json_array();
    for (size_t i = 0; i < s->nconstraints; i++) {
        const struct gp_study_constraint *c = &s->constraints[i];
        json_t *y = json_object();
        json_object_set_new(y, "item", json_string(c->item));
        json_object_set_new(y, "peak_pods", json_integer(c->peak_pods));
        json_object_set_new(y, "pools", json_string(c->pools));
        json_object_set_new(y, "refused", json_string(c->refused));
        json_array_append_new(cons, y);
    }
    json_object_set_new(root, "constraints", cons);
    char lines[8][512];
    size_t n = gp_study_advice(s, lines, 8);
    json_t *adv = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(adv, json_string(lines[i]));
    json_object_set_new(root, "advice", adv);
    if (m && m->services && m->services->nrows > 0)
        json_object_set_new(root, "services_packing", gp_study_services_json(m->services));
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    if (text) {
        gp_sbuf_add(out, text);
        gp_sbuf_addc(out, '\n');
        free(text);
    } else {
        out->oom = true;
    }
    json_decref(root);
}

/* Writes the requested outputs: each whole or not at all, none if one fails. */
static enum gp_err write_outputs(const struct gp_study_args *a, const struct gp_study *s,
                                 const struct gp_study_meta *m, struct gp_diag *d)
{
    const char *paths[2] = {a->json, a->report};
    struct gp_sbuf bufs[2];
    gp_sbuf_init(&bufs[0]);
    gp_sbuf_init(&bufs[1]);
    if (a->json)
        gp_study_json(&bufs[0], s, m);
    if (a->report)
        gp_study_html(&bufs[1], s, m);
    enum gp_err err = gp_cli_write_all(paths, bufs, 2, d);
    gp_sbuf_free(&bufs[0]);
    gp_sbuf_free(&bufs[1]);
    return err;
}

int gp_cli_sharing_study(const struct gp_study_args *args)
{
    struct gp_arena arena;
    struct gp_diag diag = {0};
    struct gp_cluster cluster;
    struct gp_workload w;
    struct gp_study study;
    enum gp_err err = GP_OK;
    gp_arena_init(&arena);
    memset(&cluster, 0, sizeof cluster); /* the openb and Philly readers set only what they know */
    memset(&w, 0, sizeof w);
    if (!args->cluster || args->nworkloads == 0) {
        err = gp_diag_set(&diag, GP_EUSAGE,
                          "--compare-sharing needs --cluster (the pools to compare) and "
                          "--workload");
        goto done;
    }
    if ((err = gp_cluster_load(args->cluster, &arena, &cluster, &diag)) != GP_OK)
        goto done;
    gp_cli_warn_cluster(&cluster);
    for (size_t i = 0; i < args->nworkloads; i++)
        if ((err = gp_workload_load(args->workloads[i], &arena, &w, &diag)) != GP_OK)
            goto done;
    if ((err = gp_workload_finish(&w, &arena, &diag)) != GP_OK)
        goto done;
    gp_cli_warn(&w);
    struct gp_sim_span *spans;
    size_t nspans;
    if ((err = gp_sim_timeline(&w, args->seed, args->horizon_s, &arena, &spans, &nspans, &diag)) !=
        GP_OK)
        goto done;
    struct gp_study_run *runs = gp_arena_alloc(&arena, (nspans ? nspans : 1) * sizeof *runs);
    if (!runs) {
        err = gp_diag_set(&diag, GP_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < nspans; i++)
        runs[i] = (struct gp_study_run){spans[i].item, spans[i].start_s, spans[i].end_s};
    if ((err = gp_study_sharing(&cluster, &w, runs, nspans, &arena, &study, &diag)) != GP_OK)
        goto done;
    struct gp_study_services services;
    if ((err = gp_study_services(&cluster, &w, &arena, &services, &diag)) != GP_OK)
        goto done;
    struct gp_study_meta m = {GP_VERSION, args->cluster,   args->workloads[0],
                              args->seed, args->horizon_s, &services};
    if ((err = write_outputs(args, &study, &m, &diag)) != GP_OK)
        goto done;
    if (!args->quiet)
        gp_study_print(stdout, &study, &m);
done:
    gp_arena_free(&arena);
    return err == GP_OK ? 0 : gp_cli_fail(err, diag.msg);
}
