/* erlang.c - Erlang B and C, the M/M/c sojourn time's distribution and the
 * percentiles of a mixture of such distributions (formulas in erlang.h). */
#include <math.h>

#include "serve/erlang.h"

/* 1 / B = sum_{j=0..c} prod_{i<j} (c - i) / a: the terms grow while
 * c - j > a and shrink after, so the sum stops once it passes 1e30 (B is
 * then below 1e-30: no request waits) or once a term is negligible; the
 * cost is O(sqrt(c)) near saturation, not O(c). */
double gp_serve_erlang_b(uint32_t c, double a)
{
    if (a <= 0)
        return c == 0 ? 1.0 : 0.0;
    double sum = 1.0, term = 1.0;
    for (uint32_t j = 1; j <= c; j++) {
        term *= (double)(c - j + 1) / a;
        sum += term;
        if (sum > 1e30 || term < 1e-17 * sum)
            break;
    }
    return 1.0 / sum;
}

double gp_serve_erlang_c(uint32_t c, double a)
{
    if (c == 0 || a >= (double)c)
        return 1.0;
    if (a <= 0)
        return 0.0;
    double b = gp_serve_erlang_b(c, a);
    double pw = (double)c * b / ((double)c - a * (1.0 - b));
    return pw < 0 ? 0 : pw > 1 ? 1 : pw;
}

double gp_serve_mmc_wait_mean_s(uint32_t c, double lambda_per_s, double mu_per_s)
{
    if (mu_per_s <= 0)
        return INFINITY;
    double theta = (double)c * mu_per_s - lambda_per_s;
    if (theta <= 0)
        return INFINITY;
    return gp_serve_erlang_c(c, lambda_per_s / mu_per_s) / theta;
}

struct gp_serve_lat gp_serve_mmc_lat(uint32_t c, double lambda_per_s, double mu_per_s,
                                     double weight)
{
    struct gp_serve_lat l = {.weight = weight, .mu_per_s = mu_per_s};
    l.theta_per_s = (double)c * mu_per_s - lambda_per_s;
    l.pw = l.theta_per_s > 0 ? gp_serve_erlang_c(c, lambda_per_s / mu_per_s) : 1.0;
    return l;
}

/* e^-x, 0 past the point where it underflows (libm's slow path) */
static double expneg(double x)
{
    return x > 700 ? 0 : exp(-x);
}

/* P(X + S > t), X ~ Exp(theta), S ~ Exp(mu) */
static double hypo_sf(double theta, double mu, double t)
{
    double d = theta - mu;
    if (fabs(d) <= 1e-9 * mu)
        return (1.0 + mu * t) * expneg(mu * t);
    double v = (theta * expneg(mu * t) - mu * expneg(theta * t)) / d;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

double gp_serve_lat_sf(const struct gp_serve_lat *l, double t_s)
{
    double t = t_s - l->offset_s;
    if (t <= 0)
        return 1.0;
    if (l->mu_per_s <= 0)
        return 1.0;
    double s = expneg(l->mu_per_s * t);
    if (l->pw <= 0)
        return s;
    if (l->theta_per_s <= 0)
        return 1.0;
    return (1.0 - l->pw) * s + l->pw * hypo_sf(l->theta_per_s, l->mu_per_s, t);
}

static double mix_sf(const struct gp_serve_lat *l, size_t n, double t)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        if (l[i].weight > 0)
            s += l[i].weight * gp_serve_lat_sf(&l[i], t);
    return s;
}

double gp_serve_lat_quantile(const struct gp_serve_lat *l, size_t n, double p)
{
    double total = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (l[i].weight <= 0)
            continue;
        total += l[i].weight;
        /* a time past which each stretch's tail is below 1e-12 of itself */
        double rate = l[i].mu_per_s;
        if (l[i].pw > 0 && l[i].theta_per_s < rate)
            rate = l[i].theta_per_s;
        double t = rate > 0 ? l[i].offset_s + 40.0 / rate : INFINITY;
        if (t > hi)
            hi = t;
    }
    if (total <= 0 || !(p > 0))
        return 0;
    if (!isfinite(hi))
        return INFINITY;
    double target = (1.0 - p) * total, lo = 0;
    for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (mix_sf(l, n, mid) > target)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

double gp_serve_mmc_quantile_s(uint32_t c, double lambda_per_s, double mu_per_s, double p)
{
    struct gp_serve_lat l = gp_serve_mmc_lat(c, lambda_per_s, mu_per_s, 1.0);
    return gp_serve_lat_quantile(&l, 1, p);
}
