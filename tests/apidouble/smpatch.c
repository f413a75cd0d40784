/* smpatch.c - the API server's strategic merge patch
 * (application/strategic-merge-patch+json) for the kinds the double serves.
 *
 * Objects merge as in an RFC 7386 merge patch (a null deletes the key).
 * A list whose Go field is tagged `patchStrategy:"merge"` with a
 * `patchMergeKey` is merged element by element on that key: a patch
 * element whose key matches a target element is merged into it, one with a
 * new key is appended, one carrying "$patch": "delete" removes the element
 * with its key. A list of scalars tagged "merge" (finalizers, podCIDRs)
 * takes the patch's values not already in it. Every other list is
 * replaced whole, as in a merge patch. "$setElementOrder/FIELD" keys only
 * order what the server returns and are dropped; any other "$" directive
 * is refused (400), as the double does not implement it.
 *
 * The tags followed are those of k8s.io/api/core/v1/types.go and
 * k8s.io/apimachinery/pkg/apis/meta/v1/types.go at v1.28 (PodStatus
 * Conditions by type, NodeStatus Conditions and Addresses by type,
 * PodSpec Containers/InitContainers/EphemeralContainers/Volumes/
 * ImagePullSecrets by name, HostAliases by ip, TopologySpreadConstraints
 * by topologyKey, Container Env by name, Ports by containerPort,
 * VolumeMounts by mountPath, VolumeDevices by devicePath, PodStatus PodIPs
 * by ip, ObjectMeta OwnerReferences by uid, Finalizers and NodeSpec
 * PodCIDRs as sets); the semantics those of the Kubernetes documentation,
 * "Update API Objects in Place Using kubectl patch". */
#include <stdio.h>
#include <string.h>

#include "apidouble.h"

/* the field paths (from the object's root, "[]" for a list's elements)
 * whose lists merge; key NULL: a list of scalars merged as a set */
static const struct {
    const char *path, *key;
} merge_lists[] = {
    {"metadata.ownerReferences", "uid"},
    {"metadata.finalizers", NULL},
    {"spec.containers", "name"},
    {"spec.initContainers", "name"},
    {"spec.ephemeralContainers", "name"},
    {"spec.volumes", "name"},
    {"spec.imagePullSecrets", "name"},
    {"spec.hostAliases", "ip"},
    {"spec.topologySpreadConstraints", "topologyKey"},
    {"spec.podCIDRs", NULL},
    {"status.conditions", "type"},
    {"status.addresses", "type"},
    {"status.podIPs", "ip"},
};

static const char *const container_lists[][2] = {
    {"env", "name"},
    {"ports", "containerPort"},
    {"volumeMounts", "mountPath"},
    {"volumeDevices", "devicePath"},
};

/* Whether the list at path merges; *key its merge key (NULL: a set). */
static bool merges(const char *path, const char **key)
{
    for (size_t i = 0; i < sizeof merge_lists / sizeof merge_lists[0]; i++)
        if (strcmp(path, merge_lists[i].path) == 0) {
            *key = merge_lists[i].key;
            return true;
        }
    /* a container's own lists, in any of the pod's container lists */
    const char *field = strrchr(path, '.');
    if (!field || strncmp(path, "spec.", 5) != 0)
        return false;
    size_t stem = (size_t)(field - path);
    if (stem < 2 || strncmp(field - 2, "[]", 2) != 0)
        return false;
    char owner[64];
    if (stem - 2 >= sizeof owner)
        return false;
    memcpy(owner, path, stem - 2);
    owner[stem - 2] = '\0';
    if (strcmp(owner, "spec.containers") != 0 && strcmp(owner, "spec.initContainers") != 0 &&
        strcmp(owner, "spec.ephemeralContainers") != 0)
        return false;
    for (size_t i = 0; i < sizeof container_lists / sizeof container_lists[0]; i++)
        if (strcmp(field + 1, container_lists[i][0]) == 0) {
            *key = container_lists[i][1];
            return true;
        }
    return false;
}

static json_t *patch_value(json_t *target, json_t *patch, const char *path, char *err, size_t n);

/* The index of the element of list whose key equals want's, or -1. */
static long find_keyed(json_t *list, const char *key, json_t *want)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (json_equal(json_object_get(e, key), want))
            return (long)i;
    }
    return -1;
}

static json_t *merge_list(json_t *target, json_t *patch, const char *path, const char *key,
                          char *err, size_t n)
{
    json_t *out = json_is_array(target) ? json_copy(target) : json_array();
    char elem[256];
    snprintf(elem, sizeof elem, "%s[]", path);
    size_t i;
    json_t *e;
    json_array_foreach(patch, i, e)
    {
        if (!key) { /* a set of scalars */
            size_t j;
            json_t *have;
            bool found = false;
            json_array_foreach(out, j, have) found = found || json_equal(have, e);
            if (!found)
                json_array_append(out, e);
            continue;
        }
        json_t *k = json_object_get(e, key);
        if (!json_is_object(e) || !k) {
            snprintf(err, n, "%s: an element without its merge key \"%s\"", path, key);
            json_decref(out);
            return NULL;
        }
        long at = find_keyed(out, key, k);
        const char *directive = json_string_value(json_object_get(e, "$patch"));
        if (directive && strcmp(directive, "delete") == 0) {
            if (at >= 0)
                json_array_remove(out, (size_t)at);
            continue;
        }
        json_t *v = patch_value(at >= 0 ? json_array_get(out, (size_t)at) : NULL, e, elem, err, n);
        if (!v) {
            json_decref(out);
            return NULL;
        }
        if (at >= 0)
            json_array_set_new(out, (size_t)at, v);
        else
            json_array_append_new(out, v);
    }
    return out;
}

/* target patched at path (target NULL: absent); NULL and err on a
 * directive the double does not implement */
static json_t *patch_value(json_t *target, json_t *patch, const char *path, char *err, size_t n)
{
    const char *key;
    if (json_is_array(patch) && merges(path, &key))
        return merge_list(target, patch, path, key, err, n);
    if (!json_is_object(patch))
        return json_deep_copy(patch);
    json_t *out = json_is_object(target) ? json_copy(target) : json_object();
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v)
    {
        if (k[0] == '$') {
            if (strncmp(k, "$setElementOrder/", 17) == 0)
                continue; /* the order of what is returned only */
            if (strcmp(k, "$patch") == 0 && json_is_string(v) &&
                strcmp(json_string_value(v), "delete") == 0 && path[0] && strlen(path) > 2 &&
                strcmp(path + strlen(path) - 2, "[]") == 0)
                continue; /* handled by merge_list */
            snprintf(err, n, "%s%s%s: the directive is not implemented by this double", path,
                     path[0] ? "." : "", k);
            json_decref(out);
            return NULL;
        }
        if (json_is_null(v)) {
            json_object_del(out, k);
            continue;
        }
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
        json_t *nv = patch_value(json_object_get(out, k), v, sub, err, n);
        if (!nv) {
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, k, nv);
    }
    return out;
}

json_t *strategic_patch(json_t *target, json_t *patch, char *err, size_t n)
{
    err[0] = '\0';
    return patch_value(target, patch, "", err, n);
}
