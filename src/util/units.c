/* units.c - quantity and duration parsers: Kubernetes resource quantities
 * in full (quantity.go's grammar, exact, rounded as Kubernetes rounds),
 * durations, plain numbers. */
#include "util/units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool gp_units_number(const char *s, double *out)
{
    if (!s || !*s || strchr(" \t\n", s[0]))
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return false;
    /* strtod accepts hex floats, "inf" and "nan": take decimal only */
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789.eE+-", *p))
            return false;
    *out = v;
    return true;
}

bool gp_units_uint(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    int64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        if (v > (INT64_MAX - (*p - '0')) / 10)
            return false;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return true;
}

/* Splits "1.5Gi" into a non-negative decimal number and a suffix (the
 * durations' number). */
static bool split_quantity(const char *s, double *num, const char **suffix)
{
    if (!s || !*s)
        return false;
    const char *p = s;
    size_t digits = 0;
    bool dot = false;
    while (*p && ((*p >= '0' && *p <= '9') || (*p == '.' && !dot))) {
        if (*p == '.')
            dot = true;
        else
            digits++;
        p++;
    }
    if (digits == 0 || p - s > 40)
        return false;
    char tmp[48];
    memcpy(tmp, s, (size_t)(p - s));
    tmp[p - s] = '\0';
    *num = strtod(tmp, NULL);
    *suffix = p;
    return isfinite(*num);
}

/* --- Kubernetes quantities ----------------------------------------------- */

/* The grammar and rounding of k8s.io/apimachinery/pkg/api/resource
 * (quantity.go ParseQuantity, suffix.go): a signed number (digits, a dot,
 * digits; at least one digit), then a binarySI suffix (Ki Mi Gi Ti Pi Ei),
 * a decimalSI one (n u m "" k M G T P E) or a decimal exponent (e or E, an
 * optional sign, digits). The value is exact: digits kept as digits, the
 * suffix applied, rounded away from zero to 10^-9 as ParseQuantity does,
 * then scaled and rounded away from zero again as ScaledValue (Value,
 * MilliValue) does. Bounded: at most QTY_DIGITS digits; a result above
 * max is GP_UNITS_QTY_RANGE, not Kubernetes' cap at 2^63-1. */
#define QTY_DIGITS 100
#define QTY_BUF    (QTY_DIGITS + 64)

struct decimal {
    char d[QTY_BUF]; /* digits, most significant first, no leading zeros */
    size_t n;        /* 0: the value 0 */
    int scale;       /* value = d * 10^-scale */
};

static void dec_trim(struct decimal *x)
{
    size_t z = 0;
    while (z < x->n && x->d[z] == 0)
        z++;
    memmove(x->d, x->d + z, x->n - z);
    x->n -= z;
}

/* x *= m (m <= 2^60: digit * m + carry stays below 2^64). */
static bool dec_mul(struct decimal *x, uint64_t m)
{
    uint64_t carry = 0;
    for (size_t i = x->n; i-- > 0;) {
        uint64_t v = (uint64_t)x->d[i] * m + carry;
        x->d[i] = (char)(v % 10);
        carry = v / 10;
    }
    char head[24];
    size_t h = 0;
    for (; carry; carry /= 10)
        head[h++] = (char)(carry % 10);
    if (x->n + h > QTY_BUF)
        return false;
    memmove(x->d + h, x->d, x->n);
    for (size_t i = 0; i < h; i++)
        x->d[i] = head[h - 1 - i];
    x->n += h;
    return true;
}

/* x = ceil(x / m) for m <= ~1e17 (remainder * 10 + 9 below 2^64). */
static void dec_div_up(struct decimal *x, uint64_t m)
{
    uint64_t rem = 0;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t v = rem * 10 + (uint64_t)x->d[i];
        x->d[i] = (char)(v / m);
        rem = v % m;
    }
    dec_trim(x);
    if (rem) { /* + 1 */
        size_t i = x->n;
        while (i > 0 && x->d[i - 1] == 9)
            x->d[--i] = 0;
        if (i == 0) {
            memmove(x->d + 1, x->d, x->n);
            x->d[0] = 1;
            x->n++;
        } else {
            x->d[i - 1]++;
        }
    }
}

