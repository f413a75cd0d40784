/* static.c - the static packing experiment (the FGD paper's): the
 * workload's pods shuffled with the seed, resampled to `inflate` x the
 * cluster's GPUs, arrive one at a time and stay; the curve of unallocated
 * GPU against arrived GPU request. Also the engine's target workload. */
#include <math.h>
#include <stdlib.h>

#include "sim/internal.h"

#define MAX_STATIC_PODS 50000000 /* guards the static mode's resampling */

static uint64_t gpu_request_milli(const struct gp_pod_spec *p)
{
    return (uint64_t)p->gpu_count * p->gpu_milli;
}

/* How many pods an item contributes to the static experiment: the pods it
 * runs at once (timing, repeats and durations are ignored). */
static uint32_t static_count(const struct gp_item *it)
{
    switch (it->kind) {
    case GP_ITEM_DEPLOYMENT:
        return it->replicas;
    case GP_ITEM_JOB: {
        uint32_t target = it->completions ? it->completions : 1;
        uint32_t par = it->parallelism ? it->parallelism : 1;
        return par < target ? par : target;
    }
    default:
        return 1;
    }
}

static double unallocated_pct(const struct run *r)
{
    struct gp_engine_totals t;
    gp_engine_totals(r->e, &t);
    if (t.gpu_milli_total == 0)
        return 0;
    return 100.0 - 100.0 * (double)t.gpu_milli_alloc / (double)t.gpu_milli_total;
}

/* Tells the engine which request shapes to expect: the workload's pod
 * templates, each weighted by the pods it makes, the most popular covering
 * 95 % of pods (the FGD authors' "typical pods" setting). */
#define TARGET_COVERAGE 0.95

enum gp_err gp_sim_static_set_target(struct run *r)
{
    size_t n = r->wl->nitems;
    struct gp_pod_spec *specs = malloc((n ? n : 1) * sizeof *specs);
    uint32_t *counts = malloc((n ? n : 1) * sizeof *counts);
    enum gp_err err = GP_OK;
    if (!specs || !counts) {
        err = gp_sim_nomem(r);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct gp_item *it = &r->wl->items[i];
        uint64_t c = (uint64_t)static_count(it) * (it->repeat ? it->repeat : 1);
        specs[i] = it->pod;
        counts[i] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    }
    err = gp_engine_set_target(r->e, specs, counts, n, TARGET_COVERAGE);
    if (err != GP_OK)
        gp_diag_set(r->diag, err, "workload: cannot set the target workload: %s", gp_strerror(err));
out:
    free(specs);
    free(counts);
    return err;
}

/* The static mode's arrival sequence (docs/simulator.md): every pod of the
 * workload, shuffled with the seed, then resampled with replacement until
 * the GPU request reaches inflate x cap_milli (or cut to it). Before the
 * shuffle the pods are in item order; a trace read for the static mode
 * gives its rows' pods in the order of the rows, as one item per row
 * would. */
typedef GP_VEC(const struct gp_pod_spec *) pod_seq;

/* Appends the static_count pods of item it to pods. */
static enum gp_err push_item(const struct gp_item *it, pod_seq *pods, uint64_t *total_milli,
                             uint64_t *positive, struct gp_diag *diag)
{
    for (uint32_t c = static_count(it); c > 0; c--) {
        if (pods->len >= MAX_STATIC_PODS || GP_VEC_PUSH(pods, &it->pod) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "simulator: out of memory");
        *total_milli += gpu_request_milli(&it->pod);
        *positive += gpu_request_milli(&it->pod) > 0;
    }
    return GP_OK;
}

