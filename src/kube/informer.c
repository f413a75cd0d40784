/* informer.c - list then watch of one resource into a store, with the
 * re-list on 410 and the resume after a drop (see informer.h). */
#include "kube/informer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/jload.h"
#include "kube/watch.h"

/* The marks of each stored object read from a watch event (jload.h's
 * gp_kube_jreuse), by the object's address: open addressing with linear
 * probing, deleted by backward shift. An entry lives while the store holds
 * its object: an object replaced or deleted takes its entry with it. */
struct mark_ent {
    const json_t *obj;
    struct gp_kube_jmark *m;
    size_t n;
};
struct marks_tab {
    struct mark_ent *e;
    size_t cap, n; /* cap: 0 or a power of two */
};

static size_t tab_home(const struct marks_tab *t, const json_t *obj)
{
    uint64_t x = (uint64_t)(uintptr_t)obj * UINT64_C(0x9e3779b97f4a7c15);
    return (size_t)(x >> 32) & (t->cap - 1);
}

static struct mark_ent *tab_find(struct marks_tab *t, const json_t *obj)
{
    for (size_t i = t->cap ? tab_home(t, obj) : 0; t->cap && t->e[i].obj;
         i = (i + 1) & (t->cap - 1))
        if (t->e[i].obj == obj)
            return &t->e[i];
    return NULL;
}

static void tab_del(struct marks_tab *t, const json_t *obj)
{
    struct mark_ent *hit = tab_find(t, obj);
    if (!hit)
        return;
    size_t mask = t->cap - 1, i = (size_t)(hit - t->e);
    free(hit->m);
    hit->obj = NULL;
    t->n--;
    for (size_t j = (i + 1) & mask; t->e[j].obj; j = (j + 1) & mask) {
        size_t k = tab_home(t, t->e[j].obj); /* stays unless its home is outside (i, j] */
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        t->e[i] = t->e[j];
        t->e[j].obj = NULL;
        i = j;
    }
}

static void tab_insert(struct marks_tab *t, struct mark_ent ent)
{
    size_t i = tab_home(t, ent.obj);
    while (t->e[i].obj)
        i = (i + 1) & (t->cap - 1);
    t->e[i] = ent;
    t->n++;
}

/* obj's marks kept (none on no memory: its members are then read again). */
static void tab_put(struct marks_tab *t, const json_t *obj, const struct gp_kube_jmarks *mk)
{
    if (2 * (t->n + 1) > t->cap) {
        struct marks_tab g = {calloc(t->cap ? 2 * t->cap : 1024, sizeof *g.e),
                              t->cap ? 2 * t->cap : 1024, 0};
        if (!g.e)
            return;
        for (size_t i = 0; i < t->cap; i++)
            if (t->e[i].obj)
                tab_insert(&g, t->e[i]);
        free(t->e);
        *t = g;
    }
    struct mark_ent ent = {obj, malloc(mk->n * sizeof *mk->m), mk->n};
    if (!ent.m)
        return;
    memcpy(ent.m, mk->m, mk->n * sizeof *mk->m);
    tab_insert(t, ent);
}

static void tab_free(struct marks_tab *t)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->e[i].obj)
            free(t->e[i].m);
    free(t->e);
}

struct gp_kube_informer {
    struct gp_kube_client *c;
    char *path;
    unsigned limit;
    gp_kube_change_fn fn;
    void *ctx;
    json_t *store; /* "ns/name" -> object */
    char rv[64];
    struct gp_kube_informer_stats st;
    /* the watch in progress */
    bool stale, failed;
    double retry_after_s; /* the last watch's Retry-After on a 429/5xx; -1 none */
    struct gp_diag *diag;
    enum gp_err err;
    /* gp_kube_informer_skip: the object's members left out, as seen from a
     * watch event's document ({"object": ...}) and a list's ({"items":
     * [...]}); ev.nkids 0: none */
    struct gp_kube_jskip ev, ev_obj, list, list_items, list_each;
    /* a watch event's members taken from the version stored (jload.h) */
    struct gp_kube_jreuse ru;
    struct marks_tab marks;
};

void gp_kube_informer_skip(struct gp_kube_informer *inf, const struct gp_kube_jskip *sk)
{
    bool on = sk && sk->nkids > 0;
    inf->ev_obj = (struct gp_kube_jskip){"object", on ? sk->kids : NULL, on ? sk->nkids : 0};
    inf->ev = (struct gp_kube_jskip){NULL, &inf->ev_obj, on ? 1 : 0};
    inf->list_each = (struct gp_kube_jskip){"[]", on ? sk->kids : NULL, on ? sk->nkids : 0};
    inf->list_items = (struct gp_kube_jskip){"items", &inf->list_each, on ? 1 : 0};
    inf->list = (struct gp_kube_jskip){NULL, &inf->list_items, on ? 1 : 0};
}

