/* nofit.c - pods that can never fit: which, and why in numbers. At the end
 * of a run, the item of every pod that was never bound is tried, empty, on
 * the nodes that can exist - the cluster's and the templates of the pools
 * that can grow - with the engine's own filters (gp_engine_node_probe,
 * gp_engine_filter_alone, gp_engine_node_take_alone: affinity and
 * spreading, which depend on the other pods, cannot make a pod never fit). A pod that none of them
 * takes, or whose queue's cap is below it, can never fit; a gang can never start when the engine
 * found it could not fit the empty cluster (jobs.c) or its minMember exceeds the members its
 * PodGroup's objects run at once. The reason is the first need no node meets, in the engine's
 * filter order, with its numbers (struct gp_sim_nofit); pods with identical reasons share one row.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sharing.h"
#include "sim/internal.h"
#include "util/sbuf.h"

/* Nodes alike for every filter: one probe stands for `count` nodes that
 * can exist. */
struct nclass {
    struct gp_node probe;
    uint64_t count;
};

struct nofit {
    struct run *r;
    struct nclass *cls;
    size_t ncls, cap;
    uint32_t *node_cls; /* the cluster's node k -> its class */
    uint32_t *tmpl_cls; /* pool i -> its template's class; NONE: it cannot grow */
    uint64_t nodes;     /* nodes that can exist */
    int64_t *item_row;  /* item -> its row; -1: it fits; -2: not looked at yet */
    uint8_t *st;        /* scratch, per class: how far the pod gets (class_stage) */
    enum gp_filter *f;  /* scratch, per class: the resource filter at stage 4 */
    GP_VEC(struct gp_sim_nofit) rows;
};

static bool str_same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static bool spec_alike(const struct gp_node_spec *a, const struct gp_node_spec *b)
{
    if (a->cpu_milli != b->cpu_milli || a->mem_mib != b->mem_mib || a->gpu_count != b->gpu_count ||
        a->gpu_mem_mib != b->gpu_mem_mib || a->nvlink_gpus != b->nvlink_gpus ||
        a->driver_version != b->driver_version || a->sharing != b->sharing ||
        a->nlabels != b->nlabels || a->ntaints != b->ntaints ||
        !str_same(a->gpu_count ? a->gpu_model : NULL, b->gpu_count ? b->gpu_model : NULL))
        return false;
    for (size_t i = 0; i < a->nlabels; i++)
        if (!str_same(a->labels[i].key, b->labels[i].key) ||
            !str_same(a->labels[i].value, b->labels[i].value))
            return false;
    for (size_t i = 0; i < a->ntaints; i++)
        if (!str_same(a->taints[i].key, b->taints[i].key) ||
            !str_same(a->taints[i].value, b->taints[i].value) ||
            a->taints[i].effect != b->taints[i].effect)
            return false;
    return true;
}

/* The class of spec, added when new; NONE when the engine refuses it. */
static uint32_t class_of(struct nofit *x, const struct gp_node_spec *spec, uint64_t count)
{
    for (size_t i = 0; i < x->ncls; i++) {
        if (spec_alike(&x->cls[i].probe.spec, spec)) {
            x->cls[i].count += count;
            return (uint32_t)i;
        }
    }
    if (x->ncls == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        struct nclass *c = realloc(x->cls, cap * sizeof *c);
        if (!c)
            return NONE;
        x->cls = c;
        x->cap = cap;
    }
    struct nclass *c = &x->cls[x->ncls];
    if (gp_engine_node_probe(x->r->e, spec, &c->probe) != GP_OK)
        return NONE;
    c->count = count;
    return (uint32_t)x->ncls++;
}

/* Nodes a pool can add beyond those it starts with. */
static uint32_t pool_extra(const struct gp_pool_spec *ps)
{
    return ps->max_count > ps->count ? ps->max_count - ps->count : 0;
}

