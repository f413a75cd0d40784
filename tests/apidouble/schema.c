/* schema.c - every object written to the double checked against the
 * published OpenAPI v3 schemas (../shared/k8s/schemas/, Kubernetes v1.35:
 * core v1, coordination.k8s.io/v1, events.k8s.io/v1), as
 * ../shared/notes/k8s-api-wire.md section 2 says the check must go: types,
 * required fields, enums, RFC 3339 for date-time strings, unknown fields
 * refused (what fieldValidation=Strict answers), null taken as absent; a
 * patch is checked as the object it makes. And events.k8s.io/v1's own
 * rules beyond the schema (pkg/apis/core/validation/events.go, as the
 * note paraphrases it). Without --schemas nothing is checked. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidouble.h"

static json_t *schemas; /* name -> schema, all files merged */

bool schema_load(const char *dir)
{
    static const char *const files[] = {"api__v1_openapi.json",
                                        "apis__coordination.k8s.io__v1_openapi.json",
                                        "apis__events.k8s.io__v1_openapi.json"};
    schemas = json_object();
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        json_t *doc = json_load_file(path, 0, NULL);
        json_t *s = json_object_get(json_object_get(doc, "components"), "schemas");
        if (!json_is_object(s)) {
            fprintf(stderr, "apidouble: %s: no components.schemas\n", path);
            json_decref(doc);
            return false;
        }
        json_object_update(schemas, s);
        json_decref(doc);
    }
    return true;
}

bool schema_enabled(void)
{
    return schemas != NULL;
}

static bool rfc3339(const char *s)
{
    /* YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM) */
    static const char pat[] = "dddd-dd-ddTdd:dd:dd";
    for (size_t i = 0; pat[i]; i++)
        if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
            return false;
    s += sizeof pat - 1;
    if (*s == '.') {
        s++;
        if (!isdigit((unsigned char)*s))
            return false;
        while (isdigit((unsigned char)*s))
            s++;
    }
    if (*s == 'Z')
        return s[1] == '\0';
    return (*s == '+' || *s == '-') && isdigit((unsigned char)s[1]) &&
           isdigit((unsigned char)s[2]) && s[3] == ':' && isdigit((unsigned char)s[4]) &&
           isdigit((unsigned char)s[5]) && s[6] == '\0';
}

static json_t *resolve(json_t *sc)
{
    for (int depth = 0; depth < 8 && sc; depth++) {
        const char *ref = json_string_value(json_object_get(sc, "$ref"));
        json_t *all = json_object_get(sc, "allOf");
        if (ref && strncmp(ref, "#/components/schemas/", 21) == 0)
            sc = json_object_get(schemas, ref + 21);
        else if (json_array_size(all) == 1 && !json_object_get(sc, "type") &&
                 !json_object_get(sc, "properties"))
            sc = json_array_get(all, 0);
        else
            break;
    }
    return sc;
}

static bool fail(char *err, size_t n, const char *path, const char *what)
{
    snprintf(err, n, "%s: %s", path[0] ? path : "(root)", what);
    return false;
}

static bool check(json_t *sc, json_t *v, char *path, size_t plen, char *err, size_t n);

static bool check_object(json_t *sc, json_t *v, char *path, size_t plen, char *err, size_t n)
{
    json_t *props = json_object_get(sc, "properties"),
           *addl = json_object_get(sc, "additionalProperties");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(sc, "required"), i, r)
    {
        json_t *x = json_object_get(v, json_string_value(r));
        if (!x || json_is_null(x)) {
            char what[160];
            snprintf(what, sizeof what, "Required value: %s", json_string_value(r));
            return fail(err, n, path, what);
        }
    }
    const char *k;
    json_t *x;
    size_t base = strlen(path);
    json_object_foreach(v, k, x)
    {
        snprintf(path + base, plen - base, "%s%s", base ? "." : "", k);
        json_t *ps = json_object_get(props, k);
        bool ok = true;
        if (ps)
            ok = check(ps, x, path, plen, err, n);
        else if (json_is_object(addl))
            ok = check(addl, x, path, plen, err, n);
        else if (props && !json_is_true(addl))
            ok = fail(err, n, path, "unknown field");
        path[base] = '\0';
        if (!ok)
            return false;
    }
    return true;
}

