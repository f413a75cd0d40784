/* eventlog_specs.c - the event log's reader, its values (eventlog.h): the
 * engine's node, pod, queue and gang specs, a pick and a decision rebuilt
 * from their JSON with every field type-checked ("FILE:LINE: FIELD:
 * expected ..."), strings and arrays in the reader's arena. */
#include <stdlib.h>
#include <string.h>

#include "engine/sharing.h"
#include "io/eventlog_internal.h"

enum gp_err gp_evl_bad(struct gp_evl_rd *r, const char *field, const char *what)
{
    return gp_diag_set(r->d, GP_EINVALID, "%s: %s: %s", r->where, field, what);
}

/* field names in messages: "pod_add.pod.cpu_milli" */
static const char *path_of(char *buf, size_t n, const char *base, const char *key)
{
    snprintf(buf, n, "%s%s%s", base, base[0] ? "." : "", key);
    return buf;
}

enum gp_err gp_evl_int(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                       int64_t min, int64_t max, bool required, int64_t *out)
{
    char p[160];
    json_t *v = json_object_get(o, key);
    if (!v) {
        *out = 0;
        return required ? gp_evl_bad(r, path_of(p, sizeof p, base, key), "missing") : GP_OK;
    }
    if (!json_is_integer(v))
        return gp_evl_bad(r, path_of(p, sizeof p, base, key), "expected an integer");
    json_int_t i = json_integer_value(v);
    if (i < min || i > max) {
        char m[96];
        snprintf(m, sizeof m, "%lld is out of range (%lld to %lld)", (long long)i, (long long)min,
                 (long long)max);
        return gp_evl_bad(r, path_of(p, sizeof p, base, key), m);
    }
    *out = i;
    return GP_OK;
}

enum gp_err gp_evl_real(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                        bool required, double *out)
{
    char p[160];
    json_t *v = json_object_get(o, key);
    *out = 0;
    if (!v)
        return required ? gp_evl_bad(r, path_of(p, sizeof p, base, key), "missing") : GP_OK;
    if (!json_is_number(v))
        return gp_evl_bad(r, path_of(p, sizeof p, base, key), "expected a number");
    *out = json_number_value(v);
    return GP_OK;
}

static enum gp_err get_bool(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                            bool *out)
{
    char p[160];
    json_t *v = json_object_get(o, key);
    *out = false;
    if (!v)
        return GP_OK;
    if (!json_is_boolean(v))
        return gp_evl_bad(r, path_of(p, sizeof p, base, key), "expected true or false");
    *out = json_is_true(v);
    return GP_OK;
}

/* A string copied into the arena; NULL when absent (or null, with nullable). */
enum gp_err gp_evl_str(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                       bool required, const char **out)
{
    char p[160];
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return required ? gp_evl_bad(r, path_of(p, sizeof p, base, key), "missing") : GP_OK;
    if (!json_is_string(v))
        return gp_evl_bad(r, path_of(p, sizeof p, base, key), "expected a string");
    if (!(*out = gp_arena_strndup(r->a, json_string_value(v), json_string_length(v))))
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    return GP_OK;
}

static enum gp_err str_item(struct gp_evl_rd *r, const json_t *v, const char *field,
                            const char **out)
{
    *out = NULL;
    if (json_is_null(v))
        return GP_OK;
    if (!json_is_string(v))
        return gp_evl_bad(r, field, "expected a string or null");
    if (!(*out = gp_arena_strndup(r->a, json_string_value(v), json_string_length(v))))
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    return GP_OK;
}

static enum gp_err array_of(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                            const json_t **out)
{
    char p[160];
    json_t *v = json_object_get(o, key);
    *out = v;
    if (v && !json_is_array(v))
        return gp_evl_bad(r, path_of(p, sizeof p, base, key), "expected an array");
    return GP_OK;
}

/* An array of the log's: each item read by read into its place (size
 * bytes) of an array in the arena; absent is no items unless required; not
 * an array (or absent and required) is "FIELD: WHAT". */
struct items_how {
    const char *what;
    bool required;
    size_t size;
    enum gp_err (*read)(struct gp_evl_rd *r, const json_t *e, const char *field, void *item);
};

/* The array v read as how says (NULL for no items), its size in *n, the
 * error in *err (GP_OK or the first item's that did not read). */
static void *items_of(struct gp_evl_rd *r, const json_t *v, const char *field,
                      const struct items_how *how, size_t *n, enum gp_err *err)
{
    *n = 0;
    *err = GP_OK;
    if (!v && !how->required)
        return NULL;
    if (!json_is_array(v)) {
        *err = gp_evl_bad(r, field, how->what);
        return NULL;
    }
    size_t k = json_array_size(v);
    char *mem = k ? gp_arena_alloc(r->a, k * how->size) : NULL;
    if (k && !mem) {
        *err = gp_diag_set(r->d, GP_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < k && *err == GP_OK; i++)
        *err = how->read(r, json_array_get(v, i), field, mem + i * how->size);
    if (*err != GP_OK)
        return NULL;
    *n = k;
    return mem;
}

static enum gp_err string_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *s)
{
    return str_item(r, e, field, s);
}

static const struct items_how strings_how = {"expected an array of strings", false,
                                             sizeof(const char *), string_item};

static enum gp_err strings(struct gp_evl_rd *r, const json_t *v, const char *field,
                           const char *const **out, size_t *n)
{
    enum gp_err err;
    *out = items_of(r, v, field, &strings_how, n, &err);
    return err;
}

/* [key, value] */
static enum gp_err kv_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *item)
{
    struct gp_kv *kv = item;
    if (!json_is_array(e) || json_array_size(e) != 2)
        return gp_evl_bad(r, field, "expected an array of [key, value]");
    enum gp_err err = str_item(r, json_array_get(e, 0), field, &kv->key);
    return err != GP_OK ? err : str_item(r, json_array_get(e, 1), field, &kv->value);
}

