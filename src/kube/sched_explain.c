/* sched_explain.c - an unschedulable pod's explanation in kube-scheduler's
 * words, node by node where the engine's counts cannot say them: a
 * cordoned node, a taint by key and value, a node not Ready, a
 * nodeSelector or node affinity not matched; then DefaultPreemption's
 * account of why preemption did not help, appended as kube-scheduler
 * appends it. The sources followed (kubernetes/kubernetes, v1.28):
 *  - pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go:
 *    spec.unschedulable, unless the pod tolerates the
 *    node.kubernetes.io/unschedulable:NoSchedule taint, is
 *    "node(s) were unschedulable";
 *  - .../tainttoleration/taint_toleration.go: the first NoSchedule or
 *    NoExecute taint of the node's list the pod does not tolerate
 *    (v1helper.FindMatchingUntoleratedTaint), "node(s) had untolerated
 *    taint {KEY: VALUE}";
 *  - .../nodeaffinity/node_affinity.go: ErrReasonPod, "node(s) didn't
 *    match Pod's node affinity/selector", for the selector and the
 *    required affinity alike;
 *  - .../podtopologyspread/filtering.go: a node without a DoNotSchedule
 *    constraint's topologyKey is ErrReasonNodeLabelNotMatch, "node(s)
 *    didn't match pod topology spread constraints (missing required
 *    label)", UnschedulableAndUnresolvable (the engine's one spreading
 *    reason told apart here); the skew is ErrReasonConstraintsNotMatch,
 *    Unschedulable; .../interpodaffinity/filtering.go's three reasons are
 *    the engine's words (the affinity rules UnschedulableAndUnresolvable);
 *  - the default profile's filter order (NodeUnschedulable, NodeName,
 *    TaintToleration, NodeAffinity, ..., NodeResourcesFit): a node counts
 *    under its first failing plugin;
 *  - .../defaultpreemption/default_preemption.go: PostFilter's message
 *    prefixed "preemption: "; PodEligibleToPreemptOthers' "not eligible
 *    due to preemptionPolicy=Never."; SelectVictimsOnNode's "No
 *    preemption victims found for incoming pod" for a node with no pod of
 *    lower priority, else the filter's reason once they are all removed;
 *  - pkg/scheduler/framework/preemption/preemption.go:
 *    nodesWherePreemptionMightHelp gives a node rejected
 *    UnschedulableAndUnresolvable (the three plugins above, InterPodAffinity's
 *    affinity rules) "Preemption is not helpful for scheduling", and the
 *    FitError of all nodes is the message;
 *  - pkg/scheduler/framework/types.go FitError.Error: the PostFilter
 *    message after the histogram in " %v." (hence "..pod..").
 * A node Ready=False (Unknown, absent) is one the node lifecycle
 * controller taints node.kubernetes.io/not-ready (unreachable) with
 * NoSchedule (TaintNodesByCondition), the taint named when the node's own
 * list has no other: gpuplane places nothing on a node not Ready, where
 * kube-scheduler reads only the taint. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/objects.h"
#include "kube/sched_internal.h"

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Kubernetes' Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go). */
static bool tolerates(const struct gp_pod_spec *ps, const char *key, const char *value,
                      enum gp_taint_effect effect)
{
    for (size_t i = 0; i < ps->ntolerations; i++) {
        const struct gp_toleration *t = &ps->tolerations[i];
        if (!t->any_effect && t->effect != effect)
            continue;
        if (!t->key || !*t->key) {
            if (t->op_exists)
                return true;
            continue;
        }
        if (strcmp(t->key, key) == 0 && (t->op_exists || str_eq(t->value, value)))
            return true;
    }
    return false;
}

bool gp_ks_tolerates_cordon(const struct gp_pod_spec *ps)
{
    return tolerates(ps, GP_KUBE_TAINT_UNSCHEDULABLE, NULL, GP_EFFECT_NO_SCHEDULE);
}