static enum gp_err classes_build(struct nofit *x)
{
    struct run *r = x->r;
    const struct gp_cluster *c = r->cluster;
    x->node_cls = malloc((c->nnodes ? c->nnodes : 1) * sizeof *x->node_cls);
    x->tmpl_cls = malloc((c->npools ? c->npools : 1) * sizeof *x->tmpl_cls);
    if (!x->node_cls || !x->tmpl_cls)
        return gp_sim_nomem(r);
    for (size_t k = 0; k < c->nnodes; k++)
        x->node_cls[k] = class_of(x, &r->nodes[k], 1);
    for (size_t i = 0; i < c->npools; i++) {
        x->tmpl_cls[i] = NONE;
        bool grows = r->pools && i < r->npools && r->pools[i].has_tmpl && pool_extra(&c->pools[i]);
        if (grows)
            x->tmpl_cls[i] = class_of(x, &r->pools[i].tmpl, pool_extra(&c->pools[i]));
    }
    for (size_t i = 0; i < x->ncls; i++)
        x->nodes += x->cls[i].count;
    x->f = malloc((x->ncls ? x->ncls : 1) * sizeof *x->f);
    x->st = malloc((x->ncls ? x->ncls : 1) * sizeof *x->st);
    return x->f && x->st ? GP_OK : gp_sim_nomem(r);
}

static bool takes(const struct nofit *x, const struct nclass *c, const struct gp_pod *p)
{
    struct gp_node n = c->probe;
    return gp_engine_node_take_alone(x->r->e, &n, p);
}

/* ---- the reason of one pod ------------------------------------------------ */

/* How far an empty node of class c gets with pod p, what the pod asks for
 * first and what keeps it off then: 0 its node selector does not match, 1
 * its GPU model is not one the pod accepts, 2 it does not share GPUs the
 * way the pod asks, 3 it has a taint the pod does not tolerate, 4 past
 * all of them (*res: the first filter, a resource one, that rejects it;
 * GP_FILTER_COUNT: none). Each test is the engine's filter on the node or
 * the pod with the others taken away. */
static uint8_t class_stage(const struct nofit *x, const struct nclass *c, const struct gp_pod *p,
                           enum gp_filter *res)
{
    const struct gp_engine *e = x->r->e;
    struct gp_node n = c->probe;
    n.spec.ntaints = 0;
    if (gp_engine_filter_alone(e, &n, p) == GP_FILTER_SELECTOR)
        return 0;
    struct gp_pod q = *p;
    q.spec.nnode_selector = 0;
    enum gp_filter f = gp_engine_filter_alone(e, &n, &q);
    if (f == GP_FILTER_GPU_MODEL)
        return 1;
    if (f == GP_FILTER_SHARING)
        return 2;
    if (c->probe.spec.ntaints && gp_engine_filter_alone(e, &c->probe, &q) == GP_FILTER_TAINT)
        return 3;
    *res = f;
    return 4;
}

static const char *selector_text(struct run *r, const struct gp_pod_spec *p)
{
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    for (size_t i = 0; i < p->nnode_selector; i++)
        gp_sbuf_printf(&b, "%s%s=%s", i ? ", " : "", p->node_selector[i].key,
                       p->node_selector[i].value ? p->node_selector[i].value : "");
    const char *s = b.oom ? NULL : gp_arena_strdup(r->a, gp_sbuf_str(&b));
    gp_sbuf_free(&b);
    return s;
}

static const char *effect_name(enum gp_taint_effect e)
{
    return e == GP_EFFECT_NO_EXECUTE ? "NoExecute" : "NoSchedule";
}

/* A taint of class c that the pod does not tolerate: the engine's answer
 * on the node with that taint alone. */
static const char *taint_text(struct nofit *x, const struct nclass *c, const struct gp_pod *p)
{
    struct gp_node n = c->probe;
    for (size_t i = 0; i < c->probe.spec.ntaints; i++) {
        const struct gp_taint *t = &c->probe.spec.taints[i];
        n.spec.taints = t;
        n.spec.ntaints = 1;
        if (gp_engine_filter_alone(x->r->e, &n, p) == GP_FILTER_TAINT)
            return gp_arena_printf(x->r->a, "%s%s%s:%s", t->key ? t->key : "",
                                   t->value && *t->value ? "=" : "", t->value ? t->value : "",
                                   effect_name(t->effect));
    }
    return NULL;
}

