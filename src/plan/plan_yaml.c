/* plan_yaml.c - a candidate as a gpuplane Cluster spec (docs/FORMATS.md):
 * the text --out writes and the simulator reads back through the Cluster
 * reader, so what is simulated is what is written. Each GPU pool names its
 * catalog offer, price date and source in a comment and carries its price
 * (the user's offers file may have changed the catalog's), the labels its
 * pods select, its sharing and its node image's driver (the newest the
 * workload's CUDA needs). Fixed order, fixed number formats: the same
 * candidate gives the same bytes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/model.h"
#include "plan/plan_internal.h"
#include "util/sbuf.h"

double gp_plan_billing_s(const struct gp_provider *p)
{
    const char *b = p->billing ? p->billing : "";
    if (strstr(b, "per second"))
        return 1;
    if (strstr(b, "per minute"))
        return 60;
    if (strstr(b, "hour"))
        return 3600;
    return 0;
}

void gp_plan_spot_rate(struct gp_plan_cand *c, const struct gp_plan_limits *l)
{
    c->billing_s = gp_plan_billing_s(c->provider);
    c->spot_rate =
        l->spot_rate_per_node_hour >= 0 ? l->spot_rate_per_node_hour : GP_PLAN_SPOT_RATE_DEFAULT;
    c->spot_rate_assumed = l->spot_rate_per_node_hour < 0;
}

/* Whether the pool's nodes carry label key=value. */
static bool pool_label(const struct gp_plan_pool *p, const struct gp_plan_demand *d,
                       const char *key, const char *value)
{
    for (size_t c = 0; c < d->nneeds; c++) {
        if (p->need != GP_PLAN_NEED_ALL && p->need != (int)c)
            continue;
        const struct gp_plan_need *nd = &d->needs[c];
        for (size_t i = 0; i < nd->nselector; i++)
            if (strcmp(nd->selector[i].key, key) == 0 && strcmp(nd->selector[i].value, value) == 0)
                return true;
    }
    return false;
}

bool gp_plan_serves(const struct gp_plan_cand *c, const struct gp_plan_pool *p,
                    const struct gp_plan_demand *d, size_t need)
{
    (void)c;
    const struct gp_plan_need *nd = &d->needs[need];
    if (!p->row || p->gpus_per_node < nd->max_gpus)
        return false;
    /* MIG instances (mixed strategy) serve only the pods that ask them,
     * and only the need whose layout the pool was cut for; no other GPU
     * request is served on a GPU in MIG mode (docs/sharing.md) */
    if (nd->mig != p->mig || (p->mig && p->need != (int)need))
        return false;
    if (nd->zone_key) {
        bool in = false;
        for (size_t i = 0; i < nd->nzone_values && p->zone_key; i++)
            in |= strcmp(p->zone_key, nd->zone_key) == 0 &&
                  strcmp(p->zone_value, nd->zone_values[i]) == 0;
        if (!in)
            return false;
    }
    if (nd->min_mem_gb && p->row->offer->gpu_memory_gb < nd->min_mem_gb)
        return false;
    bool model = nd->nmodels == 0;
    for (size_t k = 0; k < nd->nmodels; k++)
        model |= strcmp(nd->models[k], p->model) == 0;
    if (!model)
        return false;
    for (size_t i = 0; i < nd->nselector; i++)
        if (!pool_label(p, d, nd->selector[i].key, nd->selector[i].value))
            return false;
    return true;
}

/* A DNS-label pool name: "g<need>-<model>" in lower case, "-spot" after. */
static void pool_name(const struct gp_plan_pool *p, size_t i, char *buf, size_t size)
{
    if (!p->row) {
        snprintf(buf, size, "cpu");
        return;
    }
    size_t n = (size_t)snprintf(buf, size, "p%zu-", i);
    for (const char *s = p->model; *s && n + 6 < size && n < 40; s++) {
        char ch = *s;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            ch = '-';
        if (ch == '-' && buf[n - 1] == '-')
            continue;
        buf[n++] = ch;
    }
    while (n > 0 && buf[n - 1] == '-')
        n--;
    buf[n] = '\0';
    if (p->spot)
        snprintf(buf + n, size - n, "-spot");
}

static void labels(struct gp_sbuf *b, const struct gp_plan_pool *p, const struct gp_plan_demand *d)
{
    size_t written = 0;
    if (p->zone_key) { /* the zone or region its pods require */
        gp_sbuf_printf(b, "    labels: {\"%s\": \"%s\"", p->zone_key, p->zone_value);
        written++;
    }
    for (size_t c = 0; c < d->nneeds; c++) {
        if (p->need != GP_PLAN_NEED_ALL && p->need != (int)c)
            continue;
        const struct gp_plan_need *nd = &d->needs[c];
        for (size_t i = 0; i < nd->nselector; i++) {
            bool dup = false; /* an earlier need wrote it */
            for (size_t c2 = 0; c2 < c && p->need == GP_PLAN_NEED_ALL; c2++)
                for (size_t j = 0; j < d->needs[c2].nselector; j++)
                    dup |= strcmp(d->needs[c2].selector[j].key, nd->selector[i].key) == 0;
            if (p->zone_key && strcmp(nd->selector[i].key, p->zone_key) == 0)
                dup = true;
            if (dup || gp_cluster_label_owner(nd->selector[i].key))
                continue; /* the cluster sets those (the pool's name, GPU discovery) */
            gp_sbuf_printf(b, "%s\"%s\": \"%s\"", written++ ? ", " : "    labels: {",
                           nd->selector[i].key, nd->selector[i].value);
        }
    }
    if (written)
        gp_sbuf_add(b, "}\n");
}