/* The node's Ready condition's status ("True", "False", "Unknown"); NULL
 * when it has none. */
static const char *ready_status(const json_t *node)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && strcmp(type, "Ready") == 0)
            return json_string_value(json_object_get(c, "status"));
    }
    return NULL;
}

/* Why kube-scheduler would turn node n away before its resources, in its
 * words, for a node the engine turned away so (state, selector, node
 * affinity, taint). */
static void static_reason(const struct snode *n, const struct gp_pod_spec *ps, char *buf,
                          size_t size)
{
    bool cordoned = json_is_true(json_object_get(json_object_get(n->obj, "spec"), "unschedulable"));
    if (cordoned && !gp_ks_tolerates_cordon(ps)) {
        snprintf(buf, size, "node(s) were unschedulable");
        return;
    }
    for (size_t i = 0; i < n->spec.ntaints; i++) {
        const struct gp_taint *t = &n->spec.taints[i];
        if (t->effect != GP_EFFECT_PREFER_NO_SCHEDULE &&
            !tolerates(ps, t->key, t->value, t->effect)) {
            snprintf(buf, size, "node(s) had untolerated taint {%s: %s}", t->key,
                     t->value ? t->value : "");
            return;
        }
    }
    const char *ready = ready_status(n->obj);
    if (!ready || strcmp(ready, "True") != 0)
        snprintf(buf, size, "node(s) had untolerated taint {%s: }",
                 ready && strcmp(ready, "Unknown") == 0 ? "node.kubernetes.io/unreachable"
                                                        : "node.kubernetes.io/not-ready");
    else
        snprintf(buf, size, "node(s) didn't match Pod's node affinity/selector");
}

static bool is_static(enum gp_filter f)
{
    return f == GP_FILTER_NODE_STATE || f == GP_FILTER_SELECTOR || f == GP_FILTER_NODE_AFFINITY ||
           f == GP_FILTER_TAINT;
}

/* Filters that no preemption can help: kube-scheduler's
 * UnschedulableAndUnresolvable ones, and gpuplane's own that read only
 * the node (its GPU model, its driver, a gang's topology domain). */
static bool unresolvable(enum gp_filter f)
{
    return is_static(f) || f == GP_FILTER_POD_AFFINITY || f == GP_FILTER_GPU_MODEL ||
           f == GP_FILTER_DRIVER || f == GP_FILTER_TOPOLOGY || f == GP_FILTER_VOLUME_BINDING ||
           f == GP_FILTER_VOLUME_ZONE ||
           f == GP_FILTER_VOLUME_BIND; /* (VolumeBinding, VolumeZone: volumes.c) */
}

/* Whether node n lacks the topologyKey of one of the pod's DoNotSchedule
 * spread constraints: PodTopologySpread's Filter then says
 * ErrReasonNodeLabelNotMatch, "node(s) didn't match pod topology spread
 * constraints (missing required label)", UnschedulableAndUnresolvable
 * (podtopologyspread/filtering.go), where the engine has one reason for
 * both. kubernetes.io/hostname is on every node (the kubelet's label; the
 * engine reads the node's name for it). */
static bool spread_label_missing(const struct snode *n, const struct gp_pod_spec *ps)
{
    const struct gp_pod_constraints *c = ps->constraints;
    for (size_t i = 0; c && i < c->nspread; i++) {
        const char *key = c->spread[i].topology_key;
        if (c->spread[i].schedule_anyway || strcmp(key, "kubernetes.io/hostname") == 0)
            continue;
        bool has = false;
        for (size_t j = 0; j < n->spec.nlabels && !has; j++)
            has = strcmp(n->spec.labels[j].key, key) == 0;
        if (!has)
            return true;
    }
    return false;
}

