/* sim.c - the simulator: drives the engine through a workload on a cluster,
 * either in virtual time (timed mode: an event heap of arrivals, pod ends,
 * back-off expiries and Job deadlines; the workload's queues in the
 * engine; evicted pods back in their queue, resumed from their last
 * checkpoint) or as the FGD paper's static packing experiment.
 * docs/simulator.md describes the semantics and every metric. */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/autoscale.h"
#include "sim/cost.h"
#include "engine/sharing.h"
#include "sim/colocate.h"
#include "sim/heap.h"
#include "sim/metrics.h"
#include "util/vec.h"

#define DAY_S           86400.0
#define AUTO_SAMPLES    288       /* automatic interval: end / 288, at least 1 s */
#define MAX_SAMPLES     10000000  /* more is a mistake in sample_s */
#define MAX_EVENTS      100000000 /* guards against workloads that never settle */
#define MAX_SAME_TIME   100000    /* cycles at one instant: zero-length runs retried at once */
#define MAX_STATIC_PODS 50000000  /* guards the static mode's resampling */
#define MAX_INFLATE     100.0
#define NONE            UINT32_MAX

/* Independent random streams, so that e.g. changing failure_prob does not
 * shift the arrival times. Durations and failures are keyed by the pod
 * (item, submission, slot, attempt), not drawn in event order, so a pod
 * runs for the same time whichever policy places it. */
enum stream {
    STREAM_ARRIVAL = 1,
    STREAM_DURATION,
    STREAM_FAILURE,
    STREAM_SHUFFLE,
    STREAM_NODE_ORDER,
    STREAM_SPOT, /* spot interruptions: keyed by pool and node */
};

enum ev_kind {
    EV_ARRIVAL,  /* a = item */
    EV_END,      /* a = engine pod, b = 1 when the run fails */
    EV_RESUBMIT, /* a = logical pod, whose back-off has expired */
    EV_DEADLINE, /* a = instance: a Job's active deadline */
    EV_WAKE,     /* none: the engine asked for a cycle (a pod may be evicted now) */
    /* cluster dynamics: a = sim node unless said */
    EV_BOOT,        /* a requested node is ready */
    EV_IDLE,        /* b = the node's idle token: it may be removed if still idle */
    EV_SPOT_NOTICE, /* a spot node gets its notice (Poisson) */
    EV_SPOT_SERIES, /* a = pool, b = index in its recorded series */
    EV_SPOT_END,    /* the notice is over: pods evicted, the node leaves */
};

/* Events that do not keep a run going (a run without a horizon ends when
 * only these are left). */
static bool kind_endless(uint32_t kind)
{
    return kind == EV_IDLE || kind == EV_SPOT_NOTICE || kind == EV_SPOT_SERIES ||
           kind == EV_SPOT_END;
}

enum inst_state { INST_ACTIVE, INST_DONE, INST_FAILED };

/* A logical pod: one replica of a Deployment, one completion slot of a Job,
 * the pod of a Pod. Its attempts (after failures) are distinct engine pods. */
enum lpod_state { LP_PENDING, LP_RUNNING, LP_BACKOFF, LP_COMPLETED, LP_FAILED };

/* One submission of an item (an item with repeat = n has n instances). */
struct inst {
    uint32_t item;
    uint32_t k; /* submission number within the item */
    uint32_t created, succeeded, failures;
    uint32_t head, tail; /* its logical pods, linked through lpod.next */
    uint32_t group;      /* its gang in the engine; 0 = not a gang */
    double submit_s;
    double cost_usd; /* its pods' share of the GPU nodes they ran on */
    uint8_t state;
    uint8_t has_deadline; /* its EV_DEADLINE is in the heap and live */
    uint8_t maxfit;       /* a gang: 0 unknown, 1 fits every pool at its maximum, 2 does not */
};

struct lpod {
    uint32_t inst;
    uint32_t slot;     /* index of the pod within its instance */
    uint32_t next;     /* next logical pod of the same instance */
    uint32_t epod;     /* current engine pod when PENDING or RUNNING */
    uint32_t runs;     /* binds so far */
    uint32_t failures; /* its own failures (Deployment back-off) */
    uint8_t state;
    uint8_t has_event; /* an EV_END or EV_RESUBMIT for it is in the heap and live */
    uint8_t resume;    /* evicted: its next bind resumes the same run */
    /* the current run, drawn at its first bind: its length and where it
     * fails (in work seconds; < 0: it does not), the work saved by
     * checkpoints before evictions, and its latest bind */
    double len_s, fail_work_s, saved_s, bound_s;
    /* while running: its sim node, the links of that node's pod list, what
     * it costs per second and the GPUs it holds */
    uint32_t node, nprev, nnext;
    double rate_usd_s, gpus;
    /* progress: work_s done at rate_t_s, going on at `rate` work seconds
     * per second (below 1 on a crowded time-sliced GPU; rate_t_s is in
     * the future while a MIG re-partition delays the start) */
    double work_s, rate_t_s, rate;
    uint32_t ts_gpu;  /* its time-sliced GPU in the run's coloc; GP_COLOC_NONE */
    uint32_t end_ver; /* the live EV_END carries it; older ones are stale */
};

/* One engine pod (an attempt), indexed by the engine's dense pod id. */
struct epod {
    uint32_t lpod;
    double added_s;
    uint8_t counted; /* its unschedulable explanation has been counted */
    uint8_t unsched; /* it is in the autoscaler's list */
    uint64_t tried;  /* the cycle of its last decision */
};

/* A node of the cluster as the simulator sees it: requested (booting),
 * ready, draining (a spot notice), gone. Billed from request to removal. */
enum snode_state { SN_BOOTING, SN_READY, SN_DRAINING, SN_GONE };

struct snode {
    const struct gp_node_spec *spec;
    uint32_t pool;  /* its row in r->pools */
    uint32_t enode; /* engine id once ready; NONE while booting */
    uint32_t pods;  /* running pods, listed from head through lpod.nnext */
    uint32_t head;
    uint32_t idle_token; /* bumped to cancel a pending EV_IDLE */
    uint32_t domain;     /* its topology domain in its pool; NONE: none */
    uint8_t state;
    double since_s, idle_since_s;
};

/* A pool's dynamics: its spec, what a new node is, and its counts. */
struct pool_dyn {
    const struct gp_pool_spec *spec; /* NULL for nodes of no known pool */
    struct gp_node_spec tmpl;        /* a new node (name aside) */
    bool has_tmpl, dynamic;
    uint32_t live;   /* booting and ready: what counts against max */
    uint32_t billed; /* not gone */
    uint32_t next_name;
    uint32_t *dlive; /* topology domains: live nodes in each (pool_topo's n) */
};

/* A pool's topology domains (gp_pool_spec.topology_key): the label value
 * of each; n 0 when the pool has none. */
struct pool_topo {
    const char **values;
    uint32_t n;
};

/* The cluster's state from t_s on, for the samples, with the cost so far
 * and its rate from then on (USD per second). */
struct change {
    double t_s;
    struct gp_sim_sample s;
    double cost_usd, rate_usd_s;
};

struct item_run {
    struct gp_rng arrivals;
    uint32_t next_k;
    uint32_t queue;  /* its entry in the result's queues (NONE in static mode) */
    uint32_t equeue; /* its queue in the engine */
};

/* A queue's running figures, beside the result's entry. */
struct queue_run {
    uint32_t equeue;      /* in the engine; NONE when the engine does not know it */
    int64_t alloc_milli;  /* GPU milli its bound pods hold now */
    double alloc_milli_s; /* the integral of alloc_milli */
    GP_VEC(double) delays;
    GP_VEC(double) jcts;
};

struct run {
    const struct gp_sim_config *cfg;
    const struct gp_cluster *cluster;
    const struct gp_workload *wl;
    struct gp_arena *a;
    struct gp_sim_result *out;
    struct gp_diag *diag;
    struct gp_engine *e;

    struct gp_sim_heap heap;
    struct item_run *items;
    GP_VEC(struct inst) insts;
    GP_VEC(struct lpod) lpods;
    GP_VEC(struct epod) epods;
    GP_VEC(struct gp_decision) dec;
    GP_VEC(double) delays;
    GP_VEC(double) jcts;
    GP_VEC(struct change) log;
    struct queue_run *queues; /* as out->queues */
    size_t nqueues;

    double now_s;
    double wake_s;          /* the earliest EV_WAKE in the heap; INFINITY: none */
    uint64_t finite_events; /* live events in the heap that are not endless */
    uint64_t events;        /* events applied */
    uint64_t arrivals_total, arrivals_done;
    double price_per_s; /* sum of node prices, per second */
    /* cluster dynamics and cost */
    GP_VEC(struct snode) snodes;
    GP_VEC(uint32_t) enode_snode; /* engine node id -> sim node */
    GP_VEC(uint32_t) unsched;     /* engine pods found unschedulable (some may be gone) */
    GP_VEC(uint32_t) untried;     /* strict orders: pending pods the cycle did not reach */
    GP_VEC(uint32_t) group_inst;  /* gang id - 1 -> its instance */
    GP_VEC(struct gp_autoscale_gang) gangs; /* gang id - 1 -> its topology */
    uint64_t cycles;                        /* gp_engine_schedule calls */
    uint64_t cycle_mark;                    /* cycles before the current schedule_cycle */
    size_t as_epods;                        /* engine pods when the autoscaler last looked */
    /* the cluster's nodes as the run adds them: with their topology
     * domain's label (node_domain[i]; NULL: no pool has a topology) */
    const struct gp_node_spec *nodes;
    uint32_t *node_domain;
    struct pool_topo *topo; /* per cluster pool (arena); NULL: no pool has a topology */
    struct pool_dyn *pools;
    size_t npools;
    struct gp_cost cost;
    bool dynamic;                /* some pool autoscales or is spot */
    bool as_dirty;               /* the autoscaler has something new to look at */
    double cp_per_s;             /* the control plane's fee */
    double lost_usd;             /* cost of work lost */
    struct gp_coloc coloc;       /* pods on time-sliced GPUs */
    double ts_wall_s, ts_work_s; /* completed runs on time-sliced GPUs */
    /* integrals over time of the piecewise-constant state */
    double node_s, gpu_milli_total_s, gpu_milli_alloc_s, cost_usd;
    int progress_pct;
};

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Seeds r from the run's seed, a stream and up to four keys. */
static void rng_keyed(struct gp_rng *r, uint64_t seed, enum stream s, uint64_t k1, uint64_t k2,
                      uint64_t k3, uint64_t k4)
{
    uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ULL * (uint64_t)s);
    h = mix64(h ^ (k1 + 0x632be59bd9b4e019ULL));
    h = mix64(h ^ (k2 + 0x85157af5ULL));
    h = mix64(h ^ (k3 + 0x2545f4914f6cdd1dULL));
    h = mix64(h ^ (k4 + 0x9e3779b97f4a7c15ULL));
    gp_rng_seed(r, h);
}

void gp_sim_config_default(struct gp_sim_config *c)
{
    memset(c, 0, sizeof *c);
    c->mode = GP_SIM_TIMED;
    c->policy = gp_policy_find("best-fit");
    if (!c->policy)
        c->policy = gp_policies[0];
    c->seed = 42;
    c->horizon_s = 0;
    c->sample_s = 0;
    c->inflate = 1.3;
    c->backoff_base_s = 10;
    c->backoff_max_s = 360;
}

static void progress(struct run *r, double fraction)
{
    if (!r->cfg->progress)
        return;
    if (!(fraction > 0))
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    int pct = (int)(fraction * 100);
    if (pct <= r->progress_pct)
        return;
    r->progress_pct = pct;
    r->cfg->progress(r->cfg->progress_ctx, fraction);
}

/* ---- input checks --------------------------------------------------------- */

static const char *item_where(const struct gp_item *it, size_t i, char *buf, size_t n)
{
    if (it->source && *it->source)
        snprintf(buf, n, "%s: %s", it->source, it->name ? it->name : "item");
    else
        snprintf(buf, n, "workload item %zu (%s)", i, it->name ? it->name : "unnamed");
    return buf;
}

static enum gp_err check_pod(const struct gp_pod_spec *p, const char *where, struct gp_diag *diag)
{
    if (p->cpu_milli < 0 || p->mem_mib < 0)
        return gp_diag_set(diag, GP_EINVALID, "%s: negative cpu or memory request", where);
    if (p->gpu_count > GP_MAX_GPUS_PER_NODE)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: asks for %u GPUs on one node, more than the limit of %d", where,
                           p->gpu_count, GP_MAX_GPUS_PER_NODE);
    /* a share may be memory alone, or a replica of a shared GPU with
     * nothing declared; MIG instances come in any number */
    bool nothing = p->gpu_milli == 0 && p->gpu_mem_mib == 0 && !p->share_modes && !p->mig_profile;
    if (p->gpu_count > 0 && (nothing || p->gpu_milli > GP_GPU_MILLI))
        return gp_diag_set(diag, GP_EINVALID, "%s: GPU share of %u milli-GPU, expected 1 to %d",
                           where, p->gpu_milli, GP_GPU_MILLI);
    if (p->gpu_count > 1 && p->gpu_milli != GP_GPU_MILLI && !p->mig_profile)
        return gp_diag_set(diag, GP_EINVALID,
                           "%s: a share of a GPU (%u milli) is only possible with one GPU, "
                           "not %u",
                           where, p->gpu_milli, p->gpu_count);
    return GP_OK;
}

