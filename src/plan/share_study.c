/* share_study.c - the renter's question (share_study.h): the fewest nodes
 * of each GPU pool that hold a workload's steady state under each way of
 * sharing the GPUs, packed by the engine itself. */
#include "plan/share_study.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/share.h"

#define MAX_NODES 4096 /* more nodes than this for one option is a mistake */

/* The replica counts tried for time-slicing and MPS. */
static const uint32_t ts_replicas[] = {2, 4, 6, 8, 12, 16};
static const uint32_t mps_replicas[] = {2, 3, 4, 5, 6, 7, 8};

/* A study: the pods of the steady state, largest GPU memory first. */
struct study {
    const struct gp_pod_spec **pods;
    size_t npods;
    struct gp_arena *a;
    struct gp_diag *diag;
};

static int pod_cmp(const void *pa, const void *pb)
{
    const struct gp_pod_spec *a = *(const struct gp_pod_spec *const *)pa;
    const struct gp_pod_spec *b = *(const struct gp_pod_spec *const *)pb;
    uint64_t ga = (uint64_t)a->gpu_count * a->gpu_mem_mib,
             gb = (uint64_t)b->gpu_count * b->gpu_mem_mib;
    if (ga != gb)
        return ga > gb ? -1 : 1;
    uint64_t ma = (uint64_t)a->gpu_count * a->gpu_milli, mb = (uint64_t)b->gpu_count * b->gpu_milli;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli > b->cpu_milli ? -1 : 1;
    return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* The workload's pods running at once: every replica, every Job's
 * parallelism, every Pod; gangs and queues play no part here. */
static enum gp_err steady_pods(struct study *s, const struct gp_workload *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nitems; i++) {
        const struct gp_item *it = &w->items[i];
        n += it->kind == GP_ITEM_DEPLOYMENT ? it->replicas
             : it->kind == GP_ITEM_JOB      ? (it->parallelism ? it->parallelism : 1)
                                            : 1;
    }
    if (n == 0)
        return gp_diag_set(s->diag, GP_EINVALID, "the workload has no pods to place");
    if (n > 100000)
        return gp_diag_set(s->diag, GP_ELIMIT,
                           "%zu pods at once, more than the 100000 a study takes", n);
    struct gp_pod_spec *specs = gp_arena_alloc(s->a, n * sizeof *specs);
    s->pods = gp_arena_alloc(s->a, n * sizeof *s->pods);
    if (!specs || !s->pods)
        return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < w->nitems; i++) {
        const struct gp_item *it = &w->items[i];
        size_t c = it->kind == GP_ITEM_DEPLOYMENT ? it->replicas
                   : it->kind == GP_ITEM_JOB      ? (it->parallelism ? it->parallelism : 1)
                                                  : 1;
        for (size_t j = 0; j < c; j++, k++) {
            specs[k] = it->pod;
            specs[k].queue = 0;
            specs[k].group = 0;
            s->pods[k] = &specs[k];
        }
    }
    s->npods = n;
    qsort(s->pods, n, sizeof *s->pods, pod_cmp);
    return GP_OK;
}

/* The node spec of a pool shared by sh: the pool with one node, expanded
 * as every cluster is (gp_cluster_expand: its labels, the pool and model
 * labels, its price). */
static enum gp_err pool_node(struct study *s, const struct gp_pool_spec *p,
                             const struct gp_sharing_spec *sh, struct gp_node_spec *out)
{
    struct gp_pool_spec *one = gp_arena_alloc(s->a, sizeof *one);
    if (!one)
        return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
    *one = *p;
    one->count = one->min_count = one->max_count = 1;
    one->sharing = *sh;
    struct gp_cluster c = {.name = p->name, .source = p->name, .pools = one, .npools = 1};
    enum gp_err err = gp_cluster_expand(&c, s->a, s->diag);
    if (err == GP_OK)
        *out = c.nodes[0];
    return err;
}

/* What one packing attempt gives. */
struct trial {
    bool all;          /* every pod placed */
    size_t failed_pod; /* the first that was not */
    enum gp_filter reason;
    bool has_refusal; /* the sharing filter's why, in words */
    char refusal[256];
    uint32_t gpus_busy;
    double slowdown_sum, slowdown_max;
};

