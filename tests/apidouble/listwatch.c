/* listwatch.c - lists (limit/continue from one snapshot, items without
 * kind, remainingItemCount; an expired continue is 410) and watches
 * (chunked streams replayed from a resourceVersion, the current state as
 * ADDED without one, bookmarks, timeoutSeconds, a too-old version answered
 * by a 200 stream with one ERROR event holding a 410 Expired Status). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apidouble.h"

/* --- list -------------------------------------------------------------- */

static int by_key(const void *a, const void *b)
{
    const struct object *x = *(struct object *const *)a, *y = *(struct object *const *)b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

bool in_scope(const struct object *o, const struct route *r)
{
    return strcmp(o->res, r->res) == 0 && (!r->namespaced || strcmp(o->ns, r->ns) == 0);
}

struct snapshot *snap_new(const struct route *r, const struct fsel *fs)
{
    struct snapshot *s = NULL;
    for (size_t i = 0; i < MAX_SNAPS && !s; i++)
        if (!S.snaps[i].items)
            s = &S.snaps[i];
    if (!s) { /* the oldest goes */
        s = &S.snaps[0];
        for (size_t i = 1; i < MAX_SNAPS; i++)
            if (S.snaps[i].id < s->id)
                s = &S.snaps[i];
        json_decref(s->items);
        free(s->res);
        free(s->ns);
    }
    struct object **v = malloc((S.nobjs + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < S.nobjs; i++)
        if (S.objs[i]->cur && in_scope(S.objs[i], r) && (!fs->n || fsel_match(fs, S.objs[i]->cur)))
            v[n++] = S.objs[i];
    qsort(v, n, sizeof *v, by_key);
    s->items = json_array();
    for (size_t i = 0; i < n; i++) {
        /* a shallow copy: only its own members change (kind, apiVersion);
         * what is below them is shared with the stored version, which is
         * never modified */
        json_t *it = json_copy(v[i]->cur);
        json_object_del(it, "kind"); /* items of a list carry no kind */
        json_object_del(it, "apiVersion");
        json_array_append_new(s->items, it);
    }
    free(v);
    s->rv = S.rv;
    s->res = strdup(r->res);
    s->ns = strdup(r->ns);
    s->used = 0;
    s->id = ++S.snap_id;
    return s;
}

void do_list(const struct route *r, const struct fsel *fs, long limit, const char *cont,
             struct answer *a)
{
    struct snapshot *s = NULL;
    size_t from = 0;
    if (cont && cont[0]) {
        unsigned id;
        size_t off;
        if (sscanf(cont, "%u.%zu", &id, &off) != 2) {
            answer_status(a, 400, "BadRequest", NULL, NULL, "continue key is not valid");
            return;
        }
        for (size_t i = 0; i < MAX_SNAPS; i++)
            if (S.snaps[i].items && S.snaps[i].id == id)
                s = &S.snaps[i];
        if (!s || s->rv < S.compacted) {
            answer_status(a, 410, "Expired", NULL, NULL,
                          "The provided continue parameter is too old to display a consistent "
                          "list result. You can start a new list without the continue parameter.");
            return;
        }
        from = off;
    } else {
        s = snap_new(r, fs);
    }
    size_t total = json_array_size(s->items);
    size_t to = limit > 0 && from + (size_t)limit < total ? from + (size_t)limit : total;
    json_t *items = json_array();
    for (size_t i = from; i < to; i++)
        json_array_append(items, json_array_get(s->items, i));
    char rvs[32], kind[96];
    snprintf(rvs, sizeof rvs, "%ld", s->rv);
    snprintf(kind, sizeof kind, "%sList", kind_of(r->res));
    json_t *meta = json_pack("{s:s}", "resourceVersion", rvs);
    if (to < total) {
        char c[64];
        snprintf(c, sizeof c, "%u.%zu", s->id, to);
        json_object_set_new(meta, "continue", json_string(c));
        json_object_set_new(meta, "remainingItemCount", json_integer((json_int_t)(total - to)));
    } else { /* the last page: the snapshot goes */
        json_decref(s->items);
        free(s->res);
        free(s->ns);
        memset(s, 0, sizeof *s);
    }
    answer_json(a, 200,
                json_pack("{s:s,s:s,s:o,s:o}", "kind", kind, "apiVersion", r->api_version,
                          "metadata", meta, "items", items));
}

/* --- watch ------------------------------------------------------------- */

struct watch {
    struct route r;
    struct fsel fs;
    size_t next;     /* the next event to look at */
    json_t *initial; /* ADDED events still to send (a watch without a resourceVersion) */
    size_t ninitial;
    char *pending; /* a line being written */
    size_t plen, poff;
    bool bookmarks, done, failed;
    long drop_after, sent;
    double deadline, next_bookmark;
};

double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *event_line(const char *type, json_t *obj)
{
    json_t *ev = json_pack("{s:s,s:O}", "type", type, "object", obj);
    char *s = json_text(ev, NULL);
    json_decref(ev);
    size_t n = strlen(s);
    s = realloc(s, n + 2);
    s[n] = '\n';
    s[n + 1] = '\0';
    return s;
}

/* An event's line from its object's text (made once, in record): the
 * bytes event_line would make. */
static char *event_line_text(const struct event *e)
{
    if (!e->text)
        return event_line(e->type, e->obj);
    size_t tn = strlen(e->type);
    char *s = malloc(tn + e->tlen + 24);
    if (!s)
        return NULL;
    char *p = s;
    memcpy(p, "{\"type\":\"", 9);
    p += 9;
    memcpy(p, e->type, tn);
    p += tn;
    memcpy(p, "\",\"object\":", 11);
    p += 11;
    memcpy(p, e->text, e->tlen);
    p += e->tlen;
    memcpy(p, "}\n", 3);
    return s;
}

/* An event as a watch with a field selector sees it, as the watch cache's
 * cacheWatcher.convertToWatchEvent (k8s.io/apiserver/pkg/storage/cacher):
 * ADDED when the object comes into the selector's view, MODIFIED while it
 * stays in it, DELETED with the version before (at the event's
 * resourceVersion) when it leaves it or is deleted; NULL when the watch
 * sees neither version. */
static char *selected_line(const struct watch *w, const struct event *e)
{
    bool now = strcmp(e->type, "DELETED") != 0 && fsel_match(&w->fs, e->obj);
    bool before = e->prev && fsel_match(&w->fs, e->prev);
    if (now) {
        if (before || strcmp(e->type, "MODIFIED") != 0)
            return event_line_text(e);
        return event_line("ADDED", e->obj);
    }
    if (!before)
        return NULL;
    if (strcmp(e->type, "DELETED") == 0) /* its object is the last version at this rv */
        return event_line_text(e);
    json_t *last = json_copy(e->prev); /* the version before, at this event's resourceVersion */
    json_object_set_new(last, "metadata", json_copy(json_object_get(e->prev, "metadata")));
    set_rv(last, e->rv);
    char *line = event_line("DELETED", last);
    json_decref(last);
    return line;
}

/* The next line for w, or NULL (call with the lock held). */
static char *watch_next(struct watch *w)
{
    if (w->initial && w->ninitial < json_array_size(w->initial)) {
        json_t *o = json_array_get(w->initial, w->ninitial++);
        w->sent++;
        return event_line("ADDED", o);
    }
    for (; w->next < S.nevents; w->next++) {
        struct event *e = &S.events[w->next];
        if (!in_scope(e->o, &w->r))
            continue;
        if (!w->fs.n) {
            w->next++;
            w->sent++;
            return event_line_text(e);
        }
        char *line = selected_line(w, e);
        if (line) {
            w->next++;
            w->sent++;
            return line;
        }
    }
    double now = mono();
    if (w->bookmarks && S.bookmark_ms > 0 && now >= w->next_bookmark) {
        w->next_bookmark = now + (double)S.bookmark_ms / 1000;
        char rvs[32];
        snprintf(rvs, sizeof rvs, "%ld", S.rv);
        json_t *o = json_pack("{s:s,s:s,s:{s:s}}", "kind", kind_of(w->r.res), "apiVersion",
                              w->r.api_version, "metadata", "resourceVersion", rvs);
        char *line = event_line("BOOKMARK", o);
        json_decref(o);
        return line;
    }
    return NULL;
}

/* Appends the lines that are ready to w->pending, up to about max bytes
 * in all (several events in one chunk: one write, one wake-up of the
 * reader, where a line a chunk costs both per event); stops where a
 * drop fault cuts the stream (lock held). */
static void watch_fill(struct watch *w, size_t max)
{
    while (w->plen - w->poff < max && !(w->drop_after >= 0 && w->sent >= w->drop_after)) {
        char *line = watch_next(w);
        if (!line)
            return;
        size_t n = strlen(line);
        if (!w->pending) {
            w->pending = line;
            w->plen = n;
            w->poff = 0;
            continue;
        }
        char *b = realloc(w->pending, w->plen + n + 1);
        if (!b) {
            free(line);
            return;
        }
        memcpy(b + w->plen, line, n + 1);
        w->pending = b;
        w->plen += n;
        free(line);
    }
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct watch *w = cls;
    pthread_mutex_lock(&S.mu);
    while (!w->pending) {
        if (S.stopping || w->done || mono() >= w->deadline) {
            pthread_mutex_unlock(&S.mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (w->drop_after >= 0 && w->sent >= w->drop_after) {
            pthread_mutex_unlock(&S.mu);
            return MHD_CONTENT_READER_END_WITH_ERROR; /* the connection drops mid-stream */
        }
        watch_fill(w, max);
        if (w->pending)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(watch_cv(w->r.res), &S.mu, &ts);
    }
    pthread_mutex_unlock(&S.mu);
    size_t n = w->plen - w->poff < max ? w->plen - w->poff : max;
    memcpy(buf, w->pending + w->poff, n);
    w->poff += n;
    if (w->poff == w->plen) {
        free(w->pending);
        w->pending = NULL;
    }
    return (ssize_t)n;
}

static void watch_free(void *cls)
{
    struct watch *w = cls;
    free(w->pending);
    json_decref(w->initial);
    free(w);
}

/* Starts a watch (lock held); sets *resp or answers a. */
struct MHD_Response *do_watch(const struct route *r, const struct fsel *fs, const char *rv_s,
                              bool bookmarks, long timeout_s, long drop_after)
{
    struct watch *w = calloc(1, sizeof *w);
    w->r = *r;
    w->fs = *fs;
    w->bookmarks = bookmarks;
    w->drop_after = drop_after;
    w->deadline = mono() + (timeout_s > 0 ? (double)timeout_s : 1800);
    w->next_bookmark = mono() + (double)S.bookmark_ms / 1000;
    long rv = rv_s && rv_s[0] ? strtol(rv_s, NULL, 10) : 0;
    if (rv == 0) { /* the current state as ADDED events, then changes */
        struct snapshot *s = snap_new(r, fs);
        w->initial = json_incref(s->items);
        json_decref(s->items);
        free(s->res);
        free(s->ns);
        memset(s, 0, sizeof *s);
        size_t i;
        json_t *it;
        json_array_foreach(w->initial, i, it)
        {
            json_object_set_new(it, "kind", json_string(kind_of(r->res)));
            json_object_set_new(it, "apiVersion", json_string(r->api_version));
        }
        w->next = S.nevents;
    } else if (rv < S.compacted) {
        char msg[128];
        snprintf(msg, sizeof msg, "too old resource version: %ld (%ld)", rv, S.compacted);
        json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion",
                               "v1", "metadata", "status", "Failure", "message", msg, "reason",
                               "Expired", "code", 410);
        w->pending = event_line("ERROR", st);
        json_decref(st);
        w->plen = strlen(w->pending);
        w->done = true;
    } else {
        size_t lo = 0, hi = S.nevents; /* the first event after rv */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (S.events[mid].rv <= rv)
                lo = mid + 1;
            else
                hi = mid;
        }
        w->next = lo;
    }
    S.watches++;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, watch_read, w, watch_free);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    return resp;
}
