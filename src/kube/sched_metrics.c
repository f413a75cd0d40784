/* sched_metrics.c - the scheduler's counts and gauges brought to its
 * metrics registry (metrics.h, docs/kube.md "Metrics"): each call adds
 * what the stats counted since the last one, sets the queue and slot
 * gauges, and the GPUs allocated and on ready nodes per pool (nodes
 * without gpuplane.io/pool are pool "default"). */
#include "kube/metrics.h"
#include "kube/sched_internal.h"

void gp_kube_sched_set_metrics(struct gp_kube_sched *s, struct gp_kube_metrics *km)
{
    s->km = km;
}

static void inc(struct gp_metric_series *m, uint64_t now, uint64_t before)
{
    if (m && now > before)
        gp_metrics_inc(m, (double)(now - before));
}

void gp_kube_sched_metrics(struct gp_kube_sched *s)
{
    struct gp_kube_metrics *km = s->km;
    if (!km)
        return;
    struct gp_kube_sched_stats n = gp_kube_sched_stats(s), *o = &s->exported;
    inc(km->decisions[GP_KM_SCHEDULED], n.binds, o->binds);
    inc(km->decisions[GP_KM_UNSCHEDULABLE], n.unschedulable, o->unschedulable);
    inc(km->decisions[GP_KM_ERROR], n.rollbacks, o->rollbacks);
    inc(km->bind_failures[GP_KM_BIND_CONFLICT], n.patch_conflicts + n.bind_conflicts,
        o->patch_conflicts + o->bind_conflicts);
    inc(km->bind_failures[GP_KM_BIND_REJECTED], n.bind_rejected, o->bind_rejected);
    inc(km->bind_failures[GP_KM_BIND_ERROR], n.bind_errors, o->bind_errors);
    inc(km->preemption_victims, n.evictions, o->evictions);
    inc(km->audit[GP_KM_AUDIT_GPU], n.audit_gpu, o->audit_gpu);
    inc(km->audit[GP_KM_AUDIT_MEMORY], n.audit_memory, o->audit_memory);
    inc(km->audit[GP_KM_AUDIT_MIG], n.audit_mig, o->audit_mig);
    inc(km->allocation_timeouts, n.allocation_timeouts, o->allocation_timeouts);
    inc(km->claim_patches, n.claim_patches, o->claim_patches);
    inc(km->events_lost, n.events_lost, o->events_lost);
    inc(km->volume_binding_failures, n.claim_failures, o->claim_failures);
    gp_metrics_set(km->pending[GP_KM_QUEUE_ACTIVE], (double)(n.pending - n.unschedulable_now));
    gp_metrics_set(km->pending[GP_KM_QUEUE_BACKOFF], (double)n.waiting_backoff);
    gp_metrics_set(km->pending[GP_KM_QUEUE_UNSCHEDULABLE], (double)n.unschedulable_now);
    gp_metrics_set(km->leader, s->leader ? 1 : 0);
    gp_metrics_set(km->slot_waiting, (double)n.slot_waiting);
    *o = n;
    if (!s->e)
        return;
    /* GPUs per pool: nodes without gpuplane.io/pool are pool "default" */
    json_t *pools = json_object();
    for (size_t i = 0; i < gp_engine_node_count(s->e); i++) {
        const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)i);
        if (nd->state == GP_NODE_GONE)
            continue;
        const char *pool = nd->spec.pool ? nd->spec.pool : "default";
        json_t *v = json_object_get(pools, pool);
        if (!v) {
            v = json_pack("[f,f]", 0.0, 0.0);
            json_object_set_new(pools, pool, v);
        }
        double used = (double)nd->spec.gpu_count - (double)nd->gpu_milli_free / GP_GPU_MILLI;
        json_array_set_new(v, 0, json_real(json_real_value(json_array_get(v, 0)) + used));
        if (nd->state == GP_NODE_READY)
            json_array_set_new(
                v, 1,
                json_real(json_real_value(json_array_get(v, 1)) + (double)nd->spec.gpu_count));
    }
    const char *k;
    json_t *v;
    json_object_foreach(pools, k, v)
    {
        gp_kube_metrics_pool(km, k, json_real_value(json_array_get(v, 0)),
                             json_real_value(json_array_get(v, 1)));
    }
    json_decref(pools);
}