static bool check(json_t *sc, json_t *v, char *path, size_t plen, char *err, size_t n)
{
    sc = resolve(sc);
    if (!sc || json_is_null(v)) /* null: absent (a real server sends null Times) */
        return true;
    json_t *one = json_object_get(sc, "oneOf");
    if (json_array_size(one)) {
        size_t i;
        json_t *alt;
        json_array_foreach(one, i, alt) if (check(alt, v, path, plen, err, n)) return true;
        return false;
    }
    if (json_is_true(json_object_get(sc, "x-kubernetes-int-or-string")))
        return json_is_integer(v) || json_is_string(v)
                   ? true
                   : fail(err, n, path, "expected int or string");
    const char *type = json_string_value(json_object_get(sc, "type"));
    if (!type)
        return json_is_object(v) && json_object_get(sc, "properties")
                   ? check_object(sc, v, path, plen, err, n)
                   : true;
    if (strcmp(type, "string") == 0) {
        if (!json_is_string(v))
            return fail(err, n, path, "expected a string");
        const char *fmt = json_string_value(json_object_get(sc, "format"));
        if (fmt && strcmp(fmt, "date-time") == 0 && !rfc3339(json_string_value(v)))
            return fail(err, n, path, "not an RFC 3339 date-time");
        json_t *en = json_object_get(sc, "enum");
        if (json_array_size(en)) {
            size_t i;
            json_t *e;
            json_array_foreach(en, i, e) if (json_equal(e, v)) return true;
            return fail(err, n, path, "Unsupported value");
        }
        return true;
    }
    if (strcmp(type, "integer") == 0)
        return json_is_integer(v) ? true : fail(err, n, path, "expected an integer");
    if (strcmp(type, "number") == 0)
        return json_is_number(v) ? true : fail(err, n, path, "expected a number");
    if (strcmp(type, "boolean") == 0)
        return json_is_boolean(v) ? true : fail(err, n, path, "expected a boolean");
    if (strcmp(type, "array") == 0) {
        if (!json_is_array(v))
            return fail(err, n, path, "expected an array");
        size_t i, base = strlen(path);
        json_t *x;
        json_array_foreach(v, i, x)
        {
            snprintf(path + base, plen - base, "[%zu]", i);
            bool ok = check(json_object_get(sc, "items"), x, path, plen, err, n);
            path[base] = '\0';
            if (!ok)
                return false;
        }
        return true;
    }
    if (strcmp(type, "object") == 0)
        return json_is_object(v) ? check_object(sc, v, path, plen, err, n)
                                 : fail(err, n, path, "expected an object");
    return true;
}

/* A qualified name (k8s IsQualifiedName): [prefix/]name, name at most 63
 * characters of [A-Za-z0-9._-] starting and ending alphanumeric. */
static bool qualified_name(const char *s)
{
    const char *slash = strrchr(s, '/'), *name = slash ? slash + 1 : s;
    size_t len = strlen(name);
    if (len == 0 || len > 63 || !isalnum((unsigned char)name[0]) ||
        !isalnum((unsigned char)name[len - 1]))
        return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
            return false;
    return !slash || slash > s;
}

