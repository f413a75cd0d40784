/* catalog.c - the provider catalog as rows (io/catalog.h): the compiled
 * offers with the user's laid over them, each with its price's age; the
 * filters and sorts of `gpuplane providers`; dates. */
#include "io/catalog.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *gp_catalog_tri_name(enum gp_tri t)
{
    return t == GP_TRI_YES ? "yes" : t == GP_TRI_NO ? "no" : "unknown";
}

const char *gp_catalog_kube_name(enum gp_kube_support k)
{
    return k == GP_KUBE_MANAGED ? "managed" : k == GP_KUBE_BYO ? "byo" : "none";
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (the
 * civil-from-days count: years from March, so February's day is last). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

bool gp_catalog_date_days(const char *s, int64_t *days)
{
    if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return false;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)s[i]))
            return false;
    int y = atoi(s), m = atoi(s + 5), d = atoi(s + 8);
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m == 2 && d == 29 && !leap)
        return false;
    *days = days_from_civil(y, (unsigned)m, (unsigned)d);
    return true;
}

double gp_catalog_gpu_hour(const struct gp_offer *o, bool spot)
{
    double gpu = spot ? o->spot_gpu_hour : o->on_demand_gpu_hour;
    double node = spot ? o->spot_node_hour : o->on_demand_node_hour;
    if (gpu >= 0)
        return gpu;
    if (node >= 0 && o->gpus_per_node > 0)
        return node / o->gpus_per_node;
    return -1;
}

static void row_age(struct gp_catalog_row *r, int64_t today, int64_t stale_days)
{
    int64_t d;
    r->age_days = -1;
    r->stale = false;
    if (gp_catalog_date_days(r->offer->price_date, &d)) {
        r->age_days = today - d;
        r->stale = r->age_days > stale_days;
    }
}

enum gp_err gp_catalog_rows(const struct gp_user_offers *user, int64_t today_days,
                            int64_t stale_days, struct gp_arena *a, struct gp_catalog_row **out,
                            size_t *n, struct gp_diag *diag)
{
    size_t nuser = user ? user->n : 0;
    struct gp_catalog_row *rows = gp_arena_alloc(a, (gp_noffers + nuser + 1) * sizeof *rows);
    if (!rows)
        return gp_diag_set(diag, GP_ENOMEM, "providers: out of memory");
    size_t len = 0;
    for (size_t p = 0; p < gp_nproviders; p++) {
        const struct gp_provider *prov = &gp_providers[p];
        for (size_t i = 0; i < gp_noffers; i++) {
            if (strcmp(gp_offers[i].provider, prov->id) != 0)
                continue;
            const struct gp_user_offer *over = NULL;
            for (size_t u = 0; u < nuser && !over; u++)
                if (user->items[u].replaces == (long)i)
                    over = &user->items[u];
            struct gp_catalog_row *r = &rows[len];
            r->provider = prov;
            r->offer = over ? &over->offer : &gp_offers[i];
            r->user = over;
            r->order = len++;
            row_age(r, today_days, stale_days);
        }
        for (size_t u = 0; u < nuser; u++) {
            const struct gp_user_offer *uo = &user->items[u];
            if (uo->replaces >= 0 || strcmp(uo->offer.provider, prov->id) != 0)
                continue;
            struct gp_catalog_row *r = &rows[len];
            r->provider = prov;
            r->offer = &uo->offer;
            r->user = uo;
            r->order = len++;
            row_age(r, today_days, stale_days);
        }
    }
    *out = rows;
    *n = len;
    return GP_OK;
}

/* Whether the words of text (any case) include word; "any" matches any
 * stated text. */
static bool has_word(const char *text, const char *word)
{
    if (!*text)
        return false;
    if (strcmp(word, "any") == 0)
        return true;
    size_t wl = strlen(word);
    for (const char *c = text; *c; c++) {
        if (c != text && isalnum((unsigned char)c[-1]))
            continue;
        size_t i = 0;
        while (i < wl && c[i] && tolower((unsigned char)c[i]) == tolower((unsigned char)word[i]))
            i++;
        if (i == wl && !isalnum((unsigned char)c[i]))
            return true;
    }
    return false;
}

