/* sched_cycle.c - the engine's decisions written to the API server: a BIND
 * assumed and handed to bind.c (the annotation patch, the Binding, the
 * clearing on a failure), a gang's members together, and taken back here
 * once cleared (the engine's assumption released, then a back-off); an
 * EVICT as a graceful delete of the victim (all it holds held until it
 * is gone; a refused delete backs its preemptor off), its preemptor bound
 * once the victims are gone; an UNSCHEDULABLE as PodScheduled=False through
 * /status and a FailedScheduling Event; and the Events themselves
 * (events.k8s.io/v1, as kube-scheduler records them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/share.h"
#include "engine/sharing.h"
#include "kube/events.h"
#include "kube/metrics.h"
#include "kube/sched_internal.h"

static void micro_time(char *buf, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char b[32];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.20s.%06dZ", b, (int)(ts.tv_nsec / 1000 % 1000000));
}

static void rfc3339(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* One request with a JSON body (stolen) on client c; the answer's status,
 * or 0 when no answer came. *out (when not NULL) gets the parsed answer. */
long gp_ks_send(struct gp_kube_client *c, const char *method, const char *path, json_t *body,
                const char *ctype, json_t **out)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    struct gp_kube_response r;
    struct gp_diag d = {""};
    enum gp_err err = gp_kube_request(c, method, path, text, ctype, &r, &d);
    free(text);
    if (out)
        *out = NULL;
    if (err != GP_OK)
        return 0;
    long status = r.status;
    if (out)
        *out = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    return status;
}

/* A write of the scheduling thread: none once the renew deadline passed,
 * even in the middle of a cycle (0, as when no answer came). */
