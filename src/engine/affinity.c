/* affinity.c - the selectors kube-scheduler's affinity plugins are made
 * of, and node affinity itself: a node's labels and fields as those
 * plugins read them (kubernetes.io/hostname is the node's name unless
 * the node says otherwise, as the kubelet labels it), requirements (In,
 * NotIn, Exists, DoesNotExist, Gt, Lt), node selector terms (ANDed
 * inside, ORed between; an empty one matches no node), label selectors
 * (matchLabels and matchExpressions; none written matches nothing, an
 * empty one everything), the NodeAffinity filter (the required terms)
 * and its score (the weights of the preferred terms a node matches).
 * Semantics: k8s.io/component-helpers/scheduling/corev1/nodeaffinity and
 * k8s.io/apimachinery/pkg/labels, read and re-derived (docs/affinity.md). */
#include "engine/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOSTNAME_KEY "kubernetes.io/hostname"

const char *gp_eng_node_label(const struct gp_node *n, const char *key)
{
    for (size_t j = 0; j < n->spec.nlabels; j++)
        if (strcmp(n->spec.labels[j].key, key) == 0)
            return n->spec.labels[j].value;
    if (n->spec.name && strcmp(key, HOSTNAME_KEY) == 0)
        return n->spec.name;
    return NULL;
}

/* A label value as labels.Requirement reads it for Gt and Lt: a base-10
 * integer (strconv.ParseInt), else no match. */
static bool parse_int(const char *s, long long *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool gp_eng_expr_matches(const struct gp_match_expr *x, const char *value)
{
    switch (x->op) {
    case GP_MATCH_IN:
    case GP_MATCH_NOT_IN: {
        bool in = false;
        for (size_t i = 0; value && i < x->nvalues && !in; i++)
            in = strcmp(x->values[i], value) == 0;
        return x->op == GP_MATCH_IN ? in : !in;
    }
    case GP_MATCH_EXISTS:
        return value != NULL;
    case GP_MATCH_DOES_NOT_EXIST:
        return value == NULL;
    case GP_MATCH_GT:
    case GP_MATCH_LT: {
        long long have, want;
        if (x->nvalues != 1 || !parse_int(value, &have) || !parse_int(x->values[0], &want))
            return false;
        return x->op == GP_MATCH_GT ? have > want : have < want;
    }
    }
    return false;
}

static const char *kv_get(const struct gp_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

bool gp_eng_selector_matches_labels(const struct gp_label_selector *s, const struct gp_kv *labels,
                                    size_t nlabels)
{
    if (!s->set)
        return false; /* labels.Nothing() */
    for (size_t i = 0; i < s->nlabels; i++) {
        const char *v = kv_get(labels, nlabels, s->labels[i].key);
        if (!v || strcmp(v, s->labels[i].value) != 0)
            return false;
    }
    for (size_t i = 0; i < s->nexprs; i++)
        if (!gp_eng_expr_matches(&s->exprs[i], kv_get(labels, nlabels, s->exprs[i].key)))
            return false;
    return true;
}

bool gp_eng_selector_empty(const struct gp_label_selector *s)
{
    return s->set && s->nlabels == 0 && s->nexprs == 0;
}

bool gp_eng_node_term_matches(const struct gp_node *n, const struct gp_node_term *t)
{
    if (t->nlabels == 0 && t->nfields == 0)
        return false; /* an empty term selects no node */
    for (size_t i = 0; i < t->nlabels; i++)
        if (!gp_eng_expr_matches(&t->labels[i], gp_eng_node_label(n, t->labels[i].key)))
            return false;
    /* matchFields: metadata.name (the reader allows no other field) */
    for (size_t i = 0; i < t->nfields && n->spec.name; i++)
        if (!gp_eng_expr_matches(&t->fields[i], n->spec.name))
            return false;
    return true;
}

bool gp_eng_node_affinity_ok(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_pod_constraints *c = p->spec.constraints;
    for (size_t i = 0; i < c->nnode_required; i++)
        if (gp_eng_node_term_matches(n, &c->node_required[i]))
            return true;
    return false;
}

/* The pod's node selector and required node affinity, both: which nodes
 * spreading counts (nodeAffinityPolicy: Honor). */
bool gp_eng_node_inclusion(const struct gp_node *n, const struct gp_pod *p)
{
    if (p->spec.nnode_selector && !gp_eng_selector_matches(n, p))
        return false;
    const struct gp_pod_constraints *c = p->spec.constraints;
    return !c || c->nnode_required == 0 || gp_eng_node_affinity_ok(n, p);
}

int64_t gp_eng_node_affinity_score(const struct gp_node *n, const struct gp_pod *p)
{
    const struct gp_pod_constraints *c = p->spec.constraints;
    int64_t score = 0;
    for (size_t i = 0; c && i < c->nnode_preferred; i++)
        if (gp_eng_node_term_matches(n, &c->node_preferred[i]))
            score += c->node_preferred[i].weight;
    return score;
}
