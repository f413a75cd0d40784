/* k8s_schema.c - the strict walk: one manifest object checked against the
 * fields Kubernetes defines for its kind (k8s_fields.c, generated from
 * data/k8s-fields.txt) and against what gpuplane does with them (the model
 * table, k8s_model.c), before the reader reads it. It finds unknown fields
 * (with the nearest valid name), misspelt gpuplane annotations, labels and
 * domains, unknown resource names and objects defined twice, and records a
 * warning for each field the simulation does not model. */
#include "io/k8s_schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/mig.h"
#include "util/strdist.h"

#define KEY_MAX 128 /* longer keys are shown and compared shortened */

static const char *const DOMAINS[] = {"gpuplane.io", "sim.gpuplane.io"};

/* Which gpuplane keys an object's metadata may hold. */
enum role {
    ROLE_POD,      /* Pod, Job, Deployment (and their templates) */
    ROLE_PODGROUP, /* PodGroup, both CRDs */
    ROLE_OTHER,    /* Queue, PriorityClass, List */
};

/* Where the walk is: the path is kept as frames (keys point at the
 * callers' copies) and written out only for a message, so that a valid
 * object costs no formatting. */
#define WALK_DEPTH 64

struct frame {
    const char *key; /* NULL: a list index */
    size_t index;
    struct fy_node *node;
};

struct walk {
    struct gp_yaml *y; /* its path is the object's root ("Job/train") */
    struct gp_workload *w;
    enum role role;
    const char *kind; /* for messages: "a Job's" */
    struct frame frames[WALK_DEPTH];
    size_t depth;
};

/* --- lookups --------------------------------------------------------------- */

int gp_k8s_type_find(const char *name)
{
    size_t lo = 0, hi = gp_k8s_ntypes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, gp_k8s_types[mid].name);
        if (c == 0)
            return (int)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

