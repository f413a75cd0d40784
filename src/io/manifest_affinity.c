/* manifest_affinity.c - a pod spec's affinity (nodeAffinity, podAffinity,
 * podAntiAffinity, required and preferred) and topologySpreadConstraints,
 * read into the engine's struct gp_pod_constraints and checked as the API
 * server validates them (k8s.io/kubernetes pkg/apis/core/validation: node
 * selector requirements, label selectors, weights 1-100, topology keys,
 * maxSkew, minDomains, whenUnsatisfiable, the inclusion policies, and a
 * constraint given twice). matchLabelKeys and mismatchLabelKeys are merged
 * into their selectors once the pod's labels are known, as the API server
 * (pod affinity) and kube-scheduler (spreading) do. What the engine does
 * with them: docs/affinity.md. */
#include <stdio.h>
#include <string.h>

#include "io/manifest_internal.h"

/* --- small pieces ----------------------------------------------------------- */

static struct gp_pod_constraints *cons_of(struct gp_yaml *y, struct manifest_obj *o)
{
    if (!o->cons)
        o->cons = gp_arena_alloc(y->arena, sizeof *o->cons); /* zeroed */
    return o->cons;
}

/* An array of n elements of `size` bytes in the arena, or NULL (with the
 * error set) when out of memory; n == 0 gives NULL and GP_OK. */
static enum gp_err alloc_items(struct gp_yaml *y, struct fy_node *v, size_t size, void **out,
                               size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!fy_node_is_sequence(v))
        return GP_OK; /* gp_yaml_list says what it is */
    int c = fy_node_sequence_item_count(v);
    if (c <= 0)
        return GP_OK;
    *out = gp_arena_alloc(y->arena, (size_t)c * size);
    return *out ? GP_OK : gp_manifest_oom(y);
}

struct strings {
    const char **items;
    size_t n;
    bool keys; /* label keys, checked as such */
};

static enum gp_err string_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct strings *s = ctx;
    enum gp_err err = gp_yaml_text(y, item, "a string", &s->items[i]);
    if (err == GP_OK && s->keys && !gp_yaml_qualified_name_ok(s->items[i]))
        err = gp_manifest_bad_value(y, item, "a label key ([prefix/]name)");
    s->n = i + 1;
    return err;
}

/* A list of strings (label keys when `keys`). */
static enum gp_err read_strings(struct gp_yaml *y, struct fy_node *v, bool keys,
                                const char *const **out, size_t *n)
{
    struct strings s = {NULL, 0, keys};
    size_t cap;
    enum gp_err err = alloc_items(y, v, sizeof *s.items, (void **)&s.items, &cap);
    if (err == GP_OK)
        err = gp_yaml_list(y, v, string_item, &s);
    *out = (const char *const *)s.items;
    *n = s.n;
    return err;
}

static enum gp_err fail_here(struct gp_yaml *y, struct fy_node *at, const char *field,
                             const char *msg)
{
    struct gp_yaml_saved s = gp_yaml_push_key(y, field, NULL);
    enum gp_err err = gp_yaml_fail(y, at, GP_EINVALID, "%s", msg);
    gp_yaml_pop(y, s);
    return err;
}

/* A weight of a preferred term: 1 to 100. */
static enum gp_err read_weight(struct gp_yaml *y, struct fy_node *v, int32_t *out)
{
    int64_t w;
    enum gp_err err = gp_yaml_int(y, v, 1, 100, &w);
    if (err == GP_OK)
        *out = (int32_t)w;
    return err;
}

/* --- requirements ------------------------------------------------------------ */

/* Where a requirement is: a node selector term's labels or fields, or a
 * label selector. */
enum expr_place { EXPR_NODE_LABELS, EXPR_NODE_FIELDS, EXPR_LABEL_SELECTOR };

struct expr_in {
    struct gp_match_expr *x;
    enum expr_place place;
    const char *op;
    struct fy_node *op_node, *values_node;
};