static long send_json(struct gp_kube_sched *s, const char *method, const char *path, json_t *body,
                      const char *ctype, json_t **out)
{
    if (!gp_ks_leading(s)) {
        json_decref(body);
        if (out)
            *out = NULL;
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    atomic_store(&s->beat_s, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
    return gp_ks_send(s->c, method, path, body, ctype, out);
}

static void pod_path(const struct spod *p, const char *sub, char *buf, size_t n)
{
    snprintf(buf, n, "/api/v1/namespaces/%s/pods/%s%s", p->info.ns, p->info.name, sub);
}

static void preemptor_waits(struct gp_kube_sched *s, struct spod *p, bool retried);

bool gp_ks_event_send(struct gp_kube_sched *s, struct gp_kube_client *c, const char *kind,
                      const char *ns, const char *name, const char *uid, const char *type,
                      const char *reason, const char *action, const char *note)
{
    const struct gp_kube_sched_opts *o = &s->o;
    uint64_t seq = atomic_fetch_add(&s->event_seq, 1) + 1;
    const char *evns = ns && ns[0] ? ns : "default";
    char ev_name[320], t[40], path[320], n[1024];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(ev_name, sizeof ev_name, "%.250s.%llx%04llx", name,
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
             (unsigned long long)(seq & 0xffff));
    micro_time(t, sizeof t);
    snprintf(n, sizeof n, "%s", note); /* events.k8s.io: a note is at most 1024 bytes */
    json_t *reg = json_pack("{s:s,s:s,s:s}", "apiVersion", "v1", "kind", kind, "name", name);
    if (ns && ns[0])
        json_object_set_new(reg, "namespace", json_string(ns));
    if (uid && uid[0])
        json_object_set_new(reg, "uid", json_string(uid));
    json_t *ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "apiVersion",
                           "events.k8s.io/v1", "kind", "Event", "metadata", "name", ev_name,
                           "namespace", evns, "eventTime", t, "reportingController",
                           o->scheduler_name, "reportingInstance", o->identity, "action", action,
                           "reason", reason, "note", n, "type", type, "regarding", reg);
    snprintf(path, sizeof path, "/apis/events.k8s.io/v1/namespaces/%s/events", evns);
    if (s->events) {
        char *text = json_dumps(ev, JSON_COMPACT);
        json_decref(ev);
        return gp_kube_events_post(s->events, path, text);
    }
    bool made = gp_ks_send(c, "POST", path, ev, "application/json", NULL) == 201;
    if (!made)
        atomic_fetch_add(&s->events_lost, 1);
    return made;
}

void gp_kube_sched_set_events(struct gp_kube_sched *s, struct gp_kube_events *q)
{
    if (s->events) { /* what the one before lost stays counted */
        struct gp_kube_events_stats es = gp_kube_events_stats(s->events);
        atomic_fetch_add(&s->events_lost, es.failed + es.dropped);
    }
    s->events = q;
}

void gp_ks_event(struct gp_kube_sched *s, const char *kind, const char *ns, const char *name,
                 const char *uid, const char *type, const char *reason, const char *action,
                 const char *note)
{
    if (!s->c || !gp_ks_leading(s))
        return;
    if (gp_ks_event_send(s, s->c, kind, ns, name, uid, type, reason, action, note))
        s->st.events++;
}

long gp_ks_clear_annotations_rv(struct gp_kube_client *c, const char *ns, const char *name,
                                const char *rv, char *new_rv, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    json_t *body =
        json_pack("{s:{s:{s:n,s:n,s:n,s:n}}}", "metadata", "annotations", GP_KUBE_ANN_NODE,
                  GP_KUBE_ANN_GPUS, GP_KUBE_ANN_PHASE, GP_KUBE_ANN_MIG);
    if (rv)
        json_object_set_new(json_object_get(body, "metadata"), "resourceVersion", json_string(rv));
    json_t *ans = NULL;
    long st =
        gp_ks_send(c, "PATCH", path, body, "application/merge-patch+json", new_rv ? &ans : NULL);
    if (new_rv) {
        const char *v = st == 200 ? gp_kube_meta(ans, "resourceVersion") : NULL;
        gp_kube_str_copy(new_rv, n, v ? v : "");
        json_decref(ans);
    }
    return st;
}

bool gp_ks_clear_annotations(struct gp_kube_client *c, const char *ns, const char *name,
                             const char *rv)
{
    long st = gp_ks_clear_annotations_rv(c, ns, name, rv, NULL, 0);
    return st != 0 && st != 429 && st < 500;
}

void gp_ks_release(struct gp_kube_sched *s, struct spod *p)
{
    gp_ks_engine_drop(s, p);
    p->st = SP_BACKOFF;
    s->maybe_backoff = true;
    p->resume = false;
    p->resume_rv[0] = '\0';
    p->recheck_at = 0;
    p->rebind_at = 0;
    p->attempts++;
    p->retry_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
    s->st.rollbacks++;
    gp_ks_audit_pod(s, p, false);
    gp_ks_slot_update(s, p, false);
}

bool gp_ks_put_back(struct gp_kube_sched *s, struct spod *p, uint32_t node,
                    const struct gp_pick *pick)
{
    enum gp_err err = gp_engine_pod_assign(s->e, p->eng, node, pick);
    gp_evlog_pod_assign(s->rec, p->eng, node, pick, err);
    if (err != GP_OK) {
        gp_ks_release(s, p);
        return false;
    }
    p->node = node;
    p->pick = gp_engine_pod(s->e, p->eng)->pick;
    return true;
}

/* Whether a pod still stopping (evicted, not yet gone) holds a GPU of p's
 * pick: the engine released it when it evicted it, but the GPU is the
 * victim's until its deletion completes, as kube-scheduler too counts a
 * victim's resources until it is gone. Any GPU in common counts, shared
 * or not: the victim's share is free in the engine, not on the card. */
static bool on_stopping(const struct gp_kube_sched *s, const struct spod *p)
{
    if (s->nstopping == 0 || p->node == SP_NONE)
        return false;
    bool held = false; /* a victim's cpu and memory held on p's node (victim_hold) */
    for (size_t i = 0; i < s->npods; i++) {
        const struct spod *v = s->pods[i];
        if (v->st != SP_EVICTED || v->stop_node != p->node)
            continue;
        held |= v->eng != SP_NONE;
        for (unsigned a = 0; a < v->stop_pick.ngpus; a++)
            for (unsigned b = 0; b < p->pick.ngpus; b++)
                if (v->stop_pick.gpu[a] == p->pick.gpu[b])
                    return true;
    }
    /* placed, in the cycle that evicted them, in the cpu or memory they
     * still hold: the node is short of it until they are gone */
    const struct gp_node *nd = held ? gp_engine_node(s->e, p->node) : NULL;
    return nd && ((p->spec.cpu_milli > 0 && nd->cpu_free_milli < 0) ||
                  (p->spec.mem_mib > 0 && nd->mem_free_mib < 0));
}

static void nominate(struct gp_kube_sched *s, struct spod *p, const char *node);

/* p bound in the engine at p->node (tried anew from was_node): when no
 * stopping pod holds what it got, 1 - its victims stop on, held, waited
 * for by nobody; else 0, p pending again, or -1 when that failed (p
 * released). booked: placed with every stopping pod's devices booked
 * (sched_room.c), so what it got is beside theirs as the engine counts
 * them (a free replica of a GPU one shares, as kube-scheduler counts
 * replicas), not on_stopping's any GPU in common. */
static int settled(struct gp_kube_sched *s, struct spod *p, uint32_t was_node, bool booked)
{
    if (booked || !on_stopping(s, p)) {
        for (size_t i = 0; i < s->npods; i++) /* its victims stop on, held */
            if (s->pods[i]->preemptor == p)
                s->pods[i]->preemptor = NULL;
        p->victims = 0;
        p->nominated_at = 0;
        /* elsewhere, its nomination is stale: cleared, as kube-scheduler
         * clears a preemptor's status.nominatedNodeName once it no longer
         * holds (kubernetes PR #106816, issue #106780) - a v1.28 API
         * server keeps it through the Binding; on its own node it holds */
        if (p->node != was_node)
            nominate(s, p, NULL);
        return 1;
    }
    gp_ks_engine_drop(s, p); /* there too it would wait: back where it was */
    if (gp_ks_engine_add(s, p) != GP_OK) {
        gp_ks_release(s, p);
        return -1;
    }
    return 0;
}

/* A pod waiting on its node (SP_PREEMPTING: for its victims, or on room
 * a victim still holds) tried again where it could go now, as
 * kube-scheduler tries a nominated pod again at each attempt and binds it
 * wherever it fits (status.nominatedNodeName is a hint, not a claim:
 * schedule_one.go findNodesThatFitPod evaluates the nominated node
 * first, then every node). Its own node first: when it has room beside
 * what the pods stopping there still hold (another pod there ended), the
 * pod is released and tried there with their devices booked back
 * (sched_room.c, written to --record's log), and bound on the free ones
 * (its nomination kept: it holds). Else only when another node passes
 * every filter: then the pod is released and placed by the engine's
 * policy (gp_engine_schedule_pod, written to --record's log as the
 * assignment it made). If it lands where nothing stops it, true (ASSUMED
 * there, to be bound; its victims stop on, held, waited for by nobody);
 * else it is put back where it was. A gang's member is left alone (its
 * gang was placed together). Each try is an attempt: the next comes after
 * the pod's back-off (kube-scheduler's backoffQ), so a long grace period
 * costs a few tries (the review's R7). */
static bool waiting_moves(struct gp_kube_sched *s, struct spod *p)
{
    if (p->spec.group || p->job || !s->e) {
        p->retry_at = 0; /* never tried elsewhere (no wake for it) */
        return false;
    }
    if (p->retry_at > s->now_s)
        return false;
    p->attempts++;
    p->retry_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
    const struct gp_pod *ep = gp_engine_pod(s->e, p->eng);
    /* its own node first, beside what the pods stopping there still hold
     * (sched_room.c), as kube-scheduler evaluates the nominated node first */
    bool own = ep && gp_ks_room_maybe(s, p), elsewhere = false;
    for (size_t i = 0; ep && i < gp_engine_node_count(s->e) && !elsewhere; i++) {
        const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)i);
        elsewhere = (uint32_t)i != p->node && nd && nd->state == GP_NODE_READY &&
                    gp_engine_filter(s->e, nd, ep) == GP_FILTER_COUNT;
    }
    if (!own && !elsewhere)
        return false;
    uint32_t was_node = p->node;
    struct gp_pick was_pick = ep->pick;
    gp_ks_engine_drop(s, p);
    if (gp_ks_engine_add(s, p) != GP_OK) {
        gp_ks_release(s, p); /* (out of memory) decided anew after a back-off */
        return false;
    }
    int r = 0;          /* settled's */
    bool exact = false; /* (a booking refused: on_stopping's rule then) */
    if (own && gp_ks_room_place(s, p, was_node, &exact) == GP_OK)
        r = settled(s, p, was_node, exact);
    struct gp_decision d;
    if (r == 0 && elsewhere && gp_engine_schedule_pod(s->e, p->eng, &d) == GP_OK &&
        d.kind == GP_DECISION_BIND) {
        gp_evlog_pod_assign(s->rec, p->eng, d.node, &d.pick, GP_OK);
        p->node = d.node;
        p->pick = d.pick;
        r = settled(s, p, was_node, false);
    }
    if (r != 0)
        return r > 0;
    gp_ks_put_back(s, p, was_node, &was_pick);
    return false;
}