static bool dns_subdomain(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > 253 || !isalnum((unsigned char)s[0]) ||
        !isalnum((unsigned char)s[len - 1]))
        return false;
    for (const char *c = s; *c; c++)
        if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-' || *c == '.'))
            return false;
    return true;
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* events.k8s.io/v1 Event create rules (the note's section 4). */
static bool event_rules(json_t *ev, const char *ns, char *err, size_t n)
{
    const char *name = str(json_object_get(ev, "metadata"), "name");
    const char *type = str(ev, "type"), *rc = str(ev, "reportingController");
    const char *ri = str(ev, "reportingInstance"), *action = str(ev, "action");
    const char *reason = str(ev, "reason"), *note = str(ev, "note");
    if (!name || !dns_subdomain(name))
        return fail(err, n, "metadata.name", "a lowercase RFC 1123 subdomain is required");
    if (!str(ev, "eventTime"))
        return fail(err, n, "eventTime", "Required value");
    if (!type || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0))
        return fail(err, n, "type", "Unsupported value: must be Normal or Warning");
    if (!rc || !qualified_name(rc))
        return fail(err, n, "reportingController", "a qualified name is required");
    if (!ri || !ri[0] || strlen(ri) > 128)
        return fail(err, n, "reportingInstance", "Required value, at most 128 characters");
    if (!action || !action[0] || strlen(action) > 128)
        return fail(err, n, "action", "Required value, at most 128 characters");
    if (!reason || !reason[0] || strlen(reason) > 128)
        return fail(err, n, "reason", "Required value, at most 128 characters");
    if (note && strlen(note) > 1024)
        return fail(err, n, "note", "Too long: at most 1024 bytes");
    static const char *const unset[] = {"deprecatedFirstTimestamp", "deprecatedLastTimestamp",
                                        "deprecatedCount", "deprecatedSource"};
    for (size_t i = 0; i < 4; i++)
        if (json_object_get(ev, unset[i]))
            return fail(err, n, unset[i], "Invalid value: needs to be unset");
    const char *rns = str(json_object_get(ev, "regarding"), "namespace");
    if ((!rns || !rns[0]) && strcmp(ns, "default") != 0 && strcmp(ns, "kube-system") != 0)
        return fail(err, n, "metadata.namespace",
                    "an Event about a cluster-scoped object goes in default or kube-system");
    return true;
}

static const char *schema_of(const char *res, const char *sub)
{
    if (strcmp(sub, "binding") == 0)
        return "io.k8s.api.core.v1.Binding";
    static const char *const table[][2] = {
        {"pods", "io.k8s.api.core.v1.Pod"},
        {"nodes", "io.k8s.api.core.v1.Node"},
        {"events", "io.k8s.api.core.v1.Event"},
        {"configmaps", "io.k8s.api.core.v1.ConfigMap"},
        {"persistentvolumeclaims", "io.k8s.api.core.v1.PersistentVolumeClaim"},
        {"persistentvolumes", "io.k8s.api.core.v1.PersistentVolume"},
        {"namespaces", "io.k8s.api.core.v1.Namespace"},
        {"events.k8s.io/events", "io.k8s.api.events.v1.Event"},
        {"coordination.k8s.io/leases", "io.k8s.api.coordination.v1.Lease"},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i][0], res) == 0)
            return table[i][1];
    return NULL;
}

bool schema_check(const struct route *r, json_t *obj, char *err, size_t n)
{
    if (!schemas)
        return true;
    const char *name = schema_of(r->res, r->sub);
    json_t *sc = name ? json_object_get(schemas, name) : NULL;
    if (!sc)
        return true; /* a kind the files do not have (CRDs) */
    char path[512] = "";
    if (!check(sc, obj, path, sizeof path, err, n))
        return false;
    if (strcmp(r->res, "events.k8s.io/events") == 0 && !r->sub[0])
        return event_rules(obj, r->ns, err, n);
    return true;
}

/* A request's body that is no object of the route's resource (a DELETE's
 * DeleteOptions) checked against the named schema; true when it passes. */
bool schema_check_as(const char *schema, json_t *obj, char *err, size_t n)
{
    json_t *sc = schemas ? json_object_get(schemas, schema) : NULL;
    char path[512] = "";
    return !sc || check(sc, obj, path, sizeof path, err, n);
}

bool schema_refuse(const struct route *r, json_t *obj, const char *name, struct answer *a)
{
    char err[600];
    if (schema_check(r, obj, err, sizeof err))
        return false;
    S.schema_errors++;
    fprintf(stderr, "apidouble: schema: %s %s: %s\n", r->res, name ? name : "", err);
    answer_status(a, 422, "Invalid", name, plural_kind(r), "%s \"%s\" is invalid: %s",
                  strcmp(r->sub, "binding") == 0 ? "Binding" : kind_of(r->res), name ? name : "",
                  err);
    return true;
}