static enum gp_err ex_key(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct expr_in *in = obj;
    enum gp_err err = gp_yaml_string(y, v, &in->x->key);
    if (err != GP_OK)
        return err;
    if (in->place == EXPR_NODE_FIELDS && strcmp(in->x->key, "metadata.name") != 0)
        return gp_manifest_bad_value(y, v, "metadata.name (the one node field selectors read)");
    if (in->place != EXPR_NODE_FIELDS && !gp_yaml_qualified_name_ok(in->x->key))
        return gp_manifest_bad_value(y, v, "a label key ([prefix/]name)");
    return GP_OK;
}

static enum gp_err ex_op(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct expr_in *in = obj;
    static const char *const names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    size_t nops = in->place == EXPR_NODE_FIELDS ? 2 : in->place == EXPR_NODE_LABELS ? 6 : 4;
    enum gp_err err = gp_yaml_text(y, v, "an operator", &in->op);
    if (err != GP_OK)
        return err;
    in->op_node = v;
    for (size_t i = 0; i < nops; i++)
        if (strcmp(in->op, names[i]) == 0) {
            in->x->op = (enum gp_match_op)i;
            return GP_OK;
        }
    return gp_manifest_bad_value(y, v,
                                 nops == 2   ? "In or NotIn"
                                 : nops == 4 ? "In, NotIn, Exists or DoesNotExist"
                                             : "In, NotIn, Exists, DoesNotExist, Gt or Lt");
}

static enum gp_err ex_values(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct expr_in *in = obj;
    in->values_node = v;
    return read_strings(y, v, false, &in->x->values, &in->x->nvalues);
}

static const struct gp_yaml_field expr_fields[] = {
    GP_YCUSTOM("key", ex_key, GP_YF_REQUIRED),
    GP_YCUSTOM("operator", ex_op, GP_YF_REQUIRED),
    GP_YCUSTOM("values", ex_values, 0),
};

/* One requirement, and the rules on its values. */
static enum gp_err read_expr(struct gp_yaml *y, struct fy_node *item, enum expr_place place,
                             struct gp_match_expr *x)
{
    struct expr_in in = {x, place, NULL, NULL, NULL};
    enum gp_err err = gp_yaml_object(y, item, expr_fields,
                                     sizeof expr_fields / sizeof expr_fields[0], &in, false);
    if (err != GP_OK)
        return err;
    struct fy_node *at = in.values_node ? in.values_node : in.op_node;
    switch (x->op) {
    case GP_MATCH_IN:
    case GP_MATCH_NOT_IN:
        if (place == EXPR_NODE_FIELDS && x->nvalues != 1)
            return fail_here(y, at, "values", "must have one element");
        if (x->nvalues == 0)
            return fail_here(y, at, "values",
                             "must be specified when `operator` is 'In' or 'NotIn'");
        break;
    case GP_MATCH_EXISTS:
    case GP_MATCH_DOES_NOT_EXIST:
        if (x->nvalues)
            return fail_here(y, at, "values",
                             "may not be specified when `operator` is 'Exists' or "
                             "'DoesNotExist'");
        break;
    case GP_MATCH_GT:
    case GP_MATCH_LT: {
        if (x->nvalues != 1)
            return fail_here(y, at, "values",
                             "must be specified single value when `operator` is 'Lt' or 'Gt'");
        const char *s = x->values[0];
        size_t i = *s == '-' || *s == '+' ? 1 : 0;
        bool digits = s[i] != '\0';
        for (; s[i]; i++)
            digits &= s[i] >= '0' && s[i] <= '9';
        if (!digits || strlen(s) > 19)
            return fail_here(y, at, "values", "for 'Gt' and 'Lt', expected an integer");
        break;
    }
    }
    return GP_OK;
}

struct exprs {
    struct gp_match_expr *items;
    size_t n;
    enum expr_place place;
};

static enum gp_err expr_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct exprs *x = ctx;
    x->n = i + 1;
    return read_expr(y, item, x->place, &x->items[i]);
}

static enum gp_err read_exprs(struct gp_yaml *y, struct fy_node *v, enum expr_place place,
                              const struct gp_match_expr **out, size_t *n)
{
    struct exprs x = {NULL, 0, place};
    size_t cap;
    enum gp_err err = alloc_items(y, v, sizeof *x.items, (void **)&x.items, &cap);
    if (err == GP_OK)
        err = gp_yaml_list(y, v, expr_item, &x);
    *out = x.items;
    *n = x.n;
    return err;
}

