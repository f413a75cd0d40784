/* namespaces.c - the namespaces' labels, for a pod affinity term's
 * namespaceSelector: kube-scheduler matches it against the labels of the
 * Namespace objects (pkg/scheduler/framework/plugins/interpodaffinity:
 * the incoming pod's terms resolved to the namespaces the lister says the
 * selector selects, mergeAffinityTermNamespacesIfNotEmpty; bound pods'
 * terms against the incoming pod's namespace's labels,
 * GetNamespaceLabelsSnapshot, an empty set when the namespace is not
 * known). The live scheduler gives them (its Namespace informer); the
 * simulator gives none, and then each namespace has only the label the API
 * server sets on every one, kubernetes.io/metadata.name (topo.c).
 *
 * A change of a namespace's labels re-counts what they decide: only the
 * tallies of matchers with a namespaceSelector term, only for the bound
 * pods of that namespace (topo.c gp_eng_topo_ns_recount), nothing when the
 * labels are as they were; and the pods' remembered failures are retried
 * (the engine's generation). docs/affinity.md. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

struct ns_ent {
    char *name;
    struct gp_kv *labels; /* owned: keys and values in one block after them */
    size_t nlabels;
};

struct gp_ns_table {
    struct ns_ent *ents;
    size_t n, cap;
    uint32_t *slots; /* open addressing by name: 1 + index; 0: empty */
    size_t nslots;
};

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static size_t ent_find(const struct gp_ns_table *t, const char *name)
{
    if (!t || !t->nslots)
        return SIZE_MAX;
    for (size_t j = hash_name(name) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
        if (strcmp(t->ents[t->slots[j] - 1].name, name) == 0)
            return t->slots[j] - 1;
    return SIZE_MAX;
}

/* The slots filled again from the entries (their count unchanged). */
static void reslot(struct gp_ns_table *t)
{
    memset(t->slots, 0, t->nslots * sizeof *t->slots);
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash_name(t->ents[i].name) & (t->nslots - 1);
        while (t->slots[j])
            j = (j + 1) & (t->nslots - 1);
        t->slots[j] = (uint32_t)i + 1;
    }
}

static int grow_slots(struct gp_ns_table *t, size_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return -1;
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    reslot(t);
    return 0;
}

bool gp_eng_ns_labels(const struct gp_engine *e, const char *ns, const struct gp_kv **labels,
                      size_t *nlabels)
{
    const struct gp_ns_table *t = e->topo.nst;
    if (!t)
        return false;
    size_t i = ent_find(t, ns);
    *labels = i != SIZE_MAX ? t->ents[i].labels : NULL;
    *nlabels = i != SIZE_MAX ? t->ents[i].nlabels : 0;
    return true;
}

/* The labels as one owned block; NULL when out of memory (or none: *n 0). */
static struct gp_kv *labels_copy(const struct gp_kv *l, size_t n)
{
    size_t bytes = n * sizeof *l;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(l[i].key) + strlen(l[i].value) + 2;
    struct gp_kv *c = malloc(bytes ? bytes : 1);
    if (!c)
        return NULL;
    char *p = (char *)(c + n);
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(l[i].key) + 1, v = strlen(l[i].value) + 1;
        c[i].key = memcpy(p, l[i].key, k);
        c[i].value = memcpy(p + k, l[i].value, v);
        p += k + v;
    }
    return c;
}

static bool labels_same(const struct ns_ent *x, const struct gp_kv *l, size_t n)
{
    if (x->nlabels != n)
        return false;
    for (size_t i = 0; i < n; i++) { /* any order: each of one in the other */
        size_t j = 0;
        while (j < n && (strcmp(x->labels[j].key, l[i].key) != 0 ||
                         strcmp(x->labels[j].value, l[i].value) != 0))
            j++;
        if (j == n)
            return false;
    }
    return true;
}

/* What the labels decide is counted again: the matchers' tallies of ns's
 * bound pods (every namespace's, ns NULL) taken out under the labels as
 * they were, `apply` done, counted back in under the new ones; then what
 * was remembered of the cluster's state is dropped. */