/* Packs the pods onto n nodes of spec. */
static enum gp_err pack(struct study *s, const struct gp_node_spec *spec, uint32_t n,
                        struct trial *t)
{
    memset(t, 0, sizeof *t);
    struct gp_engine *e = gp_engine_new(gp_policy_find("best-fit"), 1);
    if (!e)
        return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
    enum gp_err err = GP_OK;
    for (uint32_t i = 0; i < n && err == GP_OK; i++)
        err = gp_engine_node_add(e, spec, NULL);
    t->all = true;
    for (size_t k = 0; k < s->npods && err == GP_OK && t->all; k++) {
        uint32_t id;
        struct gp_decision d;
        if ((err = gp_engine_pod_add(e, s->pods[k], 0, &id)) != GP_OK ||
            (err = gp_engine_schedule_pod(e, id, &d)) != GP_OK)
            break;
        if (d.kind != GP_DECISION_BIND) {
            t->all = false;
            t->failed_pod = k;
            t->reason = gp_explain_main(&d.explain);
            if (t->reason == GP_FILTER_SHARING && n > 0 &&
                gp_share_refusal(gp_engine_node(e, 0), gp_engine_pod(e, id), t->refusal,
                                 sizeof t->refusal))
                t->has_refusal = true;
        }
    }
    if (err != GP_OK) {
        err = gp_diag_set(s->diag, err, "pool %s: the engine refused a node or pod: %s", spec->pool,
                          gp_strerror(err));
        goto done;
    }
    /* per GPU: the pods' compute demand, for time-slicing's slowdown */
    for (uint32_t i = 0; i < n; i++) {
        const struct gp_node *node = gp_engine_node(e, i);
        for (uint32_t g = 0; g < node->spec.gpu_count; g++)
            t->gpus_busy += node->gpu[g].pods > 0;
    }
    if (spec->sharing && spec->sharing->mode == GP_SHARE_TIMESLICE) {
        double(*demand)[GP_MAX_GPUS_PER_NODE] = calloc(n, sizeof *demand);
        if (!demand) {
            err = gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
            goto done;
        }
        /* a pod's demand counts once on each GPU it holds replicas of
         * (more replicas of one GPU give it no more of its time) */
        size_t npods = gp_engine_pod_count(e);
        for (size_t k = 0; k < npods; k++) {
            const struct gp_pod *p = gp_engine_pod(e, (uint32_t)k);
            if (p->state != GP_POD_BOUND)
                continue;
            uint32_t seen = 0;
            for (uint32_t i = 0; i < p->pick.ngpus; i++)
                if (!(seen >> p->pick.gpu[i] & 1)) {
                    seen |= 1u << p->pick.gpu[i];
                    demand[p->node][p->pick.gpu[i]] +=
                        p->spec.gpu_milli > 0 ? p->spec.gpu_milli : GP_GPU_MILLI;
                }
        }
        for (size_t k = 0; k < npods; k++) {
            const struct gp_pod *p = gp_engine_pod(e, (uint32_t)k);
            if (p->state != GP_POD_BOUND || p->pick.ngpus == 0)
                continue;
            double d = 0; /* its slowest GPU sets its pace */
            for (uint32_t i = 0; i < p->pick.ngpus; i++)
                if (demand[p->node][p->pick.gpu[i]] / GP_GPU_MILLI > d)
                    d = demand[p->node][p->pick.gpu[i]] / GP_GPU_MILLI;
            double slow = d > 1 ? d : 1;
            t->slowdown_sum += slow;
            if (slow > t->slowdown_max)
                t->slowdown_max = slow;
        }
        free(demand);
    }
done:
    gp_engine_free(e);
    return err;
}

/* What a way of sharing isolates, one line (in the arena). */
static const char *isolation_text(struct study *s, const struct gp_sharing_spec *sh)
{
    switch (sh->mode) {
    case GP_SHARE_EXCLUSIVE:
        return "full: each pod has whole GPUs to itself";
    case GP_SHARE_TIMESLICE:
        return "none for memory or faults: the pods of a GPU share its time and memory "
               "(slowdown in the table)";
    case GP_SHARE_MPS: {
        const char *t = gp_arena_printf(
            s->a,
            "limits per client (%u %% of the SMs, %.0f GiB of memory), but no fault isolation: "
            "a fault in one client stops the others on its GPU",
            sh->mps.active_thread_pct, sh->mps.pinned_mem_mib / 1024.0);
        return t ? t : "per-client limits";
    }
    case GP_SHARE_MIG:
        return "in hardware: each instance has its own memory, cache and SMs";
    }
    return "";
}

