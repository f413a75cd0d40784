/* apidouble.c - a kube-apiserver double for the tests: a loopback HTTP
 * server (libmicrohttpd) that answers as the recorded v1.28 server does
 * (../shared/k8s/samples/recorded-apiserver-v1.28/): objects in memory
 * under one resourceVersion counter; lists with limit/continue served from
 * a snapshot; watches as chunked streams (replay from a resourceVersion,
 * bookmarks, a too-old resourceVersion answered by a 200 stream holding
 * one ERROR event with a 410 Expired Status); create (409 AlreadyExists),
 * update with a stale resourceVersion (409), merge patch, delete, status
 * only through /status; Binding answered 201 with a Status, 409 when the
 * pod is already bound; quantities given as numbers stored as strings.
 * Faults on demand through /_control/ (see docs/kube.md): drop watch
 * connections after N events, delay answers, answer 429 with Retry-After
 * or 500, compact the history. Plain HTTP only (TLS is next). */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#define MAX_BODY   ((size_t)3 << 20) /* the real server's request limit */
#define MAX_SNAPS  64
#define MAX_FAULTS 16

struct object {
    char *res, *ns, *name; /* res: "pods", "scheduling.k8s.io/priorityclasses" */
    json_t *cur;           /* NULL once deleted */
};

struct event {
    long rv;
    const char *type;
    struct object *o;
    json_t *obj; /* the object as it was at rv */
};

struct snapshot {
    long rv;
    char *res, *ns;
    json_t *items; /* array */
    size_t used;   /* 0 once free */
    unsigned id;
};

struct fault {
    long status; /* 429, 500, ...: answer this; 0: no status fault */
    long retry_after_s;
    long delay_ms;   /* wait before answering */
    long drop_after; /* watches: close the connection after this many events; -1 none */
    long count;      /* requests (or watches) it applies to */
    char match[128]; /* only paths containing this */
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long rv;        /* the last resourceVersion given */
    long compacted; /* watches from before this are 410 */
    struct object **objs;
    size_t nobjs, capobjs;
    struct event *events;
    size_t nevents, capevents;
    struct snapshot snaps[MAX_SNAPS];
    unsigned snap_id;
    struct fault faults[MAX_FAULTS];
    size_t nfaults;
    long bookmark_ms;
    long requests, watches, bindings;
    long uid;
    volatile sig_atomic_t stopping;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* --- helpers ----------------------------------------------------------- */

static void now_rfc3339(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static struct object *find(const char *res, const char *ns, const char *name)
{
    for (size_t i = 0; i < S.nobjs; i++) {
        struct object *o = S.objs[i];
        if (strcmp(o->res, res) == 0 && strcmp(o->ns, ns) == 0 && strcmp(o->name, name) == 0)
            return o;
    }
    return NULL;
}

static const char *kind_of(const char *res)
{
    static const char *const table[][2] = {
        {"pods", "Pod"},
        {"nodes", "Node"},
        {"scheduling.k8s.io/priorityclasses", "PriorityClass"},
        {"scheduling.x-k8s.io/podgroups", "PodGroup"},
        {"scheduling.volcano.sh/podgroups", "PodGroup"},
        {"configmaps", "ConfigMap"},
        {"events", "Event"},
        {"coordination.k8s.io/leases", "Lease"},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i][0], res) == 0)
            return table[i][1];
    return "Object";
}

static void set_rv(json_t *obj, long rv)
{
    json_t *m = json_object_get(obj, "metadata");
    char b[32];
    snprintf(b, sizeof b, "%ld", rv);
    json_object_set_new(m, "resourceVersion", json_string(b));
}

/* Appends an event at a new resourceVersion; obj is stolen. */
static void record(struct object *o, const char *type, json_t *obj)
{
    long rv = ++S.rv;
    set_rv(obj, rv);
    if (S.nevents == S.capevents) {
        S.capevents = S.capevents ? S.capevents * 2 : 1024;
        S.events = realloc(S.events, S.capevents * sizeof *S.events);
    }
    S.events[S.nevents++] = (struct event){rv, type, o, json_incref(obj)};
    json_decref(o->cur);
    o->cur = strcmp(type, "DELETED") == 0 ? NULL : json_incref(obj);
    json_decref(obj);
    pthread_cond_broadcast(&S.cv);
}

