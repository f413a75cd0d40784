/* catalog_offers.c - a user's offers file (io/catalog.h; docs/FORMATS.md,
 * "Offers file"): negotiated prices, reservations at their marginal cost
 * and offers the catalog lacks, checked as strictly as a Cluster spec
 * (unknown fields and providers with "did you mean") and each resolved
 * against data/providers.json: the catalog offer it replaces, or a new
 * one. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/catalog.h"
#include "io/yaml_walk.h"
#include "util/fs.h"
#include "util/strdist.h"

#define MAX_PRICE  1e6
#define MAX_OFFERS 10000

/* One entry while it is read: the offer (first, for the field table's
 * offsets) and what the checks after the walk need. */
struct entry {
    struct gp_user_offer uo;
    const char *gpu, *form, *region;
    uint32_t gpus, mem_gb;
    int64_t today_days; /* a price may not be dated later; < 0: not checked */
};

/* An unknown key of mapping n: the nearest field of the table when it is
 * close ("did you mean"), else the fields it may have. */
static enum gp_err check_keys(struct gp_yaml *y, struct fy_node *n,
                              const struct gp_yaml_field *fields, size_t nfields)
{
    if (!n || !fy_node_is_mapping(n))
        return GP_OK; /* gp_yaml_object says what it expected */
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it)) != NULL) {
        struct fy_node *k = fy_node_pair_key(p);
        const char *key;
        if (!k || !fy_node_is_scalar(k) || fy_node_is_alias(k))
            continue;
        enum gp_err err = gp_yaml_text(y, k, "a field name", &key);
        if (err != GP_OK)
            return err;
        size_t i = 0;
        while (i < nfields && strcmp(fields[i].key, key) != 0)
            i++;
        if (i < nfields)
            continue;
        unsigned dist;
        size_t best = gp_strdist_nearest(key, fields, nfields, sizeof *fields, &dist);
        if (!gp_strdist_close(key, dist))
            continue; /* gp_yaml_object lists the fields */
        struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
        err = gp_yaml_fail(y, k, GP_EINVALID, "unknown field; did you mean \"%s\"?",
                           fields[best].key);
        gp_yaml_pop(y, s);
        return err;
    }
    return GP_OK;
}

static enum gp_err strict_object(struct gp_yaml *y, struct fy_node *n,
                                 const struct gp_yaml_field *fields, size_t nfields, void *obj)
{
    enum gp_err err = check_keys(y, n, fields, nfields);
    return err != GP_OK ? err : gp_yaml_object(y, n, fields, nfields, obj, true);
}

static enum gp_err read_date(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct entry *e = obj;
    int64_t days;
    char q[80];
    enum gp_err err = gp_yaml_text(y, v, "a date YYYY-MM-DD", &e->uo.offer.price_date);
    if (err == GP_OK && !gp_catalog_date_days(e->uo.offer.price_date, &days))
        err = gp_yaml_fail(y, v, GP_EINVALID, "expected a date YYYY-MM-DD, got \"%s\"",
                           gp_yaml_quote(v, q, sizeof q));
    if (err == GP_OK && e->today_days >= 0 && days > e->today_days)
        err = gp_yaml_fail(y, v, GP_EINVALID,
                           "%s is after today (%" PRId64
                           " days later); a price is dated when it was read",
                           e->uo.offer.price_date, days - e->today_days);
    return err;
}

static enum gp_err read_pricing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    static const char *const kinds[] = {"negotiated", "reserved", "list"};
    struct entry *e = obj;
    const char *s;
    char q[80];
    enum gp_err err = gp_yaml_text(y, v, "a string", &s);
    if (err != GP_OK)
        return err;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, kinds[i]) == 0) {
            e->uo.pricing = kinds[i];
            return GP_OK;
        }
    return gp_yaml_fail(y, v, GP_EINVALID, "expected negotiated, reserved or list, got \"%s\"",
                        gp_yaml_quote(v, q, sizeof q));
}

