/* listwatch.c - lists (limit/continue from one snapshot, items without
 * kind, remainingItemCount; an expired continue is 410) and watches
 * (chunked streams replayed from a resourceVersion, the current state as
 * ADDED without one, bookmarks, timeoutSeconds, a too-old version answered
 * by a 200 stream with one ERROR event holding a 410 Expired Status; the
 * faults that cut a stream or leave it open and silent). */
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

void snap_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n; i++) {
        json_decref(s->items[i].obj);
        text_unref(s->items[i].text);
    }
    free(s->items);
    free(s->res);
    free(s->ns);
    memset(s, 0, sizeof *s);
}

/* The stored versions in scope (no copies: a version is never modified,
 * and a list writes each without its kind and apiVersion). */
struct snapshot *snap_new(const struct route *r, const struct fsel *fs)
{
    struct snapshot *s = NULL;
    for (size_t i = 0; i < MAX_SNAPS && !s; i++)
        if (!S.snaps[i].live)
            s = &S.snaps[i];
    if (!s) { /* the oldest goes */
        s = &S.snaps[0];
        for (size_t i = 1; i < MAX_SNAPS; i++)
            if (S.snaps[i].id < s->id)
                s = &S.snaps[i];
        snap_free(s);
    }
    struct object **v = malloc((S.nobjs + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < S.nobjs; i++)
        if (S.objs[i]->cur && in_scope(S.objs[i], r) && (!fs->n || fsel_match(fs, S.objs[i]->cur)))
            v[n++] = S.objs[i];
    qsort(v, n, sizeof *v, by_key);
    s->items = malloc((n + 1) * sizeof *s->items);
    for (size_t i = 0; i < n; i++)
        s->items[i] = (struct snap_item){json_incref(v[i]->cur), text_ref(v[i]->text)};
    s->n = n;
    free(v);
    s->rv = S.rv;
    s->res = strdup(r->res);
    s->ns = strdup(r->ns);
    s->live = true;
    s->id = ++S.snap_id;
    return s;
}

static const char *const NO_TYPE[] = {"kind", "apiVersion", NULL};

/* The list's page: the items from..to of s, each without kind and
 * apiVersion, as {kind, apiVersion, metadata: {resourceVersion[, continue,
 * remainingItemCount]}, items} (the bytes json_text made of it). */
static char *list_text(const struct route *r, const struct snapshot *s, size_t from, size_t to)
{
    struct jtext t = {0};
    char kind[96], num[32];
    snprintf(kind, sizeof kind, "%sList", kind_of(r->res));
    jt_raw(&t, "{\"kind\":", 8);
    jt_string(&t, kind);
    jt_raw(&t, ",\"apiVersion\":", 14);
    jt_string(&t, r->api_version);
    snprintf(num, sizeof num, "%ld", s->rv);
    jt_raw(&t, ",\"metadata\":{\"resourceVersion\":", 31);
    jt_string(&t, num);
    if (to < s->n) {
        snprintf(num, sizeof num, "%u.%zu", s->id, to);
        jt_raw(&t, ",\"continue\":", 12);
        jt_string(&t, num);
        jt_raw(&t, ",\"remainingItemCount\":", 22);
        jt_int(&t, (long long)(s->n - to));
    }
    jt_raw(&t, "},\"items\":[", 11);
    for (size_t i = from; i < to; i++) {
        if (i > from)
            jt_raw(&t, ",", 1);
        jt_members(&t, s->items[i].obj, s->items[i].text, NO_TYPE);
        jt_raw(&t, "}", 1);
    }
    jt_raw(&t, "]}", 2);
    return jt_end(&t, NULL);
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
            if (S.snaps[i].live && S.snaps[i].id == id)
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
    size_t total = s->n;
    if (from > total)
        from = total;
    size_t to = limit > 0 && from + (size_t)limit < total ? from + (size_t)limit : total;
    a->status = 200;
    a->body = list_text(r, s, from, to);
    if (to >= total) /* the last page: the snapshot goes */
        snap_free(s);
}

/* --- watch ------------------------------------------------------------- */

struct watch {
    struct route r;
    struct fsel fs;
    size_t next;             /* the next event to look at */
    struct snapshot initial; /* a watch without a resourceVersion: its ADDED events */
    size_t ninitial;         /* those sent */
    char *pending;           /* the lines being written: [poff, plen) is still to go */
    size_t plen, poff, pcap; /* (kept from one chunk to the next: no allocation a chunk) */
    bool bookmarks, done, failed;
    long drop_after, stall_after, sent;
    double deadline, next_bookmark;
    double sent_s; /* when its last chunk went (mono()); 0 none yet */
    struct MHD_Connection *c;
    struct parked park; /* suspended while it has nothing to send (park.c) */
    long id;            /* its number (> 0), which the events' field-selector memo names */
};

static long watch_ids; /* the last watch's number */

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
    size_t tn = strlen(e->type), tlen = e->text->len;
    char *s = malloc(tn + tlen + 24);
    if (!s)
        return NULL;
    char *p = s;
    memcpy(p, "{\"type\":\"", 9);
    p += 9;
    memcpy(p, e->type, tn);
    p += tn;
    memcpy(p, "\",\"object\":", 11);
    p += 11;
    memcpy(p, e->text->b, tlen);
    p += tlen;
    memcpy(p, "}\n", 3);
    return s;
}