/* --- node selector terms ----------------------------------------------------- */

static enum gp_err nt_labels(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_node_term *t = obj;
    return read_exprs(y, v, EXPR_NODE_LABELS, &t->labels, &t->nlabels);
}

static enum gp_err nt_fields(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_node_term *t = obj;
    return read_exprs(y, v, EXPR_NODE_FIELDS, &t->fields, &t->nfields);
}

static const struct gp_yaml_field node_term_fields[] = {
    GP_YCUSTOM("matchExpressions", nt_labels, 0),
    GP_YCUSTOM("matchFields", nt_fields, 0),
};

static enum gp_err read_node_term(struct gp_yaml *y, struct fy_node *v, struct gp_node_term *t)
{
    return gp_yaml_object(y, v, node_term_fields,
                          sizeof node_term_fields / sizeof node_term_fields[0], t, false);
}

struct terms {
    struct gp_node_term *items;
    size_t n;
};

static enum gp_err required_term(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct terms *t = ctx;
    t->n = i + 1;
    return read_node_term(y, item, &t->items[i]);
}

static enum gp_err ns_terms(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct terms *t = obj;
    size_t cap;
    enum gp_err err = alloc_items(y, v, sizeof *t->items, (void **)&t->items, &cap);
    if (err == GP_OK)
        err = gp_yaml_list(y, v, required_term, t);
    if (err == GP_OK && t->n == 0)
        err = gp_yaml_fail(y, v, GP_EINVALID, "must have at least one node selector term");
    return err;
}

static const struct gp_yaml_field node_selector_fields[] = {
    GP_YCUSTOM("nodeSelectorTerms", ns_terms, GP_YF_REQUIRED),
};

static enum gp_err na_required(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pod_constraints *c = cons_of(y, obj);
    if (!c)
        return gp_manifest_oom(y);
    struct terms t = {NULL, 0};
    enum gp_err err =
        gp_yaml_object(y, v, node_selector_fields,
                       sizeof node_selector_fields / sizeof node_selector_fields[0], &t, false);
    c->node_required = t.items;
    c->nnode_required = t.n;
    return err;
}

static enum gp_err pt_preference(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_node_term(y, v, obj);
}

static enum gp_err pt_weight(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_weight(y, v, &((struct gp_node_term *)obj)->weight);
}

static const struct gp_yaml_field preferred_term_fields[] = {
    GP_YCUSTOM("preference", pt_preference, GP_YF_REQUIRED),
    GP_YCUSTOM("weight", pt_weight, GP_YF_REQUIRED),
};

static enum gp_err preferred_term(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct terms *t = ctx;
    t->n = i + 1;
    return gp_yaml_object(y, item, preferred_term_fields,
                          sizeof preferred_term_fields / sizeof preferred_term_fields[0],
                          &t->items[i], false);
}

static enum gp_err na_preferred(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pod_constraints *c = cons_of(y, obj);
    if (!c)
        return gp_manifest_oom(y);
    struct terms t = {NULL, 0};
    size_t cap;
    enum gp_err err = alloc_items(y, v, sizeof *t.items, (void **)&t.items, &cap);
    if (err == GP_OK)
        err = gp_yaml_list(y, v, preferred_term, &t);
    c->node_preferred = t.items;
    c->nnode_preferred = t.n;
    return err;
}

static const struct gp_yaml_field node_affinity_fields[] = {
    GP_YCUSTOM("requiredDuringSchedulingIgnoredDuringExecution", na_required, 0),
    GP_YCUSTOM("preferredDuringSchedulingIgnoredDuringExecution", na_preferred, 0),
};

/* --- label selectors ----------------------------------------------------------- */

static enum gp_err ls_labels(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_label_selector *s = obj;
    return gp_yaml_kv_map(y, v, true, &s->labels, &s->nlabels);
}

static enum gp_err ls_exprs(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_label_selector *s = obj;
    return read_exprs(y, v, EXPR_LABEL_SELECTOR, &s->exprs, &s->nexprs);
}

static const struct gp_yaml_field label_selector_fields[] = {
    GP_YCUSTOM("matchLabels", ls_labels, 0),
    GP_YCUSTOM("matchExpressions", ls_exprs, 0),
};