void gp_ks_resume(struct gp_kube_sched *s, size_t *bound)
{
    if (!s->maybe_resume)
        return;
    bool waiting = false, recheck = false; /* a pod still waiting for victims, a re-check */
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        bool held = p->st == SP_PREEMPTING && (p->victims > 0 || p->job || on_stopping(s, p));
        waiting |= held;
        /* still waiting when kube-scheduler would try it again (its
         * back-off, podInitialBackoffSeconds): the later attempt's words */
        if (held && p->victims > 0 && p->nominated_at > 0 && !p->wait_said &&
            s->now_s >= p->nominated_at + s->o.backoff_initial_s) {
            p->wait_said = true;
            preemptor_waits(s, p, true);
        }
        if (held && waiting_moves(s, p)) {
            p->st = SP_ASSUMED; /* it fits elsewhere now */
            gp_ks_audit_pod(s, p, false);
            gp_ks_slot_update(s, p, false);
            gp_ks_bind_dispatch(s, &p, 1, bound);
        } else if (p->st == SP_PREEMPTING && !held) {
            p->st = SP_ASSUMED; /* the room is free now */
            gp_ks_audit_pod(s, p, false);
            gp_ks_bind_dispatch(s, &p, 1, bound);
        } else if (p->st == SP_ASSUMED && !p->job && !p->wait_on &&
                   (p->recheck_at > 0 || p->rebind_at > 0)) {
            /* maybe bound (bind.c, BO_UNSURE): asked about again; a gang's
             * member kept (BO_KEPT): bound again */
            if ((p->recheck_at > 0 ? p->recheck_at : p->rebind_at) <= s->now_s)
                gp_ks_bind_dispatch(s, &p, 1, bound);
            /* (still to come: not due, or its result, applied at once
             * without binders, asks again) */
            if (p->recheck_at > 0 || p->rebind_at > 0)
                waiting = recheck = true;
        } else if (p->st == SP_ASSUMED && p->resume && !p->job && !p->wait_on) {
            gp_ks_bind_dispatch(s, &p, 1, bound); /* its node's slot permitting */
        } else if (p->st == SP_ASSUMED && p->prov_at > 0 && !p->job && !p->wait_on) {
            /* its claims being provisioned (volumes_bind.c): bound once they
             * are, a gang's member once every member's are */
            if (p->prov_gang > 0)
                gp_ks_volumes_gang_resume(s, p, bound);
            else
                gp_ks_bind_dispatch(s, &p, 1, bound);
            waiting |= p->prov_at > 0;
        }
    }
    s->maybe_resume = waiting;
    s->maybe_recheck = recheck;
}

/* The nodes that turn p away only because their device plugin fails a
 * container's request for more than one shared replica
 * (failRequestsGreaterThanOne, always under MPS; objects_share.c). The
 * plugin checks each container's Allocate (k8s-device-plugin internal/rm
 * ValidateRequest, called per ContainerAllocateRequest; the kubelet sends
 * one per container), so a pod of two containers asking one replica each
 * passes and one container asking two does not (the engine's
 * gpu_container_max). kube-scheduler would bind it there and the
 * kubelet's Allocate would fail it (UnexpectedAdmissionError, NVIDIA's
 * README, "Shared Access to GPUs"), so they are said apart, and taken out
 * of x's sharing count (which the words of the resource asked take in:
 * objects_mig.c). */
