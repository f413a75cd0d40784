/* node.c - nodes and what binds do to them: a node probed, added,
 * drained or removed; a pod's CPU, memory and GPUs taken from a node and
 * given back, with the node's summaries kept up to date; the commit and
 * the release of a pod, with its queue's use and the cluster totals. */
#include "engine/internal.h"

#include <string.h>

void gp_eng_node_summarise(struct gp_node *n)
{
    n->gpus_whole_free = 0;
    n->gpu_milli_free = 0;
    n->gpu_milli_max_free = 0;
    for (uint32_t g = 0; g < n->spec.gpu_count; g++) {
        uint32_t m = n->gpu[g].milli_free;
        n->gpus_whole_free += m == GP_GPU_MILLI && n->gpu[g].pods == 0;
        n->gpu_milli_free += m;
        if (m > n->gpu_milli_max_free)
            n->gpu_milli_max_free = m;
    }
}

enum gp_err gp_engine_node_probe(struct gp_engine *e, const struct gp_node_spec *spec,
                                 struct gp_node *out)
{
    if (spec->gpu_count > GP_MAX_GPUS_PER_NODE || spec->cpu_milli < 0 || spec->mem_mib < 0 ||
        spec->nscalars > GP_MAX_SCALARS)
        return GP_EINVALID;
    struct gp_node n;
    memset(&n, 0, sizeof n);
    n.spec = *spec;
    n.id = NONE;
    n.state = GP_NODE_READY;
    n.cpu_free_milli = spec->cpu_milli;
    n.mem_free_mib = spec->mem_mib;
    n.pods_cap = spec->pods_limited ? spec->pods_max : UINT32_MAX;
    for (size_t i = 0; i < spec->nscalars; i++)
        n.scalar_free[i] = spec->scalars[i].amount;
    if (spec->gpu_count > 0) {
        int m = gp_eng_model_intern(e, spec->gpu_model ? spec->gpu_model : "");
        if (m < 0)
            return GP_ELIMIT;
        n.model = (uint32_t)m;
    }
    for (uint32_t g = 0; g < spec->gpu_count; g++) {
        n.gpu[g].milli_free = GP_GPU_MILLI;
        n.gpu[g].mem_free_mib = spec->gpu_mem_mib;
    }
    gp_share_node_init(&n);
    gp_eng_node_summarise(&n);
    *out = n;
    return GP_OK;
}

enum gp_err gp_engine_node_add(struct gp_engine *e, const struct gp_node_spec *spec,
                               uint32_t *out_id)
{
    struct gp_node n;
    enum gp_err err = gp_engine_node_probe(e, spec, &n);
    if (err != GP_OK)
        return err;
    n.id = (uint32_t)e->nodes.len;
    if (GP_VEC_PUSH(&e->nodes, n) != 0)
        return GP_ENOMEM;
    if (gp_eng_topo_node_added(e, &e->nodes.items[n.id]) != GP_OK) {
        e->nodes.len--;
        return GP_ENOMEM;
    }
    gp_eng_index_touch(e, n.id);
    e->totals.nodes_ready++;
    e->totals.gpus += spec->gpu_count;
    e->totals.gpu_milli_total += (uint64_t)spec->gpu_count * GP_GPU_MILLI;
    e->totals.cpu_milli_total += spec->cpu_milli;
    e->totals.mem_mib_total += spec->mem_mib;
    e->generation++;
    e->victim_gen++;
    gp_eng_state_bump(e);
    e->topo_ver++;
    if (out_id)
        *out_id = n.id;
    return GP_OK;
}

enum gp_err gp_engine_node_drain(struct gp_engine *e, uint32_t id)
{
    if (id >= e->nodes.len || e->nodes.items[id].state != GP_NODE_READY)
        return GP_EINVALID;
    e->nodes.items[id].state = GP_NODE_DRAINING;
    gp_eng_index_touch(e, id);
    e->victim_gen++;
    gp_eng_state_bump(e);
    e->topo_ver++;
    return GP_OK;
}

enum gp_err gp_engine_node_remove(struct gp_engine *e, uint32_t id)
{
    if (id >= e->nodes.len || e->nodes.items[id].state == GP_NODE_GONE)
        return GP_EINVALID;
    struct gp_node *n = &e->nodes.items[id];
    if (n->pods > 0)
        return GP_ESTATE;
    gp_eng_topo_node_gone(e, n);
    n->state = GP_NODE_GONE;
    gp_eng_index_touch(e, id);
    gp_eng_state_bump(e);
    e->topo_ver++;
    e->totals.nodes_ready--;
    e->totals.gpus -= n->spec.gpu_count;
    e->totals.gpu_milli_total -= (uint64_t)n->spec.gpu_count * GP_GPU_MILLI;
    e->totals.cpu_milli_total -= n->spec.cpu_milli;
    e->totals.mem_mib_total -= n->spec.mem_mib;
    return GP_OK;
}

/* Takes a pod's CPU, memory and GPUs (as picked) from a node value;
 * returns true when its declared GPU memory did not fit (time-slicing
 * with oversubscription). */
bool gp_eng_node_take(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    n->cpu_free_milli -= p->spec.cpu_milli;
    n->mem_free_mib -= p->spec.mem_mib;
    n->pods++;
    if (p->spec.nscalars)
        gp_eng_scalars_take(n, p, 1);
    if (n->spec.sharing) {
        bool over = gp_share_take(n, p, pick);
        gp_eng_node_summarise(n);
        return over;
    }
    bool whole = p->spec.gpu_milli == GP_GPU_MILLI;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        struct gp_gpu *g = &n->gpu[pick->gpu[i]];
        g->milli_free -= p->spec.gpu_milli;
        /* a whole GPU is exclusive: its memory goes with it */
        g->mem_free_mib = whole ? 0 : g->mem_free_mib - p->spec.gpu_mem_mib;
        g->pods++;
    }
    gp_eng_node_summarise(n);
    return false;
}