static bool same_request(const struct gp_pod_spec *a, const struct gp_pod_spec *b)
{
    return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
           a->gpu_count == b->gpu_count && a->gpu_milli == b->gpu_milli &&
           a->gpu_mem_mib == b->gpu_mem_mib && a->share_modes == b->share_modes &&
           a->mig_profile == b->mig_profile && a->gpu_resource == b->gpu_resource &&
           a->gpu_models == b->gpu_models && a->node_selector == b->node_selector &&
           a->tolerations == b->tolerations;
}

/* The fewest nodes of spec that hold every pod (one option). */
static enum gp_err study_option(struct study *s, const struct gp_pool_spec *p,
                                const struct gp_sharing_spec *sh, struct gp_study_option *o)
{
    struct gp_node_spec spec;
    enum gp_err err = pool_node(s, p, sh, &spec);
    if (err != GP_OK)
        return err;
    memset(o, 0, sizeof *o);
    o->pool = p->name;
    o->gpu_model = p->gpu_model;
    o->mode = sh->mode;
    o->replicas = sh->replicas ? sh->replicas : 1;
    o->rename_by_default = sh->rename_by_default;
    o->fail_requests_greater_than_one = sh->fail_requests_greater_than_one;
    o->pods = (uint32_t)s->npods;
    o->isolation = isolation_text(s, sh);
    /* a pod that fits no empty node rules the option out */
    struct trial t;
    for (size_t k = 0; k < s->npods; k++) {
        if (k > 0 && same_request(s->pods[k - 1], s->pods[k]))
            continue; /* as the last one tried */
        struct study one = *s;
        one.pods = &s->pods[k];
        one.npods = 1;
        if ((err = pack(&one, &spec, 1, &t)) != GP_OK)
            return err;
        if (!t.all) {
            o->why = gp_arena_printf(s->a, "pod %s fits no empty %s node: %s",
                                     s->pods[k]->name ? s->pods[k]->name : "?", p->name,
                                     t.has_refusal ? t.refusal : gp_filter_text(t.reason));
            return o->why ? GP_OK : gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
        }
    }
    uint32_t max_nodes = s->npods < MAX_NODES ? (uint32_t)s->npods : MAX_NODES;
    for (uint32_t n = 1; n <= max_nodes; n++) {
        if ((err = pack(s, &spec, n, &t)) != GP_OK)
            return err;
        if (!t.all)
            continue;
        o->feasible = true;
        o->nodes = n;
        o->gpus = n * p->gpus_per_node;
        o->gpus_busy = t.gpus_busy;
        o->usd_per_hour = n * p->price_per_hour_usd;
        o->slowdown_mean = sh->mode == GP_SHARE_TIMESLICE ? t.slowdown_sum / (double)s->npods : 1;
        o->slowdown_max = sh->mode == GP_SHARE_TIMESLICE ? t.slowdown_max : 1;
        return GP_OK;
    }
    o->why = gp_arena_printf(s->a, "more than %u nodes", max_nodes);
    return o->why ? GP_OK : gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
}

/* Keeps the better of two options of one mode: feasible, fewer nodes,
 * then fewer replicas (tried in increasing order, so the first). */
static bool better(const struct gp_study_option *a, const struct gp_study_option *b)
{
    if (a->feasible != b->feasible)
        return a->feasible;
    return a->feasible && a->nodes < b->nodes;
}

/* Whether a replicated option of pool p is renamed (its replicas
 * advertised as nvidia.com/gpu.shared): as the pool says when it shares
 * its GPUs that way, else when the workload asks for nvidia.com/gpu.shared
 * and never for nvidia.com/gpu, as the device plugin must then be set up. */
static bool rename_for(const struct study *s, const struct gp_pool_spec *p)
{
    if (p->sharing.mode == GP_SHARE_TIMESLICE || p->sharing.mode == GP_SHARE_MPS)
        return p->sharing.rename_by_default;
    bool shared = false;
    for (size_t k = 0; k < s->npods; k++) {
        const struct gp_pod_spec *q = s->pods[k];
        if (q->gpu_count == 0 || q->mig_profile)
            continue;
        if (q->gpu_resource == GP_GPU_RES_GPU)
            return false;
        shared |= q->gpu_resource == GP_GPU_RES_SHARED;
    }
    return shared;
}