static uint32_t greater_than_one(struct gp_kube_sched *s, const struct spod *p,
                                 struct gp_explain *x)
{
    const struct gp_pod_spec *ps = &p->spec;
    const struct gp_pod *ep = s->e && p->eng != SP_NONE ? gp_engine_pod(s->e, p->eng) : NULL;
    uint32_t one = ps->gpu_container_max ? ps->gpu_container_max : ps->gpu_count;
    if (!ep || one < 2 || ps->mig_profile || x->rejected[GP_FILTER_SHARING] == 0)
        return 0;
    uint32_t n = 0;
    for (size_t i = 0; i < gp_engine_node_count(s->e) && n < x->rejected[GP_FILTER_SHARING]; i++) {
        const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)i);
        const struct gp_sharing_spec *sh = nd->spec.sharing;
        if (nd->state == GP_NODE_GONE || !sh ||
            (sh->mode != GP_SHARE_TIMESLICE && sh->mode != GP_SHARE_MPS) ||
            !(sh->fail_requests_greater_than_one || sh->mode == GP_SHARE_MPS) ||
            (ps->share_modes && !(ps->share_modes >> sh->mode & 1)) ||
            ps->gpu_resource != (sh->rename_by_default ? GP_GPU_RES_SHARED : GP_GPU_RES_GPU))
            continue;
        n += gp_engine_filter(s->e, nd, ep) == GP_FILTER_SHARING;
    }
    x->rejected[GP_FILTER_SHARING] -= n;
    return n;
}

/* The nodes that turn p away only because one pod's replicas go on
 * distinct GPUs (objects_share.c, distinct_replicas): they have as many
 * free replicas as it asks, but on fewer GPUs. kube-scheduler counts only
 * the node's nvidia.com/gpu (or .shared), so it would bind the pod there;
 * NVIDIA's plugin could then give a container two replicas of one GPU
 * (k8s-device-plugin #491) and gpuplane's agent refuses them. "Insufficient
 * nvidia.com/gpu" would be false (the node advertises enough): said apart,
 * in gpuplane's words, and taken out of x's replica count. */
static uint32_t distinct_out(struct gp_kube_sched *s, const struct spod *p, struct gp_explain *x)
{
    const struct gp_pod *ep = s->e && p->eng != SP_NONE ? gp_engine_pod(s->e, p->eng) : NULL;
    if (!ep || p->spec.gpu_count < 2 || p->spec.mig_profile ||
        x->rejected[GP_FILTER_GPU_REPLICA] == 0)
        return 0;
    uint32_t n = 0;
    for (size_t i = 0; i < gp_engine_node_count(s->e) && n < x->rejected[GP_FILTER_GPU_REPLICA];
         i++) {
        const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)i);
        const struct gp_sharing_spec *sh = nd ? nd->spec.sharing : NULL;
        if (!sh || nd->state == GP_NODE_GONE || !sh->distinct_replicas ||
            (sh->mode != GP_SHARE_TIMESLICE && sh->mode != GP_SHARE_MPS))
            continue;
        uint32_t free = 0; /* the node's free replicas, as the kubelet counts them */
        for (uint32_t g = 0; g < nd->spec.gpu_count; g++)
            if (nd->gpu[g].pods < sh->replicas)
                free += sh->replicas - nd->gpu[g].pods;
        n += free >= p->spec.gpu_count && gp_engine_filter(s->e, nd, ep) == GP_FILTER_GPU_REPLICA;
    }
    x->rejected[GP_FILTER_GPU_REPLICA] -= n;
    return n;
}

/* The nodes that turn p away only because of its own gpuplane.io/sharing
 * pin (objects_share.c): they advertise the resource it asks, so
 * kube-scheduler has no word for them (its "Insufficient nvidia.com/gpu"
 * would be false); said apart, in gpuplane's words, and taken out of x's
 * sharing count as greater_than_one's are. */
static uint32_t pinned_out(struct gp_kube_sched *s, const struct spod *p, struct gp_explain *x)
{
    const struct gp_pod *ep = s->e && p->eng != SP_NONE ? gp_engine_pod(s->e, p->eng) : NULL;
    if (!ep || !p->spec.share_modes || x->rejected[GP_FILTER_SHARING] == 0)
        return 0;
    struct gp_pod bare = *ep; /* the modes its resource implies, the pin left out */
    bare.spec.share_modes = p->spec.gpu_resource == GP_GPU_RES_SHARED
                                ? (uint8_t)(1u << GP_SHARE_TIMESLICE | 1u << GP_SHARE_MPS)
                            : p->spec.mig_profile ? (uint8_t)(1u << GP_SHARE_MIG)
                                                  : 0;
    if (bare.spec.share_modes == p->spec.share_modes)
        return 0; /* no pin of its own */
    uint32_t n = 0;
    for (size_t i = 0; i < gp_engine_node_count(s->e) && n < x->rejected[GP_FILTER_SHARING]; i++) {
        const struct gp_node *nd = gp_engine_node(s->e, (uint32_t)i);
        if (nd->state != GP_NODE_GONE && nd->spec.gpu_count > 0 &&
            gp_engine_filter(s->e, nd, ep) == GP_FILTER_SHARING && gp_share_mode_ok(nd, &bare))
            n++;
    }
    x->rejected[GP_FILTER_SHARING] -= n;
    return n;
}

/* PodScheduled=False (reason Unschedulable) with msg through /status and
 * a FailedScheduling Event, as kube-scheduler's handleSchedulingFailure
 * writes them (v1.28 schedule_one.go; a condition only when it changes);
 * nominated: the node a preemptor waits for, as status.nominatedNodeName
 * (NULL: none). attempt_s < 0: a preemptor's, not an unschedulable
 * decision (neither observed nor counted). */