static enum gp_err check_inputs(const struct gp_sim_config *cfg, const struct gp_cluster *cluster,
                                const struct gp_workload *wl, struct gp_diag *diag)
{
    if (!(cfg->horizon_s >= 0) || isinf(cfg->horizon_s))
        return gp_diag_set(diag, GP_EINVALID,
                           "simulation horizon: expected a finite number of "
                           "seconds >= 0, got %g",
                           cfg->horizon_s);
    if (!(cfg->sample_s >= 0) || isinf(cfg->sample_s))
        return gp_diag_set(diag, GP_EINVALID,
                           "sample interval: expected a finite number of seconds >= 0, got %g",
                           cfg->sample_s);
    if (!(cfg->backoff_base_s >= 0) || !(cfg->backoff_max_s >= 0) || isinf(cfg->backoff_base_s) ||
        isinf(cfg->backoff_max_s))
        return gp_diag_set(diag, GP_EINVALID,
                           "retry back-off: expected finite seconds >= 0, got base %g, max %g",
                           cfg->backoff_base_s, cfg->backoff_max_s);
    if (cfg->mode == GP_SIM_STATIC && !(cfg->inflate >= 0 && cfg->inflate <= MAX_INFLATE))
        return gp_diag_set(diag, GP_EINVALID, "inflate: expected a ratio from 0 to %g, got %g",
                           MAX_INFLATE, cfg->inflate);
    if (cfg->mode != GP_SIM_TIMED && cfg->mode != GP_SIM_STATIC)
        return gp_diag_set(diag, GP_EINVALID, "unknown simulation mode %d", (int)cfg->mode);
    for (size_t i = 0; i < cluster->nnodes; i++) {
        const struct gp_node_spec *n = &cluster->nodes[i];
        const char *name = n->name ? n->name : "unnamed";
        if (n->gpu_count > GP_MAX_GPUS_PER_NODE)
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: node %s has %u GPUs, more than the limit of %d",
                               cluster->source ? cluster->source : "cluster", name, n->gpu_count,
                               GP_MAX_GPUS_PER_NODE);
        if (n->cpu_milli < 0 || n->mem_mib < 0)
            return gp_diag_set(diag, GP_EINVALID, "%s: node %s has negative cpu or memory",
                               cluster->source ? cluster->source : "cluster", name);
    }
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        char where[256];
        item_where(it, i, where, sizeof where);
        enum gp_err err = check_pod(&it->pod, where, diag);
        if (err != GP_OK)
            return err;
        if (cfg->mode == GP_SIM_STATIC)
            continue;
        if (!(it->arrival_s >= 0) || isinf(it->arrival_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: arrival: expected a finite time >= 0 s, got %g", where,
                               it->arrival_s);
        if (!(it->failure_prob >= 0 && it->failure_prob <= 1))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: failure probability: expected 0 to 1, got %g", where,
                               it->failure_prob);
        if (!(it->failure_rate_per_s >= 0) || isinf(it->failure_rate_per_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: failure rate: expected a finite rate >= 0, got %g per s", where,
                               it->failure_rate_per_s);
        if (!(it->checkpoint_s >= 0) || isinf(it->checkpoint_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: checkpoint interval: expected a finite time >= 0 s, got %g",
                               where, it->checkpoint_s);
        if (!(it->active_deadline_s >= 0) || isinf(it->active_deadline_s))
            return gp_diag_set(diag, GP_EINVALID,
                               "%s: active deadline: expected a finite time >= 0 s, got %g", where,
                               it->active_deadline_s);
        if (it->kind != GP_ITEM_POD && it->kind != GP_ITEM_DEPLOYMENT && it->kind != GP_ITEM_JOB)
            return gp_diag_set(diag, GP_EINVALID, "%s: unknown item kind %d", where, (int)it->kind);
    }
    return GP_OK;
}

static void rng_keyed(struct gp_rng *r, uint64_t seed, enum stream s, uint64_t k1, uint64_t k2,
                      uint64_t k3, uint64_t k4);

static enum gp_err nomem(struct run *r);

/* A copy of node spec n (in the arena) with one more label. */
static struct gp_node_spec *spec_labelled(struct run *r, const struct gp_node_spec *n,
                                          const char *key, const char *value)
{
    struct gp_node_spec *spec = gp_arena_alloc(r->a, sizeof *spec);
    struct gp_kv *kv = gp_arena_alloc(r->a, (n->nlabels + 1) * sizeof *kv);
    if (!spec || !kv)
        return NULL;
    *spec = *n;
    if (n->nlabels)
        memcpy(kv, n->labels, n->nlabels * sizeof *kv);
    kv[n->nlabels].key = key;
    kv[n->nlabels].value = value;
    spec->labels = kv;
    spec->nlabels = n->nlabels + 1;
    return spec;
}

/* Topology domains (docs/FORMATS.md, `topology`): each pool that has them
 * gets its domains' label values ("<pool>-d<k>"), and its first nodes go
 * to domain 0 until it holds nodesPerDomain, then to domain 1, and so on. */
static enum gp_err topo_init(struct run *r)
{
    const struct gp_cluster *c = r->cluster;
    r->nodes = c->nodes;
    bool any = false;
    for (size_t i = 0; i < c->npools; i++)
        any |= c->pools[i].topology_key && c->pools[i].nodes_per_domain > 0;
    if (!any)
        return GP_OK;
    r->topo = gp_arena_alloc(r->a, c->npools * sizeof *r->topo);
    uint32_t *seen = gp_arena_alloc(r->a, c->npools * sizeof *seen);
    struct gp_node_spec *nodes = gp_arena_alloc(r->a, (c->nnodes ? c->nnodes : 1) * sizeof *nodes);
    r->node_domain = gp_arena_alloc(r->a, (c->nnodes ? c->nnodes : 1) * sizeof *r->node_domain);
    if (!r->topo || !seen || !nodes || !r->node_domain)
        return nomem(r);
    for (size_t i = 0; i < c->npools; i++) {
        const struct gp_pool_spec *ps = &c->pools[i];
        uint32_t size = ps->max_count > ps->count ? ps->max_count : ps->count;
        seen[i] = 0;
        r->topo[i].n = 0;
        r->topo[i].values = NULL;
        if (!ps->topology_key || ps->nodes_per_domain == 0 || size == 0)
            continue;
        uint32_t n = (size - 1) / ps->nodes_per_domain + 1;
        r->topo[i].values = gp_arena_alloc(r->a, n * sizeof *r->topo[i].values);
        if (!r->topo[i].values)
            return nomem(r);
        for (uint32_t d = 0; d < n; d++)
            if (!(r->topo[i].values[d] = gp_arena_printf(r->a, "%s-d%u", ps->name, d)))
                return nomem(r);
        r->topo[i].n = n;
    }
    size_t last = 0;
    for (size_t k = 0; k < c->nnodes; k++) {
        const char *pn = c->nodes[k].pool;
        nodes[k] = c->nodes[k];
        r->node_domain[k] = NONE;
        size_t p = c->npools;
        if (pn && last < c->npools && c->pools[last].name && strcmp(c->pools[last].name, pn) == 0)
            p = last;
        for (size_t j = 0; pn && p == c->npools && j < c->npools; j++)
            if (c->pools[j].name && strcmp(c->pools[j].name, pn) == 0)
                p = last = j;
        if (p == c->npools || r->topo[p].n == 0)
            continue;
        uint32_t d = seen[p]++ / c->pools[p].nodes_per_domain;
        if (d >= r->topo[p].n)
            continue; /* more nodes than the pool's size: cannot come from the YAML */
        const struct gp_node_spec *l =
            spec_labelled(r, &c->nodes[k], c->pools[p].topology_key, r->topo[p].values[d]);
        if (!l)
            return nomem(r);
        nodes[k] = *l;
        r->node_domain[k] = d;
    }
    r->nodes = nodes;
    return GP_OK;
}

/* Adds the cluster's nodes to the engine. The engine gives ties to the
 * lowest node id; in static mode the nodes are added in a seeded random
 * order, as the FGD experiment's simulator does (it prefixes node names with
 * a seeded permutation and breaks ties by name), so that ties fall on a
 * random but fixed node rather than on the first node of the file. */
static enum gp_err add_nodes(struct run *r)
{
    const struct gp_cluster *c = r->cluster;
    double price = 0;
    size_t *order = malloc((c->nnodes ? c->nnodes : 1) * sizeof *order);
    if (!order)
        return gp_diag_set(r->diag, GP_ENOMEM, "simulator: out of memory");
    for (size_t i = 0; i < c->nnodes; i++)
        order[i] = i;
    if (r->cfg->mode == GP_SIM_STATIC) {
        struct gp_rng rng;
        rng_keyed(&rng, r->cfg->seed, STREAM_NODE_ORDER, 0, 0, 0, 0);
        for (size_t i = c->nnodes; i > 1; i--) {
            size_t j = (size_t)gp_rng_below(&rng, i);
            size_t t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
    }
    enum gp_err err = GP_OK;
    for (size_t k = 0; k < c->nnodes; k++) {
        const struct gp_node_spec *n = &r->nodes[order[k]];
        err = gp_engine_node_add(r->e, n, NULL);
        if (err != GP_OK) {
            gp_diag_set(r->diag, err, "%s: node %s: the engine refused it: %s",
                        c->source ? c->source : "cluster", n->name ? n->name : "unnamed",
                        gp_strerror(err));
            break;
        }
        if (n->price_per_hour_usd > 0 && isfinite(n->price_per_hour_usd))
            price += n->price_per_hour_usd;
    }
    free(order);
    r->price_per_s = price / 3600.0;
    return err;
}

static enum gp_err nomem(struct run *r)
{
    return gp_diag_set(r->diag, GP_ENOMEM, "simulator: out of memory");
}

/* ---- queues --------------------------------------------------------------- */

static const char *item_queue_name(const struct gp_item *it)
{
    return it->queue ? it->queue : "default";
}

static size_t queue_find(const struct gp_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->nqueues; i++)
        if (strcmp(wl->queues[i].spec.name, name) == 0)
            return i;
    return SIZE_MAX;
}

/* A row of the result's queue table, for queue `name`. */
static enum gp_err queue_row(struct run *r, const char *name, bool declared, uint32_t equeue,
                             uint32_t *row)
{
    for (size_t i = 0; i < r->nqueues; i++)
        if (r->out->queues[i].name == name || strcmp(r->out->queues[i].name, name) == 0) {
            *row = (uint32_t)i;
            return GP_OK;
        }
    size_t n = r->nqueues + 1;
    struct gp_sim_queue *rows = gp_arena_alloc(r->a, n * sizeof *rows);
    struct queue_run *runs = realloc(r->queues, n * sizeof *runs);
    if (runs)
        r->queues = runs;
    if (!rows || !runs)
        return nomem(r);
    if (r->nqueues)
        memcpy(rows, r->out->queues, r->nqueues * sizeof *rows);
    memset(&rows[n - 1], 0, sizeof rows[0]);
    memset(&runs[n - 1], 0, sizeof runs[0]);
    rows[n - 1].name = name;
    rows[n - 1].declared = declared;
    rows[n - 1].limit_gpus = -1;
    runs[n - 1].equeue = equeue;
    r->out->queues = rows;
    r->nqueues = r->out->nqueues = n;
    *row = (uint32_t)(n - 1);
    return GP_OK;
}

/* Checks the workload's queues (names unique, parents declared, no
 * cycle, pods only in leaf queues, every queue an item names declared -
 * when any is) and, in timed mode, gives them to the engine, parents
 * first, and builds the result's queue table. Without declared queues the
 * engine has only its default queue: no quota is invented, and the queue
 * names items carry (Philly's virtual clusters) are only reported. */
static enum gp_err plan_queues(struct run *r)
{
    const struct gp_workload *wl = r->wl;
    const bool timed = r->cfg->mode == GP_SIM_TIMED;
    size_t nq = wl->nqueues;
    enum gp_err err = GP_OK;
    uint32_t *eid = malloc((nq ? nq : 1) * sizeof *eid);
    if (!eid)
        return nomem(r);
    for (size_t i = 0; i < nq; i++) {
        const struct gp_queue_def *d = &wl->queues[i];
        eid[i] = NONE;
        if (!d->spec.name || !*d->spec.name) {
            err = gp_diag_set(r->diag, GP_EINVALID, "%s: a Queue without a name",
                              d->source ? d->source : "workload");
            goto out;
        }
        size_t first = queue_find(wl, d->spec.name);
        if (first != i) {
            err =
                gp_diag_set(r->diag, GP_EINVALID, "%s: Queue \"%s\" is defined twice (also at %s)",
                            d->source, d->spec.name, wl->queues[first].source);
            goto out;
        }
        if (d->parent &&
            (strcmp(d->parent, "default") == 0 || queue_find(wl, d->parent) == SIZE_MAX)) {
            err =
                gp_diag_set(r->diag, GP_EINVALID,
                            strcmp(d->parent, "default") == 0
                                ? "%s: Queue \"%s\": the default queue cannot be a parent (\"%s\")"
                                : "%s: Queue \"%s\": its parent \"%s\" is not declared",
                            d->source, d->spec.name, d->parent);
            goto out;
        }
        if (d->parent && strcmp(d->spec.name, "default") == 0) {
            err =
                gp_diag_set(r->diag, GP_EINVALID,
                            "%s: Queue \"default\" is the top-level default queue: it cannot have "
                            "a parent",
                            d->source);
            goto out;
        }
    }
    /* parents first; whatever is left after a pass without progress is a cycle */
    for (size_t added = 0, pass = 0; added < nq; pass++) {
        size_t before = added;
        for (size_t i = 0; i < nq; i++) {
            const struct gp_queue_def *d = &wl->queues[i];
            if (eid[i] != NONE)
                continue;
            uint32_t parent = 0;
            if (d->parent) {
                size_t j = queue_find(wl, d->parent);
                if (eid[j] == NONE)
                    continue;
                parent = eid[j];
            }
            struct gp_queue_spec spec = d->spec;
            spec.parent = parent;
            eid[i] = (uint32_t)i + 1; /* static mode: the engine gets no queue */
            if (timed && (err = gp_engine_queue_set(r->e, &spec, &eid[i])) != GP_OK) {
                err = gp_diag_set(r->diag, err, "%s: Queue \"%s\": the engine refused it: %s",
                                  d->source, d->spec.name, gp_strerror(err));
                goto out;
            }
            added++;
        }
        if (added == before) {
            for (size_t i = 0; i < nq; i++)
                if (eid[i] == NONE) {
                    err = gp_diag_set(r->diag, GP_EINVALID,
                                      "%s: Queue \"%s\": its parents form a cycle",
                                      wl->queues[i].source, wl->queues[i].spec.name);
                    goto out;
                }
        }
    }
    if (timed)
        for (size_t i = 0; i < nq; i++) {
            const struct gp_queue_def *d = &wl->queues[i];
            uint32_t row;
            if ((err = queue_row(r, d->spec.name, true, eid[i], &row)) != GP_OK)
                goto out;
            const struct gp_quota *g = &d->spec.gpu_milli;
            r->out->queues[row].guaranteed_gpus = (double)g->guaranteed / GP_GPU_MILLI;
            if (g->limited)
                r->out->queues[row].limit_gpus =
                    ((double)g->guaranteed + (double)g->borrow_limit) / GP_GPU_MILLI;
        }
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        const char *name = item_queue_name(it);
        size_t q = nq ? queue_find(wl, name) : SIZE_MAX;
        char where[256];
        if (nq && q == SIZE_MAX && it->queue) {
            err = gp_diag_set(r->diag, GP_EINVALID,
                              "%s: names queue \"%s\", which no Queue object declares",
                              item_where(it, i, where, sizeof where), name);
            goto out;
        }
        for (size_t j = 0; q != SIZE_MAX && j < nq; j++)
            if (wl->queues[j].parent && strcmp(wl->queues[j].parent, name) == 0) {
                err = gp_diag_set(r->diag, GP_EINVALID,
                                  "%s: names queue \"%s\", which has child queues (\"%s\"); pods "
                                  "go to leaf queues",
                                  item_where(it, i, where, sizeof where), name,
                                  wl->queues[j].spec.name);
                goto out;
            }
        if (!timed)
            continue;
        uint32_t equeue = q != SIZE_MAX ? eid[q] : 0, row;
        if ((err = queue_row(r, name, q != SIZE_MAX, equeue, &row)) != GP_OK)
            goto out;
        r->items[i].queue = row;
        r->items[i].equeue = equeue;
    }
