/* scale.c - the autoscaler's driver: which pending pods new nodes could
 * help (those found unschedulable and, under strict orders, the ones
 * behind a blocked head), the pools and booting nodes as the planner
 * (engine/autoscale.h) sees them, and the nodes it asks for requested. */
#include <stdlib.h>

#include "sim/internal.h"

/* The pools as the autoscaler sees them; max 0 for pools that cannot grow.
 * at_max: every pool empty with room for its maximum (could a gang ever
 * fit?). */
static enum gp_err as_pools(struct run *r, bool at_max, struct gp_autoscale_pool **out)
{
    struct gp_autoscale_pool *ap = calloc(r->npools ? r->npools : 1, sizeof *ap);
    if (!ap)
        return gp_sim_nomem(r);
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
bool gp_sim_scale_gang_fits_max(struct run *r, uint32_t ii)
{
    struct inst *in = inst_at(r, ii);
    if (!r->dynamic || in->maxfit)
        return in->maxfit == 1;
    in->maxfit = 2;
    struct gp_autoscale_pool *ap = NULL;
    GP_VEC(uint32_t) pods = {0};
    uint32_t *add = calloc(r->npools ? r->npools : 1, sizeof *add);
    size_t placed = 0;
    bool ok = add && as_pools(r, true, &ap) == GP_OK;
    for (uint32_t lp = in->head; ok && lp != NONE; lp = lpod_at(r, lp)->next)
        if (lpod_at(r, lp)->state == LP_PENDING)
            ok = GP_VEC_PUSH(&pods, lpod_at(r, lp)->epod) == 0;
    struct gp_autoscale_input ain = {.pools = ap,
                                     .npools = r->npools,
                                     .pods = pods.items,
                                     .npods = pods.len,
                                     .gangs = r->gangs.items,
                                     .ngangs = r->gangs.len};
    if (ok && gp_autoscale_plan(r->e, &ain, add, NULL, NULL, &placed) == GP_OK &&
        placed == pods.len && placed > 0)
        inst_at(r, ii)->maxfit = 1;
    free(ap);
    free(add);
    GP_VEC_FREE(&pods);
    return inst_at(r, ii)->maxfit == 1;
}

/* Whether a pending pod the cycle did not reach (strict orders) is one new
 * nodes could help: not a gang member whose gang lacks members, nor a pod
 * whose queue (or an ancestor) has a GPU, CPU or memory limit that it,
 * with the pods before it in the list, would exceed (extra: per queue,
 * what those ask, updated here). */
static bool untried_wanted(struct run *r, const struct gp_pod *p, int64_t (*extra)[3])
{
    const struct lpod *l = lpod_at(r, epod_at(r, p->id)->lpod);
    if (l->state != LP_PENDING || l->epod != p->id)
        return false;
    if (p->spec.group) {
        const struct inst *in = inst_at(r, r->group_inst.items[p->spec.group - 1]);
        const struct gp_item *it = &r->wl->items[in->item];
        if (in->nofit) /* it can never start: no node helps */
            return false;
        uint32_t have = 0;
        for (uint32_t m = in->head; m != NONE; m = lpod_at(r, m)->next)
            have += lpod_at(r, m)->state == LP_PENDING || lpod_at(r, m)->state == LP_RUNNING;
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
    if (!gp_sim_strict_order(r) || gp_engine_pending_count(r->e) == 0)
        return GP_OK;
    size_t n = gp_engine_pending_count(r->e);
    if (GP_VEC_RESERVE(&r->untried, n) != 0)
        return gp_sim_nomem(r);
    n = gp_engine_pending(r->e, r->untried.items, r->untried.cap);
    if (n > r->untried.cap)
        return gp_diag_set(r->diag, GP_ESTATE, "simulator: the engine's pending list grew");
    size_t nq = gp_engine_queue_count(r->e);
    int64_t(*extra)[3] = calloc(nq ? nq : 1, sizeof *extra);
    if (!extra)
        return gp_sim_nomem(r);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r->untried.items[i];
        const struct gp_pod *p = gp_engine_pod(r->e, id);
        if (!p || !epod_at(r, id) || epod_at(r, id)->unsched ||
            epod_at(r, id)->tried > r->cycle_mark || !untried_wanted(r, p, extra))
            continue;
        r->untried.items[k++] = id;
    }
    free(extra);
    r->untried.len = k;
    for (size_t i = 0; i < k; i++)
        if (GP_VEC_PUSH(&r->unsched, r->untried.items[i]) != 0)
            return gp_sim_nomem(r);
    return GP_OK;
}

/* Scale-up: the pending pods found unschedulable (and, under strict
 * orders, those the cycle did not reach), packed onto booting and new
 * nodes (engine/autoscale.h); the nodes it asks for are requested. */
enum gp_err gp_sim_scale_run(struct run *r)
{
    r->as_dirty = false;
    r->as_epods = r->epods.n;
    size_t k = 0;
    for (size_t i = 0; i < r->unsched.len; i++) {
        uint32_t id = r->unsched.items[i];
        struct epod *ep = epod_at(r, id);
        const struct lpod *l = ep ? lpod_at(r, ep->lpod) : NULL;
        if (l && l->state == LP_PENDING && l->epod == id)
            r->unsched.items[k++] = id;
        else if (ep) /* NULL: forgotten */
            ep->unsched = 0;
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
    err = add ? as_pools(r, false, &ap) : gp_sim_nomem(r);
    size_t room = 0;
    for (size_t p = 0; err == GP_OK && p < r->npools; p++)
        room += ap[p].max > ap[p].live ? ap[p].max - ap[p].live : 0;
    if (err == GP_OK && !(nodes = malloc((room ? room : 1) * sizeof *nodes)))
        err = gp_sim_nomem(r);
    for (size_t i = 0; err == GP_OK && i < r->snodes.len; i++) {
        const struct snode *sn = &r->snodes.items[i];
        if (sn->state == SN_BOOTING && r->pools[sn->pool].has_tmpl &&
            (GP_VEC_PUSH(&booting, sn->spec) != 0 || GP_VEC_PUSH(&bpool, sn->pool) != 0))
            err = gp_sim_nomem(r);
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
        err = gp_sim_nodes_request(
            r, nodes[i].pool, nodes[i].domain == GP_AUTOSCALE_NO_DOMAIN ? NONE : nodes[i].domain);
    r->as_dirty = false; /* the requests themselves change nothing to look at */
    free(ap);
    free(add);
    free(nodes);
    GP_VEC_FREE(&booting);
    GP_VEC_FREE(&bpool);
    return err;
}
