/* plan_gen.c - the planner's candidates (docs/plan.md, "Candidates"): for
 * each provider the limits allow, for each class of GPU need, the offers
 * that can serve it (GPU model, memory, GPUs per node) with each sharing
 * mode the provider allows (exclusive, time-slicing, MPS; MIG with a
 * layout cut for the pods' profiles) and the zone its pods require and each way of sizing the pool
 * (fixed at the peak; from zero; a base of on-demand nodes for the services; on-demand base with
 * spot nodes above it), combined over the classes; a plain rented instance per provider when the
 * whole workload fits on one machine. Each candidate gets its Cluster YAML (plan_yaml.c) and a
 * lower bound on its cost (plan_bound.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/mig.h"
#include "engine/sharing.h"
#include "plan/plan_internal.h"

/* Per provider, at most this many candidates (the cheapest choices of
 * each class are kept when the product is larger). */
#define MAX_PER_PROVIDER 256
#define MAX_CHOICES      512

static bool provider_allowed(const struct gp_provider *p, const struct gp_plan_limits *l,
                             bool plain)
{
    for (size_t i = 0; i < l->navoid_providers; i++)
        if (strcmp(p->id, l->avoid_providers[i]) == 0)
            return false;
    bool only = l->nonly_providers == 0;
    for (size_t i = 0; i < l->nonly_providers; i++)
        only |= strcmp(p->id, l->only_providers[i]) == 0;
    if (!only)
        return false;
    if (!plain && p->kubernetes == GP_KUBE_NONE)
        return false;
    if (!plain && l->managed_only && p->kubernetes != GP_KUBE_MANAGED)
        return false;
    if (l->rwx && p->rwx_storage != GP_TRI_YES)
        return false;
    if (l->drivers_preinstalled && p->drivers_preinstalled != GP_TRI_YES)
        return false;
    if (l->interconnect && !gp_catalog_has_word(p->interconnect, l->interconnect))
        return false;
    return true;
}

static bool region_allowed(const struct gp_offer *o, const struct gp_plan_limits *l)
{
    for (size_t i = 0; i < l->navoid_regions; i++)
        if (o->region && *o->region && gp_catalog_has_word(o->region, l->avoid_regions[i]))
            return false;
    return true;
}

/* The pool model name for the offer that the need accepts: one of its
 * models the offer's GPU is, or a name made from the offer's GPU
 * ("A100-80GB"); NULL when the offer cannot serve the need. */
/* Whether the offer's GPU is NVIDIA's (the pods ask nvidia.com/gpu): not
 * AMD's Instinct (MI300X), nor a machine whose GPU the catalog does not name. */
static bool nvidia_gpu(const char *gpu)
{
    if (gpu[0] == 'M' && gpu[1] == 'I' && gpu[2] >= '0' && gpu[2] <= '9')
        return false;
    return !strstr(gpu, "AMD") && !strstr(gpu, "Gaudi") && !strstr(gpu, "not stated");
}

const char *gp_plan_model_for(const struct gp_plan_need *nd, const struct gp_offer *o,
                              struct gp_arena *a)
{
    if (!nvidia_gpu(o->gpu) || o->gpus_per_node == 0 || o->gpus_per_node < nd->max_gpus)
        return NULL;
    if (nd->min_mem_gb && o->gpu_memory_gb < nd->min_mem_gb)
        return NULL;
    if (nd->nmodels) {
        for (size_t k = 0; k < nd->nmodels; k++)
            if (gp_offer_gpu_matches(o, nd->models[k]))
                return nd->models[k];
        return NULL;
    }
    char fam[32];
    size_t n = strcspn(o->gpu, " ");
    snprintf(fam, sizeof fam, "%.*s", (int)(n < 24 ? n : 24), o->gpu);
    if (o->gpu_memory_gb)
        return gp_arena_printf(a, "%s-%uGB", fam, o->gpu_memory_gb);
    return gp_arena_strdup(a, fam);
}

/* Whether an offer of the provider can serve the need at all (MIG: a
 * provider that allows it, a GPU with the need's profiles). */
