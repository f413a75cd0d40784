/* eventlog_read.c - the event log's reader (eventlog.h): a line parsed
 * into an event (its values: eventlog_specs.c), lines read from a file with
 * the torn-line rule (the last line, or one followed by a new run's header,
 * that does not read is skipped with a warning). Fields a reader does not
 * know are ignored; a change that matters to the engine bumps the version,
 * which is refused when unknown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "io/eventlog_internal.h"

/* --- a line ------------------------------------------------------------------ */

/* "id" when the call succeeded, "err" when it did not */
static enum gp_err result_of(struct gp_evl_rd *r, const json_t *o, struct gp_evlog_event *ev)
{
    json_t *e = json_object_get(o, "err");
    if (e && !json_is_string(e))
        return gp_evl_bad(r, "err", "expected a string");
    ev->ok = !e;
    if (ev->ok)
        GP_EVL_U32(r, o, "", "id", true, ev->id);
    return GP_OK;
}

/* "ok": the call's result as true or false (pod_assign, pdb_set, pod_pdbs) */
static enum gp_err ok_of(struct gp_evl_rd *r, const json_t *o, struct gp_evlog_event *ev)
{
    json_t *ok = json_object_get(o, "ok");
    if (!json_is_boolean(ok))
        return gp_evl_bad(r, "ok", ok ? "expected true or false" : "missing");
    ev->ok = json_is_true(ok);
    return GP_OK;
}

/* pod_pdbs' "pdbs": budget ids, at most as many as the engine takes */
static enum gp_err pdbs_of(struct gp_evl_rd *r, const json_t *l, struct gp_evlog_event *ev)
{
    if (!json_is_array(l))
        return gp_evl_bad(r, "pdbs", l ? "expected an array of budget ids" : "missing");
    size_t n = json_array_size(l);
    if (n > 1024)
        return gp_evl_bad(r, "pdbs", "more than 1024 budgets");
    uint32_t *ids = n ? gp_arena_alloc(r->a, n * sizeof *ids) : NULL;
    if (n && !ids)
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *x = json_array_get(l, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) > (json_int_t)UINT32_MAX) {
            char f[32];
            snprintf(f, sizeof f, "pdbs[%zu]", i);
            return gp_evl_bad(r, f, "expected a budget id (0 to 4294967295)");
        }
        ids[i] = (uint32_t)json_integer_value(x);
    }
    ev->pdbs = ids;
    ev->npdbs = n;
    return GP_OK;
}

