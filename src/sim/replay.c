/* replay.c - a live scheduler's event log replayed (replay.h): every
 * recorded engine call made again on an engine of the recorded policy and
 * seed, in the recorded order, with the recorded clock; each cycle's
 * decisions compared, one by one, with the recorded ones (and each call's
 * result: the ids issued, an assignment refused), the first difference
 * kept with both sides. The engine does no I/O, reads no clock and keeps
 * no global state (docs/ARCHITECTURE.md), so the same calls give the same
 * decisions: a difference is a bug or a log that was changed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/eventlog.h"
#include "sim/replay.h"

struct rp {
    struct gp_replay_result *r;
    struct gp_engine *e;
    struct gp_decision *dec;
    size_t ndec, capdec;
    bool in_cycle, need_reset;
    uint64_t cycle;
    size_t compared, cycle_line;
    gp_replay_warn_fn warn;
    void *warn_ctx;
    const char *path;
};

static void warn(struct rp *p, const char *line)
{
    p->r->warnings++;
    if (p->warn)
        p->warn(p->warn_ctx, line);
}

static void differ(struct rp *p, size_t line, const char *what, const char *recorded,
                   const char *replayed)
{
    p->r->differing++;
    if (p->r->has_diff)
        return;
    struct gp_replay_diff *f = &p->r->first;
    p->r->has_diff = true;
    f->line = line;
    f->cycle = p->in_cycle ? p->cycle : 0;
    snprintf(f->what, sizeof f->what, "%s", what);
    snprintf(f->recorded, sizeof f->recorded, "%s", recorded ? recorded : "");
    snprintf(f->replayed, sizeof f->replayed, "%s", replayed ? replayed : "");
}

/* A call's result against the recorded one. */
static void check_call(struct rp *p, const struct gp_evlog_event *ev, const char *call,
                       enum gp_err err, uint32_t id, bool has_id)
{
    p->r->calls++;
    bool same = (err == GP_OK) == ev->ok && (!has_id || err != GP_OK || id == ev->id);
    if (same)
        return;
    char mine[128];
    if (err != GP_OK)
        snprintf(mine, sizeof mine, "%s: %s", call, gp_strerror(err));
    else if (has_id)
        snprintf(mine, sizeof mine, "%s: id %u", call, (unsigned)id);
    else
        snprintf(mine, sizeof mine, "%s: ok", call);
    differ(p, ev->line, call, ev->text, mine);
}

static void cycle_close(struct rp *p, size_t line)
{
    if (!p->in_cycle)
        return;
    char w[600];
    snprintf(w, sizeof w,
             "%s:%zu: cycle %llu has no end (the run stopped in it): its first %zu decisions "
             "compared",
             p->path, p->cycle_line, (unsigned long long)p->cycle, p->compared);
    warn(p, w);
    (void)line;
    p->in_cycle = false;
}

static enum gp_err need_engine(struct rp *p, const struct gp_evlog_event *ev, struct gp_diag *d)
{
    if (!p->e || p->need_reset)
        return gp_diag_set(d, GP_EINVALID, "%s:%zu: ev: an engine event before the run's reset",
                           p->path, ev->line);
    return GP_OK;
}

static enum gp_err on_cycle(struct rp *p, const struct gp_evlog_event *ev, struct gp_diag *d)
{
    /* a cycle decides each pod at most once, and evicts only bound ones: a
     * cap past the pods issued (+1, as the scheduler counts) is never used */
    size_t cap = ev->cap < gp_engine_pod_count(p->e) + 1 ? ev->cap : gp_engine_pod_count(p->e) + 1;
    cap = cap ? cap : 1;
    if (cap > p->capdec) {
        struct gp_decision *v = realloc(p->dec, cap * sizeof *v);
        if (!v)
            return gp_diag_set(d, GP_ENOMEM, "out of memory (decisions)");
        p->dec = v;
        p->capdec = cap;
    }
    p->ndec = gp_engine_schedule(p->e, ev->t_s, 0, p->dec, cap);
    p->in_cycle = true;
    p->cycle = ev->cycle;
    p->cycle_line = ev->line;
    p->compared = 0;
    p->r->cycles++;
    return GP_OK;
}

static enum gp_err on_decision(struct rp *p, const struct gp_evlog_event *ev, struct gp_diag *d)
{
    if (!p->in_cycle || ev->cycle != p->cycle)
        return gp_diag_set(d, GP_EINVALID, "%s:%zu: cycle: a decision outside its cycle", p->path,
                           ev->line);
    if (ev->index != p->compared)
        return gp_diag_set(d, GP_EINVALID, "%s:%zu: i: decision %u where %zu was expected", p->path,
                           ev->line, (unsigned)ev->index, p->compared);
    p->r->decisions++;
    char what[160];
    snprintf(what, sizeof what, "cycle %llu, decision %u", (unsigned long long)p->cycle,
             (unsigned)ev->index);
    if (p->compared >= p->ndec) {
        differ(p, ev->line, what, ev->text, "");
    } else if (gp_evlog_decision_same(p->e, &ev->dec, &p->dec[p->compared])) {
        p->r->matched++;
    } else {
        char *mine = gp_evlog_decision_text(p->e, p->cycle, ev->index, &p->dec[p->compared]);
        differ(p, ev->line, what, ev->text, mine ? mine : "?");
        free(mine);
    }
    p->compared++;
    return GP_OK;
}

