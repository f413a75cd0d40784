/* manifest_gang.c - the objects that name a PodGroup joined to it, in
 * whatever file either is: each becomes a gang with the PodGroup's
 * minMember, topology and timeout, and learns how many pods can ever be
 * members at once (all its PodGroup's objects together). A PodGroup whose
 * minMember exceeds that can never start: as in Kubernetes, its pods stay
 * pending (a warning here, counted by the simulator), never clamped. */
#include <stdlib.h>
#include <string.h>

#include "io/manifest_internal.h"

/* The pods an object runs at once, as the simulator counts them
 * (sim/jobs.c): a Deployment's replicas, a Job's parallelism capped by its
 * completions, one for a Pod. */
static uint64_t pods_at_once(const struct gp_item *it)
{
    if (it->kind == GP_ITEM_DEPLOYMENT)
        return it->replicas;
    if (it->kind == GP_ITEM_POD)
        return 1;
    uint32_t par = it->parallelism ? it->parallelism : 1;
    uint32_t target = it->completions ? it->completions : 1;
    return par < target ? par : target;
}

/* A PodGroup by name, for bsearch. */
struct named {
    const char *name;
    size_t index;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* What the objects of one PodGroup add up to. */
struct tally {
    uint64_t members; /* pods at once, over its objects */
    size_t objects;
};

static void join_item(struct gp_item *it, const struct gp_group_def *g)
{
    it->gang_min = g->min_member;
    it->topology_key = g->topology_key;
    it->topology_required = g->topology_required;
    it->topology_slowdown = g->topology_slowdown > 0 ? g->topology_slowdown : GP_TOPOLOGY_SLOWDOWN;
    it->gang_timeout_s = g->timeout_s;
    if (!it->queue)
        it->queue = g->queue; /* Volcano: the PodGroup names the queue */
}

static void unjoin_item(struct gp_item *it)
{
    it->gang_min = 0;
    it->gang_members = 0;
    it->topology_key = NULL;
    it->topology_required = false;
    it->topology_slowdown = 0;
    it->gang_timeout_s = 0;
}

/* One warning for each PodGroup its objects can never start, and for each
 * whose pods come from several objects (each is its own gang here). */
static enum gp_err warn_groups(struct gp_workload *w, struct gp_arena *a, const struct tally *t)
{
    for (size_t g = 0; g < w->ngroups; g++) {
        struct gp_group_def *d = &w->groups[g];
        enum gp_err err = GP_OK;
        if (t[g].objects == 0 || d->warned)
            continue;
        d->warned = true; /* once, however often the workload is finished */
        if (t[g].members < d->min_member)
            err = gp_workload_warn(
                w, a,
                "%s: PodGroup/%s: minMember %u, but its object%s run%s at most %llu pod%s at "
                "once: the gang can never start, and its pods stay pending (as in Kubernetes)",
                d->source, d->name, d->min_member, t[g].objects == 1 ? "" : "s",
                t[g].objects == 1 ? "s" : "", (unsigned long long)t[g].members,
                t[g].members == 1 ? "" : "s");
        else if (t[g].objects > 1)
            err = gp_workload_warn(w, a,
                                   "%s: PodGroup/%s gathers the pods of %zu objects: not "
                                   "simulated; each submission of each object is a gang of its "
                                   "own pods (at least minMember, or all of them when fewer)",
                                   d->source, d->name, t[g].objects);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

enum gp_err gp_manifest_join(struct gp_workload *w, struct gp_arena *a, struct gp_diag *diag,
                             bool last)
{
    struct named *index = NULL;
    struct tally *t = NULL;
    enum gp_err err = GP_OK;
    if (w->ngroups) {
        index = malloc(w->ngroups * sizeof *index);
        t = calloc(w->ngroups, sizeof *t);
        if (!index || !t) {
            err = gp_diag_set(diag, GP_ENOMEM, "out of memory joining PodGroups");
            goto out;
        }
        for (size_t g = 0; g < w->ngroups; g++)
            index[g] = (struct named){w->groups[g].name, g};
        qsort(index, w->ngroups, sizeof *index, by_name);
    }
    for (size_t i = 0; i < w->nitems; i++) {
        struct gp_item *it = &w->items[i];
        if (!it->group_name)
            continue;
        struct named key = {it->group_name, 0};
        const struct named *n =
            index ? bsearch(&key, index, w->ngroups, sizeof *index, by_name) : NULL;
        if (!n && last) {
            err = gp_diag_set(diag, GP_EINVALID,
                              "%s: %s names PodGroup \"%s\", which no workload file defines",
                              it->source, it->name, it->group_name);
            goto out;
        }
        if (!n) { /* perhaps in a file still to come */
            unjoin_item(it);
            continue;
        }
        join_item(it, &w->groups[n->index]);
        t[n->index].members += pods_at_once(it);
        t[n->index].objects++;
    }
    for (size_t i = 0; i < w->nitems; i++) {
        struct gp_item *it = &w->items[i];
        if (!it->group_name || it->gang_min == 0)
            continue;
        struct named key = {it->group_name, 0};
        const struct named *n = bsearch(&key, index, w->ngroups, sizeof *index, by_name);
        uint64_t m = t[n->index].members;
        it->gang_members = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
    }
    if (last)
        err = warn_groups(w, a, t);
out:
    free(index);
    free(t);
    return err;
}

enum gp_err gp_workload_finish(struct gp_workload *w, struct gp_arena *a, struct gp_diag *diag)
{
    enum gp_err err = gp_manifest_finish_priorities(w, diag);
    return err == GP_OK ? gp_manifest_join(w, a, diag, true) : err;
}