/* Adds s to the ", "-separated list in b unless it is there. */
static void list_add(struct gp_sbuf *b, const char *s)
{
    const char *have = gp_sbuf_str(b);
    size_t len = strlen(s);
    for (const char *p = strstr(have, s); p; p = strstr(p + 1, s))
        if ((p == have || p[-1] == ' ') && (p[len] == '\0' || p[len] == ','))
            return;
    gp_sbuf_printf(b, "%s%s", b->len ? ", " : "", s);
}

static const char *list_done(struct run *r, struct gp_sbuf *b)
{
    const char *s = b->oom ? NULL : gp_arena_strdup(r->a, gp_sbuf_str(b));
    gp_sbuf_free(b);
    return s;
}

/* The GPU models of the classes at stage `at` or past it, or how they
 * share GPUs. */
static const char *classes_text(struct nofit *x, int at, bool sharing)
{
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    for (size_t i = 0; i < x->ncls; i++) {
        const struct gp_node_spec *s = &x->cls[i].probe.spec;
        if (x->st[i] < at || s->gpu_count == 0)
            continue;
        if (sharing)
            list_add(&b, s->sharing ? gp_share_mode_name(s->sharing->mode) : "fractions");
        else
            list_add(&b, s->gpu_model && *s->gpu_model ? s->gpu_model : "(unnamed)");
    }
    return list_done(x->r, &b);
}

static const char *pod_models(struct run *r, const struct gp_pod_spec *p)
{
    struct gp_sbuf b;
    gp_sbuf_init(&b);
    for (size_t i = 0; i < p->ngpu_models; i++)
        gp_sbuf_printf(&b, "%s%s", i ? " or " : "", p->gpu_models[i]);
    return list_done(r, &b);
}

/* How the pod asks for GPUs, for a sharing mismatch. */
static const char *pod_sharing(struct run *r, const struct gp_pod_spec *p)
{
    if (p->mig_profile)
        return gp_arena_printf(r->a, "MIG %s instances", p->mig_profile);
    if (p->share_modes) {
        struct gp_sbuf b;
        gp_sbuf_init(&b);
        for (int m = 0; m < 8; m++)
            if (p->share_modes >> m & 1)
                gp_sbuf_printf(&b, "%s%s", b.len ? " or " : "",
                               gp_share_mode_name((enum gp_share_mode)m));
        const char *s = list_done(r, &b);
        return s ? gp_arena_printf(r->a, "GPUs shared by %s", s) : NULL;
    }
    return p->gpu_milli < GP_GPU_MILLI ? "a share of a GPU" : "whole GPUs";
}

/* The most GPUs (or MIG instances) of the pod's kind an empty node of
 * class c gives one pod, CPU and memory aside. */
static uint32_t gpus_given(const struct nofit *x, const struct nclass *c, const struct gp_pod *p)
{
    struct gp_pod q = *p;
    q.spec.cpu_milli = 0;
    q.spec.mem_mib = 0;
    q.spec.gpu_mem_mib = 0;
    for (uint32_t k = p->spec.gpu_count; k > 0; k--) {
        q.spec.gpu_count = k;
        if (takes(x, c, &q))
            return k;
    }
    return 0;
}

/* Whether a GPU of class c takes one GPU of the pod's memory, the rest aside. */
static bool gpu_memory_given(const struct nofit *x, const struct nclass *c, const struct gp_pod *p)
{
    struct gp_pod q = *p;
    q.spec.cpu_milli = 0;
    q.spec.mem_mib = 0;
    q.spec.gpu_count = 1;
    return takes(x, c, &q);
}