static const struct items_how kv_how = {"expected an array of [key, value]", false,
                                        sizeof(struct gp_kv), kv_item};

/* [name, amount]: a resource beyond cpu, memory and GPUs (model.h) */
static enum gp_err scalar_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *item)
{
    struct gp_scalar *s = item;
    if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(json_array_get(e, 1)) ||
        json_integer_value(json_array_get(e, 1)) <= 0)
        return gp_evl_bad(r, field, "expected an array of [name, amount above 0]");
    s->amount = (int64_t)json_integer_value(json_array_get(e, 1));
    return str_item(r, json_array_get(e, 0), field, &s->name);
}

static const struct items_how scalars_how = {"expected an array of [name, amount]", false,
                                             sizeof(struct gp_scalar), scalar_item};

/* [ip, port, protocol] */
static enum gp_err port_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *item)
{
    struct gp_host_port *h = item;
    json_t *port = json_array_get(e, 1), *proto = json_array_get(e, 2), *ip = json_array_get(e, 0);
    if (!json_is_array(e) || json_array_size(e) != 3 || !json_is_integer(port) ||
        json_integer_value(port) < 1 || json_integer_value(port) > 65535 ||
        !json_is_integer(proto) || json_integer_value(proto) < 0 ||
        json_integer_value(proto) > GP_PROTO_SCTP)
        return gp_evl_bad(r, field, "expected an array of [ip, port 1-65535, protocol 0-2]");
    h->port = (uint16_t)json_integer_value(port);
    h->protocol = (uint8_t)json_integer_value(proto);
    h->ip = NULL;
    return json_is_null(ip) ? GP_OK : str_item(r, ip, field, &h->ip);
}

static const struct items_how ports_how = {"expected an array of [ip, port, protocol]", false,
                                           sizeof(struct gp_host_port), port_item};

/* [key, rwop]: a PersistentVolumeClaim the pod uses (model.h) */
static enum gp_err claim_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *item)
{
    struct gp_claim_use *c = item;
    if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_boolean(json_array_get(e, 1)))
        return gp_evl_bad(r, field, "expected an array of [claim, ReadWriteOncePod true/false]");
    c->rwop = json_is_true(json_array_get(e, 1));
    return str_item(r, json_array_get(e, 0), field, &c->key);
}

static const struct items_how claims_how = {"expected an array of [claim, rwop]", false,
                                            sizeof(struct gp_claim_use), claim_item};

/* [driver, name]: a CSI volume the pod's claims put on its node (model.h) */
static enum gp_err csi_volume_item(struct gp_evl_rd *r, const json_t *e, const char *field,
                                   void *item)
{
    struct gp_csi_volume *v = item;
    if (!json_is_array(e) || json_array_size(e) != 2)
        return gp_evl_bad(r, field, "expected an array of [driver, volume name]");
    enum gp_err err = str_item(r, json_array_get(e, 0), field, &v->driver);
    return err == GP_OK ? str_item(r, json_array_get(e, 1), field, &v->name) : err;
}

static const struct items_how csi_volumes_how = {"expected an array of [driver, name]", false,
                                                 sizeof(struct gp_csi_volume), csi_volume_item};

/* [driver, max]: a node's CSI volume limit (model.h) */
static enum gp_err csi_limit_item(struct gp_evl_rd *r, const json_t *e, const char *field,
                                  void *item)
{
    struct gp_csi_limit *l = item;
    const json_t *max = json_array_get(e, 1);
    if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(max) ||
        json_integer_value(max) < 0 || json_integer_value(max) > UINT32_MAX)
        return gp_evl_bad(r, field, "expected an array of [driver, count 0 or more]");
    l->max = (uint32_t)json_integer_value(max);
    return str_item(r, json_array_get(e, 0), field, &l->driver);
}

static const struct items_how csi_limits_how = {"expected an array of [driver, max]", false,
                                                sizeof(struct gp_csi_limit), csi_limit_item};

/* o's "scalars", sorted by name with each once, at most GP_MAX_SCALARS. */
static enum gp_err scalars_of(struct gp_evl_rd *r, const json_t *o, const char *field,
                              const struct gp_scalar **out, size_t *n)
{
    enum gp_err err;
    const struct gp_scalar *s =
        items_of(r, json_object_get(o, "scalars"), field, &scalars_how, n, &err);
    *out = s;
    if (err != GP_OK)
        return err;
    if (*n > GP_MAX_SCALARS)
        return gp_evl_bad(r, field, "more than 16 resources");
    for (size_t i = 1; i < *n; i++)
        if (!s[i - 1].name || !s[i].name || strcmp(s[i - 1].name, s[i].name) >= 0)
            return gp_evl_bad(r, field, "names not sorted, or one twice");
    return GP_OK;
}

static enum gp_err kv_of(struct gp_evl_rd *r, const json_t *v, const char *field,
                         const struct gp_kv **out, size_t *n)
{
    enum gp_err err;
    *out = items_of(r, v, field, &kv_how, n, &err);
    return err;
}

static enum gp_err get_kv(struct gp_evl_rd *r, const json_t *o, const char *base, const char *key,
                          const struct gp_kv **out, size_t *n)
{
    char p[160];
    return kv_of(r, json_object_get(o, key), path_of(p, sizeof p, base, key), out, n);
}

enum gp_err gp_evl_kv(struct gp_evl_rd *r, const json_t *o, const char *key,
                      const struct gp_kv **out, size_t *n)
{
    return get_kv(r, o, "", key, out, n);
}

