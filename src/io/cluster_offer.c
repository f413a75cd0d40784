/* cluster_offer.c - what a Cluster costs: a pool's pricePerHour,
 * pricePerGpuHour or catalog offer (data/providers.json, io/providers.h:
 * "provider/instance" or {provider, instance, gpu}) and its on-demand
 * price, resolved and checked once the pool is read; and
 * spec.controlPlane (a fee, or a provider's from the catalog). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/cluster_internal.h"
#include "io/providers.h"

#define MAX_PRICE 1e6

enum gp_err gp_cluster_pool_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &po->spec.price_per_hour_usd);
}

enum gp_err gp_cluster_pool_gpu_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.gpu_price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &po->f.gpu_price_usd);
}

enum gp_err gp_cluster_pool_od_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.od_price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &po->spec.on_demand_per_hour_usd);
}

static const struct gp_yaml_field offer_fields[] = {
    GP_YFIELD("provider", GP_YT_STRING, struct cluster_pool, f.offer_provider, GP_YF_REQUIRED, 0,
              0),
    GP_YFIELD("instance", GP_YT_STRING, struct cluster_pool, f.offer_instance, GP_YF_REQUIRED, 0,
              0),
    GP_YFIELD("gpu", GP_YT_STRING, struct cluster_pool, f.offer_gpu, 0, 0, 0),
};

/* offer: "provider/instance", or {provider, instance, gpu} when the
 * instance name has a slash or names several offers. */
enum gp_err gp_cluster_pool_offer(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cluster_pool *po = obj;
    po->f.offer = v;
    if (fy_node_is_mapping(v))
        return gp_yaml_object(y, v, offer_fields, sizeof offer_fields / sizeof offer_fields[0], po,
                              true);
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "an offer like eks/p4de.24xlarge", &s);
    if (err != GP_OK)
        return err;
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1]) {
        char q[80];
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected an offer of data/providers.json as provider/instance like "
                            "eks/p4de.24xlarge, got \"%s\"",
                            gp_yaml_quote(v, q, sizeof q));
    }
    char *prov = gp_arena_strdup(y->arena, s);
    if (!prov)
        return gp_cluster_oom(y);
    prov[slash - s] = '\0';
    po->f.offer_provider = prov;
    po->f.offer_instance = prov + (slash - s) + 1;
    return GP_OK;
}

/* The offer a pool names, or NULL with diag set. */
static const struct gp_offer *offer_find(struct gp_yaml *y, struct cluster_pool *po,
                                         enum gp_err *err)
{
    const char *prov = po->f.offer_provider, *inst = po->f.offer_instance;
    const struct gp_offer *found = NULL;
    size_t nprov = 0, nmatch = 0, li = 0, lg = 0;
    char insts[240], gpus[240];
    insts[0] = gpus[0] = '\0';
    for (size_t i = 0; i < gp_noffers; i++) {
        const struct gp_offer *o = &gp_offers[i];
        if (strcmp(o->provider, prov) != 0)
            continue;
        nprov++;
        bool inst_ok = strcmp(o->instance, inst) == 0;
        if (inst_ok && (!po->f.offer_gpu || strcmp(o->gpu, po->f.offer_gpu) == 0)) {
            found = found ? found : o;
            nmatch++;
        }
        char *list = inst_ok ? gpus : insts;
        size_t *lo = inst_ok ? &lg : &li;
        const char *what = inst_ok ? o->gpu : o->instance;
        if (*what && *lo < sizeof insts) {
            int w = snprintf(list + *lo, sizeof insts - *lo, "%s%s", *lo ? ", " : "", what);
            *lo += w > 0 ? (size_t)w : 0;
        }
    }
    if (nmatch == 1)
        return found;
    if (nprov == 0)
        *err = gp_cluster_key_fail(y, "offer", po->f.offer, GP_EINVALID,
                                   "no provider \"%s\" with GPU offers in data/providers.json "
                                   "(e.g. eks, gke, aks, oke, coreweave, lambda)",
                                   prov);
    else if (nmatch == 0 && lg > 0)
        *err = gp_cluster_key_fail(y, "offer", po->f.offer, GP_EINVALID,
                                   "%s/%s has no offer with gpu \"%s\" (expected one of: %s)", prov,
                                   inst, po->f.offer_gpu, gpus);
    else if (nmatch == 0)
        *err = gp_cluster_key_fail(
            y, "offer", po->f.offer, GP_EINVALID,
            "%s has no offer \"%s\" in data/providers.json (expected one of: %s)", prov, inst,
            insts);
    else
        *err = gp_cluster_key_fail(
            y, "offer", po->f.offer, GP_EINVALID,
            "%s/%s names %zu offers; write offer: {provider: %s, instance: %s, gpu: "
            "...} with gpu one of: %s",
            prov, inst, nmatch, prov, inst, gpus);
    return NULL;
}