/* Quantities given as numbers become strings, as the server writes them. */
static void quantities_as_strings(json_t *map)
{
    const char *k;
    json_t *v;
    json_object_foreach(map, k, v)
    {
        if (json_is_integer(v)) {
            char b[32];
            snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            json_object_set_new(map, k, json_string(b));
        } else if (json_is_real(v)) {
            char b[64];
            snprintf(b, sizeof b, "%g", json_real_value(v));
            json_object_set_new(map, k, json_string(b));
        }
    }
}

static void normalize(json_t *obj)
{
    json_t *st = json_object_get(obj, "status");
    quantities_as_strings(json_object_get(st, "capacity"));
    quantities_as_strings(json_object_get(st, "allocatable"));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "containers"), i, c)
    {
        json_t *r = json_object_get(c, "resources");
        quantities_as_strings(json_object_get(r, "requests"));
        quantities_as_strings(json_object_get(r, "limits"));
    }
}

/* RFC 7386 merge patch of target (modified in place or replaced). */
static json_t *merge_patch(json_t *target, json_t *patch)
{
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
    }
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v)
    {
        if (json_is_null(v)) {
            json_object_del(target, k);
        } else {
            json_t *t = json_incref(json_object_get(target, k));
            json_object_set_new(target, k, merge_patch(t, v));
        }
    }
    return target;
}

/* --- answers ----------------------------------------------------------- */

struct answer {
    unsigned status;
    char *body; /* malloc'd */
    const char *retry_after;
};

static void answer_json(struct answer *a, unsigned status, json_t *doc)
{
    a->status = status;
    a->body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
}

static void answer_status(struct answer *a, unsigned code, const char *reason, const char *name,
                          const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void answer_status(struct answer *a, unsigned code, const char *reason, const char *name,
                          const char *kind, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", code < 300 ? "Success" : "Failure", "message", msg,
                           "reason", reason, "code", (int)code);
    if (code < 300) {
        json_object_del(st, "message");
        json_object_del(st, "reason");
    }
    if (name && kind)
        json_object_set_new(st, "details", json_pack("{s:s,s:s}", "name", name, "kind", kind));
    answer_json(a, code, st);
}

/* --- routes ------------------------------------------------------------ */

struct route {
    char res[160], ns[256], name[256], sub[32];
    char api_version[96];
    bool namespaced, item;
};

