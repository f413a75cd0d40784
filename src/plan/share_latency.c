/* share_latency.c - the sharing study's latency check (share_internal.h):
 * for an option that fits, each InferenceService with a latencyLimit whose
 * pods the option's pool takes is checked at every peak that runs them,
 * its replicas at the speed and memory the engine's placement gives them
 * (share_pack.c), with serve/pack.h's latency model: M/M/c for a plain
 * model, the LLM batch with its KV cache, TTFT and ITL (docs/sharing.md,
 * "Services with a latency limit"). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "plan/share_internal.h"

#define PEAK_WINDOW_S 60.0 /* a trace's peak: its busiest minute */

static const struct gp_pod_spec *template_of(const struct gp_workload *w, const char *deployment)
{
    for (size_t k = 0; deployment && k < w->nitems; k++)
        if (w->items[k].kind == GP_ITEM_DEPLOYMENT && w->items[k].name &&
            strcmp(w->items[k].name, deployment) == 0)
            return &w->items[k].pod;
    return NULL;
}

void gp_study_pack_service(const struct gp_workload *w, const struct gp_service *s,
                           struct gp_pack_service *out)
{
    const struct gp_pod_spec *t = template_of(w, s->deployment);
    memset(out, 0, sizeof *out);
    out->rps_alone = s->rps_per_replica;
    out->peak_rps = gp_load_peak(&s->load, PEAK_WINDOW_S);
    out->limit_s = s->latency_limit_s;
    out->demand_milli = t && t->gpu_count == 1 && t->gpu_milli > 0 ? t->gpu_milli : 1000;
    out->mem_mib = t ? t->gpu_mem_mib : 0;
    out->gpus = t && !t->mig_profile && t->gpu_count > 1 ? t->gpu_count : 1;
    out->mig_profile = -1;
    if (!s->llm)
        return;
    out->llm = &s->model;
    out->in_tokens = s->in_tokens;
    out->out_tokens = s->out_tokens;
    if (s->load.kind == GP_LOAD_TRACE) /* the trace's own tokens, on average */
        gp_load_mean(&s->load, 0, (double)s->load.nbins * s->load.step_s, &out->in_tokens,
                     &out->out_tokens);
}

/* The item whose pod template p is (the study's pods point into w->items). */
static size_t item_of(const struct gp_workload *w, const struct gp_pod_spec *p)
{
    const char *at = (const char *)p - offsetof(struct gp_item, pod);
    return (size_t)((const struct gp_item *)(const void *)at - w->items);
}

/* How far past its limit a figure is (below 1: within). */
static double ratio(const struct gp_study_latency *l)
{
    return l->limit_s > 0 ? l->p99_s / l->limit_s : 0;
}

/* Service j's replicas among the np pods placed: their latency, kept in
 * *v when it is the worst seen. */
static void check_one(const struct gp_workload *w, const struct gp_study_limited *lim,
                      const struct gp_pod_spec **pods, size_t np, const double *speed,
                      const double *mem, struct gp_study_latency *v, bool *seen)
{
    uint32_t c = 0;
    double vs = 0, fs = 0;
    for (size_t i = 0; i < np; i++)
        if (item_of(w, pods[i]) == lim->item) {
            c++;
            vs += speed[i];
            fs += mem[i];
        }
    if (c == 0)
        return;
    struct gp_study_latency x = *v;
    x.replicas = c;
    x.speed = vs / c;
    x.mem_frac = fs / c;
    x.p99_s = gp_serve_pack_latency(&lim->model, c, x.speed, x.mem_frac, &x.itl_s);
    x.within = gp_serve_pack_within(&lim->model, x.p99_s, x.itl_s);
    if (!*seen || (v->within && !x.within) || (v->within == x.within && ratio(&x) > ratio(v)))
        *v = x;
    *seen = true;
}

enum gp_err gp_study_latency_check(const struct gp_workload *w, const struct gp_study_peak *peaks,
                                   size_t npeaks, const struct gp_study_limited *lim, size_t nlim,
                                   const struct gp_node_spec *spec, uint32_t nodes,
                                   const bool *take, struct gp_study_option *o, struct gp_arena *a,
                                   struct gp_diag *diag)
{
    o->meets_limits = true;
    o->latency = NULL;
    o->nlatency = 0;
    size_t m = 0;
    for (size_t j = 0; j < nlim; j++)
        m += take[lim[j].item];
    if (m == 0)
        return GP_OK;
    struct gp_study_latency *v = gp_arena_alloc(a, m * sizeof *v);
    bool *seen = gp_arena_alloc(a, m * sizeof *seen);
    const struct gp_study_limited **of = gp_arena_alloc(a, m * sizeof *of);
    if (!v || !seen || !of)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    for (size_t j = 0, k = 0; j < nlim; j++)
        if (take[lim[j].item]) {
            of[k] = &lim[j];
            seen[k] = false;
            v[k++] = (struct gp_study_latency){.service = lim[j].svc->name,
                                               .llm = lim[j].svc->llm,
                                               .p99_s = INFINITY,
                                               .limit_s = lim[j].model.limit_s,
                                               .within = false};
        }
    enum gp_err err = GP_OK;
    for (size_t k = 0; k < npeaks && err == GP_OK; k++) {
        bool any = false;
        for (size_t j = 0; j < m && !any; j++)
            any = peaks[k].count[of[j]->item] > 0;
        if (!any)
            continue;
        const struct gp_pod_spec **pods;
        size_t np;
        if ((err = gp_study_peak_pods(w, &peaks[k], take, &pods, &np, diag)) != GP_OK)
            break;
        double *speed = malloc((np ? np : 1) * sizeof *speed);
        double *mem = malloc((np ? np : 1) * sizeof *mem);
        struct gp_study_trial t;
        if (!speed || !mem)
            err = gp_diag_set(diag, GP_ENOMEM, "out of memory");
        else if ((err = gp_study_pack_pods(spec, nodes, pods, np, &t, speed, mem, diag)) == GP_OK &&
                 t.all)
            for (size_t j = 0; j < m; j++)
                check_one(w, of[j], pods, np, speed, mem, &v[j], &seen[j]);
        free(speed);
        free(mem);
        free(pods);
    }
    if (err != GP_OK)
        return err;
    for (size_t j = 0; j < m; j++)
        o->meets_limits &= v[j].within;
    o->latency = v;
    o->nlatency = m;
    return GP_OK;
}