/* A label selector: written (even empty, which selects every pod) or not
 * (which selects none). */
static enum gp_err read_selector(struct gp_yaml *y, struct fy_node *v, struct gp_label_selector *s)
{
    s->set = true;
    if (!fy_node_is_mapping(v))
        return gp_yaml_fail(y, v, GP_EINVALID, "expected a label selector (a mapping), got %s",
                            gp_yaml_describe(v));
    return gp_yaml_object(y, v, label_selector_fields,
                          sizeof label_selector_fields / sizeof label_selector_fields[0], s, false);
}

/* matchLabelKeys and mismatchLabelKeys, kept to merge into the selector
 * later: a key may not be in both, nor in the selector already, and
 * neither may be given without a selector (the API's rules). */
static enum gp_err keep_label_keys(struct gp_yaml *y, struct manifest_obj *o,
                                   struct gp_label_selector *sel, struct fy_node *at,
                                   const struct manifest_label_keys *k)
{
    if (k->nmatch == 0 && k->nmismatch == 0)
        return GP_OK;
    if (!sel->set)
        return fail_here(y, at, k->nmatch ? "matchLabelKeys" : "mismatchLabelKeys",
                         "must not be specified when labelSelector is not set");
    for (size_t i = 0; i < k->nmatch + k->nmismatch; i++) {
        const char *key = i < k->nmatch ? k->match[i] : k->mismatch[i - k->nmatch];
        bool twice = false;
        for (size_t j = 0; j < k->nmismatch && i < k->nmatch; j++)
            twice |= strcmp(key, k->mismatch[j]) == 0;
        for (size_t j = 0; j < sel->nlabels; j++)
            twice |= strcmp(key, sel->labels[j].key) == 0;
        for (size_t j = 0; j < sel->nexprs; j++)
            twice |= strcmp(key, sel->exprs[j].key) == 0;
        if (twice) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "\"%.80s\" exists in both matchLabelKeys and mismatchLabelKeys or in "
                     "labelSelector",
                     key);
            return fail_here(y, at, i < k->nmatch ? "matchLabelKeys" : "mismatchLabelKeys", msg);
        }
    }
    if (o->nlkeys == o->lkeys_cap) {
        size_t cap = o->lkeys_cap ? 2 * o->lkeys_cap : 4;
        struct manifest_label_keys *n = gp_arena_alloc(y->arena, cap * sizeof *n);
        if (!n)
            return gp_manifest_oom(y);
        if (o->nlkeys)
            memcpy(n, o->lkeys, o->nlkeys * sizeof *n);
        o->lkeys = n;
        o->lkeys_cap = cap;
    }
    o->lkeys[o->nlkeys] = *k;
    o->lkeys[o->nlkeys++].sel = sel;
    return GP_OK;
}

enum gp_err gp_manifest_label_keys_apply(struct gp_yaml *y, struct manifest_obj *o,
                                         const struct gp_kv *labels, size_t nlabels)
{
    for (size_t i = 0; i < o->nlkeys; i++) {
        struct manifest_label_keys *k = &o->lkeys[i];
        struct gp_label_selector *s = k->sel;
        size_t n = s->nexprs + k->nmatch + k->nmismatch;
        struct gp_match_expr *x = gp_arena_alloc(y->arena, n * sizeof *x);
        if (!x)
            return gp_manifest_oom(y);
        if (s->nexprs)
            memcpy(x, s->exprs, s->nexprs * sizeof *x);
        size_t m = s->nexprs;
        for (size_t j = 0; j < k->nmatch + k->nmismatch; j++) {
            const char *key = j < k->nmatch ? k->match[j] : k->mismatch[j - k->nmatch];
            const char **value = NULL;
            for (size_t l = 0; l < nlabels && !value; l++)
                if (strcmp(labels[l].key, key) == 0 &&
                    (value = gp_arena_alloc(y->arena, sizeof *value)) != NULL)
                    *value = labels[l].value;
            if (!value)
                continue; /* a key the pod does not have is ignored */
            x[m].key = key;
            x[m].op = j < k->nmatch ? GP_MATCH_IN : GP_MATCH_NOT_IN;
            x[m].values = value;
            x[m++].nvalues = 1;
        }
        s->exprs = x;
        s->nexprs = m;
    }
    return GP_OK;
}