static void key_of(const json_t *obj, char *key, size_t n)
{
    const json_t *meta = json_object_get(obj, "metadata");
    gp_kube_key_make(gp_kube_meta_of(meta, "namespace"), gp_kube_meta_of(meta, "name"), key, n);
}

static const char *rv_of(const json_t *obj)
{
    const char *rv = gp_kube_meta(obj, "resourceVersion");
    return rv ? rv : "";
}

/* gp_kube_jreuse's prev: the stored version of the object whose metadata
 * the event's parse has read, and its marks. */
static const json_t *prev_of(const json_t *meta, void *ctx, const struct gp_kube_jmark **marks,
                             size_t *nmarks)
{
    struct gp_kube_informer *inf = ctx;
    if (!inf->marks.n)
        return NULL;
    struct gp_kube_ids id;
    if (inf->ru.meta_read) /* the parse read them (jload.h) */
        id = (struct gp_kube_ids){inf->ru.meta_ns, inf->ru.meta_name, NULL, NULL};
    else
        gp_kube_meta_ids(meta, &id);
    if (!id.name)
        return NULL;
    char key[600];
    gp_kube_key_make(id.ns, id.name, key, sizeof key);
    const json_t *prev = json_object_get(inf->store, key);
    struct mark_ent *e = prev ? tab_find(&inf->marks, prev) : NULL;
    if (!e)
        return NULL;
    *marks = e->m;
    *nmarks = e->n;
    return prev;
}

enum gp_err gp_kube_informer_new(struct gp_kube_client *c, const char *path, unsigned page_limit,
                                 gp_kube_change_fn fn, void *ctx, struct gp_kube_informer **out,
                                 struct gp_diag *diag)
{
    struct gp_kube_informer *inf = calloc(1, sizeof *inf);
    if (inf) {
        inf->path = strdup(path);
        inf->store = json_object();
    }
    if (!inf || !inf->path || !inf->store) {
        gp_kube_informer_free(inf);
        return gp_diag_set(diag, GP_ENOMEM, "informer %s: out of memory", path);
    }
    inf->c = c;
    inf->retry_after_s = -1;
    inf->limit = page_limit ? page_limit : 500;
    inf->fn = fn;
    inf->ctx = ctx;
    inf->ru.at = "object";
    inf->ru.prev = prev_of;
    inf->ru.ctx = inf;
    *out = inf;
    return GP_OK;
}

void gp_kube_informer_free(struct gp_kube_informer *inf)
{
    if (!inf)
        return;
    json_decref(inf->store);
    tab_free(&inf->marks);
    free(inf->path);
    free(inf);
}

/* An object now at `obj` (ADDED or MODIFIED from the server's view): the
 * store takes it, with its marks (mk: a watch event's; NULL: a list's),
 * and the change is delivered unless it is the version the store already
 * holds. */
static void apply_upsert(struct gp_kube_informer *inf, json_t *obj, const char *key, const char *rv,
                         const struct gp_kube_jmarks *mk)
{
    json_t *old = json_object_get(inf->store, key);
    if (old && strcmp(rv_of(old), rv) == 0)
        return; /* seen: not twice */
    if (old)
        tab_del(&inf->marks, old);
    if (mk && mk->n)
        tab_put(&inf->marks, obj, mk);
    json_incref(old);
    json_object_set(inf->store, key, obj);
    inf->st.events++;
    inf->fn(old ? GP_KUBE_MODIFIED : GP_KUBE_ADDED, obj, old, inf->ctx);
    json_decref(old);
}