/* The provider's billing rounding (its granularity, when coarser than a
 * second, and its minimum) and, when the limits ask for it, its maximum
 * node lifetime (data/provider-limits.json; docs/plan.md, "Provider
 * limits"): the simulation then bills and replaces nodes as it does. */
static void provider_limits(struct gp_sbuf *b, const struct gp_plan_cand *c,
                            const struct gp_plan_limits *l)
{
    const struct gp_provider *pr = c->provider;
    if (c->billing_s > 1)
        gp_sbuf_printf(b, "    billingGranularity: %gs\n", c->billing_s);
    if (pr && pr->billing_minimum_s > 0)
        gp_sbuf_printf(b, "    billingMinimum: %gs\n", pr->billing_minimum_s);
    if (pr && l && l->node_lifetimes && pr->max_node_lifetime_h > 0 && !c->plain)
        gp_sbuf_printf(b, "    maxNodeLifetime: %gh\n", pr->max_node_lifetime_h);
}

/* A MIG pool's sharing: the mixed strategy (each instance advertised as
 * nvidia.com/mig-<profile>, as its pods ask) and the layout of every GPU,
 * a mig-parted mig-devices map (docs/FORMATS.md, "GPU sharing"). */
static void mig_sharing(struct gp_sbuf *b, const struct gp_plan_pool *p,
                        const struct gp_plan_demand *d)
{
    const struct gp_plan_need *nd = &d->needs[p->need];
    gp_sbuf_add(b, "    sharing: {mode: mig, mig: {strategy: mixed, layout: {");
    for (size_t k = 0, w = 0; k < nd->nmig; k++)
        if (p->mig_counts[k])
            gp_sbuf_printf(b, "%s\"%s\": %u", w++ ? ", " : "", nd->mig_profiles[k].profile,
                           p->mig_counts[k]);
    gp_sbuf_add(b, "}}}\n");
}

static void gpu_pool(struct gp_sbuf *b, const struct gp_plan_cand *c, const struct gp_plan_pool *p,
                     size_t i, const struct gp_plan_demand *d, const struct gp_plan_limits *l,
                     double rate_scale)
{
    const struct gp_offer *o = p->row->offer;
    char name[64], drv[32] = "";
    pool_name(p, i, name, sizeof name);
    const char *topo = NULL;
    for (size_t k = 0; k < d->nneeds; k++) {
        if (p->need != GP_PLAN_NEED_ALL && p->need != (int)k)
            continue;
        topo = topo ? topo : d->needs[k].topology_key;
        for (size_t j = 0; j < d->needs[k].nselector; j++) /* pods that select the pool by name */
            if (strcmp(d->needs[k].selector[j].key, "gpuplane.io/pool") == 0)
                snprintf(name, sizeof name, "%.50s%s", d->needs[k].selector[j].value,
                         p->spot ? "-spot" : "");
    }
    int64_t cpu = GP_PLAN_CPU_PER_GPU_MILLI, mem = GP_PLAN_MEM_PER_GPU_MIB;
    for (size_t k = 0; k < d->nneeds; k++) {
        if (!gp_plan_serves(c, p, d, k))
            continue;
        cpu = d->needs[k].cpu_per_gpu_milli > cpu ? d->needs[k].cpu_per_gpu_milli : cpu;
        mem = d->needs[k].mem_per_gpu_mib > mem ? d->needs[k].mem_per_gpu_mib : mem;
    }
    cpu *= p->gpus_per_node;
    mem *= p->gpus_per_node;
    if (c->plain) { /* one machine: the CPU-only pods too */
        cpu += (int64_t)ceil(d->cpu_peak_milli);
        mem += (int64_t)ceil(d->cpu_peak_milli / 1000.0) * 4096;
    }
    cpu = (cpu + 999) / 1000;
    mem = (mem + 1023) / 1024;
    gp_sbuf_printf(b, "  # %s/%s: %s, %s $%.4g per node-hour%s (%s, %s)\n", p->row->provider->id,
                   o->instance[0] ? o->instance : "-", o->gpu, p->spot ? "spot" : "on demand",
                   p->node_usd_per_hour, p->row->user ? ", your offers file" : "",
                   o->price_date[0] ? o->price_date : "undated",
                   o->price_source_url[0] ? o->price_source_url : "no source");
    gp_sbuf_printf(b, "  - name: %s\n", name);
    if (d->driver_min)
        gp_driver_text(d->driver_min, true, drv, sizeof drv);
    gp_sbuf_printf(b, "    gpu: {model: \"%s\", count: %u", p->model, p->gpus_per_node);
    if (o->gpu_memory_gb)
        gp_sbuf_printf(b, ", memory: %uGi", o->gpu_memory_gb);
    if (drv[0])
        gp_sbuf_printf(b, ", driver: \"%s\"", drv);
    gp_sbuf_printf(b, "}\n    cpu: \"%lld\"\n    memory: %lldGi\n", (long long)cpu, (long long)mem);
    if (p->min_nodes == p->max_nodes)
        gp_sbuf_printf(b, "    count: %u\n", p->min_nodes);
    else
        gp_sbuf_printf(b, "    minCount: %u\n    maxCount: %u\n    bootTime: %gs\n", p->min_nodes,
                       p->max_nodes, GP_PLAN_BOOT_S);
    gp_sbuf_printf(b, "    pricePerHour: %.6g\n", p->node_usd_per_hour);
    provider_limits(b, c, l);
    if (p->spot)
        gp_sbuf_printf(b,
                       "    spot: true\n    onDemandPricePerHour: %.6g\n    interruptionRate: "
                       "%.6g\n    spotNotice: %gs\n",
                       p->on_demand_usd_per_hour, c->spot_rate * rate_scale, GP_PLAN_SPOT_NOTICE_S);
    labels(b, p, d);
    if (topo) /* the gangs' domain: one holds the whole pool */
        gp_sbuf_printf(b, "    topology: {key: \"%s\", nodesPerDomain: %u}\n", topo,
                       p->max_nodes ? p->max_nodes : 1);
    if (p->mig)
        mig_sharing(b, p, d);
    else if (p->replicas)
        gp_sbuf_printf(b, "    sharing: {mode: %s, replicas: %u}\n", p->mps ? "mps" : "timeslice",
                       p->replicas);
}

