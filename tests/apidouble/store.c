/* store.c - the double's objects under one resourceVersion counter (every
 * write is an event at a new version, kept for watches to replay), the
 * server's normalisations (quantities as strings), RFC 7386 merge patch,
 * Status answers as the recorded v1.28 server words them, and routes
 * (/api/v1/..., /apis/G/V/...). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apidouble.h"

/* --- helpers ----------------------------------------------------------- */

void now_rfc3339(char *buf, size_t n)
{
    /* made once a second (the lock held: one caller at a time) */
    static time_t last = -1;
    static char text[32];
    time_t t = time(NULL);
    if (t != last) {
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
        last = t;
    }
    /* as snprintf(buf, n, "%s", text) would cut it, with no printf a write */
    size_t len = strlen(text);
    if (n == 0)
        return;
    if (len >= n)
        len = n - 1;
    memcpy(buf, text, len);
    buf[len] = '\0';
}

static size_t key_hash(const char *res, const char *ns, const char *name)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a over the three, separated */
    const char *parts[3] = {res, ns, name};
    for (int i = 0; i < 3; i++) {
        for (const char *c = parts[i]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211u;
        h = (h ^ 0xff) * 1099511628211u;
    }
    return (size_t)h;
}

struct object *find(const char *res, const char *ns, const char *name)
{
    if (!S.nbuckets)
        return NULL;
    for (struct object *o = S.table[key_hash(res, ns, name) & (S.nbuckets - 1)]; o; o = o->hnext)
        if (strcmp(o->name, name) == 0 && strcmp(o->ns, ns) == 0 && strcmp(o->res, res) == 0)
            return o;
    return NULL;
}

static void table_put(struct object *o)
{
    size_t b = key_hash(o->res, o->ns, o->name) & (S.nbuckets - 1);
    o->hnext = S.table[b];
    S.table[b] = o;
}

struct object *obj_new(const char *res, const char *ns, const char *name)
{
    struct object *o = calloc(1, sizeof *o);
    o->res = strdup(res);
    o->ns = strdup(ns);
    o->name = strdup(name);
    if (S.nobjs == S.capobjs) {
        S.capobjs = S.capobjs ? S.capobjs * 2 : 256;
        S.objs = realloc(S.objs, S.capobjs * sizeof *S.objs);
    }
    S.objs[S.nobjs++] = o;
    if (S.nobjs * 2 > S.nbuckets) { /* grow and rehash */
        free(S.table);
        S.nbuckets = S.nbuckets ? S.nbuckets * 4 : 1024;
        S.table = calloc(S.nbuckets, sizeof *S.table);
        for (size_t i = 0; i < S.nobjs; i++)
            table_put(S.objs[i]);
    } else {
        table_put(o);
    }
    return o;
}

const char *kind_of(const char *res)
{
    static const char *const table[][2] = {
        {"pods", "Pod"},
        {"nodes", "Node"},
        {"scheduling.k8s.io/priorityclasses", "PriorityClass"},
        {"scheduling.x-k8s.io/podgroups", "PodGroup"},
        {"scheduling.volcano.sh/podgroups", "PodGroup"},
        {"configmaps", "ConfigMap"},
        {"events", "Event"},
        {"events.k8s.io/events", "Event"},
        {"coordination.k8s.io/leases", "Lease"},
        {"policy/poddisruptionbudgets", "PodDisruptionBudget"},
        {"persistentvolumeclaims", "PersistentVolumeClaim"},
        {"persistentvolumes", "PersistentVolume"},
        {"storage.k8s.io/storageclasses", "StorageClass"},
        {"storage.k8s.io/csinodes", "CSINode"},
        {"namespaces", "Namespace"},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i][0], res) == 0)
            return table[i][1];
    return "Object";
}

void set_rv(json_t *obj, long rv)
{
    json_t *m = json_object_get(obj, "metadata");
    char b[24], *p = b + sizeof b; /* rv > 0: its digits, no printf */
    *--p = '\0';
    unsigned long u = rv > 0 ? (unsigned long)rv : 0;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    json_object_set_new_nocheck(m, "resourceVersion",
                                json_stringn_nocheck(p, (size_t)(b + sizeof b - 1 - p)));
}

/* Appends an event at a new resourceVersion; obj is stolen. */
void record(struct object *o, const char *type, json_t *obj)
{
    long rv = ++S.rv;
    set_rv(obj, rv);
    if (S.nevents == S.capevents) {
        S.capevents = S.capevents ? S.capevents * 2 : 1024;
        S.events = realloc(S.events, S.capevents * sizeof *S.events);
    }
    if (S.nevents >= EVENT_TEXTS) { /* the text of an event this old is made again if asked */
        struct event *old = &S.events[S.nevents - EVENT_TEXTS];
        text_unref(old->text);
        old->text = NULL;
    }
    /* what the version shares with the one before is copied from its text */
    struct text *text = text_make(obj, o->text);
    /* the version before passes to the event (no copy) */
    S.events[S.nevents++] =
        (struct event){rv, type, o, json_incref(obj), o->cur, text, o->last_event, 0, false};
    o->last_event = S.nevents;
    bool gone = strcmp(type, "DELETED") == 0;
    o->cur = gone ? NULL : json_incref(obj);
    text_unref(o->text);
    o->text = gone ? NULL : text_ref(text);
    json_decref(obj);
    park_wake_resource(o->res); /* the watches of this resource, no others */
}

