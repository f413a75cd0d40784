/* units.c - quantity and duration parsers. */
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

/* Splits "1.5Gi" into a non-negative decimal number and a suffix. */
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

bool gp_units_cpu_milli(const char *s, int64_t *out)
{
    double v;
    const char *suf;
    if (!split_quantity(s, &v, &suf))
        return false;
    double milli;
    if (*suf == '\0')
        milli = v * 1000.0;
    else if (strcmp(suf, "m") == 0)
        milli = v;
    else
        return false;
    if (milli > 1e15)
        return false;
    *out = (int64_t)ceil(milli - 1e-9);
    return true;
}

bool gp_units_mem_mib(const char *s, int64_t *out)
{
    static const struct {
        const char *suffix;
        double bytes;
    } units[] = {
        {"", 1.0},
        {"k", 1e3},
        {"M", 1e6},
        {"G", 1e9},
        {"T", 1e12},
        {"P", 1e15},
        {"Ki", 1024.0},
        {"Mi", 1048576.0},
        {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0},
        {"Pi", 1125899906842624.0},
    };
    double v;
    const char *suf;
    if (!split_quantity(s, &v, &suf))
        return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(suf, units[i].suffix) == 0) {
            double mib = v * units[i].bytes / 1048576.0;
            if (mib > 1e15)
                return false;
            *out = (int64_t)ceil(mib - 1e-9);
            return true;
        }
    }
    return false;
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