/* The best option of a replicated mode (time-slicing or MPS). */
static enum gp_err study_replicated(struct study *s, const struct gp_pool_spec *p,
                                    enum gp_share_mode mode, const uint32_t *replicas, size_t nr,
                                    struct gp_study_option *best)
{
    for (size_t i = 0; i < nr; i++) {
        struct gp_sharing_spec *sh = gp_arena_alloc(s->a, sizeof *sh);
        if (!sh)
            return gp_diag_set(s->diag, GP_ENOMEM, "out of memory");
        memset(sh, 0, sizeof *sh);
        sh->mode = mode;
        sh->replicas = replicas[i];
        sh->rename_by_default = rename_for(s, p);
        /* the pool's own setting, else the device plugin's default (false
         * for time-slicing; MPS always fails such requests) */
        sh->fail_requests_greater_than_one =
            p->sharing.mode == GP_SHARE_TIMESLICE && p->sharing.fail_requests_greater_than_one;
        if (mode == GP_SHARE_MPS) {
            sh->fail_requests_greater_than_one = true;
            sh->mps.active_thread_pct = 100 / replicas[i];
            sh->mps.pinned_mem_mib = p->gpu_mem_mib / replicas[i];
        }
        struct gp_study_option o;
        enum gp_err err = study_option(s, p, sh, &o);
        if (err != GP_OK)
            return err;
        if (i == 0 || better(&o, best))
            *best = o;
    }
    return GP_OK;
}

enum gp_err gp_study_sharing(const struct gp_cluster *cluster, const struct gp_workload *w,
                             struct gp_arena *a, struct gp_study_option **out, size_t *n,
                             struct gp_diag *diag)
{
    struct study s = {.a = a, .diag = diag};
    *out = NULL;
    *n = 0;
    enum gp_err err = steady_pods(&s, w);
    if (err != GP_OK)
        return err;
    size_t cap = 0;
    for (size_t i = 0; i < cluster->npools; i++)
        cap += 4;
    struct gp_study_option *opts = gp_arena_alloc(a, (cap ? cap : 1) * sizeof *opts);
    if (!opts)
        return gp_diag_set(diag, GP_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < cluster->npools; i++) {
        const struct gp_pool_spec *p = &cluster->pools[i];
        if (!p->gpu_model || !*p->gpu_model || p->gpus_per_node == 0)
            continue;
        struct gp_sharing_spec *ex = gp_arena_alloc(a, sizeof *ex);
        if (!ex)
            return gp_diag_set(diag, GP_ENOMEM, "out of memory");
        memset(ex, 0, sizeof *ex);
        ex->replicas = 1;
        if ((err = study_option(&s, p, ex, &opts[k++])) != GP_OK ||
            (err = study_replicated(&s, p, GP_SHARE_TIMESLICE, ts_replicas,
                                    sizeof ts_replicas / sizeof ts_replicas[0], &opts[k++])) !=
                GP_OK ||
            (err = study_replicated(&s, p, GP_SHARE_MPS, mps_replicas,
                                    sizeof mps_replicas / sizeof mps_replicas[0], &opts[k++])) !=
                GP_OK)
            return err;
        const struct gp_mig_model *m = gp_mig_model_find(p->gpu_model);
        if (m) {
            struct gp_sharing_spec *mg = gp_arena_alloc(a, sizeof *mg);
            if (!mg)
                return gp_diag_set(diag, GP_ENOMEM, "out of memory");
            memset(mg, 0, sizeof *mg);
            mg->mode = GP_SHARE_MIG;
            mg->replicas = 1;
            mg->mig.model = m;
            mg->mig.dynamic = true;
            if ((err = study_option(&s, p, mg, &opts[k++])) != GP_OK)
                return err;
        }
    }
    if (k == 0)
        return gp_diag_set(diag, GP_EINVALID, "%s: no node pool with GPUs to study",
                           cluster->source ? cluster->source : "cluster");
    *out = opts;
    *n = k;
    return GP_OK;
}
