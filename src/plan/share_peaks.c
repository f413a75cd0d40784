/* share_peaks.c - what runs at once on a workload's timeline, for the
 * sharing study (share_internal.h): a sweep over the runs' starts and
 * ends keeps, at each moment when pods are about to end, the count of
 * running pods of each item, and of those the sets no other set contains
 * (if one set holds at least as many pods of every item as another, the
 * nodes that hold the first hold the second). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/share_internal.h"

struct event {
    double t_s;
    uint32_t item;
    int8_t delta; /* +1 a start, -1 an end */
};

static int event_cmp(const void *pa, const void *pb)
{
    const struct event *a = pa, *b = pb;
    if (a->t_s != b->t_s)
        return a->t_s < b->t_s ? -1 : 1;
    if (a->delta != b->delta) /* at one moment, ends first: their room is free */
        return a->delta < b->delta ? -1 : 1;
    return a->item < b->item ? -1 : a->item > b->item;
}

struct frontier {
    struct gp_study_peak *v;
    size_t n;
    size_t nitems;
    const struct gp_workload *w;
    struct gp_arena *a;
};

/* a holds at least as many pods of every item as b */
static bool contains(const uint32_t *a, const uint32_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] < b[i])
            return false;
    return true;
}

/* GPU milli of a set, to thin a frontier that grew too large. */
static double demand(const struct frontier *f, const uint32_t *count)
{
    double d = 0;
    for (size_t i = 0; i < f->nitems; i++)
        d += (double)count[i] * f->w->items[i].pod.gpu_count *
             (f->w->items[i].pod.gpu_milli ? f->w->items[i].pod.gpu_milli : GP_GPU_MILLI);
    return d;
}

static enum gp_err offer(struct frontier *f, const uint32_t *count, uint32_t pods, double t_s,
                         struct gp_diag *diag)
{
    if (pods == 0)
        return GP_OK;
    for (size_t k = 0; k < f->n; k++)
        if (contains(f->v[k].count, count, f->nitems))
            return GP_OK;
    size_t kept = 0;
    for (size_t k = 0; k < f->n; k++) /* drop the sets the new one contains */
        if (!contains(count, f->v[k].count, f->nitems))
            f->v[kept++] = f->v[k];
    f->n = kept;
    size_t at = f->n;
    if (f->n == GP_STUDY_MAX_PEAKS) { /* the least demanding set makes room */
        at = 0;
        for (size_t k = 1; k < f->n; k++)
            if (demand(f, f->v[k].count) < demand(f, f->v[at].count))
                at = k;
        if (demand(f, f->v[at].count) >= demand(f, count))
            return GP_OK;
    } else {
        f->n++;
    }
    uint32_t *copy = gp_arena_alloc(f->a, f->nitems * sizeof *copy);
    if (!copy)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    memcpy(copy, count, f->nitems * sizeof *copy);
    f->v[at] = (struct gp_study_peak){t_s, pods, copy};
    return GP_OK;
}

static int peak_cmp(const void *pa, const void *pb)
{
    const struct gp_study_peak *a = pa, *b = pb;
    if (a->t_s != b->t_s)
        return a->t_s < b->t_s ? -1 : 1;
    return a->pods > b->pods ? -1 : a->pods < b->pods;
}

