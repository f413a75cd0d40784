/* units.h - parsers for the quantities users write: Kubernetes resource
 * quantities ("500m", "8", "80Gi", "1.5G") and durations ("90s", "2h30m",
 * "1d", "45"). Each returns false on anything it does not fully consume. */
#ifndef GP_UTIL_UNITS_H
#define GP_UTIL_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* CPU quantity to millicores: "2" -> 2000, "500m" -> 500, "1.5" -> 1500. */
bool gp_units_cpu_milli(const char *s, int64_t *out);
/* Memory quantity to MiB (rounded up): "80Gi" -> 81920, "512Mi" -> 512,
 * "1G" -> 954, "1073741824" -> 1024. */
bool gp_units_mem_mib(const char *s, int64_t *out);
/* Duration to seconds: "90s", "15m", "2h30m", "1d", "1.5h", a bare number is
 * seconds. Negative durations are rejected. */
bool gp_units_duration_s(const char *s, double *out);
/* A non-negative integer that fits in int64 ("12"; no sign, no fraction). */
bool gp_units_uint(const char *s, int64_t *out);
/* A finite decimal number ("0.05", "3", "-1.5e3"). */
bool gp_units_number(const char *s, double *out);

#endif
