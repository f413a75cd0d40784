/* nodes.c - the cluster's nodes in a run: topology domains and their
 * labels, the nodes the run starts with (in static mode in a seeded
 * order), and in timed mode the pools' dynamics: requested nodes that
 * boot, idle nodes removed after the cool-down, spot notices (Poisson or
 * recorded) that drain a node and end with its pods evicted, nodes
 * replaced at their pool's maximum lifetime, and the billed time of a node
 * that leaves rounded as its provider bills it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/internal.h"

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
enum gp_err gp_sim_nodes_topo_init(struct run *r)
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
        return gp_sim_nomem(r);
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
            return gp_sim_nomem(r);
        for (uint32_t d = 0; d < n; d++)
            if (!(r->topo[i].values[d] = gp_arena_printf(r->a, "%s-d%u", ps->name, d)))
                return gp_sim_nomem(r);
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
            return gp_sim_nomem(r);
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
enum gp_err gp_sim_nodes_add_initial(struct run *r)
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
        gp_sim_rng_keyed(&rng, r->cfg->seed, STREAM_NODE_ORDER, 0, 0, 0, 0);
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

/* What a node that lived life_s is billed beyond it: its time rounded up
 * to the pool's billing granularity, and at least the billing minimum
 * (GKE's Compute Engine: per second, one minute at least). */
static double billing_extra_s(const struct gp_pool_spec *ps, double life_s)
{
    if (!ps)
        return 0;
    double billed = life_s;
    if (ps->billing_granularity_s > 0)
        billed = ceil(life_s / ps->billing_granularity_s - 1e-9) * ps->billing_granularity_s;
    if (billed < ps->billing_minimum_s)
        billed = ps->billing_minimum_s;
    return billed > life_s ? billed - life_s : 0;
}

void gp_sim_nodes_bill_close(struct run *r, uint32_t sni, double end_s)
{
    const struct snode *sn = &r->snodes.items[sni];
    double extra_usd = billing_extra_s(r->pools[sn->pool].spec, end_s - sn->since_s) *
                       node_price_h(sn->spec) / 3600.0;
    if (extra_usd > 0 && isfinite(extra_usd)) {
        r->cost.pools[sn->pool].rounding_usd += extra_usd;
        r->cost.pools[sn->pool].billed_usd += extra_usd;
        r->cost_usd += extra_usd;
        r->out->billing_rounding_usd += extra_usd;
    }
}

/* The node leaves the bill (its pods are gone). */
static void node_gone(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    struct pool_dyn *pd = &r->pools[sn->pool];
    gp_cost_node(&r->cost, sn->pool, sn->since_s, r->now_s, node_price_h(sn->spec),
                 sn->spec->gpu_count);
    gp_sim_nodes_bill_close(r, sni, r->now_s);
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
        return gp_sim_nomem(r);
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
enum gp_err gp_sim_nodes_request(struct run *r, uint32_t p, uint32_t domain)
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
        return gp_sim_nomem(r);
    spec->name = gp_arena_printf(r->a, "%s-%u", pd->spec->name, pd->next_name++);
    if (!spec->name)
        return gp_sim_nomem(r);
    uint32_t sni;
    enum gp_err err = snode_add(r, spec, p, domain, SN_BOOTING, &sni);
    if (err != GP_OK)
        return err;
    r->snodes.items[sni].requested = 1;
    r->price_per_s += node_price_h(spec) / 3600.0;
    r->cost.pools[p].requested++;
    r->out->nodes_requested++;
    double t = r->now_s + pd->spec->boot_s;
    err = gp_sim_push_event(r, t, EV_BOOT, sni, 0);
    if (err == GP_OK && pd->spec->max_lifetime_s > 0) /* its age counts from the request */
        err = gp_sim_push_event(r, r->now_s + pd->spec->max_lifetime_s, EV_EXPIRE, sni, 0);
    return err;
}

/* An idle ready node of an autoscaled pool may go after the cool-down. */
void gp_sim_nodes_idle(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    sn->idle_since_s = r->now_s;
    sn->idle_token++;
    if (sn->state != SN_READY || !r->pools[sn->pool].dynamic)
        return;
    double t = r->now_s + r->cluster->autoscaler.scale_down_unneeded_s;
    /* out of memory: the node just stays (the next event reports it) */
    (void)gp_sim_push_event(r, t, EV_IDLE, sni, sn->idle_token);
}

/* Draws when a ready spot node gets its notice (Poisson: exponential time). */
static enum gp_err spot_arm(struct run *r, uint32_t sni)
{
    const struct snode *sn = &r->snodes.items[sni];
    const struct gp_pool_spec *ps = r->pools[sn->pool].spec;
    if (!ps || !ps->spot || !(ps->spot_rate_per_node_hour > 0))
        return GP_OK;
    struct gp_rng rng;
    gp_sim_rng_keyed(&rng, r->cfg->seed, STREAM_SPOT, sn->pool, sni, 0, 0);
    double ttf = -log1p(-gp_rng_unit(&rng)) * 3600.0 / ps->spot_rate_per_node_hour;
    double t = r->now_s + ttf;
    return isfinite(t) ? gp_sim_push_event(r, t, EV_SPOT_NOTICE, sni, 0) : GP_OK;
}