/* --- pod affinity terms ------------------------------------------------------- */

struct pterm_in {
    struct manifest_obj *o;
    struct gp_pod_term *t;
    struct manifest_label_keys keys;
    struct fy_node *node, *key_node;
};

static enum gp_err pa_selector(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_selector(y, v, &((struct pterm_in *)obj)->t->selector);
}

static enum gp_err pa_ns_selector(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_selector(y, v, &((struct pterm_in *)obj)->t->ns_selector);
}

static enum gp_err pa_namespaces(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_pod_term *t = ((struct pterm_in *)obj)->t;
    return read_strings(y, v, false, &t->namespaces, &t->nnamespaces);
}

static enum gp_err pa_topology(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pterm_in *in = obj;
    in->key_node = v;
    enum gp_err err = gp_yaml_string(y, v, &in->t->topology_key);
    if (err == GP_OK && !gp_yaml_qualified_name_ok(in->t->topology_key))
        err = gp_manifest_bad_value(y, v, "a node label key ([prefix/]name)");
    return err;
}

static enum gp_err pa_match_keys(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pterm_in *in = obj;
    return read_strings(y, v, true, &in->keys.match, &in->keys.nmatch);
}

static enum gp_err pa_mismatch_keys(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pterm_in *in = obj;
    return read_strings(y, v, true, &in->keys.mismatch, &in->keys.nmismatch);
}

static const struct gp_yaml_field pod_term_fields[] = {
    GP_YCUSTOM("labelSelector", pa_selector, 0),
    GP_YCUSTOM("namespaceSelector", pa_ns_selector, 0),
    GP_YCUSTOM("namespaces", pa_namespaces, 0),
    GP_YCUSTOM("topologyKey", pa_topology, 0),
    GP_YCUSTOM("matchLabelKeys", pa_match_keys, 0),
    GP_YCUSTOM("mismatchLabelKeys", pa_mismatch_keys, 0),
};

static enum gp_err read_pod_term(struct gp_yaml *y, struct fy_node *v, struct manifest_obj *o,
                                 struct gp_pod_term *t)
{
    struct pterm_in in;
    memset(&in, 0, sizeof in);
    in.o = o;
    in.t = t;
    enum gp_err err = gp_yaml_object(
        y, v, pod_term_fields, sizeof pod_term_fields / sizeof pod_term_fields[0], &in, false);
    if (err == GP_OK && !t->topology_key)
        err = fail_here(y, v, "topologyKey", "can not be empty");
    if (err == GP_OK)
        err = keep_label_keys(y, o, &t->selector, v, &in.keys);
    return err;
}

struct pterms {
    struct manifest_obj *o;
    struct gp_pod_term *items;
    size_t n;
};

static enum gp_err required_pod_term(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct pterms *t = ctx;
    t->n = i + 1;
    return read_pod_term(y, item, t->o, &t->items[i]);
}

struct wterm_in {
    struct manifest_obj *o;
    struct gp_pod_term *t;
    bool has_term;
};

static enum gp_err wt_term(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct wterm_in *in = obj;
    in->has_term = true;
    return read_pod_term(y, v, in->o, in->t);
}

static enum gp_err wt_weight(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_weight(y, v, &((struct wterm_in *)obj)->t->weight);
}

static const struct gp_yaml_field weighted_term_fields[] = {
    GP_YCUSTOM("podAffinityTerm", wt_term, GP_YF_REQUIRED),
    GP_YCUSTOM("weight", wt_weight, GP_YF_REQUIRED),
};

static enum gp_err preferred_pod_term(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct pterms *t = ctx;
    struct wterm_in in = {t->o, &t->items[i], false};
    t->n = i + 1;
    return gp_yaml_object(y, item, weighted_term_fields,
                          sizeof weighted_term_fields / sizeof weighted_term_fields[0], &in, false);
}

static enum gp_err read_pod_terms(struct gp_yaml *y, struct fy_node *v, struct manifest_obj *o,
                                  bool preferred, const struct gp_pod_term **out, size_t *n)
{
    struct pterms t = {o, NULL, 0};
    size_t cap;
    enum gp_err err = alloc_items(y, v, sizeof *t.items, (void **)&t.items, &cap);
    if (err == GP_OK)
        err = gp_yaml_list(y, v, preferred ? preferred_pod_term : required_pod_term, &t);
    *out = t.items;
    *n = t.n;
    return err;
}