double gp_offer_node_price(const struct gp_offer *o, uint32_t gpus, int spot)
{
    double node = spot ? o->spot_node_hour : o->on_demand_node_hour;
    double gpu = spot ? o->spot_gpu_hour : o->on_demand_gpu_hour;
    if (node >= 0 && (o->gpus_per_node == 0 || o->gpus_per_node == gpus))
        return node;
    if (gpu >= 0 && gpus > 0)
        return gpu * gpus;
    return -1;
}

const struct gp_provider *gp_provider_find(const char *id)
{
    for (size_t i = 0; i < gp_nproviders; i++)
        if (strcmp(gp_providers[i].id, id) == 0)
            return &gp_providers[i];
    return NULL;
}

/* --- does a GPU model name an offer's GPU? ------------------------------- */

#define MAX_WORDS 16

/* The words of a GPU name, upper-cased: vendor words and memory types
 * dropped, SXM<n> as SXM; memory sizes ("80GB") apart, in GB. */
struct gpu_words {
    char w[MAX_WORDS][24];
    size_t n;
    uint32_t mem_gb[MAX_WORDS];
    size_t nmem;
};

static bool is_form_factor(const char *w)
{
    return strcmp(w, "SXM") == 0 || strcmp(w, "PCIE") == 0 || strcmp(w, "NVL") == 0;
}

static void gpu_words_add(struct gpu_words *g, const char *text)
{
    for (const char *c = text; *c;) {
        while (*c && !isalnum((unsigned char)*c))
            c++;
        char w[24];
        size_t len = 0;
        while (isalnum((unsigned char)*c)) {
            if (len + 1 < sizeof w)
                w[len++] = (char)toupper((unsigned char)*c);
            c++;
        }
        w[len] = '\0';
        if (len == 0 || strcmp(w, "NVIDIA") == 0 || strcmp(w, "TESLA") == 0 ||
            strcmp(w, "AMD") == 0 || strcmp(w, "GEFORCE") == 0 || strncmp(w, "HBM", 3) == 0)
            continue;
        size_t digits = strspn(w, "0123456789");
        if (digits > 0 && digits <= 4 && strcmp(w + digits, "GB") == 0) {
            if (g->nmem < MAX_WORDS)
                g->mem_gb[g->nmem++] = (uint32_t)strtoul(w, NULL, 10);
            continue;
        }
        if (strncmp(w, "SXM", 3) == 0 && w[3] && strspn(w + 3, "0123456789") == strlen(w + 3))
            w[3] = '\0';
        if (g->n < MAX_WORDS)
            memcpy(g->w[g->n++], w, sizeof w);
    }
}

static bool gpu_words_has(const struct gpu_words *g, const char *w)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->w[i], w) == 0)
            return true;
    return false;
}