/* /api/v1/[namespaces/NS/]RES[/NAME[/SUB]] and /apis/G/V/... */
static bool parse_route(const char *url, struct route *r)
{
    memset(r, 0, sizeof *r);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", url);
    char *seg[12];
    size_t n = 0;
    for (char *save, *t = strtok_r(buf, "/", &save); t && n < 12; t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    size_t i;
    char group[96] = "";
    if (n >= 2 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
        snprintf(r->api_version, sizeof r->api_version, "v1");
        i = 2;
    } else if (n >= 3 && strcmp(seg[0], "apis") == 0) {
        snprintf(group, sizeof group, "%s", seg[1]);
        snprintf(r->api_version, sizeof r->api_version, "%s/%s", seg[1], seg[2]);
        i = 3;
    } else {
        return false;
    }
    if (n - i >= 3 && strcmp(seg[i], "namespaces") == 0) {
        snprintf(r->ns, sizeof r->ns, "%s", seg[i + 1]);
        r->namespaced = true;
        i += 2;
    }
    if (i >= n)
        return false;
    snprintf(r->res, sizeof r->res, "%s%s%s", group, group[0] ? "/" : "", seg[i]);
    if (i + 1 < n) {
        r->item = true;
        snprintf(r->name, sizeof r->name, "%s", seg[i + 1]);
    }
    if (i + 2 < n)
        snprintf(r->sub, sizeof r->sub, "%s", seg[i + 2]);
    return i + 3 >= n;
}

static const char *plural_kind(const struct route *r)
{
    const char *slash = strchr(r->res, '/');
    return slash ? slash + 1 : r->res;
}

/* "pods" or "leases.coordination.k8s.io", as the server names a resource */
static void qualified(const struct route *r, char *b, size_t n)
{
    const char *slash = strchr(r->res, '/');
    if (slash)
        snprintf(b, n, "%s.%.*s", slash + 1, (int)(slash - r->res), r->res);
    else
        snprintf(b, n, "%s", r->res);
}

/* --- list -------------------------------------------------------------- */

static int by_key(const void *a, const void *b)
{
    const struct object *x = *(struct object *const *)a, *y = *(struct object *const *)b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

static bool in_scope(const struct object *o, const struct route *r)
{
    return strcmp(o->res, r->res) == 0 && (!r->namespaced || strcmp(o->ns, r->ns) == 0);
}

static struct snapshot *snap_new(const struct route *r)
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
        if (S.objs[i]->cur && in_scope(S.objs[i], r))
            v[n++] = S.objs[i];
    qsort(v, n, sizeof *v, by_key);
    s->items = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_deep_copy(v[i]->cur);
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

static void do_list(const struct route *r, long limit, const char *cont, struct answer *a)
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
        s = snap_new(r);
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
    size_t next;     /* the next event to look at */
    json_t *initial; /* ADDED events still to send (a watch without a resourceVersion) */
    size_t ninitial;
    char *pending; /* a line being written */
    size_t plen, poff;
    bool bookmarks, done, failed;
    long drop_after, sent;
    double deadline, next_bookmark;
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *event_line(const char *type, json_t *obj)
{
    json_t *ev = json_pack("{s:s,s:O}", "type", type, "object", obj);
    char *s = json_dumps(ev, JSON_COMPACT);
    json_decref(ev);
    size_t n = strlen(s);
    s = realloc(s, n + 2);
    s[n] = '\n';
    s[n + 1] = '\0';
    return s;
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
        if (in_scope(e->o, &w->r)) {
            w->next++;
            w->sent++;
            return event_line(e->type, e->obj);
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
        w->pending = watch_next(w);
        if (w->pending) {
            w->plen = strlen(w->pending);
            w->poff = 0;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&S.cv, &S.mu, &ts);
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
static struct MHD_Response *do_watch(const struct route *r, const char *rv_s, bool bookmarks,
                                     long timeout_s, long drop_after)
{
    struct watch *w = calloc(1, sizeof *w);
    w->r = *r;
    w->bookmarks = bookmarks;
    w->drop_after = drop_after;
    w->deadline = mono() + (timeout_s > 0 ? (double)timeout_s : 1800);
    w->next_bookmark = mono() + (double)S.bookmark_ms / 1000;
    long rv = rv_s && rv_s[0] ? strtol(rv_s, NULL, 10) : 0;
    if (rv == 0) { /* the current state as ADDED events, then changes */
        struct snapshot *s = snap_new(r);
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

/* --- writes ------------------------------------------------------------ */

static void do_create(const struct route *r, json_t *body, struct answer *a)
{
    json_t *meta = json_object_get(body, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!json_is_object(body) || !name || !name[0]) {
        answer_status(a, 422, "Invalid", NULL, NULL,
                      "%s \"\" is invalid: metadata.name: Required value: name or generateName "
                      "is required",
                      kind_of(r->res));
        return;
    }
    if (r->namespaced && ns && strcmp(ns, r->ns) != 0) {
        answer_status(a, 400, "BadRequest", NULL, NULL,
                      "the namespace of the provided object does not match the namespace sent "
                      "on the request");
        return;
    }
    char q[200];
    qualified(r, q, sizeof q);
    struct object *o = find(r->res, r->namespaced ? r->ns : "", name);
    if (o && o->cur) {
        answer_status(a, 409, "AlreadyExists", name, plural_kind(r), "%s \"%s\" already exists", q,
                      name);
        return;
    }
    if (!o) {
        o = calloc(1, sizeof *o);
        o->res = strdup(r->res);
        o->ns = strdup(r->namespaced ? r->ns : "");
        o->name = strdup(name);
        if (S.nobjs == S.capobjs) {
            S.capobjs = S.capobjs ? S.capobjs * 2 : 256;
            S.objs = realloc(S.objs, S.capobjs * sizeof *S.objs);
        }
        S.objs[S.nobjs++] = o;
    }
    json_t *obj = json_deep_copy(body);
    meta = json_object_get(obj, "metadata");
    char uid[48], ts[32];
    S.uid++;
    snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012ld", S.uid);
    now_rfc3339(ts, sizeof ts);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(ts));
    if (r->namespaced)
        json_object_set_new(meta, "namespace", json_string(r->ns));
    json_object_set_new(obj, "kind", json_string(kind_of(r->res)));
    json_object_set_new(obj, "apiVersion", json_string(r->api_version));
    if (strcmp(r->res, "pods") == 0) /* status is the server's to write */
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Pending"));
    normalize(obj);
    record(o, "ADDED", json_incref(obj));
    answer_json(a, 201, obj);
}

/* The stored object for a write, or an answer (404). */
static struct object *target(const struct route *r, struct answer *a)
{
    struct object *o = find(r->res, r->namespaced ? r->ns : "", r->name);
    if (!o || !o->cur) {
        char q[200];
        qualified(r, q, sizeof q);
        answer_status(a, 404, "NotFound", r->name, plural_kind(r), "%s \"%s\" not found", q,
                      r->name);
        return NULL;
    }
    return o;
}

static bool stale(const struct route *r, struct object *o, json_t *body, bool required,
                  struct answer *a)
{
    const char *want =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
    const char *have =
        json_string_value(json_object_get(json_object_get(o->cur, "metadata"), "resourceVersion"));
    if (!want && required) {
        answer_status(a, 422, "Invalid", r->name, plural_kind(r),
                      "%s \"%s\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must "
                      "be specified for an update",
                      kind_of(r->res), r->name);
        return true;
    }
    if (want && strcmp(want, have) != 0) {
        char q[200];
        qualified(r, q, sizeof q);
        answer_status(a, 409, "Conflict", r->name, plural_kind(r),
                      "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                      "please apply your changes to the latest version and try again",
                      q, r->name);
        return true;
    }
    return false;
}

/* A new version from body (PUT) or patch (PATCH): status only through
 * /status, and nothing but status through it. */
static void do_update(const struct route *r, json_t *body, bool patch, struct answer *a)
{
    struct object *o = target(r, a);
    if (!o || stale(r, o, body, !patch, a))
        return;
    json_t *old = o->cur;
    json_t *next = patch ? merge_patch(json_deep_copy(old), body) : json_deep_copy(body);
    if (!json_is_object(next)) {
        json_decref(next);
        answer_status(a, 400, "BadRequest", NULL, NULL, "the body is not an object");
        return;
    }
    bool status_only = strcmp(r->sub, "status") == 0;
    json_t *keep = status_only ? json_deep_copy(old) : next;
    if (status_only) {
        json_object_set(keep, "status", json_object_get(next, "status"));
        json_decref(next);
    } else if (json_object_get(old, "status")) {
        json_object_set(keep, "status", json_object_get(old, "status"));
    } else {
        json_object_del(keep, "status");
    }
    /* identity is the server's */
    json_t *m = json_object_get(keep, "metadata"), *om = json_object_get(old, "metadata");
    if (!json_is_object(m)) {
        m = json_object();
        json_object_set_new(keep, "metadata", m);
    }
    const char *fixed[] = {"name", "namespace", "uid", "creationTimestamp"};
    for (size_t i = 0; i < 4; i++)
        if (json_object_get(om, fixed[i]))
            json_object_set(m, fixed[i], json_object_get(om, fixed[i]));
    json_object_set_new(keep, "kind", json_string(kind_of(r->res)));
    json_object_set_new(keep, "apiVersion", json_string(r->api_version));
    normalize(keep);
    record(o, "MODIFIED", json_incref(keep));
    answer_json(a, 200, keep);
}

static void do_delete(const struct route *r, struct answer *a)
{
    struct object *o = target(r, a);
    if (!o)
        return;
    json_t *last = json_deep_copy(o->cur);
    record(o, "DELETED", json_incref(last));
    answer_json(a, 200, last);
}

static void do_binding(const struct route *r, json_t *body, struct answer *a)
{
    struct object *o = target(r, a);
    if (!o)
        return;
    json_t *meta = json_object_get(body, "metadata"), *tg = json_object_get(body, "target");
    const char *bname = json_string_value(json_object_get(meta, "name"));
    const char *tkind = json_string_value(json_object_get(tg, "kind"));
    const char *node = json_string_value(json_object_get(tg, "name"));
    if (!bname || strcmp(bname, r->name) != 0) {
        answer_status(a, 400, "BadRequest", NULL, NULL,
                      "name in URL does not match name in Binding object");
        return;
    }
    if ((tkind && tkind[0] && strcmp(tkind, "Node") != 0) || !node || !node[0]) {
        answer_status(a, 422, "Invalid", r->name, "bindings",
                      "Binding \"%s\" is invalid: target: a Node with a name is required", r->name);
        return;
    }
    json_t *om = json_object_get(o->cur, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *have_uid = json_string_value(json_object_get(om, "uid"));
    const char *have_rv = json_string_value(json_object_get(om, "resourceVersion"));
    if ((uid && strcmp(uid, have_uid) != 0) || (rv && strcmp(rv, have_rv) != 0)) {
        answer_status(a, 409, "Conflict", r->name, "pods",
                      "Operation cannot be fulfilled on pods \"%s\": the object has been "
                      "modified; please apply your changes to the latest version and try again",
                      r->name);
        return;
    }
    json_t *spec = json_object_get(o->cur, "spec");
    const char *bound = json_string_value(json_object_get(spec, "nodeName"));
    if (bound && bound[0]) {
        answer_status(a, 409, "Conflict", r->name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                      "assigned to node \"%s\"",
                      r->name, r->name, bound);
        return;
    }
    if (json_object_get(om, "deletionTimestamp")) {
        answer_status(a, 409, "Conflict", r->name, "pods/binding",
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                      "deleted, cannot be assigned to a host",
                      r->name, r->name);
        return;
    }
    json_t *next = json_deep_copy(o->cur);
    json_object_set_new(json_object_get(next, "spec"), "nodeName", json_string(node));
    json_t *ann = json_object_get(meta, "annotations");
    if (json_is_object(ann)) {
        json_t *nm = json_object_get(next, "metadata");
        if (!json_is_object(json_object_get(nm, "annotations")))
            json_object_set_new(nm, "annotations", json_object());
        json_object_update(json_object_get(nm, "annotations"), ann);
    }
    char ts[32];
    now_rfc3339(ts, sizeof ts);
    json_t *st = json_object_get(next, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(next, "status", st);
    }
    json_object_set_new(st, "conditions",
                        json_pack("[{s:s,s:s,s:n,s:s}]", "type", "PodScheduled", "status", "True",
                                  "lastProbeTime", "lastTransitionTime", ts));
    record(o, "MODIFIED", next);
    S.bindings++;
    answer_status(a, 201, "", NULL, NULL, "%s", "");
}

/* --- control ----------------------------------------------------------- */

static long jint(json_t *o, const char *k, long dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

static void do_control(const char *what, const char *method, json_t *body, struct answer *a)
{
    if (strcmp(what, "fault") == 0 && strcmp(method, "POST") == 0) {
        if (S.nfaults == MAX_FAULTS) {
            answer_status(a, 400, "BadRequest", NULL, NULL, "too many faults");
            return;
        }
        struct fault *f = &S.faults[S.nfaults++];
        f->status = jint(body, "status", 0);
        f->retry_after_s = jint(body, "retry_after_s", -1);
        f->delay_ms = jint(body, "delay_ms", 0);
        f->drop_after = jint(body, "drop_after", -1);
        f->count = jint(body, "count", 1);
        const char *m = json_string_value(json_object_get(body, "match"));
        snprintf(f->match, sizeof f->match, "%s", m ? m : "");
    } else if (strcmp(what, "clear") == 0) {
        S.nfaults = 0;
    } else if (strcmp(what, "compact") == 0) {
        S.compacted = S.rv;
    } else if (strcmp(what, "bookmark_ms") == 0) {
        S.bookmark_ms = jint(body, "ms", S.bookmark_ms);
    } else if (strcmp(what, "stats") != 0) {
        answer_status(a, 404, "NotFound", NULL, NULL, "no control %s", what);
        return;
    }
    answer_json(a, 200,
                json_pack("{s:i,s:i,s:i,s:i,s:i}", "requests", (int)S.requests, "watches",
                          (int)S.watches, "bindings", (int)S.bindings, "resourceVersion", (int)S.rv,
                          "compacted", (int)S.compacted));
}

/* The fault for this request, if any (its count is taken). */
static struct fault take_fault(const char *url, bool watch)
{
    struct fault none = {.drop_after = -1};
    for (size_t i = 0; i < S.nfaults; i++) {
        struct fault *f = &S.faults[i];
        if (f->count <= 0 || (f->match[0] && !strstr(url, f->match)))
            continue;
        if (f->drop_after >= 0 && !watch)
            continue;
        f->count--;
        return *f;
    }
    return none;
}

/* --- the server -------------------------------------------------------- */

struct upload {
    char *buf;
    size_t len;
    bool over;
};

static enum MHD_Result send_answer(struct MHD_Connection *c, struct answer *a)
{
    size_t n = strlen(a->body);
    struct MHD_Response *resp = MHD_create_response_from_buffer(n, a->body, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (a->retry_after)
        MHD_add_response_header(resp, "Retry-After", a->retry_after);
    enum MHD_Result ret = MHD_queue_response(c, a->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void route_request(struct MHD_Connection *c, const char *url, const char *method,
                          json_t *body, struct answer *a, struct MHD_Response **stream)
{
    struct route r;
    if (!parse_route(url, &r)) {
        answer_status(a, 404, "NotFound", NULL, NULL,
                      "the server could not find the requested "
                      "resource");
        return;
    }
    const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
    bool is_watch = watch && (strcmp(watch, "1") == 0 || strcmp(watch, "true") == 0);
    struct fault f = take_fault(url, is_watch && !r.item && strcmp(method, "GET") == 0);
    if (f.delay_ms > 0) {
        pthread_mutex_unlock(&S.mu);
        struct timespec ts = {f.delay_ms / 1000, f.delay_ms % 1000 * 1000000L};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&S.mu);
    }
    if (f.status == 429) {
        static char ra[32];
        snprintf(ra, sizeof ra, "%ld", f.retry_after_s >= 0 ? f.retry_after_s : 1);
        a->retry_after = f.retry_after_s >= 0 ? ra : NULL;
        answer_status(a, 429, "TooManyRequests", NULL, NULL,
                      "the server has received too many requests and has asked us to try again "
                      "later");
        return;
    }
    if (f.status >= 400) {
        answer_status(a, (unsigned)f.status, "InternalError", NULL, NULL,
                      "an error on the server (\"injected\") has prevented the request from "
                      "succeeding");
        return;
    }
    bool get = strcmp(method, "GET") == 0;
    if (!r.item && get && is_watch) {
        const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
        const char *bm =
            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "allowWatchBookmarks");
        const char *to = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeoutSeconds");
        *stream = do_watch(&r, rv, bm && strcmp(bm, "true") == 0, to ? atol(to) : 0, f.drop_after);
    } else if (!r.item && get) {
        const char *lim = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "limit");
        const char *cont = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "continue");
        do_list(&r, lim ? atol(lim) : 0, cont, a);
    } else if (!r.item && strcmp(method, "POST") == 0) {
        do_create(&r, body, a);
    } else if (r.item && get && !r.sub[0]) {
        struct object *o = target(&r, a);
        if (o)
            answer_json(a, 200, json_incref(o->cur));
    } else if (r.item && strcmp(method, "POST") == 0 && strcmp(r.sub, "binding") == 0 &&
               strcmp(r.res, "pods") == 0) {
        do_binding(&r, body, a);
    } else if (r.item && (strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0) &&
               (!r.sub[0] || strcmp(r.sub, "status") == 0)) {
        bool patch = strcmp(method, "PATCH") == 0;
        const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
        if (patch && (!ct || (strcmp(ct, "application/merge-patch+json") != 0 &&
                              strcmp(ct, "application/strategic-merge-patch+json") != 0))) {
            answer_status(a, 415, "UnsupportedMediaType", NULL, NULL,
                          "the body of the request was in an unknown format - accepted media "
                          "types include: application/merge-patch+json, "
                          "application/strategic-merge-patch+json");
            return;
        }
        do_update(&r, body, patch, a);
    } else if (r.item && strcmp(method, "DELETE") == 0 && !r.sub[0]) {
        do_delete(&r, a);
    } else {
        answer_status(a, 405, "MethodNotAllowed", NULL, NULL,
                      "the server does not allow this method on the requested resource");
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *data_size, void **con_cls)
{
    (void)cls, (void)version;
    struct upload *up = *con_cls;
    if (!up) {
        *con_cls = calloc(1, sizeof *up);
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*data_size > 0) {
        if (up->len + *data_size > MAX_BODY) {
            up->over = true;
        } else {
            up->buf = realloc(up->buf, up->len + *data_size + 1);
            memcpy(up->buf + up->len, data, *data_size);
            up->len += *data_size;
            up->buf[up->len] = '\0';
        }
        *data_size = 0;
        return MHD_YES;
    }
    struct answer a = {0};
    struct MHD_Response *stream = NULL;
    json_t *body = NULL;
    if (up->over) {
        answer_status(&a, 413, "RequestEntityTooLarge", NULL, NULL,
                      "the request body is larger than %zu bytes", MAX_BODY);
        return send_answer(c, &a);
    }
    if (up->len > 0) {
        json_error_t jerr;
        body = json_loadb(up->buf, up->len, 0, &jerr);
        if (!body) {
            answer_status(&a, 400, "BadRequest", NULL, NULL, "the body is not JSON: %s", jerr.text);
            return send_answer(c, &a);
        }
    }
    pthread_mutex_lock(&S.mu);
    if (strncmp(url, "/_control/", 10) == 0) {
        do_control(url + 10, method, body, &a);
    } else {
        S.requests++;
        route_request(c, url, method, body, &a, &stream);
    }
    pthread_mutex_unlock(&S.mu);
    json_decref(body);
    if (stream) {
        enum MHD_Result ret = MHD_queue_response(c, 200, stream);
        MHD_destroy_response(stream);
        return ret;
    }
    return send_answer(c, &a);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    struct upload *up = *con_cls;
    if (up) {
        free(up->buf);
        free(up);
    }
    *con_cls = NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: apidouble [--port N] [--bookmark-ms MS]\n"
                    "  serves on 127.0.0.1 (port 0: any free port); prints \"port N\" once "
                    "listening; SIGTERM stops it\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long port = 0;
    S.bookmark_ms = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atol(argv[++i]);
        else if (strcmp(argv[i], "--bookmark-ms") == 0 && i + 1 < argc)
            S.bookmark_ms = atol(argv[++i]);
        else
            usage();
    }
    if (port < 0 || port > 65535)
        usage();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* the server's threads inherit the mask */
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, on_request,
        NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, on_done,
        NULL, MHD_OPTION_CONNECTION_TIMEOUT, 0u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "apidouble: cannot listen on 127.0.0.1:%ld: %s\n", port, strerror(errno));
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", info ? (unsigned)info->port : (unsigned)port);
    fflush(stdout);
    int sig;
    sigwait(&set, &sig);
    pthread_mutex_lock(&S.mu);
    S.stopping = 1;
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
    MHD_stop_daemon(d);
    return 0;
}
