/* study_serve.c - the sharing study's services (study_out.h): for the
 * workload's InferenceServices with a latencyLimit (plain request/response
 * models), on each GPU pool of the cluster, the fewest GPUs on which their
 * replicas keep every p99 at the peak load within its limit when they share
 * GPUs by time-slicing or MPS (serve/pack.h: co-location slows replicas as
 * the simulator does), against one replica per GPU (docs/serve.md, "Dense
 * packing"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/study_out.h"
#include "io/service.h"
#include "serve/pack.h"

#define PEAK_WINDOW_S 60.0 /* a trace's peak: its busiest minute */

static const uint32_t TS_REPLICAS[] = {2, 4, 6, 8, 12, 16}; /* as the study tries them */
static const uint32_t MPS_CLIENTS[] = {2, 3, 4, 5, 6, 7, 8};

/* A served Deployment's pod template: its GPU share and memory. */
static const struct gp_pod_spec *template_of(const struct gp_workload *w, const char *deployment)
{
    for (size_t k = 0; k < w->nitems; k++)
        if (w->items[k].kind == GP_ITEM_DEPLOYMENT && w->items[k].name &&
            strcmp(w->items[k].name, deployment) == 0)
            return &w->items[k].pod;
    return NULL;
}

struct scratch {
    struct gp_pack_service *svc;
    struct gp_pack_work w;
};

/* The fewest GPUs over the settings of one mode; *setting the one chosen. */
static uint32_t best(const struct gp_pool_spec *p, enum gp_pack_share mode, const uint32_t *set,
                     size_t nset, const struct gp_pack_service *in, size_t n, struct scratch *sc,
                     uint32_t *setting, uint32_t *infeasible, uint32_t *baseline)
{
    uint32_t fewest = 0;
    *setting = 0;
    *infeasible = 0;
    for (size_t k = 0; k < nset; k++) {
        struct gp_pack_gpu g = {mode, set[k], p->gpu_mem_mib, 0, 0};
        if (mode == GP_PACK_MPS) { /* the device plugin's defaults per client */
            g.mps_thread_milli = 1000.0 / set[k];
            g.mps_mem_mib = p->gpu_mem_mib ? (double)p->gpu_mem_mib / set[k] : 0;
        }
        memcpy(sc->svc, in, n * sizeof *in);
        uint32_t base = 0;
        uint32_t used = gp_serve_pack(&g, sc->svc, n, &sc->w, &base);
        uint32_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += !sc->svc[i].feasible;
        /* the fewest services left out, then the fewest GPUs */
        if (k == 0 || bad < *infeasible || (bad == *infeasible && used < fewest)) {
            fewest = used;
            *setting = set[k];
            *infeasible = bad;
            *baseline = base;
        }
    }
    return fewest;
}

enum gp_err gp_study_services(const struct gp_cluster *c, const struct gp_workload *w,
                              struct gp_arena *a, struct gp_study_services *out, struct gp_diag *d)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < w->nservices; i++)
        n += w->services[i].latency_limit_s > 0 && !w->services[i].llm;
    if (n == 0)
        return GP_OK;
    struct gp_pack_service *in = gp_arena_alloc(a, n * sizeof *in);
    struct scratch sc = {gp_arena_alloc(a, n * sizeof *sc.svc), {0}};
    size_t cap = n * GP_PACK_MAX_REPLICAS;
    sc.w = (struct gp_pack_work){cap,
                                 gp_arena_alloc(a, cap * sizeof(uint32_t)),
                                 gp_arena_alloc(a, cap * sizeof(double)),
                                 gp_arena_alloc(a, cap * sizeof(double)),
                                 gp_arena_alloc(a, cap * sizeof(uint32_t)),
                                 gp_arena_alloc(a, n * sizeof(size_t)),
                                 gp_arena_alloc(a, n * sizeof(uint32_t))};
    out->rows = gp_arena_alloc(a, (c->npools ? c->npools : 1) * sizeof *out->rows);
    if (!in || !sc.svc || !sc.w.gpu_of || !sc.w.demand || !sc.w.mem || !sc.w.count || !sc.w.first ||
        !sc.w.order || !out->rows)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    size_t j = 0;
    for (size_t i = 0; i < w->nservices; i++) {
        const struct gp_service *s = &w->services[i];
        if (!(s->latency_limit_s > 0) || s->llm)
            continue;
        const struct gp_pod_spec *t = template_of(w, s->deployment);
        double milli = t && t->gpu_count == 1 && t->gpu_milli > 0 ? t->gpu_milli : 1000;
        in[j++] = (struct gp_pack_service){.rps_alone = s->rps_per_replica,
                                           .peak_rps = gp_load_peak(&s->load, PEAK_WINDOW_S),
                                           .limit_s = s->latency_limit_s,
                                           .demand_milli = milli,
                                           .mem_mib = t ? t->gpu_mem_mib : 0};
    }
    out->nservices = n;
    for (size_t k = 0; k < c->npools; k++) {
        const struct gp_pool_spec *p = &c->pools[k];
        if (!p->gpu_model || p->gpus_per_node == 0)
            continue;
        struct gp_study_svc_row *r = &out->rows[out->nrows++];
        r->pool = p->name;
        r->gpu_model = p->gpu_model;
        r->ts_gpus =
            best(p, GP_PACK_TIMESLICE, TS_REPLICAS, sizeof TS_REPLICAS / sizeof TS_REPLICAS[0], in,
                 n, &sc, &r->ts_replicas, &r->ts_infeasible, &r->one_per_gpu);
        uint32_t base_mps;
        r->mps_gpus = best(p, GP_PACK_MPS, MPS_CLIENTS, sizeof MPS_CLIENTS / sizeof MPS_CLIENTS[0],
                           in, n, &sc, &r->mps_clients, &r->mps_infeasible, &base_mps);
    }
    return GP_OK;
}

