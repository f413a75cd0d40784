/* providers_out.c - `gpuplane providers`' outputs (providers_out.h): the
 * providers table (Kubernetes, fee, drivers, sharing, fabric, storage,
 * spot, scale to zero), the offers table (GPU, node, prices, the price's
 * date, age and numbered source; the user's rows marked *) with its notes,
 * and the JSON array. */
#include "cli/providers_out.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* ---- a table of text cells, columns as wide as their widest cell ------- */

#define MAX_COLS 12

struct table {
    size_t ncols, nrows, cap;
    char **cells;   /* nrows x ncols, malloc'd */
    unsigned right; /* bit c: column c is right-aligned */
    bool oom;
};

static void table_add(struct table *t, const char *const *row)
{
    if (t->oom)
        return;
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        char **cells = realloc(t->cells, cap * t->ncols * sizeof *cells);
        if (!cells) {
            t->oom = true;
            return;
        }
        t->cells = cells;
        t->cap = cap;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        char *s = strdup(row[c] ? row[c] : "");
        t->cells[t->nrows * t->ncols + c] = s;
        t->oom |= !s;
    }
    t->nrows++;
}

static void table_print(struct table *t, const char *indent, struct gp_sbuf *out)
{
    size_t w[MAX_COLS] = {0};
    if (t->oom) {
        out->oom = true;
        return;
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t len = strlen(t->cells[r * t->ncols + c]);
            w[c] = len > w[c] ? len : w[c];
        }
    for (size_t r = 0; r < t->nrows; r++) {
        gp_sbuf_add(out, indent);
        size_t last = t->ncols;
        while (last > 0 && !*t->cells[r * t->ncols + last - 1])
            last--; /* no trailing blanks */
        for (size_t c = 0; c < last; c++) {
            const char *s = t->cells[r * t->ncols + c];
            int pad = (int)w[c];
            if (t->right >> c & 1u)
                gp_sbuf_printf(out, "%s%*s", c ? "  " : "", pad, s);
            else if (c + 1 < last)
                gp_sbuf_printf(out, "%s%-*s", c ? "  " : "", pad, s);
            else
                gp_sbuf_printf(out, "%s%s", c ? "  " : "", s);
        }
        gp_sbuf_add(out, "\n");
    }
}

static void table_free(struct table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* ---- cells --------------------------------------------------------------- */

static const char *tri(enum gp_tri t)
{
    return t == GP_TRI_YES ? "yes" : t == GP_TRI_NO ? "no" : "?";
}

/* The modes a provider allows: yes as the name, unknown with '?'. */
static void sharing_cell(const struct gp_provider *p, char *buf, size_t size)
{
    const enum gp_tri v[3] = {p->time_slicing, p->mps, p->mig};
    static const char *const names[3] = {"time-slicing", "mps", "mig"};
    size_t o = 0;
    buf[0] = '\0';
    if (v[0] == GP_TRI_UNKNOWN && v[1] == GP_TRI_UNKNOWN && v[2] == GP_TRI_UNKNOWN) {
        snprintf(buf, size, "?");
        return;
    }
    for (int i = 0; i < 3 && o < size; i++)
        if (v[i] != GP_TRI_NO) {
            int n = snprintf(buf + o, size - o, "%s%s%s", o ? " " : "", names[i],
                             v[i] == GP_TRI_UNKNOWN ? "?" : "");
            o += n > 0 ? (size_t)n : 0;
        }
    if (!buf[0])
        snprintf(buf, size, "none");
}

/* The fabrics a provider's interconnect text names. */
static void fabric_cell(const struct gp_provider *p, char *buf, size_t size)
{
    static const struct {
        const char *word, *shown;
    } fabrics[] = {{"InfiniBand", "InfiniBand"}, {"RoCE", "RoCE"}, {"EFA", "EFA"}, {"TCPX", "TCPX"},
                   {"TCPXO", "TCPXO"},           {"RDMA", "RDMA"}};
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof fabrics / sizeof fabrics[0] && o < size; i++)
        if (gp_catalog_has_word(p->interconnect, fabrics[i].word)) {
            int n = snprintf(buf + o, size - o, "%s%s", o ? " " : "", fabrics[i].shown);
            o += n > 0 ? (size_t)n : 0;
        }
    if (!buf[0])
        snprintf(buf, size, "%s", *p->interconnect ? "other" : "?");
}