static enum gp_err name_item(struct gp_evl_rd *r, const json_t *v, const char *field,
                             const struct gp_evl_names *t, int *out)
{
    int i = json_is_string(v) ? gp_evl_name_find(t, json_string_value(v)) : -1;
    if (i < 0) {
        char m[200];
        snprintf(m, sizeof m, "expected one of %s", t->names[0]);
        for (size_t k = 1; k < t->n; k++)
            snprintf(m + strlen(m), sizeof m - strlen(m), "%s%s", k + 1 == t->n ? " or " : ", ",
                     t->names[k]);
        return gp_evl_bad(r, field, m);
    }
    *out = i;
    return GP_OK;
}

/* n integers of v, each 0 to below - 1, into out; "FIELD: WHAT" when one is
 * not. */
static enum gp_err small_ints(struct gp_evl_rd *r, const json_t *v, const char *field,
                              json_int_t below, const char *what, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) >= below)
            return gp_evl_bad(r, field, what);
        out[i] = (uint8_t)json_integer_value(e);
    }
    return GP_OK;
}

/* A MIG layout [[profile, start], ...] of model m (NULL: any profile)
 * into *l; "FIELD: WHY" when it is not one. */
static enum gp_err layout_read(struct gp_evl_rd *r, const json_t *layout,
                               const struct gp_mig_model *m, const char *field,
                               struct gp_mig_layout *l)
{
    size_t n = json_array_size(layout);
    if (layout && !json_is_array(layout))
        return gp_evl_bad(r, field, "expected an array");
    if (n > GP_MIG_MAX_INSTANCES)
        return gp_evl_bad(r, field, "more than 8 instances");
    l->n = (uint8_t)n;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(layout, i);
        json_t *pr = json_array_get(e, 0), *st = json_array_get(e, 1);
        if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(pr) ||
            !json_is_integer(st) || json_integer_value(pr) < 0 ||
            (m && (size_t)json_integer_value(pr) >= m->nprofiles) ||
            json_integer_value(pr) >= GP_MIG_MAX_PROFILES || json_integer_value(st) < 0 ||
            json_integer_value(st) >= GP_MIG_MAX_SLICES)
            return gp_evl_bad(r, field, "expected [profile, start] pairs of the model");
        l->inst[i].profile = (uint8_t)json_integer_value(pr);
        l->inst[i].start = (uint8_t)json_integer_value(st);
    }
    char why[200];
    if (m && !gp_mig_layout_valid(m, l, why, sizeof why))
        return gp_evl_bad(r, field, why);
    return GP_OK;
}

/* --- the engine's types ---------------------------------------------------- */

enum gp_err gp_evl_pick(struct gp_evl_rd *r, const json_t *o, const char *field, struct gp_pick *p)
{
    memset(p, 0, sizeof *p);
    p->mig_profile = -1;
    if (!json_is_object(o))
        return gp_evl_bad(r, field, "expected an object");
    const json_t *g, *s;
    enum gp_err err = array_of(r, o, field, "gpus", &g);
    if (err == GP_OK)
        err = array_of(r, o, field, "mig_start", &s);
    if (err != GP_OK)
        return err;
    char p2[160];
    if (!g)
        return gp_evl_bad(r, path_of(p2, sizeof p2, field, "gpus"), "missing");
    if (json_array_size(g) > GP_MAX_GPUS_PER_NODE)
        return gp_evl_bad(r, path_of(p2, sizeof p2, field, "gpus"), "more than 16 GPUs");
    p->ngpus = (uint8_t)json_array_size(g);
    int64_t mp, rc;
    if ((err = small_ints(r, g, path_of(p2, sizeof p2, field, "gpus"), GP_MAX_GPUS_PER_NODE,
                          "expected GPU indexes 0 to 15", p->gpu, p->ngpus)) != GP_OK ||
        (err = gp_evl_int(r, o, field, "mig_profile", -1, GP_MIG_MAX_PROFILES - 1, false, &mp)) !=
            GP_OK ||
        (err = gp_evl_int(r, o, field, "reconfigured", 0, UINT16_MAX, false, &rc)) != GP_OK)
        return err;
    p->mig_profile = json_object_get(o, "mig_profile") ? (int8_t)mp : -1;
    p->reconfigured = (uint16_t)rc;
    if (p->mig_profile == -1)
        return GP_OK;
    path_of(p2, sizeof p2, field, "mig_start");
    if (!s || json_array_size(s) != p->ngpus)
        return gp_evl_bad(r, p2, "expected one start a GPU");
    return small_ints(r, s, p2, GP_MIG_MAX_SLICES, "expected memory slices 0 to 7", p->mig_start,
                      p->ngpus);
}

/* mig_gpu_layouts: each GPU's own layout (gpus of them, of the model) or
 * absent. */
static enum gp_err gpu_layouts_read(struct gp_evl_rd *r, const json_t *o, struct gp_sharing_spec *s,
                                    const char *field, uint32_t gpus)
{
    char p[160], pi[180];
    const json_t *own;
    enum gp_err err = array_of(r, o, field, "mig_gpu_layouts", &own);
    if (err != GP_OK || !own)
        return err;
    path_of(p, sizeof p, field, "mig_gpu_layouts");
    if (!s->mig.model || s->mig.dynamic || json_array_size(own) != gpus || gpus == 0) {
        snprintf(pi, sizeof pi, "expected %u layouts (one a GPU) of a MIG model, not dynamic",
                 (unsigned)gpus);
        return gp_evl_bad(r, p, pi);
    }
    struct gp_mig_layout *l = gp_arena_alloc(r->a, gpus * sizeof *l);
    if (!l)
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    for (uint32_t g = 0; g < gpus; g++) {
        snprintf(pi, sizeof pi, "%s[%u]", p, (unsigned)g);
        if ((err = layout_read(r, json_array_get(own, g), s->mig.model, pi, &l[g])) != GP_OK)
            return err;
    }
    s->mig.gpu_layouts = l;
    return GP_OK;
}

