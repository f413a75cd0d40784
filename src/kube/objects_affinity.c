/* objects_affinity.c - a Pod's spec.affinity (nodeAffinity, podAffinity,
 * podAntiAffinity, required and preferred) and
 * spec.topologySpreadConstraints as the API server sends them (JSON),
 * read into the engine's struct gp_pod_constraints, the structure the
 * simulator's manifests fill (io/manifest_affinity.c), so that the live
 * scheduler filters and scores with kube-scheduler's NodeAffinity,
 * InterPodAffinity and PodTopologySpread as the engine implements them
 * (engine/affinity.c, interpod.c, spread.c; docs/affinity.md).
 *
 * The API server has validated the pod (k8s.io/kubernetes
 * pkg/apis/core/validation: ValidateAffinity, validateTopologySpreadConstraints),
 * so what does not read here is a double or a server gpuplane does not
 * understand: the pod is then unreadable with one line naming the field
 * (an operator not known, a weight outside 1-100, a maxSkew below 1, a
 * whenUnsatisfiable or inclusion policy not known, a missing topologyKey,
 * a member of the wrong type). matchLabelKeys and mismatchLabelKeys are
 * merged into their selectors with the pod's labels, as the API server
 * does for pod (anti-)affinity (KEP-3633) and kube-scheduler for
 * spreading (podtopologyspread/common.go): a key the pod lacks is
 * ignored; merging a selector the server merged already adds the same
 * requirement again, which changes nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kube/objects.h"

/* jansson's iterators take non-const pointers; the objects are only read. */
static json_t *mut(const json_t *j)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = j};
    return u.m;
}

/* The reader: the arena, the diagnostic and the path of the member read. */
struct rd {
    struct gp_arena *a;
    struct gp_diag *d;
    const struct gp_kv *labels; /* the pod's, for matchLabelKeys */
    size_t nlabels;
    char at[320];
    size_t len;
};

/* Appends ".name" or "[i]" to the path; returns the length to go back to. */
static size_t push(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t push(struct rd *r, const char *fmt, ...)
{
    size_t old = r->len;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(r->at + r->len, sizeof r->at - r->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        r->len += (size_t)w < sizeof r->at - r->len ? (size_t)w : sizeof r->at - 1 - r->len;
    return old;
}

static void pop(struct rd *r, size_t old)
{
    r->len = old;
    r->at[old] = '\0';
}

static enum gp_err fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static enum gp_err fail(struct rd *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gp_diag_set(r->d, GP_EINVALID, "%s: %s", r->at, msg);
}

static enum gp_err oom(struct rd *r)
{
    return gp_diag_set(r->d, GP_ENOMEM, "out of memory");
}

/* n zeroed elements of size bytes (NULL for none). */
static enum gp_err alloc(struct rd *r, size_t n, size_t size, void **out)
{
    *out = n ? gp_arena_alloc(r->a, n * size) : NULL;
    return n && !*out ? oom(r) : GP_OK;
}

/* A member that, when present, must be a list; its length in *n. */
static enum gp_err list_of(struct rd *r, const json_t *v, size_t *n)
{
    *n = 0;
    if (!v || json_is_null(v))
        return GP_OK;
    if (!json_is_array(v))
        return fail(r, "expected a list");
    *n = json_array_size(v);
    return GP_OK;
}

static enum gp_err object_of(struct rd *r, const json_t *v)
{
    return json_is_object(v) ? GP_OK : fail(r, "expected an object");
}

/* A required string member of o (empty refused when !empty_ok). */
static enum gp_err string_at(struct rd *r, const json_t *o, const char *k, bool required,
                             const char **out)
{
    const json_t *v = json_object_get(o, k);
    size_t back = push(r, ".%s", k);
    enum gp_err err = GP_OK;
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required)
            err = fail(r, "Required value");
    } else if (!json_is_string(v)) {
        err = fail(r, "expected a string");
    } else if (required && !json_string_value(v)[0]) {
        err = fail(r, "Required value");
    } else if (!(*out = gp_arena_strdup(r->a, json_string_value(v)))) {
        err = oom(r);
    }
    pop(r, back);
    return err;
}

/* An integer member of o from lo to hi; absent: *out unchanged and
 * *given false (required: an error). */