/* The suffix: value *= 10^*exp10 * 2^*exp2. */
static bool qty_suffix(const char *s, int64_t *exp10, int *exp2)
{
    static const struct {
        const char *suffix;
        int exp10, exp2;
    } table[] = {
        {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
        {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
        {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(s, table[i].suffix) == 0) {
            *exp10 = table[i].exp10;
            *exp2 = table[i].exp2;
            return true;
        }
    if (s[0] != 'e' && s[0] != 'E') /* a decimal exponent: e3, E-2, e+6 */
        return false;
    const char *p = s + 1 + (s[1] == '+' || s[1] == '-');
    if (!*p)
        return false;
    int64_t e = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        if (e < 100000000) /* beyond it: 0 or out of range whatever the digits */
            e = e * 10 + (*p - '0');
    }
    *exp10 = s[1] == '-' ? -e : e;
    *exp2 = 0;
    return true;
}

enum gp_units_qty gp_units_quantity(const char *s, int out_exp10, int out_div2, int64_t max,
                                    int64_t *out)
{
    if (!s || !*s)
        return GP_UNITS_QTY_SYNTAX;
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    struct decimal x = {.n = 0, .scale = 0};
    size_t digits = 0;
    bool dot = false;
    for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
        if (*p == '.') {
            dot = true;
            continue;
        }
        if (++digits > QTY_DIGITS)
            return GP_UNITS_QTY_RANGE;
        if (x.n || *p != '0')
            x.d[x.n++] = (char)(*p - '0');
        if (dot)
            x.scale++;
    }
    int64_t exp10;
    int exp2;
    if (digits == 0 || !qty_suffix(p, &exp10, &exp2))
        return GP_UNITS_QTY_SYNTAX;
    if (x.n == 0) {
        *out = 0;
        return GP_UNITS_QTY_OK;
    }
    if (exp2 && !dec_mul(&x, (uint64_t)1 << exp2)) /* binarySI: exact */
        return GP_UNITS_QTY_RANGE;
    /* the decimal point moves by exp10 + out_exp10: past 40 digits of
     * integer part, out of range; below 10^-9, rounded up (ParseQuantity's
     * Round(Nano, RoundUp)) */
    int64_t scale = (int64_t)x.scale - exp10;
    if ((int64_t)x.n - scale > 40)
        return GP_UNITS_QTY_RANGE;
    if (scale > 9) {
        int64_t cut = scale - 9;
        bool rest = false;
        if (cut >= (int64_t)x.n) {
            rest = true;
            x.n = 0;
        } else {
            for (size_t i = x.n - (size_t)cut; i < x.n; i++)
                rest = rest || x.d[i];
            x.n -= (size_t)cut;
        }
        scale = 9;
        if (rest) { /* + 1 at the last digit kept */
            if (x.n == 0)
                x.d[x.n++] = 0;
            size_t i = x.n;
            while (i > 0 && x.d[i - 1] == 9)
                x.d[--i] = 0;
            if (i == 0) {
                memmove(x.d + 1, x.d, x.n);
                x.d[0] = 1;
                x.n++;
            } else {
                x.d[i - 1]++;
            }
        }
    }
    scale -= out_exp10;
    for (; scale < 0; scale++) /* (x.n + 40 + out_exp10 fits QTY_BUF) */
        x.d[x.n++] = 0;
    uint64_t div = (uint64_t)1 << out_div2;
    for (; scale > 0; scale--)
        div *= 10;
    dec_div_up(&x, div); /* ScaledValue: rounded up */
    int64_t v = 0;
    for (size_t i = 0; i < x.n; i++) {
        if (v > (max - x.d[i]) / 10)
            return GP_UNITS_QTY_RANGE;
        v = v * 10 + x.d[i];
    }
    *out = neg ? -v : v;
    return neg && v ? GP_UNITS_QTY_NEGATIVE : GP_UNITS_QTY_OK;
}

const char *gp_units_quantity_why(enum gp_units_qty q)
{
    switch (q) {
    case GP_UNITS_QTY_OK:
        return "a quantity";
    case GP_UNITS_QTY_SYNTAX:
        return "not a Kubernetes quantity";
    case GP_UNITS_QTY_RANGE:
        return "out of range";
    case GP_UNITS_QTY_NEGATIVE:
        return "negative";
    }
    return "not a Kubernetes quantity";
}

bool gp_units_cpu_milli(const char *s, int64_t *out)
{
    return gp_units_quantity(s, 3, 0, GP_UNITS_QTY_MAX, out) == GP_UNITS_QTY_OK;
}

bool gp_units_mem_mib(const char *s, int64_t *out)
{
    return gp_units_quantity(s, 0, 20, GP_UNITS_QTY_MAX, out) == GP_UNITS_QTY_OK;
}

bool gp_units_count(const char *s, int64_t *out)
{
    int64_t milli;
    if (gp_units_quantity(s, 3, 0, GP_UNITS_QTY_MAX, &milli) != GP_UNITS_QTY_OK || milli % 1000)
        return false;
    *out = milli / 1000;
    return true;
}

bool gp_units_duration_s(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    double total = 0;
    const char *p = s;
    double v;
    const char *suf;
    if (!split_quantity(p, &v, &suf))
        return false;
    if (*suf == '\0') { /* bare number: seconds */
        *out = v;
        return true;
    }
    for (;;) {
        double mult;
        switch (*suf) {
        case 'd':
            mult = 86400;
            break;
        case 'h':
            mult = 3600;
            break;
        case 'm':
            if (suf[1] == 's') {
                mult = 0.001;
                suf++;
            } else {
                mult = 60;
            }
            break;
        case 's':
            mult = 1;
            break;
        default:
            return false;
        }
        total += v * mult;
        p = suf + 1;
        if (*p == '\0')
            break;
        if (!split_quantity(p, &v, &suf) || *suf == '\0')
            return false;
    }
    if (!isfinite(total))
        return false;
    *out = total;
    return true;
}
