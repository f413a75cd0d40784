/* config.c - NVIDIA k8s-device-plugin's configuration file (api/config/v1)
 * read with libfyaml through io/yaml_walk.h into what the node agent can
 * follow (config.h). */
#include "node/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yaml_walk.h"

/* What the walk collects before it is checked and copied out. */
struct cfg {
    struct gp_node_config *out;
    /* sharing.<strategy> being read */
    bool in_mps;
    bool has_rename, rename_by_default, has_fail_gt1, fail_gt1;
    unsigned replicas;
    struct fy_node *replicas_at;
    size_t n_resources;
};

/* "FILE: FIELD: what" kept for the agent to print. */
static void warn(struct gp_yaml *y, struct cfg *c, const char *what)
{
    struct gp_node_config *o = c->out;
    if (o->n_warnings < GP_NODE_CONFIG_MAX_WARNINGS)
        snprintf(o->warnings[o->n_warnings++], sizeof o->warnings[0], "%.120s: %.200s: %.160s",
                 y->name, y->path, what);
}

static enum gp_err read_bool(struct gp_yaml *y, struct fy_node *v, bool *out)
{
    const char *s;
    enum gp_err e = gp_yaml_text(y, v, "true or false", &s);
    if (e != GP_OK)
        return e;
    bool plain = fy_node_get_style(v) == FYNS_PLAIN;
    if (plain && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")))
        *out = true;
    else if (plain && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")))
        *out = false;
    else {
        char q[80];
        return gp_yaml_fail(y, v, GP_EINVALID, "expected true or false%s, got \"%s\"",
                            plain ? "" : " without quotes", gp_yaml_quote(v, q, sizeof q));
    }
    return GP_OK;
}

/* --- flags ------------------------------------------------------------------ */

static enum gp_err f_mig(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    const char *s;
    enum gp_err e = gp_yaml_string(y, v, &s);
    if (e != GP_OK)
        return e;
    static const char *names[] = {"none", "single", "mixed"};
    static const enum gp_node_mig_strategy vals[] = {GP_NODE_MIG_NONE, GP_NODE_MIG_SINGLE,
                                                     GP_NODE_MIG_MIXED};
    for (size_t i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            c->out->has_mig_strategy = true;
            c->out->mig_strategy = vals[i];
            return GP_OK;
        }
    return gp_yaml_fail(y, v, GP_EINVALID, "expected none, single or mixed, got \"%s\"", s);
}

static enum gp_err f_fail_init(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    c->out->has_fail_on_init_error = true;
    return read_bool(y, v, &c->out->fail_on_init_error);
}

static enum gp_err f_driver_root(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    return gp_yaml_string(y, v, &c->out->driver_root);
}

/* flags.mpsRoot (NVIDIA's --mps-root, MPS_ROOT): an absolute host path
 * the MPS pipe and shm mounts are made under (devices.h, gp_node_alloc) */
static enum gp_err f_mps_root(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    enum gp_err e = gp_yaml_string(y, v, &c->out->mps_root);
    if (e != GP_OK)
        return e;
    if (c->out->mps_root[0] != '/' || strlen(c->out->mps_root) >= 256)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "expected an absolute path under 256 bytes, got \"%s\"",
                            c->out->mps_root);
    return GP_OK;
}

static enum gp_err f_pass_specs(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    bool b = false;
    enum gp_err e = read_bool(y, v, &b);
    if (e == GP_OK && b)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "true is not supported: gpuplane's agent names devices through CDI "
                            "and NVIDIA_VISIBLE_DEVICES, not device specs");
    return e;
}

/* One device list strategy: envvar and cdi-cri are what the agent
 * answers with (NVIDIA_VISIBLE_DEVICES and the CDI devices field). */