out:
    free(eid);
    return err;
}

/* The queues' figures at the end of the run. */
static enum gp_err queues_finish(struct run *r)
{
    for (size_t i = 0; i < r->nqueues; i++) {
        struct queue_run *q = &r->queues[i];
        struct gp_sim_queue *row = &r->out->queues[i];
        row->gpu_hours_allocated = q->alloc_milli_s / GP_GPU_MILLI / 3600.0;
        if (q->delays.len) {
            gp_sim_metrics_sort(q->delays.items, q->delays.len);
            gp_sim_metrics_stats(q->delays.items, q->delays.len, &row->queue_delay_s);
        }
        if (q->jcts.len) {
            gp_sim_metrics_sort(q->jcts.items, q->jcts.len);
            gp_sim_metrics_stats(q->jcts.items, q->jcts.len, &row->jct_s);
        }
    }
    if (r->jcts.len) {
        gp_sim_metrics_sort(r->jcts.items, r->jcts.len);
        gp_sim_metrics_stats(r->jcts.items, r->jcts.len, &r->out->jct_s);
    }
    return GP_OK;
}

/* ---- timed mode ----------------------------------------------------------- */

static bool item_endless(const struct gp_item *it)
{
    return it->kind == GP_ITEM_DEPLOYMENT || !it->has_duration;
}

/* The logical pod an EV_END or EV_RESUBMIT is about. */
static struct lpod *event_lpod(const struct run *r, uint32_t kind, uint32_t a)
{
    return &r->lpods.items[kind == EV_END ? r->epods.items[a].lpod : a];
}

static bool lpod_finite(const struct run *r, const struct lpod *l)
{
    return !item_endless(&r->wl->items[r->insts.items[l->inst].item]);
}

/* Arrivals and Job deadlines are finite work; a pod's end or resubmission
 * is finite unless its item is endless (a Deployment's failures go on
 * forever). The count of live finite events in the heap decides when a run
 * without a horizon is over, so events made stale (by a failed Job, a
 * finished one's deadline) are discounted at once. */
static enum gp_err push_event(struct run *r, double t_s, uint32_t kind, uint32_t a, uint32_t b)
{
    if (gp_sim_heap_push(&r->heap, t_s, kind, a, b) != 0)
        return nomem(r);
    bool finite = true;
    if (kind_endless(kind)) {
        finite = false;
    } else if (kind == EV_DEADLINE) {
        r->insts.items[a].has_deadline = 1;
    } else if (kind != EV_ARRIVAL && kind != EV_WAKE && kind != EV_BOOT) {
        struct lpod *l = event_lpod(r, kind, a);
        l->has_event = 1;
        finite = lpod_finite(r, l);
    }
    r->finite_events += finite;
    return GP_OK;
}

/* Whether a popped event still matters; if so, it leaves the live count. */
static bool event_take(struct run *r, const struct gp_sim_event *ev)
{
    if (kind_endless(ev->kind))
        return true; /* apply_event checks that it still matters */
    if (ev->kind == EV_ARRIVAL || ev->kind == EV_WAKE || ev->kind == EV_BOOT) {
        r->finite_events--;
        if (ev->kind == EV_WAKE && ev->t_s == r->wake_s)
            r->wake_s = INFINITY;
        return true;
    }
    if (ev->kind == EV_DEADLINE) {
        struct inst *in = &r->insts.items[ev->a];
        if (!in->has_deadline)
            return false; /* the Job ended first; it was discounted then */
        in->has_deadline = 0;
        r->finite_events--;
        return in->state == INST_ACTIVE;
    }
    struct lpod *l = event_lpod(r, ev->kind, ev->a);
    bool live = l->has_event && (ev->kind == EV_END ? l->state == LP_RUNNING && l->epod == ev->a &&
                                                          ev->b >> 1 == l->end_ver
                                                    : l->state == LP_BACKOFF);
    if (!live)
        return false;
    l->has_event = 0;
    r->finite_events -= lpod_finite(r, l);
    return true;
}

static double backoff_s(const struct run *r, uint32_t failures)
{
    double base = r->cfg->backoff_base_s, max = r->cfg->backoff_max_s;
    double d = failures >= 1 && failures <= 63 ? ldexp(base, (int)failures - 1) : max;
    return d < max ? d : max;
}

/* Samples a distribution, clamped to >= 0. */
static double dist_draw(const struct gp_dist *d, struct gp_rng *rng)
{
    double v = gp_dist_sample(d, rng);
    return v > 0 ? v : 0;
}

static uint32_t job_target(const struct gp_item *it)
{
    if (it->kind == GP_ITEM_POD)
        return 1;
    return it->completions ? it->completions : 1;
}

static uint32_t job_parallel(const struct gp_item *it)
{
    if (it->kind == GP_ITEM_POD)
        return 1;
    return it->parallelism ? it->parallelism : 1;
}

/* GPU milli a pod of this template holds. */
static int64_t pod_gpu_milli(const struct gp_pod_spec *p)
{
    return (int64_t)p->gpu_count * p->gpu_milli;
}

static const struct gp_item *lpod_item(const struct run *r, const struct lpod *l)
{
    return &r->wl->items[r->insts.items[l->inst].item];
}

/* The queue figures of lpod l's item; NULL when there are none. */
static struct queue_run *lpod_queue(const struct run *r, const struct lpod *l, size_t *index)
{
    if (!r->nqueues)
        return NULL;
    uint32_t q = r->items[r->insts.items[l->inst].item].queue;
    if (index)
        *index = q;
    return &r->queues[q];
}

static void node_idle(struct run *r, uint32_t sn);

/* What a running pod has cost from its bind to now: to its job, its queue
 * and its node's pool. */
static void pod_cost(struct run *r, struct lpod *l, double until_s)
{
    double secs = until_s - l->bound_s;
    if (!(secs > 0) || l->node == NONE)
        return;
    double usd = secs * l->rate_usd_s;
    r->insts.items[l->inst].cost_usd += usd;
    size_t qi;
    if (lpod_queue(r, l, &qi))
        r->out->queues[qi].cost_usd += usd;
    gp_cost_pod(&r->cost, r->snodes.items[l->node].pool, secs, l->rate_usd_s, l->gpus);
}

/* The work a running pod has done by now. */
static double work_now(const struct run *r, const struct lpod *l)
{
    double dt = r->now_s - l->rate_t_s;
    return dt > 0 ? l->work_s + dt * l->rate : l->work_s;
}

static enum gp_err rerate(struct run *r, uint32_t gpu);
static double ts_demand(const struct gp_item *it);

/* A running pod stopped (it ended, failed, was stopped or evicted): its
 * GPUs no longer count for its queue, its cost is booked, it leaves its
 * node's list (an empty node starts to idle), and on a time-sliced GPU
 * the pods left there speed up. */
static enum gp_err unbind_account(struct run *r, struct lpod *l)
{
    struct queue_run *q = lpod_queue(r, l, NULL);
    if (q)
        q->alloc_milli -= pod_gpu_milli(&lpod_item(r, l)->pod);
    uint32_t gpu = l->ts_gpu;
    if (gpu != GP_COLOC_NONE) {
        gp_coloc_leave(&r->coloc, gpu, (uint32_t)(l - r->lpods.items), ts_demand(lpod_item(r, l)));
        l->ts_gpu = GP_COLOC_NONE;
    }
    if (l->node != NONE) {
        pod_cost(r, l, r->now_s);
        struct snode *sn = &r->snodes.items[l->node];
        if (l->nprev != NONE)
            r->lpods.items[l->nprev].nnext = l->nnext;
        else
            sn->head = l->nnext;
        if (l->nnext != NONE)
            r->lpods.items[l->nnext].nprev = l->nprev;
        uint32_t node = l->node;
        l->node = l->nprev = l->nnext = NONE;
        if (--sn->pods == 0)
            node_idle(r, node);
    }
    return gpu == GP_COLOC_NONE ? GP_OK : rerate(r, gpu);
}

/* The end of a submission of a Pod or Job item (Deployments never end):
 * counted, with its completion time when it completed; its deadline, if
 * still pending, is discounted. */
static enum gp_err job_end(struct run *r, uint32_t ii, bool completed)
{
    struct inst *in = &r->insts.items[ii];
    const struct gp_item *it = &r->wl->items[in->item];
    if (in->has_deadline) {
        in->has_deadline = 0;
        r->finite_events--;
    }
    if (it->kind == GP_ITEM_DEPLOYMENT)
        return GP_OK;
    size_t qi = 0;
    struct queue_run *q = r->nqueues ? &r->queues[r->items[in->item].queue] : NULL;
    if (q)
        qi = r->items[in->item].queue;
    if (!completed) {
        r->out->jobs_failed++;
        if (q)
            r->out->queues[qi].jobs_failed++;
        return GP_OK;
    }
    double jct = r->now_s - in->submit_s;
    r->out->jobs_completed++;
    if (GP_VEC_PUSH(&r->jcts, jct) != 0)
        return nomem(r);
    if (q) {
        r->out->queues[qi].jobs_completed++;
        if (GP_VEC_PUSH(&q->jcts, jct) != 0)
            return nomem(r);
    }
    return GP_OK;
}

/* What is left of the run an attempt of l will make, as the engine's
 * duration hint (shortest job first, backfill): the simulator knows each
 * run's length in advance (on_bind draws it from the same keyed stream),
 * so the orders that use it see the truth, as an oracle would; 0 for a run
 * without end. */
static double duration_hint(const struct run *r, const struct lpod *l, const struct inst *in,
                            const struct gp_item *it)
{
    if (!it->has_duration || it->kind == GP_ITEM_DEPLOYMENT)
        return 0;
    if (l->resume)
        return l->len_s - l->saved_s > 0 ? l->len_s - l->saved_s : 0;
    struct gp_rng dur;
    rng_keyed(&dur, r->cfg->seed, STREAM_DURATION, in->item, in->k, in->group ? 0 : l->slot,
              l->runs + 1);
    return dist_draw(&it->duration, &dur);
}

/* A new attempt of logical pod lp enters the engine's queue. */
static enum gp_err attempt_add(struct run *r, uint32_t lp)
{
    struct lpod *l = &r->lpods.items[lp];
    const struct inst *in = &r->insts.items[l->inst];
    const struct gp_item *it = &r->wl->items[in->item];
    uint32_t id;
    struct gp_pod_spec spec = it->pod;
    spec.group = in->group;
    spec.queue = r->items[in->item].equeue;
    spec.duration_hint_s = duration_hint(r, l, in, it);
    enum gp_err err = gp_engine_pod_add(r->e, &spec, r->now_s, &id);
    if (err != GP_OK) {
        char where[256];
        return gp_diag_set(r->diag, err, "%s: the engine refused its pod: %s",
                           item_where(it, in->item, where, sizeof where), gp_strerror(err));
    }
    if (id != r->epods.len)
        return gp_diag_set(r->diag, GP_ESTATE, "simulator: engine pod ids are not dense");
    struct epod ep = {.lpod = lp, .added_s = r->now_s, .counted = 0};
    if (GP_VEC_PUSH(&r->epods, ep) != 0)
        return nomem(r);
    l->epod = id;
    l->state = LP_PENDING;
    return GP_OK;
}

static enum gp_err lpod_create(struct run *r, uint32_t ii)
{
    struct inst *in = &r->insts.items[ii];
    struct lpod l = {.inst = ii,
                     .slot = in->created,
                     .next = NONE,
                     .epod = NONE,
                     .node = NONE,
                     .nprev = NONE,
                     .nnext = NONE,
                     .ts_gpu = GP_COLOC_NONE};
    uint32_t lp = (uint32_t)r->lpods.len;
    if (r->lpods.len >= NONE || GP_VEC_PUSH(&r->lpods, l) != 0)
        return nomem(r);
    in->created++;
    if (in->tail == NONE)
        in->head = lp;
    else
        r->lpods.items[in->tail].next = lp;
    in->tail = lp;
    r->out->pods_submitted++;
    if (r->nqueues)
        r->out->queues[r->items[in->item].queue].pods_submitted++;
    return attempt_add(r, lp);
}