static enum gp_err int_at(struct rd *r, const json_t *o, const char *k, int64_t lo, int64_t hi,
                          bool required, int32_t *out, bool *given)
{
    const json_t *v = json_object_get(o, k);
    size_t back = push(r, ".%s", k);
    enum gp_err err = GP_OK;
    if (given)
        *given = false;
    if (!v || json_is_null(v)) {
        if (required)
            err = fail(r, "Required value");
    } else if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        err = fail(r, "must be an integer from %lld to %lld", (long long)lo, (long long)hi);
    } else {
        *out = (int32_t)json_integer_value(v);
        if (given)
            *given = true;
    }
    pop(r, back);
    return err;
}

/* A list of strings. */
static enum gp_err strings_at(struct rd *r, const json_t *o, const char *k, const char *const **out,
                              size_t *n)
{
    const json_t *v = json_object_get(o, k);
    size_t back = push(r, ".%s", k), count;
    const char **items = NULL;
    enum gp_err err = list_of(r, v, &count);
    if (err == GP_OK)
        err = alloc(r, count, sizeof *items, (void **)&items);
    for (size_t i = 0; err == GP_OK && i < count; i++) {
        const json_t *s = json_array_get(v, i);
        if (!json_is_string(s)) {
            size_t b = push(r, "[%zu]", i);
            err = fail(r, "expected a string");
            pop(r, b);
        } else if (!(items[i] = gp_arena_strdup(r->a, json_string_value(s))))
            err = oom(r);
    }
    pop(r, back);
    *out = items;
    *n = err == GP_OK ? count : 0;
    return err;
}

/* --- requirements ------------------------------------------------------------ */

/* Where a requirement is: a node selector term's labels or fields, or a
 * label selector (which has no Gt and Lt). */
enum place { NODE_LABELS, NODE_FIELDS, LABEL_SELECTOR };

static enum gp_err read_expr(struct rd *r, const json_t *o, enum place place,
                             struct gp_match_expr *x)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    const char *op;
    enum gp_err err = object_of(r, o);
    if (err == GP_OK)
        err = string_at(r, o, "key", true, &x->key);
    if (err == GP_OK)
        err = string_at(r, o, "operator", true, &op);
    if (err == GP_OK)
        err = strings_at(r, o, "values", &x->values, &x->nvalues);
    if (err != GP_OK)
        return err;
    size_t nops = place == NODE_FIELDS ? 2 : place == NODE_LABELS ? 6 : 4, i = 0;
    while (i < nops && strcmp(op, ops[i]) != 0)
        i++;
    size_t back = push(r, ".operator");
    if (i == nops)
        err = fail(r, "\"%s\" is not %s", op,
                   nops == 2   ? "In or NotIn"
                   : nops == 4 ? "In, NotIn, Exists or DoesNotExist"
                               : "In, NotIn, Exists, DoesNotExist, Gt or Lt");
    pop(r, back);
    if (err != GP_OK)
        return err;
    x->op = (enum gp_match_op)i;
    back = push(r, ".values");
    if (place == NODE_FIELDS && strcmp(x->key, "metadata.name") != 0)
        err =
            fail(r, "a field selector of key \"%s\" (the one node field is metadata.name)", x->key);
    else if (place == NODE_FIELDS && x->nvalues != 1)
        err = fail(r, "must have one element");
    else if ((x->op == GP_MATCH_IN || x->op == GP_MATCH_NOT_IN) && x->nvalues == 0)
        err = fail(r, "must be specified when `operator` is 'In' or 'NotIn'");
    else if ((x->op == GP_MATCH_EXISTS || x->op == GP_MATCH_DOES_NOT_EXIST) && x->nvalues)
        err = fail(r, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    else if ((x->op == GP_MATCH_GT || x->op == GP_MATCH_LT) && x->nvalues != 1)
        err = fail(r, "must be specified single value when `operator` is 'Lt' or 'Gt'");
    else if (x->op == GP_MATCH_GT || x->op == GP_MATCH_LT) {
        const char *s = x->values[0];
        size_t k = *s == '-' || *s == '+' ? 1 : 0;
        bool digits = s[k] != '\0' && strlen(s) <= 19;
        for (; s[k]; k++)
            digits = digits && s[k] >= '0' && s[k] <= '9';
        if (!digits)
            err = fail(r, "for 'Gt', 'Lt' operators, the value must be an integer");
    }
    pop(r, back);
    return err;
}