static enum gp_err list_strategy(struct gp_yaml *y, struct fy_node *v)
{
    const char *s;
    enum gp_err e = gp_yaml_string(y, v, &s);
    if (e != GP_OK)
        return e;
    if (strcmp(s, "envvar") == 0 || strcmp(s, "cdi-cri") == 0)
        return GP_OK;
    if (strcmp(s, "volume-mounts") == 0 || strcmp(s, "cdi-annotations") == 0)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "\"%s\" is not supported: gpuplane's agent answers with envvar and "
                            "cdi-cri (NVIDIA_VISIBLE_DEVICES and the CDI devices field)",
                            s);
    return gp_yaml_fail(y, v, GP_EINVALID,
                        "expected envvar, volume-mounts, cdi-annotations or cdi-cri, got \"%s\"",
                        s);
}

static enum gp_err list_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    (void)i;
    (void)ctx;
    return list_strategy(y, item);
}

static enum gp_err f_list_strategy(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    if (fy_node_is_sequence(v))
        return gp_yaml_list(y, v, list_item, obj);
    return list_strategy(y, v);
}

static enum gp_err f_id_strategy(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    const char *s;
    enum gp_err e = gp_yaml_string(y, v, &s);
    if (e != GP_OK || strcmp(s, "uuid") == 0)
        return e;
    if (strcmp(s, "index") == 0)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "\"index\" is not supported: gpuplane's agent passes GPUs by UUID");
    return gp_yaml_fail(y, v, GP_EINVALID, "expected uuid or index, got \"%s\"", s);
}