/* Whether the pod has a DoNotSchedule spread constraint. */
static bool ps_spreads(const struct gp_pod_spec *ps)
{
    const struct gp_pod_constraints *c = ps->constraints;
    for (size_t i = 0; c && i < c->nspread; i++)
        if (!c->spread[i].schedule_anyway)
            return true;
    return false;
}

static uint32_t parts_of(const struct snode *n)
{
    return n->info.split && n->eng_mig != SP_NONE ? n->info.nparts : 1;
}

static uint32_t part_at(const struct snode *n, uint32_t k)
{
    return k == 0 ? n->eng : n->eng_mig + k - 1;
}

/* The lowest priority of a pod on each engine node, once a batch. */
static void low_priorities(struct gp_kube_sched *s, struct gp_ks_words *w)
{
    if (w->have)
        return;
    w->have = true;
    size_t nn = gp_engine_node_count(s->e);
    w->low = nn ? malloc(nn * sizeof *w->low) : NULL;
    if (!w->low)
        return; /* out of memory: every node read as having none */
    w->nlow = nn;
    for (size_t i = 0; i < nn; i++)
        w->low[i] = INT32_MAX;
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *q = s->pods[i];
        if ((q->st == SP_BOUND || q->st == SP_ASSUMED || q->st == SP_PREEMPTING) &&
            q->eng != SP_NONE && q->node < nn && q->spec.priority < w->low[q->node])
            w->low[q->node] = q->spec.priority;
    }
}

static bool has_lower(const struct gp_ks_words *w, const struct snode *n, int32_t priority)
{
    for (uint32_t k = 0; k < parts_of(n); k++) {
        uint32_t id = part_at(n, k);
        if (id < w->nlow && w->low[id] < priority)
            return true;
    }
    return false;
}

/* The words of filter f for pod p on one node, as the histogram says them. */
static void filter_words(const struct spod *p, enum gp_filter f, char *buf, size_t size)
{
    struct gp_explain one;
    memset(&one, 0, sizeof one);
    one.nodes_total = 1;
    one.rejected[f] = 1;
    char text[512];
    gp_kube_explain_pod_text(&one, &p->spec, text, sizeof text);
    static const char head[] = "0/1 nodes are available: 1 ";
    const char *at = strncmp(text, head, sizeof head - 1) == 0 ? text + sizeof head - 1 : text;
    size_t len = strlen(at);
    if (len && at[len - 1] == '.')
        len--;
    if (len >= size)
        len = size - 1;
    memcpy(buf, at, len);
    buf[len] = '\0';
}

/* The i-th of the pod's other resources (model.h, struct gp_scalar)
 * node part nd has too little of free, as "Insufficient NAME"; false
 * when there are not so many. */
static bool scalar_short(const struct gp_node *nd, const struct gp_pod_spec *ps, size_t i,
                         char *buf, size_t size)
{
    for (size_t k = 0; k < ps->nscalars; k++) {
        int64_t free = 0;
        for (size_t j = 0; j < nd->spec.nscalars && j < GP_MAX_SCALARS; j++)
            if (strcmp(nd->spec.scalars[j].name, ps->scalars[k].name) == 0)
                free = nd->scalar_free[j];
        if (ps->scalars[k].amount > free && i-- == 0) {
            snprintf(buf, size, "Insufficient %s", ps->scalars[k].name);
            return true;
        }
    }
    return false;
}

/* NodeResourcesFit names every resource a node is short of
 * (noderesources/fit.go fitsRequest: cpu, memory, then the extended
 * resources, each "Insufficient <name>"), where the engine stops at the
 * first, cpu or memory (f): the others it would name are added (GPUs for
 * a pod of whole nvidia.com/gpu on a node that does not share them). */
