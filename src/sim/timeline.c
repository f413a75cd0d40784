/* timeline.c - the runs a workload's pods would make if none ever waited
 * for room (gp_sim_timeline, sim.h): the simulator's own arrivals and
 * durations (the same keyed random streams as a replay with the same seed),
 * each pod starting when it is submitted. Tools that size a cluster for a
 * workload (the sharing study) read what runs at once from it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"
#include "util/arena.h"

#define GP_TIMELINE_MAX_RUNS 4000000 /* spans in one timeline */

struct spans {
    struct gp_sim_span *v;
    size_t n, cap;
    struct gp_diag *diag;
};

static enum gp_err span_add(struct spans *s, uint32_t item, double start, double end)
{
    if (s->n == s->cap) {
        if (s->cap >= GP_TIMELINE_MAX_RUNS)
            return gp_diag_set(s->diag, GP_ELIMIT,
                               "the workload makes more than %d pod runs; a shorter --horizon "
                               "takes fewer",
                               GP_TIMELINE_MAX_RUNS);
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct gp_sim_span *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct gp_sim_span){item, start, end};
    return GP_OK;
}

/* The first run of a pod of submission k of item i in slot `slot`, as
 * runs.c draws it: a gang's members share one duration. */
static double run_length(const struct gp_item *it, uint64_t seed, uint32_t i, uint32_t k,
                         uint32_t slot)
{
    if (!it->has_duration)
        return INFINITY;
    struct gp_rng dur;
    gp_sim_rng_keyed(&dur, seed, STREAM_DURATION, i, k, it->gang_min > 0 ? 0 : slot, 1);
    return dist_draw(&it->duration, &dur);
}

/* One submission at t: a Deployment's replicas run to the end; a Job runs
 * min(parallelism, completions) pods, and each completion starts the next
 * pod until `completions` have run (jobs.c). */
static enum gp_err submission(struct spans *s, const struct gp_item *it, uint64_t seed, uint32_t i,
                              uint32_t k, double t, double horizon_s)
{
    if (it->kind == GP_ITEM_DEPLOYMENT) {
        for (uint32_t r = 0; r < it->replicas; r++) {
            enum gp_err err = span_add(s, i, t, INFINITY);
            if (err != GP_OK)
                return err;
        }
        return GP_OK;
    }
    uint32_t target = it->kind == GP_ITEM_POD ? 1 : (it->completions ? it->completions : 1);
    uint32_t par = it->kind == GP_ITEM_POD ? 1 : (it->parallelism ? it->parallelism : 1);
    uint32_t n = par < target ? par : target;
    double *ends = malloc((n ? n : 1) * sizeof *ends);
    if (!ends)
        return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
    enum gp_err err = GP_OK;
    uint32_t created = 0;
    for (; created < n && err == GP_OK; created++) {
        ends[created] = t + run_length(it, seed, i, k, created);
        err = span_add(s, i, t, ends[created]);
    }
    while (err == GP_OK && created < target) { /* the next pod when the first ends */
        uint32_t first = 0;
        for (uint32_t j = 1; j < n; j++)
            if (ends[j] < ends[first])
                first = j;
        double start = ends[first];
        if (!isfinite(start) || (horizon_s > 0 && start >= horizon_s))
            break;
        ends[first] = start + run_length(it, seed, i, k, created);
        err = span_add(s, i, start, ends[first]);
        created++;
    }
    free(ends);
    return err;
}

enum gp_err gp_sim_timeline(const struct gp_workload *w, uint64_t seed, double horizon_s,
                            struct gp_arena *a, struct gp_sim_span **out, size_t *n,
                            struct gp_diag *diag)
{
    struct spans s = {.diag = diag};
    enum gp_err err = GP_OK;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < w->nitems && err == GP_OK; i++) {
        const struct gp_item *it = &w->items[i];
        struct gp_rng arrivals;
        gp_sim_rng_keyed(&arrivals, seed, STREAM_ARRIVAL, i, 0, 0, 0);
        uint32_t repeat = it->repeat ? it->repeat : 1;
        double t = it->arrival_s;
        for (uint32_t k = 0; k < repeat && err == GP_OK; k++) {
            if (!isfinite(t) || (horizon_s > 0 && t >= horizon_s))
                break;
            err = submission(&s, it, seed, (uint32_t)i, k, t, horizon_s);
            if (k + 1 < repeat)
                t += dist_draw(&it->interarrival, &arrivals);
        }
    }
    if (err == GP_OK && s.n > 0) {
        *out = gp_arena_alloc(a, s.n * sizeof **out);
        if (!*out)
            err = gp_diag_set(diag, GP_ENOMEM, "out of memory");
        else {
            memcpy(*out, s.v, s.n * sizeof **out);
            *n = s.n;
        }
    }
    free(s.v);
    return err;
}