static bool mig_layout(const struct gp_plan_need *nd, const char *model, uint8_t *counts);
static bool serves_need(const struct gp_plan_need *nd, const struct gp_provider *pv,
                        const struct gp_offer *o, struct gp_arena *a)
{
    const char *model = gp_plan_model_for(nd, o, a);
    uint8_t counts[GP_PLAN_MIG_PROFILES];
    return model && (!nd->mig || (pv->mig == GP_TRI_YES && mig_layout(nd, model, counts)));
}

/* One way to serve one need: one or two pools. */
struct choice {
    struct gp_plan_pool pool[2];
    size_t npools;
    double estimate; /* rough cost over the horizon, for keeping the cheapest */
    const char *what;
};

static uint32_t nodes_for(double gpus, uint32_t gpn)
{
    double n = ceil(gpus / gpn - 1e-9);
    return n < 1 ? 1 : (uint32_t)n;
}

/* How a pool of an offer shares its GPUs for a need: exclusive,
 * time-sliced or MPS (replicas), MIG (its instances per GPU). */
struct share {
    uint32_t replicas;
    bool mps, mig;
    uint8_t mig_counts[GP_PLAN_MIG_PROFILES];
};

/* GPUs at the peak and all the time, for need nd on GPUs shared so. */
static void share_gpus(const struct gp_plan_need *nd, const struct share *sh, double *peak_g,
                       double *base_g)
{
    uint32_t r = sh->replicas;
    *peak_g = r ? fmax(nd->peak_shares, nd->peak_gpus / r) : nd->peak_gpus;
    *base_g = r ? fmax(nd->base_shares, nd->base_gpus / r) : nd->base_gpus;
    if (!sh->mig)
        return;
    *peak_g = *base_g = 0;
    for (size_t k = 0; k < nd->nmig; k++) { /* the profile that fills its GPUs first */
        *peak_g = fmax(*peak_g, nd->mig_profiles[k].peak / sh->mig_counts[k]);
        *base_g = fmax(*base_g, nd->mig_profiles[k].base / sh->mig_counts[k]);
    }
}

/* The zone or region label a pool for need nd carries, when its pods
 * require one: the value that is the offer's region (or a zone of it:
 * us-east-1a of us-east-1), else the first the pods allow. */
static void zone_for(const struct gp_plan_need *nd, const struct gp_offer *o,
                     struct gp_plan_pool *p)
{
    if (!nd->zone_key)
        return;
    p->zone_key = nd->zone_key;
    p->zone_value = nd->zone_values[0];
    size_t rn = o->region ? strlen(o->region) : 0;
    for (size_t i = 0; i < nd->nzone_values && rn; i++) {
        const char *v = nd->zone_values[i];
        if (gp_catalog_has_word(o->region, v) ||
            (strncmp(v, o->region, rn) == 0 && strlen(v) == rn + 1)) {
            p->zone_value = v;
            return;
        }
    }
}

/* The sizings of one offer and sharing mode for need c. */
static size_t sizings(const struct gp_plan_need *nd, int c, const struct gp_catalog_row *row,
                      const char *model, const struct share *sh, const struct gp_plan_limits *l,
                      double hours, struct choice *out)
{
    const struct gp_offer *o = row->offer;
    uint32_t gpn = o->gpus_per_node;
    double od = gp_offer_node_price(o, gpn, 0), sp = gp_offer_node_price(o, gpn, 1);
    if (od <= 0)
        return 0;
    double peak_g, base_g;
    share_gpus(nd, sh, &peak_g, &base_g);
    uint32_t peak = nodes_for(peak_g, gpn), base = base_g > 0 ? nodes_for(base_g, gpn) : 0;
    base = base > peak ? peak : base;
    struct gp_plan_pool p = {.row = row,
                             .model = model,
                             .gpus_per_node = gpn,
                             .min_nodes = peak,
                             .max_nodes = peak,
                             .replicas = sh->replicas,
                             .node_usd_per_hour = od,
                             .on_demand_usd_per_hour = od,
                             .need = c};
    p.mps = sh->mps;
    p.mig = sh->mig;
    memcpy(p.mig_counts, sh->mig_counts, sizeof p.mig_counts);
    zone_for(nd, o, &p);
    double work_nh = gp_plan_need_hours(nd, &p) / gpn; /* node-hours of pure work */
    size_t n = 0;
    out[n] = (struct choice){{p}, 1, od * peak * hours, "fixed"};
    n++;
    if (peak > base) {
        p.min_nodes = 0;
        out[n] = (struct choice){{p}, 1, od * fmax(work_nh, 0), "from zero"};
        n++;
        if (peak >= 2 && (peak + 1) / 2 > base) { /* half the peak: queueing for money */
            struct gp_plan_pool h = p;
            h.max_nodes = (peak + 1) / 2;
            out[n] = (struct choice){{h}, 1, od * fmax(work_nh, 0) * 0.999, "half the peak"};
            n++;
        }
        if (base > 0) {
            p.min_nodes = base;
            out[n] = (struct choice){{p}, 1, od * fmax(work_nh, base * hours), "on-demand base"};
            n++;
        }
        bool spot_ok = l->spot_allowed && sp > 0 && row->provider->spot != GP_TRI_NO;
        if (spot_ok) {
            struct gp_plan_pool s = p;
            s.spot = true;
            s.node_usd_per_hour = sp;
            s.min_nodes = 0;
            s.max_nodes = peak - base;
            struct choice ch = {{s}, 1, 0, "spot above the base"};
            if (base > 0) {
                p.min_nodes = p.max_nodes = base;
                ch.pool[0] = p;
                ch.pool[1] = s;
                ch.npools = 2;
            } else {
                ch.what = "spot from zero";
            }
            ch.estimate = od * base * hours + sp * fmax(work_nh - base * hours, 0);
            out[n++] = ch;
        }
    }
    return n;
}