bool gp_offer_gpu_matches(const struct gp_offer *o, const char *model)
{
    struct gpu_words m, off;
    memset(&m, 0, sizeof m);
    memset(&off, 0, sizeof off);
    gpu_words_add(&m, model);
    gpu_words_add(&off, o->gpu);
    gpu_words_add(&off, o->form_factor);
    if (o->gpu_memory_gb && off.nmem < MAX_WORDS)
        off.mem_gb[off.nmem++] = o->gpu_memory_gb;
    if (m.n == 0 || !gpu_words_has(&off, m.w[0]))
        return false; /* the family */
    bool off_form = false;
    for (size_t i = 0; i < off.n; i++)
        off_form |= is_form_factor(off.w[i]);
    for (size_t i = 1; i < m.n; i++)
        if (!gpu_words_has(&off, m.w[i]) && (off_form || !is_form_factor(m.w[i])))
            return false;
    for (size_t i = 0; i < m.nmem && off.nmem > 0; i++) {
        bool found = false;
        for (size_t j = 0; j < off.nmem; j++)
            found |= m.mem_gb[i] == off.mem_gb[j];
        if (!found)
            return false;
    }
    return true;
}

/* --- the pool's price ----------------------------------------------------- */

/* An offer's provider must be able to give Kubernetes nodes (the
 * catalog's kubernetes: managed or byo, not none). */
static enum gp_err check_provider(struct gp_yaml *y, struct cluster_pool *po)
{
    const struct gp_provider *prov = gp_provider_find(po->f.offer_provider);
    if (!prov || prov->kubernetes != GP_KUBE_NONE)
        return GP_OK; /* an unknown provider: offer_find says so */
    return gp_cluster_key_fail(y, "offer", po->f.offer, GP_EINVALID,
                               "%s's machines cannot be Kubernetes nodes (data/providers.json: "
                               "kubernetes none: containers on shared hosts or a marketplace); "
                               "choose a provider with managed or bring-your-own Kubernetes, or "
                               "give pricePerHour",
                               prov->id);
}

/* pricePerHour, pricePerGpuHour or offer: one of them; the offer resolved. */
enum gp_err gp_cluster_check_price(struct gp_yaml *y, struct cluster_pool *po)
{
    struct gp_pool_spec *p = &po->spec;
    bool gpu = p->gpu_model && p->gpus_per_node > 0;
    if (po->f.price && po->f.gpu_price)
        return gp_cluster_key_fail(
            y, "pricePerGpuHour", po->f.gpu_price, GP_EINVALID,
            "not with pricePerHour (give the node's price or the GPU's, not both)");
    if (po->f.offer && (po->f.price || po->f.gpu_price))
        return gp_cluster_key_fail(y, "offer", po->f.offer, GP_EINVALID,
                                   "not with %s (the offer gives the price)",
                                   po->f.price ? "pricePerHour" : "pricePerGpuHour");
    if (po->f.gpu_price) {
        if (!gpu)
            return gp_cluster_key_fail(y, "pricePerGpuHour", po->f.gpu_price, GP_EINVALID,
                                       "the pool has no GPUs; give pricePerHour");
        p->price_per_hour_usd = po->f.gpu_price_usd * p->gpus_per_node;
    }
    if (po->f.od_price && !p->spot)
        return gp_cluster_key_fail(
            y, "onDemandPricePerHour", po->f.od_price, GP_EINVALID,
            "only with spot: true (a spot pool's on-demand price, for the savings)");
    if (!p->spot && !po->f.od_price)
        p->on_demand_per_hour_usd = p->price_per_hour_usd;
    if (!po->f.offer)
        return GP_OK;
    enum gp_err err = check_provider(y, po);
    if (err != GP_OK)
        return err;
    const struct gp_offer *o = offer_find(y, po, &err);
    if (!o)
        return err;
    if (!gpu)
        return gp_cluster_key_fail(
            y, "offer", po->f.offer, GP_EINVALID,
            "a GPU offer for a pool without GPUs; give gpu: or pricePerHour");
    if (!gp_offer_gpu_matches(o, p->gpu_model))
        return gp_cluster_key_fail(y, "offer", po->f.offer, GP_EINVALID,
                                   "%s/%s has %s GPUs, not the pool's gpu.model %s (the model "
                                   "names the offer's GPU: its family, and memory when both "
                                   "give it)",
                                   o->provider, o->instance, o->gpu, p->gpu_model);
    if (o->gpus_per_node && o->gpus_per_node != p->gpus_per_node)
        return gp_cluster_key_fail(y, "offer", po->f.offer, GP_EINVALID,
                                   "%s/%s has %u GPUs per node, the pool's gpu.count is %u",
                                   o->provider, o->instance, o->gpus_per_node, p->gpus_per_node);
    double od = gp_offer_node_price(o, p->gpus_per_node, 0);
    double price = p->spot ? gp_offer_node_price(o, p->gpus_per_node, 1) : od;
    if (price < 0)
        return gp_cluster_key_fail(
            y, "offer", po->f.offer, GP_EINVALID,
            "%s/%s has no %s price in data/providers.json; give pricePerHour", o->provider,
            o->instance, p->spot ? "spot" : "on-demand");
    p->price_per_hour_usd = price;
    if (!po->f.od_price)
        p->on_demand_per_hour_usd = od > 0 ? od : 0;
    p->offer = gp_arena_printf(y->arena, "%s/%s", o->provider, o->instance);
    if (!p->offer)
        return gp_cluster_oom(y);
    return GP_OK;
}