bool gp_catalog_provider_matches(const struct gp_provider *p, const struct gp_catalog_filter *f)
{
    if (f->kube_mask && !(f->kube_mask >> p->kubernetes & 1u))
        return false;
    if ((f->sharing >> GP_CATALOG_SHARE_TIMESLICE & 1u) && p->time_slicing != GP_TRI_YES)
        return false;
    if ((f->sharing >> GP_CATALOG_SHARE_MPS & 1u) && p->mps != GP_TRI_YES)
        return false;
    if ((f->sharing >> GP_CATALOG_SHARE_MIG & 1u) && p->mig != GP_TRI_YES)
        return false;
    if (f->fabric && !has_word(p->interconnect, f->fabric))
        return false;
    if (f->rwx && p->rwx_storage != GP_TRI_YES)
        return false;
    if (f->scale_to_zero && p->scale_to_zero != GP_TRI_YES)
        return false;
    if (f->drivers && p->drivers_preinstalled != GP_TRI_YES)
        return false;
    return true;
}

bool gp_catalog_filter_on_offers(const struct gp_catalog_filter *f)
{
    return f->gpu || f->min_mem_gb || f->gpus || f->spot || f->user_only || f->min_price >= 0 ||
           f->max_price >= 0;
}

bool gp_catalog_row_matches(const struct gp_catalog_row *r, const struct gp_catalog_filter *f)
{
    const struct gp_offer *o = r->offer;
    if (!gp_catalog_provider_matches(r->provider, f))
        return false;
    if (f->user_only && !r->user)
        return false;
    if (f->gpu && !gp_offer_gpu_matches(o, f->gpu))
        return false;
    if (f->min_mem_gb && o->gpu_memory_gb < f->min_mem_gb)
        return false;
    if (f->gpus && o->gpus_per_node != f->gpus)
        return false;
    if (f->spot && r->provider->spot != GP_TRI_YES && gp_catalog_gpu_hour(o, true) < 0)
        return false;
    if (f->min_price >= 0 || f->max_price >= 0) {
        double price = gp_catalog_gpu_hour(o, false);
        if (price < 0 || (f->min_price >= 0 && price < f->min_price) ||
            (f->max_price >= 0 && price > f->max_price))
            return false;
    }
    return true;
}

bool gp_catalog_has_word(const char *text, const char *word)
{
    return has_word(text, word);
}

static const char *const sort_names[] = {"", "price", "spot", "gpu", "memory", "provider", "age"};

int gp_catalog_sort_parse(const char *name)
{
    for (int i = 1; i < (int)(sizeof sort_names / sizeof sort_names[0]); i++)
        if (strcmp(name, sort_names[i]) == 0)
            return i;
    return -1;
}

const char *gp_catalog_sort_names(void)
{
    return "price, spot, gpu, memory, provider, age";
}

/* -1, 0, 1 for known values a < b; a missing value (< 0) sorts last. */
static int cmp_known(double a, double b)
{
    if (a < 0 || b < 0)
        return (a < 0) - (b < 0);
    return (a > b) - (a < b);
}

static int row_cmp(const struct gp_catalog_row *a, const struct gp_catalog_row *b,
                   enum gp_catalog_sort by)
{
    int c = 0;
    uint32_t ma = a->offer->gpu_memory_gb, mb = b->offer->gpu_memory_gb;
    switch (by) {
    case GP_CATALOG_SORT_PRICE:
    case GP_CATALOG_SORT_SPOT: {
        bool spot = by == GP_CATALOG_SORT_SPOT;
        c = cmp_known(gp_catalog_gpu_hour(a->offer, spot), gp_catalog_gpu_hour(b->offer, spot));
        break;
    }
    case GP_CATALOG_SORT_GPU:
        c = strcmp(a->offer->gpu, b->offer->gpu);
        break;
    case GP_CATALOG_SORT_MEMORY: /* largest first, unknown (0) last */
        c = (!ma || !mb) ? (!ma) - (!mb) : (ma < mb) - (ma > mb);
        break;
    case GP_CATALOG_SORT_PROVIDER:
        c = strcmp(a->provider->id, b->provider->id);
        break;
    case GP_CATALOG_SORT_AGE:
        c = cmp_known((double)a->age_days, (double)b->age_days);
        break;
    case GP_CATALOG_SORT_NONE:
        break;
    }
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

void gp_catalog_sort(struct gp_catalog_row *rows, size_t n, enum gp_catalog_sort by)
{
    /* insertion sort: a few hundred rows at most, and stable by design */
    for (size_t i = 1; i < n; i++) {
        struct gp_catalog_row r = rows[i];
        size_t j = i;
        while (j > 0 && row_cmp(&rows[j - 1], &r, by) > 0) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = r;
    }
}