static int choice_cmp(const void *a, const void *b)
{
    const struct choice *x = a, *y = b;
    return x->estimate < y->estimate ? -1 : x->estimate > y->estimate;
}

/* The instances of each of a MIG need's profiles on one GPU of the
 * model: every profile in turn, the one with the fewest instances for its
 * demand (its peak) first, the larger first on a tie, until none fits
 * (gp_mig_add: the engine's placement, data/mig-profiles.json). False
 * when the model has no MIG or lacks a profile, or a profile gets none. */
static bool mig_layout(const struct gp_plan_need *nd, const char *model, uint8_t *counts)
{
    const struct gp_mig_model *m = gp_mig_model_find(model);
    if (!m)
        return false;
    int idx[GP_PLAN_MIG_PROFILES];
    for (size_t k = 0; k < nd->nmig; k++)
        if ((idx[k] = gp_mig_profile_find(m, nd->mig_profiles[k].profile)) < 0)
            return false;
    struct gp_mig_layout lay = {0};
    memset(counts, 0, GP_PLAN_MIG_PROFILES);
    bool full[GP_PLAN_MIG_PROFILES] = {false};
    for (;;) {
        int best = -1;
        double best_r = 0;
        for (size_t k = 0; k < nd->nmig; k++) {
            if (full[k])
                continue;
            double want = nd->mig_profiles[k].peak > 0 ? nd->mig_profiles[k].peak : 1;
            double r = counts[k] / want;
            if (best < 0 || r < best_r ||
                (r == best_r &&
                 m->profiles[idx[k]].memory_slices > m->profiles[idx[best]].memory_slices)) {
                best = (int)k;
                best_r = r;
            }
        }
        if (best < 0)
            break;
        if (gp_mig_add(m, &lay, (unsigned)idx[best]) < 0)
            full[best] = true;
        else
            counts[best]++;
    }
    for (size_t k = 0; k < nd->nmig; k++)
        if (!counts[k])
            return false;
    return true;
}

/* MPS clients per GPU for need nd on the offer: as many as keep every
 * fractional pod within a client's limits (the device plugin gives each
 * 100 / replicas % of the threads and the GPU's memory / replicas;
 * docs/sharing.md), at most 8 as for time-slicing; 0 when the need has
 * pods of several GPUs (MPS fails requests greater than one) or none. */
static uint32_t mps_clients(const struct gp_plan_need *nd, const struct gp_offer *o)
{
    if (nd->min_milli >= 1000 || nd->max_gpus > 1 || !(nd->share_modes & (1u << GP_SHARE_MPS)))
        return 0;
    uint32_t rep = 8;
    while (rep >= 2 && (100 / rep) * 10 < nd->max_frac_milli)
        rep--;
    if (nd->max_frac_mem_mib && o->gpu_memory_gb)
        while (rep >= 2 && (uint64_t)o->gpu_memory_gb * 1024 / rep < nd->max_frac_mem_mib)
            rep--;
    return rep >= 2 ? rep : 0;
}