/* Whether the pod names the GPU model of spec among those it accepts. */
static bool model_named(const struct gp_pod_spec *p, const struct gp_node_spec *n)
{
    for (size_t i = 0; i < p->ngpu_models; i++)
        if (str_same(p->gpu_models[i], n->gpu_model))
            return true;
    return false;
}

/* The largest of a resource over every node (index 0), over the nodes of
 * the models the pod names (1) and over those it may use (2). */
struct maxes {
    int64_t v[3];
};

static void maxes_add(struct maxes *m, int k, int64_t v)
{
    m->v[k] = v > m->v[k] ? v : m->v[k];
}

/* Narrowed: the largest node they may use is smaller than the largest
 * node; the scope is their GPU models when those alone explain it. */
static void narrow(struct run *r, const struct gp_pod_spec *s, const struct maxes *m,
                   struct gp_sim_nofit *o)
{
    o->narrowed = m->v[2] < m->v[0];
    if (o->narrowed && s->ngpu_models > 0 && m->v[1] == m->v[2])
        o->scope = pod_models(r, s);
}

/* The first resource no node they may use (classes past the sharing
 * filter, with GPUs when they ask for some) has enough of. */
static void resource_reason(struct nofit *x, const struct gp_pod *p, struct gp_sim_nofit *o)
{
    const struct gp_pod_spec *s = &p->spec;
    bool gpu = s->gpu_count > 0;
    struct maxes cpu = {{0}}, mem = {{0}}, phys = {{0}}, gmem = {{0}};
    uint32_t given = 0;
    bool gmem_ok = false, any = false;
    for (size_t i = 0; i < x->ncls; i++) {
        const struct nclass *c = &x->cls[i];
        const struct gp_node_spec *n = &c->probe.spec;
        if (gpu && n->gpu_count == 0)
            continue; /* a GPU pod's largest node is one with GPUs */
        for (int k = 0; k < 2; k++) {
            if (k == 1 && !model_named(s, n))
                break;
            maxes_add(&cpu, k, n->cpu_milli);
            maxes_add(&mem, k, n->mem_mib);
            maxes_add(&phys, k, n->gpu_count);
            maxes_add(&gmem, k, n->gpu_mem_mib);
        }
        if (x->st[i] < 4 || (gpu && n->gpu_count == 0))
            continue;
        any = true;
        maxes_add(&cpu, 2, n->cpu_milli);
        maxes_add(&mem, 2, n->mem_mib);
        maxes_add(&phys, 2, n->gpu_count);
        maxes_add(&gmem, 2, n->gpu_mem_mib);
        if (gpu) {
            uint32_t k = gpus_given(x, c, p);
            given = k > given ? k : given;
            gmem_ok |= s->gpu_mem_mib == 0 || s->mig_profile || gpu_memory_given(x, c, p);
        }
    }
    o->cpu_milli = s->cpu_milli;
    o->mem_mib = s->mem_mib;
    o->gpus = s->gpu_count;
    if (gpu && !any) { /* no node they may use has a GPU */
        o->kind = GP_SIM_NOFIT_GPUS;
        o->need = s->gpu_count;
        o->have = 0;
        o->what = s->mig_profile;
        o->narrowed = phys.v[0] > 0;
        return;
    }
    if (s->cpu_milli > cpu.v[2]) {
        o->kind = GP_SIM_NOFIT_CPU;
        o->need = s->cpu_milli;
        o->have = cpu.v[2];
        narrow(x->r, s, &cpu, o);
    } else if (s->mem_mib > mem.v[2]) {
        o->kind = GP_SIM_NOFIT_MEMORY;
        o->need = s->mem_mib;
        o->have = mem.v[2];
        narrow(x->r, s, &mem, o);
    } else if (gpu && given < s->gpu_count) {
        o->kind = GP_SIM_NOFIT_GPUS;
        o->need = s->gpu_count;
        o->have = given;
        o->what = s->mig_profile;
        narrow(x->r, s, &phys, o);
        /* a sharing limit, not the GPUs: what one pod can be given */
        o->have_what = !s->mig_profile && given < phys.v[2] ? "per pod" : NULL;
    } else if (gpu && !gmem_ok) {
        o->kind = GP_SIM_NOFIT_GPU_MEMORY;
        o->need = s->gpu_mem_mib;
        o->have = gmem.v[2];
        narrow(x->r, s, &gmem, o);
    } else {
        o->kind = GP_SIM_NOFIT_TOGETHER;
    }
}