/* gpus: the node's GPUs */
static enum gp_err sharing_of(struct gp_evl_rd *r, const json_t *o, const char *field,
                              uint32_t gpus, const struct gp_sharing_spec **out)
{
    *out = NULL;
    if (!o)
        return GP_OK;
    if (!json_is_object(o))
        return gp_evl_bad(r, field, "expected an object");
    struct gp_sharing_spec *s = gp_arena_alloc(r->a, sizeof *s);
    if (!s)
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    char p[160];
    int mode;
    enum gp_err err = name_item(r, json_object_get(o, "mode"), path_of(p, sizeof p, field, "mode"),
                                &gp_evl_modes, &mode);
    if (err != GP_OK)
        return err;
    s->mode = (enum gp_share_mode)mode;
    GP_EVL_U32(r, o, field, "replicas", false, s->replicas);
    GP_EVL_U32(r, o, field, "mps_active_thread_pct", false, s->mps.active_thread_pct);
    GP_EVL_U32(r, o, field, "mps_pinned_mem_mib", false, s->mps.pinned_mem_mib);
    const char *strategy, *model;
    const json_t *layout;
    if ((err = get_bool(r, o, field, "rename_by_default", &s->rename_by_default)) != GP_OK ||
        (err = get_bool(r, o, field, "fail_requests_greater_than_one",
                        &s->fail_requests_greater_than_one)) != GP_OK ||
        (err = get_bool(r, o, field, "oversubscribe", &s->oversubscribe)) != GP_OK ||
        (err = get_bool(r, o, field, "distinct_replicas", &s->distinct_replicas)) != GP_OK ||
        (err = gp_evl_str(r, o, field, "mig_strategy", false, &strategy)) != GP_OK ||
        (err = gp_evl_str(r, o, field, "mig_model", false, &model)) != GP_OK ||
        (err = gp_evl_str(r, o, field, "mig_config", false, &s->mig.config)) != GP_OK ||
        (err = get_bool(r, o, field, "mig_dynamic", &s->mig.dynamic)) != GP_OK ||
        (err = gp_evl_real(r, o, field, "mig_reconfigure_s", false, &s->mig.reconfigure_s)) !=
            GP_OK ||
        (err = array_of(r, o, field, "mig_layout", &layout)) != GP_OK)
        return err;
    s->mig.strategy = strategy && strcmp(strategy, "single") == 0 ? GP_MIG_SINGLE : GP_MIG_MIXED;
    for (size_t i = 0; model && i < gp_mig_nmodels && !s->mig.model; i++)
        if (strcmp(gp_mig_models[i].id, model) == 0)
            s->mig.model = &gp_mig_models[i];
    if (model && !s->mig.model)
        return gp_evl_bad(r, path_of(p, sizeof p, field, "mig_model"),
                          "not a MIG model of the data");
    if ((err = layout_read(r, layout, s->mig.model, path_of(p, sizeof p, field, "mig_layout"),
                           &s->mig.layout)) != GP_OK ||
        (err = gpu_layouts_read(r, o, s, field, gpus)) != GP_OK)
        return err;
    /* what the Cluster spec's reader checks (io/cluster_sharing.c): the
     * engine takes a sharing spec as valid */
    bool replicated = s->mode == GP_SHARE_TIMESLICE || s->mode == GP_SHARE_MPS;
    uint32_t most = s->mode == GP_SHARE_MPS ? GP_MPS_MAX_CLIENTS : GP_SHARE_MAX_REPLICAS;
    if (replicated && (s->replicas < 1 || s->replicas > most)) {
        char m[96];
        snprintf(m, sizeof m, "expected 1 to %u replicas for mode %s", (unsigned)most,
                 gp_share_mode_name(s->mode));
        return gp_evl_bad(r, path_of(p, sizeof p, field, "replicas"), m);
    }
    if (!replicated)
        s->replicas = 1;
    if (s->mode == GP_SHARE_MIG && !s->mig.model)
        return gp_evl_bad(r, path_of(p, sizeof p, field, "mig_model"), "missing (mode mig)");
    if (s->mps.active_thread_pct > 100)
        return gp_evl_bad(r, path_of(p, sizeof p, field, "mps_active_thread_pct"),
                          "expected 0 to 100");
    *out = s;
    return GP_OK;
}

/* [key, value, effect] */
static enum gp_err taint_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *item)
{
    struct gp_taint *t = item;
    int eff;
    enum gp_err err;
    if (!json_is_array(e) || json_array_size(e) != 3)
        return gp_evl_bad(r, field, "expected [key, value, effect]");
    if ((err = str_item(r, json_array_get(e, 0), field, &t->key)) != GP_OK ||
        (err = str_item(r, json_array_get(e, 1), field, &t->value)) != GP_OK ||
        (err = name_item(r, json_array_get(e, 2), field, &gp_evl_effects, &eff)) != GP_OK)
        return err;
    t->effect = (enum gp_taint_effect)eff;
    return GP_OK;
}

static const struct items_how taints_how = {"expected an array", false, sizeof(struct gp_taint),
                                            taint_item};

