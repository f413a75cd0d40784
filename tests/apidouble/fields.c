/* fields.c - field selectors on lists and watches (`fieldSelector=`), as
 * kube-apiserver v1.28 reads and applies them: terms split at unescaped
 * commas, each `FIELD=VALUE`, `FIELD==VALUE` or `FIELD!=VALUE`, values
 * unescaped (`\\`, `\,`, `\=`), all terms must hold
 * (k8s.io/apimachinery/pkg/fields/selector.go); the fields each kind
 * offers are those of its field label conversion
 * (pkg/apis/core/v1/conversion.go: Pod, Node, Event; every other kind
 * metadata.name and, when namespaced, metadata.namespace, as
 * runtime.DefaultMetaV1FieldSelectorConversion), with the values its
 * registry's ToSelectableFields gives (pkg/registry/core/pod/strategy.go:
 * a pod's spec.schedulerName is "default-scheduler" and spec.restartPolicy
 * "Always" when unset, as the server's defaulting stores them,
 * spec.hostNetwork "true" or "false", status.podIP the first of
 * status.podIPs; a node's spec.unschedulable "true" or "false"). Anything
 * else is a 400 BadRequest with the server's words ("field label not
 * supported: F"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidouble.h"

struct field {
    const char *label;
    const char *path[3]; /* where it is in the object, from the top */
    const char *dflt;    /* its value when absent */
    bool boolean;        /* "true"/"false" from a JSON boolean */
};

static const struct field POD[] = {
    {"metadata.name", {"metadata", "name"}, "", false},
    {"metadata.namespace", {"metadata", "namespace"}, "", false},
    {"spec.nodeName", {"spec", "nodeName"}, "", false},
    {"spec.restartPolicy", {"spec", "restartPolicy"}, "Always", false},
    {"spec.schedulerName", {"spec", "schedulerName"}, "default-scheduler", false},
    {"spec.serviceAccountName", {"spec", "serviceAccountName"}, "", false},
    {"spec.hostNetwork", {"spec", "hostNetwork"}, "false", true},
    {"status.phase", {"status", "phase"}, "", false},
    {"status.podIP", {"status", "podIP"}, "", false},
    {"status.nominatedNodeName", {"status", "nominatedNodeName"}, "", false},
    {NULL, {NULL}, NULL, false},
};
static const struct field NODE[] = {
    {"metadata.name", {"metadata", "name"}, "", false},
    {"spec.unschedulable", {"spec", "unschedulable"}, "false", true},
    {NULL, {NULL}, NULL, false},
};
static const struct field EVENT[] = {
    {"involvedObject.kind", {"involvedObject", "kind"}, "", false},
    {"involvedObject.namespace", {"involvedObject", "namespace"}, "", false},
    {"involvedObject.name", {"involvedObject", "name"}, "", false},
    {"involvedObject.uid", {"involvedObject", "uid"}, "", false},
    {"involvedObject.apiVersion", {"involvedObject", "apiVersion"}, "", false},
    {"involvedObject.resourceVersion", {"involvedObject", "resourceVersion"}, "", false},
    {"involvedObject.fieldPath", {"involvedObject", "fieldPath"}, "", false},
    {"reason", {"reason"}, "", false},
    {"reportingComponent", {"reportingComponent"}, "", false},
    {"source", {"source", "component"}, "", false},
    {"type", {"type"}, "", false},
    {"metadata.namespace", {"metadata", "namespace"}, "", false},
    {"metadata.name", {"metadata", "name"}, "", false},
    {NULL, {NULL}, NULL, false},
};
static const struct field META_NS[] = {
    {"metadata.name", {"metadata", "name"}, "", false},
    {"metadata.namespace", {"metadata", "namespace"}, "", false},
    {NULL, {NULL}, NULL, false},
};

static const struct field *fields_of(const char *res)
{
    if (strcmp(res, "pods") == 0)
        return POD;
    if (strcmp(res, "nodes") == 0)
        return NODE;
    if (strcmp(res, "events") == 0)
        return EVENT;
    return NULL; /* metadata only */
}

/* The field named label for res (NULL: not one it offers); *err the
 * server's words when it is not. */
static const struct field *field_find(const char *res, const char *label, char *err, size_t n)
{
    const struct field *t = fields_of(res);
    if (t) {
        for (; t->label; t++)
            if (strcmp(t->label, label) == 0)
                return t;
        snprintf(err, n, "field label not supported: %s", label);
        return NULL;
    }
    for (t = META_NS; t->label; t++)
        if (strcmp(t->label, label) == 0)
            return t;
    snprintf(err, n,
             "\"%s\" is not a known field selector: only \"metadata.name\", "
             "\"metadata.namespace\"",
             label);
    return NULL;
}