static enum gp_err on_cycle_end(struct rp *p, const struct gp_evlog_event *ev, struct gp_diag *d)
{
    if (!p->in_cycle || ev->cycle != p->cycle)
        return gp_diag_set(d, GP_EINVALID, "%s:%zu: cycle: the end of a cycle not begun", p->path,
                           ev->line);
    if (ev->count != p->compared)
        return gp_diag_set(d, GP_EINVALID,
                           "%s:%zu: decisions: %zu, but the cycle recorded %zu decision lines",
                           p->path, ev->line, ev->count, p->compared);
    for (size_t i = p->compared; i < p->ndec; i++) { /* decisions the live run did not make */
        char what[160];
        snprintf(what, sizeof what, "cycle %llu, decision %zu", (unsigned long long)p->cycle, i);
        char *mine = gp_evlog_decision_text(p->e, p->cycle, (uint32_t)i, &p->dec[i]);
        differ(p, ev->line, what, "", mine ? mine : "?");
        free(mine);
    }
    p->in_cycle = false;
    return GP_OK;
}

/* A pod or node id the replay's engine never issued: the call is not made
 * (the engine's ids follow its calls, so only a log that diverged already,
 * or was edited, names one) and counted as a difference. */
static bool known(struct rp *p, const struct gp_evlog_event *ev, bool pod, bool node)
{
    bool ok = (!pod || ev->pod < gp_engine_pod_count(p->e)) &&
              (!node || ev->node < gp_engine_node_count(p->e));
    if (!ok) {
        char what[96];
        snprintf(what, sizeof what, "no %s %u in the replay's engine", pod ? "pod" : "node",
                 (unsigned)(pod ? ev->pod : ev->node));
        p->r->calls++;
        differ(p, ev->line, what, ev->text, what);
    }
    return ok;
}