static enum gp_err exprs_at(struct rd *r, const json_t *o, const char *k, enum place place,
                            const struct gp_match_expr **out, size_t *n)
{
    const json_t *v = json_object_get(o, k);
    size_t back = push(r, ".%s", k), count;
    struct gp_match_expr *x = NULL;
    enum gp_err err = list_of(r, v, &count);
    if (err == GP_OK)
        err = alloc(r, count, sizeof *x, (void **)&x);
    for (size_t i = 0; err == GP_OK && i < count; i++) {
        size_t b = push(r, "[%zu]", i);
        err = read_expr(r, json_array_get(v, i), place, &x[i]);
        pop(r, b);
    }
    pop(r, back);
    *out = x;
    *n = err == GP_OK ? count : 0;
    return err;
}

/* --- node affinity -------------------------------------------------------------- */

static enum gp_err read_node_term(struct rd *r, const json_t *o, struct gp_node_term *t)
{
    enum gp_err err = object_of(r, o);
    if (err == GP_OK)
        err = exprs_at(r, o, "matchExpressions", NODE_LABELS, &t->labels, &t->nlabels);
    if (err == GP_OK)
        err = exprs_at(r, o, "matchFields", NODE_FIELDS, &t->fields, &t->nfields);
    return err;
}

static enum gp_err read_node_required(struct rd *r, const json_t *o, struct gp_pod_constraints *c)
{
    const json_t *v = json_object_get(o, "nodeSelectorTerms");
    size_t back = push(r, ".nodeSelectorTerms"), n;
    struct gp_node_term *t = NULL;
    enum gp_err err = object_of(r, o);
    if (err == GP_OK)
        err = list_of(r, v, &n);
    if (err == GP_OK && n == 0)
        err = fail(r, "must have at least one node selector term");
    if (err == GP_OK)
        err = alloc(r, n, sizeof *t, (void **)&t);
    for (size_t i = 0; err == GP_OK && i < n; i++) {
        size_t b = push(r, "[%zu]", i);
        err = read_node_term(r, json_array_get(v, i), &t[i]);
        pop(r, b);
    }
    pop(r, back);
    c->node_required = t;
    c->nnode_required = err == GP_OK ? n : 0;
    return err;
}

static enum gp_err read_node_preferred(struct rd *r, const json_t *v, struct gp_pod_constraints *c)
{
    size_t n;
    struct gp_node_term *t = NULL;
    enum gp_err err = list_of(r, v, &n);
    if (err == GP_OK)
        err = alloc(r, n, sizeof *t, (void **)&t);
    for (size_t i = 0; err == GP_OK && i < n; i++) {
        const json_t *o = json_array_get(v, i);
        size_t b = push(r, "[%zu]", i);
        err = object_of(r, o);
        if (err == GP_OK)
            err = int_at(r, o, "weight", 1, 100, true, &t[i].weight, NULL);
        if (err == GP_OK) {
            const json_t *pref = json_object_get(o, "preference");
            size_t b2 = push(r, ".preference");
            err = pref ? read_node_term(r, pref, &t[i]) : fail(r, "Required value");
            pop(r, b2);
        }
        pop(r, b);
    }
    c->node_preferred = t;
    c->nnode_preferred = err == GP_OK ? n : 0;
    return err;
}

/* --- label selectors and pod affinity terms --------------------------------- */

/* A label selector: given (even empty, which selects every pod) or not
 * (absent or null, which selects none). */
static enum gp_err selector_at(struct rd *r, const json_t *o, const char *k,
                               struct gp_label_selector *s)
{
    const json_t *v = json_object_get(o, k);
    memset(s, 0, sizeof *s);
    if (!v || json_is_null(v))
        return GP_OK;
    size_t back = push(r, ".%s", k);
    enum gp_err err = object_of(r, v);
    s->set = true;
    const json_t *ml = json_object_get(v, "matchLabels");
    size_t n = json_object_size(ml), i = 0;
    struct gp_kv *kv = NULL;
    if (err == GP_OK && ml && !json_is_null(ml) && !json_is_object(ml)) {
        size_t b = push(r, ".matchLabels");
        err = fail(r, "expected an object of strings");
        pop(r, b);
    }
    if (err == GP_OK)
        err = alloc(r, n, sizeof *kv, (void **)&kv);
    const char *key;
    json_t *val;
    json_object_foreach(mut(err == GP_OK ? ml : NULL), key, val)
    {
        if (!json_is_string(val)) {
            size_t b = push(r, ".matchLabels.%s", key);
            err = fail(r, "expected a string");
            pop(r, b);
            break;
        }
        kv[i].key = gp_arena_strdup(r->a, key);
        kv[i].value = gp_arena_strdup(r->a, json_string_value(val));
        if (!kv[i].key || !kv[i].value) {
            err = oom(r);
            break;
        }
        i++;
    }
    s->labels = kv;
    s->nlabels = i;
    if (err == GP_OK)
        err = exprs_at(r, v, "matchExpressions", LABEL_SELECTOR, &s->exprs, &s->nexprs);
    pop(r, back);
    return err;
}