enum gp_err gp_sim_nodes_on_boot(struct run *r, uint32_t sni)
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
            return gp_sim_nomem(r);
    r->enode_snode.items[id] = sni;
    sn = &r->snodes.items[sni];
    sn->enode = id;
    sn->state = SN_READY;
    r->as_dirty = true;
    if (sn->pods == 0)
        gp_sim_nodes_idle(r, sni);
    return spot_arm(r, sni);
}

enum gp_err gp_sim_nodes_on_idle(struct run *r, uint32_t sni, uint32_t token)
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

/* Drains ready node sni: it takes no new pods and no longer counts against
 * its pool's size. */
static enum gp_err drain(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
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
    r->as_dirty = true;
    return GP_OK;
}

/* A drained node's replacement, requested at once (in its topology
 * domain) when it ran pods or the pool would fall below its minimum. */
static enum gp_err replace(struct run *r, uint32_t pool, uint32_t domain, bool had_pods)
{
    const struct pool_dyn *pd = &r->pools[pool];
    if ((had_pods || pd->live < pd->spec->min_count) && pd->live < pd->spec->max_count)
        return gp_sim_nodes_request(r, pool, domain);
    return GP_OK;
}

/* A spot node's notice: it is drained (no new pods; its pods run on until
 * the notice ends) and replaced. */
enum gp_err gp_sim_nodes_spot_notice(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    if (sn->state != SN_READY)
        return GP_OK;
    uint32_t pool = sn->pool, domain = sn->domain;
    bool had_pods = sn->pods > 0;
    enum gp_err err = drain(r, sni);
    if (err != GP_OK)
        return err;
    r->cost.pools[pool].interruptions++;
    r->out->spot_interruptions++;
    double end_s = r->now_s + r->pools[pool].spec->spot_notice_s;
    if ((err = gp_sim_push_event(r, end_s, EV_SPOT_END, sni, 0)) != GP_OK)
        return err;
    return replace(r, pool, domain, had_pods);
}

/* A recorded interruption: one ready node of the pool, drawn with the seed.
 * When the pool has no ready node then (none at all, or only booting or
 * draining ones) it is dropped - there is nothing of ours to reclaim - and
 * counted; it does not wait for the next node. */
enum gp_err gp_sim_nodes_on_spot_series(struct run *r, uint32_t pool, uint32_t k)
{
    const struct gp_pool_spec *ps = r->pools[pool].spec;
    uint32_t n = 0, pick = NONE;
    struct gp_rng rng;
    gp_sim_rng_keyed(&rng, r->cfg->seed, STREAM_SPOT, pool, k, 1, 0);
    for (size_t i = 0; i < r->snodes.len; i++) /* reservoir sampling over ready nodes */
        if (r->snodes.items[i].pool == pool && r->snodes.items[i].state == SN_READY &&
            gp_rng_below(&rng, ++n) == 0)
            pick = (uint32_t)i;
    if (pick == NONE) {
        r->cost.pools[pool].interruptions_missed++;
        r->out->spot_interruptions_missed++;
    }
    enum gp_err err = pick != NONE ? gp_sim_nodes_spot_notice(r, pick) : GP_OK;
    if (err == GP_OK && (size_t)k + 1 < ps->nspot_times)
        err = gp_sim_push_event(r, ps->spot_times_s[k + 1], EV_SPOT_SERIES, pool, k + 1);
    return err;
}

/* A draining node's pods are evicted (a gang member takes its whole gang:
 * every running member restarts from its last checkpoint) and the node
 * leaves. */