static enum gp_err static_sequence(const struct gp_sim_config *cfg, const struct gp_workload *wl,
                                   uint64_t cap_milli, pod_seq *pods, struct gp_diag *diag)
{
    struct gp_rng rng;
    uint64_t total_milli = 0, positive = 0;
    size_t t = 0; /* the next trace (io/workload.h): its rows in their order */
    for (size_t i = 0; i < wl->nitems;) {
        while (t < wl->ntraces && wl->traces[t].first < i)
            t++;
        const struct gp_trace *tr = t < wl->ntraces ? &wl->traces[t] : NULL;
        if (!tr || tr->first != i || tr->nitems == 0 || tr->nitems > wl->nitems - i) {
            enum gp_err err = push_item(&wl->items[i++], pods, &total_milli, &positive, diag);
            if (err != GP_OK)
                return err;
            continue;
        }
        for (size_t k = 0; k < tr->nrows; k++) {
            if (tr->row_items[k] >= tr->nitems)
                return gp_diag_set(diag, GP_ESTATE, "simulator: a trace row names no item");
            enum gp_err err =
                push_item(&wl->items[i + tr->row_items[k]], pods, &total_milli, &positive, diag);
            if (err != GP_OK)
                return err;
        }
        i += tr->nitems;
        t++;
    }
    /* shuffle (Fisher-Yates) */
    gp_sim_rng_keyed(&rng, cfg->seed, STREAM_SHUFFLE, 0, 0, 0, 0);
    for (size_t i = pods->len; i > 1; i--) {
        size_t j = (size_t)gp_rng_below(&rng, i);
        const struct gp_pod_spec *tmp = pods->items[i - 1];
        pods->items[i - 1] = pods->items[j];
        pods->items[j] = tmp;
    }
    /* inflate (or deflate) to inflate x capacity */
    const size_t n0 = pods->len;
    if (cfg->inflate <= 0 || cap_milli == 0 || n0 == 0)
        return GP_OK;
    const double target = cfg->inflate * (double)cap_milli;
    if ((double)total_milli > target) {
        while (pods->len > 0 && (double)total_milli > target)
            total_milli -= gpu_request_milli(pods->items[--pods->len]);
        return GP_OK;
    }
    while (positive > 0) {
        const struct gp_pod_spec *p = pods->items[gp_rng_below(&rng, n0)];
        if ((double)(total_milli + gpu_request_milli(p)) > target)
            break;
        if (pods->len >= MAX_STATIC_PODS)
            return gp_diag_set(diag, GP_ELIMIT,
                               "static mode: more than %d pods needed to reach %g x the "
                               "cluster's GPUs",
                               MAX_STATIC_PODS, cfg->inflate);
        if (GP_VEC_PUSH(pods, p) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "simulator: out of memory");
        total_milli += gpu_request_milli(p);
    }
    return GP_OK;
}

enum gp_err gp_sim_static_sequence(const struct gp_sim_config *cfg,
                                   const struct gp_cluster *cluster,
                                   const struct gp_workload *workload, struct gp_arena *a,
                                   const struct gp_pod_spec ***out, size_t *n, struct gp_diag *diag)
{
    uint64_t cap_milli = 0;
    for (size_t i = 0; i < cluster->nnodes; i++)
        cap_milli += (uint64_t)cluster->nodes[i].gpu_count * GP_GPU_MILLI;
    pod_seq pods = {0};
    enum gp_err err = static_sequence(cfg, workload, cap_milli, &pods, diag);
    *out = NULL;
    *n = 0;
    if (err == GP_OK && pods.len > 0) {
        *out = gp_arena_memdup(a, pods.items, pods.len * sizeof pods.items[0]);
        if (!*out)
            err = gp_diag_set(diag, GP_ENOMEM, "simulator: out of memory");
        else
            *n = pods.len;
    }
    GP_VEC_FREE(&pods);
    return err;
}

enum gp_err gp_sim_static_run(struct run *r)
{
    struct gp_sim_result *out = r->out;
    pod_seq pods = {0};
    enum gp_err err = GP_OK;
    struct gp_engine_totals tot;
    gp_engine_totals(r->e, &tot);
    const uint64_t cap_milli = tot.gpu_milli_total;
    if ((err = static_sequence(r->cfg, r->wl, cap_milli, &pods, r->diag)) != GP_OK)
        goto done;
    uint64_t total_milli = 0;
    for (size_t i = 0; i < pods.len; i++)
        total_milli += gpu_request_milli(pods.items[i]);

