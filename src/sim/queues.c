/* queues.c - the workload's queues in a run: their checks (names,
 * parents, cycles, leaf queues), the engine's queues (timed mode), the
 * result's queue table and its figures at the end. */
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"
#include "sim/metrics.h"
#include "util/arena.h"

static const char *item_queue_name(const struct gp_item *it)
{
    return it->queue ? it->queue : "default";
}

static size_t queue_find(const struct gp_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->nqueues; i++)
        if (strcmp(wl->queues[i].spec.name, name) == 0)
            return i;
    return SIZE_MAX;
}

/* A row of the result's queue table, for queue `name`. */
static enum gp_err queue_row(struct run *r, const char *name, bool declared, uint32_t equeue,
                             uint32_t *row)
{
    for (size_t i = 0; i < r->nqueues; i++)
        if (r->out->queues[i].name == name || strcmp(r->out->queues[i].name, name) == 0) {
            *row = (uint32_t)i;
            return GP_OK;
        }
    size_t n = r->nqueues + 1;
    struct gp_sim_queue *rows = gp_arena_alloc(r->a, n * sizeof *rows);
    struct queue_run *runs = realloc(r->queues, n * sizeof *runs);
    if (runs)
        r->queues = runs;
    if (!rows || !runs)
        return gp_sim_nomem(r);
    if (r->nqueues)
        memcpy(rows, r->out->queues, r->nqueues * sizeof *rows);
    memset(&rows[n - 1], 0, sizeof rows[0]);
    memset(&runs[n - 1], 0, sizeof runs[0]);
    rows[n - 1].name = name;
    rows[n - 1].declared = declared;
    rows[n - 1].limit_gpus = -1;
    runs[n - 1].equeue = equeue;
    r->out->queues = rows;
    r->nqueues = r->out->nqueues = n;
    *row = (uint32_t)(n - 1);
    return GP_OK;
}

/* Checks the workload's queues (names unique, parents declared, no
 * cycle, pods only in leaf queues, every queue an item names declared -
 * when any is) and, in timed mode, gives them to the engine, parents
 * first, and builds the result's queue table. Without declared queues the
 * engine has only its default queue: no quota is invented, and the queue
 * names items carry (Philly's virtual clusters) are only reported. */
enum gp_err gp_sim_queues_plan(struct run *r)
{
    const struct gp_workload *wl = r->wl;
    const bool timed = r->cfg->mode == GP_SIM_TIMED;
    size_t nq = wl->nqueues;
    enum gp_err err = GP_OK;
    uint32_t *eid = malloc((nq ? nq : 1) * sizeof *eid);
    if (!eid)
        return gp_sim_nomem(r);
    for (size_t i = 0; i < nq; i++) {
        const struct gp_queue_def *d = &wl->queues[i];
        eid[i] = NONE;
        if (!d->spec.name || !*d->spec.name) {
            err = gp_diag_set(r->diag, GP_EINVALID, "%s: a Queue without a name",
                              d->source ? d->source : "workload");
            goto out;
        }
        size_t first = queue_find(wl, d->spec.name);
        if (first != i) {
            err =
                gp_diag_set(r->diag, GP_EINVALID, "%s: Queue \"%s\" is defined twice (also at %s)",
                            d->source, d->spec.name, wl->queues[first].source);
            goto out;
        }
        if (d->parent &&
            (strcmp(d->parent, "default") == 0 || queue_find(wl, d->parent) == SIZE_MAX)) {
            err =
                gp_diag_set(r->diag, GP_EINVALID,
                            strcmp(d->parent, "default") == 0
                                ? "%s: Queue \"%s\": the default queue cannot be a parent (\"%s\")"
                                : "%s: Queue \"%s\": its parent \"%s\" is not declared",
                            d->source, d->spec.name, d->parent);
            goto out;
        }
        if (d->parent && strcmp(d->spec.name, "default") == 0) {
            err =
                gp_diag_set(r->diag, GP_EINVALID,
                            "%s: Queue \"default\" is the top-level default queue: it cannot have "
                            "a parent",
                            d->source);
            goto out;
        }
    }
    /* parents first; whatever is left after a pass without progress is a cycle */
    for (size_t added = 0, pass = 0; added < nq; pass++) {
        size_t before = added;
        for (size_t i = 0; i < nq; i++) {
            const struct gp_queue_def *d = &wl->queues[i];
            if (eid[i] != NONE)
                continue;
            uint32_t parent = 0;
            if (d->parent) {
                size_t j = queue_find(wl, d->parent);
                if (eid[j] == NONE)
                    continue;
                parent = eid[j];
            }
            struct gp_queue_spec spec = d->spec;
            spec.parent = parent;
            eid[i] = (uint32_t)i + 1; /* static mode: the engine gets no queue */
            if (timed && (err = gp_engine_queue_set(r->e, &spec, &eid[i])) != GP_OK) {
                err = gp_diag_set(r->diag, err, "%s: Queue \"%s\": the engine refused it: %s",
                                  d->source, d->spec.name, gp_strerror(err));
                goto out;
            }
            added++;
        }
        if (added == before) {
            for (size_t i = 0; i < nq; i++)
                if (eid[i] == NONE) {
                    err = gp_diag_set(r->diag, GP_EINVALID,
                                      "%s: Queue \"%s\": its parents form a cycle",
                                      wl->queues[i].source, wl->queues[i].spec.name);
                    goto out;
                }
        }
    }
    if (timed)
        for (size_t i = 0; i < nq; i++) {
            const struct gp_queue_def *d = &wl->queues[i];
            uint32_t row;
            if ((err = queue_row(r, d->spec.name, true, eid[i], &row)) != GP_OK)
                goto out;
            const struct gp_quota *g = &d->spec.gpu_milli;
            r->out->queues[row].guaranteed_gpus = (double)g->guaranteed / GP_GPU_MILLI;
            if (g->limited)
                r->out->queues[row].limit_gpus =
                    ((double)g->guaranteed + (double)g->borrow_limit) / GP_GPU_MILLI;
        }
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        const char *name = item_queue_name(it);
        size_t q = nq ? queue_find(wl, name) : SIZE_MAX;
        char where[256];
        if (nq && q == SIZE_MAX && it->queue) {
            err = gp_diag_set(r->diag, GP_EINVALID,
                              "%s: names queue \"%s\", which no Queue object declares",
                              gp_sim_item_where(it, i, where, sizeof where), name);
            goto out;
        }
        for (size_t j = 0; q != SIZE_MAX && j < nq; j++)
            if (wl->queues[j].parent && strcmp(wl->queues[j].parent, name) == 0) {
                err = gp_diag_set(r->diag, GP_EINVALID,
                                  "%s: names queue \"%s\", which has child queues (\"%s\"); pods "
                                  "go to leaf queues",
                                  gp_sim_item_where(it, i, where, sizeof where), name,
                                  wl->queues[j].spec.name);
                goto out;
            }
        if (!timed)
            continue;
        uint32_t equeue = q != SIZE_MAX ? eid[q] : 0, row;
        if ((err = queue_row(r, name, q != SIZE_MAX, equeue, &row)) != GP_OK)
            goto out;
        r->items[i].queue = row;
        r->items[i].equeue = equeue;
    }