static enum gp_err instance_submit(struct run *r, uint32_t item, uint32_t k)
{
    const struct gp_item *it = &r->wl->items[item];
    struct inst in = {.item = item,
                      .k = k,
                      .head = NONE,
                      .tail = NONE,
                      .submit_s = r->now_s,
                      .state = INST_ACTIVE};
    uint32_t ii = (uint32_t)r->insts.len;
    if (r->insts.len >= NONE || GP_VEC_PUSH(&r->insts, in) != 0)
        return nomem(r);
    uint32_t n;
    if (it->kind == GP_ITEM_DEPLOYMENT) {
        n = it->replicas;
    } else {
        uint32_t target = job_target(it), par = job_parallel(it);
        n = par < target ? par : target;
    }
    if (it->kind != GP_ITEM_DEPLOYMENT) {
        r->out->jobs_submitted++;
        if (r->nqueues)
            r->out->queues[r->items[item].queue].jobs_submitted++;
    }
    if (n == 0)
        r->insts.items[ii].state = INST_DONE;
    if (n > 0 && it->active_deadline_s > 0) {
        double t = r->now_s + it->active_deadline_s;
        enum gp_err err = isfinite(t) ? push_event(r, t, EV_DEADLINE, ii, 0) : GP_OK;
        if (err != GP_OK)
            return err;
    }
    if (it->gang_min > 0 && n > 0) { /* each submission is one gang */
        struct gp_group_spec g = {it->name, it->gang_min < n ? it->gang_min : n, it->topology_key,
                                  it->topology_required};
        enum gp_err err = gp_engine_group_add(r->e, &g, &r->insts.items[ii].group);
        if (err != GP_OK)
            return gp_diag_set(r->diag, err, "simulator: cannot add gang %s: %s",
                               it->name ? it->name : "unnamed", gp_strerror(err));
        /* the autoscaler needs what the engine keeps to itself: the gang's
         * topology, and (strict orders) its instance */
        struct gp_autoscale_gang ag = {g.topology_key, g.topology_required};
        if (r->insts.items[ii].group != r->gangs.len + 1)
            return gp_diag_set(r->diag, GP_ESTATE, "simulator: engine gang ids are not dense");
        if (GP_VEC_PUSH(&r->gangs, ag) != 0 || GP_VEC_PUSH(&r->group_inst, ii) != 0)
            return nomem(r);
    }
    for (uint32_t i = 0; i < n; i++) {
        enum gp_err err = lpod_create(r, ii);
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

static enum gp_err on_arrival(struct run *r, uint32_t item)
{
    const struct gp_item *it = &r->wl->items[item];
    struct item_run *ir = &r->items[item];
    uint32_t k = ir->next_k++;
    r->arrivals_done++;
    enum gp_err err = instance_submit(r, item, k);
    if (err != GP_OK)
        return err;
    uint32_t repeat = it->repeat ? it->repeat : 1;
    if (ir->next_k < repeat) {
        double t = r->now_s + dist_draw(&it->interarrival, &ir->arrivals);
        if (isfinite(t))
            return push_event(r, t, EV_ARRIVAL, item, 0);
    }
    return GP_OK;
}

/* Takes every unfinished pod of a failed instance out of the engine. */
static enum gp_err instance_fail(struct run *r, uint32_t ii)
{
    struct inst *in = &r->insts.items[ii];
    bool finite = !item_endless(&r->wl->items[in->item]);
    in->state = INST_FAILED;
    for (uint32_t lp = in->head; lp != NONE; lp = r->lpods.items[lp].next) {
        struct lpod *l = &r->lpods.items[lp];
        if (l->state == LP_COMPLETED || l->state == LP_FAILED)
            continue;
        if (l->has_event) { /* its end or resubmission is now stale */
            l->has_event = 0;
            r->finite_events -= finite;
        }
        if (l->state == LP_PENDING || l->state == LP_RUNNING) {
            enum gp_err err = gp_engine_pod_finished(r->e, l->epod);
            if (err != GP_OK)
                return gp_diag_set(r->diag, err, "simulator: engine refused to remove pod %u",
                                   l->epod);
            if (l->state == LP_RUNNING && (err = unbind_account(r, l)) != GP_OK)
                return err;
        }
        l->state = LP_FAILED;
        r->out->pods_failed++;
    }
    return job_end(r, ii, false);
}

/* A member of a gang failed: every other running member is stopped and
 * goes back to the queue with it at time t, as a distributed job restarts
 * all of its workers. */
static enum gp_err gang_restart(struct run *r, uint32_t ii, double t)
{
    struct inst *in = &r->insts.items[ii];
    for (uint32_t lp = in->head; lp != NONE; lp = r->lpods.items[lp].next) {
        struct lpod *l = &r->lpods.items[lp];
        l->resume = 0; /* the job starts over: no member resumes a run */
        if (l->state != LP_RUNNING)
            continue;
        if (l->has_event) {
            l->has_event = 0;
            r->finite_events -= lpod_finite(r, l);
        }
        enum gp_err err = gp_engine_pod_finished(r->e, l->epod);
        if (err != GP_OK)
            return gp_diag_set(r->diag, err, "simulator: engine refused to stop pod %u", l->epod);
        if ((err = unbind_account(r, l)) != GP_OK)
            return err;
        l->state = LP_BACKOFF;
        r->out->gang_restarts++;
        if ((err = push_event(r, t, EV_RESUBMIT, lp, 0)) != GP_OK)
            return err;
    }
    return GP_OK;
}

static enum gp_err on_end(struct run *r, uint32_t epod, bool failed)
{
    uint32_t lp = r->epods.items[epod].lpod;
    struct lpod *l = &r->lpods.items[lp];
    enum gp_err err = gp_engine_pod_finished(r->e, epod);
    if (err != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: engine refused to finish pod %u", epod);
    if (l->ts_gpu != GP_COLOC_NONE && !failed) { /* how much the company slowed it */
        r->ts_wall_s += r->now_s - l->bound_s;
        r->ts_work_s += work_now(r, l) - l->saved_s;
    }
    if ((err = unbind_account(r, l)) != GP_OK)
        return err;
    l->resume = 0;
    uint32_t ii = l->inst;
    struct inst *in = &r->insts.items[ii];
    const struct gp_item *it = &r->wl->items[in->item];
    if (!failed) {
        l->state = LP_COMPLETED;
        r->out->pods_completed++;
        in->succeeded++;
        if (in->succeeded >= job_target(it)) {
            in->state = INST_DONE;
            return job_end(r, ii, true);
        }
        if (in->created < job_target(it))
            return lpod_create(r, ii);
        return GP_OK;
    }
    l->failures++;
    in->failures++;
    l->state = LP_BACKOFF;
    if (it->kind == GP_ITEM_DEPLOYMENT) /* replaced, with no limit */
        return push_event(r, r->now_s + backoff_s(r, l->failures), EV_RESUBMIT, lp, 0);
    if (in->failures > it->backoff_limit)
        return instance_fail(r, ii);
    double t = r->now_s + backoff_s(r, in->failures);
    if (in->group) /* a gang fails whole: its running members stop and restart with it */
        if ((err = gang_restart(r, ii, t)) != GP_OK)
            return err;
    return push_event(r, t, EV_RESUBMIT, lp, 0);
}

static enum gp_err on_resubmit(struct run *r, uint32_t lp)
{
    r->out->pod_retries++;
    return attempt_add(r, lp);
}

/* When the current run of l ends from now (it has saved_s of work done):
 * at its failure point, or at its length; none for a run without end. */
static enum gp_err push_run_end(struct run *r, struct lpod *l, uint32_t epod,
                                const struct gp_item *it)
{
    bool fails = l->fail_work_s >= 0;
    double t;
    if (fails)
        t = l->rate_t_s + (l->fail_work_s - l->work_s) / l->rate;
    else if (!it->has_duration || it->kind == GP_ITEM_DEPLOYMENT)
        return GP_OK; /* runs until the end (a Deployment's pods never complete) */
    else
        t = l->rate_t_s + (l->len_s - l->work_s) / l->rate;
    if (!isfinite(t))
        return GP_OK;
    if (t < r->now_s)
        t = r->now_s;
    l->end_ver = (l->end_ver + 1) & 0x7fffffffu;
    return push_event(r, t, EV_END, epod, (uint32_t)fails | l->end_ver << 1);
}

/* The pods of a time-sliced GPU whose company changed: each keeps the work
 * done so far, goes on at the GPU's new rate, and gets its end anew. */
static enum gp_err rerate(struct run *r, uint32_t gpu)
{
    size_t n;
    const uint32_t *members = gp_coloc_members(&r->coloc, gpu, &n);
    double rate = gp_coloc_rate(&r->coloc, gpu);
    for (size_t k = 0; k < n; k++) {
        struct lpod *l = &r->lpods.items[members[k]];
        if (l->rate == rate)
            continue;
        if (r->now_s > l->rate_t_s) {
            l->work_s = work_now(r, l);
            l->rate_t_s = r->now_s;
        }
        l->rate = rate;
        if (l->has_event) { /* its end moves */
            l->has_event = 0;
            r->finite_events -= lpod_finite(r, l);
        }
        enum gp_err err = push_run_end(r, l, l->epod, lpod_item(r, l));
        if (err != GP_OK)
            return err;
    }
    return GP_OK;
}

/* A pod's compute demand on a time-sliced GPU: its share, or all of it. */
static double ts_demand(const struct gp_item *it)
{
    return it->pod.gpu_milli > 0 ? it->pod.gpu_milli : GP_GPU_MILLI;
}

/* The value of label key on the node a bound engine pod runs on; NULL. */
static const char *pod_label(const struct run *r, uint32_t epod, const char *key)
{
    const struct gp_pod *p = gp_engine_pod(r->e, epod);
    if (!p || p->state != GP_POD_BOUND)
        return NULL;
    const struct gp_node *n = gp_engine_node(r->e, p->node);
    for (size_t i = 0; i < n->spec.nlabels; i++)
        if (strcmp(n->spec.labels[i].key, key) == 0)
            return n->spec.labels[i].value;
    return NULL;
}

/* A gang member starts: a gang with a topology key whose bound members sit
 * in more than one domain (a preferred key could not be met) runs
 * topology_slowdown times slower, each member alike; its first member
 * counts the gang, and whether it waited longer than its PodGroup's
 * scheduleTimeoutSeconds. The engine binds a gang's members in one cycle,
 * so they are all bound when the first of them starts. */
static void gang_start(struct run *r, struct lpod *l, const struct gp_item *it)
{
    const struct inst *in = &r->insts.items[l->inst];
    bool first = l->slot == 0 && l->runs == 1;
    if (first && it->gang_timeout_s > 0 && r->now_s - in->submit_s > it->gang_timeout_s)
        r->out->gangs_over_timeout++;
    if (!it->topology_key)
        return;
    const char *domain = NULL;
    bool across = false;
    for (uint32_t m = in->head; m != NONE && !across; m = r->lpods.items[m].next) {
        const struct lpod *ml = &r->lpods.items[m];
        if (ml->epod == NONE || (ml->state != LP_RUNNING && ml->state != LP_PENDING))
            continue;
        const char *v = pod_label(r, ml->epod, it->topology_key);
        if (!v)
            v = "";
        if (domain && strcmp(domain, v) != 0)
            across = true;
        domain = v;
    }
    if (!across)
        return;
    l->rate = 1 / (it->topology_slowdown >= 1 ? it->topology_slowdown : GP_TOPOLOGY_SLOWDOWN);
    if (l->slot == 0)
        r->out->gangs_across_domains++;
}

/* The run of a pod just bound starts from the work it had saved, at full
 * speed - unless it shares a time-sliced GPU, where every pod of the GPU
 * goes at the GPU's rate (colocate.h) - and after the re-partitioning
 * time when its MIG instance had to be created. A pod whose declared GPU
 * memory did not fit its time-sliced GPU fails at once, as its first CUDA
 * allocation would (out of memory), and is retried like any failure. */
static enum gp_err run_start(struct run *r, uint32_t lp, const struct gp_decision *d,
                             const struct gp_item *it)
{
    struct lpod *l = &r->lpods.items[lp];
    const struct gp_node *node = gp_engine_node(r->e, d->node);
    const struct gp_sharing_spec *sh = node->spec.sharing;
    l->work_s = l->saved_s;
    l->rate_t_s = r->now_s;
    l->rate = 1;
    l->ts_gpu = GP_COLOC_NONE;
    if (d->pick.reconfigured && sh) {
        for (uint32_t g = d->pick.reconfigured; g; g &= g - 1)
            r->out->mig_reconfigurations++;
        l->rate_t_s += sh->mig.reconfigure_s > 0 ? sh->mig.reconfigure_s : GP_MIG_RECONFIGURE_S;
    }
    if (gp_engine_pod(r->e, d->pod)->oversubscribed) {
        r->out->oom_kills++;
        l->fail_work_s = l->work_s;
    }
    if (r->insts.items[l->inst].group)
        gang_start(r, l, it);
    enum gp_err err;
    if (!sh || sh->mode != GP_SHARE_TIMESLICE || d->pick.ngpus == 0)
        return push_run_end(r, l, d->pod, it);
    uint32_t gpu;
    if (gp_coloc_join(&r->coloc, d->node, node->spec.gpu_count, d->pick.gpu[0], lp, ts_demand(it),
                      &gpu) != 0)
        return nomem(r);
    l->ts_gpu = gpu;
    l->rate = gp_coloc_rate(&r->coloc, gpu);
    if ((err = push_run_end(r, l, d->pod, it)) != GP_OK)
        return err;
    return rerate(r, gpu); /* the others slow down */
}

/* A bound pod joins its node's list; its cost per second is its share of
 * the node's GPUs times the node's price (nothing on a CPU-only node). */
static void bind_node(struct run *r, struct lpod *l, uint32_t lp, const struct gp_decision *d)
{
    l->node = l->nprev = l->nnext = NONE;
    l->rate_usd_s = l->gpus = 0;
    if (d->node >= r->enode_snode.len)
        return;
    uint32_t sni = r->enode_snode.items[d->node];
    struct snode *sn = &r->snodes.items[sni];
    const struct gp_pod *ep = gp_engine_pod(r->e, d->pod);
    double gpus = ep ? (double)ep->gpu_milli_taken / GP_GPU_MILLI : 0; /* what it holds */
    double node_gpus = sn->spec->gpu_count;
    double price = sn->spec->price_per_hour_usd;
    l->gpus = gpus;
    if (node_gpus > 0 && price > 0 && isfinite(price)) {
        double share = gpus / node_gpus;
        l->rate_usd_s = price / 3600.0 * (share < 1 ? share : 1);
    }
    l->node = sni;
    l->nnext = sn->head;
    if (sn->head != NONE)
        r->lpods.items[sn->head].nprev = lp;
    sn->head = lp;
    if (sn->pods++ == 0)
        sn->idle_token++; /* no longer idle */
}

/* A pod was bound: record its delay and schedule the end of its run. A
 * new run draws its length and its failure; an evicted one resumes. */
static enum gp_err on_bind(struct run *r, const struct gp_decision *d)
{
    struct epod *ep = &r->epods.items[d->pod];
    uint32_t lp = ep->lpod;
    struct lpod *l = &r->lpods.items[lp];
    const struct inst *in = &r->insts.items[l->inst];
    const struct gp_item *it = &r->wl->items[in->item];
    r->out->binds++;
    if (l->runs == 0)
        r->out->pods_scheduled++;
    l->runs++;
    l->state = LP_RUNNING;
    l->bound_s = r->now_s;
    bind_node(r, l, lp, d);
    double delay = r->now_s - ep->added_s;
    if (GP_VEC_PUSH(&r->delays, delay) != 0)
        return nomem(r);
    size_t qi;
    struct queue_run *q = lpod_queue(r, l, &qi);
    if (q) {
        r->out->queues[qi].binds++;
        q->alloc_milli += pod_gpu_milli(&it->pod);
        if (GP_VEC_PUSH(&q->delays, delay) != 0)
            return nomem(r);
    }
    if (l->resume) {
        l->resume = 0;
        return run_start(r, lp, d, it);
    }

    uint64_t seed = r->cfg->seed;
    struct gp_rng dur, fail;
    /* a gang's members run for one duration, the job's */
    rng_keyed(&dur, seed, STREAM_DURATION, in->item, in->k, in->group ? 0 : l->slot, l->runs);
    rng_keyed(&fail, seed, STREAM_FAILURE, in->item, in->k, l->slot, l->runs);
    double u = gp_rng_unit(&fail), at = gp_rng_unit(&fail);
    /* a failure by probability needs a duration to happen in */
    bool fails = u < it->failure_prob && it->has_duration;
    l->len_s = it->has_duration ? dist_draw(&it->duration, &dur) : INFINITY;
    l->fail_work_s = fails ? at * l->len_s : -1;
    l->saved_s = 0;
    if (it->failure_rate_per_s > 0) { /* a time to failure, exponential */
        double ttf = -log1p(-gp_rng_unit(&fail)) / it->failure_rate_per_s;
        if (ttf < l->len_s && (l->fail_work_s < 0 || ttf < l->fail_work_s))
            l->fail_work_s = ttf;
    }
    return run_start(r, lp, d, it);
}

/* A running pod was stopped by the engine (to make room for another) or
 * by a spot interruption (spot: the caller released it): the work since
 * its last checkpoint (all of it, without checkpoints) is lost, and it
 * goes back to its queue as a new attempt that resumes the run. */
static enum gp_err evict_lpod(struct run *r, uint32_t lp, uint8_t reason, bool spot)
{
    struct lpod *l = &r->lpods.items[lp];
    const struct gp_item *it = lpod_item(r, l);
    if (l->has_event) { /* its end is stale now */
        l->has_event = 0;
        r->finite_events -= lpod_finite(r, l);
    }
    double rate = l->rate_usd_s;
    double ran = work_now(r, l) - l->saved_s; /* work, at the rate it ran */
    enum gp_err err = unbind_account(r, l);
    if (err != GP_OK)
        return err;
    double lost = it->checkpoint_s > 0 ? fmod(ran, it->checkpoint_s) : ran;
    l->saved_s += ran - lost;
    l->resume = 1;
    double lost_gpu_h = lost * (double)pod_gpu_milli(&it->pod) / GP_GPU_MILLI / 3600.0;
    if (spot) {
        r->out->spot_evictions++;
        r->out->spot_lost_gpu_hours += lost_gpu_h;
    } else {
        r->out->preemptions++;
        r->out->preempted += reason == GP_EVICT_PREEMPTED;
        r->out->reclaimed += reason == GP_EVICT_RECLAIMED;
        r->out->lost_gpu_hours += lost_gpu_h;
    }
    r->lost_usd += lost * rate;
    size_t qi;
    if (lpod_queue(r, l, &qi)) {
        r->out->queues[qi].evicted++;
        r->out->queues[qi].lost_gpu_hours += lost_gpu_h;
        r->out->queues[qi].lost_work_usd += lost * rate;
    }
    return attempt_add(r, lp);
}

static enum gp_err on_evict(struct run *r, const struct gp_decision *d)
{
    struct epod *ep = &r->epods.items[d->pod];
    uint32_t lp = ep->lpod;
    struct lpod *l = &r->lpods.items[lp];
    if (l->state != LP_RUNNING || l->epod != d->pod)
        return gp_diag_set(r->diag, GP_ESTATE, "simulator: the engine evicted pod %u, not running",
                           d->pod);
    return evict_lpod(r, lp, d->evict, false);
}

static bool gang_fits_max(struct run *r, uint32_t ii);

static enum gp_err on_unschedulable(struct run *r, const struct gp_decision *d)
{
    struct epod *ep = &r->epods.items[d->pod];
    struct lpod *l = &r->lpods.items[ep->lpod];
    ep->tried = r->cycles;
    if (d->gang == GP_GANG_NEVER_FITS && l->state == LP_PENDING && !gang_fits_max(r, l->inst)) {
        /* reported at once, not left pending in silence: the job fails */
        r->out->gangs_never_fit++;
        return instance_fail(r, l->inst);
    }
    /* the autoscaler looks at pods that new nodes could help: not those
     * waiting for gang members or for their queue's quota */
    if (r->dynamic && !ep->unsched && l->state == LP_PENDING && d->gang != GP_GANG_MEMBERS &&
        d->quota_queue == GP_QUEUE_NONE) {
        if (GP_VEC_PUSH(&r->unsched, d->pod) != 0)
            return nomem(r);
        ep->unsched = 1;
        r->as_dirty = true;
    }
    if (ep->counted || l->state == LP_FAILED)
        return GP_OK;
    ep->counted = 1;
    enum gp_filter main_reason = gp_explain_main(&d->explain);
    if (main_reason != GP_FILTER_COUNT) /* a gang waiting for members scanned no node */
        r->out->unschedulable[main_reason]++;
    return GP_OK;
}

static enum gp_err autoscale(struct run *r);

/* Cycles at the current time: one, and another after each that evicted
 * pods (they are back in the queue and may fit elsewhere). */
#define MAX_EVICT_CYCLES 16

static bool strict_order(const struct run *r)
{
    return r->cfg->order != GP_ORDER_FAIR && !r->cfg->backfill;
}

static enum gp_err schedule_cycle(struct run *r)
{
    r->cycle_mark = r->cycles;
    for (int round = 0; round < MAX_EVICT_CYCLES; round++) {
        size_t pending = gp_engine_pending_count(r->e);
        if (pending == 0)
            return GP_OK;
        struct gp_engine_totals t;
        gp_engine_totals(r->e, &t);
        /* a decision per pending pod, and at most one eviction per bound pod */
        if (GP_VEC_RESERVE(&r->dec, pending + t.pods_bound) != 0)
            return nomem(r);
        size_t n = gp_engine_schedule(r->e, r->now_s, 0, r->dec.items, r->dec.cap);
        r->cycles++;
        bool evicted = false;
        for (size_t i = 0; i < n; i++) {
            const struct gp_decision *d = &r->dec.items[i];
            if (d->pod >= r->epods.len)
                return gp_diag_set(r->diag, GP_ESTATE, "simulator: decision for unknown pod %u",
                                   d->pod);
            enum gp_err err;
            if (d->kind == GP_DECISION_BIND) {
                err = on_bind(r, d);
            } else if (d->kind == GP_DECISION_EVICT) {
                err = on_evict(r, d);
                evicted = true;
            } else {
                err = on_unschedulable(r, d);
            }
            if (err != GP_OK)
                return err;
        }
        if (!evicted)
            break;
    }
    /* strict orders: pods behind a blocked head get no decision; a new one
     * is news for the autoscaler all the same */
    if (r->dynamic && strict_order(r) && r->epods.len != r->as_epods &&
        gp_engine_pending_count(r->e) > 0)
        r->as_dirty = true;
    if (r->dynamic && r->as_dirty) {
        enum gp_err err = autoscale(r);
        if (err != GP_OK)
            return err;
    }
    /* a waiting pod may evict one that reaches its minimum runtime later:
     * the engine must look again then, even if nothing else happens */
    double wake = gp_engine_next_wake_s(r->e);
    if (isfinite(wake) && wake > r->now_s && wake < r->wake_s) {
        r->wake_s = wake;
        return push_event(r, wake, EV_WAKE, 0, 0);
    }
    return GP_OK;
}

static void state_now(const struct run *r, struct gp_sim_sample *s)
{
    struct gp_engine_totals t;
    gp_engine_totals(r->e, &t);
    memset(s, 0, sizeof *s);
    s->gpu_alloc_pct =
        t.gpu_milli_total ? 100.0 * (double)t.gpu_milli_alloc / (double)t.gpu_milli_total : 0;
    s->cpu_alloc_pct =
        t.cpu_milli_total > 0 ? 100.0 * (double)t.cpu_milli_alloc / (double)t.cpu_milli_total : 0;
    s->mem_alloc_pct =
        t.mem_mib_total > 0 ? 100.0 * (double)t.mem_mib_alloc / (double)t.mem_mib_total : 0;
    size_t pending = gp_engine_pending_count(r->e);
    s->pending = pending > UINT32_MAX ? UINT32_MAX : (uint32_t)pending;
    s->running = t.pods_bound > UINT32_MAX ? UINT32_MAX : (uint32_t)t.pods_bound;
    s->nodes = t.nodes_ready;
}

/* Field by field: the struct has padding, which memcmp would read. */
static bool sample_eq(const struct gp_sim_sample *a, const struct gp_sim_sample *b)
{
    return a->t_s == b->t_s && a->gpu_alloc_pct == b->gpu_alloc_pct &&
           a->cpu_alloc_pct == b->cpu_alloc_pct && a->mem_alloc_pct == b->mem_alloc_pct &&
           a->pending == b->pending && a->running == b->running && a->nodes == b->nodes &&
           a->cost_usd == b->cost_usd;
}

/* Records the state from now on (one entry per distinct time and state). */
static enum gp_err log_state(struct run *r)
{
    struct change c = {.t_s = r->now_s,
                       .cost_usd = r->cost_usd + r->cp_per_s * r->now_s,
                       .rate_usd_s = r->price_per_s + r->cp_per_s};
    state_now(r, &c.s);
    if (r->log.len > 0) {
        struct change *last = &r->log.items[r->log.len - 1];
        c.s.t_s = last->s.t_s;
        if (sample_eq(&last->s, &c.s) && last->rate_usd_s == c.rate_usd_s)
            return GP_OK;
        if (last->t_s == r->now_s) {
            *last = c;
            return GP_OK;
        }
    }
    return GP_VEC_PUSH(&r->log, c) == 0 ? GP_OK : nomem(r);
}

/* Integrates the constant state of [now, t) and moves the clock to t. */
static void advance(struct run *r, double t_s)
{
    double dt = t_s - r->now_s;
    if (dt > 0) {
        struct gp_engine_totals t;
        gp_engine_totals(r->e, &t);
        r->node_s += (double)t.nodes_ready * dt;
        r->gpu_milli_total_s += (double)t.gpu_milli_total * dt;
        r->gpu_milli_alloc_s += (double)t.gpu_milli_alloc * dt;
        r->cost_usd += r->price_per_s * dt;
        for (size_t i = 0; i < r->nqueues; i++)
            r->queues[i].alloc_milli_s += (double)r->queues[i].alloc_milli * dt;
        r->now_s = t_s;
    }
}

/* ---- cluster dynamics: autoscaler, node boot and removal, spot -------------- */

static double node_price_h(const struct gp_node_spec *n)
{
    double p = n->price_per_hour_usd;
    return p > 0 && isfinite(p) ? p : 0;
}

/* The node leaves the bill (its pods are gone). */
static void node_gone(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    struct pool_dyn *pd = &r->pools[sn->pool];
    gp_cost_node(&r->cost, sn->pool, sn->since_s, r->now_s, node_price_h(sn->spec),
                 sn->spec->gpu_count);
    if (sn->state == SN_READY || sn->state == SN_BOOTING) {
        pd->live--;
        if (sn->domain != NONE)
            pd->dlive[sn->domain]--;
    }
    pd->billed--;
    r->price_per_s -= node_price_h(sn->spec) / 3600.0;
    sn->state = SN_GONE;
    sn->idle_token++;
    r->as_dirty = true;
}

static enum gp_err snode_add(struct run *r, const struct gp_node_spec *spec, uint32_t pool,
                             uint32_t domain, uint8_t state, uint32_t *out)
{
    struct snode sn = {.spec = spec,
                       .pool = pool,
                       .enode = NONE,
                       .head = NONE,
                       .domain = domain,
                       .state = state,
                       .since_s = r->now_s,
                       .idle_since_s = r->now_s};
    if (r->snodes.len >= NONE || GP_VEC_PUSH(&r->snodes, sn) != 0)
        return nomem(r);
    struct pool_dyn *pd = &r->pools[pool];
    pd->live++;
    pd->billed++;
    if (domain != NONE)
        pd->dlive[domain]++;
    struct gp_cost_pool *cp = &r->cost.pools[pool];
    if (pd->live > cp->peak_nodes)
        cp->peak_nodes = pd->live;
    *out = (uint32_t)(r->snodes.len - 1);
    return GP_OK;
}

/* A new node of pool p is requested: billed from now, ready after the
 * pool's boot time. In a pool with topology domains it joins `domain`
 * (NONE: the fullest domain with room). */
static enum gp_err request_node(struct run *r, uint32_t p, uint32_t domain)
{
    struct pool_dyn *pd = &r->pools[p];
    const struct pool_topo *pt = r->topo && p < r->cluster->npools ? &r->topo[p] : NULL;
    struct gp_node_spec *spec;
    if (pt && pt->n > 0) {
        if (domain >= pt->n || pd->dlive[domain] >= pd->spec->nodes_per_domain) {
            domain = NONE;
            for (uint32_t d = 0; d < pt->n; d++)
                if (pd->dlive[d] < pd->spec->nodes_per_domain &&
                    (domain == NONE || pd->dlive[d] > pd->dlive[domain]))
                    domain = d;
        }
        if (domain == NONE) /* cannot happen: live < max <= the domains' room */
            return gp_diag_set(r->diag, GP_ESTATE, "simulator: pool %s has no domain with room",
                               pd->spec->name);
        spec = spec_labelled(r, &pd->tmpl, pd->spec->topology_key, pt->values[domain]);
    } else {
        domain = NONE;
        spec = gp_arena_alloc(r->a, sizeof *spec);
        if (spec)
            *spec = pd->tmpl;
    }
    if (!spec)
        return nomem(r);
    spec->name = gp_arena_printf(r->a, "%s-%u", pd->spec->name, pd->next_name++);
    if (!spec->name)
        return nomem(r);
    uint32_t sni;
    enum gp_err err = snode_add(r, spec, p, domain, SN_BOOTING, &sni);
    if (err != GP_OK)
        return err;
    r->price_per_s += node_price_h(spec) / 3600.0;
    r->cost.pools[p].requested++;
    r->out->nodes_requested++;
    double t = r->now_s + pd->spec->boot_s;
    return push_event(r, t, EV_BOOT, sni, 0);
}

/* An idle ready node of an autoscaled pool may go after the cool-down. */
static void node_idle(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    sn->idle_since_s = r->now_s;
    sn->idle_token++;
    if (sn->state != SN_READY || !r->pools[sn->pool].dynamic)
        return;
    double t = r->now_s + r->cluster->autoscaler.scale_down_unneeded_s;
    /* out of memory: the node just stays (the next event reports it) */
    (void)push_event(r, t, EV_IDLE, sni, sn->idle_token);
}

/* Draws when a ready spot node gets its notice (Poisson: exponential time). */
static enum gp_err spot_arm(struct run *r, uint32_t sni)
{
    const struct snode *sn = &r->snodes.items[sni];
    const struct gp_pool_spec *ps = r->pools[sn->pool].spec;
    if (!ps || !ps->spot || !(ps->spot_rate_per_node_hour > 0))
        return GP_OK;
    struct gp_rng rng;
    rng_keyed(&rng, r->cfg->seed, STREAM_SPOT, sn->pool, sni, 0, 0);
    double ttf = -log1p(-gp_rng_unit(&rng)) * 3600.0 / ps->spot_rate_per_node_hour;
    double t = r->now_s + ttf;
    return isfinite(t) ? push_event(r, t, EV_SPOT_NOTICE, sni, 0) : GP_OK;
}

static enum gp_err on_boot(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    if (sn->state != SN_BOOTING)
        return GP_OK;
    uint32_t id;
    enum gp_err err = gp_engine_node_add(r->e, sn->spec, &id);
    if (err != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: the engine refused new node %s: %s",
                           sn->spec->name, gp_strerror(err));
    while (r->enode_snode.len <= id)
        if (GP_VEC_PUSH(&r->enode_snode, NONE) != 0)
            return nomem(r);
    r->enode_snode.items[id] = sni;
    sn = &r->snodes.items[sni];
    sn->enode = id;
    sn->state = SN_READY;
    r->as_dirty = true;
    if (sn->pods == 0)
        node_idle(r, sni);
    return spot_arm(r, sni);
}

static enum gp_err on_idle(struct run *r, uint32_t sni, uint32_t token)
{
    struct snode *sn = &r->snodes.items[sni];
    if (sn->state != SN_READY || sn->idle_token != token)
        return GP_OK;
    struct pool_dyn *pd = &r->pools[sn->pool];
    const struct gp_node *n = gp_engine_node(r->e, sn->enode);
    if (!pd->spec || !gp_autoscale_may_remove(n, sn->idle_since_s, r->now_s,
                                              r->cluster->autoscaler.scale_down_unneeded_s,
                                              pd->live, pd->spec->min_count))
        return GP_OK;
    enum gp_err err = gp_engine_node_remove(r->e, sn->enode);
    if (err != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: the engine refused to remove node %s: %s",
                           sn->spec->name, gp_strerror(err));
    r->cost.pools[sn->pool].removed++;
    r->out->nodes_removed++;
    node_gone(r, sni);
    return GP_OK;
}

/* A spot node's notice: it is drained (no new pods; its pods run on until
 * the notice ends) and a replacement is requested at once when it ran pods
 * or the pool would fall below its minimum. */
static enum gp_err spot_notice(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    if (sn->state != SN_READY)
        return GP_OK;
    enum gp_err err = gp_engine_node_drain(r->e, sn->enode);
    if (err != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: the engine refused to drain node %s: %s",
                           sn->spec->name, gp_strerror(err));
    struct pool_dyn *pd = &r->pools[sn->pool];
    sn->state = SN_DRAINING;
    sn->idle_token++;
    pd->live--;
    if (sn->domain != NONE)
        pd->dlive[sn->domain]--;
    uint32_t domain = sn->domain;
    r->cost.pools[sn->pool].interruptions++;
    r->out->spot_interruptions++;
    r->as_dirty = true;
    bool had_pods = sn->pods > 0;
    if ((err = push_event(r, r->now_s + pd->spec->spot_notice_s, EV_SPOT_END, sni, 0)) != GP_OK)
        return err;
    if ((had_pods || pd->live < pd->spec->min_count) && pd->live < pd->spec->max_count)
        return request_node(r, r->snodes.items[sni].pool, domain); /* in its domain */
    return GP_OK;
}

/* A recorded interruption: one ready node of the pool, drawn with the seed.
 * When the pool has no ready node then (none at all, or only booting or
 * draining ones) it is dropped - there is nothing of ours to reclaim - and
 * counted; it does not wait for the next node. */
static enum gp_err on_spot_series(struct run *r, uint32_t pool, uint32_t k)
{
    const struct gp_pool_spec *ps = r->pools[pool].spec;
    uint32_t n = 0, pick = NONE;
    struct gp_rng rng;
    rng_keyed(&rng, r->cfg->seed, STREAM_SPOT, pool, k, 1, 0);
    for (size_t i = 0; i < r->snodes.len; i++) /* reservoir sampling over ready nodes */
        if (r->snodes.items[i].pool == pool && r->snodes.items[i].state == SN_READY &&
            gp_rng_below(&rng, ++n) == 0)
            pick = (uint32_t)i;
    if (pick == NONE) {
        r->cost.pools[pool].interruptions_missed++;
        r->out->spot_interruptions_missed++;
    }
    enum gp_err err = pick != NONE ? spot_notice(r, pick) : GP_OK;
    if (err == GP_OK && (size_t)k + 1 < ps->nspot_times)
        err = push_event(r, ps->spot_times_s[k + 1], EV_SPOT_SERIES, pool, k + 1);
    return err;
}

/* The notice is over: the node's pods are evicted (a gang member takes its
 * whole gang: every running member restarts from its last checkpoint) and
 * the node leaves. */
static enum gp_err on_spot_end(struct run *r, uint32_t sni)
{
    if (r->snodes.items[sni].state != SN_DRAINING)
        return GP_OK;
    enum gp_err err = GP_OK;
    uint32_t lp;
    while (err == GP_OK && (lp = r->snodes.items[sni].head) != NONE) {
        const struct inst *in = &r->insts.items[r->lpods.items[lp].inst];
        uint32_t first = in->group ? in->head : lp;
        for (uint32_t m = first; err == GP_OK && m != NONE;) {
            struct lpod *l = &r->lpods.items[m];
            uint32_t next = in->group ? l->next : NONE;
            if (l->state == LP_RUNNING) {
                err = gp_engine_pod_finished(r->e, l->epod);
                if (err != GP_OK)
                    return gp_diag_set(r->diag, err, "simulator: engine refused to stop pod %u",
                                       l->epod);
                err = evict_lpod(r, m, GP_EVICT_NONE, true);
            }
            in = &r->insts.items[r->lpods.items[lp].inst];
            m = next;
        }
    }
    if (err != GP_OK)
        return err;
    struct snode *sn = &r->snodes.items[sni];
    if ((err = gp_engine_node_remove(r->e, sn->enode)) != GP_OK)
        return gp_diag_set(r->diag, err, "simulator: the engine refused to remove node %s: %s",
                           sn->spec->name, gp_strerror(err));
    node_gone(r, sni);
    return GP_OK;
}

/* The pools as the autoscaler sees them; max 0 for pools that cannot grow.
 * at_max: every pool empty with room for its maximum (could a gang ever
 * fit?). */
static enum gp_err as_pools(struct run *r, bool at_max, struct gp_autoscale_pool **out)
{
    struct gp_autoscale_pool *ap = calloc(r->npools ? r->npools : 1, sizeof *ap);
    if (!ap)
        return nomem(r);
    for (size_t i = 0; i < r->npools; i++) {
        const struct pool_dyn *pd = &r->pools[i];
        if (!pd->has_tmpl)
            continue;
        ap[i].spec = &pd->tmpl;
        ap[i].price_per_hour_usd = pd->spec->price_per_hour_usd;
        if (r->topo && i < r->cluster->npools && r->topo[i].n > 0) {
            ap[i].domain_key = pd->spec->topology_key;
            ap[i].domain_values = r->topo[i].values;
            ap[i].ndomains = r->topo[i].n;
            ap[i].nodes_per_domain = pd->spec->nodes_per_domain;
            ap[i].domain_live = at_max ? NULL : pd->dlive; /* at max: every domain empty */
        }
        if (at_max) {
            ap[i].max =
                pd->spec->max_count > pd->spec->count ? pd->spec->max_count : pd->spec->count;
        } else if (pd->dynamic) {
            ap[i].live = pd->live;
            ap[i].max = pd->spec->max_count;
        }
    }
    *out = ap;
    return GP_OK;
}

/* Whether a gang the engine says never fits the cluster as it is would fit
 * with every pool at its maximum (then it waits for the autoscaler). */
static bool gang_fits_max(struct run *r, uint32_t ii)
{
    struct inst *in = &r->insts.items[ii];
    if (!r->dynamic || in->maxfit)
        return in->maxfit == 1;
    in->maxfit = 2;
    struct gp_autoscale_pool *ap = NULL;
    GP_VEC(uint32_t) pods = {0};
    uint32_t *add = calloc(r->npools ? r->npools : 1, sizeof *add);
    size_t placed = 0;
    bool ok = add && as_pools(r, true, &ap) == GP_OK;
    for (uint32_t lp = in->head; ok && lp != NONE; lp = r->lpods.items[lp].next)
        if (r->lpods.items[lp].state == LP_PENDING)
            ok = GP_VEC_PUSH(&pods, r->lpods.items[lp].epod) == 0;
    struct gp_autoscale_input ain = {.pools = ap,
                                     .npools = r->npools,
                                     .pods = pods.items,
                                     .npods = pods.len,
                                     .gangs = r->gangs.items,
                                     .ngangs = r->gangs.len};
    if (ok && gp_autoscale_plan(r->e, &ain, add, NULL, NULL, &placed) == GP_OK &&
        placed == pods.len && placed > 0)
        r->insts.items[ii].maxfit = 1;
    free(ap);
    free(add);
    GP_VEC_FREE(&pods);
    return r->insts.items[ii].maxfit == 1;
}

/* Whether a pending pod the cycle did not reach (strict orders) is one new
 * nodes could help: not a gang member whose gang lacks members, nor a pod
 * whose queue (or an ancestor) has a GPU, CPU or memory limit that it,
 * with the pods before it in the list, would exceed (extra: per queue,
 * what those ask, updated here). */
static bool untried_wanted(struct run *r, const struct gp_pod *p, int64_t (*extra)[3])
{
    const struct lpod *l = &r->lpods.items[r->epods.items[p->id].lpod];
    if (l->state != LP_PENDING || l->epod != p->id)
        return false;
    if (p->spec.group) {
        const struct inst *in = &r->insts.items[r->group_inst.items[p->spec.group - 1]];
        const struct gp_item *it = &r->wl->items[in->item];
        uint32_t have = 0;
        for (uint32_t m = in->head; m != NONE; m = r->lpods.items[m].next)
            have += r->lpods.items[m].state == LP_PENDING || r->lpods.items[m].state == LP_RUNNING;
        if (have < it->gang_min && have < in->created)
            return false;
    }
    int64_t req[3] = {(int64_t)p->spec.gpu_count * p->spec.gpu_milli, p->spec.cpu_milli,
                      p->spec.mem_mib};
    for (uint32_t q = p->spec.queue; extra && q != GP_QUEUE_NONE;
         q = gp_engine_queue_parent(r->e, q)) {
        const struct gp_queue_spec *qs = gp_engine_queue_spec(r->e, q);
        struct gp_queue_usage u;
        if (!qs || gp_engine_queue_usage(r->e, q, &u) != GP_OK)
            break;
        const struct gp_quota *quota[3] = {&qs->gpu_milli, &qs->cpu_milli, &qs->mem_mib};
        int64_t used[3] = {u.gpu_milli, u.cpu_milli, u.mem_mib};
        for (int k = 0; k < 3; k++)
            if (quota[k]->limited && req[k] > 0 &&
                used[k] + extra[q][k] + req[k] > quota[k]->guaranteed + quota[k]->borrow_limit)
                return false;
    }
    for (uint32_t q = p->spec.queue; extra && q != GP_QUEUE_NONE;
         q = gp_engine_queue_parent(r->e, q))
        for (int k = 0; k < 3; k++)
            extra[q][k] += req[k];
    return true;
}

/* The pods the autoscaler plans for: those found unschedulable and, under
 * strict orders, the pending pods behind the blocked head that the cycle
 * did not try, in the engine's order. */
static enum gp_err as_pods(struct run *r)
{
    r->untried.len = 0;
    if (!strict_order(r) || gp_engine_pending_count(r->e) == 0)
        return GP_OK;
    size_t n = gp_engine_pending_count(r->e);
    if (GP_VEC_RESERVE(&r->untried, n) != 0)
        return nomem(r);
    n = gp_engine_pending(r->e, r->untried.items, r->untried.cap);
    if (n > r->untried.cap)
        return gp_diag_set(r->diag, GP_ESTATE, "simulator: the engine's pending list grew");
    size_t nq = gp_engine_queue_count(r->e);
    int64_t(*extra)[3] = calloc(nq ? nq : 1, sizeof *extra);
    if (!extra)
        return nomem(r);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r->untried.items[i];
        const struct gp_pod *p = gp_engine_pod(r->e, id);
        if (!p || id >= r->epods.len || r->epods.items[id].unsched ||
            r->epods.items[id].tried > r->cycle_mark || !untried_wanted(r, p, extra))
            continue;
        r->untried.items[k++] = id;
    }
    free(extra);
    r->untried.len = k;
    for (size_t i = 0; i < k; i++)
        if (GP_VEC_PUSH(&r->unsched, r->untried.items[i]) != 0)
            return nomem(r);
    return GP_OK;
}

/* Scale-up: the pending pods found unschedulable (and, under strict
 * orders, those the cycle did not reach), packed onto booting and new
 * nodes (engine/autoscale.h); the nodes it asks for are requested. */
static enum gp_err autoscale(struct run *r)
{
    r->as_dirty = false;
    r->as_epods = r->epods.len;
    size_t k = 0;
    for (size_t i = 0; i < r->unsched.len; i++) {
        uint32_t id = r->unsched.items[i];
        const struct lpod *l = &r->lpods.items[r->epods.items[id].lpod];
        if (l->state == LP_PENDING && l->epod == id)
            r->unsched.items[k++] = id;
        else
            r->epods.items[id].unsched = 0;
    }
    r->unsched.len = k;
    size_t nunsched = k; /* the untried ones join the list for this plan only */
    enum gp_err err = as_pods(r);
    if (err != GP_OK || r->unsched.len == 0) {
        r->unsched.len = nunsched;
        return err;
    }
    struct gp_autoscale_pool *ap = NULL;
    GP_VEC(const struct gp_node_spec *) booting = {0};
    GP_VEC(uint32_t) bpool = {0};
    struct gp_autoscale_node *nodes = NULL;
    uint32_t *add = calloc(r->npools ? r->npools : 1, sizeof *add);
    err = add ? as_pools(r, false, &ap) : nomem(r);
    size_t room = 0;
    for (size_t p = 0; err == GP_OK && p < r->npools; p++)
        room += ap[p].max > ap[p].live ? ap[p].max - ap[p].live : 0;
    if (err == GP_OK && !(nodes = malloc((room ? room : 1) * sizeof *nodes)))
        err = nomem(r);
    for (size_t i = 0; err == GP_OK && i < r->snodes.len; i++) {
        const struct snode *sn = &r->snodes.items[i];
        if (sn->state == SN_BOOTING && r->pools[sn->pool].has_tmpl &&
            (GP_VEC_PUSH(&booting, sn->spec) != 0 || GP_VEC_PUSH(&bpool, sn->pool) != 0))
            err = nomem(r);
    }
    size_t nnodes = 0;
    struct gp_autoscale_input in = {.pools = ap,
                                    .npools = r->npools,
                                    .booting = booting.items,
                                    .booting_pool = bpool.items,
                                    .nbooting = booting.len,
                                    .pods = r->unsched.items,
                                    .npods = r->unsched.len,
                                    .gangs = r->gangs.items,
                                    .ngangs = r->gangs.len};
    if (err == GP_OK && (err = gp_autoscale_plan(r->e, &in, add, nodes, &nnodes, NULL)) != GP_OK)
        err = gp_diag_set(r->diag, err, "simulator: the autoscaler failed: %s", gp_strerror(err));
    r->unsched.len = nunsched;
    for (size_t i = 0; err == GP_OK && i < nnodes; i++)
        err = request_node(r, nodes[i].pool,
                           nodes[i].domain == GP_AUTOSCALE_NO_DOMAIN ? NONE : nodes[i].domain);
    r->as_dirty = false; /* the requests themselves change nothing to look at */
    free(ap);
    free(add);
    free(nodes);
    GP_VEC_FREE(&booting);
    GP_VEC_FREE(&bpool);
    return err;
}

/* The pools' rows (the cluster's pools, then one for nodes of no known
 * pool when there are such), what a new node of each is, and a sim node
 * for every node the run starts with (timed mode; engine ids in order). */
static enum gp_err dyn_init(struct run *r)
{
    const struct gp_cluster *c = r->cluster;
    size_t np = c->npools;
    bool orphans = false;
    uint32_t *pool_of = malloc((c->nnodes ? c->nnodes : 1) * sizeof *pool_of);
    if (!pool_of)
        return nomem(r);
    uint32_t last = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const char *pn = c->nodes[i].pool;
        pool_of[i] = NONE;
        if (pn && last < np && c->pools[last].name && strcmp(c->pools[last].name, pn) == 0)
            pool_of[i] = last;
        for (size_t j = 0; pn && pool_of[i] == NONE && j < np; j++)
            if (c->pools[j].name && strcmp(c->pools[j].name, pn) == 0)
                pool_of[i] = last = (uint32_t)j;
        if (pool_of[i] == NONE) {
            pool_of[i] = (uint32_t)np;
            orphans = true;
        }
    }
    r->npools = np + orphans;
    r->pools = calloc(r->npools ? r->npools : 1, sizeof *r->pools);
    enum gp_err err = GP_OK;
    if (!r->pools || gp_cost_init(&r->cost, r->npools) != GP_OK) {
        err = nomem(r);
        goto out;
    }
    for (size_t i = 0; i < r->npools; i++) {
        struct pool_dyn *pd = &r->pools[i];
        struct gp_cost_pool *cp = &r->cost.pools[i];
        if (i == np) {
            cp->name = "(no pool)";
            continue;
        }
        const struct gp_pool_spec *ps = &c->pools[i];
        pd->spec = ps;
        pd->dynamic = gp_pool_is_dynamic(ps);
        if (r->topo && r->topo[i].n > 0 && !(pd->dlive = calloc(r->topo[i].n, sizeof *pd->dlive))) {
            err = nomem(r);
            goto out;
        }
        pd->next_name = ps->count;
        r->dynamic |= pd->dynamic;
        cp->name = ps->name;
        cp->gpu = ps->gpu_model && ps->gpus_per_node > 0;
        cp->spot = ps->spot;
        cp->autoscaled = ps->max_count > ps->min_count;
        /* readers without autoscaling (openb, Philly) leave min and max 0 */
        cp->min_nodes = ps->max_count ? ps->min_count : ps->count;
        cp->max_nodes = ps->max_count > ps->count ? ps->max_count : ps->count;
        cp->on_demand_per_hour = ps->on_demand_per_hour_usd;
    }
    for (size_t i = 0; i < np && r->dynamic; i++) { /* templates: a pool of one node, expanded */
        struct gp_pool_spec *one = gp_arena_alloc(r->a, sizeof *one);
        struct gp_cluster tmp = {.name = c->name, .source = c->source, .pools = one, .npools = 1};
        if (!one) {
            err = nomem(r);
            goto out;
        }
        *one = c->pools[i];
        one->count = 1;
        if ((err = gp_cluster_expand(&tmp, r->a, r->diag)) != GP_OK)
            goto out;
        r->pools[i].tmpl = tmp.nodes[0];
        r->pools[i].has_tmpl = true;
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        uint32_t sni;
        uint32_t d = r->node_domain ? r->node_domain[i] : NONE;
        if ((err = snode_add(r, &r->nodes[i], pool_of[i], d, SN_READY, &sni)) != GP_OK)
            goto out;
        r->snodes.items[sni].enode = (uint32_t)i;
        if (GP_VEC_PUSH(&r->enode_snode, sni) != 0) {
            err = nomem(r);
            goto out;
        }
    }
    r->cp_per_s = c->control_plane_per_hour_usd > 0 ? c->control_plane_per_hour_usd / 3600.0 : 0;
out:
    free(pool_of);
    return err;
}

/* Arms the dynamics at time 0: idle timers of autoscaled pools, spot
 * interruptions, recorded series. */
static enum gp_err dyn_start(struct run *r)
{
    enum gp_err err = GP_OK;
    for (size_t i = 0; err == GP_OK && r->dynamic && i < r->snodes.len; i++) {
        node_idle(r, (uint32_t)i);
        err = spot_arm(r, (uint32_t)i);
    }
    for (size_t p = 0; err == GP_OK && p < r->npools; p++) {
        const struct gp_pool_spec *ps = r->pools[p].spec;
        if (ps && ps->spot && ps->nspot_times > 0)
            err = push_event(r, ps->spot_times_s[0], EV_SPOT_SERIES, (uint32_t)p, 0);
    }
    /* a pool below its minimum (cannot happen from the YAML) grows now */
    for (size_t p = 0; err == GP_OK && p < r->npools; p++)
        while (err == GP_OK && r->pools[p].dynamic && r->pools[p].has_tmpl &&
               r->pools[p].live < r->pools[p].spec->min_count)
            err = request_node(r, (uint32_t)p, NONE);
    return err;
}

/* The cost figures at the end of the run (sim/cost.h). */
static enum gp_err cost_finish(struct run *r, double end)
{
    for (size_t i = 0; i < r->snodes.len; i++) {
        const struct snode *sn = &r->snodes.items[i];
        if (sn->state != SN_GONE)
            gp_cost_node(&r->cost, sn->pool, sn->since_s, end, node_price_h(sn->spec),
                         sn->spec->gpu_count);
    }
    for (size_t i = 0; i < r->lpods.len; i++)
        if (r->lpods.items[i].state == LP_RUNNING)
            pod_cost(r, &r->lpods.items[i], end);
    size_t njobs = 0;
    double services = 0;
    double *usd = malloc((r->insts.len ? r->insts.len : 1) * sizeof *usd);
    const char **names = malloc((r->insts.len ? r->insts.len : 1) * sizeof *names);
    uint32_t *ks = malloc((r->insts.len ? r->insts.len : 1) * sizeof *ks);
    enum gp_err err = GP_OK;
    if (!usd || !names || !ks) {
        err = nomem(r);
        goto out;
    }
    for (size_t i = 0; i < r->insts.len; i++) {
        const struct inst *in = &r->insts.items[i];
        const struct gp_item *it = &r->wl->items[in->item];
        if (it->kind == GP_ITEM_DEPLOYMENT) {
            services += in->cost_usd;
            continue;
        }
        usd[njobs] = in->cost_usd;
        names[njobs] = it->name ? it->name : "unnamed";
        ks[njobs++] = in->k;
    }
    err = gp_cost_finish(&r->cost, r->cost_usd, r->cp_per_s * end, services, usd,
                         (const char *const *)names, ks, njobs, r->lost_usd, r->a, r->out);
    if (err != GP_OK)
        err = nomem(r);
out:
    free(usd);
    free(names);
    free(ks);
    return err;
}

static enum gp_err apply_event(struct run *r, const struct gp_sim_event *ev)
{
    switch (ev->kind) {
    case EV_ARRIVAL:
        return on_arrival(r, ev->a);
    case EV_END:
        return on_end(r, ev->a, ev->b & 1);
    case EV_RESUBMIT:
        return on_resubmit(r, ev->a);
    case EV_DEADLINE: /* the Job ran too long: it fails, its pods stop */
        r->out->jobs_deadline_exceeded++;
        return instance_fail(r, ev->a);
    case EV_WAKE:
        return GP_OK;
    case EV_BOOT:
        return on_boot(r, ev->a);
    case EV_IDLE:
        return on_idle(r, ev->a, ev->b);
    case EV_SPOT_NOTICE:
        return spot_notice(r, ev->a);
    case EV_SPOT_SERIES:
        return on_spot_series(r, ev->a, ev->b);
    case EV_SPOT_END:
        return on_spot_end(r, ev->a);
    }
    return GP_OK;
}

static double timed_fraction(const struct run *r, bool endless_only)
{
    double f;
    if (r->cfg->horizon_s > 0)
        f = r->now_s / r->cfg->horizon_s;
    else if (endless_only)
        f = r->now_s / DAY_S;
    else /* the end is unknown: arrivals so far, the best cheap guess */
        f = r->arrivals_total ? (double)r->arrivals_done / (double)r->arrivals_total : 0;
    return f < 0.99 ? f : 0.99; /* 1 is reported once, at the end */
}

/* The sample interval for a run that ends at end_s, and the number of
 * samples: at 0, step, 2 step, ... <= end_s, plus one at end_s when it is
 * not a multiple of step (so the last sample is the final state);
 * GP_ELIMIT when too many. */
static enum gp_err samples_plan(struct run *r, double end_s, double *step, size_t *n)
{
    *step = r->cfg->sample_s;
    if (!(*step > 0)) {
        *step = end_s / AUTO_SAMPLES;
        if (*step < 1)
            *step = 1;
    }
    double regular = floor(end_s / *step) + 1;
    double count = regular + ((regular - 1) * *step < end_s);
    if (count > MAX_SAMPLES)
        return gp_diag_set(r->diag, GP_ELIMIT,
                           "sample interval %g s over %g s of simulation gives more than %d "
                           "samples; choose a longer interval",
                           *step, end_s, MAX_SAMPLES);
    *n = (size_t)count;
    return GP_OK;
}

static enum gp_err samples_build(struct run *r, double end_s)
{
    double step = 0;
    size_t n = 0;
    enum gp_err err = samples_plan(r, end_s, &step, &n);
    if (err != GP_OK)
        return err;
    struct gp_sim_sample *s = gp_arena_alloc(r->a, n * sizeof *s);
    if (!s)
        return nomem(r);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        double t = i + 1 == n ? end_s : (double)i * step;
        while (j + 1 < r->log.len && r->log.items[j + 1].t_s <= t)
            j++;
        const struct change *c = &r->log.items[j];
        s[i] = c->s;
        s[i].t_s = t;
        s[i].cost_usd = c->cost_usd + c->rate_usd_s * (t - c->t_s);
    }
    r->out->samples = s;
    r->out->nsamples = n;
    return GP_OK;
}