static const struct gp_yaml_field plugin_fields[] = {
    GP_YCUSTOM("passDeviceSpecs", f_pass_specs, 0),
    GP_YCUSTOM("deviceListStrategy", f_list_strategy, 0),
    GP_YCUSTOM("deviceIDStrategy", f_id_strategy, 0),
    {"cdiAnnotationPrefix", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"nvidiaCTKPath", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"containerDriverRoot", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"sharedDevicesAllocationPolicy", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err f_plugin(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, plugin_fields, sizeof plugin_fields / sizeof *plugin_fields, obj,
                          true);
}

/* GPU Feature Discovery's flags: the agent labels the node itself. */
static const struct gp_yaml_field gfd_fields[] = {
    {"oneshot", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"noTimestamp", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"sleepInterval", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"outputFile", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"machineTypeFile", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

static enum gp_err f_gfd(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, gfd_fields, sizeof gfd_fields / sizeof *gfd_fields, obj, true);
}

static const struct gp_yaml_field flags_fields[] = {
    GP_YCUSTOM("migStrategy", f_mig, 0),
    GP_YCUSTOM("failOnInitError", f_fail_init, 0),
    GP_YCUSTOM("nvidiaDriverRoot", f_driver_root, 0),
    GP_YCUSTOM("plugin", f_plugin, 0),
    GP_YCUSTOM("gfd", f_gfd, 0),
    {"nvidiaDevRoot", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"restartOnDeviceUnhealthy", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"gdsEnabled", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"mofedEnabled", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"useNodeFeatureAPI", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    {"deviceDiscoveryStrategy", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
    GP_YCUSTOM("mpsRoot", f_mps_root, 0),
};

static enum gp_err f_flags(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, flags_fields, sizeof flags_fields / sizeof *flags_fields, obj,
                          true);
}

/* --- sharing ---------------------------------------------------------------- */

/* A resource name NVIDIA's plugin replicates: nvidia.com/gpu or a MIG
 * profile's nvidia.com/mig-<profile> (README: "the only supported
 * resource available for time-slicing are nvidia.com/gpu as well as any
 * of the resource types that emerge from configuring a node with the
 * mixed MIG strategy"; MPS: nvidia.com/gpu only). */
static enum gp_err r_name(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    const char *s;
    enum gp_err e = gp_yaml_string(y, v, &s);
    if (e != GP_OK)
        return e;
    bool mig = strncmp(s, "nvidia.com/mig-", 15) == 0 && s[15] && strlen(s) <= 63;
    if (strcmp(s, "nvidia.com/gpu") != 0 && !(mig && !c->in_mps))
        return gp_yaml_fail(
            y, v, GP_EINVALID, "expected nvidia.com/gpu%s, got \"%s\"",
            c->in_mps ? " (MPS shares full GPUs only)" : " or nvidia.com/mig-<profile>", s);
    /* the resources replicated: only these (replicas.go's ReplicatedResource
     * names one; the plugin leaves the others whole) */
    struct gp_node_config *o = c->out;
    for (size_t i = 0; i < o->n_named; i++)
        if (strcmp(o->named[i], s) == 0)
            return GP_OK;
    if (o->n_named == GP_NODE_SHARING_MAX_NAMES)
        return gp_yaml_fail(y, v, GP_EINVALID, "more than %d resources shared",
                            GP_NODE_SHARING_MAX_NAMES);
    snprintf(o->named[o->n_named++], sizeof o->named[0], "%s", s);
    return GP_OK;
}

static enum gp_err r_replicas(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    int64_t n;
    char q[80];
    if (!fy_node_is_scalar(v) || gp_yaml_int(y, v, INT64_MIN, INT64_MAX, &n) != GP_OK)
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a whole number of replicas, got \"%s\"",
                            gp_yaml_quote(v, q, sizeof q));
    if (n < 2) /* replicas.go: "number of replicas must be >= 2" */
        return gp_yaml_fail(y, v, GP_EINVALID, "number of replicas must be >= 2, got %lld",
                            (long long)n);
    if (n > 1024)
        return gp_yaml_fail(y, v, GP_EINVALID, "at most 1024 replicas, got %lld", (long long)n);
    if (c->replicas && (unsigned)n != c->replicas)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "%lld replicas where an earlier resource has %u: gpuplane's agent "
                            "gives every resource of the node one replica count",
                            (long long)n, c->replicas);
    c->replicas = (unsigned)n;
    return GP_OK;
}

static enum gp_err r_rename(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    const char *s;
    enum gp_err e = gp_yaml_string(y, v, &s);
    if (e == GP_OK) { /* NVIDIA's config.go, DisableResourceNamingInConfig */
        char what[160], q[64];
        snprintf(what, sizeof what,
                 "\"%s\": renaming a resource is not supported (as in NVIDIA's plugin); "
                 "ignored",
                 gp_yaml_quote(v, q, sizeof q));
        warn(y, obj, what);
    }
    return e;
}

/* A device reference: a GPU index, a MIG index "gpu:mig", or a GPU or
 * MIG UUID (replicas.go, ReplicatedDeviceRef). */
static enum gp_err device_ref(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    (void)i;
    (void)ctx;
    const char *s;
    enum gp_err e = gp_yaml_text(y, item, "a GPU index, a MIG index or a UUID", &s);
    if (e != GP_OK)
        return e;
    size_t digits = strspn(s, "0123456789");
    bool index = digits > 0 && s[digits] == '\0';
    bool mig = digits > 0 && s[digits] == ':' && s[digits + 1] &&
               strspn(s + digits + 1, "0123456789") == strlen(s + digits + 1);
    bool uuid = (strncmp(s, "GPU-", 4) == 0 || strncmp(s, "MIG-", 4) == 0) && s[4];
    if (!index && !mig && !uuid)
        return gp_yaml_fail(y, item, GP_EINVALID,
                            "expected a GPU index, a MIG index (\"0:1\") or a GPU or MIG UUID, "
                            "got \"%s\"",
                            s);
    return GP_OK;
}

static enum gp_err r_devices(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    enum gp_err e = GP_OK;
    char q[80];
    if (fy_node_is_sequence(v)) {
        e = gp_yaml_list(y, v, device_ref, obj);
    } else {
        const char *s;
        e = gp_yaml_text(y, v, "\"all\", a count or a list of devices", &s);
        if (e != GP_OK)
            return e;
        if (strcmp(s, "all") == 0)
            return GP_OK;
        int64_t n;
        if (fy_node_get_style(v) != FYNS_PLAIN ||
            gp_yaml_int(y, v, INT64_MIN, INT64_MAX, &n) != GP_OK)
            return gp_yaml_fail(y, v, GP_EINVALID,
                                "expected \"all\", a count or a list of devices, got \"%s\"",
                                gp_yaml_quote(v, q, sizeof q));
        if (n <= 0)
            return gp_yaml_fail(y, v, GP_EINVALID, "a count of devices must be > 0, got %lld",
                                (long long)n);
    }
    if (e == GP_OK)
        warn(y, obj,
             "choosing the devices to share is not supported (as in NVIDIA's plugin); every "
             "GPU is shared");
    return e;
}

static const struct gp_yaml_field resource_fields[] = {
    GP_YCUSTOM("name", r_name, GP_YF_REQUIRED),
    GP_YCUSTOM("replicas", r_replicas, GP_YF_REQUIRED),
    GP_YCUSTOM("rename", r_rename, 0),
    GP_YCUSTOM("devices", r_devices, 0),
};

static enum gp_err resource_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    (void)i;
    struct cfg *c = ctx;
    c->n_resources++;
    return gp_yaml_object(y, item, resource_fields,
                          sizeof resource_fields / sizeof *resource_fields, c, true);
}