static void write_condition(struct gp_kube_sched *s, struct spod *p, const char *msg,
                            double attempt_s, const char *nominated)
{
    if (p->last_message && strcmp(p->last_message, msg) == 0)
        return; /* written already: kube-scheduler too writes a condition only when it changes */
    if (s->km && attempt_s >= 0)
        gp_metrics_observe(s->km->scheduling_s, attempt_s);
    char path[600], ts[32];
    pod_path(p, "/status", path, sizeof path);
    rfc3339(ts, sizeof ts);
    json_t *body = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:n,s:s}]}}", "status", "conditions", "type",
                             "PodScheduled", "status", "False", "reason", "Unschedulable",
                             "message", msg, "lastProbeTime", "lastTransitionTime", ts);
    if (nominated)
        json_object_set_new(json_object_get(body, "status"), "nominatedNodeName",
                            json_string(nominated));
    long st = send_json(s, "PATCH", path, body, "application/strategic-merge-patch+json", NULL);
    if (st == 200) {
        /* a preemptor's words (attempt_s < 0) are no decision of their
         * own: the engine bound it, the metrics count it scheduled */
        s->st.unschedulable += attempt_s >= 0;
        free(p->last_message);
        p->last_message = strdup(msg);
    }
    gp_ks_event(s, "Pod", p->info.ns, p->info.name, p->info.uid, "Warning", "FailedScheduling",
                "Scheduling", msg);
    if (p->info.ann_node && !p->bound_to && gp_ks_leading(s)) /* a decision of before */
        gp_ks_clear_annotations(s->c, p->info.ns, p->info.name, NULL);
}

/* The node name of engine node id (either part of a split node). */
static const char *node_name(const struct gp_kube_sched *s, uint32_t id)
{
    for (size_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i]->eng == id || s->nodes[i]->eng_mig == id)
            return s->nodes[i]->name;
    return NULL;
}

/* Preemptor p waiting for its victims: kube-scheduler's message of the
 * attempt that preempted (retried false) or of a later one (true), with
 * its nominated node (sched_explain.c gp_ks_words_waiting). */
static void preemptor_waits(struct gp_kube_sched *s, struct spod *p, bool retried)
{
    char msg[1024];
    gp_ks_words_waiting(s, p, retried, msg, sizeof msg);
    if (msg[0])
        write_condition(s, p, msg, -1, node_name(s, p->node));
}

/* attempt_s: observed when the answer is new (an unschedulable pod given
 * the same answer again is not tried anew: kube-scheduler keeps it in its
 * unschedulable queue until the cluster changes) */
static void unschedulable(struct gp_kube_sched *s, struct spod *p, const struct gp_decision *d,
                          double attempt_s, struct gp_ks_words *words)
{
    char msg[1024];
    if (gp_ks_volumes_words(s, words, p, &d->explain, msg, sizeof msg)) { /* (volumes.c) */
        write_condition(s, p, msg, attempt_s, NULL);
        return;
    }
    struct gp_explain x = d->explain;
    uint32_t gt1 = greater_than_one(s, p, &x), pin = pinned_out(s, p, &x),
             distinct = distinct_out(s, p, &x);
    struct gp_ks_reasons *kr = malloc(sizeof *kr);
    if (kr)
        gp_ks_words_nodes(s, words, p, &x, kr);           /* sched_explain.c */
    gp_ks_explain_text(s, &x, &p->spec, msg, sizeof msg); /* sched_mig.c */
    gp_kube_explain_add(msg, sizeof msg, gt1,
                        p->spec.gpu_resource == GP_GPU_RES_SHARED
                            ? "node(s) refuse a container asking more than one "
                              "nvidia.com/gpu.shared (failRequestsGreaterThanOne)"
                            : "node(s) refuse a container asking more than one shared "
                              "nvidia.com/gpu (failRequestsGreaterThanOne)");
    gp_kube_explain_add(msg, sizeof msg, distinct,
                        "node(s) had too few GPUs with a free replica for the pod's replicas on "
                        "distinct GPUs");
    gp_kube_explain_add(msg, sizeof msg, pin,
                        "node(s) share their GPUs in a way the pod's gpuplane.io/sharing does not "
                        "allow");
    if (kr)
        gp_ks_words_apply(kr, msg, sizeof msg);
    free(kr);
    if (d->gang == GP_GANG_MEMBERS)
        snprintf(msg, sizeof msg, "pod group has fewer members than its minMember");
    write_condition(s, p, msg, attempt_s, NULL);
}

/* status.nominatedNodeName of pod p written through /status (node NULL:
 * cleared), as kube-scheduler's prepareCandidate clears it on the
 * lower-priority pods nominated to the node it preempts on
 * (getLowerPriorityNominatedPods, util.ClearNominatedNodeName); a
 * preemptor's own is written with its PodScheduled words
 * (preemptor_waits). */
static void nominate(struct gp_kube_sched *s, struct spod *p, const char *node)
{
    char path[600];
    pod_path(p, "/status", path, sizeof path);
    json_t *body = json_pack("{s:{s:o}}", "status", "nominatedNodeName",
                             node ? json_string(node) : json_null());
    send_json(s, "PATCH", path, body, "application/merge-patch+json", NULL);
}

/* A pod bound in the engine but not on a node (SP_PREEMPTING: nominated,
 * waiting for its own victims) chosen as a victim: not deleted, its
 * nomination taken back and the pod queued again, as kube-scheduler
 * clears the nominatedNodeName of lower-priority pods nominated to the
 * node it preempts on (their nominations no longer hold room there). */