static void price_cell(double v, char *buf, size_t size)
{
    if (v < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.2f", v);
}

static void count_cell(uint32_t v, char *buf, size_t size)
{
    if (v)
        snprintf(buf, size, "%u", v);
    else
        snprintf(buf, size, "?");
}

/* The index (1-based) of url in the list of sources, added if new. */
static size_t source_index(const char **urls, size_t *n, const char *url)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(urls[i], url) == 0)
            return i + 1;
    urls[(*n)++] = url;
    return *n;
}

static bool provider_shown(const struct gp_providers_view *v, const struct gp_provider *p)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->rows[i].provider == p)
            return true;
    return false;
}

/* Providers without a GPU offer in the catalog, shown when no term is on
 * offers: they would otherwise vanish. */
static bool provider_without_offers(const struct gp_providers_view *v, const struct gp_provider *p)
{
    if (gp_catalog_filter_on_offers(v->filter) || !gp_catalog_provider_matches(p, v->filter))
        return false;
    for (size_t i = 0; i < gp_noffers; i++)
        if (strcmp(gp_offers[i].provider, p->id) == 0)
            return false;
    for (size_t i = 0; v->user && i < v->user->n; i++)
        if (strcmp(v->user->items[i].offer.provider, p->id) == 0)
            return false;
    return true;
}

static void providers_table(const struct gp_providers_view *v, struct gp_sbuf *out)
{
    struct table t = {.ncols = 9, .right = 1u << 2};
    const char *head[] = {"provider", "kubernetes", "fee/h", "drivers",   "sharing",
                          "fabric",   "rwx",        "spot",  "scale-to-0"};
    table_add(&t, head);
    for (size_t i = 0; i < gp_nproviders; i++) {
        const struct gp_provider *p = &gp_providers[i];
        if (!provider_shown(v, p) && !provider_without_offers(v, p))
            continue;
        char fee[16], sharing[64], fabric[64];
        if (p->control_plane_usd_per_hour < 0)
            snprintf(fee, sizeof fee, "?");
        else
            snprintf(fee, sizeof fee, "%.2f", p->control_plane_usd_per_hour);
        sharing_cell(p, sharing, sizeof sharing);
        fabric_cell(p, fabric, sizeof fabric);
        const char *row[] = {p->id,
                             gp_catalog_kube_name(p->kubernetes),
                             fee,
                             tri(p->drivers_preinstalled),
                             sharing,
                             fabric,
                             tri(p->rwx_storage),
                             tri(p->spot),
                             tri(p->scale_to_zero)};
        table_add(&t, row);
    }
    table_print(&t, "  ", out);
    table_free(&t);
}

/* The offers table, its notes and its numbered sources. */
static void offers_table(const struct gp_providers_view *v, struct gp_sbuf *out)
{
    struct table t = {.ncols = 12,
                      .right = 1u << 3 | 1u << 4 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << 10};
    const char *head[] = {"",          "provider", "gpu",  "mem",  "gpus", "instance",
                          "on-demand", "spot",     "node", "date", "age",  "source"};
    table_add(&t, head);
    const char **urls = calloc(v->n + 1, sizeof *urls);
    size_t nurls = 0;
    bool avg = false, stale = false;
    if (!urls) {
        out->oom = true;
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        const struct gp_catalog_row *r = &v->rows[i];
        const struct gp_offer *o = r->offer;
        char mem[16], gpus[16], od[24], spot[16], node[16], age[32], src[48];
        count_cell(o->gpu_memory_gb, mem, sizeof mem);
        count_cell(o->gpus_per_node, gpus, sizeof gpus);
        double odp = gp_catalog_gpu_hour(o, false);
        price_cell(odp, od, sizeof od);
        if (odp < 0 && o->observed_avg_gpu_hour >= 0) {
            snprintf(od, sizeof od, "~%.2f", o->observed_avg_gpu_hour);
            avg = true;
        }
        price_cell(gp_catalog_gpu_hour(o, true), spot, sizeof spot);
        price_cell(o->gpus_per_node ? gp_offer_node_price(o, o->gpus_per_node, 0) : -1, node,
                   sizeof node);
        if (r->age_days < 0)
            snprintf(age, sizeof age, "undated");
        else
            snprintf(age, sizeof age, "%" PRId64 " d%s", r->age_days, r->stale ? " stale" : "");
        stale |= r->stale;
        const char *url = o->price_source_url;
        if (*url)
            snprintf(src, sizeof src, "[%zu]%s%s", source_index(urls, &nurls, url),
                     r->user ? " " : "", r->user ? r->user->pricing : "");
        else
            snprintf(src, sizeof src, "?");
        const char *row[] = {r->user ? "*" : "",
                             r->provider->id,
                             o->gpu,
                             mem,
                             gpus,
                             *o->instance ? o->instance : "?",
                             od,
                             spot,
                             node,
                             *o->price_date ? o->price_date : "?",
                             age,
                             src};
        table_add(&t, row);
    }
    table_print(&t, "", out);
    table_free(&t);
    if (v->user) {
        bool any = false;
        for (size_t i = 0; i < v->n; i++) {
            const struct gp_catalog_row *r = &v->rows[i];
            if (!r->user)
                continue;
            if (!any)
                gp_sbuf_printf(out, "\n* your offers (%s):\n", v->user->file);
            any = true;
            gp_sbuf_printf(out, "  %s  %s/%s: %s, %s%s%s\n", r->user->origin, r->provider->id,
                           r->offer->instance, r->user->pricing,
                           r->user->replaces >= 0 ? "replaces the catalog's offer"
                                                  : "not in the catalog",
                           *r->user->note ? "; " : "", r->user->note);
        }
    }
    gp_sbuf_add(out, "\n");
    if (avg)
        gp_sbuf_add(out, "~ a third-party average over listings, not a list price\n");
    if (stale)
        gp_sbuf_printf(out, "stale: the price is older than %" PRId64 " days (--stale-days)\n",
                       v->stale_days);
    if (nurls)
        gp_sbuf_add(out, "sources:\n");
    for (size_t i = 0; i < nurls; i++)
        gp_sbuf_printf(out, "  [%zu] %s\n", i + 1, urls[i]);
    free(urls);
}