enum gp_err gp_evl_node(struct gp_evl_rd *r, const json_t *o, struct gp_node_spec *n)
{
    static const char *const f = "node";
    memset(n, 0, sizeof *n);
    if (!json_is_object(o))
        return gp_evl_bad(r, f, o ? "expected an object" : "missing");
    enum gp_err err;
    if ((err = gp_evl_str(r, o, f, "name", true, &n->name)) != GP_OK ||
        (err = gp_evl_str(r, o, f, "pool", false, &n->pool)) != GP_OK ||
        (err = gp_evl_str(r, o, f, "gpu_model", false, &n->gpu_model)) != GP_OK ||
        (err = gp_evl_int(r, o, f, "cpu_milli", INT64_MIN, INT64_MAX, false, &n->cpu_milli)) !=
            GP_OK ||
        (err = gp_evl_int(r, o, f, "mem_mib", INT64_MIN, INT64_MAX, false, &n->mem_mib)) != GP_OK)
        return err;
    GP_EVL_U32(r, o, f, "gpu_count", false, n->gpu_count);
    if (n->gpu_count > GP_MAX_GPUS_PER_NODE)
        return gp_evl_bad(r, "node.gpu_count", "more than 16 GPUs");
    GP_EVL_U32(r, o, f, "gpu_mem_mib", false, n->gpu_mem_mib);
    GP_EVL_U32(r, o, f, "nvlink_gpus", false, n->nvlink_gpus);
    GP_EVL_U32(r, o, f, "driver_version", false, n->driver_version);
    if ((err = get_kv(r, o, f, "labels", &n->labels, &n->nlabels)) != GP_OK ||
        (err = gp_evl_real(r, o, f, "price_per_hour_usd", false, &n->price_per_hour_usd)) !=
            GP_OK ||
        (err = sharing_of(r, json_object_get(o, "sharing"), "node.sharing", n->gpu_count,
                          &n->sharing)) != GP_OK)
        return err;
    if (n->sharing && n->sharing->mode != GP_SHARE_EXCLUSIVE && n->gpu_count == 0)
        return gp_evl_bad(r, "node.sharing", "sharing needs GPUs (gpu_count is 0)");
    n->taints =
        items_of(r, json_object_get(o, "taints"), "node.taints", &taints_how, &n->ntaints, &err);
    const json_t *pm = json_object_get(o, "pods_max");
    if (err == GP_OK && pm) {
        if (!json_is_integer(pm) || json_integer_value(pm) < 0 ||
            json_integer_value(pm) > UINT32_MAX)
            return gp_evl_bad(r, "node.pods_max", "expected a count");
        n->pods_limited = true;
        n->pods_max = (uint32_t)json_integer_value(pm);
    }
    if (err == GP_OK)
        err = scalars_of(r, o, "node.scalars", &n->scalars, &n->nscalars);
    if (err == GP_OK)
        n->csi_limits = items_of(r, json_object_get(o, "csi_limits"), "node.csi_limits",
                                 &csi_limits_how, &n->ncsi_limits, &err);
    return err;
}

/* --- a pod's affinity and spreading ---------------------------------------- */

/* [key, op, values] */
static enum gp_err expr_item(struct gp_evl_rd *r, const json_t *e, const char *field, void *item)
{
    struct gp_match_expr *x = item;
    int op;
    enum gp_err err;
    if (!json_is_array(e) || json_array_size(e) != 3)
        return gp_evl_bad(r, field, "expected an array of [key, op, values]");
    if ((err = str_item(r, json_array_get(e, 0), field, &x->key)) != GP_OK ||
        (err = name_item(r, json_array_get(e, 1), field, &gp_evl_match_ops, &op)) != GP_OK ||
        (err = strings(r, json_array_get(e, 2), field, &x->values, &x->nvalues)) != GP_OK)
        return err;
    x->op = (enum gp_match_op)op;
    return GP_OK;
}

static const struct items_how exprs_how = {"expected an array of [key, op, values]", true,
                                           sizeof(struct gp_match_expr), expr_item};

static enum gp_err exprs_of(struct gp_evl_rd *r, const json_t *v, const char *field,
                            const struct gp_match_expr **out, size_t *n)
{
    enum gp_err err;
    *out = items_of(r, v, field, &exprs_how, n, &err);
    return err;
}

static enum gp_err weight_of(struct gp_evl_rd *r, const json_t *o, const char *field, int32_t *w)
{
    int64_t v;
    enum gp_err err = gp_evl_int(r, o, field, "weight", INT32_MIN, INT32_MAX, false, &v);
    *w = (int32_t)v;
    return err;
}

static enum gp_err node_term_item(struct gp_evl_rd *r, const json_t *e, const char *field,
                                  void *item)
{
    struct gp_node_term *t = item;
    enum gp_err err;
    if (!json_is_object(e))
        return gp_evl_bad(r, field, "expected an array of terms");
    if ((err = exprs_of(r, json_object_get(e, "labels"), field, &t->labels, &t->nlabels)) !=
            GP_OK ||
        (err = exprs_of(r, json_object_get(e, "fields"), field, &t->fields, &t->nfields)) != GP_OK)
        return err;
    return weight_of(r, e, field, &t->weight);
}

static const struct items_how node_terms_how = {"expected an array of terms", true,
                                                sizeof(struct gp_node_term), node_term_item};

static enum gp_err node_terms_of(struct gp_evl_rd *r, const json_t *v, const char *field,
                                 const struct gp_node_term **out, size_t *n)
{
    enum gp_err err;
    *out = items_of(r, v, field, &node_terms_how, n, &err);
    return err;
}

static enum gp_err selector_of(struct gp_evl_rd *r, const json_t *v, const char *field,
                               struct gp_label_selector *s)
{
    memset(s, 0, sizeof *s);
    if (!v || json_is_null(v))
        return GP_OK;
    if (!json_is_object(v))
        return gp_evl_bad(r, field, "expected a selector or null");
    s->set = true;
    enum gp_err err = kv_of(r, json_object_get(v, "labels"), field, &s->labels, &s->nlabels);
    return err != GP_OK ? err
                        : exprs_of(r, json_object_get(v, "exprs"), field, &s->exprs, &s->nexprs);
}

