/* providers_out.h - the outputs of `gpuplane providers`: the two tables
 * (providers, offers with their prices' dates, ages and numbered sources)
 * and the JSON array (docs/FORMATS.md, "gpuplane providers --json"). */
#ifndef GP_CLI_PROVIDERS_OUT_H
#define GP_CLI_PROVIDERS_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/catalog.h"
#include "util/err.h"
#include "util/sbuf.h"

/* What to show: the rows kept, in order, and how they were chosen. */
struct gp_providers_view {
    const struct gp_catalog_row *rows;
    size_t n;
    const struct gp_catalog_filter *filter;
    const struct gp_user_offers *user; /* NULL: no --offers */
    const char *today;                 /* YYYY-MM-DD */
    int64_t stale_days;
    bool sorted; /* providers in the order of their first row, not the catalog's */
};

void gp_providers_text(const struct gp_providers_view *v, struct gp_sbuf *out);
enum gp_err gp_providers_json(const struct gp_providers_view *v, struct gp_sbuf *out,
                              struct gp_diag *d);

#endif