static void apply_delete(struct gp_kube_informer *inf, json_t *obj, const char *key)
{
    json_t *old = json_incref(json_object_get(inf->store, key));
    if (!old)
        return; /* never seen, or already gone */
    tab_del(&inf->marks, old);
    json_object_del(inf->store, key);
    inf->st.events++;
    inf->fn(GP_KUBE_DELETED, obj, old, inf->ctx);
    json_decref(old);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One page: its items appended to `order` and keyed in `fresh`; with
 * whole, the whole list in one answer (no limit, no continue). *status is
 * the answer's HTTP status (0 when none came). */
static enum gp_err list_page(struct gp_kube_informer *inf, const char *cont, bool whole,
                             json_t *fresh, json_t *order, char *next, size_t nnext, char *list_rv,
                             size_t nlist_rv, long *status, struct gp_diag *diag)
{
    char path[2048];
    const char *sep = strchr(inf->path, '?') ? "&" : "?";
    *status = 0;
    if (whole)
        snprintf(path, sizeof path, "%s", inf->path);
    else if (cont)
        snprintf(path, sizeof path, "%s%slimit=%u&continue=%s", inf->path, sep, inf->limit, cont);
    else
        snprintf(path, sizeof path, "%s%slimit=%u", inf->path, sep, inf->limit);
    struct gp_kube_response r;
    enum gp_err err = gp_kube_request(inf->c, "GET", path, NULL, NULL, &r, diag);
    if (err != GP_OK)
        return err;
    *status = r.status;
    err = gp_kube_status_err(r.status, r.body, "GET", path, diag);
    json_t *doc = err == GP_OK ? gp_kube_jload_skip(r.body, r.len, 0, NULL,
                                                    inf->list.nkids ? &inf->list : NULL)
                               : NULL;
    gp_kube_response_free(&r);
    if (err != GP_OK)
        return err;
    json_t *items = json_object_get(doc, "items"), *meta = json_object_get(doc, "metadata");
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if (!json_is_array(items) || !rv) {
        json_decref(doc);
        return gp_diag_set(diag, GP_EPARSE, "GET %s: not a list (items, metadata.resourceVersion)",
                           path);
    }
    snprintf(list_rv, nlist_rv, "%s", rv);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        char key[600];
        key_of(it, key, sizeof key);
        json_object_set(fresh, key, it);
        json_array_append(order, it);
    }
    const char *c = json_string_value(json_object_get(meta, "continue"));
    snprintf(next, nnext, "%s", c ? c : "");
    json_decref(doc);
    inf->st.pages++;
    return GP_OK;
}

enum gp_err gp_kube_informer_list(struct gp_kube_informer *inf, struct gp_diag *diag)
{
    json_t *fresh = json_object(), *order = json_array();
    char cont[1024] = "", list_rv[sizeof inf->rv] = "";
    enum gp_err err;
    bool first = true;
    /* The list's resourceVersion becomes the informer's only once the
     * whole list is applied, as client-go's reflector sets its
     * lastSyncResourceVersion after syncWith: a list that fails on a
     * later page leaves no RV, so the next watch lists again instead of
     * resuming from a list whose items were never applied (what was
     * created or deleted in the gap would be lost). */
    inf->rv[0] = '\0';
    long status = 0;
    do {
        err = list_page(inf, first ? NULL : cont, false, fresh, order, cont, sizeof cont, list_rv,
                        sizeof list_rv, &status, diag);
        if (!first && status == 410) {
            /* the list's snapshot compacted away between its pages (410
             * Expired on a continue token): the whole list again in one
             * answer, as client-go's pager falls back when a later page
             * expires (tools/pager/pager.go, ListPager.List with
             * FullListIfExpired, its default; v0.28) - a new paginated
             * list could expire again, page after page */
            json_object_clear(fresh);
            json_array_clear(order);
            inf->st.full_lists++;
            err = list_page(inf, NULL, true, fresh, order, cont, sizeof cont, list_rv,
                            sizeof list_rv, &status, diag);
            cont[0] = '\0';
        }
        first = false;
    } while (err == GP_OK && cont[0]);
    if (err == GP_OK) {
        inf->st.lists++;
        /* the diff: keys gone from the list are DELETED (in key order),
         * then the list's items upserted in its order */
        size_t n = 0, i;
        const char **gone = malloc((json_object_size(inf->store) + 1) * sizeof *gone);
        if (!gone) {
            json_decref(fresh);
            json_decref(order);
            return gp_diag_set(diag, GP_ENOMEM, "informer %s: out of memory", inf->path);
        }
        const char *k;
        json_t *v;
        json_object_foreach(inf->store, k, v)
        {
            if (!json_object_get(fresh, k))
                gone[n++] = k;
        }
        qsort(gone, n, sizeof *gone, by_key);
        json_t *dead = json_array();
        for (i = 0; i < n; i++)
            json_array_append(dead, json_object_get(inf->store, gone[i]));
        free(gone);
        char key[600];
        json_array_foreach(dead, i, v)
        {
            key_of(v, key, sizeof key);
            apply_delete(inf, v, key);
        }
        json_decref(dead);
        json_array_foreach(order, i, v)
        {
            key_of(v, key, sizeof key);
            apply_upsert(inf, v, key, rv_of(v), NULL);
        }
        snprintf(inf->rv, sizeof inf->rv, "%s", list_rv);
    }
    json_decref(fresh);
    json_decref(order);
    return err;
}