static const struct gp_yaml_field entry_fields[] = {
    GP_YFIELD("provider", GP_YT_STRING, struct entry, uo.offer.provider, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("instance", GP_YT_STRING, struct entry, uo.offer.instance, GP_YF_REQUIRED, 0, 0),
    GP_YFIELD("gpu", GP_YT_STRING, struct entry, gpu, 0, 0, 0),
    GP_YFIELD("gpuMemoryGB", GP_YT_U32, struct entry, mem_gb, 0, 1, 4096),
    GP_YFIELD("gpusPerNode", GP_YT_U32, struct entry, gpus, 0, 1, 16),
    GP_YFIELD("formFactor", GP_YT_STRING, struct entry, form, 0, 0, 0),
    GP_YFIELD("region", GP_YT_STRING, struct entry, region, 0, 0, 0),
    GP_YFIELD("pricePerGpuHour", GP_YT_NUMBER, struct entry, uo.offer.on_demand_gpu_hour, 0, 0,
              MAX_PRICE),
    GP_YFIELD("pricePerNodeHour", GP_YT_NUMBER, struct entry, uo.offer.on_demand_node_hour, 0, 0,
              MAX_PRICE),
    GP_YFIELD("spotPricePerGpuHour", GP_YT_NUMBER, struct entry, uo.offer.spot_gpu_hour, 0, 0,
              MAX_PRICE),
    GP_YFIELD("spotPricePerNodeHour", GP_YT_NUMBER, struct entry, uo.offer.spot_node_hour, 0, 0,
              MAX_PRICE),
    GP_YCUSTOM("priceDate", read_date, GP_YF_REQUIRED),
    GP_YFIELD("source", GP_YT_STRING, struct entry, uo.offer.price_source_url, GP_YF_REQUIRED, 0,
              0),
    GP_YCUSTOM("pricing", read_pricing, 0),
    GP_YFIELD("note", GP_YT_STRING, struct entry, uo.note, 0, 0, 0),
};

struct offers_doc {
    struct gp_user_offers *out;
    size_t cap;
    int docs;
    int64_t today_days;
};

/* Fails at the value of field `key` of the entry (NULL: at the entry). */
static enum gp_err entry_fail(struct gp_yaml *y, struct fy_node *item, const char *key,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum gp_err entry_fail(struct gp_yaml *y, struct fy_node *item, const char *key,
                              const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct fy_node *k = key ? gp_yaml_key_node(item, key) : NULL;
    if (!k)
        return gp_yaml_fail(y, item, GP_EINVALID, "%s", msg);
    struct fy_node *v = fy_node_mapping_lookup_by_string(item, key, FY_NT);
    struct gp_yaml_saved s = gp_yaml_push_key(y, key, k);
    enum gp_err err = gp_yaml_fail(y, v ? v : k, GP_EINVALID, "%s", msg);
    gp_yaml_pop(y, s);
    return err;
}

/* The catalog's provider of the entry, with "did you mean" when unknown. */
static enum gp_err check_provider(struct gp_yaml *y, struct fy_node *item, const char *id)
{
    if (gp_provider_find(id))
        return GP_OK;
    unsigned dist;
    size_t best = gp_strdist_nearest(id, gp_providers, gp_nproviders, sizeof *gp_providers, &dist);
    if (gp_strdist_close(id, dist))
        return entry_fail(y, item, "provider",
                          "no provider \"%s\" in data/providers.json; did you mean \"%s\"?", id,
                          gp_providers[best].id);
    return entry_fail(y, item, "provider",
                      "no provider \"%s\" in data/providers.json (gpuplane providers lists "
                      "them)",
                      id);
}

/* Resolves the entry against the catalog: the one offer it replaces
 * (provider, instance and, when given, gpu), or a new one that says its
 * GPU and GPUs per node. */
static enum gp_err resolve(struct gp_yaml *y, struct fy_node *item, struct entry *e)
{
    struct gp_offer *o = &e->uo.offer;
    size_t nmatch = 0, ninst = 0;
    long found = -1;
    char gpus[300];
    size_t lg = 0;
    gpus[0] = '\0';
    const char *near = NULL;
    unsigned near_d = ~0u;
    for (size_t i = 0; i < gp_noffers; i++) {
        const struct gp_offer *c = &gp_offers[i];
        if (strcmp(c->provider, o->provider) != 0)
            continue;
        if (strcmp(o->instance, c->instance) != 0) {
            unsigned d = gp_strdist(o->instance, c->instance);
            if (d < near_d) {
                near = c->instance;
                near_d = d;
            }
            continue;
        }
        ninst++;
        if (lg < sizeof gpus) {
            int w = snprintf(gpus + lg, sizeof gpus - lg, "%s\"%s\"", lg ? ", " : "", c->gpu);
            lg += w > 0 ? (size_t)w : 0;
        }
        if (!e->gpu || strcmp(e->gpu, c->gpu) == 0) {
            found = found < 0 ? (long)i : found;
            nmatch++;
        }
    }
    if (nmatch > 1)
        return entry_fail(y, item, "instance",
                          "%s names %s offers in data/providers.json; add gpu: one of %s",
                          o->instance, nmatch == 2 ? "two" : "several", gpus);
    if (nmatch == 1) {
        const struct gp_offer *c = &gp_offers[found];
        if (e->gpus && c->gpus_per_node && e->gpus != c->gpus_per_node)
            return entry_fail(y, item, "gpusPerNode",
                              "%s has %u GPUs per node in data/providers.json; another machine "
                              "is another offer: give it its own instance name",
                              o->instance, c->gpus_per_node);
        if (e->mem_gb && c->gpu_memory_gb && e->mem_gb != c->gpu_memory_gb)
            return entry_fail(y, item, "gpuMemoryGB",
                              "%s has %u GB GPUs in data/providers.json; another machine is "
                              "another offer: give it its own instance name",
                              o->instance, c->gpu_memory_gb);
        e->uo.replaces = found;
        o->gpu = c->gpu;
        o->form_factor = e->form ? e->form : c->form_factor;
        o->gpus_per_node = e->gpus ? e->gpus : c->gpus_per_node;
        o->gpu_memory_gb = e->mem_gb ? e->mem_gb : c->gpu_memory_gb;
        o->region = e->region ? e->region : c->region;
        o->instance = c->instance;
        return GP_OK;
    }
    if (!e->gpu || !e->gpus) {
        if (ninst == 0 && near && gp_strdist_close(o->instance, near_d))
            return entry_fail(y, item, "instance",
                              "%s has no offer \"%s\" in data/providers.json; did you mean "
                              "\"%s\"? (a new offer gives gpu and gpusPerNode)",
                              o->provider, o->instance, near);
        return entry_fail(y, item, NULL,
                          "%s/%s is not an offer of data/providers.json%s: a new offer gives "
                          "gpu and gpusPerNode",
                          o->provider, o->instance, ninst ? " with that gpu" : "");
    }
    e->uo.replaces = -1;
    o->gpu = e->gpu;
    o->form_factor = e->form ? e->form : "";
    o->gpus_per_node = e->gpus;
    o->gpu_memory_gb = e->mem_gb;
    o->region = e->region ? e->region : "";
    return GP_OK;
}

static enum gp_err read_entry(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct offers_doc *d = ctx;
    struct gp_user_offers *out = d->out;
    if (i >= MAX_OFFERS)
        return gp_yaml_fail(y, item, GP_EINVALID, "more than %d offers in one file", MAX_OFFERS);
    struct entry e;
    memset(&e, 0, sizeof e);
    e.uo.offer.on_demand_gpu_hour = e.uo.offer.on_demand_node_hour = -1;
    e.uo.offer.spot_gpu_hour = e.uo.offer.spot_node_hour = -1;
    e.uo.offer.observed_avg_gpu_hour = -1;
    e.uo.pricing = "negotiated";
    e.uo.note = "";
    e.today_days = d->today_days;
    enum gp_err err =
        strict_object(y, item, entry_fields, sizeof entry_fields / sizeof entry_fields[0], &e);
    if (err == GP_OK)
        err = check_provider(y, item, e.uo.offer.provider);
    if (err != GP_OK)
        return err;
    const struct gp_offer *o = &e.uo.offer;
    if (o->on_demand_gpu_hour < 0 && o->on_demand_node_hour < 0 && o->spot_gpu_hour < 0 &&
        o->spot_node_hour < 0)
        return entry_fail(y, item, NULL,
                          "no price: give pricePerGpuHour, pricePerNodeHour, "
                          "spotPricePerGpuHour or spotPricePerNodeHour");
    if ((err = resolve(y, item, &e)) != GP_OK)
        return err;
    int line = 0, col = 0;
    gp_yaml_node_mark(item, &line, &col);
    for (size_t k = 0; k < out->n; k++) {
        const struct gp_user_offer *p = &out->items[k];
        if (strcmp(p->offer.provider, o->provider) == 0 &&
            strcmp(p->offer.instance, o->instance) == 0 && strcmp(p->offer.gpu, o->gpu) == 0)
            return entry_fail(y, item, NULL, "the same offer as %s (%s/%s)", p->origin, o->provider,
                              o->instance);
    }
    if (out->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 8;
        struct gp_user_offer *items = gp_arena_alloc(y->arena, cap * sizeof *items);
        if (!items)
            return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
        if (out->n)
            memcpy(items, out->items, out->n * sizeof *items);
        out->items = items;
        d->cap = cap;
    }
    e.uo.origin = gp_arena_printf(y->arena, "%s:%d", y->name, line);
    if (!e.uo.origin)
        return gp_diag_set(y->diag, GP_ENOMEM, "%s: out of memory", y->name);
    out->items[out->n++] = e.uo;
    return GP_OK;
}

static enum gp_err read_offers(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct offers_doc *d = obj;
    if (!fy_node_is_sequence(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a list of offers, got %s",
                            gp_yaml_describe(v));
    return gp_yaml_list(y, v, read_entry, d);
}

static enum gp_err read_api_version(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_expect(y, v, "gpuplane.io/v1");
}

static enum gp_err read_kind(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    return gp_yaml_expect(y, v, "Offers");
}

static enum gp_err read_map(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    const struct gp_kv *kv;
    size_t n;
    (void)obj;
    return gp_yaml_kv_map(y, v, false, &kv, &n);
}

struct meta {
    const char *name;
};

static const struct gp_yaml_field metadata_fields[] = {
    GP_YFIELD("name", GP_YT_STRING, struct meta, name, 0, 0, 0),
    GP_YCUSTOM("labels", read_map, 0),
    GP_YCUSTOM("annotations", read_map, 0),
};

static enum gp_err read_metadata(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct meta m = {NULL};
    (void)obj;
    return strict_object(y, v, metadata_fields, sizeof metadata_fields / sizeof metadata_fields[0],
                         &m);
}

static const struct gp_yaml_field doc_fields[] = {
    GP_YCUSTOM("apiVersion", read_api_version, GP_YF_REQUIRED),
    GP_YCUSTOM("kind", read_kind, GP_YF_REQUIRED),
    GP_YCUSTOM("metadata", read_metadata, 0),
    GP_YCUSTOM("offers", read_offers, GP_YF_REQUIRED),
};

static enum gp_err read_document(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    struct offers_doc *d = ctx;
    if (d->docs++ > 0)
        return gp_yaml_fail(y, root, GP_EINVALID,
                            "a second YAML document; an offers file holds one Offers");
    return strict_object(y, root, doc_fields, sizeof doc_fields / sizeof doc_fields[0], d);
}

enum gp_err gp_catalog_offers_parse(const char *text, size_t len, const char *name,
                                    int64_t today_days, struct gp_arena *a,
                                    struct gp_user_offers *out, struct gp_diag *diag)
{
    struct gp_yaml y;
    struct offers_doc d = {out, 0, 0, today_days};
    memset(out, 0, sizeof *out);
    gp_yaml_init(&y, name, a, diag);
    enum gp_err err = gp_yaml_each_document(&y, text, len, read_document, &d);
    if (err == GP_OK && d.docs == 0)
        err = gp_diag_set(diag, GP_EINVALID, "%s: empty file, expected an Offers document", y.name);
    if (err == GP_OK && !(out->file = gp_arena_strdup(a, y.name)))
        err = gp_diag_set(diag, GP_ENOMEM, "%s: out of memory", y.name);
    if (err != GP_OK)
        memset(out, 0, sizeof *out);
    return err;
}

enum gp_err gp_catalog_offers_load(const char *path, int64_t today_days, struct gp_arena *a,
                                   struct gp_user_offers *out, struct gp_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum gp_err err = gp_fs_read(path, &text, &len, diag);
    if (err != GP_OK)
        return err;
    err = gp_catalog_offers_parse(text, len, path, today_days, a, out, diag);
    free(text);
    return err;
}
