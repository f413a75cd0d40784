/* study_serve.c - the sharing study's services (study_out.h): for the
 * workload's InferenceServices with a latencyLimit (plain models and
 * LLMs), on each GPU pool of the cluster, the fewest GPUs on which their
 * replicas keep every service within its limit at the peak load when they
 * share GPUs by time-slicing, MPS or MIG (serve/pack.h: co-location slows
 * replicas as the simulator does; an LLM's KV cache follows its memory),
 * against one replica per GPU (docs/serve.md, "Dense packing"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/study_out.h"
#include "io/service.h"
#include "serve/pack.h"

static const uint32_t TS_REPLICAS[] = {2, 4, 6, 8, 12, 16}; /* as the study tries them */
static const uint32_t MPS_CLIENTS[] = {2, 3, 4, 5, 6, 7, 8};

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
        struct gp_pack_gpu g = {mode, set[k], p->gpu_mem_mib, 0, 0, NULL};
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
        n += w->services[i].latency_limit_s > 0;
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
                                 gp_arena_alloc(a, n * sizeof(uint32_t)),
                                 gp_arena_alloc(a, cap * sizeof(struct gp_mig_layout))};
    out->rows = gp_arena_alloc(a, (c->npools ? c->npools : 1) * sizeof *out->rows);
    if (!in || !sc.svc || !sc.w.gpu_of || !sc.w.demand || !sc.w.mem || !sc.w.count || !sc.w.first ||
        !sc.w.order || !sc.w.layout || !out->rows)
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    size_t j = 0;
    for (size_t i = 0; i < w->nservices; i++) {
        const struct gp_service *s = &w->services[i];
        if (s->latency_limit_s > 0)
            gp_study_pack_service(w, s, &in[j++]);
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
        const struct gp_mig_model *m = gp_mig_model_find(p->gpu_model);
        if (m) { /* MIG: each service on its profile, instances where the layouts allow */
            struct gp_pack_gpu g = {GP_PACK_MIG, 0, p->gpu_mem_mib, 0, 0, m};
            memcpy(sc.svc, in, n * sizeof *in);
            r->has_mig = true;
            r->mig_gpus = gp_serve_pack(&g, sc.svc, n, &sc.w, &base_mps);
            for (size_t i = 0; i < n; i++)
                r->mig_infeasible += !sc.svc[i].feasible;
        }
    }
    return GP_OK;
}

static int saving_pct(uint32_t gpus, uint32_t base)
{
    return base ? (int)lround(100.0 * (1.0 - (double)gpus / base)) : 0;
}

/* "2 (x4, -60 %)"; with services that cannot meet their limit there, how
 * many instead of a saving (the GPUs then hold only the others):
 * "0 (x2, 1 out)". setting 0: none written ("2 (-60 %)"). */
static const char *cell(char *buf, size_t n, uint32_t gpus, uint32_t setting, uint32_t out,
                        uint32_t base)
{
    char x[16] = "";
    if (setting)
        snprintf(x, sizeof x, "x%u, ", setting);
    if (out)
        snprintf(buf, n, "%u (%s%u out)", gpus, x, out);
    else
        snprintf(buf, n, "%u (%s-%d %%)", gpus, x, saving_pct(gpus, base));
    return buf;
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
        fprintf(
            f, "%-22.22s %12u %18s %18s\n", r->pool, r->one_per_gpu,
            cell(ts, sizeof ts, r->ts_gpus, r->ts_replicas, r->ts_infeasible, r->one_per_gpu),
            cell(mps, sizeof mps, r->mps_gpus, r->mps_clients, r->mps_infeasible, r->one_per_gpu));
        if (r->has_mig && r->mig_infeasible)
            fprintf(f, "  MIG: %u %s (%u out), each service on the profile that needs least\n",
                    r->mig_gpus, r->mig_gpus == 1 ? "GPU" : "GPUs", r->mig_infeasible);
        else if (r->has_mig)
            fprintf(f, "  MIG: %u %s (-%d %%), each service on the profile that needs least\n",
                    r->mig_gpus, r->mig_gpus == 1 ? "GPU" : "GPUs",
                    saving_pct(r->mig_gpus, r->one_per_gpu));
        if (r->ts_infeasible || r->mps_infeasible)
            fprintf(f, "  %u (time-slicing) and %u (MPS) services cannot meet their limit on %s\n",
                    r->ts_infeasible, r->mps_infeasible, r->gpu_model);
        if (r->mig_infeasible)
            fprintf(f, "  %u %s cannot meet their limit on any MIG profile of %s\n",
                    r->mig_infeasible, r->mig_infeasible == 1 ? "service" : "services",
                    r->gpu_model);
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
        json_object_set_new(o, "mig_gpus", r->has_mig ? json_integer(r->mig_gpus) : json_null());
        json_object_set_new(o, "mig_infeasible",
                            r->has_mig ? json_integer(r->mig_infeasible) : json_null());
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
                   "<th class=\"num\">MIG</th>"
                   "<th class=\"num\">cannot meet their limit</th></tr>\n",
                   s->nservices);
    for (size_t i = 0; i < s->nrows; i++) {
        const struct gp_study_svc_row *r = &s->rows[i];
        gp_sbuf_add(out, "<tr><th>");
        gp_sbuf_add_xml(out, r->pool);
        char ts[48], mps[48], mig[48];
        gp_sbuf_printf(
            out, "</th><td class=\"num\">%u</td><td class=\"num\">%s</td><td class=\"num\">%s</td>",
            r->one_per_gpu,
            cell(ts, sizeof ts, r->ts_gpus, r->ts_replicas, r->ts_infeasible, r->one_per_gpu),
            cell(mps, sizeof mps, r->mps_gpus, r->mps_clients, r->mps_infeasible, r->one_per_gpu));
        if (r->has_mig)
            gp_sbuf_printf(
                out, "<td class=\"num\">%s</td>",
                cell(mig, sizeof mig, r->mig_gpus, 0, r->mig_infeasible, r->one_per_gpu));
        else
            gp_sbuf_add(out, "<td class=\"num\">-</td>");
        gp_sbuf_printf(out, "<td class=\"num\">%u / %u / %u</td></tr>\n", r->ts_infeasible,
                       r->mps_infeasible, r->mig_infeasible);
    }
    gp_sbuf_add(out, "</table>\n</section>\n");
}
