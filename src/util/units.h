/* units.h - parsers for the quantities users write: Kubernetes resource
 * quantities ("500m", "8", "80Gi", "1.5G", "129e6") and durations ("90s", "2h30m",
 * "1d", "45"). Each returns false on anything it does not fully consume. */
#ifndef GP_UTIL_UNITS_H
#define GP_UTIL_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* The largest value the quantity readers return (millicores, MiB). */
#define GP_UNITS_QTY_MAX 1000000000000000LL /* 10^15 */

enum gp_units_qty {
    GP_UNITS_QTY_OK,
    GP_UNITS_QTY_SYNTAX,   /* not quantity.go's grammar */
    GP_UNITS_QTY_RANGE,    /* above max (or more than 100 digits) */
    GP_UNITS_QTY_NEGATIVE, /* parsed into *out, but below 0 */
};

/* A Kubernetes quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go:
 * "<signedNumber><suffix>", suffix a binarySI Ki..Ei, a decimalSI n u m ""
 * k M G T P E, or a decimal exponent e<n>/E<n>) times 10^out_exp10 /
 * 2^out_div2, rounded away from zero as Quantity.ScaledValue rounds
 * (MilliValue: out_exp10 3; Value: 0; MiB: out_div2 20), |*out| <= max.
 * out_exp10 in 0..3, out_div2 in 0..20. */
enum gp_units_qty gp_units_quantity(const char *s, int out_exp10, int out_div2, int64_t max,
                                    int64_t *out);
/* What a result other than GP_UNITS_QTY_OK means, in a few words. */
const char *gp_units_quantity_why(enum gp_units_qty q);
/* CPU quantity to millicores: "2" -> 2000, "500m" -> 500, "1.5" -> 1500,
 * "1e0" -> 1000, "2000000n" -> 2 (non-negative, up to GP_UNITS_QTY_MAX). */
bool gp_units_cpu_milli(const char *s, int64_t *out);
/* Memory quantity to MiB (rounded up): "80Gi" -> 81920, "512Mi" -> 512,
 * "1G" -> 954, "1073741824" -> 1024, "129e6" -> 124. */
bool gp_units_mem_mib(const char *s, int64_t *out);
/* A whole non-negative quantity (an extended resource: "2", "2e0",
 * "2000m"), as the API server's validation wants extended resources. */
bool gp_units_count(const char *s, int64_t *out);
/* Duration to seconds: "90s", "15m", "2h30m", "1d", "1.5h", a bare number is
 * seconds. Negative durations are rejected. */
bool gp_units_duration_s(const char *s, double *out);
/* A non-negative integer that fits in int64 ("12"; no sign, no fraction). */
bool gp_units_uint(const char *s, int64_t *out);
/* A finite decimal number ("0.05", "3", "-1.5e3"). */
bool gp_units_number(const char *s, double *out);

#endif
