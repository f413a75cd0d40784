/* dist.c - the duration distributions of the simulation hints: parsing
 * "30m", "exp(30m)", "uniform(10m,2h)", "lognormal(20m,1.0)" and drawing
 * from them with the run's seeded RNG, so that a seed fixes every sample. */
#include <math.h>
#include <string.h>

#include "io/workload.h"
#include "util/units.h"

/* Durations above this (about 31.7 years) are refused when parsed, and
 * samples are capped at it, so that no later arithmetic overflows. */
#define GP_DIST_MAX_S     1e9
#define GP_DIST_MAX_SIGMA 10.0

static bool duration(const char *s, double *out)
{
    return gp_units_duration_s(s, out) && *out >= 0 && *out <= GP_DIST_MAX_S;
}

/* Copies s[0..n) without surrounding blanks into buf. */
static bool arg(const char *s, size_t n, char *buf, size_t size)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0 || n >= size)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

bool gp_dist_parse(const char *s, struct gp_dist *out)
{
    if (!s)
        return false;
    const char *open = strchr(s, '(');
    struct gp_dist d = {GP_DIST_FIXED, 0, 0};
    if (!open) {
        if (!duration(s, &d.a))
            return false;
        *out = d;
        return true;
    }
    size_t len = strlen(s);
    if (len < 3 || s[len - 1] != ')')
        return false;
    size_t nlen = (size_t)(open - s);
    const char *args = open + 1;
    size_t alen = len - 1 - (nlen + 1);
    const char *comma = memchr(args, ',', alen);
    char a[64], b[64];
    bool two = comma != NULL;
    if (two) {
        if (memchr(comma + 1, ',', (size_t)(args + alen - comma - 1)) ||
            !arg(args, (size_t)(comma - args), a, sizeof a) ||
            !arg(comma + 1, (size_t)(args + alen - comma - 1), b, sizeof b))
            return false;
    } else if (!arg(args, alen, a, sizeof a)) {
        return false;
    }
#define NAME_IS(lit) (nlen == sizeof(lit) - 1 && memcmp(s, lit, nlen) == 0)
    if (NAME_IS("fixed") && !two) {
        d.kind = GP_DIST_FIXED;
        if (!duration(a, &d.a))
            return false;
    } else if (NAME_IS("exp") && !two) {
        d.kind = GP_DIST_EXP;
        if (!duration(a, &d.a))
            return false;
    } else if (NAME_IS("uniform") && two) {
        d.kind = GP_DIST_UNIFORM;
        if (!duration(a, &d.a) || !duration(b, &d.b) || d.a > d.b)
            return false;
    } else if (NAME_IS("lognormal") && two) {
        d.kind = GP_DIST_LOGNORMAL;
        if (!duration(a, &d.a) || !gp_units_number(b, &d.b) || !(d.b >= 0) ||
            d.b > GP_DIST_MAX_SIGMA)
            return false;
    } else {
        return false;
    }
#undef NAME_IS
    *out = d;
    return true;
}

double gp_dist_sample(const struct gp_dist *d, struct gp_rng *r)
{
    double v;
    switch (d->kind) {
    case GP_DIST_EXP:
        v = gp_rng_exp(r, d->a);
        break;
    case GP_DIST_UNIFORM:
        v = d->a + (d->b - d->a) * gp_rng_unit(r);
        break;
    case GP_DIST_LOGNORMAL:
        v = d->a * exp(d->b * gp_rng_normal(r));
        break;
    case GP_DIST_FIXED:
    default:
        v = d->a;
        break;
    }
    if (!(v >= 0))
        return 0;
    return v > GP_DIST_MAX_S ? GP_DIST_MAX_S : v;
}