const struct gp_k8s_field *gp_k8s_field_find(unsigned t, const char *name)
{
    const struct gp_k8s_field *f = &gp_k8s_fields[gp_k8s_types[t].first];
    size_t lo = 0, hi = gp_k8s_types[t].count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, f[mid].name);
        if (c == 0)
            return &f[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* A scalar's text as a C string in buf (shortened to fit); false for
 * anything else. */
static bool key_text(struct fy_node *n, char *buf, size_t size)
{
    if (!n || !fy_node_is_scalar(n) || fy_node_is_alias(n))
        return false;
    size_t len;
    const char *s = fy_node_get_scalar(n, &len);
    if (!s)
        s = "", len = 0;
    if (len >= size)
        len = size - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return true;
}

static bool push(struct walk *k, const char *key, size_t index, struct fy_node *node)
{
    if (k->depth == WALK_DEPTH)
        return false; /* deeper than any Kubernetes type: not walked */
    k->frames[k->depth++] = (struct frame){key, index, node};
    return true;
}

static void pop(struct walk *k)
{
    k->depth--;
}

/* Writes the frames into y's path (and position); gp_yaml_pop(y, the
 * returned) takes them back. */
static struct gp_yaml_saved render(struct walk *k)
{
    struct gp_yaml *y = k->y;
    struct gp_yaml_saved root = {y->plen, y->line, y->col};
    for (size_t i = 0; i < k->depth; i++) {
        const struct frame *f = &k->frames[i];
        if (f->key)
            gp_yaml_push_key(y, f->key, f->node);
        else
            gp_yaml_push_index(y, f->index, f->node);
    }
    return root;
}

/* gp_yaml_fail at the current frame: "FILE:LINE:COL: PATH: MESSAGE". */
static enum gp_err fail(struct walk *k, struct fy_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum gp_err fail(struct walk *k, struct fy_node *at, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    render(k); /* the walk stops: gp_k8s_validate restores the path */
    return gp_yaml_fail(k->y, at, GP_EINVALID, "%s", msg);
}

/* A list of names for a message, cut with ", ..." where it would not fit. */
struct names {
    char buf[340];
    size_t len;
    bool full;
};

static void names_add(struct names *l, const char *name)
{
    size_t n = strlen(name);
    if (l->full)
        return;
    if (l->len + n + 2 + sizeof ", ..." >= sizeof l->buf) {
        memcpy(l->buf + l->len, ", ...", sizeof ", ...");
        l->len += sizeof ", ..." - 1;
        l->full = true;
        return;
    }
    if (l->len) {
        memcpy(l->buf + l->len, ", ", 2);
        l->len += 2;
    }
    memcpy(l->buf + l->len, name, n + 1);
    l->len += n;
}

/* --- warnings -------------------------------------------------------------- */

static enum gp_err oom(struct walk *k)
{
    return gp_diag_set(k->y->diag, GP_ENOMEM, "%s: out of memory", k->y->name);
}

/* Warns about the field at the current path once per model row (NULL: a
 * field without a row, warned about every time). */
static enum gp_err warn_row(struct walk *k, const struct gp_k8s_model *row)
{
    if (row) {
        size_t i = (size_t)(row - gp_k8s_model);
        uint64_t bit = UINT64_C(1) << (i % 64);
        if (k->w->warned[i / 64] & bit)
            return GP_OK;
        k->w->warned[i / 64] |= bit;
    }
    const char *assumes =
        row && row->assumes ? row->assumes : "gpuplane does not read it (no row in k8s_model.c)";
    struct gp_yaml_saved root = render(k);
    enum gp_err err = gp_workload_warn(k->w, k->y->arena, "%s:%d: %s is not simulated; %s",
                                       k->y->name, k->y->line, k->y->path, assumes);
    gp_yaml_pop(k->y, root);
    return err == GP_OK ? GP_OK : oom(k);
}

/* --- gpuplane's keys and domains ------------------------------------------ */

/* The gpuplane domain within 2 edits of the key's domain (not equal), or
 * NULL; *len gets the key's domain length. */
static const char *domain_typo(const char *key, size_t *len)
{
    const char *slash = strchr(key, '/');
    if (!slash || slash == key || (size_t)(slash - key) >= KEY_MAX)
        return NULL;
    char dom[KEY_MAX];
    size_t n = (size_t)(slash - key);
    *len = n;
    if (n + 2 < 11 || n > 15 + 2) /* two edits change the length by two at most */
        return NULL;
    for (size_t i = 0; i < n; i++)
        dom[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a' : key[i]);
    dom[n] = '\0';
    const char *best = NULL;
    unsigned best_d = 3;
    for (size_t i = 0; i < sizeof DOMAINS / sizeof DOMAINS[0]; i++)
        if (strcmp(dom, DOMAINS[i]) == 0 && memcmp(key, DOMAINS[i], n) == 0)
            return NULL; /* spelt right */
    for (size_t i = 0; i < sizeof DOMAINS / sizeof DOMAINS[0]; i++) {
        unsigned d = gp_strdist_max(dom, DOMAINS[i], 2);
        if (d < best_d) {
            best_d = d;
            best = DOMAINS[i];
        }
    }
    return best;
}

static bool our_domain(const char *key)
{
    return strncmp(key, "gpuplane.io/", 12) == 0 || strncmp(key, "sim.gpuplane.io/", 16) == 0;
}

static const char *place_name(unsigned place)
{
    return place == GP_K8S_POD_LABEL        ? "the labels of a Pod, Job or Deployment"
           : place == GP_K8S_POD_ANNOTATION ? "the annotations of a Pod, Job or Deployment"
                                            : "the annotations of a PodGroup";
}

/* The nearest key allowed in `place` to key, or NULL if none is close. */
static const char *nearest_key(const char *key, unsigned place)
{
    const char *best = NULL;
    unsigned best_d = ~0u;
    for (size_t i = 0; i < gp_k8s_nkeys; i++) {
        if (!(gp_k8s_keys[i].places & place))
            continue;
        unsigned d = gp_strdist(key, gp_k8s_keys[i].key);
        if (d < best_d) {
            best_d = d;
            best = gp_k8s_keys[i].key;
        }
    }
    return best && gp_strdist_close(key, best_d) ? best : NULL;
}

/* A gpuplane key the reader does not read in this place. */
static enum gp_err unknown_key(struct walk *k, struct fy_node *kn, const char *key, unsigned place,
                               const char *what)
{
    for (size_t i = 0; i < gp_k8s_nkeys; i++)
        if (strcmp(gp_k8s_keys[i].key, key) == 0)
            return fail(k, kn, "%s belongs in %s, not here", key,
                        place_name(gp_k8s_keys[i].places));
    const char *near = place ? nearest_key(key, place) : NULL;
    if (near)
        return fail(k, kn, "unknown gpuplane %s; did you mean \"%s\"?", what, near);
    if (!place)
        return fail(k, kn, "gpuplane reads no %s on a %s", what, k->kind);
    struct names list = {"", 0, false};
    for (size_t i = 0; i < gp_k8s_nkeys; i++)
        if (gp_k8s_keys[i].places & place)
            names_add(&list, gp_k8s_keys[i].key);
    return fail(k, kn, "unknown gpuplane %s (expected one of: %s)", what, list.buf);
}

/* The keys of labels, annotations or a node selector: gpuplane's domains
 * spelt right and, in labels and annotations (place != 0 or names_checked),
 * gpuplane's keys known. */
static enum gp_err check_keys(struct walk *k, struct fy_node *map, unsigned place, bool known,
                              const char *what)
{
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(map, &it)) != NULL) {
        struct fy_node *kn = fy_node_pair_key(p);
        char key[KEY_MAX];
        if (!key_text(kn, key, sizeof key))
            continue; /* the reader reports it */
        if (!push(k, key, 0, kn))
            return GP_OK;
        enum gp_err err = GP_OK;
        size_t dlen = 0;
        const char *fix = domain_typo(key, &dlen);
        if (fix) {
            char fixed[2 * KEY_MAX];
            snprintf(fixed, sizeof fixed, "%s%s", fix, key + dlen);
            const char *near = known && place ? nearest_key(fixed, place) : NULL;
            err = fail(k, kn, "unknown domain \"%.*s\"; did you mean \"%s\"?", (int)dlen, key,
                       near ? near : fixed);
        } else if (known && our_domain(key)) {
            size_t i;
            for (i = 0; i < gp_k8s_nkeys; i++)
                if ((gp_k8s_keys[i].places & place) && strcmp(gp_k8s_keys[i].key, key) == 0)
                    break;
            if (i == gp_k8s_nkeys)
                err = unknown_key(k, kn, key, place, what);
        }
        pop(k);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* --- resource names -------------------------------------------------------- */

/* The MIG profile nearest to name over every model; *dist its distance. */
static const char *nearest_profile(const char *name, unsigned *dist)
{
    const char *best = NULL;
    *dist = ~0u;
    for (size_t i = 0; i < gp_mig_nmodels; i++)
        for (size_t j = 0; j < gp_mig_models[i].nprofiles; j++) {
            const char *p = gp_mig_models[i].profiles[j].name;
            unsigned d = gp_strdist(name, p);
            if (d < *dist) {
                *dist = d;
                best = p;
            }
        }
    return best;
}

static const char *const RESOURCES[] = {
    "cpu",           "memory",         "ephemeral-storage",     "hugepages-2Mi",
    "hugepages-1Gi", "nvidia.com/gpu", "nvidia.com/gpu.shared",
};

/* A resource name neither Kubernetes nor gpuplane knows: the nearest one. */
static enum gp_err unknown_resource(struct walk *k, struct fy_node *kn, const char *key)
{
    unsigned d;
    size_t i = gp_strdist_nearest(key, RESOURCES, sizeof RESOURCES / sizeof RESOURCES[0],
                                  sizeof RESOURCES[0], &d);
    char best[KEY_MAX + 16];
    snprintf(best, sizeof best, "%s", RESOURCES[i]);
    const char *m = strstr(key, "mig");
    if (m) { /* nvidia.com/mig1g.10gb, nvida.com/mig-1g.10gb, ... */
        const char *prof = m[3] == '-' ? m + 4 : m + 3;
        unsigned pd;
        const char *p = nearest_profile(prof, &pd);
        char mig[KEY_MAX + 16];
        snprintf(mig, sizeof mig, "nvidia.com/mig-%s", p ? p : "1g.10gb");
        unsigned md = gp_strdist(key, mig);
        if (p && md < d) {
            d = md;
            snprintf(best, sizeof best, "%s", mig);
        }
    }
    if (gp_strdist_close(key, d))
        return fail(k, kn, "unknown resource; did you mean \"%s\"?", best);
    return fail(k, kn,
                "unknown resource (expected cpu, memory, ephemeral-storage, "
                "hugepages-<size>, nvidia.com/gpu, nvidia.com/gpu.shared or "
                "nvidia.com/mig-<profile>; the cluster declares no other)");
}

/* requests and limits: every name a resource Kubernetes or gpuplane knows;
 * those the simulation does not count warn. */
static enum gp_err check_resources(struct walk *k, struct fy_node *map)
{
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(map, &it)) != NULL) {
        struct fy_node *kn = fy_node_pair_key(p);
        char key[KEY_MAX];
        if (!key_text(kn, key, sizeof key))
            continue;
        if (!push(k, key, 0, kn))
            return GP_OK;
        enum gp_err err = GP_OK;
        const char *pseudo = NULL;
        if (strcmp(key, "ephemeral-storage") == 0)
            pseudo = "ephemeral-storage";
        else if (strncmp(key, "hugepages-", 10) == 0 && key[10])
            pseudo = "hugepages-";
        if (pseudo) {
            err = warn_row(k, gp_k8s_model_find("resources", pseudo));
        } else if (strncmp(key, "nvidia.com/mig-", 15) == 0) {
            unsigned d;
            const char *prof = nearest_profile(key + 15, &d);
            if (d != 0 && prof && gp_strdist_close(key + 15, d))
                err = fail(k, kn,
                           "no GPU model has the MIG profile \"%s\"; did you mean "
                           "\"nvidia.com/mig-%s\"?",
                           key + 15, prof);
            else if (d != 0)
                err = fail(k, kn,
                           "no GPU model has the MIG profile \"%.40s\" (expected a "
                           "profile of data/mig-profiles.json, like "
                           "nvidia.com/mig-1g.10gb)",
                           key + 15);
        } else if (strcmp(key, "cpu") != 0 && strcmp(key, "memory") != 0 &&
                   strcmp(key, "nvidia.com/gpu") != 0 &&
                   strcmp(key, "nvidia.com/gpu.shared") != 0) {
            err = unknown_resource(k, kn, key);
        }
        pop(k);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* --- the walk -------------------------------------------------------------- */

static enum gp_err walk_object(struct walk *k, struct fy_node *n, unsigned type, bool modelled);

static enum gp_err expected(struct walk *k, struct fy_node *v, const char *what)
{
    return fail(k, v, "expected %s, got %s", what, gp_yaml_describe(v));
}

/* An unknown field of type t: the nearest valid name, or the list. */
static enum gp_err unknown_field(struct walk *k, struct fy_node *kn, unsigned t, const char *key)
{
    const struct gp_k8s_type *ty = &gp_k8s_types[t];
    const struct gp_k8s_field *f = &gp_k8s_fields[ty->first];
    unsigned d;
    size_t i = gp_strdist_nearest(key, f, ty->count, sizeof *f, &d);
    if (gp_strdist_close(key, d))
        return fail(k, kn, "unknown field; did you mean \"%s\"?", f[i].name);
    struct names list = {"", 0, false};
    for (size_t j = 0; j < ty->count; j++)
        names_add(&list, f[j].name);
    return fail(k, kn, "unknown field (expected one of: %s)", list.buf);
}

/* The checks of a modelled map (labels, annotations, selectors, resources). */
static enum gp_err run_check(struct walk *k, enum gp_k8s_check check, struct fy_node *v)
{
    if (!fy_node_is_mapping(v))
        return GP_OK; /* the reader reports the type */
    unsigned pod = k->role == ROLE_POD;
    switch (check) {
    case GP_K8S_CHECK_ANNOTATIONS:
        return check_keys(k, v,
                          pod                        ? GP_K8S_POD_ANNOTATION
                          : k->role == ROLE_PODGROUP ? GP_K8S_PODGROUP_ANNOTATION
                                                     : 0,
                          true, "annotation");
    case GP_K8S_CHECK_LABELS:
        return check_keys(k, v, pod ? GP_K8S_POD_LABEL : 0, true, "label");
    case GP_K8S_CHECK_SELECTOR:
        return check_keys(k, v, 0, false, "node label");
    case GP_K8S_CHECK_RESOURCES:
        return check_resources(k, v);
    case GP_K8S_CHECK_NONE:
        break;
    }
    return GP_OK;
}

/* A field's value. In what gpuplane models a value of the wrong shape is
 * left to the reader (its messages are more precise); elsewhere it is an
 * error here, as the API server would make it. */
static enum gp_err walk_value(struct walk *k, const struct gp_k8s_field *f, struct fy_node *v,
                              bool modelled)
{
    if (fy_node_is_alias(v))
        return GP_OK; /* the reader rejects aliases where it reads them */
    bool map = fy_node_is_mapping(v), seq = fy_node_is_sequence(v);
    switch (f->kind) {
    case GP_K8S_OBJECT:
        if (map)
            return walk_object(k, v, f->type, modelled);
        return modelled ? GP_OK : expected(k, v, "a mapping");
    case GP_K8S_LIST: {
        if (!seq)
            return modelled ? GP_OK : expected(k, v, "a list");
        void *it = NULL;
        struct fy_node *item;
        size_t i = 0;
        while ((item = fy_node_sequence_iterate(v, &it)) != NULL) {
            if (!push(k, NULL, i++, item))
                return GP_OK;
            enum gp_err err = GP_OK;
            if (fy_node_is_mapping(item))
                err = walk_object(k, item, f->type, modelled);
            else if (!modelled && !gp_yaml_is_null(item) && !fy_node_is_alias(item))
                err = expected(k, item, "a mapping");
            pop(k);
            if (err != GP_OK)
                return err;
        }
        return GP_OK;
    }
    case GP_K8S_SCALARS:
        return seq || modelled ? GP_OK : expected(k, v, "a list");
    case GP_K8S_MAP:
        return map || modelled ? GP_OK : expected(k, v, "a mapping");
    case GP_K8S_MAPOF: {
        if (!map)
            return modelled ? GP_OK : expected(k, v, "a mapping");
        void *it = NULL;
        struct fy_node_pair *p;
        while ((p = fy_node_mapping_iterate(v, &it)) != NULL) {
            struct fy_node *kn = fy_node_pair_key(p), *val = fy_node_pair_value(p);
            char key[KEY_MAX];
            if (!key_text(kn, key, sizeof key) || !fy_node_is_mapping(val))
                continue;
            if (!push(k, key, 0, kn))
                return GP_OK;
            enum gp_err err = walk_object(k, val, f->type, modelled);
            pop(k);
            if (err != GP_OK)
                return err;
        }
        return GP_OK;
    }
    case GP_K8S_SCALAR:
        return (map || seq) && !modelled ? expected(k, v, "a single value") : GP_OK;
    case GP_K8S_ANY:
        break;
    }
    return GP_OK;
}

/* Mapping n against type t. modelled: gpuplane reads this object, so each
 * field's row in the model table says what to do with it. */
/* gp_yaml_is_null, quick for the values that cannot be null. */
static bool is_null(struct fy_node *v)
{
    size_t len;
    if (!v)
        return true;
    if (fy_node_get_type(v) != FYNT_SCALAR)
        return false;
    return fy_node_get_scalar(v, &len) && len > 4 ? false : gp_yaml_is_null(v);
}

static enum gp_err walk_object(struct walk *k, struct fy_node *n, unsigned type, bool modelled)
{
    size_t first = 0, count = 0; /* the type's rows in the model table */
    if (modelled)
        gp_k8s_model_rows(gp_k8s_types[type].name, &first, &count);
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it)) != NULL) {
        struct fy_node *kn = fy_node_pair_key(p), *v = fy_node_pair_value(p);
        char key[KEY_MAX];
        if (!key_text(kn, key, sizeof key))
            return fail(k, kn, "expected a field name, got %s", gp_yaml_describe(kn));
        if (strcmp(key, "<<") == 0)
            return fail(k, kn, "YAML merge keys (<<) are not supported; write the fields out");
        const struct gp_k8s_field *f = gp_k8s_field_find(type, key);
        if (!push(k, key, 0, kn))
            return GP_OK;
        enum gp_err err = GP_OK;
        if (!f) {
            err = unknown_field(k, kn, type, key);
        } else {
            const struct gp_k8s_model *row =
                modelled ? gp_k8s_model_field(first, count, key) : NULL;
            enum gp_k8s_class cls = !modelled ? GP_K8S_INERT : row ? row->cls : GP_K8S_WARN;
            bool child = cls == GP_K8S_MODELLED;
            /* null is absent; a plain value where one is expected needs no
             * look (libfyaml's text is dear), unless it would warn */
            bool null = !v || (fy_node_get_type(v) == FYNT_SCALAR &&
                               (f->kind != GP_K8S_SCALAR || cls == GP_K8S_WARN) && is_null(v));
            if (!null && cls == GP_K8S_WARN)
                err = warn_row(k, row);
            else if (!null && child && row->check != GP_K8S_CHECK_NONE)
                err = run_check(k, row->check, v);
            if (err == GP_OK && !null)
                err = walk_value(k, f, v, child);
        }
        pop(k);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* --- objects defined twice ------------------------------------------------- */

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Rebuilds the index for nslots slots (a power of two). */
static bool index_build(struct gp_workload *w, struct gp_arena *a, size_t nslots)
{
    uint32_t *slots = gp_arena_alloc(a, nslots * sizeof *slots); /* zeroed */
    if (!slots)
        return false;
    for (size_t i = 0; i < w->nobjects; i++) {
        size_t j = w->objects[i].hash & (nslots - 1);
        while (slots[j])
            j = (j + 1) & (nslots - 1);
        slots[j] = (uint32_t)(i + 1);
    }
    w->object_slots = slots;
    w->nslots = nslots;
    return true;
}

/* Records object `key`; a second one with the same key is an error at
 * node `at` ("defined twice" and `what`, e.g. " in namespace ..."). */
static enum gp_err object_add(struct walk *k, const char *key, const char *what, struct fy_node *at,
                              int line)
{
    struct gp_workload *w = k->w;
    struct gp_arena *a = k->y->arena;
    uint32_t h = fnv1a(key);
    for (size_t j = w->nslots ? h & (w->nslots - 1) : 0; w->nslots && w->object_slots[j];
         j = (j + 1) & (w->nslots - 1)) {
        const struct gp_k8s_object *o = &w->objects[w->object_slots[j] - 1];
        if (o->hash == h && strcmp(o->key, key) == 0)
            return fail(k, at, "defined twice%s (first at %s)", what, o->source);
    }
    if (w->nobjects == w->objects_cap) {
        size_t cap = w->objects_cap ? 2 * w->objects_cap : 64;
        struct gp_k8s_object *o = gp_arena_alloc(a, cap * sizeof *o);
        if (!o)
            return oom(k);
        if (w->nobjects)
            memcpy(o, w->objects, w->nobjects * sizeof *o);
        w->objects = o;
        w->objects_cap = cap;
    }
    struct gp_k8s_object *o = &w->objects[w->nobjects++];
    o->key = gp_arena_strdup(a, key);
    o->source = gp_arena_printf(a, "%s:%d", k->y->name, line);
    o->hash = h;
    if (!o->key || !o->source)
        return oom(k);
    if (2 * w->nobjects > w->nslots)
        return index_build(w, a, w->nslots ? 2 * w->nslots : 128) ? GP_OK : oom(k);
    size_t j = h & (w->nslots - 1);
    while (w->object_slots[j])
        j = (j + 1) & (w->nslots - 1);
    w->object_slots[j] = (uint32_t)w->nobjects;
    return GP_OK;
}

struct gp_k8s_mark gp_k8s_mark(const struct gp_workload *w)
{
    struct gp_k8s_mark m;
    m.nobjects = w->nobjects;
    m.nwarnings = w->nwarnings;
    memcpy(m.warned, w->warned, sizeof m.warned);
    return m;
}

void gp_k8s_restore(struct gp_workload *w, const struct gp_k8s_mark *m)
{
    w->nwarnings = m->nwarnings;
    memcpy(w->warned, m->warned, sizeof w->warned);
    if (w->nobjects == m->nobjects)
        return;
    w->nobjects = m->nobjects;
    if (w->nslots)
        memset(w->object_slots, 0, w->nslots * sizeof *w->object_slots);
    for (size_t i = 0; i < w->nobjects; i++) { /* reinsert what stays */
        size_t j = w->objects[i].hash & (w->nslots - 1);
        while (w->object_slots[j])
            j = (j + 1) & (w->nslots - 1);
        w->object_slots[j] = (uint32_t)(i + 1);
    }
}

/* --- one object ------------------------------------------------------------ */

/* The value of `key` in mapping n (the first, as the reader takes it), or
 * NULL: a walk over the pairs, cheaper than libfyaml's lookup. */
static struct fy_node *lookup(struct fy_node *n, const char *key)
{
    if (!n || !fy_node_is_mapping(n))
        return NULL;
    size_t want = strlen(key);
    void *it = NULL;
    struct fy_node_pair *p;
    while ((p = fy_node_mapping_iterate(n, &it)) != NULL) {
        struct fy_node *kn = fy_node_pair_key(p);
        size_t len;
        const char *s = kn && fy_node_is_scalar(kn) && !fy_node_is_alias(kn)
                            ? fy_node_get_scalar(kn, &len)
                            : NULL;
        if (s && len == want && memcmp(s, key, len) == 0)
            return fy_node_pair_value(p);
    }
    return NULL;
}

/* A scalar child's text in buf, or "" */
static const char *child_text(struct fy_node *n, const char *key, char *buf, size_t size)
{
    struct fy_node *v = lookup(n, key);
    if (gp_yaml_is_null(v) || !key_text(v, buf, size))
        buf[0] = '\0';
    return buf;
}

/* The second object of a kind with its name (and namespace) is an error. */
static enum gp_err check_twice(struct walk *k, struct fy_node *n, const struct gp_k8s_root *r,
                               const char *name)
{
    char ns[KEY_MAX], key[4 * KEY_MAX], what[2 * KEY_MAX];
    struct fy_node *meta = lookup(n, "metadata");
    bool cluster_scoped = strcmp(r->kind, "Queue") == 0 || strcmp(r->kind, "PriorityClass") == 0;
    child_text(meta, "namespace", ns, sizeof ns);
    if (cluster_scoped)
        ns[0] = '\0';
    else if (!ns[0])
        snprintf(ns, sizeof ns, "default");
    const char *slash = strchr(r->api_version, '/');
    int glen = slash ? (int)(slash - r->api_version) : 0;
    snprintf(key, sizeof key, "%.*s/%s %s/%s", glen, r->api_version, r->kind, ns, name);
    if (cluster_scoped)
        what[0] = '\0';
    else
        snprintf(what, sizeof what, " in namespace \"%s\"", ns);
    int line = 0, col = 0;
    struct fy_node *at = lookup(meta, "name");
    if (!gp_yaml_node_mark(at, &line, &col))
        gp_yaml_node_mark(n, &line, &col);
    return object_add(k, key, what, at ? at : n, line);
}

enum gp_err gp_k8s_validate(struct gp_yaml *y, struct fy_node *n, struct gp_workload *w)
{
    char kind[64], api[KEY_MAX], name[KEY_MAX];
    if (!n || !fy_node_is_mapping(n))
        return GP_OK;
    child_text(n, "kind", kind, sizeof kind);
    child_text(n, "apiVersion", api, sizeof api);
    const struct gp_k8s_root *r = NULL;
    for (size_t i = 0; i < gp_k8s_nroots && !r; i++)
        if (strcmp(gp_k8s_roots[i].kind, kind) == 0 &&
            strcmp(gp_k8s_roots[i].api_version, api) == 0)
            r = &gp_k8s_roots[i];
    if (!r)
        return GP_OK; /* an unknown kind or apiVersion: the reader says which */
    struct walk k;    /* the frames are written as they are pushed */
    k.y = y;
    k.w = w;
    k.role = ROLE_OTHER;
    k.kind = r->kind;
    k.depth = 0;
    if (!strcmp(kind, "Pod") || !strcmp(kind, "Job") || !strcmp(kind, "Deployment"))
        k.role = ROLE_POD;
    else if (!strcmp(kind, "PodGroup"))
        k.role = ROLE_PODGROUP;
    struct fy_node *meta = lookup(n, "metadata");
    child_text(meta, "name", name, sizeof name);

    char outer[sizeof y->path];
    memcpy(outer, y->path, sizeof outer);
    struct gp_yaml_saved saved = {y->plen, y->line, y->col};
    char root[sizeof y->path];
    if (name[0])
        snprintf(root, sizeof root, "%s/%.100s", r->kind, name);
    else
        snprintf(root, sizeof root, "%s", r->kind);
    gp_yaml_set_root(y, root);
    enum gp_err err = walk_object(&k, n, r->type, true);
    if (err == GP_OK && name[0] && strcmp(kind, "List") != 0)
        err = check_twice(&k, n, r, name);
    memcpy(y->path, outer, sizeof outer);
    gp_yaml_pop(y, saved);
    return err;
}
