/* inventory_file.c - a node's inventory from JSON (inventory_file.h):
 *
 *   {"driver": "535.104.05", "cuda": 12020,
 *    "gpus": [{"index": 0, "uuid": "GPU-…", "name": "NVIDIA A100-SXM4-80GB",
 *              "pci": "00000000:07:00.0", "memory_mib": 81920, "cc": "8.0",
 *              "mig_capable": true, "mig_enabled": true,
 *              "migs": [{"uuid": "MIG-…", "profile": "1g.10gb", "memory_mib": 9856,
 *                        "gi": 1, "ci": 0, "start": 0, "size": 1}],
 *              "nvlink_peers": [1, 2, 3], "healthy": true, "xid": 0}]}
 *
 * Unknown keys are refused (a misspelt "healthy" must not pass as
 * healthy). */
#include "node/inventory_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/fs.h"

static enum gp_err bad(struct gp_diag *d, const char *name, const char *where, const char *what)
{
    return gp_diag_set(d, GP_EINVALID, "%s: %s: %s", name, where, what);
}

static bool keys_ok(json_t *o, const char *const *known, const char *name, const char *where,
                    struct gp_diag *d)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        bool ok = false;
        for (size_t i = 0; known[i]; i++)
            ok |= strcmp(k, known[i]) == 0;
        if (!ok) {
            char w[160];
            snprintf(w, sizeof w, "%s%s%s", where, *where ? "." : "", k);
            bad(d, name, w, "unknown key");
            return false;
        }
    }
    return true;
}

static bool get_str(json_t *o, const char *key, char *dst, size_t n, bool required,
                    const char *name, const char *where, struct gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    char w[160];
    snprintf(w, sizeof w, "%s.%s", where, key);
    if (!v) {
        if (required)
            bad(d, name, w, "missing");
        return !required;
    }
    if (!json_is_string(v) || json_string_length(v) >= n) {
        bad(d, name, w, json_is_string(v) ? "too long" : "expected a string");
        return false;
    }
    snprintf(dst, n, "%s", json_string_value(v));
    return true;
}

static bool get_uint(json_t *o, const char *key, uint64_t *dst, const char *name, const char *where,
                     struct gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return true;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char w[160];
        snprintf(w, sizeof w, "%s.%s", where, key);
        bad(d, name, w, "expected an integer >= 0");
        return false;
    }
    *dst = (uint64_t)json_integer_value(v);
    return true;
}

static bool get_bool(json_t *o, const char *key, bool *dst, const char *name, const char *where,
                     struct gp_diag *d)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return true;
    if (!json_is_boolean(v)) {
        char w[160];
        snprintf(w, sizeof w, "%s.%s", where, key);
        bad(d, name, w, "expected true or false");
        return false;
    }
    *dst = json_is_true(v);
    return true;
}

static bool read_mig(json_t *m, struct gp_node_mig *out, const char *name, const char *where,
                     struct gp_diag *d)
{
    static const char *const known[] = {"uuid", "profile", "memory_mib", "gi",
                                        "ci",   "start",   "size",       NULL};
    uint64_t gi = 0, ci = 0, start = 0, size = 0;
    if (!json_is_object(m)) {
        bad(d, name, where, "expected an object");
        return false;
    }
    return keys_ok(m, known, name, where, d) &&
           get_str(m, "uuid", out->uuid, sizeof out->uuid, true, name, where, d) &&
           get_str(m, "profile", out->profile, sizeof out->profile, true, name, where, d) &&
           get_uint(m, "memory_mib", &out->memory_mib, name, where, d) &&
           get_uint(m, "gi", &gi, name, where, d) && get_uint(m, "ci", &ci, name, where, d) &&
           get_uint(m, "start", &start, name, where, d) &&
           get_uint(m, "size", &size, name, where, d) &&
           ((out->gi_id = (unsigned)gi), (out->ci_id = (unsigned)ci),
            (out->start = (unsigned)start), (out->size = (unsigned)size), true);
}