void gp_providers_text(const struct gp_providers_view *v, struct gp_sbuf *out)
{
    size_t nprov = 0;
    for (size_t i = 0; i < gp_nproviders; i++)
        nprov += provider_shown(v, &gp_providers[i]);
    gp_sbuf_printf(out,
                   "gpuplane providers - data/providers.json, compiled %s; prices in USD per "
                   "GPU-hour (node: per node-hour), aged to %s\n\n",
                   gp_providers_compiled_on, v->today);
    if (v->n == 0) {
        gp_sbuf_add(out, "no offer matches the filters\n");
        return;
    }
    providers_table(v, out);
    gp_sbuf_printf(out, "\n%zu offer%s of %zu provider%s:\n", v->n, v->n == 1 ? "" : "s", nprov,
                   nprov == 1 ? "" : "s");
    offers_table(v, out);
}

/* ---- JSON ---------------------------------------------------------------- */

struct jctx {
    bool ok;
};

static void jset(struct jctx *c, json_t *obj, const char *key, json_t *v)
{
    if (!obj || json_object_set_new(obj, key, v) != 0)
        c->ok = false;
}

static void jpush(struct jctx *c, json_t *arr, json_t *v)
{
    if (!arr || json_array_append_new(arr, v) != 0)
        c->ok = false;
}

static json_t *jnum(double v)
{
    return v < 0 || !isfinite(v) ? json_null() : json_real(v);
}

