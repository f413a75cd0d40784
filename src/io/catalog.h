/* catalog.h - the provider catalog (io/providers.h, compiled from
 * data/providers.json) as rows a user can list, filter and sort, with the
 * user's own offers (negotiated prices, reservations at their marginal
 * cost) read from an offers file and laid over it: an offer of the
 * catalog that the file names again takes the file's prices; any other is
 * added. Every row keeps its price's date and source, and its age in days
 * against a given today.
 *
 * Ownership: rows and user offers live in the caller's arena; they borrow
 * the catalog's constant strings and the file's strings (in the arena). */
#ifndef GP_IO_CATALOG_H
#define GP_IO_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/providers.h"
#include "util/arena.h"
#include "util/err.h"

/* One offer of a user's offers file (docs/FORMATS.md, "Offers file"). */
struct gp_user_offer {
    struct gp_offer offer; /* provider: a catalog provider's id */
    const char *pricing;   /* "negotiated", "reserved" or "list" */
    const char *note;      /* "" when none */
    const char *origin;    /* "FILE:LINE" of the entry */
    /* the catalog offer it replaces (index into gp_offers); -1: a new one */
    long replaces;
};

struct gp_user_offers {
    const char *file;
    struct gp_user_offer *items;
    size_t n;
};

/* Reads an offers file: YAML (JSON is YAML), apiVersion gpuplane.io/v1,
 * kind Offers, checked as strictly as a Cluster spec: an unknown field is
 * an error with "did you mean", and so is an unknown provider; a missing
 * required field, a bad date or number, an entry that names a catalog
 * offer ambiguously, two entries for one offer, a price dated after
 * today_days (days since 1970-01-01; < 0: not checked). Errors are one
 * line, "FILE:LINE:COL: PATH: ...", GP_EINVALID (exit 2); a missing file
 * is GP_ENOTFOUND. */
enum gp_err gp_catalog_offers_load(const char *path, int64_t today_days, struct gp_arena *a,
                                   struct gp_user_offers *out, struct gp_diag *diag);
/* The same on text already read; name is the file's name in messages. */
enum gp_err gp_catalog_offers_parse(const char *text, size_t len, const char *name,
                                    int64_t today_days, struct gp_arena *a,
                                    struct gp_user_offers *out, struct gp_diag *diag);

/* One row: a provider's offer, the catalog's or the user's. */
struct gp_catalog_row {
    const struct gp_provider *provider;
    const struct gp_offer *offer;
    const struct gp_user_offer *user; /* NULL: the catalog's */
    size_t order;                     /* catalog order, the tie-break of every sort */
    int64_t age_days;                 /* today less price_date; -1 when it has no date */
    bool stale;                       /* age_days > the stale limit */
};

/* The catalog's offers with the user's laid over them (user may be NULL),
 * in catalog order, the user's new offers after their provider's; age and
 * staleness against today (days since 1970-01-01) and stale_days. */
enum gp_err gp_catalog_rows(const struct gp_user_offers *user, int64_t today_days,
                            int64_t stale_days, struct gp_arena *a, struct gp_catalog_row **out,
                            size_t *n, struct gp_diag *diag);

/* What rows to keep; a zeroed filter (with prices < 0) keeps every row. */
struct gp_catalog_filter {
    unsigned kube_mask;  /* bits 1 << enum gp_kube_support; 0 = any */
    const char *gpu;     /* a GPU model (gp_offer_gpu_matches); NULL = any */
    uint32_t min_mem_gb; /* per GPU, at least; 0 = any */
    uint32_t gpus;       /* GPUs per node, exactly; 0 = any */
    unsigned sharing;    /* bits 1 << enum gp_catalog_sharing the provider must allow */
    const char *fabric;  /* interconnect: a word of its text (any case), "any"; NULL = any */
    bool rwx, spot, scale_to_zero, drivers; /* must be yes (spot: or a spot price) */
    bool user_only;                         /* only the user's rows */
    double min_price, max_price;            /* on demand, USD per GPU-hour; < 0 = no bound */
};

enum gp_catalog_sharing {
    GP_CATALOG_SHARE_TIMESLICE,
    GP_CATALOG_SHARE_MPS,
    GP_CATALOG_SHARE_MIG,
};

/* Whether a row passes every term; a provider every provider term (Kubernetes,
 * sharing, fabric, storage, scale to zero, drivers); whether a filter has
 * terms on offers (a provider without a matching offer is then left out). */
bool gp_catalog_row_matches(const struct gp_catalog_row *r, const struct gp_catalog_filter *f);
bool gp_catalog_provider_matches(const struct gp_provider *p, const struct gp_catalog_filter *f);
bool gp_catalog_filter_on_offers(const struct gp_catalog_filter *f);

/* Whether word is a word of text, any case (words end at any character
 * that is not a letter or digit); "any" is a word of any non-empty text. */
bool gp_catalog_has_word(const char *text, const char *word);

enum gp_catalog_sort {
    GP_CATALOG_SORT_NONE, /* catalog order */
    GP_CATALOG_SORT_PRICE,
    GP_CATALOG_SORT_SPOT,
    GP_CATALOG_SORT_GPU,
    GP_CATALOG_SORT_MEMORY,
    GP_CATALOG_SORT_PROVIDER,
    GP_CATALOG_SORT_AGE,
};

/* "price", "spot", "gpu", "memory", "provider", "age"; -1 if unknown. */
int gp_catalog_sort_parse(const char *name);
/* The names above, ", "-separated, for messages. */
const char *gp_catalog_sort_names(void);

/* Sorts rows: prices cheapest first, GPU and provider by name, memory
 * largest first, age newest first; rows without the value last; ties in
 * catalog order. */
void gp_catalog_sort(struct gp_catalog_row *rows, size_t n, enum gp_catalog_sort by);

/* An offer's price per GPU-hour, on demand or spot: the GPU price, else
 * the node price / GPUs per node; < 0 when not known. */
double gp_catalog_gpu_hour(const struct gp_offer *o, bool spot);

/* "YYYY-MM-DD" (a real date, year 1970-9999) to days since 1970-01-01. */
bool gp_catalog_date_days(const char *ymd, int64_t *days);

/* "yes", "no", "unknown"; "managed", "byo", "none". */
const char *gp_catalog_tri_name(enum gp_tri t);
const char *gp_catalog_kube_name(enum gp_kube_support k);

#endif