/* The choices of one provider for need c, cheapest first (stable). */
static size_t need_choices(const struct gp_plan_need *nd, int c, const struct gp_provider *pv,
                           const struct gp_plan_limits *l, const struct gp_catalog_row *rows,
                           size_t nrows, double hours, struct gp_arena *a, struct choice *out)
{
    size_t n = 0;
    for (size_t r = 0; r < nrows && n + 16 < MAX_CHOICES; r++) {
        if (rows[r].provider != pv || !region_allowed(rows[r].offer, l))
            continue;
        const char *model = gp_plan_model_for(nd, rows[r].offer, a);
        if (!model)
            continue;
        struct share sh = {0};
        if (nd->mig) { /* MIG pods run on MIG pools only */
            if (pv->mig == GP_TRI_YES && mig_layout(nd, model, sh.mig_counts)) {
                sh.mig = true;
                n += sizings(nd, c, &rows[r], model, &sh, l, hours, out + n);
            }
            continue;
        }
        if (nd->share_modes & (1u << GP_SHARE_EXCLUSIVE)) /* unless its pods pin sharing */
            n += sizings(nd, c, &rows[r], model, &sh, l, hours, out + n);
        if (nd->min_milli < 1000 && pv->time_slicing != GP_TRI_NO &&
            (nd->share_modes & (1u << GP_SHARE_TIMESLICE))) {
            uint32_t rep = 1000 / nd->min_milli;
            sh.replicas = rep > 8 ? 8 : rep < 2 ? 2 : rep;
            n += sizings(nd, c, &rows[r], model, &sh, l, hours, out + n);
        }
        if (pv->mps == GP_TRI_YES && (sh.replicas = mps_clients(nd, rows[r].offer)) >= 2) {
            sh.mps = true;
            n += sizings(nd, c, &rows[r], model, &sh, l, hours, out + n);
        }
    }
    /* stable: by estimate, then the order made */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && choice_cmp(&out[j - 1], &out[j]) > 0; j--) {
            struct choice t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static enum gp_err add_cand(struct gp_plan *p, size_t *cap, const struct gp_plan_cand *c,
                            const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                            struct gp_arena *a, struct gp_diag *diag)
{
    if (p->ncands == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        struct gp_plan_cand *n = gp_arena_alloc(a, ncap * sizeof *n);
        if (!n)
            return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
        if (p->ncands)
            memcpy(n, p->cands, p->ncands * sizeof *n);
        p->cands = n;
        *cap = ncap;
    }
    struct gp_plan_cand *x = &p->cands[p->ncands];
    *x = *c;
    x->id = p->ncands++;
    enum gp_err err = gp_plan_yaml(x, d, l, 1.0, a, &x->yaml, diag);
    if (err == GP_OK)
        err = gp_plan_bound(x, d, &x->bound_usd, diag);
    return err;
}

static void add_cpu_pool(struct gp_plan_cand *c, const struct gp_plan_demand *d)
{
    if (d->cpu_peak_milli <= 0 || c->npools >= GP_PLAN_MAX_POOLS)
        return;
    double per = GP_PLAN_CPU_NODE_MILLI;
    uint32_t n = (uint32_t)ceil(d->cpu_peak_milli / per);
    c->pools[c->npools++] = (struct gp_plan_pool){.name = "cpu",
                                                  .max_nodes = n ? n : 1,
                                                  .node_usd_per_hour = GP_PLAN_CPU_NODE_USD,
                                                  .on_demand_usd_per_hour = GP_PLAN_CPU_NODE_USD,
                                                  .need = -1};
}

/* "1x8 H100-80GB + 0-3x8 A100-40GB spot + 3x1 A10-24GB ts4": nodes (a
 * range when autoscaled) x GPUs per node, the pool's model, spot, sharing. */
static const char *describe(const struct gp_plan_cand *c, struct gp_arena *a)
{
    char buf[512];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->npools && len < sizeof buf - 96; i++) {
        const struct gp_plan_pool *p = &c->pools[i];
        if (!p->row)
            continue;
        char nodes[24], rep[16] = "";
        if (p->min_nodes == p->max_nodes)
            snprintf(nodes, sizeof nodes, "%u", p->min_nodes);
        else
            snprintf(nodes, sizeof nodes, "%u-%u", p->min_nodes, p->max_nodes);
        if (p->mig)
            snprintf(rep, sizeof rep, " mig");
        else if (p->replicas)
            snprintf(rep, sizeof rep, " %s%u", p->mps ? "mps" : "ts", p->replicas);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%sx%u %s%s%s", len ? " + " : "",
                                nodes, p->gpus_per_node, p->model, p->spot ? " spot" : "", rep);
    }
    return gp_arena_strdup(a, buf);
}

