/* service_load.c - an inference service's offered load: its mean rate over
 * a stretch of time for each kind (constant, diurnal, spikes, a CSV
 * series, a request trace), and the readers of the series and of a trace
 * in the Azure LLM inference trace's format (TIMESTAMP,ContextTokens,
 * GeneratedTokens; ../shared/data/azure-llm-2023, CC BY 4.0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "io/service.h"
#include "util/vec.h"

#define TWO_PI 6.28318530717958647692

/* the seconds of [a0, a1) within [b0, b1) */
static double overlap(double a0, double a1, double b0, double b1)
{
    double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

static double spikes_mean(const struct gp_load *l, double t0, double t1)
{
    double in = 0;
    if (l->every_s > 0 && l->length_s > 0) {
        double k0 = floor((t0 - l->first_s) / l->every_s) - 1;
        double k1 = ceil((t1 - l->first_s) / l->every_s);
        if (k0 < 0)
            k0 = 0;
        for (double k = k0; k <= k1; k++) {
            double s = l->first_s + k * l->every_s;
            in += overlap(t0, t1, s, s + l->length_s);
        }
    } else if (l->length_s > 0) { /* one spike */
        in = overlap(t0, t1, l->first_s, l->first_s + l->length_s);
    }
    return l->rps + l->spike_rps * in / (t1 - t0);
}

static double series_mean(const struct gp_load *l, double t0, double t1)
{
    size_t n = l->nseries, lo = 0, hi = n;
    while (lo < hi) { /* the first row after t0 */
        size_t mid = (lo + hi) / 2;
        if (l->series_t[mid] <= t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    double sum = 0;
    for (size_t i = lo ? lo - 1 : 0; i < n && l->series_t[i] < t1; i++) {
        double end = i + 1 < n ? l->series_t[i + 1] : INFINITY;
        sum += l->series_rps[i] * overlap(t0, t1, l->series_t[i], end);
    }
    return l->scale * sum / (t1 - t0);
}

static double trace_mean(const struct gp_load *l, double t0, double t1, double *in, double *out)
{
    if (!(l->step_s > 0) || l->nbins == 0)
        return 0;
    double b0 = floor(t0 / l->step_s), b1 = ceil(t1 / l->step_s);
    if (b0 < 0)
        b0 = 0;
    double req = 0, tin = 0, tout = 0;
    for (double b = b0; b < b1 && b < (double)l->nbins; b++) {
        size_t i = (size_t)b;
        double f = overlap(t0, t1, b * l->step_s, (b + 1) * l->step_s) / l->step_s;
        req += f * l->bin_req[i];
        tin += f * l->bin_in[i];
        tout += f * l->bin_out[i];
    }
    if (req > 0) {
        *in = tin / req;
        *out = tout / req;
    }
    return l->scale * req / (t1 - t0);
}

double gp_load_mean(const struct gp_load *l, double t0_s, double t1_s, double *in, double *out)
{
    if (!(t1_s > t0_s))
        return 0;
    switch (l->kind) {
    case GP_LOAD_CONSTANT:
        return l->rps;
    case GP_LOAD_DIURNAL: {
        double p = l->period_s > 0 ? l->period_s : 86400;
        double w = TWO_PI / p;
        double integral = (sin(w * (t1_s - l->peak_s)) - sin(w * (t0_s - l->peak_s))) / w;
        double v = l->rps * (1.0 + l->amplitude * integral / (t1_s - t0_s));
        return v > 0 ? v : 0;
    }
    case GP_LOAD_SPIKES:
        return spikes_mean(l, t0_s, t1_s);
    case GP_LOAD_SERIES:
        return series_mean(l, t0_s, t1_s);
    case GP_LOAD_TRACE:
        return trace_mean(l, t0_s, t1_s, in, out);
    }
    return 0;
}

double gp_load_peak(const struct gp_load *l, double window_s)
{
    switch (l->kind) {
    case GP_LOAD_CONSTANT:
        return l->rps;
    case GP_LOAD_DIURNAL:
        return l->rps * (1.0 + l->amplitude);
    case GP_LOAD_SPIKES:
        return l->rps + (l->length_s > 0 ? l->spike_rps : 0);
    case GP_LOAD_SERIES:
    case GP_LOAD_TRACE:
        break;
    }
    double end = l->kind == GP_LOAD_SERIES ? (l->nseries ? l->series_t[l->nseries - 1] : 0)
                                           : (double)l->nbins * l->step_s;
    double peak = 0;
    if (l->kind == GP_LOAD_SERIES) /* the last row's rate holds from then on */
        for (size_t i = 0; i < l->nseries; i++)
            if (l->scale * l->series_rps[i] > peak)
                peak = l->scale * l->series_rps[i];
    if (l->kind == GP_LOAD_TRACE && window_s > 0)
        for (double t = 0; t < end; t += window_s) {
            double in = 0, out = 0;
            double v = gp_load_mean(l, t, t + window_s, &in, &out);
            if (v > peak)
                peak = v;
        }
    return peak;
}

/* days since 1970-01-01 of a civil date (Howard Hinnant's algorithm) */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DD HH:MM:SS[.fraction]" to seconds since 1970 */
static bool parse_stamp(const char *s, double *out)
{
    int y, mo, d, h, mi, n = 0;
    double sec;
    if (sscanf(s, "%4d-%2d-%2d %2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || s[n] != '\0')
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || !(sec >= 0 && sec < 61))
        return false;
    *out = (double)days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + sec;
    return true;
}

#define MAX_TRACE_S (366.0 * 86400.0)

enum gp_err gp_load_parse_trace(const char *text, size_t len, const char *name, double step_s,
                                struct gp_arena *a, struct gp_load *out, struct gp_diag *diag)
{
    static const struct gp_csv_col cols[] = {
        {"TIMESTAMP", true}, {"ContextTokens", true}, {"GeneratedTokens", true}};
    struct gp_csv c;
    gp_csv_init(&c, text, len, name);
    int idx[3];
    enum gp_err err = gp_csv_header(&c, cols, 3, 0, idx, diag);
    GP_VEC(double) req = {0}, tin = {0}, tout = {0};
    double first = 0, last = -INFINITY;
    uint64_t n = 0;
    bool got;
    while (err == GP_OK && (err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        double t, ctx, gen;
        if (!parse_stamp(gp_csv_field(&c, idx[0]), &t)) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[0], "TIMESTAMP",
                             "a time \"YYYY-MM-DD HH:MM:SS.fffffff\"", diag);
            break;
        }
        if ((err = gp_csv_number(&c, idx[1], "ContextTokens", 0, 1e7, &ctx, diag)) != GP_OK ||
            (err = gp_csv_number(&c, idx[2], "GeneratedTokens", 0, 1e7, &gen, diag)) != GP_OK)
            break;
        if (n == 0)
            first = t;
        if (t < last) {
            err = gp_csv_fail(&c, GP_EINVALID, diag,
                              "column 'TIMESTAMP': rows must be in time order (this one is "
                              "%.3f s before the row above)",
                              last - t);
            break;
        }
        last = t;
        double rel = t - first;
        if (rel > MAX_TRACE_S) {
            err = gp_csv_fail(&c, GP_EINVALID, diag,
                              "column 'TIMESTAMP': more than a year after the first row");
            break;
        }
        size_t b = (size_t)(rel / step_s);
        while (req.len <= b)
            if (GP_VEC_PUSH(&req, 0.0) != 0 || GP_VEC_PUSH(&tin, 0.0) != 0 ||
                GP_VEC_PUSH(&tout, 0.0) != 0) {
                err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
                goto out;
            }
        req.items[b] += 1;
        tin.items[b] += ctx;
        tout.items[b] += gen;
        n++;
    }
    if (err == GP_OK && n == 0)
        err = gp_diag_set(diag, GP_EINVALID, "%s: a trace without requests", name);
    if (err == GP_OK) {
        out->step_s = step_s;
        out->nbins = req.len;
        out->trace_requests = n;
        out->bin_req = gp_arena_alloc(a, req.len * sizeof(double));
        out->bin_in = gp_arena_alloc(a, req.len * sizeof(double));
        out->bin_out = gp_arena_alloc(a, req.len * sizeof(double));
        if (!out->bin_req || !out->bin_in || !out->bin_out) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            goto out;
        }
        memcpy(out->bin_req, req.items, req.len * sizeof(double));
        memcpy(out->bin_in, tin.items, req.len * sizeof(double));
        memcpy(out->bin_out, tout.items, req.len * sizeof(double));
    }
out:
    GP_VEC_FREE(&req);
    GP_VEC_FREE(&tin);
    GP_VEC_FREE(&tout);
    gp_csv_free(&c);
    return err;
}

enum gp_err gp_load_parse_series(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_load *out, struct gp_diag *diag)
{
    static const struct gp_csv_col cols[] = {{"t_s", true}, {"rps", true}};
    struct gp_csv c;
    gp_csv_init(&c, text, len, name);
    int idx[2];
    enum gp_err err = gp_csv_header(&c, cols, 2, 0, idx, diag);
    GP_VEC(double) ts = {0}, rs = {0};
    bool got;
    while (err == GP_OK && (err = gp_csv_next(&c, &got, diag)) == GP_OK && got) {
        double t, r;
        if ((err = gp_csv_number(&c, idx[0], "t_s", 0, MAX_TRACE_S, &t, diag)) != GP_OK ||
            (err = gp_csv_number(&c, idx[1], "rps", 0, 1e9, &r, diag)) != GP_OK)
            break;
        if (ts.len && t <= ts.items[ts.len - 1]) {
            err = gp_csv_bad(&c, GP_EINVALID, idx[0], "t_s", "a time after the row above's", diag);
            break;
        }
        if (GP_VEC_PUSH(&ts, t) != 0 || GP_VEC_PUSH(&rs, r) != 0) {
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
            break;
        }
    }
    if (err == GP_OK && ts.len == 0)
        err = gp_diag_set(diag, GP_EINVALID, "%s: a series without rows", name);
    if (err == GP_OK) {
        out->nseries = ts.len;
        out->series_t = gp_arena_alloc(a, ts.len * sizeof(double));
        out->series_rps = gp_arena_alloc(a, ts.len * sizeof(double));
        if (!out->series_t || !out->series_rps)
            err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", name);
        else {
            memcpy(out->series_t, ts.items, ts.len * sizeof(double));
            memcpy(out->series_rps, rs.items, ts.len * sizeof(double));
        }
    }
    GP_VEC_FREE(&ts);
    GP_VEC_FREE(&rs);
    gp_csv_free(&c);
    return err;
}

enum gp_err gp_workload_add_service(struct gp_workload *w, struct gp_arena *a,
                                    const struct gp_service *s)
{
    if (w->nservices == w->services_cap) {
        size_t cap = w->services_cap ? 2 * w->services_cap : 4;
        struct gp_service *p = gp_arena_alloc(a, cap * sizeof *p);
        if (!p)
            return GP_ENOMEM;
        if (w->nservices)
            memcpy(p, w->services, w->nservices * sizeof *p);
        w->services = p;
        w->services_cap = cap;
    }
    w->services[w->nservices++] = *s;
    return GP_OK;
}
