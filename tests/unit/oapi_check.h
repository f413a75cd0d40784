/* oapi_check.h - for unit tests: a JSON value checked against a schema of
 * an OpenAPI v3 document's components (the Kubernetes documents in
 * ../shared/k8s/schemas), strictly: the parts of OpenAPI 3.0 those
 * documents use - $ref to #/components/schemas/NAME, allOf, oneOf, anyOf,
 * type (object, array, string, integer, number, boolean), properties,
 * additionalProperties, items, required, enum, and Kubernetes'
 * x-kubernetes-int-or-string and x-kubernetes-preserve-unknown-fields.
 * Strict as the API server's fieldValidation=Strict is: a field an object
 * schema does not define is an error (the documents have no
 * additionalProperties: false; schemas/README.md), and so is null where
 * the schema does not say nullable (an object gpuplane writes has no
 * null).
 *
 *     char err[256];
 *     if (!oapi_check(schemas, "io.k8s.api.core.v1.ConfigMap", obj, err, sizeof err))
 *         fail_msg("%s", err);   // "data.x: expected string, got integer"
 */
#ifndef GP_TESTS_OAPI_CHECK_H
#define GP_TESTS_OAPI_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static bool oapi_value(const json_t *schemas, const json_t *s, json_t *v, char *path, size_t plen,
                       char *err, size_t n);

static const char *oapi_type_of(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

static bool oapi_fail(char *err, size_t n, const char *path, const char *what)
{
    snprintf(err, n, "%s: %s", *path ? path : "(root)", what);
    return false;
}

/* Appends ".key" or "[i]" to path for a nested check, restored after. */
static bool oapi_nested(const json_t *schemas, const json_t *s, json_t *v, char *path, size_t plen,
                        const char *key, size_t idx, char *err, size_t n)
{
    size_t len = strlen(path);
    if (key)
        snprintf(path + len, plen - len, "%s%s", len ? "." : "", key);
    else
        snprintf(path + len, plen - len, "[%zu]", idx);
    bool ok = oapi_value(schemas, s, v, path, plen, err, n);
    path[len] = '\0';
    return ok;
}

static bool oapi_type_ok(const char *type, json_t *v)
{
    if (strcmp(type, "object") == 0)
        return json_is_object(v);
    if (strcmp(type, "array") == 0)
        return json_is_array(v);
    if (strcmp(type, "string") == 0)
        return json_is_string(v);
    if (strcmp(type, "integer") == 0)
        return json_is_integer(v);
    if (strcmp(type, "number") == 0)
        return json_is_number(v);
    if (strcmp(type, "boolean") == 0)
        return json_is_boolean(v);
    return false;
}

static bool oapi_object(const json_t *schemas, const json_t *s, json_t *v, char *path, size_t plen,
                        char *err, size_t n)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *extra = json_object_get(s, "additionalProperties");
    bool free_form = !props && !extra;
    if (json_is_true(json_object_get(s, "x-kubernetes-preserve-unknown-fields")) || free_form)
        return true;
    const char *key;
    json_t *val;
    char what[300];
    json_object_foreach(v, key, val)
    {
        const json_t *ps = props ? json_object_get(props, key) : NULL;
        if (!ps && json_is_object(extra))
            ps = extra;
        if (!ps) {
            snprintf(what, sizeof what, "unknown field \"%s\"", key);
            return oapi_fail(err, n, path, what);
        }
        if (!oapi_nested(schemas, ps, val, path, plen, key, 0, err, n))
            return false;
    }
    const json_t *req = json_object_get(s, "required");
    size_t i;
    const json_t *r;
    json_array_foreach(req, i, r)
    {
        if (!json_object_get(v, json_string_value(r))) {
            snprintf(what, sizeof what, "required field \"%s\" missing", json_string_value(r));
            return oapi_fail(err, n, path, what);
        }
    }
    return true;
}

static bool oapi_value(const json_t *schemas, const json_t *s, json_t *v, char *path, size_t plen,
                       char *err, size_t n)
{
    const json_t *ref = json_object_get(s, "$ref");
    if (ref) {
        const char *name = json_string_value(ref);
        const char *prefix = "#/components/schemas/";
        const json_t *t = NULL;
        if (name && strncmp(name, prefix, strlen(prefix)) == 0)
            t = json_object_get(schemas, name + strlen(prefix));
        if (!t)
            return oapi_fail(err, n, path, "a $ref the document does not define");
        if (!oapi_value(schemas, t, v, path, plen, err, n))
            return false;
    }
    size_t i;
    const json_t *sub;
    json_array_foreach(json_object_get(s, "allOf"), i, sub)
    {
        if (!oapi_value(schemas, sub, v, path, plen, err, n))
            return false;
    }
    const char *alts[] = {"oneOf", "anyOf"};
    for (int a = 0; a < 2; a++) {
        const json_t *list = json_object_get(s, alts[a]);
        if (!list)
            continue;
        bool any = false;
        char e2[256];
        json_array_foreach(list, i, sub)
        {
            if (!any && oapi_value(schemas, sub, v, path, plen, e2, sizeof e2))
                any = true;
        }
        if (!any)
            return oapi_fail(err, n, path, "matches none of its alternatives");
    }
    if (json_is_null(v)) {
        if (json_is_true(json_object_get(s, "nullable")))
            return true;
        return oapi_fail(err, n, path, "null");
    }
    char what[300];
    if (json_is_true(json_object_get(s, "x-kubernetes-int-or-string"))) {
        if (!json_is_integer(v) && !json_is_string(v)) {
            snprintf(what, sizeof what, "expected an integer or a string, got %s", oapi_type_of(v));
            return oapi_fail(err, n, path, what);
        }
        return true;
    }
    const char *type = json_string_value(json_object_get(s, "type"));
    if (!type && (json_object_get(s, "properties") || json_object_get(s, "additionalProperties")))
        type = "object";
    if (type && !oapi_type_ok(type, v)) {
        snprintf(what, sizeof what, "expected %s, got %s", type, oapi_type_of(v));
        return oapi_fail(err, n, path, what);
    }
    const json_t *en = json_object_get(s, "enum");
    if (en) {
        bool found = false;
        const json_t *e;
        json_array_foreach(en, i, e)
        {
            found |= json_equal(e, v) != 0;
        }
        if (!found)
            return oapi_fail(err, n, path, "not one of the enum's values");
    }
    if (json_is_object(v) && type && strcmp(type, "object") == 0)
        return oapi_object(schemas, s, v, path, plen, err, n);
    if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        json_t *item;
        json_array_foreach(v, i, item)
        {
            if (items && !oapi_nested(schemas, items, item, path, plen, NULL, i, err, n))
                return false;
        }
    }
    return true;
}

/* v against components.schemas[name]; false with the first error in err. */
static inline bool oapi_check(const json_t *schemas, const char *name, json_t *v, char *err,
                              size_t n)
{
    const json_t *s = json_object_get(schemas, name);
    char path[512] = "";
    if (!s) {
        snprintf(err, n, "no schema %s", name);
        return false;
    }
    return oapi_value(schemas, s, v, path, sizeof path, err, n);
}

#endif