/* matchLabelKeys (In) and mismatchLabelKeys (NotIn) merged into s with
 * the pod's values; neither without a selector, nor a key in both or in
 * the selector's matchLabels (the API's rules). */
static enum gp_err merge_keys(struct rd *r, const json_t *o, struct gp_label_selector *s,
                              bool mismatch_allowed)
{
    const char *const *keys[2] = {NULL, NULL};
    size_t nkeys[2] = {0, 0};
    static const char *const names[2] = {"matchLabelKeys", "mismatchLabelKeys"};
    enum gp_err err = strings_at(r, o, names[0], &keys[0], &nkeys[0]);
    if (err == GP_OK && mismatch_allowed)
        err = strings_at(r, o, names[1], &keys[1], &nkeys[1]);
    if (err != GP_OK || nkeys[0] + nkeys[1] == 0)
        return err;
    size_t back = push(r, ".%s", names[nkeys[0] ? 0 : 1]);
    if (!s->set)
        err = fail(r, "must not be specified when labelSelector is not set");
    for (size_t g = 0; err == GP_OK && g < 2; g++)
        for (size_t i = 0; err == GP_OK && i < nkeys[g]; i++) {
            bool twice = false;
            for (size_t j = 0; g == 0 && j < nkeys[1]; j++)
                twice = twice || strcmp(keys[0][i], keys[1][j]) == 0;
            for (size_t j = 0; j < s->nlabels; j++)
                twice = twice || strcmp(keys[g][i], s->labels[j].key) == 0;
            if (twice)
                err = fail(r,
                           "\"%s\" exists in both matchLabelKeys and mismatchLabelKeys or in "
                           "labelSelector's matchLabels",
                           keys[g][i]);
        }
    pop(r, back);
    struct gp_match_expr *x = NULL;
    if (err == GP_OK)
        err = alloc(r, s->nexprs + nkeys[0] + nkeys[1], sizeof *x, (void **)&x);
    if (err != GP_OK)
        return err;
    if (s->nexprs)
        memcpy(x, s->exprs, s->nexprs * sizeof *x);
    size_t m = s->nexprs;
    for (size_t g = 0; g < 2; g++)
        for (size_t i = 0; i < nkeys[g]; i++) {
            const char *value = NULL;
            for (size_t l = 0; l < r->nlabels && !value; l++)
                if (strcmp(r->labels[l].key, keys[g][i]) == 0)
                    value = r->labels[l].value;
            if (!value)
                continue; /* a key the pod does not have is ignored */
            const char **vals = gp_arena_alloc(r->a, sizeof *vals);
            if (!vals)
                return oom(r);
            vals[0] = value;
            x[m++] =
                (struct gp_match_expr){keys[g][i], g == 0 ? GP_MATCH_IN : GP_MATCH_NOT_IN, vals, 1};
        }
    s->exprs = x;
    s->nexprs = m;
    return GP_OK;
}

static enum gp_err read_pod_term(struct rd *r, const json_t *o, struct gp_pod_term *t)
{
    enum gp_err err = object_of(r, o);
    if (err == GP_OK)
        err = selector_at(r, o, "labelSelector", &t->selector);
    if (err == GP_OK)
        err = selector_at(r, o, "namespaceSelector", &t->ns_selector);
    if (err == GP_OK)
        err = strings_at(r, o, "namespaces", &t->namespaces, &t->nnamespaces);
    if (err == GP_OK)
        err = string_at(r, o, "topologyKey", true, &t->topology_key);
    if (err == GP_OK)
        err = merge_keys(r, o, &t->selector, true);
    return err;
}

/* Required (a list of PodAffinityTerm) or preferred (of
 * WeightedPodAffinityTerm) terms of podAffinity or podAntiAffinity. */