static enum gp_err body_of(struct gp_evl_rd *r, const json_t *o, struct gp_evlog_event *ev)
{
    enum gp_err err = GP_OK;
    int64_t v;
    switch (ev->kind) {
    case GP_EVLOG_HEADER: {
        const char *format;
        if ((err = gp_evl_str(r, o, "", "format", true, &format)) != GP_OK)
            return err;
        if (strcmp(format, GP_EVLOG_FORMAT) != 0)
            return gp_evl_bad(r, "format", "not a gpuplane event log (\"" GP_EVLOG_FORMAT "\")");
        if ((err = gp_evl_int(r, o, "", "version", 1, INT32_MAX, true, &v)) != GP_OK)
            return err;
        if (v != GP_EVLOG_VERSION)
            return gp_evl_bad(r, "version", "a version this gpuplane does not read (it reads 1)");
        return GP_OK;
    }
    case GP_EVLOG_CHANGE:
        if ((err = gp_evl_real(r, o, "", "t", true, &ev->t_s)) != GP_OK ||
            (err = gp_evl_str(r, o, "", "obj", true, &ev->obj)) != GP_OK ||
            (err = gp_evl_str(r, o, "", "type", true, &ev->type)) != GP_OK)
            return err;
        return gp_evl_str(r, o, "", "key", false, &ev->key);
    case GP_EVLOG_RESET:
        if ((err = gp_evl_str(r, o, "", "policy", true, &ev->policy)) != GP_OK ||
            (err = gp_evl_int(r, o, "", "seed", 0, INT64_MAX, true, &v)) != GP_OK)
            return err;
        ev->seed = (uint64_t)v;
        return GP_OK;
    case GP_EVLOG_QUEUE_SET:
        if ((err = result_of(r, o, ev)) != GP_OK)
            return err;
        return gp_evl_queue(r, json_object_get(o, "queue"), &ev->queue);
    case GP_EVLOG_NODE_ADD:
        if ((err = result_of(r, o, ev)) != GP_OK)
            return err;
        return gp_evl_node(r, json_object_get(o, "node"), &ev->node_spec);
    case GP_EVLOG_GROUP_ADD:
        if ((err = result_of(r, o, ev)) != GP_OK)
            return err;
        return gp_evl_group(r, json_object_get(o, "group"), &ev->group);
    case GP_EVLOG_POD_ADD:
        if ((err = result_of(r, o, ev)) != GP_OK ||
            (err = gp_evl_real(r, o, "", "t", true, &ev->t_s)) != GP_OK)
            return err;
        return gp_evl_pod(r, json_object_get(o, "pod"), &ev->pod_spec);
    case GP_EVLOG_POD_ASSIGN: {
        GP_EVL_U32(r, o, "", "pod", true, ev->pod);
        GP_EVL_U32(r, o, "", "node", true, ev->node);
        if ((err = ok_of(r, o, ev)) != GP_OK)
            return err;
        ev->has_pick = json_object_get(o, "pick") != NULL;
        if (ev->has_pick)
            return gp_evl_pick(r, json_object_get(o, "pick"), "pick", &ev->pick);
        return GP_OK;
    }
    case GP_EVLOG_NODE_DRAIN:
        GP_EVL_U32(r, o, "", "node", true, ev->node);
        return GP_OK;
    case GP_EVLOG_POD_FINISHED:
    case GP_EVLOG_POD_FORGET:
        GP_EVL_U32(r, o, "", "pod", true, ev->pod);
        return GP_OK;
    case GP_EVLOG_POD_PDB: {
        GP_EVL_U32(r, o, "", "pod", true, ev->pod);
        json_t *vj = json_object_get(o, "violating");
        if (!json_is_boolean(vj))
            return gp_evl_bad(r, "violating", vj ? "expected true or false" : "missing");
        ev->violating = json_is_true(vj);
        return GP_OK;
    }
    case GP_EVLOG_NAMESPACE: {
        if ((err = gp_evl_str(r, o, "", "name", true, &ev->ns_name)) != GP_OK)
            return err;
        json_t *dj = json_object_get(o, "deleted");
        if (dj && !json_is_true(dj))
            return gp_evl_bad(r, "deleted", "expected true");
        ev->ns_deleted = dj != NULL;
        ev->ns_labels = NULL;
        ev->ns_nlabels = 0;
        return ev->ns_deleted ? GP_OK : gp_evl_kv(r, o, "labels", &ev->ns_labels, &ev->ns_nlabels);
    }
    case GP_EVLOG_PDB_SET:
        GP_EVL_U32(r, o, "", "pdb", true, ev->pdb);
        if ((err = gp_evl_int(r, o, "", "allowed", INT32_MIN, INT32_MAX, true, &v)) != GP_OK)
            return err;
        ev->allowed = (int32_t)v;
        return ok_of(r, o, ev);
    case GP_EVLOG_POD_PDBS:
        GP_EVL_U32(r, o, "", "pod", true, ev->pod);
        if ((err = pdbs_of(r, json_object_get(o, "pdbs"), ev)) != GP_OK)
            return err;
        return ok_of(r, o, ev);
    case GP_EVLOG_CYCLE:
        if ((err = gp_evl_int(r, o, "", "cycle", 0, INT64_MAX, true, &v)) != GP_OK)
            return err;
        ev->cycle = (uint64_t)v;
        if ((err = gp_evl_real(r, o, "", "t", true, &ev->t_s)) != GP_OK ||
            (err = gp_evl_int(r, o, "", "cap", 0, 1 << 30, true, &v)) != GP_OK)
            return err;
        ev->cap = (size_t)v;
        return GP_OK;
    case GP_EVLOG_DECISION:
    case GP_EVLOG_CYCLE_END:
        if ((err = gp_evl_int(r, o, "", "cycle", 0, INT64_MAX, true, &v)) != GP_OK)
            return err;
        ev->cycle = (uint64_t)v;
        if (ev->kind == GP_EVLOG_DECISION)
            return gp_evl_decision(r, o, ev);
        if ((err = gp_evl_int(r, o, "", "decisions", 0, 1 << 30, true, &v)) != GP_OK)
            return err;
        ev->count = (size_t)v;
        return GP_OK;
    }
    return err;
}

enum gp_err gp_evlog_parse_line(const char *text, size_t len, const char *where, struct gp_arena *a,
                                struct gp_evlog_event *ev, struct gp_diag *d)
{
    memset(ev, 0, sizeof *ev);
    ev->text = text;
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return gp_diag_set(d, GP_EPARSE, "%s: not a JSON object: %s", where, je.text);
    struct gp_evl_rd r = {where, a, d};
    enum gp_err err;
    int kind = -1;
    json_t *evk = json_object_get(o, "ev");
    if (!json_is_object(o))
        err = gp_evl_bad(&r, "ev", "a line is a JSON object");
    else if (!evk)
        err = gp_evl_bad(&r, "ev", "missing");
    else if (!json_is_string(evk))
        err = gp_evl_bad(&r, "ev", "expected a string");
    else if ((kind = gp_evl_name_find(&gp_evl_events, json_string_value(evk))) < 0) {
        char m[160];
        snprintf(m, sizeof m, "unknown event kind \"%.100s\"", json_string_value(evk));
        err = gp_evl_bad(&r, "ev", m);
    } else {
        ev->kind = (enum gp_evlog_kind)kind;
        err = body_of(&r, o, ev);
    }
    json_decref(o);
    return err;
}