/* Whether pod p fits some node that can exist, empty; if not, *o says why. */
static bool pod_never_fits(struct nofit *x, const struct gp_pod *p, struct gp_sim_nofit *o)
{
    const struct gp_engine *e = x->r->e;
    for (size_t i = 0; i < x->ncls; i++) {
        enum gp_filter f = gp_engine_filter_alone(e, &x->cls[i].probe, p);
        if ((f == GP_FILTER_COUNT || f == GP_FILTER_QUOTA) && takes(x, &x->cls[i], p))
            return false;
    }
    uint8_t best = 0;
    size_t at = 0;
    for (size_t i = 0; i < x->ncls; i++) {
        x->f[i] = GP_FILTER_COUNT;
        x->st[i] = class_stage(x, &x->cls[i], p, &x->f[i]);
        if (x->st[i] > best) {
            best = x->st[i];
            at = i;
        }
    }
    memset(o, 0, sizeof *o);
    o->need = o->have = -1;
    uint64_t passed = 0;
    for (size_t i = 0; i < x->ncls; i++)
        passed += x->st[i] >= best ? x->cls[i].count : 0;
    if (x->nodes == 0) { /* no node can ever exist */
        o->kind = GP_SIM_NOFIT_FILTER;
        o->filter = GP_FILTER_NODE_STATE;
        return true;
    }
    switch (best) {
    case 0:
        o->kind = GP_SIM_NOFIT_SELECTOR;
        o->what = selector_text(x->r, &p->spec);
        o->need = (int64_t)x->nodes;
        break;
    case 1:
        o->kind = GP_SIM_NOFIT_GPU_MODEL;
        o->what = pod_models(x->r, &p->spec);
        o->have_what = classes_text(x, 1, false);
        break;
    case 2:
        o->kind = GP_SIM_NOFIT_SHARING;
        o->what = pod_sharing(x->r, &p->spec);
        o->have_what = classes_text(x, 2, true);
        break;
    case 3: {
        struct gp_pod q = *p; /* the taint, whatever the selector */
        q.spec.nnode_selector = 0;
        o->kind = GP_SIM_NOFIT_TAINT;
        o->what = taint_text(x, &x->cls[at], &q);
        o->need = (int64_t)passed;
        break;
    }
    default:
        resource_reason(x, p, o);
        if (o->kind == GP_SIM_NOFIT_TOGETHER) {
            /* no single resource: the filter that rejects the node they
             * got furthest on, when it is not CPU, memory or GPU count */
            enum gp_filter f = x->f[at];
            if (f != GP_FILTER_CPU && f != GP_FILTER_MEMORY && f != GP_FILTER_GPU_COUNT &&
                f != GP_FILTER_COUNT) {
                o->kind = GP_SIM_NOFIT_FILTER;
                o->filter = f;
            }
        }
        break;
    }
    return true;
}

/* Whether `members` pods like p exceed a cap of their queue or an
 * ancestor even with the queue empty; if so, *o says which. */