static enum gp_err pod_term_item(struct gp_evl_rd *r, const json_t *e, const char *field,
                                 void *item)
{
    struct gp_pod_term *t = item;
    enum gp_err err;
    if (!json_is_object(e))
        return gp_evl_bad(r, field, "expected an array of terms");
    if ((err = selector_of(r, json_object_get(e, "selector"), field, &t->selector)) != GP_OK ||
        (err = strings(r, json_object_get(e, "namespaces"), field, &t->namespaces,
                       &t->nnamespaces)) != GP_OK ||
        (err = selector_of(r, json_object_get(e, "ns_selector"), field, &t->ns_selector)) !=
            GP_OK ||
        (err = gp_evl_str(r, e, field, "topology_key", false, &t->topology_key)) != GP_OK)
        return err;
    return weight_of(r, e, field, &t->weight);
}

static const struct items_how pod_terms_how = {"expected an array of terms", true,
                                               sizeof(struct gp_pod_term), pod_term_item};

static enum gp_err pod_terms_of(struct gp_evl_rd *r, const json_t *v, const char *field,
                                const struct gp_pod_term **out, size_t *n)
{
    enum gp_err err;
    *out = items_of(r, v, field, &pod_terms_how, n, &err);
    return err;
}

static enum gp_err spread_item(struct gp_evl_rd *r, const json_t *e, const char *f, void *item)
{
    struct gp_spread *s = item;
    int64_t skew, mind;
    enum gp_err err;
    if (!json_is_object(e))
        return gp_evl_bad(r, f, "spread: expected an array of objects");
    if ((err = gp_evl_int(r, e, f, "max_skew", INT32_MIN, INT32_MAX, false, &skew)) != GP_OK ||
        (err = gp_evl_int(r, e, f, "min_domains", INT32_MIN, INT32_MAX, false, &mind)) != GP_OK ||
        (err = gp_evl_str(r, e, f, "topology_key", false, &s->topology_key)) != GP_OK ||
        (err = get_bool(r, e, f, "schedule_anyway", &s->schedule_anyway)) != GP_OK ||
        (err = get_bool(r, e, f, "ignore_affinity", &s->ignore_affinity)) != GP_OK ||
        (err = get_bool(r, e, f, "honor_taints", &s->honor_taints)) != GP_OK ||
        (err = selector_of(r, json_object_get(e, "selector"), f, &s->selector)) != GP_OK)
        return err;
    s->max_skew = (int32_t)skew;
    s->min_domains = (int32_t)mind;
    return GP_OK;
}

static const struct items_how spread_how = {"spread: expected an array", true,
                                            sizeof(struct gp_spread), spread_item};

/* {zone, terms} (kube/volumes.c's conditions of a pod's volumes) */
static enum gp_err volume_item(struct gp_evl_rd *r, const json_t *e, const char *f, void *item)
{
    struct gp_volume_terms *v = item;
    enum gp_err err;
    if (!json_is_object(e))
        return gp_evl_bad(r, f, "volumes: expected an array of objects");
    if ((err = get_bool(r, e, f, "zone", &v->zone)) != GP_OK ||
        (err = get_bool(r, e, f, "bind", &v->bind)) != GP_OK)
        return err;
    return node_terms_of(r, json_object_get(e, "terms"), f, &v->terms, &v->nterms);
}

static const struct items_how volumes_how = {"volumes: expected an array", false,
                                             sizeof(struct gp_volume_terms), volume_item};

static enum gp_err constraints_of(struct gp_evl_rd *r, const json_t *o,
                                  const struct gp_pod_constraints **out)
{
    static const char *const f = "pod.constraints";
    *out = NULL;
    if (!o)
        return GP_OK;
    if (!json_is_object(o))
        return gp_evl_bad(r, f, "expected an object");
    struct gp_pod_constraints *c = gp_arena_alloc(r->a, sizeof *c);
    if (!c)
        return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
    enum gp_err err;
    if ((err = node_terms_of(r, json_object_get(o, "node_required"), f, &c->node_required,
                             &c->nnode_required)) != GP_OK ||
        (err = node_terms_of(r, json_object_get(o, "node_preferred"), f, &c->node_preferred,
                             &c->nnode_preferred)) != GP_OK ||
        (err = pod_terms_of(r, json_object_get(o, "affinity"), f, &c->affinity, &c->naffinity)) !=
            GP_OK ||
        (err = pod_terms_of(r, json_object_get(o, "affinity_preferred"), f, &c->affinity_preferred,
                            &c->naffinity_preferred)) != GP_OK ||
        (err = pod_terms_of(r, json_object_get(o, "anti"), f, &c->anti, &c->nanti)) != GP_OK ||
        (err = pod_terms_of(r, json_object_get(o, "anti_preferred"), f, &c->anti_preferred,
                            &c->nanti_preferred)) != GP_OK)
        return err;
    c->spread = items_of(r, json_object_get(o, "spread"), f, &spread_how, &c->nspread, &err);
    if (err == GP_OK)
        c->volumes =
            items_of(r, json_object_get(o, "volumes"), f, &volumes_how, &c->nvolumes, &err);
    if (err != GP_OK)
        return err;
    *out = c;
    return GP_OK;
}