static bool read_gpu(json_t *g, size_t i, struct gp_node_gpu *out, const char *name,
                     struct gp_diag *d)
{
    static const char *const known[] = {"index",
                                        "uuid",
                                        "name",
                                        "pci",
                                        "memory_mib",
                                        "cc",
                                        "mig_capable",
                                        "mig_enabled",
                                        "migs",
                                        "nvlink_peers",
                                        "healthy",
                                        "xid",
                                        "util_percent",
                                        "memory_used_mib",
                                        NULL};
    char where[64], cc[16] = "";
    snprintf(where, sizeof where, "gpus[%zu]", i);
    if (!json_is_object(g)) {
        bad(d, name, where, "expected an object");
        return false;
    }
    uint64_t index = i, xid = 0, util = 0;
    out->healthy = true;
    if (!keys_ok(g, known, name, where, d) || !get_uint(g, "index", &index, name, where, d) ||
        !get_str(g, "uuid", out->uuid, sizeof out->uuid, true, name, where, d) ||
        !get_str(g, "name", out->name, sizeof out->name, false, name, where, d) ||
        !get_str(g, "pci", out->pci_bus_id, sizeof out->pci_bus_id, false, name, where, d) ||
        !get_uint(g, "memory_mib", &out->memory_mib, name, where, d) ||
        !get_str(g, "cc", cc, sizeof cc, false, name, where, d) ||
        !get_bool(g, "mig_capable", &out->mig_capable, name, where, d) ||
        !get_bool(g, "mig_enabled", &out->mig_enabled, name, where, d) ||
        !get_bool(g, "healthy", &out->healthy, name, where, d) ||
        !get_uint(g, "xid", &xid, name, where, d) ||
        !get_uint(g, "util_percent", &util, name, where, d) ||
        !get_uint(g, "memory_used_mib", &out->memory_used_mib, name, where, d))
        return false;
    if (index >= 64) {
        bad(d, name, where, "index: expected 0..63");
        return false;
    }
    out->index = (unsigned)index;
    out->last_xid = (unsigned)xid;
    out->util_percent = (unsigned)util;
    if (*cc && sscanf(cc, "%u.%u", &out->cc_major, &out->cc_minor) != 2) {
        bad(d, name, where, "cc: expected \"MAJOR.MINOR\"");
        return false;
    }
    json_t *migs = json_object_get(g, "migs");
    if (migs && (!json_is_array(migs) || json_array_size(migs) > GP_NODE_MAX_MIGS)) {
        bad(d, name, where, "migs: expected an array of at most 7");
        return false;
    }
    for (size_t m = 0; migs && m < json_array_size(migs); m++) {
        char w[96];
        snprintf(w, sizeof w, "%s.migs[%zu]", where, m);
        if (!read_mig(json_array_get(migs, m), &out->migs[m], name, w, d))
            return false;
        out->n_migs = m + 1;
    }
    json_t *peers = json_object_get(g, "nvlink_peers");
    for (size_t k = 0; peers && k < json_array_size(peers); k++) {
        json_t *v = json_array_get(peers, k);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 63) {
            bad(d, name, where, "nvlink_peers: expected GPU indexes 0..63");
            return false;
        }
        out->nvlink_peers |= (uint64_t)1 << json_integer_value(v);
    }
    if (peers && !json_is_array(peers)) {
        bad(d, name, where, "nvlink_peers: expected an array");
        return false;
    }
    return true;
}

enum gp_err gp_node_inventory_parse(const char *text, size_t len, const char *name,
                                    struct gp_node_inventory *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root)
        return gp_diag_set(diag, GP_EPARSE, "%s:%d:%d: %s", name, je.line, je.column, je.text);
    static const char *const known[] = {"driver", "cuda", "gpus", NULL};
    enum gp_err e = GP_OK;
    json_t *gpus = json_object_get(root, "gpus");
    uint64_t cuda = 0;
    if (!json_is_object(root))
        e = bad(diag, name, "(top)", "expected an object");
    else if (!keys_ok(root, known, name, "", diag) ||
             !get_str(root, "driver", out->driver_version, sizeof out->driver_version, false, name,
                      "(top)", diag) ||
             !get_uint(root, "cuda", &cuda, name, "(top)", diag))
        e = GP_EINVALID;
    else if (!json_is_array(gpus) || json_array_size(gpus) > GP_NODE_MAX_GPUS)
        e = bad(diag, name, "gpus", "expected an array of at most 64");
    for (size_t i = 0; e == GP_OK && i < json_array_size(gpus); i++) {
        if (!read_gpu(json_array_get(gpus, i), i, &out->gpus[i], name, diag))
            e = GP_EINVALID;
        else
            out->n_gpus = i + 1;
        for (size_t j = 0; e == GP_OK && j < i; j++)
            if (out->gpus[j].index == out->gpus[i].index ||
                strcmp(out->gpus[j].uuid, out->gpus[i].uuid) == 0) {
                char w[32];
                snprintf(w, sizeof w, "gpus[%zu]", i);
                e = bad(diag, name, w, "index or uuid given twice");
            }
    }
    out->cuda_driver_version = (int)cuda;
    json_decref(root);
    return e;
}

enum gp_err gp_node_inventory_read_file(const char *path, struct gp_node_inventory *out,
                                        struct gp_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    enum gp_err e = gp_fs_read(path, &text, &len, diag);
    if (e != GP_OK)
        return e;
    e = gp_node_inventory_parse(text, len, path, out, diag);
    free(text);
    return e;
}