out:
    free(eid);
    return err;
}

/* Gathers the values of one kind (the delays or the JCTs) of every queue
 * and of the run itself into all (total of them): each queue's sorted and
 * its figures taken, then all of them sorted for the run's figures. The
 * sets are emptied as they are copied (one copy of the values at most). */
static void gather(struct run *r, size_t which, double *all, struct gp_sim_stats *run_stats)
{
    size_t at = 0;
    for (size_t i = 0; i < r->nqueues; i++) {
        struct queue_run *q = &r->queues[i];
        struct gp_sim_values *v = which == 0 ? &q->delays : &q->jcts;
        struct gp_sim_queue *row = &r->out->queues[i];
        size_t n = v->n;
        gp_sim_values_drain(v, all + at);
        if (n) {
            gp_sim_metrics_sort(all + at, n);
            gp_sim_metrics_stats(all + at, n, which == 0 ? &row->queue_delay_s : &row->jct_s);
        }
        at += n;
    }
    struct gp_sim_values *own = which == 0 ? &r->delays : &r->jcts;
    size_t n = own->n;
    gp_sim_values_drain(own, all + at);
    at += n;
    if (at) {
        gp_sim_metrics_sort(all, at);
        gp_sim_metrics_stats(all, at, run_stats);
    }
}

/* The queues' figures at the end of the run, and the run's delays and
 * completion times (every bound pod's delay, sorted, into the result). */
enum gp_err gp_sim_queues_finish(struct run *r)
{
    size_t nd = r->delays.n, nj = r->jcts.n;
    for (size_t i = 0; i < r->nqueues; i++) {
        struct queue_run *q = &r->queues[i];
        r->out->queues[i].gpu_hours_allocated = q->alloc_milli_s / GP_GPU_MILLI / 3600.0;
        nd += q->delays.n;
        nj += q->jcts.n;
    }
    if (nd) {
        double *d = gp_arena_alloc(r->a, nd * sizeof *d);
        if (!d)
            return gp_sim_nomem(r);
        gather(r, 0, d, &r->out->queue_delay_s);
        r->out->queue_delays_s = d;
        r->out->nqueue_delays = nd;
    }
    double *j = malloc((nj ? nj : 1) * sizeof *j);
    if (!j)
        return gp_sim_nomem(r);
    gather(r, 1, j, &r->out->jct_s);
    free(j);
    return GP_OK;
}