enum gp_err gp_study_peaks(const struct gp_workload *w, const struct gp_study_run *runs,
                           size_t nruns, struct gp_arena *a, struct gp_study_peak **out,
                           size_t *npeaks, size_t *max, size_t *gpu_runs, uint32_t *cpu_runs,
                           struct gp_diag *diag)
{
    *out = NULL;
    *npeaks = *max = *gpu_runs = 0;
    *cpu_runs = 0;
    struct event *ev = malloc((nruns ? nruns : 1) * 2 * sizeof *ev);
    uint32_t *count = calloc(w->nitems ? w->nitems : 1, sizeof *count);
    struct frontier f = {.nitems = w->nitems, .w = w, .a = a};
    f.v = gp_arena_alloc(a, GP_STUDY_MAX_PEAKS * sizeof *f.v);
    enum gp_err err = GP_OK;
    if (!ev || !count || !f.v) {
        err = gp_diag_set(diag, GP_ENOMEM, "out of memory");
        goto done;
    }
    size_t ne = 0;
    for (size_t i = 0; i < nruns; i++) {
        if (runs[i].item >= w->nitems) {
            err = gp_diag_set(diag, GP_EINVALID, "sharing study: a run of no workload item");
            goto done;
        }
        if (w->items[runs[i].item].pod.gpu_count == 0) {
            (*cpu_runs)++;
            continue;
        }
        (*gpu_runs)++;
        ev[ne++] = (struct event){runs[i].start_s, runs[i].item, 1};
        if (isfinite(runs[i].end_s))
            ev[ne++] = (struct event){runs[i].end_s, runs[i].item, -1};
    }
    qsort(ev, ne, sizeof *ev, event_cmp);
    uint32_t pods = 0;
    bool rising = false;
    double since = 0; /* when the candidate set is whole */
    for (size_t k = 0; k < ne && err == GP_OK; k++) {
        if (ev[k].delta < 0) {
            if (rising) /* pods are about to end: what ran until now is a candidate */
                err = offer(&f, count, pods, since, diag);
            rising = false;
            count[ev[k].item]--;
            pods--;
        } else {
            since = ev[k].t_s; /* the set is whole at its last start */
            rising = true;
            count[ev[k].item]++;
            pods++;
        }
    }
    if (err == GP_OK && rising)
        err = offer(&f, count, pods, since, diag);
    if (err != GP_OK)
        goto done;
    qsort(f.v, f.n, sizeof *f.v, peak_cmp);
    for (size_t k = 1; k < f.n; k++)
        if (f.v[k].pods > f.v[*max].pods)
            *max = k;
    *out = f.v;
    *npeaks = f.n;
done:
    free(ev);
    free(count);
    return err;
}

/* The study's pod order: largest GPU memory first, then GPU share, then
 * CPU, then name (deterministic). */
static int pod_cmp(const void *pa, const void *pb)
{
    const struct gp_pod_spec *a = *(const struct gp_pod_spec *const *)pa;
    const struct gp_pod_spec *b = *(const struct gp_pod_spec *const *)pb;
    uint64_t ga = (uint64_t)a->gpu_count * a->gpu_mem_mib,
             gb = (uint64_t)b->gpu_count * b->gpu_mem_mib;
    if (ga != gb)
        return ga > gb ? -1 : 1;
    uint64_t ma = (uint64_t)a->gpu_count * a->gpu_milli, mb = (uint64_t)b->gpu_count * b->gpu_milli;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli > b->cpu_milli ? -1 : 1;
    int c = strcmp(a->name ? a->name : "", b->name ? b->name : "");
    if (c)
        return c;
    return a < b ? -1 : a > b; /* two items of one name: the earlier first */
}

enum gp_err gp_study_peak_pods(const struct gp_workload *w, const struct gp_study_peak *p,
                               const bool *take, const struct gp_pod_spec ***out, size_t *n,
                               struct gp_diag *diag)
{
    size_t total = 0;
    for (size_t i = 0; i < w->nitems; i++)
        if (!take || take[i])
            total += p->count[i];
    *out = NULL;
    *n = 0;
    if (total == 0)
        return GP_OK;
    const struct gp_pod_spec **v = malloc(total * sizeof *v);
    if (!v)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < w->nitems; i++)
        if (!take || take[i])
            for (uint32_t j = 0; j < p->count[i]; j++)
                v[k++] = &w->items[i].pod;
    qsort(v, total, sizeof *v, pod_cmp);
    *out = v;
    *n = total;
    return GP_OK;
}