/* --- spec.controlPlane -------------------------------------------------- */

/* spec.controlPlane: {pricePerHour: 0.10} or {offer: eks} */
struct cp_obj {
    struct gp_cluster *c;
    struct fy_node *price, *offer;
};

static enum gp_err cp_price(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cp_obj *o = obj;
    o->price = v;
    return gp_yaml_number(y, v, 0, MAX_PRICE, &o->c->control_plane_per_hour_usd);
}

static enum gp_err cp_offer(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cp_obj *o = obj;
    const char *id;
    o->offer = v;
    enum gp_err err = gp_yaml_string(y, v, &id);
    if (err != GP_OK)
        return err;
    char q[80], list[400];
    size_t lo = 0;
    list[0] = '\0';
    for (size_t i = 0; i < gp_nproviders; i++) {
        const struct gp_provider *p = &gp_providers[i];
        if (strcmp(p->id, id) == 0) {
            if (p->control_plane_usd_per_hour < 0)
                return gp_yaml_fail(y, v, GP_EINVALID,
                                    "data/providers.json has no control-plane fee for %s; give "
                                    "pricePerHour",
                                    id);
            o->c->control_plane_per_hour_usd = p->control_plane_usd_per_hour;
            o->c->control_plane_offer = p->id;
            return GP_OK;
        }
        if (p->control_plane_usd_per_hour >= 0 && lo < sizeof list) {
            int w = snprintf(list + lo, sizeof list - lo, "%s%s", lo ? ", " : "", p->id);
            lo += w > 0 ? (size_t)w : 0;
        }
    }
    return gp_yaml_fail(y, v, GP_EINVALID,
                        "expected a provider of data/providers.json with a known fee (%s), got "
                        "\"%s\"",
                        list, gp_yaml_quote(v, q, sizeof q));
}

static const struct gp_yaml_field cp_fields[] = {
    GP_YCUSTOM("pricePerHour", cp_price, 0),
    GP_YCUSTOM("offer", cp_offer, 0),
};

enum gp_err gp_cluster_spec_control_plane(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cp_obj o = {obj, NULL, NULL};
    enum gp_err err =
        gp_yaml_object(y, v, cp_fields, sizeof cp_fields / sizeof cp_fields[0], &o, true);
    if (err == GP_OK && o.price && o.offer)
        err = gp_cluster_key_fail(y, "offer", o.offer, GP_EINVALID,
                                  "not with pricePerHour (the offer gives the fee)");
    return err;
}