static void unnominate(struct gp_kube_sched *s, struct spod *v)
{
    gp_ks_engine_drop(s, v);
    for (size_t i = 0; i < s->npods; i++) /* its victims still stop: on_stopping holds */
        if (s->pods[i]->preemptor == v)
            s->pods[i]->preemptor = NULL;
    v->victims = 0;
    v->nominated_at = 0;
    v->st = SP_DONE;
    if (gp_ks_engine_add(s, v) == GP_OK)
        v->st = SP_WAITING;
    nominate(s, v, NULL);
    gp_ks_audit_pod(s, v, false);
    gp_ks_slot_update(s, v, false);
}

/* A victim's cpu and memory held where it runs until it is gone, as
 * kube-scheduler keeps a terminating pod in its cache with all its
 * requests (the kubelet admits the preemptor only once the victim has
 * stopped): an engine pod of the victim's cpu and memory alone, bound on
 * its node (gp_engine_pod_assign lets them go below zero: the preemptor
 * took that room already, and waits), registered under the victim's
 * record, so that gp_ks_engine_drop releases it when the victim's
 * DELETED event or its end comes. At the highest priority, so that no
 * preemptor picks it. Its GPUs are on_stopping's: the preemptor holds
 * them in the engine, and any other pod placed on one waits. */
static void victim_hold(struct gp_kube_sched *s, struct spod *v)
{
    if (!s->e || v->eng != SP_NONE || v->stop_node == SP_NONE ||
        (v->spec.cpu_milli <= 0 && v->spec.mem_mib <= 0))
        return;
    struct gp_pod_spec h = {0};
    h.name = v->spec.name;
    h.cpu_milli = v->spec.cpu_milli;
    h.mem_mib = v->spec.mem_mib;
    h.priority = INT32_MAX;
    h.preempt_never = true;
    h.namespace_name = v->spec.namespace_name; /* (affinity and spreading still see it) */
    h.labels = v->spec.labels;
    h.nlabels = v->spec.nlabels;
    uint32_t id;
    enum gp_err err = gp_engine_pod_add(s->e, &h, s->now_s, &id);
    gp_evlog_pod_add(s->rec, &h, s->now_s, err, id);
    if (err != GP_OK)
        return;
    err = gp_engine_pod_assign(s->e, id, v->stop_node, NULL);
    gp_evlog_pod_assign(s->rec, id, v->stop_node, NULL, err);
    /* the record under the engine's id, as sched.c's engine_add does */
    struct spod **r = NULL;
    uint32_t mine = 0;
    while (err == GP_OK && s->by_eng.n <= id && (r = gp_idtab_add(&s->by_eng, &mine)) && mine != id)
        gp_idtab_release(&s->by_eng, mine);
    if (err != GP_OK || !r || mine != id) {
        gp_engine_pod_finished(s->e, id);
        gp_evlog_pod_finished(s->rec, id);
        gp_engine_pod_forget(s->e, id);
        gp_evlog_pod_forget(s->rec, id);
        return;
    }
    *r = v;
    v->eng = id;
}

/* Victim v keeps running: its DELETE was refused (403, 422, 5xx, no
 * answer past the client's retries), or its preemptor's decision was
 * taken back by an earlier refusal. kube-scheduler's prepareCandidate
 * fails the PostFilter on a failed DeletePod and the preemptor goes back
 * to its queue with its back-off (framework/preemption/preemption.go):
 * here the preemptor's decision is taken back (gp_ks_release: out of the
 * engine until its back-off, podInitialBackoffSeconds doubled per failure
 * up to podMaxBackoffSeconds), its other victims already deleted stop on
 * (held: victim_hold), a gang's members placed with it go back with it,
 * and v is back in the engine where it runs. Its
 * next attempt preempts anew, so a DELETE that keeps failing costs one
 * attempt per back-off, not a rebuild per cycle (the review's R1). */
static void preemptor_back(struct gp_kube_sched *s, struct spod *by)
{
    for (size_t i = 0; i < s->npods; i++)
        if (s->pods[i]->preemptor == by)
            s->pods[i]->preemptor = NULL;
    by->victims = 0;
    by->nominated_at = 0;
    gp_ks_release(s, by);
}

static void victim_stays(struct gp_kube_sched *s, struct spod *v, struct spod *by, size_t ndec)
{
    if (by && by->st != SP_BACKOFF) {
        uint32_t group = by->spec.group;
        preemptor_back(s, by);
        /* a gang's members placed with it in this cycle go back with it
         * (all or none) */
        for (size_t i = 0; group && i < ndec; i++) {
            struct spod *q = gp_ks_by_eng(s, s->dec[i].pod);
            if (s->dec[i].kind == GP_DECISION_BIND && q && q->spec.group == group &&
                q->st != SP_BACKOFF)
                preemptor_back(s, q);
        }
    }
    v->preemptor = NULL;
    if (v->st == SP_EVICTED && s->nstopping > 0)
        s->nstopping--;
    gp_ks_engine_drop(s, v);
    gp_ks_engine_place(s, v, v->info.node_name); /* SP_BOUND again */
    gp_ks_audit_pod(s, v, false);
}

/* A victim marked and deleted as kube-scheduler's prepareCandidate does
 * (v1.28, PodDisruptionConditions on by default since 1.26): the
 * DisruptionTarget condition (reason PreemptionByScheduler) applied to its
 * status first, so that a controller (a Job's podFailurePolicy) can tell
 * a preemption from another failure, then the graceful delete (its own
 * terminationGracePeriodSeconds) - with the victim's uid as the
 * precondition, so that a pod re-created under the same name (a
 * StatefulSet's) since the decision is never the one deleted (the server
 * answers 409 Conflict to a uid that differs). */