/* [key, value, exists, effect] */
static enum gp_err toleration_item(struct gp_evl_rd *r, const json_t *e, const char *f, void *item)
{
    struct gp_toleration *t = item;
    json_t *eff = json_array_get(e, 3);
    enum gp_err err;
    if (!json_is_array(e) || json_array_size(e) != 4 || !json_is_boolean(json_array_get(e, 2)))
        return gp_evl_bad(r, f, "expected [key, value, exists, effect]");
    if ((err = str_item(r, json_array_get(e, 0), f, &t->key)) != GP_OK ||
        (err = str_item(r, json_array_get(e, 1), f, &t->value)) != GP_OK)
        return err;
    t->op_exists = json_is_true(json_array_get(e, 2));
    t->any_effect = json_is_string(eff) && json_string_value(eff)[0] == '\0';
    int x = 0;
    if (!t->any_effect && (err = name_item(r, eff, f, &gp_evl_effects, &x)) != GP_OK)
        return err;
    t->effect = (enum gp_taint_effect)x;
    return GP_OK;
}

static const struct items_how tolerations_how = {"expected an array", false,
                                                 sizeof(struct gp_toleration), toleration_item};

static enum gp_err tolerations_of(struct gp_evl_rd *r, const json_t *o, struct gp_pod_spec *p)
{
    enum gp_err err;
    p->tolerations = items_of(r, json_object_get(o, "tolerations"), "pod.tolerations",
                              &tolerations_how, &p->ntolerations, &err);
    return err;
}

enum gp_err gp_evl_pod(struct gp_evl_rd *r, const json_t *o, struct gp_pod_spec *p)
{
    static const char *const f = "pod";
    memset(p, 0, sizeof *p);
    if (!json_is_object(o))
        return gp_evl_bad(r, f, o ? "expected an object" : "missing");
    enum gp_err err;
    int64_t prio, modes, res;
    if ((err = gp_evl_str(r, o, f, "name", false, &p->name)) != GP_OK ||
        (err = gp_evl_int(r, o, f, "cpu_milli", INT64_MIN, INT64_MAX, false, &p->cpu_milli)) !=
            GP_OK ||
        (err = gp_evl_int(r, o, f, "mem_mib", INT64_MIN, INT64_MAX, false, &p->mem_mib)) != GP_OK ||
        (err = gp_evl_int(r, o, f, "priority", INT32_MIN, INT32_MAX, false, &prio)) != GP_OK ||
        (err = gp_evl_int(r, o, f, "share_modes", 0, UINT8_MAX, false, &modes)) != GP_OK ||
        (err = gp_evl_int(r, o, f, "gpu_resource", 0, GP_GPU_RES_NONE, false, &res)) != GP_OK)
        return err;
    p->priority = (int32_t)prio;
    p->share_modes = (uint8_t)modes;
    p->gpu_resource = (uint8_t)res;
    GP_EVL_U32(r, o, f, "gpu_count", false, p->gpu_count);
    GP_EVL_U32(r, o, f, "gpu_milli", false, p->gpu_milli);
    GP_EVL_U32(r, o, f, "gpu_mem_mib", false, p->gpu_mem_mib);
    GP_EVL_U32(r, o, f, "gpu_container_max", false, p->gpu_container_max);
    GP_EVL_U32(r, o, f, "queue", false, p->queue);
    GP_EVL_U32(r, o, f, "group", false, p->group);
    GP_EVL_U32(r, o, f, "cuda_driver_min", false, p->cuda_driver_min);
    if ((err = strings(r, json_object_get(o, "gpu_models"), "pod.gpu_models", &p->gpu_models,
                       &p->ngpu_models)) != GP_OK ||
        (err = get_kv(r, o, f, "node_selector", &p->node_selector, &p->nnode_selector)) != GP_OK ||
        (err = tolerations_of(r, o, p)) != GP_OK ||
        (err = get_bool(r, o, f, "preempt_never", &p->preempt_never)) != GP_OK ||
        (err = gp_evl_real(r, o, f, "duration_hint_s", false, &p->duration_hint_s)) != GP_OK ||
        (err = gp_evl_str(r, o, f, "mig_profile", false, &p->mig_profile)) != GP_OK ||
        (err = gp_evl_str(r, o, f, "namespace", false, &p->namespace_name)) != GP_OK ||
        (err = get_kv(r, o, f, "labels", &p->labels, &p->nlabels)) != GP_OK ||
        (err = constraints_of(r, json_object_get(o, "constraints"), &p->constraints)) != GP_OK ||
        (err = gp_evl_str(r, o, f, "cuda_version", false, &p->cuda_version)) != GP_OK ||
        (err = scalars_of(r, o, "pod.scalars", &p->scalars, &p->nscalars)) != GP_OK)
        return err;
    p->host_ports = items_of(r, json_object_get(o, "host_ports"), "pod.host_ports", &ports_how,
                             &p->nhost_ports, &err);
    if (err != GP_OK)
        return err;
    p->claims =
        items_of(r, json_object_get(o, "claims"), "pod.claims", &claims_how, &p->nclaims, &err);
    if (err != GP_OK)
        return err;
    p->csi_volumes = items_of(r, json_object_get(o, "csi_volumes"), "pod.csi_volumes",
                              &csi_volumes_how, &p->ncsi_volumes, &err);
    return err;
}

static enum gp_err quota_of(struct gp_evl_rd *r, const json_t *o, const char *key,
                            struct gp_quota *q)
{
    memset(q, 0, sizeof *q);
    json_t *v = json_object_get(o, key);
    if (!v)
        return GP_OK;
    char p[160];
    if (!json_is_array(v) || json_array_size(v) != 3 || !json_is_integer(json_array_get(v, 0)) ||
        !json_is_integer(json_array_get(v, 1)) || !json_is_boolean(json_array_get(v, 2)))
        return gp_evl_bad(r, path_of(p, sizeof p, "queue", key),
                          "expected [guaranteed, borrow_limit, limited]");
    q->guaranteed = json_integer_value(json_array_get(v, 0));
    q->borrow_limit = json_integer_value(json_array_get(v, 1));
    q->limited = json_is_true(json_array_get(v, 2));
    return GP_OK;
}

