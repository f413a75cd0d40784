/* sched_alloc.c - pods left at gpuplane.io/phase=allocating (docs/kube.md,
 * "Pods left allocating"). The node agent sets "allocated" once its
 * Allocate served the pod; under the per-node protocol a pod that stays
 * "allocating" would be counted by every later Allocate on its node. What
 * Kubernetes does decides the rest: a kubelet that cannot admit a pod
 * (the device plugin's Allocate refused or failed) makes it Failed with
 * reason UnexpectedAdmissionError, and a Failed or deleted pod holds no
 * device (kubelet pkg/kubelet/lifecycle, the device manager's
 * podDevices: kube-scheduler too counts only pods not terminated), so the
 * scheduler frees a pod's GPUs when the API says it failed or is gone,
 * never on a timer. A pod of ours bound, not started, not ended and still
 * allocating allocating_timeout_s after the scheduler saw it so is a
 * decision that failed on the node: a Warning AllocationTimeout Event,
 * the allocation_timeouts counter, and its phase written "expired" (with
 * its resourceVersion as precondition, so an "allocated" written
 * meanwhile wins). The pod keeps its GPUs until it fails or goes, and
 * its node's slot until the kubelet has admitted it (sched_slot.c: the
 * agent refuses ours beside a pod the kubelet may be admitting). Another
 * scheduler's pod (another gpuplane replica) allocating that long is no
 * longer counted for its node's allocating slot (sched_slot.c); it is not
 * written: that scheduler's own timeout does so. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kube/sched_internal.h"

#define PHASE_EXPIRED "expired"

/* Allocating in the API's view, by the agent's rule: not started, not
 * ended, not being deleted, annotated allocating for the node it is bound
 * to; or another scheduler's pod annotated allocating and not bound yet
 * (another replica writing its decision: sched_slot.c counts both); on a
 * node labelled as served by gpuplane's agent (GP_KUBE_LABEL_AGENT). */
static bool api_allocating(struct gp_kube_sched *s, const struct spod *p)
{
    const struct gp_kube_pod_info *in = &p->info;
    if (!p->obj || in->ended || in->terminating || in->started || !in->ann_phase ||
        strcmp(in->ann_phase, "allocating") != 0 || !in->ann_node)
        return false;
    if (in->node_name ? strcmp(in->ann_node, in->node_name) != 0 : p->ours)
        return false;
    /* only where gpuplane's agent serves the protocol: elsewhere no one
     * ever marks it, and nothing waits for it (sched_slot.c) */
    return gp_ks_node_agent(gp_ks_node_get(s, in->ann_node, false));
}

static void expire(struct gp_kube_sched *s, struct spod *p)
{
    char path[600], note[1400];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", p->info.ns, p->info.name);
    json_t *body = json_pack("{s:{s:s,s:{s:s}}}", "metadata", "resourceVersion", p->info.rv,
                             "annotations", GP_KUBE_ANN_PHASE, PHASE_EXPIRED);
    long st = gp_ks_leading(s)
                  ? gp_ks_send(s->c, "PATCH", path, body, "application/merge-patch+json", NULL)
                  : (json_decref(body), 0L);
    if (st != 200) { /* 409: it changed (allocated, started, failed); else try again in 1 s */
        p->alloc_since += 1.0;
        return;
    }
    p->alloc_expired = true;
    s->st.allocation_timeouts++;
    /* another pod the kubelet has not admitted there (another scheduler's):
     * the agent refuses both Allocates while both wait (sched_slot.c) */
    const struct spod *h = gp_ks_slot_holder(s, p->slot, p);
    char also[400] = "";
    if (h)
        snprintf(also, sizeof also,
                 " (pod %s is bound there too and not admitted by the kubelet: the agent "
                 "refuses both Allocates)",
                 h->key);
    snprintf(note, sizeof note,
             "gpuplane.io/phase still allocating %.0f s after the pod was bound to %s: no node "
             "agent served its Allocate%s; it keeps its GPUs until it fails or is deleted (a "
             "bound pod cannot move to another node), and %s takes no other pod of gpuplane's "
             "until the kubelet has admitted it",
             s->o.allocating_timeout_s, p->info.node_name, also, p->info.node_name);
    gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning", "AllocationTimeout",
                "Allocating", note);
}

/* A scan of every pod, at most once a second unless one is due (the
 * timeout's resolution is a second, and a loop turn should not cost a
 * scan of 50,000 pods: bench/bench_kube.c). */
void gp_ks_allocations(struct gp_kube_sched *s)
{
    if (s->o.allocating_timeout_s <= 0 ||
        (s->now_s < s->alloc_scan_s + 1 && (s->alloc_next_s == 0 || s->now_s < s->alloc_next_s)))
        return;
    s->alloc_scan_s = s->now_s;
    double next = 0;
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        if (!api_allocating(s, p)) {
            p->alloc_since = 0;
            if (!p->ours && p->alloc_expired) { /* counted again if it ever allocates again */
                p->alloc_expired = false;
                gp_ks_slot_update(s, p, false);
            }
            continue;
        }
        if (p->alloc_since == 0) {
            p->alloc_since = s->now_s > 0 ? s->now_s : 1e-9;
        } else if (!p->alloc_expired && s->now_s - p->alloc_since >= s->o.allocating_timeout_s) {
            if (!p->ours) /* another scheduler's: its node's slot no longer held for it */
                p->alloc_expired = true;
            else if (s->leader) /* ours: bound (ours not bound are no allocation) */
                expire(s, p);
            gp_ks_slot_update(s, p, false);
        }
        double due = p->alloc_since + s->o.allocating_timeout_s;
        if (!p->alloc_expired && (next == 0 || due < next))
            next = due;
    }
    s->alloc_next_s = next;
}

double gp_ks_allocations_next(const struct gp_kube_sched *s)
{
    return s->leader && s->alloc_next_s > 0 ? s->alloc_next_s : INFINITY;
}