static enum gp_err run_timed(struct run *r)
{
    const struct gp_workload *wl = r->wl;
    const double horizon = r->cfg->horizon_s;
    bool endless_only = wl->nitems > 0;
    enum gp_err err = GP_OK;

    if ((err = dyn_start(r)) != GP_OK)
        return err;
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        rng_keyed(&r->items[i].arrivals, r->cfg->seed, STREAM_ARRIVAL, i, 0, 0, 0);
        r->arrivals_total += it->repeat ? it->repeat : 1;
        if (!item_endless(it))
            endless_only = false;
        if ((err = push_event(r, it->arrival_s, EV_ARRIVAL, (uint32_t)i, 0)) != GP_OK)
            return err;
    }
    if (horizon > 0) { /* a bad sample interval fails before the run, not after */
        double step;
        size_t n;
        if ((err = samples_plan(r, horizon, &step, &n)) != GP_OK)
            return err;
    }
    if ((err = log_state(r)) != GP_OK)
        return err;

    const struct gp_sim_event *top;
    uint64_t same_time = 0; /* cycles in a row at the same instant */
    while ((top = gp_sim_heap_peek(&r->heap)) != NULL) {
        double t = top->t_s;
        if (horizon > 0) {
            if (t > horizon)
                break;
        } else if (!endless_only) {
            if (r->finite_events == 0)
                break;
        } else if (r->finite_events == 0 && t > DAY_S) {
            break;
        }
        same_time = t == r->now_s && r->events > 0 ? same_time + 1 : 0;
        if (same_time > MAX_SAME_TIME)
            return gp_diag_set(r->diag, GP_ELIMIT,
                               "simulation stopped: more than %d scheduling cycles at t = %g s; "
                               "pods end the moment they start and are retried without "
                               "back-off (check durations and the back-off)",
                               MAX_SAME_TIME, t);
        advance(r, t);
        while ((top = gp_sim_heap_peek(&r->heap)) != NULL && top->t_s == t) {
            struct gp_sim_event ev;
            gp_sim_heap_pop(&r->heap, &ev);
            if (!event_take(r, &ev))
                continue; /* stale: its Job failed meanwhile */
            if (++r->events > MAX_EVENTS)
                return gp_diag_set(r->diag, GP_ELIMIT,
                                   "simulation stopped after %d events at t = %g s: pods fail "
                                   "or arrive too often; set a horizon or check durations "
                                   "and back-off",
                                   MAX_EVENTS, t);
            if ((err = apply_event(r, &ev)) != GP_OK)
                return err;
        }
        if ((err = schedule_cycle(r)) != GP_OK)
            return err;
        if ((err = log_state(r)) != GP_OK)
            return err;
        progress(r, timed_fraction(r, endless_only));
    }

    double end = r->now_s;
    if (horizon > 0)
        end = horizon;
    else if (endless_only && end < DAY_S)
        end = DAY_S;
    advance(r, end);

    struct gp_sim_result *out = r->out;
    out->sim_end_s = end;
    out->node_hours = r->node_s / 3600.0;
    out->gpu_hours_total = r->gpu_milli_total_s / GP_GPU_MILLI / 3600.0;
    out->gpu_hours_allocated = r->gpu_milli_alloc_s / GP_GPU_MILLI / 3600.0;
    out->gpu_hours_idle = out->gpu_hours_total - out->gpu_hours_allocated;
    out->cost_usd = r->cost_usd;
    out->timeslice_slowdown = r->ts_work_s > 0 ? r->ts_wall_s / r->ts_work_s : 1;
    for (size_t i = 0; i < r->lpods.len; i++) {
        uint8_t s = r->lpods.items[i].state;
        out->pods_pending_end += s == LP_PENDING || s == LP_BACKOFF;
        out->pods_running_end += s == LP_RUNNING;
    }
    if (r->delays.len > 0) {
        gp_sim_metrics_sort(r->delays.items, r->delays.len);
        out->queue_delays_s =
            gp_arena_memdup(r->a, r->delays.items, r->delays.len * sizeof *r->delays.items);
        if (!out->queue_delays_s)
            return nomem(r);
        out->nqueue_delays = r->delays.len;
        gp_sim_metrics_stats(out->queue_delays_s, out->nqueue_delays, &out->queue_delay_s);
    }
    queues_finish(r);
    if ((err = cost_finish(r, end)) != GP_OK)
        return err;
    return samples_build(r, end);
}