enum gp_err gp_plan_yaml(const struct gp_plan_cand *c, const struct gp_plan_demand *d,
                         const struct gp_plan_limits *l, double rate_scale, struct gp_arena *a,
                         const char **out, struct gp_diag *diag)
{
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    char pid[64];
    snprintf(pid, sizeof pid, "%s", c->provider->id);
    for (char *s = pid; *s; s++)
        *s = *s == '_' ? '-' : *s; /* akamai_lke: a DNS name */
    gp_sbuf_printf(&b,
                   "# gpuplane plan: candidate %zu, %s (%s)\n"
                   "apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata:\n  name: plan-%s\nspec:\n",
                   c->id, c->provider->id, c->what, pid);
    if (c->plain)
        gp_sbuf_add(&b, "  # a plain rented instance: no Kubernetes control plane\n");
    else if (c->control_plane_usd_per_hour > 0)
        gp_sbuf_printf(&b, "  controlPlane: {pricePerHour: %.6g}\n", c->control_plane_usd_per_hour);
    else if (c->provider->kubernetes == GP_KUBE_BYO)
        gp_sbuf_add(&b,
                    "  # bring-your-own Kubernetes: you run the control plane (k3s, kubeadm)\n");
    gp_sbuf_add(&b, "  autoscaler: {scaleDownUnneededTime: 10m}\n  nodePools:\n");
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_plan_pool *p = &c->pools[i];
        if (p->row) {
            gpu_pool(&b, c, p, i, d, l, rate_scale);
            continue;
        }
        gp_sbuf_printf(&b,
                       "  # CPU-only pods: a CPU node priced alike for every provider (the "
                       "catalog lists GPU offers only)\n"
                       "  - name: cpu\n    cpu: \"%.0f\"\n    memory: %.0fGi\n    minCount: %u\n"
                       "    maxCount: %u\n    bootTime: 60s\n    pricePerHour: %.6g\n",
                       GP_PLAN_CPU_NODE_MILLI / 1000, GP_PLAN_CPU_NODE_MIB / 1024, p->min_nodes,
                       p->max_nodes, p->node_usd_per_hour);
        provider_limits(&b, c, l);
    }
    *out = gp_arena_strdup(a, gp_sbuf_str(&b));
    gp_sbuf_free(&b);
    return *out ? GP_OK : gp_diag_set(diag, GP_ENOMEM, "plan: out of memory");
}

enum gp_err gp_plan_cluster(const struct gp_plan *p, const struct gp_plan_cand *c,
                            double rate_scale, struct gp_arena *a, struct gp_cluster *out,
                            struct gp_diag *diag)
{
    const char *yaml = c->yaml;
    enum gp_err err = GP_OK;
    if (rate_scale != 1.0)
        err = gp_plan_yaml(c, p->demand, p->limits, rate_scale, a, &yaml, diag);
    char name[64];
    snprintf(name, sizeof name, "plan candidate %zu", c->id);
    if (err == GP_OK)
        err = gp_cluster_parse_yaml(yaml, strlen(yaml), name, a, out, diag);
    if (err == GP_OK)
        err = gp_cluster_expand(out, a, diag);
    return err;
}