static enum gp_err pod_terms_at(struct rd *r, const json_t *o, bool preferred,
                                const struct gp_pod_term **out, size_t *n)
{
    const char *k = preferred ? "preferredDuringSchedulingIgnoredDuringExecution"
                              : "requiredDuringSchedulingIgnoredDuringExecution";
    const json_t *v = json_object_get(o, k);
    size_t back = push(r, ".%s", k), count;
    struct gp_pod_term *t = NULL;
    enum gp_err err = list_of(r, v, &count);
    if (err == GP_OK)
        err = alloc(r, count, sizeof *t, (void **)&t);
    for (size_t i = 0; err == GP_OK && i < count; i++) {
        const json_t *item = json_array_get(v, i);
        size_t b = push(r, "[%zu]", i);
        if (!preferred) {
            err = read_pod_term(r, item, &t[i]);
        } else if ((err = object_of(r, item)) == GP_OK &&
                   (err = int_at(r, item, "weight", 1, 100, true, &t[i].weight, NULL)) == GP_OK) {
            const json_t *term = json_object_get(item, "podAffinityTerm");
            size_t b2 = push(r, ".podAffinityTerm");
            err = term ? read_pod_term(r, term, &t[i]) : fail(r, "Required value");
            pop(r, b2);
        }
        pop(r, b);
    }
    pop(r, back);
    *out = t;
    *n = err == GP_OK ? count : 0;
    return err;
}

static enum gp_err read_affinity(struct rd *r, const json_t *aff, struct gp_pod_constraints *c)
{
    enum gp_err err = object_of(r, aff);
    const json_t *na = json_object_get(aff, "nodeAffinity");
    if (err == GP_OK && na && !json_is_null(na)) {
        size_t back = push(r, ".nodeAffinity");
        err = object_of(r, na);
        const json_t *req = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
        if (err == GP_OK && req && !json_is_null(req)) {
            size_t b = push(r, ".requiredDuringSchedulingIgnoredDuringExecution");
            err = read_node_required(r, req, c);
            pop(r, b);
        }
        const json_t *pref = json_object_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
        if (err == GP_OK && pref) {
            size_t b = push(r, ".preferredDuringSchedulingIgnoredDuringExecution");
            err = read_node_preferred(r, pref, c);
            pop(r, b);
        }
        pop(r, back);
    }
    for (int anti = 0; anti < 2 && err == GP_OK; anti++) {
        const json_t *pa = json_object_get(aff, anti ? "podAntiAffinity" : "podAffinity");
        if (!pa || json_is_null(pa))
            continue;
        size_t back = push(r, anti ? ".podAntiAffinity" : ".podAffinity");
        err = object_of(r, pa);
        if (err == GP_OK)
            err = anti ? pod_terms_at(r, pa, false, &c->anti, &c->nanti)
                       : pod_terms_at(r, pa, false, &c->affinity, &c->naffinity);
        if (err == GP_OK)
            err = anti ? pod_terms_at(r, pa, true, &c->anti_preferred, &c->nanti_preferred)
                       : pod_terms_at(r, pa, true, &c->affinity_preferred, &c->naffinity_preferred);
        pop(r, back);
    }
    return err;
}

/* --- topology spread constraints ------------------------------------------ */

/* nodeAffinityPolicy, nodeTaintsPolicy: Honor or Ignore (absent: dflt). */
static enum gp_err policy_at(struct rd *r, const json_t *o, const char *k, bool dflt, bool *honor)
{
    const char *s;
    enum gp_err err = string_at(r, o, k, false, &s);
    *honor = dflt;
    if (err != GP_OK || !s)
        return err;
    size_t back = push(r, ".%s", k);
    if (strcmp(s, "Honor") != 0 && strcmp(s, "Ignore") != 0)
        err = fail(r, "\"%s\" is not Honor or Ignore", s);
    *honor = strcmp(s, "Honor") == 0;
    pop(r, back);
    return err;
}