/* The terms of sel split at unescaped commas, in place (splitTerms). */
static size_t split_terms(char *sel, char **terms, size_t max)
{
    size_t n = 0;
    char *start = sel;
    bool slash = false;
    for (char *c = sel;; c++) {
        if (slash) {
            slash = false;
            if (*c)
                continue;
        }
        if (*c == '\\') {
            slash = true;
        } else if (*c == ',' || !*c) {
            bool end = !*c;
            *c = '\0';
            if (n < max)
                terms[n++] = start;
            start = c + 1;
            if (end)
                break;
        }
    }
    return n;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* value unescaped into out (UnescapeValue); false with err when it cannot be. */
static bool unescape(const char *v, char *out, size_t n, char *err, size_t en)
{
    size_t k = 0;
    for (; *v; v++) {
        char c = *v;
        if (c == '\\') {
            if (v[1] != '\\' && v[1] != ',' && v[1] != '=') {
                snprintf(err, en, "invalid field selector: invalid escape sequence: \\%.1s", v + 1);
                return false;
            }
            c = *++v;
        } else if (c == ',' || c == '=') { /* Go's %v of the rune: its number */
            snprintf(err, en, "invalid field selector: unescaped character in value: %d", c);
            return false;
        }
        if (k + 1 >= n) {
            snprintf(err, en, "invalid field selector: value too long");
            return false;
        }
        out[k++] = c;
    }
    out[k] = '\0';
    return true;
}

bool fsel_parse(const char *sel, const char *res, struct fsel *fs, struct answer *a)
{
    memset(fs, 0, sizeof *fs);
    if (!sel || !sel[0])
        return true;
    char *buf = strdup(sel), *terms[FSEL_MAX + 1];
    char err[600] = "";
    size_t n = split_terms(buf, terms, FSEL_MAX + 1);
    qsort(terms, n, sizeof *terms, by_text); /* as parseSelector: the first error in that order */
    for (size_t i = 0; i < n && !err[0]; i++) {
        char *t = terms[i], *op = NULL;
        size_t oplen = 0;
        if (!t[0])
            continue;
        for (char *c = t; *c && !op; c++) { /* the first operator: "!=", "==", then "=" */
            if (c[0] == '!' && c[1] == '=')
                op = c, oplen = 2;
            else if (c[0] == '=')
                op = c, oplen = c[1] == '=' ? 2 : 1;
        }
        if (!op) {
            snprintf(err, sizeof err, "invalid selector: '%.200s'; can't understand '%.200s'", sel,
                     t);
            break;
        }
        if (fs->n == FSEL_MAX) {
            snprintf(err, sizeof err, "invalid field selector: more than %d terms", FSEL_MAX);
            break;
        }
        struct fsel_term *ft = &fs->t[fs->n];
        ft->neq = op[0] == '!';
        *op = '\0';
        if (!unescape(op + oplen, ft->value, sizeof ft->value, err, sizeof err))
            break;
        snprintf(ft->label, sizeof ft->label, "%s", t);
        fs->n++;
    }
    /* then each label as the kind's conversion takes it (Transform) */
    for (size_t i = 0; i < fs->n && !err[0]; i++)
        fs->t[i].field = field_find(res, fs->t[i].label, err, sizeof err);
    free(buf);
    if (err[0]) {
        answer_status(a, 400, "BadRequest", NULL, NULL, "%s", err);
        return false;
    }
    return true;
}

/* obj's value of the field f ("" or its default when absent: the table's
 * own constant, no copy made). */
static const char *field_value(const struct field *f, json_t *obj)
{
    json_t *v = obj;
    for (size_t i = 0; i < 3 && f->path[i] && v; i++)
        v = json_object_get(v, f->path[i]);
    if (f->boolean && json_is_boolean(v))
        return json_is_true(v) ? "true" : "false";
    if (strcmp(f->label, "status.podIP") == 0 && !json_is_string(v)) { /* the first of podIPs */
        json_t *ip = json_object_get(
            json_array_get(json_object_get(json_object_get(obj, "status"), "podIPs"), 0), "ip");
        v = ip;
    }
    const char *s = json_string_value(v);
    if (s && s[0])
        return s;
    return f->dflt;
}

bool fsel_match(const struct fsel *fs, json_t *obj)
{
    if (!obj)
        return false;
    for (size_t i = 0; i < fs->n; i++) {
        const struct field *f = fs->t[i].field;
        bool eq = strcmp(field_value(f, obj), fs->t[i].value) == 0;
        if (eq == fs->t[i].neq)
            return false;
    }
    return true;
}