/* --- the file ---------------------------------------------------------------- */

struct gp_evlog_reader {
    FILE *f;
    char *path;
    struct gp_arena a;
    char *line, *next; /* the line read; one read ahead (a torn line's follower) */
    size_t cap, next_cap;
    ssize_t next_len; /* -1: none read ahead */
    size_t lineno;
    char warning[600];
};

void gp_evlog_msg_clean(char *msg)
{
    for (; *msg; msg++)
        if ((unsigned char)*msg < 0x20 || *msg == 0x7f)
            *msg = '?';
}

enum gp_err gp_evlog_reader_open(FILE *f, const char *path, struct gp_evlog_reader **out,
                                 struct gp_diag *d)
{
    struct gp_evlog_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path ? path : "-"))) {
        free(r);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    r->f = f;
    r->next_len = -1;
    gp_arena_init(&r->a);
    *out = r;
    return GP_OK;
}

void gp_evlog_reader_close(struct gp_evlog_reader *r)
{
    if (!r)
        return;
    gp_arena_free(&r->a);
    free(r->line);
    free(r->next);
    free(r->path);
    free(r);
}

const char *gp_evlog_reader_warning(const struct gp_evlog_reader *r)
{
    return r->warning;
}

/* The next raw line into r->line (its length, -1 at the end or on *err). */
static ssize_t raw_line(struct gp_evlog_reader *r, struct gp_diag *d, enum gp_err *err)
{
    *err = GP_OK;
    ssize_t n;
    if (r->next_len >= 0) {
        char *t = r->line;
        size_t c = r->cap;
        r->line = r->next;
        r->cap = r->next_cap;
        r->next = t;
        r->next_cap = c;
        n = r->next_len;
        r->next_len = -1;
    } else {
        errno = 0;
        n = getline(&r->line, &r->cap, r->f);
        if (n < 0) {
            if (ferror(r->f))
                *err = gp_diag_set(d, GP_EIO, "%s: %s", r->path, strerror(errno ? errno : EIO));
            return -1;
        }
    }
    r->lineno++;
    if ((size_t)n > GP_EVLOG_LINE_MAX) {
        *err = gp_diag_set(d, GP_EINVALID, "%s:%zu: a line of more than %u bytes", r->path,
                           r->lineno, GP_EVLOG_LINE_MAX);
        return -1;
    }
    return n;
}

/* Whether the line after the current one starts a new run (a header). */
static bool header_follows(struct gp_evlog_reader *r)
{
    if (r->next_len < 0) {
        r->next_len = getline(&r->next, &r->next_cap, r->f);
        if (r->next_len < 0)
            return false;
    }
    return strstr(r->next, "\"ev\":\"log\"") != NULL;
}

enum gp_err gp_evlog_reader_next(struct gp_evlog_reader *r, struct gp_evlog_event *ev,
                                 struct gp_diag *d)
{
    r->warning[0] = '\0';
    for (;;) {
        enum gp_err rerr;
        ssize_t n = raw_line(r, d, &rerr);
        if (rerr != GP_OK)
            return rerr;
        if (n < 0)
            return GP_ENOTFOUND;
        bool ended = n > 0 && r->line[n - 1] == '\n';
        size_t len = (size_t)n - (ended ? 1 : 0);
        r->line[len] = '\0'; /* the event's text: the line without its newline */
        if (len == 0 && ended)
            continue; /* a blank line (the writer's end of a torn line) */
        char where[600];
        snprintf(where, sizeof where, "%s:%zu", r->path, r->lineno);
        struct gp_diag pd = {""};
        enum gp_err err = gp_evlog_parse_line(r->line, len, where, &r->a, ev, &pd);
        if (err == GP_OK) {
            ev->line = r->lineno;
            return GP_OK;
        }
        if (err == GP_ENOMEM) {
            *d = pd;
            return err;
        }
        gp_evlog_msg_clean(pd.msg);
        if (!ended || header_follows(r)) { /* torn: the end of a run that stopped mid-line */
            snprintf(r->warning, sizeof r->warning,
                     "%s:%zu: a torn line (the end of a run that stopped while writing it) "
                     "ignored",
                     r->path, r->lineno);
            if (!ended)
                return GP_ENOTFOUND;
            continue;
        }
        *d = pd;
        return err;
    }
}