static void also_short(const struct gp_node *nd, const struct gp_pod_spec *ps, enum gp_filter f,
                       struct gp_kube_reasons *r)
{
    if (f == GP_FILTER_PODS && ps->cpu_milli > nd->cpu_free_milli)
        gp_kube_reasons_add(r, 1, "Insufficient cpu");
    if ((f == GP_FILTER_PODS || f == GP_FILTER_CPU) && (int64_t)ps->mem_mib > nd->mem_free_mib)
        gp_kube_reasons_add(r, 1, "Insufficient memory");
    /* ephemeral-storage, hugepages, extended resources: each by name (the
     * engine's one reason, GP_FILTER_SCALAR, is these) */
    char text[160];
    for (size_t i = 0; scalar_short(nd, ps, i, text, sizeof text); i++)
        gp_kube_reasons_add(r, 1, text);
    bool whole = ps->gpu_count > 0 && ps->gpu_milli == GP_GPU_MILLI && !ps->share_modes &&
                 !ps->mig_profile && ps->gpu_resource == GP_GPU_RES_GPU && !nd->spec.sharing;
    if (whole && nd->gpus_whole_free < ps->gpu_count)
        gp_kube_reasons_add(r, 1, "Insufficient nvidia.com/gpu");
}

void gp_ks_words_nodes(struct gp_kube_sched *s, struct gp_ks_words *w, const struct spod *p,
                       struct gp_explain *x, struct gp_ks_reasons *out)
{
    memset(out, 0, sizeof *out);
    const struct gp_pod *ep = s->e && p->eng != SP_NONE ? gp_engine_pod(s->e, p->eng) : NULL;
    if (!ep)
        return;
    /* a gang's members have the PodGroup plugin's account, not this one;
     * a pod that may not preempt, PodEligibleToPreemptOthers' */
    out->preempt = p->spec.group == 0 && p->st != SP_PREEMPTING; /* its own: gp_ks_words_waiting */
    out->never = p->spec.preempt_never;
    bool hist = out->preempt && !out->never;
    if (hist)
        low_priorities(s, w);
    /* the engine's parts turned away for a reason no preemption helps:
     * once all are found, only nodes with a pod of lower priority need
     * their filter asked (the others have no victims) */
    uint32_t left = 0;
    for (int f = 0; f < GP_FILTER_COUNT; f++)
        if (hist ? unresolvable((enum gp_filter)f) : is_static((enum gp_filter)f))
            left += x->rejected[f];
    uint32_t short_left = x->rejected[GP_FILTER_CPU] + x->rejected[GP_FILTER_MEMORY] +
                          x->rejected[GP_FILTER_PODS] + x->rejected[GP_FILTER_SCALAR];
    /* spreading's nodes, to tell those without the key (spread_label_missing) */
    uint32_t spread_left = ps_spreads(&p->spec) ? x->rejected[GP_FILTER_SPREAD] : 0;
    char text[160];
    uint32_t no_victims = 0;
    for (size_t i = 0; i < s->nnodes; i++) {
        const struct snode *n = s->nodes[i];
        if (n->eng == SP_NONE)
            continue;
        const struct gp_node *nd = gp_engine_node(s->e, n->eng);
        if (!nd)
            continue;
        if (!n->obj || nd->state == GP_NODE_GONE) {
            /* deleted: kube-scheduler's snapshot has it no more */
            enum gp_filter f = gp_engine_filter(s->e, nd, ep);
            if (f < GP_FILTER_COUNT && x->rejected[f] > 0 && x->nodes_total > 0) {
                x->rejected[f]--;
                x->nodes_total--;
                left -= left > 0 && (hist ? unresolvable(f) : is_static(f));
            }
            continue;
        }
        uint32_t part = gp_ks_part(n, &p->spec);
        bool lower = hist && has_lower(w, n, p->spec.priority);
        out->nodes++;
        if (left == 0 && short_left == 0 && spread_left == 0 && !lower) {
            no_victims += hist; /* counted, added once below */
            continue;
        }
        const struct gp_node *pd = gp_engine_node(s->e, part);
        enum gp_filter f = gp_engine_filter(s->e, pd ? pd : nd, ep);
        if (left > 0 && (hist ? unresolvable(f) : is_static(f)))
            left--; /* its other parts, if any, keep the walk asking */
        if ((f == GP_FILTER_CPU || f == GP_FILTER_MEMORY || f == GP_FILTER_PODS ||
             f == GP_FILTER_SCALAR) &&
            short_left > 0) {
            short_left--;
            also_short(pd ? pd : nd, &p->spec, f, &out->nodes_words);
            if (f == GP_FILTER_SCALAR && x->rejected[f] > 0)
                x->rejected[f]--; /* said by name above */
        }
        bool no_label = false;
        if (f == GP_FILTER_SPREAD && spread_left > 0) {
            spread_left--;
            no_label = spread_label_missing(n, &p->spec) && x->rejected[f] > 0;
            if (no_label) {
                x->rejected[f]--;
                gp_kube_reasons_add(&out->nodes_words, 1,
                                    "node(s) didn't match pod topology spread constraints "
                                    "(missing required label)");
            }
        }
        if (is_static(f) && x->rejected[f] > 0) {
            /* one node for kube-scheduler: its other parts are taken out
             * as any split node's are (gp_ks_explain_text) */
            x->rejected[f]--;
            static_reason(n, &p->spec, text, sizeof text);
            gp_kube_reasons_add(&out->nodes_words, 1, text);
        }
        if (!hist)
            continue;
        if (unresolvable(f) || no_label)
            gp_kube_reasons_add(&out->victims, 1, "Preemption is not helpful for scheduling");
        else if (!lower || f == GP_FILTER_COUNT)
            no_victims++;
        else {
            /* removing its pods of lower priority was not enough: the
             * reason it fails now stands for the one it would fail then */
            if (f != GP_FILTER_SCALAR ||
                !scalar_short(pd ? pd : nd, &p->spec, 0, text, sizeof text))
                filter_words(p, f, text, sizeof text);
            gp_kube_reasons_add(&out->victims, 1, text);
        }
    }
    gp_kube_reasons_add(&out->victims, no_victims, "No preemption victims found for incoming pod");
}