static bool quota_never_fits(struct nofit *x, const struct gp_pod *p, uint32_t members,
                             struct gp_sim_nofit *o)
{
    const struct gp_engine *e = x->r->e;
    int64_t req[3] = {(int64_t)p->spec.gpu_count * p->spec.gpu_milli * members,
                      p->spec.cpu_milli * members, p->spec.mem_mib * members};
    static const enum gp_sim_nofit_kind kinds[3] = {GP_SIM_NOFIT_GPUS, GP_SIM_NOFIT_CPU,
                                                    GP_SIM_NOFIT_MEMORY};
    for (uint32_t q = p->spec.queue; q != GP_QUEUE_NONE; q = gp_engine_queue_parent(e, q)) {
        const struct gp_queue_spec *qs = gp_engine_queue_spec(e, q);
        if (!qs)
            break;
        const struct gp_quota *quota[3] = {&qs->gpu_milli, &qs->cpu_milli, &qs->mem_mib};
        for (int k = 0; k < 3; k++) {
            int64_t cap = quota[k]->guaranteed + quota[k]->borrow_limit;
            if (quota[k]->limited && req[k] > cap) {
                memset(o, 0, sizeof *o);
                o->kind = GP_SIM_NOFIT_QUOTA;
                o->resource = kinds[k];
                o->what = qs->name;
                o->need = req[k];
                o->have = cap;
                return true;
            }
        }
    }
    return false;
}

/* ---- gangs ---------------------------------------------------------------- */

/* The value of label key on spec; NULL: none. */
static const char *label_of(const struct gp_node_spec *spec, const char *key)
{
    for (size_t i = 0; i < spec->nlabels; i++)
        if (strcmp(spec->labels[i].key, key) == 0)
            return spec->labels[i].value ? spec->labels[i].value : "";
    return NULL;
}

struct domain {
    const char *value;
    int64_t milli;
};

static void domain_add(struct domain *d, size_t *n, const char *value, int64_t milli)
{
    size_t i = 0;
    while (i < *n && !str_same(d[i].value, value))
        i++;
    if (i == *n) {
        d[i].value = value;
        d[i].milli = 0;
        (*n)++;
    }
    d[i].milli += milli;
}

/* The most GPU milli of the nodes that can take pod p, in one value of
 * label key (NULL: in the whole cluster), with every pool at its maximum;
 * -1 when out of memory. */
static int64_t domain_capacity(struct nofit *x, const struct gp_pod *p, const char *key)
{
    struct run *r = x->r;
    const struct gp_cluster *c = r->cluster;
    bool *ok = malloc((x->ncls ? x->ncls : 1) * sizeof *ok);
    size_t cap = c->nnodes + 1;
    for (size_t i = 0; i < c->npools; i++)
        cap += r->topo && r->topo[i].n ? r->topo[i].n : 1;
    struct domain *d = malloc(cap * sizeof *d);
    int64_t best = -1;
    if (!ok || !d)
        goto out;
    for (size_t i = 0; i < x->ncls; i++)
        ok[i] = takes(x, &x->cls[i], p);
    size_t nd = 0;
    for (size_t k = 0; k < c->nnodes; k++) {
        const char *v = key ? label_of(&r->nodes[k], key) : "";
        if (x->node_cls[k] != NONE && ok[x->node_cls[k]] && v)
            domain_add(d, &nd, v, (int64_t)r->nodes[k].gpu_count * GP_GPU_MILLI);
    }
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_pool_spec *ps = &c->pools[i];
        if (x->tmpl_cls[i] == NONE || !ok[x->tmpl_cls[i]])
            continue;
        int64_t node_milli = (int64_t)ps->gpus_per_node * GP_GPU_MILLI;
        const struct pool_topo *t = r->topo ? &r->topo[i] : NULL;
        if (key && t && t->n && ps->topology_key && strcmp(ps->topology_key, key) == 0) {
            /* the domains' room left beyond the nodes the run starts with */
            uint32_t size = ps->max_count > ps->count ? ps->max_count : ps->count;
            for (uint32_t k = 0; k < t->n; k++) {
                uint32_t room = size - k * ps->nodes_per_domain;
                room = room < ps->nodes_per_domain ? room : ps->nodes_per_domain;
                uint32_t start =
                    ps->count > k * ps->nodes_per_domain ? ps->count - k * ps->nodes_per_domain : 0;
                start = start < ps->nodes_per_domain ? start : ps->nodes_per_domain;
                if (room > start)
                    domain_add(d, &nd, t->values[k], (int64_t)(room - start) * node_milli);
            }
            continue;
        }
        const char *v = key ? label_of(&r->pools[i].tmpl, key) : "";
        if (v)
            domain_add(d, &nd, v, (int64_t)pool_extra(ps) * node_milli);
    }
    best = 0;
    for (size_t i = 0; i < nd; i++)
        best = d[i].milli > best ? d[i].milli : best;