static void evict(struct gp_kube_sched *s, struct spod *v, struct spod *by, size_t ndec)
{
    if (v->st == SP_PREEMPTING && !v->info.node_name) {
        unnominate(s, v);
        return;
    }
    if (by && by->st == SP_BACKOFF && v->info.node_name) {
        victim_stays(s, v, by, ndec); /* its preemptor's decision was taken back: v is spared */
        return;
    }
    v->stop_node = v->node; /* its GPUs until it is gone (on_stopping) */
    v->stop_pick = v->pick;
    gp_ks_engine_drop(s, v); /* the engine released it: forgotten */
    v->st = SP_EVICTED;
    s->nstopping++;
    v->preemptor = by;
    if (by)
        by->victims++;
    char path[600], note[700], msg[400], ts[32];
    pod_path(v, "/status", path, sizeof path);
    rfc3339(ts, sizeof ts);
    snprintf(msg, sizeof msg, "%s: preempting to accommodate a higher priority pod",
             s->o.scheduler_name);
    json_t *cond = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                             "DisruptionTarget", "status", "True", "reason",
                             "PreemptionByScheduler", "message", msg, "lastTransitionTime", ts);
    long st = send_json(s, "PATCH", path, cond, "application/strategic-merge-patch+json", NULL);
    if (st == 404) { /* gone already: nothing to delete */
        if (by)
            by->victims--;
        return;
    }
    /* kube-scheduler v1.28's words (framework/preemption/preemption.go
     * prepareCandidate: "Preempted by pod %v on node %v", the
     * preemptor's UID and the candidate node) */
    const char *on = node_name(s, v->stop_node);
    snprintf(note, sizeof note, "Preempted by pod %s on node %s",
             by && by->info.uid && by->info.uid[0] ? by->info.uid
             : by                                  ? by->key
                                                   : "?",
             on ? on : "?");
    gp_ks_event(s, "Pod", v->info.ns, v->info.name, v->info.uid, "Normal", "Preempted",
                "Preempting", note);
    pod_path(v, "", path, sizeof path);
    json_t *opts = json_pack("{s:s,s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
    if (v->info.uid && v->info.uid[0]) /* (an empty uid would match no pod) */
        json_object_set_new(opts, "preconditions", json_pack("{s:s}", "uid", v->info.uid));
    st = send_json(s, "DELETE", path, opts, "application/json", NULL);
    s->st.evictions++;
    /* 404: gone already; 409: the name is another pod's now (the victim
     * is gone): the preemptor waits for neither */
    if ((st == 404 || st == 409) && by)
        by->victims--;
    else if (st == 200 || st == 202)
        victim_hold(s, v); /* all it holds, until it is gone (the review's R4) */
    /* Any other failure: the victim still runs (victim_stays). Without a
     * preemptor or a node (neither happens: a victim only nominated is
     * unnominated above): the next cycle rebuilds from the API instead */
    else if (by && v->info.node_name)
        victim_stays(s, v, by, ndec);
    else
        s->dirty = true;
}

/* After a restart or a leader change (any rebuild): each pending pod of
 * ours whose status.nominatedNodeName names a node keeps its claim there,
 * as kube-scheduler's nominator keeps a nominated pod's room on its node
 * (the queue reads status.nominatedNodeName back; addNominatedPods in
 * framework/runtime/framework.go adds the pod to that node when
 * filtering every pod of no higher priority): where lower-priority pods
 * are still being deleted, they are taken out of the engine as victims
 * still stopping (held: victim_hold, on_stopping) and the pod placed on
 * the room they leave, waiting for them (SP_PREEMPTING); where they are
 * gone and the pod passes every filter there, it is placed there and
 * bound before the next cycle places anything else - so that no pod of
 * equal priority, older in the queue, takes that room (the review's R15).
 * A claim that no longer fits is dropped (the pod decided anew). Called
 * by the rebuild, after what the API shows on nodes and the
 * half-finished binds. */
void gp_ks_nominated_claim(struct gp_kube_sched *s)
{
    for (size_t i = 0; i < s->npods; i++) {
        struct spod *p = s->pods[i];
        const char *nom = json_string_value(
            json_object_get(json_object_get(p->obj, "status"), "nominatedNodeName"));
        if (!nom || !nom[0] || !p->ours || !p->readable || p->info.node_name || p->eng != SP_NONE ||
            p->st == SP_DONE || p->info.terminating || p->info.ended)
            continue;
        struct snode *n = gp_ks_node_get(s, nom, false);
        if (!n || n->eng == SP_NONE)
            continue;
        unsigned k = 0;
        for (size_t j = 0; j < s->npods; j++) {
            struct spod *v = s->pods[j];
            if (v->st != SP_BOUND || !v->info.terminating || v->eng == SP_NONE ||
                !v->info.node_name || strcmp(v->info.node_name, nom) != 0 ||
                v->spec.priority >= p->spec.priority)
                continue;
            v->stop_node = v->node;
            v->stop_pick = v->pick;
            gp_ks_engine_drop(s, v);
            v->st = SP_EVICTED;
            v->preemptor = p;
            s->nstopping++;
            k++;
            victim_hold(s, v); /* its cpu and memory until it is gone */
        }
        uint32_t part;
        bool placed = gp_ks_engine_add(s, p) == GP_OK;
        if (placed && k == 0) { /* its victims gone: its room there if it fits now */
            const struct gp_node *nd = gp_engine_node(s->e, gp_ks_part(n, &p->spec));
            placed =
                nd && gp_engine_filter(s->e, nd, gp_engine_pod(s->e, p->eng)) == GP_FILTER_COUNT;
            if (!placed)
                gp_ks_engine_drop(s, p); /* decided with the others (step 3) */
        }
        if (placed && gp_ks_place(s, p, n, NULL, false, &part) != GP_OK) {
            gp_ks_engine_drop(s, p);
            placed = false;
        }
        if (placed && k == 0) {
            /* bound there by the next cycle before anything else is placed
             * (gp_ks_resume: a preemptor whose victims are gone) */
            p->st = SP_PREEMPTING;
            p->node = part;
            p->pick = gp_engine_pod(s->e, p->eng)->pick;
            p->victims = 0;
            p->nominated_at = 0;
            s->maybe_resume = true;
            continue;
        }
        if (placed) {
            p->st = SP_PREEMPTING;
            p->node = part;
            p->pick = gp_engine_pod(s->e, p->eng)->pick;
            p->victims = k;
            p->nominated_at = s->now_s > 0 ? s->now_s : 1e-9; /* its words said already */
            p->wait_said = false;
            s->maybe_resume = true;
            continue;
        }
        /* no room there now: its claim dropped, the pod decided anew; the
         * pods stopping stay out of the engine, their GPUs held until gone
         * (on_stopping), as any victim's */
        for (size_t j = 0; j < s->npods && k > 0; j++)
            if (s->pods[j]->preemptor == p)
                s->pods[j]->preemptor = NULL;
        nominate(s, p, NULL); /* (the claim it names no longer holds) */
    }
}