    /* the curve: one point per integer % of arrived GPU request */
    size_t xmax = 0;
    if (cap_milli > 0) {
        double top = r->cfg->inflate > 0 ? r->cfg->inflate * 100.0
                                         : 100.0 * (double)total_milli / (double)cap_milli;
        xmax = (size_t)floor(top + 1e-9);
        out->ncurve = xmax + 1;
        out->curve = gp_arena_alloc(r->a, out->ncurve * sizeof *out->curve);
        if (!out->curve) {
            err = gp_sim_nomem(r);
            goto done;
        }
    }
    size_t next_x = 0;
    bool have100 = false;
    uint64_t arrived = 0;
    double unalloc = unallocated_pct(r);
    for (size_t i = 0;; i++) {
        /* record the state after i pods */
        while (out->curve && next_x <= xmax && arrived * 100 >= (uint64_t)next_x * cap_milli) {
            out->curve[next_x].arrived_pct = (double)next_x;
            out->curve[next_x].unallocated_pct = unalloc;
            next_x++;
        }
        if (!have100 && cap_milli > 0 && arrived >= cap_milli) {
            out->unallocated_gpu_pct_at_100 = unalloc;
            have100 = true;
        }
        if (i == pods.len)
            break;
        const struct gp_pod_spec *p = pods.items[i];
        uint32_t id;
        struct gp_decision d;
        if ((err = gp_engine_pod_add(r->e, p, 0, &id)) != GP_OK) {
            err = gp_diag_set(r->diag, err, "static mode: the engine refused pod %s: %s",
                              p->name ? p->name : "unnamed", gp_strerror(err));
            goto done;
        }
        if ((err = gp_engine_schedule_pod(r->e, id, &d)) != GP_OK) {
            err = gp_diag_set(r->diag, err, "static mode: scheduling pod %s failed: %s",
                              p->name ? p->name : "unnamed", gp_strerror(err));
            goto done;
        }
        out->pods_submitted++;
        if (d.kind == GP_DECISION_BIND) {
            out->pods_scheduled++;
            out->binds++;
        } else {
            out->pods_failed++;
            /* its item, for the pods that can never fit (nofit.c) */
            size_t item =
                (size_t)((const char *)p - (const char *)r->wl->items) / sizeof *r->wl->items;
            struct static_fail sf = {(uint32_t)item, id};
            if (item < r->wl->nitems && &r->wl->items[item].pod == p &&
                GP_VEC_PUSH(&r->static_failed, sf) != 0) {
                err = gp_sim_nomem(r);
                goto done;
            }
            enum gp_filter main_reason = gp_explain_main(&d.explain);
            if (main_reason != GP_FILTER_COUNT)
                out->unschedulable[main_reason]++;
            if ((err = gp_engine_pod_finished(r->e, id)) != GP_OK) {
                err = gp_diag_set(r->diag, err, "static mode: removing pod %s failed: %s",
                                  p->name ? p->name : "unnamed", gp_strerror(err));
                goto done;
            }
        }
        arrived += gpu_request_milli(p);
        unalloc = unallocated_pct(r);
        gp_sim_progress(r, (double)(i + 1) / (double)pods.len);
    }
    for (; out->curve && next_x <= xmax; next_x++) {
        out->curve[next_x].arrived_pct = (double)next_x;
        out->curve[next_x].unallocated_pct = unalloc;
    }
    if (!have100)
        out->unallocated_gpu_pct_at_100 = unalloc;
    out->pods_running_end = out->pods_scheduled;
    err = gp_sim_nofit_finish(r);
done:
    GP_VEC_FREE(&pods);
    return err;
}