static json_t *jtext(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *jtri(enum gp_tri t)
{
    return json_string(gp_catalog_tri_name(t));
}

static json_t *provider_json(struct jctx *c, const struct gp_provider *p)
{
    json_t *o = json_object(), *sh = json_object(), *ic = json_object();
    jset(c, o, "id", json_string(p->id));
    jset(c, o, "name", jtext(p->name));
    jset(c, o, "category", jtext(p->category));
    jset(c, o, "kubernetes", json_string(gp_catalog_kube_name(p->kubernetes)));
    jset(c, o, "kubernetes_product", jtext(p->product));
    jset(c, o, "control_plane_usd_per_hour", jnum(p->control_plane_usd_per_hour));
    jset(c, o, "gpu_drivers_preinstalled", jtri(p->drivers_preinstalled));
    jset(c, sh, "time_slicing", jtri(p->time_slicing));
    jset(c, sh, "mps", jtri(p->mps));
    jset(c, sh, "mig", jtri(p->mig));
    jset(c, o, "gpu_sharing", sh);
    jset(c, ic, "type", jtext(p->interconnect));
    jset(c, ic, "bandwidth_gbps", jnum(p->interconnect_gbps));
    jset(c, o, "interconnect", ic);
    jset(c, o, "shared_storage_rwx", jtri(p->rwx_storage));
    jset(c, o, "spot_gpu_nodes", jtri(p->spot));
    jset(c, o, "node_pool_autoscaling", jtri(p->autoscaling));
    jset(c, o, "scale_to_zero", jtri(p->scale_to_zero));
    jset(c, o, "billing_granularity", jtext(p->billing));
    json_t *lim = json_object(); /* data/provider-limits.json */
    jset(c, lim, "billing_minimum_s", jnum(p->billing_minimum_s));
    jset(c, lim, "max_node_lifetime_h", jnum(p->max_node_lifetime_h));
    jset(c, lim, "max_node_lifetime_scope", jtext(p->lifetime_scope));
    jset(c, lim, "source", jtext(p->limits_source_url));
    jset(c, o, "limits", lim);
    jset(c, o, "source", jtext(p->source_url));
    return o;
}

static json_t *offer_json(struct jctx *c, const struct gp_catalog_row *r)
{
    const struct gp_offer *of = r->offer;
    json_t *o = json_object();
    jset(c, o, "instance", jtext(of->instance));
    jset(c, o, "gpu", jtext(of->gpu));
    jset(c, o, "gpu_memory_gb", of->gpu_memory_gb ? json_integer(of->gpu_memory_gb) : json_null());
    jset(c, o, "form_factor", jtext(of->form_factor));
    jset(c, o, "gpus_per_node", of->gpus_per_node ? json_integer(of->gpus_per_node) : json_null());
    jset(c, o, "region", jtext(of->region));
    jset(c, o, "on_demand_usd_per_gpu_hour", jnum(of->on_demand_gpu_hour));
    jset(c, o, "on_demand_usd_per_node_hour", jnum(of->on_demand_node_hour));
    jset(c, o, "spot_usd_per_gpu_hour", jnum(of->spot_gpu_hour));
    jset(c, o, "spot_usd_per_node_hour", jnum(of->spot_node_hour));
    jset(c, o, "observed_average_usd_per_gpu_hour", jnum(of->observed_avg_gpu_hour));
    jset(c, o, "price_date", jtext(of->price_date));
    jset(c, o, "price_age_days", r->age_days >= 0 ? json_integer(r->age_days) : json_null());
    jset(c, o, "stale", json_boolean(r->stale));
    jset(c, o, "price_source", jtext(of->price_source_url));
    jset(c, o, "user", json_boolean(r->user != NULL));
    if (r->user) {
        jset(c, o, "pricing", json_string(r->user->pricing));
        jset(c, o, "replaces_catalog_offer", json_boolean(r->user->replaces >= 0));
        jset(c, o, "origin", json_string(r->user->origin));
        jset(c, o, "note", jtext(r->user->note));
    }
    return o;
}

enum gp_err gp_providers_json(const struct gp_providers_view *v, struct gp_sbuf *out,
                              struct gp_diag *d)
{
    struct jctx c = {true};
    json_t *root = json_array();
    /* providers in catalog order, or in the order of their first row */
    const struct gp_provider **order = calloc(gp_nproviders + 1, sizeof *order);
    size_t n = 0;
    if (!order)
        c.ok = false;
    for (size_t i = 0; c.ok && i < v->n; i++) {
        const struct gp_provider *p = v->rows[i].provider;
        size_t k = 0;
        while (k < n && order[k] != p)
            k++;
        if (k == n)
            order[n++] = p;
    }
    if (c.ok && !v->sorted) { /* catalog order, with the providers without offers */
        n = 0;
        for (size_t i = 0; i < gp_nproviders; i++)
            if (provider_shown(v, &gp_providers[i]) || provider_without_offers(v, &gp_providers[i]))
                order[n++] = &gp_providers[i];
    }
    for (size_t k = 0; c.ok && k < n; k++) {
        json_t *p = provider_json(&c, order[k]), *offers = json_array();
        for (size_t i = 0; i < v->n; i++)
            if (v->rows[i].provider == order[k])
                jpush(&c, offers, offer_json(&c, &v->rows[i]));
        jset(&c, p, "offers", offers);
        jpush(&c, root, p);
    }
    free(order);
    char *text =
        c.ok ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))
             : NULL;
    json_decref(root);
    if (!text)
        return gp_diag_set(d, GP_ENOMEM, "providers: out of memory");
    gp_sbuf_add(out, text);
    gp_sbuf_add(out, "\n");
    free(text);
    return GP_OK;
}