/* ---- static mode ---------------------------------------------------------- */

static uint64_t gpu_request_milli(const struct gp_pod_spec *p)
{
    return (uint64_t)p->gpu_count * p->gpu_milli;
}

/* How many pods an item contributes to the static experiment: the pods it
 * runs at once (timing, repeats and durations are ignored). */
static uint32_t static_count(const struct gp_item *it)
{
    switch (it->kind) {
    case GP_ITEM_DEPLOYMENT:
        return it->replicas;
    case GP_ITEM_JOB: {
        uint32_t target = it->completions ? it->completions : 1;
        uint32_t par = it->parallelism ? it->parallelism : 1;
        return par < target ? par : target;
    }
    default:
        return 1;
    }
}

static double unallocated_pct(const struct run *r)
{
    struct gp_engine_totals t;
    gp_engine_totals(r->e, &t);
    if (t.gpu_milli_total == 0)
        return 0;
    return 100.0 - 100.0 * (double)t.gpu_milli_alloc / (double)t.gpu_milli_total;
}

/* Tells the engine which request shapes to expect: the workload's pod
 * templates, each weighted by the pods it makes, the most popular covering
 * 95 % of pods (the FGD authors' "typical pods" setting). */
#define TARGET_COVERAGE 0.95

static enum gp_err set_target(struct run *r)
{
    size_t n = r->wl->nitems;
    struct gp_pod_spec *specs = malloc((n ? n : 1) * sizeof *specs);
    uint32_t *counts = malloc((n ? n : 1) * sizeof *counts);
    enum gp_err err = GP_OK;
    if (!specs || !counts) {
        err = nomem(r);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const struct gp_item *it = &r->wl->items[i];
        uint64_t c = (uint64_t)static_count(it) * (it->repeat ? it->repeat : 1);
        specs[i] = it->pod;
        counts[i] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    }
    err = gp_engine_set_target(r->e, specs, counts, n, TARGET_COVERAGE);
    if (err != GP_OK)
        gp_diag_set(r->diag, err, "workload: cannot set the target workload: %s", gp_strerror(err));
out:
    free(specs);
    free(counts);
    return err;
}