void gp_ks_words_apply(const struct gp_ks_reasons *r, char *msg, size_t size)
{
    for (size_t i = 0; i < r->nodes_words.n; i++)
        gp_kube_explain_add(msg, size, r->nodes_words.item[i].count, r->nodes_words.item[i].text);
    if (r->terminating) {
        size_t len = strlen(msg);
        if (len < size)
            snprintf(msg + len, size - len,
                     " preemption: not eligible due to a terminating pod on the nominated node..");
        return;
    }
    if (!r->preempt || (!r->never && r->nodes == 0))
        return;
    char tail[1024];
    if (r->never)
        snprintf(tail, sizeof tail, "not eligible due to preemptionPolicy=Never.");
    else
        gp_kube_reasons_format(&r->victims, r->nodes, tail, sizeof tail);
    size_t len = strlen(msg);
    if (len < size)
        snprintf(msg + len, size - len, " preemption: %s.", tail);
}

void gp_ks_words_free(struct gp_ks_words *w)
{
    free(w->low);
    memset(w, 0, sizeof *w);
}

/* The words of the pod's GPU request refused for want of free devices:
 * "Insufficient nvidia.com/gpu" (.shared, mig-<profile>), as
 * gp_kube_explain_pod_text says the resource it asks. */
static void gpu_words(const struct spod *p, char *buf, size_t size)
{
    const struct gp_pod_spec *ps = &p->spec;
    enum gp_filter f = ps->mig_profile ? GP_FILTER_MIG
                       : ps->gpu_milli < GP_GPU_MILLI || ps->gpu_resource == GP_GPU_RES_SHARED
                           ? GP_FILTER_GPU_REPLICA
                           : GP_FILTER_GPU_COUNT;
    filter_words(p, f, buf, size);
}