enum gp_err gp_ks_write_decisions(struct gp_kube_sched *s, size_t n, double attempt_s,
                                  size_t *bound)
{
    struct gp_ks_words words = {0}; /* the unschedulable pods' words (sched_explain.c) */
    /* the evictions first, so that every placement of the cycle knows
     * which GPUs victims still hold (on_stopping) */
    struct spod *by = NULL; /* the preemptor of the victims before (its id
                             * released if victim_stays took it back) */
    uint32_t by_id = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        const struct gp_decision *d = &s->dec[i];
        struct spod *p = gp_ks_by_eng(s, d->pod);
        if (!p || d->kind != GP_DECISION_EVICT)
            continue;
        if (d->by != by_id) { /* a preemptor's victims come together */
            by_id = d->by;
            by = gp_ks_by_eng(s, d->by);
        }
        evict(s, p, by, n);
    }
    for (size_t i = 0; i < n; i++) {
        const struct gp_decision *d = &s->dec[i];
        struct spod *p = gp_ks_by_eng(s, d->pod);
        if (!p)
            continue;
        if (s->km && d->kind == GP_DECISION_BIND)
            gp_metrics_observe(s->km->scheduling_s, attempt_s);
        switch (d->kind) {
        case GP_DECISION_EVICT:
            break; /* done above */
        case GP_DECISION_BIND:
            p->node = d->node;
            p->pick = d->pick;
            /* a preemptor waits for its victims, and any pod placed on
             * a GPU a victim still holds waits for that victim */
            p->st = p->victims > 0 || on_stopping(s, p) ? SP_PREEMPTING : SP_ASSUMED;
            s->maybe_resume |= p->st == SP_PREEMPTING;
            gp_ks_audit_pod(s, p, false);
            p->nominated_at = 0;
            if (p->st == SP_PREEMPTING) { /* tried again after its back-off (waiting_moves) */
                p->attempts++;
                p->retry_at = s->now_s + gp_ks_backoff_s(s, p->attempts);
            }
            if (p->victims > 0) { /* the attempt that preempted */
                p->nominated_at = s->now_s > 0 ? s->now_s : 1e-9;
                p->wait_said = false;
                preemptor_waits(s, p, false);
            }
            break;
        case GP_DECISION_UNSCHEDULABLE:
            unschedulable(s, p, d, attempt_s, &words);
            break;
        }
    }
    gp_ks_words_free(&words);
    /* then the writes, a gang's members together: all annotated first, and
     * bound only when every member's annotation is written (bind.c) */
    for (size_t i = 0; i < n; i++) {
        const struct gp_decision *d = &s->dec[i];
        struct spod *p = gp_ks_by_eng(s, d->pod);
        /* (a gang's member kept by its job, run here without binders,
         * waits out its back-off; one held for its gang's claims, dispatched
         * with it before, is looked at again: gp_ks_resume) */
        if (d->kind != GP_DECISION_BIND || !p || p->st != SP_ASSUMED || p->job ||
            p->rebind_at > 0 || p->prov_at > 0)
            continue;
        if (!p->spec.group) {
            gp_ks_bind_dispatch(s, &p, 1, bound);
            continue;
        }
        /* every member decided now in one job, whatever their number (a
         * second job would bind its members whatever the first's fate: the
         * review's R5) */
        size_t k = 0;
        bool oom = false; /* then all of them taken back, none bound */
        for (size_t j = i; j < n; j++) {
            const struct gp_decision *e = &s->dec[j];
            struct spod *q = gp_ks_by_eng(s, e->pod);
            if (e->kind != GP_DECISION_BIND || !q || q->spec.group != p->spec.group ||
                q->st != SP_ASSUMED || q->job || q->rebind_at > 0 || q->prov_at > 0)
                continue;
            if (k == s->capgang && !oom) {
                size_t cap = s->capgang ? s->capgang * 2 : 64;
                struct spod **v = realloc(s->gang, cap * sizeof *v);
                oom = !v;
                if (v) {
                    s->gang = v;
                    s->capgang = cap;
                }
            }
            if (oom)
                gp_ks_release(s, q);
            else
                s->gang[k++] = q;
        }
        for (size_t j = 0; oom && j < k; j++)
            gp_ks_release(s, s->gang[j]);
        if (!oom)
            gp_ks_bind_dispatch(s, s->gang, k, bound);
    }
    return GP_OK;
}