/* podAffinity and podAntiAffinity share their fields; `anti` says which. */
struct pa_in {
    struct manifest_obj *o;
    bool anti;
};

static enum gp_err pa_required(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pa_in *in = obj;
    struct gp_pod_constraints *c = cons_of(y, in->o);
    if (!c)
        return gp_manifest_oom(y);
    return in->anti ? read_pod_terms(y, v, in->o, false, &c->anti, &c->nanti)
                    : read_pod_terms(y, v, in->o, false, &c->affinity, &c->naffinity);
}

static enum gp_err pa_preferred(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pa_in *in = obj;
    struct gp_pod_constraints *c = cons_of(y, in->o);
    if (!c)
        return gp_manifest_oom(y);
    return in->anti
               ? read_pod_terms(y, v, in->o, true, &c->anti_preferred, &c->nanti_preferred)
               : read_pod_terms(y, v, in->o, true, &c->affinity_preferred, &c->naffinity_preferred);
}

static const struct gp_yaml_field pod_affinity_fields[] = {
    GP_YCUSTOM("requiredDuringSchedulingIgnoredDuringExecution", pa_required, 0),
    GP_YCUSTOM("preferredDuringSchedulingIgnoredDuringExecution", pa_preferred, 0),
};

/* --- affinity ------------------------------------------------------------------ */

static enum gp_err af_node(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, node_affinity_fields,
                          sizeof node_affinity_fields / sizeof node_affinity_fields[0], obj, false);
}

static enum gp_err af_pod(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pa_in in = {obj, false};
    return gp_yaml_object(y, v, pod_affinity_fields,
                          sizeof pod_affinity_fields / sizeof pod_affinity_fields[0], &in, false);
}

static enum gp_err af_anti(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct pa_in in = {obj, true};
    return gp_yaml_object(y, v, pod_affinity_fields,
                          sizeof pod_affinity_fields / sizeof pod_affinity_fields[0], &in, false);
}

static const struct gp_yaml_field affinity_fields[] = {
    GP_YCUSTOM("nodeAffinity", af_node, 0),
    GP_YCUSTOM("podAffinity", af_pod, 0),
    GP_YCUSTOM("podAntiAffinity", af_anti, 0),
};

enum gp_err gp_manifest_affinity(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return gp_yaml_object(y, v, affinity_fields, sizeof affinity_fields / sizeof affinity_fields[0],
                          obj, false);
}

/* --- topology spread constraints ---------------------------------------------- */

struct spread_in {
    struct manifest_obj *o;
    struct gp_spread *s;
    struct manifest_label_keys keys;
    const char *when;
    bool has_min_domains;
    struct fy_node *min_node;
};

static enum gp_err sp_skew(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    int64_t x;
    enum gp_err err = gp_yaml_int(y, v, 1, GP_MANIFEST_INT32_LIMIT, &x);
    if (err == GP_OK)
        ((struct spread_in *)obj)->s->max_skew = (int32_t)x;
    return err;
}

static enum gp_err sp_key(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct gp_spread *s = ((struct spread_in *)obj)->s;
    enum gp_err err = gp_yaml_string(y, v, &s->topology_key);
    if (err == GP_OK && !gp_yaml_qualified_name_ok(s->topology_key))
        err = gp_manifest_bad_value(y, v, "a node label key ([prefix/]name)");
    return err;
}

static enum gp_err sp_when(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct spread_in *in = obj;
    enum gp_err err = gp_yaml_text(y, v, "DoNotSchedule or ScheduleAnyway", &in->when);
    if (err == GP_OK && strcmp(in->when, "DoNotSchedule") != 0 &&
        strcmp(in->when, "ScheduleAnyway") != 0)
        err = gp_manifest_bad_value(y, v, "DoNotSchedule or ScheduleAnyway");
    if (err == GP_OK)
        in->s->schedule_anyway = strcmp(in->when, "ScheduleAnyway") == 0;
    return err;
}

static enum gp_err sp_selector(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return read_selector(y, v, &((struct spread_in *)obj)->s->selector);
}