void answer_recorded(struct answer *a, unsigned status)
{
    struct event *e = &S.events[S.nevents - 1];
    a->status = status;
    a->body = e->text ? strdup(e->text->b) : json_text(e->obj, NULL);
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

void normalize(json_t *obj)
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

/* RFC 7386 merge patch: a new value, target left as it is (copied on
 * write: what the patch leaves alone is shared with target). */
json_t *merge_patch(json_t *target, json_t *patch)
{
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    json_t *out = json_is_object(target) ? json_copy(target) : json_object();
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v)
    {
        if (json_is_null(v))
            json_object_del(out, k);
        else
            json_object_set_new(out, k, merge_patch(json_object_get(out, k), v));
    }
    return out;
}

/* --- answers ----------------------------------------------------------- */

void answer_json(struct answer *a, unsigned status, json_t *doc)
{
    a->status = status;
    a->body = json_text(doc, NULL);
    json_decref(doc);
}

void answer_object(struct answer *a, unsigned status, const struct object *o)
{
    a->status = status;
    a->body = o->text ? strdup(o->text->b) : json_text(o->cur, NULL);
}

void answer_status(struct answer *a, unsigned code, const char *reason, const char *name,
                   const char *kind, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* written by hand, the bytes json_pack and json_text made of
     * {kind, apiVersion, metadata, status, message, reason, code, details}
     * (no jansson tree to build and free for each answer) */
    struct jtext t = {0};
    const char head[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":";
    jt_raw(&t, head, sizeof head - 1);
    if (code < 300) {
        jt_raw(&t, "\"Success\"", 9);
    } else {
        jt_raw(&t, "\"Failure\",\"message\":", 20);
        jt_string(&t, msg);
        jt_raw(&t, ",\"reason\":", 10);
        jt_string(&t, reason);
    }
    jt_raw(&t, ",\"code\":", 8);
    jt_int(&t, (long long)code);
    if (name && kind) {
        jt_raw(&t, ",\"details\":{\"name\":", 19);
        jt_string(&t, name);
        jt_raw(&t, ",\"kind\":", 8);
        jt_string(&t, kind);
        jt_raw(&t, "}", 1);
    }
    jt_raw(&t, "}", 1);
    a->status = code;
    a->body = jt_end(&t, NULL);
}

/* --- routes ------------------------------------------------------------ */

/* src into dst[0, n) cut as snprintf(dst, n, "%s", src) cuts it, with no printf */
static void copy_cut(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n)
        len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* /api/v1/[namespaces/NS/]RES[/NAME[/SUB]] and /apis/G/V/... */
bool parse_route(const char *url, struct route *r)
{
    r->res[0] = r->ns[0] = r->name[0] = r->sub[0] = r->api_version[0] = '\0';
    r->namespaced = r->item = false;
    char buf[1024];
    copy_cut(buf, sizeof buf, url);
    char *seg[12];
    size_t n = 0;
    for (char *save, *t = strtok_r(buf, "/", &save); t && n < 12; t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    size_t i;
    const char *group = "";
    if (n >= 2 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
        memcpy(r->api_version, "v1", 3);
        i = 2;
    } else if (n >= 3 && strcmp(seg[0], "apis") == 0) {
        snprintf(r->api_version, sizeof r->api_version, "%s/%s", seg[1], seg[2]);
        group = seg[1];
        if (strlen(group) > 95) /* as the 96 bytes it was copied into cut it */
            seg[1][95] = '\0';
        i = 3;
    } else {
        return false;
    }
    if (n - i >= 3 && strcmp(seg[i], "namespaces") == 0) {
        copy_cut(r->ns, sizeof r->ns, seg[i + 1]);
        r->namespaced = true;
        i += 2;
    }
    if (i >= n)
        return false;
    if (group[0])
        snprintf(r->res, sizeof r->res, "%s/%s", group, seg[i]);
    else
        copy_cut(r->res, sizeof r->res, seg[i]);
    if (i + 1 < n) {
        r->item = true;
        copy_cut(r->name, sizeof r->name, seg[i + 1]);
    }
    if (i + 2 < n)
        copy_cut(r->sub, sizeof r->sub, seg[i + 2]);
    return i + 3 >= n;
}

const char *plural_kind(const struct route *r)
{
    const char *slash = strchr(r->res, '/');
    return slash ? slash + 1 : r->res;
}

/* "pods" or "leases.coordination.k8s.io", as the server names a resource */
void qualified(const struct route *r, char *b, size_t n)
{
    const char *slash = strchr(r->res, '/');
    if (slash)
        snprintf(b, n, "%s.%.*s", slash + 1, (int)(slash - r->res), r->res);
    else
        snprintf(b, n, "%s", r->res);
}