static int saving_pct(uint32_t gpus, uint32_t base)
{
    return base ? (int)lround(100.0 * (1.0 - (double)gpus / base)) : 0;
}

void gp_study_services_print(FILE *f, const struct gp_study_services *s)
{
    if (!s || s->nrows == 0)
        return;
    fprintf(f,
            "\nservices within their latency limits (%zu with latencyLimit; p99 at the peak "
            "load, replicas slowed by their company):\n",
            s->nservices);
    fprintf(f, "%-22s %12s %18s %18s\n", "pool", "one per GPU", "time-slicing", "MPS");
    for (size_t i = 0; i < s->nrows; i++) {
        const struct gp_study_svc_row *r = &s->rows[i];
        char ts[48], mps[48];
        snprintf(ts, sizeof ts, "%u (x%u, -%d %%)", r->ts_gpus, r->ts_replicas,
                 saving_pct(r->ts_gpus, r->one_per_gpu));
        snprintf(mps, sizeof mps, "%u (x%u, -%d %%)", r->mps_gpus, r->mps_clients,
                 saving_pct(r->mps_gpus, r->one_per_gpu));
        fprintf(f, "%-22.22s %12u %18s %18s\n", r->pool, r->one_per_gpu, ts, mps);
        if (r->ts_infeasible || r->mps_infeasible)
            fprintf(f, "  %u (time-slicing) and %u (MPS) services cannot meet their limit on %s\n",
                    r->ts_infeasible, r->mps_infeasible, r->gpu_model);
    }
}

json_t *gp_study_services_json(const struct gp_study_services *s)
{
    json_t *a = json_array();
    for (size_t i = 0; a && s && i < s->nrows; i++) {
        const struct gp_study_svc_row *r = &s->rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "pool", json_string(r->pool));
        json_object_set_new(o, "gpu_model", json_string(r->gpu_model));
        json_object_set_new(o, "one_per_gpu_gpus", json_integer(r->one_per_gpu));
        json_object_set_new(o, "timeslice_gpus", json_integer(r->ts_gpus));
        json_object_set_new(o, "timeslice_replicas", json_integer(r->ts_replicas));
        json_object_set_new(o, "timeslice_infeasible", json_integer(r->ts_infeasible));
        json_object_set_new(o, "mps_gpus", json_integer(r->mps_gpus));
        json_object_set_new(o, "mps_clients", json_integer(r->mps_clients));
        json_object_set_new(o, "mps_infeasible", json_integer(r->mps_infeasible));
        json_array_append_new(a, o);
    }
    return a;
}

void gp_study_services_html(struct gp_sbuf *out, const struct gp_study_services *s)
{
    if (!s || s->nrows == 0)
        return;
    gp_sbuf_printf(out,
                   "<section class=\"panel\"><h2>Services within their latency limits</h2>\n"
                   "<p class=\"sub\">%zu services with a latencyLimit: the GPUs their replicas "
                   "need one per GPU, and packed so that every p99 at the peak load stays within "
                   "its limit, replicas slowed by their company (docs/serve.md, \"Dense "
                   "packing\").</p>\n<table>\n<tr><th>pool</th><th class=\"num\">one per GPU</th>"
                   "<th class=\"num\">time-slicing</th><th class=\"num\">MPS</th>"
                   "<th class=\"num\">cannot meet their limit</th></tr>\n",
                   s->nservices);
    for (size_t i = 0; i < s->nrows; i++) {
        const struct gp_study_svc_row *r = &s->rows[i];
        gp_sbuf_add(out, "<tr><th>");
        gp_sbuf_add_xml(out, r->pool);
        gp_sbuf_printf(out,
                       "</th><td class=\"num\">%u</td><td class=\"num\">%u (x%u, -%d %%)</td>"
                       "<td class=\"num\">%u (x%u, -%d %%)</td><td class=\"num\">%u / %u</td>"
                       "</tr>\n",
                       r->one_per_gpu, r->ts_gpus, r->ts_replicas,
                       saving_pct(r->ts_gpus, r->one_per_gpu), r->mps_gpus, r->mps_clients,
                       saving_pct(r->mps_gpus, r->one_per_gpu), r->ts_infeasible,
                       r->mps_infeasible);
    }
    gp_sbuf_add(out, "</table>\n</section>\n");
}