static enum gp_err sp_match_keys(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct spread_in *in = obj;
    return read_strings(y, v, true, &in->keys.match, &in->keys.nmatch);
}

static enum gp_err sp_min_domains(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct spread_in *in = obj;
    int64_t x;
    enum gp_err err = gp_yaml_int(y, v, 1, GP_MANIFEST_INT32_LIMIT, &x);
    if (err == GP_OK) {
        in->s->min_domains = (int32_t)x;
        in->has_min_domains = true;
        in->min_node = v;
    }
    return err;
}

/* nodeAffinityPolicy, nodeTaintsPolicy: Honor or Ignore. */
static enum gp_err policy(struct gp_yaml *y, struct fy_node *v, bool *honor)
{
    const char *s;
    enum gp_err err = gp_yaml_text(y, v, "Honor or Ignore", &s);
    if (err == GP_OK && strcmp(s, "Honor") != 0 && strcmp(s, "Ignore") != 0)
        err = gp_manifest_bad_value(y, v, "Honor or Ignore");
    if (err == GP_OK)
        *honor = strcmp(s, "Honor") == 0;
    return err;
}

static enum gp_err sp_affinity_policy(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    bool honor = true;
    enum gp_err err = policy(y, v, &honor);
    ((struct spread_in *)obj)->s->ignore_affinity = !honor;
    return err;
}

static enum gp_err sp_taints_policy(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    return policy(y, v, &((struct spread_in *)obj)->s->honor_taints);
}

static const struct gp_yaml_field spread_fields[] = {
    GP_YCUSTOM("maxSkew", sp_skew, GP_YF_REQUIRED),
    GP_YCUSTOM("topologyKey", sp_key, GP_YF_REQUIRED),
    GP_YCUSTOM("whenUnsatisfiable", sp_when, GP_YF_REQUIRED),
    GP_YCUSTOM("labelSelector", sp_selector, 0),
    GP_YCUSTOM("matchLabelKeys", sp_match_keys, 0),
    GP_YCUSTOM("minDomains", sp_min_domains, 0),
    GP_YCUSTOM("nodeAffinityPolicy", sp_affinity_policy, 0),
    GP_YCUSTOM("nodeTaintsPolicy", sp_taints_policy, 0),
};

struct spreads {
    struct manifest_obj *o;
    struct gp_spread *items;
    size_t n;
};

static enum gp_err spread_item(struct gp_yaml *y, struct fy_node *item, size_t i, void *ctx)
{
    struct spreads *sp = ctx;
    struct spread_in in;
    memset(&in, 0, sizeof in);
    in.o = sp->o;
    in.s = &sp->items[i];
    sp->n = i + 1;
    enum gp_err err = gp_yaml_object(y, item, spread_fields,
                                     sizeof spread_fields / sizeof spread_fields[0], &in, false);
    if (err == GP_OK && in.has_min_domains && in.s->schedule_anyway)
        err = fail_here(y, in.min_node, "minDomains",
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule");
    for (size_t j = 0; err == GP_OK && j < i; j++)
        if (strcmp(sp->items[j].topology_key, in.s->topology_key) == 0 &&
            sp->items[j].schedule_anyway == in.s->schedule_anyway) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "a second constraint of topologyKey %.80s and whenUnsatisfiable %s (the "
                     "first is [%zu])",
                     in.s->topology_key, in.when, j);
            err = gp_yaml_fail(y, item, GP_EINVALID, "%s", msg);
        }
    if (err == GP_OK)
        err = keep_label_keys(y, sp->o, &in.s->selector, item, &in.keys);
    return err;
}

enum gp_err gp_manifest_spread(struct gp_yaml *y, struct fy_node *v, void *obj)
{
    struct manifest_obj *o = obj;
    struct gp_pod_constraints *c = cons_of(y, o);
    if (!c)
        return gp_manifest_oom(y);
    struct spreads sp = {o, NULL, 0};
    size_t cap;
    enum gp_err err = alloc_items(y, v, sizeof *sp.items, (void **)&sp.items, &cap);
    if (err == GP_OK)
        err = gp_yaml_list(y, v, spread_item, &sp);
    c->spread = sp.items;
    c->nspread = sp.n;
    return err;
}