static void relabel(struct gp_engine *e, const char *ns, void (*apply)(void *), void *arg)
{
    gp_eng_topo_ns_recount(e, ns, -1);
    apply(arg);
    gp_eng_topo_ns_recount(e, ns, 1);
    e->generation++; /* pods that failed may fit now, or bound terms match them */
    e->victim_gen++;
    e->topo_ver++;
    e->topo.anti_gen++;
    gp_eng_state_bump(e);
}

struct set_arg {
    struct gp_engine *e;
    struct gp_ns_table *t;
    size_t i;
    struct gp_kv *labels;
    size_t nlabels;
};

static void set_apply(void *p)
{
    struct set_arg *a = p;
    struct ns_ent *x = &a->t->ents[a->i];
    free(x->labels);
    x->labels = a->labels;
    x->nlabels = a->nlabels;
    a->e->topo.nst = a->t; /* (the first: from now on the table answers) */
}

enum gp_err gp_engine_namespace_set(struct gp_engine *e, const char *name,
                                    const struct gp_kv *labels, size_t nlabels)
{
    if (!name || !*name || (nlabels && !labels))
        return GP_EINVALID;
    for (size_t i = 0; i < nlabels; i++)
        if (!labels[i].key || !labels[i].value)
            return GP_EINVALID;
    struct gp_ns_table *t = e->topo.nst;
    bool first = !t;
    if (first && !(t = calloc(1, sizeof *t)))
        return GP_ENOMEM;
    size_t i = ent_find(t, name);
    if (i != SIZE_MAX && labels_same(&t->ents[i], labels, nlabels))
        return GP_OK; /* an update of something else (annotations, status): nothing to do */
    struct gp_kv *copy = labels_copy(labels, nlabels);
    if (!copy)
        goto oom;
    if (i == SIZE_MAX) { /* a new entry, with no labels until applied below */
        if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 16;
            struct ns_ent *ents = realloc(t->ents, cap * sizeof *ents);
            if (!ents)
                goto oom_copy;
            t->ents = ents;
            t->cap = cap;
        }
        if (2 * (t->n + 1) > t->nslots && grow_slots(t, t->nslots ? 2 * t->nslots : 32) != 0)
            goto oom_copy;
        char *n = strdup(name);
        if (!n)
            goto oom_copy;
        i = t->n++;
        t->ents[i] = (struct ns_ent){n, NULL, 0};
        size_t j = hash_name(name) & (t->nslots - 1);
        while (t->slots[j])
            j = (j + 1) & (t->nslots - 1);
        t->slots[j] = (uint32_t)i + 1;
    }
    struct set_arg a = {e, t, i, copy, nlabels};
    /* the first: every namespace goes from its name's label alone to its
     * labels as given (none until given) */
    relabel(e, first ? NULL : name, set_apply, &a);
    return GP_OK;
oom_copy:
    free(copy);
oom:
    if (first) {
        free(t->ents);
        free(t->slots);
        free(t);
    }
    return GP_ENOMEM;
}

struct del_arg {
    struct gp_ns_table *t;
    size_t i;
};

/* Takes entry i out (the last one moved into its place). */
static void del_apply(void *p)
{
    struct del_arg *a = p;
    struct gp_ns_table *t = a->t;
    free(t->ents[a->i].name);
    free(t->ents[a->i].labels);
    t->ents[a->i] = t->ents[--t->n];
    reslot(t);
}

enum gp_err gp_engine_namespace_delete(struct gp_engine *e, const char *name)
{
    struct gp_ns_table *t = e->topo.nst;
    size_t i = name ? ent_find(t, name) : SIZE_MAX;
    if (i == SIZE_MAX)
        return GP_ENOTFOUND;
    struct del_arg a = {t, i};
    relabel(e, name, del_apply, &a);
    return GP_OK;
}

void gp_eng_ns_free(struct gp_engine *e)
{
    struct gp_ns_table *t = e->topo.nst;
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->ents[i].name);
        free(t->ents[i].labels);
    }
    free(t->ents);
    free(t->slots);
    free(t);
    e->topo.nst = NULL;
}