static enum gp_err on_event(struct rp *p, const struct gp_evlog_event *ev, struct gp_diag *d)
{
    enum gp_err err = GP_OK;
    uint32_t id = 0;
    if (ev->kind == GP_EVLOG_HEADER || ev->kind == GP_EVLOG_RESET)
        cycle_close(p, ev->line);
    else if (ev->kind != GP_EVLOG_CHANGE && ev->kind != GP_EVLOG_DECISION &&
             ev->kind != GP_EVLOG_CYCLE_END && (err = need_engine(p, ev, d)) != GP_OK)
        return err;
    if (p->in_cycle && ev->kind != GP_EVLOG_DECISION && ev->kind != GP_EVLOG_CYCLE_END &&
        ev->kind != GP_EVLOG_CHANGE)
        return gp_diag_set(d, GP_EINVALID,
                           "%s:%zu: ev: an engine call inside cycle %llu (before its cycle_end)",
                           p->path, ev->line, (unsigned long long)p->cycle);
    switch (ev->kind) {
    case GP_EVLOG_HEADER:
        p->need_reset = true;
        break;
    case GP_EVLOG_CHANGE:
        p->r->changes++;
        break;
    case GP_EVLOG_RESET: {
        const struct gp_policy_ops *pol = gp_policy_find(ev->policy);
        if (!pol)
            return gp_diag_set(d, GP_EINVALID, "%s:%zu: policy: no policy \"%s\"", p->path,
                               ev->line, ev->policy);
        gp_engine_free(p->e);
        if (!(p->e = gp_engine_new(pol, ev->seed)))
            return gp_diag_set(d, GP_ENOMEM, "out of memory (the engine)");
        p->need_reset = false;
        p->r->resets++;
        break;
    }
    case GP_EVLOG_QUEUE_SET:
        err = gp_engine_queue_set(p->e, &ev->queue, &id);
        check_call(p, ev, "queue_set", err, id, true);
        break;
    case GP_EVLOG_NODE_ADD:
        err = gp_engine_node_add(p->e, &ev->node_spec, &id);
        check_call(p, ev, "node_add", err, id, true);
        break;
    case GP_EVLOG_NODE_DRAIN:
        if (known(p, ev, false, true)) {
            gp_engine_node_drain(p->e, ev->node);
            p->r->calls++;
        }
        break;
    case GP_EVLOG_GROUP_ADD:
        err = gp_engine_group_add(p->e, &ev->group, &id);
        check_call(p, ev, "group_add", err, id, true);
        break;
    case GP_EVLOG_POD_ADD:
        err = gp_engine_pod_add(p->e, &ev->pod_spec, ev->t_s, &id);
        check_call(p, ev, "pod_add", err, id, true);
        break;
    case GP_EVLOG_POD_ASSIGN:
        if (!known(p, ev, true, true))
            break;
        err = gp_engine_pod_assign(p->e, ev->pod, ev->node, ev->has_pick ? &ev->pick : NULL);
        check_call(p, ev, "pod_assign", err, 0, false);
        break;
    case GP_EVLOG_POD_FINISHED:
        if (known(p, ev, true, false)) {
            gp_engine_pod_finished(p->e, ev->pod);
            p->r->calls++;
        }
        break;
    case GP_EVLOG_POD_FORGET:
        if (known(p, ev, true, false)) {
            gp_engine_pod_forget(p->e, ev->pod);
            p->r->calls++;
        }
        break;
    case GP_EVLOG_POD_PDB: /* an older log: each pod's budgets' verdict, judged alone */
        if (known(p, ev, true, false)) {
            gp_engine_pod_set_pdb_violating(p->e, ev->pod, ev->violating);
            p->r->calls++;
        }
        break;
    case GP_EVLOG_NAMESPACE: /* a namespace's labels, as the driver gave them */
        if (ev->ns_deleted)
            gp_engine_namespace_delete(p->e, ev->ns_name);
        else
            gp_engine_namespace_set(p->e, ev->ns_name, ev->ns_labels, ev->ns_nlabels);
        p->r->calls++;
        break;
    case GP_EVLOG_PDB_SET: /* a budget's disruptionsAllowed, under the driver's id */
        err = gp_engine_pdb_set(p->e, ev->pdb, ev->allowed);
        check_call(p, ev, "pdb_set", err, 0, false);
        break;
    case GP_EVLOG_POD_PDBS: /* the budgets a pod counts against */
        if (!known(p, ev, true, false))
            break;
        err = gp_engine_pod_set_pdbs(p->e, ev->pod, ev->pdbs, ev->npdbs);
        check_call(p, ev, "pod_pdbs", err, 0, false);
        break;
    case GP_EVLOG_CYCLE:
        return on_cycle(p, ev, d);
    case GP_EVLOG_DECISION:
        return on_decision(p, ev, d);
    case GP_EVLOG_CYCLE_END:
        return on_cycle_end(p, ev, d);
    }
    return GP_OK;
}

enum gp_err gp_replay_file(const char *path, gp_replay_warn_fn warn_fn, void *warn_ctx,
                           struct gp_replay_result *r, struct gp_diag *d)
{
    memset(r, 0, sizeof *r);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f)
        return gp_diag_set(d, errno == ENOENT ? GP_ENOTFOUND : GP_EIO, "--replay: %s: %s", path,
                           strerror(errno));
    enum gp_err err = gp_replay_stream(f, path, warn_fn, warn_ctx, r, d);
    if (f != stdin)
        fclose(f);
    return err;
}

enum gp_err gp_replay_stream(FILE *f, const char *path, gp_replay_warn_fn warn_fn, void *warn_ctx,
                             struct gp_replay_result *r, struct gp_diag *d)
{
    memset(r, 0, sizeof *r);
    struct gp_evlog_reader *rd;
    enum gp_err err = gp_evlog_reader_open(f, path, &rd, d);
    if (err != GP_OK)
        return err;
    struct rp p = {.r = r, .warn = warn_fn, .warn_ctx = warn_ctx, .path = path};
    struct gp_evlog_event ev;
    bool any = false;
    while ((err = gp_evlog_reader_next(rd, &ev, d)) == GP_OK) {
        if (gp_evlog_reader_warning(rd)[0])
            warn(&p, gp_evlog_reader_warning(rd));
        if (!any && ev.kind != GP_EVLOG_HEADER) {
            err = gp_diag_set(d, GP_EINVALID,
                              "%s:%zu: ev: a log begins with its header (\"ev\":\"log\")", path,
                              ev.line);
            break;
        }
        any = true;
        r->lines++;
        if ((err = on_event(&p, &ev, d)) != GP_OK)
            break;
    }
    if (err == GP_ENOTFOUND) { /* the end */
        if (gp_evlog_reader_warning(rd)[0])
            warn(&p, gp_evlog_reader_warning(rd));
        err = any ? GP_OK : gp_diag_set(d, GP_EINVALID, "%s: no events (an empty log)", path);
        cycle_close(&p, 0);
    }
    if (err != GP_OK)
        gp_evlog_msg_clean(d->msg); /* one line, whatever the log's strings hold */
    gp_engine_free(p.e);            /* before the reader's arena: the engine borrows its specs */
    free(p.dec);
    gp_evlog_reader_close(rd);
    return err;
}