/* [model, guaranteed, borrow_limit, limited] */
static enum gp_err model_item(struct gp_evl_rd *r, const json_t *e, const char *f, void *item)
{
    struct gp_model_quota *m = item;
    enum gp_err err = GP_OK;
    if (!json_is_array(e) || json_array_size(e) != 4 || !json_is_integer(json_array_get(e, 1)) ||
        !json_is_integer(json_array_get(e, 2)) || !json_is_boolean(json_array_get(e, 3)) ||
        (err = str_item(r, json_array_get(e, 0), f, &m->model)) != GP_OK)
        return err != GP_OK
                   ? err
                   : gp_evl_bad(r, f, "expected [model, guaranteed, borrow_limit, limited]");
    m->gpu_milli.guaranteed = json_integer_value(json_array_get(e, 1));
    m->gpu_milli.borrow_limit = json_integer_value(json_array_get(e, 2));
    m->gpu_milli.limited = json_is_true(json_array_get(e, 3));
    return GP_OK;
}

static const struct items_how models_how = {"expected an array", false,
                                            sizeof(struct gp_model_quota), model_item};

enum gp_err gp_evl_queue(struct gp_evl_rd *r, const json_t *o, struct gp_queue_spec *q)
{
    static const char *const f = "queue";
    memset(q, 0, sizeof *q);
    if (!json_is_object(o))
        return gp_evl_bad(r, f, o ? "expected an object" : "missing");
    enum gp_err err;
    GP_EVL_U32(r, o, f, "parent", false, q->parent);
    if ((err = gp_evl_str(r, o, f, "name", true, &q->name)) != GP_OK ||
        (err = gp_evl_real(r, o, f, "weight", false, &q->weight)) != GP_OK ||
        (err = quota_of(r, o, "gpu_milli", &q->gpu_milli)) != GP_OK ||
        (err = quota_of(r, o, "cpu_milli", &q->cpu_milli)) != GP_OK ||
        (err = quota_of(r, o, "mem_mib", &q->mem_mib)) != GP_OK ||
        (err = get_bool(r, o, f, "no_preempt_within", &q->no_preempt_within)) != GP_OK ||
        (err = get_bool(r, o, f, "not_reclaimable", &q->not_reclaimable)) != GP_OK ||
        (err = gp_evl_real(r, o, f, "min_runtime_s", false, &q->min_runtime_s)) != GP_OK)
        return err;
    q->models =
        items_of(r, json_object_get(o, "models"), "queue.models", &models_how, &q->nmodels, &err);
    return err;
}

enum gp_err gp_evl_group(struct gp_evl_rd *r, const json_t *o, struct gp_group_spec *g)
{
    static const char *const f = "group";
    memset(g, 0, sizeof *g);
    if (!json_is_object(o))
        return gp_evl_bad(r, f, o ? "expected an object" : "missing");
    GP_EVL_U32(r, o, f, "min_member", false, g->min_member);
    enum gp_err err;
    if ((err = gp_evl_str(r, o, f, "name", false, &g->name)) != GP_OK ||
        (err = gp_evl_str(r, o, f, "topology_key", false, &g->topology_key)) != GP_OK)
        return err;
    return get_bool(r, o, f, "topology_required", &g->topology_required);
}

enum gp_err gp_evl_decision(struct gp_evl_rd *r, const json_t *o, struct gp_evlog_event *ev)
{
    struct gp_decision *d = &ev->dec;
    memset(d, 0, sizeof *d);
    d->quota_queue = GP_QUEUE_NONE;
    int kind;
    enum gp_err err = name_item(r, json_object_get(o, "kind"), "kind", &gp_evl_kinds, &kind);
    if (err != GP_OK)
        return err;
    d->kind = (enum gp_decision_kind)kind;
    GP_EVL_U32(r, o, "", "i", true, ev->index);
    GP_EVL_U32(r, o, "", "pod", true, d->pod);
    if (d->kind == GP_DECISION_UNSCHEDULABLE) {
        GP_EVL_U32(r, o, "", "nodes", true, d->explain.nodes_total);
        json_t *rej = json_object_get(o, "rejected"), *v;
        const char *k;
        if (rej && !json_is_object(rej))
            return gp_evl_bad(r, "rejected", "expected an object of filter: nodes");
        json_object_foreach(rej, k, v)
        {
            unsigned f = 0;
            while (f < GP_FILTER_COUNT && strcmp(gp_filter_name((enum gp_filter)f), k) != 0)
                f++;
            char p[160];
            if (f == GP_FILTER_COUNT)
                return gp_evl_bad(r, path_of(p, sizeof p, "rejected", k), "not a filter's name");
            GP_EVL_U32(r, rej, "rejected", k, true, d->explain.rejected[f]);
        }
        int gang = GP_GANG_NONE;
        if (json_object_get(o, "gang") &&
            (err = name_item(r, json_object_get(o, "gang"), "gang", &gp_evl_gangs, &gang)) != GP_OK)
            return err;
        d->gang = (enum gp_gang_wait)gang;
        if (json_object_get(o, "quota_queue"))
            GP_EVL_U32(r, o, "", "quota_queue", true, d->quota_queue);
        return GP_OK;
    }
    GP_EVL_U32(r, o, "", "node", true, d->node);
    if ((err = gp_evl_pick(r, json_object_get(o, "pick"), "pick", &d->pick)) != GP_OK)
        return err;
    if (d->kind == GP_DECISION_EVICT) {
        int why;
        if ((err = name_item(r, json_object_get(o, "reason"), "reason", &gp_evl_evicts, &why)) !=
            GP_OK)
            return err;
        d->evict = (uint8_t)why;
        GP_EVL_U32(r, o, "", "by", true, d->by);
    }
    return GP_OK;
}