out:
    free(ok);
    free(d);
    return best;
}

/* Why gang instance ii can never start. */
static enum gp_err gang_reason(struct nofit *x, uint32_t ii, struct gp_sim_nofit *o)
{
    struct run *r = x->r;
    const struct inst *in = inst_at(r, ii);
    const struct gp_item *it = &r->wl->items[in->item];
    const struct gp_pod *p = gp_engine_pod(r->e, lpod_at(r, in->head)->epod);
    uint32_t members = in->created;
    memset(o, 0, sizeof *o);
    if (in->nofit == NOFIT_MEMBERS || !p) {
        /* the pods its PodGroup's objects run at once (io/ counts them) */
        o->kind = GP_SIM_NOFIT_GANG_MEMBERS;
        o->need = it->gang_min;
        o->have = it->gang_members ? it->gang_members : members;
    } else if (!pod_never_fits(x, p, o) && !quota_never_fits(x, p, it->gang_min, o)) {
        const char *key = it->topology_required ? it->topology_key : NULL;
        int64_t have = domain_capacity(x, p, key);
        if (have < 0)
            return gp_sim_nomem(r);
        memset(o, 0, sizeof *o);
        o->kind = GP_SIM_NOFIT_GANG_GPUS;
        o->what = key;
        o->need = (int64_t)it->gang_min * p->spec.gpu_count * p->spec.gpu_milli;
        o->have = have;
        o->gpus = it->gang_min; /* the pods it needs at once */
    }
    o->gang = it->group_name ? it->group_name : it->name;
    return GP_OK;
}

/* ---- rows ------------------------------------------------------------------- */

static bool row_same(const struct gp_sim_nofit *a, const struct gp_sim_nofit *b)
{
    return a->kind == b->kind && a->resource == b->resource && a->filter == b->filter &&
           str_same(a->gang, b->gang) && str_same(a->what, b->what) &&
           str_same(a->have_what, b->have_what) && a->need == b->need && a->have == b->have &&
           a->narrowed == b->narrowed && str_same(a->scope, b->scope) &&
           a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib && a->gpus == b->gpus;
}

/* The row of reason o: an identical one, or a new one; -1: out of memory. */
static int64_t row_of(struct nofit *x, const struct gp_sim_nofit *o)
{
    for (size_t i = 0; i < x->rows.len; i++)
        if (row_same(&x->rows.items[i], o))
            return (int64_t)i;
    if (GP_VEC_PUSH(&x->rows, *o) != 0)
        return -1;
    return (int64_t)x->rows.len - 1;
}

/* The row of the pods of item i (engine pod p), looked at once; -1: they fit. */
static enum gp_err item_row(struct nofit *x, uint32_t item, uint32_t ii, const struct gp_pod *p,
                            int64_t *row)
{
    if (x->item_row[item] != -2) {
        *row = x->item_row[item];
        return GP_OK;
    }
    struct gp_sim_nofit o;
    *row = -1;
    if (ii != NONE) {
        enum gp_err err = gang_reason(x, ii, &o);
        if (err != GP_OK)
            return err;
    }
    if (ii != NONE || pod_never_fits(x, p, &o) || quota_never_fits(x, p, 1, &o)) {
        if ((*row = row_of(x, &o)) < 0)
            return gp_sim_nomem(x->r);
    }
    x->item_row[item] = *row;
    return GP_OK;
}

