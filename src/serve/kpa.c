/* kpa.c - the Knative-style concurrency autoscaler: windowed averages,
 * panic mode, rate limits and scale to zero after a grace period (see
 * kpa.h; written from knative/serving's documented behaviour). */
#include <math.h>
#include <string.h>

#include "serve/kpa.h"

void gp_serve_kpa_spec_default(struct gp_kpa_spec *s)
{
    *s = (struct gp_kpa_spec){
        .target = GP_KPA_TARGET * GP_KPA_UTILISATION,
        .stable_s = GP_KPA_STABLE_S,
        .panic_pct = GP_KPA_PANIC_PCT,
        .panic_thresh = GP_KPA_PANIC_THRESH,
        .up_rate = GP_KPA_UP_RATE,
        .down_rate = GP_KPA_DOWN_RATE,
        .grace_s = GP_KPA_GRACE_S,
        .min_scale = 0,
        .max_scale = 0,
        .scale_to_zero = true,
    };
}

void gp_serve_kpa_init(struct gp_kpa_state *st)
{
    memset(st, 0, sizeof *st);
    st->last_sec = -1;
    st->panic_since_s = -1;
    st->zero_since_s = -1;
}

static int32_t window_len(const struct gp_kpa_spec *s)
{
    int32_t w = s->stable_s;
    return w < 1 ? 1 : w > GP_KPA_MAX_WINDOW_S ? GP_KPA_MAX_WINDOW_S : w;
}

/* advances the ring to second `sec`, zeroing the seconds skipped */
static void advance(const struct gp_kpa_spec *s, struct gp_kpa_state *st, int64_t sec)
{
    int32_t w = window_len(s);
    if (st->last_sec < 0) {
        st->last_sec = st->first_sec = sec;
        return;
    }
    if (sec <= st->last_sec)
        return;
    int64_t gap = sec - st->last_sec;
    if (gap >= w) {
        memset(st->bucket, 0, sizeof st->bucket);
    } else {
        for (int64_t k = st->last_sec + 1; k <= sec; k++)
            st->bucket[k % w] = 0;
    }
    st->last_sec = sec;
}

void gp_serve_kpa_record(const struct gp_kpa_spec *s, struct gp_kpa_state *st, double t0_s,
                         double t1_s, double concurrency)
{
    int32_t w = window_len(s);
    if (!(t1_s > t0_s))
        return;
    st->seen = true;
    double t = t0_s;
    while (t < t1_s) {
        int64_t sec = (int64_t)floor(t);
        double end = (double)(sec + 1) < t1_s ? (double)(sec + 1) : t1_s;
        if (t1_s - t > w + 1) { /* only the last window matters */
            t = t1_s - w - 1;
            continue;
        }
        advance(s, st, sec);
        st->bucket[sec % w] += concurrency * (end - t);
        t = end;
    }
}

double gp_serve_kpa_average(const struct gp_kpa_spec *s, const struct gp_kpa_state *st,
                            double now_s, double window_s)
{
    int32_t w = window_len(s);
    int64_t n = (int64_t)ceil(window_s);
    if (n < 1)
        n = 1;
    if (n > w)
        n = w;
    int64_t now_sec = (int64_t)floor(now_s); /* the seconds before now_sec are whole */
    if (st->last_sec >= 0 && now_sec - st->first_sec < n)
        n = now_sec - st->first_sec;
    if (n < 1)
        return 0;
    double sum = 0;
    for (int64_t k = now_sec - n; k < now_sec; k++) {
        if (k < 0 || k > st->last_sec || st->last_sec - k >= w)
            continue;
        sum += st->bucket[k % w];
    }
    return sum / (double)n;
}

struct gp_kpa_decision gp_serve_kpa_decide(const struct gp_kpa_spec *s, struct gp_kpa_state *st,
                                           double now_s, int32_t ready, int32_t current)
{
    struct gp_kpa_decision d = {.replicas = current};
    if (!st->seen || !(s->target > 0))
        return d; /* no data yet: no decision */
    double stable_w = window_len(s);
    double panic_w = stable_w * s->panic_pct / 100.0;
    d.stable = gp_serve_kpa_average(s, st, now_s, stable_w);
    d.panic = gp_serve_kpa_average(s, st, now_s, panic_w);
    double rp = ready > 1 ? ready : 1;
    double max_up = ceil(s->up_rate * rp), max_down = floor(rp / s->down_rate);
    double dspc = ceil(d.stable / s->target), dppc = ceil(d.panic / s->target);
    double stable_n = fmin(fmax(dspc, max_down), max_up);
    double panic_n = fmin(fmax(dppc, max_down), max_up);
    /* a request seen in the window brings at least one replica back */
    if (d.stable > 0 && stable_n < 1)
        stable_n = 1;
    if (d.panic > 0 && panic_n < 1)
        panic_n = 1;
    bool over = dppc / rp >= s->panic_thresh;
    if (over)
        st->panic_since_s = now_s;
    else if (st->panic_since_s >= 0 && st->panic_since_s + stable_w <= now_s) {
        st->panic_since_s = -1;
        st->max_panic = 0;
    }
    int32_t want = (int32_t)stable_n;
    if (st->panic_since_s >= 0) {
        d.panicking = true;
        if (want < (int32_t)panic_n)
            want = (int32_t)panic_n;
        if (want > st->max_panic)
            st->max_panic = want;
        want = st->max_panic;
    }
    if (s->max_scale > 0 && want > s->max_scale)
        want = s->max_scale;
    int32_t floor_n = s->min_scale > 0 ? s->min_scale : (s->scale_to_zero ? 0 : 1);
    if (want < floor_n)
        want = floor_n;
    /* scale to zero only after the grace period with nothing to do */
    if (want == 0 && current > 0) {
        if (st->zero_since_s < 0)
            st->zero_since_s = now_s;
        if (now_s - st->zero_since_s < s->grace_s)
            want = current < 1 ? current : 1;
    } else if (want > 0) {
        st->zero_since_s = -1;
    }
    d.replicas = want;
    return d;
}