static enum gp_err read_spread(struct rd *r, const json_t *o, struct gp_spread *s)
{
    const char *when = NULL;
    bool has_min = false, honor_affinity = true;
    enum gp_err err = object_of(r, o);
    if (err == GP_OK)
        err = int_at(r, o, "maxSkew", 1, INT32_MAX, true, &s->max_skew, NULL);
    if (err == GP_OK)
        err = string_at(r, o, "topologyKey", true, &s->topology_key);
    if (err == GP_OK)
        err = string_at(r, o, "whenUnsatisfiable", true, &when);
    if (err == GP_OK) {
        size_t back = push(r, ".whenUnsatisfiable");
        if (strcmp(when, "DoNotSchedule") != 0 && strcmp(when, "ScheduleAnyway") != 0)
            err = fail(r, "\"%s\" is not DoNotSchedule or ScheduleAnyway", when);
        s->schedule_anyway = strcmp(when, "ScheduleAnyway") == 0;
        pop(r, back);
    }
    if (err == GP_OK)
        err = int_at(r, o, "minDomains", 1, INT32_MAX, false, &s->min_domains, &has_min);
    if (err == GP_OK && has_min && s->schedule_anyway) {
        size_t back = push(r, ".minDomains");
        err = fail(r, "can only use minDomains if whenUnsatisfiable=DoNotSchedule");
        pop(r, back);
    }
    if (err == GP_OK)
        err = policy_at(r, o, "nodeAffinityPolicy", true, &honor_affinity);
    if (err == GP_OK)
        err = policy_at(r, o, "nodeTaintsPolicy", false, &s->honor_taints);
    s->ignore_affinity = !honor_affinity;
    if (err == GP_OK)
        err = selector_at(r, o, "labelSelector", &s->selector);
    if (err == GP_OK)
        err = merge_keys(r, o, &s->selector, false);
    return err;
}

static enum gp_err read_spreads(struct rd *r, const json_t *v, struct gp_pod_constraints *c)
{
    size_t n;
    struct gp_spread *s = NULL;
    enum gp_err err = list_of(r, v, &n);
    if (err == GP_OK)
        err = alloc(r, n, sizeof *s, (void **)&s);
    for (size_t i = 0; err == GP_OK && i < n; i++) {
        size_t b = push(r, "[%zu]", i);
        err = read_spread(r, json_array_get(v, i), &s[i]);
        /* one constraint per (topologyKey, whenUnsatisfiable): the API's rule */
        for (size_t j = 0; err == GP_OK && j < i; j++)
            if (strcmp(s[j].topology_key, s[i].topology_key) == 0 &&
                s[j].schedule_anyway == s[i].schedule_anyway)
                err = fail(r, "a second constraint of topologyKey %s and whenUnsatisfiable %s",
                           s[i].topology_key,
                           s[i].schedule_anyway ? "ScheduleAnyway" : "DoNotSchedule");
        pop(r, b);
    }
    c->spread = s;
    c->nspread = err == GP_OK ? n : 0;
    return err;
}

enum gp_err gp_kube_pod_constraints_read(const json_t *spec, struct gp_arena *a,
                                         struct gp_pod_spec *s, struct gp_diag *d)
{
    const json_t *aff = json_object_get(spec, "affinity");
    const json_t *tsc = json_object_get(spec, "topologySpreadConstraints");
    s->constraints = NULL;
    if ((!aff || json_is_null(aff) || (json_is_object(aff) && json_object_size(aff) == 0)) &&
        (!tsc || json_is_null(tsc) || (json_is_array(tsc) && json_array_size(tsc) == 0)))
        return GP_OK; /* the common pod: nothing to read, nothing for the engine to track */
    struct rd r = {a, d, s->labels, s->nlabels, "", 0};
    struct gp_pod_constraints *c = gp_arena_alloc(a, sizeof *c); /* zeroed */
    if (!c)
        return oom(&r);
    enum gp_err err = GP_OK;
    if (aff && !json_is_null(aff)) {
        size_t back = push(&r, "spec.affinity");
        err = read_affinity(&r, aff, c);
        pop(&r, back);
    }
    if (err == GP_OK && tsc) {
        size_t back = push(&r, "spec.topologySpreadConstraints");
        err = read_spreads(&r, tsc, c);
        pop(&r, back);
    }
    if (err != GP_OK)
        return err;
    bool any = c->nnode_required || c->nnode_preferred || c->naffinity || c->nanti ||
               c->naffinity_preferred || c->nanti_preferred || c->nspread;
    s->constraints = any ? c : NULL;
    return GP_OK;
}

enum gp_err gp_kube_node_term_read(const json_t *o, struct gp_arena *a, struct gp_node_term *t,
                                   struct gp_diag *d)
{
    struct rd r = {a, d, NULL, 0, "nodeSelectorTerms[]", 19};
    memset(t, 0, sizeof *t);
    return read_node_term(&r, o, t);
}