static enum gp_err s_resources(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    enum gp_err e = gp_yaml_list(y, v, resource_item, c);
    if (e == GP_OK && c->n_resources == 0) /* replicas.go: "no resources specified" */
        return gp_yaml_fail(y, v, GP_EINVALID, "no resources specified");
    return e;
}

static enum gp_err s_rename(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    c->has_rename = true;
    return read_bool(y, v, &c->rename_by_default);
}

static enum gp_err s_fail_gt1(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct cfg *c = obj;
    c->has_fail_gt1 = true;
    return read_bool(y, v, &c->fail_gt1);
}

static const struct gp_yaml_field strategy_fields[] = {
    GP_YCUSTOM("renameByDefault", s_rename, 0),
    GP_YCUSTOM("failRequestsGreaterThanOne", s_fail_gt1, 0),
    GP_YCUSTOM("resources", s_resources, GP_YF_REQUIRED),
};

static enum gp_err sharing_one(struct gp_yaml *y, struct fy_node *v, struct cfg *c, bool mps)
{
    if (c->out->has_sharing)
        return gp_yaml_fail(y, v, GP_EINVALID,
                            "timeSlicing and mps are both set: they are mutually exclusive "
                            "(NVIDIA's README, \"Shared Access to GPUs\")");
    c->in_mps = mps;
    c->replicas = 0;
    c->n_resources = 0;
    c->has_rename = c->has_fail_gt1 = false;
    c->out->n_named = 0;
    enum gp_err e = gp_yaml_object(y, v, strategy_fields,
                                   sizeof strategy_fields / sizeof *strategy_fields, c, true);
    if (e != GP_OK)
        return e;
    struct gp_node_config *o = c->out;
    o->has_sharing = true;
    o->mode = mps ? GP_NODE_SHARE_MPS : GP_NODE_SHARE_TIME_SLICING;
    o->replicas = c->replicas;
    o->rename_by_default = c->rename_by_default;
    /* Under MPS the plugin fails requests of more than one whatever the
     * file says: NVIDIA k8s-device-plugin v0.15.0-rc.2 to v0.17.x,
     * api/config/v1/config.go NewConfig ("We explicitly set
     * sharing.mps.failRequestsGreaterThanOne = true"; CHANGELOG
     * v0.15.0-rc.2, PR #574: "this setting is ignored for MPS sharing").
     * gpuplane's scheduler reads an MPS node so (kube/objects_share.c) and
     * the agent labels it so (labels.c); an explicit false is not honoured
     * (upstream's main honours it only since PR #1762, May 2026: docs/
     * node.md). Time-slicing: the file's value, false when absent. */
    o->fail_requests_greater_than_one = mps || (c->has_fail_gt1 && c->fail_gt1);
    return GP_OK;
}