/* The static mode's arrival sequence (docs/simulator.md): every pod of the
 * workload, shuffled with the seed, then resampled with replacement until
 * the GPU request reaches inflate x cap_milli (or cut to it). */
typedef GP_VEC(const struct gp_pod_spec *) pod_seq;

static enum gp_err static_sequence(const struct gp_sim_config *cfg, const struct gp_workload *wl,
                                   uint64_t cap_milli, pod_seq *pods, struct gp_diag *diag)
{
    struct gp_rng rng;
    uint64_t total_milli = 0, positive = 0;
    for (size_t i = 0; i < wl->nitems; i++) {
        const struct gp_item *it = &wl->items[i];
        for (uint32_t c = static_count(it); c > 0; c--) {
            if (pods->len >= MAX_STATIC_PODS || GP_VEC_PUSH(pods, &it->pod) != 0)
                return gp_diag_set(diag, GP_ENOMEM, "simulator: out of memory");
            total_milli += gpu_request_milli(&it->pod);
            positive += gpu_request_milli(&it->pod) > 0;
        }
    }
    /* shuffle (Fisher-Yates) */
    rng_keyed(&rng, cfg->seed, STREAM_SHUFFLE, 0, 0, 0, 0);
    for (size_t i = pods->len; i > 1; i--) {
        size_t j = (size_t)gp_rng_below(&rng, i);
        const struct gp_pod_spec *tmp = pods->items[i - 1];
        pods->items[i - 1] = pods->items[j];
        pods->items[j] = tmp;
    }
    /* inflate (or deflate) to inflate x capacity */
    const size_t n0 = pods->len;
    if (cfg->inflate <= 0 || cap_milli == 0 || n0 == 0)
        return GP_OK;
    const double target = cfg->inflate * (double)cap_milli;
    if ((double)total_milli > target) {
        while (pods->len > 0 && (double)total_milli > target)
            total_milli -= gpu_request_milli(pods->items[--pods->len]);
        return GP_OK;
    }
    while (positive > 0) {
        const struct gp_pod_spec *p = pods->items[gp_rng_below(&rng, n0)];
        if ((double)(total_milli + gpu_request_milli(p)) > target)
            break;
        if (pods->len >= MAX_STATIC_PODS)
            return gp_diag_set(diag, GP_ELIMIT,
                               "static mode: more than %d pods needed to reach %g x the "
                               "cluster's GPUs",
                               MAX_STATIC_PODS, cfg->inflate);
        if (GP_VEC_PUSH(pods, p) != 0)
            return gp_diag_set(diag, GP_ENOMEM, "simulator: out of memory");
        total_milli += gpu_request_milli(p);
    }
    return GP_OK;
}

