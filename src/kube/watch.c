/* watch.c - watch streams cut into lines and lines parsed into events
 * (see watch.h). */
#include "kube/watch.h"

#include <stdlib.h>
#include <string.h>

void gp_kube_lines_init(struct gp_kube_lines *l, size_t max_line)
{
    l->buf = NULL;
    l->len = l->cap = 0;
    l->max = max_line ? max_line : GP_KUBE_LINE_MAX_DEFAULT;
}

void gp_kube_lines_free(struct gp_kube_lines *l)
{
    free(l->buf);
    l->buf = NULL;
    l->len = l->cap = 0;
}

static enum gp_err lines_append(struct gp_kube_lines *l, const char *p, size_t n,
                                struct gp_diag *diag)
{
    if (n > l->max - l->len) {
        l->len = 0;
        return gp_diag_set(diag, GP_ELIMIT, "watch: a line longer than %zu bytes", l->max);
    }
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + n + 1)
            cap *= 2;
        if (cap > l->max + 1)
            cap = l->max + 1;
        char *b = realloc(l->buf, cap);
        if (!b)
            return gp_diag_set(diag, GP_ENOMEM, "watch: out of memory");
        l->buf = b;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, p, n);
    l->len += n;
    l->buf[l->len] = '\0';
    return GP_OK;
}

enum gp_err gp_kube_lines_feed(struct gp_kube_lines *l, const char *data, size_t n,
                               gp_kube_line_fn fn, void *ctx, struct gp_diag *diag)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl ? (size_t)(nl - data) : n;
        enum gp_err err = lines_append(l, data, take, diag);
        if (err != GP_OK)
            return err;
        if (!nl)
            break;
        data += take + 1;
        n -= take + 1;
        size_t len = l->len;
        if (len > 0 && l->buf[len - 1] == '\r')
            l->buf[--len] = '\0';
        l->len = 0;
        if (len > 0 && fn(l->buf, len, ctx) != 0)
            return GP_ESTATE; /* fn's own diag, if any, stays */
    }
    return GP_OK;
}

const char *gp_kube_event_type_name(enum gp_kube_event_type t)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};
    return (unsigned)t < 5 ? names[t] : "?";
}

const char *gp_kube_meta(const json_t *obj, const char *field)
{
    json_t *m = json_object_get(obj, "metadata");
    json_t *v = json_object_get(m, field);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

void gp_kube_event_clear(struct gp_kube_event *ev)
{
    json_decref(ev->object);
    memset(ev, 0, sizeof *ev);
}

enum gp_err gp_kube_event_parse(const char *line, size_t len, struct gp_kube_event *ev,
                                struct gp_diag *diag)
{
    memset(ev, 0, sizeof *ev);
    json_error_t jerr;
    json_t *doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc)
        return gp_diag_set(diag, GP_EPARSE, "watch event: column %d: %s", jerr.column, jerr.text);
    json_t *type = json_object_get(doc, "type"), *obj = json_object_get(doc, "object");
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    enum gp_kube_event_type et;
    for (et = GP_KUBE_ADDED; et <= GP_KUBE_ERROR; et++)
        if (strcmp(t, gp_kube_event_type_name(et)) == 0)
            break;
    enum gp_err err = GP_OK;
    if (et > GP_KUBE_ERROR) {
        err = gp_diag_set(diag, GP_EINVALID,
                          "watch event: type: expected ADDED, MODIFIED, "
                          "DELETED, BOOKMARK or ERROR");
        goto fail;
    }
    if (!json_is_object(obj)) {
        err = gp_diag_set(diag, GP_EINVALID, "watch event: %s: object: expected an object", t);
        goto fail;
    }
    ev->type = et;
    ev->object = json_incref(obj);
    json_decref(doc); /* t pointed into it: the type's name is used from here */
    t = gp_kube_event_type_name(et);
    const char *ns = gp_kube_meta(obj, "namespace"), *name = gp_kube_meta(obj, "name");
    const char *rv = gp_kube_meta(obj, "resourceVersion");
    ev->ns = ns ? ns : "";
    ev->name = name ? name : "";
    ev->rv = rv ? rv : "";
    ev->message = "";
    if (et == GP_KUBE_ERROR) {
        json_t *code = json_object_get(obj, "code"), *msg = json_object_get(obj, "message");
        ev->code = json_is_integer(code) ? (long)json_integer_value(code) : 0;
        ev->message = json_is_string(msg) ? json_string_value(msg) : "";
        return GP_OK;
    }
    if (!ev->rv[0]) {
        gp_diag_set(diag, GP_EINVALID, "watch event: %s: object.metadata.resourceVersion: missing",
                    t);
        gp_kube_event_clear(ev);
        return GP_EINVALID;
    }
    if (et != GP_KUBE_BOOKMARK && !ev->name[0]) {
        gp_diag_set(diag, GP_EINVALID, "watch event: %s: object.metadata.name: missing", t);
        gp_kube_event_clear(ev);
        return GP_EINVALID;
    }
    return GP_OK;
fail:
    json_decref(doc);
    return err;
}