static enum gp_err s_time_slicing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return sharing_one(y, v, obj, false);
}

static enum gp_err s_mps(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return sharing_one(y, v, obj, true);
}

static const struct gp_yaml_field sharing_fields[] = {
    GP_YCUSTOM("timeSlicing", s_time_slicing, 0),
    GP_YCUSTOM("mps", s_mps, 0),
};

static enum gp_err f_sharing(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, sharing_fields, sizeof sharing_fields / sizeof *sharing_fields, obj,
                          true);
}

/* --- the document ------------------------------------------------------------ */

static enum gp_err f_version(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    (void)obj;
    const char *s;
    enum gp_err e = gp_yaml_string(y, v, &s);
    if (e == GP_OK && strcmp(s, "v1") != 0) /* config.go: "unknown version" */
        return gp_yaml_fail(y, v, GP_EINVALID, "unknown version \"%s\": expected v1", s);
    return e;
}

static enum gp_err f_resources(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    if (!fy_node_is_mapping(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a mapping (gpus, mig), got %s",
                            gp_yaml_describe(v));
    /* config.go: "Customizing the 'resources' field is not yet supported" */
    warn(y, obj, "naming resources is not supported (as in NVIDIA's plugin); ignored");
    return GP_OK;
}

static const struct gp_yaml_field root_fields[] = {
    GP_YCUSTOM("version", f_version, 0),      GP_YCUSTOM("flags", f_flags, 0),
    GP_YCUSTOM("sharing", f_sharing, 0),      GP_YCUSTOM("resources", f_resources, 0),
    {"imex", GP_YT_IGNORE, 0, 0, 0, 0, NULL},
};

struct doc {
    struct cfg *c;
    bool seen;
};

static enum gp_err one_doc(struct gp_yaml *y, struct fy_node *root, void *ctx)
{
    struct doc *d = ctx;
    if (d->seen)
        return gp_yaml_fail(y, root, GP_EINVALID, "a second document: the file holds one");
    d->seen = true;
    return gp_yaml_object(y, root, root_fields, sizeof root_fields / sizeof *root_fields, d->c,
                          true);
}

enum gp_err gp_node_config_parse(const char *text, size_t len, const char *name, struct gp_arena *a,
                                 struct gp_node_config *out, struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    struct cfg c = {.out = out};
    struct gp_yaml y;
    gp_yaml_init(&y, gp_arena_strdup(a, name), a, diag);
    struct doc d = {&c, false};
    enum gp_err e = gp_yaml_each_document(&y, text, len, one_doc, &d);
    if (e != GP_OK)
        memset(out, 0, sizeof *out);
    return e;
}

enum gp_err gp_node_config_read(const char *path, struct gp_arena *a, struct gp_node_config *out,
                                struct gp_diag *diag)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return gp_diag_set(diag, errno == ENOENT ? GP_ENOTFOUND : GP_EIO, "%s: %s", path,
                           strerror(errno));
    char *buf = malloc(GP_NODE_CONFIG_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, GP_NODE_CONFIG_MAX_BYTES + 1, f) : 0;
    bool err = ferror(f) != 0;
    fclose(f);
    enum gp_err e;
    if (!buf)
        e = gp_diag_set(diag, GP_ENOMEM, "out of memory");
    else if (err)
        e = gp_diag_set(diag, GP_EIO, "%s: cannot be read", path);
    else if (n > GP_NODE_CONFIG_MAX_BYTES)
        e = gp_diag_set(diag, GP_EINVALID,
                        "%s: larger than %u bytes: not a device plugin "
                        "configuration",
                        path, GP_NODE_CONFIG_MAX_BYTES);
    else
        e = gp_node_config_parse(buf, n, path, a, out, diag);
    free(buf);
    return e;
}