static int on_watch_line(const char *line, size_t len, void *ctx)
{
    struct gp_kube_informer *inf = ctx;
    struct gp_kube_event ev;
    inf->err = gp_kube_event_parse_reuse(line, len, inf->ev.nkids ? &inf->ev : NULL, &inf->ru, &ev,
                                         inf->diag);
    if (inf->err != GP_OK) {
        inf->failed = true;
        return 1;
    }
    int stop = 0;
    switch (ev.type) {
    case GP_KUBE_ADDED:
    case GP_KUBE_MODIFIED:
    case GP_KUBE_DELETED: {
        char key[600]; /* the event's own names (watch.c read them) */
        gp_kube_key_make(ev.ns, ev.name, key, sizeof key);
        if (ev.type == GP_KUBE_DELETED)
            apply_delete(inf, ev.object, key);
        else
            apply_upsert(inf, ev.object, key, ev.rv, &inf->ru.out);
        inf->st.reused += inf->ru.reused;
        break;
    }
    case GP_KUBE_BOOKMARK:
        inf->st.bookmarks++;
        break;
    case GP_KUBE_ERROR:
        if (ev.code == 410) {
            inf->stale = true;
        } else {
            inf->failed = true;
            inf->err = gp_diag_set(inf->diag, GP_EIO, "watch %s: ERROR %ld: %s", inf->path, ev.code,
                                   ev.message);
        }
        stop = 1;
        break;
    }
    if (!stop && ev.rv[0])
        gp_kube_str_copy(inf->rv, sizeof inf->rv, ev.rv);
    gp_kube_event_clear(&ev);
    return stop;
}

enum gp_err gp_kube_informer_watch(struct gp_kube_informer *inf, double timeout_s,
                                   struct gp_diag *diag)
{
    if (!inf->rv[0]) {
        enum gp_err err = gp_kube_informer_list(inf, diag);
        if (err != GP_OK)
            return err;
    }
    char path[2048];
    long secs = timeout_s >= 1 ? (long)timeout_s : 1;
    snprintf(path, sizeof path,
             "%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
             inf->path, strchr(inf->path, '?') ? "&" : "?", inf->rv, secs);
    inf->stale = inf->failed = false;
    inf->diag = diag;
    inf->err = GP_OK;
    inf->st.watches++;
    long status;
    char *body = NULL;
    enum gp_err err =
        gp_kube_stream(inf->c, path, (double)secs + 10, on_watch_line, inf, &status, &body, diag);
    if (inf->failed) {
        free(body);
        return inf->err;
    }
    if (err == GP_EIO)
        inf->st.drops++;
    inf->retry_after_s = -1;
    if (err == GP_OK && status == 410)
        inf->stale = true; /* a plain HTTP 410, as etcd answers */
    else if (err == GP_OK && (status == 429 || status >= 500)) {
        /* throttled (API Priority and Fairness) or failing: the same watch
         * again later, from the same resourceVersion - a re-list is what
         * costs the server most (gp_kube_informer_retry_after_s) */
        gp_kube_status_err(status, body, "GET", path, diag);
        inf->retry_after_s = gp_kube_client_stream_retry_after(inf->c);
        inf->st.watch_retries++;
        err = GP_EIO;
    } else if (err == GP_OK && status != 200)
        err = gp_kube_status_err(status, body, "GET", path, diag);
    free(body);
    if (err == GP_OK && inf->stale) {
        inf->st.relists_410++;
        return gp_kube_informer_list(inf, diag);
    }
    return err;
}

double gp_kube_informer_retry_after_s(const struct gp_kube_informer *inf)
{
    return inf->retry_after_s;
}

const char *gp_kube_informer_rv(const struct gp_kube_informer *inf)
{
    return inf->rv;
}

size_t gp_kube_informer_count(const struct gp_kube_informer *inf)
{
    return json_object_size(inf->store);
}

const json_t *gp_kube_informer_get(const struct gp_kube_informer *inf, const char *ns,
                                   const char *name)
{
    char key[600];
    gp_kube_key_make(ns, name, key, sizeof key);
    return json_object_get(inf->store, key);
}

struct gp_kube_informer_stats gp_kube_informer_stats(const struct gp_kube_informer *inf)
{
    return inf->st;
}