enum gp_err gp_sim_static_sequence(const struct gp_sim_config *cfg,
                                   const struct gp_cluster *cluster,
                                   const struct gp_workload *workload, struct gp_arena *a,
                                   const struct gp_pod_spec ***out, size_t *n, struct gp_diag *diag)
{
    uint64_t cap_milli = 0;
    for (size_t i = 0; i < cluster->nnodes; i++)
        cap_milli += (uint64_t)cluster->nodes[i].gpu_count * GP_GPU_MILLI;
    pod_seq pods = {0};
    enum gp_err err = static_sequence(cfg, workload, cap_milli, &pods, diag);
    *out = NULL;
    *n = 0;
    if (err == GP_OK && pods.len > 0) {
        *out = gp_arena_memdup(a, pods.items, pods.len * sizeof pods.items[0]);
        if (!*out)
            err = gp_diag_set(diag, GP_ENOMEM, "simulator: out of memory");
        else
            *n = pods.len;
    }
    GP_VEC_FREE(&pods);
    return err;
}

static enum gp_err run_static(struct run *r)
{
    struct gp_sim_result *out = r->out;
    pod_seq pods = {0};
    enum gp_err err = GP_OK;
    struct gp_engine_totals tot;
    gp_engine_totals(r->e, &tot);
    const uint64_t cap_milli = tot.gpu_milli_total;
    if ((err = static_sequence(r->cfg, r->wl, cap_milli, &pods, r->diag)) != GP_OK)
        goto done;
    uint64_t total_milli = 0;
    for (size_t i = 0; i < pods.len; i++)
        total_milli += gpu_request_milli(pods.items[i]);

    /* the curve: one point per integer % of arrived GPU request */
    size_t xmax = 0;
    if (cap_milli > 0) {
        double top = r->cfg->inflate > 0 ? r->cfg->inflate * 100.0
                                         : 100.0 * (double)total_milli / (double)cap_milli;
        xmax = (size_t)floor(top + 1e-9);
        out->ncurve = xmax + 1;
        out->curve = gp_arena_alloc(r->a, out->ncurve * sizeof *out->curve);
        if (!out->curve) {
            err = nomem(r);
            goto done;
        }
    }
    size_t next_x = 0;
    bool have100 = false;
    uint64_t arrived = 0;
    double unalloc = unallocated_pct(r);
    for (size_t i = 0;; i++) {
        /* record the state after i pods */
        while (out->curve && next_x <= xmax && arrived * 100 >= (uint64_t)next_x * cap_milli) {
            out->curve[next_x].arrived_pct = (double)next_x;
            out->curve[next_x].unallocated_pct = unalloc;
            next_x++;
        }
        if (!have100 && cap_milli > 0 && arrived >= cap_milli) {
            out->unallocated_gpu_pct_at_100 = unalloc;
            have100 = true;
        }
        if (i == pods.len)
            break;
        const struct gp_pod_spec *p = pods.items[i];
        uint32_t id;
        struct gp_decision d;
        if ((err = gp_engine_pod_add(r->e, p, 0, &id)) != GP_OK) {
            err = gp_diag_set(r->diag, err, "static mode: the engine refused pod %s: %s",
                              p->name ? p->name : "unnamed", gp_strerror(err));
            goto done;
        }
        if ((err = gp_engine_schedule_pod(r->e, id, &d)) != GP_OK) {
            err = gp_diag_set(r->diag, err, "static mode: scheduling pod %s failed: %s",
                              p->name ? p->name : "unnamed", gp_strerror(err));
            goto done;
        }
        out->pods_submitted++;
        if (d.kind == GP_DECISION_BIND) {
            out->pods_scheduled++;
            out->binds++;
        } else {
            out->pods_failed++;
            enum gp_filter main_reason = gp_explain_main(&d.explain);
            if (main_reason != GP_FILTER_COUNT)
                out->unschedulable[main_reason]++;
            if ((err = gp_engine_pod_finished(r->e, id)) != GP_OK) {
                err = gp_diag_set(r->diag, err, "static mode: removing pod %s failed: %s",
                                  p->name ? p->name : "unnamed", gp_strerror(err));
                goto done;
            }
        }
        arrived += gpu_request_milli(p);
        unalloc = unallocated_pct(r);
        progress(r, (double)(i + 1) / (double)pods.len);
    }
    for (; out->curve && next_x <= xmax; next_x++) {
        out->curve[next_x].arrived_pct = (double)next_x;
        out->curve[next_x].unallocated_pct = unalloc;
    }
    if (!have100)
        out->unallocated_gpu_pct_at_100 = unalloc;
    out->pods_running_end = out->pods_scheduled;
done:
    GP_VEC_FREE(&pods);
    return err;
}

/* ---- entry point ---------------------------------------------------------- */

enum gp_err gp_sim_run(const struct gp_sim_config *cfg, const struct gp_cluster *cluster,
                       const struct gp_workload *workload, struct gp_arena *a,
                       struct gp_sim_result *out, struct gp_diag *diag)
{
    if (!cfg || !cluster || !workload || !a || !out)
        return gp_diag_set(diag, GP_EINVALID,
                           "simulator: missing configuration, cluster, "
                           "workload, arena or result");
    memset(out, 0, sizeof *out);
    out->mode = cfg->mode;
    out->policy = cfg->policy ? cfg->policy->name : "none";
    out->seed = cfg->seed;
    if ((cluster->nnodes && !cluster->nodes) || (workload->nitems && !workload->items))
        return gp_diag_set(diag, GP_EINVALID, "simulator: cluster or workload without its array");
    enum gp_err err = check_inputs(cfg, cluster, workload, diag);
    if (err != GP_OK)
        return err;

    struct run r;
    memset(&r, 0, sizeof r);
    r.cfg = cfg;
    r.cluster = cluster;
    r.wl = workload;
    r.a = a;
    r.out = out;
    r.diag = diag;
    r.progress_pct = -1;
    r.wake_s = INFINITY;
    gp_sim_heap_init(&r.heap);
    gp_coloc_init(&r.coloc);

    r.e = gp_engine_new(cfg->policy, cfg->seed);
    if (!r.e) {
        err = gp_diag_set(diag, GP_ENOMEM,
                          "cannot start the engine: out of memory, or policy %s failed to "
                          "initialise",
                          out->policy);
        goto done;
    }
    if ((err = gp_engine_set_order(r.e, cfg->order, cfg->backfill)) != GP_OK) {
        err = gp_diag_set(diag, err, "simulator: unknown queue order %d", (int)cfg->order);
        goto done;
    }
    r.items = calloc(workload->nitems ? workload->nitems : 1, sizeof *r.items);
    if (!r.items) {
        err = nomem(&r);
        goto done;
    }
    if ((err = topo_init(&r)) != GP_OK || (err = add_nodes(&r)) != GP_OK ||
        (err = set_target(&r)) != GP_OK || (err = plan_queues(&r)) != GP_OK)
        goto done;
    struct gp_engine_totals t;
    gp_engine_totals(r.e, &t);
    out->nodes = t.nodes_ready;
    out->gpus = t.gpus;

    if (cfg->mode == GP_SIM_TIMED && (err = dyn_init(&r)) != GP_OK)
        goto done;
    err = cfg->mode == GP_SIM_STATIC ? run_static(&r) : run_timed(&r);
    if (err == GP_OK && cfg->progress && r.progress_pct < 100)
        cfg->progress(cfg->progress_ctx, 1.0);
done:
    gp_engine_free(r.e);
    gp_sim_heap_free(&r.heap);
    gp_coloc_free(&r.coloc);
    free(r.items);
    GP_VEC_FREE(&r.insts);
    GP_VEC_FREE(&r.lpods);
    GP_VEC_FREE(&r.epods);
    GP_VEC_FREE(&r.dec);
    GP_VEC_FREE(&r.delays);
    GP_VEC_FREE(&r.jcts);
    GP_VEC_FREE(&r.log);
    for (size_t i = 0; i < r.nqueues; i++) {
        GP_VEC_FREE(&r.queues[i].delays);
        GP_VEC_FREE(&r.queues[i].jcts);
    }
    free(r.queues);
    GP_VEC_FREE(&r.snodes);
    GP_VEC_FREE(&r.enode_snode);
    GP_VEC_FREE(&r.unsched);
    GP_VEC_FREE(&r.untried);
    GP_VEC_FREE(&r.group_inst);
    GP_VEC_FREE(&r.gangs);
    for (size_t i = 0; r.pools && i < r.npools; i++)
        free(r.pools[i].dlive);
    free(r.pools);
    gp_cost_free(&r.cost);
    return err;
}