/* Every combination of one choice per need (odometer over idx). */
static enum gp_err combine(struct gp_plan *p, size_t *cap, const struct gp_provider *pv,
                           struct choice **ch, const size_t *nch, size_t nneeds,
                           const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                           struct gp_arena *a, struct gp_diag *diag)
{
    size_t idx[GP_PLAN_MAX_NEEDS] = {0};
    for (;;) {
        struct gp_plan_cand c;
        memset(&c, 0, sizeof c);
        c.provider = pv;
        c.control_plane_usd_per_hour =
            pv->kubernetes == GP_KUBE_MANAGED && pv->control_plane_usd_per_hour > 0
                ? pv->control_plane_usd_per_hour
                : 0;
        for (size_t k = 0; k < nneeds; k++) {
            const struct choice *x = &ch[k][idx[k]];
            for (size_t j = 0; j < x->npools; j++)
                c.pools[c.npools++] = x->pool[j];
        }
        add_cpu_pool(&c, d);
        gp_plan_spot_rate(&c, l);
        if (!(c.what = describe(&c, a)))
            return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
        enum gp_err err = add_cand(p, cap, &c, d, l, a, diag);
        if (err != GP_OK)
            return err;
        size_t k = 0;
        while (k < nneeds && ++idx[k] == nch[k])
            idx[k++] = 0;
        if (k == nneeds)
            return GP_OK;
    }
}

/* How many choices of each need to keep so the product stays small. */
static size_t keep_per_need(size_t nneeds)
{
    size_t k = MAX_PER_PROVIDER;
    if (nneeds > 1)
        k = (size_t)floor(pow((double)MAX_PER_PROVIDER, 1.0 / (double)nneeds) + 1e-9);
    return k < 2 ? 2 : k;
}

static enum gp_err provider_cands(struct gp_plan *p, size_t *cap, const struct gp_provider *pv,
                                  const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                                  const struct gp_catalog_row *rows, size_t nrows,
                                  struct gp_arena *a, struct gp_diag *diag)
{
    double hours = d->horizon_s / 3600.0;
    struct choice *ch[GP_PLAN_MAX_NEEDS];
    size_t nch[GP_PLAN_MAX_NEEDS], keep = keep_per_need(d->nneeds);
    for (size_t c = 0; c < d->nneeds; c++) {
        if (!(ch[c] = gp_arena_alloc(a, MAX_CHOICES * sizeof *ch[c])))
            return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
        nch[c] = need_choices(&d->needs[c], (int)c, pv, l, rows, nrows, hours, a, ch[c]);
        if (nch[c] == 0)
            return GP_OK; /* the provider cannot serve this need */
        nch[c] = nch[c] > keep ? keep : nch[c];
    }
    return combine(p, cap, pv, ch, nch, d->nneeds, d, l, a, diag);
}

/* A plain instance of the provider: its cheapest offer whose one machine
 * holds the whole workload at its peak. */