/* fsel_match(&w->fs, e->obj), kept on the event for w: the next event of
 * the object asks it again of its version before (a version never changes,
 * nor does a watch's selector). */
static bool seen_match(const struct watch *w, struct event *e)
{
    if (e->seen_by != w->id) {
        e->seen = fsel_match(&w->fs, e->obj);
        e->seen_by = w->id;
    }
    return e->seen;
}

/* An event as a watch with a field selector sees it, as the watch cache's
 * cacheWatcher.convertToWatchEvent (k8s.io/apiserver/pkg/storage/cacher):
 * ADDED when the object comes into the selector's view, MODIFIED while it
 * stays in it, DELETED with the version before (at the event's
 * resourceVersion) when it leaves it or is deleted; NULL when the watch
 * sees neither version. */
static char *selected_line(const struct watch *w, struct event *e)
{
    bool now = strcmp(e->type, "DELETED") != 0 && seen_match(w, e);
    /* the version before is the object of the object's event before (record): its
     * match is known when this watch looked at that event */
    struct event *b = e->before ? &S.events[e->before - 1] : NULL;
    bool before =
        e->prev && (b && b->obj == e->prev ? seen_match(w, b) : fsel_match(&w->fs, e->prev));
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

/* Room for n more bytes (and a terminator) in w's pending lines. */
static bool pending_room(struct watch *w, size_t n)
{
    if (w->plen + n + 1 <= w->pcap)
        return true;
    size_t cap = w->pcap ? w->pcap : 16384;
    while (cap < w->plen + n + 1)
        cap *= 2;
    char *b = realloc(w->pending, cap);
    if (!b)
        return false;
    w->pending = b;
    w->pcap = cap;
    return true;
}

/* e's line appended to w's pending lines, from its text (the bytes
 * event_line_text makes, without a line of its own to copy); false when
 * out of memory. */
static bool event_put(struct watch *w, const struct event *e)
{
    size_t tn = strlen(e->type), tlen = e->text->len;
    if (!pending_room(w, tn + tlen + 22))
        return false;
    char *p = w->pending + w->plen;
    memcpy(p, "{\"type\":\"", 9);
    p += 9;
    memcpy(p, e->type, tn);
    p += tn;
    memcpy(p, "\",\"object\":", 11);
    p += 11;
    memcpy(p, e->text->b, tlen);
    p += tlen;
    memcpy(p, "}\n", 3);
    w->plen += 9 + tn + 11 + tlen + 2;
    return true;
}

/* The next line for w, or NULL (call with the lock held); NULL with *put
 * set when the line went straight into w's pending lines. */
static char *watch_next(struct watch *w, bool *put)
{
    *put = false;
    if (w->ninitial < w->initial.n) {
        /* the stored version with its kind and apiVersion last (the list
         * item's members, then the kind the watch gives every object) */
        const struct snap_item *it = &w->initial.items[w->ninitial++];
        struct jtext t = {0};
        jt_raw(&t, "{\"type\":\"ADDED\",\"object\":", 25);
        if (jt_members(&t, it->obj, it->text, NO_TYPE))
            jt_raw(&t, ",", 1);
        jt_raw(&t, "\"kind\":", 7);
        jt_string(&t, kind_of(w->r.res));
        jt_raw(&t, ",\"apiVersion\":", 14);
        jt_string(&t, w->r.api_version);
        jt_raw(&t, "}}\n", 3);
        w->sent++;
        return jt_end(&t, NULL);
    }
    for (; w->next < S.nevents; w->next++) {
        struct event *e = &S.events[w->next];
        if (!in_scope(e->o, &w->r))
            continue;
        if (!w->fs.n) {
            if (e->text) { /* the common case: no line of its own */
                if (!event_put(w, e))
                    return NULL;
                *put = true;
            }
            w->next++;
            w->sent++;
            return *put ? NULL : event_line_text(e);
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

/* Whether a stall fault has silenced w: nothing more is sent on it. */
static bool stalled(const struct watch *w)
{
    return w->stall_after >= 0 && w->sent >= w->stall_after;
}

/* Appends the lines that are ready to w->pending, up to about max bytes
 * in all (several events in one chunk: one write, one wake-up of the
 * reader, where a line a chunk costs both per event); stops where a
 * drop fault cuts the stream or a stall fault silences it (lock held). */
static void watch_fill(struct watch *w, size_t max)
{
    w->plen = w->poff = 0; /* nothing is pending: the buffer is used again from its start */
    while (w->plen < max && !(w->drop_after >= 0 && w->sent >= w->drop_after) && !stalled(w)) {
        bool put;
        char *line = watch_next(w, &put);
        if (put)
            continue;
        if (!line)
            return;
        size_t n = strlen(line);
        if (!pending_room(w, n)) {
            free(line);
            return;
        }
        memcpy(w->pending + w->plen, line, n + 1);
        w->plen += n;
        free(line);
    }
}

/* The content reader of a watch's stream. With nothing to send it parks
 * its connection and returns 0 (libmicrohttpd calls it again once resumed):
 * until a write to its resource, its next bookmark or its timeoutSeconds,
 * or, within --watch-batch-ms of its last chunk, until that time (what
 * comes in that time goes in one chunk: one write and one wake-up of the
 * reader for many events, and a write in the meantime wakes no one; the
 * first event after a quiet spell goes at once). */
static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct watch *w = cls;
    if (w->poff == w->plen) {
        pthread_mutex_lock(&S.mu);
        double now = mono();
        if (S.stopping || w->done || now >= w->deadline) {
            pthread_mutex_unlock(&S.mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (w->drop_after >= 0 && w->sent >= w->drop_after) {
            pthread_mutex_unlock(&S.mu);
            return MHD_CONTENT_READER_END_WITH_ERROR; /* the connection drops mid-stream */
        }
        if (stalled(w)) { /* open and silent until its timeoutSeconds: no write wakes it */
            bool parked = park(&w->park, w->c, NULL, w->deadline);
            pthread_mutex_unlock(&S.mu);
            return parked ? 0 : MHD_CONTENT_READER_END_OF_STREAM;
        }
        double batch_end = w->sent_s + (double)S.watch_batch_ms / 1000;
        if (w->sent_s > 0 && now < batch_end) {
            bool parked = park(&w->park, w->c, NULL, batch_end);
            pthread_mutex_unlock(&S.mu);
            return parked ? 0 : MHD_CONTENT_READER_END_OF_STREAM;
        }
        watch_fill(w, max);
        if (w->poff == w->plen) {
            double due = w->deadline;
            if (w->bookmarks && S.bookmark_ms > 0 && w->next_bookmark < due)
                due = w->next_bookmark;
            bool parked = park(&w->park, w->c, w->r.res, due);
            pthread_mutex_unlock(&S.mu);
            return parked ? 0 : MHD_CONTENT_READER_END_OF_STREAM;
        }
        pthread_mutex_unlock(&S.mu);
    }
    size_t n = w->plen - w->poff < max ? w->plen - w->poff : max;
    memcpy(buf, w->pending + w->poff, n);
    w->poff += n;
    if (w->poff == w->plen) {
        w->plen = w->poff = 0;
        w->sent_s = mono();
    }
    return (ssize_t)n;
}

static void watch_free(void *cls)
{
    struct watch *w = cls;
    pthread_mutex_lock(&S.mu); /* the items' references are counted under the lock */
    park_drop(&w->park);       /* (a suspended connection is not closed: never on) */
    snap_free(&w->initial);
    pthread_mutex_unlock(&S.mu);
    free(w->pending);
    free(w);
}

/* Starts a watch (lock held); sets *resp or answers a. */
struct MHD_Response *do_watch(struct MHD_Connection *c, const struct route *r,
                              const struct fsel *fs, const char *rv_s, bool bookmarks,
                              long timeout_s, long drop_after, long stall_after)
{
    struct watch *w = calloc(1, sizeof *w);
    w->c = c;
    w->id = ++watch_ids;
    w->r = *r;
    w->fs = *fs;
    w->bookmarks = bookmarks;
    w->drop_after = drop_after;
    w->stall_after = stall_after;
    w->deadline = mono() + (timeout_s > 0 ? (double)timeout_s : 1800);
    w->next_bookmark = mono() + (double)S.bookmark_ms / 1000;
    long rv = rv_s && rv_s[0] ? strtol(rv_s, NULL, 10) : 0;
    if (rv == 0) { /* the current state as ADDED events, then changes */
        struct snapshot *s = snap_new(r, fs);
        w->initial = *s; /* the watch's own: the slot is free again */
        memset(s, 0, sizeof *s);
        w->next = S.nevents;
    } else if (rv < S.compacted) {
        char msg[128];
        snprintf(msg, sizeof msg, "too old resource version: %ld (%ld)", rv, S.compacted);
        json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion",
                               "v1", "metadata", "status", "Failure", "message", msg, "reason",
                               "Expired", "code", 410);
        w->pending = event_line("ERROR", st);
        json_decref(st);
        w->plen = w->pending ? strlen(w->pending) : 0;
        w->pcap = w->plen + 1;
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