void gp_ks_words_waiting(struct gp_kube_sched *s, const struct spod *p, bool retried, char *msg,
                         size_t size)
{
    /* kube-scheduler v1.28 (pkg/scheduler/schedule_one.go, framework
     * types.go FitError): the attempt that preempts ends Unschedulable
     * with the filters' histogram and no PostFilter message (the
     * PostFilter succeeded: a nominated node, victims deleted); the
     * victims, terminating, stay in the scheduler's cache with their
     * requests, so the nominated node fails NodeResourcesFit for each
     * resource they still hold that the preemptor needs. A later attempt
     * while they terminate: DefaultPreemption's PodEligibleToPreemptOthers
     * (defaultpreemption/default_preemption.go) "not eligible due to a
     * terminating pod on the nominated node." */
    msg[0] = '\0';
    const struct gp_pod *ep = s->e && p->eng != SP_NONE ? gp_engine_pod(s->e, p->eng) : NULL;
    if (!ep)
        return;
    struct gp_explain x;
    memset(&x, 0, sizeof x);
    for (size_t i = 0; i < gp_engine_node_count(s->e); i++) {
        const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)i);
        if (!nd)
            continue;
        x.nodes_total++;
        if ((uint32_t)i == p->node)
            continue; /* its nominated part: the victims' words below */
        enum gp_filter f = gp_engine_filter(s->e, nd, ep);
        if (f < GP_FILTER_COUNT)
            x.rejected[f]++;
    }
    struct gp_ks_words w = {0};
    struct gp_ks_reasons *kr = malloc(sizeof *kr);
    if (kr)
        gp_ks_words_nodes(s, &w, p, &x, kr);
    gp_ks_explain_text(s, &x, &p->spec, msg, size);
    /* the nominated node: what its victims hold beyond what is free
     * without them (kube-scheduler's free = the engine's free + the
     * preemptor's request - the victims'; short when victims > free) */
    int64_t cpu = 0, mem = 0, held_cpu = 0, held_mem = 0;
    bool gpus = false;
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *v = s->pods[i];
        if (v->st == SP_EVICTED && v->eng != SP_NONE && v->stop_node == p->node) {
            held_cpu += v->spec.cpu_milli; /* held in the engine (sched_cycle.c victim_hold) */
            held_mem += (int64_t)v->spec.mem_mib;
        }
        if (v->st != SP_EVICTED || v->preemptor != p)
            continue;
        cpu += v->spec.cpu_milli;
        mem += (int64_t)v->spec.mem_mib;
        for (unsigned a = 0; a < v->stop_pick.ngpus; a++)
            for (unsigned b = 0; b < p->pick.ngpus; b++)
                gpus |= v->stop_node == p->node && v->stop_pick.gpu[a] == p->pick.gpu[b];
    }
    const struct gp_node *nd = gp_engine_node(s->e, p->node);
    char text[160];
    bool said = false;
    if (nd && p->spec.cpu_milli > 0 && cpu > nd->cpu_free_milli + held_cpu) {
        gp_kube_explain_add(msg, size, 1, "Insufficient cpu");
        said = true;
    }
    if (nd && p->spec.mem_mib > 0 && mem > nd->mem_free_mib + held_mem) {
        gp_kube_explain_add(msg, size, 1, "Insufficient memory");
        said = true;
    }
    if (gpus || (!said && p->spec.gpu_count > 0)) {
        gpu_words(p, text, sizeof text);
        gp_kube_explain_add(msg, size, 1, text);
    }
    if (kr) {
        kr->terminating = retried;
        gp_ks_words_apply(kr, msg, size);
    } else if (retried) {
        size_t len = strlen(msg);
        if (len < size)
            snprintf(msg + len, size - len,
                     " preemption: not eligible due to a terminating pod on the nominated node..");
    }
    free(kr);
    gp_ks_words_free(&w);
}