static enum gp_err plain_cand(struct gp_plan *p, size_t *cap, const struct gp_provider *pv,
                              const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                              const struct gp_catalog_row *rows, size_t nrows, struct gp_arena *a,
                              struct gp_diag *diag)
{
    const struct gp_catalog_row *best = NULL;
    const char *best_model = NULL;
    double best_usd = 0;
    for (size_t r = 0; r < nrows; r++) {
        const struct gp_offer *o = rows[r].offer;
        if (rows[r].provider != pv || !region_allowed(o, l) || o->gpus_per_node == 0 ||
            o->gpus_per_node > 8 || o->gpus_per_node < d->peak_total_gpus)
            continue;
        double usd = gp_offer_node_price(o, o->gpus_per_node, 0);
        const char *fixed = NULL, *any = NULL;
        bool ok = usd > 0;
        for (size_t c = 0; c < d->nneeds && ok; c++) {
            const char *m = gp_plan_model_for(&d->needs[c], o, a);
            if (!m || d->needs[c].gang || d->needs[c].mig)
                ok = false; /* MIG: the planner cuts MIG layouts for clusters only */
            else if (d->needs[c].nmodels) {
                ok = !fixed || strcmp(fixed, m) == 0;
                fixed = m;
            } else if (!any)
                any = m;
        }
        const char *model = fixed ? fixed : any;
        if (ok && model && (!best || usd < best_usd)) {
            best = &rows[r];
            best_model = model;
            best_usd = usd;
        }
    }
    if (!best)
        return GP_OK;
    struct gp_plan_cand c;
    memset(&c, 0, sizeof c);
    c.provider = pv;
    c.plain = true;
    uint32_t rep = 0;
    for (size_t k = 0; k < d->nneeds; k++)
        if (d->needs[k].min_milli < 1000)
            rep = 8;
    gp_plan_spot_rate(&c, l);
    c.pools[c.npools++] = (struct gp_plan_pool){.row = best,
                                                .name = "instance",
                                                .model = best_model,
                                                .gpus_per_node = best->offer->gpus_per_node,
                                                .min_nodes = 1,
                                                .max_nodes = 1,
                                                .replicas = rep,
                                                .node_usd_per_hour = best_usd,
                                                .on_demand_usd_per_hour = best_usd,
                                                .need = GP_PLAN_NEED_ALL};
    for (size_t k = 0; k < d->nneeds && !c.pools[0].zone_key; k++) /* its zone, if pods need one */
        zone_for(&d->needs[k], best->offer, &c.pools[0]);
    c.what = gp_arena_printf(a, "plain instance %s (1x%u %s%s)",
                             best->offer->instance[0] ? best->offer->instance : best->offer->gpu,
                             best->offer->gpus_per_node, best_model, rep ? ", shared" : "");
    if (!c.what)
        return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
    return add_cand(p, cap, &c, d, l, a, diag);
}

enum gp_err gp_plan_generate(const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                             const struct gp_catalog_row *rows, size_t nrows, struct gp_arena *a,
                             struct gp_plan *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    out->demand = d;
    out->limits = l;
    if (d->nneeds == 0)
        return gp_diag_set(
            diag, GP_EINVALID,
            "plan: the workload asks for no GPU within the horizon; nothing to rent");
    if (d->nneeds > GP_PLAN_MAX_NEEDS)
        return gp_diag_set(diag, GP_EUNSUPPORTED,
                           "plan: the workload has %zu classes of GPU need (models and node "
                           "selectors); the planner handles at most %d",
                           d->nneeds, GP_PLAN_MAX_NEEDS);
    if (!(out->need_providers = gp_arena_alloc(a, d->nneeds * sizeof *out->need_providers)))
        return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
    for (size_t c = 0; c < d->nneeds; c++) { /* who offers each need, for a plan with none */
        const char *list = "";
        for (size_t i = 0; i < gp_nproviders; i++) {
            const struct gp_provider *pv = &gp_providers[i];
            bool any = false;
            for (size_t r = 0; r < nrows && !any && provider_allowed(pv, l, false); r++)
                any = rows[r].provider == pv && region_allowed(rows[r].offer, l) &&
                      serves_need(&d->needs[c], pv, rows[r].offer, a);
            if (any && !(list = gp_arena_printf(a, "%s%s%s", list, *list ? ", " : "", pv->id)))
                return gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
        }
        out->need_providers[c] = list;
    }
    size_t cap = 0;
    bool gang = false;
    for (size_t c = 0; c < d->nneeds; c++)
        gang |= d->needs[c].gang;
    for (size_t i = 0; i < gp_nproviders; i++) {
        const struct gp_provider *pv = &gp_providers[i];
        enum gp_err err = GP_OK;
        if (provider_allowed(pv, l, false))
            err = provider_cands(out, &cap, pv, d, l, rows, nrows, a, diag);
        if (err == GP_OK && l->plain_allowed && !gang && provider_allowed(pv, l, true))
            err = plain_cand(out, &cap, pv, d, l, rows, nrows, a, diag);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}
