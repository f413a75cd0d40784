/* cdi_validate.c - a CDI spec checked against the rules of the Container
 * Device Interface specification (cncf-tags/container-device-interface
 * SPEC.md and its JSON schema, schema/defs.json): required fields, the
 * syntax of kind and device names, and the shape of containerEdits. */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "node/cdi.h"

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A name of alphanumerics and extra characters, alphanumeric at both ends,
 * 1..max bytes. */
static bool name_ok(const char *s, const char *extra, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && !strchr(extra, s[i]))
            return false;
    return true;
}

/* kind "vendor/class": the vendor a DNS subdomain (labels of alphanumerics
 * and '-', separated by dots, 253 bytes at most), the class up to 63 bytes
 * of alphanumerics, '-', '_' and '.' (SPEC.md, "kind"). */
static bool kind_ok(const char *kind)
{
    const char *slash = strchr(kind, '/');
    if (!slash || strchr(slash + 1, '/') || slash == kind || (size_t)(slash - kind) > 253)
        return false;
    char vendor[254];
    memcpy(vendor, kind, (size_t)(slash - kind));
    vendor[slash - kind] = '\0';
    for (char *label = vendor, *dot; label; label = dot ? dot + 1 : NULL) {
        dot = strchr(label, '.');
        if (dot)
            *dot = '\0';
        if (!name_ok(label, "-", 63))
            return false;
    }
    return name_ok(slash + 1, "-_.", 63);
}

static const char *const versions[] = {"0.3.0", "0.4.0", "0.5.0", "0.6.0",
                                       "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
static const char *const hook_names[] = {"prestart",       "createRuntime", "createContainer",
                                         "startContainer", "poststart",     "poststop"};

static bool is_path_string(json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

/* The containerEdits at `where`; an edit-less one is refused when
 * need_edit (a device's). */
static enum gp_err edits_ok(json_t *e, const char *where, bool need_edit, struct gp_diag *d)
{
    if (!json_is_object(e))
        return gp_diag_set(d, GP_EINVALID, "CDI: %s: containerEdits is required (an object)",
                           where);
    size_t edits = 0, i;
    json_t *v, *env = json_object_get(e, "env");
    json_array_foreach(env, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || !strchr(s, '=') || s[0] == '=')
            return gp_diag_set(d, GP_EINVALID, "CDI: %s: env[%zu] is not KEY=VALUE", where, i);
        edits++;
    }
    json_array_foreach(json_object_get(e, "deviceNodes"), i, v)
    {
        const char *p = json_string_value(json_object_get(v, "path"));
        if (!p || p[0] != '/')
            return gp_diag_set(d, GP_EINVALID,
                               "CDI: %s: deviceNodes[%zu].path is required (an absolute path)",
                               where, i);
        edits++;
    }
    json_array_foreach(json_object_get(e, "mounts"), i, v)
    {
        if (!is_path_string(json_object_get(v, "hostPath")) ||
            !is_path_string(json_object_get(v, "containerPath")))
            return gp_diag_set(d, GP_EINVALID,
                               "CDI: %s: mounts[%zu] needs hostPath and containerPath", where, i);
        edits++;
    }
    json_array_foreach(json_object_get(e, "hooks"), i, v)
    {
        const char *h = json_string_value(json_object_get(v, "hookName"));
        bool known = false;
        for (size_t k = 0; h && k < sizeof hook_names / sizeof hook_names[0]; k++)
            known |= strcmp(h, hook_names[k]) == 0;
        if (!known)
            return gp_diag_set(d, GP_EINVALID,
                               "CDI: %s: hooks[%zu].hookName '%s' is not an OCI hook", where, i,
                               h ? h : "");
        if (!is_path_string(json_object_get(v, "path")))
            return gp_diag_set(d, GP_EINVALID, "CDI: %s: hooks[%zu].path is required", where, i);
        edits++;
    }
    if (need_edit && edits == 0)
        return gp_diag_set(d, GP_EINVALID, "CDI: %s: containerEdits has no edit", where);
    return GP_OK;
}

enum gp_err gp_node_cdi_validate(const char *spec, struct gp_diag *d)
{
    json_error_t je;
    json_t *s = json_loads(spec, 0, &je);
    if (!json_is_object(s)) {
        json_decref(s);
        return gp_diag_set(d, GP_EINVALID, "CDI: line %d: not a JSON object: %s", je.line, je.text);
    }
    enum gp_err err = GP_OK;
    const char *ver = json_string_value(json_object_get(s, "cdiVersion"));
    const char *kind = json_string_value(json_object_get(s, "kind"));
    json_t *devs = json_object_get(s, "devices");
    bool known = false;
    for (size_t k = 0; ver && k < sizeof versions / sizeof versions[0]; k++)
        known |= strcmp(ver, versions[k]) == 0;
    if (!known)
        err = gp_diag_set(d, GP_EINVALID, "CDI: cdiVersion '%s' is not a released version",
                          ver ? ver : "");
    else if (!kind || !kind_ok(kind))
        err = gp_diag_set(d, GP_EINVALID, "CDI: kind '%s' is not vendor/class", kind ? kind : "");
    else if (!json_is_array(devs) || json_array_size(devs) == 0)
        err = gp_diag_set(d, GP_EINVALID, "CDI: devices needs at least one device");
    size_t i;
    json_t *v;
    json_array_foreach(devs, i, v)
    {
        if (err != GP_OK)
            break;
        const char *name = json_string_value(json_object_get(v, "name"));
        char where[160];
        snprintf(where, sizeof where, "devices[%zu] (%s)", i, name ? name : "no name");
        if (!name || !name_ok(name, "-_.:", 1024)) {
            err = gp_diag_set(d, GP_EINVALID,
                              "CDI: %s: name must be alphanumerics, '-', '_', '.' and ':', "
                              "alphanumeric at both ends",
                              where);
            break;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(name,
                       json_string_value(json_object_get(json_array_get(devs, k), "name"))
                           ? json_string_value(json_object_get(json_array_get(devs, k), "name"))
                           : "") == 0) {
                err = gp_diag_set(d, GP_EINVALID, "CDI: %s: the name is used twice", where);
                break;
            }
        if (err == GP_OK)
            err = edits_ok(json_object_get(v, "containerEdits"), where, true, d);
    }
    if (err == GP_OK && json_object_get(s, "containerEdits"))
        err = edits_ok(json_object_get(s, "containerEdits"), "the spec", false, d);
    json_decref(s);
    return err;
}