/* Counts `pods` pods (and `gangs` gangs) of item `item` in its row. */
static enum gp_err count(struct nofit *x, uint32_t item, uint32_t ii, const struct gp_pod *p,
                         uint64_t pods, uint64_t gangs)
{
    int64_t row;
    enum gp_err err = item_row(x, item, ii, p, &row);
    if (err == GP_OK && row >= 0) {
        x->rows.items[row].pods += pods;
        x->rows.items[row].gangs += gangs;
    }
    return err;
}

static enum gp_err count_timed(struct nofit *x)
{
    struct run *r = x->r;
    for (uint32_t ii = gp_idtab_first(&r->insts); ii < r->insts.n; ii++) {
        const struct inst *in = inst_at(r, ii);
        enum gp_err err = GP_OK;
        if (!in) /* released: every pod of it ran or completed (jobs.c) */
            continue;
        if (in->group) {
            if (in->nofit && in->head != NONE)
                err = count(x, in->item, ii, NULL, in->created, 1);
            if (err != GP_OK)
                return err;
            continue;
        }
        for (uint32_t lp = in->head; lp != NONE; lp = lpod_at(r, lp)->next) {
            const struct lpod *l = lpod_at(r, lp);
            const struct gp_pod *p = gp_engine_pod(r->e, l->epod);
            if (l->runs == 0 && l->state != LP_COMPLETED && p &&
                (err = count(x, in->item, NONE, p, 1, 0)) != GP_OK)
                return err;
        }
    }
    return GP_OK;
}

static enum gp_err count_static(struct nofit *x)
{
    struct run *r = x->r;
    for (size_t i = 0; i < r->static_failed.len; i++) {
        const struct gp_pod *p = gp_engine_pod(r->e, r->static_failed.items[i].epod);
        enum gp_err err = p ? count(x, r->static_failed.items[i].item, NONE, p, 1, 0) : GP_OK;
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* Whether any pod of the run was never bound (nothing to look at otherwise). */
static bool any_unbound(const struct run *r)
{
    if (r->cfg->mode == GP_SIM_STATIC)
        return r->static_failed.len > 0;
    for (uint32_t i = gp_idtab_first(&r->lpods); i < r->lpods.n; i++) {
        const struct lpod *l = lpod_at(r, i); /* NULL: released, it ran or completed */
        if (l && l->runs == 0 && l->state != LP_COMPLETED)
            return true;
    }
    return false;
}

enum gp_err gp_sim_nofit_finish(struct run *r)
{
    if (!any_unbound(r))
        return GP_OK;
    struct nofit x = {.r = r};
    enum gp_err err = classes_build(&x);
    if (err == GP_OK &&
        !(x.item_row = malloc((r->wl->nitems ? r->wl->nitems : 1) * sizeof *x.item_row)))
        err = gp_sim_nomem(r);
    for (size_t i = 0; err == GP_OK && i < r->wl->nitems; i++)
        x.item_row[i] = -2;
    if (err == GP_OK)
        err = r->cfg->mode == GP_SIM_STATIC ? count_static(&x) : count_timed(&x);
    if (err != GP_OK)
        goto out;
    /* most pods first; ties keep the order of first appearance */
    struct gp_sim_nofit *rows = x.rows.items;
    for (size_t i = 1; i < x.rows.len; i++) {
        struct gp_sim_nofit o = rows[i];
        size_t j = i;
        for (; j > 0 && rows[j - 1].pods < o.pods; j--)
            rows[j] = rows[j - 1];
        rows[j] = o;
    }
    size_t n = 0;
    for (size_t i = 0; i < x.rows.len; i++) {
        if (rows[i].pods == 0)
            continue;
        rows[n++] = rows[i];
        r->out->pods_never_fit += rows[i].pods;
    }
    if (n > 0 && !(r->out->nofit = gp_arena_memdup(r->a, rows, n * sizeof *rows)))
        err = gp_sim_nomem(r);
    else
        r->out->nnofit = n;
out:
    free(x.cls);
    free(x.node_cls);
    free(x.tmpl_cls);
    free(x.item_row);
    free(x.f);
    free(x.st);
    GP_VEC_FREE(&x.rows);
    return err;
}