/* Gives back what node_take took. */
void gp_eng_node_give(struct gp_node *n, const struct gp_pod *p, const struct gp_pick *pick)
{
    n->cpu_free_milli += p->spec.cpu_milli;
    n->mem_free_mib += p->spec.mem_mib;
    n->pods--;
    if (p->spec.nscalars)
        gp_eng_scalars_take(n, p, -1);
    if (n->spec.sharing) {
        gp_share_give(n, p, pick);
        gp_eng_node_summarise(n);
        return;
    }
    bool whole = p->spec.gpu_milli == GP_GPU_MILLI;
    for (uint32_t i = 0; i < pick->ngpus; i++) {
        struct gp_gpu *g = &n->gpu[pick->gpu[i]];
        g->milli_free += p->spec.gpu_milli;
        g->mem_free_mib = whole ? n->spec.gpu_mem_mib : g->mem_free_mib + p->spec.gpu_mem_mib;
        g->pods--;
    }
    gp_eng_node_summarise(n);
}

bool gp_engine_node_take_alone(const struct gp_engine *e, struct gp_node *n, const struct gp_pod *p)
{
    struct gp_pick pick;
    if (filter_own(e, n, p) != GP_FILTER_COUNT || gp_engine_pick_default(n, p, &pick) != 0)
        return false;
    gp_eng_node_take(n, p, &pick);
    return true;
}

bool gp_engine_node_take(const struct gp_engine *e, struct gp_node *n, const struct gp_pod *p)
{
    struct gp_pick pick;
    if (filter_fit(e, n, p) != GP_FILTER_COUNT || gp_engine_pick_default(n, p, &pick) != 0)
        return false;
    gp_eng_node_take(n, p, &pick);
    return true;
}

void gp_eng_commit(struct gp_engine *e, struct gp_pod *p, struct gp_node *n,
                   const struct gp_pick *pick)
{
    p->state = GP_POD_BOUND;
    p->node = n->id;
    p->pick = *pick;
    gp_eng_state_bump(e);
    px_at(e, p->id)->bound_at_s = e->now_s;
    struct queue *q = &e->queues.items[p->spec.queue];
    px_at(e, p->id)->slot = (uint32_t)q->bound.len;
    px_at(e, p->id)->listed_at = q->compactions + 1; /* still in q->pending (pods.c) */
    q->bound.items[q->bound.len++] = p->id;          /* room reserved by gp_engine_pod_add */
    gp_eng_queue_charge(e, p, n->model, 1);
    uint32_t free_before = n->gpu_milli_free;
    p->oversubscribed = gp_eng_node_take(n, p, pick);
    p->gpu_milli_taken = free_before - n->gpu_milli_free;
    e->totals.gpu_milli_alloc += p->gpu_milli_taken;
    e->totals.cpu_milli_alloc += p->spec.cpu_milli;
    e->totals.mem_mib_alloc += p->spec.mem_mib;
    e->totals.pods_bound++;
    if (p->spec.group)
        group_at(e, p->spec.group)->bound++;
    gp_eng_topo_bind(e, p, n, 1);
    if (p->spec.nhost_ports)
        gp_eng_ports_bind(e, p, n->id, 1);
    if (p->spec.nclaims)
        gp_eng_claims_bind(e, p, 1);
    if (p->spec.ncsi_volumes)
        gp_eng_csi_bind(e, p, n->id, 1);
    if (e->policy && e->policy->on_bind)
        e->policy->on_bind(e->policy_state, e, n, p);
    gp_eng_index_touch(e, n->id);
}

/* Gives a bound pod's resources back. `grow` bumps the cluster generation
 * (capacity grew); a gang's rollback restores an earlier state and does not. */
void gp_eng_release(struct gp_engine *e, struct gp_pod *p, bool grow)
{
    struct gp_node *n = &e->nodes.items[p->node];
    struct queue *q = &e->queues.items[p->spec.queue];
    uint32_t slot = px_at(e, p->id)->slot, last = q->bound.items[--q->bound.len];
    q->bound.items[slot] = last;
    px_at(e, last)->slot = slot;
    px_at(e, p->id)->slot = NONE;
    gp_eng_state_bump(e);
    gp_eng_queue_charge(e, p, n->model, -1);
    gp_eng_node_give(n, p, &p->pick);
    e->totals.gpu_milli_alloc -= p->gpu_milli_taken;
    e->totals.cpu_milli_alloc -= p->spec.cpu_milli;
    e->totals.mem_mib_alloc -= p->spec.mem_mib;
    e->totals.pods_bound--;
    if (p->spec.group)
        group_at(e, p->spec.group)->bound--;
    gp_eng_topo_bind(e, p, n, -1);
    if (p->spec.nhost_ports)
        gp_eng_ports_bind(e, p, n->id, -1);
    if (p->spec.nclaims)
        gp_eng_claims_bind(e, p, -1);
    if (p->spec.ncsi_volumes)
        gp_eng_csi_bind(e, p, n->id, -1);
    if (grow) {
        e->generation++;
        e->victim_gen++;
    }
    if (e->policy && e->policy->on_release)
        e->policy->on_release(e->policy_state, e, n, p);
    gp_eng_index_touch(e, n->id);
}