static enum gp_err evict_and_remove(struct run *r, uint32_t sni, uint8_t cause)
{
    enum gp_err err = GP_OK;
    uint32_t lp;
    while (err == GP_OK && (lp = r->snodes.items[sni].head) != NONE) {
        const struct inst *in = inst_at(r, lpod_at(r, lp)->inst);
        uint32_t first = in->group ? in->head : lp;
        for (uint32_t m = first; err == GP_OK && m != NONE;) {
            struct lpod *l = lpod_at(r, m);
            uint32_t next = in->group ? l->next : NONE;
            if (l->state == LP_RUNNING) {
                err = gp_engine_pod_finished(r->e, l->epod);
                if (err != GP_OK)
                    return gp_diag_set(r->diag, err, "simulator: engine refused to stop pod %u",
                                       l->epod);
                err = gp_sim_runs_evict(r, m, GP_EVICT_NONE, cause);
            }
            in = inst_at(r, lpod_at(r, lp)->inst);
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

/* The notice is over: the pods are evicted and the node leaves. */
enum gp_err gp_sim_nodes_on_spot_end(struct run *r, uint32_t sni)
{
    if (r->snodes.items[sni].state != SN_DRAINING)
        return GP_OK;
    return evict_and_remove(r, sni, EVICT_BY_SPOT);
}

/* Karpenter (EKS Auto Mode) expires a node as a forced disruption: the
 * node is drained and deleted without waiting for its replacement, and
 * its pods are evicted (https://karpenter.sh/docs/concepts/disruption/,
 * "Forceful"). A node already draining (a spot notice) goes its way. */
enum gp_err gp_sim_nodes_on_expire(struct run *r, uint32_t sni)
{
    struct snode *sn = &r->snodes.items[sni];
    if (sn->state != SN_READY)
        return GP_OK;
    uint32_t pool = sn->pool, domain = sn->domain;
    bool had_pods = sn->pods > 0;
    enum gp_err err = drain(r, sni);
    if (err != GP_OK)
        return err;
    r->cost.pools[pool].expirations++;
    r->out->node_expirations++;
    if ((err = replace(r, pool, domain, had_pods)) != GP_OK)
        return err;
    return evict_and_remove(r, sni, EVICT_BY_EXPIRY);
}

/* The pools' rows (the cluster's pools, then one for nodes of no known
 * pool when there are such), what a new node of each is, and a sim node
 * for every node the run starts with (timed mode; engine ids in order). */
enum gp_err gp_sim_nodes_init(struct run *r)
{
    const struct gp_cluster *c = r->cluster;
    size_t np = c->npools;
    bool orphans = false;
    uint32_t *pool_of = malloc((c->nnodes ? c->nnodes : 1) * sizeof *pool_of);
    if (!pool_of)
        return gp_sim_nomem(r);
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
        err = gp_sim_nomem(r);
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
            err = gp_sim_nomem(r);
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
        cp->limits =
            ps->max_lifetime_s > 0 || ps->billing_granularity_s > 0 || ps->billing_minimum_s > 0;
        r->out->provider_limits |= cp->limits;
    }
    for (size_t i = 0; i < np && r->dynamic; i++) { /* templates: a pool of one node, expanded */
        struct gp_pool_spec *one = gp_arena_alloc(r->a, sizeof *one);
        struct gp_cluster tmp = {.name = c->name, .source = c->source, .pools = one, .npools = 1};
        if (!one) {
            err = gp_sim_nomem(r);
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
            err = gp_sim_nomem(r);
            goto out;
        }
    }
    r->cp_per_s = c->control_plane_per_hour_usd > 0 ? c->control_plane_per_hour_usd / 3600.0 : 0;
out:
    free(pool_of);
    return err;
}

/* A node the run starts with, in a pool with a maximum lifetime, is of a
 * seeded age drawn uniformly below it (a fleet in its steady state, its
 * replacements spread over the lifetime rather than all at once). */
static enum gp_err expiry_arm(struct run *r, uint32_t sni)
{
    const struct snode *sn = &r->snodes.items[sni];
    const struct gp_pool_spec *ps = r->pools[sn->pool].spec;
    if (!ps || !(ps->max_lifetime_s > 0))
        return GP_OK;
    struct gp_rng rng;
    gp_sim_rng_keyed(&rng, r->cfg->seed, STREAM_NODE_AGE, sn->pool, sni, 0, 0);
    double left_s = ps->max_lifetime_s * (1.0 - gp_rng_unit(&rng));
    return gp_sim_push_event(r, r->now_s + left_s, EV_EXPIRE, sni, 0);
}

/* Arms the dynamics at time 0: idle timers of autoscaled pools, spot
 * interruptions, recorded series. */
enum gp_err gp_sim_nodes_start(struct run *r)
{
    enum gp_err err = GP_OK;
    for (size_t i = 0; err == GP_OK && r->dynamic && i < r->snodes.len; i++) {
        gp_sim_nodes_idle(r, (uint32_t)i);
        err = spot_arm(r, (uint32_t)i);
        if (err == GP_OK)
            err = expiry_arm(r, (uint32_t)i);
    }
    for (size_t p = 0; err == GP_OK && p < r->npools; p++) {
        const struct gp_pool_spec *ps = r->pools[p].spec;
        if (ps && ps->spot && ps->nspot_times > 0)
            err = gp_sim_push_event(r, ps->spot_times_s[0], EV_SPOT_SERIES, (uint32_t)p, 0);
    }
    /* a pool below its minimum (cannot happen from the YAML) grows now */
    for (size_t p = 0; err == GP_OK && p < r->npools; p++)
        while (err == GP_OK && r->pools[p].dynamic && r->pools[p].has_tmpl &&
               r->pools[p].live < r->pools[p].spec->min_count)
            err = gp_sim_nodes_request(r, (uint32_t)p, NONE);
    return err;
}
